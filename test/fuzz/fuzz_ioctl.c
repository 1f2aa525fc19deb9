/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ioctl.c - memcgfs.ctl's batched ioctl (<memcgfs/ctl.h>): the
 * decoder and executor of ctl_ioctl(), with arbitrary bytes and command
 * sizes, against the same in-process machine as fuzz_ctl.
 *
 * An input is up to 8 batches, each a 4-byte header followed by its bytes:
 *   u16 size   _IOC_SIZE of the command, 0..16383 (any: unaligned, too
 *              small, too large); that many bytes follow (zero-padded when
 *              the input ends first)
 *   u8  cmd    bits 0-1: _IOC_DIR is 3 (read|write) minus this; bit 2: a
 *              wrong type; bit 3: a wrong number; bit 4: the results written
 *              over the input (out_buf == in_buf, as fs/ may pass)
 *   u8  who    bits 0-1: the caller (as fuzz_ctl); bit 2: pin CPU 1
 * Inside a batch any 8-byte word 0xfeedfacecafeXXXX is replaced by handle
 * number XXXX (modulo their count) of those earlier batches of this input
 * returned, so frees can name real, stale and foreign handles.
 *
 * The buffers are exactly the command's size (ASan sees any access past
 * it).  Oracles: the return is 0, -ENOTTY or -EINVAL; a refused batch
 * leaves the input as it was and writes no result; on 0, nr_done +
 * nr_failed = nr_ops, every error is 0 or a negative errno, the operations
 * come back as sent but for their error fields, and a successful
 * allocation's handle slots lie inside the batch, after the operations.
 * Per input: as fuzz_ctl, everything freed and the machine back to its
 * starting state.
 */
#include "fuzz_machine.h"

#include "ctl.h"
#include <memcgfs/ctl.h>
#include "memcg.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HANDLE_MAGIC	0xfeedfacecafe0000ull

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_ctl_init();
	return 0;
}

static bool is_alloc(uint8_t op)
{
	return op == MEMCGFS_OP_KMALLOC || op == MEMCGFS_OP_KMEM_CACHE_ALLOC ||
	       op == MEMCGFS_OP_ALLOC_PAGES;
}

/* Results of an executed batch: handles and created caches. */
static void harvest(const unsigned char *in, const unsigned char *out, unsigned int size)
{
	struct memcgfs_ctl_hdr hdr;
	unsigned int words = (size - (unsigned int)sizeof(hdr)) / 8;

	memcpy(&hdr, in, sizeof(hdr));
	for (unsigned int i = 0; i < hdr.nr_ops; i++) {
		size_t off = sizeof(hdr) + (size_t)i * sizeof(struct memcgfs_ctl_op);
		struct memcgfs_ctl_op op, res;

		memcpy(&op, in + off, sizeof(op));
		memcpy(&res, out + off, sizeof(res));
		if (res.error > 0 || res.error < -4095)
			fuzz_die("batch op %u: error %d", i, res.error);
		if (res.error)
			continue;
		if (is_alloc(op.op)) {
			unsigned int n = op.count ? op.count : 1;

			if (op.slot < MEMCGFS_CTL_FIRST_SLOT(hdr.nr_ops) || op.slot + n > words)
				fuzz_die("op %u succeeded with slots %u+%u outside the batch", i,
					 op.slot, n);
			for (unsigned int k = 0; k < n; k++) {
				uint64_t h;

				memcpy(&h, out + sizeof(hdr) + ((size_t)op.slot + k) * 8, 8);
				fuzz_ctl_add_handle(h);
			}
		} else if (op.op == MEMCGFS_OP_KMEM_CACHE_CREATE) {
			const char *name = (const char *)in + sizeof(hdr) + (size_t)op.name * 8;

			if (op.name >= words || !memchr(name, '\0', (size_t)(words - op.name) * 8))
				fuzz_die("op %u created a cache from a name outside the batch", i);
			fuzz_ctl_add_cache(name);
		}
	}
}

