/* SPDX-License-Identifier: MIT */
/*
 * test_client - libmemcgfs's parts that need no mount: flag, page type,
 * handle and size names as the protocol writes them, and the batch packer
 * (how operations are laid out in a batch and cut into batches under
 * 16 KiB), checked against <memcgfs/ctl.h>'s layout rules.
 */
#include "internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_gfp_names(void **state)
{
	unsigned int gfp;
	char buf[256];

	(void)state;
	assert_int_equal(memcgfs_gfp_parse("GFP_KERNEL_ACCOUNT", &gfp), 0);
	assert_int_equal(gfp, MEMCGFS_GFP_KERNEL_ACCOUNT);
	assert_int_equal(memcgfs_gfp_parse("GFP_KERNEL|__GFP_ACCOUNT", &gfp), 0);
	assert_int_equal(gfp, MEMCGFS_GFP_KERNEL_ACCOUNT);
	assert_int_equal(memcgfs_gfp_parse("none", &gfp), 0);
	assert_int_equal(gfp, 0);
	assert_int_equal(memcgfs_gfp_parse("GFP_KERNEL|", &gfp), -EINVAL);
	assert_int_equal(memcgfs_gfp_parse("|GFP_KERNEL", &gfp), -EINVAL);
	assert_int_equal(memcgfs_gfp_parse("gfp_kernel", &gfp), -EINVAL);
	assert_int_equal(memcgfs_gfp_parse("", &gfp), -EINVAL);

	assert_int_equal(memcgfs_gfp_format(buf, sizeof(buf), MEMCGFS_GFP_KERNEL_ACCOUNT), 18);
	assert_string_equal(buf, "GFP_KERNEL_ACCOUNT");
	memcgfs_gfp_format(buf, sizeof(buf), MEMCGFS_GFP_KERNEL | MEMCGFS_GFP_ZERO);
	assert_string_equal(buf, "GFP_KERNEL|__GFP_ZERO");
	memcgfs_gfp_format(buf, sizeof(buf), 0);
	assert_string_equal(buf, "none");
	assert_int_equal(memcgfs_gfp_format(buf, sizeof(buf), 0x200), -EINVAL);
	/* every accepted bit formats and parses back */
	for (unsigned int bit = 1; bit; bit <<= 1) {
		if (!(bit & MEMCGFS_GFP_VALID))
			continue;
		assert_true(memcgfs_gfp_format(buf, sizeof(buf), bit) > 0);
		assert_int_equal(memcgfs_gfp_parse(buf, &gfp), 0);
		assert_int_equal(gfp, bit);
	}
	/* truncation reports the length needed, as snprintf */
	assert_int_equal(memcgfs_gfp_format(buf, 4, MEMCGFS_GFP_KERNEL_ACCOUNT), 18);
	assert_string_equal(buf, "GFP");
}

static void test_slab_and_types(void **state)
{
	unsigned int f, t;
	char buf[128];

	(void)state;
	assert_int_equal(memcgfs_slab_flags_parse("SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT", &f), 0);
	assert_int_equal(f, MEMCGFS_SLAB_HWCACHE_ALIGN | MEMCGFS_SLAB_ACCOUNT);
	memcgfs_slab_flags_format(buf, sizeof(buf), f);
	assert_string_equal(buf, "SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT");
	assert_int_equal(memcgfs_slab_flags_parse("SLAB_BOGUS", &f), -EINVAL);
	assert_int_equal(memcgfs_slab_flags_format(buf, sizeof(buf), 1), -EINVAL);

	for (t = 0; memcgfs_page_type_name(t); t++) {
		unsigned int back;

		assert_int_equal(memcgfs_page_type_parse(memcgfs_page_type_name(t), &back), 0);
		assert_int_equal(back, t);
	}
	assert_int_equal(t, 8);
	assert_string_equal(memcgfs_page_type_name(MEMCGFS_PAGE_KERNEL_STACK), "kernel_stack");
	assert_int_equal(memcgfs_page_type_parse("ANON", &t), -EINVAL);
}

