/* SPDX-License-Identifier: MIT */
/*
 * lru.c - a memcg's per-node LRU lists of pages and their statistics, and
 * mark_page_accessed()'s promotion (the kernel's lruvec, mm/swap.c).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

/*
 * Off the LRU, unless reclaim took it first (then false); true for a page
 * on no list.  Decided under the LRU lock: reclaim moves a page from list
 * to list through none (unlink, then add) under that lock alone, so a list
 * read outside it may be a page in the middle of a move.
 */
bool memcg_lru_del_unless_isolated(struct mem_cgroup *memcg, struct page *page)
{
	int nid = page_to_nid(page);
	unsigned int lru;

	pthread_mutex_lock(&memcg->lru_lock);
	lru = page_lru(page);
	if (page_flags(page) & PAGE_FLAG_ISOLATED) {
		pthread_mutex_unlock(&memcg->lru_lock);
		return false;
	}
	if (lru >= NR_LRU_LISTS) {
		pthread_mutex_unlock(&memcg->lru_lock);
		return true;
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
	long n;

	pthread_mutex_lock(&owned_lock);
	if (!id || READ_ONCE(page->id) != id || page->kind != PAGE_KIND_PAGES ||
	    (page_flags(page) & PAGE_FLAG_GONE)) {
		pthread_mutex_unlock(&owned_lock);
		return -ENOENT;
	}
	n = 1l << page->order;		/* the handle's page: its order holds */
	if (page_lru(page) != PAGE_LRU_NONE) {
		memcg = (struct mem_cgroup *)page->memcg_data;
		pthread_mutex_lock(&memcg->lru_lock);
		lru = page_lru(page);
	}
	if (!(page_flags(page) & PAGE_FLAG_REFERENCED)) {
		page_flags_set(page, PAGE_FLAG_REFERENCED);
		lru = PAGE_LRU_NONE;
	} else if ((lru == LRU_INACTIVE_FILE || lru == LRU_INACTIVE_ANON) &&
		   !(page_flags(page) & PAGE_FLAG_ISOLATED)) {
		__lru_unlink(&memcg->lru[nid], page, lru);
		__lru_add(&memcg->lru[nid], page, lru + 1);
		page_flags_clear(page, PAGE_FLAG_REFERENCED);
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
