/* SPDX-License-Identifier: MIT */
/*
 * alloc_trace.c - unit tests of alloc/: the kmem tracepoints and their ftrace lines (§10).
 */
#include "test_alloc.h"

/* ================================================================== */
/* Group: trace                                                         */

#define MAX_LINES 4096

struct tlines {
	int n;
	char *l[MAX_LINES];
};

static struct tlines *tl_collect(struct trace_cursor *cur)
{
	struct tlines *t = calloc(1, sizeof(*t));
	char buf[4096];

	assert_non_null(t);
	for (;;) {
		int r;

		memset(buf, 0, sizeof(buf));
		r = trace_read(cur, buf, sizeof(buf));
		if (r < 0)
			fail_msg("trace_read = %d", r);
		if (r == 0)
			break;
		if ((size_t)r != strlen(buf))
			fail_msg("trace_read returned %d for a %zu-byte line \"%s\"", r, strlen(buf), buf);
		if (buf[r - 1] == '\n')
			buf[r - 1] = 0;
		if (strchr(buf, '\n'))
			fail_msg("trace_read returned more than one line: \"%s\"", buf);
		if (t->n == MAX_LINES)
			fail_msg("too many trace lines");
		t->l[t->n++] = strdup(buf);
	}
	return t;
}

static void tl_free(struct tlines *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->l[i]);
	free(t);
}

static void tl_dump(const struct tlines *t)
{
	for (int i = 0; i < t->n; i++)
		print_message("  trace[%d] %s\n", i, t->l[i]);
}

static bool tre_match(const char *pat, const char *s, regmatch_t *m, size_t nm)
{
	regex_t re;
	int r = regcomp(&re, pat, REG_EXTENDED);

	if (r) {
		char e[256];

		regerror(r, &re, e, sizeof(e));
		fail_msg("regcomp(%s): %s", pat, e);
	}
	r = regexec(&re, s, nm, m, 0);
	regfree(&re);
	return r == 0;
}

static char *re_group(const char *s, regmatch_t m)
{
	return strndup(s + m.rm_so, (size_t)(m.rm_eo - m.rm_so));
}

/* The one line of an event; fails unless there is exactly one. */
static const char *tl_find1(const struct tlines *t, const char *event)
{
	char key[64];
	const char *found = NULL;
	int n = 0;

	snprintf(key, sizeof(key), ": %s: ", event);
	for (int i = 0; i < t->n; i++)
		if (strstr(t->l[i], key)) {
			found = t->l[i];
			n++;
		}
	if (n != 1) {
		tl_dump(t);
		fail_msg("%d \"%s\" events in the trace, expected 1", n, event);
	}
	return found;
}

static int tl_index(const struct tlines *t, const char *line)
{
	for (int i = 0; i < t->n; i++)
		if (t->l[i] == line)
			return i;
	return -1;
}

static void expect_line(const char *pat, const char *line, regmatch_t *m, size_t nm)
{
	if (!tre_match(pat, line, m, nm))
		fail_msg("trace line\n    %s\n  does not match\n    %s", line, pat);
}

#define FTRACE_HEAD(comm_pid, cpu) \
	"^ *" comm_pid " +\\[" cpu "\\] \\.{5} +([0-9]+)\\.([0-9]{6}): "

static struct alloc_ctx client_ctx = { .pid = 1234, .comm = "client", .site = "mysite" };

