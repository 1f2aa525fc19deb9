/* SPDX-License-Identifier: MIT */
/*
 * client/libmemcgfs.c - sessions on memcgfs.ctl: finding the mount, the
 * text protocol (one write, one reply) and the batched ioctl.
 *
 * Locking: each struct memcgfs has one mutex, held for a whole request
 * (write and reply, or every ioctl of a memcgfs_batch() call), so the
 * replies of two threads never mix and a batch's chunks stay in order.
 * Nothing is shared between handles.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTL_FILE	"memcgfs.ctl"
#define MOUNT_TYPE	"fuse.memcgfs"

/* ---- finding the mount ---- */

static int copy_path(char *buf, size_t len, const char *s)
{
	size_t l = strlen(s);

	while (l > 1 && s[l - 1] == '/')	/* "/run/memcgfs/" is "/run/memcgfs" */
		l--;
	if (l + 1 > len)
		return -ENAMETOOLONG;
	memcpy(buf, s, l);
	buf[l] = '\0';
	return 0;
}

static int has_ctl(const char *dir)
{
	char p[MEMCGFS_PATH_MAX + sizeof(CTL_FILE) + 1];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", strcmp(dir, "/") ? dir : "", CTL_FILE) >=
	    (int)sizeof(p))
		return -ENAMETOOLONG;
	if (stat(p, &st))
		return -errno;
	return 0;
}

/*
 * The memcgfs mount that holds @path (the longest mount point that is a
 * prefix of its real path), or with @path NULL the first one whose
 * memcgfs.ctl answers.
 */
static int scan_mounts(const char *path, char *buf, size_t len)
{
	char real[PATH_MAX], line[4 * PATH_MAX];
	size_t best = 0;
	int first_err = -ENODEV;
	struct mntent me;
	FILE *f;

	if (path && !realpath(path, real))
		return -errno;
	f = setmntent("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (getmntent_r(f, &me, line, sizeof(line))) {
		size_t l = strlen(me.mnt_dir);
		int err;

		if (strcmp(me.mnt_type, MOUNT_TYPE))
			continue;
		if (!path) {
			err = has_ctl(me.mnt_dir);
			if (!err) {
				endmntent(f);
				return copy_path(buf, len, me.mnt_dir);
			}
			if (first_err == -ENODEV)
				first_err = err;
			continue;
		}
		if (strncmp(real, me.mnt_dir, l) || (real[l] && real[l] != '/' && l > 1))
			continue;
		if (l >= best && !copy_path(buf, len, me.mnt_dir))
			best = l ? l : 1;
	}
	endmntent(f);
	if (path)
		return best ? 0 : -ENOENT;
	return first_err;
}

MEMCGFS_API int memcgfs_find_mount(const char *hint, char *buf, size_t len)
{
	int err;

	if (!hint || !*hint) {
		hint = getenv("MEMCGFS_MOUNT");
		if (hint && !*hint)
			hint = NULL;
	}
	if (!hint)
		return scan_mounts(NULL, buf, len);
	err = has_ctl(hint);
	if (!err)
		return copy_path(buf, len, hint);
	if (err != -ENOENT)
		return err;
	/* a directory inside a mount: its mount */
	return scan_mounts(hint, buf, len);
}

MEMCGFS_API int memcgfs_open(const char *mount, struct memcgfs **out)
{
	char p[MEMCGFS_PATH_MAX + sizeof(CTL_FILE) + 1];
	struct memcgfs *m;
	int err;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = memcgfs_find_mount(mount, m->mount, sizeof(m->mount));
	if (err)
		goto out_free;
	snprintf(p, sizeof(p), "%s/%s", strcmp(m->mount, "/") ? m->mount : "", CTL_FILE);
	m->fd = open(p, O_RDWR | O_CLOEXEC);
	if (m->fd < 0) {
		err = -errno;
		goto out_free;
	}
	err = pthread_mutex_init(&m->lock, NULL);
	if (err) {
		err = -err;
		goto out_close;
	}
	*out = m;
	return 0;

out_close:
	close(m->fd);
out_free:
	free(m);
	return err;
}

