/* SPDX-License-Identifier: MIT */
/*
 * fs/ctl/ctl.h - memcgfs.ctl, the control protocol (fs/ctl's one header).
 *
 * The text protocol of docs/design.md ("memcgfs.ctl: the control protocol") and
 * the batched ioctl whose ABI is <memcgfs/ctl.h>.  This layer knows no
 * FUSE: fs/'s handlers give it the caller and the bytes, it executes against
 * alloc/ and memcg/ and produces the reply.  Handles are opaque tokens,
 * validated (stale, double, malformed: -EINVAL; another uid's: -EPERM).
 */
#ifndef MEMCGFS_FS_CTL_H
#define MEMCGFS_FS_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct memcg_task;
struct ctl_session;

/* Who sends a request: filled by fs/ from the FUSE request and its task map. */
struct ctl_caller {
	pid_t pid;			/* thread group */
	pid_t tid;			/* the thread (fuse_req_ctx) */
	uid_t uid;
	gid_t gid;
	char comm[16];
	struct memcg_task *task;	/* the task it charges as (never NULL) */
	/*
	 * Its cgroup path, "/" or "/a/b", for whoami alone: written into buf
	 * by cgroup_of(arg, ...) when whoami asks (NULL when the caller's
	 * path is fixed), else the fixed cgroup (NULL: "/").  ctl_caller_cgroup()
	 * reads it.
	 */
	int (*cgroup_of)(const void *arg, char *buf, size_t len);
	const void *cgroup_arg;
	const char *cgroup;
};

/*
 * ctl_caller_cgroup - the caller's cgroup path as whoami reports it, at the
 * time of the call, into *path: buf (len bytes) receives it when it has to
 * be built.  0, or -ENAMETOOLONG when it does not fit (the kernel's
 * /proc/PID/cgroup fails the same way past PATH_MAX).
 */
int ctl_caller_cgroup(const struct ctl_caller *c, char *buf, size_t len, const char **path);

int ctl_init(void);
void ctl_exit(void);
/*
 * ctl_set_max_handles_per_uid - fs.max_handles_per_uid: the live handles a
 * non-root uid may hold (past it a request fails with EDQUOT); 0 chooses
 * 1% of the host's RAM in handle entries (at least 65536).  Returns the
 * cap in force.
 */
unsigned int ctl_set_max_handles_per_uid(unsigned int max);
/*
 * ctl_set_max_sessions_per_uid - fs.max_sessions_per_uid: the memcgfs.ctl
 * file descriptions a non-root uid may have open (past it open fails with
 * EMFILE); 0 chooses 1% of the host's RAM in sessions holding the longest
 * reply (at least 1024).  Returns the cap in force.
 */
unsigned int ctl_set_max_sessions_per_uid(unsigned int max);

/* One session per open file description of memcgfs.ctl. */
struct ctl_session *ctl_session_new(void);
/*
 * ctl_session_open - a session counted for uid (root is never counted):
 * NULL and *err -EMFILE when uid already has fs.max_sessions_per_uid open,
 * or -ENOMEM.  ctl_session_free gives the count back.
 */
struct ctl_session *ctl_session_open(uid_t uid, int *err);
void ctl_session_free(struct ctl_session *s);

/*
 * ctl_request - execute one request (one write(2): the bytes, a trailing
 * "\n" optional; more than one line, a NUL byte or more than 4096 bytes is
 * -EINVAL).  The reply ("ok ..." or "error ERRNAME detail") replaces any
 * unread one.  Returns 0 or the negative errno the write fails with.
 */
int ctl_request(struct ctl_session *s, const struct ctl_caller *who,
		const char *buf, size_t len);

/*
 * ctl_read - the session's pending reply, successive reads continuing
 * where the last one stopped; 0 bytes when none is pending or all of it
 * was read.
 */
size_t ctl_read(struct ctl_session *s, char *buf, size_t len);

/*
 * ctl_read_at - the pending reply from its byte pos on (0 bytes at or
 * past its end); ctl_read continues after it.  The reply stays whole until
 * the next request, so bytes read once can be read again.
 */
size_t ctl_read_at(struct ctl_session *s, uint64_t pos, char *buf, size_t len);

/*
 * ctl_ioctl - one batch (<memcgfs/ctl.h>): in_buf/in_len as the kernel
 * copied them (the whole struct), the results written into out_buf (same
 * size).  Returns 0 (each operation has its own result) or -errno for a
 * malformed batch (bad command, size, count, version).
 */
int ctl_ioctl(const struct ctl_caller *who, unsigned int cmd,
	      const void *in_buf, size_t in_len, void *out_buf, size_t out_len);

/*
 * ctl_forget - memory that memcgfs freed on its own (a task's pages at
 * exit or OOM kill, objects a shrinker took): its handles go stale.
 */
void ctl_forget(const void *addr);

/*
 * ctl_check - the handle table's invariants (memcgfs.check): the free list,
 * live count and address index agree with the entries; each shrinker list
 * is well linked and counts its live entries, and the lists' references
 * are the handles naming them.  0, or -EUCLEAN and the first violation.
 */
int ctl_check(char *msg, size_t len);

/*
 * Counters per non-root uid (issue 14's per-uid caps), a chained hash of
 * counters freed at zero; total: all of them.  The owner locks.  (uid.c; fs/ uses them for its caps too.)
 */
#define FS_UID_BUCKETS	256u
struct fs_uid_count;
struct fs_uid_counts {
	struct fs_uid_count *tab[FS_UID_BUCKETS];
	uint32_t total;
};
uint32_t fs_uid_count(const struct fs_uid_counts *uc, uid_t uid);	/* 0 for root */
/* n more (or fewer, n < 0) for uid; root is never counted.  -ENOMEM. */
int fs_uid_count_add(struct fs_uid_counts *uc, uid_t uid, long n);
/* Every counter's (uid, n), for checkers; stops at fn's nonzero return. */
int fs_uid_count_each(const struct fs_uid_counts *uc, int (*fn)(uid_t uid, uint32_t n, void *arg),
		      void *arg);
void fs_uid_counts_clear(struct fs_uid_counts *uc);
/* What the caps' 0 means: 1% of the host's RAM in units of unit bytes, in min..max. */
unsigned int fs_host_share(uint64_t unit, unsigned int min, unsigned int max);

#endif
