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

#include <pthread.h>
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
	bool real_memory;		/* member processes' real memory is charged */
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
 * memcg_reap_now - drain the stocks and wait until every memcg and objcg
 * that lost its last reference is freed (their RCU grace periods and
 * callbacks, and the frees those cause), for tests and teardown: only when
 * no charge can be in flight in another thread.  Not inside a read-side
 * section.
 */
void memcg_reap_now(void);
/*
 * memcg_wait_frees - wait until no free is queued behind RCU: those queued
 * already, those they queue, and any another thread queues meanwhile (the
 * wait ends when the count of queued frees is zero).  The stocks stay as
 * they are.  A free uncharges (a memcg's statistics, an objcg's leftover
 * bytes): a check of the counters is exact only once none is running.
 * Not inside a read-side section, nor holding a memcg lock (tree_lock,
 * objcg_lock, the statistics lock), which the frees take.
 */
void memcg_wait_frees(void);
/*
 * A read-side section (the kernel's rcu_read_lock()): a memcg or objcg
 * found inside it without a reference stays allocated until it ends.  Any
 * thread; no sleeping on the daemon's locks inside.
 */
void memcg_rcu_read_lock(void);
void memcg_rcu_read_unlock(void);
/*
 * A fork() not followed by exec() in a process whose memcgs were freed
 * through RCU: memcg_before_fork() in the parent before it,
 * memcg_after_fork() in both after it (liburcu's call_rcu_before_fork; not
 * as pthread_atfork handlers, which liburcu advises against).  The child
 * stays single-threaded: its frees wait for memcg_reap_now().
 */
void memcg_before_fork(void);
void memcg_after_fork(bool child);

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
/*
 * memcg_set_signal - the calling thread's "signal pending" flag (NULL:
 * none), polled where the kernel polls signal_pending(current): a
 * memory.reclaim write then fails with -EINTR between its batches.
 */
void memcg_set_signal(const _Atomic bool *pending);
struct memcg_task *memcg_current(void);

