/* SPDX-License-Identifier: MIT */
/* harness.c - see harness.h. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static struct bench_daemon daemons[BENCH_MAX_DAEMONS];
static int nr_daemons;
static char tmpdir[PATH_MAX];
static const char *progname = "bench";
static volatile sig_atomic_t cleaning;
static void (*die_hook)(void);

static void cleanup(void);

void bench_name(const char *prog)
{
	progname = prog;
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	if (die_hook)
		die_hook();
	exit(2);
}

void bench_at_die(void (*fn)(void))
{
	die_hook = fn;
}

void bench_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		bench_die("a path too long for %zu bytes", len);
}

void bench_require_fuse(const char *prog)
{
	const char *why = NULL;

	if (geteuid() != 0)
		why = "needs root (it mounts FUSE filesystems)";
	else if (access("/dev/fuse", R_OK | W_OK))
		why = "no /dev/fuse";
	else if (system("command -v fusermount3 >/dev/null 2>&1"))
		why = "no fusermount3";
	if (why) {
		printf("%s: skipped: %s\n", prog, why);
		exit(77);
	}
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A sorted copy of v[0..n), to be freed. */
static double *sorted_copy(const double *v, int n)
{
	double *tmp = malloc((size_t)n * sizeof(*tmp));

	if (!tmp)
		bench_die("out of memory");
	memcpy(tmp, v, (size_t)n * sizeof(*v));
	qsort(tmp, (size_t)n, sizeof(*tmp), bench_cmp_double);
	return tmp;
}

double bench_median(const double *v, int n)
{
	double *tmp = sorted_copy(v, n);
	double m = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;

	free(tmp);
	return m;
}

double bench_quantile(const double *v, int n, double q)
{
	double *tmp = sorted_copy(v, n);
	double m = tmp[(int)(q * (n - 1) + 0.5)];

	free(tmp);
	return m;
}

double bench_round_ratio(const double *a, const double *b, int n)
{
	double *q = malloc((size_t)n * sizeof(*q));
	double m;

	if (!q)
		bench_die("out of memory");
	for (int r = 0; r < n; r++)
		q[r] = a[r] / b[r];
	m = bench_median(q, n);
	free(q);
	return m;
}

bool bench_is_mounted(const char *mnt)
{
	char line[8192], *save, *f;
	bool found = false;
	FILE *fp = fopen("/proc/self/mountinfo", "re");

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
		f = strtok_r(line, " ", &save);
		for (int i = 0; f && i < 4; i++)
			f = strtok_r(NULL, " ", &save);
		if (f && !strcmp(f, mnt))
			found = true;
	}
	fclose(fp);
	return found;
}

static bool wait_exit(pid_t pid, double secs)
{
	double end = bench_now() + secs;

	do {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		usleep(10000);
	} while (bench_now() < end);
	return false;
}

