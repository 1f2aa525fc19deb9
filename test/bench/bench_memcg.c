/* SPDX-License-Identifier: MIT */
/*
 * bench_memcg - the seeds' tables, every build variant side by side in one
 * run: time and instructions for every row.
 *
 * Seed 002 ("memcg: combine slab obj stock charging and accounting"):
 *   kfree(kmalloc(n, GFP_KERNEL_ACCOUNT)) at n = 64, 2312, 4096 bytes by a
 *   root task (nothing charged), and by a task in a child cgroup with the
 *   separate-lock obj_stock path (-Dobj_stock=separate) and with the
 *   combined one (the default).
 * Seed 003 ("mm: kmem: optimize obj_cgroup pointer retrieval"):
 *   1M kmalloc(8, GFP_KERNEL_ACCOUNT) kept, then all freed, by a task in a
 *   child cgroup (accounted) and by a root task (unaccounted), with the
 *   older lookup (-Dobjcg_lookup=memcg, "before": 6.1's
 *   get_obj_cgroup_from_current(), an RCU section, the task's css_set, the
 *   walk to an objcg, obj_cgroup_tryget() on its percpu_ref and the put
 *   after the charge) and the task's cached objcg pointer (the default,
 *   "after"); the kernel's figures printed beside; beside the
 *   same loop in a program with no accounting hooks at all (alloc linked
 *   with alloc/noacct.c).
 *
 * The ablations are build-time variants of memcg/, so this source is built
 * into one program per variant (test/bench/meson.build):
 *   bench_memcg            the default build: combined, task pointer (runs it all)
 *   bench_memcg_separate   MEMCG_OBJ_STOCK_SEPARATE
 *   bench_memcg_lookup     MEMCG_OBJCG_LOOKUP_MEMCG
 *   bench_memcg_klimit     MEMCG_OBJ_STOCK_KERNEL_LIMIT (the kernel's
 *                          one-page obj_stock limit, for information)
 *   bench_memcg_nohooks    no memcg at all (BENCH_NOHOOKS)
 * bench_memcg starts the others as servers ("--serve CPU") on the CPU it
 * pins itself to, and sends them one loop at a time over a pipe: every
 * repetition (a round) runs every row once, in a rotating order, whichever
 * process the row lives in, and the server times its own loop (no pipe in
 * the figure).  Rows report the median of R rounds; every ratio is the
 * median of the R rounds' own ratios, each of rows timed within
 * milliseconds of each other, so that a drift of the machine's speed
 * (this machine class is shared, and its speed moves by 20% from one
 * 100-ms stretch to the next) cancels out instead of landing in one row:
 * many short loops rather than a few long ones.  A loop from which
 * other tasks took more than 0.5% of the wall time (wall-clock minus the
 * process's CPU time: this machine class is shared) is run again, up to 5
 * times, the least disturbed attempt counting; the run says how many were.
 * Rows "for information" include controls: GFP_KERNEL (no hook called) in
 * several builds runs the same alloc/ code, so their spread shows what code
 * and data placement alone do to a comparison across builds.
 *
 * Instructions: "<variant> --instr MODE SIZE ITER" (or --instr-bulk MODE
 * COUNT) runs one loop between two CALLGRIND_TOGGLE_COLLECT requests after
 * a warm-up, under valgrind --tool=callgrind; valgrind has no rseq, so the
 * children set alloc_config.rseq_emulate (the rseq fast paths, alloc's and
 * memcg's stocks', run as if always on CPU 0: the same instructions).  The
 * empty loop's count is subtracted.  The callgrind runs go in parallel
 * (deterministic counts) after the timings.
 *
 * Every process checks before measuring that a child-cgroup task's
 * kmalloc(n, GFP_KERNEL_ACCOUNT) shows in the child's slab_unreclaimable
 * (ksize + the objcg pointer, n = 64 and 4096) and a root task's does not,
 * and when it ends that memory_current is back where it started after
 * memcg_drain() and memcg_check() holds (a WARNING line if not).
 *
 * Ends with one "target NAME measured=V goal=OPV ok|MISS" line per target
 * of docs/design.md it measures.  A MISS is information: the exit status is
 * nonzero only on an internal error.
 *
 * Options (for development; the benchmark runs with none):
 *   --iters N        seed 002 loop iterations per timing (400000)
 *   --bulk N         seed 003 allocations (1000000)
 *   --reps R         rounds (41 for seed 002; seed 003's: a third of them)
 *   --instr-iters N  seed 002 loop iterations under callgrind (100000)
 *   --instr-bulk N   seed 003 allocations under callgrind (1000000)
 *   --no-instr       skip the callgrind measurements
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "harness.h"
#ifndef BENCH_NOHOOKS
#include "memcg.h"
#endif

#ifndef BENCH_VARIANT
#error "build with -DBENCH_VARIANT=\"name\" (test/bench/meson.build)"
#endif

extern char **environ;

/* ---- what a loop runs as ---- */
enum {
	M_EMPTY,	/* the loop without the allocator calls */
	M_PLAIN,	/* root task, GFP_KERNEL (no __GFP_ACCOUNT) */
	M_ROOT,		/* root task, GFP_KERNEL_ACCOUNT: not charged */
	M_ACCT,		/* task in a child cgroup, GFP_KERNEL_ACCOUNT: charged */
	NR_MODES
};
static const char *const mode_names[NR_MODES] = { "empty", "plain", "root", "acct" };

static int parse_mode(const char *s)
{
	for (int m = 0; m < NR_MODES; m++)
		if (!strcmp(s, mode_names[m]))
			return m;
	bench_die("unknown mode %s (empty, plain, root, acct)", s);
}

/* This (single-threaded) process's CPU time: wall minus it is time stolen. */
static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the machine: alloc, memcg, a child cgroup, a root and a child task ---- */
#ifndef BENCH_NOHOOKS
static struct mem_cgroup *child_memcg;
static struct memcg_task *root_task, *child_task;
static unsigned long child_usage0;

static unsigned long long slab_unrecl(void)
{
	unsigned long long v;

	if (memcg_stat_read(child_memcg, "slab_unreclaimable", &v))
		bench_die("memcg_stat_read(slab_unreclaimable) failed");
	return v;
}

/* Does the variant charge what it should, and only that? */
static void check_accounting(void)
{
	static const size_t sz[] = { 64, 4096 };

	for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
		unsigned long long s0, s1, s2, s3;
		void *p;
		size_t full;

		memcg_set_current(child_task);
		s0 = slab_unrecl();
		p = kmalloc(sz[k], GFP_KERNEL_ACCOUNT);
		if (!p)
			bench_die("kmalloc(%zu, GFP_KERNEL_ACCOUNT) failed", sz[k]);
		full = ksize(p) + sizeof(void *);
		s1 = slab_unrecl();
		kfree(p);
		s2 = slab_unrecl();
		memcg_set_current(root_task);
		p = kmalloc(sz[k], GFP_KERNEL_ACCOUNT);
		s3 = slab_unrecl();
		kfree(p);
		if (s1 - s0 != full || s2 != s0 || s3 != s0)
			bench_die("accounting check at %zu bytes: child slab_unreclaimable %llu, "
			    "+%llu after the child task's allocation (expected +%zu), %llu after "
			    "its free, %llu after a root task's allocation",
			    sz[k], s0, s1 - s0, full, s2, s3);
	}
	memcg_set_current(NULL);
}
#endif

