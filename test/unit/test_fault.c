// SPDX-License-Identifier: MIT
/*
 * Unit tests of fault/: the N-th call, interval, times, probability, the
 * task filter and suspended sections, per-site counting, the text form of
 * memcgfs.fault (fault_parse/fault_format) and its refusals; then the
 * sites themselves on a small machine: a page allocation, a slab
 * allocation (also when the object came from the fast path), a charge,
 * each failing cleanly with nothing changed, and __GFP_NOFAIL never asked.
 */
#include "fault.h"
#include "memcg.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* call site s n times; return the bitmap of the calls that failed (n <= 64) */
static uint64_t calls(enum fault_site s, unsigned int n)
{
	uint64_t m = 0;

	for (unsigned int i = 0; i < n; i++)
		if (fault_should_fail(s))
			m |= 1ull << i;
	return m;
}

static void test_disarmed(void **state)
{
	(void)state;
	assert_true(fault_supported());
	fault_disarm();
	assert_int_equal(calls(FAULT_PAGE_ALLOC, 64), 0);
	assert_int_equal(calls(FAULT_MALLOC, 64), 0);
}

static void test_nth_times(void **state)
{
	struct fault_attr a = { .sites = FAULT_ALL_SITES, .nth = 3, .times = 1 };
	struct fault_stats st;

	(void)state;
	assert_int_equal(fault_arm(&a), 0);
	assert_int_equal(calls(FAULT_SLAB, 10), 1ull << 2);
	fault_stats(&st);
	assert_int_equal(st.calls_total, 10);
	assert_int_equal(st.calls[FAULT_SLAB], 10);
	assert_int_equal(st.failed[FAULT_SLAB], 1);
	assert_int_equal(st.failed_total, 1);

	/* from the 4th on, all */
	a.nth = 4;
	a.times = -1;
	assert_int_equal(fault_arm(&a), 0);
	assert_int_equal(calls(FAULT_CHARGE, 8), 0xf8);
	/* times = 2 */
	a.times = 2;
	assert_int_equal(fault_arm(&a), 0);
	assert_int_equal(calls(FAULT_CHARGE, 8), 0x18);
	/* times = 0 counts only */
	a.times = 0;
	assert_int_equal(fault_arm(&a), 0);
	assert_int_equal(calls(FAULT_CHARGE, 8), 0);
	fault_stats(&st);
	assert_int_equal(st.calls[FAULT_CHARGE], 8);
	fault_disarm();
	/* the statistics stay readable after disarm */
	fault_stats(&st);
	assert_int_equal(st.calls[FAULT_CHARGE], 8);
}

static void test_interval_sites(void **state)
{
	struct fault_attr a = { .sites = FAULT_SITE(FAULT_PAGE_ALLOC), .nth = 2,
				.interval = 3, .times = -1 };
	struct fault_stats st;

	(void)state;
	assert_int_equal(fault_arm(&a), 0);
	/* calls 2, 5, 8 fail */
	assert_int_equal(calls(FAULT_PAGE_ALLOC, 9), (1ull << 1) | (1ull << 4) | (1ull << 7));
	/* another site is not armed and not counted */
	assert_int_equal(calls(FAULT_SLAB, 9), 0);
	fault_stats(&st);
	assert_int_equal(st.calls[FAULT_SLAB], 0);
	assert_int_equal(st.calls_total, 9);
	assert_true(fault_site_armed(FAULT_PAGE_ALLOC));
	assert_false(fault_site_armed(FAULT_SLAB));
	fault_disarm();
	assert_false(fault_site_armed(FAULT_PAGE_ALLOC));
}

static void test_probability(void **state)
{
	struct fault_attr a = { .sites = FAULT_SITE(FAULT_MALLOC), .probability = 30,
				.times = -1, .seed = 7 };
	struct fault_stats st;

	(void)state;
	assert_int_equal(fault_arm(&a), 0);
	for (int i = 0; i < 10000; i++)
		(void)fault_should_fail(FAULT_MALLOC);
	fault_stats(&st);
	/* 30% of 10000, well inside what a fair die gives */
	assert_in_range(st.failed[FAULT_MALLOC], 2600, 3400);
	fault_disarm();
}

static void *other_thread(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)calls(FAULT_SLAB, 4);
}

