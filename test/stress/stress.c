/* SPDX-License-Identifier: MIT */
/*
 * stress - many clients against one memcgfs mount, bounded in time.
 *
 *   stress MOUNTPOINT
 *
 * Environment: STRESS_SECONDS (default 60), STRESS_CLIENTS (8), STRESS_SEED.
 *
 * N client processes do random requests through memcgfs.ctl, in the text
 * protocol and in ioctl batches: kmalloc/kfree, kmem_cache
 * create/alloc/free/destroy, alloc_pages/free_pages, drain, whoami; and
 * move themselves between the cgroups of a tree that changes under them.
 * This process is the controller: it makes and removes cgroups (an rmdir of
 * a busy one fails with EBUSY, which is fine), changes memory.max, .high,
 * .low, .min and .oom.group, writes memory.reclaim, SIGKILLs clients in the
 * middle of their requests and starts new ones in their place (the daemon
 * runs with oom_kill_signal=SIGKILL, so OOM kills real clients too), and
 * reads memcgfs.check: on the busy mount (a mismatch there may be a passing
 * one, fs/ops.c says so: it is counted and followed at once by a quiet
 * check) and at quiet points, every client stopped with SIGSTOP (a stopped
 * client has no request in flight: a FUSE request that reached the daemon
 * is waited out before the stop), where it must be "ok".
 *
 * No handle is lost to a kill.  Each client's handles live in memory
 * shared with the controller.  The controller opens each client's
 * memcgfs.ctl before forking it, so the session (the reply a killed client
 * never read) outlives the client; a client reads its replies and builds
 * its ioctl batches in the shared memory, so what the kernel copied out
 * before the client died is there too.  A client marks a request pending
 * before it starts; after a death the controller takes the handles from
 * the session or the shared buffers, and the next client of that slot
 * carries on with them (freeing, from another process and maybe another
 * cgroup, what its predecessor allocated).  A handle recorded twice or gone
 * stale (freed by the task's exit, an OOM kill or reclaim) only costs an
 * EINVAL later.
 *
 * At the end: every client killed, every handle freed, every cache
 * destroyed, the tree removed; then, after drains until the dying cgroups
 * are reaped, the root's memory.stat (every byte and page figure), slabinfo
 * (active_objs, num_objs of every cache), the arena's pages (memcgfs.arena,
 * after a shrink) must be exactly what they were at the start, and
 * memcgfs.check "ok".  Exit 0 then, 1 otherwise.
 */
#include <memcgfs/ctl.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS	64
#define MAXH		2048		/* handles a client slot holds */
#define HOLD_MAX	1536		/* above this, a client only frees */
#define HOLD_BYTES	(6u << 20)	/* and above this many bytes */
#define NCACHE		4
#define REPLY_MAX	2048
#define BATCH_OPS	24
#define MAX_PER_REQ	16
/*
 * Reclaimable objects a client holds at most: as many as it has slots.
 * memcgfs's shrinker counts per objcg list (memcg/list_lru.c); when it
 * walked every reclaimable handle for each memcg at each priority, this
 * had to stay at 48 (with 2048, 8 clients made 1477 operations/s and a
 * 9.5 s subtree_control write; 9779/s and 0.02 s after).
 */
#define RECL_MAX	MAXH
#define WHOAMI_SLOTS	6		/* the reply and a path of up to 39 bytes */

enum { K_OBJ = 1, K_PAGE = 2 };
enum { P_NONE = 0, P_TEXT, P_IOCTL };

struct hent {
	uint64_t tok;
	uint32_t bytes;
	uint8_t kind;
	int8_t cache;		/* -1: a kmalloc object */
	uint8_t recl;		/* reclaimable: reclaim may free it */
};

struct slot {
	pid_t pid;		/* the client now (controller's) */
	int fd;			/* memcgfs.ctl, opened by the controller */
	unsigned int gen;
	bool killed;		/* the controller sent SIGKILL (or wrote cgroup.kill) */
	volatile int cg;	/* the client's cgroup: index in nodes[], -1 the root */
	/* the request in flight */
	volatile int pending;
	int pend_kind, pend_cache, pend_recl;
	uint32_t pend_bytes;
	char reply[REPLY_MAX];
	struct memcgfs_ctl_batch_max batch;
	int8_t bcache[BATCH_OPS];
	uint8_t brecl[BATCH_OPS];
	uint32_t bbytes[BATCH_OPS];
	/* what the slot holds */
	uint32_t nh;
	uint64_t held_bytes;
	struct hent h[MAXH];
	uint8_t cstate[NCACHE];	/* 1: may exist */
	uint8_t crecl[NCACHE];	/* SLAB_RECLAIM_ACCOUNT */
	uint32_t nrecl;		/* reclaimable handles held */
	/* counters */
	uint64_t requests, ops, migrations, mig_fail, enomem, errors, stale, beat;
	uint32_t errs[EHWPOISON + 1];	/* failed requests and operations by errno */
};

struct shared {
	volatile int stop;
	struct slot slot[MAX_CLIENTS];
};

static struct shared *sh;
static const char *mnt;
static int nclients = 8;
static unsigned int seed;
static int failures;

