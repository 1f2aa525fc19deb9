/* SPDX-License-Identifier: MIT */
/*
 * fuzz_parse.c - the pure parsers, each against an oracle:
 *   0 conf_parse_size()        against a reference of its documented
 *                              grammar (digits, one K/M/G suffix in either
 *                              case, whitespace only around the whole;
 *                              EINVAL, ERANGE past 64 bits)
 *   1 page_counter_memparse()  "max" is PAGE_COUNTER_MAX, a plain decimal
 *                              or K/M/G number is its pages, never more
 *                              than PAGE_COUNTER_MAX; only 0 or EINVAL
 *   2 gfp_parse()              parse, gfp_format(), parse again: the same
 *   3 slab_flags_parse()       the same round trip
 *   4 memcg_page_type_parse()  its name parses back to it
 *   5 conf_signal()            0..64 or EINVAL; a number is itself
 *   6 kstrtoint0()           against a reference of the kernel's
 *                              kstrtoint(s, 0) (lib/kstrtox.c)
 * The first input byte selects the parser, the rest is the text.
 */
#include "fuzz_machine.h"

#include "conf.h"
#include "internal.h"
#include "memcg.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_machine_init(4 * FUZZ_MIB, 1);	/* page_counter_memparse needs the page size */
	return 0;
}

