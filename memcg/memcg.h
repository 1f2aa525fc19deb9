/* SPDX-License-Identifier: MIT */
/*
 * memcg: the memory controller of cgroup v2, on the emulated machine.
 *
 * The kernel's charging path in user space (6.16-era mm/memcontrol.c):
 * hierarchical page counters, a mem_cgroup per cgroup with the memory
 * controller, obj_cgroups that are reparented when a cgroup goes away,
 * per-CPU page stocks (memcg_stock) and byte stocks (obj_stock, charging
 * and slab statistics under one section), tasks with a cached objcg
 * pointer, and exact statistics.  It implements alloc's accounting hooks.
 *
 * No FUSE here: fs/ drives it.  Every cgroup file's content is formatted
 * by a function of this module, every write parsed and applied by one,
 * returning the kernel's errno (negative) for bad input.
 *
 * One memory controller per process, on top of alloc's machine:
 * memcg_init() after alloc_init(), memcg_exit() before alloc_exit().
 */
#ifndef MEMCGFS_MEMCG_H
#define MEMCGFS_MEMCG_H

#include "alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mem_cgroup;
struct obj_cgroup;
struct memcg_task;

#define MEMCG_CHARGE_BATCH	64u	/* default; the config may lower it */
#define NR_MEMCG_STOCK		7
#define PAGE_COUNTER_MAX	(LONG_MAX / 4096)	/* in pages, 4 KiB pages */

struct memcg_config {
	unsigned int charge_batch;	/* pages, 1..127 */
	bool high_throttle;		/* issue 4: memory.high delays */
	int oom_kill_signal;		/* issue 4: 0 = emulate only */
};
void memcg_config_defaults(struct memcg_config *cfg);

/*
 * memcg_init - the root memcg, the "mem_cgroup" kmem_cache, the per-CPU
 * stocks.  Needs alloc_init().  Returns 0, -EINVAL, -ENOMEM, -EBUSY.
 */
int memcg_init(const struct memcg_config *cfg);
/* memcg_exit - tear everything down (live objects are left to alloc_exit). */
void memcg_exit(void);

struct mem_cgroup *root_mem_cgroup(void);

/* ---- the tree ---- */
/*
 * mem_cgroup_create - a new memcg under parent (online).  Its per-CPU
 * statistics are charged to the parent as percpu and its other statistics
 * structures as slab, through the parent's objcg (nothing for the root).
 * Returns 0 and *out, or -ENOMEM (the parent's limits could not take it),
 * -ENODEV (parent offline).
 */
int mem_cgroup_create(struct mem_cgroup *parent, struct mem_cgroup **out);
/*
 * mem_cgroup_offline - rmdir: min/low reset, objcgs reparented to the
 * parent, stocks of the subtree drained.  The memcg stays (dying) while
 * pages charged directly to it remain; mem_cgroup_put() drops the caller's
 * reference (the one create returned).  Returns 0, -EBUSY (online
 * children or tasks), -EINVAL (the root).
 */
int mem_cgroup_offline(struct mem_cgroup *memcg);
/*
 * mem_cgroup_offline_check - what mem_cgroup_offline() would return, without
 * doing it: for a caller that takes several memcgs offline all or nothing.
 * Tasks only leave a memcg no cgroup points to, so a 0 stays true.
 */
int mem_cgroup_offline_check(struct mem_cgroup *memcg);
void mem_cgroup_get(struct mem_cgroup *memcg);
void mem_cgroup_put(struct mem_cgroup *memcg);
bool mem_cgroup_online(const struct mem_cgroup *memcg);
bool mem_cgroup_is_root(const struct mem_cgroup *memcg);
struct mem_cgroup *parent_mem_cgroup(const struct mem_cgroup *memcg);
unsigned short mem_cgroup_id(const struct mem_cgroup *memcg);

/*
 * memcg_reap_now - drain the stocks and free at once every memcg and objcg
 * that lost its last reference, without waiting for the grace period, until
 * none is left (for tests and teardown: only when no charge can be in
 * flight in another thread).
 */
void memcg_reap_now(void);

/* cgroup.stat counts: live and dying descendants that have a memcg. */
void mem_cgroup_descendants(const struct mem_cgroup *memcg,
			    unsigned long *nr_descendants, unsigned long *nr_dying);

/* ---- tasks ---- */
/*
 * A task is a client process: it charges the memcg it is attached to
 * (through its cached objcg pointer for kernel objects).  The calling thread
 * acts as 'current' after memcg_set_current(task); NULL means the daemon
 * itself (the root: nothing charged).
 */
struct memcg_task *memcg_task_create(pid_t pid, struct mem_cgroup *memcg);
/* Migrate: future charges go to memcg; nothing already charged moves. */
int memcg_task_attach(struct memcg_task *task, struct mem_cgroup *memcg);
/* Exit: the task's own pages (anon, kernel_stack, pagetables) are freed. */
void memcg_task_exit(struct memcg_task *task);
struct mem_cgroup *memcg_task_memcg(const struct memcg_task *task);
pid_t memcg_task_pid(const struct memcg_task *task);
unsigned long memcg_task_owned_pages(const struct memcg_task *task);
void memcg_set_current(struct memcg_task *task);
struct memcg_task *memcg_current(void);

