/* SPDX-License-Identifier: MIT */
/*
 * memcg/internal.h - what the files of memcg/ share.
 *
 * Lock order (outermost first):
 *   tree_lock (the memcg tree: children lists, online state, descendants)
 *     memcg->lock (a memcg's settings, memory.peak registrations)
 *       task->lock (a task's cached objcg update)
 *         obj_stock slot lock, memcg_stock slot lock (alloc_cpu_lock)
 *           objcg_lock (objcg lists, reparenting)
 *     tasks_lock (the task list, which changes with the task counts),
 *       innermost: nothing is taken under it
 *   stats_lock (flushing) is taken alone.
 * memcgs and objcgs are freed an RCU grace period after their last
 * reference went (call_rcu, as the kernel's css_free_rwork and
 * obj_cgroup_release): a reader that found one without a reference
 * inside rcu_read_lock() still finds it there (rcu.c).
 */
#ifndef MEMCGFS_MEMCG_INTERNAL_H
#define MEMCGFS_MEMCG_INTERNAL_H

#include "memcg.h"
#include "fault.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <urcu/urcu-memb.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
/* the kernel's volatile accesses are relaxed atomics: say so (TSan sees them) */
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

void memcg_warn_once(const char *what);

/* ---- RCU (rcu.c) ---- */
extern __thread bool rcu_registered;
void rcu_register_current(void);
void rcu_read_lock(void);
void rcu_read_unlock(void);
/* func(head) after a grace period, on liburcu's thread: it starts with
 * rcu_callback_enter(head) and ends with rcu_callback_leave() */
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
void rcu_callback_enter(struct rcu_head *head);
void rcu_callback_leave(void);
/* every callback queued so far, and those they queue, has run */
void rcu_barrier(void);
bool rcu_pending_frees(void);

/* ---- page_counter ---- */
struct page_counter {
	_Atomic long usage;
	unsigned long emin;
	_Atomic long min_usage;
	_Atomic long children_min_usage;
	unsigned long elow;
	_Atomic long low_usage;
	_Atomic long children_low_usage;
	unsigned long watermark;	/* since creation (memory.peak) */
	unsigned long local_watermark;	/* since the last memory.peak write */
	_Atomic unsigned long failcnt;
	unsigned long min, low, high, max;
	struct page_counter *parent;
};

static inline unsigned long page_counter_max(void)
{
	return (unsigned long)LONG_MAX / alloc_page_size();
}

static inline unsigned long page_counter_read(const struct page_counter *c)
{
	return (unsigned long)atomic_load_explicit(&c->usage, memory_order_relaxed);
}

void page_counter_init(struct page_counter *c, struct page_counter *parent);
void page_counter_charge(struct page_counter *c, unsigned long nr_pages);
bool page_counter_try_charge(struct page_counter *c, unsigned long nr_pages,
			     struct page_counter **fail);
void page_counter_cancel(struct page_counter *c, unsigned long nr_pages);
void page_counter_uncharge(struct page_counter *c, unsigned long nr_pages);
void page_counter_set_max(struct page_counter *c, unsigned long nr_pages);
void page_counter_set_high(struct page_counter *c, unsigned long nr_pages);
void page_counter_set_min(struct page_counter *c, unsigned long nr_pages);
void page_counter_set_low(struct page_counter *c, unsigned long nr_pages);
void page_counter_reset_watermark(struct page_counter *c);
void page_counter_calculate_protection(struct page_counter *root,
				       struct page_counter *counter);

