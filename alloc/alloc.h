/* SPDX-License-Identifier: MIT */
/*
 * alloc: the emulated machine's memory.
 *
 * An arena of machine.memory bytes cut into pages, a buddy page allocator
 * (orders 0..MAX_PAGE_ORDER) with a struct page side table indexed by page
 * frame number, and a SLUB-like slab allocator on top of it (kmem_cache,
 * kmalloc with the kernel's size classes and three families, slabinfo,
 * kmem trace events).  alloc knows nothing of cgroups: charging goes through
 * the accounting hooks declared at the end of this header, which memcg
 * implements (alloc's own tests link the no-accounting ones in
 * alloc/noacct.c).
 *
 * There is one machine per process, as there is one kernel: alloc_init()
 * creates it, alloc_exit() tears it down.  All functions are thread-safe.
 * Errors are negative errno values; allocators return NULL.
 */
#ifndef MEMCGFS_ALLOC_H
#define MEMCGFS_ALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- gfp flags: the kernel's bit values (include/linux/gfp_types.h) ---- */
typedef unsigned int gfp_t;

#define __GFP_DMA		0x01u
#define __GFP_HIGHMEM		0x02u
#define __GFP_DMA32		0x04u
#define __GFP_MOVABLE		0x08u
#define __GFP_RECLAIMABLE	0x10u
#define __GFP_HIGH		0x20u
#define __GFP_IO		0x40u
#define __GFP_FS		0x80u
#define __GFP_ZERO		0x100u
#define __GFP_DIRECT_RECLAIM	0x400u
#define __GFP_KSWAPD_RECLAIM	0x800u
#define __GFP_WRITE		0x1000u
#define __GFP_NOWARN		0x2000u
#define __GFP_RETRY_MAYFAIL	0x4000u
#define __GFP_NOFAIL		0x8000u
#define __GFP_NORETRY		0x10000u
#define __GFP_MEMALLOC		0x20000u
#define __GFP_COMP		0x40000u
#define __GFP_NOMEMALLOC	0x80000u
#define __GFP_HARDWALL		0x100000u
#define __GFP_THISNODE		0x200000u
#define __GFP_ACCOUNT		0x400000u
#define __GFP_ZEROTAGS		0x800000u

#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)
#define GFP_ATOMIC		(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT		(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN)
#define GFP_NOIO		(__GFP_RECLAIM)
#define GFP_NOFS		(__GFP_RECLAIM | __GFP_IO)
#define GFP_USER		(__GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL)
#define GFP_DMA			__GFP_DMA
#define GFP_DMA32		__GFP_DMA32
#define GFP_HIGHUSER		(GFP_USER | __GFP_HIGHMEM)
#define GFP_HIGHUSER_MOVABLE	(GFP_HIGHUSER | __GFP_MOVABLE)
#define GFP_TRANSHUGE_LIGHT	((GFP_HIGHUSER_MOVABLE | __GFP_COMP | \
				  __GFP_NOMEMALLOC | __GFP_NOWARN) & ~__GFP_RECLAIM)
#define GFP_TRANSHUGE		(GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM)

/*
 * The names of gfp and slab flags (alloc/gfp.c) are a library of their own,
 * alloc_names, which needs nothing else of alloc: libmemcgfs links it alone.
 *
 * gfp_format - the kernel's show_gfp_flags(): composite names first, then
 * single bits, '|'-joined; "none" for 0; bits no name covers as "0x..." at
 * the end.  Returns the length written (snprintf semantics).
 * gfp_format_named - the same, but -EINVAL (nothing written) when a bit has
 * no name.
 */
int gfp_format(char *buf, size_t len, gfp_t gfp);
int gfp_format_named(char *buf, size_t len, gfp_t gfp);
/* gfp_parse - '|'-joined names (any the formatter prints) -> flags; -EINVAL. */
int gfp_parse(const char *s, gfp_t *out);

/* ---- slab flags ---- */
typedef unsigned int slab_flags_t;

