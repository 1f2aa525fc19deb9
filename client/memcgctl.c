/* SPDX-License-Identifier: MIT */
/*
 * client/memcgctl.c - the memcgctl command: main(), the control protocol's
 * operations as subcommands (through libmemcgfs), and run.  tree, stat
 * and top are in view.c, trace in trace.c, sandbox in sandbox.c.
 *
 * Output: data on stdout (handles one per line, or JSON with --json),
 * messages on stderr as "memcgctl: WHAT (ERRNAME)".  Exit status 0, 1 when
 * memcgfs or the system refused, 2 for a bad command line; run exits as
 * its command does (126/127 when it cannot be executed).
 */
#include "memcgctl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MEMCGFS_VERSION
#define MEMCGFS_VERSION "unknown"
#endif

#define MAX_HANDLES	(1u << 20)	/* per memcgctl command */

enum {
	OPT_SITE = MCTL_OPT_OWN, OPT_BATCH, OPT_HOLD, OPT_ALIGN, OPT_ORDER,
};

#define COMMON_LONGOPTS \
	{ "mount", required_argument, NULL, 'm' }, \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, 'h' }

/* ---- help ---- */
static const struct help {
	const char *cmd;
	const char *text;
} helps[] = {
	{ "kmalloc",
	  "Usage: memcgctl kmalloc SIZE [GFP] [-n N] [--site NAME] [-g CGROUP] [--batch] [--hold]\n"
	  "kmalloc(SIZE, GFP) N times, charged to memcgctl's cgroup; prints the handles.\n"
	  "  SIZE           bytes, K/M/G allowed (1 .. 4M)\n"
	  "  GFP            '|'-joined gfp names; default GFP_KERNEL (not accounted):\n"
	  "                 GFP_KERNEL_ACCOUNT charges the cgroup\n"
	  "  -n, --count N  how many (default 1; above 1024, several requests, still all or\n"
	  "                 nothing)\n"
	  "  --site NAME    trace_pipe's call_site=\n" },
	{ "kfree",
	  "Usage: memcgctl kfree HANDLE... | -  [--batch]\n"
	  "kfree() objects by handle ('-': handles read from stdin, e.g. from kmalloc's\n"
	  "output).  All handles of one request are checked first: a bad one frees none.\n" },
	{ "kmem-cache",
	  "Usage: memcgctl kmem-cache create NAME SIZE [SLAB_FLAGS] [--align A]\n"
	  "       memcgctl kmem-cache alloc NAME [GFP] [-n N] [--site NAME] [-g CGROUP] [--hold]\n"
	  "       memcgctl kmem-cache free NAME HANDLE... | -\n"
	  "       memcgctl kmem-cache destroy NAME\n"
	  "A dedicated kmem_cache: create prints its geometry (NAME objsize= size=\n"
	  "objperslab= pagesperslab=), alloc prints handles, destroy fails with EBUSY\n"
	  "while objects remain.  SLAB_FLAGS: SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT|\n"
	  "SLAB_RECLAIM_ACCOUNT|SLAB_PANIC|SLAB_NO_MERGE.\n" },
	{ "alloc-pages",
	  "Usage: memcgctl alloc-pages TYPE [--order O] [-n N] [-g CGROUP] [--batch] [--hold]\n"
	  "N allocations of 2^O pages of TYPE (anon, file, shmem, kernel_stack, pagetables,\n"
	  "percpu, sock, vmalloc); prints the handles.  anon, kernel_stack and pagetables\n"
	  "pages belong to the allocating process and are freed when it exits: --hold keeps\n"
	  "memcgctl alive (until SIGINT/SIGTERM) after printing the handles.  If the OOM\n"
	  "killer chose it (alone in its cgroup) meanwhile, it says so and exits 1.\n" },
	{ "free-pages", "Usage: memcgctl free-pages HANDLE... | -  [--batch]\nFree page handles.\n" },
	{ "mark-page-accessed", "Usage: memcgctl mark-page-accessed HANDLE... | -  [--batch]\n"
	  "Reference pages again: the second reference activates an LRU page.\n" },
	{ "drain",
	  "Usage: memcgctl drain\n"
	  "Drain every per-CPU stock: memory.current and memory.stat become exact.\n" },
	{ "check",
	  "Usage: memcgctl check [--json]\n"
	  "Run memcgfs's invariant checks (read the root-only memcgfs.check): prints 'ok' and\n"
	  "exits 0, or prints the first violation and exits 1.  Meant for a quiet mount: a\n"
	  "charge in flight may show a passing mismatch.\n" },
	{ "whoami",
	  "Usage: memcgctl whoami [-g CGROUP] [--json]\n"
	  "Who memcgfs takes memcgctl for: pid=PID cgroup=PATH cpu=CPU.\n" },
	{ "run",
	  "Usage: memcgctl run -g CGROUP [--] COMMAND [ARG...]\n"
	  "Move memcgctl into CGROUP (its pid into cgroup.procs), then execute COMMAND,\n"
	  "which and whose children charge CGROUP.  Exits with COMMAND's status, 126 or 127\n"
	  "when it cannot be executed.\n" },
	{ "sandbox",
	  "Usage: memcgctl sandbox [-g CGROUP] [--] COMMAND [ARG...]\n"
	  "Run COMMAND where memcgfs is the cgroup v2 tree, for tools that find the tree\n"
	  "themselves: in a private mount namespace, /sys/fs/cgroup becomes a cgroup2 mount\n"
	  "(what the host has there is detached, in there only) and memcgfs is bound over it\n"
	  "and over every other cgroup2 mount point; in a new cgroup namespace\n"
	  "/proc/self/cgroup reads 0::/, memcgfs's root.  -g moves memcgctl into CGROUP\n"
	  "first.  Limits: statfs(2) still says FUSE (tools that check for cgroup2's magic\n"
	  "refuse), /proc/mounts still lists fuse.memcgfs on top of the cgroup2 entry, and\n"
	  "/proc/self/cgroup does not follow moves.  Needs root (CAP_SYS_ADMIN).  Exits\n"
	  "with COMMAND's status, 126 or 127 when it cannot be executed.\n" },
	{ "tree",
	  "Usage: memcgctl tree [CGROUP] [--bytes] [--json]\n"
	  "The hierarchy under CGROUP (default: the root) with memory.current, memory.peak,\n"
	  "memory.high, memory.max and the nonzero memory.events.\n" },
	{ "stat",
	  "Usage: memcgctl stat CGROUP [--bytes] [--json]\n"
	  "memory.stat with sizes for people, and the share of memory.current that is slab.\n" },
	{ "top",
	  "Usage: memcgctl top [CGROUP] [-d SECONDS] [-n ITERATIONS] [-b] [--bytes] [--json]\n"
	  "A live view of the cgroups under CGROUP sorted by memory.current, refreshed every\n"
	  "SECONDS (default 1).  Keys: q quits, space refreshes.  -b (or a stdout that is not\n"
	  "a terminal): print a frame per refresh, no terminal control.\n" },
	{ "trace",
	  "Usage: memcgctl trace [--event EV[,EV...]] [-g CGROUP] [-n COUNT] [--no-enable] [--json]\n"
	  "Follow trace_pipe.  --event keeps kmalloc, kmem_cache_alloc, kfree, kmem_cache_free,\n"
	  "mm_page_alloc, mm_page_free; -g keeps the events of the processes in CGROUP and its\n"
	  "descendants (cgroup.threads, re-read every 0.1 s and as new pids appear; a\n"
	  "process that lives less than that may be missed).  Sets tracing_on to 1\n"
	  "while it runs if it was 0 (not with --no-enable).  -n: stop after COUNT events.\n" },
};