static void machine_setup(bool rseq_emulate)
{
	struct alloc_config cfg;
	int err;

	alloc_config_defaults(&cfg);
	cfg.memory = 256ull << 20;
	cfg.rseq_emulate = rseq_emulate;
	err = alloc_init(&cfg);
	if (err)
		bench_die("alloc_init: %s", strerror(-err));
	if (trace_is_on())
		trace_set_on(false);
#ifndef BENCH_NOHOOKS
	err = memcg_init(NULL);
	if (err)
		bench_die("memcg_init: %s", strerror(-err));
	err = mem_cgroup_create(root_mem_cgroup(), &child_memcg);
	if (err)
		bench_die("mem_cgroup_create: %s", strerror(-err));
	root_task = memcg_task_create(getpid(), root_mem_cgroup());
	child_task = memcg_task_create(getpid(), child_memcg);
	if (!root_task || !child_task)
		bench_die("memcg_task_create failed");
	child_usage0 = mem_cgroup_usage_pages(child_memcg);
	check_accounting();
	memcg_drain();
#endif
}

static void machine_drain(void)
{
#ifndef BENCH_NOHOOKS
	memcg_drain();
#endif
}

/*
 * The end of a process: everything freed and drained, the child cgroup's
 * memory_current must be where it started and memcg_check() must hold.
 * Returns "clean" or what went wrong (reported, not fatal).
 */
static const char *machine_finish(char *msg, size_t len)
{
	snprintf(msg, len, "clean");
#ifndef BENCH_NOHOOKS
	{
		char cm[256];
		unsigned long usage;
		int err;

		memcg_set_current(NULL);
		memcg_drain();
		usage = mem_cgroup_usage_pages(child_memcg);
		err = memcg_check(cm, sizeof(cm));
		if (usage != child_usage0 || err)
			snprintf(msg, len, "child memory_current %lu pages after drain "
				 "(%lu at start); memcg_check: %s", usage, child_usage0,
				 err ? cm : "ok");
		memcg_task_exit(child_task);
		memcg_task_exit(root_task);
		if (mem_cgroup_offline(child_memcg) == 0)
			mem_cgroup_put(child_memcg);
		memcg_exit();
	}
#endif
	alloc_exit();
	return msg;
}

static void set_task(int mode)
{
#ifndef BENCH_NOHOOKS
	memcg_set_current(mode == M_ACCT ? child_task : root_task);
#else
	if (mode == M_ACCT)
		bench_die("mode acct needs memcg: this is the no-hooks build");
#endif
}

/* ---- the loops ---- */
/* The compiler must believe p is used and memory changed: no elision. */
#define SINK(p)	__asm__ __volatile__("" : : "r"(p) : "memory")

