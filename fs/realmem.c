/* SPDX-License-Identifier: MIT */
/*
 * realmem.c - real memory (memcg.real_memory): the measuring half.
 *
 * Every process in a child cgroup is measured and its numbers handed to
 * memcg/real.c, which charges them: resident anon and shmem, page tables
 * and threads from /proc/PID/status (read again only when the cheaper
 * /proc/PID/statm moved, and every STATUS_EVERY samples); the page cache
 * of the regular files members use, with cachestat(2) (mincore(2) before
 * Linux 6.5) on a descriptor memcgfs keeps.  Files are found as members
 * create or open them (fanotify FAN_CREATE and FAN_OPEN on every
 * disk-backed filesystem, as root),
 * and by a look at a process's descriptors and mappings when it is moved
 * into a cgroup (and, without fanotify, every FD_SCAN_EVERY samples).  A
 * file stays known while it has charged pages, and for FILE_GRACE_NS after
 * a member last opened it or closed it after writing (mapped pages come
 * later).
 *
 * One thread does the periodic work: every memcg.real_interval it samples
 * every member and the files in use, then does what the kernel's charge
 * would have done (memory.max: reclaim, then OOM kills, through
 * memcg_real_enforce; memory.high: the penalty, by stopping the process
 * for it), and resumes processes whose penalty is over.  A read of a
 * cgroup's usage files samples that cgroup's members at once (unless they
 * were sampled in the last REFRESH_NS); if that leaves a memcg over its
 * max, the read waits for this thread's enforcement, so that no reader sees
 * usage past max that reclaim could have taken back.
 *
 * Reclaim (any thread: a client's charge, memory.reclaim, this thread)
 * drops a file's cache with POSIX_FADV_DONTNEED after writing back the
 * range, a range at a time from a cursor that wraps around the file.
 *
 * Signals go through pidfds (procs_signal), never to PID 1 or the daemon.
 *
 * Locking: sample_lock serialises the sampling of processes (their
 * real_proc state); files_lock guards the file table; each rfile's lock
 * serialises its measurement, reclaim and release (memcg/real.c's rule);
 * throttle_lock the list of stopped processes.  No fs lock is held while a
 * file is reclaimed or a memcg enforced.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef SYS_cachestat
#define SYS_cachestat	451
#endif

#define REFRESH_NS	(1 * NSEC_PER_MSEC)	/* a read samples members older than this */
#define STATUS_EVERY	16	/* status is read at least every this many samples */
#define IDLE_AFTER	5	/* unchanged this many samples: idle, every 2nd round */
#define FILE_IDLE_EVERY	8	/* files not used lately: sampled every this many rounds */
#define FILE_GRACE_NS	(5 * NSEC_PER_SEC)	/* a file members used lately stays known */
#define FD_SCAN_EVERY	8	/* without fanotify: descriptors looked at this often */
#define FILE_TABLE	4096
#define FAN_BATCH_US	500	/* the files thread sleeps this long between batches */
#define RECLAIM_CHUNK	(256ul << 12)	/* bytes dropped at once from a big file */

