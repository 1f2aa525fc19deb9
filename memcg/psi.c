/* SPDX-License-Identifier: MIT */
/*
 * psi.c - memory pressure stall information per memcg (kernel/sched/psi.c,
 * for the memory resource): 'some' while at least one task stalls, 'full'
 * while every active task does; totals in µs; avg10/avg60/avg300 as the
 * kernel's exponentially decaying averages over 2 s periods; triggers
 * ("some|full STALL_US WINDOW_US") that fire once per window when the
 * stall growth within it crosses the threshold.
 *
 * A task stalls while memcgfs throttles it (memory.high) or reclaims for
 * it; it is active while one of its requests is being served.  A stall
 * counts in the task's memcg and every ancestor's, root included.
 *
 * Triggers are looked at when a group's counts change and, while a group
 * with triggers has a stall going on, by a polling thread (the kernel's
 * psimon): every tenth of the group's shortest window (at least 1 ms), so
 * that a threshold crossed in the middle of a long stall (a 2 s
 * memory.high penalty) fires then, not when the stall ends.
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FSHIFT		11
#define FIXED_1		(1ul << FSHIFT)
#define LOAD_INT(x)	((x) >> FSHIFT)
#define LOAD_FRAC(x)	LOAD_INT(((x) & (FIXED_1 - 1)) * 100)
#define EXP_10s		1677ul
#define EXP_60s		1981ul
#define EXP_300s	2034ul
#define PSI_PERIOD_NS	(2ull * 1000 * 1000 * 1000)
#define WINDOW_MAX_US	10000000u

enum { PSI_SOME, PSI_FULL, NR_PSI };

struct psi_trigger {
	struct psi_trigger *next;
	int state;
	uint64_t threshold_ns, window_ns;
	uint64_t win_start, win_value;
	uint64_t last_event;
	bool pending;
};

struct psi_group {
	pthread_mutex_t lock;
	unsigned int nr_active, nr_stalled;
	uint64_t state_start;			/* when the counts last changed */
	uint64_t total[NR_PSI];			/* ns */
	uint64_t avg_total[NR_PSI];
	unsigned long avg[NR_PSI][3];
	uint64_t avg_last_update, avg_next_update;
	struct psi_trigger *triggers;
	/* on the polling thread's list while it has triggers (poll_lock) */
	struct mem_cgroup *memcg;
	struct psi_group *poll_next;
	bool polled;
};

#define POLL_MIN_NS	1000000ull	/* the polling thread's shortest period */

/* The polling thread (psimon) and the groups it looks at: poll_lock, then g->lock. */
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t poll_cond;
static struct psi_group *poll_groups;
static pthread_t poll_thread;
static bool poll_running, poll_stopping;

uint64_t memcg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct psi_group *psi_group_alloc(void)
{
	struct psi_group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	g->state_start = g->avg_last_update = memcg_now_ns();
	g->avg_next_update = g->avg_last_update + PSI_PERIOD_NS;
	return g;
}

static void poll_unlink(struct psi_group *g)
{
	for (struct psi_group **pp = &poll_groups; *pp; pp = &(*pp)->poll_next) {
		if (*pp == g) {
			*pp = g->poll_next;
			break;
		}
	}
	g->poll_next = NULL;
	g->polled = false;
}

void psi_group_free(struct psi_group *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&poll_lock);
	if (g->polled)
		poll_unlink(g);
	pthread_mutex_unlock(&poll_lock);
	while (g->triggers) {
		struct psi_trigger *t = g->triggers;

		g->triggers = t->next;
		free(t);
	}
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* calc_load() */
static unsigned long calc_load(unsigned long load, unsigned long exp, unsigned long active)
{
	unsigned long newload = load * exp + active * (FIXED_1 - exp);

	if (active >= load)
		newload += FIXED_1 - 1;
	return newload / FIXED_1;
}

static unsigned long calc_load_n(unsigned long load, unsigned long exp, unsigned long n)
{
	while (n--)
		load = calc_load(load, exp, 0);
	return load;
}

static void calc_avgs(unsigned long avg[3], unsigned long missed, uint64_t time, uint64_t period)
{
	unsigned long pct;

	if (missed) {
		avg[0] = calc_load_n(avg[0], EXP_10s, missed);
		avg[1] = calc_load_n(avg[1], EXP_60s, missed);
		avg[2] = calc_load_n(avg[2], EXP_300s, missed);
	}
	pct = period ? (unsigned long)(time * 100 / period) : 0;
	pct *= FIXED_1;
	avg[0] = calc_load(avg[0], EXP_10s, pct);
	avg[1] = calc_load(avg[1], EXP_60s, pct);
	avg[2] = calc_load(avg[2], EXP_300s, pct);
}

