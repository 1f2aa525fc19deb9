/* SPDX-License-Identifier: MIT */
/*
 * list_lru.c - a shrinker's objects by obj_cgroup (the kernel's
 * mm/list_lru.c, memcg-aware): one list per objcg, oldest first, found
 * through a hash; reclaim of a memcg counts and walks only the lists whose
 * objcg charges it now (after reparenting, an ancestor's reclaim finds
 * them), the root's also the list of objects charged to nobody.  Keyed by
 * objcg because objcgs get reparented: a list follows its objcg to the
 * parent without a move, and counting for a memcg is O(lists), not
 * O(objects).
 *
 * A list lives while items are attached to it (refs), so an objcg named
 * by a list is one an item holds: a list with a live item has a live
 * objcg, and only those are looked at.  The owner's lock guards it all
 * (memcg.h says which calls take it).
 */
#include "internal.h"
#include "lib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The reclaimable items charged to one objcg (NULL: charged to nobody). */
struct list_lru_one {
	struct obj_cgroup *objcg;
	struct list_lru_one *hnext;		/* hash chain */
	struct list_lru_one *prev, *next;	/* every list */
	uint32_t head, tail;			/* oldest, newest: id + 1 */
	uint32_t nr_live;			/* live items on the list */
	uint32_t refs;				/* attached items */
};

static unsigned int list_bucket(const struct obj_cgroup *objcg)
{
	return (unsigned int)((((uintptr_t)objcg >> 4) * 0x9e3779b97f4a7c15ull) >> 56) &
	       (LIST_LRU_BUCKETS - 1);
}

int list_lru_attach(struct list_lru *lru, struct list_lru_node *n, struct obj_cgroup *objcg)
{
	unsigned int b = list_bucket(objcg);
	struct list_lru_one *l;

	for (l = lru->hash[b]; l; l = l->hnext)
		if (l->objcg == objcg)
			break;
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return -ENOMEM;
		l->objcg = objcg;
		l->hnext = lru->hash[b];
		lru->hash[b] = l;
		l->next = lru->lists;
		if (lru->lists)
			lru->lists->prev = l;
		lru->lists = l;
	}
	l->refs++;
	n->list = l;
	n->prev = n->next = 0;
	return 0;
}

static void list_put(struct list_lru *lru, struct list_lru_one *l)
{
	struct list_lru_one **pp;

	if (--l->refs)
		return;
	for (pp = &lru->hash[list_bucket(l->objcg)]; *pp != l; pp = &(*pp)->hnext)
		;
	*pp = l->hnext;
	if (l->prev)
		l->prev->next = l->next;
	else
		lru->lists = l->next;
	if (l->next)
		l->next->prev = l->prev;
	free(l);
}

bool list_lru_on_list(const struct list_lru *lru, const struct list_lru_node *n)
{
	return n->list && (n->prev || (n->list->head && lru->node(n->list->head - 1) == n));
}

void list_lru_add(struct list_lru *lru, uint32_t id, bool live)
{
	struct list_lru_node *n = lru->node(id);
	struct list_lru_one *l = n->list;

	n->next = 0;
	n->prev = l->tail;
	if (l->tail)
		lru->node(l->tail - 1)->next = id + 1;
	else
		l->head = id + 1;
	l->tail = id + 1;
	if (live)
		l->nr_live++;
	lru->nr_items++;
}

static void list_lru_del(struct list_lru *lru, uint32_t id, bool live)
{
	struct list_lru_node *n = lru->node(id);
	struct list_lru_one *l = n->list;

	if (n->prev)
		lru->node(n->prev - 1)->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		lru->node(n->next - 1)->prev = n->prev;
	else
		l->tail = n->prev;
	n->prev = n->next = 0;
	if (live)
		l->nr_live--;
	lru->nr_items--;
}

void list_lru_detach(struct list_lru *lru, uint32_t id, bool live)
{
	struct list_lru_node *n = lru->node(id);

	if (!n->list)
		return;
	if (list_lru_on_list(lru, n))
		list_lru_del(lru, id, live);
	list_put(lru, n->list);
	n->list = NULL;
}

void list_lru_set_live(struct list_lru *lru, const struct list_lru_node *n, bool live)
{
	if (!list_lru_on_list(lru, n))
		return;
	if (live)
		n->list->nr_live++;
	else
		n->list->nr_live--;
}

/*
 * A list whose items are charged to memcg itself now (reclaim visits each
 * memcg of a subtree); for the root, also the items charged to nobody
 * (global reclaim).  Only lists with a live item: their objcg is alive.
 */
static bool list_charges(const struct list_lru_one *l, struct mem_cgroup *memcg)
{
	if (!l->nr_live)
		return false;
	if (!l->objcg)
		return mem_cgroup_is_root(memcg);
	return obj_cgroup_memcg(l->objcg) == memcg;
}

unsigned long list_lru_count_one(struct list_lru *lru, struct mem_cgroup *memcg)
{
	unsigned long n = 0;

	pthread_mutex_lock(lru->lock);
	for (const struct list_lru_one *l = lru->lists; l; l = l->next)
		if (list_charges(l, memcg))
			n += l->nr_live;
	pthread_mutex_unlock(lru->lock);
	return n;
}

unsigned long list_lru_walk_one(struct list_lru *lru, struct mem_cgroup *memcg,
				bool (*isolate)(uint32_t id, void *arg), void *arg,
				unsigned long nr_to_walk)
{
	unsigned long n = 0;

	pthread_mutex_lock(lru->lock);
	for (struct list_lru_one *l = lru->lists; l && n < nr_to_walk; l = l->next) {
		if (!list_charges(l, memcg))
			continue;
		for (uint32_t i = l->head; i && n < nr_to_walk; i = lru->node(i - 1)->next)
			n += isolate(i - 1, arg);
	}
	pthread_mutex_unlock(lru->lock);
	return n;
}

unsigned long list_lru_count(struct list_lru *lru)
{
	unsigned long n;

	pthread_mutex_lock(lru->lock);
	n = lru->nr_items;
	pthread_mutex_unlock(lru->lock);
	return n;
}

void list_lru_destroy(struct list_lru *lru)
{
	while (lru->lists) {
		struct list_lru_one *l = lru->lists;

		lru->lists = l->next;
		free(l);
	}
	memset(lru->hash, 0, sizeof(lru->hash));
	lru->nr_items = 0;
}

int list_lru_check(const struct list_lru *lru, bool (*live)(uint32_t id), uint32_t max_id,
		   uint32_t *listed, uint32_t *refs, char *msg, size_t len)
{
	*listed = *refs = 0;
	for (const struct list_lru_one *l = lru->lists; l; l = l->next) {
		uint32_t n = 0, nl = 0, prev = 0;

		for (uint32_t i = l->head; i; prev = i, i = lru->node(i - 1)->next) {
			const struct list_lru_node *node = lru->node(i - 1);

			if (node->list != l || node->prev != prev)
				return check_fail(msg, len, "a shrinker list is broken at item %u",
						  i - 1);
			if (++n > max_id)
				return check_fail(msg, len, "a shrinker list loops");
			nl += live(i - 1);
		}
		if (prev != l->tail)
			return check_fail(msg, len, "a shrinker list's tail is not its last entry");
		if (nl != l->nr_live || !l->refs)
			return check_fail(msg, len, "a shrinker list: %u live (counted %u), %u references",
					  nl, l->nr_live, l->refs);
		*listed += n;
		*refs += l->refs;
	}
	return 0;
}
