/* SPDX-License-Identifier: MIT */
/*
 * size.c - memcgfs's own SIZE grammar, the one parser of it: memcgfs.ctl's
 * requests, memcgfs.ini's sizes and libmemcgfs (which links this file alone,
 * as the lib_size library) read sizes through it.
 */
#include "lib.h"

#include <errno.h>
#include <string.h>

static int dec_parse(const char *s, size_t len, bool suffix, uint64_t *out)
{
	unsigned int shift = 0;
	bool range = false;
	uint64_t v = 0;

	if (!s)
		return -EINVAL;
	if (suffix && len) {
		switch (s[len - 1]) {
		case 'K': case 'k': shift = 10; break;
		case 'M': case 'm': shift = 20; break;
		case 'G': case 'g': shift = 30; break;
		}
		if (shift)
			len--;
	}
	if (!len)
		return -EINVAL;
	/* the whole string first: malformed beats too large */
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			range = true;
		else
			v = v * 10 + d;
	}
	if (range || v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int size_parse(const char *s, size_t len, uint64_t *out)
{
	return dec_parse(s, len, true, out);
}

int u64_parse(const char *s, size_t len, uint64_t *out)
{
	return dec_parse(s, len, false, out);
}

int hex_parse(const char *s, size_t maxlen, uint64_t *out)
{
	size_t l = s ? strlen(s) : 0;
	uint64_t v = 0;

	if (!l || l > maxlen || maxlen > 16)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return -EINVAL;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}
