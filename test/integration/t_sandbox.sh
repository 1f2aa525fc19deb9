#!/usr/bin/env bash
# memcgctl sandbox: an unmodified cgroup tool (cgfind, which finds the tree
# through /proc/mounts and /sys/fs/cgroup) run where memcgfs is the cgroup
# v2 tree; what the sandbox shows and what it cannot hide (statfs says
# FUSE); the host's mounts untouched; exit statuses; root only.
. "$(dirname "$0")/lib.sh"

BUILD=$(cd "$(dirname "$MEMCGFS")/.." && pwd)
MC=${MEMCGCTL:-$BUILD/client/memcgctl}
: "${CGFIND:?CGFIND must name the cgfind binary}"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup"

mount_fs -o memory=128M
host_mounts() { grep -E ' /sys/fs/cgroup(/[^ ]*)? ' /proc/self/mounts | sort; }
HOST_BEFORE=$(host_mounts)
HOST_TYPE=$(stat -f -c %t /sys/fs/cgroup)

# the tool finds memcgfs and works in it
OUT=$("$MC" -m "$MNT" sandbox -- "$CGFIND" agent 2>&1)
ST=$?
eq "the tool ran to its end in the sandbox" 0 "$ST"
eq "it finds a cgroup2 entry in /proc/mounts at /sys/fs/cgroup" "cgroup2 mount: /sys/fs/cgroup" "$(echo "$OUT" | sed -n 1p)"
eq "... with memcgfs on top of it (the table still says so)" "on top of it: fuse.memcgfs" "$(echo "$OUT" | sed -n 2p)"
eq "statfs says FUSE, not cgroup2 (the documented limit)" "statfs: fuse" "$(echo "$OUT" | sed -n 3p)"
eq "cgroup.controllers: memcgfs's" "controllers: memory" "$(echo "$OUT" | sed -n 4p)"
eq "/proc/self/cgroup: the namespace's root, memcgfs's root" "self: / (there)" "$(echo "$OUT" | sed -n 5p)"
eq "it made its cgroup" "mkdir agent: ok" "$(echo "$OUT" | sed -n 6p)"
eq "... set memory.max" "memory.max: 67108864" "$(echo "$OUT" | sed -n 7p)"
eq "... its xattr marker" "xattr user.oomd_avoid: 1" "$(echo "$OUT" | sed -n 8p)"
eq "... moved itself there" "moved: listed in its cgroup.procs" "$(echo "$OUT" | sed -n 9p)"
match "... and read memory.current" "^memory.current: [0-9]+$" "$(echo "$OUT" | sed -n 10p)"
# seen from the host: all of it happened on the memcgfs mount
eq "on the memcgfs mount: the cgroup with its memory.max" 67108864 "$(cat "$MNT/agent/memory.max" 2>&1)"
eq "... and its xattr" "OK 1" "$("$MCGTOOL" xattr "$MNT/agent" get user.oomd_avoid)"

# what the sandbox's mount table holds: one cgroup2 entry, memcgfs over it,
# no cgroup v1 hierarchy (a v1 or hybrid host's are detached in there)
IN=$("$MC" -m "$MNT" sandbox -- cat /proc/self/mounts)
eq "in the sandbox: one cgroup2 entry" "cgroup2 /sys/fs/cgroup" "$(echo "$IN" | awk '$3 == "cgroup2" { print $1, $2 }')"
eq "... no cgroup v1 hierarchy" "" "$(echo "$IN" | awk '$3 == "cgroup" { print $2 }')"
eq "... memcgfs at /sys/fs/cgroup, after the cgroup2" "cgroup2 fuse.memcgfs" \
	"$(echo "$IN" | awk '$2 == "/sys/fs/cgroup" { printf "%s%s", s, $3; s = " " }')"
eq "a cgroup made in there is memcgfs's" "yes" \
	"$("$MC" -m "$MNT" sandbox -- sh -c 'mkdir /sys/fs/cgroup/inside && echo yes')"
ok "... seen on the mount" test -d "$MNT/inside"

# -g: the command starts in a memcgfs cgroup
OUT=$("$MC" -m "$MNT" sandbox -g agent -- sh -c 'grep -qx $$ /sys/fs/cgroup/agent/cgroup.procs && echo in; cat /proc/self/cgroup | grep ^0::')
eq "-g agent: the command is in memcgfs's agent" "in" "$(echo "$OUT" | sed -n 1p)"
eq "... while /proc/self/cgroup does not follow (the documented limit)" "0::/" "$(echo "$OUT" | sed -n 2p)"

# the host is untouched
eq "the host's mounts are as they were" "$HOST_BEFORE" "$(host_mounts)"
eq "the host's /sys/fs/cgroup is what it was" "$HOST_TYPE" "$(stat -f -c %t /sys/fs/cgroup)"

# exit statuses and refusals
"$MC" -m "$MNT" sandbox -- sh -c 'exit 3'
eq "the command's exit status" 3 $?
"$MC" -m "$MNT" sandbox -- /nonexistent/cmd 2>/dev/null
eq "a command that is not there: 127" 127 $?
"$MC" -m "$MNT" sandbox 2>/dev/null
eq "no command: a usage error (2)" 2 $?
ERR=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MC" -m "$MNT" sandbox -- true 2>&1)
ST=$?
eq "as a user: refused (1)" 1 "$ST"
match "... saying it needs root" "needs CAP_SYS_ADMIN" "$ERR"
"$MC" -m "$TMP" sandbox -- true 2>/dev/null
eq "not a memcgfs mount: refused (1)" 1 $?

rmdir "$MNT/agent" "$MNT/inside"
umount_fs
finish