/* the tree: gN have children (memory in subtree_control); lN and gN/cM are leaves */
static const char *const nodes[] = {
	"stress/g0", "stress/g1", "stress/g2", "stress/l0", "stress/l1", "stress/l2",
	"stress/g0/c0", "stress/g0/c1", "stress/g0/c2", "stress/g1/c0", "stress/g1/c1",
	"stress/g1/c2", "stress/g2/c0", "stress/g2/c1", "stress/g2/c2",
};
#define NR_NODES	(sizeof(nodes) / sizeof(nodes[0]))
#define NR_L1		6

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("stress: FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
	failures++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift, per process */
static uint64_t rng_state;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}
static uint32_t rndn(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static void path_of(char *buf, size_t len, const char *rel, const char *file)
{
	snprintf(buf, len, "%s%s%s%s%s", mnt, *rel ? "/" : "", rel, file ? "/" : "",
		 file ? file : "");
}

/* write a string to a file of the mount: 0 or -errno */
static int put(const char *rel, const char *file, const char *val)
{
	char p[512];
	int fd, err = 0;
	ssize_t n;

	path_of(p, sizeof(p), rel, file);
	fd = open(p, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

/* read a file of the mount whole: length or -errno */
static ssize_t get(const char *rel, const char *file, char *buf, size_t len)
{
	char p[512];
	size_t off = 0;
	int fd;

	path_of(p, sizeof(p), rel, file);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -errno;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (ssize_t)off;
}

/* "key value" line of a file: the value, or -1 */
static long long keyval(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == ' ')
			return strtoll(l + kl + 1, NULL, 10);
	return -1;
}

/* ---- the client's handle table (also run by the controller on a dead client's slot) ---- */
static void hold(struct slot *s, uint64_t tok, int kind, int cache, uint32_t bytes, int recl)
{
	if (!tok)
		return;
	if (s->nh >= MAXH) {
		/* cannot happen: clients stop allocating far below MAXH */
		fprintf(stderr, "stress: handle table full, handle %" PRIx64 " dropped\n", tok);
		return;
	}
	s->h[s->nh] = (struct hent){ .tok = tok, .kind = (uint8_t)kind, .cache = (int8_t)cache,
				     .bytes = bytes, .recl = (uint8_t)recl };
	s->nh++;
	s->nrecl += recl != 0;
	s->held_bytes += bytes;
}

static void unhold(struct slot *s, uint32_t i)
{
	uint64_t b = s->h[i].bytes;

	if (s->h[i].recl && s->nrecl)
		s->nrecl--;
	/* killed between the two stores: a duplicate, freed later as stale */
	s->h[i] = s->h[s->nh - 1];
	s->nh--;
	s->held_bytes = s->held_bytes > b ? s->held_bytes - b : 0;
}

/* a text reply "ok HANDLE..." of the pending allocation */
static void absorb_text(struct slot *s, const char *reply)
{
	const char *p = reply;
	char *end;

	if (strncmp(p, "ok", 2) || s->pend_kind == 0)
		return;
	p += 2;
	for (;;) {
		uint64_t tok;

		while (*p == ' ')
			p++;
		if (!isxdigit((unsigned char)*p))
			break;
		tok = strtoull(p, &end, 16);
		hold(s, tok, s->pend_kind, s->pend_cache, s->pend_bytes, s->pend_recl);
		p = end;
	}
}

static bool is_alloc_op(int op)
{
	return op == MEMCGFS_OP_KMALLOC || op == MEMCGFS_OP_KMEM_CACHE_ALLOC ||
	       op == MEMCGFS_OP_ALLOC_PAGES;
}

/* the handles of a batch's allocations that succeeded (error 0; 1 = not run) */
static void absorb_batch(struct slot *s)
{
	struct memcgfs_ctl_batch_max *b = &s->batch;

	for (unsigned int i = 0; i < b->hdr.nr_ops && i < BATCH_OPS; i++) {
		const struct memcgfs_ctl_op *op = &b->u.ops[i];
		unsigned int n = op->count ? op->count : 1;

		if (!is_alloc_op(op->op) || op->error != 0)
			continue;
		for (unsigned int k = 0; k < n; k++)
			hold(s, b->u.slots[op->slot + k],
			     op->op == MEMCGFS_OP_ALLOC_PAGES ? K_PAGE : K_OBJ, s->bcache[i],
			     s->bbytes[i], s->brecl[i]);
	}
}

/* ---- the client ---- */
static struct slot *me;

static const char *cache_name(int slot, int c, char *buf, size_t len)
{
	snprintf(buf, len, "stress_%d_%d", slot, c);
	return buf;
}

/* one text request; the reply in me->reply; returns 0 or the write's -errno */
static int text_recl(const char *req, int kind, int cache, uint32_t bytes, int recl)
{
	ssize_t n;
	int err = 0;

	me->pend_kind = kind;
	me->pend_cache = cache;
	me->pend_bytes = bytes;
	me->pend_recl = recl;
	memset(me->reply, 0, 512);
	me->pending = P_TEXT;
	if (write(me->fd, req, strlen(req)) < 0)
		err = -errno;
	if (err == -ENOTCONN)
		_exit(3);	/* the daemon is gone: the controller reports it */
	n = read(me->fd, me->reply, REPLY_MAX - 1);
	if (n >= 0)
		me->reply[n] = '\0';
	absorb_text(me, me->reply);
	me->pending = P_NONE;
	me->requests++;
	me->ops++;
	me->beat++;
	if (err == -ENOMEM)
		me->enomem++;
	else if (err)
		me->errors++;
	if (err < 0 && -err <= EHWPOISON)
		me->errs[-err]++;
	return err;
}

static int text(const char *req, int kind, int cache, uint32_t bytes)
{
	return text_recl(req, kind, cache, bytes, 0);
}

static uint32_t kmalloc_size(void)
{
	static const uint32_t sizes[] = { 8, 16, 24, 64, 96, 100, 128, 192, 256, 500,
					  512, 1000, 1024, 2048, 2312, 4096, 8192, 12000 };
	return sizes[rndn(sizeof(sizes) / sizeof(sizes[0]))];
}

static const char *const gfps[] = {
	"GFP_KERNEL_ACCOUNT", "GFP_KERNEL_ACCOUNT", "GFP_KERNEL_ACCOUNT", "GFP_KERNEL",
	"GFP_KERNEL_ACCOUNT|__GFP_RECLAIMABLE", "GFP_KERNEL_ACCOUNT|__GFP_NORETRY",
	"GFP_KERNEL_ACCOUNT|__GFP_ZERO", "__GFP_RECLAIMABLE",
};
static const uint32_t gfp_bits[] = {
	MEMCGFS_GFP_KERNEL_ACCOUNT, MEMCGFS_GFP_KERNEL_ACCOUNT, MEMCGFS_GFP_KERNEL_ACCOUNT,
	MEMCGFS_GFP_KERNEL, MEMCGFS_GFP_KERNEL_ACCOUNT | MEMCGFS_GFP_RECLAIMABLE,
	MEMCGFS_GFP_KERNEL_ACCOUNT | MEMCGFS_GFP_NORETRY,
	MEMCGFS_GFP_KERNEL_ACCOUNT | MEMCGFS_GFP_ZERO, MEMCGFS_GFP_KERNEL | MEMCGFS_GFP_RECLAIMABLE,
};
/* a gfp index; a reclaimable one only while the client holds few such objects */
static uint32_t pick_gfp(void)
{
	uint32_t g = rndn(sizeof(gfp_bits) / sizeof(gfp_bits[0]));

	if ((gfp_bits[g] & MEMCGFS_GFP_RECLAIMABLE) && me->nrecl >= RECL_MAX)
		g = 0;
	return g;
}

static const char *const ptypes[] = { "anon", "file", "shmem", "kernel_stack", "pagetables",
				      "percpu", "sock", "vmalloc" };

/* free some held handles of a kind (and cache) in one text request; stale ones one by one */
static void text_free(int kind, int cache, bool by_cache)
{
	uint32_t idx[MAX_PER_REQ], n = 0, want = 1 + rndn(MAX_PER_REQ);
	char req[64 + MAX_PER_REQ * 20], name[32];
	size_t off;
	int err;

	for (uint32_t tries = 0; tries < 4 * want && n < want && me->nh; tries++) {
		uint32_t i = rndn(me->nh);
		bool dup = false;

		if (me->h[i].kind != kind || (by_cache && me->h[i].cache != cache))
			continue;
		for (uint32_t k = 0; k < n; k++)
			dup |= idx[k] == i;
		if (!dup)
			idx[n++] = i;
	}
	if (!n)
		return;
	if (kind == K_PAGE)
		off = (size_t)snprintf(req, sizeof(req), "free_pages");
	else if (by_cache)
		off = (size_t)snprintf(req, sizeof(req), "kmem_cache_free %s",
				       cache_name((int)(me - sh->slot), cache, name, sizeof(name)));
	else
		off = (size_t)snprintf(req, sizeof(req), "kfree");
	for (uint32_t k = 0; k < n; k++)
		off += (size_t)snprintf(req + off, sizeof(req) - off, " %" PRIx64, me->h[idx[k]].tok);
	err = text(req, 0, -1, 0);
	if (err == -EINVAL && n > 1) {
		/* some were stale (an exit, an OOM kill or reclaim freed them): one by one */
		for (uint32_t k = 0; k < n; k++) {
			if (kind == K_PAGE)
				snprintf(req, sizeof(req), "free_pages %" PRIx64, me->h[idx[k]].tok);
			else
				snprintf(req, sizeof(req), "kfree %" PRIx64, me->h[idx[k]].tok);
			if (text(req, 0, -1, 0) == -EINVAL)
				me->stale++;
		}
		err = 0;
	} else if (err == -EINVAL) {
		me->stale++;
		err = 0;
	}
	if (err)
		return;		/* kept: freed at the end */
	/* highest index first, so that unhold's swap does not move one still to do */
	for (uint32_t a = 0; a < n; a++)
		for (uint32_t b2 = a + 1; b2 < n; b2++)
			if (idx[b2] > idx[a]) {
				uint32_t t = idx[a];

				idx[a] = idx[b2];
				idx[b2] = t;
			}
	for (uint32_t k = 0; k < n; k++)
		unhold(me, idx[k]);
}

static void do_migrate(void)
{
	uint32_t pick = rndn(NR_NODES - NR_L1 + 3 + 1);
	const char *where;
	char pid[32];
	int err, k;

	if (pick < NR_NODES - NR_L1)
		k = (int)(NR_L1 + pick);
	else if (pick < NR_NODES - NR_L1 + 3)
		k = (int)(3 + (pick - (NR_NODES - NR_L1)));
	else
		k = -1;
	where = k < 0 ? "" : nodes[k];
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	/* before: a cgroup.kill meanwhile is then put down to the controller */
	me->cg = k;
	err = put(where, "cgroup.procs", pid);
	if (err)
		me->mig_fail++;
	else
		me->migrations++;
	me->beat++;
}

static void do_cache(void)
{
	int slotno = (int)(me - sh->slot), c = (int)rndn(NCACHE);
	char name[32], req[160];
	uint32_t r = rndn(10);

	cache_name(slotno, c, name, sizeof(name));
	if (!me->cstate[c]) {
		static const char *const fl[] = { "SLAB_ACCOUNT", "SLAB_ACCOUNT|SLAB_RECLAIM_ACCOUNT",
						  "SLAB_ACCOUNT|SLAB_HWCACHE_ALIGN", "SLAB_HWCACHE_ALIGN",
						  "SLAB_RECLAIM_ACCOUNT" };
		int err;

		unsigned int f = rndn(5);

		me->cstate[c] = 1;	/* before: a kill leaves it to destroy at the end */
		me->crecl[c] = strstr(fl[f], "RECLAIM") != NULL;
		snprintf(req, sizeof(req), "kmem_cache_create %s %u %s", name, 16 + rndn(3000),
			 fl[f]);
		err = text(req, 0, -1, 0);
		if (err && err != -EEXIST)
			me->cstate[c] = 0;
		return;
	}
	if (r < 5) {
		uint32_t n = 1 + rndn(MAX_PER_REQ);

		if (me->crecl[c] && me->nrecl >= RECL_MAX) {
			text_free(K_OBJ, c, true);
			return;
		}
		snprintf(req, sizeof(req), "kmem_cache_alloc %s %s x%u", name, gfps[rndn(3)], n);
		if (text_recl(req, K_OBJ, c, 512, me->crecl[c]) == -ENOENT)
			me->cstate[c] = 0;
	} else if (r < 9) {
		text_free(K_OBJ, c, rndn(2));
	} else {
		bool busy = false;

		for (uint32_t i = 0; i < me->nh; i++)
			busy |= me->h[i].kind == K_OBJ && me->h[i].cache == c;
		if (busy) {
			text_free(K_OBJ, c, true);
			return;
		}
		snprintf(req, sizeof(req), "kmem_cache_destroy %s", name);
		if (!text(req, 0, -1, 0) || !strncmp(me->reply, "error ENOENT", 12))
			me->cstate[c] = 0;
	}
}

/* one ioctl batch: allocations, frees of held handles (one per operation), drain, whoami */
static void do_batch(bool may_alloc)
{
	struct memcgfs_ctl_batch_max *b = &me->batch;
	unsigned int nops = 1 + rndn(BATCH_OPS), slot0, free_slot;
	uint32_t fidx[BATCH_OPS];
	int fop[BATCH_OPS];
	int slotno = (int)(me - sh->slot);

	memset(b, 0, sizeof(*b));
	b->hdr.version = MEMCGFS_CTL_VERSION;
	b->hdr.nr_ops = (uint16_t)nops;
	slot0 = MEMCGFS_CTL_FIRST_SLOT(nops);
	free_slot = slot0;
	for (unsigned int i = 0; i < nops; i++) {
		struct memcgfs_ctl_op *op = &b->u.ops[i];
		uint32_t r = rndn(100);

		fop[i] = -1;
		op->error = 1;		/* not run (a kill before the daemon had it) */
		me->bcache[i] = -1;
		me->bbytes[i] = 0;
		me->brecl[i] = 0;
		if (!may_alloc && r < 55)
			r = 55 + rndn(45);
		if (r < 25) {
			unsigned int g = pick_gfp();

			op->op = MEMCGFS_OP_KMALLOC;
			op->size = kmalloc_size();
			op->flags = gfp_bits[g];
			op->count = (uint16_t)(1 + rndn(4));
			me->bbytes[i] = (uint32_t)op->size;
			me->brecl[i] = (gfp_bits[g] & MEMCGFS_GFP_RECLAIMABLE) != 0;
		} else if (r < 40) {
			int c = (int)rndn(NCACHE);
			char name[32];

			if (!me->cstate[c] || (me->crecl[c] && me->nrecl >= RECL_MAX)) {
				op->op = MEMCGFS_OP_DRAIN;
				continue;
			}
			op->op = MEMCGFS_OP_KMEM_CACHE_ALLOC;
			op->flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
			op->count = (uint16_t)(1 + rndn(4));
			me->bcache[i] = (int8_t)c;
			me->bbytes[i] = 512;
			me->brecl[i] = me->crecl[c];
			/* the name: 8 slots at the end of the area */
			op->name = (uint16_t)(MEMCGFS_CTL_MAX_WORDS - 8 * (unsigned int)(c + 1));
			cache_name(slotno, c, name, sizeof(name));
			memcpy(&b->u.slots[op->name], name, strlen(name) + 1);
		} else if (r < 55) {
			op->op = MEMCGFS_OP_ALLOC_PAGES;
			op->type = (uint8_t)rndn(8);
			op->order = (uint8_t)rndn(3);
			op->count = (uint16_t)(1 + rndn(3));
			me->bbytes[i] = 4096u << op->order;
		} else if (r < 95 && me->nh) {
			uint32_t k = rndn(me->nh);
			bool dup = false;

			for (unsigned int j = 0; j < i; j++)
				dup |= fop[j] >= 0 && fidx[j] == k;
			if (dup) {
				op->op = MEMCGFS_OP_WHOAMI;
				op->count = WHOAMI_SLOTS;
				op->slot = (uint16_t)free_slot;
				free_slot += WHOAMI_SLOTS;
				continue;
			}
			op->op = me->h[k].kind == K_PAGE ? MEMCGFS_OP_FREE_PAGES : MEMCGFS_OP_KFREE;
			op->count = 1;
			op->slot = (uint16_t)free_slot++;
			b->u.slots[op->slot] = me->h[k].tok;
			fidx[i] = k;
			fop[i] = 1;
			continue;
		} else if (r < 97) {
			op->op = MEMCGFS_OP_DRAIN;
			continue;
		} else {
			op->op = MEMCGFS_OP_WHOAMI;
			op->count = WHOAMI_SLOTS;
			op->slot = (uint16_t)free_slot;
			free_slot += WHOAMI_SLOTS;
			continue;
		}
	}
	/* output slots of the allocations after the frees' */
	for (unsigned int i = 0; i < nops; i++) {
		struct memcgfs_ctl_op *op = &b->u.ops[i];

		if (is_alloc_op(op->op)) {
			op->slot = (uint16_t)free_slot;
			free_slot += op->count;
		}
	}
	me->pending = P_IOCTL;
	if (ioctl(me->fd, MEMCGFS_IOC_BATCH(MEMCGFS_CTL_MAX_SIZE), b) < 0) {
		if (errno == ENOTCONN)
			_exit(3);	/* the daemon is gone */
		me->errors++;
		fprintf(stderr, "stress: client ioctl: %s\n", strerror(errno));
	}
	absorb_batch(me);
	me->pending = P_NONE;
	me->requests++;
	me->ops += nops;
	me->beat++;
	{
		uint32_t gone[BATCH_OPS], ng = 0;

		for (unsigned int i = 0; i < nops; i++) {
			int e = b->u.ops[i].error;

			if (e == -ENOMEM)
				me->enomem++;
			if (e < 0 && -e <= EHWPOISON)
				me->errs[-e]++;
			if (fop[i] < 0)
				continue;
			if (e == -EINVAL)
				me->stale++;
			if (e == 0 || e == -EINVAL)
				gone[ng++] = fidx[i];
		}
		for (uint32_t a = 0; a < ng; a++)
			for (uint32_t c2 = a + 1; c2 < ng; c2++)
				if (gone[c2] > gone[a]) {
					uint32_t t = gone[a];

					gone[a] = gone[c2];
					gone[c2] = t;
				}
		for (uint32_t a = 0; a < ng; a++)
			unhold(me, gone[a]);
	}
}

static void client(int slotno)
{
	char req[128];

	me = &sh->slot[slotno];
	rng_state = ((uint64_t)seed << 32) ^ ((uint64_t)slotno << 16) ^ me->gen ^ 0x9e3779b97f4a7c15ull;
	/* the controller is -1000; a client is an ordinary OOM victim */
	{
		int fd = open("/proc/self/oom_score_adj", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "0", 1) < 0)
				perror("oom_score_adj");
			close(fd);
		}
	}
	signal(SIGPIPE, SIG_DFL);
	while (!sh->stop) {
		uint32_t r = rndn(100);
		bool full = me->nh > HOLD_MAX || me->held_bytes > HOLD_BYTES;

		if (r < 6) {
			do_migrate();
		} else if (r < 30 && !full) {
			uint32_t g = pick_gfp(), sz = kmalloc_size();

			snprintf(req, sizeof(req), "kmalloc %u %s x%u", sz, gfps[g], 1 + rndn(MAX_PER_REQ));
			text_recl(req, K_OBJ, -1, sz, (gfp_bits[g] & MEMCGFS_GFP_RECLAIMABLE) != 0);
		} else if (r < 50) {
			text_free(K_OBJ, -1, false);
		} else if (r < 62) {
			if (!full)
				do_cache();
			else
				text_free(K_OBJ, (int)rndn(NCACHE), true);
		} else if (r < 70 && !full) {
			snprintf(req, sizeof(req), "alloc_pages %s order=%u x%u", ptypes[rndn(8)], rndn(3),
				 1 + rndn(4));
			text(req, K_PAGE, -1, 4096);
		} else if (r < 78) {
			text_free(K_PAGE, -1, false);
		} else if (r < 96) {
			do_batch(!full);
		} else if (r < 98) {
			text("drain", 0, -1, 0);
		} else {
			text("whoami", 0, -1, 0);
		}
	}
	_exit(0);
}

