/* SPDX-License-Identifier: MIT */
/*
 * cgroup_files.c - the files of a cgroup directory: one table, as the kernel's
 * cgroup_base_files[] followed by memcg's memory_files[] and memcgfs's own
 * root files, and the cgroup core files' show/write handlers.
 *
 * A row says where the file exists (root, children, only with a memcg,
 * hidden by cgroup.pressure), its mode (the kernel's: readable 0444,
 * writable by the owner 0200) and how it is served.  Core handlers run
 * with fs_tree_lock held for reading (show) or take what they need
 * (write); they return 0 or a negative errno, as kernfs handlers do.
 */
#include "internal.h"
#include "fault.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fs_file fs_files[FS_MAX_FILES];
unsigned int fs_nr_files;

/* ---- PSI ---- */
int psi_format(struct strbuf *sb, const uint64_t some_total_us, const uint64_t full_total_us,
	       const double some_avg[3], const double full_avg[3])
{
	/* kernel/sched/psi.c psi_show(): "%lu.%02lu" averages, totals in µs */
	return sb_printf(sb, "some avg10=%.2f avg60=%.2f avg300=%.2f total=%llu\n"
			 "full avg10=%.2f avg60=%.2f avg300=%.2f total=%llu\n",
			 some_avg[0], some_avg[1], some_avg[2], (unsigned long long)some_total_us,
			 full_avg[0], full_avg[1], full_avg[2], (unsigned long long)full_total_us);
}

/* cpu and io never stall in the emulated machine */
static int psi_idle_show(struct fs_handle *h, struct strbuf *sb)
{
	static const double zero[3];

	(void)h;
	return psi_format(sb, 0, 0, zero, zero);
}

/*
 * A PSI trigger (psi_trigger_create()): "some|full THRESHOLD_US WINDOW_US",
 * one per fd.  cpu and io never stall, so their triggers never fire.
 */
static int psi_trigger_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
			     size_t len)
{
	int err;

	(void)who;
	(void)len;
	if (h->psi_trigger)
		return -EBUSY;
	/* the same checks as memory.pressure's: root may use any window */
	err = memcg_psi_trigger_check(buf, h->uid == 0);
	if (err)
		return err;
	h->psi_trigger = true;
	return 0;
}

static int cgroup_pressure_show(struct fs_handle *h, struct strbuf *sb)
{
	return sb_printf(sb, "%d\n", h->cg->psi ? 1 : 0);
}

/* Answer after the names that vanished left the kernel's dcache. */
static int reply_after_inval(struct fs_inval_list *iv, const struct fs_caller *who, size_t len,
			     int err)
{
	if (err || !iv->n) {
		free(iv->v);
		return err;
	}
	notify_inval(iv->v, iv->n, who->req, len);
	return FS_REPLIED;
}

static int cgroup_pressure_file_write(struct fs_handle *h, const struct fs_caller *who,
				      char *buf, size_t len)
{
	struct fs_inval_list iv = { NULL, 0, 0 };

	return reply_after_inval(&iv, who, len, cgroup_pressure_write(h->cg, buf, &iv));
}

/* ---- cgroup.type ---- */
static int cgroup_type_show(struct fs_handle *h, struct strbuf *sb)
{
	const struct cgroup *cg = h->cg;

	if (cgroup_is_threaded(cg))
		return sb_printf(sb, "threaded\n");
	if (!cgroup_is_valid_domain(cg))
		return sb_printf(sb, "domain invalid\n");
	if (cgroup_is_thread_root(cg))
		return sb_printf(sb, "domain threaded\n");
	return sb_printf(sb, "domain\n");
}

static int cgroup_type_file_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
				  size_t len)
{
	struct fs_inval_list iv = { NULL, 0, 0 };

	return reply_after_inval(&iv, who, len, cgroup_type_write(h->cg, buf, &iv));
}

/* ---- cgroup.procs, cgroup.threads ---- */
static int cgroup_procs_show(struct fs_handle *h, struct strbuf *sb)
{
	return procs_list(h->cg, false, sb);
}

static int cgroup_threads_show(struct fs_handle *h, struct strbuf *sb)
{
	return procs_list(h->cg, true, sb);
}

static int cgroup_procs_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
			      size_t len)
{
	(void)len;
	return procs_move(h->cg, who, h, buf, false);
}

static int cgroup_threads_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
				size_t len)
{
	(void)len;
	return procs_move(h->cg, who, h, buf, true);
}

/* ---- controllers ---- */
static int cgroup_controllers_show(struct fs_handle *h, struct strbuf *sb)
{
	const struct cgroup *cg = h->cg;
	bool memory;

	/* cgroup_control(): the root has every controller; a child the parent's */
	if (!cg->parent)
		memory = true;
	else
		memory = cg->parent->subtree_memory && !cgroup_is_threaded(cg);
	/* an empty list is an empty file, without "\n" */
	return memory ? sb_printf(sb, "memory\n") : 0;
}

