/* SPDX-License-Identifier: MIT */
/*
 * alloc_caches.c - unit tests of alloc/: kmem_cache lifecycle and errors, /proc/slabinfo,
 * shrinking and the partial lists (§2, §3, §11).
 */
#include "test_alloc.h"

/* ------------------------------------------------------------------ */

void test_cache_lifecycle(void **state)
{
	struct alloc_stats st0, st;
	struct kmem_cache *s, *s2;
	char name[32];
	void *a, *b;
	int err = 0;

	(void)state;
	stats(&st0);
	strcpy(name, "lifecycle");
	s = kmem_cache_create(name, 100, 0, 0);
	assert_non_null(s);
	strcpy(name, "garbage__");	/* the name was copied */
	EXPECT_STR(kmem_cache_name(s), "lifecycle", "name copied");
	assert_ptr_equal(kmem_cache_find("lifecycle"), s);
	assert_null(kmem_cache_find("garbage__"));
	stats(&st);
	EXPECT_EQ(st.nr_caches, st0.nr_caches + 1, "nr_caches after create");

	err = 0;
	s2 = kmem_cache_create_err("lifecycle", 200, 0, 0, &err);
	assert_null(s2);
	EXPECT_EQ(err, -EEXIST, "second create of a name");
	err = 0;
	assert_null(kmem_cache_create_err("kmalloc-64", 64, 0, 0, &err));
	EXPECT_EQ(err, -EEXIST, "create with a kmalloc cache's name");
	assert_null(kmem_cache_create("lifecycle", 100, 0, 0));

	a = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(a);
	EXPECT_EQ(kmem_cache_destroy(s), -EBUSY, "destroy with a live object");
	assert_ptr_equal(kmem_cache_find("lifecycle"), s);
	b = kmem_cache_alloc(s, GFP_KERNEL);	/* still works */
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	memset(a, 1, 100);
	memset(b, 2, 100);
	kmem_cache_free(s, a);
	EXPECT_EQ(kmem_cache_destroy(s), -EBUSY, "destroy with one live object");
	kmem_cache_free(s, b);
	/* Objects sitting free in CPU freelists do not keep it busy. */
	EXPECT_DESTROY(s, "after freeing everything");
	assert_null(kmem_cache_find("lifecycle"));
	stats(&st);
	EXPECT_EQ(st.nr_caches, st0.nr_caches, "nr_caches after destroy");
	EXPECT_EQ(st.pages_slab, st0.pages_slab, "destroy frees the cache's slabs");

	/* The name is free again. */
	s = kmem_cache_create("lifecycle", 100, 0, 0);
	assert_non_null(s);
	kmem_cache_set_owner(s, 1000);
	{
		struct kmem_cache_info info;

		kmem_cache_info(s, &info);
		EXPECT_EQ(info.owner, 1000, "kmem_cache_set_owner");
	}
	EXPECT_DESTROY(s, "recreated");
}

void test_cache_create_errors(void **state)
{
	struct alloc_stats st0, st;
	int err;

	(void)state;
	stats(&st0);
#define BAD(nm, size, align, flags, what) do {				\
	err = 0;							\
	assert_null(kmem_cache_create_err(nm, size, align, flags, &err)); \
	EXPECT_EQ(err, -EINVAL, "%s", what);				\
	assert_null(kmem_cache_create(nm, size, align, flags));	\
	assert_null(kmem_cache_create_err(nm, size, align, flags, NULL)); \
} while (0)
	BAD("bad1", 64, 0, 0x1u, "flag outside SLAB_FLAGS_PERMITTED");
	BAD("bad2", 64, 0, 0x80000000u, "high flag");
	BAD("bad3", 64, 0, SLAB_HWCACHE_ALIGN | 0x100u, "permitted plus one bad flag");
	BAD("bad4", 0, 0, 0, "size 0");
	BAD("bad5", (unsigned)(4 * MIB + 1), 0, 0, "size above KMALLOC_MAX_SIZE");
	BAD("bad6", 64, 3, 0, "align 3");
	BAD("bad7", 64, 24, 0, "align 24");
	BAD("bad8", 64, 48, SLAB_HWCACHE_ALIGN, "align 48");
	BAD("", 64, 0, 0, "empty name");
