/* SPDX-License-Identifier: MIT */
/*
 * minifuse - the smallest libfuse3 low-level filesystem that answers what
 * bench_fs asks of memcgfs, so that the benchmark can say how much of a
 * figure is FUSE itself.  It is bench_fs's yardstick, not a test.
 *
 *   minifuse [-f] [-s] [--threads N] [--stat-size N] [-o FUSE-OPTIONS] MOUNTPOINT
 *
 * The root directory holds two files:
 *   ctl   (0666)  its ioctl handler replies at once: a restricted ioctl's
 *                 input copied back as its output (no work, no allocation
 *                 beyond libfuse's own);
 *   stat  (0444)  N bytes of memory.stat-like text (default 1500), opened
 *                 like memcgfs's files (direct_io, noflush) and read from a
 *                 fixed buffer.
 * The daemon is set up as memcgfs sets itself up, so that the difference is
 * memcgfs's own work: the same libfuse multi-threaded loop with the same
 * worker count (memcgfs's fs.threads default, 10; -s: the single-threaded
 * loop), the same entry and attribute timeouts (1 s), the same open flags,
 * and as root the same allow_other,default_permissions mount options.
 * It always stays in the foreground (-f is accepted for symmetry); SIGTERM,
 * SIGINT or fusermount3 -u end it.
 */
#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INO_ROOT	FUSE_ROOT_ID
#define INO_CTL		2
#define INO_STAT	3
#define TIMEOUT		1.0

static char *stat_text;
static size_t stat_len = 1500;

static int fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = 0;
	st->st_gid = 0;
	switch (ino) {
	case INO_ROOT:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	case INO_CTL:
		st->st_mode = S_IFREG | 0666;
		st->st_nlink = 1;
		return 0;
	case INO_STAT:
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		return 0;	/* size 0, as memcgfs and the kernel report */
	default:
		return -ENOENT;
	}
}

static void mf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	if (parent != INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (!strcmp(name, "ctl"))
		e.ino = INO_CTL;
	else if (!strcmp(name, "stat"))
		e.ino = INO_STAT;
	else {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(e.ino, &e.attr);
	e.attr_timeout = TIMEOUT;
	e.entry_timeout = TIMEOUT;
	fuse_reply_entry(req, &e);
}

static void mf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (fill_attr(ino, &st))
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_attr(req, &st, TIMEOUT);
}

static void mf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == INO_ROOT) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (ino != INO_CTL && ino != INO_STAT) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void mf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void mf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != INO_STAT) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (off < 0 || (size_t)off >= stat_len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > stat_len - (size_t)off)
		size = stat_len - (size_t)off;
	fuse_reply_buf(req, stat_text + off, size);
}

static void mf_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	static const char zeros[16384];

	(void)cmd;
	(void)arg;
	(void)fi;
	if (ino != INO_CTL) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if (out_bufsz > sizeof(zeros)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* _IOWR: the input, unchanged, is the output */
	fuse_reply_ioctl(req, 0, in_bufsz >= out_bufsz ? in_buf : zeros, out_bufsz);
}

static const struct fuse_lowlevel_ops mf_ops = {
	.lookup = mf_lookup,
	.getattr = mf_getattr,
	.open = mf_open,
	.release = mf_release,
	.read = mf_read,
	.ioctl = mf_ioctl,
};

static void usage(void)
{
	fprintf(stderr, "usage: minifuse [-f] [-s] [--threads N] [--stat-size N] "
		"[-o FUSE-OPTIONS] MOUNTPOINT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	const char *mnt = NULL;
	unsigned int threads = 10;
	int single = 0, ret = 1;

	if (fuse_opt_add_arg(&args, argv[0]))
		return 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-f")) {
			continue;
		} else if (!strcmp(a, "-s")) {
			single = 1;
		} else if (!strcmp(a, "--threads") && i + 1 < argc) {
			threads = (unsigned int)strtoul(argv[++i], NULL, 10);
			if (!threads)
				usage();
		} else if (!strcmp(a, "--stat-size") && i + 1 < argc) {
			stat_len = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			if (fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, argv[++i]))
				return 1;
		} else if (a[0] != '-' && !mnt) {
			mnt = a;
		} else {
			usage();
		}
	}
	if (!mnt)
		usage();
	if (fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, "fsname=minifuse,subtype=minifuse"))
		return 1;
	if (geteuid() == 0 && (fuse_opt_add_arg(&args, "-o") ||
			       fuse_opt_add_arg(&args, "allow_other,default_permissions")))
		return 1;

	/* memory.stat-like lines: "name value\n" */
	stat_text = malloc(stat_len + 1);
	if (!stat_text)
		return 1;
	for (size_t n = 0; n < stat_len; ) {
		char line[64];
		int len = snprintf(line, sizeof(line), "stat_%zu %zu\n", n, n * 4096);
		size_t k = (size_t)len < stat_len - n ? (size_t)len : stat_len - n;

		memcpy(stat_text + n, line, k);
		n += k;
	}
	if (stat_len)
		stat_text[stat_len - 1] = '\n';

	se = fuse_session_new(&args, &mf_ops, sizeof(mf_ops), NULL);
	if (!se)
		goto out_args;
	if (fuse_set_signal_handlers(se))
		goto out_session;
	if (fuse_session_mount(se, mnt))
		goto out_signals;
	if (single) {
		ret = fuse_session_loop(se);
	} else {
		cfg = fuse_loop_cfg_create();
		if (!cfg)
			goto out_unmount;
		fuse_loop_cfg_set_max_threads(cfg, threads);
		fuse_loop_cfg_set_idle_threads(cfg, threads);
		ret = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	ret = ret < 0 ? 1 : 0;
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_args:
	fuse_opt_free_args(&args);
	free(stat_text);
	return ret;
}
