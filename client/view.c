/* SPDX-License-Identifier: MIT */
/*
 * client/view.c - memcgctl's views of the tree: tree (the hierarchy with
 * usage, limits and events), stat (memory.stat for people) and top (a live
 * view sorted by memory.current: plain ANSI escapes and termios, so it
 * works in any terminal, under tmux and over ssh).
 */
#include "memcgctl.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const struct option view_opts[] = {
	{ "mount", required_argument, NULL, 'm' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "bytes", no_argument, NULL, OPT_BYTES },
	{ "help", no_argument, NULL, 'h' },
	{ "delay", required_argument, NULL, 'd' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "batch", no_argument, NULL, 'b' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Common options of the views; top's -d/-n/-b into the pointers (NULL:
 * refused).  Returns 0, EXIT_USAGE, or -1 after printing --help.
 */
static int view_parse(struct mctl *c, const char *cmd, int argc, char **argv, double *delay,
		      long *iters, bool *batch)
{
	int ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "m:hd:n:b", view_opts, NULL)) != -1) {
		char *end;

		r = mctl_common_opt(c, ch, cmd);
		if (r < 0)
			return -1;
		if (r)
			continue;
		switch (ch) {
		case 'd':
			if (!delay)
				goto bad;
			*delay = strtod(optarg, &end);
			if (*end || !*optarg || *delay < 0.1 || *delay > 3600)
				return mctl_usage_error(c, cmd, "bad delay '%s' (0.1 .. 3600 s)", optarg);
			break;
		case 'n':
			if (!iters)
				goto bad;
			*iters = strtol(optarg, &end, 10);
			if (*end || !*optarg || *iters < 1)
				return mctl_usage_error(c, cmd, "bad iteration count '%s'", optarg);
			break;
		case 'b':
			if (!batch)
				goto bad;
			*batch = true;
			break;
		default:
			goto bad;
		}
	}
	return 0;
bad:
	return mctl_usage_error(c, cmd, "unknown option");
}

/* ---- tree ---- */
struct node {
	char *path;
	char *label;		/* tree glyphs and name */
	size_t width;		/* label's display columns */
	int depth;
	struct cg_mem mem;
};

struct nodes {
	struct node *v;
	size_t n, cap;
};

static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static bool utf8_terminal(void)
{
	setlocale(LC_CTYPE, "");
	return !strcmp(nl_langinfo(CODESET), "UTF-8");
}

static int nodes_add(struct nodes *ns, const char *path, const char *prefix, const char *name,
		     int depth)
{
	struct node *nd;
	size_t l;

	if (ns->n == ns->cap) {
		struct node *v = realloc(ns->v, (ns->cap = ns->cap ? 2 * ns->cap : 64) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
	}
	nd = &ns->v[ns->n];
	memset(nd, 0, sizeof(*nd));
	nd->path = strdup(path);
	l = strlen(prefix) + strlen(name) + 1;
	nd->label = malloc(l);
	if (!nd->path || !nd->label) {
		free(nd->path);
		free(nd->label);
		return -ENOMEM;
	}
	snprintf(nd->label, l, "%s%s", prefix, name);
	nd->width = display_width(nd->label);
	nd->depth = depth;
	mctl_read_mem(path, &nd->mem);
	ns->n++;
	return 0;
}

static void nodes_free(struct nodes *ns)
{
	for (size_t i = 0; i < ns->n; i++) {
		free(ns->v[i].path);
		free(ns->v[i].label);
	}
	free(ns->v);
	ns->v = NULL;
	ns->n = ns->cap = 0;
}

/* Depth-first, children by name; indent is the prefix for dir's children. */
static int walk(struct nodes *ns, const char *dir, const char *indent, int depth, bool utf8)
{
	char **names, prefix[1024], child_indent[1024], path[MEMCGFS_PATH_MAX];
	size_t n;
	int err = mctl_list_children(dir, &names, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		bool last = i + 1 == n;

		snprintf(prefix, sizeof(prefix), "%s%s", indent,
			 utf8 ? (last ? "└─" : "├─") : (last ? "`-" : "|-"));
		snprintf(child_indent, sizeof(child_indent), "%s%s", indent,
			 last ? "  " : (utf8 ? "│ " : "| "));
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path))
			continue;
		err = nodes_add(ns, path, prefix, names[i], depth + 1);
		if (!err && depth < 64)
			err = walk(ns, path, child_indent, depth + 1, utf8);
	}
	mctl_free_list(names, n);
	return err;
}