static const char common_help[] =
	"Common options: -m, --mount MOUNT (default $MEMCGFS_MOUNT, then the first\n"
	"fuse.memcgfs mount), --json, -h, --help.  CGROUP: a path under the mount (a/b)\n"
	"or a directory on it (/run/memcgfs/a/b).  -g CGROUP: move memcgctl there first.\n"
	"--batch: send through the ioctl instead of text requests.\n";

static void usage(FILE *f)
{
	fputs("Usage: memcgctl [-m MOUNT] [--json] COMMAND [ARGS]\n"
	      "Drive memcgfs, the cgroup v2 memory controller as a FUSE filesystem.\n\n"
	      "Control protocol (memcgfs.ctl):\n"
	      "  kmalloc SIZE [GFP] [-n N]            allocate, print handles\n"
	      "  kfree HANDLE...                      free\n"
	      "  kmem-cache create|alloc|free|destroy a dedicated cache\n"
	      "  alloc-pages TYPE [--order O] [-n N]  pages of a type\n"
	      "  free-pages HANDLE...\n"
	      "  mark-page-accessed HANDLE...         reference pages again (activation)\n"
	      "  drain                                exact numbers: drain per-CPU stocks\n"
	      "  whoami                               pid, cgroup and CPU as memcgfs sees them\n"
	      "  check                                run the invariant checks (root only)\n"
	      "Cgroups:\n"
	      "  run -g CGROUP COMMAND...             run a command in a cgroup\n"
	      "  sandbox COMMAND...                   run a command with memcgfs as its cgroup2 tree\n"
	      "  tree [CGROUP]                        hierarchy with usage, limits, events\n"
	      "  stat CGROUP                          memory.stat for people\n"
	      "  top [CGROUP]                         live view sorted by memory.current\n"
	      "  trace [--event EV,...] [-g CGROUP]   follow trace_pipe\n\n"
	      "'memcgctl COMMAND --help' for a command's options.\n", f);
	fputs(common_help, f);
}

int mctl_help(const char *cmd)
{
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		if (!strcmp(helps[i].cmd, cmd)) {
			fputs(helps[i].text, stdout);
			fputs(common_help, stdout);
			return EXIT_OK;
		}
	}
	usage(stdout);
	return EXIT_OK;
}

/* ---- moving into a cgroup ---- */
static int move_self(struct mctl *c, const char *cgroup)
{
	char dir[MEMCGFS_PATH_MAX], p[MEMCGFS_PATH_MAX + 16], pid[32];
	int err, fd, n;

	err = mctl_cgroup_path(c, cgroup, dir, sizeof(dir));
	if (err)
		return err;
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return mctl_error(c, errno, "%s: cannot open: %s", p, strerror(errno));
	if (write(fd, pid, (size_t)n) != n) {
		err = errno;
		close(fd);
		return mctl_error(c, err, "%s: cannot move pid %d there: %s", dir, (int)getpid(),
				  strerror(err));
	}
	close(fd);
	return 0;
}

