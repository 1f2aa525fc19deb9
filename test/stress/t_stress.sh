#!/usr/bin/env bash
# The stress test (issue 7): many client processes in a changing tree doing
# random requests, migrations, mkdir/rmdir, limit changes, reclaim, OOM
# kills and SIGKILLs in the middle of requests; at the end every figure is
# back where it started.  test/stress/stress.c is the driver; this mounts,
# runs it, unmounts and checks the daemon's log.
#
# Environment: STRESS (the driver), STRESS_SECONDS (default 60),
# STRESS_CLIENTS, STRESS_SEED.
. "$(dirname "$0")/../integration/lib.sh"

: "${STRESS:?STRESS must name the stress driver}"

# OOM kills are real SIGKILLs; a small machine keeps the test bounded
mount_fs -o memory=256M -o oom_kill_signal=SIGKILL
"$STRESS" "$MNT" | tee "$TMP/stress.out"
st=${PIPESTATUS[0]}
eq "the stress driver passes" 0 "$st"
match "the summary line" "^stress: requests=[0-9]+ ops_per_s=[0-9]+ .* ok$" "$(cat "$TMP/stress.out")"
umount_fs
finish
