/* SPDX-License-Identifier: MIT */
/*
 * bench_alloc - memcgfs's slab allocator beside glibc, jemalloc and mimalloc,
 * measured side by side in one process and one run.
 *
 *   kfree(kmalloc(n, GFP_KERNEL)) for n = 8, 64, 256, 2312, 4096: ns per
 *       pair and instructions per pair (valgrind --tool=callgrind on this
 *       same program, --instr mode);
 *   bulk: 1M 8-byte allocations, then all their frees (in allocation order),
 *       the two phases also timed apart;
 *   bytes_alloc of kmalloc(2312) and of a dedicated SLAB_HWCACHE_ALIGN cache
 *       of 2312-byte objects.
 *
 * The other allocators live in the same process without replacing glibc's
 * malloc, which stays the process default: Debian's libjemalloc.so.2 and
 * libmimalloc.so.2 both export unprefixed malloc/free (linking either would
 * interpose glibc's malloc for the whole process), so both are dlopen()ed
 * RTLD_LOCAL|RTLD_DEEPBIND and their functions are taken from their handles;
 * each is then checked with dladdr() (and jemalloc's mallctl("version"),
 * mimalloc's mi_version()).  jemalloc's initial-exec TLS needs a bigger
 * static TLS surplus than ld.so reserves by default: the program re-executes
 * itself once with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384.
 *
 * Instructions: "<self> --instr MODE SIZE ITER" (or --instr-bulk MODE COUNT)
 * runs one loop between two CALLGRIND_TOGGLE_COLLECT requests after a
 * warm-up; the parent runs it under
 *   valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no
 * and reads the "totals:" line of the out file.  Callgrind does not replace
 * malloc (memcheck would), so glibc's own malloc is counted; the child
 * reports which library each function resolved to.  The empty loop (the same
 * loop with the allocator calls removed) is measured the same way and
 * subtracted from every figure.  Valgrind does not implement rseq: under
 * callgrind memcgfs runs its rseq fast path emulated (machine.rseq_emulate:
 * the same instructions, on CPU 0, never aborted); its per-CPU lock path is
 * counted too, for information.
 *
 * Timing.  The process is pinned to one CPU.  Times are the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), not the wall clock.  A run is R rounds; a round
 * times every allocator at every size once, a short sample each (200000
 * pairs, about a millisecond), sizes and allocators in an order rotated
 * from round to round, so that a row is not always the first after a
 * phase change and each ratio compares samples taken a few milliseconds
 * apart.  A time is the median over the rounds; a ratio is the median over
 * the rounds of that round's ratio.  The machine is shared: other work
 * stretches whole samples, and a median of many short paired samples
 * discards them where the median of five long ones could not.  Bulk runs
 * its own rounds, one bulk per allocator each.
 *
 * Ends with one "target NAME measured=V goal=OPV ok|MISS" line per target of
 * docs/design.md it measures.  A missed target is information: the exit status is
 * nonzero only on an internal error.
 *
 * Options (for development; the benchmark runs with none):
 *   --iters N        pair-loop iterations per sample (200000)
 *   --bulk N         bulk allocations (1000000)
 *   --reps R         rounds (101; bulk: R / 5 + 1)
 *   --instr-iters N  callgrind loop iterations (100000)
 *   --no-instr       skip the callgrind measurements
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "harness.h"

extern char **environ;

/* ---- the allocators ---- */

enum {
	A_MEMCGFS, A_GLIBC, A_JEMALLOC, A_MIMALLOC, NR_ALLOCS,
	A_EMPTY = NR_ALLOCS,	/* the loop without the allocator calls */
	NR_MODES
};
static const char *const mode_names[NR_MODES] = {
	"memcgfs", "glibc", "jemalloc", "mimalloc", "empty"
};

static void *(*je_malloc)(size_t);
static void (*je_free)(void *);
static void *(*mi_malloc_fn)(size_t);
static void (*mi_free_fn)(void *);
static char je_version[128] = "?";
static int mi_version_nr = -1;
static char lib_of[NR_ALLOCS][PATH_MAX];	/* where malloc resolved */

/* The compiler must believe p is used and memory changed: no elision. */
#define SINK(p)	__asm__ __volatile__("" : : "r"(p) : "memory")

static const size_t sizes[] = { 8, 64, 256, 2312, 4096 };
#define MAX_REPS 1001
#define NR_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static const char *lib_name(const void *fn, char *buf, size_t len)
{
	Dl_info info;

	if (!dladdr(fn, &info) || !info.dli_fname)
		snprintf(buf, len, "(unknown object)");
	else
		snprintf(buf, len, "%s", info.dli_fname);
	return buf;
}

static void *open_lib(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);

	if (!h)
		bench_die("dlopen(%s): %s", soname, dlerror());
	return h;
}

static void *sym(void *h, const char *soname, const char *name)
{
	void *p;

	dlerror();
	p = dlsym(h, name);
	if (!p)
		bench_die("dlsym(%s, %s): %s", soname, name, dlerror());
	return p;
}

