/* SPDX-License-Identifier: MIT */
/*
 * page_counter.c - hierarchical usage counters with limits and protection,
 * the kernel's mm/page_counter.c.
 *
 * Charges are speculative, as in the kernel: add first, compare after, and
 * undo on failure; a failed try-charge leaves no partial charge anywhere.
 * Watermarks are updated racily ("we can live with some inaccuracy").
 */
#include "internal.h"

#include <errno.h>

static void propagate_protected_usage(struct page_counter *c, unsigned long usage)
{
	unsigned long protected, old_protected;
	long delta;

	if (!c->parent)
		return;
	protected = usage < READ_ONCE(c->min) ? usage : READ_ONCE(c->min);
	old_protected = (unsigned long)atomic_exchange(&c->min_usage, (long)protected);
	delta = (long)protected - (long)old_protected;
	if (delta)
		atomic_fetch_add(&c->parent->children_min_usage, delta);

	protected = usage < READ_ONCE(c->low) ? usage : READ_ONCE(c->low);
	old_protected = (unsigned long)atomic_exchange(&c->low_usage, (long)protected);
	delta = (long)protected - (long)old_protected;
	if (delta)
		atomic_fetch_add(&c->parent->children_low_usage, delta);
}

void page_counter_init(struct page_counter *c, struct page_counter *parent)
{
	memset(c, 0, sizeof(*c));
	c->max = page_counter_max();
	c->high = page_counter_max();
	c->parent = parent;
}

/* page_counter_cancel - take back a charge; an underflow is clamped. */
void page_counter_cancel(struct page_counter *c, unsigned long nr_pages)
{
	long new = atomic_fetch_sub(&c->usage, (long)nr_pages) - (long)nr_pages;

	if (new < 0) {
		memcg_warn_once("page_counter underflow");
		atomic_store(&c->usage, 0);
		new = 0;
	}
	propagate_protected_usage(c, (unsigned long)new);
}

static void update_watermarks(struct page_counter *c, unsigned long new)
{
	if (new > READ_ONCE(c->local_watermark)) {
		WRITE_ONCE(c->local_watermark, new);
		if (new > READ_ONCE(c->watermark))
			WRITE_ONCE(c->watermark, new);
	}
}

/* page_counter_charge - charge without a limit check (forced charges). */
void page_counter_charge(struct page_counter *counter, unsigned long nr_pages)
{
	for (struct page_counter *c = counter; c; c = c->parent) {
		long new = atomic_fetch_add(&c->usage, (long)nr_pages) + (long)nr_pages;

		propagate_protected_usage(c, (unsigned long)new);
		update_watermarks(c, (unsigned long)new);
	}
}

/*
 * page_counter_try_charge - charge nr_pages at every level up to the top,
 * or nowhere: on failure *fail is the first counter that would have gone
 * over its max (its failcnt counted) and every level below is cancelled.
 */
bool page_counter_try_charge(struct page_counter *counter, unsigned long nr_pages,
			     struct page_counter **fail)
{
	struct page_counter *c;

	for (c = counter; c; c = c->parent) {
		/* charge speculatively to avoid an expensive CAS */
		long new = atomic_fetch_add(&c->usage, (long)nr_pages) + (long)nr_pages;

		if ((unsigned long)new > READ_ONCE(c->max)) {
			atomic_fetch_sub(&c->usage, (long)nr_pages);
			atomic_fetch_add(&c->failcnt, 1);
			*fail = c;
			goto failed;
		}
		propagate_protected_usage(c, (unsigned long)new);
		update_watermarks(c, (unsigned long)new);
	}
	return true;

failed:
	for (struct page_counter *u = counter; u != c; u = u->parent)
		page_counter_cancel(u, nr_pages);
	return false;
}

void page_counter_uncharge(struct page_counter *counter, unsigned long nr_pages)
{
	for (struct page_counter *c = counter; c; c = c->parent)
		page_counter_cancel(c, nr_pages);
}

/*
 * page_counter_set_max - the kernel sets max without EBUSY even below usage
 * (memory.max's write then reclaims); the retry loop of the v1 interface is
 * not needed on v2.
 */
void page_counter_set_max(struct page_counter *c, unsigned long nr_pages)
{
	WRITE_ONCE(c->max, nr_pages);
}

void page_counter_set_high(struct page_counter *c, unsigned long nr_pages)
{
	WRITE_ONCE(c->high, nr_pages);
}

void page_counter_set_min(struct page_counter *c, unsigned long nr_pages)
{
	WRITE_ONCE(c->min, nr_pages);
	for (struct page_counter *p = c; p; p = p->parent)
		propagate_protected_usage(p, (unsigned long)atomic_load(&p->usage));
}

void page_counter_set_low(struct page_counter *c, unsigned long nr_pages)
{
	WRITE_ONCE(c->low, nr_pages);
	for (struct page_counter *p = c; p; p = p->parent)
		propagate_protected_usage(p, (unsigned long)atomic_load(&p->usage));
}

void page_counter_reset_watermark(struct page_counter *c)
{
	WRITE_ONCE(c->local_watermark, (unsigned long)atomic_load(&c->usage));
}

/*
 * effective_protection - the kernel's: a child's share of its parent's
 * effective protection, proportional to its own protected usage when the
 * siblings claim more than the parent has (recursive_protection off).
 */
static unsigned long effective_protection(unsigned long usage, unsigned long parent_usage,
					  unsigned long setting, unsigned long parent_effective,
					  unsigned long siblings_protected)
{
	unsigned long protected = usage < setting ? usage : setting;
	unsigned long ep;

	(void)parent_usage;
	if (siblings_protected > parent_effective && siblings_protected)
		return (unsigned long)((unsigned __int128)protected * parent_effective /
				       siblings_protected);
	ep = protected;
	return ep;
}

/*
 * page_counter_calculate_protection - emin/elow of counter under reclaim
 * root 'root' (mm/page_counter.c).  The root itself and empty counters get
 * no protection; direct children of the root their configured values.
 */
void page_counter_calculate_protection(struct page_counter *root,
				       struct page_counter *counter)
{
	struct page_counter *parent = counter->parent;
	unsigned long usage = (unsigned long)atomic_load(&counter->usage);
	unsigned long parent_usage;

	if (root == counter)
		return;
	if (!usage)
		return;
	if (parent == root) {
		WRITE_ONCE(counter->emin, READ_ONCE(counter->min));
		WRITE_ONCE(counter->elow, READ_ONCE(counter->low));
		return;
	}
	parent_usage = (unsigned long)atomic_load(&parent->usage);
	WRITE_ONCE(counter->emin, effective_protection(usage, parent_usage,
			READ_ONCE(counter->min), READ_ONCE(parent->emin),
			(unsigned long)atomic_load(&parent->children_min_usage)));
	WRITE_ONCE(counter->elow, effective_protection(usage, parent_usage,
			READ_ONCE(counter->low), READ_ONCE(parent->elow),
			(unsigned long)atomic_load(&parent->children_low_usage)));
}
