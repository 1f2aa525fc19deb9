/* SPDX-License-Identifier: MIT */
/*
 * ops.c - the FUSE low-level operations: one table, each handler a router
 * in the manner of lxcfs.  A node id is a cgroup and a file index (tree.c);
 * directory operations go to tree.c, file I/O by file type to cgroup_files.c's
 * core handlers, memcg's memory files or rootfiles.c.  Each request gets
 * exactly one reply; errors travel as negative errno values and become
 * fuse_reply_err(req, -err) only here (or in a deferred completion).
 *
 * File contents are rendered once per open at offset 0 and served from
 * that snapshot (kernfs's seq_file; lxcfs's per-open cache); every file is
 * direct_io with size 0.  Writes are parsed whole (kernfs: at most a page,
 * E2BIG beyond; an empty write does nothing), the file position ignored.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/xattr.h>

/* Entries vanish only through us, and we invalidate them: cache a while. */
#define ENTRY_TIMEOUT	1.0
#define ATTR_TIMEOUT	1.0
#define DIRENT_OFF_FILES	3	/* 1 ".", 2 "..", then files */
#define DIRENT_OFF_CHILD	256	/* then children by id */
#define WRITE_MAX	4096		/* kernfs: PAGE_SIZE */

bool fs_default_permissions;

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Open files of the mount per non-root uid (fs.max_open_per_uid), under
 * handles_lock: a handle costs the daemon its struct and what it keeps
 * while open (a snapshot of the file, a PSI trigger), paid by nobody's
 * memory.max when the opener is in the root cgroup.  Root: no cap.
 */
static struct fs_uid_counts open_uids;
static uint32_t max_open_per_uid = UINT32_MAX;
/* what one open file may keep: its handle and a snapshot or trigger of up to 8 KiB */
#define OPEN_FILE_BYTES	(sizeof(struct fs_handle) + 8192)
static struct fs_handle *all_handles;
void fs_caller_init(struct fs_caller *who, fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	who->req = req;
	who->tid = ctx->pid;
	who->uid = ctx->uid;
	who->gid = ctx->gid;
}

/* ---- permissions, for a daemon without default_permissions ---- */
static bool in_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[64];
	int n = fuse_req_getgroups(req, 64, groups);

	for (int i = 0; i < n && i < 64; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* generic_permission(): mask of 4 (read), 2 (write), 1 (exec/search) */
static int fs_permission(fuse_req_t req, const struct cgroup *cg, unsigned int idx, int mask)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	uid_t uid;
	gid_t gid;
	mode_t mode, bits;

	if (fs_default_permissions)
		return 0;		/* the kernel checked */
	if (ctx->pid && ctx->pid == atomic_load(&fs_notifier_tid))
		return 0;
	cgroup_file_owner(cg, idx, &uid, &gid, &mode);
	if (ctx->uid == 0) {
		/* CAP_DAC_OVERRIDE: exec needs one x bit on files */
		if ((mask & 1) && idx && !(mode & 0111))
			return -EACCES;
		return 0;
	}
	if (ctx->uid == uid)
		bits = (mode >> 6) & 7;
	else if (ctx->gid == gid || in_group(req, gid))
		bits = (mode >> 3) & 7;
	else
		bits = mode & 7;
	return ((unsigned int)mask & ~bits) ? -EACCES : 0;
}

/* ---- entries and attributes ---- */
static void reply_entry(fuse_req_t req, struct cgroup *cg, unsigned int idx)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = cgroup_nodeid(cg, idx);
	e.attr_timeout = ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	cgroup_stat(cg, idx, &e.attr);
	/* the kernel's lookup count is one of the cgroup's references */
	cgroup_get(cg);
	if (fuse_reply_entry(req, &e))
		cgroup_put(cg);
}

/* The cgroup of directory node @parent; NULL once ENOTDIR is replied (a file). */
static struct cgroup *dir_cgroup(fuse_req_t req, fuse_ino_t parent)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(parent, &idx);

	if (idx) {
		fuse_reply_err(req, ENOTDIR);
		return NULL;
	}
	return cg;
}

