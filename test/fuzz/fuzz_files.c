/* SPDX-License-Identifier: MIT */
/*
 * fuzz_files.c - every cgroup file write parser: memcg's memory.* files
 * (memcg_file_open/memcg_file_write, for every row of memcg_file_at(i) that
 * has a write handler) and fs/'s core cgroup files (the write handlers of
 * fs_files[], called as fs/ops.c calls them, without FUSE: no request, the
 * notifier not running, so invalidations are dropped), each followed by a
 * read of the same file, on a small tree: the root, /a (with a memcg and a
 * charged file pages and slab objects), /a/b.
 *
 * Memory files are written with nonblock=true (O_NONBLOCK): memory.max
 * and memory.high then only set the limit, no reclaim/OOM loop runs;
 * memory.reclaim reclaims regardless, as the kernel's does.
 *
 * Not fuzzed here, on purpose: cgroup.procs and cgroup.threads (their
 * parser is inside procs_move(), which moves real host processes by pid),
 * and cgroup.kill's action (procs_kill() scans /proc and signals): its
 * parser, kstrtoint0() after strstrip(), is the same as
 * cgroup.freeze's and cgroup.pressure's, which are fuzzed here, and
 * fuzz_parse fuzzes it directly.  tracing_on's parser is inline in
 * fs/ops.c's write handler (not callable).
 *
 * An input is a sequence of writes, each: u8 file (index among the
 * writable files, modulo), u8 where (bits 0-1: root, /a, /a/b; bit 2: the
 * opener is uid 1000, not root; bit 3: a fresh open file, else the one
 * this input already opened for that file and cgroup; bit 4: write what
 * remains of the input), u8 length, then that many bytes.
 *
 * After every input: files closed, memory freed, /a/b and /a removed, the
 * root's settings restored; memcg_check and alloc_check, and no memcg
 * left behind (live or dying).
 */
#include "fuzz_machine.h"

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OPEN	64

static unsigned int writable[FS_MAX_FILES];
static unsigned int nr_writable;

static struct {
	bool subtree_memory, psi;
	int max_descendants, max_depth;
} root_saved;

static struct fs_handle *open_files[MAX_OPEN];
static unsigned int nr_open;

struct held {
	struct page *page;
	uint64_t id;
};
static struct held held[16];
static unsigned int nr_held;
static void *held_obj[8];
static unsigned int nr_held_obj;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct memcgfs_config conf;

	(void)argc;
	(void)argv;
	fuzz_machine_init(16 * FUZZ_MIB, 2);
	conf_defaults(&conf);
	if (fs_files_init() || tree_init(&conf))
		fuzz_die("fs_files_init/tree_init");
	for (unsigned int i = 0; i < fs_nr_files; i++) {
		const struct fs_file *f = &fs_files[i];
		bool w = (f->type == FT_CORE && f->write) ||
			 (f->type == FT_MEMORY && (memcg_file_mode(f->mf) & 0200));

		if (!w)
			continue;
		if (!strcmp(f->name, "cgroup.procs") || !strcmp(f->name, "cgroup.threads") ||
		    !strcmp(f->name, "cgroup.kill"))
			continue;
		if (fuzz_verbose)
			fprintf(stderr, "file %u: %s\n", nr_writable, f->name);
		writable[nr_writable++] = i;
	}
	root_saved.subtree_memory = fs_root->subtree_memory;
	root_saved.psi = fs_root->psi;
	root_saved.max_descendants = fs_root->max_descendants;
	root_saved.max_depth = fs_root->max_depth;
	fuzz_check("init");
	return 0;
}

static struct fs_handle *file_open(struct cgroup *cg, unsigned int idx, uid_t uid)
{
	const struct fs_file *f = &fs_files[idx];
	struct fs_handle *h;
	int err = 0;

	if (nr_open == MAX_OPEN)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		fuzz_die("out of memory");
	pthread_mutex_init(&h->lock, NULL);
	h->cg = cg;
	h->idx = idx;
	h->file = f;
	h->flags = O_RDWR | O_NONBLOCK;
	h->uid = uid;
	h->gid = uid;
	pthread_rwlock_rdlock(&fs_tree_lock);
	if (cg->removed || !fs_file_present(cg, idx))
		err = -ENOENT;
	h->psi_drains = cg->psi_drains;
	if (!err && f->type == FT_MEMORY) {
		h->memcg = fs_file_memcg(cg, f);
		err = memcg_file_open(f->mf, h->memcg, &h->mo);
		if (!err)
			memcg_file_set_privileged(h->mo, uid == 0);
	}
	if (!err)
		cgroup_get(cg);
	pthread_rwlock_unlock(&fs_tree_lock);
	if (err) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	open_files[nr_open++] = h;
	return h;
}

