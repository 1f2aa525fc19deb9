/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of memcg/ (issue 3, "the charging core"), written from
 * memcg/memcg.h, alloc/alloc.h, the issue text and docs/kernel-*.md
 * (docs/kernel-slab.md §4-9, docs/kernel-interface.md §1.3, §4,
 * §7, §8.1, §9, §10), not from the implementation.  Expected numbers are
 * either values docs/kernel-*.md states (copied into tables here) or computed by the
 * small reference functions below (ref_*), which transcribe docs/kernel-*.md's rules.
 *
 * Every test gets a fresh machine (alloc_init, 128 MiB) and memory
 * controller (memcg_init); the teardown drains the stocks and requires
 * memcg_check() == 0 and alloc_check() == 0.  Randomised tests use a seeded
 * PRNG (the seed is printed); nothing asserts on timing.  Reaping of removed
 * memcgs is polled (bounded, 2 s) through mem_cgroup_descendants().
 */
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

/* ------------------------------------------------------------------ */
/* Checks                                                              */

/*
 * Deferred failures: reported at once, but the test goes on (so that one
 * wrong value does not hide the checks after it); the teardown fails the test.
 */
/* deferred_failures, DEFER_EQ/DEFER_TRUE/EXPECT_TRUE/DEFER_STR, the PRNG */
#include "fixture.h"
/* white box: the objcg test below reaches an objcg and its counters */
#include "../../memcg/internal.h"

/* ------------------------------------------------------------------ */
/* Spec tables                                                         */

/* docs/kernel-interface.md §9: every row in order, hugetlb (28) absent. */
static const char *const stat_keys[] = {
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
#define NR_STAT_KEYS	(sizeof(stat_keys) / sizeof(stat_keys[0]))
/* Rows 1-27: the byte-valued state items (the rest are counts/events). */
#define NR_STATE_KEYS	27

enum {
	K_ANON = 0, K_FILE = 1, K_KERNEL = 2, K_KSTACK = 3, K_PT = 4, K_SECPT = 5,
	K_PERCPU = 6, K_SOCK = 7, K_VMALLOC = 8, K_SHMEM = 9,
	K_INACTIVE_ANON = 19, K_ACTIVE_ANON = 20, K_INACTIVE_FILE = 21,
	K_ACTIVE_FILE = 22, K_UNEVICTABLE = 23, K_SLAB_R = 24, K_SLAB_U = 25,
	K_SLAB = 26,
};

/*
 * §9.1: rows 1-40 that are per-node counters (minus kernel, percpu, sock,
 * vmalloc, zswap, zswapped, slab), in memory.stat order; hugetlb printed
 * (per code reading) whenever CONFIG_HUGETLB_PAGE.
 */
static const char *const numa_keys[] = {
	"anon", "file", "kernel_stack", "pagetables", "sec_pagetables", "shmem",
	"file_mapped", "file_dirty", "file_writeback", "swapcached",
	"anon_thp", "file_thp", "shmem_thp",
	"inactive_anon", "active_anon", "inactive_file", "active_file",
	"unevictable", "slab_reclaimable", "slab_unreclaimable", "hugetlb",
	"workingset_refault_anon", "workingset_refault_file",
	"workingset_activate_anon", "workingset_activate_file",
	"workingset_restore_anon", "workingset_restore_file",
	"workingset_nodereclaim",
	"pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged",
	"pgdemote_proactive", "pgpromote_success",
};
#define NR_NUMA_KEYS	(sizeof(numa_keys) / sizeof(numa_keys[0]))

/* §10 */
static const char *const event_keys[] = {
	"low", "high", "max", "oom", "oom_kill", "oom_group_kill", "sock_throttled",
};
#define NR_EVENT_KEYS	(sizeof(event_keys) / sizeof(event_keys[0]))
#define EVENTS_ZERO	"low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\nsock_throttled 0\n"

/* §7's table (plus §4.1 defaults of a new cgroup). */
struct spec_file {
	const char *name;
	bool on_root, on_child;
	unsigned int mode;
	bool notifies;
	const char *child_default;	/* NULL: not checked */
	bool optional;			/* a core file (memory.pressure) */
};
static const struct spec_file spec_files[] = {
	{ "memory.current",	   false, true, 0444, false, "0\n", false },
	{ "memory.min",		   false, true, 0644, false, "0\n", false },
	{ "memory.low",		   false, true, 0644, false, "0\n", false },
	{ "memory.high",	   false, true, 0644, false, "max\n", false },
	{ "memory.max",		   false, true, 0644, false, "max\n", false },
	{ "memory.peak",	   false, true, 0644, false, "0\n", false },
	{ "memory.oom.group",	   false, true, 0644, false, "0\n", false },
	{ "memory.events",	   false, true, 0444, true, EVENTS_ZERO, false },
	{ "memory.events.local",   false, true, 0444, true, EVENTS_ZERO, false },
	{ "memory.stat",	   true, true, 0444, false, NULL, false },
	{ "memory.numa_stat",	   true, true, 0444, false, NULL, false },
	{ "memory.reclaim",	   true, true, 0200, false, NULL, false },
	{ "memory.pressure",	   true, true, 0644, false, NULL, true },
	{ "memory.swap.current",   false, true, 0444, false, "0\n", false },
	{ "memory.swap.high",	   false, true, 0644, false, "max\n", false },
	{ "memory.swap.max",	   false, true, 0644, false, "max\n", false },
	{ "memory.swap.peak",	   false, true, 0644, false, "0\n", false },
	{ "memory.swap.events",	   false, true, 0444, true, "high 0\nmax 0\nfail 0\n", false },
	{ "memory.zswap.current",  false, true, 0444, false, "0\n", false },
	{ "memory.zswap.max",	   false, true, 0644, false, "max\n", false },
	{ "memory.zswap.writeback", true, true, 0644, false, "1\n", false },
};
#define NR_SPEC_FILES	(sizeof(spec_files) / sizeof(spec_files[0]))

/* §1.3 files */
static const char *const memparse_files[] = {
	"memory.min", "memory.low", "memory.high", "memory.max",
	"memory.swap.high", "memory.swap.max", "memory.zswap.max",
};

static const char *const page_type_names[NR_MEMCG_PAGE_TYPES] = {
	"anon", "file", "shmem", "kernel_stack", "pagetables", "percpu", "sock", "vmalloc",
};

/* ------------------------------------------------------------------ */
/* Reference functions (docs/kernel-slab.md §1.3, §1.4, §4.3)                     */

/* The object size (s->size) of the kmalloc cache serving 'size', or the
 * bytes of a large kmalloc (PAGE_SIZE << get_order(size)). */
static unsigned long long ref_kmalloc_bytes(size_t size)
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
static unsigned long long ref_full(size_t size)
{
	return ref_kmalloc_bytes(size) + 8;
}

static unsigned long long roundup_pg(unsigned long long b)
{
	return (b + PG - 1) / PG * PG;
}

/* ------------------------------------------------------------------ */
/* Machines                                                            */

static int machine_up(unsigned int cpus, unsigned int nodes,
		      const struct memcg_config *mc)
{
	struct alloc_config cfg;
	int r;

	alloc_config_defaults(&cfg);
	cfg.memory = MACHINE_MEM;
	cfg.cpus = cpus;
	if (nodes)
		cfg.nodes = nodes;
	deferred_failures = 0;
	r = alloc_init(&cfg);
	if (r) {
		print_error("alloc_init(cpus=%u) = %d\n", cpus, r);
		return -1;
	}
	r = memcg_init(mc);
	if (r) {
		print_error("memcg_init() = %d\n", r);
		alloc_exit();
		return -1;
	}
	return 0;
}

static int setup_cpus4(void **state)
{
	(void)state;
	return machine_up(4, 1, NULL);
}

static int setup_online(void **state)
{
	(void)state;
	return machine_up(0, 1, NULL);
}

static int setup_nodes2(void **state)
{
	(void)state;
	return machine_up(4, 2, NULL);
}

static int setup_batch16(void **state)
{
	struct memcg_config mc;

	(void)state;
	memcg_config_defaults(&mc);
	mc.charge_batch = 16;
	return machine_up(4, 1, &mc);
}

static int notify_calls;
static char notify_last_file[64];
static struct mem_cgroup *notify_last_memcg;

static int teardown(void **state)
{
	char msg[1024] = "", amsg[1024] = "";
	int r1, r2;

	(void)state;
	memcg_set_current(NULL);
	alloc_pin_cpu(-1);
	memcg_set_notify(NULL, NULL);
	memcg_drain();
	r1 = memcg_check(msg, sizeof(msg));
	/*
	 * Flush the statistics before memcg_exit(): a memcg still on the
	 * changed-statistics list at memcg_exit() corrupts the next
	 * memcg_init() (test_reinit_with_pending_stats shows it in a child
	 * process); this keeps the tests after a failing one independent.
	 */
	{
		unsigned long long v;

		memcg_stat_read(root_mem_cgroup(), "anon", &v);
	}
	if (r1)
		print_error("memcg_check() = %d: %s\n", r1, msg);
	r2 = alloc_check(amsg, sizeof(amsg));
	if (r2)
		print_error("alloc_check() = %d: %s\n", r2, amsg);
	memcg_exit();
	alloc_exit();
	if (r1 || r2)
		fail_msg("memcg_check/alloc_check failed after the test");
	if (deferred_failures) {
		unsigned long n = deferred_failures;

		deferred_failures = 0;
		fail_msg("%lu deferred failures (above)", n);
	}
	return 0;
}

#define T4(f)	cmocka_unit_test_setup_teardown(f, setup_cpus4, teardown)
#define TO(f)	cmocka_unit_test_setup_teardown(f, setup_online, teardown)
#define TN2(f)	cmocka_unit_test_setup_teardown(f, setup_nodes2, teardown)
#define TB16(f)	cmocka_unit_test_setup_teardown(f, setup_batch16, teardown)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static void pin(int cpu)
{
	EXPECT_EQ(alloc_pin_cpu(cpu), 0, "alloc_pin_cpu(%d)", cpu);
}

static struct mem_cgroup *mk(struct mem_cgroup *parent)
{
	struct mem_cgroup *m = NULL;
	int r = mem_cgroup_create(parent, &m);

	if (r != 0 || !m) {
		print_error("mem_cgroup_create() = %d (%p)\n", r, (void *)m);
		fail();
	}
	return m;
}

static struct memcg_task *mktask(pid_t pid, struct mem_cgroup *m)
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
static void task_exit_checked(struct memcg_task *t, const char *what)
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

static void rm(struct mem_cgroup *m)
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

static bool wait_dying(struct mem_cgroup *m, unsigned long want)
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

static const struct memcg_file *file_of(const char *name)
{
	const struct memcg_file *f = memcg_file_lookup(name);

	if (!f) {
		print_error("memcg_file_lookup(\"%s\") = NULL\n", name);
		fail();
	}
	return f;
}

/* Open, read the whole content, release.  Length or negative errno. */
static long read_whole(struct mem_cgroup *m, const char *name, char *buf, size_t len)
{
	struct memcg_open *o = NULL;
	long n;
	int r;

	buf[0] = '\0';
	r = memcg_file_open(file_of(name), m, &o);
	if (r)
		return r;
	n = memcg_file_read(o, buf, len);
	memcg_file_release(o);
	return n;
}

static int write_bytes(struct mem_cgroup *m, const char *name, const char *s,
		       size_t len)
{
	struct memcg_open *o = NULL;
	int r;

	r = memcg_file_open(file_of(name), m, &o);
	if (r)
		return r;
	r = memcg_file_write(o, s, len, false);
	memcg_file_release(o);
	return r;
}

static int write_str(struct mem_cgroup *m, const char *name, const char *s)
{
	return write_bytes(m, name, s, strlen(s));
}

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
static unsigned long long cur(struct mem_cgroup *m)
{
	unsigned long long v = read_num(m, "memory.current");

	DEFER_EQ(v, (unsigned long long)mem_cgroup_usage_pages(m) * PG,
		 "memory.current vs mem_cgroup_usage_pages() * 4096");
	return v;
}

static unsigned long long stv(struct mem_cgroup *m, const char *key)
{
	unsigned long long v = 0;
	int r = memcg_stat_read(m, key, &v);

	if (r) {
		print_error("memcg_stat_read(\"%s\") = %d\n", key, r);
		deferred_failures++;
		return 0;
	}
	return v;
}

/* A flat-keyed file's value for key; ~0 when absent. */
static unsigned long long keyed(struct mem_cgroup *m, const char *name, const char *key)
{
	char buf[16384], *p;
	size_t kl = strlen(key);
	long n = read_whole(m, name, buf, sizeof(buf));

	if (n < 0) {
		print_error("read %s = %ld\n", name, n);
		deferred_failures++;
		return ~0ull;
	}
	for (p = buf; *p; ) {
		char *nl = strchr(p, '\n');

		if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
		if (!nl)
			break;
		p = nl + 1;
	}
	print_error("%s has no key %s\n", name, key);
	deferred_failures++;
	return ~0ull;
}

struct snap {
	unsigned long long usage;
	unsigned long long v[NR_STATE_KEYS];
};

static void take(struct mem_cgroup *m, struct snap *s)
{
	/* the root has no memory.current: its counter is not compared (§7, §8.1) */
	s->usage = mem_cgroup_is_root(m) ? 0 : (unsigned long long)mem_cgroup_usage_pages(m) * PG;
	for (unsigned int i = 0; i < NR_STATE_KEYS; i++)
		s->v[i] = stv(m, stat_keys[i]);
}

static void snap_eq(const struct snap *got, const struct snap *exp, const char *what)
{
	DEFER_EQ(got->usage, exp->usage, "%s: usage (memory.current)", what);
	for (unsigned int i = 0; i < NR_STATE_KEYS; i++)
		DEFER_EQ(got->v[i], exp->v[i], "%s: memory.stat %s", what, stat_keys[i]);
}

static void expect_back(struct mem_cgroup *m, const struct snap *exp, const char *what)
{
	struct snap s;

	take(m, &s);
	snap_eq(&s, exp, what);
}

static void expect_memcg_check(const char *when)
{
	char msg[1024] = "";
	int r = memcg_check(msg, sizeof(msg));

	if (r) {
		print_error("memcg_check() %s = %d: %s\n", when, r, msg);
		deferred_failures++;
	}
}

static struct page *pages(enum memcg_page_type type, unsigned int order)
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
static void free_pg(struct page *pg)
{
	int r = memcg_free_pages(pg, memcg_page_id(pg));

	DEFER_EQ(r, 0, "memcg_free_pages() of a live allocation");
}

static void *kmalloc_ok(size_t size, gfp_t gfp)
{
	void *p = kmalloc(size, gfp);

	if (!p) {
		print_error("kmalloc(%zu, %#x) = NULL\n", size, gfp);
		fail();
	}
	return p;
}

static unsigned long long cache_size(struct kmem_cache *s)
{
	struct kmem_cache_info info;

	memset(&info, 0, sizeof(info));
	kmem_cache_info(s, &info);
	return info.size;
}

static struct kmem_cache *mkcache(const char *name, unsigned int size, slab_flags_t flags)
{
	int err = 0;
	struct kmem_cache *s = kmem_cache_create_err(name, size, 0, flags, &err);

	if (!s) {
		print_error("kmem_cache_create(%s) failed: %d\n", name, err);
		fail();
	}
	return s;
}

static const size_t ksizes[] = {
	1, 7, 8, 9, 16, 17, 24, 32, 33, 48, 64, 65, 72, 96, 97, 100, 128, 129,
	160, 192, 193, 200, 256, 257, 400, 512, 513, 1000, 1024, 1025, 2000,
	2048, 2049, 2312, 3000, 4096, 4097, 6000, 8192,
};
#define NR_KSIZES	(sizeof(ksizes) / sizeof(ksizes[0]))
static const size_t large_sizes[] = { 8193, 12288, 16385, 32768, 40000 };
#define NR_LARGE	(sizeof(large_sizes) / sizeof(large_sizes[0]))

/* ================================================================== */
/* Group: init                                                         */

static void test_config_and_init_errors(void **state)
{
	struct alloc_config ac;
	struct memcg_config mc;
	int r;

	(void)state;
	memset(&mc, 0xa5, sizeof(mc));
	memcg_config_defaults(&mc);
	EXPECT_EQ(mc.charge_batch, MEMCG_CHARGE_BATCH, "default charge_batch");
	EXPECT_EQ(mc.charge_batch, 64, "default charge_batch is 64");
	EXPECT_EQ(mc.oom_kill_signal, 0, "default oom_kill_signal (emulate only)");

	alloc_config_defaults(&ac);
	ac.memory = MACHINE_MEM;
	ac.cpus = 4;
	EXPECT_EQ(alloc_init(&ac), 0, "alloc_init");

	memcg_config_defaults(&mc);
	mc.charge_batch = 0;
	DEFER_EQ(memcg_init(&mc), -EINVAL, "memcg_init(charge_batch = 0)");
	mc.charge_batch = 128;
	DEFER_EQ(memcg_init(&mc), -EINVAL, "memcg_init(charge_batch = 128)");
	mc.charge_batch = 127;
	r = memcg_init(&mc);
	DEFER_EQ(r, 0, "memcg_init(charge_batch = 127)");
	if (r == 0) {
		DEFER_EQ(memcg_init(NULL), -EBUSY, "second memcg_init");
		DEFER_TRUE(root_mem_cgroup() != NULL, "root_mem_cgroup()");
		DEFER_TRUE(mem_cgroup_is_root(root_mem_cgroup()), "root is root");
		DEFER_TRUE(kmem_cache_find("mem_cgroup") != NULL,
			   "a dedicated kmem_cache named mem_cgroup exists");
		memcg_exit();
		DEFER_TRUE(kmem_cache_find("mem_cgroup") == NULL,
			   "memcg_exit tears down the mem_cgroup cache too");
	}
	/* init again after exit, on the same machine (memcg_exit "tears
	 * everything down"; memcg_init's errors are 0/EINVAL/ENOMEM/EBUSY) */
	r = memcg_init(NULL);
	DEFER_EQ(r, 0, "memcg_init after memcg_exit on the same machine");
	if (r == 0)
		memcg_exit();
	alloc_exit();
	if (deferred_failures) {
		unsigned long n = deferred_failures;

		deferred_failures = 0;
		fail_msg("%lu deferred failures (above)", n);
	}
}

/* ================================================================== */
/* Group: tree, tasks, basics                                          */

static void test_tree_basics(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a, *b, *a1;
	unsigned long d = 99, y = 99;
	struct memcg_task *t;
	int dummy;

	(void)state;
	DEFER_TRUE(parent_mem_cgroup(root) == NULL, "root has no parent");
	DEFER_TRUE(mem_cgroup_online(root), "root online");
	mem_cgroup_descendants(root, &d, &y);
	DEFER_EQ(d, 0, "fresh root nr_descendants");
	DEFER_EQ(y, 0, "fresh root nr_dying");

	a = mk(root);
	b = mk(root);
	a1 = mk(a);
	DEFER_TRUE(parent_mem_cgroup(a) == root, "parent(a)");
	DEFER_TRUE(parent_mem_cgroup(a1) == a, "parent(a1)");
	DEFER_TRUE(!mem_cgroup_is_root(a), "a not root");
	DEFER_TRUE(mem_cgroup_online(a1), "a1 online");
	DEFER_TRUE(mem_cgroup_id(a) != mem_cgroup_id(b) &&
		   mem_cgroup_id(a) != mem_cgroup_id(a1) &&
		   mem_cgroup_id(b) != mem_cgroup_id(a1) &&
		   mem_cgroup_id(a) != mem_cgroup_id(root), "ids distinct");
	mem_cgroup_descendants(root, &d, &y);
	DEFER_EQ(d, 3, "root nr_descendants");
	DEFER_EQ(y, 0, "root nr_dying");
	mem_cgroup_descendants(a, &d, &y);
	DEFER_EQ(d, 1, "a nr_descendants");

	mem_cgroup_set_owner(a, &dummy);
	DEFER_TRUE(mem_cgroup_owner(a) == &dummy, "owner round trip");
	DEFER_TRUE(mem_cgroup_owner(b) == NULL, "owner unset is NULL");

	/* offline errors */
	DEFER_EQ(mem_cgroup_offline(root), -EINVAL, "offline(root)");
	DEFER_EQ(mem_cgroup_offline(a), -EBUSY, "offline with an online child");
	t = mktask(4242, a1);
	DEFER_TRUE(memcg_task_memcg(t) == a1, "task's memcg");
	DEFER_EQ(memcg_task_pid(t), 4242, "task pid");
	DEFER_EQ(mem_cgroup_offline(a1), -EBUSY, "offline with a task");
	EXPECT_EQ(memcg_task_attach(t, b), 0, "attach to b");
	DEFER_TRUE(memcg_task_memcg(t) == b, "task's memcg after attach");

	/* an extra reference keeps nothing online */
	mem_cgroup_get(a1);
	EXPECT_EQ(mem_cgroup_offline(a1), 0, "offline a1");
	DEFER_TRUE(!mem_cgroup_online(a1), "a1 offline");
	{
		struct mem_cgroup *x = NULL;

		DEFER_EQ(mem_cgroup_create(a1, &x), -ENODEV, "create under an offline parent");
	}
	mem_cgroup_descendants(a, &d, &y);
	DEFER_EQ(d, 0, "a nr_descendants after rmdir");
	DEFER_EQ(y, 1, "a nr_dying after rmdir (refs held)");
	mem_cgroup_descendants(root, &d, &y);
	DEFER_EQ(d, 2, "root nr_descendants after rmdir");
	DEFER_EQ(y, 1, "root nr_dying after rmdir (refs held)");
	mem_cgroup_put(a1);
	usleep(100000);
	mem_cgroup_descendants(a, &d, &y);
	DEFER_EQ(y, 1, "still dying while an extra reference is held");
	mem_cgroup_put(a1);
	DEFER_TRUE(wait_dying(root, 0), "a1 reaped after its last reference");
	mem_cgroup_descendants(a, &d, &y);
	DEFER_EQ(d + y, 0, "a has no descendants");

	task_exit_checked(t, "t");
	rm(a);
	rm(b);
	DEFER_TRUE(wait_dying(root, 0), "all reaped");
	mem_cgroup_descendants(root, &d, &y);
	DEFER_EQ(d, 0, "root nr_descendants at the end");
}

static void test_page_type_names(void **state)
{
	enum memcg_page_type t;

	(void)state;
	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++) {
		DEFER_STR(memcg_page_type_name((enum memcg_page_type)i), page_type_names[i],
			  "memcg_page_type_name(%u)", i);
		t = NR_MEMCG_PAGE_TYPES;
		DEFER_EQ(memcg_page_type_parse(page_type_names[i], &t), 0, "parse %s",
			 page_type_names[i]);
		DEFER_EQ(t, i, "parse %s", page_type_names[i]);
	}
	DEFER_EQ(memcg_page_type_parse("slab", &t), -EINVAL, "parse slab");
	DEFER_EQ(memcg_page_type_parse("Anon", &t), -EINVAL, "parse Anon");
	DEFER_EQ(memcg_page_type_parse("", &t), -EINVAL, "parse empty");
}

