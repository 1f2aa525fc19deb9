/* SPDX-License-Identifier: MIT */
/*
 * fault.c - the fault attributes, the decision (the kernel's should_fail_ex:
 * times, then nth, interval, probability) and its statistics.
 */
#include "fault.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const site_names[FAULT_NR_SITES] = {
	[FAULT_PAGE_ALLOC] = "page_alloc",
	[FAULT_SLAB] = "slab",
	[FAULT_CHARGE] = "charge",
	[FAULT_MALLOC] = "malloc",
};

#ifdef MEMCGFS_FAULT_INJECTION
unsigned int fault_armed_sites;
#endif

static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fault_attr attr;		/* under fault_lock; read racily by the sites */
static bool armed;
static unsigned long calls_total;	/* atomic */
static long failures_left;		/* atomic; -1: no limit */
static unsigned long calls[FAULT_NR_SITES], failed[FAULT_NR_SITES];	/* atomic */
static void (*arm_hook)(void);

static __thread unsigned int suspended;
static __thread bool make_it_fail;
static __thread uint64_t rnd_state;

bool fault_supported(void)
{
#ifdef MEMCGFS_FAULT_INJECTION
	return true;
#else
	return false;
#endif
}

const char *fault_site_name(enum fault_site site)
{
	return (unsigned int)site < FAULT_NR_SITES ? site_names[site] : "?";
}

int fault_site_parse(const char *name, size_t len)
{
	if (len == 3 && !memcmp(name, "all", 3))
		return -1;
	for (int i = 0; i < FAULT_NR_SITES; i++)
		if (strlen(site_names[i]) == len && !memcmp(name, site_names[i], len))
			return i;
	return -EINVAL;
}

void fault_task_enable(bool on)
{
	make_it_fail = on;
}

void fault_suspend(void)
{
	suspended++;
}

void fault_resume(void)
{
	if (suspended)
		suspended--;
}

void fault_set_arm_hook(void (*fn)(void))
{
	pthread_mutex_lock(&fault_lock);
	arm_hook = fn;
	pthread_mutex_unlock(&fault_lock);
}

static bool attr_valid(const struct fault_attr *a)
{
	return !(a->sites & ~FAULT_ALL_SITES) && a->probability <= 100 && a->times >= -1;
}

static void set_armed_sites(unsigned int sites)
{
#ifdef MEMCGFS_FAULT_INJECTION
	__atomic_store_n(&fault_armed_sites, sites, __ATOMIC_SEQ_CST);
#else
	(void)sites;
#endif
}

int fault_arm(const struct fault_attr *a)
{
	void (*hook)(void);

	if (!attr_valid(a))
		return -EINVAL;
	if (!fault_supported())
		return -EOPNOTSUPP;
	pthread_mutex_lock(&fault_lock);
	set_armed_sites(0);
	/* the sites read these without the lock: relaxed atomics */
	__atomic_store_n(&attr.sites, a->sites, __ATOMIC_RELAXED);
	__atomic_store_n(&attr.nth, a->nth ? a->nth : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&attr.interval, a->interval, __ATOMIC_RELAXED);
	__atomic_store_n(&attr.probability, a->probability ? a->probability : 100,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&attr.times, a->times, __ATOMIC_RELAXED);
	__atomic_store_n(&attr.task_filter, a->task_filter, __ATOMIC_RELAXED);
	__atomic_store_n(&attr.seed, a->seed, __ATOMIC_RELAXED);
	__atomic_store_n(&calls_total, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&failures_left, attr.times, __ATOMIC_RELAXED);
	for (int i = 0; i < FAULT_NR_SITES; i++) {
		__atomic_store_n(&calls[i], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&failed[i], 0, __ATOMIC_RELAXED);
	}
	armed = a->sites != 0;
	set_armed_sites(attr.sites);
	hook = arm_hook;
	pthread_mutex_unlock(&fault_lock);
	if (hook)
		hook();
	return 0;
}

void fault_disarm(void)
{
	void (*hook)(void);

	pthread_mutex_lock(&fault_lock);
	set_armed_sites(0);
	armed = false;
	hook = arm_hook;
	pthread_mutex_unlock(&fault_lock);
	if (hook)
		hook();
}

void fault_get(struct fault_attr *a, bool *is_armed)
{
	pthread_mutex_lock(&fault_lock);
	if (a)
		*a = attr;
	if (is_armed)
		*is_armed = armed;
	pthread_mutex_unlock(&fault_lock);
}

void fault_stats(struct fault_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < FAULT_NR_SITES; i++) {
		st->calls[i] = __atomic_load_n(&calls[i], __ATOMIC_RELAXED);
		st->failed[i] = __atomic_load_n(&failed[i], __ATOMIC_RELAXED);
		st->failed_total += st->failed[i];
	}
	st->calls_total = __atomic_load_n(&calls_total, __ATOMIC_RELAXED);
}

/* xorshift64*, per thread, seeded from the attribute and the thread */
static unsigned int rnd_percent(unsigned long seed)
{
	if (!rnd_state)
		rnd_state = (seed ^ (uint64_t)(uintptr_t)&rnd_state) * 0x9e3779b97f4a7c15ull | 1;
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (unsigned int)((rnd_state * 0x2545f4914f6cdd1dull) >> 32) % 100;
}

