/* SPDX-License-Identifier: MIT */
/*
 * mcgtool - the integration tests' C client: system calls a shell cannot
 * make, with errno names a script can compare.
 *
 *   mcgtool ctl FILE REQUEST...        one write per request on one fd, each
 *                                      followed by a read of the reply:
 *                                      "OK <reply>" or "<ERRNO> <reply>"
 *   mcgtool ioctl FILE [CMD]           kmalloc 4 objects (run CMD), free them, and
 *                                      send a malformed batch: one line per step
 *   mcgtool ioctlkmalloc FILE SIZE N   one batch: kmalloc SIZE GFP_KERNEL_ACCOUNT xN;
 *                                      prints the op's errno name (or OK) and the ms taken
 *   mcgtool errno OP ARGS...           OK or the errno name of one call:
 *       write FILE DATA [nonblock]     open O_WRONLY (its failure: "open:ERRNO"),
 *                                      one write(2) of DATA
 *       writefd FILE DATA DATA...      several writes on one fd
 *       read FILE                      open O_RDONLY and read(2)
 *       mkdir|rmdir|unlink|creat|mknod DIR-OR-FILE
 *       rename|symlink|link FROM TO
 *       chmod FILE MODE / chown FILE UID GID / truncate FILE
 *   mcgtool cat FILE [CHUNK]           the whole file in reads of CHUNK bytes
 *   mcgtool pollfresh FILE             revents of poll(POLLPRI) on an fd never read
 *   mcgtool poll FILE MS [CMD]         read FILE whole, run CMD (sh -c), then
 *                                      wait MS for POLLPRI: "PRI" or "TIMEOUT",
 *                                      then "PRI" again only until read again
 *   mcgtool inotify FILE MS [CMD]      watch FILE for IN_MODIFY, run CMD, wait MS:
 *                                      "MODIFY" or "TIMEOUT"
 *   mcgtool inotifycount FILE MS CMD   run CMD in the background, count IN_MODIFY
 *                                      events of FILE for MS after it started"
 *   mcgtool psipoll FILE TRIGGER MS [CMD] write a PSI trigger on an fd, run CMD, wait
 *                                      MS for POLLPRI: "PRI" or "TIMEOUT"
 *   mcgtool readwait FILE SIZE MS      a read that may block, interrupted by a
 *                                      signal after MS: "<n> bytes" or the errno
 *   mcgtool readnb FILE SIZE           one O_NONBLOCK read: bytes or errno
 *   mcgtool pollin FILE MS             poll(POLLIN) on a fresh fd: "IN" or "TIMEOUT"
 *   mcgtool threads N SECONDS          N threads besides the main one, their ids on
 *                                      one line ("PID TID..."), then sleep
 */
#include "memcgfs_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

static int usage(void)
{
	fprintf(stderr, "mcgtool: bad arguments (see the comment at the top of mcgtool.c)\n");
	return 2;
}

static void run(const char *cmd)
{
	pid_t pid;
	int st;

	if (!cmd || !*cmd)
		return;
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

/* Read a reply up to its newline (the protocol's replies are one line). */
static ssize_t read_reply(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		if (r < 0)
			return -1;
		if (!r)
			break;
		n += (size_t)r;
		if (buf[n - 1] == '\n')
			break;
	}
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return (ssize_t)n;
}

static int cmd_ctl(int argc, char **argv)
{
	static char reply[1 << 16];
	int fd = open(argv[0], O_RDWR);

	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		size_t len = strlen(argv[i]);
		char *req = malloc(len + 2);
		ssize_t w;
		int err = 0;

		memcpy(req, argv[i], len);
		req[len] = '\n';
		w = write(fd, req, len + 1);
		if (w < 0)
			err = errno;
		free(req);
		if (read_reply(fd, reply, sizeof(reply)) < 0)
			snprintf(reply, sizeof(reply), "(read: %s)", ename(errno));
		printf("%s %s\n", err ? ename(err) : "OK", reply);
	}
	close(fd);
	return 0;
}

