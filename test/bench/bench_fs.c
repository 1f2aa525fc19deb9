/* SPDX-License-Identifier: MIT */
/*
 * bench_fs - memcgfs mounted: the control file's round trips, batches,
 * memory.stat reads, mkdir of 10,000 cgroups and the daemon's memory per
 * cgroup, each measured side by side with its yardstick in one run.
 *
 * The program mounts everything itself on a temporary directory, each daemon
 * in the foreground (-f) as a child process, and always unmounts
 * (fusermount3 -u, then umount -l) and ends the daemons, also when it is
 * interrupted (SIGINT/SIGTERM/SIGHUP, the daemons also get PR_SET_PDEATHSIG).
 * Four daemons: memcgfs and minifuse (test/bench/minifuse.c: the smallest
 * libfuse low-level filesystem whose ioctl handler replies at once, set up as
 * memcgfs is: the same multi-threaded loop and worker count, timeouts, open
 * flags and mount options), each once pinned to one CPU (the affinity set
 * before exec, as "taskset -c N" does; every thread inherits it) and once
 * free on every CPU.  Every memcgfs is mounted with -o cpus=2
 * (machine.cpus = 2).  A FUSE round trip costs about 8 us when client and
 * daemon share a CPU and about 45 us when the wake-up crosses to the other
 * one (docs/design.md): the gated figures are the pinned ones (this program pins
 * itself to the same CPU), the unpinned figures are printed beside them.
 *
 * The client is a task of cgroup /bench on each memcgfs mount (it writes 0
 * to /bench/cgroup.procs), so its GFP_KERNEL_ACCOUNT allocations are really
 * charged (a root task's would skip the charge: seed 003).
 *
 *  1. ctl_ioctl_vs_minimal: round trips per second of one restricted ioctl
 *     of one operation (MEMCGFS_IOC_BATCH_ONE: 80 bytes each way), on
 *     memcgfs.ctl: alternately "kmalloc 8 GFP_KERNEL_ACCOUNT" and the kfree
 *     of its handle (the cheapest operations that do what clients do: charge
 *     and uncharge through the obj_stock; two round trips, each counted);
 *     beside it, for information, a batch whose one operation is invalid
 *     (op 0: the ioctl path with no operation's work); on minifuse's ctl the
 *     same command and bytes, copied back at once.
 *  2. ctl_batch_vs_text: commands per second.  Text: one request per write,
 *     its reply read from the same fd ("kmalloc 8 GFP_KERNEL_ACCOUNT", then
 *     "kfree HANDLE": each command one write and one read).  Batch: one
 *     maximal ioctl (MEMCGFS_IOC_BATCH_MAX, 16376 bytes) of 409 single
 *     kmallocs (each op count 1, one handle slot), then one of the 409 kfrees.
 *  3. cat_stat_vs_host: open+read-to-EOF+close of /bench/memory.stat on the
 *     mount, of the host's own cgroupfs memory.stat (cgroup2 preferred, found
 *     under /sys/fs/cgroup or /sys/fs/cgroup/unified; else the cgroup v1
 *     memory controller's, said so), of minifuse's file of the same size
 *     (cat_stat_vs_minifuse), and, when LXCFS is installed ($LXCFS, else
 *     /usr/bin/lxcfs: Debian's lxcfs), of /proc/meminfo on an instance of
 *     its own (cat_stat_vs_lxcfs, reported).
 *  4. mkdir_10k_s: seconds for 10,000 mkdir(2) of sibling cgroups under one
 *     parent whose cgroup.subtree_control has +memory (so each has a memcg),
 *     flat: /p/c00000 ... /p/c09999; then their rmdir (timed, not gated).
 *  5. bytes_per_cgroup: the pinned daemon's memory before and after those
 *     mkdirs (/proc/PID/smaps_rollup: Rss, Pss, and USS = Private_Clean +
 *     Private_Dirty), the difference over 10,000; gated on USS.
 *  6. shell_read_x1024: "kmalloc 8 x1024" (a 17411-byte reply) on one
 *     memcgfs.ctl fd, its reply read by a bash script's "read -r r <&3" and
 *     by C (read(2) of 64 KiB until the newline): microseconds per reply,
 *     timed around the read alone (bash: $EPOCHREALTIME), medians of 3R runs
 *     of 24 requests each (the handles freed between requests, not timed).
 *     bash runs under LC_ALL=C.UTF-8 (gated: a UTF-8 locale, as users
 *     have; bash's read costs more per byte in one) and LC_ALL=C.
 *
 * Times are medians of R rounds (--reps, 21) of D-second runs (--secs,
 * 0.1), the compared variants interleaved in a rotating order within each;
 * a ratio is the median of the rounds' own ratios, so that a drift of the
 * shared machine's speed lands in both sides of a round, not in one row.
 * Ends with one "target NAME measured=V goal=OPV ok|MISS" line per target;
 * a MISS does not fail the benchmark, an internal error does (exit 2).
 * Without root, /dev/fuse or fusermount3 it prints why and exits 77 (skip).
 *
 *   bench_fs [--memcgfs PATH] [--minifuse PATH] [--reps R] [--secs D]
 *            [--cgroups N]
 * PATHs default to $MEMCGFS and $MINIFUSE (meson sets them).
 */
#include <memcgfs/ctl.h>
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC	0x27e0eb
#endif

#define MAX_REPS	64

static int opt_reps = 21;
static double opt_secs = 0.1;
static long opt_cgroups = 10000;

/* ---- the daemons, and always taking them down ---- */

enum { D_MCG_PIN, D_MCG_FREE, D_MINI_PIN, D_MINI_FREE, D_LXCFS, NR_DAEMONS };
static const char *const daemon_names[NR_DAEMONS] = {
	"memcgfs (pinned)", "memcgfs (unpinned)", "minifuse (pinned)", "minifuse (unpinned)",
	"lxcfs (pinned)"
};

static struct bench_daemon daemons[NR_DAEMONS];
static char tmpdir[PATH_MAX];
static cpu_set_t all_cpus;
static int pin_cpu_nr = -1;
static volatile sig_atomic_t cleaning;

static void cleanup(void);

static int run_cmd(const char *path, const char *a1, const char *a2)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execlp(path, path, a1, a2, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Lines of a daemon's log that look like trouble (information only). */
static void show_log_trouble(const struct bench_daemon *d, const char *name)
{
	char line[1024];
	int shown = 0;
	FILE *fp = fopen(d->log, "re");

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp) && shown < 10) {
		if (strcasestr(line, "error") || strcasestr(line, "warn") ||
		    strcasestr(line, "sanitizer")) {
			if (!shown++)
				printf("  log of %s:\n", name);
			printf("    %s", line);
		}
	}
	fclose(fp);
}

static void cleanup(void)
{
	if (cleaning)
		return;
	cleaning = 1;
	for (int i = 0; i < NR_DAEMONS; i++) {
		struct bench_daemon *d = &daemons[i];

		if (!d->mnt[0])
			continue;
		bench_daemon_stop(d);
		if (bench_is_mounted(d->mnt))
			umount2(d->mnt, MNT_DETACH);
		show_log_trouble(d, daemon_names[i]);
		rmdir(d->mnt);
		unlink(d->log);
	}
	if (tmpdir[0])
		rmdir(tmpdir);
}