/* May the caller add or remove entries of directory @pcg (write and search)? */
static int dir_may_change(fuse_req_t req, const struct cgroup *pcg)
{
	int err;

	pthread_rwlock_rdlock(&fs_tree_lock);
	err = fs_permission(req, pcg, 0, 3);
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

static void fs_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cgroup *cg = dir_cgroup(req, parent), *child;
	int fidx;

	if (!cg)
		return;
	pthread_rwlock_rdlock(&fs_tree_lock);
	if (cg->removed) {
		pthread_rwlock_unlock(&fs_tree_lock);
		fuse_reply_err(req, ENOENT);
		return;
	}
	fidx = fs_file_index(name);
	if (fidx >= 0 && fs_file_present(cg, (unsigned int)fidx)) {
		reply_entry(req, cg, (unsigned int)fidx + 1);
	} else if ((child = cgroup_child(cg, name))) {
		reply_entry(req, child, 0);
	} else {
		fuse_reply_err(req, ENOENT);
	}
	pthread_rwlock_unlock(&fs_tree_lock);
}

static void forget_one(fuse_ino_t ino, uint64_t nlookup)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);

	while (nlookup--)
		cgroup_put(cg);
}

static void fs_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(ino, nlookup);
	fuse_reply_none(req);
}

static void fs_ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		forget_one(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void fs_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	struct stat st;

	/*
	 * Every node the kernel knows has attributes, present or not: a name
	 * that vanished (-memory, rmdir) was invalidated, so only fstat() of an
	 * fd opened before still asks, and that works on kernfs too.
	 */
	(void)fi;
	pthread_rwlock_rdlock(&fs_tree_lock);
	cgroup_stat(cg, idx, &st);
	pthread_rwlock_unlock(&fs_tree_lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void fs_ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			  struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	struct stat st;
	int err = 0;

	(void)fi;
	if (!fs_default_permissions && ctx->uid != 0 &&
	    (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
		uid_t uid;
		gid_t gid;
		mode_t mode;

		/* setattr_prepare(): chown is root's; chmod the owner's */
		pthread_rwlock_rdlock(&fs_tree_lock);
		cgroup_file_owner(cg, idx, &uid, &gid, &mode);
		pthread_rwlock_unlock(&fs_tree_lock);
		if (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != uid) ||
		    ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != gid &&
		     (ctx->uid != uid || !(ctx->gid == attr->st_gid || in_group(req, attr->st_gid)))) ||
		    ((to_set & FUSE_SET_ATTR_MODE) && ctx->uid != uid))
			err = -EPERM;
	}
	if (!err)
		err = cgroup_setattr(cg, idx, attr, to_set);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	pthread_rwlock_rdlock(&fs_tree_lock);
	cgroup_stat(cg, idx, &st);
	pthread_rwlock_unlock(&fs_tree_lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void fs_ll_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	int err;

	pthread_rwlock_rdlock(&fs_tree_lock);
	err = fs_permission(req, cg, idx, mask & 7);
	pthread_rwlock_unlock(&fs_tree_lock);
	fuse_reply_err(req, -err);
}

/* ---- extended attributes (xattr.c keeps them) ---- */
/*
 * The node must be there (a removed cgroup, a vanished file: ENOENT) and,
 * for user.*, the caller may read it (get) or write it (set, remove), as
 * xattr_permission() asks inode_permission(); the kernel itself keeps
 * trusted.* to CAP_SYS_ADMIN.  fs_tree_lock held (read).
 */
static int xattr_node(fuse_req_t req, struct cgroup *cg, unsigned int idx, const char *name,
		      int mask)
{
	if (cg->removed || (idx && !fs_file_present(cg, idx - 1)))
		return -ENOENT;
	if (name && !strncmp(name, XATTR_USER_PREFIX, XATTR_USER_PREFIX_LEN))
		return fs_permission(req, cg, idx, mask);
	return 0;
}

/* setxattr, or removexattr (remove) */
static void xattr_write(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags, bool remove)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	struct proc *p = NULL;
	int err = 0;

	if (!remove) {
		/* the attribute is the setter's kernel memory (simple_xattr: accounted) */
		struct fs_caller who;

		fs_caller_init(&who, req);
		err = procs_caller(&who, &p, NULL);
		if (err) {
			fuse_reply_err(req, -err);
			return;
		}
	}
	pthread_rwlock_rdlock(&fs_tree_lock);
	err = xattr_node(req, cg, idx, name, 2);
	if (!err && remove) {
		err = fs_xattr_remove(cg, idx, name);
	} else if (!err) {
		memcg_set_current(p->task);
		err = fs_xattr_set(cg, idx, name, value, size, flags);
		memcg_set_current(NULL);
	}
	pthread_rwlock_unlock(&fs_tree_lock);
	if (p)
		proc_put(p);
	fuse_reply_err(req, -err);
}