/* ---- the controller ---- */
static struct {
	uint64_t sigkills, killed_mid_request, oom_deaths, other_deaths, respawns, recovered;
	uint64_t mkdir_ok, mkdir_fail, rmdir_ok, rmdir_busy, rmdir_fail;
	uint64_t limits, limit_fail, reclaims, reclaim_fail;
	uint64_t checks, checks_busy_ok, checks_busy_mismatch, checks_quiet_ok, checks_quiet_bad;
	uint64_t quiet_points, cgroup_kills, subtree_toggles, reads;
} st;
static char first_busy_mismatch[256];
static uint64_t ctl_errs[EHWPOISON + 1];	/* the controller's failed writes */
static const char *slowest_what = "nothing";
static double slowest;

/* the controller's slowest step, for the summary (no timing is asserted) */
static void slow(const char *what, double t0, double t1)
{
	if (t1 - t0 > slowest) {
		slowest = t1 - t0;
		slowest_what = what;
	}
}

static void ctl_err(int err)
{
	if (err < 0 && -err <= EHWPOISON)
		ctl_errs[-err]++;
}

static void ctl_open(struct slot *s)
{
	char p[512];

	path_of(p, sizeof(p), "", "memcgfs.ctl");
	s->fd = open(p, O_RDWR);
	if (s->fd < 0) {
		fprintf(stderr, "stress: open %s: %s\n", p, strerror(errno));
		exit(1);
	}
}

