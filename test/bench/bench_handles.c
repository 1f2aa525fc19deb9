/* SPDX-License-Identifier: MIT */
/*
 * bench_handles - what memcgfs.ctl handles cost the daemon's own memory
 * (issue 14), and the bound one capped user hits.
 *
 *  1. rss_per_million_handles: a mount (machine.memory 1G), root in the root
 *     cgroup makes 1,048,576 handles of kmalloc 8 (1024 text requests of
 *     x1024, one session), then frees them: the daemon's VmRSS before, with
 *     them, after the frees; the growth per million handles, and the part of
 *     it in the arena's slab pages (memcgfs.arena pages_slab: the objects)
 *     beside the rest (the handle table, its index, the session).  Median of
 *     R mounts.
 *  2. rss_capped_uid: a mount with fs.max_handles_per_uid = CAP (262144
 *     unless --cap), a process of uid 65534 in the root cgroup (charged to
 *     nobody, as in the kernel: only the cap bounds it) makes handles x1024
 *     until EDQUOT: how many it got, and the daemon's VmRSS growth; the
 *     goal: within CAP x 100 bytes (the measured cost per handle is about
 *     85).  Then the default cap on this host and the memory it allows one
 *     user, at the cost measured in 1.
 *
 *   bench_handles [--memcgfs PATH] [--reps R] [--cap N]
 * PATH defaults to $MEMCGFS.  Exit 77 without root or FUSE.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_HANDLES	(1024 * 1024)
#define PER_REQ		1024
#define REPLY_MAX	(PER_REQ * 17 + 64)

static const char *memcgfs;
static int opt_reps = 3;
static long opt_cap = 262144;

/* The number of the first line of path that matches fmt ("Key: %ld"). */
static long read_key(const char *path, const char *fmt)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		bench_die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

static long vmrss_kib(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return read_key(path, "VmRSS: %ld");
}

static long arena_slab_pages(const char *mnt)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/memcgfs.arena", mnt);
	return read_key(path, "pages_slab %ld");
}

/* One request on fd, its reply in buf; the errno it failed with, or 0. */
static int request(int fd, const char *req, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int err = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		bench_die("lseek: %s", strerror(errno));
	if (write(fd, req, strlen(req)) < 0)
		err = errno;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0) {
		n += (size_t)r;
		if (buf[n - 1] == '\n')
			break;
	}
	buf[n] = '\0';
	return err;
}

/* "kfree" of the handles of an "ok H H ..." reply, 200 a request. */
static void free_reply(int fd, const char *reply)
{
	static char req[4096], buf[256];
	const char *p = reply + 2;

	while (*p == ' ') {
		size_t n = (size_t)snprintf(req, sizeof(req), "kfree");

		for (int i = 0; i < 200 && *p == ' '; i++) {
			memcpy(req + n, p, 17);
			n += 17;
			p += 17;
		}
		req[n] = '\0';
		if (request(fd, req, buf, sizeof(buf)))
			bench_die("%s", buf);
	}
}

struct rss_run {
	long before, with, after;	/* KiB */
	long slab_pages;		/* arena slab pages the objects took */
};

/* 1: root makes NR_HANDLES and frees them; replies kept to free from */
static void run_million(struct rss_run *r, int run)
{
	static char names[16][24];
	struct bench_daemon *d;
	const char *argv[] = { memcgfs, "-f", "-o", "memory=1G", "-o", "cpus=2", NULL, NULL };
	char path[PATH_MAX + 32];
	static char *replies[NR_HANDLES / PER_REQ];
	long slab0;
	int fd;

	snprintf(names[run], sizeof(names[run]), "million%d", run);
	d = bench_daemon_new(names[run]);
	argv[6] = d->mnt;
	bench_daemon_start(d, -1, argv);
	snprintf(path, sizeof(path), "%s/memcgfs.ctl", d->mnt);
	fd = open(path, O_RDWR);
	if (fd < 0)
		bench_die("%s: %s", path, strerror(errno));
	for (int i = 0; i < NR_HANDLES / PER_REQ; i++) {
		replies[i] = malloc(REPLY_MAX);
		if (!replies[i])
			bench_die("out of memory");
	}
	slab0 = arena_slab_pages(d->mnt);
	r->before = vmrss_kib(d->pid);
	for (int i = 0; i < NR_HANDLES / PER_REQ; i++)
		if (request(fd, "kmalloc 8 x1024", replies[i], REPLY_MAX))
			bench_die("kmalloc 8 x1024: %s", replies[i]);
	r->with = vmrss_kib(d->pid);
	r->slab_pages = arena_slab_pages(d->mnt) - slab0;
	for (int i = 0; i < NR_HANDLES / PER_REQ; i++) {
		free_reply(fd, replies[i]);
		free(replies[i]);
	}
	r->after = vmrss_kib(d->pid);
	close(fd);
	bench_daemon_stop(d);
}

