/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of issue 4 ("limits that bite": memory.max, reclaim,
 * protection, OOM, memory.high throttling, events, memory.pressure),
 * written from memcg/memcg.h, the issue text, docs/design.md ("Charging",
 * "Decisions where the kernel gives no answer") and
 * docs/kernel-interface.md (§3, §7, §8, §10), not from the
 * implementation.  Expected numbers are either values docs/kernel-interface.md states or
 * computed here from docs/kernel-interface.md's formulas (ref_* functions).
 *
 * Every test gets a fresh machine (alloc_init, 4 CPU slots) and memory
 * controller; the teardown drains the stocks and requires memcg_check() == 0
 * and alloc_check() == 0.  Single-threaded tests run pinned to CPU 0; the
 * concurrent test pins one thread per CPU and uses a seeded PRNG
 * (MEMCG_TEST_SEED overrides it).  Delays are values returned by
 * memcg_handle_over_high, never measured; PSI totals are only asserted to
 * grow.
 *
 * Memory that memcg frees on its own (OOM victims' and exited tasks' pages,
 * reclaimed file pages, shrinker objects) is tracked through
 * memcg_set_free_notify(), so that a test never frees it a second time.
 */
#include "memcg.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define MIB		(1024ull * 1024ull)
#define PG		4096ull
#define NSEC_PER_MSEC	1000000ull
#define NSEC_PER_SEC	1000000000ull

/* ------------------------------------------------------------------ */
/* Checks (deferred: one wrong value does not hide the checks after it) */

/* the checks, the PRNG, memcg file access (file_of, read_whole, write_*, keyed, stv) */
#include "fixture.h"

/* ------------------------------------------------------------------ */
/* Tracking of what the tests allocate                                 */

static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long notify_seq;	/* order of frees memcg did itself */

struct blk {
	struct page *pg;
	unsigned long pfn;
	unsigned int order;
	enum memcg_page_type type;
	struct memcg_task *task;
	struct mem_cgroup *memcg;
	bool alive;
	unsigned int notified;
	unsigned long seq;		/* notify_seq when memcg freed it */
};
#define MAX_BLKS	40000
static struct blk *blks;
static unsigned int nblk;
static unsigned int *pfn_map;		/* pfn -> blk index + 1 while alive */
static unsigned long npfn;
static unsigned long unknown_notifies;

/* Reclaimable objects (the test shrinker's) */
struct robj {
	void *p;
	struct mem_cgroup *memcg;
	bool alive;
	unsigned int notified;
};
#define MAX_ROBJS	4096
static struct robj robjs[MAX_ROBJS];
static unsigned int nrobj;
static struct kmem_cache *rcache;

static void free_notify_cb(const void *addr)
{
	struct page *pg;
	unsigned long pfn;

	pthread_mutex_lock(&track_lock);
	notify_seq++;
	pg = alloc_in_arena(addr) ? virt_to_page(addr) : NULL;
	if (pg) {
		pfn = page_to_pfn(pg);
		if (pfn < npfn && pfn_map[pfn]) {
			struct blk *b = &blks[pfn_map[pfn] - 1];

			if ((const void *)page_address(b->pg) == addr) {
				b->alive = false;
				b->notified++;
				b->seq = notify_seq;
				pfn_map[pfn] = 0;
				pthread_mutex_unlock(&track_lock);
				return;
			}
		}
	}
	for (unsigned int i = 0; i < nrobj; i++) {
		if (robjs[i].p == addr && robjs[i].alive) {
			/* memcg says it freed one of our objects itself */
			robjs[i].alive = false;
			robjs[i].notified++;
			pthread_mutex_unlock(&track_lock);
			return;
		}
	}
	for (unsigned int i = 0; i < nrobj; i++) {
		if (robjs[i].p == addr) {
			/* a notification for an object our shrinker freed */
			robjs[i].notified++;
			pthread_mutex_unlock(&track_lock);
			return;
		}
	}
	unknown_notifies++;
	pthread_mutex_unlock(&track_lock);
}

static void blk_add(struct page *pg, enum memcg_page_type type, unsigned int order,
		    struct memcg_task *t)
{
	struct blk *b;

	pthread_mutex_lock(&track_lock);
	if (nblk >= MAX_BLKS) {
		pthread_mutex_unlock(&track_lock);
		print_error("too many blocks tracked\n");
		fail();
		return;
	}
	b = &blks[nblk];
	memset(b, 0, sizeof(*b));
	b->pg = pg;
	b->pfn = page_to_pfn(pg);
	b->order = order;
	b->type = type;
	b->task = t;
	b->memcg = t ? memcg_task_memcg(t) : NULL;
	b->alive = true;
	if (b->pfn < npfn)
		pfn_map[b->pfn] = nblk + 1;
	nblk++;
	pthread_mutex_unlock(&track_lock);
}

/* Allocate a block for the current task and track it. */
static struct page *palloc(enum memcg_page_type type, gfp_t gfp, unsigned int order, int *err)
{
	int e = 0;
	struct page *pg = memcg_alloc_pages(type, gfp, order, &e);

	if (err)
		*err = pg ? 0 : e;
	if (pg)
		blk_add(pg, type, order, memcg_current());
	return pg;
}

/* n blocks of 2^order pages, all must succeed. */
static void need(enum memcg_page_type type, unsigned int order, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int err = 0;

		if (!palloc(type, GFP_KERNEL, order, &err)) {
			print_error("memcg_alloc_pages(type %d, order %u) #%u = NULL, err %d\n",
				    (int)type, order, i, err);
			fail();
		}
	}
}

static bool owned_type(enum memcg_page_type type)
{
	return type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_KERNEL_STACK ||
	       type == MEMCG_PAGE_PAGETABLES;
}

/*
 * Free a tracked block.  A page a task owns is freed in that task's context
 * (as fs/ does: memcg only takes a page out of its owner's list when the
 * owner is current; memcg.h does not say so).
 */
static void pfree(struct blk *b)
{
	struct memcg_task *saved = memcg_current();

	pthread_mutex_lock(&track_lock);
	if (!b->alive) {
		pthread_mutex_unlock(&track_lock);
		return;
	}
	b->alive = false;
	if (b->pfn < npfn)
		pfn_map[b->pfn] = 0;
	pthread_mutex_unlock(&track_lock);
	if (b->task && owned_type(b->type))
		memcg_set_current(b->task);
	memcg_free_pages(b->pg, memcg_page_id(b->pg));
	memcg_set_current(saved);
}

/* Pages (not blocks) of live tracked memory matching memcg/type/task. */
static unsigned long live_pages(struct mem_cgroup *m, int type, struct memcg_task *t)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < nblk; i++) {
		struct blk *b = &blks[i];

		if (!b->alive)
			continue;
		if (m && b->memcg != m)
			continue;
		if (type >= 0 && (int)b->type != type)
			continue;
		if (t && b->task != t)
			continue;
		n += 1ul << b->order;
	}
	return n;
}

/* Blocks matching that memcg freed on its own; min/max of their seq. */
static unsigned long notified_blocks(struct mem_cgroup *m, int type, struct memcg_task *t,
				     unsigned long *seq_min, unsigned long *seq_max)
{
	unsigned long n = 0, lo = ~0ul, hi = 0;

	for (unsigned int i = 0; i < nblk; i++) {
		struct blk *b = &blks[i];

		if (!b->notified)
			continue;
		if (m && b->memcg != m)
			continue;
		if (type >= 0 && (int)b->type != type)
			continue;
		if (t && b->task != t)
			continue;
		n++;
		if (b->seq < lo)
			lo = b->seq;
		if (b->seq > hi)
			hi = b->seq;
	}
	if (seq_min)
		*seq_min = lo;
	if (seq_max)
		*seq_max = hi;
	return n;
}

static unsigned int doubly_notified(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nblk; i++)
		if (blks[i].notified > 1)
			n++;
	return n;
}

/* ------------------------------------------------------------------ */
/* OOM ops, event notification                                         */

struct adj_ent {
	pid_t pid;
	int adj;
};
static struct adj_ent adj_tab[256];
static unsigned int nadj;

static int ops_oom_score_adj(pid_t pid)
{
	for (unsigned int i = 0; i < nadj; i++)
		if (adj_tab[i].pid == pid)
			return adj_tab[i].adj;
	return 0;
}

#define MAX_KILLED	64
static pid_t killed_log[MAX_KILLED];
static unsigned int nkilled;
/* Tracked live file pages of killed_probe_memcg when the first kill came. */
static struct mem_cgroup *killed_probe_memcg;
static long killed_probe_file = -1;

static void ops_killed(struct memcg_task *t, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&track_lock);
	if (nkilled < MAX_KILLED)
		killed_log[nkilled] = memcg_task_pid(t);
	nkilled++;
	if (killed_probe_memcg && killed_probe_file < 0) {
		long n = 0;

		for (unsigned int i = 0; i < nblk; i++)
			if (blks[i].alive && blks[i].memcg == killed_probe_memcg &&
			    blks[i].type == MEMCG_PAGE_FILE)
				n += 1l << blks[i].order;
		killed_probe_file = n;
	}
	pthread_mutex_unlock(&track_lock);
}

static const struct memcg_oom_ops test_oom_ops = {
	.oom_score_adj = ops_oom_score_adj,
	.killed = ops_killed,
	.arg = NULL,
};

static bool was_killed(pid_t pid)
{
	for (unsigned int i = 0; i < nkilled && i < MAX_KILLED; i++)
		if (killed_log[i] == pid)
			return true;
	return false;
}

struct nrec {
	struct mem_cgroup *memcg;
	char file[40];
};
#define MAX_NRECS	65536
static struct nrec *nrecs;
static unsigned int nnrec;

static void notify_cb(struct mem_cgroup *memcg, const char *file, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&track_lock);
	if (nnrec < MAX_NRECS) {
		nrecs[nnrec].memcg = memcg;
		snprintf(nrecs[nnrec].file, sizeof(nrecs[nnrec].file), "%s", file ? file : "(null)");
		nnrec++;
	}
	pthread_mutex_unlock(&track_lock);
}

static unsigned int notified(struct mem_cgroup *m, const char *file)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nnrec; i++)
		if ((!m || nrecs[i].memcg == m) && strcmp(nrecs[i].file, file) == 0)
			n++;
	return n;
}

/* Every notified file is one of the notifying files (docs/design.md; docs/kernel-interface.md §1.5). */
static void check_notify_names(void)
{
	for (unsigned int i = 0; i < nnrec; i++) {
		const char *f = nrecs[i].file;

		DEFER_TRUE(strcmp(f, "memory.events") == 0 ||
			   strcmp(f, "memory.events.local") == 0 ||
			   strcmp(f, "memory.swap.events") == 0 ||
			   strcmp(f, "cgroup.events") == 0,
			   "notify callback with an unexpected file name \"%s\"", f);
		if (nrecs[i].memcg == root_mem_cgroup())
			DEFER_TRUE(strncmp(f, "memory.", 7) != 0,
				   "the root's %s notified (root has no memory.events)", f);
	}
}

/* ------------------------------------------------------------------ */
/* Machines                                                            */

#define MAX_MEMCGS	64
#define MAX_TASKS	128
static struct mem_cgroup *memcgs[MAX_MEMCGS];
static unsigned int nmemcg;
static struct memcg_task *tasks[MAX_TASKS];
static bool task_gone[MAX_TASKS];
static unsigned int ntask;

static int machine_up(uint64_t mem, bool throttle)
{
	struct alloc_config cfg;
	struct memcg_config mc;
	int r;

	deferred_failures = 0;
	alloc_config_defaults(&cfg);
	cfg.memory = mem;
	cfg.cpus = 4;
	r = alloc_init(&cfg);
	if (r) {
		print_error("alloc_init = %d\n", r);
		return -1;
	}
	memcg_config_defaults(&mc);
	mc.charge_batch = 64;
	mc.high_throttle = throttle;
	mc.oom_kill_signal = 0;
	r = memcg_init(&mc);
	if (r) {
		print_error("memcg_init = %d\n", r);
		alloc_exit();
		return -1;
	}
	npfn = mem / PG;
	pfn_map = calloc(npfn, sizeof(*pfn_map));
	blks = calloc(MAX_BLKS, sizeof(*blks));
	nrecs = calloc(MAX_NRECS, sizeof(*nrecs));
	if (!pfn_map || !blks || !nrecs)
		return -1;
	nblk = 0;
	nrobj = 0;
	rcache = NULL;
	unknown_notifies = 0;
	notify_seq = 0;
	nadj = 0;
	nkilled = 0;
	killed_probe_memcg = NULL;
	killed_probe_file = -1;
	nnrec = 0;
	nmemcg = 0;
	ntask = 0;
	memcg_set_free_notify(free_notify_cb);
	memcg_set_oom_ops(&test_oom_ops);
	memcg_set_notify(notify_cb, NULL);
	if (alloc_pin_cpu(0))
		return -1;
	return 0;
}

static int setup64(void **state)
{
	(void)state;
	return machine_up(64 * MIB, true);
}

static int setup64_nothrottle(void **state)
{
	(void)state;
	return machine_up(64 * MIB, false);
}

static int setup16(void **state)
{
	(void)state;
	return machine_up(16 * MIB, true);
}

static int teardown(void **state)
{
	int r1, r2;

	(void)state;
	memcg_set_current(NULL);
	alloc_pin_cpu(0);
	memcg_drain();
	r1 = check_reported("memcg_check", memcg_check);
	r2 = check_reported("alloc_check", alloc_check);
	memcg_set_notify(NULL, NULL);
	memcg_exit();
	alloc_exit();
	alloc_pin_cpu(-1);
	free(pfn_map);
	free(blks);
	free(nrecs);
	pfn_map = NULL;
	blks = NULL;
	nrecs = NULL;
	npfn = 0;
	if (r1 || r2)
		fail_msg("memcg_check/alloc_check failed after the test");
	deferred_done();
	return 0;
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup64, teardown)
#define TNT(f)	cmocka_unit_test_setup_teardown(f, setup64_nothrottle, teardown)
#define T16(f)	cmocka_unit_test_setup_teardown(f, setup16, teardown)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static struct mem_cgroup *mk(struct mem_cgroup *parent)
{
	struct mem_cgroup *m = NULL;
	int r = mem_cgroup_create(parent, &m);

	if (r != 0 || !m) {
		print_error("mem_cgroup_create() = %d\n", r);
		fail();
	}
	if (nmemcg < MAX_MEMCGS)
		memcgs[nmemcg++] = m;
	return m;
}

static struct memcg_task *mktask(pid_t pid, struct mem_cgroup *m, int adj)
{
	struct memcg_task *t = memcg_task_create(pid, m);

	if (!t) {
		print_error("memcg_task_create(%d) = NULL\n", (int)pid);
		fail();
	}
	if (nadj < 256) {
		adj_tab[nadj].pid = pid;
		adj_tab[nadj].adj = adj;
		nadj++;
	}
	memcg_task_set_oom_score_adj(t, adj);
	task_gone[ntask] = false;
	tasks[ntask++] = t;
	return t;
}

static void set_adj(struct memcg_task *t, int adj)
{
	pid_t pid = memcg_task_pid(t);

	for (unsigned int i = 0; i < nadj; i++)
		if (adj_tab[i].pid == pid)
			adj_tab[i].adj = adj;
	memcg_task_set_oom_score_adj(t, adj);
}

