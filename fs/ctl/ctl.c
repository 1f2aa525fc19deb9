/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/ctl.c - memcgfs.ctl: sessions and replies, the text protocol's
 * parser, the module's init.
 *
 * Both front ends, this parser and the batched ioctl (batch.c), parse into
 * one operation (struct ctl_exec) and run it through the same executor
 * (exec.c) against alloc/ and memcg/, as the requesting client: memcg's
 * 'current' is the caller's task, alloc's trace context its thread, comm
 * and site=.  Handles live in handles.c.
 *
 * Text protocol decisions (docs/design.md leaves them to us):
 *  - A request is printable ASCII: bytes 0x20..0x7e and tab, one optional
 *    trailing "\n".  NUL, other control bytes, bytes >= 0x7f (so any
 *    non-ASCII UTF-8 too), a second line or more than 4096 bytes (newline
 *    included) are EINVAL.  Words are separated by spaces and tabs.
 *  - Words are case-sensitive.  Optional arguments may come in any order,
 *    each at most once; anything else is EINVAL ("unexpected argument").
 *  - SIZE: decimal digits with an optional K, M or G suffix (lowercase
 *    k, m, g too, as the kernel's memparse; K = 1024).  No sign, no hex,
 *    no spaces, no other suffix.  A value that overflows 64 bits is EINVAL.
 *    kmalloc SIZE must be 1..KMALLOC_MAX_SIZE (4 MiB with 4 KiB pages),
 *    else EINVAL (it could never succeed); kmem_cache_create the same
 *    (alloc's rule).
 *  - GFP and SLAB_FLAGS: '|'-joined names.  Every name alloc's parser
 *    knows (the ones the trace prints: docs/design.md's list and the kernel's other
 *    gfp names, e.g. GFP_ATOMIC, GFP_NOWAIT, __GFP_NOWARN; and "none" for
 *    0) is accepted; anything else is EINVAL.
 *  - xN: "x" and decimal digits, 1 <= N <= 1024.  site=NAME: 1..39
 *    printable characters (the trace keeps 39).  order=O: 0..10.
 *    align=A: a SIZE, 0 (the minimum) or a power of two (alloc checks).
 *  - A HANDLE is 1..16 hex digits (either case, no 0x); "0" is NULL:
 *    kfree accepts it (no-op), kmem_cache_free and free_pages refuse it
 *    (EINVAL; the kernel would crash).  At most 1024 handles a request.
 *  - Caches: kmem_cache_alloc/kmem_cache_free accept the caches created
 *    through memcgfs.ctl and the kmalloc caches (kmalloc-64, ...);
 *    the daemon's internal caches (mem_cgroup, ...) are EPERM;
 *    kmem_cache_destroy only works on caches created through memcgfs.ctl
 *    (EPERM otherwise; ENOENT for no such cache).  kmem_cache_free accepts
 *    a kmalloc object with its own kmalloc cache, as the kernel does.
 *    At most 4096 caches (ENOMEM past that).
 *  - alloc_pages uses the kernel's gfp for each type: GFP_HIGHUSER_MOVABLE
 *    for anon, file and shmem, GFP_KERNEL for sock, GFP_KERNEL_ACCOUNT for
 *    kernel_stack, pagetables, percpu and vmalloc.
 *  - An allocation of an xN request that memcg frees on its own before the
 *    request returns (the task was OOM-killed meanwhile) fails the request
 *    with ENOMEM; the rest is freed, as for any failure.
 *  - Reclaimable objects (SLAB_RECLAIM_ACCOUNT caches, __GFP_RECLAIMABLE
 *    kmallocs) are given to memcg's reclaim through handles.c's
 *    shrinker: it frees the oldest ones charged to the memcg under
 *    reclaim, their handles go stale (EINVAL), the trace shows the frees
 *    under the client whose charge or memory.reclaim write caused them.
 */
#include "ctl.h"
#include "exec.h"
#include "handles.h"
#include "memcg.h"
#include "lib.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTL_REQUEST_MAX		4096u
#define CTL_SITE_LEN		(MEMCGFS_CTL_SITE_MAX - 1)
#define CTL_NAME_LEN		(MEMCGFS_CTL_NAME_MAX - 1)
#define CTL_HANDLE_HEX		16
#define CTL_MIN_REPLY		512u

/* The ABI's constants are the kernel's, as alloc/ and memcg/ use them. */
_Static_assert(MEMCGFS_GFP_ACCOUNT == __GFP_ACCOUNT, "gfp ABI");
_Static_assert(MEMCGFS_GFP_KERNEL == GFP_KERNEL, "gfp ABI");
_Static_assert(MEMCGFS_GFP_RECLAIMABLE == __GFP_RECLAIMABLE, "gfp ABI");
_Static_assert(MEMCGFS_GFP_ZERO == __GFP_ZERO, "gfp ABI");
_Static_assert(MEMCGFS_GFP_NOFAIL == __GFP_NOFAIL, "gfp ABI");
_Static_assert(MEMCGFS_GFP_NORETRY == __GFP_NORETRY, "gfp ABI");
_Static_assert(MEMCGFS_GFP_NOWARN == __GFP_NOWARN, "gfp ABI");
_Static_assert(MEMCGFS_SLAB_HWCACHE_ALIGN == SLAB_HWCACHE_ALIGN, "slab ABI");
_Static_assert(MEMCGFS_SLAB_RECLAIM_ACCOUNT == SLAB_RECLAIM_ACCOUNT, "slab ABI");
_Static_assert(MEMCGFS_SLAB_PANIC == SLAB_PANIC, "slab ABI");
_Static_assert(MEMCGFS_SLAB_NO_MERGE == SLAB_NO_MERGE, "slab ABI");
_Static_assert(MEMCGFS_SLAB_ACCOUNT == SLAB_ACCOUNT, "slab ABI");
_Static_assert(MEMCGFS_PAGE_ANON == MEMCG_PAGE_ANON && MEMCGFS_PAGE_FILE == MEMCG_PAGE_FILE &&
	       MEMCGFS_PAGE_SHMEM == MEMCG_PAGE_SHMEM &&
	       MEMCGFS_PAGE_KERNEL_STACK == MEMCG_PAGE_KERNEL_STACK &&
	       MEMCGFS_PAGE_PAGETABLES == MEMCG_PAGE_PAGETABLES &&
	       MEMCGFS_PAGE_PERCPU == MEMCG_PAGE_PERCPU && MEMCGFS_PAGE_SOCK == MEMCG_PAGE_SOCK &&
	       MEMCGFS_PAGE_VMALLOC == MEMCG_PAGE_VMALLOC && NR_MEMCG_PAGE_TYPES == 8,
	       "page type ABI");
_Static_assert(MEMCGFS_CTL_MAX_SIZE <= 16383, "FUSE restricted ioctl size");
_Static_assert(MEMCGFS_CTL_NAME_MAX == 64, "alloc's kmem_cache names hold 63 characters");
_Static_assert(MEMCGFS_CTL_SITE_MAX == 40, "alloc's trace keeps 39 characters of site=");

struct ctl_session {
	pthread_mutex_t lock;
	char *reply;
	size_t len, pos, cap;
	uid_t uid;			/* counted for fs.max_sessions_per_uid */
};

/* A session's most memory: its struct and the longest reply (x1024 handles). */
#define CTL_SESSION_MAX_BYTES	(sizeof(struct ctl_session) + CTL_MAX_COUNT * (CTL_HANDLE_HEX + 1) + \
				 CTL_MIN_REPLY)

static bool ctl_up;

static const char *errname(int err)
{
	const char *n = strerrorname_np(-err);

	return n ? n : "EIO";
}

/* ---- sessions and replies ---- */
struct ctl_session *ctl_session_new(void)
{
	struct ctl_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->reply = malloc(CTL_MIN_REPLY);
	if (!s->reply) {
		free(s);
		return NULL;
	}
	s->cap = CTL_MIN_REPLY;
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

struct ctl_session *ctl_session_open(uid_t uid, int *err)
{
	struct ctl_session *s;

	*err = ctl_sessions_get(uid);
	if (*err)
		return NULL;
	s = ctl_session_new();
	if (!s) {
		ctl_sessions_put(uid);
		*err = -ENOMEM;
		return NULL;
	}
	s->uid = uid;
	return s;
}

void ctl_session_free(struct ctl_session *s)
{
	if (!s)
		return;
	ctl_sessions_put(s->uid);
	pthread_mutex_destroy(&s->lock);
	free(s->reply);
	free(s);
}

static int reply_reserve(struct ctl_session *s, size_t need)
{
	char *r;

	if (need <= s->cap)
		return 0;
	r = realloc(s->reply, need);
	if (!r)
		return -ENOMEM;
	s->reply = r;
	s->cap = need;
	return 0;
}

/* Append (the capacity was reserved; CTL_MIN_REPLY always holds an error). */
static void __attribute__((format(printf, 2, 3)))
reply_add(struct ctl_session *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= s->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->reply + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n < s->cap - s->len ? (size_t)n : s->cap - s->len - 1;
}

static int reply_error(struct ctl_session *s, int err, const char *detail)
{
	s->len = s->pos = 0;
	reply_add(s, "error %s %s\n", errname(err), detail);
	return err;
}

/*
 * The reply stays whole until the next request, read or not: a reader
 * that reads ahead and gives back what it did not use (a shell's read on
 * a seekable file) reads those bytes again.
 */
static size_t __ctl_read(struct ctl_session *s, size_t pos, char *buf, size_t len)
{
	size_t n = pos < s->len ? s->len - pos : 0;

	if (n > len)
		n = len;
	memcpy(buf, s->reply + pos, n);
	s->pos = pos + n;
	return n;
}

size_t ctl_read(struct ctl_session *s, char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = __ctl_read(s, s->pos, buf, len);
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t ctl_read_at(struct ctl_session *s, uint64_t pos, char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = __ctl_read(s, pos < s->len ? (size_t)pos : s->len, buf, len);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* ---- text parsing ---- */
/* Numbers (lib.h's u64_parse), SIZE (its size_parse): any failure is EINVAL. */
static int parse_u64(const char *s, uint64_t *out)
{
	return u64_parse(s, strlen(s), out) ? -EINVAL : 0;
}

/* a SIZE of at most 23 characters (more leading zeros are EINVAL) */
static int parse_size(const char *s, uint64_t *out)
{
	size_t l = strlen(s);

	return l >= 24 || size_parse(s, l, out) ? -EINVAL : 0;
}

static int parse_handle(const char *s, uint64_t *out)
{
	return hex_parse(s, CTL_HANDLE_HEX, out);
}

enum {
	O_GFP = 1, O_COUNT = 2, O_SITE = 4, O_ORDER = 8, O_ALIGN = 16, O_SFLAGS = 32,
};

static bool is_count_word(const char *w)
{
	if (w[0] != 'x' || !w[1])
		return false;
	for (w++; *w; w++)
		if (*w < '0' || *w > '9')
			return false;
	return true;
}

/* Optional arguments, any order, each once. */
static int parse_opts(char **argv, int argc, unsigned int allowed, struct ctl_exec *x)
{
	unsigned int seen = 0;

	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		unsigned int what;

		if ((allowed & O_SITE) && !strncmp(w, "site=", 5))
			what = O_SITE;
		else if ((allowed & O_ORDER) && !strncmp(w, "order=", 6))
			what = O_ORDER;
		else if ((allowed & O_ALIGN) && !strncmp(w, "align=", 6))
			what = O_ALIGN;
		else if ((allowed & O_COUNT) && is_count_word(w))
			what = O_COUNT;
		else if (allowed & O_GFP)
			what = O_GFP;
		else if (allowed & O_SFLAGS)
			what = O_SFLAGS;
		else
			return fail(x, -EINVAL, "unexpected argument '%.48s'", w);
		if (seen & what)
			return fail(x, -EINVAL, "extra argument '%.48s'", w);
		seen |= what;
		switch (what) {
		case O_SITE: {
			size_t l = strlen(w + 5);

			if (!l || l > CTL_SITE_LEN)
				return fail(x, -EINVAL, "site= needs 1..%u characters", CTL_SITE_LEN);
			x->site = w + 5;
			break;
		}
		case O_ORDER: {
			uint64_t v;

			if (parse_u64(w + 6, &v) || v > MAX_PAGE_ORDER)
				return fail(x, -EINVAL, "bad order '%.48s' (0..%d)", w + 6,
					    MAX_PAGE_ORDER);
			x->order = (unsigned int)v;
			break;
		}
		case O_ALIGN: {
			uint64_t v;

			if (parse_size(w + 6, &v) || v > UINT32_MAX)
				return fail(x, -EINVAL, "bad align '%.48s'", w + 6);
			x->align = (unsigned int)v;
			break;
		}
		case O_COUNT: {
			uint64_t v;

			if (parse_u64(w + 1, &v) || v < 1 || v > CTL_MAX_COUNT)
				return fail(x, -EINVAL, "bad count '%.48s' (x1..x%d)", w,
					    CTL_MAX_COUNT);
			x->count = (unsigned int)v;
			break;
		}
		case O_GFP:
			if (gfp_parse(w, &x->gfp))
				return fail(x, -EINVAL, "bad gfp flags '%.48s'", w);
			break;
		case O_SFLAGS:
			if (slab_flags_parse(w, &x->sflags))
				return fail(x, -EINVAL, "bad slab flags '%.48s'", w);
			break;
		}
	}
	return 0;
}

static int parse_handles(char **argv, int argc, struct ctl_exec *x)
{
	if (argc < 1)
		return fail(x, -EINVAL, "%s: missing handle", op_name(x->op));
	if (argc > CTL_MAX_COUNT)
		return fail(x, -EINVAL, "%s: more than %d handles", op_name(x->op), CTL_MAX_COUNT);
	/*
	 * A malformed handle is refused in its turn: the first bad handle in
	 * request order decides the errno (another user's before it: EPERM).
	 */
	x->in = ctl_handle_scratch;
	x->nin = 0;
	x->malformed = NULL;
	for (int i = 0; i < argc && !x->malformed; i++) {
		if (parse_handle(argv[i], &ctl_handle_scratch[i]))
			x->malformed = argv[i];
		else
			x->nin++;
	}
	return 0;
}

static int parse_cache_name(const char *w, struct ctl_exec *x)
{
	if (strlen(w) > CTL_NAME_LEN)
		return fail(x, -EINVAL, "cache name longer than %d characters", CTL_NAME_LEN);
	x->name = w;
	return 0;
}

static int parse_kmalloc_size(const char *w, struct ctl_exec *x)
{
	if (parse_size(w, &x->size))
		return fail(x, -EINVAL, "bad size '%.48s'", w);
	if (!x->size)
		return fail(x, -EINVAL, "%s: size 0", op_name(x->op));
	if (x->size > KMALLOC_MAX_SIZE)
		return fail(x, -EINVAL, "%s: size %" PRIu64 " above KMALLOC_MAX_SIZE (%zu)",
			    op_name(x->op), x->size, (size_t)KMALLOC_MAX_SIZE);
	return 0;
}

/* argv[0] is the request word; fills x, 0 or -errno with x->detail. */
static int parse_request(char **argv, int argc, struct ctl_exec *x)
{
	static const struct {
		const char *word;
		int op;
	} words[] = {
		{ "kmalloc", MEMCGFS_OP_KMALLOC },
		{ "kfree", MEMCGFS_OP_KFREE },
		{ "kmem_cache_create", MEMCGFS_OP_KMEM_CACHE_CREATE },
		{ "kmem_cache_alloc", MEMCGFS_OP_KMEM_CACHE_ALLOC },
		{ "kmem_cache_free", MEMCGFS_OP_KMEM_CACHE_FREE },
		{ "kmem_cache_destroy", MEMCGFS_OP_KMEM_CACHE_DESTROY },
		{ "alloc_pages", MEMCGFS_OP_ALLOC_PAGES },
		{ "free_pages", MEMCGFS_OP_FREE_PAGES },
		{ "drain", MEMCGFS_OP_DRAIN },
		{ "whoami", MEMCGFS_OP_WHOAMI },
		{ "mark_page_accessed", MEMCGFS_OP_MARK_PAGE_ACCESSED },
	};
	int err;

	x->op = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(argv[0], words[i].word))
			x->op = words[i].op;
	if (!x->op)
		return fail(x, -EINVAL, "unknown request '%.48s'", argv[0]);
	x->gfp = GFP_KERNEL;
	x->count = 1;
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
		if (argc < 2)
			return fail(x, -EINVAL, "kmalloc: missing SIZE");
		err = parse_kmalloc_size(argv[1], x);
		if (err)
			return err;
		return parse_opts(argv + 2, argc - 2, O_GFP | O_COUNT | O_SITE, x);
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
		if (argc < 2)
			return fail(x, -EINVAL, "kmem_cache_alloc: missing NAME");
		err = parse_cache_name(argv[1], x);
		if (err)
			return err;
		return parse_opts(argv + 2, argc - 2, O_GFP | O_COUNT | O_SITE, x);
	case MEMCGFS_OP_ALLOC_PAGES:
		if (argc < 2)
			return fail(x, -EINVAL, "alloc_pages: missing TYPE");
		if (memcg_page_type_parse(argv[1], &x->ptype))
			return fail(x, -EINVAL, "unknown page type '%.48s'", argv[1]);
		return parse_opts(argv + 2, argc - 2, O_ORDER | O_COUNT, x);
	case MEMCGFS_OP_KFREE:
	case MEMCGFS_OP_FREE_PAGES:
	case MEMCGFS_OP_MARK_PAGE_ACCESSED:
		return parse_handles(argv + 1, argc - 1, x);
	case MEMCGFS_OP_KMEM_CACHE_FREE:
		if (argc < 2)
			return fail(x, -EINVAL, "kmem_cache_free: missing NAME");
		err = parse_cache_name(argv[1], x);
		if (err)
			return err;
		return parse_handles(argv + 2, argc - 2, x);
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		if (argc < 3)
			return fail(x, -EINVAL, "kmem_cache_create: missing %s",
				    argc < 2 ? "NAME and SIZE" : "SIZE");
		err = parse_cache_name(argv[1], x);
		if (err)
			return err;
		if (parse_size(argv[2], &x->size))
			return fail(x, -EINVAL, "bad size '%.48s'", argv[2]);
		x->sflags = 0;
		return parse_opts(argv + 3, argc - 3, O_ALIGN | O_SFLAGS, x);
	case MEMCGFS_OP_KMEM_CACHE_DESTROY:
		if (argc != 2)
			return fail(x, -EINVAL, argc < 2 ? "kmem_cache_destroy: missing NAME" :
				    "kmem_cache_destroy: extra argument");
		return parse_cache_name(argv[1], x);
	default:	/* drain, whoami */
		if (argc != 1)
			return fail(x, -EINVAL, "%s takes no argument", argv[0]);
		return 0;
	}
}

/* The request must be one line of printable ASCII. */
static int check_bytes(const char *buf, size_t len, struct ctl_exec *x)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n')
			return fail(x, -EINVAL, "more than one line");
		if (c == '\0')
			return fail(x, -EINVAL, "NUL byte at offset %zu", i);
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return fail(x, -EINVAL, "byte 0x%02x at offset %zu is not printable ASCII",
				    c, i);
	}
	return 0;
}