/* Resolve jemalloc and mimalloc from their own objects, and check it. */
static void setup_foreign(bool want_je, bool want_mi)
{
	char buf[PATH_MAX];
	void *(*glibc_malloc)(size_t) = malloc;

	lib_name((void *)glibc_malloc, lib_of[A_GLIBC], sizeof(lib_of[A_GLIBC]));
	if (!strstr(lib_of[A_GLIBC], "libc.so"))
		bench_die("malloc resolves to %s, not glibc's libc.so", lib_of[A_GLIBC]);
	lib_name((void *)kmalloc, lib_of[A_MEMCGFS], sizeof(lib_of[A_MEMCGFS]));

	if (want_je) {
		const char *so = "libjemalloc.so.2";
		void *h = open_lib(so);
		int (*mallctl)(const char *, void *, size_t *, void *, size_t);
		const char *v = NULL;
		size_t vlen = sizeof(v);

		*(void **)&je_malloc = sym(h, so, "malloc");
		*(void **)&je_free = sym(h, so, "free");
		*(void **)&mallctl = sym(h, so, "mallctl");
		if (mallctl("version", &v, &vlen, NULL, 0) != 0 || !v)
			bench_die("jemalloc: mallctl(\"version\") failed");
		snprintf(je_version, sizeof(je_version), "%s", v);
		lib_name((void *)je_malloc, lib_of[A_JEMALLOC], sizeof(lib_of[A_JEMALLOC]));
		if (!strstr(lib_of[A_JEMALLOC], "jemalloc") ||
		    !strstr(lib_name((void *)je_free, buf, sizeof(buf)), "jemalloc") ||
		    (void *)je_malloc == (void *)glibc_malloc)
			bench_die("jemalloc's malloc/free resolve to %s / %s", lib_of[A_JEMALLOC], buf);
	}
	if (want_mi) {
		const char *so = "libmimalloc.so.2";
		void *h = open_lib(so);
		int (*mi_version)(void);

		*(void **)&mi_malloc_fn = sym(h, so, "mi_malloc");
		*(void **)&mi_free_fn = sym(h, so, "mi_free");
		*(void **)&mi_version = sym(h, so, "mi_version");
		mi_version_nr = mi_version();
		lib_name((void *)mi_malloc_fn, lib_of[A_MIMALLOC], sizeof(lib_of[A_MIMALLOC]));
		if (!strstr(lib_of[A_MIMALLOC], "mimalloc") ||
		    !strstr(lib_name((void *)mi_free_fn, buf, sizeof(buf)), "mimalloc"))
			bench_die("mimalloc's mi_malloc/mi_free resolve to %s / %s", lib_of[A_MIMALLOC], buf);
	}
	/* Still glibc's after both were loaded? */
	lib_name((void *)glibc_malloc, buf, sizeof(buf));
	if (strcmp(buf, lib_of[A_GLIBC]))
		bench_die("malloc moved to %s after loading jemalloc/mimalloc", buf);
}

static void init_machine(bool no_rseq, bool rseq_emulate)
{
	struct alloc_config cfg;
	int err;

	alloc_config_defaults(&cfg);
	cfg.memory = 256ull << 20;
	cfg.no_rseq = no_rseq;
	cfg.rseq_emulate = rseq_emulate;
	err = alloc_init(&cfg);
	if (err)
		bench_die("alloc_init: %s", strerror(-err));
	if (trace_is_on())
		trace_set_on(false);
}

/*
 * ---- the loops: one per allocator ----
 * kmalloc/kfree are direct calls, glibc's malloc/free go through the PLT,
 * jemalloc's and mimalloc's through function pointers loaded once (am/af,
 * bm/bf), as a PLT call would.
 */
#define LOAD_FNS							\
	void *(*const am)(size_t) = je_malloc;				\
	void (*const af)(void *) = je_free;				\
	void *(*const bm)(size_t) = mi_malloc_fn;			\
	void (*const bf)(void *) = mi_free_fn;				\
	(void)am; (void)af; (void)bm; (void)bf

