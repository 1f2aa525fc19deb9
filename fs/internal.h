/* SPDX-License-Identifier: MIT */
/*
 * fs/internal.h - declarations shared by fs/'s files (private to fs/).
 *
 * fs/ is the FUSE glue (docs/design.md "Layers"): it holds no memory-management
 * logic.  A request is routed by ops.c to the cgroup tree (tree.c), a
 * file's handler (cgroup_files.c for cgroup core files, memcg's table for
 * memory.*, rootfiles.c for memcgfs's own files), the process tracker
 * (procs_track.c; procs.c for the cgroup files), the deferred-reply
 * facility (defer.c) or change notification (notify.c).  Errors are negative errno values everywhere below ops.c;
 * only ops.c and the deferred completions turn them into replies.
 *
 * Lock order (outermost first):
 *   a handle's lock (a read renders, a PSI file's write checks, under it)
 *   -> fs_tree_lock (rwlock: the tree, every cgroup's fields but membership;
 *      its write side, rmdir's, takes no handle's lock: what a removal does
 *      to open files waits for each one's next request, cg->psi_drains)
 *   -> procs_lock (rwlock: the process table, membership, populated)
 *   -> poll_lock, owner_lock, the notifier's and defer's queue locks (leaves)
 * memcg/ and alloc/ locks nest inside any of them; memcg's callbacks into
 * fs/ (notify, free notify) take only leaf locks.
 */
#ifndef MEMCGFS_FS_INTERNAL_H
#define MEMCGFS_FS_INTERNAL_H

#include <fuse_lowlevel.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <syslog.h>

#include "alloc.h"
#include "conf.h"
#include "ctl.h"
#include "fs.h"
#include "lib.h"
#include "memcg.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_MSEC	1000000ull

/* ---- log.c ---- */
/*
 * Levels are syslog's.  In the foreground lines go to stderr as
 * "memcgfs: error: ...", daemonised to syslog; LOG_DEBUG only with -d.
 */
void fs_log_init(bool debug);
void fs_log_to_syslog(void);
void fs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define fs_err(...)	fs_log(LOG_ERR, __VA_ARGS__)
#define fs_warn(...)	fs_log(LOG_WARNING, __VA_ARGS__)
#define fs_info(...)	fs_log(LOG_INFO, __VA_ARGS__)
#define fs_dbg(...)	fs_log(LOG_DEBUG, __VA_ARGS__)
extern bool fs_debug;

/* ---- util.c ---- */
struct strbuf {
	char *buf;
	size_t len, cap;
};
#define STRBUF_INIT	{ NULL, 0, 0 }
int sb_reserve(struct strbuf *sb, size_t extra);
int sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

uint64_t fs_now_ns(void);		/* CLOCK_MONOTONIC */
/* Read a small file whole (NUL-terminated); returns length or -errno. */
ssize_t fs_read_file(const char *path, char *buf, size_t len);


/* ---- the file table (cgroup_files.c) ---- */
enum fs_ftype {
	FT_CORE,	/* cgroup core file: cgroup_files.c's show/write */
	FT_MEMORY,	/* memcg's memory_files[] row */
	FT_CTL,		/* memcgfs.ctl */
	FT_SLABINFO,
	FT_TRACE_PIPE,
	FT_TRACING_ON,
	FT_CHECK,	/* memcgfs.check: the invariant checks, run by a read */
	FT_ARENA,	/* memcgfs.arena: the arena's page counts; a write shrinks the caches */
};

#define FF_ROOT		0x01	/* present on the root */
#define FF_CHILD	0x02	/* present on other cgroups */
#define FF_MEMCG	0x04	/* a child has it only with its own memcg */
#define FF_PSI		0x08	/* hidden while cgroup.pressure is 0 */
#define FF_STREAM	0x10	/* not seekable, not rendered per open */
#define FF_PROCS	0x20	/* records the opener's groups (cgroup.procs, .threads) */

/* Files that notify (kernfs_notify): an index into a cgroup's counters. */
enum fs_notify_file {
	NF_CGROUP_EVENTS, NF_MEMORY_EVENTS, NF_MEMORY_EVENTS_LOCAL, NF_MEMORY_SWAP_EVENTS,
	NF_MEMORY_PRESSURE,	/* a PSI trigger fired: wakes pollers only */
	NR_NOTIFY_FILES
};