static void fusermount_u(const char *mnt)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execlp("fusermount3", "fusermount3", "-u", mnt, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

void bench_daemon_stop(struct bench_daemon *d)
{
	if (!d->mnt[0])
		return;
	if (bench_is_mounted(d->mnt)) {
		fusermount_u(d->mnt);
		if (bench_is_mounted(d->mnt))
			umount2(d->mnt, MNT_DETACH);
	}
	if (d->pid > 0) {
		if (!wait_exit(d->pid, 5)) {
			kill(d->pid, SIGTERM);
			if (!wait_exit(d->pid, 5)) {
				kill(d->pid, SIGKILL);
				wait_exit(d->pid, 5);
			}
		}
		d->pid = 0;
	}
	d->mounted = false;
}

static void cleanup(void)
{
	if (cleaning)
		return;
	cleaning = 1;
	for (int i = 0; i < nr_daemons; i++) {
		bench_daemon_stop(&daemons[i]);
		rmdir(daemons[i].mnt);
		unlink(daemons[i].log);
	}
	if (tmpdir[0])
		rmdir(tmpdir);
}

/* Interrupted (meson's timeout, Ctrl-C): detach the mounts, end the daemons. */
static void on_signal(int sig)
{
	if (!cleaning) {
		cleaning = 1;
		for (int i = 0; i < nr_daemons; i++) {
			umount2(daemons[i].mnt, MNT_DETACH);
			if (daemons[i].pid > 0)
				kill(daemons[i].pid, SIGTERM);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void bench_setup(const char *prog)
{
	progname = prog;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", prog);
	if (!mkdtemp(tmpdir)) {
		tmpdir[0] = '\0';
		bench_die("mkdtemp: %s", strerror(errno));
	}
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
}

struct bench_daemon *bench_daemon_new(const char *name)
{
	struct bench_daemon *d;

	if (nr_daemons == BENCH_MAX_DAEMONS)
		bench_die("too many daemons");
	d = &daemons[nr_daemons];
	memset(d, 0, sizeof(*d));
	d->name = name;
	if ((size_t)snprintf(d->mnt, sizeof(d->mnt), "%s/%s", tmpdir, name) >= sizeof(d->mnt) ||
	    (size_t)snprintf(d->log, sizeof(d->log), "%s/%s.log", tmpdir, name) >= sizeof(d->log))
		bench_die("%s: path too long", name);
	bench_mkdir(d->mnt);
	nr_daemons++;
	return d;
}

bool bench_daemon_try_start(struct bench_daemon *d, int cpu, const char *const *argv)
{
	double end;
	pid_t pid = fork();

	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (cpu >= 0)
			bench_pin_self(cpu);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	d->pid = pid;
	end = bench_now() + 15;
	while (!bench_is_mounted(d->mnt)) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			char line[512];
			FILE *fp = fopen(d->log, "re");

			d->pid = 0;
			fprintf(stderr, "%s: %s exited (wait status 0x%x) before mounting:\n",
				progname, d->name, st);
			while (fp && fgets(line, sizeof(line), fp))
				fprintf(stderr, "  %s", line);
			if (fp)
				fclose(fp);
			return false;
		}
		if (bench_now() > end) {
			fprintf(stderr, "%s: %s did not mount on %s within 15 s\n",
				progname, d->name, d->mnt);
			return false;	/* pid kept: the clean-up takes it down */
		}
		usleep(10000);
	}
	d->mounted = true;
	return true;
}

void bench_daemon_start(struct bench_daemon *d, int cpu, const char *const *argv)
{
	if (!bench_daemon_try_start(d, cpu, argv))
		bench_die("cannot mount %s", d->mnt);
}

void bench_mkdir(const char *path)
{
	if (mkdir(path, 0755))
		bench_die("mkdir %s: %s", path, strerror(errno));
}

unsigned long bench_parse_ul(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0)
		bench_die("bad %s: %s", what, s);
	return v;
}

enum bench_opt_kind { BENCH_OPT_FLAG, BENCH_OPT_UL, BENCH_OPT_INT };

void bench_parse_loop_opts(int argc, char **argv, struct bench_loop_opts *o,
			   bool instr_bulk, const char *usage)
{
	const struct {
		const char *name;
		enum bench_opt_kind kind;
		void *dst;
	} opts[] = {
		{ "--no-instr", BENCH_OPT_FLAG, &o->no_instr },
		{ "--iters", BENCH_OPT_UL, &o->iters },
		{ "--bulk", BENCH_OPT_UL, &o->bulk },
		{ "--reps", BENCH_OPT_INT, &o->reps },
		{ "--instr-iters", BENCH_OPT_UL, &o->instr_iters },
		{ "--instr-bulk", BENCH_OPT_UL, &o->instr_bulk },
	};
	size_t n = sizeof(opts) / sizeof(opts[0]) - !instr_bulk;

	for (int i = 1; i < argc; i++) {
		size_t k = 0;

		while (k < n && (strcmp(argv[i], opts[k].name) ||
				 (opts[k].kind != BENCH_OPT_FLAG && i + 1 >= argc)))
			k++;
		if (k == n)
			bench_die("%s", usage);
		if (opts[k].kind == BENCH_OPT_FLAG)
			*(bool *)opts[k].dst = true;
		else if (opts[k].kind == BENCH_OPT_UL)
			*(unsigned long *)opts[k].dst = bench_parse_ul(argv[++i], opts[k].name);
		else
			*(int *)opts[k].dst = (int)bench_parse_ul(argv[++i], opts[k].name);
	}
}

bool bench_have_valgrind(void)
{
	pid_t pid;
	int st;
	posix_spawn_file_actions_t fa;
	char *argv[] = { "valgrind", "--version", NULL };

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "valgrind", &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return false;
	}
	posix_spawn_file_actions_destroy(&fa);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

const char *bench_instr_skip(bool no_instr, bool have_callgrind_h)
{
	if (no_instr)
		return "skipped (--no-instr)";
	if (!have_callgrind_h)
		return "valgrind/callgrind.h was not found at build time";
	if (!bench_have_valgrind())
		return "valgrind not found";
	return NULL;
}

void bench_show_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	fclose(f);
}

void bench_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

void bench_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		bench_die("open %s: %s", path, strerror(errno));
	if (write(fd, text, (size_t)len) != len)
		bench_die("write '%s' to %s: %s", text, path, strerror(errno));
	close(fd);
}

long bench_cat(const char *path)
{
	static char buf[1 << 16];
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

void bench_target(const char *name, const char *measured, const char *goal, bool ok)
{
	printf("target %s measured=%s goal=%s %s\n", name, measured, goal, ok ? "ok" : "MISS");
}
