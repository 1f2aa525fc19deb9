/* SPDX-License-Identifier: MIT */
/*
 * memcg_charge.c - unit tests of memcg/: charging: the stocks, byte-exact slab statistics,
 * page types, cross-cgroup frees and migration, memory.max at this layer.
 */
#include "test_memcg.h"

/* ================================================================== */
/* Group: stocks                                                       */

void test_stock_precharge(void **state)
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

void test_stock_precharge_batch16(void **state)
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

void free_obj(struct obj *o)
{
	if (o->s)
		kmem_cache_free(o->s, o->p);
	else
		kfree(o->p);
}

/*
 * Pinned to slot 0 (cpu 0: the per-CPU lock paths), or unpinned (cpu -1)
 * on a machine of one slot per CPU: the restartable sequences, whose
 * charge word carries the size and the reclaimable bit.
 */
static void slab_bytes_exact(int cpu)
{
	struct mem_cgroup *root = root_mem_cgroup(), *a = mk(root);
	struct memcg_task *t = mktask(110, a);
	struct kmem_cache *cacct, *crcl, *cplain;
	static struct obj objs[2048];
	unsigned int n = 0;
	unsigned long long eu = 0, er = 0, small = 0, large = 0;
	struct snap a0, r0;

	cacct = mkcache("t_acct_2312", 2312, SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT);
	crcl = mkcache("t_rcl_300", 300, SLAB_ACCOUNT | SLAB_RECLAIM_ACCOUNT);
	cplain = mkcache("t_plain_100", 100, 0);
	pin(cpu);
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

void test_slab_bytes_exact(void **state)
{
	(void)state;
	slab_bytes_exact(0);
}

void test_slab_bytes_exact_rseq(void **state)
{
	(void)state;
	slab_bytes_exact(-1);
	pin(0);
}

/* ================================================================== */
/* Group: page types                                                   */

void test_page_types(void **state)
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

void test_task_exit_frees_owned(void **state)
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

void test_cross_cgroup_free(void **state)
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
void test_objcg_percpu_ref(void **state)
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
 * A per-CPU get or put adds to the slot of the CPU it runs on, in a
 * restartable sequence that checks the CPU it chose: a thread moved
 * between choosing its slot and adding must not add to another CPU's slot
 * while that CPU's thread adds to it (a plain add from two CPUs loses one).
 * Two threads each stay on one CPU, a third is moved from CPU to CPU as
 * fast as the kernel does it; every get is put, the count must come back.
 */
struct ref_hammer {
	struct obj_cgroup *o;
	int cpu;			/* -1: the moved one */
	atomic_bool *stop;
	unsigned long pairs;
};

static void *ref_hammer_run(void *p)
{
	struct ref_hammer *h = p;

	if (h->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(h->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	alloc_thread_rseq_refresh();
	while (!atomic_load_explicit(h->stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			obj_cgroup_get(h->o);
			obj_cgroup_put(h->o);
		}
		h->pairs += 64;
	}
	return NULL;
}

void test_percpu_ref_migration(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct obj_cgroup *o = atomic_load(&a->objcg);
	atomic_bool stop = false;
	struct ref_hammer h[3];
	pthread_t th[3];
	unsigned long moves = 0, pairs = 0;
	long r0;
	double end;

	(void)state;
	if (!alloc_uses_rseq() || alloc_nr_cpus() < 2) {
		/* no rseq (TSan, or slots that are not CPUs): the gets are atomic */
		print_message("# no per-CPU sections here: nothing to move under\n");
		rm(a);
		return;
	}
	memcg_drain();
	r0 = percpu_ref_read(&o->refcnt);
	for (int i = 0; i < 3; i++) {
		h[i] = (struct ref_hammer){ .o = o, .cpu = i < 2 ? i : -1, .stop = &stop };
		assert_int_equal(pthread_create(&th[i], NULL, ref_hammer_run, &h[i]), 0);
	}
	end = test_now_s() + 2.0;
	while (test_now_s() < end) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(moves & 1, &set);
		pthread_setaffinity_np(th[2], sizeof(set), &set);
		moves++;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		pairs += h[i].pairs;
	}
	print_message("# %lu get/put pairs, %lu moves of the third thread\n", pairs, moves);
	DEFER_EQ(percpu_ref_read(&o->refcnt), r0, "every get put: the count is back (%lu pairs)",
		 pairs);
	pin(0);
	memcg_drain();
	rm(a);
	DEFER_TRUE(wait_dying(root_mem_cgroup(), 0), "reaped");
}

/*
 * A root task charges nothing, and alloc skips the hook for it without a
 * call (memcg_current_objcg): moved into a child while it is current, its
 * next allocation is the child's, and moved back it charges nothing again.
 */
void test_root_task_moved_while_current(void **state)
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

/*
 * A slab that a root task filled first has no obj_exts vector (its objects
 * charge nothing); the first object charged to a cgroup makes it, and the
 * root task's objects of that slab, freed afterwards, give nothing back.
 * 8 KiB objects: a kmalloc-cg-8k slab of 4, every one of them ours.
 */
void test_vector_at_first_charge(void **state)
{
	struct mem_cgroup *a = mk(root_mem_cgroup());
	struct memcg_task *r = mktask(104, root_mem_cgroup()), *t = mktask(105, a);
	unsigned long long a0 = stv(a, "slab_unreclaimable");
	void *x[2], *y[2];

	(void)state;
	pin(0);
	memcg_set_current(r);
	for (int i = 0; i < 2; i++) {
		x[i] = kmalloc_ok(8192, GFP_KERNEL_ACCOUNT);
		DEFER_TRUE(alloc_obj_objcg(x[i]) == NULL, "the root task's objects charge nothing");
	}
	memcg_set_current(t);
	for (int i = 0; i < 2; i++) {
		y[i] = kmalloc_ok(8192, GFP_KERNEL_ACCOUNT);
		DEFER_TRUE(alloc_obj_objcg(y[i]) != NULL, "a's objects are charged");
	}
	DEFER_TRUE(alloc_obj_objcg(x[0]) == NULL && alloc_obj_objcg(x[1]) == NULL,
		   "the root task's still charge nothing");
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0 + 2 * ref_full(8192), "a charged for its two");
	memcg_set_current(r);
	kfree(x[0]);
	kfree(x[1]);
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0 + 2 * ref_full(8192),
		 "the root task's frees give nothing back");
	memcg_set_current(t);
	kfree(y[0]);
	memcg_set_current(NULL);
	kfree(y[1]);		/* a free by anyone uncharges the object's own cgroup */
	DEFER_EQ(stv(a, "slab_unreclaimable"), a0, "a's frees give back its two");
	memcg_task_exit(r);
	memcg_task_exit(t);
	expect_memcg_check("after the frees");
}