static void test_current_api(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(100, a);
	struct page *pg;
	int err = 0;

	(void)state;
	DEFER_TRUE(memcg_current() == NULL, "current starts NULL (the daemon)");
	memcg_set_current(t);
	DEFER_TRUE(memcg_current() == t, "memcg_current() after set");
	pg = memcg_alloc_pages(NR_MEMCG_PAGE_TYPES, GFP_KERNEL, 0, &err);
	DEFER_TRUE(pg == NULL, "memcg_alloc_pages(bad type) fails");
	DEFER_EQ(err, -EINVAL, "memcg_alloc_pages(bad type) err");
	if (pg)
		free_pg(pg);
	memcg_set_current(NULL);
	DEFER_TRUE(memcg_current() == NULL, "memcg_current() after set NULL");
	task_exit_checked(t, "t");
	rm(a);
}

/* ================================================================== */
/* Group: stocks                                                       */

static void test_stock_precharge(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct memcg_task *ta = mktask(101, a), *tb = mktask(102, b);
	void *p[4];
	struct page *pg, *big;
	struct snap a0, b0;

	(void)state;
	take(a, &a0);
	take(b, &b0);
	DEFER_EQ(cur(a), 0, "fresh memcg memory.current");

	pin(0);
	memcg_set_current(ta);
	p[0] = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	/* one page for the 72 bytes, charged as a batch of 64: the surplus
	 * sits in CPU 0's memcg_stock, counted in memory.current (§7.1) */
	DEFER_EQ(cur(a), BATCH * PG, "memory.current after one small accounted kmalloc");
	DEFER_EQ(stv(a, "slab_unreclaimable"), 72, "slab_unreclaimable = 64 + 8");
	DEFER_EQ(stv(a, "kernel"), PG, "kernel: one page charged for the object bytes");
	p[1] = kmalloc_ok(100, GFP_KERNEL_ACCOUNT);
	DEFER_EQ(cur(a), BATCH * PG, "second small object comes from the stocks");
	DEFER_EQ(stv(a, "slab_unreclaimable"), 72 + 136, "slab_unreclaimable");

	/* another CPU has its own stocks */
	pin(1);
	p[2] = kmalloc_ok(8, GFP_KERNEL_ACCOUNT);
	DEFER_EQ(cur(a), 2 * BATCH * PG, "a second CPU precharges its own batch");
	DEFER_EQ(stv(a, "slab_unreclaimable"), 72 + 136 + 16, "slab_unreclaimable");

	/* another memcg on CPU 0: a second stock slot */
	pin(0);
	memcg_set_current(tb);
	p[3] = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	DEFER_EQ(cur(b), BATCH * PG, "b's precharge");
	DEFER_EQ(cur(a), 2 * BATCH * PG, "a untouched by b");

	memcg_drain();
	/* what remains: whole pages for the live bytes (one per objcg here) */
	DEFER_EQ(cur(a), PG, "a after drain: one page for 224 live bytes");
	DEFER_EQ(stv(a, "kernel"), PG, "a kernel after drain");
	DEFER_EQ(cur(b), PG, "b after drain");

	/* page charges go through the same memcg_stock */
	memcg_set_current(ta);
	pg = pages(MEMCG_PAGE_FILE, 0);
	DEFER_EQ(cur(a), PG + BATCH * PG, "one file page charges a batch");
	DEFER_EQ(stv(a, "file"), PG, "file stat");
	memcg_drain();
	DEFER_EQ(cur(a), 2 * PG, "after drain: object page + file page");
	/* a charge larger than the batch is charged exactly, no surplus */
	big = pages(MEMCG_PAGE_FILE, 7);
	DEFER_EQ(cur(a), 2 * PG + 128 * PG, "order-7 charge: exactly 128 pages");

	memcg_set_current(tb);		/* frees from another task */
	free_pg(big);
	free_pg(pg);
	kfree(p[0]);
	kfree(p[1]);
	kfree(p[2]);
	kfree(p[3]);
	memcg_drain();
	expect_back(a, &a0, "a after free + drain");
	expect_back(b, &b0, "b after free + drain");
	DEFER_EQ(cur(a), 0, "a memory.current after free + drain");

	memcg_set_current(NULL);
	task_exit_checked(ta, "ta");
	task_exit_checked(tb, "tb");
	rm(a);
	rm(b);
}

static void test_stock_precharge_batch16(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *ta = mktask(103, a);
	void *p;

	(void)state;
	pin(2);
	memcg_set_current(ta);
	p = kmalloc_ok(32, GFP_KERNEL_ACCOUNT);
	DEFER_EQ(cur(a), 16 * PG, "charge_batch = 16: the precharge is 16 pages");
	memcg_drain();
	DEFER_EQ(cur(a), PG, "after drain");
	kfree(p);
	memcg_drain();
	DEFER_EQ(cur(a), 0, "after free + drain");
	DEFER_EQ(stv(a, "slab_unreclaimable"), 0, "slab after free");
	memcg_set_current(NULL);
	task_exit_checked(ta, "ta");
	rm(a);
}

/* ================================================================== */
/* Group: byte-exact slab statistics                                   */

struct obj {
	void *p;
	struct kmem_cache *s;	/* NULL: kmalloc */
};

static void free_obj(struct obj *o)
{
	if (o->s)
		kmem_cache_free(o->s, o->p);
	else
		kfree(o->p);
}

static void test_slab_bytes_exact(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a = mk(root);
	struct memcg_task *t = mktask(110, a);
	struct kmem_cache *cacct, *crcl, *cplain;
	static struct obj objs[2048];
	unsigned int n = 0;
	unsigned long long eu = 0, er = 0, small = 0, large = 0;
	struct snap a0, r0;

	(void)state;
	cacct = mkcache("t_acct_2312", 2312, SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT);
	crcl = mkcache("t_rcl_300", 300, SLAB_ACCOUNT | SLAB_RECLAIM_ACCOUNT);
	cplain = mkcache("t_plain_100", 100, 0);
	pin(0);
	take(a, &a0);
	take(root, &r0);
	memcg_set_current(t);

	/* unaccounted: nothing */
	for (unsigned int i = 0; i < NR_KSIZES; i++)
		objs[n++] = (struct obj){ kmalloc_ok(ksizes[i], GFP_KERNEL), NULL };
	objs[n++] = (struct obj){ kmem_cache_alloc(cplain, GFP_KERNEL), cplain };
	EXPECT_TRUE(objs[n - 1].p != NULL, "plain cache alloc");
	objs[n++] = (struct obj){ kmalloc_ok(20000, GFP_KERNEL), NULL };
	expect_back(a, &a0, "unaccounted allocations charge nothing");

	/* __GFP_ACCOUNT kmalloc: kmalloc-cg-N, s->size + 8 each */
	for (unsigned int rep = 0; rep < 3; rep++)
		for (unsigned int i = 0; i < NR_KSIZES; i++) {
			objs[n++] = (struct obj){ kmalloc_ok(ksizes[i], GFP_KERNEL_ACCOUNT), NULL };
			eu += ref_full(ksizes[i]);
			small += ref_full(ksizes[i]);
		}
	objs[n++] = (struct obj){ kzalloc(500, GFP_KERNEL_ACCOUNT), NULL };
	EXPECT_TRUE(objs[n - 1].p != NULL, "kzalloc");
	eu += ref_full(500);
	small += ref_full(500);
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + eu, "slab_unreclaimable after kmalloc");
	DEFER_EQ(stv(a, "slab_reclaimable"), a0.v[K_SLAB_R], "slab_reclaimable unchanged");
	DEFER_EQ(stv(a, "slab"), a0.v[K_SLAB] + eu, "slab = reclaimable + unreclaimable");

	/* __GFP_RECLAIMABLE | __GFP_ACCOUNT: kmalloc-rcl-N, reclaimable */
	for (unsigned int i = 0; i < NR_KSIZES; i++) {
		objs[n++] = (struct obj){ kmalloc_ok(ksizes[i], GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE), NULL };
		er += ref_full(ksizes[i]);
		small += ref_full(ksizes[i]);
	}
	DEFER_EQ(stv(a, "slab_reclaimable"), a0.v[K_SLAB_R] + er, "slab_reclaimable after rcl kmalloc");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + eu, "slab_unreclaimable unchanged by rcl");

	/* dedicated caches */
	for (unsigned int i = 0; i < 10; i++) {
		objs[n++] = (struct obj){ kmem_cache_alloc(cacct, GFP_KERNEL), cacct };
		EXPECT_TRUE(objs[n - 1].p != NULL, "SLAB_ACCOUNT cache alloc");
		eu += cache_size(cacct) + 8;
		small += cache_size(cacct) + 8;
		objs[n++] = (struct obj){ kmem_cache_alloc(crcl, GFP_KERNEL), crcl };
		EXPECT_TRUE(objs[n - 1].p != NULL, "SLAB_RECLAIM_ACCOUNT cache alloc");
		er += cache_size(crcl) + 8;
		small += cache_size(crcl) + 8;
		objs[n++] = (struct obj){ kmem_cache_alloc(cplain, GFP_KERNEL_ACCOUNT), cplain };
		EXPECT_TRUE(objs[n - 1].p != NULL, "__GFP_ACCOUNT cache alloc");
		eu += cache_size(cplain) + 8;
		small += cache_size(cplain) + 8;
	}
	DEFER_EQ(cache_size(cacct), 2368, "2312-byte SLAB_HWCACHE_ALIGN stride (docs/kernel-slab.md §2.6)");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + eu, "slab_unreclaimable after caches");
	DEFER_EQ(stv(a, "slab_reclaimable"), a0.v[K_SLAB_R] + er, "slab_reclaimable after caches");

	/* large kmalloc: whole pages, slab_unreclaimable (even with
	 * __GFP_RECLAIMABLE, docs/kernel-slab.md §1.4) and kernel */
	for (unsigned int i = 0; i < NR_LARGE; i++) {
		objs[n++] = (struct obj){ kmalloc_ok(large_sizes[i], GFP_KERNEL_ACCOUNT), NULL };
		eu += ref_kmalloc_bytes(large_sizes[i]);
		large += ref_kmalloc_bytes(large_sizes[i]);
	}
	objs[n++] = (struct obj){ kmalloc_ok(9000, GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE), NULL };
	eu += 16384;
	large += 16384;
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + eu, "slab_unreclaimable after large");
	DEFER_EQ(stv(a, "slab_reclaimable"), a0.v[K_SLAB_R] + er, "slab_reclaimable after large");
	DEFER_EQ(stv(a, "slab"), a0.v[K_SLAB] + eu + er, "slab");
	/* the root's memory.stat is hierarchical */
	DEFER_EQ(stv(root, "slab_unreclaimable"), r0.v[K_SLAB_U] + eu, "root slab_unreclaimable");
	DEFER_EQ(stv(root, "slab_reclaimable"), r0.v[K_SLAB_R] + er, "root slab_reclaimable");

	memcg_drain();
	DEFER_EQ(stv(a, "kernel"), roundup_pg(small) + large,
		 "kernel after drain: whole pages for the object bytes + large kmalloc pages");
	DEFER_EQ(cur(a), stv(a, "kernel"), "memory.current == kernel after drain");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + eu, "slab_unreclaimable after drain");
	expect_memcg_check("with live objects");

	/* free: half from the task, half from the daemon */
	for (unsigned int i = 0; i < n; i++) {
		memcg_set_current(i & 1 ? NULL : t);
		free_obj(&objs[i]);
	}
	memcg_set_current(NULL);
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U], "slab_unreclaimable after free (no drain)");
	DEFER_EQ(stv(a, "slab_reclaimable"), a0.v[K_SLAB_R], "slab_reclaimable after free (no drain)");
	memcg_drain();
	expect_back(a, &a0, "a after free + drain");
	expect_back(root, &r0, "root after free + drain");

	EXPECT_EQ(kmem_cache_destroy(cacct), 0, "destroy");
	EXPECT_EQ(kmem_cache_destroy(crcl), 0, "destroy");
	EXPECT_EQ(kmem_cache_destroy(cplain), 0, "destroy");
	task_exit_checked(t, "t");
	rm(a);
}

