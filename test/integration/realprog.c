/* SPDX-License-Identifier: MIT */
/*
 * realprog - a real program for the real-memory tests: it uses memory the
 * way programs do and says what it did on stdout, one line per step, so
 * that a shell test can follow it.
 *
 *   realprog anon MIB                 touch MIB of anon memory, print "ready", sleep
 *   realprog grow MIB STEP_KIB [PAUSE_MS]
 *                                      touch STEP_KIB at a time up to MIB (PAUSE_MS
 *                                      between steps), printing "step N MS" (the
 *                                      milliseconds since the previous step began),
 *                                      then "done" and sleep
 *   realprog write FILE MIB            write MIB to FILE, read it back, print "ready", sleep
 *   realprog keep FILE MIB             create FILE, print "open", wait 2 s, then as write,
 *                                      keeping FILE open while it sleeps
 *   realprog stream FILE MIB           write MIB to FILE a MiB at a time (no sleep at the end)
 *   realprog read FILE [WAIT_MS]       read FILE whole, print "ready", sleep; with
 *                                      WAIT_MS, open it, print "open" and wait
 *                                      WAIT_MS before reading
 *   realprog threads N                 start N threads, print "ready", sleep
 *   realprog cachestat FILE            print the file's cached pages (cachestat(2))
 *   realprog drop FILE                 write FILE back and drop its page cache
 *
 * "sleep" is until a signal ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_cachestat
#define SYS_cachestat	451
#endif

#define MIB	(1024ul * 1024ul)

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Keep what we have until a signal ends us. */
static void hold(void)
{
	for (;;)
		pause();
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static char *touch(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = (char)(i | 1);
	return p;
}

static int write_file(const char *path, size_t mib, bool readback, bool keep)
{
	static char buf[MIB];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	if (keep) {
		/* open and empty for a while: a look at our descriptors finds it */
		say("open");
		sleep(2);
	}
	memset(buf, 'x', sizeof(buf));
	for (size_t i = 0; i < mib; i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			return 1;
		}
	}
	if (readback) {
		lseek(fd, 0, SEEK_SET);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
	}
	return keep ? 0 : close(fd) ? 1 : 0;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "anon") && argc == 3) {
		touch(strtoul(argv[2], NULL, 0) * MIB);
		say("ready");
		hold();
	} else if (!strcmp(mode, "grow") && (argc == 4 || argc == 5)) {
		size_t total = strtoul(argv[2], NULL, 0) * MIB, step = strtoul(argv[3], NULL, 0) * 1024;
		unsigned long pause_ms = argc == 5 ? strtoul(argv[4], NULL, 0) : 0;
		uint64_t t0 = now_ms();

		for (size_t done = 0, n = 1; done < total; done += step, n++) {
			uint64_t t1;

			touch(step);
			if (pause_ms)
				usleep((useconds_t)pause_ms * 1000);
			t1 = now_ms();
			say("step %zu %llu", n, (unsigned long long)(t1 - t0));
			t0 = t1;
		}
		say("done");
		hold();
	} else if (!strcmp(mode, "write") && argc == 4) {
		if (write_file(argv[2], strtoul(argv[3], NULL, 0), true, false))
			return 1;
		say("ready");
		hold();
	} else if (!strcmp(mode, "keep") && argc == 4) {
		if (write_file(argv[2], strtoul(argv[3], NULL, 0), true, true))
			return 1;
		say("ready");
		hold();
	} else if (!strcmp(mode, "stream") && argc == 4) {
		return write_file(argv[2], strtoul(argv[3], NULL, 0), false, false);
	} else if (!strcmp(mode, "read") && (argc == 3 || argc == 4)) {
		static char buf[MIB];
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
		if (argc == 4) {
			say("open");
			usleep((useconds_t)strtoul(argv[3], NULL, 0) * 1000);
		}
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		say("ready");
		hold();
	} else if (!strcmp(mode, "threads") && argc == 3) {
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, idle_thread, NULL)) {
				perror("pthread_create");
				return 1;
			}
		}
		say("ready");
		hold();
	} else if (!strcmp(mode, "drop") && argc == 3) {
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0 || fdatasync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
			perror(argv[2]);
			return 1;
		}
		close(fd);
	} else if (!strcmp(mode, "cachestat") && argc == 3) {
		struct { uint64_t off, len; } r = { 0, 0 };
		struct { uint64_t cache, dirty, wb, evicted, recent; } cs;
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0 || syscall(SYS_cachestat, fd, &r, &cs, 0)) {
			perror(argv[2]);
			return 1;
		}
		printf("%llu\n", (unsigned long long)cs.cache);
	} else {
		fprintf(stderr, "usage: realprog anon MIB | grow MIB STEP_KIB [PAUSE_MS] | write|keep FILE MIB | "
			"stream FILE MIB | read FILE | threads N | cachestat FILE | drop FILE\n");
		return 2;
	}
	return 0;
}
