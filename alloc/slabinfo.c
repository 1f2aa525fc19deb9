/* SPDX-License-Identifier: MIT */
/*
 * slabinfo.c - /proc/slabinfo, version 2.1, as SLUB fills it
 * (mm/slab_common.c cache_show, mm/slub.c get_slabinfo).
 */
#include "internal.h"
#include "lib.h"

#include <stdio.h>

size_t slabinfo_format(char *buf, size_t len)
{
	struct seq_buf o;

	seq_buf_init(&o, buf, len);
	seq_buf_printf(&o, "slabinfo - version: 2.1\n");
	seq_buf_printf(&o, "# name            <active_objs> <num_objs> <objsize> <objperslab> "
		"<pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : "
		"slabdata <active_slabs> <num_slabs> <sharedavail>\n");
	if (!machine_up)
		return o.pos;
	pthread_mutex_lock(&slab_mutex);
	for (struct kmem_cache *s = slab_caches; s; s = s->next) {
		unsigned long nr_slabs = 0, nr_objs = 0, nr_free;

		for (unsigned int i = 0; i < machine.nodes; i++) {
			nr_slabs += (unsigned long)atomic_load(&s->node[i].nr_slabs);
			nr_objs += (unsigned long)atomic_load(&s->node[i].total_objects);
		}
		nr_free = cache_free_on_node_partial(s);
		if (nr_free > nr_objs)
			nr_free = nr_objs;
		seq_buf_printf(&o, "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu\n",
		    s->name, nr_objs - nr_free, nr_objs, s->size, s->objects,
		    1 << s->order, 0u, 0u, 0u, nr_slabs, nr_slabs, 0ul);
	}
	pthread_mutex_unlock(&slab_mutex);
	return o.pos;
}