/* Interrupted (meson's timeout, Ctrl-C): detach the mounts, end the daemons. */
static void on_signal(int sig)
{
	if (!cleaning) {
		cleaning = 1;
		for (int i = 0; i < NR_DAEMONS; i++) {
			if (daemons[i].mnt[0])
				umount2(daemons[i].mnt, MNT_DETACH);
			if (daemons[i].pid > 0)
				kill(daemons[i].pid, SIGTERM);
			if (daemons[i].mnt[0]) {
				rmdir(daemons[i].mnt);
				unlink(daemons[i].log);
			}
		}
		if (tmpdir[0])
			rmdir(tmpdir);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void set_affinity(pid_t pid, int cpu)
{
	cpu_set_t set;

	if (cpu < 0) {
		set = all_cpus;
	} else {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
	}
	if (sched_setaffinity(pid, sizeof(set), &set))
		bench_die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

/*
 * Start a daemon in the foreground, pinned to cpu (or free), wait for its
 * mount.  One that is not required (LXCFS, a peer reported beside) may
 * fail: said, and false.  (The bench process is not pinned yet: a free
 * daemon has every CPU.)
 */
static bool start_daemon(int which, int cpu, const char *const *argv, bool required)
{
	struct bench_daemon *d = &daemons[which];

	d->name = daemon_names[which];
	if (required) {
		bench_daemon_start(d, cpu, argv);
		return true;
	}
	return bench_daemon_try_start(d, cpu, argv);
}

/* ---- small helpers ---- */

/* The measured unit: does a few operations, returns how many. */
typedef long (*unit_fn)(void *ctx);

static double rate_of(unit_fn fn, void *ctx, double secs)
{
	double t0 = bench_now(), t;
	long n = 0;

	do {
		n += fn(ctx);
		t = bench_now();
	} while (t - t0 < secs);
	return (double)n / (t - t0);
}

/* A ratio of two variants: the median of the rounds' own ratios. */
#define RR(a, b)	bench_round_ratio((a), (b), opt_reps)

/*
 * Rates (units/s) of nr variants: a warm-up, then reps rounds, the variants
 * in a rotating order within each round; the medians go to med[], each
 * round's rates to v[] (for RR).
 */
static void measure(int nr, unit_fn const *fns, void *const *ctxs, double *med,
		    double (*v)[MAX_REPS])
{

	for (int m = 0; m < nr; m++)
		rate_of(fns[m], ctxs[m], opt_secs / 5);
	for (int r = 0; r < opt_reps; r++)
		for (int j = 0; j < nr; j++) {
			int m = (j + r) % nr;

			v[m][r] = rate_of(fns[m], ctxs[m], opt_secs);
		}
	for (int m = 0; m < nr; m++)
		med[m] = bench_median(v[m], opt_reps);
}

/* ---- 1. one ioctl round trip ---- */

struct ioctl_ctx {
	int fd;
	struct memcgfs_ctl_batch_one b;
};

static void one_op(struct ioctl_ctx *c, uint8_t op, uint64_t handle)
{
	memset(&c->b, 0, sizeof(c->b));
	c->b.hdr.version = MEMCGFS_CTL_VERSION;
	c->b.hdr.nr_ops = 1;
	c->b.u.ops[0].op = op;
	c->b.u.ops[0].count = 1;
	c->b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(1);
	if (op == MEMCGFS_OP_KMALLOC) {
		c->b.u.ops[0].size = 8;
		c->b.u.ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
	}
	c->b.u.slots[MEMCGFS_CTL_FIRST_SLOT(1)] = handle;
}

/* kmalloc 8 GFP_KERNEL_ACCOUNT, then kfree it: two round trips. */
static long unit_ioctl_pair(void *ctx)
{
	struct ioctl_ctx *c = ctx;
	uint64_t h;

	one_op(c, MEMCGFS_OP_KMALLOC, 0);
	if (ioctl(c->fd, MEMCGFS_IOC_BATCH_ONE, &c->b) < 0)
		bench_die("memcgfs.ctl ioctl (kmalloc): %s", strerror(errno));
	if (c->b.u.ops[0].error)
		bench_die("memcgfs.ctl ioctl kmalloc 8: %s", strerror(-c->b.u.ops[0].error));
	h = c->b.u.slots[MEMCGFS_CTL_FIRST_SLOT(1)];
	one_op(c, MEMCGFS_OP_KFREE, h);
	if (ioctl(c->fd, MEMCGFS_IOC_BATCH_ONE, &c->b) < 0)
		bench_die("memcgfs.ctl ioctl (kfree): %s", strerror(errno));
	if (c->b.u.ops[0].error)
		bench_die("memcgfs.ctl ioctl kfree: %s", strerror(-c->b.u.ops[0].error));
	return 2;
}

/* A batch whose one operation is invalid (op 0): the ioctl path alone. */
static long unit_ioctl_nop(void *ctx)
{
	struct ioctl_ctx *c = ctx;

	one_op(c, 0, 0);
	if (ioctl(c->fd, MEMCGFS_IOC_BATCH_ONE, &c->b) < 0)
		bench_die("memcgfs.ctl ioctl (op 0): %s", strerror(errno));
	if (c->b.u.ops[0].error != -EINVAL)
		bench_die("memcgfs.ctl ioctl op 0: error %d, expected -EINVAL", c->b.u.ops[0].error);
	return 1;
}

/* minifuse: the same command and bytes, copied back at once. */
static long unit_ioctl_mini(void *ctx)
{
	struct ioctl_ctx *c = ctx;

	one_op(c, MEMCGFS_OP_KMALLOC, 0);
	if (ioctl(c->fd, MEMCGFS_IOC_BATCH_ONE, &c->b) < 0)
		bench_die("minifuse ioctl: %s", strerror(errno));
	if (c->b.u.ops[0].op != MEMCGFS_OP_KMALLOC)
		bench_die("minifuse ioctl: the reply is not the request");
	return 1;
}

/* ---- 2. text requests vs one maximal batch ---- */

struct text_ctx {
	int fd;
};

static void text_cmd(int fd, const char *req, char *reply, size_t len)
{
	size_t n = 0, rl = strlen(req);
	ssize_t r;

	if (write(fd, req, rl) != (ssize_t)rl)
		bench_die("memcgfs.ctl write '%.*s': %s", (int)rl - 1, req, strerror(errno));
	do {
		r = read(fd, reply + n, len - 1 - n);
		if (r <= 0)
			bench_die("memcgfs.ctl read: %s", r ? strerror(errno) : "end of file");
		n += (size_t)r;
	} while (reply[n - 1] != '\n' && n + 1 < len);
	reply[n] = '\0';
	if (strncmp(reply, "ok", 2))
		bench_die("memcgfs.ctl '%.*s': %s", (int)rl - 1, req, reply);
}

static long unit_text_pair(void *ctx)
{
	struct text_ctx *c = ctx;
	char reply[256], req[128], *h, *end;

	text_cmd(c->fd, "kmalloc 8 GFP_KERNEL_ACCOUNT\n", reply, sizeof(reply));
	h = reply + 2;
	while (*h == ' ')
		h++;
	end = h + strcspn(h, " \n");
	if (end == h)
		bench_die("memcgfs.ctl kmalloc: no handle in '%s'", reply);
	snprintf(req, sizeof(req), "kfree %.*s\n", (int)(end - h), h);
	text_cmd(c->fd, req, reply, sizeof(reply));
	return 2;
}

#define BATCH_OPS	(MEMCGFS_CTL_MAX_WORDS / (MEMCGFS_CTL_OP_WORDS + 1))

struct batch_ctx {
	int fd;
	struct memcgfs_ctl_batch_max b;
	uint64_t handles[BATCH_OPS];
};

static void batch_fill(struct batch_ctx *c, uint8_t op)
{
	unsigned int first = MEMCGFS_CTL_FIRST_SLOT(BATCH_OPS);

	memset(&c->b, 0, sizeof(c->b));
	c->b.hdr.version = MEMCGFS_CTL_VERSION;
	c->b.hdr.nr_ops = BATCH_OPS;
	for (unsigned int i = 0; i < BATCH_OPS; i++) {
		struct memcgfs_ctl_op *o = &c->b.u.ops[i];

		o->op = op;
		o->count = 1;
		o->slot = (uint16_t)(first + i);
		if (op == MEMCGFS_OP_KMALLOC) {
			o->size = 8;
			o->flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
		} else {
			c->b.u.slots[first + i] = c->handles[i];
		}
	}
}

static long unit_batch_pair(void *ctx)
{
	struct batch_ctx *c = ctx;
	unsigned int first = MEMCGFS_CTL_FIRST_SLOT(BATCH_OPS);

	batch_fill(c, MEMCGFS_OP_KMALLOC);
	if (ioctl(c->fd, MEMCGFS_IOC_BATCH_MAX, &c->b) < 0)
		bench_die("memcgfs.ctl batch ioctl (kmalloc): %s", strerror(errno));
	if (c->b.hdr.nr_done != BATCH_OPS)
		bench_die("memcgfs.ctl batch kmalloc: %u done, %u failed (first error %d)",
		    c->b.hdr.nr_done, c->b.hdr.nr_failed, c->b.u.ops[0].error);
	for (unsigned int i = 0; i < BATCH_OPS; i++)
		c->handles[i] = c->b.u.slots[first + i];
	batch_fill(c, MEMCGFS_OP_KFREE);
	if (ioctl(c->fd, MEMCGFS_IOC_BATCH_MAX, &c->b) < 0)
		bench_die("memcgfs.ctl batch ioctl (kfree): %s", strerror(errno));
	if (c->b.hdr.nr_done != BATCH_OPS)
		bench_die("memcgfs.ctl batch kfree: %u done, %u failed", c->b.hdr.nr_done,
		    c->b.hdr.nr_failed);
	return 2 * BATCH_OPS;
}

/* ---- 3. memory.stat ---- */

struct cat_ctx {
	const char *path;
	ssize_t size;
};

static long unit_cat(void *ctx)
{
	struct cat_ctx *c = ctx;
	ssize_t n = bench_cat(c->path);

	if (n <= 0)
		bench_die("cat %s: %s", c->path, n < 0 ? strerror(errno) : "empty");
	c->size = n;
	return 1;
}

static bool fs_is(const char *path, long magic)
{
	struct statfs sf;

	return !statfs(path, &sf) && (long)sf.f_type == magic;
}

/* A readable memory.stat in dir itself (depth 0) or below it, down to depth. */
static bool find_stat_in(const char *dir, int depth, bool want_child, char *out, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dp;
	bool found = false;

	if (!want_child) {
		bench_pathf(path, sizeof(path), "%s/memory.stat", dir);
		if (bench_cat(path) > 0) {
			bench_pathf(out, len, "%s", path);
			return true;
		}
	}
	if (depth <= 0 || !(dp = opendir(dir)))
		return false;
	while (!found && (de = readdir(dp))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		bench_pathf(path, sizeof(path), "%s/%s", dir, de->d_name);
		found = find_stat_in(path, depth - 1, false, out, len);
	}
	closedir(dp);
	return found;
}

/*
 * The host's memory.stat: a cgroup2 one first (a child cgroup's, as on the
 * mount, else the root's), else the cgroup v1 memory controller's.
 */
static const char *find_host_stat(char *out, size_t len, const char **kind)
{
	static const char *const v2[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

	for (int child = 1; child >= 0; child--)
		for (size_t i = 0; i < sizeof(v2) / sizeof(v2[0]); i++)
			if (fs_is(v2[i], CGROUP2_SUPER_MAGIC) &&
			    find_stat_in(v2[i], child ? 3 : 0, child, out, len)) {
				*kind = "cgroup2";
				return out;
			}
	for (int child = 1; child >= 0; child--)
		if (fs_is("/sys/fs/cgroup/memory", CGROUP_SUPER_MAGIC) &&
		    find_stat_in("/sys/fs/cgroup/memory", child ? 3 : 0, child, out, len)) {
			*kind = "cgroup v1 (no cgroup2 hierarchy here has the memory controller)";
			return out;
		}
	return NULL;
}

/* ---- 4, 5. mkdir, and the daemon's memory ---- */

struct mem_use {
	long rss, pss, uss, anon_huge, vmrss;	/* KiB */
};

static struct mem_use mem_of(pid_t pid)
{
	struct mem_use m = { -1, -1, -1, -1, -1 };
	char path[64], line[256];
	long pc = -1, pd = -1, v;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if ((fp = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), fp)) {
			if (sscanf(line, "Rss: %ld", &v) == 1)
				m.rss = v;
			else if (sscanf(line, "Pss: %ld", &v) == 1)
				m.pss = v;
			else if (sscanf(line, "Private_Clean: %ld", &v) == 1)
				pc = v;
			else if (sscanf(line, "Private_Dirty: %ld", &v) == 1)
				pd = v;
			else if (sscanf(line, "AnonHugePages: %ld", &v) == 1)
				m.anon_huge = v;
		}
		fclose(fp);
		if (pc >= 0 && pd >= 0)
			m.uss = pc + pd;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, "VmRSS: %ld", &v) == 1)
				m.vmrss = v;
		fclose(fp);
	}
	return m;
}

