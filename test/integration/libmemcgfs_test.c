/* SPDX-License-Identifier: MIT */
/*
 * libmemcgfs_test - libmemcgfs through a real mount (run by t_client.sh):
 * finding the mount, every operation as a single text request and in
 * batches (chunked across several ioctls), their errors as negative
 * errnos, the charges they leave in memory.stat, and one handle shared by
 * threads.  Prints "ok - WHAT" / "not ok - WHAT" lines that t_client.sh
 * counts.
 *
 * usage: libmemcgfs-test MOUNT CGROUP   (CGROUP: a child with memory.*
 *        files, e.g. "a"; the program moves itself there)
 */
#include <libmemcgfs.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* the daemon's entry for one handle, charged to the caller as slab (ctl_handle_bytes) */
#define ENTRY	76

static const char *mnt, *cg;
static int failures;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !ok;
}

static const char *ename(int err)
{
	const char *n = strerrorname_np(-err);

	return n ? n : "0";
}

/* got is evaluated once: it is usually the call under test */
#define CHECK_ERR(got, want, what) do {						\
		int got_ = (got), want_ = (want);				\
		check(got_ == want_, "%s: %d (%s), want %d (%s)", what, got_,	\
		      ename(got_), want_, ename(want_));			\
	} while (0)

static long stat_of(const char *key)
{
	char p[4200], line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/memory.stat", mnt, cg);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			v = atol(line + kl + 1);
	fclose(f);
	return v;
}

static int write_file(const char *rel, const char *s)
{
	char p[4200];
	int fd, err = 0;

	snprintf(p, sizeof(p), "%s/%s", mnt, rel);
	fd = open(p, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void set_max(const char *v)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/memory.max", cg);
	write_file(p, v);
}

static bool distinct(const uint64_t *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!h[i])
			return false;
		for (size_t j = i + 1; j < n && j < i + 64; j++)
			if (h[i] == h[j])
				return false;
	}
	return true;
}

