/* SPDX-License-Identifier: MIT */
/*
 * memcontrol.c - the memcg tree, obj_cgroups, tasks, page charges and
 * alloc's accounting hooks (the kernel's mm/memcontrol.c, without kernfs).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct memcg_config memcg_cfg;
bool memcg_kmem_online_key;	/* alloc.h: skip the hooks until a memcg exists */
bool memcg_up;
struct mem_cgroup *root_memcg;
pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t objcg_lock = PTHREAD_MUTEX_INITIALIZER;
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

static struct kmem_cache *memcg_cachep;
static unsigned short next_id = 1;
static void (*notify_fn)(struct mem_cgroup *, const char *, void *);
static void (*free_notify_fn)(const void *addr);
static void *notify_arg;


void memcg_warn_once(const char *what)
{
	static _Atomic int warned;

	if (!atomic_exchange(&warned, 1))
		fprintf(stderr, "memcgfs: warning: %s (clamped)\n", what);
}

void memcg_config_defaults(struct memcg_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->charge_batch = MEMCG_CHARGE_BATCH;
	cfg->high_throttle = true;
	cfg->oom_kill_signal = 0;
}

struct mem_cgroup *root_mem_cgroup(void)
{
	return root_memcg;
}

bool mem_cgroup_is_root(const struct mem_cgroup *memcg)
{
	return memcg == root_memcg;
}

bool mem_cgroup_online(const struct mem_cgroup *memcg)
{
	return READ_ONCE(memcg->online);
}

struct mem_cgroup *parent_mem_cgroup(const struct mem_cgroup *memcg)
{
	return memcg->parent;
}

unsigned short mem_cgroup_id(const struct mem_cgroup *memcg)
{
	return memcg->id;
}

void mem_cgroup_set_owner(struct mem_cgroup *memcg, void *owner)
{
	memcg->owner = owner;
}

void *mem_cgroup_owner(const struct mem_cgroup *memcg)
{
	return memcg->owner;
}

void memcg_set_notify(void (*fn)(struct mem_cgroup *, const char *, void *), void *arg)
{
	notify_arg = arg;
	notify_fn = fn;
}

void memcg_set_free_notify(void (*fn)(const void *addr))
{
	free_notify_fn = fn;
}

void memcg_notify(struct mem_cgroup *memcg, const char *file)
{
	if (notify_fn)
		notify_fn(memcg, file, notify_arg);
}

/* ---- references ---- */
void css_get(struct mem_cgroup *memcg)
{
	atomic_fetch_add_explicit(&memcg->refcnt, 1, memory_order_relaxed);
}

bool css_tryget(struct mem_cgroup *memcg)
{
	long v = atomic_load(&memcg->refcnt);

	while (v > 0)
		if (atomic_compare_exchange_weak(&memcg->refcnt, &v, v + 1))
			return true;
	return false;
}

static void mem_cgroup_free_rcu(struct rcu_head *head);

void css_put(struct mem_cgroup *memcg)
{
	if (atomic_fetch_sub_explicit(&memcg->refcnt, 1, memory_order_acq_rel) != 1)
		return;
	/* the last reference: free it after a grace period */
	call_rcu(&memcg->rcu, mem_cgroup_free_rcu);
}

void mem_cgroup_get(struct mem_cgroup *memcg)
{
	css_get(memcg);
}

void mem_cgroup_put(struct mem_cgroup *memcg)
{
	css_put(memcg);
}

static void obj_cgroup_release_rcu(struct rcu_head *head);

/* The last reference went (the refcnt's release): freed after a grace period. */
static void obj_cgroup_ref_release(struct percpu_ref *ref)
{
	struct obj_cgroup *objcg = caa_container_of(ref, struct obj_cgroup, refcnt);

	call_rcu(&objcg->rcu, obj_cgroup_release_rcu);
}

/* The memcg an objcg charges now (its own, or an ancestor after reparenting). */
struct mem_cgroup *obj_cgroup_memcg(struct obj_cgroup *objcg)
{
	return atomic_load_explicit(&objcg->memcg, memory_order_acquire);
}