#define SLAB_HWCACHE_ALIGN	0x00002000u
#define SLAB_PANIC		0x00040000u
#define SLAB_RECLAIM_ACCOUNT	0x00020000u
#define SLAB_ACCOUNT		0x04000000u
#define SLAB_NO_MERGE		0x01000000u
/* Every flag kmem_cache_create() accepts. */
#define SLAB_FLAGS_PERMITTED	(SLAB_HWCACHE_ALIGN | SLAB_PANIC | \
				 SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT | \
				 SLAB_NO_MERGE)

/* As gfp_format(), gfp_format_named() and gfp_parse(), for slab flags. */
int slab_flags_format(char *buf, size_t len, slab_flags_t flags);
int slab_flags_format_named(char *buf, size_t len, slab_flags_t flags);
int slab_flags_parse(const char *s, slab_flags_t *out);

/* ---- the machine ---- */
#define MAX_PAGE_ORDER		10
#define NR_PAGE_ORDERS		(MAX_PAGE_ORDER + 1)
#define KMALLOC_SHIFT_LOW	3
#define KMALLOC_MIN_SIZE	(1u << KMALLOC_SHIFT_LOW)
#define KMALLOC_MAX_CACHE_SIZE	(2u * alloc_page_size())
/*
 * Index 0 is the zero size, 1 and 2 the 96 and 192 classes, 3.. the powers
 * of two from 8 up to KMALLOC_MAX_CACHE_SIZE (twice the page: 8k with 4 KiB
 * pages, 128k with the largest page, 64 KiB); past that, a size is large.
 */
#define KMALLOC_SHIFT_HIGH_MAX	17
#define NR_KMALLOC_INDEX	(KMALLOC_SHIFT_HIGH_MAX + 1)
#define ALLOC_MAX_CPUS		256
#define ALLOC_MAX_NODES		64

struct alloc_config {
	uint64_t memory;		/* arena bytes; a multiple of the largest block */
	unsigned int page_size;		/* power of two, 4096 by default */
	unsigned int cpus;		/* CPU slots; 0 = online CPUs */
	unsigned int nodes;		/* NUMA nodes, for node= and numa_stat */
	unsigned int cache_line;	/* SLAB_HWCACHE_ALIGN's line */
	unsigned int slub_min_order;	/* slab_min_order= */
	unsigned int slub_max_order;	/* slab_max_order= (PAGE_ALLOC_COSTLY_ORDER) */
	unsigned int slub_min_objects;	/* slab_min_objects=, 0 = 4 * (fls(cpus) + 1) */
	unsigned int trace_entries;	/* trace ring capacity, events */
	bool no_rseq;			/* force the per-CPU lock path */
	/*
	 * Where the kernel cannot register rseq for us (valgrind does not
	 * implement it), run the rseq fast paths anyway as if always on CPU 0
	 * and never preempted.  Only for counting the fast path's
	 * instructions with callgrind in a single-threaded program: nothing
	 * protects the sequences.  Ignored where rseq really works.
	 */
	bool rseq_emulate;
};

/* Defaults: 1 GiB, 4096, online CPUs, 1 node, 64, 0, 3, 0, 65536. */
void alloc_config_defaults(struct alloc_config *cfg);

/*
 * alloc_init - build the machine: reserve the arena (touched lazily), the page
 * table, the kmalloc caches.  Returns 0, -EINVAL for a bad config, -ENOMEM,
 * -EBUSY if a machine already exists.
 */
int alloc_init(const struct alloc_config *cfg);
/* alloc_exit - destroy every cache and unmap the arena.  Live objects die. */
void alloc_exit(void);

unsigned int alloc_page_size(void);
unsigned int alloc_page_shift(void);
unsigned int alloc_nr_cpus(void);
unsigned int alloc_nr_nodes(void);
/* true when the per-CPU fast paths run as restartable sequences. */
bool alloc_uses_rseq(void);
/* a ThreadSanitizer build: its per-CPU paths take the slot locks, never rseq */
bool alloc_built_for_tsan(void);