static void test_task_filter_suspend(void **state)
{
	struct fault_attr a = { .sites = FAULT_ALL_SITES, .times = -1, .task_filter = true };
	pthread_t th;
	void *r;

	(void)state;
	assert_int_equal(fault_arm(&a), 0);
	assert_int_equal(calls(FAULT_SLAB, 4), 0);	/* this thread has not enabled */
	fault_task_enable(true);
	assert_int_equal(calls(FAULT_SLAB, 4), 0xf);
	/* another thread is not this one */
	assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(th, &r), 0);
	assert_int_equal((uintptr_t)r, 0);
	/* nested suspended sections */
	fault_suspend();
	fault_suspend();
	assert_int_equal(calls(FAULT_SLAB, 4), 0);
	fault_resume();
	assert_int_equal(calls(FAULT_SLAB, 4), 0);
	fault_resume();
	assert_int_equal(calls(FAULT_SLAB, 4), 0xf);
	fault_resume();		/* one too many: harmless */
	assert_int_equal(calls(FAULT_SLAB, 1), 1);
	fault_task_enable(false);
	fault_disarm();
}

static void test_parse(void **state)
{
	struct fault_attr a = { 0 };
	char buf[1024];
	const char *bad[] = {
		"", "\n", "nth", "nth=", "nth=x", "nth=-1", "nth=99999999999999999999999",
		"sites=", "sites=slab,", "sites=,slab", "sites=disk", "probability=101",
		"times=-2", "times=", "task_filter=2", "bogus=1", "off nth=1", "nth=1 off",
		"nth=1\x01", "nth=\xff", "sites=slab\tnth=1\x7f",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fault_attr b = { .nth = 42 };

		assert_int_equal(fault_parse(bad[i], strlen(bad[i]), &b), -EINVAL);
		assert_int_equal(b.nth, 42);	/* unchanged */
	}
	/* a NUL inside the write is a byte like any other */
	assert_int_equal(fault_parse("nth=1\0", 6, &a), -EINVAL);
	assert_int_equal(fault_parse("off\n", 4, &a), 1);
	{
		const char *w = "sites=page_alloc,charge nth=5 interval=2 probability=50 "
				"times=-1 task_filter=1 seed=9\n";

		assert_int_equal(fault_parse(w, strlen(w), &a), 0);
	}
	assert_int_equal(a.sites, FAULT_SITE(FAULT_PAGE_ALLOC) | FAULT_SITE(FAULT_CHARGE));
	assert_int_equal(a.nth, 5);
	assert_int_equal(a.interval, 2);
	assert_int_equal(a.probability, 50);
	assert_int_equal(a.times, -1);
	assert_true(a.task_filter);
	assert_int_equal(a.seed, 9);
	/* keys not given stay */
	assert_int_equal(fault_parse("sites=all", 9, &a), 0);
	assert_int_equal(a.sites, FAULT_ALL_SITES);
	assert_int_equal(a.nth, 5);
	/* bad attributes are refused by fault_arm too */
	a.probability = 101;
	assert_int_equal(fault_arm(&a), -EINVAL);
	a.probability = 0;
	a.sites = 1u << FAULT_NR_SITES;
	assert_int_equal(fault_arm(&a), -EINVAL);

	a = (struct fault_attr){ .sites = FAULT_SITE(FAULT_SLAB), .nth = 2, .times = 1 };
	assert_int_equal(fault_arm(&a), 0);
	(void)calls(FAULT_SLAB, 3);
	assert_true(fault_format(buf, sizeof(buf)) < sizeof(buf));
	assert_non_null(strstr(buf, "armed 1\nsites slab\nnth 2\ninterval 0\nprobability 100\n"
				    "times 1\ntask_filter 0\nseed 0\n"));
	assert_non_null(strstr(buf, "slab calls 3 failed 1\n"));
	assert_non_null(strstr(buf, "page_alloc calls 0 failed 0\n"));
	fault_disarm();
	fault_format(buf, sizeof(buf));
	assert_non_null(strstr(buf, "armed 0\n"));
	/* a short buffer: the length it needs (strlen before the call overwrites buf) */
	{
		size_t whole = strlen(buf);

		assert_int_equal(fault_format(buf, 4), whole);
		assert_string_equal(buf, "arm");
	}
	assert_int_equal(fault_site_parse("all", 3), -1);
	assert_int_equal(fault_site_parse("malloc", 6), FAULT_MALLOC);
	assert_int_equal(fault_site_parse("mallo", 5), -EINVAL);
	assert_string_equal(fault_site_name(FAULT_CHARGE), "charge");
}

