/* SPDX-License-Identifier: MIT */
/*
 * bench_real - what real memory (memcg.real_memory) costs.
 *
 *  1. Sampling: the daemon's CPU time (every thread's time on a CPU, from
 *     /proc/PID/task/TID/schedstat) while N idle member processes sit in one cgroup and
 *     nobody reads, over W seconds, as a share of one core: N = 10, 100,
 *     1000 at the default interval (conf_defaults()), and 1000 at 50, 100,
 *     200 and 500 ms, the table the default was chosen from.  Target
 *     real_sample_cpu_1000: the share at 1000 members, default interval.
 *  2. A read: open + read + close of memory.current of a cgroup of 100
 *     members, with real memory and without (two mounts, the same 100-
 *     process population in each), both daemons and this program pinned
 *     to one CPU, in R rounds of 0.05 s each way (the order alternating).
 *     Target real_read_latency: the median of the rounds' ratios with /
 *     without (a drift of the machine's speed cancels in each round).
 *  3. Overshoot: how far a process that touches 1 MiB every 10 ms (100
 *     MiB/s) gets past memory.max = 32M before the OOM killer ends it
 *     (memory.peak - max), at the default interval: reported.
 *
 *   bench_real [--memcgfs PATH] [--secs W] [--reps R]
 * PATH defaults to $MEMCGFS.  Exit 77 without root or FUSE.
 */
#include "conf.h"
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB	(1024ul * 1024ul)

static const char *memcgfs;
static double opt_secs = 3;
static int opt_reps = 41;	/* rounds of the read latency */

/*
 * The daemon's CPU time in seconds: the sum over its threads of the time
 * on a CPU in /proc/PID/task/TID/schedstat (nanoseconds; /proc/PID/stat's
 * utime + stime count 10 ms ticks, too coarse for a share of 0.02 over a
 * few seconds).  Threads that ended before the read are not counted: the
 * daemon's threads live as long as the mount.  With comm, only the threads
 * of that name (/proc/PID/task/TID/comm).
 */