static void obj_cgroup_release(struct obj_cgroup *objcg)
{
	struct mem_cgroup *memcg;
	long bytes = atomic_exchange(&objcg->nr_charged_bytes, 0);

	/* leftover bytes of a released objcg are whole pages (the kernel warns otherwise) */
	pthread_mutex_lock(&objcg_lock);
	memcg = atomic_load(&objcg->memcg);
	for (struct obj_cgroup **pp = &memcg->objcg_list; *pp; pp = &(*pp)->next) {
		if (*pp == objcg) {
			*pp = objcg->next;
			break;
		}
	}
	pthread_mutex_unlock(&objcg_lock);
	if (bytes)
		memcg_warn_once("released objcg with charged bytes");
	css_put(memcg);
	kfree(objcg);
}

static void mem_cgroup_free(struct mem_cgroup *memcg);

static void obj_cgroup_release_rcu(struct rcu_head *head)
{
	rcu_callback_enter(head);
	obj_cgroup_release(caa_container_of(head, struct obj_cgroup, rcu));
	rcu_callback_leave();
}

static void mem_cgroup_free_rcu(struct rcu_head *head)
{
	rcu_callback_enter(head);
	mem_cgroup_free(caa_container_of(head, struct mem_cgroup, rcu));
	rcu_callback_leave();
}

void memcg_reap_now(void)
{
	/*
	 * Freeing a memcg frees its accounted statistics arrays: their bytes
	 * go back through the obj_stock, which then holds a reference on
	 * their objcg; drained, that objcg may be the next to free.
	 */
	do {
		memcg_stats_flush();	/* the changed-statistics list holds references */
		rcu_barrier();
		memcg_drain();
	} while (rcu_pending_frees());
}

/* ---- the tree ---- */
static struct obj_cgroup *obj_cgroup_alloc(void)
{
	/* the refcnt's per-CPU counters follow the objcg in one allocation */
	struct obj_cgroup *objcg = kzalloc(sizeof(*objcg) + percpu_ref_pcpu_size(), GFP_KERNEL);

	if (objcg)
		percpu_ref_init(&objcg->refcnt, (long *)(objcg + 1), obj_cgroup_ref_release);
	return objcg;
}

static bool memcg_in_subtree(const struct mem_cgroup *memcg, const struct mem_cgroup *root)
{
	for (; memcg; memcg = memcg->parent)
		if (memcg == root)
			return true;
	return false;
}

bool mem_cgroup_is_descendant(const struct mem_cgroup *memcg, const struct mem_cgroup *root)
{
	return memcg_in_subtree(memcg, root);
}

static struct mem_cgroup *mem_cgroup_alloc(struct mem_cgroup *parent)
{
	struct mem_cgroup *memcg = kmem_cache_alloc(memcg_cachep, GFP_KERNEL | __GFP_ZERO);

	if (!memcg)
		return NULL;
	pthread_mutex_init(&memcg->lock, NULL);
	pthread_mutex_init(&memcg->lru_lock, NULL);
	page_counter_init(&memcg->memory, parent ? &parent->memory : NULL);
	page_counter_init(&memcg->swap, parent ? &parent->swap : NULL);
	memcg->parent = parent;
	atomic_store(&memcg->refcnt, 1);
	memcg->cset.subsys[memory_cgrp_id] = memcg;
	memcg->swappiness = parent ? parent->swappiness : 60;
	memcg->zswap_writeback = 1;
	memcg->zswap_max = page_counter_max();
	memcg->lru = kzalloc(sizeof(*memcg->lru) * alloc_nr_nodes(), GFP_KERNEL);
	memcg->psi = psi_group_alloc();
	if (!memcg->lru || !memcg->psi || memcg_stats_alloc(memcg, parent)) {
		kfree(memcg->lru);
		psi_group_free(memcg->psi);
		kmem_cache_free(memcg_cachep, memcg);
		return NULL;
	}
	return memcg;
}

