/* SPDX-License-Identifier: MIT */
/*
 * percpu_ref.c - the kernel's percpu_ref (lib/percpu-refcount.c), the
 * reference count of an obj_cgroup: while the count is live a get or put
 * is one add to this CPU's counter (a restartable sequence, internal.h),
 * and the shared count carries a bias so that it never reads zero; killed,
 * the ref is switched to atomic mode: after an RCU grace period, when no
 * get or put that saw the per-CPU mode is still running, the per-CPU
 * counters are summed into the shared count and the bias taken off, and
 * from then on the count is exact and its last put releases.
 *
 * The switch's own reference (taken at the kill, dropped in the callback)
 * keeps the ref from being released before the sum is in.
 */
#include "internal.h"

void percpu_ref_init(struct percpu_ref *ref, long *pcpu,
		     void (*release)(struct percpu_ref *ref))
{
	atomic_init(&ref->count, PERCPU_COUNT_BIAS + 1);
	atomic_init(&ref->mode, 0);
	ref->release = release;
	ref->pcpu = pcpu;
	memset(pcpu, 0, percpu_ref_pcpu_size());
}

size_t percpu_ref_pcpu_size(void)
{
	return alloc_nr_cpus() * sizeof(long);
}

void __percpu_ref_put_atomic(struct percpu_ref *ref, long n)
{
	if (atomic_fetch_sub_explicit(&ref->count, n, memory_order_acq_rel) == n)
		ref->release(ref);
}

bool __percpu_ref_tryget_atomic(struct percpu_ref *ref)
{
	long v = atomic_load_explicit(&ref->count, memory_order_relaxed);

	while (v > 0)
		if (atomic_compare_exchange_weak(&ref->count, &v, v + 1))
			return true;
	return false;
}

/* percpu_ref_switch_to_atomic_rcu(): every per-CPU get and put is in. */
static void percpu_ref_switch_rcu(struct rcu_head *head)
{
	struct percpu_ref *ref = caa_container_of(head, struct percpu_ref, rcu);
	unsigned long sum = 0;

	rcu_callback_enter(head);
	for (unsigned int cpu = 0; cpu < alloc_nr_cpus(); cpu++)
		sum += (unsigned long)READ_ONCE(ref->pcpu[cpu]);
	atomic_fetch_add(&ref->count, (long)(sum - PERCPU_COUNT_BIAS));
	/* the switch's reference */
	__percpu_ref_put_atomic(ref, 1);
	rcu_callback_leave();
}

void percpu_ref_kill(struct percpu_ref *ref)
{
	unsigned int old = atomic_exchange(&ref->mode, PERCPU_REF_DEAD);

	if (old) {
		memcg_warn_once("percpu_ref killed twice");
		return;
	}
	atomic_fetch_add(&ref->count, 1);	/* the switch's reference */
	call_rcu(&ref->rcu, percpu_ref_switch_rcu);
	/* the initial reference: the count still carries the bias */
	__percpu_ref_put_atomic(ref, 1);
}

bool percpu_ref_is_dying(const struct percpu_ref *ref)
{
	return atomic_load(&ref->mode) != 0;
}

long percpu_ref_read(const struct percpu_ref *ref)
{
	unsigned long sum = 0;
	long v = atomic_load(&ref->count);

	if (atomic_load(&ref->mode))
		return v;	/* exact once the switch is in; biased until then */
	for (unsigned int cpu = 0; cpu < alloc_nr_cpus(); cpu++)
		sum += (unsigned long)READ_ONCE(ref->pcpu[cpu]);
	return (long)((unsigned long)v + sum - PERCPU_COUNT_BIAS);
}