/*
 * The current CPU slot: the thread's pinned slot if any, else
 * sched_getcpu() % cpus.  alloc_pin_cpu(-1) unpins.  Pinning is per thread.
 */
int alloc_current_cpu(void);
int alloc_pin_cpu(int cpu);

/* ---- struct page ---- */
enum page_kind {
	PAGE_KIND_BUDDY_TAIL = 0,/* inside a free buddy block (a fresh table is all this) */
	PAGE_KIND_FREE,		/* head of a free buddy block */
	PAGE_KIND_TAIL,		/* tail of an allocated compound page */
	PAGE_KIND_SLAB,		/* head of a slab */
	PAGE_KIND_LARGE_KMALLOC,/* head of a large kmalloc */
	PAGE_KIND_PAGES,	/* head of an alloc_pages() block */
};

struct slab;
struct kmem_cache;

/*
 * One per page frame.  The fields after 'kind' belong to whoever allocated
 * the page: memcg_data and lru to the memory controller for
 * PAGE_KIND_PAGES/LARGE_KMALLOC heads (the kernel's page->memcg_data and
 * page->lru), slab to the slab allocator.
 */
struct page {
	uint8_t kind;		/* enum page_kind */
	uint8_t order;		/* of the block this page heads */
	uint8_t type;		/* owner's page type (memcg: anon, file, ...) */
	uint8_t flags;		/* owner's flags */
	uint32_t owner;		/* owner's id (memcg: the task) */
	uintptr_t memcg_data;
	union {
		struct {			/* PAGE_KIND_TAIL */
			struct page *head;
		};
		struct {			/* free buddy block */
			struct page *buddy_next, *buddy_prev;
		};
		struct {			/* PAGE_KIND_PAGES: memcg LRU */
			struct page *lru_next, *lru_prev;
		};
		struct slab *slab;		/* PAGE_KIND_SLAB */
	};
	uint64_t private;
	uint64_t id;			/* owner's allocation id */
	void *task;			/* owner's task */
};

struct page *virt_to_page(const void *addr);	/* NULL outside the arena */
struct page *compound_head(struct page *page);
void *page_address(const struct page *page);
unsigned long page_to_pfn(const struct page *page);
struct page *pfn_to_page(unsigned long pfn);
int page_to_nid(const struct page *page);
/* Is addr inside the arena? */
bool alloc_in_arena(const void *addr);

/*
 * alloc_pages - 2^order contiguous pages from the buddy allocator, head page
 * marked PAGE_KIND_PAGES.  __GFP_ZERO zeroes them.  Traced as mm_page_alloc.
 * NULL when order > MAX_PAGE_ORDER or the arena has no such block.
 * No accounting: memcg charges typed pages itself.
 */
struct page *alloc_pages(gfp_t gfp, unsigned int order);
void __free_pages(struct page *page, unsigned int order);

/* ---- slab ---- */
/*
 * kmem_cache_create - a cache of objects of 'size' bytes.  align 0 means the
 * minimum (8); SLAB_HWCACHE_ALIGN aligns to the cache line as the kernel's
 * calculate_alignment() does.  Flags outside SLAB_FLAGS_PERMITTED, size 0
 * or above KMALLOC_MAX_SIZE, an align that is not a power of two, or an
 * empty name fail.  The name is copied.  Caches are never merged.
 * Returns NULL and sets *err (if given) to -EINVAL, -EEXIST (the name is
 * taken) or -ENOMEM.  SLAB_PANIC does not panic here: the caller reports it.
 */
struct kmem_cache *kmem_cache_create_err(const char *name, unsigned int size,
					 unsigned int align, slab_flags_t flags,
					 int *err);
struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags);
/* kmem_cache_destroy - 0, or -EBUSY (and nothing changes) while objects live. */
int kmem_cache_destroy(struct kmem_cache *s);
struct kmem_cache *kmem_cache_find(const char *name);

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp);
void kmem_cache_free(struct kmem_cache *s, void *obj);

