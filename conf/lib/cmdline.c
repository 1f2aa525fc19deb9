/* SPDX-License-Identifier: MIT */
/*
 * cmdline.c - the kernel's memparse() (lib/cmdline.c), on the kernel's
 * simple_strtoull() (lib/vsprintf.c) with base 0, and simple_strtol() with
 * base 0, the number match_token()'s "%d" and match_int() read (lib/parser.c).
 */
#include "lib.h"

#include <ctype.h>

/* simple_strtoull(s, &end, 0): wraps on overflow, as the kernel's does. */
static unsigned long long simple_strtoull0(const char *s, const char **end)
{
	unsigned long long v = 0;
	unsigned int base = 10;

	if (s[0] == '0') {
		if ((s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	for (;; s++) {
		unsigned int d;

		if (isdigit((unsigned char)*s))
			d = (unsigned int)(*s - '0');
		else if (isxdigit((unsigned char)*s))
			d = (unsigned int)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
	}
	*end = s;
	return v;
}

/*
 * simple_strtol(s, &end, 0): a '-' negates what simple_strtoull reads after
 * it (no '+'; a lone "-" is read, as 0); wraps as the kernel's (64-bit long).
 */
long simple_strtol0(const char *s, const char **end)
{
	if (*s == '-')
		return (long)-simple_strtoull0(s + 1, end);
	return (long)simple_strtoull0(s, end);
}

/* memparse(): a number and at most one binary suffix. */
unsigned long long memparse(const char *s, const char **end)
{
	unsigned long long v = simple_strtoull0(s, end);
	int shift = 0;

	switch (**end) {
	case 'E': case 'e': shift += 10; /* fall through */
	case 'P': case 'p': shift += 10; /* fall through */
	case 'T': case 't': shift += 10; /* fall through */
	case 'G': case 'g': shift += 10; /* fall through */
	case 'M': case 'm': shift += 10; /* fall through */
	case 'K': case 'k': shift += 10;
		(*end)++;
		v <<= shift;
		break;
	default:
		break;
	}
	return v;
}
