/* SPDX-License-Identifier: MIT */
/*
 * xattr.c - extended attributes of cgroup directories and files, kept as
 * the kernel's cgroup filesystem keeps them (kernfs: fs/kernfs/inode.c over
 * fs/xattr.c's simple_xattr): in memory, per node (a directory or one of its
 * files), gone with the node.
 *
 * Namespaces: trusted.* (the kernel's VFS lets only CAP_SYS_ADMIN reach
 * them, before a request comes here; listing shows them to root only) and
 * user.* (a cgroup2 mount supports them: KERNFS_ROOT_SUPPORT_USER_XATTR).
 * Any other name is EOPNOTSUPP: security.* too, which kernfs keeps for
 * security modules; a prefix alone ("user.") is EINVAL.
 *
 * Bounds, the kernel's: user.* at most KERNFS_MAX_USER_XATTRS (128) per
 * node and KERNFS_USER_XATTR_SIZE_LIMIT (128 KiB) of values per node,
 * checked as kernfs checks them (a set first counts itself in, a replaced
 * value is subtracted after: at the cap even a replacement is ENOSPC);
 * names up to XATTR_NAME_MAX, values up to XATTR_SIZE_MAX.  trusted.* have
 * no count cap, as in the kernel, where only privileged callers can set
 * them.  So what an unprivileged client can attach is bounded by the nodes
 * it may write: about 160 KiB a node.
 *
 * An attribute is charged, as the kernel's simple_xattr allocation
 * (GFP_KERNEL_ACCOUNT), to the task memcg's current is (the setter's:
 * fs/ops.c sets it), its whole allocation as slab of that cgroup, bounded
 * by its memory.max (ENOMEM), and uncharged when it goes (removed,
 * replaced, its node gone).  Nobody's task: not charged (the unit tests).
 *
 * A node's attributes are dropped when it goes: the cgroup when it is
 * freed, memory.* files when their memcg goes (-memory, threaded: the
 * kernel removes those kernfs nodes).  Hidden *.pressure files keep theirs
 * (the kernel only hides those nodes, kernfs_show()).
 *
 * Locking: xattr_lock, a leaf.  Callers hold fs_tree_lock (read) across
 * the check that the node is there and the operation, so that a node that
 * goes under the tree's write lock cannot gain an attribute afterwards.
 */
#include "internal.h"

#include <errno.h>
#include <linux/limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
/* after <sys/xattr.h>: its XATTR_CREATE and XATTR_REPLACE win */
#include <linux/xattr.h>

#define KERNFS_MAX_USER_XATTRS		128
#define KERNFS_USER_XATTR_SIZE_LIMIT	(128 << 10)

/* One attribute: name and value in one allocation. */
struct fs_xattr {
	struct fs_xattr *next;		/* the cgroup's, by (idx, name) */
	unsigned int idx;		/* the node: 0 the directory, else 1 + its file index */
	struct obj_cgroup *objcg;	/* charged its allocation (NULL: nobody) */
	size_t charged;
	size_t size;
	char *value;
	char name[];
};

static pthread_mutex_t xattr_lock = PTHREAD_MUTEX_INITIALIZER;

enum xattr_ns { XNS_USER, XNS_TRUSTED };

/* xattr_resolve_name() with kernfs's handlers; the syscall's name checks. */
static int xattr_ns_of(const char *name)
{
	static const struct {
		const char *prefix;
		enum xattr_ns ns;
	} handlers[] = {
		{ XATTR_USER_PREFIX, XNS_USER },
		{ XATTR_TRUSTED_PREFIX, XNS_TRUSTED },
	};
	size_t len = strlen(name);

	if (!len || len > XATTR_NAME_MAX)
		return -ERANGE;
	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++) {
		size_t pl = strlen(handlers[i].prefix);

		if (!strncmp(name, handlers[i].prefix, pl))
			return len > pl ? (int)handlers[i].ns : -EINVAL;
	}
	return -EOPNOTSUPP;
}

/*
 * The link that points at (idx, name)'s place: at the attribute when it
 * exists (*found), else where it would go.
 */
static struct fs_xattr **xattr_find(struct cgroup *cg, unsigned int idx, const char *name,
				    bool *found)
{
	struct fs_xattr **pp = &cg->xattrs;

	*found = false;
	for (; *pp; pp = &(*pp)->next) {
		int c = (*pp)->idx != idx ? ((*pp)->idx > idx ? 1 : -1) : strcmp((*pp)->name, name);

		if (c >= 0) {
			*found = !c;
			break;
		}
	}
	return pp;
}

/* Outside xattr_lock (a leaf): its charge goes back with it. */
static void xattr_free(struct fs_xattr *x)
{
	if (!x)
		return;
	memcg_kmem_uncharge_bytes(x->objcg, x->charged);
	free(x);
}