#undef BAD
	stats(&st);
	EXPECT_EQ(st.nr_caches, st0.nr_caches, "failed creates add no cache");
	assert_null(kmem_cache_find("bad1"));

	/* Accepted corners. */
	static const struct { unsigned size, align; slab_flags_t flags; } ok[] = {
		{ 1, 0, 0 }, { 64, 1, 0 }, { 64, 8, 0 }, { 64, 4096, 0 },
		{ 64, 0, SLAB_FLAGS_PERMITTED }, { 64, 0, SLAB_PANIC },
		{ (unsigned)(4 * MIB), 0, 0 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char name[32];
		struct kmem_cache *s;

		snprintf(name, sizeof(name), "ok_%zu", i);
		err = 1;
		s = kmem_cache_create_err(name, ok[i].size, ok[i].align, ok[i].flags, &err);
		if (!s)
			fail_msg("kmem_cache_create(%s, size %u, align %u, flags %#x) failed: %d",
				 name, ok[i].size, ok[i].align, ok[i].flags, err);
		EXPECT_DESTROY(s, name);
	}
}

void test_cache_max_object(void **state)
{
	struct kmem_cache_info info;
	struct kmem_cache *s;
	void *p;

	(void)state;
	s = kmem_cache_create("four_mib", (unsigned)(4 * MIB), 0, 0);
	assert_non_null(s);
	kmem_cache_info(s, &info);
	EXPECT_EQ(info.order, 10, "4 MiB object: order");
	EXPECT_EQ(info.objects, 1, "4 MiB object: objects per slab");
	EXPECT_EQ(info.size, 4 * MIB, "4 MiB object: stride");
	p = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(p);
	EXPECT_EQ((uintptr_t)p % PG, 0, "4 MiB object page aligned");
	check_in_arena(p, 4 * MIB, "4 MiB object");
	memset(p, 0x42, 4 * MIB);
	kmem_cache_free(s, p);
	EXPECT_DESTROY(s, "four_mib");
}

/* ------------------------------------------------------------------ */
/* slabinfo helpers                                                    */

static char *slabinfo_text(void)
{
	char one[1];
	size_t n = slabinfo_format(one, sizeof(one));
	char *buf = malloc(n + 1);

	assert_non_null(buf);
	EXPECT_EQ(slabinfo_format(buf, n + 1), n, "slabinfo_format length stable");
	EXPECT_EQ(strlen(buf), n, "slabinfo strlen");
	return buf;
}

/* Copy of the line whose name column is 'name'; *count = how many. */
static char *slabinfo_line(const char *text, const char *name, int *count)
{
	char *found = NULL;
	const char *l = text;
	size_t nl = strlen(name);

	*count = 0;
	while (*l) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		if (len > nl && strncmp(l, name, nl) == 0 && l[nl] == ' ') {
			(*count)++;
			if (!found)
				found = strndup(l, len);
		}
		if (!e)
			break;
		l = e + 1;
	}
	return found;
}

static void expected_slabinfo_line(char *buf, size_t len, const char *name,
				   unsigned long active, unsigned long num,
				   unsigned objsize, unsigned objperslab, int pages,
				   unsigned long slabs)
{
	snprintf(buf, len,
		 "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu",
		 name, active, num, objsize, objperslab, pages, 0u, 0u, 0u, slabs, slabs, 0ul);
}

void expect_slabinfo(const char *name, unsigned long active, unsigned long num,
		     unsigned objsize, unsigned objperslab, int pages,
		     unsigned long slabs)
{
	char exp[256];
	char *text = slabinfo_text();
	int count;
	char *line = slabinfo_line(text, name, &count);

	expected_slabinfo_line(exp, sizeof(exp), name, active, num, objsize, objperslab,
			       pages, slabs);
	if (count != 1 || !line || strcmp(line, exp) != 0) {
		print_error("slabinfo line for %s (%d found):\n  got      \"%s\"\n  expected \"%s\"\n",
			    name, count, line ? line : "(none)", exp);
		free(line);
		free(text);
		fail();
	}
	free(line);
	free(text);
}

