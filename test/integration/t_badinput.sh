#!/usr/bin/env bash
# Bad input, named (issue 7): every memcgfs.ctl request, ioctl batch and
# writable cgroup file fed unknown words, missing and extra arguments,
# negative, zero, overflowing and huge sizes, bad flags, NUL and non-UTF-8
# bytes, lines over the limit, stale/double/foreign handles, a cache freed
# with another cache's handle.  Each case must fail with its errno (the
# kernel's for the cgroup files, docs/design.md's protocol for memcgfs.ctl) and
# change nothing: memory.current, memory.stat and memory.events of the
# cgroups that hold charges, the root's memory.stat, slabinfo, every handle
# the test holds (still live, of its kind; the stale ones still stale) and
# memcgfs.check are the same after as before.  Then racing frees: two
# processes free the same handles at once (ioctl, text, a foreign user):
# exactly one free of each succeeds, the other gets EINVAL (EPERM for the
# foreigner), and the counters come back exactly.
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
mount_fs -o memory=128M
CTL=$MNT/memcgfs.ctl
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
OTHER="setpriv --reuid=65533 --regid=65533 --clear-groups"
mkdir -p "$MNT/a/b" "$MNT/a/e" "$MNT/p" "$MNT/q" "$MNT/w"
echo +memory >"$MNT/a/cgroup.subtree_control"
echo +memory >"$MNT/a/e/cgroup.subtree_control"	# a child of a with +memory: -memory in a is EBUSY
echo 1M >"$MNT/q/memory.max"

# in CGROUP CMD...: run CMD in a shell that moved itself into CGROUP
run_in() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' _ "$MNT/$cg" "$@"
}
# first word of each reply line: OK or the errno name
handles() { head -n1 | cut -d' ' -f3-; }

# ---- what the bad input must leave alone ----
K=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmalloc 2312 GFP_KERNEL_ACCOUNT x4" | handles)
"$MCGTOOL" ctl "$CTL" "kmem_cache_create bi_one 200 SLAB_ACCOUNT" "kmem_cache_create bi_two 200 SLAB_ACCOUNT" >/dev/null
C1=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmem_cache_alloc bi_one x3" | handles)
C2=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmem_cache_alloc bi_two x2" | handles)
P=$(run_in a/b "$MCGTOOL" ctl "$CTL" "alloc_pages file x2" | handles)
N1=$($NOBODY "$MCGTOOL" ctl "$CTL" "kmalloc 100" | handles)
$NOBODY "$MCGTOOL" ctl "$CTL" "kmem_cache_create bi_nobody 64" >/dev/null
S=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmalloc 64 GFP_KERNEL_ACCOUNT" "alloc_pages file" "kmem_cache_alloc bi_one" | cut -d' ' -f3 | tr '\n' ' ')
set -- $S
S1=$1 S2=$2 S3=$3
"$MCGTOOL" ctl "$CTL" "kfree $S1" "free_pages $S2" "kmem_cache_free bi_one $S3" >/dev/null
set -- $K
K1=$1 K2=$2
set -- $C1
C11=$1
set -- $C2
C21=$1
set -- $P
P1=$1
match "the held handles" "^[0-9a-f]{16}( [0-9a-f]{16}){3}$" "$K"
ok "... of every kind" test -n "$C11" -a -n "$C21" -a -n "$P1" -a -n "$N1" -a -n "$S3"
bash -c 'echo $$ > "$1/p/cgroup.procs" && exec sleep 600' _ "$MNT" &
SLEEPER=$!
for i in $(seq 1 100); do grep -qx "$SLEEPER" "$MNT/p/cgroup.procs" && break; sleep 0.05; done
ok "a process in p" grep -qx "$SLEEPER" "$MNT/p/cgroup.procs"

# probe: each held handle is live and of its kind, each stale one stale
# (a free of the wrong kind names what the handle is and frees nothing)
PROBE=()
for h in $K $C1 $C2 $N1; do PROBE+=("free_pages $h"); done
for h in $P; do PROBE+=("kfree $h"); done
for h in $S1 $S2 $S3; do PROBE+=("kfree $h"); done
# snap: the state into $NOW (the cgroups' counters, the held handles, the
# checker) and $MACH (the root's memory.stat and slabinfo: what the machine
# holds); two forks (a case costs a few)
SNAP_FILES=()
for cg in a/b a a/e; do
	for f in memory.current memory.stat memory.events; do SNAP_FILES+=("$MNT/$cg/$f"); done
