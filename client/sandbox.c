/* SPDX-License-Identifier: MIT */
/*
 * client/sandbox.c - memcgctl sandbox: run a command where memcgfs is the
 * cgroup v2 tree, for tools that find the tree themselves (the cgroup2
 * entry of /proc/mounts, or /sys/fs/cgroup) and cannot be told a path.
 *
 * In a private mount namespace (its mounts slaves of the host's, so
 * nothing goes back) and a new cgroup namespace:
 *  - /sys/fs/cgroup becomes a cgroup2 mount if it is not one: what is
 *    there (a cgroup v1 or hybrid layout: a tmpfs with the v1 hierarchies
 *    and cgroup2 at unified/) is detached, in here only, and a cgroup2 is
 *    mounted in its place, so that the mount table has its cgroup2 entry
 *    where tools look first;
 *  - the memcgfs mount is bound over every cgroup2 mount point, so that
 *    each path a tool finds leads to memcgfs.
 * The cgroup namespace makes /proc/self/cgroup read "0::/": memcgfs's root,
 * where the command starts (unless -g moved it).
 *
 * What it cannot change, and memcgctl(1) says: the mount table still names
 * the memcgfs mount on top (fuse.memcgfs, over the cgroup2 entry);
 * statfs(2) reports FUSE_SUPER_MAGIC, not CGROUP2_SUPER_MAGIC (tools that
 * test it refuse the tree: systemd, runc's libcontainer, podman); other
 * processes' /proc/PID/mounts and /proc/PID/cgroup are theirs.  It needs
 * CAP_SYS_ADMIN.
 */
#include "memcgctl.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYS_FS_CGROUP	"/sys/fs/cgroup"

/* The mount table, in mount order: a later entry at a point is on top. */
struct mounts {
	size_t n;
	struct mount_ent {
		char *dir;
		char *type;
	} *v;
};

static void mounts_free(struct mounts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].dir);
		free(m->v[i].type);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static int mounts_read(struct mounts *m)
{
	char line[4 * MEMCGFS_PATH_MAX];
	struct mntent me;
	size_t cap = 0;
	FILE *f = setmntent("/proc/self/mounts", "re");
	int err = 0;

	m->v = NULL;
	m->n = 0;
	if (!f)
		return -errno;
	while (!err && getmntent_r(f, &me, line, sizeof(line))) {
		if (m->n == cap) {
			struct mount_ent *v = realloc(m->v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				break;
			}
			m->v = v;
		}
		m->v[m->n].dir = strdup(me.mnt_dir);
		m->v[m->n].type = strdup(me.mnt_type);
		if (!m->v[m->n].dir || !m->v[m->n].type) {
			free(m->v[m->n].dir);
			free(m->v[m->n].type);
			err = -ENOMEM;
			break;
		}
		m->n++;
	}
	endmntent(f);
	if (err)
		mounts_free(m);
	return err;
}

