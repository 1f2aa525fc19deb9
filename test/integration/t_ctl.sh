#!/usr/bin/env bash
# Charging through memcgfs.ctl as clients in cgroups: the text protocol and
# the ioctl, memory.current and memory.stat after drain, reparenting after
# rmdir, memory.max -> ENOMEM, bad input.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=128M
mkdir -p "$MNT/a/b"
echo +memory > "$MNT/a/cgroup.subtree_control"
CTL=$MNT/memcgfs.ctl

# ctl_in CGROUP REQUEST...: a shell that moved itself there runs mcgtool ctl
ctl_in() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' _ "$MNT/$cg" "$MCGTOOL" ctl "$CTL" "$@"
}
stat_of() { sed -n "s/^$2 //p" "$MNT/$1/memory.stat"; }

match "whoami from the root" "^OK ok pid=$$ cgroup=/ cpu=[0-9]+$" "$(bash -c 'exec "$1" ctl "$2" whoami' _ "$MCGTOOL" "$CTL" | sed "s/pid=[0-9]*/pid=$$/")"
match "whoami from a cgroup: the caller's process and cgroup" "^OK ok pid=[0-9]+ cgroup=/a/b cpu=[0-9]+$" "$(ctl_in a/b whoami)"
# a cgroup path past PATH_MAX (20 levels of 250-byte names, made and
# entered a level at a time): whoami fails with ENAMETOOLONG, as
# /proc/PID/cgroup does, and never answers "/"
LONG=$(printf 'n%.0s' $(seq 250))
eq "whoami from a cgroup whose path is longer than PATH_MAX: ENAMETOOLONG" "ENAMETOOLONG" \
	"$(cd "$MNT" && mkdir deep && cd deep && for i in $(seq 20); do mkdir "$LONG" && cd "$LONG" || exit 1; done &&
	   bash -c 'echo $$ > cgroup.procs || exit 99; exec "$1" ctl "$2" whoami' _ "$MCGTOOL" "$CTL" | cut -d' ' -f1)"
(cd "$MNT/deep" && for i in $(seq 20); do cd "$LONG" || exit 1; done &&
 for i in $(seq 20); do cd .. && rmdir "$LONG" || exit 1; done) && rmdir "$MNT/deep"
match "whoami: the pid is the thread group of the writer" "^yes$" \
	"$(bash -c 'echo $$ > "$1/a/b/cgroup.procs"; r=$("$2" ctl "$3" whoami); case "$r" in *"pid=$$ "*) ;; *) p=$(echo "$r" | sed "s/.*pid=\([0-9]*\).*/\1/"); [ "$(cut -d" " -f4 /proc/$p/stat 2>/dev/null)" = $$ ] || echo no;; esac; echo yes' _ "$MNT" "$MCGTOOL" "$CTL" | tail -n1)"

# charge, drain, read, free, drain: back to where it started
"$MCGTOOL" ctl "$CTL" drain >/dev/null
BASE_CUR=$(cat "$MNT/a/memory.current")
BASE_SLAB=$(stat_of a slab)
OUT=$(ctl_in a/b "kmalloc 1000 GFP_KERNEL_ACCOUNT x10" drain)
match "kmalloc x10: ok and ten handles" "^OK ok( [0-9a-f]+){10}$" "$(echo "$OUT" | head -n1)"
eq "drain: ok" "OK ok" "$(echo "$OUT" | sed -n 2p)"
HANDLES=$(echo "$OUT" | head -n1 | cut -d' ' -f3-)
match "memory.current of the cgroup: whole pages" "^[1-9][0-9]*$" "$(cat "$MNT/a/b/memory.current")"
eq "memory.current is a multiple of 4096" "0" "$(( $(cat "$MNT/a/b/memory.current") % 4096 ))"
eq "memory.stat slab_unreclaimable: 10 x (1024 + 8) and 10 handle entries" "$((10320 + 10 * ENTRY))" "$(stat_of a/b slab_unreclaimable)"
eq "memory.stat slab" "$((10320 + 10 * ENTRY))" "$(stat_of a/b slab)"
eq "hierarchical: the parent counts it" "$((10320 + 10 * ENTRY))" "$(( $(stat_of a slab) - BASE_SLAB ))"
match "slabinfo: the kmalloc-cg-1k cache" "^kmalloc-cg-1k +[1-9]" "$(cat "$MNT/slabinfo")"
OUT=$(bash -c 'exec "$1" ctl "$2" "kfree $3" drain' _ "$MCGTOOL" "$CTL" "$HANDLES")
eq "kfree from another process (the root): ok" "$(printf 'OK ok\nOK ok')" "$OUT"
eq "after free and drain: memory.current back" "0" "$(cat "$MNT/a/b/memory.current")"
eq "after free and drain: slab back" "0" "$(stat_of a/b slab)"
eq "the parent back too" "$BASE_CUR" "$(cat "$MNT/a/memory.current")"
eq "a stale handle: EINVAL, nothing changes" "EINVAL" "$(bash -c 'exec "$1" ctl "$2" "kfree $3"' _ "$MCGTOOL" "$CTL" "$HANDLES" | cut -d' ' -f1)"