static int cmd_ioctl(int argc, char **argv)
{
	struct memcgfs_ctl_batch_max b;
	uint64_t handles[4];
	int fd;

	if (argc < 1)
		return usage();
	fd = open(argv[0], O_RDWR);
	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	/* kmalloc 64 GFP_KERNEL_ACCOUNT x4, then drain */
	memset(&b, 0, sizeof(b));
	b.hdr.version = MEMCGFS_CTL_VERSION;
	b.hdr.nr_ops = 2;
	b.u.ops[0].op = MEMCGFS_OP_KMALLOC;
	b.u.ops[0].size = 64;
	b.u.ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
	b.u.ops[0].count = 4;
	b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(2);
	b.u.ops[1].op = MEMCGFS_OP_DRAIN;
	if (ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) < 0) {
		printf("alloc ioctl %s\n", ename(errno));
		return 0;
	}
	printf("alloc done=%u failed=%u error=%d\n", b.hdr.nr_done, b.hdr.nr_failed,
	       b.u.ops[0].error);
	memcpy(handles, &b.u.slots[MEMCGFS_CTL_FIRST_SLOT(2)], sizeof(handles));
	fflush(stdout);
	if (argc > 1)
		run(argv[1]);		/* look at the cgroup while they are charged */
	/* free them */
	memset(&b, 0, sizeof(b));
	b.hdr.version = MEMCGFS_CTL_VERSION;
	b.hdr.nr_ops = 2;
	b.u.ops[0].op = MEMCGFS_OP_KFREE;
	b.u.ops[0].count = 4;
	b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(2);
	memcpy(&b.u.slots[MEMCGFS_CTL_FIRST_SLOT(2)], handles, sizeof(handles));
	b.u.ops[1].op = MEMCGFS_OP_DRAIN;
	if (ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) < 0) {
		printf("free ioctl %s\n", ename(errno));
		return 0;
	}
	printf("free done=%u failed=%u error=%d\n", b.hdr.nr_done, b.hdr.nr_failed,
	       b.u.ops[0].error);
	/* the same handles again: stale, EINVAL, nothing freed */
	b.hdr.nr_done = b.hdr.nr_failed = 0;
	b.u.ops[0].error = 0;
	if (ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) < 0)
		printf("stale ioctl %s\n", ename(errno));
	else
		printf("stale error=%s\n", b.u.ops[0].error ? ename(-b.u.ops[0].error) : "0");
	/* a malformed batch fails whole */
	memset(&b, 0, sizeof(b));
	b.hdr.version = 99;
	b.hdr.nr_ops = 1;
	b.u.ops[0].op = MEMCGFS_OP_DRAIN;
	printf("badversion %s\n", ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) < 0 ? ename(errno) : "OK");
	/* not memcgfs's command */
	printf("badcmd %s\n", ioctl(fd, _IOWR('Z', 7, uint64_t), &handles[0]) < 0 ?
	       ename(errno) : "OK");
	close(fd);
	return 0;
}

static int cmd_ioctlkmalloc(int argc, char **argv)
{
	struct memcgfs_ctl_batch_max b;
	struct timespec t0, t1;
	int fd = open(argv[0], O_RDWR);

	(void)argc;
	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.hdr.version = MEMCGFS_CTL_VERSION;
	b.hdr.nr_ops = 1;
	b.u.ops[0].op = MEMCGFS_OP_KMALLOC;
	b.u.ops[0].size = strtoull(argv[1], NULL, 10);
	b.u.ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
	b.u.ops[0].count = (uint16_t)atoi(argv[2]);
	b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) < 0) {
		printf("ioctl:%s\n", ename(errno));
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s %ld\n", b.u.ops[0].error ? ename(-b.u.ops[0].error) : "OK",
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	close(fd);
	return 0;
}

static int open_err(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		printf("open:%s\n", ename(errno));
	return fd;
}