struct cachestat_range {
	uint64_t off, len;
};
struct cachestat_out {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* A tracked process's measuring state (proc->real), under sample_lock. */
struct real_proc {
	int statm_fd;			/* kept open, or -1 past the budget */
	unsigned long statm[3];		/* size, resident, shared */
	unsigned int nsample;
	unsigned int still;		/* samples since statm last moved */
	bool scan_files;		/* look at its descriptors and mappings */
	bool warned;			/* a /proc read failed: said once */
	bool charged;			/* it has real memory charged */
};

struct rfile {
	pthread_mutex_t lock;
	dev_t dev;
	ino_t ino;
	int fd;
	struct memcg_real_file *mf;	/* NULL once released */
	_Atomic uint64_t used_ns;	/* a member's last open or close of it */
	uint64_t cursor;		/* reclaim's next range */
	struct rfile *hash_next;	/* files_lock */
	struct rfile *all_next, *all_prev;	/* files_lock */
	bool dead;			/* out of the table, released */
};

struct throttle {
	struct proc *p;			/* referenced */
	uint64_t until_ns;
	struct throttle *next;
};

static bool real_on;
static uint64_t interval_ns;
static long host_page;
static bool use_fanotify;
static unsigned int fan_batch_us = FAN_BATCH_US;
static bool cachestat_ok = true;
static int ep_fd = -1, wake_fd = -1, fan_ep_fd = -1, fan_stop_fd = -1, fan_fd = -1, mi_fd = -1;
static pthread_t thread, fan_thread;
static bool running, fan_running;
static _Atomic bool stopping;

static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rfile *file_table[FILE_TABLE];
static struct rfile *all_files;
static unsigned long nr_files;
static pthread_mutex_t throttle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct throttle *throttled;

/* Enforcement rounds: a read that must wait for one waits for the next. */
static _Atomic uint64_t enforce_requested, enforce_done;
static struct fs_waitq enforce_wq;

static _Atomic unsigned long stat_samples, stat_status_reads, stat_file_samples;
static _Atomic unsigned long stat_fan_overflows;	/* fanotify's queue overflowed */
static atomic_bool files_over_budget;

#define TAG_WAKE	1	/* an eventfd: work to do, or stop */
#define TAG_FAN		2
#define TAG_MOUNTS	3

bool realmem_on(void)
{
	return real_on;
}

/* Host pages (what /proc and cachestat count) to machine pages. */
static unsigned long host_to_pages(uint64_t host_pages)
{
	return (unsigned long)((host_pages * (uint64_t)host_page + alloc_page_size() - 1) /
			       alloc_page_size());
}

static unsigned long kb_to_pages(uint64_t kb)
{
	return (unsigned long)((kb * 1024 + alloc_page_size() - 1) / alloc_page_size());
}

static void wake(void)
{
	uint64_t one = 1;

	if (wake_fd >= 0 && write(wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the thread is being woken anyway */
	}
}

/* ---- processes ---- */
/*
 * Descriptors memcgfs keeps for real memory (a process's statm, a file's
 * page cache) come out of a budget: a quarter of RLIMIT_NOFILE, the rest
 * is the process tracker's and the mount's.  Past it a process's statm is
 * opened for each sample, and new files are not followed (said once).
 */
static _Atomic long fd_budget;

static bool fd_take(void)
{
	if (atomic_fetch_sub(&fd_budget, 1) > 0)
		return true;
	atomic_fetch_add(&fd_budget, 1);
	return false;
}

static void fd_give(void)
{
	atomic_fetch_add(&fd_budget, 1);
}

static struct real_proc *real_proc_of(struct proc *p)
{
	struct real_proc *rp = p->real;
	char path[64];

	if (rp)
		return rp;
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return NULL;
	rp->statm_fd = -1;
	if (fd_take()) {
		snprintf(path, sizeof(path), "/proc/%d/statm", p->pid);
		rp->statm_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (rp->statm_fd < 0) {
			int err = errno;

			fd_give();
			free(rp);
			if (err != ENOENT && err != ESRCH)
				fs_warn("real memory: cannot read %s: %s: its memory is not charged",
					path, strerror(err));
			return NULL;
		}
	}
	p->real = rp;
	return rp;
}

void realmem_proc_free(struct proc *p)
{
	struct real_proc *rp = p->real;

	if (!rp)
		return;
	if (rp->statm_fd >= 0) {
		close(rp->statm_fd);
		fd_give();
	}
	free(rp);
	p->real = NULL;
}

static ssize_t pread_all(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* p's start time in /proc/PID/stat (clock ticks after boot), or 0. */
static unsigned long long proc_start(pid_t pid)
{
	char path[64], buf[1024], *r;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (fs_read_file(path, buf, sizeof(buf)) > 0 && (r = strrchr(buf, ')')) &&
	    sscanf(r + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
		   "%*d %*d %*d %llu", &start) != 1)
		start = 0;
	return start;
}

/*
 * Read /proc/PID/NAME of p, and only of p: a pid read by path may be
 * another process's by now.  The kept statm descriptor is bound to p (it
 * fails once p is gone), so a read of it after the file's says the pid
 * was still p's; without it, p's start time must still be /proc's.
 */
static ssize_t proc_read(struct proc *p, struct real_proc *rp, const char *name, char *buf,
			 size_t len)
{
	char path[64], check[128];
	ssize_t n;

	if (rp->statm_fd >= 0 && !strcmp(name, "statm"))
		return pread_all(rp->statm_fd, buf, len);
	snprintf(path, sizeof(path), "/proc/%d/%s", p->pid, name);
	n = fs_read_file(path, buf, len);
	if (n <= 0)
		return n == -ENOENT ? -ESRCH : n;
	if (rp->statm_fd >= 0 ? pread_all(rp->statm_fd, check, sizeof(check)) <= 0 :
	    proc_start(p->pid) != p->start)
		return -ESRCH;
	return n;
}

static bool status_field(const char *buf, const char *key, unsigned long *v)
{
	const char *s = strstr(buf, key);

	if (!s)
		return false;
	*v = strtoul(s + strlen(key), NULL, 10);
	return true;
}

/*
 * Measure p and charge the change.  sample_lock held; p referenced.
 * Returns true when p is (still) charged something.
 */
static bool sample_proc(struct proc *p)
{
	struct real_proc *rp;
	struct memcg_real_usage u = { 0 };
	unsigned long statm[3] = { 0, 0, 0 }, kb;
	char buf[2048];
	ssize_t n;

	if (proc_exited(p))
		return false;
	rp = real_proc_of(p);
	if (!rp)
		return false;
	atomic_fetch_add_explicit(&stat_samples, 1, memory_order_relaxed);
	n = proc_read(p, rp, "statm", buf, 128);
	if (n <= 0 || sscanf(buf, "%lu %lu %lu", &statm[0], &statm[1], &statm[2]) != 3)
		return rp->charged;	/* exiting: its exit uncharges it */
	/* statm still: nothing resident changed (threads and page tables come with size) */
	if (!memcmp(statm, rp->statm, sizeof(statm))) {
		if (rp->still < IDLE_AFTER)
			rp->still++;
		if (rp->nsample++ % STATUS_EVERY)
			return rp->charged;
	} else {
		rp->still = 0;
		rp->nsample++;
	}
	memcpy(rp->statm, statm, sizeof(statm));
	atomic_fetch_add_explicit(&stat_status_reads, 1, memory_order_relaxed);
	n = proc_read(p, rp, "status", buf, sizeof(buf));
	if (n <= 0) {
		if (n < 0 && n != -ESRCH && !rp->warned) {
			rp->warned = true;
			fs_warn("real memory: cannot read /proc/%d/status: %s", p->pid,
				strerror((int)-n));
		}
		return rp->charged;
	}
	if (status_field(buf, "\nRssAnon:", &kb))
		u.anon = kb_to_pages(kb);
	if (status_field(buf, "\nRssShmem:", &kb))
		u.shmem = kb_to_pages(kb);
	if (status_field(buf, "\nRssFile:", &kb))
		u.file_rss = kb_to_pages(kb);
	if (status_field(buf, "\nVmPTE:", &kb))
		u.pagetables = kb_to_pages(kb);
	if (!status_field(buf, "\nThreads:", &u.threads))
		u.threads = 1;
	/* a kernel thread or a zombie has no mm: nothing to charge */
	if (memcg_real_task_update(p->task, &u))
		return false;
	rp->charged = u.anon || u.shmem || u.pagetables || u.threads;
	return rp->charged;
}

/* Processes to sample: members, and those that left with memory still charged. */
static bool wants_sample(struct proc *p)
{
	return proc_member(p) || (p->real && ((struct real_proc *)p->real)->charged);
}

/* ---- files ---- */
static int file_cachestat(int fd, struct memcg_real_cache *c)
{
	struct cachestat_range r = { 0, 0 };
	struct cachestat_out cs;
	struct stat st;
	unsigned char *vec;
	void *map;
	size_t pages, resident = 0;

	atomic_fetch_add_explicit(&stat_file_samples, 1, memory_order_relaxed);
	if (cachestat_ok) {
		if (!syscall(SYS_cachestat, fd, &r, &cs, 0)) {
			c->cached = host_to_pages(cs.nr_cache);
			c->dirty = host_to_pages(cs.nr_dirty);
			c->writeback = host_to_pages(cs.nr_writeback);
			return 0;
		}
		if (errno != ENOSYS)
			return -errno;
		cachestat_ok = false;
		fs_info("real memory: no cachestat(2) (Linux < 6.5): page cache measured with mincore(2)");
	}
	/* mincore: residency only (dirty and writeback unknown) */
	if (fstat(fd, &st))
		return -errno;
	memset(c, 0, sizeof(*c));
	if (!st.st_size)
		return 0;
	pages = (size_t)((st.st_size + host_page - 1) / host_page);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	vec = malloc(pages);
	if (vec && !mincore(map, (size_t)st.st_size, vec))
		for (size_t i = 0; i < pages; i++)
			resident += vec[i] & 1;
	free(vec);
	munmap(map, (size_t)st.st_size);
	c->cached = host_to_pages(resident);
	return 0;
}

static unsigned int file_hash(dev_t dev, ino_t ino)
{
	return (unsigned int)((ino * 0x9e3779b97f4a7c15ull) ^ dev) % FILE_TABLE;
}

/* files_lock held */
static struct rfile *file_find(dev_t dev, ino_t ino)
{
	for (struct rfile *rf = file_table[file_hash(dev, ino)]; rf; rf = rf->hash_next)
		if (rf->dev == dev && rf->ino == ino)
			return rf;
	return NULL;
}

/* files_lock held */
static void file_unhash(struct rfile *rf)
{
	struct rfile **pp = &file_table[file_hash(rf->dev, rf->ino)];

	for (; *pp; pp = &(*pp)->hash_next) {
		if (*pp == rf) {
			*pp = rf->hash_next;
			break;
		}
	}
	if (rf->all_prev)
		rf->all_prev->all_next = rf->all_next;
	else
		all_files = rf->all_next;
	if (rf->all_next)
		rf->all_next->all_prev = rf->all_prev;
	nr_files--;
}

/* memcg/real.c's last reference: the descriptor goes, and the cache with it. */
static void rf_release(void *priv)
{
	struct rfile *rf = priv;

	if (rf->fd >= 0) {
		close(rf->fd);
		fd_give();
	}
	pthread_mutex_destroy(&rf->lock);
	free(rf);
}

/* Forget a file: out of the table, uncharged.  rf->lock held; unlocked here. */
static void file_drop_locked(struct rfile *rf)
{
	struct memcg_real_file *mf = rf->mf;

	pthread_mutex_lock(&files_lock);
	file_unhash(rf);
	pthread_mutex_unlock(&files_lock);
	rf->dead = true;
	rf->mf = NULL;
	pthread_mutex_unlock(&rf->lock);
	/* the last reference may be reclaim's, which is waiting for rf->lock */
	memcg_real_file_release(mf);
}

/*
 * Measure a file and charge the change; forget it once nothing of it is
 * charged, or it was deleted, and no member opened or closed it for
 * FILE_GRACE_NS (a file in use stays known: its next pages are charged).
 * rf->lock held; released here when the file is dropped (returns false then).
 */
static bool file_sample_locked(struct rfile *rf)
{
	struct memcg_real_cache c;
	struct stat st;

	if (!file_cachestat(rf->fd, &c))
		memcg_real_file_update(rf->mf, &c, false);
	if (fs_now_ns() - atomic_load(&rf->used_ns) < FILE_GRACE_NS)
		return true;
	if (!memcg_real_file_charged(rf->mf) || (!fstat(rf->fd, &st) && !st.st_nlink)) {
		file_drop_locked(rf);
		return false;
	}
	return true;
}

/*
 * The file (dev, ino) with a reference that keeps it (memcg/real.c frees
 * it at the last), not locked: the caller takes rf->lock, never under
 * files_lock (file_drop_locked takes files_lock under rf->lock).
 */
static struct rfile *file_lookup_get(dev_t dev, ino_t ino, struct memcg_real_file **mf)
{
	struct rfile *rf;

	pthread_mutex_lock(&files_lock);
	rf = file_find(dev, ino);
	if (rf) {
		*mf = rf->mf;
		memcg_real_file_get(*mf);
	}
	pthread_mutex_unlock(&files_lock);
	return rf;
}

/* A member used a known file again.  rf->lock taken here. */
static void file_reused(struct rfile *rf)
{
	atomic_store(&rf->used_ns, fs_now_ns());
	pthread_mutex_lock(&rf->lock);
	if (!rf->dead)
		memcg_real_file_reference(rf->mf);
	pthread_mutex_unlock(&rf->lock);
}

/*
 * Member p created (created) or opened the regular file open at fd (ours
 * to keep or close): the first use charges it to p's memcg from now on, a
 * later one is a reference.  A file p created is p's from its first page:
 * nothing in its cache can be someone else's, however late the event was
 * read.  No fs lock held.
 */
static void file_used(struct proc *p, int fd, const struct stat *st, bool created)
{
	struct memcg_real_cache c = { 0, 0, 0 };
	struct memcg_real_file *mf;
	struct rfile *rf = file_lookup_get(st->st_dev, st->st_ino, &mf), *other;

	if (rf) {
		close(fd);
		file_reused(rf);
		memcg_real_file_put(mf);
		return;
	}
	/* what is cached at an opened file's first use was brought in by someone else */
	if (!fd_take()) {
		if (!atomic_exchange(&files_over_budget, true))
			fs_warn("real memory: out of descriptors for files (a quarter of "
				"RLIMIT_NOFILE): files members use from now on are not charged");
		close(fd);
		return;
	}
	rf = calloc(1, sizeof(*rf));
	if (!rf || file_cachestat(fd, &c)) {
		free(rf);
		close(fd);
		fd_give();
		return;
	}
	pthread_mutex_init(&rf->lock, NULL);
	rf->dev = st->st_dev;
	rf->ino = st->st_ino;
	rf->fd = fd;
	atomic_init(&rf->used_ns, fs_now_ns());
	rf->mf = memcg_real_file_create(p->task, created ? 0 : c.cached, rf);
	if (!rf->mf) {
		rf_release(rf);
		return;
	}
	pthread_mutex_lock(&files_lock);
	other = file_find(rf->dev, rf->ino);
	if (!other) {
		rf->hash_next = file_table[file_hash(rf->dev, rf->ino)];
		file_table[file_hash(rf->dev, rf->ino)] = rf;
		rf->all_next = all_files;
		if (all_files)
			all_files->all_prev = rf;
		all_files = rf;
		nr_files++;
	} else {
		mf = other->mf;
		memcg_real_file_get(mf);
	}
	pthread_mutex_unlock(&files_lock);
	if (other) {
		/* the other thread saw it first: ours goes (its release frees rf) */
		rf->dead = true;
		memcg_real_file_release(rf->mf);
		file_reused(other);
		memcg_real_file_put(mf);
	}
}

/* A member closed a file it wrote (fd: the event's, ours to close): measure it now. */
static void file_closed(int fd, const struct stat *st)
{
	struct memcg_real_file *mf;
	struct rfile *rf = file_lookup_get(st->st_dev, st->st_ino, &mf);

	close(fd);
	if (!rf)
		return;
	atomic_store(&rf->used_ns, fs_now_ns());
	pthread_mutex_lock(&rf->lock);
	if (rf->dead || file_sample_locked(rf))
		pthread_mutex_unlock(&rf->lock);
	memcg_real_file_put(mf);
}

/* Open a regular file of p for ourselves: /proc/PID/fd/N or map_files. */
/*
 * Whether the file of fd is in a page cache memcgfs charges: what
 * fs_type_cached() says of a mount, from fstatfs (block-backed, or a
 * network or stacking filesystem).  Never a FUSE file (this mount's own
 * files among them: a descriptor kept on one would hold the mount busy),
 * procfs, sysfs, tmpfs (shmem, counted in RssShmem where mapped).
 */
static bool fs_cached(const struct statfs *sfs, const struct stat *st)
{
	static const long net_or_stacked[] = {
		0x794c7630,	/* overlay */
		0x6969,		/* nfs */
		(long)0xff534d42, (long)0xfe534d42,	/* cifs, smb2 */
		0x01021997,	/* 9p */
		(long)0x9123683e,	/* btrfs (anonymous device numbers) */
		0x2fc12fc1,	/* zfs */
		0x00c36400,	/* ceph */
	};

	if ((unsigned long)sfs->f_type == 0x65735546ul)	/* FUSE */
		return false;
	if (major(st->st_dev) != 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(net_or_stacked); i++)
		if ((long)sfs->f_type == net_or_stacked[i])
			return true;
	return false;
}

static bool fd_fs_cached(int fd, const struct stat *st)
{
	struct statfs sfs;

	return !fstatfs(fd, &sfs) && fs_cached(&sfs, st);
}

static void file_adopt_path(struct proc *p, const char *path)
{
	struct stat st, st2;
	int fd;

	struct statfs sfs;

	/* never open a FIFO, a device or a file of ours: stat through the link first */
	if (stat(path, &st) || !S_ISREG(st.st_mode) || statfs(path, &sfs) || !fs_cached(&sfs, &st))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st2) || !S_ISREG(st2.st_mode) || st2.st_dev != st.st_dev ||
	    st2.st_ino != st.st_ino || !fd_fs_cached(fd, &st2)) {
		close(fd);
		return;
	}
	file_used(p, fd, &st2, false);
}

/* The files p has open or mapped now (a move into a cgroup, a rescan). */
static void scan_proc_files(struct proc *p)
{
	char path[96], line[512];
	struct dirent *de;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fd", p->pid);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", p->pid, de->d_name);
			file_adopt_path(p, path);
		}
		closedir(d);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		unsigned long long inode;

		if (sscanf(line, "%lx-%lx %*4s %*x %*x:%*x %llu", &start, &end, &inode) == 3 &&
		    inode) {
			snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", p->pid, start, end);
			file_adopt_path(p, path);
		}
		if (!strchr(line, '\n')) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
	}
	fclose(f);
}

