/* SPDX-License-Identifier: MIT */
/*
 * procs_track.c - process tracking: which processes memcgfs knows and the
 * cgroup each is in (docs/design.md "Tasks"); procs.c has what cgroup
 * files do with them (cgroup.procs and cgroup.threads, kill, freeze, cpu.stat).
 *
 * As in the kernel, a process is in the cgroup it was last written to, else
 * in its parent's cgroup as of its fork, up to the root.  memcgfs tracks a
 * process (struct proc: a pidfd, a memcg task, its cgroup and its recent
 * moves) once it matters: it made a request (it may charge), it was moved,
 * or it was forked by a tracked process outside the root.  Untracked
 * processes are in the root.
 *
 * Forks are followed through the proc connector (netlink, needs root);
 * without it, or when it overflowed, an unseen process is resolved
 * through its ancestors in /proc: the first tracked ancestor's cgroup as of
 * the fork, by start time.  Exits come from the pidfds (readable once the
 * process is a zombie, which is not listed).  A tracker thread waits on
 * all of them with epoll; readers of cgroup.procs/cgroup.events and rmdir
 * first drain what is already queued (procs_sync), so a cgroup whose last
 * process just exited can be removed at once.
 *
 * The requesting process of a FUSE request is fuse_req_ctx()->pid, a
 * thread id: leaders hit the process table directly, other threads a tid
 * cache whose entries are dropped when their own pidfd (PIDFD_THREAD)
 * reports the thread's exit.  /proc is read only on the first sight.
 *
 * Locking: procs_lock (inside fs_tree_lock) guards the tables, membership
 * lists and counts, and each proc's fields; a proc is freed at its last
 * reference (the table's, and one per request using it), which is when
 * its memcg task exits.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif

pthread_rwlock_t procs_lock = PTHREAD_RWLOCK_INITIALIZER;
_Atomic pid_t fs_notifier_tid;

#define TABLE_SIZE	4096		/* buckets, by pid */

struct tid_ent {
	pid_t tid;
	int pidfd;
	struct proc *p;			/* referenced */
	char comm[16];
	struct tid_ent *next;
};

static struct proc *proc_table[TABLE_SIZE];
static unsigned long nr_placed;		/* threads placed apart, all processes */
/* a racy peek: a placement made meanwhile is pruned next time */
#define READ_ONCE_PLACED()	(*(volatile unsigned long *)&nr_placed)
static struct tid_ent *tid_table[TABLE_SIZE];
static bool pidfd_thread_ok = true;

/* epoll data: a tag in the high bits, a pid in the low 32 */
#define TAG_PROC	(1ull << 32)
#define TAG_TID		(2ull << 32)
#define TAG_NL		(3ull << 32)
#define TAG_STOP	(4ull << 32)

static int epfd = -1;
static int stop_fd = -1;
static int nl_fd = -1;
static bool use_connector;
static pthread_mutex_t nl_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool nl_overflow;
static pthread_t tracker;
static bool tracker_running;
uint64_t tick_ns;

/* ---- /proc ---- */
static int read_pstat_path(const char *path, struct pstat *st)
{
	char buf[1024], *l, *r;
	ssize_t n = fs_read_file(path, buf, sizeof(buf));
	size_t clen;

	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	l = strchr(buf, '(');
	r = strrchr(buf, ')');
	if (!l || !r || r < l)
		return -EIO;
	clen = (size_t)(r - l - 1);
	if (clen > sizeof(st->comm) - 1)
		clen = sizeof(st->comm) - 1;
	memcpy(st->comm, l + 1, clen);
	st->comm[clen] = '\0';
	if (sscanf(r + 2, "%c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu %*d %*d %*d %ld %*d %*d %llu",
		   &st->state, &st->ppid, &st->flags, &st->utime, &st->stime, &st->nice,
		   &st->start) != 7)
		return -EIO;
	return 0;
}

int read_pstat(pid_t pid, struct pstat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return read_pstat_path(path, st);
}

