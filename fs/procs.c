/* SPDX-License-Identifier: MIT */
/*
 * procs.c - what a cgroup's files do with its processes (docs/design.md
 * "Tasks"): cgroup.procs and cgroup.threads (list, and move: the kernel's
 * permission and domain rules, a move's memcg migration and its record),
 * cgroup.kill, cgroup.freeze, cpu.stat and the reattachment of a cgroup's
 * tasks to its memcg.  Which processes exist and where each is, the
 * tables, pidfds, the proc connector and /proc: procs_track.c.
 *
 * Locking: procs_lock (inside fs_tree_lock), as in procs_track.c.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PF_KTHREAD	0x00200000

/* ---- cgroup.procs and cgroup.threads ---- */
/* The threads of pid that are in cg (p: tracked, or NULL: all of them). */
static int list_tasks(pid_t pid, struct proc *p, const struct cgroup *cg, struct strbuf *sb)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;		/* gone meanwhile */
	while (!err && (de = readdir(d))) {
		pid_t tid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		tid = (pid_t)strtol(de->d_name, NULL, 10);
		if (p && thread_cgroup(p, tid) != cg)
			continue;
		err = sb_printf(sb, "%d\n", tid);
	}
	closedir(d);
	return err;
}

/* The root's: every host process in no child cgroup (its threaded ones aside). */
static int list_root(bool threads, struct strbuf *sb)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		struct proc *p;
		struct pstat st;
		bool in_root;

		if (pid <= 0)
			continue;
		p = proc_find(pid);
		if (p) {
			/* threads: any of its threads may be placed in the root */
			in_root = !p->exited && p->cg->dom == fs_root;
		} else {
			char path[64], buf[512], *r;

			/* untracked: in the root unless a zombie */
			snprintf(path, sizeof(path), "/proc/%d/stat", pid);
			in_root = fs_read_file(path, buf, sizeof(buf)) > 0 && (r = strrchr(buf, ')')) &&
				  r[1] == ' ' && r[2] != 'Z' && r[2] != 'X';
			(void)st;
		}
		if (!in_root)
			continue;
		err = threads ? list_tasks(pid, p, fs_root, sb) : sb_printf(sb, "%d\n", pid);
	}
	closedir(d);
	return err;
}

static int list_domain(struct cgroup *cg, struct cgroup *dom, struct strbuf *sb)
{
	int err = 0;

	if (cg->dom != dom)
		return 0;
	for (struct proc *p = cg->procs; p && !err; p = p->cg_next)
		if (!p->exited)
			err = sb_printf(sb, "%d\n", p->pid);
	for (struct cgroup *c = cg->first_child; c && !err; c = c->next_sibling)
		if (cgroup_is_threaded(c))
			err = list_domain(c, dom, sb);
	return err;
}

/* The threads in cg of every process of cg's domain (placements stay in it). */
static int list_domain_threads(struct cgroup *c, const struct cgroup *cg, struct strbuf *sb)
{
	int err = 0;

	for (struct proc *p = c->procs; p && !err; p = p->cg_next)
		if (!p->exited && (p->cg == cg || p->threads))
			err = list_tasks(p->pid, p, cg, sb);
	for (struct cgroup *k = c->first_child; k && !err; k = k->next_sibling)
		if (cgroup_is_threaded(k))
			err = list_domain_threads(k, cg, sb);
	return err;
}

/* Tree lock held (read); procs_sync() done by the caller. */
int procs_list(struct cgroup *cg, bool threads, struct strbuf *sb)
{
	int err = 0;

	if (!threads && cgroup_is_threaded(cg))
		return -EOPNOTSUPP;
	pthread_rwlock_rdlock(&procs_lock);
	if (!cg->parent)
		err = list_root(threads, sb);
	else if (!threads)
		err = list_domain(cg, cg, sb);
	else
		err = list_domain_threads(cg->dom, cg, sb);
	pthread_rwlock_unlock(&procs_lock);
	return err;
}

/* generic_permission() for MAY_WRITE with the opener's credentials */
static bool may_write(const struct fs_handle *h, const struct cgroup *cg, unsigned int idx)
{
	uid_t uid;
	gid_t gid;
	mode_t mode;

	if (h->uid == 0)
		return true;		/* CAP_DAC_OVERRIDE */
	cgroup_file_owner(cg, idx, &uid, &gid, &mode);
	if (h->uid == uid)
		return mode & 0200;
	if (h->gid == gid)
		return mode & 0020;
	for (int i = 0; i < h->ngroups; i++)
		if (h->groups[i] == gid)
			return mode & 0020;
	return mode & 0002;
}

