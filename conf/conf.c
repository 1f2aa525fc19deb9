// SPDX-License-Identifier: MIT
/*
 * conf: the configuration table, the INI loader (libinih), command-line
 * overrides, validation and formatting.
 *
 * Every key is one row of conf_table[], indexed by enum conf_key (in the
 * manner of mimalloc's src/options.c): section, name, type, where the value
 * lives in struct memcgfs_config, its range and default, and a help line.
 * Defaults, loading, conf_set(), per-key validation and conf_format() all
 * walk that table; adding a key is one enum entry, one row and one struct
 * field. Only the rules that relate several keys are written out, in
 * conf_validate().
 *
 * No state outside the caller's struct; nothing here locks.
 */
#include "conf.h"
#include "lib.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ini.h>

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* The buddy allocator's orders are 0..MAX_PAGE_ORDER, as in the kernel. */
#define CONF_MAX_PAGE_ORDER 10

enum conf_type {
	CONF_SIZE,	/* bytes: digits with an optional K/M/G suffix */
	CONF_UINT,	/* a count: decimal digits */
	CONF_BOOL,	/* true/false/yes/no/on/off/1/0 into a bool */
	CONF_STRING,	/* any text (possibly empty) into a char array */
};

/* Row flags. */
#define CONF_POW2 0x1u	/* the value must be a power of two */

enum conf_key {
	CONF_MACHINE_MEMORY,
	CONF_MACHINE_PAGE_SIZE,
	CONF_MACHINE_CPUS,
	CONF_MACHINE_NODES,
	CONF_MACHINE_CACHE_LINE,
	CONF_SLAB_MIN_ORDER,
	CONF_SLAB_MAX_ORDER,
	CONF_SLAB_MIN_OBJECTS,
	CONF_MEMCG_CHARGE_BATCH,
	CONF_MEMCG_HIGH_THROTTLE,
	CONF_MEMCG_OOM_KILL_SIGNAL,
	CONF_MEMCG_REAL_MEMORY,
	CONF_MEMCG_REAL_INTERVAL,
	CONF_FS_THREADS,
	CONF_FS_CTL_MODE,
	CONF_FS_ROOT_SUBTREE_CONTROL,
	CONF_FS_ALLOW_OTHER,
	CONF_FS_USER_SLICES,
	CONF_FS_MAX_HANDLES_PER_UID,
	CONF_FS_MAX_SESSIONS_PER_UID,
	CONF_FS_MAX_CGROUPS_PER_UID,
	CONF_FS_MAX_WAITING_PER_UID,
	CONF_FS_MAX_OPEN_PER_UID,
	CONF_TRACE_BUFFER_EVENTS,
	CONF_KEY_COUNT
};

/**
 * struct conf_desc - one configuration key
 * @section: INI section, without brackets
 * @name:    key name, unique across all sections
 * @type:    how the value is written and stored
 * @flags:   CONF_POW2
 * @offset:  offsetof() the field in struct memcgfs_config
 * @size:    sizeof() the field: 1, 2, 4 or 8 bytes for numbers, 1 for bool,
 *           the array size for strings
 * @min:     smallest accepted value (numbers)
 * @max:     largest accepted value (numbers)
 * @def:     default value (numbers and bool)
 * @def_str: default value (strings; CONF_ROW_STR)
 * @help:    one line for people
 */
struct conf_desc {
	const char *section;
	const char *name;
	enum conf_type type;
	unsigned int flags;
	size_t offset;
	size_t size;
	uint64_t min;
	uint64_t max;
	uint64_t def;
	const char *def_str;
	const char *help;
};

#define CONF_FIELD_SIZE(sect, nm) sizeof(((struct memcgfs_config *)0)->sect.nm)

#define CONF_ROW(id, sect, nm, typ, flg, lo, hi, dflt, hlp)		\
	[id] = {							\
		.section = #sect,					\
		.name = #nm,						\
		.type = (typ),						\
		.flags = (flg),						\
		.offset = offsetof(struct memcgfs_config, sect.nm),	\
		.size = CONF_FIELD_SIZE(sect, nm),			\
		.min = (lo),						\
		.max = (hi),						\
		.def = (dflt),						\
		.help = (hlp),						\
	}