/* ---- ENOMEM: which cgroup's memory.max was reached ---- */
#define CHAIN_MAX 64
struct chain {
	size_t n;
	char dir[CHAIN_MAX][MEMCGFS_PATH_MAX];
	uint64_t max_events[CHAIN_MAX];
};

static void chain_snapshot(struct mctl *c, struct memcgfs *m, struct chain *ch)
{
	struct memcgfs_whoami *w = malloc(sizeof(*w));
	char p[MEMCGFS_PATH_MAX + 32];

	ch->n = 0;
	if (!w)
		return;
	if (memcgfs_whoami(m, w) || !strcmp(w->cgroup, "/")) {
		free(w);
		return;
	}
	/* from the caller's cgroup up to (not including) the root */
	for (char *s = w->cgroup; *s && ch->n < CHAIN_MAX;) {
		if ((size_t)snprintf(ch->dir[ch->n], sizeof(ch->dir[0]), "%s%s", c->mount,
				     w->cgroup) >= sizeof(ch->dir[0]))
			break;
		snprintf(p, sizeof(p), "%s/memory.events.local", ch->dir[ch->n]);
		if (mctl_read_keyed(p, "max", &ch->max_events[ch->n]))
			ch->max_events[ch->n] = UINT64_MAX;	/* no memcg of its own */
		ch->n++;
		s = strrchr(w->cgroup, '/');
		if (!s || s == w->cgroup)
			break;
		*s = '\0';
		s = w->cgroup;
	}
	free(w);
}

/* The deepest cgroup whose memory.events.local max rose, or NULL. */
static const char *chain_culprit(struct chain *ch)
{
	char p[MEMCGFS_PATH_MAX + 32];

	for (size_t i = 0; i < ch->n; i++) {
		uint64_t v;

		if (ch->max_events[i] == UINT64_MAX)
			continue;
		snprintf(p, sizeof(p), "%s/memory.events.local", ch->dir[i]);
		if (!mctl_read_keyed(p, "max", &v) && v > ch->max_events[i])
			return ch->dir[i];
	}
	return NULL;
}

/* "kmalloc: out of memory" under "memcgctl kmalloc:" reads once */
static const char *strip_op(const char *detail)
{
	static const char *const ops[] = {
		"kmalloc: ", "kmem_cache_alloc: ", "alloc_pages: ", "kfree: ", "free_pages: ",
		"mark_page_accessed: ",
		"kmem_cache_free: ", "kmem_cache_create: ", "kmem_cache_destroy: ",
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(detail, ops[i], strlen(ops[i])))
			return detail + strlen(ops[i]);
	return detail;
}

static int op_error(struct mctl *c, const char *cmd, int err, const char *detail,
		    struct chain *ch)
{
	const char *culprit = err == -ENOMEM && ch ? chain_culprit(ch) : NULL;

	if (culprit)
		return mctl_error(c, err, "%s: memory.max reached", culprit);
	if (detail && *detail)
		return mctl_error(c, err, "%s: %s", cmd, strip_op(detail));
	return mctl_error(c, err, "%s: %s", cmd, strerror(-err));
}

/* ---- handles ---- */
static void print_handles(const struct mctl *c, const uint64_t *h, size_t n)
{
	if (c->json) {
		fputs("{\"handles\":[", stdout);
		for (size_t i = 0; i < n; i++)
			printf("%s\"%016" PRIx64 "\"", i ? "," : "", h[i]);
		fputs("]}\n", stdout);
		return;
	}
	for (size_t i = 0; i < n; i++)
		printf("%016" PRIx64 "\n", h[i]);
}

/* Handles from argv, or from stdin when the only argument is "-". */
static int read_handles(struct mctl *c, const char *cmd, int argc, char **argv, uint64_t **out,
			size_t *n)
{
	size_t cap = 64;
	uint64_t *h = malloc(cap * sizeof(*h));
	char word[64];
	int i = 0;

	*n = 0;
	if (!h)
		return mctl_error(c, ENOMEM, "%s: out of memory", cmd);
	for (;;) {
		const char *w;

		if (argc == 1 && !strcmp(argv[0], "-")) {
			if (scanf("%63s", word) != 1)
				break;
			w = word;
		} else {
			if (i == argc)
				break;
			w = argv[i++];
		}
		if (*n == cap) {
			uint64_t *nh = cap < MAX_HANDLES ? realloc(h, 2 * cap * sizeof(*h)) : NULL;

			if (!nh) {
				free(h);
				return mctl_error(c, ENOMEM, "%s: too many handles", cmd);
			}
			h = nh;
			cap *= 2;
		}
		if (memcgfs_handle_parse(w, &h[*n])) {
			free(h);
			return mctl_usage_error(c, cmd, "'%s' is not a handle (1 to 16 hex digits)", w);
		}
		(*n)++;
	}
	if (!*n) {
		free(h);
		return mctl_usage_error(c, cmd, "no handle given");
	}
	*out = h;
	return 0;
}

/*
 * Run op for total items, MEMCGFS_CTL_MAX_COUNT at a time: as text
 * requests, or all in one memcgfs_batch() call.  Returns 0 or -errno, the
 * daemon's detail of the first failure in detail; *done counts the items
 * of the operations that succeeded (in order: the first failed one stops
 * text requests).
 */
