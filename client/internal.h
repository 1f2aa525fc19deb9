/* SPDX-License-Identifier: MIT */
/*
 * client/internal.h - libmemcgfs's private declarations (not installed):
 * the handle, and the batch packer that the unit test drives without a
 * mount.
 */
#ifndef MEMCGFS_CLIENT_INTERNAL_H
#define MEMCGFS_CLIENT_INTERNAL_H

#include "libmemcgfs.h"

#include <pthread.h>
#include <stdbool.h>

#define MEMCGFS_API	__attribute__((visibility("default")))

/* The longest reply: "ok" and 1024 handles of " %016x", or whoami's. */
#define CLIENT_REPLY_MAX	(4 + MEMCGFS_CTL_MAX_COUNT * (MEMCGFS_HANDLE_HEX + 1) + 64)

struct memcgfs {
	pthread_mutex_t lock;		/* one request at a time on fd */
	int fd;				/* memcgfs.ctl, O_RDWR */
	char mount[MEMCGFS_PATH_MAX];
	/* scratch, under lock */
	char request[MEMCGFS_REQUEST_MAX + 1];
	char reply[CLIENT_REPLY_MAX + MEMCGFS_PATH_MAX];
	uint64_t batch[MEMCGFS_CTL_MAX_SIZE / 8];
};

/*
 * libmemcgfs_batch_check - whether @op can be sent (count, name, site, kind): 0 or
 * -EINVAL.  libmemcgfs_batch_words - the 8-byte words @op takes in a batch (its
 * 4-word operation and its slots).
 */
int libmemcgfs_batch_check(const struct memcgfs_op *op);
size_t libmemcgfs_batch_words(const struct memcgfs_op *op);

/*
 * libmemcgfs_batch_pack - put ops[0..n) into @buf (MEMCGFS_CTL_MAX_SIZE bytes) from
 * the first on, as many as fit whole.  Ops that libmemcgfs_batch_check() refuses get
 * -EINVAL and are skipped (they count as taken).  *@taken: how many of
 * @ops were consumed (at least 1 when n > 0); *@nr: how many went into the
 * batch (possibly 0).  Returns the batch's size in bytes (0 when nr is 0).
 */
size_t libmemcgfs_batch_pack(struct memcgfs_op *ops, size_t n, uint64_t *buf, size_t *taken, size_t *nr);

/*
 * libmemcgfs_batch_unpack - the results of a batch that libmemcgfs_batch_pack() built from
 * ops[0..taken) back into those ops (error, handles, info, whoami).
 */
void libmemcgfs_batch_unpack(struct memcgfs_op *ops, size_t taken, const uint64_t *buf);

/* printable ASCII without spaces, 1..max-1 characters */
bool libmemcgfs_word_ok(const char *s, size_t max);

#endif /* MEMCGFS_CLIENT_INTERNAL_H */