#define CONF_ROW_STR(id, sect, nm, dflt, hlp)				\
	[id] = {							\
		.section = #sect,					\
		.name = #nm,						\
		.type = CONF_STRING,					\
		.offset = offsetof(struct memcgfs_config, sect.nm),	\
		.size = CONF_FIELD_SIZE(sect, nm),			\
		.def_str = (dflt),					\
		.help = (hlp),						\
	}

static const struct conf_desc conf_table[] = {
	CONF_ROW(CONF_MACHINE_MEMORY, machine, memory, CONF_SIZE, 0,
		 16 * MiB, 64 * GiB, 1 * GiB,
		 "emulated RAM in bytes, a multiple of page_size << 10"),
	CONF_ROW(CONF_MACHINE_PAGE_SIZE, machine, page_size, CONF_SIZE,
		 CONF_POW2, 4 * KiB, 64 * KiB, 4 * KiB,
		 "PAGE_SIZE in bytes"),
	CONF_ROW(CONF_MACHINE_CPUS, machine, cpus, CONF_UINT, 0,
		 0, 256, 0,
		 "CPU slots for per-CPU data; 0 = the host's possible CPUs"),
	CONF_ROW(CONF_MACHINE_NODES, machine, nodes, CONF_UINT, 0,
		 1, 64, 1,
		 "NUMA nodes"),
	CONF_ROW(CONF_MACHINE_CACHE_LINE, machine, cache_line, CONF_SIZE,
		 CONF_POW2, 16, 256, 64,
		 "cache_line_size() in bytes, for SLAB_HWCACHE_ALIGN"),
	CONF_ROW(CONF_SLAB_MIN_ORDER, slab, min_order, CONF_UINT, 0,
		 0, 3, 0,
		 "slub_min_order: smallest page order of a slab"),
	CONF_ROW(CONF_SLAB_MAX_ORDER, slab, max_order, CONF_UINT, 0,
		 0, CONF_MAX_PAGE_ORDER, 3,
		 "slub_max_order: largest preferred page order of a slab"),
	CONF_ROW(CONF_SLAB_MIN_OBJECTS, slab, min_objects, CONF_UINT, 0,
		 0, 32767, 0,
		 "slub_min_objects; 0 = 4 * (fls(nr_cpus) + 1)"),
	CONF_ROW(CONF_MEMCG_CHARGE_BATCH, memcg, charge_batch, CONF_UINT, 0,
		 1, 127, 64,
		 "MEMCG_CHARGE_BATCH: pages per per-CPU stock refill (at most 127)"),
	CONF_ROW(CONF_MEMCG_HIGH_THROTTLE, memcg, high_throttle, CONF_BOOL, 0,
		 0, 1, 1,
		 "memory.high delays clients by the kernel's penalty curve"),
	CONF_ROW_STR(CONF_MEMCG_OOM_KILL_SIGNAL, memcg, oom_kill_signal, "none",
		     "signal sent to an OOM victim's real process, or none"),
	CONF_ROW(CONF_MEMCG_REAL_MEMORY, memcg, real_memory, CONF_BOOL, 0,
		 0, 1, 0,
		 "charge member processes' real memory (anon, shmem, stacks, page cache)"),
	CONF_ROW(CONF_MEMCG_REAL_INTERVAL, memcg, real_interval, CONF_UINT, 0,
		 10, 60000, 200,
		 "real memory: milliseconds between two samples of every member"),
	CONF_ROW(CONF_FS_THREADS, fs, threads, CONF_UINT, 0,
		 1, 1024, 10,
		 "FUSE worker threads"),
	CONF_ROW_STR(CONF_FS_CTL_MODE, fs, ctl_mode, "0666",
		     "memcgfs.ctl's permission bits, octal"),
	CONF_ROW_STR(CONF_FS_ROOT_SUBTREE_CONTROL, fs, root_subtree_control, "memory",
		     "the root's cgroup.subtree_control at mount: memory or empty"),
	CONF_ROW(CONF_FS_ALLOW_OTHER, fs, allow_other, CONF_BOOL, 0,
		 0, 1, 1,
		 "as root: allow_other and default_permissions"),
	CONF_ROW(CONF_FS_USER_SLICES, fs, user_slices, CONF_BOOL, 0,
		 0, 1, 0,
		 "a non-root user's processes start in /user.slice/user-UID.slice"),
	CONF_ROW(CONF_FS_MAX_HANDLES_PER_UID, fs, max_handles_per_uid, CONF_UINT, 0,
		 0, 16777216, 0,
		 "live memcgfs.ctl handles per non-root uid; 0 = 1% of the host's RAM"),
	CONF_ROW(CONF_FS_MAX_SESSIONS_PER_UID, fs, max_sessions_per_uid, CONF_UINT, 0,
		 0, 1048576, 0,
		 "open memcgfs.ctl files per non-root uid; 0 = 1% of the host's RAM"),
	CONF_ROW(CONF_FS_MAX_CGROUPS_PER_UID, fs, max_cgroups_per_uid, CONF_UINT, 0,
		 0, 1048576, 0,
		 "live cgroups a non-root uid may make; 0 = 1% of the host's RAM"),
	CONF_ROW(CONF_FS_MAX_WAITING_PER_UID, fs, max_waiting_per_uid, CONF_UINT, 0,
		 0, 1048576, 0,
		 "requests of a non-root uid set aside at once; 0 = 1% of the host's RAM"),
	CONF_ROW(CONF_FS_MAX_OPEN_PER_UID, fs, max_open_per_uid, CONF_UINT, 0,
		 0, 1048576, 0,
		 "open files of the mount per non-root uid; 0 = 1% of the host's RAM"),
	CONF_ROW(CONF_TRACE_BUFFER_EVENTS, trace, buffer_events, CONF_UINT, 0,
		 16, 16777216, 65536,
		 "trace buffer capacity in events"),
};

