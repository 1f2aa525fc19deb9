/* SPDX-License-Identifier: MIT */
/*
 * wrap.c - the FAULT_MALLOC site: a binary linked with
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup
 * (fault_wrap_link_args in fault/meson.build) sends the calls of its own
 * objects and static libraries here (libc's internal calls and shared
 * libraries stay as they are).  A failed call returns NULL with errno
 * ENOMEM, as glibc's does.
 */
#include "fault.h"

#include <errno.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t size)
{
	if (fault_should_fail(FAULT_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (fault_should_fail(FAULT_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	/* realloc(p, 0) frees (glibc): nothing to fail */
	if (size && fault_should_fail(FAULT_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	if (fault_should_fail(FAULT_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strdup(s);
}
