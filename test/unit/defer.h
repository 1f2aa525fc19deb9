/* SPDX-License-Identifier: MIT */
/*
 * defer.h - the deferred checks now live in the shared fixtures
 * (test/fixture/fixture.h); kept for the tests that include it by this name.
 */
#ifndef MEMCGFS_TEST_DEFER_H
#define MEMCGFS_TEST_DEFER_H

#include "fixture.h"

#endif