static void fs_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			   size_t size, int flags)
{
	xattr_write(req, ino, name, value, size, flags, false);
}

static void fs_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	xattr_write(req, ino, name, NULL, 0, 0, true);
}

/*
 * getxattr (name), or listxattr (NULL): size 0 asks for the length.  The
 * value is copied under the locks and replied from the copy.
 */
static void xattr_read(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	char *buf = size ? malloc(size) : NULL;
	ssize_t n;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&fs_tree_lock);
	n = xattr_node(req, cg, idx, name, 4);
	/* simple_xattr_list(): trusted.* for CAP_SYS_ADMIN (root, here) */
	if (!n)
		n = name ? fs_xattr_get(cg, idx, name, buf, size) :
			   fs_xattr_list(cg, idx, fuse_req_ctx(req)->uid == 0, buf, size);
	pthread_rwlock_unlock(&fs_tree_lock);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void fs_ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	xattr_read(req, ino, name, size);
}

static void fs_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	xattr_read(req, ino, NULL, size);
}

/* ---- directories ---- */
static void fs_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	char *buf = malloc(size);
	size_t pos = 0;
	struct stat st;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&st, 0, sizeof(st));
	pthread_rwlock_rdlock(&fs_tree_lock);
#define ADD(name, ino_, mode_, next)						\
	do {									\
		size_t n_;							\
		st.st_ino = (ino_);						\
		st.st_mode = (mode_);						\
		n_ = fuse_add_direntry(req, buf + pos, size - pos, (name), &st, (next)); \
		if (n_ > size - pos)						\
			goto full;						\
		pos += n_;							\
	} while (0)
	if (off < 1)
		ADD(".", cgroup_ino(cg, 0), S_IFDIR, 1);
	if (off < 2)
		ADD("..", cg->parent ? cgroup_ino(cg->parent, 0) : cgroup_ino(cg, 0), S_IFDIR, 2);
	if (!cg->removed) {
		for (unsigned int i = 0; i < fs_nr_files; i++) {
			off_t next = DIRENT_OFF_FILES + i + 1;

			if (off >= next || !fs_file_present(cg, i))
				continue;
			ADD(fs_files[i].name, cgroup_ino(cg, i + 1), S_IFREG, next);
		}
		for (struct cgroup *c = cg->first_child; c; c = c->next_sibling) {
			off_t next = DIRENT_OFF_CHILD + (off_t)c->id;

			if (off >= next)
				continue;
			ADD(c->name, cgroup_ino(c, 0), S_IFDIR, next);
		}
	}
#undef ADD
full:
	pthread_rwlock_unlock(&fs_tree_lock);
	fuse_reply_buf(req, buf, pos);
	free(buf);
}

static void fs_ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct cgroup *pcg = dir_cgroup(req, parent), *cg;
	int err;

	if (!pcg)
		return;
	err = dir_may_change(req, pcg);
	if (!err)
		err = cgroup_mkdir(pcg, name, mode, ctx->uid, ctx->gid, &cg);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	pthread_rwlock_rdlock(&fs_tree_lock);
	reply_entry(req, cg, 0);
	pthread_rwlock_unlock(&fs_tree_lock);
}

static void fs_ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cgroup *pcg = dir_cgroup(req, parent);
	int err;

	if (!pcg)
		return;
	err = dir_may_change(req, pcg);
	if (!err) {
		procs_sync();
		err = cgroup_rmdir(pcg, name);
	}
	fuse_reply_err(req, -err);
}

/* kernfs has no create, mknod, link, symlink, unlink or (cgroup2) rename */
static void fs_ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			 struct fuse_file_info *fi)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)fi;
	fuse_reply_err(req, EACCES);
}

static void fs_ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	fuse_reply_err(req, EPERM);
}

static void fs_ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	fuse_reply_err(req, EPERM);
}

static void fs_ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	fuse_reply_err(req, EPERM);
}

static void fs_ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	fuse_reply_err(req, EPERM);
}

static void fs_ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			 fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	(void)parent;
	(void)name;
	(void)newparent;
	(void)newname;
	(void)flags;
	fuse_reply_err(req, EPERM);
}

/* ---- files ---- */
unsigned int ops_set_max_open_per_uid(unsigned int max)
{
	if (!max)	/* 1% of the host's RAM in open files, at least 4096 */
		max = fs_host_share(OPEN_FILE_BYTES, 4096, 1048576);
	pthread_mutex_lock(&handles_lock);
	max_open_per_uid = max;
	pthread_mutex_unlock(&handles_lock);
	return max;
}

