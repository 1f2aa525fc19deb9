#!/usr/bin/env bash
# Every file's presence, mode and format: the root, a child with memory
# (its parent's subtree_control has it), a child without; the kernel's
# modes; reads and writes as kernfs does them.
. "$(dirname "$0")/lib.sh"

mount_fs -o memory=64M

# "MODE NAME" of every file (not the child directories), sorted
listing() { (cd "$1" && find . -maxdepth 1 -type f -printf '%m %P\n' | sort -k2); }

ROOT_FILES='444 cgroup.controllers
644 cgroup.max.depth
644 cgroup.max.descendants
644 cgroup.pressure
644 cgroup.procs
444 cgroup.stat
644 cgroup.subtree_control
644 cgroup.threads
644 cpu.pressure
444 cpu.stat
444 cpu.stat.local
644 io.pressure
644 memcgfs.arena
400 memcgfs.check
666 memcgfs.ctl
600 memcgfs.fault
444 memory.numa_stat
644 memory.pressure
200 memory.reclaim
444 memory.stat
644 memory.zswap.writeback
444 slabinfo
444 trace_pipe
644 tracing_on'

CORE_CHILD='444 cgroup.controllers
444 cgroup.events
644 cgroup.freeze
200 cgroup.kill
644 cgroup.max.depth
644 cgroup.max.descendants
644 cgroup.pressure
644 cgroup.procs
444 cgroup.stat
444 cgroup.stat.local
644 cgroup.subtree_control
644 cgroup.threads
644 cgroup.type
644 cpu.pressure
444 cpu.stat
444 cpu.stat.local
644 io.pressure'

MEMORY_CHILD='444 memory.current
444 memory.events
444 memory.events.local
644 memory.high
644 memory.low
644 memory.max
644 memory.min
444 memory.numa_stat
644 memory.oom.group
644 memory.peak
644 memory.pressure
200 memory.reclaim
444 memory.stat
444 memory.swap.current
444 memory.swap.events
644 memory.swap.high
644 memory.swap.max
644 memory.swap.peak
444 memory.zswap.current
644 memory.zswap.max
644 memory.zswap.writeback'

eq "root: files and modes" "$ROOT_FILES" "$(listing "$MNT")"
mkdir "$MNT/a" "$MNT/a/b"
eq "child with memory: files and modes" "$(printf '%s\n%s\n' "$CORE_CHILD" "$MEMORY_CHILD" | sort -k2)" "$(listing "$MNT/a")"
eq "child without memory: core files and memory.pressure" \
	"$(printf '%s\n644 memory.pressure\n' "$CORE_CHILD" | sort -k2)" "$(listing "$MNT/a/b")"
eq "directories: 755 as mkdir made them, owned by the creator" "755 0 0" "$(stat -c '%a %u %g' "$MNT/a")"
eq "files: size 0" "0" "$(stat -c %s "$MNT/a/memory.stat")"
eq "inode numbers are stable" "$(stat -c %i "$MNT/a/memory.max")" "$(ls -i "$MNT/a" | awk '$2 == "memory.max" { print $1 }')"

