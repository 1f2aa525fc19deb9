/* SPDX-License-Identifier: MIT */
/*
 * <memcgfs/ctl.h> - the batched ioctl of memcgfs.ctl (public, installed for
 * clients; self-contained: needs only <stdint.h> and <sys/ioctl.h>).
 *
 * The text protocol (one request per write(2), one reply per read(2)) is
 * described in memcgfs's docs/design.md.  This is the same set of operations in
 * batches, through one FUSE "restricted" ioctl on an open memcgfs.ctl:
 *
 *	int fd = open("/mnt/cg/memcgfs.ctl", O_RDWR);
 *	struct memcgfs_ctl_batch_max b = { 0 };
 *	b.hdr.version = MEMCGFS_CTL_VERSION;
 *	b.hdr.nr_ops = 2;
 *	b.u.ops[0].op = MEMCGFS_OP_KMALLOC;	// kmalloc 64 GFP_KERNEL_ACCOUNT
 *	b.u.ops[0].size = 64;
 *	b.u.ops[0].flags = MEMCGFS_GFP_KERNEL_ACCOUNT;
 *	b.u.ops[0].count = 1;
 *	b.u.ops[0].slot = MEMCGFS_CTL_FIRST_SLOT(2);	// its handle goes there
 *	b.u.ops[1].op = MEMCGFS_OP_DRAIN;
 *	if (ioctl(fd, MEMCGFS_IOC_BATCH_MAX, &b) < 0) ...	// malformed batch
 *	if (b.u.ops[0].error) ...				// -errno of that op
 *	uint64_t handle = b.u.slots[MEMCGFS_CTL_FIRST_SLOT(2)];
 *
 * The kernel copies exactly _IOC_SIZE(cmd) bytes each way and follows no
 * pointer, so a batch is one flat buffer: a 16-byte header, then an area of
 * 8-byte words.  The operations (32 bytes, 4 words each) come first in the
 * area; the words after them are "slots" that operations use for their
 * handles (in or out), cache names and other results.  Slot k is the k-th
 * 8-byte word of the area, counting from the area's start (so with n
 * operations the first free slot is 4 * n: MEMCGFS_CTL_FIRST_SLOT(n)).
 * A batch may be smaller than the maximum: MEMCGFS_IOC_BATCH(bytes) encodes
 * any size from MEMCGFS_CTL_MIN_SIZE to MEMCGFS_CTL_MAX_SIZE that is a
 * multiple of 8; only those bytes are copied.
 *
 * Semantics:
 *  - The ioctl fails as a whole (-1 with errno) only for a malformed batch:
 *    ENOTTY for a command that is not memcgfs's; EINVAL for a bad size,
 *    direction, version, flags, nr_ops (0, or operations past the size).
 *    Otherwise it returns 0 and every operation has its own result in
 *    'error' (0 or a negative errno, as the text protocol's write would
 *    fail), hdr.nr_done / hdr.nr_failed count them.
 *  - Operations run in order.  One that fails does not undo the others.
 *  - Inputs are read from the batch as the client sent it; results are
 *    written into the returned copy.  So an operation cannot name a handle
 *    that an earlier operation of the same batch returned (the client
 *    cannot know it when it builds the batch anyway): free it in the next
 *    batch.  Output slots of different operations should not overlap (the
 *    later result wins).
 *  - An operation whose slot range or name is outside the area, or overlaps
 *    the operations, fails with -EINVAL (the others still run).
 *  - Handles are the same 64-bit tokens the text protocol prints in hex:
 *    opaque, valid for any session of the same daemon, stale once freed.
 *    0 is the NULL handle (kfree of it is a no-op, as the kernel's).
 *  - Each multi-handle free is checked whole first, as in the text
 *    protocol: if any handle is bad, none is freed.  An allocation with
 *    count N (1..1024) is all or nothing.
 *
 * Per operation (fields an operation does not use are ignored: set them to
 * 0, a later version may give them a meaning):
 *  KMALLOC		size, flags = gfp (0 = GFP_KERNEL), count (0 = 1); the
 *			handles are written to slots [slot, slot+count).
 *  KFREE		count handles read from slots [slot, slot+count).
 *  KMEM_CACHE_CREATE	name (slot of a NUL-terminated name, at most
 *			MEMCGFS_CTL_NAME_MAX bytes with the NUL), size, align
 *			(0 = minimum), flags (MEMCGFS_SLAB_*).  If count >= 2,
 *			a struct memcgfs_ctl_cache_info is written at slot.
 *  KMEM_CACHE_ALLOC	name, flags = gfp (0 = GFP_KERNEL), count, slot as KMALLOC.
 *  KMEM_CACHE_FREE	name, count handles from slot.
 *  KMEM_CACHE_DESTROY	name.
 *  ALLOC_PAGES		type (MEMCGFS_PAGE_*), order (0..10), count, slot.
 *  FREE_PAGES		count handles from slot.
 *  MARK_PAGE_ACCESSED	count page handles from slot: each page referenced
 *			again (the second reference activates an LRU page).
 *  DRAIN		nothing.
 *  WHOAMI		count >= 1 slots at slot: a struct memcgfs_ctl_whoami in
 *			the first, then the cgroup path NUL-terminated in the
 *			remaining count - 1 slots (-ERANGE if it does not fit).
 *  Any op may set MEMCGFS_OPF_SITE in opflags and 'site' to the slot of a
 *  NUL-terminated call-site name (at most MEMCGFS_CTL_SITE_MAX bytes with
 *  the NUL, printable ASCII without spaces): the trace's call_site=.
 */
