/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the cgroup tree: every directory a cgroup.
 *
 * Owns struct cgroup (its lifetime, names, attributes, node ids and inode
 * numbers), mkdir and rmdir with the kernel's rules (docs/kernel-interface.md §4), and the
 * core files that change the tree's shape or controllers:
 * cgroup.subtree_control (§6), cgroup.type (threaded mode) and
 * cgroup.pressure.  The predicates are kernel/cgroup/cgroup.c's, for a
 * hierarchy whose only controller is memory (a domain controller: no
 * threaded controller exists, so cgrp_dfl_threaded_ss_mask is empty).
 *
 * Locking: fs_tree_lock, read for lookups and reads, write for every
 * change of shape or controllers; membership counts (nr_populated,
 * nr_procs) are procs_lock's, taken inside.  A cgroup lives while it has
 * references: its place in the tree, each lookup the kernel holds (the
 * directory's and its files'), each open handle and each child.  Removed
 * cgroups stay (dying, "removed") until the last one goes.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

pthread_rwlock_t fs_tree_lock = PTHREAD_RWLOCK_INITIALIZER;
struct cgroup *fs_root;
bool fs_user_slices;
/* live cgroups made by each non-root uid (fs.max_cgroups_per_uid), fs_tree_lock */
static struct fs_uid_counts made_by;
static uint32_t max_cgroups_per_uid = UINT32_MAX;

static _Atomic uint64_t next_id = 1;

/*
 * Every cgroup until freed: at exit, those the kernel still held (lookups
 * are not forgotten on unmount) are freed all the same.
 */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cgroup *all_cgroups;

/* The (parent, name) -> child table of live cgroups. */
static struct cgroup **name_table;
static size_t name_table_size;		/* a power of two */
static size_t name_table_count;

/* Node ids carry the file index in the low bits of the cgroup's address. */
#define CGROUP_ALIGN	(FS_NODE_IDX_MASK + 1)
_Static_assert(FS_MAX_FILES <= FS_NODE_IDX_MASK, "file index must fit the node id");
_Static_assert(sizeof(fuse_ino_t) >= sizeof(uintptr_t), "a node id holds an address");

static size_t name_hash(const struct cgroup *parent, const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)parent * 0x9E3779B97F4A7C15ull;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001B3ull;
	return (size_t)(h ^ (h >> 29));
}

static int name_table_grow(void)
{
	size_t size = name_table_size ? name_table_size * 2 : 256;
	struct cgroup **t = calloc(size, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < name_table_size; i++) {
		struct cgroup *cg, *next;

		for (cg = name_table[i]; cg; cg = next) {
			size_t b = name_hash(cg->parent, cg->name) & (size - 1);

			next = cg->hash_next;
			cg->hash_next = t[b];
			t[b] = cg;
		}
	}
	free(name_table);
	name_table = t;
	name_table_size = size;
	return 0;
}

static void name_table_del(struct cgroup *cg)
{
	struct cgroup **pp = &name_table[name_hash(cg->parent, cg->name) & (name_table_size - 1)];

	for (; *pp; pp = &(*pp)->hash_next) {
		if (*pp == cg) {
			*pp = cg->hash_next;
			name_table_count--;
			return;
		}
	}
}

struct cgroup *cgroup_child(const struct cgroup *parent, const char *name)
{
	struct cgroup *cg;

	if (!name_table_size)
		return NULL;
	cg = name_table[name_hash(parent, name) & (name_table_size - 1)];
	for (; cg; cg = cg->hash_next)
		if (cg->parent == parent && !strcmp(cg->name, name))
			return cg;
	return NULL;
}

/* ---- lifetime ---- */
static struct cgroup *cgroup_alloc(const char *name)
{
	size_t size = (sizeof(struct cgroup) + CGROUP_ALIGN - 1) & ~(size_t)(CGROUP_ALIGN - 1);
	struct cgroup *cg = aligned_alloc(CGROUP_ALIGN, size);