static int cgroup_subtree_control_show(struct fs_handle *h, struct strbuf *sb)
{
	return h->cg->subtree_memory ? sb_printf(sb, "memory\n") : 0;
}

static int cgroup_subtree_control_file_write(struct fs_handle *h, const struct fs_caller *who,
					     char *buf, size_t len)
{
	struct fs_inval_list iv = { NULL, 0, 0 };

	return reply_after_inval(&iv, who, len, cgroup_subtree_control_write(h->cg, buf, &iv));
}

/* ---- cgroup.events, cgroup.stat ---- */
static int cgroup_events_show(struct fs_handle *h, struct strbuf *sb)
{
	const struct cgroup *cg = h->cg;
	bool populated, frozen;

	pthread_rwlock_rdlock(&procs_lock);
	populated = cg->nr_populated > 0;
	frozen = cg->frozen;
	pthread_rwlock_unlock(&procs_lock);
	return sb_printf(sb, "populated %d\nfrozen %d\n", populated, frozen);
}

static int cgroup_stat_show(struct fs_handle *h, struct strbuf *sb)
{
	const struct cgroup *cg = h->cg;
	unsigned long live = 0, dying = 0;

	/*
	 * Dying descendants are those whose memcg lives on (charged pages
	 * keep it); a cgroup without memory dies at once.  memcg counts
	 * both under the cgroup's own memcg.
	 */
	if (cg->memcg)
		mem_cgroup_descendants(cg->memcg, &live, &dying);
	return sb_printf(sb, "nr_descendants %u\nnr_subsys_memory %lu\n"
			 "nr_dying_descendants %lu\nnr_dying_subsys_memory %lu\n",
			 cg->nr_descendants, cg->memcg ? live + 1 : 0, dying, dying);
}

static int cgroup_stat_local_show(struct fs_handle *h, struct strbuf *sb)
{
	const struct cgroup *cg = h->cg;
	uint64_t ns;

	pthread_rwlock_rdlock(&procs_lock);
	ns = cg->frozen_total_ns;
	if (cg->frozen)
		ns += fs_now_ns() - cg->frozen_since_ns;
	pthread_rwlock_unlock(&procs_lock);
	return sb_printf(sb, "frozen_usec %llu\n", (unsigned long long)(ns / 1000));
}

/* ---- cgroup.max.descendants, cgroup.max.depth ---- */
static int show_max_int(struct strbuf *sb, int v)
{
	return v == INT_MAX ? sb_printf(sb, "max\n") : sb_printf(sb, "%d\n", v);
}

static int parse_max_int(char *buf, int *v)
{
	char *s = strstrip(buf);
	int err;

	if (!strcmp(s, "max")) {
		*v = INT_MAX;
		return 0;
	}
	err = kstrtoint0(s, v);
	if (err)
		return err;
	return *v < 0 ? -ERANGE : 0;
}

static int cgroup_max_descendants_show(struct fs_handle *h, struct strbuf *sb)
{
	return show_max_int(sb, h->cg->max_descendants);
}

static int cgroup_max_depth_show(struct fs_handle *h, struct strbuf *sb)
{
	return show_max_int(sb, h->cg->max_depth);
}

static int write_max_int(struct fs_handle *h, char *buf, bool depth)
{
	int v, err = parse_max_int(buf, &v);

	if (err)
		return err;
	pthread_rwlock_wrlock(&fs_tree_lock);
	if (h->cg->removed)
		err = -ENOENT;
	else if (depth)
		h->cg->max_depth = v;
	else
		h->cg->max_descendants = v;
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

static int cgroup_max_descendants_write(struct fs_handle *h, const struct fs_caller *who,
					char *buf, size_t len)
{
	(void)who;
	(void)len;
	return write_max_int(h, buf, false);
}

static int cgroup_max_depth_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
				  size_t len)
{
	(void)who;
	(void)len;
	return write_max_int(h, buf, true);
}

/* ---- cgroup.freeze, cgroup.kill ---- */
static int cgroup_freeze_show(struct fs_handle *h, struct strbuf *sb)
{
	bool freeze;

	pthread_rwlock_rdlock(&procs_lock);
	freeze = h->cg->freeze;
	pthread_rwlock_unlock(&procs_lock);
	return sb_printf(sb, "%d\n", freeze);
}

static int cgroup_freeze_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
			       size_t len)
{
	int v, err = kstrtoint0(strstrip(buf), &v);

	(void)who;
	(void)len;
	if (err)
		return err;
	if (v != 0 && v != 1)
		return -ERANGE;
	return procs_freeze(h->cg, v);
}