MEMCGFS_API void memcgfs_close(struct memcgfs *m)
{
	if (!m)
		return;
	close(m->fd);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

MEMCGFS_API const char *memcgfs_mount_point(const struct memcgfs *m)
{
	return m->mount;
}

/* ---- the text protocol ---- */

/*
 * One request (m->request, @len bytes) and its reply into m->reply,
 * without the newline.  Returns 0 or the errno the write failed with.
 * The caller holds m->lock.
 */
static int __text_roundtrip(struct memcgfs *m, size_t len)
{
	size_t got = 0, cap = sizeof(m->reply) - 1;
	ssize_t w;
	int err = 0;

	w = write(m->fd, m->request, len);
	if (w < 0)
		err = -errno;
	else if ((size_t)w != len)
		err = -EIO;
	for (;;) {
		char sink[256];
		ssize_t r;

		if (got < cap)
			r = read(m->fd, m->reply + got, cap - got);
		else
			r = read(m->fd, sink, sizeof(sink));	/* too long: keep the start */
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			if (!err)
				err = -errno;
			break;
		}
		if (!r)
			break;
		if (got < cap) {
			got += (size_t)r;
			if (m->reply[got - 1] == '\n')
				break;
		} else if (sink[r - 1] == '\n') {
			break;
		}
	}
	while (got && m->reply[got - 1] == '\n')
		got--;
	m->reply[got] = '\0';
	if (!err && strncmp(m->reply, "ok", 2))
		err = -EPROTO;
	return err;
}

/* "error ERRNAME detail" -> detail */
static void reply_detail(const struct memcgfs *m, char *detail, size_t len)
{
	const char *d = "";

	if (!detail || !len)
		return;
	if (!strncmp(m->reply, "error ", 6)) {
		d = strchr(m->reply + 6, ' ');
		d = d ? d + 1 : "";
	}
	snprintf(detail, len, "%s", d);
}

/* The handles of an "ok H H ..." reply: exactly n of them. */
static int parse_handles(const char *r, unsigned int n, uint64_t *out)
{
	unsigned int i = 0;

	r += 2;
	while (*r == ' ') {
		char word[MEMCGFS_HANDLE_HEX + 1];
		size_t l = strcspn(++r, " ");

		if (i == n || l > MEMCGFS_HANDLE_HEX)
			return -EPROTO;
		memcpy(word, r, l);
		word[l] = '\0';
		if (memcgfs_handle_parse(word, &out[i++]))
			return -EPROTO;
		r += l;
	}
	return i == n && !*r ? 0 : -EPROTO;
}

static int parse_uint_field(const char *r, const char *key, unsigned int *out)
{
	const char *p = strstr(r, key);
	char *end;
	unsigned long v;

	if (!p)
		return -EPROTO;
	errno = 0;
	v = strtoul(p + strlen(key), &end, 10);
	if (errno || end == p + strlen(key) || v > UINT_MAX)
		return -EPROTO;
	*out = (unsigned int)v;
	return 0;
}

/* "ok pid=N cgroup=PATH cpu=N" (the path may hold spaces: cpu= is last) */
static int parse_whoami(const char *r, struct memcgfs_whoami *w)
{
	const char *cg = strstr(r, " cgroup="), *cpu;
	unsigned int pid, c;
	size_t l;

	if (!cg || parse_uint_field(r, " pid=", &pid))
		return -EPROTO;
	cg += 8;
	cpu = strrchr(cg, ' ');
	if (!cpu || strncmp(cpu, " cpu=", 5) || parse_uint_field(cpu, " cpu=", &c))
		return -EPROTO;
	l = (size_t)(cpu - cg);
	if (l >= sizeof(w->cgroup))
		return -ERANGE;
	w->pid = (pid_t)pid;
	w->cpu = (int)c;
	memcpy(w->cgroup, cg, l);
	w->cgroup[l] = '\0';
	return 0;
}

static int parse_cache_info(const char *r, struct memcgfs_ctl_cache_info *ci)
{
	struct memcgfs_ctl_cache_info v;

	if (parse_uint_field(r, " objsize=", &v.objsize) || parse_uint_field(r, " size=", &v.size) ||
	    parse_uint_field(r, " objperslab=", &v.objperslab) ||
	    parse_uint_field(r, " pagesperslab=", &v.pagesperslab))
		return -EPROTO;
	if (ci)
		*ci = v;
	return 0;
}