/* Counts one more open file of uid: -EMFILE past fs.max_open_per_uid. */
static int open_count_get(uid_t uid)
{
	int err = 0;

	if (!uid)
		return 0;
	pthread_mutex_lock(&handles_lock);
	if (fs_uid_count(&open_uids, uid) >= max_open_per_uid)
		err = -EMFILE;
	else
		err = fs_uid_count_add(&open_uids, uid, 1);
	pthread_mutex_unlock(&handles_lock);
	return err;
}

static void open_count_put(uid_t uid)
{
	if (!uid)
		return;
	pthread_mutex_lock(&handles_lock);
	(void)fs_uid_count_add(&open_uids, uid, -1);
	pthread_mutex_unlock(&handles_lock);
}

static void handle_link(struct fs_handle *h)
{
	pthread_mutex_lock(&handles_lock);
	h->all_next = all_handles;
	if (all_handles)
		all_handles->all_prev = h;
	all_handles = h;
	pthread_mutex_unlock(&handles_lock);
}

static void handle_free(struct fs_handle *h)
{
	pthread_mutex_lock(&handles_lock);
	if (h->all_prev)
		h->all_prev->all_next = h->all_next;
	else
		all_handles = h->all_next;
	if (h->all_next)
		h->all_next->all_prev = h->all_prev;
	pthread_mutex_unlock(&handles_lock);
	if (notify_keeps_poller(h->file))
		notify_poll_detach(h);
	else
		notify_set_ph(h, NULL);
	if (h->mo)
		memcg_file_release(h->mo);
	if (h->file->type != FT_CORE && h->file->type != FT_MEMORY)
		rootfiles_release(h);
	sb_free(&h->snap);
	free(h->groups);
	pthread_mutex_destroy(&h->lock);
	cgroup_put(h->cg);
	open_count_put(h->uid);
	free(h);
}

static void fs_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	unsigned int idx;
	struct cgroup *cg = nodeid_cgroup(ino, &idx);
	const struct fs_file *f;
	struct fs_handle *h;
	int err = 0, acc;

	if (!idx) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	f = &fs_files[idx - 1];
	h = calloc(1, sizeof(*h));
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->cg = cg;
	h->idx = idx - 1;
	h->file = f;
	h->flags = fi->flags;
	acc = fi->flags & O_ACCMODE;

	pthread_rwlock_rdlock(&fs_tree_lock);
	if (cg->removed)
		err = -ENODEV;
	else if (!fs_file_present(cg, idx - 1))
		err = -ENOENT;
	else
		err = fs_permission(req, cg, idx, (acc != O_WRONLY ? 4 : 0) | (acc != O_RDONLY ? 2 : 0));
	h->psi_drains = cg->psi_drains;
	if (!err && f->type == FT_MEMORY) {
		h->memcg = fs_file_memcg(cg, f);
		err = memcg_file_open(f->mf, h->memcg, &h->mo);
		/* PSI triggers: any window for CAP_SYS_RESOURCE (root) */
		if (!err)
			memcg_file_set_privileged(h->mo, fuse_req_ctx(req)->uid == 0);
	}
	/* past fs.max_open_per_uid: EMFILE (not logged: a client could flood it) */
	if (!err)
		err = open_count_get(fuse_req_ctx(req)->uid);
	if (!err)
		cgroup_get(cg);
	else if (h->mo)
		memcg_file_release(h->mo);
	pthread_rwlock_unlock(&fs_tree_lock);
	if (err) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		fuse_reply_err(req, -err);
		return;
	}
	/*
	 * The opener's credentials, for cgroup.procs (the kernel checks the
	 * opener's, not the writer's) and PSI triggers; the supplementary
	 * groups cost a /proc read, so only cgroup.procs and cgroup.threads.
	 * (h->uid is what the open was counted under: released with it.)
	 */
	h->uid = fuse_req_ctx(req)->uid;
	h->gid = fuse_req_ctx(req)->gid;
	if (f->flags & FF_PROCS) {
		gid_t groups[256];
		int n = fuse_req_getgroups(req, 256, groups);

		if (n > 256)
			n = 256;
		if (n > 0 && (h->groups = malloc((size_t)n * sizeof(gid_t)))) {
			memcpy(h->groups, groups, (size_t)n * sizeof(gid_t));
			h->ngroups = n;
		}
	}
	if (f->type != FT_CORE && f->type != FT_MEMORY) {
		err = rootfiles_open(h);
		if (err) {
			if (h->mo)
				memcg_file_release(h->mo);
			free(h->groups);
			pthread_mutex_destroy(&h->lock);
			cgroup_put(cg);
			open_count_put(h->uid);
			free(h);
			fuse_reply_err(req, -err);
			return;
		}
	}
	if (notify_keeps_poller(f))
		notify_poll_attach(h);
	handle_link(h);
	fi->fh = (uintptr_t)h;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	/* memcgfs.ctl: a close pays a memory.high delay its writes left (rootfiles.c) */
	fi->noflush = f->type != FT_CTL;
	fi->nonseekable = !!(f->flags & FF_STREAM);
	if (fuse_reply_open(req, fi))
		handle_free(h);
}

