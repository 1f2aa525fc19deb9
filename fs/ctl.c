/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl.c - memcgfs.ctl: the text protocol and the batched ioctl.
 *
 * Both front ends parse into one operation (struct ctl_exec) and run it
 * through the same executor against alloc/ and memcg/, as the requesting
 * client: memcg's 'current' is the caller's task, alloc's trace context
 * its thread, comm and site=.  Handles live in ctl_handles.c.
 *
 * Text protocol decisions (docs/design.md leaves them to us):
 *  - A request is printable ASCII: bytes 0x20..0x7e and tab, one optional
 *    trailing "\n".  NUL, other control bytes, bytes >= 0x7f (so any
 *    non-ASCII UTF-8 too), a second line or more than 4096 bytes (newline
 *    included) are EINVAL.  Words are separated by spaces and tabs.
 *  - Words are case-sensitive.  Optional arguments may come in any order,
 *    each at most once; anything else is EINVAL ("unexpected argument").
 *  - SIZE: decimal digits with an optional K, M or G suffix (lowercase
 *    k, m, g too, as the kernel's memparse; K = 1024).  No sign, no hex,
 *    no spaces, no other suffix.  A value that overflows 64 bits is EINVAL.
 *    kmalloc SIZE must be 1..KMALLOC_MAX_SIZE (4 MiB with 4 KiB pages),
 *    else EINVAL (it could never succeed); kmem_cache_create the same
 *    (alloc's rule).
 *  - GFP and SLAB_FLAGS: '|'-joined names.  Every name alloc's parser
 *    knows (the ones the trace prints: docs/design.md's list and the kernel's other
 *    gfp names, e.g. GFP_ATOMIC, GFP_NOWAIT, __GFP_NOWARN; and "none" for
 *    0) is accepted; anything else is EINVAL.
 *  - xN: "x" and decimal digits, 1 <= N <= 1024.  site=NAME: 1..39
 *    printable characters (the trace keeps 39).  order=O: 0..10.
 *    align=A: a SIZE, 0 (the minimum) or a power of two (alloc checks).
 *  - A HANDLE is 1..16 hex digits (either case, no 0x); "0" is NULL:
 *    kfree accepts it (no-op), kmem_cache_free and free_pages refuse it
 *    (EINVAL; the kernel would crash).  At most 1024 handles a request.
 *  - Caches: kmem_cache_alloc/kmem_cache_free accept the caches created
 *    through memcgfs.ctl and the kmalloc caches (kmalloc-64, ...);
 *    the daemon's internal caches (mem_cgroup, ...) are EPERM;
 *    kmem_cache_destroy only works on caches created through memcgfs.ctl
 *    (EPERM otherwise; ENOENT for no such cache).  kmem_cache_free accepts
 *    a kmalloc object with its own kmalloc cache, as the kernel does.
 *    At most 4096 caches (ENOMEM past that).
 *  - alloc_pages uses the kernel's gfp for each type: GFP_HIGHUSER_MOVABLE
 *    for anon, file and shmem, GFP_KERNEL for sock, GFP_KERNEL_ACCOUNT for
 *    kernel_stack, pagetables, percpu and vmalloc.
 *  - An allocation of an xN request that memcg frees on its own before the
 *    request returns (the task was OOM-killed meanwhile) fails the request
 *    with ENOMEM; the rest is freed, as for any failure.
 *  - Reclaimable objects (SLAB_RECLAIM_ACCOUNT caches, __GFP_RECLAIMABLE
 *    kmallocs) are given to memcg's reclaim through ctl_handles.c's
 *    shrinker: it frees the oldest ones charged to the memcg under
 *    reclaim, their handles go stale (EINVAL), the trace shows the frees
 *    under the client whose charge or memory.reclaim write caused them.
 */
#include "ctl.h"
#include "ctl_handles.h"
#include "memcgfs_ctl.h"
#include "memcg.h"
#include "lib.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTL_REQUEST_MAX		4096u
#define CTL_MAX_COUNT		MEMCGFS_CTL_MAX_COUNT
#define CTL_SITE_LEN		(MEMCGFS_CTL_SITE_MAX - 1)
#define CTL_NAME_LEN		(MEMCGFS_CTL_NAME_MAX - 1)
#define CTL_HANDLE_HEX		16
#define CTL_MIN_REPLY		512u

/* The ABI's constants are the kernel's, as alloc/ and memcg/ use them. */
_Static_assert(MEMCGFS_GFP_ACCOUNT == __GFP_ACCOUNT, "gfp ABI");
_Static_assert(MEMCGFS_GFP_KERNEL == GFP_KERNEL, "gfp ABI");
_Static_assert(MEMCGFS_GFP_RECLAIMABLE == __GFP_RECLAIMABLE, "gfp ABI");
_Static_assert(MEMCGFS_GFP_ZERO == __GFP_ZERO, "gfp ABI");
_Static_assert(MEMCGFS_GFP_NOFAIL == __GFP_NOFAIL, "gfp ABI");
_Static_assert(MEMCGFS_GFP_NORETRY == __GFP_NORETRY, "gfp ABI");
_Static_assert(MEMCGFS_GFP_NOWARN == __GFP_NOWARN, "gfp ABI");
_Static_assert(MEMCGFS_SLAB_HWCACHE_ALIGN == SLAB_HWCACHE_ALIGN, "slab ABI");
_Static_assert(MEMCGFS_SLAB_RECLAIM_ACCOUNT == SLAB_RECLAIM_ACCOUNT, "slab ABI");
_Static_assert(MEMCGFS_SLAB_PANIC == SLAB_PANIC, "slab ABI");
_Static_assert(MEMCGFS_SLAB_NO_MERGE == SLAB_NO_MERGE, "slab ABI");
_Static_assert(MEMCGFS_SLAB_ACCOUNT == SLAB_ACCOUNT, "slab ABI");
_Static_assert(MEMCGFS_PAGE_ANON == MEMCG_PAGE_ANON && MEMCGFS_PAGE_FILE == MEMCG_PAGE_FILE &&
	       MEMCGFS_PAGE_SHMEM == MEMCG_PAGE_SHMEM &&
	       MEMCGFS_PAGE_KERNEL_STACK == MEMCG_PAGE_KERNEL_STACK &&
	       MEMCGFS_PAGE_PAGETABLES == MEMCG_PAGE_PAGETABLES &&
	       MEMCGFS_PAGE_PERCPU == MEMCG_PAGE_PERCPU && MEMCGFS_PAGE_SOCK == MEMCG_PAGE_SOCK &&
	       MEMCGFS_PAGE_VMALLOC == MEMCG_PAGE_VMALLOC && NR_MEMCG_PAGE_TYPES == 8,
	       "page type ABI");
_Static_assert(MEMCGFS_CTL_MAX_SIZE <= 16383, "FUSE restricted ioctl size");
_Static_assert(MEMCGFS_CTL_NAME_MAX == 64, "alloc's kmem_cache names hold 63 characters");
_Static_assert(MEMCGFS_CTL_SITE_MAX == 40, "alloc's trace keeps 39 characters of site=");

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

struct ctl_session {
	pthread_mutex_t lock;
	char *reply;
	size_t len, pos, cap;
	uid_t uid;			/* counted for fs.max_sessions_per_uid */
};

/* A session's most memory: its struct and the longest reply (x1024 handles). */
#define CTL_SESSION_MAX_BYTES	(sizeof(struct ctl_session) + CTL_MAX_COUNT * (CTL_HANDLE_HEX + 1) + \
				 CTL_MIN_REPLY)

static bool ctl_up;
/* Per-thread scratch (a FUSE worker serves one request at a time). */
static __thread uint64_t tls_handles[CTL_MAX_COUNT];
static __thread struct ctl_claim tls_claims[CTL_MAX_COUNT];

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

/* docs/design.md: the pages a task owns (freed when it exits or is OOM-killed). */
static const char *op_name(int op)
{
	static const char *const names[] = {
		[MEMCGFS_OP_KMALLOC] = "kmalloc",
		[MEMCGFS_OP_KFREE] = "kfree",
		[MEMCGFS_OP_KMEM_CACHE_CREATE] = "kmem_cache_create",
		[MEMCGFS_OP_KMEM_CACHE_ALLOC] = "kmem_cache_alloc",
		[MEMCGFS_OP_KMEM_CACHE_FREE] = "kmem_cache_free",
		[MEMCGFS_OP_KMEM_CACHE_DESTROY] = "kmem_cache_destroy",
		[MEMCGFS_OP_ALLOC_PAGES] = "alloc_pages",
		[MEMCGFS_OP_FREE_PAGES] = "free_pages",
		[MEMCGFS_OP_DRAIN] = "drain",
		[MEMCGFS_OP_WHOAMI] = "whoami",
		[MEMCGFS_OP_MARK_PAGE_ACCESSED] = "mark_page_accessed",
	};

	return op > 0 && op <= MEMCGFS_OP_MARK_PAGE_ACCESSED ? names[op] : "?";
}

static int __attribute__((format(printf, 3, 4)))
fail(struct ctl_exec *x, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->detail, sizeof(x->detail), fmt, ap);
	va_end(ap);
	return err;
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(-err);

	return n ? n : "EIO";
}

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

