/* SPDX-License-Identifier: MIT */
/*
 * alloc_stress.c - unit tests of alloc/: the multi-threaded stress of a cache (pinned,
 * unpinned, online CPUs).
 */
#include "test_alloc.h"

/* ================================================================== */
/* Stress                                                               */

#define ST_LOCAL	256
#define ST_SHARED	2048
#define ST_CACHE_SIZE	200u
enum { OBJ_KMALLOC = 0, OBJ_SMALL = 1, OBJ_CACHE = 2, OBJ_PAGES = 3 };
#define DEAD_WORD	0xdeaddeaddeaddeadull

struct stress_ctx {
	_Atomic uintptr_t shared[ST_SHARED];
	struct kmem_cache *cache;
	uint64_t seed;
	long iters;
	atomic_long errors;		/* the workers' own findings: they stop */
	atomic_long check_errors;	/* concurrent alloc_check() failures */
	char check_msg[512];
	atomic_int stop;
	atomic_long checks;
	atomic_long allocs;
	atomic_long frees;
	pthread_mutex_t msg_lock;
	char msg[512];
};

struct stress_thread {
	struct stress_ctx *c;
	pthread_t th;
	int pin;
	uint64_t rng;
	uintptr_t local[ST_LOCAL];
};

static void stress_error(struct stress_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void stress_error(struct stress_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&c->errors, 1) == 0) {
		pthread_mutex_lock(&c->msg_lock);
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
		va_end(ap);
		pthread_mutex_unlock(&c->msg_lock);
	}
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t tok(const struct stress_ctx *c, const void *p)
{
	return (uint64_t)(uintptr_t)p ^ c->seed ^ 0xa11ce5ed00000000ull;
}

/* Take ownership: word 0 becomes the live token; it must not be one already. */
static bool claim(struct stress_ctx *c, void *p, const char *what)
{
	uint64_t old = __atomic_exchange_n((uint64_t *)p, tok(c, p), __ATOMIC_SEQ_CST);

	if (old == tok(c, p)) {
		stress_error(c, "%s %p handed out while still live", what, p);
		return false;
	}
	return true;
}

static bool release(struct stress_ctx *c, void *p, const char *what)
{
	uint64_t old = __atomic_exchange_n((uint64_t *)p, DEAD_WORD, __ATOMIC_SEQ_CST);

	if (old != tok(c, p)) {
		stress_error(c, "%s %p: start cookie %#llx, expected %#llx", what, p,
			     (unsigned long long)old, (unsigned long long)tok(c, p));
		return false;
	}
	return true;
}

static void stamp(struct stress_ctx *c, void *p, uint64_t n, size_t end)
{
	uint64_t e = ~tok(c, p) ^ n;

	memcpy((char *)p + 8, &n, 8);
	if (end >= 24)
		memcpy((char *)p + end - 8, &e, 8);
}

static bool check_stamp(struct stress_ctx *c, void *p, uint64_t n, size_t end, const char *what)
{
	uint64_t e;

	if (end >= 24) {
		memcpy(&e, (char *)p + end - 8, 8);
		if (e != (~tok(c, p) ^ n)) {
			stress_error(c, "%s %p (%llu bytes): end cookie overwritten", what, p,
				     (unsigned long long)n);
			return false;
		}
	}
	return true;
}

