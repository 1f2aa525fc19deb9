/* SPDX-License-Identifier: MIT */
/*
 * test_xattr - fs/xattr.c without FUSE: the attributes of a cgroup's nodes
 * as kernfs keeps them (set, get, list, remove, flags and errnos), kernfs's
 * caps on user.* per node, trusted.* listed only when asked, and a node's
 * attributes dropped when it goes (memory.* with the memcg, all with the
 * cgroup; ASan's leak check sees the last).
 */
#include "internal.h"
#include "conf.h"
#include "memcg.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include <cmocka.h>
#include "fixture.h"

static struct memcgfs_config conf;
static struct cgroup *cg;
static char buf[1 << 17];

static int setup(void **state)
{
	(void)state;
	conf_defaults(&conf);
	if (fixture_machine(64ull << 20, 2) || fs_files_init())
		return -1;
	if (tree_init(&conf) || cgroup_mkdir(fs_root, "a", 0755, 0, 0, &cg))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tree_exit();
	memcg_exit();
	alloc_exit();
	return 0;
}

/* The node of a file of cg: 1 + its index. */
static unsigned int node(const char *file)
{
	int idx = fs_file_index(file);

	assert_true(idx >= 0);
	return (unsigned int)idx + 1;
}

static const char *list(unsigned int idx, bool trusted)
{
	ssize_t n = fs_xattr_list(cg, idx, trusted, buf, sizeof(buf));

	assert_true(n >= 0);
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = i + 1 < n ? ',' : '\0';
	buf[n] = '\0';
	return buf;
}