struct cgroup;
struct fs_handle;
struct fs_caller;

struct fs_file {
	const char *name;
	enum fs_ftype type;
	unsigned int flags;
	unsigned int mode;		/* permission bits */
	int notify;			/* enum fs_notify_file, or -1 */
	/* FT_CORE: render the whole file / apply a write (buf NUL-terminated) */
	int (*show)(struct fs_handle *h, struct strbuf *sb);
	int (*write)(struct fs_handle *h, const struct fs_caller *who, char *buf, size_t len);
	const struct memcg_file *mf;	/* FT_MEMORY */
};

/* Inode numbers and FUSE node ids: see tree.c. */
#define FS_MAX_FILES	127
extern struct fs_file fs_files[FS_MAX_FILES];
extern unsigned int fs_nr_files;
int fs_files_init(void);
int fs_file_index(const char *name);		/* -1 when no such file */
/* Is file idx present in cg now?  fs_tree_lock held (read). */
bool fs_file_present(const struct cgroup *cg, unsigned int idx);
/* The memcg an FT_MEMORY file of cg is served by (NULL: none).  Tree lock held. */
struct mem_cgroup *fs_file_memcg(const struct cgroup *cg, const struct fs_file *f);
/* The PSI file format: "some avg10=... total=N\nfull ...\n". */
int psi_format(struct strbuf *sb, const uint64_t some_total_us, const uint64_t full_total_us,
	       const double some_avg[3], const double full_avg[3]);

/* ---- the caller of a request ---- */
struct proc;
struct fs_caller {
	fuse_req_t req;
	pid_t tid;			/* fuse_req_ctx()->pid: 0 outside our pid namespace */
	uid_t uid;
	gid_t gid;
};
void fs_caller_init(struct fs_caller *who, fuse_req_t req);

/* ---- the cgroup tree (tree.c) ---- */
struct fs_fattr {			/* a file's attributes once chowned/chmoded */
	uid_t uid;
	gid_t gid;
	mode_t mode;			/* permission bits */
	bool set;
};

struct cgroup {
	uint64_t id;			/* inode number = id << 7 | file index */
	char *name;			/* "" for the root */
	struct cgroup *parent;
	/* live children, in creation (id) order */
	struct cgroup *first_child, *last_child, *prev_sibling, *next_sibling;
	struct cgroup *hash_next;	/* the (parent, name) table */
	struct cgroup *all_next, *all_prev;	/* every cgroup not yet freed */
	unsigned int level;
	unsigned int nr_children;	/* live */
	atomic_long ref;		/* tree link, lookups, handles, children */

	/* the directory's attributes */
	uid_t uid;
	gid_t gid;
	uid_t file_uid;			/* its files' owner: the creator's, for good */
	gid_t file_gid;
	mode_t mode;
	struct timespec mtime, ctime;
	struct fs_fattr *fattr;		/* per file, allocated on the first chown/chmod */

	/* cgroup core state, under fs_tree_lock */
	bool removed;			/* rmdir'ed: dying until its last reference */
	bool subtree_memory;		/* "memory" in cgroup.subtree_control */
	bool psi;			/* cgroup.pressure */
	unsigned int psi_drains;	/* times its PSI files were drained (rmdir, cgroup.pressure 0) */
	struct cgroup *dom;		/* threaded domain: self unless threaded */
	unsigned int nr_threaded_children;
	int max_descendants, max_depth;
	unsigned int nr_descendants;	/* live */
	struct mem_cgroup *memcg;	/* its own; NULL when the parent has no +memory */

	/* freezer, under procs_lock */
	bool freeze;			/* cgroup.freeze */
	bool frozen;			/* effective: itself or an ancestor */
	uint64_t frozen_since_ns;
	uint64_t frozen_total_ns;

	/* membership, under procs_lock */
	struct proc *procs;		/* processes in this cgroup */
	unsigned long nr_procs;		/* tasks: those, and threads placed here alone */
	unsigned long nr_populated;	/* live processes at and below */
	uint64_t dead_user_ticks;	/* CPU time of exited members, this and below */
	uint64_t dead_sys_ticks;

	_Atomic uint64_t real_refreshed_ns;	/* realmem.c: members last sampled for a read */