static void spawn(int i)
{
	struct slot *s = &sh->slot[i];
	pid_t pid;

	s->gen++;
	s->killed = false;
	s->cg = -1;		/* forked in the root */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		client(i);
	s->pid = pid;
}

/* after a client's death: the handles of the request it was in */
static void recover(struct slot *s)
{
	char buf[REPLY_MAX];
	ssize_t n;

	if (s->pending == P_TEXT) {
		if (s->reply[0]) {
			absorb_text(s, s->reply);
		} else {
			n = read(s->fd, buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = '\0';
				absorb_text(s, buf);
				st.recovered++;
			}
		}
	} else if (s->pending == P_IOCTL) {
		absorb_batch(s);
	}
	/* whatever reply is left in the session */
	n = read(s->fd, buf, sizeof(buf) - 1);
	(void)n;
	s->pending = P_NONE;
}

/* reap dead clients; respawn when running */
static void reap(bool respawn)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int i;

		for (i = 0; i < nclients; i++)
			if (sh->slot[i].pid == pid)
				break;
		if (i == nclients)
			continue;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			if (!sh->slot[i].killed)
				st.oom_deaths++;
		} else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			st.other_deaths++;
			fail("client %d (pid %d) died: status 0x%x", i, (int)pid, status);
		}
		if (sh->slot[i].pending != P_NONE)
			st.killed_mid_request++;
		recover(&sh->slot[i]);
		sh->slot[i].pid = 0;
		if (respawn) {
			st.respawns++;
			spawn(i);
		}
	}
}