	if (!cg)
		return NULL;
	memset(cg, 0, sizeof(*cg));
	cg->name = strdup(name);
	if (!cg->name) {
		free(cg);
		return NULL;
	}
	cg->id = atomic_fetch_add(&next_id, 1);
	atomic_init(&cg->ref, 1);
	cg->dom = cg;
	cg->psi = true;
	cg->max_descendants = INT_MAX;
	cg->max_depth = INT_MAX;
	for (int i = 0; i < NR_NOTIFY_FILES; i++)
		atomic_init(&cg->events[i], 1);
	clock_gettime(CLOCK_REALTIME, &cg->ctime);
	cg->mtime = cg->ctime;
	pthread_mutex_lock(&all_lock);
	cg->all_next = all_cgroups;
	if (all_cgroups)
		all_cgroups->all_prev = cg;
	all_cgroups = cg;
	pthread_mutex_unlock(&all_lock);
	return cg;
}

static void cgroup_free(struct cgroup *cg)
{
	struct cgroup *parent = cg->parent;

	pthread_mutex_lock(&all_lock);
	if (cg->all_prev)
		cg->all_prev->all_next = cg->all_next;
	else
		all_cgroups = cg->all_next;
	if (cg->all_next)
		cg->all_next->all_prev = cg->all_prev;
	pthread_mutex_unlock(&all_lock);
	fs_xattr_drop(cg, 0);
	free(cg->fattr);
	free(cg->name);
	free(cg);
	if (parent)
		cgroup_put(parent);
}

void cgroup_get(struct cgroup *cg)
{
	atomic_fetch_add_explicit(&cg->ref, 1, memory_order_relaxed);
}

void cgroup_put(struct cgroup *cg)
{
	if (atomic_fetch_sub_explicit(&cg->ref, 1, memory_order_acq_rel) == 1)
		cgroup_free(cg);
}

/* ---- ids ---- */
fuse_ino_t cgroup_nodeid(const struct cgroup *cg, unsigned int idx)
{
	if (cg == fs_root && !idx)
		return FUSE_ROOT_ID;
	return (fuse_ino_t)(uintptr_t)cg | idx;
}

struct cgroup *nodeid_cgroup(fuse_ino_t ino, unsigned int *idx)
{
	if (ino == FUSE_ROOT_ID) {
		*idx = 0;
		return fs_root;
	}
	*idx = (unsigned int)(ino & FS_NODE_IDX_MASK);
	return (struct cgroup *)(uintptr_t)(ino & ~(fuse_ino_t)FS_NODE_IDX_MASK);
}

uint64_t cgroup_ino(const struct cgroup *cg, unsigned int idx)
{
	return cg->id << 7 | idx;
}

/* ---- kernel predicates ---- */
bool cgroup_is_threaded(const struct cgroup *cg)
{
	return cg->dom != cg;
}

bool cgroup_is_populated(const struct cgroup *cg)
{
	bool populated;

	pthread_rwlock_rdlock(&procs_lock);
	populated = cg->nr_populated > 0;
	pthread_rwlock_unlock(&procs_lock);
	return populated;
}

static bool cgroup_has_tasks(const struct cgroup *cg)
{
	bool has;

	pthread_rwlock_rdlock(&procs_lock);
	has = cg->nr_procs > 0;
	pthread_rwlock_unlock(&procs_lock);
	return has;
}

bool cgroup_is_thread_root(const struct cgroup *cg)
{
	if (cgroup_is_threaded(cg))
		return false;
	/* no threaded controller exists: only threaded children make one */
	return cg->nr_threaded_children > 0;
}

bool cgroup_is_valid_domain(const struct cgroup *cg)
{
	if (cgroup_is_threaded(cg))
		return false;
	while ((cg = cg->parent)) {
		if (cg->parent && cgroup_is_thread_root(cg))
			return false;
		if (cgroup_is_threaded(cg))
			return false;
	}
	return true;
}

/* procs_lock held (it counts populated children) */
bool cgroup_can_be_thread_root(const struct cgroup *cg)
{
	if (!cg->parent)		/* mixable */
		return true;
	if (cgroup_is_threaded(cg))
		return false;
	for (const struct cgroup *c = cg->first_child; c; c = c->next_sibling)
		if (!cgroup_is_threaded(c) && c->nr_populated)
			return false;
	return !cg->subtree_memory;
}

