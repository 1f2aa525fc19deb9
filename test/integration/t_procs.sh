#!/usr/bin/env bash
# Membership as the kernel's: cgroup.procs moves, fork inheritance, exits,
# populated, the permission and topology rules, cgroup.kill, cgroup.freeze.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=64M
mkdir -p "$MNT/a/b" "$MNT/c"

# spawn_in CGROUP CMD...: a process that moved itself there, then exec'd CMD
spawn_in() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' _ "$MNT/$cg" "$@" &
	SPAWNED=$!
}

# wait_for DESCRIPTION COMMAND: until COMMAND succeeds (5 s, or WAIT_S)
wait_for() {
	local d=$1 i
	shift
	for i in $(seq 1 $((${WAIT_S:-5} * 20))); do
		if "$@"; then pass "$d"; return; fi
		sleep 0.05
	done
	fail "$d"
}

# (wait_for runs its command again each time: a check is a function that
# reads the state itself, never a "$(...)" expanded once before the loop)
listed() { grep -qx "$2" "$MNT/$1/cgroup.procs"; }
not_listed() { ! grep -qx "$2" "$MNT/$1/cgroup.procs"; }
events() { tr '\n' ' ' <"$MNT/$1/cgroup.events" | sed 's/ $//'; }
events_are() { test "$(events "$1")" = "$2"; }
state_is() { test "$(awk '{ print $3 }' "/proc/$1/stat")" = "$2"; }
state_of() { awk '{ print $3 }' "/proc/$1/stat"; }
procs_empty() {
	local c
	for c; do [ -z "$(cat "$MNT/$c/cgroup.procs")" ] || return 1; done
}

# a process moves itself: listed there, not in the root, populated up the tree
spawn_in a/b sleep 60
P1=$SPAWNED
wait_for "a moved process is listed" listed a/b "$P1"
ok "... not in the root's cgroup.procs" not_listed . "$P1"
ok "... not in its parent's" not_listed a "$P1"
eq "populated in its cgroup" "populated 1 frozen 0" "$(events a/b)"
eq "populated in the parent" "populated 1 frozen 0" "$(events a)"
eq "not in a sibling" "populated 0 frozen 0" "$(events c)"
eq "rmdir of a populated cgroup: EBUSY" "EBUSY" "$(mcg errno rmdir "$MNT/a/b")"
ok "the root lists pid 1" listed . 1
eq "cgroup.threads lists its thread" "$P1" "$(cat "$MNT/a/b/cgroup.threads")"
match "cpu.stat of a populated cgroup" "^usage_usec [0-9]+" "$(cat "$MNT/a/b/cpu.stat")"

# exits: gone from the listing, populated 0, rmdir at once
kill "$P1"; wait "$P1" 2>/dev/null
eq "after the exit: not listed" "" "$(cat "$MNT/a/b/cgroup.procs")"
eq "after the exit: populated 0" "populated 0 frozen 0" "$(events a/b)"
eq "... in the parent too" "populated 0 frozen 0" "$(events a)"
eq "rmdir right after the last process exited" "OK" "$(mcg errno rmdir "$MNT/a/b")"
mkdir "$MNT/a/b"

# fork inheritance: a shell that moved itself runs children there; a child
# forked before the move stays where it was
OUT=$(bash -c '
	sleep 60 & early=$!
	echo $$ > "$1/a/cgroup.procs"
	sleep 60 & late=$!
	(sleep 60 & echo $!; wait) > "$2/grandchild" &
	sleep 0.3
	echo "$early $late $(cat "$2/grandchild")"
	echo "--"
	cat "$1/a/cgroup.procs" | sort -n | tr "\n" " "
	kill $early $late $(cat "$2/grandchild") 2>/dev/null
' _ "$MNT" "$TMP")
read -r EARLY LATE GRAND <<<"$(printf '%s\n' "$OUT" | head -n1)"
LIST=" $(printf '%s\n' "$OUT" | sed -n '3p') "
case "$LIST" in *" $LATE "*) pass "a child forked after the move is in the cgroup" ;; *) fail "a child forked after the move is in the cgroup: $LIST / $LATE" ;; esac
case "$LIST" in *" $GRAND "*) pass "a grandchild too" ;; *) fail "a grandchild too: $LIST / $GRAND" ;; esac
case "$LIST" in *" $EARLY "*) fail "a child forked before the move stays out: $LIST / $EARLY" ;; *) pass "a child forked before the move stays out" ;; esac
# the reader itself is in the cgroup, as in the kernel
SELF=$(bash -c 'echo $$ > "$1/cgroup.procs"; cat "$1/cgroup.procs"; true' _ "$MNT/c" | wc -l)
eq "cat lists itself and its shell" "2" "$SELF"
wait_for "all of them gone" procs_empty a

