#!/usr/bin/env bash
# An unprivileged client tries to exhaust what it can make the daemon keep
# (issue 14), for STRESS_SECONDS (20 unless set), all at once: nobody (uid
# 65534, in its user slice) makes handles until EDQUOT and frees some, opens
# memcgfs.ctl until EMFILE, makes cgroups until EDQUOT, blocks trace_pipe
# readers until EAGAIN; meanwhile root and another user (daemon) keep
# charging and freeing, and every one of their requests must succeed.  The
# daemon's resident memory must stay within the bound the caps give; once
# everyone stopped and freed, memcgfs.check is ok and every cgroup's usage
# is back where it started: nothing lost from anyone's accounting.
. "$(dirname "$0")/../integration/lib.sh"

id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
id daemon >/dev/null 2>&1 || skip "no user 'daemon'"
SECS=${STRESS_SECONDS:-20}
[ "$SECS" -gt 60 ] && SECS=60
HCAP=20000 SCAP=32 CCAP=64 WCAP=16
mount_fs -o memory=256M -o user_slices=true -o max_handles_per_uid=$HCAP \
	-o max_sessions_per_uid=$SCAP -o max_cgroups_per_uid=$CCAP -o max_waiting_per_uid=$WCAP
chmod o+rx "$MNT" 2>/dev/null || true
CTL=$MNT/memcgfs.ctl
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DPID/status"; }
cur() { "$MCGTOOL" ctl "$CTL" drain >/dev/null; cat "$1/memory.current"; }
STOP=$TMP/stop
chmod 1777 "$TMP"

# every user's slice exists before the baseline
for u in nobody daemon; do
	su "$u" -s /bin/bash -c 'exec "$0" ctl "$1" whoami' "$MCGTOOL" "$CTL" >/dev/null
done
NSLICE=$MNT/user.slice/user-65534.slice
DSLICE=$MNT/user.slice/user-$(id -u daemon).slice
B_N=$(cur "$NSLICE") B_D=$(cur "$DSLICE") B_U=$(cur "$MNT/user.slice")
RSS0=$(rss)

# ---- the attacker: four loops as nobody ----
cat >"$TMP/attack.sh" <<'EOF'
#!/bin/bash
# $1 mount, $2 mcgtool, $3 stop file, $4 what, $5 log
MNT=$1 T=$2 STOP=$3 CTL=$1/memcgfs.ctl SL=$1/user.slice/user-65534.slice LOG=$5
# a request of the same uid, retried while the sessions loop holds every
# session nobody may open (the caps are the uid's: open:EMFILE meanwhile)
# (until it gets through: a bound of tries lost a whole kfree batch to the
# sessions loop once on a loaded host, and its handles looked leaked)
req() {
	local r
	while :; do
		r=$("$T" ctl "$CTL" "$1")
		[ "$r" != "open:EMFILE" ] && break
		echo EMFILE >>"$LOG.open"
		sleep 0.05
	done
	echo "$r"
}
case $4 in
handles)	# x1024 until EDQUOT, then free them all, again; all freed at the end
	free_all() {
		local line r
		while read -r line; do
			r=$(req "$line")
			[ "$r" = "OK ok" ] || echo "unexpected: ${r:0:80}" >>"$LOG"
		done < <(tr ' ' '\n' <"$LOG.h" | grep . | xargs -r -n 200 echo kfree)
		: >"$LOG.h"
	}
	: >"$LOG.h"
	while [ ! -e "$STOP" ]; do
		r=$(req "kmalloc 8 x1024")
		case $r in
		"OK ok "*) echo "${r:6}" >>"$LOG.h" ;;
		EDQUOT*) echo EDQUOT >>"$LOG"; free_all ;;
		*) echo "unexpected: ${r:0:80}" >>"$LOG" ;;
		esac
	done
	free_all ;;
sessions)	# open memcgfs.ctl until EMFILE, hold, close, again
	while [ ! -e "$STOP" ]; do
		fds=()
		for i in $(seq 3 60); do
			exec {fd}<>"$CTL" 2>/dev/null || { echo EMFILE >>"$5"; break; }
			fds+=("$fd")
		done
		sleep 0.2
		for fd in "${fds[@]}"; do exec {fd}>&-; done
		sleep 0.05	# a window for nobody's other requests
	done ;;
cgroups)	# mkdir until EDQUOT, rmdir them all, again
	while [ ! -e "$STOP" ]; do
		i=0
		while r=$("$T" errno mkdir "$SL/x$i") && [ "$r" = OK ]; do i=$((i + 1)); done
		[ "$r" = EDQUOT ] && echo EDQUOT >>"$5" || echo "unexpected: $r" >>"$5"
		for j in $(seq 0 $((i - 1))); do rmdir "$SL/x$j"; done
	done ;;
