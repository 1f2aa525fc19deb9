/* SPDX-License-Identifier: MIT */
/*
 * libmemcgfs.h - the memcgfs client library (public, installed; link with
 * pkg-config's "memcgfs": -lmemcgfs, shared or static).
 *
 * memcgfs is a FUSE filesystem that behaves like the Linux cgroup v2
 * memory controller.  Its root has a control file, memcgfs.ctl, through
 * which a process asks for kernel-style allocations (kmalloc,
 * kmem_cache_alloc, pages of a type) that memcgfs charges to the cgroup of
 * that process.  This library speaks both of its front ends:
 *
 *  - single operations through the text protocol (one request per
 *    write(2), its reply read back from the same fd): memcgfs_kmalloc(),
 *    memcgfs_kfree(), ... and memcgfs_exec() for any operation;
 *  - any number of operations through the batched ioctl
 *    (<memcgfs/ctl.h>), cut transparently into batches under 16 KiB:
 *    memcgfs_batch().
 *
 *	struct memcgfs *m;
 *	uint64_t h[10];
 *	int err = memcgfs_open(NULL, &m);	// $MEMCGFS_MOUNT or the mount table
 *	if (err)
 *		return err;
 *	err = memcgfs_kmalloc(m, 1000, MEMCGFS_GFP_KERNEL_ACCOUNT, 10, h);
 *	if (!err)
 *		err = memcgfs_kfree(m, h, 10);
 *	memcgfs_close(m);
 *
 * Conventions:
 *  - Every command returns 0 or a negative errno: the errno memcgfs gives
 *    (its write or ioctl failing), e.g. -ENOMEM at memory.max, -EINVAL for
 *    a stale or malformed handle, -EPERM for another user's, -EBUSY for a
 *    cache that still has objects; or the errno of a system call that
 *    failed on the way.  errno itself is left as the system calls set it.
 *  - The charged task is the calling process: memcgfs looks at which
 *    process wrote the request, so every thread of a process charges the
 *    same cgroup (the process's).  Move the process with its cgroup's
 *    cgroup.procs.
 *  - A handle (struct memcgfs *) is one session of memcgfs.ctl: an open
 *    file description.  It is thread-safe: a mutex serialises the
 *    requests of its threads.  After fork() the child shares the open file
 *    description with its parent: it must open its own handle before it
 *    uses the library.  The library has no global state.
 *  - Object and page handles (uint64_t) are memcgfs's opaque 64-bit
 *    tokens, valid in any session of the same daemon, stale once freed.
 *    0 is NULL: memcgfs_kfree() accepts it (a no-op, as the kernel's).
 *    anon, kernel_stack and pagetables pages belong to the process that
 *    allocated them: memcgfs frees them when it exits or is OOM-killed.
 *  - gfp 0 means GFP_KERNEL (not accounted), as in <memcgfs/ctl.h>; pass
 *    MEMCGFS_GFP_KERNEL_ACCOUNT to charge the caller's cgroup.
 *
 * Text requests from all the processes that write to one memcgfs.ctl are
 * serialised by the kernel (one inode); ioctl batches are not, so heavy
 * concurrent clients should prefer memcgfs_batch().
 */
#ifndef LIBMEMCGFS_H
#define LIBMEMCGFS_H

#include <memcgfs/ctl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMCGFS_PATH_MAX	4096	/* a mount or cgroup path, NUL included */
#define MEMCGFS_HANDLE_HEX	16	/* hex digits of a handle as text */
#define MEMCGFS_REQUEST_MAX	4096	/* bytes of a text request, newline included */

struct memcgfs;

/* WHOAMI's result: who memcgfs takes the caller for. */
struct memcgfs_whoami {
	pid_t pid;				/* the caller's thread group */
	int cpu;				/* the CPU slot that served it */
	char cgroup[MEMCGFS_PATH_MAX];		/* its cgroup, "/" or "/a/b" */
};

