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
 *   mcgtool lat FILE text|ioctl N [alloc [COUNT]]  N requests, each on a fresh fd
 *                                      (open, request, reply, close): whoami, or with
 *                                      alloc kmalloc 4096 GFP_KERNEL_ACCOUNT xCOUNT (64);
 *                                      "n=N fail=F p50=MS p99=MS max=MS"
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
 *                                      events of FILE for MS after it started:
 *                                      "COUNT CMD_MS" (CMD_MS: how long CMD ran)
 *   mcgtool psipoll FILE TRIGGER MS [CMD] write a PSI trigger on an fd, run CMD, wait
 *                                      MS for POLLPRI: "PRI" or "TIMEOUT"
 *   mcgtool pollgone FILE TRIGGER MS CMD  an fd whose file goes away under a blocked
 *                                      poll: write TRIGGER on it ("-": none, opened
 *                                      read-only), read it whole, poll(POLLPRI) for
 *                                      MS while CMD runs 300 ms in; one line each:
 *                                      that poll's revents if it was woken ("PRI|ERR";
 *                                      "EARLY ..." before CMD), else "TIMEOUT" (what
 *                                      poll's last look at the timeout found does not
 *                                      count), a poll without waiting, "read:OK|ERRNO",
 *                                      and with a TRIGGER "write:OK|ERRNO" of it again
 *   mcgtool readwait FILE SIZE MS      a read that may block, interrupted by a
 *                                      signal after MS: "<n> bytes" or the errno
 *   mcgtool writewait FILE DATA MS     one write(2) of DATA, interrupted by a signal
 *                                      after MS: "OK <ms>" or "<ERRNO> <ms>"
 *   mcgtool readnb FILE SIZE           one O_NONBLOCK read: bytes or errno
 *   mcgtool pollin FILE MS             poll(POLLIN) on a fresh fd: "IN" or "TIMEOUT"
 *   mcgtool threads N SECONDS          N threads besides the main one, their ids on
 *                                      one line ("PID TID..."), then sleep
 *   mcgtool cats FILE...               each file whole after a "== FILE" line
 *   mcgtool ctlx FILE BYTES...         as ctl, but each request is BYTES with C escapes
 *                                      (\n \t \r \0 \\ \xHH) and no newline added
 *   mcgtool errno writex FILE BYTES... several writes of escaped BYTES on one fd
 *   mcgtool ioctlcase FILE CASE [HANDLE...]  one malformed or refused batch (see
 *                                      ioctl_cases[]): "ioctl:ERRNO" when the ioctl
 *                                      fails whole, else "done=D failed=F ERRNO..."
 *                                      (each operation's result, OK for 0)
 *   mcgtool ioctlfree FILE OP [CACHE] HANDLE...  one ioctl per handle (OP kfree,
 *                                      cache, pages or mark: mark_page_accessed),
 *                                      each result on a line; with
 *                                      $MCG_GO set, first waits until that file exists
 *   mcgtool ctlseek FILE               memcgfs.ctl's file positions: a reply read
 *                                      ahead and given back with lseek, pread, a
 *                                      failed write, pwrite; one line per step
 *   mcgtool xattr PATH OP ARGS...      one extended attribute call: "OK [RESULT]" or
 *                                      the errno name
 *       set NAME VALUE [create|replace]   (VALUE "-": empty; "@N": N bytes of 'x')
 *       get NAME [SIZE]                the value (SIZE 0: its length; default 64 KiB)
 *       list [SIZE]                    the names, comma-separated (SIZE 0: the length)
 *       remove NAME
 *       fill PREFIX N BYTES            set PREFIX0 ... with BYTES-byte values until N
 *                                      are set or one fails: "set K [ERRNO]"
 */
#include <memcgfs/ctl.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
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
	int tries = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		/* a read the daemon could not allocate for consumed nothing (t_fault) */
		if (r < 0 && errno == ENOMEM && ++tries < 100)
			continue;
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

/* C escapes: \n \t \r \0 \\ \xHH; returns the length */
static size_t unescape(const char *in, char *out)
{
	size_t n = 0;

	while (*in) {
		if (*in != '\\' || !in[1]) {
			out[n++] = *in++;
			continue;
		}
		in++;
		switch (*in) {
		case 'n': out[n++] = '\n'; in++; break;
		case 't': out[n++] = '\t'; in++; break;
		case 'r': out[n++] = '\r'; in++; break;
		case '0': out[n++] = '\0'; in++; break;
		case 'x': {
			char hex[3] = { 0 };

			in++;
			for (int i = 0; i < 2 && *in; i++)
				hex[i] = *in++;
			out[n++] = (char)strtoul(hex, NULL, 16);
			break;
		}
		default: out[n++] = *in++; break;
		}
	}
	return n;
}

static int cmd_ctlx(int argc, char **argv)
{
	static char reply[1 << 16];
	int fd = open(argv[0], O_RDWR);

	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		char *req = malloc(strlen(argv[i]) + 1);
		size_t len = unescape(argv[i], req);
		ssize_t w = write(fd, req, len);
		int err = w < 0 ? errno : 0;

		free(req);
		if (read_reply(fd, reply, sizeof(reply)) < 0)
			snprintf(reply, sizeof(reply), "(read: %s)", ename(errno));
		printf("%s %s\n", err ? ename(err) : "OK", reply);
	}
	close(fd);
	return 0;
}