static uintptr_t stress_alloc(struct stress_ctx *c, uint64_t *rng)
{
	static const unsigned lo[13] = { 1, 9, 17, 33, 65, 97, 129, 193, 257, 513, 1025, 2049, 4097 };
	static const unsigned hi[13] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };
	uint64_t r = rng_next(rng);
	unsigned pick = (unsigned)(r % 1000);
	void *p;

	r /= 1000;
	if (pick < 15) {			/* large kmalloc */
		size_t n = 8193 + r % (65536 - 8192);
		gfp_t gfp = (r >> 20) & 1 ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;

		p = kmalloc(n, gfp);
		if (!p) {
			stress_error(c, "kmalloc(%zu) = NULL", n);
			return 0;
		}
		if (!claim(c, p, "large kmalloc"))
			return 0;
		stamp(c, p, n, n);
		return (uintptr_t)p | OBJ_KMALLOC;
	}
	if (pick < 25) {			/* alloc_pages */
		unsigned order = (unsigned)(r % 3);
		struct page *pg = alloc_pages(GFP_KERNEL, order);

		if (!pg) {
			stress_error(c, "alloc_pages(%u) = NULL", order);
			return 0;
		}
		p = page_address(pg);
		if (!claim(c, p, "pages"))
			return 0;
		stamp(c, p, order, (size_t)PG << order);
		return (uintptr_t)p | OBJ_PAGES;
	}
	if (pick < 125) {			/* the dedicated cache */
		bool zero = r & 1;

		p = kmem_cache_alloc(c->cache, zero ? GFP_KERNEL | __GFP_ZERO : GFP_KERNEL);
		if (!p) {
			stress_error(c, "kmem_cache_alloc = NULL");
			return 0;
		}
		if (zero && !all_zero(p, ST_CACHE_SIZE)) {
			stress_error(c, "kmem_cache_alloc(__GFP_ZERO) %p not zeroed", p);
			return 0;
		}
		if (!claim(c, p, "cache object"))
			return 0;
		stamp(c, p, ST_CACHE_SIZE, ST_CACHE_SIZE);
		return (uintptr_t)p | OBJ_CACHE;
	}
	unsigned cls = (unsigned)(r % 13);
	r /= 13;
	size_t n = lo[cls] + r % (hi[cls] - lo[cls] + 1);
	r /= 8192;
	unsigned g = (unsigned)(r % 6);
	gfp_t gfp = g < 2 ? GFP_KERNEL : g < 4 ? GFP_KERNEL_ACCOUNT :
		    g == 4 ? GFP_KERNEL | __GFP_RECLAIMABLE : GFP_KERNEL | __GFP_ZERO;

	p = kmalloc(n, gfp);
	if (!p) {
		stress_error(c, "kmalloc(%zu) = NULL", n);
		return 0;
	}
	if (g == 5 && !all_zero(p, n < 512 ? n : 512)) {
		stress_error(c, "kmalloc(%zu, __GFP_ZERO) %p not zeroed", n, p);
		return 0;
	}
	if (!claim(c, p, "kmalloc"))
		return 0;
	if (n < 16)
		return (uintptr_t)p | OBJ_SMALL;
	stamp(c, p, n, n);
	return (uintptr_t)p | OBJ_KMALLOC;
}

static void stress_free(struct stress_ctx *c, uintptr_t o)
{
	void *p = (void *)(o & ~(uintptr_t)3);
	uint64_t n;

	switch (o & 3) {
	case OBJ_SMALL:
		if (ksize(p) != 8 && ksize(p) != 16) {
			stress_error(c, "ksize(small %p) = %zu", p, ksize(p));
			return;
		}
		if (release(c, p, "kmalloc(<16)"))
			kfree(p);
		break;
	case OBJ_KMALLOC:
		if (__atomic_load_n((uint64_t *)p, __ATOMIC_SEQ_CST) != tok(c, p)) {
			stress_error(c, "kmalloc %p: start cookie overwritten", p);
			return;
		}
		memcpy(&n, (char *)p + 8, 8);
		if (n < 16 || n > 65536) {
			stress_error(c, "kmalloc %p: size word %llu overwritten", p, (unsigned long long)n);
			return;
		}
		if (!check_stamp(c, p, n, n, "kmalloc"))
			return;
		if (ksize(p) != ref_roundup(n)) {
			stress_error(c, "ksize(kmalloc(%llu)) = %zu, expected %zu",
				     (unsigned long long)n, ksize(p), ref_roundup(n));
			return;
		}
		if (release(c, p, "kmalloc"))
			kfree(p);
		break;
	case OBJ_CACHE:
		memcpy(&n, (char *)p + 8, 8);
		if (n != ST_CACHE_SIZE) {
			stress_error(c, "cache object %p: size word overwritten", p);
			return;
		}
		if (!check_stamp(c, p, n, n, "cache object"))
			return;
		if (release(c, p, "cache object"))
			kmem_cache_free(c->cache, p);
		break;
	case OBJ_PAGES:
		memcpy(&n, (char *)p + 8, 8);
		if (n > 2) {
			stress_error(c, "pages %p: order word overwritten", p);
			return;
		}
		if (!check_stamp(c, p, n, (size_t)PG << n, "pages"))
			return;
		if (release(c, p, "pages"))
			__free_pages(virt_to_page(p), (unsigned)n);
		break;
	}
}

static void *stress_thread_fn(void *arg)
{
	struct stress_thread *t = arg;
	struct stress_ctx *c = t->c;
	long allocs = 0, frees = 0;

	if (t->pin >= 0) {
		if (alloc_pin_cpu(t->pin) != 0 || alloc_current_cpu() != t->pin)
			stress_error(c, "pinning to %d failed", t->pin);
	}
	for (long i = 0; i < c->iters && !atomic_load_explicit(&c->errors, memory_order_relaxed); i++) {
		uintptr_t o = stress_alloc(c, &t->rng), old;
		uint64_t r;

		if (!o)
			break;
		allocs++;
		r = rng_next(&t->rng);
		if (r & 1) {
			old = atomic_exchange(&c->shared[(r >> 1) % ST_SHARED], o);
		} else {
			unsigned j = (unsigned)((r >> 1) % ST_LOCAL);

			old = t->local[j];
			t->local[j] = o;
		}
		if (old) {
			stress_free(c, old);
			frees++;
		}
	}
	atomic_fetch_add(&c->allocs, allocs);
	atomic_fetch_add(&c->frees, frees);
	alloc_pin_cpu(-1);
	return NULL;
}