	/* notification: kernfs's open-node event counters, starting at 1 */
	_Atomic uint64_t events[NR_NOTIFY_FILES];
	uint64_t notified_ns[NR_NOTIFY_FILES];	/* last delivery, notifier thread */
	bool notify_pending[NR_NOTIFY_FILES];
	struct fs_handle *pollers;	/* handles of notifying files, under poll_lock */

	struct fs_xattr *xattrs;	/* extended attributes of it and its files (xattr.c) */
};

extern pthread_rwlock_t fs_tree_lock;
extern struct cgroup *fs_root;
extern bool fs_user_slices;
int cgroup_user_slice(uid_t uid, gid_t gid, struct cgroup **out);

int tree_init(const struct memcgfs_config *conf);
void tree_exit(void);
/*
 * fs.max_cgroups_per_uid: live cgroups a non-root uid may have made (mkdir
 * EDQUOT past it; counted by the maker, file_uid, whoever owns them
 * later); 0 chooses 1% of the host's RAM at 16 KiB a cgroup (at least
 * 1024).  Returns the cap in force.
 */
unsigned int tree_set_max_cgroups_per_uid(unsigned int max);
void cgroup_get(struct cgroup *cg);
void cgroup_put(struct cgroup *cg);
/* A live child by name; fs_tree_lock held. */
struct cgroup *cgroup_child(const struct cgroup *parent, const char *name);
/* The memcg its tasks charge: its own or the nearest ancestor's.  Tree lock held. */
struct mem_cgroup *cgroup_memcg(const struct cgroup *cg);
/* "/" or "/a/b"; tree lock held.  Returns the length or -ENAMETOOLONG. */
int cgroup_path(const struct cgroup *cg, char *buf, size_t len);
bool cgroup_is_descendant(const struct cgroup *cg, const struct cgroup *ancestor);

/* Node ids: the cgroup's address with the file index (0: the directory). */
#define FS_NODE_IDX_MASK	127u
fuse_ino_t cgroup_nodeid(const struct cgroup *cg, unsigned int idx);
struct cgroup *nodeid_cgroup(fuse_ino_t ino, unsigned int *idx);
uint64_t cgroup_ino(const struct cgroup *cg, unsigned int idx);
/* The file's or directory's stat; tree lock held. */
void cgroup_stat(const struct cgroup *cg, unsigned int idx, struct stat *st);
void cgroup_file_owner(const struct cgroup *cg, unsigned int idx, uid_t *uid, gid_t *gid,
		       mode_t *mode);

int cgroup_mkdir(struct cgroup *parent, const char *name, mode_t mode, uid_t uid, gid_t gid,
		 struct cgroup **out);
int cgroup_rmdir(struct cgroup *parent, const char *name);
/* Attributes: chmod/chown/utimes of a directory or file (size is ignored). */
int cgroup_setattr(struct cgroup *cg, unsigned int idx, const struct stat *attr, int valid);

/*
 * kernel predicates (kernel/cgroup/cgroup.c); tree lock held.  Those that
 * count processes take procs_lock, except cgroup_can_be_thread_root()
 * whose caller holds it (procs_lock is not recursive).
 */
bool cgroup_is_threaded(const struct cgroup *cg);
bool cgroup_is_valid_domain(const struct cgroup *cg);
bool cgroup_is_thread_root(const struct cgroup *cg);
bool cgroup_can_be_thread_root(const struct cgroup *cg);
bool cgroup_is_populated(const struct cgroup *cg);

/*
 * Names that vanish (memory.* after -memory, *.pressure after
 * cgroup.pressure 0) are invalidated in the kernel's dcache before the write
 * that removed them is answered: the tree functions collect them (tree
 * lock held) and the notifier thread invalidates, then replies.
 */
struct fs_inval {
	fuse_ino_t parent;
	fuse_ino_t child;
	char name[64];
};
struct fs_inval_list {
	struct fs_inval *v;
	size_t n, cap;
};
/* The present files of cg with any of 'flags' (FF_MEMCG, FF_PSI). */
void inval_add_files(struct fs_inval_list *l, const struct cgroup *cg, unsigned int flags);
/* Submit: req is answered with 'result' bytes written afterwards. */
void notify_inval(struct fs_inval *v, size_t n, fuse_req_t req, size_t result);

/* A write handler that has answered (or set aside) the request itself. */
#define FS_REPLIED	1

