/* SPDX-License-Identifier: MIT */
/*
 * bench_reclaim - reclaim's cost against the size of the LRU: a cgroup at
 * its memory.max, full of file pages, charges 1024 more one page at a time
 * (each charge reclaims from the inactive list's tail), with 16 MB and
 * with 768 MB of file pages on its LRU.  Reclaim is O(1) at the tail when
 * both take the same time.  In one process, pinned to one CPU; both
 * cgroups are set up first, then ROUNDS rounds time CHARGES charges in each
 * (the order alternating): a figure is the median over the rounds, the
 * ratio the median of the rounds' own ratios, so that a drift of the
 * machine's speed (this machine class is shared) lands in both sides of a
 * round, not in one figure.
 *
 *   target reclaim_lru_768m_vs_16m measured=... goal=<=1.5
 */
#include "alloc.h"
#include "memcg.h"
#include "harness.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHARGES	8192
#define ROUNDS	41

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void write_file(struct mem_cgroup *m, const char *name, const char *val)
{
	struct memcg_open *o;
	int err = memcg_file_open(memcg_file_lookup(name), m, &o);

	if (!err)
		err = memcg_file_write(o, val, strlen(val), false);
	if (err)
		bench_die("%s <- %s: %s", name, val, strerror(-err));
	memcg_file_release(o);
}

static void file_page(void)
{
	int err = 0;

	if (!memcg_alloc_pages(MEMCG_PAGE_FILE, GFP_KERNEL, 0, &err))
		bench_die("a file page: %s", strerror(-err));
}

/* A cgroup at its memory.max with lru_mb of file pages on its LRU. */
struct lru_case {
	unsigned long lru_mb;
	struct mem_cgroup *m;
	struct memcg_task *t;
	double ms[ROUNDS];
};

static void setup(struct lru_case *c, pid_t pid)
{
	unsigned long pages = (c->lru_mb << 20) / alloc_page_size();
	char buf[64];
	int err = mem_cgroup_create(root_mem_cgroup(), &c->m);

	if (err)
		bench_die("mem_cgroup_create: %s", strerror(-err));
	c->t = memcg_task_create(pid, c->m);
	if (!c->t)
		bench_die("memcg_task_create failed");
	memcg_set_current(c->t);
	for (unsigned long i = 0; i < pages; i++)
		file_page();
	memcg_set_current(NULL);
	memcg_drain();
	snprintf(buf, sizeof(buf), "%lu", mem_cgroup_usage_pages(c->m) * alloc_page_size());
	write_file(c->m, "memory.max", buf);
}

/* ms for CHARGES charges at the limit, each reclaiming one page */
static double charge_round(struct lru_case *c)
{
	double t0;

	memcg_set_current(c->t);
	t0 = now_ms();
	for (int i = 0; i < CHARGES; i++)
		file_page();
	t0 = now_ms() - t0;
	memcg_set_current(NULL);
	return t0;
}

/* everything back: the file pages reclaimed, the cgroup gone */
static void teardown(struct lru_case *c)
{
	write_file(c->m, "memory.max", "0");
	memcg_task_exit(c->t);
	mem_cgroup_offline(c->m);
	mem_cgroup_put(c->m);
	memcg_reap_now();
}

int main(void)
{
	struct alloc_config cfg;
	cpu_set_t set;
	char buf[32];
	int err;

	bench_name("bench_reclaim");
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	sched_setaffinity(0, sizeof(set), &set);
	alloc_config_defaults(&cfg);
	cfg.memory = 1ull << 30;
	err = alloc_init(&cfg);
	if (err)
		bench_die("alloc_init: %s", strerror(-err));
	err = memcg_init(NULL);
	if (err)
		bench_die("memcg_init: %s", strerror(-err));
	{
		struct lru_case c[2] = { { .lru_mb = 16 }, { .lru_mb = 768 } };

		setup(&c[0], getpid());
		setup(&c[1], getpid() + 1);
		charge_round(&c[0]);	/* warm-up */
		charge_round(&c[1]);
		for (int r = 0; r < ROUNDS; r++) {
			c[r & 1].ms[r] = charge_round(&c[r & 1]);
			c[!(r & 1)].ms[r] = charge_round(&c[!(r & 1)]);
		}
		printf("%d file-page charges at memory.max, each reclaiming from the LRU "
		       "(ms; median, min and max over %d rounds, both cgroups timed in each):\n",
		       CHARGES, ROUNDS);
		for (int i = 0; i < 2; i++)
			printf("  %3lu MB on the LRU: %8.3f  (min %.3f, max %.3f)\n", c[i].lru_mb,
			       bench_quantile(c[i].ms, ROUNDS, 0.5), bench_quantile(c[i].ms, ROUNDS, 0),
			       bench_quantile(c[i].ms, ROUNDS, 1));
		printf("  768 MB / 16 MB, the median of the rounds' ratios: %.3f\n",
		       bench_round_ratio(c[1].ms, c[0].ms, ROUNDS));
		snprintf(buf, sizeof(buf), "%.2f", bench_round_ratio(c[1].ms, c[0].ms, ROUNDS));
		printf("target reclaim_lru_768m_vs_16m measured=%s goal=<=1.5 %s\n", buf,
		       strtod(buf, NULL) <= 1.5 ? "ok" : "MISS");
		teardown(&c[1]);
		teardown(&c[0]);
	}
	memcg_exit();
	alloc_exit();
	return 0;
}
