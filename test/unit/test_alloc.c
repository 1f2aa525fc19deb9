/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of alloc/, written from alloc/alloc.h and
 * docs/kernel-slab.md (§1 kmalloc size classes, §2 kmem_cache_create
 * geometry, §3 SLUB paths, §10 tracepoints, §11 /proc/slabinfo) without
 * looking at the implementation.  Every expected number is either a value the
 * docs/kernel-slab.md states (copied into a table here) or computed by the small reference
 * functions below (ref_*), which transcribe docs/kernel-slab.md's rules; the
 * implementation's own calculate_order()/calculate_alignment() are tested
 * against them, never used to compute expectations.
 *
 * Machines: each group builds one with alloc_init() and tears it down with
 * alloc_exit(); after every test, alloc_check() must return 0.
 */
#include "alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
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
#include "defer.h"

#define MIB		(1024ul * 1024ul)
#define PG		4096u		/* every machine here has 4 KiB pages */
#define MACHINE_MEM	(64ul * MIB)

/* ------------------------------------------------------------------ */
/* Soft checks: sweeps report many mismatches before failing.          */

static unsigned long soft_errors;

static void soft_reset(void)
{
	soft_errors = 0;
}

#define SOFT_EQ(got, exp, ...) do {					\
	unsigned long long g_ = (unsigned long long)(got);		\
	unsigned long long e_ = (unsigned long long)(exp);		\
	if (g_ != e_) {							\
		if (soft_errors < 40) {					\
			print_error("%s:%d: ", __FILE__, __LINE__);	\
			print_error(__VA_ARGS__);			\
			print_error(": got %llu, expected %llu\n", g_, e_); \
		}							\
		soft_errors++;						\
	}								\
} while (0)

#define EXPECT_STR(got, exp, ...) do {					\
	const char *g_ = (got), *e_ = (exp);				\
	if (!g_ || strcmp(g_, e_) != 0) {				\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error(": got \"%s\", expected \"%s\"\n",		\
			    g_ ? g_ : "(null)", e_);			\
		fail();							\
	}								\
} while (0)

static void soft_done(void)
{
	if (soft_errors) {
		print_error("%lu mismatches\n", soft_errors);
		fail();
	}
}

/*
 * Deferred failures: reported at once, but the test goes on (so that one
 * wrong value does not hide the checks after it); the teardown fails the test.
 */

/* kmem_cache_destroy() must return 0 once every object was freed; if it
 * does not, report it and shrink and retry so that the test can go on. */
#define EXPECT_DESTROY(s, what) do {					\
	int r_ = kmem_cache_destroy(s);					\
	DEFER_EQ(r_, 0, "kmem_cache_destroy(%s) with no live object", what); \
	if (r_) {							\
		kmem_cache_shrink(s);					\
		kmem_cache_shrink(s);					\
		EXPECT_EQ(kmem_cache_destroy(s), 0, "destroy %s after shrinking", what); \
	}								\
} while (0)

/* ------------------------------------------------------------------ */
/* Reference rules, transcribed from docs/kernel-slab.md.                          */

static unsigned fls_ul(unsigned long x)
{
	return x ? 64u - (unsigned)__builtin_clzl(x) : 0;
}

/* The kernel's get_order() for PAGE_SIZE 4096 (size >= 1). */
static unsigned ref_get_order(unsigned long size)
{
	return size <= PG ? 0 : fls_ul((size - 1) >> 12);
}

/* §1.2: object size of each kmalloc index. */
static const unsigned ref_class_size[NR_KMALLOC_INDEX] = {
	0, 96, 192, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
};
static const char *const ref_class_suffix[NR_KMALLOC_INDEX] = {
	NULL, "96", "192", "8", "16", "32", "64", "128", "256", "512",
	"1k", "2k", "4k", "8k",
};
static const char *const ref_type_prefix[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = "kmalloc-",
	[KMALLOC_RECLAIM] = "kmalloc-rcl-",
	[KMALLOC_CGROUP] = "kmalloc-cg-",
};
/* A gfp that selects each family (§1.2). */
static const gfp_t ref_type_gfp[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = GFP_KERNEL,
	[KMALLOC_RECLAIM] = GFP_KERNEL | __GFP_RECLAIMABLE,
	[KMALLOC_CGROUP] = GFP_KERNEL_ACCOUNT,
};

#define REF_LARGE 0xffu

/* §1.3: size -> index. */
static unsigned ref_kmalloc_index(size_t size)
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
static size_t ref_roundup(size_t n)
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
static unsigned ref_kmalloc_align(unsigned size)
{
	unsigned a = size & -size;

	return a < 8 ? 8 : a;
}

/* §2.2 calculate_alignment(). */
static unsigned ref_align(slab_flags_t flags, unsigned align, unsigned size,
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

static unsigned ref_objects(unsigned order, unsigned size)
{
	return (unsigned)(((unsigned long)PG << order) / size);
}

/* §2.5 calculate_order(). */
static unsigned ref_calculate_order(unsigned size, unsigned nr_cpus,
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

struct ref_geom {
	unsigned object_size, size, align, offset, order, objects;
	unsigned min_partial, cpu_partial, cpu_partial_slabs;
};

/* §2.2, §2.3, §2.5, §2.7: a dedicated cache's geometry (no ctor, no RCU). */
static struct ref_geom ref_cache_geom(unsigned object_size, unsigned align,
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
static struct ref_geom ref_kmalloc_geom(unsigned idx, unsigned cpus)
{
	unsigned size = ref_class_size[idx];

	return ref_cache_geom(size, ref_kmalloc_align(size), 0, cpus);
}

static void expect_geom(const struct kmem_cache *s, const struct ref_geom *g,
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

/* ------------------------------------------------------------------ */
/* Machines and the per-test invariant check.                           */

static int machine_up(unsigned cpus, uint64_t memory, unsigned trace_entries)
{
	struct alloc_config cfg;
	int r;

	alloc_config_defaults(&cfg);
	cfg.memory = memory;
	cfg.cpus = cpus;
	if (trace_entries)
		cfg.trace_entries = trace_entries;
	deferred_failures = 0;
	r = alloc_init(&cfg);
	if (r) {
		print_error("alloc_init(cpus=%u, memory=%llu) = %d\n", cpus,
			    (unsigned long long)memory, r);
		return -1;
	}
	return 0;
}

static int setup_cpus4(void **state)
{
	(void)state;
	return machine_up(4, MACHINE_MEM, 0);
}

static int setup_cpus8(void **state)
{
	(void)state;
	return machine_up(8, MACHINE_MEM, 0);
}

static int setup_online(void **state)
{
	(void)state;
	return machine_up(0, 128 * MIB, 0);
}

static int setup_trace16(void **state)
{
	(void)state;
	return machine_up(4, MACHINE_MEM, 16);
}

static int setup_stress(void **state)
{
	(void)state;
	return machine_up(4, 128 * MIB, 0);
}

/*
 * After every test: the machine's invariants must hold.  Each test gets a
 * fresh machine of its group's configuration, so that a failing test (which
 * may leave objects behind) cannot make the next one fail.
 */
static int check_and_down(void **state)
{
	char msg[1024] = "";
	int r;

	(void)state;
	alloc_pin_cpu(-1);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	r = alloc_check(msg, sizeof(msg));
	alloc_exit();
	if (r != 0) {
		print_error("alloc_check() = %d: %s\n", r, msg);
		fail_msg("alloc_check failed after the test");
	}
	if (deferred_failures) {
		unsigned long n = deferred_failures;

		deferred_failures = 0;
		fail_msg("%lu deferred failures (above)", n);
	}
	return 0;
}

#define T4(f)	cmocka_unit_test_setup_teardown(f, setup_cpus4, check_and_down)
#define T8(f)	cmocka_unit_test_setup_teardown(f, setup_cpus8, check_and_down)
#define T16(f)	cmocka_unit_test_setup_teardown(f, setup_trace16, check_and_down)
#define TS(f)	cmocka_unit_test_setup_teardown(f, setup_stress, check_and_down)
#define TO(f)	cmocka_unit_test_setup_teardown(f, setup_online, check_and_down)

static void pin(int cpu)
{
	EXPECT_EQ(alloc_pin_cpu(cpu), 0, "alloc_pin_cpu(%d)", cpu);
	EXPECT_EQ(alloc_current_cpu(), cpu, "alloc_current_cpu() after pin");
}

static struct page *head_of(const void *p)
{
	struct page *pg = virt_to_page(p);

	assert_non_null(pg);
	return compound_head(pg);
}

static void stats(struct alloc_stats *st)
{
	memset(st, 0, sizeof(*st));
	alloc_stats(st);
}

static void expect_stats_equal(const struct alloc_stats *a,
			       const struct alloc_stats *b, const char *when)
{
	EXPECT_EQ(a->pages_free, b->pages_free, "pages_free %s", when);
	EXPECT_EQ(a->pages_slab, b->pages_slab, "pages_slab %s", when);
	EXPECT_EQ(a->pages_large_kmalloc, b->pages_large_kmalloc,
		  "pages_large_kmalloc %s", when);
	EXPECT_EQ(a->pages_alloc, b->pages_alloc, "pages_alloc %s", when);
}

/* ================================================================== */
/* Group: init (no machine)                                            */

static void test_config_defaults(void **state)
{
	struct alloc_config c;

	(void)state;
	memset(&c, 0xa5, sizeof(c));
	alloc_config_defaults(&c);
	EXPECT_EQ(c.memory, 1ull << 30, "default memory");
	EXPECT_EQ(c.page_size, 4096, "default page_size");
	EXPECT_EQ(c.cpus, 0, "default cpus");
	EXPECT_EQ(c.nodes, 1, "default nodes");
	EXPECT_EQ(c.cache_line, 64, "default cache_line");
	EXPECT_EQ(c.slub_min_order, 0, "default slub_min_order");
	EXPECT_EQ(c.slub_max_order, 3, "default slub_max_order");
	EXPECT_EQ(c.slub_min_objects, 0, "default slub_min_objects");
	EXPECT_EQ(c.trace_entries, 65536, "default trace_entries");
	EXPECT_EQ(c.no_rseq, false, "default no_rseq");
}

static void test_init_errors(void **state)
{
	struct alloc_config c;

	(void)state;
	alloc_config_defaults(&c);
	c.memory = MACHINE_MEM;
	c.page_size = 3000;
	EXPECT_EQ(alloc_init(&c), -EINVAL, "page_size 3000");

	alloc_config_defaults(&c);
	c.memory = MACHINE_MEM + PG;	/* not a multiple of 4 MiB */
	EXPECT_EQ(alloc_init(&c), -EINVAL, "memory not a multiple of the largest block");

	alloc_config_defaults(&c);
	c.memory = MACHINE_MEM;
	c.cpus = ALLOC_MAX_CPUS + 1;
	EXPECT_EQ(alloc_init(&c), -EINVAL, "cpus > ALLOC_MAX_CPUS");

	alloc_config_defaults(&c);
	c.memory = MACHINE_MEM;
	c.nodes = ALLOC_MAX_NODES + 1;
	EXPECT_EQ(alloc_init(&c), -EINVAL, "nodes > ALLOC_MAX_NODES");

	/* A good machine after the failures, then -EBUSY for a second one. */
	alloc_config_defaults(&c);
	c.memory = MACHINE_MEM;
	c.cpus = 4;
	c.no_rseq = true;
	EXPECT_EQ(alloc_init(&c), 0, "good config after failures");
	EXPECT_EQ(alloc_init(&c), -EBUSY, "second machine");
	EXPECT_EQ(alloc_page_size(), 4096, "alloc_page_size");
	EXPECT_EQ(alloc_page_shift(), 12, "alloc_page_shift");
	EXPECT_EQ(alloc_nr_cpus(), 4, "alloc_nr_cpus");
	EXPECT_EQ(alloc_nr_nodes(), 1, "alloc_nr_nodes");
	EXPECT_EQ(alloc_uses_rseq(), false, "no_rseq=true forces the lock path");
	EXPECT_EQ(KMALLOC_MAX_CACHE_SIZE, 8192, "KMALLOC_MAX_CACHE_SIZE");
	EXPECT_EQ(KMALLOC_MAX_SIZE, 4 * MIB, "KMALLOC_MAX_SIZE");
	{
		struct alloc_stats st;

		stats(&st);
		EXPECT_EQ(st.pages_total, MACHINE_MEM / PG, "pages_total");
		void *p = kmalloc(100, GFP_KERNEL);
		assert_non_null(p);
		kfree(p);
	}
	alloc_exit();
	/* And the machine can be built again after alloc_exit(). */
	EXPECT_EQ(alloc_init(&c), 0, "alloc_init after alloc_exit");
	alloc_exit();
}

/* ================================================================== */
/* Group: kmalloc classes, families, geometry (cpus = 4)               */

static void test_kmalloc_index_table(void **state)
{
	(void)state;
	soft_reset();
	SOFT_EQ(kmalloc_index(0), 0, "kmalloc_index(0)");
	for (size_t n = 1; n <= 8192; n++) {
		unsigned exp = ref_kmalloc_index(n);

		SOFT_EQ(kmalloc_index(n), exp, "kmalloc_index(%zu)", n);
		SOFT_EQ(kmalloc_size_roundup(n), ref_class_size[exp],
			"kmalloc_size_roundup(%zu)", n);
	}
	for (unsigned i = 1; i < NR_KMALLOC_INDEX; i++)
		SOFT_EQ(kmalloc_size(i), ref_class_size[i], "kmalloc_size(%u)", i);
	/* Spot checks straight from §1.3's text. */
	SOFT_EQ(kmalloc_index(200), 8, "kmalloc_index(200)");
	SOFT_EQ(kmalloc_index(2312), 12, "kmalloc_index(2312)");
	SOFT_EQ(kmalloc_index(65), 1, "kmalloc_index(65)");
	SOFT_EQ(kmalloc_index(96), 1, "kmalloc_index(96)");
	SOFT_EQ(kmalloc_index(97), 7, "kmalloc_index(97)");
	SOFT_EQ(kmalloc_index(129), 2, "kmalloc_index(129)");
	SOFT_EQ(kmalloc_index(193), 8, "kmalloc_index(193)");

	static const size_t large[] = {
		8193, 10000, 16384, 1u << 20, 4 * MIB, 4 * MIB + 1, 64 * MIB,
	};
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		unsigned idx = kmalloc_index(large[i]);

		if (idx < NR_KMALLOC_INDEX) {
			print_error("kmalloc_index(%zu) = %u: expected >= %d (large)\n",
				    large[i], idx, NR_KMALLOC_INDEX);
			soft_errors++;
		}
		SOFT_EQ(kmalloc_size_roundup(large[i]), ref_roundup(large[i]),
			"kmalloc_size_roundup(%zu)", large[i]);
	}
	SOFT_EQ(kmalloc_size_roundup(8193), 16384, "kmalloc_size_roundup(8193)");
	SOFT_EQ(kmalloc_size_roundup(16385), 32768, "kmalloc_size_roundup(16385)");
	SOFT_EQ(kmalloc_size_roundup(4 * MIB), 4 * MIB, "kmalloc_size_roundup(4M)");
	SOFT_EQ(kmalloc_size_roundup(4 * MIB + 1), 4 * MIB + 1,
		"kmalloc_size_roundup(4M+1)");
	SOFT_EQ(kmalloc_size_roundup(0), 0, "kmalloc_size_roundup(0)");
	soft_done();
}

static const size_t probe_sizes[] = {
	1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 80, 95, 96, 97, 127,
	128, 129, 160, 191, 192, 193, 200, 255, 256, 257, 511, 512, 513, 1000,
	1023, 1024, 1025, 2047, 2048, 2049, 2312, 4095, 4096, 4097, 8191, 8192,
};
#define NPROBE (sizeof(probe_sizes) / sizeof(probe_sizes[0]))

static void test_kmalloc_ksize_and_routing(void **state)
{
	(void)state;
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (size_t i = 0; i < NPROBE; i++) {
			size_t n = probe_sizes[i];
			unsigned idx = ref_kmalloc_index(n);
			bool large = true;
			void *p = kmalloc(n, ref_type_gfp[t]);

			if (!p) {
				print_error("kmalloc(%zu, type %u) = NULL\n", n, t);
				fail();
			}
			SOFT_EQ(alloc_in_arena(p), true, "kmalloc(%zu) in arena", n);
			SOFT_EQ(ksize(p), ref_class_size[idx], "ksize(kmalloc(%zu)) type %u", n, t);
			SOFT_EQ((uintptr_t)alloc_object_cache(p, &large),
				(uintptr_t)kmalloc_cache(t, idx),
				"cache of kmalloc(%zu, %s...)", n, ref_type_prefix[t]);
			SOFT_EQ(large, false, "large flag of kmalloc(%zu)", n);
			SOFT_EQ(head_of(p)->kind, PAGE_KIND_SLAB, "page kind of kmalloc(%zu)", n);
			kfree(p);
		}
	}

	/* §1.4: large kmalloc. */
	static const size_t large_sizes[] = {
		8193, 10000, 16384, 16385, 100000, 1u << 20, 4 * MIB,
	};
	for (unsigned a = 0; a < 2; a++) {
		gfp_t gfp = a ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;

		for (size_t i = 0; i < sizeof(large_sizes) / sizeof(large_sizes[0]); i++) {
			size_t n = large_sizes[i];
			unsigned order = ref_get_order(n);
			struct alloc_stats before, during, after;
			bool large = false;
			void *p;

			stats(&before);
			p = kmalloc(n, gfp);
			if (!p) {
				print_error("kmalloc(%zu) (large) = NULL\n", n);
				fail();
			}
			stats(&during);
			SOFT_EQ((uintptr_t)p % PG, 0, "large kmalloc(%zu) page aligned", n);
			SOFT_EQ(alloc_in_arena(p), true, "large kmalloc(%zu) in arena", n);
			SOFT_EQ(ksize(p), (size_t)PG << order, "ksize(kmalloc(%zu))", n);
			SOFT_EQ(head_of(p)->kind, PAGE_KIND_LARGE_KMALLOC,
				"page kind of kmalloc(%zu)", n);
			SOFT_EQ(head_of(p), virt_to_page(p), "kmalloc(%zu) is a head page", n);
			SOFT_EQ(head_of(p)->order, order, "page order of kmalloc(%zu)", n);
			SOFT_EQ(head_of((char *)p + n - 1), virt_to_page(p),
				"compound_head of the last byte of kmalloc(%zu)", n);
			SOFT_EQ((uintptr_t)alloc_object_cache(p, &large), 0,
				"alloc_object_cache(large kmalloc(%zu))", n);
			SOFT_EQ(large, true, "large flag of kmalloc(%zu)", n);
			SOFT_EQ(during.pages_large_kmalloc - before.pages_large_kmalloc,
				1ul << order, "pages_large_kmalloc delta for kmalloc(%zu)", n);
			memset(p, 0x33, n);
			kfree(p);
			stats(&after);
			SOFT_EQ(after.pages_large_kmalloc, before.pages_large_kmalloc,
				"pages_large_kmalloc after kfree(kmalloc(%zu))", n);
			SOFT_EQ(after.pages_free, before.pages_free,
				"pages_free after kfree(kmalloc(%zu))", n);
		}
	}
	SOFT_EQ((uintptr_t)kmalloc(4 * MIB + 1, GFP_KERNEL), 0,
		"kmalloc(KMALLOC_MAX_SIZE + 1) must fail");
	SOFT_EQ((uintptr_t)kmalloc(1ul << 40, GFP_KERNEL), 0, "kmalloc(1 TiB)");
	soft_done();
}

static void test_kmalloc_zero_size(void **state)
{
	struct alloc_stats a, b;

	(void)state;
	kmem_cache_shrink_all();
	stats(&a);
	assert_ptr_equal(kmalloc(0, GFP_KERNEL), ZERO_SIZE_PTR);
	assert_ptr_equal(kmalloc(0, GFP_KERNEL_ACCOUNT), ZERO_SIZE_PTR);
	assert_ptr_equal(kzalloc(0, GFP_KERNEL), ZERO_SIZE_PTR);
	kfree(NULL);
	kfree(ZERO_SIZE_PTR);
	assert_true(ZERO_OR_NULL_PTR(ZERO_SIZE_PTR));
	assert_true(ZERO_OR_NULL_PTR(NULL));
	kmem_cache_shrink_all();
	stats(&b);
	expect_stats_equal(&b, &a, "after kmalloc(0)/kfree(NULL)/kfree(ZERO_SIZE_PTR)");
}

static void test_kmalloc_types_and_names(void **state)
{
	(void)state;
	EXPECT_EQ(kmalloc_type(GFP_KERNEL), KMALLOC_NORMAL, "kmalloc_type(GFP_KERNEL)");
	EXPECT_EQ(kmalloc_type(GFP_KERNEL | __GFP_ZERO), KMALLOC_NORMAL,
		  "kmalloc_type(GFP_KERNEL|__GFP_ZERO)");
	EXPECT_EQ(kmalloc_type(GFP_ATOMIC), KMALLOC_NORMAL, "kmalloc_type(GFP_ATOMIC)");
	EXPECT_EQ(kmalloc_type(0), KMALLOC_NORMAL, "kmalloc_type(0)");
	EXPECT_EQ(kmalloc_type(__GFP_RECLAIMABLE), KMALLOC_RECLAIM,
		  "kmalloc_type(__GFP_RECLAIMABLE)");
	EXPECT_EQ(kmalloc_type(GFP_KERNEL | __GFP_RECLAIMABLE), KMALLOC_RECLAIM,
		  "kmalloc_type(GFP_KERNEL|__GFP_RECLAIMABLE)");
	EXPECT_EQ(kmalloc_type(__GFP_ACCOUNT), KMALLOC_CGROUP, "kmalloc_type(__GFP_ACCOUNT)");
	EXPECT_EQ(kmalloc_type(GFP_KERNEL_ACCOUNT), KMALLOC_CGROUP,
		  "kmalloc_type(GFP_KERNEL_ACCOUNT)");
	EXPECT_EQ(kmalloc_type(__GFP_ACCOUNT | __GFP_RECLAIMABLE), KMALLOC_RECLAIM,
		  "kmalloc_type(__GFP_ACCOUNT|__GFP_RECLAIMABLE)");
	EXPECT_EQ(kmalloc_type(GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE), KMALLOC_RECLAIM,
		  "kmalloc_type(GFP_KERNEL_ACCOUNT|__GFP_RECLAIMABLE)");

	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (unsigned idx = 1; idx < NR_KMALLOC_INDEX; idx++) {
			char name[64];
			struct kmem_cache *s = kmalloc_cache(t, idx);
			struct kmem_cache_info info;

			snprintf(name, sizeof(name), "%s%s", ref_type_prefix[t],
				 ref_class_suffix[idx]);
			if (!s) {
				print_error("kmalloc_cache(%u, %u) = NULL (%s)\n", t, idx, name);
				fail();
			}
			EXPECT_STR(kmem_cache_name(s), name, "kmem_cache_name(kmalloc_cache(%u, %u))", t, idx);
			memset(&info, 0, sizeof(info));
			kmem_cache_info(s, &info);
			EXPECT_STR(info.name, name, "kmem_cache_info name");
			EXPECT_EQ((uintptr_t)kmem_cache_find(name), (uintptr_t)s,
				  "kmem_cache_find(\"%s\")", name);
			/* §1.2 flags of each family. */
			EXPECT_EQ(!!(info.flags & SLAB_ACCOUNT), t == KMALLOC_CGROUP,
				  "%s has SLAB_ACCOUNT", name);
			EXPECT_EQ(!!(info.flags & SLAB_RECLAIM_ACCOUNT), t == KMALLOC_RECLAIM,
				  "%s has SLAB_RECLAIM_ACCOUNT", name);
			/* Distinct caches per family. */
			for (unsigned t2 = 0; t2 < t; t2++)
				assert_ptr_not_equal(kmalloc_cache(t2, idx), s);
		}
	}
}

static void test_kmalloc_cache_geometry(void **state)
{
	unsigned cpus = alloc_nr_cpus();

	(void)state;
	assert_int_equal(cpus, 4);
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (unsigned idx = 1; idx < NR_KMALLOC_INDEX; idx++) {
			struct ref_geom g = ref_kmalloc_geom(idx, cpus);
			char what[64];

			snprintf(what, sizeof(what), "%s%s", ref_type_prefix[t],
				 ref_class_suffix[idx]);
			expect_geom(kmalloc_cache(t, idx), &g, what);
		}
	}
	/* §1.2's alignment column, stated outright. */
	{
		struct kmem_cache_info info;

		kmem_cache_info(kmalloc_cache(KMALLOC_NORMAL, 1), &info);
		SOFT_EQ(info.align, 32, "kmalloc-96 align");
		kmem_cache_info(kmalloc_cache(KMALLOC_NORMAL, 2), &info);
		SOFT_EQ(info.align, 64, "kmalloc-192 align");
		kmem_cache_info(kmalloc_cache(KMALLOC_NORMAL, 13), &info);
		SOFT_EQ(info.align, 8192, "kmalloc-8k align");
	}
	soft_done();
}