/* A thread's thread group, from /proc/TID/status (slow path only). */
pid_t read_tgid(pid_t tid)
{
	char path[64], buf[4096], *t;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (fs_read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	t = strstr(buf, "\nTgid:");
	if (!t)
		return -EIO;
	return (pid_t)strtol(t + 6, NULL, 10);
}

static int read_comm(pid_t tid, char comm[16])
{
	char path[64], buf[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	n = fs_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 15)
		n = 15;
	memcpy(comm, buf, (size_t)n);
	comm[n] = '\0';
	return 0;
}

uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

/*
 * pidfds held (processes' and threads') against their budget: RLIMIT_NOFILE
 * less what the daemon needs besides (procs_set_pidfd_budget), so that a
 * fork storm never takes the descriptors requests need (/proc reads, FUSE,
 * the control file, real memory's statm files).  The last eighth is kept
 * for the processes a request names (its caller, a cgroup.procs write):
 * what forks and scans find stops short of it, so a storm leaves room for
 * other clients.
 */
static _Atomic long nr_pidfds;
static _Atomic long pidfd_budget = LONG_MAX;

void procs_set_pidfd_budget(long budget)
{
	atomic_store(&pidfd_budget, budget);
}

static int pidfd_get(pid_t pid, unsigned int flags, bool requested)
{
	long budget = atomic_load(&pidfd_budget);
	int fd, e;

	if (!requested)
		budget -= budget / 8;
	if (atomic_fetch_add(&nr_pidfds, 1) >= budget) {
		atomic_fetch_sub(&nr_pidfds, 1);
		errno = EMFILE;
		return -1;
	}
	fd = pidfd_open(pid, flags);
	if (fd < 0) {
		e = errno;
		atomic_fetch_sub(&nr_pidfds, 1);
		errno = e;
	}
	return fd;
}

/*
 * The reserve is shared: the processes a non-root uid's requests made the
 * daemon track (callers seen first in a request, counted until they exit)
 * may take at most half of it, so that one user's many clients in the
 * root cgroup cannot leave other users' requests without a pidfd.
 * procs_lock held (write).
 */
static struct fs_uid_counts caller_uids;

static bool caller_share_left(uid_t uid)
{
	long budget = atomic_load(&pidfd_budget);

	return !uid || budget == LONG_MAX || fs_uid_count(&caller_uids, uid) < (uint64_t)budget / 16;
}

static void pidfd_put(int fd)
{
	close(fd);
	atomic_fetch_sub(&nr_pidfds, 1);
}

/* ---- the tables ---- */
struct proc *proc_find(pid_t pid)
{
	struct proc *p = proc_table[(unsigned int)pid % TABLE_SIZE];

	for (; p; p = p->hash_next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct tid_ent *tid_find(pid_t tid)
{
	struct tid_ent *t = tid_table[(unsigned int)tid % TABLE_SIZE];

	for (; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

void proc_get(struct proc *p)
{
	atomic_fetch_add_explicit(&p->ref, 1, memory_order_relaxed);
}

void proc_put(struct proc *p)
{
	if (atomic_fetch_sub_explicit(&p->ref, 1, memory_order_acq_rel) != 1)
		return;
	/* the last request of an exited process is done: its task exits */
	memcg_task_exit(p->task);
	realmem_proc_free(p);
	for (unsigned int i = 0; i < p->nr_moves; i++)
		cgroup_put(p->moves[i].from);
	cgroup_put(p->cg);
	free(p);
}

/* Count live members at and below; flips of populated notify cgroup.events. */
static void populated_add(struct cgroup *cg, long d)
{
	for (; cg; cg = cg->parent) {
		bool was = cg->nr_populated > 0;

		cg->nr_populated = (unsigned long)((long)cg->nr_populated + d);
		if (was != (cg->nr_populated > 0) && cg->parent)
			fs_notify(cg, NF_CGROUP_EVENTS);
	}
}

void member_link(struct proc *p, struct cgroup *cg)
{
	__atomic_store_n(&p->cg, cg, __ATOMIC_RELAXED);	/* proc_member() reads it unlocked */
	p->cg_prev = NULL;
	p->cg_next = cg->procs;
	if (cg->procs)
		cg->procs->cg_prev = p;
	cg->procs = p;
	cg->nr_procs++;
	populated_add(cg, 1);
}

void member_unlink(struct proc *p)
{
	struct cgroup *cg = p->cg;

	if (p->cg_prev)
		p->cg_prev->cg_next = p->cg_next;
	else
		cg->procs = p->cg_next;
	if (p->cg_next)
		p->cg_next->cg_prev = p->cg_prev;
	p->cg_next = p->cg_prev = NULL;
	cg->nr_procs--;
	populated_add(cg, -1);
}

/* ---- threads placed apart (cgroup.threads) ---- */
static void thread_unplace(struct thread_pl **pp)
{
	struct thread_pl *t = *pp;

	*pp = t->next;
	nr_placed--;
	t->cg->nr_procs--;
	populated_add(t->cg, -1);
	cgroup_put(t->cg);
	free(t);
}

void threads_unplace_all(struct proc *p)
{
	while (p->threads)
		thread_unplace(&p->threads);
}

static struct thread_pl **thread_find(struct proc *p, pid_t tid)
{
	struct thread_pl **pp = &p->threads;

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid)
			return pp;
	return NULL;
}

/* The cgroup of thread tid of p. */
struct cgroup *thread_cgroup(struct proc *p, pid_t tid)
{
	struct thread_pl **pp = thread_find(p, tid);

	return pp ? (*pp)->cg : p->cg;
}

/* Place thread tid of p in dst (its process's cgroup: no placement). */
int thread_place(struct proc *p, pid_t tid, struct cgroup *dst)
{
	struct thread_pl **pp = thread_find(p, tid), *t;

	if (pp)
		thread_unplace(pp);
	if (dst == p->cg)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->tid = tid;
	t->cg = dst;
	cgroup_get(dst);
	t->next = p->threads;
	p->threads = t;
	nr_placed++;
	dst->nr_procs++;
	populated_add(dst, 1);
	return 0;
}

/* Placements of threads that exited since (no pidfd each: checked here). */
static void threads_prune_locked(struct proc *p)
{
	char path[64];

	for (struct thread_pl **pp = &p->threads; *pp;) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d", p->pid, (*pp)->tid);
		if (access(path, F_OK))
			thread_unplace(pp);
		else
			pp = &(*pp)->next;
	}
}

/* The cgroup p was in at boottime t (its moves, newest last). */
static struct cgroup *proc_cgroup_at(const struct proc *p, uint64_t t)
{
	for (unsigned int i = 0; i < p->nr_moves; i++)
		if (t < p->moves[i].when_ns)
			return p->moves[i].from;
	return p->cg;
}

static struct cgroup *live_cgroup(struct cgroup *cg)
{
	while (cg->removed && cg->parent)
		cg = cg->parent;
	return cg;
}

/*
 * proc_track - start tracking pid in cg.  st, when given, is what /proc
 * said: the pid must still be that process once we hold its pidfd.
 * requested: a request names it (its caller, a cgroup.procs write), which
 * may use the pidfds kept for that.
 * fs_tree_lock (read) and procs_lock (write) held.
 */
/*
 * Out of descriptors for a pidfd (a fork storm past RLIMIT_NOFILE): the
 * process stays untracked, in the defined state of every process memcgfs
 * has not seen yet: not in any cgroup.procs, looked up again through its
 * ancestors (resolve_unseen) whenever it makes a request or is written to
 * a cgroup.procs, charged then as a member of its first tracked ancestor's
 * cgroup only once it can be tracked, and never signalled (no pidfd).
 * Said in the log at the first refusal and then at most every 10 s, with
 * how many since.
 */
static void untracked_nofile(pid_t pid, int err)
{
	static _Atomic uint64_t last_ns;
	static _Atomic unsigned long refused;
	unsigned long n = atomic_fetch_add(&refused, 1) + 1;
	uint64_t now = fs_now_ns(), last = atomic_load(&last_ns);
	struct rlimit rl;

	if (last && now - last < 10 * 1000000000ull)
		return;
	if (!atomic_compare_exchange_strong(&last_ns, &last, now))
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		rl.rlim_cur = 0;
	fs_warn("process tracking: no file descriptor left for a pidfd (%s, RLIMIT_NOFILE %lu): "
		"pid %d and any other new process stay untracked (not in cgroup.procs, never "
		"signalled) until a descriptor is free; %lu refused so far", strerror(-err),
		(unsigned long)rl.rlim_cur, (int)pid, n);
}

struct proc *proc_track(pid_t pid, struct cgroup *cg, const struct pstat *st, bool requested,
			int *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct pstat now;
	struct proc *p;
	int fd = pidfd_get(pid, 0, requested);

	if (fd < 0) {
		*err = errno == ESRCH || errno == EINVAL ? -ESRCH : -errno;
		if (*err == -EMFILE || *err == -ENFILE)
			untracked_nofile(pid, *err);
		return NULL;
	}
	if (read_pstat(pid, &now) || (st && now.start != st->start) || now.state == 'Z' ||
	    now.state == 'X') {
		pidfd_put(fd);
		*err = -ESRCH;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		pidfd_put(fd);
		*err = -ENOMEM;
		return NULL;
	}
	p->pid = pid;
	p->pidfd = fd;
	p->start = now.start;
	p->start_ns = now.start * tick_ns;
	memcpy(p->comm, now.comm, sizeof(p->comm));
	p->task = memcg_task_create(pid, cgroup_memcg(cg));
	if (!p->task) {
		pidfd_put(fd);
		free(p);
		*err = -ENOMEM;
		return NULL;
	}
	/* is_global_init(), and the daemon itself: never an OOM victim */
	if (proc_untouchable(pid))
		memcg_task_set_unkillable(p->task);
	atomic_init(&p->ref, 1);
	cgroup_get(cg);
	member_link(p, cg);
	p->hash_next = proc_table[(unsigned int)pid % TABLE_SIZE];
	proc_table[(unsigned int)pid % TABLE_SIZE] = p;
	ev.data.u64 = TAG_PROC | (uint32_t)pid;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		fs_warn("epoll_ctl(pidfd %d): %s", pid, strerror(errno));
	if (cg->frozen && !proc_untouchable(pid) && !proc_hold(p))
		p->stopped = true;
	return p;
}

/* In a job-control stop: state T in /proc/PID/stat, and still this process. */
static bool proc_job_stopped(const struct proc *p)
{
	char path[32], buf[512];
	const char *s;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
	if (fs_read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	s = strrchr(buf, ')');
	/* the pidfd says it lives: the pid read is still this process's */
	return s && s[1] == ' ' && s[2] == 'T' && !pidfd_send_signal(p->pidfd, 0);
}

int proc_hold(struct proc *p)
{
	if (p->stopped || p->throttled)
		return 0;
	if (proc_job_stopped(p)) {
		p->job_stopped = true;
		return 0;
	}
	return pidfd_send_signal(p->pidfd, SIGSTOP) ? -errno : 0;
}

int proc_release(struct proc *p)
{
	if (p->job_stopped) {
		p->job_stopped = false;
		return 0;
	}
	return pidfd_send_signal(p->pidfd, SIGCONT) ? -errno : 0;
}

/* The process exited (its pidfd is readable).  procs_lock held (write). */
static void proc_exit_locked(struct proc *p)
{
	struct proc **pp = &proc_table[(unsigned int)p->pid % TABLE_SIZE];
	struct pstat st;

	if (p->exited)
		return;
	__atomic_store_n(&p->exited, true, __ATOMIC_RELEASE);	/* proc_exited() reads it unlocked */
	/* a zombie still shows its CPU time: the cgroup keeps it (cpu.stat) */
	if (!read_pstat(p->pid, &st) && st.start == p->start) {
		for (struct cgroup *c = p->cg; c; c = c->parent) {
			c->dead_user_ticks += st.utime;
			c->dead_sys_ticks += st.stime;
		}
	}
	epoll_ctl(epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
	pidfd_put(p->pidfd);
	p->pidfd = -1;
	if (p->req_uid) {
		(void)fs_uid_count_add(&caller_uids, p->req_uid, -1);
		p->req_uid = 0;
	}
	threads_unplace_all(p);
	for (; *pp; pp = &(*pp)->hash_next) {
		if (*pp == p) {
			*pp = p->hash_next;
			break;
		}
	}
	member_unlink(p);
	proc_put(p);
}

static void tid_drop_locked(struct tid_ent *t)
{
	struct tid_ent **pp = &tid_table[(unsigned int)t->tid % TABLE_SIZE];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (t->pidfd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		pidfd_put(t->pidfd);
	}
	proc_put(t->p);
	free(t);
}

static bool fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLHUP | POLLERR));
}

/*
 * An entry whose process has exited though its exit has not been handled
 * yet (its pidfd is readable): the pid may be another process's already
 * (pids wrap; pid_max is 32768 on many hosts).  procs_lock held (write).
 * Handles that exit and returns true; a live entry is left alone.
 */
bool proc_gone_locked(struct proc *p)
{
	if (p->exited || p->pidfd < 0 || !fd_readable(p->pidfd))
		return p->exited;
	proc_exit_locked(p);
	return true;
}

/* An epoll event of a pidfd: the process or thread (looked up again) exited. */
static void handle_pid_event(uint64_t data)
{
	pid_t pid = (pid_t)(uint32_t)data;

	pthread_rwlock_wrlock(&procs_lock);
	if ((data & ~0xffffffffull) == TAG_PROC) {
		struct proc *p = proc_find(pid);

		if (p && p->pidfd >= 0 && fd_readable(p->pidfd))
			proc_exit_locked(p);
	} else {
		struct tid_ent *t = tid_find(pid);

		if (t && t->pidfd >= 0 && fd_readable(t->pidfd))
			tid_drop_locked(t);
	}
	pthread_rwlock_unlock(&procs_lock);
}

/*
 * The cgroup of an untracked process: its first tracked ancestor's cgroup
 * as of the fork of the child on the way down (an untracked process never
 * moved, so it is where it was forked).  Tree lock and procs_lock held.
 */
struct cgroup *resolve_unseen(const struct pstat *st)
{
	struct pstat cur = *st, parent;

	for (int depth = 0; depth < 128; depth++) {
		struct proc *p;

		if (cur.ppid <= 0)
			return fs_root;
		p = proc_find(cur.ppid);
		if (p && !p->exited && p->start <= cur.start) {
			/* same clock tick as a move: taken as after it */
			uint64_t t = cur.start * tick_ns + tick_ns - 1;

			return live_cgroup(proc_cgroup_at(p, t));
		}
		if (read_pstat(cur.ppid, &parent) || parent.start > cur.start)
			return fs_root;
		cur = parent;
	}
	return fs_root;
}

/*
 * Track pid if it is not yet, for a request of uid; its cgroup resolved
 * through /proc.  -EMFILE when uid (not root) has its share of the pidfd
 * reserve already.  Locks held.
 */
static struct proc *proc_lookup_or_track(pid_t pid, uid_t uid, int *err)
{
	struct proc *p = proc_find(pid);
	struct pstat st;

	if (p && !proc_gone_locked(p))
		return p;
	*err = read_pstat(pid, &st);
	if (*err)
		return NULL;
	if (st.state == 'Z' || st.state == 'X') {
		*err = -ESRCH;
		return NULL;
	}
	if (!caller_share_left(uid) || fs_uid_count_add(&caller_uids, uid, 1)) {
		*err = -EMFILE;
		return NULL;
	}
	p = proc_track(pid, resolve_unseen(&st), &st, true, err);
	if (p)
		p->req_uid = uid;
	else
		(void)fs_uid_count_add(&caller_uids, uid, -1);
	return p;
}

/*
 * fs.user_slices: a non-root user's process seen first in the root goes to
 * its user's slice, as a login session would put it.  Best effort: if the
 * slice cannot be made (limits), the process stays in the root.
 */
static void user_slice_place(struct proc *p, uid_t uid, gid_t gid)
{
	struct cgroup *slice;

	if (p->cg != fs_root || cgroup_user_slice(uid, gid, &slice))
		return;
	pthread_rwlock_rdlock(&fs_tree_lock);
	pthread_rwlock_wrlock(&procs_lock);
	if (!p->exited && p->cg == fs_root && !slice->removed)
		proc_move_locked(p, slice);
	pthread_rwlock_unlock(&procs_lock);
	pthread_rwlock_unlock(&fs_tree_lock);
}

/* ---- the requesting process ---- */
int procs_caller(const struct fs_caller *who, struct proc **out, char comm[16])
{
	pid_t tid = who->tid, tgid;
	struct tid_ent *t;
	struct proc *p;
	char tcomm[16] = "";
	int err = 0;

	if (!tid)
		return -EPERM;		/* from another pid namespace */
	pthread_rwlock_rdlock(&procs_lock);
	p = proc_find(tid);
	if (p && !p->exited) {
		proc_get(p);
		if (comm)
			memcpy(comm, p->comm, 16);
		pthread_rwlock_unlock(&procs_lock);
		*out = p;
		return 0;
	}
	t = tid_find(tid);
	if (t && !t->p->exited) {
		proc_get(t->p);
		if (comm)
			memcpy(comm, t->comm, 16);
		pthread_rwlock_unlock(&procs_lock);
		*out = t->p;
		return 0;
	}
	pthread_rwlock_unlock(&procs_lock);

	/* first sight: /proc, once */
	tgid = read_tgid(tid);
	if (tgid < 0)
		return tgid;
	if (tgid != tid && read_comm(tid, tcomm))
		return -ESRCH;
	pthread_rwlock_rdlock(&fs_tree_lock);
	pthread_rwlock_wrlock(&procs_lock);
	p = proc_lookup_or_track(tgid, who->uid, &err);
	if (p && tgid != tid && !tid_find(tid) && pidfd_thread_ok) {
		int fd = pidfd_get(tid, PIDFD_THREAD, true);

		if (fd < 0 && errno == EINVAL) {
			/* a kernel before 6.9: no thread pidfds, no cache */
			pidfd_thread_ok = false;
		} else if (fd >= 0) {
			struct tid_ent *n = calloc(1, sizeof(*n));
			struct epoll_event ev = { .events = EPOLLIN,
						  .data.u64 = TAG_TID | (uint32_t)tid };

			if (n && !epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
				n->tid = tid;
				n->pidfd = fd;
				n->p = p;
				proc_get(p);
				memcpy(n->comm, tcomm, 16);
				n->next = tid_table[(unsigned int)tid % TABLE_SIZE];
				tid_table[(unsigned int)tid % TABLE_SIZE] = n;
			} else {
				free(n);
				pidfd_put(fd);
			}
		}
	}
	if (p) {
		proc_get(p);
		if (comm)
			memcpy(comm, tgid == tid ? p->comm : tcomm, 16);
	}
	pthread_rwlock_unlock(&procs_lock);
	pthread_rwlock_unlock(&fs_tree_lock);
	if (!p)
		return err;
	if (fs_user_slices && who->uid != 0)
		user_slice_place(p, who->uid, who->gid);
	*out = p;
	return 0;
}

/* ---- the proc connector ---- */
static int connector_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	/* nlmsghdr, cn_msg, then the op in cn_msg's flexible data[] */
	union {
		struct nlmsghdr align;
		char b[NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(enum proc_cn_mcast_op))];
	} msg;
	struct nlmsghdr *nl = &msg.align;
	struct cn_msg *cn = NLMSG_DATA(nl);
	enum proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;
	int fd, rcvbuf = 4 << 20;

	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	memset(&msg, 0, sizeof(msg));
	nl->nlmsg_len = sizeof(msg.b);
	nl->nlmsg_type = NLMSG_DONE;
	nl->nlmsg_pid = (unsigned int)getpid();
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	if (send(fd, msg.b, sizeof(msg.b), 0) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* A fork: the child of a tracked process outside the root is tracked too. */
static void connector_fork(const struct proc_event *ev, uint64_t mono_to_boot)
{
	pid_t child = ev->event_data.fork.child_tgid;
	struct proc *parent;
	struct cgroup *cg;
	int err;

	if (ev->event_data.fork.child_pid != child)
		return;			/* a thread */
	parent = proc_find(ev->event_data.fork.parent_tgid);
	/* the parent's pid may be another process's by now: only a live parent counts */
	if (!parent || proc_gone_locked(parent))
		return;
	{
		struct proc *old = proc_find(child);

		/* an entry of an exited process whose pid the child reuses: gone */
		if (old && !proc_gone_locked(old))
			return;
	}
	cg = live_cgroup(proc_cgroup_at(parent, ev->timestamp_ns + mono_to_boot));
	if (cg == fs_root)
		return;
	proc_track(child, cg, NULL, false, &err);
}

static void connector_event(const struct proc_event *ev, uint64_t mono_to_boot)
{
	switch (ev->what) {
	case PROC_EVENT_FORK:
		connector_fork(ev, mono_to_boot);
		break;
	case PROC_EVENT_EXEC: {
		/* exec renames it (no COMM event then): the trace's COMM-PID */
		pid_t pid = ev->event_data.exec.process_pid;
		struct proc *p = proc_find(pid);
		struct tid_ent *t = tid_find(pid);

		if (p || t) {
			char comm[16];

			if (!read_comm(pid, comm)) {
				if (p)
					memcpy(p->comm, comm, sizeof(comm));
				if (t)
					memcpy(t->comm, comm, sizeof(comm));
			}
		}
		break;
	}
	case PROC_EVENT_COMM: {
		pid_t pid = ev->event_data.comm.process_pid;
		struct proc *p = proc_find(pid);
		struct tid_ent *t = tid_find(pid);

		if (p)
			snprintf(p->comm, sizeof(p->comm), "%s", ev->event_data.comm.comm);
		if (t)
			snprintf(t->comm, sizeof(t->comm), "%s", ev->event_data.comm.comm);
		break;
	}
	default:
		break;
	}
}

static void procs_rescan(void);

/* Apply every queued connector message (serialised: forks stay in order). */
static void connector_drain(void)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint64_t mono_to_boot;

	if (nl_fd < 0)
		return;
	pthread_mutex_lock(&nl_lock);
	mono_to_boot = boottime_ns() - fs_now_ns();
	for (;;) {
		ssize_t n = recv(nl_fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0) {
			if (errno == ENOBUFS) {
				/* events were lost: find who we missed in /proc */
				atomic_store(&nl_overflow, true);
				continue;
			}
			break;
		}
		if (!n)
			break;
		pthread_rwlock_rdlock(&fs_tree_lock);
		pthread_rwlock_wrlock(&procs_lock);
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			struct cn_msg *cn;
			struct proc_event ev;

			if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP)
				continue;
			cn = NLMSG_DATA(nh);
			if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
			    cn->len < offsetof(struct proc_event, event_data) + sizeof(ev.event_data.fork))
				continue;
			/* the event sits 4 bytes off its alignment in the message */
			memset(&ev, 0, sizeof(ev));
			memcpy(&ev, cn->data, cn->len < sizeof(ev) ? cn->len : sizeof(ev));
			connector_event(&ev, mono_to_boot);
		}
		pthread_rwlock_unlock(&procs_lock);
		pthread_rwlock_unlock(&fs_tree_lock);
	}
	pthread_mutex_unlock(&nl_lock);
	if (atomic_exchange(&nl_overflow, false))
		procs_rescan();
}