static int run_chunks(struct memcgfs *m, const struct memcgfs_op *tmpl, uint64_t *h, size_t total,
		      bool batch, char *detail, size_t dlen, size_t *done)
{
	size_t nops = (total + MEMCGFS_CTL_MAX_COUNT - 1) / MEMCGFS_CTL_MAX_COUNT;
	struct memcgfs_op *ops = calloc(nops ? nops : 1, sizeof(*ops));
	int err = 0;

	*done = 0;
	if (!ops)
		return -ENOMEM;
	for (size_t i = 0; i < nops; i++) {
		ops[i] = *tmpl;
		ops[i].handles = h + i * MEMCGFS_CTL_MAX_COUNT;
		ops[i].count = (unsigned int)(total - i * MEMCGFS_CTL_MAX_COUNT < MEMCGFS_CTL_MAX_COUNT ?
					      total - i * MEMCGFS_CTL_MAX_COUNT : MEMCGFS_CTL_MAX_COUNT);
	}
	if (batch) {
		err = memcgfs_batch(m, ops, nops);
		for (size_t i = 0; i < nops; i++) {
			if (!ops[i].error) {
				*done += ops[i].count;
			} else if (detail && dlen && !detail[0]) {
				snprintf(detail, dlen, "operation %zu of the batch failed", i + 1);
			}
		}
	} else {
		for (size_t i = 0; i < nops && !err; i++) {
			err = memcgfs_exec(m, &ops[i], detail, dlen);
			if (!err)
				*done += ops[i].count;
		}
	}
	free(ops);
	return err;
}

/* Free the successful chunks of a failed all-or-nothing allocation. */
static void undo_chunks(struct memcgfs *m, const struct memcgfs_op *tmpl, uint64_t *h,
			size_t total, bool batch)
{
	struct memcgfs_op op = { .name = tmpl->name };
	size_t done, j = 0;

	op.op = tmpl->op == MEMCGFS_OP_KMALLOC ? MEMCGFS_OP_KFREE :
		tmpl->op == MEMCGFS_OP_KMEM_CACHE_ALLOC ? MEMCGFS_OP_KMEM_CACHE_FREE :
		MEMCGFS_OP_FREE_PAGES;
	/* the failed and unsent chunks left zeros: free only what was handed out */
	for (size_t i = 0; i < total; i++)
		if (h[i])
			h[j++] = h[i];
	if (j)
		run_chunks(m, &op, h, j, batch, NULL, 0, &done);
}

static volatile sig_atomic_t hold_done;

static void hold_signal(int sig)
{
	(void)sig;
	hold_done = 1;
}

