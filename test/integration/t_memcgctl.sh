#!/usr/bin/env bash
# memcgctl, every subcommand on a real mount: its output, its JSON, its
# exit status (0, 1 when memcgfs refuses, 2 for a bad command line) and
# the message that says what went wrong; top under tmux (send-keys,
# capture-pane); trace with its event and cgroup filters; bash completion.
. "$(dirname "$0")/lib.sh"

BUILD=$(cd "$(dirname "$MEMCGFS")/.." && pwd)
MC=${MEMCGCTL:-$BUILD/client/memcgctl}
COMPLETION=$(cd "$(dirname "$0")/../.." && pwd)/dist/memcgctl.bash
if [ ! -x "$MC" ]; then
	fail "memcgctl is built ($MC)"
	finish
fi
MC=$(user_copy "$MC")	# nobody runs it too

mount_fs -o memory=128M
export MEMCGFS_MOUNT=$MNT
export LC_ALL=C		# ASCII tree glyphs
mkdir -p "$MNT/a/b"
echo +memory >"$MNT/a/cgroup.subtree_control"

# mc ARGS...: run memcgctl; stdout in $OUT, stderr in $ERR, status in $ST
mc() {
	"$MC" "$@" >"$TMP/mc.out" 2>"$TMP/mc.err"
	ST=$?
	OUT=$(cat "$TMP/mc.out")
	ERR=$(cat "$TMP/mc.err")
}
stat_of() { sed -n "s/^$2 //p" "$MNT/$1/memory.stat"; }
# json_ok TEXT: one JSON document per line
json_ok() {
	if command -v python3 >/dev/null; then
		printf '%s\n' "$1" | python3 -c 'import json,sys
for l in sys.stdin: json.loads(l)' 2>/dev/null
	elif command -v jq >/dev/null; then
		printf '%s\n' "$1" | jq -e . >/dev/null 2>&1
	else
		printf '%s\n' "$1" | grep -Eq '^[[{].*[]}]$'
	fi
}

# ---- the command line ----
mc --help
eq "--help: exit 0" 0 "$ST"
for c in kmalloc kfree kmem-cache alloc-pages free-pages drain whoami check run tree stat top trace; do
	match "--help lists $c" "^  $c" "$OUT"
done
mc
eq "no command: exit 2" 2 "$ST"
match "... says so" "^memcgctl: missing COMMAND" "$ERR"
mc frobnicate
eq "an unknown command: exit 2" 2 "$ST"
match "... names it" "unknown command 'frobnicate'" "$ERR"
mc --version
match "--version" "^memcgctl [0-9]" "$OUT"
for c in kmalloc kfree "kmem-cache" alloc-pages free-pages drain whoami check run tree stat top trace; do
	mc $c --help
	eq "$c --help: exit 0" 0 "$ST"
	match "$c --help: its usage" "^Usage: memcgctl $c" "$OUT"
done

# ---- whoami, -m, the mount ----
mc whoami
match "whoami" "^pid=[0-9]+ cgroup=/ cpu=[0-9]+$" "$OUT"
mc whoami -g a/b
match "whoami -g a/b: memcgctl moved itself there" "^pid=[0-9]+ cgroup=/a/b cpu=[0-9]+$" "$OUT"
mc whoami --json -g "$MNT/a/b"
match "whoami --json, the cgroup as a path on the mount" '^\{"pid":[0-9]+,"cgroup":"/a/b","cpu":[0-9]+\}$' "$OUT"
ok "... valid JSON" json_ok "$OUT"
OUT=$(env -u MEMCGFS_MOUNT "$MC" -m "$MNT" whoami)
match "-m MOUNT" "^pid=[0-9]+ cgroup=/ cpu=[0-9]+$" "$OUT"
OUT=$(env -u MEMCGFS_MOUNT "$MC" stat "$MNT/a/b" | head -n1)
eq "a cgroup path on the mount names the mount" "/a/b" "$OUT"
mc -m /proc whoami
eq "-m on something else: exit 1" 1 "$ST"
eq "... says why" "memcgctl: /proc: not a memcgfs mount (no memcgfs.ctl)" "$ERR"
mc whoami -g nosuch
eq "-g of no cgroup: exit 1" 1 "$ST"
eq "... says why" "memcgctl: $MNT/nosuch: no such cgroup (ENOENT)" "$ERR"
mc whoami -g a
eq "-g of a cgroup with controllers enabled for children: exit 1" 1 "$ST"
match "... EBUSY, as the kernel's no-internal-process rule" "^memcgctl: $MNT/a: cannot move pid [0-9]+ there: .* \(EBUSY\)$" "$ERR"

