/* SPDX-License-Identifier: MIT */
/*
 * stock.c - charging: try_charge_memcg, the per-CPU memcg_stock (pages of
 * several memcgs) and obj_stock (bytes of one objcg, with the slab
 * statistics accounted in the same section: seed 002), alloc's hooks.
 *
 * The obj_stock's byte count and its two slab statistic buffers sit next
 * to each other so that one 8-byte store commits a charge and its
 * statistic: on rseq threads the consume and refill fast paths are
 * restartable sequences (no atomic instruction), like alloc's freelists;
 * everything else takes the slot's lock (alloc_cpu_lock), as the kernel's
 * local_trylock, and goes direct when the lock is busy.
 *
 * Build-time ablations (meson -Dobj_stock=separate, -Dobjcg_lookup=memcg):
 * MEMCG_OBJ_STOCK_SEPARATE charges and then accounts in a second section,
 * as before "memcg: combine slab obj stock charging and accounting";
 * MEMCG_OBJ_STOCK_KERNEL_LIMIT gives bytes back above one page, as the
 * kernel does, where the default keeps up to two pages so that an object
 * of about a page (2312- and 4096-byte kmallocs are 4104 bytes charged)
 * does not charge and uncharge a page at every alloc/free pair.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

struct memcg_stock_pcp {
	_Atomic uint32_t lock;
	uint8_t nr_pages[NR_MEMCG_STOCK];
	struct mem_cgroup *cached[NR_MEMCG_STOCK];
} __attribute__((aligned(64)));

/* Offsets known to the sequences below: lock 0, objcg 8, recl 16, bytes 20, unrecl 24, nid 28. */
struct obj_stock_pcp {
	_Atomic uint32_t lock;
	uint32_t pad;
	struct obj_cgroup *cached_objcg;
	int32_t nr_slab_reclaimable_b;
	uint32_t nr_bytes;
	int32_t nr_slab_unreclaimable_b;
	int32_t cached_nid;
} __attribute__((aligned(64)));

_Static_assert(__builtin_offsetof(struct obj_stock_pcp, cached_objcg) == 8, "rseq layout");
_Static_assert(__builtin_offsetof(struct obj_stock_pcp, nr_slab_reclaimable_b) == 16, "rseq layout");
_Static_assert(__builtin_offsetof(struct obj_stock_pcp, nr_bytes) == 20, "rseq layout");
_Static_assert(__builtin_offsetof(struct obj_stock_pcp, nr_slab_unreclaimable_b) == 24, "rseq layout");
_Static_assert(__builtin_offsetof(struct obj_stock_pcp, cached_nid) == 28, "rseq layout");

static unsigned int page_size, page_shift;	/* alloc's, read on the fast paths */
static struct memcg_stock_pcp *memcg_stock;
static struct obj_stock_pcp *obj_stock;
static unsigned int nr_cpus;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

/* The bound the sequences check; the fast paths read it from memory. */
static struct {
	uint32_t limit;		/* most bytes a stock keeps */
} bounds;

#ifdef MEMCG_OBJ_STOCK_KERNEL_LIMIT
#define STOCK_KEEP_PAGES	1
#else
#define STOCK_KEEP_PAGES	2
#endif

int memcg_stocks_init(void)
{
	nr_cpus = alloc_nr_cpus();
	page_size = alloc_page_size();
	page_shift = alloc_page_shift();
	memcg_stock = aligned_alloc(64, sizeof(*memcg_stock) * nr_cpus);
	obj_stock = aligned_alloc(64, sizeof(*obj_stock) * nr_cpus);
	if (!memcg_stock || !obj_stock) {
		free(memcg_stock);
		free(obj_stock);
		return -ENOMEM;
	}
	memset(memcg_stock, 0, sizeof(*memcg_stock) * nr_cpus);
	memset(obj_stock, 0, sizeof(*obj_stock) * nr_cpus);
	/* the buffered slab deltas are flushed by every read: their sections
	 * bound them only against overflow */
	bounds.limit = STOCK_KEEP_PAGES * page_size;
	return 0;
}

void memcg_stocks_exit(void)
{
	free(memcg_stock);
	free(obj_stock);
	memcg_stock = NULL;
	obj_stock = NULL;
}

/* ---- memcg_stock: whole pages ---- */
/* Every page counter charge and uncharge of a memcg goes through these two. */
static void memcg_counter_charged(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	atomic_fetch_add_explicit(&memcg->local_charge, nr_pages, memory_order_relaxed);
}

static void memcg_counter_uncharge(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	page_counter_uncharge(&memcg->memory, nr_pages);
	atomic_fetch_sub_explicit(&memcg->local_charge, nr_pages, memory_order_relaxed);
}

static void drain_stock(struct memcg_stock_pcp *st, int i)
{
	struct mem_cgroup *old = st->cached[i];

	if (!old)
		return;
	if (st->nr_pages[i])
		memcg_counter_uncharge(old, st->nr_pages[i]);
	/* memcg_stock_pages() reads them without the lock */
	WRITE_ONCE(st->nr_pages[i], 0);
	WRITE_ONCE(st->cached[i], NULL);
	css_put(old);
}

static bool consume_stock(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	unsigned int cpu = alloc_slot_cpu();
	struct memcg_stock_pcp *st = &memcg_stock[cpu];
	bool ret = false;

	if (nr_pages > memcg_cfg.charge_batch || !alloc_cpu_trylock(&st->lock, cpu))
		return false;
	for (int i = 0; i < NR_MEMCG_STOCK; i++) {
		if (st->cached[i] == memcg && st->nr_pages[i] >= nr_pages) {
			WRITE_ONCE(st->nr_pages[i], (uint8_t)(st->nr_pages[i] - nr_pages));
			ret = true;
			break;
		}
	}
	alloc_cpu_unlock(&st->lock);
	return ret;
}