void test_trace_kmalloc_and_cache(void **state)
{
	struct trace_cursor cur;
	struct kmem_cache *s;
	struct tlines *t;
	regmatch_t m[4];
	const char *lk, *lf, *lca, *lcf;
	char *pk, *pf, *pca, *pcf;
	void *p, *o;
	double last = -1;

	(void)state;
	s = kmem_cache_create("test_2312", 2312, 0, SLAB_HWCACHE_ALIGN);
	assert_non_null(s);
	pin(2);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	assert_true(trace_is_on());
	alloc_set_ctx(&client_ctx);
	assert_non_null(alloc_get_ctx());
	assert_int_equal(alloc_get_ctx()->pid, 1234);
	p = kmalloc(2312, GFP_KERNEL_ACCOUNT);
	assert_non_null(p);
	kfree(p);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(o);
	kmem_cache_free(s, o);
	alloc_set_ctx(NULL);
	trace_set_on(false);

	t = tl_collect(&cur);
	lk = tl_find1(t, "kmalloc");
	lf = tl_find1(t, "kfree");
	lca = tl_find1(t, "kmem_cache_alloc");
	lcf = tl_find1(t, "kmem_cache_free");
	assert_true(tl_index(t, lk) < tl_index(t, lf));
	assert_true(tl_index(t, lf) < tl_index(t, lca));
	assert_true(tl_index(t, lca) < tl_index(t, lcf));

	expect_line(FTRACE_HEAD("client-1234", "002")
		    "kmalloc: call_site=mysite ptr=([0-9a-f]{16}) bytes_req=2312 "
		    "bytes_alloc=4096 gfp_flags=GFP_KERNEL_ACCOUNT node=-1 accounted=true$",
		    lk, m, 4);
	pk = re_group(lk, m[3]);
	expect_line(FTRACE_HEAD("client-1234", "002") "kfree: call_site=mysite ptr=([0-9a-f]{16})$",
		    lf, m, 4);
	pf = re_group(lf, m[3]);
	expect_line(FTRACE_HEAD("client-1234", "002")
		    "kmem_cache_alloc: call_site=mysite ptr=([0-9a-f]{16}) bytes_req=2312 "
		    "bytes_alloc=2368 gfp_flags=GFP_KERNEL node=-1 accounted=false$",
		    lca, m, 4);
	pca = re_group(lca, m[3]);
	expect_line(FTRACE_HEAD("client-1234", "002")
		    "kmem_cache_free: call_site=mysite ptr=([0-9a-f]{16}) name=test_2312$",
		    lcf, m, 4);
	pcf = re_group(lcf, m[3]);
	EXPECT_STR(pf, pk, "kfree ptr == kmalloc ptr");
	EXPECT_STR(pcf, pca, "kmem_cache_free ptr == kmem_cache_alloc ptr");
	assert_string_not_equal(pk, pca);
	/* COMM right-aligned in 16 columns, then '-' and the pid. */
	for (int i = 0; i < t->n; i++) {
		if (strncmp(t->l[i], "          client-1234", 21) != 0)
			fail_msg("line not starting with %%16s-PID: \"%s\"", t->l[i]);
		/* Every event of this thread (page events included) carries the
		 * ftrace head; timestamps do not go backwards. */
		expect_line(FTRACE_HEAD("client-1234", "002") "[a-z_]+: ", t->l[i], m, 3);
		{
			double ts = strtod(t->l[i] + m[1].rm_so, NULL);

			assert_true(ts >= last);
			last = ts;
		}
	}
	free(pk);
	free(pf);
	free(pca);
	free(pcf);
	tl_free(t);
	EXPECT_DESTROY(s, "test_2312");
}