# ---- check ----
"$MC" drain
mc check
eq "check on a quiet mount: ok, exit 0" "0:ok" "$ST:$OUT"
mc check --json
eq "check --json" '0:{"ok":true,"result":"ok"}' "$ST:$OUT"
ok "... valid JSON" json_ok "$OUT"
mc check extra
eq "check takes no argument: exit 2" 2 "$ST"
NOBODY_MC=$(command -v setpriv >/dev/null && echo "setpriv --reuid=65534 --regid=65534 --clear-groups")
if [ -n "$NOBODY_MC" ]; then
	OUT=$($NOBODY_MC "$MC" check 2>"$TMP/mc.err"); ST=$?
	eq "check as a user: exit 1" 1 "$ST"
	match "... memcgfs.check is root's (EACCES)" "memcgfs.check: cannot read: .*\(root only\) \(EACCES\)$" "$(cat "$TMP/mc.err")"
fi
mc -m /proc check
eq "check of something else: exit 1" 1 "$ST"

# ---- kmalloc, kfree ----
"$MC" drain
mc kmalloc 1000 GFP_KERNEL_ACCOUNT -n 10 -g a/b
eq "kmalloc -n 10: exit 0" 0 "$ST"
eq "... ten handles, one per line" 10 "$(printf '%s\n' "$OUT" | grep -Ec '^[0-9a-f]{16}$')"
H=$OUT
"$MC" drain
eq "memory.stat of a/b: 10 x (1024 + 8) and 10 handle entries of slab" $((10320 + 10 * ENTRY)) "$(stat_of a/b slab_unreclaimable)"
mc kfree - <<<"$H"
eq "kfree - (handles from stdin): exit 0, no output" "0:" "$ST:$OUT"
"$MC" drain
eq "slab back to 0" 0 "$(stat_of a/b slab)"
mc kfree $H
eq "kfree of stale handles: exit 1" 1 "$ST"
match "... EINVAL, with memcgfs's reason" "^memcgctl: kfree: stale or unknown handle [0-9a-f]+ \(handle 1 of 10\); nothing freed \(EINVAL\)$" "$ERR"
mc kmalloc 64 GFP_KERNEL_ACCOUNT -n 3 --json -g a/b
match "kmalloc --json" '^\{"handles":\["[0-9a-f]{16}","[0-9a-f]{16}","[0-9a-f]{16}"\]\}$' "$OUT"
ok "... valid JSON" json_ok "$OUT"
"$MC" kfree $(printf '%s' "$OUT" | grep -Eo '[0-9a-f]{16}')
mc kmalloc 8 GFP_KERNEL_ACCOUNT -n 2500 --batch -g a/b
eq "kmalloc -n 2500 --batch (three operations, one ioctl call): 2500 handles" "0:2500" "$ST:$(printf '%s\n' "$OUT" | grep -c .)"
"$MC" drain
eq "... charged to a/b: 2500 x (8 + 8) and 2500 handle entries" $((2500 * (16 + ENTRY))) "$(stat_of a/b slab_unreclaimable)"
mc kfree --batch - <<<"$OUT"
eq "kfree --batch of 2500" 0 "$ST"
"$MC" drain
eq "... all uncharged" 0 "$(stat_of a/b slab)"
mc kmalloc
eq "kmalloc without SIZE: exit 2" 2 "$ST"
match "... says so" "^memcgctl kmalloc: missing SIZE" "$ERR"
mc kmalloc 0
eq "kmalloc 0: exit 2" 2 "$ST"
mc kmalloc 64 GFP_BOGUS
eq "unknown gfp: exit 2" 2 "$ST"
match "... names it" "unknown gfp flags 'GFP_BOGUS'" "$ERR"
mc kmalloc 8M
eq "kmalloc above KMALLOC_MAX_SIZE: exit 1" 1 "$ST"
match "... EINVAL from memcgfs" "^memcgctl: kmalloc: size 8388608 above KMALLOC_MAX_SIZE .*\(EINVAL\)$" "$ERR"
mc kfree zz
eq "kfree of a malformed handle: exit 2" 2 "$ST"
mc kfree
eq "kfree without handles: exit 2" 2 "$ST"

