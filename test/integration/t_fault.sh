#!/usr/bin/env bash
# memcgfs.fault: fault injection on a live mount.  Root only; bad
# specifications refused with EINVAL and nothing armed; the N-th slab
# allocation failing gives one request ENOMEM and the next one succeeds;
# then a storm (5% of every page allocation, slab allocation, charge and
# daemon malloc failing) under several clients charging, freeing, creating
# caches, reading and writing files, making and removing cgroups, and
# dying: the daemon answers throughout, and once disarmed and everything is
# freed, the cgroups are empty and memcgfs.check holds (lib.sh, before the
# unmount).
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

mount_fs -o memory=64M -o cpus=2
[ -e "$MNT/memcgfs.fault" ] || skip "a build without fault injection (-Dfault_injection)"
F=$MNT/memcgfs.fault
CTL=$MNT/memcgfs.ctl
mkdir -p "$MNT/a"
echo +memory > "$MNT/a/cgroup.subtree_control"

eq "memcgfs.fault is root's, 0600" "600 0" "$(stat -c '%a %u' "$F")"
eq "disarmed at mount" "armed 0" "$(head -n1 "$F")"
eq "a user cannot read it" "open:EACCES" "$($NOBODY "$MCGTOOL" errno read "$F")"
eq "a user cannot write it" "open:EACCES" "$($NOBODY "$MCGTOOL" errno write "$F" "sites=slab")"

for bad in " " "bogus" "nth=1" "sites=" "sites=disk" "sites=slab nth=x" "sites=slab times=-2" \
	"sites=slab probability=101" "sites=slab task_filter=1" "off sites=slab" "sites=slab,"; do
	eq "'$bad' is refused: EINVAL" "EINVAL" "$(mcg errno write "$F" "$bad")"
done
eq "... and nothing was armed" "armed 0" "$(head -n1 "$F")"
eq "a NUL byte: EINVAL" "EINVAL" "$(mcg errno writex "$F" 'sites=slab\x00')"

# ctl_in CGROUP REQUEST...: a shell that moved itself there runs mcgtool ctl
ctl_in() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' _ "$MNT/$cg" "$MCGTOOL" ctl "$CTL" "$@"
}

# the first slab allocation fails, once
mkdir "$MNT/a/one"
echo "sites=slab nth=1 times=1" > "$F"
eq "armed" "armed 1" "$(head -n1 "$F")"
OUT=$(ctl_in a/one "kmalloc 100 GFP_KERNEL_ACCOUNT" "kmalloc 100 GFP_KERNEL_ACCOUNT")
match "the first kmalloc fails with ENOMEM" "^ENOMEM error ENOMEM" "$(echo "$OUT" | head -n1)"
match "the second succeeds" "^OK ok [0-9a-f]{16}$" "$(echo "$OUT" | sed -n 2p)"
match "the statistics count the failure" "^slab calls [1-9][0-9]* failed 1$" "$(grep '^slab ' "$F")"
echo off > "$F"
eq "off disarms" "armed 0" "$(head -n1 "$F")"
mcg ctl "$CTL" "kfree $(echo "$OUT" | sed -n 2p | cut -d' ' -f3)" drain >/dev/null
eq "freed: the cgroup is empty again" "0" "$(cat "$MNT/a/one/memory.current")"
rmdir "$MNT/a/one"

