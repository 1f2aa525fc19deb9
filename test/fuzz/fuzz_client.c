/* SPDX-License-Identifier: MIT */
/*
 * fuzz_client.c - the control-protocol client of fuzz_ctl and fuzz_ioctl
 * (see fuzz_machine.h).
 *
 * Linked with -Wl,--wrap=ctl_handles_publish: every handle fs/ctl/exec.c
 * publishes is recorded here, so that the cleanup after an input frees
 * everything, also what a client could not learn (an ioctl batch whose
 * operations write their handles over each other's: "the later result
 * wins", and the other handle is only the daemon's to know).
 */
#include "fuzz_machine.h"

#include "ctl.h"
#include "handles.h"
#include "fault.h"
#include "memcg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the control protocol client ---- */
struct fuzz_ctl fuzz_ctl;

static const struct {
	pid_t pid;
	uid_t uid;
	const char *comm;
	bool in_child;
} caller_def[FUZZ_CALLERS] = {
	{ 100, 1000, "alice", true },
	{ 200, 1001, "bob", true },
	{ 300, 0, "rootsh", true },
	{ 400, 1000, "carol", false },
};

static struct ctl_caller callers[FUZZ_CALLERS];

static const char *const stat_keys[] = {
	"anon", "file", "shmem", "kernel_stack", "pagetables", "percpu", "sock",
	"vmalloc", "slab_reclaimable", "slab_unreclaimable",
};
#define NR_STAT_KEYS	(sizeof(stat_keys) / sizeof(stat_keys[0]))

static struct {
	unsigned long child_usage;
	unsigned long long stat[NR_STAT_KEYS];
	unsigned long nr_caches;
	struct fuzz_arena arena;
} baseline;

const struct ctl_caller *fuzz_caller(unsigned int i)
{
	return &callers[i % FUZZ_CALLERS];
}

static void tasks_create(void)
{
	for (unsigned int i = 0; i < FUZZ_CALLERS; i++) {
		struct ctl_caller *c = &callers[i];

		memset(c, 0, sizeof(*c));
		c->pid = caller_def[i].pid;
		c->tid = c->pid + 1;
		c->uid = caller_def[i].uid;
		c->gid = caller_def[i].uid;
		snprintf(c->comm, sizeof(c->comm), "%s", caller_def[i].comm);
		c->cgroup = caller_def[i].in_child ? "/child" : "/";
		c->task = memcg_task_create(c->pid, caller_def[i].in_child ? fuzz_ctl.child :
					    root_mem_cgroup());
		if (!c->task)
			fuzz_die("memcg_task_create");
	}
}

static void tasks_exit(void)
{
	for (unsigned int i = 0; i < FUZZ_CALLERS; i++) {
		memcg_task_exit(callers[i].task);
		callers[i].task = NULL;
	}
}

static void stat_read_all(unsigned long long *v)
{
	for (unsigned int i = 0; i < NR_STAT_KEYS; i++)
		if (memcg_stat_read(fuzz_ctl.child, stat_keys[i], &v[i]))
			fuzz_die("memory.stat has no %s", stat_keys[i]);
}

void fuzz_ctl_init(void)
{
	static bool up;
	const struct memcg_file *f;
	struct memcg_open *o;

	if (up)
		return;
	fuzz_machine_init(32 * FUZZ_MIB, 2);
	if (mem_cgroup_create(root_mem_cgroup(), &fuzz_ctl.child))
		fuzz_die("mem_cgroup_create");
	/* small enough that the child's own OOM path runs, not only the global one */
	f = memcg_file_lookup("memory.max");
	if (!f || memcg_file_open(f, fuzz_ctl.child, &o) ||
	    memcg_file_write(o, "4M", 2, true))
		fuzz_die("memory.max 4M");
	memcg_file_release(o);
	tasks_create();
	if (ctl_init())
		fuzz_die("ctl_init");
	fuzz_ctl.session = ctl_session_new();
	if (!fuzz_ctl.session)
		fuzz_die("ctl_session_new");
	fuzz_check("init");
	baseline.child_usage = mem_cgroup_usage_pages(fuzz_ctl.child);
	stat_read_all(baseline.stat);
	fuzz_ctl_rebaseline();
	up = true;
}

void fuzz_ctl_rebaseline(void)
{
	struct alloc_stats st;

	fuzz_arena_take(&baseline.arena);
	alloc_stats(&st);
	baseline.nr_caches = st.nr_caches;
}

/* Every handle published during the input. */
static uint64_t *published;
static unsigned int nr_published, cap_published;

int __real_ctl_handles_publish(void *addr, enum ctl_kind kind, struct kmem_cache *cache,
			       uint64_t page_id, struct ctl_cache *cc, bool reclaimable,
			       struct obj_cgroup *objcg, uid_t uid, uint64_t seq, uint64_t *token);
int __wrap_ctl_handles_publish(void *addr, enum ctl_kind kind, struct kmem_cache *cache,
			       uint64_t page_id, struct ctl_cache *cc, bool reclaimable,
			       struct obj_cgroup *objcg, uid_t uid, uint64_t seq, uint64_t *token);

int __wrap_ctl_handles_publish(void *addr, enum ctl_kind kind, struct kmem_cache *cache,
			       uint64_t page_id, struct ctl_cache *cc, bool reclaimable,
			       struct obj_cgroup *objcg, uid_t uid, uint64_t seq, uint64_t *token)
{
	int r = __real_ctl_handles_publish(addr, kind, cache, page_id, cc, reclaimable, objcg, uid,
					   seq, token);

