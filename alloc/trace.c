/* SPDX-License-Identifier: MIT */
/*
 * trace.c - kmem trace events in a bounded ring, read as ftrace's trace_pipe.
 *
 * Writers never wait: each takes a sequence number with one atomic add and
 * owns slot seq % capacity until it publishes the slot's version.  Readers
 * are independent cursors; one that falls behind by more than the ring's
 * capacity is told how many events it lost and resumes at the oldest event
 * still held, as ftrace's "[LOST n EVENTS]".
 */
#include "internal.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

bool trace_on;

struct trace_rec {
	_Atomic uint64_t version;	/* 2*seq+1 while written, 2*seq+2 when done */
	uint8_t type;
	uint8_t accounted;
	int16_t cpu;
	int32_t pid;
	int32_t order;
	uint32_t gfp;
	uint64_t ts_ns;
	uintptr_t call_site;
	uintptr_t ptr;
	uint64_t bytes_req, bytes_alloc;
	char comm[16];
	char site[40];			/* client's site name; empty: call_site */
	char name[64];			/* kmem_cache_free: the cache */
};

static struct trace_rec *ring;
static uint64_t ring_mask;
static _Atomic uint64_t ring_head;
static _Atomic uint64_t ring_lost_total;
static void (*notify_fn)(void *);
static void *notify_arg;

static __thread struct alloc_ctx thread_ctx;
static __thread const struct alloc_ctx *cur_ctx;

