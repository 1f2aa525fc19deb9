/* SPDX-License-Identifier: MIT */
/*
 * kmalloc.c - the kernel's kmalloc size classes, its three cache families
 * (kmalloc-N, kmalloc-rcl-N, kmalloc-cg-N) and large kmalloc straight from
 * the page allocator.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kmem_cache *__kmem_cache_create(const char *name, unsigned int size,
				       unsigned int align, slab_flags_t flags,
				       bool is_kmalloc, int *err);

struct kmem_cache *kmalloc_caches[NR_KMALLOC_TYPES][NR_KMALLOC_INDEX];
struct kmem_cache **kmalloc_normal_by_size, **kmalloc_cg_by_size;

/* kmalloc_size_index[(size - 1) / 8] for size <= 192 (mm/slab_common.c) */
const uint8_t kmalloc_size_index[24] = {
	3, 4, 5, 5, 6, 6, 6, 6,		/* 8 16 24 32 40 48 56 64 */
	1, 1, 1, 1,			/* 72 80 88 96 */
	7, 7, 7, 7,			/* 104 .. 128 */
	2, 2, 2, 2, 2, 2, 2, 2,		/* 136 .. 192 */
};

static const char *const type_prefix[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = "kmalloc-",
	[KMALLOC_RECLAIM] = "kmalloc-rcl-",
	[KMALLOC_CGROUP] = "kmalloc-cg-",
};

static const slab_flags_t type_flags[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = 0,
	[KMALLOC_RECLAIM] = SLAB_RECLAIM_ACCOUNT,
	[KMALLOC_CGROUP] = SLAB_ACCOUNT,
};

/* RECLAIMABLE (bit 4) wins over ACCOUNT (bit 22), as in kmalloc_type(). */
const uint8_t kmalloc_type_of_bits[4] = {
	KMALLOC_NORMAL, KMALLOC_RECLAIM, KMALLOC_CGROUP, KMALLOC_RECLAIM,
};

enum kmalloc_cache_type kmalloc_type(gfp_t gfp)
{
	return (enum kmalloc_cache_type)kmalloc_type_of_bits[gfp_type_bits(gfp)];
}

unsigned int kmalloc_index(size_t size)
{
	if (!size)
		return 0;
	if (size > KMALLOC_MAX_CACHE_SIZE)
		return NR_KMALLOC_INDEX;
	return __kmalloc_index(size);
}

unsigned int kmalloc_size(unsigned int index)
{
	if (index == 1)
		return 96;
	if (index == 2)
		return 192;
	if (index >= KMALLOC_SHIFT_LOW && index < NR_KMALLOC_INDEX &&
	    (1u << index) <= KMALLOC_MAX_CACHE_SIZE)
		return 1u << index;
	return 0;
}

struct kmem_cache *kmalloc_cache(enum kmalloc_cache_type type, unsigned int index)
{
	if ((unsigned int)type >= NR_KMALLOC_TYPES || index >= NR_KMALLOC_INDEX)
		return NULL;
	return kmalloc_caches[type][index];
}

static unsigned int get_order_sz(size_t size)
{
	unsigned int order = 0;

	while (((size_t)machine.page_size << order) < size)
		order++;
	return order;
}

size_t kmalloc_size_roundup(size_t size)
{
	if (!size)
		return 0;
	if (size && size <= KMALLOC_MAX_CACHE_SIZE)
		return kmalloc_size(__kmalloc_index(size));
	if (size > KMALLOC_MAX_SIZE)
		return size;
	return (size_t)machine.page_size << get_order_sz(size);
}

static void kmalloc_name(char *buf, size_t len, enum kmalloc_cache_type type,
			 unsigned int size)
{
	if (size >= 1024 && !(size % 1024))
		snprintf(buf, len, "%s%uk", type_prefix[type], size / 1024);
	else
		snprintf(buf, len, "%s%u", type_prefix[type], size);
}

