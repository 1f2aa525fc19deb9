/* SPDX-License-Identifier: MIT */
/*
 * client/batch.c - packing struct memcgfs_op into the ioctl's flat batch
 * (<memcgfs/ctl.h>) and reading the results back.  Pure functions over
 * caller buffers: the unit test drives them without a mount.
 *
 * A batch is a header and an area of 8-byte words: nr operations of 4
 * words first, then each packed operation's slots in operation order
 * (handles, the cache name, the site, the create or whoami results).
 * Both directions walk the same ops with the same rules, so the layout is
 * recomputed rather than stored.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* whoami's path: a struct memcgfs_ctl_whoami, then the path in 512 words */
#define WHOAMI_PATH_WORDS	(MEMCGFS_PATH_MAX / 8)

static size_t str_words(const char *s)
{
	return (strlen(s) + 1 + 7) / 8;
}

static bool op_allocates(unsigned int op)
{
	return op == MEMCGFS_OP_KMALLOC || op == MEMCGFS_OP_KMEM_CACHE_ALLOC ||
	       op == MEMCGFS_OP_ALLOC_PAGES;
}

static bool op_frees(unsigned int op)
{
	/* (mark_page_accessed reads its handles the same way) */
	return op == MEMCGFS_OP_KFREE || op == MEMCGFS_OP_KMEM_CACHE_FREE ||
	       op == MEMCGFS_OP_FREE_PAGES || op == MEMCGFS_OP_MARK_PAGE_ACCESSED;
}

static bool op_named(unsigned int op)
{
	return op >= MEMCGFS_OP_KMEM_CACHE_CREATE && op <= MEMCGFS_OP_KMEM_CACHE_DESTROY;
}

int libmemcgfs_batch_check(const struct memcgfs_op *op)
{
	if (!op->op || op->op > MEMCGFS_OP_MARK_PAGE_ACCESSED)
		return -EINVAL;
	if (op->site && !libmemcgfs_word_ok(op->site, MEMCGFS_CTL_SITE_MAX))
		return -EINVAL;
	if (op_named(op->op) && !libmemcgfs_word_ok(op->name, MEMCGFS_CTL_NAME_MAX))
		return -EINVAL;
	if (op_allocates(op->op) && (op->count > MEMCGFS_CTL_MAX_COUNT || !op->handles))
		return -EINVAL;
	if (op_frees(op->op) && (!op->count || op->count > MEMCGFS_CTL_MAX_COUNT || !op->handles))
		return -EINVAL;
	if (op->op == MEMCGFS_OP_ALLOC_PAGES && (op->type > 0xff || op->order > 0xff))
		return -EINVAL;
	if (op->op == MEMCGFS_OP_WHOAMI && !op->whoami)
		return -EINVAL;
	return 0;
}

/* slots only */
static size_t slot_words(const struct memcgfs_op *op)
{
	size_t w = 0;

	if (op_allocates(op->op))
		w = op->count ? op->count : 1;
	else if (op_frees(op->op))
		w = op->count;
	else if (op->op == MEMCGFS_OP_KMEM_CACHE_CREATE)
		w = 2;
	else if (op->op == MEMCGFS_OP_WHOAMI)
		w = 1 + WHOAMI_PATH_WORDS;
	if (op_named(op->op))
		w += str_words(op->name);
	if (op->site)
		w += str_words(op->site);
	return w;
}

size_t libmemcgfs_batch_words(const struct memcgfs_op *op)
{
	return MEMCGFS_CTL_OP_WORDS + slot_words(op);
}

/* How many of ops[0..n) go into one batch: *taken consumed, *nr packed. */
static void batch_plan(struct memcgfs_op *ops, size_t n, bool mark, size_t *taken, size_t *nr)
{
	size_t used = 0, k = 0, i;

	for (i = 0; i < n; i++) {
		size_t w;

		if (libmemcgfs_batch_check(&ops[i])) {
			if (mark)
				ops[i].error = -EINVAL;
			continue;
		}
		w = libmemcgfs_batch_words(&ops[i]);
		if (used + w > MEMCGFS_CTL_MAX_WORDS)
			break;
		used += w;
		k++;
	}
	*taken = i;
	*nr = k;
}

static void put_string(uint64_t *area, uint16_t *slot, size_t *next, const char *s)
{
	size_t w = str_words(s);

	memset(&area[*next], 0, w * 8);
	memcpy(&area[*next], s, strlen(s) + 1);
	*slot = (uint16_t)*next;
	*next += w;
}

