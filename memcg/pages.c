/* SPDX-License-Identifier: MIT */
/*
 * pages.c - typed pages: memcg_alloc_pages() charges 2^order pages of a
 * type (anon, file, shmem, kernel_stack, ...) and counts them in
 * memory.stat; a task owns its anon, kernel_stack and pagetables pages; a
 * page is freed once, by whoever claims it first: the client, its task's
 * exit or OOM kill, or reclaim.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static void (*free_notify_fn)(const void *addr);

void memcg_set_free_notify(void (*fn)(const void *addr))
{
	free_notify_fn = fn;
}

static bool page_type_direct(enum memcg_page_type type)
{
	return type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_FILE ||
	       type == MEMCG_PAGE_SHMEM || type == MEMCG_PAGE_SOCK;
}

/* the types memcg_alloc_pages() puts on an LRU (when charged) */
static bool page_type_lru(enum memcg_page_type type)
{
	return type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_FILE || type == MEMCG_PAGE_SHMEM;
}

static bool page_type_task_owned(enum memcg_page_type type)
{
	return type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_KERNEL_STACK ||
	       type == MEMCG_PAGE_PAGETABLES;
}

/* Every task's owned array, and who claims a page first (internal.h). */
pthread_mutex_t owned_lock = PTHREAD_MUTEX_INITIALIZER;
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
	page_flags_set(page, PAGE_FLAG_OWNED);
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
	page_flags_clear(page, PAGE_FLAG_OWNED);
	page->task = NULL;
}

uint64_t memcg_page_id(const struct page *page)
{
	return READ_ONCE(page->id);
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
	/* a stale handle's claim may read it meanwhile (and find no match) */
	WRITE_ONCE(page->id, atomic_fetch_add(&page_ids, 1) + 1);
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
		page_flags_set(page, PAGE_FLAG_CHARGED);
		page_stats(memcg, page, type, (long)n);
		if (type == MEMCG_PAGE_FILE)
			page_flags_set(page, PAGE_FLAG_REFERENCED);
		if (type == MEMCG_PAGE_ANON || type == MEMCG_PAGE_SHMEM)
			memcg_lru_add(memcg, page, LRU_INACTIVE_ANON);
		else if (type == MEMCG_PAGE_FILE)
			memcg_lru_add(memcg, page, LRU_INACTIVE_FILE);
	} else {
		struct obj_cgroup *objcg = current_obj_cgroup_get();

		if (objcg) {
			/* the page's own references come with its charge */
			ret = obj_cgroup_charge_pages(objcg, gfp, n);
			if (ret) {
				obj_cgroup_put(objcg);
				__free_pages(page, order);
				goto out;
			}
			page->memcg_data = (uintptr_t)objcg | MEMCG_DATA_KMEM;
			page_flags_set(page, PAGE_FLAG_CHARGED);
			rcu_read_lock();
			page_stats(obj_cgroup_memcg(objcg), page, type, (long)n);
			rcu_read_unlock();
			obj_cgroup_put(objcg);
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

	if (page_flags(page) & PAGE_FLAG_CHARGED) {
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
	/*
	 * Retired under owned_lock, where claims read these: with flags
	 * cleared before the id outside it, a free of the same handle could
	 * see the id still good and GONE already gone, and free the page twice
	 * (TSan stress: the race on flags).
	 */
	pthread_mutex_lock(&owned_lock);
	page->memcg_data = 0;
	__atomic_store_n(&page->flags, 0, __ATOMIC_RELAXED);
	WRITE_ONCE(page->id, 0);
	pthread_mutex_unlock(&owned_lock);
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
	/* the id first: a page that still has it is not back in the allocator */
	ok = id && READ_ONCE(page->id) == id && page->kind == PAGE_KIND_PAGES &&
	     !(page_flags(page) & PAGE_FLAG_GONE);
	/* an LRU page: whether reclaim has it is decided under the LRU lock */
	if (ok && page_type_lru((enum memcg_page_type)page->type) &&
	    (page_flags(page) & PAGE_FLAG_CHARGED)) {
		struct mem_cgroup *memcg = (struct mem_cgroup *)page->memcg_data;

		ok = memcg_lru_del_unless_isolated(memcg, page);
	}
	if (ok) {
		if (page_flags(page) & PAGE_FLAG_OWNED)
			task_disown_page(page);
		page_flags_set(page, PAGE_FLAG_GONE);
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
			page_flags_set(page, PAGE_FLAG_GONE);
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