#ifndef MEMCGFS_CTL_H
#define MEMCGFS_CTL_H

#include <stdint.h>
#include <sys/ioctl.h>

#define MEMCGFS_CTL_VERSION	1u

/* Operation codes (0 is invalid, so that a zeroed operation fails). */
#define MEMCGFS_OP_KMALLOC		1
#define MEMCGFS_OP_KFREE		2
#define MEMCGFS_OP_KMEM_CACHE_CREATE	3
#define MEMCGFS_OP_KMEM_CACHE_ALLOC	4
#define MEMCGFS_OP_KMEM_CACHE_FREE	5
#define MEMCGFS_OP_KMEM_CACHE_DESTROY	6
#define MEMCGFS_OP_ALLOC_PAGES		7
#define MEMCGFS_OP_FREE_PAGES		8
#define MEMCGFS_OP_DRAIN		9
#define MEMCGFS_OP_WHOAMI		10
#define MEMCGFS_OP_MARK_PAGE_ACCESSED	11

/* The text protocol's word for operation @op ("kmalloc", ...); 0 (NULL) for no operation. */
static inline const char *memcgfs_op_name(unsigned int op)
{
	static const char *const names[] = {
		[MEMCGFS_OP_KMALLOC] = "kmalloc",
		[MEMCGFS_OP_KFREE] = "kfree",
		[MEMCGFS_OP_KMEM_CACHE_CREATE] = "kmem_cache_create",
		[MEMCGFS_OP_KMEM_CACHE_ALLOC] = "kmem_cache_alloc",
		[MEMCGFS_OP_KMEM_CACHE_FREE] = "kmem_cache_free",
		[MEMCGFS_OP_KMEM_CACHE_DESTROY] = "kmem_cache_destroy",
		[MEMCGFS_OP_ALLOC_PAGES] = "alloc_pages",
		[MEMCGFS_OP_FREE_PAGES] = "free_pages",
		[MEMCGFS_OP_DRAIN] = "drain",
		[MEMCGFS_OP_WHOAMI] = "whoami",
		[MEMCGFS_OP_MARK_PAGE_ACCESSED] = "mark_page_accessed",
	};

	return op >= MEMCGFS_OP_KMALLOC && op <= MEMCGFS_OP_MARK_PAGE_ACCESSED ? names[op] : 0;
}

/* opflags */
#define MEMCGFS_OPF_SITE		0x01u	/* 'site' names a call-site slot */

/* Page types of ALLOC_PAGES. */
#define MEMCGFS_PAGE_ANON		0
#define MEMCGFS_PAGE_FILE		1
#define MEMCGFS_PAGE_SHMEM		2
#define MEMCGFS_PAGE_KERNEL_STACK	3
#define MEMCGFS_PAGE_PAGETABLES		4
#define MEMCGFS_PAGE_PERCPU		5
#define MEMCGFS_PAGE_SOCK		6
#define MEMCGFS_PAGE_VMALLOC		7