/* Geometry of a cache, as slabinfo and kmem_cache_create's reply show it. */
struct kmem_cache_info {
	const char *name;
	unsigned int object_size;	/* requested size */
	unsigned int size;		/* stride */
	unsigned int align;
	unsigned int offset;		/* free pointer offset */
	unsigned int order;
	unsigned int objects;		/* per slab */
	unsigned int min_partial;
	unsigned int cpu_partial;	/* objects */
	unsigned int cpu_partial_slabs;
	slab_flags_t flags;
	uid_t owner;			/* creator, for memcgfs's EPERM rule */
};
void kmem_cache_info(const struct kmem_cache *s, struct kmem_cache_info *info);
const char *kmem_cache_name(const struct kmem_cache *s);
void kmem_cache_set_owner(struct kmem_cache *s, uid_t owner);

/* The kernel's calculate_order(): the slab order for objects of 'size'. */
unsigned int calculate_order(unsigned int size, unsigned int nr_cpus,
			     unsigned int min_order, unsigned int max_order,
			     unsigned int min_objects);
/* The kernel's calculate_alignment(). */
unsigned int calculate_alignment(slab_flags_t flags, unsigned int align,
				 unsigned int size, unsigned int cache_line);

/* ---- kmalloc ---- */
enum kmalloc_cache_type { KMALLOC_NORMAL, KMALLOC_RECLAIM, KMALLOC_CGROUP,
			  NR_KMALLOC_TYPES };

unsigned int kmalloc_index(size_t size);	/* 0 for 0, >= NR_KMALLOC_INDEX for large */
unsigned int kmalloc_size(unsigned int index);	/* object size of a class (0: none here) */
enum kmalloc_cache_type kmalloc_type(gfp_t gfp);
struct kmem_cache *kmalloc_cache(enum kmalloc_cache_type type, unsigned int index);
size_t kmalloc_size_roundup(size_t size);
#define KMALLOC_MAX_SIZE	((size_t)alloc_page_size() << MAX_PAGE_ORDER)

void *kmalloc(size_t size, gfp_t gfp);
void *kzalloc(size_t size, gfp_t gfp);
void kfree(const void *obj);
size_t ksize(const void *obj);
/* kmalloc(0) returns ZERO_SIZE_PTR; kfree() of it or of NULL does nothing. */
#define ZERO_SIZE_PTR		((void *)16)
#define ZERO_OR_NULL_PTR(x)	((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)

/*
 * What an address is, for memcgfs's handle validation: the cache of a live
 * or free slab object that starts exactly at addr, a large kmalloc block
 * head, or neither.  Returns the cache (and whether the object is allocated)
 * for slab objects, NULL otherwise; *large is set for a large kmalloc head.
 */
struct kmem_cache *alloc_object_cache(const void *addr, bool *large);

/* ---- who is asking: the trace's COMM-PID and call_site ---- */
struct alloc_ctx {
	int pid;		/* requesting thread id */
	char comm[16];
	const char *site;	/* client's site=NAME for this request, or NULL */
};
/* Set the calling thread's context (NULL: the daemon thread itself). */
void alloc_set_ctx(const struct alloc_ctx *ctx);
const struct alloc_ctx *alloc_get_ctx(void);

/* ---- slabinfo and trace ---- */
/*
 * slabinfo_format - /proc/slabinfo version 2.1, every cache, newest first.
 * Writes at most len bytes (NUL-terminated); returns the full length, so a
 * caller can retry with a bigger buffer.
 */
size_t slabinfo_format(char *buf, size_t len);

enum trace_event_type {
	TRACE_KMALLOC, TRACE_KMEM_CACHE_ALLOC, TRACE_KFREE, TRACE_KMEM_CACHE_FREE,
	TRACE_MM_PAGE_ALLOC, TRACE_MM_PAGE_FREE, NR_TRACE_EVENTS
};
void trace_set_on(bool on);
bool trace_is_on(void);

