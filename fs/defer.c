/* SPDX-License-Identifier: MIT */
/*
 * defer.c - replies set aside (docs/design.md "FUSE mechanics": no handler ever
 * sleeps on a worker thread).
 *
 * A request that has to wait is registered here with a wait queue (woken
 * by whatever it waits for: trace events, ...), a deadline (a throttle
 * delay) or both, and an interrupt callback with libfuse, so that a signal
 * to the client (Ctrl-C, SIGKILL) ends the wait at once.  The defer thread
 * asks the waiters of woken queues whether they are ready and fires
 * deadlines; each request is completed exactly once, by whichever comes
 * first (ready, deadline, interrupt, shutdown), claimed under defer_lock.
 *
 * Work that runs long (defer_run) has a thread of its own instead: an
 * interrupt only asks it to stop, and the thread replies once it has; it
 * leaves the registry first, under defer_lock, so a late interrupt
 * callback never touches it after its reply.
 *
 * libfuse may call an interrupt callback after the request was answered
 * (it reads the callback before the reply clears it), so the callback gets
 * an id, never a pointer, and looks the request up: a completed one is
 * simply not found.
 *
 * Locking: defer_lock is a leaf; ready() runs under it and must not block;
 * complete() runs without it and may set the request aside again.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t defer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t defer_cond;
static pthread_cond_t runs_cond = PTHREAD_COND_INITIALIZER;
static unsigned long nr_runs;		/* defer_run threads, under defer_lock */
static pthread_t defer_thread;
static bool defer_running, defer_stopping;
static struct fs_waitq *woken;		/* queues to ask again */
static struct fs_defer *timers;		/* by deadline */
static uint64_t next_id = 1;
static struct fs_uid_counts waiting_uids;	/* defer_lock */
static uint32_t max_waiting_per_uid = UINT32_MAX;

/*
 * The registry of waiting requests by id, for the interrupt callback: a
 * hash whose nodes are small side structures, so that a request's own
 * links stay free for its wait queue or the timer list.
 */
#define REG_SIZE	1024
struct reg_node {
	struct fs_defer *d;
	struct reg_node *next;
};
static struct reg_node *reg[REG_SIZE];

static void reg_add(struct fs_defer *d)
{
	struct reg_node *n = malloc(sizeof(*n));

	if (!n)
		return;		/* not interruptible then: it still completes */
	n->d = d;
	n->next = reg[d->id % REG_SIZE];
	reg[d->id % REG_SIZE] = n;
}

static struct fs_defer *reg_find(uint64_t id)
{
	for (struct reg_node *n = reg[id % REG_SIZE]; n; n = n->next)
		if (n->d->id == id)
			return n->d;
	return NULL;
}

static struct fs_defer *reg_del(uint64_t id)
{
	struct reg_node **pp = &reg[id % REG_SIZE];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->d->id == id) {
			struct reg_node *n = *pp;
			struct fs_defer *d = n->d;

			*pp = n->next;
			free(n);
			return d;
		}
	}
	return NULL;
}

/* Take d out of everything; defer_lock held.  Returns false if already done. */
static bool unlink_locked(struct fs_defer *d)
{
	if (!d->linked)
		return false;
	d->linked = false;
	reg_del(d->id);
	if (d->wq) {
		if (d->prev)
			d->prev->next = d->next;
		else
			d->wq->head = d->next;
		if (d->next)
			d->next->prev = d->prev;
		atomic_fetch_sub(&d->wq->nr_waiting, 1);
	} else if (d->deadline_ns) {
		if (d->prev)
			d->prev->next = d->next;
		else
			timers = d->next;
		if (d->next)
			d->next->prev = d->prev;
	}
	d->next = d->prev = NULL;
	if (d->counted) {
		(void)fs_uid_count_add(&waiting_uids, d->uid, -1);
		d->counted = false;
	}
	return true;
}

unsigned int defer_set_max_waiting_per_uid(unsigned int max)
{
	if (!max)
		max = fs_host_share(1024, 1024, 1048576);
	pthread_mutex_lock(&defer_lock);
	max_waiting_per_uid = max;
	pthread_mutex_unlock(&defer_lock);
	return max;
}

static void defer_interrupt(fuse_req_t req, void *data)
{
	uint64_t id = (uint64_t)(uintptr_t)data;
	struct fs_defer *d;

	(void)req;
	pthread_mutex_lock(&defer_lock);
	d = reg_find(id);
	if (d && d->work) {
		/* its thread replies once it stopped */
		atomic_store(&d->stop, true);
		d = NULL;
	} else if (d && d->pinned) {
		/* its registration is still running: it completes it */
		d->interrupted = true;
		d = NULL;
	} else if (d && !unlink_locked(d)) {
		d = NULL;
	}
	pthread_mutex_unlock(&defer_lock);
	/* called by libfuse with the request's lock held: replying is allowed */
	if (d)
		d->complete(d, -EINTR);
}