_Static_assert(sizeof(conf_table) / sizeof(conf_table[0]) == CONF_KEY_COUNT,
	       "conf_table needs one row per enum conf_key");

/* Length of the reasons we build before prefixing them with FILE:LINE. */
#define CONF_REASON_MAX 256
/* Enough for any formatted number, with suffix. */
#define CONF_NUM_MAX 32

static void conf_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void conf_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* --- values ------------------------------------------------------------ */

static bool conf_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* The value without the white space around it: its start, *len its length. */
static const char *conf_trim(const char *s, size_t *len)
{
	while (isspace((unsigned char)*s))
		s++;
	*len = strlen(s);
	while (*len && isspace((unsigned char)s[*len - 1]))
		(*len)--;
	return s;
}

/*
 * Digits, then (if @suffix) at most one of K/M/G in either case (lib.h's
 * size_parse), with whitespace allowed only around the whole.
 */
static int conf_parse_number(const char *s, bool suffix, uint64_t *out)
{
	size_t len;

	s = conf_trim(s, &len);
	return suffix ? size_parse(s, len, out) : u64_parse(s, len, out);
}

int conf_parse_size(const char *s, uint64_t *out)
{
	if (!s)
		return -EINVAL;
	return conf_parse_number(s, true, out);
}

static int conf_parse_bool(const char *s, bool *out)
{
	static const struct {
		const char *word;
		bool value;
	} words[] = {
		{ "true", true }, { "yes", true }, { "on", true }, { "1", true },
		{ "false", false }, { "no", false }, { "off", false }, { "0", false },
	};
	size_t len;

	s = conf_trim(s, &len);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strlen(words[i].word) == len &&
		    !strncasecmp(s, words[i].word, len)) {
			*out = words[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

/* Sizes with the largest suffix that is exact ("1G", "4K", "64"). */
static void conf_format_number(const struct conf_desc *d, uint64_t v,
			       char *buf, size_t len)
{
	static const struct {
		uint64_t mult;
		char suffix;
	} units[] = { { GiB, 'G' }, { MiB, 'M' }, { KiB, 'K' } };

	if (d->type == CONF_SIZE && v) {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (v % units[i].mult == 0) {
				snprintf(buf, len, "%" PRIu64 "%c",
					 v / units[i].mult, units[i].suffix);
				return;
			}
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
}

static void *conf_field(struct memcgfs_config *c, const struct conf_desc *d)
{
	return (char *)c + d->offset;
}

static const void *conf_cfield(const struct memcgfs_config *c,
			       const struct conf_desc *d)
{
	return (const char *)c + d->offset;
}

/* The value of a number or bool field, widened. */
static uint64_t conf_get_number(const struct memcgfs_config *c,
				const struct conf_desc *d)
{
	const void *f = conf_cfield(c, d);
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	bool b;

	if (d->type == CONF_BOOL) {
		memcpy(&b, f, sizeof(b));
		return b;
	}
	switch (d->size) {
	case 1: memcpy(&u8, f, 1); return u8;
	case 2: memcpy(&u16, f, 2); return u16;
	case 4: memcpy(&u32, f, 4); return u32;
	case 8: memcpy(&u64, f, 8); return u64;
	default: return 0;
	}
}

/* Store a number or bool already checked against the row's range. */
static void conf_put_number(struct memcgfs_config *c,
			    const struct conf_desc *d, uint64_t v)
{
	void *f = conf_field(c, d);
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	bool b = v != 0;

	if (d->type == CONF_BOOL) {
		memcpy(f, &b, sizeof(b));
		return;
	}
	switch (d->size) {
	case 1: memcpy(f, &u8, 1); break;
	case 2: memcpy(f, &u16, 2); break;
	case 4: memcpy(f, &u32, 4); break;
	case 8: memcpy(f, &v, 8); break;
	default: break;
	}
}

/* A number against its row's range and flags; @shown is how to quote it. */
static int conf_check_number(const struct conf_desc *d, uint64_t v,
			     const char *shown, char *err, size_t errlen)
{
	char lo[CONF_NUM_MAX], hi[CONF_NUM_MAX];

	if (d->type == CONF_BOOL)
		return 0;
	if (v < d->min || v > d->max) {
		conf_format_number(d, d->min, lo, sizeof(lo));
		conf_format_number(d, d->max, hi, sizeof(hi));
		conf_err(err, errlen, "%s.%s: %s is out of range %s..%s",
			 d->section, d->name, shown, lo, hi);
		return -ERANGE;
	}
	if ((d->flags & CONF_POW2) && !conf_is_pow2(v)) {
		conf_err(err, errlen, "%s.%s: %s is not a power of two",
			 d->section, d->name, shown);
		return -ERANGE;
	}
	return 0;
}

/*
 * A string value must survive conf_format() and conf_load(): inih ends a
 * value at an inline comment (" ;", " #"), a line at a newline, and takes
 * ';', '#' and '[' at the start of a line as a comment or a section, so
 * printable ASCII only, without ';', '#', '[', ']' or '=' (no valid value
 * of any string key has one).  Then each key's own grammar (the checks
 * fs/run.c and conf_validate() make later, made here so that a bad -o
 * value names its key at once): @s is @n bytes, not NUL-terminated.
 */
static int conf_check_string(const struct conf_desc *d, const char *s, size_t n,
			     char *err, size_t errlen)
{
	char v[64];

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch >= 0x7f || strchr(";#[]=", ch)) {
			conf_err(err, errlen,
				 "%s.%s: byte 0x%02x at offset %zu (only printable ASCII without ';', '#', '[', ']' or '=')",
				 d->section, d->name, ch, i);
			return -EINVAL;
		}
	}
	if (n >= sizeof(v))
		return 0;	/* the caller's length check refuses it */
	memcpy(v, s, n);
	v[n] = '\0';
	if (d == &conf_table[CONF_MEMCG_OOM_KILL_SIGNAL] && conf_signal(v) < 0) {
		conf_err(err, errlen, "%s.%s: '%s' is not a signal (none, SIGKILL, KILL, 1..64)",
			 d->section, d->name, v);
		return -EINVAL;
	}
	if (d == &conf_table[CONF_FS_CTL_MODE] &&
	    (!n || strspn(v, "01234567") != n || strtoul(v, NULL, 8) > 0777)) {
		conf_err(err, errlen, "%s.%s: '%s' is not an octal mode 0000..0777",
			 d->section, d->name, v);
		return -EINVAL;
	}
	if (d == &conf_table[CONF_FS_ROOT_SUBTREE_CONTROL] && n && strcmp(v, "memory")) {
		conf_err(err, errlen,
			 "%s.%s: '%s' is not a controller of this hierarchy (memory, or empty)",
			 d->section, d->name, v);
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse @value for row @d and store it in @c; @c is untouched on error.
 * The reason is "SECTION.KEY: ...".
 */
static int conf_set_desc(struct memcgfs_config *c, const struct conf_desc *d,
			 const char *value, char *err, size_t errlen)
{
	char shown[80];
	const char *s = value;
	int len, ret;
	uint64_t v;
	bool b;

	/* Quote (at most 64 bytes of) the value without the whitespace
	 * around it. */
	while (isspace((unsigned char)*s))
		s++;
	len = (int)strnlen(s, 64);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;

	switch (d->type) {
	case CONF_STRING: {
		size_t n = strlen(s);

		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (n >= d->size) {
			conf_err(err, errlen,
				 "%s.%s: value is too long (at most %zu characters)",
				 d->section, d->name, d->size - 1);
			return -ERANGE;
		}
		ret = conf_check_string(d, s, n, err, errlen);
		if (ret)
			return ret;
		/* the whole field, so that equal configurations compare equal */
		memset(conf_field(c, d), 0, d->size);
		memcpy(conf_field(c, d), s, n);
		return 0;
	}
	case CONF_BOOL:
		if (!len) {
			conf_err(err, errlen, "%s.%s: empty value",
				 d->section, d->name);
			return -EINVAL;
		}
		if (conf_parse_bool(value, &b)) {
			conf_err(err, errlen,
				 "%s.%s: invalid boolean '%.*s' (expected true, false, yes, no, on, off, 1 or 0)",
				 d->section, d->name, len, s);
			return -EINVAL;
		}
		conf_put_number(c, d, b);
		return 0;
	case CONF_SIZE:
	case CONF_UINT:
		break;
	}

	if (!len) {
		conf_err(err, errlen, "%s.%s: empty value", d->section, d->name);
		return -EINVAL;
	}
	ret = conf_parse_number(value, d->type == CONF_SIZE, &v);
	if (ret == -ERANGE) {
		conf_err(err, errlen, "%s.%s: '%.*s' is too large",
			 d->section, d->name, len, s);
		return ret;
	}
	if (ret) {
		if (d->type == CONF_SIZE)
			conf_err(err, errlen,
				 "%s.%s: invalid size '%.*s' (expected decimal digits with an optional K, M or G suffix)",
				 d->section, d->name, len, s);
		else
			conf_err(err, errlen,
				 "%s.%s: invalid number '%.*s' (expected decimal digits)",
				 d->section, d->name, len, s);
		return ret;
	}
	snprintf(shown, sizeof(shown), "%.*s", len, s);
	ret = conf_check_number(d, v, shown, err, errlen);
	if (ret)
		return ret;
	conf_put_number(c, d, v);
	return 0;
}

/* --- lookup ------------------------------------------------------------ */

/* The row of @name, in @section if it is not NULL. */
static const struct conf_desc *conf_find(const char *section, size_t seclen,
					 const char *name)
{
	for (size_t i = 0; i < CONF_KEY_COUNT; i++) {
		const struct conf_desc *d = &conf_table[i];

		if (strcmp(d->name, name))
			continue;
		if (section && (strlen(d->section) != seclen ||
				strncmp(d->section, section, seclen)))
			continue;
		return d;
	}
	return NULL;
}

static bool conf_section_known(const char *section, size_t seclen)
{
	for (size_t i = 0; i < CONF_KEY_COUNT; i++) {
		if (strlen(conf_table[i].section) == seclen &&
		    !strncmp(conf_table[i].section, section, seclen))
			return true;
	}
	return false;
}

/* --- public: defaults, set, validate, format ---------------------------- */

void conf_defaults(struct memcgfs_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < CONF_KEY_COUNT; i++) {
		const struct conf_desc *d = &conf_table[i];

		if (d->type == CONF_STRING) {
			if (d->def_str)
				snprintf(conf_field(c, d), d->size, "%s",
					 d->def_str);
		} else {
			conf_put_number(c, d, d->def);
		}
	}
}

int conf_set(struct memcgfs_config *c, const char *key, const char *value,
	     char *err, size_t errlen)
{
	const struct conf_desc *d;
	const char *dot;

	if (!key) {
		conf_err(err, errlen, "no key");
		return -EINVAL;
	}
	dot = strchr(key, '.');
	if (dot)
		d = conf_find(key, (size_t)(dot - key), dot + 1);
	else
		d = conf_find(NULL, 0, key);
	if (!d) {
		conf_err(err, errlen, "unknown key '%s'", key);
		return -EINVAL;
	}
	if (!value) {
		conf_err(err, errlen, "%s.%s: no value", d->section, d->name);
		return -EINVAL;
	}
	return conf_set_desc(c, d, value, err, errlen);
}

int conf_validate(const struct memcgfs_config *c, char *err, size_t errlen)
{
	const struct conf_desc *mem = &conf_table[CONF_MACHINE_MEMORY];
	const struct conf_desc *minord = &conf_table[CONF_SLAB_MIN_ORDER];
	const struct conf_desc *maxord = &conf_table[CONF_SLAB_MAX_ORDER];
	char shown[CONF_NUM_MAX], block_s[CONF_NUM_MAX];
	uint64_t block;
	int ret;

	for (size_t i = 0; i < CONF_KEY_COUNT; i++) {
		const struct conf_desc *d = &conf_table[i];
		uint64_t v;

		if (d->type == CONF_STRING) {
			if (!memchr(conf_cfield(c, d), '\0', d->size)) {
				conf_err(err, errlen,
					 "%s.%s: not NUL-terminated",
					 d->section, d->name);
				return -EINVAL;
			}
			continue;
		}
		v = conf_get_number(c, d);
		conf_format_number(d, v, shown, sizeof(shown));
		ret = conf_check_number(d, v, shown, err, errlen);
		if (ret)
			return -EINVAL;
	}

	/*
	 * The arena is handed to the buddy allocator in blocks of the largest
	 * order, so it must hold a whole number of them.
	 */
	block = (uint64_t)c->machine.page_size << CONF_MAX_PAGE_ORDER;
	if (c->machine.memory % block) {
		conf_format_number(mem, c->machine.memory, shown, sizeof(shown));
		conf_format_number(mem, block, block_s, sizeof(block_s));
		conf_err(err, errlen,
			 "%s.%s: %s is not a multiple of %s (machine.page_size << %d, the largest buddy block)",
			 mem->section, mem->name, shown, block_s,
			 CONF_MAX_PAGE_ORDER);
		return -EINVAL;
	}
	/* each node gets a whole number of those blocks */
	if ((c->machine.memory / block) % c->machine.nodes) {
		const struct conf_desc *nd = &conf_table[CONF_MACHINE_NODES];

		conf_format_number(mem, c->machine.memory, shown, sizeof(shown));
		conf_format_number(mem, block, block_s, sizeof(block_s));
		conf_err(err, errlen,
			 "%s.%s: %s is not a whole number of %s blocks (the largest buddy block) for each of %s.%s = %u",
			 mem->section, mem->name, shown, block_s, nd->section, nd->name,
			 c->machine.nodes);
		return -EINVAL;
	}
	if (conf_signal(c->memcg.oom_kill_signal) < 0) {
		const struct conf_desc *d = &conf_table[CONF_MEMCG_OOM_KILL_SIGNAL];

		conf_err(err, errlen, "%s.%s: '%s' is not a signal (none, SIGKILL, KILL, 1..64)",
			 d->section, d->name, c->memcg.oom_kill_signal);
		return -EINVAL;
	}
	if (c->slab.max_order < c->slab.min_order) {
		conf_err(err, errlen,
			 "%s.%s: %u is less than %s.%s (%u)",
			 maxord->section, maxord->name, c->slab.max_order,
			 minord->section, minord->name, c->slab.min_order);
		return -EINVAL;
	}
	return 0;
}

int conf_signal(const char *name)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
		{ "ABRT", SIGABRT }, { "KILL", SIGKILL }, { "USR1", SIGUSR1 },
		{ "SEGV", SIGSEGV }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM },
		{ "STOP", SIGSTOP },
	};
	char *end;
	long n;

	if (!strcmp(name, "none"))
		return 0;
	if (isdigit((unsigned char)name[0])) {
		n = strtol(name, &end, 10);
		return *end || n < 1 || n > 64 ? -EINVAL : (int)n;
	}
	if (!strncmp(name, "SIG", 3))
		name += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(sigs[i].name, name))
			return sigs[i].sig;
	return -EINVAL;
}