struct align_case {
	slab_flags_t flags;
	unsigned align, size, line, expect;
};

static void test_calculate_alignment(void **state)
{
	static const struct align_case cases[] = {
		/* §2.2's examples. */
		{ SLAB_HWCACHE_ALIGN, 0, 24, 64, 32 },
		{ SLAB_HWCACHE_ALIGN, 0, 40, 64, 64 },
		{ SLAB_HWCACHE_ALIGN, 0, 2312, 64, 64 },
		/* The halving loop by hand: while size <= r/2, r /= 2. */
		{ SLAB_HWCACHE_ALIGN, 0, 8, 64, 8 },	/* 64 32 16 8 */
		{ SLAB_HWCACHE_ALIGN, 0, 16, 64, 16 },
		{ SLAB_HWCACHE_ALIGN, 0, 17, 64, 32 },
		{ SLAB_HWCACHE_ALIGN, 0, 32, 64, 32 },
		{ SLAB_HWCACHE_ALIGN, 0, 33, 64, 64 },
		{ SLAB_HWCACHE_ALIGN, 0, 1, 64, 8 },	/* r = 1, then min 8 */
		{ SLAB_HWCACHE_ALIGN, 0, 4, 64, 8 },
		{ SLAB_HWCACHE_ALIGN, 0, 64, 64, 64 },
		{ SLAB_HWCACHE_ALIGN, 0, 100, 128, 128 },
		{ SLAB_HWCACHE_ALIGN, 0, 60, 128, 64 },
		{ SLAB_HWCACHE_ALIGN, 0, 2312, 32, 32 },
		{ SLAB_HWCACHE_ALIGN, 0, 24, 32, 32 },
		/* Explicit align: max with the line's, then min 8, then x8. */
		{ SLAB_HWCACHE_ALIGN, 128, 24, 64, 128 },
		{ SLAB_HWCACHE_ALIGN, 16, 2312, 64, 64 },
		{ SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT, 0, 24, 64, 32 },
		{ 0, 0, 24, 64, 8 },
		{ 0, 0, 1, 64, 8 },
		{ 0, 0, 2312, 64, 8 },
		{ 0, 4, 24, 64, 8 },
		{ 0, 16, 24, 64, 16 },
		{ 0, 256, 10, 64, 256 },
		{ 0, 12, 24, 64, 16 },			/* ALIGN(12, 8) */
		{ SLAB_ACCOUNT | SLAB_RECLAIM_ACCOUNT, 0, 100, 64, 8 },
	};

	(void)state;
	soft_reset();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct align_case *c = &cases[i];

		assert_int_equal(ref_align(c->flags, c->align, c->size, c->line), c->expect);
		SOFT_EQ(calculate_alignment(c->flags, c->align, c->size, c->line), c->expect,
			"calculate_alignment(flags %#x, align %u, size %u, line %u)",
			c->flags, c->align, c->size, c->line);
	}
	static const unsigned lines[] = { 32, 64, 128 };
	static const unsigned aligns[] = { 0, 8, 16, 64, 512 };
	for (unsigned size = 1; size <= 4200; size++)
		for (unsigned l = 0; l < 3; l++)
			for (unsigned a = 0; a < 5; a++)
				for (unsigned f = 0; f < 2; f++) {
					slab_flags_t fl = f ? SLAB_HWCACHE_ALIGN : 0;

					SOFT_EQ(calculate_alignment(fl, aligns[a], size, lines[l]),
						ref_align(fl, aligns[a], size, lines[l]),
						"calculate_alignment(%#x, %u, %u, %u)", fl,
						aligns[a], size, lines[l]);
				}
	soft_done();
}

struct order_row {
	unsigned size, order, objects;
};

static void check_order_table(const struct order_row *rows, size_t n, unsigned cpus)
{
	for (size_t i = 0; i < n; i++) {
		unsigned o = ref_calculate_order(rows[i].size, cpus, 0, 3, 0);

		/* The table is hand-computed; the reference must agree with it. */
		SOFT_EQ(o, rows[i].order, "reference order, size %u, %u cpus", rows[i].size, cpus);
		SOFT_EQ(ref_objects(rows[i].order, rows[i].size), rows[i].objects,
			"table objects, size %u, %u cpus", rows[i].size, cpus);
		o = calculate_order(rows[i].size, cpus, 0, 3, 0);
		SOFT_EQ(o, rows[i].order, "calculate_order(%u, %u cpus, 0, 3, 0)",
			rows[i].size, cpus);
	}
}

static void test_calculate_order(void **state)
{
	/* §2.5: the 8-CPU table (min_objects 20). */
	static const struct order_row cpu8[] = {
		{ 8, 0, 512 }, { 16, 0, 256 }, { 32, 0, 128 }, { 64, 0, 64 },
		{ 96, 0, 42 }, { 128, 0, 32 }, { 192, 0, 21 }, { 256, 1, 32 },
		{ 512, 2, 32 }, { 1024, 3, 32 }, { 2048, 3, 16 }, { 4096, 3, 8 },
		{ 8192, 3, 4 }, { 2368, 3, 13 }, { 2312, 3, 14 },
	};
	/* 2 CPUs: min_objects 4 * (fls(2) + 1) = 12. */
	static const struct order_row cpu2[] = {
		{ 8, 0, 512 }, { 16, 0, 256 }, { 32, 0, 128 }, { 64, 0, 64 },
		{ 96, 0, 42 }, { 128, 0, 32 }, { 192, 0, 21 }, { 256, 0, 16 },
		{ 512, 1, 16 }, { 1024, 2, 16 }, { 2048, 3, 16 }, { 4096, 3, 8 },
		{ 8192, 3, 4 },
	};
	/* 1 CPU: min_objects 8. */
	static const struct order_row cpu1[] = {
		{ 8, 0, 512 }, { 16, 0, 256 }, { 32, 0, 128 }, { 64, 0, 64 },
		{ 96, 0, 42 }, { 128, 0, 32 }, { 192, 0, 21 }, { 256, 0, 16 },
		{ 512, 0, 8 }, { 1024, 1, 8 }, { 2048, 2, 8 }, { 4096, 3, 8 },
		{ 8192, 3, 4 },
	};
	/* 4 CPUs: min_objects 16. */
	static const struct order_row cpu4[] = {
		{ 96, 0, 42 }, { 192, 0, 21 }, { 256, 0, 16 }, { 512, 1, 16 },
		{ 1024, 2, 16 }, { 2048, 3, 16 }, { 4096, 3, 8 }, { 8192, 3, 4 },
		{ 2368, 3, 13 },
	};

	(void)state;
	soft_reset();
	check_order_table(cpu8, sizeof(cpu8) / sizeof(cpu8[0]), 8);
	check_order_table(cpu2, sizeof(cpu2) / sizeof(cpu2[0]), 2);
	check_order_table(cpu1, sizeof(cpu1) / sizeof(cpu1[0]), 1);
	check_order_table(cpu4, sizeof(cpu4) / sizeof(cpu4[0]), 4);

	/* Hand-computed corners. */
	/* min_order 10: 4M/8 objects > 32767 -> get_order(8 * 32767) - 1 = 5. */
	SOFT_EQ(calculate_order(8, 8, 10, 10, 0), 5, "calculate_order(8, 8, 10, 10, 0)");
	/* A 4 MiB object: no order <= 3 fits, get_order(4M) = 10. */
	SOFT_EQ(calculate_order(4 * MIB, 4, 0, 3, 0), 10, "calculate_order(4M)");
	/* min_objects 100 for 64 bytes: get_order(6400) = 1, no waste. */
	SOFT_EQ(calculate_order(64, 8, 0, 3, 100), 1, "calculate_order(64, min_objects 100)");
	/* max_order 0: 3000 bytes wastes 1096 of 4096: only fraction 2 accepts. */
	SOFT_EQ(calculate_order(3000, 8, 0, 0, 0), 0, "calculate_order(3000, max 0)");
	/* max_order 0 and 5000 bytes: nothing fits, get_order(5000) = 1. */
	SOFT_EQ(calculate_order(5000, 8, 0, 0, 0), 1, "calculate_order(5000, max 0)");
	/* min_order 2 for 8-byte objects. */
	SOFT_EQ(calculate_order(8, 8, 2, 3, 0), 2, "calculate_order(8, min 2)");
	SOFT_EQ(calculate_order(4096, 8, 0, 1, 0), 1, "calculate_order(4096, max 1)");
	/* 5000 bytes, 8 CPUs: 6 objects at order 3 waste 2768 > 2048; 1/8 ok. */
	SOFT_EQ(calculate_order(5000, 8, 0, 3, 0), 3, "calculate_order(5000)");
	SOFT_EQ(calculate_order(10000, 8, 0, 3, 0), 3, "calculate_order(10000)");

	/* The reference against the implementation everywhere. */
	static const unsigned cpus[] = { 1, 2, 3, 4, 8, 16, 64, 256 };
	static const unsigned ords[][2] = { { 0, 3 }, { 0, 1 }, { 1, 3 }, { 0, 10 }, { 2, 2 } };
	static const unsigned minobj[] = { 0, 4, 50 };
	for (unsigned size = 8; size <= 8192; size += 8)
		for (size_t c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++)
			for (size_t o = 0; o < sizeof(ords) / sizeof(ords[0]); o++)
				for (size_t m = 0; m < 3; m++)
					SOFT_EQ(calculate_order(size, cpus[c], ords[o][0], ords[o][1], minobj[m]),
						ref_calculate_order(size, cpus[c], ords[o][0], ords[o][1], minobj[m]),
						"calculate_order(%u, %u, %u, %u, %u)", size, cpus[c],
						ords[o][0], ords[o][1], minobj[m]);
	for (unsigned size = 8200; size <= 4 * MIB; size = size * 5 / 4 + 8)
		for (size_t c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++)
			SOFT_EQ(calculate_order(size, cpus[c], 0, 3, 0),
				ref_calculate_order(size, cpus[c], 0, 3, 0),
				"calculate_order(%u, %u, 0, 3, 0)", size, cpus[c]);
	soft_done();
}

static void test_cache_geometry_sweep(void **state)
{
	static const unsigned aligns[] = { 0, 16, 128 };
	static const unsigned extra[] = {
		1, 8, 9, 24, 40, 96, 100, 192, 200, 2312, 2368, 4096, 4097, 8192,
		8193, 10000, 65536, 100000, 1u << 20,
	};
	unsigned cpus = alloc_nr_cpus();
	unsigned sizes[800];
	size_t ns = 0;

	(void)state;
	for (unsigned s = 1; s <= 8192; s += 13)
		sizes[ns++] = s;
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		sizes[ns++] = extra[i];
	soft_reset();
	for (size_t i = 0; i < ns; i++)
		for (unsigned a = 0; a < 3; a++)
			for (unsigned f = 0; f < 2; f++) {
				slab_flags_t fl = f ? SLAB_HWCACHE_ALIGN : 0;
				struct ref_geom g = ref_cache_geom(sizes[i], aligns[a], fl, cpus);
				char name[64];
				int err = 1;
				struct kmem_cache *s;

				snprintf(name, sizeof(name), "geo_%u_%u_%u", sizes[i], aligns[a], f);
				s = kmem_cache_create_err(name, sizes[i], aligns[a], fl, &err);
				if (!s) {
					print_error("kmem_cache_create(%s) failed: %d\n", name, err);
					fail();
				}
				expect_geom(s, &g, name);
				EXPECT_DESTROY(s, name);
			}
	soft_done();
}

