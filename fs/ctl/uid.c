/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/uid.c - counters per non-root uid (struct fs_uid_counts: the
 * per-uid caps of handles, sessions and fs/'s own), and what a cap's 0
 * means (fs_host_share).
 */
#include "ctl.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

unsigned int fs_host_share(uint64_t unit, unsigned int min, unsigned int max)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t n = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 100 / unit : 0;

	return n < min ? min : n > max ? max : (unsigned int)n;
}

/* ---- counters per non-root uid ---- */
struct fs_uid_count {
	struct fs_uid_count *next;
	uid_t uid;
	uint32_t n;
};

static struct fs_uid_count **uid_slot(struct fs_uid_counts *uc, uid_t uid)
{
	struct fs_uid_count **pp =
		&uc->tab[((uint32_t)uid * 0x9e3779b9u) >> 24 & (FS_UID_BUCKETS - 1)];

	while (*pp && (*pp)->uid != uid)
		pp = &(*pp)->next;
	return pp;
}

uint32_t fs_uid_count(const struct fs_uid_counts *uc, uid_t uid)
{
	const struct fs_uid_count *u = uid ? *uid_slot((struct fs_uid_counts *)uc, uid) : NULL;

	return u ? u->n : 0;
}

int fs_uid_count_add(struct fs_uid_counts *uc, uid_t uid, long n)
{
	struct fs_uid_count **pp, *u;

	if (uid == 0)
		return 0;
	pp = uid_slot(uc, uid);
	u = *pp;
	if (!u) {
		if (n <= 0)
			return 0;
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->uid = uid;
		*pp = u;
	}
	u->n = (uint32_t)((long)u->n + n);
	uc->total = (uint32_t)((long)uc->total + n);
	if (!u->n) {
		*pp = u->next;
		free(u);
	}
	return 0;
}

int fs_uid_count_each(const struct fs_uid_counts *uc, int (*fn)(uid_t uid, uint32_t n, void *arg),
		      void *arg)
{
	for (unsigned int b = 0; b < FS_UID_BUCKETS; b++)
		for (const struct fs_uid_count *u = uc->tab[b]; u; u = u->next) {
			int ret = fn(u->uid, u->n, arg);

			if (ret)
				return ret;
		}
	return 0;
}

void fs_uid_counts_clear(struct fs_uid_counts *uc)
{
	for (unsigned int b = 0; b < FS_UID_BUCKETS; b++)
		while (uc->tab[b]) {
			struct fs_uid_count *u = uc->tab[b];

			uc->tab[b] = u->next;
			free(u);
		}
	uc->total = 0;
}
