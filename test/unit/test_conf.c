// SPDX-License-Identifier: MIT
/*
 * Unit tests of conf/: defaults, the shipped memcgfs.ini, every key through
 * a file and through conf_set(), size parsing, the exact "FILE:LINE: reason"
 * of each error, the cross-field rules and the conf_format() round trip.
 * Files are written to a fresh mkdtemp() directory per test and removed.
 */
#include "conf.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef MEMCGFS_DEFAULT_INI
#error "MEMCGFS_DEFAULT_INI must name conf/memcgfs.ini"
#endif

#define MAX_FILES 8

struct tmp {
	char dir[PATH_MAX];
	char path[PATH_MAX];		/* the last file written */
	char files[MAX_FILES][PATH_MAX];
	int nfiles;
};

static int tmp_setup(void **state)
{
	const char *base = getenv("TMPDIR");
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "%s/test_conf.XXXXXX",
		 base && *base ? base : "/tmp");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;
	int ret = 0;

	for (int i = 0; i < t->nfiles; i++)
		if (unlink(t->files[i]))
			ret = -1;
	if (rmdir(t->dir))
		ret = -1;
	free(t);
	return ret;
}

/* Write @text to DIR/@name, remember it for teardown, return its path. */
static const char *tmp_file(struct tmp *t, const char *name, const char *text)
{
	FILE *f;
	int i;

	assert_true((size_t)snprintf(t->path, sizeof(t->path), "%s/%s", t->dir,
				    name) < sizeof(t->path));
	for (i = 0; i < t->nfiles; i++)
		if (!strcmp(t->files[i], t->path))
			break;
	if (i == t->nfiles) {
		assert_true(t->nfiles < MAX_FILES);
		strcpy(t->files[t->nfiles++], t->path);
	}
	f = fopen(t->path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return t->path;
}

/* --- every key, for table-driven tests --------------------------------- */

struct key {
	const char *section;
	const char *name;
	size_t offset;
	size_t size;
	uint64_t def;
	const char *other;	/* a valid non-default value ... */
	uint64_t other_v;	/* ... and what it means */
	const char *min, *max;	/* the bounds, accepted */
	const char *below;	/* min - 1, refused (NULL if min is 0) */
	const char *above;	/* max + 1, refused */
};

#define KEY(sect, nm) #sect, #nm, offsetof(struct memcgfs_config, sect.nm), \
	sizeof(((struct memcgfs_config *)0)->sect.nm)

static const struct key keys[] = {
	{ KEY(machine, memory), 1ull << 30, "2G", 2ull << 30,
	  "16M", "64G", "16777215", "68719476737" },
	{ KEY(machine, page_size), 4096, "16K", 16384,
	  "4096", "65536", "2048", "131072" },
	{ KEY(machine, cpus), 0, "7", 7, "0", "256", NULL, "257" },
	{ KEY(machine, nodes), 1, "4", 4, "1", "64", "0", "65" },
	{ KEY(machine, cache_line), 64, "128", 128, "16", "256", "8", "512" },
	{ KEY(slab, min_order), 0, "1", 1, "0", "3", NULL, "4" },
	{ KEY(slab, max_order), 3, "5", 5, "0", "10", NULL, "11" },
	{ KEY(slab, min_objects), 0, "30", 30, "0", "32767", NULL, "32768" },
	{ KEY(memcg, charge_batch), 64, "16", 16, "1", "127", "0", "128" },
	{ KEY(memcg, real_interval), 200, "1000", 1000, "10", "60000", "9", "60001" },
	{ KEY(fs, threads), 10, "4", 4, "1", "1024", "0", "1025" },
	{ KEY(fs, max_handles_per_uid), 0, "4096", 4096, "0", "16777216", NULL, "16777217" },
	{ KEY(fs, max_sessions_per_uid), 0, "64", 64, "0", "1048576", NULL, "1048577" },
	{ KEY(fs, max_cgroups_per_uid), 0, "100", 100, "0", "1048576", NULL, "1048577" },
	{ KEY(fs, max_waiting_per_uid), 0, "32", 32, "0", "1048576", NULL, "1048577" },
	{ KEY(fs, max_open_per_uid), 0, "5000", 5000, "0", "1048576", NULL, "1048577" },
	{ KEY(trace, buffer_events), 65536, "1024", 1024,
	  "16", "16777216", "15", "16777217" },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static uint64_t key_get(const struct memcgfs_config *c, const struct key *k)
{
	const char *f = (const char *)c + k->offset;
	uint32_t u32;
	uint64_t u64;

	if (k->size == 4) {
		memcpy(&u32, f, 4);
		return u32;
	}
	assert_int_equal(k->size, 8);
	memcpy(&u64, f, 8);
	return u64;
}

/* Non-default values in every field that still pass conf_validate(). */
static void other_config(struct memcgfs_config *c)
{
	conf_defaults(c);
	c->machine.memory = 256ull << 20;
	c->machine.page_size = 16384;
	c->machine.cpus = 3;
	c->machine.nodes = 2;
	c->machine.cache_line = 128;
	c->slab.min_order = 2;
	c->slab.max_order = 9;
	c->slab.min_objects = 100;
	c->memcg.charge_batch = 32;
	c->memcg.high_throttle = false;
	c->memcg.real_memory = true;
	c->memcg.real_interval = 50;
	assert_int_equal(conf_set(c, "oom_kill_signal", "SIGKILL", NULL, 0), 0);
	c->fs.threads = 3;
	/* strings through conf_set(): the whole field, as a load leaves it */
	assert_int_equal(conf_set(c, "ctl_mode", "0600", NULL, 0), 0);
	assert_int_equal(conf_set(c, "root_subtree_control", "", NULL, 0), 0);
	c->fs.allow_other = false;
	c->fs.user_slices = true;
	c->fs.max_handles_per_uid = 1000;
	c->fs.max_sessions_per_uid = 10;
	c->fs.max_cgroups_per_uid = 20;
	c->fs.max_waiting_per_uid = 30;
	c->fs.max_open_per_uid = 40;
	c->trace.buffer_events = 4096;
	assert_int_equal(conf_validate(c, NULL, 0), 0);
}

/* --- defaults and the shipped file ------------------------------------- */

/* memcg.oom_kill_signal: names, numbers, none; anything else stops the load */
static void test_oom_kill_signal(void **state)
{
	struct memcgfs_config c;
	char err[256] = "";

	(void)state;
	assert_int_equal(conf_signal("none"), 0);
	assert_int_equal(conf_signal("SIGKILL"), 9);
	assert_int_equal(conf_signal("KILL"), 9);
	assert_int_equal(conf_signal("15"), 15);
	assert_int_equal(conf_signal("SIGBOGUS"), -EINVAL);
	assert_int_equal(conf_signal("65"), -EINVAL);
	assert_int_equal(conf_signal("9x"), -EINVAL);
	conf_defaults(&c);
	/* conf_set() refuses it at once; a field written directly, conf_validate() */
	assert_int_equal(conf_set(&c, "memcg.oom_kill_signal", "SIGBOGUS", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "memcg.oom_kill_signal"));
	assert_string_equal(c.memcg.oom_kill_signal, "none");
	strcpy(c.memcg.oom_kill_signal, "SIGBOGUS");
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "memcg.oom_kill_signal"));
	/* the blanks around a value are not part of it, as a file's load
	 * strips them: ' SIGKILL ' is SIGKILL, not a signal lost to -EINVAL */
	assert_int_equal(conf_set(&c, "memcg.oom_kill_signal", " SIGKILL ", NULL, 0), 0);
	assert_string_equal(c.memcg.oom_kill_signal, "SIGKILL");
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
	assert_int_equal(conf_signal(c.memcg.oom_kill_signal), 9);
}

