/* SPDX-License-Identifier: MIT */
/*
 * test_lib - the leaf libraries alone: conf/lib (seq_buf, check_fail,
 * strstrip, kstrtoint0, memparse, the SIZE parser) and the name tables
 * (alloc_names, memcg_names), linked without the allocator or the memory
 * controller, as libmemcgfs links them.  The parsers' cases are those of
 * every caller: memcg's files (memparse, kstrtoint0), fs's files
 * (kstrtoint0), memcgfs.ctl, memcgfs.ini and libmemcgfs (size_parse).
 */
#include "lib.h"
#include "memcg.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_size_parse(void **state)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "2312", 2312 }, { "64K", 65536 }, { "4m", 4 << 20 },
		{ "1G", 1 << 30 }, { "1g", 1 << 30 }, { "007", 7 },
		{ "18446744073709551615", UINT64_MAX }, { "17179869183G", 17179869183ull << 30 },
	};
	static const char *const bad[] = {
		"", "K", "-1", "+1", "1KB", "1 K", " 1", "1 ", "0x10", "1T", "1GG", "1.5G", "abc",
		"1e3", "99999999999999999999x", "99999999999999999999KK",
	};
	static const char *const huge[] = {
		"18446744073709551616", "99999999999999999999999", "18014398509481984K",
		"17592186044416M", "17179869184G",
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 1;
		assert_int_equal(size_parse(good[i].s, strlen(good[i].s), &v), 0);
		assert_int_equal(v, good[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		assert_int_equal(size_parse(bad[i], strlen(bad[i]), &v), -EINVAL);
		assert_int_equal(v, 12345);
	}
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		v = 12345;
		assert_int_equal(size_parse(huge[i], strlen(huge[i]), &v), -ERANGE);
		assert_int_equal(v, 12345);
	}
	assert_int_equal(size_parse(NULL, 0, &v), -EINVAL);
	/* only len bytes are read (memcgfs.ini trims around a value so) */
	assert_int_equal(size_parse("4K  ", 2, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(size_parse("12345", 2, &v), 0);
	assert_int_equal(v, 12);

	/* u64_parse: the same digits, no suffix */
	assert_int_equal(u64_parse("4096", 4, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(u64_parse("4K", 2, &v), -EINVAL);
	assert_int_equal(u64_parse("", 0, &v), -EINVAL);
	assert_int_equal(u64_parse("18446744073709551615", 20, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(u64_parse("18446744073709551616", 20, &v), -ERANGE);
	assert_int_equal(u64_parse("18446744073709551616x", 21, &v), -EINVAL);
}

/* hex_parse: a memcgfs.ctl handle, as the daemon and libmemcgfs read it */
static void test_hex_parse(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(hex_parse("1f", 16, &v), 0);
	assert_int_equal(v, 0x1f);
	assert_int_equal(hex_parse("DeadBeef", 16, &v), 0);
	assert_int_equal(v, 0xdeadbeef);
	assert_int_equal(hex_parse("ffffffffffffffff", 16, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	/* the longest accepted is maxlen digits, leading zeros included */
	assert_int_equal(hex_parse("00000000000000001", 16, &v), -EINVAL);
	assert_int_equal(hex_parse("0001", 4, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(hex_parse("00001", 4, &v), -EINVAL);
	assert_int_equal(hex_parse("", 16, &v), -EINVAL);
	assert_int_equal(hex_parse(NULL, 16, &v), -EINVAL);
	assert_int_equal(hex_parse("0x1f", 16, &v), -EINVAL);
	assert_int_equal(hex_parse("1g", 16, &v), -EINVAL);
	assert_int_equal(hex_parse(" 1", 16, &v), -EINVAL);
	assert_int_equal(hex_parse("-1", 16, &v), -EINVAL);
}

static void test_memparse(void **state)
{
	static const struct { const char *s; unsigned long long v; size_t used; } cases[] = {
		{ "4096", 4096, 4 }, { "1k", 1024, 2 }, { "1K", 1024, 2 }, { "2M", 2 << 20, 2 },
		{ "1G", 1ull << 30, 2 }, { "1t", 1ull << 40, 2 }, { "1P", 1ull << 50, 2 },
		{ "1e", 1ull << 60, 2 }, { "0x10", 16, 4 }, { "0X1fk", 31 << 10, 5 },
		{ "010", 8, 3 }, { "08", 0, 1 }, { "0x", 0, 1 }, { "", 0, 0 }, { "max", 0, 1 },
		{ "12 ", 12, 2 }, { "1KB", 1024, 2 }, { "-1", 0, 0 },
		/* "max" loses its m as a suffix; simple_strtoull wraps, as the kernel's do */
		{ "18446744073709551617", 1, 20 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *end;

		assert_int_equal(memparse(cases[i].s, &end), cases[i].v);
		assert_int_equal(end - cases[i].s, cases[i].used);
	}
}

static void test_simple_strtol0(void **state)
{
	static const struct { const char *s; long v; size_t used; } cases[] = {
		{ "42", 42, 2 }, { "-42", -42, 3 }, { "0x1f", 31, 4 }, { "-010", -8, 4 },
		{ "+5", 0, 0 }, { " 5", 0, 0 }, { "", 0, 0 }, { "x", 0, 0 },
		/* a lone '-' is read (as 0); "--1" stops after the first */
		{ "-", 0, 1 }, { "--1", 0, 1 }, { "-x", 0, 1 }, { "08", 0, 1 }, { "0x", 0, 1 },
		{ "12 ", 12, 2 }, { "5\t", 5, 1 },
		/* wraps, as the kernel's */
		{ "18446744073709551616", 0, 20 }, { "-18446744073709551615", 1, 21 },
		{ "9223372036854775808", -9223372036854775807L - 1, 19 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *end;

		assert_int_equal(simple_strtol0(cases[i].s, &end), cases[i].v);
		assert_int_equal(end - cases[i].s, cases[i].used);
	}
}

static void test_kstrtoint0(void **state)
{
	static const struct { const char *s; int ret, v; } cases[] = {
		{ "42", 0, 42 }, { "+42", 0, 42 }, { "-42", 0, -42 }, { "0", 0, 0 },
		{ "0x1F", 0, 31 }, { "-0x10", 0, -16 }, { "010", 0, 8 }, { "1\n", 0, 1 },
		{ "2147483647", 0, 2147483647 }, { "-2147483648", 0, -2147483647 - 1 },
		{ "2147483648", -ERANGE, 0 }, { "-2147483649", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
		{ "", -EINVAL, 0 }, { "-", -EINVAL, 0 }, { "08", -EINVAL, 0 }, { "0x", -EINVAL, 0 },
		{ "a", -EINVAL, 0 }, { "1\n\n", -EINVAL, 0 }, { " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 }, { "+-1", -EINVAL, 0 }, { "\n", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int v = 777;

		assert_int_equal(kstrtoint0(cases[i].s, &v), cases[i].ret);
		assert_int_equal(v, cases[i].ret ? 777 : cases[i].v);
	}
}

static void test_strstrip(void **state)
{
	char a[] = " \t 1 2 \n", b[] = "\n\n", c[] = "x";
	char d[] = "\xa0\v5\f\r\xa0", e[] = "\xa1x\x85";

	(void)state;
	assert_string_equal(strstrip(a), "1 2");
	assert_string_equal(strstrip(b), "");
	assert_string_equal(strstrip(c), "x");
	/* the kernel's isspace(): 0xa0 is a space, 0xa1 and 0x85 are not */
	assert_string_equal(strstrip(d), "5");
	assert_string_equal(strstrip(e), "\xa1x\x85");
}

/* o counted pos bytes and its buffer holds want */
static void seq_buf_is(const struct seq_buf *o, size_t pos, const char *want)
{
	assert_int_equal(o->pos, pos);
	assert_string_equal(o->buf, want);
}

static void test_seq_buf(void **state)
{
	struct seq_buf o;
	char buf[8], msg[16];

	(void)state;
	seq_buf_init(&o, buf, sizeof(buf));
	seq_buf_is(&o, 0, "");
	seq_buf_printf(&o, "%s", "abcd");
	seq_buf_printf(&o, "%d", 12345);
	/* what does not fit is dropped, pos counts on */
	seq_buf_is(&o, 9, "abcd123");
	seq_buf_printf(&o, "xy");
	seq_buf_is(&o, 11, "abcd123");

	/* the appenders without printf: the same dropping and counting */
	seq_buf_init(&o, buf, sizeof(buf));
	seq_buf_put_key_u64(&o, "ab", ' ', 0, '\n');
	seq_buf_is(&o, 5, "ab 0\n");
	seq_buf_put_key_u64(&o, "", '=', 18446744073709551615ull, ';');
	seq_buf_is(&o, 27, "ab 0\n=1");
	seq_buf_puts(&o, "z");
	seq_buf_is(&o, 28, "ab 0\n=1");
	seq_buf_init(&o, buf, sizeof(buf));
	seq_buf_puts(&o, "key");
	seq_buf_put_key_u64(&o, "", ' ', 1234567, '\n');
	seq_buf_is(&o, 12, "key 123");
	seq_buf_init(&o, buf, 0);
	seq_buf_puts(&o, "x");
	assert_int_equal(o.pos, 1);
	{
		/* every digit count, and the two-digit steps' edges, as printf writes them */
		static const unsigned long long vals[] = {
			0, 7, 9, 10, 42, 99, 100, 101, 999, 1000, 4096, 65535, 100000, 1234567,
			99999999, 100000000, 4294967296ull, 1000000000000000000ull,
			9999999999999999999ull, 18446744073709551615ull,
		};
		char big[1024], want[1024];
		struct seq_buf w;
		size_t at = 0;

		seq_buf_init(&w, big, sizeof(big));
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			seq_buf_put_keyn_u64(&w, "key_name", 3, ' ', vals[i], '\n');
			at += (size_t)snprintf(want + at, sizeof(want) - at, "key %llu\n", vals[i]);
		}
		seq_buf_is(&w, at, want);
	}

	assert_int_equal(check_fail(msg, sizeof(msg), "bad %d", 7), -EUCLEAN);
	assert_string_equal(msg, "bad 7");
	assert_int_equal(check_fail(NULL, 0, "bad"), -EUCLEAN);
}

/* One table, two rules: the daemon prints an unnamed bit, the client refuses it. */
static void test_flag_names(void **state)
{
	char buf[128];
	gfp_t gfp;
	slab_flags_t sf;

	(void)state;
	assert_int_equal(gfp_format(buf, sizeof(buf), GFP_KERNEL | 0x200u), 16);
	assert_string_equal(buf, "GFP_KERNEL|0x200");
	strcpy(buf, "untouched");
	assert_int_equal(gfp_format_named(buf, sizeof(buf), GFP_KERNEL | 0x200u), -EINVAL);
	assert_string_equal(buf, "untouched");
	assert_int_equal(gfp_format_named(buf, sizeof(buf), 0x1000000u), -EINVAL);
	assert_int_equal(gfp_format_named(buf, sizeof(buf), GFP_KERNEL_ACCOUNT | __GFP_ZERO), 29);
	assert_string_equal(buf, "GFP_KERNEL_ACCOUNT|__GFP_ZERO");
	assert_int_equal(gfp_format_named(buf, sizeof(buf), 0), 4);
	assert_string_equal(buf, "none");
	assert_int_equal(gfp_parse("GFP_KERNEL_ACCOUNT|__GFP_ZERO", &gfp), 0);
	assert_int_equal(gfp, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	assert_int_equal(gfp_parse("0x200", &gfp), -EINVAL);

	assert_int_equal(slab_flags_format(buf, sizeof(buf), SLAB_ACCOUNT | 1u), 16);
	assert_string_equal(buf, "SLAB_ACCOUNT|0x1");
	assert_int_equal(slab_flags_format_named(buf, sizeof(buf), SLAB_ACCOUNT | 1u), -EINVAL);
	assert_int_equal(slab_flags_format_named(buf, sizeof(buf), SLAB_FLAGS_PERMITTED), 77);
	assert_int_equal(slab_flags_parse(buf, &sf), 0);
	assert_int_equal(sf, SLAB_FLAGS_PERMITTED);
}

static void test_page_type_names(void **state)
{
	enum memcg_page_type t;

	(void)state;
	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++) {
		assert_non_null(memcg_page_type_name((enum memcg_page_type)i));
		assert_int_equal(memcg_page_type_parse(memcg_page_type_name((enum memcg_page_type)i), &t), 0);
		assert_int_equal(t, i);
	}
	assert_null(memcg_page_type_name(NR_MEMCG_PAGE_TYPES));
	assert_string_equal(memcg_page_type_name(MEMCG_PAGE_KERNEL_STACK), "kernel_stack");
	assert_int_equal(memcg_page_type_parse("Anon", &t), -EINVAL);
	assert_int_equal(memcg_page_type_parse("", &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_parse),
		cmocka_unit_test(test_hex_parse),
		cmocka_unit_test(test_memparse),
		cmocka_unit_test(test_simple_strtol0),
		cmocka_unit_test(test_kstrtoint0),
		cmocka_unit_test(test_strstrip),
		cmocka_unit_test(test_seq_buf),
		cmocka_unit_test(test_flag_names),
		cmocka_unit_test(test_page_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
