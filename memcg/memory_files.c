/* SPDX-License-Identifier: MIT */
/*
 * memory_files.c - the memory controller's cgroup files: one table, as the
 * kernel's memory_files[] (name, where it exists, show, write), formats and
 * parsing as mm/memcontrol.c has them.
 */
#include "internal.h"
#include "lib.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define F_ROOT		0x1	/* exists on the root */
#define F_CHILD		0x2	/* exists on children */
#define F_NOTIFY	0x4	/* poll and inotify */
#define F_USAGE		0x8	/* shows usage (real memory samples the members first) */

struct memcg_open {
	const struct memcg_file *file;
	struct mem_cgroup *memcg;
	struct memcg_peak_fd peak;	/* memory.peak: this fd's value */
	bool peak_registered;
	bool privileged;		/* the opener may set any PSI window */
	struct psi_trigger *trigger;	/* memory.pressure */
};

struct memcg_file {
	const char *name;
	unsigned int flags;
	int (*show)(struct memcg_open *o, char *buf, size_t len);
	int (*write)(struct memcg_open *o, char *buf, bool nonblock);
	/* a limit file: its value in struct mem_cgroup, and how a write sets it */
	size_t limit;
	void (*set_limit)(struct mem_cgroup *memcg, unsigned long nr_pages);
};

/* ---- parsing (strstrip, kstrtoint0, memparse: lib.h) ---- */
int page_counter_memparse(const char *in, size_t len, const char *max,
			  unsigned long *nr_pages)
{
	char buf[4096 + 1];
	const char *end;
	unsigned long long bytes;
	char *s;

	if (len >= sizeof(buf))
		return -EINVAL;
	/* as kernfs hands it over: a NUL ends the string */
	memcpy(buf, in, len);
	buf[len] = '\0';
	s = strstrip(buf);
	if (!strcmp(s, max)) {
		*nr_pages = page_counter_max();
		return 0;
	}
	bytes = memparse(s, &end);
	if (*end)
		return -EINVAL;
	bytes /= alloc_page_size();
	*nr_pages = bytes < page_counter_max() ? (unsigned long)bytes : page_counter_max();
	return 0;
}



static int show_pages_or_max(char *buf, size_t len, unsigned long pages)
{
	if (pages >= page_counter_max())
		return snprintf(buf, len, "max\n");
	return snprintf(buf, len, "%llu\n", (unsigned long long)pages * alloc_page_size());
}

static int show_u64(char *buf, size_t len, unsigned long long v)
{
	return snprintf(buf, len, "%llu\n", v);
}

/* ---- handlers ---- */
static int current_show(struct memcg_open *o, char *buf, size_t len)
{
	return show_u64(buf, len, (unsigned long long)page_counter_read(&o->memcg->memory) *
			alloc_page_size());
}

static int parse_limit(char *buf, unsigned long *pages)
{
	return page_counter_memparse(buf, strlen(buf), "max", pages);
}

/* memory.min/low/high/max, swap.high/max, zswap.max: bytes or "max" */
static int limit_show(struct memcg_open *o, char *buf, size_t len)
{
	const unsigned long *v = (const unsigned long *)((const char *)o->memcg + o->file->limit);

	return show_pages_or_max(buf, len, READ_ONCE(*v));
}

/* The plain limits: stored, nothing else happens on the write. */
static int limit_write(struct memcg_open *o, char *buf, bool nonblock)
{
	unsigned long v;
	int err = parse_limit(buf, &v);

	(void)nonblock;
	if (!err)
		o->file->set_limit(o->memcg, v);
	return err;
}

static void set_min(struct mem_cgroup *m, unsigned long v) { page_counter_set_min(&m->memory, v); }
static void set_low(struct mem_cgroup *m, unsigned long v) { page_counter_set_low(&m->memory, v); }
static void set_swap_high(struct mem_cgroup *m, unsigned long v) { page_counter_set_high(&m->swap, v); }
static void set_swap_max(struct mem_cgroup *m, unsigned long v) { page_counter_set_max(&m->swap, v); }
static void set_zswap_max(struct mem_cgroup *m, unsigned long v) { WRITE_ONCE(m->zswap_max, v); }

/*
 * memory_high_write(): set, then (unless O_NONBLOCK) drain once and reclaim
 * down to high, giving up after MAX_RECLAIM_RETRIES fruitless attempts.
 * Succeeds even if usage stays above high; raises no event itself.
 */
