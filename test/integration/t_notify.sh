#!/usr/bin/env bash
# Change notification as kernfs does it: poll() sees POLLPRI|POLLERR once a
# file changed since that fd last read it; inotify sees IN_MODIFY;
# notifications are coalesced to one per file per 10 ms.  A file that goes
# away under its fds (rmdir, -memory, cgroup.pressure 0) polls PRI|ERR;
# a PSI trigger goes with it and its blocked poller wakes.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=64M
mkdir -p "$MNT/a/b"

# a fresh fd reports a change (kernfs: counter 1, fd 0) until it reads
eq "a fresh fd of cgroup.events: PRI|ERR, then nothing after a read" \
	"$(printf 'PRI|ERR\n0')" "$(mcg pollfresh "$MNT/a/cgroup.events")"
eq "any kernfs file: the same on a fresh fd" \
	"$(printf 'PRI|ERR\n0')" "$(mcg pollfresh "$MNT/a/memory.max")"
eq "a PSI file without a trigger: always PRI|ERR" \
	"$(printf 'PRI|ERR\nPRI|ERR')" "$(mcg pollfresh "$MNT/a/cpu.pressure")"

# a process joins and stays (one change of populated); stop_sleeper ends it
JOIN_A="bash -c 'echo \$\$ > $MNT/a/cgroup.procs; sleep 30 >/dev/null 2>&1 & echo \$! > $TMP/sleeper'"
JOIN_B="bash -c 'echo \$\$ > $MNT/a/b/cgroup.procs; sleep 30 >/dev/null 2>&1 & echo \$! > $TMP/sleeper'"
stop_sleeper() {
	kill "$(cat "$TMP/sleeper")" 2>/dev/null
	for i in $(seq 1 100); do
		grep -q 'populated 0' "$MNT/a/cgroup.events" && break
		sleep 0.02
	done
	sleep 0.05	# its notification delivered too
}
eq "poll: populated wakes cgroup.events, PRI until the fd reads again" "$(printf 'PRI\nPRI\n0')" \
	"$(mcg poll "$MNT/a/cgroup.events" 2000 "$JOIN_A")"
stop_sleeper
eq "poll: a descendant's populated wakes the parent" "$(printf 'PRI\nPRI\n0')" \
	"$(mcg poll "$MNT/a/cgroup.events" 2000 "$JOIN_B")"
stop_sleeper
eq "poll: nothing happens, nothing wakes" "TIMEOUT" "$(mcg poll "$MNT/a/cgroup.events" 200)"
eq "poll: a sibling's change does not wake" "TIMEOUT" \
	"$(mkdir "$MNT/c"; mcg poll "$MNT/c/cgroup.events" 300 "$JOIN_A")"
stop_sleeper
eq "poll: frozen wakes cgroup.events" "$(printf 'PRI\nPRI\n0')" \
	"$(mcg poll "$MNT/a/cgroup.events" 2000 "echo 1 > $MNT/a/cgroup.freeze")"
echo 0 > "$MNT/a/cgroup.freeze"
eq "poll: memory.max never notifies" "TIMEOUT" \
	"$(mcg poll "$MNT/a/memory.max" 300 "echo 1M > $MNT/a/memory.max")"

# inotify: the notifier writes through the mount
eq "inotify: IN_MODIFY on cgroup.events" "MODIFY" "$(mcg inotify "$MNT/a/cgroup.events" 2000 "$JOIN_A")"
stop_sleeper
eq "inotify: on the parent's cgroup.events" "MODIFY" "$(mcg inotify "$MNT/a/cgroup.events" 2000 "$JOIN_B")"
stop_sleeper
eq "inotify: the self-write changed nothing" "$(printf 'populated 0\nfrozen 0')" "$(cat "$MNT/a/cgroup.events")"
eq "inotify: nothing without a change" "TIMEOUT" "$(mcg inotify "$MNT/a/cgroup.events" 200)"

# memory.events: a charge over memory.max
echo 64K > "$MNT/a/memory.max"
CHARGE="bash -c 'echo \$\$ > $MNT/a/cgroup.procs; $MCGTOOL ctl $MNT/memcgfs.ctl \"kmalloc 4096 GFP_KERNEL_ACCOUNT x64\" >/dev/null'"
eq "poll: memory.events wakes on max" "$(printf 'PRI\nPRI\n0')" "$(mcg poll "$MNT/a/memory.events" 2000 "$CHARGE")"
eq "poll: memory.events.local too" "$(printf 'PRI\nPRI\n0')" "$(mcg poll "$MNT/a/memory.events.local" 2000 "$CHARGE")"
eq "inotify: memory.events" "MODIFY" "$(mcg inotify "$MNT/a/memory.events" 2000 "$CHARGE")"
match "memory.events counted max" "^max [1-9]" "$(cat "$MNT/a/memory.events")"
echo max > "$MNT/a/memory.max"