/* Core files that change the tree; tree lock taken inside. */
int cgroup_subtree_control_write(struct cgroup *cg, char *buf, struct fs_inval_list *iv);
int cgroup_type_write(struct cgroup *cg, char *buf, struct fs_inval_list *iv);
int cgroup_pressure_write(struct cgroup *cg, char *buf, struct fs_inval_list *iv);

/* ---- extended attributes (xattr.c) ---- */
/*
 * trusted.* and user.* of node idx of cg (0: the directory, else 1 + the
 * file's index), as kernfs keeps them.  The caller has checked that the node
 * is there and the caller's permission, and holds fs_tree_lock (read).
 * 0 or -errno (get and list: the length); size 0 asks for the length.
 */
int fs_xattr_set(struct cgroup *cg, unsigned int idx, const char *name, const void *value,
		 size_t size, int flags);
int fs_xattr_remove(struct cgroup *cg, unsigned int idx, const char *name);
ssize_t fs_xattr_get(struct cgroup *cg, unsigned int idx, const char *name, void *buf,
		     size_t size);
/* The names, NUL-terminated one after another; trusted.* only if 'trusted'. */
ssize_t fs_xattr_list(struct cgroup *cg, unsigned int idx, bool trusted, char *buf, size_t size);
/* Nodes gone: the files with any of 'flags' (FF_MEMCG), or (0) all of cg's. */
void fs_xattr_drop(struct cgroup *cg, unsigned int flags);

/* ---- process tracking (procs_track.c) and cgroup.procs & co. (procs.c) ---- */
/*
 * A tracked process: a client that made a request, or any process in a
 * child cgroup (moved there, or forked by one that is).  Each is a memcg
 * task, watched with a pidfd.
 */
struct proc_move {
	uint64_t when_ns;		/* CLOCK_MONOTONIC of the move */
	struct cgroup *from;		/* where it was before (referenced) */
};

#define PROC_MOVES	4

/* A thread placed apart from its process (cgroup.threads, same domain). */
struct thread_pl {
	pid_t tid;
	struct cgroup *cg;		/* referenced */
	struct thread_pl *next;
};

struct proc {
	pid_t pid;			/* thread group id */
	int pidfd;
	unsigned long long start;	/* /proc start time, clock ticks after boot */
	uint64_t start_ns;		/* the same in CLOCK_MONOTONIC ns (approx.) */
	struct cgroup *cg;		/* its cgroup (the root included) */
	struct proc *cg_next, *cg_prev;
	struct proc *hash_next;
	struct memcg_task *task;
	atomic_int ref;
	bool exited;
	bool stopped;			/* SIGSTOPped by the freezer */
	bool throttled;			/* SIGSTOPped for a memory.high penalty (realmem.c) */
	bool job_stopped;		/* in a job-control stop when memcgfs held it: no SIGCONT */
	atomic_bool real_scan;		/* realmem.c: look at its files (it moved in) */
	void *real;			/* realmem.c's measuring state */
	uid_t uid;			/* real uid, for fs.user_slices */
	uid_t req_uid;			/* non-root caller it was tracked for (procs.c) */
	char comm[16];
	struct proc_move moves[PROC_MOVES];	/* newest last */
	unsigned int nr_moves;
	struct thread_pl *threads;	/* threads not in cg */
};

extern pthread_rwlock_t procs_lock;

int procs_init(bool use_connector);
void procs_exit(void);
/*
 * procs_set_pidfd_budget - how many pidfds (processes and threads) tracking
 * may hold; past it a new process stays untracked, said in the log
 * (procs_track.c: untracked_nofile).
 */
void procs_set_pidfd_budget(long budget);
/* Start the tracker thread (after daemonising). */
int procs_start(void);
void procs_stop(void);

/*
 * procs_caller - the process behind a request, tracked from now on: a
 * reference the caller drops with proc_put().  -EPERM for a request from
 * another pid namespace (pid 0), -ESRCH if it is gone.
 */
int procs_caller(const struct fs_caller *who, struct proc **out, char comm[16]);
void proc_get(struct proc *p);
void proc_put(struct proc *p);
/* Exits the kernel has already reported (pidfds readable) are applied now. */
void procs_collect_exits(void);
/* cgroup.procs / cgroup.threads: list and move. */
int procs_list(struct cgroup *cg, bool threads, struct strbuf *sb);
int procs_move(struct cgroup *dst, const struct fs_caller *who, const struct fs_handle *h,
	       char *buf, bool threads);