/*
 * Every process in /proc that is not tracked, resolved through its
 * ancestors: those outside the root are tracked from now on.
 */
static void procs_rescan(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	pthread_rwlock_rdlock(&fs_tree_lock);
	pthread_rwlock_wrlock(&procs_lock);
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		struct pstat st;
		struct cgroup *cg;
		int err;

		if (pid <= 0 || proc_find(pid) || read_pstat(pid, &st) || st.state == 'Z')
			continue;
		cg = resolve_unseen(&st);
		if (cg != fs_root)
			proc_track(pid, cg, &st, false, &err);
	}
	pthread_rwlock_unlock(&procs_lock);
	pthread_rwlock_unlock(&fs_tree_lock);
	closedir(d);
}

/* ---- exits and sync ---- */
void procs_collect_exits(void)
{
	struct epoll_event ev[64];
	int n;

	if (epfd < 0)
		return;
	/*
	 * Forks first: a child forked just before its parent exited must be
	 * tracked (its fork event is already queued) before the exit forgets
	 * the parent.  No fs lock may be held here.
	 */
	connector_drain();
	do {
		n = epoll_wait(epfd, ev, 64, 0);
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64 & ~0xffffffffull;

			if (tag == TAG_PROC || tag == TAG_TID)
				handle_pid_event(ev[i].data.u64);
		}
	} while (n == 64);
}

