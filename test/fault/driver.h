/* SPDX-License-Identifier: MIT */
/*
 * driver.h - the fault-injection loop of test/fault (SQLite's "every
 * malloc fails in turn", with the kernel's fault_attr of fault/).
 *
 * A scenario is a function that runs some work on a fresh state, switches
 * fault_task_enable(true) on only around the code under test, then cleans
 * up with faults off and checks the machine: invariants (memcg_check,
 * alloc_check) and every counter back to its baseline.  It must abort()
 * on anything wrong.
 *
 * fault_loop runs it once counting its fault points (the calls of every
 * site in scope), then with the N-th call failing, for N = 1, 2, ... until
 * a run sees no failure (a failure changes what follows, so the count is
 * not fixed in advance), then with every call from the N-th on failing
 * (memory that stays gone), for N spread over the points.
 */
#ifndef MEMCGFS_FAULT_DRIVER_H
#define MEMCGFS_FAULT_DRIVER_H

#include "fault.h"

struct fault_totals {
	unsigned long scenarios, runs, points;
	unsigned long injected[FAULT_NR_SITES];
};

void fault_loop(const char *name, void (*run)(void *arg), void *arg,
		struct fault_totals *t);

/* "fault: NAME scenarios=... runs=... injected=... (page_alloc=... ...)" */
void fault_report(const char *what, const struct fault_totals *t);

#endif
