/* SPDX-License-Identifier: MIT */
/*
 * oom.c - the memcg OOM killer (mm/oom_kill.c for a memcg domain, or the
 * whole machine from the root).
 *
 * Badness as docs/design.md decides it: the pages a task owns (anon,
 * kernel_stack, pagetables), with real memory its resident pages and page
 * tables, plus oom_score_adj * total / 1000, at least 1;
 * -1000 is never chosen; ties go to the task that charged most recently.
 * A task is chosen at most once in one charge's OOM handling.  With
 * memory.oom.group, the highest group memcg between the victim and the
 * domain loses every task (but -1000 ones).  Killing frees the task's
 * owned pages and its real memory (its handles go stale) and has fs/ send
 * the real process memcg.oom_kill_signal, or SIGKILL with real memory (the
 * ops: memcg/ itself never signals a process nor reads /proc).
 */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define OOM_SCORE_ADJ_MIN	(-1000)

pthread_mutex_t tasks_lock = PTHREAD_MUTEX_INITIALIZER;
struct memcg_task *all_tasks;
static pthread_mutex_t oom_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t oom_rounds;
static struct memcg_oom_ops oom_ops;

/*
 * The machine's pages, read once at start-up: out_of_memory() runs inside
 * the page allocator (global OOM from new_slab(), under slab_life_lock
 * held shared), where alloc_stats()'s slab_mutex would invert alloc_check()'s
 * order (slab_mutex, then slab_life_lock exclusive): a deadlock, found by
 * test/stress with a 16M machine and memcgfs.check reads.
 */
static unsigned long machine_total_pages;

void memcg_oom_init(void)
{
	struct alloc_stats st;

	alloc_stats(&st);
	machine_total_pages = st.pages_total;
}

static unsigned long alloc_stats_total_pages(void)
{
	return machine_total_pages;
}

void memcg_set_oom_ops(const struct memcg_oom_ops *ops)
{
	pthread_mutex_lock(&oom_lock);
	if (ops)
		oom_ops = *ops;
	else
		memset(&oom_ops, 0, sizeof(oom_ops));
	pthread_mutex_unlock(&oom_lock);
}

bool memcg_task_oom_killed(const struct memcg_task *t)
{
	return READ_ONCE(t->oom_killed);
}

void memcg_task_set_oom_score_adj(struct memcg_task *t, int adj)
{
	t->oom_score_adj = adj;
	t->adj_set = true;
}

uint64_t memcg_oom_new_round(void)
{
	return atomic_fetch_add(&oom_rounds, 1) + 1;
}

static int task_adj(struct memcg_task *t)
{
	if (t->adj_set)
		return t->oom_score_adj;
	return oom_ops.oom_score_adj ? oom_ops.oom_score_adj(t->pid) : 0;
}

/* oom_kill_process() on one task: its owned pages go, the event counts. */
void memcg_oom_kill_task(struct memcg_task *t)
{
	struct mem_cgroup *memcg;
	bool exited;

	int sig = memcg_cfg.real_memory ? SIGKILL : memcg_cfg.oom_kill_signal;

	memcg = get_task_memcg(t);
	WRITE_ONCE(t->oom_killed, true);
	memcg_task_free_owned(t);
	memcg_memory_event(memcg, MEMCG_OOM_KILL);
	exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
	/* a task that exited meanwhile has no process to signal */
	if (sig > 0 && !exited && oom_ops.kill)
		oom_ops.kill(t, sig, oom_ops.arg);
	if (oom_ops.killed)
		oom_ops.killed(t, oom_ops.arg);
	css_put(memcg);
}

/* The highest memcg with memory.oom.group between victim and domain. */
static struct mem_cgroup *oom_group_of(struct mem_cgroup *victim, struct mem_cgroup *domain)
{
	struct mem_cgroup *group = NULL;

	if (victim == root_memcg)
		return NULL;
	for (struct mem_cgroup *m = victim; m; m = m->parent) {
		if (READ_ONCE(m->oom_group))
			group = m;
		if (m == domain)
			break;
	}
	return group;
}

/*
 * out_of_memory - choose and kill within domain's subtree.  Returns true
 * when something was killed.  A task's memcg may be swapped by an attach
 * (t->lock, not tasks_lock) and its old one freed a grace period after:
 * the scans read memcgs through tasks inside a read-side section, and the
 * OOM group is referenced before the section ends.
 *
 * A victim is chosen once: a kill frees its pages at once (the kernel's OOM
 * reaper, done: MMF_OOM_SKIP), so a task already killed is passed over,
 * never counted twice.  A current task that was killed is the kernel's
 * task_will_free_mem(current): true without a new kill, and its charge
 * then fails (passed_oom and a dying task, try_charge_memcg).
 */
