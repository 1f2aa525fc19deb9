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

/* v's decimal digits, backwards from end (exclusive): two a division */
static void put_digits(char *end, unsigned long long v)
{
	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		end -= 2;
		memcpy(end, &digit_pairs[2 * r], 2);
	}
	if (v >= 10)
		memcpy(end - 2, &digit_pairs[2 * v], 2);
	else
		end[-1] = (char)('0' + v);
}

static unsigned int count_digits(unsigned long long v)
{
	unsigned int n = 1;

	for (; v >= 10000; v /= 10000)
		n += 4;
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

void seq_buf_put_keyn_u64(struct seq_buf *s, const char *key, size_t keylen, char sep,
			  unsigned long long v, char end)
{
	unsigned int nd = count_digits(v);
	size_t n = keylen + 1 + nd + 1;
	char num[24];	/* sep, 20 digits, end */

	/* the common case, all of it fits with the NUL: written in place */
	if (s->pos + n < s->len) {
		char *d = s->buf + s->pos;

		memcpy(d, key, keylen);
		d += keylen;
		d[0] = sep;
		put_digits(d + 1 + nd, v);
		d[1 + nd] = end;
		d[2 + nd] = '\0';
		s->pos += n;
		return;
	}
	num[0] = sep;
	put_digits(num + 1 + nd, v);
	num[1 + nd] = end;
	seq_buf_append(s, key, keylen);
	seq_buf_append(s, num, 2 + nd);
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