/* Every loop in the fast paths' page (ALLOC_HOT): its place does not move with the code before it. */
#define PAIR_LOOP(NAME, ALLOC, FREE)					\
static ALLOC_HOT("30" #NAME) void NAME(size_t n, unsigned long iters) \
{									\
	LOAD_FNS;							\
	for (unsigned long i = 0; i < iters; i++) {			\
		void *p = ALLOC;					\
		SINK(p);						\
		FREE;							\
	}								\
}

PAIR_LOOP(pairs_memcgfs, kmalloc(n, GFP_KERNEL), kfree(p))
PAIR_LOOP(pairs_glibc, malloc(n), free(p))
PAIR_LOOP(pairs_jemalloc, am(n), af(p))
PAIR_LOOP(pairs_mimalloc, bm(n), bf(p))
PAIR_LOOP(pairs_empty, (void *)(uintptr_t)(i + n), (void)0)
#undef PAIR_LOOP

static void run_pairs(int mode, size_t n, unsigned long iters)
{
	switch (mode) {
	case A_MEMCGFS: pairs_memcgfs(n, iters); break;
	case A_GLIBC: pairs_glibc(n, iters); break;
	case A_JEMALLOC: pairs_jemalloc(n, iters); break;
	case A_MIMALLOC: pairs_mimalloc(n, iters); break;
	default: pairs_empty(n, iters); break;
	}
}

/* Where the allocations end and the frees begin (thread CPU time). */
static double bulk_mid_ns;
static double cpu_ns(void);

#define BULK_LOOP(NAME, ALLOC, FREE)					\
static ALLOC_HOT("31" #NAME) void NAME(void **v, unsigned long count) \
{									\
	LOAD_FNS;							\
	for (unsigned long i = 0; i < count; i++) {			\
		void *p = ALLOC;					\
		SINK(p);						\
		v[i] = p;						\
	}								\
	bulk_mid_ns = cpu_ns();						\
	for (unsigned long i = 0; i < count; i++) {			\
		void *p = v[i];						\
		SINK(p);						\
		FREE;							\
	}								\
}

BULK_LOOP(bulk_memcgfs, kmalloc(8, GFP_KERNEL), kfree(p))
BULK_LOOP(bulk_glibc, malloc(8), free(p))
BULK_LOOP(bulk_jemalloc, am(8), af(p))
BULK_LOOP(bulk_mimalloc, bm(8), bf(p))
BULK_LOOP(bulk_empty, (void *)(uintptr_t)i, (void)0)
#undef BULK_LOOP

static void run_bulk(int mode, void **v, unsigned long count)
{
	switch (mode) {
	case A_MEMCGFS: bulk_memcgfs(v, count); break;
	case A_GLIBC: bulk_glibc(v, count); break;
	case A_JEMALLOC: bulk_jemalloc(v, count); break;
	case A_MIMALLOC: bulk_mimalloc(v, count); break;
	default: bulk_empty(v, count); break;
	}
}

/* ---- timing ---- */

/*
 * A sample's time: the CPU time of this thread, so that the time slices
 * the shared machine gives to other processes while a sample runs are not
 * counted in it (on 2 shared vCPUs they were, as whole milliseconds).
 */
static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int pin_cpu(void)
{
	cpu_set_t set;
	int cpu = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		bench_die("sched_getaffinity: %s", strerror(errno));
	/* The highest allowed CPU: CPU 0 tends to take more interrupts. */
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpu = c;
	if (cpu < 0)
		bench_die("no CPU in the affinity mask");
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity(%d): %s", cpu, strerror(errno));
	return cpu;
}

/* Check that every allocator returns usable memory of each size. */
static void sanity(void)
{
	for (size_t k = 0; k < NR_SIZES; k++) {
		size_t n = sizes[k];
		void *p[NR_ALLOCS] = {
			kmalloc(n, GFP_KERNEL), malloc(n), je_malloc(n), mi_malloc_fn(n)
		};

		for (int a = 0; a < NR_ALLOCS; a++) {
			if (!p[a])
				bench_die("%s: allocation of %zu bytes failed", mode_names[a], n);
			memset(p[a], 0x5a, n);
		}
		if (!alloc_in_arena(p[A_MEMCGFS]) || ksize(p[A_MEMCGFS]) < n)
			bench_die("kmalloc(%zu) returned %p (ksize %zu)", n, p[A_MEMCGFS],
			    ksize(p[A_MEMCGFS]));
		if (alloc_in_arena(p[A_GLIBC]) || alloc_in_arena(p[A_JEMALLOC]) ||
		    alloc_in_arena(p[A_MIMALLOC]))
			bench_die("a foreign allocator returned arena memory");
		kfree(p[A_MEMCGFS]);
		free(p[A_GLIBC]);
		je_free(p[A_JEMALLOC]);
		mi_free_fn(p[A_MIMALLOC]);
	}
}

/* ---- bytes_alloc ---- */

/* bytes_alloc= of the first trace event named ev with bytes_req=2312. */
static long trace_bytes_alloc(struct trace_cursor *cur, const char *ev)
{
	char line[1024], pat[64];
	int len;

	snprintf(pat, sizeof(pat), " %s: ", ev);
	while ((len = trace_read(cur, line, sizeof(line))) > 0) {
		const char *b;

		if (!strstr(line, pat) || !strstr(line, "bytes_req=2312"))
			continue;
		b = strstr(line, "bytes_alloc=");
		if (b)
			return strtol(b + strlen("bytes_alloc="), NULL, 10);
	}
	return -1;
}

static void measure_bytes_alloc(long *kmalloc_bytes, long *cache_bytes)
{
	struct kmem_cache_info info;
	struct trace_cursor cur, start;
	struct kmem_cache *s;
	long tr_k, tr_c;
	size_t ks;
	void *p, *q;
	int err = 0;

	s = kmem_cache_create_err("bench_alloc_2312", 2312, 0, SLAB_HWCACHE_ALIGN, &err);
	if (!s)
		bench_die("kmem_cache_create(bench_alloc_2312, 2312, SLAB_HWCACHE_ALIGN): %s",
		    strerror(-err));
	kmem_cache_info(s, &info);

	trace_set_on(true);
	trace_cursor_init(&start, true);
	cur = start;
	p = kmalloc(2312, GFP_KERNEL);
	q = kmem_cache_alloc(s, GFP_KERNEL);
	trace_set_on(false);
	if (!p || !q)
		bench_die("kmalloc(2312) / kmem_cache_alloc(2312) failed");
	ks = ksize(p);
	tr_k = trace_bytes_alloc(&cur, "kmalloc");
	cur = start;
	tr_c = trace_bytes_alloc(&cur, "kmem_cache_alloc");
	kfree(p);
	kmem_cache_free(s, q);
	if (kmem_cache_destroy(s))
		bench_die("kmem_cache_destroy(bench_alloc_2312) failed");

	printf("bytes_alloc of a 2312-byte object\n");
	printf("  kmalloc(2312, GFP_KERNEL): ksize %zu, trace bytes_alloc=%s%ld\n",
	       ks, tr_k < 0 ? "(no event) " : "", tr_k);
	printf("  kmem_cache \"bench_alloc_2312\" (2312, SLAB_HWCACHE_ALIGN): "
	       "size (stride) %u, align %u, order %u, %u objects/slab, "
	       "trace bytes_alloc=%s%ld\n",
	       info.size, info.align, info.order, info.objects,
	       tr_c < 0 ? "(no event) " : "", tr_c);
	if (tr_k >= 0 && (size_t)tr_k != ks)
		printf("  note: kmalloc's trace bytes_alloc differs from ksize\n");
	if (tr_c >= 0 && (unsigned int)tr_c != info.size)
		printf("  note: the cache's trace bytes_alloc differs from its stride\n");
	printf("\n");
	/* The trace is what bytes_alloc means; ksize/stride when it says nothing. */
	*kmalloc_bytes = tr_k >= 0 ? tr_k : (long)ks;
	*cache_bytes = tr_c >= 0 ? tr_c : (long)info.size;
}

/* ---- instructions: this program under callgrind ---- */

#define INSTR_NA (-1.0)

struct instr_run {
	double ir;		/* totals of the measured loop, or INSTR_NA */
	char info[512];		/* the child's report line */
};

static char self_path[PATH_MAX];
static char tmp_dir[PATH_MAX];

static bool read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok = false;

	if (!f)
		return false;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = 0;
		ok = true;
	}
	fclose(f);
	return ok;
}