static void file_close(struct fs_handle *h)
{
	if (h->mo)
		memcg_file_release(h->mo);
	sb_free(&h->snap);
	pthread_mutex_destroy(&h->lock);
	cgroup_put(h->cg);
	free(h);
}

static bool stale(const struct fs_handle *h)
{
	bool s;

	pthread_rwlock_rdlock(&fs_tree_lock);
	s = h->cg->removed || ((h->file->flags & FF_PSI) && !h->cg->psi) ||
	    ((h->file->flags & FF_MEMCG) && fs_file_memcg(h->cg, h->file) != h->memcg);
	pthread_rwlock_unlock(&fs_tree_lock);
	return s;
}

/* fs/ops.c's psi_drain_check(): a drain (cgroup.pressure 0) destroyed the trigger */
static void psi_drain_check(struct fs_handle *h)
{
	pthread_rwlock_rdlock(&fs_tree_lock);
	if (h->psi_drains != h->cg->psi_drains) {
		h->psi_drains = h->cg->psi_drains;
		if (h->mo)
			(void)memcg_file_drop_trigger(h->mo);
		h->psi_trigger = false;
	}
	pthread_rwlock_unlock(&fs_tree_lock);
}

static void file_write(struct fs_handle *h, const uint8_t *p, size_t len)
{
	const struct fs_file *f = h->file;
	struct fs_caller who = { .req = NULL, .tid = 1, .uid = h->uid, .gid = h->gid };
	char tmp[4096 + 1];
	int err;

	if (!len || stale(h))
		return;
	if (f->flags & FF_PSI)
		psi_drain_check(h);
	if (f->type == FT_MEMORY) {
		err = memcg_file_write(h->mo, (const char *)p, len, true);
		if (err > 0)
			fuzz_die("%s: write returned %d", f->name, err);
		if (!err && (f->flags & FF_PSI))
			h->psi_trigger = true;
		if (len > 4096 && err != -E2BIG)
			fuzz_die("%s: a write of %zu bytes returned %d, not E2BIG", f->name, len,
				 err);
	} else {
		if (len > 4096)
			return;		/* fs/ops.c answers E2BIG before the handler */
		memcpy(tmp, p, len);
		tmp[len] = '\0';
		if (f->flags & FF_PSI)
			pthread_mutex_lock(&h->lock);
		err = f->write(h, &who, tmp, len);
		if (f->flags & FF_PSI)
			pthread_mutex_unlock(&h->lock);
		if (err > FS_REPLIED)
			fuzz_die("%s: write returned %d", f->name, err);
	}
	if (err < -4095)
		fuzz_die("%s: write returned %d", f->name, err);
	if (fuzz_verbose)
		fprintf(stderr, "  -> %d\n", err);
}

static void file_read(struct fs_handle *h)
{
	const struct fs_file *f = h->file;
	char buf[16384];

	if (stale(h))
		return;
	if (f->type == FT_MEMORY) {
		long n = memcg_file_read(h->mo, buf, sizeof(buf));

		if (n >= (long)sizeof(buf))
			fuzz_die("%s: %ld bytes", f->name, n);
		if (n >= 0 && memchr(buf, '\0', (size_t)n))
			fuzz_die("%s: a NUL byte in the content", f->name);
	} else if (f->show) {
		pthread_rwlock_rdlock(&fs_tree_lock);
		sb_reset(&h->snap);
		(void)f->show(h, &h->snap);
		pthread_rwlock_unlock(&fs_tree_lock);
	}
}

/*
 * /a holds file pages (on its LRU, directly charged) and slab objects
 * (through its objcg), for reclaim and the limits.  The task that charged
 * them exits at once: fs/ never lets a memcg keep tasks that no process
 * of the cgroup's subtree stands for (offline refuses a memcg with tasks).
 */