static int exec_op(const struct ctl_caller *who, struct alloc_ctx *ctx, struct ctl_exec *x)
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

/* Act as the caller: memcg's current task, the trace's COMM-PID. */
static void caller_enter(const struct ctl_caller *who, struct alloc_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->pid = who->tid ? who->tid : who->pid;
	memcpy(ctx->comm, who->comm, sizeof(ctx->comm));
	ctx->comm[sizeof(ctx->comm) - 1] = '\0';
	alloc_set_ctx(ctx);
	memcg_set_current(who->task);
}

static void caller_leave(void)
{
	memcg_set_current(NULL);
	alloc_set_ctx(NULL);
}

/* ---- sessions and replies ---- */
struct ctl_session *ctl_session_new(void)
{
	struct ctl_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->reply = malloc(CTL_MIN_REPLY);
	if (!s->reply) {
		free(s);
		return NULL;
	}
	s->cap = CTL_MIN_REPLY;
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

struct ctl_session *ctl_session_open(uid_t uid, int *err)
{
	struct ctl_session *s;

	*err = ctl_sessions_get(uid);
	if (*err)
		return NULL;
	s = ctl_session_new();
	if (!s) {
		ctl_sessions_put(uid);
		*err = -ENOMEM;
		return NULL;
	}
	s->uid = uid;
	return s;
}

void ctl_session_free(struct ctl_session *s)
{
	if (!s)
		return;
	ctl_sessions_put(s->uid);
	pthread_mutex_destroy(&s->lock);
	free(s->reply);
	free(s);
}

static int reply_reserve(struct ctl_session *s, size_t need)
{
	char *r;

	if (need <= s->cap)
		return 0;
	r = realloc(s->reply, need);
	if (!r)
		return -ENOMEM;
	s->reply = r;
	s->cap = need;
	return 0;
}

/* Append (the capacity was reserved; CTL_MIN_REPLY always holds an error). */
static void __attribute__((format(printf, 2, 3)))
reply_add(struct ctl_session *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= s->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->reply + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n < s->cap - s->len ? (size_t)n : s->cap - s->len - 1;
}

static int reply_error(struct ctl_session *s, int err, const char *detail)
{
	s->len = s->pos = 0;
	reply_add(s, "error %s %s\n", errname(err), detail);
	return err;
}

/*
 * The reply stays whole until the next request, read or not: a reader
 * that reads ahead and gives back what it did not use (a shell's read on
 * a seekable file) reads those bytes again.
 */
static size_t __ctl_read(struct ctl_session *s, size_t pos, char *buf, size_t len)
{
	size_t n = pos < s->len ? s->len - pos : 0;

	if (n > len)
		n = len;
	memcpy(buf, s->reply + pos, n);
	s->pos = pos + n;
	return n;
}

size_t ctl_read(struct ctl_session *s, char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = __ctl_read(s, s->pos, buf, len);
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t ctl_read_at(struct ctl_session *s, uint64_t pos, char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = __ctl_read(s, pos < s->len ? (size_t)pos : s->len, buf, len);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* ---- text parsing ---- */
/* Numbers (lib.h's u64_parse), SIZE (its size_parse): any failure is EINVAL. */
static int parse_u64(const char *s, uint64_t *out)
{
	return u64_parse(s, strlen(s), out) ? -EINVAL : 0;
}

/* a SIZE of at most 23 characters (more leading zeros are EINVAL) */
static int parse_size(const char *s, uint64_t *out)
{
	size_t l = strlen(s);

	return l >= 24 || size_parse(s, l, out) ? -EINVAL : 0;
}

static int parse_handle(const char *s, uint64_t *out)
{
	size_t l = strlen(s);
	uint64_t v = 0;

	if (!l || l > CTL_HANDLE_HEX)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return -EINVAL;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

enum {
	O_GFP = 1, O_COUNT = 2, O_SITE = 4, O_ORDER = 8, O_ALIGN = 16, O_SFLAGS = 32,
};

static bool is_count_word(const char *w)
{
	if (w[0] != 'x' || !w[1])
		return false;
	for (w++; *w; w++)
		if (*w < '0' || *w > '9')
			return false;
	return true;
}

/* Optional arguments, any order, each once. */
static int parse_opts(char **argv, int argc, unsigned int allowed, struct ctl_exec *x)
{
	unsigned int seen = 0;

	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		unsigned int what;

		if ((allowed & O_SITE) && !strncmp(w, "site=", 5))
			what = O_SITE;
		else if ((allowed & O_ORDER) && !strncmp(w, "order=", 6))
			what = O_ORDER;
		else if ((allowed & O_ALIGN) && !strncmp(w, "align=", 6))
			what = O_ALIGN;
		else if ((allowed & O_COUNT) && is_count_word(w))
			what = O_COUNT;
		else if (allowed & O_GFP)
			what = O_GFP;
		else if (allowed & O_SFLAGS)
			what = O_SFLAGS;
		else
			return fail(x, -EINVAL, "unexpected argument '%.48s'", w);
		if (seen & what)
			return fail(x, -EINVAL, "extra argument '%.48s'", w);
		seen |= what;
		switch (what) {
		case O_SITE: {
			size_t l = strlen(w + 5);

			if (!l || l > CTL_SITE_LEN)
				return fail(x, -EINVAL, "site= needs 1..%u characters", CTL_SITE_LEN);
			x->site = w + 5;
			break;
		}
		case O_ORDER: {
			uint64_t v;

			if (parse_u64(w + 6, &v) || v > MAX_PAGE_ORDER)
				return fail(x, -EINVAL, "bad order '%.48s' (0..%d)", w + 6,
					    MAX_PAGE_ORDER);
			x->order = (unsigned int)v;
			break;
		}
		case O_ALIGN: {
			uint64_t v;

			if (parse_size(w + 6, &v) || v > UINT32_MAX)
				return fail(x, -EINVAL, "bad align '%.48s'", w + 6);
			x->align = (unsigned int)v;
			break;
		}
		case O_COUNT: {
			uint64_t v;

			if (parse_u64(w + 1, &v) || v < 1 || v > CTL_MAX_COUNT)
				return fail(x, -EINVAL, "bad count '%.48s' (x1..x%d)", w,
					    CTL_MAX_COUNT);
			x->count = (unsigned int)v;
			break;
		}
		case O_GFP:
			if (gfp_parse(w, &x->gfp))
				return fail(x, -EINVAL, "bad gfp flags '%.48s'", w);
			break;
		case O_SFLAGS:
			if (slab_flags_parse(w, &x->sflags))
				return fail(x, -EINVAL, "bad slab flags '%.48s'", w);
			break;
		}
	}
	return 0;
}

static int parse_handles(char **argv, int argc, struct ctl_exec *x)
{
	if (argc < 1)
		return fail(x, -EINVAL, "%s: missing handle", op_name(x->op));
	if (argc > CTL_MAX_COUNT)
		return fail(x, -EINVAL, "%s: more than %d handles", op_name(x->op), CTL_MAX_COUNT);
	/*
	 * A malformed handle is refused in its turn: the first bad handle in
	 * request order decides the errno (another user's before it: EPERM).
	 */
	x->in = tls_handles;
	x->nin = 0;
	x->malformed = NULL;
	for (int i = 0; i < argc && !x->malformed; i++) {
		if (parse_handle(argv[i], &tls_handles[i]))
			x->malformed = argv[i];
		else
			x->nin++;
	}
	return 0;
}

static int parse_cache_name(const char *w, struct ctl_exec *x)
{
	if (strlen(w) > CTL_NAME_LEN)
		return fail(x, -EINVAL, "cache name longer than %d characters", CTL_NAME_LEN);
	x->name = w;
	return 0;
}

static int parse_kmalloc_size(const char *w, struct ctl_exec *x)
{
	if (parse_size(w, &x->size))
		return fail(x, -EINVAL, "bad size '%.48s'", w);
	if (!x->size)
		return fail(x, -EINVAL, "%s: size 0", op_name(x->op));
	if (x->size > KMALLOC_MAX_SIZE)
		return fail(x, -EINVAL, "%s: size %" PRIu64 " above KMALLOC_MAX_SIZE (%zu)",
			    op_name(x->op), x->size, (size_t)KMALLOC_MAX_SIZE);
	return 0;
}

/* argv[0] is the request word; fills x, 0 or -errno with x->detail. */
static int parse_request(char **argv, int argc, struct ctl_exec *x)
{
	static const struct {
		const char *word;
		int op;
	} words[] = {
		{ "kmalloc", MEMCGFS_OP_KMALLOC },
		{ "kfree", MEMCGFS_OP_KFREE },
		{ "kmem_cache_create", MEMCGFS_OP_KMEM_CACHE_CREATE },
		{ "kmem_cache_alloc", MEMCGFS_OP_KMEM_CACHE_ALLOC },
		{ "kmem_cache_free", MEMCGFS_OP_KMEM_CACHE_FREE },
		{ "kmem_cache_destroy", MEMCGFS_OP_KMEM_CACHE_DESTROY },
		{ "alloc_pages", MEMCGFS_OP_ALLOC_PAGES },
		{ "free_pages", MEMCGFS_OP_FREE_PAGES },
		{ "drain", MEMCGFS_OP_DRAIN },
		{ "whoami", MEMCGFS_OP_WHOAMI },
		{ "mark_page_accessed", MEMCGFS_OP_MARK_PAGE_ACCESSED },
	};
	int err;

	x->op = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(argv[0], words[i].word))
			x->op = words[i].op;
	if (!x->op)
		return fail(x, -EINVAL, "unknown request '%.48s'", argv[0]);
	x->gfp = GFP_KERNEL;
	x->count = 1;
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
		if (argc < 2)
			return fail(x, -EINVAL, "kmalloc: missing SIZE");
		err = parse_kmalloc_size(argv[1], x);
		if (err)
			return err;
		return parse_opts(argv + 2, argc - 2, O_GFP | O_COUNT | O_SITE, x);
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
		if (argc < 2)
			return fail(x, -EINVAL, "kmem_cache_alloc: missing NAME");
		err = parse_cache_name(argv[1], x);
		if (err)
			return err;
		return parse_opts(argv + 2, argc - 2, O_GFP | O_COUNT | O_SITE, x);
	case MEMCGFS_OP_ALLOC_PAGES:
		if (argc < 2)
			return fail(x, -EINVAL, "alloc_pages: missing TYPE");
		if (memcg_page_type_parse(argv[1], &x->ptype))
			return fail(x, -EINVAL, "unknown page type '%.48s'", argv[1]);
		return parse_opts(argv + 2, argc - 2, O_ORDER | O_COUNT, x);
	case MEMCGFS_OP_KFREE:
	case MEMCGFS_OP_FREE_PAGES:
	case MEMCGFS_OP_MARK_PAGE_ACCESSED:
		return parse_handles(argv + 1, argc - 1, x);
	case MEMCGFS_OP_KMEM_CACHE_FREE:
		if (argc < 2)
			return fail(x, -EINVAL, "kmem_cache_free: missing NAME");
		err = parse_cache_name(argv[1], x);
		if (err)
			return err;
		return parse_handles(argv + 2, argc - 2, x);
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		if (argc < 3)
			return fail(x, -EINVAL, "kmem_cache_create: missing %s",
				    argc < 2 ? "NAME and SIZE" : "SIZE");
		err = parse_cache_name(argv[1], x);
		if (err)
			return err;
		if (parse_size(argv[2], &x->size))
			return fail(x, -EINVAL, "bad size '%.48s'", argv[2]);
		x->sflags = 0;
		return parse_opts(argv + 3, argc - 3, O_ALIGN | O_SFLAGS, x);
	case MEMCGFS_OP_KMEM_CACHE_DESTROY:
		if (argc != 2)
			return fail(x, -EINVAL, argc < 2 ? "kmem_cache_destroy: missing NAME" :
				    "kmem_cache_destroy: extra argument");
		return parse_cache_name(argv[1], x);
	default:	/* drain, whoami */
		if (argc != 1)
			return fail(x, -EINVAL, "%s takes no argument", argv[0]);
		return 0;
	}
}

/* The request must be one line of printable ASCII. */
static int check_bytes(const char *buf, size_t len, struct ctl_exec *x)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n')
			return fail(x, -EINVAL, "more than one line");
		if (c == '\0')
			return fail(x, -EINVAL, "NUL byte at offset %zu", i);
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return fail(x, -EINVAL, "byte 0x%02x at offset %zu is not printable ASCII",
				    c, i);
	}
	return 0;
}