/* ---- reclaim: memcg/real.c asks ---- */
static int rf_reclaim(void *priv, struct memcg_real_file *mf, unsigned long nr)
{
	struct rfile *rf = priv;
	struct memcg_real_cache c;
	unsigned long before, want;
	struct stat st;
	int err = 0;

	pthread_mutex_lock(&rf->lock);
	if (rf->dead || fstat(rf->fd, &st) || file_cachestat(rf->fd, &c)) {
		pthread_mutex_unlock(&rf->lock);
		return -ENOENT;
	}
	before = c.cached;
	want = nr;
	/* a range at a time from the cursor, around the file at most once */
	for (uint64_t done = 0; done < (uint64_t)st.st_size + RECLAIM_CHUNK;) {
		uint64_t len = (uint64_t)nr * alloc_page_size();

		if (len < RECLAIM_CHUNK)
			len = RECLAIM_CHUNK;
		if (rf->cursor >= (uint64_t)st.st_size)
			rf->cursor = 0;
		/* dirty pages are written back first: DONTNEED drops only clean ones */
		if (sync_file_range(rf->fd, (off_t)rf->cursor, (off_t)len,
				    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER) && errno != ESPIPE && errno != EINVAL) {
			err = -errno;
			break;
		}
		err = -posix_fadvise(rf->fd, (off_t)rf->cursor, (off_t)len, POSIX_FADV_DONTNEED);
		if (err)
			break;
		rf->cursor += len;
		done += len;
		if (file_cachestat(rf->fd, &c))
			break;
		if (c.cached + want <= before)
			break;
	}
	if (!file_cachestat(rf->fd, &c))
		memcg_real_file_update(mf, &c, true);
	pthread_mutex_unlock(&rf->lock);
	return err;
}