struct mkdir_result {
	double mkdir_s, rmdir_s;
	struct mem_use before, after, after_rm;
	long slab_before, slab_after;	/* bytes of slab pages in the emulated machine */
	long dying;			/* nr_dying_descendants after the rmdirs */
};

/* Bytes in the emulated machine's slabs: slabinfo's num_slabs x pagesperslab pages. */
static long slab_bytes(const char *mnt)
{
	char path[PATH_MAX], line[512];
	long total = 0, pps, nslabs;
	FILE *fp;

	bench_pathf(path, sizeof(path), "%s/slabinfo", mnt);
	if (!(fp = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char *sd = strstr(line, ": slabdata");

		if (line[0] == '#' || !strncmp(line, "slabinfo", 8) || !sd)
			continue;
		if (sscanf(line, "%*s %*d %*d %*d %*d %ld", &pps) != 1 ||
		    sscanf(sd, ": slabdata %*d %ld", &nslabs) != 1) {
			fclose(fp);
			return -1;
		}
		total += nslabs * pps * 4096;	/* machine.page_size: the default */
	}
	fclose(fp);
	return total;
}

/* A "key value" line of a flat-keyed file, or -1. */
static long keyed_value(const char *path, const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *fp = fopen(path, "re");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			v = strtol(line + kl + 1, NULL, 10);
	fclose(fp);
	return v;
}

static void cg_path(char *buf, size_t len, const char *parent, long i)
{
	bench_pathf(buf, len, "%s/c%05ld", parent, i);
}

static void run_mkdirs(const struct bench_daemon *d, struct mkdir_result *res)
{
	char parent[PATH_MAX], ctl[PATH_MAX], path[PATH_MAX];
	double t;

	bench_pathf(parent, sizeof(parent), "%s/p", d->mnt);
	bench_mkdir(parent);
	bench_pathf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", parent);
	bench_write_file(ctl, "+memory");
	/* warm-up: the first mkdirs and rmdirs of this parent */
	for (long i = 0; i < 32; i++) {
		cg_path(path, sizeof(path), parent, i);
		bench_mkdir(path);
	}
	for (long i = 0; i < 32; i++) {
		cg_path(path, sizeof(path), parent, i);
		if (rmdir(path))
			bench_die("rmdir %s: %s", path, strerror(errno));
	}
	usleep(200000);
	res->slab_before = slab_bytes(d->mnt);
	res->before = mem_of(d->pid);
	t = bench_now();
	for (long i = 0; i < opt_cgroups; i++) {
		cg_path(path, sizeof(path), parent, i);
		if (mkdir(path, 0755))
			bench_die("mkdir %s (the %ld-th): %s", path, i + 1, strerror(errno));
	}
	res->mkdir_s = bench_now() - t;
	usleep(200000);
	res->after = mem_of(d->pid);
	res->slab_after = slab_bytes(d->mnt);
	/* is it all there, with a memcg each? */
	cg_path(path, sizeof(path), parent, opt_cgroups - 1);
	strcat(path, "/memory.current");
	if (bench_cat(path) <= 0)
		bench_die("%s: %s", path, strerror(errno));
	t = bench_now();
	for (long i = 0; i < opt_cgroups; i++) {
		cg_path(path, sizeof(path), parent, i);
		if (rmdir(path))
			bench_die("rmdir %s: %s", path, strerror(errno));
	}
	res->rmdir_s = bench_now() - t;
	usleep(200000);
	res->after_rm = mem_of(d->pid);
	bench_pathf(path, sizeof(path), "%s/cgroup.stat", d->mnt);
	res->dying = keyed_value(path, "nr_dying_descendants");
	if (rmdir(parent))
		bench_die("rmdir %s: %s", parent, strerror(errno));
}

/* ---- 6. a shell's read of a long reply ---- */

static int open_ctl(const char *mnt, const char *name);

#define SHELL_REQS	24		/* x1024 requests per run */
#define SHELL_REQ	"kmalloc 8 x1024\n"

/*
 * What a script does: the request, its reply read with bash's read, the
 * handles freed 200 a request.  It prints the microseconds spent in the
 * reads, and in the request plus the read, summed over N requests.
 */
static const char shell_script[] =
	"exec 3<>\"$1\" || exit 1\n"
	"read_us=0 cycle_us=0\n"
	"for ((i = 0; i < $2; i++)); do\n"
	"	t0=${EPOCHREALTIME/./}\n"
	"	echo 'kmalloc 8 x1024' >&3 || exit 2\n"
	"	t1=${EPOCHREALTIME/./}\n"
	"	read -r r <&3\n"
	"	t2=${EPOCHREALTIME/./}\n"
	"	h=(${r#ok })\n"
	"	[ ${#h[@]} = 1024 ] || exit 3\n"
	"	((read_us += t2 - t1, cycle_us += t2 - t0))\n"
	"	for ((j = 0; j < 1024; j += 200)); do\n"
	"		echo \"kfree ${h[*]:j:200}\" >&3 && read -r a <&3 || exit 4\n"
	"	done\n"
	"done\n"
	"echo \"$read_us $cycle_us\"\n";

/*
 * bash's own cost: the same reply's bytes read from a regular file (the
 * page cache, no FUSE), reopened each time.
 */
static const char shell_floor_script[] =
	"read_us=0\n"
	"for ((i = 0; i < $2; i++)); do\n"
	"	t1=${EPOCHREALTIME/./}\n"
	"	read -r r <\"$1\"\n"
	"	t2=${EPOCHREALTIME/./}\n"
	"	[ ${#r} = 17410 ] || exit 3\n"
	"	((read_us += t2 - t1))\n"
	"done\n"
	"echo \"$read_us $read_us\"\n";

enum { SH_C, SH_BASH_C, SH_BASH_UTF8, SH_FLOOR, NR_SH };

struct shell_run {
	double read_us, cycle_us;	/* per request */
};

/* The handles of an "ok H H ..." reply, freed 200 a request. */
static void free_reply(int fd, const char *reply)
{
	const char *p = reply + 2;
	char req[4096], ack[64];

	for (;;) {
		size_t n = (size_t)snprintf(req, sizeof(req), "kfree");
		int k = 0;

		for (; k < 200; k++) {
			size_t l;

			p += strspn(p, " ");
			l = strcspn(p, " \n");
			if (!l)
				break;
			n += (size_t)snprintf(req + n, sizeof(req) - n, " %.*s", (int)l, p);
			p += l;
		}
		if (!k)
			return;
		snprintf(req + n, sizeof(req) - n, "\n");
		text_cmd(fd, req, ack, sizeof(ack));
	}
}

/*
 * The same requests from C: one write, reads of 64 KiB until the newline.
 * The last reply is kept in 'keep' (the floor's file).
 */
static void shell_run_c(const char *ctl, struct shell_run *res, const char *keep)
{
	static char reply[1 << 16];
	double read_s = 0, cycle_s = 0;
	int fd = open_ctl(ctl, "memcgfs.ctl");

	for (int i = 0; i < SHELL_REQS; i++) {
		double t0 = bench_now(), t1, t2;
		size_t n = 0;

		if (write(fd, SHELL_REQ, strlen(SHELL_REQ)) != (ssize_t)strlen(SHELL_REQ))
			bench_die("memcgfs.ctl write: %s", strerror(errno));
		t1 = bench_now();
		do {
			ssize_t r = read(fd, reply + n, sizeof(reply) - 1 - n);

			if (r <= 0)
				bench_die("memcgfs.ctl read: %s", r ? strerror(errno) : "end of file");
			n += (size_t)r;
		} while (reply[n - 1] != '\n' && n + 1 < sizeof(reply));
		t2 = bench_now();
		reply[n] = '\0';
		if (strncmp(reply, "ok ", 3) || n != 3 + 1024 * 17)
			bench_die("memcgfs.ctl x1024: a reply of %zu bytes: %.40s", n, reply);
		read_s += t2 - t1;
		cycle_s += t2 - t0;
		if (keep && i == SHELL_REQS - 1) {
			int kfd = open(keep, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

			if (kfd < 0 || write(kfd, reply, n) != (ssize_t)n || close(kfd))
				bench_die("%s: %s", keep, strerror(errno));
		}
		free_reply(fd, reply);
	}
	close(fd);
	res->read_us = read_s * 1e6 / SHELL_REQS;
	res->cycle_us = cycle_s * 1e6 / SHELL_REQS;
}

/* A bash script run with $1 = file and $2 = SHELL_REQS, its figures. */
static void shell_run_bash(const char *script, const char *file, const char *locale,
			   struct shell_run *res)
{
	char nreq[16], out[128];
	double read_us, cycle_us;
	int pipefd[2], st;
	ssize_t n = 0, r;
	pid_t pid;

	snprintf(nreq, sizeof(nreq), "%d", SHELL_REQS);
	if (pipe2(pipefd, O_CLOEXEC))
		bench_die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		setenv("LC_ALL", locale, 1);
		execlp("bash", "bash", "-c", script, "bash", file, nreq, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (n < (ssize_t)sizeof(out) - 1 &&
	       (r = read(pipefd[0], out + n, sizeof(out) - 1 - (size_t)n)) > 0)
		n += r;
	out[n] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		bench_die("bash's reads of %s failed (wait status 0x%x)", file, st);
	if (sscanf(out, "%lf %lf", &read_us, &cycle_us) != 2)
		bench_die("bash's reads of %s: no figures in '%s'", file, out);
	res->read_us = read_us / SHELL_REQS;
	res->cycle_us = cycle_us / SHELL_REQS;
}

/*
 * Medians of reps runs of each of NR_SH, interleaved; *ratio: the median of
 * the rounds' bash (C.UTF-8) / C read times.
 */
static void shell_measure(const char *mnt, struct shell_run med[NR_SH], double *ratio)
{
	struct shell_run v[NR_SH][MAX_REPS], warm;
	double a[MAX_REPS], b[MAX_REPS];
	char ctl[PATH_MAX], file[PATH_MAX];
	/* a bash run is short and its start-up noisy: three times the rounds */
	int shell_reps = opt_reps * 3 > MAX_REPS ? MAX_REPS : opt_reps * 3;

	bench_pathf(ctl, sizeof(ctl), "%s/memcgfs.ctl", mnt);
	bench_pathf(file, sizeof(file), "%s/reply", tmpdir);
	shell_run_c(mnt, &warm, file);
	shell_run_bash(shell_script, ctl, "C", &warm);
	for (int r = 0; r < shell_reps; r++)
		for (int j = 0; j < NR_SH; j++) {
			int m = (j + r) % NR_SH;

			if (m == SH_C)
				shell_run_c(mnt, &v[m][r], NULL);
			else if (m == SH_FLOOR)
				shell_run_bash(shell_floor_script, file, "C.UTF-8", &v[m][r]);
			else
				shell_run_bash(shell_script, ctl, m == SH_BASH_C ? "C" : "C.UTF-8",
					       &v[m][r]);
		}
	unlink(file);
	for (int r = 0; r < shell_reps; r++)
		a[r] = v[SH_BASH_UTF8][r].read_us / v[SH_C][r].read_us;
	*ratio = bench_median(a, shell_reps);
	for (int m = 0; m < NR_SH; m++) {
		for (int r = 0; r < shell_reps; r++) {
			a[r] = v[m][r].read_us;
			b[r] = v[m][r].cycle_us;
		}
		med[m].read_us = bench_median(a, shell_reps);
		med[m].cycle_us = bench_median(b, shell_reps);
	}
}

/* ---- main ---- */

static long parse_long(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || !*s || *end || v <= 0)
		bench_die("%s: '%s' is not a positive number", what, s);
	return v;
}

static void skip(const char *why)
{
	printf("bench_fs: cannot run: %s\n", why);
	bench_target("ctl_ioctl_vs_minimal", "none", ">=0.8", false);
	bench_target("ctl_batch_vs_text", "none", ">=100", false);
	bench_target("cat_stat_vs_host", "none", "<=3.0", false);
	bench_target("cat_stat_vs_minifuse", "none", "<=0.75", false);
	bench_target("cat_stat_vs_lxcfs", "none", "reported", true);
	bench_target("mkdir_10k_s", "none", "<5", false);
	bench_target("bytes_per_cgroup", "none", "<=16384", false);
	bench_target("shell_read_x1024", "none", "<=5.0", false);
	exit(77);
}

static int open_ctl(const char *mnt, const char *name)
{
	char path[PATH_MAX];
	int fd;

	bench_pathf(path, sizeof(path), "%s/%s", mnt, name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		bench_die("open %s: %s", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	const char *memcgfs = getenv("MEMCGFS"), *minifuse = getenv("MINIFUSE");
	const char *lxcfs = getenv("LXCFS") ? getenv("LXCFS") : "/usr/bin/lxcfs";
	bool have_lxcfs = false;
	char path[PATH_MAX], host_stat[PATH_MAX], stat_size[32];
	const char *host_kind = NULL;
	bool have_host;
	double t_start = bench_now();
	struct sigaction sa;
	int cpu;

	bench_name("bench_fs");
	bench_at_die(cleanup);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (i + 1 < argc && !strcmp(a, "--memcgfs"))
			memcgfs = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--minifuse"))
			minifuse = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--reps"))
			opt_reps = (int)parse_long(argv[++i], "--reps");
		else if (i + 1 < argc && !strcmp(a, "--secs"))
			opt_secs = strtod(argv[++i], NULL);
		else if (i + 1 < argc && !strcmp(a, "--cgroups"))
			opt_cgroups = parse_long(argv[++i], "--cgroups");
		else
			bench_die("usage: bench_fs [--memcgfs PATH] [--minifuse PATH] [--reps R] "
			    "[--secs D] [--cgroups N]");
	}
	if (opt_reps > MAX_REPS)
		opt_reps = MAX_REPS;
	if (!(opt_secs > 0))
		opt_secs = 0.25;
	if (opt_cgroups > 99999)
		bench_die("--cgroups: at most 99999");
	if (!memcgfs || !minifuse)
		bench_die("the memcgfs and minifuse binaries: --memcgfs/--minifuse or $MEMCGFS/$MINIFUSE");
	if (geteuid() != 0)
		skip("needs root (memcgfs mounts with allow_other; pinning another process)");
	if (access("/dev/fuse", R_OK | W_OK))
		skip("no usable /dev/fuse");
	if (run_cmd("fusermount3", "-V", NULL) != 0)
		skip("no fusermount3");

	if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus))
		bench_die("sched_getaffinity: %s", strerror(errno));
	/* the highest allowed CPU: CPU 0 tends to take more interrupts */
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all_cpus))
			pin_cpu_nr = c;
	cpu = pin_cpu_nr;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(cleanup);

	/* mkdtemp(3)'s template: it replaces the six X with a unique name */
	bench_pathf(tmpdir, sizeof(tmpdir), "%s/memcgfs-bench-fs.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		tmpdir[0] = 0;
		bench_die("mkdtemp: %s", strerror(errno));
	}
	chmod(tmpdir, 0755);
	for (int i = 0; i < NR_DAEMONS; i++) {
		static const char *const tag[NR_DAEMONS] = { "mcg-pin", "mcg-free",
							     "mini-pin", "mini-free", "lxcfs" };

		bench_pathf(daemons[i].mnt, sizeof(daemons[i].mnt), "%s/%s", tmpdir, tag[i]);
		bench_pathf(daemons[i].log, sizeof(daemons[i].log), "%s/%s.log", tmpdir, tag[i]);
		bench_mkdir(daemons[i].mnt);
	}

	/* memcgfs twice, then the bench process into /bench on each */
	for (int i = D_MCG_PIN; i <= D_MCG_FREE; i++) {
		const char *av[] = { memcgfs, "-f", "-o", "cpus=2", daemons[i].mnt, NULL };

		start_daemon(i, i == D_MCG_PIN ? cpu : -1, av, true);
		bench_pathf(path, sizeof(path), "%s/bench", daemons[i].mnt);
		bench_mkdir(path);
		bench_pathf(path, sizeof(path), "%s/bench/cgroup.procs", daemons[i].mnt);
		bench_write_file(path, "0");
	}
	bench_pathf(path, sizeof(path), "%s/bench/memory.stat", daemons[D_MCG_PIN].mnt);
	{
		ssize_t n = bench_cat(path);

		if (n <= 0)
			bench_die("cat %s: %s", path, n < 0 ? strerror(errno) : "empty");
		snprintf(stat_size, sizeof(stat_size), "%zd", n);
	}
	for (int i = D_MINI_PIN; i <= D_MINI_FREE; i++) {
		const char *av[] = { minifuse, "-f", "--stat-size", stat_size, daemons[i].mnt, NULL };

		start_daemon(i, i == D_MINI_PIN ? cpu : -1, av, true);
	}
	/* LXCFS, the FUSE peer people run for the same purpose ($LXCFS; reported) */
	if (*lxcfs && !access(lxcfs, X_OK)) {
		char pidfile[PATH_MAX];
		const char *av[] = { lxcfs, "-f", "-p", pidfile, daemons[D_LXCFS].mnt, NULL };

		bench_pathf(pidfile, sizeof(pidfile), "%s/lxcfs.pid", tmpdir);
		/* on the pinned daemons' CPU: the gated figures are pinned */
		have_lxcfs = start_daemon(D_LXCFS, cpu, av, false);
		unlink(pidfile);
	}

	printf("bench_fs: memcgfs mounted, beside minifuse (a minimal libfuse low-level "
	       "filesystem) and the host's cgroupfs\n");
	printf("  %s -f -o cpus=2 (twice), %s -f (twice): one of each started pinned "
	       "to CPU %d, one on every CPU (%d)\n", memcgfs, minifuse, cpu, CPU_COUNT(&all_cpus));
	printf("  pinned figures: this client pinned to CPU %d too (gated); unpinned: "
	       "client and daemon free\n", cpu);
	printf("  the client is a task of /bench on each memcgfs mount; rates are medians "
	       "of %d runs of %.2f s, variants interleaved\n\n", opt_reps, opt_secs);

	/* ---- 1 ---- */
	double io_med[2][3];
	static double io_v[2][3][MAX_REPS];
	{
		static struct ioctl_ctx c[2][3];
		unit_fn fns[3] = { unit_ioctl_pair, unit_ioctl_nop, unit_ioctl_mini };

		for (int p = 0; p < 2; p++) {
			void *ctxs[3] = { &c[p][0], &c[p][1], &c[p][2] };

			c[p][0].fd = open_ctl(daemons[D_MCG_PIN + p].mnt, "memcgfs.ctl");
			c[p][1].fd = c[p][0].fd;
			c[p][2].fd = open_ctl(daemons[D_MINI_PIN + p].mnt, "ctl");
			set_affinity(0, p ? -1 : cpu);
			measure(3, fns, ctxs, io_med[p], io_v[p]);
			close(c[p][0].fd);
			close(c[p][2].fd);
		}
		set_affinity(0, -1);
		printf("1. ctl_ioctl_vs_minimal: one restricted ioctl round trip "
		       "(MEMCGFS_IOC_BATCH_ONE, %zu bytes each way)\n",
		       sizeof(struct memcgfs_ctl_batch_one));
		printf("  %-56s %14s %14s\n", "round trips/s (us each)", "pinned", "unpinned");
		static const char *const row[3] = {
			"memcgfs: kmalloc 8 GFP_KERNEL_ACCOUNT, kfree alternately",
			"memcgfs: one invalid op (the ioctl path, no op's work)",
			"minifuse: the input copied back at once",
		};
		for (int m = 0; m < 3; m++)
			printf("  %-56s %7.0f (%4.1f) %7.0f (%4.1f)\n", row[m],
			       io_med[0][m], 1e6 / io_med[0][m], io_med[1][m], 1e6 / io_med[1][m]);
		printf("  %-56s %14.2f %14.2f\n", "memcgfs kmalloc/kfree / minifuse",
		       RR(io_v[0][0], io_v[0][2]), RR(io_v[1][0], io_v[1][2]));
		printf("  %-56s %14.2f %14.2f\n\n", "memcgfs invalid op / minifuse",
		       RR(io_v[0][1], io_v[0][2]), RR(io_v[1][1], io_v[1][2]));
	}

	/* ---- 2 ---- */
	double bt_med[2][2];
	static double bt_v[2][2][MAX_REPS];
	{
		static struct text_ctx tc[2];
		static struct batch_ctx bc[2];
		unit_fn fns[2] = { unit_text_pair, unit_batch_pair };

		for (int p = 0; p < 2; p++) {
			void *ctxs[2] = { &tc[p], &bc[p] };

			tc[p].fd = open_ctl(daemons[D_MCG_PIN + p].mnt, "memcgfs.ctl");
			bc[p].fd = open_ctl(daemons[D_MCG_PIN + p].mnt, "memcgfs.ctl");
			set_affinity(0, p ? -1 : cpu);
			measure(2, fns, ctxs, bt_med[p], bt_v[p]);
			close(tc[p].fd);
			close(bc[p].fd);
		}
		set_affinity(0, -1);
		printf("2. ctl_batch_vs_text: kmalloc 8 GFP_KERNEL_ACCOUNT and its kfree, "
		       "commands/s\n");
		printf("  %-56s %14s %14s\n", "", "pinned", "unpinned");
		printf("  %-56s %14.0f %14.0f\n", "text: one write + one read per command",
		       bt_med[0][0], bt_med[1][0]);
		printf("  %-47s (%3d ops) %14.0f %14.0f\n", "batch: MEMCGFS_IOC_BATCH_MAX, 16376 bytes",
		       (int)BATCH_OPS, bt_med[0][1], bt_med[1][1]);
		printf("  %-56s %14.1f %14.1f\n", "batch / text",
		       RR(bt_v[0][1], bt_v[0][0]), RR(bt_v[1][1], bt_v[1][0]));
		printf("  %-56s %14.2f %14.2f\n\n", "us per batched command (2 ioctls / 818)",
		       1e6 / bt_med[0][1], 1e6 / bt_med[1][1]);
	}

	/* ---- 3 ---- */
	/* the variants: memcgfs, minifuse, then the host's file and LXCFS's if there */
	enum { C_MCG, C_MINI, C_HOST, C_LXCFS, NR_CAT };
	double cat_med[2][NR_CAT] = { { 0 } };
	static double cat_v[2][NR_CAT][MAX_REPS];
	struct cat_ctx cc[2][NR_CAT];
	{
		char mcg_stat[2][PATH_MAX], mini_stat[2][PATH_MAX], lx_meminfo[PATH_MAX];

		have_host = find_host_stat(host_stat, sizeof(host_stat), &host_kind) != NULL;
		bench_pathf(lx_meminfo, PATH_MAX, "%s/proc/meminfo", daemons[D_LXCFS].mnt);
		for (int p = 0; p < 2; p++) {
			unit_fn fns[NR_CAT] = { unit_cat, unit_cat, unit_cat, unit_cat };
			void *ctxs[NR_CAT];
			int idx[NR_CAT], nr = 0;
			double med[NR_CAT], rv[NR_CAT][MAX_REPS];

			bench_pathf(mcg_stat[p], PATH_MAX, "%s/bench/memory.stat", daemons[D_MCG_PIN + p].mnt);
			bench_pathf(mini_stat[p], PATH_MAX, "%s/stat", daemons[D_MINI_PIN + p].mnt);
			cc[p][C_MCG] = (struct cat_ctx){ .path = mcg_stat[p] };
			cc[p][C_MINI] = (struct cat_ctx){ .path = mini_stat[p] };
			cc[p][C_HOST] = (struct cat_ctx){ .path = host_stat };
			cc[p][C_LXCFS] = (struct cat_ctx){ .path = lx_meminfo };
			for (int v = 0; v < NR_CAT; v++)
				if ((v != C_HOST || have_host) && (v != C_LXCFS || have_lxcfs)) {
					idx[nr] = v;
					ctxs[nr++] = &cc[p][v];
				}
			set_affinity(0, p ? -1 : cpu);
			measure(nr, fns, ctxs, med, rv);
			for (int k = 0; k < nr; k++) {
				cat_med[p][idx[k]] = med[k];
				memcpy(cat_v[p][idx[k]], rv[k], sizeof(rv[k]));
			}
		}
		set_affinity(0, -1);
		printf("3. cat_stat_vs_host: open + read to EOF (64 KiB reads) + close of "
		       "memory.stat, us each\n");
		printf("  %-56s %14s %14s\n", "", "pinned", "unpinned");
		printf("  %-47s (%4zd B) %14.1f %14.1f\n", "memcgfs /bench/memory.stat",
		       cc[0][0].size, 1e6 / cat_med[0][0], 1e6 / cat_med[1][0]);
		printf("  %-47s (%4zd B) %14.1f %14.1f\n", "minifuse: the same size from a buffer",
		       cc[0][1].size, 1e6 / cat_med[0][1], 1e6 / cat_med[1][1]);
		if (have_host) {
			printf("  %-47s (%4zd B) %14.1f %14.1f\n", "host cgroupfs (below)",
			       cc[0][2].size, 1e6 / cat_med[0][2], 1e6 / cat_med[1][2]);
			printf("  %-56s %14.2f %14.2f\n", "memcgfs / host",
			       RR(cat_v[0][2], cat_v[0][0]), RR(cat_v[1][2], cat_v[1][0]));
			printf("  %-56s %14.2f %14.2f\n", "minifuse / host",
			       RR(cat_v[0][2], cat_v[0][1]), RR(cat_v[1][2], cat_v[1][1]));
		}
		printf("  %-56s %14.2f %14.2f\n", "memcgfs / minifuse",
		       RR(cat_v[0][1], cat_v[0][0]), RR(cat_v[1][1], cat_v[1][0]));
		if (have_lxcfs) {
			printf("  %-47s (%4zd B) %14.1f %14.1f\n", "lxcfs /proc/meminfo (its daemon pinned)",
			       cc[0][C_LXCFS].size, 1e6 / cat_med[0][C_LXCFS], 1e6 / cat_med[1][C_LXCFS]);
			printf("  %-56s %14.2f %14.2f\n", "memcgfs / lxcfs",
			       RR(cat_v[0][C_LXCFS], cat_v[0][0]),
			       RR(cat_v[1][C_LXCFS], cat_v[1][0]));
		} else {
			printf("  lxcfs: not run (%s: %s)\n", lxcfs,
			       access(lxcfs, X_OK) ? "not installed" : "did not mount");
		}
		/* the round trips of one such read, seen with libfuse's debug output
		 * (both daemons alike): OPEN, GETATTR (fstat after the last read's
		 * atime invalidation), READ, READ (EOF: a direct_io read cannot say
		 * it), RELEASE (not waited for); LOOKUPs once a second */
		if (have_host)
			printf("  host file: %s, %s\n\n", host_stat, host_kind);
		else
			printf("  host: no readable memory.stat under /sys/fs/cgroup (cgroup2 "
			       "or the v1 memory controller)\n\n");
	}

	/* ---- 4, 5 ---- */
	struct mkdir_result mk[2];
	{
		for (int p = 0; p < 2; p++) {
			set_affinity(0, p ? -1 : cpu);
			run_mkdirs(&daemons[D_MCG_PIN + p], &mk[p]);
		}
		set_affinity(0, -1);
		printf("4. mkdir_10k_s: %ld cgroups, flat: mkdir(2) of p/c00000 ... in one "
		       "parent p with +memory in its cgroup.subtree_control\n", opt_cgroups);
		printf("  %-56s %14s %14s\n", "seconds", "pinned", "unpinned");
		printf("  %-56s %14.3f %14.3f\n", "mkdir", mk[0].mkdir_s, mk[1].mkdir_s);
		printf("  %-56s %14.1f %14.1f\n", "  us per mkdir", mk[0].mkdir_s * 1e6 / opt_cgroups,
		       mk[1].mkdir_s * 1e6 / opt_cgroups);
		printf("  %-56s %14.3f %14.3f\n\n", "rmdir (not gated)", mk[0].rmdir_s, mk[1].rmdir_s);

		printf("5. bytes_per_cgroup: the daemon's memory (/proc/PID/smaps_rollup), "
		       "machine.cpus = 2, KiB\n");
		printf("  %-26s %9s %9s %9s %9s %9s %16s\n", "", "before", "after", "per cg B",
		       "after rm", "AnonHuge", "daemon");
		for (int p = 0; p < 2; p++) {
			const struct mkdir_result *r = &mk[p];
			const char *who = p ? "unpinned" : "pinned";
			struct {
				const char *name;
				long b, a, rm;
			} rows[] = {
				{ "USS (Private_Clean+Dirty)", r->before.uss, r->after.uss, r->after_rm.uss },
				{ "Pss", r->before.pss, r->after.pss, r->after_rm.pss },
				{ "Rss", r->before.rss, r->after.rss, r->after_rm.rss },
				{ "VmRSS (status)", r->before.vmrss, r->after.vmrss, r->after_rm.vmrss },
			};
			for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
				printf("  %-26s %9ld %9ld %9.0f %9ld %9ld %16s\n", rows[k].name,
				       rows[k].b, rows[k].a,
				       (double)(rows[k].a - rows[k].b) * 1024.0 / (double)opt_cgroups,
				       rows[k].rm, k ? 0L : r->after.anon_huge, who);
		}
		for (int p = 0; p < 2; p++)
			printf("  %s: of the growth, the emulated machine's slab pages (slabinfo) "
			       "%.0f B per cgroup;\n    0.2 s after the rmdirs: "
			       "nr_dying_descendants %ld, USS %+ld KiB since the mkdirs\n",
			       p ? "unpinned" : "pinned",
			       (double)(mk[p].slab_after - mk[p].slab_before) / (double)opt_cgroups,
			       mk[p].dying, mk[p].after_rm.uss - mk[p].after.uss);
		printf("  (the arena is touched lazily: the memcg structures come from the "
		       "daemon's own slab\n   allocator inside it, so resident memory counts "
		       "them as they are touched; the kernel's\n   dentries and FUSE inodes "
		       "for the %ld directories are not the daemon's and not counted)\n\n",
		       opt_cgroups);
	}

	/* ---- 6 ---- */
	struct shell_run sh[2][NR_SH];
	double sh_ratio[2];
	{
		static const char *const row[NR_SH] = {
			"C: read(2) of 64 KiB until the newline",
			"bash: read -r reply <&3 (LC_ALL=C)",
			"bash: read -r reply <&3 (LC_ALL=C.UTF-8)",
			"bash, the same bytes from a file in TMPDIR (C.UTF-8)",
		};

		for (int p = 0; p < 2; p++) {
			set_affinity(0, p ? -1 : cpu);
			shell_measure(daemons[D_MCG_PIN + p].mnt, sh[p], &sh_ratio[p]);
		}
		set_affinity(0, -1);
		printf("6. shell_read_x1024: \"%.*s\" (a %d-byte reply), its reply read by "
		       "bash's read -r and by C, us per reply\n", (int)strlen(SHELL_REQ) - 1,
		       SHELL_REQ, 3 + 1024 * 17);
		printf("  %-56s %14s %14s\n", "", "pinned", "unpinned");
		for (int m = 0; m < NR_SH; m++)
			printf("  %-56s %14.1f %14.1f\n", row[m], sh[0][m].read_us, sh[1][m].read_us);
		printf("  %-56s %14.2f %14.2f\n", "bash (C.UTF-8) / C (the rounds' ratios)",
		       sh_ratio[0], sh_ratio[1]);
		printf("  %-56s %14.2f %14.2f\n", "bash (C) / C",
		       sh[0][SH_BASH_C].read_us / sh[0][SH_C].read_us,
		       sh[1][SH_BASH_C].read_us / sh[1][SH_C].read_us);
		printf("  %-56s %14.2f %14.2f\n", "bash from a file / C: bash's own floor",
		       sh[0][SH_FLOOR].read_us / sh[0][SH_C].read_us,
		       sh[1][SH_FLOOR].read_us / sh[1][SH_C].read_us);
		printf("  the request and its reply (write + read), us:\n");
		for (int m = 0; m < SH_FLOOR; m++)
			printf("  %-56s %14.1f %14.1f\n", row[m], sh[0][m].cycle_us, sh[1][m].cycle_us);
		printf("  %-56s %14.2f %14.2f\n", "bash (C.UTF-8) / C",
		       sh[0][SH_BASH_UTF8].cycle_us / sh[0][SH_C].cycle_us,
		       sh[1][SH_BASH_UTF8].cycle_us / sh[1][SH_C].cycle_us);
		printf("  (%d requests a run, their handles freed 200 a request, not timed)\n\n",
		       SHELL_REQS);
	}

	printf("run time %.1f s\n\n", bench_now() - t_start);
	cleanup();

	/* ---- targets ---- */
	{
		char buf[64];
		double v;

		v = RR(io_v[0][0], io_v[0][2]);
		snprintf(buf, sizeof(buf), "%.2f", v);
		bench_target("ctl_ioctl_vs_minimal", buf, ">=0.8", strtod(buf, NULL) >= 0.8);
		v = RR(bt_v[0][1], bt_v[0][0]);
		snprintf(buf, sizeof(buf), "%.1f", v);
		bench_target("ctl_batch_vs_text", buf, ">=100", strtod(buf, NULL) >= 100);
		if (have_host) {
			v = RR(cat_v[0][C_HOST], cat_v[0][C_MCG]);
			snprintf(buf, sizeof(buf), "%.2f", v);
			bench_target("cat_stat_vs_host", buf, "<=3.0", strtod(buf, NULL) <= 3.0);
		} else {
			bench_target("cat_stat_vs_host", "none", "<=3.0", false);
		}
		v = RR(cat_v[0][C_MINI], cat_v[0][C_MCG]);
		snprintf(buf, sizeof(buf), "%.2f", v);
		bench_target("cat_stat_vs_minifuse", buf, "<=0.75", strtod(buf, NULL) <= 0.75);
		if (have_lxcfs) {
			snprintf(buf, sizeof(buf), "%.2f", RR(cat_v[0][C_LXCFS], cat_v[0][C_MCG]));
			bench_target("cat_stat_vs_lxcfs", buf, "reported", true);
		} else {
			bench_target("cat_stat_vs_lxcfs", "none", "reported", true);
		}
		snprintf(buf, sizeof(buf), "%.2f", mk[0].mkdir_s * 10000.0 / (double)opt_cgroups);
		bench_target("mkdir_10k_s", buf, "<5", strtod(buf, NULL) < 5);
		if (mk[0].before.uss < 0 || mk[0].after.uss < 0) {
			bench_target("bytes_per_cgroup", "none", "<=16384", false);
		} else {
			snprintf(buf, sizeof(buf), "%.0f",
				 (double)(mk[0].after.uss - mk[0].before.uss) * 1024.0 /
				 (double)opt_cgroups);
			bench_target("bytes_per_cgroup", buf, "<=16384", strtod(buf, NULL) <= 16384);
		}
		snprintf(buf, sizeof(buf), "%.2f", sh_ratio[0]);
		bench_target("shell_read_x1024", buf, "<=5.0", strtod(buf, NULL) <= 5.0);
	}
	return 0;
}