#define PAIR_LOOP(NAME, ALLOC, FREE)					\
static ALLOC_HOT("30" #NAME) void NAME(size_t n, unsigned long iters) \
{									\
	for (unsigned long i = 0; i < iters; i++) {			\
		void *p = ALLOC;					\
		SINK(p);						\
		FREE;							\
	}								\
}
PAIR_LOOP(pairs_account, kmalloc(n, GFP_KERNEL_ACCOUNT), kfree(p))
PAIR_LOOP(pairs_kernel, kmalloc(n, GFP_KERNEL), kfree(p))
PAIR_LOOP(pairs_empty, (void *)(uintptr_t)(i + n), (void)0)
#undef PAIR_LOOP

#define ALLOC_LOOP(NAME, ALLOC)						\
static ALLOC_HOT("31" #NAME) void NAME(void **v, unsigned long count) \
{									\
	for (unsigned long i = 0; i < count; i++) {			\
		void *p = ALLOC;					\
		SINK(p);						\
		v[i] = p;						\
	}								\
}
#define FREE_LOOP(NAME, FREE)						\
static ALLOC_HOT("31" #NAME) void NAME(void **v, unsigned long count) \
{									\
	for (unsigned long i = 0; i < count; i++) {			\
		void *p = v[i];						\
		SINK(p);						\
		FREE;							\
	}								\
}
ALLOC_LOOP(bulk_alloc_account, kmalloc(8, GFP_KERNEL_ACCOUNT))
ALLOC_LOOP(bulk_alloc_kernel, kmalloc(8, GFP_KERNEL))
ALLOC_LOOP(bulk_alloc_empty, (void *)(uintptr_t)i)
FREE_LOOP(bulk_free, kfree(p))
FREE_LOOP(bulk_free_empty, (void)0)
#undef ALLOC_LOOP
#undef FREE_LOOP

static void run_pairs(int mode, size_t n, unsigned long iters)
{
	switch (mode) {
	case M_EMPTY: pairs_empty(n, iters); break;
	case M_PLAIN: pairs_kernel(n, iters); break;
	default: pairs_account(n, iters); break;
	}
}

static void run_bulk_alloc(int mode, void **v, unsigned long count)
{
	switch (mode) {
	case M_EMPTY: bulk_alloc_empty(v, count); break;
	case M_PLAIN: bulk_alloc_kernel(v, count); break;
	default: bulk_alloc_account(v, count); break;
	}
}

static void run_bulk_free(int mode, void **v, unsigned long count)
{
	if (mode == M_EMPTY)
		bulk_free_empty(v, count);
	else
		bulk_free(v, count);
}

/* A loop that lost allocations would be measuring something else. */
static void check_pair(int mode, size_t n)
{
	void *p;

	if (mode == M_EMPTY)
		return;
	p = kmalloc(n, mode == M_PLAIN ? GFP_KERNEL : GFP_KERNEL_ACCOUNT);
	if (!p)
		bench_die("kmalloc(%zu) as %s failed", n, mode_names[mode]);
	kfree(p);
}

/*
 * Timed: ns for the whole loop, and how much of it other tasks had the CPU
 * (*stolen: wall-clock minus this process's CPU time).
 */
static double time_pairs(int mode, size_t n, unsigned long iters, double *stolen)
{
	double t, c;

	set_task(mode);
	c = cpu_ns();
	t = bench_now_ns();
	run_pairs(mode, n, iters);
	t = bench_now_ns() - t;
	c = cpu_ns() - c;
	*stolen = t > c ? t - c : 0;
	check_pair(mode, n);
	return t;
}

static void **bulk_v;
static unsigned long bulk_cap;

static void **bulk_vector(unsigned long count)
{
	if (count > bulk_cap) {
		free(bulk_v);
		bulk_v = malloc(count * sizeof(*bulk_v));
		if (!bulk_v)
			bench_die("out of memory for %lu pointers", count);
		memset(bulk_v, 0, count * sizeof(*bulk_v));	/* fault it in */
		bulk_cap = count;
	}
	return bulk_v;
}

static void time_bulk(int mode, unsigned long count, double *alloc_ns, double *free_ns,
		      double *stolen)
{
	void **v = bulk_vector(count);
	double t0, t1, t2, c0, c1, c2;

	set_task(mode);
	c0 = cpu_ns();
	t0 = bench_now_ns();
	run_bulk_alloc(mode, v, count);
	t1 = bench_now_ns();
	c1 = cpu_ns();
	if (mode != M_EMPTY && (!v[0] || !v[count / 2] || !v[count - 1]))
		bench_die("bulk allocation as %s failed", mode_names[mode]);
	c2 = cpu_ns();
	t2 = bench_now_ns();
	run_bulk_free(mode, v, count);
	*free_ns = bench_now_ns() - t2;
	c2 = cpu_ns() - c2;
	*alloc_ns = t1 - t0;
	c1 -= c0;
	*stolen = *alloc_ns + *free_ns > c1 + c2 ? *alloc_ns + *free_ns - c1 - c2 : 0;
}

/* Involuntary context switches so far: another task took our CPU. */
static long preempted(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_nivcsw;
}

/* ---- CPU pinning ---- */
static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

/* ---- server mode: one variant's loops, on command, timed here ---- */
static int serve(int cpu)
{
	char line[256], msg[512];

	long nivcsw;

	pin_to(cpu);
	machine_setup(false);
	nivcsw = preempted();
	printf("ready %s rseq=%d\n", BENCH_VARIANT, (int)alloc_uses_rseq());
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[16], mode[16];
		unsigned long a, b;

		if (sscanf(line, "pairs %15s %lu %lu", mode, &a, &b) == 3) {
			double t, st;

			t = time_pairs(parse_mode(mode), a, b, &st);
			printf("ok %.0f %.0f\n", t, st);
		} else if (sscanf(line, "bulk %15s %lu", mode, &a) == 2) {
			double ta, tf, st;

			time_bulk(parse_mode(mode), a, &ta, &tf, &st);
			printf("ok %.0f %.0f %.0f\n", ta, tf, st);
		} else if (sscanf(line, "%15s", cmd) == 1 && !strcmp(cmd, "drain")) {
			machine_drain();
			printf("ok\n");
		} else if (sscanf(line, "%15s", cmd) == 1 && !strcmp(cmd, "quit")) {
			free(bulk_v);
			nivcsw = preempted() - nivcsw;
			printf("ok %ld %s\n", nivcsw, machine_finish(msg, sizeof(msg)));
			return 0;
		} else {
			bench_die("bad command: %s", line);
		}
	}
	bench_die("stdin closed before quit");
}

/* ---- the callgrind child: one loop between two toggles ---- */
static int instr_child(int mode, bool bulk, size_t n, unsigned long iters)
{
	void **v = NULL;
	bool rseq;

	machine_setup(true);
	set_task(mode);
	if (bulk)
		v = bulk_vector(iters);
	CALLGRIND_START_INSTRUMENTATION;
	if (bulk) {		/* warm-up: the same run */
		run_bulk_alloc(mode, v, iters);
		run_bulk_free(mode, v, iters);
	} else {
		run_pairs(mode, n, iters / 10 + 1000);
	}
	CALLGRIND_TOGGLE_COLLECT;
	if (bulk) {
		run_bulk_alloc(mode, v, iters);
		run_bulk_free(mode, v, iters);
	} else {
		run_pairs(mode, n, iters);
	}
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_STOP_INSTRUMENTATION;
	if (bulk && mode != M_EMPTY && (!v[0] || !v[iters - 1]))
		bench_die("bulk allocation as %s failed", mode_names[mode]);
	check_pair(mode, n);
	rseq = alloc_uses_rseq();
	/*
	 * No teardown here: the emulated rseq is this thread's alone, and the
	 * teardown's call_rcu starts liburcu's callback thread, which glibc
	 * gives rseq when its creator's area says registered (valgrind has
	 * none: "rseq registration failed"), and whose frees would take the
	 * fast paths without a CPU.  The timed servers check the end.
	 */
	printf("%s %s rseq=%d\n", BENCH_VARIANT, mode_names[mode], (int)rseq);
	free(bulk_v);
	_exit(0);
}

#ifdef BENCH_MAIN
/* ======================== the driver (bench_memcg) ======================== */

enum { V_COMBINED, V_SEPARATE, V_LOOKUP, V_KLIMIT, V_NOHOOKS, NR_VARIANTS };
static const char *const variant_names[NR_VARIANTS] = {
	"combined", "separate", "lookup", "klimit", "no-hooks"
};
static const char *const variant_exe[NR_VARIANTS] = {
	NULL, "bench_memcg_separate", "bench_memcg_lookup", "bench_memcg_klimit",
	"bench_memcg_nohooks"
};

struct runner {
	char path[PATH_MAX];
	pid_t pid;
	FILE *to, *from;
	int rseq;
};
static struct runner runners[NR_VARIANTS];
static char self_path[PATH_MAX];

static void self_exe(void)
{
	ssize_t len = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	if (len <= 0)
		bench_die("readlink(/proc/self/exe): %s", strerror(errno));
	self_path[len] = 0;
}

static void runner_paths(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", self_path);
	dirname(dir);
	for (int v = 0; v < NR_VARIANTS; v++) {
		if (!variant_exe[v])
			snprintf(runners[v].path, sizeof(runners[v].path), "%s", self_path);
		else if ((size_t)snprintf(runners[v].path, sizeof(runners[v].path), "%s/%s",
					  dir, variant_exe[v]) >= sizeof(runners[v].path))
			bench_die("path too long");
		if (access(runners[v].path, X_OK))
			bench_die("%s: %s (built by test/bench/meson.build beside bench_memcg)",
			    runners[v].path, strerror(errno));
	}
}

static void runner_reply(struct runner *r, char *buf, size_t len)
{
	if (!fgets(buf, (int)len, r->from))
		bench_die("%s stopped answering", r->path);
	buf[strcspn(buf, "\n")] = 0;
}

static void runner_start(int v, int cpu)
{
	struct runner *r = &runners[v];
	int in[2], out[2];
	char cpubuf[16], line[256], name[64];
	char *argv[] = { r->path, "--serve", cpubuf, NULL };
	posix_spawn_file_actions_t fa;

	if (pipe(in) || pipe(out))
		bench_die("pipe: %s", strerror(errno));
	snprintf(cpubuf, sizeof(cpubuf), "%d", cpu);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	posix_spawn_file_actions_addclose(&fa, in[0]);
	posix_spawn_file_actions_addclose(&fa, out[1]);
	if (posix_spawn(&r->pid, r->path, &fa, NULL, argv, environ))
		bench_die("posix_spawn(%s): %s", r->path, strerror(errno));
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFD, FD_CLOEXEC);
	fcntl(out[0], F_SETFD, FD_CLOEXEC);
	r->to = fdopen(in[1], "w");
	r->from = fdopen(out[0], "r");
	if (!r->to || !r->from)
		bench_die("fdopen: %s", strerror(errno));
	setvbuf(r->to, NULL, _IOLBF, 0);
	runner_reply(r, line, sizeof(line));
	if (sscanf(line, "ready %63s rseq=%d", name, &r->rseq) != 2)
		bench_die("%s: unexpected greeting \"%s\"", r->path, line);
	if (strcmp(name, variant_names[v]))
		bench_die("%s is the %s variant, not %s", r->path, name, variant_names[v]);
}

/* Stop a server: what it says of its end, and how often it was preempted. */
static long runner_stop(int v, char *msg, size_t len)
{
	struct runner *r = &runners[v];
	char line[600];
	long nivcsw;
	int st, off = 0;

	fprintf(r->to, "quit\n");
	runner_reply(r, line, sizeof(line));
	if (sscanf(line, "ok %ld %n", &nivcsw, &off) != 1 || !off)
		bench_die("%s: quit: %s", r->path, line);
	snprintf(msg, len, "%s", line + off);
	fclose(r->to);
	fclose(r->from);
	if (waitpid(r->pid, &st, 0) != r->pid || !WIFEXITED(st) || WEXITSTATUS(st))
		bench_die("%s ended badly (status %#x)", r->path, st);
	return nivcsw;
}

/* ns of one loop and the time stolen from it, in whichever process the variant lives */
static double pairs_once(int v, int mode, size_t n, unsigned long iters, double *stolen)
{
	char line[128];
	double t;

	if (v == V_COMBINED)
		return time_pairs(mode, n, iters, stolen);
	fprintf(runners[v].to, "pairs %s %zu %lu\n", mode_names[mode], n, iters);
	runner_reply(&runners[v], line, sizeof(line));
	if (sscanf(line, "ok %lf %lf", &t, stolen) != 2)
		bench_die("%s: pairs: %s", runners[v].path, line);
	return t;
}

static void bulk_once(int v, int mode, unsigned long count, double *alloc_ns, double *free_ns,
		      double *stolen)
{
	char line[128];

	if (v == V_COMBINED) {
		time_bulk(mode, count, alloc_ns, free_ns, stolen);
		return;
	}
	fprintf(runners[v].to, "bulk %s %lu\n", mode_names[mode], count);
	runner_reply(&runners[v], line, sizeof(line));
	if (sscanf(line, "ok %lf %lf %lf", alloc_ns, free_ns, stolen) != 3)
		bench_die("%s: bulk: %s", runners[v].path, line);
}

/*
 * A timing from which other tasks took more than STOLEN_MAX of the wall
 * time (this machine class is shared) is run again, up to MAX_ATTEMPTS
 * times; the least disturbed attempt counts.
 */
#define STOLEN_MAX	0.005
#define MAX_ATTEMPTS	5
static unsigned long nr_timed, nr_rerun, nr_disturbed;
static double worst_stolen;

static void note_attempts(int attempts, double best_frac)
{
	nr_timed++;
	nr_rerun += (unsigned long)(attempts - 1);
	if (best_frac > STOLEN_MAX)
		nr_disturbed++;
	if (best_frac > worst_stolen)
		worst_stolen = best_frac;
}

/* ns per pair */
static double cell_pairs(int v, int mode, size_t n, unsigned long iters)
{
	double best = 0, best_frac = 2;
	int a;

	for (a = 1; a <= MAX_ATTEMPTS; a++) {
		double st, t = pairs_once(v, mode, n, iters, &st);

		if (st / t < best_frac) {
			best = t;
			best_frac = st / t;
		}
		if (best_frac <= STOLEN_MAX)
			break;
	}
	note_attempts(a > MAX_ATTEMPTS ? MAX_ATTEMPTS : a, best_frac);
	return best / (double)iters;
}

static void cell_bulk(int v, int mode, unsigned long count, double *alloc_ns, double *free_ns)
{
	double best_frac = 2;
	int a;

	for (a = 1; a <= MAX_ATTEMPTS; a++) {
		double ta, tf, st;

		bulk_once(v, mode, count, &ta, &tf, &st);
		if (st / (ta + tf) < best_frac) {
			*alloc_ns = ta;
			*free_ns = tf;
			best_frac = st / (ta + tf);
		}
		if (best_frac <= STOLEN_MAX)
			break;
	}
	note_attempts(a > MAX_ATTEMPTS ? MAX_ATTEMPTS : a, best_frac);
}

static void drain_all(void)
{
	char line[64];

	machine_drain();
	for (int v = 1; v < NR_VARIANTS; v++) {
		fprintf(runners[v].to, "drain\n");
		runner_reply(&runners[v], line, sizeof(line));
		if (strcmp(line, "ok"))
			bench_die("%s: drain: %s", runners[v].path, line);
	}
}

/* ---- statistics ---- */
#define MAX_REPS 64

static void min_max(const double *v, int n, double *lo, double *hi)
{
	*lo = *hi = v[0];
	for (int i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

/* ---- the rows ---- */
struct cell {
	int variant, mode;
	const char *label;
};

/* Seed 002: kfree(kmalloc(n)); the first three are the seed's rows. */
enum { P_UNACCT, P_SEP, P_COMB, P_PLAIN, P_NOHOOKS, P_KLIMIT, P_SEP_ROOT, P_SEP_PLAIN,
       P_NOHOOKS_PLAIN, P_EMPTY, NR_PCELLS };
static const struct cell pcells[NR_PCELLS] = {
	[P_UNACCT]   = { V_COMBINED, M_ROOT, "no memcg (root task)" },
	[P_SEP]      = { V_SEPARATE, M_ACCT, "memcg, separate-lock path" },
	[P_COMB]     = { V_COMBINED, M_ACCT, "memcg, combined path" },
	[P_PLAIN]    = { V_COMBINED, M_PLAIN, "GFP_KERNEL (no __GFP_ACCOUNT)" },
	[P_NOHOOKS]  = { V_NOHOOKS, M_ROOT, "no accounting hooks at all" },
	[P_KLIMIT]   = { V_KLIMIT, M_ACCT, "combined, kernel 1-page limit" },
	[P_SEP_ROOT] = { V_SEPARATE, M_ROOT, "separate build, root task" },
	[P_SEP_PLAIN] = { V_SEPARATE, M_PLAIN, "separate build, GFP_KERNEL" },
	[P_NOHOOKS_PLAIN] = { V_NOHOOKS, M_PLAIN, "no-hooks build, GFP_KERNEL" },
	[P_EMPTY]    = { V_COMBINED, M_EMPTY, "the empty loop (included)" },
};

/* Seed 003: 1M 8-byte allocations kept, then freed. */
enum { B_BEFORE_ACCT, B_BEFORE_ROOT, B_AFTER_ACCT, B_AFTER_ROOT, B_NOHOOKS, B_PLAIN,
       B_PLAIN_NOHOOKS, B_PLAIN_LOOKUP, B_EMPTY, NR_BCELLS };
static const struct cell bcells[NR_BCELLS] = {
	[B_BEFORE_ACCT] = { V_LOOKUP, M_ACCT, "before, accounted" },
	[B_BEFORE_ROOT] = { V_LOOKUP, M_ROOT, "before, unaccounted" },
	[B_AFTER_ACCT]  = { V_COMBINED, M_ACCT, "after, accounted" },
	[B_AFTER_ROOT]  = { V_COMBINED, M_ROOT, "after, unaccounted" },
	[B_NOHOOKS]     = { V_NOHOOKS, M_ROOT, "no accounting hooks at all" },
	[B_PLAIN]       = { V_COMBINED, M_PLAIN, "GFP_KERNEL, default build" },
	[B_PLAIN_NOHOOKS] = { V_NOHOOKS, M_PLAIN, "GFP_KERNEL, no-hooks build" },
	[B_PLAIN_LOOKUP] = { V_LOOKUP, M_PLAIN, "GFP_KERNEL, lookup build" },
	[B_EMPTY]       = { V_COMBINED, M_EMPTY, "the empty loops" },
};

static const size_t sizes[] = { 64, 2312, 4096 };
#define NR_SIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- callgrind ---- */
#define INSTR_NA (-1.0)

struct cg_job {
	int variant, mode;
	bool bulk;
	size_t size;
	unsigned long iters;
	double *result;		/* instructions per iteration, filled in */
	char info[256];
	pid_t pid;
	char out[PATH_MAX + 32], log[PATH_MAX + 32], child_out[PATH_MAX + 32];
};

static char tmp_dir[PATH_MAX];

static void read_loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a = 0, b = 0, c = 0;

	snprintf(buf, len, "?");
	if (!f)
		return;
	if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	fclose(f);
}

static void cg_start(struct cg_job *j, int idx)
{
	char out_opt[PATH_MAX + 64], log_opt[PATH_MAX + 64], a1[32], a2[32];
	char *argv[16];
	int argc = 0;
	posix_spawn_file_actions_t fa;

	snprintf(j->out, sizeof(j->out), "%s/callgrind.%d.out", tmp_dir, idx);
	snprintf(j->log, sizeof(j->log), "%s/valgrind.%d.log", tmp_dir, idx);
	snprintf(j->child_out, sizeof(j->child_out), "%s/child.%d.out", tmp_dir, idx);
	snprintf(out_opt, sizeof(out_opt), "--callgrind-out-file=%s", j->out);
	snprintf(log_opt, sizeof(log_opt), "--log-file=%s", j->log);
	unlink(j->out);
	argv[argc++] = "valgrind";
	argv[argc++] = "--tool=callgrind";
	argv[argc++] = "--instr-atstart=no";
	argv[argc++] = "--collect-atstart=no";
	argv[argc++] = out_opt;
	argv[argc++] = log_opt;
	argv[argc++] = runners[j->variant].path;
	if (j->bulk) {
		argv[argc++] = "--instr-bulk";
		argv[argc++] = (char *)mode_names[j->mode];
		snprintf(a1, sizeof(a1), "%lu", j->iters);
		argv[argc++] = a1;
	} else {
		argv[argc++] = "--instr";
		argv[argc++] = (char *)mode_names[j->mode];
		snprintf(a1, sizeof(a1), "%zu", j->size);
		snprintf(a2, sizeof(a2), "%lu", j->iters);
		argv[argc++] = a1;
		argv[argc++] = a2;
	}
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, j->child_out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (posix_spawnp(&j->pid, "valgrind", &fa, NULL, argv, environ))
		bench_die("posix_spawnp(valgrind): %s", strerror(errno));
	posix_spawn_file_actions_destroy(&fa);
}

static void cg_finish(struct cg_job *j, int st)
{
	char line[512];
	double totals = -1, summary = -1;
	FILE *f;

	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_memcg: callgrind run of %s %s %s %zu failed\n",
			variant_names[j->variant], j->bulk ? "bulk" : "pairs",
			mode_names[j->mode], j->size);
		bench_show_file(j->log);
		bench_die("callgrind measurement failed");
	}
	f = fopen(j->child_out, "r");
	j->info[0] = 0;
	if (f) {
		if (fgets(j->info, sizeof(j->info), f))
			j->info[strcspn(j->info, "\n")] = 0;
		fclose(f);
	}
	f = fopen(j->out, "r");
	if (!f)
		bench_die("no callgrind output %s", j->out);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "totals:", 7))
			totals = strtod(line + 7, NULL);
		else if (!strncmp(line, "summary:", 8))
			summary = strtod(line + 8, NULL);
	}
	fclose(f);
	if (totals < 0)
		totals = summary;
	if (totals < 0)
		bench_die("no totals in %s", j->out);
	*j->result = totals / (double)j->iters;
	unlink(j->out);
	unlink(j->log);
	unlink(j->child_out);
}