done
snap() {
	local line
	NOW=$("$MCGTOOL" ctl "$CTL" drain "${PROBE[@]}"; "$MCGTOOL" cats "${SNAP_FILES[@]}" \
		"$MNT/memcgfs.check" "$MNT/memory.stat" "$MNT/slabinfo")
	MACH="== ${NOW#*"== $MNT/memory.stat"}"
	NOW=${NOW%%"== $MNT/memory.stat"*}
	# the root's event counters (reclaim scans) are not what the machine holds
	line=$(printf '%s\n' "$MACH" | grep -Ev '^(pg|workingset|thp|zswp|swpin|swpout)')
	MACH=$line
}
# first word of each line, space-joined (builtins)
words() {
	local line out=
	while IFS= read -r line; do out+="${out:+ }${line%% *}"; done <<<"$1"
	printf %s "$out"
}
# The ENOMEM cases below fill q up to its memory.max and roll back: SLUB
# keeps the slabs (and their objcg vectors) it got on the way, as the
# kernel's does.  Run them once first, so that the slab caches are warm.
for r in "alloc_pages file order=10 x1024" "kmalloc 4M GFP_KERNEL_ACCOUNT x1024" \
	"kmalloc 8192 GFP_KERNEL_ACCOUNT x200"; do
	run_in q "$MCGTOOL" ctl "$CTL" "$r" >/dev/null
done
CASES=0
snap
SNAP=$NOW SNAP_MACH=$MACH
match "probe: a live kmalloc handle" "handle $K1 is a kmalloc object" "$SNAP"
match "probe: a live page handle" "handle $P1 is a page handle" "$SNAP"
match "probe: a stale handle" "stale or unknown handle $S3" "$SNAP"
# expect DESCRIPTION EXPECTED ACTUAL [FILE-BEFORE FILE-AFTER]: the errno,
# and nothing changed since the last snapshot (with $LOOSE set, the
# machine's slab caches may: SLUB keeps the slabs an allocation rolled back
# got, as the kernel's does)
expect() {
	local why=
	CASES=$((CASES + 1))
	snap
	[ "$2" = "$3" ] || why="expected $2, got $3"
	[ "$NOW" = "$SNAP" ] || why="$why${why:+; }the state changed"
	[ -n "${LOOSE:-}" ] || [ "$MACH" = "$SNAP_MACH" ] || why="$why${why:+; }the machine changed"
	[ "${4-}" = "${5-}" ] || why="$why${why:+; }the file changed: '$4' -> '$5'"
	if [ -z "$why" ]; then
		pass "$1: $2, nothing changed"
	else
		fail "$1: $2, nothing changed"
		echo "#   $why"
		diff <(printf '%s\n' "$SNAP" "$SNAP_MACH") <(printf '%s\n' "$NOW" "$MACH") | head -n 8 | sed 's/^/#   /'
	fi
	SNAP=$NOW SNAP_MACH=$MACH
}
# same DESCRIPTION: the cgroups' counters, handles and checker as at $BASE
same() {
	snap
	if [ "$NOW" = "$BASE" ]; then
		pass "$1"
	else
		fail "$1"
		diff <(printf '%s\n' "$BASE") <(printf '%s\n' "$NOW") | head -n 8 | sed 's/^/#   /'
	fi
}

# ---- (i) memcgfs.ctl: text requests ----
LONG_NAME=$(printf 'n%.0s' $(seq 1 64))
LONG_SITE=$(printf 's%.0s' $(seq 1 40))
PAD4096=$(printf 'drain%4090s' '')		# + "\n": 4096 bytes, the limit
PAD4097=$(printf 'drain%4091s' '')		# + "\n": 4097
MANY=$(for i in $(seq 1 1025); do printf '%s ' "$K1"; done)
while IFS='|' read -r want who req; do
	[ -z "$want" ] && continue
	case $who in
	b) got=$(run_in a/b "$MCGTOOL" ctlx "$CTL" "$req") ;;
	q) got=$(run_in q "$MCGTOOL" ctlx "$CTL" "$req") ;;
	nobody) got=$($NOBODY "$MCGTOOL" ctlx "$CTL" "$req") ;;
	other) got=$($OTHER "$MCGTOOL" ctlx "$CTL" "$req") ;;
	*) got=$("$MCGTOOL" ctlx "$CTL" "$req") ;;
	esac
	if [ "$who" = q ]; then
		LOOSE=1 expect "ctl '${req:0:60}'" "$want" "$(words "$got")"
	else
		expect "ctl '${req:0:60}'" "$want" "$(words "$got")"
	fi