static void texit(struct memcg_task *t)
{
	for (unsigned int i = 0; i < ntask; i++) {
		if (tasks[i] == t && !task_gone[i]) {
			if (memcg_current() == t)
				memcg_set_current(NULL);
			/* blocks it owned die with it (they are notified) */
			memcg_task_exit(t);
			task_gone[i] = true;
		}
	}
}

/*
 * End of a test: free what is still alive, exit the tasks, remove the
 * memcgs (children first).
 */
static void finish(void)
{
	memcg_set_current(NULL);
	for (unsigned int i = 0; i < nblk; i++)
		pfree(&blks[i]);
	for (unsigned int i = 0; i < nrobj; i++) {
		if (robjs[i].alive) {
			robjs[i].alive = false;
			kmem_cache_free(rcache, robjs[i].p);
		}
	}
	for (unsigned int i = 0; i < ntask; i++) {
		if (!task_gone[i]) {
			memcg_task_exit(tasks[i]);
			task_gone[i] = true;
		}
	}
	if (rcache) {
		DEFER_EQ(kmem_cache_destroy(rcache), 0, "kmem_cache_destroy(test cache)");
		rcache = NULL;
	}
	for (unsigned int i = nmemcg; i-- > 0; ) {
		int r = mem_cgroup_offline(memcgs[i]);

		DEFER_EQ(r, 0, "mem_cgroup_offline (memcg #%u)", i);
		mem_cgroup_put(memcgs[i]);
	}
	nmemcg = 0;
	DEFER_EQ(doubly_notified(), 0, "blocks notified as freed more than once");
	DEFER_EQ(unknown_notifies, 0, "free notifications for addresses the test never allocated");
}

static struct memcg_open *fopen_m(struct mem_cgroup *m, const char *name)
{
	struct memcg_open *o = NULL;
	int r = memcg_file_open(file_of(name), m, &o);

	if (r || !o) {
		print_error("memcg_file_open(%s) = %d\n", name, r);
		fail();
	}
	return o;
}

static void set_bytes(struct mem_cgroup *m, const char *name, unsigned long long pages)
{
	char b[64];

	snprintf(b, sizeof(b), "%llu", pages * PG);
	DEFER_EQ(write_str(m, name, b), 0, "write %s = %s", name, b);
}

static unsigned long long ev(struct mem_cgroup *m, const char *key)
{
	return keyed(m, "memory.events", key);
}

static unsigned long long evl(struct mem_cgroup *m, const char *key)
{
	return keyed(m, "memory.events.local", key);
}

enum { E_LOW, E_HIGH, E_MAX, E_OOM, E_OOM_KILL, E_OOM_GROUP_KILL, E_SOCK, NR_E };
static const char *const ev_keys[NR_E] = {
	"low", "high", "max", "oom", "oom_kill", "oom_group_kill", "sock_throttled",
};

/* The whole content of memory.events / .local must be exactly these values. */
static void expect_events_(struct mem_cgroup *m, const char *file, const unsigned long long *v,
			   const char *what, int line)
{
	char exp[512], got[1024];
	size_t off = 0;
	long n;

	for (unsigned int i = 0; i < NR_E; i++)
		off += (size_t)snprintf(exp + off, sizeof(exp) - off, "%s %llu\n", ev_keys[i], v[i]);
	n = read_whole(m, file, got, sizeof(got));
	if (n < 0 || strcmp(got, exp) != 0) {
		print_error("%s:%d: %s: %s is\n%s--- expected ---\n%s",
			    __FILE__, line, what, file, n < 0 ? "(read failed)\n" : got, exp);
		deferred_failures++;
	}
}
#define EXPECT_EVENTS(m, file, what, ...) do {				\
	const unsigned long long v_[NR_E] = { __VA_ARGS__ };		\
	expect_events_((m), (file), v_, (what), __LINE__);		\
} while (0)

static unsigned long long usage_pg(struct mem_cgroup *m)
{
	return mem_cgroup_usage_pages(m);
}

/* memory.stat value in pages (byte-valued keys). */
static unsigned long long stp(struct mem_cgroup *m, const char *key)
{
	return stv(m, key) / PG;
}

/* Everything but the usage of a memcg after a drain: the kernel memory
 * its children's creation charged to it (docs/design.md: mkdir charges the
 * parent). */
static unsigned long long base_usage(struct mem_cgroup *m)
{
	memcg_drain();
	return usage_pg(m);
}

/* ------------------------------------------------------------------ */
/* The test shrinker: frees our reclaimable objects, oldest first.     */

static unsigned long shr_count_calls, shr_scan_calls, shr_freed;
static long shr_file_at_first_scan = -1;	/* tracked live file pages then */
static unsigned long shr_first_scan_seq;
static _Atomic bool *shr_signal;		/* raised by the first scan, if set */

static unsigned long shr_count(struct shrinker *s, struct mem_cgroup *memcg)
{
	unsigned long n = 0;

	(void)s;
	pthread_mutex_lock(&track_lock);
	shr_count_calls++;
	for (unsigned int i = 0; i < nrobj; i++)
		if (robjs[i].alive && robjs[i].memcg == memcg)
			n++;
	pthread_mutex_unlock(&track_lock);
	return n;
}

static unsigned long shr_scan(struct shrinker *s, struct mem_cgroup *memcg, unsigned long nr)
{
	unsigned long freed = 0;
	void *victims[MAX_ROBJS];

	(void)s;
	pthread_mutex_lock(&track_lock);
	shr_scan_calls++;
	if (shr_file_at_first_scan < 0) {
		long f = 0;

		for (unsigned int i = 0; i < nblk; i++)
			if (blks[i].alive && blks[i].memcg == memcg &&
			    blks[i].type == MEMCG_PAGE_FILE)
				f += 1l << blks[i].order;
		shr_file_at_first_scan = f;
		shr_first_scan_seq = ++notify_seq;
	}
	for (unsigned int i = 0; i < nrobj && freed < nr; i++) {
		if (robjs[i].alive && robjs[i].memcg == memcg) {
			robjs[i].alive = false;
			victims[freed++] = robjs[i].p;
		}
	}
	shr_freed += freed;
	if (shr_signal)
		atomic_store(shr_signal, true);
	pthread_mutex_unlock(&track_lock);
	for (unsigned long i = 0; i < freed; i++)
		kmem_cache_free(rcache, victims[i]);
	return freed;
}

static struct shrinker test_shrinker = {
	.count_objects = shr_count,
	.scan_objects = shr_scan,
};

static void shr_reset(void)
{
	shr_count_calls = shr_scan_calls = shr_freed = 0;
	shr_file_at_first_scan = -1;
	shr_first_scan_seq = 0;
}

static unsigned int robj_alive(struct mem_cgroup *m)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nrobj; i++)
		if (robjs[i].alive && (!m || robjs[i].memcg == m))
			n++;
	return n;
}

static void robj_alloc(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		void *p = kmem_cache_alloc(rcache, GFP_KERNEL);

		if (!p) {
			print_error("kmem_cache_alloc(reclaimable) #%u = NULL\n", i);
			fail();
		}
		pthread_mutex_lock(&track_lock);
		robjs[nrobj].p = p;
		robjs[nrobj].memcg = memcg_task_memcg(memcg_current());
		robjs[nrobj].alive = true;
		robjs[nrobj].notified = 0;
		nrobj++;
		pthread_mutex_unlock(&track_lock);
	}
}

/* ------------------------------------------------------------------ */
/* Reference: the memory.high penalty (docs/kernel-interface.md §8.4, memcontrol.c's
 * calculate_overage/calculate_high_delay with HZ = 1000, which the
 * docs/kernel-interface.md's table uses: 101M -> 6 ms, 105M -> 159 ms, 110M -> 639 ms). */

static uint64_t ref_overage(uint64_t usage, uint64_t high)
{
	if (usage <= high)
		return 0;
	if (!high)
		high = 1;
	return ((usage - high) << 20) / high;
}

/* In jiffies of 1 ms, as the kernel computes it. */
static uint64_t ref_delay_jiffies(uint64_t max_overage, uint64_t nr_pages)
{
	uint64_t pj;

	if (!max_overage)
		return 0;
	pj = max_overage * max_overage * 1000;
	pj >>= 20;
	pj >>= 14;
	pj = pj * nr_pages / 64;
	return pj > 2000 ? 2000 : pj;
}

/* The same without jiffy rounding, in ns. */
static double ref_delay_exact_ns(uint64_t max_overage, uint64_t nr_pages)
{
	double d = (double)max_overage * (double)max_overage / 17179869184.0 * 1e9;

	d = d * (double)nr_pages / 64.0;
	return d > 2e9 ? 2e9 : d;
}

/*
 * Accept the kernel's value in whole jiffies (HZ = 1000) or the exact value,
 * with 1 ms of slack for the rounding; 0 when the penalty is <= 10 ms.
 */
static void check_delay(uint64_t got, uint64_t overage, uint64_t nr_pages, const char *what)
{
	uint64_t j = ref_delay_jiffies(overage, nr_pages);
	double x = ref_delay_exact_ns(overage, nr_pages);
	double lo, hi;

	if (j <= 10 && x <= 10e6) {
		DEFER_EQ(got, 0, "%s: delay (penalty %llu ms <= 10 ms: no sleep)", what,
			 (unsigned long long)j);
		return;
	}
	lo = (double)j * 1e6 < x ? (double)j * 1e6 : x;
	hi = (double)j * 1e6 > x ? (double)j * 1e6 : x;
	if ((double)got < lo - 1e6 || (double)got > hi + 1e6) {
		print_error("%s: delay %llu ns, expected %.0f..%.0f ns (kernel %llu jiffies at HZ=1000; exact %.0f ns)\n",
			    what, (unsigned long long)got, lo, hi, (unsigned long long)j, x);
		deferred_failures++;
	}
}

/* ================================================================== */
/* Events at memory.max (§8.3, §10)                                    */

/*
 * consume_stock() serves a charge of exactly the batch (64 pages) from a
 * stock that holds 64: the kernel's "nr_pages > MEMCG_CHARGE_BATCH" is the
 * only bypass.  64 vmalloc pages freed one by one (objcg pages go back
 * through the stock) leave it 64; an order-6 charge then takes them and
 * the counter does not move.
 */
static void test_stock_serves_a_batch(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1043, c, 0);
	unsigned int first;

	(void)state;
	memcg_set_current(t);
	first = nblk;
	need(MEMCG_PAGE_VMALLOC, 0, 64);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 64, "64 vmalloc pages charged, the stock drained");
	for (unsigned int i = first; i < first + 64; i++)
		pfree(&blks[i]);
	DEFER_EQ(usage_pg(c), 64, "freed: the 64 pages wait in the stock");
	memcg_set_current(t);
	need(MEMCG_PAGE_VMALLOC, 6, 1);
	memcg_set_current(NULL);
	DEFER_EQ(usage_pg(c), 64, "an order-6 charge came from the stock: the counter stays");
	finish();
}

/*
 * The penalty's "not worth a sleep" bound is inclusive, as the kernel's
 * (penalty_jiffies <= HZ / 100): 64 pages over a high of 1024 pages with
 * 1037 in use cost exactly 10 jiffies: no delay; with 1038, 11: 11 ms.
 */
static void test_high_penalty_boundary(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup()), *d = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1041, c, 0), *u = mktask(1042, d, 0);

	(void)state;
	set_bytes(c, "memory.high", 1024);
	set_bytes(d, "memory.high", 1024);
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, 1037);
	memcg_set_current(u);
	need(MEMCG_PAGE_ANON, 0, 1038);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 1037, "c's usage");
	DEFER_EQ(memcg_task_pages_over_high(t), 64, "c's task owes the batch over high");
	DEFER_EQ(memcg_handle_over_high(t), 0, "10 jiffies: no delay");
	DEFER_EQ(usage_pg(d), 1038, "d's usage");
	DEFER_EQ(memcg_task_pages_over_high(u), 64, "d's task owes the batch over high");
	DEFER_EQ(memcg_handle_over_high(u), 11ull * 1000 * 1000, "11 jiffies: 11 ms");
	finish();
}

/*
 * __GFP_NOFAIL at the limit when an OOM kill frees nothing: each task is
 * chosen once in the charge's OOM handling, the holder (the higher
 * badness) first, then the allocator itself, and only then is the charge
 * forced past max, as the kernel's sequence ends once the reaper has
 * skipped the first victim and the allocator is dying: oom_kill 2.
 */
static void test_nofail_kills_each_once(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *h = mktask(1031, c, 500), *a = mktask(1032, c, 0);
	struct page *pg;
	int err;

	(void)state;
	/* 2000 pages: oom_score_adj counts 2 points per 1 (adj * total / 1000) */
	set_bytes(c, "memory.max", 2000);
	memcg_set_current(h);
	need(MEMCG_PAGE_SOCK, 0, 2000);		/* charged, owned by nobody: a kill frees none */
	memcg_set_current(a);
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL | __GFP_NOFAIL, 0, &err);
	memcg_set_current(NULL);
	DEFER_TRUE(pg != NULL, "__GFP_NOFAIL is forced in the end (err %d)", err);
	DEFER_TRUE(memcg_task_oom_killed(h), "the holder (badness by oom_score_adj 500) was killed");
	DEFER_TRUE(memcg_task_oom_killed(a), "then the allocator");
	DEFER_EQ(ev(c, "oom_kill"), 2, "oom_kill: each task once");
	DEFER_EQ(nkilled, 2, "two kills");
	memcg_drain();
	DEFER_EQ(usage_pg(c), 2001, "forced past max by one page");
	finish();
}

/*
 * max counts once per charge attempt that enters the limit path (not for a
 * batch that is retried at exact size), also for forced charges; oom only
 * for order <= 3 charges that reach the OOM step; __GFP_NORETRY fails
 * without OOM; with nothing killable the charge fails with ENOMEM, and
 * __GFP_NOFAIL is forced past max.  Hierarchical in the parent's
 * memory.events, local only in the failing memcg's memory.events.local.
 */