static void refill_stock(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	unsigned int cpu = alloc_slot_cpu();
	struct memcg_stock_pcp *st = &memcg_stock[cpu];
	int i, empty = -1;

	if (nr_pages > memcg_cfg.charge_batch || !alloc_cpu_trylock(&st->lock, cpu)) {
		memcg_counter_uncharge(memcg, nr_pages);
		return;
	}
	for (i = 0; i < NR_MEMCG_STOCK; i++) {
		if (st->cached[i] == memcg) {
			WRITE_ONCE(st->nr_pages[i], (uint8_t)(st->nr_pages[i] + nr_pages));
			if (st->nr_pages[i] > memcg_cfg.charge_batch)
				drain_stock(st, i);
			goto out;
		}
		if (!st->cached[i] && empty < 0)
			empty = i;
	}
	if (empty < 0) {
		empty = (int)((unsigned int)rand() % NR_MEMCG_STOCK);
		drain_stock(st, empty);
	}
	css_get(memcg);
	WRITE_ONCE(st->cached[empty], memcg);
	WRITE_ONCE(st->nr_pages[empty], (uint8_t)nr_pages);
out:
	alloc_cpu_unlock(&st->lock);
}

unsigned long memcg_stock_pages(const struct mem_cgroup *memcg)
{
	unsigned long n = 0;

	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
		for (int i = 0; i < NR_MEMCG_STOCK; i++)
			if (READ_ONCE(memcg_stock[cpu].cached[i]) == memcg)
				n += READ_ONCE(memcg_stock[cpu].nr_pages[i]);
	return n;
}

static unsigned int get_order_pages(unsigned int nr_pages)
{
	unsigned int order = 0;

	while ((1u << order) < nr_pages)
		order++;
	return order;
}

/*
 * try_charge_memcg - the kernel's: the stock, a batch, the exact amount;
 * at the limit: the max event, reclaim, one drain of the stocks, retries
 * (MAX_RECLAIM_RETRIES, a small charge retries while reclaim makes
 * progress), then the OOM killer (order <= 3), then -ENOMEM, or a forced
 * charge for __GFP_NOFAIL/__GFP_HIGH.  __GFP_NORETRY gives up after one
 * reclaim pass, a non-blocking gfp before reclaiming.  On success, a memcg
 * over memory.high leaves the charging task pages to pay back.
 */
int try_charge_memcg(struct mem_cgroup *memcg, gfp_t gfp, unsigned int nr_pages)
{
	unsigned int batch = nr_pages > memcg_cfg.charge_batch ? nr_pages : memcg_cfg.charge_batch;
	int nr_retries = MAX_RECLAIM_RETRIES;
	bool drained = false, raised_max_event = false, passed_oom = false;
	struct page_counter *fail;
	struct mem_cgroup *over;
	unsigned long nr_reclaimed;
	uint64_t round = 0;
	struct memcg_task *t = current_task;

	if (mem_cgroup_is_root_fast(memcg))
		return 0;
	if (t)
		WRITE_ONCE(t->charge_seq, memcg_now_ns());	/* the OOM killer reads it */
retry:
	if (consume_stock(memcg, nr_pages))
		return 0;
	/* fault injection: the counter refuses, and nothing else happens */
	if (!(gfp & (__GFP_NOFAIL | __GFP_HIGH)) && unlikely(fault_should_fail(FAULT_CHARGE)))
		return -ENOMEM;
	if (page_counter_try_charge(&memcg->memory, batch, &fail))
		goto done;
	if (batch > nr_pages) {
		batch = nr_pages;
		goto retry;
	}
	over = (struct mem_cgroup *)((char *)fail - __builtin_offsetof(struct mem_cgroup, memory));
	/* an OOM victim's requests are answered at once */
	if (t && READ_ONCE(t->oom_killed) && passed_oom)
		goto nomem;
	if (!(gfp & __GFP_DIRECT_RECLAIM))
		goto nomem;
	if (!raised_max_event) {
		memcg_memory_event(over, MEMCG_MAX);
		raised_max_event = true;
	}
	{
		uint64_t start = memcg_now_ns();

		psi_memstall_enter(memcg);
		nr_reclaimed = try_to_free_mem_cgroup_pages(over, nr_pages, gfp, false);
		psi_memstall_leave(memcg, start);
	}
	if (mem_cgroup_margin(over) >= nr_pages)
		goto retry;
	if (!drained) {
		drain_all_stock(over);
		drained = true;
		goto retry;
	}
	if (gfp & __GFP_NORETRY)
		goto nomem;
	if (nr_reclaimed && nr_pages <= (1u << PAGE_ALLOC_COSTLY_ORDER))
		goto retry;
	if (nr_retries--)
		goto retry;
	if (gfp & __GFP_RETRY_MAYFAIL)
		goto nomem;
	if (!round)
		round = memcg_oom_new_round();
	if (mem_cgroup_oom(over, gfp, get_order_pages(nr_pages), round)) {
		passed_oom = true;
		nr_retries = MAX_RECLAIM_RETRIES;
		/*
		 * The victim's kernel pages went back through the per-CPU
		 * stocks: return them, as the kernel's OOM reaper returns a
		 * victim's memory, so that the retry sees the room.
		 */
		drain_all_stock(over);
		goto retry;
	}
nomem:
	if (!(gfp & (__GFP_NOFAIL | __GFP_HIGH)))
		return -ENOMEM;
	if (!raised_max_event)
		memcg_memory_event(over, MEMCG_MAX);
	page_counter_charge(&memcg->memory, nr_pages);
	memcg_counter_charged(memcg, nr_pages);
	return 0;
done:
	memcg_counter_charged(memcg, batch);
	if (batch > nr_pages)
		refill_stock(memcg, batch - nr_pages);
	memcg_charge_over_high(memcg, batch, gfp);
	return 0;
}