static int text_request(struct ctl_session *s, const struct ctl_caller *who,
			const char *buf, size_t len, struct ctl_exec *x)
{
	char line[CTL_REQUEST_MAX + 1];
	char *argv[CTL_REQUEST_MAX / 2 + 1];
	int argc = 0, err;
	struct alloc_ctx ctx;
	char *p;

	if (len > CTL_REQUEST_MAX)
		return fail(x, -EINVAL, "request longer than %u bytes", CTL_REQUEST_MAX);
	if (len && buf[len - 1] == '\n')
		len--;
	err = check_bytes(buf, len, x);
	if (err)
		return err;
	memcpy(line, buf, len);
	line[len] = '\0';
	for (p = line; *p;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	if (!argc)
		return fail(x, -EINVAL, "empty request");
	err = parse_request(argv, argc, x);
	if (err)
		return err;

	/* room for the reply first: after the allocations it would be too late */
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		err = reply_reserve(s, 4 + (size_t)x->count * (CTL_HANDLE_HEX + 1));
		break;
	case MEMCGFS_OP_WHOAMI:
		err = reply_reserve(s, 96 + strlen(who->cgroup ? who->cgroup : "/"));
		break;
	default:
		err = 0;
	}
	if (err)
		return fail(x, err, "no memory for the reply");

	x->out = tls_handles;
	caller_enter(who, &ctx);
	err = exec_op(who, &ctx, x);
	caller_leave();
	if (err)
		return err;

	s->len = s->pos = 0;
	reply_add(s, "ok");
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		for (unsigned int i = 0; i < x->count; i++)
			reply_add(s, " %016" PRIx64, x->out[i]);
		break;
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		reply_add(s, " %s objsize=%u size=%u objperslab=%u pagesperslab=%u",
			  x->info.name, x->info.object_size, x->info.size, x->info.objects,
			  1u << x->info.order);
		break;
	case MEMCGFS_OP_WHOAMI:
		reply_add(s, " pid=%d cgroup=%s cpu=%d", (int)who->pid,
			  who->cgroup ? who->cgroup : "/", alloc_current_cpu());
		break;
	}
	reply_add(s, "\n");
	return 0;
}