static void test_events_max_oom_exact(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p);
	struct memcg_task *t = mktask(1001, c, 0);
	struct page *pg;
	int err;

	(void)state;
	set_bytes(c, "memory.max", 100);
	memcg_set_current(t);

	/* filling up to max: the batch of 64 fails from page 65 on and is
	 * retried at exact size: never the limit path */
	need(MEMCG_PAGE_ANON, 0, 100);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 100, "usage after 100 anon pages");
	DEFER_EQ(memcg_task_owned_pages(t), 100, "owned pages");
	EXPECT_EVENTS(c, "memory.events", "filled exactly to max", 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(c, "memory.events.local", "filled exactly to max", 0, 0, 0, 0, 0, 0, 0);
	DEFER_EQ(notified(c, "memory.events"), 0, "no notification before any event");

	/* __GFP_NORETRY: max, no oom, ENOMEM, nothing killed */
	for (unsigned int i = 1; i <= 3; i++) {
		pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL | __GFP_NORETRY, 0, &err);
		DEFER_TRUE(pg == NULL, "__GFP_NORETRY charge at max #%u fails", i);
		DEFER_EQ(err, -ENOMEM, "__GFP_NORETRY charge at max: err");
		DEFER_EQ(ev(c, "max"), i, "max after %u NORETRY charges", i);
		DEFER_EQ(ev(c, "oom"), 0, "no oom for NORETRY");
	}
	DEFER_TRUE(!memcg_task_oom_killed(t), "NORETRY kills nobody");
	DEFER_EQ(nkilled, 0, "no OOM kill");
	DEFER_EQ(usage_pg(c), 100, "usage unchanged by failed charges");

	/* order 4: max, no oom (order > 3), ENOMEM */
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 4, &err);
	DEFER_TRUE(pg == NULL, "order-4 charge over max fails");
	DEFER_EQ(err, -ENOMEM, "order-4 charge: err");
	DEFER_EQ(ev(c, "max"), 4, "order-4 charge counts max");
	DEFER_EQ(ev(c, "oom"), 0, "order-4 charge does not count oom");
	DEFER_TRUE(!memcg_task_oom_killed(t), "order-4 charge kills nobody");
	DEFER_EQ(memcg_task_owned_pages(t), 100, "owned pages intact");

	/* nothing killable: -1000 */
	set_adj(t, -1000);
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL | __GFP_NOFAIL, 0, &err);
	DEFER_TRUE(pg != NULL, "__GFP_NOFAIL is forced past max");
	DEFER_EQ(ev(c, "max"), 5, "forced charge counts max once");
	DEFER_EQ(ev(c, "oom"), 1, "forced (order 0) charge went through OOM once");
	DEFER_EQ(ev(c, "oom_kill"), 0, "nobody to kill");
	memcg_drain();
	DEFER_EQ(usage_pg(c), 101, "usage over max by the forced page");

	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL | __GFP_NOFAIL | __GFP_NORETRY, 0, &err);
	DEFER_TRUE(pg != NULL, "__GFP_NOFAIL|__GFP_NORETRY is forced");
	DEFER_EQ(ev(c, "max"), 6, "forced NORETRY charge counts max once");
	DEFER_EQ(ev(c, "oom"), 1, "forced NORETRY charge: no OOM");
	memcg_drain();
	DEFER_EQ(usage_pg(c), 102, "usage over max by two forced pages");
	expect_memcg_check("after forced charges");

	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL | __GFP_NORETRY, 0, &err);
	DEFER_TRUE(pg == NULL, "a plain charge over max still fails");
	DEFER_EQ(ev(c, "max"), 7, "max");

	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg == NULL, "no killable task: the charge fails");
	DEFER_EQ(err, -ENOMEM, "no killable task: ENOMEM");
	DEFER_EQ(nkilled, 0, "-1000 is never chosen");
	DEFER_TRUE(!memcg_task_oom_killed(t), "-1000 task not killed");

	EXPECT_EVENTS(c, "memory.events", "c at the end", 0, 0, 8, 2, 0, 0, 0);
	EXPECT_EVENTS(c, "memory.events.local", "c at the end", 0, 0, 8, 2, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events", "parent (hierarchical)", 0, 0, 8, 2, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events.local", "parent (local)", 0, 0, 0, 0, 0, 0, 0);

	DEFER_TRUE(notified(c, "memory.events") >= 1, "c's memory.events notified");
	DEFER_TRUE(notified(c, "memory.events.local") >= 1, "c's memory.events.local notified");
	DEFER_TRUE(notified(p, "memory.events") >= 1, "the parent's memory.events notified");
	DEFER_EQ(notified(p, "memory.events.local"), 0, "the parent's memory.events.local not notified");
	check_notify_names();
	finish();
}

/*
 * A charge over max that reclaim can satisfy: one max event, no oom, file
 * pages reclaimed (pgsteal_direct), anon untouched; usage never above max.
 */
static void test_max_reclaims_file(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1011, c, 0);
	unsigned long long f0, sd0, sp0, st0, sc0, f1, stolen;
	struct page *pg;
	int err;

	(void)state;
	set_bytes(c, "memory.max", 100);
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 60);
	need(MEMCG_PAGE_ANON, 0, 40);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 100, "usage at max");
	EXPECT_EVENTS(c, "memory.events", "at max", 0, 0, 0, 0, 0, 0, 0);
	f0 = stp(c, "file");
	sd0 = stv(c, "pgsteal_direct");
	sp0 = stv(c, "pgsteal_proactive");
	st0 = stv(c, "pgsteal");
	sc0 = stv(c, "pgscan");
	DEFER_EQ(f0, 60, "file pages");

	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "charge over max succeeds after reclaim (err %d)", err);
	DEFER_EQ(ev(c, "max"), 1, "one max event");
	DEFER_EQ(ev(c, "oom"), 0, "no oom");
	DEFER_EQ(ev(c, "oom_kill"), 0, "no oom_kill");
	f1 = stp(c, "file");
	stolen = f0 - f1;
	DEFER_TRUE(f1 < f0, "file pages reclaimed (%llu -> %llu)", f0, f1);
	DEFER_EQ(stp(c, "anon"), 41, "anon untouched (+1)");
	DEFER_EQ(memcg_task_owned_pages(t), 41, "owned pages");
	DEFER_EQ(notified_blocks(c, MEMCG_PAGE_FILE, NULL, NULL, NULL), stolen,
		 "every reclaimed file page was notified");
	DEFER_EQ(notified_blocks(c, MEMCG_PAGE_ANON, NULL, NULL, NULL), 0, "no anon page freed");
	DEFER_EQ(stv(c, "pgsteal_direct") - sd0, stolen, "pgsteal_direct counts the reclaimed pages");
	DEFER_EQ(stv(c, "pgsteal") - st0, stolen, "pgsteal counts the reclaimed pages");
	DEFER_EQ(stv(c, "pgsteal_proactive") - sp0, 0, "pgsteal_proactive unchanged");
	DEFER_TRUE(stv(c, "pgscan") - sc0 >= stolen, "pgscan >= pgsteal");
	DEFER_TRUE(usage_pg(c) <= 100, "usage <= max");

	/* keep charging: usage never above max, every attempt that hits the
	 * limit counts at most one max event */
	for (unsigned int i = 0; i < 40; i++) {
		unsigned long long m0 = ev(c, "max");

		pg = palloc(i % 2 ? MEMCG_PAGE_FILE : MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
		DEFER_TRUE(pg != NULL, "charge #%u (err %d)", i, err);
		DEFER_TRUE(usage_pg(c) <= 100, "usage <= max after charge #%u", i);
		DEFER_TRUE(ev(c, "max") - m0 <= 1, "at most one max event per charge");
	}
	DEFER_EQ(ev(c, "oom"), 0, "still no oom: file pages were there to reclaim");
	DEFER_EQ(stp(c, "anon"), 61, "anon untouched");
	check_notify_names();
	finish();
}

/* ================================================================== */
/* OOM (§8.5, docs/design.md "OOM")                                            */

/*
 * The victim's memcg counts oom_kill: hierarchically in memory.events up to
 * (not including) the root, locally only in its own memory.events.local;
 * oom and max go to the memcg whose limit was hit.  The victim's owned
 * pages are freed and uncharged.
 */
static void test_oom_kill_events(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c1 = mk(p), *c2 = mk(p);
	struct memcg_task *t1 = mktask(1021, c1, 0), *t2 = mktask(1022, c2, 0);
	unsigned long long k;
	struct page *pg;
	int err;

	(void)state;
	k = base_usage(p);
	set_bytes(p, "memory.max", k + 100);
	memcg_set_current(t1);
	need(MEMCG_PAGE_ANON, 0, 60);
	memcg_drain();
	memcg_set_current(t2);
	need(MEMCG_PAGE_ANON, 0, 40);
	memcg_drain();
	DEFER_EQ(usage_pg(p), k + 100, "parent at max");
	EXPECT_EVENTS(p, "memory.events", "before", 0, 0, 0, 0, 0, 0, 0);
	nnrec = 0;

	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "the charge succeeds after the OOM kill (err %d)", err);
	DEFER_EQ(nkilled, 1, "one task killed");
	DEFER_TRUE(was_killed(1021), "the victim is the task with the most owned pages");
	DEFER_TRUE(memcg_task_oom_killed(t1), "memcg_task_oom_killed(victim)");
	DEFER_TRUE(!memcg_task_oom_killed(t2), "the charging task survives");
	DEFER_EQ(memcg_task_owned_pages(t1), 0, "victim's owned pages freed");
	DEFER_EQ(memcg_task_owned_pages(t2), 41, "charger's owned pages");
	DEFER_EQ(notified_blocks(NULL, -1, t1, NULL, NULL), 60, "each of the victim's pages notified");
	DEFER_EQ(live_pages(NULL, -1, t1), 0, "victim has no live tracked pages");
	memcg_drain();
	DEFER_EQ(usage_pg(c1), 0, "victim memcg usage");
	DEFER_EQ(usage_pg(c2), 41, "charger memcg usage");
	DEFER_EQ(usage_pg(p), k + 41, "parent usage dropped");
	DEFER_EQ(stv(c1, "anon"), 0, "victim memcg anon");

	EXPECT_EVENTS(p, "memory.events", "OOM domain (hierarchical)", 0, 0, 1, 1, 1, 0, 0);
	EXPECT_EVENTS(p, "memory.events.local", "OOM domain (local)", 0, 0, 1, 1, 0, 0, 0);
	EXPECT_EVENTS(c1, "memory.events", "victim memcg", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(c1, "memory.events.local", "victim memcg local", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(c2, "memory.events", "charger memcg", 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(c2, "memory.events.local", "charger memcg local", 0, 0, 0, 0, 0, 0, 0);

	DEFER_TRUE(notified(p, "memory.events") >= 1, "notify (p, memory.events)");
	DEFER_TRUE(notified(p, "memory.events.local") >= 1, "notify (p, memory.events.local)");
	DEFER_TRUE(notified(c1, "memory.events") >= 1, "notify (c1, memory.events)");
	DEFER_TRUE(notified(c1, "memory.events.local") >= 1, "notify (c1, memory.events.local)");
	DEFER_EQ(notified(c2, "memory.events") + notified(c2, "memory.events.local"), 0,
		 "no memory.events notification for the charger's memcg");
	check_notify_names();
	expect_memcg_check("after the OOM kill");
	finish();
}

/* A scenario for the badness rule: tasks in one memcg limited to 2000 pages
 * (a multiple of 1000, so adj * totalpages / 1000 is exact), filled to the
 * limit by a -1000 task, which then charges one more page. */
struct tspec {
	pid_t pid;
	int adj;
	unsigned int anon, kstack, pt, shmem;
};

static void badness_case(const char *name, const struct tspec *ts, unsigned int n,
			 const unsigned int *charge_order, pid_t expect)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *tt[8], *filler;
	unsigned long sum = 0;
	unsigned int kill0 = nkilled;
	struct page *pg;
	int err;

	set_bytes(c, "memory.max", 2000);
	for (unsigned int i = 0; i < n; i++)
		tt[i] = mktask(ts[i].pid, c, ts[i].adj);
	filler = mktask(ts[0].pid + 100, c, -1000);
	for (unsigned int j = 0; j < n; j++) {
		unsigned int i = charge_order ? charge_order[j] : j;

		memcg_set_current(tt[i]);
		need(MEMCG_PAGE_ANON, 0, ts[i].anon);
		need(MEMCG_PAGE_KERNEL_STACK, 0, ts[i].kstack);
		need(MEMCG_PAGE_PAGETABLES, 0, ts[i].pt);
		need(MEMCG_PAGE_SHMEM, 0, ts[i].shmem);
		memcg_drain();
		sum += ts[i].anon + ts[i].kstack + ts[i].pt + ts[i].shmem;
		DEFER_EQ(memcg_task_owned_pages(tt[i]), ts[i].anon + ts[i].kstack + ts[i].pt,
			 "%s: owned pages of %d (anon, kernel_stack, pagetables)", name, (int)ts[i].pid);
	}
	memcg_set_current(filler);
	need(MEMCG_PAGE_ANON, 0, 2000 - sum);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 2000, "%s: filled to max", name);
	DEFER_EQ(nkilled - kill0, 0, "%s: no kill while filling", name);
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "%s: the charge succeeds after the kill (err %d)", name, err);
	DEFER_EQ(nkilled - kill0, 1, "%s: one task killed", name);
	if (nkilled - kill0 >= 1 && nkilled <= MAX_KILLED)
		DEFER_EQ(killed_log[kill0], expect, "%s: victim pid", name);
	for (unsigned int i = 0; i < n; i++) {
		if (ts[i].pid == expect) {
			DEFER_TRUE(memcg_task_oom_killed(tt[i]), "%s: victim flagged", name);
			DEFER_EQ(memcg_task_owned_pages(tt[i]), 0, "%s: victim's owned pages freed", name);
		} else {
			DEFER_TRUE(!memcg_task_oom_killed(tt[i]), "%s: %d not killed", name, (int)ts[i].pid);
		}
	}
	DEFER_TRUE(!memcg_task_oom_killed(filler), "%s: -1000 filler never killed", name);
	DEFER_EQ(ev(c, "oom_kill"), 1, "%s: oom_kill", name);
	DEFER_EQ(ev(c, "oom"), 1, "%s: oom", name);
	DEFER_EQ(ev(c, "max"), 1, "%s: max", name);
	finish();
	ntask = 0;
}

static void test_oom_badness(void **state)
{
	(void)state;
	{
		/* kernel_stack and pagetables count, shmem does not */
		const struct tspec ts[] = {
			{ 1101, 0, 20, 0, 0, 0 },
			{ 1102, 0, 10, 8, 8, 0 },	/* 26 */
			{ 1103, 0, 5, 0, 0, 40 },	/* 5 (shmem not owned) */
		};
		badness_case("kstack+pagetables", ts, 3, NULL, 1102);
	}
	{
		/* positive adj: 100 + 150 * 2000 / 1000 = 400 > 300 */
		const struct tspec ts[] = {
			{ 1111, 0, 300, 0, 0, 0 },
			{ 1112, 150, 100, 0, 0, 0 },
		};
		badness_case("adj +150", ts, 2, NULL, 1112);
	}
	{
		/* negative adj: 300 - 50 * 2 = 200 < 250 */
		const struct tspec ts[] = {
			{ 1121, -50, 300, 0, 0, 0 },
			{ 1122, 0, 250, 0, 0, 0 },
		};
		badness_case("adj -50", ts, 2, NULL, 1122);
	}
	{
		/* totalpages of a memcg OOM is the memcg's max (2000): 100 + 50 * 2
		 * = 200 < 300.  (With the arena's 16384 pages it would be 919.) */
		const struct tspec ts[] = {
			{ 1131, 0, 300, 0, 0, 0 },
			{ 1132, 50, 100, 0, 0, 0 },
		};
		badness_case("adj scaled by the memcg's max", ts, 2, NULL, 1131);
	}
	{
		/* -1000 is never chosen, however large */
		const struct tspec ts[] = {
			{ 1141, -1000, 900, 0, 0, 0 },
			{ 1142, 0, 10, 0, 0, 0 },
		};
		badness_case("-1000", ts, 2, NULL, 1142);
	}
	{
		/* ties go to the most recent charger, not to creation order */
		const struct tspec ts[] = {
			{ 1151, 0, 30, 0, 0, 0 },
			{ 1152, 0, 30, 0, 0, 0 },
			{ 1153, 0, 10, 0, 0, 0 },
		};
		const unsigned int rev[] = { 2, 1, 0 }, fwd[] = { 0, 1, 2 };

		badness_case("tie, charged 1153, 1152, 1151", ts, 3, rev, 1151);
		badness_case("tie, charged 1151, 1152, 1153", ts, 3, fwd, 1152);
	}
}

/*
 * Badness is at least 1: a task with nothing owned is chosen over -1000
 * tasks; a task is chosen at most once per charge; once nobody is left, the
 * charge fails with ENOMEM.  The OOM path is entered twice (the kill, then
 * nobody): oom 2, oom_kill 1, max 1.
 */
