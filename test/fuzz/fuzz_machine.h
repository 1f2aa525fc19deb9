/* SPDX-License-Identifier: MIT */
/*
 * fuzz_machine.h - what the libFuzzer harnesses of test/fuzz/ share: a
 * small emulated machine (alloc + memcg) built once per process, the
 * invariant checks run after every input, and a control-protocol client
 * (four callers, handle and cache bookkeeping, cleanup back to the
 * starting state) for the two ctl harnesses.
 *
 * Every check failure is a finding: it prints what failed and abort()s,
 * which libFuzzer reports as a crash with the input saved.
 */
#ifndef MEMCGFS_FUZZ_MACHINE_H
#define MEMCGFS_FUZZ_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points (prototypes for -Wmissing-prototypes). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_MIB	(1024ul * 1024ul)

/* FUZZ_VERBOSE set: the harnesses print each request and its reply. */
extern bool fuzz_verbose;

/*
 * FUZZ_RECORD=DIR set: every input is also written to DIR/NNNNNNNN, so that a
 * finding that depends on earlier inputs (state the cleanup does not reset)
 * replays with `fuzz_X DIR/0*` (libFuzzer runs the files given in order, in
 * one process).
 */
void fuzz_record(const uint8_t *data, size_t size);

/* printf to stderr and abort(): a finding. */
void fuzz_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * fuzz_machine_init - alloc_init (memory bytes, cpus CPU slots), memcg_init,
 * OOM ops that know no real process.  Once per process.
 */
void fuzz_machine_init(unsigned long memory, unsigned int cpus);

/* memcg_drain, then memcg_check and alloc_check: abort on a violation. */
void fuzz_check(const char *when);

/*
 * The arena, after kmem_cache_shrink_all(): pages outside slabs (alloc_pages,
 * large kmalloc), free pages, and slabinfo to show what differs.
 */
struct fuzz_arena {
	unsigned long pages_alloc, pages_large, pages_free;
	char slabinfo[16384];
};
void fuzz_arena_take(struct fuzz_arena *a);
/*
 * abort() unless the pages outside slabs are as in a, and (check_free) the
 * free pages too; prints the slabinfo lines that differ.
 */
void fuzz_arena_same(const struct fuzz_arena *a, bool check_free, const char *when);

/* ---- the control protocol client (fuzz_ctl, fuzz_ioctl) ---- */
struct mem_cgroup;
struct ctl_caller;
struct ctl_session;

#define FUZZ_CALLERS	4	/* alice, bob (uid 1001), root (uid 0), carol in / */

struct fuzz_ctl {
	struct mem_cgroup *child;	/* /child, memory.max 4M */
	struct ctl_session *session;
	/* handles seen in replies during the current input */
	uint64_t *handles;
	unsigned int nr_handles, cap_handles;
	/* caches created during the current input */
	char (*caches)[64];
	unsigned int nr_caches, cap_caches;
	/*
	 * Also require the arena's free pages (caches shrunk) at their
	 * baseline.  Not by default: a slab made before kmem accounting was
	 * online (the root memcg's own objects) gets its obj_exts vector the
	 * first time an accounted object comes from it, and keeps it as long
	 * as it lives, as in the kernel; test/fault sets it after a warm-up
	 * run and fuzz_ctl_rebaseline().
	 */
	bool check_free_pages;
};
extern struct fuzz_ctl fuzz_ctl;

/*
 * fuzz_ctl_init - the machine (32 MiB, 2 CPUs), /child with memory.max 4M,
 * the callers' tasks, ctl_init and a session; records the baseline.
 */
void fuzz_ctl_init(void);
const struct ctl_caller *fuzz_caller(unsigned int i);

/* fuzz_ctl_rebaseline - the arena's figures now are the baseline */
void fuzz_ctl_rebaseline(void);

void fuzz_ctl_add_handle(uint64_t h);
void fuzz_ctl_add_cache(const char *name);
/* The i-th handle seen (any index, taken modulo the count); 0 when none. */
uint64_t fuzz_ctl_handle(unsigned int i);

/*
 * Snapshot of what a refused request must not change: the child's and
 * the root's page counters, live handles, alloc's page and cache counts
 * (after memcg_drain so that stocks do not blur it).
 */
struct fuzz_snap {
	unsigned long child_usage;
	unsigned long live;
	unsigned long pages_alloc, pages_large, nr_caches;
};
void fuzz_snap_take(struct fuzz_snap *s);
/* abort() if s differs from now; what names the request. */
void fuzz_snap_same(const struct fuzz_snap *s, const char *what, size_t what_len);

/*
 * fuzz_ctl_cleanup - free every handle still live and destroy every cache
 * the input created (as root), exit and re-create the callers' tasks,
 * trace off, CPU unpinned; then the invariants, and the state must be
 * exactly the baseline: no live handle, the child's usage and memory.stat
 * sizes, the number of caches.
 */
void fuzz_ctl_cleanup(void);

#endif
