# SPDX-License-Identifier: MIT
# lib.sh - the integration tests' harness (sourced by each t_*.sh).
#
# A test mounts memcgfs on a fresh temporary directory with -f in the
# background (mount_fs), waits for the mount or fails at once if the daemon
# died, and always tears down (an EXIT trap): fusermount3 -u, then a lazy
# umount, then SIGTERM and SIGKILL to the daemon.  A test fails if any
# check failed or if the daemon printed an error, a warning or a sanitizer
# report.  Without root or /dev/fuse a test is skipped (exit 77), except
# with $CI set: there a skip is a failure.
#
# Environment (from meson): MEMCGFS, the daemon; MCGTOOL, the C client.

set -u

: "${MEMCGFS:?MEMCGFS must name the memcgfs binary}"
: "${MCGTOOL:?MCGTOOL must name the mcgtool binary}"

T_NAME=$(basename "$0" .sh)
# The daemon's entry for one memcgfs.ctl handle, charged to the caller as
# slab (ctl_handle_bytes(): the table entry and its share of the index)
ENTRY=76
T_FAILED=0
T_COUNT=0
DPID=
MNT=
TMP=

skip() {
	if [ -n "${CI:-}" ]; then
		echo "Bail out! $T_NAME: cannot run ($*) and CI is set: a skip is a failure"
		exit 1
	fi
	echo "1..0 # SKIP $T_NAME: $*"
	exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root (FUSE mounts with allow_other, the proc connector)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcgfs-$T_NAME.XXXXXX")
MNT=$TMP/mnt
LOG=$TMP/daemon.log
mkdir "$MNT"
chmod 755 "$TMP"	# other users reach the mount (permission tests)

# user_copy BINARY: the path of a copy of BINARY that other users may run.
# The tests run helpers as nobody and uid 65533, and a clone in a directory
# only root may enter (/root is 0700, where root's clones usually land)
# keeps the build's own binaries out of their reach: the copies live in
# $TMP, which is 0755.  Every test uses the copies, so the suites take the
# same path from any clone.
user_copy() {
	local c
	c="$TMP/bin/$(basename "$1")"
	mkdir -p "$TMP/bin" && cp "$1" "$c" && chmod 755 "$TMP/bin" "$c" && echo "$c"
}
MCGTOOL=$(user_copy "$MCGTOOL") || { echo "Bail out! cannot copy $MCGTOOL to $TMP/bin"; exit 1; }

pass() {
	T_COUNT=$((T_COUNT + 1))
	echo "ok $T_COUNT - $*"
}

fail() {
	T_COUNT=$((T_COUNT + 1))
	T_FAILED=$((T_FAILED + 1))
	echo "not ok $T_COUNT - $*"
}

# eq DESCRIPTION EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		printf '#   expected: %s\n#   got:      %s\n' "$(printf %s "$2" | sed -n l)" \
			"$(printf %s "$3" | sed -n l)"
	fi
}

# ok DESCRIPTION COMMAND...: the command succeeds
ok() {
	local d=$1
	shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}

# match DESCRIPTION REGEX ACTUAL (grep -E over the whole text)
match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		pass "$1"
	else
		fail "$1"
		printf '#   no line matches: %s\n#   in: %s\n' "$2" "$(printf %s "$3" | head -c 400 | tr '\n' '|')"
	fi
}

mounted() {
	grep -q " $MNT fuse.memcgfs " /proc/mounts
}

# The daemon's output must hold no error, warning or sanitizer report.
check_log() {
	local bad
	[ -f "$LOG" ] || return 0
	bad=$(grep -Ei 'error|warning|sanitizer|runtime error|leak' "$LOG" | head -n 20)
	if [ -n "$bad" ]; then
		fail "daemon log is clean"
		printf '#   %s\n' "$bad"
	fi
}

# mount_fs [memcgfs options]: mount on $MNT in the foreground, in the background
mount_fs() {
	local i
	"$MEMCGFS" -f "$@" "$MNT" >>"$LOG" 2>&1 &
	DPID=$!
	for i in $(seq 1 200); do
		if mounted; then
			return 0
		fi
		if ! kill -0 "$DPID" 2>/dev/null; then
			fail "memcgfs $* mounted (the daemon exited)"
			sed 's/^/#   /' "$LOG"
			DPID=
			finish
		fi
		sleep 0.05
	done
	fail "memcgfs $* mounted within 10 s"
	finish
}