/* ------------------------------------------------------------------ */

static void test_object_alignment(void **state)
{
	static void *objs[1100];

	(void)state;
	pin(0);
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (unsigned idx = 1; idx < NR_KMALLOC_INDEX; idx++) {
			unsigned size = ref_class_size[idx];
			unsigned align = ref_kmalloc_align(size);
			struct kmem_cache_info info;
			unsigned n;

			kmem_cache_info(kmalloc_cache(t, idx), &info);
			n = info.objects + 1;	/* cross a slab boundary */
			if (n > 1100)
				n = 1100;
			for (unsigned i = 0; i < n; i++) {
				objs[i] = kmalloc(size, ref_type_gfp[t]);
				assert_non_null(objs[i]);
				SOFT_EQ((uintptr_t)objs[i] % align, 0,
					"%s%s object %u alignment %u", ref_type_prefix[t],
					ref_class_suffix[idx], i, align);
			}
			for (unsigned i = 0; i < n; i++)
				kfree(objs[i]);
		}
	}
	/* Dedicated caches. */
	static const struct { unsigned size, align; slab_flags_t flags; unsigned expect; } cc[] = {
		{ 100, 256, 0, 256 },
		{ 24, 0, SLAB_HWCACHE_ALIGN, 32 },
		{ 2312, 0, SLAB_HWCACHE_ALIGN, 64 },
		{ 40, 0, SLAB_HWCACHE_ALIGN, 64 },
		{ 12, 0, 0, 8 },
		{ 700, 1024, 0, 1024 },
	};
	for (size_t c = 0; c < sizeof(cc) / sizeof(cc[0]); c++) {
		char name[32];
		struct kmem_cache *s;

		snprintf(name, sizeof(name), "align_%zu", c);
		s = kmem_cache_create(name, cc[c].size, cc[c].align, cc[c].flags);
		assert_non_null(s);
		for (unsigned i = 0; i < 100; i++) {
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			assert_non_null(objs[i]);
			SOFT_EQ((uintptr_t)objs[i] % cc[c].expect, 0, "%s object %u alignment %u",
				name, i, cc[c].expect);
		}
		for (unsigned i = 0; i < 100; i++)
			kmem_cache_free(s, objs[i]);
		EXPECT_DESTROY(s, name);
	}
	soft_done();
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

static void test_zeroing(void **state)
{
	static const size_t sizes[] = {
		8, 13, 16, 64, 96, 100, 192, 256, 1000, 2312, 4096, 8192,
		8193, 20000, 1u << 20,
	};
	void *objs[64];

	(void)state;
	pin(1);
	soft_reset();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned k = n > 8192 ? 4 : 64;

		for (unsigned round = 0; round < 2; round++) {
			for (unsigned j = 0; j < k; j++) {
				objs[j] = kmalloc(n, GFP_KERNEL);
				assert_non_null(objs[j]);
				memset(objs[j], 0xa5, ksize(objs[j]));
			}
			for (unsigned j = 0; j < k; j++)
				kfree(objs[j]);
			for (unsigned j = 0; j < k; j++) {
				objs[j] = round ? kmalloc(n, GFP_KERNEL | __GFP_ZERO)
						: kzalloc(n, GFP_KERNEL);
				assert_non_null(objs[j]);
				SOFT_EQ(all_zero(objs[j], ksize(objs[j])), true,
					"%s(%zu) object %u zeroed over ksize %zu",
					round ? "kmalloc __GFP_ZERO" : "kzalloc", n, j,
					ksize(objs[j]));
			}
			for (unsigned j = 0; j < k; j++)
				kfree(objs[j]);
		}
	}
	/* Dedicated cache with __GFP_ZERO: object_size bytes. */
	{
		struct kmem_cache *s = kmem_cache_create("zero_cache", 2312, 0, SLAB_HWCACHE_ALIGN);

		assert_non_null(s);
		for (unsigned j = 0; j < 30; j++) {
			objs[j] = kmem_cache_alloc(s, GFP_KERNEL);
			assert_non_null(objs[j]);
			memset(objs[j], 0x5a, 2312);
		}
		for (unsigned j = 0; j < 30; j++)
			kmem_cache_free(s, objs[j]);
		for (unsigned j = 0; j < 30; j++) {
			objs[j] = kmem_cache_alloc(s, GFP_KERNEL | __GFP_ZERO);
			assert_non_null(objs[j]);
			SOFT_EQ(all_zero(objs[j], 2312), true, "zero_cache object %u zeroed", j);
		}
		for (unsigned j = 0; j < 30; j++)
			kmem_cache_free(s, objs[j]);
		EXPECT_DESTROY(s, "zero_cache");
	}
	/* alloc_pages with __GFP_ZERO. */
	for (unsigned order = 0; order <= 3; order++) {
		struct page *pg = alloc_pages(GFP_KERNEL, order);

		assert_non_null(pg);
		memset(page_address(pg), 0xff, (size_t)PG << order);
		__free_pages(pg, order);
		pg = alloc_pages(GFP_KERNEL | __GFP_ZERO, order);
		assert_non_null(pg);
		SOFT_EQ(all_zero(page_address(pg), (size_t)PG << order), true,
			"alloc_pages(__GFP_ZERO, %u) zeroed", order);
		__free_pages(pg, order);
	}
	soft_done();
}

static void test_reuse_lifo(void **state)
{
	struct kmem_cache *s;

	(void)state;
	pin(1);
	/* §3.3/§3.2 fast paths: a free pushes on the CPU freelist, the next
	 * allocation on the same CPU pops it. */
	for (size_t i = 0; i < NPROBE; i++) {
		void *p = kmalloc(probe_sizes[i], GFP_KERNEL);
		void *q;

		assert_non_null(p);
		kfree(p);
		q = kmalloc(probe_sizes[i], GFP_KERNEL);
		if (q != p) {
			print_error("kmalloc(%zu) after kfree: %p, expected the freed %p\n",
				    probe_sizes[i], q, p);
			fail();
		}
		kfree(q);
	}
	s = kmem_cache_create("reuse", 300, 0, 0);
	assert_non_null(s);
	void *a = kmem_cache_alloc(s, GFP_KERNEL);
	void *b = kmem_cache_alloc(s, GFP_KERNEL);

	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	assert_ptr_equal(kmem_cache_alloc(s, GFP_KERNEL), b);
	assert_ptr_equal(kmem_cache_alloc(s, GFP_KERNEL), a);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	EXPECT_DESTROY(s, "reuse");
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static void fill_pattern(void *p, size_t n, unsigned seed)
{
	unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)(seed * 131u + i * 7u + 1u);
}

static bool check_pattern(const void *p, size_t n, unsigned seed)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i] != (unsigned char)(seed * 131u + i * 7u + 1u))
			return false;
	return true;
}

static void test_distinct_objects(void **state)
{
	static const size_t sizes[] = { 8, 24, 96, 100, 192, 500, 1000, 2312, 4096, 8192, 9000 };
	enum { N = 500 };
	static uintptr_t v[N];

	(void)state;
	pin(2);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];

		for (unsigned i = 0; i < N; i++) {
			void *p = kmalloc(n, i % 3 ? GFP_KERNEL : GFP_KERNEL_ACCOUNT);

			assert_non_null(p);
			fill_pattern(p, n, i);
			v[i] = (uintptr_t)p;
		}
		for (unsigned i = 0; i < N; i++)
			if (!check_pattern((void *)v[i], n, i))
				fail_msg("kmalloc(%zu) object %u was overwritten", n, i);
		for (unsigned i = 0; i < N; i++)
			kfree((void *)v[i]);
		/* Same again in one family, checking the address ranges. */
		for (unsigned i = 0; i < N; i++) {
			v[i] = (uintptr_t)kmalloc(n, GFP_KERNEL);
			assert_true(v[i] != 0);
		}
		qsort(v, N, sizeof(v[0]), cmp_ptr);
		for (unsigned i = 0; i + 1 < N; i++)
			if (v[i] + n > v[i + 1])
				fail_msg("kmalloc(%zu) objects %#lx and %#lx overlap", n,
					 (unsigned long)v[i], (unsigned long)v[i + 1]);
		for (unsigned i = 0; i < N; i++)
			kfree((void *)v[i]);
	}
	/* A dedicated cache. */
	struct kmem_cache *s = kmem_cache_create("distinct", 72, 0, 0);

	assert_non_null(s);
	for (unsigned i = 0; i < N; i++) {
		void *p = kmem_cache_alloc(s, GFP_KERNEL);

		assert_non_null(p);
		fill_pattern(p, 72, i);
		v[i] = (uintptr_t)p;
	}
	for (unsigned i = 0; i < N; i++)
		if (!check_pattern((void *)v[i], 72, i))
			fail_msg("cache object %u was overwritten", i);
	for (unsigned i = 0; i < N; i++)
		kmem_cache_free(s, (void *)v[i]);
	EXPECT_DESTROY(s, "distinct");
}

static void test_fresh_slab_address_order(void **state)
{
	struct ref_geom g = ref_cache_geom(200, 0, 0, 4);
	struct kmem_cache *s;
	void *p[64];

	(void)state;
	pin(3);
	assert_int_equal(g.order, 0);
	assert_int_equal(g.objects, 20);
	s = kmem_cache_create("addr_order", 200, 0, 0);
	assert_non_null(s);
	/* §3.2 step 4: a new slab's freelist is built in address order. */
	for (unsigned i = 0; i <= g.objects; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(p[i]);
	}
	EXPECT_EQ((uintptr_t)p[0] % PG, 0, "first object of a slab at the slab start");
	EXPECT_EQ(head_of(p[0])->kind, PAGE_KIND_SLAB, "slab page kind");
	assert_non_null(head_of(p[0])->slab);
	for (unsigned i = 1; i < g.objects; i++)
		EXPECT_EQ((uintptr_t)p[i], (uintptr_t)p[0] + i * g.size,
			  "object %u of a fresh slab", i);
	EXPECT_EQ((uintptr_t)p[g.objects] % PG, 0, "first object of the second slab");
	for (unsigned i = 0; i <= g.objects; i++)
		kmem_cache_free(s, p[i]);

	/* Same for an order-3 cache: 2368-byte stride, 13 objects. */
	struct kmem_cache *s2 = kmem_cache_create("addr_order3", 2312, 0, SLAB_HWCACHE_ALIGN);

	assert_non_null(s2);
	for (unsigned i = 0; i < 13; i++) {
		p[i] = kmem_cache_alloc(s2, GFP_KERNEL);
		assert_non_null(p[i]);
		EXPECT_EQ((uintptr_t)p[i], (uintptr_t)p[0] + i * 2368u, "order-3 object %u", i);
		EXPECT_EQ(head_of(p[i]), head_of(p[0]), "object %u in the same slab", i);
	}
	EXPECT_EQ((uintptr_t)p[0] % PG, 0, "order-3 slab start");
	EXPECT_EQ(head_of(p[0])->order, 3, "order of the slab's head page");
	EXPECT_EQ(page_to_pfn(head_of(p[0])) % 8, 0, "order-3 slab pfn aligned");
	for (unsigned i = 0; i < 13; i++)
		kmem_cache_free(s2, p[i]);
	EXPECT_DESTROY(s, "addr_order");
	EXPECT_DESTROY(s2, "addr_order3");
}

/* §2.3: the free pointer lives at ALIGN_DOWN(object_size / 2, 8); a free
 * (non-debug) writes nothing else into the object. */
static void test_free_writes_only_freeptr(void **state)
{
	static const struct { unsigned size; slab_flags_t flags; } cc[] = {
		{ 2312, SLAB_HWCACHE_ALIGN }, { 100, 0 }, { 24, 0 }, { 1000, 0 },
	};

	(void)state;
	pin(0);
	for (size_t c = 0; c < sizeof(cc) / sizeof(cc[0]); c++) {
		char name[32];
		unsigned size = cc[c].size, off = (size / 2) & ~7u;
		struct kmem_cache *s;
		unsigned char *a, *b;

		snprintf(name, sizeof(name), "freeptr_%u", size);
		s = kmem_cache_create(name, size, 0, cc[c].flags);
		assert_non_null(s);
		a = kmem_cache_alloc(s, GFP_KERNEL);
		b = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(a);
		assert_non_null(b);
		memset(a, 0x5a, size);
		memset(b, 0x5a, size);
		kmem_cache_free(s, a);
		kmem_cache_free(s, b);	/* b's free pointer -> a: non-zero */
		for (unsigned i = 0; i < size; i++) {
			if (i >= off && i < off + 8)
				continue;
			if (b[i] != 0x5a)
				fail_msg("%s: free wrote byte %u (free pointer at %u)", name, i, off);
		}
		EXPECT_DESTROY(s, name);
	}
	/* kmalloc-96: free pointer at 48. */
	unsigned char *k = kmalloc(96, GFP_KERNEL), *k2 = kmalloc(96, GFP_KERNEL);

	assert_non_null(k);
	assert_non_null(k2);
	memset(k2, 0x77, 96);
	kfree(k);
	kfree(k2);
	for (unsigned i = 0; i < 96; i++)
		if ((i < 48 || i >= 56) && k2[i] != 0x77)
			fail_msg("kmalloc-96: free wrote byte %u (free pointer at 48)", i);
}

static void test_alloc_object_cache_api(void **state)
{
	bool large = true;
	int local = 0;
	char *p;

	(void)state;
	p = kmalloc(64, GFP_KERNEL);
	assert_non_null(p);
	assert_ptr_equal(alloc_object_cache(p, &large), kmalloc_cache(KMALLOC_NORMAL, 6));
	assert_false(large);
	large = true;
	assert_null(alloc_object_cache(p + 8, &large));
	assert_false(large);
	large = true;
	assert_null(alloc_object_cache(&local, &large));
	assert_false(large);
	kfree(p);

	p = kmalloc(100000, GFP_KERNEL);
	assert_non_null(p);
	large = false;
	assert_null(alloc_object_cache(p, &large));
	assert_true(large);
	large = true;
	assert_null(alloc_object_cache(p + PG, &large));
	assert_false(large);
	kfree(p);

	struct kmem_cache *s = kmem_cache_create("objcache_api", 40, 0, 0);

	assert_non_null(s);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(p);
	large = true;
	assert_ptr_equal(alloc_object_cache(p, &large), s);
	assert_false(large);
	kmem_cache_free(s, p);

	struct page *pg = alloc_pages(GFP_KERNEL, 1);

	assert_non_null(pg);
	large = true;
	assert_null(alloc_object_cache(page_address(pg), &large));
	assert_false(large);
	__free_pages(pg, 1);
	EXPECT_DESTROY(s, "objcache_api");
}

static void test_pages_basic(void **state)
{
	struct alloc_stats base, st;
	int local = 0;

	(void)state;
	stats(&base);
	assert_int_equal(base.pages_total, MACHINE_MEM / PG);
	for (unsigned order = 0; order <= MAX_PAGE_ORDER; order++) {
		struct page *pg = alloc_pages(GFP_KERNEL, order);
		unsigned long pfn, n = 1ul << order;
		char *a;

		if (!pg)
			fail_msg("alloc_pages(order %u) = NULL", order);
		EXPECT_EQ(pg->kind, PAGE_KIND_PAGES, "kind of alloc_pages(order %u)", order);
		EXPECT_EQ(pg->order, order, "page->order");
		pfn = page_to_pfn(pg);
		EXPECT_EQ(pfn % n, 0, "buddy block of order %u naturally aligned (pfn %lu)", order, pfn);
		EXPECT_EQ((uintptr_t)pfn_to_page(pfn), (uintptr_t)pg, "pfn_to_page(page_to_pfn)");
		a = page_address(pg);
		EXPECT_EQ(alloc_in_arena(a), true, "page_address in arena");
		EXPECT_EQ(alloc_in_arena(a + (PG << order) - 1), true, "last byte in arena");
		EXPECT_EQ((uintptr_t)a % PG, 0, "page_address page aligned");
		EXPECT_EQ((uintptr_t)virt_to_page(a), (uintptr_t)pg, "virt_to_page(page_address)");
		EXPECT_EQ((uintptr_t)virt_to_page(a + PG - 1), (uintptr_t)pg, "virt_to_page inside page");
		if (order) {
			EXPECT_EQ((uintptr_t)virt_to_page(a + PG), (uintptr_t)pfn_to_page(pfn + 1),
				  "virt_to_page of the second page");
			for (unsigned long i = 1; i < n; i += (n >= 8 ? n / 8 : 1)) {
				struct page *t = pfn_to_page(pfn + i);

				if (t->kind == PAGE_KIND_FREE || t->kind == PAGE_KIND_BUDDY_TAIL)
					fail_msg("tail page %lu of an allocated order-%u block is free", i, order);
			}
		}
		EXPECT_EQ(page_to_nid(pg), 0, "page_to_nid with 1 node");
		stats(&st);
		EXPECT_EQ(st.pages_alloc - base.pages_alloc, n, "pages_alloc delta, order %u", order);
		EXPECT_EQ(base.pages_free - st.pages_free, n, "pages_free delta, order %u", order);
		memset(a, 0x11, (size_t)PG << order);
		__free_pages(pg, order);
		stats(&st);
		expect_stats_equal(&st, &base, "after __free_pages");
	}
	assert_null(alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1));
	assert_null(virt_to_page(&local));
	assert_false(alloc_in_arena(&local));
	assert_false(alloc_in_arena(NULL));
	stats(&st);
	expect_stats_equal(&st, &base, "at the end");
}

/* Every page is free, in a slab, in a large kmalloc or in an alloc_pages
 * block: the page kinds of alloc.h leave nothing else. */
static void test_stats_identity(void **state)
{
	struct alloc_stats st;
	void *a = kmalloc(100, GFP_KERNEL), *b = kmalloc(50000, GFP_KERNEL);
	struct page *pg = alloc_pages(GFP_KERNEL, 2);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(pg);
	stats(&st);
	EXPECT_EQ(st.pages_free + st.pages_slab + st.pages_large_kmalloc + st.pages_alloc,
		  st.pages_total, "free + slab + large + alloc == total");
	assert_true(st.pages_slab >= 1);
	assert_true(st.pages_large_kmalloc >= 16);
	assert_true(st.pages_alloc >= 4);
	kfree(a);
	kfree(b);
	__free_pages(pg, 2);
}

