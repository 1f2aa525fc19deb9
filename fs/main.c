/* SPDX-License-Identifier: MIT */
/*
 * main.c - the memcgfs command line.
 *
 *   memcgfs [options] [SOURCE] MOUNTPOINT
 *
 * SOURCE is what mount(8) passes through mount.fuse3 ("memcgfs" in
 * "mount -t fuse.memcgfs memcgfs /mnt/cg" or an fstab line) and is
 * ignored.  -o takes memcgfs's configuration keys (KEY=VALUE or
 * SECTION.KEY=VALUE, and config=FILE) and FUSE's mount options alike: a
 * KEY=VALUE whose key conf/ does not know goes to libfuse, which refuses
 * what it does not know either.  The file is loaded first, then the keys in
 * command-line order, then the whole is validated.
 */
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MEMCGFS_VERSION
#define MEMCGFS_VERSION "unknown"
#endif

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options] [SOURCE] MOUNTPOINT\n"
		"\n"
		"Mount memcgfs, a cgroup v2 memory controller in user space, on MOUNTPOINT.\n"
		"\n"
		"options:\n"
		"    -f                     stay in the foreground (log to stderr)\n"
		"    -d                     debug: libfuse's request trace, debug messages; implies -f\n"
		"    -o config=FILE         load a configuration file (default: built-in values,\n"
		"                           documented in memcgfs.ini)\n"
		"    --config FILE          the same\n"
		"    -o KEY=VALUE           set one configuration key (or SECTION.KEY=VALUE), e.g.\n"
		"                           -o memory=4G, -o root_subtree_control=, -o threads=4\n"
		"    -o OPTION[,OPTION...]  FUSE mount options (ro, allow_other, ...)\n"
		"    -h, --help             this help\n"
		"    -V, --version          the version\n"
		"\n"
		"Run as root, memcgfs mounts with allow_other and default_permissions.\n"
		"From mount(8) or /etc/fstab: mount -t fuse.memcgfs memcgfs MOUNTPOINT\n"
		"  fstab: memcgfs  /mnt/cg  fuse.memcgfs  defaults  0  0\n"
		"Unmount with fusermount3 -u MOUNTPOINT (or umount as root), or send SIGTERM.\n",
		prog);
}

struct cmdline {
	const char *config;
	char **keys;			/* "key=value", in order */
	int nkeys;
	char *fuse_opts;		/* comma-joined */
	const char *pos[3];
	int npos;
	bool foreground, debug;
};

static int add_fuse_opt(struct cmdline *cl, const char *opt)
{
	size_t old = cl->fuse_opts ? strlen(cl->fuse_opts) : 0;
	char *p = realloc(cl->fuse_opts, old + strlen(opt) + 2);

	if (!p)
		return -ENOMEM;
	if (old)
		p[old++] = ',';
	strcpy(p + old, opt);
	cl->fuse_opts = p;
	return 0;
}

/* Is key one of conf/'s?  conf_set() says "unknown key '...'" when not. */
static bool conf_knows(const char *key)
{
	struct memcgfs_config scratch;
	char err[128];

	conf_defaults(&scratch);
	if (!conf_set(&scratch, key, "", err, sizeof(err)))
		return true;
	return strncmp(err, "unknown key", 11) != 0;
}