/* A reader's position in the trace ring: readers are independent. */
struct trace_cursor {
	uint64_t seq;
};
/* Start at the oldest event still in the ring (or at the newest: from_now). */
void trace_cursor_init(struct trace_cursor *cur, bool from_now);
/*
 * trace_read - format the next event at cur as one trace_pipe line.
 * Returns the line length (> 0), 0 when no event is pending, or the line
 * "CPU:N [LOST M EVENTS]" when the reader fell behind (its cursor then
 * jumps to the oldest event still held).
 */
int trace_read(struct trace_cursor *cur, char *buf, size_t len);
/* Sequence number the next event will get (for waiting readers). */
uint64_t trace_head(void);
/* Called (from the recording thread) after each event; may be NULL. */
void trace_set_notify(void (*fn)(void *), void *arg);

/* Record events on behalf of memcg/fs (e.g. frees done by reclaim). */
void trace_kfree(uintptr_t call_site, const void *ptr);

/* ---- statistics and invariants ---- */
struct alloc_stats {
	unsigned long pages_total;
	unsigned long pages_free;
	unsigned long pages_slab;
	unsigned long pages_large_kmalloc;
	unsigned long pages_alloc;	/* alloc_pages() */
	unsigned long nr_caches;
	unsigned long trace_lost;
};
void alloc_stats(struct alloc_stats *st);

/*
 * alloc_check - the whole machine's invariants: buddy lists and page kinds
 * agree, no page both free and used, every slab's object counts and
 * freelists consistent (no duplicates, in bounds, on stride), node counters
 * equal to the slabs found.  Locks everything while it runs.  Returns 0, or
 * -EUCLEAN with the first violation described in msg.
 */
int alloc_check(char *msg, size_t len);

/*
 * kmem_cache_shrink - flush every CPU slab and partial list of the cache and
 * free its empty slabs.  Returns the number of slabs freed.
 */
int kmem_cache_shrink(struct kmem_cache *s);
/* Shrink every cache. */
void kmem_cache_shrink_all(void);

/* ---- per-CPU data of other modules (memcg's stocks) ----
 *
 * alloc owns the machine's CPUs.  Per-CPU data elsewhere follows alloc's
 * rules: a slot's lock, taken with alloc_cpu_lock() (which fences that
 * CPU's restartable sequences), owns the slot; a thread for which
 * alloc_thread_uses_rseq() is true may update a slot of the CPU it runs on
 * in a restartable sequence written with ALLOC_RSEQ_CS_BEGIN/ABORT (x86-64),
 * bailing out when the slot's lock is held.  The sequence needs the operand
 * [rseq_off] = alloc_rseq_offset, a label 'abort' (retry) and a commit
 * store just before "2:"; it reads its CPU (%%fs:4(%[rseq_off])) after
 * "1:", inside the section, so that the number holds until the commit.
 */
extern ptrdiff_t alloc_rseq_offset;
/*
 * ALLOC_HOT(key): a fast path's function, in a section of its own that the
 * linker's default script sorts by name (.text.sorted.*) and places after
 * the cold, startup and hot code; ALLOC_HOT_FIRST, on kmalloc, starts the
 * group on a page.  So the fast paths sit together in one page, in the order
 * of their keys, at the same offsets in every build, whatever the size of
 * the code around them: a change elsewhere does not move them.  Aligning
 * each entry point to a cache line was not enough: a change in memcg/stat.c
 * moved kfree and kmalloc 64 bytes on, and the separate obj_stock build's
 * accounted pair went from 21 ns to 41 at equal instructions (an earlier
 * build had moved bench_alloc's 8-byte pair by 1.5x the same way).
 * Benchmark loops use it too (keys 30..).  The sorting is GNU ld's default
 * script (binutils 2.35 and later); another linker may place the sections
 * apart, which changes only how steady the benchmarks' times are.
 */
