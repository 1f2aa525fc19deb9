/* SPDX-License-Identifier: MIT */
/*
 * fault_ctl.c - fault injection through the control protocol: each
 * scenario is an input of a ctl harness of test/fuzz (fuzz_ctl.c's text
 * requests, or fuzz_ioctl.c's batches, linked in its place), run by the
 * harness itself with its oracles: a reply per request that is one line,
 * "error ENAME" with the errno the request failed with; after the input,
 * every handle freed, memcg_check and alloc_check, and the child's usage,
 * memory.stat, the caches and the arena's pages exactly at their baseline.  Faults are in
 * scope only inside ctl_request() and ctl_ioctl() (linked with --wrap),
 * not in the harness's own cleanup and checks.
 *
 * Usage: fault_ctl FILE|DIR...   (a DIR: every regular file in it)
 */
#include "driver.h"
#include "fuzz_machine.h"

#include "ctl.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int __real_ctl_request(struct ctl_session *s, const struct ctl_caller *who,
		       const char *buf, size_t len);
int __wrap_ctl_request(struct ctl_session *s, const struct ctl_caller *who,
		       const char *buf, size_t len);
int __real_ctl_ioctl(const struct ctl_caller *who, unsigned int cmd,
		     const void *in_buf, size_t in_len, void *out_buf, size_t out_len);
int __wrap_ctl_ioctl(const struct ctl_caller *who, unsigned int cmd,
		     const void *in_buf, size_t in_len, void *out_buf, size_t out_len);
void __real_fuzz_ctl_cleanup(void);
void __wrap_fuzz_ctl_cleanup(void);

static bool cleaning;

int __wrap_ctl_request(struct ctl_session *s, const struct ctl_caller *who,
		       const char *buf, size_t len)
{
	int r;

	fault_task_enable(!cleaning);
	r = __real_ctl_request(s, who, buf, len);
	fault_task_enable(false);
	return r;
}

int __wrap_ctl_ioctl(const struct ctl_caller *who, unsigned int cmd,
		     const void *in_buf, size_t in_len, void *out_buf, size_t out_len)
{
	int r;

	fault_task_enable(!cleaning);
	r = __real_ctl_ioctl(who, cmd, in_buf, in_len, out_buf, out_len);
	fault_task_enable(false);
	return r;
}

void __wrap_fuzz_ctl_cleanup(void)
{
	cleaning = true;
	__real_fuzz_ctl_cleanup();
	cleaning = false;
}

struct input {
	unsigned char *data;
	size_t len;
};

static void run_input(void *arg)
{
	const struct input *in = arg;

	LLVMFuzzerTestOneInput(in->data, in->len);
}

static void scenario(const char *path, struct fault_totals *t)
{
	struct input in = { NULL, 0 };
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		exit(1);
	}
	in.len = (size_t)n;
	in.data = malloc(in.len ? in.len : 1);
	if (!in.data || fread(in.data, 1, in.len, f) != in.len) {
		perror(path);
		exit(1);
	}
	fclose(f);
	/*
	 * A warm-up run: what the scenario leaves for good without any fault
	 * (the obj_exts vectors of old slabs, see fuzz_machine.h) is part of
	 * the baseline; after it, the free pages must come back exactly.
	 */
	fuzz_ctl.check_free_pages = false;
	run_input(&in);
	fuzz_ctl_rebaseline();
	fuzz_ctl.check_free_pages = true;
	fault_loop(path, run_input, &in, t);
	free(in.data);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	struct fault_totals t = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		struct dirent **names;
		int nr;

		if (stat(argv[i], &sb)) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			scenario(argv[i], &t);
			continue;
		}
		nr = scandir(argv[i], &names, NULL, by_name);
		if (nr < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int j = 0; j < nr; j++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
			if (!stat(path, &sb) && S_ISREG(sb.st_mode))
				scenario(path, &t);
			free(names[j]);
		}
		free(names);
	}
	fault_report(argv[0], &t);
	return 0;
}