void test_trace_accounted_flags(void **state)
{
	static struct alloc_ctx ctx = { .pid = 42, .comm = "acct", .site = "s1" };
	struct trace_cursor cur;
	struct kmem_cache *s;
	struct tlines *t;
	regmatch_t m[4];
	void *a, *b, *c;

	(void)state;
	s = kmem_cache_create("acct_cache", 100, 0, SLAB_ACCOUNT);
	assert_non_null(s);
	pin(1);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	a = kmem_cache_alloc(s, GFP_KERNEL);
	b = kmalloc(100, GFP_KERNEL);
	c = kmalloc(100, GFP_KERNEL | __GFP_RECLAIMABLE);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	kmem_cache_free(s, a);
	kfree(b);
	kfree(c);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	/* §10: SLAB_ACCOUNT makes kmem_cache_alloc accounted=true. */
	expect_line(FTRACE_HEAD("acct-42", "001")
		    "kmem_cache_alloc: call_site=s1 ptr=([0-9a-f]{16}) bytes_req=100 "
		    "bytes_alloc=104 gfp_flags=GFP_KERNEL node=-1 accounted=true$",
		    tl_find1(t, "kmem_cache_alloc"), m, 4);
	expect_line(FTRACE_HEAD("acct-42", "001")
		    "kmem_cache_free: call_site=s1 ptr=([0-9a-f]{16}) name=acct_cache$",
		    tl_find1(t, "kmem_cache_free"), m, 4);
	{
		int nk = 0;

		for (int i = 0; i < t->n; i++) {
			if (!strstr(t->l[i], ": kmalloc: "))
				continue;
			if (nk == 0)
				expect_line(FTRACE_HEAD("acct-42", "001")
					    "kmalloc: call_site=s1 ptr=([0-9a-f]{16}) bytes_req=100 "
					    "bytes_alloc=128 gfp_flags=GFP_KERNEL node=-1 accounted=false$",
					    t->l[i], m, 4);
			else
				expect_line(FTRACE_HEAD("acct-42", "001")
					    "kmalloc: call_site=s1 ptr=([0-9a-f]{16}) bytes_req=100 "
					    "bytes_alloc=128 gfp_flags=GFP_KERNEL\\|__GFP_RECLAIMABLE "
					    "node=-1 accounted=false$",
					    t->l[i], m, 4);
			nk++;
		}
		EXPECT_EQ(nk, 2, "kmalloc events");
	}
	tl_free(t);
	EXPECT_DESTROY(s, "acct_cache");
}

void test_trace_large_kmalloc(void **state)
{
	static struct alloc_ctx ctx = { .pid = 9, .comm = "big", .site = "bigsite" };
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[4];
	char *pa, *pf;
	void *p;

	(void)state;
	pin(0);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	p = kmalloc(10000, GFP_KERNEL_ACCOUNT);
	assert_non_null(p);
	kfree(p);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	/* §1.4: bytes_alloc = PAGE_SIZE << order. */
	expect_line(FTRACE_HEAD("big-9", "000")
		    "kmalloc: call_site=bigsite ptr=([0-9a-f]{16}) bytes_req=10000 "
		    "bytes_alloc=16384 gfp_flags=GFP_KERNEL_ACCOUNT node=-1 accounted=true$",
		    tl_find1(t, "kmalloc"), m, 4);
	pa = re_group(tl_find1(t, "kmalloc"), m[3]);
	expect_line(FTRACE_HEAD("big-9", "000") "kfree: call_site=bigsite ptr=([0-9a-f]{16})$",
		    tl_find1(t, "kfree"), m, 4);
	pf = re_group(tl_find1(t, "kfree"), m[3]);
	EXPECT_STR(pf, pa, "large kfree ptr");
	free(pa);
	free(pf);
	tl_free(t);
}

