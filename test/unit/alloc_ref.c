/* SPDX-License-Identifier: MIT */
/*
 * alloc_ref.c - unit tests of alloc/: the soft checks, the reference rules transcribed from
 * docs/kernel-slab.md (§1 kmalloc classes, §2 geometry) and small helpers.
 */
#include "test_alloc.h"

/* ------------------------------------------------------------------ */
/* Soft checks: sweeps report many mismatches before failing.          */

unsigned long soft_errors;

void soft_reset(void)
{
	soft_errors = 0;
}

void soft_done(void)
{
	if (soft_errors) {
		print_error("%lu mismatches\n", soft_errors);
		fail();
	}
}

/* ------------------------------------------------------------------ */
/* Reference rules, transcribed from docs/kernel-slab.md.                          */

static unsigned fls_ul(unsigned long x)
{
	return x ? 64u - (unsigned)__builtin_clzl(x) : 0;
}

/* The kernel's get_order() for PAGE_SIZE 4096 (size >= 1). */
unsigned ref_get_order(unsigned long size)
{
	return size <= PG ? 0 : fls_ul((size - 1) >> 12);
}

/* §1.2: object size of each kmalloc index. */
const unsigned ref_class_size[REF_NR_INDEX] = {
	0, 96, 192, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
};
const char *const ref_class_suffix[REF_NR_INDEX] = {
	NULL, "96", "192", "8", "16", "32", "64", "128", "256", "512",
	"1k", "2k", "4k", "8k",
};
const char *const ref_type_prefix[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = "kmalloc-",
	[KMALLOC_RECLAIM] = "kmalloc-rcl-",
	[KMALLOC_CGROUP] = "kmalloc-cg-",
};
/* A gfp that selects each family (§1.2). */
const gfp_t ref_type_gfp[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = GFP_KERNEL,
	[KMALLOC_RECLAIM] = GFP_KERNEL | __GFP_RECLAIMABLE,
	[KMALLOC_CGROUP] = GFP_KERNEL_ACCOUNT,
};

#define REF_LARGE 0xffu

/* §1.3: size -> index. */
unsigned ref_kmalloc_index(size_t size)
{
	static const unsigned char small[24] = {
		3, 4, 5, 5, 6, 6, 6, 6, 1, 1, 1, 1,
		7, 7, 7, 7, 2, 2, 2, 2, 2, 2, 2, 2,
	};

	if (size == 0)
		return 0;
	if (size <= 192)
		return small[(size - 1) / 8];
	if (size <= 8192)
		return fls_ul(size - 1);
	return REF_LARGE;
}

/* §1.3: kmalloc_size_roundup(). */
size_t ref_roundup(size_t n)
{
	if (n == 0)
		return 0;
	if (n <= 8192)
		return ref_class_size[ref_kmalloc_index(n)];
	if (n <= 4 * MIB)
		return (size_t)PG << ref_get_order(n);
	return n;
}

/* §1.2: a kmalloc cache's alignment: max(8, largest power of 2 dividing size). */
unsigned ref_kmalloc_align(unsigned size)
{
	unsigned a = size & -size;

	return a < 8 ? 8 : a;
}

/* §2.2 calculate_alignment(). */
unsigned ref_align(slab_flags_t flags, unsigned align, unsigned size,
		   unsigned line)
{
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned r = line;

		while (size <= r / 2)
			r /= 2;
		if (align < r)
			align = r;
	}
	if (align < 8)
		align = 8;
	return (align + 7u) & ~7u;
}

unsigned ref_objects(unsigned order, unsigned size)
{
	return (unsigned)(((unsigned long)PG << order) / size);
}

/* §2.5 calculate_order(). */
unsigned ref_calculate_order(unsigned size, unsigned nr_cpus,
			     unsigned min_order, unsigned max_order,
			     unsigned min_objects)
{
	unsigned max_objects, order, lo;

	if (!min_objects)
		min_objects = 4 * (fls_ul(nr_cpus) + 1);
	max_objects = ref_objects(max_order, size);
	if (max_objects < 1)
		max_objects = 1;
	if (min_objects > max_objects)
		min_objects = max_objects;
	lo = ref_get_order((unsigned long)min_objects * size);
	if (lo < min_order)
		lo = min_order;
	if (ref_objects(lo, size) > 32767)
		return ref_get_order((unsigned long)size * 32767) - 1;
	for (unsigned fraction = 16; fraction > 1; fraction /= 2) {
		for (order = lo; order <= max_order; order++) {
			unsigned long slab = (unsigned long)PG << order;

			if (slab % size <= slab / fraction)
				return order;
		}
	}
	return ref_get_order(size);
}