static bool node_exists(const char *rel)
{
	char p[512];
	struct stat sb;

	path_of(p, sizeof(p), rel, NULL);
	return stat(p, &sb) == 0;
}

static void do_tree(void)
{
	unsigned int k = rndn(NR_NODES);
	char p[512];

	path_of(p, sizeof(p), nodes[k], NULL);
	if (!node_exists(nodes[k])) {
		if (mkdir(p, 0755) == 0) {
			st.mkdir_ok++;
			if (k < 3 && put(nodes[k], "cgroup.subtree_control", "+memory"))
				st.limit_fail++;
		} else {
			ctl_err(-errno);
			st.mkdir_fail++;	/* ENOENT: no parent; ENOMEM: the parent's limit */
		}
	} else if (rmdir(p) == 0) {
		st.rmdir_ok++;
	} else if (errno == EBUSY) {
		st.rmdir_busy++;
	} else {
		ctl_err(-errno);
		st.rmdir_fail++;
	}
}

static void do_limit(void)
{
	static const char *const maxv[] = { "max", "max", "max", "256K", "1M", "4M", "16M" };
	static const char *const highv[] = { "max", "max", "max", "1M", "2M", "8M" };
	static const char *const lowv[] = { "0", "0", "1M", "4M" };
	const char *node = rndn(8) ? nodes[rndn(NR_NODES)] : "stress";
	uint32_t r = rndn(100);
	int err;

	if (r < 40)
		err = put(node, "memory.max", maxv[rndn(7)]);
	else if (r < 65)
		err = put(node, "memory.high", highv[rndn(6)]);
	else if (r < 80)
		err = put(node, "memory.low", lowv[rndn(4)]);
	else if (r < 88)
		err = put(node, "memory.min", rndn(2) ? "0" : "512K");
	else
		err = put(node, "memory.oom.group", rndn(2) ? "1" : "0");
	ctl_err(err);
	if (err)
		st.limit_fail++;	/* ENOENT: removed meanwhile */
	else
		st.limits++;
}

static void do_reclaim(void)
{
	const char *node = rndn(4) ? nodes[rndn(NR_NODES)] : "stress";
	int err = put(node, "memory.reclaim", rndn(3) ? "16K" : "1M");

	ctl_err(err);
	if (err)
		st.reclaim_fail++;	/* EAGAIN: less could be taken */
	else
		st.reclaims++;
}

/* cgroup.kill of a leaf: its clients are killed by the daemon */
static void do_cgroup_kill(void)
{
	unsigned int k = 3 + rndn(NR_NODES - 3);	/* lN and gN/cM */
	int err;

	for (int i = 0; i < nclients; i++)
		if (sh->slot[i].pid > 0 && sh->slot[i].cg == (int)k)
			sh->slot[i].killed = true;
	err = put(nodes[k], "cgroup.kill", "1");
	ctl_err(err);
	if (!err)
		st.cgroup_kills++;
}

/* memory off and on again in a gN's subtree_control: its children's memcgs go offline */
static void do_subtree(void)
{
	unsigned int k = rndn(3);
	int err = put(nodes[k], "cgroup.subtree_control", rndn(2) ? "-memory" : "+memory");

	ctl_err(err);
	if (!err)
		st.subtree_toggles++;
}

/* read the files a monitoring agent reads */
static void do_read(void)
{
	static const char *const files[] = { "memory.stat", "memory.current", "memory.events",
					     "memory.peak", "cgroup.procs", "cgroup.stat",
					     "memory.numa_stat", "memory.pressure" };
	char buf[8192];
	const char *node = rndn(5) ? nodes[rndn(NR_NODES)] : "stress";

	if (get(node, files[rndn(8)], buf, sizeof(buf)) >= 0)
		st.reads++;
}

static void do_kill(void)
{
	int i = (int)rndn((uint32_t)nclients);
	struct slot *s = &sh->slot[i];

	if (s->pid <= 0 || s->killed)
		return;
	s->killed = true;
	kill(s->pid, SIGKILL);
	st.sigkills++;
}

/* memcgfs.check: 1 ok, 0 not ok (msg) */
static int check(char *msg, size_t len)
{
	char buf[1024];
	ssize_t n = get("", "memcgfs.check", buf, sizeof(buf));

	st.checks++;
	if (n == -ENOTCONN || n == -ENOENT) {
		/* the daemon died: nothing more to learn here, the log says why */
		printf("stress: FAIL: the daemon is gone (memcgfs.check: %s)\n", strerror((int)-n));
		printf("stress: requests=0 ops_per_s=0 sigkills=%" PRIu64 " FAIL\n", st.sigkills);
		fflush(stdout);
		for (int i = 0; i < nclients; i++)
			if (sh->slot[i].pid > 0)
				kill(sh->slot[i].pid, SIGKILL);
		exit(1);
	}
	if (n < 0) {
		snprintf(msg, len, "read memcgfs.check: %s", strerror((int)-n));
		return 0;
	}
	if (!strcmp(buf, "ok\n"))
		return 1;
	snprintf(msg, len, "%.255s", buf);
	msg[strcspn(msg, "\n")] = '\0';
	return 0;
}

/* stop every client: no request of theirs in flight once each is stopped */
static void stop_all(void)
{
	for (int i = 0; i < nclients; i++)
		if (sh->slot[i].pid > 0)
			kill(sh->slot[i].pid, SIGSTOP);
	for (int i = 0; i < nclients; i++) {
		int status;
		pid_t pid = sh->slot[i].pid;

		if (pid <= 0)
			continue;
		if (waitpid(pid, &status, WUNTRACED) == pid && !WIFSTOPPED(status)) {
			/* it died meanwhile (killed, OOM): account it as reap would */
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
				if (!sh->slot[i].killed)
					st.oom_deaths++;
			} else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				st.other_deaths++;
				fail("client %d died: status 0x%x", i, status);
			}
			if (sh->slot[i].pending != P_NONE)
				st.killed_mid_request++;
			recover(&sh->slot[i]);
			sh->slot[i].pid = -1;	/* respawned after the quiet point */
		}
	}
}