/*
 * Time in the current state goes to the totals (g->lock held).  now is read
 * under the lock: a clock read before it may be older than state_start,
 * which another thread set meanwhile (the difference would wrap).
 */
static void record_times(struct psi_group *g, uint64_t now)
{
	uint64_t delta;

	if (now < g->state_start)
		return;
	delta = now - g->state_start;

	g->state_start = now;
	if (!g->nr_stalled)
		return;
	g->total[PSI_SOME] += delta;
	if (g->nr_stalled >= g->nr_active)
		g->total[PSI_FULL] += delta;
}

/* update_averages(), whenever a 2 s period has passed (g->lock held). */
static void update_averages(struct psi_group *g, uint64_t now)
{
	uint64_t expires = g->avg_next_update, period;
	unsigned long missed = 0;

	if (now < expires)
		return;
	if (now - expires >= PSI_PERIOD_NS)
		missed = (unsigned long)((now - expires) / PSI_PERIOD_NS);
	g->avg_next_update = expires + (1 + missed) * PSI_PERIOD_NS;
	period = now - (g->avg_last_update + missed * PSI_PERIOD_NS);
	g->avg_last_update = now;
	for (int s = 0; s < NR_PSI; s++) {
		uint64_t sample = g->total[s] - g->avg_total[s];

		/* overage punted to the next period, as the kernel does */
		if (sample > period)
			sample = period;
		g->avg_total[s] += sample;
		calc_avgs(g->avg[s], missed, sample, period);
	}
}

static bool check_triggers(struct psi_group *g, uint64_t now)
{
	bool fired = false;

	for (struct psi_trigger *t = g->triggers; t; t = t->next) {
		/*
		 * Growth since the window began, before a new window starts: a
		 * stall recorded at its end (a throttle longer than the window)
		 * still counts for the window it ends in.
		 */
		uint64_t growth = g->total[t->state] - t->win_value;

		if (growth >= t->threshold_ns &&
		    /* at most one event per window */
		    (!t->last_event || now - t->last_event >= t->window_ns)) {
			t->last_event = now;
			__atomic_store_n(&t->pending, true, __ATOMIC_RELEASE);
			fired = true;
		}
		if (now - t->win_start >= t->window_ns) {
			t->win_start = now;
			t->win_value = g->total[t->state];
		}
	}
	return fired;
}

static void psi_group_change(struct mem_cgroup *memcg, int d_active, int d_stalled)
{
	bool kick = false;

	for (struct mem_cgroup *m = memcg; m; m = m->parent) {
		struct psi_group *g = m->psi;
		uint64_t now;
		bool fired;

		if (!g)
			continue;
		pthread_mutex_lock(&g->lock);
		now = memcg_now_ns();
		record_times(g, now);
		g->nr_active = (unsigned int)((int)g->nr_active + d_active);
		g->nr_stalled = (unsigned int)((int)g->nr_stalled + d_stalled);
		update_averages(g, now);
		fired = g->triggers && check_triggers(g, now);
		/* a stall begins where triggers wait: the polling thread looks */
		if (g->triggers && d_stalled > 0 && g->nr_stalled == (unsigned int)d_stalled)
			kick = true;
		pthread_mutex_unlock(&g->lock);
		if (fired)
			memcg_notify(m, "memory.pressure");
	}
	if (kick) {
		/* under poll_lock: the thread looks at the counts under it too */
		pthread_mutex_lock(&poll_lock);
		pthread_cond_signal(&poll_cond);
		pthread_mutex_unlock(&poll_lock);
	}
}

/*
 * One look at every group with triggers (poll_lock held): the stalled ones'
 * times advance and their triggers are checked.  Returns the period until
 * the next look (0: no stall, wait for one); the memcgs whose triggers
 * fired, referenced, are in *fired (*nr of them).
 */
static uint64_t poll_once(struct mem_cgroup ***fired, size_t *nr, size_t *cap)
{
	uint64_t period = 0;

	for (struct psi_group *g = poll_groups; g; g = g->poll_next) {
		uint64_t now;
		bool hit;

		pthread_mutex_lock(&g->lock);
		if (!g->nr_stalled || !g->triggers) {
			pthread_mutex_unlock(&g->lock);
			continue;
		}
		now = memcg_now_ns();
		record_times(g, now);
		update_averages(g, now);
		hit = check_triggers(g, now);
		for (struct psi_trigger *t = g->triggers; t; t = t->next) {
			uint64_t p = t->window_ns / 10;

			if (p < POLL_MIN_NS)
				p = POLL_MIN_NS;
			if (!period || p < period)
				period = p;
		}
		pthread_mutex_unlock(&g->lock);
		if (!hit || !css_tryget(g->memcg))
			continue;
		if (*nr == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			struct mem_cgroup **v = realloc(*fired, ncap * sizeof(**fired));

			if (!v) {
				css_put(g->memcg);
				continue;	/* its poller wakes at the stall's end */
			}
			*fired = v;
			*cap = ncap;
		}
		(*fired)[(*nr)++] = g->memcg;
	}
	return period;
}