/* ================================================================== */
/* Group: page types                                                   */

static void test_page_types(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(120, a);
	struct page *pg[NR_MEMCG_PAGE_TYPES];
	struct snap a0;

	(void)state;
	pin(1);
	take(a, &a0);
	memcg_set_current(t);
	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++)
		pg[i] = pages((enum memcg_page_type)i, 1);	/* 2 pages each */
	memcg_drain();
	DEFER_EQ(stv(a, "anon"), 8192, "anon");
	DEFER_EQ(stv(a, "file"), 8192 + 8192, "file (includes shmem)");
	DEFER_EQ(stv(a, "shmem"), 8192, "shmem");
	DEFER_EQ(stv(a, "kernel_stack"), 8192, "kernel_stack");
	DEFER_EQ(stv(a, "pagetables"), 8192, "pagetables");
	DEFER_EQ(stv(a, "percpu"), 8192, "percpu");
	DEFER_EQ(stv(a, "sock"), 8192, "sock");
	DEFER_EQ(stv(a, "vmalloc"), 8192, "vmalloc");
	DEFER_EQ(stv(a, "kernel"), 4 * 8192, "kernel = kernel_stack + pagetables + percpu + vmalloc pages");
	DEFER_EQ(stv(a, "slab"), 0, "slab");
	/* LRU: anon and shmem (swap-backed) on the anon lists, file on the file lists */
	DEFER_EQ(stv(a, "inactive_anon") + stv(a, "active_anon"), 8192 + 8192,
		 "anon LRU = anon + shmem");
	DEFER_EQ(stv(a, "inactive_file") + stv(a, "active_file"), 8192, "file LRU = file - shmem");
	DEFER_EQ(stv(a, "unevictable"), 0, "unevictable");
	DEFER_EQ(cur(a), stv(a, "kernel") + stv(a, "anon") + stv(a, "file") + stv(a, "sock"),
		 "memory.current == kernel + anon + file + sock");
	DEFER_EQ(cur(a), 8 * 8192, "memory.current = 16 pages");
	/* task-owned pages: anon, kernel_stack, pagetables */
	DEFER_EQ(memcg_task_owned_pages(t), 6, "owned pages");

	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++)
		free_pg(pg[i]);
	DEFER_EQ(memcg_task_owned_pages(t), 0, "owned pages after free");
	memcg_drain();
	expect_back(a, &a0, "after free + drain");
	memcg_set_current(NULL);
	task_exit_checked(t, "t");
	rm(a);
}

static void test_task_exit_frees_owned(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(121, a);
	struct page *f, *pc, *an;
	uint64_t an_id;
	struct snap a0;

	(void)state;
	pin(0);
	take(a, &a0);
	memcg_set_current(t);
	an = pages(MEMCG_PAGE_ANON, 1);
	an_id = memcg_page_id(an);
	pages(MEMCG_PAGE_KERNEL_STACK, 0);
	pages(MEMCG_PAGE_PAGETABLES, 0);
	f = pages(MEMCG_PAGE_FILE, 0);
	pc = pages(MEMCG_PAGE_PERCPU, 0);
	DEFER_EQ(memcg_task_owned_pages(t), 4, "owned pages: anon 2 + stack 1 + pagetables 1");
	memcg_set_current(NULL);
	memcg_task_exit(t);
	memcg_drain();
	DEFER_EQ(stv(a, "anon"), 0, "anon freed at exit");
	DEFER_EQ(stv(a, "kernel_stack"), 0, "kernel_stack freed at exit");
	DEFER_EQ(stv(a, "pagetables"), 0, "pagetables freed at exit");
	DEFER_EQ(stv(a, "file"), PG, "file survives the exit");
	DEFER_EQ(stv(a, "percpu"), PG, "percpu survives the exit");
	DEFER_EQ(cur(a), 2 * PG, "memory.current after exit + drain");
	DEFER_EQ(memcg_free_pages(an, an_id), -ENOENT, "free of a page the exit took");
	free_pg(f);
	free_pg(pc);
	memcg_drain();
	expect_back(a, &a0, "after all freed");
	rm(a);
}

/* ================================================================== */
/* Group: cross-cgroup frees, migration                                */

static void test_cross_cgroup_free(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct memcg_task *ta = mktask(130, a), *tb = mktask(131, b);
	struct kmem_cache *c = mkcache("t_cross", 500, SLAB_ACCOUNT);
	void *p[64], *q[16];
	struct page *pg[4];
	struct snap a0, b0;
	unsigned long long bytes = 0;

	(void)state;
	pin(0);
	take(a, &a0);
	take(b, &b0);
	memcg_set_current(ta);
	for (unsigned int i = 0; i < 64; i++) {
		p[i] = kmalloc_ok(ksizes[i % NR_KSIZES], GFP_KERNEL_ACCOUNT);
		bytes += ref_full(ksizes[i % NR_KSIZES]);
	}
	for (unsigned int i = 0; i < 16; i++) {
		q[i] = kmem_cache_alloc(c, GFP_KERNEL);
		EXPECT_TRUE(q[i] != NULL, "cache alloc");
		bytes += cache_size(c) + 8;
	}
	pg[0] = pages(MEMCG_PAGE_FILE, 0);
	pg[1] = pages(MEMCG_PAGE_VMALLOC, 0);
	pg[2] = pages(MEMCG_PAGE_SOCK, 0);
	pg[3] = pages(MEMCG_PAGE_SHMEM, 0);
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + bytes, "a slab");

	/* b's task frees everything, on another CPU */
	pin(3);
	memcg_set_current(tb);
	for (unsigned int i = 0; i < 64; i++)
		kfree(p[i]);
	for (unsigned int i = 0; i < 16; i++)
		kmem_cache_free(c, q[i]);
	for (unsigned int i = 0; i < 4; i++)
		free_pg(pg[i]);
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U], "a slab back (no drain)");
	DEFER_EQ(stv(a, "file"), a0.v[K_FILE], "a file back");
	DEFER_EQ(stv(a, "vmalloc"), a0.v[K_VMALLOC], "a vmalloc back");
	DEFER_EQ(stv(a, "sock"), a0.v[K_SOCK], "a sock back");
	memcg_drain();
	expect_back(a, &a0, "a after the foreign free + drain");
	expect_back(b, &b0, "b untouched by freeing a's objects");

	memcg_set_current(NULL);
	EXPECT_EQ(kmem_cache_destroy(c), 0, "destroy");
	task_exit_checked(ta, "ta");
	task_exit_checked(tb, "tb");
	rm(a);
	rm(b);
}

/*
 * An objcg's refcnt is a percpu_ref: live, gets and puts land on per-CPU
 * counters (rseq) and the count reads exactly; killed at reparenting, it
 * turns atomic a grace period later with the same count, and a tryget
 * still succeeds while references remain.
 */
static void test_objcg_percpu_ref(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *a = mk(p);
	struct obj_cgroup *o = atomic_load(&a->objcg);
	long r0;

	(void)state;
	assert_non_null(o);
	memcg_drain();
	r0 = percpu_ref_read(&o->refcnt);
	DEFER_TRUE(r0 >= 1, "a live objcg has references");
	DEFER_TRUE(!percpu_ref_is_dying(&o->refcnt), "live: per-CPU mode");
	for (unsigned int cpu = 0; cpu < 4; cpu++) {
		pin(cpu);
		obj_cgroup_get(o);
		DEFER_TRUE(obj_cgroup_tryget(o), "tryget of a live objcg");
	}
	DEFER_EQ(percpu_ref_read(&o->refcnt), r0 + 8, "eight more, over four CPUs");
	for (unsigned int cpu = 0; cpu < 4; cpu++) {
		pin(3 - cpu);
		obj_cgroup_put(o);
	}
	DEFER_EQ(percpu_ref_read(&o->refcnt), r0 + 4, "four of them put on other CPUs");
	rm(a);		/* reparented: killed, the initial reference dropped */
	DEFER_TRUE(percpu_ref_is_dying(&o->refcnt), "killed");
	memcg_reap_now();	/* the switch's grace period */
	/* held: our four, and whatever a still holds (its orig_objcg until it is freed) */
	DEFER_TRUE(atomic_load(&o->refcnt.count) >= 4 &&
		   atomic_load(&o->refcnt.count) < PERCPU_COUNT_BIAS / 2,
		   "atomic and exact after the switch");
	DEFER_TRUE(obj_cgroup_tryget(o), "tryget while references remain");
	for (int i = 0; i < 5; i++)
		obj_cgroup_put(o);
	pin(0);
	memcg_drain();
	rm(p);
	DEFER_TRUE(wait_dying(root_mem_cgroup(), 0), "both reaped (the objcg freed)");
	expect_memcg_check("after the reap");
}

/*
 * A root task charges nothing, and alloc skips the hook for it without a
 * call (memcg_current_objcg): moved into a child while it is current, its
 * next allocation is the child's, and moved back it charges nothing again.
 */
static void test_root_task_moved_while_current(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(103, root_mem_cgroup());
	unsigned long long a0 = stv(a, "slab_unreclaimable");
	void *p[3];

	(void)state;
	memcg_set_current(t);
	p[0] = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	DEFER_TRUE(alloc_obj_objcg(p[0]) == NULL, "a root task's object has no objcg");
	EXPECT_EQ(memcg_task_attach(t, a), 0, "move it into a, still current");
	p[1] = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	DEFER_TRUE(alloc_obj_objcg(p[1]) != NULL, "its next object has an objcg");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0 + 72, "... charged to a");
	EXPECT_EQ(memcg_task_attach(t, root_mem_cgroup()), 0, "back to the root");
	p[2] = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	DEFER_TRUE(alloc_obj_objcg(p[2]) == NULL, "charged nothing again");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0 + 72, "a unchanged");
	for (int i = 0; i < 3; i++)
		kfree(p[i]);
	memcg_set_current(NULL);
	memcg_task_exit(t);
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0, "a after the frees");
}

static void test_migration(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(140, a);
	void *x[32], *y[32];
	struct page *xa, *xk, *ya;
	unsigned long long bytes = 0;
	struct snap a0, b0, a1;

	(void)state;
	pin(2);
	take(a, &a0);
	take(b, &b0);
	memcg_set_current(t);
	for (unsigned int i = 0; i < 32; i++) {
		x[i] = kmalloc_ok(ksizes[(i * 7) % NR_KSIZES], GFP_KERNEL_ACCOUNT);
		bytes += ref_full(ksizes[(i * 7) % NR_KSIZES]);
	}
	xa = pages(MEMCG_PAGE_ANON, 0);
	xk = pages(MEMCG_PAGE_KERNEL_STACK, 0);
	memcg_drain();
	take(a, &a1);

	EXPECT_EQ(memcg_task_attach(t, b), 0, "migrate to b");
	DEFER_TRUE(memcg_task_memcg(t) == b, "task now in b");
	memcg_drain();
	expect_back(a, &a1, "a keeps its charges after the migration");
	expect_back(b, &b0, "b gets nothing from the migration");

	/* new charges go to b (the cached objcg pointer was invalidated) */
	for (unsigned int i = 0; i < 32; i++)
		y[i] = kmalloc_ok(200, GFP_KERNEL_ACCOUNT);
	ya = pages(MEMCG_PAGE_ANON, 0);
	DEFER_EQ(stv(b, "slab_unreclaimable"), b0.v[K_SLAB_U] + 32 * ref_full(200), "b slab");
	DEFER_EQ(stv(b, "anon"), b0.v[K_ANON] + PG, "b anon");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a1.v[K_SLAB_U], "a slab unchanged by new charges");
	DEFER_EQ(stv(a, "anon"), a1.v[K_ANON], "a anon unchanged by new charges");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0.v[K_SLAB_U] + bytes, "a slab = the old objects");

	/* old objects freed by the migrated task uncharge a */
	for (unsigned int i = 0; i < 32; i++)
		kfree(x[i]);
	free_pg(xa);
	free_pg(xk);
	memcg_drain();
	expect_back(a, &a0, "a after freeing the pre-migration objects");
	DEFER_EQ(stv(b, "slab_unreclaimable"), b0.v[K_SLAB_U] + 32 * ref_full(200), "b slab kept");

	/* migrate back and forth a few times, allocating in between */
	for (unsigned int r = 0; r < 6; r++) {
		struct mem_cgroup *to = r & 1 ? b : a;
		void *z;

		EXPECT_EQ(memcg_task_attach(t, to), 0, "migrate");
		z = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
		DEFER_EQ(stv(to, "slab_unreclaimable"),
			 (to == a ? a0.v[K_SLAB_U] : b0.v[K_SLAB_U] + 32 * ref_full(200)) + 72,
			 "round %u: the charge lands in the task's current memcg", r);
		kfree(z);
	}

	for (unsigned int i = 0; i < 32; i++)
		kfree(y[i]);
	free_pg(ya);
	memcg_drain();
	expect_back(a, &a0, "a at the end");
	expect_back(b, &b0, "b at the end");
	memcg_set_current(NULL);
	task_exit_checked(t, "t");
	rm(a);
	rm(b);
}

/*
 * Two threads migrate one task between a and b, one of them charging as
 * the task, while a third migrates another task.  Each memcg must count
 * exactly the tasks attached to it (memcg_check) and empty out so rmdir
 * succeeds: attaches that read the old memcg outside the lock that swaps
 * it uncounted a task twice.
 */
struct attach_race {
	struct memcg_task *t;
	struct mem_cgroup *to[2];
	unsigned int rounds, charge;
	int failed;
};

static void *attach_race_thread(void *arg)
{
	struct attach_race *r = arg;

	memcg_set_current(r->charge ? r->t : NULL);
	for (unsigned int i = 0; i < r->rounds; i++) {
		int err = memcg_task_attach(r->t, r->to[i & 1]);

		if (err)
			r->failed = err;
		if (r->charge)
			kfree(kmalloc(64, GFP_KERNEL_ACCOUNT));
	}
	memcg_set_current(NULL);
	return NULL;
}

static void test_attach_races(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup()), *b = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(150, a), *u = mktask(151, b);
	struct attach_race r[3] = {
		{ .t = t, .to = { a, b }, .rounds = 20000, .charge = 1 },
		{ .t = t, .to = { b, a }, .rounds = 20000 },
		{ .t = u, .to = { a, b }, .rounds = 20000 },
	};
	pthread_t th[3];

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, attach_race_thread, &r[i]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(r[i].failed, 0, "thread %d's attaches", i);
	memcg_drain();
	expect_memcg_check("after racing attaches");
	EXPECT_EQ(memcg_task_attach(t, root_mem_cgroup()), 0, "move t out");
	EXPECT_EQ(memcg_task_attach(u, root_mem_cgroup()), 0, "move u out");
	expect_memcg_check("after moving the tasks to the root");
	task_exit_checked(t, "t");
	task_exit_checked(u, "u");
	expect_memcg_check("after the exits");
	rm(a);
	rm(b);
}

/* ================================================================== */
/* Group: rmdir, dying memcgs, mkdir charges                           */