void test_slabinfo_format(void **state)
{
	static const char hdr[] =
		"slabinfo - version: 2.1\n"
		"# name            <active_objs> <num_objs> <objsize> <objperslab> "
		"<pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : "
		"slabdata <active_slabs> <num_slabs> <sharedavail>\n";
	struct kmem_cache *sa, *sb;
	void *objs[20], *ob;
	char *text, *pos_a, *pos_b, exp[256];
	struct alloc_stats st;

	(void)state;
	/* docs/kernel-slab.md's own example line, through docs/kernel-slab.md's format. */
	expected_slabinfo_line(exp, sizeof(exp), "kmalloc-4k", 1056, 1088, 4096, 8, 8, 136);
	assert_string_equal(exp, "kmalloc-4k          1056   1088   4096    8    8 : tunables    0    0    0 : slabdata    136    136      0");

	pin(0);
	sa = kmem_cache_create("si_a", 2312, 0, SLAB_HWCACHE_ALIGN);
	sb = kmem_cache_create("si_b", 64, 0, 0);
	assert_non_null(sa);
	assert_non_null(sb);
	expect_slabinfo("si_a", 0, 0, 2368, 13, 8, 0);
	expect_slabinfo("si_b", 0, 0, 64, 64, 1, 0);
	for (unsigned i = 0; i < 20; i++) {
		objs[i] = kmem_cache_alloc(sa, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	ob = kmem_cache_alloc(sb, GFP_KERNEL);
	assert_non_null(ob);
	/* §11: active = num - free objects on node partial lists; the CPU
	 * slab's free objects count as active.  20 objects -> 2 slabs of 13. */
	expect_slabinfo("si_a", 26, 26, 2368, 13, 8, 2);
	expect_slabinfo("si_b", 64, 64, 64, 64, 1, 1);

	text = slabinfo_text();
	assert_true(strncmp(text, hdr, strlen(hdr)) == 0);
	pos_a = strstr(text, "\nsi_a ");
	pos_b = strstr(text, "\nsi_b ");
	assert_non_null(pos_a);
	assert_non_null(pos_b);
	/* Newest first. */
	assert_true(pos_b < pos_a);
	/* Every kmalloc cache exactly once, after the newer caches; every line
	 * in the exact format. */
	for (unsigned t = 0; t < NR_KMALLOC_TYPES; t++)
		for (unsigned idx = 1; idx < REF_NR_INDEX; idx++) {
			char name[64];
			int count;
			char *line;

			snprintf(name, sizeof(name), "%s%s", ref_type_prefix[t], ref_class_suffix[idx]);
			line = slabinfo_line(text, name, &count);
			if (count != 1)
				fail_msg("slabinfo lists %s %d times", name, count);
			assert_true(strstr(text, line) > pos_a);
			free(line);
		}
	{
		unsigned lines = 0;
		const char *l = text + strlen(hdr);

		while (*l) {
			const char *e = strchr(l, '\n');
			char name[128], again[256], *line;
			unsigned long active, num, as, ns, sh;
			unsigned objsize, per, t1, t2, t3;
			int pages;

			if (!e)
				fail_msg("slabinfo does not end with a newline");
			line = strndup(l, (size_t)(e - l));
			if (sscanf(line, "%127s %lu %lu %u %u %d : tunables %u %u %u : slabdata %lu %lu %lu",
				   name, &active, &num, &objsize, &per, &pages, &t1, &t2, &t3,
				   &as, &ns, &sh) != 12)
				fail_msg("slabinfo line does not parse: \"%s\"", line);
			snprintf(again, sizeof(again),
				 "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu",
				 name, active, num, objsize, per, pages, t1, t2, t3, as, ns, sh);
			if (strcmp(again, line) != 0)
				fail_msg("slabinfo line not in the kernel's format:\n  \"%s\"\n  \"%s\"", line, again);
			assert_int_equal(t1, 0);
			assert_int_equal(t2, 0);
			assert_int_equal(t3, 0);
			assert_int_equal(sh, 0);
			assert_int_equal(as, ns);
			assert_int_equal(num, ns * per);
			assert_true(active <= num);
			assert_true(pages >= 1 && (pages & (pages - 1)) == 0);
			free(line);
			lines++;
			l = e + 1;
		}
		stats(&st);
		EXPECT_EQ(lines, st.nr_caches, "slabinfo lines == nr_caches");
	}

	/* Truncation: at most len bytes, NUL-terminated; returns the full length. */
	{
		size_t n = strlen(text);
		char small[10], *big = malloc(n + 1);

		assert_non_null(big);
		memset(small, 'x', sizeof(small));
		EXPECT_EQ(slabinfo_format(small, 0), n, "slabinfo_format(len 0)");
		assert_int_equal(small[0], 'x');
		EXPECT_EQ(slabinfo_format(small, sizeof(small)), n, "slabinfo_format(len 10)");
		assert_int_equal(strlen(small), 9);
		assert_memory_equal(small, text, 9);
		EXPECT_EQ(slabinfo_format(big, n), n, "slabinfo_format(len n)");
		assert_int_equal(strlen(big), n - 1);
		assert_memory_equal(big, text, n - 1);
		EXPECT_EQ(slabinfo_format(big, n + 1), n, "slabinfo_format(len n + 1)");
		assert_string_equal(big, text);
		free(big);
	}
	free(text);

	/* After a shrink the CPU slab goes to the node partial list, so its
	 * free objects stop counting as active. */
	assert_true(kmem_cache_shrink(sa) >= 0);
	expect_slabinfo("si_a", 20, 26, 2368, 13, 8, 2);
	for (unsigned i = 0; i < 20; i++)
		kmem_cache_free(sa, objs[i]);
	kmem_cache_free(sb, ob);
	kmem_cache_shrink(sa);
	kmem_cache_shrink(sb);
	expect_slabinfo("si_a", 0, 0, 2368, 13, 8, 0);
	expect_slabinfo("si_b", 0, 0, 64, 64, 1, 0);
	EXPECT_DESTROY(sb, "si_b");
	EXPECT_DESTROY(sa, "si_a");
	text = slabinfo_text();
	assert_null(strstr(text, "\nsi_a "));
	free(text);
}

void test_shrink(void **state)
{
	struct kmem_cache *s;
	struct kmem_cache_info info;
	struct alloc_stats base, st, before;
	void *objs[100];
	int freed;

	(void)state;
	pin(0);
	s = kmem_cache_create("shrink_t", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	kmem_cache_info(s, &info);
	assert_int_equal(info.objects, 13);
	assert_int_equal(info.order, 3);
	kmem_cache_shrink_all();
	stats(&base);

	for (unsigned i = 0; i < 100; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	for (unsigned i = 0; i < 100; i++)
		kmem_cache_free(s, objs[i]);
	stats(&before);
	freed = kmem_cache_shrink(s);
	stats(&st);
	assert_true(freed >= 0);
	EXPECT_EQ(before.pages_slab - st.pages_slab, (unsigned long)freed * 8,
		  "pages freed by kmem_cache_shrink == returned slabs * 8");
	EXPECT_EQ(st.pages_slab, base.pages_slab, "pages_slab back to the start");
	EXPECT_EQ(st.pages_free, base.pages_free, "pages_free back to the start");
	EXPECT_EQ(kmem_cache_shrink(s), 0, "second shrink frees nothing");

	/* Live objects keep their slabs: 30 objects = 13 + 13 + 4; free the
	 * first slab's 13; shrink frees exactly that slab. */
	for (unsigned i = 0; i < 30; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	for (unsigned i = 0; i < 13; i++)
		kmem_cache_free(s, objs[i]);
	EXPECT_EQ(kmem_cache_shrink(s), 1, "shrink with one empty slab");
	stats(&st);
	EXPECT_EQ(st.pages_slab - base.pages_slab, 16, "two slabs left");
	expect_slabinfo("shrink_t", 17, 26, 2368, 13, 8, 2);
	for (unsigned i = 13; i < 30; i++)
		kmem_cache_free(s, objs[i]);
	EXPECT_EQ(kmem_cache_shrink(s), 2, "shrink after freeing the rest");
	stats(&st);
	EXPECT_EQ(st.pages_slab, base.pages_slab, "pages_slab back to the start");
	EXPECT_DESTROY(s, "shrink_t");
}

/*
 * The partial-list tests' start, on CPU 0: a cache of 2312-byte objects
 * with SLAB_HWCACHE_ALIGN (13 a slab, min_partial 5, 4 CPU partial slabs),
 * the other caches shrunk, base taken, then 260 objects: 20 full slabs.
 */
static struct kmem_cache *twenty_full_slabs(const char *name, void **objs,
					    struct kmem_cache_info *info,
					    struct alloc_stats *base)
{
	struct kmem_cache *s;

	pin(0);
	s = kmem_cache_create(name, 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	kmem_cache_info(s, info);
	assert_int_equal(info->objects, 13);
	assert_int_equal(info->min_partial, 5);
	assert_int_equal(info->cpu_partial_slabs, 4);
	kmem_cache_shrink_all();
	stats(base);
	for (unsigned i = 0; i < 260; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(objs[i]);
	}
	return s;
}

/*
 * §2.7 and §3.3, one CPU: 260 objects = 20 full slabs of 13, freed in
 * allocation order.  cpu_partial_slabs = DIV_ROUND_UP(24 * 2, 13) = 4,
 * min_partial = clamp(ilog2(2368) / 2, 5, 10) = 5.
 * - S1..S4: each first free of a full slab puts it on the CPU partial list.
 * - S5: the list holds 4 -> S1..S4 (all empty) go to the node list (nr_partial
 *   0..3 < 5, all kept), S5 on the CPU list.  S9: S8 kept (nr_partial 4),
 *   S7, S6, S5 discarded.  S13, S17: the four flushed are discarded.
 * - S17..S19 stay on the CPU partial list (empty; a slab that is not on the
 *   node list is left alone by __slab_free), S20 is the CPU slab.
 * => 5 + 3 + 1 = 9 slabs, 117 object slots, active = 117 - 5 * 13 = 52.
 */
void test_partial_lists(void **state)
{
	static void *objs[260];
	struct kmem_cache *s;
	struct kmem_cache_info info;
	struct alloc_stats base, st;
	char *text, *line;
	int count, freed;
	unsigned long active, num, as, slabs;

	(void)state;
	s = twenty_full_slabs("plist", objs, &info, &base);
	assert_int_equal(info.cpu_partial, 24);
	stats(&st);
	EXPECT_EQ(st.pages_slab - base.pages_slab, 160, "20 slabs of 8 pages");
	expect_slabinfo("plist", 260, 260, 2368, 13, 8, 20);
	for (unsigned i = 0; i < 260; i++)
		kmem_cache_free(s, objs[i]);
	stats(&st);
	slabs = (st.pages_slab - base.pages_slab) / 8;
	/* The limit: at most min_partial on the node, cpu_partial_slabs on the
	 * CPU list (the one being added after a flush included), one CPU slab. */
	if (slabs > 5 + 4 + 1)
		fail_msg("%lu empty slabs kept after freeing everything; limit 10", slabs);
	text = slabinfo_text();
	line = slabinfo_line(text, "plist", &count);
	assert_non_null(line);
	assert_int_equal(sscanf(line, "plist %lu %lu %*u %*u %*d : tunables %*u %*u %*u : slabdata %lu",
				&active, &num, &as), 3);
	print_message("after freeing 260: %lu slabs, slabinfo active %lu num %lu\n", slabs, active, num);
	free(line);
	free(text);
	EXPECT_EQ(slabs, 9, "slabs kept after freeing all 260 in order (kernel: 5 node + 3 cpu partial + cpu slab)");
	expect_slabinfo("plist", 52, 117, 2368, 13, 8, 9);

	freed = kmem_cache_shrink(s);
	EXPECT_EQ(freed, 9, "kmem_cache_shrink frees the 9 empty slabs");
	stats(&st);
	EXPECT_EQ(st.pages_slab, base.pages_slab, "pages_slab back to the start");
	expect_slabinfo("plist", 0, 0, 2368, 13, 8, 0);
	EXPECT_DESTROY(s, "plist");
}

/*
 * __slab_free discards a slab that becomes empty on the node partial list
 * once the node holds min_partial (5) or more (the kernel's >=).  One CPU,
 * 20 full slabs of 13: one free in each of S1..S9 (S1..S4, then S5..S8
 * flushed from the CPU partial list: 8 partial slabs on the node), then
 * S1..S4 emptied in order: S1, S2, S3 go with 8, 7, 6 on the node, S4
 * with exactly 5: 16 slabs left (17 if the boundary were > min_partial).
 */
void test_partial_discard_at_min(void **state)
{
	static void *objs[260];
	struct kmem_cache_info info;
	struct alloc_stats base, st;
	struct kmem_cache *s;

	(void)state;
	s = twenty_full_slabs("pdisc", objs, &info, &base);
	expect_slabinfo("pdisc", 260, 260, 2368, 13, 8, 20);
	for (unsigned k = 0; k < 9; k++) {
		kmem_cache_free(s, objs[k * 13]);
		objs[k * 13] = NULL;
	}
	for (unsigned k = 0; k < 4; k++)
		for (unsigned i = k * 13 + 1; i < (k + 1) * 13; i++) {
			kmem_cache_free(s, objs[i]);
			objs[i] = NULL;
		}
	/* a free in another slab hands S4's gathered run to __slab_free */
	kmem_cache_free(s, objs[9 * 13 + 1]);
	objs[9 * 13 + 1] = NULL;
	stats(&st);
	EXPECT_EQ((st.pages_slab - base.pages_slab) / 8, 16,
		  "slabs left: the fourth emptied with nr_partial == min_partial is discarded");
	for (unsigned i = 0; i < 260; i++)
		if (objs[i])
			kmem_cache_free(s, objs[i]);
	kmem_cache_shrink(s);
	EXPECT_DESTROY(s, "pdisc");
}