static void test_oom_at_least_one(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *tz = mktask(1201, c, 0), *tn = mktask(1202, c, -1000);
	struct page *pg;
	int err;

	(void)state;
	set_bytes(c, "memory.max", 100);
	memcg_set_current(tn);
	need(MEMCG_PAGE_ANON, 0, 100);
	memcg_drain();
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg == NULL, "nothing freed by the kill: the charge fails");
	DEFER_EQ(err, -ENOMEM, "err");
	DEFER_EQ(nkilled, 1, "one kill");
	DEFER_TRUE(was_killed(1201), "the task owning nothing (badness 1) is the victim");
	DEFER_TRUE(memcg_task_oom_killed(tz), "flagged");
	DEFER_TRUE(!memcg_task_oom_killed(tn), "-1000 spared");
	DEFER_EQ(memcg_task_owned_pages(tn), 100, "-1000 task's pages intact");
	EXPECT_EVENTS(c, "memory.events", "badness-1 victim", 0, 0, 1, 2, 1, 0, 0);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 100, "usage unchanged");
	finish();
}

/*
 * memory.oom.group (§7.6): the highest memcg with oom.group=1 on the path
 * from the victim's memcg up to the OOM domain has all its tasks killed
 * (descendants included), except -1000 ones; oom_group_kill counts once
 * there, oom_kill once per task killed, on each task's memcg.
 */
static void test_oom_group(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *g = mk(p), *h = mk(g), *o = mk(p);
	struct memcg_task *g1 = mktask(1301, g, 0), *g2 = mktask(1302, g, 0);
	struct memcg_task *g3 = mktask(1303, g, -1000), *h1 = mktask(1304, h, 0);
	struct memcg_task *o1 = mktask(1305, o, 0), *of = mktask(1306, o, -1000);
	unsigned long long k;
	struct page *pg;
	int err;

	(void)state;
	DEFER_EQ(write_str(g, "memory.oom.group", "1"), 0, "oom.group = 1");
	k = base_usage(p);
	set_bytes(p, "memory.max", k + 1000);
	memcg_set_current(g1); need(MEMCG_PAGE_ANON, 0, 300); memcg_drain();
	memcg_set_current(g2); need(MEMCG_PAGE_ANON, 0, 100); memcg_drain();
	memcg_set_current(g3); need(MEMCG_PAGE_ANON, 0, 50); memcg_drain();
	memcg_set_current(h1); need(MEMCG_PAGE_ANON, 0, 50); memcg_drain();
	memcg_set_current(o1); need(MEMCG_PAGE_ANON, 0, 200); memcg_drain();
	memcg_set_current(of); need(MEMCG_PAGE_ANON, 0, 300); memcg_drain();
	DEFER_EQ(usage_pg(p), k + 1000, "filled to max");
	DEFER_EQ(nkilled, 0, "no kill while filling");

	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "charge succeeds after the group kill (err %d)", err);
	DEFER_EQ(nkilled, 3, "g1, g2 and h1 killed");
	DEFER_TRUE(was_killed(1301) && was_killed(1302) && was_killed(1304), "the group's tasks");
	DEFER_TRUE(!memcg_task_oom_killed(g3), "-1000 member spared");
	DEFER_TRUE(!memcg_task_oom_killed(o1) && !memcg_task_oom_killed(of), "outside the group spared");
	DEFER_EQ(memcg_task_owned_pages(g1) + memcg_task_owned_pages(g2) + memcg_task_owned_pages(h1), 0,
		 "the killed tasks' pages freed");
	DEFER_EQ(memcg_task_owned_pages(g3), 50, "-1000 member's pages");
	DEFER_EQ(memcg_task_owned_pages(o1), 200, "o1's pages");

	EXPECT_EVENTS(p, "memory.events", "p (OOM domain), hierarchical", 0, 0, 1, 1, 3, 1, 0);
	EXPECT_EVENTS(p, "memory.events.local", "p local", 0, 0, 1, 1, 0, 0, 0);
	EXPECT_EVENTS(g, "memory.events", "g (the group), hierarchical", 0, 0, 0, 0, 3, 1, 0);
	EXPECT_EVENTS(g, "memory.events.local", "g local", 0, 0, 0, 0, 2, 1, 0);
	EXPECT_EVENTS(h, "memory.events", "h", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(h, "memory.events.local", "h local", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(o, "memory.events", "o", 0, 0, 0, 0, 0, 0, 0);
	memcg_drain();
	DEFER_EQ(usage_pg(p), k + 1000 - 450 + 1, "usage after the group kill");
	check_notify_names();
	finish();
}

/* The OOM domain itself has oom.group: everything under it but -1000. */
static void test_oom_group_domain(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *g = mk(p), *o = mk(p);
	struct memcg_task *g1 = mktask(1351, g, 0), *g3 = mktask(1353, g, -1000);
	struct memcg_task *o1 = mktask(1355, o, 0), *of = mktask(1356, o, -1000);
	unsigned long long k;
	struct page *pg;
	int err;

	(void)state;
	DEFER_EQ(write_str(g, "memory.oom.group", "1"), 0, "g oom.group = 1");
	DEFER_EQ(write_str(p, "memory.oom.group", "1"), 0, "p oom.group = 1");
	k = base_usage(p);
	set_bytes(p, "memory.max", k + 600);
	memcg_set_current(g1); need(MEMCG_PAGE_ANON, 0, 300); memcg_drain();
	memcg_set_current(g3); need(MEMCG_PAGE_ANON, 0, 50); memcg_drain();
	memcg_set_current(o1); need(MEMCG_PAGE_ANON, 0, 100); memcg_drain();
	memcg_set_current(of); need(MEMCG_PAGE_ANON, 0, 150); memcg_drain();
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "charge succeeds (err %d)", err);
	DEFER_EQ(nkilled, 2, "g1 and o1 killed");
	DEFER_TRUE(was_killed(1351) && was_killed(1355), "every non-(-1000) task under p");
	DEFER_TRUE(!memcg_task_oom_killed(g3) && !memcg_task_oom_killed(of), "-1000 tasks spared");
	EXPECT_EVENTS(p, "memory.events", "p hierarchical", 0, 0, 1, 1, 2, 1, 0);
	EXPECT_EVENTS(p, "memory.events.local", "p local: the group kill is p's", 0, 0, 1, 1, 0, 1, 0);
	EXPECT_EVENTS(g, "memory.events.local", "g local: no group kill here", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(o, "memory.events.local", "o local", 0, 0, 0, 0, 1, 0, 0);
	finish();
}

/* oom.group above the OOM domain does not count: only the victim dies. */
static void test_oom_group_above_domain(void **state)
{
	struct mem_cgroup *q = mk(root_mem_cgroup()), *p = mk(q);
	struct memcg_task *p1 = mktask(1371, p, 0), *p2 = mktask(1372, p, 0);
	struct memcg_task *pf = mktask(1373, p, -1000);
	struct page *pg;
	int err;

	(void)state;
	DEFER_EQ(write_str(q, "memory.oom.group", "1"), 0, "q oom.group = 1");
	set_bytes(p, "memory.max", 200);
	memcg_set_current(p1); need(MEMCG_PAGE_ANON, 0, 100); memcg_drain();
	memcg_set_current(p2); need(MEMCG_PAGE_ANON, 0, 50); memcg_drain();
	memcg_set_current(pf); need(MEMCG_PAGE_ANON, 0, 50); memcg_drain();
	pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "charge succeeds (err %d)", err);
	DEFER_EQ(nkilled, 1, "only the victim");
	DEFER_TRUE(was_killed(1371), "victim p1");
	DEFER_TRUE(!memcg_task_oom_killed(p2), "p2 alive: q's oom.group is above the OOM domain");
	EXPECT_EVENTS(q, "memory.events", "q", 0, 0, 1, 1, 1, 0, 0);
	EXPECT_EVENTS(q, "memory.events.local", "q local", 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events.local", "p local", 0, 0, 1, 1, 1, 0, 0);
	finish();
}

/* Exit: the task's own pages (anon, kernel_stack, pagetables) are freed and
 * uncharged; others stay. */
static void test_exit_uncharges_owned(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1401, c, 0);

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, 10);
	need(MEMCG_PAGE_ANON, 2, 2);
	need(MEMCG_PAGE_KERNEL_STACK, 0, 2);
	need(MEMCG_PAGE_PAGETABLES, 0, 3);
	need(MEMCG_PAGE_FILE, 0, 5);
	need(MEMCG_PAGE_SHMEM, 0, 2);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 10 + 8 + 2 + 3 + 5 + 2, "usage");
	DEFER_EQ(memcg_task_owned_pages(t), 23, "owned");
	texit(t);
	memcg_drain();
	DEFER_EQ(notified_blocks(c, -1, NULL, NULL, NULL), 17, "the owned blocks were notified");
	DEFER_EQ(notified_blocks(c, MEMCG_PAGE_FILE, NULL, NULL, NULL) +
		 notified_blocks(c, MEMCG_PAGE_SHMEM, NULL, NULL, NULL), 0, "file/shmem stay");
	DEFER_EQ(usage_pg(c), 7, "usage after exit");
	DEFER_EQ(stv(c, "anon"), 0, "anon");
	DEFER_EQ(stv(c, "kernel_stack"), 0, "kernel_stack");
	DEFER_EQ(stv(c, "pagetables"), 0, "pagetables");
	/* §9: file is the page cache including tmpfs/shm (shmem) */
	DEFER_EQ(stp(c, "file"), 5 + 2, "file (file + shmem)");
	DEFER_EQ(stp(c, "shmem"), 2, "shmem");
	finish();
}

/* ================================================================== */
/* Reclaim (issue 4 "Reclaim", §7.7)                                   */

static void mk_rcache(void)
{
	int err = 0;

	rcache = kmem_cache_create_err("lim_reclaimable", 1000, 0,
				       SLAB_ACCOUNT | SLAB_RECLAIM_ACCOUNT, &err);
	if (!rcache) {
		print_error("kmem_cache_create(lim_reclaimable) = %d\n", err);
		fail();
	}
}

/*
 * Reclaim takes file pages first (inactive then active), then reclaimable
 * slab through shrinkers, never anon.  The test shrinker records how many
 * file pages of the memcg were still alive when it was first asked to scan.
 */
static void test_reclaim_order(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1501, c, 0);
	unsigned long long a0, f0, f1, s0, st0, sc0, sp0, sd0, u0, u1, r;
	unsigned long fmax_seq = 0;

	(void)state;
	mk_rcache();
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, 40);
	need(MEMCG_PAGE_FILE, 0, 100);
	robj_alloc(200);
	memcg_set_current(NULL);
	shr_reset();
	register_shrinker(&test_shrinker);
	memcg_drain();
	a0 = stv(c, "anon");
	f0 = stp(c, "file");
	s0 = stv(c, "slab_reclaimable");
	st0 = stv(c, "pgsteal");
	sc0 = stv(c, "pgscan");
	sp0 = stv(c, "pgsteal_proactive");
	sd0 = stv(c, "pgsteal_direct");
	u0 = usage_pg(c);
	DEFER_EQ(a0, 40 * PG, "anon");
	DEFER_EQ(f0, 100, "file");
	DEFER_TRUE(s0 >= 200 * 1000, "slab_reclaimable counts the objects (%llu)", s0);

	/* 1. less than the file pages: no slab touched */
	DEFER_EQ(write_str(c, "memory.reclaim", "40960"), 0, "memory.reclaim 10 pages");
	memcg_drain();
	f1 = stp(c, "file");
	DEFER_TRUE(f1 <= f0 - 10, "at least 10 file pages reclaimed (%llu -> %llu)", f0, f1);
	DEFER_TRUE(f1 > 0, "not every file page for 10 asked (%llu left)", f1);
	DEFER_EQ(shr_scan_calls, 0, "shrinker not asked to scan while file pages remain");
	DEFER_EQ(robj_alive(c), 200, "no reclaimable object freed");
	DEFER_EQ(stv(c, "slab_reclaimable"), s0, "slab_reclaimable unchanged");
	DEFER_EQ(stv(c, "anon"), a0, "anon untouched");
	DEFER_EQ(stv(c, "pgsteal") - st0, f0 - f1, "pgsteal = file pages reclaimed");
	DEFER_EQ(stv(c, "pgsteal_proactive") - sp0, f0 - f1, "pgsteal_proactive (memory.reclaim)");
	DEFER_EQ(stv(c, "pgsteal_direct") - sd0, 0, "pgsteal_direct unchanged");
	DEFER_TRUE(stv(c, "pgscan") - sc0 >= f0 - f1, "pgscan >= pgsteal");
	DEFER_EQ(notified_blocks(c, MEMCG_PAGE_FILE, NULL, NULL, NULL), f0 - f1, "file pages notified");
	u1 = usage_pg(c);
	DEFER_EQ(u0 - u1, f0 - f1, "usage dropped by the file pages reclaimed");

	/* 2. more than the file pages: file exhausted, then slab */
	sd0 = stv(c, "pgsteal_direct");
	r = try_to_free_mem_cgroup_pages(c, f1 + 20, GFP_KERNEL, false);
	memcg_drain();
	DEFER_TRUE(r >= f1, "try_to_free_mem_cgroup_pages returns at least the file pages (%llu < %llu)", r, f1);
	DEFER_EQ(stp(c, "file"), 0, "every file page reclaimed");
	DEFER_TRUE(shr_scan_calls >= 1, "shrinker asked once file pages are gone");
	DEFER_TRUE(shr_freed >= 1, "shrinker freed objects");
	DEFER_EQ(shr_file_at_first_scan, 0, "file pages left when the shrinker was first asked");
	notified_blocks(c, MEMCG_PAGE_FILE, NULL, NULL, &fmax_seq);
	DEFER_TRUE(shr_first_scan_seq > fmax_seq, "the last file page went before the first shrinker scan");
	DEFER_EQ(stv(c, "pgsteal_direct") - sd0, f1, "pgsteal_direct counts the file pages");
	DEFER_TRUE(stv(c, "slab_reclaimable") < s0, "slab_reclaimable dropped");
	DEFER_EQ(stv(c, "anon"), a0, "anon untouched");
	DEFER_EQ(notified_blocks(c, MEMCG_PAGE_ANON, NULL, NULL, NULL), 0, "no anon page freed");

	/* 3. everything: EAGAIN, all reclaimable slab gone, anon stays */
	DEFER_EQ(write_str(c, "memory.reclaim", "1G"), -EAGAIN, "memory.reclaim 1G");
	memcg_drain();
	DEFER_EQ(robj_alive(c), 0, "every reclaimable object freed");
	DEFER_EQ(stv(c, "slab_reclaimable"), 0, "slab_reclaimable");
	DEFER_EQ(stv(c, "anon"), a0, "anon untouched");
	DEFER_EQ(memcg_task_owned_pages(t), 40, "owned pages");
	DEFER_EQ(usage_pg(c), 40, "only anon remains charged");
	DEFER_EQ(stv(c, "pgsteal"), stv(c, "pgsteal_proactive") + stv(c, "pgsteal_direct") +
		 stv(c, "pgsteal_kswapd") + stv(c, "pgsteal_khugepaged"), "pgsteal is the sum");
	DEFER_EQ(stv(c, "pgscan"), stv(c, "pgscan_proactive") + stv(c, "pgscan_direct") +
		 stv(c, "pgscan_kswapd") + stv(c, "pgscan_khugepaged"), "pgscan is the sum");
	EXPECT_EVENTS(c, "memory.events", "proactive reclaim raises no event", 0, 0, 0, 0, 0, 0, 0);
	unregister_shrinker(&test_shrinker);
	finish();
}