bool cgroup_is_descendant(const struct cgroup *cg, const struct cgroup *ancestor)
{
	for (; cg; cg = cg->parent)
		if (cg == ancestor)
			return true;
	return false;
}

struct mem_cgroup *cgroup_memcg(const struct cgroup *cg)
{
	for (; cg; cg = cg->parent)
		if (cg->memcg)
			return cg->memcg;
	return root_mem_cgroup();
}

int cgroup_path(const struct cgroup *cg, char *buf, size_t len)
{
	const struct cgroup *c;
	size_t need = 0, pos;

	if (!cg->parent) {
		if (len < 2)
			return -ENAMETOOLONG;
		memcpy(buf, "/", 2);
		return 1;
	}
	for (c = cg; c->parent; c = c->parent)
		need += strlen(c->name) + 1;
	if (need + 1 > len)
		return -ENAMETOOLONG;
	pos = need;
	buf[pos] = '\0';
	for (c = cg; c->parent; c = c->parent) {
		size_t n = strlen(c->name);

		pos -= n;
		memcpy(buf + pos, c->name, n);
		buf[--pos] = '/';
	}
	return (int)need;
}

/* ---- attributes ---- */
void cgroup_file_owner(const struct cgroup *cg, unsigned int idx, uid_t *uid, gid_t *gid,
		       mode_t *mode)
{
	if (idx && cg->fattr && cg->fattr[idx].set) {
		*uid = cg->fattr[idx].uid;
		*gid = cg->fattr[idx].gid;
		*mode = cg->fattr[idx].mode;
		return;
	}
	/* kernfs: a chown of the directory leaves its files as they were made */
	*uid = idx ? cg->file_uid : cg->uid;
	*gid = idx ? cg->file_gid : cg->gid;
	*mode = idx ? fs_files[idx - 1].mode : cg->mode;
}

void cgroup_stat(const struct cgroup *cg, unsigned int idx, struct stat *st)
{
	mode_t mode;

	memset(st, 0, sizeof(*st));
	st->st_ino = cgroup_ino(cg, idx);
	cgroup_file_owner(cg, idx, &st->st_uid, &st->st_gid, &mode);
	if (idx) {
		st->st_mode = S_IFREG | mode;
		st->st_nlink = 1;
		st->st_mtim = cg->ctime;
	} else {
		st->st_mode = S_IFDIR | mode;
		st->st_nlink = 2 + cg->nr_children;
		st->st_mtim = cg->mtime;
	}
	/* contents change behind any cache: size 0, as the kernel reports */
	st->st_size = 0;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim;
	st->st_ctim = cg->ctime;
}