# write syntax and errors (__cgroup_procs_write)
w() { mcg errno write "$MNT/$1/cgroup.procs" "$2"; }
eq "garbage: EINVAL" "EINVAL" "$(w a abc)"
eq "negative: EINVAL" "EINVAL" "$(w a -1)"
eq "two pids: EINVAL" "EINVAL" "$(w a "1 2")"
eq "no such process: ESRCH" "ESRCH" "$(w a 99999)"
eq "a kernel thread: EINVAL" "EINVAL" "$(w a 2)"
# the daemon plays the kernel: it and its threads are kernel threads to
# memcgfs, never moved (so never frozen or killed with a cgroup)
eq "the daemon's own pid: EINVAL" "EINVAL" "$(w a "$DPID")"
DTID=$(ls "/proc/$DPID/task" | grep -vx "$DPID" | head -n1)
eq "... one of its threads into cgroup.threads: EINVAL" "EINVAL" \
	"$(mcg errno write "$MNT/a/cgroup.threads" "$DTID")"
eq "... into the root's cgroup.procs too" "EINVAL" "$(w . "$DPID")"
ok "... not listed in a" not_listed a "$DPID"
echo +memory > "$MNT/a/cgroup.subtree_control"
spawn_in c sleep 60
P2=$SPAWNED
wait_for "moved into c" listed c "$P2"
eq "+memory in a cgroup with processes: EBUSY" "EBUSY" "$(mcg errno write "$MNT/c/cgroup.subtree_control" +memory)"
eq "into a cgroup with controllers enabled (no internal processes): EBUSY" "EBUSY" "$(w a "$P2")"
eq "into its child" "OK" "$(w a/b "$P2")"
ok "... moved" listed a/b "$P2"
ok "... not in c any more" not_listed c "$P2"
eq "and back to the root" "OK" "$(w . "$P2")"
ok "... in the root's listing" listed . "$P2"
eq "a/b empty again" "populated 0 frozen 0" "$(events a/b)"
echo -memory > "$MNT/a/cgroup.subtree_control"

# threaded: processes go into threaded cgroups; listed in the thread root
mkdir -p "$MNT/t/x" "$MNT/t/inv"
echo threaded > "$MNT/t/x/cgroup.type"
eq "into an invalid domain: EOPNOTSUPP" "EOPNOTSUPP" "$(w t/inv "$P2")"
eq "into a threaded cgroup" "OK" "$(w t/x "$P2")"
ok "the thread root lists it" listed t "$P2"
eq "cgroup.threads of the threaded cgroup" "$P2" "$(cat "$MNT/t/x/cgroup.threads")"
eq "a populated cgroup cannot become threaded: EOPNOTSUPP" "EOPNOTSUPP" \
	"$(mkdir "$MNT/pop"; w pop "$P2" >/dev/null; mcg errno write "$MNT/pop/cgroup.type" threaded)"
eq "cgroup.threads across domains: EOPNOTSUPP" "EOPNOTSUPP" "$(mcg errno write "$MNT/t/x/cgroup.threads" "$P2")"
kill "$P2"; wait "$P2" 2>/dev/null

# threads: placed one by one within their domain (t is a thread root)
mkdir "$MNT/t/x2"
echo threaded > "$MNT/t/x2/cgroup.type"
bash -c 'echo $$ > "$1/t/cgroup.procs"; exec "$2" threads 2 30' _ "$MNT" "$MCGTOOL" >"$TMP/thr" &
TP=$!
wait_for "a process with two threads started" test -s "$TMP/thr"
read -r TPID T1 T2 <"$TMP/thr"
eq "move one thread to a threaded child" "OK" "$(mcg errno write "$MNT/t/x/cgroup.threads" "$T1")"
eq "move another to a second one" "OK" "$(mcg errno write "$MNT/t/x2/cgroup.threads" "$T2")"
eq "each threaded cgroup lists its thread" "$T1 $T2" "$(cat "$MNT/t/x/cgroup.threads") $(cat "$MNT/t/x2/cgroup.threads")"
eq "the domain keeps the main thread" "$TPID" "$(cat "$MNT/t/cgroup.threads")"
eq "the domain lists the process" "$TPID" "$(cat "$MNT/t/cgroup.procs")"
eq "a cgroup with only a thread is populated" "populated 1 frozen 0" "$(events t/x2)"
eq "rmdir of it: EBUSY" "EBUSY" "$(mcg errno rmdir "$MNT/t/x2")"
eq "a thread out of its domain: EOPNOTSUPP" "EOPNOTSUPP" "$(mcg errno write "$MNT/c/cgroup.threads" "$T1")"
eq "cgroup.procs moves every thread" "OK" "$(mcg errno write "$MNT/t/x/cgroup.procs" "$T2")"
eq "all threads in x" "3" "$(wc -l <"$MNT/t/x/cgroup.threads")"
eq "x2 empty again" "populated 0 frozen 0" "$(events t/x2)"
kill "$TP"; wait "$TP" 2>/dev/null
rmdir "$MNT/t/x2"

# permissions: the opener's credentials and the common ancestor's cgroup.procs
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
eq "another user cannot open cgroup.procs for writing: EACCES" "open:EACCES" \
	"$($NOBODY "$MCGTOOL" errno write "$MNT/a/cgroup.procs" 0)"