# the storm; each client keeps its replies, so that every handle it was
# given is freed afterwards (kernel objects outlive their client)
echo "sites=all probability=5 interval=1 times=-1 seed=42" > "$F"
STOP=$TMP/stop
client() { # client N: requests in a loop, in its own cgroup
	local n=$1 i=0
	while [ ! -e "$STOP" ]; do
		i=$((i + 1))
		mkdir -p "$MNT/a/c$n" 2>/dev/null	# ENOMEM now and then
		ctl_in "a/c$n" "kmalloc $((100 * (i % 40 + 1))) GFP_KERNEL_ACCOUNT x16" \
			"kmem_cache_create s$n.$i 2312 SLAB_ACCOUNT" "kmem_cache_alloc s$n.$i x8" \
			"alloc_pages anon order=$((i % 3)) x4" "alloc_pages file x4" \
			"kmalloc 20000 GFP_KERNEL_ACCOUNT|__GFP_ZERO x2" drain >>"$TMP/replies.$n" 2>&1
		cat "$MNT/a/c$n/memory.stat" "$MNT/slabinfo" "$MNT/a/memory.events" >/dev/null 2>&1
		echo $((256 + RANDOM % 1024))K > "$MNT/a/c$n/memory.high" 2>/dev/null
		echo 64K > "$MNT/a/c$n/memory.reclaim" 2>/dev/null
		mkdir "$MNT/a/c$n/d" 2>/dev/null && rmdir "$MNT/a/c$n/d" 2>/dev/null
	done
}
PIDS=
for n in 1 2 3; do
	client $n &
	PIDS="$PIDS $!"
done
sleep 6
touch "$STOP"
wait $PIDS	# not the daemon, also a job of this shell
# the write that disarms may itself meet a failing malloc: again until it holds
for i in $(seq 1 100); do
	echo off > "$F" 2>/dev/null && break
done
STATS=$(cat "$F")
eq "disarmed after the storm" "armed 0" "$(echo "$STATS" | head -n1)"
echo "# fault storm: $(echo "$STATS" | sed -n '/calls/p' | tr '\n' ' ')"
# charges mostly come from the per-CPU stocks: few reach the counter
for s in page_alloc charge; do
	match "the storm went through $s" "^$s calls [1-9][0-9]* failed [0-9]+$" "$(echo "$STATS" | grep "^$s ")"
done
for s in slab malloc; do
	match "the storm failed $s calls" "^$s calls [1-9][0-9]* failed [1-9][0-9]*$" "$(echo "$STATS" | grep "^$s ")"
done
match "some requests failed with ENOMEM" "^ENOMEM error ENOMEM" "$(cat "$TMP"/replies.*)"
match "others succeeded" "^OK ok [0-9a-f]{16}" "$(cat "$TMP"/replies.*)"
# (the open may fail with ENOMEM, and the move into the cgroup, or find
# it gone, when its mkdir failed: the shell's echo says so)
match "no reply but ok or an errno" "^$" "$(grep -hEv '^(OK ok|[A-Z0-9]+ error [A-Z0-9]+ |open:ENOMEM$|_: line 1: (echo: write error|.*/cgroup.procs): (Cannot allocate memory|No such file or directory)$)' "$TMP"/replies.* | head -n 3)"
ok "the daemon still answers" mounted
match "and serves requests" "^OK ok pid=" "$(mcg ctl "$CTL" whoami)"

# free every handle the clients were given (root may free anyone's; a page
# handle is EINVAL to kfree), then the caches they made
for h in $(grep -ho '\b[0-9a-f]\{16\}\b' "$TMP"/replies.*); do
	case $(mcg ctl "$CTL" "kfree $h") in
	EINVAL*) mcg ctl "$CTL" "free_pages $h" >/dev/null ;;
	esac
done
for cache in $(sed -n 's/^\(s[0-9]*\.[0-9]*\) .*/\1/p' "$MNT/slabinfo"); do
	mcg ctl "$CTL" "kmem_cache_destroy $cache" >/dev/null
done
mcg ctl "$CTL" drain >/dev/null
for n in 1 2 3; do
	eq "a/c$n is empty: memory.current 0" "0" "$(cat "$MNT/a/c$n/memory.current")"
	rmdir "$MNT/a/c$n"
done
eq "no cache of the storm is left" "" "$(sed -n 's/^\(s[0-9]*\.[0-9]*\) .*/\1/p' "$MNT/slabinfo")"
rmdir "$MNT/a"
umount_fs
finish
