/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/exec.c - memcgfs.ctl's executor: one operation (struct ctl_exec,
 * from the text parser or the batch decoder) run against alloc/ and memcg/
 * as the requesting client: memcg's 'current' is the caller's task, alloc's
 * trace context its thread, comm and site=.  Handles: handles.c.
 */
#include "exec.h"
#include "handles.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

__thread uint64_t ctl_handle_scratch[CTL_MAX_COUNT];
static __thread struct ctl_claim tls_claims[CTL_MAX_COUNT];

/* docs/design.md: the pages a task owns (freed when it exits or is OOM-killed). */
static const gfp_t page_gfp[NR_MEMCG_PAGE_TYPES] = {
	[MEMCG_PAGE_ANON] = GFP_HIGHUSER_MOVABLE,
	[MEMCG_PAGE_FILE] = GFP_HIGHUSER_MOVABLE,
	[MEMCG_PAGE_SHMEM] = GFP_HIGHUSER_MOVABLE,
	[MEMCG_PAGE_KERNEL_STACK] = GFP_KERNEL_ACCOUNT,
	[MEMCG_PAGE_PAGETABLES] = GFP_KERNEL_ACCOUNT,
	[MEMCG_PAGE_PERCPU] = GFP_KERNEL_ACCOUNT,
	[MEMCG_PAGE_SOCK] = GFP_KERNEL,
	[MEMCG_PAGE_VMALLOC] = GFP_KERNEL_ACCOUNT,
};

/* ---- execution ---- */
/*
 * Free what was claimed.  Memory that memcg freed on its own meanwhile
 * (ctl_forget) is left alone; for pages memcg also refuses a free that
 * comes too late (its id tells the allocation apart).
 */
static void free_claimed(const struct ctl_claim *c, unsigned int n, bool via_cache)
{
	for (unsigned int i = 0; i < n; i++) {
		if (atomic_load_explicit(c[i].forgotten, memory_order_acquire))
			continue;
		if (c[i].kind == CTL_KIND_PAGES) {
			/* -ENOENT: reclaim, an exit or an OOM kill took it first */
			(void)memcg_free_pages(virt_to_page(c[i].addr), c[i].page_id);
		} else if (via_cache && c[i].cache) {
			kmem_cache_free(c[i].cache, c[i].addr);
		} else {
			kfree(c[i].addr);
		}
	}
}

/* Free a request's own allocations after a failure (those memcg left). */
static void rollback(const uint64_t *tokens, unsigned int n, bool via_cache)
{
	unsigned int nc = ctl_handles_claim_live(tokens, n, tls_claims);

	free_claimed(tls_claims, nc, via_cache);
	ctl_handles_release(tls_claims, nc);
}

static bool cache_reclaimable(const struct kmem_cache *s)
{
	struct kmem_cache_info info;

	kmem_cache_info(s, &info);
	return info.flags & SLAB_RECLAIM_ACCOUNT;
}