static int text_request(struct ctl_session *s, const struct ctl_caller *who,
			const char *buf, size_t len, struct ctl_exec *x)
{
	char line[CTL_REQUEST_MAX + 1];
	char *argv[CTL_REQUEST_MAX / 2 + 1];
	int argc = 0, err;
	struct alloc_ctx ctx;
	char path[4096];
	const char *cg = "/";
	char *p;

	if (len > CTL_REQUEST_MAX)
		return fail(x, -EINVAL, "request longer than %u bytes", CTL_REQUEST_MAX);
	if (len && buf[len - 1] == '\n')
		len--;
	err = check_bytes(buf, len, x);
	if (err)
		return err;
	memcpy(line, buf, len);
	line[len] = '\0';
	for (p = line; *p;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	if (!argc)
		return fail(x, -EINVAL, "empty request");
	err = parse_request(argv, argc, x);
	if (err)
		return err;

	/* room for the reply first: after the allocations it would be too late */
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		err = reply_reserve(s, 4 + (size_t)x->count * (CTL_HANDLE_HEX + 1));
		break;
	case MEMCGFS_OP_WHOAMI:
		err = ctl_caller_cgroup(who, path, sizeof(path), &cg);
		if (err)
			return fail(x, err, "the caller's cgroup path is longer than %zu bytes",
				    sizeof(path) - 1);
		err = reply_reserve(s, 96 + strlen(cg));
		break;
	default:
		err = 0;
	}
	if (err)
		return fail(x, err, "no memory for the reply");

	x->out = ctl_handle_scratch;
	ctl_caller_enter(who, &ctx);
	err = ctl_exec_op(who, &ctx, x);
	ctl_caller_leave();
	if (err)
		return err;

	s->len = s->pos = 0;
	reply_add(s, "ok");
	switch (x->op) {
	case MEMCGFS_OP_KMALLOC:
	case MEMCGFS_OP_KMEM_CACHE_ALLOC:
	case MEMCGFS_OP_ALLOC_PAGES:
		for (unsigned int i = 0; i < x->count; i++)
			reply_add(s, " %016" PRIx64, x->out[i]);
		break;
	case MEMCGFS_OP_KMEM_CACHE_CREATE:
		reply_add(s, " %s objsize=%u size=%u objperslab=%u pagesperslab=%u",
			  x->info.name, x->info.object_size, x->info.size, x->info.objects,
			  1u << x->info.order);
		break;
	case MEMCGFS_OP_WHOAMI:
		reply_add(s, " pid=%d cgroup=%s cpu=%d", (int)who->pid, cg, alloc_current_cpu());
		break;
	}
	reply_add(s, "\n");
	return 0;
}