/* Append to m->request; false when it does not fit. */
static bool __attribute__((format(printf, 3, 4)))
req_add(struct memcgfs *m, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= MEMCGFS_REQUEST_MAX)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(m->request + *pos, MEMCGFS_REQUEST_MAX + 1 - *pos, fmt, ap);
	va_end(ap);
	if (n < 0 || *pos + (size_t)n > MEMCGFS_REQUEST_MAX - 1)	/* room for "\n" */
		return false;
	*pos += (size_t)n;
	return true;
}

/*
 * The text request of @op into m->request: its length, 0 when the text
 * protocol cannot carry it (a batch of one does), -EINVAL when it is bad.
 */
static ssize_t build_request(struct memcgfs *m, const struct memcgfs_op *op)
{
	char flags[512];
	size_t pos = 0;
	bool fits;

	if (libmemcgfs_batch_check(op))
		return -EINVAL;
	if (op->site && op->op != MEMCGFS_OP_KMALLOC && op->op != MEMCGFS_OP_KMEM_CACHE_ALLOC)
		return 0;
	fits = req_add(m, &pos, "%s", memcgfs_op_name(op->op));
	switch (op->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
		if (op->op == MEMCGFS_OP_KMALLOC)
			fits = fits && req_add(m, &pos, " %" PRIu64, op->size);
		else
			fits = fits && req_add(m, &pos, " %s", op->name);
		if (op->flags) {
			if (memcgfs_gfp_format(flags, sizeof(flags), op->flags) < 0)
				return -EINVAL;
			fits = fits && req_add(m, &pos, " %s", flags);
		}
		fits = fits && req_add(m, &pos, " x%u", op->count ? op->count : 1);
		if (op->site)
			fits = fits && req_add(m, &pos, " site=%s", op->site);
		break;
	case MEMCGFS_OP_ALLOC_PAGES: {
		const char *t = memcgfs_page_type_name(op->type);

		if (!t)
			return 0;	/* the daemon's answer, through the ioctl */
		fits = fits && req_add(m, &pos, " %s order=%u x%u", t, op->order,
				       op->count ? op->count : 1);
		break;
	}
	case MEMCGFS_OP_KMEM_CACHE_FREE:
		fits = fits && req_add(m, &pos, " %s", op->name);
		/* fall through */
	case MEMCGFS_OP_KFREE:
	case MEMCGFS_OP_FREE_PAGES:
	case MEMCGFS_OP_MARK_PAGE_ACCESSED:
		for (unsigned int i = 0; fits && i < op->count; i++)
			fits = req_add(m, &pos, " %" PRIx64, op->handles[i]);
		break;
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		fits = fits && req_add(m, &pos, " %s %" PRIu64, op->name, op->size);
		if (op->align)
			fits = fits && req_add(m, &pos, " align=%u", op->align);
		if (op->flags) {
			if (memcgfs_slab_flags_format(flags, sizeof(flags), op->flags) < 0)
				return -EINVAL;
			fits = fits && req_add(m, &pos, " %s", flags);
		}
		break;
	case MEMCGFS_OP_KMEM_CACHE_DESTROY:
		fits = fits && req_add(m, &pos, " %s", op->name);
		break;
	}
	if (!fits)
		return 0;
	m->request[pos++] = '\n';
	return (ssize_t)pos;
}

static int __batch(struct memcgfs *m, struct memcgfs_op *ops, size_t n);

MEMCGFS_API int memcgfs_exec(struct memcgfs *m, struct memcgfs_op *op, char *detail, size_t len)
{
	ssize_t l;
	int err;

	if (detail && len)
		detail[0] = '\0';
	pthread_mutex_lock(&m->lock);
	l = build_request(m, op);
	if (l < 0) {
		err = (int)l;
		if (detail)
			snprintf(detail, len, "invalid operation (count, name or site)");
		goto out_unlock;
	}
	if (!l) {
		op->error = 0;
		err = __batch(m, op, 1);
		goto out_unlock;
	}
	err = __text_roundtrip(m, (size_t)l);
	if (err) {
		reply_detail(m, detail, len);
		goto out_unlock;
	}
	switch (op->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		err = parse_handles(m->reply, op->count ? op->count : 1, op->handles);
		break;
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		err = parse_cache_info(m->reply, op->info);
		break;
	case MEMCGFS_OP_WHOAMI:
		err = parse_whoami(m->reply, op->whoami);
		break;
	}
	if (err && detail)
		snprintf(detail, len, "unexpected reply '%.80s'", m->reply);
out_unlock:
	pthread_mutex_unlock(&m->lock);
	op->error = err;
	return err;
}