static void test_defaults(void **state)
{
	struct memcgfs_config c;
	char err[256] = "";

	(void)state;
	memset(&c, 0xa5, sizeof(c));
	conf_defaults(&c);
	assert_int_equal(c.machine.memory, 1ull << 30);
	assert_int_equal(c.machine.page_size, 4096);
	assert_int_equal(c.machine.cpus, 0);
	assert_int_equal(c.machine.nodes, 1);
	assert_int_equal(c.machine.cache_line, 64);
	assert_int_equal(c.slab.min_order, 0);
	assert_int_equal(c.slab.max_order, 3);
	assert_int_equal(c.slab.min_objects, 0);
	assert_int_equal(c.fs.threads, 10);
	assert_string_equal(c.fs.ctl_mode, "0666");
	assert_string_equal(c.fs.root_subtree_control, "memory");
	assert_true(c.fs.allow_other);
	assert_int_equal(c.trace.buffer_events, 65536);
	for (size_t i = 0; i < NKEYS; i++)
		assert_int_equal(key_get(&c, &keys[i]), keys[i].def);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
}

static void test_shipped_ini(void **state)
{
	struct memcgfs_config c, def, other;
	char err[512] = "";

	(void)state;
	conf_defaults(&def);

	/* Over garbage: the file must name every key. */
	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(conf_load(&c, MEMCGFS_DEFAULT_INI, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_memory_equal(&c, &def, sizeof(c));

	/* Over a valid configuration that differs in every key. */
	other_config(&other);
	for (size_t i = 0; i < NKEYS; i++)
		assert_int_not_equal(key_get(&other, &keys[i]), keys[i].def);
	assert_int_equal(conf_load(&other, MEMCGFS_DEFAULT_INI, err,
				   sizeof(err)), 0);
	assert_memory_equal(&other, &def, sizeof(other));
}

/* --- every key --------------------------------------------------------- */

static void test_every_key_file(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c;
	char text[2048], err[512] = "";
	size_t n = 0;

	/* One file setting every key, each section once. */
	for (size_t i = 0; i < NKEYS; i++) {
		if (!i || strcmp(keys[i].section, keys[i - 1].section))
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "[%s]\n", keys[i].section);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s = %s\n",
				      keys[i].name, keys[i].other);
	}
	assert_true(n < sizeof(text));
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, tmp_file(t, "all.ini", text), err,
				   sizeof(err)), 0);
	for (size_t i = 0; i < NKEYS; i++)
		assert_int_equal(key_get(&c, &keys[i]), keys[i].other_v);

	/* One file per key: only that key changes. */
	for (size_t i = 0; i < NKEYS; i++) {
		struct memcgfs_config want;

		conf_defaults(&want);
		conf_defaults(&c);
		snprintf(text, sizeof(text), "[%s]\n%s = %s\n",
			 keys[i].section, keys[i].name, keys[i].other);
		assert_int_equal(conf_load(&c, tmp_file(t, "one.ini", text),
					   err, sizeof(err)), 0);
		memcpy((char *)&want + keys[i].offset,
		       (char *)&c + keys[i].offset, keys[i].size);
		assert_int_equal(key_get(&c, &keys[i]), keys[i].other_v);
		assert_memory_equal(&c, &want, sizeof(c));
	}
}