/*
 * The start both kinds share: d registered under a fresh id and pinned,
 * defer_lock held on return.  While shutting down, d completes with
 * -ESHUTDOWN instead (lock dropped) and false is returned.
 */
static bool defer_register(struct fs_defer *d, struct fs_waitq *wq,
			   void (*work)(struct fs_defer *d), uint64_t *id)
{
	d->wq = wq;
	d->next = d->prev = NULL;
	d->interrupted = false;
	d->work = work;
	atomic_store(&d->stop, false);
	pthread_mutex_lock(&defer_lock);
	if (defer_stopping || !defer_running) {
		pthread_mutex_unlock(&defer_lock);
		d->complete(d, -ESHUTDOWN);
		return false;
	}
	/* a throttle's timer is the daemon's own delay: never refused */
	d->counted = false;
	if (wq || work) {
		const struct fuse_ctx *ctx = d->req ? fuse_req_ctx(d->req) : NULL;
		uid_t uid = ctx ? ctx->uid : 0;

		if (uid && (fs_uid_count(&waiting_uids, uid) >= max_waiting_per_uid ||
			    fs_uid_count_add(&waiting_uids, uid, 1))) {
			pthread_mutex_unlock(&defer_lock);
			d->complete(d, -EAGAIN);
			return false;
		}
		d->uid = uid;
		d->counted = uid != 0;
	}
	*id = d->id = next_id++;
	d->linked = true;
	d->pinned = true;
	reg_add(d);
	return true;
}

/*
 * Wait queues hold waiters in a list; timers (waiters without a queue) in
 * one list sorted by deadline.  A waiter with both a queue and a deadline
 * is not supported yet (nothing needs it).
 *
 * d stays pinned while the interrupt callback is registered: until then
 * nothing may complete it, since completing answers (and frees) the
 * request that fuse_req_interrupt_func() is handed.  An interrupt that
 * comes meanwhile is recorded and acted on when the pin is dropped.
 */
void defer_wait(struct fs_defer *d, struct fs_waitq *wq)
{
	fuse_req_t req = d->req;
	uint64_t id;
	bool interrupted;

	if (!defer_register(d, wq, NULL, &id))
		return;
	if (wq) {
		d->next = wq->head;
		if (wq->head)
			wq->head->prev = d;
		wq->head = d;
		atomic_fetch_add(&wq->nr_waiting, 1);
	} else if (d->deadline_ns) {
		struct fs_defer **pp = &timers, *prev = NULL;

		while (*pp && (*pp)->deadline_ns <= d->deadline_ns) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		d->next = *pp;
		d->prev = prev;
		if (*pp)
			(*pp)->prev = d;
		*pp = d;
	}
	pthread_mutex_unlock(&defer_lock);

	fuse_req_interrupt_func(req, defer_interrupt, (void *)(uintptr_t)id);

	pthread_mutex_lock(&defer_lock);
	d->pinned = false;
	interrupted = d->interrupted && unlink_locked(d);
	/* a wake-up between the caller's check and the link is not lost */
	if (!interrupted && wq && d->ready && d->ready(d) && !atomic_exchange(&wq->woken, true)) {
		wq->next_woken = woken;
		woken = wq;
	}
	pthread_cond_signal(&defer_cond);
	pthread_mutex_unlock(&defer_lock);
	if (interrupted)
		d->complete(d, -EINTR);
}

static void *defer_run_main(void *arg)
{
	struct fs_defer *d = arg;

	d->work(d);
	pthread_mutex_lock(&defer_lock);
	unlink_locked(d);
	pthread_mutex_unlock(&defer_lock);
	d->complete(d, 0);
	pthread_mutex_lock(&defer_lock);
	if (!--nr_runs)
		pthread_cond_broadcast(&runs_cond);
	pthread_mutex_unlock(&defer_lock);
	return NULL;
}

void defer_run(struct fs_defer *d, void (*work)(struct fs_defer *d))
{
	fuse_req_t req = d->req;
	pthread_attr_t attr;
	pthread_t thread;
	uint64_t id;
	int err;

	d->deadline_ns = 0;
	if (!defer_register(d, NULL, work, &id))
		return;
	nr_runs++;
	pthread_mutex_unlock(&defer_lock);

	fuse_req_interrupt_func(req, defer_interrupt, (void *)(uintptr_t)id);

	pthread_mutex_lock(&defer_lock);
	d->pinned = false;
	pthread_mutex_unlock(&defer_lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&thread, &attr, defer_run_main, d);
	pthread_attr_destroy(&attr);
	if (!err)
		return;
	pthread_mutex_lock(&defer_lock);
	unlink_locked(d);
	if (!--nr_runs)
		pthread_cond_broadcast(&runs_cond);
	pthread_mutex_unlock(&defer_lock);
	d->complete(d, -err);
}

