#!/usr/bin/env bash
# Real memory (memcg.real_memory): real programs in memcgfs cgroups are
# charged for what they really use, and the limits act on them: reclaim
# drops their page cache, the OOM killer kills them, memory.high stops
# them for its penalty.  The programs are realprog's modes.
. "$(dirname "$0")/lib.sh"

: "${REALPROG:?REALPROG must name the realprog binary}"

INTERVAL_MS=200
mount_fs -o memory=1G -o real_memory=true -o real_interval=$INTERVAL_MS

# The page-cache tests need a disk-backed filesystem (tmpfs is shmem).
disk_dir real
cleanup_data() { rm -rf "$DATA"; }

MIB=1048576

# start CGROUP OUTFILE ARGS...: realprog_start, its pid kept for the end
start() {
	realprog_start "$@"
	ALL_STARTED="${ALL_STARTED:-} $STARTED"
}

stat_of() { sed -n "s/^$2 //p" "$MNT/$1/memory.stat"; }
event_of() { sed -n "s/^$2 //p" "$MNT/$1/memory.events"; }
cur() { cat "$MNT/$1/memory.current"; }
# the rendered file read from offset 1: no refresh of the members, what the
# periodic samples charged (the first character is lost: "non N" for "anon N")
unrefreshed() { dd if="$MNT/$1/$2" bs=65536 skip=1 iflag=skip_bytes 2>/dev/null; }

# ---- anon: 50 MiB touched ----
mkdir "$MNT/anon"
start anon "$TMP/anon.out" anon 50
ok "a 50 MiB program starts in a cgroup" wait_line "$TMP/anon.out" '^ready$' 10
P=$(cat "$MNT/anon/cgroup.procs")
sleep $((INTERVAL_MS * 2))e-3
A=$(unrefreshed anon memory.stat | sed -n 's/^non //p')
ok "the periodic sample charged its anon within one interval ($A)" within "${A:-0}" $((50 * MIB)) 5
A=$(stat_of anon anon)
ok "memory.stat anon: 50 MiB within 5 % ($A)" within "$A" $((50 * MIB)) 5
C=$(cur anon)
ok "memory.current: 50 MiB within 5 % ($C)" within "$C" $((50 * MIB)) 5
ok "kernel_stack: one thread's stack" test "$(stat_of anon kernel_stack)" -ge 16384
ok "pagetables charged" test "$(stat_of anon pagetables)" -gt 0
# a read right after the process grows shows it: no waiting for the sampler
mkdir "$MNT/fresh"
start fresh "$TMP/fresh.out" anon 30
wait_line "$TMP/fresh.out" '^ready$' 10
A=$(stat_of fresh anon)
ok "read at once after the allocation: 30 MiB within 5 % ($A)" within "$A" $((30 * MIB)) 5
kill "$STARTED"
# threads: a kernel stack each
mkdir "$MNT/thr"
start thr "$TMP/thr.out" threads 7
wait_line "$TMP/thr.out" '^ready$' 10
eq "kernel_stack: 8 threads x 16 KiB" $((8 * 16384)) "$(stat_of thr kernel_stack)"
kill "$STARTED" 2>/dev/null
# an idle member (statm still for five samples) is sampled every second
# interval: its growth is charged by the periodic sample within two.  10
# MiB, 1.5 s still, then 10 MiB more as "step 1" is printed.
mkdir "$MNT/idle"
start idle "$TMP/idle.out" grow 20 10240 1500
wait_line "$TMP/idle.out" '^step 1 ' 10
sleep $((INTERVAL_MS * 2 + 200))e-3
A=$(unrefreshed idle memory.stat | sed -n 's/^non //p')
ok "an idle member's growth is charged by the periodic sample within two intervals ($A)" \
	within "${A:-0}" $((20 * MIB)) 5
kill "$STARTED" 2>/dev/null