# the ioctl
match "ioctl: kmalloc x4 batch" "^alloc done=2 failed=0 error=0$" "$(ctl_in a/b whoami >/dev/null; bash -c 'echo $$ > "$1/a/b/cgroup.procs"; exec "$2" ioctl "$3"' _ "$MNT" "$MCGTOOL" "$CTL" | head -n1)"
OUT=$(bash -c 'echo $$ > "$1/a/b/cgroup.procs"; exec "$2" ioctl "$3" "sed -n s/^slab_unreclaimable\ //p $1/a/b/memory.stat"' _ "$MNT" "$MCGTOOL" "$CTL")
eq "ioctl: 4 x (64 + 8) and their entries charged while held" "$((288 + 4 * ENTRY))" "$(echo "$OUT" | sed -n 2p)"
eq "ioctl: free batch" "free done=2 failed=0 error=0" "$(echo "$OUT" | sed -n 3p)"
eq "ioctl: stale handles: EINVAL" "stale error=EINVAL" "$(echo "$OUT" | sed -n 4p)"
eq "ioctl: a malformed batch fails whole: EINVAL" "badversion EINVAL" "$(echo "$OUT" | sed -n 5p)"
eq "ioctl: not memcgfs's command: ENOTTY" "badcmd ENOTTY" "$(echo "$OUT" | sed -n 6p)"
eq "ioctl on another file: ENOTTY" "ENOTTY" "$(python3 -c 'import fcntl,sys,errno
try:
    fcntl.ioctl(open(sys.argv[1]), 0xc0104d01, bytes(16)); print("OK")
except OSError as e: print(errno.errorcode[e.errno])' "$MNT/a/memory.max" 2>/dev/null || echo ENOTTY)"

# reparenting: objects charged in a/b outlive it, charged to a
OUT=$(ctl_in a/b "kmalloc 2000 GFP_KERNEL_ACCOUNT x8" drain)
HANDLES=$(echo "$OUT" | head -n1 | cut -d' ' -f3-)
SLAB_A=$(stat_of a slab)
eq "rmdir of a/b with objects still charged" "OK" "$(mcg errno rmdir "$MNT/a/b")"
# (b itself goes an RCU grace period after its last reference, and with it
# its own structures that mkdir charged to a: the objects stay)
ok "reparented: a holds the objects, 8 x (2048 + 8)" test "$(stat_of a slab)" -ge 16448 -a "$(stat_of a slab)" -le "$SLAB_A"
OUT=$(bash -c 'exec "$1" ctl "$2" "kfree $3" drain' _ "$MCGTOOL" "$CTL" "$HANDLES")
eq "freeing them after rmdir" "$(printf 'OK ok\nOK ok')" "$OUT"
# (the dying b's own structures, charged to a at mkdir, go when it is freed)
ok "uncharged from the parent: 8 x (2048 + 8) less" test "$(stat_of a slab)" -le $((SLAB_A - 16448))
ok "memory.current of the parent back" test "$(cat "$MNT/a/memory.current")" -le "$BASE_CUR"
for i in $(seq 1 40); do
	[ "$(sed -n 's/^nr_dying_descendants //p' "$MNT/a/cgroup.stat")" = 0 ] && break
	sleep 0.05
done
eq "the dying cgroup is freed" "nr_dying_descendants 0" "$(grep nr_dying_descendants "$MNT/a/cgroup.stat")"
mkdir "$MNT/a/b"

# memory.max: the client sees ENOMEM
echo 64K > "$MNT/a/b/memory.max"
OUT=$(ctl_in a/b "kmalloc 4096 GFP_KERNEL_ACCOUNT x64")
match "over memory.max: the write fails with ENOMEM, the reply says why" "^ENOMEM error ENOMEM" "$OUT"
match "memory.events: max" "^max [1-9]" "$(cat "$MNT/a/b/memory.events")"
match "memory.events.local: max" "^max [1-9]" "$(cat "$MNT/a/b/memory.events.local")"
match "memory.events of the parent: max (hierarchical)" "^max [1-9]" "$(cat "$MNT/a/memory.events")"
eq "all or nothing: nothing stays charged" "0" "$(ctl_in a/b drain >/dev/null; stat_of a/b slab)"
echo max > "$MNT/a/b/memory.max"

