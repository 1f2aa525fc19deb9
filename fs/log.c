/* SPDX-License-Identifier: MIT */
/*
 * log.c - the daemon's messages: stderr in the foreground ("memcgfs:
 * error: ..."), syslog once daemonised; libfuse's own messages routed here.
 * The integration harness fails a test whose daemon printed an error or a
 * warning, so those two levels are for real problems only.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool fs_debug;
static _Atomic bool use_syslog;

static const char *level_name(int prio)
{
	switch (prio) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR:
		return "error: ";
	case LOG_WARNING:
		return "warning: ";
	case LOG_DEBUG:
		return "debug: ";
	default:
		return "";
	}
}

static void fs_vlog(int prio, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t n;

	if (prio == LOG_DEBUG && !fs_debug)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (atomic_load_explicit(&use_syslog, memory_order_relaxed)) {
		syslog(prio, "%s%s", level_name(prio), msg);
		return;
	}
	/* one write, so lines of several threads do not mix */
	{
		char line[1100];
		int len = snprintf(line, sizeof(line), "memcgfs: %s%s\n", level_name(prio), msg);

		if (len > (int)sizeof(line) - 1)
			len = (int)sizeof(line) - 1;
		if (write(STDERR_FILENO, line, (size_t)len) < 0) {
			/* nowhere left to say it */
		}
	}
}

void fs_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fs_vlog(prio, fmt, ap);
	va_end(ap);
}

static void fs_fuse_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	int prio;

	switch (level) {
	case FUSE_LOG_EMERG: case FUSE_LOG_ALERT: case FUSE_LOG_CRIT: case FUSE_LOG_ERR:
		prio = LOG_ERR;
		break;
	case FUSE_LOG_WARNING:
		prio = LOG_WARNING;
		break;
	case FUSE_LOG_DEBUG:
		prio = LOG_DEBUG;
		break;
	default:
		prio = LOG_INFO;
		break;
	}
	fs_vlog(prio, fmt, ap);
}

void fs_log_init(bool debug)
{
	fs_debug = debug;
	fuse_set_log_func(fs_fuse_log);
}

void fs_log_to_syslog(void)
{
	openlog("memcgfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	atomic_store(&use_syslog, true);
}