static int parse_o(struct cmdline *cl, char *opts)
{
	char *opt, *save = NULL;

	for (opt = strtok_r(opts, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(opt, '=');
		int err;

		if (eq && !strncmp(opt, "config=", 7)) {
			cl->config = opt + 7;
			continue;
		}
		if (eq) {
			*eq = '\0';
			if (conf_knows(opt)) {
				char **k = realloc(cl->keys, sizeof(*k) * (size_t)(cl->nkeys + 1));

				*eq = '=';
				if (!k)
					return -ENOMEM;
				cl->keys = k;
				cl->keys[cl->nkeys++] = opt;
				continue;
			}
			*eq = '=';
		}
		err = add_fuse_opt(cl, opt);
		if (err)
			return err;
	}
	return 0;
}

static int parse_args(struct cmdline *cl, int argc, char *argv[])
{
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout, argv[0]);
			exit(0);
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("memcgfs %s (libfuse %s)\n", MEMCGFS_VERSION, fuse_pkgversion());
			exit(0);
		} else if (!strcmp(a, "-f")) {
			cl->foreground = true;
		} else if (!strcmp(a, "-d") || !strcmp(a, "--debug")) {
			cl->debug = true;
			cl->foreground = true;
		} else if (!strcmp(a, "-o")) {
			if (++i == argc) {
				fprintf(stderr, "memcgfs: error: -o needs an argument\n");
				return -EINVAL;
			}
			if (parse_o(cl, argv[i]))
				return -ENOMEM;
		} else if (!strncmp(a, "-o", 2)) {
			if (parse_o(cl, a + 2))
				return -ENOMEM;
		} else if (!strcmp(a, "--config")) {
			if (++i == argc) {
				fprintf(stderr, "memcgfs: error: --config needs a file\n");
				return -EINVAL;
			}
			cl->config = argv[i];
		} else if (!strncmp(a, "--config=", 9)) {
			cl->config = a + 9;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "memcgfs: error: unknown option '%s' (see --help)\n", a);
			return -EINVAL;
		} else {
			if (cl->npos == 2) {
				fprintf(stderr, "memcgfs: error: too many arguments (see --help)\n");
				return -EINVAL;
			}
			cl->pos[cl->npos++] = a;
		}
	}
	if (!cl->npos) {
		fprintf(stderr, "memcgfs: error: no mountpoint (see --help)\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * A missing mountpoint directly under /run is made, as systemd makes a
 * unit's RuntimeDirectory: /run is a tmpfs emptied at every boot, so
 * "memcgfs /run/memcgfs" would otherwise fail on each fresh boot.  Anywhere
 * else a missing directory is the user's mistake and stays an error.
 * Returns true when it made the directory (removed again after unmount).
 */
static bool make_run_mountpoint(const char *path)
{
	const char *name = path + strlen("/run/");

	if (strncmp(path, "/run/", 5) || !*name || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	if (mkdir(path, 0755)) {
		fprintf(stderr, "memcgfs: error: cannot make the mountpoint %s: %s\n",
			path, strerror(errno));
		return false;
	}
	return true;
}

static int build_config(const struct cmdline *cl, struct memcgfs_config *conf)
{
	char err[512];

	conf_defaults(conf);
	if (cl->config && conf_load(conf, cl->config, err, sizeof(err))) {
		fprintf(stderr, "memcgfs: error: %s\n", err);
		return -EINVAL;
	}
	for (int i = 0; i < cl->nkeys; i++) {
		char *eq = strchr(cl->keys[i], '=');
		int ret;

		*eq = '\0';
		ret = conf_set(conf, cl->keys[i], eq + 1, err, sizeof(err));
		*eq = '=';
		if (ret) {
			fprintf(stderr, "memcgfs: error: -o %s: %s\n", cl->keys[i], err);
			return -EINVAL;
		}
	}
	if (conf_validate(conf, err, sizeof(err))) {
		fprintf(stderr, "memcgfs: error: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	struct cmdline cl = { 0 };
	struct fs_options o = { 0 };
	char mnt[PATH_MAX];
	char *fargv[8];
	int fargc = 0, status;
	bool made_mnt = false;

	if (parse_args(&cl, argc, argv) || build_config(&cl, &o.conf)) {
		free(cl.keys);
		return 1;
	}
	if (!realpath(cl.pos[cl.npos - 1], mnt) && errno == ENOENT &&
	    make_run_mountpoint(cl.pos[cl.npos - 1]))
		made_mnt = realpath(cl.pos[cl.npos - 1], mnt) != NULL;
	if (!made_mnt && !realpath(cl.pos[cl.npos - 1], mnt)) {
		fprintf(stderr, "memcgfs: error: %s: %s\n", cl.pos[cl.npos - 1], strerror(errno));
		return 1;
	}
	/* libfuse's arguments: fsname/subtype for /proc/mounts, then the user's */
	if (add_fuse_opt(&cl, "fsname=memcgfs") || add_fuse_opt(&cl, "subtype=memcgfs"))
		return 1;
	fs_default_permissions = geteuid() == 0 && o.conf.fs.allow_other;
	if (fs_default_permissions && add_fuse_opt(&cl, "allow_other,default_permissions"))
		return 1;
	fargv[fargc++] = argv[0];
	if (cl.debug)
		fargv[fargc++] = "-d";
	fargv[fargc++] = "-o";
	fargv[fargc++] = cl.fuse_opts;
	fargv[fargc] = NULL;

	o.mountpoint = mnt;
	o.foreground = cl.foreground;
	o.debug = cl.debug;
	o.fuse_argc = fargc;
	o.fuse_argv = fargv;
	o.ready_fd = -1;
	status = fs_run(&o);
	if (made_mnt && rmdir(mnt)) {
		/* someone put something in it, or mounted on it again: leave it */
	}
	free(cl.fuse_opts);
	free(cl.keys);
	return status;
}
