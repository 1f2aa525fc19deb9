/* SPDX-License-Identifier: MIT */
/*
 * alloc_objects.c - unit tests of alloc/: objects and pages: alignment, zeroing, reuse, the
 * free pointer, the statistics identity, exhaustion (§3).
 */
#include "test_alloc.h"

/* ------------------------------------------------------------------ */

void test_object_alignment(void **state)
{
	static void *objs[1100];

	(void)state;
	pin(0);
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (unsigned idx = 1; idx < REF_NR_INDEX; idx++) {
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

bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

void test_zeroing(void **state)
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

void test_reuse_lifo(void **state)
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

int cmp_ptr(const void *a, const void *b)
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

void test_distinct_objects(void **state)
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

void test_fresh_slab_address_order(void **state)
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
void test_free_writes_only_freeptr(void **state)
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

void test_alloc_object_cache_api(void **state)
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

void test_pages_basic(void **state)
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
void test_stats_identity(void **state)
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

void check_in_arena(const void *p, size_t len, const char *what)
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

void test_exhaust_kmalloc_8k(void **state)
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

void test_exhaust_large_and_pages(void **state)
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