chown 65534 "$MNT/a" "$MNT/a/cgroup.procs" "$MNT/a/b" "$MNT/a/b/cgroup.procs"
eq "delegated: but moving itself from the root needs the root's cgroup.procs: EACCES" "EACCES" \
	"$($NOBODY "$MCGTOOL" errno write "$MNT/a/cgroup.procs" 0)"
$NOBODY sleep 60 &
P3=$!
echo "$P3" > "$MNT/a/cgroup.procs"
eq "delegated: moving within its subtree" "OK" "$($NOBODY "$MCGTOOL" errno write "$MNT/a/b/cgroup.procs" "$P3")"
ok "... moved" listed a/b "$P3"
# root opens, the user writes through the inherited fd: the opener counts
exec 8>"$MNT/a/cgroup.procs"
$NOBODY bash -c 'echo $$ >&8 && cat /proc/self/status >/dev/null && exec sleep 60' &
P4=$!
wait_for "the opener's credentials count, not the writer's" listed a "$P4"
exec 8>&-
kill "$P4"; wait "$P4" 2>/dev/null
kill "$P3"; wait "$P3" 2>/dev/null

# cgroup.kill: SIGKILL to everything below
spawn_in a/b sleep 60; K1=$SPAWNED
spawn_in a sleep 60; K2=$SPAWNED
wait_for "two processes in a's subtree" listed a/b "$K1"
wait_for "... the second one too" listed a "$K2"
eq "cgroup.kill" "OK" "$(mcg errno write "$MNT/a/cgroup.kill" 1)"
wait "$K1" 2>/dev/null; s1=$?
wait "$K2" 2>/dev/null; s2=$?
eq "both killed by SIGKILL" "137 137" "$s1 $s2"
wait_for "cgroup.kill: a is empty" events_are a "populated 0 frozen 0"
eq "cgroup.kill of a threaded cgroup: EOPNOTSUPP" "EOPNOTSUPP" "$(mcg errno write "$MNT/t/x/cgroup.kill" 1)"

# cgroup.freeze: stopped, frozen 1, inherited by new children, thawed
spawn_in c sleep 60; F1=$SPAWNED
wait_for "in c" listed c "$F1"
echo 1 > "$MNT/c/cgroup.freeze"
eq "frozen 1 in cgroup.events" "populated 1 frozen 1" "$(events c)"
wait_for "the process is stopped" state_is "$F1" T
mkdir "$MNT/c/d"
eq "a new child of a frozen cgroup is frozen" "populated 0 frozen 1" "$(events c/d)"
eq "... while its own cgroup.freeze is 0" "0" "$(cat "$MNT/c/d/cgroup.freeze")"
# a process moved into it is frozen too (the effective state, not the setting)
sleep 60 &
F2=$!
echo "$F2" > "$MNT/c/d/cgroup.procs"
# (the stop and the resume are signals: the process takes them when it
# next runs, so the check reads its state again until then)
wait_for "a process moved into a frozen child is stopped" state_is "$F2" T
echo "$F2" > "$MNT/cgroup.procs"
wait_for "... and runs again once moved out" state_is "$F2" S
kill "$F2"; wait "$F2" 2>/dev/null
sleep 0.05
match "cgroup.stat.local counts frozen time" "^frozen_usec [1-9][0-9]*$" "$(cat "$MNT/c/cgroup.stat.local")"
echo 0 > "$MNT/c/cgroup.freeze"
eq "thawed" "populated 1 frozen 0" "$(events c)"
wait_for "the process runs again" state_is "$F1" S
kill "$F1"; wait "$F1" 2>/dev/null
# a process in a job-control stop before the freeze stays stopped after
# the thaw (the kernel's thaw wakes no TASK_STOPPED task), and one moved
# into and out of a frozen cgroup likewise
spawn_in c sleep 60; F3=$SPAWNED
wait_for "in c" listed c "$F3"
kill -STOP "$F3"
wait_for "stopped by its user" state_is "$F3" T
echo 1 > "$MNT/c/cgroup.freeze"
echo 0 > "$MNT/c/cgroup.freeze"
sleep 0.2
eq "a process stopped before the freeze: still stopped after the thaw" T "$(state_of "$F3")"
echo "$F3" > "$MNT/c/d/cgroup.procs"
echo 1 > "$MNT/c/d/cgroup.freeze"
echo "$F3" > "$MNT/c/cgroup.procs"
sleep 0.2
eq "... and after a move out of a frozen cgroup" T "$(state_of "$F3")"
kill -CONT "$F3"
wait_for "... until its user resumes it" state_is "$F3" S
echo 0 > "$MNT/c/d/cgroup.freeze"
kill "$F3"; wait "$F3" 2>/dev/null
rmdir "$MNT/c/d"

# a cgroup whose last member exits while a reader waits on nothing
wait_for "everything exited: the tree is empty" procs_empty a a/b c