void procs_sync(void)
{
	if (!use_connector)
		procs_rescan();
	procs_collect_exits();
	if (READ_ONCE_PLACED()) {
		pthread_rwlock_wrlock(&procs_lock);
		for (unsigned int i = 0; i < TABLE_SIZE && nr_placed; i++)
			for (struct proc *p = proc_table[i]; p; p = p->hash_next)
				if (p->threads)
					threads_prune_locked(p);
		pthread_rwlock_unlock(&procs_lock);
	}
}

static void *tracker_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct epoll_event ev[64];
		int n = epoll_wait(epfd, ev, 64, -1);

		if (n < 0 && errno != EINTR) {
			fs_err("process tracker: epoll_wait: %s", strerror(errno));
			break;
		}
		/* forks before exits (see procs_collect_exits) */
		if (n > 0)
			connector_drain();
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64 & ~0xffffffffull;

			if (tag == TAG_STOP)
				return NULL;
			if (tag != TAG_NL)
				handle_pid_event(ev[i].data.u64);
		}
	}
	return NULL;
}

/* ---- for realmem.c ---- */
static int collect_add(struct proc ***v, size_t *n, size_t *cap, struct proc *p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct proc **w = realloc(*v, c * sizeof(*w));

		if (!w)
			return -ENOMEM;
		*v = w;
		*cap = c;
	}
	proc_get(p);
	(*v)[(*n)++] = p;
	return 0;
}

