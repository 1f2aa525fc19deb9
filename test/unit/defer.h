/* SPDX-License-Identifier: MIT */
/*
 * defer.h - the unit tests' deferred failures: a wrong value is reported at
 * once but the test goes on (so one does not hide the checks after it); the
 * teardown fails the test when deferred_failures grew.  Include after
 * <cmocka.h>.
 */
#ifndef MEMCGFS_TEST_DEFER_H
#define MEMCGFS_TEST_DEFER_H

#include <string.h>

static unsigned long deferred_failures;

/* fails the test at once */
#define EXPECT_EQ(got, exp, ...) do {					\
	unsigned long long g_ = (unsigned long long)(got);		\
	unsigned long long e_ = (unsigned long long)(exp);		\
	if (g_ != e_) {							\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error(": got %llu (%lld), expected %llu (%lld)\n", \
			    g_, (long long)g_, e_, (long long)e_);	\
		fail();							\
	}								\
} while (0)

#define DEFER_EQ(got, exp, ...) do {					\
	unsigned long long g_ = (unsigned long long)(got);		\
	unsigned long long e_ = (unsigned long long)(exp);		\
	if (g_ != e_) {							\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error(": got %llu (%lld), expected %llu (%lld)\n", \
			    g_, (long long)g_, e_, (long long)e_);	\
		deferred_failures++;					\
	}								\
} while (0)

#define DEFER_TRUE(cond, ...) do {					\
	if (!(cond)) {							\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error(" [%s is false]\n", #cond);			\
		deferred_failures++;					\
	}								\
} while (0)

#define EXPECT_TRUE(cond, ...) do {					\
	if (!(cond)) {							\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error(" [%s is false]\n", #cond);			\
		fail();							\
	}								\
} while (0)

#define DEFER_STR(got, exp, ...) do {					\
	const char *g_ = (got), *e_ = (exp);				\
	if (!g_ || strcmp(g_, e_) != 0) {				\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error(": got \"%s\", expected \"%s\"\n",		\
			    g_ ? g_ : "(null)", e_);			\
		deferred_failures++;					\
	}								\
} while (0)

#endif
