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
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif
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

void fuzz_check(const char *when)
{
	char msg[512];

	memcg_drain();
	if (memcg_check(msg, sizeof(msg)))
		fuzz_die("%s: memcg_check: %s", when, msg);
	if (alloc_check(msg, sizeof(msg)))
		fuzz_die("%s: alloc_check: %s", when, msg);
}
