/* SPDX-License-Identifier: MIT */
/*
 * run.c - the daemon's life: daemonise, initialise (the machine, the
 * memory controller, memcgfs.ctl, the tree), mount, serve with fs.threads
 * workers, and take everything down in reverse, by gotos named after what
 * they undo (libfuse's example ladder).
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are blocked everywhere and taken by
 * a control thread with sigwait(), which stops the notifier while the
 * workers still serve its writes, then ends the session loop (waking the
 * main thread out of the loop's sem_wait with SIGUSR2).  fusermount3 -u
 * ends the loop by itself.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

static pthread_t main_thread;
static pthread_t control_thread;
static struct fuse_session *session;

static void wake_handler(int sig)
{
	(void)sig;
}

static void *control_main(void *arg)
{
	sigset_t set;
	int sig = 0;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigwait(&set, &sig) || sig == SIGUSR1)
		return NULL;		/* the loop ended on its own */
	fs_info("%s: unmounting", strsignal(sig));
	sd_notify(0, "STOPPING=1");
	/* its writes go through the mount: stop it while workers still serve */
	notify_stop();
	fuse_session_exit(session);
	pthread_kill(main_thread, SIGUSR2);
	return NULL;
}

/* Many pidfds: one per tracked process (docs/design.md "Tasks"). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Fork before any thread exists; the parent waits for the child's word
 * (0: mounted) and exits with it, so errors reach the terminal and the
 * exit status.
 */
