/* SPDX-License-Identifier: MIT */
/*
 * alloc_cpus.c - unit tests of alloc/: CPUs: pinning, an 8-CPU machine's geometry and
 * slabinfo, a machine of the online CPUs.
 */
#include "test_alloc.h"

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

void test_pin_cpu(void **state)
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

void test_2312_example(void **state)
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

void test_kmalloc_geometry_8cpus(void **state)
{
	/* §2.5's table: objperslab / pagesperslab with 8 CPUs. */
	static const unsigned objs[REF_NR_INDEX] = {
		0, 42, 21, 512, 256, 128, 64, 32, 32, 32, 32, 16, 8, 4,
	};
	static const unsigned pages[REF_NR_INDEX] = {
		0, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8,
	};

	(void)state;
	soft_reset();
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++)
		for (unsigned idx = 1; idx < REF_NR_INDEX; idx++) {
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

void test_slabinfo_kmalloc_4k(void **state)
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
/* Group: online CPUs (cpus = 0)                                        */

void test_online_cpus(void **state)
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
		for (unsigned idx = 1; idx < REF_NR_INDEX; idx++) {
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
void test_free_runs_in_order(void **state)
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


/*
 * The free fast path pushes onto the slots of the cache this thread last
 * freed to when the object's slab is their CPU slab or pending run, else
 * onto the object's own cache's.  Frees alternating between two caches of
 * different sizes miss the guess every time; a destroyed cache's slot
 * array, still a thread's guess, is kept and goes to the next cache.
 * Every object must come back to its own cache, once: contents kept,
 * no object handed out twice, alloc_check clean.
 */
void test_free_guess_across_caches(void **state)
{
	enum { N = 600 };
	static void *a[N], *b[N];
	struct kmem_cache *x, *y;
	char msg[512] = "";
	void *o;

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			a[i] = kmalloc(64, GFP_KERNEL);
			b[i] = kmalloc(192, GFP_KERNEL);
			assert_non_null(a[i]);
			assert_non_null(b[i]);
			memset(a[i], 0xa0 + round, 64);
			memset(b[i], 0xb0 + round, 192);
		}
		for (int i = 0; i < N; i++) {
			kfree(a[(i * 7) % N]);
			kfree(b[(i * 11) % N]);
		}
		for (int i = 0; i < N; i++) {
			a[i] = kmalloc(64, GFP_KERNEL);
			EXPECT_EQ(ksize(a[i]), 64, "a 64-byte object from kmalloc-64 (%d)", i);
		}
		for (int i = 0; i < N; i++) {
			b[i] = kmalloc(192, GFP_KERNEL);
			EXPECT_EQ(ksize(b[i]), 192, "a 192-byte object from kmalloc-192 (%d)", i);
		}
		qsort(a, N, sizeof(*a), cmp_ptr);
		qsort(b, N, sizeof(*b), cmp_ptr);
		for (int i = 1; i < N; i++) {
			assert_true(a[i - 1] != a[i]);
			assert_true(b[i - 1] != b[i]);
		}
		for (int i = 0; i < N; i++) {
			kfree(b[i]);
			kfree(a[i]);
		}
		EXPECT_EQ(alloc_check(msg, sizeof(msg)), 0, "alloc_check, round %d: %s", round, msg);
	}
	/* the guess on a cache that goes away, its slots handed to the next one */
	x = kmem_cache_create("t_guess_x", 96, 0, 0);
	assert_non_null(x);
	o = kmem_cache_alloc(x, GFP_KERNEL);
	assert_non_null(o);
	kmem_cache_free(x, o);		/* this thread's guess: x's slots */
	EXPECT_EQ(kmem_cache_destroy(x), 0, "destroy x");
	y = kmem_cache_create("t_guess_y", 96, 0, 0);
	assert_non_null(y);
	for (int i = 0; i < N; i++) {
		a[i] = kmem_cache_alloc(y, GFP_KERNEL);
		b[i] = kmalloc(64, GFP_KERNEL);
		assert_non_null(a[i]);
		assert_non_null(b[i]);
	}
	for (int i = 0; i < N; i++) {
		kfree(b[i]);
		kmem_cache_free(y, a[i]);
	}
	EXPECT_EQ(alloc_check(msg, sizeof(msg)), 0, "alloc_check after y: %s", msg);
	EXPECT_EQ(kmem_cache_destroy(y), 0, "destroy y: every object back");
}