# wait_gone PID SECONDS: wait for a process to end
wait_gone() {
	local i
	for i in $(seq 1 $(($2 * 20))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# kill_after SIGNAL PID: 0.3 s on, send SIGNAL to PID (a child of this
# shell) and reap it; DUR is how many ms it took to end
kill_after() {
	local t0
	sleep 0.3
	t0=$(date +%s%N)
	kill "-$1" "$2"
	wait "$2" 2>/dev/null
	DUR=$(( ($(date +%s%N) - t0) / 1000000 ))
}

# check_invariants: before an unmount, memcgfs.check (alloc_check and
# memcg_check) must answer "ok".  A charge in flight may show a passing
# mismatch, so a failing answer is read again for up to 3 s while work the
# test left behind settles; a dead or hung daemon fails it (10 s at most).
check_invariants() {
	local out= i
	mounted || return 0
	[ -n "$DPID" ] && ! kill -0 "$DPID" 2>/dev/null && return 0
	for i in $(seq 1 30); do
		out=$(timeout 10 cat "$MNT/memcgfs.check" 2>&1) || out="(read failed: $out)"
		[ "$out" = ok ] && break
		[ "$i" = 1 ] && echo "# memcgfs.check, first read: $out (reading again)"
		sleep 0.1
	done
	eq "memcgfs.check: the invariants hold at the end" ok "$out"
}

# umount_fs: unmount as a user would; the daemon must exit by itself, cleanly
umount_fs() {
	local st
	check_invariants
	fusermount3 -u "$MNT" 2>/dev/null || sleep 0.2
	mounted && fusermount3 -u "$MNT"
	if [ -n "$DPID" ]; then
		if wait_gone "$DPID" 10; then
			wait "$DPID"
			st=$?
			eq "daemon exits 0 after fusermount3 -u" 0 "$st"
		else
			fail "daemon exits after fusermount3 -u"
		fi
		DPID=
	fi
}

# the daemon's log for a failed test: its last 50 lines, and first the
# sanitizer's report whole when there is one (a busy daemon's own lines,
# such as a stress run's OOM kills, would push it out of the tail)
print_log() {
	local first
	[ -f "$LOG" ] || return 0
	first=$(grep -n -m1 -E '^==[0-9]+==ERROR|^WARNING: ThreadSanitizer|runtime error:' "$LOG" | cut -d: -f1)
	if [ -n "$first" ] && [ "$(wc -l < "$LOG")" -gt 50 ]; then
		echo "#   (the sanitizer's report, from line $first)"
		sed -n "${first},$((first + 150))p" "$LOG" | sed 's/^/#   /'
		echo "#   (the log's last 50 lines)"
	fi
	sed 's/^/#   /' "$LOG" | tail -n 50
}

teardown() {
	trap - EXIT
	# the script itself died (set -u, a syntax error): not a pass
	if [ "${T_EXIT:-0}" != 0 ] && [ "$T_FAILED" -eq 0 ]; then
		fail "$T_NAME ran to its end (the script exited with status $T_EXIT)"
	fi
	if mounted; then
		check_invariants
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID" 2>/dev/null
		wait_gone "$DPID" 5 || kill -KILL "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	mounted && umount -l "$MNT" 2>/dev/null
	check_log
	if [ "$T_FAILED" -gt 0 ]; then
		echo "# daemon log:"
		print_log
	fi
	rm -rf "$TMP"
	echo "1..$T_COUNT"
	[ "$T_FAILED" -eq 0 ] && exit 0
	exit 1
}

# ---- real memory (t_real*) ----
# disk_dir NAME: DATA, a new directory on a disk-backed filesystem
# (/var/tmp, else the working directory) for the page-cache tests: tmpfs
# is shmem.  Skips the test when there is none.
disk_dir() {
	local d t
	DATA=
	for d in /var/tmp "$PWD"; do
		t=$(stat -f -c %T "$d" 2>/dev/null)
		if [ -n "$t" ] && [ "$t" != tmpfs ] && [ "$t" != ramfs ] && [ -w "$d" ]; then
			DATA=$(mktemp -d "$d/memcgfs-$1.XXXXXX") && return 0
		fi
	done
	skip "no disk-backed directory for the page-cache tests"
}

# realprog_start CGROUP OUTFILE ARGS...: $REALPROG ARGS in CGROUP of the
# mount (a shell moves itself there, then execs it), its output to
# OUTFILE; STARTED is its pid.
realprog_start() {
	local cg=$1 out=$2
	shift 2
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' \
		_ "$MNT/$cg" "$REALPROG" "$@" >"$out" 2>&1 &
	STARTED=$!
}

# wait_line FILE REGEX SECONDS: until FILE has a line matching REGEX
wait_line() {
	local i
	for i in $(seq 1 $(($3 * 20))); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# within A B PERCENT: |A - B| <= B * PERCENT / 100
within() { local d=$(($1 - $2)); [ ${d#-} -le $(($2 * $3 / 100)) ]; }

finish() {
	teardown
}

trap 'T_EXIT=$?; teardown' EXIT
trap 'fail "interrupted"; teardown' INT TERM

# Run a command in a child shell that first moved itself into cgroup $1.
in_cgroup() {
	local cg=$1
	shift
	bash -c 'echo 0 > "$1/cgroup.procs" || exit 99; shift; eval "$@"' _ "$MNT/$cg" "$@"
}

mcg() {
	"$MCGTOOL" "$@"
}