static int cmd_errno(int argc, char **argv)
{
	const char *op;
	int r = 0, fd;

	if (argc < 2)
		return usage();
	op = argv[0];
	if (!strcmp(op, "write") || !strcmp(op, "writefd")) {
		int flags = O_WRONLY;

		if (!strcmp(op, "write") && argc > 3 && !strcmp(argv[3], "nonblock"))
			flags |= O_NONBLOCK;
		fd = open_err(argv[1], flags);
		if (fd < 0)
			return 0;
		for (int i = 2; i < argc && (!strcmp(op, "writefd") || i == 2); i++) {
			ssize_t w = write(fd, argv[i], strlen(argv[i]));

			if (w < 0)
				printf("%s\n", ename(errno));
			else if ((size_t)w != strlen(argv[i]))
				printf("SHORT %zd\n", w);
			else
				printf("OK\n");
		}
		close(fd);
		return 0;
	}
	if (!strcmp(op, "read")) {
		char buf[65536];

		fd = open_err(argv[1], O_RDONLY);
		if (fd < 0)
			return 0;
		r = read(fd, buf, sizeof(buf)) < 0 ? -1 : 0;
		printf("%s\n", r ? ename(errno) : "OK");
		close(fd);
		return 0;
	}
	if (!strcmp(op, "mkdir"))
		r = mkdir(argv[1], 0755);
	else if (!strcmp(op, "rmdir"))
		r = rmdir(argv[1]);
	else if (!strcmp(op, "unlink"))
		r = unlink(argv[1]);
	else if (!strcmp(op, "creat"))
		r = (fd = creat(argv[1], 0644)) < 0 ? -1 : close(fd);
	else if (!strcmp(op, "mknod"))
		r = mknod(argv[1], S_IFIFO | 0644, 0);
	else if (!strcmp(op, "truncate"))
		r = truncate(argv[1], 0);
	else if (!strcmp(op, "rename") && argc > 2)
		r = rename(argv[1], argv[2]);
	else if (!strcmp(op, "symlink") && argc > 2)
		r = symlink(argv[1], argv[2]);
	else if (!strcmp(op, "link") && argc > 2)
		r = link(argv[1], argv[2]);
	else if (!strcmp(op, "chmod") && argc > 2)
		r = chmod(argv[1], (mode_t)strtoul(argv[2], NULL, 8));
	else if (!strcmp(op, "chown") && argc > 3)
		r = chown(argv[1], (uid_t)atoi(argv[2]), (gid_t)atoi(argv[3]));
	else
		return usage();
	printf("%s\n", r ? ename(errno) : "OK");
	return 0;
}

static int cmd_cat(int argc, char **argv)
{
	size_t chunk = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
	char *buf = malloc(chunk ? chunk : 1);
	int fd = open_err(argv[0], O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, chunk)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	if (n < 0)
		printf("read:%s\n", ename(errno));
	close(fd);
	free(buf);
	return 0;
}

static void drain_fd(int fd)
{
	char buf[65536];

	lseek(fd, 0, SEEK_SET);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static const char *pri(short rev)
{
	static char s[64];

	snprintf(s, sizeof(s), "%s%s%s%s", rev & POLLPRI ? "PRI" : "", rev & POLLERR ? "|ERR" : "",
		 rev & POLLIN ? "|IN" : "", rev & POLLOUT ? "|OUT" : "");
	return s[0] ? s : "0";
}

static int cmd_pollfresh(int argc, char **argv)
{
	struct pollfd p = { .events = POLLPRI };

	(void)argc;
	p.fd = open_err(argv[0], O_RDONLY);
	if (p.fd < 0)
		return 0;
	poll(&p, 1, 0);
	printf("%s\n", pri(p.revents));
	drain_fd(p.fd);
	p.revents = 0;
	poll(&p, 1, 0);
	printf("%s\n", pri(p.revents));
	close(p.fd);
	return 0;
}

static int cmd_poll(int argc, char **argv)
{
	struct pollfd p = { .events = POLLPRI };
	int ms = argc > 1 ? atoi(argv[1]) : 1000;

	p.fd = open_err(argv[0], O_RDONLY);
	if (p.fd < 0)
		return 0;
	drain_fd(p.fd);
	if (argc > 2)
		run(argv[2]);
	if (poll(&p, 1, ms) == 1 && (p.revents & POLLPRI)) {
		printf("PRI\n");
		/* still pending until this fd reads again */
		p.revents = 0;
		poll(&p, 1, 0);
		printf("%s\n", p.revents & POLLPRI ? "PRI" : "0");
		drain_fd(p.fd);
		p.revents = 0;
		poll(&p, 1, 0);
		printf("%s\n", p.revents & POLLPRI ? "PRI" : "0");
	} else {
		printf("TIMEOUT\n");
	}
	close(p.fd);
	return 0;
}

static int cmd_inotify(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 1000;
	int in = inotify_init1(IN_CLOEXEC);
	struct pollfd p;
	char buf[4096] __attribute__((aligned(8)));

	if (in < 0 || inotify_add_watch(in, argv[0], IN_MODIFY) < 0) {
		printf("inotify:%s\n", ename(errno));
		return 0;
	}
	if (argc > 2)
		run(argv[2]);
	p.fd = in;
	p.events = POLLIN;
	if (poll(&p, 1, ms) == 1 && read(in, buf, sizeof(buf)) > 0) {
		const struct inotify_event *ev = (const void *)buf;

		printf("%s\n", ev->mask & IN_MODIFY ? "MODIFY" : "OTHER");
	} else {
		printf("TIMEOUT\n");
	}
	close(in);
	return 0;
}

static int cmd_inotifycount(int argc, char **argv)
{
	int ms = atoi(argv[1]), count = 0;
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	struct timespec t0, t;
	pid_t pid;

	(void)argc;
	if (in < 0 || inotify_add_watch(in, argv[0], IN_MODIFY) < 0) {
		printf("inotify:%s\n", ename(errno));
		return 0;
	}
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", argv[2], (char *)NULL);
		_exit(127);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = in, .events = POLLIN };
		char buf[4096] __attribute__((aligned(8)));
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) != 1)
			continue;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			for (char *q = buf; q < buf + n;) {
				const struct inotify_event *ev = (const void *)q;

				count += !!(ev->mask & IN_MODIFY);
				q += sizeof(*ev) + ev->len;
			}
	}
	waitpid(pid, NULL, 0);
	printf("%d\n", count);
	close(in);
	return 0;
}

