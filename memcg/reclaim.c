/* SPDX-License-Identifier: MIT */
/*
 * reclaim.c - memcg reclaim (mm/vmscan.c's shrink_node_memcgs for one
 * memcg subtree): file LRU pages from the inactive list's tail, the active
 * list aged into it while the target's inactive list is low, real page
 * cache (real.c), then reclaimable slab through the shrinkers; anon is
 * never reclaimed (no swap).
 *
 * Priorities from DEF_PRIORITY down to 0 scan lruvec_size >> priority per
 * memcg, less the share that its effective protection covers (the kernel's
 * apply_proportional_protection).  Memcgs below their effective min are
 * skipped; below their effective low only when a pass over the others
 * reclaimed nothing, counting the 'low' event.  A newly charged file page
 * is 'referenced' (it was just read): the first scan rotates it, the next
 * one reclaims it, so pgscan runs ahead of pgsteal as it does in the kernel.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

#define DEF_PRIORITY		12

static pthread_mutex_t shrinker_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shrinker *shrinkers;

void register_shrinker(struct shrinker *s)
{
	pthread_mutex_lock(&shrinker_lock);
	s->next = shrinkers;
	shrinkers = s;
	pthread_mutex_unlock(&shrinker_lock);
}

void unregister_shrinker(struct shrinker *s)
{
	pthread_mutex_lock(&shrinker_lock);
	for (struct shrinker **pp = &shrinkers; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&shrinker_lock);
}

struct mem_cgroup *mem_cgroup_from_obj(const void *obj)
{
	struct obj_cgroup *objcg = alloc_obj_objcg(obj);

	return objcg ? obj_cgroup_memcg(objcg) : NULL;
}

unsigned long mem_cgroup_margin(struct mem_cgroup *memcg)
{
	unsigned long count = page_counter_read(&memcg->memory);
	unsigned long limit = READ_ONCE(memcg->memory.max);

	return count < limit ? limit - count : 0;
}

/* The subtree top-down (parents before children), each referenced. */
static size_t collect_subtree(struct mem_cgroup *root, struct mem_cgroup ***out)
{
	size_t n = 0, cap = 16, head = 0;
	struct mem_cgroup **v = malloc(cap * sizeof(*v));

	if (!v)
		return 0;
	pthread_mutex_lock(&tree_lock);
	v[n++] = root;
	css_get(root);
	while (head < n) {
		for (struct mem_cgroup *c = v[head]->children; c; c = c->sibling) {
			if (n == cap) {
				struct mem_cgroup **w = realloc(v, 2 * cap * sizeof(*v));

				if (!w)
					goto out;
				v = w;
				cap *= 2;
			}
			if (!css_tryget(c))
				continue;
			v[n++] = c;
		}
		head++;
	}
out:
	pthread_mutex_unlock(&tree_lock);
	*out = v;
	return n;
}

static void put_subtree(struct mem_cgroup **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		css_put(v[i]);
	free(v);
}

/*
 * shrink_active_list(): up to nr pages from the active file list's tail
 * (the least recently activated) to the inactive list's head; no file page
 * stays active for a reference here (only executable mapped ones do in the
 * kernel).  pgrefill counts the pages scanned, pgdeactivate those moved.
 */
static void shrink_active_list(struct mem_cgroup *memcg, int nid, unsigned long nr)
{
	struct memcg_lru *l = &memcg->lru[nid];
	unsigned long moved = 0;

	pthread_mutex_lock(&memcg->lru_lock);
	while (moved < nr && l->tail[LRU_ACTIVE_FILE]) {
		struct page *page = l->tail[LRU_ACTIVE_FILE];

		__lru_unlink(l, page, LRU_ACTIVE_FILE);
		__lru_add(l, page, LRU_INACTIVE_FILE);
		moved += 1ul << page->order;
	}
	pthread_mutex_unlock(&memcg->lru_lock);
	if (moved) {
		mod_memcg_state(memcg, nid, MI_ACTIVE_FILE, -(long)moved);
		mod_memcg_state(memcg, nid, MI_INACTIVE_FILE, (long)moved);
		mod_memcg_state(memcg, nid, MI_PGREFILL, (long)moved);
		mod_memcg_state(memcg, nid, MI_PGDEACTIVATE, (long)moved);
	}
}

