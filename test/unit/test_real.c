/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of real memory (memcg/real.c): what a member process really
 * uses, charged through the memory controller.  fs/ measures; these tests
 * play fs/ with made-up measurements and a fake page cache behind the
 * reclaim op, and check the charges, the statistics, migration (charges
 * stay where they were made), exit, forced charges past memory.max and
 * their enforcement (reclaim, then the OOM killer asking fs/ to kill),
 * the files' first-touch rule and their LRU.  memcg_check() runs after
 * every test: every real page is a task's or a file's.
 */
#include "memcg.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PG	4096ul

/* ---- the fake fs/ ---- */
struct fake_file {
	struct memcg_real_file *f;
	struct memcg_real_cache cache;	/* the "page cache" of the file */
	unsigned long dropped;		/* pages the reclaim op dropped */
	bool released;
};

static int reclaim_calls;

static int fake_reclaim(void *priv, struct memcg_real_file *f, unsigned long nr)
{
	struct fake_file *ff = priv;
	unsigned long n = nr < ff->cache.cached ? nr : ff->cache.cached;

	reclaim_calls++;
	ff->cache.cached -= n;
	ff->dropped += n;
	if (ff->cache.dirty > ff->cache.cached)
		ff->cache.dirty = ff->cache.cached;
	memcg_real_file_update(f, &ff->cache, true);
	return 0;
}

static void fake_release(void *priv)
{
	((struct fake_file *)priv)->released = true;
}

static const struct memcg_real_ops fake_real_ops = {
	.reclaim = fake_reclaim,
	.release = fake_release,
};

#define MAX_KILLS	16
static struct {
	pid_t pid;
	int sig;
} kills[MAX_KILLS];
static int nkills;

static int fake_kill(struct memcg_task *t, int sig, void *arg)
{
	(void)arg;
	if (nkills < MAX_KILLS)
		kills[nkills] = (typeof(kills[0])){ memcg_task_pid(t), sig };
	nkills++;
	return 0;
}

static const struct memcg_oom_ops fake_oom_ops = {
	.kill = fake_kill,
};

static int setup(void **state)
{
	struct alloc_config ac;
	struct memcg_config mc;

	(void)state;
	alloc_config_defaults(&ac);
	ac.memory = 64ull << 20;
	ac.cpus = 2;
	if (alloc_init(&ac))
		return -1;
	memcg_config_defaults(&mc);
	mc.real_memory = true;
	if (memcg_init(&mc)) {
		alloc_exit();
		return -1;
	}
	alloc_pin_cpu(0);
	memcg_set_real_ops(&fake_real_ops);
	memcg_set_oom_ops(&fake_oom_ops);
	nkills = 0;
	reclaim_calls = 0;
	return 0;
}

static int teardown(void **state)
{
	char msg[512];
	int r;

	(void)state;
	memcg_set_current(NULL);
	memcg_drain();
	r = memcg_check(msg, sizeof(msg));
	if (r)
		print_error("memcg_check: %s\n", msg);
	memcg_set_real_ops(NULL);
	memcg_set_oom_ops(NULL);
	memcg_exit();
	alloc_exit();
	alloc_pin_cpu(-1);
	return r ? -1 : 0;
}

/* ---- helpers ---- */
static struct mem_cgroup *mk(struct mem_cgroup *parent)
{
	struct mem_cgroup *m = NULL;

	assert_int_equal(mem_cgroup_create(parent, &m), 0);
	return m;
}

static void rm(struct mem_cgroup *m)
{
	assert_int_equal(mem_cgroup_offline(m), 0);
	mem_cgroup_put(m);
}

/* Usage in pages with the stocks drained (exact numbers). */
static unsigned long usage(struct mem_cgroup *m)
{
	memcg_drain();
	return mem_cgroup_usage_pages(m);
}

static unsigned long long stat_of(struct mem_cgroup *m, const char *key)
{
	unsigned long long v = 0;

	assert_int_equal(memcg_stat_read(m, key, &v), 0);
	return v;
}

static void write_file(struct mem_cgroup *m, const char *name, const char *val)
{
	struct memcg_open *o;

	assert_int_equal(memcg_file_open(memcg_file_lookup(name), m, &o), 0);
	assert_int_equal(memcg_file_write(o, val, strlen(val), false), 0);
	memcg_file_release(o);
}

/* A key's value in a flat keyed file (memory.events). */
static unsigned long keyed(struct mem_cgroup *m, const char *name, const char *key)
{
	char buf[4096], *p;
	struct memcg_open *o;
	size_t klen = strlen(key);
	long n;

	assert_int_equal(memcg_file_open(memcg_file_lookup(name), m, &o), 0);
	n = memcg_file_read(o, buf, sizeof(buf));
	memcg_file_release(o);
	assert_true(n > 0);
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtoul(p + klen + 1, NULL, 10);
	fail_msg("%s has no key %s", name, key);
	return 0;
}