/* conf_parse_size's documented grammar, written independently. */
static int ref_parse_size(const char *s, uint64_t *out)
{
	unsigned __int128 v = 0;
	size_t i = 0, n = strlen(s);
	unsigned int shift = 0;
	bool big = false;

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i == n || !isdigit((unsigned char)s[i]))
		return -EINVAL;
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		v = v * 10 + (unsigned int)(s[i] - '0');
		if (v > UINT64_MAX)
			big = true, v = (unsigned __int128)UINT64_MAX + 1;
	}
	if (i < n && strchr("kKmMgG", s[i]) && s[i]) {
		shift = s[i] == 'k' || s[i] == 'K' ? 10 : s[i] == 'm' || s[i] == 'M' ? 20 : 30;
		i++;
	}
	if (i != n)
		return -EINVAL;
	v <<= shift;
	if (big || v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* The kernel's kstrtoint(s, 0), as lib/kstrtox.c has it. */
static int ref_kstrtoull(const char *s, unsigned long long *res)
{
	unsigned int base = 10;
	unsigned __int128 v = 0;
	bool overflow = false;
	const char *p;

	if (s[0] == '0') {
		if (tolower((unsigned char)s[1]) == 'x' && isxdigit((unsigned char)s[2]))
			base = 16;
		else
			base = 8;
	}
	if (base == 16)
		s += 2;
	for (p = s; *p; p++) {
		unsigned int d;

		if (isdigit((unsigned char)*p))
			d = (unsigned int)(*p - '0');
		else if (isxdigit((unsigned char)*p))
			d = (unsigned int)(tolower((unsigned char)*p) - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
		if (v > ULLONG_MAX)
			overflow = true, v &= ULLONG_MAX;
	}
	if (overflow)
		return -ERANGE;
	if (p == s)
		return -EINVAL;
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*res = (unsigned long long)v;
	return 0;
}

static int ref_kstrtoint(const char *s, int *out)
{
	unsigned long long v;
	int err;

	if (s[0] == '-') {
		err = ref_kstrtoull(s + 1, &v);
		if (err)
			return err;
		if (v > (unsigned long long)INT_MAX + 1)
			return -ERANGE;
		*out = (int)-(long long)v;
		return 0;
	}
	err = ref_kstrtoull(s[0] == '+' ? s + 1 : s, &v);
	if (err)
		return err;
	if (v > INT_MAX)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

/* A plain decimal number with an optional K/M/G: its value, else -1. */
static bool plain_size(const char *s, unsigned __int128 *bytes)
{
	unsigned __int128 v = 0;
	const char *p = s;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p) || *p == '0')
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (unsigned int)(*p - '0');
		if (v > UINT64_MAX)
			return false;
	}
	switch (*p) {
	case 'K': case 'k': v <<= 10; p++; break;
	case 'M': case 'm': v <<= 20; p++; break;
	case 'G': case 'g': v <<= 30; p++; break;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p || v > UINT64_MAX)
		return false;
	*bytes = v;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, buf[4096];
	unsigned int which;
	size_t len;

	fuzz_record(data, size);

	if (!size)
		return 0;
	which = data[0] % 7;
	len = size - 1;
	s = malloc(len + 1);
	if (!s)
		fuzz_die("out of memory");
	memcpy(s, data + 1, len);
	s[len] = '\0';

	switch (which) {
	case 0: {
		uint64_t a = 0xdead, b = 0xdead;
		int ra = conf_parse_size(s, &a), rb = ref_parse_size(s, &b);

		if (ra != rb || (!ra && a != b))
			fuzz_die("conf_parse_size('%s'): %d %llu, the grammar says %d %llu", s, ra,
				 (unsigned long long)a, rb, (unsigned long long)b);
		if (ra && a != 0xdead)
			fuzz_die("conf_parse_size('%s') failed but wrote its output", s);
		break;
	}
	case 1: {
		unsigned long pages = 0xdead;
		unsigned __int128 bytes;
		int r = page_counter_memparse((const char *)data + 1, len, "max", &pages);

		if (r && r != -EINVAL)
			fuzz_die("page_counter_memparse: %d", r);
		if (!r && pages > PAGE_COUNTER_MAX)
			fuzz_die("page_counter_memparse('%s'): %lu pages > PAGE_COUNTER_MAX", s,
				 pages);
		if (len <= 4096 && !memchr(data + 1, '\0', len)) {
			char t[4097];
			char *b = t, *e;

			memcpy(t, s, len + 1);
			e = t + len;
			while (e > b && isspace((unsigned char)e[-1]))
				*--e = '\0';
			while (isspace((unsigned char)*b))
				b++;
			if (!strcmp(b, "max") && (r || pages != PAGE_COUNTER_MAX))
				fuzz_die("page_counter_memparse('max'): %d %lu", r, pages);
			if (plain_size(s, &bytes)) {
				unsigned __int128 want = bytes / 4096;

				if (want > PAGE_COUNTER_MAX)
					want = PAGE_COUNTER_MAX;
				if (r || pages != (unsigned long)want)
					fuzz_die("page_counter_memparse('%s'): %d %lu pages, want %lu",
						 s, r, pages, (unsigned long)want);
			}
		}
		break;
	}
	case 2: {
		gfp_t a, b;

		if (!gfp_parse(s, &a)) {
			if (gfp_format(buf, sizeof(buf), a) >= (int)sizeof(buf))
				fuzz_die("gfp_format: too long");
			if (gfp_parse(buf, &b) || a != b)
				fuzz_die("gfp '%s' = %#x formats as '%s', which parses to %#x", s,
					 (unsigned int)a, buf, (unsigned int)b);
		}
		break;
	}
	case 3: {
		slab_flags_t a, b;

		if (!slab_flags_parse(s, &a)) {
			if (slab_flags_format(buf, sizeof(buf), a) >= (int)sizeof(buf))
				fuzz_die("slab_flags_format: too long");
			if (slab_flags_parse(buf, &b) || a != b)
				fuzz_die("slab flags '%s' = %#x format as '%s', which parse to %#x", s,
					 a, buf, b);
		}
		break;
	}
	case 4: {
		enum memcg_page_type t, u;

		if (!memcg_page_type_parse(s, &t)) {
			if ((unsigned int)t >= NR_MEMCG_PAGE_TYPES)
				fuzz_die("page type '%s' = %d", s, (int)t);
			if (memcg_page_type_parse(memcg_page_type_name(t), &u) || u != t ||
			    strcmp(s, memcg_page_type_name(t)))
				fuzz_die("page type '%s' = %d named '%s'", s, (int)t,
					 memcg_page_type_name(t));
		}
		break;
	}
	case 5: {
		int sig = conf_signal(s);

		if (sig != -EINVAL && (sig < 0 || sig > 64))
			fuzz_die("conf_signal('%s') = %d", s, sig);
		break;
	}
	case 6: {
		int a = 0x5eed, b = 0x5eed;
		int ra = kstrtoint0(s, &a), rb = ref_kstrtoint(s, &b);

		if (ra != rb || (!ra && a != b))
			fuzz_die("kstrtoint0('%s'): %d %d, the kernel's kstrtoint: %d %d", s, ra,
				 a, rb, b);
		break;
	}
	}
	free(s);
	return 0;
}