/*
 * Scan up to nr pages of the inactive file list from its tail (the oldest):
 * a referenced page loses its bit and goes back to the head; the others are
 * isolated (reclaim claims them under the LRU lock) and freed, until
 * 'want' pages were reclaimed.
 */
static unsigned long shrink_inactive_list(struct mem_cgroup *memcg, int nid, unsigned long nr,
					  unsigned long want, bool proactive)
{
	struct memcg_lru *l = &memcg->lru[nid];
	struct page *victims = NULL, **last = &victims, *tail;
	unsigned long scanned = 0, reclaimed = 0;

	pthread_mutex_lock(&memcg->lru_lock);
	tail = l->tail[LRU_INACTIVE_FILE];
	while (scanned < nr && reclaimed < want && tail) {
		struct page *page = tail;
		unsigned long n = 1ul << page->order;

		tail = page->lru_prev;
		scanned += n;
		if (page_flags(page) & PAGE_FLAG_REFERENCED) {
			page_flags_clear(page, PAGE_FLAG_REFERENCED);
			/* rotate to the head */
			__lru_unlink(l, page, LRU_INACTIVE_FILE);
			__lru_add(l, page, LRU_INACTIVE_FILE);
			continue;
		}
		__lru_unlink(l, page, LRU_INACTIVE_FILE);
		page_flags_set(page, PAGE_FLAG_ISOLATED | PAGE_FLAG_GONE);
		/* freed in the order taken, the oldest first, as shrink_folio_list() */
		*last = page;
		last = &page->lru_next;
		reclaimed += n;
	}
	pthread_mutex_unlock(&memcg->lru_lock);
	if (reclaimed)
		mod_memcg_state(memcg, nid, MI_INACTIVE_FILE, -(long)reclaimed);
	mod_memcg_state(memcg, nid, proactive ? MI_PGSCAN_PROACTIVE : MI_PGSCAN_DIRECT,
			(long)scanned);
	mod_memcg_state(memcg, nid, proactive ? MI_PGSTEAL_PROACTIVE : MI_PGSTEAL_DIRECT,
			(long)reclaimed);
	while (victims) {
		struct page *page = victims;

		victims = page->lru_next;
		page->lru_next = NULL;
		memcg_free_page_reclaimed(page);
	}
	return reclaimed;
}

#define SHRINK_BATCH	128ul
#define DEFAULT_SEEKS	2ul

/*
 * do_shrink_slab(): a shrinker scans freeable * 4 / seeks >> priority
 * objects, in batches, only once that reaches a batch or everything: small
 * caches are left alone until reclaim gets desperate.
 */
static unsigned long shrink_slab(struct mem_cgroup *memcg, int priority)
{
	unsigned long freed = 0;
	unsigned long long before, after;

	before = memcg_stat_item_read(memcg, MI_SLAB_RECLAIMABLE_B);
	pthread_mutex_lock(&shrinker_lock);
	for (struct shrinker *s = shrinkers; s; s = s->next) {
		unsigned long freeable = s->count_objects(s, memcg);
		unsigned long total_scan = (freeable * 4 / DEFAULT_SEEKS) >> priority;

		if (!freeable)
			continue;
		if (total_scan > 2 * freeable)
			total_scan = 2 * freeable;
		while (total_scan >= SHRINK_BATCH || total_scan >= freeable) {
			unsigned long nr = total_scan < SHRINK_BATCH ? total_scan : SHRINK_BATCH;
			unsigned long got = s->scan_objects(s, memcg, nr);

			freed += got;
			if (!got || total_scan <= nr)
				break;
			total_scan -= nr;
		}
	}
	pthread_mutex_unlock(&shrinker_lock);
	if (!freed)
		return 0;
	after = memcg_stat_item_read(memcg, MI_SLAB_RECLAIMABLE_B);
	/* reclaim_state->reclaimed: pages' worth of what the objects gave back */
	return before > after ?
		(unsigned long)((before - after + alloc_page_size() - 1) / alloc_page_size()) : 0;
}