/* ---- statistics items (per node; see stat.c for memory.stat's table) ---- */
enum memcg_item {
	/* state: pages, or bytes for _B */
	MI_ANON, MI_FILE, MI_KMEM, MI_KERNEL_STACK_B, MI_PAGETABLES, MI_SEC_PAGETABLES,
	MI_PERCPU_B, MI_SOCK, MI_VMALLOC, MI_SHMEM, MI_ZSWAP_B, MI_ZSWAPPED,
	MI_FILE_MAPPED, MI_FILE_DIRTY, MI_FILE_WRITEBACK, MI_SWAPCACHED,
	MI_ANON_THP, MI_FILE_THP, MI_SHMEM_THP,
	MI_INACTIVE_ANON, MI_ACTIVE_ANON, MI_INACTIVE_FILE, MI_ACTIVE_FILE, MI_UNEVICTABLE,
	MI_SLAB_RECLAIMABLE_B, MI_SLAB_UNRECLAIMABLE_B, MI_HUGETLB,
	/* node counters (raw counts) */
	MI_WORKINGSET_REFAULT_ANON, MI_WORKINGSET_REFAULT_FILE,
	MI_WORKINGSET_ACTIVATE_ANON, MI_WORKINGSET_ACTIVATE_FILE,
	MI_WORKINGSET_RESTORE_ANON, MI_WORKINGSET_RESTORE_FILE, MI_WORKINGSET_NODERECLAIM,
	MI_PGDEMOTE_KSWAPD, MI_PGDEMOTE_DIRECT, MI_PGDEMOTE_KHUGEPAGED, MI_PGDEMOTE_PROACTIVE,
	MI_PGPROMOTE_SUCCESS,
	/* VM events */
	MI_PGSCAN_KSWAPD, MI_PGSCAN_DIRECT, MI_PGSCAN_KHUGEPAGED, MI_PGSCAN_PROACTIVE,
	MI_PGSTEAL_KSWAPD, MI_PGSTEAL_DIRECT, MI_PGSTEAL_KHUGEPAGED, MI_PGSTEAL_PROACTIVE,
	MI_PSWPIN, MI_PSWPOUT, MI_PGFAULT, MI_PGMAJFAULT, MI_PGREFILL, MI_PGACTIVATE,
	MI_PGDEACTIVATE, MI_PGLAZYFREE, MI_PGLAZYFREED, MI_SWPIN_ZERO, MI_SWPOUT_ZERO,
	MI_ZSWPIN, MI_ZSWPOUT, MI_ZSWPWB, MI_THP_FAULT_ALLOC, MI_THP_COLLAPSE_ALLOC,
	MI_THP_SWPOUT, MI_THP_SWPOUT_FALLBACK, MI_NUMA_PAGES_MIGRATED, MI_NUMA_PTE_UPDATES,
	MI_NUMA_HINT_FAULTS,
	NR_MEMCG_ITEMS
};

/* ---- percpu_ref (percpu_ref.c) ---- */
/*
 * Live, a get or put adds to this CPU's counter: a restartable sequence on
 * an rseq thread, else an atomic add to the shared count, which carries
 * PERCPU_COUNT_BIAS so that it cannot reach zero.  percpu_ref_kill() turns
 * it atomic (mode set at once, the per-CPU counters summed in after a
 * grace period); then the put that takes the count to zero releases.
 * Gets and puts run inside rcu_read_lock(), as the kernel's.
 */
#define PERCPU_COUNT_BIAS	(1l << (sizeof(long) * 8 - 2))
#define PERCPU_REF_DEAD		1u

struct percpu_ref {
	_Atomic long count;
	_Atomic unsigned int mode;		/* 0: per-CPU; PERCPU_REF_DEAD: atomic */
	long *pcpu;				/* [cpu], percpu_ref_pcpu_size() bytes */
	void (*release)(struct percpu_ref *ref);
	struct rcu_head rcu;			/* the switch to atomic mode */
};

size_t percpu_ref_pcpu_size(void);
void percpu_ref_init(struct percpu_ref *ref, long *pcpu,
		     void (*release)(struct percpu_ref *ref));
void percpu_ref_kill(struct percpu_ref *ref);
bool percpu_ref_is_dying(const struct percpu_ref *ref);
/* the count (for memcg_check, on a quiet machine) */
long percpu_ref_read(const struct percpu_ref *ref);
void __percpu_ref_put_atomic(struct percpu_ref *ref, long n);
bool __percpu_ref_tryget_atomic(struct percpu_ref *ref);