static void test_every_key_set(void **state)
{
	struct memcgfs_config c, want;
	char full[64], err[256];

	(void)state;
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];

		/* "key" */
		conf_defaults(&c);
		err[0] = '\0';
		assert_int_equal(conf_set(&c, k->name, k->other, err,
					  sizeof(err)), 0);
		assert_string_equal(err, "");
		assert_int_equal(key_get(&c, k), k->other_v);
		conf_defaults(&want);
		memcpy((char *)&want + k->offset, (char *)&c + k->offset,
		       k->size);
		assert_memory_equal(&c, &want, sizeof(c));

		/* "section.key" */
		conf_defaults(&c);
		snprintf(full, sizeof(full), "%s.%s", k->section, k->name);
		assert_int_equal(conf_set(&c, full, k->other, err,
					  sizeof(err)), 0);
		assert_int_equal(key_get(&c, k), k->other_v);
		assert_memory_equal(&c, &want, sizeof(c));

		/* Bounds: accepted at min and max, refused just outside. */
		assert_int_equal(conf_set(&c, full, k->min, err, sizeof(err)), 0);
		assert_int_equal(conf_set(&c, full, k->max, err, sizeof(err)), 0);
		if (k->below)
			assert_int_equal(conf_set(&c, k->name, k->below, err,
						  sizeof(err)), -ERANGE);
		assert_int_equal(conf_set(&c, k->name, k->above, err,
					  sizeof(err)), -ERANGE);

		/* Refused values leave the struct alone. */
		assert_int_equal(conf_set(&c, k->name, k->other, err,
					  sizeof(err)), 0);
		want = c;
		assert_int_equal(conf_set(&c, k->name, "", err, sizeof(err)),
				 -EINVAL);
		assert_int_equal(conf_set(&c, k->name, "x", err, sizeof(err)),
				 -EINVAL);
		assert_int_equal(conf_set(&c, k->name, "-1", err, sizeof(err)),
				 -EINVAL);
		assert_int_equal(conf_set(&c, k->name, k->above, err,
					  sizeof(err)), -ERANGE);
		assert_memory_equal(&c, &want, sizeof(c));
	}
}

static void test_bounds_file(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c;
	char text[256], err[512], want[512];

	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const char *bad[2] = { k->below, k->above };

		for (int j = 0; j < 2; j++) {
			const char *path;

			if (!bad[j])
				continue;
			snprintf(text, sizeof(text), "# bounds\n[%s]\n%s = %s\n",
				 k->section, k->name, bad[j]);
			path = tmp_file(t, "bounds.ini", text);
			conf_defaults(&c);
			assert_int_equal(conf_load(&c, path, err, sizeof(err)),
					 -EINVAL);
			snprintf(want, sizeof(want), "%s:3: %s.%s: %s is out of range",
				 path, k->section, k->name, bad[j]);
			assert_memory_equal(err, want, strlen(want));
		}
	}
}

/* --- sizes --------------------------------------------------------------- */

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 }, { "1", 1 }, { "4096", 4096 }, { "007", 7 },
		{ "1k", 1024 }, { "1K", 1024 }, { "2m", 2 << 20 },
		{ "2M", 2 << 20 }, { "3g", 3ull << 30 }, { "3G", 3ull << 30 },
		{ "0K", 0 }, { " 4K ", 4096 }, { "\t5\n", 5 },
		{ "  64G", 64ull << 30 },
		{ "18446744073709551615", UINT64_MAX },
		{ "18014398509481983K", UINT64_MAX - 1023 },
		{ "17592186044415M", UINT64_MAX - ((1ull << 20) - 1) },
		{ "17179869183G", UINT64_MAX - ((1ull << 30) - 1) },
	};
	static const char *const bad[] = {
		"", " ", "\t\n", "-1", "+1", "1.5G", "1KB", "1Kb", "1 K", "K",
		"G", "0x10", "1T", "1GG", "abc", "1 2", "1e3", "1_000", "１",
		"4096 bytes", "1K 1",
	};
	static const char *const huge[] = {
		"18446744073709551616", "99999999999999999999999",
		"18014398509481984K", "17592186044416M", "17179869184G",
		" 17179869184g ",
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		assert_int_equal(conf_parse_size(good[i].s, &v), 0);
		assert_int_equal(v, good[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		assert_int_equal(conf_parse_size(bad[i], &v), -EINVAL);
		assert_int_equal(v, 12345);
	}
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		v = 12345;
		assert_int_equal(conf_parse_size(huge[i], &v), -ERANGE);
		assert_int_equal(v, 12345);
	}
	/* Overflow with garbage after it is still malformed. */
	assert_int_equal(conf_parse_size("99999999999999999999x", &v), -EINVAL);
	assert_int_equal(conf_parse_size(NULL, &v), -EINVAL);
}