static void test_rmdir_with_live_objects(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *g = mk(root), *p = mk(g), *c;
	struct memcg_task *t;
	struct snap g0, p0, p1, p2, g2;
	void *obj[40];
	struct page *fp, *pp;
	unsigned long long bytes = 0, rbytes = 0;
	unsigned long d, y;

	(void)state;
	pin(0);
	memcg_drain();
	take(g, &g0);
	take(p, &p0);
	c = mk(p);
	memcg_drain();
	take(p, &p1);
	t = mktask(150, c);
	memcg_set_current(t);
	for (unsigned int i = 0; i < 40; i++) {
		gfp_t gfp = GFP_KERNEL_ACCOUNT | (i % 4 == 0 ? __GFP_RECLAIMABLE : 0);

		obj[i] = kmalloc_ok(ksizes[(i * 5) % NR_KSIZES], gfp);
		if (i % 4 == 0)
			rbytes += ref_full(ksizes[(i * 5) % NR_KSIZES]);
		else
			bytes += ref_full(ksizes[(i * 5) % NR_KSIZES]);
	}
	fp = pages(MEMCG_PAGE_FILE, 1);		/* charged directly: keeps c alive */
	pp = pages(MEMCG_PAGE_PERCPU, 0);	/* through the objcg */
	memcg_drain();
	take(p, &p2);
	take(g, &g2);
	DEFER_EQ(p2.v[K_SLAB_U], p1.v[K_SLAB_U] + bytes, "p holds c's objects");
	DEFER_EQ(p2.v[K_SLAB_R], p1.v[K_SLAB_R] + rbytes, "p holds c's reclaimable objects");

	/* rmdir needs the cgroup empty (the -EBUSY case: test_tree_basics) */
	EXPECT_EQ(memcg_task_attach(t, p), 0, "move the task out");
	memcg_set_current(NULL);
	rm(c);
	mem_cgroup_descendants(p, &d, &y);
	DEFER_EQ(d, 0, "p nr_descendants after rmdir");
	DEFER_EQ(y, 1, "p nr_dying after rmdir");
	mem_cgroup_descendants(g, &d, &y);
	DEFER_EQ(d, 1, "g nr_descendants after rmdir");
	DEFER_EQ(y, 1, "g nr_dying after rmdir");
	mem_cgroup_descendants(root, &d, &y);
	DEFER_EQ(y, 1, "root nr_dying after rmdir");
	memcg_drain();
	/* no counter moved: the parent and the grandparent still hold it all */
	expect_back(p, &p2, "p after rmdir + drain");
	expect_back(g, &g2, "g after rmdir + drain");
	/* file pages are charged directly to c: it stays dying */
	usleep(100000);
	mem_cgroup_descendants(p, &d, &y);
	DEFER_EQ(y, 1, "still dying while its file pages live");

	/* frees uncharge the parent's chain (reparented objcg), from anyone */
	for (unsigned int i = 0; i < 40; i++) {
		memcg_set_current(i & 1 ? t : NULL);
		kfree(obj[i]);
	}
	memcg_set_current(NULL);
	DEFER_EQ(stv(p, "slab_unreclaimable"), p1.v[K_SLAB_U], "p slab after the frees");
	DEFER_EQ(stv(p, "slab_reclaimable"), p1.v[K_SLAB_R], "p reclaimable slab after the frees");
	DEFER_EQ(stv(g, "slab_unreclaimable"), g2.v[K_SLAB_U] - bytes, "g slab after the frees");
	free_pg(pp);
	free_pg(fp);
	memcg_drain();
	DEFER_TRUE(wait_dying(root, 0), "c reaped after its last page went");
	mem_cgroup_descendants(p, &d, &y);
	DEFER_EQ(d + y, 0, "p has no descendants left");
	memcg_drain();
	expect_back(p, &p0, "p back to its start (c's mkdir charges gone too)");
	expect_back(g, &g0, "g back to its start");
	DEFER_EQ(cur(p), p0.usage, "p memory.current back");

	task_exit_checked(t, "t");
	rm(p);
	rm(g);
	DEFER_TRUE(wait_dying(root, 0), "all reaped");
}

/*
 * RCU lifetimes: a reader that found a memcg without a reference (the
 * objcg's memcg, inside a read-side section) and is held up for 200 ms
 * while the memcg's last reference goes still reads it whole: the free
 * waits for the end of its section.  A free after a fixed time (the old
 * 20 ms grace) had the reader read the memcg's freed PSI group: a
 * use-after-free under ASan.
 */
struct rcu_reader {
	struct obj_cgroup *objcg;
	_Atomic int stage;		/* 1: in the section, 2: done */
	unsigned short id;
	int pressure_len;
};

static void *rcu_reader_main(void *arg)
{
	struct rcu_reader *r = arg;
	struct mem_cgroup *m;
	char buf[256];

	memcg_rcu_read_lock();
	m = obj_cgroup_memcg(r->objcg);
	r->id = mem_cgroup_id(m);
	atomic_store(&r->stage, 1);
	usleep(200 * 1000);
	/* the memcg and what it points to, after its last put */
	if (mem_cgroup_id(m) != r->id)
		r->id = 0;
	r->pressure_len = memcg_pressure_format(m, buf, sizeof(buf));
	memcg_rcu_read_unlock();
	atomic_store(&r->stage, 2);
	return NULL;
}

static void test_rcu_reader_outlives_last_put(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *p = mk(root), *c = mk(p);
	struct memcg_task *t = mktask(152, c);
	struct rcu_reader r = { .stage = 0 };
	unsigned short id = mem_cgroup_id(c);
	unsigned long d, y;
	pthread_t th;
	void *obj;

	(void)state;
	memcg_set_current(t);
	obj = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	memcg_set_current(NULL);
	r.objcg = alloc_obj_objcg(obj);
	EXPECT_TRUE(r.objcg && obj_cgroup_memcg(r.objcg) == c, "the object's objcg charges c");
	EXPECT_EQ(pthread_create(&th, NULL, rcu_reader_main, &r), 0, "reader thread");
	while (atomic_load(&r.stage) < 1)
		usleep(1000);
	/* every reference on c goes: its task leaves, rmdir reparents the objcg */
	EXPECT_EQ(memcg_task_attach(t, p), 0, "move the task out");
	rm(c);
	for (int i = 0; i < 10 && atomic_load(&r.stage) < 2; i++) {
		usleep(20 * 1000);
		memcg_drain();		/* where the timer's reaping ran */
		mem_cgroup_descendants(p, &d, &y);
		DEFER_TRUE(atomic_load(&r.stage) == 2 || y == 1,
			   "c is not freed while the reader is in its section (%lu dying)", y);
	}
	pthread_join(th, NULL);
	DEFER_EQ(r.id, id, "the reader read c's id after its last put");
	DEFER_TRUE(r.pressure_len > 0, "... and its PSI group");
	DEFER_TRUE(wait_dying(p, 0), "c freed once the reader left its section");
	kfree(obj);
	memcg_drain();
	task_exit_checked(t, "t");
	rm(p);
	DEFER_TRUE(wait_dying(root, 0), "all reaped");
}

/* A dying memcg that only held objcg-charged memory is freed promptly
 * (docs/design.md, Decisions: test_kmem_dead_cgroups); the parent keeps the charges. */
static void test_rmdir_kmem_only_reaped(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *p = mk(root), *c;
	struct memcg_task *t;
	struct snap p0;
	void *obj[100];
	struct page *ks;
	unsigned long long bytes = 0;
	unsigned long d, y;

	(void)state;
	pin(1);
	take(p, &p0);
	c = mk(p);
	t = mktask(151, c);
	memcg_set_current(t);
	for (unsigned int i = 0; i < 100; i++) {
		obj[i] = kmalloc_ok(ksizes[i % NR_KSIZES], GFP_KERNEL_ACCOUNT);
		bytes += ref_full(ksizes[i % NR_KSIZES]);
	}
	ks = pages(MEMCG_PAGE_VMALLOC, 2);
	EXPECT_EQ(memcg_task_attach(t, p), 0, "move the task out");
	memcg_set_current(NULL);
	rm(c);
	DEFER_TRUE(wait_dying(p, 0), "a kmem-only dying memcg is reaped while its objects live");
	mem_cgroup_descendants(root, &d, &y);
	DEFER_EQ(y, 0, "root nr_dying");
	memcg_drain();
	DEFER_EQ(stv(p, "slab_unreclaimable"), p0.v[K_SLAB_U] + bytes,
		 "the parent holds the live objects (mkdir charges of c gone)");
	DEFER_EQ(stv(p, "vmalloc"), p0.v[K_VMALLOC] + 4 * PG, "the parent holds the vmalloc pages");
	DEFER_EQ(cur(p), stv(p, "kernel") + stv(p, "anon") + stv(p, "file") + stv(p, "sock"),
		 "p memory.current == kernel + anon + file + sock");
	for (unsigned int i = 0; i < 100; i++)
		kfree(obj[i]);
	free_pg(ks);
	memcg_drain();
	expect_back(p, &p0, "p back to its start");
	task_exit_checked(t, "t");
	rm(p);
	DEFER_TRUE(wait_dying(root, 0), "all reaped");
}

static void test_mkdir_charges(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *p, *c[8];
	struct snap r0, r1, p0, p1, cs;
	unsigned long long pc1, sl1, cu1;

	(void)state;
	memcg_drain();
	take(root, &r0);
	/* a child of the root charges nothing */
	p = mk(root);
	memcg_drain();
	take(root, &r1);
	snap_eq(&r1, &r0, "root after creating a child of the root");
	take(p, &p0);
	for (unsigned int i = 0; i < NR_STATE_KEYS; i++)
		DEFER_EQ(p0.v[i], 0, "fresh child of root: %s", stat_keys[i]);
	DEFER_EQ(p0.usage, 0, "fresh child of root: memory.current");

	/* a child of a non-root memcg charges its parent: percpu and slab */
	c[0] = mk(p);
	memcg_drain();
	take(p, &p1);
	DEFER_TRUE(p1.v[K_PERCPU] > p0.v[K_PERCPU], "parent percpu rises at mkdir (%llu -> %llu)",
		   p0.v[K_PERCPU], p1.v[K_PERCPU]);
	DEFER_TRUE(p1.v[K_SLAB] > p0.v[K_SLAB], "parent slab rises at mkdir (%llu -> %llu)",
		   p0.v[K_SLAB], p1.v[K_SLAB]);
	DEFER_TRUE(p1.v[K_SLAB_U] > p0.v[K_SLAB_U], "parent slab_unreclaimable rises at mkdir");
	DEFER_TRUE(p1.v[K_KERNEL] > p0.v[K_KERNEL], "parent kernel rises at mkdir");
	DEFER_TRUE(p1.usage > p0.usage, "parent memory.current rises at mkdir");
	DEFER_EQ(p1.v[K_KERNEL], roundup_pg(p1.v[K_PERCPU] + p1.v[K_SLAB]),
		 "kernel = whole pages for the percpu + slab bytes (after drain)");
	DEFER_EQ(p1.usage, p1.v[K_KERNEL], "memory.current == kernel");
	take(c[0], &cs);
	for (unsigned int i = 0; i < NR_STATE_KEYS; i++)
		DEFER_EQ(cs.v[i], 0, "the new child's own stats: %s", stat_keys[i]);
	pc1 = p1.v[K_PERCPU] - p0.v[K_PERCPU];
	sl1 = p1.v[K_SLAB] - p0.v[K_SLAB];
	cu1 = p1.usage;

	/* more children: linear in the number of children */
	for (unsigned int i = 1; i < 8; i++)
		c[i] = mk(p);
	memcg_drain();
	DEFER_EQ(stv(p, "percpu"), p0.v[K_PERCPU] + 8 * pc1, "percpu for 8 children");
	DEFER_EQ(stv(p, "slab"), p0.v[K_SLAB] + 8 * sl1, "slab for 8 children");
	DEFER_TRUE(cur(p) >= cu1, "memory.current grows");
	DEFER_EQ(stv(root, "percpu"), r0.v[K_PERCPU] + 8 * pc1, "root's hierarchical percpu");

	for (unsigned int i = 0; i < 8; i++)
		rm(c[i]);
	DEFER_TRUE(wait_dying(root, 0), "children reaped");
	memcg_drain();
	expect_back(p, &p0, "parent after its children are gone");
	rm(p);
	DEFER_TRUE(wait_dying(root, 0), "all reaped");
	memcg_drain();
	expect_back(root, &r0, "root at the end");
}

/* ================================================================== */
/* Group: root never charged                                           */

static void test_root_not_charged(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a = mk(root);
	struct memcg_task *tr = mktask(160, root), *ta = mktask(161, a);
	struct kmem_cache *c = mkcache("t_root_acct", 256, SLAB_ACCOUNT);
	struct obj objs[200];
	struct page *pg[2 * NR_MEMCG_PAGE_TYPES];
	unsigned int n = 0, np = 0;
	unsigned long ru0;
	struct snap r0, a0;
	struct memcg_open *o = NULL;
	/*
	 * Slab objects and large kmallocs of a context without an objcg are
	 * not accounted at all (docs/kernel-slab.md §4.1, §1.4): the root's slab keys
	 * stay.  Which memory.stat keys count the root's typed pages is not
	 * in docs/kernel-*.md (the kernel counts root anon/file in the root's stats,
	 * not its kernel stacks, page tables, percpu, vmalloc or sock): only
	 * reported.
	 */
	static const int root_keys[] = { K_SLAB_R, K_SLAB_U, K_SLAB };
	static const int root_info_keys[] = {
		K_KERNEL, K_KSTACK, K_PT, K_PERCPU, K_SOCK, K_VMALLOC, K_ANON, K_FILE, K_SHMEM,
	};

	(void)state;
	DEFER_EQ(memcg_file_open(file_of("memory.current"), root, &o), -ENOENT,
		 "the root has no memory.current");
	if (o)
		memcg_file_release(o);

	pin(0);
	memcg_drain();
	take(root, &r0);
	take(a, &a0);
	ru0 = mem_cgroup_usage_pages(root);
	for (unsigned int who = 0; who < 2; who++) {
		memcg_set_current(who ? tr : NULL);
		for (unsigned int i = 0; i < NR_KSIZES; i++) {
			objs[n++] = (struct obj){ kmalloc_ok(ksizes[i], GFP_KERNEL_ACCOUNT), NULL };
			objs[n++] = (struct obj){ kmalloc_ok(ksizes[i], GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE), NULL };
		}
		objs[n++] = (struct obj){ kmalloc_ok(20000, GFP_KERNEL_ACCOUNT), NULL };
		for (unsigned int i = 0; i < 5; i++) {
			objs[n] = (struct obj){ kmem_cache_alloc(c, GFP_KERNEL), c };
			EXPECT_TRUE(objs[n].p != NULL, "cache alloc");
			n++;
		}
		/* typed pages only from the daemon: a root task's owned pages
		 * are exercised by test_task_exit_after_foreign_free */
		if (!who)
			for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++)
				pg[np++] = pages((enum memcg_page_type)i, 0);
	}
	memcg_drain();
	expect_back(a, &a0, "a child is unaffected by root allocations");
	DEFER_EQ(mem_cgroup_usage_pages(root), ru0, "root usage unchanged");
	for (unsigned int i = 0; i < sizeof(root_keys) / sizeof(root_keys[0]); i++)
		DEFER_EQ(stv(root, stat_keys[root_keys[i]]), r0.v[root_keys[i]],
			 "root %s unchanged by root allocations", stat_keys[root_keys[i]]);
	for (unsigned int i = 0; i < sizeof(root_info_keys) / sizeof(root_info_keys[0]); i++) {
		unsigned long long v = stv(root, stat_keys[root_info_keys[i]]);

		if (v != r0.v[root_info_keys[i]])
			print_message("  note: root %s %llu -> %llu with the daemon's typed pages "
				      "(not specified; not a failure)\n", stat_keys[root_info_keys[i]],
				      r0.v[root_info_keys[i]], v);
	}

	/* a child's task freeing root objects uncharges nothing */
	memcg_set_current(ta);
	for (unsigned int i = 0; i < n; i++)
		free_obj(&objs[i]);
	for (unsigned int i = 0; i < np; i++)
		free_pg(pg[i]);
	memcg_drain();
	expect_back(a, &a0, "a after freeing root objects");
	expect_back(root, &r0, "root after everything freed");

	/* and a's own allocations still charge a (sanity) */
	objs[0].p = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
	DEFER_EQ(stv(a, "slab_unreclaimable"), 72, "a still charged for its own task");
	kfree(objs[0].p);
	memcg_set_current(NULL);
	memcg_drain();
	expect_back(a, &a0, "a at the end");
	EXPECT_EQ(kmem_cache_destroy(c), 0, "destroy");
	task_exit_checked(tr, "tr");
	task_exit_checked(ta, "ta");
	rm(a);
}

/*
 * A task's owned pages (anon, kernel_stack, pagetables) freed by someone
 * else before the task exits: the exit must not touch them again.  Run in a
 * child process with an alarm, so that a hang is reported as a failure
 * instead of stopping the whole program.
 */
static int owned_pages_child(bool root_task)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(165, root_task ? root_mem_cgroup() : a);
	struct memcg_task *u = mktask(166, a);
	struct page *pg[3];
	int bad = 0;

	pin(0);
	memcg_set_current(t);
	pg[0] = pages(MEMCG_PAGE_ANON, 1);
	pg[1] = pages(MEMCG_PAGE_KERNEL_STACK, 0);
	pg[2] = pages(MEMCG_PAGE_PAGETABLES, 0);
	if (memcg_task_owned_pages(t) != 4) {
		printf("  owned pages after allocating: %lu, expected 4\n", memcg_task_owned_pages(t));
		bad++;
	}
	memcg_set_current(u);
	for (unsigned int i = 0; i < 3; i++)
		free_pg(pg[i]);
	if (memcg_task_owned_pages(t) != 0) {
		printf("  owned pages after another task freed them: %lu, expected 0\n",
		       memcg_task_owned_pages(t));
		bad++;
	}
	memcg_set_current(NULL);
	printf("  exiting the %s task\n", root_task ? "root" : "child's");
	fflush(stdout);
	memcg_task_exit(t);
	memcg_drain();
	if (!root_task && (stv(a, "anon") || stv(a, "kernel_stack") || stv(a, "pagetables"))) {
		printf("  a's anon/kernel_stack/pagetables not back to 0\n");
		bad++;
	}
	memcg_task_exit(u);
	return bad;
}

static void run_forked(int (*fn)(bool), bool arg, const char *what)
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	fflush(stderr);
	memcg_before_fork();
	pid = fork();
	memcg_after_fork(pid == 0);
	EXPECT_TRUE(pid >= 0, "fork");
	if (pid == 0) {
		int bad;

		alarm(20);
		bad = fn(arg);
		bad += (int)deferred_failures;
		fflush(stdout);
		fflush(stderr);
		_exit(bad ? 2 : 0);
	}
	EXPECT_EQ(waitpid(pid, &st, 0), pid, "waitpid");
	if (WIFSIGNALED(st)) {
		print_error("%s: the child died of signal %d%s\n", what, WTERMSIG(st),
			    WTERMSIG(st) == SIGALRM ? " (hung for 20 s)" : "");
		deferred_failures++;
	} else if (WEXITSTATUS(st) != 0) {
		print_error("%s: failed checks in the child (above)\n", what);
		deferred_failures++;
	}
}