static void mem_cgroup_free(struct mem_cgroup *memcg)
{
	struct mem_cgroup *parent = memcg->parent;

	/* its statistics live on in its ancestors' hierarchical totals */
	memcg_stats_flush();
	/* so do its charges: they become the parent's own */
	if (parent)
		atomic_fetch_add(&parent->local_charge, (long)page_counter_read(&memcg->memory));
	if (parent) {
		pthread_mutex_lock(&tree_lock);
		for (struct mem_cgroup **pp = &parent->children; *pp; pp = &(*pp)->sibling) {
			if (*pp == memcg) {
				*pp = memcg->sibling;
				break;
			}
		}
		if (!memcg->online)
			for (struct mem_cgroup *a = parent; a; a = a->parent)
				a->nr_dying_descendants--;
		pthread_mutex_unlock(&tree_lock);
	}
	if (memcg->orig_objcg)
		obj_cgroup_put(memcg->orig_objcg);
	memcg_stats_free(memcg);
	kfree(memcg->lru);
	psi_group_free(memcg->psi);
	pthread_mutex_destroy(&memcg->lock);
	pthread_mutex_destroy(&memcg->lru_lock);
	kmem_cache_free(memcg_cachep, memcg);
	if (parent)
		css_put(parent);
}

int mem_cgroup_create(struct mem_cgroup *parent, struct mem_cgroup **out)
{
	struct mem_cgroup *memcg, *saved = active_memcg;
	struct obj_cgroup *objcg;

	if (!parent)
		return -EINVAL;
	pthread_mutex_lock(&tree_lock);
	if (!parent->online) {
		pthread_mutex_unlock(&tree_lock);
		return -ENODEV;
	}
	css_get(parent);
	pthread_mutex_unlock(&tree_lock);

	/* mem_cgroup_css_alloc() charges the parent: set_active_memcg(parent) */
	active_memcg = parent;
	memcg_current_changed();
	memcg = mem_cgroup_alloc(parent);
	active_memcg = saved;
	memcg_current_changed();
	if (!memcg) {
		css_put(parent);
		return -ENOMEM;
	}
	objcg = obj_cgroup_alloc();
	if (!objcg) {
		memcg->parent = parent;
		memcg_stats_free(memcg);
		kfree(memcg->lru);
		psi_group_free(memcg->psi);
		kmem_cache_free(memcg_cachep, memcg);
		css_put(parent);
		return -ENOMEM;
	}
	/* memcg_online_kmem(): the objcg, its extra ref as orig_objcg */
	atomic_store(&objcg->memcg, memcg);
	css_get(memcg);				/* the objcg's reference */
	obj_cgroup_get(objcg);
	memcg->orig_objcg = objcg;
	pthread_mutex_lock(&objcg_lock);
	objcg->next = memcg->objcg_list;
	memcg->objcg_list = objcg;
	pthread_mutex_unlock(&objcg_lock);
	atomic_store_explicit(&memcg->objcg, objcg, memory_order_release);

	pthread_mutex_lock(&tree_lock);
	memcg->id = next_id++;
	if (!next_id)
		next_id = 1;
	memcg->online = true;
	memcg->sibling = parent->children;
	parent->children = memcg;
	for (struct mem_cgroup *a = parent; a; a = a->parent)
		a->nr_descendants++;
	pthread_mutex_unlock(&tree_lock);
	WRITE_ONCE(memcg_kmem_online_key, true);	/* read unlocked on every path */
	*out = memcg;
	return 0;
}

/* memcg_reparent_objcgs(): every objcg of memcg now charges parent. */
static void memcg_reparent_objcgs(struct mem_cgroup *memcg, struct mem_cgroup *parent)
{
	struct obj_cgroup *objcg = atomic_exchange(&memcg->objcg, NULL), *o, *last = NULL;
	long moved = 0;

	pthread_mutex_lock(&objcg_lock);
	for (o = memcg->objcg_list; o; o = o->next) {
		atomic_store_explicit(&o->memcg, parent, memory_order_release);
		last = o;
		moved++;
	}
	if (last) {
		last->next = parent->objcg_list;
		parent->objcg_list = memcg->objcg_list;
		memcg->objcg_list = NULL;
	}
	pthread_mutex_unlock(&objcg_lock);
	/* each objcg's css reference moves with it */
	atomic_fetch_add(&parent->refcnt, moved);
	atomic_fetch_sub(&memcg->refcnt, moved);
	/* the initial reference; the count turns atomic */
	if (objcg)
		percpu_ref_kill(&objcg->refcnt);
}

