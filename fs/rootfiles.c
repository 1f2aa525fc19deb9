/* SPDX-License-Identifier: MIT */
/*
 * rootfiles.c - memcgfs's own files at the root (docs/design.md "What the mount
 * shows"): memcgfs.ctl (FUSE glue of fs/ctl/'s protocol), slabinfo,
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
/* A ctl caller's cgroup, for whoami: where its process is at that moment. */
static int ctl_caller_path(const void *arg, char *buf, size_t len)
{
	const struct proc *p = arg;
	int err;

	pthread_rwlock_rdlock(&fs_tree_lock);
	pthread_rwlock_rdlock(&procs_lock);
	err = cgroup_path(p->cg, buf, len);
	pthread_rwlock_unlock(&procs_lock);
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/*
 * The caller as ctl sees it: the requesting thread's process (its memcg
 * task) and uid/gid of the request; its cgroup is looked up only for
 * whoami, the one request that names it.
 */
static int ctl_caller_get(const struct fs_caller *who, struct ctl_caller *c, struct proc **pp)
{
	struct proc *p;
	int err = procs_caller(who, &p, c->comm);

	if (err)
		return err;
	/*
	 * The kept name follows an exec when the process connector's event
	 * is read, which may be after the new program's first request: a
	 * trace names the thread as it is now (the kernel's current->comm).
	 */
	if (trace_is_on()) {
		char cpath[32], comm[32];

		snprintf(cpath, sizeof(cpath), "/proc/%d/comm", (int)who->tid);
		if (fs_read_file(cpath, comm, sizeof(comm)) > 0)
			snprintf(c->comm, sizeof(c->comm), "%s", strstrip(comm));
	}
	c->pid = p->pid;
	c->tid = who->tid;
	c->uid = who->uid;
	c->gid = who->gid;
	c->task = p->task;
	c->cgroup_of = ctl_caller_path;
	c->cgroup_arg = p;
	c->cgroup = NULL;
	*pp = p;
	return 0;
}

/*
 * memory.high: the charges of a request that went over it are paid back
 * after the request, as the kernel does on return to user space: reclaim,
 * then a penalty delay (at most 2 s), which only the charging process
 * waits out.  The wait is set aside, never on a worker; a signal ends it
 * early, and the request's own result is returned either way.
 *
 * Where the wait goes: the kernel serialises direct-I/O writes to one
 * FUSE inode under its inode lock, so a text write answered late would
 * hold up every writer of memcgfs.ctl in every cgroup.  A text write is
 * answered at once and its penalty stays owed by the task
 * (memcg_owe_over_high); the process pays it at its next call on
 * memcgfs.ctl that holds no such lock: the read of the reply, an ioctl
 * or the close (FLUSH).  An ioctl takes no inode lock and waits for its
 * own penalty.
 */
enum ctl_wait_kind { CTL_WAIT_IOCTL, CTL_WAIT_READ, CTL_WAIT_FLUSH };

struct ctl_done {
	struct fs_defer d;
	struct proc *p;
	enum ctl_wait_kind kind;
	int err;			/* an ioctl's result */
	void *out;			/* an ioctl: the results */
	size_t out_len;
	struct fs_handle *h;		/* a read: the session whose reply it reads */
	size_t size;			/* a read: the reader's buffer */
	off_t off;			/* a read: its file offset */
};

static void ctl_read_reply(fuse_req_t req, struct fs_handle *h, size_t size, off_t off)
{
	char *buf = malloc(size ? size : 1);
	size_t n = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (off >= 0 && (uint64_t)off >= h->ctl_base)
		n = ctl_read_at(h->ctl, (uint64_t)off - h->ctl_base, buf, size);
	pthread_mutex_unlock(&h->lock);
	fuse_reply_buf(req, buf, n);
	free(buf);
}

/* The one reply of a request of p; *c says which kind. */
static void ctl_reply(fuse_req_t req, const struct ctl_done *c)
{
	memcg_task_active(c->p->task, false);
	proc_put(c->p);
	switch (c->kind) {
	case CTL_WAIT_IOCTL:
		if (c->err)
			fuse_reply_err(req, -c->err);
		else
			fuse_reply_ioctl(req, 0, c->out, c->out_len);
		free(c->out);
		break;
	case CTL_WAIT_READ:
		/* the handle lives: the reader's read holds the file open */
		ctl_read_reply(req, c->h, c->size, c->off);
		break;
	case CTL_WAIT_FLUSH:
		fuse_reply_err(req, 0);
		break;
	}
}

static void ctl_throttle_done(struct fs_defer *d, int why)
{
	struct ctl_done *c = d->data;

	(void)why;		/* the delay ended, or the client was interrupted */
	memcg_task_stall_end(c->p->task);
	ctl_reply(d->req, c);
	free(c);
}

/* Answer a request of p, after the memory.high penalty p owes, if any. */
static void ctl_finish(fuse_req_t req, const struct ctl_done *how)
{
	uint64_t delay = memcg_handle_over_high(how->p->task);
	struct ctl_done *c;

	if (!delay || !(c = malloc(sizeof(*c)))) {
		ctl_reply(req, how);
		return;
	}
	*c = *how;
	memset(&c->d, 0, sizeof(c->d));
	c->d.req = req;
	c->d.complete = ctl_throttle_done;
	c->d.data = c;
	c->d.deadline_ns = fs_now_ns() + delay;
	memcg_task_stall_begin(c->p->task);
	defer_wait(&c->d, NULL);
}

static void ctl_write(fuse_req_t req, struct fs_handle *h, const char *buf, size_t size,
		      off_t off)
{
	struct fs_caller who;
	struct ctl_caller c;
	struct proc *p;
	int err;

	fs_caller_init(&who, req);
	err = ctl_caller_get(&who, &c, &p);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	memcg_task_active(p->task, true);
	pthread_mutex_lock(&h->lock);
	err = ctl_request(h->ctl, &c, buf, size);
	/* the reply is read from the file position the write leaves */
	h->ctl_base = (uint64_t)off + (err ? 0 : size);
	pthread_mutex_unlock(&h->lock);
	/* the reclaim now, the delay at the next read, ioctl or close */
	if (memcg_owe_over_high(p->task))
		atomic_store(&h->ctl_owing, true);
	memcg_task_active(p->task, false);
	proc_put(p);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_write(req, size);
}

/*
 * A read of the reply or a close: the caller pays what it owes first.  Only
 * a process that wrote through this handle can owe anything on it (a
 * sibling sharing the fd pays only its own); others are answered at once.
 */
static void ctl_pay(fuse_req_t req, struct fs_handle *h, enum ctl_wait_kind kind, size_t size,
		    off_t off)
{
	struct ctl_done c = { .kind = kind, .h = h, .size = size, .off = off };
	struct fs_caller who;

	if (atomic_load_explicit(&h->ctl_owing, memory_order_relaxed)) {
		fs_caller_init(&who, req);
		if (!procs_caller(&who, &c.p, NULL)) {
			memcg_task_active(c.p->task, true);
			ctl_finish(req, &c);
			return;
		}
	}
	if (kind == CTL_WAIT_READ)
		ctl_read_reply(req, h, size, off);
	else
		fuse_reply_err(req, 0);
}

void rootfiles_flush(fuse_req_t req, struct fs_handle *h)
{
	if (h->file->type == FT_CTL)
		ctl_pay(req, h, CTL_WAIT_FLUSH, 0, 0);
	else
		fuse_reply_err(req, 0);
}

void rootfiles_ioctl(fuse_req_t req, struct fs_handle *h, unsigned int cmd,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct fs_caller who;
	struct ctl_caller c;
	struct ctl_done done = { .kind = CTL_WAIT_IOCTL, .out_len = out_bufsz };

	if (h->file->type != FT_CTL) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	fs_caller_init(&who, req);
	done.err = ctl_caller_get(&who, &c, &done.p);
	if (done.err) {
		fuse_reply_err(req, -done.err);
		return;
	}
	if (out_bufsz) {
		done.out = calloc(1, out_bufsz);
		if (!done.out) {
			proc_put(done.p);
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	memcg_task_active(done.p->task, true);
	done.err = ctl_ioctl(&c, cmd, in_buf, in_bufsz, done.out, out_bufsz);
	ctl_finish(req, &done);
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
		/* interrupted by a signal, shutting down, or fs.max_waiting_per_uid (EAGAIN) */
		fuse_reply_err(d->req, why == -EAGAIN ? EAGAIN : EINTR);
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
	case FT_CTL: {
		int err;

		/* past fs.max_sessions_per_uid: EMFILE (not logged: a client could flood it) */
		h->ctl = ctl_session_open(h->uid, &err);
		return h->ctl ? 0 : err;
	}
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
	if (h->file->type == FT_TRACE_PIPE) {
		trace_pipe_read(req, h, size);
	} else {
		/*
		 * memcgfs.ctl is seekable so that a shell's read takes a
		 * buffer at a time (bash reads an unseekable file byte by
		 * byte) and seeks back over what it did not use: the reply
		 * is served by file offset, from where its request's write
		 * left the position.  Nothing before or after it.  The
		 * reader pays a memory.high delay it owes first.
		 */
		ctl_pay(req, h, CTL_WAIT_READ, size, off);
	}
}

void rootfiles_write(fuse_req_t req, struct fs_handle *h, const char *buf, size_t size,
		     off_t off)
{
	if (h->file->type == FT_CTL)
		ctl_write(req, h, buf, size, off);
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
