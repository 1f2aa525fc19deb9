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

/* "00" to "99": two digits a division */
static const char digit_pairs[201] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

void seq_buf_put_keyn_u64(struct seq_buf *s, const char *key, size_t keylen, char sep,
			  unsigned long long v, char end)
{
	char num[24];	/* sep, 20 digits, end */
	char *p = num + sizeof(num);
	size_t n;

	*--p = end;
	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		p -= 2;
		memcpy(p, &digit_pairs[2 * r], 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, &digit_pairs[2 * v], 2);
	} else {
		*--p = (char)('0' + v);
	}
	*--p = sep;
	n = (size_t)(num + sizeof(num) - p);
	/* the common case, both fit with the NUL: no clipping to work out */
	if (s->pos + keylen + n < s->len) {
		char *d = s->buf + s->pos;

		memcpy(d, key, keylen);
		memcpy(d + keylen, p, n);
		d[keylen + n] = '\0';
		s->pos += keylen + n;
		return;
	}
	seq_buf_append(s, key, keylen);
	seq_buf_append(s, p, n);
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
