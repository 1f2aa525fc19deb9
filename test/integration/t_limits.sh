#!/usr/bin/env bash
# What a client makes the daemon keep (issue 14), through a real mount as an
# unprivileged user (nobody, uid 65534): each handle's entry is charged to
# the client's cgroup as slab and bounded by its memory.max;
# fs.max_handles_per_uid stops a uid's live handles (EDQUOT),
# fs.max_sessions_per_uid its open memcgfs.ctl files (EMFILE),
# fs.max_cgroups_per_uid the cgroups it makes (EDQUOT) and
# fs.max_waiting_per_uid its blocked trace_pipe reads (EAGAIN) and
# fs.max_open_per_uid its open files of the mount, PSI triggers among them
# (EMFILE); other users and root keep working meanwhile.
. "$(dirname "$0")/lib.sh"

id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
mount_fs -o memory=64M -o user_slices=true -o max_handles_per_uid=3000 \
	-o max_sessions_per_uid=8 -o max_cgroups_per_uid=5 -o max_waiting_per_uid=2 \
	-o max_open_per_uid=12
chmod o+rx "$MNT" 2>/dev/null || true
CTL=$MNT/memcgfs.ctl
SLICE=$MNT/user.slice/user-65534.slice
stat_of() { sed -n "s/^$2 //p" "$1/memory.stat"; }
# as nobody: mcgtool's requests on one session, one reply line each
as_nobody() { su nobody -s /bin/bash -c 'exec "$0" ctl "$@"' "$MCGTOOL" "$CTL" "$@"; }
# kfree requests for HANDLES, 200 a request (a text request is 4096 bytes at most)
kfrees() { mapfile -t REQS < <(tr ' ' '\n' <<<"$1" | grep . | xargs -n 200 echo kfree); }

match "log: the handle cap in force" "fs.max_handles_per_uid: 3000 live" "$(cat "$LOG")"
match "log: the session cap in force" "fs.max_sessions_per_uid: 8 open" "$(cat "$LOG")"
match "log: the open-file cap in force" "fs.max_open_per_uid: 12 open" "$(cat "$LOG")"

# ---- handles' entries: charged to the client's cgroup ----
as_nobody whoami >/dev/null
ok "nobody's slice exists" test -d "$SLICE"
"$MCGTOOL" ctl "$CTL" drain >/dev/null
S0=$(stat_of "$SLICE" slab_unreclaimable)
OUT=$(as_nobody "kmalloc 8 x1000" drain)
match "nobody: kmalloc 8 x1000 (GFP_KERNEL: the objects unaccounted)" "^OK ok( [0-9a-f]{16}){1000}$" \
	"$(echo "$OUT" | head -n1)"
H1=$(echo "$OUT" | head -n1 | cut -d' ' -f3-)
eq "... their 1000 entries are slab of nobody's slice" $((S0 + 1000 * ENTRY)) \
	"$(stat_of "$SLICE" slab_unreclaimable)"

# ---- the per-uid cap ----
OUT=$(as_nobody "kmalloc 8 x1000" "kmalloc 8 x1001")
match "nobody: 2000 live handles" "^OK ok( [0-9a-f]{16}){1000}$" "$(echo "$OUT" | head -n1)"
H2=$(echo "$OUT" | head -n1 | cut -d' ' -f3-)
match "nobody: 1001 more would pass fs.max_handles_per_uid: EDQUOT, said so" \
	"^EDQUOT error EDQUOT uid 65534 would hold more than 3000 live handles \(fs.max_handles_per_uid\)" \
	"$(echo "$OUT" | sed -n 2p)"
match "... from another cgroup too (the cap is the uid's)" "^EDQUOT " \
	"$(su nobody -s /bin/bash -c 'exec "$0" ctl "$1" "alloc_pages anon x1001"' "$MCGTOOL" "$CTL")"
OUT=$("$MCGTOOL" ctl "$CTL" "kmalloc 8 x1024" "kmalloc 8 x1024" "kmalloc 8 x1024" "kmalloc 8 x1024")
eq "root meanwhile: 4096 handles (root has no cap)" 4 "$(echo "$OUT" | grep -c '^OK ok')"
RH=$(echo "$OUT" | cut -d' ' -f3-)
if id daemon >/dev/null 2>&1; then
	eq "another user meanwhile: its own 3000" "OK" \
		"$(su daemon -s /bin/bash -c 'exec "$0" ctl "$1" "kmalloc 8 x1000" "kmalloc 8 x1000" "kmalloc 8 x1000"' \
		   "$MCGTOOL" "$CTL" | cut -d' ' -f1 | sort -u)"