static void test_handles_sizes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(memcgfs_handle_parse("7e4741e86c3caa0c", &v), 0);
	assert_true(v == 0x7e4741e86c3caa0cull);
	assert_int_equal(memcgfs_handle_parse("ABCdef", &v), 0);
	assert_true(v == 0xabcdefull);
	assert_int_equal(memcgfs_handle_parse("0", &v), 0);
	assert_true(v == 0);
	assert_int_equal(memcgfs_handle_parse("0x12", &v), -EINVAL);
	assert_int_equal(memcgfs_handle_parse("12345678901234567", &v), -EINVAL);
	assert_int_equal(memcgfs_handle_parse("", &v), -EINVAL);

	assert_int_equal(memcgfs_size_parse("2312", &v), 0);
	assert_true(v == 2312);
	assert_int_equal(memcgfs_size_parse("64K", &v), 0);
	assert_true(v == 65536);
	assert_int_equal(memcgfs_size_parse("4m", &v), 0);
	assert_true(v == 4u << 20);
	assert_int_equal(memcgfs_size_parse("1G", &v), 0);
	assert_true(v == 1u << 30);
	assert_int_equal(memcgfs_size_parse("K", &v), -EINVAL);
	assert_int_equal(memcgfs_size_parse("-1", &v), -EINVAL);
	assert_int_equal(memcgfs_size_parse("1KB", &v), -EINVAL);
	assert_int_equal(memcgfs_size_parse("18446744073709551616", &v), -EINVAL);
	assert_int_equal(memcgfs_size_parse("17179869184G", &v), -EINVAL);
}

static const struct memcgfs_ctl_op *op_at(const uint64_t *buf, size_t i)
{
	return (const struct memcgfs_ctl_op *)(buf + 2 + i * MEMCGFS_CTL_OP_WORDS);
}

/* One batch: its layout follows <memcgfs/ctl.h> (ops first, then slots). */
static void test_pack_layout(void **state)
{
	static uint64_t buf[MEMCGFS_CTL_MAX_SIZE / 8];
	uint64_t out[3], in[2] = { 0x1111, 0x2222 };
	struct memcgfs_whoami w;
	struct memcgfs_op ops[4] = {
		{ .op = MEMCGFS_OP_KMALLOC, .size = 64, .flags = MEMCGFS_GFP_KERNEL_ACCOUNT,
		  .count = 3, .handles = out, .site = "here" },
		{ .op = MEMCGFS_OP_KFREE, .count = 2, .handles = in },
		{ .op = MEMCGFS_OP_KMEM_CACHE_DESTROY, .name = "a_cache_name" },
		{ .op = MEMCGFS_OP_WHOAMI, .whoami = &w },
	};
	struct memcgfs_ctl_hdr hdr;
	size_t taken, nr, size;
	const struct memcgfs_ctl_op *c;

	(void)state;
	size = libmemcgfs_batch_pack(ops, 4, buf, &taken, &nr);
	assert_int_equal(taken, 4);
	assert_int_equal(nr, 4);
	memcpy(&hdr, buf, sizeof(hdr));
	assert_int_equal(hdr.version, MEMCGFS_CTL_VERSION);
	assert_int_equal(hdr.nr_ops, 4);
	assert_int_equal(hdr.flags, 0);
	/* 16 ops words; site 1 + 3 handles; 2 handles; name 2; whoami 513 */
	assert_int_equal(size, MEMCGFS_CTL_BATCH_SIZE(4, 1 + 3 + 2 + 2 + 513));
	assert_int_equal(size % 8, 0);

	c = op_at(buf, 0);
	assert_int_equal(c->op, MEMCGFS_OP_KMALLOC);
	assert_int_equal(c->opflags, MEMCGFS_OPF_SITE);
	assert_int_equal(c->site, MEMCGFS_CTL_FIRST_SLOT(4));
	assert_string_equal((const char *)(buf + 2 + c->site), "here");
	assert_int_equal(c->slot, MEMCGFS_CTL_FIRST_SLOT(4) + 1);
	assert_int_equal(c->count, 3);
	assert_int_equal(c->flags, MEMCGFS_GFP_KERNEL_ACCOUNT);
	assert_true(c->size == 64);

	c = op_at(buf, 1);
	assert_int_equal(c->op, MEMCGFS_OP_KFREE);
	assert_int_equal(c->count, 2);
	assert_true(buf[2 + c->slot] == 0x1111 && buf[2 + c->slot + 1] == 0x2222);

	c = op_at(buf, 2);
	assert_string_equal((const char *)(buf + 2 + c->name), "a_cache_name");

	c = op_at(buf, 3);
	assert_int_equal(c->op, MEMCGFS_OP_WHOAMI);
	assert_int_equal(c->count, 513);

	/* results back, as the daemon would write them */
	{
		struct memcgfs_ctl_op r;
		struct memcgfs_ctl_whoami wr = { .pid = 42, .cpu = 1 };
		size_t k = op_at(buf, 0)->slot;

		buf[2 + k] = 0xa;
		buf[2 + k + 1] = 0xb;
		buf[2 + k + 2] = 0xc;
		memcpy(&r, op_at(buf, 1), sizeof(r));
		r.error = -EINVAL;
		memcpy((void *)op_at(buf, 1), &r, sizeof(r));
		k = op_at(buf, 3)->slot;
		memcpy(buf + 2 + k, &wr, sizeof(wr));
		strcpy((char *)(buf + 2 + k + 1), "/a/b");
	}
	libmemcgfs_batch_unpack(ops, taken, buf);
	assert_int_equal(ops[0].error, 0);
	assert_true(out[0] == 0xa && out[1] == 0xb && out[2] == 0xc);
	assert_int_equal(ops[1].error, -EINVAL);
	assert_int_equal(w.pid, 42);
	assert_int_equal(w.cpu, 1);
	assert_string_equal(w.cgroup, "/a/b");
}

