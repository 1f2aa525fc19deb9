/* SPDX-License-Identifier: MIT */
/*
 * test_memcg.h - what the files of the test_memcg program share: the spec
 * tables and reference functions transcribed from docs/kernel-*.md, the
 * helpers (memcg_ref.c), and the test cases that test_memcg.c's main() runs
 * in groups.  Each memcg_*.c holds the tests of one topic.
 */
#ifndef MEMCGFS_TEST_MEMCG_H
#define MEMCGFS_TEST_MEMCG_H

#include "memcg.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>

#define MIB		(1024ul * 1024ul)
#define PG		4096ull		/* every machine here has 4 KiB pages */
#define MACHINE_MEM	(128ul * MIB)
#define BATCH		64ull		/* MEMCG_CHARGE_BATCH, the default */

/* the checks, the PRNG, memcg file access (file_of, read_whole, write_*, keyed, stv) */
#include "fixture.h"
/* white box: memcg_charge.c's objcg test reaches an objcg and its counters */
#include "../../memcg/internal.h"

/* Rows 1-27: the byte-valued state items (the rest are counts/events). */
#define NR_STATE_KEYS	27

enum {
	K_ANON = 0, K_FILE = 1, K_KERNEL = 2, K_KSTACK = 3, K_PT = 4, K_SECPT = 5,
	K_PERCPU = 6, K_SOCK = 7, K_VMALLOC = 8, K_SHMEM = 9,
	K_INACTIVE_ANON = 19, K_ACTIVE_ANON = 20, K_INACTIVE_FILE = 21,
	K_ACTIVE_FILE = 22, K_UNEVICTABLE = 23, K_SLAB_R = 24, K_SLAB_U = 25,
	K_SLAB = 26,
};

struct snap {
	unsigned long long usage;
	unsigned long long v[NR_STATE_KEYS];
};

struct obj {
	void *p;
	struct kmem_cache *s;	/* NULL: kmalloc */
};

/* A file's whole content (deferred checks) */
#define DEFER_FILE(m, name, exp) do {					\
	char fb_[16384];						\
	long n_ = read_whole((m), (name), fb_, sizeof(fb_));		\
	if (n_ < 0) {							\
		print_error("%s:%d: read %s = %ld\n", __FILE__, __LINE__, (name), n_); \
		deferred_failures++;					\
	} else {							\
		DEFER_STR(fb_, (exp), "content of %s", (name));		\
		DEFER_EQ(n_, strlen(exp), "length of %s", (name));	\
	}								\
} while (0)

/* test_memcg.c: what the memory.events notifications of a test saw */
extern int notify_calls;
extern char notify_last_file[64];
extern struct mem_cgroup *notify_last_memcg;

/* memcg_ref.c: spec tables, reference functions, helpers */
extern const char *const stat_keys[];
extern const size_t nr_stat_keys;
#define NR_STAT_KEYS	nr_stat_keys
extern const char *const page_type_names[NR_MEMCG_PAGE_TYPES];
unsigned long long ref_kmalloc_bytes(size_t size);
unsigned long long ref_full(size_t size);
unsigned long long roundup_pg(unsigned long long b);
void pin(int cpu);
struct mem_cgroup *mk(struct mem_cgroup *parent);
struct memcg_task *mktask(pid_t pid, struct mem_cgroup *m);
void task_exit_checked(struct memcg_task *t, const char *what);
void rm(struct mem_cgroup *m);
bool wait_dying(struct mem_cgroup *m, unsigned long want);
unsigned long long cur(struct mem_cgroup *m);
void take(struct mem_cgroup *m, struct snap *s);
void snap_eq(const struct snap *got, const struct snap *exp, const char *what);
void expect_back(struct mem_cgroup *m, const struct snap *exp, const char *what);
struct page *pages(enum memcg_page_type type, unsigned int order);
void free_pg(struct page *pg);
void *kmalloc_ok(size_t size, gfp_t gfp);
unsigned long long cache_size(struct kmem_cache *s);
struct kmem_cache *mkcache(const char *name, unsigned int size, slab_flags_t flags);
extern const size_t ksizes[];
extern const size_t nr_ksizes;
#define NR_KSIZES	nr_ksizes
extern const size_t large_sizes[];
extern const size_t nr_large;
#define NR_LARGE	nr_large
/* memcg_charge.c's, for memcg_tree.c too */
void free_obj(struct obj *o);

/* the test cases, by file */
void test_tree_basics(void **state);
void test_page_type_names(void **state);
void test_current_api(void **state);
void test_rmdir_with_live_objects(void **state);
void test_rcu_reader_outlives_last_put(void **state);
void test_rmdir_kmem_only_reaped(void **state);
void test_mkdir_charges(void **state);
void test_root_not_charged(void **state);
void test_reinit_with_pending_stats(void **state);
void test_task_exit_after_foreign_free(void **state);
void test_stock_precharge(void **state);
void test_stock_precharge_batch16(void **state);
void test_slab_bytes_exact(void **state);
void test_slab_bytes_exact_rseq(void **state);
void test_page_types(void **state);
void test_task_exit_frees_owned(void **state);
void test_cross_cgroup_free(void **state);
void test_objcg_percpu_ref(void **state);
void test_percpu_ref_migration(void **state);
void test_root_task_moved_while_current(void **state);
void test_vector_at_first_charge(void **state);
void test_migration(void **state);
void test_attach_races(void **state);
void test_max_enforced(void **state);
void test_max_ancestor(void **state);
void test_hierarchy_random(void **state);
void test_concurrency_pinned(void **state);
void test_concurrency_unpinned(void **state);
void test_concurrency_pinned_same_slot(void **state);
void test_reclaim_during_reap(void **state);
void test_drain_skips_dying_objcg(void **state);
void test_reparent_refs_before_release(void **state);
void test_stat_change_at_zero(void **state);
void test_charge_after_cache_swap(void **state);
void test_free_during_lru_move(void **state);
void test_stat_keys(void **state);
void test_numa_stat(void **state);
void test_numa_stat_2nodes(void **state);
void test_events_files(void **state);
void test_file_table(void **state);
void test_file_rw_errors(void **state);
void test_memparse_writes(void **state);
void test_int_writes(void **state);
void test_reclaim_parse(void **state);
void test_page_counter_memparse(void **state);
void test_peak(void **state);

#endif