void waitq_wake(struct fs_waitq *wq)
{
	if (!atomic_load_explicit(&wq->nr_waiting, memory_order_acquire))
		return;
	if (atomic_exchange(&wq->woken, true))
		return;
	pthread_mutex_lock(&defer_lock);
	wq->next_woken = woken;
	woken = wq;
	pthread_cond_signal(&defer_cond);
	pthread_mutex_unlock(&defer_lock);
}

struct done {
	struct fs_defer *d;
	int why;
};

/* Room for one more entry in *done (doubled when full); false: no memory. */
static bool done_room(struct done **done, size_t ndone, size_t *cap)
{
	struct done *n;

	if (ndone < *cap)
		return true;
	n = realloc(*done, (*cap ? *cap * 2 : 16) * sizeof(*n));
	if (!n)
		return false;
	*done = n;
	*cap = *cap ? *cap * 2 : 16;
	return true;
}

static void *defer_main(void *arg)
{
	struct done *done = NULL;
	size_t ndone = 0, cap = 0;

	(void)arg;
	pthread_mutex_lock(&defer_lock);
	while (!defer_stopping) {
		uint64_t now = fs_now_ns();

		ndone = 0;
		while (woken) {
			struct fs_waitq *wq = woken;

			woken = wq->next_woken;
			atomic_store(&wq->woken, false);
			for (struct fs_defer *d = wq->head, *next; d; d = next) {
				next = d->next;
				if (d->pinned || !d->ready || !d->ready(d))
					continue;
				if (!done_room(&done, ndone, &cap))
					break;
				unlink_locked(d);
				done[ndone++] = (struct done){ d, 0 };
			}
		}
		while (timers && timers->deadline_ns <= now && !timers->pinned) {
			struct fs_defer *d = timers;

			if (!done_room(&done, ndone, &cap))
				break;
			unlink_locked(d);
			done[ndone++] = (struct done){ d, -ETIMEDOUT };
		}
		if (ndone) {
			pthread_mutex_unlock(&defer_lock);
			for (size_t i = 0; i < ndone; i++)
				done[i].d->complete(done[i].d, done[i].why);
			pthread_mutex_lock(&defer_lock);
			continue;
		}
		if (woken)
			continue;
		if (timers) {
			struct timespec ts = {
				.tv_sec = (time_t)(timers->deadline_ns / NSEC_PER_SEC),
				.tv_nsec = (long)(timers->deadline_ns % NSEC_PER_SEC),
			};

			pthread_cond_timedwait(&defer_cond, &defer_lock, &ts);
		} else {
			pthread_cond_wait(&defer_cond, &defer_lock);
		}
	}
	pthread_mutex_unlock(&defer_lock);
	free(done);
	return NULL;
}

int defer_init(void)
{
	pthread_condattr_t attr;
	int err;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&defer_cond, &attr);
	pthread_condattr_destroy(&attr);
	defer_stopping = false;
	err = pthread_create(&defer_thread, NULL, defer_main, NULL);
	if (err)
		return -err;
	defer_running = true;
	return 0;
}

/*
 * Stop: every request still set aside completes with -ESHUTDOWN; running
 * work is asked to stop, and replies, before this returns (the session
 * still exists).
 */
void defer_exit(void)
{
	if (!defer_running)
		return;
	pthread_mutex_lock(&defer_lock);
	defer_stopping = true;
	pthread_cond_signal(&defer_cond);
	for (size_t i = 0; i < REG_SIZE; i++)
		for (struct reg_node *n = reg[i]; n; n = n->next)
			if (n->d->work)
				atomic_store(&n->d->stop, true);
	while (nr_runs)
		pthread_cond_wait(&runs_cond, &defer_lock);
	pthread_mutex_unlock(&defer_lock);
	pthread_join(defer_thread, NULL);
	for (;;) {
		struct fs_defer *d = NULL;

		pthread_mutex_lock(&defer_lock);
		for (size_t i = 0; i < REG_SIZE && !d; i++)
			if (reg[i])
				d = reg[i]->d;
		if (d)
			unlink_locked(d);
		pthread_mutex_unlock(&defer_lock);
		if (!d)
			break;
		d->complete(d, -ESHUTDOWN);
	}
	defer_running = false;
	pthread_mutex_lock(&defer_lock);
	fs_uid_counts_clear(&waiting_uids);
	pthread_mutex_unlock(&defer_lock);
}
