#!/usr/bin/env bash
# memory.high throttles only the charging client (docs/design.md, Isolation: "one client's
# throttling or reclaim never delays another client's request"): while
# clients of one cgroup wait out a 2 s penalty per request, through the
# text protocol and the ioctl, clients of another cgroup are served as on
# an idle mount.  The kernel holds a FUSE inode's lock across a direct-I/O
# write, so a text write answered late would hold up every writer of
# memcgfs.ctl: the penalty is paid at the reply's read, an ioctl or close.
. "$(dirname "$0")/lib.sh"

# Only a charge that reaches the page counter sees memory.high (the kernel's
# try_charge_memcg: a charge the per-CPU stock serves returns before the
# check).  So every throttled request here charges more than all the stocks
# can hold: with 2 CPU slots, 2 x (a memcg stock's 64 pages + an obj stock's
# 2 pages) = 132 pages, against 160 x (4104 + the handle's 76 bytes) = 163.3
# pages.  With 64 objects (65.3 pages), a request whose worker moved between
# the CPUs could be covered by both CPUs' stocks, which the cgroup's other
# client had filled, and owed nothing (seen once in the TSan stage).
mount_fs -o memory=256M,cpus=2
CTL=$MNT/memcgfs.ctl
N=160
mkdir "$MNT/slow" "$MNT/fast"
# any usage is far over a high of 0: the penalty is the kernel's 2 s cap
echo 0 > "$MNT/slow/memory.high"

# lat_in CGROUP ARGS...: mcgtool lat from a shell that moved itself there
lat_in() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"' _ "$MNT/$cg" "$MCGTOOL" lat "$CTL" "$@"
}
field() { echo "$2" | sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
# ms_ge A B: A >= B for decimals
ms_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

lat_in slow text 4 alloc $N >"$TMP/slow.text" &
ST=$!
lat_in slow ioctl 4 alloc $N >"$TMP/slow.ioctl" &
SI=$!
sleep 0.5
for mode in text ioctl; do
	OUT=$(lat_in fast "$mode" 300)
	echo "# neighbour, $mode, while slow/ is throttled: $OUT"
	eq "neighbour $mode requests all succeed" 0 "$(field fail "$OUT")"
	ok "neighbour $mode requests: p99 $(field p99 "$OUT") ms < 20 ms while another cgroup is throttled" \
		ms_ge 20 "$(field p99 "$OUT")"
done
kill -0 "$ST" 2>/dev/null
ok "the throttled text client was still waiting meanwhile" test $? = 0
wait "$ST" "$SI"
for mode in text ioctl; do
	OUT=$(cat "$TMP/slow.$mode")
	echo "# throttled, $mode: $OUT"
	eq "throttled $mode requests succeed" 0 "$(field fail "$OUT")"
	ok "throttled $mode requests each wait the 2 s penalty (p50 $(field p50 "$OUT") ms)" \
		ms_ge "$(field p50 "$OUT")" 1900
done
# a shell's "echo REQUEST > memcgfs.ctl": the write returns, the close pays
# (the stocks drained first: a charge the other CPU's stock served would
# owe nothing)
"$MCGTOOL" ctl "$CTL" drain >/dev/null
bash -c 'echo $$ > "$1/slow/cgroup.procs"; t0=$(date +%s%N); echo "kmalloc 4096 GFP_KERNEL_ACCOUNT x64" > "$2"; echo $(( ($(date +%s%N) - t0) / 1000000 ))' _ "$MNT" "$CTL" >"$TMP/slow.echo"
ok "echo > memcgfs.ctl in the throttled cgroup takes the penalty ($(cat "$TMP/slow.echo") ms)" \
	test "$(cat "$TMP/slow.echo")" -ge 1900
match "memory.events: high counted" "^high [1-9]" "$(sed -n 2p "$MNT/slow/memory.events")"

# a signal ends the wait, now at the read of the reply
bash -c 'echo $$ > "$1/slow/cgroup.procs"; exec "$2" ctl "$3" "kmalloc 4096 GFP_KERNEL_ACCOUNT x$4"' _ "$MNT" "$MCGTOOL" "$CTL" $N >"$TMP/killed" &
kill_after TERM $!
ok "SIGTERM ends a throttled client's wait at once (${DUR} ms)" test "$DUR" -lt 500

finish
