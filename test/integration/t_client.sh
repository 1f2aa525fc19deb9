#!/usr/bin/env bash
# libmemcgfs through a real mount: libmemcgfs-test (client/meson.build
# builds it from libmemcgfs_test.c, linked with the shared library) finds
# the mount, runs every operation as a text request and in batches cut
# across several ioctls, checks the negative errnos and what memory.stat
# shows, shares one handle between threads and tries another user's
# handle.  Each of its "ok"/"not ok" lines is one check here.
. "$(dirname "$0")/lib.sh"

# the build tree's client/ (test/integration/meson.build passes MEMCGFS only)
BUILD=$(cd "$(dirname "$MEMCGFS")/.." && pwd)
LIBTEST=${LIBMEMCGFS_TEST:-$BUILD/client/libmemcgfs-test}
if [ ! -x "$LIBTEST" ]; then
	fail "libmemcgfs-test is built ($LIBTEST)"
	finish
fi

mount_fs -o memory=128M
mkdir "$MNT/a"

"$LIBTEST" "$MNT" a >"$TMP/out" 2>&1
ST=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) pass "${line#ok - }" ;;
	"not ok - "*) fail "${line#not ok - }" ;;
	*) echo "# $line" ;;
	esac
done <"$TMP/out"
eq "libmemcgfs-test exits 0" 0 "$ST"
ok "it ran every check (at least 70)" test "$(grep -c '^ok - ' "$TMP/out")" -ge 70

# the shared library is what it linked
match "libmemcgfs-test uses libmemcgfs.so.0" "libmemcgfs\.so\.0 => .*client/libmemcgfs\.so\.0" "$(ldd "$LIBTEST")"

umount_fs
