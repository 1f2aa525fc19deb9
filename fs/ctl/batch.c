/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/batch.c - memcgfs.ctl's batched ioctl (<memcgfs/ctl.h>): each
 * operation of a batch decoded into a struct ctl_exec, run by the executor
 * (exec.c) and its results written into the returned copy.
 */
#include "exec.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>

/* ---- the ioctl batch ---- */
struct batch {
	const unsigned char *in;	/* the client's copy: inputs */
	unsigned char *out;		/* results */
	unsigned int nr_ops;
	unsigned int words;		/* 8-byte words after the header */
};

static inline size_t slot_off(unsigned int slot)
{
	return sizeof(struct memcgfs_ctl_hdr) + (size_t)slot * 8;
}

/* Slots [slot, slot+n) lie after the operations and inside the batch. */
static bool slots_ok(const struct batch *b, unsigned int slot, unsigned int n)
{
	return slot >= MEMCGFS_CTL_FIRST_SLOT(b->nr_ops) && slot <= b->words &&
	       n <= b->words - slot;
}

/* A NUL-terminated string at a slot, at most max bytes with the NUL. */
static const char *slot_string(const struct batch *b, unsigned int slot, size_t max)
{
	const char *s;
	size_t room;

	if (!slots_ok(b, slot, 1))
		return NULL;
	s = (const char *)b->in + slot_off(slot);
	room = (size_t)(b->words - slot) * 8;
	if (room > max)
		room = max;
	if (!memchr(s, '\0', room))
		return NULL;
	return s;
}

static bool printable_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Decode one operation of a batch into x (inputs copied to aligned scratch). */
static int batch_decode(const struct batch *b, const struct memcgfs_ctl_op *op,
			struct ctl_exec *x, char *name, char *site)
{
	unsigned int count = op->count;
	const char *str;

	x->op = op->op;
	x->count = 1;
	if (op->opflags & ~MEMCGFS_OPF_SITE)
		return fail(x, -EINVAL, "unknown opflags");
	if (op->opflags & MEMCGFS_OPF_SITE) {
		str = slot_string(b, op->site, MEMCGFS_CTL_SITE_MAX);
		if (!str || !printable_word(str))
			return fail(x, -EINVAL, "bad site");
		strcpy(site, str);
		x->site = site;
	}
	switch (op->op) {
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_KMEM_CACHE_FREE:
	case MEMCGFS_OP_KMEM_CACHE_DESTROY:
		str = slot_string(b, op->name, MEMCGFS_CTL_NAME_MAX);
		if (!str || !printable_word(str))
			return fail(x, -EINVAL, "bad cache name");
		strcpy(name, str);
		x->name = name;
		break;
	}
	switch (op->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		if (!count)
			count = 1;
		if (count > CTL_MAX_COUNT || !slots_ok(b, op->slot, count))
			return fail(x, -EINVAL, "bad count or slots");
		x->count = count;
		if (op->op == MEMCGFS_OP_ALLOC_PAGES) {
			if (op->type >= NR_MEMCG_PAGE_TYPES || op->order > MAX_PAGE_ORDER)
				return fail(x, -EINVAL, "bad page type or order");
			x->ptype = (enum memcg_page_type)op->type;
			x->order = op->order;
			return 0;
		}
		if (op->flags & ~MEMCGFS_GFP_VALID)
			return fail(x, -EINVAL, "unknown gfp bits");
		x->gfp = op->flags ? op->flags : GFP_KERNEL;
		if (op->op == MEMCGFS_OP_KMALLOC) {
			if (!op->size || op->size > KMALLOC_MAX_SIZE)
				return fail(x, -EINVAL, "bad size");
			x->size = op->size;
		}
		return 0;
	case MEMCGFS_OP_KFREE:
	case MEMCGFS_OP_KMEM_CACHE_FREE:
	case MEMCGFS_OP_FREE_PAGES:
	case MEMCGFS_OP_MARK_PAGE_ACCESSED:
		if (!count || count > CTL_MAX_COUNT || !slots_ok(b, op->slot, count))
			return fail(x, -EINVAL, "bad count or slots");
		memcpy(ctl_handle_scratch, b->in + slot_off(op->slot), (size_t)count * 8);
		x->in = ctl_handle_scratch;
		x->nin = count;
		x->malformed = NULL;
		return 0;
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		if (op->flags & ~SLAB_FLAGS_PERMITTED)
			return fail(x, -EINVAL, "unknown slab flags");
		if (count >= 2 && !slots_ok(b, op->slot, 2))
			return fail(x, -EINVAL, "bad slots");
		x->sflags = op->flags;
		x->align = op->align;
		x->size = op->size;
		return 0;
	case MEMCGFS_OP_KMEM_CACHE_DESTROY:
	case MEMCGFS_OP_DRAIN:
		return 0;
	case MEMCGFS_OP_WHOAMI:
		if (!count || !slots_ok(b, op->slot, count))
			return fail(x, -EINVAL, "bad count or slots");
		return 0;
	default:
		return fail(x, -EINVAL, "unknown operation");
	}
}

