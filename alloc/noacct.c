/* SPDX-License-Identifier: MIT */
/*
 * noacct.c - the accounting hooks of a kernel built without memcg: nothing
 * is charged.  Linked by alloc's own tests and the "no memcg" benchmark.
 */
#include "alloc.h"

bool memcg_kmem_online_key;
static const uintptr_t no_objcg;
__thread const uintptr_t *memcg_current_objcg = &no_objcg;

int __memcg_slab_post_alloc_hook(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
				 unsigned int full_size, bool reclaimable, int nid)
{
	(void)cur; (void)gfp; (void)ext; (void)full_size; (void)reclaimable; (void)nid;
	return 0;
}

void *__memcg_slab_charge(uintptr_t cur, gfp_t gfp, struct slabobj_ext *ext,
			  uint32_t charge, int nid, void *obj)
{
	(void)cur; (void)gfp; (void)ext; (void)charge; (void)nid;
	return obj;
}

void __memcg_slab_free_hook(struct obj_cgroup *objcg, uint32_t charge, int nid)
{
	(void)objcg; (void)charge; (void)nid;
}

int __memcg_kmem_charge_page(struct page *page, gfp_t gfp, unsigned int order)
{
	(void)page; (void)gfp; (void)order;
	return 0;
}

void __memcg_kmem_uncharge_page(struct page *page, unsigned int order)
{
	(void)page; (void)order;
}
