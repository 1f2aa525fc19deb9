/* SPDX-License-Identifier: MIT */
/*
 * real.c - real memory (memcg.real_memory): what member processes really
 * use, charged through the same path as the emulated pages.
 *
 * fs/ measures (a process's resident anon and shmem, its page tables and
 * threads; the cached pages of the files members use) and calls in here
 * with the numbers; everything that decides what is charged where lives
 * here:
 *
 * - A task's real memory is kept in buckets, one per memcg it grew in
 *   (cgroup v2: what a process has stays where it was charged when it
 *   moves; only growth after the move is charged to its new cgroup).  A
 *   shrink is taken back from the newest bucket first.  anon and shmem are
 *   charged to the memcg directly (like the kernel's folios), kernel stacks
 *   and page tables through the objcg (kmem, reparented on rmdir).  At the
 *   task's exit or OOM kill (the OOM reaper) every bucket is uncharged.
 *
 * - A file's page cache is charged to the memcg of the first member seen
 *   using it.  Pages already cached then were brought in by someone else
 *   and stay theirs (the kernel charges each page to whoever first touched
 *   it): 'foreign' counts them; the rest of the cache is charged.  When the
 *   cache shrinks on its own (the host's reclaim), the older, foreign pages
 *   are taken to go first; when memcgfs's reclaim drops pages, they are its
 *   own.  Files sit on their memcg's two real LRU lists: inactive when
 *   first charged, active once a member used the file again; reclaim
 *   deactivates from the active tail while the inactive list is smaller,
 *   rotates a file referenced since the last scan, and has fs/ drop the
 *   cache of the others (writeback, then POSIX_FADV_DONTNEED).
 *
 * - Real charges cannot be refused: the memory is in use already.  They
 *   are forced past memory.max (a 'max' event), and memcg_real_enforce()
 *   then does what the kernel's charge would have done: reclaim, then the
 *   OOM killer, whose victims fs/ kills for real.
 *
 * Locking: a task's buckets under task->lock's sibling real_lock (a leaf
 * but for the charges, which take stock and counter locks); a file's
 * counts are serialised by fs/ (one caller per file at a time); the real
 * LRU lists under the memcg's lru_lock.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

static struct memcg_real_ops real_ops;
static void rf_put(struct memcg_real_file *f);
static _Atomic unsigned long real_pages_total;	/* charged real pages, for the checker */

void memcg_real_init(void)
{
	atomic_store(&real_pages_total, 0);
}

void memcg_set_real_ops(const struct memcg_real_ops *ops)
{
	if (ops)
		real_ops = *ops;
	else
		memset(&real_ops, 0, sizeof(real_ops));
}

/*
 * Real charges go in without reclaim and cannot fail: a charge that does
 * not fit is forced (the kernel's __GFP_NOFAIL path) and raises 'max'.
 */
#define GFP_REAL	(GFP_NOWAIT | __GFP_NOFAIL)

/* Charge sizes are unsigned int pages in the charge path. */
#define REAL_CHARGE_CHUNK	(1u << 30)

/*
 * Charge (or uncharge) nr pages, through objcg when given (kmem), else to
 * memcg directly, in chunks the charge path can count.
 */
static void real_pages(struct mem_cgroup *memcg, struct obj_cgroup *objcg, unsigned long nr,
		       bool charge)
{
	while (nr) {
		unsigned int n = nr > REAL_CHARGE_CHUNK ? REAL_CHARGE_CHUNK : (unsigned int)nr;

		if (objcg && charge)
			(void)obj_cgroup_charge_pages(objcg, GFP_REAL, n);
		else if (objcg)
			obj_cgroup_uncharge_pages(objcg, n);
		else if (charge)
			(void)try_charge_memcg(memcg, GFP_REAL, n);
		else
			memcg_uncharge_direct(memcg, n);
		nr -= n;
	}
}