fi
kfrees "$H1"
OUT=$(as_nobody "${REQS[@]}" "kmalloc 8 x1000")
eq "a free makes room: kfree 1000, then 1000 more" "OK OK OK OK OK OK" \
	"$(echo "$OUT" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
H1=$(echo "$OUT" | tail -n1 | cut -d' ' -f3-)

# ---- the entries under memory.max: the slice's limit bounds them ----
kfrees "$RH"
"$MCGTOOL" ctl "$CTL" "${REQS[@]}" >/dev/null
kfrees "$H1 $H2"
as_nobody "${REQS[@]}" drain >/dev/null
"$MCGTOOL" ctl "$CTL" drain >/dev/null
CUR=$(cat "$SLICE/memory.current")
echo $((CUR + 16384)) > "$SLICE/memory.max"
OUT=$(as_nobody "kmalloc 8 x1024")
match "nobody at its memory.max: 1024 entries do not fit: ENOMEM, said so" \
	"^ENOMEM error ENOMEM no memory to charge 1024 handles' entries" "$OUT"
match "... memory.events of the slice: max" "^max [1-9]" "$(cat "$SLICE/memory.events")"
match "... what fits still works" "^OK ok( [0-9a-f]{16}){100}$" "$(as_nobody "kmalloc 8 x100" | head -n1)"
echo max > "$SLICE/memory.max"

# ---- extended attributes: the setter's slab, bounded by its memory.max ----
"$MCGTOOL" ctl "$CTL" drain >/dev/null
S0=$(stat_of "$SLICE" slab_unreclaimable)
eq "nobody: a 64 KiB user.* attribute on its slice" "OK" \
	"$(su nobody -s /bin/bash -c 'exec "$0" xattr "$1" set user.big @65536' "$MCGTOOL" "$SLICE")"
"$MCGTOOL" ctl "$CTL" drain >/dev/null
S1=$(stat_of "$SLICE" slab_unreclaimable)
ok "... charged to nobody's slice as slab ($((S1 - S0)) bytes)" test $((S1 - S0)) -ge 65536 -a $((S1 - S0)) -lt 66560
eq "... removed: uncharged" "OK" \
	"$(su nobody -s /bin/bash -c 'exec "$0" xattr "$1" remove user.big' "$MCGTOOL" "$SLICE")"
"$MCGTOOL" ctl "$CTL" drain >/dev/null
eq "... the slice's slab back" "$S0" "$(stat_of "$SLICE" slab_unreclaimable)"
CUR=$(cat "$SLICE/memory.current")
echo $((CUR + 16384)) > "$SLICE/memory.max"
eq "... over the slice's memory.max: ENOMEM" "ENOMEM" \
	"$(su nobody -s /bin/bash -c 'exec "$0" xattr "$1" set user.big @65536' "$MCGTOOL" "$SLICE")"
echo max > "$SLICE/memory.max"

