#!/usr/bin/env bash
# The tree: mkdir and rmdir with the kernel's rules and errnos,
# hierarchy limits, subtree_control, threaded mode, and what kernfs refuses.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=64M

eq "mkdir" "OK" "$(mcg errno mkdir "$MNT/a")"
eq "mkdir of an existing cgroup: EEXIST" "EEXIST" "$(mcg errno mkdir "$MNT/a")"
eq "mkdir over a file: EEXIST" "EEXIST" "$(mcg errno mkdir "$MNT/a/cgroup.procs")"
eq "mkdir named like an absent file is allowed" "OK" "$(mcg errno mkdir "$MNT/a/cgroup.kill.x")"
eq "a name with a newline: EINVAL" "EINVAL" "$(mcg errno mkdir "$MNT/a/x
y")"
eq "a name of 256 bytes: ENAMETOOLONG" "ENAMETOOLONG" "$(mcg errno mkdir "$MNT/a/$(head -c 256 /dev/zero | tr '\0' n)")"
eq "a name of 255 bytes" "OK" "$(mcg errno mkdir "$MNT/a/$(head -c 255 /dev/zero | tr '\0' n)")"
eq "other characters are allowed" "OK" "$(mcg errno mkdir "$MNT/a/sp ace:*?")"
eq "mkdir in a missing directory: ENOENT" "ENOENT" "$(mcg errno mkdir "$MNT/nope/x")"
eq "cgroup.stat counts live descendants" "nr_descendants 4" "$(grep nr_descendants "$MNT/cgroup.stat" | head -n1)"
eq "directory nlink: 2 + children" "5" "$(stat -c %h "$MNT/a")"

eq "rmdir with a child: EBUSY" "EBUSY" "$(mcg errno rmdir "$MNT/a")"
eq "rmdir of a missing cgroup: ENOENT" "ENOENT" "$(mcg errno rmdir "$MNT/a/missing")"
eq "rmdir of a file: ENOTDIR" "ENOTDIR" "$(mcg errno rmdir "$MNT/a/cgroup.procs")"
eq "rmdir of the root: EBUSY" "EBUSY" "$(mcg errno rmdir "$MNT")"
for d in "$MNT/a/cgroup.kill.x" "$MNT/a/$(head -c 255 /dev/zero | tr '\0' n)" "$MNT/a/sp ace:*?"; do
	rmdir "$d"
done
echo 100M > "$MNT/a/memory.max"
eq "rmdir of an empty cgroup" "OK" "$(mcg errno rmdir "$MNT/a")"
ok "rmdir: gone" test ! -e "$MNT/a"
eq "mkdir of the same name at once" "OK" "$(mcg errno mkdir "$MNT/a")"
eq "a new cgroup, not the old one" "max" "$(cat "$MNT/a/memory.max")"
eq "cgroup.stat after rmdir" "nr_descendants 1" "$(grep nr_descendants "$MNT/cgroup.stat" | head -n1)"
for i in $(seq 1 40); do
	[ "$(sed -n 's/^nr_dying_descendants //p' "$MNT/cgroup.stat")" = 0 ] && break
	sleep 0.05
done
eq "a removed cgroup with nothing charged stops dying" "nr_dying_descendants 0" "$(grep nr_dying_descendants "$MNT/cgroup.stat")"

# what kernfs has no operation for
eq "creating a file: EACCES" "EACCES" "$(mcg errno creat "$MNT/a/newfile")"
eq "mknod: EPERM" "EPERM" "$(mcg errno mknod "$MNT/a/fifo")"
eq "unlink of a control file: EPERM" "EPERM" "$(mcg errno unlink "$MNT/a/memory.max")"
eq "rename of a control file: EPERM" "EPERM" "$(mcg errno rename "$MNT/a/memory.max" "$MNT/a/memory.maxx")"
eq "rename of a cgroup: EPERM" "EPERM" "$(mcg errno rename "$MNT/a" "$MNT/b")"
eq "symlink: EPERM" "EPERM" "$(mcg errno symlink /tmp "$MNT/a/link")"
eq "hard link: EPERM" "EPERM" "$(mcg errno link "$MNT/a/memory.max" "$MNT/a/hard")"
eq "unlink of a cgroup: EISDIR" "EISDIR" "$(mcg errno unlink "$MNT/a")"

