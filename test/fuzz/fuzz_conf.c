/* SPDX-License-Identifier: MIT */
/*
 * fuzz_conf.c - the configuration loader: conf_load() of arbitrary INI text
 * (through a memfd, as a file named /proc/self/fd/N) and conf_set() of
 * arbitrary KEY=VALUE overrides.
 *
 * Input: the first byte selects the mode: even, the rest is an INI file;
 * odd, the rest is a sequence of '\n'-separated "KEY=VALUE" overrides
 * (conf_set each), then conf_validate.
 *
 * Oracles: conf_load and conf_set change nothing when they fail; their
 * errors are the documented errnos with a message; a configuration that
 * loaded (or validates after the overrides) is written by conf_format and
 * read back by conf_load to exactly the same struct.
 */
#include "fuzz_machine.h"

#include "conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz_conf", MFD_CLOEXEC);
	if (memfd < 0)
		fuzz_die("memfd_create");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void put_file(const void *p, size_t len)
{
	if (ftruncate(memfd, 0) || pwrite(memfd, p, len, 0) != (ssize_t)len)
		fuzz_die("memfd write");
}

/* conf_format, then conf_load of that text: the same configuration. */
static void round_trip(const struct memcgfs_config *c)
{
	struct memcgfs_config back;
	char text[4096], err[512];
	int n, r;

	n = conf_format(c, text, sizeof(text));
	if (n < 0 || n >= (int)sizeof(text))
		fuzz_die("conf_format: %d", n);
	put_file(text, (size_t)n);
	conf_defaults(&back);
	r = conf_load(&back, path, err, sizeof(err));
	if (r)
		fuzz_die("conf_format's text does not load: %s\n%s", err, text);
	if (memcmp(c, &back, sizeof(back)))
		fuzz_die("conf_format's text loads to another configuration:\n%s", text);
}

static void check_err(int r, const char *err, const char *what)
{
	if (r != -EINVAL && r != -ERANGE && r != -ENOENT && r != -EACCES && r != -EIO)
		fuzz_die("%s returned %d", what, r);
	if (!err[0])
		fuzz_die("%s failed (%d) without a message", what, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memcgfs_config c, before;
	char err[512];
	int r;

	fuzz_record(data, size);

	if (!size)
		return 0;
	conf_defaults(&c);
	if (!(data[0] & 1)) {
		put_file(data + 1, size - 1);
		before = c;
		err[0] = '\0';
		r = conf_load(&c, path, err, sizeof(err));
		if (r) {
			check_err(r, err, "conf_load");
			if (memcmp(&c, &before, sizeof(c)))
				fuzz_die("a failed conf_load changed the configuration");
		} else {
			round_trip(&c);
		}
		return 0;
	}

	{
		const char *p = (const char *)data + 1, *end = (const char *)data + size;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *e = nl ? nl : end;
			const char *eq = memchr(p, '=', (size_t)(e - p));
			size_t kl = eq ? (size_t)(eq - p) : (size_t)(e - p);
			char *key = strndup(p, kl);
			char *val = eq ? strndup(eq + 1, (size_t)(e - eq - 1)) : strdup("");

			if (!key || !val)
				fuzz_die("out of memory");
			before = c;
			err[0] = '\0';
			r = conf_set(&c, key, val, err, sizeof(err));
			if (r) {
				check_err(r, err, "conf_set");
				if (memcmp(&c, &before, sizeof(c)))
					fuzz_die("a failed conf_set('%s', '%s') changed the configuration",
						 key, val);
			}
			free(key);
			free(val);
			p = nl ? nl + 1 : end;
		}
		err[0] = '\0';
		r = conf_validate(&c, err, sizeof(err));
		if (!r)
			round_trip(&c);
		else if (r != -EINVAL || !err[0])
			fuzz_die("conf_validate: %d '%s'", r, err);
	}
	return 0;
}