/* Results of a successful operation into the returned copy. */
static int batch_results(const struct batch *b, const struct ctl_caller *who,
			 const struct memcgfs_ctl_op *op, const struct ctl_exec *x)
{
	unsigned char *slot = b->out + slot_off(op->slot);

	switch (op->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		memcpy(slot, x->out, (size_t)x->count * 8);
		break;
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		if (op->count >= 2) {
			struct memcgfs_ctl_cache_info ci = {
				.objsize = x->info.object_size,
				.size = x->info.size,
				.objperslab = x->info.objects,
				.pagesperslab = 1u << x->info.order,
			};

			memcpy(slot, &ci, sizeof(ci));
		}
		break;
	case MEMCGFS_OP_WHOAMI: {
		struct memcgfs_ctl_whoami w = { .pid = who->pid, .cpu = alloc_current_cpu() };
		char path[4096];
		const char *cg;
		size_t room = (size_t)(op->count - 1) * 8, l;
		int err = ctl_caller_cgroup(who, path, sizeof(path), &cg);

		memcpy(slot, &w, sizeof(w));
		if (err)
			return err;
		l = strlen(cg);
		if (l + 1 > room) {
			if (room) {
				memcpy(slot + 8, cg, room - 1);
				slot[8 + room - 1] = '\0';
			}
			return -ERANGE;
		}
		memcpy(slot + 8, cg, l + 1);
		break;
	}
	}
	return 0;
}

int ctl_ioctl(const struct ctl_caller *who, unsigned int cmd,
	      const void *in_buf, size_t in_len, void *out_buf, size_t out_len)
{
	static __thread uint64_t in_copy[MEMCGFS_CTL_MAX_SIZE / 8];
	struct memcgfs_ctl_hdr hdr;
	struct batch b;
	struct alloc_ctx ctx;
	unsigned int size, done = 0, failed = 0;

	if (_IOC_TYPE(cmd) != MEMCGFS_IOC_MAGIC || _IOC_NR(cmd) != MEMCGFS_IOC_NR_BATCH)
		return -ENOTTY;
	size = _IOC_SIZE(cmd);
	if (_IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) || size < MEMCGFS_CTL_MIN_SIZE ||
	    size > MEMCGFS_CTL_MAX_SIZE || size % 8)
		return -EINVAL;
	if (!in_buf || in_len < size || !out_buf || out_len < size)
		return -EINVAL;
	/* inputs from a private copy: out_buf may be in_buf */
	memcpy(in_copy, in_buf, size);
	memcpy(&hdr, in_copy, sizeof(hdr));
	if (hdr.version != MEMCGFS_CTL_VERSION || hdr.flags || hdr.reserved || !hdr.nr_ops ||
	    MEMCGFS_CTL_BATCH_SIZE((size_t)hdr.nr_ops, 0) > size)
		return -EINVAL;
	memmove(out_buf, in_copy, size);
	b.in = (const unsigned char *)in_copy;
	b.out = out_buf;
	b.nr_ops = hdr.nr_ops;
	b.words = (size - (unsigned int)sizeof(struct memcgfs_ctl_hdr)) / 8;

	ctl_caller_enter(who, &ctx);
	for (unsigned int i = 0; i < b.nr_ops; i++) {
		size_t off = slot_off(i * (unsigned int)MEMCGFS_CTL_OP_WORDS);
		char name[MEMCGFS_CTL_NAME_MAX], site[MEMCGFS_CTL_SITE_MAX];
		struct memcgfs_ctl_op op;
		struct ctl_exec x;
		int err;

		memcpy(&op, b.in + off, sizeof(op));
		memset(&x, 0, sizeof(x));
		err = batch_decode(&b, &op, &x, name, site);
		if (!err) {
			x.out = ctl_handle_scratch;
			err = ctl_exec_op(who, &ctx, &x);
			ctx.site = NULL;
		}
		if (!err)
			err = batch_results(&b, who, &op, &x);
		op.error = err;
		memcpy(b.out + off + offsetof(struct memcgfs_ctl_op, error), &op.error,
		       sizeof(op.error));
		if (err)
			failed++;
		else
			done++;
	}
	ctl_caller_leave();
	hdr.nr_done = (uint16_t)done;
	hdr.nr_failed = (uint16_t)failed;
	memcpy(out_buf, &hdr, sizeof(hdr));
	return 0;
}
