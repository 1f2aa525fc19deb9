/* SPDX-License-Identifier: MIT */
/*
 * client/util.c - memcgctl's helpers: messages that say what went wrong,
 * the mount and cgroup paths, reading cgroup files, sizes for people and
 * JSON strings.
 */
#include "memcgctl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *mctl_errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);

	return n ? n : "EIO";
}

/* "memcgctl: WHAT (ERRNAME)" on stderr; returns EXIT_FAIL */
int mctl_error(const struct mctl *c, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", c->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, " (%s)", mctl_errname(err));
	fputc('\n', stderr);
	return EXIT_FAIL;
}

/* "memcgctl CMD: WHAT" and a pointer to --help; returns EXIT_USAGE */
int mctl_usage_error(const struct mctl *c, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", c->prog, cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s%s%s --help'.\n", c->prog, cmd ? " " : "", cmd ? cmd : "");
	return EXIT_USAGE;
}

int mctl_mount(struct mctl *c)
{
	int err;

	if (c->mount[0])
		return 0;
	err = memcgfs_find_mount(c->mount_arg, c->mount, sizeof(c->mount));
	if (!err)
		return 0;
	c->mount[0] = '\0';
	if (err == -ENODEV)
		return mctl_error(c, 0, "no memcgfs mount found (mount one: memcgfs MOUNTPOINT; or "
				  "name it: -m MOUNT or MEMCGFS_MOUNT)");
	{
		const char *m = c->mount_arg ? c->mount_arg : getenv("MEMCGFS_MOUNT");

		if (err == -ENOENT)
			return mctl_error(c, 0, "%s: not a memcgfs mount (no memcgfs.ctl)", m);
		return mctl_error(c, err, "%s: %s", m, strerror(-err));
	}
}

/*
 * The directory of cgroup @arg: a path on a memcgfs mount as it is, else a
 * cgroup path ("a/b", "/a/b", "/" or NULL for the root) under the mount.
 */
int mctl_cgroup_path(struct mctl *c, const char *arg, char *path, size_t len)
{
	struct stat st;
	int err;

	if (arg && arg[0] == '/' && strcmp(arg, "/") && !stat(arg, &st) && S_ISDIR(st.st_mode)) {
		char mnt[MEMCGFS_PATH_MAX];

		if (!memcgfs_find_mount(arg, mnt, sizeof(mnt)) && !strncmp(arg, mnt, strlen(mnt))) {
			if (!c->mount[0] || strncmp(arg, c->mount, strlen(c->mount)))
				snprintf(c->mount, sizeof(c->mount), "%s", mnt);
			snprintf(path, len, "%s", arg);
			for (size_t l = strlen(path); l > 1 && path[l - 1] == '/'; l--)
				path[l - 1] = '\0';
			return 0;
		}
	}
	err = mctl_mount(c);
	if (err)
		return err;
	while (arg && *arg == '/')
		arg++;
	if (!arg || !*arg)
		snprintf(path, len, "%s", c->mount);
	else if ((size_t)snprintf(path, len, "%s/%s", c->mount, arg) >= len)
		return mctl_error(c, ENAMETOOLONG, "%s: path too long", arg);
	for (size_t l = strlen(path); l > 1 && path[l - 1] == '/'; l--)
		path[l - 1] = '\0';
	if (stat(path, &st))
		return mctl_error(c, errno, "%s: no such cgroup", path);
	if (!S_ISDIR(st.st_mode))
		return mctl_error(c, ENOTDIR, "%s: not a cgroup", path);
	return 0;
}

/* The cgroup path of a directory on the mount: "/" or "/a/b". */
const char *mctl_cgroup_name(const struct mctl *c, const char *path)
{
	size_t l = strlen(c->mount);

	if (!strncmp(path, c->mount, l) && (path[l] == '/' || !path[l]))
		return path[l] ? path + l : "/";
	return path;
}

int mctl_read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!r)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}

/* A number, or "max" (CG_UNLIMITED). */
int mctl_read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;
	int n = mctl_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (!strncmp(buf, "max", 3)) {
		*v = CG_UNLIMITED;
		return 0;
	}
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EPROTO;
	return 0;
}