/* Many operations: cut into batches that fit, none split, order kept. */
static void test_pack_chunks(void **state)
{
	static uint64_t buf[MEMCGFS_CTL_MAX_SIZE / 8];
	static uint64_t h[20 * 1024];
	struct memcgfs_op *ops = calloc(1000, sizeof(*ops));
	size_t i = 0, taken, nr, size, batches = 0;

	(void)state;
	for (size_t k = 0; k < 1000; k++)
		ops[k] = (struct memcgfs_op){ .op = MEMCGFS_OP_KMALLOC, .size = 8, .handles = &h[k] };
	/* 5 words each: 409 in a batch of 2045 words */
	while (i < 1000) {
		size = libmemcgfs_batch_pack(ops + i, 1000 - i, buf, &taken, &nr);
		assert_true(size <= MEMCGFS_CTL_MAX_SIZE);
		assert_int_equal(taken, nr);
		assert_int_equal(nr, i + 409 <= 1000 ? 409 : 1000 - i);
		i += taken;
		batches++;
	}
	assert_int_equal(batches, 3);

	/* 1024-handle operations: one a batch */
	for (size_t k = 0; k < 20; k++)
		ops[k] = (struct memcgfs_op){ .op = MEMCGFS_OP_KFREE, .count = 1024,
					      .handles = &h[k * 1024] };
	size = libmemcgfs_batch_pack(ops, 20, buf, &taken, &nr);
	assert_int_equal(nr, 1);
	assert_int_equal(size, MEMCGFS_CTL_BATCH_SIZE(1, 1024));

	/* invalid operations are marked and skipped, the others packed */
	ops[0] = (struct memcgfs_op){ .op = MEMCGFS_OP_KMALLOC, .count = 1025, .handles = h };
	ops[1] = (struct memcgfs_op){ .op = MEMCGFS_OP_DRAIN };
	ops[2] = (struct memcgfs_op){ .op = MEMCGFS_OP_KMEM_CACHE_ALLOC, .name = "two words",
				      .handles = h };
	ops[3] = (struct memcgfs_op){ .op = MEMCGFS_OP_KMALLOC, .size = 8, .handles = h,
				      .site = "0123456789012345678901234567890123456789" };
	ops[4] = (struct memcgfs_op){ .op = 0 };
	ops[5] = (struct memcgfs_op){ .op = MEMCGFS_OP_KFREE, .count = 0, .handles = h };
	ops[6] = (struct memcgfs_op){ .op = MEMCGFS_OP_WHOAMI };
	size = libmemcgfs_batch_pack(ops, 7, buf, &taken, &nr);
	assert_int_equal(taken, 7);
	assert_int_equal(nr, 1);
	assert_int_equal(op_at(buf, 0)->op, MEMCGFS_OP_DRAIN);
	for (size_t k = 0; k < 7; k++)
		assert_int_equal(ops[k].error, k == 1 ? 0 : -EINVAL);
	assert_int_equal(size, MEMCGFS_CTL_BATCH_SIZE(1, 0));

	/* only invalid ones: nothing to send */
	size = libmemcgfs_batch_pack(ops, 1, buf, &taken, &nr);
	assert_int_equal(size, 0);
	assert_int_equal(nr, 0);
	assert_int_equal(taken, 1);
	free(ops);
}

static void test_words(void **state)
{
	(void)state;
	assert_true(libmemcgfs_word_ok("kmalloc-64", MEMCGFS_CTL_NAME_MAX));
	assert_false(libmemcgfs_word_ok("", MEMCGFS_CTL_NAME_MAX));
	assert_false(libmemcgfs_word_ok("a b", MEMCGFS_CTL_NAME_MAX));
	assert_false(libmemcgfs_word_ok("caf\xc3\xa9", MEMCGFS_CTL_NAME_MAX));
	assert_true(libmemcgfs_word_ok("012345678901234567890123456789012345678",
				       MEMCGFS_CTL_SITE_MAX));
	assert_false(libmemcgfs_word_ok("0123456789012345678901234567890123456789",
					MEMCGFS_CTL_SITE_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gfp_names),
		cmocka_unit_test(test_slab_and_types),
		cmocka_unit_test(test_handles_sizes),
		cmocka_unit_test(test_pack_layout),
		cmocka_unit_test(test_pack_chunks),
		cmocka_unit_test(test_words),
	};

	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