#define ALLOC_HOT(key)	__attribute__((section(".text.sorted.memcgfs." key), aligned(64), noinline))
#define ALLOC_HOT_FIRST(key) \
	__attribute__((section(".text.sorted.memcgfs." key), aligned(4096), noinline))

/*
 * The fast paths' thread-local words are read as one %fs-relative operand:
 * local-exec TLS, which holds because alloc, memcg and fs are only ever
 * linked into executables (static libraries; libmemcgfs, the one shared
 * library, links none of them).  The default model for code built as PIC
 * (initial-exec after the linker's relaxation) costs an instruction more
 * on every kmalloc and kfree.
 */
#define ALLOC_TLS_LE	__attribute__((tls_model("local-exec")))
extern __thread uint32_t alloc_thread_gen ALLOC_TLS_LE;
extern uint32_t alloc_rseq_gen;

static inline bool alloc_thread_uses_rseq(void)
{
	return alloc_thread_gen == alloc_rseq_gen;
}

/* This thread's CPU as the kernel last wrote it (rseq threads only). */
static inline unsigned int alloc_rseq_cpu(void)
{
#if defined(__x86_64__) && defined(__SEG_FS)
	return *(volatile const uint32_t __seg_fs *)(uintptr_t)(alloc_rseq_offset + 4);
#else
	return 0;
#endif
}

/* Let the calling thread use rseq from now on if it may (slow paths call it). */
void alloc_thread_rseq_refresh(void);
/* The exact current slot (pinned, rseq or sched_getcpu), for slow paths. */
unsigned int alloc_slot_cpu(void);
/* Take and release a per-CPU slot's lock (spins, then yields). */
void alloc_cpu_lock(_Atomic uint32_t *lock, unsigned int cpu);
bool alloc_cpu_trylock(_Atomic uint32_t *lock, unsigned int cpu);
void alloc_cpu_unlock(_Atomic uint32_t *lock);

/* struct rseq_cs at 3: (version, flags, start 1:, length to 2:, abort 4:) */
#define ALLOC_RSEQ_CS_DESC						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad 1f, (2f - 1f), 4f\n\t"					\
	".popsection\n\t"

#define ALLOC_RSEQ_CS_BEGIN						\
	ALLOC_RSEQ_CS_DESC						\
	"leaq 3b(%%rip), %%rax\n\t"					\
	"movq %%rax, %%fs:8(%[rseq_off])\n\t"				\
	"1:\n\t"

/*
 * The same, for a sequence short of registers: [rseq_off] is the memory
 * operand "m"(alloc_rseq_offset), loaded into the scratch register SCR
 * (a clobber of the sequence, named as in "rdx") before the section starts;
 * the section reads its CPU with %%fs:4(%%SCR) and may then use SCR for
 * itself.
 */
#define ALLOC_RSEQ_CS_BEGIN_IN(SCR)					\
	ALLOC_RSEQ_CS_DESC						\
	"movq %[rseq_off], %%" SCR "\n\t"					\
	"leaq 3b(%%rip), %%rax\n\t"					\
	"movq %%rax, %%fs:8(%%" SCR ")\n\t"				\
	"1:\n\t"

#define ALLOC_RSEQ_CS_ABORT						\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n\t"						\
	"4:\n\t"							\
	"jmp %l[abort]\n\t"						\
	".popsection\n\t"

/* ---- accounting hooks (implemented by memcg, or alloc/noacct.c) ---- */
/*
 * Per-object metadata of a slab: one slot per object, as the kernel's
 * slabobj_ext.  alloc allocates the vector when the slab's first object is
 * charged (the kernel: at once for SLAB_ACCOUNT caches) and frees it with
 * the slab.
 */
struct obj_cgroup;
struct slabobj_ext {
	struct obj_cgroup *objcg;
};

/* The objcg recorded for a slab object or a large kmalloc; NULL if none. */
struct obj_cgroup *alloc_obj_objcg(const void *obj);