# memory.max: the message names the cgroup whose limit was reached
echo 64K >"$MNT/a/memory.max"
mc kmalloc 4096 GFP_KERNEL_ACCOUNT -n 64 -g a/b
eq "over memory.max: exit 1" 1 "$ST"
eq "... the message" "memcgctl: $MNT/a: memory.max reached (ENOMEM)" "$ERR"
eq "... nothing printed" "" "$OUT"
mc kmalloc 4096 GFP_KERNEL_ACCOUNT -n 64 -g a/b --batch
eq "over memory.max through the ioctl: the same message" "1:memcgctl: $MNT/a: memory.max reached (ENOMEM)" "$ST:$ERR"
mc kmalloc 16 GFP_KERNEL_ACCOUNT -n 3000 -g a/b
eq "-n 3000 (three requests) over memory.max: all or nothing" "1:memcgctl: $MNT/a: memory.max reached (ENOMEM)" "$ST:$ERR"
"$MC" drain
eq "... the first requests' objects were freed again" 0 "$(stat_of a/b slab)"
echo max >"$MNT/a/memory.max"

# ---- kmem-cache ----
mc kmem-cache create seed2312 2312 SLAB_HWCACHE_ALIGN
match "kmem-cache create: the geometry" "^seed2312 objsize=2312 size=2368 objperslab=[0-9]+ pagesperslab=[0-9]+$" "$OUT"
mc kmem-cache create seed2312 2312
eq "a second create: exit 1" 1 "$ST"
eq "... EEXIST" "memcgctl: kmem-cache create: a cache named seed2312 exists (EEXIST)" "$ERR"
mc kmem-cache create --json jcache 100 --align 64
match "kmem-cache create --json --align 64" '^\{"name":"jcache","objsize":100,"size":128,"objperslab":[0-9]+,"pagesperslab":[0-9]+\}$' "$OUT"
mc kmem-cache create c2 64 SLAB_BOGUS
eq "unknown slab flags: exit 2" 2 "$ST"
mc kmem-cache alloc seed2312 GFP_KERNEL_ACCOUNT -n 2 -g a/b
eq "kmem-cache alloc -n 2" "0:2" "$ST:$(printf '%s\n' "$OUT" | grep -c .)"
CH=$OUT
mc kmem-cache destroy seed2312
eq "destroy with objects: exit 1, EBUSY" "1:memcgctl: kmem-cache destroy: seed2312 still has objects (EBUSY)" "$ST:$ERR"
mc kmem-cache free kmalloc-64 $CH
eq "kmem-cache free with the wrong cache: exit 1" 1 "$ST"
match "... EINVAL" "\(EINVAL\)$" "$ERR"
mc kmem-cache free seed2312 $CH
eq "kmem-cache free" 0 "$ST"
mc kmem-cache destroy seed2312
eq "kmem-cache destroy" "0:" "$ST:$OUT"
mc kmem-cache destroy seed2312
eq "destroy again: exit 1, ENOENT" "1:memcgctl: kmem-cache destroy: no cache named seed2312 (ENOENT)" "$ST:$ERR"
"$MC" kmem-cache destroy jcache
mc kmem-cache alloc mem_cgroup
eq "alloc from an internal cache: exit 1, EPERM" "1:memcgctl: kmem-cache alloc: mem_cgroup is one of memcgfs's internal caches (EPERM)" "$ST:$ERR"
mc kmem-cache shrink x
eq "kmem-cache of an unknown action: exit 2" 2 "$ST"

