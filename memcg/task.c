/* SPDX-License-Identifier: MIT */
/*
 * task.c - memcg's tasks: creation, attach and exit, their references, the
 * calling thread's current task and its cached objcg (the kernel's
 * current->objcg, set_active_memcg(), mm/memcontrol.c's current_objcg_update).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

__thread struct memcg_task *current_task;
__thread struct mem_cgroup *active_memcg;
/* alloc.h's view of current_task's cached objcg: see memcg_current_changed() */
static const uintptr_t objcg_none, objcg_remote = CURRENT_OBJCG_UPDATE_FLAG;
__thread const uintptr_t *memcg_current_objcg = &objcg_none;

void memcg_current_changed(void)
{
	if (unlikely(active_memcg))
		memcg_current_objcg = &objcg_remote;	/* the hook resolves it */
	else if (current_task)
		memcg_current_objcg = (const uintptr_t *)&current_task->objcg;
	else
		memcg_current_objcg = &objcg_none;
}
static __thread const _Atomic bool *current_signal;

struct memcg_task *memcg_task_create(pid_t pid, struct mem_cgroup *memcg)
{
	struct memcg_task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	atomic_init(&t->ref, 1);
	t->pid = pid;
	t->memcg = memcg ? memcg : root_memcg;
	t->cgroups = &t->memcg->cset;
	css_get(t->memcg);
	/* fork: resolved lazily on the first accounted allocation */
	atomic_store(&t->objcg, CURRENT_OBJCG_UPDATE_FLAG);
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->real_lock, NULL);
	/* counted and listed at once: memcg_check() compares the two */
	pthread_mutex_lock(&tree_lock);
	pthread_mutex_lock(&tasks_lock);
	t->memcg->nr_tasks++;
	t->tnext = all_tasks;
	if (all_tasks)
		all_tasks->tprev = t;
	all_tasks = t;
	pthread_mutex_unlock(&tasks_lock);
	pthread_mutex_unlock(&tree_lock);
	return t;
}

/*
 * Migrate t to memcg.  tree_lock and t->lock are held together over the
 * online check, the nr_tasks move and the pointer swap, so two attaches of
 * one task, or an attach and the task's exit, never count it twice or in
 * the wrong memcg: whoever holds either lock sees t->memcg and the counts
 * agree.  Unlocked readers (current charging, the OOM scan) use
 * READ_ONCE and take their reference with css_tryget (get_task_memcg):
 * the old memcg is freed only a grace period after its last put.
 */
int memcg_task_attach(struct memcg_task *t, struct mem_cgroup *memcg)
{
	struct mem_cgroup *old;

	if (!memcg)
		memcg = root_memcg;
	pthread_mutex_lock(&tree_lock);
	if (!memcg->online) {
		pthread_mutex_unlock(&tree_lock);
		return -ENODEV;
	}
	pthread_mutex_lock(&t->lock);
	if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) {
		/* memcg_task_exit() uncounted it already */
		pthread_mutex_unlock(&t->lock);
		pthread_mutex_unlock(&tree_lock);
		return -ESRCH;
	}
	old = t->memcg;
	css_get(memcg);
	memcg->nr_tasks++;
	old->nr_tasks--;
	WRITE_ONCE(t->memcg, memcg);
	WRITE_ONCE(t->cgroups, &memcg->cset);
	/* the attach callback: the task re-resolves on its next allocation */
	atomic_fetch_or(&t->objcg, CURRENT_OBJCG_UPDATE_FLAG);
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_unlock(&tree_lock);
	css_put(old);
	return 0;
}

struct mem_cgroup *memcg_task_memcg(const struct memcg_task *t)
{
	return READ_ONCE(t->memcg);
}

/*
 * The task's memcg, referenced: mem_cgroup_from_task() + css_tryget() in
 * the kernel's retry loop.  A failed tryget means an attach swapped the
 * pointer and dropped the last reference; the next read finds the new one.
 */
struct mem_cgroup *get_task_memcg(const struct memcg_task *t)
{
	struct mem_cgroup *memcg;

