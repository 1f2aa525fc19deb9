/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/handles.c - memcgfs.ctl's handle table (the caches: caches.c).
 *
 * Handles: a table of entries in chunks that never move (so a claim may keep
 * a pointer to its entry's 'forgotten' flag), a LIFO free list, an address
 * index (chained hash over the entries), all under one mutex held only for
 * table work, never across alloc/ or memcg/ calls: those may call
 * ctl_forget() or the shrinker from inside an allocation (an OOM kill frees
 * the victim's pages, reclaim takes file pages and reclaimable objects).
 *
 * The shrinker's lists hold the reclaimable objects of committed requests,
 * oldest first (a request's own allocations join them only when the request
 * succeeds, so reclaim never eats a request's first objects to make room for
 * its later ones), one list per obj_cgroup the objects are charged to: a
 * memcg-aware list_lru (memcg/list_lru.c, under this table's mutex, linking
 * entries by index).  This file keeps what is about handles: which entries
 * join, and the claim and free of the ones reclaim takes.  A new list is
 * allocated at publish: the one publish that can fail for want of memory,
 * and its caller frees the object and fails the request.
 *
 * A token is (generation << 32 | index) through a 4-round Feistel
 * permutation keyed at start-up: bijective, so decoding is exact; opaque
 * and not guessable in practice.  Freeing bumps the entry's generation.
 *
 * ctl_forget() of an address that is not (yet) in the index is recorded in
 * a small ring of "orphans" with a sequence number: an allocation that memcg
 * freed between its return and its publication (another client's charge
 * OOM-killed the allocating task in that window) is then recognised at
 * publication and not freed a second time.
 */
#include "ctl.h"
#include "handles.h"
#include "memcg.h"
#include "lib.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

enum { ST_FREE = 0, ST_LIVE, ST_BUSY };

struct handle {
	void *addr;
	union {
		struct kmem_cache *cache;	/* objects: their slab cache */
		uint64_t page_id;		/* pages: memcg's allocation id */
	};
	struct ctl_cache *cc;
	uint32_t gen;
	uint32_t uid;
	uint32_t next;			/* hash chain or free list: index + 1, 0 = end */
	struct list_lru_node lru;	/* a reclaimable object's: its objcg's list */
	struct obj_cgroup *objcg;	/* charged for the entry (NULL: not accounted) */
	uint8_t kind;
	uint8_t state;
	_Atomic uint8_t forgotten;
};

#define CHUNK_SHIFT	12
#define CHUNK_SIZE	(1u << CHUNK_SHIFT)
#define NR_CHUNKS	(CTL_MAX_HANDLES / CHUNK_SIZE)
#define ORPHAN_RING	1024u
#define MIN_BUCKETS	1024u

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle *chunks[NR_CHUNKS];
static uint32_t nr_entries;		/* entries ever created (chunks * CHUNK_SIZE) */
static uint32_t free_head;		/* index + 1 */
static uint32_t nr_free;
static uint32_t nr_reserved;
static uint32_t nr_live;
static uint32_t *buckets;		/* index + 1 */
static uint32_t nr_buckets;		/* power of two */
static uint32_t nr_indexed;
static uint32_t key[4];
static struct {
	uintptr_t addr;
	uint64_t seq;			/* forget_seq when it was recorded */
} orphans[ORPHAN_RING];
static uint64_t nr_orphans;		/* recorded so far (the ring's head) */
static _Atomic uint64_t forget_seq;	/* ctl_forget() calls so far */

static struct shrinker ctl_shrinker;
static struct list_lru ctl_lru;

/*
 * Per-uid counters (uid.c): handle_uids, live and reserved entries
 * (fs.max_handles_per_uid), whose total may not take the entries kept for
 * root (ROOT_RESERVE); session_uids, open sessions (fs.max_sessions_per_uid).
 */
#define ROOT_RESERVE	(CTL_MAX_HANDLES / 16)
static struct fs_uid_counts handle_uids;	/* table lock */
static uint32_t max_per_uid = CTL_MAX_HANDLES;
/* open sessions per non-root uid (fs.max_sessions_per_uid) */
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fs_uid_counts session_uids;
static uint32_t max_sessions_per_uid = UINT32_MAX;

static inline struct handle *H(uint32_t idx)
{
	return &chunks[idx >> CHUNK_SHIFT][idx & (CHUNK_SIZE - 1)];
}

/* ---- tokens ---- */
static inline uint32_t round_fn(uint32_t x, uint32_t k)
{
	x ^= k;
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}

static uint64_t encode(uint32_t idx, uint32_t gen)
{
	uint32_t l = gen, r = idx;

	for (int i = 0; i < 4; i++) {
		uint32_t t = l ^ round_fn(r, key[i]);

		l = r;
		r = t;
	}
	return (uint64_t)l << 32 | r;
}

static void decode(uint64_t token, uint32_t *idx, uint32_t *gen)
{
	uint32_t l = (uint32_t)(token >> 32), r = (uint32_t)token;

	for (int i = 3; i >= 0; i--) {
		uint32_t t = r ^ round_fn(l, key[i]);

		r = l;
		l = t;
	}
	*gen = l;
	*idx = r;
}

/* ---- the address index ---- */
static inline uint32_t addr_hash(const void *addr, uint32_t nb)
{
	uint64_t h = ((uintptr_t)addr >> 3) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & (nb - 1);
}

static void index_grow(void)
{
	uint32_t nb = nr_buckets * 2;
	uint32_t *nbk = calloc(nb, sizeof(*nbk));

	if (!nbk)
		return;		/* longer chains; still correct */
	for (uint32_t b = 0; b < nr_buckets; b++) {
		uint32_t i = buckets[b];

		while (i) {
			struct handle *h = H(i - 1);
			uint32_t next = h->next, nbkt = addr_hash(h->addr, nb);

			h->next = nbk[nbkt];
			nbk[nbkt] = i;
			i = next;
		}
	}
	free(buckets);
	buckets = nbk;
	nr_buckets = nb;
}

static void index_add(uint32_t idx)
{
	struct handle *h = H(idx);
	uint32_t b;

	if (nr_indexed >= 2 * nr_buckets)
		index_grow();
	b = addr_hash(h->addr, nr_buckets);
	h->next = buckets[b];
	buckets[b] = idx + 1;
	nr_indexed++;
}

static void index_del(uint32_t idx)
{
	struct handle *h = H(idx);
	uint32_t *pp = &buckets[addr_hash(h->addr, nr_buckets)];

	while (*pp) {
		if (*pp == idx + 1) {
			*pp = h->next;
			h->next = 0;
			nr_indexed--;
			return;
		}
		pp = &H(*pp - 1)->next;
	}
}

/* ---- entries ---- */
static int grow_chunk(void)
{
	uint32_t c = nr_entries >> CHUNK_SHIFT;
	struct handle *ch;

	if (c >= NR_CHUNKS)
		return -ENOMEM;
	ch = calloc(CHUNK_SIZE, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	chunks[c] = ch;
	/* push in reverse so that low indices are used first */
	for (uint32_t i = CHUNK_SIZE; i-- > 0;) {
		ch[i].gen = 1;
		ch[i].next = free_head;
		free_head = nr_entries + i + 1;
	}
	nr_entries += CHUNK_SIZE;
	nr_free += CHUNK_SIZE;
	return 0;
}

/* Every state change but to ST_FREE: its shrinker list counts live entries. */
static void set_state(struct handle *h, uint8_t state)
{
	if ((h->state == ST_LIVE) != (state == ST_LIVE))
		list_lru_set_live(&ctl_lru, &h->lru, state == ST_LIVE);
	h->state = state;
}

static inline uint32_t uid_count_of(struct fs_uid_counts *uc, uint32_t uid)
{
	return fs_uid_count(uc, (uid_t)uid);
}

static inline int uid_count_add(struct fs_uid_counts *uc, uint32_t uid, long n)
{
	return fs_uid_count_add(uc, (uid_t)uid, n);
}

/*
 * The entry's memory is gone: unindex, bump the generation, free it.
 * Returns the objcg its bytes are to be uncharged from, after the table
 * lock is dropped (memcg is never called under it).
 */
static struct obj_cgroup *entry_free(uint32_t idx)
{
	struct handle *h = H(idx);
	struct obj_cgroup *objcg = h->objcg;

	index_del(idx);
	list_lru_detach(&ctl_lru, idx, h->state == ST_LIVE);
	if (h->cc)
		ctl_cache_put(h->cc);
	(void)uid_count_add(&handle_uids, h->uid, -1);
	h->addr = NULL;
	h->cache = NULL;
	h->cc = NULL;
	h->objcg = NULL;
	h->uid = 0;
	h->kind = CTL_KIND_NONE;
	h->state = ST_FREE;
	atomic_store_explicit(&h->forgotten, 0, memory_order_relaxed);
	if (++h->gen == 0)
		h->gen = 1;
	h->next = free_head;
	free_head = idx + 1;
	nr_free++;
	nr_live--;
	return objcg;
}

size_t ctl_handle_bytes(void)
{
	/* the entry and its share of the address index (at most a bucket) */
	return sizeof(struct handle) + sizeof(uint32_t);
}

unsigned int ctl_handles_max_per_uid(void)
{
	return max_per_uid;
}

void ctl_handles_set_max_per_uid(unsigned int max)
{
	pthread_mutex_lock(&tab_lock);
	max_per_uid = max ? max : CTL_MAX_HANDLES;
	pthread_mutex_unlock(&tab_lock);
}

static unsigned long count_locked(pthread_mutex_t *lock, struct fs_uid_counts *uc, uid_t uid)
{
	unsigned long n;

	pthread_mutex_lock(lock);
	n = fs_uid_count(uc, uid);
	pthread_mutex_unlock(lock);
	return n;
}

unsigned long ctl_handles_nr_uid(uid_t uid)
{
	return count_locked(&tab_lock, &handle_uids, uid);
}

void ctl_sessions_set_max_per_uid(unsigned int max)
{
	pthread_mutex_lock(&session_lock);
	max_sessions_per_uid = max ? max : UINT32_MAX;
	pthread_mutex_unlock(&session_lock);
}

int ctl_sessions_get(uid_t uid)
{
	int ret = 0;

	pthread_mutex_lock(&session_lock);
	if (uid && uid_count_of(&session_uids, (uint32_t)uid) >= max_sessions_per_uid)
		ret = -EMFILE;
	else
		ret = uid_count_add(&session_uids, (uint32_t)uid, 1);
	pthread_mutex_unlock(&session_lock);
	return ret;
}

void ctl_sessions_put(uid_t uid)
{
	pthread_mutex_lock(&session_lock);
	(void)uid_count_add(&session_uids, (uint32_t)uid, -1);
	pthread_mutex_unlock(&session_lock);
}

unsigned long ctl_sessions_nr_uid(uid_t uid)
{
	return count_locked(&session_lock, &session_uids, uid);
}

/* Uncharge n entries' bytes from objcg (outside the table lock). */
static void uncharge_entries(struct obj_cgroup *objcg, unsigned int n)
{
	memcg_kmem_uncharge_bytes(objcg, (size_t)n * ctl_handle_bytes());
}

int ctl_handles_init(void)
{
	pthread_mutex_lock(&tab_lock);
	if (buckets) {
		pthread_mutex_unlock(&tab_lock);
		return -EBUSY;
	}
	buckets = calloc(MIN_BUCKETS, sizeof(*buckets));
	if (!buckets) {
		pthread_mutex_unlock(&tab_lock);
		return -ENOMEM;
	}
	nr_buckets = MIN_BUCKETS;
	if (getrandom(key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		key[0] = (uint32_t)ts.tv_nsec;
		key[1] = (uint32_t)ts.tv_sec;
		key[2] = (uint32_t)getpid() * 0x9e3779b9u;
		key[3] = (uint32_t)(uintptr_t)&ts;
	}
	pthread_mutex_unlock(&tab_lock);
	/* outside the table lock: reclaim calls the shrinker under its own */
	register_shrinker(&ctl_shrinker);
	return 0;
}

void ctl_handles_exit(void)
{
	unregister_shrinker(&ctl_shrinker);
	pthread_mutex_lock(&tab_lock);
	for (uint32_t c = 0; c < NR_CHUNKS; c++) {
		free(chunks[c]);
		chunks[c] = NULL;
	}
	free(buckets);
	buckets = NULL;
	nr_buckets = nr_entries = free_head = nr_free = nr_reserved = 0;
	nr_live = nr_indexed = 0;
	list_lru_destroy(&ctl_lru);
	fs_uid_counts_clear(&handle_uids);
	atomic_store(&forget_seq, 0);
	nr_orphans = 0;
	memset(orphans, 0, sizeof(orphans));
	pthread_mutex_unlock(&tab_lock);
}

int ctl_handles_reserve(unsigned int n, uid_t uid, gfp_t gfp, uint64_t *seq,
			struct obj_cgroup **objcg)
{
	uint32_t u = (uint32_t)uid;
	int ret = 0;

	*objcg = NULL;
	pthread_mutex_lock(&tab_lock);
	if (u && uid_count_of(&handle_uids, u) + (uint64_t)n > max_per_uid)
		ret = -EDQUOT;
	else if (u && handle_uids.total + (uint64_t)n > CTL_MAX_HANDLES - ROOT_RESERVE)
		ret = -ENOSPC;
	while (!ret && nr_free < nr_reserved + n) {
		ret = grow_chunk();
		if (ret)
			ret = nr_entries >= CTL_MAX_HANDLES ? -ENOSPC : ret;
	}
	if (!ret)
		ret = uid_count_add(&handle_uids, u, n);
	if (!ret)
		nr_reserved += n;
	*seq = atomic_load_explicit(&forget_seq, memory_order_relaxed);
	pthread_mutex_unlock(&tab_lock);
	if (ret)
		return ret;
	/* the entries are the caller's kernel memory: charged before use */
	ret = memcg_kmem_charge_bytes(gfp, (size_t)n * ctl_handle_bytes(), objcg);
	if (ret) {
		pthread_mutex_lock(&tab_lock);
		nr_reserved -= n;
		(void)uid_count_add(&handle_uids, u, -(long)n);
		pthread_mutex_unlock(&tab_lock);
	}
	return ret;
}

void ctl_handles_unreserve(unsigned int n, uid_t uid, struct obj_cgroup *objcg)
{
	if (!n)
		return;
	pthread_mutex_lock(&tab_lock);
	nr_reserved -= n;
	(void)uid_count_add(&handle_uids, (uint32_t)uid, -(long)n);
	pthread_mutex_unlock(&tab_lock);
	uncharge_entries(objcg, n);
}

bool ctl_handles_quiet_since(uint64_t seq)
{
	return atomic_load_explicit(&forget_seq, memory_order_acquire) == seq;
}

/* Was addr forgotten since seq while not in the index?  Consumes the record. */
static bool orphaned_since(const void *addr, uint64_t seq)
{
	uint64_t lo = nr_orphans > ORPHAN_RING ? nr_orphans - ORPHAN_RING : 0;

	for (uint64_t o = nr_orphans; o > lo; o--) {
		unsigned int i = (unsigned int)((o - 1) % ORPHAN_RING);

		if (orphans[i].seq <= seq)
			break;
		if (orphans[i].addr == (uintptr_t)addr) {
			orphans[i].addr = 0;
			return true;
		}
	}
	return false;
}

int ctl_handles_publish(void *addr, enum ctl_kind kind, struct kmem_cache *cache,
			uint64_t page_id, struct ctl_cache *cc, bool reclaimable,
			struct obj_cgroup *objcg, uid_t uid, uint64_t seq, uint64_t *token)
{
	struct obj_cgroup *stale[4];
	unsigned int nstale = 0;
	struct handle *h;
	uint32_t idx, i;
	int ret = 0;

	pthread_mutex_lock(&tab_lock);
	if (atomic_load_explicit(&forget_seq, memory_order_relaxed) != seq &&
	    orphaned_since(addr, seq)) {
		ret = -ESTALE;
		goto unreserve;
	}
	/*
	 * A live entry at the same address lost its memory without a
	 * notification: it is stale now (never expected; defensive).
	 */
	i = buckets[addr_hash(addr, nr_buckets)];
	while (i) {
		struct handle *o = H(i - 1);
		uint32_t next = o->next;

		if (o->addr == addr && o->state == ST_LIVE) {
			struct obj_cgroup *oc = entry_free(i - 1);

			if (nstale < 4)
				stale[nstale++] = oc;
			else
				uncharge_entries(oc, 1);	/* never expected */
		}
		i = next;
	}
	idx = free_head - 1;		/* reserved: the free list has it */
	h = H(idx);
	/* the objcg is the object's for good: its list now, or no handle */
	if (reclaimable && list_lru_attach(&ctl_lru, &h->lru, alloc_obj_objcg(addr))) {
		ret = -ENOMEM;
		goto unreserve;
	}
	nr_reserved--;
	free_head = h->next;
	nr_free--;
	nr_live++;
	h->addr = addr;
	if (kind == CTL_KIND_PAGES)
		h->page_id = page_id;
	else
		h->cache = cache;
	h->cc = cc;
	h->objcg = objcg;
	h->uid = (uint32_t)uid;
	h->kind = (uint8_t)kind;
	h->state = ST_LIVE;
	atomic_store_explicit(&h->forgotten, 0, memory_order_relaxed);
	*token = encode(idx, h->gen);
	while (*token == 0) {		/* 0 is NULL: skip that generation */
		if (++h->gen == 0)
			h->gen = 1;
		*token = encode(idx, h->gen);
	}
	index_add(idx);
	if (cc)
		atomic_fetch_add(&cc->refs, 1);
	pthread_mutex_unlock(&tab_lock);
	goto out;
unreserve:
	/* the reservation is spent: its count and its charge go back */
	nr_reserved--;
	(void)uid_count_add(&handle_uids, (uint32_t)uid, -1);
	pthread_mutex_unlock(&tab_lock);
	uncharge_entries(objcg, 1);
out:
	while (nstale)
		uncharge_entries(stale[--nstale], 1);
	return ret;
}

/* The entry a token names if it is live (or busy), else NULL. */
static struct handle *lookup(uint64_t token, uint32_t *idxp)
{
	uint32_t idx, gen;
	struct handle *h;

	decode(token, &idx, &gen);
	if (idx >= nr_entries)
		return NULL;
	h = H(idx);
	if (h->gen != gen || h->state == ST_FREE)
		return NULL;
	*idxp = idx;
	return h;
}

static const char *kind_name(unsigned int kind)
{
	switch (kind) {
	case CTL_KIND_KMALLOC: return "a kmalloc object";
	case CTL_KIND_CACHE: return "a kmem_cache object";
	case CTL_KIND_PAGES: return "a page handle";
	default: return "nothing";
	}
}

/* Handle @h (slot @idx) marked busy and described in *c; tab_lock held. */
static void claim_one(struct handle *h, uint32_t idx, struct ctl_claim *c)
{
	set_state(h, ST_BUSY);
	c->idx = idx;
	c->kind = h->kind;
	c->addr = h->addr;
	if (h->kind == CTL_KIND_PAGES)
		c->page_id = h->page_id;
	else
		c->cache = h->cache;
	c->forgotten = &h->forgotten;
	c->objcg = h->objcg;
}

/* The handles whole, in request order; take them, or only look (take false). */
static int claim_or_check(const uint64_t *tokens, unsigned int n, unsigned int kinds,
			  const struct kmem_cache *cache, bool allow_null, uid_t uid,
			  struct ctl_claim *out, unsigned int *bad, char *why, size_t why_len,
			  bool take)
{
	unsigned int nc = 0, i;
	int ret = 0;

	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < n; i++) {
		uint32_t idx = 0;
		struct handle *h;

		if (!tokens[i]) {
			if (allow_null)
				continue;
			snprintf(why, why_len, "handle 0 (NULL) names no object");
			ret = -EINVAL;
			break;
		}
		h = lookup(tokens[i], &idx);
		if (!h) {
			snprintf(why, why_len, "stale or unknown handle %016" PRIx64, tokens[i]);
			ret = -EINVAL;
			break;
		}
		if (h->state == ST_BUSY) {
			bool twice = false;

			for (unsigned int j = 0; j < i; j++)
				twice |= tokens[j] == tokens[i];
			snprintf(why, why_len, twice ? "handle %016" PRIx64 " named twice" :
				 "stale handle %016" PRIx64 " (being freed)", tokens[i]);
			ret = -EINVAL;
			break;
		}
		if (!(kinds & CTL_KIND_BIT(h->kind))) {
			snprintf(why, why_len, "handle %016" PRIx64 " is %s", tokens[i],
				 kind_name(h->kind));
			ret = -EINVAL;
			break;
		}
		if (cache && h->kind != CTL_KIND_PAGES && h->cache != cache) {
			snprintf(why, why_len, "handle %016" PRIx64 " is an object of %s",
				 tokens[i], h->cache ? kmem_cache_name(h->cache) : "no cache (large kmalloc)");
			ret = -EINVAL;
			break;
		}
		if (uid != 0 && h->uid != (uint32_t)uid) {
			snprintf(why, why_len, "handle %016" PRIx64 " belongs to another user",
				 tokens[i]);
			ret = -EPERM;
			break;
		}
		claim_one(h, idx, &out[nc++]);
	}
	if (ret)
		*bad = i;
	if (ret || !take)
		for (unsigned int j = nc; j--;)
			set_state(H(out[j].idx), ST_LIVE);
	pthread_mutex_unlock(&tab_lock);
	return ret ? ret : (int)nc;
}

int ctl_handles_claim(const uint64_t *tokens, unsigned int n, unsigned int kinds,
		      const struct kmem_cache *cache, bool allow_null, uid_t uid,
		      struct ctl_claim *out, unsigned int *bad, char *why, size_t why_len)
{
	return claim_or_check(tokens, n, kinds, cache, allow_null, uid, out, bad, why, why_len,
			      true);
}

int ctl_handles_check(const uint64_t *tokens, unsigned int n, unsigned int kinds,
		      const struct kmem_cache *cache, bool allow_null, uid_t uid,
		      struct ctl_claim *out, unsigned int *bad, char *why, size_t why_len)
{
	return claim_or_check(tokens, n, kinds, cache, allow_null, uid, out, bad, why, why_len,
			      false);
}

unsigned int ctl_handles_claim_live(const uint64_t *tokens, unsigned int n,
				    struct ctl_claim *out)
{
	unsigned int nc = 0;

	pthread_mutex_lock(&tab_lock);
	for (unsigned int i = 0; i < n; i++) {
		uint32_t idx = 0;
		struct handle *h = lookup(tokens[i], &idx);

		if (!h || h->state != ST_LIVE)
			continue;
		claim_one(h, idx, &out[nc++]);
	}
	pthread_mutex_unlock(&tab_lock);
	return nc;
}

/* Every token names a live handle; tab_lock held. */
static bool all_live_locked(const uint64_t *tokens, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t idx = 0;
		struct handle *h = lookup(tokens[i], &idx);

		if (!h || h->state != ST_LIVE)
			return false;
	}
	return true;
}

bool ctl_handles_all_live(const uint64_t *tokens, unsigned int n)
{
	bool ok;

	pthread_mutex_lock(&tab_lock);
	ok = all_live_locked(tokens, n);
	pthread_mutex_unlock(&tab_lock);
	return ok;
}

bool ctl_handles_commit(const uint64_t *tokens, unsigned int n)
{
	bool ok;

	pthread_mutex_lock(&tab_lock);
	ok = all_live_locked(tokens, n);
	for (unsigned int i = 0; i < n && ok; i++) {
		uint32_t idx = 0;
		struct handle *h = lookup(tokens[i], &idx);

		if (h->lru.list && !list_lru_on_list(&ctl_lru, &h->lru))
			list_lru_add(&ctl_lru, idx, h->state == ST_LIVE);
	}
	pthread_mutex_unlock(&tab_lock);
	return ok;
}

void ctl_handles_release(const struct ctl_claim *c, unsigned int n)
{
	unsigned int run = 0;

	if (!n)
		return;
	pthread_mutex_lock(&tab_lock);
	for (unsigned int i = 0; i < n; i++)
		(void)entry_free(c[i].idx);
	pthread_mutex_unlock(&tab_lock);
	/* the claims kept each entry's objcg: uncharged in runs of one objcg */
	for (unsigned int i = 0; i < n; i++) {
		run++;
		if (i + 1 == n || c[i + 1].objcg != c[i].objcg) {
			uncharge_entries(c[i].objcg, run);
			run = 0;
		}
	}
}

unsigned long ctl_handles_nr_live(void)
{
	unsigned long n;

	pthread_mutex_lock(&tab_lock);
	n = nr_live;
	pthread_mutex_unlock(&tab_lock);
	return n;
}

void ctl_forget(const void *addr)
{
	struct obj_cgroup *gone[4];
	unsigned int ngone = 0;
	uint32_t i;
	bool found = false;

	pthread_mutex_lock(&tab_lock);
	if (!buckets) {
		pthread_mutex_unlock(&tab_lock);
		return;
	}
	i = buckets[addr_hash(addr, nr_buckets)];
	while (i) {
		struct handle *h = H(i - 1);
		uint32_t next = h->next;

		if (h->addr == addr) {
			found = true;
			if (h->state == ST_LIVE) {
				struct obj_cgroup *oc = entry_free(i - 1);

				if (ngone < 4)
					gone[ngone++] = oc;
				else
					uncharge_entries(oc, 1);	/* never expected */
			} else	/* a request is freeing it: it must not any more */
				atomic_store(&h->forgotten, 1);
		}
		i = next;
	}
	atomic_fetch_add_explicit(&forget_seq, 1, memory_order_release);
	if (!found) {
		unsigned int r = (unsigned int)(nr_orphans++ % ORPHAN_RING);

		orphans[r].addr = (uintptr_t)addr;
		orphans[r].seq = atomic_load_explicit(&forget_seq, memory_order_relaxed);
	}
	pthread_mutex_unlock(&tab_lock);
	while (ngone)
		uncharge_entries(gone[--ngone], 1);
}

/* ---- the shrinker: reclaim takes reclaimable objects, oldest first ---- */
/* The lists (memcg/list_lru.c) link entries by index, through their lru node. */
static struct list_lru_node *lru_node(uint32_t idx)
{
	return &H(idx)->lru;
}

static struct list_lru ctl_lru = {
	.lock = &tab_lock,
	.node = lru_node,
};

static unsigned long ctl_shrink_count(struct shrinker *sh, struct mem_cgroup *memcg)
{
	(void)sh;
	return list_lru_count_one(&ctl_lru, memcg);
}

#define SHRINK_BATCH	64u

struct shrink_batch {
	struct ctl_claim c[SHRINK_BATCH];
	unsigned int n;
};

/* The walk's isolate: a live entry is claimed into the batch (table lock held). */
static bool shrink_claim(uint32_t idx, void *arg)
{
	struct shrink_batch *b = arg;
	struct ctl_claim *c = &b->c[b->n];
	struct handle *h = H(idx);

	if (h->state != ST_LIVE)
		return false;
	set_state(h, ST_BUSY);
	c->idx = idx;
	c->kind = h->kind;
	c->addr = h->addr;
	c->cache = h->cache;
	c->forgotten = &h->forgotten;
	c->objcg = h->objcg;
	b->n++;
	return true;
}

/*
 * Free up to nr: claimed under the table lock like a client's free (so a
 * racing kfree of the same handle gets EINVAL), freed outside it (the
 * trace records the frees under the client that caused the reclaim).
 */
static unsigned long ctl_shrink_scan(struct shrinker *sh, struct mem_cgroup *memcg,
				     unsigned long nr)
{
	struct shrink_batch b;
	const struct alloc_ctx *ctx = alloc_get_ctx();
	struct alloc_ctx noside;
	unsigned long freed = 0;

	(void)sh;
	/* the client's site= names its allocations, not reclaim's frees */
	if (ctx->site) {
		noside = *ctx;
		noside.site = NULL;
		alloc_set_ctx(&noside);
	}
	while (freed < nr) {
		unsigned int n;

		b.n = 0;
		list_lru_walk_one(&ctl_lru, memcg, shrink_claim, &b,
				  nr - freed < SHRINK_BATCH ? nr - freed : SHRINK_BATCH);
		n = b.n;
		if (!n)
			break;
		for (unsigned int k = 0; k < n; k++) {
			if (b.c[k].kind == CTL_KIND_CACHE)
				kmem_cache_free(b.c[k].cache, b.c[k].addr);
			else
				kfree(b.c[k].addr);
		}
		ctl_handles_release(b.c, n);
		freed += n;
	}
	if (ctx->site)
		alloc_set_ctx(ctx);
	return freed;
}

static struct shrinker ctl_shrinker = {
	.count_objects = ctl_shrink_count,
	.scan_objects = ctl_shrink_scan,
};

unsigned long ctl_handles_nr_reclaimable(void)
{
	return list_lru_count(&ctl_lru);
}

/* ---- the invariant checker (check_fail: lib.h) ---- */
static int sum_counts(uid_t uid, uint32_t n, void *arg)
{
	if (!n || !uid)
		return 1;
	*(uint32_t *)arg += n;
	return 0;
}

static bool entry_live(uint32_t idx)
{
	return H(idx)->state == ST_LIVE;
}

/* Table lock held. */
static int check_locked(char *msg, size_t len)
{
	uint32_t live = 0, free_n = 0, indexed = 0, on_lru = 0, lists = 0, named = 0, refs = 0;
	uint32_t nonroot_live = 0, counted = 0;

	for (uint32_t idx = 0; idx < nr_entries; idx++) {
		const struct handle *h = H(idx);

		if (h->state == ST_FREE) {
			if (h->lru.list || h->addr)
				return check_fail(msg, len, "handle %u: free but still in use", idx);
			continue;
		}
		live++;
		nonroot_live += h->uid != 0;
		on_lru += list_lru_on_list(&ctl_lru, &h->lru);
		named += h->lru.list != NULL;
	}
	for (uint32_t i = free_head; i; i = H(i - 1)->next) {
		if (H(i - 1)->state != ST_FREE)
			return check_fail(msg, len, "handle %u on the free list is in use", i - 1);
		if (++free_n > nr_entries)
			return check_fail(msg, len, "the free list loops");
	}
	for (uint32_t b = 0; b < nr_buckets; b++)
		for (uint32_t i = buckets[b]; i; i = H(i - 1)->next) {
			if (H(i - 1)->state == ST_FREE)
				return check_fail(msg, len, "handle %u: free but indexed", i - 1);
			if (addr_hash(H(i - 1)->addr, nr_buckets) != b)
				return check_fail(msg, len, "handle %u indexed in the wrong bucket",
						  i - 1);
			if (++indexed > nr_entries)
				return check_fail(msg, len, "an index chain loops");
		}
	if (live != nr_live || free_n != nr_free || live + free_n != nr_entries ||
	    indexed != nr_indexed || indexed != live)
		return check_fail(msg, len, "%u entries: %u in use (counted %u), %u free (counted %u), "
				  "%u indexed (counted %u)", nr_entries, live, nr_live, free_n,
				  nr_free, indexed, nr_indexed);
	if (nr_free < nr_reserved)
		return check_fail(msg, len, "%u entries reserved but %u free", nr_reserved, nr_free);
	if (list_lru_check(&ctl_lru, entry_live, nr_entries, &lists, &refs, msg, len))
		return -EUCLEAN;
	if (lists != on_lru || on_lru != ctl_lru.nr_items)
		return check_fail(msg, len, "%u handles on shrinker lists, %u listed, %lu counted",
				  on_lru, lists, ctl_lru.nr_items);
	if (named != refs)
		return check_fail(msg, len, "%u handles name a shrinker list, the lists count %u",
				  named, refs);
	if (fs_uid_count_each(&handle_uids, sum_counts, &counted))
		return check_fail(msg, len, "a uid counted with no handles, or root counted");
	/* the counts are the live entries of non-root uids and their reservations */
	if (counted != handle_uids.total || handle_uids.total < nonroot_live ||
	    handle_uids.total > nonroot_live + nr_reserved)
		return check_fail(msg, len, "non-root uids: %u live handles, %u reserved in all, "
				  "the uid counts sum to %u (total %u)", nonroot_live, nr_reserved,
				  counted, handle_uids.total);
	return 0;
}

int ctl_check(char *msg, size_t len)
{
	int ret;

	if (msg && len)
		msg[0] = '\0';
	pthread_mutex_lock(&tab_lock);
	ret = buckets ? check_locked(msg, len) : 0;
	pthread_mutex_unlock(&tab_lock);
	return ret;
}
