/* SPDX-License-Identifier: MIT */
/*
 * stat.c - memcg statistics: per-CPU counters folded on every read (exact,
 * where the kernel flushes past a threshold and every 2 s), hierarchical
 * totals, memory.stat and memory.numa_stat in the kernel's key order, and
 * memory.events.
 *
 * An update adds to this CPU's counter and, the first time since the last
 * flush, puts the memcg on the list of changed memcgs (rstat's updated
 * tree, flattened): a flush folds only those, and adds each delta to the
 * memcg's own total and to every ancestor's hierarchical one.  A memcg
 * whose count is already zero (its free queued) is not put on the list;
 * its free folds it.
 */
#include "internal.h"
#include "lib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_cgroup *_Atomic dirty_list;

static size_t items_per_cpu(void)
{
	return (size_t)alloc_nr_nodes() * NR_MEMCG_ITEMS;
}

/*
 * memcg_stats_alloc - per-CPU counters (charged to the parent as percpu, as
 * the kernel's alloc_percpu_gfp(GFP_KERNEL_ACCOUNT) under the parent's
 * active memcg) and the totals (kzalloc'ed accounted: slab of the parent).
 */
/* The per-CPU and folded arrays of @memcg, freed and cleared. */
static void stats_arrays_free(struct mem_cgroup *memcg)
{
	kfree(memcg->pcpu);
	kfree(memcg->pcpu_prev);
	kfree(memcg->state);
	kfree(memcg->local);
	memcg->pcpu = NULL;
	memcg->pcpu_prev = memcg->state = memcg->local = NULL;
}

int memcg_stats_alloc(struct mem_cgroup *memcg, struct mem_cgroup *parent)
{
	size_t n = items_per_cpu();

	(void)parent;
	memcg->pcpu_bytes = 2 * n * alloc_nr_cpus() * sizeof(long);
	memcg->pcpu = kzalloc(memcg->pcpu_bytes / 2, GFP_KERNEL);
	memcg->pcpu_prev = kzalloc(memcg->pcpu_bytes / 2, GFP_KERNEL);
	memcg->state = kzalloc(n * sizeof(long), GFP_KERNEL_ACCOUNT);
	memcg->local = kzalloc(n * sizeof(long), GFP_KERNEL_ACCOUNT);
	if (!memcg->pcpu || !memcg->pcpu_prev || !memcg->state || !memcg->local)
		goto fail;
	memcg->percpu_objcg = current_obj_cgroup();
	if (memcg->percpu_objcg) {
		if (obj_cgroup_charge(memcg->percpu_objcg, GFP_KERNEL, memcg->pcpu_bytes))
			goto fail;
		obj_cgroup_get(memcg->percpu_objcg);
		rcu_read_lock();
		mod_memcg_state(obj_cgroup_memcg(memcg->percpu_objcg), 0, MI_PERCPU_B,
				(long)memcg->pcpu_bytes);
		rcu_read_unlock();
	}
	return 0;
fail:
	memcg->percpu_objcg = NULL;
	stats_arrays_free(memcg);
	return -ENOMEM;
}

static void fold(struct mem_cgroup *memcg);

void memcg_stats_free(struct mem_cgroup *memcg)
{
	struct obj_cgroup *objcg = memcg->percpu_objcg;

	/*
	 * What no flush took: changes made once the count was at zero
	 * (mod_memcg_state() leaves such a memcg off the list).  Freed a
	 * grace period after that, no change is still being made.
	 */
	if (memcg->pcpu) {
		pthread_mutex_lock(&stats_lock);
		fold(memcg);
		pthread_mutex_unlock(&stats_lock);
	}

	if (objcg) {
		rcu_read_lock();
		mod_memcg_state(obj_cgroup_memcg(objcg), 0, MI_PERCPU_B, -(long)memcg->pcpu_bytes);
		rcu_read_unlock();
		obj_cgroup_uncharge(objcg, memcg->pcpu_bytes);
		obj_cgroup_put(objcg);
		memcg->percpu_objcg = NULL;
	}
	stats_arrays_free(memcg);
}

void mod_memcg_state(struct mem_cgroup *memcg, int nid, enum memcg_item item, long val)
{
	size_t slot = (size_t)alloc_slot_cpu() * items_per_cpu() +
		      (size_t)nid * NR_MEMCG_ITEMS + item;

	if (!val)
		return;
	atomic_fetch_add_explicit(&memcg->pcpu[slot], val, memory_order_relaxed);
	if (!atomic_load_explicit(&memcg->stats_dirty, memory_order_relaxed) &&
	    !atomic_exchange(&memcg->stats_dirty, 1)) {
		/*
		 * On the changed list until the next flush, held by a
		 * reference.  A caller inside a read-side section may hold
		 * none (a memcg read from an objcg): a memcg already at zero
		 * stays off the list, and its free folds what it has.
		 */
		struct mem_cgroup *head = atomic_load(&dirty_list);

		if (!css_tryget(memcg))
			return;
		do {
			memcg->dirty_next = head;
		} while (!atomic_compare_exchange_weak(&dirty_list, &head, memcg));
	}
}