/* The type of the mount on top at dir, or NULL when none is mounted there. */
static const char *mounts_top(const struct mounts *m, const char *dir)
{
	for (size_t i = m->n; i-- > 0;)
		if (!strcmp(m->v[i].dir, dir))
			return m->v[i].type;
	return NULL;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * /sys/fs/cgroup as a cgroup2 mount: whatever is mounted there detached
 * (in this namespace), a cgroup2 mounted in its place.  A cgroup2 that
 * cannot be mounted (e.g. a kernel without it) only leaves /proc/mounts
 * without that entry: memcgfs is bound there all the same.
 */
static int sys_fs_cgroup_v2(struct mctl *c)
{
	struct mounts m;
	char top[64];
	int err;

	for (int tries = 0;; tries++) {
		err = mounts_read(&m);
		if (err)
			return mctl_error(c, -err, "/proc/self/mounts: %s", strerror(-err));
		snprintf(top, sizeof(top), "%s",
			 mounts_top(&m, SYS_FS_CGROUP) ? mounts_top(&m, SYS_FS_CGROUP) : "");
		mounts_free(&m);
		if (!strcmp(top, "cgroup2"))
			return 0;
		if (!top[0])
			break;
		/* a v1 or hybrid layout: the tmpfs and the hierarchies in it */
		if (tries == 16)
			return mctl_error(c, EBUSY, "%s: still a %s mount after %d detaches",
					  SYS_FS_CGROUP, top, tries);
		if (umount2(SYS_FS_CGROUP, MNT_DETACH))
			return mctl_error(c, errno, "%s: cannot detach what is mounted there: %s",
					  SYS_FS_CGROUP, strerror(errno));
	}
	if (mount("cgroup2", SYS_FS_CGROUP, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME,
		  NULL))
		fprintf(stderr, "%s: warning: no cgroup2 mount at %s (%s): /proc/mounts will "
			"have no cgroup2 entry\n", c->prog, SYS_FS_CGROUP, strerror(errno));
	return 0;
}

/* memcgfs (opened as fd) bound over every cgroup2 mount point, and /sys/fs/cgroup. */
static int bind_memcgfs(struct mctl *c, int fd)
{
	char src[64];
	struct mounts m;
	bool sys_done = false;
	int err = mounts_read(&m);

	if (err)
		return mctl_error(c, -err, "/proc/self/mounts: %s", strerror(-err));
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < m.n && !err; i++) {
		const char *dir = m.v[i].dir;
		bool seen = false;

		/* each mount point once, when a cgroup2 is what is on top there */
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(m.v[j].dir, dir);
		if (seen || strcmp(mounts_top(&m, dir), "cgroup2"))
			continue;
		if (mount(src, dir, NULL, MS_BIND, NULL))
			err = mctl_error(c, errno, "%s: cannot bind %s there: %s", dir, c->mount,
					 strerror(errno));
		sys_done |= !strcmp(dir, SYS_FS_CGROUP);
	}
	mounts_free(&m);
	if (!err && !sys_done && is_dir(SYS_FS_CGROUP) &&
	    mount(src, SYS_FS_CGROUP, NULL, MS_BIND, NULL))
		err = mctl_error(c, errno, "%s: cannot bind %s there: %s", SYS_FS_CGROUP, c->mount,
				 strerror(errno));
	return err;
}

/*
 * Every mount of the new namespace a slave of its peer on the host: mounts
 * and unmounts here stay here (an unmount under a shared mount would
 * propagate to the host's).  In a chroot "/" is no mount point: each mount
 * in it, then.
 */
static int make_slave(struct mctl *c)
{
	struct mounts m;
	int err;

	if (!mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		return 0;
	if (errno != EINVAL)
		return mctl_error(c, errno, "/: cannot make its mounts private: %s", strerror(errno));
	err = mounts_read(&m);
	if (err)
		return mctl_error(c, -err, "/proc/self/mounts: %s", strerror(-err));
	for (size_t i = 0; i < m.n && !err; i++)
		if (mount(NULL, m.v[i].dir, NULL, MS_REC | MS_SLAVE, NULL) && errno != ENOENT)
			err = mctl_error(c, errno, "%s: cannot make its mounts private: %s",
					 m.v[i].dir, strerror(errno));
	mounts_free(&m);
	return err;
}

int mctl_sandbox(struct mctl *c)
{
	int fd, err;

	err = mctl_mount(c);
	if (err)
		return err;
	if (unshare(CLONE_NEWNS | CLONE_NEWCGROUP) && (errno != EINVAL || unshare(CLONE_NEWNS)))
		return mctl_error(c, errno, "a private mount namespace: %s%s", strerror(errno),
				  errno == EPERM ? " (sandbox needs CAP_SYS_ADMIN: run it as root)" : "");
	err = make_slave(c);
	if (err)
		return err;
	/*
	 * The namespace's copy of the memcgfs mount (a bind takes a mount of
	 * the caller's namespace), opened before anything moves: it may sit
	 * under /sys/fs/cgroup.
	 */
	fd = open(c->mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return mctl_error(c, errno, "%s: %s", c->mount, strerror(errno));
	err = is_dir(SYS_FS_CGROUP) ? sys_fs_cgroup_v2(c) : 0;
	if (!err)
		err = bind_memcgfs(c, fd);
	close(fd);
	return err;
}
