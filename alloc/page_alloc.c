/* SPDX-License-Identifier: MIT */
/*
 * page_alloc.c - the machine: arena, struct page table, buddy allocator,
 * CPU slots and restartable-sequence support.
 *
 * The arena is reserved with one anonymous mmap (MAP_NORESERVE, touched
 * lazily) and aligned to the largest buddy block, so a block's buddy is found
 * by flipping one bit of its pfn.  Free blocks sit on per-order lists under
 * zone.lock; every page of a free block is PAGE_KIND_FREE (head) or
 * PAGE_KIND_BUDDY_TAIL, so a stale address never looks allocated.
 */
#include "internal.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ALLOC_TSAN 1	/* clang's spelling of __SANITIZE_THREAD__ */
#endif
#endif
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

struct machine machine;
bool machine_up;
__thread int alloc_pinned_cpu = -1;
__thread uint32_t alloc_thread_gen;
uint32_t alloc_rseq_gen = UINT32_MAX;
static uint32_t rseq_generation;
ptrdiff_t alloc_rseq_offset;

void spin_lock_slow(_Atomic uint32_t *l)
{
	for (unsigned int spins = 0;; spins++) {
		if (atomic_load_explicit(l, memory_order_relaxed) == 0 &&
		    spin_trylock(l))
			return;
		if (spins < 64)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

void alloc_config_defaults(struct alloc_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->memory = 1ull << 30;
	cfg->page_size = 4096;
	cfg->cpus = 0;
	cfg->nodes = 1;
	cfg->cache_line = 64;
	cfg->slub_min_order = 0;
	cfg->slub_max_order = 3;
	cfg->slub_min_objects = 0;
	cfg->trace_entries = 65536;
}

unsigned int alloc_page_size(void) { return machine.page_size; }
unsigned int alloc_page_shift(void) { return machine.page_shift; }
unsigned int alloc_nr_cpus(void) { return machine.cpus; }
unsigned int alloc_nr_nodes(void) { return machine.nodes; }
bool alloc_uses_rseq(void) { return machine.rseq; }

bool alloc_built_for_tsan(void)
{
#if defined(__SANITIZE_THREAD__) || defined(ALLOC_TSAN)
	return true;
#else
	return false;
#endif
}

static bool is_pow2(unsigned long x) { return x && !(x & (x - 1)); }

/* How many CPU ids the kernel may hand out: /sys/.../possible is "0-N". */
static unsigned int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int lo = 1, hi = 0;
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%u-%u", &lo, &hi);
	fclose(f);
	if (n == 1)
		hi = lo;
	return n >= 1 && lo == 0 ? hi + 1 : 0;
}

/*
 * The fast paths run as restartable sequences only when every CPU the
 * kernel can run us on is exactly one CPU slot, glibc registered rseq for
 * our threads with the signature our abort handlers carry, and the kernel
 * lets a lock holder on another CPU fence that CPU's sequences.
 */
static bool rseq_usable(unsigned int cpus)
{
#if defined(__x86_64__)
	if (__rseq_size < 20)
		return false;
	if ((unsigned int)get_nprocs_conf() != cpus || possible_cpus() != cpus)
		return false;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
		    0, 0) != 0)
		return false;
	alloc_rseq_offset = __rseq_offset;
	return rseq_area()->cpu_id < cpus;
#else
	(void)cpus;
	return false;
#endif
}

void rseq_fence_cpu(unsigned int cpu)
{
	/*
	 * A section that started on 'cpu' before our lock became visible is
	 * aborted if we run on that CPU now (it was preempted to let us run);
	 * otherwise an IPI restarts it.  Either way, once this returns, every
	 * section on 'cpu' sees the lock.
	 */
	if (READ_ONCE(rseq_area()->cpu_id) == cpu)
		return;
	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
		MEMBARRIER_CMD_FLAG_CPU, (int)cpu);
}

int alloc_current_cpu(void)
{
	int pin = alloc_pinned_cpu;

	if (pin >= 0)
		return pin;
	if (machine.rseq)
		return (int)(READ_ONCE(rseq_area()->cpu_id) % machine.cpus);
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (int)((unsigned int)cpu % machine.cpus);
}

