#!/usr/bin/env bash
# The daemon: command line, configuration keys, mount and unmount, signals,
# daemonising, a stale mountpoint.
. "$(dirname "$0")/lib.sh"

# --help, --version, bad command lines
match "--help shows the usage" "^usage: .* MOUNTPOINT" "$("$MEMCGFS" --help)"
match "--version shows the version" "^memcgfs [0-9]+\.[0-9]+" "$("$MEMCGFS" --version)"
"$MEMCGFS" >/dev/null 2>"$TMP/err"; st=$?
eq "no mountpoint: exit 1" 1 "$st"
match "no mountpoint: says so" "no mountpoint" "$(cat "$TMP/err")"
"$MEMCGFS" -f -o no_such_key=1 "$MNT" >/dev/null 2>"$TMP/err"; st=$?
eq "unknown -o key=value: refused by libfuse" 1 "$st"
"$MEMCGFS" -f -o memory=12M "$MNT" 2>"$TMP/err"; st=$?
eq "bad value of a key: exit 1" 1 "$st"
match "bad value of a key: the key and the reason" "machine.memory: 12M is out of range" "$(cat "$TMP/err")"
printf '[machine]\nmemory = lots\n' >"$TMP/bad.ini"
"$MEMCGFS" -f --config "$TMP/bad.ini" "$MNT" 2>"$TMP/err"; st=$?
eq "bad config file: exit 1" 1 "$st"
match "bad config file: file and line" "bad.ini:2: machine.memory: invalid size 'lots'" "$(cat "$TMP/err")"
"$MEMCGFS" -f -o root_subtree_control=cpu "$MNT" 2>"$TMP/err"; st=$?
eq "root_subtree_control=cpu refused" 1 "$st"
"$MEMCGFS" -f "$TMP/nonexistent" 2>"$TMP/err"; st=$?
eq "missing mountpoint: exit 1" 1 "$st"
ok "nothing got mounted by the failures" test -z "$(grep " $MNT " /proc/mounts)"

# foreground, then fusermount3 -u
mount_fs -o memory=64M -o fs.threads=4
match "/proc/mounts shows fuse.memcgfs with allow_other" \
	"^memcgfs $MNT fuse.memcgfs .*default_permissions,allow_other" "$(grep " $MNT " /proc/mounts)"
eq "the root is a directory" "directory" "$(stat -c %F "$MNT")"
# (a ThreadSanitizer build takes the slot locks: TSan cannot follow rseq)
match "the per-CPU fast paths are rseq with the default cpus" \
	"per-CPU fast paths: (rseq \([0-9]+ CPU slots\)|the slot locks \(a TSan build)" \
	"$(cat "$LOG")"
umount_fs
ok "unmounted" test -z "$(grep " $MNT " /proc/mounts)"

# a config file with -o overrides on top of it
printf '[fs]\nroot_subtree_control =\n[machine]\nmemory = 32M\n' >"$TMP/good.ini"
mount_fs -o config="$TMP/good.ini"
eq "config=FILE: empty root subtree_control" "" "$(cat "$MNT/cgroup.subtree_control")"
umount_fs
mount_fs --config "$TMP/good.ini" -o root_subtree_control=memory
eq "--config then -o KEY=VALUE: the override wins" "memory" "$(cat "$MNT/cgroup.subtree_control")"

# signal_exit SIGNAL EXITED GONE: SIGNAL to the daemon; it exits 0 (test
# EXITED), or within 10 s it has not (failure GONE)
signal_exit() {
	kill "-$1" "$DPID"
	if wait_gone "$DPID" 10; then
		wait "$DPID"; st=$?
		eq "$2" 0 "$st"
	else
		fail "$3"
	fi
}

# SIGTERM: unmounts and exits 0
signal_exit TERM "SIGTERM: exit 0" "SIGTERM: the daemon exits"
DPID=
ok "SIGTERM: unmounted" test -z "$(grep " $MNT " /proc/mounts)"

# SIGINT likewise, with a busy notifier (events) and open files
mount_fs
mkdir "$MNT/a"
exec 7<"$MNT/a/cgroup.events"
signal_exit INT "SIGINT with an open file: exit 0" "SIGINT: the daemon exits"
exec 7<&-
DPID=
ok "SIGINT: unmounted" test -z "$(grep " $MNT " /proc/mounts)"

# daemonised by default: the command returns once mounted
"$MEMCGFS" "$MNT" 2>"$TMP/err"; st=$?
eq "daemonised: the command exits 0" 0 "$st"
ok "daemonised: mounted when the command returns" mounted
DPID=$(pgrep -f "^$MEMCGFS $MNT\$" | head -n1)
ok "daemonised: the daemon runs" test -n "$DPID"
ok "daemonised: no output on the terminal" test ! -s "$TMP/err"
fusermount3 -u "$MNT"
ok "daemonised: fusermount3 -u ends it" wait_gone "${DPID:-0}" 10
DPID=

# Under systemd (Type=notify): READY=1 on $NOTIFY_SOCKET once the mount
# serves, STOPPING=1 when SIGTERM starts the unmount.  The listener notes
# whether the mount was in the mount table when READY=1 arrived.
cat >"$TMP/notify.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
out = open(sys.argv[3], "w")
try:
    while True:
        msg = s.recv(4096).decode()
        mounted = any(l.split()[1] == sys.argv[2] for l in open("/proc/mounts"))
        for line in msg.split("\n"):
            out.write("%s mounted=%s\n" % (line, "yes" if mounted else "no"))
        out.flush()
        if "STOPPING=1" in msg:
            break
except socket.timeout:
    pass