static void *stress_checker_fn(void *arg)
{
	struct stress_ctx *c = arg;
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	while (!atomic_load(&c->stop)) {
		char msg[512] = "";
		int r = alloc_check(msg, sizeof(msg));

		if (r && atomic_fetch_add(&c->check_errors, 1) == 0)
			snprintf(c->check_msg, sizeof(c->check_msg), "%d: %s", r, msg);
		atomic_fetch_add(&c->checks, 1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static uint64_t stress_seed(void)
{
	const char *e = getenv("ALLOC_TEST_SEED");

	return e ? strtoull(e, NULL, 0) : 0x5eed0123456789abull;
}

static void run_stress(const char *cache_name, int nthreads, bool pinned, long iters)
{
	struct stress_ctx *c = calloc(1, sizeof(*c));
	struct stress_thread *th = calloc((size_t)nthreads, sizeof(*th));
	struct alloc_stats base, st;
	pthread_t checker;
	char msg[1024] = "";
	int r;

	assert_non_null(c);
	assert_non_null(th);
	pthread_mutex_init(&c->msg_lock, NULL);
	c->seed = stress_seed();
	c->iters = iters;
	c->cache = kmem_cache_create(cache_name, ST_CACHE_SIZE, 0, 0);
	assert_non_null(c->cache);
	kmem_cache_shrink_all();
	stats(&base);
	print_message("stress: %d threads, %s, %ld iterations each, seed %#llx\n", nthreads,
		      pinned ? "pinned" : "unpinned", iters, (unsigned long long)c->seed);

	/* ALLOC_STRESS_NO_CHECKER=1 leaves out the concurrent alloc_check()
	 * thread (to tell a checker race from a real inconsistency). */
	if (getenv("ALLOC_STRESS_NO_CHECKER"))
		atomic_store(&c->stop, 1);
	assert_int_equal(pthread_create(&checker, NULL, stress_checker_fn, c), 0);
	for (int i = 0; i < nthreads; i++) {
		th[i].c = c;
		th[i].pin = pinned ? i % (int)alloc_nr_cpus() : -1;
		th[i].rng = c->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
		if (!th[i].rng)
			th[i].rng = 1;
		assert_int_equal(pthread_create(&th[i].th, NULL, stress_thread_fn, &th[i]), 0);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i].th, NULL);
	atomic_store(&c->stop, 1);
	pthread_join(checker, NULL);

	/* Free what is left, from this thread. */
	for (int i = 0; i < nthreads; i++)
		for (int j = 0; j < ST_LOCAL; j++)
			if (th[i].local[j]) {
				stress_free(c, th[i].local[j]);
				th[i].local[j] = 0;
			}
	for (int j = 0; j < ST_SHARED; j++) {
		uintptr_t o = atomic_exchange(&c->shared[j], 0);

		if (o)
			stress_free(c, o);
	}
	print_message("stress: %ld allocations, %ld frees in threads, %ld concurrent checks\n",
		      atomic_load(&c->allocs), atomic_load(&c->frees), atomic_load(&c->checks));
	soft_reset();
	if (atomic_load(&c->errors)) {
		print_error("stress: %ld errors, first: %s\n", atomic_load(&c->errors), c->msg);
		soft_errors++;
	}
	if (atomic_load(&c->check_errors)) {
		print_error("stress: %ld of %ld concurrent alloc_check() calls failed, first: %s\n",
			    atomic_load(&c->check_errors), atomic_load(&c->checks), c->check_msg);
		soft_errors++;
	}
	r = alloc_check(msg, sizeof(msg));
	if (r) {
		print_error("alloc_check after the stress, everything freed: %d: %s\n", r, msg);
		soft_errors++;
	}
	kmem_cache_shrink_all();
	stats(&st);
	SOFT_EQ(st.pages_free, base.pages_free, "pages_free after stress + kmem_cache_shrink_all()");
	SOFT_EQ(st.pages_slab, base.pages_slab, "pages_slab after stress + kmem_cache_shrink_all()");
	SOFT_EQ(st.pages_large_kmalloc, base.pages_large_kmalloc, "pages_large_kmalloc after stress");
	SOFT_EQ(st.pages_alloc, base.pages_alloc, "pages_alloc after stress");
	EXPECT_DESTROY(c->cache, cache_name);
	pthread_mutex_destroy(&c->msg_lock);
	free(th);
	free(c);
	soft_done();
}

void test_stress_pinned(void **state)
{
	(void)state;
	run_stress("stress_pinned", 4, true, 1000000);
}

void test_stress_unpinned(void **state)
{
	(void)state;
	run_stress("stress_unpinned", 6, false, 500000);
}

void test_stress_online(void **state)
{
	(void)state;
	run_stress("stress_online", 4, false, 500000);
}