static const struct memcg_real_ops real_ops = {
	.reclaim = rf_reclaim,
	.release = rf_release,
};

/* ---- fanotify ---- */
/* Filesystems whose files have a page cache worth charging. */
static bool fs_type_cached(const char *type, unsigned int major)
{
	static const char *const no[] = {
		"proc", "sysfs", "cgroup", "cgroup2", "tmpfs", "devtmpfs", "devpts", "mqueue",
		"hugetlbfs", "debugfs", "tracefs", "securityfs", "pstore", "bpf", "fusectl",
		"autofs", "binfmt_misc", "configfs", "ramfs", "nsfs", "efivarfs", "rpc_pipefs",
		"selinuxfs", "sockfs", "pipefs",
	};

	if (!strncmp(type, "fuse", 4))
		return false;		/* memcgfs itself, and other FUSE daemons */
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (!strcmp(type, no[i]))
			return false;
	/* block-backed, or the network and stacking filesystems */
	return major != 0 || !strcmp(type, "overlay") || !strcmp(type, "nfs") ||
	       !strcmp(type, "nfs4") || !strcmp(type, "cifs") || !strcmp(type, "smb3") ||
	       !strcmp(type, "9p") || !strcmp(type, "virtiofs") || !strcmp(type, "btrfs") ||
	       !strcmp(type, "zfs") || !strcmp(type, "ceph");
}