int ctl_request(struct ctl_session *s, const struct ctl_caller *who,
		const char *buf, size_t len)
{
	struct ctl_exec x;
	int err;

	memset(&x, 0, sizeof(x));
	pthread_mutex_lock(&s->lock);
	s->len = s->pos = 0;		/* a new request discards an unread reply */
	err = text_request(s, who, buf, len, &x);
	if (err)
		reply_error(s, err, x.detail[0] ? x.detail : "failed");
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* ---- init ---- */
int ctl_init(void)
{
	int err;

	if (ctl_up)
		return -EBUSY;
	err = ctl_handles_init();
	if (err)
		return err;
	memcg_set_free_notify(ctl_forget);
	ctl_up = true;
	return 0;
}

unsigned int ctl_set_max_handles_per_uid(unsigned int max)
{
	if (!max)	/* 1% of the host's RAM in entries, at least 65536 */
		max = fs_host_share(ctl_handle_bytes(), 65536, CTL_MAX_HANDLES);
	ctl_handles_set_max_per_uid(max);
	return max;
}

unsigned int ctl_set_max_sessions_per_uid(unsigned int max)
{
	if (!max)	/* 1% of the host's RAM in sessions holding the longest reply */
		max = fs_host_share(CTL_SESSION_MAX_BYTES, 1024, 1048576);
	ctl_sessions_set_max_per_uid(max);
	return max;
}

void ctl_exit(void)
{
	if (!ctl_up)
		return;
	memcg_set_free_notify(NULL);
	ctl_handles_exit();
	ctl_cache_exit();
	ctl_up = false;
}
