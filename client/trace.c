/* SPDX-License-Identifier: MIT */
/*
 * client/trace.c - memcgctl trace: follow trace_pipe, keep the events
 * asked for and those of the processes of a cgroup subtree.
 *
 * trace_pipe's lines are ftrace's: "COMM-PID [CPU] ..... SECS.USECS:
 * EVENT: FIELDS", PID being the requesting thread.  The cgroup filter
 * keeps a sorted set of the thread ids ever listed in cgroup.threads
 * (else cgroup.procs) of the subtree, re-read every 100 ms; a line of an
 * unknown pid waits (with the lines after it, to keep their order) until
 * the set has been re-read after it arrived, at most 20 ms later.  So a
 * process that moved in, charged and left the cgroup (or exited) within
 * those few milliseconds may be missed; memcgctl kmalloc -g lives that
 * briefly, a workload does not.
 */
#include "memcgctl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OPT_NO_ENABLE = MCTL_OPT_OWN };

static const char *const events[] = {
	"kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free", "mm_page_alloc", "mm_page_free",
};
#define NR_EVENTS (sizeof(events) / sizeof(events[0]))

struct trace_line {
	char comm[64];
	long pid;
	long cpu;
	char time[32];
	char event[32];
	const char *fields;
};

struct pidset {
	int *v;
	size_t n, cap;
	double stamp;		/* when read */
};

static volatile sig_atomic_t trace_stop;

