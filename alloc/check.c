/* SPDX-License-Identifier: MIT */
/*
 * check.c - the machine's invariants, checked whole (like mimalloc's
 * _mi_page_is_valid, for every page and slab at once).  Everything is locked
 * while it runs, so it sees one consistent state.
 */
#include "internal.h"
#include "lib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Count a freelist, marking each object; -1 on a bad or repeated entry. */
static long walk_freelist(const struct kmem_cache *s, const struct slab *slab,
			  void *fl, uint8_t *seen)
{
	long n = 0;

	for (void *p = fl; p; p = *(void **)((char *)p + s->offset)) {
		uintptr_t off = (uintptr_t)((char *)p - slab->base);
		unsigned long idx;

		if ((char *)p < slab->base || off % s->size)
			return -1;
		idx = off / s->size;
		if (idx >= slab->objects || seen[idx])
			return -1;
		seen[idx] = 1;
		if (++n > slab->objects)
			return -1;
	}
	return n;
}

static int check_locked(char *msg, size_t len)
{
	struct zone *z = &machine.zone;
	unsigned long free_pages = 0, slab_pages = 0, large = 0, allocd = 0;
	uint8_t *seen = malloc(MAX_OBJS_PER_PAGE + 1);
	uint8_t *in_free = calloc(machine.nr_pages, 1);
	int ret = 0;

	if (!seen || !in_free) {
		free(seen);
		free(in_free);
		return -ENOMEM;
	}

	/* buddy lists: every block well formed, marked, and not overlapping */
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++) {
		unsigned long n = 0;

		for (struct page *p = z->free_area[o]; p; p = p->buddy_next) {
			unsigned long pfn = page_to_pfn(p);

			if (p->kind != PAGE_KIND_FREE || p->order != o || pfn & ((1ul << o) - 1)) {
				ret = check_fail(msg, len, "buddy: bad free block pfn %lu order %u", pfn, o);
				goto out;
			}
			for (unsigned long i = 0; i < (1ul << o); i++) {
				if (in_free[pfn + i] ||
				    (i && p[i].kind != PAGE_KIND_BUDDY_TAIL)) {
					ret = check_fail(msg, len, "buddy: page %lu both free and used", pfn + i);
					goto out;
				}
				in_free[pfn + i] = 1;
			}
			free_pages += 1ul << o;
			n++;
		}
		if (n != z->nr_free[o]) {
			ret = check_fail(msg, len, "buddy: order %u lists %lu blocks, counter %lu",
				   o, n, z->nr_free[o]);
			goto out;
		}
	}
	if (free_pages != z->free_pages) {
		ret = check_fail(msg, len, "buddy: %lu free pages listed, counter %lu",
			   free_pages, z->free_pages);
		goto out;
	}

	/* every page not free belongs to an allocated block */
	for (unsigned long pfn = 0; pfn < machine.nr_pages;) {
		struct page *p = &machine.pages[pfn];
		unsigned long n;

		if (in_free[pfn]) {
			pfn++;
			continue;
		}
		if (p->kind != PAGE_KIND_SLAB && p->kind != PAGE_KIND_LARGE_KMALLOC &&
		    p->kind != PAGE_KIND_PAGES) {
			ret = check_fail(msg, len, "page %lu: kind %u outside any block", pfn, p->kind);
			goto out;
		}
		n = 1ul << p->order;
		for (unsigned long i = 1; i < n; i++) {
			if (pfn + i >= machine.nr_pages || p[i].kind != PAGE_KIND_TAIL ||
			    p[i].head != p || in_free[pfn + i]) {
				ret = check_fail(msg, len, "page %lu: bad tail of block %lu", pfn + i, pfn);
				goto out;
			}
		}
		if (p->kind == PAGE_KIND_SLAB)
			slab_pages += n;
		else if (p->kind == PAGE_KIND_LARGE_KMALLOC)
			large += n;
		else
			allocd += n;
		pfn += n;
	}
	if (slab_pages != z->slab_pages || large != z->large_pages || allocd != z->alloc_pages) {
		ret = check_fail(msg, len, "page counters: slab %lu/%lu large %lu/%lu pages %lu/%lu",
			   slab_pages, z->slab_pages, large, z->large_pages, allocd, z->alloc_pages);
		goto out;
	}

	/* slabs: per cache, counted against the node counters */
	for (struct kmem_cache *s = slab_caches; s; s = s->next) {
		long nr_slabs = 0, nr_objs = 0;
		unsigned long nr_partial = 0;

		for (unsigned long pfn = 0; pfn < machine.nr_pages; pfn++) {
			struct page *p = &machine.pages[pfn];
			struct slab *slab;
			long nfree, ncpu = 0, npend = 0;
			bool on_cpu = false, on_cpu_partial = false;
			unsigned int inuse;	/* read under slab->lock: a remote free changes it */
			bool frozen;

			if (in_free[pfn] || p->kind != PAGE_KIND_SLAB || p->slab->cache != s)
				continue;
			slab = p->slab;
			nr_slabs++;
			nr_objs += slab->objects;
			if (slab->objects != s->objects && slab->objects != s->min_objects) {
				ret = check_fail(msg, len, "%s: slab %lu has %u objects", s->name, pfn, slab->objects);
				goto out;
			}
			memset(seen, 0, slab->objects);
			spin_lock(&slab->lock);
			nfree = walk_freelist(s, slab, slab->freelist, seen);
			for (unsigned int c = 0; c < machine.cpus; c++) {
				struct kmem_cache_cpu *cc = &s->cpu_slab[c];

				if (cc->slab == slab) {
					if (on_cpu) {
						spin_unlock(&slab->lock);
						ret = check_fail(msg, len, "%s: slab %lu is two CPUs' slab", s->name, pfn);
						goto out;
					}
					on_cpu = true;
					ncpu = walk_freelist(s, slab, cc->freelist, seen);
				}
				if (cc->pend_slab == slab) {
					long np = walk_freelist(s, slab, PEND_HEAD(cc->pend), seen);
					char *t = cc->pend_tail;
					uintptr_t toff = (uintptr_t)(t - slab->base);

					/* the run ends at its tail, an object of the run */
					if (np >= 0 && (!t || t < slab->base || toff % s->size ||
							toff / s->size >= slab->objects ||
							!seen[toff / s->size] ||
							*(void **)(t + s->offset)))
						np = -1;
					/* and its length is the count the run keeps */
					if (np >= 0 && np != PEND_LEN(cc->pend))
						np = -1;
					npend = np < 0 || npend < 0 ? -1 : npend + np;
				}
				for (struct slab *q = cc->partial; q; q = q->next)
					if (q == slab)
						on_cpu_partial = true;
			}
			inuse = slab->inuse;
			frozen = slab->frozen;
			spin_unlock(&slab->lock);
			if (nfree < 0 || ncpu < 0 || npend < 0) {
				ret = check_fail(msg, len, "%s: slab %lu: corrupt freelist", s->name, pfn);
				goto out;
			}
			/* a slab leaving or joining a CPU may be frozen for a moment */
			if (on_cpu && !frozen) {
				ret = check_fail(msg, len, "%s: slab %lu: a CPU slab that is not frozen",
					   s->name, pfn);
				goto out;
			}
			/* the CPU's own freelist and pending runs are counted in inuse */
			if (inuse + nfree != slab->objects || ncpu + npend > inuse ||
			    (!frozen && ncpu)) {
				ret = check_fail(msg, len, "%s: slab %lu: inuse %u + free %ld != %u (cpu %ld, pending %ld)",
					   s->name, pfn, inuse, nfree, slab->objects, ncpu, npend);
				goto out;
			}
			if (slab->on_node_partial) {
				nr_partial++;
				if (on_cpu || on_cpu_partial || !nfree) {
					ret = check_fail(msg, len, "%s: slab %lu on node partial but cpu %d cpu-partial %d free %ld",
						   s->name, pfn, on_cpu, on_cpu_partial, nfree);
					goto out;
				}
			}
			if (on_cpu && on_cpu_partial) {
				ret = check_fail(msg, len, "%s: slab %lu both CPU slab and CPU partial", s->name, pfn);
				goto out;
			}
		}
		{
			long cs = 0, co = 0;
			unsigned long np = 0;

			for (unsigned int i = 0; i < machine.nodes; i++) {
				cs += atomic_load(&s->node[i].nr_slabs);
				co += atomic_load(&s->node[i].total_objects);
				np += s->node[i].nr_partial;
			}
			if (cs != nr_slabs || co != nr_objs || np != nr_partial) {
				ret = check_fail(msg, len, "%s: counters slabs %ld/%ld objects %ld/%ld partial %lu/%lu",
					   s->name, nr_slabs, cs, nr_objs, co, nr_partial, np);
				goto out;
			}
		}
	}