/* this_cpu_add(*ref->pcpu, n) on an rseq thread */
static inline __attribute__((always_inline)) void
percpu_ref_this_cpu_add(struct percpu_ref *ref, long n)
{
#if defined(__x86_64__)
	for (;;) {
		unsigned int cpu = alloc_rseq_cpu();
		long *slot = &ref->pcpu[cpu];

		/*
		 * The slot was chosen before the section: the CPU is read
		 * again inside it, so that a thread moved since adds to no
		 * other CPU's slot (that CPU's own adds would race with it).
		 */
		__asm__ __volatile__ goto(
			ALLOC_RSEQ_CS_BEGIN
			"cmpl %[cpu], %%fs:4(%[rseq_off])\n\t"
			"jnz %l[abort]\n\t"
			"addq %[n], (%[slot])\n\t"
			"2:\n\t"
			ALLOC_RSEQ_CS_ABORT
			:
			: [cpu] "r"(cpu), [rseq_off] "r"(alloc_rseq_offset), [slot] "r"(slot),
			  [n] "r"(n)
			: "memory", "cc", "rax"
			: abort);
		return;
abort:
		continue;
	}
#else
	atomic_fetch_add_explicit(&ref->count, n, memory_order_relaxed);
#endif
}

static inline bool percpu_ref_percpu(const struct percpu_ref *ref)
{
#if defined(__x86_64__)
	return likely(!atomic_load_explicit(&ref->mode, memory_order_relaxed)) &&
	       likely(alloc_thread_uses_rseq());
#else
	(void)ref;
	return false;
#endif
}

static inline void percpu_ref_get_many(struct percpu_ref *ref, long n)
{
	rcu_read_lock();
	if (percpu_ref_percpu(ref))
		percpu_ref_this_cpu_add(ref, n);
	else
		atomic_fetch_add_explicit(&ref->count, n, memory_order_relaxed);
	rcu_read_unlock();
}

/* percpu_ref_tryget(): fails only once the count went to zero */
static inline bool percpu_ref_tryget(struct percpu_ref *ref)
{
	bool ret = true;

	rcu_read_lock();
	if (percpu_ref_percpu(ref))
		percpu_ref_this_cpu_add(ref, 1);
	else
		ret = __percpu_ref_tryget_atomic(ref);
	rcu_read_unlock();
	return ret;
}

static inline void percpu_ref_put_many(struct percpu_ref *ref, long n)
{
	rcu_read_lock();
	if (percpu_ref_percpu(ref))
		percpu_ref_this_cpu_add(ref, -n);
	else
		__percpu_ref_put_atomic(ref, n);
	rcu_read_unlock();
}

/* ---- obj_cgroup ---- */
struct obj_cgroup {
	struct percpu_ref refcnt;
	struct mem_cgroup *_Atomic memcg;	/* changes when reparented */
	_Atomic long nr_charged_bytes;		/* leftover, sub-page and whole pages */
	struct obj_cgroup *next;		/* memcg->objcg_list, under objcg_lock */
	struct rcu_head rcu;
};

/*
 * References on an objcg: the memcg's initial one (dropped at offline),
 * one per task that caches it, one per obj_stock slot that caches it, and
 * one per page charged through it (obj_cgroup_charge_pages): so a live
 * object, whose bytes sit in charged pages, always keeps its objcg.
 */
static inline void obj_cgroup_get_many(struct obj_cgroup *objcg, long n)
{
	percpu_ref_get_many(&objcg->refcnt, n);
}

static inline void obj_cgroup_get(struct obj_cgroup *objcg)
{
	percpu_ref_get_many(&objcg->refcnt, 1);
}

/* a reference unless the objcg's count went to zero (awaiting its free) */
static inline bool obj_cgroup_tryget(struct obj_cgroup *objcg)
{
	return percpu_ref_tryget(&objcg->refcnt);
}

static inline void obj_cgroup_put_many(struct obj_cgroup *objcg, long n)
{
	percpu_ref_put_many(&objcg->refcnt, n);
}

static inline void obj_cgroup_put(struct obj_cgroup *objcg)
{
	percpu_ref_put_many(&objcg->refcnt, 1);
}

/* ---- real memory (real.c) ---- */
enum real_item { REAL_ANON, REAL_SHMEM, REAL_KSTACK, REAL_PAGETABLES, NR_REAL_ITEMS };