# ---- alloc-pages, free-pages ----
mc alloc-pages file --order 1 -n 2 -g a/b
eq "alloc-pages file --order 1 -n 2" "0:2" "$ST:$(printf '%s\n' "$OUT" | grep -c .)"
"$MC" drain
eq "memory.stat file: 2 x 8K" 16384 "$(stat_of a/b file)"
mc free-pages $OUT
eq "free-pages" 0 "$ST"
eq "... file 0" 0 "$(stat_of a/b file)"
mc alloc-pages lots
eq "an unknown page type: exit 2" 2 "$ST"
mc alloc-pages anon --order 11
eq "order 11: exit 2" 2 "$ST"
# anon pages are the task's: --hold keeps them
"$MC" alloc-pages anon -n 4 -g a/b --hold >"$TMP/hold.out" &
HOLD=$!
for i in $(seq 1 40); do [ -s "$TMP/hold.out" ] && break; sleep 0.05; done
"$MC" drain
eq "alloc-pages anon --hold: 4 anon pages while it lives" 16384 "$(stat_of a/b anon)"
kill -TERM "$HOLD"
wait "$HOLD"
eq "... it exits 0 on SIGTERM" 0 "$?"
for i in $(seq 1 40); do [ "$(stat_of a/b anon)" = 0 ] && break; sleep 0.05; done
eq "... and its anon pages go with it" 0 "$(stat_of a/b anon)"
# Over its limit in two requests (1024 + 976 pages), the OOM killer frees
# the pages memcgctl itself took in the first: the handles it printed for
# them are stale, and it says so (exit 1).  (4M and 152K: the pages of the
# first request and the entries of both, 19 pages each, fill it exactly, so
# that the second request's first page meets the limit)
mkdir "$MNT/oomhold"
echo $((4096 * 1024 + 152 * 1024)) >"$MNT/oomhold/memory.max"
mc alloc-pages anon -n 2000 -g oomhold
eq "alloc-pages over the limit: every handle printed, exit 1" "1:2000" \
	"$ST:$(printf '%s\n' "$OUT" | grep -c .)"
match "... the OOM killer chose it: says so" \
	"alloc-pages: the OOM killer chose this process .*/oomhold memory.events.local oom_kill \+1.*stale" "$ERR"
eq "... one kill: a victim is chosen once, its pages freed at once" "oom_kill 1" \
	"$(grep '^oom_kill ' "$MNT/oomhold/memory.events.local")"
mc alloc-pages anon -n 8 -g oomhold
eq "... an allocation the OOM killer left alone: exit 0, nothing said" "0:" "$ST:$ERR"
rmdir "$MNT/oomhold"
# One request four times its cgroup's limit, alone in it: the OOM killer
# takes the requester once, its pages go, and the rest of its charges fail
# (the kernel's dying task: task_will_free_mem(current), then passed_oom):
# ENOMEM, one kill, never the same victim again.
mkdir "$MNT/oomone"
echo 1M >"$MNT/oomone/memory.max"
mc alloc-pages anon -n 1000 -g oomone
eq "a request over 4x the limit: ENOMEM, nothing printed" "1:0" \
	"$ST:$(printf '%s' "$OUT" | grep -c .)"
eq "... the requester killed once" "oom_kill 1" \
	"$(grep '^oom_kill ' "$MNT/oomone/memory.events.local")"
"$MC" drain
eq "... and its pages freed" 0 "$(stat_of oomone anon)"
rmdir "$MNT/oomone"

# ---- drain ----
mc drain
eq "drain: exit 0, no output" "0:" "$ST:$OUT"
mc drain now
eq "drain with an argument: exit 2" 2 "$ST"

# ---- run ----
mc run -g a/b -- "$MC" whoami
match "run -g a/b -- COMMAND: the command is in a/b" "^pid=[0-9]+ cgroup=/a/b cpu=[0-9]+$" "$OUT"
mc run -g a/b sh -c 'cat "$MEMCGFS_MOUNT/a/b/cgroup.procs" | grep -qx $$ && exit 7'
eq "run: the command's exit status (and its pid is in cgroup.procs)" 7 "$ST"
mc run -g a/b -- /nonexistent/command
eq "run of no command: exit 127" 127 "$ST"
eq "... says why" "memcgctl: /nonexistent/command: No such file or directory (ENOENT)" "$ERR"
mc run sh -c true
eq "run without -g: exit 2" 2 "$ST"
mc run -g nosuch true
eq "run -g of no cgroup: exit 1" 1 "$ST"

