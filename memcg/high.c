/* SPDX-License-Identifier: MIT */
/*
 * high.c - memory.high: charges over it leave the charging task pages to
 * pay back; after its request (the kernel's return to user space,
 * mem_cgroup_handle_over_high) memcgfs reclaims them (the 'high' event)
 * and works out the delay of the kernel's penalty curve, which fs/ applies
 * without blocking a worker thread.
 */
#include "internal.h"

#include <errno.h>

#define HZ				1000ull
#define MEMCG_DELAY_PRECISION_SHIFT	20
#define MEMCG_DELAY_SCALING_SHIFT	14
#define MEMCG_MAX_HIGH_DELAY_JIFFIES	(2ull * HZ)

static uint64_t calculate_overage(unsigned long usage, unsigned long high)
{
	uint64_t overage;

	if (usage <= high)
		return 0;
	if (!high)
		high = 1;
	overage = (uint64_t)(usage - high) << MEMCG_DELAY_PRECISION_SHIFT;
	return overage / high;
}

static uint64_t mem_find_max_overage(struct mem_cgroup *memcg)
{
	uint64_t max_overage = 0;

	for (; memcg && memcg != root_memcg; memcg = memcg->parent) {
		uint64_t o = calculate_overage(page_counter_read(&memcg->memory),
					       READ_ONCE(memcg->memory.high));

		if (o > max_overage)
			max_overage = o;
	}
	return max_overage;
}

/* Jiffies (ms) of penalty for nr_pages over high with this overage. */
static uint64_t calculate_high_delay(unsigned int nr_pages, uint64_t max_overage)
{
	uint64_t penalty;

	if (!max_overage)
		return 0;
	penalty = max_overage * max_overage * HZ;
	penalty >>= MEMCG_DELAY_PRECISION_SHIFT;
	penalty >>= MEMCG_DELAY_SCALING_SHIFT;
	return penalty * nr_pages / MEMCG_CHARGE_BATCH;
}

/* reclaim_high(): every level over high counts the event and reclaims. */
static unsigned long reclaim_high(struct mem_cgroup *memcg, unsigned int nr_pages)
{
	unsigned long nr_reclaimed = 0;

	for (; memcg && memcg != root_memcg; memcg = memcg->parent) {
		uint64_t start;

		if (page_counter_read(&memcg->memory) <= READ_ONCE(memcg->memory.high))
			continue;
		memcg_memory_event(memcg, MEMCG_HIGH);
		start = memcg_now_ns();
		psi_memstall_enter(memcg);
		nr_reclaimed += try_to_free_mem_cgroup_pages(memcg, nr_pages, GFP_KERNEL, false);
		psi_memstall_leave(memcg, start);
	}
	return nr_reclaimed;
}

/* The penalty the task owes, in ns, after reclaiming what it can. */
static uint64_t handle_over_high(struct memcg_task *t, unsigned int nr_pages)
{
	int nr_retries = MAX_RECLAIM_RETRIES;
	struct mem_cgroup *memcg = get_task_memcg(t);
	bool in_retry = false;
	uint64_t penalty;
	unsigned long nr_reclaimed;

retry_reclaim:
	if (READ_ONCE(t->exited) || READ_ONCE(t->oom_killed)) {
		penalty = 0;
		goto out;
	}
	nr_reclaimed = reclaim_high(memcg, in_retry ? SWAP_CLUSTER_MAX : nr_pages);
	penalty = calculate_high_delay(nr_pages, mem_find_max_overage(memcg));
	if (penalty > MEMCG_MAX_HIGH_DELAY_JIFFIES)
		penalty = MEMCG_MAX_HIGH_DELAY_JIFFIES;
	/* not worth a sleep: 10 ms or less */
	if (penalty <= HZ / 100) {
		penalty = 0;
		goto out;
	}
	/* reclaim still making progress: keep at it rather than throttle */
	if (nr_reclaimed || nr_retries--) {
		in_retry = true;
		goto retry_reclaim;
	}
out:
	css_put(memcg);
	return penalty * (1000000000ull / HZ);
}

/*
 * memcg_charge_over_high - after a successful charge: if memcg or an
 * ancestor is over high, the task owes the batch; past a batch it pays in
 * the charge already (reclaim now, delay added to what fs/ will apply).
 */
void memcg_charge_over_high(struct mem_cgroup *memcg, unsigned int batch, gfp_t gfp)
{
	struct memcg_task *t = current_task;
	unsigned long owed;

	if (!t)
		return;
	for (struct mem_cgroup *m = memcg; m && m != root_memcg; m = m->parent) {
		if (page_counter_read(&m->memory) > READ_ONCE(m->memory.high)) {
			owed = atomic_fetch_add(&t->nr_pages_over_high, batch) + batch;
			if (owed > memcg_cfg.charge_batch && (gfp & __GFP_DIRECT_RECLAIM)) {
				unsigned long n = atomic_exchange(&t->nr_pages_over_high, 0);
				uint64_t d = handle_over_high(t, (unsigned int)n);

				atomic_fetch_add(&t->pending_delay_ns, d);
			}
			return;
		}
	}
}

unsigned long memcg_task_pages_over_high(const struct memcg_task *t)
{
	return atomic_load(&t->nr_pages_over_high);
}

uint64_t memcg_handle_over_high(struct memcg_task *t)
{
	unsigned long n = atomic_exchange(&t->nr_pages_over_high, 0);
	uint64_t delay = atomic_exchange(&t->pending_delay_ns, 0);

	if (n)
		delay += handle_over_high(t, (unsigned int)n);
	if (delay > MEMCG_MAX_HIGH_DELAY_NS)
		delay = MEMCG_MAX_HIGH_DELAY_NS;
	return memcg_cfg.high_throttle ? delay : 0;
}

bool memcg_owe_over_high(struct memcg_task *t)
{
	unsigned long n = atomic_exchange(&t->nr_pages_over_high, 0);
	uint64_t owed;

	if (n) {
		uint64_t d = handle_over_high(t, (unsigned int)n);

		owed = atomic_fetch_add(&t->pending_delay_ns, d) + d;
		/* what a single return to user space could be made to sleep, at most */
		while (owed > MEMCG_MAX_HIGH_DELAY_NS &&
		       !atomic_compare_exchange_weak(&t->pending_delay_ns, &owed,
						     MEMCG_MAX_HIGH_DELAY_NS))
			;
	}
	return memcg_cfg.high_throttle && atomic_load(&t->pending_delay_ns);
}