__thread unsigned int alloc_cpu_hint;

unsigned int alloc_refresh_cpu_hint(void)
{
	int cpu = sched_getcpu();

	alloc_cpu_hint = cpu < 0 ? 0 : (unsigned int)cpu % machine.cpus;
	return alloc_cpu_hint;
}

void alloc_thread_rseq_refresh(void)
{
	thread_rseq_refresh();
}

unsigned int alloc_slot_cpu(void)
{
	return slot_cpu();
}

void alloc_cpu_lock(_Atomic uint32_t *lock, unsigned int cpu)
{
	spin_lock(lock);
	if (machine.rseq)
		rseq_fence_cpu(cpu);
}

bool alloc_cpu_trylock(_Atomic uint32_t *lock, unsigned int cpu)
{
	if (!spin_trylock(lock))
		return false;
	if (machine.rseq)
		rseq_fence_cpu(cpu);
	return true;
}

void alloc_cpu_unlock(_Atomic uint32_t *lock)
{
	spin_unlock(lock);
}

int alloc_pin_cpu(int cpu)
{
	if (cpu < -1 || (machine_up && cpu >= (int)machine.cpus))
		return -EINVAL;
	alloc_pinned_cpu = cpu;
	alloc_cpu_hint = cpu >= 0 ? (unsigned int)cpu : 0;
	alloc_thread_gen = 0;	/* back through a slow path, which decides */
	return 0;
}

/* ---- struct page ---- */
bool alloc_in_arena(const void *addr)
{
	return (uintptr_t)addr - (uintptr_t)machine.base < machine.size;
}

struct page *virt_to_page(const void *addr)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)machine.base;

	if (off >= machine.size)
		return NULL;
	return &machine.pages[off >> machine.page_shift];
}

struct page *compound_head(struct page *page)
{
	return page->kind == PAGE_KIND_TAIL ? page->head : page;
}

unsigned long page_to_pfn(const struct page *page)
{
	return (unsigned long)(page - machine.pages);
}

struct page *pfn_to_page(unsigned long pfn)
{
	return pfn < machine.nr_pages ? &machine.pages[pfn] : NULL;
}

void *page_address(const struct page *page)
{
	return machine.base + (page_to_pfn(page) << machine.page_shift);
}

int page_to_nid(const struct page *page)
{
	return (int)(page_to_pfn(page) / machine.pages_per_node);
}

/* ---- buddy allocator ---- */
static void free_list_add(struct zone *z, struct page *page, unsigned int order)
{
	page->kind = PAGE_KIND_FREE;
	page->order = (uint8_t)order;
	page->buddy_prev = NULL;
	page->buddy_next = z->free_area[order];
	if (page->buddy_next)
		page->buddy_next->buddy_prev = page;
	z->free_area[order] = page;
	z->nr_free[order]++;
}

static void free_list_del(struct zone *z, struct page *page, unsigned int order)
{
	if (page->buddy_prev)
		page->buddy_prev->buddy_next = page->buddy_next;
	else
		z->free_area[order] = page->buddy_next;
	if (page->buddy_next)
		page->buddy_next->buddy_prev = page->buddy_prev;
	page->buddy_next = page->buddy_prev = NULL;
	z->nr_free[order]--;
}

static void mark_pages(struct page *head, unsigned int order, enum page_kind tail_kind)
{
	unsigned long n = 1ul << order;

	for (unsigned long i = 1; i < n; i++) {
		head[i].kind = (uint8_t)tail_kind;
		head[i].head = tail_kind == PAGE_KIND_TAIL ? head : NULL;
	}
}

static bool (*oom_handler)(unsigned int order, gfp_t gfp);
static __thread bool in_oom_handler;

void alloc_set_oom_handler(bool (*fn)(unsigned int order, gfp_t gfp))
{
	oom_handler = fn;
}

struct page *__alloc_pages(gfp_t gfp, unsigned int order, enum page_kind kind)
{
	struct zone *z = &machine.zone;
	struct page *page = NULL;
	unsigned int o;
	int tries = 0;