# ---- tree ----
mkdir "$MNT/x" "$MNT/y"
# vmalloc pages: charged, neither reclaimable nor the task's; their handle
# entries take a kernel page more
"$MC" alloc-pages vmalloc -n 8 -g x >/dev/null
"$MC" alloc-pages vmalloc -n 2 -g y >/dev/null
echo 64M >"$MNT/x/memory.max"
echo 32M >"$MNT/x/memory.high"
echo 12K >"$MNT/y/memory.max"
"$MC" kmalloc 4096 GFP_KERNEL_ACCOUNT -n 2 -g y >/dev/null 2>&1
"$MC" drain
mc tree
eq "tree: exit 0" 0 "$ST"
match "tree: the header" "^CGROUP +CURRENT +PEAK +HIGH +MAX +EVENTS$" "$OUT"
match "tree: the root" "^/ +- +- +- +- +-$" "$OUT"
match "tree: a and its child b" "^\|-a .*"$'\n'"\| +\`-b " "$OUT"
match "tree: x with sizes for people" "^\|-x +36K +[0-9.]+K +32M +64M +-$" "$OUT"
match "tree: y's limit and its events" "^\`-y +12K +[0-9.]+K +max +12K +max=[1-9][0-9]* oom=[1-9]" "$OUT"
mc tree --bytes x
eq "tree --bytes CGROUP: that subtree, exact bytes" "CGROUP  CURRENT     PEAK     HIGH      MAX  EVENTS" "$(printf '%s\n' "$OUT" | head -n1)"
match "... x in bytes" "^/x +36864 +[0-9]+ +33554432 +67108864 +-$" "$OUT"
mc tree --json
ok "tree --json: valid JSON" json_ok "$OUT"
match "tree --json: nested, limits as numbers or \"max\"" '"cgroup":"/x","current":36864,"peak":[0-9]+,"high":33554432,"max":67108864,' "$OUT"
match "tree --json: children" '"cgroup":"/a",.*"children":\[\{"cgroup":"/a/b"' "$OUT"
mc tree nosuch
eq "tree of no cgroup: exit 1" 1 "$ST"

# ---- stat ----
"$MC" kmalloc 1000 GFP_KERNEL_ACCOUNT -n 10 -g a/b >"$TMP/h10"
"$MC" drain
mc stat a/b
eq "stat: exit 0" 0 "$ST"
eq "stat: the cgroup first" "/a/b" "$(printf '%s\n' "$OUT" | head -n1)"
match "stat: byte items for people" "^  slab_unreclaimable +11K$" "$OUT"
match "stat: counts as counts" "^  pgfault +0$" "$OUT"
match "stat: the slab share of memory.current" "^slab share: [0-9.]+% of memory.current \(slab 11K of 12K\)$" "$OUT"
mc stat --bytes a/b
match "stat --bytes" "^  slab_unreclaimable +$((10320 + 10 * ENTRY))$" "$OUT"
mc stat --json a/b
ok "stat --json: valid JSON" json_ok "$OUT"
match "stat --json: items, current and the share" '^\{"cgroup":"/a/b","current":12288,"stat":\{"anon":0,.*"slab":'$((10320 + 10 * ENTRY))',.*\},"slab":'$((10320 + 10 * ENTRY))',"slab_share":0\.9[0-9]*\}$' "$OUT"
"$MC" kfree - <"$TMP/h10"
mc stat
eq "stat without CGROUP: exit 2" 2 "$ST"
mc stat /
eq "stat of the root (no memory.current there): exit 0" 0 "$ST"