/* Run every job, at most 'par' at a time: the counts do not depend on it. */
static void cg_run_all(struct cg_job *jobs, int n, int par)
{
	int next = 0, running = 0;

	while (next < n || running) {
		pid_t pid;
		int st;

		while (running < par && next < n) {
			cg_start(&jobs[next], next);
			next++;
			running++;
		}
		pid = waitpid(-1, &st, 0);
		if (pid < 0)
			bench_die("waitpid: %s", strerror(errno));
		for (int i = 0; i < next; i++)
			if (jobs[i].pid == pid) {
				cg_finish(&jobs[i], st);
				jobs[i].pid = 0;
				running--;
				break;
			}
	}
}

/* ---- output ---- */
static bool target(const char *name, double v, const char *op, double goal, const char *goal_s)
{
	char buf[32];
	double m;
	bool ok;

	snprintf(buf, sizeof(buf), "%.2f", v);
	m = strtod(buf, NULL);	/* judge the printed value */
	ok = isfinite(v) && (!strcmp(op, "<=") ? m <= goal : m >= goal);
	printf("target %s measured=%s goal=%s%s %s\n", name, isfinite(v) ? buf : "none",
	       op, goal_s, ok ? "ok" : "MISS");
	return ok;
}

static struct bench_loop_opts opt = {
	.iters = 400000, .bulk = 1000000, .instr_iters = 100000,
	.instr_bulk = 1000000, .reps = 41,
};