static int high_write(struct memcg_open *o, char *buf, bool nonblock)
{
	struct mem_cgroup *memcg = o->memcg;
	int nr_retries = MAX_RECLAIM_RETRIES;
	bool drained = false;
	unsigned long high;
	int err = parse_limit(buf, &high);

	if (err)
		return err;
	page_counter_set_high(&memcg->memory, high);
	if (nonblock)
		return 0;
	for (;;) {
		unsigned long nr_pages = page_counter_read(&memcg->memory);

		if (nr_pages <= high)
			break;
		if (!drained) {
			drain_all_stock(memcg);
			drained = true;
			continue;
		}
		if (!try_to_free_mem_cgroup_pages(memcg, nr_pages - high, GFP_KERNEL, false) &&
		    !nr_retries--)
			break;
	}
	return 0;
}

/*
 * memory_max_write(): set (no EBUSY below usage), then (unless O_NONBLOCK)
 * drain once, reclaim with MAX_RECLAIM_RETRIES fruitless tries, then OOM
 * (each round raising 'oom') until usage fits or nothing can be killed.
 */
static int max_write(struct memcg_open *o, char *buf, bool nonblock)
{
	struct mem_cgroup *memcg = o->memcg;
	unsigned long max;
	int err = parse_limit(buf, &max);

	if (err)
		return err;
	page_counter_set_max(&memcg->memory, max);
	if (nonblock)
		return 0;
	mem_cgroup_reclaim_to_max(memcg);
	return 0;
}

void mem_cgroup_reclaim_to_max(struct mem_cgroup *memcg)
{
	int nr_reclaims = MAX_RECLAIM_RETRIES;
	bool drained = false;
	uint64_t round = memcg_oom_new_round();

	for (;;) {
		unsigned long nr_pages = page_counter_read(&memcg->memory);
		unsigned long max = READ_ONCE(memcg->memory.max);

		if (nr_pages <= max)
			break;
		if (!drained) {
			drain_all_stock(memcg);
			drained = true;
			continue;
		}
		if (nr_reclaims) {
			if (!try_to_free_mem_cgroup_pages(memcg, nr_pages - max, GFP_KERNEL, false))
				nr_reclaims--;
			continue;
		}
		memcg_memory_event(memcg, MEMCG_OOM);
		if (!memcg_out_of_memory(memcg, round))
			break;
		drain_all_stock(memcg);
	}
}

#define MAX_SWAPPINESS		200
#define SWAPPINESS_ANON_ONLY	(MAX_SWAPPINESS + 1)	/* swappiness=max */
#define NUMBER_BUF_LEN		24	/* lib/parser.c: match_int() reads fewer characters */

/*
 * A memory.reclaim key as mm/vmscan.c's match_token() on
 * { "swappiness=%d", "swappiness=max" }, then match_int() and the range
 * check: the "%d" is simple_strtol() base 0, which takes a '-' (a lone one
 * too, as 0) but no '+' or space, and must reach the token's end;
 * match_int() reads it again from under NUMBER_BUF_LEN characters
 * (-ERANGE, so EINVAL, beyond) and wants an int; then 0..200.
 */
static int reclaim_key(const char *tok, int *swappiness)
{
	const char *num = tok + 11, *end;
	long v;

	if (strncmp(tok, "swappiness=", 11))
		return -EINVAL;
	v = simple_strtol0(num, &end);
	if (end != num && !*end) {
		if (strlen(num) >= NUMBER_BUF_LEN || v < 0 || v > MAX_SWAPPINESS)
			return -EINVAL;
		*swappiness = (int)v;
		return 0;
	}
	if (strcmp(num, "max"))
		return -EINVAL;
	*swappiness = SWAPPINESS_ANON_ONLY;
	return 0;
}

/*
 * memory_reclaim(), mm/vmscan.c user_proactive_reclaim(): the stripped
 * value's memparse() amount (no "max"), then the rest stripped again (so a
 * tab or newline may separate it from the amount) and split at single
 * spaces, empty pieces skipped; each piece a key (reclaim_key), the last
 * swappiness given wins.
 */