# ---- top ----
"$MC" drain
mc top -b -n 1
eq "top -b -n 1: exit 0" 0 "$ST"
match "top: the title" "^memcgctl top - $MNT - [0-9:]+ - [0-9]+ cgroups$" "$OUT"
match "top: the header" "^CGROUP +CURRENT +PEAK +HIGH +MAX +PROCS +EVENTS$" "$OUT"
eq "top: sorted by memory.current (x 32K before y 8K)" "/x /y" "$(printf '%s\n' "$OUT" | awk '$1 == "/x" || $1 == "/y" { printf "%s%s", s, $1; s = " " }')"
mc top -b -n 2 -d 0.2 x
eq "top -n 2 CGROUP: two frames of that subtree" 2 "$(printf '%s\n' "$OUT" | grep -c '^/x ')"
mc top --json -n 1
ok "top --json: valid JSON" json_ok "$OUT"
match "top --json: an array sorted by current" '^\[\{"cgroup":"/x","current":36864,' "$OUT"
mc top -d 0
eq "top -d 0: exit 2" 2 "$ST"

# interactive, under tmux: draw, refresh, q quits and restores the screen
if command -v tmux >/dev/null; then
	TM="tmux -L memcgfs-test-$$ -f /dev/null"
	# pane_wait REGEX: the pane into $TMP/pane until a line matches (4 s)
	pane_wait() {
		local i
		for i in $(seq 1 40); do
			$TM capture-pane -p -t top >"$TMP/pane" 2>/dev/null
			grep -q "$1" "$TMP/pane" && break
			sleep 0.1
		done
	}
	$TM new-session -d -s top -x 100 -y 20 \
		"MEMCGFS_MOUNT='$MNT' '$MC' top -d 0.3; echo EXIT=\$?; sleep 30"
	pane_wait '^/x '
	match "top under tmux: the title" "^memcgctl top - $MNT - [0-9:]+ - [0-9]+ cgroups - q: quit" "$(cat "$TMP/pane")"
	match "top under tmux: the rows" "^/x +36K " "$(cat "$TMP/pane")"
	echo max >"$MNT/y/memory.max"
	"$MC" alloc-pages vmalloc -n 16 -g y >/dev/null
	"$MC" drain
	pane_wait '^/y  *76K '
	eq "top under tmux: refreshed, y now first (76K)" "/y:76K /x:36K" \
		"$(awk '$1 == "/x" || $1 == "/y" { printf "%s%s:%s", s, $1, $2; s = " " }' "$TMP/pane")"
	$TM send-keys -t top q
	pane_wait '^EXIT='
	match "top under tmux: q quits, exit 0" "^EXIT=0$" "$(cat "$TMP/pane")"
	if grep -q 'CGROUP' "$TMP/pane"; then
		fail "top under tmux: the alternate screen is left (no frame remains)"
	else
		pass "top under tmux: the alternate screen is left (no frame remains)"
	fi
	$TM kill-server 2>/dev/null
elif [ -n "${CI:-}" ]; then
	fail "tmux is installed (top's interactive test)"
else
	echo "# tmux not installed: top's interactive test not run"
fi

# ---- trace ----
"$MC" kmem-cache create seed2312 2312 SLAB_HWCACHE_ALIGN >/dev/null
eq "tracing_on starts at 0" 0 "$(cat "$MNT/tracing_on")"
timeout 20 "$MC" trace --event kmalloc,kmem_cache_alloc -n 2 >"$TMP/trace" &
TP=$!
sleep 0.5
eq "trace turns tracing_on on while it runs" 1 "$(cat "$MNT/tracing_on")"
H1=$("$MC" kmalloc 2312 --site seed000)
"$MC" kfree "$H1"
H2=$("$MC" kmem-cache alloc seed2312 --site seed000)
wait "$TP"
eq "trace -n 2: exit 0" 0 "$?"
TRACE=$(cat "$TMP/trace")
match "trace: kmalloc(2312) gets 4096 bytes (seed 000)" "^ *memcgctl-[0-9]+ +\[[0-9]+\] \.{5} +[0-9]+\.[0-9]{6}: kmalloc: call_site=seed000 ptr=[0-9a-f]+ bytes_req=2312 bytes_alloc=4096 " "$TRACE"
match "trace: a SLAB_HWCACHE_ALIGN cache of 2312-byte objects 2368" "kmem_cache_alloc: call_site=seed000 ptr=[0-9a-f]+ bytes_req=2312 bytes_alloc=2368 " "$TRACE"
eq "trace --event: the kfree between them is not shown" 0 "$(printf '%s\n' "$TRACE" | grep -c kfree)"
eq "trace restores tracing_on" 0 "$(cat "$MNT/tracing_on")"
"$MC" kmem-cache free seed2312 "$H2"

