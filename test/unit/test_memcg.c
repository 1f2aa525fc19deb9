/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of memcg/ (issue 3, "the charging core"), written from
 * memcg/memcg.h, alloc/alloc.h, the issue text and docs/kernel-*.md
 * (docs/kernel-slab.md §4-9, docs/kernel-interface.md §1.3, §4,
 * §7, §8.1, §9, §10), not from the implementation.  Expected numbers are
 * either values docs/kernel-*.md states (copied into tables beside the tests) or computed by the
 * small reference functions of memcg_ref.c (ref_*), which transcribe docs/kernel-*.md's rules.
 *
 * Every test gets a fresh machine (alloc_init, 128 MiB) and memory
 * controller (memcg_init); the teardown drains the stocks and requires
 * memcg_check() == 0 and alloc_check() == 0.  Randomised tests use a seeded
 * PRNG (the seed is printed); nothing asserts on timing.  Reaping of removed
 * memcgs is polled (bounded, 2 s) through mem_cgroup_descendants().
 *
 * The tests are in memcg_*.c by topic (test_memcg.h lists them); this file
 * holds the machines, the per-test check and main()'s groups.
 */
#include "test_memcg.h"

/* ------------------------------------------------------------------ */
/* Machines                                                            */

static int machine_up(unsigned int cpus, unsigned int nodes,
		      const struct memcg_config *mc)
{
	struct alloc_config cfg;
	int r;

	alloc_config_defaults(&cfg);
	cfg.memory = MACHINE_MEM;
	cfg.cpus = cpus;
	if (nodes)
		cfg.nodes = nodes;
	deferred_failures = 0;
	r = alloc_init(&cfg);
	if (r) {
		print_error("alloc_init(cpus=%u) = %d\n", cpus, r);
		return -1;
	}
	r = memcg_init(mc);
	if (r) {
		print_error("memcg_init() = %d\n", r);
		alloc_exit();
		return -1;
	}
	return 0;
}

static int setup_cpus4(void **state)
{
	(void)state;
	return machine_up(4, 1, NULL);
}

static int setup_online(void **state)
{
	(void)state;
	return machine_up(0, 1, NULL);
}

static int setup_nodes2(void **state)
{
	(void)state;
	return machine_up(4, 2, NULL);
}

static int setup_batch16(void **state)
{
	struct memcg_config mc;

	(void)state;
	memcg_config_defaults(&mc);
	mc.charge_batch = 16;
	return machine_up(4, 1, &mc);
}

int notify_calls;
char notify_last_file[64];
struct mem_cgroup *notify_last_memcg;

static int teardown(void **state)
{
	int r1, r2;

	(void)state;
	memcg_set_current(NULL);
	alloc_pin_cpu(-1);
	memcg_set_notify(NULL, NULL);
	memcg_drain();
	r1 = check_reported("memcg_check", memcg_check);
	/*
	 * Flush the statistics before memcg_exit(): a memcg still on the
	 * changed-statistics list at memcg_exit() corrupts the next
	 * memcg_init() (test_reinit_with_pending_stats shows it in a child
	 * process); this keeps the tests after a failing one independent.
	 */
	{
		unsigned long long v;

		memcg_stat_read(root_mem_cgroup(), "anon", &v);
	}
	r2 = check_reported("alloc_check", alloc_check);
	memcg_exit();
	alloc_exit();
	if (r1 || r2)
		fail_msg("memcg_check/alloc_check failed after the test");
	deferred_done();
	return 0;
}

#define T4(f)	cmocka_unit_test_setup_teardown(f, setup_cpus4, teardown)
#define TO(f)	cmocka_unit_test_setup_teardown(f, setup_online, teardown)
#define TN2(f)	cmocka_unit_test_setup_teardown(f, setup_nodes2, teardown)
#define TB16(f)	cmocka_unit_test_setup_teardown(f, setup_batch16, teardown)

/* ================================================================== */
/* Group: init                                                         */