static void *poll_main(void *arg)
{
	struct mem_cgroup **fired = NULL;
	size_t cap = 0;

	(void)arg;
	pthread_mutex_lock(&poll_lock);
	while (!poll_stopping) {
		size_t nr = 0;
		uint64_t period = poll_once(&fired, &nr, &cap);

		if (nr) {
			/* woken outside the lock: a put may free a memcg, and its group */
			pthread_mutex_unlock(&poll_lock);
			for (size_t i = 0; i < nr; i++) {
				memcg_notify(fired[i], "memory.pressure");
				css_put(fired[i]);
			}
			pthread_mutex_lock(&poll_lock);
		}
		if (poll_stopping)
			break;
		if (!period) {
			pthread_cond_wait(&poll_cond, &poll_lock);
		} else {
			uint64_t at = memcg_now_ns() + period;
			struct timespec ts = { .tv_sec = (time_t)(at / 1000000000ull),
					       .tv_nsec = (long)(at % 1000000000ull) };

			pthread_cond_timedwait(&poll_cond, &poll_lock, &ts);
		}
	}
	pthread_mutex_unlock(&poll_lock);
	free(fired);
	return NULL;
}

/* The polling thread, at the first trigger (poll_lock held): 0 or -errno. */
static int poll_start(void)
{
	pthread_condattr_t a;
	int err;

	if (poll_running)
		return 0;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&poll_cond, &a);
	pthread_condattr_destroy(&a);
	poll_stopping = false;
	err = pthread_create(&poll_thread, NULL, poll_main, NULL);
	if (err) {
		pthread_cond_destroy(&poll_cond);
		return -err;
	}
	poll_running = true;
	return 0;
}

void psi_poll_exit(void)
{
	pthread_mutex_lock(&poll_lock);
	if (!poll_running) {
		pthread_mutex_unlock(&poll_lock);
		return;
	}
	poll_stopping = true;
	pthread_cond_signal(&poll_cond);
	pthread_mutex_unlock(&poll_lock);
	pthread_join(poll_thread, NULL);
	pthread_mutex_lock(&poll_lock);
	poll_running = false;
	pthread_cond_destroy(&poll_cond);
	pthread_mutex_unlock(&poll_lock);
}

void psi_task_change(struct mem_cgroup *memcg, int d_active, int d_stalled)
{
	psi_group_change(memcg, d_active, d_stalled);
}

/* A stall of the current task (reclaim on its behalf). */
void psi_memstall_enter(struct mem_cgroup *memcg)
{
	psi_group_change(memcg, 1, 1);
}

void psi_memstall_leave(struct mem_cgroup *memcg, uint64_t start_ns)
{
	(void)start_ns;
	psi_group_change(memcg, -1, -1);
}

void memcg_task_active(struct memcg_task *t, bool active)
{
	bool was;

	pthread_mutex_lock(&t->lock);
	was = t->active || t->stalled;
	t->active = active;
	if (was != (t->active || t->stalled))
		psi_group_change(t->memcg, active ? 1 : -1, 0);
	pthread_mutex_unlock(&t->lock);
}

void memcg_task_stall_begin(struct memcg_task *t)
{
	pthread_mutex_lock(&t->lock);
	if (!t->stalled) {
		bool was_active = t->active;

		t->stalled = true;
		t->stall_start = memcg_now_ns();
		psi_group_change(t->memcg, was_active ? 0 : 1, 1);
	}
	pthread_mutex_unlock(&t->lock);
}

void memcg_task_stall_end(struct memcg_task *t)
{
	pthread_mutex_lock(&t->lock);
	if (t->stalled) {
		t->stalled = false;
		psi_group_change(t->memcg, t->active ? 0 : -1, -1);
	}
	pthread_mutex_unlock(&t->lock);
}