/*
 * struct memcgfs_op - one operation, for memcgfs_exec() and memcgfs_batch().
 * Zero it, then set what the operation uses (the others are ignored):
 *
 *  MEMCGFS_OP_KMALLOC		size, flags (gfp), count, handles (out), site
 *  MEMCGFS_OP_KFREE		count, handles (in)
 *  MEMCGFS_OP_KMEM_CACHE_CREATE	name, size, align, flags (MEMCGFS_SLAB_*), info (out)
 *  MEMCGFS_OP_KMEM_CACHE_ALLOC	name, flags (gfp), count, handles (out), site
 *  MEMCGFS_OP_KMEM_CACHE_FREE	name, count, handles (in)
 *  MEMCGFS_OP_KMEM_CACHE_DESTROY	name
 *  MEMCGFS_OP_ALLOC_PAGES	type (MEMCGFS_PAGE_*), order, count, handles (out)
 *  MEMCGFS_OP_FREE_PAGES	count, handles (in)
 *  MEMCGFS_OP_MARK_PAGE_ACCESSED	count, handles (in)
 *  MEMCGFS_OP_DRAIN		nothing
 *  MEMCGFS_OP_WHOAMI		whoami (out)
 *
 * Allocations are all or nothing (count 1..MEMCGFS_CTL_MAX_COUNT; 0 means
 * 1).  A free of several handles is checked whole first: if any is bad,
 * none is freed.  Any operation may carry a call-site name (site, 1..39
 * printable characters, no space): trace_pipe's call_site=.
 */
struct memcgfs_op {
	unsigned int op;		/* MEMCGFS_OP_* */
	unsigned int flags;		/* gfp bits (0 = GFP_KERNEL) or MEMCGFS_SLAB_* */
	unsigned int count;		/* allocations (0 = 1) or handles to free */
	unsigned int type;		/* ALLOC_PAGES: MEMCGFS_PAGE_* */
	unsigned int order;		/* ALLOC_PAGES: 0..10 */
	unsigned int align;		/* KMEM_CACHE_CREATE: 0 (minimum) or a power of two */
	uint64_t size;			/* KMALLOC, KMEM_CACHE_CREATE: bytes */
	const char *name;		/* KMEM_CACHE_*: the cache, 1..63 characters */
	const char *site;		/* NULL, or the call-site name */
	uint64_t *handles;		/* count handles: written by allocations, read by frees */
	struct memcgfs_ctl_cache_info *info;	/* KMEM_CACHE_CREATE: NULL or the geometry */
	struct memcgfs_whoami *whoami;		/* WHOAMI: the result */
	int error;			/* out: 0 or -errno */
};

/* ---- opening a mount ---- */

/**
 * memcgfs_find_mount - resolve which memcgfs mount to use.
 * @hint: a mount point (or any directory on a memcgfs mount: its mount is
 *	found in the mount table), or NULL.
 * @buf: the mount point, NUL-terminated.
 * @len: size of @buf.
 *
 * Without @hint: $MEMCGFS_MOUNT if set and not empty, else the first
 * "fuse.memcgfs" entry of /proc/self/mounts (set $MEMCGFS_MOUNT or pass
 * @hint to choose between several).
 *
 * Returns 0, -ENODEV when no memcgfs mount is found, -ENOENT when the
 * mount point has no memcgfs.ctl (not memcgfs), -ENAMETOOLONG, or the
 * errno of a failed stat.
 */
int memcgfs_find_mount(const char *hint, char *buf, size_t len);

/**
 * memcgfs_open - open a session on memcgfs.ctl.
 * @mount: as memcgfs_find_mount()'s @hint (NULL: $MEMCGFS_MOUNT, then the
 *	mount table).
 * @out: the new handle, for memcgfs_close().
 *
 * Returns 0, memcgfs_find_mount()'s errors, -ENOMEM, or open(2)'s errno
 * (-EACCES when memcgfs.ctl's mode refuses the caller).
 */
int memcgfs_open(const char *mount, struct memcgfs **out);

/**
 * memcgfs_close - end the session and free the handle (NULL: nothing).
 * Objects and pages allocated through it stay allocated.
 */
void memcgfs_close(struct memcgfs *m);

