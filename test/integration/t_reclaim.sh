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
# (drained: the handles' entries were charged through the stock, which
# keeps the rest of the batch)
"$MCGTOOL" ctl "$CTL" drain >/dev/null
eq "... and they are gone, their handles' entries uncharged" 0 "$(cat "$MNT/p/memory.current")"

# mark_page_accessed, text and ioctl: a file page's second reference
# (its allocation was the first) activates it
stat_of() { sed -n "s/^$2 //p" "$MNT/$1/memory.stat"; }
OUT=$(ctl_in p "alloc_pages file x4")
H=($(echo "$OUT" | cut -d' ' -f3-))
eq "4 file pages: none active" 0 "$(stat_of p active_file)"
eq "mark_page_accessed (text): ok" "OK ok" "$("$MCGTOOL" ctl "$CTL" "mark_page_accessed ${H[0]}")"
eq "... the page is active" 4096 "$(stat_of p active_file)"
eq "... pgactivate 1" 1 "$(stat_of p pgactivate)"
eq "mark_page_accessed (ioctl): ok" "${H[1]} OK" "$("$MCGTOOL" ioctlfree "$CTL" mark "${H[1]}")"
eq "... two active" 8192 "$(stat_of p active_file)"
eq "... pgactivate 2" 2 "$(stat_of p pgactivate)"
eq "a malformed handle: EINVAL, nothing marked" "EINVAL" \
	"$("$MCGTOOL" ctl "$CTL" "mark_page_accessed ${H[2]} zz" | cut -d' ' -f1)"
eq "a kmalloc handle: EINVAL" "EINVAL" \
	"$("$MCGTOOL" ctl "$CTL" "mark_page_accessed $("$MCGTOOL" ctl "$CTL" "kmalloc 64" | cut -d' ' -f3)" | cut -d' ' -f1)"
eq "... still two active" 8192 "$(stat_of p active_file)"
# reclaim (32 pages at least, as the kernel's) takes the inactive ones,
# then, the inactive list empty and so low, the active ones: deactivated
echo 8K > "$MNT/p/memory.reclaim"
eq "reclaimed: pgdeactivate 2 (the active pages went through the inactive list)" 2 \
	"$(stat_of p pgdeactivate)"
eq "... pgrefill 2" 2 "$(stat_of p pgrefill)"
eq "... pgsteal_proactive 4 more" 68 "$(stat_of p pgsteal_proactive)"
"$MCGTOOL" ctl "$CTL" drain >/dev/null
eq "... nothing left" 0 "$(cat "$MNT/p/memory.current")"

# the last swappiness= wins, as mm/vmscan.c's parse: swappiness=max (anon
# only, and there is none) finds nothing, a later swappiness=60 undoes it
ctl_in p "alloc_pages file x4" >/dev/null
eq "file pages only: '16K swappiness=60 swappiness=max': EAGAIN" EAGAIN \
	"$("$MCGTOOL" errno write "$MNT/p/memory.reclaim" "16K swappiness=60 swappiness=max")"
eq "'16K swappiness=max swappiness=60': reclaimed" OK \
	"$("$MCGTOOL" errno write "$MNT/p/memory.reclaim" "16K swappiness=max swappiness=60")"
eq "... the file pages are gone" 0 "$(stat_of p file)"
"$MCGTOOL" ctl "$CTL" drain >/dev/null

# a reclaim that finds nothing over 5000 memcgs runs its 16 fruitless
# passes (hundreds of ms): long enough to watch it
mkdir "$MNT"/r/s/c{1..5000}
"$MCGTOOL" writewait "$MNT/r/memory.reclaim" 1G 60000 >"$TMP/long" &
LONG=$!
# in_write: the writer waits in its write(2) for the daemon's answer (the
# kernel's FUSE wait): the reclaim has been handed to the daemon, not ended
in_write() { grep -q 'request_wait_answer' "/proc/$LONG/wchan" 2>/dev/null; }
for _ in $(seq 200); do in_write && break; sleep 0.005; done
ok "the reclaim is under way (its writer waits in the FUSE request)" in_write
OUT=$(cat "$MNT/r/memory.current")
ok "one worker, a reclaim running: another file is read meanwhile" in_write
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