/* The value of "KEY N" in a flat-keyed file. */
int mctl_read_keyed(const char *path, const char *key, uint64_t *v)
{
	char buf[8192];
	size_t kl = strlen(key);
	int n = mctl_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, key, kl) && l[kl] == ' ') {
			*v = strtoull(l + kl + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

void mctl_read_mem(const char *dir, struct cg_mem *m)
{
	char p[MEMCGFS_PATH_MAX + 64], buf[65536];
	int n;

	memset(m, 0, sizeof(*m));
	snprintf(p, sizeof(p), "%s/memory.current", dir);
	m->has_memory = !mctl_read_u64(p, &m->current);
	if (m->has_memory) {
		snprintf(p, sizeof(p), "%s/memory.peak", dir);
		mctl_read_u64(p, &m->peak);
		snprintf(p, sizeof(p), "%s/memory.high", dir);
		if (mctl_read_u64(p, &m->high))
			m->high = CG_UNLIMITED;
		snprintf(p, sizeof(p), "%s/memory.max", dir);
		if (mctl_read_u64(p, &m->max))
			m->max = CG_UNLIMITED;
		snprintf(p, sizeof(p), "%s/memory.events", dir);
		mctl_read_keyed(p, "low", &m->ev_low);
		mctl_read_keyed(p, "high", &m->ev_high);
		mctl_read_keyed(p, "max", &m->ev_max);
		mctl_read_keyed(p, "oom", &m->ev_oom);
		mctl_read_keyed(p, "oom_kill", &m->ev_oom_kill);
		mctl_read_keyed(p, "oom_group_kill", &m->ev_oom_group_kill);
	}
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	n = mctl_read_file(p, buf, sizeof(buf));
	for (int i = 0; i < n; i++)
		m->nr_procs += buf[i] == '\n';
}

/* Sizes as ls -h prints them (1024-based), or exact bytes with --bytes. */
void mctl_size(const struct mctl *c, char *buf, size_t len, uint64_t v)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	if (c->bytes || v < 1024) {
		snprintf(buf, len, "%" PRIu64 "%s", v, c->bytes || !v ? "" : "B");
		return;
	}
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (d < 9.95)
		snprintf(buf, len, "%.1f%c", d, units[u]);
	else
		snprintf(buf, len, "%.0f%c", d, units[u]);
}

void mctl_limit(const struct mctl *c, char *buf, size_t len, uint64_t v)
{
	if (v == CG_UNLIMITED)
		snprintf(buf, len, "max");
	else
		mctl_size(c, buf, len, v);
}

/* The nonzero memory.events as "max=3 oom=1", "-" when none. */
void mctl_events(char *buf, size_t len, const struct cg_mem *m)
{
	const struct {
		const char *name;
		uint64_t v;
	} ev[] = {
		{ "low", m->ev_low }, { "high", m->ev_high }, { "max", m->ev_max },
		{ "oom", m->ev_oom }, { "oom_kill", m->ev_oom_kill },
		{ "oom_group_kill", m->ev_oom_group_kill },
	};
	size_t pos = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		if (!ev[i].v || pos >= len)
			continue;
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s=%" PRIu64, pos ? " " : "",
					ev[i].name, ev[i].v);
	}
	if (!pos)
		snprintf(buf, len, "-");
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* A limit: its bytes, or "max" as the file says. */
void json_limit(FILE *f, uint64_t v)
{
	if (v == CG_UNLIMITED)
		fputs("\"max\"", f);
	else
		fprintf(f, "%" PRIu64, v);
}

bool mctl_is_subdir(const char *dir, const char *name)
{
	char p[MEMCGFS_PATH_MAX + 256];
	struct stat st;

	if (name[0] == '.')
		return false;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return !lstat(p, &st) && S_ISDIR(st.st_mode);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The child cgroups of dir, sorted by name. */
int mctl_list_children(const char *dir, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0;
	char **v = NULL;

	*names = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (!mctl_is_subdir(dir, e->d_name))
			continue;
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		v[*n] = strdup(e->d_name);
		if (v[*n])
			(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_names);
	*names = v;
	return 0;
}

void mctl_free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
