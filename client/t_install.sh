#!/usr/bin/env bash
# The DESTDIR install test: meson install into a temporary directory, then
# every file a package ships must be there, the unit must name the
# installed daemon and configuration, and a program must build against the
# installed header and library through the installed pkg-config file
# (shared and static) and run.
#
# usage: t_install.sh MESON BUILDDIR LIBDIR INCLUDEDIR EXPECTED-PATH...
set -u
meson=$1 build=$2 libdir=$3 includedir=$4
shift 4

dest=$(mktemp -d "${TMPDIR:-/tmp}/memcgfs-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

if "$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$dest.log" 2>&1; then
	pass "meson install --destdir"
else
	fail "meson install --destdir"
	sed 's/^/#   /' "$dest.log"
fi
rm -f "$dest.log"

for f in "$@"; do
	if [ -e "$dest$f" ] || [ -L "$dest$f" ]; then
		pass "installed: $f"
	else
		fail "installed: $f"
	fi
done

# every installed file is one we expect
extra=$(cd "$dest" && find . \( -type f -o -type l \) | sed 's/^\.//' | sort | while read -r f; do
	found=
	for e in "$@"; do [ "$e" = "$f" ] && found=1 && break; done
	case $f in */libmemcgfs.so.*.*) found=1 ;; esac	# the versioned file of the soname link
	[ -n "$found" ] || echo "$f"
done)
# (another file is not a failure: it may be new; say so, to add it above)
[ -z "$extra" ] || printf '# also installed (not in the expected list): %s\n' $extra

for f in "$@"; do
	case $f in
	*/bin/*) [ -x "$dest$f" ] && pass "executable: $f" || fail "executable: $f" ;;
	*.service)
		grep -q "^ExecStart=.*/bin/memcgfs -f -o config=.*/memcgfs/memcgfs.ini /run/memcgfs$" "$dest$f" &&
			pass "the unit runs the installed memcgfs with the installed memcgfs.ini" ||
			fail "the unit runs the installed memcgfs with the installed memcgfs.ini"
		grep -q "^Type=notify$" "$dest$f" && pass "the unit waits for READY=1" ||
			fail "the unit waits for READY=1"
		# systemd-analyze verify works without a running systemd.  It
		# requires ExecStart's binary: a copy of the unit names the staged
		# one (the man pages are checked above, as installed files).
		if command -v systemd-analyze >/dev/null; then
			mkdir -p "$dest.unit"
			sed "s|^ExecStart=|&$dest|" "$dest$f" >"$dest.unit/memcgfs.service"
			out=$(systemd-analyze verify --man=no "$dest.unit/memcgfs.service" 2>&1)
			rm -rf "$dest.unit"
			[ -z "$out" ] && pass "systemd-analyze verify" ||
				{ fail "systemd-analyze verify"; echo "$out" | sed 's/^/#   /'; }
		elif [ -n "${CI:-}" ]; then
			fail "systemd-analyze is installed (Debian: systemd), CI checks the unit with it"
		else
			echo "# systemd-analyze not installed (Debian: systemd): the unit is not verified"
		fi
		;;
	*/mount.fuse.memcgfs)
		t=$(readlink "$dest$f")
		case $t in */mount.fuse3) pass "mount.fuse.memcgfs -> $t" ;; *) fail "mount.fuse.memcgfs -> $t" ;; esac
		;;
	*/completions/memcgctl)
		bash -n "$dest$f" && bash -c '. "$1"; complete -p memcgctl' _ "$dest$f" >/dev/null &&
			pass "bash completion loads" || fail "bash completion loads"
		;;
	esac
done

# a client built from the installed files only
cc=${CC:-cc}
san=${SANITIZE:-}	# the build's -fsanitize=..., if any
cat >"$dest/client.c" <<'C'
#include <libmemcgfs.h>
#include <stdio.h>
int main(void)
{
	unsigned int gfp;
	char buf[64];

	if (memcgfs_gfp_parse("GFP_KERNEL_ACCOUNT", &gfp) || gfp != MEMCGFS_GFP_KERNEL_ACCOUNT)
		return 1;
	memcgfs_gfp_format(buf, sizeof(buf), gfp);
	puts(buf);
	return 0;
}
C
if command -v pkg-config >/dev/null && command -v "$cc" >/dev/null; then
	export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$dest$libdir/pkgconfig
	flags=$(pkg-config --cflags --libs memcgfs 2>&1)
	case $flags in *-lmemcgfs*) pass "pkg-config memcgfs: $flags" ;; *) fail "pkg-config memcgfs: $flags" ;; esac
	if "$cc" -Wall -Wextra -Werror $san -o "$dest/client" "$dest/client.c" $(pkg-config --cflags --libs memcgfs) 2>"$dest/cc.log" &&
		[ "$(LD_LIBRARY_PATH=$dest$libdir "$dest/client")" = GFP_KERNEL_ACCOUNT ]; then
		pass "a client builds with the installed header, pkg-config and libmemcgfs.so, and runs"
	else
		fail "a client builds with the installed header, pkg-config and libmemcgfs.so, and runs"
		sed 's/^/#   /' "$dest/cc.log"
	fi
	if "$cc" -Wall -Wextra -Werror $san -o "$dest/client-static" "$dest/client.c" \
		$(pkg-config --cflags memcgfs) "$dest$libdir/libmemcgfs.a" $(pkg-config --static --libs-only-other memcgfs) 2>"$dest/cc.log" &&
		[ "$("$dest/client-static")" = GFP_KERNEL_ACCOUNT ]; then
		pass "... and with libmemcgfs.a"
	else
		fail "... and with libmemcgfs.a"
		sed 's/^/#   /' "$dest/cc.log"
	fi
	nm -D --defined-only "$dest$libdir/libmemcgfs.so" | awk '{ print $3 }' | grep -v '^memcgfs_' | grep -v '^MEMCGFS_0$' >"$dest/syms"
	if [ ! -s "$dest/syms" ]; then
		pass "libmemcgfs.so exports only memcgfs_* symbols"
	else
		fail "libmemcgfs.so exports only memcgfs_* symbols"
		sed 's/^/#   /' "$dest/syms"
	fi
else
	fail "pkg-config and a C compiler to build a client"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