/* Stay alive (the task's pages with it) until SIGINT, SIGTERM or SIGHUP. */
static void hold(void)
{
	struct sigaction sa = { .sa_handler = hold_signal };
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fflush(stdout);
	while (!hold_done)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

struct alloc_args {
	const char *cmd;
	struct memcgfs_op op;
	unsigned long count;
	const char *cgroup;
	bool batch, hold;
};

/*
 * The OOM killer may choose memcgctl itself while it allocates (with
 * memcg.oom_kill_signal = none the process lives on): the anon,
 * kernel_stack and pagetables pages it held are freed, and the handles
 * printed for them are stale.  oom_kill_local() is its cgroup's
 * memory.events.local oom_kill before and after; a rise while memcgctl is
 * the cgroup's only process is told to the user, who holds handles that
 * are gone.
 */
static bool task_owned(const struct memcgfs_op *op)
{
	return op->op == MEMCGFS_OP_ALLOC_PAGES &&
	       (op->type == MEMCGFS_PAGE_ANON || op->type == MEMCGFS_PAGE_KERNEL_STACK ||
		op->type == MEMCGFS_PAGE_PAGETABLES);
}

static uint64_t oom_kill_local(const struct chain *ch)
{
	char p[MEMCGFS_PATH_MAX + 32];
	uint64_t v = 0;

	if (!ch->n)
		return 0;	/* the root: never charged, never OOM */
	snprintf(p, sizeof(p), "%s/memory.events.local", ch->dir[0]);
	return mctl_read_keyed(p, "oom_kill", &v) ? 0 : v;
}

static unsigned int cgroup_procs(const struct chain *ch)
{
	char p[MEMCGFS_PATH_MAX + 32], line[32];
	unsigned int procs = 0;
	FILE *f;

	if (!ch->n)
		return 0;
	snprintf(p, sizeof(p), "%s/cgroup.procs", ch->dir[0]);
	f = fopen(p, "re");
	while (f && fgets(line, sizeof(line), f))
		procs++;
	if (f)
		fclose(f);
	return procs;
}

/*
 * Alone in its cgroup before and after, the victim was memcgctl; with
 * others there (a victim killed by SIGKILL leaves), it cannot tell.
 */
static bool warn_oom_killed(const struct mctl *c, const struct alloc_args *a,
			    const struct chain *ch, uint64_t before)
{
	uint64_t kills = oom_kill_local(ch);

	if (!ch->n || kills <= before || cgroup_procs(ch) != 1)
		return false;
	kills -= before;
	fprintf(stderr, "%s: %s: the OOM killer chose this process while it allocated "
		"(%s memory.events.local oom_kill +%" PRIu64 "): the pages it held then were "
		"freed and their handles are stale\n", c->prog, a->cmd,
		ch->dir[0] + strlen(c->mount), kills);
	return true;
}

static int do_alloc(struct mctl *c, struct alloc_args *a)
{
	struct memcgfs *m;
	struct chain *ch;
	uint64_t *h;
	char detail[512] = "";
	uint64_t kills;
	size_t done;
	bool alone, killed;
	int err;

	err = mctl_mount(c);
	if (err)
		return err;
	if (a->cgroup && (err = move_self(c, a->cgroup)))
		return err;
	err = memcgfs_open(c->mount, &m);
	if (err)
		return mctl_error(c, err, "%s: cannot open memcgfs.ctl: %s", c->mount, strerror(-err));
	h = calloc(a->count, sizeof(*h));
	ch = malloc(sizeof(*ch));
	if (!h || !ch) {
		err = mctl_error(c, ENOMEM, "%s: out of memory", a->cmd);
		goto out;
	}
	chain_snapshot(c, m, ch);
	alone = task_owned(&a->op) && cgroup_procs(ch) == 1;
	kills = alone ? oom_kill_local(ch) : 0;
	err = run_chunks(m, &a->op, h, a->count, a->batch, detail, sizeof(detail), &done);
	if (err) {
		if (done)
			undo_chunks(m, &a->op, h, a->count, a->batch);
		err = op_error(c, a->cmd, err, detail, ch);
		goto out;
	}
	print_handles(c, h, a->count);
	killed = alone && warn_oom_killed(c, a, ch, kills);
	if (a->hold)
		hold();
	err = killed ? EXIT_FAIL : EXIT_OK;
out:
	free(ch);
	free(h);
	memcgfs_close(m);
	return err;
}

static int do_free(struct mctl *c, const char *cmd, struct memcgfs_op *tmpl, int argc,
		   char **argv, bool batch)
{
	struct memcgfs *m;
	uint64_t *h = NULL;
	size_t n, done;
	char detail[512] = "";
	int err;

	err = read_handles(c, cmd, argc, argv, &h, &n);
	if (err)
		return err;
	err = mctl_mount(c);
	if (!err) {
		err = memcgfs_open(c->mount, &m);
		if (err) {
			err = mctl_error(c, err, "%s: cannot open memcgfs.ctl: %s", c->mount,
					 strerror(-err));
		} else {
			err = run_chunks(m, tmpl, h, n, batch, detail, sizeof(detail), &done);
			if (err)
				err = op_error(c, cmd, err, detail, NULL);
			memcgfs_close(m);
		}
	}
	free(h);
	return err;
}

int mctl_common_opt(struct mctl *c, int ch, const char *cmd)
{
	switch (ch) {
	case 'm':
		c->mount_arg = optarg;
		c->mount[0] = '\0';
		return 1;
	case OPT_JSON:
		c->json = true;
		return 1;
	case OPT_BYTES:
		c->bytes = true;
		return 1;
	case 'h':
		mctl_help(cmd);
		return -1;
	}
	return 0;
}

static int parse_count(struct mctl *c, const char *cmd, const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || *end || !*s || *out < 1 || *out > MAX_HANDLES)
		return mctl_usage_error(c, cmd, "bad count '%s' (1..%u)", s, MAX_HANDLES);
	return 0;
}

/*
 * Options of the allocation commands; positional arguments are left in
 * argv[optind..argc).  Returns 0, EXIT_USAGE, or -1 after --help.
 */
static int alloc_opts(struct mctl *c, struct alloc_args *a, int argc, char **argv, bool pages)
{
	static const struct option opts[] = {
		COMMON_LONGOPTS,
		{ "count", required_argument, NULL, 'n' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "site", required_argument, NULL, OPT_SITE },
		{ "batch", no_argument, NULL, OPT_BATCH },
		{ "hold", no_argument, NULL, OPT_HOLD },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ NULL, 0, NULL, 0 },
	};
	int ch, r;

	a->count = 1;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "m:hn:g:", opts, NULL)) != -1) {
		r = mctl_common_opt(c, ch, pages ? "alloc-pages" : a->cmd);
		if (r < 0)
			return -1;
		if (r)
			continue;
		switch (ch) {
		case 'n':
			if (parse_count(c, a->cmd, optarg, &a->count))
				return EXIT_USAGE;
			break;
		case 'g':
			a->cgroup = optarg;
			break;
		case OPT_SITE:
			if (pages)
				return mctl_usage_error(c, a->cmd, "--site applies to kmalloc and "
							"kmem-cache alloc");
			a->op.site = optarg;
			break;
		case OPT_BATCH:
			a->batch = true;
			break;
		case OPT_HOLD:
			a->hold = true;
			break;
		case OPT_ORDER: {
			char *end;
			unsigned long o = strtoul(optarg, &end, 10);

			if (!pages || *end || !*optarg || o > 10)
				return mctl_usage_error(c, a->cmd, pages ? "bad order '%s' (0..10)" :
							"--order applies to alloc-pages", optarg);
			a->op.order = (unsigned int)o;
			break;
		}
		default:
			return mctl_usage_error(c, a->cmd, "unknown option");
		}
	}
	if (a->op.site && (strlen(a->op.site) > MEMCGFS_CTL_SITE_MAX - 1 ||
			   strpbrk(a->op.site, " \t")))
		return mctl_usage_error(c, a->cmd, "--site: 1..%d characters, no space",
					MEMCGFS_CTL_SITE_MAX - 1);
	return 0;
}