done <<TABLE
EINVAL|b|bogus\n
EINVAL|b|KMALLOC 64\n
EINVAL|b|kmalloc64\n
EINVAL|b|Kfree $K1\n
EINVAL|b|kmalloc\n
EINVAL|b|kfree\n
EINVAL|b|free_pages\n
EINVAL|b|kmem_cache_create\n
EINVAL|b|kmem_cache_create bi_new\n
EINVAL|b|kmem_cache_alloc\n
EINVAL|b|kmem_cache_free\n
EINVAL|b|kmem_cache_free bi_one\n
EINVAL|b|kmem_cache_destroy\n
EINVAL|b|alloc_pages\n
EINVAL|b|drain now\n
EINVAL|b|whoami me\n
EINVAL|b|kmem_cache_destroy bi_one bi_two\n
EINVAL|b|kmalloc 64 x2 x3\n
EINVAL|b|kmalloc 64 GFP_KERNEL GFP_KERNEL_ACCOUNT\n
EINVAL|b|kmalloc 64 site=a site=b\n
EINVAL|b|kmalloc 64 order=1\n
EINVAL|b|kmalloc 64 align=8\n
EINVAL|b|alloc_pages file order=1 order=2\n
EINVAL|b|alloc_pages file GFP_KERNEL\n
EINVAL|b|alloc_pages file site=x\n
EINVAL|b|kmem_cache_create bi_new 64 align=8 align=16\n
EINVAL|b|kmem_cache_create bi_new 64 SLAB_ACCOUNT SLAB_PANIC\n
EINVAL|b|kmem_cache_create bi_new 64 x2\n
EINVAL|b|kmem_cache_alloc bi_one order=1\n
EINVAL|b|kfree $K1 extra\n
EINVAL|b|kmalloc -1\n
EINVAL|b|kmalloc -64\n
EINVAL|b|kmalloc 64 x-1\n
EINVAL|b|alloc_pages file order=-1\n
EINVAL|b|kmem_cache_create bi_new -64\n
EINVAL|b|kmem_cache_create bi_new 64 align=-8\n
EINVAL|b|kfree -1\n
EINVAL|b|kmalloc 0\n
EINVAL|b|kmalloc 0K\n
EINVAL|b|kmalloc 64 x0\n
EINVAL|b|kmem_cache_create bi_new 0\n
EINVAL|b|kmem_cache_alloc bi_one x0\n
EINVAL|b|alloc_pages file x0\n
EINVAL|b|free_pages 0\n
EINVAL|b|kmem_cache_free bi_one 0\n
OK|b|kfree 0\n
EINVAL|b|kmalloc 18446744073709551616\n
EINVAL|b|kmalloc 18446744073709551615\n
EINVAL|b|kmalloc 17179869184G\n
EINVAL|b|kmalloc 99999999999999999999999\n
EINVAL|b|kmalloc 64 x18446744073709551617\n
EINVAL|b|kmalloc 64 x4294967297\n
EINVAL|b|alloc_pages file order=4294967296\n
EINVAL|b|kmem_cache_create bi_new 4294967360\n
EINVAL|b|kmem_cache_create bi_new 64 align=4294967296\n
EINVAL|b|kfree 10000000000000000\n
EINVAL|b|kmalloc 4194305\n
EINVAL|b|kmalloc 5M\n
EINVAL|b|kmalloc 1G\n
EINVAL|b|kmem_cache_create bi_new 4194305\n
EINVAL|b|kmem_cache_create bi_new 64 align=8M\n
EINVAL|b|kmalloc 64 x1025\n
EINVAL|b|alloc_pages file order=11\n
EINVAL|b|kmalloc 0x40\n
EINVAL|b|kmalloc 64KB\n
EINVAL|b|kmalloc 1.5K\n
EINVAL|b|kmalloc +64\n
EINVAL|b|kmalloc 64T\n
EINVAL|b|kmalloc 6 4\n
EINVAL|b|kmalloc 64 GFP_BOGUS\n
EINVAL|b|kmalloc 64 GFP_KERNEL|\n
EINVAL|b|kmalloc 64 |GFP_KERNEL\n
EINVAL|b|kmalloc 64 GFP_KERNEL||__GFP_ZERO\n
EINVAL|b|kmalloc 64 gfp_kernel\n
EINVAL|b|kmalloc 64 0x400000\n
EINVAL|b|kmalloc 64 SLAB_ACCOUNT\n
EINVAL|b|kmem_cache_create bi_new 64 SLAB_BOGUS\n
EINVAL|b|kmem_cache_create bi_new 64 SLAB_ACCOUNT|SLAB_BOGUS\n
EINVAL|b|kmem_cache_create bi_new 64 GFP_KERNEL\n
EINVAL|b|kmem_cache_create bi_new 64 align=3\n
EINVAL|b|kmem_cache_alloc bi_one GFP_BOGUS\n
EINVAL|b|alloc_pages bogus\n
EINVAL|b|alloc_pages ANON\n
EINVAL|b|kmalloc 64 site=\n
EINVAL|b|kmalloc 64 site=$LONG_SITE\n
EINVAL|b|kmem_cache_create $LONG_NAME 64\n
ENOENT|b|kmem_cache_alloc nosuch\n
EPERM|b|kmem_cache_alloc mem_cgroup\n
ENOENT|b|kmem_cache_free nosuch $C11\n
EPERM|b|kmem_cache_free mem_cgroup $C11\n
EEXIST|b|kmem_cache_create bi_one 64\n
EEXIST|b|kmem_cache_create kmalloc-64 64\n
EEXIST|b|kmem_cache_create mem_cgroup 64\n
ENOENT|b|kmem_cache_destroy nosuch\n
EPERM|b|kmem_cache_destroy kmalloc-64\n
EPERM|b|kmem_cache_destroy mem_cgroup\n
EBUSY|b|kmem_cache_destroy bi_one\n
EINVAL|b|kfree zz\n
EINVAL|b|kfree 0x12\n
EINVAL|b|kfree $S1\n
EINVAL|b|free_pages $S2\n
EINVAL|b|kmem_cache_free bi_one $S3\n
EINVAL|b|kfree $K1 $K1\n
EINVAL|b|kfree $K1 $K2 $K1\n
EINVAL|b|kfree $K1 $S1\n
EINVAL|b|kfree $K2 $P1\n
EINVAL|b|kfree $P1\n
EINVAL|b|free_pages $K1\n
EINVAL|b|free_pages $C11\n
EINVAL|b|free_pages $P1 $P1\n
EINVAL|b|kmem_cache_free bi_two $C11\n
EINVAL|b|kmem_cache_free bi_one $C21\n
EINVAL|b|kmem_cache_free bi_one $C11 $C21\n
EINVAL|b|kmem_cache_free bi_one $K1\n
EINVAL|b|kmem_cache_free kmalloc-64 $C11\n
EINVAL|b|kmem_cache_free kmalloc-cg-4k $C11\n
EINVAL|b|kmem_cache_free bi_one $P1\n
EINVAL|b|kmem_cache_free bi_one $C11 $C11\n
EINVAL|b|kfree $MANY\n
EPERM|nobody|kfree $K1\n
EPERM|nobody|kfree $N1 $K1\n
EPERM|nobody|kfree $K1 bad!handle\n
EINVAL|nobody|kfree bad!handle $K1\n
EPERM|nobody|free_pages $P1 zz\n
EPERM|nobody|mark_page_accessed $P1 zz\n
EINVAL|b|mark_page_accessed $K1\n
EINVAL|b|mark_page_accessed zz $P1\n
EINVAL|b|mark_page_accessed\n
EPERM|nobody|kmem_cache_free bi_one $C11\n
EPERM|nobody|free_pages $P1\n
EPERM|nobody|kmem_cache_destroy bi_one\n
EPERM|nobody|kmem_cache_destroy bi_two\n
EPERM|other|kfree $N1\n
EPERM|other|kmem_cache_destroy bi_nobody\n
EINVAL|b|kmalloc 64\0
EINVAL|b|kmalloc 64\0\n
EINVAL|b|kmalloc\x0064\n
EINVAL|b|\0
EINVAL|b|kmalloc 64 \xff\n
EINVAL|b|kmalloc 64 site=caf\xc3\xa9\n
EINVAL|b|kfree \xc3\xa9\n
EINVAL|b|kmalloc 64 GFP_KERNEL\x80\n
EINVAL|b|drain\x01\n
EINVAL|b|drain\x7f\n
EINVAL|b|drain\x1b[0m\n
EINVAL|b|drain\r\n
EINVAL|b|drain\ndrain\n
EINVAL|b|drain\n\n
EINVAL|b|\n
EINVAL|b|   \n
EINVAL|b|\t\n
OK|b|$PAD4096\n
EINVAL|b|$PAD4097\n
ENOMEM|q|alloc_pages file order=10 x1024\n
ENOMEM|q|kmalloc 4M GFP_KERNEL_ACCOUNT x1024\n
ENOMEM|q|kmalloc 8192 GFP_KERNEL_ACCOUNT x200\n
TABLE
"$MCGTOOL" ctl "$CTL" drain >/dev/null
eq "ENOMEM over q's memory.max is all or nothing: q holds nothing" 0 "$(cat "$MNT/q/memory.current")"
sleep 0.3
snap; SNAP=$NOW SNAP_MACH=$MACH
LONG=$(head -c 70000 /dev/zero | tr '\0' a)
expect "ctl: a 70000-byte request" "EINVAL" "$(words "$(run_in a/b "$MCGTOOL" ctl "$CTL" "$LONG")")"
expect "ctl: a 4097-byte request of handles" "EINVAL" \
	"$(words "$("$MCGTOOL" ctl "$CTL" "kfree $(for i in $(seq 1 241); do printf '%s ' "$K1"; done)")")"
expect "ctl: an empty write does nothing (0 bytes)" "OK" "$(words "$("$MCGTOOL" ctlx "$CTL" '')")"
match "ctl: the reply of a refused request says why" "^EINVAL error EINVAL kmem_cache_free: .*|^EINVAL error EINVAL handle $C11 is an object of bi_one" \
	"$("$MCGTOOL" ctl "$CTL" "kmem_cache_free bi_two $C11")"
snap; SNAP=$NOW SNAP_MACH=$MACH

# ---- (ii) the ioctl batch ----
while read -r want who cs args; do
	[ -z "$want" ] && continue
	# shellcheck disable=SC2086
	case $who in
	b) got=$(run_in a/b "$MCGTOOL" ioctlcase "$CTL" "$cs" $args) ;;
	nobody) got=$($NOBODY "$MCGTOOL" ioctlcase "$CTL" "$cs" $args) ;;
	*) got=$("$MCGTOOL" ioctlcase "$CTL" "$cs" $args) ;;
	esac
	expect "ioctl $cs${args:+ ${args:0:40}}" "$want" "${got// /_}"
