/* SPDX-License-Identifier: MIT */
/*
 * lib: what every layer of memcgfs uses and none owns, as the kernel's lib/
 * holds it: formatting into a caller's buffer (seq_buf), the invariant
 * checkers' failure, and the parsers of what a user writes (strstrip,
 * kstrtoint, memparse, and the protocol's and configuration's SIZE).
 * A leaf: it needs nothing of memcgfs.  The daemon's layers link the lib
 * library; libmemcgfs links only lib_size (the SIZE parser, size.c).
 * Errors are negative errno values.
 */
#ifndef MEMCGFS_LIB_H
#define MEMCGFS_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- formatting into a caller's buffer (the kernel's seq_buf) ---- */
/*
 * Appends with snprintf semantics: what does not fit is dropped, pos keeps
 * counting, so the caller learns the full length.  buf stays NUL-terminated.
 */
struct seq_buf {
	char *buf;
	size_t len, pos;
};
void seq_buf_init(struct seq_buf *s, char *buf, size_t len);
void seq_buf_printf(struct seq_buf *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The same semantics without printf's machinery, for the files read often
 * (memory.stat, memory.events): a string, then a space and a decimal
 * number and the closing character; vsnprintf's per-call setup was most of
 * the daemon's own time in a "cat memory.stat".
 */
void seq_buf_puts(struct seq_buf *s, const char *str);
void seq_buf_put_keyn_u64(struct seq_buf *s, const char *key, size_t keylen, char sep,
			  unsigned long long v, char end);
static inline void seq_buf_put_key_u64(struct seq_buf *s, const char *key, char sep,
				       unsigned long long v, char end)
{
	seq_buf_put_keyn_u64(s, key, __builtin_strlen(key), sep, v, end);
}

/*
 * check_fail - what every layer's invariant checker returns on a violation:
 * the description printf'd into msg (when msg and len), -EUCLEAN.
 */
int check_fail(char *msg, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- parsing what a user writes (string.c, cmdline.c, size.c) ---- */
/* The kernel's strstrip(): leading and trailing whitespace removed, in place. */
char *strstrip(char *s);
/*
 * kstrtoint0 - the kernel's kstrtoint(s, 0, out): an optional sign, then
 * base 0 digits ("0x" hex, "0" octal) to the end, one trailing "\n"
 * allowed.  -EINVAL, or -ERANGE outside int.
 */
int kstrtoint0(const char *s, int *out);
/*
 * memparse - the kernel's memparse(): simple_strtoull(s, end, 0) (wrapping
 * on overflow, as the kernel's does), then at most one of K, M, G, T, P, E
 * (either case, 1024-based).  *end is where parsing stopped; an empty
 * number is 0.  The memory controller's files take their sizes so.
 */
unsigned long long memparse(const char *s, const char **end);
/*
 * simple_strtol0 - the kernel's simple_strtol(s, end, 0) on a 64-bit long:
 * an optional '-' (not '+'), then simple_strtoull's base 0 digits,
 * wrapping.  *end is where parsing stopped: past a lone '-' too (the
 * kernel's reads "-" as 0), at s when nothing was read.  What
 * match_token()'s "%d" and match_int() read (memory.reclaim's swappiness=).
 */
long simple_strtol0(const char *s, const char **end);
/*
 * size_parse - memcgfs's own SIZE (memcgfs.ctl, memcgfs.ini, memcgctl):
 * the len bytes at s are decimal digits and at most one K, M or G (either
 * case, 1024-based) at the end; nothing else (no sign, space, hex, or other
 * suffix).  -EINVAL for anything else (and a NULL s), -ERANGE for a
 * well-formed size beyond 64 bits.  u64_parse - the same without a suffix.
 */
int size_parse(const char *s, size_t len, uint64_t *out);
int u64_parse(const char *s, size_t len, uint64_t *out);
/*
 * hex_parse - a memcgfs.ctl handle: 1 to maxlen hex digits (either case),
 * nothing else (no "0x", sign or space).  -EINVAL otherwise (and a NULL s).
 */
int hex_parse(const char *s, size_t maxlen, uint64_t *out);

#endif /* MEMCGFS_LIB_H */