static void test_set_get_list_remove(void **state)
{
	unsigned int max = node("memory.max");

	(void)state;
	assert_int_equal(fs_xattr_set(cg, 0, "user.oomd_avoid", "1", 1, 0), 0);
	assert_int_equal(fs_xattr_set(cg, 0, "trusted.delegate", "yes", 3, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.note", "limit", 5, 0), 0);
	assert_int_equal(fs_xattr_get(cg, 0, "trusted.delegate", NULL, 0), 3);
	assert_int_equal(fs_xattr_get(cg, 0, "trusted.delegate", buf, 3), 3);
	assert_memory_equal(buf, "yes", 3);
	assert_int_equal(fs_xattr_get(cg, 0, "trusted.delegate", buf, 2), -ERANGE);
	assert_int_equal(fs_xattr_get(cg, max, "user.oomd_avoid", buf, 8), -ENODATA);
	assert_string_equal(list(0, true), "trusted.delegate,user.oomd_avoid");
	assert_string_equal(list(0, false), "user.oomd_avoid");
	assert_string_equal(list(max, true), "user.note");
	assert_int_equal(fs_xattr_list(cg, 0, true, NULL, 0), 33);
	assert_int_equal(fs_xattr_list(cg, 0, true, buf, 32), -ERANGE);
	assert_int_equal(fs_xattr_list(cg, 0, false, buf, 16), 16);

	/* flags */
	assert_int_equal(fs_xattr_set(cg, 0, "user.oomd_avoid", "2", 1, XATTR_CREATE), -EEXIST);
	assert_int_equal(fs_xattr_set(cg, 0, "user.new", "2", 1, XATTR_REPLACE), -ENODATA);
	assert_int_equal(fs_xattr_set(cg, 0, "user.oomd_avoid", "22", 2, XATTR_REPLACE), 0);
	assert_int_equal(fs_xattr_get(cg, 0, "user.oomd_avoid", buf, 8), 2);
	assert_int_equal(fs_xattr_set(cg, 0, "user.new", "", 0, XATTR_CREATE), 0);
	assert_int_equal(fs_xattr_get(cg, 0, "user.new", buf, 8), 0);
	assert_int_equal(fs_xattr_set(cg, 0, "user.x", "1", 1, 4), -EINVAL);

	/* remove */
	assert_int_equal(fs_xattr_remove(cg, 0, "user.new"), 0);
	assert_int_equal(fs_xattr_remove(cg, 0, "user.new"), -ENODATA);
	assert_int_equal(fs_xattr_remove(cg, max, "user.oomd_avoid"), -ENODATA);
	assert_string_equal(list(0, true), "trusted.delegate,user.oomd_avoid");
}

static void test_names(void **state)
{
	char name[300];

	(void)state;
	assert_int_equal(fs_xattr_set(cg, 0, "security.selinux", "x", 1, 0), -EOPNOTSUPP);
	assert_int_equal(fs_xattr_set(cg, 0, "system.posix_acl_access", "x", 1, 0), -EOPNOTSUPP);
	assert_int_equal(fs_xattr_set(cg, 0, "user", "x", 1, 0), -EOPNOTSUPP);
	assert_int_equal(fs_xattr_get(cg, 0, "foo.bar", buf, 8), -EOPNOTSUPP);
	assert_int_equal(fs_xattr_remove(cg, 0, "foo.bar"), -EOPNOTSUPP);
	assert_int_equal(fs_xattr_set(cg, 0, "user.", "x", 1, 0), -EINVAL);
	assert_int_equal(fs_xattr_set(cg, 0, "trusted.", "x", 1, 0), -EINVAL);
	assert_int_equal(fs_xattr_set(cg, 0, "", "x", 1, 0), -ERANGE);
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[255] = '\0';
	assert_int_equal(fs_xattr_set(cg, 0, name, "x", 1, 0), 0);
	name[255] = 'n';
	name[256] = '\0';
	assert_int_equal(fs_xattr_set(cg, 0, name, "x", 1, 0), -ERANGE);
	assert_int_equal(fs_xattr_set(cg, 0, "user.big", buf, 65537, 0), -E2BIG);
	assert_int_equal(fs_xattr_set(cg, 0, "user.big", buf, 65536, 0), 0);
}

/* kernfs: 128 user.* per node, 128 KiB of their values; trusted.* uncapped */
static void test_user_caps(void **state)
{
	unsigned int max = node("memory.max"), high = node("memory.high");
	char name[32];

	(void)state;
	for (int i = 0; i < 128; i++) {
		snprintf(name, sizeof(name), "user.n%d", i);
		assert_int_equal(fs_xattr_set(cg, 0, name, "x", 1, 0), 0);
	}
	assert_int_equal(fs_xattr_set(cg, 0, "user.n128", "x", 1, 0), -ENOSPC);
	/* counted in before the replace, as kernfs_vfs_user_xattr_add() does */
	assert_int_equal(fs_xattr_set(cg, 0, "user.n0", "y", 1, 0), -ENOSPC);
	assert_int_equal(fs_xattr_get(cg, 0, "user.n0", buf, 8), 1);
	assert_int_equal(buf[0], 'x');
	/* removal needs no room; trusted.* are not counted */
	assert_int_equal(fs_xattr_remove(cg, 0, "user.n127"), 0);
	assert_int_equal(fs_xattr_set(cg, 0, "user.n0", "y", 1, 0), 0);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "trusted.t%d", i);
		assert_int_equal(fs_xattr_set(cg, 0, name, "x", 1, 0), 0);
	}
	/* another node, its own count */
	assert_int_equal(fs_xattr_set(cg, high, "user.n128", "x", 1, 0), 0);

	/* sizes: the new value is counted in before the old one goes out */
	memset(buf, 'v', 65536);
	assert_int_equal(fs_xattr_set(cg, max, "user.s0", buf, 65536, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.s1", buf, 65536, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.s2", buf, 1, 0), -ENOSPC);
	assert_int_equal(fs_xattr_set(cg, max, "user.e", buf, 0, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.s0", buf, 65536, 0), -ENOSPC);
	assert_int_equal(fs_xattr_set(cg, max, "user.s0", buf, 1, 0), -ENOSPC);
	assert_int_equal(fs_xattr_remove(cg, max, "user.s1"), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.s0", buf, 100, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.s1", buf, 65536, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "trusted.big", buf, 65536, 0), 0);
}

/* memory.* go with the memcg, the others stay; all go with the cgroup */
static void test_drop(void **state)
{
	unsigned int max = node("memory.max"), pressure = node("memory.pressure");
	unsigned int procs = node("cgroup.procs");
	struct cgroup *b;

	(void)state;
	assert_int_equal(fs_xattr_set(cg, 0, "user.dir", "1", 1, 0), 0);
	assert_int_equal(fs_xattr_set(cg, max, "user.max", "1", 1, 0), 0);
	assert_int_equal(fs_xattr_set(cg, pressure, "user.p", "1", 1, 0), 0);
	assert_int_equal(fs_xattr_set(cg, procs, "trusted.procs", "1", 1, 0), 0);
	fs_xattr_drop(cg, FF_MEMCG);
	assert_string_equal(list(max, true), "");
	assert_string_equal(list(pressure, true), "user.p");
	assert_string_equal(list(procs, true), "trusted.procs");
	assert_string_equal(list(0, true), "user.dir");
	fs_xattr_drop(cg, 0);
	assert_null(cg->xattrs);

	/* a cgroup removed with its attributes: freed with it */
	assert_int_equal(cgroup_mkdir(cg, "b", 0755, 0, 0, &b), 0);
	assert_int_equal(fs_xattr_set(b, 0, "user.b", "1", 1, 0), 0);
	assert_int_equal(fs_xattr_set(b, procs, "user.b", "1", 1, 0), 0);
	assert_int_equal(cgroup_rmdir(cg, "b"), 0);
	assert_int_equal(fs_xattr_set(cg, 0, "user.left", "1", 1, 0), 0);
	/*
	 * one the kernel still looks up when the session ends (tree_exit
	 * frees it apart): under ASan, a leak if its attributes stayed
	 */
	assert_int_equal(cgroup_mkdir(cg, "held", 0755, 0, 0, &b), 0);
	assert_int_equal(fs_xattr_set(b, 0, "user.held", "1", 1, 0), 0);
	assert_int_equal(fs_xattr_set(b, procs, "user.held", "1", 1, 0), 0);
	cgroup_get(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_set_get_list_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drop, setup, teardown),
	};

	return cmocka_run_group_tests_name("xattr", tests, NULL, NULL);
}
