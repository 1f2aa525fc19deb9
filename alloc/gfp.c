/* SPDX-License-Identifier: MIT */
/*
 * gfp.c - gfp and slab flag names, as the kernel's tracepoints print them
 * (include/trace/events/mmflags.h: composite masks first, then single bits
 * in bit order; what matches is taken out of the remainder).
 *
 * The one table of these names: the daemon prints a bit no name covers as
 * hex, the client (libmemcgfs, which links this file alone as the
 * alloc_names library) refuses to format one.  Nothing here needs the
 * machine.
 */
#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct flag_name {
	unsigned int mask;
	const char *name;
};

static const struct flag_name gfp_names[] = {
	{ GFP_TRANSHUGE, "GFP_TRANSHUGE" },
	{ GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT" },
	{ GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE" },
	{ GFP_HIGHUSER, "GFP_HIGHUSER" },
	{ GFP_USER, "GFP_USER" },
	{ GFP_KERNEL_ACCOUNT, "GFP_KERNEL_ACCOUNT" },
	{ GFP_KERNEL, "GFP_KERNEL" },
	{ GFP_NOFS, "GFP_NOFS" },
	{ GFP_ATOMIC, "GFP_ATOMIC" },
	{ GFP_NOIO, "GFP_NOIO" },
	{ GFP_NOWAIT, "GFP_NOWAIT" },
	{ GFP_DMA, "GFP_DMA" },
	{ GFP_DMA32, "GFP_DMA32" },
	{ __GFP_RECLAIM, "__GFP_RECLAIM" },
	{ __GFP_DMA, "__GFP_DMA" },
	{ __GFP_HIGHMEM, "__GFP_HIGHMEM" },
	{ __GFP_DMA32, "__GFP_DMA32" },
	{ __GFP_MOVABLE, "__GFP_MOVABLE" },
	{ __GFP_RECLAIMABLE, "__GFP_RECLAIMABLE" },
	{ __GFP_HIGH, "__GFP_HIGH" },
	{ __GFP_IO, "__GFP_IO" },
	{ __GFP_FS, "__GFP_FS" },
	{ __GFP_ZERO, "__GFP_ZERO" },
	{ __GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ __GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	{ __GFP_WRITE, "__GFP_WRITE" },
	{ __GFP_NOWARN, "__GFP_NOWARN" },
	{ __GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL" },
	{ __GFP_NOFAIL, "__GFP_NOFAIL" },
	{ __GFP_NORETRY, "__GFP_NORETRY" },
	{ __GFP_MEMALLOC, "__GFP_MEMALLOC" },
	{ __GFP_COMP, "__GFP_COMP" },
	{ __GFP_NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ __GFP_HARDWALL, "__GFP_HARDWALL" },
	{ __GFP_THISNODE, "__GFP_THISNODE" },
	{ __GFP_ACCOUNT, "__GFP_ACCOUNT" },
	{ __GFP_ZEROTAGS, "__GFP_ZEROTAGS" },
};

static const struct flag_name slab_names[] = {
	{ SLAB_HWCACHE_ALIGN, "SLAB_HWCACHE_ALIGN" },
	{ SLAB_PANIC, "SLAB_PANIC" },
	{ SLAB_RECLAIM_ACCOUNT, "SLAB_RECLAIM_ACCOUNT" },
	{ SLAB_ACCOUNT, "SLAB_ACCOUNT" },
	{ SLAB_NO_MERGE, "SLAB_NO_MERGE" },
};

#define NAMES(tab)	tab, sizeof(tab) / sizeof((tab)[0])

static int flags_format(char *buf, size_t len, unsigned int flags,
			const struct flag_name *tab, size_t n)
{
	size_t pos = 0;
	int w;

	if (!flags)
		return snprintf(buf, len, "none");
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n && flags; i++) {
		if ((flags & tab[i].mask) != tab[i].mask)
			continue;
		w = snprintf(buf + (pos < len ? pos : len), pos < len ? len - pos : 0,
			     "%s%s", pos ? "|" : "", tab[i].name);
		pos += (size_t)w;
		flags &= ~tab[i].mask;
	}
	if (flags) {
		w = snprintf(buf + (pos < len ? pos : len), pos < len ? len - pos : 0,
			     "%s0x%x", pos ? "|" : "", flags);
		pos += (size_t)w;
	}
	return (int)pos;
}

/* flags_format(), but -EINVAL (nothing written) for a bit no name covers */
static int flags_format_named(char *buf, size_t len, unsigned int flags,
			      const struct flag_name *tab, size_t n)
{
	unsigned int all = 0;

	for (size_t i = 0; i < n; i++)
		all |= tab[i].mask;
	if (flags & ~all)
		return -EINVAL;
	return flags_format(buf, len, flags, tab, n);
}

static int flags_parse(const char *s, unsigned int *out,
		       const struct flag_name *tab, size_t n)
{
	unsigned int flags = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "none")) {
		*out = 0;
		return 0;
	}
	for (;;) {
		const char *end = strchr(p, '|');
		size_t l = end ? (size_t)(end - p) : strlen(p);
		size_t i;

		if (!l)
			return -EINVAL;
		for (i = 0; i < n; i++)
			if (strlen(tab[i].name) == l && !memcmp(tab[i].name, p, l))
				break;
		if (i == n)
			return -EINVAL;
		flags |= tab[i].mask;
		if (!end)
			break;
		p = end + 1;
	}
	*out = flags;
	return 0;
}

int gfp_format(char *buf, size_t len, gfp_t gfp)
{
	return flags_format(buf, len, gfp, NAMES(gfp_names));
}

int gfp_format_named(char *buf, size_t len, gfp_t gfp)
{
	return flags_format_named(buf, len, gfp, NAMES(gfp_names));
}

int gfp_parse(const char *s, gfp_t *out)
{
	return flags_parse(s, out, NAMES(gfp_names));
}

int slab_flags_format(char *buf, size_t len, slab_flags_t flags)
{
	return flags_format(buf, len, flags, NAMES(slab_names));
}

int slab_flags_format_named(char *buf, size_t len, slab_flags_t flags)
{
	return flags_format_named(buf, len, flags, NAMES(slab_names));
}

int slab_flags_parse(const char *s, slab_flags_t *out)
{
	return flags_parse(s, out, NAMES(slab_names));
}
