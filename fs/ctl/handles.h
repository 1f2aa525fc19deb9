/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/handles.h - memcgfs.ctl's handle table and cache registry
 * (private to fs/ctl/).
 *
 * A handle is a 64-bit token naming one allocation made through the
 * control file: an entry of a table (kind, address, cache, uid,
 * generation), the token being the entry's index and generation passed
 * through a keyed permutation (so tokens are opaque and not guessable in
 * practice).  Freeing an entry bumps its generation: a stale token never
 * matches a later allocation.  An address index (hash) lets ctl_forget()
 * make the handles of memory memcg freed on its own stale.
 *
 * Lock order: the cache registry's lock, then the table's lock.  Neither is
 * held while alloc/ or memcg/ allocate or free (they may call ctl_forget).
 *
 * The shrinker (registered with memcg by ctl_handles_init): reclaim frees
 * reclaimable objects handed out through the control file (SLAB_RECLAIM_ACCOUNT
 * caches, __GFP_RECLAIMABLE kmallocs: every kmalloc-rcl-N object), oldest
 * first, charged to the memcg being reclaimed; their handles go stale.
 * It claims its victims under the table lock as a client's free does, so a
 * racing free of the same handle gets EINVAL, never a double free.
 */
#ifndef MEMCGFS_FS_CTL_HANDLES_H
#define MEMCGFS_FS_CTL_HANDLES_H

#include "alloc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum ctl_kind {
	CTL_KIND_NONE = 0,
	CTL_KIND_KMALLOC,	/* kmalloc(): cache = its slab cache, NULL if large */
	CTL_KIND_CACHE,		/* kmem_cache_alloc(): cache, cc if a ctl cache */
	CTL_KIND_PAGES,		/* memcg_alloc_pages(): addr = page_address */
};

#define CTL_KIND_BIT(k)		(1u << (k))
#define CTL_KINDS_OBJECT	(CTL_KIND_BIT(CTL_KIND_KMALLOC) | CTL_KIND_BIT(CTL_KIND_CACHE))
#define CTL_KINDS_PAGES		CTL_KIND_BIT(CTL_KIND_PAGES)

/* Most live handles (the table grows in chunks up to this). */
#define CTL_MAX_HANDLES		(1u << 24)
/* Most caches created through the control file. */
#define CTL_MAX_CACHES		4096u

struct ctl_cache;
struct memcg_task;

/* One handle taken for freeing (the entry is busy until released). */
struct ctl_claim {
	uint32_t idx;
	uint8_t kind;
	void *addr;
	union {
		struct kmem_cache *cache;	/* objects */
		uint64_t page_id;		/* pages: memcg's allocation id */
	};
	_Atomic uint8_t *forgotten;	/* set by ctl_forget meanwhile: do not free */
	struct obj_cgroup *objcg;	/* charged for the entry: release uncharges it */
};

int ctl_handles_init(void);
void ctl_handles_exit(void);

/*
 * ctl_handles_reserve - reserve n entries for uid's publish before
 * allocating, and take the forget sequence (*seq) to give to publish and
 * quiet_since.  The entries are the daemon's memory kept for the caller:
 * ctl_handle_bytes() each, charged to memcg's current task (the caller)
 * with gfp as an accounted kernel object (*objcg: where the charge went,
 * NULL if not accounted; give it to publish and unreserve).
 * -EDQUOT: a non-root uid would hold more than fs.max_handles_per_uid live
 * and reserved entries; -ENOSPC: the table is full (non-root uids together
 * may not take the last CTL_MAX_HANDLES / 16 entries, kept for root);
 * -ENOMEM: no memory for a chunk of entries, or the charge failed
 * (memory.max).  Unreserve what was not published.
 */
int ctl_handles_reserve(unsigned int n, uid_t uid, gfp_t gfp, uint64_t *seq,
			struct obj_cgroup **objcg);
void ctl_handles_unreserve(unsigned int n, uid_t uid, struct obj_cgroup *objcg);
/* Bytes of the daemon's memory a handle costs (what reserve charges). */
size_t ctl_handle_bytes(void);
/* fs.max_handles_per_uid (0: no cap but the table's); root has none. */
void ctl_handles_set_max_per_uid(unsigned int max);
unsigned int ctl_handles_max_per_uid(void);
/* A non-root uid's live and reserved handles (0 for root). */
unsigned long ctl_handles_nr_uid(uid_t uid);

/*
 * Open sessions (memcgfs.ctl file descriptions) per non-root uid:
 * ctl_sessions_get counts one more, or -EMFILE past fs.max_sessions_per_uid
 * (0: no cap); -ENOMEM if the uid's counter cannot be made.  Root is
 * never counted.
 */