int fs_xattr_set(struct cgroup *cg, unsigned int idx, const char *name, const void *value,
		 size_t size, int flags)
{
	size_t nr_user = 0, user_size = 0, len;
	struct fs_xattr **pp, *old, *x;
	int ns = xattr_ns_of(name), err = 0;
	bool found;

	if (ns < 0)
		return ns;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	len = strlen(name);
	x = malloc(sizeof(*x) + len + 1 + size);
	if (!x)
		return -ENOMEM;
	x->charged = sizeof(*x) + len + 1 + size;
	if (memcg_kmem_charge_bytes(GFP_KERNEL_ACCOUNT, x->charged, &x->objcg)) {
		free(x);
		return -ENOMEM;
	}
	memcpy(x->name, name, len + 1);
	x->value = x->name + len + 1;
	if (size)
		memcpy(x->value, value, size);
	x->size = size;
	x->idx = idx;

	pthread_mutex_lock(&xattr_lock);
	if (ns == XNS_USER) {
		for (const struct fs_xattr *e = cg->xattrs; e; e = e->next) {
			if (e->idx == idx && xattr_ns_of(e->name) == XNS_USER) {
				nr_user++;
				user_size += e->size;
			}
		}
		/* kernfs_vfs_user_xattr_add(): this one counted in before a replace */
		if (nr_user + 1 > KERNFS_MAX_USER_XATTRS ||
		    user_size + size > KERNFS_USER_XATTR_SIZE_LIMIT) {
			err = -ENOSPC;
			goto out_unlock;
		}
	}
	/* simple_xattr_set() */
	pp = xattr_find(cg, idx, name, &found);
	if (found && (flags & XATTR_CREATE)) {
		err = -EEXIST;
		goto out_unlock;
	}
	if (!found && (flags & XATTR_REPLACE)) {
		err = -ENODATA;
		goto out_unlock;
	}
	old = found ? *pp : NULL;
	x->next = old ? old->next : *pp;
	*pp = x;
	x = old;		/* freed below */
out_unlock:
	pthread_mutex_unlock(&xattr_lock);
	xattr_free(x);
	return err;
}

int fs_xattr_remove(struct cgroup *cg, unsigned int idx, const char *name)
{
	struct fs_xattr **pp, *x = NULL;
	int ns = xattr_ns_of(name);
	bool found;

	if (ns < 0)
		return ns;
	pthread_mutex_lock(&xattr_lock);
	pp = xattr_find(cg, idx, name, &found);
	if (found) {
		x = *pp;
		*pp = x->next;
	}
	pthread_mutex_unlock(&xattr_lock);
	xattr_free(x);
	return found ? 0 : -ENODATA;
}

ssize_t fs_xattr_get(struct cgroup *cg, unsigned int idx, const char *name, void *buf,
		     size_t size)
{
	int ns = xattr_ns_of(name);
	struct fs_xattr **pp;
	ssize_t ret;
	bool found;

	if (ns < 0)
		return ns;
	pthread_mutex_lock(&xattr_lock);
	pp = xattr_find(cg, idx, name, &found);
	if (!found) {
		ret = -ENODATA;
	} else {
		ret = (ssize_t)(*pp)->size;
		if (size && (*pp)->size > size)
			ret = -ERANGE;
		else if (size)
			memcpy(buf, (*pp)->value, (*pp)->size);
	}
	pthread_mutex_unlock(&xattr_lock);
	return ret;
}

ssize_t fs_xattr_list(struct cgroup *cg, unsigned int idx, bool trusted, char *buf, size_t size)
{
	size_t total = 0;

	pthread_mutex_lock(&xattr_lock);
	for (const struct fs_xattr *e = cg->xattrs; e; e = e->next) {
		size_t len;

		if (e->idx != idx || (!trusted && xattr_ns_of(e->name) == XNS_TRUSTED))
			continue;
		/* simple_xattr_list(): a buffer too small is ERANGE, not a cut */
		len = strlen(e->name) + 1;
		if (size && total + len > size) {
			total = SIZE_MAX;
			break;
		}
		if (size)
			memcpy(buf + total, e->name, len);
		total += len;
	}
	pthread_mutex_unlock(&xattr_lock);
	return total == SIZE_MAX ? -ERANGE : (ssize_t)total;
}

void fs_xattr_drop(struct cgroup *cg, unsigned int flags)
{
	struct fs_xattr **pp, *gone = NULL;

	pthread_mutex_lock(&xattr_lock);
	for (pp = &cg->xattrs; *pp;) {
		struct fs_xattr *x = *pp;

		if (!flags || (x->idx && (fs_files[x->idx - 1].flags & flags))) {
			*pp = x->next;
			x->next = gone;
			gone = x;
		} else {
			pp = &x->next;
		}
	}
	pthread_mutex_unlock(&xattr_lock);
	while (gone) {
		struct fs_xattr *x = gone;

		gone = x->next;
		xattr_free(x);
	}
}