/* ---- malformed and refused batches ---- */
static void batch_init(struct memcgfs_ctl_batch_max *b, unsigned int nr_ops)
{
	memset(b, 0, sizeof(*b));
	b->hdr.version = MEMCGFS_CTL_VERSION;
	b->hdr.nr_ops = (uint16_t)nr_ops;
}

/* a NUL-terminated string at a slot */
static void put_string(struct memcgfs_ctl_batch_max *b, unsigned int slot, const char *s)
{
	memcpy(b->u.bytes + slot * 8, s, strlen(s) + 1);
}

static uint64_t handle_arg(int argc, char **argv, int i)
{
	return i < argc ? strtoull(argv[i], NULL, 16) : 0;
}

/*
 * Each case fills b (one op unless it says otherwise) and may change the
 * command; argv holds handles (hex) some cases use.
 */
static int ioctl_case(const char *name, struct memcgfs_ctl_batch_max *b, unsigned long *cmd,
		      int argc, char **argv)
{
	struct memcgfs_ctl_op *op = &b->u.ops[0];
	unsigned int first = MEMCGFS_CTL_FIRST_SLOT(1);

	batch_init(b, 1);
	*cmd = MEMCGFS_IOC_BATCH_MAX;
	op->op = MEMCGFS_OP_DRAIN;
	/* the ioctl fails whole */
	if (!strcmp(name, "cmd-type"))
		*cmd = _IOC(_IOC_READ | _IOC_WRITE, 'Z', MEMCGFS_IOC_NR_BATCH, sizeof(*b));
	else if (!strcmp(name, "cmd-nr"))
		*cmd = _IOC(_IOC_READ | _IOC_WRITE, MEMCGFS_IOC_MAGIC, 2, sizeof(*b));
	else if (!strcmp(name, "cmd-write-only"))
		*cmd = _IOC(_IOC_WRITE, MEMCGFS_IOC_MAGIC, MEMCGFS_IOC_NR_BATCH, sizeof(*b));
	else if (!strcmp(name, "cmd-read-only"))
		*cmd = _IOC(_IOC_READ, MEMCGFS_IOC_MAGIC, MEMCGFS_IOC_NR_BATCH, sizeof(*b));
	else if (!strcmp(name, "cmd-no-dir"))
		*cmd = _IOC(_IOC_NONE, MEMCGFS_IOC_MAGIC, MEMCGFS_IOC_NR_BATCH, 0);
	else if (!strcmp(name, "size-small"))
		*cmd = MEMCGFS_IOC_BATCH(MEMCGFS_CTL_MIN_SIZE - 8);
	else if (!strcmp(name, "size-odd"))
		*cmd = MEMCGFS_IOC_BATCH(MEMCGFS_CTL_MIN_SIZE + 4);
	else if (!strcmp(name, "size-over"))
		*cmd = MEMCGFS_IOC_BATCH(16383);
	else if (!strcmp(name, "version-0"))
		b->hdr.version = 0;
	else if (!strcmp(name, "version-2"))
		b->hdr.version = 2;
	else if (!strcmp(name, "hdr-flags"))
		b->hdr.flags = 1;
	else if (!strcmp(name, "hdr-reserved"))
		b->hdr.reserved = 1;
	else if (!strcmp(name, "nr-ops-0"))
		b->hdr.nr_ops = 0;
	else if (!strcmp(name, "nr-ops-past-size")) {
		b->hdr.nr_ops = 3;	/* a batch_one holds 2 operations at most */
		*cmd = MEMCGFS_IOC_BATCH(MEMCGFS_CTL_BATCH_SIZE(1, 4));
	} else if (!strcmp(name, "nr-ops-max"))
		b->hdr.nr_ops = 65535;
	/* one operation fails */
	else if (!strcmp(name, "op-0"))
		op->op = 0;
	else if (!strcmp(name, "op-unknown"))
		op->op = 99;
	else if (!strcmp(name, "opflags")) {
		op->opflags = 0x80;
	} else if (!strcmp(name, "kmalloc-size-0")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "kmalloc-size-huge") || !strcmp(name, "kmalloc-size-max") ||
		   !strcmp(name, "kmalloc-size-over")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->slot = (uint16_t)first;
		op->size = name[13] == 'h' ? UINT64_MAX : name[13] == 'm' ? (1ull << 32) + 64 :
			   (4u << 20) + 1;
	} else if (!strcmp(name, "kmalloc-count-1025")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->size = 8;
		op->count = 1025;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "kmalloc-count-past-end")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->size = 8;
		op->count = (uint16_t)(MEMCGFS_CTL_MAX_WORDS - first + 1);
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "kmalloc-slot-on-ops")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->size = 8;
		op->slot = 0;
	} else if (!strcmp(name, "kmalloc-slot-past-end")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->size = 8;
		op->slot = (uint16_t)MEMCGFS_CTL_MAX_WORDS;
	} else if (!strcmp(name, "kmalloc-gfp")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->size = 8;
		op->slot = (uint16_t)first;
		op->flags = 0x80000000u;
	} else if (!strcmp(name, "kmalloc-site-unterminated") || !strcmp(name, "kmalloc-site-space") ||
		   !strcmp(name, "kmalloc-site-empty") || !strcmp(name, "kmalloc-site-8bit")) {
		op->op = MEMCGFS_OP_KMALLOC;
		op->size = 8;
		op->slot = (uint16_t)first;
		op->opflags = MEMCGFS_OPF_SITE;
		op->site = (uint16_t)(first + 1);
		if (name[13] == 'u')
			memset(b->u.bytes + (first + 1) * 8, 'a', MEMCGFS_CTL_SITE_MAX);
		else
			put_string(b, first + 1, name[13] == 's' ? "a b" : name[13] == 'e' ? "" :
				   "caf\xc3\xa9");
	} else if (!strcmp(name, "pages-type")) {
		op->op = MEMCGFS_OP_ALLOC_PAGES;
		op->type = 8;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "pages-order")) {
		op->op = MEMCGFS_OP_ALLOC_PAGES;
		op->type = MEMCGFS_PAGE_FILE;
		op->order = 11;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "kfree-count-0")) {
		op->op = MEMCGFS_OP_KFREE;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "kfree-count-1025")) {
		op->op = MEMCGFS_OP_KFREE;
		op->count = 1025;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "kfree") || !strcmp(name, "free-pages") ||
		   !strcmp(name, "cache-free")) {
		/* the handles of argv (after the cache's name), in one operation */
		op->op = name[0] == 'k' ? MEMCGFS_OP_KFREE : name[0] == 'f' ? MEMCGFS_OP_FREE_PAGES :
			 MEMCGFS_OP_KMEM_CACHE_FREE;
		if (op->op == MEMCGFS_OP_KMEM_CACHE_FREE) {
			if (argc < 1 || strlen(argv[0]) >= 64)
				return -1;
			op->name = (uint16_t)first;
			put_string(b, first, argv[0]);
			argv++;
			argc--;
		}
		if (argc > 64)
			return -1;
		op->count = (uint16_t)argc;
		op->slot = (uint16_t)(first + 8);
		for (int i = 0; i < argc; i++)
			b->u.slots[first + 8 + i] = handle_arg(argc, argv, i);
	} else if (!strncmp(name, "create-", 7)) {
		op->op = MEMCGFS_OP_KMEM_CACHE_CREATE;
		op->name = (uint16_t)first;
		op->size = 64;
		put_string(b, first, argc > 0 ? argv[0] : "badinput_x");
		if (!strcmp(name, "create-size-0"))
			op->size = 0;
		else if (!strcmp(name, "create-size-huge"))
			op->size = UINT64_MAX;
		else if (!strcmp(name, "create-align"))
			op->align = 3;
		else if (!strcmp(name, "create-flags"))
			op->flags = 0x80000000u;
		else if (!strcmp(name, "create-name-empty"))
			put_string(b, first, "");
		else if (!strcmp(name, "create-name-space"))
			put_string(b, first, "bad name");
		else if (!strcmp(name, "create-name-long"))
			memset(b->u.bytes + first * 8, 'n', MEMCGFS_CTL_NAME_MAX);
		else if (!strcmp(name, "create-name-slot"))
			op->name = 0;
		else if (!strcmp(name, "create-info-past-end")) {
			op->count = 2;
			op->slot = (uint16_t)(MEMCGFS_CTL_MAX_WORDS - 1);
		} else if (strcmp(name, "create-exists"))
			return -1;
	} else if (!strncmp(name, "cache-alloc", 11) || !strcmp(name, "destroy")) {
		op->op = name[0] == 'd' ? MEMCGFS_OP_KMEM_CACHE_DESTROY : MEMCGFS_OP_KMEM_CACHE_ALLOC;
		op->name = (uint16_t)first;
		op->slot = (uint16_t)(first + 8);
		put_string(b, first, argc > 0 ? argv[0] : "nosuch");
	} else if (!strcmp(name, "whoami-count-0")) {
		op->op = MEMCGFS_OP_WHOAMI;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "whoami-no-room")) {
		op->op = MEMCGFS_OP_WHOAMI;
		op->count = 1;
		op->slot = (uint16_t)first;
	} else if (!strcmp(name, "two-bad-one-good")) {
		/* kmalloc size 0, a drain, kfree of a stale handle: 1 done, 2 failed */
		batch_init(b, 3);
		b->u.ops[0].op = MEMCGFS_OP_KMALLOC;
		b->u.ops[0].slot = (uint16_t)MEMCGFS_CTL_FIRST_SLOT(3);
		b->u.ops[1].op = MEMCGFS_OP_DRAIN;
		b->u.ops[2].op = MEMCGFS_OP_KFREE;
		b->u.ops[2].count = 1;
		b->u.ops[2].slot = (uint16_t)MEMCGFS_CTL_FIRST_SLOT(3);
		b->u.slots[MEMCGFS_CTL_FIRST_SLOT(3)] = handle_arg(argc, argv, 0);
	} else {
		return -1;
	}
	return 0;
}