/* gfp bits: the kernel's values (include/linux/gfp_types.h). */
#define MEMCGFS_GFP_RECLAIMABLE		0x10u
#define MEMCGFS_GFP_IO			0x40u
#define MEMCGFS_GFP_FS			0x80u
#define MEMCGFS_GFP_ZERO		0x100u
#define MEMCGFS_GFP_DIRECT_RECLAIM	0x400u
#define MEMCGFS_GFP_KSWAPD_RECLAIM	0x800u
#define MEMCGFS_GFP_NOWARN		0x2000u
#define MEMCGFS_GFP_NOFAIL		0x8000u
#define MEMCGFS_GFP_NORETRY		0x10000u
#define MEMCGFS_GFP_ACCOUNT		0x400000u
#define MEMCGFS_GFP_KERNEL		(MEMCGFS_GFP_DIRECT_RECLAIM | MEMCGFS_GFP_KSWAPD_RECLAIM | \
					 MEMCGFS_GFP_IO | MEMCGFS_GFP_FS)
#define MEMCGFS_GFP_KERNEL_ACCOUNT	(MEMCGFS_GFP_KERNEL | MEMCGFS_GFP_ACCOUNT)
/* Every bit the daemon accepts (the kernel's named bits up to __GFP_ZEROTAGS). */
#define MEMCGFS_GFP_VALID		0xfffdffu

/* kmem_cache_create flags: the kernel's values. */
#define MEMCGFS_SLAB_HWCACHE_ALIGN	0x00002000u
#define MEMCGFS_SLAB_RECLAIM_ACCOUNT	0x00020000u
#define MEMCGFS_SLAB_PANIC		0x00040000u
#define MEMCGFS_SLAB_NO_MERGE		0x01000000u
#define MEMCGFS_SLAB_ACCOUNT		0x04000000u

#define MEMCGFS_CTL_MAX_COUNT	1024	/* handles per operation */
#define MEMCGFS_CTL_NAME_MAX	64	/* cache name, NUL included */
#define MEMCGFS_CTL_SITE_MAX	40	/* call-site name, NUL included */

struct memcgfs_ctl_hdr {
	uint32_t version;	/* in: MEMCGFS_CTL_VERSION */
	uint32_t flags;		/* in: 0 */
	uint16_t nr_ops;	/* in: operations at the start of the area, >= 1 */
	uint16_t nr_done;	/* out: operations that succeeded */
	uint16_t nr_failed;	/* out: operations that failed */
	uint16_t reserved;	/* 0 */
};

struct memcgfs_ctl_op {
	uint8_t op;		/* in: MEMCGFS_OP_* */
	uint8_t opflags;	/* in: MEMCGFS_OPF_* */
	uint8_t type;		/* in: ALLOC_PAGES: MEMCGFS_PAGE_* */
	uint8_t order;		/* in: ALLOC_PAGES: 0..10 */
	uint16_t count;		/* in: allocations (0 = 1) or handles, <= 1024 */
	uint16_t slot;		/* in: first slot of the handles / results */
	uint16_t name;		/* in: slot of the cache name */
	uint16_t site;		/* in: slot of the call-site name (MEMCGFS_OPF_SITE) */
	int32_t error;		/* out: 0 or -errno */
	uint32_t flags;		/* in: KMALLOC, KMEM_CACHE_ALLOC: gfp bits (MEMCGFS_GFP_*),
				 * 0 = GFP_KERNEL; KMEM_CACHE_CREATE: MEMCGFS_SLAB_* */
	uint32_t align;		/* in: KMEM_CACHE_CREATE: 0 or a power of two */
	uint64_t size;		/* in: KMALLOC, KMEM_CACHE_CREATE: bytes */
};

/* KMEM_CACHE_CREATE's result (2 slots), as the text reply's fields. */
struct memcgfs_ctl_cache_info {
	uint32_t objsize;	/* the requested object size */
	uint32_t size;		/* the stride */
	uint32_t objperslab;
	uint32_t pagesperslab;
};