int ctl_request(struct ctl_session *s, const struct ctl_caller *who,
		const char *buf, size_t len)
{
	struct ctl_exec x;
	int err;

	memset(&x, 0, sizeof(x));
	pthread_mutex_lock(&s->lock);
	s->len = s->pos = 0;		/* a new request discards an unread reply */
	err = text_request(s, who, buf, len, &x);
	if (err)
		reply_error(s, err, x.detail[0] ? x.detail : "failed");
	pthread_mutex_unlock(&s->lock);
	return err;
}

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
		memcpy(tls_handles, b->in + slot_off(op->slot), (size_t)count * 8);
		x->in = tls_handles;
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
		const char *cg = who->cgroup ? who->cgroup : "/";
		size_t room = (size_t)(op->count - 1) * 8, l = strlen(cg);

		memcpy(slot, &w, sizeof(w));
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

	caller_enter(who, &ctx);
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
			x.out = tls_handles;
			err = exec_op(who, &ctx, &x);
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
	caller_leave();
	hdr.nr_done = (uint16_t)done;
	hdr.nr_failed = (uint16_t)failed;
	memcpy(out_buf, &hdr, sizeof(hdr));
	return 0;
}

/* ---- init ---- */
int ctl_init(void)
{
	int err;

	if (ctl_up)
		return -EBUSY;
	err = ctl_handles_init();
	if (err)
		return err;
	memcg_set_free_notify(ctl_forget);
	ctl_up = true;
	return 0;
}

unsigned int ctl_set_max_handles_per_uid(unsigned int max)
{
	if (!max)	/* 1% of the host's RAM in entries, at least 65536 */
		max = fs_host_share(ctl_handle_bytes(), 65536, CTL_MAX_HANDLES);
	ctl_handles_set_max_per_uid(max);
	return max;
}

unsigned int ctl_set_max_sessions_per_uid(unsigned int max)
{
	if (!max)	/* 1% of the host's RAM in sessions holding the longest reply */
		max = fs_host_share(CTL_SESSION_MAX_BYTES, 1024, 1048576);
	ctl_sessions_set_max_per_uid(max);
	return max;
}

void ctl_exit(void)
{
	if (!ctl_up)
		return;
	memcg_set_free_notify(NULL);
	ctl_handles_exit();
	ctl_cache_exit();
	ctl_up = false;
}
