#!/usr/bin/env bash
# docs/guide.md followed as written: every shell session of the guide runs
# in order against a mount of this build (the guide's /run/memcgfs is this
# test's mountpoint) and prints what the guide shows (guide.py), its C
# examples build with the guide's compile lines, and its test-harness
# script ends by itself.  The guide stays true, or this fails.
. "$(dirname "$0")/lib.sh"

BUILD=$(cd "$(dirname "$MEMCGFS")/.." && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
command -v python3 >/dev/null || skip "no python3"

# The build tree without installing, as the guide's section 0 says; a
# sanitized build's library links only into a program built by the same
# compiler with the same -fsanitize, so the guide's cc is that (CC and
# SANITIZE, from meson).
mkdir -p "$TMP/work/bin"
set -- ${CC:-cc}	# (the wrapper is cc too: the compiler by its full path)
printf '#!/bin/sh\nexec %s %s %s "$@"\n' "$(command -v "$1")" "${*:2}" "${SANITIZE:-}" >"$TMP/work/bin/cc"
chmod 755 "$TMP/work/bin/cc"
# the tool under test of the guide's harness (section 9): here, one that
# waits to be stopped
printf '#!/bin/sh\nexec sleep 300\n' >"$TMP/work/bin/your-oom-daemon"
chmod 755 "$TMP/work/bin/your-oom-daemon"
export PATH="$TMP/work/bin:$BUILD/fs:$BUILD/client:$PATH"
export PKG_CONFIG_PATH="$BUILD/meson-uninstalled" LD_LIBRARY_PATH="$BUILD/client"
export MEMCGFS_MOUNT=$MNT	# never another mount of this machine
export LC_ALL=C.UTF-8		# the tree's box-drawing glyphs

python3 "$(dirname "$0")/guide.py" "$SRC/docs/guide.md" "$MNT" "$TMP/work" | sed '/^1\.\.[0-9]*$/d' >"$TMP/guide.tap"
while IFS= read -r line; do
	case $line in
	"ok "*) pass "${line#ok * - }" ;;
	"not ok "*) fail "${line#not ok * - }" ;;
	*) echo "$line" ;;
	esac
done <"$TMP/guide.tap"
finish