void test_trace_pages(void **state)
{
	static struct alloc_ctx ctx = { .pid = 555, .comm = "pager", .site = NULL };
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[6];
	struct page *pg, *pg2;
	char *page_a, *pfn_a, *page_f, *pfn_f;

	(void)state;
	pin(3);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	pg = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(pg);
	__free_pages(pg, 0);
	pg2 = alloc_pages(GFP_KERNEL, 2);
	assert_non_null(pg2);
	__free_pages(pg2, 2);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	if (t->n != 4) {
		tl_dump(t);
		fail_msg("%d events for two alloc_pages/__free_pages pairs, expected 4", t->n);
	}
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_alloc: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=0 "
		    "migratetype=[0-9]+ gfp_flags=GFP_KERNEL$", t->l[0], m, 5);
	page_a = re_group(t->l[0], m[3]);
	pfn_a = re_group(t->l[0], m[4]);
	EXPECT_EQ(strtoul(pfn_a, NULL, 16), page_to_pfn(pg), "mm_page_alloc pfn");
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_free: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=0$", t->l[1], m, 5);
	page_f = re_group(t->l[1], m[3]);
	pfn_f = re_group(t->l[1], m[4]);
	EXPECT_STR(page_f, page_a, "mm_page_free page");
	EXPECT_STR(pfn_f, pfn_a, "mm_page_free pfn");
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_alloc: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=2 "
		    "migratetype=[0-9]+ gfp_flags=GFP_KERNEL$", t->l[2], m, 5);
	free(pfn_a);
	pfn_a = re_group(t->l[2], m[4]);
	EXPECT_EQ(strtoul(pfn_a, NULL, 16), page_to_pfn(pg2), "mm_page_alloc pfn, order 2");
	expect_line(FTRACE_HEAD("pager-555", "003")
		    "mm_page_free: page=([0-9a-f]{16}) pfn=0x([0-9a-f]+) order=2$", t->l[3], m, 5);
	free(page_a);
	free(pfn_a);
	free(page_f);
	free(pfn_f);
	tl_free(t);
}

/* Called from the trace test so that its return address is inside it. */
void *trace_site_caller(size_t n);
void trace_site_freer(void *p);
void *volatile trace_site_sink;

__attribute__((noinline)) void *trace_site_caller(size_t n)
{
	void *p = kmalloc(n, GFP_KERNEL);

	trace_site_sink = p;	/* no tail call: the return address stays here */
	return p;
}

__attribute__((noinline)) void trace_site_freer(void *p)
{
	kfree(p);
	trace_site_sink = NULL;
}

/* Lines of kmalloc/kfree events only (a new slab also traces mm_page_alloc). */
static struct tlines *tl_only_slab_events(struct tlines *t)
{
	struct tlines *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	for (int i = 0; i < t->n; i++)
		if (strstr(t->l[i], ": kmalloc: ") || strstr(t->l[i], ": kfree: "))
			o->l[o->n++] = strdup(t->l[i]);
	tl_free(t);
	return o;
}

/*
 * Without a client site, call_site is the allocating function: NAME+0xOFF/0xSIZE
 * (or NAME) when it resolves.  When this binary's symbols are not resolvable
 * at all (dladdr finds no name), the kernel's %pS prints the raw address, so
 * 0x... is accepted then and only then.
 */
#define SITE_SYM "([a-zA-Z_][a-zA-Z0-9_.]*)(\\+0x[0-9a-f]+/0x[0-9a-f]+)?"
#define SITE_ANY "([a-zA-Z_][a-zA-Z0-9_.]*(\\+0x[0-9a-f]+/0x[0-9a-f]+)?|0x[0-9a-f]+)"

