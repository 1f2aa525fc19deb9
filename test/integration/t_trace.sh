#!/usr/bin/env bash
# trace_pipe and tracing_on: events in ftrace's format, blocking reads set
# aside (never on a worker), woken by events, ended by signals, EAGAIN with
# O_NONBLOCK; more blocked readers than worker threads.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=64M -o threads=4
mkdir "$MNT/a"
CTL=$MNT/memcgfs.ctl
charge() {
	bash -c 'echo $$ > "$1/a/cgroup.procs"; exec "$2" ctl "$3" "$4"' _ "$MNT" "$MCGTOOL" "$CTL" "$1" >/dev/null
}

eq "nothing pending, O_NONBLOCK: EAGAIN" "EAGAIN" "$(mcg readnb "$MNT/trace_pipe" 4096)"
eq "a blocking read ends with a signal: EINTR" "EINTR" "$(mcg readwait "$MNT/trace_pipe" 4096 300)"
echo 1 > "$MNT/tracing_on"
charge "kmalloc 64 GFP_KERNEL_ACCOUNT site=mytest"
OUT=$(mcg readnb "$MNT/trace_pipe" 65536)
match "a pending event: read at once" "^[1-9][0-9]* bytes$" "$OUT"
# the events themselves
charge "kmalloc 100 GFP_KERNEL_ACCOUNT site=traced"
TRACE=$(timeout 1 cat "$MNT/trace_pipe" 2>/dev/null; true)
match "kmalloc event in ftrace's format" \
	"mcgtool-[0-9]+ +\[[0-9]+\] \.{5} +[0-9]+\.[0-9]{6}: kmalloc: call_site=traced ptr=[0-9a-fx]+ bytes_req=100 bytes_alloc=128 gfp_flags=GFP_KERNEL_ACCOUNT node=-?[0-9]+ accounted=true" \
	"$TRACE"

# without site=, the function inside memcgfs that allocated, as %pS prints
# it: a static function of the daemon's too (its full symbol table)
charge "kmalloc 100 GFP_KERNEL_ACCOUNT"
TRACE=$(timeout 1 cat "$MNT/trace_pipe" 2>/dev/null; true)
match "call_site without site=: NAME+0xOFF/0xSIZE" \
	"kmalloc: call_site=[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x[0-9a-f]+ ptr=[0-9a-f]+ bytes_req=100 " "$TRACE"

# A new slab's obj_exts vector is memcgfs's own allocation inside the
# request: traced under its own call site, not the client's site=
# (kmalloc-cg-4k is not used before here, so this request makes its slab).
charge "kmalloc 3000 GFP_KERNEL_ACCOUNT site=fresh"
TRACE=$(timeout 1 cat "$MNT/trace_pipe" 2>/dev/null; true)
eq "site=: only the request's own allocation carries it" "bytes_req=3000" \
	"$(printf '%s\n' "$TRACE" | grep -o 'call_site=fresh .*' | grep -o 'bytes_req=[0-9]*')"
match "... the slab's obj_exts vector carries its allocator's name" \
	"kmalloc: call_site=alloc_slab_obj_exts\+0x[0-9a-f]+/0x[0-9a-f]+ .* bytes_req=64 .*gfp_flags=GFP_KERNEL\|__GFP_ZERO .*accounted=false" \
	"$TRACE"

# a blocked reader is woken by an event
mcg readwait "$MNT/trace_pipe" 4096 3000 >"$TMP/rw.out" &
RW=$!
sleep 0.3
charge "kmalloc 32 GFP_KERNEL"
wait "$RW"
match "a blocked read wakes on the next event" "^[1-9][0-9]* bytes$" "$(cat "$TMP/rw.out")"
eq "poll(POLLIN) on trace_pipe wakes on an event" "IN" \
	"$( (sleep 0.3; charge "kmalloc 32 GFP_KERNEL") & mcg pollin "$MNT/trace_pipe" 3000; wait)"

# more blocked readers than workers (threads=4): the mount still answers
timeout 1 cat "$MNT/trace_pipe" >/dev/null 2>&1
PIDS=
for i in $(seq 1 12); do
	cat "$MNT/trace_pipe" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
done
sleep 0.5
eq "12 blocked readers, 4 workers: ls still works" "ok" "$(timeout 5 ls "$MNT/a" >/dev/null && echo ok)"
eq "... and writes" "ok" "$(timeout 5 bash -c "echo 1M > $MNT/a/memory.max" && echo ok)"
kill -KILL $PIDS 2>/dev/null
# a read the daemon never answers keeps its killed reader in the kernel
GONE=ok
for p in $PIDS; do wait_gone "$p" 5 || GONE="pid $p still blocked 5 s after SIGKILL"; done
eq "SIGKILL ends every blocked read" ok "$GONE"
for p in $PIDS; do wait "$p" 2>/dev/null; done

echo 0 > "$MNT/tracing_on"
timeout 1 cat "$MNT/trace_pipe" >/dev/null 2>&1
charge "kmalloc 64 GFP_KERNEL"
eq "tracing_on 0: no events" "EAGAIN" "$(mcg readnb "$MNT/trace_pipe" 4096)"