static int cgroup_kill_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
			     size_t len)
{
	int v, err = kstrtoint0(strstrip(buf), &v);

	(void)who;
	(void)len;
	if (err)
		return err;
	if (v != 1)
		return -ERANGE;
	return procs_kill(h->cg);
}

/* ---- cpu.stat ---- */
static int cpu_stat_show(struct fs_handle *h, struct strbuf *sb)
{
	uint64_t user, sys, nice;

	procs_cputime(h->cg, &user, &sys, &nice);
	return sb_printf(sb, "usage_usec %llu\nuser_usec %llu\nsystem_usec %llu\nnice_usec %llu\n",
			 (unsigned long long)(user + sys), (unsigned long long)user,
			 (unsigned long long)sys, (unsigned long long)nice);
}

/* without the cpu controller, cpu.stat.local is empty */
static int cpu_stat_local_show(struct fs_handle *h, struct strbuf *sb)
{
	(void)h;
	(void)sb;
	return 0;
}

/* ---- memcgfs.fault (root only): fault injection on a live mount ---- */
static int memcgfs_fault_show(struct fs_handle *h, struct strbuf *sb)
{
	char buf[1024];

	(void)h;
	if (fault_format(buf, sizeof(buf)) >= sizeof(buf))
		return -EOVERFLOW;
	return sb_printf(sb, "%s", buf);
}

/*
 * "sites=slab,charge nth=100 times=1 ..." arms (a whole specification: the
 * keys not given take the kernel's defaults, times 1); "off" disarms.  The
 * daemon's threads are no tasks of a client, so task_filter=1, which would
 * fail nothing, is refused with the rest of the bad input (EINVAL).
 */
static int memcgfs_fault_write(struct fs_handle *h, const struct fs_caller *who, char *buf,
			       size_t len)
{
	struct fault_attr a = { .nth = 1, .probability = 100, .times = 1 };
	int r;

	(void)h;
	(void)who;
	if (!fault_supported())
		return -EOPNOTSUPP;
	r = fault_parse(buf, len, &a);
	if (r < 0)
		return r;
	if (r == 1) {
		fault_disarm();
		return 0;
	}
	if (!a.sites || a.task_filter)
		return -EINVAL;
	return fault_arm(&a);
}

/* ---- the table ---- */
#define ALL	(FF_ROOT | FF_CHILD)
#define CORE(n, fl, m, nf, sh, wr) \
	{ .name = (n), .type = FT_CORE, .flags = (fl), .mode = (m), .notify = (nf), \
	  .show = (sh), .write = (wr) }

/* kernel/cgroup/cgroup.c cgroup_base_files[] and cgroup_psi_files[] order */
static const struct fs_file core_files[] = {
	CORE("cgroup.type", FF_CHILD, 0644, -1, cgroup_type_show, cgroup_type_file_write),
	CORE("cgroup.procs", ALL | FF_PROCS, 0644, -1, cgroup_procs_show, cgroup_procs_write),
	CORE("cgroup.threads", ALL | FF_PROCS, 0644, -1, cgroup_threads_show,
	     cgroup_threads_write),
	CORE("cgroup.controllers", ALL, 0444, -1, cgroup_controllers_show, NULL),
	CORE("cgroup.subtree_control", ALL, 0644, -1, cgroup_subtree_control_show,
	     cgroup_subtree_control_file_write),
	CORE("cgroup.events", FF_CHILD, 0444, NF_CGROUP_EVENTS, cgroup_events_show, NULL),
	CORE("cgroup.max.descendants", ALL, 0644, -1, cgroup_max_descendants_show,
	     cgroup_max_descendants_write),
	CORE("cgroup.max.depth", ALL, 0644, -1, cgroup_max_depth_show, cgroup_max_depth_write),
	CORE("cgroup.stat", ALL, 0444, -1, cgroup_stat_show, NULL),
	CORE("cgroup.stat.local", FF_CHILD, 0444, -1, cgroup_stat_local_show, NULL),
	CORE("cgroup.freeze", FF_CHILD, 0644, -1, cgroup_freeze_show, cgroup_freeze_write),
	CORE("cgroup.kill", FF_CHILD, 0200, -1, NULL, cgroup_kill_write),
	CORE("cpu.stat", ALL, 0444, -1, cpu_stat_show, NULL),
	CORE("cpu.stat.local", ALL, 0444, -1, cpu_stat_local_show, NULL),
	CORE("io.pressure", ALL | FF_PSI, 0644, -1, psi_idle_show, psi_trigger_write),
	/* memcg serves it (its stall time, its triggers): replaced in fs_files_init() */
	CORE("memory.pressure", ALL | FF_PSI, 0644, NF_MEMORY_PRESSURE, psi_idle_show,
	     psi_trigger_write),
	CORE("cpu.pressure", ALL | FF_PSI, 0644, -1, psi_idle_show, psi_trigger_write),
	CORE("cgroup.pressure", ALL, 0644, -1, cgroup_pressure_show, cgroup_pressure_file_write),
};

