/* SPDX-License-Identifier: MIT */
/*
 * slub.c - kmem_cache: the kernel's SLUB in user space.
 *
 * Per CPU slot and cache a struct kmem_cache_cpu holds the CPU slab's
 * lockless freelist, the CPU slab and the CPU-partial list; per node a
 * partial list; full slabs are on no list.  Objects freed on the CPU that
 * owns their slab go to the CPU freelist; others go to the slab's own
 * freelist (__slab_free), as in SLUB.
 *
 * Fast paths.  With rseq (see page_alloc.c: one slot per real CPU), the pop
 * and the push of the CPU freelist are restartable sequences: no atomic
 * instruction, like this_cpu_cmpxchg in the kernel.  A sequence bails out to
 * the slow path when the slot's lock is held.  Everything else that touches
 * a slot (the slow paths, pinned threads, flushes) takes the slot's lock and
 * then fences that CPU's sequences (rseq_fence_cpu), so the lock holder owns
 * the slot like a kernel local_lock holder with preemption off.  Without
 * rseq every access takes the lock.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>

pthread_mutex_t slab_mutex = PTHREAD_MUTEX_INITIALIZER;
/*
 * Held for reading from a slab's creation until it is installed somewhere,
 * and while one is discarded; alloc_check() holds it for writing, so it never
 * sees a slab half made or half gone.  Slow paths only.
 */
pthread_rwlock_t slab_life_lock = PTHREAD_RWLOCK_INITIALIZER;
struct kmem_cache *slab_caches;

static inline void *get_freepointer(const struct kmem_cache *s, void *obj)
{
	return *(void **)((char *)obj + s->offset);
}

static inline void set_freepointer(const struct kmem_cache *s, void *obj, void *fp)
{
	*(void **)((char *)obj + s->offset) = fp;
}

/*
 * obj_to_index - the kernel's reciprocal_divide(): exact for an object's
 * own offset (a multiple of s->size below 2^22, the largest slab).
 */
static inline unsigned int obj_to_index(const struct kmem_cache *s,
					const struct slab *slab, const void *obj)
{
	return (unsigned int)(((uint64_t)((const char *)obj - slab->base) *
			       s->reciprocal_size) >> 32);
}

/* ---- geometry: the kernel's calculate_alignment/calculate_order ---- */
static unsigned int get_order(unsigned long size)
{
	unsigned int order = 0;
	unsigned long pages = DIV_ROUND_UP(size, (unsigned long)machine.page_size);

	while ((1ul << order) < pages)
		order++;
	return order;
}

unsigned int calculate_alignment(slab_flags_t flags, unsigned int align,
				 unsigned int size, unsigned int cache_line)
{
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = cache_line;

		while (size <= ralign / 2)
			ralign /= 2;
		if (ralign > align)
			align = ralign;
	}
	if (align < ARCH_SLAB_MINALIGN)
		align = ARCH_SLAB_MINALIGN;
	return ALIGN(align, (unsigned int)sizeof(void *));
}

static unsigned int order_objects(unsigned int order, unsigned int size)
{
	return (unsigned int)(((unsigned long)machine.page_size << order) / size);
}

static unsigned int calc_slab_order(unsigned int size, unsigned int min_order,
				    unsigned int max_order, unsigned int fract_leftover)
{
	unsigned int order;

	for (order = min_order; order <= max_order; order++) {
		unsigned long slab_size = (unsigned long)machine.page_size << order;

		if (slab_size % size <= slab_size / fract_leftover)
			break;
	}
	return order;
}

unsigned int calculate_order(unsigned int size, unsigned int nr_cpus,
			     unsigned int min_order, unsigned int max_order,
			     unsigned int min_objects)
{
	unsigned int order, max_objects;

	if (!min_objects)
		min_objects = 4 * (fls_u(nr_cpus ? nr_cpus : 1) + 1);
	max_objects = order_objects(max_order, size);
	if (max_objects < 1)
		max_objects = 1;
	if (min_objects > max_objects)
		min_objects = max_objects;
	order = get_order((unsigned long)min_objects * size);
	if (order < min_order)
		order = min_order;
	min_order = order;
	if (order_objects(min_order, size) > MAX_OBJS_PER_PAGE)
		return get_order((unsigned long)size * MAX_OBJS_PER_PAGE) - 1;
	for (unsigned int fraction = 16; fraction > 1; fraction /= 2) {
		order = calc_slab_order(size, min_order, max_order, fraction);
		if (order <= max_order)
			return order;
	}
	return get_order(size);		/* caller checks <= MAX_PAGE_ORDER */
}

static void set_cpu_partial(struct kmem_cache *s)
{
	unsigned int nr;

	if (s->size >= machine.page_size)
		nr = 6;
	else if (s->size >= 1024)
		nr = 24;
	else if (s->size >= 256)
		nr = 52;
	else
		nr = 120;
	s->cpu_partial = nr;
	s->cpu_partial_slabs = DIV_ROUND_UP(nr * 2, s->objects);
}

static int calculate_sizes(struct kmem_cache *s)
{
	unsigned int size = ALIGN(s->object_size, (unsigned int)sizeof(void *));
	unsigned int order;

	/* No ctor, no RCU, no poisoning: the free pointer lives mid-object. */
	s->offset = ALIGN_DOWN(s->object_size / 2, (unsigned int)sizeof(void *));
	size = ALIGN(size, s->align);
	if (!size)
		return -EINVAL;
	s->size = size;
	s->reciprocal_size = (uint32_t)((1ull << 32) / size + 1);
	order = calculate_order(size, machine.cpus, machine.slub_min_order,
				machine.slub_max_order, machine.slub_min_objects);
	if (order > MAX_PAGE_ORDER)
		return -EINVAL;
	s->order = order;
	s->objects = order_objects(order, size);
	s->min_order = get_order(size);
	s->min_objects = order_objects(s->min_order, size);
	if (!s->objects || s->objects > MAX_OBJS_PER_PAGE)
		return -EINVAL;
	{
		unsigned int mp = ilog2_u(size) / 2;

		s->min_partial = mp < 5 ? 5 : mp > 10 ? 10 : mp;
	}
	set_cpu_partial(s);
	return 0;
}