done <<TABLE
ioctl:ENOTTY b cmd-type
ioctl:ENOTTY b cmd-nr
ioctl:EINVAL b cmd-write-only
ioctl:EINVAL b cmd-read-only
ioctl:EINVAL b cmd-no-dir
ioctl:EINVAL b size-small
ioctl:EINVAL b size-odd
ioctl:EINVAL b size-over
ioctl:EINVAL b version-0
ioctl:EINVAL b version-2
ioctl:EINVAL b hdr-flags
ioctl:EINVAL b hdr-reserved
ioctl:EINVAL b nr-ops-0
ioctl:EINVAL b nr-ops-past-size
ioctl:EINVAL b nr-ops-max
done=0_failed=1_EINVAL b op-0
done=0_failed=1_EINVAL b op-unknown
done=0_failed=1_EINVAL b opflags
done=0_failed=1_EINVAL b kmalloc-size-0
done=0_failed=1_EINVAL b kmalloc-size-huge
done=0_failed=1_EINVAL b kmalloc-size-max
done=0_failed=1_EINVAL b kmalloc-size-over
done=0_failed=1_EINVAL b kmalloc-count-1025
done=0_failed=1_EINVAL b kmalloc-count-past-end
done=0_failed=1_EINVAL b kmalloc-slot-on-ops
done=0_failed=1_EINVAL b kmalloc-slot-past-end
done=0_failed=1_EINVAL b kmalloc-gfp
done=0_failed=1_EINVAL b kmalloc-site-unterminated
done=0_failed=1_EINVAL b kmalloc-site-space
done=0_failed=1_EINVAL b kmalloc-site-empty
done=0_failed=1_EINVAL b kmalloc-site-8bit
done=0_failed=1_EINVAL b pages-type
done=0_failed=1_EINVAL b pages-order
done=0_failed=1_EINVAL b kfree-count-0
done=0_failed=1_EINVAL b kfree-count-1025
done=0_failed=1_EINVAL b create-size-0
done=0_failed=1_EINVAL b create-size-huge
done=0_failed=1_EINVAL b create-align
done=0_failed=1_EINVAL b create-flags
done=0_failed=1_EINVAL b create-name-empty
done=0_failed=1_EINVAL b create-name-space
done=0_failed=1_EINVAL b create-name-long
done=0_failed=1_EINVAL b create-name-slot
done=0_failed=1_EINVAL b create-info-past-end
done=0_failed=1_EEXIST b create-exists bi_one
done=0_failed=1_EEXIST b create-exists kmalloc-64
done=0_failed=1_ENOENT b cache-alloc nosuch
done=0_failed=1_EPERM b cache-alloc mem_cgroup
done=0_failed=1_ENOENT b destroy nosuch
done=0_failed=1_EPERM b destroy kmalloc-64
done=0_failed=1_EBUSY b destroy bi_one
done=0_failed=1_EINVAL b whoami-count-0
done=0_failed=1_ERANGE b whoami-no-room
done=0_failed=1_EINVAL b kfree $S1
done=0_failed=1_EINVAL b kfree $K1 $K1
done=0_failed=1_EINVAL b kfree $K1 $S1
done=0_failed=1_EINVAL b kfree $P1
done=0_failed=1_EINVAL b kfree 0 $C11 $S3
done=0_failed=1_EINVAL b free-pages $K1
done=0_failed=1_EINVAL b free-pages 0
done=0_failed=1_EINVAL b free-pages $P1 $S2
done=0_failed=1_EINVAL b cache-free bi_two $C11
done=0_failed=1_EINVAL b cache-free bi_one $C11 $C21
done=0_failed=1_EINVAL b cache-free bi_one $K1
done=0_failed=1_EINVAL b cache-free kmalloc-64 $C11
done=0_failed=1_EINVAL b cache-free bi_one 0
done=0_failed=1_ENOENT b cache-free nosuch $C11
done=0_failed=1_EPERM nobody kfree $K1
done=0_failed=1_EPERM nobody cache-free bi_one $C11
done=0_failed=1_EPERM nobody free-pages $P1
done=1_failed=2_EINVAL_OK_EINVAL b two-bad-one-good $S1
TABLE
snap; SNAP=$NOW SNAP_MACH=$MACH