/* A task's real pages charged while it was in one memcg (real.c). */
struct real_bucket {
	struct mem_cgroup *memcg;		/* css reference */
	struct obj_cgroup *objcg;		/* kernel stacks, page tables; referenced */
	unsigned long pages[NR_REAL_ITEMS];
};

/* A memcg's real files: [0] inactive, [1] active; under lru_lock. */
struct memcg_real_file;
struct real_lru {
	struct memcg_real_file *head[2], *tail[2];
	unsigned long pages[2];			/* charged pages on each list */
};

/* ---- mem_cgroup ---- */
/*
 * A task's cgroups, a css per subsystem (task->cgroups->subsys[id]): with
 * memory the only controller, the tasks of a cgroup share one, its
 * memcg's; mem_cgroup_from_task() reads through it under RCU.
 */
enum { memory_cgrp_id, CGROUP_SUBSYS_COUNT };
struct mem_cgroup;
struct css_set {
	struct mem_cgroup *subsys[CGROUP_SUBSYS_COUNT];
};

struct memcg_peak_fd {
	struct memcg_peak_fd *next;
	unsigned long value;
};

struct mem_cgroup {
	struct page_counter memory;
	struct page_counter swap;
	_Atomic long local_charge;		/* pages charged at this level, for memcg_check */
	struct mem_cgroup *parent;
	struct mem_cgroup *children, *sibling;	/* under tree_lock */
	_Atomic long refcnt;
	struct css_set cset;			/* the css_set of its tasks */
	bool online;
	unsigned short id;
	struct obj_cgroup *_Atomic objcg;	/* active; NULL for the root and when offline */
	struct obj_cgroup *orig_objcg;
	struct obj_cgroup *objcg_list;		/* under objcg_lock */
	unsigned long nr_descendants, nr_dying_descendants;	/* under tree_lock */
	unsigned long nr_tasks;			/* tasks attached, under tree_lock */
	pthread_mutex_t lock;
	struct memcg_peak_fd *peak_fds;
	int oom_group, swappiness, zswap_writeback;
	unsigned long zswap_max;
	/* statistics: per CPU (percpu memory), folded into state/local on flush */
	_Atomic long *pcpu;			/* [cpu][node][item] */
	long *pcpu_prev;			/* [cpu][node][item], under stats_lock */
	long *state;				/* hierarchical [node][item] */
	long *local;				/* own [node][item] */
	size_t pcpu_bytes, stats_bytes;
	struct obj_cgroup *percpu_objcg;	/* charged for pcpu (the parent's) */
	_Atomic int stats_dirty;
	struct mem_cgroup *dirty_next;
	_Atomic unsigned long events[MEMCG_NR_MEMORY_EVENTS];
	_Atomic unsigned long events_local[MEMCG_NR_MEMORY_EVENTS];
	_Atomic unsigned long swap_events[3];
	/* LRU lists of directly charged pages: [node][lru] */
	struct memcg_lru *lru;
	pthread_mutex_t lru_lock;
	struct real_lru real_lru;		/* real page cache (real.c), under lru_lock */
	void *owner;
	struct psi_group *psi;
	struct rcu_head rcu;
	bool released;
};

enum lru_list { LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_FILE,
		LRU_UNEVICTABLE, NR_LRU_LISTS };

/* Each list from head (the newest) to tail (the oldest, reclaim's end). */
struct memcg_lru {
	struct page *head[NR_LRU_LISTS];
	struct page *tail[NR_LRU_LISTS];
	unsigned long nr[NR_LRU_LISTS];
};

extern struct mem_cgroup *root_memcg;
extern pthread_mutex_t tree_lock;
extern pthread_mutex_t objcg_lock;
extern struct memcg_config memcg_cfg;
extern bool memcg_up;

static inline bool mem_cgroup_is_root_fast(const struct mem_cgroup *memcg)
{
	return memcg == root_memcg;
}