static void fold(struct mem_cgroup *memcg)
{
	size_t per_cpu = items_per_cpu();

	for (unsigned int cpu = 0; cpu < alloc_nr_cpus(); cpu++) {
		_Atomic long *pc = &memcg->pcpu[cpu * per_cpu];
		long *prev = &memcg->pcpu_prev[cpu * per_cpu];

		for (size_t i = 0; i < per_cpu; i++) {
			long v = atomic_load_explicit(&pc[i], memory_order_relaxed);
			long delta = v - prev[i];

			if (!delta)
				continue;
			prev[i] = v;
			memcg->local[i] += delta;
			for (struct mem_cgroup *a = memcg; a; a = a->parent)
				a->state[i] += delta;
		}
	}
}

/* memcg_stats_flush - fold every changed memcg (and the stocks' buffers first). */
void memcg_stats_flush(void)
{
	struct mem_cgroup *list, *next;

	if (!memcg_up)
		return;
	memcg_flush_stock_stats();
	pthread_mutex_lock(&stats_lock);
	list = atomic_exchange(&dirty_list, NULL);
	for (; list; list = next) {
		next = list->dirty_next;
		atomic_store(&list->stats_dirty, 0);
		fold(list);
		/* the reference the list held; it may be the last one */
		css_put(list);
	}
	pthread_mutex_unlock(&stats_lock);
}

/*
 * Readers of state[] hold stats_lock: a flush folds into it (the memcg's
 * and every ancestor's) under that lock.
 */
void memcg_stats_lock(void)
{
	pthread_mutex_lock(&stats_lock);
}

void memcg_stats_unlock(void)
{
	pthread_mutex_unlock(&stats_lock);
}

/* memcg_exit(): nothing may stay on the changed list of a machine that goes */
void memcg_stats_exit(void)
{
	memcg_stats_flush();
	atomic_store(&dirty_list, NULL);
}

long memcg_state(const struct mem_cgroup *memcg, int nid, enum memcg_item item)
{
	return memcg->state[(size_t)nid * NR_MEMCG_ITEMS + item];
}

long memcg_state_all_nodes(const struct mem_cgroup *memcg, enum memcg_item item)
{
	unsigned int nodes = alloc_nr_nodes();
	long v = 0;

	for (unsigned int nid = 0; nid < nodes; nid++)
		v += memcg_state(memcg, (int)nid, item);
	return v;
}

/* ---- memory.stat ---- */
enum stat_unit { U_PAGES, U_BYTES, U_COUNT };

struct memory_stat {
	const char *name;
	unsigned int len;		/* strlen(name) */
	enum memcg_item item;
	enum stat_unit unit;
	enum memcg_item sum_last;	/* sum item..sum_last; == item for one */
	bool numa;			/* also in memory.numa_stat */
};

#define ST(n, i, u, numa)	{ n, sizeof(n) - 1, i, u, i, numa }
#define SUM(n, a, b, u)		{ n, sizeof(n) - 1, a, u, b, false }

