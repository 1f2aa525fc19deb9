/* SPDX-License-Identifier: MIT */
/*
 * cgfind - a stand-in for a cgroup tool that finds the cgroup v2 tree by
 * itself, as monitoring agents and userspace OOM daemons do: the first
 * cgroup2 entry of /proc/mounts (libcgroup, oomd, bpftool), checked against
 * /sys/fs/cgroup, its own cgroup from /proc/self/cgroup; then it does what
 * such a tool does there.  It knows nothing of memcgfs.
 *
 *   cgfind NAME     one line per step; exit 0, or 1 at the first failure
 *
 * Steps: the mount point; what is on top of it in the table; statfs(2)'s
 * f_type there (cgroup2, fuse or hex); cgroup.controllers; its own cgroup
 * (the "0::" line) and that the directory exists; mkdir NAME; memory.max
 * written (64M) and read back; a user.* extended attribute (an OOM daemon's
 * marker) set and read back; itself moved into NAME (listed in its
 * cgroup.procs); memory.current of NAME.
 */
#include <errno.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CGROUP2_SUPER_MAGIC	0x63677270
#define FUSE_SUPER_MAGIC	0x65735546

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	printf("error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		die("%s: %s", path, strerror(errno));
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f))
		die("%s: cannot write '%s': %s", path, text, strerror(errno));
}

int main(int argc, char **argv)
{
	char line[8192], root[4096] = "", top[64] = "", self[4096] = "", path[8192], buf[4096];
	struct mntent me;
	struct statfs sf;
	struct stat st;
	FILE *f;

	if (argc != 2)
		die("usage: cgfind NAME");
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* the first cgroup2 entry, then the last entry at its point: the top */
	f = setmntent("/proc/mounts", "re");
	if (!f)
		die("/proc/mounts: %s", strerror(errno));
	while (getmntent_r(f, &me, line, sizeof(line))) {
		if (!root[0] && !strcmp(me.mnt_type, "cgroup2"))
			snprintf(root, sizeof(root), "%s", me.mnt_dir);
		if (root[0] && !strcmp(me.mnt_dir, root))
			snprintf(top, sizeof(top), "%s", me.mnt_type);
	}
	endmntent(f);
	if (!root[0])
		die("no cgroup2 entry in /proc/mounts");
	printf("cgroup2 mount: %s\n", root);
	printf("on top of it: %s\n", top);
	if (statfs(root, &sf))
		die("statfs %s: %s", root, strerror(errno));
	if (sf.f_type == CGROUP2_SUPER_MAGIC)
		printf("statfs: cgroup2\n");
	else if (sf.f_type == FUSE_SUPER_MAGIC)
		printf("statfs: fuse\n");
	else
		printf("statfs: 0x%lx\n", (unsigned long)sf.f_type);
	if (strcmp(root, "/sys/fs/cgroup"))
		printf("not at /sys/fs/cgroup\n");
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	read_file(path, buf, sizeof(buf));
	printf("controllers: %s\n", buf);

	/* its own cgroup: the unified hierarchy's "0::PATH" */
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		die("/proc/self/cgroup: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			snprintf(self, sizeof(self), "%.*s", (int)strcspn(line + 3, "\n"), line + 3);
	fclose(f);
	snprintf(path, sizeof(path), "%s%s", root, self);
	printf("self: %s (%s)\n", self, !stat(path, &st) && S_ISDIR(st.st_mode) ? "there" : "missing");

	/* an agent's work */
	snprintf(path, sizeof(path), "%s/%s", root, argv[1]);
	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir %s: %s", path, strerror(errno));
	printf("mkdir %s: ok\n", argv[1]);
	snprintf(path, sizeof(path), "%s/%s/memory.max", root, argv[1]);
	write_file(path, "64M");
	read_file(path, buf, sizeof(buf));
	printf("memory.max: %s\n", buf);
	snprintf(path, sizeof(path), "%s/%s", root, argv[1]);
	if (setxattr(path, "user.oomd_avoid", "1", 1, 0))
		die("setxattr %s user.oomd_avoid: %s", path, strerror(errno));
	memset(buf, 0, sizeof(buf));
	if (getxattr(path, "user.oomd_avoid", buf, sizeof(buf) - 1) < 0)
		die("getxattr %s user.oomd_avoid: %s", path, strerror(errno));
	printf("xattr user.oomd_avoid: %s\n", buf);
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, argv[1]);
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	write_file(path, buf);
	read_file(path, line, sizeof(line));
	{
		char *save = NULL, *pid = strtok_r(line, "\n", &save);

		while (pid && strcmp(pid, buf))
			pid = strtok_r(NULL, "\n", &save);
		printf("moved: %s\n", pid ? "listed in its cgroup.procs" : "not listed");
	}
	snprintf(path, sizeof(path), "%s/%s/memory.current", root, argv[1]);
	read_file(path, buf, sizeof(buf));
	printf("memory.current: %s\n", buf);
	return 0;
}