/* ---- creation ---- */
static struct kmem_cache *find_locked(const char *name)
{
	for (struct kmem_cache *s = slab_caches; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

struct kmem_cache *kmem_cache_find(const char *name)
{
	struct kmem_cache *s;

	pthread_mutex_lock(&slab_mutex);
	s = find_locked(name);
	pthread_mutex_unlock(&slab_mutex);
	return s;
}

/*
 * A destroyed cache's cpu_slab array is kept, its slots empty, for the
 * next cache: a thread's free guess (alloc_free_guess) may still point at
 * it.  Arrays have one slot more than the machine has CPUs, never a CPU's:
 * a spare's link (in its freelist).  The machine's end frees the spares.
 */
static struct kmem_cache_cpu *spare_cpu_slabs;

static struct kmem_cache_cpu *cpu_slab_array(void)
{
	struct kmem_cache_cpu *a;

	pthread_mutex_lock(&slab_mutex);
	a = spare_cpu_slabs;
	if (a)
		spare_cpu_slabs = a[machine.cpus].freelist;
	pthread_mutex_unlock(&slab_mutex);
	if (!a)
		a = aligned_alloc(64, sizeof(*a) * (machine.cpus + 1));
	if (a)
		memset(a, 0, sizeof(*a) * (machine.cpus + 1));
	return a;
}

/* s's slots are empty (kmem_cache_destroy flushed them) */
static void cpu_slab_array_retire(struct kmem_cache_cpu *a)
{
	pthread_mutex_lock(&slab_mutex);
	a[machine.cpus].freelist = spare_cpu_slabs;
	spare_cpu_slabs = a;
	pthread_mutex_unlock(&slab_mutex);
}

void kmem_cache_free_struct(struct kmem_cache *s)
{
	free(s->cpu_slab);
	free(s->node);
	free(s);
}

void kmem_cache_free_spares(void)
{
	while (spare_cpu_slabs) {
		struct kmem_cache_cpu *a = spare_cpu_slabs;

		spare_cpu_slabs = a[machine.cpus].freelist;
		free(a);
	}
}

struct kmem_cache *__kmem_cache_create(const char *name, unsigned int size,
				       unsigned int align, slab_flags_t flags,
				       bool is_kmalloc, int *err);
struct kmem_cache *__kmem_cache_create(const char *name, unsigned int size,
				       unsigned int align, slab_flags_t flags,
				       bool is_kmalloc, int *err)
{
	struct kmem_cache *s;
	int ret = -EINVAL;

	if (!machine_up) {
		ret = -ENODEV;
		goto fail;
	}
	if (!name || !*name || strlen(name) >= sizeof(s->name) ||
	    !size || size > KMALLOC_MAX_SIZE || (flags & ~SLAB_FLAGS_PERMITTED) ||
	    (align & (align - 1)) || align > KMALLOC_MAX_SIZE)
		goto fail;
	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto fail;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->object_size = size;
	s->flags = flags;
	s->account = flags & SLAB_ACCOUNT;
	s->reclaimable = flags & SLAB_RECLAIM_ACCOUNT;
	s->kmalloc = is_kmalloc;
	s->rare = s->account || slab_hooks_on;
	s->align = calculate_alignment(flags, align, size, machine.cache_line);
	ret = calculate_sizes(s);
	if (ret)
		goto out_free;
	s->charge = (s->size + (uint32_t)sizeof(void *)) |
		    (s->reclaimable ? SLAB_CHARGE_RECLAIMABLE : 0);
	ret = -ENOMEM;
	s->cpu_slab = cpu_slab_array();
	s->node = aligned_alloc(64, sizeof(*s->node) * machine.nodes);
	if (!s->cpu_slab || !s->node)
		goto out_free;
	memset(s->node, 0, sizeof(*s->node) * machine.nodes);	/* (cpu_slab_array zeroed its array) */

	pthread_mutex_lock(&slab_mutex);
	if (find_locked(name)) {
		pthread_mutex_unlock(&slab_mutex);
		ret = -EEXIST;
		goto out_free;
	}
	s->next = slab_caches;
	slab_caches = s;
	pthread_mutex_unlock(&slab_mutex);
	if (err)
		*err = 0;
	return s;

out_free:
	if (s->cpu_slab)
		cpu_slab_array_retire(s->cpu_slab);	/* it may have been a spare */
	free(s->node);
	free(s);
fail:
	if (err)
		*err = ret;
	return NULL;
}

struct kmem_cache *kmem_cache_create_err(const char *name, unsigned int size,
					 unsigned int align, slab_flags_t flags,
					 int *err)
{
	return __kmem_cache_create(name, size, align, flags & ~SLAB_NO_MERGE, false, err);
}

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags)
{
	return kmem_cache_create_err(name, size, align, flags, NULL);
}

const char *kmem_cache_name(const struct kmem_cache *s)
{
	return s->name;
}

void kmem_cache_set_owner(struct kmem_cache *s, uid_t owner)
{
	s->owner = owner;
}

void kmem_cache_info(const struct kmem_cache *s, struct kmem_cache_info *info)
{
	info->name = s->name;
	info->object_size = s->object_size;
	info->size = s->size;
	info->align = s->align;
	info->offset = s->offset;
	info->order = s->order;
	info->objects = s->objects;
	info->min_partial = s->min_partial;
	info->cpu_partial = s->cpu_partial;
	info->cpu_partial_slabs = s->cpu_partial_slabs;
	info->flags = s->flags;
	info->owner = s->owner;
}

/* ---- CPU slots ---- */
static struct kmem_cache_cpu *slot_lock(struct kmem_cache *s, unsigned int cpu)
{
	struct kmem_cache_cpu *c = &s->cpu_slab[cpu];