void ops_exit(void)
{
	while (all_handles)
		handle_free(all_handles);
}

static void fs_ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	rootfiles_flush(req, (struct fs_handle *)(uintptr_t)fi->fh);
}

static void fs_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	handle_free((struct fs_handle *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/*
 * The cgroup was removed, the memcg a memory.* file is served by went
 * (-memory, threaded) or the PSI files are hidden (cgroup.pressure 0):
 * ENODEV, as a deactivated kernfs node, and poll says DEFAULT_POLLMASK|
 * EPOLLERR|EPOLLPRI.  memory.pressure is the cgroup's, not its memcg's: it
 * stays through -memory.  (cgroup.pressure 1 shows the same node again,
 * as kernfs_show() reactivates it: the fd works again, its trigger gone.)
 * fs_tree_lock held.
 */
static bool handle_stale(const struct fs_handle *h)
{
	if (h->cg->removed)
		return true;
	if ((h->file->flags & FF_PSI) && !h->cg->psi)
		return true;
	return (h->file->flags & FF_MEMCG) && fs_file_memcg(h->cg, h->file) != h->memcg;
}

/*
 * A PSI file drained since this fd last looked (rmdir, cgroup.pressure 0)
 * has lost its trigger: the drain's cgroup_pressure_release() destroyed it.
 * Done here, at the fd's next request, as the drain cannot take the
 * handles' locks.  h->lock and fs_tree_lock held.
 */
static void psi_drain_check(struct fs_handle *h)
{
	if (h->psi_drains == h->cg->psi_drains)
		return;
	h->psi_drains = h->cg->psi_drains;
	if (h->mo)
		(void)memcg_file_drop_trigger(h->mo);
	h->psi_trigger = false;
}

/* Before a PSI trigger is armed: h->lock held; 0 or -ENODEV. */
static int psi_write_check(struct fs_handle *h)
{
	int err;

	pthread_rwlock_rdlock(&fs_tree_lock);
	err = handle_stale(h) ? -ENODEV : 0;
	psi_drain_check(h);
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/* Render the whole file into the handle's snapshot.  Tree lock held. */
static int render(struct fs_handle *h)
{
	const struct fs_file *f = h->file;
	int err = 0;

	sb_reset(&h->snap);
	switch (f->type) {
	case FT_CORE:
		if (!f->show)
			return -EINVAL;
		err = f->show(h, &h->snap);
		break;
	case FT_MEMORY:
	case FT_SLABINFO:
		for (size_t want = 4096;;) {
			long n;

			if (sb_reserve(&h->snap, want))
				return -ENOMEM;
			if (f->type == FT_MEMORY)
				n = memcg_file_read(h->mo, h->snap.buf, h->snap.cap);
			else
				n = (long)slabinfo_format(h->snap.buf, h->snap.cap);
			if (n < 0)
				return (int)n;
			if ((size_t)n < h->snap.cap) {
				h->snap.len = (size_t)n;
				break;
			}
			want = (size_t)n + 1;
		}
		break;
	case FT_TRACING_ON:
		err = sb_printf(&h->snap, "%d\n", trace_is_on() ? 1 : 0);
		break;
	case FT_CHECK: {
		/*
		 * alloc_check() locks the machine whole; memcg_check() wants no
		 * charge in flight: a busy mount may show a passing mismatch,
		 * a quiet one none.  The daemon's own frees behind RCU (after
		 * an rmdir) uncharge too: they run first.
		 */
		char msg[512];

		memcg_wait_frees();
		if (alloc_check(msg, sizeof(msg)))
			err = sb_printf(&h->snap, "alloc: %s\n", msg);
		else if (memcg_check(msg, sizeof(msg)))
			err = sb_printf(&h->snap, "memcg: %s\n", msg);
		else if (ctl_check(msg, sizeof(msg)))
			err = sb_printf(&h->snap, "ctl: %s\n", msg);
		else
			err = sb_printf(&h->snap, "ok\n");
		break;
	}
	case FT_ARENA: {
		struct alloc_stats st;

		alloc_stats(&st);
		err = sb_printf(&h->snap,
				"pages_total %lu\npages_free %lu\npages_slab %lu\n"
				"pages_large_kmalloc %lu\npages_alloc %lu\nnr_caches %lu\n",
				st.pages_total, st.pages_free, st.pages_slab,
				st.pages_large_kmalloc, st.pages_alloc, st.nr_caches);
		break;
	}
	default:
		return -EINVAL;
	}
	if (err)
		return err;
	h->have_snap = true;
	/* kernfs_seq_show(): this fd has seen the file's events so far */
	h->ev_seen = f->notify >= 0 ? atomic_load(&h->cg->events[f->notify]) : 1;
	return 0;
}

static void read_reply(fuse_req_t req, struct fs_handle *h, size_t size, off_t off);

/* A read that waits for real memory's enforcement round (realmem.c). */
struct read_wait {
	struct fs_defer d;
	struct fs_handle *h;
	size_t size;
	uint64_t round;
};

static bool read_wait_ready(struct fs_defer *d)
{
	return realmem_enforced(((struct read_wait *)d->data)->round);
}

static void read_wait_done(struct fs_defer *d, int why)
{
	struct read_wait *w = d->data;

	if (why == -EINTR || why == -ESHUTDOWN)
		fuse_reply_err(d->req, -why);
	else
		read_reply(d->req, w->h, w->size, 0);
	free(w);
}

static void fs_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	const struct fs_file *f = h->file;

	(void)ino;
	if (f->type == FT_CTL || f->type == FT_TRACE_PIPE) {
		rootfiles_read(req, h, size, off);
		return;
	}
	/* listings and populated count what already exited or forked */
	if (off == 0 && (!strcmp(f->name, "cgroup.procs") || !strcmp(f->name, "cgroup.threads") ||
			 !strcmp(f->name, "cgroup.events")))
		procs_sync();
	/*
	 * Real memory: the members are sampled before usage is shown; a memcg
	 * that went over its max waits for the reclaim and OOM the charge
	 * would have done (on realmem's thread, not this worker).
	 */
	if (off == 0 && f->type == FT_MEMORY && realmem_on() && memcg_file_shows_usage(f->mf)) {
		uint64_t round = realmem_refresh(h->cg);
		struct read_wait *w;

		if (round && (w = calloc(1, sizeof(*w)))) {
			*w = (struct read_wait){ .h = h, .size = size, .round = round };
			w->d.req = req;
			w->d.ready = read_wait_ready;
			w->d.complete = read_wait_done;
			w->d.data = w;
			defer_wait(&w->d, realmem_waitq());
			return;
		}
	}
	read_reply(req, h, size, off);
}

/* Render (at offset 0) and answer a read of a rendered file. */
static void read_reply(fuse_req_t req, struct fs_handle *h, size_t size, off_t off)
{
	char *out = NULL;
	size_t n = 0;
	int err = 0;

	pthread_mutex_lock(&h->lock);
	pthread_rwlock_rdlock(&fs_tree_lock);
	if (h->file->flags & FF_PSI)
		psi_drain_check(h);
	if (handle_stale(h))
		err = -ENODEV;
	else if (off == 0 || !h->have_snap)
		err = render(h);
	pthread_rwlock_unlock(&fs_tree_lock);
	if (err) {
		pthread_mutex_unlock(&h->lock);
		fuse_reply_err(req, -err);
		return;
	}
	/*
	 * Reply from a copy, after the lock: once the reader has its bytes it
	 * may close the file, and its RELEASE may free h while this thread is
	 * still returning from the reply.
	 */
	if ((size_t)off < h->snap.len) {
		n = h->snap.len - (size_t)off < size ? h->snap.len - (size_t)off : size;
		out = malloc(n);
		if (out)
			memcpy(out, h->snap.buf + off, n);
	}
	pthread_mutex_unlock(&h->lock);
	if (n && !out)
		fuse_reply_err(req, ENOMEM);
	else
		fuse_reply_buf(req, out, n);
	free(out);
}

static int write_core(struct fs_handle *h, const struct fs_caller *who, char *buf, size_t size)
{
	const struct fs_file *f = h->file;
	int err;

	if (!f->write)
		return -EINVAL;
	if (f->flags & FF_PSI) {
		pthread_mutex_lock(&h->lock);
		err = psi_write_check(h);
		if (!err)
			err = f->write(h, who, buf, size);
		pthread_mutex_unlock(&h->lock);
		return err;
	}
	return f->write(h, who, buf, size);
}

/*
 * memory.reclaim runs as long as reclaim takes: set aside on a thread of
 * its own (defer_run), never on a worker, and ended by a signal to the
 * writer (-EINTR between batches, as the kernel's memory_reclaim()).  Its
 * frees are traced under the writer.
 */
struct reclaim_job {
	struct fs_defer d;
	struct fs_handle *h;		/* held open by the writer's write(2) */
	size_t size;
	int result;
	struct alloc_ctx ctx;
	char buf[];
};

static void reclaim_work(struct fs_defer *d)
{
	struct reclaim_job *j = d->data;
	struct fs_handle *h = j->h;

	alloc_set_ctx(&j->ctx);
	memcg_set_signal(&d->stop);
	pthread_mutex_lock(&h->lock);
	j->result = memcg_file_write(h->mo, j->buf, j->size, h->flags & O_NONBLOCK);
	pthread_mutex_unlock(&h->lock);
	memcg_set_signal(NULL);
	alloc_set_ctx(NULL);
}

static void reclaim_done(struct fs_defer *d, int why)
{
	struct reclaim_job *j = d->data;
	int err = why ? why : j->result;

	if (err)
		fuse_reply_err(d->req, -err);
	else
		fuse_reply_write(d->req, j->size);
	free(j);
}

static void reclaim_write(fuse_req_t req, struct fs_handle *h, const struct fs_caller *who,
			  const char *buf, size_t size)
{
	struct reclaim_job *j = calloc(1, sizeof(*j) + size + 1);
	char path[64], comm[32];
	ssize_t n;

	if (!j) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	j->h = h;
	j->size = size;
	memcpy(j->buf, buf, size);
	j->ctx.pid = who->tid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)who->tid);
	n = who->tid ? fs_read_file(path, comm, sizeof(comm)) : -ESRCH;
	snprintf(j->ctx.comm, sizeof(j->ctx.comm), "%s", n > 0 ? strstrip(comm) : "<...>");
	j->d.req = req;
	j->d.data = j;
	j->d.complete = reclaim_done;
	defer_run(&j->d, reclaim_work);
}