static int cmd_ioctlcase(int argc, char **argv)
{
	static struct memcgfs_ctl_batch_max b;
	unsigned long cmd;
	int fd = open(argv[0], O_RDWR);

	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	if (ioctl_case(argv[1], &b, &cmd, argc - 2, argv + 2))
		return usage();
	if (ioctl(fd, cmd, &b) < 0) {
		printf("ioctl:%s\n", ename(errno));
		close(fd);
		return 0;
	}
	printf("done=%u failed=%u", b.hdr.nr_done, b.hdr.nr_failed);
	for (unsigned int i = 0; i < b.hdr.nr_ops && i < 8; i++)
		printf(" %s", b.u.ops[i].error ? ename(-b.u.ops[i].error) : "OK");
	printf("\n");
	close(fd);
	return 0;
}

/* One ioctl per handle, from a start line ($MCG_GO) on: for racing frees. */
static int cmd_ioctlfree(int argc, char **argv)
{
	const char *go = getenv("MCG_GO");
	int fd = open(argv[0], O_RDWR), i = 2;
	struct memcgfs_ctl_batch_one b;
	const char *cache = NULL;
	uint8_t opc;

	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	if (!strcmp(argv[1], "kfree"))
		opc = MEMCGFS_OP_KFREE;
	else if (!strcmp(argv[1], "pages"))
		opc = MEMCGFS_OP_FREE_PAGES;
	else if (!strcmp(argv[1], "mark"))
		opc = MEMCGFS_OP_MARK_PAGE_ACCESSED;
	else if (!strcmp(argv[1], "cache") && argc > 2) {
		opc = MEMCGFS_OP_KMEM_CACHE_FREE;
		cache = argv[i++];
		if (strlen(cache) > 23)
			return usage();
	} else
		return usage();
	while (go && access(go, F_OK))
		usleep(200);
	for (; i < argc; i++) {
		memset(&b, 0, sizeof(b));
		b.hdr.version = MEMCGFS_CTL_VERSION;
		b.hdr.nr_ops = 1;
		b.u.ops[0].op = opc;
		b.u.ops[0].count = 1;
		b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(1);
		b.u.slots[MEMCGFS_CTL_FIRST_SLOT(1)] = strtoull(argv[i], NULL, 16);
		if (cache) {
			b.u.ops[0].name = MEMCGFS_CTL_FIRST_SLOT(1) + 1;
			memcpy(&b.u.slots[MEMCGFS_CTL_FIRST_SLOT(1) + 1], cache, strlen(cache) + 1);
		}
		if (ioctl(fd, MEMCGFS_IOC_BATCH_ONE, &b) < 0)
			printf("%s ioctl:%s\n", argv[i], ename(errno));
		else
			printf("%s %s\n", argv[i], b.u.ops[0].error ? ename(-b.u.ops[0].error) : "OK");
	}
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

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One request as a client makes it, open to close: a kmalloc of alloc
 * objects, or a whoami when alloc is 0.  False if it failed.
 */
static bool lat_one(const char *path, bool text, unsigned int alloc)
{
	static struct memcgfs_ctl_batch_max b;
	char reply[8192], req[64];
	bool ok;
	int fd = open(path, O_RDWR);

	if (fd < 0)
		return false;
	if (text) {
		if (alloc)
			snprintf(req, sizeof(req), "kmalloc 4096 GFP_KERNEL_ACCOUNT x%u\n", alloc);
		else
			snprintf(req, sizeof(req), "whoami\n");
		ok = write(fd, req, strlen(req)) == (ssize_t)strlen(req) &&
		     read_reply(fd, reply, sizeof(reply)) > 0 && !strncmp(reply, "ok", 2);
	} else {
		memset(&b, 0, sizeof(b));
		b.hdr.version = MEMCGFS_CTL_VERSION;
		b.hdr.nr_ops = 1;
		b.u.ops[0].op = alloc ? MEMCGFS_OP_KMALLOC : MEMCGFS_OP_WHOAMI;
		b.u.ops[0].size = 4096;
		b.u.ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
		b.u.ops[0].count = alloc ? alloc : 8;	/* whoami: its slot and the path */
		b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(1);
		ok = !ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) && !b.u.ops[0].error;
	}
	return !close(fd) && ok;
}