	alloc_cpu_lock(&c->lock, cpu);
	return c;
}

static inline void slot_unlock(struct kmem_cache_cpu *c)
{
	spin_unlock(&c->lock);
}

/* ---- node partial lists: caller holds n->list_lock and slab->lock ---- */
static void add_partial(struct kmem_cache_node *n, struct slab *slab, bool tail)
{
	if (!n->partial) {
		slab->next = slab->prev = slab;
		n->partial = slab;
	} else {
		struct slab *head = n->partial;

		slab->next = head;
		slab->prev = head->prev;
		head->prev->next = slab;
		head->prev = slab;
		if (!tail)
			n->partial = slab;
	}
	WRITE_ONCE(n->nr_partial, n->nr_partial + 1);
	slab->on_node_partial = 1;
}

static void remove_partial(struct kmem_cache_node *n, struct slab *slab)
{
	if (slab->next == slab) {
		n->partial = NULL;
	} else {
		slab->prev->next = slab->next;
		slab->next->prev = slab->prev;
		if (n->partial == slab)
			n->partial = slab->next;
	}
	slab->next = slab->prev = NULL;
	WRITE_ONCE(n->nr_partial, n->nr_partial - 1);
	slab->on_node_partial = 0;
}

/* ---- slabs ---- */
/* never inlined: its kmalloc's call_site names it, as the kernel's does */
__attribute__((noinline)) void alloc_slab_obj_exts(struct slab *slab)
{
	struct slabobj_ext *v, *expected = NULL;
	struct alloc_ctx own;
	const struct alloc_ctx *outer = alloc_ctx_internal_begin(&own);

	v = kzalloc(sizeof(*v) * slab->objects, GFP_KERNEL);
	alloc_ctx_internal_end(outer);
	if (!v)
		return;		/* the object stays unaccounted, as in the kernel */
	if (!__atomic_compare_exchange_n(&slab->obj_exts, &expected, v, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		kfree(v);
}

static struct slab *new_slab(struct kmem_cache *s, gfp_t gfp)
{
	gfp_t pgfp = (gfp & ~(__GFP_ZERO | __GFP_ACCOUNT)) | __GFP_COMP;
	unsigned int order = s->order, objects = s->objects;
	struct page *page;
	struct slab *slab;
	char *p;

	if (s->reclaimable)
		pgfp |= __GFP_RECLAIMABLE;
	{
		/* allocate_slab(): the preferred order may fail quietly, and
		 * without direct reclaim when a smaller order would do */
		gfp_t first = (pgfp | __GFP_NOWARN | __GFP_NORETRY) & ~__GFP_NOFAIL;

		if ((first & __GFP_DIRECT_RECLAIM) && order > s->min_order)
			first = (first | __GFP_NOMEMALLOC) & ~__GFP_RECLAIM;
		page = __alloc_pages(first, order, PAGE_KIND_SLAB);
	}
	if (!page && s->min_order < order) {
		order = s->min_order;
		objects = s->min_objects;
		page = __alloc_pages(pgfp, order, PAGE_KIND_SLAB);
	}
	if (!page)
		return NULL;
	slab = &machine.slabs[page_to_pfn(page)];
	memset(slab, 0, sizeof(*slab));
	slab->cache = s;
	slab->cpu_slab = s->cpu_slab;
	slab->fp_offset = s->offset;
	slab->charge = s->charge;
	slab->base = page_address(page);
	slab->objects = (uint16_t)objects;
	slab->nid = (uint8_t)page_to_nid(page);
	page->slab = slab;
	for (unsigned long i = 0, pfn = page_to_pfn(page); i < (1ul << order); i++)
		machine.slab_of[pfn + i] = slab;

	{
		/* locals: the stores through void ** could alias s (-fno-strict-aliasing) */
		const unsigned int size = s->size, offset = s->offset;
		char *end = slab->base + (size_t)size * (objects - 1);

		for (p = slab->base; p < end; p += size)
			*(void **)(p + offset) = p + size;
		*(void **)(p + offset) = NULL;
	}
	slab->freelist = slab->base;

	/*
	 * No obj_exts vector yet, even for a SLAB_ACCOUNT cache (the kernel
	 * makes theirs here): the first object charged makes it (the hook
	 * answers 1).  A slab that only root tasks use never has one, and
	 * their kfree reads no slot.
	 */
	atomic_fetch_add(&s->node[slab->nid].nr_slabs, 1);
	atomic_fetch_add(&s->node[slab->nid].total_objects, (long)objects);
	return slab;
}

/* Give a slab back to the page allocator.  No slab locks may be held. */
static void discard_slab(struct kmem_cache *s, struct slab *slab)
{
	struct page *page = virt_to_page(slab->base);
	struct slabobj_ext *v = slab->obj_exts;

	pthread_rwlock_rdlock(&slab_life_lock);
	atomic_fetch_sub(&s->node[slab->nid].nr_slabs, 1);
	atomic_fetch_sub(&s->node[slab->nid].total_objects, (long)slab->objects);
	slab->cache = NULL;
	slab->obj_exts = NULL;
	page->slab = NULL;
	for (unsigned long i = 0, pfn = page_to_pfn(page); i < (1ul << page->order); i++)
		machine.slab_of[pfn + i] = NULL;
	__free_pages_kind(page, page->order);
	pthread_rwlock_unlock(&slab_life_lock);
	if (v)
		kfree(v);
}

/* discard_slab() each slab of a ->next-linked list; returns how many. */
static int discard_slab_list(struct kmem_cache *s, struct slab *list)
{
	int freed = 0;

	while (list) {
		struct slab *slab = list;

		list = slab->next;
		discard_slab(s, slab);
		freed++;
	}
	return freed;
}

/*
 * Unfreeze a slab that left a CPU, with the CPU freelist it still had.
 * Returns the slab if it must be discarded (the caller does it once it holds
 * no lock), NULL otherwise.
 */
static struct slab *deactivate_slab(struct kmem_cache *s, struct slab *slab, void *freelist)
{
	struct kmem_cache_node *n = &s->node[slab->nid];
	unsigned int count = 0;
	void *tail = NULL;
	struct slab *discard = NULL;

	for (void *p = freelist; p; p = get_freepointer(s, p)) {
		tail = p;
		count++;
	}
	spin_lock(&n->list_lock);
	spin_lock(&slab->lock);
	if (tail) {
		set_freepointer(s, tail, slab->freelist);
		slab->freelist = freelist;
	}
	slab->inuse -= (uint16_t)count;
	slab->frozen = 0;
	if (!slab->inuse && n->nr_partial >= s->min_partial)
		discard = slab;
	else if (slab->freelist)
		add_partial(n, slab, tail != NULL);
	spin_unlock(&slab->lock);
	spin_unlock(&n->list_lock);
	return discard;
}

/* Move a detached CPU-partial list to the node lists; free what is empty. */
static int __put_partials(struct kmem_cache *s, struct slab *list)
{
	struct slab *discard = NULL;

	while (list) {
		struct slab *slab = list;
		struct kmem_cache_node *n = &s->node[slab->nid];

		list = slab->next;
		spin_lock(&n->list_lock);
		spin_lock(&slab->lock);
		if (!slab->inuse && n->nr_partial >= s->min_partial) {
			slab->next = discard;
			discard = slab;
		} else {
			add_partial(n, slab, true);
		}
		spin_unlock(&slab->lock);
		spin_unlock(&n->list_lock);
	}
	return discard_slab_list(s, discard);
}

static void put_cpu_partial(struct kmem_cache *s, struct slab *slab)
{
	struct kmem_cache_cpu *c = slot_lock(s, slot_cpu());
	struct slab *old = c->partial, *to_put = NULL;
	unsigned int slabs = 0;

	if (old) {
		if (old->slabs >= s->cpu_partial_slabs) {
			to_put = old;
			old = NULL;
		} else {
			slabs = old->slabs;
		}
	}
	slab->slabs = slabs + 1;
	slab->next = old;
	c->partial = slab;
	slot_unlock(c);
	if (to_put)
		__put_partials(s, to_put);
}

/* Freeze a slab for a CPU: take its whole freelist. */
static void *freeze_slab(struct slab *slab)
{
	void *fl;

	spin_lock(&slab->lock);
	fl = slab->freelist;
	slab->freelist = NULL;
	slab->inuse = slab->objects;
	slab->frozen = 1;
	spin_unlock(&slab->lock);
	return fl;
}

/* get_partial_node(): c is locked; returns a frozen slab and its freelist. */
static struct slab *get_partial(struct kmem_cache *s, struct kmem_cache_cpu *c,
				unsigned int cpu, void **flp)
{
	unsigned int local = cpu % machine.nodes;

	for (unsigned int i = 0; i < machine.nodes; i++) {
		struct kmem_cache_node *n = &s->node[(local + i) % machine.nodes];
		struct slab *got = NULL;
		unsigned int moved = 0;

		if (!READ_ONCE(n->nr_partial))
			continue;
		spin_lock(&n->list_lock);
		while (n->partial) {
			struct slab *slab = n->partial;

			spin_lock(&slab->lock);
			remove_partial(n, slab);
			spin_unlock(&slab->lock);
			if (!got) {
				got = slab;
				*flp = freeze_slab(slab);
			} else {
				slab->slabs = (c->partial ? c->partial->slabs : 0) + 1;
				slab->next = c->partial;
				c->partial = slab;
				if (++moved > s->cpu_partial_slabs / 2)
					break;
			}
		}
		spin_unlock(&n->list_lock);
		if (got)
			return got;
	}
	return NULL;
}

/*
 * ___slab_alloc: the CPU freelist is empty and c is locked.  Refill it from
 * the CPU slab's own freelist, the CPU-partial list or a node partial list.
 * Returns an object with c->freelist set to the rest, or NULL (new slab needed).
 */
static void *___slab_alloc(struct kmem_cache *s, struct kmem_cache_cpu *c, unsigned int cpu)
{
	struct slab *slab = c->slab;
	void *fl;

	if (slab) {
		spin_lock(&slab->lock);
		fl = slab->freelist;
		if (fl) {
			slab->freelist = NULL;
			slab->inuse = slab->objects;
			spin_unlock(&slab->lock);
			goto load;
		}
		slab->frozen = 0;	/* full: it leaves the CPU, on no list */
		spin_unlock(&slab->lock);
		c->slab = NULL;
	}
	while ((slab = c->partial) != NULL) {
		c->partial = slab->next;
		slab->next = NULL;
		fl = freeze_slab(slab);
		if (fl) {
			c->slab = slab;
			goto load;
		}
		spin_lock(&slab->lock);
		slab->frozen = 0;
		spin_unlock(&slab->lock);
	}
	slab = get_partial(s, c, cpu, &fl);
	if (!slab)
		return NULL;
	c->slab = slab;
load:
	c->freelist = get_freepointer(s, fl);
	return fl;
}

static __noinline void *slab_alloc_slow(struct kmem_cache *s, gfp_t gfp)
{
	unsigned int cpu = slot_cpu();
	struct kmem_cache_cpu *c;
	struct slab *slab, *old, *discard = NULL;
	void *obj, *oldfl;

	thread_rseq_refresh();
	c = slot_lock(s, cpu);
	obj = c->freelist;

	if (obj) {
		c->freelist = get_freepointer(s, obj);
		slot_unlock(c);
		return obj;
	}
	obj = ___slab_alloc(s, c, cpu);
	slot_unlock(c);
	if (obj)
		return obj;

	pthread_rwlock_rdlock(&slab_life_lock);
	slab = new_slab(s, gfp);
	if (!slab) {
		pthread_rwlock_unlock(&slab_life_lock);
		return NULL;
	}
	obj = freeze_slab(slab);
	cpu = slot_cpu();
	c = slot_lock(s, cpu);
	old = c->slab;
	oldfl = c->freelist;
	c->slab = slab;
	c->freelist = get_freepointer(s, obj);
	if (old)
		discard = deactivate_slab(s, old, oldfl);
	slot_unlock(c);
	pthread_rwlock_unlock(&slab_life_lock);
	if (discard)
		discard_slab(s, discard);
	return obj;
}

/* ---- the restartable sequences (x86-64) ---- */
#if defined(__x86_64__)
_Static_assert(RSEQ_SIG == 0x53053053, "glibc's x86-64 rseq signature");
_Static_assert(__builtin_offsetof(struct kmem_cache_cpu, freelist) == 0, "rseq layout");
_Static_assert(__builtin_offsetof(struct kmem_cache_cpu, slab) == 8, "rseq layout");
_Static_assert(__builtin_offsetof(struct kmem_cache_cpu, lock) == 16, "rseq layout");
_Static_assert(sizeof(struct kmem_cache_cpu) == 64, "rseq layout: cpu_slab[cpu] is cpu << 6");
_Static_assert(__builtin_offsetof(struct slab, charge) + sizeof(uint32_t) <= 32,
	       "the free fast path's fields in the slab's first 32 bytes");


/*
 * Both sequences read the CPU number inside the critical section, after
 * rseq_cs is set: a migration from there on aborts the section, so the
 * number needs no second check (librseq's sequences take the CPU as an
 * argument, read before, and compare it again).  An abort restarts the
 * whole sequence from the rseq_cs store (the kernel clears rseq_cs when it
 * aborts).
 */

/* struct rseq_cs: version, flags, start_ip, post_commit_offset, abort_ip (4f) */
#define RSEQ_CS_DESC(label, start, end)					\
	".balign 32\n\t"						\
	label ":\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad " start ", (" end " - " start "), 4f\n\t"

/*
 * The abort handler (4:) after glibc's signature, in __rseq_failure, left
 * open for more out-of-line code: it starts the sequence again at 0:.
 */
#define RSEQ_ABORT_RESTART						\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n\t"						\
	"4:\n\t"							\
	"jmp 0b\n\t"

/*
 * Pop the CPU freelist of the CPU we run on: the object, or NULL for the
 * slow path (the slot's lock is held or the freelist is empty).  A plain
 * asm with a register output: no asm goto (built with gcc 12 and
 * -fsanitize=address, asm goto with an output handed out an "object" just
 * past the cpu_slab array).
 */
/*
 * The pop's sequence; SLAB_LOAD is "" or the load of the CPU slab into
 * %[slab] (every object on a CPU freelist is its CPU slab's: they change
 * together, in one section or under the slot's lock).
 */
#define RSEQ_FREELIST_POP(SLAB_LOAD)					\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	RSEQ_CS_DESC("3", "1f", "2f")					\
	".popsection\n\t"						\
	"0:\n\t"							\
	"movq %[rseq_off], %[c]\n\t"					\
	"leaq 3b(%%rip), %[obj]\n\t"					\
	"movq %[obj], %%fs:8(%[c])\n\t"					\
	"1:\n\t"							\
	"movl %%fs:4(%[c]), %k[c]\n\t"					\
	"shlq $6, %[c]\n\t"						\
	"addq %[base], %[c]\n\t"					\
	"xorl %k[obj], %k[obj]\n\t"					\
	"cmpl $0, 16(%[c])\n\t"						\
	"jnz 2f\n\t"							\
	"movq (%[c]), %[obj]\n\t"					\
	"testq %[obj], %[obj]\n\t"					\
	"jz 2f\n\t"							\
	SLAB_LOAD							\
	"movl %[off], %k[next]\n\t"					\
	"movq (%[obj], %[next]), %[next]\n\t"				\
	"movq %[next], (%[c])\n\t"					\
	"2:\n\t"							\
	RSEQ_ABORT_RESTART						\
	".popsection\n\t"

static __always_inline void *rseq_freelist_pop(struct kmem_cache *s)
{
	void *obj;
	struct kmem_cache_cpu *c;
	void *next;

	__asm__ __volatile__(
		RSEQ_FREELIST_POP("")
		: [obj] "=&r"(obj), [c] "=&r"(c), [next] "=&r"(next)
		: [rseq_off] "m"(alloc_rseq_offset), [base] "m"(s->cpu_slab),
		  [off] "m"(s->offset)
		: "memory", "cc");
	return obj;
}

/*
 * The same pop, and the CPU slab the object belongs to: an accounted
 * allocation finds its obj_exts vector without the lookup from the
 * object's address.
 */
static __always_inline void *rseq_freelist_pop_slab(struct kmem_cache *s, struct slab **slabp)
{
	void *obj;
	struct kmem_cache_cpu *c;
	void *next;
	struct slab *slab;

	__asm__ __volatile__(
		RSEQ_FREELIST_POP("movq 8(%[c]), %[slab]\n\t")
		: [obj] "=&r"(obj), [c] "=&r"(c), [next] "=&r"(next), [slab] "=&r"(slab)
		: [rseq_off] "m"(alloc_rseq_offset), [base] "m"(s->cpu_slab),
		  [off] "m"(s->offset)
		: "memory", "cc");
	*slabp = slab;
	return obj;
}

_Static_assert(__builtin_offsetof(struct kmem_cache_cpu, pend) == 24, "rseq layout");
_Static_assert(__builtin_offsetof(struct kmem_cache_cpu, pend_slab) == 32, "rseq layout");

/*
 * Push obj onto the CPU freelist if its slab is the CPU slab, else onto the
 * pending run if the run is for its slab: true when done, false for the
 * slow path (the slot's lock is held, or the object belongs to neither).
 * One section, one commit store for either: the freelist's new head, or
 * the run's word (its new head and its length plus one, PEND_MAKE).  The
 * run's head goes into obj's free pointer as the whole word, its length
 * then cleared with a 2-byte store: obj is nobody's before the commit, and
 * the sequence keeps to three scratch registers (its operands are memory).
 */
/* defined here: the push reads it with one %fs-relative operand (local-exec TLS) */
struct kmem_cache_cpu alloc_no_guess[ALLOC_MAX_CPUS];
__thread struct kmem_cache_cpu *alloc_free_guess = alloc_no_guess;

/*
 * The slot the push works on is first this thread's guess (its CPU's slot
 * of the cache it last freed to), whose address does not wait for the
 * loads from the object to its slab and from the slab to its cache's
 * slots, so that the next allocation's pop of the same slot does not wait
 * for them either: a kfree(kmalloc(64)) loop runs about 4.5 ns a pair
 * with it, and ran at that chain's speed, up to 9.6 ns, without (the
 * host's slower mode; bench_alloc).  The guess is right when the slot's
 * CPU slab or pending run is the object's slab (a slab is one cache's);
 * otherwise, in the same sequence, the object's own cache's slot is taken
 * and becomes the guess: frees alternating between two caches cost what
 * they did before (about 10.5 ns for two pairs).  A wrong guess on a slot
 * whose lock is held goes to the slow path, which is always right.
 */
static __always_inline bool rseq_free_push(struct slab *slab, void *obj)
{
	__asm__ __volatile__ goto(
		".pushsection __rseq_cs, \"aw\"\n\t"
		RSEQ_CS_DESC("3", "1f", "2f")
		".popsection\n\t"
		"0:\n\t"
		"movq %[rseq_off], %%rcx\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %%fs:8(%%rcx)\n\t"
		"1:\n\t"
		"movl %%fs:4(%%rcx), %%ecx\n\t"
		"shlq $6, %%rcx\n\t"
		/* the guess's slot */
		"movq %[guess], %%rax\n\t"
		"addq %%rcx, %%rax\n\t"
		"cmpl $0, 16(%%rax)\n\t"
		"jnz %l[slow]\n\t"
		"cmpq %[slab], 8(%%rax)\n\t"
		"je 6f\n\t"
		"cmpq %[slab], 32(%%rax)\n\t"
		"je 8f\n\t"
		/* not the guess's: the slot of the object's own cache, the new guess */
		"movq %[base], %%r11\n\t"
		"movq %%r11, %[guess]\n\t"
		"leaq (%%r11, %%rcx), %%rax\n\t"
		"cmpl $0, 16(%%rax)\n\t"
		"jnz %l[slow]\n\t"
		"cmpq %[slab], 8(%%rax)\n\t"
		"je 6f\n\t"
		"cmpq %[slab], 32(%%rax)\n\t"
		"jnz %l[slow]\n\t"
		/* the run: its head (the low 48 bits) into obj, then obj and len + 1 */
		"8:\n\t"
		"movl %[off], %%ecx\n\t"
		"movq 24(%%rax), %%r11\n\t"
		"movq %%r11, (%[obj], %%rcx)\n\t"
		"movw $0, 6(%[obj], %%rcx)\n\t"
		"shrq $48, %%r11\n\t"
		"addq $1, %%r11\n\t"
		"shlq $48, %%r11\n\t"
		"orq %[obj], %%r11\n\t"
		"addq $24, %%rax\n\t"
		"jmp 7f\n\t"
		/* the CPU freelist */
		"6:\n\t"
		"movl %[off], %%ecx\n\t"
		"movq (%%rax), %%r11\n\t"
		"movq %%r11, (%[obj], %%rcx)\n\t"
		"movq %[obj], %%r11\n\t"
		"7:\n\t"
		"movq %%r11, (%%rax)\n\t"
		"2:\n\t"
		RSEQ_ABORT_RESTART
		".popsection\n\t"
		:
		: [rseq_off] "m"(alloc_rseq_offset), [guess] "m"(alloc_free_guess),
		  [base] "m"(slab->cpu_slab),
		  [off] "m"(slab->fp_offset), [slab] "r"(slab), [obj] "r"(obj)
		: "memory", "cc", "rax", "rcx", "r11"
		: slow);
	return true;
slow:
	return false;
}
#endif

/*
 * The allocation fast path.  With rseq: pop in a restartable sequence.
 * Without: the slot's lock, taken inline.  A thread in lock mode stays on the
 * slot it last found in a slow path (alloc_cpu_hint): asking the kernel for
 * the CPU on every operation would cost more than the operation, any slot is
 * correct under its lock, and a busy slot sends the thread to the slow path,
 * which looks the CPU up again.
 */
static __always_inline void *__slab_alloc_fast(struct kmem_cache *s, struct slab **slabp)
{
	struct kmem_cache_cpu *c;
	void *obj;

#if defined(__x86_64__)
	if (likely(thread_uses_rseq()))
		return slabp ? rseq_freelist_pop_slab(s, slabp) : rseq_freelist_pop(s);
#endif
	/* pinned, the thread's first call, or a hint from an older machine */
	if (unlikely(machine.rseq) || unlikely(alloc_cpu_hint >= machine.cpus))
		return NULL;
	c = &s->cpu_slab[alloc_cpu_hint];
	if (likely(spin_trylock(&c->lock))) {
		obj = c->freelist;
		if (likely(obj)) {
			c->freelist = get_freepointer(s, obj);
			if (slabp)
				*slabp = c->slab;
		}
		slot_unlock(c);
		return obj;
	}
	return NULL;
}

static __always_inline void *slab_alloc_fast(struct kmem_cache *s)
{
	return __slab_alloc_fast(s, NULL);
}

/* slab_alloc_fast() and the object's slab (undefined when it returns NULL). */
static __always_inline void *slab_alloc_fast_slab(struct kmem_cache *s, struct slab **slabp)
{
	return __slab_alloc_fast(s, slabp);
}


/*
 * __slab_free: cnt objects of one slab, chained head..tail through their
 * free pointers, go back to the slab's own freelist (the kernel's
 * __slab_free, with its list transitions).
 */
static __noinline void __slab_free(struct kmem_cache *s, struct slab *slab,
				   void *head, void *tail, unsigned int cnt)
{
	struct kmem_cache_node *n = &s->node[slab->nid];
	bool locked_n = false;
	void *prior;

again:
	spin_lock(&slab->lock);
	if (!locked_n && !slab->frozen && slab->inuse == cnt && slab->on_node_partial) {
		/* it is going to be empty: list_lock comes first in lock order */
		spin_unlock(&slab->lock);
		spin_lock(&n->list_lock);
		locked_n = true;
		goto again;
	}
	prior = slab->freelist;
	set_freepointer(s, tail, prior);
	slab->freelist = head;
	slab->inuse -= (uint16_t)cnt;
	if (slab->frozen) {
		spin_unlock(&slab->lock);
		goto out;
	}
	if (!prior) {
		/* it was full: onto this CPU's partial list */
		spin_unlock(&slab->lock);
		if (locked_n)
			spin_unlock(&n->list_lock);
		put_cpu_partial(s, slab);
		return;
	}
	if (!slab->inuse && slab->on_node_partial && locked_n &&
	    n->nr_partial >= s->min_partial) {
		remove_partial(n, slab);
		spin_unlock(&slab->lock);
		spin_unlock(&n->list_lock);
		discard_slab(s, slab);
		return;
	}
	spin_unlock(&slab->lock);
out:
	if (locked_n)
		spin_unlock(&n->list_lock);
}

struct pending {
	struct slab *slab;
	void *head, *tail;
	unsigned long cnt;
};

/*
 * Detach c's pending list (c locked) with its length; hand it to __slab_free
 * unlocked.
 */
static void take_pending(struct kmem_cache_cpu *c, struct pending *p)
{
	p->slab = c->pend_slab;
	p->head = PEND_HEAD(c->pend);
	p->tail = c->pend_tail;
	p->cnt = PEND_LEN(c->pend);
	c->pend_slab = NULL;
	c->pend = 0;
	c->pend_tail = NULL;
}

static void flush_pending(struct kmem_cache *s, struct pending *p)
{
	if (p->slab)
		__slab_free(s, p->slab, p->head, p->tail, (unsigned int)p->cnt);
}

/* A slab is one cache's: the free paths take the cache from the slab. */
static __noinline void slab_free_slow(struct slab *slab, void *obj)
{
	struct kmem_cache *s = slab->cache;
	unsigned int cpu = slot_cpu();
	struct kmem_cache_cpu *c;
	struct pending old = { 0 };

	thread_rseq_refresh();
	c = slot_lock(s, cpu);

	if (c->slab == slab) {
		set_freepointer(s, obj, c->freelist);
		c->freelist = obj;
		slot_unlock(c);
		return;
	}
	if (c->pend_slab == slab) {
		set_freepointer(s, obj, PEND_HEAD(c->pend));
		c->pend = PEND_MAKE(obj, PEND_LEN(c->pend) + 1);
		slot_unlock(c);
		return;
	}
	/* a new run starts: the old one goes back to its slab */
	take_pending(c, &old);
	set_freepointer(s, obj, NULL);
	c->pend_slab = slab;
	c->pend = PEND_MAKE(obj, 1);
	c->pend_tail = obj;
	slot_unlock(c);
	flush_pending(s, &old);
}

/* The free fast path: true when done, false for slab_free_slow(). */
static __always_inline bool slab_free_fast(struct slab *slab, void *obj)
{
	struct kmem_cache_cpu *c;

#if defined(__x86_64__)
	if (likely(thread_uses_rseq()))
		return rseq_free_push(slab, obj);
#endif
	if (unlikely(machine.rseq) || unlikely(alloc_cpu_hint >= machine.cpus))
		return false;
	c = &slab->cpu_slab[alloc_cpu_hint];
	if (likely(spin_trylock(&c->lock))) {
		if (likely(c->slab == slab)) {
			*(void **)((char *)obj + slab->fp_offset) = c->freelist;
			c->freelist = obj;
			slot_unlock(c);
			return true;
		}
		slot_unlock(c);
	}
	return false;
}

static __always_inline void do_slab_free(struct slab *slab, void *obj)
{
	if (!slab_free_fast(slab, obj))
		slab_free_slow(slab, obj);
}

/* ---- hooks ---- */
/* memcg_slab_post_alloc_hook(): false when the charge failed. */
static bool memcg_slab_post_alloc_hook(struct kmem_cache *s, gfp_t gfp, void *obj)
{
	uintptr_t cur = memcg_current_word();
	struct slab *slab;
	unsigned int full_size = s->size + (unsigned int)sizeof(void *);
	struct slabobj_ext *v;
	int r;

	if (!cur)
		return true;	/* a root task: nothing to charge */
	slab = machine.slab_of[((uintptr_t)obj - (uintptr_t)machine.base) >> machine.page_shift];
	v = __atomic_load_n(&slab->obj_exts, __ATOMIC_ACQUIRE);
	r = __memcg_slab_post_alloc_hook(cur, gfp, v ? &v[obj_to_index(s, slab, obj)] : NULL,
					 full_size, s->reclaimable, slab->nid);
	if (r == 1) {
		/* to be charged, and the slab has no vector yet */
		alloc_slab_obj_exts(slab);
		v = __atomic_load_n(&slab->obj_exts, __ATOMIC_ACQUIRE);
		if (!v)
			return true;	/* left unaccounted, as in the kernel */
		r = __memcg_slab_post_alloc_hook(cur, gfp, &v[obj_to_index(s, slab, obj)],
						 full_size, s->reclaimable, slab->nid);
	}
	return r == 0;
}

/* The accounted allocation's rare cases: the vector to make, a failed charge. */
static __noinline void *slab_alloc_accounted_slow(struct kmem_cache *s, gfp_t gfp, void *obj)
{
	if (likely(memcg_slab_post_alloc_hook(s, gfp, obj)))
		return obj;
	do_slab_free(virt_to_slab(obj, NULL), obj);
	return NULL;
}

/* __memcg_slab_charge()'s failure: the object goes back, the allocation fails. */
void *slab_alloc_charge_failed(void *obj)
{
	struct slab *slab = virt_to_slab(obj, NULL);

	do_slab_free(slab, obj);
	return NULL;
}

/*
 * An accounted allocation of a task below the root, with nothing else to
 * do: the hook alone, as a tail call (it hands the object back, or NULL).
 * 'cur' is the task's objcg word, already read and found non-zero (a root
 * task's is 0 and never gets here: its test is inline, the kernel's
 * current_obj_cgroup() NULL test); a word that is not 0 means a memcg
 * below the root exists, so memcg_kmem_online() needs no test here.  The
 * slab's first charged object makes its vector (the slow path).
 */
static __always_inline void *slab_alloc_accounted(struct kmem_cache *s, gfp_t gfp, void *obj,
						  struct slab *slab, uintptr_t cur)
{
	struct slabobj_ext *v = __atomic_load_n(&slab->obj_exts, __ATOMIC_ACQUIRE);

	if (unlikely(!v))
		return slab_alloc_accounted_slow(s, gfp, obj);
	return __memcg_slab_charge(cur, gfp, &v[obj_to_index(s, slab, obj)], s->charge,
				   slab->nid, obj);
}

/*
 * memcg_slab_free_hook + the free of an object that was charged: its slot
 * emptied, the object freed, then the charge given back (the kernel
 * uncharges first; the order is invisible, and this way nothing is kept
 * across a call but for the slow path's).  The node is read before the
 * free: once the object is back, the slab may be discarded and made anew.
 */
static __noinline void slab_free_accounted_slow(struct slab *slab, void *obj,
						struct obj_cgroup *objcg, uint32_t charge, int nid)
{
	do_slab_free(slab, obj);
	__memcg_slab_free_hook(objcg, charge, nid);
}

/* The common case: the push in its sequence, then the hook as a tail call. */
ALLOC_HOT("12")
static void slab_free_accounted(struct slab *slab, void *obj,
					   struct slabobj_ext *ext, struct obj_cgroup *objcg)
{
	uint32_t charge = slab->charge;
	int nid = slab->nid;

	ext->objcg = NULL;
#if defined(__x86_64__)
	if (likely(thread_uses_rseq()) && likely(rseq_free_push(slab, obj))) {
		__memcg_slab_free_hook(objcg, charge, nid);
		return;
	}
#endif
	slab_free_accounted_slow(slab, obj, objcg, charge, nid);
}

/*
 * The free of an object whose slab has a vector and whose slot holds an
 * objcg: true when done.  A root task's object in such a slab (an empty
 * slot) has nothing to give back: false, freed as any other.
 */
static __always_inline bool slab_free_charged(struct kmem_cache *s, struct slab *slab,
					      struct slabobj_ext *v, void *obj)
{
	struct slabobj_ext *ext = &v[obj_to_index(s, slab, obj)];
	struct obj_cgroup *objcg = ext->objcg;

	if (!objcg)
		return false;
	slab_free_accounted(slab, obj, ext, objcg);
	return true;
}

/*
 * Everything after the fast path that is not always needed: a refill,
 * zeroing, the memcg hook (memcg_slab_post_alloc_hook: an object whose
 * charge fails is freed and the allocation fails), the trace event.
 */
static __noinline void *slab_alloc_finish(struct kmem_cache *s, gfp_t gfp, uintptr_t caller,
					  size_t orig_size, bool is_kmalloc, void *obj)
{
	bool accounted = (gfp & __GFP_ACCOUNT) || s->account;

	/* failslab (should_failslab): the allocation fails before it is made */
	if (unlikely(fault_site_armed(FAULT_SLAB)) && !(gfp & __GFP_NOFAIL) &&
	    fault_should_fail(FAULT_SLAB)) {
		if (obj)
			do_slab_free(virt_to_slab(obj, NULL), obj);
		obj = NULL;
		goto out;
	}
	/* an accounted allocation, nothing else to do: the hook alone */
	if (likely(obj) && likely(!(gfp & __GFP_ZERO)) && likely(!READ_ONCE(trace_on))) {
		if (memcg_kmem_online() && !memcg_slab_post_alloc_hook(s, gfp, obj)) {
			do_slab_free(virt_to_slab(obj, NULL), obj);
			return NULL;
		}
		return obj;
	}
	if (!obj)
		obj = slab_alloc_slow(s, gfp);
	if (likely(obj)) {
		if (gfp & __GFP_ZERO)
			memset(obj, 0, s->object_size);
		if (accounted && memcg_kmem_online() &&
		    !memcg_slab_post_alloc_hook(s, gfp, obj)) {
			do_slab_free(virt_to_slab(obj, NULL), obj);
			obj = NULL;
		}
	}
out:
	if (unlikely(READ_ONCE(trace_on))) {
		if (is_kmalloc)
			trace_kmalloc(caller, obj, orig_size, s->size, gfp,
				      gfp & __GFP_ACCOUNT);
		else
			trace_kmem_cache_alloc(caller, obj, s, gfp, accounted);
	}
	return obj;
}

/* Rare work leaves the fast path as one tail call: no registers to save. */
static __always_inline void *slab_alloc(struct kmem_cache *s, gfp_t gfp, uintptr_t caller,
				       size_t orig_size, bool is_kmalloc)
{
	struct slab *slab;
	uintptr_t cur;
	void *obj;

	if (likely(!((gfp & (__GFP_ZERO | __GFP_ACCOUNT)) | s->rare))) {
		obj = slab_alloc_fast(s);
		if (likely(obj))
			return obj;
	} else if (likely(!(gfp & __GFP_ZERO)) && likely(!slab_hooks_on)) {
		/* accounted: the task's objcg word first, the pop as it needs */
		cur = memcg_current_word();
		if (likely(!cur)) {
			obj = slab_alloc_fast(s);	/* a root task: nothing to charge */
			if (likely(obj))
				return obj;
		} else {
			obj = slab_alloc_fast_slab(s, &slab);
			if (likely(obj))
				return slab_alloc_accounted(s, gfp, obj, slab, cur);
		}
	} else {
		obj = slab_alloc_fast(s);
	}
	return slab_alloc_finish(s, gfp, caller, orig_size, is_kmalloc, obj);
}

/* The free with its hook and trace: kmem_cache_free's, or kfree's rare case. */
static __noinline void slab_free_finish(struct kmem_cache *s, struct slab *slab,
					void *obj, uintptr_t caller, bool is_kfree)
{
	if (unlikely(READ_ONCE(trace_on)) && !is_kfree)
		trace_kmem_cache_free(caller, obj, s);
	if (memcg_kmem_online()) {
		struct slabobj_ext *v = __atomic_load_n(&slab->obj_exts, __ATOMIC_ACQUIRE);

		if (v && slab_free_charged(s, slab, v, obj))
			return;
	}
	do_slab_free(slab, obj);
}

struct slab *virt_to_slab(const void *addr, struct page **headp)
{
	struct page *page = __virt_to_page(addr);

	if (!page)
		return NULL;
	if (page->kind == PAGE_KIND_TAIL)
		page = page->head;
	if (headp)
		*headp = page;
	return page->kind == PAGE_KIND_SLAB ? page->slab : NULL;
}

ALLOC_HOT("13")
void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp)
{
	return slab_alloc(s, gfp, _RET_IP_, s->object_size, false);
}

ALLOC_HOT("14")
void kmem_cache_free(struct kmem_cache *s, void *obj)
{
	struct slab *slab = virt_to_slab(obj, NULL);

	if (unlikely(!slab || slab->cache != s ||
		     ((char *)obj - slab->base) % s->size))
		return;		/* not an object of s: refuse rather than corrupt */
	slab_free_finish(s, slab, obj, _RET_IP_, false);
}

/* ---- kmalloc's entry points: here, so the fast paths inline ---- */
static __always_inline void *__kmalloc(size_t size, gfp_t gfp, uintptr_t caller)
{
	struct kmem_cache *s;

	if (unlikely(size - 1 >= KMALLOC_MAX_CACHE_SIZE)) {
		if (!size)
			return ZERO_SIZE_PTR;
		return kmalloc_large(size, gfp, caller);
	}
	if (likely(!(gfp & (__GFP_RECLAIMABLE | __GFP_ACCOUNT))))
		s = kmalloc_caches[KMALLOC_NORMAL][__kmalloc_index(size)];
	else
		s = kmalloc_caches[kmalloc_type_of_bits[gfp_type_bits(gfp)]][__kmalloc_index(size)];
	return slab_alloc(s, gfp, caller, size, true);
}

/* Everything but an unaccounted, unzeroed kmalloc of a slab size. */
static __noinline void *kmalloc_general(size_t size, gfp_t gfp, uintptr_t caller)
{
	return __kmalloc(size, gfp, caller);
}

/*
 * The fast path: the cache in one load, the pop.  An unaccounted kmalloc
 * has no hooks to run (a normal cache is rare only while slab_hooks_on, and
 * then kmalloc_fast_limit is 0 and every kmalloc takes kmalloc_general); an
 * accounted one (kmalloc-cg-N) tests the task's objcg: a root task's is
 * NULL and it is done.
 */
ALLOC_HOT_FIRST("10")
void *kmalloc(size_t size, gfp_t gfp)
{
	if (likely(size - 1 < READ_ONCE(machine.kmalloc_fast_limit)) &&
	    likely(!(gfp & (__GFP_RECLAIMABLE | __GFP_ACCOUNT | __GFP_ZERO)))) {
		struct kmem_cache *s = kmalloc_normal_by_size[(size - 1) >> 3];
		void *obj = slab_alloc_fast(s);

		if (likely(obj))
			return obj;
		return slab_alloc_finish(s, gfp, _RET_IP_, size, true, NULL);
	}
	if (likely(size - 1 < READ_ONCE(machine.kmalloc_fast_limit)) &&
	    likely((gfp & (__GFP_RECLAIMABLE | __GFP_ACCOUNT | __GFP_ZERO)) == __GFP_ACCOUNT)) {
		struct kmem_cache *s = kmalloc_cg_by_size[(size - 1) >> 3];
		uintptr_t cur = memcg_current_word();
		struct slab *slab;
		void *obj;

		if (likely(!cur)) {
			obj = slab_alloc_fast(s);	/* a root task: nothing to charge */
			if (likely(obj))
				return obj;
		} else {
			obj = slab_alloc_fast_slab(s, &slab);
			if (likely(obj))
				return slab_alloc_accounted(s, gfp, obj, slab, cur);
		}
		return slab_alloc_finish(s, gfp, _RET_IP_, size, true, NULL);
	}
	return kmalloc_general(size, gfp, _RET_IP_);
}

__noinline void *kzalloc(size_t size, gfp_t gfp)
{
	return __kmalloc(size, gfp | __GFP_ZERO, _RET_IP_);
}

/* Not a slab page: a large kmalloc's head, or nothing kmalloc returned. */
static __noinline void kfree_large(const void *obj, uintptr_t off)
{
	free_large_kmalloc(compound_head(&machine.pages[off >> machine.page_shift]), obj);
}

/* kfree of an arena address: off is obj's offset in the arena, below its size */
static __always_inline void __kfree(const void *obj, uintptr_t off)
{
	struct slab *slab = machine.slab_of[off >> machine.page_shift];
	struct slabobj_ext *v;

	if (unlikely(!slab)) {
		kfree_large(obj, off);
		return;
	}
	v = __atomic_load_n(&slab->obj_exts, __ATOMIC_ACQUIRE);
	if (unlikely(v) && slab_free_charged(slab->cache, slab, v, (void *)obj))
		return;
	do_slab_free(slab, (void *)obj);
}

/*
 * kfree past kfree_fast_limit: outside the arena (NULL, ZERO_SIZE_PTR:
 * nothing to do), or anything while tracing (the event fires before the
 * NULL check).
 */
static __noinline void kfree_rare(const void *obj, uintptr_t caller)
{
	uintptr_t off = (uintptr_t)obj - (uintptr_t)machine.base;

	if (unlikely(READ_ONCE(trace_on)))
		trace_kfree(caller, obj);
	if (off < machine.size)
		__kfree(obj, off);
}

ALLOC_HOT("11")
void kfree(const void *obj)
{
	uintptr_t off = (uintptr_t)obj - (uintptr_t)machine.base;

	if (unlikely(off >= READ_ONCE(machine.kfree_fast_limit))) {
		kfree_rare(obj, _RET_IP_);
		return;
	}
	__kfree(obj, off);
}

struct obj_cgroup *alloc_obj_objcg(const void *obj)
{
	struct page *head = NULL;
	struct slab *slab = virt_to_slab(obj, &head);
	struct slabobj_ext *v;
	uintptr_t off;

	if (!slab) {
		if (head && head->kind == PAGE_KIND_LARGE_KMALLOC && head->memcg_data)
			return (struct obj_cgroup *)(head->memcg_data & ~(uintptr_t)1);
		return NULL;
	}
	v = __atomic_load_n(&slab->obj_exts, __ATOMIC_ACQUIRE);
	off = (uintptr_t)((const char *)obj - slab->base);
	if (!v || off % slab->cache->size)
		return NULL;
	return v[off / slab->cache->size].objcg;
}

struct kmem_cache *alloc_object_cache(const void *addr, bool *large)
{
	struct page *head = NULL;
	struct slab *slab = virt_to_slab(addr, &head);

	if (large)
		*large = false;
	if (!slab) {
		if (head && head->kind == PAGE_KIND_LARGE_KMALLOC &&
		    page_address(head) == addr && large)
			*large = true;
		return NULL;
	}
	if (((const char *)addr - slab->base) % slab->cache->size ||
	    (unsigned int)(((const char *)addr - slab->base) / slab->cache->size) >= slab->objects)
		return NULL;
	return slab->cache;
}

/* ---- flushing, shrinking, destroying ---- */
/*
 * flush_all - empty every CPU slot of s: pending runs first (a run handed
 * back to a full slab puts it on the current CPU's partial list), then the
 * CPU slabs and CPU-partial lists.  Returns the number of slabs discarded.
 */
int flush_all(struct kmem_cache *s)
{
	int freed = 0;

	for (unsigned int cpu = 0; cpu < machine.cpus; cpu++) {
		struct kmem_cache_cpu *c = slot_lock(s, cpu);
		struct pending pend;

		take_pending(c, &pend);
		slot_unlock(c);
		flush_pending(s, &pend);
	}
	for (unsigned int cpu = 0; cpu < machine.cpus; cpu++) {
		struct kmem_cache_cpu *c = slot_lock(s, cpu);
		struct slab *slab = c->slab, *partial = c->partial, *discard = NULL;
		void *fl = c->freelist;

		c->slab = NULL;
		c->freelist = NULL;
		c->partial = NULL;
		if (slab)
			discard = deactivate_slab(s, slab, fl);
		slot_unlock(c);
		if (discard) {
			discard_slab(s, discard);
			freed++;
		}
		if (partial)
			freed += __put_partials(s, partial);
	}
	return freed;
}

int kmem_cache_shrink(struct kmem_cache *s)
{
	int freed = flush_all(s);

	for (unsigned int i = 0; i < machine.nodes; i++) {
		struct kmem_cache_node *n = &s->node[i];
		struct slab *discard = NULL;

		spin_lock(&n->list_lock);
		if (n->partial) {
			struct slab *slab = n->partial;
			unsigned long nr = n->nr_partial;

			for (unsigned long k = 0; k < nr; k++) {
				struct slab *next = slab->next;

				spin_lock(&slab->lock);
				if (!slab->inuse) {
					remove_partial(n, slab);
					slab->next = discard;
					discard = slab;
				}
				spin_unlock(&slab->lock);
				slab = next;
			}
		}
		spin_unlock(&n->list_lock);
		freed += discard_slab_list(s, discard);
	}
	return freed;
}

bool slab_hooks_on;

/* Also fault/'s arm hook: an armed FAULT_SLAB needs every allocation's hooks. */
void slab_update_rare(void)
{
	pthread_mutex_lock(&slab_mutex);
	WRITE_ONCE(slab_hooks_on, READ_ONCE(trace_on) || fault_site_armed(FAULT_SLAB));
	WRITE_ONCE(machine.kmalloc_fast_limit, slab_hooks_on ? 0 : machine.kmalloc_max_cache);
	WRITE_ONCE(machine.kfree_fast_limit, READ_ONCE(trace_on) ? 0 : machine.size);
	for (struct kmem_cache *s = slab_caches; s; s = s->next)
		WRITE_ONCE(s->rare, s->account || slab_hooks_on);
	pthread_mutex_unlock(&slab_mutex);
}

void kmem_cache_shrink_all(void)
{
	pthread_mutex_lock(&slab_mutex);
	for (struct kmem_cache *s = slab_caches; s; s = s->next)
		kmem_cache_shrink(s);
	pthread_mutex_unlock(&slab_mutex);
}

int kmem_cache_destroy(struct kmem_cache *s)
{
	struct kmem_cache **pp;

	if (!s)
		return 0;
	if (s->kmalloc)
		return -EPERM;
	pthread_mutex_lock(&slab_mutex);
	kmem_cache_shrink(s);
	for (unsigned int i = 0; i < machine.nodes; i++) {
		if (atomic_load(&s->node[i].nr_slabs)) {
			pthread_mutex_unlock(&slab_mutex);
			return -EBUSY;
		}
	}
	for (pp = &slab_caches; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&slab_mutex);
	cpu_slab_array_retire(s->cpu_slab);
	s->cpu_slab = NULL;
	kmem_cache_free_struct(s);
	return 0;
}

unsigned long cache_free_on_node_partial(struct kmem_cache *s)
{
	unsigned long nr_free = 0;

	for (unsigned int i = 0; i < machine.nodes; i++) {
		struct kmem_cache_node *n = &s->node[i];

		spin_lock(&n->list_lock);
		if (n->partial) {
			struct slab *slab = n->partial;

			/*
			 * inuse changes under the slab's own lock (a free
			 * need not take list_lock): read it there, list_lock
			 * first as everywhere
			 */
			do {
				spin_lock(&slab->lock);
				nr_free += slab->objects - slab->inuse;
				spin_unlock(&slab->lock);
				slab = slab->next;
			} while (slab != n->partial);
		}
		spin_unlock(&n->list_lock);
	}
	return nr_free;
}
