/* SPDX-License-Identifier: MIT */
/*
 * notify.c - change notification and dcache invalidation.
 *
 * kernfs_notify() in user space: a change of cgroup.events, memory.events,
 * memory.events.local or memory.swap.events bumps the file's event
 * counter, wakes its pollers (fuse_lowlevel_notify_poll: they see
 * POLLPRI|POLLERR until they read again) and, for inotify watchers, writes
 * one byte to the file through the mount, the only way a FUSE daemon can
 * raise IN_MODIFY (the write handler recognises the notifier's thread,
 * changes nothing and replies 1).  Deliveries are coalesced to one per
 * file per 10 ms, as kernfs does; one inside the window is delayed to its
 * end, not dropped.
 *
 * Everything that talks to the kernel through the mount or /dev/fuse from
 * outside a request runs on the notifier thread, never on a worker: the
 * self-writes, and the invalidation of dentries that vanished (memory.*
 * after -memory, *.pressure after cgroup.pressure 0), after which the
 * write that caused them is answered.  The thread is stopped before the
 * session ends.  It also wakes the pollers of PSI files that were drained
 * (rmdir, cgroup.pressure 0: psi_trigger_destroy() wakes them in Linux).
 *
 * Locking: nq_lock (the queue) and poll_lock (poll handles) are leaves;
 * owner_lock ties memcgs to their cgroups for memcg's callback.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define COALESCE_NS	(10 * NSEC_PER_MSEC)

struct fuse_session *fs_session;
static char *mnt;			/* the mountpoint, absolute */

static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;

struct nitem {
	struct cgroup *cg;		/* referenced */
	int nf;
	uint64_t due_ns;
	/* invalidation job */
	struct fs_inval *inval;
	size_t ninval;
	fuse_req_t req;
	size_t result;
	void (*call)(void);
	bool drained;			/* wake cg's PSI pollers (notify_drained) */
	struct nitem *next;
};

static pthread_mutex_t nq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nq_cond;
static struct nitem *nq_head, *nq_tail;	/* due now, in order */
static struct nitem *delayed;		/* coalesced, by due time */
static pthread_t notifier;
static bool notifier_running, notifier_stopping;

/* ---- memcgs and their cgroups ---- */
void cgroup_set_memcg(struct cgroup *cg, struct mem_cgroup *memcg)
{
	pthread_mutex_lock(&owner_lock);
	if (cg->memcg)
		mem_cgroup_set_owner(cg->memcg, NULL);
	cg->memcg = memcg;
	if (memcg)
		mem_cgroup_set_owner(memcg, cg);
	pthread_mutex_unlock(&owner_lock);
}

void fs_memcg_notify(struct mem_cgroup *memcg, const char *file, void *arg)
{
	struct cgroup *cg;
	int nf;

	(void)arg;
	if (!strcmp(file, "memory.events"))
		nf = NF_MEMORY_EVENTS;
	else if (!strcmp(file, "memory.events.local"))
		nf = NF_MEMORY_EVENTS_LOCAL;
	else if (!strcmp(file, "memory.swap.events"))
		nf = NF_MEMORY_SWAP_EVENTS;
	else if (!strcmp(file, "memory.pressure"))
		nf = NF_MEMORY_PRESSURE;
	else
		return;
	pthread_mutex_lock(&owner_lock);
	cg = mem_cgroup_owner(memcg);
	if (cg)
		cgroup_get(cg);
	pthread_mutex_unlock(&owner_lock);
	if (!cg)
		return;			/* dying: its files are gone */
	fs_notify(cg, nf);
	cgroup_put(cg);
}

/* ---- the queue ---- */
static void nq_push(struct nitem *n)
{
	n->next = NULL;
	if (nq_tail)
		nq_tail->next = n;
	else
		nq_head = n;
	nq_tail = n;
}

void fs_notify(struct cgroup *cg, enum fs_notify_file nf)
{
	struct nitem *n;

	pthread_mutex_lock(&nq_lock);
	if (cg->notify_pending[nf] || !notifier_running || notifier_stopping) {
		bool running = notifier_running;

		pthread_mutex_unlock(&nq_lock);
		/* without the thread (start-up, tests): count the change at least */
		if (!running)
			atomic_fetch_add(&cg->events[nf], 1);
		return;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		pthread_mutex_unlock(&nq_lock);
		atomic_fetch_add(&cg->events[nf], 1);
		return;
	}
	cg->notify_pending[nf] = true;
	cgroup_get(cg);
	n->cg = cg;
	n->nf = (int)nf;
	nq_push(n);
	pthread_cond_signal(&nq_cond);
	pthread_mutex_unlock(&nq_lock);
}

/* An item for the notifier thread, filled in: false (and freed) when it is not running. */
static bool nq_queue(struct nitem *it)
{
	pthread_mutex_lock(&nq_lock);
	if (!it || !notifier_running || notifier_stopping) {
		pthread_mutex_unlock(&nq_lock);
		free(it);
		return false;
	}
	nq_push(it);
	pthread_cond_signal(&nq_cond);
	pthread_mutex_unlock(&nq_lock);
	return true;
}

