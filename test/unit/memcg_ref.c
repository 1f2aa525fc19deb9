/* SPDX-License-Identifier: MIT */
/*
 * memcg_ref.c - unit tests of memcg/: the spec tables and reference functions transcribed
 * from docs/kernel-*.md, and the helpers the tests share.
 */
#include "test_memcg.h"

/* ------------------------------------------------------------------ */
/* Spec tables                                                         */

/* docs/kernel-interface.md §9: every row in order, hugetlb (28) absent. */
const char *const stat_keys[] = {
	"anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables",
	"percpu", "sock", "vmalloc", "shmem", "zswap", "zswapped",
	"file_mapped", "file_dirty", "file_writeback", "swapcached",
	"anon_thp", "file_thp", "shmem_thp",
	"inactive_anon", "active_anon", "inactive_file", "active_file",
	"unevictable", "slab_reclaimable", "slab_unreclaimable", "slab",
	"workingset_refault_anon", "workingset_refault_file",
	"workingset_activate_anon", "workingset_activate_file",
	"workingset_restore_anon", "workingset_restore_file",
	"workingset_nodereclaim",
	"pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged",
	"pgdemote_proactive", "pgpromote_success",
	"pgscan", "pgsteal", "pswpin", "pswpout",
	"pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", "pgscan_proactive",
	"pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged", "pgsteal_proactive",
	"pgfault", "pgmajfault", "pgrefill", "pgactivate", "pgdeactivate",
	"pglazyfree", "pglazyfreed", "swpin_zero", "swpout_zero",
	"zswpin", "zswpout", "zswpwb",
	"thp_fault_alloc", "thp_collapse_alloc", "thp_swpout", "thp_swpout_fallback",
	"numa_pages_migrated", "numa_pte_updates", "numa_hint_faults",
};
const size_t nr_stat_keys = sizeof(stat_keys) / sizeof(stat_keys[0]);

const char *const page_type_names[NR_MEMCG_PAGE_TYPES] = {
	"anon", "file", "shmem", "kernel_stack", "pagetables", "percpu", "sock", "vmalloc",
};

/* ------------------------------------------------------------------ */
/* Reference functions (docs/kernel-slab.md §1.3, §1.4, §4.3)                     */

/* The object size (s->size) of the kmalloc cache serving 'size', or the
 * bytes of a large kmalloc (PAGE_SIZE << get_order(size)). */
unsigned long long ref_kmalloc_bytes(size_t size)
{
	unsigned long long b;

	if (size <= 8)
		return 8;
	if (size <= 16)
		return 16;
	if (size <= 32)
		return 32;
	if (size <= 64)
		return 64;
	if (size <= 96)
		return 96;
	if (size <= 128)
		return 128;
	if (size <= 192)
		return 192;
	if (size <= 8192) {
		for (b = 256; b < size; b <<= 1)
			;
		return b;
	}
	for (b = PG; b < size; b <<= 1)
		;
	return b;
}

/* obj_full_size: s->size + sizeof(struct obj_cgroup *) */
unsigned long long ref_full(size_t size)
{
	return ref_kmalloc_bytes(size) + 8;
}

