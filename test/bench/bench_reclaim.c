/* SPDX-License-Identifier: MIT */
/*
 * bench_reclaim - reclaim's cost against the size of the LRU: a cgroup at
 * its memory.max, full of file pages, charges 1024 more one page at a time
 * (each charge reclaims from the inactive list's tail), with 16 MB and
 * with 768 MB of file pages on its LRU.  Reclaim is O(1) at the tail when
 * both take the same time.  In one process, pinned to one CPU; each figure
 * is the median of 5 repetitions (milliseconds for the 1024 charges).
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

#define CHARGES	1024
#define REPS	5

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

/* The median time of CHARGES charges at the limit with lru_mb on the LRU. */
static double run(unsigned long lru_mb, pid_t pid, double *min, double *max)
{
	unsigned long pages = (lru_mb << 20) / alloc_page_size();
	struct mem_cgroup *m;
	struct memcg_task *t;
	double ms[REPS];
	char buf[64];
	int err = mem_cgroup_create(root_mem_cgroup(), &m);

	if (err)
		bench_die("mem_cgroup_create: %s", strerror(-err));
	t = memcg_task_create(pid, m);
	if (!t)
		bench_die("memcg_task_create failed");
	memcg_set_current(t);
	for (unsigned long i = 0; i < pages; i++)
		file_page();
	memcg_set_current(NULL);
	memcg_drain();
	snprintf(buf, sizeof(buf), "%lu", mem_cgroup_usage_pages(m) * alloc_page_size());
	write_file(m, "memory.max", buf);
	for (int r = 0; r < REPS; r++) {
		double t0;

		memcg_set_current(t);
		t0 = now_ms();
		for (int i = 0; i < CHARGES; i++)
			file_page();
		ms[r] = now_ms() - t0;
		memcg_set_current(NULL);
	}
	/* everything back: the file pages reclaimed, the cgroup gone */
	write_file(m, "memory.max", "0");
	memcg_task_exit(t);
	mem_cgroup_offline(m);
	mem_cgroup_put(m);
	memcg_reap_now();
	qsort(ms, REPS, sizeof(ms[0]), bench_cmp_double);
	*min = ms[0];
	*max = ms[REPS - 1];
	return ms[REPS / 2];
}

int main(void)
{
	struct alloc_config cfg;
	double m16, m768, lo, hi, ratio;
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
	printf("%d file-page charges at memory.max, each reclaiming from the LRU (ms, median of %d):\n",
	       CHARGES, REPS);
	m16 = run(16, getpid(), &lo, &hi);
	printf("  16 MB on the LRU:  %8.2f  (min %.2f, max %.2f)\n", m16, lo, hi);
	m768 = run(768, getpid() + 1, &lo, &hi);
	printf("  768 MB on the LRU: %8.2f  (min %.2f, max %.2f)\n", m768, lo, hi);
	ratio = m768 / m16;
	snprintf(buf, sizeof(buf), "%.2f", ratio);
	printf("target reclaim_lru_768m_vs_16m measured=%s goal=<=1.5 %s\n", buf,
	       strtod(buf, NULL) <= 1.5 ? "ok" : "MISS");
	memcg_exit();
	alloc_exit();
	return 0;
}
