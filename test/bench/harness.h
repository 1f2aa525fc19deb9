/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what the benchmarks share: the internal-error exit, clocks,
 * medians, option parsing, valgrind's presence and the "target NAME
 * measured=V goal=OPV ok|MISS" line; for the mounting benchmarks, a
 * temporary directory, daemons started in the foreground as children
 * (pinned or free), their mounts waited for and always taken down (also
 * when the benchmark is interrupted).
 */
#ifndef MEMCGFS_BENCH_HARNESS_H
#define MEMCGFS_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <sys/types.h>

/*
 * Callgrind's client requests for the benchmarks that count instructions
 * (bench_alloc, bench_memcg): HAVE_CALLGRIND 0 and no-ops when the build
 * found no valgrind/callgrind.h.
 */
#if defined(HAVE_VALGRIND_CALLGRIND_H)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#else
#define HAVE_CALLGRIND 0
#define CALLGRIND_START_INSTRUMENTATION do { } while (0)
#define CALLGRIND_STOP_INSTRUMENTATION do { } while (0)
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)
#endif

#define BENCH_MAX_DAEMONS	16

struct bench_daemon {
	const char *name;
	char mnt[PATH_MAX];
	char log[PATH_MAX];
	pid_t pid;
	bool mounted;
};

/* The name bench_die() prints (bench_setup() sets it too). */
void bench_name(const char *prog);
/* Print, clean up and exit 2 (an internal error, not a MISS). */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A benchmark's own clean-up, which bench_die() runs after the harness's. */
void bench_at_die(void (*fn)(void));
/* snprintf for paths: a path that does not fit is bench_die(), not a truncation. */
void bench_pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Without root, /dev/fuse or fusermount3: say why, exit 77 (skip). */
void bench_require_fuse(const char *prog);
/*
 * bench_setup - a temporary directory for prog's mounts; cleanup at exit
 * and on SIGINT/SIGTERM/SIGHUP.
 */
void bench_setup(const char *prog);
/* A daemon slot: its mount point and log in the temporary directory. */
struct bench_daemon *bench_daemon_new(const char *name);
/*
 * Start argv (its last argument d->mnt) in the foreground, pinned to cpu
 * (-1: every CPU), and wait for its mount (15 s).
 */
void bench_daemon_start(struct bench_daemon *d, int cpu, const char *const *argv);
/*
 * The same for a daemon that may fail (a peer reported beside): when it
 * exits or does not mount, its log is shown and false returned (a pid
 * still running is left for the clean-up).
 */
bool bench_daemon_try_start(struct bench_daemon *d, int cpu, const char *const *argv);
/* fusermount3 -u, wait for the daemon, then stronger means. */
void bench_daemon_stop(struct bench_daemon *d);

/* CLOCK_MONOTONIC in seconds, and in nanoseconds */
double bench_now(void);
double bench_now_ns(void);
/* qsort()'s comparison of doubles, ascending */
int bench_cmp_double(const void *a, const void *b);
double bench_median(const double *v, int n);
/* The q-quantile (0..1, nearest rank) of v[0..n). */
double bench_quantile(const double *v, int n, double q);
/*
 * The median over n rounds of a[r] / b[r]: two rows timed in the same
 * rounds, so that a drift of the machine's speed cancels in each ratio.
 */
double bench_round_ratio(const double *a, const double *b, int n);
/* A decimal number > 0, else bench_die() naming what. */
unsigned long bench_parse_ul(const char *s, const char *what);
/*
 * The options of the loop benchmarks (bench_alloc, bench_memcg): --iters,
 * --bulk, --reps, --instr-iters, --instr-bulk (where instr_bulk is true)
 * take a decimal > 0, --no-instr is a flag; the defaults are the caller's.
 * Anything else is bench_die(usage).
 */
struct bench_loop_opts {
	unsigned long iters, bulk, instr_iters, instr_bulk;
	int reps;
	bool no_instr;
};
void bench_parse_loop_opts(int argc, char **argv, struct bench_loop_opts *o,
			   bool instr_bulk, const char *usage);
/* Whether "valgrind --version" runs. */
bool bench_have_valgrind(void);
/*
 * Why instructions are not counted (--no-instr, no callgrind.h at build
 * time, no valgrind), or NULL when they are.
 */
const char *bench_instr_skip(bool no_instr, bool have_callgrind_h);
/* A file's lines on stderr, each after "  | ". */
void bench_show_file(const char *path);
/* Whether mnt is a mount point of this mount namespace. */
bool bench_is_mounted(const char *mnt);
void bench_pin_self(int cpu);
void bench_write_file(const char *path, const char *text);
/* mkdir path 0755, else bench_die() */
void bench_mkdir(const char *path);
/* open + read to EOF + close (what cat does): bytes, or -1. */
long bench_cat(const char *path);
void bench_target(const char *name, const char *measured, const char *goal, bool ok);

#endif