void css_get(struct mem_cgroup *memcg);
bool css_tryget(struct mem_cgroup *memcg);
void css_put(struct mem_cgroup *memcg);
/*
 * Unit tests only: run in mem_cgroup_offline() once memcg's objcgs charge
 * parent and objcg_lock is dropped, where their releases may first put it.
 */
extern void (*memcg_reparent_test_hook)(struct mem_cgroup *memcg, struct mem_cgroup *parent);

/* ---- tasks ---- */
#define CURRENT_OBJCG_UPDATE_FLAG	1ul

struct memcg_task {
	struct memcg_task *tnext, *tprev;	/* all tasks, under tasks_lock */
	/*
	 * The owner's reference (dropped at exit) and the OOM killer's, taken
	 * under tasks_lock while the task is on all_tasks: a victim that exits
	 * while it is being killed is freed after its kill.
	 */
	_Atomic long ref;
	pid_t pid;
	struct mem_cgroup *memcg;		/* css ref held; written under tree_lock and lock */
	struct css_set *cgroups;		/* &memcg->cset, written with memcg */
	_Atomic uintptr_t objcg;		/* cached objcg | update flag; ref held */
	pthread_mutex_t lock;
	struct page **owned;			/* anon, kernel_stack, pagetables: owned_lock */
	size_t nr_owned, owned_cap;
	unsigned long owned_pages;
	bool exited;
	/* limits */
	_Atomic unsigned long nr_pages_over_high;
	_Atomic uint64_t pending_delay_ns;
	uint64_t charge_seq;			/* OOM ties: the most recent charger */
	uint64_t oom_round;			/* chosen in this OOM round already */
	bool oom_killed;
	bool adj_set;
	int oom_score_adj;
	bool stalled, active;
	uint64_t stall_start;
	/* real memory (real.c) */
	pthread_mutex_t real_lock;		/* the buckets */
	struct real_bucket *real;		/* oldest first */
	unsigned int nr_real, real_cap;
	unsigned long real_rss;			/* badness: resident pages and page tables */
	bool unkillable;			/* PID 1, the daemon: never an OOM victim */
};

void memcg_task_get(struct memcg_task *t);
void memcg_task_put(struct memcg_task *t);

extern pthread_mutex_t tasks_lock;
extern struct memcg_task *all_tasks;
/* every task's owned array, and who claims a page first (pages.c) */
extern pthread_mutex_t owned_lock;

extern __thread struct memcg_task *current_task;
extern __thread struct mem_cgroup *active_memcg;	/* set_active_memcg() */
/* after every change of current_task or active_memcg: alloc's memcg_current_objcg */
void memcg_current_changed(void);
struct obj_cgroup *current_objcg_update(struct memcg_task *task);
struct obj_cgroup *active_memcg_objcg(void);

#ifndef MEMCG_OBJCG_LOOKUP_MEMCG
/*
 * current_obj_cgroup - the objcg to charge (seed 003): the task's cached
 * pointer, one test away; a root task's is NULL: not accounted.
 */
static inline struct obj_cgroup *current_obj_cgroup(void)
{
	struct memcg_task *t = current_task;
	uintptr_t v;

	if (unlikely(active_memcg))
		return active_memcg_objcg();
	if (!t)
		return NULL;
	v = atomic_load_explicit(&t->objcg, memory_order_acquire);
	if (likely(!(v & CURRENT_OBJCG_UPDATE_FLAG)))
		return (struct obj_cgroup *)v;
	return current_objcg_update(t);
}
#else
/* The older lookup, for the benchmark's ablation: task -> memcg -> objcg. */
struct obj_cgroup *current_obj_cgroup(void);
/* 6.1's: the same, under RCU through the task's css_set, referenced */
struct obj_cgroup *get_obj_cgroup_from_current(void);
#endif
/* current's objcg, referenced (the charge paths past the fast one); NULL: none */
struct obj_cgroup *current_obj_cgroup_get(void);