/** memcgfs_mount_point - the handle's mount point, e.g. "/run/memcgfs". */
const char *memcgfs_mount_point(const struct memcgfs *m);

/* ---- single operations (the text protocol) ---- */

/**
 * memcgfs_kmalloc - kmalloc(@size, @gfp), @count times.
 * @handles: receives @count handles.
 *
 * Returns 0, -EINVAL (size 0 or above KMALLOC_MAX_SIZE, unknown gfp bits,
 * @count above MEMCGFS_CTL_MAX_COUNT), -ENOMEM (the cgroup's memory.max,
 * after reclaim and OOM, or the machine's memory: nothing allocated).
 */
int memcgfs_kmalloc(struct memcgfs *m, uint64_t size, unsigned int gfp, unsigned int count,
		    uint64_t *handles);

/**
 * memcgfs_kfree - kfree() each of @count handles (objects of kmalloc or of
 * kmem_cache_alloc; 0 is NULL).  Checked whole first: a bad handle frees
 * nothing.  Returns 0, -EINVAL (stale, malformed, a page handle), -EPERM
 * (another user's object).
 */
int memcgfs_kfree(struct memcgfs *m, const uint64_t *handles, unsigned int count);

/**
 * memcgfs_kmem_cache_create - a new cache of @size-byte objects.
 * @align: 0 or a power of two.
 * @flags: MEMCGFS_SLAB_* (SLAB_ACCOUNT charges every object).
 * @info: NULL or the geometry memcgfs chose (objsize, stride, ...).
 *
 * Returns 0, -EEXIST (the name is taken), -EINVAL, -ENOMEM.
 */
int memcgfs_kmem_cache_create(struct memcgfs *m, const char *name, uint64_t size,
			      unsigned int align, unsigned int flags,
			      struct memcgfs_ctl_cache_info *info);

/**
 * memcgfs_kmem_cache_alloc - kmem_cache_alloc(@name, @gfp), @count times
 * (a cache made through memcgfs.ctl or a kmalloc cache, "kmalloc-64").
 * Returns 0, -ENOENT (no such cache), -EPERM (an internal cache), -ENOMEM.
 */
int memcgfs_kmem_cache_alloc(struct memcgfs *m, const char *name, unsigned int gfp,
			     unsigned int count, uint64_t *handles);

/**
 * memcgfs_kmem_cache_free - kmem_cache_free(@name, ...) of @count handles.
 * Returns 0, -EINVAL (a handle of another cache, stale...), -ENOENT, -EPERM.
 */
int memcgfs_kmem_cache_free(struct memcgfs *m, const char *name, const uint64_t *handles,
			    unsigned int count);

/**
 * memcgfs_kmem_cache_destroy - destroy a cache this user created.
 * Returns 0, -EBUSY (objects remain), -ENOENT, -EPERM (not its creator).
 */
int memcgfs_kmem_cache_destroy(struct memcgfs *m, const char *name);

/**
 * memcgfs_alloc_pages - @count allocations of 2^@order pages of @type
 * (MEMCGFS_PAGE_ANON, ...: charged as that memory.stat item).
 * Returns 0, -EINVAL, -ENOMEM.
 */
int memcgfs_alloc_pages(struct memcgfs *m, unsigned int type, unsigned int order,
			unsigned int count, uint64_t *handles);

/** memcgfs_free_pages - free @count page handles.  Errors as memcgfs_kfree(). */
int memcgfs_free_pages(struct memcgfs *m, const uint64_t *handles, unsigned int count);

/**
 * memcgfs_mark_page_accessed - reference @count pages again (the kernel's
 * folio_mark_accessed): the second reference moves an inactive file or
 * anon page to its active list.  Errors as memcgfs_free_pages(); nothing
 * is done unless every handle is valid.
 */
int memcgfs_mark_page_accessed(struct memcgfs *m, const uint64_t *handles, unsigned int count);

/**
 * memcgfs_drain - drain every per-CPU stock, so that memory.current and
 * memory.stat are exact.  Returns 0.
 */
int memcgfs_drain(struct memcgfs *m);