MEMCGFS_API int memcgfs_request(struct memcgfs *m, const char *request, char *reply, size_t len)
{
	size_t l = strlen(request);
	int err;

	if (l > MEMCGFS_REQUEST_MAX)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	memcpy(m->request, request, l);
	err = __text_roundtrip(m, l);
	if (err == -EPROTO && !strncmp(m->reply, "error ", 6))
		err = -EIO;	/* an error reply to a write that succeeded: not memcgfs */
	if (reply && len)
		snprintf(reply, len, "%s", m->reply);
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* ---- typed single operations ---- */

MEMCGFS_API int memcgfs_kmalloc(struct memcgfs *m, uint64_t size, unsigned int gfp,
				unsigned int count, uint64_t *handles)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_KMALLOC, .size = size, .flags = gfp,
				 .count = count, .handles = handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_kfree(struct memcgfs *m, const uint64_t *handles, unsigned int count)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_KFREE, .count = count,
				 .handles = (uint64_t *)handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_kmem_cache_create(struct memcgfs *m, const char *name, uint64_t size,
					  unsigned int align, unsigned int flags,
					  struct memcgfs_ctl_cache_info *info)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_KMEM_CACHE_CREATE, .name = name, .size = size,
				 .align = align, .flags = flags, .info = info };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_kmem_cache_alloc(struct memcgfs *m, const char *name, unsigned int gfp,
					 unsigned int count, uint64_t *handles)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_KMEM_CACHE_ALLOC, .name = name, .flags = gfp,
				 .count = count, .handles = handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_kmem_cache_free(struct memcgfs *m, const char *name,
					const uint64_t *handles, unsigned int count)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_KMEM_CACHE_FREE, .name = name, .count = count,
				 .handles = (uint64_t *)handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_kmem_cache_destroy(struct memcgfs *m, const char *name)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_KMEM_CACHE_DESTROY, .name = name };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_alloc_pages(struct memcgfs *m, unsigned int type, unsigned int order,
				    unsigned int count, uint64_t *handles)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_ALLOC_PAGES, .type = type, .order = order,
				 .count = count, .handles = handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_free_pages(struct memcgfs *m, const uint64_t *handles,
				   unsigned int count)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_FREE_PAGES, .count = count,
				 .handles = (uint64_t *)handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_mark_page_accessed(struct memcgfs *m, const uint64_t *handles,
					   unsigned int count)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_MARK_PAGE_ACCESSED, .count = count,
				 .handles = (uint64_t *)handles };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_drain(struct memcgfs *m)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_DRAIN };

	return memcgfs_exec(m, &op, NULL, 0);
}

MEMCGFS_API int memcgfs_whoami(struct memcgfs *m, struct memcgfs_whoami *w)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_WHOAMI, .whoami = w };

	return memcgfs_exec(m, &op, NULL, 0);
}

/* ---- batches ---- */

/* The caller holds m->lock. */
static int __batch(struct memcgfs *m, struct memcgfs_op *ops, size_t n)
{
	size_t i = 0;
	int first = 0;

	while (i < n) {
		size_t taken, nr, size = libmemcgfs_batch_pack(ops + i, n - i, m->batch, &taken, &nr);

		if (nr && ioctl(m->fd, MEMCGFS_IOC_BATCH(size), m->batch) < 0) {
			int err = -errno;

			for (size_t j = i; j < i + taken; j++)
				if (!libmemcgfs_batch_check(&ops[j]))
					ops[j].error = err;
			for (size_t j = i + taken; j < n; j++)
				ops[j].error = -ECANCELED;
			break;
		}
		if (nr)
			libmemcgfs_batch_unpack(ops + i, taken, m->batch);
		i += taken;
	}
	for (i = 0; i < n && !first; i++)
		first = ops[i].error;
	return first;
}

MEMCGFS_API int memcgfs_batch(struct memcgfs *m, struct memcgfs_op *ops, size_t n)
{
	int err;

	for (size_t i = 0; i < n; i++)
		ops[i].error = 0;
	pthread_mutex_lock(&m->lock);
	err = __batch(m, ops, n);
	pthread_mutex_unlock(&m->lock);
	return err;
}