/* The blocks allocated from index 'first' on, in order, as pages. */
static struct page *blk_page(unsigned int i)
{
	return blks[i].pg;
}

/* ":i,j,..." of the blocks from first..first+n-1 in the order reclaim freed them. */
static void reclaim_order(unsigned int first, unsigned int n, char *out, size_t len)
{
	size_t pos = 0;
	unsigned long last = 0;

	out[0] = '\0';
	for (;;) {
		unsigned long best = ~0ul;
		int bi = -1;

		for (unsigned int i = first; i < first + n; i++)
			if (blks[i].notified && blks[i].seq > last && blks[i].seq < best) {
				best = blks[i].seq;
				bi = (int)i;
			}
		if (bi < 0 || pos + 8 >= len)
			break;
		pos += (size_t)snprintf(out + pos, len - pos, "%s%u", pos ? "," : "",
					(unsigned int)bi - first);
		last = best;
	}
}

/*
 * The second reference of an inactive page activates it (the kernel's
 * folio_mark_accessed): a file page's first is its allocation, an anon
 * page needs two marks; an active page stays; pgactivate counts them.
 */
static void test_mark_page_accessed(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1521, c, 0);
	unsigned int f = nblk, a;

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 4);
	a = nblk;
	need(MEMCG_PAGE_ANON, 0, 2);
	memcg_set_current(NULL);
	DEFER_EQ(stp(c, "active_file"), 0, "no page active at first");
	DEFER_EQ(memcg_mark_page_accessed(blk_page(f), memcg_page_id(blk_page(f))), 0, "mark file 0");
	DEFER_EQ(stp(c, "active_file"), 1, "a file page's second reference activates it");
	DEFER_EQ(stp(c, "inactive_file"), 3, "three stay inactive");
	DEFER_EQ(stv(c, "pgactivate"), 1, "pgactivate");
	DEFER_EQ(memcg_mark_page_accessed(blk_page(f), memcg_page_id(blk_page(f))), 0, "again");
	DEFER_EQ(memcg_mark_page_accessed(blk_page(f), memcg_page_id(blk_page(f))), 0, "again");
	DEFER_EQ(stp(c, "active_file"), 1, "an active page stays active");
	DEFER_EQ(stv(c, "pgactivate"), 1, "... and is not counted again");
	DEFER_EQ(memcg_mark_page_accessed(blk_page(a), memcg_page_id(blk_page(a))), 0, "mark anon 0");
	DEFER_EQ(stp(c, "active_anon"), 0, "an anon page's first reference: only its flag");
	DEFER_EQ(memcg_mark_page_accessed(blk_page(a), memcg_page_id(blk_page(a))), 0, "again");
	DEFER_EQ(stp(c, "active_anon"), 1, "the second activates it");
	DEFER_EQ(stp(c, "inactive_anon"), 1, "the other anon page stays inactive");
	DEFER_EQ(stv(c, "pgactivate"), 2, "pgactivate counts both");
	DEFER_EQ(memcg_mark_page_accessed(blk_page(f + 1), memcg_page_id(blk_page(f + 1)) + 1),
		 -ENOENT, "another allocation's id: -ENOENT");
	DEFER_EQ(stp(c, "active_file"), 1, "... nothing marked");
	finish();
}

/*
 * Reclaim takes the inactive list from its tail, the oldest first (after
 * one rotation: a file page is referenced when allocated), and leaves the
 * active list alone while the inactive list is not low; once it is low
 * (inactive < active), the active list's tail is deactivated to the
 * inactive head (pgrefill, pgdeactivate) and reclaimed after the rest.
 */
static void test_reclaim_lru_order(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup()), *d = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1522, c, 0), *u = mktask(1523, d, 0);
	unsigned int f = nblk, g;
	char order[512], want[512];
	size_t pos = 0;

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 64);
	memcg_set_current(NULL);
	for (unsigned int i = 0; i < 8; i++)
		DEFER_EQ(memcg_mark_page_accessed(blk_page(f + i), memcg_page_id(blk_page(f + i))), 0,
			 "activate page %u", i);
	DEFER_EQ(try_to_free_mem_cgroup_pages(c, 32, GFP_KERNEL, false), 32, "reclaim 32 pages");
	reclaim_order(f, 64, order, sizeof(order));
	for (unsigned int i = 8; i < 40; i++)
		pos += (size_t)snprintf(want + pos, sizeof(want) - pos, "%s%u", i > 8 ? "," : "", i);
	DEFER_STR(order, want, "the 32 oldest inactive pages, oldest first; the 8 active ones stay");
	/* 56 rotated once (referenced since their charge), 32 of them taken after */
	DEFER_EQ(stv(c, "pgscan"), 88, "pgscan: the rotations and the reclaimed");
	DEFER_EQ(stv(c, "pgsteal"), 32, "pgsteal");
	DEFER_EQ(stp(c, "active_file"), 8, "active_file");
	DEFER_EQ(stv(c, "pgdeactivate"), 0, "inactive not low (56 against 8): no deactivation");
	DEFER_EQ(stv(c, "pgrefill"), 0, "... and no active page scanned");

	/* 16 pages, 12 activated: inactive is low */
	memcg_set_current(u);
	g = nblk;
	need(MEMCG_PAGE_FILE, 0, 16);
	memcg_set_current(NULL);
	for (unsigned int i = 0; i < 12; i++)
		memcg_mark_page_accessed(blk_page(g + i), memcg_page_id(blk_page(g + i)));
	DEFER_EQ(stv(d, "pgactivate"), 12, "pgactivate");
	DEFER_EQ(try_to_free_mem_cgroup_pages(d, 16, GFP_KERNEL, false), 16, "reclaim all 16");
	reclaim_order(g, 16, order, sizeof(order));
	DEFER_STR(order, "12,13,14,15,0,1,2,3,4,5,6,7,8,9,10,11",
		    "the inactive pages first, then the deactivated ones from the active tail");
	DEFER_EQ(stv(d, "pgdeactivate"), 12, "pgdeactivate");
	DEFER_EQ(stv(d, "pgrefill"), 12, "pgrefill");
	DEFER_EQ(stp(d, "active_file") + stp(d, "inactive_file"), 0, "the lists are empty");
	finish();
}

/*
 * A signal to the writer ends memory.reclaim with -EINTR between batches
 * (the kernel's memory_reclaim() polls signal_pending()): pending at the
 * start, nothing is scanned; arriving during a batch, the next batch is
 * not started, where without it the fruitless retries end in -EAGAIN.
 */
static void test_memory_reclaim_signal(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1512, c, 0);
	static _Atomic bool sig;
	unsigned long long f, sc;

	(void)state;
	mk_rcache();
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 100);
	memcg_set_current(NULL);
	memcg_drain();
	f = stp(c, "file");
	sc = stv(c, "pgscan");
	atomic_store(&sig, true);
	memcg_set_signal(&sig);
	DEFER_EQ(write_str(c, "memory.reclaim", "1M"), -EINTR, "memory.reclaim with a signal pending");
	DEFER_EQ(stp(c, "file"), f, "nothing reclaimed");
	DEFER_EQ(stv(c, "pgscan"), sc, "nothing scanned");
	atomic_store(&sig, false);
	DEFER_EQ(write_str(c, "memory.reclaim", "40K"), 0, "no signal: memory.reclaim 40K");

	/* only reclaimable slab: the shrinker's first scan raises the signal */
	DEFER_EQ(write_str(c, "memory.reclaim", "1G"), -EAGAIN, "file pages gone: 1G fails");
	memcg_set_current(t);
	robj_alloc(50);
	memcg_set_current(NULL);
	shr_reset();
	register_shrinker(&test_shrinker);
	shr_signal = &sig;
	DEFER_EQ(write_str(c, "memory.reclaim", "1G"), -EINTR,
		 "a signal during a batch: -EINTR before the next one (-EAGAIN without)");
	DEFER_TRUE(shr_freed > 0, "the batch under way freed objects (%lu)", shr_freed);
	shr_signal = NULL;
	unregister_shrinker(&test_shrinker);
	memcg_set_signal(NULL);
	finish();
}

/* memory.reclaim's syntax and results (§7.7). */
static void test_memory_reclaim_writes(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1511, c, 0);
	static const char *const bad[] = {
		"\n", " ", "abc", "max", "-4096", "1.5M", "1KB", "4096 foo",
		"4096 swappiness=201", "4096 swappiness=-1", "4096 swappiness=abc",
		"4096 swappiness=", "swappiness=60", "4096 swappiness=60 bogus",
		"1G foo",
	};
	unsigned long long f, f2, sc;

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 400);
	need(MEMCG_PAGE_ANON, 0, 10);
	memcg_set_current(NULL);
	memcg_drain();
	f = stp(c, "file");
	sc = stv(c, "pgscan");
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		DEFER_EQ(write_str(c, "memory.reclaim", bad[i]), -EINVAL, "memory.reclaim \"%s\"", bad[i]);
		DEFER_EQ(stp(c, "file"), f, "nothing reclaimed by \"%s\"", bad[i]);
	}
	/* §1.2: a zero-length write returns 0, the handler is not called */
	DEFER_EQ(write_str(c, "memory.reclaim", ""), 0, "zero-length write");
	DEFER_EQ(write_str(c, "memory.reclaim", "4095"), 0, "under a page: success");
	DEFER_EQ(write_str(c, "memory.reclaim", "0"), 0, "0: success");
	DEFER_EQ(write_str(c, "memory.reclaim", "100 swappiness=60"), 0, "under a page with swappiness");
	DEFER_EQ(write_str(c, "memory.reclaim", "1k"), 0, "1k: 0 pages");
	DEFER_EQ(stp(c, "file"), f, "nothing reclaimed for < 4096 bytes");
	DEFER_EQ(stv(c, "pgscan"), sc, "nothing scanned for < 4096 bytes");

	/* anon only, and there is no swap: nothing can be reclaimed */
	DEFER_EQ(write_str(c, "memory.reclaim", "4096 swappiness=max"), -EAGAIN, "swappiness=max without swap");
	DEFER_EQ(stp(c, "file"), f, "swappiness=max leaves file pages alone");

	/*
	 * Valid amounts.  Over-reclaim is possible (§7.7), but bounded as the
	 * kernel bounds it: try_to_free_mem_cgroup_pages aims at
	 * max(nr, SWAP_CLUSTER_MAX = 32) and shrink_lruvec stops once that is
	 * reached (cgroup reclaim is not proportional), so a small request on
	 * a 400-page list takes at most a few 32-page batches, never the
	 * whole list: 128 pages is a generous bound.  The file list is topped
	 * up to 400 pages before each step.
	 */
	{
		static const char *const ok[] = {
			"40960 swappiness=0", "8192  swappiness=200\n", "0x2000", "4096 swappiness=60",
		};
		static const char *const label[] = {
			"40960 swappiness=0", "8192  swappiness=200\\n", "0x2000", "4096 swappiness=60",
		};
		static const unsigned long long want[] = { 10, 2, 2, 1 };

		for (unsigned int i = 0; i < 4; i++) {
			memcg_set_current(t);
			need(MEMCG_PAGE_FILE, 0, (unsigned int)(400 - stp(c, "file")));
			memcg_set_current(NULL);
			f = stp(c, "file");
			DEFER_EQ(write_str(c, "memory.reclaim", ok[i]), 0, "memory.reclaim \"%s\"", label[i]);
			f2 = stp(c, "file");
			print_message("memory.reclaim \"%s\": file %llu -> %llu\n", label[i], f, f2);
			DEFER_TRUE(f2 + want[i] <= f, "\"%s\": at least %llu pages reclaimed (%llu -> %llu)",
				   label[i], want[i], f, f2);
			DEFER_TRUE(f - f2 <= 128, "\"%s\": asked %llu pages of %llu, took %llu",
				   label[i], want[i], f, f - f2);
		}
	}
	DEFER_EQ(write_str(c, "memory.reclaim", "1G"), -EAGAIN, "more than reclaimable");
	DEFER_EQ(stp(c, "file"), 0, "every file page reclaimed");
	DEFER_EQ(stp(c, "anon"), 10, "anon untouched");
	DEFER_EQ(write_str(c, "memory.reclaim", "4096"), -EAGAIN, "nothing left");
	DEFER_EQ(write_str(c, "memory.reclaim", "4095"), 0, "under a page is still success");
	finish();
}

/* ================================================================== */
/* Protection (§8.2)                                                   */

/* memory.min protects fully; a sibling is reclaimed to nothing. */
static void test_protection_min(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p), *b = mk(p);
	struct memcg_task *ta = mktask(1601, a, 0), *tb = mktask(1602, b, 0);

	(void)state;
	set_bytes(a, "memory.min", 200);
	memcg_set_current(ta); need(MEMCG_PAGE_FILE, 0, 100);
	memcg_set_current(tb); need(MEMCG_PAGE_FILE, 0, 100);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(write_str(p, "memory.reclaim", "1G"), -EAGAIN, "reclaim everything from p");
	DEFER_EQ(stp(a, "file"), 100, "a (min >= usage) keeps every file page");
	DEFER_EQ(live_pages(a, MEMCG_PAGE_FILE, NULL), 100, "no page of a notified");
	DEFER_EQ(stp(b, "file"), 0, "b loses all");
	DEFER_EQ(ev(a, "low"), 0, "no low event for min");
	/* a direct charge-time reclaim also respects it */
	DEFER_EQ(try_to_free_mem_cgroup_pages(p, 50, GFP_KERNEL, false), 0,
		 "nothing reclaimable outside a's min");
	DEFER_EQ(stp(a, "file"), 100, "a still intact");
	finish();
}

/*
 * Three levels, claimed protection within the parent's: a (min 300) ->
 * a1 (min 80, 80 pages) and a2 (min 0, 80 pages).  siblings = 80 <= 300, so
 * emin(a1) = 80 (fully protected) and emin(a2) = 0 (without
 * memory_recursiveprot the rest of a's protection is not distributed).
 */
static void test_protection_min_nested(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p), *a1 = mk(a), *a2 = mk(a), *b = mk(p);
	struct memcg_task *t1 = mktask(1611, a1, 0), *t2 = mktask(1612, a2, 0), *tb = mktask(1613, b, 0);

	(void)state;
	set_bytes(a, "memory.min", 300);
	set_bytes(a1, "memory.min", 80);
	memcg_set_current(t1); need(MEMCG_PAGE_FILE, 0, 80);
	memcg_set_current(t2); need(MEMCG_PAGE_FILE, 0, 80);
	memcg_set_current(tb); need(MEMCG_PAGE_FILE, 0, 50);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(write_str(p, "memory.reclaim", "1G"), -EAGAIN, "reclaim everything from p");
	DEFER_EQ(stp(a1, "file"), 80, "a1 keeps its pages (emin 80)");
	DEFER_EQ(stp(a2, "file"), 0, "a2 has no effective protection");
	DEFER_EQ(stp(b, "file"), 0, "b unprotected");
	finish();
}

/*
 * Over-committed protection: a (min 100) -> a1, a2 (min 80 each, 80 pages
 * each): siblings 160 > 100, emin = 80 * 100 / 160 = 50 each.  Neither is
 * below min, so both are reclaimed until the claimed protection fits a's:
 * at the end a1 + a2 <= 100, and each keeps some.
 */