/* Take one failure from the budget; false when it is spent. */
static bool take_failure(void)
{
	long left = __atomic_load_n(&failures_left, __ATOMIC_RELAXED);

	do {
		if (left == 0)
			return false;
		if (left < 0)
			return true;
	} while (!__atomic_compare_exchange_n(&failures_left, &left, left - 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

bool __fault_should_fail(enum fault_site site)
{
	unsigned long n, nth = __atomic_load_n(&attr.nth, __ATOMIC_RELAXED);
	unsigned long interval = __atomic_load_n(&attr.interval, __ATOMIC_RELAXED);
	unsigned int probability = __atomic_load_n(&attr.probability, __ATOMIC_RELAXED);

	if (suspended || (__atomic_load_n(&attr.task_filter, __ATOMIC_RELAXED) && !make_it_fail))
		return false;
	n = __atomic_add_fetch(&calls_total, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&calls[site], 1, __ATOMIC_RELAXED);
	if (n < nth)
		return false;
	if (interval > 1 && (n - nth) % interval)
		return false;
	if (probability < 100 &&
	    rnd_percent(__atomic_load_n(&attr.seed, __ATOMIC_RELAXED)) >= probability)
		return false;
	if (!take_failure())
		return false;
	__atomic_add_fetch(&failed[site], 1, __ATOMIC_RELAXED);
	return true;
}

/* ---- the text form (memcgfs.fault) ---- */
static bool word_is(const char *w, size_t wl, const char *lit)
{
	return strlen(lit) == wl && !memcmp(w, lit, wl);
}

static int parse_ulong(const char *v, size_t vl, unsigned long max, unsigned long *out)
{
	unsigned long x = 0;

	if (!vl || vl > 20)
		return -EINVAL;
	for (size_t i = 0; i < vl; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		if (x > (max - (unsigned long)(v[i] - '0')) / 10)
			return -EINVAL;
		x = x * 10 + (unsigned long)(v[i] - '0');
	}
	*out = x;
	return 0;
}

static int parse_sites(const char *v, size_t vl, unsigned int *out)
{
	unsigned int mask = 0;

	if (!vl)
		return -EINVAL;
	while (vl) {
		const char *c = memchr(v, ',', vl);
		size_t l = c ? (size_t)(c - v) : vl;
		int s = fault_site_parse(v, l);

		if (s == -EINVAL)
			return -EINVAL;
		mask |= s < 0 ? FAULT_ALL_SITES : FAULT_SITE(s);
		if (!c)
			break;
		if (l + 1 == vl)
			return -EINVAL;	/* a trailing comma */
		v += l + 1;
		vl -= l + 1;
	}
	*out = mask;
	return 0;
}

int fault_parse(const char *s, size_t len, struct fault_attr *a)
{
	struct fault_attr n = *a;
	bool any = false, off = false;

	while (len && (s[len - 1] == '\n'))
		len--;
	while (len) {
		const char *w, *eq;
		size_t wl, kl;
		unsigned long x;

		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		if (!len)
			break;
		w = s;
		while (len && *s != ' ' && *s != '\t') {
			if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
				return -EINVAL;
			s++;
			len--;
		}
		wl = (size_t)(s - w);
		if (word_is(w, wl, "off")) {
			off = true;
			continue;
		}
		eq = memchr(w, '=', wl);
		if (!eq)
			return -EINVAL;
		kl = (size_t)(eq - w);
		eq++;
		wl -= kl + 1;
		if (word_is(w, kl, "sites")) {
			if (parse_sites(eq, wl, &n.sites))
				return -EINVAL;
		} else if (word_is(w, kl, "nth")) {
			if (parse_ulong(eq, wl, (unsigned long)-1, &n.nth))
				return -EINVAL;
		} else if (word_is(w, kl, "interval")) {
			if (parse_ulong(eq, wl, (unsigned long)-1, &n.interval))
				return -EINVAL;
		} else if (word_is(w, kl, "probability")) {
			if (parse_ulong(eq, wl, 100, &x))
				return -EINVAL;
			n.probability = (unsigned int)x;
		} else if (word_is(w, kl, "times")) {
			if (word_is(eq, wl, "-1"))
				n.times = -1;
			else if (parse_ulong(eq, wl, (unsigned long)__LONG_MAX__, &x))
				return -EINVAL;
			else
				n.times = (long)x;
		} else if (word_is(w, kl, "task_filter")) {
			if (word_is(eq, wl, "0") || word_is(eq, wl, "1"))
				n.task_filter = *eq == '1';
			else
				return -EINVAL;
		} else if (word_is(w, kl, "seed")) {
			if (parse_ulong(eq, wl, (unsigned long)-1, &n.seed))
				return -EINVAL;
		} else {
			return -EINVAL;
		}
		any = true;
	}
	if (off)
		return any ? -EINVAL : 1;
	if (!any || !attr_valid(&n))
		return -EINVAL;
	*a = n;
	return 0;
}

size_t fault_format(char *buf, size_t size)
{
	struct fault_attr a;
	struct fault_stats st;
	bool is_armed;
	char sites[64] = "";
	size_t n = 0;
	int r;

	fault_get(&a, &is_armed);
	fault_stats(&st);
	for (int i = 0; i < FAULT_NR_SITES; i++) {
		if (!(a.sites & FAULT_SITE(i)))
			continue;
		if (sites[0])
			strcat(sites, ",");
		strcat(sites, site_names[i]);
	}
	r = snprintf(buf, size,
		     "armed %d\nsites %s\nnth %lu\ninterval %lu\nprobability %u\ntimes %ld\n"
		     "task_filter %d\nseed %lu\n",
		     is_armed, sites[0] ? sites : "none", a.nth, a.interval, a.probability,
		     a.times, a.task_filter, a.seed);
	n = r > 0 ? (size_t)r : 0;
	for (int i = 0; i < FAULT_NR_SITES; i++) {
		r = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0,
			     "%s calls %lu failed %lu\n", site_names[i], st.calls[i], st.failed[i]);
		n += r > 0 ? (size_t)r : 0;
	}
	return n;
}
