/* SPDX-License-Identifier: MIT */
/*
 * rootfiles.c - memcgfs's own files at the root (docs/design.md "What the mount
 * shows"): memcgfs.ctl (FUSE glue of fs/ctl.c's protocol), slabinfo,
 * trace_pipe (a blocking stream: a read with nothing pending is set aside
 * until an event arrives or the reader is interrupted) and tracing_on.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_LINE_MAX	512

static struct fs_waitq trace_wq;
/*
 * Open trace_pipe handles, for poll wake-ups (linked through poll_next:
 * trace_pipe is not a notifying file, so it is on no cgroup's list).
 */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fs_handle *trace_readers;
static _Atomic int trace_nr_readers;
static _Atomic bool trace_poll_pending;
/*
 * How far any reader has read: ftrace's trace_pipe consumes what it
 * reads, so a new reader starts after it (at the oldest event still held
 * when nobody read yet); readers open together see the same events.
 */
static _Atomic uint64_t trace_consumed;

/* ---- memcgfs.ctl ---- */
/*
 * The caller as ctl sees it: the requesting thread's process (its memcg
 * task), uid/gid of the request, and its cgroup for whoami.
 */
static int ctl_caller_get(const struct fs_caller *who, struct ctl_caller *c, struct proc **pp,
			  char *path, size_t pathlen)
{
	struct proc *p;
	int err = procs_caller(who, &p, c->comm);

	if (err)
		return err;
	c->pid = p->pid;
	c->tid = who->tid;
	c->uid = who->uid;
	c->gid = who->gid;
	c->task = p->task;
	pthread_rwlock_rdlock(&fs_tree_lock);
	pthread_rwlock_rdlock(&procs_lock);
	if (cgroup_path(p->cg, path, pathlen) < 0)
		snprintf(path, pathlen, "/");
	pthread_rwlock_unlock(&procs_lock);
	pthread_rwlock_unlock(&fs_tree_lock);
	c->cgroup = path;
	*pp = p;
	return 0;
}

/*
 * memory.high: the charges of a request that went over it are paid back
 * after the request, as the kernel does on return to user space: reclaim,
 * then a penalty delay (at most 2 s).  The reply waits out the delay set
 * aside, never on a worker; a signal ends the wait early, and the request's
 * own result is returned either way.
 */
struct ctl_done {
	struct fs_defer d;
	struct proc *p;
	int err;
	size_t size;			/* a write: bytes written */
	bool ioctl;
	void *out;			/* an ioctl: the results */
	size_t out_len;
};

static void ctl_reply(fuse_req_t req, struct proc *p, int err, size_t size, bool ioctl,
		      void *out, size_t out_len)
{
	memcg_task_active(p->task, false);
	proc_put(p);
	if (err)
		fuse_reply_err(req, -err);
	else if (ioctl)
		fuse_reply_ioctl(req, 0, out, out_len);
	else
		fuse_reply_write(req, size);
	free(out);
}

static void ctl_throttle_done(struct fs_defer *d, int why)
{
	struct ctl_done *c = d->data;

	(void)why;		/* the delay ended, or the client was interrupted */
	memcg_task_stall_end(c->p->task);
	ctl_reply(d->req, c->p, c->err, c->size, c->ioctl, c->out, c->out_len);
	free(c);
}

/* Answer a request of p, after its memory.high penalty if it has one. */
static void ctl_finish(fuse_req_t req, struct proc *p, int err, size_t size, bool ioctl,
		       void *out, size_t out_len)
{
	uint64_t delay = memcg_handle_over_high(p->task);
	struct ctl_done *c;

	if (!delay || !(c = calloc(1, sizeof(*c)))) {
		ctl_reply(req, p, err, size, ioctl, out, out_len);
		return;
	}
	*c = (struct ctl_done){ .p = p, .err = err, .size = size, .ioctl = ioctl, .out = out,
				.out_len = out_len };
	c->d.req = req;
	c->d.complete = ctl_throttle_done;
	c->d.data = c;
	c->d.deadline_ns = fs_now_ns() + delay;
	memcg_task_stall_begin(p->task);
	defer_wait(&c->d, NULL);
}