# the exit uncharges anon and stacks
kill "$P"
ok "the 50 MiB program exits" wait_gone "$P" 5
sleep 0.1
eq "after its exit: anon 0" 0 "$(stat_of anon anon)"
eq "after its exit: kernel_stack 0" 0 "$(stat_of anon kernel_stack)"
ok "after its exit: memory.current under 1 MiB ($(cur anon))" test "$(cur anon)" -lt $MIB

# migration: what it has stays where it was charged; growth goes to the new cgroup
mkdir "$MNT/mig1" "$MNT/mig2"
start mig1 "$TMP/mig.out" grow 40 1024 100
MP=$STARTED
wait_line "$TMP/mig.out" '^step 20 ' 10
echo "$MP" > "$MNT/mig2/cgroup.procs"
M1=$(stat_of mig1 anon)
wait_line "$TMP/mig.out" '^done$' 10
M2=$(stat_of mig2 anon)
ok "migration: the first cgroup keeps what it had ($(stat_of mig1 anon) of $M1)" \
	within "$(stat_of mig1 anon)" "$M1" 5
ok "migration: the growth after the move is the new cgroup's ($M2)" \
	within $((M1 + M2)) $((40 * MIB)) 8
kill "$MP"

# ---- page cache: 50 MiB written and read ----
mkdir "$MNT/file"
start file "$TMP/file.out" write "$DATA/f50" 50
ok "a program writes and reads 50 MiB" wait_line "$TMP/file.out" '^ready$' 30
F=$(stat_of file file)
# the writer created the file: all of its cache is the writer's, however
# late the files thread reads the create (docs/real-memory.md, Files)
ok "memory.stat file: 50 MiB within 2 % ($F)" within "$F" $((50 * MIB)) 2
ok "inactive_file + active_file = file" \
	test $(($(stat_of file inactive_file) + $(stat_of file active_file))) -eq "$F"
FP=$STARTED
kill "$FP"
wait_gone "$FP" 5
sleep 0.1
F=$(stat_of file file)
ok "after the writer's exit the file stays charged ($F)" within "$F" $((50 * MIB)) 2
eq "... its anon does not" 0 "$(stat_of file anon)"
# memory.reclaim drops page cache for real
C1=$("$REALPROG" cachestat "$DATA/f50")
echo 20M > "$MNT/file/memory.reclaim"
F2=$(stat_of file file)
C2=$("$REALPROG" cachestat "$DATA/f50")
ok "memory.reclaim 20M: the file's charge went down by 20 MiB or more ($F -> $F2)" \
	test $((F - F2)) -ge $((20 * MIB))
ok "... pgsteal_proactive counts it ($(stat_of file pgsteal_proactive))" \
	test "$(stat_of file pgsteal_proactive)" -ge $((20 * MIB / 4096))
ok "... and the pages really left the page cache ($C1 -> $C2 pages)" \
	test $((C1 - C2)) -ge $((20 * MIB / 4096))
rm -f "$DATA/f50"
# the file is gone: once nobody used it for 5 s, its charge goes
for i in $(seq 1 120); do [ "$(stat_of file file)" -lt $MIB ] && break; sleep 0.1; done
ok "a deleted file's page cache is uncharged ($(stat_of file file) left)" \
	test "$(stat_of file file)" -lt $MIB

# ---- memory.max 30M, 100 MiB of anon: the OOM killer kills it ----
mkdir "$MNT/oom"
echo 30M > "$MNT/oom/memory.max"
# 1 MiB every 5 ms at most (200 MiB/s): a sample sees it past max well
# before its end (touched flat out, 100 MiB can take less than one interval,
# and periodic sampling cannot stop what it does not see: docs/real-memory.md)
start oom "$TMP/oom.out" grow 100 1024 5
OP=$STARTED
ok "the 100 MiB program dies" wait_gone "$OP" 20
wait "$OP" 2>/dev/null
eq "... killed by SIGKILL (status 137)" 137 "$?"
ok "it did not run to its end" test -z "$(grep -x done "$TMP/oom.out")"
eq "oom_kill 1" 1 "$(event_of oom oom_kill)"
ok "oom >= 1" test "$(event_of oom oom)" -ge 1
ok "max >= 1" test "$(event_of oom max)" -ge 1
eq "cgroup.procs empty after the kill" "" "$(cat "$MNT/oom/cgroup.procs")"
ok "memory.current back under max ($(cur oom))" test "$(cur oom)" -le $((30 * MIB))
PEAK=$(cat "$MNT/oom/memory.peak")
echo "# overshoot past max before the kill: $(((PEAK - 30 * MIB) / 1024)) KiB (memory.peak $PEAK)"