/* uncharge_folio(): a freed page goes straight to the page counter. */
void memcg_uncharge_direct(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	if (!mem_cgroup_is_root_fast(memcg))
		memcg_counter_uncharge(memcg, nr_pages);
}

void memcg_uncharge(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	if (!mem_cgroup_is_root_fast(memcg))
		refill_stock(memcg, nr_pages);
}

static struct mem_cgroup *get_mem_cgroup_from_objcg(struct obj_cgroup *objcg)
{
	struct mem_cgroup *memcg;

	/* retry until the reference holds: the objcg may be reparented meanwhile */
	rcu_read_lock();
	do {
		memcg = obj_cgroup_memcg(objcg);
	} while (!css_tryget(memcg));
	rcu_read_unlock();
	return memcg;
}

int obj_cgroup_charge_pages(struct obj_cgroup *objcg, gfp_t gfp, unsigned int nr_pages)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_objcg(objcg);
	int ret = try_charge_memcg(memcg, gfp, nr_pages);

	if (!ret) {
		mod_memcg_state(memcg, 0, MI_KMEM, (long)nr_pages);
		obj_cgroup_get_many(objcg, nr_pages);
	}
	css_put(memcg);
	return ret;
}

void obj_cgroup_uncharge_pages(struct obj_cgroup *objcg, unsigned int nr_pages)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_objcg(objcg);

	mod_memcg_state(memcg, 0, MI_KMEM, -(long)nr_pages);
	memcg_uncharge(memcg, nr_pages);
	css_put(memcg);
	obj_cgroup_put_many(objcg, nr_pages);
}

/* ---- obj_stock: bytes ---- */
static void flush_stock_stats(struct obj_stock_pcp *st)
{
	struct mem_cgroup *memcg;

	if (!st->cached_objcg || (!st->nr_slab_reclaimable_b && !st->nr_slab_unreclaimable_b))
		return;
	/* the kernel's mod_objcg_mlstate(): a reparenting may drop the memcg read */
	rcu_read_lock();
	memcg = obj_cgroup_memcg(st->cached_objcg);
	if (st->nr_slab_reclaimable_b)
		mod_memcg_state(memcg, st->cached_nid, MI_SLAB_RECLAIMABLE_B,
				st->nr_slab_reclaimable_b);
	if (st->nr_slab_unreclaimable_b)
		mod_memcg_state(memcg, st->cached_nid, MI_SLAB_UNRECLAIMABLE_B,
				st->nr_slab_unreclaimable_b);
	rcu_read_unlock();
	WRITE_ONCE(st->nr_slab_reclaimable_b, 0);	/* memcg_flush_stock_stats peeks */
	WRITE_ONCE(st->nr_slab_unreclaimable_b, 0);
}

/* drain_obj_stock (locked): whole pages uncharged, the rest to the objcg. */
static void drain_obj_stock(struct obj_stock_pcp *st)
{
	struct obj_cgroup *old = st->cached_objcg;
	unsigned int nr_pages, rem;

	if (!old)
		return;
	nr_pages = st->nr_bytes >> page_shift;
	rem = st->nr_bytes & (page_size - 1);
	flush_stock_stats(st);
	st->nr_bytes = 0;
	st->cached_objcg = NULL;
	if (nr_pages)
		obj_cgroup_uncharge_pages(old, nr_pages);
	if (rem)
		atomic_fetch_add(&old->nr_charged_bytes, (long)rem);
	obj_cgroup_put(old);
}

static void mod_objcg_state_direct(struct obj_cgroup *objcg, int nid, bool reclaimable, int nr)
{
	rcu_read_lock();
	mod_memcg_state(obj_cgroup_memcg(objcg), nid,
			reclaimable ? MI_SLAB_RECLAIMABLE_B : MI_SLAB_UNRECLAIMABLE_B, nr);
	rcu_read_unlock();
}

/* __account_obj_stock (locked): a slab statistic, buffered per node. */
static void __account_obj_stock(struct obj_stock_pcp *st, int nr, int nid, bool reclaimable)
{
	int32_t *buf;

	if (st->cached_nid != nid) {
		flush_stock_stats(st);
		st->cached_nid = nid;
	}
	buf = reclaimable ? &st->nr_slab_reclaimable_b : &st->nr_slab_unreclaimable_b;
	if (!*buf) {
		WRITE_ONCE(*buf, nr);
		return;
	}
	WRITE_ONCE(*buf, *buf + nr);
	if (*buf > (int32_t)page_size || *buf < -(int32_t)page_size) {
		mod_objcg_state_direct(st->cached_objcg, nid, reclaimable, *buf);
		WRITE_ONCE(*buf, 0);
	}
}


#if defined(__x86_64__)
_Static_assert(sizeof(struct obj_stock_pcp) == 64, "rseq layout: obj_stock[cpu] is cpu << 6");

/*
 * One section on this CPU's obj_stock, if it holds objcg's bytes on node
 * nid and its lock is free: the byte count by BYTES (%%edx, which bails out
 * to 'slow' when out of range), the statistic at STAT by STAT_OP ds
 * (%%r11d, 'slow' on overflow), both committed by one 8-byte store
 * (COMBINE: recl+bytes at 16, or bytes+unrecl at 20).  0 done, 1 slow
 * path, -1 retry.  The CPU is read inside the section: nothing to check.
 */
/*
 * A section's start: this CPU's obj_stock into %%rax, to 'slow' unless its
 * lock is free and it holds objcg's bytes on node nid (SCR: the scratch
 * register the section starts with, ALLOC_RSEQ_CS_BEGIN_IN).
 */