static void fs_ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	const struct fs_file *f = h->file;
	struct fs_caller who;
	char tmp[WRITE_MAX + 1];
	int err;

	(void)ino;
	fs_caller_init(&who, req);
	/* the notifier's self-write raises IN_MODIFY and changes nothing */
	if (who.tid && who.tid == atomic_load(&fs_notifier_tid)) {
		fuse_reply_write(req, size);
		return;
	}
	if (f->type == FT_CTL || f->type == FT_TRACE_PIPE) {
		rootfiles_write(req, h, buf, size, off);
		return;
	}
	if (size > WRITE_MAX) {
		fuse_reply_err(req, E2BIG);
		return;
	}
	if (!size) {
		fuse_reply_write(req, 0);
		return;
	}
	memcpy(tmp, buf, size);
	tmp[size] = '\0';
	pthread_rwlock_rdlock(&fs_tree_lock);
	err = handle_stale(h) ? -ENODEV : 0;
	pthread_rwlock_unlock(&fs_tree_lock);
	if (!err) {
		switch (f->type) {
		case FT_CORE:
			err = write_core(h, &who, tmp, size);
			break;
		case FT_MEMORY:
			if (!strcmp(memcg_file_name(f->mf), "memory.reclaim")) {
				reclaim_write(req, h, &who, buf, size);
				return;
			}
			pthread_mutex_lock(&h->lock);
			if (f->flags & FF_PSI)
				err = psi_write_check(h);
			if (!err)
				err = memcg_file_write(h->mo, buf, size, h->flags & O_NONBLOCK);
			if (!err && (f->flags & FF_PSI))
				h->psi_trigger = true;
			pthread_mutex_unlock(&h->lock);
			break;
		case FT_ARENA:
			/* the kernel's /sys/kernel/slab/<cache>/shrink, for every cache */
			if (strcmp(strstrip(tmp), "shrink"))
				err = -EINVAL;
			else
				kmem_cache_shrink_all();
			break;
		case FT_TRACING_ON: {
			char *s = strstrip(tmp), *end;
			unsigned long v = strtoul(s, &end, 10);

			if (!*s || *end || *s == '-')
				err = -EINVAL;
			else
				trace_set_on(v != 0);
			break;
		}
		default:
			err = -EINVAL;
			break;
		}
	}
	if (err == FS_REPLIED)
		return;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_write(req, size);
}