# ---- (iii) every writable cgroup file ----
# FILE|ERRNO|DATA (C escapes, one write): the file's content is the same after
E2BIG_DATA="max$(printf '%4094s' '')"	# 4097 bytes
OK_4096="max$(printf '%4093s' '')"	# 4096: the limit, accepted
while IFS='|' read -r file want data; do
	[ -z "$file" ] && continue
	case $file in
	*cgroup.procs | *cgroup.threads | *pressure) before= ;;	# other processes, decaying averages
	*) before=$(<"$MNT/$file") ;;
	esac
	if [ "$want" = "OK EBUSY" ]; then	# a second PSI trigger on the same fd
		got=$("$MCGTOOL" errno writex "$MNT/$file" "$data" "$data")
	else
		got=$("$MCGTOOL" errno writex "$MNT/$file" "$data")
	fi
	after=$before
	[ -n "$before" ] && after=$(<"$MNT/$file")
	expect "write $file '${data:0:40}'" "$want" "$(words "$got")" "$before" "$after"
done <<TABLE
$(for f in memory.min memory.low memory.high memory.max memory.swap.high memory.swap.max memory.zswap.max; do
	printf 'a/b/%s|EINVAL|%s\n' "$f" -1 "$f" abc "$f" 1.5G "$f" Max "$f" MAX "$f" 'max\t1' "$f" '100 200' \
		"$f" 1KB "$f" +1 "$f" '1 K' "$f" 0x "$f" '\xff' "$f" '1\xc3\xa9' "$f" 'x\0 1' "$f" '\x01'
	printf 'a/b/%s|E2BIG|%s\n' "$f" "$E2BIG_DATA"
	printf 'a/b/%s|OK|%s\n' "$f" "$(cat "$MNT/a/b/$f")"
done)
a/b/memory.max|OK|$OK_4096
a/b/memory.reclaim|EINVAL|max
a/b/memory.reclaim|EINVAL|-1
a/b/memory.reclaim|EINVAL|\n
a/b/memory.reclaim|EINVAL|abc
a/b/memory.reclaim|EINVAL|1M swappiness=201
a/b/memory.reclaim|EINVAL|1M swappiness=-1
a/b/memory.reclaim|EINVAL|1M swappiness=abc
a/b/memory.reclaim|EINVAL|1M swappiness=
a/b/memory.reclaim|EINVAL|1M bogus
a/b/memory.reclaim|EINVAL|1M swappiness=max extra
a/b/memory.reclaim|EINVAL|1M \xff
a/b/memory.reclaim|EINVAL|1.5M
a/b/memory.reclaim|EINVAL|1M swappiness=+5
a/b/memory.reclaim|EINVAL|1M swappiness=5\tswappiness=6
a/b/memory.reclaim|EINVAL|1M swappiness=000000000000000000000001
a/b/memory.reclaim|OK|100\tswappiness=10
a/b/memory.reclaim|OK|100\nswappiness=max
a/b/memory.reclaim|OK|100swappiness=-
a/b/memory.reclaim|E2BIG|$E2BIG_DATA
$(for f in memory.oom.group memory.zswap.writeback; do
	printf 'a/b/%s|EINVAL|%s\n' "$f" 2 "$f" -1 "$f" abc "$f" '\n' "$f" '0 1' "$f" '\xff' "$f" 1.0 "$f" '0\x01'
	printf 'a/b/%s|ERANGE|%s\n' "$f" 99999999999 "$f" 0x100000000
	printf 'a/b/%s|E2BIG|%s\n' "$f" "$E2BIG_DATA"
done)
a/b/memory.peak|E2BIG|$E2BIG_DATA
a/b/memory.swap.peak|E2BIG|$E2BIG_DATA
$(for f in a/b/memory.pressure a/b/io.pressure a/b/cpu.pressure memory.pressure; do
	printf '%s|EINVAL|%s\n' "$f" bogus "$f" 'some 0 1000000' "$f" 'some 1000 0' "$f" 'some 2000000 1000000' \
		"$f" 'some 1000 10000001' "$f" 'full -1 1000000' "$f" 'half 1000 1000000' "$f" '\xff' "$f" '\n'
	# the kernel's vsscanf() %u takes no sign (glibc's would: a 1 us window)
	printf '%s|EINVAL|%s\n' "$f" 'some +1000 1000000' "$f" 'some 1 -4294967295'
	printf '%s|OK EBUSY|%s\n' "$f" 'some 1000 1000000'
	# (Linux 6.4 dropped the 500 ms minimum window: root may set any 1 us .. 10 s)
	printf '%s|OK EBUSY|%s\n' "$f" 'some 1 1' "$f" 'some 10000 100000' "$f" 'full 50000 499999'
	printf '%s|E2BIG|%s\n' "$f" "$E2BIG_DATA"
done)
$(for f in p/cgroup.procs p/cgroup.threads cgroup.procs; do
	printf '%s|EINVAL|%s\n' "$f" abc "$f" -1 "$f" '1 2' "$f" '\n' "$f" '\xff' "$f" '1\n2' "$f" 1.0
	printf '%s|ERANGE|%s\n' "$f" 99999999999
	printf '%s|ESRCH|%s\n' "$f" 2147483647
	printf '%s|E2BIG|%s\n' "$f" "$E2BIG_DATA"
done)
a/cgroup.procs|EBUSY|$SLEEPER
$(for f in a/cgroup.subtree_control cgroup.subtree_control; do
	printf '%s|EINVAL|%s\n' "$f" memory "$f" +bogus "$f" '+memory -bogus' "$f" '*memory' "$f" '+ memory' \
		"$f" '+Memory' "$f" '\xff' "$f" '+memory\x01'
	printf '%s|ENOENT|%s\n' "$f" +cpu
	printf '%s|E2BIG|%s\n' "$f" "$E2BIG_DATA"
done)
a/cgroup.subtree_control|EBUSY|-memory
p/cgroup.subtree_control|EBUSY|+memory
a/e/cgroup.subtree_control|ENOENT|+cpu
a/e/cgroup.type|EINVAL|domain
a/e/cgroup.type|EINVAL|threaded x
a/e/cgroup.type|EINVAL|\n
a/e/cgroup.type|EINVAL|Threaded
a/e/cgroup.type|EOPNOTSUPP|threaded\0x
a/e/cgroup.type|EOPNOTSUPP|threaded
p/cgroup.type|EOPNOTSUPP|threaded
a/e/cgroup.type|E2BIG|$E2BIG_DATA
$(for f in a/cgroup.max.descendants a/cgroup.max.depth cgroup.max.depth; do
	printf '%s|ERANGE|%s\n' "$f" -1 "$f" 99999999999
	printf '%s|EINVAL|%s\n' "$f" abc "$f" Max "$f" '1 2' "$f" '\xff' "$f" '\n' "$f" 'x\0max'
	printf '%s|OK|%s\n' "$f" 'max\0junk'
	printf '%s|E2BIG|%s\n' "$f" "$E2BIG_DATA"
done)
a/e/cgroup.freeze|ERANGE|2
a/e/cgroup.freeze|ERANGE|-1
a/e/cgroup.freeze|ERANGE|99999999999
a/e/cgroup.freeze|EINVAL|abc
a/e/cgroup.freeze|EINVAL|\n
a/e/cgroup.freeze|EINVAL|\xff
a/e/cgroup.freeze|E2BIG|$E2BIG_DATA
a/e/cgroup.kill|ERANGE|0
a/e/cgroup.kill|ERANGE|2
a/e/cgroup.kill|ERANGE|-1
a/e/cgroup.kill|EINVAL|abc
a/e/cgroup.kill|EINVAL|\n
a/e/cgroup.kill|EINVAL|1 1
a/e/cgroup.kill|E2BIG|$E2BIG_DATA
a/e/cgroup.pressure|ERANGE|2
a/e/cgroup.pressure|ERANGE|-1
a/e/cgroup.pressure|EINVAL|abc
a/e/cgroup.pressure|EINVAL|\n
a/e/cgroup.pressure|E2BIG|$E2BIG_DATA
memory.reclaim|EINVAL|max
memory.reclaim|EINVAL|1M swappiness=201
memory.zswap.writeback|EINVAL|2
tracing_on|EINVAL|-1
tracing_on|EINVAL|abc
tracing_on|EINVAL|\n
tracing_on|EINVAL|1 1
tracing_on|E2BIG|$E2BIG_DATA
a/b/memory.current|EINVAL|0
a/b/memory.stat|EINVAL|0
a/b/memory.events|EINVAL|0
a/b/cgroup.events|EINVAL|0
a/b/cgroup.controllers|EINVAL|memory
a/b/cgroup.stat|EINVAL|0
slabinfo|EINVAL|0
memcgfs.check|EINVAL|ok
TABLE
# a user: the kernel's modes (EACCES at open)
for f in a/b/memory.max a/b/memory.reclaim a/b/cgroup.procs cgroup.subtree_control tracing_on; do
	expect "write $f as a user" "open:EACCES" "$($NOBODY "$MCGTOOL" errno write "$MNT/$f" 0)"