/*
 * With FAN_REPORT_FID an event carries a file handle, not a descriptor:
 * the kernel opens nothing for the events of non-members, which on a busy
 * host are nearly all of them.  A member's file is opened from its handle
 * through a descriptor of a mount of its filesystem, found by fsid.
 */
#define MAX_FS	64
static struct {
	__kernel_fsid_t fsid;
	int fd;				/* a mount point of it, open */
} fs_mounts[MAX_FS];
static unsigned int nr_fs;
static bool fan_fid;
static bool fan_create;			/* creates reported with the new file's handle */
static unsigned int nr_marked;		/* filesystems watched */

static int fsid_mount_fd(const __kernel_fsid_t *fsid)
{
	for (unsigned int i = 0; i < nr_fs; i++)
		if (!memcmp(&fs_mounts[i].fsid, fsid, sizeof(*fsid)))
			return fs_mounts[i].fd;
	return -1;
}

/* Watch the filesystem mounted at mnt (once per filesystem). */
static void fan_mark_one(const char *mnt, const char *type)
{
	/*
	 * creates (a first use of a new file), opens (a first use, a
	 * reference) and the end of writes (measure again)
	 */
	const uint64_t mask = FAN_OPEN | FAN_CLOSE_WRITE | (fan_create ? FAN_CREATE : 0);
	struct statfs sfs;
	__kernel_fsid_t fsid;
	int fd;

	if (fan_fid) {
		fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fstatfs(fd, &sfs)) {
			if (fd >= 0)
				close(fd);
			return;
		}
		memcpy(&fsid, &sfs.f_fsid, sizeof(fsid));
		if (fsid_mount_fd(&fsid) >= 0 || nr_fs == MAX_FS) {
			close(fd);
			return;
		}
		if (fanotify_mark(fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD, mnt) &&
		    (!fan_create || fanotify_mark(fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
						  mask & ~(uint64_t)FAN_CREATE, AT_FDCWD, mnt))) {
			/* (a filesystem without dirent events: its opens only) */
			fs_dbg("real memory: fanotify cannot watch %s (%s): %s", mnt, type,
			       strerror(errno));
			close(fd);
			return;
		}
		fs_mounts[nr_fs].fsid = fsid;
		fs_mounts[nr_fs++].fd = fd;
		nr_marked++;
	} else if (fanotify_mark(fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD, mnt)) {
		fs_dbg("real memory: fanotify cannot watch %s (%s): %s", mnt, type, strerror(errno));
	} else {
		nr_marked++;
	}
}

/* Mark every cached filesystem mounted now (again after the mount table changed). */
static void fan_mark_mounts(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[2048], type[64];
		unsigned int maj, min;
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*d %*d %u:%u %*s %2047s", &maj, &min, mnt) != 3 ||
		    sscanf(sep + 3, "%63s", type) != 1 || !fs_type_cached(type, maj))
			continue;
		/* octal escapes in the path (\040 for a space) */
		for (char *s = mnt, *d = mnt;; s++, d++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
				*d = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
				s += 3;
			} else {
				*d = *s;
			}
			if (!*s)
				break;
		}
		fan_mark_one(mnt, type);
	}
	fclose(f);
	/*
	 * In a chroot the filesystem of our root may not be in mountinfo (its
	 * mount point lies outside the root): watch it too when it is on a
	 * block device.  A filesystem marked already is skipped (by fsid).
	 */
	{
		struct stat st;

		if (!stat("/", &st) && major(st.st_dev) != 0)
			fan_mark_one("/", "root");
	}
}

/*
 * The file of an event, opened for us: -1 when it is not a regular file we
 * can open.  Its handle is the event's FAN_EVENT_INFO_TYPE_FID record (with
 * fan_create, after a record of the parent directory and the name; a
 * create's is the new file's).  The kernel does not pad FID records to 8
 * bytes, so an event (and its records) can sit at any address in the
 * buffer: everything is copied out before it is looked at.
 */