static void one_batch(unsigned int size, uint8_t cmdsel, uint8_t whosel, const uint8_t *p,
		      size_t avail)
{
	unsigned int dir = 3u - (cmdsel & 3u);
	unsigned int cmd = _IOC(dir, MEMCGFS_IOC_MAGIC ^ ((cmdsel & 4) ? 1 : 0),
				MEMCGFS_IOC_NR_BATCH + ((cmdsel & 8) ? 1 : 0), size);
	bool same = cmdsel & 16;
	unsigned char *in = malloc(size ? size : 1);
	unsigned char *out = same ? in : malloc(size ? size : 1);
	unsigned char *orig = malloc(size ? size : 1);
	struct memcgfs_ctl_hdr hdr;
	int rc;

	if (!in || !out || !orig)
		fuzz_die("out of memory");
	memset(in, 0, size);
	memcpy(in, p, avail < size ? avail : size);
	for (unsigned int off = sizeof(hdr); off + 8 <= size; off += 8) {
		uint64_t w;

		memcpy(&w, in + off, 8);
		if ((w & ~0xffffull) == HANDLE_MAGIC) {
			w = fuzz_ctl_handle((unsigned int)(w & 0xffff));
			memcpy(in + off, &w, 8);
		}
	}
	memcpy(orig, in, size);
	if (!same)
		memset(out, 0xa5, size);

	alloc_pin_cpu((whosel & 4) ? 1 : 0);
	rc = ctl_ioctl(fuzz_caller(whosel & 3), cmd, in, size, out, size);
	alloc_pin_cpu(-1);
	if (fuzz_verbose) {
		fprintf(stderr, "batch size %u cmd %#x who %u: %d", size, cmd, whosel & 3, rc);
		memcpy(&hdr, orig, sizeof(hdr));
		for (unsigned int i = 0; !rc && i < hdr.nr_ops; i++) {
			struct memcgfs_ctl_op o;

			memcpy(&o, out + sizeof(hdr) + (size_t)i * sizeof(o), sizeof(o));
			fprintf(stderr, " [op %u: %d]", o.op, o.error);
		}
		fputc('\n', stderr);
	}
	if (rc && rc != -EINVAL && rc != -ENOTTY)
		fuzz_die("ctl_ioctl returned %d", rc);
	if (rc) {
		/* a malformed batch: nothing executed, nothing written */
		if (memcmp(in, orig, size))
			fuzz_die("a refused batch (%d) changed its input", rc);
		if (!same)
			for (unsigned int i = 0; i < size; i++)
				if (out[i] != 0xa5)
					fuzz_die("a refused batch (%d) wrote its results", rc);
	} else {
		struct memcgfs_ctl_hdr oh;

		memcpy(&hdr, orig, sizeof(hdr));
		memcpy(&oh, out, sizeof(oh));
		if (oh.version != hdr.version || oh.nr_ops != hdr.nr_ops ||
		    oh.nr_done + oh.nr_failed != hdr.nr_ops)
			fuzz_die("batch header: version %u nr_ops %u -> version %u nr_ops %u, "
				 "done %u + failed %u", hdr.version, hdr.nr_ops, oh.version,
				 oh.nr_ops, oh.nr_done, oh.nr_failed);
		/* the operations come back as sent but for their error fields */
		for (unsigned int i = 0; i < hdr.nr_ops; i++) {
			size_t off = sizeof(hdr) + (size_t)i * sizeof(struct memcgfs_ctl_op);
			struct memcgfs_ctl_op a, b;

			memcpy(&a, orig + off, sizeof(a));
			memcpy(&b, out + off, sizeof(b));
			a.error = b.error = 0;
			if (memcmp(&a, &b, sizeof(a)))
				fuzz_die("batch op %u came back changed", i);
		}
		harvest(orig, out, size);
	}
	free(orig);
	if (!same)
		free(out);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 0;

	fuzz_record(data, size);

	for (int n = 0; n < 8 && pos + 4 <= size; n++) {
		unsigned int bsize = (unsigned int)(data[pos] | data[pos + 1] << 8) & 0x3fff;
		uint8_t cmdsel = data[pos + 2], whosel = data[pos + 3];
		size_t avail;

		pos += 4;
		avail = size - pos;
		one_batch(bsize, cmdsel, whosel, data + pos, avail);
		pos += avail < bsize ? avail : bsize;
	}
	fuzz_ctl_cleanup();
	return 0;
}