static int cmd_psipoll(int argc, char **argv)
{
	struct pollfd p = { .events = POLLPRI };

	p.fd = open_err(argv[0], O_RDWR);
	if (p.fd < 0)
		return 0;
	if (write(p.fd, argv[1], strlen(argv[1])) < 0) {
		printf("write:%s\n", ename(errno));
		return 0;
	}
	if (argc > 3)
		run(argv[3]);
	printf("%s\n", poll(&p, 1, atoi(argv[2])) == 1 && (p.revents & POLLPRI) ? "PRI" : "TIMEOUT");
	close(p.fd);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int cmd_readwait(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
	int ms = argc > 2 ? atoi(argv[2]) : 500;
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	char *buf = malloc(size);
	ssize_t n;
	int fd;

	sigaction(SIGALRM, &sa, NULL);
	fd = open_err(argv[0], O_RDONLY);
	if (fd < 0)
		return 0;
	ualarm((useconds_t)ms * 1000, 0);
	n = read(fd, buf, size);
	if (n < 0)
		printf("%s\n", ename(errno));
	else
		printf("%zd bytes\n", n);
	close(fd);
	free(buf);
	return 0;
}

static int cmd_readnb(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
	char *buf = malloc(size);
	int fd = open_err(argv[0], O_RDONLY | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, size);
	if (n < 0)
		printf("%s\n", ename(errno));
	else
		printf("%zd bytes\n", n);
	close(fd);
	free(buf);
	return 0;
}

static int cmd_pollin(int argc, char **argv)
{
	struct pollfd p = { .events = POLLIN };
	int ms = argc > 1 ? atoi(argv[1]) : 1000;

	p.fd = open_err(argv[0], O_RDONLY);
	if (p.fd < 0)
		return 0;
	printf("%s\n", poll(&p, 1, ms) == 1 && (p.revents & POLLIN) ? "IN" : "TIMEOUT");
	close(p.fd);
	return 0;
}

static void *sleeper(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, gettid(), __ATOMIC_RELEASE);	/* main polls it */
	for (;;)
		pause();
	return NULL;
}

static int cmd_threads(int argc, char **argv)
{
	int n = atoi(argv[0]);
	pid_t tids[64] = { 0 };

	if (n < 1 || n > 64)
		return usage();
	for (int i = 0; i < n; i++) {
		pthread_t t;

		pthread_create(&t, NULL, sleeper, &tids[i]);
	}
	for (int i = 0; i < n; i++)
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
			usleep(1000);
	printf("%d", getpid());
	for (int i = 0; i < n; i++)
		printf(" %d", tids[i]);
	printf("\n");
	fflush(stdout);
	sleep((unsigned int)(argc > 1 ? atoi(argv[1]) : 30));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
		int min;
	} cmds[] = {
		{ "ctl", cmd_ctl, 1 }, { "ioctl", cmd_ioctl, 1 }, { "errno", cmd_errno, 2 },
		{ "ioctlkmalloc", cmd_ioctlkmalloc, 3 },
		{ "cat", cmd_cat, 1 }, { "pollfresh", cmd_pollfresh, 1 }, { "poll", cmd_poll, 1 },
		{ "inotify", cmd_inotify, 1 }, { "inotifycount", cmd_inotifycount, 3 },
		{ "readwait", cmd_readwait, 1 }, { "psipoll", cmd_psipoll, 3 },
		{ "readnb", cmd_readnb, 1 }, { "pollin", cmd_pollin, 1 },
		{ "threads", cmd_threads, 1 },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return argc - 2 < cmds[i].min ? usage() : cmds[i].fn(argc - 2, argv + 2);
	return usage();
}