/* The statistics of nr pages of item charged at memcg (negative: uncharged). */
static void real_stats(struct mem_cgroup *memcg, enum real_item item, long nr)
{
	switch (item) {
	case REAL_ANON:
		mod_memcg_state(memcg, 0, MI_ANON, nr);
		mod_memcg_state(memcg, 0, MI_INACTIVE_ANON, nr);
		break;
	case REAL_SHMEM:
		/* shmem is file memory on the anon LRU (swap-backed) */
		mod_memcg_state(memcg, 0, MI_FILE, nr);
		mod_memcg_state(memcg, 0, MI_SHMEM, nr);
		mod_memcg_state(memcg, 0, MI_INACTIVE_ANON, nr);
		break;
	case REAL_KSTACK:
		mod_memcg_state(memcg, 0, MI_KERNEL_STACK_B, nr * (long)alloc_page_size());
		break;
	case REAL_PAGETABLES:
		mod_memcg_state(memcg, 0, MI_PAGETABLES, nr);
		break;
	default:
		break;
	}
}

static bool real_item_kmem(enum real_item item)
{
	return item == REAL_KSTACK || item == REAL_PAGETABLES;
}

/* Charge nr pages of item to bucket b (the task is current: charge_seq, high). */
static void bucket_charge(struct real_bucket *b, enum real_item item, unsigned long nr)
{
	if (!nr)
		return;
	b->pages[item] += nr;
	if (mem_cgroup_is_root(b->memcg))
		return;		/* the root is not charged, as in the kernel */
	atomic_fetch_add(&real_pages_total, nr);
	if (real_item_kmem(item) && b->objcg) {
		struct mem_cgroup *memcg;

		real_pages(NULL, b->objcg, nr, true);
		memcg = obj_cgroup_memcg(b->objcg);
		real_stats(memcg, item, (long)nr);
	} else {
		real_pages(b->memcg, NULL, nr, true);
		if (real_item_kmem(item))
			mod_memcg_state(b->memcg, 0, MI_KMEM, (long)nr);
		real_stats(b->memcg, item, (long)nr);
	}
}

static void bucket_uncharge(struct real_bucket *b, enum real_item item, unsigned long nr)
{
	if (!nr)
		return;
	b->pages[item] -= nr;
	if (mem_cgroup_is_root(b->memcg))
		return;
	atomic_fetch_sub(&real_pages_total, nr);
	if (real_item_kmem(item) && b->objcg) {
		real_stats(obj_cgroup_memcg(b->objcg), item, -(long)nr);
		real_pages(NULL, b->objcg, nr, false);
	} else {
		if (real_item_kmem(item))
			mod_memcg_state(b->memcg, 0, MI_KMEM, -(long)nr);
		real_stats(b->memcg, item, -(long)nr);
		real_pages(b->memcg, NULL, nr, false);
	}
}

static bool bucket_empty(const struct real_bucket *b)
{
	for (unsigned int i = 0; i < NR_REAL_ITEMS; i++)
		if (b->pages[i])
			return false;
	return true;
}

static void bucket_put(struct real_bucket *b)
{
	if (b->objcg)
		obj_cgroup_put(b->objcg);
	css_put(b->memcg);
	b->objcg = NULL;
	b->memcg = NULL;
}

/*
 * The bucket of the task's memcg now: the newest one if it is that memcg,
 * else a new one.  real_lock held.  NULL when none can be allocated: the
 * growth then goes to the newest bucket (where the task was before).
 */
static struct real_bucket *bucket_current(struct memcg_task *t)
{
	struct mem_cgroup *memcg = get_task_memcg(t);
	struct real_bucket *b;

	if (t->nr_real && t->real[t->nr_real - 1].memcg == memcg) {
		css_put(memcg);
		return &t->real[t->nr_real - 1];
	}
	if (t->nr_real == t->real_cap) {
		unsigned int cap = t->real_cap ? t->real_cap * 2 : 2;
		struct real_bucket *v = realloc(t->real, cap * sizeof(*v));

		if (!v) {
			css_put(memcg);
			return t->nr_real ? &t->real[t->nr_real - 1] : NULL;
		}
		t->real = v;
		t->real_cap = cap;
	}
	b = &t->real[t->nr_real++];
	memset(b, 0, sizeof(*b));
	b->memcg = memcg;		/* the reference from get_task_memcg */
	if (!mem_cgroup_is_root(memcg)) {
		/* kernel stacks and page tables: through the first live objcg up */
		for (struct mem_cgroup *m = memcg; m && !mem_cgroup_is_root(m); m = m->parent) {
			struct obj_cgroup *objcg;

			pthread_mutex_lock(&objcg_lock);
			objcg = atomic_load(&m->objcg);
			if (objcg)
				obj_cgroup_get(objcg);
			pthread_mutex_unlock(&objcg_lock);
			if (objcg) {
				b->objcg = objcg;
				break;
			}
		}
	}
	return b;
}

