#!/usr/bin/env bash
# Extended attributes of cgroup directories and files, as the kernel's
# cgroupfs (kernfs) keeps them: trusted.* and user.*, set/get/list/remove,
# the kernel's errnos and per-node caps on user.* (128 attributes, 128 KiB
# of values), who may see and change them, and gone with their node.
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

mount_fs -o memory=64M
mkdir -p "$MNT/a/b"
echo +memory > "$MNT/a/cgroup.subtree_control"
X() { "$MCGTOOL" xattr "$@"; }

# set, get, list, remove
eq "user.* on a cgroup directory" OK "$(X "$MNT/a" set user.oomd_avoid 1)"
eq "... read back" "OK 1" "$(X "$MNT/a" get user.oomd_avoid)"
eq "trusted.* (root)" OK "$(X "$MNT/a" set trusted.delegate 1)"
eq "on a file" OK "$(X "$MNT/a/memory.max" set user.note limit)"
eq "on the root cgroup" OK "$(X "$MNT" set user.root here)"
eq "list: both namespaces for root, by name" "OK trusted.delegate,user.oomd_avoid" "$(X "$MNT/a" list)"
eq "list of a file: its own only" "OK user.note" "$(X "$MNT/a/memory.max" list)"
eq "list, size 0: the length" "OK 33" "$(X "$MNT/a" list 0)"
eq "list into a buffer too small: ERANGE" ERANGE "$(X "$MNT/a" list 20)"
eq "get, size 0: the length" "OK 5" "$(X "$MNT/a/memory.max" get user.note 0)"
eq "get into a buffer too small: ERANGE" ERANGE "$(X "$MNT/a/memory.max" get user.note 4)"
eq "get of a name not set: ENODATA" ENODATA "$(X "$MNT/a" get user.nothing)"
eq "XATTR_CREATE of one that exists: EEXIST" EEXIST "$(X "$MNT/a" set user.oomd_avoid 2 create)"
eq "XATTR_REPLACE of one that does not: ENODATA" ENODATA "$(X "$MNT/a" set user.new 2 replace)"
eq "XATTR_REPLACE of one that does" OK "$(X "$MNT/a" set user.oomd_avoid 2 replace)"
eq "... the new value" "OK 2" "$(X "$MNT/a" get user.oomd_avoid)"
eq "an empty value is kept" "OK 0" "$(X "$MNT/a" set user.empty - >/dev/null; X "$MNT/a" get user.empty 0)"
eq "remove" OK "$(X "$MNT/a" remove user.empty)"
eq "remove again: ENODATA" ENODATA "$(X "$MNT/a" remove user.empty)"
eq "the directory's and the file's are apart" "OK trusted.delegate,user.oomd_avoid" "$(X "$MNT/a" list)"

# names: kernfs knows trusted, user (and security, for security modules)
eq "another namespace: EOPNOTSUPP" EOPNOTSUPP "$(X "$MNT/a" set foo.bar 1)"
eq "system.*: EOPNOTSUPP" EOPNOTSUPP "$(X "$MNT/a" set system.foo 1)"
eq "security.*: EOPNOTSUPP" EOPNOTSUPP "$(X "$MNT/a" set security.foo 1)"
eq "get of another namespace: EOPNOTSUPP" EOPNOTSUPP "$(X "$MNT/a" get foo.bar)"
eq "a prefix alone: EINVAL" EINVAL "$(X "$MNT/a" set user. 1)"
eq "a name over 255 bytes: ERANGE" ERANGE "$(X "$MNT/a" set "user.$(printf 'n%.0s' $(seq 1 251))" 1)"
eq "a value over 64 KiB: E2BIG" E2BIG "$(X "$MNT/a" set user.big @65537)"

# kernfs's caps on user.*, per node
eq "128 user.* on a node, the 129th: ENOSPC" "set 128 ENOSPC" "$(X "$MNT/a/b" fill user.n 200 1)"
eq "at the cap even a replacement is ENOSPC (kernfs counts it in first)" ENOSPC "$(X "$MNT/a/b" set user.n0 2)"
eq "... one removed, one fits again" "OK OK" "$(X "$MNT/a/b" remove user.n5) $(X "$MNT/a/b" set user.n0 2)"
eq "another node has its own count" OK "$(X "$MNT/a/b/memory.current" set user.n0 1)"
eq "128 KiB of values on a node: two of 64 KiB, not a third" "set 2 ENOSPC" \
	"$(X "$MNT/a/b/memory.max" fill user.s 3 65536)"
eq "... an empty one still fits" OK "$(X "$MNT/a/b/memory.max" set user.e -)"
eq "... a replacement counts its new size in before the old one out" ENOSPC \
	"$(X "$MNT/a/b/memory.max" set user.s0 @65536)"
eq "trusted.* have no count cap" "set 200" "$(X "$MNT/a/b/memory.high" fill trusted.t 200 1)"

# who: trusted.* only for CAP_SYS_ADMIN (the kernel refuses the others),
# user.* as the node's permissions say
eq "a user cannot read trusted.*: ENODATA" ENODATA "$($NOBODY "$MCGTOOL" xattr "$MNT/a" get trusted.delegate)"
eq "... nor set them: EPERM" EPERM "$($NOBODY "$MCGTOOL" xattr "$MNT/a" set trusted.x 1)"
eq "... and does not see them listed" "OK user.oomd_avoid" "$($NOBODY "$MCGTOOL" xattr "$MNT/a" list)"
eq "a user reads user.*" "OK 2" "$($NOBODY "$MCGTOOL" xattr "$MNT/a" get user.oomd_avoid)"
eq "a user cannot set user.* on root's directory: EACCES" EACCES "$($NOBODY "$MCGTOOL" xattr "$MNT/a" set user.x 1)"
chown 65534:65534 "$MNT/a/b"
eq "... but on a directory delegated to it" OK "$($NOBODY "$MCGTOOL" xattr "$MNT/a/b" set user.mine 1)"

# gone with the node: memory.* go with the memcg (-memory), a hidden
# *.pressure file keeps its own, a removed cgroup takes all of them
X "$MNT/a/b/memory.pressure" set user.p 1 >/dev/null
echo 0 > "$MNT/a/b/cgroup.pressure"
echo 1 > "$MNT/a/b/cgroup.pressure"
eq "a hidden and shown again memory.pressure keeps its own" "OK user.p" "$(X "$MNT/a/b/memory.pressure" list)"
echo -memory > "$MNT/a/cgroup.subtree_control"
echo +memory > "$MNT/a/cgroup.subtree_control"
eq "after -memory and +memory: new memory.* files, none" "OK " "$(X "$MNT/a/b/memory.max" list)"
eq "... the directory keeps its own" "OK user.mine,user.n0,user.n1" "$(X "$MNT/a/b" list | cut -d, -f1-3)"
rmdir "$MNT/a/b"
mkdir "$MNT/a/b"
eq "a cgroup removed and made again: none" "OK " "$(X "$MNT/a/b" list)"

umount_fs
finish