/* Run "<self> ARGS..." under callgrind; return the collected Ir total. */
static bool callgrind(char *const args[], struct instr_run *r)
{
	char out[PATH_MAX + 32], log[PATH_MAX + 32], child_out[PATH_MAX + 32];
	char out_opt[PATH_MAX + 64], log_opt[PATH_MAX + 64];
	char *argv[32];
	char line[512];
	int argc = 0, st;
	pid_t pid;
	posix_spawn_file_actions_t fa;
	FILE *f;
	double totals = -1, summary = -1;

	snprintf(out, sizeof(out), "%s/callgrind.out", tmp_dir);
	snprintf(log, sizeof(log), "%s/valgrind.log", tmp_dir);
	snprintf(child_out, sizeof(child_out), "%s/child.out", tmp_dir);
	snprintf(out_opt, sizeof(out_opt), "--callgrind-out-file=%s", out);
	snprintf(log_opt, sizeof(log_opt), "--log-file=%s", log);
	unlink(out);
	argv[argc++] = "valgrind";
	argv[argc++] = "--tool=callgrind";
	argv[argc++] = "--instr-atstart=no";
	argv[argc++] = "--collect-atstart=no";
	argv[argc++] = out_opt;
	argv[argc++] = log_opt;
	argv[argc++] = self_path;
	for (int i = 0; args[i]; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, child_out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (posix_spawnp(&pid, "valgrind", &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return false;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_alloc: callgrind run failed:");
		for (int i = 0; args[i]; i++)
			fprintf(stderr, " %s", args[i]);
		fprintf(stderr, "\n");
		bench_show_file(log);
		return false;
	}
	if (!read_first_line(child_out, r->info, sizeof(r->info)))
		r->info[0] = 0;
	f = fopen(out, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "totals:", 7))
			totals = strtod(line + 7, NULL);
		else if (!strncmp(line, "summary:", 8))
			summary = strtod(line + 8, NULL);
	}
	fclose(f);
	unlink(out);
	unlink(log);
	unlink(child_out);
	r->ir = totals >= 0 ? totals : summary;
	return r->ir >= 0;
}

/*
 * The child: one loop between two toggles, after a warm-up.  Valgrind does
 * not implement rseq: memcgfs runs its rseq fast path emulated
 * (rseq_emulate: always CPU 0, never preempted: same instructions), or with
 * lock_path its per-CPU lock path.
 */
static int instr_child(int mode, bool lock_path, bool bulk, size_t n,
		       unsigned long iters)
{
	void **v = NULL;
	char buf[PATH_MAX];

	setup_foreign(mode == A_JEMALLOC, mode == A_MIMALLOC);
	init_machine(lock_path, !lock_path);
	if (bulk) {
		v = malloc(iters * sizeof(*v));
		if (!v)
			bench_die("out of memory");
	}
	CALLGRIND_START_INSTRUMENTATION;
	if (bulk)
		run_bulk(mode, v, iters);
	else
		run_pairs(mode, n, iters / 10 + 1000);
	CALLGRIND_TOGGLE_COLLECT;
	if (bulk)
		run_bulk(mode, v, iters);
	else
		run_pairs(mode, n, iters);
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_STOP_INSTRUMENTATION;
	free(v);
	if (mode == A_MEMCGFS)
		printf("%s%s fn=%s rseq=%d\n", mode_names[mode], lock_path ? "-lock" : "",
		       lib_name((void *)kmalloc, buf, sizeof(buf)), (int)alloc_uses_rseq());
	else
		printf("%s fn=%s\n", mode_names[mode], mode == A_EMPTY ? "-" : lib_of[mode]);
	alloc_exit();
	return 0;
}

/* ---- the parent ---- */

static struct bench_loop_opts opt = {
	.iters = 200000, .bulk = 1000000, .instr_iters = 100000, .reps = 101,
};