# -g: only the processes of that subtree (four objects: a slab new on the
# CPU serving them allocates its objcg vector too, a kmalloc of its own)
timeout 20 "$MC" trace -g a --event kmalloc --json -n 4 >"$TMP/trace" &
TP=$!
sleep 0.5
"$MC" kmalloc 64 --site outside >/dev/null
"$MC" kmalloc 64 GFP_KERNEL_ACCOUNT --site inside -g a/b -n 4 --hold >"$TMP/hold.out" &
HOLD=$!
wait "$TP"
eq "trace -g a -n 4: exit 0" 0 "$?"
kill -TERM "$HOLD"
wait "$HOLD"
TRACE=$(cat "$TMP/trace")
ok "trace --json: valid JSON" json_ok "$TRACE"
match "trace -g a: the event of a process in a/b, as JSON" '^\{"comm":"memcgctl","pid":[0-9]+,"cpu":[0-9]+,"time":[0-9]+\.[0-9]+,"event":"kmalloc","fields":\{"call_site":"inside","ptr":"[0-9a-f]+","bytes_req":64,"bytes_alloc":64,"gfp_flags":"GFP_KERNEL_ACCOUNT","node":-?[0-9]+,"accounted":true\}\}$' "$TRACE"
eq "trace -g a: not the root's" 0 "$(printf '%s\n' "$TRACE" | grep -c outside)"
timeout 20 "$MC" trace -n 1 --no-enable >/dev/null &
TP=$!
sleep 0.3
eq "trace --no-enable leaves tracing_on alone" 0 "$(cat "$MNT/tracing_on")"
kill -INT "$TP"
wait "$TP"
eq "trace ends on SIGINT with exit 0" 0 "$?"
mc trace --event kmalloc,bogus
eq "trace --event of an unknown event: exit 2" 2 "$ST"
match "... names it" "unknown event 'bogus'" "$ERR"

# ---- bash completion ----
if [ -f "$COMPLETION" ]; then
	# complete WORDS...: what _memcgctl offers for the last word
	complete_words() {
		bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"
			COMP_POINT=${#COMP_LINE}; _memcgctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@" | sort | tr '\n' ' '
	}
	eq "completion: subcommands" "kfree kmalloc kmem-cache " "$(complete_words memcgctl k)"
	eq "completion: check" "check " "$(complete_words memcgctl ch)"
	eq "completion: sandbox" "sandbox stat " "$(complete_words memcgctl s)"
	eq "completion: kmem-cache actions" "create " "$(complete_words memcgctl kmem-cache cr)"
	eq "completion: gfp flags" "GFP_KERNEL GFP_KERNEL_ACCOUNT " "$(complete_words memcgctl kmalloc 64 GFP_KER)"
	eq "completion: page types" "kernel_stack " "$(complete_words memcgctl alloc-pages ker)"
	eq "completion: cgroups under the mount" "a/ " "$(complete_words memcgctl tree a)"
	eq "completion: ... a level at a time" "a/b/ " "$(complete_words memcgctl stat a/)"
	eq "completion: -g CGROUP" "x/ " "$(complete_words memcgctl run -g x)"
	eq "completion: absolute paths" "$MNT/a/ " "$(complete_words memcgctl tree "$MNT/a")"
	eq "completion: trace events after a comma" "kmalloc,kfree kmalloc,kmem_cache_alloc kmalloc,kmem_cache_free " \
		"$(complete_words memcgctl trace --event kmalloc,k)"
	eq "completion: options" "--order " "$(complete_words memcgctl alloc-pages --or)"
else
	fail "dist/memcgctl.bash exists"
fi

umount_fs