/* ---- page charges by type ---- */
enum memcg_page_type {
	MEMCG_PAGE_ANON, MEMCG_PAGE_FILE, MEMCG_PAGE_SHMEM, MEMCG_PAGE_KERNEL_STACK,
	MEMCG_PAGE_PAGETABLES, MEMCG_PAGE_PERCPU, MEMCG_PAGE_SOCK, MEMCG_PAGE_VMALLOC,
	NR_MEMCG_PAGE_TYPES
};
const char *memcg_page_type_name(enum memcg_page_type type);
int memcg_page_type_parse(const char *name, enum memcg_page_type *type);

/*
 * memcg_alloc_pages - 2^order pages of a type for the current task, charged
 * to its memcg (anon/file/shmem/sock directly, the others through its
 * objcg) and counted in memory.stat; anon/file/shmem go on the LRU.
 * Root tasks' pages are not charged.  NULL with *err = -ENOMEM or -EINVAL.
 */
struct page *memcg_alloc_pages(enum memcg_page_type type, gfp_t gfp,
			       unsigned int order, int *err);
/* The allocation's id: memcg_free_pages() frees that allocation only. */
uint64_t memcg_page_id(const struct page *page);
/*
 * memcg_free_pages - free an allocation of memcg_alloc_pages() from any
 * context.  Returns 0, or -ENOENT when memcgfs already took it (reclaim, its
 * task's exit or OOM kill) or it is not allocation 'id' any more.
 */
int memcg_free_pages(struct page *page, uint64_t id);

/*
 * memcg_set_free_notify - called with the address of memory memcg frees on
 * its own, not at a client's request: the pages a task owned when it exits
 * (or is OOM-killed), objects reclaim takes from a shrinker.  fs/ makes
 * the handles of that memory stale.
 */
void memcg_set_free_notify(void (*fn)(const void *addr));

/* ---- drain ---- */
/*
 * memcg_drain - drain every CPU's memcg and obj stock, then return the
 * whole pages objcgs hold as leftover bytes (docs/design.md: exact numbers).
 */
void memcg_drain(void);

/* ---- reading and writing cgroup files ---- */
/*
 * Each memory file is a row of a table like the kernel's memory_files[]:
 * a format function writes the file's whole content into buf (at most len
 * bytes, NUL-terminated) and returns the full length (snprintf contract)
 * or a negative errno; a write function takes the written bytes (not
 * NUL-terminated) and returns 0 or a negative errno.  'priv' is the
 * per-open state (memory.peak's fd registration); see memcg_file_open.
 */
struct memcg_file;
struct memcg_open;

const struct memcg_file *memcg_file_lookup(const char *name);
const struct memcg_file *memcg_file_at(unsigned int i);	/* NULL past the end */
const char *memcg_file_name(const struct memcg_file *f);
unsigned int memcg_file_mode(const struct memcg_file *f);	/* 0444/0644/0200 */
bool memcg_file_on_root(const struct memcg_file *f);
bool memcg_file_on_child(const struct memcg_file *f);
bool memcg_file_notifies(const struct memcg_file *f);		/* poll/inotify */

/* Per-open state: created on open, freed on release. */
int memcg_file_open(const struct memcg_file *f, struct mem_cgroup *memcg,
		    struct memcg_open **out);
void memcg_file_release(struct memcg_open *o);
long memcg_file_read(struct memcg_open *o, char *buf, size_t len);
int memcg_file_write(struct memcg_open *o, const char *buf, size_t len, bool nonblock);

/* Direct accessors, for tests and fs/. */
unsigned long mem_cgroup_usage_pages(const struct mem_cgroup *memcg);
/* A memory.stat value by key (flushes first); -ENOENT for an unknown key. */
int memcg_stat_read(struct mem_cgroup *memcg, const char *key, unsigned long long *val);
/* Number of memory.stat keys and the key at position i, in the kernel's order. */
unsigned int memcg_stat_nr_keys(void);
const char *memcg_stat_key(unsigned int i);

/* ---- parsing, shared with fs/ ---- */
/*
 * page_counter_memparse - the kernel's: "max" (exactly) or a memparse()
 * number (base 0, one K/M/G/T/P/E suffix), in pages rounded down and capped
 * at PAGE_COUNTER_MAX; empty is 0.  buf is stripped of whitespace first.
 */
int page_counter_memparse(const char *buf, size_t len, const char *max,
			  unsigned long *nr_pages);