static int exec_alloc(const struct ctl_caller *who, struct ctl_exec *x)
{
	struct kmem_cache *s = NULL;
	struct ctl_cache *cc = NULL;
	unsigned int n = x->count, i, used = 0;
	bool reclaimable = false, any_reclaimable = false;
	struct obj_cgroup *objcg;
	uint64_t seq;
	int err = 0;

	if (x->op == MEMCGFS_OP_KMEM_CACHE_ALLOC) {
		err = ctl_cache_get(x->name, &s, &cc);
		if (err == -ENOENT)
			return fail(x, err, "no cache named %s", x->name);
		if (err)
			return fail(x, err, "%s is one of memcgfs's internal caches", x->name);
		reclaimable = cache_reclaimable(s);
	} else if (x->op == MEMCGFS_OP_KMALLOC) {
		reclaimable = x->gfp & __GFP_RECLAIMABLE;
	}
	/* the handles' entries are kernel memory of the caller: GFP_KERNEL_ACCOUNT */
	err = ctl_handles_reserve(n, who->uid, GFP_KERNEL_ACCOUNT | (x->gfp & __GFP_NOFAIL), &seq,
				  &objcg);
	if (err) {
		ctl_cache_put(cc);
		if (err == -EDQUOT)
			return fail(x, err, "uid %u would hold more than %u live handles "
				    "(fs.max_handles_per_uid): free some first", (unsigned int)who->uid,
				    ctl_handles_max_per_uid());
		if (err == -ENOSPC)
			return fail(x, -ENOMEM, "handle table full (%u handles, the last %u kept "
				    "for root)", CTL_MAX_HANDLES, CTL_MAX_HANDLES / 16);
		return fail(x, err, "no memory to charge %u handles' entries (%zu bytes each, "
			    "kernel memory of the caller's cgroup)", n, ctl_handle_bytes());
	}
	for (i = 0; i < n; i++) {
		struct kmem_cache *oc = NULL;
		uint64_t page_id = 0;
		enum ctl_kind kind;
		void *p = NULL;
		int e = -ENOMEM;

		switch (x->op) {
		case MEMCGFS_OP_KMALLOC:
			kind = CTL_KIND_KMALLOC;
			p = kmalloc(x->size, x->gfp);
			if (p)
				oc = alloc_object_cache(p, NULL);	/* NULL: large */
			break;
		case MEMCGFS_OP_KMEM_CACHE_ALLOC:
			kind = CTL_KIND_CACHE;
			p = kmem_cache_alloc(s, x->gfp);
			oc = s;
			break;
		default: {
			struct page *page = memcg_alloc_pages(x->ptype, page_gfp[x->ptype],
							      x->order, &e);

			kind = CTL_KIND_PAGES;
			if (page) {
				p = page_address(page);
				page_id = memcg_page_id(page);
			}
			break;
		}
		}
		if (!p) {
			err = e ? e : -ENOMEM;
			if (n > 1)
				fail(x, err, "%s: allocation %u of %u failed (%s); the others were freed",
				     op_name(x->op), i + 1, n, err == -ENOMEM ? "out of memory" : "refused");
			else
				fail(x, err, "%s: %s", op_name(x->op),
				     err == -ENOMEM ? "out of memory" : "refused");
			break;
		}
		used++;
		any_reclaimable |= reclaimable && oc;
		e = ctl_handles_publish(p, kind, oc, page_id, cc, reclaimable && oc, objcg, who->uid,
					seq, &x->out[i]);
		if (e == -ENOMEM) {
			/* no memory for its shrinker list: still ours, free it */
			if (kind == CTL_KIND_CACHE)
				kmem_cache_free(oc, p);
			else
				kfree(p);
			err = fail(x, -ENOMEM, "%s: no memory for handle %u of %u; the others were "
				   "freed", op_name(x->op), i + 1, n);
			break;
		}
		if (e) {
			err = fail(x, -ENOMEM, "%s: allocation %u of %u was freed by memcg (OOM kill) "
				   "during the request", op_name(x->op), i + 1, n);
			break;
		}
	}
	ctl_handles_unreserve(n - used, who->uid, objcg);
	if (!err && (any_reclaimable || !ctl_handles_quiet_since(seq)) &&
	    !ctl_handles_commit(x->out, n))
		err = fail(x, -ENOMEM, "%s: memory freed by memcg (OOM kill) during the request; "
			   "the rest was freed", op_name(x->op));
	if (err)
		rollback(x->out, i < n ? i : n, x->op == MEMCGFS_OP_KMEM_CACHE_ALLOC);
	ctl_cache_put(cc);
	return err;
}

/*
 * A request's handles whole, in request order (a malformed one in its
 * turn): claimed into tls_claims (take), or only looked up.  The number of
 * claims, or -errno with x->detail naming the first bad handle.
 */
static int check_handles(const struct ctl_caller *who, struct ctl_exec *x, unsigned int kinds,
			 const struct kmem_cache *s, bool allow_null, bool take)
{
	unsigned int bad = 0, total = x->nin + (x->malformed ? 1 : 0);
	const char *undone = take ? "nothing freed" : "nothing done";
	char why[128];
	int n;

	if (x->malformed) {
		/* the handles before it may hold the first error */
		n = ctl_handles_check(x->in, x->nin, kinds, s, allow_null, who->uid, tls_claims,
				      &bad, why, sizeof(why));
		if (n >= 0) {
			n = -EINVAL;
			bad = x->nin;
			snprintf(why, sizeof(why), "malformed handle '%.48s'", x->malformed);
		}
	} else {
		n = (take ? ctl_handles_claim : ctl_handles_check)(x->in, x->nin, kinds, s,
								    allow_null, who->uid,
								    tls_claims, &bad, why,
								    sizeof(why));
	}
	if (n < 0 && total > 1)
		return fail(x, n, "%s (handle %u of %u); %s", why, bad + 1, total, undone);
	if (n < 0)
		return fail(x, n, "%s", why);
	return n;
}

/* mark_page_accessed: every handle checked first, then each page referenced. */
static int exec_mark(const struct ctl_caller *who, struct ctl_exec *x)
{
	int n = check_handles(who, x, CTL_KINDS_PAGES, NULL, false, false);

	/* a page freed since its check (reclaim, a free): nothing to reference */
	for (int i = 0; i < n; i++)
		(void)memcg_mark_page_accessed(virt_to_page(tls_claims[i].addr),
					       tls_claims[i].page_id);
	return n < 0 ? n : 0;
}