	if (order > MAX_PAGE_ORDER)
		return NULL;
	/* fail_page_alloc (should_fail_alloc_page): before any reclaim */
	if (!(gfp & __GFP_NOFAIL) && unlikely(fault_should_fail(FAULT_PAGE_ALLOC)))
		return NULL;
retry:
	pthread_mutex_lock(&z->lock);
	for (o = order; o <= MAX_PAGE_ORDER; o++) {
		if (z->free_area[o]) {
			page = z->free_area[o];
			break;
		}
	}
	if (!page) {
		pthread_mutex_unlock(&z->lock);
		/*
		 * Out of memory: reclaim and OOM (memcg), unless the caller
		 * cannot wait or this thread is already the one reclaiming.
		 * __GFP_NORETRY slab attempts fall back to a smaller order.
		 */
		if (oom_handler && !in_oom_handler && !(gfp & __GFP_NORETRY) &&
		    (gfp & __GFP_DIRECT_RECLAIM) && tries++ < 16) {
			bool progress;

			in_oom_handler = true;
			progress = oom_handler(order, gfp);
			in_oom_handler = false;
			if (progress)
				goto retry;
		}
		return NULL;
	}
	free_list_del(z, page, o);
	while (o > order) {		/* split, keeping the lower half */
		o--;
		free_list_add(z, page + (1ul << o), o);
	}
	z->free_pages -= 1ul << order;
	if (kind == PAGE_KIND_SLAB)
		z->slab_pages += 1ul << order;
	else if (kind == PAGE_KIND_LARGE_KMALLOC)
		z->large_pages += 1ul << order;
	else
		z->alloc_pages += 1ul << order;
	page->kind = (uint8_t)kind;
	page->order = (uint8_t)order;
	page->type = 0;
	WRITE_ONCE(page->flags, 0);	/* memcg's bits are atomic */
	page->owner = 0;
	page->memcg_data = 0;
	page->lru_next = page->lru_prev = NULL;
	page->private = 0;
	WRITE_ONCE(page->id, 0);	/* memcg reads it for stale handles */
	page->task = NULL;
	mark_pages(page, order, PAGE_KIND_TAIL);
	pthread_mutex_unlock(&z->lock);

	if (gfp & __GFP_ZERO)
		memset(page_address(page), 0, (size_t)machine.page_size << order);
	if (unlikely(READ_ONCE(trace_on)))
		trace_mm_page_alloc(page, order, gfp);
	return page;
}

void __free_pages_kind(struct page *page, unsigned int order)
{
	struct zone *z = &machine.zone;
	unsigned long pfn = page_to_pfn(page);
	enum page_kind kind = page->kind;

	if (unlikely(READ_ONCE(trace_on)))
		trace_mm_page_free(page, order);
	pthread_mutex_lock(&z->lock);
	if (kind == PAGE_KIND_SLAB)
		z->slab_pages -= 1ul << order;
	else if (kind == PAGE_KIND_LARGE_KMALLOC)
		z->large_pages -= 1ul << order;
	else
		z->alloc_pages -= 1ul << order;
	z->free_pages += 1ul << order;
	mark_pages(page, order, PAGE_KIND_BUDDY_TAIL);
	page->kind = PAGE_KIND_BUDDY_TAIL;	/* free_list_add() marks the final head */
	page->memcg_data = 0;
	WRITE_ONCE(page->id, 0);	/* memcg reads it for stale handles */
	page->task = NULL;
	while (order < MAX_PAGE_ORDER) {
		unsigned long buddy_pfn = pfn ^ (1ul << order);
		struct page *buddy;

		if (buddy_pfn >= machine.nr_pages)
			break;
		buddy = &machine.pages[buddy_pfn];
		if (buddy->kind != PAGE_KIND_FREE || buddy->order != order)
			break;
		free_list_del(z, buddy, order);
		buddy->kind = PAGE_KIND_BUDDY_TAIL;
		pfn &= buddy_pfn;
		order++;
	}
	page = &machine.pages[pfn];
	if (pfn != page_to_pfn(page))
		abort();
	free_list_add(z, page, order);
	pthread_mutex_unlock(&z->lock);
}

struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	return __alloc_pages(gfp, order, PAGE_KIND_PAGES);
}

