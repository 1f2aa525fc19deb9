/* SPDX-License-Identifier: MIT */
/*
 * conf: memcgfs's configuration. An INI file (libinih) and command-line
 * overrides fill one struct memcgfs_config that the other modules read.
 *
 * Every key is described once, in the table in conf.c; that table drives
 * defaults, loading, overrides, validation and formatting. The struct is
 * plain data: nothing here locks, the daemon fills it before it starts its
 * threads and treats it as read-only afterwards.
 */
#ifndef MEMCGFS_CONF_H
#define MEMCGFS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct memcgfs_config - the effective configuration
 * @machine.memory:      bytes of emulated RAM (the arena); a multiple of
 *                       the largest buddy block, @machine.page_size << 10
 * @machine.page_size:   PAGE_SIZE, a power of two
 * @machine.cpus:        number of CPU slots; 0 means "the host's online
 *                       CPUs", resolved by the user of the struct
 * @machine.nodes:       number of NUMA nodes
 * @machine.cache_line:  cache_line_size(), used by SLAB_HWCACHE_ALIGN
 * @slab.min_order:      slub_min_order
 * @slab.max_order:      slub_max_order
 * @slab.min_objects:    slub_min_objects; 0 means the kernel's automatic
 *                       rule, 4 * (fls(nr_cpus) + 1)
 * @fs.threads:         FUSE worker threads (fuse_loop_cfg max_threads)
 * @fs.ctl_mode:        memcgfs.ctl's permission bits, in octal ("0666")
 * @fs.root_subtree_control: the root's cgroup.subtree_control at mount,
 *                       "memory" (as a systemd host) or "" (a fresh mount)
 * @fs.allow_other:     as root, mount with allow_other and
 *                       default_permissions (every user, under the modes)
 * @fs.max_handles_per_uid: live memcgfs.ctl handles one non-root uid may
 *                       hold; 0 means "1% of the host's RAM in handle
 *                       entries", resolved by the user of the struct
 * @fs.max_sessions_per_uid: open memcgfs.ctl file descriptions one non-root
 *                       uid may hold; 0 means "1% of the host's RAM in
 *                       sessions with a full reply", resolved likewise
 * @fs.max_cgroups_per_uid: live cgroups one non-root uid may have made
 *                       (mkdir: EDQUOT past it); 0: 1% of the host's RAM
 *                       at 16 KiB a cgroup, resolved likewise
 * @fs.max_waiting_per_uid: requests of one non-root uid the daemon may hold
 *                       set aside (blocked trace_pipe reads, memory.reclaim
 *                       writes, reads waiting for a real-memory sample;
 *                       EAGAIN past it); 0: 1% of the host's RAM at 1 KiB
 *                       a request, resolved likewise
 * @fs.max_open_per_uid: open files of the mount (any file, memcgfs.ctl
 *                       too) one non-root uid may hold (open: EMFILE past
 *                       it); 0: 1% of the host's RAM at the handle and
 *                       8 KiB an open file, resolved likewise
 * @trace.buffer_events: capacity of the trace buffer, in events
 */
struct memcgfs_config {
	struct {
		uint64_t memory;
		unsigned int page_size;
		unsigned int cpus;
		unsigned int nodes;
		unsigned int cache_line;
	} machine;
	struct {
		unsigned int min_order;
		unsigned int max_order;
		unsigned int min_objects;
	} slab;
	struct {			/* laid out without padding (tests memcmp it) */
		bool high_throttle;
		bool real_memory;
		char oom_kill_signal[22];
		unsigned int charge_batch;
		unsigned int real_interval;	/* ms */
	} memcg;
	struct {
		unsigned int threads;
		unsigned int max_handles_per_uid;	/* 0: 1% of the host's RAM */
		unsigned int max_sessions_per_uid;	/* 0: 1% of the host's RAM */
		unsigned int max_cgroups_per_uid;	/* 0: 1% of the host's RAM */
		unsigned int max_waiting_per_uid;	/* 0: 1% of the host's RAM */
		unsigned int max_open_per_uid;		/* 0: 1% of the host's RAM */
		char ctl_mode[16];		/* with root_subtree_control: no padding */
		char root_subtree_control[14];	/* sized so the struct has no padding */
		bool allow_other;
		bool user_slices;
	} fs;
	struct {
		uint32_t buffer_events;
	} trace;
};