# hierarchy limits (cgroup_check_hierarchy_limits)
echo 0 > "$MNT/a/cgroup.max.depth"
eq "max.depth 0: no children" "EAGAIN" "$(mcg errno mkdir "$MNT/a/x")"
echo 1 > "$MNT/a/cgroup.max.depth"
eq "max.depth 1: children" "OK" "$(mcg errno mkdir "$MNT/a/x")"
eq "max.depth 1: no grandchildren" "EAGAIN" "$(mcg errno mkdir "$MNT/a/x/y")"
echo max > "$MNT/a/cgroup.max.depth"
echo 1 > "$MNT/a/cgroup.max.descendants"
eq "max.descendants 1 with one: EAGAIN" "EAGAIN" "$(mcg errno mkdir "$MNT/a/z")"
eq "max.descendants counts grandchildren too" "EAGAIN" "$(mcg errno mkdir "$MNT/a/x/y")"
echo 0 > "$MNT/a/cgroup.max.descendants"
eq "lowering below the count removes nothing" "OK" "$(test -d "$MNT/a/x" && echo OK)"
rmdir "$MNT/a/x"
echo 1 > "$MNT/a/cgroup.max.descendants"
eq "max.descendants 1 after rmdir" "OK" "$(mcg errno mkdir "$MNT/a/z")"
echo max > "$MNT/a/cgroup.max.descendants"
echo 2 > "$MNT/cgroup.max.depth"
eq "the root's max.depth applies below" "EAGAIN" "$(mcg errno mkdir "$MNT/a/z/deep")"
echo max > "$MNT/cgroup.max.depth"

# cgroup.subtree_control (docs/kernel-interface.md §6)
sc() { mcg errno write "$1/cgroup.subtree_control" "$2"; }
eq "'memory' without +/-: EINVAL" "EINVAL" "$(sc "$MNT/a" memory)"
eq "+foo: EINVAL" "EINVAL" "$(sc "$MNT/a" +foo)"
eq "+cpu (known, not available): ENOENT" "ENOENT" "$(sc "$MNT/a" +cpu)"
eq "-cpu (not enabled): nothing to do" "OK" "$(sc "$MNT/a" -cpu)"
eq "+memory -memory: nothing to do" "OK" "$(sc "$MNT/a" "+memory -memory")"
eq "  spaces around: ok" "OK" "$(sc "$MNT/a" "  +memory  ")"
eq "+memory enabled" "memory" "$(cat "$MNT/a/cgroup.subtree_control")"
eq "the child sees it" "memory" "$(cat "$MNT/a/z/cgroup.controllers")"
ok "the child has memory.max" test -e "$MNT/a/z/memory.max"
eq "+memory twice: nothing to do" "OK" "$(sc "$MNT/a" +memory)"
mkdir "$MNT/a/z/w" "$MNT/a/z/w/v"
eq "+memory where the parent has it" "OK" "$(sc "$MNT/a/z" +memory)"
ok "the grandchild has memory files" test -e "$MNT/a/z/w/memory.max"
eq "+memory below a cgroup without it: ENOENT" "ENOENT" "$(sc "$MNT/a/z/w/v" +memory)"
eq "-memory while a child has it: EBUSY" "EBUSY" "$(sc "$MNT/a" -memory)"
eq "the root's -memory while a child has it: EBUSY" "EBUSY" "$(sc "$MNT" -memory)"
sc "$MNT/a/z" -memory >/dev/null
eq "-memory" "OK" "$(sc "$MNT/a" -memory)"
ok "-memory: the child's memory files are gone" test ! -e "$MNT/a/z/memory.max"
eq "cgroup.stat: nr_subsys_memory without memory" "nr_subsys_memory 0" "$(grep nr_subsys_memory "$MNT/a/z/cgroup.stat")"
eq "cgroup.stat: nr_subsys_memory of the root" "nr_subsys_memory 2" "$(grep nr_subsys_memory "$MNT/cgroup.stat")"
rmdir "$MNT/a/z/w/v" "$MNT/a/z/w" "$MNT/a/z"