int mem_cgroup_offline(struct mem_cgroup *memcg)
{
	struct mem_cgroup *parent = memcg->parent;

	if (!parent)
		return -EINVAL;
	pthread_mutex_lock(&tree_lock);
	if (!memcg->online) {
		pthread_mutex_unlock(&tree_lock);
		return 0;
	}
	if (memcg->nr_tasks) {
		pthread_mutex_unlock(&tree_lock);
		return -EBUSY;
	}
	for (struct mem_cgroup *c = memcg->children; c; c = c->sibling) {
		if (c->online) {
			pthread_mutex_unlock(&tree_lock);
			return -EBUSY;
		}
	}
	memcg->online = false;
	for (struct mem_cgroup *a = parent; a; a = a->parent) {
		a->nr_descendants--;
		a->nr_dying_descendants++;
	}
	pthread_mutex_unlock(&tree_lock);

	/* mem_cgroup_css_offline(): protection off, objcgs to the parent, stocks drained */
	page_counter_set_min(&memcg->memory, 0);
	page_counter_set_low(&memcg->memory, 0);
	memcg_reparent_objcgs(memcg, parent);
	drain_all_stock(memcg);
	return 0;
}

int mem_cgroup_offline_check(struct mem_cgroup *memcg)
{
	int err = 0;

	if (!memcg->parent)
		return -EINVAL;
	pthread_mutex_lock(&tree_lock);
	if (memcg->online && memcg->nr_tasks)
		err = -EBUSY;
	for (struct mem_cgroup *c = memcg->children; c && memcg->online && !err; c = c->sibling)
		if (c->online)
			err = -EBUSY;
	pthread_mutex_unlock(&tree_lock);
	return err;
}

void mem_cgroup_descendants(const struct mem_cgroup *memcg,
			    unsigned long *nr_descendants, unsigned long *nr_dying)
{
	/* the changed-statistics list holds references until a flush */
	memcg_stats_flush();
	pthread_mutex_lock(&tree_lock);
	*nr_descendants = memcg->nr_descendants;
	*nr_dying = memcg->nr_dying_descendants;
	pthread_mutex_unlock(&tree_lock);
}

unsigned long mem_cgroup_usage_pages(const struct mem_cgroup *memcg)
{
	return page_counter_read(&memcg->memory);
}

/* ---- tasks and current ---- */
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

/* ---- typed pages ---- */
static bool page_type_direct(enum memcg_page_type type)
{
	return type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_FILE ||
	       type == MEMCG_PAGE_SHMEM || type == MEMCG_PAGE_SOCK;
}

static bool page_type_task_owned(enum memcg_page_type type)
{
	return type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_KERNEL_STACK ||
	       type == MEMCG_PAGE_PAGETABLES;
}

/* Every task's owned array, and who claims a page first. */
static pthread_mutex_t owned_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t page_ids;

static void page_stats(struct mem_cgroup *memcg, struct page *page,
		       enum memcg_page_type type, long n)
{
	int nid = page_to_nid(page);
	long bytes = n * (long)alloc_page_size();

