/* SPDX-License-Identifier: MIT */
/*
 * page_type.c - the names of memcg's page types, as memory.stat and the
 * control protocol write them.  The one table of them: nothing here needs
 * the memory controller, so libmemcgfs links this file alone (the
 * memcg_names library).
 */
#include "memcg.h"

#include <errno.h>
#include <string.h>

static const char *const page_type_names[NR_MEMCG_PAGE_TYPES] = {
	"anon", "file", "shmem", "kernel_stack", "pagetables", "percpu", "sock", "vmalloc",
};

const char *memcg_page_type_name(enum memcg_page_type type)
{
	return (unsigned int)type < NR_MEMCG_PAGE_TYPES ? page_type_names[type] : NULL;
}

int memcg_page_type_parse(const char *name, enum memcg_page_type *type)
{
	for (unsigned int i = 0; i < NR_MEMCG_PAGE_TYPES; i++) {
		if (!strcmp(name, page_type_names[i])) {
			*type = (enum memcg_page_type)i;
			return 0;
		}
	}
	return -EINVAL;
}
