#!/usr/bin/env bash
# On demand, not in CI (it takes most of the host's pids for a minute):
# issue 14's fork storm at full size.  STORM processes (30000 unless set,
# fewer if the host's pid_max leaves less room than that and 2000 more)
# forked in one cgroup of a daemon that keeps the host's own RLIMIT_NOFILE.
# The daemon says at start what it got; it tracks what its pidfd budget
# holds (its last eighth kept for requests), says once that it refuses the
# rest, and the mount stays healthy: memcgfs.check ok, root's requests and
# a mkdir served; once the storm is gone, everything is back.
#
#   MEMCGFS=build/fs/memcgfs MCGTOOL=build/test/integration/mcgtool bash test/stress/t_forkstorm_host.sh
. "$(dirname "$0")/../integration/lib.sh"

STORM=${STORM:-30000}
room=$(( $(cat /proc/sys/kernel/pid_max) - $(ps -eL --no-headers | wc -l) - 2000 ))
[ "$STORM" -gt "$room" ] && STORM=$room
mount_fs -o memory=1G
CTL=$MNT/memcgfs.ctl
mkdir "$MNT/storm"
budget=$(sed -n 's/.*RLIMIT_NOFILE: [0-9]* of a hard limit of [0-9]*: \([0-9]*\) pidfds.*/\1/p' "$LOG")
match "log: the descriptors it got" "RLIMIT_NOFILE: [0-9]+ of a hard limit of [0-9]+: [0-9]+ pidfds" "$(cat "$LOG")"
TRACK=$(( budget - budget / 8 ))
[ "$STORM" -lt "$TRACK" ] && TRACK=$STORM
echo "# storm: $STORM processes; pidfd budget $budget, tracked at most $TRACK"

PIDS=$TMP/storm.pids
START=$SECONDS
bash -c 'echo $$ > "$0/storm/cgroup.procs" || exit 1
	for ((i = 0; i < $2; i++)); do sleep 1000 & echo $! >> "$1"; done
	wait' "$MNT" "$PIDS" "$STORM" &
FORKER=$!
for i in $(seq 1 3000); do
	[ "$(wc -l < "$PIDS" 2>/dev/null || echo 0)" -ge "$STORM" ] && break
	sleep 0.1
done
echo "# forked $(wc -l < "$PIDS") in $((SECONDS - START)) s"
eq "the storm forked" "$STORM" "$(wc -l < "$PIDS")"
# the tracker catches up with the connector's fork events
for i in $(seq 1 600); do
	N=$(wc -l < "$MNT/storm/cgroup.procs")
	[ "$N" -ge "$TRACK" ] && break
	sleep 0.1
done
N=$(wc -l < "$MNT/storm/cgroup.procs")
echo "# storm's cgroup.procs: $N"
# the forker itself is tracked (it moved in by a write): TRACK of the storm or all of it, plus the forker
ok "tracked: $N, what the budget holds" test "$N" -ge "$TRACK" -a "$N" -le $((TRACK + 1))
if [ "$STORM" -gt "$TRACK" ]; then
	match "log: the refusal, with the limit" "no file descriptor left for a pidfd" "$(cat "$LOG")"
	eq "... said at most every 10 s" 1 "$([ "$(grep -c 'no file descriptor left for a pidfd' "$LOG")" -le $(( (SECONDS - START) / 10 + 1 )) ] && echo 1)"
fi
eq "memcgfs.check during the storm" "ok" "$(cat "$MNT/memcgfs.check")"
match "root's requests served" "^OK ok pid=[0-9]+ cgroup=/ " "$("$MCGTOOL" ctl "$CTL" whoami)"
ok "mkdir served" mkdir "$MNT/calm"
echo "# daemon VmRSS during the storm: $(sed -n 's/^VmRSS:[[:space:]]*//p' "/proc/$DPID/status")"

# by their parent, the forker, alive until then (never by a pid from a file:
# a pid whose process is gone may be another's by now)
pkill -P "$FORKER" -x sleep
kill "$FORKER" 2>/dev/null
wait "$FORKER" 2>/dev/null
for i in $(seq 1 600); do [ -z "$(cat "$MNT/storm/cgroup.procs")" ] && break; sleep 0.1; done
eq "the storm gone: storm is empty" "" "$(cat "$MNT/storm/cgroup.procs")"
match "a new process is tracked again" "cgroup=/calm " \
	"$(bash -c 'echo $$ > "$0/calm/cgroup.procs" && exec "$1" ctl "$2" whoami' "$MNT" "$MCGTOOL" "$CTL" 2>&1)"
eq "memcgfs.check after the storm" "ok" "$(cat "$MNT/memcgfs.check")"
sed -i '/process tracking: no file descriptor left for a pidfd/d' "$LOG"
finish