# anon pages are the task's: freed when it exits
OUT=$(ctl_in a/b "alloc_pages anon x4" drain)
match "alloc_pages anon x4" "^OK ok( [0-9a-f]+){4}$" "$(echo "$OUT" | head -n1)"
for i in $(seq 1 40); do
	[ "$(stat_of a/b anon)" = 0 ] && break
	sleep 0.05
done
eq "the task exited: its anon pages are freed" "0" "$(stat_of a/b anon)"
eq "... their handles stale" "EINVAL" "$(bash -c 'exec "$1" ctl "$2" "free_pages $3"' _ "$MCGTOOL" "$CTL" "$(echo "$OUT" | head -n1 | cut -d' ' -f3)" | cut -d' ' -f1)"
OUT=$(ctl_in a/b "alloc_pages file x4")
match "file pages outlive the task" "^[1-9]" "$(stat_of a/b file)"

# bad input of every kind: its errno, and nothing changes
CUR=$(cat "$MNT/a/b/memory.current")
OUT=$(ctl_in a/b "bogus" "kmalloc 0" "kmalloc 10 GFP_BOGUS" "kfree zz" "kfree 123456789abc" "kmalloc 10 x0" "kmalloc 10 x1025" "alloc_pages lots" "kmem_cache_destroy nosuch" "$(head -c 5000 /dev/zero | tr '\0' a)")
eq "bad requests: each its errno" "EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL ENOENT EINVAL" "$(echo "$OUT" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
match "the reply names the error" "^EINVAL error EINVAL " "$(echo "$OUT" | head -n1)"
eq "nothing changed" "$CUR" "$(cat "$MNT/a/b/memory.current")"
eq "a read with no reply pending: 0 bytes" "0" "$(bash -c 'exec 3<>"$1"; cat <&3 | wc -c' _ "$CTL")"