static int parse_mode(const char *s, bool *lock_path)
{
	*lock_path = !strcmp(s, "memcgfs-lock");
	if (*lock_path)
		return A_MEMCGFS;
	for (int m = 0; m < NR_MODES; m++)
		if (!strcmp(s, mode_names[m]))
			return m;
	bench_die("unknown mode %s (memcgfs, memcgfs-lock, glibc, jemalloc, mimalloc, empty)", s);
}

static const char *fmt_ratio(char *buf, size_t len, double r)
{
	snprintf(buf, len, "%.2f", r);
	return buf;
}

/*
 * Debian's libjemalloc uses initial-exec TLS (2.6 KiB), more than the
 * static TLS surplus ld.so keeps for dlopen() by default: re-execute with a
 * larger one.  The callgrind children inherit the environment.
 *
 * The same re-execution turns address space randomization off for this
 * process (personality ADDR_NO_RANDOMIZE, as setarch -R): the stack, the
 * heap and the libraries then sit at the same addresses in every run, so
 * that two runs of one build compare the same memory layout (with ASLR the
 * stack moves in 16-byte steps and the distance between a hot stack slot
 * and a hot object changes from run to run).
 */
#define TLS_TUNABLE "glibc.rtld.optional_static_tls=16384"

static bool layout_fixed(void)
{
	int pers = personality(0xffffffff);

	return pers != -1 && (pers & ADDR_NO_RANDOMIZE);
}

static void ensure_static_tls(char **argv)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char *val, self[PATH_MAX];
	ssize_t len;
	int pers = personality(0xffffffff);
	bool relayout = false;

	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
	    !getenv("BENCH_ALLOC_ASLR_TRIED")) {
		/* once: where personality() is refused, run as we are */
		setenv("BENCH_ALLOC_ASLR_TRIED", "1", 1);
		relayout = personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1;
	}
	if (old && strstr(old, TLS_TUNABLE) && !relayout)
		return;
	if (old && strstr(old, TLS_TUNABLE)) {
		val = (char *)old;
	} else if (old && *old) {
		val = malloc(strlen(old) + sizeof(TLS_TUNABLE) + 1);
		if (!val)
			bench_die("out of memory");
		sprintf(val, "%s:%s", old, TLS_TUNABLE);
	} else {
		val = TLS_TUNABLE;
	}
	if (setenv("GLIBC_TUNABLES", val, 1))
		bench_die("setenv: %s", strerror(errno));
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		bench_die("readlink(/proc/self/exe): %s", strerror(errno));
	self[len] = 0;
	execv(self, argv);
	bench_die("execv(%s): %s", self, strerror(errno));
}