static void json_mem(const struct cg_mem *m)
{
	if (!m->has_memory) {
		fputs("\"current\":null,\"peak\":null,\"high\":null,\"max\":null,\"events\":null", stdout);
		return;
	}
	printf("\"current\":%" PRIu64 ",\"peak\":%" PRIu64 ",\"high\":", m->current, m->peak);
	json_limit(stdout, m->high);
	fputs(",\"max\":", stdout);
	json_limit(stdout, m->max);
	printf(",\"events\":{\"low\":%" PRIu64 ",\"high\":%" PRIu64 ",\"max\":%" PRIu64
	       ",\"oom\":%" PRIu64 ",\"oom_kill\":%" PRIu64 ",\"oom_group_kill\":%" PRIu64 "}",
	       m->ev_low, m->ev_high, m->ev_max, m->ev_oom, m->ev_oom_kill, m->ev_oom_group_kill);
}

/* nodes [i, end) with depth > parent depth, nested */
static size_t json_tree(const struct mctl *c, const struct nodes *ns, size_t i)
{
	const struct node *nd = &ns->v[i];
	size_t j = i + 1;
	bool first = true;

	fputs("{\"cgroup\":", stdout);
	json_string(stdout, mctl_cgroup_name(c, nd->path));
	fputc(',', stdout);
	json_mem(&nd->mem);
	printf(",\"procs\":%u,\"children\":[", nd->mem.nr_procs);
	while (j < ns->n && ns->v[j].depth > nd->depth) {
		if (!first)
			fputc(',', stdout);
		first = false;
		j = json_tree(c, ns, j);
	}
	fputs("]}", stdout);
	return j;
}

int cmd_tree(struct mctl *c, int argc, char **argv)
{
	char dir[MEMCGFS_PATH_MAX];
	struct nodes ns = { 0 };
	size_t w = 6;
	int err = view_parse(c, "tree", argc, argv, NULL, NULL, NULL);
	bool utf8;

	if (err)
		return err < 0 ? EXIT_OK : err;
	if (argc - optind > 1)
		return mctl_usage_error(c, "tree", "one CGROUP at most");
	err = mctl_cgroup_path(c, optind < argc ? argv[optind] : NULL, dir, sizeof(dir));
	if (err)
		return err;
	utf8 = !c->json && utf8_terminal();
	err = nodes_add(&ns, dir, "", mctl_cgroup_name(c, dir), 0);
	if (!err)
		err = walk(&ns, dir, "", 0, utf8);
	if (err) {
		nodes_free(&ns);
		return mctl_error(c, err, "%s: %s", dir, strerror(-err));
	}
	if (c->json) {
		json_tree(c, &ns, 0);
		fputc('\n', stdout);
		nodes_free(&ns);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ns.n; i++)
		if (ns.v[i].width > w)
			w = ns.v[i].width;
	printf("%-*s %8s %8s %8s %8s  %s\n", (int)w, "CGROUP", "CURRENT", "PEAK", "HIGH", "MAX",
	       "EVENTS");
	for (size_t i = 0; i < ns.n; i++) {
		const struct cg_mem *m = &ns.v[i].mem;
		char cur[32] = "-", peak[32] = "-", high[32] = "-", max[32] = "-", ev[160] = "-";

		if (m->has_memory) {
			mctl_size(c, cur, sizeof(cur), m->current);
			mctl_size(c, peak, sizeof(peak), m->peak);
			mctl_limit(c, high, sizeof(high), m->high);
			mctl_limit(c, max, sizeof(max), m->max);
			mctl_events(ev, sizeof(ev), m);
		}
		/* pad by display columns: the glyphs are several bytes */
		printf("%s%*s %8s %8s %8s %8s  %s\n", ns.v[i].label, (int)(w - ns.v[i].width), "",
		       cur, peak, high, max, ev);
	}
	nodes_free(&ns);
	return EXIT_OK;
}

/* ---- stat ---- */

/* memory.stat's byte items (the kernel's memory_stats[]); the rest are counts. */
static bool stat_is_bytes(const char *key)
{
	static const char *const bytes[] = {
		"anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu",
		"sock", "vmalloc", "shmem", "zswap", "zswapped", "file_mapped", "file_dirty",
		"file_writeback", "swapcached", "anon_thp", "file_thp", "shmem_thp",
		"inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable",
		"slab_reclaimable", "slab_unreclaimable", "slab", "hugetlb",
	};

	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++)
		if (!strcmp(key, bytes[i]))
			return true;
	return false;
}