static void test_size_keys(void **state)
{
	struct memcgfs_config c;
	char err[256];

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_set(&c, "memory", "4096M", err, sizeof(err)), 0);
	assert_int_equal(c.machine.memory, 4ull << 30);
	assert_int_equal(conf_set(&c, "memory", " 64g ", err, sizeof(err)), 0);
	assert_int_equal(c.machine.memory, 64ull << 30);
	assert_int_equal(conf_set(&c, "page_size", "64k", err, sizeof(err)), 0);
	assert_int_equal(c.machine.page_size, 65536);
	/* Counts take no suffix. */
	assert_int_equal(conf_set(&c, "buffer_events", "1K", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "trace.buffer_events: invalid number '1K' (expected decimal digits)");
	assert_int_equal(conf_set(&c, "memory", "1.5G", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "machine.memory: invalid size '1.5G' (expected decimal digits with an optional K, M or G suffix)");
	assert_int_equal(conf_set(&c, "memory", "99999999999999999999", err,
				  sizeof(err)), -ERANGE);
	assert_string_equal(err, "machine.memory: '99999999999999999999' is too large");
	assert_int_equal(conf_set(&c, "memory", "  ", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.memory: empty value");
}

/* --- conf_set errors ----------------------------------------------------- */

static void test_set_errors(void **state)
{
	static const char *const unknown[] = {
		"foo", "machine.foo", "slab.memory", "bogus.memory", ".memory",
		"memory.", "machine.", "", "Memory", "machine..memory",
		"machine.memory.x",
	};
	struct memcgfs_config c, def;
	char err[256], want[256];

	(void)state;
	conf_defaults(&def);
	c = def;
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_int_equal(conf_set(&c, unknown[i], "1", err, sizeof(err)),
				 -EINVAL);
		snprintf(want, sizeof(want), "unknown key '%s'", unknown[i]);
		assert_string_equal(err, want);
	}
	assert_int_equal(conf_set(&c, "cpus", NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.cpus: no value");

	assert_int_equal(conf_set(&c, "machine.memory", "8M", err, sizeof(err)),
			 -ERANGE);
	assert_string_equal(err, "machine.memory: 8M is out of range 16M..64G");
	assert_int_equal(conf_set(&c, "page_size", "12288", err, sizeof(err)),
			 -ERANGE);
	assert_string_equal(err, "machine.page_size: 12288 is not a power of two");
	assert_int_equal(conf_set(&c, "cache_line", " 96 ", err, sizeof(err)),
			 -ERANGE);
	assert_string_equal(err, "machine.cache_line: 96 is not a power of two");
	assert_int_equal(conf_set(&c, "cache_line", "512", err, sizeof(err)),
			 -ERANGE);
	assert_string_equal(err, "machine.cache_line: 512 is out of range 16..256");
	assert_int_equal(conf_set(&c, "nodes", "0", err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "machine.nodes: 0 is out of range 1..64");
	assert_int_equal(conf_set(&c, "cpus", "-1", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.cpus: invalid number '-1' (expected decimal digits)");

	/* A short error buffer is truncated, never overrun; none is fine. */
	memset(err, 'x', sizeof(err));
	assert_int_equal(conf_set(&c, "foo", "1", err, 8), -EINVAL);
	assert_string_equal(err, "unknown");
	assert_int_equal(err[8], 'x');
	assert_int_equal(conf_set(&c, "foo", "1", NULL, 0), -EINVAL);

	assert_memory_equal(&c, &def, sizeof(c));
}

/* --- cross-field rules --------------------------------------------------- */

static void test_validate(void **state)
{
	struct memcgfs_config c;
	char err[256];

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);

	/* memory: a multiple of page_size << 10. */
	assert_int_equal(conf_set(&c, "memory", "18M", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.memory: 18M is not a multiple of 4M (machine.page_size << 10, the largest buddy block)");
	assert_int_equal(conf_set(&c, "memory", "16M", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "page_size", "64K", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.memory: 16M is not a multiple of 64M (machine.page_size << 10, the largest buddy block)");
	assert_int_equal(conf_set(&c, "memory", "192M", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
	c.machine.memory = (64ull << 20) + 4096;
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.memory: 65540K is not a multiple of 64M (machine.page_size << 10, the largest buddy block)");

	/* nodes: each a whole number of those blocks (192M is three of them) */
	c.machine.memory = 192ull << 20;
	assert_int_equal(conf_set(&c, "nodes", "3", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "nodes", "2", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.memory: 192M is not a whole number of 64M blocks (the largest buddy block) for each of machine.nodes = 2");
	assert_int_equal(conf_set(&c, "nodes", "1", err, sizeof(err)), 0);

	/* max_order >= min_order. */
	conf_defaults(&c);
	assert_int_equal(conf_set(&c, "min_order", "3", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "max_order", "3", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "max_order", "2", err, sizeof(err)), 0);
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "slab.max_order: 2 is less than slab.min_order (3)");

	/* Fields set directly are checked against the table's ranges too. */
	conf_defaults(&c);
	c.machine.cpus = 257;
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.cpus: 257 is out of range 0..256");
	conf_defaults(&c);
	c.machine.page_size = 3 * 4096;
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.page_size: 12K is not a power of two");
	conf_defaults(&c);
	c.trace.buffer_events = 0;
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "trace.buffer_events: 0 is out of range 16..16777216");
	conf_defaults(&c);
	c.machine.memory = 0;
	assert_int_equal(conf_validate(&c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "machine.memory: 0 is out of range 16M..64G");
}

/* --- file errors, each with its exact FILE:LINE -------------------------- */

struct bad_file {
	const char *text;
	const char *reason;	/* after "FILE:" */
};

static const struct bad_file bad_files[] = {
	/* unknown section, with and without keys */
	{ "[machine]\nmemory = 1G\n[bogus]\n",
	  "3: unknown section '[bogus]'" },
	{ "# c\n\n[bogus]\nx = 1\n[machine]\n",
	  "3: unknown section '[bogus]'" },
	{ "[ machine ]\nmemory = 1G\n",
	  "1: unknown section '[ machine ]'" },
	{ "[Machine]\n", "1: unknown section '[Machine]'" },
	/* unknown key, key in another section, key before any section */
	{ "[machine]\n\n; c\n# c\nfoo = 1\n",
	  "5: unknown key 'foo' in section [machine]" },
	{ "[machine]\nmemory = 1G\n[slab]\nmemory = 1G\n",
	  "4: key 'memory' belongs in section [machine], not [slab]" },
	{ "memory = 1G\n[machine]\n", "1: key 'memory' outside any section" },
	/* malformed values */
	{ "[machine]\nmemory = 1.5G\n",
	  "2: machine.memory: invalid size '1.5G' (expected decimal digits with an optional K, M or G suffix)" },
	{ "[machine]\nmemory = 1G # one gig\n",
	  "2: machine.memory: invalid size '1G # one gig' (expected decimal digits with an optional K, M or G suffix)" },
	{ "[machine]\ncpus = two\n",
	  "2: machine.cpus: invalid number 'two' (expected decimal digits)" },
	{ "[machine]\ncpus = 4K\n",
	  "2: machine.cpus: invalid number '4K' (expected decimal digits)" },
	{ "[slab]\nmin_objects = -1\n",
	  "2: slab.min_objects: invalid number '-1' (expected decimal digits)" },
	{ "[machine]\nmemory = 99999999999999999999\n",
	  "2: machine.memory: '99999999999999999999' is too large" },
	/* empty values */
	{ "[machine]\ncpus =\n", "2: machine.cpus: empty value" },
	{ "[machine]\nnodes = ; nothing\n", "2: machine.nodes: empty value" },
	{ "[trace]\nbuffer_events:\n", "2: trace.buffer_events: empty value" },
	/* out of range */
	{ "[machine]\nmemory = 8M\n",
	  "2: machine.memory: 8M is out of range 16M..64G" },
	{ "[machine]\nmemory = 65G\n",
	  "2: machine.memory: 65G is out of range 16M..64G" },
	{ "[machine]\npage_size = 12288\n",
	  "2: machine.page_size: 12288 is not a power of two" },
	{ "[machine]\ncache_line = 48\n",
	  "2: machine.cache_line: 48 is not a power of two" },
	{ "\n\n\n[slab]\nmin_order = 4\n",
	  "5: slab.min_order: 4 is out of range 0..3" },
	{ "[slab]\nmax_order = 11\n",
	  "2: slab.max_order: 11 is out of range 0..10" },
	{ "[slab]\nmin_objects = 32768\n",
	  "2: slab.min_objects: 32768 is out of range 0..32767" },
	{ "[trace]\nbuffer_events = 8\n",
	  "2: trace.buffer_events: 8 is out of range 16..16777216" },
	/* syntax */
	{ "[machine]\nmemory 1G\n",
	  "2: syntax error (expected '[section]', 'key = value' or a comment)" },
	{ "[machine\nmemory = 1G\n",
	  "1: syntax error (expected '[section]', 'key = value' or a comment)" },
	{ "[machine]\nmemory = 1G\ncpus\n",
	  "3: syntax error (expected '[section]', 'key = value' or a comment)" },
	/* the first error is the one reported, whoever finds it */
	{ "[machine]\nfoo = 1\nbar\n",
	  "2: unknown key 'foo' in section [machine]" },
	{ "[machine]\nbar\nfoo = 1\n",
	  "2: syntax error (expected '[section]', 'key = value' or a comment)" },
	{ "[machine]\nbar\n[bogus]\n",
	  "2: syntax error (expected '[section]', 'key = value' or a comment)" },
	{ "[bogus]\nbar\n",
	  "1: unknown section '[bogus]'" },
	{ "[machine]\ncpus = 1\ncpus = x\nnodes = 0\n",
	  "3: machine.cpus: invalid number 'x' (expected decimal digits)" },
	/* line numbers survive CRLF, indentation, a BOM and no final newline */
	{ "[machine]\r\nmemory = 1G\r\n\r\n  cpus = x\r\n",
	  "4: machine.cpus: invalid number 'x' (expected decimal digits)" },
	{ "\xEF\xBB\xBF[machine]\n\tnodes = 0",
	  "2: machine.nodes: 0 is out of range 1..64" },
	/* cross-field rules: the file, no line */
	{ "[machine]\nmemory = 18M\n",
	  " machine.memory: 18M is not a multiple of 4M (machine.page_size << 10, the largest buddy block)" },
	{ "[machine]\npage_size = 65536\nmemory = 96M\n",
	  " machine.memory: 96M is not a multiple of 64M (machine.page_size << 10, the largest buddy block)" },
	{ "[slab]\nmin_order = 3\nmax_order = 2\n",
	  " slab.max_order: 2 is less than slab.min_order (3)" },
};

static void test_file_errors(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c, def;
	char err[512], want[1024];

	conf_defaults(&def);
	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		const char *path = tmp_file(t, "bad.ini", bad_files[i].text);

		c = def;
		memset(err, 0, sizeof(err));
		assert_int_equal(conf_load(&c, path, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "%s:%s", path, bad_files[i].reason);
		assert_string_equal(err, want);
		/* A failed load changes nothing. */
		assert_memory_equal(&c, &def, sizeof(c));
	}
}

static void test_long_line(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c;
	char text[4096], err[512], want[1024];
	const char *path;
	int n;

	/* A long comment is still a comment if it fits inih's line... */
	n = snprintf(text, sizeof(text), "[machine]\n# ");
	memset(text + n, 'c', 150);
	strcpy(text + n + 150, "\ncpus = 2\n");
	path = tmp_file(t, "long.ini", text);
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.machine.cpus, 2);

	/* ...and a line longer than that is refused at its own number,
	 * without shifting the lines after it. */
	n = snprintf(text, sizeof(text), "[machine]\ncpus = 2\n# ");
	memset(text + n, 'c', 3000);
	strcpy(text + n + 3000, "\nnodes = x\n");
	path = tmp_file(t, "long.ini", text);
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: line too long", path);
	assert_memory_equal(err, want, strlen(want));
	assert_int_equal(c.machine.cpus, 0);

	/* A NUL byte in a line. */
	memcpy(text, "[machine]\ncpus = 2\0\n", 20);
	path = tmp_file(t, "nul.ini", "");
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, 20, f), 20);
		assert_int_equal(fclose(f), 0);
	}
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: NUL character in line", path);
	assert_string_equal(err, want);
}

static void test_file_open_errors(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c, def;
	char path[PATH_MAX + 16], err[PATH_MAX + 64], want[PATH_MAX + 64];

	conf_defaults(&def);
	c = def;
	snprintf(path, sizeof(path), "%s/missing.ini", t->dir);
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	assert_string_equal(err, want);

	/* A directory opens but does not read. */
	assert_int_equal(conf_load(&c, t->dir, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: read error: %s", t->dir,
		 strerror(EISDIR));
	assert_string_equal(err, want);

	if (geteuid() != 0) {
		const char *p = tmp_file(t, "noread.ini", "[machine]\n");

		assert_int_equal(chmod(p, 0), 0);
		assert_int_equal(conf_load(&c, p, err, sizeof(err)), -EACCES);
	}
	assert_memory_equal(&c, &def, sizeof(c));
}

/* --- what a file may contain --------------------------------------------- */

static void test_file_syntax(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c;
	char err[512] = "";
	const char *path;

	/* Empty file and comments only: nothing changes. */
	conf_defaults(&c);
	path = tmp_file(t, "s.ini", "");
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), 0);
	path = tmp_file(t, "s.ini", "# only\n; comments\n\n[machine]\n[slab]\n");
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), 0);

	/* Indented keys are keys, not continuation lines; inline ';'
	 * comments, "key: value", CRLF and a later line overriding. */
	path = tmp_file(t, "s.ini",
			"[machine]\n"
			"memory = 2G\n"
			"    cpus = 4\n"
			"\tnodes = 2 ; two nodes\n"
			"cache_line: 32\r\n"
			"[slab]\n"
			"max_order = 4\n"
			"[machine]\n"
			"memory = 512M\n"
			"[slab]\n"
			"max_order = 5\n");
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.machine.memory, 512ull << 20);
	assert_int_equal(c.machine.cpus, 4);
	assert_int_equal(c.machine.nodes, 2);
	assert_int_equal(c.machine.cache_line, 32);
	assert_int_equal(c.slab.max_order, 5);
	assert_int_equal(c.machine.page_size, 4096);

	/* Loading is over the current values: keys not named stay. */
	path = tmp_file(t, "s2.ini", "[trace]\nbuffer_events = 100\n");
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.trace.buffer_events, 100);
	assert_int_equal(c.machine.memory, 512ull << 20);

	/* The cross-field rule sees the whole file, not line by line. */
	path = tmp_file(t, "s3.ini",
			"[machine]\nmemory = 18M\nmemory = 24M\n"
			"[slab]\nmin_order = 3\nmax_order = 2\nmax_order = 3\n");
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.machine.memory, 24ull << 20);

	/* ...and the struct it checks is the loaded one merged with the old:
	 * page_size from before, memory from the file. */
	conf_defaults(&c);
	c.machine.page_size = 65536;
	c.machine.memory = 64ull << 20;
	path = tmp_file(t, "s4.ini", "[machine]\nmemory = 32M\n");
	assert_int_equal(conf_load(&c, path, err, sizeof(err)), -EINVAL);
}

/* --- [fs]: strings and booleans ------------------------------------------ */

static void test_fs_keys(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c, want;
	char err[256], big[64];

	/* -o root_subtree_control= : an empty string is a value */
	conf_defaults(&c);
	assert_int_equal(conf_set(&c, "root_subtree_control", "", err, sizeof(err)), 0);
	assert_string_equal(c.fs.root_subtree_control, "");
	assert_int_equal(conf_set(&c, "fs.root_subtree_control", "memory", err, sizeof(err)), 0);
	assert_string_equal(c.fs.root_subtree_control, "memory");
	/* too long for the field: refused, nothing changes */
	want = c;
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(conf_set(&c, "root_subtree_control", big, err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "fs.root_subtree_control: value is too long (at most 13 characters)");
	assert_memory_equal(&c, &want, sizeof(c));

	assert_int_equal(conf_set(&c, "ctl_mode", "0600", err, sizeof(err)), 0);
	assert_string_equal(c.fs.ctl_mode, "0600");

	/* booleans: every spelling, and garbage */
	assert_int_equal(conf_set(&c, "allow_other", "no", err, sizeof(err)), 0);
	assert_false(c.fs.allow_other);
	assert_int_equal(conf_set(&c, "fs.allow_other", "On", err, sizeof(err)), 0);
	assert_true(c.fs.allow_other);
	assert_int_equal(conf_set(&c, "allow_other", "0", err, sizeof(err)), 0);
	assert_false(c.fs.allow_other);
	assert_int_equal(conf_set(&c, "allow_other", "maybe", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "fs.allow_other: invalid boolean 'maybe' (expected true, false, yes, no, on, off, 1 or 0)");
	assert_int_equal(conf_set(&c, "allow_other", "", err, sizeof(err)), -EINVAL);

	/* a file: "root_subtree_control =" with nothing after it */
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, tmp_file(t, "fs.ini",
				   "[fs]\nroot_subtree_control =\nallow_other = false\nthreads = 2\n"),
				   err, sizeof(err)), 0);
	assert_string_equal(c.fs.root_subtree_control, "");
	assert_false(c.fs.allow_other);
	assert_int_equal(c.fs.threads, 2);
	/* a key of [fs] in another section says where it belongs */
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, tmp_file(t, "fs.ini", "[machine]\nthreads = 2\n"),
				   err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: key 'threads' belongs in section [fs], not [machine]"));
}

/* --- conf_format --------------------------------------------------------- */

static void test_format(void **state)
{
	static const char want[] =
		"[machine]\n"
		"memory = 1G\n"
		"page_size = 4K\n"
		"cpus = 0\n"
		"nodes = 1\n"
		"cache_line = 64\n"
		"\n"
		"[slab]\n"
		"min_order = 0\n"
		"max_order = 3\n"
		"min_objects = 0\n"
		"\n"
		"[memcg]\n"
		"charge_batch = 64\n"
		"high_throttle = true\n"
		"oom_kill_signal = none\n"
		"real_memory = false\n"
		"real_interval = 200\n"
		"\n"
		"[fs]\n"
		"threads = 10\n"
		"ctl_mode = 0666\n"
		"root_subtree_control = memory\n"
		"allow_other = true\n"
		"user_slices = false\n"
		"max_handles_per_uid = 0\n"
		"max_sessions_per_uid = 0\n"
		"max_cgroups_per_uid = 0\n"
		"max_waiting_per_uid = 0\n"
		"max_open_per_uid = 0\n"
		"\n"
		"[trace]\n"
		"buffer_events = 65536\n";
	struct memcgfs_config c;
	char buf[1024], small[10];
	int n;

	(void)state;
	conf_defaults(&c);
	n = conf_format(&c, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));

	/* snprintf's contract: full length, truncated, NUL-terminated. */
	memset(small, 'x', sizeof(small));
	assert_int_equal(conf_format(&c, small, sizeof(small)), n);
	assert_memory_equal(small, want, sizeof(small) - 1);
	assert_int_equal(small[sizeof(small) - 1], '\0');
	assert_int_equal(conf_format(&c, NULL, 0), n);
	assert_int_equal(conf_format(&c, buf, (size_t)n), n);
	assert_int_equal(strlen(buf), n - 1);
	assert_int_equal(conf_format(&c, buf, (size_t)n + 1), n);
	assert_string_equal(buf, want);

	/* Sizes take the largest exact suffix. */
	c.machine.memory = (1ull << 30) + (4ull << 20);
	conf_format(&c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nmemory = 1028M\n"));
	c.machine.memory = (1ull << 30) + 1;
	conf_format(&c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nmemory = 1073741825\n"));
}

static void round_trip(struct tmp *t, const struct memcgfs_config *in)
{
	struct memcgfs_config out;
	char buf[1024], err[512] = "";
	int n;

	n = conf_format(in, buf, sizeof(buf));
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(conf_load(&out, tmp_file(t, "rt.ini", buf), err,
				   sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_memory_equal(&out, in, sizeof(out));
}

static void test_format_round_trip(void **state)
{
	struct tmp *t = *state;
	struct memcgfs_config c;

	conf_defaults(&c);
	round_trip(t, &c);
	other_config(&c);
	round_trip(t, &c);

	/* Every key at its bounds. */
	for (int hi = 0; hi < 2; hi++) {
		char err[256];

		conf_defaults(&c);
		for (size_t i = 0; i < NKEYS; i++)
			assert_int_equal(conf_set(&c, keys[i].name,
						  hi ? keys[i].max : keys[i].min,
						  err, sizeof(err)), 0);
		assert_int_equal(conf_validate(&c, err, sizeof(err)), 0);
		round_trip(t, &c);
	}
	c.machine.memory = (64ull << 30) - (64ull << 20);
	c.machine.nodes = 1;	/* 1023 blocks: no whole share for 64 nodes */
	round_trip(t, &c);
}

/*
 * A string value set at runtime must round-trip through a file: the bytes
 * inih treats as comment or syntax (';', '#', '[', ']', '=', a newline),
 * other control bytes, non-ASCII bytes and a value outside the key's own
 * grammar are -EINVAL, and the configuration is unchanged.
 */
static void test_string_values(void **state)
{
	static const char *const skeys[] = {
		"memcg.oom_kill_signal", "fs.ctl_mode", "fs.root_subtree_control",
	};
	static const char *const bad[] = {
		"SIGKILL;x", "SIGKILL ;x", ";", "#x", "SIGKILL #x", "[fs]", "a]", "a=b",
		"SIG\nKILL", "0600\n[fs]", "x\ty", "x\ry", "\x7f", "\xc3\xa9", "\xff",
	};
	static const struct {
		const char *key, *value;
	} wrong[] = {
		{ "oom_kill_signal", "" }, { "oom_kill_signal", "SIGBOGUS" },
		{ "oom_kill_signal", "65" }, { "oom_kill_signal", "0" },
		{ "ctl_mode", "" }, { "ctl_mode", "0800" }, { "ctl_mode", "1000" },
		{ "ctl_mode", "rw" }, { "ctl_mode", "0x1ff" }, { "ctl_mode", "-1" },
		{ "root_subtree_control", "cpu" }, { "root_subtree_control", "+memory" },
		{ "root_subtree_control", "memory cpu" },
	};
	struct tmp *t = *state;
	struct memcgfs_config c, before;
	char err[256];

	other_config(&c);
	before = c;
	for (size_t k = 0; k < sizeof(skeys) / sizeof(skeys[0]); k++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			err[0] = '\0';
			assert_int_equal(conf_set(&c, skeys[k], bad[i], err, sizeof(err)), -EINVAL);
			assert_non_null(strstr(err, skeys[k]));
			assert_memory_equal(&c, &before, sizeof(c));
		}
	}
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		err[0] = '\0';
		assert_int_equal(conf_set(&c, wrong[i].key, wrong[i].value, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, wrong[i].key));
		assert_memory_equal(&c, &before, sizeof(c));
	}
	/* blanks around a value are not part of it (a file's load strips them) */
	assert_int_equal(conf_set(&c, "oom_kill_signal", "\tSIGKILL\r", err, sizeof(err)), 0);
	assert_string_equal(c.memcg.oom_kill_signal, "SIGKILL");
	/* the values each key does take still do, and round-trip */
	assert_int_equal(conf_set(&c, "oom_kill_signal", "15", err, sizeof(err)), 0);
	round_trip(t, &c);
	assert_int_equal(conf_set(&c, "oom_kill_signal", "SIGUSR1", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "ctl_mode", "0777", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "root_subtree_control", "memory", err, sizeof(err)), 0);
	round_trip(t, &c);
	assert_int_equal(conf_set(&c, "ctl_mode", "0", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "root_subtree_control", " ", err, sizeof(err)), 0);
	assert_string_equal(c.fs.root_subtree_control, "");
	round_trip(t, &c);
	/* and a file cannot smuggle them in either */
	assert_int_equal(conf_load(&c, tmp_file(t, "bad.ini", "[fs]\nctl_mode = 0600=1\n"), err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad.ini:2: fs.ctl_mode"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_oom_kill_signal),
		cmocka_unit_test(test_shipped_ini),
		cmocka_unit_test_setup_teardown(test_every_key_file, tmp_setup,
						tmp_teardown),
		cmocka_unit_test(test_every_key_set),
		cmocka_unit_test_setup_teardown(test_bounds_file, tmp_setup,
						tmp_teardown),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_size_keys),
		cmocka_unit_test(test_set_errors),
		cmocka_unit_test(test_validate),
		cmocka_unit_test_setup_teardown(test_file_errors, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_long_line, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_open_errors, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_syntax, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_fs_keys, tmp_setup, tmp_teardown),
		cmocka_unit_test(test_format),
		cmocka_unit_test_setup_teardown(test_format_round_trip,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_string_values, tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
