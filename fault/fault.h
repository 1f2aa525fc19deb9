/* SPDX-License-Identifier: MIT */
/*
 * fault: fault injection, after the kernel's fault_attr
 * (lib/fault-inject.c, Documentation/fault-injection/).
 *
 * A site is a place where memcgfs can fail by design: the page allocator
 * (the kernel's fail_page_alloc), a slab allocation (failslab), a memcg
 * charge (try_charge_memcg at the page counter), and libc's allocator
 * (the harnesses wrap malloc & co. with fault_wrap_malloc and friends).
 * Each site asks fault_should_fail(); while nothing is armed that is one
 * relaxed load and a not-taken branch, and a build with
 * -Dfault_injection=disabled compiles the question away.
 *
 * Armed (fault_arm), the sites count their calls from 1 and fail the
 * calls the attributes select:
 *   nth          the first call that may fail (1: every call from the start)
 *   interval     from there, only every interval-th call (0 or 1: each)
 *   probability  and of those, that percentage (100: all)
 *   times        at most this many failures (-1: no limit)
 *   task_filter  only in threads that called fault_task_enable(true)
 *                (the kernel's /proc/PID/make-it-fail)
 * "fail the N-th and nothing else" is { nth = N, times = 1 }: a scenario
 * run with N = 1, 2, ... until a run ends with no failure has failed every
 * one of its internal allocations and charges in turn.
 *
 * A site gives up exactly as it does when memory really runs out: NULL
 * from an allocator, -ENOMEM from a charge; callers must cope.  Callers
 * that may not fail (__GFP_NOFAIL) do not ask.
 */
#ifndef MEMCGFS_FAULT_H
#define MEMCGFS_FAULT_H

#include <stdbool.h>
#include <stddef.h>

enum fault_site {
	FAULT_PAGE_ALLOC,	/* __alloc_pages: buddy pages, slabs, large kmalloc */
	FAULT_SLAB,		/* kmem_cache_alloc/kmalloc from a slab cache */
	FAULT_CHARGE,		/* try_charge_memcg at the page counter */
	FAULT_MALLOC,		/* libc malloc/calloc/realloc/strdup (wrapped) */
	FAULT_NR_SITES
};

#define FAULT_SITE(s)		(1u << (s))
#define FAULT_ALL_SITES		((1u << FAULT_NR_SITES) - 1)

struct fault_attr {
	unsigned int sites;		/* FAULT_SITE() mask */
	unsigned long nth;		/* 0 is taken as 1 */
	unsigned long interval;
	unsigned int probability;	/* percent; 0 is taken as 100 */
	long times;			/* -1: no limit; 0: never fail */
	bool task_filter;
	unsigned long seed;		/* for probability < 100 */
};

struct fault_stats {
	unsigned long calls[FAULT_NR_SITES];	/* since fault_arm */
	unsigned long failed[FAULT_NR_SITES];
	unsigned long calls_total, failed_total;
};

/* the slow half of fault_should_fail: count the call, decide */
bool __fault_should_fail(enum fault_site site);

#ifdef MEMCGFS_FAULT_INJECTION
/* The sites armed now: read by every site (relaxed). */
extern unsigned int fault_armed_sites;

static inline bool fault_should_fail(enum fault_site site)
{
	if (__builtin_expect(!(__atomic_load_n(&fault_armed_sites, __ATOMIC_RELAXED) &
			       FAULT_SITE(site)), 1))
		return false;
	return __fault_should_fail(site);
}

static inline bool fault_site_armed(enum fault_site site)
{
	return __atomic_load_n(&fault_armed_sites, __ATOMIC_RELAXED) & FAULT_SITE(site);
}
#else
static inline bool fault_should_fail(enum fault_site site)
{
	(void)site;
	return false;
}

static inline bool fault_site_armed(enum fault_site site)
{
	(void)site;
	return false;
}
#endif

/* true when this build has the sites (-Dfault_injection) */
bool fault_supported(void);

/*
 * fault_arm - start counting and failing as a says (the counts and
 * statistics restart).  -EINVAL for a bad attribute (unknown site bits,
 * probability over 100, times below -1), -EOPNOTSUPP in a build without
 * fault injection.
 */
int fault_arm(const struct fault_attr *a);
/* fault_disarm - no site fails any more; the statistics stay readable. */
void fault_disarm(void);
void fault_get(struct fault_attr *a, bool *armed);
void fault_stats(struct fault_stats *st);

/* with task_filter: may this thread's calls fail (make-it-fail) */
void fault_task_enable(bool on);

/*
 * Nested sections in which this thread's calls never fail nor count (a
 * harness's own bookkeeping called from inside the code under test).
 */
void fault_suspend(void);
void fault_resume(void);

/*
 * A hook run after every arm and disarm (alloc's: the slab fast path
 * routes through its hooks while FAULT_SLAB is armed).  One hook.
 */
void fault_set_arm_hook(void (*fn)(void));

const char *fault_site_name(enum fault_site site);
/* "page_alloc" -> FAULT_PAGE_ALLOC, "all" -> -1 (every site); -EINVAL else */
int fault_site_parse(const char *name, size_t len);

/*
 * fault_parse - "sites=page_alloc,slab nth=5 interval=1 probability=100
 * times=1 task_filter=0 seed=1": the attributes given, the rest as in
 * *a already.  "off" alone disarms: returns 1.  -EINVAL for anything else.
 */
int fault_parse(const char *s, size_t len, struct fault_attr *a);
/* fault_format - the attributes and statistics, one "key value" per line */
size_t fault_format(char *buf, size_t size);

#endif