static void charge_a(struct cgroup *a)
{
	struct memcg_task *task = memcg_task_create(4242, a->memcg);

	if (!task)
		fuzz_die("memcg_task_create");
	memcg_set_current(task);
	nr_held = nr_held_obj = 0;
	for (unsigned int i = 0; i < 12; i++) {
		int err = 0;
		struct page *pg = memcg_alloc_pages(MEMCG_PAGE_FILE, GFP_HIGHUSER_MOVABLE, 0, &err);

		if (pg) {
			held[nr_held].page = pg;
			held[nr_held++].id = memcg_page_id(pg);
		}
	}
	for (unsigned int i = 0; i < 8; i++) {
		void *o = kmalloc(512, i & 1 ? GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE :
				  GFP_KERNEL_ACCOUNT);

		if (o)
			held_obj[nr_held_obj++] = o;
	}
	memcg_set_current(NULL);
	memcg_task_exit(task);
}

static void uncharge_a(void)
{
	for (unsigned int i = 0; i < nr_held; i++)
		(void)memcg_free_pages(held[i].page, held[i].id);	/* -ENOENT: reclaimed */
	for (unsigned int i = 0; i < nr_held_obj; i++)
		kfree(held_obj[i]);
	nr_held = nr_held_obj = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgroup *a, *b, *cgs[3];
	size_t pos = 0;
	unsigned long nr, dying;

	fuzz_record(data, size);

	if (cgroup_mkdir(fs_root, "a", 0755, 0, 0, &a) || cgroup_mkdir(a, "b", 0755, 0, 0, &b))
		fuzz_die("mkdir /a/b");
	cgs[0] = fs_root;
	cgs[1] = a;
	cgs[2] = b;
	charge_a(a);

	while (pos + 3 <= size) {
		unsigned int idx = writable[data[pos] % nr_writable];
		uint8_t where = data[pos + 1];
		size_t len = data[pos + 2];
		struct cgroup *cg = cgs[(where & 3) % 3];
		uid_t uid = (where & 4) ? 1000 : 0;
		struct fs_handle *h = NULL;

		pos += 3;
		if ((where & 16) || len > size - pos)
			len = size - pos;
		if (!(where & 8))
			for (unsigned int i = 0; i < nr_open; i++)
				if (open_files[i]->cg == cg && open_files[i]->idx == idx &&
				    open_files[i]->uid == uid)
					h = open_files[i];
		if (!h)
			h = file_open(cg, idx, uid);
		if (fuzz_verbose)
			fprintf(stderr, "%s%s as %u: '%.*s'%s\n", cg == fs_root ? "/" : cg == a ? "/a/" :
				"/a/b/", fs_files[idx].name, uid, (int)len, (const char *)data + pos,
				h ? "" : " (not present)");
		if (h) {
			file_write(h, data + pos, len);
			file_read(h);
		}
		pos += len;
	}

	while (nr_open)
		file_close(open_files[--nr_open]);
	uncharge_a();
	if (cgroup_rmdir(a, "b") || cgroup_rmdir(fs_root, "a"))
		fuzz_die("rmdir /a/b, /a");
	pthread_rwlock_wrlock(&fs_tree_lock);
	fs_root->subtree_memory = root_saved.subtree_memory;
	fs_root->psi = root_saved.psi;
	fs_root->max_descendants = root_saved.max_descendants;
	fs_root->max_depth = root_saved.max_depth;
	pthread_rwlock_unlock(&fs_tree_lock);
	{
		const struct memcg_file *zw = memcg_file_lookup("memory.zswap.writeback");
		struct memcg_open *o;

		if (zw && !memcg_file_open(zw, root_mem_cgroup(), &o)) {
			(void)memcg_file_write(o, "1", 1, true);
			memcg_file_release(o);
		}
	}
	fuzz_check("after the input");
	/*
	 * No memcg left: none online; the dying ones are freed a grace period
	 * (memcg's REAP_GRACE_NS, 20 ms) after their last reference, so they
	 * may pile up for a while, but none may stay: past 32, everything
	 * awaiting its grace period is freed at once (a wait would not do: each
	 * memcg freed drops the reference that lets its parent go, a grace
	 * period later), and any memcg still dying then holds a reference that
	 * was never dropped.
	 */
	mem_cgroup_descendants(root_mem_cgroup(), &nr, &dying);
	if (dying > 32) {
		memcg_reap_now();
		mem_cgroup_descendants(root_mem_cgroup(), &nr, &dying);
		if (dying)
			fuzz_die("%lu dying memcgs not freed after their cgroups were removed and "
				 "everything waiting was reaped", dying);
	}
	if (nr)
		fuzz_die("after rmdir of every cgroup: %lu memcgs online", nr);
	return 0;
}