waiting)	# blocked trace_pipe readers until one is refused
	while [ ! -e "$STOP" ]; do
		pids=()
		for i in $(seq 1 40); do
			timeout 2 cat "$MNT/trace_pipe" >/dev/null 2>"$5.err.$i" & pids+=($!)
		done
		wait "${pids[@]}" 2>/dev/null
		grep -qh "Resource temporarily unavailable" "$5".err.* && echo EAGAIN >>"$5"
		rm -f "$5".err.*
	done ;;
esac
EOF
chmod 755 "$TMP/attack.sh"
APIDS=()
for what in handles sessions cgroups waiting; do
	: >"$TMP/$what.log"
	chmod 666 "$TMP/$what.log"
	su nobody -s /bin/bash -c 'exec "$0" "$@"' "$TMP/attack.sh" "$MNT" "$MCGTOOL" "$STOP" \
		"$what" "$TMP/$what.log" &
	APIDS+=($!)
done

# ---- the others: root and daemon charge and free, every request must work ----
others() { # USER LOG
	local ok=0 bad=0 r h
	while [ ! -e "$STOP" ]; do
		r=$(su "$1" -s /bin/bash -c 'exec "$0" ctl "$1" "kmalloc 64 GFP_KERNEL_ACCOUNT x64"' \
			"$MCGTOOL" "$CTL")
		if [ "${r:0:6}" = "OK ok " ]; then
			h=${r:6}
			r=$(su "$1" -s /bin/bash -c 'exec "$0" ctl "$1" "kfree $2"' "$MCGTOOL" "$CTL" "$h")
			[ "$r" = "OK ok" ] && ok=$((ok + 1)) || bad=$((bad + 1))
		else
			bad=$((bad + 1))
			echo "${r:0:100}" >>"$2.bad"
		fi
	done
	echo "$ok $bad" >"$2"
}
others root "$TMP/root.res" & O1=$!
others daemon "$TMP/daemon.res" & O2=$!

PEAK=$RSS0
END=$((SECONDS + SECS))
while [ $SECONDS -lt $END ]; do
	r=$(rss); [ "$r" -gt "$PEAK" ] && PEAK=$r
	sleep 0.2
done
touch "$STOP"
wait "$O1" "$O2"
for p in "${APIDS[@]}"; do wait "$p"; done

read -r ROK RBAD <"$TMP/root.res"
read -r DOK DBAD <"$TMP/daemon.res"
ok "root's requests meanwhile: $ROK pairs, none failed" test "$ROK" -gt 0 -a "$RBAD" = 0
ok "daemon's requests meanwhile: $DOK pairs, none failed" test "$DOK" -gt 0 -a "$DBAD" = 0
[ -s "$TMP/root.res.bad" ] && echo "# root: $(head -n 3 "$TMP/root.res.bad")"
ok "nobody met EDQUOT for handles ($(grep -c EDQUOT "$TMP/handles.log") times)" grep -q EDQUOT "$TMP/handles.log"
ok "nobody met EMFILE for sessions ($(grep -c EMFILE "$TMP/sessions.log") times)" grep -q EMFILE "$TMP/sessions.log"
ok "nobody met EDQUOT for cgroups ($(grep -c EDQUOT "$TMP/cgroups.log") times)" grep -q EDQUOT "$TMP/cgroups.log"
ok "nobody met EAGAIN for blocked reads ($(grep -c EAGAIN "$TMP/waiting.log") times)" grep -q EAGAIN "$TMP/waiting.log"
eq "nothing else refused nobody" "" "$(grep -h unexpected "$TMP"/{handles,cgroups}.log | head -n 3)"
# the bound: the caps' worth (100 B a handle, 18 KB a session, 16 KB a
# cgroup, 1 KB a waiting request) and 16 MiB for everything else
BOUND=$(( (HCAP * 100 + SCAP * 18432 + CCAP * 16384 + WCAP * 1024) / 1024 + 16384 ))
if [ -z "${SANITIZE:-}" ] || [ "$SANITIZE" = none ]; then
	ok "the daemon's VmRSS grew $((PEAK - RSS0)) KiB at most, within $BOUND KiB" \
		test $((PEAK - RSS0)) -le "$BOUND"
else
	echo "# a sanitized daemon ($SANITIZE): its VmRSS is reported, not held to the bound"
fi
echo "# daemon VmRSS: $RSS0 KiB before, $PEAK KiB at the peak, bound $BOUND KiB above"

# ---- everyone stopped and freed: everything back ----
eq "memcgfs.check after the attack" "ok" "$(cat "$MNT/memcgfs.check")"
eq "daemon's slice back where it started" "$B_D" "$(cur "$DSLICE")"
for i in $(seq 1 100); do [ "$(cur "$NSLICE")" = "$B_N" ] && break; sleep 0.05; done
eq "nobody's slice back where it started (its handles, entries and cgroups gone)" "$B_N" "$(cur "$NSLICE")"
eq "user.slice back where it started" "$B_U" "$(cur "$MNT/user.slice")"
eq "nobody's cgroups all removed" "" "$(ls -d "$NSLICE"/x* 2>/dev/null | head -n 3)"
finish