static int collect_subtree(struct cgroup *cg, struct proc ***v, size_t *n, size_t *cap)
{
	int err = 0;

	for (struct proc *p = cg->procs; p && !err; p = p->cg_next)
		if (!p->exited)
			err = collect_add(v, n, cap, p);
	for (struct cgroup *c = cg->first_child; c && !err; c = c->next_sibling)
		err = collect_subtree(c, v, n, cap);
	return err;
}

int procs_collect(struct cgroup *cg, struct proc ***out, size_t *n)
{
	struct proc **v = NULL;
	size_t cap = 0;
	int err = 0;

	*n = 0;
	if (cg) {
		pthread_rwlock_rdlock(&fs_tree_lock);
		pthread_rwlock_rdlock(&procs_lock);
		err = collect_subtree(cg, &v, n, &cap);
		pthread_rwlock_unlock(&procs_lock);
		pthread_rwlock_unlock(&fs_tree_lock);
	} else {
		pthread_rwlock_rdlock(&procs_lock);
		for (unsigned int i = 0; i < TABLE_SIZE && !err; i++)
			for (struct proc *p = proc_table[i]; p && !err; p = p->hash_next)
				if (!p->exited)
					err = collect_add(&v, n, &cap, p);
		pthread_rwlock_unlock(&procs_lock);
	}
	if (err) {
		procs_put_all(v, *n);
		*n = 0;
		return err;
	}
	*out = v;
	return 0;
}