# core formats
eq "root cgroup.controllers" "memory" "$(cat "$MNT/cgroup.controllers")"
eq "root cgroup.subtree_control" "memory" "$(cat "$MNT/cgroup.subtree_control")"
eq "child cgroup.controllers: the parent's subtree_control" "memory" "$(cat "$MNT/a/cgroup.controllers")"
eq "empty cgroup.controllers reads 0 bytes" "0" "$(cat "$MNT/a/b/cgroup.controllers" | wc -c)"
eq "empty cgroup.subtree_control reads 0 bytes" "0" "$(cat "$MNT/a/cgroup.subtree_control" | wc -c)"
eq "cgroup.type" "domain" "$(cat "$MNT/a/cgroup.type")"
eq "cgroup.events" "$(printf 'populated 0\nfrozen 0')" "$(cat "$MNT/a/cgroup.events")"
eq "root cgroup.stat" "$(printf 'nr_descendants 2\nnr_subsys_memory 2\nnr_dying_descendants 0\nnr_dying_subsys_memory 0')" "$(cat "$MNT/cgroup.stat")"
eq "child cgroup.stat" "$(printf 'nr_descendants 1\nnr_subsys_memory 1\nnr_dying_descendants 0\nnr_dying_subsys_memory 0')" "$(cat "$MNT/a/cgroup.stat")"
eq "cgroup.stat without memory" "$(printf 'nr_descendants 0\nnr_subsys_memory 0\nnr_dying_descendants 0\nnr_dying_subsys_memory 0')" "$(cat "$MNT/a/b/cgroup.stat")"
eq "cgroup.stat.local" "frozen_usec 0" "$(cat "$MNT/a/cgroup.stat.local")"
eq "cgroup.max.depth" "max" "$(cat "$MNT/a/cgroup.max.depth")"
eq "cgroup.max.descendants" "max" "$(cat "$MNT/cgroup.max.descendants")"
eq "cgroup.freeze" "0" "$(cat "$MNT/a/cgroup.freeze")"
eq "cgroup.pressure" "1" "$(cat "$MNT/a/cgroup.pressure")"
match "cpu.stat keys" "^usage_usec [0-9]+ user_usec [0-9]+ system_usec [0-9]+ nice_usec [0-9]+$" "$(cat "$MNT/a/cpu.stat" | tr '\n' ' ' | sed 's/ $//')"
match "root cpu.stat counts the machine" "^usage_usec [1-9]" "$(cat "$MNT/cpu.stat")"
eq "cpu.stat.local without the cpu controller: empty" "" "$(cat "$MNT/a/cpu.stat.local")"
PSI='^some avg10=[0-9]+\.[0-9]{2} avg60=[0-9]+\.[0-9]{2} avg300=[0-9]+\.[0-9]{2} total=[0-9]+ full avg10=[0-9]+\.[0-9]{2} avg60=[0-9]+\.[0-9]{2} avg300=[0-9]+\.[0-9]{2} total=[0-9]+$'
for f in cpu io memory; do
	match "$f.pressure: PSI format (root)" "$PSI" "$(cat "$MNT/$f.pressure" | tr '\n' ' ' | sed 's/ $//')"
	match "$f.pressure: PSI format (child)" "$PSI" "$(cat "$MNT/a/b/$f.pressure" | tr '\n' ' ' | sed 's/ $//')"
done
eq "cgroup.procs of an empty cgroup" "" "$(cat "$MNT/a/cgroup.procs")"
match "root cgroup.procs: host processes" "^1$" "$(cat "$MNT/cgroup.procs")"
match "root cgroup.threads: host threads" "^1$" "$(cat "$MNT/cgroup.threads")"

# memory formats
eq "memory.current of a new cgroup" "0" "$(cat "$MNT/a/memory.current")"
for f in min low; do eq "memory.$f default" "0" "$(cat "$MNT/a/memory.$f")"; done
for f in high max swap.high swap.max zswap.max; do eq "memory.$f default" "max" "$(cat "$MNT/a/memory.$f")"; done
eq "memory.oom.group default" "0" "$(cat "$MNT/a/memory.oom.group")"
eq "memory.zswap.writeback default" "1" "$(cat "$MNT/a/memory.zswap.writeback")"
EVENTS=$(printf 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\nsock_throttled 0')
eq "memory.events" "$EVENTS" "$(cat "$MNT/a/memory.events")"
eq "memory.events.local" "$EVENTS" "$(cat "$MNT/a/memory.events.local")"
eq "memory.swap.events" "$(printf 'high 0\nmax 0\nfail 0')" "$(cat "$MNT/a/memory.swap.events")"
eq "memory.stat: the kernel's keys in order" \
	"anon file kernel kernel_stack pagetables sec_pagetables percpu sock vmalloc shmem" \
	"$(cut -d' ' -f1 "$MNT/a/memory.stat" | head -n 10 | tr '\n' ' ' | sed 's/ $//')"
match "memory.stat: slab after slab_unreclaimable" "slab_reclaimable [0-9]+ slab_unreclaimable [0-9]+ slab [0-9]+" "$(cat "$MNT/a/memory.stat" | tr '\n' ' ')"
match "memory.numa_stat: N0=" "^anon N0=0$" "$(cat "$MNT/a/memory.numa_stat")"
match "root memory.stat" "^anon [0-9]+$" "$(cat "$MNT/memory.stat")"
match "slabinfo: version 2.1" "^slabinfo - version: 2.1$" "$(cat "$MNT/slabinfo")"
match "slabinfo: the mem_cgroup cache" "^mem_cgroup " "$(cat "$MNT/slabinfo")"
eq "tracing_on starts at 0" "0" "$(cat "$MNT/tracing_on")"
eq "memcgfs.check on a quiet mount" "ok" "$(cat "$MNT/memcgfs.check")"
eq "memcgfs.check is not written" "EINVAL" "$(mcg errno write "$MNT/memcgfs.check" 1)"
ARENA=$(cat "$MNT/memcgfs.arena")
match "memcgfs.arena: pages_free" "^pages_free [1-9][0-9]*$" "$ARENA"
eq "memcgfs.arena: pages_total of 64M" "pages_total 16384" "$(echo "$ARENA" | grep pages_total)"
eq "memcgfs.arena: shrink" "OK" "$(mcg errno write "$MNT/memcgfs.arena" shrink)"
eq "memcgfs.arena: another word is EINVAL" "EINVAL" "$(mcg errno write "$MNT/memcgfs.arena" 1)"

# reads and writes as kernfs does them
eq "read of a write-only file: EINVAL" "EINVAL" "$(mcg errno read "$MNT/a/cgroup.kill")"
eq "read of memory.reclaim: EINVAL" "EINVAL" "$(mcg errno read "$MNT/a/memory.reclaim")"
eq "root writes a read-only file: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/cgroup.controllers" x)"
eq "write to memory.current: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.current" 1)"
eq "write of 4097 bytes: E2BIG" "E2BIG" "$(mcg errno write "$MNT/a/memory.max" "$(head -c 4097 /dev/zero | tr '\0' 1)")"
eq "write of 4096 bytes: parsed (garbage: EINVAL)" "EINVAL" "$(mcg errno write "$MNT/a/memory.max" "$(head -c 4096 /dev/zero | tr '\0' x)")"
eq "empty write: 0 bytes, nothing done" "OK" "$(mcg errno write "$MNT/a/memory.max" "")"
eq "memory.max still max" "max" "$(cat "$MNT/a/memory.max")"
echo 64M > "$MNT/a/memory.max"
eq "memory.max 64M" "67108864" "$(cat "$MNT/a/memory.max")"
echo 4097 > "$MNT/a/memory.max"
eq "memory.max rounds down to pages" "4096" "$(cat "$MNT/a/memory.max")"
eq "memory.max 1.5G: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.max" 1.5G)"
eq "memory.max Max: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.max" Max)"
echo max > "$MNT/a/memory.max"
eq "memory.max max" "max" "$(cat "$MNT/a/memory.max")"
eq "several writes on one fd: each parsed whole, position ignored" "$(printf 'OK\nOK\nOK')" \
	"$(mcg errno writefd "$MNT/a/memory.high" 1M 2M "3M