/* memory_stats[] of mm/memcontrol.c (6.18), hugetlb left out (no accounting) */
static const struct memory_stat memory_stats[] = {
	ST("anon", MI_ANON, U_PAGES, true),
	ST("file", MI_FILE, U_PAGES, true),
	ST("kernel", MI_KMEM, U_PAGES, false),
	ST("kernel_stack", MI_KERNEL_STACK_B, U_BYTES, true),
	ST("pagetables", MI_PAGETABLES, U_PAGES, true),
	ST("sec_pagetables", MI_SEC_PAGETABLES, U_PAGES, true),
	ST("percpu", MI_PERCPU_B, U_BYTES, false),
	ST("sock", MI_SOCK, U_PAGES, false),
	ST("vmalloc", MI_VMALLOC, U_PAGES, false),
	ST("shmem", MI_SHMEM, U_PAGES, true),
	ST("zswap", MI_ZSWAP_B, U_BYTES, false),
	ST("zswapped", MI_ZSWAPPED, U_PAGES, false),
	ST("file_mapped", MI_FILE_MAPPED, U_PAGES, true),
	ST("file_dirty", MI_FILE_DIRTY, U_PAGES, true),
	ST("file_writeback", MI_FILE_WRITEBACK, U_PAGES, true),
	ST("swapcached", MI_SWAPCACHED, U_PAGES, true),
	ST("anon_thp", MI_ANON_THP, U_PAGES, true),
	ST("file_thp", MI_FILE_THP, U_PAGES, true),
	ST("shmem_thp", MI_SHMEM_THP, U_PAGES, true),
	ST("inactive_anon", MI_INACTIVE_ANON, U_PAGES, true),
	ST("active_anon", MI_ACTIVE_ANON, U_PAGES, true),
	ST("inactive_file", MI_INACTIVE_FILE, U_PAGES, true),
	ST("active_file", MI_ACTIVE_FILE, U_PAGES, true),
	ST("unevictable", MI_UNEVICTABLE, U_PAGES, true),
	ST("slab_reclaimable", MI_SLAB_RECLAIMABLE_B, U_BYTES, true),
	ST("slab_unreclaimable", MI_SLAB_UNRECLAIMABLE_B, U_BYTES, true),
	SUM("slab", MI_SLAB_RECLAIMABLE_B, MI_SLAB_UNRECLAIMABLE_B, U_BYTES),
	ST("workingset_refault_anon", MI_WORKINGSET_REFAULT_ANON, U_COUNT, true),
	ST("workingset_refault_file", MI_WORKINGSET_REFAULT_FILE, U_COUNT, true),
	ST("workingset_activate_anon", MI_WORKINGSET_ACTIVATE_ANON, U_COUNT, true),
	ST("workingset_activate_file", MI_WORKINGSET_ACTIVATE_FILE, U_COUNT, true),
	ST("workingset_restore_anon", MI_WORKINGSET_RESTORE_ANON, U_COUNT, true),
	ST("workingset_restore_file", MI_WORKINGSET_RESTORE_FILE, U_COUNT, true),
	ST("workingset_nodereclaim", MI_WORKINGSET_NODERECLAIM, U_COUNT, true),
	ST("pgdemote_kswapd", MI_PGDEMOTE_KSWAPD, U_COUNT, true),
	ST("pgdemote_direct", MI_PGDEMOTE_DIRECT, U_COUNT, true),
	ST("pgdemote_khugepaged", MI_PGDEMOTE_KHUGEPAGED, U_COUNT, true),
	ST("pgdemote_proactive", MI_PGDEMOTE_PROACTIVE, U_COUNT, true),
	ST("pgpromote_success", MI_PGPROMOTE_SUCCESS, U_COUNT, true),
	SUM("pgscan", MI_PGSCAN_KSWAPD, MI_PGSCAN_PROACTIVE, U_COUNT),
	SUM("pgsteal", MI_PGSTEAL_KSWAPD, MI_PGSTEAL_PROACTIVE, U_COUNT),
	ST("pswpin", MI_PSWPIN, U_COUNT, false),
	ST("pswpout", MI_PSWPOUT, U_COUNT, false),
	ST("pgscan_kswapd", MI_PGSCAN_KSWAPD, U_COUNT, false),
	ST("pgscan_direct", MI_PGSCAN_DIRECT, U_COUNT, false),
	ST("pgscan_khugepaged", MI_PGSCAN_KHUGEPAGED, U_COUNT, false),
	ST("pgscan_proactive", MI_PGSCAN_PROACTIVE, U_COUNT, false),
	ST("pgsteal_kswapd", MI_PGSTEAL_KSWAPD, U_COUNT, false),
	ST("pgsteal_direct", MI_PGSTEAL_DIRECT, U_COUNT, false),
	ST("pgsteal_khugepaged", MI_PGSTEAL_KHUGEPAGED, U_COUNT, false),
	ST("pgsteal_proactive", MI_PGSTEAL_PROACTIVE, U_COUNT, false),
	ST("pgfault", MI_PGFAULT, U_COUNT, false),
	ST("pgmajfault", MI_PGMAJFAULT, U_COUNT, false),
	ST("pgrefill", MI_PGREFILL, U_COUNT, false),
	ST("pgactivate", MI_PGACTIVATE, U_COUNT, false),
	ST("pgdeactivate", MI_PGDEACTIVATE, U_COUNT, false),
	ST("pglazyfree", MI_PGLAZYFREE, U_COUNT, false),
	ST("pglazyfreed", MI_PGLAZYFREED, U_COUNT, false),
	ST("swpin_zero", MI_SWPIN_ZERO, U_COUNT, false),
	ST("swpout_zero", MI_SWPOUT_ZERO, U_COUNT, false),
	ST("zswpin", MI_ZSWPIN, U_COUNT, false),
	ST("zswpout", MI_ZSWPOUT, U_COUNT, false),
	ST("zswpwb", MI_ZSWPWB, U_COUNT, false),
	ST("thp_fault_alloc", MI_THP_FAULT_ALLOC, U_COUNT, false),
	ST("thp_collapse_alloc", MI_THP_COLLAPSE_ALLOC, U_COUNT, false),
	ST("thp_swpout", MI_THP_SWPOUT, U_COUNT, false),
	ST("thp_swpout_fallback", MI_THP_SWPOUT_FALLBACK, U_COUNT, false),
	ST("numa_pages_migrated", MI_NUMA_PAGES_MIGRATED, U_COUNT, false),
	ST("numa_pte_updates", MI_NUMA_PTE_UPDATES, U_COUNT, false),
	ST("numa_hint_faults", MI_NUMA_HINT_FAULTS, U_COUNT, false),
};