static int fan_event_fd(const char *raw, const struct fanotify_event_metadata *ev)
{
	struct fanotify_event_info_fid fid;
	union {
		struct file_handle fh;
		char space[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	size_t off = ev->metadata_len, hlen;
	int mfd;

	if (!fan_fid)
		return ev->fd;
	for (;;) {
		if (ev->event_len < off + sizeof(fid) + sizeof(struct file_handle))
			return -1;
		memcpy(&fid, raw + off, sizeof(fid));
		if (fid.hdr.info_type == FAN_EVENT_INFO_TYPE_FID)
			break;
		if (fid.hdr.len < sizeof(fid.hdr) || fid.hdr.len > ev->event_len - off)
			return -1;
		off += fid.hdr.len;
	}
	if (fid.hdr.len < sizeof(fid) + sizeof(h.fh) || fid.hdr.len > ev->event_len - off)
		return -1;
	off += sizeof(fid);
	memcpy(&h.fh, raw + off, sizeof(h.fh));
	if (h.fh.handle_bytes > MAX_HANDLE_SZ ||
	    sizeof(fid) + sizeof(h.fh) + h.fh.handle_bytes > fid.hdr.len)
		return -1;
	hlen = h.fh.handle_bytes;
	memcpy(h.fh.f_handle, raw + off + sizeof(h.fh), hlen);
	mfd = fsid_mount_fd(&fid.fsid);
	if (mfd < 0)
		return -1;
	return open_by_handle_at(mfd, &h.fh,
				 O_RDONLY | O_CLOEXEC | O_NOATIME | O_NONBLOCK | O_NOCTTY);
}

static void fan_handle(void)
{
	char buf[8192];

	for (;;) {
		ssize_t n = read(fan_fd, buf, sizeof(buf));
		size_t off;

		if (n <= 0)
			return;
		for (off = 0; off + FAN_EVENT_METADATA_LEN <= (size_t)n;) {
			struct fanotify_event_metadata ev;
			const char *raw = buf + off;
			struct stat st;
			struct proc *p;
			int fd;

			memcpy(&ev, raw, sizeof(ev));
			if (ev.event_len < FAN_EVENT_METADATA_LEN || ev.event_len > (size_t)n - off)
				break;
			off += ev.event_len;
			if (ev.vers != FANOTIFY_METADATA_VERSION)
				continue;
			if (ev.mask & FAN_Q_OVERFLOW) {
				/* opens were lost: look at every member's files */
				if (!atomic_fetch_add(&stat_fan_overflows, 1))
					fs_info("real memory: fanotify's queue overflowed (the host "
						"opened files faster than the files thread read "
						"them): members' files are looked for in /proc, "
						"and one created meanwhile counts as opened");
				procs_mark_file_scan();
				continue;
			}
			/* the host's other processes: nothing to do (nothing opened in FID mode) */
			p = procs_get_member(ev.pid);
			if (!p) {
				if (!fan_fid && ev.fd >= 0)
					close(ev.fd);
				continue;
			}
			fd = fan_event_fd(raw, &ev);
			if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
				close(fd);
				fd = -1;
			}
			if (fd >= 0) {
				/* (the queue may have merged a create with the open that follows) */
				if (ev.mask & (FAN_CREATE | FAN_OPEN))
					file_used(p, fd, &st, ev.mask & FAN_CREATE);
				else
					file_closed(fd, &st);
			}
			proc_put(p);
		}
	}
}

/* ---- throttling (memory.high) ---- */
static void throttle_proc(struct proc *p, uint64_t delay_ns)
{
	struct throttle *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	if (procs_throttle(p, true)) {
		free(t);
		return;
	}
	memcg_task_stall_begin(p->task);
	proc_get(p);
	t->p = p;
	t->until_ns = fs_now_ns() + delay_ns;
	pthread_mutex_lock(&throttle_lock);
	t->next = throttled;
	throttled = t;
	pthread_mutex_unlock(&throttle_lock);
}

/* Resume those whose penalty is over (all: at stop).  Returns the next deadline. */
static uint64_t throttle_resume(bool all)
{
	uint64_t now = fs_now_ns(), next = UINT64_MAX;
	struct throttle *done = NULL;

	pthread_mutex_lock(&throttle_lock);
	for (struct throttle **pp = &throttled; *pp;) {
		struct throttle *t = *pp;

		if (all || t->until_ns <= now) {
			*pp = t->next;
			t->next = done;
			done = t;
		} else {
			if (t->until_ns < next)
				next = t->until_ns;
			pp = &t->next;
		}
	}
	pthread_mutex_unlock(&throttle_lock);
	while (done) {
		struct throttle *t = done;

		done = t->next;
		procs_throttle(t->p, false);
		memcg_task_stall_end(t->p->task);
		proc_put(t->p);
		free(t);
	}
	return next;
}

/* ---- the rounds ---- */
/*
 * Sample the processes of v.  In a periodic round (round != 0) a process
 * whose statm has not moved for IDLE_AFTER samples is idle and sampled
 * every second round only, half of them in each (by pid); its first sample
 * after it moves brings it back to every round.  A read's refresh
 * (round 0) samples everyone.
 */
static void sample_procs(struct proc **v, size_t n, unsigned long round)
{
	pthread_mutex_lock(&sample_lock);
	for (size_t i = 0; i < n; i++) {
		struct proc *p = v[i];
		struct real_proc *rp = p->real;

		if (!wants_sample(p))
			continue;
		if (round && rp && rp->still >= IDLE_AFTER && ((round + (unsigned long)p->pid) & 1))
			continue;
		sample_proc(p);
	}
	pthread_mutex_unlock(&sample_lock);
}

/* Files in use every round; the others every FILE_IDLE_EVERY rounds. */
static void sample_files(bool idle_too, const struct mem_cgroup *under)
{
	struct {
		struct rfile *rf;
		struct memcg_real_file *mf;
	} *v = NULL;
	uint64_t now = fs_now_ns();
	size_t n = 0;

	pthread_mutex_lock(&files_lock);
	if (nr_files)
		v = malloc(nr_files * sizeof(*v));
	for (struct rfile *rf = all_files; v && rf; rf = rf->all_next) {
		if (!idle_too && now - atomic_load(&rf->used_ns) >= FILE_GRACE_NS)
			continue;
		if (under && !mem_cgroup_is_descendant(memcg_real_file_memcg(rf->mf), under))
			continue;
		/* our reference keeps rf (memcg/real.c frees it at the last) */
		memcg_real_file_get(rf->mf);
		v[n].rf = rf;
		v[n++].mf = rf->mf;
	}
	pthread_mutex_unlock(&files_lock);
	for (size_t i = 0; i < n; i++) {
		struct rfile *rf = v[i].rf;

		pthread_mutex_lock(&rf->lock);
		/* a file dropped while sampled comes back unlocked */
		if (rf->dead || file_sample_locked(rf))
			pthread_mutex_unlock(&rf->lock);
		memcg_real_file_put(v[i].mf);
	}
	free(v);
}

/* Memcgs over max anywhere: reclaim, then OOM (may wait for writeback). */
static void enforce_all(void)
{
	struct mem_cgroup **v = NULL;
	size_t n = 0, cap = 0;

	pthread_rwlock_rdlock(&fs_tree_lock);
	for (struct cgroup *cg = fs_root; cg;) {
		if (cg->memcg && mem_cgroup_over_max(cg->memcg)) {
			if (n == cap) {
				size_t c = cap ? cap * 2 : 8;
				struct mem_cgroup **w = realloc(v, c * sizeof(*w));

				if (!w)
					break;
				v = w;
				cap = c;
			}
			mem_cgroup_get(cg->memcg);
			v[n++] = cg->memcg;
		}
		/* pre-order walk */
		if (cg->first_child) {
			cg = cg->first_child;
			continue;
		}
		while (cg && !cg->next_sibling)
			cg = cg->parent;
		if (cg)
			cg = cg->next_sibling;
	}
	pthread_rwlock_unlock(&fs_tree_lock);
	for (size_t i = 0; i < n; i++) {
		memcg_real_enforce(v[i]);
		mem_cgroup_put(v[i]);
	}
	free(v);
}

/* memory.high: members that owe pages pay: reclaim now, stopped for the penalty. */
static void handle_high(struct proc **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct proc *p = v[i];
		uint64_t delay;

		if (proc_exited(p) || !memcg_task_pages_over_high(p->task))
			continue;
		delay = memcg_handle_over_high(p->task);
		if (delay)
			throttle_proc(p, delay);
	}
}

