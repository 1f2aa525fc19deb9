/* SPDX-License-Identifier: MIT */
/*
 * fs: memcgfs, the filesystem.  A FUSE (libfuse 3 low-level) daemon that
 * shows the memory controller of memcg/ as a cgroup v2 tree: every
 * directory a cgroup, the kernel's files with the kernel's formats and
 * errors, cgroup.procs that moves real processes, and memcgfs.ctl through
 * which clients charge kernel-style allocations (docs/design.md "What the mount
 * shows").
 *
 * The daemon is the one user of this module: main.c parses the command
 * line into struct fs_options and calls fs_run().
 */
#ifndef MEMCGFS_FS_H
#define MEMCGFS_FS_H

#include <stdbool.h>

#include "conf.h"

struct fs_options {
	const char *mountpoint;		/* absolute */
	bool foreground;		/* -f: do not daemonise */
	bool debug;			/* -d: libfuse debug output, LOG_DEBUG */
	int fuse_argc;			/* argv for fuse_session_new (argv[0] first) */
	char **fuse_argv;
	struct memcgfs_config conf;
	/* written to once start-up succeeded or failed (the waiting parent) */
	int ready_fd;
};

/*
 * fs_run - initialise the machine and the memory controller, mount, serve
 * until unmounted or signalled (SIGINT, SIGTERM, SIGHUP), unmount.
 * Returns the process exit status (0, or 1 after an error was logged).
 */
int fs_run(struct fs_options *o);

#endif /* MEMCGFS_FS_H */
