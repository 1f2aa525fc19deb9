/* SPDX-License-Identifier: MIT */
/*
 * client/names.c - gfp, slab flag and page type names, handles and sizes
 * as memcgfs's text protocol writes them.  The tables are the kernel's
 * (include/trace/events/mmflags.h): composite masks first, then single
 * bits in bit order, the order memcgfs's own trace prints them in.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct flag_name {
	unsigned int mask;
	const char *name;
};

#define G_DMA		0x01u
#define G_HIGHMEM	0x02u
#define G_DMA32		0x04u
#define G_MOVABLE	0x08u
#define G_HIGH		0x20u
#define G_WRITE		0x1000u
#define G_RETRY_MAYFAIL	0x4000u
#define G_MEMALLOC	0x20000u
#define G_COMP		0x40000u
#define G_NOMEMALLOC	0x80000u
#define G_HARDWALL	0x100000u
#define G_THISNODE	0x200000u
#define G_ZEROTAGS	0x800000u
#define G_RECLAIM	(MEMCGFS_GFP_DIRECT_RECLAIM | MEMCGFS_GFP_KSWAPD_RECLAIM)
#define G_USER		(G_RECLAIM | MEMCGFS_GFP_IO | MEMCGFS_GFP_FS | G_HARDWALL)
#define G_HIGHUSER	(G_USER | G_HIGHMEM)
#define G_HIGHUSER_MOV	(G_HIGHUSER | G_MOVABLE)
#define G_TRANSHUGE_L	((G_HIGHUSER_MOV | G_COMP | G_NOMEMALLOC | MEMCGFS_GFP_NOWARN) & \
			 ~G_RECLAIM)
#define G_TRANSHUGE	(G_TRANSHUGE_L | MEMCGFS_GFP_DIRECT_RECLAIM)

static const struct flag_name gfp_names[] = {
	{ G_TRANSHUGE, "GFP_TRANSHUGE" },
	{ G_TRANSHUGE_L, "GFP_TRANSHUGE_LIGHT" },
	{ G_HIGHUSER_MOV, "GFP_HIGHUSER_MOVABLE" },
	{ G_HIGHUSER, "GFP_HIGHUSER" },
	{ G_USER, "GFP_USER" },
	{ MEMCGFS_GFP_KERNEL_ACCOUNT, "GFP_KERNEL_ACCOUNT" },
	{ MEMCGFS_GFP_KERNEL, "GFP_KERNEL" },
	{ G_RECLAIM | MEMCGFS_GFP_IO, "GFP_NOFS" },
	{ G_HIGH | MEMCGFS_GFP_KSWAPD_RECLAIM, "GFP_ATOMIC" },
	{ G_RECLAIM, "GFP_NOIO" },
	{ MEMCGFS_GFP_KSWAPD_RECLAIM | MEMCGFS_GFP_NOWARN, "GFP_NOWAIT" },
	{ G_DMA, "GFP_DMA" },
	{ G_DMA32, "GFP_DMA32" },
	{ G_RECLAIM, "__GFP_RECLAIM" },
	{ G_DMA, "__GFP_DMA" },
	{ G_HIGHMEM, "__GFP_HIGHMEM" },
	{ G_DMA32, "__GFP_DMA32" },
	{ G_MOVABLE, "__GFP_MOVABLE" },
	{ MEMCGFS_GFP_RECLAIMABLE, "__GFP_RECLAIMABLE" },
	{ G_HIGH, "__GFP_HIGH" },
	{ MEMCGFS_GFP_IO, "__GFP_IO" },
	{ MEMCGFS_GFP_FS, "__GFP_FS" },
	{ MEMCGFS_GFP_ZERO, "__GFP_ZERO" },
	{ MEMCGFS_GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ MEMCGFS_GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	{ G_WRITE, "__GFP_WRITE" },
	{ MEMCGFS_GFP_NOWARN, "__GFP_NOWARN" },
	{ G_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL" },
	{ MEMCGFS_GFP_NOFAIL, "__GFP_NOFAIL" },
	{ MEMCGFS_GFP_NORETRY, "__GFP_NORETRY" },
	{ G_MEMALLOC, "__GFP_MEMALLOC" },
	{ G_COMP, "__GFP_COMP" },
	{ G_NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ G_HARDWALL, "__GFP_HARDWALL" },
	{ G_THISNODE, "__GFP_THISNODE" },
	{ MEMCGFS_GFP_ACCOUNT, "__GFP_ACCOUNT" },
	{ G_ZEROTAGS, "__GFP_ZEROTAGS" },
};

static const struct flag_name slab_names[] = {
	{ MEMCGFS_SLAB_HWCACHE_ALIGN, "SLAB_HWCACHE_ALIGN" },
	{ MEMCGFS_SLAB_PANIC, "SLAB_PANIC" },
	{ MEMCGFS_SLAB_RECLAIM_ACCOUNT, "SLAB_RECLAIM_ACCOUNT" },
	{ MEMCGFS_SLAB_ACCOUNT, "SLAB_ACCOUNT" },
	{ MEMCGFS_SLAB_NO_MERGE, "SLAB_NO_MERGE" },
};

#define SLAB_VALID	(MEMCGFS_SLAB_HWCACHE_ALIGN | MEMCGFS_SLAB_PANIC | \
			 MEMCGFS_SLAB_RECLAIM_ACCOUNT | MEMCGFS_SLAB_ACCOUNT | MEMCGFS_SLAB_NO_MERGE)

static const char *const page_types[] = {
	[MEMCGFS_PAGE_ANON] = "anon",
	[MEMCGFS_PAGE_FILE] = "file",
	[MEMCGFS_PAGE_SHMEM] = "shmem",
	[MEMCGFS_PAGE_KERNEL_STACK] = "kernel_stack",
	[MEMCGFS_PAGE_PAGETABLES] = "pagetables",
	[MEMCGFS_PAGE_PERCPU] = "percpu",
	[MEMCGFS_PAGE_SOCK] = "sock",
	[MEMCGFS_PAGE_VMALLOC] = "vmalloc",
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int flags_parse(const char *s, unsigned int *out, const struct flag_name *tab, size_t n)
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
		size_t l = end ? (size_t)(end - p) : strlen(p), i;

		for (i = 0; i < n; i++)
			if (l && strlen(tab[i].name) == l && !memcmp(tab[i].name, p, l))
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

static int flags_format(char *buf, size_t len, unsigned int flags, unsigned int valid,
			const struct flag_name *tab, size_t n)
{
	size_t pos = 0;

	if (flags & ~valid)
		return -EINVAL;
	if (!flags)
		return snprintf(buf, len, "none");
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n && flags; i++) {
		int w;

		if ((flags & tab[i].mask) != tab[i].mask)
			continue;
		w = snprintf(pos < len ? buf + pos : NULL, pos < len ? len - pos : 0, "%s%s",
			     pos ? "|" : "", tab[i].name);
		pos += (size_t)w;
		flags &= ~tab[i].mask;
	}
	return (int)pos;
}

MEMCGFS_API int memcgfs_gfp_parse(const char *s, unsigned int *gfp)
{
	return flags_parse(s, gfp, gfp_names, ARRAY_SIZE(gfp_names));
}

MEMCGFS_API int memcgfs_gfp_format(char *buf, size_t len, unsigned int gfp)
{
	return flags_format(buf, len, gfp, MEMCGFS_GFP_VALID, gfp_names, ARRAY_SIZE(gfp_names));
}

MEMCGFS_API int memcgfs_slab_flags_parse(const char *s, unsigned int *flags)
{
	return flags_parse(s, flags, slab_names, ARRAY_SIZE(slab_names));
}

MEMCGFS_API int memcgfs_slab_flags_format(char *buf, size_t len, unsigned int flags)
{
	return flags_format(buf, len, flags, SLAB_VALID, slab_names, ARRAY_SIZE(slab_names));
}

MEMCGFS_API int memcgfs_page_type_parse(const char *s, unsigned int *type)
{
	for (unsigned int i = 0; s && i < ARRAY_SIZE(page_types); i++) {
		if (!strcmp(s, page_types[i])) {
			*type = i;
			return 0;
		}
	}
	return -EINVAL;
}

MEMCGFS_API const char *memcgfs_page_type_name(unsigned int type)
{
	return type < ARRAY_SIZE(page_types) ? page_types[type] : NULL;
}

MEMCGFS_API int memcgfs_handle_parse(const char *s, uint64_t *handle)
{
	size_t l = s ? strlen(s) : 0;
	uint64_t v = 0;

	if (!l || l > MEMCGFS_HANDLE_HEX)
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
	*handle = v;
	return 0;
}

MEMCGFS_API int memcgfs_size_parse(const char *s, uint64_t *bytes)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	size_t l = s ? strlen(s) : 0;

	if (!l)
		return -EINVAL;
	switch (s[l - 1]) {
	case 'K': case 'k': shift = 10; break;
	case 'M': case 'm': shift = 20; break;
	case 'G': case 'g': shift = 30; break;
	}
	if (shift)
		l--;
	if (!l)
		return -EINVAL;
	for (size_t i = 0; i < l; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = v << shift;
	return 0;
}

bool libmemcgfs_word_ok(const char *s, size_t max)
{
	size_t l;

	if (!s)
		return false;
	l = strlen(s);
	if (!l || l >= max)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}