void test_trace_call_site_symbol(void **state)
{
	static struct alloc_ctx ctx = { .pid = 77, .comm = "daemon", .site = NULL };
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[6];
	Dl_info di;
	bool resolvable;
	char *site_a, *site_f;
	char pat[512];
	void *p;

	(void)state;
	pin(0);
	resolvable = dladdr((void *)(uintptr_t)trace_site_caller, &di) && di.dli_sname &&
		     strcmp(di.dli_sname, "trace_site_caller") == 0;
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&ctx);
	p = trace_site_caller(64);
	assert_non_null(p);
	trace_site_freer(p);
	alloc_set_ctx(NULL);
	/* The daemon thread itself (no ctx): some COMM-PID. */
	p = kmalloc(64, GFP_KERNEL);
	kfree(p);
	trace_set_on(false);
	t = tl_only_slab_events(tl_collect(&cur));
	if (t->n != 4) {
		tl_dump(t);
		fail_msg("%d kmalloc/kfree events, expected 4", t->n);
	}
	snprintf(pat, sizeof(pat), "%s%s%s", FTRACE_HEAD("daemon-77", "000") "kmalloc: call_site=",
		 resolvable ? SITE_SYM : SITE_ANY,
		 " ptr=[0-9a-f]{16} bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1 "
		 "accounted=false$");
	expect_line(pat, t->l[0], m, 5);
	site_a = re_group(t->l[0], m[3]);
	snprintf(pat, sizeof(pat), "%s%s%s", FTRACE_HEAD("daemon-77", "000") "kfree: call_site=",
		 resolvable ? SITE_SYM : SITE_ANY, " ptr=[0-9a-f]{16}$");
	expect_line(pat, t->l[1], m, 5);
	site_f = re_group(t->l[1], m[3]);
	print_message("call_site without a client site: \"%s\" / \"%s\" (dladdr %s)\n",
		      site_a, site_f, resolvable ? "resolves" : "does not resolve");
	if (resolvable) {
		EXPECT_STR(site_a, "trace_site_caller", "kmalloc call_site symbol");
		EXPECT_STR(site_f, "trace_site_freer", "kfree call_site symbol");
	}
	snprintf(pat, sizeof(pat), "%s%s%s",
		 "^ *.+-[0-9]+ +\\[000\\] \\.{5} +[0-9]+\\.[0-9]{6}: kmalloc: call_site=",
		 SITE_ANY,	/* a static function: not in the dynamic symbol table */
		 " ptr=[0-9a-f]{16} bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1 "
		 "accounted=false$");
	expect_line(pat, t->l[2], m, 3);
	snprintf(pat, sizeof(pat), "%s%s%s",
		 "^ *.+-[0-9]+ +\\[000\\] \\.{5} +[0-9]+\\.[0-9]{6}: kfree: call_site=",
		 SITE_ANY, " ptr=[0-9a-f]{16}$");
	expect_line(pat, t->l[3], m, 3);
	free(site_a);
	free(site_f);
	tl_free(t);
}

void test_trace_off(void **state)
{
	struct trace_cursor cur;
	uint64_t h;
	char buf[512];
	void *p;
	struct page *pg;
	struct kmem_cache *s;

	(void)state;
	s = kmem_cache_create("off_cache", 50, 0, 0);
	assert_non_null(s);
	trace_set_on(false);
	assert_false(trace_is_on());
	trace_cursor_init(&cur, true);
	h = trace_head();
	alloc_set_ctx(&client_ctx);
	p = kmalloc(100, GFP_KERNEL);
	kfree(p);
	p = kmalloc(100000, GFP_KERNEL);
	kfree(p);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	pg = alloc_pages(GFP_KERNEL, 1);
	__free_pages(pg, 1);
	trace_kfree(0, NULL);
	alloc_set_ctx(NULL);
	EXPECT_EQ(trace_head(), h, "trace_head with tracing off");
	EXPECT_EQ(trace_read(&cur, buf, sizeof(buf)), 0, "trace_read with tracing off");
	EXPECT_DESTROY(s, "off_cache");
}

/* §3.3/§10: kfree traces before its NULL check (docs/kernel-slab.md §12 marks this as
 * code reading). */
void test_trace_kfree_null(void **state)
{
	struct trace_cursor cur;
	struct tlines *t;
	regmatch_t m[3];

	(void)state;
	pin(1);
	trace_cursor_init(&cur, true);
	trace_set_on(true);
	alloc_set_ctx(&client_ctx);
	kfree(NULL);
	alloc_set_ctx(NULL);
	trace_set_on(false);
	t = tl_collect(&cur);
	if (t->n != 1) {
		tl_dump(t);
		fail_msg("%d events for kfree(NULL), expected 1", t->n);
	}
	expect_line(FTRACE_HEAD("client-1234", "001") "kfree: call_site=mysite ptr=0000000000000000$",
		    t->l[0], m, 3);
	tl_free(t);
}