/* 2: uid 65534 until EDQUOT; returns the handles it got */
static long run_capped(long *growth_kib)
{
	struct bench_daemon *d = bench_daemon_new("capped");
	char cap[64];
	const char *argv[] = { memcgfs, "-f", "-o", "memory=1G", "-o", "cpus=2", "-o", cap,
			       d->mnt, NULL };
	int pfd[2];
	long got = -1, before;
	pid_t child;

	snprintf(cap, sizeof(cap), "max_handles_per_uid=%ld", opt_cap);
	{
		/* uid 65534 must reach the mount: the temporary directory 0711 */
		char dir[PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", d->mnt);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (chmod(dir, 0711))
			bench_die("chmod %s: %s", dir, strerror(errno));
	}
	bench_daemon_start(d, -1, argv);
	before = vmrss_kib(d->pid);
	if (pipe(pfd))
		bench_die("pipe: %s", strerror(errno));
	child = fork();
	if (child < 0)
		bench_die("fork: %s", strerror(errno));
	if (!child) {
		static char buf[REPLY_MAX];
		char path[PATH_MAX + 32];
		long n = 0;
		int fd, err;

		close(pfd[0]);
		if (setgid(65534) || setuid(65534))
			_exit(3);
		snprintf(path, sizeof(path), "%s/memcgfs.ctl", d->mnt);
		fd = open(path, O_RDWR);
		if (fd < 0)
			_exit(4);
		while (!(err = request(fd, "kmalloc 8 x1024", buf, sizeof(buf))))
			n += PER_REQ;
		if (err != EDQUOT)
			_exit(5);
		if (write(pfd[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
			_exit(6);
		pause();	/* hold the session until killed */
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &got, sizeof(got)) != (ssize_t)sizeof(got)) {
		int st = 0;

		waitpid(child, &st, 0);
		bench_die("the uid 65534 client failed (status %d)", st);
	}
	close(pfd[0]);
	*growth_kib = vmrss_kib(d->pid) - before;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	bench_daemon_stop(d);
	return got;
}

int main(int argc, char **argv)
{
	struct rss_run runs[16];
	double per_m[16], per_m_other[16], med, med_other;
	long got, growth;
	char buf[64];

	memcgfs = getenv("MEMCGFS");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--memcgfs") && i + 1 < argc)
			memcgfs = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			opt_reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cap") && i + 1 < argc)
			opt_cap = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_handles [--memcgfs PATH] [--reps R] [--cap N]\n");
			return 2;
		}
	}
	if (opt_reps < 1 || opt_reps > 16 || opt_cap < PER_REQ)
		bench_die("--reps 1..16, --cap at least %d", PER_REQ);
	if (!memcgfs)
		bench_die("no memcgfs: --memcgfs PATH or $MEMCGFS");
	bench_require_fuse("bench_handles");
	bench_setup("bench_handles");

	printf("1. rss_per_million_handles: root makes %d handles of kmalloc 8 (x1024 text "
	       "requests), then frees them; the daemon's VmRSS, KiB\n", NR_HANDLES);
	printf("  %4s %10s %10s %10s %14s %14s\n", "run", "before", "with", "freed",
	       "B per handle", "of it arena");
	for (int i = 0; i < opt_reps; i++) {
		struct rss_run *r = &runs[i];

		run_million(r, i);
		per_m[i] = (double)(r->with - r->before) * 1024.0 / NR_HANDLES;
		per_m_other[i] = per_m[i] - (double)r->slab_pages * 4096.0 / NR_HANDLES;
		printf("  %4d %10ld %10ld %10ld %14.1f %14.1f\n", i + 1, r->before, r->with,
		       r->after, per_m[i], per_m[i] - per_m_other[i]);
	}
	med = bench_median(per_m, opt_reps);
	med_other = bench_median(per_m_other, opt_reps);
	printf("  median: %.1f bytes per handle, %.1f MiB per million; %.1f of them outside "
	       "the arena (the handle's entry and index: 76 charged)\n\n", med,
	       med * 1e6 / 1048576.0, med_other);

	printf("2. rss_capped_uid: fs.max_handles_per_uid = %ld, uid 65534 in the root cgroup "
	       "(charged to nobody) makes handles until EDQUOT\n", opt_cap);
	got = run_capped(&growth);
	printf("  handles it got: %ld (then EDQUOT); the daemon grew by %ld KiB, %.1f bytes a "
	       "handle; the bound: %ld x 100 = %.1f MiB\n", got, growth,
	       (double)growth * 1024.0 / (double)got, opt_cap, opt_cap * 100.0 / 1048576.0);
	{
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		double host = (double)pages * (double)psz;
		double dflt = host / 100.0 / 76.0;

		printf("  the default cap on this host (%.1f GiB): %.0f handles (1%% of RAM at 76 "
		       "bytes), %.1f MiB at the %.1f bytes per handle measured in 1 (%.2f%% of "
		       "RAM)\n\n", host / 1073741824.0, dflt, dflt * med / 1048576.0, med,
		       dflt * med * 100.0 / host);
	}

	snprintf(buf, sizeof(buf), "%.1f", med * 1e6 / 1048576.0);
	bench_target("rss_per_million_handles", buf, "<=96 MiB", med * 1e6 / 1048576.0 <= 96);
	snprintf(buf, sizeof(buf), "%.1f", (double)growth / 1024.0);
	char goal[64];
	snprintf(goal, sizeof(goal), "<=%.1f MiB", opt_cap * 100.0 / 1048576.0);
	bench_target("rss_capped_uid", buf, goal,
		     got == opt_cap && (double)growth * 1024.0 <= opt_cap * 100.0);
	return 0;
}
