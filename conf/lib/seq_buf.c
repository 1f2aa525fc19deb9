/* SPDX-License-Identifier: MIT */
/*
 * seq_buf.c - formatting into a caller's buffer (the kernel's lib/seq_buf.c),
 * and the invariant checkers' failure, which formats the same way.
 */
#include "lib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

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