void test_migration(void **state)
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

void test_attach_races(void **state)
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
/* Group: memory.max at this layer                                     */

static void notify_cb(struct mem_cgroup *memcg, const char *file, void *arg)
{
	(void)arg;
	__atomic_add_fetch(&notify_calls, 1, __ATOMIC_RELAXED);
	notify_last_memcg = memcg;
	snprintf(notify_last_file, sizeof(notify_last_file), "%s", file ? file : "");
}

void test_max_enforced(void **state)
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
	/* a 4 KiB object charged first: its slab has its vector from now on */
	objs[n] = kmalloc(4096, GFP_KERNEL_ACCOUNT);
	DEFER_TRUE(objs[n] != NULL, "a 4 KiB object under the limit");
	if (objs[n]) {
		bytes += ref_full(4096);
		n++;
	}
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
	/*
	 * The kernel charges a failing object once (memcg_alloc_abort_single
	 * frees it): one try_charge, one max event.  This one comes from the
	 * CPU slab, which has its vector: the fast path's hook.
	 */
	ev = keyed(c, "memory.events", "max");
	DEFER_TRUE(kmalloc(4096, GFP_KERNEL_ACCOUNT) == NULL, "failing again");
	DEFER_EQ(keyed(c, "memory.events", "max"), ev + 1,
		 "a failed allocation charged once: one max event");
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
void test_max_ancestor(void **state)
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