int procs_kill(struct cgroup *cg);
int procs_freeze(struct cgroup *cg, bool freeze);
/* cpu.stat: CPU time of the processes at and below cg, in µs. */
void procs_cputime(struct cgroup *cg, uint64_t *user_us, uint64_t *system_us, uint64_t *nice_us);
/*
 * Bring membership up to date before a listing, populated or rmdir: fork
 * events already queued, exits already reported (and, without the proc
 * connector, processes never seen).  No fs lock held.
 */
void procs_sync(void);
/*
 * Re-attach every tracked process at and below cg (down to cgroups with a
 * memcg of their own) to cgroup_memcg(): subtree_control and threaded
 * changes.  Tree lock held for writing.
 */
void procs_reattach(struct cgroup *cg);
/* An exit the tracker applied (read without procs_lock: a hint, true stays true). */
static inline bool proc_exited(const struct proc *p)
{
	return __atomic_load_n(&p->exited, __ATOMIC_ACQUIRE);
}
/* Is p in a child cgroup (a hint without procs_lock)? */
static inline bool proc_member(const struct proc *p)
{
	return __atomic_load_n(&p->cg, __ATOMIC_RELAXED) != fs_root;
}
/*
 * procs_collect - every live tracked process at and below cg (NULL: all
 * of them), referenced, in *out (procs_put_all() drops them).  0, -ENOMEM.
 */
int procs_collect(struct cgroup *cg, struct proc ***out, size_t *n);
void procs_put_all(struct proc **v, size_t n);
/* The tracked process pid if it is in a child cgroup, referenced; else NULL. */
struct proc *procs_get_member(pid_t pid);
/*
 * Stop (true) or continue (false) p for a memory.high penalty, through its
 * pidfd, minding the freezer: a frozen process stays stopped.  -ESRCH for
 * an exited one, -EPERM for PID 1 and the daemon.
 */
int procs_throttle(struct proc *p, bool stop);
/* realmem.c: look at the files of every member (fanotify lost events). */
void procs_mark_file_scan(void);
bool procs_take_file_scan(struct proc *p);

/*
 * Between procs_track.c (the tables, pidfds, /proc) and procs.c (the
 * cgroup files' semantics).  Tables and membership change under procs_lock
 * (write).
 */
/* A process's /proc/PID/stat, the fields tracking reads. */
struct pstat {
	pid_t ppid;
	char state;
	unsigned long flags;
	unsigned long long utime, stime, start;
	long nice;
	char comm[16];
};
int read_pstat(pid_t pid, struct pstat *st);
/* A thread's thread group, from /proc/TID/status (slow path only). */
pid_t read_tgid(pid_t tid);
uint64_t boottime_ns(void);
extern uint64_t tick_ns;		/* ns per clock tick of /proc's times */
static inline int pidfd_send_signal(int fd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}
/*
 * proc_untouchable - PID 1 (is_global_init()) and the daemon itself, which
 * plays the kernel and so is to memcgfs what a kernel thread is to Linux:
 * never signalled by cgroup.kill, the freezer, memory.high or the OOM
 * killer, whatever cgroup it was placed in.  (cgroup.procs refuses to move
 * the daemon, as cgroup_procs_write_start() a PF_NO_SETAFFINITY kthread.)
 */
static inline bool proc_untouchable(pid_t pid)
{
	return pid <= 1 || pid == getpid();
}
/*
 * proc_hold, proc_release - the freezer's or a memory.high penalty's stop of
 * p, and its end once neither holds it (procs_lock held, write): 0 or
 * -errno.  A process found in a job-control stop (state T: SIGSTOP,
 * SIGTSTP) is left as it is and gets no SIGCONT at the end, as the kernel's
 * thaw wakes no TASK_STOPPED task.
 */
int proc_hold(struct proc *p);
int proc_release(struct proc *p);
struct proc *proc_find(pid_t pid);
/* Track pid in cg (st: its /proc/PID/stat); NULL and *err on failure. */
struct proc *proc_track(pid_t pid, struct cgroup *cg, const struct pstat *st, bool requested,
			int *err);