/* Drop the empty buckets, keeping the order.  real_lock held. */
static void buckets_compact(struct memcg_task *t)
{
	unsigned int j = 0;

	for (unsigned int i = 0; i < t->nr_real; i++) {
		if (bucket_empty(&t->real[i]) && i + 1 < t->nr_real) {
			bucket_put(&t->real[i]);
			continue;
		}
		if (i != j)
			t->real[j] = t->real[i];
		j++;
	}
	t->nr_real = j;
}

static unsigned long task_real_item(const struct memcg_task *t, enum real_item item)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < t->nr_real; i++)
		n += t->real[i].pages[item];
	return n;
}

int memcg_real_task_update(struct memcg_task *t, const struct memcg_real_usage *u)
{
	unsigned long want[NR_REAL_ITEMS] = {
		[REAL_ANON] = u->anon,
		[REAL_SHMEM] = u->shmem,
		[REAL_KSTACK] = (u->threads * MEMCG_KERNEL_STACK_SIZE + alloc_page_size() - 1) /
				alloc_page_size(),
		[REAL_PAGETABLES] = u->pagetables,
	};
	struct memcg_task *saved = current_task;
	int ret = 0;

	pthread_mutex_lock(&t->real_lock);
	if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) || READ_ONCE(t->oom_killed)) {
		ret = -ESRCH;
		goto out;
	}
	/* the charges are the task's: charge_seq for OOM ties, memory.high pages owed */
	current_task = t;
	memcg_current_changed();
	for (unsigned int item = 0; item < NR_REAL_ITEMS; item++) {
		unsigned long have = task_real_item(t, item);

		if (want[item] > have) {
			struct real_bucket *b = bucket_current(t);

			if (b)
				bucket_charge(b, item, want[item] - have);
		} else {
			unsigned long drop = have - want[item];

			for (unsigned int i = t->nr_real; i-- > 0 && drop;) {
				struct real_bucket *b = &t->real[i];
				unsigned long n = b->pages[item] < drop ? b->pages[item] : drop;

				bucket_uncharge(b, item, n);
				drop -= n;
			}
		}
	}
	current_task = saved;
	memcg_current_changed();
	buckets_compact(t);
	WRITE_ONCE(t->real_rss, u->anon + u->shmem + u->file_rss + u->pagetables);
out:
	pthread_mutex_unlock(&t->real_lock);
	return ret;
}

/* Everything the task has: its exit, its OOM kill (the reaper frees it at once). */
void memcg_real_task_release(struct memcg_task *t)
{
	pthread_mutex_lock(&t->real_lock);
	for (unsigned int i = 0; i < t->nr_real; i++) {
		struct real_bucket *b = &t->real[i];

		for (unsigned int item = 0; item < NR_REAL_ITEMS; item++)
			bucket_uncharge(b, item, b->pages[item]);
		bucket_put(b);
	}
	t->nr_real = 0;
	WRITE_ONCE(t->real_rss, 0);
	pthread_mutex_unlock(&t->real_lock);
}

void memcg_real_task_charged(struct memcg_task *t, struct memcg_real_usage *u)
{
	pthread_mutex_lock(&t->real_lock);
	u->anon = task_real_item(t, REAL_ANON);
	u->shmem = task_real_item(t, REAL_SHMEM);
	u->pagetables = task_real_item(t, REAL_PAGETABLES);
	u->threads = task_real_item(t, REAL_KSTACK) * alloc_page_size() / MEMCG_KERNEL_STACK_SIZE;
	u->file_rss = 0;
	pthread_mutex_unlock(&t->real_lock);
}

/* ---- files ---- */
struct memcg_real_file {
	struct mem_cgroup *memcg;	/* charged here (css reference) */
	unsigned long foreign;		/* cached pages charged to nobody here */
	unsigned long charged;		/* pages charged to memcg */
	unsigned long dirty, writeback;	/* of the charged pages */
	bool active;			/* on the active list (else inactive) */
	bool referenced;		/* used again since reclaim last looked */
	bool listed;			/* on a list (not released, not isolated) */
	bool released;			/* fs/ let go of it */
	_Atomic long ref;		/* fs/'s, and reclaim's while it works on it */
	struct memcg_real_file *prev, *next;
	void *priv;
};