static int reclaim_write(struct memcg_open *o, char *buf, bool nonblock)
{
	struct mem_cgroup *memcg = o->memcg;
	unsigned long nr_to_reclaim, nr_reclaimed = 0;
	int nr_retries = MAX_RECLAIM_RETRIES;
	int swappiness = -1;
	bool anon_only;
	const char *end;
	char *s = strstrip(buf), *tok;

	(void)nonblock;
	nr_to_reclaim = (unsigned long)(memparse(s, &end) / alloc_page_size());
	if (end == s)
		return -EINVAL;
	s = strstrip((char *)end);
	while ((tok = strsep(&s, " ")) != NULL) {
		if (!*tok)
			continue;
		if (reclaim_key(tok, &swappiness))
			return -EINVAL;
	}
	anon_only = swappiness == SWAPPINESS_ANON_ONLY;
	while (nr_reclaimed < nr_to_reclaim) {
		/* converges on zero, but reclaim enforces a minimum */
		unsigned long batch = (nr_to_reclaim - nr_reclaimed) / 4;
		unsigned long got = 0;

		if (signal_pending())
			return -EINTR;

		/* no swap: anon-only reclaim finds nothing (and there are no
		 * per-CPU LRU caches to drain before the last try) */
		if (!anon_only) {
			got = try_to_free_mem_cgroup_pages(memcg, batch, GFP_KERNEL, true);
		}
		if (!got && !nr_retries--)
			return -EAGAIN;
		nr_reclaimed += got;
	}
	return 0;
}

static int pressure_show(struct memcg_open *o, char *buf, size_t len)
{
	return memcg_pressure_format(o->memcg, buf, len);
}

/* A PSI trigger, one per open file (EBUSY for a second). */
static int pressure_write(struct memcg_open *o, char *buf, bool nonblock)
{
	(void)nonblock;
	if (o->trigger)
		return -EBUSY;
	return psi_trigger_parse(o->memcg, strstrip(buf), o->privileged, &o->trigger);
}

/* memory.peak: the watermark, or since this fd's last write (mm/memcontrol.c peak_show) */
static int peak_show(struct memcg_open *o, char *buf, size_t len)
{
	struct mem_cgroup *memcg = o->memcg;
	unsigned long peak;

	pthread_mutex_lock(&memcg->lock);
	if (o->peak_registered) {
		peak = READ_ONCE(memcg->memory.local_watermark);
		if (o->peak.value > peak)
			peak = o->peak.value;
	} else {
		peak = READ_ONCE(memcg->memory.watermark);
	}
	pthread_mutex_unlock(&memcg->lock);
	return show_u64(buf, len, (unsigned long long)peak * alloc_page_size());
}

static int peak_write(struct memcg_open *o, char *buf, bool nonblock)
{
	struct mem_cgroup *memcg = o->memcg;
	unsigned long usage;

	(void)buf;
	(void)nonblock;
	pthread_mutex_lock(&memcg->lock);
	usage = page_counter_read(&memcg->memory);
	WRITE_ONCE(memcg->memory.local_watermark, usage);
	for (struct memcg_peak_fd *p = memcg->peak_fds; p; p = p->next)
		if (p != &o->peak && p->value < usage)
			p->value = usage;
	if (!o->peak_registered) {
		o->peak.next = memcg->peak_fds;
		memcg->peak_fds = &o->peak;
		o->peak_registered = true;
	}
	o->peak.value = usage;
	pthread_mutex_unlock(&memcg->lock);
	return 0;
}

/* A 0-or-1 setting of the memcg (memory.oom.group, memory.zswap.writeback). */
static int show_flag(char *buf, size_t len, int *flag)
{
	return snprintf(buf, len, "%d\n", READ_ONCE(*flag));
}

static int write_flag(char *buf, int *flag)
{
	int v, err = kstrtoint0(strstrip(buf), &v);

	if (err)
		return err;
	if (v != 0 && v != 1)
		return -EINVAL;
	WRITE_ONCE(*flag, v);
	return 0;
}

static int oom_group_show(struct memcg_open *o, char *buf, size_t len)
{
	return show_flag(buf, len, &o->memcg->oom_group);
}

static int oom_group_write(struct memcg_open *o, char *buf, bool nonblock)
{
	(void)nonblock;
	return write_flag(buf, &o->memcg->oom_group);
}

static const char *const event_names[MEMCG_NR_MEMORY_EVENTS] = {
	"low", "high", "max", "oom", "oom_kill", "oom_group_kill", "sock_throttled",
};