/* The task's memcg through its css_set (rcu_read_lock held). */
static inline struct mem_cgroup *mem_cgroup_from_task(const struct memcg_task *t)
{
	return READ_ONCE(READ_ONCE(t->cgroups)->subsys[memory_cgrp_id]);
}
struct mem_cgroup *get_mem_cgroup_from_current(void);
/* the calling thread's client was signalled (memcg_set_signal) */
bool signal_pending(void);
/* t's memcg with a reference taken (css_tryget, retried across an attach) */
struct mem_cgroup *get_task_memcg(const struct memcg_task *t);

/* ---- charging ---- */
int try_charge_memcg(struct mem_cgroup *memcg, gfp_t gfp, unsigned int nr_pages);
void memcg_uncharge(struct mem_cgroup *memcg, unsigned int nr_pages);
void memcg_uncharge_direct(struct mem_cgroup *memcg, unsigned int nr_pages);
int obj_cgroup_charge_pages(struct obj_cgroup *objcg, gfp_t gfp, unsigned int nr_pages);
void obj_cgroup_uncharge_pages(struct obj_cgroup *objcg, unsigned int nr_pages);
int obj_cgroup_charge(struct obj_cgroup *objcg, gfp_t gfp, size_t size);
void obj_cgroup_uncharge(struct obj_cgroup *objcg, size_t size);
void drain_all_stock(struct mem_cgroup *root);
void memcg_flush_stock_stats(void);
bool mem_cgroup_is_descendant(const struct mem_cgroup *memcg, const struct mem_cgroup *root);
int memcg_stocks_init(void);
void memcg_stocks_exit(void);
/* Stock contents of memcg, for memcg_check: pages in memcg stocks. */
unsigned long memcg_stock_pages(const struct mem_cgroup *memcg);

/* ---- statistics ---- */
int memcg_stats_alloc(struct mem_cgroup *memcg, struct mem_cgroup *parent);
void memcg_stats_free(struct mem_cgroup *memcg);
void mod_memcg_state(struct mem_cgroup *memcg, int nid, enum memcg_item item, long val);
void memcg_stats_flush(void);
void memcg_stats_exit(void);
long memcg_state(const struct mem_cgroup *memcg, int nid, enum memcg_item item);
long memcg_state_all_nodes(const struct mem_cgroup *memcg, enum memcg_item item);
/*
 * memcg_stat_item_read - memcg_stat_read() by item, not by name: one
 * statistic's flushed value over all nodes in its own unit (bytes for the
 * _B items, else pages or events), a negative aggregate read as 0.
 */
unsigned long long memcg_stat_item_read(struct mem_cgroup *memcg, enum memcg_item item);
/* hold across memcg_state() reads: a flush folds into state[] under it */
void memcg_stats_lock(void);
void memcg_stats_unlock(void);
int memory_stat_format(struct mem_cgroup *memcg, char *buf, size_t len);
int memory_numa_stat_format(struct mem_cgroup *memcg, char *buf, size_t len);
void memcg_memory_event(struct mem_cgroup *memcg, enum memcg_memory_event event);
void memcg_notify(struct mem_cgroup *memcg, const char *file);

/* ---- LRU ---- */
void memcg_lru_add(struct mem_cgroup *memcg, struct page *page, enum lru_list lru);
/* At the head, off the list (memcg->lru_lock held; no statistic) */
void __lru_add(struct memcg_lru *l, struct page *page, unsigned int lru);
void __lru_unlink(struct memcg_lru *l, struct page *page, unsigned int lru);
void memcg_lru_del(struct mem_cgroup *memcg, struct page *page);
bool memcg_lru_del_unless_isolated(struct mem_cgroup *memcg, struct page *page);

/* ---- real memory ---- */
void memcg_real_init(void);
void memcg_real_task_release(struct memcg_task *t);
unsigned long memcg_real_lru_pages(struct mem_cgroup *memcg);
unsigned long shrink_real_files(struct mem_cgroup *memcg, unsigned long nr_scan,
				unsigned long want, bool proactive);
unsigned long memcg_real_charged_pages(void);
struct memcg_real_file *memcg_real_file_next(const struct memcg_real_file *f);	/* lru_lock */
/* memory_max_write()'s loop: drain, reclaim, OOM until memcg fits its max */
void mem_cgroup_reclaim_to_max(struct mem_cgroup *memcg);