static void update(struct memcg_task *t, unsigned long anon, unsigned long shmem,
		   unsigned long pgtables, unsigned long threads)
{
	struct memcg_real_usage u = {
		.anon = anon, .shmem = shmem, .pagetables = pgtables, .threads = threads,
	};

	assert_int_equal(memcg_real_task_update(t, &u), 0);
}

/* ---- tasks ---- */
static void test_task_charges_and_stats(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = memcg_task_create(100, a);
	unsigned long stack_pages = MEMCG_KERNEL_STACK_SIZE / PG;

	(void)state;
	update(t, 1000, 50, 7, 3);
	assert_int_equal(usage(a), 1000 + 50 + 7 + 3 * stack_pages);
	assert_int_equal(stat_of(a, "anon"), 1000 * PG);
	assert_int_equal(stat_of(a, "shmem"), 50 * PG);
	assert_int_equal(stat_of(a, "file"), 50 * PG);	/* shmem is file memory */
	assert_int_equal(stat_of(a, "inactive_anon"), 1050 * PG);
	assert_int_equal(stat_of(a, "kernel_stack"), 3 * MEMCG_KERNEL_STACK_SIZE);
	assert_int_equal(stat_of(a, "pagetables"), 7 * PG);
	assert_int_equal(stat_of(a, "kernel"), (7 + 3 * stack_pages) * PG);

	/* it shrinks: the difference goes */
	update(t, 400, 0, 5, 1);
	assert_int_equal(usage(a), 400 + 5 + stack_pages);
	assert_int_equal(stat_of(a, "anon"), 400 * PG);
	assert_int_equal(stat_of(a, "shmem"), 0);
	assert_int_equal(stat_of(a, "kernel_stack"), MEMCG_KERNEL_STACK_SIZE);

	/* exit: everything it had */
	memcg_task_exit(t);
	assert_int_equal(usage(a), 0);
	assert_int_equal(stat_of(a, "anon"), 0);
	assert_int_equal(stat_of(a, "kernel"), 0);
	rm(a);
}

/* A task in the root is measured but, as in the kernel, charges nothing. */
static void test_root_task_not_charged(void **state)
{
	struct memcg_task *t = memcg_task_create(101, root_mem_cgroup());
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_real_usage u;

	(void)state;
	update(t, 500, 0, 0, 1);
	memcg_real_task_charged(t, &u);
	assert_int_equal(u.anon, 500);
	/* growth after a move into a is a's; the 500 stay uncharged in the root */
	assert_int_equal(memcg_task_attach(t, a), 0);
	update(t, 800, 0, 0, 1);
	assert_int_equal(usage(a), 300);
	/* a shrink takes the newest first: a's 300, then the root's */
	update(t, 600, 0, 0, 1);
	assert_int_equal(usage(a), 100);
	update(t, 100, 0, 0, 1);
	assert_int_equal(usage(a), 0);
	memcg_task_exit(t);
	rm(a);
}

/* v2 migration: what a process has stays where it was charged. */
static void test_migration_keeps_charges(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct memcg_task *t = memcg_task_create(102, a);

	(void)state;
	update(t, 100, 0, 0, 0);
	assert_int_equal(memcg_task_attach(t, b), 0);
	assert_int_equal(usage(a), 100);
	assert_int_equal(usage(b), 0);
	update(t, 150, 0, 0, 0);
	assert_int_equal(usage(a), 100);
	assert_int_equal(usage(b), 50);
	/* newest first: b loses its 50, then a */
	update(t, 120, 0, 0, 0);
	assert_int_equal(usage(b), 20);
	update(t, 30, 0, 0, 0);
	assert_int_equal(usage(b), 0);
	assert_int_equal(usage(a), 30);
	/* back in a: a new bucket, after b's (empty, dropped) */
	assert_int_equal(memcg_task_attach(t, a), 0);
	update(t, 60, 0, 0, 0);
	assert_int_equal(usage(a), 60);
	memcg_task_exit(t);
	assert_int_equal(usage(a), 0);
	rm(a);
	rm(b);
}

/*
 * Kernel stacks and page tables are kmem, charged through the objcg: after
 * rmdir they belong to the parent, and their uncharge finds it there.
 */
static void test_kmem_reparented(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p), *b = mk(p);
	struct memcg_task *t = memcg_task_create(103, a);
	unsigned long base = usage(p);

	(void)state;
	update(t, 0, 0, 10, 2);
	assert_int_equal(usage(a), 10 + 2 * MEMCG_KERNEL_STACK_SIZE / PG);
	assert_int_equal(memcg_task_attach(t, b), 0);
	rm(a);
	assert_int_equal(usage(p), base + 10 + 2 * MEMCG_KERNEL_STACK_SIZE / PG);
	update(t, 0, 0, 0, 0);
	assert_int_equal(usage(p), base);
	assert_int_equal(stat_of(p, "kernel_stack"), 0);
	assert_int_equal(stat_of(p, "pagetables"), 0);
	memcg_task_exit(t);
	rm(b);
	rm(p);
}