static int new_kmalloc_cache(unsigned int idx, enum kmalloc_cache_type type)
{
	unsigned int size = kmalloc_size(idx);
	/* create_boot_cache(): power-of-two sizes align to themselves */
	unsigned int align = size & -size;
	char name[32];
	int err;

	if (align < ARCH_KMALLOC_MINALIGN)
		align = ARCH_KMALLOC_MINALIGN;
	kmalloc_name(name, sizeof(name), type, size);
	kmalloc_caches[type][idx] = __kmem_cache_create(name, size, align,
			type_flags[type] | SLAB_NO_MERGE, true, &err);
	return kmalloc_caches[type][idx] ? 0 : err;
}

int kmalloc_init(void)
{
	unsigned int high = ilog2_u(KMALLOC_MAX_CACHE_SIZE);

	memset(kmalloc_caches, 0, sizeof(kmalloc_caches));
	for (unsigned int type = 0; type < NR_KMALLOC_TYPES; type++) {
		for (unsigned int i = KMALLOC_SHIFT_LOW; i <= high && i < NR_KMALLOC_INDEX; i++) {
			int err = new_kmalloc_cache(i, type);

			if (!err && i == 6)
				err = new_kmalloc_cache(1, type);
			if (!err && i == 7)
				err = new_kmalloc_cache(2, type);
			if (err)
				return err;
		}
	}
	/* kmalloc's fast paths: the size class of every size, in one load */
	kmalloc_normal_by_size = calloc(2 * (KMALLOC_MAX_CACHE_SIZE / 8), sizeof(*kmalloc_normal_by_size));
	if (!kmalloc_normal_by_size)
		return -ENOMEM;
	kmalloc_cg_by_size = kmalloc_normal_by_size + KMALLOC_MAX_CACHE_SIZE / 8;
	for (size_t i = 0; i < KMALLOC_MAX_CACHE_SIZE / 8; i++) {
		kmalloc_normal_by_size[i] = kmalloc_caches[KMALLOC_NORMAL][__kmalloc_index(i * 8 + 8)];
		kmalloc_cg_by_size[i] = kmalloc_caches[KMALLOC_CGROUP][__kmalloc_index(i * 8 + 8)];
	}
	return 0;
}

void kmalloc_exit(void)
{
	free(kmalloc_normal_by_size);
	kmalloc_normal_by_size = kmalloc_cg_by_size = NULL;
	memset(kmalloc_caches, 0, sizeof(kmalloc_caches));
}

/* ---- large kmalloc ---- */
__noinline void *kmalloc_large(size_t size, gfp_t gfp, uintptr_t caller)
{
	unsigned int order;
	struct page *page = NULL;
	void *ptr = NULL;

	if (size > KMALLOC_MAX_SIZE)
		goto out;
	order = get_order_sz(size);
	page = __alloc_pages((gfp & ~__GFP_ACCOUNT) | __GFP_COMP, order,
			     PAGE_KIND_LARGE_KMALLOC);
	if (!page)
		goto out;
	if ((gfp & __GFP_ACCOUNT) && memcg_kmem_online() &&
	    __memcg_kmem_charge_page(page, gfp, order)) {
		__free_pages_kind(page, order);
		goto out;
	}
	ptr = page_address(page);
out:
	if (unlikely(READ_ONCE(trace_on)))
		trace_kmalloc(caller, ptr, size,
			      size > KMALLOC_MAX_SIZE ? 0 :
			      (size_t)machine.page_size << get_order_sz(size),
			      gfp, gfp & __GFP_ACCOUNT);
	return ptr;
}

size_t ksize(const void *obj)
{
	struct page *head = NULL;
	struct slab *slab;

	if (ZERO_OR_NULL_PTR(obj))
		return 0;
	slab = virt_to_slab(obj, &head);
	if (slab)
		return slab->cache->size;
	if (head && head->kind == PAGE_KIND_LARGE_KMALLOC)
		return (size_t)machine.page_size << head->order;
	return 0;
}

__noinline void free_large_kmalloc(struct page *page, const void *obj)
{
	if (page->kind != PAGE_KIND_LARGE_KMALLOC || page_address(page) != obj)
		return;		/* not something kmalloc returned */
	if (page->memcg_data)
		__memcg_kmem_uncharge_page(page, page->order);
	__free_pages_kind(page, page->order);
}