int cmd_stat(struct mctl *c, int argc, char **argv)
{
	char dir[MEMCGFS_PATH_MAX], p[MEMCGFS_PATH_MAX + 32], *buf, *save = NULL;
	uint64_t current = 0, slab = 0;
	bool has_current, first = true;
	int n, err = view_parse(c, "stat", argc, argv, NULL, NULL, NULL);

	if (err)
		return err < 0 ? EXIT_OK : err;
	if (argc - optind != 1)
		return mctl_usage_error(c, "stat", argc - optind ? "one CGROUP only" : "missing CGROUP");
	err = mctl_cgroup_path(c, argv[optind], dir, sizeof(dir));
	if (err)
		return err;
	buf = malloc(65536);
	if (!buf)
		return mctl_error(c, ENOMEM, "stat: out of memory");
	snprintf(p, sizeof(p), "%s/memory.stat", dir);
	n = mctl_read_file(p, buf, 65536);
	if (n < 0) {
		free(buf);
		return mctl_error(c, n, "%s: %s", p, n == -ENOENT ?
				  "no memory.stat (is memory in the parent's cgroup.subtree_control?)" :
				  strerror(-n));
	}
	snprintf(p, sizeof(p), "%s/memory.current", dir);
	has_current = !mctl_read_u64(p, &current);
	if (c->json) {
		fputs("{\"cgroup\":", stdout);
		json_string(stdout, mctl_cgroup_name(c, dir));
		if (has_current)
			printf(",\"current\":%" PRIu64, current);
		else
			fputs(",\"current\":null", stdout);
		fputs(",\"stat\":{", stdout);
	} else {
		printf("%s\n", mctl_cgroup_name(c, dir));
	}
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' '), v[32];
		uint64_t val;

		if (!sp)
			continue;
		*sp = '\0';
		val = strtoull(sp + 1, NULL, 10);
		if (!strcmp(line, "slab"))
			slab = val;
		if (c->json) {
			printf("%s\"%s\":%" PRIu64, first ? "" : ",", line, val);
			first = false;
			continue;
		}
		if (stat_is_bytes(line))
			mctl_size(c, v, sizeof(v), val);
		else
			snprintf(v, sizeof(v), "%" PRIu64, val);
		printf("  %-26s %10s\n", line, v);
	}
	if (c->json) {
		printf("},\"slab\":%" PRIu64 ",\"slab_share\":", slab);
		if (has_current && current)
			printf("%.4f}\n", (double)slab / (double)current);
		else
			fputs("null}\n", stdout);
	} else if (has_current) {
		char s[32], cur[32];

		mctl_size(c, s, sizeof(s), slab);
		mctl_size(c, cur, sizeof(cur), current);
		if (current)
			printf("slab share: %.1f%% of memory.current (slab %s of %s)\n",
			       100.0 * (double)slab / (double)current, s, cur);
		else
			printf("slab share: - (memory.current is 0)\n");
	}
	free(buf);
	return EXIT_OK;
}

/* ---- top ---- */
static volatile sig_atomic_t top_quit, top_resized;
static struct termios top_saved;
static bool top_raw;

static void top_signal(int sig)
{
	if (sig == SIGWINCH)
		top_resized = 1;
	else
		top_quit = 1;
}

static void term_restore(void)
{
	if (!top_raw)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &top_saved);
	top_raw = false;
}

static int term_setup(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &top_saved))
		return -errno;
	t = top_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	top_raw = true;
	atexit(term_restore);
	fputs("\033[?1049h\033[?25l", stdout);	/* alternate screen, no cursor */
	return 0;
}

