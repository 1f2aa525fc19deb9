/* SPDX-License-Identifier: MIT */
/*
 * fault_tree.c - fault injection through the cgroup tree and the memory
 * controller (fs/tree.c, memcg/): each step of a scenario runs with
 * faults in scope, the checks and the cleanup without.
 *
 * The scenario: mkdir /a and /a/b (a memcg each: struct mem_cgroup, its
 * objcg, per-CPU statistics, PSI group), +memory in /a's
 * cgroup.subtree_control, a task in /a/b charging file and anon pages and
 * accounted slab objects, memory.max (with reclaim), memory.high,
 * memory.low and memory.reclaim on /a/b, the task moved to /a, -memory in
 * /a's subtree_control (the memcg of /a/b offlined and reparented while
 * its objects live on), then everything freed and /a/b and /a removed.
 *
 * Oracles: every step returns 0 or a negative errno the step may give
 * (ENOMEM for a failed allocation or charge, EBUSY, EAGAIN, ENOENT where
 * an earlier step failed); a mkdir that failed left no directory; after
 * the cleanup: no memcg online or dying, memcg_check and alloc_check, the
 * root's usage, and the arena's pages exactly at their baseline.
 */
#include "driver.h"
#include "fuzz_machine.h"

#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NR_PAGES	24
#define NR_OBJS		48

static struct fuzz_arena baseline;
static bool check_free_pages;

static struct page *pages[NR_PAGES];
static uint64_t page_ids[NR_PAGES];
static void *objs[NR_OBJS];

/* one step, in fault scope; abort on an errno it may not give */
static int step(const char *what, int err, const int *allowed)
{
	if (err > 0 || err < -4095)
		fuzz_die("%s returned %d", what, err);
	if (!err)
		return 0;
	for (const int *a = allowed; *a; a++)
		if (err == *a)
			return err;
	fuzz_die("%s failed with %s (%d)", what, strerrorname_np(-err) ?: "?", err);
}

static const int may_enomem[] = { -ENOMEM, 0 };
static const int may_busy[] = { -ENOMEM, -EBUSY, -EAGAIN, -ENOENT, -EINTR, 0 };

static int memfile_write(struct mem_cgroup *memcg, const char *name, const char *val)
{
	const struct memcg_file *f = memcg_file_lookup(name);
	struct memcg_open *o;
	int err;

	if (!f)
		fuzz_die("no %s", name);
	err = memcg_file_open(f, memcg, &o);
	if (err)
		return err;
	err = memcg_file_write(o, val, strlen(val), false);
	memcg_file_release(o);
	return err;
}

static int subtree_control(struct cgroup *cg, const char *val)
{
	struct fs_inval_list iv = { NULL, 0, 0 };
	char buf[32];
	int err;

	snprintf(buf, sizeof(buf), "%s", val);
	err = cgroup_subtree_control_write(cg, buf, &iv);
	free(iv.v);	/* no kernel dcache to invalidate here */
	return err;
}

static struct cgroup *child_named(struct cgroup *parent, const char *name)
{
	struct cgroup *c;

	pthread_rwlock_rdlock(&fs_tree_lock);
	for (c = parent->first_child; c; c = c->next_sibling)
		if (!strcmp(c->name, name))
			break;
	pthread_rwlock_unlock(&fs_tree_lock);
	return c;
}

/* what waits for its grace period, freed now: nothing runs concurrently here */
static void settle(void)
{
	memcg_reap_now();
}

static void in_scope(bool on)
{
	fault_task_enable(on);
}