done
# an fd opened before rmdir: ENODEV (kernfs deactivated the node); its
# dying memcg goes away on its own, so this one checks the errno alone
mkdir "$MNT/a/z"
exec 9>"$MNT/a/z/memory.max"
rmdir "$MNT/a/z"
CASES=$((CASES + 1))
eq "write through an fd of a removed cgroup: ENODEV" "ENODEV" \
	"$( (echo 1M >&9) 2>&1 | grep -q 'No such device' && echo ENODEV || echo other)"
exec 9>&-
for i in $(seq 1 100); do
	[ "$(sed -n 's/^nr_dying_descendants //p' "$MNT/a/cgroup.stat")" = 0 ] && break
	sleep 0.05
done

# ---- racing frees ----
# race OP [CACHE] -- HANDLES: two processes free the same handles, one
# ioctl each, from one start line; each handle: exactly one OK, one EINVAL
race() {
	local op=$1 cache= go=$TMP/go.$RANDOM
	shift
	[ "$op" = cache ] && { cache=$1; shift; }
	rm -f "$go"
	MCG_GO=$go "$MCGTOOL" ioctlfree "$CTL" "$op" $cache "$@" >"$TMP/r1" &
	local p1=$!
	MCG_GO=$go "$MCGTOOL" ioctlfree "$CTL" "$op" $cache $(printf '%s\n' "$@" | tac) >"$TMP/r2" &
	local p2=$!
	sleep 0.2
	touch "$go"
	wait "$p1" "$p2"
	sort "$TMP/r1" "$TMP/r2" | awk '{ n[$1]++; r[$1] = r[$1] " " $2 }
		END { for (h in n) print r[h] }' | sed 's/^ //' | awk '{ print ($1 < $2) ? $1 " " $2 : $2 " " $1 }' | sort | uniq -c
}
snap; BASE=$NOW
for round in 1 2 3; do
	H=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmalloc 2312 GFP_KERNEL_ACCOUNT x200" | handles)
	eq "racing kfree, round $round: each of 200 handles freed exactly once, the other EINVAL" \
		"200 EINVAL OK" "$(race kfree $H | sed 's/^ *//')"
	same "... the counters exact"