# coalescing: 100 flips of populated in a tight loop, at most one per 10 ms
# (every delivery but the last is 10 ms after the one before: as many as
# 10 ms fit in the time the changes took, and the last one)
read -r N CMD_MS < <(mcg inotifycount "$MNT/a/cgroup.events" 1500 \
	"for i in \$(seq 1 100); do echo 1 > $MNT/a/cgroup.freeze; echo 0 > $MNT/a/cgroup.freeze; done")
MAXN=$((CMD_MS / 10 + 2))
DUR_OK=$([ "$N" -ge 1 ] && [ "$N" -le "$MAXN" ] && echo yes)
eq "coalesced: between 1 and $MAXN IN_MODIFY for 200 changes in $CMD_MS ms ($N)" "yes" "$DUR_OK"
eq "coalesced, not dropped: the last state is seen" "$(printf 'populated 0\nfrozen 0')" "$(cat "$MNT/a/cgroup.events")"

# A file gone under its fds (kernfs deactivates the node): poll says
# DEFAULT|ERR|PRI, reads and writes ENODEV.  The drain destroys a PSI
# trigger, which wakes its blocked poller (psi_trigger_destroy); a
# notifying file's poller is woken by nobody (kernfs_drain_open_files).
# pollgone: the blocked poll, a poll that does not wait, a read, a trigger.
TRIG="some 150000 1000000"
GONE=$(printf 'PRI|ERR\nPRI|ERR\nread:ENODEV\nwrite:ENODEV')
mkdir "$MNT/g1" "$MNT/g2" "$MNT/g3" "$MNT/g4"
eq "rmdir: a blocked poll on a memory.pressure trigger wakes, PRI|ERR; ENODEV after" "$GONE" \
	"$(mcg pollgone "$MNT/g1/memory.pressure" "$TRIG" 3000 "rmdir $MNT/g1")"
eq "rmdir: the same on a cpu.pressure trigger" "$GONE" \
	"$(mcg pollgone "$MNT/g2/cpu.pressure" "$TRIG" 3000 "rmdir $MNT/g2")"
eq "cgroup.pressure 0: a blocked poll on a memory.pressure trigger wakes, PRI|ERR; ENODEV after" \
	"$GONE" "$(mcg pollgone "$MNT/g3/memory.pressure" "$TRIG" 3000 "echo 0 > $MNT/g3/cgroup.pressure")"
echo 1 > "$MNT/g3/cgroup.pressure"
eq "cgroup.pressure 0: the same on an io.pressure trigger" "$GONE" \
	"$(mcg pollgone "$MNT/g3/io.pressure" "$TRIG" 3000 "echo 0 > $MNT/g3/cgroup.pressure")"
echo 1 > "$MNT/g3/cgroup.pressure"
eq "cgroup.pressure 1: a new fd's trigger polls as before" "TIMEOUT" \
	"$(mcg psipoll "$MNT/g3/memory.pressure" "$TRIG" 300)"
eq "rmdir: cgroup.events' blocked poll is not woken; a new poll PRI|ERR, a read ENODEV" \
	"$(printf 'TIMEOUT\nPRI|ERR\nread:ENODEV')" \
	"$(mcg pollgone "$MNT/g4/cgroup.events" - 700 "rmdir $MNT/g4")"
mkdir -p "$MNT/ep/c"
echo +memory > "$MNT/ep/cgroup.subtree_control"
eq "-memory: memory.events' blocked poll is not woken; a new poll PRI|ERR, a read ENODEV" \
	"$(printf 'TIMEOUT\nPRI|ERR\nread:ENODEV')" \
	"$(mcg pollgone "$MNT/ep/c/memory.events" - 700 "echo -memory > $MNT/ep/cgroup.subtree_control")"
echo +memory > "$MNT/ep/cgroup.subtree_control"
eq "-memory: memory.stat the same" "$(printf 'TIMEOUT\nPRI|ERR\nread:ENODEV')" \
	"$(mcg pollgone "$MNT/ep/c/memory.stat" - 700 "echo -memory > $MNT/ep/cgroup.subtree_control")"
rmdir "$MNT/g3" "$MNT/ep/c" "$MNT/ep"