/* The kernel's apply_proportional_protection(). */
static unsigned long proportional_scan(struct mem_cgroup *memcg, unsigned long lru_size,
				       bool low_reclaim)
{
	unsigned long protection = low_reclaim ? READ_ONCE(memcg->memory.emin) :
		(READ_ONCE(memcg->memory.emin) > READ_ONCE(memcg->memory.elow) ?
		 READ_ONCE(memcg->memory.emin) : READ_ONCE(memcg->memory.elow));
	unsigned long usage = page_counter_read(&memcg->memory);
	unsigned long cgroup_size = usage > protection ? usage : protection;
	unsigned long scan;

	if (!protection)
		return lru_size;
	scan = lru_size - (unsigned long)((unsigned __int128)lru_size * protection / (cgroup_size + 1));
	return scan > SWAP_CLUSTER_MAX ? scan : (lru_size < SWAP_CLUSTER_MAX ? lru_size : SWAP_CLUSTER_MAX);
}

static bool below_min(struct mem_cgroup *root, struct mem_cgroup *m)
{
	return m != root && READ_ONCE(m->memory.emin) >= page_counter_read(&m->memory) &&
	       page_counter_read(&m->memory);
}

static bool below_low(struct mem_cgroup *root, struct mem_cgroup *m)
{
	return m != root && READ_ONCE(m->memory.elow) >= page_counter_read(&m->memory) &&
	       page_counter_read(&m->memory);
}

/*
 * The kernel's inactive_is_low() for the file lists of the reclaim's
 * target (its subtree on node nid): past 1 GB of file pages, the inactive
 * list may be sqrt(10 * GB) times smaller than the active one.
 */
static bool inactive_is_low(struct mem_cgroup **v, size_t n, unsigned int nid)
{
	unsigned long inactive = 0, active = 0, gb, ratio;

	for (size_t i = 0; i < n; i++) {
		inactive += READ_ONCE(v[i]->lru[nid].nr[LRU_INACTIVE_FILE]);
		active += READ_ONCE(v[i]->lru[nid].nr[LRU_ACTIVE_FILE]);
	}
	gb = (inactive + active) * alloc_page_size() >> 30;
	ratio = 1;
	while (gb && (ratio + 1) * (ratio + 1) <= 10 * gb)	/* int_sqrt(10 * gb) */
		ratio++;
	return inactive * ratio < active;
}

/* The kernel's scan_control, for what one reclaim call decides once. */
struct scan_control {
	unsigned long nr_to_reclaim;
	bool low_reclaim, low_skipped;	/* memcg_low_reclaim, memcg_low_skipped */
	bool force_deactivate, skipped_deactivate;
	bool may_deactivate[ALLOC_MAX_NODES];
	bool proactive;
};

/* get_scan_count() for one list: its share past protection, >> priority. */
static unsigned long lru_scan(struct mem_cgroup *m, unsigned long size, int priority,
			      const struct scan_control *sc)
{
	unsigned long scan = proportional_scan(m, size, sc->low_reclaim) >> priority;

	if (!scan && size && priority < DEF_PRIORITY)
		scan = size < SWAP_CLUSTER_MAX ? size : SWAP_CLUSTER_MAX;
	return scan;
}

/*
 * One priority over the subtree: each memcg's file LRU (less what its
 * protection covers) in batches of SWAP_CLUSTER_MAX, inactive then active
 * as shrink_lruvec() takes them (the active list only while the target's
 * inactive list is low), then its reclaimable slab, stopping at the target.
 */