static int cmd_lat(int argc, char **argv)
{
	bool text = !strcmp(argv[1], "text");
	unsigned int alloc = argc > 3 && !strcmp(argv[3], "alloc") ? 64 : 0;
	int n = atoi(argv[2]), fails = 0;
	double *ms;

	if (alloc && argc > 4)
		alloc = (unsigned int)atoi(argv[4]);
	/* the text reply's handles fit its buffer (17 bytes each) */
	if (n < 1 || (!text && strcmp(argv[1], "ioctl")) || (argc > 4 && (alloc < 1 || alloc > 400)))
		return usage();
	ms = calloc((size_t)n, sizeof(*ms));
	if (!ms)
		return 1;
	for (int i = 0; i < n; i++) {
		struct timespec t0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!lat_one(argv[0], text, alloc))
			fails++;
		ms[i] = ms_since(&t0);
	}
	qsort(ms, (size_t)n, sizeof(*ms), cmp_double);
	/* the nearest-rank percentiles */
	printf("n=%d fail=%d p50=%.2f p99=%.2f max=%.2f\n", n, fails, ms[(n * 50 + 99) / 100 - 1],
	       ms[(n * 99 + 99) / 100 - 1], ms[n - 1]);
	free(ms);
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
	if (!strcmp(op, "writex")) {
		fd = open_err(argv[1], O_WRONLY);
		if (fd < 0)
			return 0;
		for (int i = 2; i < argc; i++) {
			char *data = malloc(strlen(argv[i]) + 1);
			size_t len = unescape(argv[i], data);
			ssize_t w = write(fd, data, len);

			if (w < 0)
				printf("%s\n", ename(errno));
			else if ((size_t)w != len)
				printf("SHORT %zd\n", w);
			else
				printf("OK\n");
			free(data);
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

static int cmd_cats(int argc, char **argv)
{
	static char buf[1 << 16];

	for (int i = 0; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		ssize_t n;

		printf("== %s\n", argv[i]);
		if (fd < 0) {
			printf("open:%s\n", ename(errno));
			continue;
		}
		fflush(stdout);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		if (n < 0)
			printf("read:%s\n", ename(errno));
		close(fd);
	}
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

/* poll() without waiting: the events pending now */
static short poll_now(struct pollfd *p)
{
	p->revents = 0;
	poll(p, 1, 0);
	return p->revents;
}

/* Whether ev comes within ms. */
static bool poll_for(struct pollfd *p, int ms, short ev)
{
	return poll(p, 1, ms) == 1 && (p->revents & ev);
}

/* read() once, say the bytes read or the error; close fd, free buf */
static void say_read(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size);

	if (n < 0)
		printf("%s\n", ename(errno));
	else
		printf("%zd bytes\n", n);
	close(fd);
	free(buf);
}

static int cmd_pollfresh(int argc, char **argv)
{
	struct pollfd p = { .events = POLLPRI };

	(void)argc;
	p.fd = open_err(argv[0], O_RDONLY);
	if (p.fd < 0)
		return 0;
	printf("%s\n", pri(poll_now(&p)));
	drain_fd(p.fd);
	printf("%s\n", pri(poll_now(&p)));
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
	if (poll_for(&p, ms, POLLPRI)) {
		printf("PRI\n");
		/* still pending until this fd reads again */
		printf("%s\n", poll_now(&p) & POLLPRI ? "PRI" : "0");
		drain_fd(p.fd);
		printf("%s\n", poll_now(&p) & POLLPRI ? "PRI" : "0");
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
	double cmd_ms = -1;
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

		if (cmd_ms < 0 && waitpid(pid, NULL, WNOHANG) == pid)
			cmd_ms = ms_since(&t0);
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		if (cmd_ms < 0 && left > 5)
			left = 5;	/* look at the command again soon */
		if (poll(&p, 1, (int)left) != 1)
			continue;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			for (char *q = buf; q < buf + n;) {
				const struct inotify_event *ev = (const void *)q;

				count += !!(ev->mask & IN_MODIFY);
				q += sizeof(*ev) + ev->len;
			}
	}
	if (cmd_ms < 0) {
		waitpid(pid, NULL, 0);
		cmd_ms = ms_since(&t0);
	}
	printf("%d %.0f\n", count, cmd_ms);
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
	printf("%s\n", poll_for(&p, atoi(argv[2]), POLLPRI) ? "PRI" : "TIMEOUT");
	close(p.fd);
	return 0;
}

static int cmd_pollgone(int argc, char **argv)
{
	bool trigger = strcmp(argv[1], "-") != 0;
	struct pollfd p = { .events = POLLPRI };
	struct timespec t0;
	char buf[4096];
	double took;
	pid_t pid;
	int r, ms;

	(void)argc;
	p.fd = open_err(argv[0], trigger ? O_RDWR : O_RDONLY);
	if (p.fd < 0)
		return 0;
	if (trigger && write(p.fd, argv[1], strlen(argv[1])) < 0) {
		printf("write:%s\n", ename(errno));
		return 0;
	}
	drain_fd(p.fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		usleep(300000);		/* the poll below is blocked by then */
		execl("/bin/sh", "sh", "-c", argv[3], (char *)NULL);
		_exit(127);
	}
	ms = atoi(argv[2]);
	r = poll(&p, 1, ms);
	took = ms_since(&t0);
	if (r != 1 || took >= ms)
		printf("TIMEOUT\n");
	else
		printf("%s%s\n", took < 300 ? "EARLY " : "", pri(p.revents));
	if (pid > 0)
		waitpid(pid, NULL, 0);
	printf("%s\n", pri(poll_now(&p)));
	printf("read:%s\n", pread(p.fd, buf, sizeof(buf), 0) < 0 ? ename(errno) : "OK");
	if (trigger)
		printf("write:%s\n",
		       write(p.fd, argv[1], strlen(argv[1])) < 0 ? ename(errno) : "OK");
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
	int fd;

	sigaction(SIGALRM, &sa, NULL);
	fd = open_err(argv[0], O_RDONLY);
	if (fd < 0)
		return 0;
	ualarm((useconds_t)ms * 1000, 0);
	say_read(fd, buf, size);
	return 0;
}

static int cmd_writewait(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct timespec t0;
	ssize_t n;
	int fd;

	(void)argc;
	sigaction(SIGALRM, &sa, NULL);
	fd = open_err(argv[0], O_WRONLY);
	if (fd < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ualarm((useconds_t)atoi(argv[2]) * 1000, 0);
	n = write(fd, argv[1], strlen(argv[1]));
	printf("%s %.0f\n", n < 0 ? ename(errno) : "OK", ms_since(&t0));
	close(fd);
	return 0;
}

static int cmd_readnb(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
	char *buf = malloc(size);
	int fd = open_err(argv[0], O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return 0;
	say_read(fd, buf, size);
	return 0;
}

static int cmd_pollin(int argc, char **argv)
{
	struct pollfd p = { .events = POLLIN };
	int ms = argc > 1 ? atoi(argv[1]) : 1000;

	p.fd = open_err(argv[0], O_RDONLY);
	if (p.fd < 0)
		return 0;
	printf("%s\n", poll_for(&p, ms, POLLIN) ? "IN" : "TIMEOUT");
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

/*
 * Where a reply is: at the position the request's write left (unchanged
 * when it failed), whole until the next request.
 */
static int cmd_ctlseek(int argc, char **argv)
{
	char whole[4096], part[4096], again[4096];
	ssize_t n, k, m;
	off_t at;
	int fd = open(argv[0], O_RDWR);

	(void)argc;
	if (fd < 0) {
		printf("open:%s\n", ename(errno));
		return 0;
	}
	n = write(fd, "whoami\n", 7);
	at = lseek(fd, 0, SEEK_CUR);
	printf("write %zd at %lld\n", n, (long long)at);
	/* read 10 bytes, give 6 back, read on: what a shell's read does */
	k = read(fd, part, 10);
	if (k == 10 && lseek(fd, -6, SEEK_CUR) == at + 4)
		k = 4 + read(fd, part + 4, sizeof(part) - 5);
	m = pread(fd, whole, sizeof(whole) - 1, at);
	printf("given back and read again: %s\n",
	       k > 10 && k == m && !memcmp(part, whole, (size_t)m) ? "same" : "differ");
	printf("ends in a newline: %s\n", m > 0 && whole[m - 1] == '\n' ? "yes" : "no");
	printf("pread before it: %zd, after it: %zd, read on: %zd\n", pread(fd, again, 16, 0),
	       pread(fd, again, 16, at + m), read(fd, again, sizeof(again)));
	/* a failed request leaves the position: its reply is right there */
	at = lseek(fd, 0, SEEK_CUR);
	n = write(fd, "bogus\n", 6);
	printf("failed write: %s, position %s\n", n < 0 ? ename(errno) : "OK",
	       lseek(fd, 0, SEEK_CUR) == at ? "unchanged" : "moved");
	m = read(fd, again, sizeof(again) - 1);
	again[m > 0 ? m : 0] = '\0';
	printf("its reply: %.12s\n", again);
	/* pwrite at 0: the reply is after it, the file position untouched */
	n = pwrite(fd, "whoami\n", 7, 0);
	m = pread(fd, again, sizeof(again) - 1, 7);
	printf("pwrite %zd, reply at 7: %.7s, same as before: %s\n", n, m > 0 ? again : "",
	       m > 0 && !memcmp(again, whole, 7) ? "yes" : "no");
	close(fd);
	return 0;
}

/* A value from the command line: "-" is empty, "@N" N bytes of 'x'. */
static char *xattr_value(const char *arg, size_t *len)
{
	char *v;

	if (arg[0] == '@') {
		*len = (size_t)strtoul(arg + 1, NULL, 10);
		v = malloc(*len + 1);
		if (v)
			memset(v, 'x', *len);
		return v;
	}
	*len = strcmp(arg, "-") ? strlen(arg) : 0;
	return strdup(arg);
}

static int cmd_xattr(int argc, char **argv)
{
	static char buf[1 << 17];
	const char *path = argv[0], *op = argv[1];
	ssize_t n = -1;

	if (!strcmp(op, "set") && argc >= 4) {
		int flags = argc > 4 ? (!strcmp(argv[4], "create") ? XATTR_CREATE : XATTR_REPLACE) : 0;
		size_t len;
		char *v = xattr_value(argv[3], &len);

		n = v ? setxattr(path, argv[2], v, len, flags) : -1;
		free(v);
		if (!n)
			printf("OK\n");
	} else if (!strcmp(op, "get") && argc >= 3) {
		size_t size = argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : sizeof(buf) - 1;

		n = getxattr(path, argv[2], size ? buf : NULL, size);
		if (n >= 0 && size)
			printf("OK %.*s\n", (int)n, buf);
		else if (n >= 0)
			printf("OK %zd\n", n);
	} else if (!strcmp(op, "list")) {
		size_t size = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : sizeof(buf) - 1;

		n = listxattr(path, size ? buf : NULL, size);
		if (n >= 0 && size) {
			printf("OK ");
			for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
				printf("%s%s", i ? "," : "", buf + i);
			printf("\n");
		} else if (n >= 0) {
			printf("OK %zd\n", n);
		}
	} else if (!strcmp(op, "remove") && argc >= 3) {
		n = removexattr(path, argv[2]);
		if (!n)
			printf("OK\n");
	} else if (!strcmp(op, "fill") && argc >= 5) {
		long want = atol(argv[3]), k;
		size_t len = (size_t)strtoul(argv[4], NULL, 10);
		char *v = calloc(1, len + 1), name[512];
		int err = 0;

		for (k = 0; v && k < want; k++) {
			snprintf(name, sizeof(name), "%s%ld", argv[2], k);
			if (setxattr(path, name, v, len, 0)) {
				err = errno;
				break;
			}
		}
		free(v);
		printf("set %ld%s%s\n", k, err ? " " : "", err ? ename(err) : "");
		return 0;
	} else {
		return usage();
	}
	if (n < 0)
		printf("%s\n", ename(errno));
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
		{ "pollgone", cmd_pollgone, 4 },
		{ "readnb", cmd_readnb, 1 }, { "pollin", cmd_pollin, 1 },
		{ "threads", cmd_threads, 1 },
		{ "ctlx", cmd_ctlx, 1 }, { "cats", cmd_cats, 1 }, { "ioctlcase", cmd_ioctlcase, 2 },
		{ "ioctlfree", cmd_ioctlfree, 3 }, { "ctlseek", cmd_ctlseek, 1 },
		{ "xattr", cmd_xattr, 2 }, { "lat", cmd_lat, 3 },
		{ "writewait", cmd_writewait, 3 },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return argc - 2 < cmds[i].min ? usage() : cmds[i].fn(argc - 2, argv + 2);
	return usage();
}