PY
python3 "$TMP/notify.py" "$TMP/notify.sock" "$MNT" "$TMP/notify.out" &
NPID=$!
for i in $(seq 1 100); do [ -S "$TMP/notify.sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET=$TMP/notify.sock mount_fs -o memory=32M
eq "sd_notify: READY=1 once the mount serves" "READY=1 mounted=yes" \
	"$(for i in $(seq 1 100); do grep -q READY "$TMP/notify.out" && break; sleep 0.05; done; grep READY "$TMP/notify.out")"
match "sd_notify: STATUS names the mountpoint" "^STATUS=mounted on $MNT " "$(cat "$TMP/notify.out")"
kill -TERM "$DPID"
ok "SIGTERM: the daemon exits" wait_gone "$DPID" 10
wait "$DPID"; st=$?; DPID=
eq "SIGTERM: exit status 0" 0 "$st"
wait "$NPID"
match "sd_notify: STOPPING=1 on SIGTERM" "^STOPPING=1 " "$(cat "$TMP/notify.out")"
ok "SIGTERM: unmounted" test -z "$(grep " $MNT " /proc/mounts)"

# a live memcgfs mountpoint: refused, not a second daemon stacked on it
mount_fs
timeout 10 "$MEMCGFS" -f "$MNT" 2>"$TMP/err"; st=$?	# (a stacked daemon would serve on)
eq "live memcgfs mountpoint: exit 1" 1 "$st"
match "live memcgfs mountpoint: says so" "memcgfs is already mounted on $MNT" "$(cat "$TMP/err")"
eq "live memcgfs mountpoint: one mount, not two" 1 "$(grep -c " $MNT " /proc/mounts)"
eq "live memcgfs mountpoint: the first daemon still serves" "memory" "$(cat "$MNT/cgroup.controllers")"
umount_fs

# a missing mountpoint directly under /run is made (as a unit's
# RuntimeDirectory is) and removed again at unmount; elsewhere it is an error
if [ -d /run ] && [ -w /run ]; then
	RUNMNT=/run/memcgfs-test-$$
	"$MEMCGFS" -o memory=32M "$RUNMNT" 2>"$TMP/err"; st=$?
	eq "missing mountpoint under /run: made and mounted" "0 fuse.memcgfs" \
		"$st $(awk -v m="$RUNMNT" '$2 == m { print $3 }' /proc/mounts)"
	fusermount3 -u "$RUNMNT" 2>/dev/null
	for i in $(seq 1 100); do [ -e "$RUNMNT" ] || break; sleep 0.05; done
	ok "missing mountpoint under /run: removed at unmount" test ! -e "$RUNMNT"
	rmdir "$RUNMNT" 2>/dev/null
fi

# a stale mountpoint (its daemon killed): a clear message
mount_fs
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
"$MEMCGFS" -f "$MNT" 2>"$TMP/err"; st=$?
eq "stale mountpoint: exit 1" 1 "$st"
match "stale mountpoint: says what to do" "stale FUSE mount.*fusermount3 -u" "$(cat "$TMP/err")"
umount -l "$MNT"

# mount(8) through mount.fuse3: "mount -t fuse.memcgfs memcgfs DIR" runs
# memcgfs from mount's PATH; the "fuse" type with PROGRAM#SOURCE names it
# (on CI neither this nor the installed daemon's check below may skip: the
# daemon is installed from this build into a DESTDIR)
if ! [ -x /sbin/mount.fuse3 ] && ! command -v mount.fuse3 >/dev/null; then
	if [ -n "${CI:-}" ]; then
		fail "mount.fuse3 is installed (fuse3)"
	else
		echo "# no mount.fuse3: the mount(8) checks are left out"
	fi
else
	if mount -t fuse "$MEMCGFS#memcgfs" "$MNT" -o memory=32M 2>"$TMP/err"; then
		ok "mount -t fuse PROGRAM#memcgfs DIR: mounted" mounted
		match "mount(8): a fuse.memcgfs mount" "^memcgfs $MNT fuse.memcgfs " "$(grep " $MNT " /proc/mounts)"
		DPID=$(pgrep -f "^$MEMCGFS memcgfs $MNT" | head -n1)
		fusermount3 -u "$MNT"
		ok "mount(8): fusermount3 -u ends it" wait_gone "${DPID:-0}" 10
		DPID=
	else
		fail "mount -t fuse PROGRAM#memcgfs DIR: $(cat "$TMP/err")"
	fi
	DEST=$TMP/dest
	if meson install -C "${MEMCGFS_BUILD_ROOT:?}" --no-rebuild --quiet --destdir "$DEST" \
		>"$TMP/install" 2>&1; then
		BIN=$(dirname "$(find "$DEST" -path '*/bin/memcgfs' -type f | head -n1)")
		ok "installed in a DESTDIR: the daemon" test -x "$BIN/memcgfs"
		# what mount(8) runs for "mount -t fuse.memcgfs memcgfs DIR" (mount(8)
		# itself resets PATH, so that the DESTDIR cannot be put in it)
		PATH="$BIN:$PATH" mount.fuse3 memcgfs "$MNT" -t memcgfs -o memory=32M 2>"$TMP/err"
		ok "mount.fuse3 memcgfs DIR -t memcgfs (the installed daemon, from PATH): mounted" mounted
		DPID=$(pgrep -f "^memcgfs memcgfs $MNT" | head -n1)
		ok "... by the installed daemon" test "$(readlink "/proc/${DPID:-0}/exe")" -ef "$BIN/memcgfs"
		fusermount3 -u "$MNT"
		ok "... fusermount3 -u ends it" wait_gone "${DPID:-0}" 10
		DPID=
	else
		fail "meson install --destdir: $(tail -n 3 "$TMP/install")"
	fi
fi
