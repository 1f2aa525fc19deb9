#!/usr/bin/env bash
# Real memory as on an older kernel: without fanotify (MEMCGFS_FANOTIFY=0,
# as a daemon that may not use it) the files members have open or mapped
# are found by looking at their descriptors and mappings in /proc, every
# few samples; without cachestat(2) (MEMCGFS_CACHESTAT=0, as before Linux
# 6.5) their page cache is measured with mincore(2).
. "$(dirname "$0")/lib.sh"

: "${REALPROG:?REALPROG must name the realprog binary}"

INTERVAL_MS=100
MEMCGFS_FANOTIFY=0 MEMCGFS_CACHESTAT=0 mount_fs -o real_memory=true -o real_interval=$INTERVAL_MS
match "the daemon says how it finds files" "fanotify off" "$(cat "$LOG")"
match "... and how it measures page cache" "cachestat off.*mincore" "$(cat "$LOG")"

disk_dir realscan
MIB=1048576

mkdir "$MNT/job"
realprog_start job "$TMP/keep.out" keep "$DATA/f20" 20
P=$STARTED
ok "a program keeps a 20 MiB file it wrote open" wait_line "$TMP/keep.out" '^ready$' 10
# the scan runs every 8 samples: within 8 intervals and a bit
for i in $(seq 1 40); do
	F=$(sed -n 's/^file //p' "$MNT/job/memory.stat")
	[ "$F" -ge $((19 * MIB)) ] && break
	sleep 0.1
done
ok "its page cache is found in /proc and charged ($F)" test "$F" -ge $((19 * MIB))
ok "its anon is charged too" test "$(sed -n 's/^anon //p' "$MNT/job/memory.stat")" -gt 0
# reclaim drops the pages for real, and mincore sees them gone
echo 10M > "$MNT/job/memory.reclaim"
F2=$(sed -n 's/^file //p' "$MNT/job/memory.stat")
ok "memory.reclaim 10M: the file's charge went down by 10 MiB or more ($F -> $F2)" \
	test $((F - F2)) -ge $((10 * MIB))
CACHED=$("$REALPROG" cachestat "$DATA/f20")
ok "... and the pages left the page cache ($CACHED of 5120 cached)" test "$CACHED" -le 2816
kill "$P"
wait "$P" 2>/dev/null
rm -rf "$DATA"
umount_fs
finish