#define MAXV 40000

static void check_in_arena(const void *p, size_t len, const char *what)
{
	if (!alloc_in_arena(p) || !alloc_in_arena((const char *)p + len - 1))
		fail_msg("%s %p (%zu bytes) outside the arena", what, p, len);
}

static size_t exhaust_8k(void **v, size_t *npages, struct page **pv)
{
	size_t n = 0, m = 0;
	void *p;
	struct page *pg;

	/* One page first, so that one 4 MiB block is split down to order 0
	 * and kmalloc-8k must fall back to order-1 slabs at the end. */
	pg = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(pg);
	pv[m++] = pg;
	while (n < MAXV && (p = kmalloc(8192, GFP_KERNEL)) != NULL) {
		check_in_arena(p, 8192, "kmalloc(8192)");
		if ((uintptr_t)p % 8192)
			fail_msg("kmalloc(8192) = %p not 8192-aligned", p);
		if (head_of(p)->kind != PAGE_KIND_SLAB)
			fail_msg("kmalloc(8192) = %p not in a slab", p);
		*(uint64_t *)p = n;
		*(uint64_t *)((char *)p + 8184) = ~(uint64_t)n;
		v[n++] = p;
	}
	assert_true(n < MAXV);
	/* kmalloc-8k falls back to order-1 slabs (§2.3 step 5, §3.2 step 4),
	 * so once it fails no order-1 block can be left. */
	pg = alloc_pages(GFP_KERNEL, 1);
	if (pg)
		fail_msg("kmalloc(8192) failed after %zu objects while an order-1 block was free "
			 "(the min-order fallback of new_slab, docs/kernel-slab.md §3.2 step 4)", n);
	assert_null(kmalloc(16384, GFP_KERNEL));
	while (m < MAXV && (pg = alloc_pages(GFP_KERNEL, 0)) != NULL) {
		check_in_arena(page_address(pg), PG, "alloc_pages(0)");
		pv[m++] = pg;
	}
	assert_true(m < MAXV);
	*npages = m;
	return n;
}

static void test_exhaust_kmalloc_8k(void **state)
{
	static void *v[MAXV];
	static struct page *pv[MAXV];
	struct alloc_stats base, st;
	size_t n, m, n2, m2;

	(void)state;
	pin(0);
	kmem_cache_shrink_all();
	stats(&base);
	n = exhaust_8k(v, &m, pv);
	stats(&st);
	print_message("kmalloc(8192) x %zu, then %zu order-0 pages\n", n, m);
	EXPECT_EQ(st.pages_free, 0, "pages_free when even order 0 fails");
	EXPECT_EQ(st.pages_slab - base.pages_slab, 2 * n,
		  "slab pages for %zu full kmalloc-8k objects (2 pages each)", n);
	EXPECT_EQ(st.pages_alloc - base.pages_alloc, m, "pages_alloc");
	EXPECT_EQ(st.pages_free + st.pages_slab + st.pages_large_kmalloc + st.pages_alloc,
		  st.pages_total, "page identity when full");
	assert_true(n * 2 + m >= base.pages_free);
	if (base.pages_free == base.pages_total) {
		/* Empty arena: 15 * 128 + (64 + 32 + 16 + 8 + 4 + 2 + 1) = 2047
		 * order-3 slabs of 4 objects, then the min-order fallback (docs/kernel-slab.md
		 * 3.2 step 4): the order-2 block as two order-1 slabs and the
		 * order-1 block, one object each; the order-0 page is left. */
		EXPECT_EQ(n, 2047 * 4 + 3, "kmalloc(8192) count in an empty 64 MiB arena");
		EXPECT_EQ(m, 2, "order-0 pages (the first one included)");
	}
	for (size_t i = 0; i < n; i++) {
		if (*(uint64_t *)v[i] != i || *(uint64_t *)((char *)v[i] + 8184) != ~(uint64_t)i)
			fail_msg("kmalloc(8192) object %zu overwritten", i);
		kfree(v[i]);
	}
	for (size_t i = 0; i < m; i++)
		__free_pages(pv[i], 0);
	kmem_cache_shrink_all();
	stats(&st);
	expect_stats_equal(&st, &base, "after freeing everything and shrinking");

	/* And again: the same machine state gives the same counts. */
	n2 = exhaust_8k(v, &m2, pv);
	EXPECT_EQ(n2, n, "kmalloc(8192) count on the second fill");
	EXPECT_EQ(m2, m, "order-0 page count on the second fill");
	for (size_t i = 0; i < n2; i++)
		kfree(v[i]);
	for (size_t i = 0; i < m2; i++)
		__free_pages(pv[i], 0);
	kmem_cache_shrink_all();
	stats(&st);
	expect_stats_equal(&st, &base, "after the second fill");
	void *p = kmalloc(8192, GFP_KERNEL);
	assert_non_null(p);
	kfree(p);
}

static void exhaust_large(void **v, size_t *counts, struct page **pv)
{
	size_t n = 0, a = 0, b = 0, c = 0;
	void *p;
	struct page *pg;

	/* One page first, so that one 4 MiB block is split down to order 0. */
	pg = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(pg);
	pv[c++] = pg;
	while (n < MAXV && (p = kmalloc(1u << 20, GFP_KERNEL)) != NULL) {
		check_in_arena(p, 1u << 20, "kmalloc(1M)");
		if ((uintptr_t)p % PG)
			fail_msg("large kmalloc %p not page aligned", p);
		if (head_of(p)->kind != PAGE_KIND_LARGE_KMALLOC || head_of(p)->order != 8)
			fail_msg("kmalloc(1M) head kind %u order %u", head_of(p)->kind, head_of(p)->order);
		v[n++] = p;
		a++;
	}
	while (n < MAXV && (p = kmalloc(8193, GFP_KERNEL_ACCOUNT)) != NULL) {
		check_in_arena(p, 16384, "kmalloc(8193)");
		if (head_of(p)->kind != PAGE_KIND_LARGE_KMALLOC || head_of(p)->order != 2)
			fail_msg("kmalloc(8193) head kind %u order %u", head_of(p)->kind, head_of(p)->order);
		v[n++] = p;
		b++;
	}
	assert_null(alloc_pages(GFP_KERNEL, 2));
	while (c < MAXV && (pg = alloc_pages(GFP_KERNEL, 0)) != NULL) {
		check_in_arena(page_address(pg), PG, "alloc_pages(0)");
		pv[c++] = pg;
	}
	assert_true(n < MAXV && c < MAXV);
	counts[0] = a;
	counts[1] = b;
	counts[2] = c;
}

static void test_exhaust_large_and_pages(void **state)
{
	static void *v[MAXV];
	static struct page *pv[MAXV];
	struct alloc_stats base, st;
	size_t c1[3], c2[3];

	(void)state;
	kmem_cache_shrink_all();
	stats(&base);
	exhaust_large(v, c1, pv);
	stats(&st);
	print_message("kmalloc(1M) x %zu, kmalloc(8193) x %zu, pages x %zu\n", c1[0], c1[1], c1[2]);
	assert_true(c1[0] >= 1);
	if (base.pages_free == base.pages_total) {
		/* An empty arena of 16 order-10 blocks; one page splits one block
		 * into free blocks of orders 9..0; so 15 * 4 + 2 + 1 = 63 blocks of
		 * 1 MiB, then 32 + 16 + 8 + 4 + 2 + 1 = 63 of order 2, then the
		 * order-1 and order-0 blocks: 3 pages after the first one. */
		EXPECT_EQ(c1[0], 63, "kmalloc(1M) count in an empty 64 MiB arena");
		EXPECT_EQ(c1[1], 63, "kmalloc(8193) (order 2) count");
		EXPECT_EQ(c1[2], 4, "order-0 pages");
	}
	EXPECT_EQ(st.pages_free, 0, "pages_free when order 0 fails");
	EXPECT_EQ(st.pages_large_kmalloc - base.pages_large_kmalloc, c1[0] * 256 + c1[1] * 4,
		  "pages_large_kmalloc");
	EXPECT_EQ(st.pages_alloc - base.pages_alloc, c1[2], "pages_alloc");
	/* Free in an interleaved order to exercise buddy merging. */
	for (size_t i = 0; i < c1[0] + c1[1]; i += 2)
		kfree(v[i]);
	for (size_t i = 0; i < c1[2]; i++)
		__free_pages(pv[i], 0);
	for (size_t i = 1; i < c1[0] + c1[1]; i += 2)
		kfree(v[i]);
	kmem_cache_shrink_all();
	stats(&st);
	expect_stats_equal(&st, &base, "after freeing everything");

	exhaust_large(v, c2, pv);
	EXPECT_EQ(c2[0], c1[0], "kmalloc(1M) count, second fill");
	EXPECT_EQ(c2[1], c1[1], "kmalloc(8193) count, second fill");
	EXPECT_EQ(c2[2], c1[2], "page count, second fill");
	for (size_t i = 0; i < c2[0] + c2[1]; i++)
		kfree(v[c2[0] + c2[1] - 1 - i]);
	for (size_t i = 0; i < c2[2]; i++)
		__free_pages(pv[i], 0);
	kmem_cache_shrink_all();
	stats(&st);
	expect_stats_equal(&st, &base, "after the second fill");
	void *p = kmalloc(4 * MIB, GFP_KERNEL);
	assert_non_null(p);
	kfree(p);
}

/* ------------------------------------------------------------------ */

static void test_cache_lifecycle(void **state)
{
	struct alloc_stats st0, st;
	struct kmem_cache *s, *s2;
	char name[32];
	void *a, *b;
	int err = 0;

	(void)state;
	stats(&st0);
	strcpy(name, "lifecycle");
	s = kmem_cache_create(name, 100, 0, 0);
	assert_non_null(s);
	strcpy(name, "garbage__");	/* the name was copied */
	EXPECT_STR(kmem_cache_name(s), "lifecycle", "name copied");
	assert_ptr_equal(kmem_cache_find("lifecycle"), s);
	assert_null(kmem_cache_find("garbage__"));
	stats(&st);
	EXPECT_EQ(st.nr_caches, st0.nr_caches + 1, "nr_caches after create");

	err = 0;
	s2 = kmem_cache_create_err("lifecycle", 200, 0, 0, &err);
	assert_null(s2);
	EXPECT_EQ(err, -EEXIST, "second create of a name");
	err = 0;
	assert_null(kmem_cache_create_err("kmalloc-64", 64, 0, 0, &err));
	EXPECT_EQ(err, -EEXIST, "create with a kmalloc cache's name");
	assert_null(kmem_cache_create("lifecycle", 100, 0, 0));

	a = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(a);
	EXPECT_EQ(kmem_cache_destroy(s), -EBUSY, "destroy with a live object");
	assert_ptr_equal(kmem_cache_find("lifecycle"), s);
	b = kmem_cache_alloc(s, GFP_KERNEL);	/* still works */
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	memset(a, 1, 100);
	memset(b, 2, 100);
	kmem_cache_free(s, a);
	EXPECT_EQ(kmem_cache_destroy(s), -EBUSY, "destroy with one live object");
	kmem_cache_free(s, b);
	/* Objects sitting free in CPU freelists do not keep it busy. */
	EXPECT_DESTROY(s, "after freeing everything");
	assert_null(kmem_cache_find("lifecycle"));
	stats(&st);
	EXPECT_EQ(st.nr_caches, st0.nr_caches, "nr_caches after destroy");
	EXPECT_EQ(st.pages_slab, st0.pages_slab, "destroy frees the cache's slabs");

	/* The name is free again. */
	s = kmem_cache_create("lifecycle", 100, 0, 0);
	assert_non_null(s);
	kmem_cache_set_owner(s, 1000);
	{
		struct kmem_cache_info info;

		kmem_cache_info(s, &info);
		EXPECT_EQ(info.owner, 1000, "kmem_cache_set_owner");
	}
	EXPECT_DESTROY(s, "recreated");
}

static void test_cache_create_errors(void **state)
{
	struct alloc_stats st0, st;
	int err;

	(void)state;
	stats(&st0);
#define BAD(nm, size, align, flags, what) do {				\
	err = 0;							\
	assert_null(kmem_cache_create_err(nm, size, align, flags, &err)); \
	EXPECT_EQ(err, -EINVAL, "%s", what);				\
	assert_null(kmem_cache_create(nm, size, align, flags));	\
	assert_null(kmem_cache_create_err(nm, size, align, flags, NULL)); \
} while (0)
	BAD("bad1", 64, 0, 0x1u, "flag outside SLAB_FLAGS_PERMITTED");
	BAD("bad2", 64, 0, 0x80000000u, "high flag");
	BAD("bad3", 64, 0, SLAB_HWCACHE_ALIGN | 0x100u, "permitted plus one bad flag");
	BAD("bad4", 0, 0, 0, "size 0");
	BAD("bad5", (unsigned)(4 * MIB + 1), 0, 0, "size above KMALLOC_MAX_SIZE");
	BAD("bad6", 64, 3, 0, "align 3");
	BAD("bad7", 64, 24, 0, "align 24");
	BAD("bad8", 64, 48, SLAB_HWCACHE_ALIGN, "align 48");
	BAD("", 64, 0, 0, "empty name");
#undef BAD
	stats(&st);
	EXPECT_EQ(st.nr_caches, st0.nr_caches, "failed creates add no cache");
	assert_null(kmem_cache_find("bad1"));

	/* Accepted corners. */
	static const struct { unsigned size, align; slab_flags_t flags; } ok[] = {
		{ 1, 0, 0 }, { 64, 1, 0 }, { 64, 8, 0 }, { 64, 4096, 0 },
		{ 64, 0, SLAB_FLAGS_PERMITTED }, { 64, 0, SLAB_PANIC },
		{ (unsigned)(4 * MIB), 0, 0 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char name[32];
		struct kmem_cache *s;

		snprintf(name, sizeof(name), "ok_%zu", i);
		err = 1;
		s = kmem_cache_create_err(name, ok[i].size, ok[i].align, ok[i].flags, &err);
		if (!s)
			fail_msg("kmem_cache_create(%s, size %u, align %u, flags %#x) failed: %d",
				 name, ok[i].size, ok[i].align, ok[i].flags, err);
		EXPECT_DESTROY(s, name);
	}
}

static void test_cache_max_object(void **state)
{
	struct kmem_cache_info info;
	struct kmem_cache *s;
	void *p;

	(void)state;
	s = kmem_cache_create("four_mib", (unsigned)(4 * MIB), 0, 0);
	assert_non_null(s);
	kmem_cache_info(s, &info);
	EXPECT_EQ(info.order, 10, "4 MiB object: order");
	EXPECT_EQ(info.objects, 1, "4 MiB object: objects per slab");
	EXPECT_EQ(info.size, 4 * MIB, "4 MiB object: stride");
	p = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(p);
	EXPECT_EQ((uintptr_t)p % PG, 0, "4 MiB object page aligned");
	check_in_arena(p, 4 * MIB, "4 MiB object");
	memset(p, 0x42, 4 * MIB);
	kmem_cache_free(s, p);
	EXPECT_DESTROY(s, "four_mib");
}

/* ------------------------------------------------------------------ */
/* slabinfo helpers                                                    */

static char *slabinfo_text(void)
{
	char one[1];
	size_t n = slabinfo_format(one, sizeof(one));
	char *buf = malloc(n + 1);

	assert_non_null(buf);
	EXPECT_EQ(slabinfo_format(buf, n + 1), n, "slabinfo_format length stable");
	EXPECT_EQ(strlen(buf), n, "slabinfo strlen");
	return buf;
}

/* Copy of the line whose name column is 'name'; *count = how many. */
static char *slabinfo_line(const char *text, const char *name, int *count)
{
	char *found = NULL;
	const char *l = text;
	size_t nl = strlen(name);

	*count = 0;
	while (*l) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		if (len > nl && strncmp(l, name, nl) == 0 && l[nl] == ' ') {
			(*count)++;
			if (!found)
				found = strndup(l, len);
		}
		if (!e)
			break;
		l = e + 1;
	}
	return found;
}

static void expected_slabinfo_line(char *buf, size_t len, const char *name,
				   unsigned long active, unsigned long num,
				   unsigned objsize, unsigned objperslab, int pages,
				   unsigned long slabs)
{
	snprintf(buf, len,
		 "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu",
		 name, active, num, objsize, objperslab, pages, 0u, 0u, 0u, slabs, slabs, 0ul);
}

static void expect_slabinfo(const char *name, unsigned long active, unsigned long num,
			    unsigned objsize, unsigned objperslab, int pages,
			    unsigned long slabs)
{
	char exp[256];
	char *text = slabinfo_text();
	int count;
	char *line = slabinfo_line(text, name, &count);

	expected_slabinfo_line(exp, sizeof(exp), name, active, num, objsize, objperslab,
			       pages, slabs);
	if (count != 1 || !line || strcmp(line, exp) != 0) {
		print_error("slabinfo line for %s (%d found):\n  got      \"%s\"\n  expected \"%s\"\n",
			    name, count, line ? line : "(none)", exp);
		free(line);
		free(text);
		fail();
	}
	free(line);
	free(text);
}

