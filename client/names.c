/* SPDX-License-Identifier: MIT */
/*
 * client/names.c - gfp, slab flag and page type names, handles and sizes
 * as memcgfs's text protocol writes them.  The gfp and slab flag names are
 * the daemon's own table (alloc's alloc_names library, linked alone), the
 * page types memcg's (memcg_names), the SIZE parser lib's (lib_size).
 */
#include "internal.h"
#include "memcg.h"
#include "lib.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* gfp_format_named() refuses exactly the bits the daemon refuses */
_Static_assert(MEMCGFS_GFP_VALID == (((__GFP_ZEROTAGS << 1) - 1) & ~0x200u), "gfp ABI");

MEMCGFS_API int memcgfs_gfp_parse(const char *s, unsigned int *gfp)
{
	return gfp_parse(s, gfp);
}

/* A bit the daemon has no name for is refused, not sent as hex. */
MEMCGFS_API int memcgfs_gfp_format(char *buf, size_t len, unsigned int gfp)
{
	return gfp_format_named(buf, len, gfp);
}

MEMCGFS_API int memcgfs_slab_flags_parse(const char *s, unsigned int *flags)
{
	return slab_flags_parse(s, flags);
}

MEMCGFS_API int memcgfs_slab_flags_format(char *buf, size_t len, unsigned int flags)
{
	return slab_flags_format_named(buf, len, flags);
}

MEMCGFS_API int memcgfs_page_type_parse(const char *s, unsigned int *type)
{
	enum memcg_page_type t;

	if (!s || memcg_page_type_parse(s, &t))
		return -EINVAL;
	*type = t;
	return 0;
}

MEMCGFS_API const char *memcgfs_page_type_name(unsigned int type)
{
	return memcg_page_type_name((enum memcg_page_type)type);
}

MEMCGFS_API int memcgfs_handle_parse(const char *s, uint64_t *handle)
{
	return hex_parse(s, MEMCGFS_HANDLE_HEX, handle);
}

MEMCGFS_API int memcgfs_size_parse(const char *s, uint64_t *bytes)
{
	return size_parse(s, s ? strlen(s) : 0, bytes) ? -EINVAL : 0;
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