void notify_inval(struct fs_inval *v, size_t n, fuse_req_t req, size_t result)
{
	struct nitem *it = calloc(1, sizeof(*it));

	if (it) {
		it->nf = -1;
		it->inval = v;
		it->ninval = n;
		it->req = req;
		it->result = result;
	}
	if (!nq_queue(it)) {
		/* nothing to invalidate through: answer now */
		free(v);
		if (req)
			fuse_reply_write(req, result);
	}
}

void notify_call(void (*fn)(void))
{
	struct nitem *it = calloc(1, sizeof(*it));

	if (it) {
		it->nf = -1;
		it->call = fn;
	}
	nq_queue(it);
}

/* ---- poll ---- */
/* The PSI pollers of cg, woken: their next poll finds the file drained. */
static void wake_drained(struct cgroup *cg)
{
	pthread_mutex_lock(&poll_lock);
	for (struct fs_handle *h = cg->pollers; h; h = h->poll_next)
		if ((h->file->flags & FF_PSI) && h->ph)
			fuse_lowlevel_notify_poll(h->ph);
	pthread_mutex_unlock(&poll_lock);
}

void notify_drained(struct cgroup *cg)
{
	struct nitem *it = calloc(1, sizeof(*it));
	bool held = it != NULL;

	if (held) {
		it->nf = -1;
		it->drained = true;
		cgroup_get(cg);
		it->cg = cg;
	}
	if (!nq_queue(it)) {
		if (held)
			cgroup_put(cg);
		/* a poll wake-up never waits on the kernel: here, rather than lost */
		wake_drained(cg);
	}
}

void notify_poll_attach(struct fs_handle *h)
{
	pthread_mutex_lock(&poll_lock);
	h->poll_prev = NULL;
	h->poll_next = h->cg->pollers;
	if (h->cg->pollers)
		h->cg->pollers->poll_prev = h;
	h->cg->pollers = h;
	h->on_poll_list = true;
	pthread_mutex_unlock(&poll_lock);
}

void notify_poll_detach(struct fs_handle *h)
{
	pthread_mutex_lock(&poll_lock);
	if (h->on_poll_list) {
		if (h->poll_prev)
			h->poll_prev->poll_next = h->poll_next;
		else
			h->cg->pollers = h->poll_next;
		if (h->poll_next)
			h->poll_next->poll_prev = h->poll_prev;
		h->on_poll_list = false;
	}
	if (h->ph) {
		fuse_pollhandle_destroy(h->ph);
		h->ph = NULL;
	}
	pthread_mutex_unlock(&poll_lock);
}

/* One poll handle per open file: the kernel's latest replaces the last. */
void notify_set_ph(struct fs_handle *h, struct fuse_pollhandle *ph)
{
	struct fuse_pollhandle *old;

	pthread_mutex_lock(&poll_lock);
	old = h->ph;
	h->ph = ph;
	pthread_mutex_unlock(&poll_lock);
	if (old)
		fuse_pollhandle_destroy(old);
}

void notify_poll_handle(struct fs_handle *h)
{
	pthread_mutex_lock(&poll_lock);
	if (h->ph)
		fuse_lowlevel_notify_poll(h->ph);
	pthread_mutex_unlock(&poll_lock);
}

/* ---- the notifier thread ---- */
/* IN_MODIFY for inotify: one byte written through the mount. */
static void self_write(struct cgroup *cg, int nf)
{
	static const char *const names[NR_NOTIFY_FILES] = {
		"cgroup.events", "memory.events", "memory.events.local", "memory.swap.events",
		"memory.pressure",
	};
	char path[PATH_MAX], rel[PATH_MAX];
	int fd, idx = fs_file_index(names[nf]);
	bool present;

	pthread_rwlock_rdlock(&fs_tree_lock);
	present = !cg->removed && idx >= 0 && fs_file_present(cg, (unsigned int)idx) &&
		  cgroup_path(cg, rel, sizeof(rel)) >= 0;
	pthread_rwlock_unlock(&fs_tree_lock);
	if (!present)
		return;
	if (snprintf(path, sizeof(path), "%s%s/%s", mnt, strcmp(rel, "/") ? rel : "",
		     names[nf]) >= (int)sizeof(path))
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;			/* removed meanwhile, or unmounting */
	if (write(fd, "\n", 1) < 0) {
		/* likewise */
	}
	close(fd);
}

static void deliver(struct nitem *n)
{
	struct cgroup *cg = n->cg;

	atomic_fetch_add(&cg->events[n->nf], 1);
	pthread_mutex_lock(&poll_lock);
	for (struct fs_handle *h = cg->pollers; h; h = h->poll_next)
		if (h->file->notify == n->nf && h->ph)
			fuse_lowlevel_notify_poll(h->ph);
	pthread_mutex_unlock(&poll_lock);
	/* PSI files wake their pollers only: no content notification */
	if (n->nf != NF_MEMORY_PRESSURE)
		self_write(cg, n->nf);
}