/* memcgfs's own, at the root only (docs/design.md "What the mount shows") */
static const struct fs_file root_files[] = {
	{ .name = "memcgfs.ctl", .type = FT_CTL, .flags = FF_ROOT, .mode = 0666,
	  .notify = -1 },
	{ .name = "slabinfo", .type = FT_SLABINFO, .flags = FF_ROOT, .mode = 0444, .notify = -1 },
	{ .name = "trace_pipe", .type = FT_TRACE_PIPE, .flags = FF_ROOT | FF_STREAM, .mode = 0444,
	  .notify = -1 },
	{ .name = "tracing_on", .type = FT_TRACING_ON, .flags = FF_ROOT, .mode = 0644,
	  .notify = -1 },
	/* root only: a read locks the whole machine for a moment */
	{ .name = "memcgfs.check", .type = FT_CHECK, .flags = FF_ROOT, .mode = 0400,
	  .notify = -1 },
	/* root only; in a build with fault injection (-Dfault_injection) */
	CORE("memcgfs.fault", FF_ROOT, 0600, -1, memcgfs_fault_show, memcgfs_fault_write),
	/* the arena's pages (alloc_stats); root's write of "shrink" empties the caches */
	{ .name = "memcgfs.arena", .type = FT_ARENA, .flags = FF_ROOT, .mode = 0644,
	  .notify = -1 },
};

static int memory_notify_index(const char *name)
{
	if (!strcmp(name, "memory.events"))
		return NF_MEMORY_EVENTS;
	if (!strcmp(name, "memory.events.local"))
		return NF_MEMORY_EVENTS_LOCAL;
	if (!strcmp(name, "memory.swap.events"))
		return NF_MEMORY_SWAP_EVENTS;
	return -1;
}

int fs_files_init(void)
{
	const struct memcg_file *mf;
	unsigned int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(core_files); i++)
		fs_files[n++] = core_files[i];
	fs_nr_files = n;
	for (unsigned int i = 0; (mf = memcg_file_at(i)); i++) {
		const char *name = memcg_file_name(mf);
		struct fs_file *f = NULL;
		int idx = fs_file_index(name);

		/*
		 * A core file memcg serves (memory.pressure) keeps its row: it
		 * exists in every cgroup, memory controller or not.
		 */
		if (idx >= 0) {
			f = &fs_files[idx];
			f->type = FT_MEMORY;
			f->mf = mf;
			f->show = NULL;
			f->write = NULL;
			continue;
		}
		if (n == FS_MAX_FILES)
			return -E2BIG;
		f = &fs_files[n++];
		*f = (struct fs_file){
			.name = name,
			.type = FT_MEMORY,
			.flags = (memcg_file_on_root(mf) ? FF_ROOT : 0) |
				 (memcg_file_on_child(mf) ? FF_CHILD | FF_MEMCG : 0),
			.mode = memcg_file_mode(mf),
			.notify = memcg_file_notifies(mf) ? memory_notify_index(name) : -1,
			.mf = mf,
		};
		fs_nr_files = n;
	}
	for (size_t i = 0; i < ARRAY_SIZE(root_files); i++) {
		if (root_files[i].write == memcgfs_fault_write && !fault_supported())
			continue;
		if (n >= FS_MAX_FILES)
			return -E2BIG;
		fs_files[n++] = root_files[i];
	}
	fs_nr_files = n;
	return 0;
}

int fs_file_index(const char *name)
{
	for (unsigned int i = 0; i < fs_nr_files; i++)
		if (!strcmp(fs_files[i].name, name))
			return (int)i;
	return -1;
}

struct mem_cgroup *fs_file_memcg(const struct cgroup *cg, const struct fs_file *f)
{
	/*
	 * memory.* belong to the cgroup's own memcg; memory.pressure of a
	 * cgroup without one is its nearest ancestor's (the memcg its tasks
	 * stall in: an approximation, the kernel keeps PSI per cgroup).
	 */
	if (f->flags & FF_MEMCG)
		return cg->parent ? cg->memcg : root_mem_cgroup();
	return cgroup_memcg(cg);
}

bool fs_file_present(const struct cgroup *cg, unsigned int idx)
{
	const struct fs_file *f;

	if (idx >= fs_nr_files)
		return false;
	f = &fs_files[idx];
	if (!(f->flags & (cg->parent ? FF_CHILD : FF_ROOT)))
		return false;
	if ((f->flags & FF_MEMCG) && cg->parent && !cg->memcg)
		return false;
	if ((f->flags & FF_PSI) && !cg->psi)
		return false;
	return true;
}