static void fs_ll_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
			struct fuse_file_info *fi, unsigned flags, const void *in_buf,
			size_t in_bufsz, size_t out_bufsz)
{
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;

	(void)ino;
	(void)arg;
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	rootfiles_ioctl(req, h, cmd, in_buf, in_bufsz, out_bufsz);
}

/*
 * kernfs_fop_poll(): a deactivated node (handle_stale) is DEFAULT_POLLMASK|
 * EPOLLERR|EPOLLPRI; else the PSI files' psi_trigger_poll() or
 * kernfs_generic_poll().  The poll handle is kept before the state is
 * looked at: a change after the look (a notification, a trigger firing, a
 * drain) finds it and wakes the poller, one before is seen here.
 */
static void fs_ll_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		       struct fuse_pollhandle *ph)
{
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	const struct fs_file *f = h->file;
	unsigned int ev = POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;	/* DEFAULT_POLLMASK */
	bool stale;

	(void)ino;
	if (f->type == FT_TRACE_PIPE || f->type == FT_CTL) {
		ev = rootfiles_poll(h);
		if (f->type == FT_TRACE_PIPE && ph) {
			notify_set_ph(h, ph);
			ph = NULL;
		}
		goto reply;
	}
	if (ph && notify_keeps_poller(f)) {
		notify_set_ph(h, ph);
		ph = NULL;
	}
	if (f->flags & FF_PSI) {
		/* psi_trigger_poll(): no trigger on this fd is an error */
		pthread_mutex_lock(&h->lock);
		pthread_rwlock_rdlock(&fs_tree_lock);
		psi_drain_check(h);
		stale = handle_stale(h);
		pthread_rwlock_unlock(&fs_tree_lock);
		if (stale || !h->psi_trigger)
			ev |= POLLERR | POLLPRI;
		else if (f->type == FT_MEMORY && memcg_file_poll(h->mo))
			ev |= POLLPRI;
		pthread_mutex_unlock(&h->lock);
	} else {
		/*
		 * kernfs_generic_poll(): changed since this fd last read it.
		 * (Not under h->lock: a memory.reclaim write holds it as long
		 * as reclaim takes.)
		 */
		uint64_t now = f->notify >= 0 ? atomic_load(&h->cg->events[f->notify]) : 1;

		pthread_rwlock_rdlock(&fs_tree_lock);
		stale = handle_stale(h);
		pthread_rwlock_unlock(&fs_tree_lock);
		if (stale || h->ev_seen != now)
			ev |= POLLERR | POLLPRI;
	}
reply:
	if (ph)
		fuse_pollhandle_destroy(ph);	/* nothing will ever wake it */
	fuse_reply_poll(req, ev);
}