struct conf_out {
	char *buf;
	size_t len;
	size_t pos;
};

static void conf_out_printf(struct conf_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void conf_out_printf(struct conf_out *o, const char *fmt, ...)
{
	bool room = o->pos < o->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL,
		      room ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

int conf_format(const struct memcgfs_config *c, char *buf, size_t len)
{
	struct conf_out o = { .buf = buf, .len = len, .pos = 0 };
	const char *section = NULL;
	char num[CONF_NUM_MAX];

	if (buf && len)
		buf[0] = '\0';
	for (size_t i = 0; i < CONF_KEY_COUNT; i++) {
		const struct conf_desc *d = &conf_table[i];

		if (!section || strcmp(section, d->section)) {
			conf_out_printf(&o, "%s[%s]\n", section ? "\n" : "",
					d->section);
			section = d->section;
		}
		switch (d->type) {
		case CONF_STRING:
			conf_out_printf(&o, "%s = %.*s\n", d->name,
					(int)strnlen(conf_cfield(c, d), d->size),
					(const char *)conf_cfield(c, d));
			break;
		case CONF_BOOL:
			conf_out_printf(&o, "%s = %s\n", d->name,
					conf_get_number(c, d) ? "true" : "false");
			break;
		case CONF_SIZE:
		case CONF_UINT:
			conf_format_number(d, conf_get_number(c, d), num,
					   sizeof(num));
			conf_out_printf(&o, "%s = %s\n", d->name, num);
			break;
		}
	}
	return o.pos > INT_MAX ? -EOVERFLOW : (int)o.pos;
}

/* --- loading ------------------------------------------------------------ */

/*
 * libinih counts one line per call of its reader, and Debian's build lacks
 * INI_HANDLER_LINENO, so the reader below hands it exactly one physical line
 * per call and remembers which: the handler runs while that line is current.
 * The reader also strips leading whitespace, which turns off inih's
 * continuation lines (an indented "key = value" would otherwise become part
 * of the previous value), and checks section headers itself, since inih
 * calls the handler only for keys.
 */
struct conf_load {
	FILE *file;
	struct memcgfs_config cfg;	/* loaded into, copied out on success */
	unsigned int lineno;		/* physical line last handed to inih */
	unsigned int err_line;		/* line of the first error seen here */
	int read_errno;
	char reason[CONF_REASON_MAX];
};

static void conf_load_error(struct conf_load *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keep only the first error: it is the one a person fixes first. */
static void conf_load_error(struct conf_load *l, const char *fmt, ...)
{
	va_list ap;

	if (l->err_line)
		return;
	l->err_line = l->lineno;
	va_start(ap, fmt);
	vsnprintf(l->reason, sizeof(l->reason), fmt, ap);
	va_end(ap);
}

static void conf_load_check_section(struct conf_load *l, const char *line)
{
	const char *end = strchr(line + 1, ']');

	/* An unterminated header is inih's syntax error. */
	if (!end)
		return;
	if (!conf_section_known(line + 1, (size_t)(end - line - 1)))
		conf_load_error(l, "unknown section '[%.*s]'",
				(int)(end - line - 1), line + 1);
}

static char *conf_ini_reader(char *str, int num, void *stream)
{
	struct conf_load *l = stream;
	size_t n = 0, max = num > 1 ? (size_t)num - 1 : 0, skip = 0;
	bool any = false, too_long = false, nul = false;
	int ch;

	while ((ch = getc(l->file)) != EOF) {
		any = true;
		if (ch == '\n')
			break;
		if (ch == '\0')
			nul = true;
		if (n < max)
			str[n++] = (char)ch;
		else
			too_long = true;
	}
	if (!any) {
		if (ferror(l->file))
			l->read_errno = errno ? errno : EIO;
		return NULL;
	}
	str[n] = '\0';
	l->lineno++;

	if (too_long || nul) {
		if (too_long)
			conf_load_error(l, "line too long (more than %zu characters)",
					max);
		else
			conf_load_error(l, "NUL character in line");
		str[0] = '\0';
		return str;
	}
	/* A UTF-8 byte order mark, as inih allows. */
	if (l->lineno == 1 && !strncmp(str, "\xEF\xBB\xBF", 3))
		skip = 3;
	while (isspace((unsigned char)str[skip]))
		skip++;
	if (skip)
		memmove(str, str + skip, n - skip + 1);
	if (str[0] == '[')
		conf_load_check_section(l, str);
	return str;
}

/* inih's convention: nonzero on success, zero on error. */
static int conf_ini_handler(void *user, const char *section, const char *name,
			    const char *value)
{
	struct conf_load *l = user;
	const struct conf_desc *d;
	char reason[CONF_REASON_MAX];

	/* A new-section call (INI_CALL_HANDLER_ON_NEW_SECTION): checked by
	 * the reader. */
	if (!name)
		return 1;
	if (!*section) {
		conf_load_error(l, "key '%s' outside any section", name);
		return 0;
	}
	if (!conf_section_known(section, strlen(section))) {
		conf_load_error(l, "unknown section '[%s]'", section);
		return 0;
	}
	d = conf_find(section, strlen(section), name);
	if (!d) {
		d = conf_find(NULL, 0, name);
		if (d)
			conf_load_error(l, "key '%s' belongs in section [%s], not [%s]",
					name, d->section, section);
		else
			conf_load_error(l, "unknown key '%s' in section [%s]",
					name, section);
		return 0;
	}
	/* INI_ALLOW_NO_VALUE builds pass NULL for a line without '='. */
	if (!value) {
		conf_load_error(l, "%s.%s: no value", d->section, d->name);
		return 0;
	}
	if (conf_set_desc(&l->cfg, d, value, reason, sizeof(reason))) {
		conf_load_error(l, "%s", reason);
		return 0;
	}
	return 1;
}

int conf_load(struct memcgfs_config *c, const char *path, char *err,
	      size_t errlen)
{
	struct conf_load l = { .cfg = *c };
	int ret;

	l.file = fopen(path, "r");
	if (!l.file) {
		ret = -errno;
		conf_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = ini_parse_stream(conf_ini_reader, &l, conf_ini_handler, &l);
	fclose(l.file);

	if (l.read_errno) {
		conf_err(err, errlen, "%s: read error: %s", path,
			 strerror(l.read_errno));
		return -l.read_errno;
	}
	if (ret < 0) {
		/* -2: inih could not allocate its line buffer. */
		conf_err(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* inih returns the first line it or the handler refused. */
	if (ret > 0 && (!l.err_line || (unsigned int)ret < l.err_line)) {
		conf_err(err, errlen,
			 "%s:%d: syntax error (expected '[section]', 'key = value' or a comment)",
			 path, ret);
		return -EINVAL;
	}
	if (l.err_line) {
		conf_err(err, errlen, "%s:%u: %s", path, l.err_line, l.reason);
		return -EINVAL;
	}
	ret = conf_validate(&l.cfg, l.reason, sizeof(l.reason));
	if (ret) {
		conf_err(err, errlen, "%s: %s", path, l.reason);
		return ret;
	}
	*c = l.cfg;
	return 0;
}