/*
 * Past memory.max a real charge is forced ('max'); enforcement reclaims
 * (nothing: anon is not reclaimable) and then OOM-kills the task for real
 * (SIGKILL through fs/, whatever oom_kill_signal says), whose charges go at
 * once; then nothing more is charged for it.
 */
static void test_forced_then_oom(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *small = memcg_task_create(104, a), *big = memcg_task_create(105, a);
	struct memcg_real_usage u = { .anon = 10 };

	(void)state;
	write_file(a, "memory.max", "400K");	/* 100 pages */
	update(small, 20, 0, 0, 0);
	update(big, 90, 0, 0, 0);
	assert_int_equal(usage(a), 110);
	assert_true(memcg_real_over_max(a));
	assert_int_equal(keyed(a, "memory.events", "max"), 1);
	assert_int_equal(keyed(a, "memory.events", "oom"), 0);
	memcg_real_enforce(a);
	assert_int_equal(nkills, 1);
	assert_int_equal(kills[0].pid, 105);
	assert_int_equal(kills[0].sig, SIGKILL);
	assert_true(memcg_task_oom_killed(big));
	assert_int_equal(usage(a), 20);
	assert_int_equal(keyed(a, "memory.events", "oom"), 1);
	assert_int_equal(keyed(a, "memory.events", "oom_kill"), 1);
	assert_false(memcg_real_over_max(a));
	assert_int_equal(memcg_real_task_update(big, &u), -ESRCH);
	assert_int_equal(usage(a), 20);
	memcg_task_exit(big);
	memcg_task_exit(small);
	rm(a);
}

/* The daemon and PID 1 are never chosen: the charge stays forced. */
static void test_unkillable(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = memcg_task_create(1, a);

	(void)state;
	memcg_task_set_unkillable(t);
	write_file(a, "memory.max", "40K");
	update(t, 50, 0, 0, 0);
	memcg_real_enforce(a);
	assert_int_equal(nkills, 0);
	assert_int_equal(usage(a), 50);
	assert_true(keyed(a, "memory.events", "oom") >= 1);
	assert_int_equal(keyed(a, "memory.events", "oom_kill"), 0);
	memcg_task_exit(t);
	rm(a);
}

/* ---- files ---- */
static void test_file_first_touch(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct memcg_task *ta = memcg_task_create(106, a);
	struct fake_file ff = { .cache = { 30, 0, 0 } };

	(void)state;
	/* 30 pages were cached before a used it: someone else's */
	ff.f = memcg_real_file_create(ta, 30, &ff);
	assert_non_null(ff.f);
	assert_int_equal(usage(a), 0);
	ff.cache = (struct memcg_real_cache){ 130, 20, 5 };
	memcg_real_file_update(ff.f, &ff.cache, false);
	assert_int_equal(usage(a), 100);
	assert_int_equal(stat_of(a, "file"), 100 * PG);
	assert_int_equal(stat_of(a, "inactive_file"), 100 * PG);
	assert_int_equal(stat_of(a, "file_dirty"), 20 * PG);
	assert_int_equal(stat_of(a, "file_writeback"), 5 * PG);
	/* the task moves: the file stays a's (first touch), its growth too */
	assert_int_equal(memcg_task_attach(ta, b), 0);
	ff.cache = (struct memcg_real_cache){ 150, 0, 0 };
	memcg_real_file_update(ff.f, &ff.cache, false);
	assert_int_equal(usage(a), 120);
	assert_int_equal(usage(b), 0);
	assert_int_equal(stat_of(a, "file_dirty"), 0);
	/* the host evicts 40: the foreign 30 first, then 10 of a's */
	ff.cache.cached = 110;
	memcg_real_file_update(ff.f, &ff.cache, false);
	assert_int_equal(usage(a), 110);
	/* the task's exit leaves the file charged */
	memcg_task_exit(ta);
	assert_int_equal(usage(a), 110);
	/* the file is gone: everything */
	memcg_real_file_release(ff.f);
	assert_true(ff.released);
	assert_int_equal(usage(a), 0);
	assert_int_equal(stat_of(a, "file"), 0);
	assert_int_equal(stat_of(a, "inactive_file"), 0);
	rm(a);
	rm(b);
}

/*
 * Enforcement reclaims files for real (the op drops their cache), counts
 * pgscan/pgsteal, does not OOM when reclaim suffices, and takes an
 * unreferenced file before one used again since (second chance); two
 * uses since the last scan activate a file.
 */
