/* SPDX-License-Identifier: MIT */
/*
 * seq_buf.c - formatting into a caller's buffer (the kernel's lib/seq_buf.c),
 * and the invariant checkers' failure, which formats the same way.
 */
#include "lib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void seq_buf_init(struct seq_buf *s, char *buf, size_t len)
{
	s->buf = buf;
	s->len = len;
	s->pos = 0;
	if (len)
		buf[0] = '\0';
}

void seq_buf_printf(struct seq_buf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s->buf + (s->pos < s->len ? s->pos : s->len),
		      s->pos < s->len ? s->len - s->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->pos += (size_t)n;
}

/* n bytes appended: copied as far as they fit, NUL kept, pos counts all */
static void seq_buf_append(struct seq_buf *s, const char *src, size_t n)
{
	if (s->pos < s->len) {
		size_t room = s->len - s->pos - 1;
		size_t k = n < room ? n : room;

		memcpy(s->buf + s->pos, src, k);
		s->buf[s->pos + k] = '\0';
	}
	s->pos += n;
}

void seq_buf_puts(struct seq_buf *s, const char *str)
{
	seq_buf_append(s, str, strlen(str));
}

void seq_buf_put_key_u64(struct seq_buf *s, const char *key, char sep,
			 unsigned long long v, char end)
{
	char num[24];	/* sep, 20 digits, end */
	char *p = num + sizeof(num);

	*--p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	*--p = sep;
	seq_buf_puts(s, key);
	seq_buf_append(s, p, (size_t)(num + sizeof(num) - p));
}

int check_fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (msg && len) {
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}