static void cont_all(void)
{
	for (int i = 0; i < nclients; i++) {
		if (sh->slot[i].pid > 0) {
			kill(sh->slot[i].pid, SIGCONT);
		} else if (sh->slot[i].pid < 0) {
			st.respawns++;
			spawn(i);
		}
	}
}

static void sync_exits(void)
{
	char buf[256];

	/* reads of cgroup.events collect the exits the daemon has pending */
	(void)get("stress", "cgroup.events", buf, sizeof(buf));
}

static void quiet_check(const char *why)
{
	char msg[512];
	double t0 = now_s();

	stop_all();
	slow("stopping every client", t0, now_s());
	sync_exits();
	st.quiet_points++;
	if (check(msg, sizeof(msg))) {
		st.checks_quiet_ok++;
	} else {
		st.checks_quiet_bad++;
		fail("memcgfs.check at a quiet point (%s): %s", why, msg);
	}
	cont_all();
}

/* ---- the start and end figures ---- */
#define MAX_CACHES	256
struct figures {
	char stat[8192];
	int ncaches;
	struct {
		char name[64];
		long active, num;
	} cache[MAX_CACHES];
	long long arena[6];
};
static const char *const arena_keys[] = { "pages_total", "pages_free", "pages_slab",
					  "pages_large_kmalloc", "pages_alloc", "nr_caches" };

/* memory.stat keys that count events, not bytes or pages: not compared */
static bool stat_is_event(const char *k)
{
	static const char *const ev[] = { "pg", "thp_", "workingset_", "zswpin", "zswpout",
					  "zswpwb", "pswp" };

	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (!strncmp(k, ev[i], strlen(ev[i])))
			return true;
	return false;
}

static int read_figures(struct figures *f)
{
	char buf[65536];
	char *save = NULL;

	if (put("", "memcgfs.arena", "shrink"))
		fail("write shrink to memcgfs.arena: %s", strerror(errno));
	if (get("", "memory.stat", f->stat, sizeof(f->stat)) < 0)
		return -1;
	if (get("", "slabinfo", buf, sizeof(buf)) < 0)
		return -1;
	f->ncaches = 0;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[64];
		long a, n;

		if (l[0] == '#' || !strncmp(l, "slabinfo", 8))
			continue;
		if (sscanf(l, "%63s %ld %ld", name, &a, &n) != 3 || f->ncaches == MAX_CACHES)
			continue;
		snprintf(f->cache[f->ncaches].name, sizeof(f->cache[0].name), "%s", name);
		f->cache[f->ncaches].active = a;
		f->cache[f->ncaches].num = n;
		f->ncaches++;
	}
	if (get("", "memcgfs.arena", buf, sizeof(buf)) < 0)
		return -1;
	for (int i = 0; i < 6; i++)
		f->arena[i] = keyval(buf, arena_keys[i]);
	return 0;
}