#define OBJ_STOCK_FIND(SCR)							\
		ALLOC_RSEQ_CS_BEGIN_IN(SCR)					\
		"movl %%fs:4(%%" SCR "), %%eax\n\t"				\
		"shlq $6, %%rax\n\t"						\
		"addq %[base], %%rax\n\t"					\
		"cmpl $0, (%%rax)\n\t"						\
		"jnz %l[slow]\n\t"						\
		"cmpq %[objcg], 8(%%rax)\n\t"					\
		"jnz %l[slow]\n\t"						\
		"cmpl %[nid], 28(%%rax)\n\t"					\
		"jnz %l[slow]\n\t"

#define DEFINE_OBJ_STOCK_SECTION(fn, BYTES, STAT_OP, STAT, COMBINE)		\
static inline __attribute__((always_inline)) int				\
fn(struct obj_cgroup *objcg, int nid, int dn, int ds)				\
{										\
	__asm__ __volatile__ goto(						\
		OBJ_STOCK_FIND("rdx")						\
		"movl 20(%%rax), %%edx\n\t"					\
		BYTES								\
		"movl " #STAT "(%%rax), %%r11d\n\t"				\
		STAT_OP " %[ds], %%r11d\n\t"					\
		"jo %l[slow]\n\t"						\
		COMBINE								\
		"2:\n\t"							\
		ALLOC_RSEQ_CS_ABORT						\
		:								\
		: [rseq_off] "m"(alloc_rseq_offset), [base] "m"(obj_stock),	\
		  [objcg] "r"(objcg), [nid] "r"(nid), [dn] "r"(dn), [ds] "r"(ds),	\
		  [limit] "m"(bounds.limit)					\
		: "memory", "cc", "rax", "rdx", "r11"				\
		: slow, abort);							\
	return 0;								\
abort:										\
	return -1;								\
slow:										\
	return 1;								\
}

/* nr_bytes += dn within [0, bounds.limit] (unsigned: below 0 is above it) */
#define BYTES_ADD	"addl %[dn], %%edx\n\tcmpl %[limit], %%edx\n\tja %l[slow]\n\t"
/* a charge: nr_bytes -= dn, not below 0 (no borrow) */
#define BYTES_TAKE	"subl %[dn], %%edx\n\tjb %l[slow]\n\t"
#define COMBINE_RECL	"shlq $32, %%rdx\n\torq %%r11, %%rdx\n\tmovq %%rdx, 16(%%rax)\n\t"
#define COMBINE_UNRECL	"shlq $32, %%r11\n\torq %%rdx, %%r11\n\tmovq %%r11, 20(%%rax)\n\t"

/*
 * The slab hooks' sections: the same, with the size taken from the
 * cache's charge word (size | SLAB_CHARGE_RECLAIMABLE) in the section, so
 * that the hook keeps no register of its own: a charge takes the size from
 * the bytes and adds it to the statistic, an uncharge gives the bytes back
 * (up to bounds.limit) and takes the size from the statistic.
 */
#define CHARGE_TAKE(STAT, B)							\
	"movl 20(%%rax), %%" B "\n\t"						\
	"subl %%r11d, %%" B "\n\t"						\
	"jb %l[slow]\n\t"							\
	"addl " #STAT "(%%rax), %%r11d\n\t"					\
	"jo %l[slow]\n\t"
#define CHARGE_GIVE(STAT, B)							\
	"movl 20(%%rax), %%" B "\n\t"						\
	"addl %%r11d, %%" B "\n\t"						\
	"cmpl %[limit], %%" B "\n\t"						\
	"ja %l[slow]\n\t"							\
	"negl %%r11d\n\t"							\
	"addl " #STAT "(%%rax), %%r11d\n\t"					\
	"jo %l[slow]\n\t"
/* the 8-byte commit: recl+bytes at 16, or bytes+unrecl at 20 (bytes in Q) */
#define CHARGE_COMBINE_RECL(Q)							\
	"shlq $32, %%" Q "\n\torq %%r11, %%" Q "\n\tmovq %%" Q ", 16(%%rax)\n\t"
#define CHARGE_COMBINE_UNRECL(Q)						\
	"shlq $32, %%r11\n\torq %%" Q ", %%r11\n\tmovq %%r11, 20(%%rax)\n\t"

/*
 * SCR: the scratch register besides rax and r11 ("rdx", or "rcx" for the
 * free hook, whose three arguments leave rcx free), as a 64-bit name (Q)
 * and a 32-bit one (L).
 */
#define DEFINE_OBJ_STOCK_CHARGE(fn, OP, COMBINE, Q)				\
static inline __attribute__((always_inline)) int				\
fn(struct obj_cgroup *objcg, int nid, uint32_t charge)				\
{										\
	__asm__ __volatile__ goto(						\
		OBJ_STOCK_FIND(Q)						\
		"movl %[charge], %%r11d\n\t"					\
		"andl $0x7fffffff, %%r11d\n\t"					\
		OP								\
		COMBINE								\
		"2:\n\t"							\
		ALLOC_RSEQ_CS_ABORT						\
		:								\
		: [rseq_off] "m"(alloc_rseq_offset), [base] "m"(obj_stock),	\
		  [objcg] "r"(objcg), [nid] "r"(nid), [charge] "r"(charge),	\
		  [limit] "m"(bounds.limit)					\
		: "memory", "cc", "rax", Q, "r11"				\
		: slow, abort);							\
	return 0;								\
abort:										\
	return -1;								\
slow:										\
	return 1;								\
}

_Static_assert(SLAB_CHARGE_RECLAIMABLE == 0x80000000u, "the sections' mask");

DEFINE_OBJ_STOCK_SECTION(obj_stock_adjust_recl, BYTES_ADD, "addl", 16, COMBINE_RECL)
DEFINE_OBJ_STOCK_SECTION(obj_stock_adjust_unrecl, BYTES_ADD, "addl", 24, COMBINE_UNRECL)
#ifndef MEMCG_OBJ_STOCK_SEPARATE	/* the separate path charges with obj_stock_try */
DEFINE_OBJ_STOCK_SECTION(obj_stock_take_recl, BYTES_TAKE, "addl", 16, COMBINE_RECL)
DEFINE_OBJ_STOCK_SECTION(obj_stock_take_unrecl, BYTES_TAKE, "addl", 24, COMBINE_UNRECL)
DEFINE_OBJ_STOCK_CHARGE(obj_stock_charge_recl, CHARGE_TAKE(16, "edx"),
			CHARGE_COMBINE_RECL("rdx"), "rdx")