	if (!r) {
		/* the harness's bookkeeping, not the code under test (test/fault) */
		fault_suspend();
		if (nr_published == cap_published) {
			unsigned int cap = cap_published ? 2 * cap_published : 1024;
			uint64_t *v = realloc(published, cap * sizeof(*v));

			if (!v)
				fuzz_die("out of memory");
			published = v;
			cap_published = cap;
		}
		published[nr_published++] = *token;
		fault_resume();
	}
	return r;
}

void fuzz_ctl_add_handle(uint64_t h)
{
	if (fuzz_ctl.nr_handles == fuzz_ctl.cap_handles) {
		unsigned int cap = fuzz_ctl.cap_handles ? 2 * fuzz_ctl.cap_handles : 1024;
		uint64_t *v = realloc(fuzz_ctl.handles, cap * sizeof(*v));

		if (!v)
			fuzz_die("out of memory");
		fuzz_ctl.handles = v;
		fuzz_ctl.cap_handles = cap;
	}
	fuzz_ctl.handles[fuzz_ctl.nr_handles++] = h;
}

void fuzz_ctl_add_cache(const char *name)
{
	if (fuzz_ctl.nr_caches == fuzz_ctl.cap_caches) {
		unsigned int cap = fuzz_ctl.cap_caches ? 2 * fuzz_ctl.cap_caches : 16;
		char (*v)[64] = realloc(fuzz_ctl.caches, cap * sizeof(*v));

		if (!v)
			fuzz_die("out of memory");
		fuzz_ctl.caches = v;
		fuzz_ctl.cap_caches = cap;
	}
	snprintf(fuzz_ctl.caches[fuzz_ctl.nr_caches++], 64, "%s", name);
}

uint64_t fuzz_ctl_handle(unsigned int i)
{
	return fuzz_ctl.nr_handles ? fuzz_ctl.handles[i % fuzz_ctl.nr_handles] : 0;
}

void fuzz_snap_take(struct fuzz_snap *s)
{
	struct alloc_stats st;

	memcg_drain();
	alloc_stats(&st);
	s->child_usage = mem_cgroup_usage_pages(fuzz_ctl.child);
	s->live = ctl_handles_nr_live();
	s->pages_alloc = st.pages_alloc;
	s->pages_large = st.pages_large_kmalloc;
	s->nr_caches = st.nr_caches;
}

void fuzz_snap_same(const struct fuzz_snap *a, const char *what, size_t what_len)
{
	struct fuzz_snap b;

	fuzz_snap_take(&b);
	if (memcmp(a, &b, sizeof(b)))
		fuzz_die("a refused request changed the state: '%.*s': child usage %lu -> %lu, "
			 "live handles %lu -> %lu, pages_alloc %lu -> %lu, large kmalloc pages "
			 "%lu -> %lu, caches %lu -> %lu", (int)(what_len > 200 ? 200 : what_len),
			 what, a->child_usage, b.child_usage, a->live, b.live, a->pages_alloc,
			 b.pages_alloc, a->pages_large, b.pages_large, a->nr_caches, b.nr_caches);
}

static int root_request(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int root_request(const char *fmt, ...)
{
	char line[256], sink[512];
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rc = ctl_request(fuzz_ctl.session, &callers[2], line, (size_t)n);
	while (ctl_read(fuzz_ctl.session, sink, sizeof(sink)))
		;
	return rc;
}

void fuzz_ctl_cleanup(void)
{
	unsigned long long stat[NR_STAT_KEYS];
	struct alloc_stats st;
	unsigned long usage;

	alloc_pin_cpu(-1);
	trace_set_on(false);
	/* root may free anyone's; a page handle is EINVAL to kfree */
	for (unsigned int i = 0; i < nr_published && ctl_handles_nr_live(); i++) {
		uint64_t h = published[i];

		if (root_request("kfree %016" PRIx64 "\n", h) == -EINVAL)
			(void)root_request("free_pages %016" PRIx64 "\n", h);
	}
	for (unsigned int i = 0; i < fuzz_ctl.nr_caches; i++)
		(void)root_request("kmem_cache_destroy %s\n", fuzz_ctl.caches[i]);
	if (ctl_handles_nr_live())
		fuzz_die("%lu handles still live after freeing every handle published",
			 ctl_handles_nr_live());
	nr_published = 0;
	fuzz_ctl.nr_handles = 0;
	fuzz_ctl.nr_caches = 0;
	/* fresh tasks: no OOM-killed caller carries over */
	tasks_exit();
	tasks_create();
	fuzz_check("after the input");
	{
		char msg[256];

		if (ctl_check(msg, sizeof(msg)))
			fuzz_die("after the input: ctl_check: %s", msg);
	}
	usage = mem_cgroup_usage_pages(fuzz_ctl.child);
	stat_read_all(stat);
	alloc_stats(&st);
	if (usage != baseline.child_usage)
		fuzz_die("child usage %lu pages after everything was freed, %lu before", usage,
			 baseline.child_usage);
	for (unsigned int i = 0; i < NR_STAT_KEYS; i++)
		if (stat[i] != baseline.stat[i])
			fuzz_die("child memory.stat %s %llu after everything was freed, %llu before",
				 stat_keys[i], stat[i], baseline.stat[i]);
	if (st.nr_caches != baseline.nr_caches)
		fuzz_die("%lu caches after every created one was destroyed, %lu before",
			 st.nr_caches, baseline.nr_caches);
	/* no page lost: a page nobody holds would pass every other check */
	fuzz_arena_same(&baseline.arena, fuzz_ctl.check_free_pages, "after the input");
}