int main(int argc, char **argv)
{
	static double pair_ns[NR_SIZES][NR_MODES][MAX_REPS];
	double pair_med[NR_SIZES][NR_MODES];
	double ratio_je[NR_SIZES], ratio_mi[NR_SIZES], ratio_q[NR_SIZES][2];
	double bulk_ns[NR_MODES][MAX_REPS], bulk_med[NR_MODES], bulk_ratio_mi, bulk_ratio_je;
	double bulk_phase[2][NR_MODES][MAX_REPS], bulk_phase_med[2][NR_MODES];
	double lock_med[NR_SIZES];
	double instr[NR_SIZES][NR_MODES], bulk_instr[NR_MODES];
	double instr_empty = INSTR_NA, bulk_instr_empty = INSTR_NA;
	char instr_memcgfs_info[512] = "", instr_glibc_info[512] = "";
	const char *instr_skip = NULL;
	long kmalloc_bytes, cache_bytes;
	bool had_rseq, lock_done = false, lock_path;
	double instr_lock[NR_SIZES];
	void **v;
	int cpu, reps, bulk_reps;
	double t0 = bench_now_ns();

	bench_name("bench_alloc");
	setvbuf(stdout, NULL, _IOLBF, 0);
	ensure_static_tls(argv);

	/* The callgrind child. */
	if (argc == 5 && !strcmp(argv[1], "--instr")) {
		int mode = parse_mode(argv[2], &lock_path);

		return instr_child(mode, lock_path, false, bench_parse_ul(argv[3], "size"),
				   bench_parse_ul(argv[4], "iterations"));
	}
	if (argc == 4 && !strcmp(argv[1], "--instr-bulk")) {
		int mode = parse_mode(argv[2], &lock_path);

		return instr_child(mode, lock_path, true, 8, bench_parse_ul(argv[3], "count"));
	}

	bench_parse_loop_opts(argc, argv, &opt, false,
			      "usage: bench_alloc [--iters N] [--bulk N] [--reps R] "
			      "[--instr-iters N] [--no-instr]");
	if (opt.reps > MAX_REPS)
		opt.reps = MAX_REPS;
	reps = opt.reps;
	bulk_reps = reps / 5 + 1;

	setup_foreign(true, true);
	init_machine(false, false);
	had_rseq = alloc_uses_rseq();
	cpu = pin_cpu();
	sanity();

	printf("bench_alloc: memcgfs slab allocator vs glibc, jemalloc, mimalloc (one process, one run)\n");
	printf("  machine: 256 MiB arena, page %u, %u CPU slots, fast path %s\n",
	       alloc_page_size(), alloc_nr_cpus(),
	       had_rseq ? "rseq" : "per-CPU lock (no rseq)");
	printf("  address space layout: %s\n", layout_fixed() ?
	       "fixed (ADDR_NO_RANDOMIZE: the same addresses in every run)" :
	       "randomized (personality(ADDR_NO_RANDOMIZE) refused)");
	printf("  glibc malloc: %s\n", lib_of[A_GLIBC]);
	printf("  jemalloc %s: %s (dlopen RTLD_LOCAL|RTLD_DEEPBIND)\n", je_version, lib_of[A_JEMALLOC]);
	printf("  mimalloc %d.%d.%d: %s (dlopen RTLD_LOCAL|RTLD_DEEPBIND, mi_malloc/mi_free)\n",
	       mi_version_nr / 100, mi_version_nr / 10 % 10, mi_version_nr % 10,
	       lib_of[A_MIMALLOC]);
	printf("  pinned to CPU %d; %d rounds of one sample per size and allocator "
	       "(rotating order); medians over the rounds\n\n", cpu, reps);

	measure_bytes_alloc(&kmalloc_bytes, &cache_bytes);

	/* kfree(kmalloc(n)) and its peers: rounds of every size and allocator. */
	for (size_t k = 0; k < NR_SIZES; k++)
		for (int m = 0; m < NR_MODES; m++)
			run_pairs(m, sizes[k], opt.iters);	/* warm-up */
	for (int r = 0; r < reps; r++)
		for (size_t kk = 0; kk < NR_SIZES; kk++) {
			size_t k = (kk + (size_t)r) % NR_SIZES;

			for (int j = 0; j < NR_MODES; j++) {
				int m = (j + r) % NR_MODES;
				double t = cpu_ns();

				run_pairs(m, sizes[k], opt.iters);
				pair_ns[k][m][r] = (cpu_ns() - t) / (double)opt.iters;
			}
		}
	for (size_t k = 0; k < NR_SIZES; k++) {
		double rj[MAX_REPS], rm[MAX_REPS];

		for (int m = 0; m < NR_MODES; m++)
			pair_med[k][m] = bench_median(pair_ns[k][m], reps);
		for (int r = 0; r < reps; r++) {
			rj[r] = pair_ns[k][A_MEMCGFS][r] / pair_ns[k][A_JEMALLOC][r];
			rm[r] = pair_ns[k][A_MEMCGFS][r] / pair_ns[k][A_MIMALLOC][r];
		}
		ratio_je[k] = bench_median(rj, reps);
		ratio_mi[k] = bench_median(rm, reps);
		qsort(rj, (size_t)reps, sizeof(double), bench_cmp_double);
		ratio_q[k][0] = rj[reps / 4];
		ratio_q[k][1] = rj[reps - 1 - reps / 4];
	}

	/* Bulk: count 8-byte allocations, then all their frees. */
	v = malloc(opt.bulk * sizeof(*v));
	if (!v)
		bench_die("out of memory for %lu pointers", opt.bulk);
	for (int m = 0; m < NR_MODES; m++)
		run_bulk(m, v, opt.bulk);	/* warm-up: fault the memory in */
	for (int r = 0; r < bulk_reps; r++)
		for (int j = 0; j < NR_MODES; j++) {
			int m = (j + r) % NR_MODES;
			double t = cpu_ns();

			double t2;

			run_bulk(m, v, opt.bulk);
			t2 = cpu_ns();
			bulk_ns[m][r] = (t2 - t) / (double)opt.bulk;
			bulk_phase[0][m][r] = (bulk_mid_ns - t) / (double)opt.bulk;
			bulk_phase[1][m][r] = (t2 - bulk_mid_ns) / (double)opt.bulk;
		}
	{
		double rm[MAX_REPS], rj[MAX_REPS];

		for (int m = 0; m < NR_MODES; m++) {
			bulk_med[m] = bench_median(bulk_ns[m], bulk_reps);
			bulk_phase_med[0][m] = bench_median(bulk_phase[0][m], bulk_reps);
			bulk_phase_med[1][m] = bench_median(bulk_phase[1][m], bulk_reps);
		}
		for (int r = 0; r < bulk_reps; r++) {
			rm[r] = bulk_ns[A_MEMCGFS][r] / bulk_ns[A_MIMALLOC][r];
			rj[r] = bulk_ns[A_MEMCGFS][r] / bulk_ns[A_JEMALLOC][r];
		}
		bulk_ratio_mi = bench_median(rm, bulk_reps);
		bulk_ratio_je = bench_median(rj, bulk_reps);
	}

	/* The lock path (what callgrind sees), for information. */
	if (had_rseq) {
		alloc_exit();
		init_machine(true, false);
		if (!alloc_uses_rseq()) {
			for (size_t k = 0; k < NR_SIZES; k++) {
				double t[MAX_REPS];

				run_pairs(A_MEMCGFS, sizes[k], opt.iters);
				for (int r = 0; r < reps; r++) {
					double s = cpu_ns();

					run_pairs(A_MEMCGFS, sizes[k], opt.iters);
					t[r] = (cpu_ns() - s) / (double)opt.iters;
				}
				lock_med[k] = bench_median(t, reps);
			}
			lock_done = true;
		}
	}
	alloc_exit();

	/* Instructions. */
	for (size_t k = 0; k < NR_SIZES; k++)
		for (int m = 0; m < NR_MODES; m++)
			instr[k][m] = INSTR_NA;
	for (int m = 0; m < NR_MODES; m++)
		bulk_instr[m] = INSTR_NA;
	instr_skip = bench_instr_skip(opt.no_instr, HAVE_CALLGRIND);
	if (!instr_skip) {
		ssize_t len = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
		const char *tmp = getenv("TMPDIR");

		if (len <= 0)
			bench_die("readlink(/proc/self/exe): %s", strerror(errno));
		self_path[len] = 0;
		snprintf(tmp_dir, sizeof(tmp_dir), "%s/bench_alloc.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmp_dir))
			bench_die("mkdtemp(%s): %s", tmp_dir, strerror(errno));
		for (int m = NR_MODES - 1; m >= 0; m--) {	/* empty first */
			char iters[32], cnt[32], size[32];
			struct instr_run run;

			snprintf(iters, sizeof(iters), "%lu", opt.instr_iters);
			snprintf(cnt, sizeof(cnt), "%lu", opt.instr_iters * 10);
			for (size_t k = 0; k < NR_SIZES; k++) {
				char *args[] = { "--instr", (char *)mode_names[m], size, iters, NULL };

				snprintf(size, sizeof(size), "%zu", sizes[k]);
				if (!callgrind(args, &run))
					bench_die("callgrind measurement of %s %zu failed", mode_names[m], sizes[k]);
				instr[k][m] = run.ir / (double)opt.instr_iters;
				if (m == A_MEMCGFS)
					snprintf(instr_memcgfs_info, sizeof(instr_memcgfs_info), "%s", run.info);
				if (m == A_GLIBC)
					snprintf(instr_glibc_info, sizeof(instr_glibc_info), "%s", run.info);
				if (m == A_EMPTY)
					break;	/* the size does not matter */
			}
			if (m == A_EMPTY) {
				instr_empty = instr[0][A_EMPTY];
				for (size_t k = 1; k < NR_SIZES; k++)
					instr[k][A_EMPTY] = instr_empty;
			}
			{
				char *args[] = { "--instr-bulk", (char *)mode_names[m], cnt, NULL };

				if (!callgrind(args, &run))
					bench_die("callgrind bulk measurement of %s failed", mode_names[m]);
				bulk_instr[m] = run.ir / (double)(opt.instr_iters * 10);
				if (m == A_EMPTY)
					bulk_instr_empty = bulk_instr[m];
			}
		}
		for (size_t k = 0; k < NR_SIZES; k++) {
			char iters[32], size[32];
			char *args[] = { "--instr", "memcgfs-lock", size, iters, NULL };
			struct instr_run run;

			snprintf(iters, sizeof(iters), "%lu", opt.instr_iters);
			snprintf(size, sizeof(size), "%zu", sizes[k]);
			if (!callgrind(args, &run))
				bench_die("callgrind measurement of memcgfs-lock %zu failed", sizes[k]);
			instr_lock[k] = run.ir / (double)opt.instr_iters - instr_empty;
		}
		rmdir(tmp_dir);
	}

	/* ---- tables ---- */
	printf("kfree(kmalloc(n, GFP_KERNEL)) (unaccounted) vs free(malloc(n)), "
	       "samples of %lu pairs, ns/pair and ratios (medians over %d rounds), "
	       "pinned to CPU %d\n", opt.iters, reps, cpu);
	printf("  %6s %9s %9s %9s %9s %18s %17s\n", "size", "memcgfs", "glibc",
	       "jemalloc", "mimalloc", "memcgfs/jemalloc", "memcgfs/mimalloc");
	for (size_t k = 0; k < NR_SIZES; k++)
		printf("  %6zu %9.2f %9.2f %9.2f %9.2f %18.2f %17.2f\n", sizes[k],
		       pair_med[k][A_MEMCGFS], pair_med[k][A_GLIBC],
		       pair_med[k][A_JEMALLOC], pair_med[k][A_MIMALLOC],
		       ratio_je[k], ratio_mi[k]);
	printf("  (the empty loop: %.2f ns/iteration, included in every figure)\n",
	       pair_med[0][A_EMPTY]);
	printf("  memcgfs/jemalloc, quartiles of the rounds' ratios:");
	for (size_t k = 0; k < NR_SIZES; k++)
		printf(" %zu: %.2f..%.2f;", sizes[k], ratio_q[k][0], ratio_q[k][1]);
	printf("\n  memcgfs/jemalloc of each one's fastest sample (the least disturbed):");
	for (size_t k = 0; k < NR_SIZES; k++) {
		double a = pair_ns[k][A_MEMCGFS][0], b = pair_ns[k][A_JEMALLOC][0];

		for (int r = 1; r < reps; r++) {
			if (pair_ns[k][A_MEMCGFS][r] < a)
				a = pair_ns[k][A_MEMCGFS][r];
			if (pair_ns[k][A_JEMALLOC][r] < b)
				b = pair_ns[k][A_JEMALLOC][r];
		}
		printf(" %zu: %.2f (%.2f / %.2f ns);", sizes[k], a / b, a, b);
	}
	printf("\n");
	if (lock_done) {
		printf("  memcgfs per-CPU lock path (machine.no_rseq), for information, "
		       "not interleaved:");
		for (size_t k = 0; k < NR_SIZES; k++)
			printf(" %zu: %.2f;", sizes[k], lock_med[k]);
		printf(" ns/pair\n");
	}
	printf("\n");

	if (instr_skip) {
		printf("instructions: %s\n\n", instr_skip);
	} else {
		printf("instructions per pair (callgrind, %lu iterations after a warm-up; "
		       "the empty loop's %.1f per iteration subtracted: add it back to "
		       "compare with counts of the whole loop)\n",
		       opt.instr_iters, instr_empty);
		printf("  %6s %9s %9s %9s %9s %18s\n", "size", "memcgfs", "glibc",
		       "jemalloc", "mimalloc", "memcgfs/jemalloc");
		for (size_t k = 0; k < NR_SIZES; k++) {
			double net[NR_ALLOCS];

			for (int m = 0; m < NR_ALLOCS; m++)
				net[m] = instr[k][m] - instr_empty;
			printf("  %6zu %9.1f %9.1f %9.1f %9.1f %18.2f\n", sizes[k],
			       net[A_MEMCGFS], net[A_GLIBC], net[A_JEMALLOC],
			       net[A_MIMALLOC], net[A_MEMCGFS] / net[A_JEMALLOC]);
		}
		printf("  memcgfs per-CPU lock path (machine.no_rseq), for information:");
		for (size_t k = 0; k < NR_SIZES; k++)
			printf(" %zu: %.1f;", sizes[k], instr_lock[k]);
		printf("\n");
		printf("  under callgrind: %s\n", instr_memcgfs_info);
		printf("                   %s\n", instr_glibc_info);
		if (strstr(instr_memcgfs_info, "rseq=1"))
			printf("  (valgrind has no rseq: memcgfs's rseq fast path ran emulated, "
			       "machine.rseq_emulate, the same instructions)\n");
		else if (had_rseq)
			printf("  note: memcgfs's counts are of its per-CPU lock path "
			       "(rseq_emulate unavailable); the timings above ran rseq\n");
		printf("\n");
	}

	printf("bulk: %lu x 8-byte allocations, then all their frees (allocation "
	       "order), ns/pair and ratios (medians over %d rounds)\n", opt.bulk, bulk_reps);
	printf("  %9s %9s %9s %9s %18s %17s\n", "memcgfs", "glibc", "jemalloc",
	       "mimalloc", "memcgfs/mimalloc", "memcgfs/jemalloc");
	printf("  %9.2f %9.2f %9.2f %9.2f %18.2f %17.2f\n", bulk_med[A_MEMCGFS],
	       bulk_med[A_GLIBC], bulk_med[A_JEMALLOC], bulk_med[A_MIMALLOC],
	       bulk_ratio_mi, bulk_ratio_je);
	printf("  (the empty loops: %.2f ns/pair, included)\n", bulk_med[A_EMPTY]);
	printf("  the two phases, ns per allocation / per free (medians): memcgfs %.2f / %.2f, "
	       "glibc %.2f / %.2f, jemalloc %.2f / %.2f, mimalloc %.2f / %.2f\n",
	       bulk_phase_med[0][A_MEMCGFS], bulk_phase_med[1][A_MEMCGFS],
	       bulk_phase_med[0][A_GLIBC], bulk_phase_med[1][A_GLIBC],
	       bulk_phase_med[0][A_JEMALLOC], bulk_phase_med[1][A_JEMALLOC],
	       bulk_phase_med[0][A_MIMALLOC], bulk_phase_med[1][A_MIMALLOC]);
	if (!instr_skip)
		printf("  instructions per pair (callgrind, %lu allocations, the empty "
		       "loops' %.1f subtracted): memcgfs %.1f, glibc %.1f, jemalloc %.1f, "
		       "mimalloc %.1f\n", opt.instr_iters * 10, bulk_instr_empty,
		       bulk_instr[A_MEMCGFS] - bulk_instr_empty,
		       bulk_instr[A_GLIBC] - bulk_instr_empty,
		       bulk_instr[A_JEMALLOC] - bulk_instr_empty,
		       bulk_instr[A_MIMALLOC] - bulk_instr_empty);
	printf("\n");
	printf("run time %.1f s\n\n", (bench_now_ns() - t0) / 1e9);

	/* ---- targets ---- */
	{
		char buf[64];
		double worst = 0, worst_instr = 0, bulk_ratio;

		for (size_t k = 0; k < NR_SIZES; k++) {
			double r = ratio_je[k];
			double in = instr[k][A_MEMCGFS] - instr_empty;

			if (r > worst)
				worst = r;
			if (in > worst_instr)
				worst_instr = in;
		}
		fmt_ratio(buf, sizeof(buf), worst);
		bench_target("kmalloc_vs_jemalloc", buf, "<=1.00", strtod(buf, NULL) <= 1.00);
		if (instr_skip) {
			bench_target("kmalloc_instr", "none", "<=80", false);
		} else {
			snprintf(buf, sizeof(buf), "%.1f", worst_instr);
			bench_target("kmalloc_instr", buf, "<=80", strtod(buf, NULL) <= 80);
		}
		bulk_ratio = bulk_ratio_mi;
		fmt_ratio(buf, sizeof(buf), bulk_ratio);
		bench_target("bulk_vs_mimalloc", buf, "<=1.00", strtod(buf, NULL) <= 1.00);
		/* Equality goals read "goal==4096" (OP "=", as agreed). */
		snprintf(buf, sizeof(buf), "%ld", kmalloc_bytes);
		bench_target("kmalloc_2312_bytes", buf, "=4096", kmalloc_bytes == 4096);
		snprintf(buf, sizeof(buf), "%ld", cache_bytes);
		bench_target("cache_2312_bytes", buf, "=2368", cache_bytes == 2368);
	}
	free(v);
	return 0;
}