/* The median over the rounds of the overhead cut, (sep - comb) / (sep - none). */
static double round_cut(const double *sep, const double *comb, const double *none, int n)
{
	double v[MAX_REPS];

	for (int r = 0; r < n; r++)
		v[r] = (sep[r] - comb[r]) / (sep[r] - none[r]);
	return bench_median(v, n);
}

/* ratio of two seed 002 rows at size index k, and of two seed 003 rows */
#define PRATIO(k, a, b)	bench_round_ratio(pt[k][a], pt[k][b], reps)
#define BRATIO(a, b)	bench_round_ratio(bt[a], bt[b], breps)

static int bench_main(int argc, char **argv)
{
	static double pt[NR_SIZES][NR_PCELLS][MAX_REPS];	/* ns/pair */
	static double ba[NR_BCELLS][MAX_REPS], bf[NR_BCELLS][MAX_REPS];	/* ns */
	double pmed[NR_SIZES][NR_PCELLS], bmed[NR_BCELLS], bamed[NR_BCELLS], bfmed[NR_BCELLS];
	double pin[NR_SIZES][NR_PCELLS], bin[NR_BCELLS];	/* instructions, net */
	double bt[NR_BCELLS][MAX_REPS];
	char stop_msg[NR_VARIANTS][600], fin[512], comb_info[256] = "", sep_info[256] = "";
	const char *instr_skip = NULL;
	cpu_set_t orig;
	int cpu = -1, reps, breps, par = 0;
	long nivcsw;
	char load0[64], load1[64];
	double t_start = bench_now_ns(), t_timed;

	bench_parse_loop_opts(argc, argv, &opt, true,
			      "usage: bench_memcg [--iters N] [--bulk N] [--reps R] "
			      "[--instr-iters N] [--instr-bulk N] [--no-instr]");
	reps = opt.reps > MAX_REPS ? MAX_REPS : opt.reps;
	breps = reps / 3 > 3 ? reps / 3 : (reps < 3 ? reps : 3);

	self_exe();
	runner_paths();

	/* Pin to the highest allowed CPU (CPU 0 tends to take more interrupts). */
	if (sched_getaffinity(0, sizeof(orig), &orig))
		bench_die("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &orig)) {
			cpu = c;
			par++;
		}
	if (cpu < 0)
		bench_die("no CPU in the affinity mask");
	pin_to(cpu);

	machine_setup(false);
	for (int v = 1; v < NR_VARIANTS; v++)
		runner_start(v, cpu);
	nivcsw = preempted();
	read_loadavg(load0, sizeof(load0));

	printf("bench_memcg: the seeds' tables, every build variant in one run\n");
	printf("  builds: combined (this program, the default: -Dobj_stock=combined "
	       "-Dobjcg_lookup=task), separate (-DMEMCG_OBJ_STOCK_SEPARATE), lookup "
	       "(-DMEMCG_OBJCG_LOOKUP_MEMCG), klimit (-DMEMCG_OBJ_STOCK_KERNEL_LIMIT), "
	       "no-hooks (alloc with alloc/noacct.c, no memcg)\n");
	printf("  machine: 256 MiB arena, page %u, %u CPU slots, fast paths %s "
	       "(servers: %s)\n", alloc_page_size(), alloc_nr_cpus(),
	       alloc_uses_rseq() ? "rseq" : "per-CPU lock (no rseq)",
	       runners[V_SEPARATE].rseq && runners[V_LOOKUP].rseq ? "rseq" : "not all rseq");
	printf("  all processes pinned to CPU %d; %d rounds (seed 003: %d), every row "
	       "once per round in a rotating order (rows of other builds run in "
	       "their own process, driven over a pipe, timed there); a row's figure is "
	       "the median of its rounds, a ratio the median of the rounds' ratios\n\n",
	       cpu, reps, breps);

	/* ---- seed 002 ---- */
	for (size_t k = 0; k < NR_SIZES; k++) {
		drain_all();
		for (int c = 0; c < NR_PCELLS; c++) {	/* warm-up */
			double st;

			pairs_once(pcells[c].variant, pcells[c].mode, sizes[k],
				   opt.iters, &st);
		}
		for (int r = 0; r < reps; r++)
			for (int j = 0; j < NR_PCELLS; j++) {
				int c = (j + r) % NR_PCELLS;

				pt[k][c][r] = cell_pairs(pcells[c].variant, pcells[c].mode,
							 sizes[k], opt.iters);
			}
		for (int c = 0; c < NR_PCELLS; c++)
			pmed[k][c] = bench_median(pt[k][c], reps);
	}

	/* ---- seed 003 ---- */
	drain_all();
	for (int c = 0; c < NR_BCELLS; c++) {	/* warm-up: fault the slabs in */
		double a, f, st;

		bulk_once(bcells[c].variant, bcells[c].mode, opt.bulk, &a, &f, &st);
	}
	for (int r = 0; r < breps; r++)
		for (int j = 0; j < NR_BCELLS; j++) {
			int c = (j + r) % NR_BCELLS;

			cell_bulk(bcells[c].variant, bcells[c].mode, opt.bulk, &ba[c][r], &bf[c][r]);
			bt[c][r] = ba[c][r] + bf[c][r];
		}
	for (int c = 0; c < NR_BCELLS; c++) {
		bmed[c] = bench_median(bt[c], breps);
		bamed[c] = bench_median(ba[c], breps);
		bfmed[c] = bench_median(bf[c], breps);
	}
	drain_all();

	nivcsw = preempted() - nivcsw;
	for (int v = 1; v < NR_VARIANTS; v++)
		nivcsw += runner_stop(v, stop_msg[v], sizeof(stop_msg[v]));
	free(bulk_v);
	bulk_v = NULL;
	bulk_cap = 0;
	snprintf(stop_msg[V_COMBINED], sizeof(stop_msg[V_COMBINED]), "%s",
		 machine_finish(fin, sizeof(fin)));
	t_timed = bench_now_ns();
	read_loadavg(load1, sizeof(load1));

	/* ---- instructions ---- */
	for (size_t k = 0; k < NR_SIZES; k++)
		for (int c = 0; c < NR_PCELLS; c++)
			pin[k][c] = INSTR_NA;
	for (int c = 0; c < NR_BCELLS; c++)
		bin[c] = INSTR_NA;
	instr_skip = bench_instr_skip(opt.no_instr, HAVE_CALLGRIND);
	if (!instr_skip) {
		static struct cg_job jobs[NR_SIZES * NR_PCELLS + NR_BCELLS];
		const char *tmp = getenv("TMPDIR");
		int n = 0;

		/* the callgrind runs may use every CPU we were given */
		if (sched_setaffinity(0, sizeof(orig), &orig))
			bench_die("sched_setaffinity: %s", strerror(errno));
		snprintf(tmp_dir, sizeof(tmp_dir), "%s/bench_memcg.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmp_dir))
			bench_die("mkdtemp(%s): %s", tmp_dir, strerror(errno));
		/* the slow ones first */
		for (int c = 0; c < NR_BCELLS; c++)
			jobs[n++] = (struct cg_job){ .variant = bcells[c].variant,
				.mode = bcells[c].mode, .bulk = true, .size = 8,
				.iters = opt.instr_bulk, .result = &bin[c] };
		for (size_t k = 0; k < NR_SIZES; k++)
			for (int c = 0; c < NR_PCELLS; c++) {
				if (c == P_EMPTY && k)
					continue;	/* the size does not matter */
				jobs[n++] = (struct cg_job){ .variant = pcells[c].variant,
					.mode = pcells[c].mode, .size = sizes[k],
					.iters = opt.instr_iters, .result = &pin[k][c] };
			}
		cg_run_all(jobs, n, par);
		rmdir(tmp_dir);
		for (int i = 0; i < n; i++) {
			if (jobs[i].bulk || jobs[i].size != 64 || jobs[i].mode != M_ACCT)
				continue;
			if (jobs[i].variant == V_COMBINED)
				snprintf(comb_info, sizeof(comb_info), "%s", jobs[i].info);
			if (jobs[i].variant == V_SEPARATE)
				snprintf(sep_info, sizeof(sep_info), "%s", jobs[i].info);
		}
		/* net of the empty loop */
		for (size_t k = 0; k < NR_SIZES; k++) {
			for (int c = 0; c < NR_PCELLS; c++)
				if (c != P_EMPTY)
					pin[k][c] -= pin[0][P_EMPTY];
			pin[k][P_EMPTY] = pin[0][P_EMPTY];
		}
		for (int c = 0; c < NR_BCELLS; c++)
			if (c != B_EMPTY)
				bin[c] -= bin[B_EMPTY];
	}

	/* ---- seed 002's table ---- */
	printf("Seed 002: kfree(kmalloc(n, GFP_KERNEL_ACCOUNT)), rounds of %lu iterations, ns per "
	       "pair (median of %d rounds; ratios: median of the rounds' ratios)\n", opt.iters, reps);
	printf("  %-34s", "");
	for (size_t k = 0; k < NR_SIZES; k++)
		printf(" %9zu B", sizes[k]);
	printf("\n");
	for (int c = 0; c < NR_PCELLS; c++) {
		if (c == P_PLAIN)
			printf("  for information:\n");
		printf("  %-34s", pcells[c].label);
		for (size_t k = 0; k < NR_SIZES; k++)
			printf(" %11.2f", pmed[k][c]);
		printf("\n");
		if (c == P_COMB) {
			printf("  %-34s", "combined / no memcg");
			for (size_t k = 0; k < NR_SIZES; k++)
				printf(" %11.2f", PRATIO(k, P_COMB, P_UNACCT));
			printf("\n  %-34s", "separate / no memcg");
			for (size_t k = 0; k < NR_SIZES; k++)
				printf(" %11.2f", PRATIO(k, P_SEP, P_UNACCT));
			printf("\n  %-34s", "overhead cut (sep-comb)/(sep-none)");
			for (size_t k = 0; k < NR_SIZES; k++)
				printf(" %11.2f", round_cut(pt[k][P_SEP], pt[k][P_COMB],
							    pt[k][P_UNACCT], reps));
			printf("\n");
		}
	}
	printf("  %-34s", "combined / GFP_KERNEL");
	for (size_t k = 0; k < NR_SIZES; k++)
		printf(" %11.2f", PRATIO(k, P_COMB, P_PLAIN));
	printf("\n  %-34s", "kernel limit / no memcg");
	for (size_t k = 0; k < NR_SIZES; k++)
		printf(" %11.2f", PRATIO(k, P_KLIMIT, P_UNACCT));
	printf("\n  spread (min..max) of the seed's rows:");
	for (size_t k = 0; k < NR_SIZES; k++) {
		double lo, hi;

		printf(" %zu:", sizes[k]);
		for (int c = P_UNACCT; c <= P_COMB; c++) {
			min_max(pt[k][c], reps, &lo, &hi);
			printf(" %.2f..%.2f%s", lo, hi, c < P_COMB ? "," : ";");
		}
	}
	printf("\n  (the GFP_KERNEL rows of the default, separate and no-hooks builds call no "
	       "hook and run the same alloc/ code: their spread is what placement alone "
	       "does across builds)\n\n");

	if (instr_skip) {
		printf("instructions: %s\n\n", instr_skip);
	} else {
		printf("Seed 002, instructions per pair (callgrind, %lu iterations after a "
		       "warm-up; the empty loop's %.1f subtracted)\n", opt.instr_iters,
		       pin[0][P_EMPTY]);
		printf("  %-34s", "");
		for (size_t k = 0; k < NR_SIZES; k++)
			printf(" %9zu B", sizes[k]);
		printf("\n");
		for (int c = 0; c < NR_PCELLS; c++) {
			if (c == P_EMPTY)
				continue;
			if (c == P_PLAIN)
				printf("  for information:\n");
			printf("  %-34s", pcells[c].label);
			for (size_t k = 0; k < NR_SIZES; k++)
				printf(" %11.1f", pin[k][c]);
			printf("\n");
			if (c == P_COMB) {
				printf("  %-34s", "combined / no memcg");
				for (size_t k = 0; k < NR_SIZES; k++)
					printf(" %11.2f", pin[k][P_COMB] / pin[k][P_UNACCT]);
				printf("\n  %-34s", "separate / no memcg");
				for (size_t k = 0; k < NR_SIZES; k++)
					printf(" %11.2f", pin[k][P_SEP] / pin[k][P_UNACCT]);
				printf("\n  %-34s", "overhead cut (sep-comb)/(sep-none)");
				for (size_t k = 0; k < NR_SIZES; k++)
					printf(" %11.2f", (pin[k][P_SEP] - pin[k][P_COMB]) /
					       (pin[k][P_SEP] - pin[k][P_UNACCT]));
				printf("\n");
			}
		}
		printf("  %-34s", "combined / GFP_KERNEL");
		for (size_t k = 0; k < NR_SIZES; k++)
			printf(" %11.2f", pin[k][P_COMB] / pin[k][P_PLAIN]);
		printf("\n  under callgrind: %s\n", comb_info);
		printf("                   %s\n", sep_info);
		if (strstr(comb_info, "rseq=1"))
			printf("  (valgrind has no rseq: the rseq fast paths ran emulated, "
			       "alloc_config.rseq_emulate, the same instructions)\n");
		for (size_t k = 0; k < NR_SIZES; k++)
			if (pin[k][P_SEP] - pin[k][P_COMB] < 1.0)
				printf("  NOTE: at %zu bytes the separate build runs no more "
				       "instructions than the combined one: did "
				       "-DMEMCG_OBJ_STOCK_SEPARATE reach memcg/?\n", sizes[k]);
		printf("\n");
	}

	/* ---- seed 003's table ---- */
	printf("Seed 003: %lu x kmalloc(8, GFP_KERNEL_ACCOUNT) kept, then all kfree()d, "
	       "microseconds (median of %d rounds; ratios: median of the rounds' ratios)\n",
	       opt.bulk, breps);
	printf("  %-8s %12s %12s\n", "", "Accounted", "Unaccounted");
	printf("  %-8s %12.0f %12.0f   (6.1's get_obj_cgroup_from_current(): RCU, css_set, "
	       "objcg tryget/put, at every allocation)\n",
	       "before", bmed[B_BEFORE_ACCT] / 1e3, bmed[B_BEFORE_ROOT] / 1e3);
	printf("  %-8s %12.0f %12.0f   (the task's cached objcg pointer)\n",
	       "after", bmed[B_AFTER_ACCT] / 1e3, bmed[B_AFTER_ROOT] / 1e3);
	printf("  %-8s %+12.0f %+12.0f   (%+.1f%%, %+.1f%%; the kernel's: -9.1%%, -32.3%%)\n",
	       "delta",
	       (bmed[B_AFTER_ACCT] - bmed[B_BEFORE_ACCT]) / 1e3,
	       (bmed[B_AFTER_ROOT] - bmed[B_BEFORE_ROOT]) / 1e3,
	       100.0 * (BRATIO(B_AFTER_ACCT, B_BEFORE_ACCT) - 1),
	       100.0 * (BRATIO(B_AFTER_ROOT, B_BEFORE_ROOT) - 1));
	printf("  the kernel's table (the patch's, us): before 73650 / 30662, after 66950 / "
	       "20757\n");
	printf("  accounted / unaccounted: before %.2f, after %.2f (kernel: "
	       "73650/30662 = 2.40); root task / no accounting hooks at all (%.0f us): "
	       "before %.3f, after %.3f\n",
	       BRATIO(B_BEFORE_ACCT, B_BEFORE_ROOT), BRATIO(B_AFTER_ACCT, B_AFTER_ROOT),
	       bmed[B_NOHOOKS] / 1e3, BRATIO(B_BEFORE_ROOT, B_NOHOOKS),
	       BRATIO(B_AFTER_ROOT, B_NOHOOKS));
	printf("  every row: build, us for allocations + frees (median; min..max), of which "
	       "allocations / frees, instructions per allocation + free\n");
	for (int c = 0; c < NR_BCELLS; c++) {
		double lo, hi;

		min_max(bt[c], breps, &lo, &hi);
		printf("    %-28s %-8s %7.0f (%.0f..%.0f) %7.0f / %-7.0f", bcells[c].label,
		       variant_names[bcells[c].variant], bmed[c] / 1e3, lo / 1e3, hi / 1e3,
		       bamed[c] / 1e3, bfmed[c] / 1e3);
		if (!instr_skip)
			printf(" %7.1f", bin[c]);
		printf("\n");
	}
	printf("  (the three GFP_KERNEL rows call no hook and run the same alloc/ code, "
	       "the same instructions: their spread in time is what code and data "
	       "placement alone do to a comparison across builds)\n");
	if (!instr_skip) {
		printf("  instructions per allocation + free (callgrind, %lu allocations "
		       "after a warm-up run; the empty loops' %.1f subtracted)\n",
		       opt.instr_bulk, bin[B_EMPTY]);
		printf("  %-8s %12s %12s\n", "", "Accounted", "Unaccounted");
		printf("  %-8s %12.1f %12.1f\n", "before", bin[B_BEFORE_ACCT], bin[B_BEFORE_ROOT]);
		printf("  %-8s %12.1f %12.1f\n", "after", bin[B_AFTER_ACCT], bin[B_AFTER_ROOT]);
		printf("  %-8s %+12.1f %+12.1f   (%+.1f%%, %+.1f%%)\n", "delta",
		       bin[B_AFTER_ACCT] - bin[B_BEFORE_ACCT], bin[B_AFTER_ROOT] - bin[B_BEFORE_ROOT],
		       100.0 * (bin[B_AFTER_ACCT] / bin[B_BEFORE_ACCT] - 1),
		       100.0 * (bin[B_AFTER_ROOT] / bin[B_BEFORE_ROOT] - 1));
		printf("  accounted / unaccounted after: %.2f; root task / no accounting hooks "
		       "at all after: %.3f\n", bin[B_AFTER_ACCT] / bin[B_AFTER_ROOT],
		       bin[B_AFTER_ROOT] / bin[B_NOHOOKS]);
		if (bin[B_BEFORE_ACCT] - bin[B_AFTER_ACCT] < 1.0)
			printf("  NOTE: the lookup build runs no more instructions than the "
			       "default: did -DMEMCG_OBJCG_LOOKUP_MEMCG reach memcg/?\n");
	}
	printf("\n");

	for (int v = 0; v < NR_VARIANTS; v++)
		if (strcmp(stop_msg[v], "clean"))
			printf("WARNING: %s build, at its end: %s\n", variant_names[v], stop_msg[v]);
	printf("run time %.1f s (timings %.1f s, callgrind %.1f s)\n",
	       (bench_now_ns() - t_start) / 1e9, (t_timed - t_start) / 1e9, (bench_now_ns() - t_timed) / 1e9);
	printf("timings: %lu loops timed, %lu re-runs of loops from which other tasks "
	       "took more than %.1f%% of the wall time; %lu still above after %d attempts "
	       "(worst kept: %.1f%%); %ld involuntary context switches; load average %s "
	       "before, %s after\n", nr_timed, nr_rerun, STOLEN_MAX * 100, nr_disturbed,
	       MAX_ATTEMPTS, worst_stolen * 100, nivcsw, load0, load1);
	if (worst_stolen > 0.02)
		printf("NOTE: other tasks kept taking CPU %d during the timings (up to "
		       "%.0f%% of a loop's wall time): the times above are suspect, run "
		       "again on a quiet machine\n", cpu, worst_stolen * 100);
	printf("\n");

	/* ---- targets ---- */
	target("acct_time_64", PRATIO(0, P_COMB, P_UNACCT), "<=", 1.25, "1.25");
	target("acct_instr_64", instr_skip ? NAN : pin[0][P_COMB] / pin[0][P_UNACCT],
	       "<=", 2.0, "2.0");
	target("acct_time_2312", PRATIO(1, P_COMB, P_UNACCT), "<=", 1.25, "1.25");
	target("acct_time_4096", PRATIO(2, P_COMB, P_UNACCT), "<=", 1.25, "1.25");
	/* reported (docs/design.md): with rseq sections structurally under 0.5 (README) */
	printf("target seed002_cut measured=%.2f goal=reported ok\n",
	       round_cut(pt[0][P_SEP], pt[0][P_COMB], pt[0][P_UNACCT], reps));
	target("seed003_root_cut", 1 - BRATIO(B_AFTER_ROOT, B_BEFORE_ROOT), ">=", 0.25, "0.25");
	target("seed003_acct_cut", 1 - BRATIO(B_AFTER_ACCT, B_BEFORE_ACCT), ">=", 0.07, "0.07");
	target("seed003_root_cut_instr", instr_skip ? NAN : 1 - bin[B_AFTER_ROOT] / bin[B_BEFORE_ROOT],
	       ">=", 0.25, "0.25");
	target("seed003_acct_cut_instr", instr_skip ? NAN : 1 - bin[B_AFTER_ACCT] / bin[B_BEFORE_ACCT],
	       ">=", 0.07, "0.07");
	target("root_vs_nohooks", BRATIO(B_AFTER_ROOT, B_NOHOOKS), "<=", 1.05, "1.05");
	target("acct_vs_root_8", BRATIO(B_AFTER_ACCT, B_AFTER_ROOT), "<=", 1.5, "1.5");
	return 0;
}
#endif /* BENCH_MAIN */

int main(int argc, char **argv)
{
	bench_name("bench_memcg[" BENCH_VARIANT "]");
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc == 3 && !strcmp(argv[1], "--serve"))
		return serve((int)strtol(argv[2], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "--instr"))
		return instr_child(parse_mode(argv[2]), false, bench_parse_ul(argv[3], "size"),
				   bench_parse_ul(argv[4], "iterations"));
	if (argc == 4 && !strcmp(argv[1], "--instr-bulk"))
		return instr_child(parse_mode(argv[2]), true, 8, bench_parse_ul(argv[3], "count"));
#ifdef BENCH_MAIN
	return bench_main(argc, argv);
#else
	bench_die("the %s build of bench_memcg: run bench_memcg, which drives it", BENCH_VARIANT);
#endif
}