static void test_file_reclaim(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = memcg_task_create(107, a);
	struct fake_file f1 = { .cache = { 0, 0, 0 } }, f2 = f1;

	(void)state;
	write_file(a, "memory.max", "1200K");	/* 300 pages */
	f1.f = memcg_real_file_create(t, 0, &f1);
	f2.f = memcg_real_file_create(t, 0, &f2);
	f1.cache.cached = 200;
	memcg_real_file_update(f1.f, &f1.cache, false);
	f2.cache.cached = 200;
	memcg_real_file_update(f2.f, &f2.cache, false);
	update(t, 50, 0, 0, 0);
	/* f1 (older, at the tail) used again: f2 goes first */
	memcg_real_file_reference(f1.f);
	assert_int_equal(usage(a), 450);
	/* two charges went past max (f2's growth, the anon): two events */
	assert_int_equal(keyed(a, "memory.events", "max"), 2);
	memcg_real_enforce(a);
	assert_int_equal(nkills, 0);
	assert_true(usage(a) <= 300);
	assert_true(f2.dropped >= 150);
	assert_int_equal(f1.dropped, 0);
	assert_true(stat_of(a, "pgsteal") >= 150);
	assert_true(stat_of(a, "pgscan") >= stat_of(a, "pgsteal"));
	assert_int_equal(keyed(a, "memory.events", "oom"), 0);

	/* reclaim's scan took f1's reference (its second chance): two uses activate it */
	memcg_real_file_reference(f1.f);
	assert_false(memcg_real_file_active(f1.f));
	memcg_real_file_reference(f1.f);
	assert_true(memcg_real_file_active(f1.f));
	assert_int_equal(stat_of(a, "active_file"), 200 * PG);
	assert_true(stat_of(a, "pgactivate") >= 200);

	memcg_real_file_release(f1.f);
	memcg_real_file_release(f2.f);
	memcg_task_exit(t);
	rm(a);
}

/*
 * memory.min, or memory.low (b's files are there to take: no low event),
 * protects a sibling's files from its parent's reclaim.
 */
static void file_protected(const char *knob)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p), *b = mk(p);
	struct memcg_task *ta = memcg_task_create(108, a), *tb = memcg_task_create(109, b);
	struct fake_file fa = { .cache = { 0, 0, 0 } }, fb = fa;
	unsigned long base = usage(p);	/* a's and b's own structures */
	char max[32];

	write_file(a, knob, "2M");
	snprintf(max, sizeof(max), "%lu", (base + 600) * PG);
	write_file(p, "memory.max", max);
	fa.f = memcg_real_file_create(ta, 0, &fa);
	fb.f = memcg_real_file_create(tb, 0, &fb);
	fa.cache.cached = 400;
	memcg_real_file_update(fa.f, &fa.cache, false);
	fb.cache.cached = 400;
	memcg_real_file_update(fb.f, &fb.cache, false);
	assert_int_equal(usage(p), base + 800);
	memcg_real_enforce(p);
	assert_true(usage(p) <= base + 600);
	assert_int_equal(fa.dropped, 0);
	assert_true(fb.dropped >= 200);
	if (!strcmp(knob, "memory.low"))
		assert_int_equal(keyed(a, "memory.events", "low"), 0);
	memcg_real_file_release(fa.f);
	memcg_real_file_release(fb.f);
	memcg_task_exit(ta);
	memcg_task_exit(tb);
	rm(a);
	rm(b);
	rm(p);
}

static void test_file_min_protects(void **state)
{
	(void)state;
	file_protected("memory.min");
}

static void test_file_low_protects(void **state)
{
	(void)state;
	file_protected("memory.low");
}

/* memory.high: a real charge over it leaves the task pages to pay back. */
static void test_high_owes(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = memcg_task_create(110, a);
	uint64_t delay;

	(void)state;
	write_file(a, "memory.high", "400K");
	update(t, 100, 0, 0, 0);
	assert_int_equal(memcg_task_pages_over_high(t), 0);
	update(t, 2000, 0, 0, 0);
	assert_true(memcg_task_pages_over_high(t) > 0);
	delay = memcg_handle_over_high(t);
	assert_true(delay > 0);
	assert_true(keyed(a, "memory.events", "high") >= 1);
	memcg_task_exit(t);
	rm(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_task_charges_and_stats),
		T(test_root_task_not_charged),
		T(test_migration_keeps_charges),
		T(test_kmem_reparented),
		T(test_forced_then_oom),
		T(test_unkillable),
		T(test_file_first_touch),
		T(test_file_reclaim),
		T(test_file_min_protects),
		T(test_file_low_protects),
		T(test_high_owes),
#undef T
	};

	return cmocka_run_group_tests_name("real", tests, NULL, NULL);
}