/* the figures differ: a count, with each difference reported unless quiet */
static int compare_figures(const struct figures *a, const struct figures *b, bool quiet)
{
	char sa[8192], *save = NULL;
	int bad = 0;

	snprintf(sa, sizeof(sa), "%s", a->stat);
	for (char *l = strtok_r(sa, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char key[64];
		long long va, vb;

		if (sscanf(l, "%63s %lld", key, &va) != 2 || stat_is_event(key))
			continue;
		vb = keyval(b->stat, key);
		if (va != vb) {
			if (!quiet)
				fail("root memory.stat %s: %lld at the start, %lld at the end", key,
				     va, vb);
			bad++;
		}
	}
	for (int i = 0; i < a->ncaches; i++) {
		int j;

		for (j = 0; j < b->ncaches; j++)
			if (!strcmp(a->cache[i].name, b->cache[j].name))
				break;
		if (j == b->ncaches) {
			if (!quiet)
				fail("slabinfo: cache %s is gone", a->cache[i].name);
			bad++;
			continue;
		}
		if (a->cache[i].active != b->cache[j].active || a->cache[i].num != b->cache[j].num) {
			if (!quiet)
				fail("slabinfo %s: active_objs %ld num_objs %ld at the start, "
				     "%ld %ld at the end", a->cache[i].name, a->cache[i].active,
				     a->cache[i].num, b->cache[j].active, b->cache[j].num);
			bad++;
		}
	}
	for (int j = 0; j < b->ncaches; j++) {
		int i;

		for (i = 0; i < a->ncaches; i++)
			if (!strcmp(a->cache[i].name, b->cache[j].name))
				break;
		if (i == a->ncaches) {
			if (!quiet)
				fail("slabinfo: cache %s left over (active_objs %ld)",
				     b->cache[j].name, b->cache[j].active);
			bad++;
		}
	}
	for (int i = 0; i < 6; i++) {
		if (a->arena[i] != b->arena[i] || a->arena[i] < 0) {
			if (!quiet)
				fail("memcgfs.arena %s: %lld at the start, %lld at the end",
				     arena_keys[i], a->arena[i], b->arena[i]);
			bad++;
		}
	}
	return bad;
}

static int drain(void)
{
	int fd;
	char p[512], buf[64];
	ssize_t n;

	path_of(p, sizeof(p), "", "memcgfs.ctl");
	fd = open(p, O_RDWR);
	if (fd < 0)
		return -errno;
	n = write(fd, "drain", 5);
	if (n < 0) {
		close(fd);
		return -errno;
	}
	n = read(fd, buf, sizeof(buf));
	(void)n;
	close(fd);
	return 0;
}

/* free every held handle of every slot, one per operation, in batches */
static void free_all(uint64_t *freed, uint64_t *stale)
{
	static struct memcgfs_ctl_batch_max b;
	char p[512];
	int fd;

	path_of(p, sizeof(p), "", "memcgfs.ctl");
	fd = open(p, O_RDWR);
	if (fd < 0) {
		fail("open memcgfs.ctl: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < nclients; i++) {
		struct slot *s = &sh->slot[i];
		uint32_t k = 0;

		while (k < s->nh) {
			unsigned int n = s->nh - k > 200 ? 200 : s->nh - k;

			memset(&b, 0, sizeof(b));
			b.hdr.version = MEMCGFS_CTL_VERSION;
			b.hdr.nr_ops = (uint16_t)n;
			for (unsigned int j = 0; j < n; j++) {
				struct memcgfs_ctl_op *op = &b.u.ops[j];

				op->op = s->h[k + j].kind == K_PAGE ? MEMCGFS_OP_FREE_PAGES : MEMCGFS_OP_KFREE;
				op->count = 1;
				op->slot = (uint16_t)(MEMCGFS_CTL_FIRST_SLOT(n) + j);
				b.u.slots[op->slot] = s->h[k + j].tok;
			}
			if (ioctl(fd, MEMCGFS_IOC_BATCH(MEMCGFS_CTL_MAX_SIZE), &b) < 0) {
				fail("free batch: %s", strerror(errno));
				break;
			}
			for (unsigned int j = 0; j < n; j++) {
				int e = b.u.ops[j].error;

				if (!e)
					(*freed)++;
				else if (e == -EINVAL)
					(*stale)++;
				else
					fail("freeing handle %" PRIx64 " at the end: %s", s->h[k + j].tok,
					     strerror(-e));
			}
			k += n;
		}
		s->nh = 0;
		s->held_bytes = 0;
	}
	close(fd);
}

static void destroy_caches(void)
{
	char buf[65536], req[128], rep[256], *save = NULL;
	int fd;
	char p[512];

	path_of(p, sizeof(p), "", "memcgfs.ctl");
	fd = open(p, O_RDWR);
	if (fd < 0 || get("", "slabinfo", buf, sizeof(buf)) < 0) {
		fail("destroy caches: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[64];
		ssize_t n;

		if (sscanf(l, "%63s", name) != 1 || strncmp(name, "stress_", 7))
			continue;
		snprintf(req, sizeof(req), "kmem_cache_destroy %s", name);
		if (write(fd, req, strlen(req)) < 0) {
			n = read(fd, rep, sizeof(rep) - 1);
			rep[n > 0 ? n : 0] = '\0';
			fail("kmem_cache_destroy %s at the end: %s", name, rep);
		} else {
			n = read(fd, rep, sizeof(rep));
		}
	}
	close(fd);
}

static int rmdir_tree(void)
{
	int left = 0;

	for (int i = (int)NR_NODES - 1; i >= 0; i--) {
		char p[512];

		if (!node_exists(nodes[i]))
			continue;
		path_of(p, sizeof(p), nodes[i], NULL);
		for (int t = 0; rmdir(p) && t < 100; t++) {
			if (t == 99) {
				fail("rmdir %s at the end: %s", nodes[i], strerror(errno));
				left++;
			}
			usleep(20000);
		}
	}
	return left;
}

/*
 * Before the start figures: a slab gets its obj_exts vector (the objcg
 * pointers of its objects, 8 bytes each, from kmalloc) with its first
 * accounted object and loses it only with the slab, as in the kernel.  The
 * slabs that hold the root memcg's accounted statistics arrays (kmalloc-cg-*)
 * live for ever and take a grandchild's arrays when they have room: so
 * their vectors would first appear during the run and stay.  Make them
 * appear now: many cgroups below a child, then remove them all and settle.
 */
static void warm_up(void)
{
	char p[512], name[64];
	struct figures *a = calloc(2, sizeof(*a));

	/* the cpu slabs to the partial lists, where the next allocation takes them */
	if (put("", "memcgfs.arena", "shrink"))
		fprintf(stderr, "stress: warm-up: shrink: %s\n", strerror(errno));
	path_of(p, sizeof(p), "stress-warmup", NULL);
	if (!a || mkdir(p, 0755) || put("stress-warmup", "cgroup.subtree_control", "+memory")) {
		fprintf(stderr, "stress: warm-up: %s\n", strerror(errno));
		free(a);
		return;
	}
	for (int i = 0; i < 64; i++) {
		/* the first ones each right after a shrink: every partial slab gets its turn */
		if (i < 16)
			(void)put("", "memcgfs.arena", "shrink");
		snprintf(name, sizeof(name), "stress-warmup/w%d", i);
		path_of(p, sizeof(p), name, NULL);
		(void)mkdir(p, 0755);
	}
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "stress-warmup/w%d", i);
		path_of(p, sizeof(p), name, NULL);
		(void)rmdir(p);
	}
	path_of(p, sizeof(p), "stress-warmup", NULL);
	(void)rmdir(p);
	/* until two reads a grace period apart agree */
	for (int t = 0; t < 100; t++) {
		drain();
		usleep(30000);
		drain();
		if (read_figures(&a[t & 1]) == 0 && t && !compare_figures(&a[0], &a[1], true))
			break;
	}
	free(a);
}

static void on_alarm(int sig)
{
	static const char m[] = "stress: FAIL: watchdog: the run did not finish in time (a hang)\n";

	(void)sig;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(2);
	_exit(2);
}

static long envl(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : def;
}

int main(int argc, char **argv)
{
	static struct figures start, end;
	double seconds, t0, t_end, last_busy, last_quiet, elapsed;
	uint64_t requests = 0, ops = 0, migrations = 0, mig_fail = 0, enomem = 0, errors = 0;
	uint64_t stale = 0, freed_end = 0, stale_end = 0, errs[EHWPOISON + 1] = { 0 };
	long long oom_kill = -1, oom_group_kill = -1, oom_ev = -1;
	char buf[4096], msg[512];

	if (argc != 2) {
		fprintf(stderr, "usage: stress MOUNTPOINT\n");
		return 2;
	}
	mnt = argv[1];
	seconds = (double)envl("STRESS_SECONDS", 60);
	nclients = (int)envl("STRESS_CLIENTS", 8);
	if (nclients < 1 || nclients > MAX_CLIENTS)
		nclients = 8;
	seed = (unsigned int)envl("STRESS_SEED", (long)time(NULL));
	rng_state = ((uint64_t)seed << 1) | 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("stress: %s, %d clients, %.0f s, seed %u\n", mnt, nclients, seconds, seed);
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)seconds + 180);
	{
		int fd = open("/proc/self/oom_score_adj", O_WRONLY);

		if (fd >= 0) {
			/* without CAP_SYS_RESOURCE this fails: no matter */
			if (write(fd, "-1000", 5) < 0)
				errno = 0;
			close(fd);
		}
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	warm_up();
	if (drain() || read_figures(&start)) {
		fprintf(stderr, "stress: cannot read the start figures under %s\n", mnt);
		return 1;
	}
	path_of(buf, sizeof(buf), "stress", NULL);
	if (mkdir(buf, 0755) || put("stress", "cgroup.subtree_control", "+memory")) {
		fprintf(stderr, "stress: mkdir %s/stress: %s\n", mnt, strerror(errno));
		return 1;
	}
	for (unsigned int k = 0; k < NR_NODES; k++) {
		char p[512];

		path_of(p, sizeof(p), nodes[k], NULL);
		if (mkdir(p, 0755) == 0 && k < 3)
			put(nodes[k], "cgroup.subtree_control", "+memory");
	}
	for (int i = 0; i < nclients; i++) {
		ctl_open(&sh->slot[i]);
		spawn(i);
	}

	t0 = now_s();
	t_end = t0 + seconds;
	last_busy = last_quiet = t0;
	while (now_s() < t_end) {
		uint32_t r = rndn(100);

		double a0;

		reap(true);
		a0 = now_s();
		if (r < 35)
			slow("mkdir/rmdir", a0, (do_tree(), now_s()));
		else if (r < 65)
			slow("a limit write", a0, (do_limit(), now_s()));
		else if (r < 75)
			slow("memory.reclaim", a0, (do_reclaim(), now_s()));
		else if (r < 85)
			do_kill();
		else if (r < 88)
			do_cgroup_kill();
		else if (r < 91)
			slow("cgroup.subtree_control", a0, (do_subtree(), now_s()));
		else
			do_read();
		usleep(5000 + rndn(20000));
		if (now_s() - last_busy > 0.5) {
			last_busy = now_s();
			if (check(msg, sizeof(msg))) {
				st.checks_busy_ok++;
			} else {
				/* perhaps a charge in flight: the quiet check decides */
				st.checks_busy_mismatch++;
				if (!first_busy_mismatch[0])
					snprintf(first_busy_mismatch, sizeof(first_busy_mismatch), "%.200s", msg);
				quiet_check("after a busy mismatch");
			}
		}
		if (now_s() - last_quiet > 5) {
			quiet_check("periodic");
			last_quiet = now_s();
		}
	}
	elapsed = now_s() - t0;

	/* the end: stop, kill everyone, collect what they held */
	sh->stop = 1;
	for (int i = 0; i < nclients; i++) {
		if (sh->slot[i].pid > 0) {
			sh->slot[i].killed = true;
			kill(sh->slot[i].pid, SIGKILL);
			st.sigkills++;
		}
	}
	for (int i = 0; i < nclients; i++) {
		int status;
		struct slot *s = &sh->slot[i];

		if (s->pid > 0 && waitpid(s->pid, &status, 0) == s->pid) {
			if (s->pending != P_NONE)
				st.killed_mid_request++;
			recover(s);
		}
		s->pid = 0;
		requests += s->requests;
		ops += s->ops;
		migrations += s->migrations;
		mig_fail += s->mig_fail;
		enomem += s->enomem;
		errors += s->errors;
		stale += s->stale;
		for (int e = 0; e <= EHWPOISON; e++)
			errs[e] += s->errs[e];
	}
	sync_exits();
	if (get("stress", "memory.events", buf, sizeof(buf)) > 0) {
		oom_ev = keyval(buf, "oom");
		oom_kill = keyval(buf, "oom_kill");
		oom_group_kill = keyval(buf, "oom_group_kill");
	}
	if (check(msg, sizeof(msg))) {
		st.checks_quiet_ok++;
	} else {
		st.checks_quiet_bad++;
		fail("memcgfs.check with every client gone: %s", msg);
	}

	free_all(&freed_end, &stale_end);
	destroy_caches();
	rmdir_tree();
	{
		char p[512];

		path_of(p, sizeof(p), "stress", NULL);
		for (int t = 0; rmdir(p) && t < 100; t++)
			if (t == 99)
				fail("rmdir stress at the end: %s", strerror(errno));
	}
	/*
	 * Settle: the dying cgroups and the released objcgs are freed a
	 * grace period after their last reference, one level a round (an
	 * objcg's release drops its memcg, a memcg's its parent); drain
	 * reaps.  Up to 10 s for the figures to come back.
	 */
	for (int t = 0;; t++) {
		bool reaped;

		drain();
		usleep(30000);
		drain();
		reaped = get("", "cgroup.stat", buf, sizeof(buf)) > 0 &&
			 keyval(buf, "nr_dying_descendants") == 0 &&
			 keyval(buf, "nr_descendants") == 0;
		if (read_figures(&end)) {
			fail("cannot read the end figures");
			break;
		}
		if (reaped && !compare_figures(&start, &end, true))
			break;
		if (t == 300) {
			if (!reaped)
				fail("dying cgroups not reaped in 10 s: %s", buf);
			compare_figures(&start, &end, false);
			break;
		}
	}
	if (check(msg, sizeof(msg))) {
		st.checks_quiet_ok++;
	} else {
		st.checks_quiet_bad++;
		fail("memcgfs.check at the end: %s", msg);
	}

	printf("stress: %.1f s, %d clients: %" PRIu64 " requests (%" PRIu64 " operations), "
	       "%.0f requests/s, %.0f operations/s\n",
	       elapsed, nclients, requests, ops, (double)requests / elapsed, (double)ops / elapsed);
	printf("stress: ENOMEM %" PRIu64 ", other request errors %" PRIu64 ", stale handles %" PRIu64
	       "\n", enomem, errors, stale);
	printf("stress: clients' failed requests and operations by errno:");
	for (int e = 1; e <= EHWPOISON; e++)
		if (errs[e])
			printf(" %s %" PRIu64, strerrorname_np(e), errs[e]);
	printf("\nstress: the controller's failed writes by errno:");
	for (int e = 1; e <= EHWPOISON; e++)
		if (ctl_errs[e])
			printf(" %s %" PRIu64, strerrorname_np(e), ctl_errs[e]);
	printf("\n");
	printf("stress: migrations %" PRIu64 " (failed %" PRIu64 "), mkdir %" PRIu64 " (failed %" PRIu64
	       "), rmdir %" PRIu64 " (EBUSY %" PRIu64 ", other %" PRIu64 ")\n",
	       migrations, mig_fail, st.mkdir_ok, st.mkdir_fail, st.rmdir_ok, st.rmdir_busy,
	       st.rmdir_fail);
	printf("stress: limit writes %" PRIu64 " (failed %" PRIu64 "), memory.reclaim %" PRIu64
	       " (failed %" PRIu64 "), cgroup.kill %" PRIu64 ", subtree_control toggles %" PRIu64
	       ", file reads %" PRIu64 "\n", st.limits, st.limit_fail, st.reclaims, st.reclaim_fail,
	       st.cgroup_kills, st.subtree_toggles, st.reads);
	printf("stress: SIGKILLs sent %" PRIu64 ", clients killed in a request %" PRIu64
	       ", killed by the OOM killer %" PRIu64 ", respawned %" PRIu64
	       ", replies recovered from sessions %" PRIu64 "\n",
	       st.sigkills, st.killed_mid_request, st.oom_deaths, st.respawns, st.recovered);
	printf("stress: the controller's slowest step: %s, %.2f s\n", slowest_what, slowest);
	printf("stress: memory.events of /stress: oom %lld oom_kill %lld oom_group_kill %lld\n",
	       oom_ev, oom_kill, oom_group_kill);
	printf("stress: at the end %" PRIu64 " handles freed, %" PRIu64 " stale\n", freed_end,
	       stale_end);
	printf("stress: invariant checks %" PRIu64 ": busy ok %" PRIu64 ", busy mismatch %" PRIu64
	       "%s%s%s, quiet ok %" PRIu64 ", quiet failed %" PRIu64 " (%" PRIu64 " quiet points)\n",
	       st.checks, st.checks_busy_ok, st.checks_busy_mismatch,
	       first_busy_mismatch[0] ? " (first: " : "", first_busy_mismatch,
	       first_busy_mismatch[0] ? ")" : "", st.checks_quiet_ok, st.checks_quiet_bad,
	       st.quiet_points);
	printf("stress: requests=%" PRIu64 " ops_per_s=%.0f sigkills=%" PRIu64 " migrations=%" PRIu64
	       " mkdir=%" PRIu64 " rmdir=%" PRIu64 " oom_kills=%lld checks=%" PRIu64 " %s\n",
	       requests, (double)ops / elapsed, st.sigkills, migrations, st.mkdir_ok, st.rmdir_ok,
	       oom_kill, st.checks, failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}