void procs_put_all(struct proc **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proc_put(v[i]);
	free(v);
}

struct proc *procs_get_member(pid_t pid)
{
	struct proc *p;

	if (pid <= 0)
		return NULL;
	pthread_rwlock_rdlock(&procs_lock);
	p = proc_find(pid);
	if (p && (p->exited || p->cg == fs_root))
		p = NULL;
	if (p)
		proc_get(p);
	pthread_rwlock_unlock(&procs_lock);
	return p;
}

int procs_throttle(struct proc *p, bool stop)
{
	int err = 0;

	if (proc_untouchable(p->pid))
		return -EPERM;
	pthread_rwlock_wrlock(&procs_lock);
	if (p->exited || p->pidfd < 0) {
		p->throttled = false;
		err = -ESRCH;
	} else if (stop) {
		/* a frozen process is stopped already */
		err = proc_hold(p);
		if (!err)
			p->throttled = true;
	} else if (p->throttled) {
		p->throttled = false;
		if (!p->stopped)
			err = proc_release(p);
	}
	pthread_rwlock_unlock(&procs_lock);
	return err;
}

void procs_mark_file_scan(void)
{
	pthread_rwlock_rdlock(&procs_lock);
	for (unsigned int i = 0; i < TABLE_SIZE; i++)
		for (struct proc *p = proc_table[i]; p; p = p->hash_next)
			if (!p->exited && p->cg != fs_root)
				atomic_store(&p->real_scan, true);
	pthread_rwlock_unlock(&procs_lock);
}