static double cpu_of(pid_t pid, const char *comm)
{
	char path[96], buf[256];
	unsigned long long ns, total = 0;
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		bench_die("%s: %s", path, strerror(errno));
	while ((e = readdir(dir))) {
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		if (comm) {
			snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", pid, e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			if (strcmp(buf, comm))
				continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", pid, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* the thread ended meanwhile */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (sscanf(buf, "%llu", &ns) != 1)
			bench_die("%s: cannot parse", path);
		total += ns;
	}
	closedir(dir);
	return (double)total / 1e9;
}

/*
 * A population of n idle processes in cgroup cg: a leader that moved
 * itself there and forked the others.  Returns the leader; kill its
 * process group to end them all.
 */
static pid_t population(const char *cg, int n)
{
	char path[PATH_MAX + 32];
	int ready[2];
	pid_t leader;
	char c;

	if (pipe(ready))
		bench_die("pipe: %s", strerror(errno));
	bench_pathf(path, sizeof(path), "%s/cgroup.procs", cg);
	leader = fork();
	if (leader < 0)
		bench_die("fork: %s", strerror(errno));
	if (leader == 0) {
		setpgid(0, 0);
		close(ready[0]);
		bench_write_file(path, "0");
		for (int i = 1; i < n; i++) {
			pid_t p = fork();

			if (p == 0) {
				close(ready[1]);
				for (;;)
					pause();
			}
			if (p < 0)
				_exit(1);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		bench_die("the population of %d did not start", n);
	close(ready[0]);
	return leader;
}

static void population_end(pid_t leader)
{
	kill(-leader, SIGKILL);
	while (waitpid(leader, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Wait until cg lists n processes (the tracker saw the forks). */
static void wait_members(const char *cg, int n)
{
	char path[PATH_MAX + 32], buf[1 << 16];
	double end = bench_now() + 30;

	bench_pathf(path, sizeof(path), "%s/cgroup.procs", cg);
	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), lines = 0;
		ssize_t r;

		if (fd < 0)
			bench_die("%s: %s", path, strerror(errno));
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i < r; i++)
				lines += buf[i] == '\n';
		close(fd);
		if (lines >= n)
			return;
		if (bench_now() > end)
			bench_die("%s lists %d of %d processes after 30 s", path, lines, n);
		usleep(20000);
	}
}

static struct bench_daemon *mount_memcgfs(const char *name, bool real, unsigned int interval,
					  int cpu)
{
	struct bench_daemon *d = bench_daemon_new(name);
	char ival[64];
	const char *argv[] = {
		memcgfs, "-f", "-o", real ? "real_memory=true" : "real_memory=false",
		"-o", ival, "-o", "cpus=2", d->mnt, NULL,
	};

	snprintf(ival, sizeof(ival), "real_interval=%u", interval);
	bench_daemon_start(d, cpu, argv);
	return d;
}

/*
 * 1. the CPU share with n idle members, nobody reading: of the sampling
 * thread (memcgfs-real, the target) and of the whole daemon (the rest is
 * mostly the files thread taking the host's file opens from fanotify:
 * it grows with what else runs on the host, not with the members).
 */
struct share {
	double sampler, daemon;
};

static struct share sample_share(unsigned int interval, int n)
{
	char name[32], cg[PATH_MAX + 8];
	struct bench_daemon *d;
	double c0, c1, r0, r1, t0, t1;
	pid_t leader;

	snprintf(name, sizeof(name), "s%u-%d", interval, n);
	d = mount_memcgfs(name, true, interval, -1);
	bench_pathf(cg, sizeof(cg), "%s/pop", d->mnt);
	bench_mkdir(cg);
	leader = population(cg, n);
	wait_members(cg, n);
	/*
	 * the first samples of every process (its /proc files opened) are
	 * done, and the idle ones have settled to every second round (after
	 * five unchanged samples)
	 */
	usleep(8 * interval * 1000);
	c0 = cpu_of(d->pid, NULL);
	r0 = cpu_of(d->pid, "memcgfs-real");
	t0 = bench_now();
	usleep((useconds_t)(opt_secs * 1e6));
	c1 = cpu_of(d->pid, NULL);
	r1 = cpu_of(d->pid, "memcgfs-real");
	t1 = bench_now();
	population_end(leader);
	bench_daemon_stop(d);
	return (struct share){ (r1 - r0) / (t1 - t0), (c1 - c0) / (t1 - t0) };
}

/* 2. memory.current reads with and without real memory */
static void read_latency(unsigned int interval, double *with_us, double *without_us,
			 double *ratio)
{
	struct bench_daemon *on = mount_memcgfs("read-on", true, interval, 0);
	struct bench_daemon *off = mount_memcgfs("read-off", false, interval, 0);
	char cg_on[PATH_MAX + 8], cg_off[PATH_MAX + 8], f_on[PATH_MAX + 32], f_off[PATH_MAX + 32];
	double v_on[256], v_off[256];
	pid_t p_on, p_off;

	bench_pathf(cg_on, sizeof(cg_on), "%s/r", on->mnt);
	bench_pathf(cg_off, sizeof(cg_off), "%s/r", off->mnt);
	if (mkdir(cg_on, 0755) || mkdir(cg_off, 0755))
		bench_die("mkdir: %s", strerror(errno));
	p_on = population(cg_on, 100);
	p_off = population(cg_off, 100);
	wait_members(cg_on, 100);
	wait_members(cg_off, 100);
	bench_pathf(f_on, sizeof(f_on), "%s/memory.current", cg_on);
	bench_pathf(f_off, sizeof(f_off), "%s/memory.current", cg_off);
	bench_pin_self(0);
	for (int r = 0; r < opt_reps; r++) {
		for (int k = 0; k < 2; k++) {
			const char *f = (k + r) % 2 ? f_on : f_off;
			double t0 = bench_now(), t;
			long n = 0;

			do {
				if (bench_cat(f) <= 0)
					bench_die("read %s: %s", f, strerror(errno));
				n++;
				t = bench_now();
			} while (t - t0 < 0.05);
			*((k + r) % 2 ? &v_on[r] : &v_off[r]) = (t - t0) / (double)n * 1e6;
		}
	}
	*with_us = bench_median(v_on, opt_reps);
	*without_us = bench_median(v_off, opt_reps);
	*ratio = bench_round_ratio(v_on, v_off, opt_reps);
	population_end(p_on);
	population_end(p_off);
	bench_daemon_stop(on);
	bench_daemon_stop(off);
}

/* 3. how far past max a 100 MiB/s grower gets before its kill */
static long overshoot_kib(unsigned int interval)
{
	struct bench_daemon *d = mount_memcgfs("overshoot", true, interval, -1);
	char cg[PATH_MAX + 8], path[PATH_MAX + 32], buf[64];
	pid_t pid;
	int st, fd;
	ssize_t n;

	bench_pathf(cg, sizeof(cg), "%s/grow", d->mnt);
	bench_mkdir(cg);
	bench_pathf(path, sizeof(path), "%s/memory.max", cg);
	bench_write_file(path, "32M");
	pid = fork();
	if (pid == 0) {
		bench_pathf(path, sizeof(path), "%s/cgroup.procs", cg);
		bench_write_file(path, "0");
		for (int i = 0; i < 400; i++) {
			char *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				       -1, 0);

			if (p == MAP_FAILED)
				_exit(1);
			for (size_t o = 0; o < MIB; o += 4096)
				p[o] = 1;
			usleep(10000);
		}
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		bench_die("the grower was not OOM-killed (wait status 0x%x)", st);
	bench_pathf(path, sizeof(path), "%s/memory.peak", cg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		bench_die("%s: unreadable", path);
	buf[n] = '\0';
	bench_daemon_stop(d);
	return (strtol(buf, NULL, 10) - (long)(32 * MIB)) / 1024;
}

int main(int argc, char **argv)
{
	static const int pops[] = { 10, 100, 1000 };
	static const unsigned int intervals[] = { 50, 100, 200, 500 };
	struct memcgfs_config conf;
	unsigned int dflt;
	struct share share[3], by_interval;
	double with_us, without_us, ratio;
	char m[64];
	long over;

	memcgfs = getenv("MEMCGFS");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--memcgfs") && i + 1 < argc)
			memcgfs = argv[++i];
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			opt_secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			opt_reps = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_real [--memcgfs PATH] [--secs W] [--reps R]\n");
			return 2;
		}
	}
	if (!memcgfs || opt_secs <= 0 || opt_reps < 1 || opt_reps > 256) {
		fprintf(stderr, "bench_real: --memcgfs (or $MEMCGFS), --secs > 0, --reps 1..256\n");
		return 2;
	}
	bench_require_fuse("bench_real");
	bench_setup("bench_real");
	conf_defaults(&conf);
	dflt = conf.memcg.real_interval;

	printf("real memory: the daemon's CPU share of one core while idle members are sampled\n"
	       "(nobody reading), over %.1f s each\n\n", opt_secs);
	printf("| members | interval | sampling thread | whole daemon |\n|---|---|---|---|\n");
	for (int i = 0; i < 3; i++) {
		share[i] = sample_share(dflt, pops[i]);
		printf("| %d | %u ms (default) | %.4f | %.4f |\n", pops[i], dflt, share[i].sampler,
		       share[i].daemon);
		fflush(stdout);
	}
	for (int i = 0; i < 4; i++) {
		if (intervals[i] == dflt)
			continue;
		by_interval = sample_share(intervals[i], 1000);
		printf("| 1000 | %u ms | %.4f | %.4f |\n", intervals[i], by_interval.sampler,
		       by_interval.daemon);
		fflush(stdout);
	}

	read_latency(dflt, &with_us, &without_us, &ratio);
	printf("\nopen+read+close of memory.current, 100 members, pinned to CPU 0, %d rounds\n"
	       "of 0.05 s each way (medians):\n"
	       "  real memory on  %.1f us\n  real memory off %.1f us\n"
	       "  ratio %.2f (the median of the rounds' ratios)\n",
	       opt_reps, with_us, without_us, ratio);

	over = overshoot_kib(dflt);
	printf("\na process touching 100 MiB/s past memory.max = 32M, interval %u ms:\n"
	       "  memory.peak - max before its OOM kill: %ld KiB\n", dflt, over);

	printf("\n");
	snprintf(m, sizeof(m), "%.4f", share[2].sampler);
	bench_target("real_sample_cpu_1000", m, "<=0.02", share[2].sampler <= 0.02);
	snprintf(m, sizeof(m), "%.2f", ratio);
	bench_target("real_read_latency", m, "<=2.0", ratio <= 2.0);
	return 0;
}