/*
 * The arena has no free block of an order: the handler (memcg's global
 * reclaim and OOM) may free memory and return true to have the allocation
 * retried.  Called without alloc's locks, never recursively.
 */
void alloc_set_oom_handler(bool (*fn)(unsigned int order, gfp_t gfp));

/*
 * Set once a non-root memcg exists; the hooks are skipped until then.  The
 * kernel's static key; here a flag written under the cgroup tree's lock and
 * read on every allocation without one, hence memcg_kmem_online().
 */
extern bool memcg_kmem_online_key;

static inline bool memcg_kmem_online(void)
{
	return __atomic_load_n(&memcg_kmem_online_key, __ATOMIC_RELAXED);
}

/*
 * memcg_current_objcg - where the calling thread's task keeps its cached
 * objcg (seed 003), set by memcg whenever its current task or remote
 * charging changes: 0 there is a task in the root cgroup (or none), whose
 * accounted allocations charge nothing, so alloc skips the hook at once,
 * as the kernel's current_obj_cgroup() answers NULL inline; anything else
 * (an objcg, the stale flag, remote charging) calls it.
 */
extern __thread const uintptr_t *memcg_current_objcg ALLOC_TLS_LE;

/* The calling thread's objcg word: 0 for a root task (nothing to charge). */
static inline uintptr_t memcg_current_word(void)
{
	return __atomic_load_n(memcg_current_objcg, __ATOMIC_ACQUIRE);
}

/*
 * __memcg_slab_post_alloc_hook - charge one object of 'full_size' bytes
 * (s->size + sizeof(pointer)) to the current task's objcg and record it in
 * *ext.  'cur' is memcg_current_word() as alloc read it: alloc calls only
 * when it is not 0 (a root task is not charged), and only for accounted
 * allocations (__GFP_ACCOUNT or SLAB_ACCOUNT).  ext is NULL while the slab has no
 * obj_exts vector: the hook answers 1 if the object is to be charged (alloc
 * then makes the vector and calls again), so allocations that are not
 * charged never cost a vector.  Returns 0, 1, or -ENOMEM when the charge
 * fails: alloc then frees the object and the allocation returns NULL.
 */
int __memcg_slab_post_alloc_hook(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
				 unsigned int full_size, bool reclaimable, int nid);
/*
 * __memcg_slab_charge - the accounted allocation's fast path: the same
 * charge as __memcg_slab_post_alloc_hook for an object whose slab has its
 * vector (ext is its slot, never NULL), as alloc's tail call.  'charge' is
 * the cache's full size ORed with SLAB_CHARGE_RECLAIMABLE for a
 * SLAB_RECLAIM_ACCOUNT cache.  Returns obj, charged, or NULL when the
 * charge failed: the hook has then given the object back through
 * slab_alloc_charge_failed().
 */
#define SLAB_CHARGE_RECLAIMABLE	(1u << 31)
void *__memcg_slab_charge(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
			  uint32_t charge, int nid, void *obj);
/* alloc's: frees an object whose charge failed; returns NULL. */
void *slab_alloc_charge_failed(void *obj);
/*
 * __memcg_slab_free_hook - uncharge an object of objcg (alloc has taken it
 * out of the object's obj_exts slot, and may already have freed the object);
 * 'charge' is its cache's charge word, as for __memcg_slab_charge.
 */
void __memcg_slab_free_hook(struct obj_cgroup *objcg, uint32_t charge, int nid);
/*
 * __memcg_kmem_charge_page / __memcg_kmem_uncharge_page - a large kmalloc's
 * pages (order 'order') charged to the current objcg as kmem and counted as
 * slab_unreclaimable; page->memcg_data records it.  Charge returns 0 or
 * -ENOMEM (alloc then frees the pages and fails).
 */
int __memcg_kmem_charge_page(struct page *page, gfp_t gfp, unsigned int order);
void __memcg_kmem_uncharge_page(struct page *page, unsigned int order);

#endif /* MEMCGFS_ALLOC_H */
