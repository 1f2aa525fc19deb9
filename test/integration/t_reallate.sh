#!/usr/bin/env bash
# Real memory when the files thread reads fanotify's events late, as on a
# loaded host (MEMCGFS_FANOTIFY_LAG_MS=50: every 50 ms instead of every
# half millisecond; later than that, an open storm elsewhere on the host
# overflows fanotify's queue of 16384 events, and events are lost: 100,000
# opens a second did at 500 ms, in CI beside two other builds).  A file a member creates is all its own however
# late the create is read; a file someone else cached before a member
# opened it is not the member's.  (docs/real-memory.md, Files)
. "$(dirname "$0")/lib.sh"

: "${REALPROG:?REALPROG must name the realprog binary}"

LAG_MS=50
MEMCGFS_FANOTIFY_LAG_MS=$LAG_MS mount_fs -o memory=1G -o real_memory=true -o real_interval=200
match "the daemon says how late it reads" "every ${LAG_MS}000 us" "$(cat "$LOG")"
grep -q "files found as they are created and opened (fanotify)" "$LOG" ||
	skip "no fanotify create events here (before Linux 5.17, or not root)"

disk_dir reallate
MIB=1048576
file_of() { sed -n 's/^file //p' "$MNT/$1/memory.stat"; }
PIDS=

# a member creates a file and writes 40 MiB into it, nearly all of it (tens
# of milliseconds) before the files thread reads the create
mkdir "$MNT/writer"
realprog_start writer "$TMP/writer.out" write "$DATA/created" 40
PIDS="$PIDS $STARTED"
ok "a member wrote and read back 40 MiB" wait_line "$TMP/writer.out" '^ready$' 15
# the create is read within a lag; the file is charged at the next sample
sleep 0.6
F=$(file_of writer)
# (an overflow loses the create: the daemon says so)
lost=$(grep -o "fanotify's queue overflowed" "$LOG")
ok "the file it created is charged whole: 40 MiB within 2 % ($F${lost:+; $lost})" \
	within "${F:-0}" $((40 * MIB)) 2

# a file the host cached (written here, outside memcgfs), then read whole by
# a member: nothing of it is the member's, though the files thread reads the
# open after the read
dd if=/dev/zero of="$DATA/host" bs=1M count=20 status=none
mkdir "$MNT/reader"
realprog_start reader "$TMP/reader.out" read "$DATA/host"
PIDS="$PIDS $STARTED"
ok "a member read a 20 MiB file the host had cached" wait_line "$TMP/reader.out" '^ready$' 15
sleep 0.6
# (a page is the member's own: "ready" written to its output file, which it
# did not create either)
R=$(file_of reader)
ok "the host's cached pages are not the member's ($R bytes charged)" test "$R" -le 65536
ok "... and the writer's file is still charged ($(file_of writer))" \
	within "$(file_of writer)" $((40 * MIB)) 2

kill $PIDS 2>/dev/null
for p in $PIDS; do wait_gone "$p" 5; done
rm -rf "$DATA"
umount_fs
finish