/*
 * Memory charged and freed, nobody reads a statistic, memcg_exit(),
 * alloc_exit(), a new machine and memory controller: the new one must work
 * (memcg_exit "tears everything down").  In a child, with an alarm.
 */
static int reinit_child(bool unused)
{
	struct alloc_config ac;
	struct mem_cgroup *p, *c;
	struct memcg_task *t;
	unsigned long long v = 0;
	void *o;

	(void)unused;
	for (int round = 0; round < 3; round++) {
		p = mk(root_mem_cgroup());
		c = mk(p);
		t = mktask(167, c);
		memcg_set_current(t);
		o = kmalloc_ok(64, GFP_KERNEL_ACCOUNT);
		kfree(o);
		memcg_set_current(NULL);
		memcg_task_exit(t);
		if (round == 2)
			break;
		/* no statistics read since the charges */
		memcg_exit();
		alloc_exit();
		alloc_config_defaults(&ac);
		ac.memory = MACHINE_MEM;
		ac.cpus = 4;
		if (alloc_init(&ac) || memcg_init(NULL)) {
			printf("  re-init failed\n");
			return 1;
		}
		printf("  round %d: machine rebuilt, reading a statistic\n", round + 1);
		fflush(stdout);
		p = mk(root_mem_cgroup());
		if (memcg_stat_read(p, "anon", &v) != 0 || v != 0) {
			printf("  memcg_stat_read on the new machine: %llu\n", v);
			return 1;
		}
	}
	return 0;
}

static void test_reinit_with_pending_stats(void **state)
{
	(void)state;
	run_forked(reinit_child, false, "memcg_exit/alloc_exit/alloc_init/memcg_init with unflushed statistics");
}

static void test_task_exit_after_foreign_free(void **state)
{
	(void)state;
	run_forked(owned_pages_child, false, "child task's owned pages freed by another task, then exit");
	run_forked(owned_pages_child, true, "root task's owned pages freed by another task, then exit");
}

/* ================================================================== */
/* Group: hierarchical sums after random charges                       */

#define TMAX	12

struct tree {
	struct mem_cgroup *m[TMAX];
	struct memcg_task *task[TMAX];
	int parent[TMAX];
	int depth[TMAX];
	int n;
};

enum {
	D_ANON, D_FILE, D_SHMEM, D_KSTACK, D_PT, D_PERCPU, D_SOCK, D_VMALLOC,
	D_SLAB_R, D_SLAB_U, D_LRU_ANON, D_LRU_FILE, D_KPAGES, D_SMALLB, ND
};

enum ikind { I_KMALLOC, I_CACHE, I_PAGES };

struct item {
	enum ikind kind;
	void *p;
	struct kmem_cache *s;
	struct page *pg;
	enum memcg_page_type type;
	unsigned int order;
	int node;			/* charged tree node, -1: not charged */
	unsigned long long small;	/* full bytes of a slab object */
	unsigned long long large;	/* bytes of a large kmalloc */
	bool rcl;
	struct memcg_task *owner;	/* task-owned page (anon, kernel_stack, pagetables) */
	uint64_t id;			/* memcg_page_id() at allocation */
	int tid;			/* allocating thread (concurrency tests) */
};

/* Pages a task owns: freed at its exit (docs/design.md, Decisions). */
static bool owned_type(enum memcg_page_type t)
{
	return t == MEMCG_PAGE_ANON || t == MEMCG_PAGE_KERNEL_STACK || t == MEMCG_PAGE_PAGETABLES;
}

static void tree_add(struct tree *t, int parent)
{
	int i = t->n++;

	t->m[i] = mk(t->m[parent]);
	t->parent[i] = parent;
	t->depth[i] = t->depth[parent] + 1;
	t->task[i] = NULL;
}

static void tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
	t->m[0] = root_mem_cgroup();
	t->parent[0] = -1;
	t->n = 1;
}

static void item_apply(long long d[][ND], const struct item *it, int sign)
{
	long long *x;
	long long b;

	if (it->node < 0)
		return;
	x = d[it->node];
	if (it->kind != I_PAGES) {
		if (it->large) {
			x[D_SLAB_U] += sign * (long long)it->large;
			x[D_KPAGES] += sign * (long long)it->large;
		} else {
			x[it->rcl ? D_SLAB_R : D_SLAB_U] += sign * (long long)it->small;
			x[D_SMALLB] += sign * (long long)it->small;
		}
		return;
	}
	b = sign * (long long)(PG << it->order);
	switch (it->type) {
	case MEMCG_PAGE_ANON:
		x[D_ANON] += b;
		x[D_LRU_ANON] += b;
		break;
	case MEMCG_PAGE_FILE:
		x[D_FILE] += b;
		x[D_LRU_FILE] += b;
		break;
	case MEMCG_PAGE_SHMEM:
		x[D_SHMEM] += b;
		x[D_FILE] += b;
		x[D_LRU_ANON] += b;
		break;
	case MEMCG_PAGE_KERNEL_STACK:
		x[D_KSTACK] += b;
		x[D_KPAGES] += b;
		break;
	case MEMCG_PAGE_PAGETABLES:
		x[D_PT] += b;
		x[D_KPAGES] += b;
		break;
	case MEMCG_PAGE_PERCPU:
		x[D_PERCPU] += b;
		x[D_KPAGES] += b;
		break;
	case MEMCG_PAGE_SOCK:
		x[D_SOCK] += b;
		break;
	case MEMCG_PAGE_VMALLOC:
		x[D_VMALLOC] += b;
		x[D_KPAGES] += b;
		break;
	default:
		break;
	}
}

/* Returns memcg_free_pages()'s result for pages, 0 otherwise. */
static int item_free(struct item *it)
{
	switch (it->kind) {
	case I_KMALLOC:
		kfree(it->p);
		break;
	case I_CACHE:
		kmem_cache_free(it->s, it->p);
		break;
	case I_PAGES:
		return memcg_free_pages(it->pg, it->id);
	}
	return 0;
}

struct caches {
	struct kmem_cache *acct;	/* SLAB_ACCOUNT */
	struct kmem_cache *rcl;		/* SLAB_ACCOUNT | SLAB_RECLAIM_ACCOUNT */
	struct kmem_cache *plain;	/* no flags: accounted only with __GFP_ACCOUNT */
};

static void caches_create(struct caches *c)
{
	c->acct = mkcache("t_rand_acct", 200, SLAB_ACCOUNT);
	c->rcl = mkcache("t_rand_rcl", 700, SLAB_ACCOUNT | SLAB_RECLAIM_ACCOUNT);
	c->plain = mkcache("t_rand_plain", 40, SLAB_HWCACHE_ALIGN);
}

static void caches_destroy(struct caches *c)
{
	DEFER_EQ(kmem_cache_destroy(c->acct), 0, "destroy acct cache");
	DEFER_EQ(kmem_cache_destroy(c->rcl), 0, "destroy rcl cache");
	DEFER_EQ(kmem_cache_destroy(c->plain), 0, "destroy plain cache");
}

/*
 * One random allocation for the current task, charged (if at all) to tree
 * node 'node' (-1: root task or daemon: nothing charged).  No pages for
 * uncharged allocations (the root's page statistics are not specified).
 * Returns false when the allocation failed.
 */
static bool item_alloc(struct item *it, struct rng *r, const struct caches *c, int node)
{
	unsigned int k = rnd_below(r, 100);

	memset(it, 0, sizeof(*it));
	it->node = -1;
	if (k < 35 || (node < 0 && k >= 65)) {
		size_t size = ksizes[rnd_below(r, NR_KSIZES)];
		unsigned int g = rnd_below(r, 10);
		gfp_t gfp = g < 7 ? GFP_KERNEL_ACCOUNT :
			    g < 9 ? GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE : GFP_KERNEL;

		it->kind = I_KMALLOC;
		it->p = kmalloc(size, gfp);
		if (!it->p)
			return false;
		if (gfp & __GFP_ACCOUNT) {
			it->node = node;
			it->small = ref_full(size);
			it->rcl = gfp & __GFP_RECLAIMABLE;
		}
	} else if (k < 40) {
		size_t size = large_sizes[rnd_below(r, NR_LARGE)];

		it->kind = I_KMALLOC;
		it->p = kmalloc(size, GFP_KERNEL_ACCOUNT);
		if (!it->p)
			return false;
		it->node = node;
		it->large = ref_kmalloc_bytes(size);
	} else if (k < 65) {
		unsigned int w = rnd_below(r, 4);

		it->kind = I_CACHE;
		if (w == 0) {
			it->s = c->acct;
			it->p = kmem_cache_alloc(it->s, GFP_KERNEL);
			it->node = node;
		} else if (w == 1) {
			it->s = c->rcl;
			it->p = kmem_cache_alloc(it->s, GFP_KERNEL);
			it->node = node;
			it->rcl = true;
		} else if (w == 2) {
			it->s = c->plain;
			it->p = kmem_cache_alloc(it->s, GFP_KERNEL_ACCOUNT);
			it->node = node;
		} else {
			it->s = c->plain;
			it->p = kmem_cache_alloc(it->s, GFP_KERNEL);
		}
		if (!it->p)
			return false;
		if (it->node >= 0)
			it->small = cache_size(it->s) + 8;
	} else {
		int err = 0;

		it->kind = I_PAGES;
		it->type = (enum memcg_page_type)rnd_below(r, NR_MEMCG_PAGE_TYPES);
		it->order = rnd_below(r, 3);
		it->pg = memcg_alloc_pages(it->type, GFP_KERNEL, it->order, &err);
		if (!it->pg)
			return false;
		it->node = node;
		it->id = memcg_page_id(it->pg);
		if (owned_type(it->type))
			it->owner = memcg_current();
	}
	return true;
}

/*
 * Every memcg of the tree against the baseline plus the tracked deltas:
 * every modelled memory.stat key exactly (hierarchically), the others
 * unchanged; after a drain also 'kernel' exactly and memory.current ==
 * kernel + anon + file + sock; parent.current >= sum of the children.
 */
static void tree_check(const struct tree *t, const struct snap *base,
		       long long d[][ND], bool drained, const char *when)
{
	long long h[TMAX][ND], kown[TMAX], kh[TMAX];
	unsigned long long usage[TMAX], kids[TMAX];

	memcpy(h, d, sizeof(h[0]) * (size_t)t->n);
	for (int i = t->n - 1; i > 0; i--)
		for (int k = 0; k < ND; k++)
			h[t->parent[i]][k] += h[i][k];
	/* the kernel pages each objcg holds after a drain: whole pages for
	 * its bytes (mkdir percpu + slab of the baseline, plus objects) */
	for (int i = 0; i < t->n; i++) {
		long long own_bytes = (long long)(base[i].v[K_SLAB] + base[i].v[K_PERCPU]);

		for (int j = 1; j < t->n; j++)
			if (t->parent[j] == i)
				own_bytes -= (long long)(base[j].v[K_SLAB] + base[j].v[K_PERCPU]);
		kown[i] = (long long)roundup_pg((unsigned long long)(own_bytes + d[i][D_SMALLB])) +
			  d[i][D_KPAGES];
		kh[i] = kown[i];
	}
	for (int i = t->n - 1; i > 0; i--)
		kh[t->parent[i]] += kh[i];

	for (int i = 0; i < t->n; i++) {
		struct mem_cgroup *m = t->m[i];
		const struct snap *b = &base[i];
		unsigned long long v[NR_STATE_KEYS];
		const long long *x = h[i];

		for (unsigned int k = 0; k < NR_STATE_KEYS; k++)
			v[k] = stv(m, stat_keys[k]);
		DEFER_EQ(v[K_ANON], b->v[K_ANON] + x[D_ANON], "%s node %d: anon", when, i);
		DEFER_EQ(v[K_FILE], b->v[K_FILE] + x[D_FILE], "%s node %d: file", when, i);
		DEFER_EQ(v[K_SHMEM], b->v[K_SHMEM] + x[D_SHMEM], "%s node %d: shmem", when, i);
		DEFER_EQ(v[K_KSTACK], b->v[K_KSTACK] + x[D_KSTACK], "%s node %d: kernel_stack", when, i);
		DEFER_EQ(v[K_PT], b->v[K_PT] + x[D_PT], "%s node %d: pagetables", when, i);
		DEFER_EQ(v[K_PERCPU], b->v[K_PERCPU] + x[D_PERCPU], "%s node %d: percpu", when, i);
		DEFER_EQ(v[K_SOCK], b->v[K_SOCK] + x[D_SOCK], "%s node %d: sock", when, i);
		DEFER_EQ(v[K_VMALLOC], b->v[K_VMALLOC] + x[D_VMALLOC], "%s node %d: vmalloc", when, i);
		DEFER_EQ(v[K_SLAB_R], b->v[K_SLAB_R] + x[D_SLAB_R], "%s node %d: slab_reclaimable", when, i);
		DEFER_EQ(v[K_SLAB_U], b->v[K_SLAB_U] + x[D_SLAB_U], "%s node %d: slab_unreclaimable", when, i);
		DEFER_EQ(v[K_SLAB], v[K_SLAB_R] + v[K_SLAB_U], "%s node %d: slab = r + u", when, i);
		DEFER_EQ(v[K_INACTIVE_ANON] + v[K_ACTIVE_ANON],
			 b->v[K_INACTIVE_ANON] + b->v[K_ACTIVE_ANON] + x[D_LRU_ANON],
			 "%s node %d: anon LRU (anon + shmem)", when, i);
		DEFER_EQ(v[K_INACTIVE_FILE] + v[K_ACTIVE_FILE],
			 b->v[K_INACTIVE_FILE] + b->v[K_ACTIVE_FILE] + x[D_LRU_FILE],
			 "%s node %d: file LRU", when, i);
		DEFER_EQ(v[K_INACTIVE_ANON] + v[K_ACTIVE_ANON] + v[K_INACTIVE_FILE] +
			 v[K_ACTIVE_FILE] + v[K_UNEVICTABLE], v[K_ANON] + v[K_FILE],
			 "%s node %d: LRU total = anon + file", when, i);
		/* not modelled: unchanged */
		static const int same[] = { K_SECPT, 10, 11, 12, 13, 14, 15, 16, 17, 18, K_UNEVICTABLE };
		for (unsigned int s = 0; s < sizeof(same) / sizeof(same[0]); s++)
			DEFER_EQ(v[same[s]], b->v[same[s]], "%s node %d: %s", when, i,
				 stat_keys[same[s]]);

		usage[i] = (unsigned long long)mem_cgroup_usage_pages(m) * PG;
		if (i > 0)
			DEFER_EQ(cur(m), usage[i], "%s node %d: memory.current file", when, i);
		if (drained) {
			DEFER_EQ(v[K_KERNEL], kh[i], "%s node %d: kernel (whole pages per objcg)", when, i);
			if (i > 0)
				DEFER_EQ(usage[i], v[K_KERNEL] + v[K_ANON] + v[K_FILE] + v[K_SOCK],
					 "%s node %d: memory.current == kernel + anon + file + sock",
					 when, i);
		} else if (i > 0) {
			DEFER_TRUE(usage[i] >= v[K_KERNEL] + v[K_ANON] + v[K_FILE] + v[K_SOCK],
				   "%s node %d: memory.current >= kernel + anon + file + sock", when, i);
		}
	}
	memset(kids, 0, sizeof(kids));
	for (int i = 1; i < t->n; i++)
		kids[t->parent[i]] += usage[i];
	for (int i = 1; i < t->n; i++)
		DEFER_TRUE(usage[i] >= kids[i], "%s node %d: current %llu >= children %llu",
			   when, i, usage[i], kids[i]);
	if (drained)
		expect_memcg_check(when);
}

static void tree_destroy(struct tree *t, const struct snap *root0)
{
	unsigned long d, y;

	memcg_set_current(NULL);
	for (int i = 0; i < t->n; i++)
		if (t->task[i]) {
			task_exit_checked(t->task[i], "tree_destroy");
			t->task[i] = NULL;
		}
	for (int i = t->n - 1; i > 0; i--)
		rm(t->m[i]);
	DEFER_TRUE(wait_dying(root_mem_cgroup(), 0), "the whole tree reaped");
	mem_cgroup_descendants(root_mem_cgroup(), &d, &y);
	DEFER_EQ(d, 0, "root nr_descendants after the tree is gone");
	memcg_drain();
	if (root0)
		expect_back(root_mem_cgroup(), root0, "root after the tree is gone");
}

#define MAXITEMS 6000

static void free_some(struct item *items, unsigned int *n, long long d[][ND],
		      struct tree *t, struct rng *r, unsigned int keep)
{
	while (*n > keep) {
		unsigned int j = rnd_below(r, *n);
		unsigned int w = rnd_below(r, (unsigned int)t->n + 1);

		alloc_pin_cpu((int)rnd_below(r, 4));
		memcg_set_current(w == (unsigned int)t->n ? NULL : t->task[w]);
		DEFER_EQ(item_free(&items[j]), 0, "free of a live item");
		item_apply(d, &items[j], -1);
		items[j] = items[--*n];
	}
}