static void test_protection_min_proportional(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p), *a1 = mk(a), *a2 = mk(a);
	struct memcg_task *t1 = mktask(1621, a1, 0), *t2 = mktask(1622, a2, 0);
	unsigned long long f1, f2;

	(void)state;
	set_bytes(a, "memory.min", 100);
	set_bytes(a1, "memory.min", 80);
	set_bytes(a2, "memory.min", 80);
	memcg_set_current(t1); need(MEMCG_PAGE_FILE, 0, 80);
	memcg_set_current(t2); need(MEMCG_PAGE_FILE, 0, 80);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(write_str(p, "memory.reclaim", "1G"), -EAGAIN, "reclaim everything from p");
	f1 = stp(a1, "file");
	f2 = stp(a2, "file");
	print_message("proportional min: a1 keeps %llu, a2 keeps %llu pages\n", f1, f2);
	DEFER_TRUE(f1 + f2 <= 100, "a1 + a2 reclaimed down to a's min (%llu + %llu)", f1, f2);
	DEFER_TRUE(f1 > 0 && f2 > 0, "both keep some (%llu, %llu)", f1, f2);
	finish();
}

/*
 * memory.low protects until everything else is gone; then it is reclaimed
 * and the low event counts (on the protected memcg, hierarchically).
 */
static void test_protection_low(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p), *b = mk(p);
	struct memcg_task *ta = mktask(1631, a, 0), *tb = mktask(1632, b, 0);
	unsigned long long fb, la;
	unsigned long bmax = 0, amin = 0;

	(void)state;
	set_bytes(a, "memory.low", 200);
	memcg_set_current(ta); need(MEMCG_PAGE_FILE, 0, 100);
	memcg_set_current(tb); need(MEMCG_PAGE_FILE, 0, 100);
	memcg_set_current(NULL);
	memcg_drain();

	DEFER_EQ(write_str(p, "memory.reclaim", "204800"), 0, "reclaim 50 pages from p");
	fb = stp(b, "file");
	DEFER_TRUE(fb <= 50, "b gave them (%llu left)", fb);
	DEFER_EQ(stp(a, "file"), 100, "a (below low) untouched while b has pages");
	DEFER_EQ(ev(a, "low"), 0, "no low event yet");

	DEFER_EQ(write_str(p, "memory.reclaim", "1G"), -EAGAIN, "reclaim everything");
	DEFER_EQ(stp(b, "file"), 0, "b empty");
	DEFER_EQ(stp(a, "file"), 0, "low is best effort: a reclaimed once nothing else is left");
	notified_blocks(b, MEMCG_PAGE_FILE, NULL, NULL, &bmax);
	notified_blocks(a, MEMCG_PAGE_FILE, NULL, &amin, NULL);
	DEFER_TRUE(bmax < amin, "every page of b went before the first page of a");
	la = evl(a, "low");
	DEFER_TRUE(la >= 1 && la != ~0ull, "a's local low event counted (%llu)", la);
	DEFER_EQ(ev(a, "low"), la, "a's hierarchical low");
	DEFER_EQ(ev(p, "low"), la, "p's hierarchical low includes a's");
	DEFER_EQ(evl(p, "low"), 0, "p (the reclaim target) has no low of its own");
	DEFER_EQ(ev(b, "low"), 0, "b never protected");
	DEFER_EQ(ev(a, "high") + ev(a, "max") + ev(a, "oom"), 0, "no other event");
	DEFER_TRUE(notified(a, "memory.events.local") >= 1, "low notified on a");
	check_notify_names();
	finish();
}

/* ================================================================== */
/* Writing memory.max / memory.high below usage (§7.3, §7.4)           */

static void test_lower_max_reclaims(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1701, c, 0);
	char buf[64];

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 150);
	need(MEMCG_PAGE_ANON, 0, 20);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 170, "usage");
	DEFER_EQ(write_str(c, "memory.max", "409600"), 0, "memory.max = 100 pages");
	read_whole(c, "memory.max", buf, sizeof(buf));
	DEFER_STR(buf, "409600\n", "memory.max");
	memcg_drain();
	DEFER_TRUE(usage_pg(c) <= 100, "usage <= new max (%llu)", usage_pg(c));
	DEFER_EQ(stp(c, "anon"), 20, "anon untouched");
	DEFER_TRUE(stp(c, "file") <= 80, "file reclaimed");
	DEFER_EQ(nkilled, 0, "no kill");
	EXPECT_EVENTS(c, "memory.events", "lowering max with file to reclaim", 0, 0, 0, 0, 0, 0, 0);
	finish();
}

/*
 * Lowering max where anon is owned by tasks: file reclaimed first, then
 * one OOM kill per round (oom event each) until usage fits.
 */
static void test_lower_max_ooms(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t1 = mktask(1711, c, 0), *t2 = mktask(1712, c, 0), *t3 = mktask(1713, c, 0);
	unsigned long fmax = 0, t1min = 0;

	(void)state;
	memcg_set_current(t1); need(MEMCG_PAGE_ANON, 0, 80);
	memcg_set_current(t2); need(MEMCG_PAGE_ANON, 0, 50);
	memcg_set_current(t3); need(MEMCG_PAGE_ANON, 0, 30); need(MEMCG_PAGE_FILE, 0, 40);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 200, "usage");
	DEFER_EQ(write_str(c, "memory.max", "245760"), 0, "memory.max = 60 pages");
	memcg_drain();
	DEFER_EQ(stp(c, "file"), 0, "file reclaimed first");
	DEFER_EQ(nkilled, 2, "two kills");
	if (nkilled >= 2) {
		DEFER_EQ(killed_log[0], 1711, "first victim: 80 pages");
		DEFER_EQ(killed_log[1], 1712, "second victim: 50 pages");
	}
	DEFER_TRUE(!memcg_task_oom_killed(t3), "t3 survives: usage fits after two kills");
	DEFER_EQ(memcg_task_owned_pages(t3), 30, "t3's pages");
	DEFER_EQ(usage_pg(c), 30, "usage");
	notified_blocks(c, MEMCG_PAGE_FILE, NULL, NULL, &fmax);
	notified_blocks(c, MEMCG_PAGE_ANON, t1, &t1min, NULL);
	DEFER_TRUE(fmax < t1min, "file pages reclaimed before the first kill");
	EXPECT_EVENTS(c, "memory.events", "lowering max into OOM", 0, 0, 0, 2, 2, 0, 0);
	EXPECT_EVENTS(c, "memory.events.local", "lowering max into OOM", 0, 0, 0, 2, 2, 0, 0);
	finish();
}

/* O_NONBLOCK: the limit is set, nothing else happens; the next charge
 * reclaims down to it. */
static void test_lower_max_nonblock(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1721, c, 0);
	struct page *pg;
	int err;

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 100);
	memcg_drain();
	DEFER_EQ(write_nb(c, "memory.max", "204800", true), 0, "nonblock memory.max = 50 pages");
	DEFER_EQ(usage_pg(c), 100, "usage unchanged");
	DEFER_EQ(stp(c, "file"), 100, "nothing reclaimed");
	EXPECT_EVENTS(c, "memory.events", "after a nonblock write", 0, 0, 0, 0, 0, 0, 0);
	pg = palloc(MEMCG_PAGE_FILE, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg != NULL, "the next charge reclaims and succeeds (err %d)", err);
	DEFER_TRUE(usage_pg(c) <= 50, "usage <= max after it (%llu)", usage_pg(c));
	EXPECT_EVENTS(c, "memory.events", "one charge over max", 0, 0, 1, 0, 0, 0, 0);
	finish();
}

static void test_lower_high_reclaims(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1731, c, 0);
	char buf[64];

	(void)state;
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 0, 100);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(write_nb(c, "memory.high", "307200", true), 0, "nonblock memory.high = 75 pages");
	DEFER_EQ(stp(c, "file"), 100, "nonblock: nothing reclaimed");
	DEFER_EQ(write_str(c, "memory.high", "204800"), 0, "memory.high = 50 pages");
	read_whole(c, "memory.high", buf, sizeof(buf));
	DEFER_STR(buf, "204800\n", "memory.high");
	memcg_drain();
	DEFER_TRUE(usage_pg(c) <= 50, "the write reclaimed down to high (%llu)", usage_pg(c));
	EXPECT_EVENTS(c, "memory.events", "the high write raises no event", 0, 0, 0, 0, 0, 0, 0);
	finish();
}

/* ================================================================== */
/* memory.high (§8.3 step 4, §8.4)                                     */

/*
 * Charging over high accumulates the charged batch in the task's pages
 * over high (no event yet); memcg_handle_over_high raises high, reclaims
 * (here the file pages suffice, so no delay) and clears the count.
 */
static void test_high_file(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p);
	struct memcg_task *t = mktask(1801, c, 0);
	uint64_t d;

	(void)state;
	memcg_set_current(t);
	DEFER_EQ(memcg_task_pages_over_high(t), 0, "nothing over high yet");
	need(MEMCG_PAGE_FILE, 0, 40);
	DEFER_EQ(memcg_task_pages_over_high(t), 0, "no high set yet");
	memcg_set_current(NULL);
	memcg_drain();
	set_bytes(c, "memory.high", 50);
	DEFER_EQ(stp(c, "file"), 40, "usage 40 < high 50: the write reclaims nothing");
	memcg_set_current(t);
	/* usage 40 after drain; the next charge takes a batch of 64: 104 > 50 */
	need(MEMCG_PAGE_FILE, 0, 20);
	DEFER_EQ(memcg_task_pages_over_high(t), 64, "the batch charged over high");
	EXPECT_EVENTS(c, "memory.events", "charging over high raises no event itself", 0, 0, 0, 0, 0, 0, 0);
	DEFER_TRUE(usage_pg(c) > 50, "usage over high after the charge");
	d = memcg_handle_over_high(t);
	DEFER_EQ(d, 0, "no delay: reclaim brought usage under high");
	DEFER_EQ(memcg_task_pages_over_high(t), 0, "pages over high handled");
	DEFER_TRUE(usage_pg(c) <= 50, "usage <= high after handling (%llu)", usage_pg(c));
	EXPECT_EVENTS(c, "memory.events", "one high event", 0, 1, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(c, "memory.events.local", "one high event", 0, 1, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events", "parent hierarchical", 0, 1, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events.local", "parent local", 0, 0, 0, 0, 0, 0, 0);
	DEFER_TRUE(notified(c, "memory.events") >= 1, "notified");
	DEFER_EQ(memcg_handle_over_high(t), 0, "nothing pending: no delay");
	EXPECT_EVENTS(c, "memory.events", "no event when nothing is pending", 0, 1, 0, 0, 0, 0, 0);
	finish();
}

/*
 * The penalty curve: c (high 100 pages, anon only so reclaim cannot help)
 * charged up to 'usage' pages one page at a time, with max 'maxp' (0: none).
 * Without max, page 65 charges a batch of 64 (usage 128 > 100): 64 pages
 * over high.  With max 120 the batch fails and pages are charged one by
 * one: pages 101.. are each 1 page over high.  The stock is drained before
 * the handling so that the usage is exact.
 */
static void high_case(unsigned long long maxp, unsigned long long usage, unsigned int pid)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask((pid_t)pid, c, 0);
	unsigned long long n_exp = maxp ? (usage > 100 ? usage - 100 : 0) : 64;
	unsigned long long n, rounds;
	uint64_t d, ov;
	char what[96];

	snprintf(what, sizeof(what), "high 100, max %llu, usage %llu", maxp, usage);
	set_bytes(c, "memory.high", 100);
	if (maxp)
		set_bytes(c, "memory.max", maxp);
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, (unsigned int)usage);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(usage_pg(c), usage, "%s: usage", what);
	n = memcg_task_pages_over_high(t);
	DEFER_EQ(n, n_exp, "%s: pages over high", what);
	EXPECT_EVENTS(c, "memory.events", what, 0, 0, 0, 0, 0, 0, 0);
	d = memcg_handle_over_high(t);
	ov = ref_overage(usage_pg(c), 100);
	check_delay(d, ov, n, what);
	/* 1 round, plus 16 retries without progress when the penalty is worth
	 * sleeping: one high event per round */
	rounds = ref_delay_jiffies(ov, n) > 10 ? 17 : 1;
	DEFER_EQ(ev(c, "high"), rounds, "%s: high events (reclaim rounds)", what);
	DEFER_EQ(ev(c, "max") + ev(c, "oom"), 0, "%s: high never OOMs", what);
	DEFER_EQ(memcg_task_owned_pages(t), usage, "%s: nothing killed", what);
	DEFER_EQ(memcg_task_pages_over_high(t), 0, "%s: handled", what);
	print_message("%s: %llu pages over high, delay %llu ns (kernel: %llu ms)\n", what, n,
		      (unsigned long long)d, (unsigned long long)ref_delay_jiffies(ov, n));
	finish();
	ntask = 0;
}

static void test_high_delay_curve(void **state)
{
	(void)state;
	/* docs/kernel-interface.md's table (high = 100M), at the same ratios */
	high_case(0, 101, 1811);	/* ~6 ms: <= 10 ms, no sleep */
	high_case(0, 105, 1812);	/* ~159 ms */
	high_case(0, 110, 1813);	/* ~639 ms */
	high_case(0, 118, 1814);	/* capped at 2 s */
	/* scaled by the task's own pages over high / 64 */
	high_case(120, 102, 1815);	/* 25 ms * 2/64: 0 */
	high_case(120, 105, 1816);	/* 159 ms * 5/64 = 12 ms */
	high_case(120, 110, 1817);	/* 639 ms * 10/64 = 99 ms */
	high_case(120, 118, 1818);	/* 2073 ms * 18/64 = 583 ms: capped after scaling */
}

/* The worst level decides; every over-high level counts high per round. */
static void test_high_ancestor(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p);
	struct memcg_task *t = mktask(1821, c, 0);
	unsigned long long k, n;
	uint64_t d, ovp, ovc, ov;

	(void)state;
	k = base_usage(p);
	set_bytes(p, "memory.high", k + 100);
	set_bytes(c, "memory.high", 106);
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, 110);
	memcg_set_current(NULL);
	memcg_drain();
	n = memcg_task_pages_over_high(t);
	DEFER_EQ(n, 64, "the batch at page 65 (c 128 > 106, p k+128 > k+100)");
	d = memcg_handle_over_high(t);
	ovp = ref_overage(usage_pg(p), k + 100);
	ovc = ref_overage(usage_pg(c), 106);
	ov = ovp > ovc ? ovp : ovc;
	DEFER_TRUE(ovp > ovc, "p is the worse level here");
	check_delay(d, ov, n, "two levels over high");
	EXPECT_EVENTS(c, "memory.events.local", "c over its own high", 0, 17, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events.local", "p over its own high", 0, 17, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(p, "memory.events", "p hierarchical", 0, 34, 0, 0, 0, 0, 0);
	finish();
}

/* memcg.high_throttle = false: no delay, the rest as usual. */
static void test_high_throttle_off(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1831, c, 0);

	(void)state;
	set_bytes(c, "memory.high", 100);
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, 118);
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(memcg_task_pages_over_high(t), 64, "pages over high");
	DEFER_EQ(memcg_handle_over_high(t), 0, "throttling off: no delay");
	DEFER_TRUE(ev(c, "high") >= 1, "the high event still counts");
	DEFER_EQ(memcg_task_pages_over_high(t), 0, "handled");
	finish();
}

/* ================================================================== */
/* memory.peak (§7.5)                                                  */