unsigned int memcg_stat_nr_keys(void)
{
	return ARRAY_SIZE(memory_stats);
}

const char *memcg_stat_key(unsigned int i)
{
	return i < ARRAY_SIZE(memory_stats) ? memory_stats[i].name : NULL;
}

/* A statistic's value, nid < 0 for all nodes; negative aggregates read 0. */
static unsigned long long stat_value(const struct mem_cgroup *memcg,
				     const struct memory_stat *st, int nid)
{
	long v = 0;

	for (int i = st->item; i <= (int)st->sum_last; i++)
		v += nid < 0 ? memcg_state_all_nodes(memcg, (enum memcg_item)i)
			     : memcg_state(memcg, nid, (enum memcg_item)i);
	if (v < 0)
		v = 0;
	return st->unit == U_PAGES ? (unsigned long long)v * alloc_page_size()
				   : (unsigned long long)v;
}

unsigned long long memcg_stat_item_read(struct mem_cgroup *memcg, enum memcg_item item)
{
	long v;

	memcg_stats_flush();
	memcg_stats_lock();
	v = memcg_state_all_nodes(memcg, item);
	memcg_stats_unlock();
	return v < 0 ? 0 : (unsigned long long)v;
}

int memcg_stat_read(struct mem_cgroup *memcg, const char *key, unsigned long long *val)
{
	memcg_stats_flush();
	for (unsigned int i = 0; i < ARRAY_SIZE(memory_stats); i++) {
		if (!strcmp(memory_stats[i].name, key)) {
			memcg_stats_lock();
			*val = stat_value(memcg, &memory_stats[i], -1);
			memcg_stats_unlock();
			return 0;
		}
	}
	return -ENOENT;
}


int memory_stat_format(struct mem_cgroup *memcg, char *buf, size_t len)
{
	struct seq_buf o;

	seq_buf_init(&o, buf, len);
	memcg_stats_flush();
	memcg_stats_lock();
	for (unsigned int i = 0; i < ARRAY_SIZE(memory_stats); i++)
		seq_buf_put_keyn_u64(&o, memory_stats[i].name, memory_stats[i].len, ' ',
				     stat_value(memcg, &memory_stats[i], -1), '\n');
	memcg_stats_unlock();
	return (int)o.pos;
}

int memory_numa_stat_format(struct mem_cgroup *memcg, char *buf, size_t len)
{
	struct seq_buf o;

	seq_buf_init(&o, buf, len);
	memcg_stats_flush();
	memcg_stats_lock();
	for (unsigned int i = 0; i < ARRAY_SIZE(memory_stats); i++) {
		const struct memory_stat *st = &memory_stats[i];

		if (!st->numa)
			continue;
		seq_buf_printf(&o, "%s", st->name);
		for (unsigned int nid = 0; nid < alloc_nr_nodes(); nid++)
			seq_buf_printf(&o, " N%u=%llu", nid, stat_value(memcg, st, (int)nid));
		seq_buf_printf(&o, "\n");
		/* hugetlb is listed here whenever the kernel has hugetlb pages */
		if (st->item == MI_SLAB_UNRECLAIMABLE_B) {
			seq_buf_printf(&o, "hugetlb");
			for (unsigned int nid = 0; nid < alloc_nr_nodes(); nid++)
				seq_buf_printf(&o, " N%u=0", nid);
			seq_buf_printf(&o, "\n");
		}
	}
	memcg_stats_unlock();
	return (int)o.pos;
}

/* ---- memory.events ---- */
/*
 * memcg_memory_event - the kernel's: local on memcg, hierarchical on memcg
 * and every ancestor below the root, each change notified.
 */
void memcg_memory_event(struct mem_cgroup *memcg, enum memcg_memory_event event)
{
	atomic_fetch_add(&memcg->events_local[event], 1);
	memcg_notify(memcg, "memory.events.local");
	for (struct mem_cgroup *m = memcg; m && m != root_memcg; m = m->parent) {
		atomic_fetch_add(&m->events[event], 1);
		memcg_notify(m, "memory.events");
	}
}