static void ctl_write(fuse_req_t req, struct fs_handle *h, const char *buf, size_t size)
{
	struct fs_caller who;
	struct ctl_caller c;
	struct proc *p;
	char path[4096];
	int err;

	fs_caller_init(&who, req);
	err = ctl_caller_get(&who, &c, &p, path, sizeof(path));
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	memcg_task_active(p->task, true);
	pthread_mutex_lock(&h->lock);
	err = ctl_request(h->ctl, &c, buf, size);
	pthread_mutex_unlock(&h->lock);
	ctl_finish(req, p, err, size, false, NULL, 0);
}

void rootfiles_ioctl(fuse_req_t req, struct fs_handle *h, unsigned int cmd,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct fs_caller who;
	struct ctl_caller c;
	struct proc *p;
	char path[4096];
	void *out = NULL;
	int err;

	if (h->file->type != FT_CTL) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	fs_caller_init(&who, req);
	err = ctl_caller_get(&who, &c, &p, path, sizeof(path));
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	if (out_bufsz) {
		out = calloc(1, out_bufsz);
		if (!out) {
			proc_put(p);
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	memcg_task_active(p->task, true);
	err = ctl_ioctl(&c, cmd, in_buf, in_bufsz, out, out_bufsz);
	ctl_finish(req, p, err, 0, true, out, out_bufsz);
}

/* ---- trace_pipe ---- */
/* Lines for at most size bytes; a line that does not fit waits for the next read. */
static size_t trace_fill(struct fs_handle *h, char *buf, size_t size)
{
	char line[TRACE_LINE_MAX];
	size_t n = 0;

	if (h->trace_rest_len) {
		size_t k = h->trace_rest_len < size ? h->trace_rest_len : size;

		memcpy(buf, h->trace_rest, k);
		memmove(h->trace_rest, h->trace_rest + k, h->trace_rest_len - k);
		h->trace_rest_len -= k;
		n = k;
		if (h->trace_rest_len)
			return n;
	}
	while (n < size) {
		uint64_t seen;

		int len = trace_read(&h->cursor, line, sizeof(line));

		if (len <= 0)
			break;
		seen = atomic_load(&trace_consumed);
		while (seen < h->cursor.seq &&
		       !atomic_compare_exchange_weak(&trace_consumed, &seen, h->cursor.seq))
			;
		if ((size_t)len >= sizeof(line))
			len = (int)strlen(line);
		if ((size_t)len <= size - n) {
			memcpy(buf + n, line, (size_t)len);
			n += (size_t)len;
			continue;
		}
		/* keep the whole line for later; give what fits now only if nothing else */
		if (!h->trace_rest)
			h->trace_rest = malloc(TRACE_LINE_MAX);
		if (!h->trace_rest)
			break;
		if (n) {
			memcpy(h->trace_rest, line, (size_t)len);
			h->trace_rest_len = (size_t)len;
		} else {
			memcpy(buf, line, size);
			memcpy(h->trace_rest, line + size, (size_t)len - size);
			h->trace_rest_len = (size_t)len - size;
			n = size;
		}
		break;
	}
	return n;
}

struct trace_wait {
	struct fs_defer d;
	struct fs_handle *h;
	size_t size;
};

static bool trace_ready(struct fs_defer *d)
{
	struct trace_wait *w = d->data;

	/* racy reads of the cursor: a spurious "ready" only retries */
	return trace_head() > w->h->cursor.seq || w->h->trace_rest_len;
}

static void trace_complete(struct fs_defer *d, int why)
{
	struct trace_wait *w = d->data;
	struct fs_handle *h = w->h;
	char *buf;
	size_t n;

	if (why) {
		/* interrupted by a signal, or shutting down */
		fuse_reply_err(d->req, EINTR);
		free(w);
		return;
	}
	buf = malloc(w->size);
	if (!buf) {
		fuse_reply_err(d->req, ENOMEM);
		free(w);
		return;
	}
	pthread_mutex_lock(&h->lock);
	n = trace_fill(h, buf, w->size);
	pthread_mutex_unlock(&h->lock);
	if (n) {
		fuse_reply_buf(d->req, buf, n);
		free(w);
	} else {
		/* another reader of the same file took it: wait again */
		defer_wait(&w->d, &trace_wq);
	}
	free(buf);
}

static void trace_pipe_read(fuse_req_t req, struct fs_handle *h, size_t size)
{
	struct trace_wait *w;
	char *buf = malloc(size ? size : 1);
	size_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&h->lock);
	n = trace_fill(h, buf, size);
	pthread_mutex_unlock(&h->lock);
	if (n || !size) {
		fuse_reply_buf(req, buf, n);
		free(buf);
		return;
	}
	free(buf);
	if (h->flags & O_NONBLOCK) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	w->h = h;
	w->size = size;
	w->d.req = req;
	w->d.ready = trace_ready;
	w->d.complete = trace_complete;
	w->d.data = w;
	defer_wait(&w->d, &trace_wq);
}

/* Wake poll(2)ers of trace_pipe: on the notifier thread, once per burst. */
static void trace_poll_wake(void)
{
	atomic_store(&trace_poll_pending, false);
	pthread_mutex_lock(&trace_lock);
	for (struct fs_handle *h = trace_readers; h; h = h->poll_next)
		notify_poll_handle(h);
	pthread_mutex_unlock(&trace_lock);
}

/*
 * Called by alloc after each event, on whatever thread recorded it (a
 * worker serving a charge): only flags and queues, never a system call
 * unless someone waits.
 */
static void trace_event(void *arg)
{
	(void)arg;
	waitq_wake(&trace_wq);
	if (atomic_load_explicit(&trace_nr_readers, memory_order_relaxed) &&
	    !atomic_exchange(&trace_poll_pending, true))
		notify_call(trace_poll_wake);
}

/* ---- open, read, write, poll ---- */
int rootfiles_open(struct fs_handle *h)
{
	switch (h->file->type) {
	case FT_CTL:
		h->ctl = ctl_session_new();
		return h->ctl ? 0 : -ENOMEM;
	case FT_TRACE_PIPE:
		trace_cursor_init(&h->cursor, false);
		if (h->cursor.seq < atomic_load(&trace_consumed))
			h->cursor.seq = atomic_load(&trace_consumed);
		pthread_mutex_lock(&trace_lock);
		h->poll_next = trace_readers;
		trace_readers = h;
		atomic_fetch_add(&trace_nr_readers, 1);
		pthread_mutex_unlock(&trace_lock);
		return 0;
	default:
		return 0;
	}
}

void rootfiles_release(struct fs_handle *h)
{
	switch (h->file->type) {
	case FT_CTL:
		ctl_session_free(h->ctl);
		h->ctl = NULL;
		break;
	case FT_TRACE_PIPE:
		pthread_mutex_lock(&trace_lock);
		for (struct fs_handle **pp = &trace_readers; *pp; pp = &(*pp)->poll_next) {
			if (*pp == h) {
				*pp = h->poll_next;
				atomic_fetch_sub(&trace_nr_readers, 1);
				break;
			}
		}
		pthread_mutex_unlock(&trace_lock);
		free(h->trace_rest);
		h->trace_rest = NULL;
		break;
	default:
		break;
	}
}

void rootfiles_read(fuse_req_t req, struct fs_handle *h, size_t size, off_t off)
{
	(void)off;
	if (h->file->type == FT_TRACE_PIPE) {
		trace_pipe_read(req, h, size);
	} else {
		/* memcgfs.ctl: the pending reply, where the last read stopped */
		char *buf = malloc(size ? size : 1);
		size_t n;

		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		pthread_mutex_lock(&h->lock);
		n = ctl_read(h->ctl, buf, size);
		pthread_mutex_unlock(&h->lock);
		fuse_reply_buf(req, buf, n);
		free(buf);
	}
}

void rootfiles_write(fuse_req_t req, struct fs_handle *h, const char *buf, size_t size)
{
	if (h->file->type == FT_CTL)
		ctl_write(req, h, buf, size);
	else
		fuse_reply_err(req, EINVAL);	/* trace_pipe has no write handler */
}

unsigned int rootfiles_poll(struct fs_handle *h)
{
	unsigned int ev = 0;

	if (h->file->type == FT_TRACE_PIPE) {
		pthread_mutex_lock(&h->lock);
		if (h->trace_rest_len || trace_head() > h->cursor.seq)
			ev |= POLLIN | POLLRDNORM;
		pthread_mutex_unlock(&h->lock);
		return ev;
	}
	return POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;
}

int rootfiles_init(void)
{
	trace_set_notify(trace_event, NULL);
	return 0;
}

void rootfiles_exit(void)
{
	trace_set_notify(NULL, NULL);
}
