/* SPDX-License-Identifier: MIT */
/*
 * check.c - memcg's invariants, for tests and `memcgctl check`: every page
 * counter equals its own charges plus its children's, stocks included; the
 * statistics agree with the counters; objcgs reachable and referenced;
 * each memcg's task count is the number of tasks attached to it.
 * Callers make sure nothing charges while it runs.
 */
#include "internal.h"
#include "lib.h"

#include <errno.h>
#include <stdio.h>

/* Stock pages of a subtree (root excluded: never charged). */
static unsigned long subtree_stock_pages(const struct mem_cgroup *memcg)
{
	unsigned long n = memcg_stock_pages(memcg);

	for (const struct mem_cgroup *c = memcg->children; c; c = c->sibling)
		n += subtree_stock_pages(c);
	return n;
}

static int check_memcg(const struct mem_cgroup *memcg, char *msg, size_t len)
{
	long usage = (long)page_counter_read(&memcg->memory), children = 0;
	int ret;

	for (const struct mem_cgroup *c = memcg->children; c; c = c->sibling) {
		ret = check_memcg(c, msg, len);
		if (ret)
			return ret;
		children += (long)page_counter_read(&c->memory);
	}
	if (memcg == root_memcg)
		return 0;
	if (usage != atomic_load(&memcg->local_charge) + children)
		return check_fail(msg, len, "memcg %u: usage %ld != own %ld + children %ld",
			    memcg->id, usage, atomic_load(&memcg->local_charge), children);
	{
		long charged = memcg_state_all_nodes(memcg, MI_KMEM) +
			       memcg_state_all_nodes(memcg, MI_ANON) +
			       memcg_state_all_nodes(memcg, MI_FILE) +
			       memcg_state_all_nodes(memcg, MI_SOCK) +
			       (long)subtree_stock_pages(memcg);

		if (usage != charged)
			return check_fail(msg, len, "memcg %u: usage %ld pages but kernel+anon+file+sock+stocks %ld",
				    memcg->id, usage, charged);
	}
	/* refcnt 0: released, freed after its grace period */
	if (atomic_load(&memcg->refcnt) < 0)
		return check_fail(msg, len, "memcg %u in the tree with refcnt %ld", memcg->id,
			    atomic_load(&memcg->refcnt));
	for (const struct obj_cgroup *o = memcg->objcg_list; o; o = o->next) {
		if (atomic_load(&o->memcg) != memcg)
			return check_fail(msg, len, "memcg %u lists an objcg of another memcg", memcg->id);
		/* live, its count is spread over the CPUs: summed on a busy machine it can
		 * read a put without its get; killed, it is one atomic count */
		if (percpu_ref_is_dying(&o->refcnt) && percpu_ref_read(&o->refcnt) < 0)
			return check_fail(msg, len, "memcg %u: objcg with refcnt %ld", memcg->id,
				    percpu_ref_read(&o->refcnt));
	}
	return 0;
}

/* The real files listed on memcg's LRU and their pages: lru_lock taken. */
static unsigned long real_lru_check(struct mem_cgroup *memcg, unsigned long *listed, char *msg,
				    size_t len, int *ret)
{
	unsigned long sum[2] = { 0, 0 };

	pthread_mutex_lock(&memcg->lru_lock);
	for (unsigned int lru = 0; lru < 2; lru++)
		for (struct memcg_real_file *f = memcg->real_lru.head[lru]; f;
		     f = memcg_real_file_next(f))
			sum[lru] += memcg_real_file_charged(f);
	for (unsigned int lru = 0; lru < 2 && !*ret; lru++)
		if (sum[lru] != memcg->real_lru.pages[lru])
			*ret = check_fail(msg, len, "memcg %u: real %s files hold %lu pages, counted %lu",
					  memcg->id, lru ? "active" : "inactive", sum[lru],
					  memcg->real_lru.pages[lru]);
	pthread_mutex_unlock(&memcg->lru_lock);
	if (!mem_cgroup_is_root(memcg))
		*listed += sum[0] + sum[1];
	for (struct mem_cgroup *c = memcg->children; c && !*ret; c = c->sibling)
		real_lru_check(c, listed, msg, len, ret);
	return *listed;
}

/*
 * tasks_lock held: the real pages the tasks' buckets hold (the root's
 * aside).  A task's buckets are read under its real_lock, taken with a
 * trylock (tasks_lock is innermost: a charge under real_lock may reach the
 * OOM killer, which takes tasks_lock).  False when a task is being charged
 * or released right now: no count, the check of real pages is skipped.
 */
static bool real_task_pages(unsigned long *pages)
{
	unsigned long n = 0;

	for (struct memcg_task *t = all_tasks; t; t = t->tnext) {
		if (pthread_mutex_trylock(&t->real_lock))
			return false;
		for (unsigned int i = 0; i < t->nr_real; i++)
			if (!mem_cgroup_is_root(t->real[i].memcg))
				for (unsigned int item = 0; item < NR_REAL_ITEMS; item++)
					n += t->real[i].pages[item];
		pthread_mutex_unlock(&t->real_lock);
	}
	*pages = n;
	return true;
}

/* tree_lock held: every real charge is a task's or a file's */
static int check_real(unsigned long tasks, char *msg, size_t len)
{
	unsigned long files = 0;
	int ret = 0;

	real_lru_check(root_memcg, &files, msg, len, &ret);
	if (!ret && tasks + files != memcg_real_charged_pages())
		ret = check_fail(msg, len, "real memory: %lu pages charged, tasks hold %lu and files %lu",
				 memcg_real_charged_pages(), tasks, files);
	return ret;
}

/* tree_lock and tasks_lock held: nr_tasks against the task list */
static int check_tasks(const struct mem_cgroup *memcg, char *msg, size_t len)
{
	unsigned long n = 0;
	int ret;

	for (const struct mem_cgroup *c = memcg->children; c; c = c->sibling) {
		ret = check_tasks(c, msg, len);
		if (ret)
			return ret;
	}
	for (const struct memcg_task *t = all_tasks; t; t = t->tnext) {
		if (t->memcg == memcg && mem_cgroup_from_task(t) != memcg)
			return check_fail(msg, len, "task %d of memcg %u: its css_set names another",
					  (int)t->pid, memcg->id);
		n += t->memcg == memcg;
	}
	if (n != memcg->nr_tasks)
		return check_fail(msg, len, "memcg %u: %lu tasks counted but %lu attached", memcg->id,
			    memcg->nr_tasks, n);
	return 0;
}

int memcg_check(char *msg, size_t len)
{
	int ret;

	if (!memcg_up)
		return check_fail(msg, len, "no memory controller");
	if (msg && len)
		msg[0] = '\0';
	memcg_stats_flush();
	memcg_stats_lock();	/* check_memcg reads state[] */
	pthread_mutex_lock(&tree_lock);
	pthread_mutex_lock(&objcg_lock);
	ret = check_memcg(root_memcg, msg, len);
	pthread_mutex_unlock(&objcg_lock);
	if (!ret) {
		unsigned long tasks = 0;
		bool counted;

		pthread_mutex_lock(&tasks_lock);
		ret = check_tasks(root_memcg, msg, len);
		counted = real_task_pages(&tasks);
		pthread_mutex_unlock(&tasks_lock);
		/* the LRU locks are not taken under tasks_lock (innermost) */
		if (!ret && counted)
			ret = check_real(tasks, msg, len);
	}
	pthread_mutex_unlock(&tree_lock);
	memcg_stats_unlock();
	return ret;
}
