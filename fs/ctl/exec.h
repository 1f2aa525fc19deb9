/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/exec.h - the executor of memcgfs.ctl (private to fs/ctl/).
 *
 * Both front ends, the text parser (ctl.c) and the ioctl batch decoder
 * (batch.c), fill one struct ctl_exec and run it through ctl_exec_op
 * (exec.c) as the caller, between ctl_caller_enter and ctl_caller_leave.
 */
#ifndef MEMCGFS_FS_CTL_EXEC_H
#define MEMCGFS_FS_CTL_EXEC_H

#include "ctl.h"
#include <memcgfs/ctl.h>
#include "memcg.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define CTL_MAX_COUNT		MEMCGFS_CTL_MAX_COUNT

/* One operation, parsed from either front end. */
struct ctl_exec {
	int op;				/* MEMCGFS_OP_* */
	uint64_t size;
	gfp_t gfp;
	slab_flags_t sflags;
	unsigned int align;
	unsigned int order;
	unsigned int count;		/* allocations */
	enum memcg_page_type ptype;
	const char *name;
	const char *site;
	const uint64_t *in;		/* frees: handles */
	unsigned int nin;		/* those before 'malformed' */
	const char *malformed;		/* text: the first handle that is not one */
	uint64_t *out;			/* allocations: count handles */
	struct kmem_cache_info info;	/* kmem_cache_create */
	char detail[200];
};

/*
 * Per-thread scratch (a FUSE worker serves one request at a time): a
 * request's handles, its input or its output.
 */
extern __thread uint64_t ctl_handle_scratch[CTL_MAX_COUNT];

/* Act as the caller: memcg's current task, the trace's COMM-PID. */
void ctl_caller_enter(const struct ctl_caller *who, struct alloc_ctx *ctx);
void ctl_caller_leave(void);
/* Run one operation (x->out: where allocations put their handles). */
int ctl_exec_op(const struct ctl_caller *who, struct alloc_ctx *ctx, struct ctl_exec *x);

/* x->detail from fmt; returns err. */
static inline int __attribute__((format(printf, 3, 4)))
fail(struct ctl_exec *x, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->detail, sizeof(x->detail), fmt, ap);
	va_end(ap);
	return err;
}

static inline const char *op_name(int op)
{
	const char *name = memcgfs_op_name((unsigned int)op);

	return name ? name : "?";
}

#endif
