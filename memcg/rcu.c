/* SPDX-License-Identifier: MIT */
/*
 * rcu.c - RCU for memcgs and objcgs (liburcu): a reader that found a
 * pointer without taking a reference (the kernel's rcu_read_lock() around
 * obj_cgroup_memcg(), mem_cgroup_from_task(), css_tryget()) keeps the
 * structure alive until its section ends; the last put frees through
 * call_rcu(), after a grace period that waits for every such reader,
 * however long it was preempted.
 *
 * The flavour is urcu-memb: readers pay a compiler barrier (the grace
 * period sends sys_membarrier to the CPUs instead), use no signal (urcu-
 * signal would steal one from the daemon), and owe no quiescent state
 * (urcu-qsbr would need every FUSE worker, which blocks in the kernel
 * waiting for requests, to report one).  Every reading thread must be
 * registered: libfuse creates the workers, so a thread registers on its
 * first section and a thread-specific key's destructor unregisters it at
 * exit; call_rcu's own threads are registered by liburcu.
 *
 * TSan sees neither liburcu's (uninstrumented) ordering nor membarrier:
 * each section's end releases and each callback acquires a common sync
 * address, and call_rcu hands its object over likewise.
 */
#include "internal.h"

#include <pthread.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
#define MEMCG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MEMCG_TSAN 1
#endif
#endif

#ifdef MEMCG_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char tsan_grace;
#define tsan_acquire(a)	__tsan_acquire(a)
#define tsan_release(a)	__tsan_release(a)
#else
#define tsan_acquire(a)	((void)(a))
#define tsan_release(a)	((void)(a))
#endif

__thread bool rcu_registered;
static pthread_key_t rcu_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;
static _Atomic long rcu_pending;	/* callbacks queued and not yet run */

static void rcu_thread_exit(void *arg)
{
	(void)arg;
	urcu_memb_unregister_thread();
}

static void rcu_key_init(void)
{
	pthread_key_create(&rcu_key, rcu_thread_exit);
}

void rcu_register_current(void)
{
	pthread_once(&rcu_once, rcu_key_init);
	urcu_memb_register_thread();
	pthread_setspecific(rcu_key, &rcu_registered);
	rcu_registered = true;
}

void rcu_read_lock(void)
{
	if (unlikely(!rcu_registered))
		rcu_register_current();
	urcu_memb_read_lock();
}

void rcu_read_unlock(void)
{
#ifdef MEMCG_TSAN
	tsan_release(&tsan_grace);
#endif
	urcu_memb_read_unlock();
}

/*
 * A child forked without exec has one thread and no callback thread (it
 * may start none: TSan forbids threads after a multi-threaded fork): its
 * callbacks wait on a list for rcu_barrier(), which runs them outside any
 * read-side section, where the only reader, itself, is quiescent.
 */
static bool rcu_forked_child;
static struct rcu_head *child_callbacks;

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	atomic_fetch_add(&rcu_pending, 1);
	if (unlikely(rcu_forked_child)) {
		head->func = func;
		head->next.next = (struct cds_wfcq_node *)(void *)child_callbacks;
		child_callbacks = head;
		return;
	}
	if (unlikely(!rcu_registered))
		rcu_register_current();
	tsan_release(head);
	urcu_memb_call_rcu(head, func);
}

/*
 * Callbacks run on liburcu's call_rcu thread, registered already: the
 * flag spares it a second registration when a callback reads or frees.
 */
void rcu_callback_enter(struct rcu_head *head)
{
	rcu_registered = true;
	tsan_acquire(head);
#ifdef MEMCG_TSAN
	tsan_acquire(&tsan_grace);
#endif
}

void rcu_callback_leave(void)
{
	atomic_fetch_sub(&rcu_pending, 1);
}

/*
 * Not liburcu's rcu_barrier(): that hands allocations of its own to the
 * callback thread in a way TSan cannot follow (the library is not
 * instrumented).  The count of callbacks queued and not yet run is enough:
 * a callback that queues another counts it before its own count drops.
 */
void rcu_barrier(void)
{
	while (unlikely(rcu_forked_child) && child_callbacks) {
		struct rcu_head *head = child_callbacks;

		child_callbacks = (struct rcu_head *)(void *)head->next.next;
		head->func(head);
	}
	while (atomic_load(&rcu_pending))
		usleep(1000);
}

bool rcu_pending_frees(void)
{
	return atomic_load(&rcu_pending) != 0;
}

void memcg_rcu_read_lock(void)
{
	rcu_read_lock();
}

void memcg_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void memcg_before_fork(void)
{
	urcu_memb_call_rcu_before_fork();
}

void memcg_after_fork(bool child)
{
	if (child)
		rcu_forked_child = true;
	else
		urcu_memb_call_rcu_after_fork_parent();
}