static int cmp_current(const void *a, const void *b)
{
	const struct node *x = a, *y = b;

	if (x->mem.current != y->mem.current)
		return x->mem.current < y->mem.current ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* Every memcg-enabled cgroup under dir (dir itself included), by current. */
static int top_collect(struct nodes *ns, const char *dir)
{
	int err;
	size_t j = 0;

	err = nodes_add(ns, dir, "", "", 0);
	if (!err)
		err = walk(ns, dir, "", 0, false);
	if (err)
		return err;
	for (size_t i = 0; i < ns->n; i++) {
		if (ns->v[i].mem.has_memory) {
			ns->v[j++] = ns->v[i];
		} else {
			free(ns->v[i].path);
			free(ns->v[i].label);
		}
	}
	ns->n = j;
	qsort(ns->v, ns->n, sizeof(*ns->v), cmp_current);
	return 0;
}

static void top_frame(const struct mctl *c, const struct nodes *ns, bool tty, int cols, int rows)
{
	char line[1024], now[32];
	time_t t = time(NULL);
	int shown = 0, avail = rows - 3;
	size_t w = 6;

	strftime(now, sizeof(now), "%H:%M:%S", localtime(&t));
	for (size_t i = 0; i < ns->n; i++) {
		size_t l = strlen(mctl_cgroup_name(c, ns->v[i].path));

		if (l > w)
			w = l;
	}
	if (w > 48)
		w = 48;
	if (tty)
		fputs("\033[H", stdout);
#define TOP_LINE(...) do {						\
		snprintf(line, sizeof(line), __VA_ARGS__);		\
		if (tty && cols > 0 && (int)strlen(line) > cols)	\
			line[cols] = '\0';				\
		fputs(line, stdout);					\
		fputs(tty ? "\033[K\r\n" : "\n", stdout);		\
	} while (0)
	TOP_LINE("memcgctl top - %.200s - %s - %zu cgroups%s", c->mount, now, ns->n,
		 tty ? " - q: quit" : "");
	TOP_LINE("%s%-*s %8s %8s %8s %8s %6s  %s%s", tty ? "\033[7m" : "", (int)w, "CGROUP",
		 "CURRENT", "PEAK", "HIGH", "MAX", "PROCS", "EVENTS", tty ? "\033[0m" : "");
	for (size_t i = 0; i < ns->n && (!tty || shown < avail); i++, shown++) {
		const struct cg_mem *m = &ns->v[i].mem;
		char cur[32], peak[32], high[32], max[32], ev[160];

		mctl_size(c, cur, sizeof(cur), m->current);
		mctl_size(c, peak, sizeof(peak), m->peak);
		mctl_limit(c, high, sizeof(high), m->high);
		mctl_limit(c, max, sizeof(max), m->max);
		mctl_events(ev, sizeof(ev), m);
		TOP_LINE("%-*.*s %8s %8s %8s %8s %6u  %s", (int)w, (int)w,
			 mctl_cgroup_name(c, ns->v[i].path), cur, peak, high, max, m->nr_procs, ev);
	}
#undef TOP_LINE
	if (tty)
		fputs("\033[J", stdout);
	else
		fputc('\n', stdout);
	fflush(stdout);
}

static void top_json(const struct mctl *c, const struct nodes *ns)
{
	fputc('[', stdout);
	for (size_t i = 0; i < ns->n; i++) {
		fputs(i ? ",{\"cgroup\":" : "{\"cgroup\":", stdout);
		json_string(stdout, mctl_cgroup_name(c, ns->v[i].path));
		fputc(',', stdout);
		json_mem(&ns->v[i].mem);
		printf(",\"procs\":%u}", ns->v[i].mem.nr_procs);
	}
	fputs("]\n", stdout);
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_top(struct mctl *c, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = top_signal };
	char dir[MEMCGFS_PATH_MAX];
	double delay = 1.0;
	long iters = 0, frames = 0;
	bool batch = false, tty;
	int err = view_parse(c, "top", argc, argv, &delay, &iters, &batch);

	if (err)
		return err < 0 ? EXIT_OK : err;
	if (argc - optind > 1)
		return mctl_usage_error(c, "top", "one CGROUP at most");
	err = mctl_cgroup_path(c, optind < argc ? argv[optind] : NULL, dir, sizeof(dir));
	if (err)
		return err;
	tty = !batch && !c->json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	if (tty && (err = term_setup()))
		return mctl_error(c, err, "top: the terminal: %s", strerror(-err));
	while (!top_quit) {
		struct nodes ns = { 0 };
		struct winsize ws = { .ws_row = 24, .ws_col = 80 };
		double next;

		if (tty)
			ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
		err = top_collect(&ns, dir);
		if (err) {
			nodes_free(&ns);
			term_restore();
			return mctl_error(c, err, "%s: %s", dir, strerror(-err));
		}
		if (c->json)
			top_json(c, &ns);
		else
			top_frame(c, &ns, tty, ws.ws_col, ws.ws_row);
		nodes_free(&ns);
		if (iters && ++frames >= iters)
			break;
		next = now_s() + delay;
		top_resized = 0;
		while (!top_quit && !top_resized) {
			double left = next - now_s();
			struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
			int r;

			if (left <= 0)
				break;
			if (!tty) {
				struct timespec ts = { (time_t)left,
						       (long)((left - (double)(time_t)left) * 1e9) };

				nanosleep(&ts, NULL);
				continue;
			}
			r = poll(&pfd, 1, (int)(left * 1000) + 1);
			if (r > 0) {
				char k[16];
				ssize_t nr = read(STDIN_FILENO, k, sizeof(k));
				bool refresh = false;

				for (ssize_t i = 0; i < nr; i++) {
					if (k[i] == 'q' || k[i] == 'Q')
						top_quit = 1;
					else if (k[i] == ' ')
						refresh = true;
				}
				if (nr == 0)	/* the terminal went away */
					top_quit = 1;
				if (refresh)
					break;
			}
		}
	}
	term_restore();
	return EXIT_OK;
}