int cgroup_setattr(struct cgroup *cg, unsigned int idx, const struct stat *attr, int valid)
{
	uid_t uid;
	gid_t gid;
	mode_t mode;

	pthread_rwlock_wrlock(&fs_tree_lock);
	if (idx && !fs_file_present(cg, idx - 1)) {
		pthread_rwlock_unlock(&fs_tree_lock);
		return -ENOENT;
	}
	cgroup_file_owner(cg, idx, &uid, &gid, &mode);
	if (valid & FUSE_SET_ATTR_MODE)
		mode = attr->st_mode & 07777;
	if (valid & FUSE_SET_ATTR_UID)
		uid = attr->st_uid;
	if (valid & FUSE_SET_ATTR_GID)
		gid = attr->st_gid;
	if (idx) {
		if (!cg->fattr && (valid & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
			cg->fattr = calloc(FS_MAX_FILES + 1, sizeof(*cg->fattr));
			if (!cg->fattr) {
				pthread_rwlock_unlock(&fs_tree_lock);
				return -ENOMEM;
			}
		}
		if (cg->fattr) {
			cg->fattr[idx] = (struct fs_fattr){ uid, gid, mode, true };
		}
	} else {
		cg->uid = uid;
		cg->gid = gid;
		cg->mode = mode;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			clock_gettime(CLOCK_REALTIME, &cg->mtime);
		else if (valid & FUSE_SET_ATTR_MTIME)
			cg->mtime = attr->st_mtim;
	}
	/* a size change (O_TRUNC) is accepted and ignored, as kernfs does */
	if (valid & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		clock_gettime(CLOCK_REALTIME, &cg->ctime);
	pthread_rwlock_unlock(&fs_tree_lock);
	return 0;
}

/* ---- mkdir / rmdir ---- */
static void link_child(struct cgroup *parent, struct cgroup *cg)
{
	size_t b;

	cg->prev_sibling = parent->last_child;
	cg->next_sibling = NULL;
	if (parent->last_child)
		parent->last_child->next_sibling = cg;
	else
		parent->first_child = cg;
	parent->last_child = cg;
	parent->nr_children++;
	b = name_hash(parent, cg->name) & (name_table_size - 1);
	cg->hash_next = name_table[b];
	name_table[b] = cg;
	name_table_count++;
}

static void unlink_child(struct cgroup *cg)
{
	struct cgroup *parent = cg->parent;

	name_table_del(cg);
	if (cg->prev_sibling)
		cg->prev_sibling->next_sibling = cg->next_sibling;
	else
		parent->first_child = cg->next_sibling;
	if (cg->next_sibling)
		cg->next_sibling->prev_sibling = cg->prev_sibling;
	else
		parent->last_child = cg->prev_sibling;
	parent->nr_children--;
	cg->prev_sibling = cg->next_sibling = NULL;
}

int cgroup_mkdir(struct cgroup *parent, const char *name, mode_t mode, uid_t uid, gid_t gid,
		 struct cgroup **out)
{
	struct mem_cgroup *memcg = NULL;
	struct cgroup *cg, *a;
	int level, err;

	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	pthread_rwlock_wrlock(&fs_tree_lock);
	/* 0: the VFS's lookup */
	if (cgroup_child(parent, name) || fs_file_index(name) >= 0) {
		int idx = fs_file_index(name);

		if (cgroup_child(parent, name) || fs_file_present(parent, (unsigned int)idx)) {
			err = -EEXIST;
			goto out_unlock;
		}
	}
	/* 1: cgroup_mkdir() */
	if (strchr(name, '\n')) {
		err = -EINVAL;
		goto out_unlock;
	}
	if (parent->removed) {
		err = -ENODEV;
		goto out_unlock;
	}
	/* cgroup_check_hierarchy_limits() */
	for (a = parent, level = 0; a; a = a->parent, level++) {
		if (a->nr_descendants >= (unsigned int)a->max_descendants || level >= a->max_depth) {
			err = -EAGAIN;
			goto out_unlock;
		}
	}
	/* fs.max_cgroups_per_uid: what one user makes the daemon keep */
	if (uid && fs_uid_count(&made_by, uid) >= max_cgroups_per_uid) {
		err = -EDQUOT;
		goto out_unlock;
	}
	if (name_table_count + 1 > name_table_size / 2 && name_table_grow()) {
		err = -ENOMEM;
		goto out_unlock;
	}
	if (fs_uid_count_add(&made_by, uid, 1)) {
		err = -ENOMEM;
		goto out_unlock;
	}
	cg = cgroup_alloc(name);
	if (!cg) {
		(void)fs_uid_count_add(&made_by, uid, -1);
		err = -ENOMEM;
		goto out_unlock;
	}
	/* the parent's subtree_control gives the child its controllers */
	if (parent->subtree_memory) {
		err = mem_cgroup_create(parent->memcg, &memcg);
		if (err) {
			cgroup_free(cg);
			(void)fs_uid_count_add(&made_by, uid, -1);
			goto out_unlock;
		}
	}
	cg->parent = parent;
	cgroup_get(parent);
	cg->level = parent->level + 1;
	cg->uid = cg->file_uid = uid;
	cg->gid = cg->file_gid = gid;
	cg->mode = mode & 07777;
	cgroup_set_memcg(cg, memcg);
	/* the effective freeze state is inherited (cgroup_create) */
	pthread_rwlock_wrlock(&procs_lock);
	cg->frozen = parent->frozen;
	if (cg->frozen)
		cg->frozen_since_ns = fs_now_ns();
	pthread_rwlock_unlock(&procs_lock);
	link_child(parent, cg);
	for (a = parent; a; a = a->parent)
		a->nr_descendants++;
	clock_gettime(CLOCK_REALTIME, &parent->mtime);
	parent->ctime = parent->mtime;
	*out = cg;
	err = 0;
out_unlock:
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/*
 * @cg's memcg, if any, detached and taken offline; *memcgp is it (its
 * reference for the caller to put) or NULL.  On failure @cg keeps it.
 */
static int cgroup_memcg_offline(struct cgroup *cg, struct mem_cgroup **memcgp)
{
	struct mem_cgroup *memcg = cg->memcg;
	int err;

	*memcgp = memcg;
	if (!memcg)
		return 0;
	cgroup_set_memcg(cg, NULL);
	err = mem_cgroup_offline(memcg);
	if (err)
		cgroup_set_memcg(cg, memcg);
	return err;
}

int cgroup_rmdir(struct cgroup *parent, const char *name)
{
	struct mem_cgroup *memcg;
	struct cgroup *cg, *a;
	int err = 0;

	/* a cgroup whose last process just exited can be removed at once */
	procs_collect_exits();
	pthread_rwlock_wrlock(&fs_tree_lock);
	cg = cgroup_child(parent, name);
	if (!cg) {
		int idx = fs_file_index(name);

		err = idx >= 0 && fs_file_present(parent, (unsigned int)idx) ? -ENOTDIR : -ENOENT;
		goto out_unlock;
	}
	if (cgroup_is_populated(cg)) {
		err = -EBUSY;
		goto out_unlock;
	}
	if (cg->first_child) {
		err = -EBUSY;
		goto out_unlock;
	}
	/* kill_css(): the memcg goes offline and dying, reparented to the parent */
	err = cgroup_memcg_offline(cg, &memcg);
	if (err)	/* cannot happen: no online child memcg without a live child cgroup */
		goto out_unlock;
	if (memcg)
		mem_cgroup_put(memcg);
	cg->removed = true;
	/* kernfs_remove(): every node deactivated and drained (PSI triggers destroyed) */
	cg->psi_drains++;
	unlink_child(cg);
	(void)fs_uid_count_add(&made_by, cg->file_uid, -1);	/* its maker's, for good */
	for (a = parent; a; a = a->parent)
		a->nr_descendants--;
	if (cgroup_is_threaded(cg))
		parent->nr_threaded_children--;
	clock_gettime(CLOCK_REALTIME, &parent->mtime);
	parent->ctime = parent->mtime;
	pthread_rwlock_unlock(&fs_tree_lock);
	notify_drained(cg);
	cgroup_put(cg);		/* its place in the tree */
	return 0;

out_unlock:
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/* ---- cgroup.subtree_control ---- */
/* cgroup_vet_subtree_control_enable() for the memory controller */
static int vet_enable_memory(const struct cgroup *cg)
{
	if (!cgroup_is_valid_domain(cg->dom))
		return -EOPNOTSUPP;
	if (!cg->parent)		/* mixable */
		return 0;
	if (cgroup_is_thread_root(cg) || cgroup_is_threaded(cg))
		return -EOPNOTSUPP;
	if (cgroup_has_tasks(cg))
		return -EBUSY;
	return 0;
}

/* cgroup_control(): the controllers the parent gives it */
static bool cgroup_control_memory(const struct cgroup *cg)
{
	if (!cg->parent)
		return true;
	return cg->parent->subtree_memory && !cgroup_is_threaded(cg);
}

static int enable_memory(struct cgroup *cg)
{
	struct cgroup *c;
	int err = 0;

	/* kernfs cannot add a file where a child directory has its name */
	for (c = cg->first_child; c; c = c->next_sibling) {
		if (cgroup_is_threaded(c) || !c->first_child)
			continue;
		for (unsigned int i = 0; i < fs_nr_files; i++)
			if ((fs_files[i].flags & FF_MEMCG) && cgroup_child(c, fs_files[i].name))
				return -EEXIST;
	}
	for (c = cg->first_child; c; c = c->next_sibling) {
		struct mem_cgroup *memcg;

		if (cgroup_is_threaded(c))
			continue;
		err = mem_cgroup_create(cg->memcg, &memcg);
		if (err)
			break;
		cgroup_set_memcg(c, memcg);
	}
	if (err) {
		/* all or nothing */
		for (struct cgroup *u = cg->first_child; u != c; u = u->next_sibling) {
			struct mem_cgroup *memcg = u->memcg;

			if (!memcg)
				continue;
			cgroup_set_memcg(u, NULL);
			mem_cgroup_offline(memcg);
			mem_cgroup_put(memcg);
		}
		return err;
	}
	cg->subtree_memory = true;
	for (c = cg->first_child; c; c = c->next_sibling)
		if (c->memcg)
			procs_reattach(c);
	return 0;
}

/*
 * All or nothing: the children's tasks move to cg's memcg first, then every
 * child memcg must be able to go offline (a task of an exited process whose
 * last request is still in flight keeps its memcg busy: -EBUSY), else all
 * is put back as it was.
 */
static int disable_memory(struct cgroup *cg)
{
	struct {
		struct cgroup *c;
		struct mem_cgroup *memcg;
	} *v;
	size_t n = 0, i;
	int err = 0;

	for (struct cgroup *c = cg->first_child; c; c = c->next_sibling)
		n += c->memcg != NULL;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (struct cgroup *c = cg->first_child; c; c = c->next_sibling) {
		if (!c->memcg)
			continue;
		v[n].c = c;
		v[n++].memcg = c->memcg;
		/* tasks charge the parent's memcg from now on, then the css dies */
		cgroup_set_memcg(c, NULL);
		procs_reattach(c);
	}
	for (i = 0; i < n && !err; i++)
		err = mem_cgroup_offline_check(v[i].memcg);
	for (i = 0; i < n; i++) {
		int e = err;

		if (!e) {
			e = mem_cgroup_offline(v[i].memcg);
			if (e)	/* never expected: its check passed */
				fs_err("cgroup.subtree_control: -memory: a child memcg cannot go "
				       "offline (%s)", strerror(-e));
			else
				mem_cgroup_put(v[i].memcg);
		}
		if (e) {
			cgroup_set_memcg(v[i].c, v[i].memcg);
			procs_reattach(v[i].c);
		}
	}
	if (!err)
		cg->subtree_memory = false;
	free(v);
	return err;
}

/*
 * The kernel's v2 controllers besides memory: memcgfs's emulated kernel has
 * them built in but not bound to this hierarchy, so "+cpu" is ENOENT (not in
 * cgroup.controllers) and "-cpu" a no-op, while an unknown name is EINVAL.
 */
static const char *const other_controllers[] = {
	"cpuset", "cpu", "io", "perf_event", "hugetlb", "pids", "rdma", "misc", "dmem",
};

int cgroup_subtree_control_write(struct cgroup *cg, char *buf, struct fs_inval_list *iv)
{
	int enable = 0, disable = 0, enable_other = 0, err = 0;
	char *tok, *s = strstrip(buf);

	while ((tok = strsep(&s, " "))) {
		size_t i;

		if (!*tok)
			continue;
		if (!strcmp(tok + 1, "memory")) {
			if (*tok == '+') {
				enable = 1;
				disable = 0;
			} else if (*tok == '-') {
				disable = 1;
				enable = 0;
			} else {
				return -EINVAL;
			}
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(other_controllers); i++)
			if (!strcmp(tok + 1, other_controllers[i]))
				break;
		if (i == ARRAY_SIZE(other_controllers) || (*tok != '+' && *tok != '-'))
			return -EINVAL;
		/* later tokens override earlier ones for the same controller */
		if (*tok == '+')
			enable_other |= 1 << i;
		else
			enable_other &= ~(1 << i);
	}
	pthread_rwlock_wrlock(&fs_tree_lock);
	if (cg->removed) {
		err = -ENODEV;
		goto out_unlock;
	}
	if (enable_other) {
		err = -ENOENT;
		goto out_unlock;
	}
	if (enable) {
		if (cg->subtree_memory)
			enable = 0;
		else if (!cgroup_control_memory(cg)) {
			err = -ENOENT;
			goto out_unlock;
		}
	} else if (disable) {
		if (!cg->subtree_memory) {
			disable = 0;
		} else {
			for (struct cgroup *c = cg->first_child; c; c = c->next_sibling) {
				if (c->subtree_memory) {
					err = -EBUSY;
					goto out_unlock;
				}
			}
		}
	}
	if (enable) {
		err = vet_enable_memory(cg);
		if (!err)
			err = enable_memory(cg);
	} else if (disable) {
		/* the children's memory.* vanish */
		for (struct cgroup *c = cg->first_child; c; c = c->next_sibling)
			if (c->memcg)
				inval_add_files(iv, c, FF_MEMCG);
		err = disable_memory(cg);
		/* the children's memory.* nodes are gone, their attributes too */
		for (struct cgroup *c = cg->first_child; c && !err; c = c->next_sibling)
			fs_xattr_drop(c, FF_MEMCG);
	}
out_unlock:
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/* ---- cgroup.type ---- */
static void set_dom(struct cgroup *cg, struct cgroup *top, struct cgroup *dom)
{
	/* cgroup_enable_threaded(): cg and its threaded descendants join dom */
	if (cg == top || cgroup_is_threaded(cg))
		cg->dom = dom;
	for (struct cgroup *c = cg->first_child; c; c = c->next_sibling)
		set_dom(c, top, dom);
}

int cgroup_type_write(struct cgroup *cg, char *buf, struct fs_inval_list *iv)
{
	struct cgroup *parent, *dom;
	struct mem_cgroup *memcg;
	int err = 0;

	if (strcmp(strstrip(buf), "threaded"))
		return -EINVAL;
	pthread_rwlock_wrlock(&fs_tree_lock);
	if (cg->removed) {
		err = -ENOENT;
		goto out_unlock;
	}
	if (cgroup_is_threaded(cg))
		goto out_unlock;
	parent = cg->parent;
	dom = parent->dom;
	pthread_rwlock_rdlock(&procs_lock);
	if (cg->nr_populated || cg->subtree_memory || !cgroup_is_valid_domain(dom) ||
	    !cgroup_can_be_thread_root(dom))
		err = -EOPNOTSUPP;
	pthread_rwlock_unlock(&procs_lock);
	if (err)
		goto out_unlock;
	/* cgroup_apply_control(): a threaded cgroup has no domain controller */
	err = cgroup_memcg_offline(cg, &memcg);
	if (err)	/* a task of an exited process with a request in flight: -EBUSY */
		goto out_unlock;
	if (memcg) {
		inval_add_files(iv, cg, FF_MEMCG);
		fs_xattr_drop(cg, FF_MEMCG);
		mem_cgroup_put(memcg);
	}
	set_dom(cg, cg, dom);
	parent->nr_threaded_children++;
	pthread_rwlock_unlock(&fs_tree_lock);
	return 0;
out_unlock:
	pthread_rwlock_unlock(&fs_tree_lock);
	return err;
}

/* ---- cgroup.pressure ---- */
int cgroup_pressure_write(struct cgroup *cg, char *buf, struct fs_inval_list *iv)
{
	int v, err = kstrtoint0(strstrip(buf), &v);
	bool drain;

	if (err)
		return err;
	if (v != 0 && v != 1)
		return -ERANGE;
	pthread_rwlock_wrlock(&fs_tree_lock);
	if (cg->removed) {
		pthread_rwlock_unlock(&fs_tree_lock);
		return -ENODEV;
	}
	drain = cg->psi && !v;
	if (drain) {
		/* kernfs_show(false): deactivated and drained, triggers destroyed */
		inval_add_files(iv, cg, FF_PSI);
		cg->psi_drains++;
	}
	cg->psi = v;
	pthread_rwlock_unlock(&fs_tree_lock);
	if (drain)
		notify_drained(cg);
	return 0;
}

/* ---- init ---- */
int tree_init(const struct memcgfs_config *conf)
{
	struct cgroup *root;

	if (name_table_grow())
		return -ENOMEM;
	root = cgroup_alloc("");
	if (!root)
		return -ENOMEM;
	/* as cgroupfs, the root is root's; a user's daemon mounts for its user */
	root->mode = 0755;
	root->uid = root->file_uid = geteuid();
	root->gid = root->file_gid = getegid();
	cgroup_set_memcg(root, root_mem_cgroup());
	root->subtree_memory = !strcmp(conf->fs.root_subtree_control, "memory");
	fs_root = root;
	fs_user_slices = conf->fs.user_slices;
	return 0;
}

unsigned int tree_set_max_cgroups_per_uid(unsigned int max)
{
	if (!max)
		max = fs_host_share(16384, 1024, 1048576);
	pthread_rwlock_wrlock(&fs_tree_lock);
	max_cgroups_per_uid = max;
	pthread_rwlock_unlock(&fs_tree_lock);
	return max;
}

/* parent/name, made (owned by uid:gid) if it is not there yet. */
static int child_or_mkdir(struct cgroup *parent, const char *name, uid_t uid, gid_t gid,
			  struct cgroup **out)
{
	int err = cgroup_mkdir(parent, name, 0755, uid, gid, out);

	if (err == -EEXIST) {
		pthread_rwlock_rdlock(&fs_tree_lock);
		*out = cgroup_child(parent, name);
		pthread_rwlock_unlock(&fs_tree_lock);
		err = *out ? 0 : -ENOENT;
	}
	return err;
}

/*
 * cgroup_user_slice - fs.user_slices: /user.slice/user-UID.slice, as
 * systemd makes them at a login: user.slice root's with memory enabled for
 * its children, the user's slice owned by the user (delegated).
 */
int cgroup_user_slice(uid_t uid, gid_t gid, struct cgroup **out)
{
	struct cgroup *slice;
	char name[32];
	int err = child_or_mkdir(fs_root, "user.slice", 0, 0, &slice);

	if (err)
		return err;
	if (fs_root->subtree_memory && !slice->subtree_memory) {
		struct fs_inval_list iv = { 0 };
		char plus[] = "+memory";

		/* no child yet: nothing appears, nothing to invalidate */
		err = cgroup_subtree_control_write(slice, plus, &iv);
		free(iv.v);
		if (err && err != -EBUSY)
			return err;
	}
	snprintf(name, sizeof(name), "user-%u.slice", (unsigned int)uid);
	return child_or_mkdir(slice, name, uid, gid, out);
}

static void tree_free_subtree(struct cgroup *cg)
{
	while (cg->first_child) {
		struct cgroup *c = cg->first_child;

		tree_free_subtree(c);
		if (c->memcg) {
			struct mem_cgroup *memcg = c->memcg;

			cgroup_set_memcg(c, NULL);
			mem_cgroup_offline(memcg);
			mem_cgroup_put(memcg);
		}
		c->removed = true;
		unlink_child(c);
		cgroup_put(c);
	}
}

void tree_exit(void)
{
	if (!fs_root)
		return;
	pthread_rwlock_wrlock(&fs_tree_lock);
	tree_free_subtree(fs_root);
	cgroup_set_memcg(fs_root, NULL);
	fs_uid_counts_clear(&made_by);
	pthread_rwlock_unlock(&fs_tree_lock);
	cgroup_put(fs_root);
	fs_root = NULL;
	/* what the kernel still held when the session ended */
	pthread_mutex_lock(&all_lock);
	while (all_cgroups) {
		struct cgroup *cg = all_cgroups;

		all_cgroups = cg->all_next;
		fs_xattr_drop(cg, 0);
		free(cg->fattr);
		free(cg->name);
		free(cg);
	}
	pthread_mutex_unlock(&all_lock);
	free(name_table);
	name_table = NULL;
	name_table_size = name_table_count = 0;
}