# a shell's read: memcgfs.ctl is seekable, so bash reads a buffer at a time
# (and gives back what it did not use) instead of one byte per read(2);
# its read(2) calls counted in /proc/PID/io (before the fix: 17411)
OUT=$(bash -c 'exec 3<>"$1"
	syscr() { local k v; while read -r k v; do [ "$k" = syscr: ] && echo "$v"; done </proc/$$/io; }
	echo "kmalloc 16 x1024" >&3
	a=$(syscr); read -r r <&3; b=$(syscr); c=$(syscr)
	h=(${r#ok })
	echo "${#h[@]} handles, ${#r} bytes, $(( (b - a) - (c - b) )) reads"
	for ((j = 0; j < 1024; j += 200)); do
		echo "kfree ${h[*]:j:200}" >&3 && read -r x <&3 && echo "$x"
	done
	echo whoami >&3; read -r x <&3; echo "$x"' _ "$CTL")
match "bash's read of an x1024 reply: 1024 handles" "^1024 handles, 17410 bytes, " "$(echo "$OUT" | head -n1)"
R=$(echo "$OUT" | head -n1 | sed 's/.* \([0-9-]*\) reads$/\1/')
ok "... in a few read(2) calls, not one per byte ($R)" test "$R" -ge 1 -a "$R" -le 16
eq "... then each request on the same fd its own reply" "ok ok ok ok ok ok" "$(echo "$OUT" | sed -n 2,7p | tr '\n' ' ' | sed 's/ $//')"
match "... whoami after them" "^ok pid=[0-9]+ cgroup=/ cpu=[0-9]+$" "$(echo "$OUT" | sed -n 8p)"
OUT=$(mcg ctlseek "$CTL")
eq "file positions: the reply after the request" "write 7 at 7" "$(echo "$OUT" | sed -n 1p)"
eq "... read ahead, given back with lseek, read again" "given back and read again: same" "$(echo "$OUT" | sed -n 2p)"
eq "... one line" "ends in a newline: yes" "$(echo "$OUT" | sed -n 3p)"
eq "... nothing before or after it" "pread before it: 0, after it: 0, read on: 0" "$(echo "$OUT" | sed -n 4p)"
eq "... a failed request leaves the position" "failed write: EINVAL, position unchanged" "$(echo "$OUT" | sed -n 5p)"
eq "... its reply right there" "its reply: error EINVAL" "$(echo "$OUT" | sed -n 6p)"
eq "... pwrite: the reply after its bytes" "pwrite 7, reply at 7: ok pid=, same as before: yes" "$(echo "$OUT" | sed -n 7p)"

# kmem caches
OUT=$(ctl_in a/b "kmem_cache_create seed2312 2312 SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT" "kmem_cache_alloc seed2312" "kmem_cache_create seed2312 2312")
match "kmem_cache_create: the geometry" "^OK ok seed2312 objsize=2312 size=2368 " "$(echo "$OUT" | head -n1)"
match "kmem_cache_alloc" "^OK ok [0-9a-f]+$" "$(echo "$OUT" | sed -n 2p)"
match "a second create: EEXIST" "^EEXIST" "$(echo "$OUT" | sed -n 3p)"
match "slabinfo lists the cache" "^seed2312 " "$(cat "$MNT/slabinfo")"
eq "destroy while objects live: EBUSY" "EBUSY" "$(ctl_in a/b "kmem_cache_destroy seed2312" | cut -d' ' -f1)"

# memory.high: the client is throttled (its reply delayed, no worker waits),
# a signal ends the wait at once, and the mount serves others meanwhile
mkdir "$MNT/h"
echo 1M > "$MNT/h/memory.high"
T0=$(date +%s%N)
OUT=$(ctl_in h "kmalloc 4096 GFP_KERNEL_ACCOUNT x512")
DUR=$(( ($(date +%s%N) - T0) / 1000000 ))
match "over memory.high: the request succeeds" "^OK ok [0-9a-f]+" "$OUT"
ok "... after a penalty delay (${DUR} ms, at most 2 s)" test "$DUR" -ge 500 -a "$DUR" -lt 4000
match "memory.events: high" "^high [1-9]" "$(sed -n 2p "$MNT/h/memory.events")"
# (drained first: a charge the stocks cover is not checked against high)
eq "memory.pressure trigger: poll wakes when the stall crosses it" "PRI" \
	"$(mcg psipoll "$MNT/h/memory.pressure" "some 100000 10000000" 3000 \
		"bash -c 'echo \$\$ > $MNT/h/cgroup.procs; exec $MCGTOOL ctl $CTL drain \"kmalloc 4096 GFP_KERNEL_ACCOUNT x64\"' >/dev/null")"
eq "memory.pressure trigger, a 100 ms window (no 500 ms minimum since Linux 6.4): wakes too" "PRI" \
	"$(mcg psipoll "$MNT/h/memory.pressure" "some 10000 100000" 3000 \
		"bash -c 'echo \$\$ > $MNT/h/cgroup.procs; exec $MCGTOOL ctl $CTL drain \"kmalloc 4096 GFP_KERNEL_ACCOUNT x64\"' >/dev/null")"
eq "memory.pressure trigger: nothing stalls, nothing wakes" "TIMEOUT" \
	"$(mcg psipoll "$MNT/h/memory.pressure" "some 100000 1000000" 500)"
match "memory.pressure: the stall counted" "^some avg10=[0-9.]+ avg60=[0-9.]+ avg300=[0-9.]+ total=[1-9]" "$(head -n1 "$MNT/h/memory.pressure")"
bash -c 'echo $$ > "$1/h/cgroup.procs"; exec "$2" ctl "$3" "kmalloc 4096 GFP_KERNEL_ACCOUNT x256"' _ "$MNT" "$MCGTOOL" "$CTL" >/dev/null &
kill_after KILL $!
ok "SIGKILL ends a throttled request at once (${DUR} ms)" test "$DUR" -lt 500
PIDS=
for i in $(seq 1 12); do
	bash -c 'echo $$ > "$1/h/cgroup.procs"; exec "$2" ctl "$3" "kmalloc 4096 GFP_KERNEL_ACCOUNT x64"' _ "$MNT" "$MCGTOOL" "$CTL" >/dev/null &
	PIDS="$PIDS $!"
done
sleep 0.3
T0=$(date +%s%N)
cat "$MNT/h/memory.stat" >/dev/null
DUR=$(( ($(date +%s%N) - T0) / 1000000 ))
ok "12 throttled clients, 10 workers: another client is served at once (${DUR} ms)" test "$DUR" -lt 500
# (background jobs ignore SIGINT)
T0=$(date +%s%N)
kill -TERM $PIDS 2>/dev/null
for p in $PIDS; do wait "$p" 2>/dev/null; done
DUR=$(( ($(date +%s%N) - T0) / 1000000 ))
ok "SIGTERM ends all of them at once (${DUR} ms)" test "$DUR" -lt 1000

# through the ioctl (no inode lock): 12 clients throttled at once, each
# waits its own delay, none waits for another
PIDS=
for i in $(seq 1 12); do
	bash -c 'echo $$ > "$1/h/cgroup.procs"; exec "$2" ioctlkmalloc "$3" 4096 64' _ "$MNT" "$MCGTOOL" "$CTL" >"$TMP/io.$i" &
	PIDS="$PIDS $!"
done
T0=$(date +%s%N)
for p in $PIDS; do wait "$p" 2>/dev/null; done
DUR=$(( ($(date +%s%N) - T0) / 1000000 ))
match "ioctl over memory.high: succeeds after a delay" "^OK [0-9]+$" "$(cat "$TMP/io.1")"
ok "12 throttled ioctl clients wait in parallel (${DUR} ms for all)" test "$DUR" -lt 4000
