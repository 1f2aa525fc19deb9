/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ctl.c - memcgfs.ctl's text protocol, parser and executor, against a
 * real in-process machine (32 MiB arena, 2 CPUs) and memory controller
 * (/child with memory.max 4M, so both the memcg OOM and the global OOM
 * paths run).
 *
 * An input is a sequence of lines ('\n'-separated).  Each line is one
 * request, written with its newline through ctl_request() by one of four
 * callers (alice uid 1000 and bob uid 1001 in /child, root in /child, carol
 * uid 1000 in /), its reply read back with ctl_read().  A line may start
 * with directives, in any order:
 *   @D   D = 0..3: the caller for this and the following lines
 *   #D   pin the serving CPU slot to D % 2 ('#-': unpinned)
 *   !n   send the line without its newline
 *   !r   read the reply 7 bytes at a time
 *   !t   toggle the kmem trace
 *   !j   the line goes on past the next newline (a two-line write: EINVAL)
 * and inside a line "$B" stands for a handle an earlier reply of this input
 * gave (handle number B for a digit, else B's byte value, modulo their
 * count; stale or live:
 * double frees, frees of another user's handle, pages to kfree...), "$$"
 * for '$'.
 *
 * Oracles, per request: a request refused with EINVAL, EPERM, ENOENT,
 * EEXIST, EBUSY or ERANGE changes nothing (page counters after a drain,
 * live handles, pages and caches); the reply is one line, "ok" exactly
 * when the write succeeded, "error ENAME " with the write's errno
 * otherwise.  Per input: everything freed (as root), the machine's
 * invariants (memcg_check, alloc_check) and exactly the starting usage
 * and memory.stat sizes (fuzz_ctl_cleanup).
 */
#include "fuzz_machine.h"

#include "ctl.h"
#include "memcg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_MAX	(1024 * 17 + 64)

static char reply[REPLY_MAX + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_ctl_init();
	return 0;
}

static bool is_hex16(const char *s)
{
	for (int i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[16] == ' ' || s[16] == '\n';
}

/* Collect the handles and cache names an "ok" reply gives. */
static void harvest(const char *r)
{
	const char *p;

	if (strncmp(r, "ok", 2))
		return;
	/* "ok NAME objsize=..." (a name is one word, so it may itself be "objsize=...") */
	p = r[2] == ' ' ? strchr(r + 3, ' ') : NULL;
	if (p && !strncmp(p, " objsize=", 9)) {
		char name[64];
		size_t l = (size_t)(p - (r + 3));

		if (l && l < sizeof(name)) {
			memcpy(name, r + 3, l);
			name[l] = '\0';
			fuzz_ctl_add_cache(name);
		}
		return;
	}
	for (p = r + 2; *p == ' '; p += 17) {
		if (!is_hex16(p + 1))
			break;
		fuzz_ctl_add_handle(strtoull(p + 1, NULL, 16));
	}
}

static size_t read_reply(bool small)
{
	size_t n = 0, r;

	while (n < REPLY_MAX &&
	       (r = ctl_read(fuzz_ctl.session, reply + n,
			     small ? (REPLY_MAX - n < 7 ? REPLY_MAX - n : 7) : REPLY_MAX - n)) > 0)
		n += r;
	reply[n] = '\0';
	/* everything was read: a further read returns nothing */
	if (ctl_read(fuzz_ctl.session, reply + n, 1))
		fuzz_die("reply longer than %d bytes", REPLY_MAX);
	return n;
}

static bool refusal(int rc)
{
	return rc == -EINVAL || rc == -EPERM || rc == -ENOENT || rc == -EEXIST ||
	       rc == -EBUSY || rc == -ERANGE;
}

static void one_request(unsigned int who, const char *line, size_t len, bool newline, bool small)
{
	char *buf = malloc(len * 8 + 2);
	struct fuzz_snap snap;
	size_t n = 0, rl;
	int rc;

	if (!buf)
		fuzz_die("out of memory");
	for (size_t i = 0; i < len; i++) {
		if (line[i] == '$' && i + 1 < len) {
			unsigned char b = (unsigned char)line[++i];

			if (b == '$')
				buf[n++] = '$';
			else
				n += (size_t)sprintf(buf + n, "%016llx",
						     (unsigned long long)fuzz_ctl_handle(
							     b >= '0' && b <= '9' ? b - '0' : b));
			continue;
		}
		buf[n++] = line[i];
	}
	if (newline)
		buf[n++] = '\n';

	fuzz_snap_take(&snap);
	rc = ctl_request(fuzz_ctl.session, fuzz_caller(who), buf, n);
	rl = read_reply(small);
	if (fuzz_verbose)
		fprintf(stderr, "@%u %.*s%s-> %d %s", who, (int)n, buf, newline ? "" : "\n", rc, reply);
	if (!rl || reply[rl - 1] != '\n' || memchr(reply, '\n', rl) != reply + rl - 1)
		fuzz_die("reply is not one line: '%.200s'", reply);
	if (rc == 0) {
		if (strncmp(reply, "ok", 2) || (reply[2] != ' ' && reply[2] != '\n'))
			fuzz_die("request succeeded, reply '%.200s'", reply);
		harvest(reply);
	} else {
		char want[64];

		if (rc > 0 || !strerrorname_np(-rc))
			fuzz_die("ctl_request returned %d", rc);
		snprintf(want, sizeof(want), "error %s ", strerrorname_np(-rc));
		if (strncmp(reply, want, strlen(want)))
			fuzz_die("request failed with %s, reply '%.200s'", strerrorname_np(-rc),
				 reply);
		if (refusal(rc))
			fuzz_snap_same(&snap, buf, n);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	unsigned int who = 0;
	bool trace = false;

	fuzz_record(data, size);

	while (p < end) {
		const char *nl, *e;
		bool newline = true, small = false, join = false;

		for (;;) {
			if (end - p >= 2 && p[0] == '@' && p[1] >= '0' && p[1] <= '3') {
				who = (unsigned int)(p[1] - '0');
			} else if (end - p >= 2 && p[0] == '#' && p[1] != '\n') {
				alloc_pin_cpu(p[1] == '-' ? -1 : (p[1] & 1));
			} else if (end - p >= 2 && p[0] == '!' && p[1] == 'n') {
				newline = false;
			} else if (end - p >= 2 && p[0] == '!' && p[1] == 'r') {
				small = true;
			} else if (end - p >= 2 && p[0] == '!' && p[1] == 'j') {
				join = true;
			} else if (end - p >= 2 && p[0] == '!' && p[1] == 't') {
				trace = !trace;
				trace_set_on(trace);
			} else {
				break;
			}
			p += 2;
			if (p < end && *p == ' ')
				p++;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl && join && nl + 1 < end)
			nl = memchr(nl + 1, '\n', (size_t)(end - nl - 1));
		e = nl ? nl : end;
		one_request(who, p, (size_t)(e - p), newline, small);
		p = nl ? nl + 1 : end;
	}
	fuzz_ctl_cleanup();
	return 0;
}