static int gfp_arg(struct mctl *c, const char *cmd, const char *s, unsigned int *gfp)
{
	if (memcgfs_gfp_parse(s, gfp))
		return mctl_usage_error(c, cmd, "unknown gfp flags '%s' (e.g. GFP_KERNEL_ACCOUNT, "
					"GFP_KERNEL|__GFP_ZERO)", s);
	if (*gfp & ~MEMCGFS_GFP_VALID)
		return mctl_usage_error(c, cmd, "gfp flags '%s' not accepted by memcgfs", s);
	return 0;
}

static int cmd_kmalloc(struct mctl *c, int argc, char **argv)
{
	struct alloc_args a = { .cmd = "kmalloc", .op.op = MEMCGFS_OP_KMALLOC };
	int r = alloc_opts(c, &a, argc, argv, false);

	if (r)
		return r < 0 ? EXIT_OK : r;
	if (optind >= argc)
		return mctl_usage_error(c, a.cmd, "missing SIZE");
	if (argc - optind > 2)
		return mctl_usage_error(c, a.cmd, "unexpected argument '%s'", argv[optind + 2]);
	if (memcgfs_size_parse(argv[optind], &a.op.size) || !a.op.size)
		return mctl_usage_error(c, a.cmd, "bad SIZE '%s' (bytes, K, M or G)", argv[optind]);
	if (argc - optind == 2 && gfp_arg(c, a.cmd, argv[optind + 1], &a.op.flags))
		return EXIT_USAGE;
	return do_alloc(c, &a);
}

static int cmd_alloc_pages(struct mctl *c, int argc, char **argv)
{
	struct alloc_args a = { .cmd = "alloc-pages", .op.op = MEMCGFS_OP_ALLOC_PAGES };
	int r = alloc_opts(c, &a, argc, argv, true);

	if (r)
		return r < 0 ? EXIT_OK : r;
	if (argc - optind != 1)
		return mctl_usage_error(c, a.cmd, argc - optind ? "one TYPE only" : "missing TYPE");
	if (memcgfs_page_type_parse(argv[optind], &a.op.type))
		return mctl_usage_error(c, a.cmd, "unknown page type '%s' (anon, file, shmem, "
					"kernel_stack, pagetables, percpu, sock, vmalloc)",
					argv[optind]);
	return do_alloc(c, &a);
}

/* kfree, free-pages, kmem-cache free: [--batch] HANDLE... */
static int free_cmd(struct mctl *c, const char *cmd, const char *help_cmd, unsigned int opcode,
		    int argc, char **argv, bool named)
{
	static const struct option opts[] = {
		COMMON_LONGOPTS,
		{ "batch", no_argument, NULL, OPT_BATCH },
		{ NULL, 0, NULL, 0 },
	};
	struct memcgfs_op op = { .op = opcode };
	bool batch = false;
	int ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "+m:h", opts, NULL)) != -1) {
		r = mctl_common_opt(c, ch, help_cmd);
		if (r < 0)
			return EXIT_OK;
		if (r)
			continue;
		if (ch == OPT_BATCH)
			batch = true;
		else
			return mctl_usage_error(c, cmd, "unknown option");
	}
	if (named) {
		if (optind >= argc)
			return mctl_usage_error(c, cmd, "missing NAME");
		op.name = argv[optind++];
	}
	return do_free(c, cmd, &op, argc - optind, argv + optind, batch);
}

static int cmd_kfree(struct mctl *c, int argc, char **argv)
{
	return free_cmd(c, "kfree", "kfree", MEMCGFS_OP_KFREE, argc, argv, false);
}

static int cmd_free_pages(struct mctl *c, int argc, char **argv)
{
	return free_cmd(c, "free-pages", "free-pages", MEMCGFS_OP_FREE_PAGES, argc, argv, false);
}

static int cmd_mark_page_accessed(struct mctl *c, int argc, char **argv)
{
	return free_cmd(c, "mark-page-accessed", "mark-page-accessed",
			MEMCGFS_OP_MARK_PAGE_ACCESSED, argc, argv, false);
}

/* simple one-operation commands: drain, whoami, kmem-cache create/destroy */
static int one_op(struct mctl *c, const char *cmd, const char *cgroup, struct memcgfs_op *op)
{
	struct memcgfs *m;
	char detail[512];
	int err;

	err = mctl_mount(c);
	if (err)
		return err;
	if (cgroup && (err = move_self(c, cgroup)))
		return err;
	err = memcgfs_open(c->mount, &m);
	if (err)
		return mctl_error(c, err, "%s: cannot open memcgfs.ctl: %s", c->mount, strerror(-err));
	err = memcgfs_exec(m, op, detail, sizeof(detail));
	memcgfs_close(m);
	if (err)
		return op_error(c, cmd, err, detail, NULL);
	return EXIT_OK;
}