done
H=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmem_cache_alloc bi_two x200" | handles)
eq "racing kmem_cache_free: each freed once, the other EINVAL" "200 EINVAL OK" "$(race cache bi_two $H | sed 's/^ *//')"
same "... the counters exact"
H=$(run_in a/b "$MCGTOOL" ctl "$CTL" "alloc_pages file x100" | handles)
eq "racing free_pages: each freed once, the other EINVAL" "100 EINVAL OK" "$(race pages $H | sed 's/^ *//')"
same "... the counters exact"
# text against ioctl: the text side's writes, one request each
H=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmalloc 64 GFP_KERNEL_ACCOUNT x200" | handles)
GO=$TMP/go.text
REQS=()
for h in $H; do REQS+=("kfree $h"); done
MCG_GO=$GO "$MCGTOOL" ioctlfree "$CTL" kfree $H >"$TMP/r1" &
R1=$!
(while [ ! -e "$GO" ]; do sleep 0.001; done; "$MCGTOOL" ctl "$CTL" "${REQS[@]}" >"$TMP/r2") &
R2=$!
sleep 0.2
touch "$GO"
wait "$R1" "$R2"
eq "text and ioctl frees racing: 200 OK in all" 200 "$(cat "$TMP/r1" "$TMP/r2" | grep -c ' OK$\|^OK ')"
eq "... 200 EINVAL in all" 200 "$(cat "$TMP/r1" "$TMP/r2" | grep -c ' EINVAL$\|^EINVAL ')"
same "... the counters exact"
# a foreign racer: another user's frees of root's handles never succeed
H=$(run_in a/b "$MCGTOOL" ctl "$CTL" "kmalloc 128 GFP_KERNEL_ACCOUNT x100" | handles)
GO=$TMP/go.foreign
MCG_GO=$GO "$MCGTOOL" ioctlfree "$CTL" kfree $H >"$TMP/r1" &
R1=$!
MCG_GO=$GO $NOBODY "$MCGTOOL" ioctlfree "$CTL" kfree $H >"$TMP/r2" &
R2=$!
sleep 0.2
touch "$GO"
wait "$R1" "$R2"
eq "a foreign racer: the owner frees all 100" 100 "$(grep -c ' OK$' "$TMP/r1")"
eq "... the foreigner gets EPERM (or EINVAL once freed), never OK" 0 "$(grep -c ' OK$' "$TMP/r2")"
eq "... and nothing else" 100 "$(grep -Ec ' (EPERM|EINVAL)$' "$TMP/r2")"
same "... the counters exact"