/**
 * conf_defaults() - fill @c with the built-in defaults
 * @c: configuration to overwrite
 *
 * The defaults are those documented in conf/memcgfs.ini: 1G of memory,
 * 4096-byte pages, cpus 0 (online CPUs), 1 node, 64-byte cache lines, slab
 * orders 0..3 with automatic min_objects, 10 FUSE threads, memcgfs.ctl
 * 0666, "memory" in the root's subtree_control, allow_other, 65536 trace
 * events.
 */
void conf_defaults(struct memcgfs_config *c);

/**
 * conf_load() - load an INI file over the current values of @c
 * @c:      configuration to update
 * @path:   INI file to read
 * @err:    buffer for a message on failure (may be NULL if @errlen is 0)
 * @errlen: size of @err
 *
 * Keys not named in the file keep their current values. A later line that
 * sets a key again overrides the earlier one. Unknown sections or keys,
 * malformed or out-of-range values, empty numeric values and syntax errors
 * are errors, reported as "FILE:LINE: reason" for the first one in the file.
 * After the whole file has been read, conf_validate() checks the cross-field
 * rules; its failures are reported as "FILE: reason".
 *
 * @c is changed only on success.
 *
 * Return: 0 on success; -EINVAL for any error in the file's contents; the
 * negative errno of fopen() (-ENOENT, -EACCES, ...) or of a read error.
 */
int conf_load(struct memcgfs_config *c, const char *path, char *err,
	      size_t errlen);

/**
 * conf_set() - set one key from a command-line style override
 * @c:      configuration to update
 * @key:    "KEY" or "SECTION.KEY" (keys are unique across sections)
 * @value:  the value, in the same syntax as in the INI file
 * @err:    buffer for a message on failure (may be NULL if @errlen is 0)
 * @errlen: size of @err
 *
 * Checks the value's syntax and the key's own range, but not the rules that
 * relate several keys: set every override, then call conf_validate().
 * @c is changed only on success.
 *
 * Return: 0 on success; -EINVAL for an unknown key ("unknown key 'x'") or a
 * malformed value; -ERANGE for a value out of the key's range.
 */
int conf_set(struct memcgfs_config *c, const char *key, const char *value,
	     char *err, size_t errlen);

/**
 * conf_validate() - check every key's range and the cross-field rules
 * @c:      configuration to check
 * @err:    buffer for a message on failure (may be NULL if @errlen is 0)
 * @errlen: size of @err
 *
 * Cross-field rules: machine.memory is a multiple of the largest buddy
 * block (machine.page_size << 10); slab.max_order >= slab.min_order.
 *
 * Return: 0 if @c is valid, else -EINVAL with the reason in @err.
 */
int conf_validate(const struct memcgfs_config *c, char *err, size_t errlen);

/**
 * conf_parse_size() - parse a byte count
 * @s:   decimal digits with at most one suffix K, M or G (or k, m, g; binary,
 *       steps of 1024), with optional whitespace around it
 * @out: the value, written only on success
 *
 * Return: 0 on success; -EINVAL if @s is empty or malformed ("-1", "1.5G",
 * "1KB", "0x10"); -ERANGE if the value does not fit in 64 bits.
 */
int conf_parse_size(const char *s, uint64_t *out);

/**
 * conf_format() - write the configuration as an INI text
 * @c:   configuration to write
 * @buf: output buffer (may be NULL if @len is 0)
 * @len: size of @buf
 *
 * Every section and every key, one per line, in a form conf_load() reads
 * back to the same values. The output is NUL-terminated whenever @len > 0.
 *
 * Return: the length of the full text, excluding the NUL, as snprintf():
 * the text was truncated if the return value is >= @len.
 */
int conf_format(const struct memcgfs_config *c, char *buf, size_t len);

/**
 * conf_signal() - memcg.oom_kill_signal as a signal number
 * @name: "none" (0), a name such as "SIGKILL" or "KILL", or a number 1..64
 *
 * Return: the signal number, 0 for none, or -EINVAL.
 */
int conf_signal(const char *name);

#endif /* MEMCGFS_CONF_H */