static struct real_lru *real_lru(struct mem_cgroup *memcg)
{
	return &memcg->real_lru;
}

/* lru_lock held */
static void rf_unlink(struct mem_cgroup *memcg, struct memcg_real_file *f)
{
	struct real_lru *l = real_lru(memcg);
	unsigned int lru = f->active;

	if (f->prev)
		f->prev->next = f->next;
	else
		l->head[lru] = f->next;
	if (f->next)
		f->next->prev = f->prev;
	else
		l->tail[lru] = f->prev;
	f->prev = f->next = NULL;
	WRITE_ONCE(l->pages[lru], l->pages[lru] - f->charged);
	f->listed = false;
}

/* At the head (the youngest end) of its list.  lru_lock held. */
static void rf_link_head(struct mem_cgroup *memcg, struct memcg_real_file *f)
{
	struct real_lru *l = real_lru(memcg);
	unsigned int lru = f->active;

	f->prev = NULL;
	f->next = l->head[lru];
	if (f->next)
		f->next->prev = f;
	else
		l->tail[lru] = f;
	l->head[lru] = f;
	WRITE_ONCE(l->pages[lru], l->pages[lru] + f->charged);
	f->listed = true;
}

void memcg_real_file_get(struct memcg_real_file *f)
{
	atomic_fetch_add(&f->ref, 1);
}

void memcg_real_file_put(struct memcg_real_file *f)
{
	rf_put(f);
}

static void rf_put(struct memcg_real_file *f)
{
	if (atomic_fetch_sub(&f->ref, 1) != 1)
		return;
	css_put(f->memcg);
	if (real_ops.release)
		real_ops.release(f->priv);
	free(f);
}

struct memcg_real_file *memcg_real_file_create(struct memcg_task *t, unsigned long cached, void *priv)
{
	struct memcg_real_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->memcg = get_task_memcg(t);
	f->foreign = cached;
	f->priv = priv;
	atomic_init(&f->ref, 1);
	pthread_mutex_lock(&f->memcg->lru_lock);
	rf_link_head(f->memcg, f);
	pthread_mutex_unlock(&f->memcg->lru_lock);
	return f;
}

struct memcg_real_file *memcg_real_file_next(const struct memcg_real_file *f)
{
	return f->next;
}

struct mem_cgroup *memcg_real_file_memcg(const struct memcg_real_file *f)
{
	return f->memcg;
}

unsigned long memcg_real_file_charged(const struct memcg_real_file *f)
{
	return READ_ONCE(f->charged);
}

/* The file's counts change by d pages charged (its list's size too). */
static void rf_account(struct memcg_real_file *f, long d, long d_dirty, long d_wb)
{
	struct mem_cgroup *memcg = f->memcg;
	int lru_item;

	pthread_mutex_lock(&memcg->lru_lock);
	lru_item = f->active ? MI_ACTIVE_FILE : MI_INACTIVE_FILE;
	if (f->listed)
		WRITE_ONCE(real_lru(memcg)->pages[f->active],
			   real_lru(memcg)->pages[f->active] + (unsigned long)d);
	WRITE_ONCE(f->charged, (unsigned long)((long)f->charged + d));
	pthread_mutex_unlock(&memcg->lru_lock);
	if (d) {
		mod_memcg_state(memcg, 0, MI_FILE, d);
		mod_memcg_state(memcg, 0, lru_item, d);
	}
	mod_memcg_state(memcg, 0, MI_FILE_DIRTY, d_dirty);
	mod_memcg_state(memcg, 0, MI_FILE_WRITEBACK, d_wb);
}

