/* SPDX-License-Identifier: MIT */
/*
 * util.c - small helpers of fs/: a growable string, clocks and whole-file
 * reads (the kernel's strstrip and kstrtoint are conf/lib's, lib.h).
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1, cap;
	char *p;

	if (want <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 256;
	while (cap < want)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p)
		return -ENOMEM;
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

int sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb_reserve(sb, 64))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sb->cap - sb->len) {
		if (sb_reserve(sb, (size_t)n))
			return -ENOMEM;
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
	return 0;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

uint64_t fs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

ssize_t fs_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}