/* §2.7 tuning values. */
static unsigned ref_min_partial(unsigned size)
{
	unsigned v = (fls_ul(size) - 1) / 2;

	return v < 5 ? 5 : v > 10 ? 10 : v;
}

static unsigned ref_cpu_partial(unsigned size)
{
	if (size >= PG)
		return 6;
	if (size >= 1024)
		return 24;
	if (size >= 256)
		return 52;
	return 120;
}

/* §2.2, §2.3, §2.5, §2.7: a dedicated cache's geometry (no ctor, no RCU). */
struct ref_geom ref_cache_geom(unsigned object_size, unsigned align,
			       slab_flags_t flags, unsigned cpus)
{
	struct ref_geom g;

	g.object_size = object_size;
	g.align = ref_align(flags, align, object_size, 64);
	g.size = (object_size + 7u) & ~7u;
	g.offset = (object_size / 2) & ~7u;
	g.size = (g.size + g.align - 1) / g.align * g.align;
	g.order = ref_calculate_order(g.size, cpus, 0, 3, 0);
	g.objects = ref_objects(g.order, g.size);
	g.min_partial = ref_min_partial(g.size);
	g.cpu_partial = ref_cpu_partial(g.size);
	g.cpu_partial_slabs = (g.cpu_partial * 2 + g.objects - 1) / g.objects;
	return g;
}

/* A kmalloc cache: align per §1.2, no HWCACHE_ALIGN. */
struct ref_geom ref_kmalloc_geom(unsigned idx, unsigned cpus)
{
	unsigned size = ref_class_size[idx];

	return ref_cache_geom(size, ref_kmalloc_align(size), 0, cpus);
}

void expect_geom(const struct kmem_cache *s, const struct ref_geom *g,
		 const char *what)
{
	struct kmem_cache_info info;

	memset(&info, 0, sizeof(info));
	kmem_cache_info(s, &info);
	SOFT_EQ(info.object_size, g->object_size, "%s object_size", what);
	SOFT_EQ(info.size, g->size, "%s size (stride)", what);
	SOFT_EQ(info.align, g->align, "%s align", what);
	SOFT_EQ(info.offset, g->offset, "%s free pointer offset", what);
	SOFT_EQ(info.order, g->order, "%s order", what);
	SOFT_EQ(info.objects, g->objects, "%s objects per slab", what);
	SOFT_EQ(info.min_partial, g->min_partial, "%s min_partial", what);
	SOFT_EQ(info.cpu_partial, g->cpu_partial, "%s cpu_partial", what);
	SOFT_EQ(info.cpu_partial_slabs, g->cpu_partial_slabs,
		"%s cpu_partial_slabs", what);
}

void pin(int cpu)
{
	EXPECT_EQ(alloc_pin_cpu(cpu), 0, "alloc_pin_cpu(%d)", cpu);
	EXPECT_EQ(alloc_current_cpu(), cpu, "alloc_current_cpu() after pin");
}

struct page *head_of(const void *p)
{
	struct page *pg = virt_to_page(p);

	assert_non_null(pg);
	return compound_head(pg);
}

void stats(struct alloc_stats *st)
{
	memset(st, 0, sizeof(*st));
	alloc_stats(st);
}

void expect_stats_equal(const struct alloc_stats *a,
			const struct alloc_stats *b, const char *when)
{
	EXPECT_EQ(a->pages_free, b->pages_free, "pages_free %s", when);
	EXPECT_EQ(a->pages_slab, b->pages_slab, "pages_slab %s", when);
	EXPECT_EQ(a->pages_large_kmalloc, b->pages_large_kmalloc,
		  "pages_large_kmalloc %s", when);
	EXPECT_EQ(a->pages_alloc, b->pages_alloc, "pages_alloc %s", when);
}