DEFINE_OBJ_STOCK_CHARGE(obj_stock_charge_unrecl, CHARGE_TAKE(24, "edx"),
			CHARGE_COMBINE_UNRECL("rdx"), "rdx")
DEFINE_OBJ_STOCK_CHARGE(obj_stock_uncharge_recl, CHARGE_GIVE(16, "ecx"),
			CHARGE_COMBINE_RECL("rcx"), "rcx")
DEFINE_OBJ_STOCK_CHARGE(obj_stock_uncharge_unrecl, CHARGE_GIVE(24, "ecx"),
			CHARGE_COMBINE_UNRECL("rcx"), "rcx")
#endif

/*
 * One attempt at the stock on an rseq thread: 0 done, 1 slow path, -1
 * preempted or migrated (try again).  nr_bytes += dn, the statistic += ds.
 */
static inline __attribute__((always_inline)) int
obj_stock_try(struct obj_cgroup *objcg, int nid, bool reclaimable, int dn, int ds)
{
	if (!alloc_thread_uses_rseq())
		return 1;
	return reclaimable ? obj_stock_adjust_recl(objcg, nid, dn, ds)
			   : obj_stock_adjust_unrecl(objcg, nid, dn, ds);
}

#ifndef MEMCG_OBJ_STOCK_SEPARATE
/* The same for a slab charge: nr_bytes -= size, the statistic += size. */
static inline __attribute__((always_inline)) int
obj_stock_take_try(struct obj_cgroup *objcg, int nid, bool reclaimable, int size)
{
	if (!alloc_thread_uses_rseq())
		return 1;
	return reclaimable ? obj_stock_take_recl(objcg, nid, size, size)
			   : obj_stock_take_unrecl(objcg, nid, size, size);
}

/* The same for the slab hooks, by the cache's charge word: a charge, or (give) an uncharge. */
static inline __attribute__((always_inline)) int
obj_stock_word_try(struct obj_cgroup *objcg, int nid, uint32_t charge, bool give)
{
	bool recl = charge & SLAB_CHARGE_RECLAIMABLE;

	if (!alloc_thread_uses_rseq())
		return 1;
	if (give)
		return recl ? obj_stock_uncharge_recl(objcg, nid, charge)
			    : obj_stock_uncharge_unrecl(objcg, nid, charge);
	return recl ? obj_stock_charge_recl(objcg, nid, charge)
		    : obj_stock_charge_unrecl(objcg, nid, charge);
}
#endif

/* The stock fast path on an rseq thread: true when done. */
static inline __attribute__((always_inline)) bool
obj_stock_fast(struct obj_cgroup *objcg, int nid, bool reclaimable, int dn, int ds)
{
	for (;;) {
		int r = obj_stock_try(objcg, nid, reclaimable, dn, ds);

		if (r >= 0)
			return r == 0;
	}
}
#else
static inline int obj_stock_try(struct obj_cgroup *objcg, int nid, bool reclaimable,
				int dn, int ds)
{
	(void)objcg; (void)nid; (void)reclaimable; (void)dn; (void)ds;
	return 1;
}

#ifndef MEMCG_OBJ_STOCK_SEPARATE
static inline int obj_stock_take_try(struct obj_cgroup *objcg, int nid, bool reclaimable,
				     int size)
{
	(void)objcg; (void)nid; (void)reclaimable; (void)size;
	return 1;
}

static inline int obj_stock_word_try(struct obj_cgroup *objcg, int nid, uint32_t charge,
				     bool give)
{
	(void)objcg; (void)nid; (void)charge; (void)give;
	return 1;
}
#endif

static inline bool obj_stock_fast(struct obj_cgroup *objcg, int nid, bool reclaimable,
				  int dn, int ds)
{
	return !obj_stock_try(objcg, nid, reclaimable, dn, ds);
}
#endif

/*
 * consume_obj_stock - take nr_bytes from this CPU's stock if it holds them
 * for objcg; with 'account', the slab statistic in the same section.
 */
static bool consume_obj_stock(struct obj_cgroup *objcg, unsigned int nr_bytes,
			      int nid, bool reclaimable, bool account)
{
	unsigned int cpu;
	struct obj_stock_pcp *st;
	bool ret = false;

	if (obj_stock_fast(objcg, nid, reclaimable, -(int)nr_bytes, account ? (int)nr_bytes : 0))
		return true;
	cpu = alloc_slot_cpu();
	st = &obj_stock[cpu];
	if (!alloc_cpu_trylock(&st->lock, cpu))
		return false;
	if (st->cached_objcg == objcg && st->nr_bytes >= nr_bytes) {
		st->nr_bytes -= nr_bytes;
		if (account)
			__account_obj_stock(st, (int)nr_bytes, nid, reclaimable);
		ret = true;
	}
	alloc_cpu_unlock(&st->lock);
	return ret;
}

/*
 * refill_obj_stock - give nr_bytes back to this CPU's stock (adopting objcg
 * if it held another), with a statistic delta nr_acct when 'account';
 * whole pages above the stock's limit are uncharged when allow_uncharge.
 */
