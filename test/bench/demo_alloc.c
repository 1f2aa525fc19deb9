/* SPDX-License-Identifier: MIT */
/*
 * demo_alloc - the slab allocator at work, for the quick start: the seed's
 * 2312-byte object from kmalloc and from a dedicated cache, the kmem trace
 * events they raise, and /proc/slabinfo lines of the caches involved.
 */
#include "alloc.h"

#include <stdio.h>
#include <string.h>

#define NR_OBJS 100

static void show_slabinfo(const char *const *names)
{
	static char buf[1 << 16];
	char *line, *save = NULL;
	int n = 0;

	slabinfo_format(buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool want = n++ < 2;

		for (const char *const *p = names; *p && !want; p++)
			want = !strncmp(line, *p, strlen(*p)) && line[strlen(*p)] == ' ';
		if (want)
			printf("%s\n", line);
	}
}

int main(void)
{
	static const char *const names[] = { "kmalloc-4k", "obj_2312", NULL };
	struct alloc_config cfg;
	struct kmem_cache *cache;
	struct kmem_cache_info info;
	struct trace_cursor cur;
	void *a[NR_OBJS], *b[NR_OBJS];
	char line[512];
	int err;

	alloc_config_defaults(&cfg);
	cfg.memory = 64ull << 20;
	err = alloc_init(&cfg);
	if (err) {
		fprintf(stderr, "demo_alloc: alloc_init: %s\n", strerror(-err));
		return 1;
	}
	cache = kmem_cache_create_err("obj_2312", 2312, 0, SLAB_HWCACHE_ALIGN, &err);
	if (!cache) {
		fprintf(stderr, "demo_alloc: kmem_cache_create: %s\n", strerror(-err));
		return 1;
	}
	kmem_cache_info(cache, &info);
	printf("machine: %u MiB, %u CPU slots, fast path: %s\n",
	       (unsigned int)(cfg.memory >> 20), alloc_nr_cpus(),
	       alloc_uses_rseq() ? "restartable sequences" : "per-CPU lock");
	printf("kmalloc(2312) -> %zu bytes; kmem_cache obj_2312 (SLAB_HWCACHE_ALIGN) -> "
	       "%u bytes, %u objects per order-%u slab\n\n",
	       kmalloc_size_roundup(2312), info.size, info.objects, info.order);

	trace_cursor_init(&cur, true);
	trace_set_on(true);
	a[0] = kmalloc(2312, GFP_KERNEL_ACCOUNT);
	b[0] = kmem_cache_alloc(cache, GFP_KERNEL);
	trace_set_on(false);
	printf("trace_pipe:\n");
	while (trace_read(&cur, line, sizeof(line)) > 0)
		fputs(line, stdout);

	for (int i = 1; i < NR_OBJS; i++) {
		a[i] = kmalloc(2312, GFP_KERNEL);
		b[i] = kmem_cache_alloc(cache, GFP_KERNEL);
	}
	printf("\n/proc/slabinfo with %d objects of each:\n", NR_OBJS);
	show_slabinfo(names);
	for (int i = 0; i < NR_OBJS; i++) {
		kfree(a[i]);
		kmem_cache_free(cache, b[i]);
	}
	err = kmem_cache_destroy(cache);
	alloc_exit();
	return err ? 1 : 0;
}