/* options of the commands that take only the common ones (and -g) */
static int plain_opts(struct mctl *c, const char *cmd, int argc, char **argv, const char **cgroup)
{
	static const struct option opts[] = {
		COMMON_LONGOPTS,
		{ "cgroup", required_argument, NULL, 'g' },
		{ "bytes", no_argument, NULL, OPT_BYTES },
		{ NULL, 0, NULL, 0 },
	};
	int ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "m:hg:", opts, NULL)) != -1) {
		r = mctl_common_opt(c, ch, cmd);
		if (r < 0)
			return -1;
		if (r)
			continue;
		if (ch == 'g' && cgroup)
			*cgroup = optarg;
		else
			return mctl_usage_error(c, cmd, ch == 'g' ? "-g does not apply here" :
						"unknown option");
	}
	return 0;
}

static int cmd_drain(struct mctl *c, int argc, char **argv)
{
	struct memcgfs_op op = { .op = MEMCGFS_OP_DRAIN };
	int r = plain_opts(c, "drain", argc, argv, NULL);

	if (r)
		return r < 0 ? EXIT_OK : r;
	if (optind < argc)
		return mctl_usage_error(c, "drain", "takes no argument");
	return one_op(c, "drain", NULL, &op);
}

static int cmd_whoami(struct mctl *c, int argc, char **argv)
{
	struct memcgfs_whoami *w = malloc(sizeof(*w));
	struct memcgfs_op op = { .op = MEMCGFS_OP_WHOAMI, .whoami = w };
	const char *cg = NULL;
	int r;

	if (!w)
		return mctl_error(c, ENOMEM, "whoami: out of memory");
	r = plain_opts(c, "whoami", argc, argv, &cg);
	if (!r && optind < argc)
		r = mctl_usage_error(c, "whoami", "takes no argument");
	if (!r)
		r = one_op(c, "whoami", cg, &op);
	if (r) {
		free(w);
		return r < 0 ? EXIT_OK : r;
	}
	if (c->json) {
		printf("{\"pid\":%d,\"cgroup\":", (int)w->pid);
		json_string(stdout, w->cgroup);
		printf(",\"cpu\":%d}\n", w->cpu);
	} else {
		printf("pid=%d cgroup=%s cpu=%d\n", (int)w->pid, w->cgroup, w->cpu);
	}
	free(w);
	return EXIT_OK;
}

/* memcgfs.check: "ok", or "alloc: ..." / "memcg: ..." for the first violation */
static int cmd_check(struct mctl *c, int argc, char **argv)
{
	char path[MEMCGFS_PATH_MAX + 16], buf[1024];
	int r = plain_opts(c, "check", argc, argv, NULL);
	bool ok;
	size_t n;

	if (r)
		return r < 0 ? EXIT_OK : r;
	if (optind < argc)
		return mctl_usage_error(c, "check", "takes no argument");
	r = mctl_mount(c);
	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/memcgfs.check", c->mount);
	r = mctl_read_file(path, buf, sizeof(buf));
	if (r < 0)
		return mctl_error(c, -r, "%s: cannot read: %s%s", path, strerror(-r),
				  r == -EACCES || r == -EPERM ? " (root only)" : "");
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	ok = !strcmp(buf, "ok");
	if (c->json) {
		printf("{\"ok\":%s,\"result\":", ok ? "true" : "false");
		json_string(stdout, buf);
		printf("}\n");
	} else {
		printf("%s\n", buf);
	}
	return ok ? EXIT_OK : EXIT_FAIL;
}

static int cache_create(struct mctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_LONGOPTS,
		{ "align", required_argument, NULL, OPT_ALIGN },
		{ NULL, 0, NULL, 0 },
	};
	struct memcgfs_ctl_cache_info info;
	struct memcgfs_op op = { .op = MEMCGFS_OP_KMEM_CACHE_CREATE, .info = &info };
	const char *cmd = "kmem-cache create";
	uint64_t align = 0;
	int ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "m:h", opts, NULL)) != -1) {
		r = mctl_common_opt(c, ch, "kmem-cache");
		if (r < 0)
			return EXIT_OK;
		if (r)
			continue;
		if (ch != OPT_ALIGN || memcgfs_size_parse(optarg, &align) || align > UINT32_MAX)
			return mctl_usage_error(c, cmd, ch == OPT_ALIGN ? "bad --align '%s'" :
						"unknown option", optarg);
	}
	if (argc - optind < 2 || argc - optind > 3)
		return mctl_usage_error(c, cmd, argc - optind < 2 ? "missing NAME or SIZE" :
					"unexpected argument '%s'", argv[argc - 1]);
	op.name = argv[optind];
	op.align = (unsigned int)align;
	if (memcgfs_size_parse(argv[optind + 1], &op.size))
		return mctl_usage_error(c, cmd, "bad SIZE '%s'", argv[optind + 1]);
	if (argc - optind == 3 && memcgfs_slab_flags_parse(argv[optind + 2], &op.flags))
		return mctl_usage_error(c, cmd, "unknown slab flags '%s'", argv[optind + 2]);
	r = one_op(c, cmd, NULL, &op);
	if (r)
		return r;
	if (c->json) {
		fputs("{\"name\":", stdout);
		json_string(stdout, op.name);
		printf(",\"objsize\":%u,\"size\":%u,\"objperslab\":%u,\"pagesperslab\":%u}\n",
		       info.objsize, info.size, info.objperslab, info.pagesperslab);
	} else {
		printf("%s objsize=%u size=%u objperslab=%u pagesperslab=%u\n", op.name,
		       info.objsize, info.size, info.objperslab, info.pagesperslab);
	}
	return EXIT_OK;
}