static int events_show_arr(_Atomic unsigned long *ev, char *buf, size_t len)
{
	struct seq_buf ob;

	seq_buf_init(&ob, buf, len);
	for (int i = 0; i < MEMCG_NR_MEMORY_EVENTS; i++)
		seq_buf_put_key_u64(&ob, event_names[i], ' ', atomic_load(&ev[i]), '\n');
	return (int)ob.pos;
}

static int events_show(struct memcg_open *o, char *buf, size_t len)
{
	return events_show_arr(o->memcg->events, buf, len);
}

static int events_local_show(struct memcg_open *o, char *buf, size_t len)
{
	return events_show_arr(o->memcg->events_local, buf, len);
}

static int stat_show(struct memcg_open *o, char *buf, size_t len)
{
	return memory_stat_format(o->memcg, buf, len);
}

static int numa_stat_show(struct memcg_open *o, char *buf, size_t len)
{
	return memory_numa_stat_format(o->memcg, buf, len);
}

/* No swap device: swap usage is 0 and swap.max/high are only stored. */
static int swap_current_show(struct memcg_open *o, char *buf, size_t len)
{
	return show_u64(buf, len, (unsigned long long)page_counter_read(&o->memcg->swap) *
			alloc_page_size());
}

static int swap_peak_show(struct memcg_open *o, char *buf, size_t len)
{
	return show_u64(buf, len, (unsigned long long)READ_ONCE(o->memcg->swap.watermark) *
			alloc_page_size());
}

static int swap_peak_write(struct memcg_open *o, char *buf, bool nonblock)
{
	(void)buf;
	(void)nonblock;
	page_counter_reset_watermark(&o->memcg->swap);
	return 0;
}

static int swap_events_show(struct memcg_open *o, char *buf, size_t len)
{
	struct mem_cgroup *m = o->memcg;

	return snprintf(buf, len, "high %lu\nmax %lu\nfail %lu\n",
			atomic_load(&m->swap_events[0]), atomic_load(&m->swap_events[1]),
			atomic_load(&m->swap_events[2]));
}

static int zswap_current_show(struct memcg_open *o, char *buf, size_t len)
{
	long v;

	memcg_stats_flush();
	memcg_stats_lock();
	v = memcg_state_all_nodes(o->memcg, MI_ZSWAP_B);
	memcg_stats_unlock();
	return show_u64(buf, len, (unsigned long long)(v > 0 ? v : 0));
}

static int zswap_writeback_show(struct memcg_open *o, char *buf, size_t len)
{
	return show_flag(buf, len, &o->memcg->zswap_writeback);
}

static int zswap_writeback_write(struct memcg_open *o, char *buf, bool nonblock)
{
	(void)nonblock;
	return write_flag(buf, &o->memcg->zswap_writeback);
}

#define MC_OFF(field)	__builtin_offsetof(struct mem_cgroup, field)

/* mm/memcontrol.c memory_files[] order */
static const struct memcg_file memory_files[] = {
	{ "memory.current", F_CHILD | F_USAGE, current_show, NULL },
	{ "memory.min", F_CHILD, limit_show, limit_write, MC_OFF(memory.min), set_min },
	{ "memory.low", F_CHILD, limit_show, limit_write, MC_OFF(memory.low), set_low },
	{ "memory.high", F_CHILD, limit_show, high_write, MC_OFF(memory.high), NULL },
	{ "memory.max", F_CHILD, limit_show, max_write, MC_OFF(memory.max), NULL },
	{ "memory.peak", F_CHILD | F_USAGE, peak_show, peak_write },
	{ "memory.events", F_CHILD | F_NOTIFY | F_USAGE, events_show, NULL },
	{ "memory.events.local", F_CHILD | F_NOTIFY | F_USAGE, events_local_show, NULL },
	{ "memory.stat", F_ROOT | F_CHILD | F_USAGE, stat_show, NULL },
	{ "memory.numa_stat", F_ROOT | F_CHILD | F_USAGE, numa_stat_show, NULL },
	{ "memory.oom.group", F_CHILD, oom_group_show, oom_group_write },
	{ "memory.swap.current", F_CHILD, swap_current_show, NULL },
	{ "memory.swap.high", F_CHILD, limit_show, limit_write, MC_OFF(swap.high), set_swap_high },
	{ "memory.swap.max", F_CHILD, limit_show, limit_write, MC_OFF(swap.max), set_swap_max },
	{ "memory.swap.peak", F_CHILD, swap_peak_show, swap_peak_write },
	{ "memory.swap.events", F_CHILD | F_NOTIFY, swap_events_show, NULL },
	{ "memory.zswap.current", F_CHILD, zswap_current_show, NULL },
	{ "memory.zswap.max", F_CHILD, limit_show, limit_write, MC_OFF(zswap_max), set_zswap_max },
	{ "memory.zswap.writeback", F_ROOT | F_CHILD, zswap_writeback_show, zswap_writeback_write },
	{ "memory.reclaim", F_ROOT | F_CHILD, NULL, reclaim_write },
	{ "memory.pressure", F_ROOT | F_CHILD | F_USAGE, pressure_show, pressure_write },
};