/* ---- limits ---- */
#define MAX_RECLAIM_RETRIES	16
#define SWAP_CLUSTER_MAX	32u
#define PAGE_ALLOC_COSTLY_ORDER	3
void memcg_free_page_reclaimed(struct page *page);
void memcg_task_free_owned(struct memcg_task *t);
bool mem_cgroup_oom(struct mem_cgroup *memcg, gfp_t gfp, unsigned int order, uint64_t round);
uint64_t memcg_oom_new_round(void);
void memcg_charge_over_high(struct mem_cgroup *memcg, unsigned int batch, gfp_t gfp);
unsigned long mem_cgroup_margin(struct mem_cgroup *memcg);
void memcg_oom_kill_task(struct memcg_task *t);
bool memcg_out_of_memory(struct mem_cgroup *memcg, uint64_t round);
/* oom.c: read the machine's size once (memcg_init, before any OOM can run) */
void memcg_oom_init(void);

/* PSI */
struct psi_group;
struct psi_group *psi_group_alloc(void);
void psi_group_free(struct psi_group *g);
void psi_memstall_enter(struct mem_cgroup *memcg);
void psi_memstall_leave(struct mem_cgroup *memcg, uint64_t start_ns);
void psi_task_change(struct mem_cgroup *memcg, int d_active, int d_stalled);
struct psi_trigger;
int psi_trigger_parse(struct mem_cgroup *memcg, const char *buf, bool privileged,
		      struct psi_trigger **out);
void psi_trigger_free(struct mem_cgroup *memcg, struct psi_trigger *t);
/* The trigger polling thread stopped (memcg_exit; started by the first trigger). */
void psi_poll_exit(void);
bool psi_trigger_poll(struct psi_trigger *t);
uint64_t memcg_now_ns(void);

/*
 * page->flags of memcg's pages: flags in the low bits, the LRU list above.
 * A page is claimed (GONE) by whoever frees it: a client's free, its task's
 * exit or OOM kill (under owned_lock), or reclaim (ISOLATED under the LRU
 * lock); the others then leave it alone.
 */
#define PAGE_FLAG_CHARGED	0x01	/* memcg_data set by a charge */
#define PAGE_FLAG_OWNED		0x02	/* on page->task's owned array */
#define PAGE_FLAG_REFERENCED	0x04	/* a file page's first reclaim scan spares it */
#define PAGE_FLAG_ISOLATED	0x08	/* taken off its LRU by reclaim */
#define PAGE_FLAG_GONE		0x10	/* claimed for freeing */
#define PAGE_LRU_SHIFT		5
#define PAGE_LRU_NONE		7u

/*
 * The bits are guarded by different locks (OWNED and GONE by owned_lock,
 * ISOLATED, REFERENCED and the list by the LRU lock): each change is an
 * atomic operation on the byte, so a change under one lock never undoes a
 * change to another bit made under the other.
 */
static inline unsigned int page_flags(const struct page *page)
{
	return __atomic_load_n(&page->flags, __ATOMIC_RELAXED);
}

static inline void page_flags_set(struct page *page, unsigned int f)
{
	__atomic_fetch_or(&page->flags, (uint8_t)f, __ATOMIC_RELAXED);
}

static inline void page_flags_clear(struct page *page, unsigned int f)
{
	__atomic_fetch_and(&page->flags, (uint8_t)~f, __ATOMIC_RELAXED);
}

static inline unsigned int page_lru(const struct page *page)
{
	return page_flags(page) >> PAGE_LRU_SHIFT;
}

static inline void set_page_lru(struct page *page, unsigned int lru)
{
	uint8_t old = __atomic_load_n(&page->flags, __ATOMIC_RELAXED), new;

	do
		new = (uint8_t)((old & ((1u << PAGE_LRU_SHIFT) - 1)) | (lru << PAGE_LRU_SHIFT));
	while (!__atomic_compare_exchange_n(&page->flags, &old, new, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED));
}

/* page->memcg_data: an objcg or a memcg, told apart by the low bit */
#define MEMCG_DATA_KMEM		1ul

#endif