# ---- memory.max 30M, a 50 MiB page-cache writer: reclaim keeps it under ----
mkdir "$MNT/fw"
echo 30M > "$MNT/fw/memory.max"
start fw "$TMP/fw.out" stream "$DATA/f50w" 50
WP=$STARTED
MAXSEEN=0
while kill -0 "$WP" 2>/dev/null; do
	c=$(cur fw)
	[ "$c" -gt "$MAXSEEN" ] && MAXSEEN=$c
	sleep 0.02
done
wait "$WP"
eq "the 50 MiB writer ran to its end" 0 "$?"
c=$(cur fw)
[ "$c" -gt "$MAXSEEN" ] && MAXSEEN=$c
# what it wrote between the last sample and its exit is charged (and
# reclaimed) within one interval
sleep $((INTERVAL_MS * 2))e-3
c=$(cur fw)
[ "$c" -gt "$MAXSEEN" ] && MAXSEEN=$c
ok "memory.current read during the writes never passed 30M (max seen $MAXSEEN)" \
	test "$MAXSEEN" -le $((30 * MIB))
ok "max events counted ($(event_of fw max))" test "$(event_of fw max)" -ge 1
eq "no OOM: reclaim sufficed" 0 "$(event_of fw oom_kill)"
CACHED=$("$REALPROG" cachestat "$DATA/f50w")
# what reclaim took left the page cache: at most the 12800 pages written
# less pgsteal stay (and a MiB of slack).
STEAL=$(stat_of fw pgsteal)
ok "cachestat: the file's cache was really dropped ($CACHED of 12800 pages, $STEAL reclaimed)" \
	test "$CACHED" -le $((12800 - STEAL + 256))
ok "pgsteal counts what reclaim took ($(stat_of fw pgsteal))" test "$(stat_of fw pgsteal)" -gt 0
ok "pgscan >= pgsteal" test "$(stat_of fw pgscan)" -ge "$(stat_of fw pgsteal)"