static void round_work(bool sample, unsigned long round)
{
	struct proc **v = NULL;
	size_t n = 0;

	if (procs_collect(NULL, &v, &n))
		return;
	if (sample) {
		sample_procs(v, n, round);
		sample_files(round % FILE_IDLE_EVERY == 0, NULL);
	}
	/* descriptors and mappings of processes just moved in (or all: no fanotify) */
	for (size_t i = 0; i < n; i++) {
		struct proc *p = v[i];

		if (!proc_member(p) || proc_exited(p))
			continue;
		if (procs_take_file_scan(p) ||
		    (sample && !use_fanotify && round % FD_SCAN_EVERY == 1))
			scan_proc_files(p);
	}
	enforce_all();
	handle_high(v, n);
	procs_put_all(v, n);
}

static void *realmem_main(void *arg)
{
	uint64_t next_sample = fs_now_ns();
	unsigned long round = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "memcgfs-real");
	while (!atomic_load(&stopping)) {
		struct epoll_event ev[8];
		uint64_t now = fs_now_ns(), next_resume, deadline, req;
		int timeout, nev;
		bool sample;

		next_resume = throttle_resume(false);
		deadline = next_sample < next_resume ? next_sample : next_resume;
		now = fs_now_ns();
		timeout = deadline <= now ? 0 : (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		nev = epoll_wait(ep_fd, ev, 8, timeout);
		for (int i = 0; i < nev; i++) {
			uint64_t cnt;

			if (ev[i].data.u32 == TAG_WAKE && read(wake_fd, &cnt, sizeof(cnt)) < 0) {
				/* EAGAIN: another wake already took it */
			}
		}
		if (atomic_load(&stopping))
			break;
		req = atomic_load(&enforce_requested);
		now = fs_now_ns();
		sample = now >= next_sample;
		if (sample) {
			round++;
			next_sample += interval_ns;
			if (next_sample < now)
				next_sample = now + interval_ns;
		}
		round_work(sample, round);
		atomic_store(&enforce_done, req);
		waitq_wake(&enforce_wq);
	}
	return NULL;
}

/*
 * The files thread: opens and closes as fanotify reports them, at once,
 * apart from the rounds (an enforcement may wait for writeback): a file's
 * first use is measured while the member has read little of it yet.
 */
static void *realmem_files_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "memcgfs-files");
	for (;;) {
		struct epoll_event ev[4];
		int nev = epoll_wait(fan_ep_fd, ev, 4, -1);

		if (atomic_load(&stopping))
			break;
		for (int i = 0; i < nev; i++) {
			if (ev[i].data.u32 == TAG_FAN)
				fan_handle();
			else if (ev[i].data.u32 == TAG_MOUNTS)
				fan_mark_mounts();
		}
		/*
		 * The whole host's opens come through here: take them half a
		 * millisecond's worth at a time (a wake-up per open costs more
		 * than the events).  What a member reads of a file it did not
		 * create before its open is seen counts as someone else's:
		 * this bounds it (on a quiet host).
		 */
		usleep(fan_batch_us);
	}
	return NULL;
}

/* ---- reads ---- */
/*
 * realmem_refresh - a read of cg's usage files: sample its subtree's
 * members (and the files they have open) unless that was done in the last
 * REFRESH_NS.  Returns 0, or an enforcement round to wait for (a memcg
 * is over its max: realmem_enforced() tells when it is done).
 */
uint64_t realmem_refresh(struct cgroup *cg)
{
	struct proc **v = NULL;
	struct mem_cgroup *memcg;
	uint64_t now = fs_now_ns(), last = atomic_load(&cg->real_refreshed_ns);
	size_t n = 0;
	bool over;

	if (!real_on || (last && now - last < REFRESH_NS))
		return 0;
	atomic_store(&cg->real_refreshed_ns, now);
	if (procs_collect(cg, &v, &n))
		return 0;
	sample_procs(v, n, 0);
	pthread_rwlock_rdlock(&fs_tree_lock);
	memcg = cgroup_memcg(cg);
	mem_cgroup_get(memcg);
	pthread_rwlock_unlock(&fs_tree_lock);
	sample_files(false, memcg);
	over = memcg_real_subtree_over_max(memcg);
	for (size_t i = 0; i < n && !over; i++)
		over = memcg_task_pages_over_high(v[i]->task) > 0;
	mem_cgroup_put(memcg);
	procs_put_all(v, n);
	if (!over)
		return 0;
	/* the thread's round after this request: wait for it */
	now = atomic_fetch_add(&enforce_requested, 1) + 1;
	wake();
	return now;
}

bool realmem_enforced(uint64_t round)
{
	return atomic_load(&enforce_done) >= round;
}

struct fs_waitq *realmem_waitq(void)
{
	return &enforce_wq;
}

void realmem_stats(unsigned long *samples, unsigned long *status_reads,
		   unsigned long *file_samples, unsigned long *files)
{
	*samples = atomic_load(&stat_samples);
	*status_reads = atomic_load(&stat_status_reads);
	*file_samples = atomic_load(&stat_file_samples);
	pthread_mutex_lock(&files_lock);
	*files = nr_files;
	pthread_mutex_unlock(&files_lock);
}