# a child directory named like a memory file: +memory cannot add the file
mkdir -p "$MNT/n/c/memory.max"
eq "+memory over a directory named memory.max: EEXIST" "EEXIST" "$(sc "$MNT/n" +memory)"
rmdir "$MNT/n/c/memory.max"
eq "+memory once it is gone" "OK" "$(sc "$MNT/n" +memory)"
sc "$MNT/n" -memory >/dev/null
rmdir "$MNT/n/c" "$MNT/n"

# threaded mode (cgroup.type)
mkdir -p "$MNT/t/x" "$MNT/t/y/sub"
echo threaded > "$MNT/t/x/cgroup.type"
eq "threaded" "threaded" "$(cat "$MNT/t/x/cgroup.type")"
eq "the parent becomes a thread root" "domain threaded" "$(cat "$MNT/t/cgroup.type")"
eq "its other children are invalid domains" "domain invalid" "$(cat "$MNT/t/y/cgroup.type")"
eq "threaded twice: nothing to do" "OK" "$(mcg errno write "$MNT/t/x/cgroup.type" threaded)"
mkdir "$MNT/t/x/new"
eq "a new child of a threaded cgroup is an invalid domain" "domain invalid" "$(cat "$MNT/t/x/new/cgroup.type")"
echo threaded > "$MNT/t/x/new/cgroup.type"
eq "... until made threaded" "threaded" "$(cat "$MNT/t/x/new/cgroup.type")"
eq "a thread root cannot enable memory: EOPNOTSUPP" "EOPNOTSUPP" "$(sc "$MNT/t" +memory)"
eq "an invalid domain has no memory to enable: ENOENT" "ENOENT" "$(sc "$MNT/t/y" +memory)"
eq "no memory controller in a threaded cgroup" "" "$(cat "$MNT/t/x/cgroup.controllers")"
ok "a threaded child of the root loses its memory files" test ! -e "$MNT/t/x/memory.max"
eq "reading cgroup.procs of a threaded cgroup: EOPNOTSUPP" "EOPNOTSUPP" "$(mcg errno read "$MNT/t/x/cgroup.procs")"
eq "cgroup.threads of a threaded cgroup" "OK" "$(mcg errno read "$MNT/t/x/cgroup.threads")"
sc "$MNT/a" +memory >/dev/null
mkdir "$MNT/a/m"
eq "threaded below a cgroup with memory enabled: EOPNOTSUPP" "EOPNOTSUPP" "$(mcg errno write "$MNT/a/m/cgroup.type" threaded)"
eq "threaded with memory enabled in itself: EOPNOTSUPP" "EOPNOTSUPP" "$(mcg errno write "$MNT/a/cgroup.type" threaded)"
rmdir "$MNT/t/x/new" "$MNT/t/x"
eq "the last threaded child gone: a domain again" "domain" "$(cat "$MNT/t/cgroup.type")"
eq "... and its other child valid again" "domain" "$(cat "$MNT/t/y/cgroup.type")"

# a removed cgroup's file through an fd opened before
exec 5<"$MNT/t/y/sub/cgroup.max.depth"
rmdir "$MNT/t/y/sub"
eq "write after rmdir: ENODEV" "ENODEV" "$( (echo 1 >/proc/self/fd/5) 2>&1 | grep -o 'No such device' | sed 's/No such device/ENODEV/')"
exec 5<&-

# fs.root_subtree_control=: a fresh cgroup2 mount
umount_fs
mount_fs -o root_subtree_control=
eq "empty root subtree_control" "" "$(cat "$MNT/cgroup.subtree_control")"
mkdir "$MNT/a"
ok "no memory files in a child" test ! -e "$MNT/a/memory.current"
eq "root +memory" "OK" "$(sc "$MNT" +memory)"
ok "+memory: the existing child gets them" test -e "$MNT/a/memory.current"