static void test_hierarchy_random(void **state)
{
	struct tree t;
	struct snap root0, base[TMAX];
	static long long d[TMAX][ND];
	static struct item items[MAXITEMS];
	unsigned int n = 0, failures = 0;
	struct caches c;
	struct rng r;
	uint64_t seed = test_seed(0x3c6ef372fe94f82bull);

	(void)state;
	print_message("test_hierarchy_random seed %#llx\n", (unsigned long long)seed);
	rng_seed(&r, seed);
	memset(d, 0, sizeof(d));
	memcg_drain();
	take(root_mem_cgroup(), &root0);
	caches_create(&c);

	tree_init(&t);
	tree_add(&t, 0);	/* depth 1 */
	tree_add(&t, 1);	/* depth 2 */
	tree_add(&t, 2);	/* depth 3 */
	if (rnd_below(&r, 2))
		tree_add(&t, 3);	/* depth 4 */
	while (t.n < 11) {
		int p = (int)rnd_below(&r, (unsigned int)t.n);

		if (t.depth[p] < 4)
			tree_add(&t, p);
	}
	for (int i = 0; i < t.n; i++)
		t.task[i] = mktask(1000 + i, t.m[i]);	/* task 0 is a root task */
	for (int i = 1; i < t.n; i++)
		print_message("  node %d: parent %d depth %d\n", i, t.parent[i], t.depth[i]);
	memcg_drain();
	for (int i = 0; i < t.n; i++)
		take(t.m[i], &base[i]);
	tree_check(&t, base, d, true, "baseline");

	for (unsigned int phase = 0; phase < 4; phase++) {
		for (unsigned int op = 0; op < 1500; op++) {
			unsigned int k = rnd_below(&r, 100);

			alloc_pin_cpu((int)rnd_below(&r, 4));
			if (k < 60 && n < MAXITEMS) {
				unsigned int w = rnd_below(&r, (unsigned int)t.n + 1);
				int node = (w == 0 || w == (unsigned int)t.n) ? -1 : (int)w;

				memcg_set_current(w == (unsigned int)t.n ? NULL : t.task[w]);
				if (!item_alloc(&items[n], &r, &c, node)) {
					failures++;
					continue;
				}
				item_apply(d, &items[n], +1);
				n++;
			} else if (n) {
				free_some(items, &n, d, &t, &r, n - 1);
			}
		}
		memcg_set_current(NULL);
		alloc_pin_cpu(-1);
		DEFER_EQ(failures, 0, "allocation failures in phase %u", phase);
		tree_check(&t, base, d, false, phase & 1 ? "phase (odd, no drain)" : "phase (even, no drain)");
		memcg_drain();
		tree_check(&t, base, d, true, "phase (after drain)");
		if (deferred_failures)
			break;
	}
	print_message("  %u live items before freeing\n", n);
	free_some(items, &n, d, &t, &r, n / 2);
	memcg_set_current(NULL);
	alloc_pin_cpu(-1);
	tree_check(&t, base, d, false, "half freed (no drain)");
	memcg_drain();
	tree_check(&t, base, d, true, "half freed (after drain)");
	free_some(items, &n, d, &t, &r, 0);
	memcg_set_current(NULL);
	alloc_pin_cpu(-1);
	memcg_drain();
	tree_check(&t, base, d, true, "all freed (after drain)");
	for (int i = 0; i < t.n; i++) {
		char what[64];

		snprintf(what, sizeof(what), "node %d back to its baseline", i);
		expect_back(t.m[i], &base[i], what);
	}
	caches_destroy(&c);
	tree_destroy(&t, &root0);
}

/* ================================================================== */
/* Group: memory.stat, numa_stat, events formats                       */

static void check_stat_format(struct mem_cgroup *m, const char *who)
{
	char buf[16384], *p = buf;
	long n = read_whole(m, "memory.stat", buf, sizeof(buf));
	unsigned int i = 0;

	EXPECT_TRUE(n > 0, "read %s memory.stat = %ld", who, n);
	DEFER_EQ(strlen(buf), n, "%s memory.stat length", who);
	while (*p) {
		char *nl = strchr(p, '\n'), *sp, *end;
		unsigned long long v;

		if (!nl) {
			print_error("%s memory.stat: last line without newline\n", who);
			deferred_failures++;
			break;
		}
		*nl = '\0';
		sp = strchr(p, ' ');
		if (!sp) {
			print_error("%s memory.stat: line \"%s\" has no space\n", who, p);
			deferred_failures++;
			p = nl + 1;
			continue;
		}
		*sp = '\0';
		if (i < NR_STAT_KEYS)
			DEFER_STR(p, stat_keys[i], "%s memory.stat key %u", who, i + 1);
		v = strtoull(sp + 1, &end, 10);
		DEFER_TRUE(end != sp + 1 && *end == '\0' && sp[1] != '-',
			   "%s memory.stat %s: value \"%s\" is not %%llu", who, p, sp + 1);
		if (i < NR_STAT_KEYS && strcmp(p, stat_keys[i]) == 0)
			DEFER_EQ(v, stv(m, p), "%s memory.stat %s vs memcg_stat_read", who, p);
		i++;
		p = nl + 1;
	}
	DEFER_EQ(i, NR_STAT_KEYS, "%s memory.stat line count", who);
}

static void test_stat_keys(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a = mk(root), *b = mk(a);
	struct memcg_task *t = mktask(170, b);
	unsigned long long v;
	void *p[10];
	struct page *pg[3];
	char small[8];
	long n;

	(void)state;
	DEFER_EQ(memcg_stat_nr_keys(), NR_STAT_KEYS, "memcg_stat_nr_keys()");
	for (unsigned int i = 0; i < NR_STAT_KEYS && i < memcg_stat_nr_keys(); i++)
		DEFER_STR(memcg_stat_key(i), stat_keys[i], "memcg_stat_key(%u)", i);
	DEFER_EQ(memcg_stat_read(a, "no_such_key", &v), -ENOENT, "unknown key");
	DEFER_EQ(memcg_stat_read(a, "slab_", &v), -ENOENT, "prefix of a key");

	/* with something in it, on a child, its parent and the root */
	pin(0);
	memcg_set_current(t);
	for (unsigned int i = 0; i < 10; i++)
		p[i] = kmalloc_ok(ksizes[i * 3], GFP_KERNEL_ACCOUNT | (i & 1 ? __GFP_RECLAIMABLE : 0));
	pg[0] = pages(MEMCG_PAGE_ANON, 0);
	pg[1] = pages(MEMCG_PAGE_SHMEM, 1);
	pg[2] = pages(MEMCG_PAGE_KERNEL_STACK, 0);
	memcg_set_current(NULL);
	check_stat_format(b, "child");
	check_stat_format(a, "parent");
	check_stat_format(root, "root");
	DEFER_EQ(stv(b, "kernel_stack"), PG, "kernel_stack in bytes");

	/* the snprintf contract */
	n = read_whole(b, "memory.stat", small, sizeof(small));
	DEFER_TRUE(n > (long)sizeof(small), "short buffer: full length returned (%ld)", n);
	DEFER_EQ(strlen(small), sizeof(small) - 1, "short buffer: NUL-terminated prefix");
	DEFER_STR(small, "anon 40", "short buffer prefix");

	memcg_set_current(t);		/* the owner frees its own pages */
	for (unsigned int i = 0; i < 10; i++)
		kfree(p[i]);
	for (unsigned int i = 0; i < 3; i++)
		free_pg(pg[i]);
	memcg_set_current(NULL);
	task_exit_checked(t, "t");
	rm(b);
	rm(a);
}

static void check_numa_stat(struct mem_cgroup *m, unsigned int nodes, const char *who)
{
	char buf[16384], *p = buf;
	long n = read_whole(m, "memory.numa_stat", buf, sizeof(buf));
	unsigned int i = 0;

	EXPECT_TRUE(n > 0, "read %s memory.numa_stat = %ld", who, n);
	while (*p) {
		char *nl = strchr(p, '\n'), *tok, *save = NULL;
		unsigned long long sum = 0;
		unsigned int node = 0;
		char key[64];

		if (!nl) {
			print_error("%s numa_stat: last line without newline\n", who);
			deferred_failures++;
			break;
		}
		*nl = '\0';
		tok = strtok_r(p, " ", &save);
		snprintf(key, sizeof(key), "%s", tok ? tok : "");
		if (i < NR_NUMA_KEYS)
			DEFER_STR(key, numa_keys[i], "%s numa_stat key %u", who, i + 1);
		while ((tok = strtok_r(NULL, " ", &save))) {
			char want[16], *end;

			snprintf(want, sizeof(want), "N%u=", node);
			DEFER_TRUE(strncmp(tok, want, strlen(want)) == 0,
				   "%s numa_stat %s: token \"%s\" is not %s<v>", who, key, tok, want);
			sum += strtoull(tok + strlen(want), &end, 10);
			DEFER_TRUE(*end == '\0', "%s numa_stat %s: token \"%s\"", who, key, tok);
			node++;
		}
		DEFER_EQ(node, nodes, "%s numa_stat %s: one value per node", who, key);
		if (strcmp(key, "hugetlb") == 0)
			DEFER_EQ(sum, 0, "%s numa_stat hugetlb", who);
		else if (i < NR_NUMA_KEYS && strcmp(key, numa_keys[i]) == 0)
			DEFER_EQ(sum, stv(m, key), "%s numa_stat %s: sum over nodes == memory.stat",
				 who, key);
		i++;
		p = nl + 1;
	}
	DEFER_EQ(i, NR_NUMA_KEYS, "%s numa_stat line count", who);
}

static void numa_stat_body(unsigned int nodes)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a = mk(root);
	struct memcg_task *t = mktask(171, a);
	void *p[64];
	struct page *pg[NR_MEMCG_PAGE_TYPES];

	pin(1);
	memcg_set_current(t);
	for (unsigned int i = 0; i < 64; i++)
		p[i] = kmalloc_ok(ksizes[i % NR_KSIZES], GFP_KERNEL_ACCOUNT | (i % 3 ? 0 : __GFP_RECLAIMABLE));
	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++)
		pg[i] = pages((enum memcg_page_type)i, 2);
	memcg_set_current(NULL);
	check_numa_stat(a, nodes, "child");
	check_numa_stat(root, nodes, "root");
	memcg_set_current(t);		/* the owner frees its own pages */
	for (unsigned int i = 0; i < 64; i++)
		kfree(p[i]);
	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++)
		free_pg(pg[i]);
	memcg_set_current(NULL);
	task_exit_checked(t, "t");
	rm(a);
}

static void test_numa_stat(void **state)
{
	(void)state;
	numa_stat_body(1);
}

static void test_numa_stat_2nodes(void **state)
{
	(void)state;
	numa_stat_body(2);
}

static void test_events_files(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_open *o = NULL;

	(void)state;
	DEFER_FILE(a, "memory.events", EVENTS_ZERO);
	DEFER_FILE(a, "memory.events.local", EVENTS_ZERO);
	DEFER_FILE(a, "memory.swap.events", "high 0\nmax 0\nfail 0\n");
	for (unsigned int i = 0; i < NR_EVENT_KEYS; i++)
		DEFER_EQ(keyed(a, "memory.events", event_keys[i]), 0, "events %s", event_keys[i]);
	/* the root never has events files */
	DEFER_EQ(memcg_file_open(file_of("memory.events"), root_mem_cgroup(), &o), -ENOENT,
		 "root memory.events");
	if (o) {
		memcg_file_release(o);
		o = NULL;
	}
	DEFER_EQ(memcg_file_open(file_of("memory.swap.events"), root_mem_cgroup(), &o), -ENOENT,
		 "root memory.swap.events");
	if (o)
		memcg_file_release(o);
	rm(a);
}

/* ================================================================== */
/* Group: the file table                                               */

static const struct spec_file *spec_of(const char *name)
{
	for (unsigned int i = 0; i < NR_SPEC_FILES; i++)
		if (strcmp(spec_files[i].name, name) == 0)
			return &spec_files[i];
	return NULL;
}

static void test_file_table(void **state)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a = mk(root), *b = mk(a);
	bool seen[NR_SPEC_FILES];
	const struct memcg_file *f;

	(void)state;
	memset(seen, 0, sizeof(seen));
	for (unsigned int i = 0; (f = memcg_file_at(i)) != NULL; i++) {
		const char *name = memcg_file_name(f);
		const struct spec_file *s = name ? spec_of(name) : NULL;

		if (i > 200) {
			print_error("memcg_file_at() does not end\n");
			deferred_failures++;
			break;
		}
		if (!name) {
			print_error("memcg_file_at(%u) has no name\n", i);
			deferred_failures++;
			continue;
		}
		DEFER_TRUE(memcg_file_lookup(name) == f, "lookup(%s) == at(%u)", name, i);
		if (!s) {
			if (strncmp(name, "memory.", 7) == 0) {
				print_error("memcg file table has %s, not in docs/kernel-interface.md §7\n", name);
				deferred_failures++;
			} else {
				print_message("  note: memcg file table also has %s\n", name);
			}
			continue;
		}
		seen[s - spec_files] = true;
	}
	for (unsigned int i = 0; i < NR_SPEC_FILES; i++) {
		const struct spec_file *s = &spec_files[i];
		struct memcg_open *o;
		int r;

		f = memcg_file_lookup(s->name);
		if (!f) {
			if (!s->optional) {
				print_error("memcg_file_lookup(%s) = NULL\n", s->name);
				deferred_failures++;
			}
			continue;
		}
		DEFER_TRUE(seen[i], "%s listed by memcg_file_at()", s->name);
		DEFER_STR(memcg_file_name(f), s->name, "name");
		DEFER_EQ(memcg_file_mode(f), s->mode, "%s mode (octal %o)", s->name, s->mode);
		DEFER_EQ(memcg_file_on_root(f), s->on_root, "%s on root", s->name);
		DEFER_EQ(memcg_file_on_child(f), s->on_child, "%s on child", s->name);
		if (!s->optional)
			DEFER_EQ(memcg_file_notifies(f), s->notifies, "%s notifies", s->name);

		o = NULL;
		r = memcg_file_open(f, root, &o);
		DEFER_EQ(r, s->on_root ? 0 : -ENOENT, "open %s on the root", s->name);
		if (o)
			memcg_file_release(o);
		o = NULL;
		r = memcg_file_open(f, b, &o);
		DEFER_EQ(r, 0, "open %s on a child", s->name);
		if (o)
			memcg_file_release(o);
		if (s->child_default) {
			DEFER_FILE(b, s->name, s->child_default);
			/* a holds b's mkdir charges: its usage is not 0 */
			if (strcmp(s->name, "memory.current") && strcmp(s->name, "memory.peak"))
				DEFER_FILE(a, s->name, s->child_default);
		}
	}
	DEFER_FILE(root, "memory.zswap.writeback", "1\n");
	DEFER_TRUE(memcg_file_lookup("memory.nonexistent") == NULL, "lookup of an unknown name");
	rm(b);
	rm(a);
}