	rcu_read_lock();
	do
		memcg = READ_ONCE(t->memcg);
	while (!css_tryget(memcg));
	rcu_read_unlock();
	return memcg;
}

pid_t memcg_task_pid(const struct memcg_task *t)
{
	return t->pid;
}

unsigned long memcg_task_owned_pages(const struct memcg_task *t)
{
	return READ_ONCE(t->owned_pages);
}

void memcg_set_signal(const _Atomic bool *pending)
{
	current_signal = pending;
}

bool signal_pending(void)
{
	return current_signal && atomic_load_explicit(current_signal, memory_order_relaxed);
}

void memcg_task_set_unkillable(struct memcg_task *t)
{
	WRITE_ONCE(t->unkillable, true);
}

void memcg_set_current(struct memcg_task *t)
{
	current_task = t;
	memcg_current_changed();
}

struct memcg_task *memcg_current(void)
{
	return current_task;
}

/* The first ancestor-or-self below the root with a live objcg (referenced). */
static struct obj_cgroup *objcg_of_memcg(struct mem_cgroup *memcg)
{
	for (; memcg && memcg != root_memcg; memcg = memcg->parent) {
		struct obj_cgroup *objcg;

		pthread_mutex_lock(&objcg_lock);
		objcg = atomic_load(&memcg->objcg);
		if (objcg)
			obj_cgroup_get(objcg);
		pthread_mutex_unlock(&objcg_lock);
		if (objcg)
			return objcg;
	}
	return NULL;
}

/*
 * current_objcg_update - the task's cached objcg is stale (fork, migration):
 * resolve it again.  Serialised per task: several daemon threads may serve
 * one client at once, where the kernel has only the task itself.
 */
struct obj_cgroup *current_objcg_update(struct memcg_task *t)
{
	uintptr_t v;
	struct obj_cgroup *old, *new;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		v = atomic_load(&t->objcg);
		if (!(v & CURRENT_OBJCG_UPDATE_FLAG))
			break;
		old = (struct obj_cgroup *)(v & ~CURRENT_OBJCG_UPDATE_FLAG);
		new = READ_ONCE(t->exited) ? NULL : objcg_of_memcg(t->memcg);
		if (atomic_compare_exchange_strong(&t->objcg, &v, (uintptr_t)new)) {
			if (old)
				obj_cgroup_put(old);
			v = (uintptr_t)new;
			break;
		}
		if (new)
			obj_cgroup_put(new);
	}
	pthread_mutex_unlock(&t->lock);
	return (struct obj_cgroup *)v;
}

/*
 * set_active_memcg() charging (mkdir charges the parent): the first objcg at
 * or above it.  The caller holds the memcg, so its objcg stays.
 */
struct obj_cgroup *active_memcg_objcg(void)
{
	for (struct mem_cgroup *m = active_memcg; m && m != root_memcg; m = m->parent) {
		struct obj_cgroup *objcg = atomic_load_explicit(&m->objcg, memory_order_acquire);

		if (objcg)
			return objcg;
	}
	return NULL;
}

#ifdef MEMCG_OBJCG_LOOKUP_MEMCG
/* The older lookup, for the benchmark's ablation: task -> memcg -> objcg. */
struct obj_cgroup *current_obj_cgroup(void)
{
	struct memcg_task *t = current_task;
	struct mem_cgroup *memcg;

	if (unlikely(active_memcg))
		return active_memcg_objcg();
	if (!t)
		return NULL;
	memcg = READ_ONCE(t->memcg);
	for (; memcg && memcg != root_memcg; memcg = memcg->parent) {
		struct obj_cgroup *objcg = atomic_load_explicit(&memcg->objcg, memory_order_acquire);

		if (objcg)
			return objcg;
	}
	return NULL;
}

/*
 * get_obj_cgroup_from_current - 6.1's, the "before" of seed 003: every
 * accounted allocation enters an RCU read-side section, finds the task's
 * memory css through its css_set, walks up to the first memcg with an
 * objcg and takes a reference on it (obj_cgroup_tryget: the percpu_ref),
 * which the caller drops once the charge is done.  A root task does all
 * but the reference to learn that there is no objcg.
 */
