/* SPDX-License-Identifier: MIT */
/*
 * alloc_kmalloc.c - unit tests of alloc/: kmalloc size classes, families and cache geometry
 * (docs/kernel-slab.md §1, §2).
 */
#include "test_alloc.h"

/* ================================================================== */
/* Group: kmalloc classes, families, geometry (cpus = 4)               */

void test_kmalloc_index_table(void **state)
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
	for (unsigned i = 1; i < REF_NR_INDEX; i++)
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

const size_t probe_sizes[] = {
	1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 80, 95, 96, 97, 127,
	128, 129, 160, 191, 192, 193, 200, 255, 256, 257, 511, 512, 513, 1000,
	1023, 1024, 1025, 2047, 2048, 2049, 2312, 4095, 4096, 4097, 8191, 8192,
};
const size_t nprobe = sizeof(probe_sizes) / sizeof(probe_sizes[0]);

void test_kmalloc_ksize_and_routing(void **state)
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

void test_kmalloc_zero_size(void **state)
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

void test_kmalloc_types_and_names(void **state)
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
		for (unsigned idx = 1; idx < REF_NR_INDEX; idx++) {
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

void test_kmalloc_cache_geometry(void **state)
{
	unsigned cpus = alloc_nr_cpus();

	(void)state;
	assert_int_equal(cpus, 4);
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (unsigned idx = 1; idx < REF_NR_INDEX; idx++) {
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

void test_calculate_alignment(void **state)
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

void test_calculate_order(void **state)
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

void test_cache_geometry_sweep(void **state)
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