static void test_file_rw_errors(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	static const char *const ro[] = {
		"memory.current", "memory.events", "memory.events.local", "memory.stat",
		"memory.numa_stat", "memory.swap.current", "memory.swap.events",
		"memory.zswap.current",
	};
	char buf[256];
	struct memcg_open *o = NULL;

	(void)state;
	/* §1.1: a write to a file without a write handler, a read of a file
	 * without a read handler: EINVAL */
	for (unsigned int i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		DEFER_EQ(write_str(a, ro[i], "0"), -EINVAL, "write to read-only %s", ro[i]);
	DEFER_EQ(read_whole(a, "memory.reclaim", buf, sizeof(buf)), -EINVAL,
		 "read of write-only memory.reclaim");
	/* §1.2: a zero-length write does nothing and returns 0 */
	EXPECT_EQ(memcg_file_open(file_of("memory.current"), a, &o), 0, "open");
	DEFER_EQ(memcg_file_write(o, "", 0, false), 0, "empty write to memory.current");
	memcg_file_release(o);
	rm(a);
}

/* ================================================================== */
/* Group: write parsing (§1.3, §7.6, §7.8)                             */

struct pcase {
	const char *in;
	int err;
	const char *out;	/* content after the write; NULL: unchanged */
};

static const struct pcase memparse_cases[] = {
	{ "max", 0, "max\n" },
	{ "max\n", 0, "max\n" },
	{ " \tmax \n", 0, "max\n" },
	{ "Max", -EINVAL, NULL },
	{ "MAX", -EINVAL, NULL },
	{ "max\t1", -EINVAL, NULL },
	{ "maxx", -EINVAL, NULL },
	{ "0x1000", 0, "4096\n" },
	{ "0X2000", 0, "8192\n" },
	{ "010", 0, "0\n" },
	{ "020000", 0, "8192\n" },
	{ "4097", 0, "4096\n" },
	{ "8191\n", 0, "4096\n" },
	{ "100", 0, "0\n" },
	{ "1k", 0, "0\n" },
	{ "4k", 0, "4096\n" },
	{ "12K", 0, "12288\n" },
	{ "1m", 0, "1048576\n" },
	{ "3M", 0, "3145728\n" },
	{ "1g", 0, "1073741824\n" },
	{ "2G\n", 0, "2147483648\n" },
	{ "1t", 0, "1099511627776\n" },
	{ "1T", 0, "1099511627776\n" },
	{ "1p", 0, "1125899906842624\n" },
	{ "1P", 0, "1125899906842624\n" },
	{ "1e", 0, "1152921504606846976\n" },
	{ "1E", 0, "1152921504606846976\n" },
	{ "8E", 0, "max\n" },
	{ "0x10k", 0, "16384\n" },
	{ "1.5G", -EINVAL, NULL },
	{ "1KB", -EINVAL, NULL },
	{ "-1", -EINVAL, NULL },
	{ "100 200", -EINVAL, NULL },
	{ "abc", -EINVAL, NULL },
	{ "4096x", -EINVAL, NULL },
	{ "1kk", -EINVAL, NULL },
	{ "1 k", -EINVAL, NULL },
	{ "9223372036854771712", 0, "max\n" },
	{ "9223372036854771711", 0, "9223372036854767616\n" },
	{ "18446744073709551615", 0, "max\n" },
	{ "\n", 0, "0\n" },
	{ " ", 0, "0\n" },
	{ "0", 0, "0\n" },
	{ "16384\n", 0, "16384\n" },
	{ "  8192  ", 0, "8192\n" },
};

static void run_cases(struct mem_cgroup *m, const char *file, const struct pcase *cases,
		      unsigned int nr, const char *sentinel, const char *sentinel_out)
{
	for (unsigned int i = 0; i < nr; i++) {
		const struct pcase *c = &cases[i];
		char buf[128];
		int r;

		EXPECT_EQ(write_str(m, file, sentinel), 0, "%s: sentinel write \"%s\"", file, sentinel);
		r = write_str(m, file, c->in);
		DEFER_EQ(r, c->err, "%s: write \"%s\"", file, c->in);
		read_whole(m, file, buf, sizeof(buf));
		DEFER_STR(buf, c->out ? c->out : sentinel_out, "%s after writing \"%s\"", file, c->in);
	}
}

static void test_memparse_writes(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	char big[4200], buf[128];

	(void)state;
	for (unsigned int f = 0; f < sizeof(memparse_files) / sizeof(memparse_files[0]); f++) {
		const char *file = memparse_files[f];

		run_cases(a, file, memparse_cases, sizeof(memparse_cases) / sizeof(memparse_cases[0]),
			  "12288", "12288\n");
		/* zero-length write: 0, nothing changes */
		EXPECT_EQ(write_str(a, file, "12288"), 0, "sentinel");
		DEFER_EQ(write_bytes(a, file, "", 0), 0, "%s: zero-length write", file);
		DEFER_FILE(a, file, "12288\n");
		/* longer than a page: E2BIG; exactly a page: accepted */
		memset(big, ' ', sizeof(big));
		memcpy(big, "8192", 4);
		DEFER_EQ(write_bytes(a, file, big, 4097), -E2BIG, "%s: 4097-byte write", file);
		DEFER_FILE(a, file, "12288\n");
		DEFER_EQ(write_bytes(a, file, big, 4096), 0, "%s: 4096-byte write", file);
		DEFER_FILE(a, file, "8192\n");
		/* the written bytes are not NUL-terminated */
		memcpy(buf, "40961234", 8);
		DEFER_EQ(write_bytes(a, file, buf, 4), 0, "%s: unterminated \"4096\"", file);
		DEFER_FILE(a, file, "4096\n");
		EXPECT_EQ(write_str(a, file, "max"), 0, "reset to max");
	}
	/* defaults restored for the later checks */
	EXPECT_EQ(write_str(a, "memory.min", "0"), 0, "min 0");
	EXPECT_EQ(write_str(a, "memory.low", "0"), 0, "low 0");
	rm(a);
}

static const struct pcase int01_cases[] = {
	{ "0", 0, "0\n" },
	{ "1", 0, "1\n" },
	{ "0x1", 0, "1\n" },
	{ "1\n", 0, "1\n" },
	{ " 0 \n", 0, "0\n" },
	{ "+1", 0, "1\n" },
	{ "2", -EINVAL, NULL },
	{ "-1", -EINVAL, NULL },
	{ "010", -EINVAL, NULL },
	{ "abc", -EINVAL, NULL },
	{ "1a", -EINVAL, NULL },
	{ "0x", -EINVAL, NULL },
	{ "1 1", -EINVAL, NULL },
	{ "\n", -EINVAL, NULL },
	{ "99999999999", -ERANGE, NULL },
	{ "2147483648", -ERANGE, NULL },
	{ "-99999999999", -ERANGE, NULL },
};

static void test_int_writes(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	const unsigned int nr = sizeof(int01_cases) / sizeof(int01_cases[0]);

	(void)state;
	/* sentinel 1: unchanged reads 1 */
	run_cases(a, "memory.oom.group", int01_cases, nr, "1", "1\n");
	run_cases(a, "memory.oom.group", int01_cases, nr, "0", "0\n");
	run_cases(a, "memory.zswap.writeback", int01_cases, nr, "1", "1\n");
	run_cases(a, "memory.zswap.writeback", int01_cases, nr, "0", "0\n");
	/* zswap.writeback is on the root too */
	run_cases(root_mem_cgroup(), "memory.zswap.writeback", int01_cases, nr, "0", "0\n");
	EXPECT_EQ(write_str(root_mem_cgroup(), "memory.zswap.writeback", "1"), 0, "restore");
	DEFER_FILE(root_mem_cgroup(), "memory.zswap.writeback", "1\n");
	/* zero-length: 0, unchanged */
	EXPECT_EQ(write_str(a, "memory.oom.group", "1"), 0, "set 1");
	DEFER_EQ(write_bytes(a, "memory.oom.group", "", 0), 0, "zero-length write");
	DEFER_FILE(a, "memory.oom.group", "1\n");
	rm(a);
}

static void test_reclaim_parse(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	static const char *const bad[] = {
		"abc", "max", "\n", " ", "-1", "1.5G", "100 foo", "100 swappiness=201",
		"100 swappiness=-1", "100 swappiness=abc", "100 swappiness=", "swappiness=10",
	};

	(void)state;
	/* §7.7: no leading number, max, unknown tokens: EINVAL; < 4096 bytes
	 * is 0 pages: immediate success */
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		DEFER_EQ(write_str(a, "memory.reclaim", bad[i]), -EINVAL, "reclaim \"%s\"", bad[i]);
	DEFER_EQ(write_bytes(a, "memory.reclaim", "", 0), 0, "zero-length write (§1.2)");
	DEFER_EQ(write_str(a, "memory.reclaim", "0"), 0, "reclaim 0");
	DEFER_EQ(write_str(a, "memory.reclaim", "100\n"), 0, "reclaim 100 bytes");
	DEFER_EQ(write_str(a, "memory.reclaim", "1k swappiness=60"), 0, "reclaim 1k swappiness=60");
	DEFER_EQ(write_str(a, "memory.reclaim", "4095 swappiness=max"), 0, "swappiness=max");
	DEFER_EQ(write_str(a, "memory.reclaim", "0 swappiness=200"), 0, "swappiness=200");
	rm(a);
}

static void test_page_counter_memparse(void **state)
{
	unsigned long p;

	(void)state;
	p = 1;
	DEFER_EQ(page_counter_memparse("max", 3, "max", &p), 0, "max");
	DEFER_EQ(p, PAGE_COUNTER_MAX, "max -> PAGE_COUNTER_MAX");
	DEFER_EQ(PAGE_COUNTER_MAX, 2251799813685247ull, "PAGE_COUNTER_MAX value (§1.3.6)");
	DEFER_EQ(page_counter_memparse("4096", 4, "max", &p), 0, "4096");
	DEFER_EQ(p, 1, "4096 bytes = 1 page");
	p = 1;
	DEFER_EQ(page_counter_memparse("", 0, "max", &p), 0, "empty");
	DEFER_EQ(p, 0, "empty = 0");
	DEFER_EQ(page_counter_memparse(" 8192\n", 6, "max", &p), 0, "stripped");
	DEFER_EQ(p, 2, "8192 bytes");
	DEFER_EQ(page_counter_memparse("4096junk", 4, "max", &p), 0, "len respected");
	DEFER_EQ(p, 1, "only len bytes parsed");
	DEFER_EQ(page_counter_memparse("Max", 3, "max", &p), -EINVAL, "Max");
	DEFER_EQ(page_counter_memparse("1.5G", 4, "max", &p), -EINVAL, "1.5G");
	DEFER_EQ(page_counter_memparse("9223372036854771712", 19, "max", &p), 0, "huge");
	DEFER_EQ(p, PAGE_COUNTER_MAX, "huge -> capped");
	DEFER_EQ(page_counter_memparse("none", 4, "none", &p), 0, "another max token");
	DEFER_EQ(p, PAGE_COUNTER_MAX, "another max token -> PAGE_COUNTER_MAX");
	DEFER_EQ(page_counter_memparse("max", 3, "none", &p), -EINVAL, "max when the token is none");
	DEFER_EQ(page_counter_memparse("3m", 2, "max", &p), 0, "3m");
	DEFER_EQ(p, 768, "3m = 768 pages");
}

/* ================================================================== */
/* Group: memory.peak (§7.5)                                           */

static struct memcg_open *open_peak(struct mem_cgroup *m)
{
	struct memcg_open *o = NULL;

	EXPECT_EQ(memcg_file_open(file_of("memory.peak"), m, &o), 0, "open memory.peak");
	return o;
}

static unsigned long long peak_read(struct memcg_open *o)
{
	char buf[64], *end;
	long n = memcg_file_read(o, buf, sizeof(buf));
	unsigned long long v;

	if (n <= 0) {
		print_error("memory.peak read = %ld\n", n);
		deferred_failures++;
		return ~0ull;
	}
	v = strtoull(buf, &end, 10);
	DEFER_TRUE(end != buf && strcmp(end, "\n") == 0, "memory.peak \"%s\" is %%llu\\n", buf);
	return v;
}

static void test_peak(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *t = mktask(180, a);
	struct memcg_open *fa, *fb, *fc, *fd, *fe;
	struct page *p1, *p8, *p2;
	unsigned long long wm = 0, u, ub, uc;

	(void)state;
	pin(0);
	fa = open_peak(a);
	DEFER_EQ(peak_read(fa), 0, "fresh memory.peak");
	memcg_set_current(t);
	p1 = pages(MEMCG_PAGE_FILE, 0);
	u = cur(a);
	wm = u > wm ? u : wm;
	DEFER_EQ(peak_read(fa), wm, "peak after the first charge (stock included)");
	memcg_drain();
	u = cur(a);
	DEFER_EQ(u, PG, "one page after drain");
	DEFER_EQ(peak_read(fa), wm, "the watermark stays after the drain");

	/* fd B resets: it sees the usage at its write */
	fb = open_peak(a);
	DEFER_EQ(memcg_file_write(fb, "reset\n", 6, false), 0, "write memory.peak");
	ub = cur(a);
	DEFER_EQ(peak_read(fb), ub, "writer fd right after its reset sees current usage");
	DEFER_EQ(peak_read(fa), wm, "non-writer fd still sees the global watermark");

	/* more charges: B follows the local watermark */
	p8 = pages(MEMCG_PAGE_FILE, 3);
	u = cur(a);
	wm = u > wm ? u : wm;
	DEFER_EQ(peak_read(fb), u, "writer fd sees the new local peak");
	DEFER_EQ(peak_read(fa), wm, "global watermark");
	memcg_drain();
	uc = cur(a);
	DEFER_TRUE(uc < u, "drain lowers usage");
	DEFER_EQ(peak_read(fb), u, "writer fd keeps its local peak after usage drops");

	/* fd C resets at uc: B's value becomes max(ub, uc), local watermark uc */
	fc = open_peak(a);
	DEFER_EQ(memcg_file_write(fc, "x", 1, false), 0, "write C");
	DEFER_EQ(peak_read(fc), uc, "C sees the usage at its write");
	DEFER_EQ(peak_read(fb), ub > uc ? ub : uc,
		 "B after C's reset: max(B's value raised to usage, local watermark)");
	DEFER_EQ(peak_read(fa), wm, "A (never wrote): global watermark");

	/* usage down, D resets: B and C are raised to at least uc earlier,
	 * so they keep uc; D sees the lower usage */
	free_pg(p8);
	memcg_drain();
	u = cur(a);
	DEFER_TRUE(u < uc, "usage lower after freeing");
	fd = open_peak(a);
	DEFER_EQ(memcg_file_write(fd, "1", 1, false), 0, "write D");
	DEFER_EQ(peak_read(fd), u, "D sees its own reset value");
	DEFER_EQ(peak_read(fc), uc, "C keeps its value (raised peers are not lowered)");
	DEFER_EQ(peak_read(fb), uc, "B keeps its value");
	DEFER_EQ(peak_read(fa), wm, "A: global watermark");

	/* a new charge raises the local watermark seen by every writer fd */
	p2 = pages(MEMCG_PAGE_FILE, 1);
	u = cur(a);
	wm = u > wm ? u : wm;
	DEFER_EQ(peak_read(fd), u, "D follows the local watermark");
	DEFER_EQ(peak_read(fc), u > uc ? u : uc, "C: max(own, local watermark)");
	DEFER_EQ(peak_read(fa), wm, "A: global watermark");

	/* an empty write changes nothing: E stays a non-writer */
	fe = open_peak(a);
	DEFER_EQ(memcg_file_write(fe, "", 0, false), 0, "empty write");
	DEFER_EQ(peak_read(fe), wm, "E after an empty write: global watermark");

	/* a released writer is unregistered (nothing to observe but no crash) */
	memcg_file_release(fb);
	fb = open_peak(a);
	DEFER_EQ(peak_read(fb), wm, "a fresh fd reads the global watermark");
	DEFER_FILE(a, "memory.swap.peak", "0\n");

	memcg_file_release(fa);
	memcg_file_release(fb);
	memcg_file_release(fc);
	memcg_file_release(fd);
	memcg_file_release(fe);
	free_pg(p1);
	free_pg(p2);
	memcg_set_current(NULL);
	task_exit_checked(t, "t");
	rm(a);
}

/* ================================================================== */
/* Group: memory.max at this layer                                     */

static void notify_cb(struct mem_cgroup *memcg, const char *file, void *arg)
{
	(void)arg;
	__atomic_add_fetch(&notify_calls, 1, __ATOMIC_RELAXED);
	notify_last_memcg = memcg;
	snprintf(notify_last_file, sizeof(notify_last_file), "%s", file ? file : "");
}

static void test_max_enforced(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p);
	struct memcg_task *t = mktask(190, c);
	static void *objs[4000];
	unsigned int n = 0, over = 0;
	unsigned long long maxb = 8 * PG, u, bytes = 0, ev;
	struct snap c0, p0;
	bool failed = false;

	(void)state;
	pin(0);
	notify_calls = 0;
	memcg_set_notify(notify_cb, NULL);
	memcg_drain();
	take(c, &c0);
	take(p, &p0);
	EXPECT_EQ(write_str(c, "memory.max", "32768"), 0, "memory.max = 8 pages");
	DEFER_FILE(c, "memory.max", "32768\n");
	memcg_set_current(t);
	while (n < 4000) {
		void *o = kmalloc(1024, GFP_KERNEL_ACCOUNT);

		u = cur(c);
		if (u > maxb)
			over++;
		if (!o) {
			failed = true;
			break;
		}
		objs[n++] = o;
		bytes += ref_full(1024);
	}
	DEFER_TRUE(failed, "accounted kmallocs fail at memory.max (%u succeeded)", n);
	DEFER_EQ(over, 0, "memory.current never above memory.max");
	DEFER_TRUE(n >= 4, "at least a few objects fit under 8 pages (%u)", n);
	DEFER_EQ(stv(c, "slab_unreclaimable"), c0.v[K_SLAB_U] + bytes, "slab counts only the successes");
	expect_memcg_check("after a failed charge");
	u = cur(c);
	/* a failing attempt leaves no partial charge */
	DEFER_TRUE(kmalloc(4096, GFP_KERNEL_ACCOUNT) == NULL, "still failing");
	DEFER_EQ(cur(c), u, "a failed charge changes nothing");
	DEFER_EQ(cur(p), u + p0.usage, "nor in the parent");
	memcg_drain();
	DEFER_TRUE(cur(c) <= maxb, "usage <= max after drain");
	ev = keyed(c, "memory.events", "max");
	DEFER_TRUE(ev >= 1 && ev != ~0ull, "memory.events max counted (%llu)", ev);
	DEFER_EQ(keyed(c, "memory.events.local", "max"), ev, "memory.events.local max");
	DEFER_EQ(keyed(p, "memory.events", "max"), ev, "the parent's hierarchical memory.events max");
	DEFER_EQ(keyed(p, "memory.events.local", "max"), 0, "the parent's memory.events.local max");
	DEFER_TRUE(notify_calls > 0, "the notify hook was called for the max event");

	/* __GFP_NOFAIL is forced past max */
	for (unsigned int i = 0; i < 3; i++) {
		void *o = kmalloc(4096, GFP_KERNEL_ACCOUNT | __GFP_NOFAIL);

		DEFER_TRUE(o != NULL, "__GFP_NOFAIL kmalloc at the limit");
		if (o) {
			objs[n++] = o;
			bytes += ref_full(4096);
		}
	}
	u = cur(c);
	DEFER_TRUE(u > maxb, "usage above max after forced charges (%llu)", u);
	DEFER_EQ(stv(c, "slab_unreclaimable"), c0.v[K_SLAB_U] + bytes, "slab with the forced objects");
	expect_memcg_check("after forced charges");

	for (unsigned int i = 0; i < n; i++)
		kfree(objs[i]);
	memcg_set_current(NULL);
	memcg_drain();
	expect_back(c, &c0, "c after free + drain");
	expect_back(p, &p0, "p after free + drain");
	EXPECT_EQ(write_str(c, "memory.max", "max"), 0, "memory.max = max");
	task_exit_checked(t, "t");
	rm(c);
	rm(p);
}