void test_trace_two_cursors(void **state)
{
	static struct alloc_ctx ctx = { .pid = 0, .comm = "cur", .site = "x" };
	struct trace_cursor c1, c2, c3;
	struct tlines *t1, *t2, *t3;
	uint64_t h;
	char buf[512];

	(void)state;
	pin(0);
	trace_cursor_init(&c1, true);
	trace_cursor_init(&c2, true);
	h = trace_head();
	trace_set_on(true);
	for (int i = 0; i < 10; i++) {
		ctx.pid = 500 + i;
		alloc_set_ctx(&ctx);
		trace_kfree((uintptr_t)test_trace_two_cursors, NULL);
	}
	alloc_set_ctx(NULL);
	trace_set_on(false);
	EXPECT_EQ(trace_head() - h, 10, "trace_head advanced by the events");
	/* A cursor from now sees nothing of the past. */
	trace_cursor_init(&c3, true);
	EXPECT_EQ(trace_read(&c3, buf, sizeof(buf)), 0, "from_now cursor");
	t1 = tl_collect(&c1);
	t2 = tl_collect(&c2);
	EXPECT_EQ(t1->n, 10, "first cursor's events");
	EXPECT_EQ(t2->n, 10, "second cursor's events");
	for (int i = 0; i < 10; i++) {
		char pat[256];

		snprintf(pat, sizeof(pat), "^ *cur-%d +\\[000\\] \\.{5} +[0-9]+\\.[0-9]{6}: kfree: "
			 "call_site=[^ ]+ ptr=[0-9a-f]{16}$", 500 + i);
		expect_line(pat, t1->l[i], NULL, 0);
		EXPECT_STR(t2->l[i], t1->l[i], "both cursors see the same line %d", i);
	}
	/* A cursor from the oldest event sees them too (the ring is large). */
	trace_cursor_init(&c3, false);
	t3 = tl_collect(&c3);
	assert_true(t3->n >= 10);
	EXPECT_STR(t3->l[t3->n - 1], t1->l[9], "oldest-cursor's last line");
	tl_free(t1);
	tl_free(t2);
	tl_free(t3);
}

/* Group trace16: a 16-event ring. */
void test_trace_lost(void **state)
{
	static struct alloc_ctx ctx = { .pid = 0, .comm = "lost", .site = "ls" };
	struct trace_cursor cur, c2;
	struct tlines *t, *t2;
	uint64_t h;

	(void)state;
	pin(1);
	trace_cursor_init(&cur, true);
	h = trace_head();
	trace_set_on(true);
	for (int i = 0; i < 100; i++) {
		ctx.pid = 1000 + i;
		alloc_set_ctx(&ctx);
		trace_kfree((uintptr_t)test_trace_lost, NULL);
	}
	alloc_set_ctx(NULL);
	trace_set_on(false);
	EXPECT_EQ(trace_head() - h, 100, "events produced");
	t = tl_collect(&cur);
	if (t->n != 17) {
		tl_dump(t);
		fail_msg("%d lines, expected the LOST line and the newest 16 events", t->n);
	}
	expect_line("^CPU:[0-9]+ \\[LOST 84 EVENTS\\]$", t->l[0], NULL, 0);
	for (int i = 0; i < 16; i++) {
		char pat[256];

		snprintf(pat, sizeof(pat), "^ *lost-%d +\\[001\\] \\.{5} +[0-9]+\\.[0-9]{6}: kfree: "
			 "call_site=[^ ]+ ptr=[0-9a-f]{16}$", 1084 + i);
		expect_line(pat, t->l[1 + i], NULL, 0);
	}
	/* A reader starting at the oldest held event loses nothing. */
	trace_cursor_init(&c2, false);
	t2 = tl_collect(&c2);
	EXPECT_EQ(t2->n, 16, "cursor at the oldest event");
	for (int i = 0; i < t2->n && i < 16; i++)
		EXPECT_STR(t2->l[i], t->l[1 + i], "same events, line %d", i);
	tl_free(t);
	tl_free(t2);
}