static int daemon_fork(int *ready_fd)
{
	int fds[2];
	pid_t pid;
	char status = 1;

	if (pipe2(fds, O_CLOEXEC)) {
		fs_err("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fs_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(fds[0]);
	setsid();
	*ready_fd = fds[1];
	return 0;
}

static void daemon_ready(int ready_fd, char status)
{
	int null;

	if (ready_fd < 0)
		return;
	if (!status) {
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		fs_log_to_syslog();
	}
	if (write(ready_fd, &status, 1) != 1) {
		/* the parent is gone: nothing to tell */
	}
	close(ready_fd);
}

static int machine_init(const struct memcgfs_config *conf)
{
	struct alloc_config ac;
	struct memcg_config mc;
	int err;

	alloc_config_defaults(&ac);
	ac.memory = conf->machine.memory;
	ac.page_size = conf->machine.page_size;
	ac.cpus = conf->machine.cpus;
	ac.nodes = conf->machine.nodes;
	ac.cache_line = conf->machine.cache_line;
	ac.slub_min_order = conf->slab.min_order;
	ac.slub_max_order = conf->slab.max_order;
	ac.slub_min_objects = conf->slab.min_objects;
	ac.trace_entries = conf->trace.buffer_events;
	err = alloc_init(&ac);
	if (err) {
		fs_err("cannot build the emulated machine: %s", strerror(-err));
		return err;
	}
	memcg_config_defaults(&mc);
	mc.charge_batch = conf->memcg.charge_batch;
	mc.high_throttle = conf->memcg.high_throttle;
	mc.oom_kill_signal = conf_signal(conf->memcg.oom_kill_signal);
	mc.real_memory = conf->memcg.real_memory;
	err = memcg_init(&mc);
	if (err) {
		fs_err("cannot start the memory controller: %s", strerror(-err));
		alloc_exit();
		return err;
	}
	return 0;
}

/*
 * Whether a live memcgfs serves mnt already.  A second daemon would mount
 * over it and hide the first one's cgroups from every new lookup while its
 * clients keep charging the first: refused, as mount(8) refuses a second
 * mount of the same device.
 */
static bool memcgfs_mounted_on(const char *mnt)
{
	struct mntent ent;
	char buf[4096];
	bool found = false;
	FILE *f = setmntent("/proc/self/mounts", "r");

	if (!f)
		return false;
	while (!found && getmntent_r(f, &ent, buf, sizeof(buf)))
		found = !strcmp(ent.mnt_dir, mnt) && !strcmp(ent.mnt_type, "fuse.memcgfs");
	endmntent(f);
	return found;
}

static int check_mountpoint(const char *mnt)
{
	struct stat st;

	if (stat(mnt, &st)) {
		if (errno == ENOTCONN)
			fs_err("%s: a stale FUSE mount (its daemon died?): unmount it first with "
			       "'fusermount3 -u %s'", mnt, mnt);
		else
			fs_err("%s: %s", mnt, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fs_err("%s: not a directory", mnt);
		return -1;
	}
	if (memcgfs_mounted_on(mnt)) {
		fs_err("memcgfs is already mounted on %s: unmount it first with "
		       "'fusermount3 -u %s', or choose another mountpoint", mnt, mnt);
		return -1;
	}
	return 0;
}

int fs_run(struct fs_options *o)
{
	struct fuse_args args = FUSE_ARGS_INIT(o->fuse_argc, o->fuse_argv);
	struct fuse_loop_config *loop_cfg = NULL;
	struct sigaction sa;
	sigset_t set;
	char *end;
	unsigned long ctl_mode;
	int ready_fd = -1, err, status = 1;
	unsigned int max_handles, max_sessions, max_cgroups, max_waiting, max_open;

	fs_log_init(o->debug);
	if (strcmp(o->conf.fs.root_subtree_control, "memory") &&
	    strcmp(o->conf.fs.root_subtree_control, "")) {
		fs_err("fs.root_subtree_control: '%s' is not a controller of this hierarchy "
		       "(memory, or empty)", o->conf.fs.root_subtree_control);
		return 1;
	}
	ctl_mode = strtoul(o->conf.fs.ctl_mode, &end, 8);
	if (!o->conf.fs.ctl_mode[0] || *end || ctl_mode > 0777) {
		fs_err("fs.ctl_mode: '%s' is not an octal mode 0000..0777", o->conf.fs.ctl_mode);
		return 1;
	}
	if (check_mountpoint(o->mountpoint))
		return 1;
	raise_nofile();
	if (!o->foreground && daemon_fork(&ready_fd))
		return 1;

	/* every thread from here on inherits these blocked */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler;	/* no SA_RESTART: interrupts the loop's wait */
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	main_thread = pthread_self();

	if (machine_init(&o->conf))
		goto out_ready;
	err = ctl_init();
	if (err) {
		fs_err("cannot start memcgfs.ctl: %s", strerror(-err));
		goto out_machine;
	}
	memcg_set_free_notify(ctl_forget);
	max_handles = ctl_set_max_handles_per_uid(o->conf.fs.max_handles_per_uid);
	max_sessions = ctl_set_max_sessions_per_uid(o->conf.fs.max_sessions_per_uid);
	max_cgroups = tree_set_max_cgroups_per_uid(o->conf.fs.max_cgroups_per_uid);
	max_waiting = defer_set_max_waiting_per_uid(o->conf.fs.max_waiting_per_uid);
	max_open = ops_set_max_open_per_uid(o->conf.fs.max_open_per_uid);
	err = fs_files_init();
	if (err) {
		fs_err("too many files for a directory: %s", strerror(-err));
		goto out_ctl;
	}
	fs_files[fs_file_index("memcgfs.ctl")].mode = (unsigned int)ctl_mode;
	err = tree_init(&o->conf);
	if (err) {
		fs_err("cannot create the root cgroup: %s", strerror(-err));
		goto out_ctl;
	}
	/*
	 * Forks are followed through the proc connector, which needs root;
	 * MEMCGFS_PROC_CONNECTOR=0 forces the /proc fallback (its tests).
	 */
	{
		const char *pc = getenv("MEMCGFS_PROC_CONNECTOR");

		err = procs_init(geteuid() == 0 && !(pc && !strcmp(pc, "0")));
	}
	if (err) {
		fs_err("cannot start the process tracker: %s", strerror(-err));
		goto out_tree;
	}
	err = realmem_init(&o->conf);
	if (err) {
		fs_err("cannot start real memory accounting: %s", strerror(-err));
		goto out_procs;
	}

	session = fuse_session_new(&args, &fs_ll_ops, sizeof(fs_ll_ops), NULL);
	if (!session)
		goto out_procs;		/* libfuse said why */
	if (fuse_session_mount(session, o->mountpoint)) {
		fs_err("cannot mount on %s", o->mountpoint);
		goto out_session;
	}
	err = notify_init(o->mountpoint, session);
	if (!err)
		err = rootfiles_init();
	if (!err)
		err = defer_init();
	if (!err)
		err = procs_start();
	if (!err)
		err = realmem_start();
	if (!err)
		err = notify_start();
	if (!err)
		err = -pthread_create(&control_thread, NULL, control_main, NULL);
	if (err) {
		fs_err("cannot start the daemon's threads: %s", strerror(-err));
		goto out_threads;
	}
	if (chdir("/")) {
		/* the mountpoint is absolute: nothing depends on the cwd */
	}
	daemon_ready(ready_fd, 0);
	ready_fd = -1;
	fs_info("mounted on %s", o->mountpoint);
	/* the per-CPU fast paths' mode: rseq needs one slot per possible CPU */
	if (alloc_uses_rseq())
		fs_info("per-CPU fast paths: rseq (%u CPU slots)", alloc_nr_cpus());
	else if (alloc_built_for_tsan())
		fs_info("per-CPU fast paths: the slot locks (a TSan build, which cannot follow rseq: %u CPU slots)",
			alloc_nr_cpus());
	else
		fs_info("per-CPU fast paths: the slot locks (rseq off: %u CPU slots, the kernel's "
			"possible CPUs %ld)", alloc_nr_cpus(), sysconf(_SC_NPROCESSORS_CONF));
	fs_info("fs.max_handles_per_uid: %u live memcgfs.ctl handles per non-root uid%s",
		max_handles, o->conf.fs.max_handles_per_uid ? "" : " (1% of the host's RAM)");
	fs_info("fs.max_sessions_per_uid: %u open memcgfs.ctl files per non-root uid%s",
		max_sessions, o->conf.fs.max_sessions_per_uid ? "" : " (1% of the host's RAM)");
	fs_info("fs.max_cgroups_per_uid: %u live cgroups made per non-root uid%s",
		max_cgroups, o->conf.fs.max_cgroups_per_uid ? "" : " (1% of the host's RAM)");
	fs_info("fs.max_waiting_per_uid: %u requests set aside per non-root uid%s",
		max_waiting, o->conf.fs.max_waiting_per_uid ? "" : " (1% of the host's RAM)");
	fs_info("fs.max_open_per_uid: %u open files of the mount per non-root uid%s",
		max_open, o->conf.fs.max_open_per_uid ? "" : " (1% of the host's RAM)");
	{
		struct rlimit rl;
		long cur, budget;

		/*
		 * raise_nofile() asked for the hard limit: say what it got.  One
		 * fd budget: real memory's statm files a quarter (realmem.c),
		 * 128 for the daemon's own (FUSE, /proc reads, the control
		 * file's clients' work), the rest pidfds of tracked processes.
		 */
		cur = getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : (long)rl.rlim_cur;
		budget = cur - 128 - (o->conf.memcg.real_memory ? cur / 4 : 0);
		if (budget < 16)
			budget = 16;
		procs_set_pidfd_budget(budget);
		fs_info("RLIMIT_NOFILE: %ld of a hard limit of %ld: %ld pidfds of tracked processes%s, "
			"128 kept for the daemon", cur, (long)rl.rlim_max, budget,
			o->conf.memcg.real_memory ? ", a quarter for real memory's statm files" : "");
	}
	/* systemd's Type=notify: the mount serves from here on */
	sd_notifyf(0, "READY=1\nSTATUS=mounted on %s", o->mountpoint);

	loop_cfg = fuse_loop_cfg_create();
	if (!loop_cfg) {
		fs_err("out of memory");
		goto out_control;
	}
	fuse_loop_cfg_set_max_threads(loop_cfg, o->conf.fs.threads);
	fuse_loop_cfg_set_idle_threads(loop_cfg, o->conf.fs.threads);
	err = fuse_session_loop_mt(session, loop_cfg);
	fuse_loop_cfg_destroy(loop_cfg);
	status = err < 0 ? 1 : 0;

out_control:
	pthread_kill(control_thread, SIGUSR1);
	pthread_join(control_thread, NULL);
out_threads:
	notify_stop();
	realmem_stop();
	defer_exit();
	procs_stop();
	rootfiles_exit();
	notify_exit();
	fuse_session_unmount(session);
out_session:
	fuse_session_destroy(session);
	ops_exit();
out_procs:
	realmem_exit();
	procs_exit();
out_tree:
	tree_exit();
out_ctl:
	ctl_exit();
out_machine:
	memcg_exit();
	alloc_exit();
out_ready:
	daemon_ready(ready_fd, (char)status);
	fuse_opt_free_args(&args);
	return status;
}