static bool out_of_memory(struct mem_cgroup *domain, uint64_t round)
{
	unsigned long total = alloc_stats_total_pages();
	struct memcg_task *victim = NULL;
	long best = 0;
	struct mem_cgroup *group;

	if (current_task && READ_ONCE(current_task->oom_killed))
		return true;
	if (domain != root_memcg && READ_ONCE(domain->memory.max) < total)
		total = READ_ONCE(domain->memory.max);
	pthread_mutex_lock(&tasks_lock);
	rcu_read_lock();
	for (struct memcg_task *t = all_tasks; t; t = t->tnext) {
		long points;
		int adj;

		if (READ_ONCE(t->exited) || READ_ONCE(t->oom_killed) || t->oom_round == round ||
		    READ_ONCE(t->unkillable))
			continue;
		if (domain != root_memcg && !mem_cgroup_is_descendant(READ_ONCE(t->memcg), domain))
			continue;
		adj = task_adj(t);
		if (adj <= OOM_SCORE_ADJ_MIN)
			continue;
		/* oom_badness(): what killing it frees, emulated and real */
		points = (long)READ_ONCE(t->owned_pages) + (long)READ_ONCE(t->real_rss) +
			 (long)adj * (long)(total / 1000);
		if (points < 1)
			points = 1;
		if (!victim || points > best ||
		    (points == best && READ_ONCE(t->charge_seq) > READ_ONCE(victim->charge_seq))) {
			victim = t;
			best = points;
		}
	}
	if (!victim) {
		rcu_read_unlock();
		pthread_mutex_unlock(&tasks_lock);
		return false;
	}
	victim->oom_round = round;
	memcg_task_get(victim);		/* it may exit once the lock is dropped */
	group = oom_group_of(READ_ONCE(victim->memcg), domain);
	if (group && !css_tryget(group))
		group = NULL;		/* being freed: nothing left to kill with it */
	if (!group) {
		rcu_read_unlock();
		pthread_mutex_unlock(&tasks_lock);
		memcg_oom_kill_task(victim);
		memcg_task_put(victim);
		return true;
	}
	/* the whole group: collect under the lock, kill outside it */
	{
		struct memcg_task **v = NULL;
		size_t n = 0, cap = 0;

		for (struct memcg_task *t = all_tasks; t; t = t->tnext) {
			if (READ_ONCE(t->exited) || READ_ONCE(t->unkillable) ||
			    (t != victim && READ_ONCE(t->oom_killed)) ||
			    !mem_cgroup_is_descendant(READ_ONCE(t->memcg), group))
				continue;
			if (t != victim && task_adj(t) <= OOM_SCORE_ADJ_MIN)
				continue;
			if (n == cap) {
				struct memcg_task **w = realloc(v, (cap ? cap * 2 : 8) * sizeof(*v));

				if (!w)
					break;
				v = w;
				cap = cap ? cap * 2 : 8;
			}
			t->oom_round = round;
			memcg_task_get(t);
			v[n++] = t;
		}
		rcu_read_unlock();
		pthread_mutex_unlock(&tasks_lock);
		memcg_memory_event(group, MEMCG_OOM_GROUP_KILL);
		css_put(group);
		for (size_t i = 0; i < n; i++) {
			memcg_oom_kill_task(v[i]);
			memcg_task_put(v[i]);
		}
		if (!n)
			memcg_oom_kill_task(victim);
		memcg_task_put(victim);
		free(v);
	}
	return true;
}

/*
 * mem_cgroup_oom - the charge path's OOM (only for order <= 3, as the
 * kernel): the 'oom' event, then a kill in the subtree.  True when the
 * charge should be retried.
 */
bool mem_cgroup_oom(struct mem_cgroup *memcg, gfp_t gfp, unsigned int order, uint64_t round)
{
	bool ret;

	(void)gfp;
	if (order > PAGE_ALLOC_COSTLY_ORDER)
		return false;
	memcg_memory_event(memcg, MEMCG_OOM);
	pthread_mutex_lock(&oom_lock);
	/* someone else's kill may have made room meanwhile */
	if (memcg != root_memcg && mem_cgroup_margin(memcg) >= (1ul << order))
		ret = true;
	else
		ret = out_of_memory(memcg, round);
	pthread_mutex_unlock(&oom_lock);
	return ret;
}

/* mem_cgroup_out_of_memory(): a kill in memcg's subtree, the event raised by the caller. */
bool memcg_out_of_memory(struct mem_cgroup *memcg, uint64_t round)
{
	bool ret;

	pthread_mutex_lock(&oom_lock);
	ret = out_of_memory(memcg, round);
	pthread_mutex_unlock(&oom_lock);
	return ret;
}

/*
 * memcg_global_oom - alloc's out-of-memory handler: reclaim over the whole
 * tree, then the OOM killer from the root.
 */
bool memcg_global_oom(unsigned int order, gfp_t gfp)
{
	unsigned long want = 1ul << order;
	uint64_t round;

	if (!memcg_up)
		return false;
	memcg_drain();
	if (try_to_free_mem_cgroup_pages(root_memcg, want, gfp, false))
		return true;
	memcg_drain();
	if (order > PAGE_ALLOC_COSTLY_ORDER)
		return false;
	round = memcg_oom_new_round();
	pthread_mutex_lock(&oom_lock);
	if (!out_of_memory(root_memcg, round)) {
		pthread_mutex_unlock(&oom_lock);
		return false;
	}
	pthread_mutex_unlock(&oom_lock);
	memcg_drain();
	return true;
}