static void test_slabinfo_format(void **state)
{
	static const char hdr[] =
		"slabinfo - version: 2.1\n"
		"# name            <active_objs> <num_objs> <objsize> <objperslab> "
		"<pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : "
		"slabdata <active_slabs> <num_slabs> <sharedavail>\n";
	struct kmem_cache *sa, *sb;
	void *objs[20], *ob;
	char *text, *pos_a, *pos_b, exp[256];
	struct alloc_stats st;

	(void)state;
	/* docs/kernel-slab.md's own example line, through docs/kernel-slab.md's format. */
	expected_slabinfo_line(exp, sizeof(exp), "kmalloc-4k", 1056, 1088, 4096, 8, 8, 136);
	assert_string_equal(exp, "kmalloc-4k          1056   1088   4096    8    8 : tunables    0    0    0 : slabdata    136    136      0");

	pin(0);
	sa = kmem_cache_create("si_a", 2312, 0, SLAB_HWCACHE_ALIGN);
	sb = kmem_cache_create("si_b", 64, 0, 0);
	assert_non_null(sa);
	assert_non_null(sb);
	expect_slabinfo("si_a", 0, 0, 2368, 13, 8, 0);
	expect_slabinfo("si_b", 0, 0, 64, 64, 1, 0);
	for (unsigned i = 0; i < 20; i++) {
		objs[i] = kmem_cache_alloc(sa, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	ob = kmem_cache_alloc(sb, GFP_KERNEL);
	assert_non_null(ob);
	/* §11: active = num - free objects on node partial lists; the CPU
	 * slab's free objects count as active.  20 objects -> 2 slabs of 13. */
	expect_slabinfo("si_a", 26, 26, 2368, 13, 8, 2);
	expect_slabinfo("si_b", 64, 64, 64, 64, 1, 1);

	text = slabinfo_text();
	assert_true(strncmp(text, hdr, strlen(hdr)) == 0);
	pos_a = strstr(text, "\nsi_a ");
	pos_b = strstr(text, "\nsi_b ");
	assert_non_null(pos_a);
	assert_non_null(pos_b);
	/* Newest first. */
	assert_true(pos_b < pos_a);
	/* Every kmalloc cache exactly once, after the newer caches; every line
	 * in the exact format. */
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++)
		for (unsigned idx = 1; idx < NR_KMALLOC_INDEX; idx++) {
			char name[64];
			int count;
			char *line;

			snprintf(name, sizeof(name), "%s%s", ref_type_prefix[t], ref_class_suffix[idx]);
			line = slabinfo_line(text, name, &count);
			if (count != 1)
				fail_msg("slabinfo lists %s %d times", name, count);
			assert_true(strstr(text, line) > pos_a);
			free(line);
		}
	{
		unsigned lines = 0;
		const char *l = text + strlen(hdr);

		while (*l) {
			const char *e = strchr(l, '\n');
			char name[128], again[256], *line;
			unsigned long active, num, as, ns, sh;
			unsigned objsize, per, t1, t2, t3;
			int pages;

			if (!e)
				fail_msg("slabinfo does not end with a newline");
			line = strndup(l, (size_t)(e - l));
			if (sscanf(line, "%127s %lu %lu %u %u %d : tunables %u %u %u : slabdata %lu %lu %lu",
				   name, &active, &num, &objsize, &per, &pages, &t1, &t2, &t3,
				   &as, &ns, &sh) != 12)
				fail_msg("slabinfo line does not parse: \"%s\"", line);
			snprintf(again, sizeof(again),
				 "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu",
				 name, active, num, objsize, per, pages, t1, t2, t3, as, ns, sh);
			if (strcmp(again, line) != 0)
				fail_msg("slabinfo line not in the kernel's format:\n  \"%s\"\n  \"%s\"", line, again);
			assert_int_equal(t1, 0);
			assert_int_equal(t2, 0);
			assert_int_equal(t3, 0);
			assert_int_equal(sh, 0);
			assert_int_equal(as, ns);
			assert_int_equal(num, ns * per);
			assert_true(active <= num);
			assert_true(pages >= 1 && (pages & (pages - 1)) == 0);
			free(line);
			lines++;
			l = e + 1;
		}
		stats(&st);
		EXPECT_EQ(lines, st.nr_caches, "slabinfo lines == nr_caches");
	}

	/* Truncation: at most len bytes, NUL-terminated; returns the full length. */
	{
		size_t n = strlen(text);
		char small[10], *big = malloc(n + 1);

		assert_non_null(big);
		memset(small, 'x', sizeof(small));
		EXPECT_EQ(slabinfo_format(small, 0), n, "slabinfo_format(len 0)");
		assert_int_equal(small[0], 'x');
		EXPECT_EQ(slabinfo_format(small, sizeof(small)), n, "slabinfo_format(len 10)");
		assert_int_equal(strlen(small), 9);
		assert_memory_equal(small, text, 9);
		EXPECT_EQ(slabinfo_format(big, n), n, "slabinfo_format(len n)");
		assert_int_equal(strlen(big), n - 1);
		assert_memory_equal(big, text, n - 1);
		EXPECT_EQ(slabinfo_format(big, n + 1), n, "slabinfo_format(len n + 1)");
		assert_string_equal(big, text);
		free(big);
	}
	free(text);

	/* After a shrink the CPU slab goes to the node partial list, so its
	 * free objects stop counting as active. */
	assert_true(kmem_cache_shrink(sa) >= 0);
	expect_slabinfo("si_a", 20, 26, 2368, 13, 8, 2);
	for (unsigned i = 0; i < 20; i++)
		kmem_cache_free(sa, objs[i]);
	kmem_cache_free(sb, ob);
	kmem_cache_shrink(sa);
	kmem_cache_shrink(sb);
	expect_slabinfo("si_a", 0, 0, 2368, 13, 8, 0);
	expect_slabinfo("si_b", 0, 0, 64, 64, 1, 0);
	EXPECT_DESTROY(sb, "si_b");
	EXPECT_DESTROY(sa, "si_a");
	text = slabinfo_text();
	assert_null(strstr(text, "\nsi_a "));
	free(text);
}

static void test_shrink(void **state)
{
	struct kmem_cache *s;
	struct kmem_cache_info info;
	struct alloc_stats base, st, before;
	void *objs[100];
	int freed;

	(void)state;
	pin(0);
	s = kmem_cache_create("shrink_t", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	kmem_cache_info(s, &info);
	assert_int_equal(info.objects, 13);
	assert_int_equal(info.order, 3);
	kmem_cache_shrink_all();
	stats(&base);

	for (unsigned i = 0; i < 100; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	for (unsigned i = 0; i < 100; i++)
		kmem_cache_free(s, objs[i]);
	stats(&before);
	freed = kmem_cache_shrink(s);
	stats(&st);
	assert_true(freed >= 0);
	EXPECT_EQ(before.pages_slab - st.pages_slab, (unsigned long)freed * 8,
		  "pages freed by kmem_cache_shrink == returned slabs * 8");
	EXPECT_EQ(st.pages_slab, base.pages_slab, "pages_slab back to the start");
	EXPECT_EQ(st.pages_free, base.pages_free, "pages_free back to the start");
	EXPECT_EQ(kmem_cache_shrink(s), 0, "second shrink frees nothing");

	/* Live objects keep their slabs: 30 objects = 13 + 13 + 4; free the
	 * first slab's 13; shrink frees exactly that slab. */
	for (unsigned i = 0; i < 30; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	for (unsigned i = 0; i < 13; i++)
		kmem_cache_free(s, objs[i]);
	EXPECT_EQ(kmem_cache_shrink(s), 1, "shrink with one empty slab");
	stats(&st);
	EXPECT_EQ(st.pages_slab - base.pages_slab, 16, "two slabs left");
	expect_slabinfo("shrink_t", 17, 26, 2368, 13, 8, 2);
	for (unsigned i = 13; i < 30; i++)
		kmem_cache_free(s, objs[i]);
	EXPECT_EQ(kmem_cache_shrink(s), 2, "shrink after freeing the rest");
	stats(&st);
	EXPECT_EQ(st.pages_slab, base.pages_slab, "pages_slab back to the start");
	EXPECT_DESTROY(s, "shrink_t");
}

/*
 * §2.7 and §3.3, one CPU: 260 objects = 20 full slabs of 13, freed in
 * allocation order.  cpu_partial_slabs = DIV_ROUND_UP(24 * 2, 13) = 4,
 * min_partial = clamp(ilog2(2368) / 2, 5, 10) = 5.
 * - S1..S4: each first free of a full slab puts it on the CPU partial list.
 * - S5: the list holds 4 -> S1..S4 (all empty) go to the node list (nr_partial
 *   0..3 < 5, all kept), S5 on the CPU list.  S9: S8 kept (nr_partial 4),
 *   S7, S6, S5 discarded.  S13, S17: the four flushed are discarded.
 * - S17..S19 stay on the CPU partial list (empty; a slab that is not on the
 *   node list is left alone by __slab_free), S20 is the CPU slab.
 * => 5 + 3 + 1 = 9 slabs, 117 object slots, active = 117 - 5 * 13 = 52.
 */
static void test_partial_lists(void **state)
{
	static void *objs[260];
	struct kmem_cache *s;
	struct kmem_cache_info info;
	struct alloc_stats base, st;
	char *text, *line;
	int count, freed;
	unsigned long active, num, as, slabs;

	(void)state;
	pin(0);
	s = kmem_cache_create("plist", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	kmem_cache_info(s, &info);
	assert_int_equal(info.objects, 13);
	assert_int_equal(info.min_partial, 5);
	assert_int_equal(info.cpu_partial, 24);
	assert_int_equal(info.cpu_partial_slabs, 4);
	kmem_cache_shrink_all();
	stats(&base);
	for (unsigned i = 0; i < 260; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	stats(&st);
	EXPECT_EQ(st.pages_slab - base.pages_slab, 160, "20 slabs of 8 pages");
	expect_slabinfo("plist", 260, 260, 2368, 13, 8, 20);
	for (unsigned i = 0; i < 260; i++)
		kmem_cache_free(s, objs[i]);
	stats(&st);
	slabs = (st.pages_slab - base.pages_slab) / 8;
	/* The limit: at most min_partial on the node, cpu_partial_slabs on the
	 * CPU list (the one being added after a flush included), one CPU slab. */
	if (slabs > 5 + 4 + 1)
		fail_msg("%lu empty slabs kept after freeing everything; limit 10", slabs);
	text = slabinfo_text();
	line = slabinfo_line(text, "plist", &count);
	assert_non_null(line);
	assert_int_equal(sscanf(line, "plist %lu %lu %*u %*u %*d : tunables %*u %*u %*u : slabdata %lu",
				&active, &num, &as), 3);
	print_message("after freeing 260: %lu slabs, slabinfo active %lu num %lu\n", slabs, active, num);
	free(line);
	free(text);
	EXPECT_EQ(slabs, 9, "slabs kept after freeing all 260 in order (kernel: 5 node + 3 cpu partial + cpu slab)");
	expect_slabinfo("plist", 52, 117, 2368, 13, 8, 9);

	freed = kmem_cache_shrink(s);
	EXPECT_EQ(freed, 9, "kmem_cache_shrink frees the 9 empty slabs");
	stats(&st);
	EXPECT_EQ(st.pages_slab, base.pages_slab, "pages_slab back to the start");
	expect_slabinfo("plist", 0, 0, 2368, 13, 8, 0);
	EXPECT_DESTROY(s, "plist");
}

/*
 * __slab_free discards a slab that becomes empty on the node partial list
 * once the node holds min_partial (5) or more (the kernel's >=).  One CPU,
 * 20 full slabs of 13: one free in each of S1..S9 (S1..S4, then S5..S8
 * flushed from the CPU partial list: 8 partial slabs on the node), then
 * S1..S4 emptied in order: S1, S2, S3 go with 8, 7, 6 on the node, S4
 * with exactly 5: 16 slabs left (17 if the boundary were > min_partial).
 */
static void test_partial_discard_at_min(void **state)
{
	static void *objs[260];
	struct kmem_cache_info info;
	struct alloc_stats base, st;
	struct kmem_cache *s;

	(void)state;
	pin(0);
	s = kmem_cache_create("pdisc", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	kmem_cache_info(s, &info);
	assert_int_equal(info.objects, 13);
	assert_int_equal(info.min_partial, 5);
	assert_int_equal(info.cpu_partial_slabs, 4);
	kmem_cache_shrink_all();
	stats(&base);
	for (unsigned i = 0; i < 260; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	expect_slabinfo("pdisc", 260, 260, 2368, 13, 8, 20);
	for (unsigned k = 0; k < 9; k++) {
		kmem_cache_free(s, objs[k * 13]);
		objs[k * 13] = NULL;
	}
	for (unsigned k = 0; k < 4; k++)
		for (unsigned i = k * 13 + 1; i < (k + 1) * 13; i++) {
			kmem_cache_free(s, objs[i]);
			objs[i] = NULL;
		}
	/* a free in another slab hands S4's gathered run to __slab_free */
	kmem_cache_free(s, objs[9 * 13 + 1]);
	objs[9 * 13 + 1] = NULL;
	stats(&st);
	EXPECT_EQ((st.pages_slab - base.pages_slab) / 8, 16,
		  "slabs left: the fourth emptied with nr_partial == min_partial is discarded");
	for (unsigned i = 0; i < 260; i++)
		if (objs[i])
			kmem_cache_free(s, objs[i]);
	kmem_cache_shrink(s);
	EXPECT_DESTROY(s, "pdisc");
}

/* ------------------------------------------------------------------ */

struct gfp_case {
	gfp_t gfp;
	const char *str;
};

static const struct gfp_case gfp_cases[] = {
	{ 0, "none" },
	{ GFP_KERNEL, "GFP_KERNEL" },
	{ GFP_KERNEL_ACCOUNT, "GFP_KERNEL_ACCOUNT" },
	{ GFP_KERNEL | __GFP_ZERO, "GFP_KERNEL|__GFP_ZERO" },
	{ GFP_KERNEL_ACCOUNT | __GFP_ZERO, "GFP_KERNEL_ACCOUNT|__GFP_ZERO" },
	{ __GFP_ACCOUNT, "__GFP_ACCOUNT" },
	{ GFP_ATOMIC, "GFP_ATOMIC" },
	{ GFP_NOWAIT, "GFP_NOWAIT" },
	{ GFP_KERNEL | __GFP_NOFAIL, "GFP_KERNEL|__GFP_NOFAIL" },
	{ GFP_KERNEL | __GFP_NORETRY, "GFP_KERNEL|__GFP_NORETRY" },
	{ GFP_KERNEL | __GFP_RECLAIMABLE, "GFP_KERNEL|__GFP_RECLAIMABLE" },
	{ GFP_KERNEL | __GFP_ACCOUNT, "GFP_KERNEL_ACCOUNT" },
	{ GFP_NOFS, "GFP_NOFS" },
	{ GFP_NOIO, "GFP_NOIO" },
	{ GFP_USER, "GFP_USER" },
	{ GFP_HIGHUSER, "GFP_HIGHUSER" },
	{ GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE" },
	{ GFP_TRANSHUGE, "GFP_TRANSHUGE" },
	{ GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT" },
	{ GFP_DMA, "GFP_DMA" },
	{ GFP_DMA32, "GFP_DMA32" },
	{ GFP_USER | __GFP_ACCOUNT, "GFP_USER|__GFP_ACCOUNT" },
	{ GFP_ATOMIC | __GFP_ACCOUNT, "GFP_ATOMIC|__GFP_ACCOUNT" },
	{ GFP_NOWAIT | __GFP_ZERO, "GFP_NOWAIT|__GFP_ZERO" },
	{ GFP_KERNEL | __GFP_COMP, "GFP_KERNEL|__GFP_COMP" },
	{ GFP_KERNEL | __GFP_NOWARN, "GFP_KERNEL|__GFP_NOWARN" },
	{ __GFP_ZERO, "__GFP_ZERO" },
	{ __GFP_RECLAIMABLE, "__GFP_RECLAIMABLE" },
	{ __GFP_HIGH, "__GFP_HIGH" },
	{ __GFP_IO, "__GFP_IO" },
	{ __GFP_FS, "__GFP_FS" },
	{ __GFP_NOWARN, "__GFP_NOWARN" },
	{ __GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL" },
	{ __GFP_NOFAIL, "__GFP_NOFAIL" },
	{ __GFP_NORETRY, "__GFP_NORETRY" },
	{ __GFP_COMP, "__GFP_COMP" },
	{ __GFP_NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ __GFP_MEMALLOC, "__GFP_MEMALLOC" },
	{ __GFP_HARDWALL, "__GFP_HARDWALL" },
	{ __GFP_THISNODE, "__GFP_THISNODE" },
	{ __GFP_MOVABLE, "__GFP_MOVABLE" },
	{ __GFP_WRITE, "__GFP_WRITE" },
	{ __GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ __GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	{ __GFP_HIGHMEM, "__GFP_HIGHMEM" },
	{ __GFP_ZEROTAGS, "__GFP_ZEROTAGS" },
	{ __GFP_RECLAIM, "GFP_NOIO" },	/* GFP_NOIO == __GFP_RECLAIM */
};

static void test_gfp_format(void **state)
{
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(gfp_cases) / sizeof(gfp_cases[0]); i++) {
		int r;

		memset(buf, 'x', sizeof(buf));
		r = gfp_format(buf, sizeof(buf), gfp_cases[i].gfp);
		EXPECT_STR(buf, gfp_cases[i].str, "gfp_format(%#x)", gfp_cases[i].gfp);
		EXPECT_EQ(r, strlen(gfp_cases[i].str), "gfp_format(%#x) return", gfp_cases[i].gfp);
	}
	/* snprintf semantics. */
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(gfp_format(buf, 5, GFP_KERNEL), 10, "gfp_format truncated return");
	EXPECT_STR(buf, "GFP_", "gfp_format truncated");
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(gfp_format(buf, 0, GFP_KERNEL_ACCOUNT | __GFP_ZERO), 29, "gfp_format(len 0)");
	assert_int_equal(buf[0], 'x');
	EXPECT_EQ(gfp_format(buf, 11, GFP_KERNEL), 10, "gfp_format exact fit");
	EXPECT_STR(buf, "GFP_KERNEL", "gfp_format exact fit");
}

static void test_gfp_parse(void **state)
{
	static const char *const bad[] = {
		"GFP_BOGUS", "GFP_KERNEL||__GFP_ZERO", "GFP_KERNEL|", "|GFP_KERNEL",
		"", "GFP_KERNEL|__GFP_BOGUS", "__GFP_ZERO|", "||",
	};
	static const gfp_t known = __GFP_DMA | __GFP_HIGHMEM | __GFP_DMA32 | __GFP_MOVABLE |
		__GFP_RECLAIMABLE | __GFP_HIGH | __GFP_IO | __GFP_FS | __GFP_ZERO |
		__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM | __GFP_WRITE | __GFP_NOWARN |
		__GFP_RETRY_MAYFAIL | __GFP_NOFAIL | __GFP_NORETRY | __GFP_MEMALLOC |
		__GFP_COMP | __GFP_NOMEMALLOC | __GFP_HARDWALL | __GFP_THISNODE |
		__GFP_ACCOUNT | __GFP_ZEROTAGS;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	char buf[512];
	gfp_t g;

	(void)state;
	for (size_t i = 0; i < sizeof(gfp_cases) / sizeof(gfp_cases[0]); i++) {
		g = 0xdeadu;
		EXPECT_EQ(gfp_parse(gfp_cases[i].str, &g), 0, "gfp_parse(\"%s\")", gfp_cases[i].str);
		EXPECT_EQ(g, gfp_cases[i].gfp, "gfp_parse(\"%s\") value", gfp_cases[i].str);
	}
	g = 0;
	EXPECT_EQ(gfp_parse("GFP_KERNEL|__GFP_ACCOUNT|__GFP_ZERO", &g), 0, "composite + bits");
	EXPECT_EQ(g, GFP_KERNEL_ACCOUNT | __GFP_ZERO, "GFP_KERNEL|__GFP_ACCOUNT|__GFP_ZERO");
	g = 0;
	EXPECT_EQ(gfp_parse("__GFP_RECLAIM", &g), 0, "__GFP_RECLAIM");
	EXPECT_EQ(g, __GFP_RECLAIM, "__GFP_RECLAIM value");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		g = 0x1234u;
		EXPECT_EQ((unsigned)gfp_parse(bad[i], &g), (unsigned)-EINVAL, "gfp_parse(\"%s\")", bad[i]);
	}
	/* Round trip of arbitrary combinations of known bits. */
	for (unsigned i = 0; i < 5000; i++) {
		gfp_t v;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		v = (gfp_t)rng & known;
		if (i % 3 == 0)
			v |= GFP_KERNEL;
		gfp_format(buf, sizeof(buf), v);
		g = ~v;
		if (gfp_parse(buf, &g) != 0 || g != v)
			fail_msg("gfp round trip %#x -> \"%s\" -> %#x", v, buf, g);
	}
}

static void test_slab_flags_format_parse(void **state)
{
	static const struct { slab_flags_t f; const char *s; } names[] = {
		{ SLAB_HWCACHE_ALIGN, "SLAB_HWCACHE_ALIGN" },
		{ SLAB_PANIC, "SLAB_PANIC" },
		{ SLAB_RECLAIM_ACCOUNT, "SLAB_RECLAIM_ACCOUNT" },
		{ SLAB_ACCOUNT, "SLAB_ACCOUNT" },
		{ SLAB_NO_MERGE, "SLAB_NO_MERGE" },
	};
	char buf[256];
	slab_flags_t f;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		int r = slab_flags_format(buf, sizeof(buf), names[i].f);

		EXPECT_STR(buf, names[i].s, "slab_flags_format(%#x)", names[i].f);
		EXPECT_EQ(r, strlen(names[i].s), "slab_flags_format return");
		f = 0;
		EXPECT_EQ(slab_flags_parse(names[i].s, &f), 0, "slab_flags_parse(%s)", names[i].s);
		EXPECT_EQ(f, names[i].f, "slab_flags_parse(%s) value", names[i].s);
	}
	f = 0;
	EXPECT_EQ(slab_flags_parse("SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT", &f), 0, "two flags");
	EXPECT_EQ(f, SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT, "two flags value");
	for (unsigned m = 1; m < 32; m++) {
		slab_flags_t v = 0;

		for (unsigned b = 0; b < 5; b++)
			if (m & (1u << b))
				v |= names[b].f;
		slab_flags_format(buf, sizeof(buf), v);
		f = ~v;
		if (slab_flags_parse(buf, &f) != 0 || f != v)
			fail_msg("slab flags round trip %#x -> \"%s\" -> %#x", v, buf, f);
	}
	EXPECT_EQ((unsigned)slab_flags_parse("SLAB_BOGUS", &f), (unsigned)-EINVAL, "SLAB_BOGUS");
	EXPECT_EQ((unsigned)slab_flags_parse("SLAB_ACCOUNT||SLAB_PANIC", &f), (unsigned)-EINVAL,
		  "empty token");
	EXPECT_EQ((unsigned)slab_flags_parse("SLAB_ACCOUNT|", &f), (unsigned)-EINVAL, "trailing |");
}

struct pin_arg {
	int cpu_seen;
	int pin_ret;
};

static void *pin_thread(void *arg)
{
	struct pin_arg *pa = arg;

	pa->cpu_seen = alloc_current_cpu();
	pa->pin_ret = alloc_pin_cpu(1);
	return NULL;
}

static void test_pin_cpu(void **state)
{
	struct pin_arg pa = { -5, -5 };
	pthread_t th;
	int c;

	(void)state;
	pin(3);
	pin(0);
	EXPECT_EQ(alloc_pin_cpu(-1), 0, "unpin");
	c = alloc_current_cpu();
	assert_true(c >= 0 && c < 4);
	assert_true(alloc_pin_cpu(4) < 0);
	assert_true(alloc_pin_cpu(ALLOC_MAX_CPUS) < 0);
	assert_true(alloc_pin_cpu(-2) < 0);
	/* Pinning is per thread. */
	pin(2);
	assert_int_equal(pthread_create(&th, NULL, pin_thread, &pa), 0);
	pthread_join(th, NULL);
	assert_true(pa.cpu_seen >= 0 && pa.cpu_seen < 4);
	assert_int_equal(pa.pin_ret, 0);
	EXPECT_EQ(alloc_current_cpu(), 2, "main thread still on its pinned slot");
	alloc_pin_cpu(-1);
}

/* ================================================================== */
/* Group: 8 CPUs                                                       */

static void test_2312_example(void **state)
{
	struct kmem_cache *s, *s2;
	struct kmem_cache_info info;
	void *p, *objs[14];
	bool large;

	(void)state;
	assert_int_equal(alloc_nr_cpus(), 8);
	pin(0);
	/* §2.6 row 3: kmalloc(2312) -> kmalloc-4k. */
	p = kmalloc(2312, GFP_KERNEL);
	assert_non_null(p);
	EXPECT_EQ(ksize(p), 4096, "ksize(kmalloc(2312))");
	assert_ptr_equal(alloc_object_cache(p, &large), kmalloc_cache(KMALLOC_NORMAL, 12));
	kfree(p);
	p = kmalloc(2312, GFP_KERNEL_ACCOUNT);
	assert_non_null(p);
	EXPECT_EQ(ksize(p), 4096, "ksize(kmalloc(2312, GFP_KERNEL_ACCOUNT))");
	assert_ptr_equal(alloc_object_cache(p, &large), kmalloc_cache(KMALLOC_CGROUP, 12));
	EXPECT_STR(kmem_cache_name(alloc_object_cache(p, &large)), "kmalloc-cg-4k", "cache name");
	kfree(p);
	kmem_cache_info(kmalloc_cache(KMALLOC_CGROUP, 12), &info);
	EXPECT_EQ(info.order, 3, "kmalloc-cg-4k order");
	EXPECT_EQ(info.objects, 8, "kmalloc-cg-4k objects");

	/* Row 1: own cache with SLAB_HWCACHE_ALIGN. */
	s = kmem_cache_create("test_2312", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	memset(&info, 0, sizeof(info));
	kmem_cache_info(s, &info);
	EXPECT_STR(info.name, "test_2312", "name");
	EXPECT_EQ(info.object_size, 2312, "test_2312 object_size");
	EXPECT_EQ(info.size, 2368, "test_2312 size");
	EXPECT_EQ(info.align, 64, "test_2312 align");
	EXPECT_EQ(info.order, 3, "test_2312 order");
	EXPECT_EQ(info.objects, 13, "test_2312 objects per slab");
	EXPECT_EQ(info.offset, 1152, "test_2312 free pointer offset");
	EXPECT_EQ(info.min_partial, 5, "test_2312 min_partial");
	EXPECT_EQ(info.cpu_partial, 24, "test_2312 cpu_partial");
	EXPECT_EQ(info.cpu_partial_slabs, 4, "test_2312 cpu_partial_slabs");
	EXPECT_EQ(info.flags & SLAB_HWCACHE_ALIGN, SLAB_HWCACHE_ALIGN, "flags kept");
	for (unsigned i = 0; i < 13; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
		EXPECT_EQ((uintptr_t)objs[i] % 64, 0, "test_2312 object alignment");
	}
	expect_slabinfo("test_2312", 13, 13, 2368, 13, 8, 1);
	for (unsigned i = 0; i < 13; i++)
		kmem_cache_free(s, objs[i]);

	/* Row 2: no HWCACHE_ALIGN. */
	s2 = kmem_cache_create("test_2312_nohw", 2312, 0, 0);
	assert_non_null(s2);
	kmem_cache_info(s2, &info);
	EXPECT_EQ(info.size, 2312, "test_2312_nohw size");
	EXPECT_EQ(info.align, 8, "test_2312_nohw align");
	EXPECT_EQ(info.order, 3, "test_2312_nohw order");
	EXPECT_EQ(info.objects, 14, "test_2312_nohw objects");
	EXPECT_EQ(info.offset, 1152, "test_2312_nohw offset");
	EXPECT_EQ(info.cpu_partial_slabs, 4, "test_2312_nohw cpu_partial_slabs");
	for (unsigned i = 0; i < 14; i++) {
		objs[i] = kmem_cache_alloc(s2, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	expect_slabinfo("test_2312_nohw", 14, 14, 2312, 14, 8, 1);
	for (unsigned i = 0; i < 14; i++)
		kmem_cache_free(s2, objs[i]);
	EXPECT_DESTROY(s2, "test_2312_nohw");
	EXPECT_DESTROY(s, "test_2312");
}

static void test_kmalloc_geometry_8cpus(void **state)
{
	/* §2.5's table: objperslab / pagesperslab with 8 CPUs. */
	static const unsigned objs[NR_KMALLOC_INDEX] = {
		0, 42, 21, 512, 256, 128, 64, 32, 32, 32, 32, 16, 8, 4,
	};
	static const unsigned pages[NR_KMALLOC_INDEX] = {
		0, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8,
	};

	(void)state;
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++)
		for (unsigned idx = 1; idx < NR_KMALLOC_INDEX; idx++) {
			struct kmem_cache_info info;
			struct ref_geom g = ref_kmalloc_geom(idx, 8);
			char what[64];

			snprintf(what, sizeof(what), "%s%s", ref_type_prefix[t], ref_class_suffix[idx]);
			kmem_cache_info(kmalloc_cache(t, idx), &info);
			SOFT_EQ(info.objects, objs[idx], "%s objperslab (8 CPUs)", what);
			SOFT_EQ(1u << info.order, pages[idx], "%s pagesperslab (8 CPUs)", what);
			expect_geom(kmalloc_cache(t, idx), &g, what);
		}
	soft_done();
}

static void test_slabinfo_kmalloc_4k(void **state)
{
	void *p[10];

	(void)state;
	pin(0);
	kmem_cache_shrink_all();
	expect_slabinfo("kmalloc-4k", 0, 0, 4096, 8, 8, 0);
	for (unsigned i = 0; i < 10; i++) {
		p[i] = kmalloc(4096, GFP_KERNEL);
		assert_non_null(p[i]);
	}
	expect_slabinfo("kmalloc-4k", 16, 16, 4096, 8, 8, 2);
	for (unsigned i = 0; i < 10; i++)
		kfree(p[i]);
	kmem_cache_shrink_all();
	expect_slabinfo("kmalloc-4k", 0, 0, 4096, 8, 8, 0);
}

/* ================================================================== */
/* Group: trace                                                         */

#define MAX_LINES 4096

struct tlines {
	int n;
	char *l[MAX_LINES];
};

static struct tlines *tl_collect(struct trace_cursor *cur)
{
	struct tlines *t = calloc(1, sizeof(*t));
	char buf[4096];

	assert_non_null(t);
	for (;;) {
		int r;

		memset(buf, 0, sizeof(buf));
		r = trace_read(cur, buf, sizeof(buf));
		if (r < 0)
			fail_msg("trace_read = %d", r);
		if (r == 0)
			break;
		if ((size_t)r != strlen(buf))
			fail_msg("trace_read returned %d for a %zu-byte line \"%s\"", r, strlen(buf), buf);
		if (buf[r - 1] == '\n')
			buf[r - 1] = 0;
		if (strchr(buf, '\n'))
			fail_msg("trace_read returned more than one line: \"%s\"", buf);
		if (t->n == MAX_LINES)
			fail_msg("too many trace lines");
		t->l[t->n++] = strdup(buf);
	}
	return t;
}

static void tl_free(struct tlines *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->l[i]);
	free(t);
}

static void tl_dump(const struct tlines *t)
{
	for (int i = 0; i < t->n; i++)
		print_message("  trace[%d] %s\n", i, t->l[i]);
}

static bool tre_match(const char *pat, const char *s, regmatch_t *m, size_t nm)
{
	regex_t re;
	int r = regcomp(&re, pat, REG_EXTENDED);

	if (r) {
		char e[256];

		regerror(r, &re, e, sizeof(e));
		fail_msg("regcomp(%s): %s", pat, e);
	}
	r = regexec(&re, s, nm, m, 0);
	regfree(&re);
	return r == 0;
}

static char *re_group(const char *s, regmatch_t m)
{
	return strndup(s + m.rm_so, (size_t)(m.rm_eo - m.rm_so));
}

/* The one line of an event; fails unless there is exactly one. */
static const char *tl_find1(const struct tlines *t, const char *event)
{
	char key[64];
	const char *found = NULL;
	int n = 0;

	snprintf(key, sizeof(key), ": %s: ", event);
	for (int i = 0; i < t->n; i++)
		if (strstr(t->l[i], key)) {
			found = t->l[i];
			n++;
		}
	if (n != 1) {
		tl_dump(t);
		fail_msg("%d \"%s\" events in the trace, expected 1", n, event);
	}
	return found;
}

static int tl_index(const struct tlines *t, const char *line)
{
	for (int i = 0; i < t->n; i++)
		if (t->l[i] == line)
			return i;
	return -1;
}

static void expect_line(const char *pat, const char *line, regmatch_t *m, size_t nm)
{
	if (!tre_match(pat, line, m, nm))
		fail_msg("trace line\n    %s\n  does not match\n    %s", line, pat);
}

#define FTRACE_HEAD(comm_pid, cpu) \
	"^ *" comm_pid " +\\[" cpu "\\] \\.{5} +([0-9]+)\\.([0-9]{6}): "

static struct alloc_ctx client_ctx = { .pid = 1234, .comm = "client", .site = "mysite" };

static void test_trace_kmalloc_and_cache(void **state)
{
	struct trace_cursor cur;
	struct kmem_cache *s;
	struct tlines *t;
	regmatch_t m[4];
	const char *lk, *lf, *lca, *lcf;
	char *pk, *pf, *pca, *pcf;
	void *p, *o;
	double last = -1;

	(void)state;
	s = kmem_cache_create("test_2312", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	pin(2);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	assert_true(trace_is_on());
	alloc_set_ctx(&client_ctx);
	assert_non_null(alloc_get_ctx());
	assert_int_equal(alloc_get_ctx()->pid, 1234);
	p = kmalloc(2312, GFP_KERNEL_ACCOUNT);
	assert_non_null(p);
	kfree(p);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(o);
	kmem_cache_free(s, o);
	alloc_set_ctx(NULL);
	trace_set_on(false);

	t = tl_collect(&cur);
	lk = tl_find1(t, "kmalloc");
	lf = tl_find1(t, "kfree");
	lca = tl_find1(t, "kmem_cache_alloc");
	lcf = tl_find1(t, "kmem_cache_free");
	assert_true(tl_index(t, lk) < tl_index(t, lf));
	assert_true(tl_index(t, lf) < tl_index(t, lca));
	assert_true(tl_index(t, lca) < tl_index(t, lcf));

	expect_line(FTRACE_HEAD("client-1234", "002")
		    "kmalloc: call_site=mysite ptr=([0-9a-f]{16}) bytes_req=2312 "
		    "bytes_alloc=4096 gfp_flags=GFP_KERNEL_ACCOUNT node=-1 accounted=true$",
		    lk, m, 4);
	pk = re_group(lk, m[3]);
	expect_line(FTRACE_HEAD("client-1234", "002") "kfree: call_site=mysite ptr=([0-9a-f]{16})$",
		    lf, m, 4);
	pf = re_group(lf, m[3]);
	expect_line(FTRACE_HEAD("client-1234", "002")
		    "kmem_cache_alloc: call_site=mysite ptr=([0-9a-f]{16}) bytes_req=2312 "
		    "bytes_alloc=2368 gfp_flags=GFP_KERNEL node=-1 accounted=false$",
		    lca, m, 4);
	pca = re_group(lca, m[3]);
	expect_line(FTRACE_HEAD("client-1234", "002")
		    "kmem_cache_free: call_site=mysite ptr=([0-9a-f]{16}) name=test_2312$",
		    lcf, m, 4);
	pcf = re_group(lcf, m[3]);
	EXPECT_STR(pf, pk, "kfree ptr == kmalloc ptr");
	EXPECT_STR(pcf, pca, "kmem_cache_free ptr == kmem_cache_alloc ptr");
	assert_string_not_equal(pk, pca);
	/* COMM right-aligned in 16 columns, then '-' and the pid. */
	for (int i = 0; i < t->n; i++) {
		if (strncmp(t->l[i], "          client-1234", 21) != 0)
			fail_msg("line not starting with %%16s-PID: \"%s\"", t->l[i]);
		/* Every event of this thread (page events included) carries the
		 * ftrace head; timestamps do not go backwards. */
		expect_line(FTRACE_HEAD("client-1234", "002") "[a-z_]+: ", t->l[i], m, 3);
		{
			double ts = strtod(t->l[i] + m[1].rm_so, NULL);

			assert_true(ts >= last);
			last = ts;
		}
	}
	free(pk);
	free(pf);
	free(pca);
	free(pcf);
	tl_free(t);
	EXPECT_DESTROY(s, "test_2312");
}

static void test_trace_accounted_flags(void **state)
{
	static struct alloc_ctx ctx = { .pid = 42, .comm = "acct", .site = "s1" };
	struct trace_cursor cur;
	struct kmem_cache *s;
	struct tlines *t;
	regmatch_t m[4];
	void *a, *b, *c;

	(void)state;
	s = kmem_cache_create("acct_cache", 100, 0, SLAB_ACCOUNT);
	assert_non_null(s);
	pin(1);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	a = kmem_cache_alloc(s, GFP_KERNEL);
	b = kmalloc(100, GFP_KERNEL);
	c = kmalloc(100, GFP_KERNEL | __GFP_RECLAIMABLE);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	kmem_cache_free(s, a);
	kfree(b);
	kfree(c);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	/* §10: SLAB_ACCOUNT makes kmem_cache_alloc accounted=true. */
	expect_line(FTRACE_HEAD("acct-42", "001")
		    "kmem_cache_alloc: call_site=s1 ptr=([0-9a-f]{16}) bytes_req=100 "
		    "bytes_alloc=104 gfp_flags=GFP_KERNEL node=-1 accounted=true$",
		    tl_find1(t, "kmem_cache_alloc"), m, 4);
	expect_line(FTRACE_HEAD("acct-42", "001")
		    "kmem_cache_free: call_site=s1 ptr=([0-9a-f]{16}) name=acct_cache$",
		    tl_find1(t, "kmem_cache_free"), m, 4);
	{
		int nk = 0;

		for (int i = 0; i < t->n; i++) {
			if (!strstr(t->l[i], ": kmalloc: "))
				continue;
			if (nk == 0)
				expect_line(FTRACE_HEAD("acct-42", "001")
					    "kmalloc: call_site=s1 ptr=([0-9a-f]{16}) bytes_req=100 "
					    "bytes_alloc=128 gfp_flags=GFP_KERNEL node=-1 accounted=false$",
					    t->l[i], m, 4);
			else
				expect_line(FTRACE_HEAD("acct-42", "001")
					    "kmalloc: call_site=s1 ptr=([0-9a-f]{16}) bytes_req=100 "
					    "bytes_alloc=128 gfp_flags=GFP_KERNEL\\|__GFP_RECLAIMABLE "
					    "node=-1 accounted=false$",
					    t->l[i], m, 4);
			nk++;
		}
		EXPECT_EQ(nk, 2, "kmalloc events");
	}
	tl_free(t);
	EXPECT_DESTROY(s, "acct_cache");
}

static void test_trace_large_kmalloc(void **state)
{
	static struct alloc_ctx ctx = { .pid = 9, .comm = "big", .site = "bigsite" };
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[4];
	char *pa, *pf;
	void *p;

	(void)state;
	pin(0);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	p = kmalloc(10000, GFP_KERNEL_ACCOUNT);
	assert_non_null(p);
	kfree(p);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	/* §1.4: bytes_alloc = PAGE_SIZE << order. */
	expect_line(FTRACE_HEAD("big-9", "000")
		    "kmalloc: call_site=bigsite ptr=([0-9a-f]{16}) bytes_req=10000 "
		    "bytes_alloc=16384 gfp_flags=GFP_KERNEL_ACCOUNT node=-1 accounted=true$",
		    tl_find1(t, "kmalloc"), m, 4);
	pa = re_group(tl_find1(t, "kmalloc"), m[3]);
	expect_line(FTRACE_HEAD("big-9", "000") "kfree: call_site=bigsite ptr=([0-9a-f]{16})$",
		    tl_find1(t, "kfree"), m, 4);
	pf = re_group(tl_find1(t, "kfree"), m[3]);
	EXPECT_STR(pf, pa, "large kfree ptr");
	free(pa);
	free(pf);
	tl_free(t);
}

static void test_trace_pages(void **state)
{
	static struct alloc_ctx ctx = { .pid = 555, .comm = "pager", .site = NULL };
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[6];
	struct page *pg, *pg2;
	char *page_a, *pfn_a, *page_f, *pfn_f;

	(void)state;
	pin(3);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	pg = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(pg);
	__free_pages(pg, 0);
	pg2 = alloc_pages(GFP_KERNEL, 2);
	assert_non_null(pg2);
	__free_pages(pg2, 2);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	if (t->n != 4) {
		tl_dump(t);
		fail_msg("%d events for two alloc_pages/__free_pages pairs, expected 4", t->n);
	}
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_alloc: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=0 "
		    "migratetype=[0-9]+ gfp_flags=GFP_KERNEL$", t->l[0], m, 5);
	page_a = re_group(t->l[0], m[3]);
	pfn_a = re_group(t->l[0], m[4]);
	EXPECT_EQ(strtoul(pfn_a, NULL, 16), page_to_pfn(pg), "mm_page_alloc pfn");
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_free: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=0$", t->l[1], m, 5);
	page_f = re_group(t->l[1], m[3]);
	pfn_f = re_group(t->l[1], m[4]);
	EXPECT_STR(page_f, page_a, "mm_page_free page");
	EXPECT_STR(pfn_f, pfn_a, "mm_page_free pfn");
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_alloc: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=2 "
		    "migratetype=[0-9]+ gfp_flags=GFP_KERNEL$", t->l[2], m, 5);
	free(pfn_a);
	pfn_a = re_group(t->l[2], m[4]);
	EXPECT_EQ(strtoul(pfn_a, NULL, 16), page_to_pfn(pg2), "mm_page_alloc pfn, order 2");
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_free: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=2$", t->l[3], m, 5);
	free(page_a);
	free(pfn_a);
	free(page_f);
	free(pfn_f);
	tl_free(t);
}

/* Called from the trace test so that its return address is inside it. */
void *trace_site_caller(size_t n);
void trace_site_freer(void *p);
void *volatile trace_site_sink;

__attribute__((noinline)) void *trace_site_caller(size_t n)
{
	void *p = kmalloc(n, GFP_KERNEL);

	trace_site_sink = p;	/* no tail call: the return address stays here */
	return p;
}

__attribute__((noinline)) void trace_site_freer(void *p)
{
	kfree(p);
	trace_site_sink = NULL;
}

/* Lines of kmalloc/kfree events only (a new slab also traces mm_page_alloc). */
static struct tlines *tl_only_slab_events(struct tlines *t)
{
	struct tlines *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	for (int i = 0; i < t->n; i++)
		if (strstr(t->l[i], ": kmalloc: ") || strstr(t->l[i], ": kfree: "))
			o->l[o->n++] = strdup(t->l[i]);
	tl_free(t);
	return o;
}

/*
 * Without a client site, call_site is the allocating function: NAME+0xOFF/0xSIZE
 * (or NAME) when it resolves.  When this binary's symbols are not resolvable
 * at all (dladdr finds no name), the kernel's %pS prints the raw address, so
 * 0x... is accepted then and only then.
 */
#define SITE_SYM "([a-zA-Z_][a-zA-Z0-9_.]*)(\\+0x[0-9a-f]+/0x[0-9a-f]+)?"
#define SITE_ANY "([a-zA-Z_][a-zA-Z0-9_.]*(\\+0x[0-9a-f]+/0x[0-9a-f]+)?|0x[0-9a-f]+)"

static void test_trace_call_site_symbol(void **state)
{
	static struct alloc_ctx ctx = { .pid = 77, .comm = "daemon", .site = NULL };
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[6];
	Dl_info di;
	bool resolvable;
	char *site_a, *site_f;
	char pat[512];
	void *p;

	(void)state;
	pin(0);
	resolvable = dladdr((void *)(uintptr_t)trace_site_caller, &di) && di.dli_sname &&
		     strcmp(di.dli_sname, "trace_site_caller") == 0;
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	p = trace_site_caller(64);
	assert_non_null(p);
	trace_site_freer(p);
	alloc_set_ctx(NULL);
	/* The daemon thread itself (no ctx): some COMM-PID. */
	p = kmalloc(64, GFP_KERNEL);
	kfree(p);
	trace_set_on(false);
	t = tl_only_slab_events(tl_collect(&cur));
	if (t->n != 4) {
		tl_dump(t);
		fail_msg("%d kmalloc/kfree events, expected 4", t->n);
	}
	snprintf(pat, sizeof(pat), "%s%s%s", FTRACE_HEAD("daemon-77", "000") "kmalloc: call_site=",
		 resolvable ? SITE_SYM : SITE_ANY,
		 " ptr=[0-9a-f]{16} bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1 "
		 "accounted=false$");
	expect_line(pat, t->l[0], m, 5);
	site_a = re_group(t->l[0], m[3]);
	snprintf(pat, sizeof(pat), "%s%s%s", FTRACE_HEAD("daemon-77", "000") "kfree: call_site=",
		 resolvable ? SITE_SYM : SITE_ANY, " ptr=[0-9a-f]{16}$");
	expect_line(pat, t->l[1], m, 5);
	site_f = re_group(t->l[1], m[3]);
	print_message("call_site without a client site: \"%s\" / \"%s\" (dladdr %s)\n",
		      site_a, site_f, resolvable ? "resolves" : "does not resolve");
	if (resolvable) {
		EXPECT_STR(site_a, "trace_site_caller", "kmalloc call_site symbol");
		EXPECT_STR(site_f, "trace_site_freer", "kfree call_site symbol");
	}
	snprintf(pat, sizeof(pat), "%s%s%s",
		 "^ *.+-[0-9]+ +\\[000\\] \\.{5} +[0-9]+\\.[0-9]{6}: kmalloc: call_site=",
		 SITE_ANY,	/* a static function: not in the dynamic symbol table */
		 " ptr=[0-9a-f]{16} bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1 "
		 "accounted=false$");
	expect_line(pat, t->l[2], m, 3);
	snprintf(pat, sizeof(pat), "%s%s%s",
		 "^ *.+-[0-9]+ +\\[000\\] \\.{5} +[0-9]+\\.[0-9]{6}: kfree: call_site=",
		 SITE_ANY, " ptr=[0-9a-f]{16}$");
	expect_line(pat, t->l[3], m, 3);
	free(site_a);
	free(site_f);
	tl_free(t);
}

static void test_trace_off(void **state)
{
	struct trace_cursor cur;
	uint64_t h;
	char buf[512];
	void *p;
	struct page *pg;
	struct kmem_cache *s;

	(void)state;
	s = kmem_cache_create("off_cache", 50, 0, 0);
	assert_non_null(s);
	trace_set_on(false);
	assert_false(trace_is_on());
	trace_cursor_init(&cur, true);
	h = trace_head();
	alloc_set_ctx(&client_ctx);
	p = kmalloc(100, GFP_KERNEL);
	kfree(p);
	p = kmalloc(100000, GFP_KERNEL);
	kfree(p);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	pg = alloc_pages(GFP_KERNEL, 1);
	__free_pages(pg, 1);
	trace_kfree(0, NULL);
	alloc_set_ctx(NULL);
	EXPECT_EQ(trace_head(), h, "trace_head with tracing off");
	EXPECT_EQ(trace_read(&cur, buf, sizeof(buf)), 0, "trace_read with tracing off");
	EXPECT_DESTROY(s, "off_cache");
}

/* §3.3/§10: kfree traces before its NULL check (docs/kernel-slab.md §12 marks this as
 * code reading). */
static void test_trace_kfree_null(void **state)
{
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[3];

	(void)state;
	pin(1);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&client_ctx);
	kfree(NULL);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	if (t->n != 1) {
		tl_dump(t);
		fail_msg("%d events for kfree(NULL), expected 1", t->n);
	}
	expect_line(FTRACE_HEAD("client-1234", "001") "kfree: call_site=mysite ptr=0000000000000000$",
		    t->l[0], m, 3);
	tl_free(t);
}

static void test_trace_two_cursors(void **state)
{
	static struct alloc_ctx ctx = { .pid = 0, .comm = "cur", .site = "x" };
	struct trace_cursor c1, c2, c3;
	struct tlines *t1, *t2, *t3;
	uint64_t h;
	char buf[512];

	(void)state;
	pin(0);
	trace_cursor_init(&c1, true);
	trace_cursor_init(&c2, true);
	h = trace_head();
	trace_set_on(true);
	for (int i = 0; i < 10; i++) {
		ctx.pid = 500 + i;
		alloc_set_ctx(&ctx);
		trace_kfree((uintptr_t)test_trace_two_cursors, NULL);
	}
	alloc_set_ctx(NULL);
	trace_set_on(false);
	EXPECT_EQ(trace_head() - h, 10, "trace_head advanced by the events");
	/* A cursor from now sees nothing of the past. */
	trace_cursor_init(&c3, true);
	EXPECT_EQ(trace_read(&c3, buf, sizeof(buf)), 0, "from_now cursor");
	t1 = tl_collect(&c1);
	t2 = tl_collect(&c2);
	EXPECT_EQ(t1->n, 10, "first cursor's events");
	EXPECT_EQ(t2->n, 10, "second cursor's events");
	for (int i = 0; i < 10; i++) {
		char pat[256];

		snprintf(pat, sizeof(pat), "^ *cur-%d +\\[000\\] \\.{5} +[0-9]+\\.[0-9]{6}: kfree: "
			 "call_site=[^ ]+ ptr=[0-9a-f]{16}$", 500 + i);
		expect_line(pat, t1->l[i], NULL, 0);
		EXPECT_STR(t2->l[i], t1->l[i], "both cursors see the same line %d", i);
	}
	/* A cursor from the oldest event sees them too (the ring is large). */
	trace_cursor_init(&c3, false);
	t3 = tl_collect(&c3);
	assert_true(t3->n >= 10);
	EXPECT_STR(t3->l[t3->n - 1], t1->l[9], "oldest-cursor's last line");
	tl_free(t1);
	tl_free(t2);
	tl_free(t3);
}

/* Group trace16: a 16-event ring. */
static void test_trace_lost(void **state)
{
	static struct alloc_ctx ctx = { .pid = 0, .comm = "lost", .site = "ls" };
	struct trace_cursor cur, c2;
	struct tlines *t, *t2;
	uint64_t h;

	(void)state;
	pin(1);
	trace_cursor_init(&cur, true);
	h = trace_head();
	trace_set_on(true);
	for (int i = 0; i < 100; i++) {
		ctx.pid = 1000 + i;
		alloc_set_ctx(&ctx);
		trace_kfree((uintptr_t)test_trace_lost, NULL);
	}
	alloc_set_ctx(NULL);
	trace_set_on(false);
	EXPECT_EQ(trace_head() - h, 100, "events produced");
	t = tl_collect(&cur);
	if (t->n != 17) {
		tl_dump(t);
		fail_msg("%d lines, expected the LOST line and the newest 16 events", t->n);
	}
	expect_line("^CPU:[0-9]+ \\[LOST 84 EVENTS\\]$", t->l[0], NULL, 0);
	for (int i = 0; i < 16; i++) {
		char pat[256];

		snprintf(pat, sizeof(pat), "^ *lost-%d +\\[001\\] \\.{5} +[0-9]+\\.[0-9]{6}: kfree: "
			 "call_site=[^ ]+ ptr=[0-9a-f]{16}$", 1084 + i);
		expect_line(pat, t->l[1 + i], NULL, 0);
	}
	/* A reader starting at the oldest held event loses nothing. */
	trace_cursor_init(&c2, false);
	t2 = tl_collect(&c2);
	EXPECT_EQ(t2->n, 16, "cursor at the oldest event");
	for (int i = 0; i < t2->n && i < 16; i++)
		EXPECT_STR(t2->l[i], t->l[1 + i], "same events, line %d", i);
	tl_free(t);
	tl_free(t2);
}

/* ================================================================== */
/* Stress                                                               */

#define ST_LOCAL	256
#define ST_SHARED	2048
#define ST_CACHE_SIZE	200u
enum { OBJ_KMALLOC = 0, OBJ_SMALL = 1, OBJ_CACHE = 2, OBJ_PAGES = 3 };
#define DEAD_WORD	0xdeaddeaddeaddeadull

struct stress_ctx {
	_Atomic uintptr_t shared[ST_SHARED];
	struct kmem_cache *cache;
	uint64_t seed;
	long iters;
	atomic_long errors;		/* the workers' own findings: they stop */
	atomic_long check_errors;	/* concurrent alloc_check() failures */
	char check_msg[512];
	atomic_int stop;
	atomic_long checks;
	atomic_long allocs;
	atomic_long frees;
	pthread_mutex_t msg_lock;
	char msg[512];
};

struct stress_thread {
	struct stress_ctx *c;
	pthread_t th;
	int pin;
	uint64_t rng;
	uintptr_t local[ST_LOCAL];
};

static void stress_error(struct stress_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void stress_error(struct stress_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&c->errors, 1) == 0) {
		pthread_mutex_lock(&c->msg_lock);
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
		va_end(ap);
		pthread_mutex_unlock(&c->msg_lock);
	}
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t tok(const struct stress_ctx *c, const void *p)
{
	return (uint64_t)(uintptr_t)p ^ c->seed ^ 0xa11ce5ed00000000ull;
}

/* Take ownership: word 0 becomes the live token; it must not be one already. */
static bool claim(struct stress_ctx *c, void *p, const char *what)
{
	uint64_t old = __atomic_exchange_n((uint64_t *)p, tok(c, p), __ATOMIC_SEQ_CST);

	if (old == tok(c, p)) {
		stress_error(c, "%s %p handed out while still live", what, p);
		return false;
	}
	return true;
}

static bool release(struct stress_ctx *c, void *p, const char *what)
{
	uint64_t old = __atomic_exchange_n((uint64_t *)p, DEAD_WORD, __ATOMIC_SEQ_CST);

	if (old != tok(c, p)) {
		stress_error(c, "%s %p: start cookie %#llx, expected %#llx", what, p,
			     (unsigned long long)old, (unsigned long long)tok(c, p));
		return false;
	}
	return true;
}

static void stamp(struct stress_ctx *c, void *p, uint64_t n, size_t end)
{
	uint64_t e = ~tok(c, p) ^ n;

	memcpy((char *)p + 8, &n, 8);
	if (end >= 24)
		memcpy((char *)p + end - 8, &e, 8);
}

static bool check_stamp(struct stress_ctx *c, void *p, uint64_t n, size_t end, const char *what)
{
	uint64_t e;

	if (end >= 24) {
		memcpy(&e, (char *)p + end - 8, 8);
		if (e != (~tok(c, p) ^ n)) {
			stress_error(c, "%s %p (%llu bytes): end cookie overwritten", what, p,
				     (unsigned long long)n);
			return false;
		}
	}
	return true;
}

static uintptr_t stress_alloc(struct stress_ctx *c, uint64_t *rng)
{
	static const unsigned lo[13] = { 1, 9, 17, 33, 65, 97, 129, 193, 257, 513, 1025, 2049, 4097 };
	static const unsigned hi[13] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };
	uint64_t r = rng_next(rng);
	unsigned pick = (unsigned)(r % 1000);
	void *p;

	r /= 1000;
	if (pick < 15) {			/* large kmalloc */
		size_t n = 8193 + r % (65536 - 8192);
		gfp_t gfp = (r >> 20) & 1 ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;

		p = kmalloc(n, gfp);
		if (!p) {
			stress_error(c, "kmalloc(%zu) = NULL", n);
			return 0;
		}
		if (!claim(c, p, "large kmalloc"))
			return 0;
		stamp(c, p, n, n);
		return (uintptr_t)p | OBJ_KMALLOC;
	}
	if (pick < 25) {			/* alloc_pages */
		unsigned order = (unsigned)(r % 3);
		struct page *pg = alloc_pages(GFP_KERNEL, order);

		if (!pg) {
			stress_error(c, "alloc_pages(%u) = NULL", order);
			return 0;
		}
		p = page_address(pg);
		if (!claim(c, p, "pages"))
			return 0;
		stamp(c, p, order, (size_t)PG << order);
		return (uintptr_t)p | OBJ_PAGES;
	}
	if (pick < 125) {			/* the dedicated cache */
		bool zero = r & 1;

		p = kmem_cache_alloc(c->cache, zero ? GFP_KERNEL | __GFP_ZERO : GFP_KERNEL);
		if (!p) {
			stress_error(c, "kmem_cache_alloc = NULL");
			return 0;
		}
		if (zero && !all_zero(p, ST_CACHE_SIZE)) {
			stress_error(c, "kmem_cache_alloc(__GFP_ZERO) %p not zeroed", p);
			return 0;
		}
		if (!claim(c, p, "cache object"))
			return 0;
		stamp(c, p, ST_CACHE_SIZE, ST_CACHE_SIZE);
		return (uintptr_t)p | OBJ_CACHE;
	}
	unsigned cls = (unsigned)(r % 13);
	r /= 13;
	size_t n = lo[cls] + r % (hi[cls] - lo[cls] + 1);
	r /= 8192;
	unsigned g = (unsigned)(r % 6);
	gfp_t gfp = g < 2 ? GFP_KERNEL : g < 4 ? GFP_KERNEL_ACCOUNT :
		    g == 4 ? GFP_KERNEL | __GFP_RECLAIMABLE : GFP_KERNEL | __GFP_ZERO;

	p = kmalloc(n, gfp);
	if (!p) {
		stress_error(c, "kmalloc(%zu) = NULL", n);
		return 0;
	}
	if (g == 5 && !all_zero(p, n < 512 ? n : 512)) {
		stress_error(c, "kmalloc(%zu, __GFP_ZERO) %p not zeroed", n, p);
		return 0;
	}
	if (!claim(c, p, "kmalloc"))
		return 0;
	if (n < 16)
		return (uintptr_t)p | OBJ_SMALL;
	stamp(c, p, n, n);
	return (uintptr_t)p | OBJ_KMALLOC;
}

static void stress_free(struct stress_ctx *c, uintptr_t o)
{
	void *p = (void *)(o & ~(uintptr_t)3);
	uint64_t n;

	switch (o & 3) {
	case OBJ_SMALL:
		if (ksize(p) != 8 && ksize(p) != 16) {
			stress_error(c, "ksize(small %p) = %zu", p, ksize(p));
			return;
		}
		if (release(c, p, "kmalloc(<16)"))
			kfree(p);
		break;
	case OBJ_KMALLOC:
		if (__atomic_load_n((uint64_t *)p, __ATOMIC_SEQ_CST) != tok(c, p)) {
			stress_error(c, "kmalloc %p: start cookie overwritten", p);
			return;
		}
		memcpy(&n, (char *)p + 8, 8);
		if (n < 16 || n > 65536) {
			stress_error(c, "kmalloc %p: size word %llu overwritten", p, (unsigned long long)n);
			return;
		}
		if (!check_stamp(c, p, n, n, "kmalloc"))
			return;
		if (ksize(p) != ref_roundup(n)) {
			stress_error(c, "ksize(kmalloc(%llu)) = %zu, expected %zu",
				     (unsigned long long)n, ksize(p), ref_roundup(n));
			return;
		}
		if (release(c, p, "kmalloc"))
			kfree(p);
		break;
	case OBJ_CACHE:
		memcpy(&n, (char *)p + 8, 8);
		if (n != ST_CACHE_SIZE) {
			stress_error(c, "cache object %p: size word overwritten", p);
			return;
		}
		if (!check_stamp(c, p, n, n, "cache object"))
			return;
		if (release(c, p, "cache object"))
			kmem_cache_free(c->cache, p);
		break;
	case OBJ_PAGES:
		memcpy(&n, (char *)p + 8, 8);
		if (n > 2) {
			stress_error(c, "pages %p: order word overwritten", p);
			return;
		}
		if (!check_stamp(c, p, n, (size_t)PG << n, "pages"))
			return;
		if (release(c, p, "pages"))
			__free_pages(virt_to_page(p), (unsigned)n);
		break;
	}
}

static void *stress_thread_fn(void *arg)
{
	struct stress_thread *t = arg;
	struct stress_ctx *c = t->c;
	long allocs = 0, frees = 0;

	if (t->pin >= 0) {
		if (alloc_pin_cpu(t->pin) != 0 || alloc_current_cpu() != t->pin)
			stress_error(c, "pinning to %d failed", t->pin);
	}
	for (long i = 0; i < c->iters && !atomic_load_explicit(&c->errors, memory_order_relaxed); i++) {
		uintptr_t o = stress_alloc(c, &t->rng), old;
		uint64_t r;

		if (!o)
			break;
		allocs++;
		r = rng_next(&t->rng);
		if (r & 1) {
			old = atomic_exchange(&c->shared[(r >> 1) % ST_SHARED], o);
		} else {
			unsigned j = (unsigned)((r >> 1) % ST_LOCAL);

			old = t->local[j];
			t->local[j] = o;
		}
		if (old) {
			stress_free(c, old);
			frees++;
		}
	}
	atomic_fetch_add(&c->allocs, allocs);
	atomic_fetch_add(&c->frees, frees);
	alloc_pin_cpu(-1);
	return NULL;
}

static void *stress_checker_fn(void *arg)
{
	struct stress_ctx *c = arg;
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	while (!atomic_load(&c->stop)) {
		char msg[512] = "";
		int r = alloc_check(msg, sizeof(msg));

		if (r && atomic_fetch_add(&c->check_errors, 1) == 0)
			snprintf(c->check_msg, sizeof(c->check_msg), "%d: %s", r, msg);
		atomic_fetch_add(&c->checks, 1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static uint64_t stress_seed(void)
{
	const char *e = getenv("ALLOC_TEST_SEED");

	return e ? strtoull(e, NULL, 0) : 0x5eed0123456789abull;
}

static void run_stress(const char *cache_name, int nthreads, bool pinned, long iters)
{
	struct stress_ctx *c = calloc(1, sizeof(*c));
	struct stress_thread *th = calloc((size_t)nthreads, sizeof(*th));
	struct alloc_stats base, st;
	pthread_t checker;
	char msg[1024] = "";
	int r;

	assert_non_null(c);
	assert_non_null(th);
	pthread_mutex_init(&c->msg_lock, NULL);
	c->seed = stress_seed();
	c->iters = iters;
	c->cache = kmem_cache_create(cache_name, ST_CACHE_SIZE, 0, 0);
	assert_non_null(c->cache);
	kmem_cache_shrink_all();
	stats(&base);
	print_message("stress: %d threads, %s, %ld iterations each, seed %#llx\n", nthreads,
		      pinned ? "pinned" : "unpinned", iters, (unsigned long long)c->seed);

	/* ALLOC_STRESS_NO_CHECKER=1 leaves out the concurrent alloc_check()
	 * thread (to tell a checker race from a real inconsistency). */
	if (getenv("ALLOC_STRESS_NO_CHECKER"))
		atomic_store(&c->stop, 1);
	assert_int_equal(pthread_create(&checker, NULL, stress_checker_fn, c), 0);
	for (int i = 0; i < nthreads; i++) {
		th[i].c = c;
		th[i].pin = pinned ? i % (int)alloc_nr_cpus() : -1;
		th[i].rng = c->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
		if (!th[i].rng)
			th[i].rng = 1;
		assert_int_equal(pthread_create(&th[i].th, NULL, stress_thread_fn, &th[i]), 0);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i].th, NULL);
	atomic_store(&c->stop, 1);
	pthread_join(checker, NULL);

	/* Free what is left, from this thread. */
	for (int i = 0; i < nthreads; i++)
		for (int j = 0; j < ST_LOCAL; j++)
			if (th[i].local[j]) {
				stress_free(c, th[i].local[j]);
				th[i].local[j] = 0;
			}
	for (int j = 0; j < ST_SHARED; j++) {
		uintptr_t o = atomic_exchange(&c->shared[j], 0);

		if (o)
			stress_free(c, o);
	}
	print_message("stress: %ld allocations, %ld frees in threads, %ld concurrent checks\n",
		      atomic_load(&c->allocs), atomic_load(&c->frees), atomic_load(&c->checks));
	soft_reset();
	if (atomic_load(&c->errors)) {
		print_error("stress: %ld errors, first: %s\n", atomic_load(&c->errors), c->msg);
		soft_errors++;
	}
	if (atomic_load(&c->check_errors)) {
		print_error("stress: %ld of %ld concurrent alloc_check() calls failed, first: %s\n",
			    atomic_load(&c->check_errors), atomic_load(&c->checks), c->check_msg);
		soft_errors++;
	}
	r = alloc_check(msg, sizeof(msg));
	if (r) {
		print_error("alloc_check after the stress, everything freed: %d: %s\n", r, msg);
		soft_errors++;
	}
	kmem_cache_shrink_all();
	stats(&st);
	SOFT_EQ(st.pages_free, base.pages_free, "pages_free after stress + kmem_cache_shrink_all()");
	SOFT_EQ(st.pages_slab, base.pages_slab, "pages_slab after stress + kmem_cache_shrink_all()");
	SOFT_EQ(st.pages_large_kmalloc, base.pages_large_kmalloc, "pages_large_kmalloc after stress");
	SOFT_EQ(st.pages_alloc, base.pages_alloc, "pages_alloc after stress");
	EXPECT_DESTROY(c->cache, cache_name);
	pthread_mutex_destroy(&c->msg_lock);
	free(th);
	free(c);
	soft_done();
}

static void test_stress_pinned(void **state)
{
	(void)state;
	run_stress("stress_pinned", 4, true, 1000000);
}

static void test_stress_unpinned(void **state)
{
	(void)state;
	run_stress("stress_unpinned", 6, false, 500000);
}

/* ================================================================== */
/* Group: online CPUs (cpus = 0)                                        */

static void test_online_cpus(void **state)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned cpus = alloc_nr_cpus();
	void *p;

	(void)state;
	print_message("online CPUs %ld, machine cpus %u, rseq %s\n", online, cpus,
		      alloc_uses_rseq() ? "yes" : "no");
	EXPECT_EQ(cpus, online, "cpus = 0 means the online CPUs");
	for (int i = 0; i < 100; i++) {
		int c = alloc_current_cpu();

		assert_true(c >= 0 && (unsigned)c < cpus);
	}
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++)
		for (unsigned idx = 1; idx < NR_KMALLOC_INDEX; idx++) {
			struct ref_geom g = ref_kmalloc_geom(idx, cpus);
			char what[64];

			snprintf(what, sizeof(what), "%s%s", ref_type_prefix[t], ref_class_suffix[idx]);
			expect_geom(kmalloc_cache(t, idx), &g, what);
		}
	soft_done();
	p = kmalloc(2312, GFP_KERNEL_ACCOUNT);
	assert_non_null(p);
	EXPECT_EQ(ksize(p), 4096, "ksize(kmalloc(2312))");
	kfree(p);
	/* Reuse on a pinned slot works with the fast path too.  The thread is
	 * also bound to real CPU 0, so that a fast path keyed by the real CPU
	 * (rseq) sees the same CPU as the pinned slot. */
	{
		cpu_set_t set, old;

		assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
		pin(0);
		p = kmalloc(64, GFP_KERNEL);
		kfree(p);
		void *q = kmalloc(64, GFP_KERNEL);
		kfree(q);
		alloc_pin_cpu(-1);
		sched_setaffinity(0, sizeof(old), &old);
		assert_ptr_equal(q, p);
	}
}

/*
 * Frees in allocation order, as bench_alloc's bulk: each slab but the CPU
 * slab gets its objects back as a pending run (rseq_free_push's second
 * case, the run's head and slab 24 bytes after the freelist's), counted
 * when the next slab's run starts.  alloc_check() with a run still pending
 * walks it to its tail; shrinking afterwards gives every slab back, which
 * only happens if every run's count matched the slab's inuse.  On the
 * machine's real CPUs, unpinned: the rseq sequences where rseq works.
 */
static void test_free_runs_in_order(void **state)
{
	struct kmem_cache *s = kmalloc_cache(KMALLOC_NORMAL, kmalloc_index(8));
	struct kmem_cache_info info;
	struct alloc_stats st0, st;
	char msg[512] = "";
	unsigned long n;
	void **v;

	(void)state;
	assert_non_null(s);
	kmem_cache_info(s, &info);
	n = info.objects * 7ul / 2;
	v = calloc(n, sizeof(*v));
	assert_non_null(v);
	kmem_cache_shrink(s);
	alloc_stats(&st0);
	for (unsigned long i = 0; i < n; i++) {
		v[i] = kmalloc(8, GFP_KERNEL);
		assert_non_null(v[i]);
		*(unsigned long *)v[i] = i;
	}
	for (unsigned long i = 0; i < n; i++) {
		EXPECT_EQ(*(unsigned long *)v[i], i, "object %lu kept its contents", i);
		kfree(v[i]);
		if (i == n - info.objects / 2)
			EXPECT_EQ(alloc_check(msg, sizeof(msg)), 0,
				  "alloc_check with a run pending: %s", msg);
	}
	EXPECT_EQ(alloc_check(msg, sizeof(msg)), 0, "alloc_check after the frees: %s", msg);
	/* every object comes back, no object twice */
	for (unsigned long i = 0; i < n; i++)
		v[i] = kmalloc(8, GFP_KERNEL);
	qsort(v, n, sizeof(*v), cmp_ptr);
	for (unsigned long i = 1; i < n; i++)
		assert_true(v[i - 1] != v[i]);
	for (unsigned long i = 0; i < n; i++)
		kfree(v[i]);
	free(v);
	kmem_cache_shrink(s);
	alloc_stats(&st);
	EXPECT_EQ(st.pages_free, st0.pages_free, "every slab back after the frees and a shrink");
}

static void test_stress_online(void **state)
{
	(void)state;
	run_stress("stress_online", 4, false, 500000);
}

/* ================================================================== */

int main(void)
{
	const struct CMUnitTest init_tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_init_errors),
	};
	const struct CMUnitTest cpus4_tests[] = {
		T4(test_kmalloc_index_table),
		T4(test_kmalloc_ksize_and_routing),
		T4(test_kmalloc_zero_size),
		T4(test_kmalloc_types_and_names),
		T4(test_kmalloc_cache_geometry),
		T4(test_calculate_alignment),
		T4(test_calculate_order),
		T4(test_cache_geometry_sweep),
		T4(test_object_alignment),
		T4(test_zeroing),
		T4(test_reuse_lifo),
		T4(test_distinct_objects),
		T4(test_fresh_slab_address_order),
		T4(test_free_writes_only_freeptr),
		T4(test_alloc_object_cache_api),
		T4(test_pages_basic),
		T4(test_stats_identity),
		T4(test_exhaust_kmalloc_8k),
		T4(test_exhaust_large_and_pages),
		T4(test_cache_lifecycle),
		T4(test_cache_create_errors),
		T4(test_cache_max_object),
		T4(test_slabinfo_format),
		T4(test_shrink),
		T4(test_partial_lists),
		T4(test_partial_discard_at_min),
		T4(test_gfp_format),
		T4(test_gfp_parse),
		T4(test_slab_flags_format_parse),
		T4(test_pin_cpu),
	};
	const struct CMUnitTest cpus8_tests[] = {
		T8(test_2312_example),
		T8(test_kmalloc_geometry_8cpus),
		T8(test_slabinfo_kmalloc_4k),
	};
	const struct CMUnitTest trace_tests[] = {
		T4(test_trace_kmalloc_and_cache),
		T4(test_trace_accounted_flags),
		T4(test_trace_large_kmalloc),
		T4(test_trace_pages),
		T4(test_trace_call_site_symbol),
		T4(test_trace_off),
		T4(test_trace_kfree_null),
		T4(test_trace_two_cursors),
	};
	const struct CMUnitTest trace16_tests[] = {
		T16(test_trace_lost),
	};
	const struct CMUnitTest stress_tests[] = {
		TS(test_stress_pinned),
		TS(test_stress_unpinned),
	};
	const struct CMUnitTest online_tests[] = {
		TO(test_online_cpus),
		TO(test_free_runs_in_order),
		TO(test_stress_online),
	};
	const char *filter = getenv("ALLOC_TEST_FILTER");
	int failed = 0;

	if (filter)
		cmocka_set_test_filter(filter);

	failed += cmocka_run_group_tests_name("alloc_init", init_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("alloc_cpus4", cpus4_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("alloc_cpus8", cpus8_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("alloc_trace", trace_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("alloc_trace16", trace16_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("alloc_stress", stress_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("alloc_online", online_tests, NULL, NULL);
	return failed ? 1 : 0;
}
