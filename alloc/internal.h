/* SPDX-License-Identifier: MIT */
/*
 * alloc/internal.h - what the files of alloc/ share and nobody else sees.
 *
 * Lock order (outermost first):
 *   slab_mutex (cache list, create/destroy)
 *     slab_life_lock (a slab being made or discarded; alloc_check)
 *     kmem_cache_cpu.lock (one CPU slot of one cache)
 *       kmem_cache_node.list_lock
 *         slab.lock
 *           zone.lock (buddy allocator)
 * A CPU slot lock of a SLAB_ACCOUNT or kmalloc-cg cache may be held while
 * the obj_exts vector is allocated from a normal kmalloc cache: cg and rcl
 * cache slots are always taken before normal ones, never the other way.
 */
#ifndef MEMCGFS_ALLOC_INTERNAL_H
#define MEMCGFS_ALLOC_INTERNAL_H

#include "alloc.h"
#include "fault.h"

#include <pthread.h>
#include <stdatomic.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define __noinline	__attribute__((noinline))
/* The fast paths' entry points: ALLOC_HOT (alloc.h). */
#undef __always_inline
#define __always_inline	inline __attribute__((always_inline))
/* the kernel's volatile accesses are relaxed atomics: say so (TSan sees them) */
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define ALIGN(x, a)	(((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define ARCH_SLAB_MINALIGN	8u
#define ARCH_KMALLOC_MINALIGN	8u
#define MAX_OBJS_PER_PAGE	32767u

/* alloc.h's versions call functions; inside alloc the fast paths read machine. */
#undef KMALLOC_MAX_CACHE_SIZE
#define KMALLOC_MAX_CACHE_SIZE	(machine.kmalloc_max_cache)
#undef KMALLOC_MAX_SIZE
#define KMALLOC_MAX_SIZE	((size_t)machine.page_size << MAX_PAGE_ORDER)

static inline unsigned int fls_u(unsigned int x)
{
	return x ? 32 - (unsigned int)__builtin_clz(x) : 0;
}

static inline unsigned int ilog2_u(unsigned long x)
{
	return 63 - (unsigned int)__builtin_clzl(x);
}

/* ---- a small spinlock that yields: for short sections on 2 shared CPUs ---- */
static inline bool spin_trylock(_Atomic uint32_t *l)
{
	uint32_t z = 0;
	return atomic_compare_exchange_strong_explicit(l, &z, 1,
			memory_order_acquire, memory_order_relaxed);
}
void spin_lock_slow(_Atomic uint32_t *l);
static inline void spin_lock(_Atomic uint32_t *l)
{
	if (likely(spin_trylock(l)))
		return;
	spin_lock_slow(l);
}
static inline void spin_unlock(_Atomic uint32_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* ---- the machine ---- */
struct zone {
	pthread_mutex_t lock;
	struct page *free_area[NR_PAGE_ORDERS];
	unsigned long nr_free[NR_PAGE_ORDERS];
	unsigned long free_pages;
	unsigned long slab_pages, large_pages, alloc_pages;
};

struct machine {
	char *base;			/* arena, aligned to the largest block */
	uint64_t size;
	void *map;			/* the mmap, for munmap */
	size_t map_len;
	unsigned int page_shift, page_size;
	size_t kmalloc_max_cache;	/* 2 * page_size: KMALLOC_SHIFT_HIGH */
	/*
	 * The fast paths' one bound test also stands for the kernel's static
	 * keys (slab_update_rare sets them): kmalloc_fast_limit is
	 * kmalloc_max_cache, 0 while slab_hooks_on; kfree_fast_limit is size,
	 * 0 while trace_on.  Everything past the limit takes the general path.
	 */
	size_t kmalloc_fast_limit;
	uint64_t kfree_fast_limit;
	unsigned long nr_pages;
	struct page *pages;		/* side table, indexed by pfn */
	struct slab *slabs;		/* slab side table, indexed by head pfn */
	struct slab **slab_of;		/* every page's slab or NULL: kfree's lookup */
	size_t table_len, slab_table_len, slab_of_len;
	unsigned int cpus, nodes, cache_line;
	unsigned int slub_min_order, slub_max_order, slub_min_objects;
	unsigned long pages_per_node;
	bool rseq;			/* per-CPU fast paths in rseq */
	struct zone zone;
	struct timespec boot;
};

extern struct machine machine;
extern bool machine_up;

/* ---- restartable sequences ---- */
extern __thread int alloc_pinned_cpu ALLOC_TLS_LE;	/* -1: not pinned */
/*
 * alloc_rseq_gen (alloc.h) when this thread runs the rseq fast paths (rseq machine,
 * thread not pinned), anything else otherwise: one test on the fast path.
 * Set by the slow paths (thread_rseq_refresh), reset by pinning.
 */
static inline bool thread_uses_rseq(void)
{
	return alloc_thread_uses_rseq();
}

struct rseq_abi {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
};

static __always_inline struct rseq_abi *rseq_area(void)
{
	return (struct rseq_abi *)((char *)__builtin_thread_pointer() +
				   alloc_rseq_offset);
}

static __always_inline struct page *__virt_to_page(const void *addr)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)machine.base;

	if (unlikely(off >= machine.size))
		return NULL;
	return &machine.pages[off >> machine.page_shift];
}

/*
 * The lock path's slot for this thread (see slab_alloc_node); the pinned CPU
 * while pinned.  slot_cpu() is the exact current slot, for slow paths, and
 * refreshes the hint.
 */
extern __thread unsigned int alloc_cpu_hint ALLOC_TLS_LE;
unsigned int alloc_refresh_cpu_hint(void);

static __always_inline unsigned int slot_cpu(void)
{
	if (alloc_pinned_cpu >= 0)
		return (unsigned int)alloc_pinned_cpu;
	if (machine.rseq)
		return READ_ONCE(rseq_area()->cpu_id) % machine.cpus;
	return alloc_refresh_cpu_hint();
}

/* Make sure no restartable section of CPU 'cpu' overlaps what follows. */
void rseq_fence_cpu(unsigned int cpu);

/* ---- slab ---- */
/*
 * struct slab - one per slab, in a side table indexed by the head page's
 * pfn.  States as in SLUB: a CPU slab is frozen; a CPU-partial slab is on
 * one CPU's partial list (not frozen, not on_node_partial); a node-partial
 * slab has on_node_partial set; a full slab is on no list.
 * freelist/inuse/frozen change under 'lock' (the kernel's cmpxchg_double).
 */
struct slab {
	struct kmem_cache *cache;
	/*
	 * cache->cpu_slab, cache->offset and cache->charge, copied here by
	 * new_slab(): the free fast path reads them with obj_exts from the
	 * first 32 bytes of the slab (one cache line: the struct is
	 * 32-aligned), one dependent load less between kfree's pointer and
	 * its push, and the accounted free needs no load of the cache.
	 */
	struct kmem_cache_cpu *cpu_slab;
	struct slabobj_ext *obj_exts;
	unsigned int fp_offset;
	uint32_t charge;		/* cache->charge, for the free hook */
	char *base;
	void *freelist;
	uint16_t inuse;
	uint16_t objects;
	uint8_t frozen;
	uint8_t on_node_partial;
	uint8_t nid;
	_Atomic uint32_t lock;
	struct slab *next, *prev;	/* node partial list; CPU partial: next */
	unsigned int slabs;		/* CPU partial list length, in its head */
} __attribute__((aligned(32)));

/*
 * Layout the restartable sequences know: freelist at 0, slab at 8, lock at
 * 16, pend at 24, pend_slab at 32 (slub.c, rseq_free_push).
 *
 * pend_*: objects freed on this CPU to one slab that is not the CPU slab,
 * chained through their free pointers and handed back to that slab in one
 * locked section when a free for another slab comes (or on flush).  pend
 * is the run's head (a user address: below 2^48) and, in its top 16 bits,
 * the run's length (a slab has at most 65535 objects), so that a push
 * commits both in one store and nothing walks the run to count it (a walk
 * through 512 just-freed objects is a chain of dependent loads).  This is
 * the kernel's detached freelist (build_detached_freelist, which
 * kmem_cache_free_bulk hands to __slab_free in one cmpxchg) kept across
 * calls: a run of frees to one slab costs one atomic operation instead of
 * one each.  Pending objects still count in the slab's inuse, so the slab
 * cannot be discarded under them; memcg has uncharged them already.
 */
#define PEND_SHIFT		48
#define PEND_HEAD(pend)		((void *)(uintptr_t)((pend) & ((1ull << PEND_SHIFT) - 1)))
#define PEND_LEN(pend)		((unsigned int)((pend) >> PEND_SHIFT))
#define PEND_MAKE(head, len)	((uint64_t)(len) << PEND_SHIFT | (uint64_t)(uintptr_t)(head))

struct kmem_cache_cpu {
	void *freelist;
	struct slab *slab;
	_Atomic uint32_t lock;
	uint32_t pad;
	uint64_t pend;			/* PEND_LEN(pend) << 48 | the run's head */
	struct slab *pend_slab;
	void *pend_tail;		/* the run's first object, its last link */
	struct slab *partial;
} __attribute__((aligned(64)));

/*
 * The free fast path's guess of the freed object's CPU slots: the cpu_slab
 * array of the cache this thread last freed to (slub.c, rseq_free_push).
 * Never NULL: alloc_no_guess, all slots empty, until a first free, and
 * again whenever the thread starts on a new machine generation (the
 * arrays of a machine that went down are freed; a destroyed cache's are
 * kept for reuse, so that a guess never points at freed memory).
 */
extern __thread struct kmem_cache_cpu *alloc_free_guess ALLOC_TLS_LE;
extern struct kmem_cache_cpu alloc_no_guess[ALLOC_MAX_CPUS];

static inline void thread_rseq_refresh(void)
{
	if (machine.rseq && alloc_pinned_cpu < 0 && alloc_thread_gen != alloc_rseq_gen) {
		alloc_free_guess = alloc_no_guess;
		alloc_thread_gen = alloc_rseq_gen;
	}
}

struct kmem_cache_node {
	_Atomic uint32_t list_lock;
	unsigned long nr_partial;
	struct slab *partial;		/* circular doubly linked via next/prev */
	_Atomic long nr_slabs;
	_Atomic long total_objects;
} __attribute__((aligned(64)));

struct kmem_cache {
	/* hot: the fast paths read these */
	struct kmem_cache_cpu *cpu_slab;
	unsigned int offset;		/* free pointer, inside the object */
	unsigned int size;		/* stride */
	unsigned int object_size;
	uint32_t reciprocal_size;	/* obj_to_index() */
	bool account;			/* SLAB_ACCOUNT */
	bool reclaimable;		/* SLAB_RECLAIM_ACCOUNT */
	bool kmalloc;
	bool rare;			/* account || slab_hooks_on: allocations leave the fast path */
	slab_flags_t flags;
	uint32_t charge;		/* __memcg_slab_charge(): size + pointer, RECLAIMABLE bit */
	/* geometry */
	unsigned int align;
	unsigned int order, objects;	/* oo */
	unsigned int min_order, min_objects;	/* min */
	unsigned int min_partial;
	unsigned int cpu_partial, cpu_partial_slabs;
	struct kmem_cache_node *node;
	char name[64];
	uid_t owner;
	struct kmem_cache *next;	/* slab_caches, newest first */
};

extern struct kmem_cache *kmalloc_caches[NR_KMALLOC_TYPES][NR_KMALLOC_INDEX];
/*
 * kmalloc_normal_by_size[(size - 1) / 8], kmalloc_cg_by_size[...]: the
 * KMALLOC_NORMAL and KMALLOC_CGROUP caches of every size up to
 * KMALLOC_MAX_CACHE_SIZE, so that kmalloc's fast paths find their cache in
 * one load (the kernel folds kmalloc_index() at compile time).
 */
extern struct kmem_cache **kmalloc_normal_by_size, **kmalloc_cg_by_size;
extern const uint8_t kmalloc_size_index[24];
extern const uint8_t kmalloc_type_of_bits[4];

/* RECLAIMABLE (bit 4) and ACCOUNT (bit 22) as a 2-bit index. */
static inline unsigned int gfp_type_bits(gfp_t gfp)
{
	return ((gfp >> 4) & 1) | ((gfp >> 21) & 2);
}

static inline unsigned int __kmalloc_index(size_t size)
{
	if (size <= 192)
		return kmalloc_size_index[(size - 1) / 8];
	return fls_u((unsigned int)size - 1);
}

void *kmalloc_large(size_t size, gfp_t gfp, uintptr_t caller);
void free_large_kmalloc(struct page *page, const void *obj);

extern pthread_mutex_t slab_mutex;
extern pthread_rwlock_t slab_life_lock;
/* Recompute every cache's 'rare' (tracing switched). */
void slab_update_rare(void);
extern struct kmem_cache *slab_caches;

struct slab *virt_to_slab(const void *addr, struct page **headp);
int kmalloc_init(void);
void kmalloc_exit(void);
int flush_all(struct kmem_cache *s);
unsigned long cache_free_on_node_partial(struct kmem_cache *s);
void kmem_cache_free_struct(struct kmem_cache *s);
void kmem_cache_free_spares(void);	/* alloc_exit: the destroyed caches' slot arrays */

/* page allocator internals */
struct page *__alloc_pages(gfp_t gfp, unsigned int order, enum page_kind kind);
void __free_pages_kind(struct page *page, unsigned int order);

/* ---- trace ---- */
extern bool trace_on;
/* trace_on, or failslab armed: every slab allocation takes slab_alloc_finish */
extern bool slab_hooks_on;
/*
 * An allocation memcgfs makes for itself inside a client's request (a
 * slab's obj_exts vector) is traced as the requesting thread's but under
 * its own call site, never the client's site=, as the kernel's trace shows
 * alloc_slab_obj_exts and not the caller of kmalloc.  begin() returns the
 * context to give back to end().
 */
const struct alloc_ctx *alloc_ctx_internal_begin(struct alloc_ctx *own);
/* not static: a daemon linked with -rdynamic names it in the trace's call_site */
void alloc_slab_obj_exts(struct slab *slab);
void alloc_ctx_internal_end(const struct alloc_ctx *outer);
void trace_kmalloc(uintptr_t call_site, const void *ptr, size_t req,
		   size_t alloc, gfp_t gfp, bool accounted);
void trace_kmem_cache_alloc(uintptr_t call_site, const void *ptr,
			    const struct kmem_cache *s, gfp_t gfp, bool accounted);
void trace_kmem_cache_free(uintptr_t call_site, const void *ptr,
			   const struct kmem_cache *s);
void trace_mm_page_alloc(const struct page *page, unsigned int order, gfp_t gfp);
void trace_mm_page_free(const struct page *page, unsigned int order);
int trace_init(unsigned int entries);
void trace_exit(void);

#define _RET_IP_	((uintptr_t)__builtin_return_address(0))

#endif
