/* SPDX-License-Identifier: MIT */
/*
 * alloc_flags.c - unit tests of alloc/: gfp and slab flag names: format and parse.
 */
#include "test_alloc.h"

/* ------------------------------------------------------------------ */

struct gfp_case {
	gfp_t gfp;
	const char *str;
};

static const struct gfp_case gfp_cases[] = {
	{ 0, "none" },
	{ GFP_KERNEL, "GFP_KERNEL" },
	{ GFP_KERNEL_ACCOUNT, "GFP_KERNEL_ACCOUNT" },
	{ GFP_KERNEL | __GFP_ZERO, "GFP_KERNEL|__GFP_ZERO" },
	{ GFP_KERNEL_ACCOUNT | __GFP_ZERO, "GFP_KERNEL_ACCOUNT|__GFP_ZERO" },
	{ __GFP_ACCOUNT, "__GFP_ACCOUNT" },
	{ GFP_ATOMIC, "GFP_ATOMIC" },
	{ GFP_NOWAIT, "GFP_NOWAIT" },
	{ GFP_KERNEL | __GFP_NOFAIL, "GFP_KERNEL|__GFP_NOFAIL" },
	{ GFP_KERNEL | __GFP_NORETRY, "GFP_KERNEL|__GFP_NORETRY" },
	{ GFP_KERNEL | __GFP_RECLAIMABLE, "GFP_KERNEL|__GFP_RECLAIMABLE" },
	{ GFP_KERNEL | __GFP_ACCOUNT, "GFP_KERNEL_ACCOUNT" },
	{ GFP_NOFS, "GFP_NOFS" },
	{ GFP_NOIO, "GFP_NOIO" },
	{ GFP_USER, "GFP_USER" },
	{ GFP_HIGHUSER, "GFP_HIGHUSER" },
	{ GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE" },
	{ GFP_TRANSHUGE, "GFP_TRANSHUGE" },
	{ GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT" },
	{ GFP_DMA, "GFP_DMA" },
	{ GFP_DMA32, "GFP_DMA32" },
	{ GFP_USER | __GFP_ACCOUNT, "GFP_USER|__GFP_ACCOUNT" },
	{ GFP_ATOMIC | __GFP_ACCOUNT, "GFP_ATOMIC|__GFP_ACCOUNT" },
	{ GFP_NOWAIT | __GFP_ZERO, "GFP_NOWAIT|__GFP_ZERO" },
	{ GFP_KERNEL | __GFP_COMP, "GFP_KERNEL|__GFP_COMP" },
	{ GFP_KERNEL | __GFP_NOWARN, "GFP_KERNEL|__GFP_NOWARN" },
	{ __GFP_ZERO, "__GFP_ZERO" },
	{ __GFP_RECLAIMABLE, "__GFP_RECLAIMABLE" },
	{ __GFP_HIGH, "__GFP_HIGH" },
	{ __GFP_IO, "__GFP_IO" },
	{ __GFP_FS, "__GFP_FS" },
	{ __GFP_NOWARN, "__GFP_NOWARN" },
	{ __GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL" },
	{ __GFP_NOFAIL, "__GFP_NOFAIL" },
	{ __GFP_NORETRY, "__GFP_NORETRY" },
	{ __GFP_COMP, "__GFP_COMP" },
	{ __GFP_NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ __GFP_MEMALLOC, "__GFP_MEMALLOC" },
	{ __GFP_HARDWALL, "__GFP_HARDWALL" },
	{ __GFP_THISNODE, "__GFP_THISNODE" },
	{ __GFP_MOVABLE, "__GFP_MOVABLE" },
	{ __GFP_WRITE, "__GFP_WRITE" },
	{ __GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ __GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	{ __GFP_HIGHMEM, "__GFP_HIGHMEM" },
	{ __GFP_ZEROTAGS, "__GFP_ZEROTAGS" },
	{ __GFP_RECLAIM, "GFP_NOIO" },	/* GFP_NOIO == __GFP_RECLAIM */
};

void test_gfp_format(void **state)
{
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(gfp_cases) / sizeof(gfp_cases[0]); i++) {
		int r;

		memset(buf, 'x', sizeof(buf));
		r = gfp_format(buf, sizeof(buf), gfp_cases[i].gfp);
		EXPECT_STR(buf, gfp_cases[i].str, "gfp_format(%#x)", gfp_cases[i].gfp);
		EXPECT_EQ(r, strlen(gfp_cases[i].str), "gfp_format(%#x) return", gfp_cases[i].gfp);
	}
	/* snprintf semantics. */
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(gfp_format(buf, 5, GFP_KERNEL), 10, "gfp_format truncated return");
	EXPECT_STR(buf, "GFP_", "gfp_format truncated");
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(gfp_format(buf, 0, GFP_KERNEL_ACCOUNT | __GFP_ZERO), 29, "gfp_format(len 0)");
	assert_int_equal(buf[0], 'x');
	EXPECT_EQ(gfp_format(buf, 11, GFP_KERNEL), 10, "gfp_format exact fit");
	EXPECT_STR(buf, "GFP_KERNEL", "gfp_format exact fit");
}

void test_gfp_parse(void **state)
{
	static const char *const bad[] = {
		"GFP_BOGUS", "GFP_KERNEL||__GFP_ZERO", "GFP_KERNEL|", "|GFP_KERNEL",
		"", "GFP_KERNEL|__GFP_BOGUS", "__GFP_ZERO|", "||",
	};
	static const gfp_t known = __GFP_DMA | __GFP_HIGHMEM | __GFP_DMA32 | __GFP_MOVABLE |
		__GFP_RECLAIMABLE | __GFP_HIGH | __GFP_IO | __GFP_FS | __GFP_ZERO |
		__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM | __GFP_WRITE | __GFP_NOWARN |
		__GFP_RETRY_MAYFAIL | __GFP_NOFAIL | __GFP_NORETRY | __GFP_MEMALLOC |
		__GFP_COMP | __GFP_NOMEMALLOC | __GFP_HARDWALL | __GFP_THISNODE |
		__GFP_ACCOUNT | __GFP_ZEROTAGS;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	char buf[512];
	gfp_t g;

	(void)state;
	for (size_t i = 0; i < sizeof(gfp_cases) / sizeof(gfp_cases[0]); i++) {
		g = 0xdeadu;
		EXPECT_EQ(gfp_parse(gfp_cases[i].str, &g), 0, "gfp_parse(\"%s\")", gfp_cases[i].str);
		EXPECT_EQ(g, gfp_cases[i].gfp, "gfp_parse(\"%s\") value", gfp_cases[i].str);
	}
	g = 0;
	EXPECT_EQ(gfp_parse("GFP_KERNEL|__GFP_ACCOUNT|__GFP_ZERO", &g), 0, "composite + bits");
	EXPECT_EQ(g, GFP_KERNEL_ACCOUNT | __GFP_ZERO, "GFP_KERNEL|__GFP_ACCOUNT|__GFP_ZERO");
	g = 0;
	EXPECT_EQ(gfp_parse("__GFP_RECLAIM", &g), 0, "__GFP_RECLAIM");
	EXPECT_EQ(g, __GFP_RECLAIM, "__GFP_RECLAIM value");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		g = 0x1234u;
		EXPECT_EQ((unsigned)gfp_parse(bad[i], &g), (unsigned)-EINVAL, "gfp_parse(\"%s\")", bad[i]);
	}
	/* Round trip of arbitrary combinations of known bits. */
	for (unsigned i = 0; i < 5000; i++) {
		gfp_t v;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		v = (gfp_t)rng & known;
		if (i % 3 == 0)
			v |= GFP_KERNEL;
		gfp_format(buf, sizeof(buf), v);
		g = ~v;
		if (gfp_parse(buf, &g) != 0 || g != v)
			fail_msg("gfp round trip %#x -> \"%s\" -> %#x", v, buf, g);
	}
}

void test_slab_flags_format_parse(void **state)
{
	static const struct { slab_flags_t f; const char *s; } names[] = {
		{ SLAB_HWCACHE_ALIGN, "SLAB_HWCACHE_ALIGN" },
		{ SLAB_PANIC, "SLAB_PANIC" },
		{ SLAB_RECLAIM_ACCOUNT, "SLAB_RECLAIM_ACCOUNT" },
		{ SLAB_ACCOUNT, "SLAB_ACCOUNT" },
		{ SLAB_NO_MERGE, "SLAB_NO_MERGE" },
	};
	char buf[256];
	slab_flags_t f;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		int r = slab_flags_format(buf, sizeof(buf), names[i].f);

		EXPECT_STR(buf, names[i].s, "slab_flags_format(%#x)", names[i].f);
		EXPECT_EQ(r, strlen(names[i].s), "slab_flags_format return");
		f = 0;
		EXPECT_EQ(slab_flags_parse(names[i].s, &f), 0, "slab_flags_parse(%s)", names[i].s);
		EXPECT_EQ(f, names[i].f, "slab_flags_parse(%s) value", names[i].s);
	}
	f = 0;
	EXPECT_EQ(slab_flags_parse("SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT", &f), 0, "two flags");
	EXPECT_EQ(f, SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT, "two flags value");
	for (unsigned m = 1; m < 32; m++) {
		slab_flags_t v = 0;

		for (unsigned b = 0; b < 5; b++)
			if (m & (1u << b))
				v |= names[b].f;
		slab_flags_format(buf, sizeof(buf), v);
		f = ~v;
		if (slab_flags_parse(buf, &f) != 0 || f != v)
			fail_msg("slab flags round trip %#x -> \"%s\" -> %#x", v, buf, f);
	}
	EXPECT_EQ((unsigned)slab_flags_parse("SLAB_BOGUS", &f), (unsigned)-EINVAL, "SLAB_BOGUS");
	EXPECT_EQ((unsigned)slab_flags_parse("SLAB_ACCOUNT||SLAB_PANIC", &f), (unsigned)-EINVAL,
		  "empty token");
	EXPECT_EQ((unsigned)slab_flags_parse("SLAB_ACCOUNT|", &f), (unsigned)-EINVAL, "trailing |");
}