	switch (type) {
	case MEMCG_PAGE_ANON:
		mod_memcg_state(memcg, nid, MI_ANON, n);
		break;
	case MEMCG_PAGE_FILE:
		mod_memcg_state(memcg, nid, MI_FILE, n);
		break;
	case MEMCG_PAGE_SHMEM:
		mod_memcg_state(memcg, nid, MI_FILE, n);
		mod_memcg_state(memcg, nid, MI_SHMEM, n);
		break;
	case MEMCG_PAGE_KERNEL_STACK:
		mod_memcg_state(memcg, nid, MI_KERNEL_STACK_B, bytes);
		break;
	case MEMCG_PAGE_PAGETABLES:
		mod_memcg_state(memcg, nid, MI_PAGETABLES, n);
		break;
	case MEMCG_PAGE_PERCPU:
		mod_memcg_state(memcg, nid, MI_PERCPU_B, bytes);
		break;
	case MEMCG_PAGE_SOCK:
		mod_memcg_state(memcg, nid, MI_SOCK, n);
		break;
	case MEMCG_PAGE_VMALLOC:
		mod_memcg_state(memcg, nid, MI_VMALLOC, n);
		break;
	default:
		break;
	}
}

/* owned_lock held */
static int task_own_page(struct memcg_task *t, struct page *page)
{
	if (t->nr_owned == t->owned_cap) {
		size_t cap = t->owned_cap ? t->owned_cap * 2 : 16;
		struct page **v = realloc(t->owned, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->owned = v;
		t->owned_cap = cap;
	}
	page->private = t->nr_owned;
	page->task = t;
	t->owned[t->nr_owned++] = page;
	WRITE_ONCE(t->owned_pages, t->owned_pages + (1ul << page->order));	/* oom.c reads it unlocked */
	page->flags |= PAGE_FLAG_OWNED;
	return 0;
}

/* owned_lock held */
static void task_disown_page(struct page *page)
{
	struct memcg_task *t = page->task;
	size_t i = (size_t)page->private;

	if (!t || i >= t->nr_owned || t->owned[i] != page)
		return;
	t->owned[i] = t->owned[--t->nr_owned];
	t->owned[i]->private = i;
	WRITE_ONCE(t->owned_pages, t->owned_pages - (1ul << page->order));
	page->flags &= (uint8_t)~PAGE_FLAG_OWNED;
	page->task = NULL;
}

uint64_t memcg_page_id(const struct page *page)
{
	return page->id;
}

struct page *memcg_alloc_pages(enum memcg_page_type type, gfp_t gfp,
			       unsigned int order, int *err)
{
	struct memcg_task *t = current_task;
	unsigned int n = 1u << order;
	struct page *page;
	int ret = 0;

	if ((unsigned int)type >= NR_MEMCG_PAGE_TYPES || order > MAX_PAGE_ORDER) {
		ret = -EINVAL;
		goto out;
	}
	page = alloc_pages(gfp & ~__GFP_ACCOUNT, order);
	if (!page) {
		ret = -ENOMEM;
		goto out;
	}
	page->type = (uint8_t)type;
	page->owner = t ? (uint32_t)t->pid : 0;
	page->id = atomic_fetch_add(&page_ids, 1) + 1;
	set_page_lru(page, PAGE_LRU_NONE);
	if (page_type_direct(type)) {
		struct mem_cgroup *memcg = get_mem_cgroup_from_current();

		ret = try_charge_memcg(memcg, gfp, n);
		if (ret) {
			css_put(memcg);
			__free_pages(page, order);
			goto out;
		}
		/* the page keeps the css reference */
		page->memcg_data = (uintptr_t)memcg;
		page->flags |= PAGE_FLAG_CHARGED;
		page_stats(memcg, page, type, (long)n);
		if (type == MEMCG_PAGE_FILE)
			page->flags |= PAGE_FLAG_REFERENCED;
		if (type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_SHMEM)
			memcg_lru_add(memcg, page, LRU_INACTIVE_ANON);
		else if (type == MEMCG_PAGE_FILE)
			memcg_lru_add(memcg, page, LRU_INACTIVE_FILE);
	} else {
		struct obj_cgroup *objcg = current_obj_cgroup();

		if (objcg) {
			ret = obj_cgroup_charge_pages(objcg, gfp, n);
			if (ret) {
				__free_pages(page, order);
				goto out;
			}
			page->memcg_data = (uintptr_t)objcg | MEMCG_DATA_KMEM;
			page->flags |= PAGE_FLAG_CHARGED;
			rcu_read_lock();
			page_stats(obj_cgroup_memcg(objcg), page, type, (long)n);
			rcu_read_unlock();
		}
	}
	if (t && page_type_task_owned(type)) {
		pthread_mutex_lock(&owned_lock);
		ret = t->exited ? -ESRCH : task_own_page(t, page);
		pthread_mutex_unlock(&owned_lock);
		if (ret) {
			memcg_free_pages(page, page->id);
			ret = -ENOMEM;
			goto out;
		}
	}
	if (err)
		*err = 0;
	return page;
out:
	if (err)
		*err = ret;
	return NULL;
}

/* Uncharge and free a page its claimer took (off every list already). */
static void memcg_free_page(struct page *page)
{
	unsigned int n = 1u << page->order;
	enum memcg_page_type type = (enum memcg_page_type)page->type;

	if (page->flags & PAGE_FLAG_CHARGED) {
		if (page->memcg_data & MEMCG_DATA_KMEM) {
			struct obj_cgroup *objcg = (struct obj_cgroup *)(page->memcg_data & ~MEMCG_DATA_KMEM);

			rcu_read_lock();
			page_stats(obj_cgroup_memcg(objcg), page, type, -(long)n);
			rcu_read_unlock();
			obj_cgroup_uncharge_pages(objcg, n);
		} else {
			struct mem_cgroup *memcg = (struct mem_cgroup *)page->memcg_data;

			page_stats(memcg, page, type, -(long)n);
			/* a page goes straight back to the counter, as the kernel's uncharge_folio */
			memcg_uncharge_direct(memcg, n);
			css_put(memcg);
		}
	}
	page->memcg_data = 0;
	page->flags = 0;
	page->id = 0;
	__free_pages(page, page->order);
}

/*
 * Claim a page for freeing: off its owner's array and its LRU.  False if
 * someone else (reclaim, exit, OOM) has it or it is another allocation.
 */
static bool page_claim(struct page *page, uint64_t id)
{
	bool ok;

	pthread_mutex_lock(&owned_lock);
	ok = page->kind == PAGE_KIND_PAGES && page->id == id && id &&
	     !(page->flags & PAGE_FLAG_GONE);
	if (ok && page_lru(page) != PAGE_LRU_NONE) {
		struct mem_cgroup *memcg = (struct mem_cgroup *)page->memcg_data;

		ok = memcg_lru_del_unless_isolated(memcg, page);
	}
	if (ok) {
		if (page->flags & PAGE_FLAG_OWNED)
			task_disown_page(page);
		page->flags |= PAGE_FLAG_GONE;
	}
	pthread_mutex_unlock(&owned_lock);
	return ok;
}

int memcg_free_pages(struct page *page, uint64_t id)
{
	if (!page_claim(page, id))
		return -ENOENT;
	memcg_free_page(page);
	return 0;
}

/* A page reclaim took (file pages): its handle goes stale. */
void memcg_free_page_reclaimed(struct page *page)
{
	if (free_notify_fn)
		free_notify_fn(page_address(page));
	memcg_free_page(page);
}

/*
 * Free every page a task owns (its exit, its OOM kill): taken off the task
 * under owned_lock a batch at a time, freed outside it (their handles go
 * stale first).  No allocation here: a task that leaves must lose its pages
 * even when memory is short, or they would point to a freed task.  Its
 * real memory is uncharged with them.
 */
void memcg_task_free_owned(struct memcg_task *t)
{
	memcg_real_task_release(t);
	struct page *batch[64];
	size_t n;

	do {
		pthread_mutex_lock(&owned_lock);
		for (n = 0; n < sizeof(batch) / sizeof(batch[0]) && t->nr_owned; n++) {
			struct page *page = t->owned[t->nr_owned - 1];

			if (page_lru(page) != PAGE_LRU_NONE)
				memcg_lru_del((struct mem_cgroup *)page->memcg_data, page);
			task_disown_page(page);
			page->flags |= PAGE_FLAG_GONE;
			batch[n] = page;
		}
		pthread_mutex_unlock(&owned_lock);
		for (size_t i = 0; i < n; i++) {
			if (free_notify_fn)
				free_notify_fn(page_address(batch[i]));
			memcg_free_page(batch[i]);
		}
	} while (n);
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

/* ---- LRU ---- */
static const enum memcg_item lru_items[NR_LRU_LISTS] = {
	MI_INACTIVE_ANON, MI_ACTIVE_ANON, MI_INACTIVE_FILE, MI_ACTIVE_FILE, MI_UNEVICTABLE,
};

void __lru_add(struct memcg_lru *l, struct page *page, unsigned int lru)
{
	page->lru_prev = NULL;
	page->lru_next = l->head[lru];
	if (page->lru_next)
		page->lru_next->lru_prev = page;
	else
		l->tail[lru] = page;
	l->head[lru] = page;
	WRITE_ONCE(l->nr[lru], l->nr[lru] + (1ul << page->order));
	set_page_lru(page, lru);
}

void __lru_unlink(struct memcg_lru *l, struct page *page, unsigned int lru)
{
	if (page->lru_prev)
		page->lru_prev->lru_next = page->lru_next;
	else
		l->head[lru] = page->lru_next;
	if (page->lru_next)
		page->lru_next->lru_prev = page->lru_prev;
	else
		l->tail[lru] = page->lru_prev;
	page->lru_next = page->lru_prev = NULL;
	WRITE_ONCE(l->nr[lru], l->nr[lru] - (1ul << page->order));
	set_page_lru(page, PAGE_LRU_NONE);
}

void memcg_lru_add(struct mem_cgroup *memcg, struct page *page, enum lru_list lru)
{
	int nid = page_to_nid(page);
	long n = 1l << page->order;

	pthread_mutex_lock(&memcg->lru_lock);
	__lru_add(&memcg->lru[nid], page, lru);
	pthread_mutex_unlock(&memcg->lru_lock);
	mod_memcg_state(memcg, nid, lru_items[lru], n);
}

/* Off the LRU, unless reclaim took it first (then false). */
bool memcg_lru_del_unless_isolated(struct mem_cgroup *memcg, struct page *page)
{
	int nid = page_to_nid(page);
	unsigned int lru;

	pthread_mutex_lock(&memcg->lru_lock);
	lru = page_lru(page);
	if ((page->flags & PAGE_FLAG_ISOLATED) || lru >= NR_LRU_LISTS) {
		pthread_mutex_unlock(&memcg->lru_lock);
		return false;
	}
	__lru_unlink(&memcg->lru[nid], page, lru);
	pthread_mutex_unlock(&memcg->lru_lock);
	mod_memcg_state(memcg, nid, lru_items[lru], -(1l << page->order));
	return true;
}

void memcg_lru_del(struct mem_cgroup *memcg, struct page *page)
{
	(void)memcg_lru_del_unless_isolated(memcg, page);
}

/*
 * The kernel's folio_mark_accessed(): the first reference sets the
 * referenced flag (a file page has it from its charge: it was just read),
 * the second moves an inactive page to the head of its active list
 * (pgactivate) and clears it; a page off the LRU (isolated by reclaim, or
 * of a type that is on none) keeps only the flag.
 */
int memcg_mark_page_accessed(struct page *page, uint64_t id)
{
	struct mem_cgroup *memcg = NULL;
	unsigned int lru = PAGE_LRU_NONE;
	int nid = page_to_nid(page);
	long n = 1l << page->order;

	pthread_mutex_lock(&owned_lock);
	if (page->kind != PAGE_KIND_PAGES || page->id != id || !id ||
	    (page->flags & PAGE_FLAG_GONE)) {
		pthread_mutex_unlock(&owned_lock);
		return -ENOENT;
	}
	if (page_lru(page) != PAGE_LRU_NONE) {
		memcg = (struct mem_cgroup *)page->memcg_data;
		pthread_mutex_lock(&memcg->lru_lock);
		lru = page_lru(page);
	}
	if (!(page->flags & PAGE_FLAG_REFERENCED)) {
		page->flags |= PAGE_FLAG_REFERENCED;
		lru = PAGE_LRU_NONE;
	} else if ((lru == LRU_INACTIVE_FILE || lru == LRU_INACTIVE_ANON) &&
		   !(page->flags & PAGE_FLAG_ISOLATED)) {
		__lru_unlink(&memcg->lru[nid], page, lru);
		__lru_add(&memcg->lru[nid], page, lru + 1);
		page->flags &= (uint8_t)~PAGE_FLAG_REFERENCED;
	} else {
		lru = PAGE_LRU_NONE;
	}
	if (memcg)
		pthread_mutex_unlock(&memcg->lru_lock);
	pthread_mutex_unlock(&owned_lock);
	if (lru != PAGE_LRU_NONE) {
		mod_memcg_state(memcg, nid, lru_items[lru], -n);
		mod_memcg_state(memcg, nid, lru_items[lru + 1], n);
		mod_memcg_state(memcg, nid, MI_PGACTIVATE, n);
	}
	return 0;
}

static void psi_free_tree(struct mem_cgroup *memcg)
{
	for (struct mem_cgroup *c = memcg->children; c; c = c->sibling)
		psi_free_tree(c);
	psi_group_free(memcg->psi);
	memcg->psi = NULL;
}

/* ---- init ---- */
int memcg_init(const struct memcg_config *cfg)
{
	struct memcg_config def;
	int err;

	if (memcg_up)
		return -EBUSY;
	if (!cfg) {
		memcg_config_defaults(&def);
		cfg = &def;
	}
	if (!cfg->charge_batch || cfg->charge_batch > 127)
		return -EINVAL;
	memcg_cfg = *cfg;
	/* seed 000: the memcg from its own cache, not a kmalloc bucket */
	memcg_cachep = kmem_cache_create_err("mem_cgroup", sizeof(struct mem_cgroup), 0,
					     SLAB_HWCACHE_ALIGN | SLAB_PANIC, &err);
	if (!memcg_cachep)
		return err;
	err = memcg_stocks_init();
	if (err)
		goto out_cache;
	root_memcg = mem_cgroup_alloc(NULL);
	if (!root_memcg) {
		err = -ENOMEM;
		goto out_stocks;
	}
	root_memcg->online = true;
	root_memcg->id = 0;
	next_id = 1;
	WRITE_ONCE(memcg_kmem_online_key, false);
	memcg_oom_init();
	memcg_real_init();
	memcg_up = true;
	alloc_set_oom_handler(memcg_global_oom);
	return 0;

out_stocks:
	memcg_stocks_exit();
out_cache:
	kmem_cache_destroy(memcg_cachep);
	memcg_cachep = NULL;
	return err;
}

void memcg_exit(void)
{
	if (!memcg_up)
		return;
	alloc_set_oom_handler(NULL);
	memcg_drain();
	memcg_stats_exit();
	memcg_reap_now();
	/* tasks left behind are forgotten with the machine */
	pthread_mutex_lock(&tasks_lock);
	all_tasks = NULL;
	pthread_mutex_unlock(&tasks_lock);
	memcg_stocks_exit();
	/*
	 * The stocks' last objcg references queue frees (call_rcu) that
	 * uncharge into the root's statistics: run them before the root goes
	 * (the RCU thread ran one after it once: a SEGV under TSan at exit)
	 */
	do
		rcu_barrier();
	while (rcu_pending_frees());
	WRITE_ONCE(memcg_kmem_online_key, false);
	memcg_up = false;
	/* memcgs still referenced (charges left behind) go with the arena; their PSI groups are malloc'ed */
	psi_free_tree(root_memcg);
	memcg_stats_free(root_memcg);
	kfree(root_memcg->lru);
	kmem_cache_free(memcg_cachep, root_memcg);
	root_memcg = NULL;
	/* busy only if memcgs leaked: then the cache goes with alloc_exit() */
	(void)kmem_cache_destroy(memcg_cachep);
	memcg_cachep = NULL;
}