struct obj_cgroup *get_obj_cgroup_from_current(void)
{
	struct memcg_task *t = current_task;
	struct obj_cgroup *objcg = NULL;
	struct mem_cgroup *memcg;

	if (likely(!active_memcg) && !t)
		return NULL;		/* memcg_kmem_bypass(): nobody to charge */
	rcu_read_lock();
	if (unlikely(active_memcg))
		memcg = active_memcg;
	else
		memcg = mem_cgroup_from_task(t);
	for (; memcg != root_memcg; memcg = memcg->parent) {
		objcg = atomic_load_explicit(&memcg->objcg, memory_order_acquire);
		if (objcg && obj_cgroup_tryget(objcg))
			break;
		objcg = NULL;
	}
	rcu_read_unlock();
	return objcg;
}
#endif

/*
 * current_obj_cgroup_get - current's objcg, referenced, for the charge
 * paths past the fast one.  The pointer the fast path read is the task's
 * cached one, without a reference: several daemon threads serve one task,
 * and another may swap the cache and put that objcg meanwhile (the
 * kernel's current->objcg changes under the task alone).  Read again
 * inside a read-side section and tried: an objcg is freed a grace period
 * after its count reached zero, and the cache holds a reference until the
 * pointer is swapped out, so a failed try finds the new pointer next.
 */
struct obj_cgroup *current_obj_cgroup_get(void)
{
#ifndef MEMCG_OBJCG_LOOKUP_MEMCG
	struct obj_cgroup *objcg;

	rcu_read_lock();
	do
		objcg = current_obj_cgroup();
	while (objcg && !obj_cgroup_tryget(objcg));
	rcu_read_unlock();
	return objcg;
#else
	return get_obj_cgroup_from_current();
#endif
}

struct mem_cgroup *get_mem_cgroup_from_current(void)
{
	struct memcg_task *t = current_task;
	struct mem_cgroup *memcg;

	if (active_memcg || !t) {
		/* the setter holds active_memcg; the root is never freed */
		memcg = active_memcg ? active_memcg : root_memcg;
		css_get(memcg);
		return memcg;
	}
	return get_task_memcg(t);
}

void memcg_task_exit(struct memcg_task *t)
{
	struct obj_cgroup *objcg;

	if (t->stalled)
		memcg_task_stall_end(t);
	if (t->active)
		memcg_task_active(t, false);
	pthread_mutex_lock(&owned_lock);
	__atomic_store_n(&t->exited, true, __ATOMIC_RELEASE);	/* also read unlocked (oom.c) */
	pthread_mutex_unlock(&owned_lock);
	memcg_task_free_owned(t);
	objcg = (struct obj_cgroup *)(atomic_exchange(&t->objcg, 0) & ~CURRENT_OBJCG_UPDATE_FLAG);
	if (objcg)
		obj_cgroup_put(objcg);
	/*
	 * Uncounted and unlisted at once, after exited is set: an attach holds
	 * tree_lock and sees either the flag or the count still there.  Until
	 * here the OOM scan finds the task and skips it (exited).
	 */
	pthread_mutex_lock(&tree_lock);
	pthread_mutex_lock(&tasks_lock);
	if (t->tprev)
		t->tprev->tnext = t->tnext;
	else
		all_tasks = t->tnext;
	if (t->tnext)
		t->tnext->tprev = t->tprev;
	t->memcg->nr_tasks--;
	pthread_mutex_unlock(&tasks_lock);
	pthread_mutex_unlock(&tree_lock);
	memcg_task_put(t);
}

void memcg_task_get(struct memcg_task *t)
{
	atomic_fetch_add_explicit(&t->ref, 1, memory_order_relaxed);
}

void memcg_task_put(struct memcg_task *t)
{
	if (atomic_fetch_sub_explicit(&t->ref, 1, memory_order_acq_rel) != 1)
		return;
	css_put(t->memcg);
	free(t->owned);
	free(t->real);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->real_lock);
	free(t);
}