static void refill_obj_stock(struct obj_cgroup *objcg, unsigned int nr_bytes,
			     bool allow_uncharge, int nr_acct, bool account,
			     int nid, bool reclaimable)
{
	unsigned int cpu, nr_pages = 0, page = page_size;
	struct obj_stock_pcp *st;

	if (allow_uncharge &&
	    obj_stock_fast(objcg, nid, reclaimable, (int)nr_bytes, account ? nr_acct : 0))
		return;
	cpu = alloc_slot_cpu();
	st = &obj_stock[cpu];
	if (!alloc_cpu_trylock(&st->lock, cpu)) {
		/* busy: straight to the counters, the remainder to the objcg */
		if (account)
			mod_objcg_state_direct(objcg, nid, reclaimable, nr_acct);
		nr_pages = nr_bytes >> page_shift;
		if (nr_pages)
			obj_cgroup_uncharge_pages(objcg, nr_pages);
		if (nr_bytes & (page - 1))
			atomic_fetch_add(&objcg->nr_charged_bytes, (long)(nr_bytes & (page - 1)));
		return;
	}
	if (st->cached_objcg != objcg) {
		drain_obj_stock(st);
		obj_cgroup_get(objcg);
		st->cached_objcg = objcg;
		st->cached_nid = nid;
		st->nr_bytes = (uint32_t)atomic_exchange(&objcg->nr_charged_bytes, 0);
		allow_uncharge = true;
	}
	st->nr_bytes += nr_bytes;
	if (account)
		__account_obj_stock(st, nr_acct, nid, reclaimable);
	if (allow_uncharge && st->nr_bytes > bounds.limit) {
#ifdef MEMCG_OBJ_STOCK_KERNEL_LIMIT
		/* the kernel: every whole page goes */
		nr_pages = st->nr_bytes >> page_shift;
#else
		/* only what is above the limit: an object of about a page fits again */
		nr_pages = (st->nr_bytes - bounds.limit + page - 1) >> page_shift;
#endif
		st->nr_bytes -= nr_pages * page;
	}
	alloc_cpu_unlock(&st->lock);
	if (nr_pages)
		obj_cgroup_uncharge_pages(objcg, nr_pages);
}

/* Bytes through the stock, whole pages through the page counter. */
static int obj_cgroup_charge_bytes(struct obj_cgroup *objcg, gfp_t gfp, size_t size,
				   bool account, int nid, bool reclaimable)
{
	unsigned int page, nr_pages, nr_bytes;
	int ret;

	if (consume_obj_stock(objcg, (unsigned int)size, nid, reclaimable, account))
		return 0;
	page = page_size;
	nr_pages = (unsigned int)(size >> page_shift);
	nr_bytes = (unsigned int)(size & (page - 1));
	if (nr_bytes)
		nr_pages++;
	ret = obj_cgroup_charge_pages(objcg, gfp, nr_pages);
	if (ret)
		return ret;
	refill_obj_stock(objcg, nr_bytes ? page - nr_bytes : 0, false, (int)size, account,
			 nid, reclaimable);
	return 0;
}

int obj_cgroup_charge(struct obj_cgroup *objcg, gfp_t gfp, size_t size)
{
	return obj_cgroup_charge_bytes(objcg, gfp, size, false, 0, false);
}

void obj_cgroup_uncharge(struct obj_cgroup *objcg, size_t size)
{
	refill_obj_stock(objcg, (unsigned int)size, true, 0, false, 0, false);
}

#ifdef MEMCG_OBJ_STOCK_SEPARATE
/* mod_objcg_state(): the statistic in a second locked section. */
static void mod_objcg_state(struct obj_cgroup *objcg, int nid, bool reclaimable, int nr)
{
	unsigned int cpu;
	struct obj_stock_pcp *st;

	if (obj_stock_fast(objcg, nid, reclaimable, 0, nr))
		return;
	cpu = alloc_slot_cpu();
	st = &obj_stock[cpu];
	if (!alloc_cpu_trylock(&st->lock, cpu)) {
		mod_objcg_state_direct(objcg, nid, reclaimable, nr);
		return;
	}
	if (st->cached_objcg != objcg) {
		drain_obj_stock(st);
		obj_cgroup_get(objcg);
		st->cached_objcg = objcg;
		st->cached_nid = nid;
		st->nr_bytes = (uint32_t)atomic_exchange(&objcg->nr_charged_bytes, 0);
	}
	__account_obj_stock(st, nr, nid, reclaimable);
	alloc_cpu_unlock(&st->lock);
}
#endif

/* ---- alloc's hooks ---- */
/*
 * The charge and its statistic: one stock section (seed 002), or, in the
 * ablation build, the bytes and then the statistic in a second section as
 * before it.  0 when the fast path did it all, nonzero for the slow path
 * (the hooks' common case is one attempt, no loop: nothing to keep in a
 * register across it, so the hooks save none).
 */
#ifdef MEMCG_OBJ_STOCK_SEPARATE
/* the bytes (dn) in one section, then the statistic (ds) in a second */
static inline __attribute__((always_inline)) int
slab_stock_separate_try(struct obj_cgroup *objcg, int nid, bool reclaimable, int dn, int ds)
{
	return !(obj_stock_fast(objcg, nid, reclaimable, dn, 0) &&
		 (obj_stock_fast(objcg, nid, reclaimable, 0, ds) ||
		  (mod_objcg_state(objcg, nid, reclaimable, ds), true)));
}
#endif

static inline __attribute__((always_inline)) int
slab_charge_try(struct obj_cgroup *objcg, int nid, bool reclaimable, int size)
{
#ifndef MEMCG_OBJ_STOCK_SEPARATE
	return obj_stock_take_try(objcg, nid, reclaimable, size);
#else
	return slab_stock_separate_try(objcg, nid, reclaimable, -size, size);
#endif
}