void memcg_real_file_update(struct memcg_real_file *f, const struct memcg_real_cache *c,
			    bool reclaimed)
{
	unsigned long cached = c->cached, own, dirty, wb;
	long d;

	if (f->released)
		return;
	if (cached < f->foreign + f->charged) {
		unsigned long gone = f->foreign + f->charged - cached;

		if (reclaimed) {
			/* memcgfs dropped them: its own pages first */
			unsigned long mine = gone < f->charged ? gone : f->charged;

			gone -= mine;
			f->foreign -= gone < f->foreign ? gone : f->foreign;
		} else {
			/* the host evicted them: the older, foreign ones first */
			f->foreign -= gone < f->foreign ? gone : f->foreign;
		}
	}
	own = cached > f->foreign ? cached - f->foreign : 0;
	dirty = c->dirty < own ? c->dirty : own;
	wb = c->writeback < own ? c->writeback : own;
	d = (long)own - (long)f->charged;
	if (d > 0 && !mem_cgroup_is_root(f->memcg)) {
		real_pages(f->memcg, NULL, (unsigned long)d, true);
		atomic_fetch_add(&real_pages_total, (unsigned long)d);
	}
	rf_account(f, d, (long)dirty - (long)f->dirty, (long)wb - (long)f->writeback);
	f->dirty = dirty;
	f->writeback = wb;
	if (d < 0 && !mem_cgroup_is_root(f->memcg)) {
		real_pages(f->memcg, NULL, (unsigned long)-d, false);
		atomic_fetch_sub(&real_pages_total, (unsigned long)-d);
	}
}

void memcg_real_file_reference(struct memcg_real_file *f)
{
	struct mem_cgroup *memcg = f->memcg;
	long moved = 0;

	pthread_mutex_lock(&memcg->lru_lock);
	if (f->listed && !f->active && f->referenced) {
		/* the second reference: folio_mark_accessed() activates it */
		rf_unlink(memcg, f);
		f->active = true;
		f->referenced = false;
		rf_link_head(memcg, f);
		moved = (long)f->charged;
	} else {
		f->referenced = true;
	}
	pthread_mutex_unlock(&memcg->lru_lock);
	if (moved) {
		mod_memcg_state(memcg, 0, MI_INACTIVE_FILE, -moved);
		mod_memcg_state(memcg, 0, MI_ACTIVE_FILE, moved);
		mod_memcg_state(memcg, 0, MI_PGACTIVATE, moved);
	}
}

bool memcg_real_file_active(const struct memcg_real_file *f)
{
	return READ_ONCE(f->active);
}

void memcg_real_file_release(struct memcg_real_file *f)
{
	struct memcg_real_cache none = { 0, 0, 0 };

	/* all of its charge goes: the file is gone or forgotten */
	f->foreign = 0;
	memcg_real_file_update(f, &none, true);
	pthread_mutex_lock(&f->memcg->lru_lock);
	if (f->listed)
		rf_unlink(f->memcg, f);
	f->released = true;
	pthread_mutex_unlock(&f->memcg->lru_lock);
	rf_put(f);
}

/* ---- reclaim ---- */
unsigned long memcg_real_lru_pages(struct mem_cgroup *memcg)
{
	struct real_lru *l = real_lru(memcg);

	return READ_ONCE(l->pages[0]) + READ_ONCE(l->pages[1]);
}

/* Active files to the inactive list while it is the smaller (inactive_is_low). */
static void real_deactivate(struct mem_cgroup *memcg)
{
	struct real_lru *l = real_lru(memcg);
	long moved = 0;

	pthread_mutex_lock(&memcg->lru_lock);
	while (l->tail[1] && l->pages[1] > l->pages[0]) {
		struct memcg_real_file *f = l->tail[1];

		rf_unlink(memcg, f);
		f->active = false;
		f->referenced = false;
		rf_link_head(memcg, f);
		moved += (long)f->charged;
	}
	pthread_mutex_unlock(&memcg->lru_lock);
	if (moved) {
		mod_memcg_state(memcg, 0, MI_ACTIVE_FILE, -moved);
		mod_memcg_state(memcg, 0, MI_INACTIVE_FILE, moved);
		mod_memcg_state(memcg, 0, MI_PGREFILL, moved);
		mod_memcg_state(memcg, 0, MI_PGDEACTIVATE, moved);
	}
}

/*
 * shrink_real_files - scan up to nr_scan charged pages of memcg's real
 * files from the inactive tail, having fs/ drop the cache of each file not
 * referenced since the last scan, until 'want' pages went.  Returns the
 * pages reclaimed (uncharged).
 */