/* Pin the children p has now where they are: a move does not take them along. */
static void pin_children(struct proc *p, struct cgroup *src)
{
	char path[64], buf[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char cpath[64 + 256 + 16];
		char *s, *end;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (snprintf(cpath, sizeof(cpath), "%s/%.16s/children", path, de->d_name) >=
		    (int)sizeof(cpath) || fs_read_file(cpath, buf, sizeof(buf)) <= 0)
			continue;
		for (s = buf;; s = end) {
			pid_t c = (pid_t)strtol(s, &end, 10);
			int err;

			if (end == s)
				break;
			if (c > 0 && !proc_find(c))
				proc_track(c, src, NULL, false, &err);
		}
	}
	closedir(d);
}

static void record_move(struct proc *p, struct cgroup *from)
{
	if (p->nr_moves == PROC_MOVES) {
		cgroup_put(p->moves[0].from);
		memmove(p->moves, p->moves + 1, sizeof(p->moves[0]) * (PROC_MOVES - 1));
		p->nr_moves--;
	}
	cgroup_get(from);
	p->moves[p->nr_moves++] = (struct proc_move){ boottime_ns(), from };
}

/* Migrate a tracked process (cgroup_attach_task for a whole thread group). */
void proc_move_locked(struct proc *p, struct cgroup *dst)
{
	struct cgroup *src = p->cg;

	/* a write of cgroup.procs moves every thread */
	threads_unplace_all(p);
	if (src == dst)
		return;
	pin_children(p, src);
	record_move(p, src);
	member_unlink(p);
	member_link(p, dst);
	cgroup_get(dst);
	cgroup_put(src);
	/* charges never move: only the task's future charges go to dst */
	memcg_task_attach(p->task, cgroup_memcg(dst));
	/* real memory: the files it uses from now on are charged to dst */
	if (dst != fs_root)
		atomic_store(&p->real_scan, true);
	if (proc_untouchable(p->pid))
		return;
	if (dst->frozen && !p->stopped && !proc_hold(p))
		p->stopped = true;
	else if (!dst->frozen && p->stopped && (p->throttled || !proc_release(p)))
		p->stopped = false;
}

/* cgroup_migrate_vet_dst() */
static int vet_dst(const struct cgroup *dst)
{
	if (!cgroup_is_valid_domain(dst->dom))
		return -EOPNOTSUPP;
	if (cgroup_can_be_thread_root(dst) || cgroup_is_threaded(dst))
		return 0;
	/* no internal processes */
	return dst->subtree_memory ? -EBUSY : 0;
}

/*
 * procs_move - a write of cgroup.procs (the whole thread group) or
 * cgroup.threads (that thread alone, within its resource domain: memory
 * is a domain controller, so the process charges the same memcg) as
 * __cgroup_procs_write(): ENODEV, then the pid (EINVAL, ESRCH), then the
 * opener's permission on the common ancestor's cgroup.procs (EACCES), then
 * the destination (EOPNOTSUPP, EBUSY).
 */
