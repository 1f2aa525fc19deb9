/* SPDX-License-Identifier: MIT */
/*
 * util.c - small helpers of fs/: a growable string, the kernel's string
 * parsing (strstrip, kstrtoint), clocks and whole-file reads.
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

/* The kernel's strstrip(): leading and trailing whitespace removed. */
char *fs_strstrip(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* kstrtoint(s, 0): an optional sign, then base 0 digits to the end (one "\n" allowed). */
int fs_kstrtoint(const char *s, int *out)
{
	bool neg = false;
	unsigned int base = 10;
	unsigned long long v = 0;
	const char *p;

	if (*s == '+') {
		s++;
	} else if (*s == '-') {
		neg = true;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
		base = 16;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	for (p = s; *p; p++) {
		unsigned int d;

		if (*p == '\n' && !p[1])
			break;
		if (isdigit((unsigned char)*p))
			d = (unsigned int)(*p - '0');
		else if (isxdigit((unsigned char)*p))
			d = (unsigned int)(tolower((unsigned char)*p) - 'a' + 10);
		else
			return -EINVAL;
		if (d >= base)
			return -EINVAL;
		if (v > (ULLONG_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (p == s)
		return -EINVAL;
	if (neg ? v > (unsigned long long)INT_MAX + 1 : v > INT_MAX)
		return -ERANGE;
	*out = neg ? (int)-(long long)v : (int)v;
	return 0;
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