/* ---- start and stop ---- */
int realmem_init(const struct memcgfs_config *conf)
{
	struct epoll_event ev = { .events = EPOLLIN };
	const char *no_fan, *lag;

	struct rlimit rl;

	real_on = conf->memcg.real_memory;
	if (!real_on)
		return 0;
	/* the daemon raised it to the hard limit already; MEMCGFS_REAL_FDS=N for tests */
	atomic_store(&fd_budget, getrlimit(RLIMIT_NOFILE, &rl) ? 256 : (long)(rl.rlim_cur / 4));
	if (getenv("MEMCGFS_REAL_FDS"))
		atomic_store(&fd_budget, strtol(getenv("MEMCGFS_REAL_FDS"), NULL, 10));
	interval_ns = (uint64_t)conf->memcg.real_interval * NSEC_PER_MSEC;
	host_page = sysconf(_SC_PAGESIZE);
	memcg_set_real_ops(&real_ops);
	ep_fd = epoll_create1(EPOLL_CLOEXEC);
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ep_fd < 0 || wake_fd < 0)
		return -errno;
	ev.data.u32 = TAG_WAKE;
	if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, wake_fd, &ev))
		return -errno;
	/* MEMCGFS_CACHESTAT=0 forces mincore(2), as before Linux 6.5 (its test) */
	if (getenv("MEMCGFS_CACHESTAT") && !strcmp(getenv("MEMCGFS_CACHESTAT"), "0")) {
		cachestat_ok = false;
		fs_info("real memory: cachestat off (MEMCGFS_CACHESTAT=0): page cache measured "
			"with mincore(2)");
	}
	/*
	 * MEMCGFS_FANOTIFY_LAG_MS=N: the files thread reads its events every N
	 * ms, as late as on a loaded host (its test)
	 */
	lag = getenv("MEMCGFS_FANOTIFY_LAG_MS");
	if (lag && *lag) {
		char *end;
		unsigned long ms = strtoul(lag, &end, 10);

		if (*end || ms < 1 || ms > 10000)
			fs_warn("real memory: MEMCGFS_FANOTIFY_LAG_MS=%s ignored: not 1 to 10000",
				lag);
		else
			fan_batch_us = (unsigned int)ms * 1000;
		fs_info("real memory: the files thread reads fanotify's events every %u us",
			fan_batch_us);
	}
	/* MEMCGFS_FANOTIFY=0 forces the /proc fallback (its test) */
	no_fan = getenv("MEMCGFS_FANOTIFY");
	if (no_fan && !strcmp(no_fan, "0")) {
		fs_info("real memory: fanotify off (MEMCGFS_FANOTIFY=0): the files members use "
			"are found every %u samples, from /proc", FD_SCAN_EVERY);
	} else {
		/*
		 * Creates with the new file's handle (Linux 5.17), else opens
		 * with handles (5.1), else a descriptor per event.
		 */
		const unsigned int base = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK;
		const unsigned int ev_flags = O_RDONLY | O_LARGEFILE | O_CLOEXEC;

		fan_fd = fanotify_init(base | FAN_REPORT_DFID_NAME_TARGET, ev_flags);
		fan_create = fan_fd >= 0;
		if (fan_fd < 0 && errno == EINVAL)
			fan_fd = fanotify_init(base | FAN_REPORT_FID, ev_flags);
		fan_fid = fan_fd >= 0;
		if (fan_fd < 0 && errno == EINVAL)
			fan_fd = fanotify_init(base, ev_flags | O_NOATIME);
	}
	if (no_fan && !strcmp(no_fan, "0")) {
		/* said above */
	} else if (fan_fd < 0) {
		fs_warn("real memory: no fanotify (%s): the files members use are found every "
			"%u samples, from /proc", strerror(errno), FD_SCAN_EVERY);
	} else {
		use_fanotify = true;
		fan_mark_mounts();
		if (!nr_marked) {
			fs_warn("real memory: fanotify watches no filesystem here: the files members "
				"use are found every %u samples, from /proc", FD_SCAN_EVERY);
			use_fanotify = false;
		}
	}
	if (use_fanotify) {
		fan_ep_fd = epoll_create1(EPOLL_CLOEXEC);
		fan_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fan_ep_fd < 0 || fan_stop_fd < 0)
			return -errno;
		ev.data.u32 = TAG_FAN;
		if (epoll_ctl(fan_ep_fd, EPOLL_CTL_ADD, fan_fd, &ev))
			return -errno;
		ev.data.u32 = TAG_WAKE;
		if (epoll_ctl(fan_ep_fd, EPOLL_CTL_ADD, fan_stop_fd, &ev))
			return -errno;
		/* the mount table changes: new filesystems to watch */
		mi_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (mi_fd >= 0) {
			struct epoll_event mev = { .events = EPOLLPRI, .data.u32 = TAG_MOUNTS };

			if (epoll_ctl(fan_ep_fd, EPOLL_CTL_ADD, mi_fd, &mev))
				fs_dbg("real memory: cannot follow mount changes: %s", strerror(errno));
		}
	}
	fs_info("real memory: on, every member sampled every %u ms; files found %s",
		conf->memcg.real_interval,
		!use_fanotify ? "from /proc" :
		fan_create ? "as they are created and opened (fanotify)" :
		"as they are opened (fanotify; before Linux 5.17 not as they are created)");
	return 0;
}

int realmem_start(void)
{
	int err;

	if (!real_on)
		return 0;
	err = pthread_create(&thread, NULL, realmem_main, NULL);
	if (err)
		return -err;
	running = true;
	if (use_fanotify) {
		err = pthread_create(&fan_thread, NULL, realmem_files_main, NULL);
		if (err)
			return -err;
		fan_running = true;
	}
	return 0;
}

/* Stop the thread; every process it stopped runs again. */
void realmem_stop(void)
{
	uint64_t one = 1;

	atomic_store(&stopping, true);
	if (fan_running) {
		if (write(fan_stop_fd, &one, sizeof(one)) < 0)
			fs_warn("real memory: cannot stop the files thread: %s", strerror(errno));
		pthread_join(fan_thread, NULL);
		fan_running = false;
	}
	if (!running)
		return;
	wake();
	pthread_join(thread, NULL);
	running = false;
	throttle_resume(true);
}

void realmem_exit(void)
{
	unsigned long samples, status_reads, file_samples, files;

	realmem_stop();
	if (!real_on)
		return;
	realmem_stats(&samples, &status_reads, &file_samples, &files);
	fs_info("real memory: %lu process samples (%lu read status), %lu file samples, %lu files "
		"known, %lu fanotify queue overflows", samples, status_reads, file_samples, files,
		atomic_load(&stat_fan_overflows));
	/* forget every file: their charges go with the machine's teardown */
	for (;;) {
		struct memcg_real_file *mf = NULL;
		struct rfile *rf;

		pthread_mutex_lock(&files_lock);
		rf = all_files;
		if (rf) {
			mf = rf->mf;
			memcg_real_file_get(mf);
		}
		pthread_mutex_unlock(&files_lock);
		if (!rf)
			break;
		pthread_mutex_lock(&rf->lock);
		if (rf->dead)
			pthread_mutex_unlock(&rf->lock);
		else
			file_drop_locked(rf);
		memcg_real_file_put(mf);
	}
	memcg_set_real_ops(NULL);
	if (fan_fd >= 0)
		close(fan_fd);
	if (mi_fd >= 0)
		close(mi_fd);
	if (wake_fd >= 0)
		close(wake_fd);
	if (ep_fd >= 0)
		close(ep_fd);
	if (fan_ep_fd >= 0)
		close(fan_ep_fd);
	if (fan_stop_fd >= 0)
		close(fan_stop_fd);
	fan_fd = mi_fd = wake_fd = ep_fd = fan_ep_fd = fan_stop_fd = -1;
	for (unsigned int i = 0; i < nr_fs; i++)
		close(fs_mounts[i].fd);
	nr_fs = 0;
	real_on = false;
}
