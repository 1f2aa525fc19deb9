/* SPDX-License-Identifier: MIT */
/*
 * memcg_tree.c - unit tests of memcg/: the tree, tasks and the current-task API; rmdir,
 * dying memcgs and mkdir charges; the root never charged.
 */
#include "test_memcg.h"

/* ================================================================== */
/* Group: tree, tasks, basics                                          */

void test_tree_basics(void **state)
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

void test_page_type_names(void **state)
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

void test_current_api(void **state)
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
/* Group: rmdir, dying memcgs, mkdir charges                           */

void test_rmdir_with_live_objects(void **state)
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

void test_rcu_reader_outlives_last_put(void **state)
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
void test_rmdir_kmem_only_reaped(void **state)
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

void test_mkdir_charges(void **state)
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

void test_root_not_charged(void **state)
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
		if (fixture_machine(MACHINE_MEM, 4)) {
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

void test_reinit_with_pending_stats(void **state)
{
	(void)state;
	run_forked(reinit_child, false, "memcg_exit/alloc_exit/alloc_init/memcg_init with unflushed statistics");
}

void test_task_exit_after_foreign_free(void **state)
{
	(void)state;
	run_forked(owned_pages_child, false, "child task's owned pages freed by another task, then exit");
	run_forked(owned_pages_child, true, "root task's owned pages freed by another task, then exit");
}