bool procs_take_file_scan(struct proc *p)
{
	return atomic_load(&p->real_scan) && atomic_exchange(&p->real_scan, false);
}

/* ---- the OOM killer's process work (memcg/ asks, fs/ acts) ---- */
static int procs_oom_score_adj(pid_t pid)
{
	char path[64], buf[32];
	int adj = 0;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	if (fs_read_file(path, buf, sizeof(buf)) > 0 && kstrtoint0(strstrip(buf), &adj))
		adj = 0;
	return adj;
}

/*
 * Signal the process of task t through its pidfd, never by pid: a process
 * that exited (its pid free for reuse) gets nothing.  Never PID 1, never
 * the daemon.
 */
static int procs_oom_kill(struct memcg_task *t, int sig, void *arg)
{
	pid_t pid = memcg_task_pid(t);
	struct proc *p;
	int ret = -ESRCH;

	(void)arg;
	if (proc_untouchable(pid))
		return -EPERM;
	pthread_rwlock_rdlock(&procs_lock);
	p = proc_find(pid);
	if (p && p->task == t && !p->exited && p->pidfd >= 0) {
		ret = pidfd_send_signal(p->pidfd, sig) ? -errno : 0;
		/*
		 * -ESRCH: the victim exited and was reaped after it was
		 * chosen, before its exit reached the process table (the
		 * kernel's victim would be exiting too): what the kill was
		 * for has happened, and the exit uncharges it.
		 */
		if (ret == -ESRCH)
			fs_info("OOM kill of %d (%s): it had already exited", pid, p->comm);
		else if (ret)
			fs_warn("OOM kill of %d (%s): %s", pid, p->comm, strerror(-ret));
		else
			fs_info("OOM killed %d (%s) with signal %d", pid, p->comm, sig);
	}
	pthread_rwlock_unlock(&procs_lock);
	return ret;
}