static int cmd_kmem_cache(struct mctl *c, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return mctl_usage_error(c, "kmem-cache", "missing create, alloc, free or destroy");
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help"))
		return mctl_help("kmem-cache");
	if (!strcmp(sub, "create"))
		return cache_create(c, argc - 1, argv + 1);
	if (!strcmp(sub, "alloc")) {
		struct alloc_args a = { .cmd = "kmem-cache alloc",
					.op.op = MEMCGFS_OP_KMEM_CACHE_ALLOC };
		int r = alloc_opts(c, &a, argc - 1, argv + 1, false);

		if (r)
			return r < 0 ? EXIT_OK : r;
		argc--, argv++;
		if (optind >= argc || argc - optind > 2)
			return mctl_usage_error(c, a.cmd, optind >= argc ? "missing NAME" :
						"unexpected argument '%s'", argv[argc - 1]);
		a.op.name = argv[optind];
		if (argc - optind == 2 && gfp_arg(c, a.cmd, argv[optind + 1], &a.op.flags))
			return EXIT_USAGE;
		return do_alloc(c, &a);
	}
	if (!strcmp(sub, "free"))
		return free_cmd(c, "kmem-cache free", "kmem-cache", MEMCGFS_OP_KMEM_CACHE_FREE,
				argc - 1, argv + 1, true);
	if (!strcmp(sub, "destroy")) {
		struct memcgfs_op op = { .op = MEMCGFS_OP_KMEM_CACHE_DESTROY };
		int r = plain_opts(c, "kmem-cache", argc - 1, argv + 1, NULL);

		if (r)
			return r < 0 ? EXIT_OK : r;
		if (argc - 1 - optind != 1)
			return mctl_usage_error(c, "kmem-cache destroy", "one NAME");
		op.name = argv[1 + optind];
		return one_op(c, "kmem-cache destroy", NULL, &op);
	}
	return mctl_usage_error(c, "kmem-cache", "unknown '%s' (create, alloc, free or destroy)",
				sub);
}

/*
 * run and sandbox: [-g CGROUP] [--] COMMAND [ARG...], executed in CGROUP
 * (run's -g is required), in the sandbox's namespaces for sandbox.
 */
static int exec_command(struct mctl *c, int argc, char **argv, const char *cmd, bool sandbox)
{
	static const struct option opts[] = {
		COMMON_LONGOPTS,
		{ "cgroup", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cg = NULL;
	int ch, r, err = 0;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "+m:hg:", opts, NULL)) != -1) {
		r = mctl_common_opt(c, ch, cmd);
		if (r < 0)
			return EXIT_OK;
		if (r)
			continue;
		if (ch != 'g')
			return mctl_usage_error(c, cmd, "unknown option");
		cg = optarg;
	}
	if (!cg && !sandbox)
		return mctl_usage_error(c, cmd, "missing -g CGROUP");
	if (optind >= argc)
		return mctl_usage_error(c, cmd, "missing COMMAND");
	if (cg)
		err = move_self(c, cg);
	if (!err && sandbox)
		err = mctl_sandbox(c);
	if (err)
		return err;
	execvp(argv[optind], argv + optind);
	err = errno;
	mctl_error(c, err, "%s: %s", argv[optind], strerror(err));
	return err == ENOENT ? 127 : 126;
}

static int cmd_run(struct mctl *c, int argc, char **argv)
{
	return exec_command(c, argc, argv, "run", false);
}

static int cmd_sandbox(struct mctl *c, int argc, char **argv)
{
	return exec_command(c, argc, argv, "sandbox", true);
}

static const struct command {
	const char *name;
	int (*fn)(struct mctl *c, int argc, char **argv);
} commands[] = {
	{ "kmalloc", cmd_kmalloc },
	{ "kfree", cmd_kfree },
	{ "kmem-cache", cmd_kmem_cache },
	{ "alloc-pages", cmd_alloc_pages },
	{ "free-pages", cmd_free_pages },
	{ "mark-page-accessed", cmd_mark_page_accessed },
	{ "drain", cmd_drain },
	{ "whoami", cmd_whoami },
	{ "check", cmd_check },
	{ "run", cmd_run },
	{ "sandbox", cmd_sandbox },
	{ "tree", cmd_tree },
	{ "stat", cmd_stat },
	{ "top", cmd_top },
	{ "trace", cmd_trace },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_LONGOPTS,
		{ "bytes", no_argument, NULL, OPT_BYTES },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct mctl c = { .prog = "memcgctl" };
	int ch, r;

	while ((ch = getopt_long(argc, argv, "+m:hV", opts, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return EXIT_OK;
		}
		if (ch == 'V') {
			printf("memcgctl %s\n", MEMCGFS_VERSION);
			return EXIT_OK;
		}
		r = mctl_common_opt(&c, ch, NULL);
		if (!r)
			return mctl_usage_error(&c, NULL, "unknown option");
	}
	if (optind >= argc)
		return mctl_usage_error(&c, NULL, "missing COMMAND");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[optind], commands[i].name)) {
			r = commands[i].fn(&c, argc - optind, argv + optind);
			if (fflush(stdout) && !r)
				r = mctl_error(&c, errno, "stdout: %s", strerror(errno));
			return r;
		}
	}
	return mctl_usage_error(&c, NULL, "unknown command '%s'", argv[optind]);
}
