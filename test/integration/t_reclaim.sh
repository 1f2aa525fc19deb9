#!/usr/bin/env bash
# memory.reclaim as the kernel's: set aside from the FUSE workers (the
# mount answers while it runs, even with one worker), ended by a signal to
# the writer with EINTR, its frees traced under the writer.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=512M -o threads=1
CTL=$MNT/memcgfs.ctl
mkdir -p "$MNT/r/s" "$MNT/p"
echo +memory > "$MNT/r/cgroup.subtree_control"
echo +memory > "$MNT/r/s/cgroup.subtree_control"
# ctl_in CGROUP REQUEST...: a shell that moved itself there runs mcgtool ctl
ctl_in() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' _ "$MNT/$cg" "$MCGTOOL" ctl "$CTL" "$@"
}

# frees of reclaimed file pages are traced under the memory.reclaim writer
ctl_in p "alloc_pages file x64" >/dev/null
echo 1 > "$MNT/tracing_on"
timeout 1 cat "$MNT/trace_pipe" >/dev/null 2>&1
OUT=$(mcg writewait "$MNT/p/memory.reclaim" 256K 5000)
match "memory.reclaim 256K: ok" "^OK " "$OUT"
TRACE=$(timeout 1 cat "$MNT/trace_pipe" 2>/dev/null; true)
echo 0 > "$MNT/tracing_on"
match "reclaim's frees: mm_page_free under the writer (mcgtool), not the daemon" \
	"^ *mcgtool-[0-9]+ +\[[0-9]+\] \.{5} +[0-9.]+: mm_page_free: " "$TRACE"
eq "... none under memcgfs" "" "$(echo "$TRACE" | grep -E '^ *memcgfs-' | head -n 1)"
eq "... and they are gone" 0 "$(cat "$MNT/p/memory.current")"

# a reclaim that finds nothing over 5000 memcgs runs its 16 fruitless
# passes (hundreds of ms): long enough to watch it
mkdir "$MNT"/r/s/c{1..5000}
mcg writewait "$MNT/r/memory.reclaim" 1G 60000 >"$TMP/long" &
LONG=$!
sleep 0.05
OUT=$(cat "$MNT/r/memory.current")
ok "one worker, a reclaim running: another file is read meanwhile" kill -0 "$LONG"
match "... with its content" "^[0-9]+$" "$OUT"
wait "$LONG"
match "the reclaim ends as the kernel's: EAGAIN, nothing to take" "^EAGAIN " "$(cat "$TMP/long")"
FULL=$(cut -d' ' -f2 "$TMP/long")
echo "# a fruitless memory.reclaim 1G over 5000 memcgs: $FULL ms"
OUT=$(mcg writewait "$MNT/r/memory.reclaim" 1G 20)
echo "# interrupted after 20 ms: $OUT"
match "a signal ends memory.reclaim with EINTR" "^EINTR " "$OUT"
rmdir "$MNT"/r/s/c*

finish