/* The same by the cache's charge word (size | SLAB_CHARGE_RECLAIMABLE); give: the uncharge. */
static inline __attribute__((always_inline)) int
slab_charge_word_try(struct obj_cgroup *objcg, int nid, uint32_t charge, bool give)
{
#ifndef MEMCG_OBJ_STOCK_SEPARATE
	return obj_stock_word_try(objcg, nid, charge, give);
#else
	bool recl = charge & SLAB_CHARGE_RECLAIMABLE;
	int size = (int)(charge & ~SLAB_CHARGE_RECLAIMABLE);

	return give ? slab_stock_separate_try(objcg, nid, recl, size, -size)
		    : slab_stock_separate_try(objcg, nid, recl, -size, size);
#endif
}

/* gcc's: not inlined, and its arguments not changed by interprocedural passes */
#if defined(__clang__)
#define __noipa __attribute__((noinline))
#else
#define __noipa __attribute__((noipa))
#endif

/*
 * The charge past the fast path's one attempt: the attempt again while it
 * is preempted or migrated, then the stock under its lock and the page
 * counter.
 */
static __noipa int slab_charge_slow(struct obj_cgroup *objcg, gfp_t gfp,
				    struct slabobj_ext *ext, unsigned int full_size,
				    bool reclaimable, int nid)
{
	int r;

	while ((r = slab_charge_try(objcg, nid, reclaimable, (int)full_size)) < 0)
		;
	if (r) {
#ifdef MEMCG_OBJ_STOCK_SEPARATE
		if (obj_cgroup_charge_bytes(objcg, gfp, full_size, false, nid, reclaimable))
			return -ENOMEM;
		mod_objcg_state(objcg, nid, reclaimable, (int)full_size);
#else
		if (obj_cgroup_charge_bytes(objcg, gfp, full_size, true, nid, reclaimable))
			return -ENOMEM;
#endif
	}
	ext->objcg = objcg;
	return 0;
}

#ifndef MEMCG_OBJCG_LOOKUP_MEMCG
/*
 * Past the fast path (a stale pointer, remote charging, no vector yet, a
 * stock to refill): current's objcg again, referenced while it is charged
 * (current_obj_cgroup_get).  The object's bytes then keep it, as pages
 * charged through it.
 */
static __noipa int post_alloc_hook_slow(gfp_t gfp, struct slabobj_ext *ext,
					unsigned int full_size, bool reclaimable, int nid)
{
	struct obj_cgroup *objcg = current_obj_cgroup_get();
	int ret;

	if (!objcg)
		return 0;
	ret = ext ? slab_charge_slow(objcg, gfp, ext, full_size, reclaimable, nid) : 1;
	obj_cgroup_put(objcg);
	return ret;
}
#endif

/*
 * __memcg_slab_post_alloc_hook - current's objcg is the word alloc read
 * (the task's cached pointer, seed 003; or the walk through its memcg,
 * referenced, in the ablation build), and the common case is one stock
 * section and the store of the objcg: no call, no register saved; anything
 * else is a tail call.
 */
int __memcg_slab_post_alloc_hook(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
				 unsigned int full_size, bool reclaimable, int nid)
{
#ifndef MEMCG_OBJCG_LOOKUP_MEMCG
	struct obj_cgroup *objcg = (struct obj_cgroup *)cur;

	if (unlikely(cur & CURRENT_OBJCG_UPDATE_FLAG) || unlikely(!ext))
		return post_alloc_hook_slow(gfp, ext, full_size, reclaimable, nid);
	if (likely(!slab_charge_try(objcg, nid, reclaimable, (int)full_size))) {
		ext->objcg = objcg;
		return 0;
	}
	return post_alloc_hook_slow(gfp, ext, full_size, reclaimable, nid);
#else
	/* before seed 003: a referenced lookup at every allocation, put after the charge */
	struct obj_cgroup *objcg = get_obj_cgroup_from_current();
	int ret = 0;

	(void)cur;
	if (!objcg)
		return 0;		/* a root task: not accounted */
	if (unlikely(!ext))
		ret = 1;
	else if (likely(!slab_charge_try(objcg, nid, reclaimable, (int)full_size)))
		ext->objcg = objcg;
	else
		ret = slab_charge_slow(objcg, gfp, ext, full_size, reclaimable, nid);
	obj_cgroup_put(objcg);
	return ret;
#endif
}

/* __memcg_slab_charge past its one attempt: the hook's whole path. */
static __noipa void *slab_charge_obj_slow(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
					  uint32_t charge, int nid, void *obj)
{
	if (__memcg_slab_post_alloc_hook(cur, gfp, ext, charge & ~SLAB_CHARGE_RECLAIMABLE,
					 charge & SLAB_CHARGE_RECLAIMABLE, nid))
		return slab_alloc_charge_failed(obj);
	return obj;
}

/*
 * __memcg_slab_charge - __memcg_slab_post_alloc_hook's common case as
 * alloc's tail call: one stock section, the objcg stored, the object
 * handed back; no register saved.
 */
ALLOC_HOT("20")
void *__memcg_slab_charge(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
			  uint32_t charge, int nid, void *obj)
{
#ifndef MEMCG_OBJCG_LOOKUP_MEMCG
	struct obj_cgroup *objcg = (struct obj_cgroup *)cur;

	if (likely(!(cur & CURRENT_OBJCG_UPDATE_FLAG)) &&
	    likely(!slab_charge_word_try(objcg, nid, charge, false))) {
		ext->objcg = objcg;
		return obj;
	}
#endif
	/* (before seed 003, every allocation takes the referenced lookup) */
	return slab_charge_obj_slow(cur, gfp, ext, charge, nid, obj);
}

static __noipa void slab_uncharge_slow(struct obj_cgroup *objcg, unsigned int full_size,
				       bool reclaimable, int nid)
{
#ifdef MEMCG_OBJ_STOCK_SEPARATE
	refill_obj_stock(objcg, full_size, true, 0, false, nid, reclaimable);
	mod_objcg_state(objcg, nid, reclaimable, -(int)full_size);
#else
	refill_obj_stock(objcg, full_size, true, -(int)full_size, true, nid, reclaimable);
#endif
}