# ---- sessions ----
OUT=$(su nobody -s /bin/bash -c '
	for fd in 3 4 5 6 7 8 9 10 11; do
		eval "exec $fd<>\"\$0\"" 2>/dev/null || { echo "refused at $((fd - 2))"; break; }
	done
	"$1" ctl "$0" whoami' "$CTL" "$MCGTOOL")
match "nobody: the 9th open memcgfs.ctl is refused" "^refused at 9$" "$OUT"
eq "... with EMFILE" "open:EMFILE" "$(echo "$OUT" | tail -n1)"
match "root meanwhile opens its own" "^OK ok pid=" "$("$MCGTOOL" ctl "$CTL" whoami)"
match "closed, nobody opens again" "^OK ok pid=" "$(as_nobody whoami)"

# ---- open files of the mount: 12, PSI triggers among them ----
id daemon >/dev/null 2>&1 || skip "no user 'daemon'"
OUT=$(su nobody -s /bin/bash -c '
	exec 3>"$0/memory.pressure" && echo "some 150000 2000000" >&3 || echo "no trigger"
	for fd in 4 5 6 7 8 9 10 11 12 13 14 15; do
		eval "exec $fd<\"\$0/memory.stat\"" 2>/dev/null || { echo "refused at $((fd - 2))"; break; }
	done
	cat "$0/memory.current" 2>&1 >/dev/null
	"$1" ctl "$0/../../memcgfs.ctl" whoami
	exec 14<&-
	cat "$0/memory.current" >/dev/null && echo "closed one: opens again"' "$SLICE" "$MCGTOOL")
match "nobody: a PSI trigger and 11 files open, the 13th open is refused" "^refused at 13$" "$OUT"
eq "nobody: a 100 ms PSI window is EINVAL (an unprivileged window is a multiple of 2 s)" EINVAL \
	"$(su nobody -s /bin/bash -c 'exec "$0" errno write "$1/memory.pressure" "some 10000 100000"' "$MCGTOOL" "$SLICE")"
match "... with EMFILE (cat)" "Too many open files" "$OUT"
match "... memcgfs.ctl too" "^open:EMFILE$" "$OUT"
match "... a close makes room" "^closed one: opens again$" "$OUT"
eq "nothing is left counted once nobody's shell is gone" "OK ok pid=" "$(as_nobody whoami | cut -c1-10)"
match "root opens meanwhile" "^OK ok pid=" "$("$MCGTOOL" ctl "$CTL" whoami)"
su nobody -s /bin/bash -c '
	for i in $(seq 1 12); do exec {x}<"$0/memory.stat" || exit 1; done
	exec 3<"$0/memory.stat" 2>/dev/null && exit 1
	echo holding; sleep 3' "$SLICE" >"$TMP/holder" & H=$!
for i in $(seq 1 100); do [ -s "$TMP/holder" ] && break; sleep 0.05; done
eq "nobody holds all 12" "holding" "$(cat "$TMP/holder")"
match "... while another uid opens" "^OK ok pid=" \
	"$(su daemon -s /bin/bash -c 'exec "$0" ctl "$1" whoami' "$MCGTOOL" "$CTL")"
wait "$H"
eq "... and nobody's holder ended well" 0 "$?"

# ---- cgroups a user makes: its slice and 4 more ----
as_nobody_sh() { su nobody -s /bin/bash -c "$1"; }
for i in 1 2 3 4; do
	as_nobody_sh "mkdir '$SLICE/c$i'" || fail "nobody: mkdir c$i"
done
eq "nobody: a 6th cgroup is refused: EDQUOT" "EDQUOT" \
	"$(su nobody -s /bin/bash -c 'exec "$0" errno mkdir "$1"' "$MCGTOOL" "$SLICE/c5")"
eq "... nothing made" "" "$(ls -d "$SLICE/c5" 2>/dev/null)"
ok "root meanwhile makes its own" mkdir "$MNT/rootcg"
as_nobody_sh "rmdir '$SLICE/c4'"
eq "an rmdir makes room" "OK" "$(su nobody -s /bin/bash -c 'exec "$0" errno mkdir "$1"' "$MCGTOOL" "$SLICE/c5")"
chown root "$SLICE/c5"
eq "... counted by its maker, whoever owns it: still full" "EDQUOT" \
	"$(su nobody -s /bin/bash -c 'exec "$0" errno mkdir "$1"' "$MCGTOOL" "$SLICE/c6")"
rmdir "$SLICE/c5"
eq "... and root's rmdir of it gives the room back" "OK" \
	"$(su nobody -s /bin/bash -c 'exec "$0" errno mkdir "$1"' "$MCGTOOL" "$SLICE/c6")"

# ---- requests set aside: blocked trace_pipe reads ----
su nobody -s /bin/bash -c "exec timeout 20 cat '$MNT/trace_pipe'" >/dev/null 2>&1 & R1=$!
su nobody -s /bin/bash -c "exec timeout 20 cat '$MNT/trace_pipe'" >/dev/null 2>&1 & R2=$!
sleep 0.5
OUT=$(su nobody -s /bin/bash -c "timeout 5 cat '$MNT/trace_pipe'; echo \"status \$?\"" 2>&1)
match "nobody: a 3rd blocked trace_pipe read is refused at once: EAGAIN" \
	"Resource temporarily unavailable" "$OUT"
match "... (cat fails, no timeout)" "^status 1$" "$(echo "$OUT" | tail -n1)"
timeout 1 cat "$MNT/trace_pipe" >/dev/null 2>&1
eq "root meanwhile blocks in its read (until the timeout)" 124 "$?"
kill "$R1" "$R2" 2>/dev/null
wait "$R1" "$R2" 2>/dev/null
for i in $(seq 1 50); do
	timeout 1 su nobody -s /bin/bash -c "exec cat '$MNT/trace_pipe'" >/dev/null 2>&1
	[ $? = 124 ] && break
done
eq "the reads ended, nobody blocks again" 124 "$(timeout 1 su nobody -s /bin/bash -c "exec cat '$MNT/trace_pipe'" >/dev/null 2>&1; echo $?)"
finish