static void test_config_and_init_errors(void **state)
{
	struct alloc_config ac;
	struct memcg_config mc;
	int r;

	(void)state;
	memset(&mc, 0xa5, sizeof(mc));
	memcg_config_defaults(&mc);
	EXPECT_EQ(mc.charge_batch, MEMCG_CHARGE_BATCH, "default charge_batch");
	EXPECT_EQ(mc.charge_batch, 64, "default charge_batch is 64");
	EXPECT_EQ(mc.oom_kill_signal, 0, "default oom_kill_signal (emulate only)");

	alloc_config_defaults(&ac);
	ac.memory = MACHINE_MEM;
	ac.cpus = 4;
	EXPECT_EQ(alloc_init(&ac), 0, "alloc_init");

	memcg_config_defaults(&mc);
	mc.charge_batch = 0;
	DEFER_EQ(memcg_init(&mc), -EINVAL, "memcg_init(charge_batch = 0)");
	mc.charge_batch = 128;
	DEFER_EQ(memcg_init(&mc), -EINVAL, "memcg_init(charge_batch = 128)");
	mc.charge_batch = 127;
	r = memcg_init(&mc);
	DEFER_EQ(r, 0, "memcg_init(charge_batch = 127)");
	if (r == 0) {
		DEFER_EQ(memcg_init(NULL), -EBUSY, "second memcg_init");
		DEFER_TRUE(root_mem_cgroup() != NULL, "root_mem_cgroup()");
		DEFER_TRUE(mem_cgroup_is_root(root_mem_cgroup()), "root is root");
		DEFER_TRUE(kmem_cache_find("mem_cgroup") != NULL,
			   "a dedicated kmem_cache named mem_cgroup exists");
		memcg_exit();
		DEFER_TRUE(kmem_cache_find("mem_cgroup") == NULL,
			   "memcg_exit tears down the mem_cgroup cache too");
	}
	/* init again after exit, on the same machine (memcg_exit "tears
	 * everything down"; memcg_init's errors are 0/EINVAL/ENOMEM/EBUSY) */
	r = memcg_init(NULL);
	DEFER_EQ(r, 0, "memcg_init after memcg_exit on the same machine");
	if (r == 0)
		memcg_exit();
	alloc_exit();
	deferred_done();
}

/* ================================================================== */

int main(void)
{
	const struct CMUnitTest init_tests[] = {
		cmocka_unit_test(test_config_and_init_errors),
	};
	const struct CMUnitTest core_tests[] = {
		T4(test_tree_basics),
		T4(test_page_type_names),
		T4(test_current_api),
		T4(test_stock_precharge),
		T4(test_slab_bytes_exact),
		TO(test_slab_bytes_exact_rseq),
		T4(test_page_types),
		T4(test_task_exit_frees_owned),
		T4(test_cross_cgroup_free),
		T4(test_objcg_percpu_ref),
		TO(test_percpu_ref_migration),
		T4(test_root_task_moved_while_current),
		T4(test_vector_at_first_charge),
		T4(test_migration),
		T4(test_attach_races),
		T4(test_rmdir_with_live_objects),
		T4(test_rmdir_kmem_only_reaped),
		T4(test_rcu_reader_outlives_last_put),
		T4(test_mkdir_charges),
		T4(test_root_not_charged),
		T4(test_task_exit_after_foreign_free),
		T4(test_reinit_with_pending_stats),
		T4(test_hierarchy_random),
		T4(test_reclaim_during_reap),
		T4(test_drain_skips_dying_objcg),
		T4(test_reparent_refs_before_release),
		T4(test_stat_change_at_zero),
		T4(test_charge_after_cache_swap),
		T4(test_free_during_lru_move),
	};
	const struct CMUnitTest batch_tests[] = {
		TB16(test_stock_precharge_batch16),
	};
	const struct CMUnitTest file_tests[] = {
		T4(test_stat_keys),
		T4(test_numa_stat),
		T4(test_events_files),
		T4(test_file_table),
		T4(test_file_rw_errors),
		T4(test_memparse_writes),
		T4(test_int_writes),
		T4(test_reclaim_parse),
		T4(test_page_counter_memparse),
		T4(test_peak),
	};
	const struct CMUnitTest nodes2_tests[] = {
		TN2(test_numa_stat_2nodes),
	};
	const struct CMUnitTest limit_tests[] = {
		T4(test_max_enforced),
		T4(test_max_ancestor),
	};
	const struct CMUnitTest conc_tests[] = {
		T4(test_concurrency_pinned),
		T4(test_concurrency_pinned_same_slot),
	};
	const struct CMUnitTest online_tests[] = {
		TO(test_concurrency_unpinned),
	};
	const char *filter = getenv("MEMCG_TEST_FILTER");
	int failed = 0;

	if (filter)
		cmocka_set_test_filter(filter);
	failed += cmocka_run_group_tests_name("memcg_init", init_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_core", core_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_batch16", batch_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_files", file_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_nodes2", nodes2_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_limits", limit_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_concurrency", conc_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_online", online_tests, NULL, NULL);
	return failed ? 1 : 0;
}