void memcg_file_set_privileged(struct memcg_open *o, bool privileged)
{
	o->privileged = privileged;
}

bool memcg_file_poll(struct memcg_open *o)
{
	return o->trigger && psi_trigger_poll(o->trigger);
}

bool memcg_file_drop_trigger(struct memcg_open *o)
{
	if (!o->trigger)
		return false;
	psi_trigger_free(o->memcg, o->trigger);
	o->trigger = NULL;
	return true;
}

const struct memcg_file *memcg_file_lookup(const char *name)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(memory_files); i++)
		if (!strcmp(memory_files[i].name, name))
			return &memory_files[i];
	return NULL;
}

const struct memcg_file *memcg_file_at(unsigned int i)
{
	return i < ARRAY_SIZE(memory_files) ? &memory_files[i] : NULL;
}

const char *memcg_file_name(const struct memcg_file *f)
{
	return f->name;
}

unsigned int memcg_file_mode(const struct memcg_file *f)
{
	return (f->show ? 0444u : 0u) | (f->write ? 0200u : 0u);
}

bool memcg_file_on_root(const struct memcg_file *f)
{
	return f->flags & F_ROOT;
}

bool memcg_file_on_child(const struct memcg_file *f)
{
	return f->flags & F_CHILD;
}

bool memcg_file_shows_usage(const struct memcg_file *f)
{
	return f->flags & F_USAGE;
}

bool memcg_file_notifies(const struct memcg_file *f)
{
	return f->flags & F_NOTIFY;
}

int memcg_file_open(const struct memcg_file *f, struct mem_cgroup *memcg,
		    struct memcg_open **out)
{
	struct memcg_open *o;

	if (!f || !memcg)
		return -EINVAL;
	if (mem_cgroup_is_root(memcg) ? !(f->flags & F_ROOT) : !(f->flags & F_CHILD))
		return -ENOENT;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->file = f;
	o->memcg = memcg;
	css_get(memcg);
	*out = o;
	return 0;
}

void memcg_file_release(struct memcg_open *o)
{
	struct mem_cgroup *memcg;

	if (!o)
		return;
	memcg = o->memcg;
	if (o->trigger)
		psi_trigger_free(memcg, o->trigger);
	if (o->peak_registered) {
		pthread_mutex_lock(&memcg->lock);
		for (struct memcg_peak_fd **pp = &memcg->peak_fds; *pp; pp = &(*pp)->next) {
			if (*pp == &o->peak) {
				*pp = o->peak.next;
				break;
			}
		}
		pthread_mutex_unlock(&memcg->lock);
	}
	free(o);
	mem_cgroup_put(memcg);
}

long memcg_file_read(struct memcg_open *o, char *buf, size_t len)
{
	if (!o->file->show)
		return -EINVAL;
	return o->file->show(o, buf, len);
}

/*
 * memcg_file_write - the kernel's kernfs write: at most a page (E2BIG),
 * NUL-terminated, handed to the file's handler in one piece.  An empty
 * write does nothing.
 */
int memcg_file_write(struct memcg_open *o, const char *buf, size_t len, bool nonblock)
{
	char tmp[4096 + 1];

	if (!len)
		return 0;	/* the handler is not even called */
	if (!o->file->write)
		return -EINVAL;
	if (len > alloc_page_size() || len >= sizeof(tmp))
		return -E2BIG;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	return o->file->write(o, tmp, nonblock);
}
