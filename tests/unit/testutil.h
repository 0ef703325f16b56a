/*
 * testutil.h — what the cmocka tests share: fixture paths and cmocka's
 * includes in the order it needs them.
 */
#ifndef CORUN_TESTUTIL_H
#define CORUN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

/* The path of fixture @rel (below tests/fixtures) in a static buffer. */
static inline const char *fixture(const char *rel)
{
    static char buf[4][1024];
    static int next;
    char *b = buf[next++ % 4];

    snprintf(b, sizeof(buf[0]), "%s/%s", CORUN_FIXTURES, rel);
    return b;
}

#endif
