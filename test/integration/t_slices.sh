#!/usr/bin/env bash
# fs.user_slices: a non-root user's process first seen in the root goes to
# /user.slice/user-UID.slice, made then and owned by the user, who may make
# cgroups below it (delegation); root's processes stay where they are.
. "$(dirname "$0")/lib.sh"

id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
mount_fs -o memory=64M -o user_slices=true
chmod o+rx "$MNT" 2>/dev/null || true

who() { # USER: the reply to whoami from a shell of that user
	su "$1" -s /bin/bash -c "exec 3<>'$MNT/memcgfs.ctl'; echo whoami >&3; read -r r <&3; echo \"\$r\""
}

match "a user's process lands in its slice" "cgroup=/user.slice/user-65534.slice " "$(who nobody)"
eq "the slice is the user's" "nobody" "$(stat -c %U "$MNT/user.slice/user-65534.slice")"
eq "user.slice is root's" "root" "$(stat -c %U "$MNT/user.slice")"
eq "user.slice enables memory below it" "memory" "$(cat "$MNT/user.slice/cgroup.subtree_control")"
ok "the slice has memory files" test -e "$MNT/user.slice/user-65534.slice/memory.max"
eq "the user may make cgroups in its slice" "OK" \
	"$(su nobody -s /bin/bash -c "'$MCGTOOL' errno mkdir '$MNT/user.slice/user-65534.slice/app'")"
match "root's processes stay in the root" "cgroup=/ " "$(exec 3<>"$MNT/memcgfs.ctl"; echo whoami >&3; read -r r <&3; echo "$r")"
eq "the user's charges show in its slice" "OK" \
	"$(su nobody -s /bin/bash -c "exec 3<>'$MNT/memcgfs.ctl'; echo 'kmalloc 1000 GFP_KERNEL_ACCOUNT' >&3 && echo OK")"
echo drain > "$MNT/memcgfs.ctl"
match "slab charged to the slice" "^slab_unreclaimable [1-9]" "$(grep '^slab_unreclaimable ' "$MNT/user.slice/user-65534.slice/memory.stat")"
finish
