/* SPDX-License-Identifier: MIT */
/*
 * string.c - the kernel's strstrip() (lib/string.c) and kstrtoint() with
 * base 0 (lib/kstrtox.c), for the files a user writes numbers into.
 */
#include "lib.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

/*
 * The kernel's isspace() (lib/ctype.c): the C locale's six, and 0xA0
 * (Latin-1's no-break space, _S|_SP in its table).
 */
static bool kisspace(unsigned char c)
{
	return isspace(c) || c == 0xa0;
}

/* The kernel's strstrip(): leading and trailing whitespace removed. */
char *strstrip(char *s)
{
	size_t n = strlen(s);

	while (n && kisspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (*s && kisspace((unsigned char)*s))
		s++;
	return s;
}

/* kstrtoint(s, 0): an optional sign, then base 0 digits to the end (one "\n" allowed). */
int kstrtoint0(const char *s, int *out)
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