size_t libmemcgfs_batch_pack(struct memcgfs_op *ops, size_t n, uint64_t *buf, size_t *taken, size_t *nr)
{
	struct memcgfs_ctl_hdr hdr = { .version = MEMCGFS_CTL_VERSION };
	uint64_t *area = buf + sizeof(hdr) / 8;
	size_t next, k = 0;

	batch_plan(ops, n, true, taken, nr);
	if (!*nr)
		return 0;
	next = MEMCGFS_CTL_FIRST_SLOT(*nr);
	for (size_t i = 0; i < *taken; i++) {
		const struct memcgfs_op *o = &ops[i];
		struct memcgfs_ctl_op c = { .op = (uint8_t)o->op };

		if (libmemcgfs_batch_check(o))
			continue;
		if (o->site) {
			c.opflags = MEMCGFS_OPF_SITE;
			put_string(area, &c.site, &next, o->site);
		}
		if (op_named(o->op))
			put_string(area, &c.name, &next, o->name);
		c.slot = (uint16_t)next;
		switch (o->op) {
		case MEMCGFS_OP_KMALLOC:
		case MEMCGFS_OP_KMEM_CACHE_ALLOC:
		case MEMCGFS_OP_ALLOC_PAGES:
			c.count = (uint16_t)(o->count ? o->count : 1);
			c.flags = o->flags;
			c.size = o->size;
			c.type = (uint8_t)o->type;
			c.order = (uint8_t)o->order;
			memset(&area[next], 0, (size_t)c.count * 8);
			next += c.count;
			break;
		case MEMCGFS_OP_KFREE:
		case MEMCGFS_OP_KMEM_CACHE_FREE:
		case MEMCGFS_OP_FREE_PAGES:
		case MEMCGFS_OP_MARK_PAGE_ACCESSED:
			c.count = (uint16_t)o->count;
			memcpy(&area[next], o->handles, (size_t)o->count * 8);
			next += o->count;
			break;
		case MEMCGFS_OP_KMEM_CACHE_CREATE:
			c.count = 2;
			c.flags = o->flags;
			c.align = o->align;
			c.size = o->size;
			memset(&area[next], 0, 16);
			next += 2;
			break;
		case MEMCGFS_OP_WHOAMI:
			c.count = 1 + WHOAMI_PATH_WORDS;
			memset(&area[next], 0, (size_t)c.count * 8);
			next += c.count;
			break;
		}
		memcpy(&area[MEMCGFS_CTL_FIRST_SLOT(k)], &c, sizeof(c));
		k++;
	}
	hdr.nr_ops = (uint16_t)k;
	memcpy(buf, &hdr, sizeof(hdr));
	return MEMCGFS_CTL_BATCH_SIZE(0, next);
}

void libmemcgfs_batch_unpack(struct memcgfs_op *ops, size_t taken, const uint64_t *buf)
{
	const uint64_t *area = buf + sizeof(struct memcgfs_ctl_hdr) / 8;
	size_t k = 0;

	for (size_t i = 0; i < taken; i++) {
		struct memcgfs_op *o = &ops[i];
		struct memcgfs_ctl_op c;

		if (libmemcgfs_batch_check(o))
			continue;
		memcpy(&c, &area[MEMCGFS_CTL_FIRST_SLOT(k)], sizeof(c));
		k++;
		o->error = c.error;
		if (c.error)
			continue;
		switch (o->op) {
		case MEMCGFS_OP_KMALLOC:
		case MEMCGFS_OP_KMEM_CACHE_ALLOC:
		case MEMCGFS_OP_ALLOC_PAGES:
			memcpy(o->handles, &area[c.slot], (size_t)c.count * 8);
			break;
		case MEMCGFS_OP_KMEM_CACHE_CREATE:
			if (o->info)
				memcpy(o->info, &area[c.slot], sizeof(*o->info));
			break;
		case MEMCGFS_OP_WHOAMI: {
			struct memcgfs_ctl_whoami w;
			const char *path = (const char *)&area[c.slot + 1];

			memcpy(&w, &area[c.slot], sizeof(w));
			o->whoami->pid = w.pid;
			o->whoami->cpu = w.cpu;
			memcpy(o->whoami->cgroup, path, strnlen(path, WHOAMI_PATH_WORDS * 8 - 1));
			o->whoami->cgroup[strnlen(path, WHOAMI_PATH_WORDS * 8 - 1)] = '\0';
			break;
		}
		}
	}
}