static void run_inval(struct nitem *n)
{
	for (size_t i = 0; i < n->ninval; i++) {
		struct fs_inval *v = &n->inval[i];

		/* -ENOENT: the kernel did not have it cached; nothing to do */
		if (v->child)
			fuse_lowlevel_notify_delete(fs_session, v->parent, v->child, v->name,
						    strlen(v->name));
		else
			fuse_lowlevel_notify_inval_entry(fs_session, v->parent, v->name,
							 strlen(v->name));
	}
	free(n->inval);
	if (n->req)
		fuse_reply_write(n->req, n->result);
}

static void *notifier_main(void *arg)
{
	(void)arg;
	atomic_store(&fs_notifier_tid, (pid_t)syscall(SYS_gettid));
	pthread_mutex_lock(&nq_lock);
	for (;;) {
		uint64_t now = fs_now_ns();
		struct nitem *n;

		/* delayed ones whose window ended are due now */
		while (delayed && delayed->due_ns <= now) {
			n = delayed;
			delayed = n->next;
			nq_push(n);
		}
		n = nq_head;
		if (n) {
			nq_head = n->next;
			if (!nq_head)
				nq_tail = NULL;
			if (n->nf >= 0) {
				struct cgroup *cg = n->cg;
				uint64_t next = cg->notified_ns[n->nf] + COALESCE_NS;

				if (cg->notified_ns[n->nf] && now < next) {
					struct nitem **pp = &delayed;

					n->due_ns = next;
					while (*pp && (*pp)->due_ns <= next)
						pp = &(*pp)->next;
					n->next = *pp;
					*pp = n;
					continue;
				}
				cg->notified_ns[n->nf] = now;
				cg->notify_pending[n->nf] = false;
			}
			pthread_mutex_unlock(&nq_lock);
			if (n->nf >= 0) {
				deliver(n);
				cgroup_put(n->cg);
			} else if (n->call) {
				n->call();
			} else if (n->drained) {
				wake_drained(n->cg);
				cgroup_put(n->cg);
			} else {
				run_inval(n);
			}
			free(n);
			pthread_mutex_lock(&nq_lock);
			continue;
		}
		if (notifier_stopping && !delayed)
			break;
		if (delayed) {
			struct timespec ts = {
				.tv_sec = (time_t)(delayed->due_ns / NSEC_PER_SEC),
				.tv_nsec = (long)(delayed->due_ns % NSEC_PER_SEC),
			};

			pthread_cond_timedwait(&nq_cond, &nq_lock, &ts);
		} else {
			pthread_cond_wait(&nq_cond, &nq_lock);
		}
	}
	pthread_mutex_unlock(&nq_lock);
	atomic_store(&fs_notifier_tid, 0);
	return NULL;
}

int notify_init(const char *mountpoint, struct fuse_session *se)
{
	pthread_condattr_t attr;

	mnt = strdup(mountpoint);
	if (!mnt)
		return -ENOMEM;
	fs_session = se;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&nq_cond, &attr);
	pthread_condattr_destroy(&attr);
	memcg_set_notify(fs_memcg_notify, NULL);
	return 0;
}

int notify_start(void)
{
	int err;

	notifier_stopping = false;
	notifier_running = true;
	err = pthread_create(&notifier, NULL, notifier_main, NULL);
	if (err) {
		notifier_running = false;
		return -err;
	}
	return 0;
}

/* Deliver what is queued (delays included), then stop; the loop still runs. */
void notify_stop(void)
{
	if (!notifier_running)
		return;
	pthread_mutex_lock(&nq_lock);
	notifier_stopping = true;
	pthread_cond_signal(&nq_cond);
	pthread_mutex_unlock(&nq_lock);
	pthread_join(notifier, NULL);
	/* under the lock: fs_notify() of other threads (real memory's) reads it */
	pthread_mutex_lock(&nq_lock);
	notifier_running = false;
	pthread_mutex_unlock(&nq_lock);
}

void notify_exit(void)
{
	memcg_set_notify(NULL, NULL);
	notify_stop();
	free(mnt);
	mnt = NULL;
}

/* ---- what vanished ---- */
void inval_add_files(struct fs_inval_list *l, const struct cgroup *cg, unsigned int flags)
{
	for (unsigned int i = 0; i < fs_nr_files; i++) {
		struct fs_inval *v;

		if (!(fs_files[i].flags & flags) || !fs_file_present(cg, i))
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 32;
			struct fs_inval *nv = realloc(l->v, cap * sizeof(*nv));

			if (!nv)
				return;		/* they stay cached until their timeout */
			l->v = nv;
			l->cap = cap;
		}
		v = &l->v[l->n++];
		v->parent = cgroup_nodeid(cg, 0);
		v->child = cgroup_nodeid(cg, i + 1);
		snprintf(v->name, sizeof(v->name), "%s", fs_files[i].name);
	}
}