")"
eq "memory.high from the last write" "3145728" "$(cat "$MNT/a/memory.high")"
echo max > "$MNT/a/memory.high"
echo 1 > "$MNT/a/memory.oom.group"
eq "memory.oom.group 1" "1" "$(cat "$MNT/a/memory.oom.group")"
eq "memory.oom.group 2: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.oom.group" 2)"
eq "memory.reclaim garbage: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.reclaim" abc)"
eq "memory.reclaim 1M of nothing: EAGAIN" "EAGAIN" "$(mcg errno write "$MNT/a/memory.reclaim" 1M)"
eq "echo > truncates, then writes (O_TRUNC accepted)" "OK" "$(mcg errno truncate "$MNT/a/memory.low")"
for v in 5 0x10 010 max; do
	echo "$v" > "$MNT/a/cgroup.max.depth"
done
eq "cgroup.max.depth: base 0, then max" "max" "$(cat "$MNT/a/cgroup.max.depth")"
echo 0x10 > "$MNT/a/cgroup.max.descendants"
eq "cgroup.max.descendants 0x10" "16" "$(cat "$MNT/a/cgroup.max.descendants")"
echo max > "$MNT/a/cgroup.max.descendants"
eq "cgroup.max.depth -1: ERANGE" "ERANGE" "$(mcg errno write "$MNT/a/cgroup.max.depth" -1)"
eq "cgroup.max.depth abc: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/cgroup.max.depth" abc)"
eq "cgroup.max.depth empty line: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/cgroup.max.depth" "
")"
eq "cgroup.max.depth 2^31: ERANGE" "ERANGE" "$(mcg errno write "$MNT/a/cgroup.max.depth" 2147483648)"
eq "cgroup.freeze 2: ERANGE" "ERANGE" "$(mcg errno write "$MNT/a/cgroup.freeze" 2)"
eq "cgroup.freeze x: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/cgroup.freeze" x)"
eq "cgroup.kill 0: ERANGE" "ERANGE" "$(mcg errno write "$MNT/a/cgroup.kill" 0)"
eq "cgroup.pressure 2: ERANGE" "ERANGE" "$(mcg errno write "$MNT/a/cgroup.pressure" 2)"
eq "cgroup.type domain: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/cgroup.type" domain)"
eq "cgroup.events: EINVAL for root too" "EINVAL" "$(mcg errno write "$MNT/a/cgroup.events" 1)"
eq "tracing_on x: EINVAL" "EINVAL" "$(mcg errno write "$MNT/tracing_on" x)"
echo 1 > "$MNT/tracing_on"
eq "tracing_on 1" "1" "$(cat "$MNT/tracing_on")"
echo 0 > "$MNT/tracing_on"

