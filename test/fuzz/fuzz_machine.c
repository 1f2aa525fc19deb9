/* SPDX-License-Identifier: MIT */
/*
 * fuzz_machine.c - the emulated machine and the control-protocol client the
 * harnesses share (see fuzz_machine.h).
 */
#include "fuzz_machine.h"

#include "memcg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)	/* gcc's word for it (test/fault builds with gcc) */
#define HAVE_LSAN 1
#endif
#ifdef HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

bool fuzz_verbose;

void fuzz_record(const uint8_t *data, size_t size)
{
	static const char *dir;
	static bool checked;
	static unsigned long n;
	char path[4096];
	FILE *f;

	if (!checked) {
		dir = getenv("FUZZ_RECORD");
		checked = true;
	}
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%08lu", dir, n++);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		fuzz_die("FUZZ_RECORD: cannot write %s", path);
}

void fuzz_die(const char *fmt, ...)
{
	va_list ap;

	fputs("FUZZ FINDING: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* The tasks are not processes: no /proc, no kill(2). */
static int fake_oom_score_adj(pid_t pid)
{
	(void)pid;
	return 0;
}

static const struct memcg_oom_ops fake_oom_ops = {
	.oom_score_adj = fake_oom_score_adj,
};

void fuzz_machine_init(unsigned long memory, unsigned int cpus)
{
	static bool up;
	struct alloc_config cfg;
	int err;

	if (up)
		return;
	fuzz_verbose = getenv("FUZZ_VERBOSE") != NULL;
	alloc_config_defaults(&cfg);
	cfg.memory = memory;
	cfg.cpus = cpus;
	cfg.trace_entries = 1024;
	err = alloc_init(&cfg);
	if (err)
		fuzz_die("alloc_init: %d", err);
	err = memcg_init(NULL);
	if (err)
		fuzz_die("memcg_init: %d", err);
	memcg_set_oom_ops(&fake_oom_ops);
#ifdef HAVE_LSAN
	/*
	 * The arena is the emulated machine's RAM: memcg keeps its structures
	 * in it (struct mem_cgroup comes from the "mem_cgroup" kmem_cache) and
	 * they point to malloc'd memory (PSI groups, per-CPU statistics).
	 * LeakSanitizer scans no mmap'd region by itself, so without this it
	 * reports everything only the arena references as leaked.  (A stale
	 * pointer left in freed arena memory could hide a real leak: the
	 * per-input checks of fuzz_ctl_cleanup and memcg_check count what
	 * LeakSanitizer then cannot.)
	 */
	__lsan_register_root_region(page_address(pfn_to_page(0)), memory);
#endif
	up = true;
}

void fuzz_arena_take(struct fuzz_arena *a)
{
	struct alloc_stats st;

	kmem_cache_shrink_all();
	alloc_stats(&st);
	a->pages_alloc = st.pages_alloc;
	a->pages_large = st.pages_large_kmalloc;
	a->pages_free = st.pages_free;
	slabinfo_format(a->slabinfo, sizeof(a->slabinfo));
}

/* the lines of 'now' that 'before' does not have, "-" and "+" */
static void slabinfo_diff(const char *before, const char *now)
{
	for (int pass = 0; pass < 2; pass++) {
		const char *p = pass ? now : before, *other = pass ? before : now;

		while (*p) {
			const char *nl = strchr(p, '\n');
			size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);
			const char *q = other;
			bool found = false;

			while (*q && !found) {
				const char *qn = strchr(q, '\n');
				size_t ql = qn ? (size_t)(qn - q + 1) : strlen(q);

				found = ql == l && !memcmp(p, q, l);
				q += ql;
			}
			if (!found)
				fprintf(stderr, "%c %.*s", pass ? '+' : '-', (int)l, p);
			p += l;
		}
	}
}

void fuzz_arena_same(const struct fuzz_arena *a, bool check_free, const char *when)
{
	static char now[sizeof(a->slabinfo)];
	struct alloc_stats st;

	/* cheap first (the fuzzers call this after every input): no shrink */
	alloc_stats(&st);
	if (st.pages_alloc == a->pages_alloc && st.pages_large_kmalloc == a->pages_large) {
		if (!check_free)
			return;
		kmem_cache_shrink_all();
		alloc_stats(&st);
		if (st.pages_free == a->pages_free)
			return;
	}
	slabinfo_format(now, sizeof(now));
	fprintf(stderr, "slabinfo, before and %s:\n", when);
	slabinfo_diff(a->slabinfo, now);
	fuzz_die("%s: pages allocated %lu, large kmalloc %lu, free %lu; before: %lu, %lu, %lu",
		 when, st.pages_alloc, st.pages_large_kmalloc, st.pages_free, a->pages_alloc,
		 a->pages_large, a->pages_free);
}

void fuzz_check(const char *when)
{
	char msg[512];

	memcg_drain();
	if (memcg_check(msg, sizeof(msg)))
		fuzz_die("%s: memcg_check: %s", when, msg);
	if (alloc_check(msg, sizeof(msg)))
		fuzz_die("%s: alloc_check: %s", when, msg);
}