unsigned long shrink_real_files(struct mem_cgroup *memcg, unsigned long nr_scan,
				unsigned long want, bool proactive)
{
	struct real_lru *l = real_lru(memcg);
	unsigned long scanned = 0, reclaimed = 0;
	unsigned int rotations = 0;

	if (!real_ops.reclaim || !memcg_real_lru_pages(memcg))
		return 0;
	real_deactivate(memcg);
	while (scanned < nr_scan && reclaimed < want) {
		struct memcg_real_file *f;
		unsigned long before, after, target;

		pthread_mutex_lock(&memcg->lru_lock);
		f = l->tail[0];
		if (!f) {
			pthread_mutex_unlock(&memcg->lru_lock);
			break;
		}
		if (f->referenced || !f->charged) {
			unsigned long n = f->charged;

			/* a second chance, as a referenced page gets one */
			f->referenced = false;
			rf_unlink(memcg, f);
			rf_link_head(memcg, f);
			pthread_mutex_unlock(&memcg->lru_lock);
			scanned += n ? n : 1;
			/* every file rotated once and none reclaimable: stop */
			if (++rotations > 2 * 1024)
				break;
			continue;
		}
		rf_unlink(memcg, f);		/* isolated while fs/ works on it */
		atomic_fetch_add(&f->ref, 1);
		before = f->charged;
		pthread_mutex_unlock(&memcg->lru_lock);

		target = want - reclaimed < before ? want - reclaimed : before;
		(void)real_ops.reclaim(f->priv, f, target);
		after = READ_ONCE(f->charged);
		/* fs/ drops whole ranges: what it looked at is at least what went */
		if (after < before) {
			scanned += before - after > target ? before - after : target;
			reclaimed += before - after;
		} else {
			scanned += target;
		}

		pthread_mutex_lock(&memcg->lru_lock);
		if (!f->released)
			rf_link_head(memcg, f);
		pthread_mutex_unlock(&memcg->lru_lock);
		rf_put(f);
	}
	mod_memcg_state(memcg, 0, proactive ? MI_PGSCAN_PROACTIVE : MI_PGSCAN_DIRECT, (long)scanned);
	mod_memcg_state(memcg, 0, proactive ? MI_PGSTEAL_PROACTIVE : MI_PGSTEAL_DIRECT,
			(long)reclaimed);
	return reclaimed;
}

/* ---- limits ---- */
bool mem_cgroup_over_max(const struct mem_cgroup *memcg)
{
	return !mem_cgroup_is_root(memcg) &&
	       page_counter_read(&memcg->memory) > READ_ONCE(memcg->memory.max);
}

bool memcg_real_over_max(struct mem_cgroup *memcg)
{
	for (struct mem_cgroup *m = memcg; m && !mem_cgroup_is_root(m); m = m->parent)
		if (mem_cgroup_over_max(m))
			return true;
	return false;
}

/* tree_lock held */
static bool subtree_over_max(const struct mem_cgroup *memcg)
{
	if (mem_cgroup_over_max(memcg))
		return true;
	for (const struct mem_cgroup *c = memcg->children; c; c = c->sibling)
		if (subtree_over_max(c))
			return true;
	return false;
}

bool memcg_real_subtree_over_max(struct mem_cgroup *memcg)
{
	bool over;

	if (memcg_real_over_max(memcg))
		return true;
	pthread_mutex_lock(&tree_lock);
	over = subtree_over_max(memcg);
	pthread_mutex_unlock(&tree_lock);
	return over;
}

/*
 * memcg_real_enforce - memcg and its ancestors back under memory.max, as
 * the charge that took them over would have done: reclaim, then the OOM
 * killer (each round an 'oom' event), until usage fits or nothing is left
 * to kill.  For the real-memory thread: reclaim may wait for writeback.
 */
void memcg_real_enforce(struct mem_cgroup *memcg)
{
	struct mem_cgroup *m;

	css_get(memcg);
	for (m = memcg; m && !mem_cgroup_is_root(m); m = m->parent)
		if (mem_cgroup_over_max(m))
			mem_cgroup_reclaim_to_max(m);
	css_put(memcg);
}

/* The checker: every real charge accounted for. */
unsigned long memcg_real_charged_pages(void)
{
	return atomic_load(&real_pages_total);
}