int trace_init(unsigned int entries)
{
	uint64_t cap = 16;

	while (cap < entries)
		cap <<= 1;
	ring = calloc(cap, sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	ring_mask = cap - 1;
	atomic_store(&ring_head, 0);
	atomic_store(&ring_lost_total, 0);
	WRITE_ONCE(trace_on, false);
	return 0;
}

void trace_exit(void)
{
	WRITE_ONCE(trace_on, false);
	free(ring);
	ring = NULL;
}

void trace_set_on(bool on)
{
	WRITE_ONCE(trace_on, on && ring);
	slab_update_rare();
}

bool trace_is_on(void)
{
	return READ_ONCE(trace_on);
}

void trace_set_notify(void (*fn)(void *), void *arg)
{
	notify_arg = arg;
	notify_fn = fn;
}

uint64_t trace_head(void)
{
	return atomic_load_explicit(&ring_head, memory_order_acquire);
}

void alloc_set_ctx(const struct alloc_ctx *ctx)
{
	cur_ctx = ctx;
}

const struct alloc_ctx *alloc_ctx_internal_begin(struct alloc_ctx *own)
{
	const struct alloc_ctx *outer = cur_ctx;

	if (outer && outer->site) {
		*own = *outer;
		own->site = NULL;
		cur_ctx = own;
	}
	return outer;
}

void alloc_ctx_internal_end(const struct alloc_ctx *outer)
{
	cur_ctx = outer;
}

const struct alloc_ctx *alloc_get_ctx(void)
{
	if (cur_ctx)
		return cur_ctx;
	if (!thread_ctx.pid) {
		thread_ctx.pid = (int)gettid();
		if (prctl(PR_GET_NAME, thread_ctx.comm) != 0)
			snprintf(thread_ctx.comm, sizeof(thread_ctx.comm), "memcgfs");
	}
	return &thread_ctx;
}

static struct trace_rec *trace_begin(enum trace_event_type type, uint64_t *seqp)
{
	uint64_t seq = atomic_fetch_add_explicit(&ring_head, 1, memory_order_relaxed);
	struct trace_rec *r = &ring[seq & ring_mask];
	const struct alloc_ctx *ctx = alloc_get_ctx();
	struct timespec ts;

	atomic_store_explicit(&r->version, 2 * seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r->type = (uint8_t)type;
	r->accounted = 0;
	r->cpu = (int16_t)alloc_current_cpu();
	r->pid = ctx->pid;
	memcpy(r->comm, ctx->comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	if (ctx->site)
		snprintf(r->site, sizeof(r->site), "%s", ctx->site);
	else
		r->site[0] = '\0';
	r->name[0] = '\0';
	r->ts_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	*seqp = seq;
	return r;
}

static void trace_commit(struct trace_rec *r, uint64_t seq)
{
	atomic_store_explicit(&r->version, 2 * seq + 2, memory_order_release);
	if (notify_fn)
		notify_fn(notify_arg);
}

void trace_kmalloc(uintptr_t call_site, const void *ptr, size_t req,
		   size_t alloc, gfp_t gfp, bool accounted)
{
	uint64_t seq;
	struct trace_rec *r = trace_begin(TRACE_KMALLOC, &seq);

	r->call_site = call_site;
	r->ptr = (uintptr_t)ptr;
	r->bytes_req = req;
	r->bytes_alloc = alloc;
	r->gfp = gfp;
	r->accounted = accounted;
	trace_commit(r, seq);
}

void trace_kmem_cache_alloc(uintptr_t call_site, const void *ptr,
			    const struct kmem_cache *s, gfp_t gfp, bool accounted)
{
	uint64_t seq;
	struct trace_rec *r = trace_begin(TRACE_KMEM_CACHE_ALLOC, &seq);

	r->call_site = call_site;
	r->ptr = (uintptr_t)ptr;
	r->bytes_req = s->object_size;
	r->bytes_alloc = s->size;
	r->gfp = gfp;
	r->accounted = accounted;
	trace_commit(r, seq);
}

void trace_kfree(uintptr_t call_site, const void *ptr)
{
	uint64_t seq;
	struct trace_rec *r;

	if (!READ_ONCE(trace_on))
		return;
	r = trace_begin(TRACE_KFREE, &seq);
	r->call_site = call_site;
	r->ptr = (uintptr_t)ptr;
	trace_commit(r, seq);
}

void trace_kmem_cache_free(uintptr_t call_site, const void *ptr,
			   const struct kmem_cache *s)
{
	uint64_t seq;
	struct trace_rec *r = trace_begin(TRACE_KMEM_CACHE_FREE, &seq);

	r->call_site = call_site;
	r->ptr = (uintptr_t)ptr;
	snprintf(r->name, sizeof(r->name), "%s", s->name);
	trace_commit(r, seq);
}

void trace_mm_page_alloc(const struct page *page, unsigned int order, gfp_t gfp)
{
	uint64_t seq;
	struct trace_rec *r = trace_begin(TRACE_MM_PAGE_ALLOC, &seq);

	r->ptr = (uintptr_t)page;
	r->bytes_req = page_to_pfn(page);
	r->order = (int32_t)order;
	r->gfp = gfp;
	trace_commit(r, seq);
}

void trace_mm_page_free(const struct page *page, unsigned int order)
{
	uint64_t seq;
	struct trace_rec *r = trace_begin(TRACE_MM_PAGE_FREE, &seq);

	r->ptr = (uintptr_t)page;
	r->bytes_req = page_to_pfn(page);
	r->order = (int32_t)order;
	trace_commit(r, seq);
}

void trace_cursor_init(struct trace_cursor *cur, bool from_now)
{
	uint64_t head = trace_head();

	if (from_now)
		cur->seq = head;
	else
		cur->seq = head > ring_mask + 1 ? head - (ring_mask + 1) : 0;
}

/*
 * The process's own symbol tables (libdw): the full .symtab, so that the
 * daemon's static functions resolve too, where dladdr() knows only the
 * dynamic symbols.  Reported once, on first use; Dwfl is not thread-safe.
 */
static pthread_mutex_t dwfl_lock = PTHREAD_MUTEX_INITIALIZER;
static Dwfl *self_dwfl;
static bool self_dwfl_tried;

static const Dwfl_Callbacks self_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static bool symbolize(uintptr_t addr, char *buf, size_t len)
{
	Dwfl_Module *mod;
	const char *name = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;

	pthread_mutex_lock(&dwfl_lock);
	if (!self_dwfl_tried) {
		self_dwfl_tried = true;
		self_dwfl = dwfl_begin(&self_callbacks);
		if (self_dwfl && (dwfl_linux_proc_report(self_dwfl, getpid()) ||
				  dwfl_report_end(self_dwfl, NULL, NULL))) {
			dwfl_end(self_dwfl);
			self_dwfl = NULL;
		}
	}
	mod = self_dwfl ? dwfl_addrmodule(self_dwfl, (Dwarf_Addr)addr) : NULL;
	if (mod)
		name = dwfl_module_addrinfo(mod, (GElf_Addr)addr, &off, &sym, NULL, NULL, NULL);
	if (name)
		snprintf(buf, len, "%s+0x%lx/0x%lx", name, (unsigned long)off,
			 (unsigned long)sym.st_size);
	pthread_mutex_unlock(&dwfl_lock);
	return name != NULL;
}

/* %pS: symbol+0xoff/0xsize (the dynamic symbols, else the full table). */
static void format_call_site(char *buf, size_t len, const struct trace_rec *r)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (r->site[0]) {
		snprintf(buf, len, "%s", r->site);
		return;
	}
	if (r->call_site &&
	    dladdr1((void *)r->call_site, &info, (void **)&sym, RTLD_DL_SYMENT) &&
	    info.dli_sname && sym) {
		snprintf(buf, len, "%s+0x%lx/0x%lx", info.dli_sname,
			 (unsigned long)(r->call_site - (uintptr_t)info.dli_saddr),
			 (unsigned long)sym->st_size);
		return;
	}
	if (r->call_site && symbolize(r->call_site, buf, len))
		return;
	snprintf(buf, len, "0x%lx", (unsigned long)r->call_site);
}

static int format_rec(char *buf, size_t len, const struct trace_rec *r)
{
	static const char *const names[NR_TRACE_EVENTS] = {
		"kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free",
		"mm_page_alloc", "mm_page_free",
	};
	char site[128], gfp[256];
	int n;

	n = snprintf(buf, len, "%16s-%-7d [%03d] ..... %5lu.%06lu: %s: ",
		     r->comm, r->pid, r->cpu, (unsigned long)(r->ts_ns / 1000000000ull),
		     (unsigned long)((r->ts_ns / 1000) % 1000000ull),
		     r->type < NR_TRACE_EVENTS ? names[r->type] : "unknown");
	if (n < 0 || (size_t)n >= len)
		return n;
	buf += n;
	len -= (size_t)n;
	switch (r->type) {
	case TRACE_KMALLOC:
	case TRACE_KMEM_CACHE_ALLOC:
		format_call_site(site, sizeof(site), r);
		gfp_format(gfp, sizeof(gfp), r->gfp);
		n += snprintf(buf, len, "call_site=%s ptr=%016lx bytes_req=%" PRIu64
			      " bytes_alloc=%" PRIu64 " gfp_flags=%s node=-1 accounted=%s\n",
			      site, (unsigned long)r->ptr, r->bytes_req, r->bytes_alloc,
			      gfp, r->accounted ? "true" : "false");
		break;
	case TRACE_KFREE:
		format_call_site(site, sizeof(site), r);
		n += snprintf(buf, len, "call_site=%s ptr=%016lx\n", site,
			      (unsigned long)r->ptr);
		break;
	case TRACE_KMEM_CACHE_FREE:
		format_call_site(site, sizeof(site), r);
		n += snprintf(buf, len, "call_site=%s ptr=%016lx name=%s\n", site,
			      (unsigned long)r->ptr, r->name);
		break;
	case TRACE_MM_PAGE_ALLOC:
		gfp_format(gfp, sizeof(gfp), r->gfp);
		n += snprintf(buf, len, "page=%016lx pfn=0x%lx order=%d migratetype=%u gfp_flags=%s\n",
			      (unsigned long)r->ptr, (unsigned long)r->bytes_req, r->order,
			      (r->gfp & (__GFP_RECLAIMABLE | __GFP_MOVABLE)) >> 3, gfp);
		break;
	case TRACE_MM_PAGE_FREE:
		n += snprintf(buf, len, "page=%016lx pfn=0x%lx order=%d\n",
			      (unsigned long)r->ptr, (unsigned long)r->bytes_req, r->order);
		break;
	default:
		n += snprintf(buf, len, "\n");
	}
	return n;
}

int trace_read(struct trace_cursor *cur, char *buf, size_t len)
{
	struct trace_rec copy;

	for (;;) {
		uint64_t head = trace_head();
		uint64_t seq = cur->seq, cap = ring_mask + 1;
		struct trace_rec *r;
		uint64_t v1, v2;

		if (!ring || seq >= head)
			return 0;
		if (head - seq > cap) {
			uint64_t lost = head - cap - seq;

			cur->seq = head - cap;
			atomic_fetch_add(&ring_lost_total, lost);
			return snprintf(buf, len, "CPU:%d [LOST %" PRIu64 " EVENTS]\n",
					alloc_current_cpu(), lost);
		}
		r = &ring[seq & ring_mask];
		v1 = atomic_load_explicit(&r->version, memory_order_acquire);
		if (v1 < 2 * seq + 2)
			return 0;	/* still being written */
		if (v1 > 2 * seq + 2) {
			/* overwritten by a later lap: count it lost */
			continue;
		}
		memcpy(&copy, r, sizeof(copy));
		atomic_thread_fence(memory_order_acquire);
		v2 = atomic_load_explicit(&r->version, memory_order_relaxed);
		if (v2 != v1)
			continue;
		cur->seq = seq + 1;
		return format_rec(buf, len, &copy);
	}
}