int procs_move(struct cgroup *dst, const struct fs_caller *who, const struct fs_handle *h,
	       char *buf, bool threads)
{
	struct cgroup *src, *com;
	struct proc *p = NULL;
	struct pstat st;
	pid_t pid, tgid;
	int v, err;

	pthread_rwlock_rdlock(&fs_tree_lock);
	if (dst->removed) {
		err = -ENODEV;
		goto out_tree;
	}
	err = kstrtoint0(strstrip(buf), &v);
	if (err)
		goto out_tree;
	if (v < 0) {
		err = -EINVAL;
		goto out_tree;
	}
	pid = v;
	if (!pid) {
		/* 0: the writer itself */
		pid = who->tid;
		if (!pid) {
			err = -EPERM;
			goto out_tree;
		}
	}
	tgid = read_tgid(pid);
	if (tgid < 0) {
		err = -ESRCH;
		goto out_tree;
	}
	err = read_pstat(tgid, &st);
	if (err || st.state == 'Z' || st.state == 'X') {
		err = -ESRCH;
		goto out_tree;
	}
	/* cgroup_procs_write_start(): a kthread (PF_NO_SETAFFINITY) stays
	 * where it is; the daemon, which plays the kernel, is one */
	if ((st.flags & PF_KTHREAD) || tgid == getpid()) {
		err = -EINVAL;
		goto out_tree;
	}
	pthread_rwlock_wrlock(&procs_lock);
	p = proc_find(tgid);
	/* an exited process's entry (its exit not handled yet) is not this pid's process */
	if (p && proc_gone_locked(p))
		p = NULL;
	/* the source: the thread's cgroup (cgroup.threads) or its process's */
	src = p ? (threads ? thread_cgroup(p, pid) : p->cg) : resolve_unseen(&st);
	/* cgroup_procs_write_permission(): the common ancestor's cgroup.procs */
	for (com = src; !cgroup_is_descendant(dst, com); com = com->parent)
		;
	if (!may_write(h, com, (unsigned int)fs_file_index("cgroup.procs") + 1)) {
		err = -EACCES;
		goto out_procs;
	}
	err = vet_dst(dst);
	if (err)
		goto out_procs;
	/* threads move only within their resource domain */
	if (threads && src->dom != dst->dom) {
		err = -EOPNOTSUPP;
		goto out_procs;
	}
	if (!p) {
		if (src == dst && dst == fs_root)
			goto out_procs;
		p = proc_track(tgid, src, &st, true, &err);
		if (!p)
			goto out_procs;
	}
	if (threads)
		err = thread_place(p, pid, dst);
	else
		proc_move_locked(p, dst);
out_procs:
	pthread_rwlock_unlock(&procs_lock);
out_tree:
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/* ---- kill, freeze, cpu.stat, reattach ---- */
static void for_each_proc(struct cgroup *cg, void (*fn)(struct proc *p, void *arg), void *arg)
{
	for (struct proc *p = cg->procs; p; p = p->cg_next)
		if (!p->exited)
			fn(p, arg);
	for (struct cgroup *c = cg->first_child; c; c = c->next_sibling)
		for_each_proc(c, fn, arg);
}

/* cgroup_kill(): every task but the kernel's (PID 1 ignores it anyway) */
static void kill_one(struct proc *p, void *arg)
{
	(void)arg;
	if (!proc_untouchable(p->pid))
		pidfd_send_signal(p->pidfd, SIGKILL);
}

int procs_kill(struct cgroup *cg)
{
	int err = 0;

	procs_sync();
	pthread_rwlock_rdlock(&fs_tree_lock);
	if (cg->removed)
		err = -ENOENT;
	else if (cgroup_is_threaded(cg))
		err = -EOPNOTSUPP;
	if (!err) {
		pthread_rwlock_rdlock(&procs_lock);
		for_each_proc(cg, kill_one, NULL);
		pthread_rwlock_unlock(&procs_lock);
	}
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/* cgroup_freeze(): the effective state of a subtree; frozen changes notify. */
static void update_frozen(struct cgroup *cg, uint64_t now)
{
	bool frozen = cg->freeze || (cg->parent && cg->parent->frozen);

	if (frozen != cg->frozen) {
		cg->frozen = frozen;
		if (frozen) {
			cg->frozen_since_ns = now;
		} else {
			cg->frozen_total_ns += now - cg->frozen_since_ns;
		}
		for (struct proc *p = cg->procs; p; p = p->cg_next) {
			if (p->exited || p->stopped == frozen || proc_untouchable(p->pid))
				continue;
			/* a thaw leaves a process in a memory.high penalty stopped */
			if (frozen ? !proc_hold(p) : (p->throttled || !proc_release(p)))
				p->stopped = frozen;
		}
		fs_notify(cg, NF_CGROUP_EVENTS);
	}
	for (struct cgroup *c = cg->first_child; c; c = c->next_sibling)
		update_frozen(c, now);
}

int procs_freeze(struct cgroup *cg, bool freeze)
{
	int err = 0;

	pthread_rwlock_rdlock(&fs_tree_lock);
	if (cg->removed) {
		err = -ENOENT;
	} else {
		pthread_rwlock_wrlock(&procs_lock);
		cg->freeze = freeze;
		update_frozen(cg, fs_now_ns());
		pthread_rwlock_unlock(&procs_lock);
	}
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

struct cputime {
	uint64_t user, sys;
};

static void add_cputime(struct proc *p, void *arg)
{
	struct cputime *ct = arg;
	struct pstat st;

	if (!read_pstat(p->pid, &st) && st.start == p->start) {
		ct->user += st.utime;
		ct->sys += st.stime;
	}
}

void procs_cputime(struct cgroup *cg, uint64_t *user_us, uint64_t *system_us, uint64_t *nice_us)
{
	struct cputime ct = { 0, 0 };
	uint64_t tick_us = tick_ns / 1000;

	*nice_us = 0;
	if (!cg->parent) {
		/* root_cgroup_cputime(): the whole machine */
		char buf[512];
		unsigned long long user, nice, system, idle, iowait, irq, softirq;

		if (fs_read_file("/proc/stat", buf, sizeof(buf)) > 0 &&
		    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
			   &idle, &iowait, &irq, &softirq) == 7) {
			*user_us = (user + nice) * tick_us;
			*system_us = (system + irq + softirq) * tick_us;
			*nice_us = nice * tick_us;
			return;
		}
	}
	pthread_rwlock_rdlock(&procs_lock);
	for_each_proc(cg, add_cputime, &ct);
	ct.user += cg->dead_user_ticks;
	ct.sys += cg->dead_sys_ticks;
	pthread_rwlock_unlock(&procs_lock);
	*user_us = ct.user * tick_us;
	*system_us = ct.sys * tick_us;
}

static void reattach_one(struct proc *p, void *arg)
{
	(void)arg;
	memcg_task_attach(p->task, cgroup_memcg(p->cg));
}

void procs_reattach(struct cgroup *cg)
{
	pthread_rwlock_rdlock(&procs_lock);
	for_each_proc(cg, reattach_one, NULL);
	pthread_rwlock_unlock(&procs_lock);
}