static int exec_free(const struct ctl_caller *who, struct ctl_exec *x)
{
	struct kmem_cache *s = NULL;
	struct ctl_cache *cc = NULL;
	unsigned int kinds = CTL_KINDS_OBJECT;
	int n;

	if (x->op == MEMCGFS_OP_FREE_PAGES) {
		kinds = CTL_KINDS_PAGES;
	} else if (x->op == MEMCGFS_OP_KMEM_CACHE_FREE) {
		int err = ctl_cache_get(x->name, &s, &cc);

		if (err == -ENOENT)
			return fail(x, err, "no cache named %s", x->name);
		if (err)
			return fail(x, err, "%s is one of memcgfs's internal caches", x->name);
	}
	n = check_handles(who, x, kinds, s, x->op == MEMCGFS_OP_KFREE, true);
	if (n < 0) {
		ctl_cache_put(cc);
		return n;
	}
	free_claimed(tls_claims, (unsigned int)n, x->op == MEMCGFS_OP_KMEM_CACHE_FREE);
	ctl_handles_release(tls_claims, (unsigned int)n);
	ctl_cache_put(cc);
	return 0;
}

static int exec_create(const struct ctl_caller *who, struct ctl_exec *x)
{
	int err;

	if (!x->size || x->size > KMALLOC_MAX_SIZE)
		return fail(x, -EINVAL, "object size %" PRIu64 " outside 1..%zu", x->size,
			    (size_t)KMALLOC_MAX_SIZE);
	err = ctl_cache_create(x->name, (unsigned int)x->size, x->align, x->sflags, who->uid,
			       &x->info);
	switch (err) {
	case 0:
		return 0;
	case -EEXIST:
		return fail(x, err, "a cache named %s exists", x->name);
	case -EINVAL:
		return fail(x, err, "bad cache geometry (align %u must be 0 or a power of two "
			    "up to %zu)", x->align, (size_t)KMALLOC_MAX_SIZE);
	case -ENOMEM:
		return fail(x, err, "cannot create %s: out of memory or too many caches%s", x->name,
			    x->sflags & SLAB_PANIC ? " (SLAB_PANIC: an error here, not a panic)" : "");
	default:
		return fail(x, err, "cannot create %s", x->name);
	}
}

static int exec_destroy(const struct ctl_caller *who, struct ctl_exec *x)
{
	int err = ctl_cache_destroy(x->name, who->uid);

	switch (err) {
	case 0:
		return 0;
	case -ENOENT:
		return fail(x, err, "no cache named %s", x->name);
	case -EPERM:
		return fail(x, err, "%s was not created by this user through memcgfs.ctl", x->name);
	case -EBUSY:
		return fail(x, err, "%s still has objects", x->name);
	default:
		return fail(x, err, "cannot destroy %s", x->name);
	}
}

int ctl_exec_op(const struct ctl_caller *who, struct alloc_ctx *ctx, struct ctl_exec *x)
{
	ctx->site = x->site;
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		return exec_alloc(who, x);
	case MEMCGFS_OP_KFREE:
	case MEMCGFS_OP_KMEM_CACHE_FREE:
	case MEMCGFS_OP_FREE_PAGES:
		return exec_free(who, x);
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		return exec_create(who, x);
	case MEMCGFS_OP_KMEM_CACHE_DESTROY:
		return exec_destroy(who, x);
	case MEMCGFS_OP_DRAIN:
		memcg_drain();
		return 0;
	case MEMCGFS_OP_WHOAMI:
		return 0;
	case MEMCGFS_OP_MARK_PAGE_ACCESSED:
		return exec_mark(who, x);
	default:
		return fail(x, -EINVAL, "unknown operation %d", x->op);
	}
}

void ctl_caller_enter(const struct ctl_caller *who, struct alloc_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->pid = who->tid ? who->tid : who->pid;
	memcpy(ctx->comm, who->comm, sizeof(ctx->comm));
	ctx->comm[sizeof(ctx->comm) - 1] = '\0';
	alloc_set_ctx(ctx);
	memcg_set_current(who->task);
}

void ctl_caller_leave(void)
{
	memcg_set_current(NULL);
	alloc_set_ctx(NULL);
}

int ctl_caller_cgroup(const struct ctl_caller *c, char *buf, size_t len, const char **path)
{
	if (c->cgroup_of) {
		int err = c->cgroup_of(c->cgroup_arg, buf, len);

		if (err < 0)
			return err;
		*path = buf;
		return 0;
	}
	*path = c->cgroup ? c->cgroup : "/";
	return 0;
}
