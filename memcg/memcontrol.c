/* SPDX-License-Identifier: MIT */
/*
 * memcontrol.c - the memcg tree and its references, obj_cgroups and
 * reparenting, setup and teardown (the kernel's mm/memcontrol.c, without
 * kernfs).  Tasks and current are task.c, typed pages pages.c, the LRU
 * lru.c.
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

static struct kmem_cache *memcg_cachep;
static unsigned short next_id = 1;
static void (*notify_fn)(struct mem_cgroup *, const char *, void *);
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

void memcg_wait_frees(void)
{
	rcu_barrier();
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

void (*memcg_reparent_test_hook)(struct mem_cgroup *memcg, struct mem_cgroup *parent);

/*
 * memcg_reparent_objcgs(): every objcg of memcg now charges parent.  Each
 * objcg's css reference moves with it, and the parent's is taken before
 * the objcg names the parent (the kernel's css_get() in the loop): from
 * the store on, the objcg's release may put the parent.  Taken after the
 * lock, two releases in between brought the root's count to zero at
 * unmount, and the RCU thread freed the root under the live tree.
 */
static void memcg_reparent_objcgs(struct mem_cgroup *memcg, struct mem_cgroup *parent)
{
	struct obj_cgroup *objcg = atomic_exchange(&memcg->objcg, NULL), *o, *last = NULL;
	long moved = 0;

	pthread_mutex_lock(&objcg_lock);
	for (o = memcg->objcg_list; o; o = o->next) {
		css_get(parent);
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
	if (unlikely(memcg_reparent_test_hook))
		memcg_reparent_test_hook(memcg, parent);
	/* never the last: the caller holds memcg's initial reference */
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
	psi_poll_exit();
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