# ---- memory.high: a growing process is stopped for the penalty ----
mkdir "$MNT/high" "$MNT/nohigh"
echo 16M > "$MNT/high/memory.high"
start nohigh "$TMP/nohigh.out" grow 48 1024 25
NP=$STARTED
start high "$TMP/high.out" grow 48 1024 25
HP=$STARTED
# watch its state (no forks: bash reads /proc) until the other one is
# done: T while it is stopped for a penalty
STOPPED=0 LOOKS=0
end=$((${EPOCHREALTIME/./} + 30000000))
while [ "${EPOCHREALTIME/./}" -lt "$end" ] && ! grep -qx done "$TMP/nohigh.out"; do
	read -r line < "/proc/$HP/stat" 2>/dev/null
	st=${line##*) }
	[ "${st:0:1}" = T ] && STOPPED=$((STOPPED + 1))
	LOOKS=$((LOOKS + 1))
	sleep 0.02
done
NSTEPS=$(grep -c '^step' "$TMP/nohigh.out")
HSTEPS=$(grep -c '^step' "$TMP/high.out")
ok "over memory.high the program progressed slower ($HSTEPS steps while the other made $NSTEPS)" \
	test "$HSTEPS" -lt $((NSTEPS * 3 / 4))
ok "... it was stopped for its penalties (seen stopped $STOPPED times of $LOOKS)" \
	test "$STOPPED" -ge 1
ok "high events counted ($(event_of high high))" test "$(event_of high high)" -ge 1
# PSI averages move every 2 s, as the kernel's
for i in $(seq 1 50); do
	SOME=$(sed -n 's/^some avg10=\([0-9.]*\) .*/\1/p' "$MNT/high/memory.pressure")
	awk -v v="$SOME" 'BEGIN { exit !(v > 0) }' && break
	sleep 0.1
done
ok "memory.pressure some avg10 > 0 ($SOME)" awk -v v="$SOME" 'BEGIN { exit !(v > 0) }'
eq "no OOM under memory.high" 0 "$(event_of high oom_kill)"
kill "$NP" "$HP" 2>/dev/null
ok "a stopped process still dies on SIGTERM once continued" wait_gone "$HP" 5

# ---- memory.min protects a sibling's page cache under the parent's limit ----
mkdir -p "$MNT/p/a" "$MNT/p/b"
echo +memory > "$MNT/p/cgroup.subtree_control"
echo 40M > "$MNT/p/a/memory.min"
# a reads its 30 MiB file into the cache (charged to a: its first touch).
# It waits 300 ms after its open: what it reads before memcgfs has seen
# the open counts as cached by someone else (docs/real-memory.md, Files),
# and a loaded host reads fanotify's events tens of milliseconds late (6
# MiB of the 30 in the ASan stage beside two other builds; with
# MEMCGFS_FANOTIFY_LAG_MS=100, all of it)
"$REALPROG" stream "$DATA/fa" 30 && "$REALPROG" drop "$DATA/fa"
start p/a "$TMP/pa.out" read "$DATA/fa" 300
APID=$STARTED
wait_line "$TMP/pa.out" '^ready$' 10
FA=$(stat_of p/a file)
ok "a's file is charged to a ($FA)" test "$FA" -ge $((25 * MIB))
echo 50M > "$MNT/p/memory.max"
start p/b "$TMP/pb.out" stream "$DATA/fb" 60
BP=$STARTED
wait_gone "$BP" 30
cat "$MNT/p/memory.current" >/dev/null	# a read: enforcement has run
ok "the parent's usage is within its max ($(cur p))" test "$(cur p)" -le $((50 * MIB))
ok "a's page cache stayed charged ($(stat_of p/a file) of $FA)" within "$(stat_of p/a file)" "$FA" 5
ACACHED=$("$REALPROG" cachestat "$DATA/fa")
ok "a's file is still cached ($ACACHED of 7680 pages)" test "$ACACHED" -ge $((7680 * 9 / 10))
ok "b's writes were reclaimed instead ($(stat_of p/b pgsteal) pages)" test "$(stat_of p/b pgsteal)" -gt 0
kill "$APID" 2>/dev/null

# ---- the daemon itself is never a victim ----
mkdir "$MNT/self"
echo 1M > "$MNT/self/memory.max"
echo "$DPID" > "$MNT/self/cgroup.procs"
cat "$MNT/self/memory.current" >/dev/null
sleep 0.5
ok "the daemon moved into a 1M cgroup is still alive" kill -0 "$DPID"
eq "... and was not killed" 0 "$(event_of self oom_kill)"
echo "$DPID" > "$MNT/cgroup.procs"

# a member moved in with one of memcgfs's own files open is not taken for a
# page-cache user of it (a descriptor the daemon kept would hold the mount
# busy: the unmount below would fail)
mkdir "$MNT/own"
bash -c 'exec 3<"$1/memcgfs.ctl"; echo $$ > "$1/own/cgroup.procs"; exec sleep 60' _ "$MNT" &
OWN=$!
sleep $((INTERVAL_MS * 3))e-3
eq "a member with memcgfs.ctl open: no file charged for it" 0 "$(stat_of own file)"
kill "$OWN"; wait "$OWN" 2>/dev/null

for p in $ALL_STARTED; do kill "$p" 2>/dev/null; done
for p in $ALL_STARTED; do wait "$p" 2>/dev/null; done
cleanup_data
umount_fs
finish