# PSI triggers: one per fd; unprivileged windows are multiples of 2 s
eq "PSI trigger" "OK" "$(mcg errno write "$MNT/a/cpu.pressure" "some 150000 1000000")"
eq "PSI trigger: two on one fd: EBUSY" "$(printf 'OK\nEBUSY')" \
	"$(mcg errno writefd "$MNT/a/io.pressure" "some 150000 1000000" "full 150000 1000000")"
eq "PSI trigger: window 0: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.pressure" "some 1 0")"
eq "PSI trigger: threshold above window: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/cpu.pressure" "some 2000000 1000000")"
eq "PSI trigger: garbage: EINVAL" "EINVAL" "$(mcg errno write "$MNT/a/memory.pressure" "most 1 2")"
eq "memory.pressure trigger" "OK" "$(mcg errno write "$MNT/a/memory.pressure" "full 100000 2000000")"

# cgroup.pressure 0 hides the *.pressure files of that cgroup only
echo 0 > "$MNT/a/cgroup.pressure"
ok "cgroup.pressure 0: memory.pressure gone" test ! -e "$MNT/a/memory.pressure"
ok "cgroup.pressure 0: cpu.pressure gone" test ! -e "$MNT/a/cpu.pressure"
ok "cgroup.pressure 0: a child keeps its own" test -e "$MNT/a/b/io.pressure"
echo 1 > "$MNT/a/cgroup.pressure"
ok "cgroup.pressure 1: back" test -e "$MNT/a/io.pressure"

# -memory: the children's memory.* vanish at once; fds opened before: ENODEV
exec 5<"$MNT/a/memory.stat"
mkdir "$MNT/c"
echo -memory > "$MNT/cgroup.subtree_control"
ok "-memory: memory.max gone from the child" test ! -e "$MNT/a/memory.max"
ok "-memory: memory.pressure stays" test -e "$MNT/a/memory.pressure"
eq "-memory: the child's cgroup.controllers is empty" "" "$(cat "$MNT/a/cgroup.controllers")"
eq "-memory: an fd opened before: ENODEV" "ENODEV" "$(cat <&5 2>&1 >/dev/null | grep -o 'No such device' | sed 's/No such device/ENODEV/')"
exec 5<&-
eq "-memory: cgroup.stat counts the offlined memcgs as dying (or freed)" "nr_subsys_memory 1" "$(grep nr_subsys_memory "$MNT/cgroup.stat")"
echo +memory > "$MNT/cgroup.subtree_control"
ok "+memory: memory.max back" test -e "$MNT/a/memory.max"
eq "+memory: a new memcg, limits reset" "max" "$(cat "$MNT/a/memory.max")"
echo +memory > "$MNT/a/cgroup.subtree_control"
ok "+memory in a: b gets memory files" test -e "$MNT/a/b/memory.current"

# after rmdir, I/O through an earlier fd: ENODEV
mkdir "$MNT/gone"
exec 6<>"$MNT/gone/memory.max"
exec 7<>"$MNT/gone/cgroup.max.depth"
rmdir "$MNT/gone"
eq "after rmdir: read ENODEV" "ENODEV" "$(dd bs=64 count=1 <&6 2>&1 >/dev/null | grep -o 'No such device' | sed 's/No such device/ENODEV/')"
eq "after rmdir: write ENODEV" "ENODEV" "$( (echo 1M >&6) 2>&1 | grep -o 'No such device' | sed 's/No such device/ENODEV/')"
# a core file too (no memcg to have gone with it: the cgroup is removed)
eq "after rmdir: a core file's read ENODEV" "ENODEV" "$(dd bs=64 count=1 <&7 2>&1 >/dev/null | grep -o 'No such device' | sed 's/No such device/ENODEV/')"
eq "after rmdir: a core file's write ENODEV" "ENODEV" "$( (echo 5 >&7) 2>&1 | grep -o 'No such device' | sed 's/No such device/ENODEV/')"
exec 6<&- 7<&-

# delegation: chown and chmod of a cgroup and its files
chown 1000:1000 "$MNT/a" "$MNT/a/cgroup.procs"
eq "chown of a cgroup directory" "1000 1000" "$(stat -c '%u %g' "$MNT/a")"
eq "chown of cgroup.procs" "1000 1000" "$(stat -c '%u %g' "$MNT/a/cgroup.procs")"
eq "other files keep their owner" "0 0" "$(stat -c '%u %g' "$MNT/a/memory.max")"
chmod 600 "$MNT/a/memory.max"
eq "chmod of a control file (as kernfs allows)" "600" "$(stat -c '%a' "$MNT/a/memory.max")"
chmod 700 "$MNT/a"
eq "chmod of a cgroup directory" "700" "$(stat -c '%a' "$MNT/a")"