/* ---- events (issue 4 raises them; the callback is fs/'s poll hook) ---- */
enum memcg_memory_event {
	MEMCG_LOW, MEMCG_HIGH, MEMCG_MAX, MEMCG_OOM, MEMCG_OOM_KILL,
	MEMCG_OOM_GROUP_KILL, MEMCG_SOCK_THROTTLED, MEMCG_NR_MEMORY_EVENTS
};
/* Called when a notifying file of memcg changed: "memory.events", ... */
void memcg_set_notify(void (*fn)(struct mem_cgroup *memcg, const char *file, void *arg),
		      void *arg);
/* Opaque owner pointer (fs/'s cgroup) carried by the memcg. */
void mem_cgroup_set_owner(struct mem_cgroup *memcg, void *owner);
void *mem_cgroup_owner(const struct mem_cgroup *memcg);

/* ---- limits: reclaim, OOM, memory.high, pressure ---- */
/*
 * A shrinker frees reclaimable objects (SLAB_RECLAIM_ACCOUNT caches,
 * __GFP_RECLAIMABLE kmallocs) charged to one memcg (not its descendants:
 * reclaim visits each) when reclaim asks, oldest first; it frees them with kfree/kmem_cache_free (so the
 * trace records it) and makes their handles stale.  Returns objects freed.
 */
struct shrinker {
	unsigned long (*count_objects)(struct shrinker *s, struct mem_cgroup *memcg);
	unsigned long (*scan_objects)(struct shrinker *s, struct mem_cgroup *memcg,
				      unsigned long nr_to_scan);
	void *private_data;
	struct shrinker *next;
};
void register_shrinker(struct shrinker *s);
void unregister_shrinker(struct shrinker *s);

/* The memcg an object is charged to now (after reparenting); NULL if none. */
struct mem_cgroup *mem_cgroup_from_obj(const void *obj);
/* The memcg an objcg charges now (its own, or an ancestor after reparenting). */
struct mem_cgroup *obj_cgroup_memcg(struct obj_cgroup *objcg);
bool mem_cgroup_is_descendant(const struct mem_cgroup *memcg, const struct mem_cgroup *root);

/*
 * try_to_free_mem_cgroup_pages - reclaim up to nr_pages from memcg's
 * subtree: inactive then active file pages, then reclaimable slab through
 * the shrinkers; never anon (no swap).  Effective memory.min protects
 * fully, memory.low until nothing else is left (the low event).  Returns
 * the pages reclaimed.
 */
unsigned long try_to_free_mem_cgroup_pages(struct mem_cgroup *memcg, unsigned long nr_pages,
					   gfp_t gfp, bool proactive);

/*
 * After a request: the charges of 'task' that went over memory.high are
 * handled as on the kernel's return to user space: high events, reclaim,
 * and the penalty delay (the kernel's curve, at most 2 s; 0 under 10 ms or
 * with memcg.high_throttle off).  Returns the delay in ns for fs/ to apply
 * without blocking a worker; memcg_task_stall_begin/end bracket it (PSI).
 */
uint64_t memcg_handle_over_high(struct memcg_task *task);
unsigned long memcg_task_pages_over_high(const struct memcg_task *task);
void memcg_task_stall_begin(struct memcg_task *task);
void memcg_task_stall_end(struct memcg_task *task);
/* A request of the task is being served (PSI 'full': all active tasks stall). */
void memcg_task_active(struct memcg_task *task, bool active);

/*
 * OOM: the victim's real process.  Defaults read /proc/PID/oom_score_adj
 * and kill(2) with memcg.oom_kill_signal when it is set.  The notify
 * callback runs after a task was OOM-killed (its owned pages are freed).
 */
struct memcg_oom_ops {
	int (*oom_score_adj)(pid_t pid);
	void (*killed)(struct memcg_task *task, void *arg);
	void *arg;
};
void memcg_set_oom_ops(const struct memcg_oom_ops *ops);
bool memcg_task_oom_killed(const struct memcg_task *task);
void memcg_task_set_oom_score_adj(struct memcg_task *task, int adj);	/* tests */

/*
 * memory.pressure of memcg ("some"/"full" with avg10/avg60/avg300 and
 * total in µs).  Triggers are written to the file (memcg_file_write) and
 * polled with memcg_file_poll.
 */
int memcg_pressure_format(struct mem_cgroup *memcg, char *buf, size_t len);
/* POLLPRI pending for this open file (a PSI trigger fired, for memory.pressure). */
bool memcg_file_poll(struct memcg_open *o);
/* The opener may use any PSI trigger window (CAP_SYS_RESOURCE); default no. */
void memcg_file_set_privileged(struct memcg_open *o, bool privileged);

/*
 * The arena itself is full: reclaim from the whole tree, then OOM from the
 * root (installed as alloc's out-of-memory handler by memcg_init).
 */
bool memcg_global_oom(unsigned int order, gfp_t gfp);

/* ---- invariants ---- */
/*
 * memcg_check - every page counter equals its own charges plus its
 * children's (stocks included), objcg and memcg references consistent.
 * Quiescent callers only.  0 or -EUCLEAN with a message.
 */
int memcg_check(char *msg, size_t len);

#endif /* MEMCGFS_MEMCG_H */