/* ---- page charges by type ---- */
enum memcg_page_type {
	MEMCG_PAGE_ANON, MEMCG_PAGE_FILE, MEMCG_PAGE_SHMEM, MEMCG_PAGE_KERNEL_STACK,
	MEMCG_PAGE_PAGETABLES, MEMCG_PAGE_PERCPU, MEMCG_PAGE_SOCK, MEMCG_PAGE_VMALLOC,
	NR_MEMCG_PAGE_TYPES
};
/*
 * The page types' names (memcg/page_type.c), a library of their own,
 * memcg_names, that needs nothing else of memcg: libmemcgfs links it alone.
 * memcg_page_type_name - NULL outside the enum; memcg_page_type_parse -
 * the exact name, else -EINVAL.
 */
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
 * memcg_mark_page_accessed - a client references allocation 'id' again
 * (the kernel's folio_mark_accessed): the second reference of an inactive
 * LRU page activates it (pgactivate).  Returns 0, or -ENOENT as
 * memcg_free_pages().
 */
int memcg_mark_page_accessed(struct page *page, uint64_t id);

/*
 * memcg_set_free_notify - called with the address of memory memcg frees on
 * its own, not at a client's request: the pages a task owned when it exits
 * (or is OOM-killed), objects reclaim takes from a shrinker.  fs/ makes
 * the handles of that memory stale.
 */
void memcg_set_free_notify(void (*fn)(const void *addr));

/*
 * memcg_kmem_charge_bytes - charge size bytes of the daemon's own memory,
 * kept outside the arena for an object the current task made (memcgfs.ctl's
 * handle entries), to current's objcg as the kernel charges an accounted
 * kernel object: through the obj_stock, in kernel and slab_unreclaimable
 * of memory.stat, bounded by memory.max (reclaim, OOM, -ENOMEM as gfp
 * says).  *objcgp: what memcg_kmem_uncharge_bytes takes back the same
 * bytes from, NULL when nothing was charged (a task of the root cgroup, or
 * no current task: not accounted, as in the kernel).  The charged bytes
 * keep the objcg alive, as an object's do.
 */
int memcg_kmem_charge_bytes(gfp_t gfp, size_t size, struct obj_cgroup **objcgp);
void memcg_kmem_uncharge_bytes(struct obj_cgroup *objcg, size_t size);

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
bool memcg_file_shows_usage(const struct memcg_file *f);	/* current, stat, events... */

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

/*
 * list_lru (list_lru.c, the kernel's mm/list_lru.c): a shrinker's objects on
 * one list per obj_cgroup, oldest first, so that reclaim of a memcg walks
 * only the objects charged to it (objects charged to nobody are the root's).
 * An item is named by a 32-bit id of its owner (an index into its table)
 * and links through a struct list_lru_node that the owner embeds in it and
 * that node(id) finds.  The owner's lock (lock) guards the lists and the
 * items' state alike: list_lru_count_one, list_lru_walk_one and
 * list_lru_count take it, every other call is made with it held.  An item
 * on a list is counted while it is live (the walk may isolate it): the owner
 * says which at add and del and when it changes (list_lru_set_live).
 */
struct list_lru_one;
struct list_lru_node {
	uint32_t prev, next;		/* on its list: ids + 1, 0 at the ends */
	struct list_lru_one *list;	/* its objcg's list (referenced), or NULL */
};
#define LIST_LRU_BUCKETS	256u
struct list_lru {
	pthread_mutex_t *lock;				/* the owner's */
	struct list_lru_node *(*node)(uint32_t id);
	struct list_lru_one *hash[LIST_LRU_BUCKETS];	/* lists by objcg */
	struct list_lru_one *lists;			/* every list */
	unsigned long nr_items;				/* on a list, live or not */
};
/* The item's list for objcg (made if new, referenced); -ENOMEM. */
int list_lru_attach(struct list_lru *lru, struct list_lru_node *n, struct obj_cgroup *objcg);
/* Off its list if on it (live: it was counted), the list's reference dropped. */
void list_lru_detach(struct list_lru *lru, uint32_t id, bool live);
/* An attached item to its list's tail (the newest). */
void list_lru_add(struct list_lru *lru, uint32_t id, bool live);
bool list_lru_on_list(const struct list_lru *lru, const struct list_lru_node *n);
/* An item's liveness changed (counted if it is on a list). */
void list_lru_set_live(struct list_lru *lru, const struct list_lru_node *n, bool live);
/* Live items whose objcg charges memcg now (for the root, also nobody's). */
unsigned long list_lru_count_one(struct list_lru *lru, struct mem_cgroup *memcg);
/*
 * list_lru_walk_one - memcg's lists from their oldest item, isolate(id)
 * called on each until nr_to_walk items were isolated (isolate returns true
 * for those it took; it runs with the lock held).  Returns the number taken.
 */
unsigned long list_lru_walk_one(struct list_lru *lru, struct mem_cgroup *memcg,
				bool (*isolate)(uint32_t id, void *arg), void *arg,
				unsigned long nr_to_walk);
/* Items on a list, live or not. */
unsigned long list_lru_count(struct list_lru *lru);
/* Every list freed (the items are the owner's to forget). */
void list_lru_destroy(struct list_lru *lru);
/*
 * list_lru_check - every list well linked (max_id bounds a walk) and its
 * live count true (live(id) says): 0, or -EUCLEAN and the first violation.
 * *listed: the items found on the lists; *refs: the lists' references,
 * which are the attached items.
 */
int list_lru_check(const struct list_lru *lru, bool (*live)(uint32_t id), uint32_t max_id,
		   uint32_t *listed, uint32_t *refs, char *msg, size_t len);

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
#define MEMCG_MAX_HIGH_DELAY_NS	(2000ull * 1000 * 1000)
/*
 * memcg_owe_over_high - the same reclaim after a request whose reply
 * cannot wait (a text write holds the kernel's inode lock: every writer
 * of memcgfs.ctl would wait with it); the delay stays owed by the task,
 * at most 2 s, and memcg_handle_over_high() later returns it.  True if
 * the task owes a delay now.
 */
bool memcg_owe_over_high(struct memcg_task *task);
unsigned long memcg_task_pages_over_high(const struct memcg_task *task);
void memcg_task_stall_begin(struct memcg_task *task);
void memcg_task_stall_end(struct memcg_task *task);
/* A request of the task is being served (PSI 'full': all active tasks stall). */
void memcg_task_active(struct memcg_task *task, bool active);

/*
 * OOM: the victim's real process.  memcg/ does no process work itself:
 * fs/ reads oom_score_adj and sends signals (through the process's pidfd)
 * for it.  oom_score_adj (NULL: 0) is asked for each candidate; kill (NULL:
 * no signal) gets memcg.oom_kill_signal, or SIGKILL for a task with real
 * memory, whose memory only its death frees; it returns 0 or -ESRCH (the
 * process is gone).  killed runs after a task was OOM-killed (its owned
 * pages are freed).
 */
struct memcg_oom_ops {
	int (*oom_score_adj)(pid_t pid);
	int (*kill)(struct memcg_task *task, int sig, void *arg);
	void (*killed)(struct memcg_task *task, void *arg);
	void *arg;
};
void memcg_set_oom_ops(const struct memcg_oom_ops *ops);
bool memcg_task_oom_killed(const struct memcg_task *task);
void memcg_task_set_oom_score_adj(struct memcg_task *task, int adj);	/* tests */
/* Never an OOM victim (the kernel's is_global_init(); the daemon itself). */
void memcg_task_set_unkillable(struct memcg_task *task);

/* ---- real memory (memcg.real_memory) ---- */
/*
 * fs/ measures member processes and the files they use; memcg/ decides
 * what that charges where (real.c says how).  Real charges cannot be
 * refused: past memory.max they are forced and raise 'max', and
 * memcg_real_enforce() reclaims and OOM-kills as the charge would have.
 */
#define MEMCG_KERNEL_STACK_SIZE	16384	/* THREAD_SIZE on x86_64 and arm64 */

/* A process as measured: resident pages by kind, page-table pages, threads. */
struct memcg_real_usage {
	unsigned long anon, shmem, file_rss, pagetables;
	unsigned long threads;
};
/*
 * memcg_real_task_update - charge the task's growth since the last update
 * to its memcg now; take a shrink back from where it was charged, the
 * newest charges first.  The task is 'current' while it charges (so
 * memory.high leaves it pages to pay back: memcg_handle_over_high()).
 * Returns 0, or -ESRCH for a task that exited or was OOM-killed (nothing
 * is charged for it any more).
 */
int memcg_real_task_update(struct memcg_task *task, const struct memcg_real_usage *u);
/* What is charged for the task now (threads: whole stacks charged). */
void memcg_real_task_charged(struct memcg_task *task, struct memcg_real_usage *u);

/* A file's page cache: cached pages, of which dirty and under writeback. */
struct memcg_real_cache {
	unsigned long cached, dirty, writeback;
};
struct memcg_real_file;
/*
 * memcg_real_file_create - a file first used by a member: charged to the
 * task's memcg from now on; the 'cached' pages it has already are someone
 * else's.  priv is fs/'s, handed to the ops.  NULL on ENOMEM.
 * Calls on one file (update, reference, release, and the reclaim op) must
 * not run concurrently: fs/ serialises them.
 */
struct memcg_real_file *memcg_real_file_create(struct memcg_task *task, unsigned long cached,
					       void *priv);
/* A new measurement; reclaimed: memcgfs dropped pages (they were its own). */
void memcg_real_file_update(struct memcg_real_file *f, const struct memcg_real_cache *c,
			    bool reclaimed);
/* A member used the file again: the second reference activates it. */
void memcg_real_file_reference(struct memcg_real_file *f);
/* Uncharge everything and forget the file; ops.release(priv) follows at the last reference. */
void memcg_real_file_release(struct memcg_real_file *f);
/* A reference that keeps the file (and ops' priv) alive: while fs/ works on it. */
void memcg_real_file_get(struct memcg_real_file *f);
void memcg_real_file_put(struct memcg_real_file *f);
struct mem_cgroup *memcg_real_file_memcg(const struct memcg_real_file *f);
unsigned long memcg_real_file_charged(const struct memcg_real_file *f);
bool memcg_real_file_active(const struct memcg_real_file *f);

struct memcg_real_ops {
	/*
	 * Drop up to nr pages of the file's cache (writing dirty ones back
	 * where the caller may wait), then report the cache as it is now with
	 * memcg_real_file_update(f, &c, true).  0 or -errno.
	 */
	int (*reclaim)(void *priv, struct memcg_real_file *f, unsigned long nr);
	void (*release)(void *priv);
};
void memcg_set_real_ops(const struct memcg_real_ops *ops);
/* memcg or an ancestor is over memory.max. */
bool memcg_real_over_max(struct mem_cgroup *memcg);
/* ... or a memcg below it. */
bool memcg_real_subtree_over_max(struct mem_cgroup *memcg);
/* memcg itself is over its memory.max (never the root). */
bool mem_cgroup_over_max(const struct mem_cgroup *memcg);
/*
 * memcg_real_enforce - memcg and its ancestors back under memory.max:
 * reclaim, then the OOM killer, until usage fits or nothing can be killed.
 * May wait for writeback: not on a FUSE worker.
 */
void memcg_real_enforce(struct mem_cgroup *memcg);

/*
 * memory.pressure of memcg ("some"/"full" with avg10/avg60/avg300 and
 * total in µs).  Triggers are written to the file (memcg_file_write) and
 * polled with memcg_file_poll.
 */
int memcg_pressure_format(struct mem_cgroup *memcg, char *buf, size_t len);
/*
 * memcg_psi_trigger_check - a trigger specification ("some|full STALL_US
 * WINDOW_US") as psi_trigger_create() checks it, for the PSI files whose
 * resource never stalls (cpu, io): 0 or -EINVAL.  privileged: any window,
 * else multiples of 2 s.
 */
int memcg_psi_trigger_check(const char *buf, bool privileged);
/* POLLPRI pending for this open file (a PSI trigger fired, for memory.pressure). */
bool memcg_file_poll(struct memcg_open *o);
/*
 * Destroy the open file's PSI trigger, if it has one (psi_trigger_destroy()
 * when kernfs drains the node: rmdir, cgroup.pressure 0); the file may arm
 * a new one afterwards.  Whether there was one.
 */
bool memcg_file_drop_trigger(struct memcg_open *o);
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