/* fuse.memcgfs entries of the mount table */
static int memcgfs_mounts(void)
{
	char line[8192];
	int n = 0;
	FILE *f = fopen("/proc/self/mounts", "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, " fuse.memcgfs ") != NULL;
	if (f)
		fclose(f);
	return n;
}

static void test_find(void)
{
	char buf[MEMCGFS_PATH_MAX], sub[MEMCGFS_PATH_MAX];
	struct memcgfs *m;
	int err;

	setenv("MEMCGFS_MOUNT", mnt, 1);
	err = memcgfs_find_mount(NULL, buf, sizeof(buf));
	check(!err && !strcmp(buf, mnt), "find_mount: $MEMCGFS_MOUNT (%s)", buf);
	snprintf(sub, sizeof(sub), "%s/%s", mnt, cg);
	err = memcgfs_find_mount(sub, buf, sizeof(buf));
	check(!err && !strcmp(buf, mnt), "find_mount: a cgroup directory leads to its mount");
	CHECK_ERR(memcgfs_find_mount("/proc", buf, sizeof(buf)), -ENOENT,
		  "find_mount: not memcgfs");
	CHECK_ERR(memcgfs_find_mount("/nonexistent/x", buf, sizeof(buf)), -ENOENT,
		  "find_mount: no such directory");
	CHECK_ERR(memcgfs_find_mount(mnt, buf, 4), -ENAMETOOLONG, "find_mount: buffer too small");
	unsetenv("MEMCGFS_MOUNT");
	if (memcgfs_mounts() == 1) {
		err = memcgfs_find_mount(NULL, buf, sizeof(buf));
		check(!err && !strcmp(buf, mnt), "find_mount: the mount table's fuse.memcgfs (%s)",
		      buf);
	} else {
		/* another mount may be busy or stuck: its stat would wait for it */
		printf("# %d memcgfs mounts here: the mount table's first is not ours\n",
		       memcgfs_mounts());
	}
	CHECK_ERR(memcgfs_open("/proc", &m), -ENOENT, "open: not memcgfs");
	check(m == NULL, "open: failure leaves *out NULL");
}

static void test_single(struct memcgfs *m)
{
	struct memcgfs_whoami w;
	struct memcgfs_ctl_cache_info ci = { 0 };
	uint64_t h[1024], one;
	char reply[256], detail[256];
	struct memcgfs_op op;
	int err;

	err = memcgfs_whoami(m, &w);
	check(!err && w.pid == getpid() && !strcmp(w.cgroup + 1, cg),
	      "whoami: pid %d cgroup %s cpu %d", (int)w.pid, w.cgroup, w.cpu);

	memcgfs_drain(m);
	err = memcgfs_kmalloc(m, 1000, MEMCGFS_GFP_KERNEL_ACCOUNT, 10, h);
	check(!err && distinct(h, 10), "kmalloc 1000 GFP_KERNEL_ACCOUNT x10: 10 handles");
	CHECK_ERR(memcgfs_drain(m), 0, "drain");
	check(stat_of("slab_unreclaimable") == 10320 + 10 * ENTRY,
	      "memory.stat: 10 x (1024 + 8) and 10 handle entries of slab (%ld)",
	      stat_of("slab_unreclaimable"));
	CHECK_ERR(memcgfs_kfree(m, h, 10), 0, "kfree x10");
	memcgfs_drain(m);
	check(stat_of("slab") == 0, "after kfree and drain: slab 0");
	CHECK_ERR(memcgfs_kfree(m, h, 10), -EINVAL, "kfree of stale handles");
	one = 0;
	CHECK_ERR(memcgfs_kfree(m, &one, 1), 0, "kfree(NULL)");
	CHECK_ERR(memcgfs_kfree(m, h, 0), -EINVAL, "kfree of no handle");
	CHECK_ERR(memcgfs_kmalloc(m, 0, 0, 1, h), -EINVAL, "kmalloc 0");
	CHECK_ERR(memcgfs_kmalloc(m, 8 << 20, 0, 1, h), -EINVAL, "kmalloc above KMALLOC_MAX_SIZE");
	CHECK_ERR(memcgfs_kmalloc(m, 8, 0, 1025, h), -EINVAL, "kmalloc x1025");
	CHECK_ERR(memcgfs_kmalloc(m, 8, 0x200, 1, h), -EINVAL, "kmalloc with an unknown gfp bit");

	err = memcgfs_kmem_cache_create(m, "seed2312", 2312, 0,
					MEMCGFS_SLAB_HWCACHE_ALIGN | MEMCGFS_SLAB_ACCOUNT, &ci);
	check(!err && ci.objsize == 2312 && ci.size == 2368,
	      "kmem_cache_create seed2312 2312 SLAB_HWCACHE_ALIGN: objsize %u size %u "
	      "objperslab %u pagesperslab %u", ci.objsize, ci.size, ci.objperslab, ci.pagesperslab);
	CHECK_ERR(memcgfs_kmem_cache_create(m, "seed2312", 2312, 0, 0, NULL), -EEXIST,
		  "kmem_cache_create: the name is taken");
	CHECK_ERR(memcgfs_kmem_cache_create(m, "bad name", 64, 0, 0, NULL), -EINVAL,
		  "kmem_cache_create: a name with a space");
	CHECK_ERR(memcgfs_kmem_cache_alloc(m, "seed2312", 0, 3, h), 0, "kmem_cache_alloc x3");
	CHECK_ERR(memcgfs_kmem_cache_destroy(m, "seed2312"), -EBUSY, "destroy with objects: EBUSY");
	CHECK_ERR(memcgfs_kmem_cache_free(m, "kmalloc-64", h, 3), -EINVAL,
		  "kmem_cache_free with the wrong cache");
	CHECK_ERR(memcgfs_kmem_cache_free(m, "seed2312", h, 3), 0, "kmem_cache_free x3");
	CHECK_ERR(memcgfs_kmem_cache_destroy(m, "seed2312"), 0, "kmem_cache_destroy");
	CHECK_ERR(memcgfs_kmem_cache_destroy(m, "seed2312"), -ENOENT, "destroy again: ENOENT");
	CHECK_ERR(memcgfs_kmem_cache_alloc(m, "nosuch", 0, 1, h), -ENOENT, "alloc from no cache");
	CHECK_ERR(memcgfs_kmem_cache_alloc(m, "mem_cgroup", 0, 1, h), -EPERM,
		  "alloc from an internal cache: EPERM");

	err = memcgfs_alloc_pages(m, MEMCGFS_PAGE_FILE, 1, 2, h);
	memcgfs_drain(m);
	check(!err && stat_of("file") == 4 * 4096, "alloc_pages file order=1 x2: memory.stat file %ld",
	      stat_of("file"));
	CHECK_ERR(memcgfs_kfree(m, h, 2), -EINVAL, "kfree of page handles");
	CHECK_ERR(memcgfs_free_pages(m, h, 2), 0, "free_pages");
	CHECK_ERR(memcgfs_alloc_pages(m, 99, 0, 1, h), -EINVAL, "alloc_pages of no type");
	CHECK_ERR(memcgfs_alloc_pages(m, MEMCGFS_PAGE_ANON, 11, 1, h), -EINVAL, "order 11");

	/* memory.max: ENOMEM end to end, nothing left charged */
	set_max("64K");
	CHECK_ERR(memcgfs_kmalloc(m, 4096, MEMCGFS_GFP_KERNEL_ACCOUNT, 64, h), -ENOMEM,
		  "kmalloc x64 of 4096 under memory.max 64K");
	memset(&op, 0, sizeof(op));
	op.op = MEMCGFS_OP_KMALLOC;
	op.size = 4096;
	op.flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
	op.count = 64;
	op.handles = h;
	err = memcgfs_exec(m, &op, detail, sizeof(detail));
	check(err == -ENOMEM && op.error == -ENOMEM && strstr(detail, "out of memory"),
	      "exec: ENOMEM and the daemon's detail '%s'", detail);
	memcgfs_drain(m);
	check(stat_of("slab") == 0, "all or nothing: no slab left (%ld)", stat_of("slab"));
	set_max("max");

	/* the text protocol raw */
	err = memcgfs_request(m, "whoami", reply, sizeof(reply));
	check(!err && !strncmp(reply, "ok pid=", 7), "request whoami: '%s'", reply);
	err = memcgfs_request(m, "bogus", reply, sizeof(reply));
	check(err == -EINVAL && !strncmp(reply, "error EINVAL ", 13), "request bogus: %d '%s'",
	      err, reply);

	/* what text cannot carry goes as a batch of one */
	memset(&op, 0, sizeof(op));
	op.op = MEMCGFS_OP_ALLOC_PAGES;
	op.type = MEMCGFS_PAGE_FILE;
	op.count = 1;
	op.handles = h;
	op.site = "pages_with_site";
	check(!memcgfs_exec(m, &op, NULL, 0), "exec alloc_pages with a site (through the ioctl)");
	check(!memcgfs_free_pages(m, h, 1), "... and free it");
	err = memcgfs_kmalloc(m, 8, 0, 1024, h);
	check(!err && distinct(h, 1024), "kmalloc x1024: 1024 handles in one reply");
	CHECK_ERR(memcgfs_kfree(m, h, 1024), 0, "kfree of 1024 handles (more than a text request)");
	CHECK_ERR(memcgfs_kfree(m, h, 1024), -EINVAL, "... stale afterwards, checked whole");
}

static void test_batch(struct memcgfs *m)
{
	enum { N = 1000, BIG = 20 };
	struct memcgfs_op *ops = calloc(N, sizeof(*ops));
	uint64_t *h = calloc((size_t)BIG * 1024, sizeof(*h)), stale;
	struct memcgfs_whoami w;
	struct memcgfs_ctl_cache_info ci = { 0 };
	bool ok = true;
	int err;

	memcgfs_drain(m);
	/* 1000 one-object kmallocs: 3 ioctls of at most 409 operations */
	for (size_t i = 0; i < N; i++) {
		ops[i].op = MEMCGFS_OP_KMALLOC;
		ops[i].size = 64;
		ops[i].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
		ops[i].handles = &h[i];
	}
	err = memcgfs_batch(m, ops, N);
	for (size_t i = 0; i < N; i++)
		ok = ok && !ops[i].error;
	check(!err && ok && distinct(h, N), "batch: 1000 kmalloc operations, chunked");
	memcgfs_drain(m);
	check(stat_of("slab_unreclaimable") == N * (72 + ENTRY),
	      "memory.stat: 1000 x (64 + 8) and their entries (%ld)",
	      stat_of("slab_unreclaimable"));
	memset(ops, 0, N * sizeof(*ops));
	for (size_t i = 0; i < 10; i++) {
		ops[i].op = MEMCGFS_OP_KFREE;
		ops[i].count = 100;
		ops[i].handles = &h[i * 100];
	}
	CHECK_ERR(memcgfs_batch(m, ops, 10), 0, "batch: 10 kfrees of 100 handles");
	memcgfs_drain(m);
	check(stat_of("slab") == 0, "all freed (%ld)", stat_of("slab"));

	/* 20 operations of 1024: one a batch */
	memset(ops, 0, N * sizeof(*ops));
	for (size_t i = 0; i < BIG; i++) {
		ops[i].op = MEMCGFS_OP_KMALLOC;
		ops[i].size = 32;
		ops[i].count = 1024;
		ops[i].handles = &h[i * 1024];
	}
	err = memcgfs_batch(m, ops, BIG);
	check(!err && distinct(h, (size_t)BIG * 1024), "batch: 20 x kmalloc x1024 (20 ioctls)");
	for (size_t i = 0; i < BIG; i++)
		ops[i].op = MEMCGFS_OP_KFREE;
	CHECK_ERR(memcgfs_batch(m, ops, BIG), 0, "batch: 20 x kfree of 1024");

	/* one result per operation; a failure undoes nothing */
	memset(ops, 0, N * sizeof(*ops));
	stale = h[0];
	ops[0].op = MEMCGFS_OP_KMALLOC, ops[0].size = 100, ops[0].handles = &h[0];
	ops[0].site = "batch_site", ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
	ops[1].op = MEMCGFS_OP_KFREE, ops[1].count = 1, ops[1].handles = &stale;
	ops[2].op = MEMCGFS_OP_KMALLOC, ops[2].size = 0, ops[2].handles = &h[1];
	ops[3].op = MEMCGFS_OP_WHOAMI, ops[3].whoami = &w;
	ops[4].op = MEMCGFS_OP_KMALLOC, ops[4].size = 8, ops[4].count = 2000, ops[4].handles = h + 2;
	ops[5].op = MEMCGFS_OP_KMEM_CACHE_CREATE, ops[5].name = "bcache", ops[5].size = 2312;
	ops[5].flags = MEMCGFS_SLAB_HWCACHE_ALIGN, ops[5].info = &ci;
	ops[6].op = MEMCGFS_OP_DRAIN;
	ops[7].op = 77;
	err = memcgfs_batch(m, ops, 8);
	CHECK_ERR(err, -EINVAL, "batch with failures: the first failure returned");
	CHECK_ERR(ops[0].error, 0, "op 1 kmalloc with a site: ok");
	CHECK_ERR(ops[1].error, -EINVAL, "op 2 kfree of a stale handle: EINVAL");
	CHECK_ERR(ops[2].error, -EINVAL, "op 3 kmalloc 0: EINVAL (from the daemon)");
	check(!ops[3].error && w.pid == getpid() && !strcmp(w.cgroup + 1, cg),
	      "op 4 whoami: pid %d cgroup %s", (int)w.pid, w.cgroup);
	CHECK_ERR(ops[4].error, -EINVAL, "op 5 count 2000: EINVAL, not sent");
	check(!ops[5].error && ci.size == 2368, "op 6 kmem_cache_create: size %u", ci.size);
	CHECK_ERR(ops[6].error, 0, "op 7 drain");
	CHECK_ERR(ops[7].error, -EINVAL, "op 8 an unknown operation: EINVAL");
	check(stat_of("slab_unreclaimable") == 136 + ENTRY,
	      "op 1 stayed allocated: 128 + 8 and its entry (%ld)",
	      stat_of("slab_unreclaimable"));

	memset(ops, 0, 4 * sizeof(*ops));
	ops[0].op = MEMCGFS_OP_KFREE, ops[0].count = 1, ops[0].handles = &h[0];
	ops[1].op = MEMCGFS_OP_KMEM_CACHE_ALLOC, ops[1].name = "bcache", ops[1].count = 2;
	ops[1].handles = &h[1], ops[1].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
	CHECK_ERR(memcgfs_batch(m, ops, 2), 0, "batch: kfree and kmem_cache_alloc x2");
	ops[0].op = MEMCGFS_OP_KMEM_CACHE_FREE, ops[0].name = "bcache", ops[0].count = 2;
	ops[0].handles = &h[1];
	ops[1] = (struct memcgfs_op){ .op = MEMCGFS_OP_KMEM_CACHE_DESTROY, .name = "bcache" };
	CHECK_ERR(memcgfs_batch(m, ops, 2), 0, "batch: kmem_cache_free then destroy");
	memcgfs_drain(m);
	check(stat_of("slab") == 0, "the batch left nothing charged (%ld)", stat_of("slab"));

	set_max("64K");
	memset(ops, 0, 2 * sizeof(*ops));
	ops[0].op = MEMCGFS_OP_KMALLOC, ops[0].size = 4096, ops[0].count = 64;
	ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT, ops[0].handles = h;
	ops[1].op = MEMCGFS_OP_KMALLOC, ops[1].size = 64, ops[1].count = 1;
	ops[1].flags = MEMCGFS_GFP_KERNEL_ACCOUNT, ops[1].handles = h + 64;
	err = memcgfs_batch(m, ops, 2);
	check(err == -ENOMEM && ops[0].error == -ENOMEM && !ops[1].error,
	      "batch under memory.max: the big one ENOMEM, the small one ok");
	memcgfs_kfree(m, h + 64, 1);
	set_max("max");
	free(ops);
	free(h);
}

struct worker {
	struct memcgfs *m;
	int failed;
};

static void *worker(void *arg)
{
	struct worker *wk = arg;
	uint64_t h[8];

	for (int i = 0; i < 200; i++) {
		if (memcgfs_kmalloc(wk->m, 256, MEMCGFS_GFP_KERNEL_ACCOUNT, 8, h) ||
		    memcgfs_kfree(wk->m, h, 8))
			wk->failed++;
	}
	return NULL;
}

static void test_threads(struct memcgfs *m)
{
	pthread_t t[8];
	struct worker wk[8];
	int failed = 0;

	for (int i = 0; i < 8; i++) {
		wk[i] = (struct worker){ .m = m };
		pthread_create(&t[i], NULL, worker, &wk[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		failed += wk[i].failed;
	}
	memcgfs_drain(m);
	check(!failed && stat_of("slab") == 0,
	      "8 threads on one handle: 1600 kmalloc/kfree pairs, %d failed, slab %ld", failed,
	      stat_of("slab"));
}

/* another user's handle: EPERM, in text and in a batch */
static void test_eperm(struct memcgfs *m)
{
	uint64_t h;
	int st, p[2];
	pid_t pid;

	if (memcgfs_kmalloc(m, 64, 0, 1, &h) || pipe(p))
		return;
	pid = fork();
	if (!pid) {
		struct memcgfs *n;
		struct memcgfs_op op = { .op = MEMCGFS_OP_KFREE, .count = 1, .handles = &h };
		int r[2] = { 1, 1 };

		if (!setgid(65534) && !setuid(65534) && !memcgfs_open(mnt, &n)) {
			r[0] = memcgfs_kfree(n, &h, 1);
			memcgfs_batch(n, &op, 1);
			r[1] = op.error;
			memcgfs_close(n);
		}
		if (write(p[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	{
		int r[2] = { 0, 0 };

		close(p[1]);
		if (read(p[0], r, sizeof(r)) != sizeof(r))
			r[0] = r[1] = 1;
		waitpid(pid, &st, 0);
		close(p[0]);
		CHECK_ERR(r[0], -EPERM, "kfree of another user's object (text)");
		CHECK_ERR(r[1], -EPERM, "kfree of another user's object (batch)");
	}
	CHECK_ERR(memcgfs_kfree(m, &h, 1), 0, "its owner frees it");
}

int main(int argc, char **argv)
{
	struct memcgfs *m;
	char procs[4200], pid[32];
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MOUNT CGROUP\n", argv[0]);
		return 2;
	}
	mnt = argv[1];
	cg = argv[2];
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	err = write_file(procs, pid);
	check(!err, "moved into %s", cg);
	test_find();
	err = memcgfs_open(mnt, &m);
	check(!err && !strcmp(memcgfs_mount_point(m), mnt), "open %s", mnt);
	if (err)
		return 1;
	test_single(m);
	test_batch(m);
	test_threads(m);
	test_eperm(m);
	memcgfs_close(m);
	memcgfs_close(NULL);
	return failures ? 1 : 0;
}