/* p exited, or its pid is another process's: handled, true (procs_track.c says). */
bool proc_gone_locked(struct proc *p);
/* The cgroup of an untracked process, by its ancestors (tree lock and procs_lock). */
struct cgroup *resolve_unseen(const struct pstat *st);
void member_link(struct proc *p, struct cgroup *cg);
void member_unlink(struct proc *p);
/* The cgroup of thread tid of p; place it in dst (its process's: no placement). */
struct cgroup *thread_cgroup(struct proc *p, pid_t tid);
int thread_place(struct proc *p, pid_t tid, struct cgroup *dst);
void threads_unplace_all(struct proc *p);
/* Migrate a tracked process (cgroup_attach_task for a whole thread group). */
void proc_move_locked(struct proc *p, struct cgroup *dst);

/* ---- realmem.c: real memory (memcg.real_memory) ---- */
int realmem_init(const struct memcgfs_config *conf);
int realmem_start(void);
/* Stop the thread and continue every process it stopped. */
void realmem_stop(void);
void realmem_exit(void);
bool realmem_on(void);
/*
 * A read of cg's usage files samples its members now: 0, or an enforcement
 * round the reply waits for (realmem_enforced(), woken on realmem_waitq()).
 */
uint64_t realmem_refresh(struct cgroup *cg);
bool realmem_enforced(uint64_t round);
struct fs_waitq *realmem_waitq(void);
void realmem_proc_free(struct proc *p);
void realmem_stats(unsigned long *samples, unsigned long *status_reads,
		   unsigned long *file_samples, unsigned long *files);

/* Is the process whose thread 'tid' is our notifier? */
extern _Atomic pid_t fs_notifier_tid;

/* ---- open files (ops.c) ---- */
struct fs_handle {
	struct cgroup *cg;		/* referenced */
	unsigned int idx;
	const struct fs_file *file;
	int flags;			/* open(2) flags */
	pthread_mutex_t lock;
	/* opener's credentials (cgroup.procs, PSI triggers) */
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t *groups;
	/* rendered content (one snapshot per read at offset 0) */
	struct strbuf snap;
	bool have_snap;
	/* FT_MEMORY */
	struct memcg_open *mo;
	struct mem_cgroup *memcg;	/* the memcg it was opened on */
	/* FT_CTL */
	struct ctl_session *ctl;
	uint64_t ctl_base;		/* the file offset of the reply's first byte */
	_Atomic bool ctl_owing;		/* a write left its writer a memory.high delay */
	/* FT_TRACE_PIPE */
	struct trace_cursor cursor;
	char *trace_rest;		/* a line that did not fit the last read */
	size_t trace_rest_len;
	/* poll */
	struct fuse_pollhandle *ph;
	uint64_t ev_seen;		/* events[] when this fd last read */
	struct fs_handle *poll_next, *poll_prev;
	bool on_poll_list;
	/* PSI files: a trigger armed (memory.pressure's is memcg's, in mo) */
	bool psi_trigger;
	unsigned int psi_drains;	/* cg->psi_drains this fd's trigger lived through */
	struct fs_handle *all_next, *all_prev;	/* every open handle */
};

/* Free the handles the kernel never released (the session ended first). */
void ops_exit(void);
/* fs.max_open_per_uid (0: 1% of the host's RAM); returns the cap in force. */
unsigned int ops_set_max_open_per_uid(unsigned int max);

/* As root with fs.allow_other: the kernel checks permissions, we need not. */
extern bool fs_default_permissions;
extern const struct fuse_lowlevel_ops fs_ll_ops;

/* ---- rootfiles.c: memcgfs.ctl, slabinfo, trace_pipe, tracing_on ---- */
int rootfiles_open(struct fs_handle *h);
void rootfiles_release(struct fs_handle *h);
/* Reads and writes that reply themselves (they may defer): 0 when replied. */
void rootfiles_read(fuse_req_t req, struct fs_handle *h, size_t size, off_t off);
void rootfiles_write(fuse_req_t req, struct fs_handle *h, const char *buf, size_t size,
		     off_t off);
void rootfiles_flush(fuse_req_t req, struct fs_handle *h);
void rootfiles_ioctl(fuse_req_t req, struct fs_handle *h, unsigned int cmd,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz);
unsigned int rootfiles_poll(struct fs_handle *h);
int rootfiles_init(void);
void rootfiles_exit(void);