static unsigned long long peak_read(struct memcg_open *o)
{
	char buf[64];
	long n = memcg_file_read(o, buf, sizeof(buf));

	if (n <= 0) {
		print_error("read memory.peak = %ld\n", n);
		deferred_failures++;
		return ~0ull;
	}
	return strtoull(buf, NULL, 10);
}

static void test_peak_two_opens(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(1901, c, 0);
	struct memcg_open *o1, *o2, *o3;
	unsigned long long wm = 0, u, u1, u2, u3;

#define NOTE_USAGE() do { u = usage_pg(c) * PG; if (u > wm) wm = u; } while (0)
	(void)state;
	o1 = fopen_m(c, "memory.peak");
	o2 = fopen_m(c, "memory.peak");
	memcg_set_current(t);
	need(MEMCG_PAGE_FILE, 6, 1); NOTE_USAGE();
	need(MEMCG_PAGE_FILE, 5, 1); NOTE_USAGE();
	need(MEMCG_PAGE_FILE, 0, 4); NOTE_USAGE();
	DEFER_EQ(peak_read(o1), wm, "o1: the watermark");
	DEFER_EQ(peak_read(o2), wm, "o2: the watermark");

	/* usage down, o1 resets */
	pfree(&blks[0]);
	memcg_drain();
	u1 = usage_pg(c) * PG;
	DEFER_TRUE(u1 < wm, "usage below the watermark");
	DEFER_EQ(memcg_file_write(o1, "reset\n", 6, false), 0, "o1 writes");
	DEFER_EQ(peak_read(o1), u1, "o1 after its reset: the usage then");
	DEFER_EQ(peak_read(o2), wm, "o2 (never wrote): the global watermark");

	/* new charges: o1 follows the local watermark */
	need(MEMCG_PAGE_FILE, 3, 1); NOTE_USAGE();
	u2 = u;
	DEFER_EQ(peak_read(o1), u2 > u1 ? u2 : u1, "o1: peak since its reset");
	DEFER_EQ(peak_read(o2), wm, "o2: global watermark");

	/* o2 resets at u2; o1's value is raised to at least u2 */
	DEFER_EQ(memcg_file_write(o2, "x", 1, false), 0, "o2 writes");
	DEFER_EQ(peak_read(o2), u2, "o2 after its reset");
	pfree(&blks[nblk - 1]);
	memcg_drain();
	u3 = usage_pg(c) * PG;
	DEFER_TRUE(u3 < u2, "usage down again");
	DEFER_EQ(peak_read(o1), u2, "o1 keeps its peak");
	DEFER_EQ(peak_read(o2), u2, "o2 keeps its peak");

	/* o1 resets at u3: o2 keeps max(u2, u3) */
	DEFER_EQ(memcg_file_write(o1, "1", 1, false), 0, "o1 writes again");
	DEFER_EQ(peak_read(o1), u3, "o1 after the second reset");
	DEFER_EQ(peak_read(o2), u2, "o2 not lowered by o1's reset");

	o3 = fopen_m(c, "memory.peak");
	DEFER_EQ(peak_read(o3), wm, "a fresh open: the global watermark, never reset");
	memcg_file_release(o1);
	memcg_file_release(o2);
	memcg_file_release(o3);
	finish();
#undef NOTE_USAGE
}

/* ================================================================== */
/* memory.pressure (§3)                                                */

struct psi_line {
	unsigned int a10[2], a60[2], a300[2];
	unsigned long long total;
};

/* Parse "some ...\nfull ...\n" strictly (re-formatted, it must match). */
static bool psi_parse(const char *buf, struct psi_line *some, struct psi_line *full)
{
	char again[512];
	struct psi_line *l[2] = { some, full };
	int n;

	n = sscanf(buf, "some avg10=%u.%2u avg60=%u.%2u avg300=%u.%2u total=%llu\n"
		   "full avg10=%u.%2u avg60=%u.%2u avg300=%u.%2u total=%llu",
		   &some->a10[0], &some->a10[1], &some->a60[0], &some->a60[1],
		   &some->a300[0], &some->a300[1], &some->total,
		   &full->a10[0], &full->a10[1], &full->a60[0], &full->a60[1],
		   &full->a300[0], &full->a300[1], &full->total);
	if (n != 14)
		return false;
	size_t off = 0;
	for (unsigned int i = 0; i < 2; i++)
		off += (size_t)snprintf(again + off, sizeof(again) - off,
					"%s avg10=%u.%02u avg60=%u.%02u avg300=%u.%02u total=%llu\n",
					i ? "full" : "some", l[i]->a10[0], l[i]->a10[1],
					l[i]->a60[0], l[i]->a60[1], l[i]->a300[0], l[i]->a300[1],
					l[i]->total);
	return strcmp(again, buf) == 0;
}

static void psi_get(struct mem_cgroup *m, struct psi_line *some, struct psi_line *full,
		    const char *what)
{
	char buf[512], buf2[512];
	long n;
	int r;

	memset(some, 0, sizeof(*some));
	memset(full, 0, sizeof(*full));
	n = read_whole(m, "memory.pressure", buf, sizeof(buf));
	DEFER_TRUE(n > 0, "%s: read memory.pressure (%ld)", what, n);
	if (n <= 0)
		return;
	DEFER_TRUE(psi_parse(buf, some, full), "%s: memory.pressure format: \"%s\"", what, buf);
	r = memcg_pressure_format(m, buf2, sizeof(buf2));
	DEFER_TRUE(r > 0, "%s: memcg_pressure_format = %d", what, r);
	{
		struct psi_line s2, f2;

		DEFER_TRUE(r > 0 && psi_parse(buf2, &s2, &f2),
			   "%s: memcg_pressure_format format: \"%s\"", what, buf2);
	}
}

/* A stall of about ms; returns how long it really lasted, in ms. */
static uint64_t stall(struct memcg_task *t, unsigned int ms)
{
	double t0 = test_now_s();

	memcg_task_stall_begin(t);
	usleep(ms * 1000);
	memcg_task_stall_end(t);
	return (uint64_t)((test_now_s() - t0) * 1000.0);
}

static void test_psi_format_and_totals(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p);
	struct memcg_task *t = mktask(2001, c, 0);
	struct psi_line s0, f0, s1, f1, ps0, pf0, ps1, pf1, rs0, rf0, rs1, rf1;

	(void)state;
	psi_get(c, &s0, &f0, "fresh c");
	DEFER_EQ(s0.total, 0, "fresh: some total");
	DEFER_EQ(f0.total, 0, "fresh: full total");
	DEFER_TRUE(s0.a10[0] == 0 && s0.a10[1] == 0 && s0.a60[0] == 0 && s0.a300[0] == 0,
		   "fresh: averages 0.00");
	psi_get(p, &ps0, &pf0, "p before");
	psi_get(root_mem_cgroup(), &rs0, &rf0, "root before");

	memcg_task_active(t, true);
	stall(t, 20);
	memcg_task_active(t, false);

	psi_get(c, &s1, &f1, "c after a stall");
	DEFER_TRUE(s1.total > s0.total, "c some total grows (%llu -> %llu)", s0.total, s1.total);
	DEFER_TRUE(f1.total > f0.total, "c full total grows: the only active task stalled");
	DEFER_TRUE(f1.total <= s1.total, "full <= some");
	psi_get(p, &ps1, &pf1, "p after");
	DEFER_TRUE(ps1.total > ps0.total, "the parent's some total grows");
	psi_get(root_mem_cgroup(), &rs1, &rf1, "root after");
	DEFER_TRUE(rs1.total > rs0.total, "the root's some total grows");

	/* no stall: no growth */
	psi_get(c, &s0, &f0, "c again");
	usleep(5000);
	psi_get(c, &s1, &f1, "c without a stall");
	DEFER_EQ(s1.total, s0.total, "no stall, no growth");
	finish();
}

/* some: one task stalled; full: every active task stalled (per group). */
static void test_psi_some_full(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p), *d = mk(p);
	struct memcg_task *t1 = mktask(2011, c, 0), *t2 = mktask(2012, c, 0), *t3 = mktask(2013, d, 0);
	struct psi_line s0, f0, s1, f1, ps0, pf0, ps1, pf1;

	(void)state;
	memcg_task_active(t1, true);
	memcg_task_active(t2, true);
	psi_get(c, &s0, &f0, "before");
	stall(t1, 20);
	psi_get(c, &s1, &f1, "t1 stalled, t2 running");
	DEFER_TRUE(s1.total > s0.total, "some grows");
	DEFER_EQ(f1.total, f0.total, "full does not grow while t2 is active and not stalled");

	memcg_task_active(t2, false);
	memcg_task_active(t3, true);
	psi_get(c, &s0, &f0, "before 2");
	psi_get(p, &ps0, &pf0, "p before 2");
	stall(t1, 20);
	psi_get(c, &s1, &f1, "t1 stalled alone in c");
	psi_get(p, &ps1, &pf1, "p: t1 stalled, t3 (in d) running");
	DEFER_TRUE(s1.total > s0.total && f1.total > f0.total, "c: some and full grow");
	DEFER_TRUE(ps1.total > ps0.total, "p: some grows");
	DEFER_EQ(pf1.total, pf0.total, "p: full does not (t3 below p is active)");
	memcg_task_active(t1, false);
	memcg_task_active(t3, false);
	finish();
}

static void test_psi_trigger_parse(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	static const char *const bad[] = {
		"\n", "some", "some 100000", "bogus 100000 2000000", "avg10 1 2",
		"some 0 2000000", "some 3000000 2000000", "some 100000 0",
		"some 100000 20000000", "some abc 2000000",
		/* the kernel's vsscanf() %u: digits, no sign */
		"some +100000 2000000", "some 100000 +2000000", "some 1 -4294967295",
		"full -0 2000000",
	};
	struct memcg_open *o;

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = fopen_m(c, "memory.pressure");
		memcg_file_set_privileged(o, true);
		DEFER_EQ(memcg_file_write(o, bad[i], strlen(bad[i]), false), -EINVAL,
			 "trigger \"%s\"", bad[i]);
		memcg_file_release(o);
	}
	/* unprivileged: only multiples of 2 s; a zero-length write is no
	 * trigger (§1.2: the handler is not called) */
	o = fopen_m(c, "memory.pressure");
	DEFER_EQ(memcg_file_write(o, "", 0, false), 0, "zero-length write");
	DEFER_EQ(memcg_file_write(o, "some 100000 1000000", 19, false), -EINVAL,
		 "unprivileged 1 s window");
	DEFER_EQ(memcg_file_write(o, "some 100000 3000000", 19, false), -EINVAL,
		 "unprivileged 3 s window");
	DEFER_EQ(memcg_file_write(o, "some 100000 2000000", 19, false), 0, "unprivileged 2 s window");
	DEFER_EQ(memcg_file_write(o, "full 100000 4000000", 19, false), -EBUSY, "second trigger on the fd");
	memcg_file_release(o);
	o = fopen_m(c, "memory.pressure");
	DEFER_EQ(memcg_file_write(o, "some 1 1", 8, false), -EINVAL, "unprivileged 1 us window");
	memcg_file_release(o);

	/* privileged: any window from 1 us to 10 s (no 500 ms minimum since
	 * Linux 6.4), the threshold up to the window */
	static const char *const short_ok[] = {
		"some 1 1", "some 10000 100000", "full 50000 499999", "full 1 2", "some 10000000 10000000",
	};
	for (unsigned int i = 0; i < sizeof(short_ok) / sizeof(short_ok[0]); i++) {
		o = fopen_m(c, "memory.pressure");
		memcg_file_set_privileged(o, true);
		DEFER_EQ(memcg_file_write(o, short_ok[i], strlen(short_ok[i]), false), 0,
			 "privileged trigger \"%s\"", short_ok[i]);
		memcg_file_release(o);
	}
	o = fopen_m(c, "memory.pressure");
	memcg_file_set_privileged(o, true);
	DEFER_EQ(memcg_file_write(o, "some 2 1", 8, false), -EINVAL, "threshold > a 1 us window");
	memcg_file_release(o);
	o = fopen_m(c, "memory.pressure");
	memcg_file_set_privileged(o, true);
	DEFER_EQ(memcg_file_write(o, "some 1 10000001", 15, false), -EINVAL, "window > 10 s");
	memcg_file_release(o);

	o = fopen_m(c, "memory.pressure");
	memcg_file_set_privileged(o, true);
	DEFER_EQ(memcg_file_write(o, "some 100000 1000000\n", 20, false), 0, "privileged 1 s window");
	DEFER_EQ(memcg_file_write(o, "some 100000 1000000", 19, false), -EBUSY, "second trigger");
	memcg_file_release(o);

	o = fopen_m(c, "memory.pressure");
	DEFER_EQ(memcg_file_write(o, "full 2000000 2000000", 20, false), 0, "threshold == window");
	DEFER_TRUE(!memcg_file_poll(o), "no event without a stall");
	/* a drained node destroys the trigger; the fd may arm another */
	DEFER_TRUE(memcg_file_drop_trigger(o), "the trigger dropped");
	DEFER_TRUE(!memcg_file_drop_trigger(o), "nothing left to drop");
	DEFER_TRUE(!memcg_file_poll(o), "no trigger, no event");
	DEFER_EQ(memcg_file_write(o, "some 100000 2000000", 19, false), 0,
		 "a new trigger after the drop");
	memcg_file_release(o);
	finish();
}

static bool poll_wait(struct memcg_open *o, unsigned int ms)
{
	for (unsigned int i = 0; i <= ms / 10; i++) {
		if (memcg_file_poll(o))
			return true;
		usleep(10000);
	}
	return false;
}

static void test_psi_trigger_fires(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p), *d = mk(p);
	struct memcg_task *t = mktask(2021, c, 0);
	struct memcg_open *o, *op, *od;
	uint64_t slept;

	(void)state;
	o = fopen_m(c, "memory.pressure");
	memcg_file_set_privileged(o, true);
	DEFER_EQ(memcg_file_write(o, "some 100000 1000000", 19, false), 0, "arm c");
	op = fopen_m(p, "memory.pressure");
	memcg_file_set_privileged(op, true);
	DEFER_EQ(memcg_file_write(op, "some 100000 1000000", 19, false), 0, "arm p");
	od = fopen_m(d, "memory.pressure");
	memcg_file_set_privileged(od, true);
	DEFER_EQ(memcg_file_write(od, "some 100000 1000000", 19, false), 0, "arm d");
	DEFER_TRUE(!memcg_file_poll(o), "nothing yet");

	/*
	 * Under the threshold: nothing.  A loaded machine can stretch the
	 * 20 ms sleep past the threshold, and then the trigger rightly fires:
	 * the check holds only for a stall that stayed under it, and a
	 * window is let pass before the next one (a trigger fires once a
	 * window).
	 */
	memcg_task_active(t, true);
	slept = stall(t, 20);
	usleep(50000);
	if (slept < 90) {
		DEFER_TRUE(!memcg_file_poll(o), "20 ms of stall < 100 ms threshold");
	} else {
		print_message("the 20 ms stall lasted %llu ms: its check skipped\n",
			      (unsigned long long)slept);
		(void)memcg_file_poll(o);
		(void)memcg_file_poll(op);
		usleep(1100000);
	}

	stall(t, 150);
	memcg_task_active(t, false);
	DEFER_TRUE(poll_wait(o, 2000), "the trigger fires after 150 ms of stall in 1 s");
	DEFER_TRUE(!memcg_file_poll(o), "once");
	DEFER_TRUE(poll_wait(op, 2000), "the parent's trigger fires too");
	DEFER_TRUE(!memcg_file_poll(od), "the sibling's does not");
	memcg_file_release(o);
	memcg_file_release(op);
	memcg_file_release(od);
	finish();
}

