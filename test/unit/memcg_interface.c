/* SPDX-License-Identifier: MIT */
/*
 * memcg_interface.c - unit tests of memcg/: the interface files: memory.stat, numa_stat and
 * events formats, the file table, write parsing, memory.peak.
 */
#include "test_memcg.h"

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

void test_stat_keys(void **state)
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

void test_numa_stat(void **state)
{
	(void)state;
	numa_stat_body(1);
}

void test_numa_stat_2nodes(void **state)
{
	(void)state;
	numa_stat_body(2);
}

void test_events_files(void **state)
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

void test_file_table(void **state)
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

void test_file_rw_errors(void **state)
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

void test_memparse_writes(void **state)
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

void test_int_writes(void **state)
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

void test_reclaim_parse(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	static const char *const bad[] = {
		"abc", "max", "\n", " ", "-1", "1.5G", "100 foo", "100 swappiness=201",
		"100 swappiness=-1", "100 swappiness=abc", "100 swappiness=", "swappiness=10",
		/* mm/vmscan.c: match_token's "%d" is simple_strtol (no '+', no
		 * space), to the token's end; match_int under 24 characters */
		"100 swappiness=+5", "100 swappiness= 5", "100 swappiness=5 x", "100 swappiness=--1",
		"100 swappiness=10\tswappiness=5", "100 swappiness=08", "100 swappiness=0x",
		"100 swappiness=0xc9", "100 swappiness=4294967296", "100 swappiness=000000000000000000000001",
		"100 swappiness=maxx", "100 swappiness=MAX", "100 Swappiness=10", "100 swappiness=max\v1",
		"1M swappiness=max swappiness=+1",
	};
	/* accepted as the kernel's: the rest after the amount is stripped
	 * (a tab or newline separates), then split at spaces; the amount needs
	 * no separator; "-" is read as 0; simple_strtol wraps */
	static const char *const good[] = {
		"100\tswappiness=10", "100\nswappiness=10", "\t100 \n\tswappiness=max\n",
		"100  swappiness=10   swappiness=max ", "100swappiness=10", "1kswappiness=max",
		"100 swappiness=0x10", "100 swappiness=010", "100 swappiness=-0", "100 swappiness=-",
		"100 swappiness=00000000000000000000001", "100 swappiness=18446744073709551616",
		"100 swappiness=-18446744073709551615", "k", "100 swappiness=max swappiness=0",
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
	for (unsigned int i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		DEFER_EQ(write_str(a, "memory.reclaim", good[i]), 0, "reclaim \"%s\"", good[i]);
	rm(a);
}

void test_page_counter_memparse(void **state)
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

void test_peak(void **state)
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