static void trace_signal(int sig)
{
	(void)sig;
	trace_stop = 1;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "  comm-with-dashes-123 [000] ..... 12.345678: kmalloc: a=b ..." */
static bool parse_line(char *line, struct trace_line *t)
{
	char *s = line, *p, *dash, *end;
	size_t l;

	while (*s == ' ')
		s++;
	/* "-PID" then spaces (the pid is padded) then " [" */
	for (p = strstr(s, " ["); p; p = strstr(p + 1, " [")) {
		char *q = p;

		while (q > s && q[-1] == ' ')
			q--;
		for (dash = q; dash > s && dash[-1] >= '0' && dash[-1] <= '9'; dash--)
			;
		if (dash > s && dash < q && dash[-1] == '-')
			break;
	}
	if (!p)
		return false;
	l = (size_t)(dash - 1 - s);
	if (l >= sizeof(t->comm))
		l = sizeof(t->comm) - 1;
	memcpy(t->comm, s, l);
	t->comm[l] = '\0';
	t->pid = strtol(dash, NULL, 10);
	t->cpu = strtol(p + 2, &end, 10);
	if (*end != ']')
		return false;
	p = end + 1;
	while (*p == ' ')
		p++;
	while (*p && *p != ' ')	/* the flags column */
		p++;
	while (*p == ' ')
		p++;
	end = strstr(p, ": ");
	if (!end || (size_t)(end - p) >= sizeof(t->time))
		return false;
	memcpy(t->time, p, (size_t)(end - p));
	t->time[end - p] = '\0';
	p = end + 2;
	end = strstr(p, ": ");
	if (!end || (size_t)(end - p) >= sizeof(t->event))
		return false;
	memcpy(t->event, p, (size_t)(end - p));
	t->event[end - p] = '\0';
	t->fields = end + 2;
	return true;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void pidset_add_file(struct pidset *ps, const char *path)
{
	char *buf = malloc(1 << 20), *save = NULL;
	int n;

	if (!buf)
		return;
	n = mctl_read_file(path, buf, 1 << 20);
	for (char *w = n > 0 ? strtok_r(buf, "\n", &save) : NULL; w; w = strtok_r(NULL, "\n", &save)) {
		if (ps->n == ps->cap) {
			int *v = realloc(ps->v, (ps->cap = ps->cap ? 2 * ps->cap : 256) * sizeof(*v));

			if (!v)
				break;
			ps->v = v;
		}
		ps->v[ps->n++] = atoi(w);
	}
	free(buf);
}

static void pidset_walk(struct pidset *ps, const char *dir, int depth)
{
	char p[MEMCGFS_PATH_MAX + 32], **names;
	size_t n, before = ps->n;

	/* a path too long for the buffer is a cgroup we cannot name: skipped, never cut */
	if (snprintf(p, sizeof(p), "%s/cgroup.threads", dir) >= (int)sizeof(p))
		return;
	pidset_add_file(ps, p);
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	if (ps->n == before)
		pidset_add_file(ps, p);
	if (depth > 64 || mctl_list_children(dir, &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (snprintf(p, sizeof(p), "%s/%s", dir, names[i]) < (int)sizeof(p))
			pidset_walk(ps, p, depth + 1);
	}
	mctl_free_list(names, n);
}

/* Add the subtree's current threads; pids seen once stay (their late lines). */
static void pidset_refresh(struct pidset *ps, const char *dir)
{
	size_t j = 0;

	pidset_walk(ps, dir, 0);
	if (ps->n)	/* an empty set has no array: qsort(NULL, 0) is undefined */
		qsort(ps->v, ps->n, sizeof(*ps->v), cmp_int);
	for (size_t i = 0; i < ps->n; i++)
		if (!j || ps->v[i] != ps->v[j - 1])
			ps->v[j++] = ps->v[i];
	ps->n = j;
	ps->stamp = mono();
}

static bool pidset_has(const struct pidset *ps, int pid)
{
	return ps->n && bsearch(&pid, ps->v, ps->n, sizeof(*ps->v), cmp_int);
}

static bool all_digits(const char *s, size_t l)
{
	if (!l)
		return false;
	for (size_t i = 0; i < l; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static void print_json(const struct trace_line *t)
{
	const char *f = t->fields;

	fputs("{\"comm\":", stdout);
	json_string(stdout, t->comm);
	printf(",\"pid\":%ld,\"cpu\":%ld,\"time\":%s,\"event\":", t->pid, t->cpu, t->time);
	json_string(stdout, t->event);
	fputs(",\"fields\":{", stdout);
	for (bool first = true; *f;) {
		const char *sp = strchr(f, ' '), *eq = strchr(f, '=');
		size_t l = sp ? (size_t)(sp - f) : strlen(f);
		char key[64], val[256];

		if (!eq || eq > f + l) {
			f += l;
			while (*f == ' ')
				f++;
			continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - f), f);
		snprintf(val, sizeof(val), "%.*s", (int)(f + l - eq - 1), eq + 1);
		printf("%s\"%s\":", first ? "" : ",", key);
		if (all_digits(val, strlen(val)) || (val[0] == '-' && all_digits(val + 1, strlen(val + 1))) ||
		    !strcmp(val, "true") || !strcmp(val, "false"))
			fputs(val, stdout);
		else
			json_string(stdout, val);
		first = false;
		f += l;
		while (*f == ' ')
			f++;
	}
	fputs("}}\n", stdout);
}

/* The events to keep, from "kmalloc,kfree": a bit per events[] entry. */
static int parse_events(struct mctl *c, const char *list, unsigned int *mask)
{
	char *dup = strdup(list), *save = NULL;

	if (!dup)
		return mctl_error(c, ENOMEM, "trace: out of memory");
	*mask = 0;
	for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < NR_EVENTS; i++)
			if (!strcmp(w, events[i]))
				break;
		if (i == NR_EVENTS) {
			mctl_usage_error(c, "trace", "unknown event '%s' (kmalloc, kmem_cache_alloc, "
					 "kfree, kmem_cache_free, mm_page_alloc, mm_page_free)", w);
			free(dup);
			return EXIT_USAGE;
		}
		*mask |= 1u << i;
	}
	free(dup);
	if (!*mask)
		return mctl_usage_error(c, "trace", "--event: no event named");
	return 0;
}

static bool event_wanted(unsigned int mask, const char *ev)
{
	for (size_t i = 0; i < NR_EVENTS; i++)
		if (!strcmp(ev, events[i]))
			return mask & (1u << i);
	return false;
}

/*
 * Lines in trace order, waiting until their pid is known: a line goes out
 * when its pid is in the set, or is dropped when the set was re-read after
 * the line arrived and still does not have it.
 */
struct queued {
	char *line;
	int pid;
	double at;
};

struct queue {
	struct queued *v;
	size_t head, n, cap;
	bool filter;		/* -g: wait for pids; else every line goes out */
	bool json;
};

static int queue_add(struct queue *q, const char *line, int pid)
{
	if (q->head + q->n == q->cap) {
		if (q->head) {
			memmove(q->v, q->v + q->head, q->n * sizeof(*q->v));
			q->head = 0;
		} else {
			struct queued *v = realloc(q->v, (q->cap = q->cap ? 2 * q->cap : 64) *
						   sizeof(*v));

			if (!v)
				return -ENOMEM;
			q->v = v;
		}
	}
	q->v[q->head + q->n].line = strdup(line);
	if (!q->v[q->head + q->n].line)
		return -ENOMEM;
	q->v[q->head + q->n].pid = pid;
	q->v[q->head + q->n].at = mono();
	q->n++;
	return 0;
}

/* Print what can go out (at most max lines, 0: all); returns how many. */
static long queue_flush(const struct mctl *c, struct queue *q, const struct pidset *ps, long max)
{
	long out = 0;

	while (q->n && (!max || out < max)) {
		struct queued *e = &q->v[q->head];

		if (q->filter && !pidset_has(ps, e->pid)) {
			if (ps->stamp <= e->at)
				break;		/* not re-read since: wait */
		} else if (c->json) {
			struct trace_line t;

			if (parse_line(e->line, &t))
				print_json(&t);
			out++;
		} else {
			puts(e->line);
			out++;
		}
		free(e->line);
		q->head++;
		q->n--;
	}
	if (!q->n)
		q->head = 0;
	return out;
}

static void queue_free(struct queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->v[q->head + i].line);
	free(q->v);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

int cmd_trace(struct mctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mount", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ "event", required_argument, NULL, 'e' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "count", required_argument, NULL, 'n' },
		{ "no-enable", no_argument, NULL, OPT_NO_ENABLE },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = trace_signal };
	char on_path[MEMCGFS_PATH_MAX + 32], pipe_path[MEMCGFS_PATH_MAX + 32];
	char dir[MEMCGFS_PATH_MAX], on[8] = "", *buf;
	const char *cgroup = NULL;
	unsigned int mask = (1u << NR_EVENTS) - 1;
	struct pidset ps = { 0 };
	struct queue q = { 0 };
	bool enable = true, enabled = false;
	long count = 0, seen = 0;
	size_t len = 0, cap = 1 << 16;
	int ch, fd, err, common, ret = EXIT_OK;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "m:he:g:n:", opts, NULL)) != -1) {
		char *end;

		common = mctl_common_opt(c, ch, "trace");
		if (common < 0)
			return EXIT_OK;
		if (common)
			continue;
		switch (ch) {
		case 'e':
			err = parse_events(c, optarg, &mask);
			if (err)
				return err;
			break;
		case 'g':
			cgroup = optarg;
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || !*optarg || count < 1)
				return mctl_usage_error(c, "trace", "bad count '%s'", optarg);
			break;
		case OPT_NO_ENABLE:
			enable = false;
			break;
		default:
			return mctl_usage_error(c, "trace", "unknown option");
		}
	}
	if (optind < argc)
		return mctl_usage_error(c, "trace", "unexpected argument '%s'", argv[optind]);
	if (cgroup) {
		err = mctl_cgroup_path(c, cgroup, dir, sizeof(dir));
		if (err)
			return err;
		pidset_refresh(&ps, dir);
	} else if ((err = mctl_mount(c))) {
		return err;
	}
	snprintf(on_path, sizeof(on_path), "%s/tracing_on", c->mount);
	snprintf(pipe_path, sizeof(pipe_path), "%s/trace_pipe", c->mount);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	fd = open(pipe_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return mctl_error(c, errno, "%s: %s", pipe_path, strerror(errno));
	if (enable && mctl_read_file(on_path, on, sizeof(on)) > 0 && on[0] == '0') {
		err = write_str(on_path, "1");
		if (err) {
			close(fd);
			free(ps.v);
			return mctl_error(c, err, "%s: cannot turn tracing on: %s (run as root, or "
					  "--no-enable)", on_path, strerror(-err));
		}
		enabled = true;
	}
	q.filter = cgroup != NULL;
	buf = malloc(cap);
	if (!buf) {
		ret = mctl_error(c, ENOMEM, "trace: out of memory");
		goto out;
	}
	while (!trace_stop && (!count || seen < count)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;
		char *nl, *line;

		if (cgroup && (mono() - ps.stamp >= 0.1 || (q.n && mono() - ps.stamp >= 0.02)))
			pidset_refresh(&ps, dir);
		seen += queue_flush(c, &q, &ps, count ? count - seen : 0);
		fflush(stdout);
		if (count && seen >= count)
			break;
		r = poll(&pfd, 1, q.n ? 20 : cgroup ? 100 : 1000);
		if (r <= 0)
			continue;
		r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0) {
			if (r < 0)
				ret = mctl_error(c, errno, "%s: %s", pipe_path, strerror(errno));
			break;
		}
		len += (size_t)r;
		buf[len] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			struct trace_line t;
			char copy[1024];

			*nl = '\0';
			snprintf(copy, sizeof(copy), "%s", line);
			if (parse_line(line, &t) && event_wanted(mask, t.event) &&
			    queue_add(&q, copy, (int)t.pid)) {
				ret = mctl_error(c, ENOMEM, "trace: out of memory");
				goto out;
			}
			line = nl + 1;
		}
		len = strlen(line);
		memmove(buf, line, len + 1);
		if (len == cap - 1)	/* a line longer than the buffer: drop it */
			len = 0;
	}
out:
	if (enabled && (err = write_str(on_path, "0")))
		mctl_error(c, err, "%s: cannot turn tracing off again", on_path);
	queue_free(&q);
	free(buf);
	free(ps.v);
	close(fd);
	return ret;
}