/*
 * Windows under 500 ms work as the others: a 100 ms window fires on a
 * 30 ms stall past its 10 ms threshold, once in its window, and again on a
 * stall after the window (not 500 ms) passed; a 1 us window fires on any
 * stall.
 */
static void test_psi_trigger_short_window(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(2025, c, 0);
	struct memcg_open *o = fopen_m(c, "memory.pressure"), *o1 = fopen_m(c, "memory.pressure");
	double t0;

	(void)state;
	memcg_file_set_privileged(o, true);
	memcg_file_set_privileged(o1, true);
	DEFER_EQ(memcg_file_write(o, "some 10000 100000", 17, false), 0, "arm a 100 ms window");
	DEFER_EQ(memcg_file_write(o1, "full 1 1", 8, false), 0, "arm a 1 us window");
	memcg_task_active(t, true);
	t0 = test_now_s();
	stall(t, 30);
	DEFER_TRUE(memcg_file_poll(o), "100 ms window: fires on a 30 ms stall");
	DEFER_TRUE(memcg_file_poll(o1), "1 us window: fires too");
	/* another stall inside the same 100 ms: no second event (a loaded
	 * machine may have let the window pass: then the check is skipped) */
	stall(t, 15);
	if (test_now_s() - t0 < 0.095)
		DEFER_TRUE(!memcg_file_poll(o), "once per 100 ms window");
	else
		(void)memcg_file_poll(o);
	usleep(120000);
	stall(t, 30);
	DEFER_TRUE(memcg_file_poll(o), "again after the 100 ms window passed");
	DEFER_TRUE(memcg_file_poll(o1), "the 1 us window again");
	memcg_task_active(t, false);
	memcg_file_release(o);
	memcg_file_release(o1);
	finish();
}

/*
 * A trigger fires while a long stall goes on, once its threshold is
 * crossed (the polling thread, the kernel's psimon), not only when the stall
 * ends: 50 ms of a 1 s window within a stall of up to 1.5 s.
 */
static void test_psi_trigger_during_stall(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(2026, c, 0);
	struct memcg_open *o = fopen_m(c, "memory.pressure");
	bool fired = false;
	double t0;

	(void)state;
	memcg_file_set_privileged(o, true);
	DEFER_EQ(memcg_file_write(o, "some 50000 1000000", 18, false), 0, "arm 50 ms of 1 s");
	memcg_task_active(t, true);
	memcg_task_stall_begin(t);
	t0 = test_now_s();
	while (!fired && test_now_s() - t0 < 1.5) {
		usleep(2000);
		fired = memcg_file_poll(o);
	}
	DEFER_TRUE(fired, "fired while the stall went on (%.3f s into it)", test_now_s() - t0);
	DEFER_TRUE(!fired || test_now_s() - t0 >= 0.05, "... not before its 50 ms");
	memcg_task_stall_end(t);
	memcg_task_active(t, false);
	memcg_file_release(o);
	finish();
}

/* The throttle delay, bracketed by stall_begin/end as fs/ does, is stall
 * time. */
static void test_psi_throttle_stall(void **state)
{
	struct mem_cgroup *c = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(2031, c, 0);
	struct psi_line s0, f0, s1, f1;
	uint64_t d;

	(void)state;
	set_bytes(c, "memory.high", 100);
	memcg_set_current(t);
	need(MEMCG_PAGE_ANON, 0, 110);
	memcg_set_current(NULL);
	memcg_drain();
	psi_get(c, &s0, &f0, "before");
	memcg_task_active(t, true);
	d = memcg_handle_over_high(t);
	DEFER_TRUE(d > 0, "a delay to apply");
	memcg_task_stall_begin(t);
	usleep((useconds_t)((d > 30 * NSEC_PER_MSEC ? 30 * NSEC_PER_MSEC : d) / 1000));
	memcg_task_stall_end(t);
	memcg_task_active(t, false);
	psi_get(c, &s1, &f1, "after the throttle");
	DEFER_TRUE(s1.total > s0.total, "some total grows with throttling");
	DEFER_TRUE(f1.total > f0.total, "full total grows (the only active task)");
	finish();
}

/* ================================================================== */
/* Concurrent chargers: max is never exceeded                          */

#define CC_THREADS	4
#define CC_ROUNDS	60
#define CC_OPS		150
#define CC_LIVE		160

struct cc_item {
	void *obj;		/* kmalloc'ed, or */
	struct page *pg;	/* pages */
};

struct cc_thread {
	pthread_t th;
	unsigned int idx;
	struct memcg_task *task;
	struct rng rng;
	struct cc_item live[CC_LIVE];
	unsigned int nlive;
	unsigned long ok, failed;
};

static pthread_barrier_t cc_barrier;
static struct mem_cgroup *cc_p, *cc_a, *cc_b;
static unsigned long long cc_max_p, cc_max_a;
static atomic_ulong cc_violations;

static void cc_free_one(struct cc_thread *ct, unsigned int i)
{
	struct cc_item *it = &ct->live[i];

	if (it->obj)
		kfree(it->obj);
	else
		memcg_free_pages(it->pg, memcg_page_id(it->pg));
	ct->live[i] = ct->live[--ct->nlive];
}

static void *cc_main(void *arg)
{
	static const enum memcg_page_type types[] = {
		MEMCG_PAGE_SHMEM, MEMCG_PAGE_SOCK, MEMCG_PAGE_VMALLOC, MEMCG_PAGE_PERCPU,
	};
	static const size_t sizes[] = { 64, 512, 1024, 2312, 4096, 8192, 12288, 16384 };
	struct cc_thread *ct = arg;

	alloc_pin_cpu((int)ct->idx);
	memcg_set_current(ct->task);
	for (unsigned int round = 0; round < CC_ROUNDS; round++) {
		for (unsigned int op = 0; op < CC_OPS; op++) {
			bool alloc = ct->nlive == 0 ||
				     (ct->nlive < CC_LIVE && rnd_below(&ct->rng, 100) < 65);

			if (!alloc) {
				cc_free_one(ct, rnd_below(&ct->rng, ct->nlive));
				continue;
			}
			gfp_t gfp = GFP_KERNEL | (rnd_below(&ct->rng, 2) ? __GFP_NORETRY : 0);
			struct cc_item it = { 0 };

			if (rnd_below(&ct->rng, 2)) {
				it.obj = kmalloc(sizes[rnd_below(&ct->rng, 8)], gfp | __GFP_ACCOUNT);
			} else {
				int err = 0;

				it.pg = memcg_alloc_pages(types[rnd_below(&ct->rng, 4)], gfp,
							  rnd_below(&ct->rng, 4), &err);
			}
			if (it.obj || it.pg) {
				ct->live[ct->nlive++] = it;
				ct->ok++;
			} else {
				ct->failed++;
			}
		}
		/* quiescent point: nobody charges while thread 0 checks */
		pthread_barrier_wait(&cc_barrier);
		if (ct->idx == 0) {
			char msg[512] = "";

			if (mem_cgroup_usage_pages(cc_a) > cc_max_a ||
			    mem_cgroup_usage_pages(cc_p) > cc_max_p) {
				print_error("round %u: usage a %lu (max %llu), p %lu (max %llu)\n", round,
					    mem_cgroup_usage_pages(cc_a), cc_max_a,
					    mem_cgroup_usage_pages(cc_p), cc_max_p);
				atomic_fetch_add(&cc_violations, 1);
			}
			if (round % 10 == 0 && memcg_check(msg, sizeof(msg))) {
				print_error("round %u: memcg_check: %s\n", round, msg);
				atomic_fetch_add(&cc_violations, 1);
			}
		}
		pthread_barrier_wait(&cc_barrier);
	}
	while (ct->nlive)
		cc_free_one(ct, ct->nlive - 1);
	memcg_set_current(NULL);
	return NULL;
}

static void test_concurrent_max(void **state)
{
	static struct cc_thread ct[CC_THREADS];
	uint64_t seed = test_seed(0x11e4a7u);
	unsigned long long k, fa = 0, fb = 0;

	(void)state;
	print_message("seed %#llx (MEMCG_TEST_SEED)\n", (unsigned long long)seed);
	cc_p = mk(root_mem_cgroup());
	cc_a = mk(cc_p);
	cc_b = mk(cc_p);
	k = base_usage(cc_p);
	cc_max_a = 200;
	cc_max_p = k + 500;
	set_bytes(cc_a, "memory.max", cc_max_a);
	set_bytes(cc_p, "memory.max", cc_max_p);
	atomic_store(&cc_violations, 0);
	pthread_barrier_init(&cc_barrier, NULL, CC_THREADS);
	for (unsigned int i = 0; i < CC_THREADS; i++) {
		memset(&ct[i], 0, sizeof(ct[i]));
		ct[i].idx = i;
		/* two tasks in the limited a, two in its unlimited sibling b;
		 * -1000 everywhere: this test is about the limit, not OOM */
		ct[i].task = mktask(2101 + (pid_t)i, i < 2 ? cc_a : cc_b, -1000);
		rng_seed(&ct[i].rng, seed + i);
	}
	for (unsigned int i = 0; i < CC_THREADS; i++)
		pthread_create(&ct[i].th, NULL, cc_main, &ct[i]);
	for (unsigned int i = 0; i < CC_THREADS; i++)
		pthread_join(ct[i].th, NULL);
	pthread_barrier_destroy(&cc_barrier);
	alloc_pin_cpu(0);
	for (unsigned int i = 0; i < CC_THREADS; i++) {
		print_message("thread %u: %lu charges, %lu failed\n", i, ct[i].ok, ct[i].failed);
		if (i < 2)
			fa += ct[i].failed;
		else
			fb += ct[i].failed;
	}
	DEFER_EQ(atomic_load(&cc_violations), 0, "usage above max at a quiescent point");
	DEFER_TRUE(fa > 0, "the limit of a was reached");
	DEFER_TRUE(fb > 0, "the limit of p was reached by b's tasks");
	DEFER_TRUE(evl(cc_a, "max") > 0, "a's max events");
	DEFER_TRUE(evl(cc_p, "max") > 0, "p's max events (b's charges)");
	DEFER_EQ(ev(cc_p, "max"), evl(cc_p, "max") + ev(cc_a, "max") + ev(cc_b, "max"),
		 "p's hierarchical max = own + children's");
	DEFER_EQ(nkilled, 0, "no kill (-1000 tasks)");
	memcg_drain();
	DEFER_TRUE(usage_pg(cc_a) <= cc_max_a, "a after drain");
	DEFER_TRUE(usage_pg(cc_p) <= cc_max_p, "p after drain");
	DEFER_EQ(usage_pg(cc_a), 0, "a empty after every free");
	DEFER_EQ(usage_pg(cc_b), 0, "b empty after every free");
	DEFER_EQ(usage_pg(cc_p), k, "p back to its base");
	finish();
}

/* ================================================================== */
/* Global OOM (docs/design.md "Global OOM")                                    */

/*
 * A 16 MiB machine: c owns the most anon, a some, f has file pages; b then
 * allocates until the arena is full.  Reclaim runs over the whole tree
 * first (f's file pages go), then the OOM killer from the root takes c.
 * oom_kill counts on c; no memcg counts oom (no memcg limit was hit).
 */
static void test_global_oom(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct mem_cgroup *c = mk(root_mem_cgroup()), *f = mk(root_mem_cgroup());
	struct memcg_task *ta = mktask(2201, a, 0), *tb = mktask(2202, b, 0);
	struct memcg_task *tc = mktask(2203, c, 0), *tf = mktask(2204, f, 0);
	unsigned int i, nb = 0;
	struct page *pg;
	int err = 0;

	(void)state;
	killed_probe_memcg = f;
	memcg_set_current(tc); need(MEMCG_PAGE_ANON, 0, 2000);
	memcg_set_current(ta); need(MEMCG_PAGE_ANON, 0, 600);
	memcg_set_current(tf); need(MEMCG_PAGE_FILE, 0, 300);
	memcg_set_current(tb);
	for (i = 0; i < 6000 && nkilled == 0; i++) {
		pg = palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err);
		if (!pg)
			break;
		nb++;
	}
	print_message("b allocated %u pages before the kill\n", nb);
	DEFER_TRUE(pg != NULL, "b's allocations succeed (err %d)", err);
	DEFER_EQ(nkilled, 1, "one OOM kill");
	DEFER_TRUE(was_killed(2203), "the victim is c's task (most owned pages)");
	DEFER_EQ(killed_probe_file, 0, "f's file pages were reclaimed before the kill");
	DEFER_TRUE(memcg_task_oom_killed(tc), "c's task flagged");
	DEFER_EQ(memcg_task_owned_pages(tc), 0, "its pages freed");
	DEFER_EQ(memcg_task_owned_pages(ta), 600, "a intact");
	DEFER_TRUE(!memcg_task_oom_killed(tb), "b not killed");
	/* b can go on allocating */
	for (i = 0; i < 100; i++)
		if (!palloc(MEMCG_PAGE_ANON, GFP_KERNEL, 0, &err))
			break;
	DEFER_EQ(i, 100, "b allocates after the kill");
	memcg_set_current(NULL);
	memcg_drain();
	DEFER_EQ(usage_pg(c), 0, "c uncharged");
	EXPECT_EVENTS(c, "memory.events", "victim memcg", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(c, "memory.events.local", "victim memcg", 0, 0, 0, 0, 1, 0, 0);
	EXPECT_EVENTS(a, "memory.events", "a", 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(b, "memory.events", "b", 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EVENTS(f, "memory.events", "f", 0, 0, 0, 0, 0, 0, 0);
	expect_memcg_check("after the global OOM");
	{
		char msg[512] = "";

		DEFER_EQ(alloc_check(msg, sizeof(msg)), 0, "alloc_check after the global OOM: %s", msg);
	}
	finish();
}

/* ================================================================== */

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_events_max_oom_exact),
		T(test_max_reclaims_file),
		T(test_oom_kill_events),
		T(test_oom_badness),
		T(test_oom_at_least_one),
		T(test_oom_group),
		T(test_oom_group_domain),
		T(test_oom_group_above_domain),
		T(test_exit_uncharges_owned),
		T(test_reclaim_order),
		T(test_memory_reclaim_writes),
		T(test_memory_reclaim_signal),
		T(test_nofail_kills_each_once),
		T(test_high_penalty_boundary),
		T(test_stock_serves_a_batch),
		T(test_mark_page_accessed),
		T(test_reclaim_lru_order),
		T(test_protection_min),
		T(test_protection_min_nested),
		T(test_protection_min_proportional),
		T(test_protection_low),
		T(test_lower_max_reclaims),
		T(test_lower_max_ooms),
		T(test_lower_max_nonblock),
		T(test_lower_high_reclaims),
		T(test_high_file),
		T(test_high_delay_curve),
		T(test_high_ancestor),
		TNT(test_high_throttle_off),
		T(test_peak_two_opens),
		T(test_psi_format_and_totals),
		T(test_psi_some_full),
		T(test_psi_trigger_parse),
		T(test_psi_trigger_fires),
		T(test_psi_trigger_short_window),
		T(test_psi_trigger_during_stall),
		T(test_psi_throttle_stall),
		T(test_concurrent_max),
		T16(test_global_oom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
