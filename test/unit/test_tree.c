/* SPDX-License-Identifier: MIT */
/*
 * test_tree - fs/tree.c's controller changes against a real machine and
 * memory controller, without FUSE: a write that takes memcgs offline is all
 * or nothing.  A memcg task that no tracked process stands for (a process
 * that exited while one of its requests was still in flight keeps its task
 * until that request ends) keeps its memcg busy: "threaded" into
 * cgroup.type and "-memory" into the parent's cgroup.subtree_control fail
 * with EBUSY and change nothing, and succeed once the task is gone.
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

#include <cmocka.h>
#include "fixture.h"

static struct memcgfs_config conf;

static int setup(void **state)
{
	(void)state;
	conf_defaults(&conf);
	if (fixture_machine(64ull << 20, 2))
		return -1;
	return tree_init(&conf) ? -1 : 0;
}

static int teardown(void **state)
{
	char msg[256] = "";

	(void)state;
	tree_exit();
	assert_int_equal(memcg_check(msg, sizeof(msg)), 0);
	memcg_exit();
	alloc_exit();
	return 0;
}

static int write_ctrl(int (*fn)(struct cgroup *, char *, struct fs_inval_list *),
		      struct cgroup *cg, const char *text)
{
	struct fs_inval_list iv = { 0 };
	char buf[64];
	int err;

	snprintf(buf, sizeof(buf), "%s", text);
	err = fn(cg, buf, &iv);
	free(iv.v);
	return err;
}

static struct cgroup *mkcg(struct cgroup *parent, const char *name)
{
	struct cgroup *cg = NULL;

	assert_int_equal(cgroup_mkdir(parent, name, 0755, 0, 0, &cg), 0);
	assert_non_null(cg);
	return cg;
}

static void test_type_threaded_busy(void **state)
{
	struct cgroup *t;
	struct mem_cgroup *memcg;
	struct memcg_task *stray;

	(void)state;
	assert_true(fs_root->subtree_memory);
	t = mkcg(fs_root, "t");
	memcg = t->memcg;
	assert_non_null(memcg);
	stray = memcg_task_create(4242, memcg);
	assert_non_null(stray);

	assert_int_equal(write_ctrl(cgroup_type_write, t, "threaded\n"), -EBUSY);
	assert_ptr_equal(t->memcg, memcg);
	assert_true(mem_cgroup_online(memcg));
	assert_ptr_equal(t->dom, t);
	assert_int_equal(fs_root->nr_threaded_children, 0);
	assert_ptr_equal(cgroup_memcg(t), memcg);

	memcg_task_exit(stray);
	assert_int_equal(write_ctrl(cgroup_type_write, t, "threaded\n"), 0);
	assert_null(t->memcg);
	assert_ptr_equal(t->dom, fs_root);
	assert_int_equal(fs_root->nr_threaded_children, 1);
}

static void test_subtree_control_busy(void **state)
{
	struct cgroup *a, *b, *c, *d;
	struct mem_cgroup *mb, *mc, *md;
	struct memcg_task *stray;

	(void)state;
	a = mkcg(fs_root, "a");
	assert_int_equal(write_ctrl(cgroup_subtree_control_write, a, "+memory"), 0);
	b = mkcg(a, "b");
	c = mkcg(a, "c");
	d = mkcg(a, "d");
	mb = b->memcg;
	mc = c->memcg;
	md = d->memcg;
	assert_true(mb && mc && md);

	/* the busy one in the middle: the first child is not taken offline */
	stray = memcg_task_create(4243, mc);
	assert_non_null(stray);
	assert_int_equal(write_ctrl(cgroup_subtree_control_write, a, "-memory"), -EBUSY);
	assert_true(a->subtree_memory);
	assert_ptr_equal(b->memcg, mb);
	assert_ptr_equal(c->memcg, mc);
	assert_ptr_equal(d->memcg, md);
	assert_true(mem_cgroup_online(mb) && mem_cgroup_online(mc) && mem_cgroup_online(md));
	assert_ptr_equal(memcg_task_memcg(stray), mc);

	memcg_task_exit(stray);
	assert_int_equal(write_ctrl(cgroup_subtree_control_write, a, "-memory"), 0);
	assert_false(a->subtree_memory);
	assert_null(b->memcg);
	assert_null(c->memcg);
	assert_null(d->memcg);
	assert_ptr_equal(cgroup_memcg(c), a->memcg);
	/* and back */
	assert_int_equal(write_ctrl(cgroup_subtree_control_write, a, "+memory"), 0);
	assert_non_null(c->memcg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_type_threaded_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_subtree_control_busy, setup, teardown),
	};

	return cmocka_run_group_tests_name("tree", tests, NULL, NULL);
}