void __free_pages(struct page *page, unsigned int order)
{
	if (!page || page->kind != PAGE_KIND_PAGES || page->order != order)
		return;		/* not ours to free: a caller bug, ignored */
	__free_pages_kind(page, order);
}

/* ---- init / exit ---- */
static int check_config(const struct alloc_config *cfg, unsigned int cpus)
{
	uint64_t block;

	if (!is_pow2(cfg->page_size) || cfg->page_size < 4096 || cfg->page_size > 65536)
		return -EINVAL;
	block = (uint64_t)cfg->page_size << MAX_PAGE_ORDER;
	if (cfg->memory < block || cfg->memory % block)
		return -EINVAL;
	if (cpus < 1 || cpus > ALLOC_MAX_CPUS)
		return -EINVAL;
	if (cfg->nodes < 1 || cfg->nodes > ALLOC_MAX_NODES ||
	    (cfg->memory / block) % cfg->nodes)
		return -EINVAL;
	if (!is_pow2(cfg->cache_line) || cfg->cache_line < 8 || cfg->cache_line > 4096)
		return -EINVAL;
	if (cfg->slub_max_order > MAX_PAGE_ORDER ||
	    cfg->slub_min_order > cfg->slub_max_order ||
	    cfg->slub_min_objects > MAX_OBJS_PER_PAGE)
		return -EINVAL;
	if (cfg->trace_entries < 16 || cfg->trace_entries > (1u << 24))
		return -EINVAL;
	return 0;
}