/* ---- the sites, on a machine ---- */
static struct mem_cgroup *child;

static int machine_setup(void **state)
{
	struct alloc_config cfg;

	(void)state;
	alloc_config_defaults(&cfg);
	cfg.memory = 16ul << 20;
	cfg.cpus = 2;
	if (alloc_init(&cfg) || memcg_init(NULL) || mem_cgroup_create(root_mem_cgroup(), &child))
		return -1;
	return 0;
}

static void arm_one(unsigned int sites)
{
	struct fault_attr a = { .sites = sites, .nth = 1, .times = 1 };

	assert_int_equal(fault_arm(&a), 0);
}

static unsigned long failed(enum fault_site s)
{
	struct fault_stats st;

	fault_stats(&st);
	return st.failed[s];
}

static void test_sites(void **state)
{
	struct memcg_task *t = memcg_task_create(77, child);
	struct alloc_stats before, after;
	struct kmem_cache *s;
	struct page *pg;
	void *obj, *warm;
	char msg[256];

	(void)state;
	assert_non_null(t);
	memcg_set_current(t);
	s = kmem_cache_create("fault-test", 200, 0, 0);
	assert_non_null(s);
	warm = kmem_cache_alloc(s, GFP_KERNEL);	/* the next object comes from the fast path */
	assert_non_null(warm);
	memcg_drain();
	alloc_stats(&before);

	arm_one(FAULT_SITE(FAULT_PAGE_ALLOC));
	assert_null(alloc_pages(GFP_KERNEL, 1));
	assert_int_equal(failed(FAULT_PAGE_ALLOC), 1);
	/* __GFP_NOFAIL does not ask */
	arm_one(FAULT_SITE(FAULT_PAGE_ALLOC));
	pg = alloc_pages(GFP_KERNEL | __GFP_NOFAIL, 0);
	assert_non_null(pg);
	__free_pages(pg, 0);
	assert_int_equal(failed(FAULT_PAGE_ALLOC), 0);
	/* a large kmalloc is pages */
	arm_one(FAULT_SITE(FAULT_PAGE_ALLOC));
	assert_null(kmalloc(64 << 10, GFP_KERNEL_ACCOUNT));

	arm_one(FAULT_SITE(FAULT_SLAB));
	assert_null(kmem_cache_alloc(s, GFP_KERNEL));
	assert_int_equal(failed(FAULT_SLAB), 1);
	arm_one(FAULT_SITE(FAULT_SLAB));
	assert_null(kmalloc(100, GFP_KERNEL_ACCOUNT | __GFP_ZERO));
	arm_one(FAULT_SITE(FAULT_SLAB));
	obj = kmem_cache_alloc(s, GFP_KERNEL | __GFP_NOFAIL);
	assert_non_null(obj);
	kmem_cache_free(s, obj);

	/* a charge: the stock is empty after the drain, so the counter is asked */
	memcg_drain();
	arm_one(FAULT_SITE(FAULT_CHARGE));
	assert_null(kmalloc(100, GFP_KERNEL_ACCOUNT));
	assert_int_equal(failed(FAULT_CHARGE), 1);
	fault_disarm();

	/* nothing of it stayed */
	memcg_drain();
	alloc_stats(&after);
	assert_int_equal(after.pages_alloc, before.pages_alloc);
	assert_int_equal(after.pages_large_kmalloc, before.pages_large_kmalloc);
	assert_int_equal(mem_cgroup_usage_pages(child), 0);
	assert_int_equal(memcg_check(msg, sizeof(msg)), 0);
	assert_int_equal(alloc_check(msg, sizeof(msg)), 0);

	/* disarmed, all works */
	obj = kmalloc(100, GFP_KERNEL_ACCOUNT);
	assert_non_null(obj);
	kfree(obj);
	kmem_cache_free(s, warm);
	assert_int_equal(kmem_cache_destroy(s), 0);
	memcg_set_current(NULL);
	memcg_task_exit(t);
}

static int machine_teardown(void **state)
{
	(void)state;
	memcg_exit();
	alloc_exit();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disarmed),
		cmocka_unit_test(test_nth_times),
		cmocka_unit_test(test_interval_sites),
		cmocka_unit_test(test_probability),
		cmocka_unit_test(test_task_filter_suspend),
		cmocka_unit_test(test_parse),
		cmocka_unit_test_setup_teardown(test_sites, machine_setup, machine_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
