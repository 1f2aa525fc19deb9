/* SPDX-License-Identifier: MIT */
/*
 * driver.c - the fault-injection loop (see driver.h).
 */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>

/* No scenario may need more runs than this: a loop that does not end is a bug. */
#define MAX_RUNS	200000ul
/* runs with every call failing from N on, spread over the points */
#define PERSISTENT_RUNS	64ul

static void run_with(const struct fault_attr *a, void (*run)(void *), void *arg,
		     struct fault_stats *st)
{
	if (fault_arm(a)) {
		fprintf(stderr, "fault_arm failed: a build without -Dfault_injection?\n");
		abort();
	}
	run(arg);
	fault_disarm();
	fault_stats(st);
}

static void add_injected(struct fault_totals *t, const struct fault_stats *st)
{
	for (int i = 0; i < FAULT_NR_SITES; i++)
		t->injected[i] += st->failed[i];
}

void fault_loop(const char *name, void (*run)(void *), void *arg, struct fault_totals *t)
{
	struct fault_attr a = { .sites = FAULT_ALL_SITES, .task_filter = true };
	struct fault_stats st;
	unsigned long points, n, runs = 0, step;

	/* times = 0: every call counted, none failed */
	a.times = 0;
	run_with(&a, run, arg, &st);
	points = st.calls_total;
	runs++;

	a.times = 1;
	for (n = 1;; n++) {
		a.nth = n;
		run_with(&a, run, arg, &st);
		runs++;
		if (!st.failed_total)
			break;
		add_injected(t, &st);
		if (runs > MAX_RUNS) {
			fprintf(stderr, "fault: %s: still failing calls after %lu runs\n", name, runs);
			abort();
		}
	}

	a.times = -1;
	step = points / PERSISTENT_RUNS ? points / PERSISTENT_RUNS : 1;
	for (n = 1; n <= points; n += step) {
		a.nth = n;
		run_with(&a, run, arg, &st);
		runs++;
		add_injected(t, &st);
	}
	printf("# fault: %s: %lu fault points, %lu runs\n", name, points, runs);
	fflush(stdout);
	t->scenarios++;
	t->runs += runs;
	t->points += points;
}

void fault_report(const char *what, const struct fault_totals *t)
{
	unsigned long all = 0;

	for (int i = 0; i < FAULT_NR_SITES; i++)
		all += t->injected[i];
	printf("fault: %s scenarios=%lu points=%lu runs=%lu injected=%lu (", what, t->scenarios,
	       t->points, t->runs, all);
	for (int i = 0; i < FAULT_NR_SITES; i++)
		printf("%s%s=%lu", i ? " " : "", fault_site_name((enum fault_site)i), t->injected[i]);
	printf(")\n");
}