int alloc_init(const struct alloc_config *cfg)
{
	struct alloc_config def;
	unsigned int cpus;
	uint64_t block;
	int ret;

	if (machine_up)
		return -EBUSY;
	if (!cfg) {
		alloc_config_defaults(&def);
		cfg = &def;
	}
	/*
	 * The default is every CPU id the kernel may hand out (nr_cpu_ids),
	 * not the online ones: with one slot per id the fast paths can be
	 * restartable sequences (rseq_usable()).
	 */
	cpus = cfg->cpus ? cfg->cpus : possible_cpus();
	if (!cpus)
		cpus = (unsigned int)get_nprocs_conf();
	ret = check_config(cfg, cpus);
	if (ret)
		return ret;

	memset(&machine, 0, sizeof(machine));
	machine.page_size = cfg->page_size;
	machine.page_shift = ilog2_u(cfg->page_size);
	machine.kmalloc_max_cache = 2 * (size_t)cfg->page_size;
	machine.size = cfg->memory;
	machine.nr_pages = cfg->memory >> machine.page_shift;
	machine.cpus = cpus;
	machine.nodes = cfg->nodes;
	machine.pages_per_node = machine.nr_pages / cfg->nodes;
	machine.cache_line = cfg->cache_line;
	machine.slub_min_order = cfg->slub_min_order;
	machine.slub_max_order = cfg->slub_max_order;
	machine.slub_min_objects = cfg->slub_min_objects;
	clock_gettime(CLOCK_MONOTONIC, &machine.boot);

	block = (uint64_t)cfg->page_size << MAX_PAGE_ORDER;
	machine.map_len = cfg->memory + block;
	machine.map = mmap(NULL, machine.map_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (machine.map == MAP_FAILED)
		return -ENOMEM;
	/* a pending run's word keeps an object's address in 48 bits (internal.h) */
	if (((uintptr_t)machine.map + machine.map_len) >> PEND_SHIFT) {
		munmap(machine.map, machine.map_len);
		return -ENOMEM;
	}
	machine.base = (char *)ALIGN((uintptr_t)machine.map, (uintptr_t)block);

	machine.table_len = ALIGN(machine.nr_pages * sizeof(struct page), (size_t)4096);
	machine.pages = mmap(NULL, machine.table_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	machine.slab_of_len = ALIGN(machine.nr_pages * sizeof(struct slab *), (size_t)4096);
	machine.slab_of = mmap(NULL, machine.slab_of_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	machine.slab_table_len = ALIGN(machine.nr_pages * sizeof(struct slab), (size_t)4096);
	machine.slabs = mmap(NULL, machine.slab_table_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (machine.pages == MAP_FAILED || machine.slabs == MAP_FAILED ||
	    machine.slab_of == MAP_FAILED) {
		ret = -ENOMEM;
		goto out_unmap;
	}

	pthread_mutex_init(&machine.zone.lock, NULL);
	for (unsigned long pfn = 0; pfn < machine.nr_pages; pfn += 1ul << MAX_PAGE_ORDER) {
		/* the fresh table already says BUDDY_TAIL everywhere else */
		free_list_add(&machine.zone, &machine.pages[pfn], MAX_PAGE_ORDER);
	}
	machine.zone.free_pages = machine.nr_pages;

	bool no_rseq = cfg->no_rseq;
#if defined(__SANITIZE_THREAD__) || defined(ALLOC_TSAN)
	/*
	 * ThreadSanitizer cannot follow a restartable sequence (a plain store
	 * the kernel may abort, ordered by membarrier and preemption, not by
	 * any instruction it sees): under TSan every per-CPU access takes the
	 * slot's lock, the path no_rseq forces.
	 */
	no_rseq = true;
#endif
	machine.rseq = !no_rseq && rseq_usable(cpus);
#if defined(__x86_64__)
	if (!machine.rseq && !no_rseq && cfg->rseq_emulate) {
		/* glibc's area exists in every thread's TCB, registered or not */
		alloc_rseq_offset = __rseq_offset;
		if ((int32_t)rseq_area()->cpu_id < 0) {
			rseq_area()->cpu_id_start = 0;
			rseq_area()->cpu_id = 0;
			machine.rseq = true;
		}
	}
#endif

	/* odd and never 0, so a thread's zeroed TLS never matches */
	rseq_generation += 2;
	alloc_rseq_gen = machine.rseq ? (rseq_generation | 1) : UINT32_MAX;

	ret = trace_init(cfg->trace_entries);
	if (ret)
		goto out_unmap;
	machine_up = true;
	fault_set_arm_hook(slab_update_rare);
	slab_update_rare();
	ret = kmalloc_init();
	if (ret) {
		machine_up = false;
		fault_set_arm_hook(NULL);
		trace_exit();
		goto out_unmap;
	}
	return 0;

out_unmap:
	if (machine.pages && machine.pages != MAP_FAILED)
		munmap(machine.pages, machine.table_len);
	if (machine.slabs && machine.slabs != MAP_FAILED)
		munmap(machine.slabs, machine.slab_table_len);
	if (machine.slab_of && machine.slab_of != MAP_FAILED)
		munmap(machine.slab_of, machine.slab_of_len);
	munmap(machine.map, machine.map_len);
	memset(&machine, 0, sizeof(machine));
	return ret;
}

void alloc_exit(void)
{
	struct kmem_cache *s, *next;

	if (!machine_up)
		return;
	pthread_mutex_lock(&slab_mutex);
	for (s = slab_caches; s; s = next) {
		next = s->next;
		kmem_cache_free_struct(s);
	}
	slab_caches = NULL;
	pthread_mutex_unlock(&slab_mutex);
	kmem_cache_free_spares();
	kmalloc_exit();
	fault_set_arm_hook(NULL);
	trace_exit();
	munmap(machine.pages, machine.table_len);
	munmap(machine.slabs, machine.slab_table_len);
	munmap(machine.slab_of, machine.slab_of_len);
	munmap(machine.map, machine.map_len);
	pthread_mutex_destroy(&machine.zone.lock);
	memset(&machine, 0, sizeof(machine));
	alloc_rseq_gen = UINT32_MAX;
	machine_up = false;
}

void alloc_stats(struct alloc_stats *st)
{
	struct zone *z = &machine.zone;

	memset(st, 0, sizeof(*st));
	if (!machine_up)
		return;
	pthread_mutex_lock(&z->lock);
	st->pages_total = machine.nr_pages;
	st->pages_free = z->free_pages;
	st->pages_slab = z->slab_pages;
	st->pages_large_kmalloc = z->large_pages;
	st->pages_alloc = z->alloc_pages;
	pthread_mutex_unlock(&z->lock);
	pthread_mutex_lock(&slab_mutex);
	for (struct kmem_cache *s = slab_caches; s; s = s->next)
		st->nr_caches++;
	pthread_mutex_unlock(&slab_mutex);
}