static void fs_ll_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* nodes are addresses: no export through NFS */
	conn->want &= ~FUSE_CAP_EXPORT_SUPPORT;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
}

const struct fuse_lowlevel_ops fs_ll_ops = {
	.init = fs_ll_init,
	.lookup = fs_ll_lookup,
	.forget = fs_ll_forget,
	.forget_multi = fs_ll_forget_multi,
	.getattr = fs_ll_getattr,
	.setattr = fs_ll_setattr,
	.access = fs_ll_access,
	.readdir = fs_ll_readdir,
	.mkdir = fs_ll_mkdir,
	.rmdir = fs_ll_rmdir,
	.create = fs_ll_create,
	.mknod = fs_ll_mknod,
	.symlink = fs_ll_symlink,
	.link = fs_ll_link,
	.unlink = fs_ll_unlink,
	.rename = fs_ll_rename,
	.open = fs_ll_open,
	.flush = fs_ll_flush,
	.release = fs_ll_release,
	.read = fs_ll_read,
	.write = fs_ll_write,
	.ioctl = fs_ll_ioctl,
	.poll = fs_ll_poll,
	.setxattr = fs_ll_setxattr,
	.getxattr = fs_ll_getxattr,
	.listxattr = fs_ll_listxattr,
	.removexattr = fs_ll_removexattr,
};