/* WHOAMI's first slot. */
struct memcgfs_ctl_whoami {
	int32_t pid;		/* thread group id of the caller */
	int32_t cpu;		/* the CPU slot serving the request */
};

#define MEMCGFS_IOC_MAGIC	'M'
#define MEMCGFS_IOC_NR_BATCH	1
/* The largest size _IOC_SIZE can carry (16383) rounded down to 8 bytes. */
#define MEMCGFS_CTL_MAX_SIZE	16376u
#define MEMCGFS_CTL_MIN_SIZE	(sizeof(struct memcgfs_ctl_hdr) + sizeof(struct memcgfs_ctl_op))
#define MEMCGFS_CTL_MAX_WORDS	((MEMCGFS_CTL_MAX_SIZE - sizeof(struct memcgfs_ctl_hdr)) / 8)
/* Words an operation takes in the area, and the first slot after n operations. */
#define MEMCGFS_CTL_OP_WORDS	(sizeof(struct memcgfs_ctl_op) / 8)
#define MEMCGFS_CTL_FIRST_SLOT(n)	((n) * MEMCGFS_CTL_OP_WORDS)
/* Bytes of a batch of n operations and s slots. */
#define MEMCGFS_CTL_BATCH_SIZE(n, s)	(sizeof(struct memcgfs_ctl_hdr) + \
					 ((n) * MEMCGFS_CTL_OP_WORDS + (s)) * 8)

/* The command for a batch of 'bytes' bytes (a multiple of 8, <= MAX_SIZE). */
#define MEMCGFS_IOC_BATCH(bytes) \
	_IOC(_IOC_READ | _IOC_WRITE, MEMCGFS_IOC_MAGIC, MEMCGFS_IOC_NR_BATCH, (bytes))

/* The largest batch: at most 409 operations of one slot each. */
struct memcgfs_ctl_batch_max {
	struct memcgfs_ctl_hdr hdr;
	union {
		struct memcgfs_ctl_op ops[MEMCGFS_CTL_MAX_WORDS / MEMCGFS_CTL_OP_WORDS];
		uint64_t slots[MEMCGFS_CTL_MAX_WORDS];
		char bytes[MEMCGFS_CTL_MAX_WORDS * 8];
	} u;
};
#define MEMCGFS_IOC_BATCH_MAX	_IOWR(MEMCGFS_IOC_MAGIC, MEMCGFS_IOC_NR_BATCH, \
				      struct memcgfs_ctl_batch_max)

/* A batch of one operation and up to 4 slots (handles, or a short name). */
struct memcgfs_ctl_batch_one {
	struct memcgfs_ctl_hdr hdr;
	union {
		struct memcgfs_ctl_op ops[1];
		uint64_t slots[MEMCGFS_CTL_OP_WORDS + 4];
		char bytes[(MEMCGFS_CTL_OP_WORDS + 4) * 8];
	} u;
};
#define MEMCGFS_IOC_BATCH_ONE	_IOWR(MEMCGFS_IOC_MAGIC, MEMCGFS_IOC_NR_BATCH, \
				      struct memcgfs_ctl_batch_one)

#ifdef __cplusplus
#define MEMCGFS_CTL_STATIC_ASSERT static_assert
#else
#define MEMCGFS_CTL_STATIC_ASSERT _Static_assert
#endif
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_hdr) == 16, "memcgfs_ctl_hdr is 16 bytes");
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_op) == 32, "memcgfs_ctl_op is 32 bytes");
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_cache_info) == 16, "cache_info is 2 slots");
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_whoami) == 8, "whoami is 1 slot");
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_batch_max) == MEMCGFS_CTL_MAX_SIZE,
	       "the maximal batch is MEMCGFS_CTL_MAX_SIZE bytes");
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_batch_max) <= 16383,
	       "FUSE restricted ioctls carry at most 16383 bytes (_IOC_SIZE)");
MEMCGFS_CTL_STATIC_ASSERT(sizeof(struct memcgfs_ctl_batch_one) == MEMCGFS_CTL_BATCH_SIZE(1, 4),
	       "batch_one layout");

#endif /* MEMCGFS_CTL_H */