# frees racing memory.reclaim, which frees reclaimable objects itself (their
# handles go stale): no object is freed twice, w's counters come back to 0
H=$(run_in w "$MCGTOOL" ctl "$CTL" "kmalloc 2000 GFP_KERNEL_ACCOUNT|__GFP_RECLAIMABLE x500" | handles)
GO=$TMP/go.reclaim
MCG_GO=$GO "$MCGTOOL" ioctlfree "$CTL" kfree $H >"$TMP/r1" &
R1=$!
MCG_GO=$GO "$MCGTOOL" ioctlfree "$CTL" kfree $(printf '%s\n' $H | tac) >"$TMP/r2" &
R2=$!
(while [ ! -e "$GO" ]; do sleep 0.001; done; "$MCGTOOL" errno write "$MNT/w/memory.reclaim" 2M) >"$TMP/r3" &
R3=$!
sleep 0.2
touch "$GO"
wait "$R1" "$R2" "$R3"
eq "frees racing memory.reclaim: no handle freed twice" 0 \
	"$(sort "$TMP/r1" "$TMP/r2" | awk '$2 == "OK" { n[$1]++ } END { for (h in n) if (n[h] > 1) print h }' | wc -l)"
eq "... every result OK or EINVAL" 1000 "$(grep -Ec ' (OK|EINVAL)$' "$TMP/r1" "$TMP/r2" | awk -F: '{ s += $2 } END { print s }')"
"$MCGTOOL" ctl "$CTL" drain >/dev/null
eq "... w holds nothing" "0 0" "$(cat "$MNT/w/memory.current") $(sed -n 's/^slab //p' "$MNT/w/memory.stat")"
same "... the other cgroups' counters exact"

# ---- the held handles: all still there, each freed once now ----
OUT=$("$MCGTOOL" ctl "$CTL" "kfree $K" "kmem_cache_free bi_one $C1" "kmem_cache_free bi_two $C2" \
	"free_pages $P" "kmem_cache_destroy bi_one" "kmem_cache_destroy bi_two")
eq "every held handle survived the bad input and frees once" "OK OK OK OK OK OK" "$(words "$OUT")"
eq "nobody's handle and cache too" "OK OK" "$(words "$($NOBODY "$MCGTOOL" ctl "$CTL" "kfree $N1" "kmem_cache_destroy bi_nobody")")"
kill "$SLEEPER" 2>/dev/null
wait "$SLEEPER" 2>/dev/null
echo "# $CASES bad-input cases"
umount_fs