/* The limit of an ancestor: the charge fails there, nothing stays charged
 * below, the event is the ancestor's. */
static void test_max_ancestor(void **state)
{
	struct mem_cgroup *p = mk(root_mem_cgroup()), *c = mk(p);
	struct memcg_task *t = mktask(191, c);
	static struct page *pgs[200];
	unsigned int n = 0;
	unsigned long long pmax, ev, uc, up;
	struct page *pg;
	int err = 0;
	struct snap c0, p0;

	(void)state;
	pin(3);
	memcg_drain();
	take(c, &c0);
	take(p, &p0);
	pmax = p0.usage + 16 * PG;
	{
		char v[32];

		snprintf(v, sizeof(v), "%llu", pmax);
		EXPECT_EQ(write_str(p, "memory.max", v), 0, "parent memory.max");
	}
	memcg_set_current(t);
	while (n < 200) {
		pg = memcg_alloc_pages(MEMCG_PAGE_SOCK, GFP_KERNEL, 0, &err);
		DEFER_TRUE(cur(p) <= pmax, "parent usage <= its max");
		if (!pg)
			break;
		pgs[n++] = pg;
	}
	DEFER_TRUE(n < 200, "charges fail at the parent's limit");
	DEFER_EQ(err, -ENOMEM, "the failure is ENOMEM");
	DEFER_TRUE(n >= 8, "most of 16 pages fit (%u)", n);
	uc = cur(c);
	up = cur(p);
	pg = memcg_alloc_pages(MEMCG_PAGE_SOCK, GFP_KERNEL, 1, &err);
	DEFER_TRUE(pg == NULL, "order-1 still fails");
	if (pg)
		pgs[n++] = pg;
	DEFER_EQ(cur(c), uc, "no partial charge in the child");
	DEFER_EQ(cur(p), up, "no partial charge in the parent");
	expect_memcg_check("after failures at the ancestor's limit");
	ev = keyed(p, "memory.events", "max");
	DEFER_TRUE(ev >= 1 && ev != ~0ull, "the parent counts max events (%llu)", ev);
	DEFER_EQ(keyed(p, "memory.events.local", "max"), ev, "parent events.local max");
	DEFER_EQ(keyed(c, "memory.events", "max"), 0, "the child does not count them");
	DEFER_EQ(stv(c, "sock"), n * PG, "sock stat counts the successes");
	for (unsigned int i = 0; i < n; i++)
		free_pg(pgs[i]);
	memcg_set_current(NULL);
	memcg_drain();
	expect_back(c, &c0, "c at the end");
	expect_back(p, &p0, "p at the end");
	EXPECT_EQ(write_str(p, "memory.max", "max"), 0, "reset");
	task_exit_checked(t, "t");
	rm(c);
	rm(p);
}

/* ================================================================== */
/* Group: concurrency                                                  */

#define CN	6	/* root, A, B, A1, A2, B1 */
#define NTHREADS 4
#define POOL_MAX 3000
#define OWN_MAX	1500

struct cshared {
	pthread_mutex_t lock;
	struct item pool[POOL_MAX];
	unsigned int npool;
	struct tree *t;
	struct caches *c;
	unsigned int iters;
	int pin_mode;		/* 0 unpinned, 1 one slot each, 2 two threads per slot */
	atomic_uint ready;
};

struct cthread {
	struct cshared *sh;
	int id;
	int node;			/* tree node of its task now */
	struct memcg_task *task;
	struct rng r;
	long long d[CN][ND];
	struct item own[OWN_MAX];
	unsigned int nown;
	unsigned long errors, allocs, frees, foreign, migrations;
	pthread_t th;
};

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void thread_error(struct cthread *ct, const char *what)
{
	pthread_mutex_lock(&report_lock);
	if (ct->errors < 5)
		printf("thread %d: %s\n", ct->id, what);
	pthread_mutex_unlock(&report_lock);
	ct->errors++;
}

static void *cthread_main(void *arg)
{
	struct cthread *ct = arg;
	struct cshared *sh = ct->sh;

	if (sh->pin_mode && alloc_pin_cpu(sh->pin_mode == 2 ? ct->id % 2 : ct->id) != 0)
		thread_error(ct, "alloc_pin_cpu failed");
	memcg_set_current(ct->task);
	atomic_fetch_add(&sh->ready, 1);
	while (atomic_load(&sh->ready) < NTHREADS)
		sched_yield();
	for (unsigned int it = 0; it < sh->iters; it++) {
		unsigned int k = rnd_below(&ct->r, 100);

		if (k < 48) {
			struct item x;

			if (!item_alloc(&x, &ct->r, sh->c, ct->node)) {
				thread_error(ct, "allocation failed");
				continue;
			}
			bool pushed = false;

			x.tid = ct->id;
			item_apply(ct->d, &x, +1);
			ct->allocs++;
			if (rnd_below(&ct->r, 2) == 0) {
				pthread_mutex_lock(&sh->lock);
				if (sh->npool < POOL_MAX) {
					sh->pool[sh->npool++] = x;
					pushed = true;
				}
				pthread_mutex_unlock(&sh->lock);
			}
			if (!pushed) {
				if (ct->nown < OWN_MAX) {
					ct->own[ct->nown++] = x;
				} else {
					if (item_free(&x))
						thread_error(ct, "memcg_free_pages of a live item failed");
					item_apply(ct->d, &x, -1);
					ct->frees++;
				}
			}
		} else if (k < 97) {
			struct item x;
			bool have = false, foreign = false;

			if (rnd_below(&ct->r, 2) == 0) {
				pthread_mutex_lock(&sh->lock);
				if (sh->npool) {
					unsigned int j = rnd_below(&ct->r, sh->npool);

					/* prefer another thread's allocation */
					for (int tries = 0; tries < 4 && sh->pool[j].tid == ct->id; tries++)
						j = rnd_below(&ct->r, sh->npool);
					x = sh->pool[j];
					sh->pool[j] = sh->pool[--sh->npool];
					have = true;
					foreign = x.tid != ct->id;
				}
				pthread_mutex_unlock(&sh->lock);
			}
			if (!have && ct->nown) {
				unsigned int j = rnd_below(&ct->r, ct->nown);

				x = ct->own[j];
				ct->own[j] = ct->own[--ct->nown];
				have = true;
			}
			if (have) {
				if (item_free(&x))
					thread_error(ct, "memcg_free_pages of a live item failed");
				item_apply(ct->d, &x, -1);
				ct->frees++;
				ct->foreign += foreign;
			}
		} else {
			int to = 1 + (int)rnd_below(&ct->r, CN - 1);

			if (memcg_task_attach(ct->task, sh->t->m[to]) != 0) {
				thread_error(ct, "memcg_task_attach failed");
			} else {
				ct->node = to;
				ct->migrations++;
			}
		}
	}
	/* free what is left of its own */
	while (ct->nown) {
		struct item *x = &ct->own[--ct->nown];

		if (item_free(x))
			thread_error(ct, "memcg_free_pages of a live item failed");
		item_apply(ct->d, x, -1);
		ct->frees++;
	}
	memcg_set_current(NULL);
	alloc_pin_cpu(-1);
	return NULL;
}

static void concurrency_body(int pin_mode, unsigned int iters, uint64_t seed)
{
	static struct cshared sh;
	static struct cthread ct[NTHREADS];
	static long long d[CN][ND];
	struct tree t;
	struct caches c;
	struct snap root0, base[CN];
	static const int thread_node[NTHREADS] = { 3, 4, 5, 1 };
	unsigned long errors = 0, foreign = 0, migrations = 0;
	struct rng r;

	print_message("concurrency: %s, %u CPU slots, rseq %s, %u iterations per thread, seed %#llx\n",
		      pin_mode == 1 ? "pinned, one slot each" :
		      pin_mode == 2 ? "pinned, two threads per slot" : "unpinned", alloc_nr_cpus(),
		      alloc_uses_rseq() ? "on" : "off", iters, (unsigned long long)seed);
	rng_seed(&r, seed);
	memcg_drain();
	take(root_mem_cgroup(), &root0);
	caches_create(&c);
	tree_init(&t);
	tree_add(&t, 0);	/* 1 A */
	tree_add(&t, 0);	/* 2 B */
	tree_add(&t, 1);	/* 3 A1 */
	tree_add(&t, 1);	/* 4 A2 */
	tree_add(&t, 2);	/* 5 B1 */
	memcg_drain();
	for (int i = 0; i < t.n; i++)
		take(t.m[i], &base[i]);

	memset(&sh, 0, sizeof(sh));
	pthread_mutex_init(&sh.lock, NULL);
	sh.t = &t;
	sh.c = &c;
	sh.iters = iters;
	sh.pin_mode = pin_mode;
	atomic_store(&sh.ready, 0);
	for (int i = 0; i < NTHREADS; i++) {
		memset(&ct[i], 0, sizeof(ct[i]));
		ct[i].sh = &sh;
		ct[i].id = i;
		ct[i].node = thread_node[i];
		ct[i].task = mktask(3000 + i, t.m[thread_node[i]]);
		t.task[thread_node[i]] = ct[i].task;
		rng_seed(&ct[i].r, rnd(&r));
	}
	for (int i = 0; i < NTHREADS; i++)
		EXPECT_EQ(pthread_create(&ct[i].th, NULL, cthread_main, &ct[i]), 0, "pthread_create");
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(ct[i].th, NULL);

	memset(d, 0, sizeof(d));
	for (int i = 0; i < NTHREADS; i++) {
		for (int n = 0; n < CN; n++)
			for (int k = 0; k < ND; k++)
				d[n][k] += ct[i].d[n][k];
		errors += ct[i].errors;
		foreign += ct[i].foreign;
		migrations += ct[i].migrations;
	}
	print_message("  %lu frees of another thread's allocation, %lu migrations, %u objects left in the pool\n",
		      foreign, migrations, sh.npool);
	DEFER_EQ(errors, 0, "errors in the threads");
	DEFER_TRUE(foreign > 0, "some frees ran under another task");
	/* quiescent, pool objects still live: exact statistics */
	tree_check(&t, base, d, false, "after the threads (pool live)");
	memcg_drain();
	tree_check(&t, base, d, true, "after the threads (pool live, drained)");

	/* the pool is freed by the main thread under various tasks */
	for (unsigned int j = 0; j < sh.npool; j++) {
		memcg_set_current(rnd_below(&r, 2) ? NULL : ct[rnd_below(&r, NTHREADS)].task);
		DEFER_EQ(item_free(&sh.pool[j]), 0, "free of a pool item");
		item_apply(d, &sh.pool[j], -1);
	}
	sh.npool = 0;
	memcg_set_current(NULL);
	tree_check(&t, base, d, false, "all freed (no drain)");
	memcg_drain();
	for (int i = 0; i < t.n; i++) {
		char what[64];

		snprintf(what, sizeof(what), "node %d back to its baseline", i);
		expect_back(t.m[i], &base[i], what);
	}
	expect_memcg_check("after the concurrency test");
	caches_destroy(&c);
	/* tasks are kept in t.task[] only for the ones first placed there;
	 * exit all of them here */
	for (int i = 0; i < CN; i++)
		t.task[i] = NULL;
	for (int i = 0; i < NTHREADS; i++)
		task_exit_checked(ct[i].task, "concurrency");
	tree_destroy(&t, &root0);
	pthread_mutex_destroy(&sh.lock);
}

static void test_concurrency_pinned(void **state)
{
	(void)state;
	concurrency_body(1, 30000, test_seed(0xa4093822299f31d0ull));
}

static void test_concurrency_unpinned(void **state)
{
	(void)state;
	concurrency_body(0, 30000, test_seed(0x082efa98ec4e6c89ull));
}

/* Two threads per CPU slot: the per-CPU locks. */
static void test_concurrency_pinned_same_slot(void **state)
{
	(void)state;
	concurrency_body(2, 20000, test_seed(0x7137449123ef65cdull));
}

/*
 * A removed cgroup whose last reference is gone waits ~20 ms on its parent's
 * children list before it is reaped.  A reclaim walking the subtree in that
 * window must not take a reference on it (that queued it for reaping twice:
 * a double free), and memcg_check() must accept its objcg, which sits at
 * refcnt 0 on the parent's list meanwhile.
 */
static void test_reclaim_during_reap(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	int r;

	(void)state;
	DEFER_EQ(mem_cgroup_offline(a), 0, "offline");
	mem_cgroup_put(a);
	expect_memcg_check("in the reaping window");
	r = write_str(root_mem_cgroup(), "memory.reclaim", "4096");
	DEFER_TRUE(r == 0 || r == -EAGAIN, "memory.reclaim on the root");
	DEFER_TRUE(wait_dying(root_mem_cgroup(), 0), "the removed memcg reaped once");
	expect_memcg_check("after the reap");
}

/*
 * memcg_drain() gives back the whole pages objcgs hold as leftover bytes,
 * taking a reference on each objcg it picks under objcg_lock.  An objcg
 * whose last reference is gone waits at refcnt 0 on its list for its reap;
 * a drain that saw a page of bytes on it (a stock refill on another CPU took
 * them, then the last put, between its check and its get) raised it from 0
 * and dropped it to 0 again: queued for reaping twice, freed twice.  The
 * window cannot be scheduled from here, so a live objcg is made to look
 * like that one (refcnt 0, a page of bytes) for the drain; it must be left
 * alone.
 */
static void test_drain_skips_dying_objcg(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct obj_cgroup *o = atomic_load(&a->objcg);
	long refs;
	unsigned int mode;

	(void)state;
	assert_non_null(o);
	memcg_drain();
	/* killed and switched to atomic mode, at zero */
	mode = atomic_exchange(&o->refcnt.mode, PERCPU_REF_DEAD);
	refs = atomic_exchange(&o->refcnt.count, 0);
	atomic_fetch_add(&o->nr_charged_bytes, (long)PG);
	memcg_drain();
	DEFER_EQ(atomic_load(&o->refcnt.count), 0, "the dying objcg's refcnt after a drain");
	DEFER_EQ(atomic_load(&o->nr_charged_bytes), (long)PG, "its bytes after a drain");
	atomic_fetch_sub(&o->nr_charged_bytes, (long)PG);
	atomic_store(&o->refcnt.count, refs);
	atomic_store(&o->refcnt.mode, mode);
	expect_memcg_check("after the drain");
	DEFER_EQ(mem_cgroup_offline(a), 0, "offline");
	mem_cgroup_put(a);
	DEFER_TRUE(wait_dying(root_mem_cgroup(), 0), "the removed memcg reaped");
	expect_memcg_check("after the reap");
}

/* ================================================================== */

int main(void)
{
	const struct CMUnitTest init_tests[] = {
		cmocka_unit_test(test_config_and_init_errors),
	};
	const struct CMUnitTest core_tests[] = {
		T4(test_tree_basics),
		T4(test_page_type_names),
		T4(test_current_api),
		T4(test_stock_precharge),
		T4(test_slab_bytes_exact),
		T4(test_page_types),
		T4(test_task_exit_frees_owned),
		T4(test_cross_cgroup_free),
		T4(test_objcg_percpu_ref),
		T4(test_root_task_moved_while_current),
		T4(test_migration),
		T4(test_attach_races),
		T4(test_rmdir_with_live_objects),
		T4(test_rmdir_kmem_only_reaped),
		T4(test_rcu_reader_outlives_last_put),
		T4(test_mkdir_charges),
		T4(test_root_not_charged),
		T4(test_task_exit_after_foreign_free),
		T4(test_reinit_with_pending_stats),
		T4(test_hierarchy_random),
		T4(test_reclaim_during_reap),
		T4(test_drain_skips_dying_objcg),
	};
	const struct CMUnitTest batch_tests[] = {
		TB16(test_stock_precharge_batch16),
	};
	const struct CMUnitTest file_tests[] = {
		T4(test_stat_keys),
		T4(test_numa_stat),
		T4(test_events_files),
		T4(test_file_table),
		T4(test_file_rw_errors),
		T4(test_memparse_writes),
		T4(test_int_writes),
		T4(test_reclaim_parse),
		T4(test_page_counter_memparse),
		T4(test_peak),
	};
	const struct CMUnitTest nodes2_tests[] = {
		TN2(test_numa_stat_2nodes),
	};
	const struct CMUnitTest limit_tests[] = {
		T4(test_max_enforced),
		T4(test_max_ancestor),
	};
	const struct CMUnitTest conc_tests[] = {
		T4(test_concurrency_pinned),
		T4(test_concurrency_pinned_same_slot),
	};
	const struct CMUnitTest online_tests[] = {
		TO(test_concurrency_unpinned),
	};
	const char *filter = getenv("MEMCG_TEST_FILTER");
	int failed = 0;

	if (filter)
		cmocka_set_test_filter(filter);
	failed += cmocka_run_group_tests_name("memcg_init", init_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_core", core_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_batch16", batch_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_files", file_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_nodes2", nodes2_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_limits", limit_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_concurrency", conc_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("memcg_online", online_tests, NULL, NULL);
	return failed ? 1 : 0;
}
