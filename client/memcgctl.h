/* SPDX-License-Identifier: MIT */
/*
 * client/memcgctl.h - memcgctl's private declarations: the command line's
 * shared state, cgroup files, output helpers, and the subcommands that
 * live in their own files (tree/stat/top in view.c, trace in trace.c,
 * sandbox in sandbox.c).
 */
#ifndef MEMCGFS_CLIENT_MEMCGCTL_H
#define MEMCGFS_CLIENT_MEMCGCTL_H

#include "libmemcgfs.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses (memcgctl(1)). */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* memcgfs or the system refused */
#define EXIT_USAGE	2	/* bad command line */

/* Options every subcommand takes. */
struct mctl {
	const char *prog;		/* "memcgctl" */
	const char *mount_arg;		/* -m MOUNT, or NULL */
	char mount[MEMCGFS_PATH_MAX];	/* resolved by mctl_mount() */
	bool json;
	bool bytes;			/* exact bytes instead of human-readable sizes */
};

/* A cgroup's memory files, as read once. */
struct cg_mem {
	bool has_memory;		/* memory.current exists (a memcg-enabled child) */
	uint64_t current, peak;
	uint64_t high, max;		/* UINT64_MAX: "max" */
	uint64_t ev_low, ev_high, ev_max, ev_oom, ev_oom_kill, ev_oom_group_kill;
	unsigned int nr_procs;
};

#define CG_UNLIMITED	UINT64_MAX

/* memcgctl.c: a subcommand's --help on stdout */
int mctl_help(const char *cmd);

/* Long options of every subcommand; a file's own start at MCTL_OPT_OWN. */
enum { OPT_JSON = 256, OPT_BYTES, MCTL_OPT_OWN };

/* memcgctl.c: -m, --json, --bytes, -h; 1 if handled, -1 for --help (printed) */
int mctl_common_opt(struct mctl *c, int ch, const char *cmd);

/* util.c */
const char *mctl_errname(int err);
int mctl_error(const struct mctl *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int mctl_usage_error(const struct mctl *c, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int mctl_mount(struct mctl *c);
int mctl_cgroup_path(struct mctl *c, const char *arg, char *path, size_t len);
const char *mctl_cgroup_name(const struct mctl *c, const char *path);
int mctl_read_file(const char *path, char *buf, size_t len);
int mctl_read_u64(const char *path, uint64_t *v);
int mctl_read_keyed(const char *path, const char *key, uint64_t *v);
void mctl_read_mem(const char *dir, struct cg_mem *m);
void mctl_size(const struct mctl *c, char *buf, size_t len, uint64_t v);
void mctl_limit(const struct mctl *c, char *buf, size_t len, uint64_t v);
void mctl_events(char *buf, size_t len, const struct cg_mem *m);
void json_string(FILE *f, const char *s);
void json_limit(FILE *f, uint64_t v);
bool mctl_is_subdir(const char *dir, const char *name);
int mctl_list_children(const char *dir, char ***names, size_t *n);
void mctl_free_list(char **names, size_t n);

/* view.c */
int cmd_tree(struct mctl *c, int argc, char **argv);
int cmd_stat(struct mctl *c, int argc, char **argv);
int cmd_top(struct mctl *c, int argc, char **argv);

/* trace.c */
int cmd_trace(struct mctl *c, int argc, char **argv);

/*
 * sandbox.c: this process into the sandbox's namespaces, where memcgfs
 * (c's mount) is the cgroup v2 tree, for the command executed next.
 * 0 or the exit status.
 */
int mctl_sandbox(struct mctl *c);

#endif /* MEMCGFS_CLIENT_MEMCGCTL_H */