int memcg_pressure_format(struct mem_cgroup *memcg, char *buf, size_t len)
{
	struct psi_group *g = memcg->psi;
	unsigned long avg[NR_PSI][3] = { { 0 } };
	uint64_t total[NR_PSI] = { 0 };

	if (g) {
		uint64_t now;

		pthread_mutex_lock(&g->lock);
		now = memcg_now_ns();
		record_times(g, now);
		update_averages(g, now);
		memcpy(avg, g->avg, sizeof(avg));
		memcpy(total, g->total, sizeof(total));
		pthread_mutex_unlock(&g->lock);
	}
	return snprintf(buf, len,
		"some avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n"
		"full avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n",
		LOAD_INT(avg[0][0]), LOAD_FRAC(avg[0][0]), LOAD_INT(avg[0][1]), LOAD_FRAC(avg[0][1]),
		LOAD_INT(avg[0][2]), LOAD_FRAC(avg[0][2]), (unsigned long long)(total[0] / 1000),
		LOAD_INT(avg[1][0]), LOAD_FRAC(avg[1][0]), LOAD_INT(avg[1][1]), LOAD_FRAC(avg[1][1]),
		LOAD_INT(avg[1][2]), LOAD_FRAC(avg[1][2]), (unsigned long long)(total[1] / 1000));
}

/*
 * psi_trigger_parse - psi_trigger_create(): "some|full STALL_US WINDOW_US";
 * the window 1 us .. 10 s (a multiple of 2 s for the unprivileged), the
 * threshold 1 .. window.  (Linux 6.4 dropped the 500 ms minimum,
 * WINDOW_MIN_US: "sched/psi: allow unprivileged polling of N*2s period".)
 */
/*
 * The kernel's vsscanf() reads a %u from its digits only, after spaces:
 * glibc's also takes a sign ("some 1 -4294967295" would be a 1 us window).
 * s starts with "some" or "full".
 */
static bool psi_fields_digits(const char *s)
{
	s += 4;
	for (int i = 0; i < 2; i++) {
		while (isspace((unsigned char)*s))
			s++;
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return true;
}

/* psi_trigger_create()'s checks of a specification: 0 or -EINVAL. */
static int psi_spec_parse(const char *buf, bool privileged, int *state,
			  unsigned int *threshold_us, unsigned int *window_us)
{
	if (sscanf(buf, "some %u %u", threshold_us, window_us) == 2)
		*state = PSI_SOME;
	else if (sscanf(buf, "full %u %u", threshold_us, window_us) == 2)
		*state = PSI_FULL;
	else
		return -EINVAL;
	if (!psi_fields_digits(buf))
		return -EINVAL;
	if (*window_us == 0 || *window_us > WINDOW_MAX_US)
		return -EINVAL;
	if (!privileged && *window_us % 2000000)
		return -EINVAL;
	if (*threshold_us == 0 || *threshold_us > *window_us)
		return -EINVAL;
	return 0;
}

int memcg_psi_trigger_check(const char *buf, bool privileged)
{
	unsigned int threshold_us, window_us;
	int state;

	return psi_spec_parse(buf, privileged, &state, &threshold_us, &window_us);
}

int psi_trigger_parse(struct mem_cgroup *memcg, const char *buf, bool privileged,
		      struct psi_trigger **out)
{
	unsigned int threshold_us, window_us, stalled;
	struct psi_trigger *t;
	struct psi_group *g;
	int state, err;
	uint64_t now;

	err = psi_spec_parse(buf, privileged, &state, &threshold_us, &window_us);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->state = state;
	t->threshold_ns = (uint64_t)threshold_us * 1000;
	t->window_ns = (uint64_t)window_us * 1000;
	pthread_mutex_lock(&poll_lock);
	err = poll_start();
	if (err) {
		pthread_mutex_unlock(&poll_lock);
		free(t);
		return err;
	}
	g = memcg->psi;
	pthread_mutex_lock(&g->lock);
	now = memcg_now_ns();
	record_times(g, now);
	t->win_start = now;
	t->win_value = g->total[state];
	t->next = g->triggers;
	g->triggers = t;
	if (!g->polled) {
		g->memcg = memcg;
		g->poll_next = poll_groups;
		poll_groups = g;
		g->polled = true;
	}
	stalled = g->nr_stalled;
	pthread_mutex_unlock(&g->lock);
	/* a stall already going on: the thread looks from now on */
	if (stalled)
		pthread_cond_signal(&poll_cond);
	pthread_mutex_unlock(&poll_lock);
	*out = t;
	return 0;
}

void psi_trigger_free(struct mem_cgroup *memcg, struct psi_trigger *t)
{
	struct psi_group *g = memcg->psi;

	pthread_mutex_lock(&poll_lock);
	pthread_mutex_lock(&g->lock);
	for (struct psi_trigger **pp = &g->triggers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (!g->triggers && g->polled)
		poll_unlink(g);
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_unlock(&poll_lock);
	free(t);
}

bool psi_trigger_poll(struct psi_trigger *t)
{
	return __atomic_exchange_n(&t->pending, false, __ATOMIC_ACQ_REL);
}

