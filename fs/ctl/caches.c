/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/caches.c - the caches created through memcgfs.ctl (their names,
 * owners and references), and the caches a request may allocate from.
 */
#include "handles.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

/* ---- the cache registry ---- */
#define CACHE_BUCKETS	256u
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctl_cache *cache_tab[CACHE_BUCKETS];
static unsigned int nr_caches;

static unsigned int name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return h % CACHE_BUCKETS;
}

static struct ctl_cache **cache_slot(const char *name)
{
	struct ctl_cache **pp = &cache_tab[name_hash(name)];

	while (*pp && strcmp((*pp)->name, name))
		pp = &(*pp)->next;
	return pp;
}

static bool is_kmalloc_cache(const struct kmem_cache *s)
{
	for (int t = 0; t < NR_KMALLOC_TYPES; t++)
		for (unsigned int i = 0; i < NR_KMALLOC_INDEX; i++)
			if (kmalloc_cache((enum kmalloc_cache_type)t, i) == s)
				return true;
	return false;
}

int ctl_cache_create(const char *name, unsigned int size, unsigned int align,
		     slab_flags_t flags, uid_t uid, struct kmem_cache_info *info)
{
	struct ctl_cache *cc, **pp;
	struct kmem_cache *s;
	int err = 0;

	if (strlen(name) >= sizeof(cc->name))
		return -EINVAL;
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	pthread_mutex_lock(&cache_lock);
	pp = cache_slot(name);
	if (*pp) {
		err = -EEXIST;
		goto out;
	}
	if (nr_caches >= CTL_MAX_CACHES) {
		err = -ENOMEM;
		goto out;
	}
	s = kmem_cache_create_err(name, size, align, flags, &err);
	if (!s)
		goto out;
	kmem_cache_set_owner(s, uid);
	snprintf(cc->name, sizeof(cc->name), "%s", name);
	cc->s = s;
	cc->uid = uid;
	*pp = cc;
	nr_caches++;
	kmem_cache_info(s, info);
	cc = NULL;
out:
	pthread_mutex_unlock(&cache_lock);
	free(cc);
	return err;
}

int ctl_cache_destroy(const char *name, uid_t uid)
{
	struct ctl_cache *cc, **pp;
	int err;

	pthread_mutex_lock(&cache_lock);
	pp = cache_slot(name);
	cc = *pp;
	if (!cc) {
		struct kmem_cache *s = kmem_cache_find(name);

		err = s ? -EPERM : -ENOENT;
		goto out;
	}
	if (uid != 0 && uid != cc->uid) {
		err = -EPERM;
		goto out;
	}
	if (atomic_load(&cc->refs) > 0) {
		err = -EBUSY;
		goto out;
	}
	err = kmem_cache_destroy(cc->s);
	if (err)
		goto out;
	*pp = cc->next;
	nr_caches--;
	free(cc);
out:
	pthread_mutex_unlock(&cache_lock);
	return err;
}

int ctl_cache_get(const char *name, struct kmem_cache **s, struct ctl_cache **ccp)
{
	struct ctl_cache *cc;
	int err = 0;

	pthread_mutex_lock(&cache_lock);
	cc = *cache_slot(name);
	if (cc) {
		atomic_fetch_add(&cc->refs, 1);
		*s = cc->s;
		*ccp = cc;
	} else {
		struct kmem_cache *k = kmem_cache_find(name);

		*ccp = NULL;
		if (!k)
			err = -ENOENT;
		else if (!is_kmalloc_cache(k))
			err = -EPERM;	/* the daemon's own caches */
		else
			*s = k;
	}
	pthread_mutex_unlock(&cache_lock);
	return err;
}

void ctl_cache_put(struct ctl_cache *cc)
{
	if (cc)
		atomic_fetch_sub(&cc->refs, 1);
}

void ctl_cache_exit(void)
{
	pthread_mutex_lock(&cache_lock);
	for (unsigned int b = 0; b < CACHE_BUCKETS; b++) {
		while (cache_tab[b]) {
			struct ctl_cache *cc = cache_tab[b];

			cache_tab[b] = cc->next;
			free(cc);	/* the kmem_cache itself is alloc_exit()'s */
		}
	}
	nr_caches = 0;
	pthread_mutex_unlock(&cache_lock);
}