/** memcgfs_whoami - the caller's pid, cgroup and CPU slot, as memcgfs sees them. */
int memcgfs_whoami(struct memcgfs *m, struct memcgfs_whoami *w);

/**
 * memcgfs_exec - run one operation, result in @op->error too.
 * @detail: NULL, or receives memcgfs's explanation of a failure (the text
 *	reply after "error ERRNAME "), "" when there is none.
 * @len: size of @detail.
 *
 * The operation goes as one text request; one that the text protocol
 * cannot carry (a free of more handles than fit in MEMCGFS_REQUEST_MAX
 * bytes, a site on an operation whose request has no site=) goes as a
 * batch of one operation, with the same semantics.  Returns @op->error.
 */
int memcgfs_exec(struct memcgfs *m, struct memcgfs_op *op, char *detail, size_t len);

/**
 * memcgfs_request - one raw text request (no newline needed).
 * @reply: receives the reply without its newline ("ok ..." or "error
 *	ERRNAME detail"), truncated to @len - 1 bytes.
 *
 * Returns 0, or the errno the request failed with (the reply says why).
 */
int memcgfs_request(struct memcgfs *m, const char *request, char *reply, size_t len);

/* ---- batches (the ioctl) ---- */

/**
 * memcgfs_batch - run @n operations in order through the batched ioctl.
 *
 * They are packed into as few batches under 16 KiB as they fit; each
 * operation gets its own result in ->error and one that fails does not
 * undo the others.  As in <memcgfs/ctl.h>, an operation must not free a
 * handle that an earlier operation of the same call allocates: free it in
 * a later call.  An operation that is invalid before it is sent (count
 * above MEMCGFS_CTL_MAX_COUNT, a bad name or site, an unknown op) gets
 * -EINVAL and is not sent.  If an ioctl fails as a whole, its operations
 * get its errno and the later ones -ECANCELED (none of them ran).
 *
 * Returns 0 when every operation succeeded, else the first nonzero
 * ->error in order.
 */
int memcgfs_batch(struct memcgfs *m, struct memcgfs_op *ops, size_t n);

/* ---- names and numbers, as the protocol writes them ---- */

/**
 * memcgfs_gfp_parse - '|'-joined kernel gfp names ("GFP_KERNEL_ACCOUNT",
 * "GFP_KERNEL|__GFP_ZERO", "none") into bits.  Returns 0 or -EINVAL.
 */
int memcgfs_gfp_parse(const char *s, unsigned int *gfp);

/**
 * memcgfs_gfp_format - gfp bits as names, composite names first
 * ("GFP_KERNEL_ACCOUNT", "none" for 0).  Returns the length it needs (as
 * snprintf) or -EINVAL for bits memcgfs does not know.
 */
int memcgfs_gfp_format(char *buf, size_t len, unsigned int gfp);

/** memcgfs_slab_flags_parse - "SLAB_HWCACHE_ALIGN|SLAB_ACCOUNT" into bits. */
int memcgfs_slab_flags_parse(const char *s, unsigned int *flags);

/** memcgfs_slab_flags_format - as memcgfs_gfp_format(), for MEMCGFS_SLAB_*. */
int memcgfs_slab_flags_format(char *buf, size_t len, unsigned int flags);

/** memcgfs_page_type_parse - "anon", "file", ... into MEMCGFS_PAGE_*; -EINVAL. */
int memcgfs_page_type_parse(const char *s, unsigned int *type);

/** memcgfs_page_type_name - MEMCGFS_PAGE_* as memory.stat names it, or NULL. */
const char *memcgfs_page_type_name(unsigned int type);

/** memcgfs_handle_parse - 1..16 hex digits (no 0x) into a handle; -EINVAL. */
int memcgfs_handle_parse(const char *s, uint64_t *handle);

/**
 * memcgfs_size_parse - bytes with an optional K, M or G suffix (1024-based,
 * either case), as memcgfs's SIZE.  Returns 0 or -EINVAL (overflow too).
 */
int memcgfs_size_parse(const char *s, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* LIBMEMCGFS_H */
