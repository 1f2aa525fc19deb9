/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of alloc/, written from alloc/alloc.h and
 * docs/kernel-slab.md (§1 kmalloc size classes, §2 kmem_cache_create
 * geometry, §3 SLUB paths, §10 tracepoints, §11 /proc/slabinfo) without
 * looking at the implementation.  Every expected number is either a value the
 * docs/kernel-slab.md states (copied into a table beside the test) or computed by the small reference
 * functions of alloc_ref.c (ref_*), which transcribe docs/kernel-slab.md's rules; the
 * implementation's own calculate_order()/calculate_alignment() are tested
 * against them, never used to compute expectations.
 *
 * Machines: each group builds one with alloc_init() and tears it down with
 * alloc_exit(); after every test, alloc_check() must return 0.
 *
 * The tests are in alloc_*.c by topic (test_alloc.h lists them); this file
 * holds the machines, the per-test check and main()'s groups.
 */
#include "test_alloc.h"

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
	int r;

	(void)state;
	alloc_pin_cpu(-1);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	r = check_reported("alloc_check", alloc_check);
	alloc_exit();
	if (r != 0)
		fail_msg("alloc_check failed after the test");
	deferred_done();
	return 0;
}

#define T4(f)	cmocka_unit_test_setup_teardown(f, setup_cpus4, check_and_down)
#define T8(f)	cmocka_unit_test_setup_teardown(f, setup_cpus8, check_and_down)
#define T16(f)	cmocka_unit_test_setup_teardown(f, setup_trace16, check_and_down)
#define TS(f)	cmocka_unit_test_setup_teardown(f, setup_stress, check_and_down)
#define TO(f)	cmocka_unit_test_setup_teardown(f, setup_online, check_and_down)

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

/*
 * Larger pages (machine.page_size 8 KiB to 64 KiB): kmalloc's classes go up
 * to twice the page, as the kernel's KMALLOC_SHIFT_HIGH, and every size up
 * to there is served from its class; the next size is a large kmalloc.
 */
static void test_larger_pages(void **state)
{
	static const unsigned int pages[] = { 8192, 16384, 65536 };

	(void)state;
	for (size_t k = 0; k < sizeof(pages) / sizeof(pages[0]); k++) {
		unsigned int pg = pages[k], top = 2 * pg;
		struct alloc_config c;
		char msg[256];

		alloc_config_defaults(&c);
		c.page_size = pg;
		c.memory = (uint64_t)pg << 12;	/* four of the largest buddy blocks */
		c.cpus = 2;
		assert_int_equal(alloc_init(&c), 0);
		EXPECT_EQ(KMALLOC_MAX_CACHE_SIZE, top, "KMALLOC_MAX_CACHE_SIZE at page %u", pg);
		for (unsigned int sz = 4096; sz <= top; sz *= 2) {
			unsigned int idx = kmalloc_index(sz);
			char name[32];

			EXPECT_EQ(kmalloc_size(idx), sz, "kmalloc_size(%u) at page %u", idx, pg);
			if (sz % 1024)
				snprintf(name, sizeof(name), "kmalloc-cg-%u", sz);
			else
				snprintf(name, sizeof(name), "kmalloc-cg-%uk", sz / 1024);
			assert_non_null(kmalloc_cache(KMALLOC_CGROUP, idx));
			EXPECT_STR(kmem_cache_name(kmalloc_cache(KMALLOC_CGROUP, idx)), name,
				   "class of %u at page %u", sz, pg);
		}
		EXPECT_EQ(kmalloc_size(kmalloc_index(top) + 1), 0, "no class past %u", top);
		/* every size across the top classes, and the first large one */
		for (unsigned int sz = pg / 2 - 1; sz <= top + 1; sz += pg / 4 - 1) {
			void *p = kmalloc(sz, GFP_KERNEL_ACCOUNT);

			assert_non_null(p);
			EXPECT_EQ(ksize(p), kmalloc_size_roundup(sz), "ksize(kmalloc(%u)) at page %u",
				  sz, pg);
			memset(p, 0x5a, sz);
			kfree(p);
		}
		{
			void *p = kmalloc(top, GFP_KERNEL);
			void *q = kmalloc(top + 1, GFP_KERNEL);

			assert_non_null(p);
			assert_non_null(q);
			EXPECT_EQ(ksize(p), top, "ksize(kmalloc(%u))", top);
			EXPECT_EQ(ksize(q), 2 * top, "ksize(kmalloc(%u)): a large kmalloc", top + 1);
			kfree(p);
			kfree(q);
		}
		EXPECT_EQ(alloc_check(msg, sizeof(msg)), 0, "alloc_check at page %u: %s", pg, msg);
		alloc_exit();
	}
}

/* ================================================================== */

int main(void)
{
	const struct CMUnitTest init_tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_larger_pages),
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
		TO(test_free_guess_across_caches),
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