unsigned long long roundup_pg(unsigned long long b)
{
	return (b + PG - 1) / PG * PG;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

void pin(int cpu)
{
	EXPECT_EQ(alloc_pin_cpu(cpu), 0, "alloc_pin_cpu(%d)", cpu);
}

struct mem_cgroup *mk(struct mem_cgroup *parent)
{
	struct mem_cgroup *m = NULL;
	int r = mem_cgroup_create(parent, &m);

	if (r != 0 || !m) {
		print_error("mem_cgroup_create() = %d (%p)\n", r, (void *)m);
		fail();
	}
	return m;
}

struct memcg_task *mktask(pid_t pid, struct mem_cgroup *m)
{
	struct memcg_task *t = memcg_task_create(pid, m);

	if (!t) {
		print_error("memcg_task_create(%d) = NULL\n", (int)pid);
		fail();
	}
	return t;
}

/*
 * memcg_task_exit() of a task whose owned pages were all freed already.
 * If the task still claims owned pages, exiting would free them a second
 * time (and may never return): report it and leave the task alone.
 */
void task_exit_checked(struct memcg_task *t, const char *what)
{
	unsigned long n = memcg_task_owned_pages(t);

	if (n) {
		print_error("%s: the task still owns %lu pages that were all freed; "
			    "not calling memcg_task_exit() (it would free them again)\n", what, n);
		deferred_failures++;
		return;
	}
	memcg_task_exit(t);
}

void rm(struct mem_cgroup *m)
{
	EXPECT_EQ(mem_cgroup_offline(m), 0, "mem_cgroup_offline");
	mem_cgroup_put(m);
}

/* Poll (bounded, 2 s) until m has 'want' dying descendants. */
static bool wait_dying_quiet(struct mem_cgroup *m, unsigned long want, unsigned long *got)
{
	unsigned long d = 0, y = 0;

	for (int i = 0; i < 200; i++) {
		mem_cgroup_descendants(m, &d, &y);
		if (y == want)
			break;
		usleep(10000);
	}
	*got = y;
	return y == want;
}

bool wait_dying(struct mem_cgroup *m, unsigned long want)
{
	unsigned long y = 0;

	if (wait_dying_quiet(m, want, &y))
		return true;
	print_error("nr_dying stays %lu (want %lu) after 2 s\n", y, want);
	/* diagnosis: does a statistics read (a flush) release it? */
	{
		unsigned long long v;

		memcg_stat_read(m, "anon", &v);
		if (wait_dying_quiet(m, want, &y))
			print_error("  ... and reaches %lu only after a memory.stat read (a flush)\n",
				    want);
		else
			print_error("  ... still %lu after a memory.stat read too\n", y);
	}
	return false;
}

/* A one-number file ("%llu\n"); ~0 for "max\n". */
static unsigned long long read_num(struct mem_cgroup *m, const char *name)
{
	char buf[128], *end;
	long n = read_whole(m, name, buf, sizeof(buf));
	unsigned long long v;

	if (n < 0) {
		print_error("read %s = %ld\n", name, n);
		deferred_failures++;
		return ~0ull;
	}
	if (strcmp(buf, "max\n") == 0)
		return ~0ull;
	v = strtoull(buf, &end, 10);
	if (end == buf || strcmp(end, "\n") != 0) {
		print_error("%s: \"%s\" is not \"%%llu\\n\"\n", name, buf);
		deferred_failures++;
	}
	return v;
}

/* memory.current, cross-checked against mem_cgroup_usage_pages(). */
unsigned long long cur(struct mem_cgroup *m)
{
	unsigned long long v = read_num(m, "memory.current");

	DEFER_EQ(v, (unsigned long long)mem_cgroup_usage_pages(m) * PG,
		 "memory.current vs mem_cgroup_usage_pages() * 4096");
	return v;
}

void take(struct mem_cgroup *m, struct snap *s)
{
	/* the root has no memory.current: its counter is not compared (§7, §8.1) */
	s->usage = mem_cgroup_is_root(m) ? 0 : (unsigned long long)mem_cgroup_usage_pages(m) * PG;
	for (unsigned int i = 0; i < NR_STATE_KEYS; i++)
		s->v[i] = stv(m, stat_keys[i]);
}

void snap_eq(const struct snap *got, const struct snap *exp, const char *what)
{
	DEFER_EQ(got->usage, exp->usage, "%s: usage (memory.current)", what);
	for (unsigned int i = 0; i < NR_STATE_KEYS; i++)
		DEFER_EQ(got->v[i], exp->v[i], "%s: memory.stat %s", what, stat_keys[i]);
}

void expect_back(struct mem_cgroup *m, const struct snap *exp, const char *what)
{
	struct snap s;

	take(m, &s);
	snap_eq(&s, exp, what);
}

struct page *pages(enum memcg_page_type type, unsigned int order)
{
	int err = 0;
	struct page *pg = memcg_alloc_pages(type, GFP_KERNEL, order, &err);

	if (!pg) {
		print_error("memcg_alloc_pages(%s, order %u) = NULL, err %d\n",
			    page_type_names[type], order, err);
		fail();
	}
	return pg;
}

/* Free an allocation of memcg_alloc_pages() that is still live. */
void free_pg(struct page *pg)
{
	int r = memcg_free_pages(pg, memcg_page_id(pg));

	DEFER_EQ(r, 0, "memcg_free_pages() of a live allocation");
}

void *kmalloc_ok(size_t size, gfp_t gfp)
{
	void *p = kmalloc(size, gfp);

	if (!p) {
		print_error("kmalloc(%zu, %#x) = NULL\n", size, gfp);
		fail();
	}
	return p;
}

unsigned long long cache_size(struct kmem_cache *s)
{
	struct kmem_cache_info info;

	memset(&info, 0, sizeof(info));
	kmem_cache_info(s, &info);
	return info.size;
}

struct kmem_cache *mkcache(const char *name, unsigned int size, slab_flags_t flags)
{
	int err = 0;
	struct kmem_cache *s = kmem_cache_create_err(name, size, 0, flags, &err);

	if (!s) {
		print_error("kmem_cache_create(%s) failed: %d\n", name, err);
		fail();
	}
	return s;
}

const size_t ksizes[] = {
	1, 7, 8, 9, 16, 17, 24, 32, 33, 48, 64, 65, 72, 96, 97, 100, 128, 129,
	160, 192, 193, 200, 256, 257, 400, 512, 513, 1000, 1024, 1025, 2000,
	2048, 2049, 2312, 3000, 4096, 4097, 6000, 8192,
};
const size_t nr_ksizes = sizeof(ksizes) / sizeof(ksizes[0]);
const size_t large_sizes[] = { 8193, 12288, 16385, 32768, 40000 };
const size_t nr_large = sizeof(large_sizes) / sizeof(large_sizes[0]);