static void scenario(void *arg)
{
	struct cgroup *a = NULL, *b = NULL;
	struct memcg_task *t = NULL;
	unsigned long nr, dying;
	int err;

	(void)arg;
	memset(pages, 0, sizeof(pages));
	memset(objs, 0, sizeof(objs));

	in_scope(true);
	err = step("mkdir /a", cgroup_mkdir(fs_root, "a", 0755, 0, 0, &a), may_enomem);
	in_scope(false);
	if (err) {
		if (child_named(fs_root, "a"))
			fuzz_die("mkdir /a failed with %d and /a exists", err);
		goto check;
	}
	in_scope(true);
	err = step("+memory in /a", subtree_control(a, "+memory"), may_enomem);
	if (!err) {
		err = step("mkdir /a/b", cgroup_mkdir(a, "b", 0755, 0, 0, &b), may_enomem);
		in_scope(false);
		if (err && child_named(a, "b"))
			fuzz_die("mkdir /a/b failed with %d and /a/b exists", err);
		if (err)
			b = NULL;
		in_scope(true);
	}
	if (b && b->memcg) {
		t = memcg_task_create(4242, b->memcg);
		if (t) {
			memcg_set_current(t);
			for (unsigned int i = 0; i < NR_PAGES; i++) {
				int perr = 0;

				pages[i] = memcg_alloc_pages(i & 1 ? MEMCG_PAGE_ANON : MEMCG_PAGE_FILE,
							     GFP_HIGHUSER_MOVABLE, i % 3 == 2, &perr);
				if (pages[i])
					page_ids[i] = memcg_page_id(pages[i]);
				else
					step("memcg_alloc_pages", perr ? perr : -ENOMEM, may_enomem);
			}
			for (unsigned int i = 0; i < NR_OBJS; i++)
				objs[i] = kmalloc(64u << (i % 6), i & 1 ? GFP_KERNEL_ACCOUNT :
						  GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE);
			memcg_set_current(NULL);
		}
		step("memory.high", memfile_write(b->memcg, "memory.high", "96K"), may_busy);
		step("memory.low", memfile_write(b->memcg, "memory.low", "16K"), may_busy);
		step("memory.max", memfile_write(b->memcg, "memory.max", "160K"), may_busy);
		step("memory.reclaim", memfile_write(b->memcg, "memory.reclaim", "32K"), may_busy);
		if (t) {
			/* the task leaves /a/b for /a: its pages stay where they were charged */
			err = a->memcg ? memcg_task_attach(t, a->memcg) : 0;
			step("migrate to /a", err, may_busy);
		}
	}
	/* the task exits (its anon pages go with it): the memcg may go offline */
	if (t)
		memcg_task_exit(t);
	if (a)
		step("-memory in /a", subtree_control(a, "-memory"), may_busy);
	in_scope(false);

	/* cleanup, no faults: free what lives, remove the tree */
	for (unsigned int i = 0; i < NR_PAGES; i++)
		if (pages[i])
			(void)memcg_free_pages(pages[i], page_ids[i]);	/* -ENOENT: reclaimed */
	for (unsigned int i = 0; i < NR_OBJS; i++)
		kfree(objs[i]);
	if (b && cgroup_rmdir(a, "b"))
		fuzz_die("rmdir /a/b");
	if (cgroup_rmdir(fs_root, "a"))
		fuzz_die("rmdir /a");
check:
	fuzz_check("after the scenario");
	settle();
	mem_cgroup_descendants(root_mem_cgroup(), &nr, &dying);
	if (nr || dying)
		fuzz_die("%lu memcgs online, %lu dying after the tree was removed", nr, dying);
	fuzz_arena_same(&baseline, check_free_pages, "after the scenario");
}

static void take_baseline(void)
{
	settle();
	fuzz_arena_take(&baseline);
}

int main(void)
{
	struct memcgfs_config conf;
	struct fault_totals t = { 0 };

	fuzz_machine_init(16 * FUZZ_MIB, 2);
	conf_defaults(&conf);
	if (fs_files_init() || tree_init(&conf))
		fuzz_die("fs_files_init/tree_init");
	take_baseline();
	scenario(NULL);		/* the warm-up run: see fuzz_machine.h */
	take_baseline();
	check_free_pages = true;
	fault_loop("tree", scenario, NULL, &t);
	fault_report("fault_tree", &t);
	return 0;
}