out:
	free(seen);
	free(in_free);
	return ret;
}

int alloc_check(char *msg, size_t len)
{
	int ret;

	if (!machine_up)
		return check_fail(msg, len, "no machine");
	if (msg && len)
		msg[0] = '\0';
	pthread_mutex_lock(&slab_mutex);
	pthread_rwlock_wrlock(&slab_life_lock);
	for (struct kmem_cache *s = slab_caches; s; s = s->next) {
		for (unsigned int c = 0; c < machine.cpus; c++) {
			spin_lock(&s->cpu_slab[c].lock);
			if (machine.rseq)
				rseq_fence_cpu(c);
		}
		for (unsigned int i = 0; i < machine.nodes; i++)
			spin_lock(&s->node[i].list_lock);
	}
	pthread_mutex_lock(&machine.zone.lock);
	ret = check_locked(msg, len);
	pthread_mutex_unlock(&machine.zone.lock);
	for (struct kmem_cache *s = slab_caches; s; s = s->next) {
		for (unsigned int i = 0; i < machine.nodes; i++)
			spin_unlock(&s->node[i].list_lock);
		for (unsigned int c = 0; c < machine.cpus; c++)
			spin_unlock(&s->cpu_slab[c].lock);
	}
	pthread_rwlock_unlock(&slab_life_lock);
	pthread_mutex_unlock(&slab_mutex);
	return ret;
}