static unsigned long shrink_memcgs(struct mem_cgroup *root, struct mem_cgroup **v, size_t n,
				   int priority, unsigned long want, struct scan_control *sc)
{
	unsigned long reclaimed = 0;

	for (size_t i = 0; i < n && reclaimed < want; i++) {
		struct mem_cgroup *m = v[i];

		page_counter_calculate_protection(&root->memory, &m->memory);
		if (below_min(root, m))
			continue;
		if (below_low(root, m)) {
			if (!sc->low_reclaim) {
				sc->low_skipped = true;
				continue;
			}
			memcg_memory_event(m, MEMCG_LOW);
		}
		for (unsigned int nid = 0; nid < alloc_nr_nodes() && reclaimed < want; nid++) {
			unsigned long nr_inactive = lru_scan(m, READ_ONCE(m->lru[nid].nr[LRU_INACTIVE_FILE]),
							     priority, sc);
			unsigned long nr_active = lru_scan(m, READ_ONCE(m->lru[nid].nr[LRU_ACTIVE_FILE]),
							   priority, sc);

			while ((nr_inactive || nr_active) && reclaimed < want) {
				unsigned long batch = nr_inactive < SWAP_CLUSTER_MAX ? nr_inactive : SWAP_CLUSTER_MAX;

				nr_inactive -= batch;
				if (batch)
					reclaimed += shrink_inactive_list(m, (int)nid, batch, want - reclaimed,
									  sc->proactive);
				batch = nr_active < SWAP_CLUSTER_MAX ? nr_active : SWAP_CLUSTER_MAX;
				nr_active -= batch;
				if (!batch)
					continue;
				if (sc->may_deactivate[nid])
					shrink_active_list(m, (int)nid, batch);
				else
					sc->skipped_deactivate = true;
			}
		}
		if (reclaimed < want) {
			/* real page cache (real.c): files on their own LRU, scanned alike */
			unsigned long scan = lru_scan(m, memcg_real_lru_pages(m), priority, sc);

			if (scan)
				reclaimed += shrink_real_files(m, scan, want - reclaimed, sc->proactive);
		}
		if (reclaimed < want)
			reclaimed += shrink_slab(m, priority);
	}
	return reclaimed;
}

/*
 * do_try_to_free_pages() for a memcg: priorities DEF_PRIORITY..0 until the
 * target; if protected memcgs were skipped and that was not enough, once
 * more breaking memory.low (the kernel's memcg_low_reclaim retry).
 */
unsigned long try_to_free_mem_cgroup_pages(struct mem_cgroup *root, unsigned long nr_pages,
					   gfp_t gfp, bool proactive)
{
	struct scan_control sc = { .proactive = proactive };
	struct mem_cgroup **v;
	unsigned long reclaimed = 0;
	size_t n;

	(void)gfp;
	/* the kernel's nr_to_reclaim = max(nr_pages, SWAP_CLUSTER_MAX) */
	sc.nr_to_reclaim = nr_pages < SWAP_CLUSTER_MAX ? SWAP_CLUSTER_MAX : nr_pages;
	n = collect_subtree(root, &v);
	if (!n)
		return 0;
retry:
	sc.low_skipped = false;
	sc.skipped_deactivate = false;
	for (int priority = DEF_PRIORITY; priority >= 0 && reclaimed < sc.nr_to_reclaim; priority--) {
		/* prepare_scan_control(), once per pass over the node */
		for (unsigned int nid = 0; nid < alloc_nr_nodes() && nid < ALLOC_MAX_NODES; nid++)
			sc.may_deactivate[nid] = sc.force_deactivate || inactive_is_low(v, n, nid);
		reclaimed += shrink_memcgs(root, v, n, priority, sc.nr_to_reclaim - reclaimed, &sc);
	}
	/* nothing at all: the ratio may have misjudged, deactivate regardless */
	if (!reclaimed && sc.skipped_deactivate && !sc.force_deactivate) {
		sc.force_deactivate = true;
		goto retry;
	}
	if (reclaimed < sc.nr_to_reclaim && sc.low_skipped && !sc.low_reclaim) {
		sc.force_deactivate = false;
		sc.low_reclaim = true;
		goto retry;
	}
	put_subtree(v, n);
	return reclaimed;
}