ALLOC_HOT("21")
void __memcg_slab_free_hook(struct obj_cgroup *objcg, uint32_t charge, int nid)
{
	if (likely(!slab_charge_word_try(objcg, nid, charge, true)))
		return;
	slab_uncharge_slow(objcg, charge & ~SLAB_CHARGE_RECLAIMABLE,
			   charge & SLAB_CHARGE_RECLAIMABLE, nid);
}

int memcg_kmem_charge_bytes(gfp_t gfp, size_t size, struct obj_cgroup **objcgp)
{
	struct obj_cgroup *objcg;
	struct slabobj_ext ext;
	int ret = 0;

	*objcgp = NULL;
	if (!size)
		return 0;
	objcg = current_obj_cgroup_get();
	if (!objcg)
		return 0;
	if (slab_charge_slow(objcg, gfp, &ext, (unsigned int)size, false, 0))
		ret = -ENOMEM;
	else
		*objcgp = objcg;	/* the charged bytes keep it */
	obj_cgroup_put(objcg);
	return ret;
}

void memcg_kmem_uncharge_bytes(struct obj_cgroup *objcg, size_t size)
{
	if (objcg && size)
		slab_uncharge_slow(objcg, (unsigned int)size, false, 0);
}

int __memcg_kmem_charge_page(struct page *page, gfp_t gfp, unsigned int order)
{
	struct obj_cgroup *objcg = current_obj_cgroup_get();
	int ret;

	if (!objcg)
		return 0;
	/* the page's own references come with its charge */
	ret = obj_cgroup_charge_pages(objcg, gfp, 1u << order);
	if (!ret) {
		page->memcg_data = (uintptr_t)objcg | MEMCG_DATA_KMEM;
		/* a large kmalloc counts as unreclaimable slab (the folio's lruvec) */
		mod_objcg_state_direct(objcg, page_to_nid(page), false, (int)(page_size << order));
	}
	obj_cgroup_put(objcg);
	return ret;
}

void __memcg_kmem_uncharge_page(struct page *page, unsigned int order)
{
	struct obj_cgroup *objcg = (struct obj_cgroup *)(page->memcg_data & ~MEMCG_DATA_KMEM);

	if (!objcg)
		return;
	mod_objcg_state_direct(objcg, page_to_nid(page), false, -(int)(page_size << order));
	page->memcg_data = 0;
	obj_cgroup_uncharge_pages(objcg, 1u << order);
}

/* ---- draining ---- */
static bool obj_stock_in_subtree(struct obj_stock_pcp *st, struct mem_cgroup *root)
{
	bool ret;

	if (!st->cached_objcg)
		return false;
	rcu_read_lock();
	ret = mem_cgroup_is_descendant(obj_cgroup_memcg(st->cached_objcg), root);
	rcu_read_unlock();
	return ret;
}

/* drain_all_stock - every CPU's stocks that hold charges of root's subtree. */
void drain_all_stock(struct mem_cgroup *root)
{
	pthread_mutex_lock(&drain_lock);
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		struct memcg_stock_pcp *ms = &memcg_stock[cpu];
		struct obj_stock_pcp *os = &obj_stock[cpu];

		alloc_cpu_lock(&os->lock, cpu);
		if (obj_stock_in_subtree(os, root))
			drain_obj_stock(os);
		alloc_cpu_unlock(&os->lock);
		alloc_cpu_lock(&ms->lock, cpu);
		for (int i = 0; i < NR_MEMCG_STOCK; i++)
			if (ms->cached[i] && mem_cgroup_is_descendant(ms->cached[i], root))
				drain_stock(ms, i);
		alloc_cpu_unlock(&ms->lock);
	}
	pthread_mutex_unlock(&drain_lock);
}

/* Every CPU's buffered slab statistics, into the memcgs (before a read). */
void memcg_flush_stock_stats(void);
void memcg_flush_stock_stats(void)
{
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		struct obj_stock_pcp *os = &obj_stock[cpu];

		if (!READ_ONCE(os->nr_slab_reclaimable_b) && !READ_ONCE(os->nr_slab_unreclaimable_b))
			continue;
		alloc_cpu_lock(&os->lock, cpu);
		flush_stock_stats(os);
		alloc_cpu_unlock(&os->lock);
	}
}

/* The whole pages an objcg holds as leftover bytes go back. */
static void objcg_return_pages(struct mem_cgroup *memcg)
{
	struct obj_cgroup *batch[64];
	unsigned int n = 0;

	pthread_mutex_lock(&objcg_lock);
	for (struct obj_cgroup *o = memcg->objcg_list; o && n < 64; o = o->next) {
		if (atomic_load(&o->nr_charged_bytes) >= (long)page_size && obj_cgroup_tryget(o))
			batch[n++] = o;
	}
	pthread_mutex_unlock(&objcg_lock);
	for (unsigned int i = 0; i < n; i++) {
		struct obj_cgroup *o = batch[i];
		long bytes = atomic_load(&o->nr_charged_bytes);
		long pages = bytes / (long)page_size;

		while (pages > 0 && !atomic_compare_exchange_weak(&o->nr_charged_bytes, &bytes,
				bytes - pages * (long)page_size))
			pages = bytes / (long)page_size;
		if (pages > 0)
			obj_cgroup_uncharge_pages(o, (unsigned int)pages);
		obj_cgroup_put(o);
	}
	for (struct mem_cgroup *c = memcg->children; c; c = c->sibling)
		objcg_return_pages(c);
}

void memcg_drain(void)
{
	if (!memcg_up)
		return;
	drain_all_stock(root_memcg);
	pthread_mutex_lock(&tree_lock);
	objcg_return_pages(root_memcg);
	pthread_mutex_unlock(&tree_lock);
	/* the pages given back went through the stocks */
	drain_all_stock(root_memcg);
}
