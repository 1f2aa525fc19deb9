/* SPDX-License-Identifier: MIT */
/*
 * test_alloc.h - what the files of the test_alloc program share: the soft
 * checks, the reference rules transcribed from docs/kernel-slab.md
 * (alloc_ref.c), small helpers, and the test cases that test_alloc.c's
 * main() runs in groups.  Each alloc_*.c holds the tests of one topic.
 */
#ifndef MEMCGFS_TEST_ALLOC_H
#define MEMCGFS_TEST_ALLOC_H

#include "alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include "fixture.h"

#define MIB		(1024ul * 1024ul)
#define PG		4096u		/* every machine here has 4 KiB pages */
#define MACHINE_MEM	(64ul * MIB)

#define SOFT_EQ(got, exp, ...) do {					\
	unsigned long long g_ = (unsigned long long)(got);		\
	unsigned long long e_ = (unsigned long long)(exp);		\
	if (g_ != e_) {							\
		if (soft_errors < 40) {					\
			print_error("%s:%d: ", __FILE__, __LINE__);	\
			print_error(__VA_ARGS__);			\
			print_error(": got %llu, expected %llu\n", g_, e_); \
		}							\
		soft_errors++;						\
	}								\
} while (0)

/*
 * Deferred failures: reported at once, but the test goes on (so that one
 * wrong value does not hide the checks after it); the teardown fails the test.
 */

/* kmem_cache_destroy() must return 0 once every object was freed; if it
 * does not, report it and shrink and retry so that the test can go on. */
#define EXPECT_DESTROY(s, what) do {					\
	int r_ = kmem_cache_destroy(s);					\
	DEFER_EQ(r_, 0, "kmem_cache_destroy(%s) with no live object", what); \
	if (r_) {							\
		kmem_cache_shrink(s);					\
		kmem_cache_shrink(s);					\
		EXPECT_EQ(kmem_cache_destroy(s), 0, "destroy %s after shrinking", what); \
	}								\
} while (0)

struct ref_geom {
	unsigned object_size, size, align, offset, order, objects;
	unsigned min_partial, cpu_partial, cpu_partial_slabs;
};

/* alloc_ref.c: soft checks, reference rules, helpers */
extern unsigned long soft_errors;
void soft_reset(void);
void soft_done(void);
unsigned ref_get_order(unsigned long size);
/* the kmalloc classes of a 4 KiB-page machine (the groups' own): 0, 96, 192, 8..8k */
#define REF_NR_INDEX 14
extern const unsigned ref_class_size[REF_NR_INDEX];
extern const char *const ref_class_suffix[REF_NR_INDEX];
extern const char *const ref_type_prefix[NR_KMALLOC_TYPES];
extern const gfp_t ref_type_gfp[NR_KMALLOC_TYPES];
unsigned ref_kmalloc_index(size_t size);
size_t ref_roundup(size_t n);
unsigned ref_kmalloc_align(unsigned size);
unsigned ref_align(slab_flags_t flags, unsigned align, unsigned size,
		   unsigned line);
unsigned ref_objects(unsigned order, unsigned size);
unsigned ref_calculate_order(unsigned size, unsigned nr_cpus,
			     unsigned min_order, unsigned max_order,
			     unsigned min_objects);
struct ref_geom ref_cache_geom(unsigned object_size, unsigned align,
			       slab_flags_t flags, unsigned cpus);
struct ref_geom ref_kmalloc_geom(unsigned idx, unsigned cpus);
void expect_geom(const struct kmem_cache *s, const struct ref_geom *g,
		 const char *what);
void pin(int cpu);
struct page *head_of(const void *p);
void stats(struct alloc_stats *st);
void expect_stats_equal(const struct alloc_stats *a,
			const struct alloc_stats *b, const char *when);

/* shared between topics: alloc_kmalloc.c's probe sizes ... */
extern const size_t probe_sizes[];
extern const size_t nprobe;
#define NPROBE nprobe
/* ... alloc_objects.c's object checks ... */
bool all_zero(const void *p, size_t n);
int cmp_ptr(const void *a, const void *b);
void check_in_arena(const void *p, size_t len, const char *what);
/* ... alloc_caches.c's /proc/slabinfo line check */
void expect_slabinfo(const char *name, unsigned long active, unsigned long num,
		     unsigned objsize, unsigned objperslab, int pages,
		     unsigned long slabs);

/* the test cases, by file */
void test_kmalloc_index_table(void **state);
void test_kmalloc_ksize_and_routing(void **state);
void test_kmalloc_zero_size(void **state);
void test_kmalloc_types_and_names(void **state);
void test_kmalloc_cache_geometry(void **state);
void test_calculate_alignment(void **state);
void test_calculate_order(void **state);
void test_cache_geometry_sweep(void **state);
void test_object_alignment(void **state);
void test_zeroing(void **state);
void test_reuse_lifo(void **state);
void test_distinct_objects(void **state);
void test_fresh_slab_address_order(void **state);
void test_free_writes_only_freeptr(void **state);
void test_alloc_object_cache_api(void **state);
void test_pages_basic(void **state);
void test_stats_identity(void **state);
void test_exhaust_kmalloc_8k(void **state);
void test_exhaust_large_and_pages(void **state);
void test_cache_lifecycle(void **state);
void test_cache_create_errors(void **state);
void test_cache_max_object(void **state);
void test_slabinfo_format(void **state);
void test_shrink(void **state);
void test_partial_lists(void **state);
void test_partial_discard_at_min(void **state);
void test_gfp_format(void **state);
void test_gfp_parse(void **state);
void test_slab_flags_format_parse(void **state);
void test_pin_cpu(void **state);
void test_2312_example(void **state);
void test_kmalloc_geometry_8cpus(void **state);
void test_slabinfo_kmalloc_4k(void **state);
void test_online_cpus(void **state);
void test_free_runs_in_order(void **state);
void test_free_guess_across_caches(void **state);
void test_trace_kmalloc_and_cache(void **state);
void test_trace_accounted_flags(void **state);
void test_trace_large_kmalloc(void **state);
void test_trace_pages(void **state);
void test_trace_call_site_symbol(void **state);
void test_trace_off(void **state);
void test_trace_kfree_null(void **state);
void test_trace_two_cursors(void **state);
void test_trace_lost(void **state);
void test_stress_pinned(void **state);
void test_stress_unpinned(void **state);
void test_stress_online(void **state);

#endif