static const struct memcg_oom_ops procs_oom_ops = {
	.oom_score_adj = procs_oom_score_adj,
	.kill = procs_oom_kill,
};

/* ---- init ---- */
int procs_init(bool connector)
{
	struct epoll_event ev = { .events = EPOLLIN };
	long hz = sysconf(_SC_CLK_TCK);

	tick_ns = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (epfd < 0 || stop_fd < 0)
		return -errno;
	ev.data.u64 = TAG_STOP;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, stop_fd, &ev))
		return -errno;
	memcg_set_oom_ops(&procs_oom_ops);
	use_connector = false;
	if (connector) {
		int fd = connector_open();

		if (fd < 0) {
			fs_info("proc connector unavailable (%s): following forks through /proc",
				strerror(-fd));
		} else {
			nl_fd = fd;
			ev.data.u64 = TAG_NL;
			if (epoll_ctl(epfd, EPOLL_CTL_ADD, nl_fd, &ev))
				return -errno;
			use_connector = true;
		}
	}
	return 0;
}

int procs_start(void)
{
	int err = pthread_create(&tracker, NULL, tracker_main, NULL);

	if (err)
		return -err;
	tracker_running = true;
	return 0;
}

void procs_stop(void)
{
	uint64_t one = 1;

	if (!tracker_running)
		return;
	if (write(stop_fd, &one, sizeof(one)) < 0)
		fs_warn("process tracker: cannot stop: %s", strerror(errno));
	pthread_join(tracker, NULL);
	tracker_running = false;
}

/* Forget every process (tasks exit: their owned pages are freed). */
void procs_exit(void)
{
	procs_stop();
	memcg_set_oom_ops(NULL);
	pthread_rwlock_wrlock(&procs_lock);
	for (unsigned int i = 0; i < TABLE_SIZE; i++) {
		while (tid_table[i])
			tid_drop_locked(tid_table[i]);
	}
	for (unsigned int i = 0; i < TABLE_SIZE; i++) {
		while (proc_table[i]) {
			struct proc *p = proc_table[i];

			/* SIGSTOPped by the freezer: let them run again */
			if (p->stopped)
				proc_release(p);
			proc_exit_locked(p);
		}
	}
	pthread_rwlock_unlock(&procs_lock);
	if (nl_fd >= 0)
		close(nl_fd);
	if (stop_fd >= 0)
		close(stop_fd);
	if (epfd >= 0)
		close(epfd);
	nl_fd = stop_fd = epfd = -1;
}