void ctl_sessions_set_max_per_uid(unsigned int max);
int ctl_sessions_get(uid_t uid);
void ctl_sessions_put(uid_t uid);
unsigned long ctl_sessions_nr_uid(uid_t uid);
/* No ctl_forget() at all since seq (then the published handles are live). */
bool ctl_handles_quiet_since(uint64_t seq);

/*
 * ctl_handles_publish - enter a fresh allocation (consumes one reservation):
 * objects with their slab cache (NULL for a large kmalloc) and, for objects
 * of a ctl cache, cc (the handle takes a reference); pages with their
 * allocation id (memcg_page_id), which memcg_free_pages checks.  A reclaimable object (its cache has SLAB_RECLAIM_ACCOUNT) becomes
 * the shrinker's only when its request commits.
 * objcg, uid: reserve's.  The reservation is spent either way (a failed
 * publish gives back its count and charge).
 * Returns 0 and the token, or -ESTALE when memcg already freed the memory
 * (ctl_forget of addr since seq, before it was published): the caller must
 * not free it; or -ENOMEM when a reclaimable object's shrinker list could
 * not be made: the object is not published and the caller frees it.
 */
int ctl_handles_publish(void *addr, enum ctl_kind kind, struct kmem_cache *cache,
			uint64_t page_id, struct ctl_cache *cc, bool reclaimable,
			struct obj_cgroup *objcg, uid_t uid, uint64_t seq, uint64_t *token);

/*
 * ctl_handles_claim - validate a request's handles whole and take them.
 * kinds: the acceptable kinds (CTL_KIND_BIT); cache: the cache every object
 * must belong to, or NULL; allow_null: token 0 is skipped (kfree(NULL)),
 * else it is invalid.  uid: the caller's (0 may free anyone's).
 * On success returns the number of claims written to out (tokens that are 0
 * are not claimed).  On failure returns -EINVAL or -EPERM, nothing is taken,
 * *bad is the index of the first bad token and why a reason.
 */
int ctl_handles_claim(const uint64_t *tokens, unsigned int n, unsigned int kinds,
		      const struct kmem_cache *cache, bool allow_null, uid_t uid,
		      struct ctl_claim *out, unsigned int *bad, char *why, size_t why_len);
/*
 * ctl_handles_check - the same validation, nothing taken: out describes the
 * handles as they were (their memory may be freed any time after).
 */
int ctl_handles_check(const uint64_t *tokens, unsigned int n, unsigned int kinds,
		      const struct kmem_cache *cache, bool allow_null, uid_t uid,
		      struct ctl_claim *out, unsigned int *bad, char *why, size_t why_len);
/* Take whichever of the tokens are still live (rollback of a request's own). */
unsigned int ctl_handles_claim_live(const uint64_t *tokens, unsigned int n,
				    struct ctl_claim *out);
/* Are all still live? */
bool ctl_handles_all_live(const uint64_t *tokens, unsigned int n);
/*
 * ctl_handles_commit - the end of a successful allocation request: false if
 * memcg freed any of them meanwhile (the request then fails and rolls back),
 * else the reclaimable ones join the shrinker's list (oldest first): a
 * request never has its own allocations reclaimed under it.
 */
bool ctl_handles_commit(const uint64_t *tokens, unsigned int n);
/* After freeing (or deciding not to): the entries become free, tokens stale. */
void ctl_handles_release(const struct ctl_claim *c, unsigned int n);

/* Live handles, and those of them the shrinker may take (tests, stats). */
unsigned long ctl_handles_nr_live(void);
unsigned long ctl_handles_nr_reclaimable(void);

/* ---- the cache registry ---- */
/*
 * A cache created through the control file.  refs counts live handles of
 * its objects and requests allocating from it: destroy is EBUSY while
 * any remain.
 */
struct ctl_cache {
	_Atomic long refs;
	struct ctl_cache *next;
	struct kmem_cache *s;
	uid_t uid;
	char name[64];
};
int ctl_cache_create(const char *name, unsigned int size, unsigned int align,
		     slab_flags_t flags, uid_t uid, struct kmem_cache_info *info);
int ctl_cache_destroy(const char *name, uid_t uid);
/*
 * ctl_cache_get - the cache to allocate from: a ctl cache (*cc referenced,
 * drop with ctl_cache_put) or a kmalloc cache (*cc NULL).  -ENOENT, or
 * -EPERM for the daemon's internal caches.
 */
int ctl_cache_get(const char *name, struct kmem_cache **s, struct ctl_cache **cc);
void ctl_cache_put(struct ctl_cache *cc);
void ctl_cache_exit(void);

#endif