/* ---- defer.c: replies set aside ---- */
/*
 * A request that must wait (a blocking trace_pipe read, later a throttle
 * delay or reclaim) is set aside here instead of sleeping on a worker.
 * ready() is asked (under defer's lock, so it must not block or take fs
 * locks) whenever its wait queue is woken; complete() replies, once, with
 * why: 0 (ready), -ETIMEDOUT, -EINTR (the client was interrupted) or
 * -ESHUTDOWN.  The interrupt callback is registered with libfuse.
 */
struct fs_waitq;
struct fs_defer {
	fuse_req_t req;
	bool (*ready)(struct fs_defer *d);
	void (*complete)(struct fs_defer *d, int why);
	void *data;
	uint64_t deadline_ns;		/* 0: none */
	/* private */
	uint64_t id;
	struct fs_waitq *wq;
	struct fs_defer *next, *prev;
	bool linked;
	bool pinned;			/* being registered: nobody completes it yet */
	bool interrupted;		/* an interrupt came while pinned */
	void (*work)(struct fs_defer *d);	/* defer_run's */
	uid_t uid;			/* counted for fs.max_waiting_per_uid */
	bool counted;
	_Atomic bool stop;		/* defer_run: interrupted or shutting down */
};
struct fs_waitq {
	struct fs_defer *head;
	_Atomic bool woken;
	struct fs_waitq *next_woken;
	_Atomic int nr_waiting;
};
int defer_init(void);
void defer_exit(void);
/*
 * fs.max_waiting_per_uid: requests of one non-root uid set aside with a wait
 * queue or on a thread of their own (not a throttle's timer) at once; past
 * it, complete(d, -EAGAIN) at once.  0 chooses 1% of the host's RAM at 1 KiB
 * a request (at least 1024).  Returns the cap in force.
 */
unsigned int defer_set_max_waiting_per_uid(unsigned int max);
/* Set d aside; complete() will be called exactly once (maybe already inside). */
void defer_wait(struct fs_defer *d, struct fs_waitq *wq);
/* Ask the waiters of wq again (cheap: any thread, any lock). */
void waitq_wake(struct fs_waitq *wq);
/*
 * defer_run - work that may take long (memory.reclaim) on a thread of its
 * own, the request set aside meanwhile.  A signal to the client (or
 * shutdown) sets d->stop, which work() polls as the kernel polls
 * signal_pending(); then complete(d, 0) replies on that thread, with
 * what work() recorded.  Work that never ran: complete(d, -errno).
 */
void defer_run(struct fs_defer *d, void (*work)(struct fs_defer *d));

/* ---- notify.c: poll, inotify, dcache invalidation ---- */
int notify_init(const char *mountpoint, struct fuse_session *se);
int notify_start(void);
void notify_stop(void);
void notify_exit(void);
/* cg's notifying file changed (coalesced to one delivery per 10 ms). */
void fs_notify(struct cgroup *cg, enum fs_notify_file nf);
/* Poll registration of a handle of a notifying file. */
void notify_poll_attach(struct fs_handle *h);
void notify_poll_detach(struct fs_handle *h);
void notify_set_ph(struct fs_handle *h, struct fuse_pollhandle *ph);
/*
 * Handles kept on their cgroup's poll list: the notifying files and the
 * PSI files (whose triggers a drain destroys, waking their pollers).
 */
static inline bool notify_keeps_poller(const struct fs_file *f)
{
	return f->notify >= 0 || (f->flags & FF_PSI);
}
/*
 * cg's PSI files were drained (rmdir, cgroup.pressure 0): their triggers
 * are gone, their pollers are woken (psi_trigger_destroy()).  Call after
 * the change is visible (cg->removed or cg->psi, cg->psi_drains), without
 * fs_tree_lock.
 */
void notify_drained(struct cgroup *cg);
/* Wake a handle's poller now (trace_pipe, PSI). */
void notify_poll_handle(struct fs_handle *h);
/* Run fn on the notifier thread (it may talk to the kernel through the mount). */
void notify_call(void (*fn)(void));
/* memcg's notify callback target */
void fs_memcg_notify(struct mem_cgroup *memcg, const char *file, void *arg);
void cgroup_set_memcg(struct cgroup *cg, struct mem_cgroup *memcg);
extern struct fuse_session *fs_session;

#endif /* MEMCGFS_FS_INTERNAL_H */
