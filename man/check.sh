#!/usr/bin/env bash
# The man pages render without a warning: groff's man macros with every
# warning on (-ww), man -l as a reader would run it, and mandoc -Tlint
# where installed.  Without groff and man (Debian: groff-base, man-db) the
# test skips, which CI counts as a failure.
set -u
n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

if ! command -v groff >/dev/null && ! command -v man >/dev/null && ! command -v mandoc >/dev/null; then
	if [ -n "${CI:-}" ]; then
		echo "Bail out! no groff, man or mandoc and CI is set: a skip is a failure"
		exit 1
	fi
	echo "1..0 # SKIP no groff, man or mandoc (Debian: groff-base, man-db)"
	exit 77
fi

for page in "$@"; do
	name=$(basename "$page")
	if command -v groff >/dev/null; then
		out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$out" ] && pass "groff -man -ww: $name" || { fail "groff -man -ww: $name"; echo "$out" | sed 's/^/#   /'; }
		text=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou "$page" 2>/dev/null)
		first=$(sed -n 's/^\.TH \([^ ]*\) .*/\1/p' "$page")
		case $text in *NAME*SYNOPSIS*DESCRIPTION*"SEE ALSO"*) pass "$name: NAME, SYNOPSIS, DESCRIPTION, SEE ALSO" ;;
		*) fail "$name: NAME, SYNOPSIS, DESCRIPTION, SEE ALSO" ;; esac
		printf '%s\n' "$text" | head -n1 | grep -q "^$first" && pass "$name: its header" || fail "$name: its header"
	fi
	if command -v man >/dev/null; then
		out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings=w -E UTF-8 -l "$page" 2>&1 >/dev/null)
		[ -z "$out" ] && pass "man -l: $name" || { fail "man -l: $name"; echo "$out" | sed 's/^/#   /'; }
	fi
	if command -v mandoc >/dev/null; then
		out=$(mandoc -Tlint -Wwarning "$page" 2>&1)
		[ -z "$out" ] && pass "mandoc -Tlint: $name" || { fail "mandoc -Tlint: $name"; echo "$out" | sed 's/^/#   /'; }
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
