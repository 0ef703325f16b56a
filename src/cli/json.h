/*
 * json.h — a small streaming JSON writer for the command's --json output.
 *
 * Containers nest; commas and indentation are the writer's business. A
 * container opened with the _inline variants is written on one line (the
 * topology's per-CPU objects, for one), which keeps long outputs readable and
 * greppable. Non-finite numbers are written as null: JSON has no NaN.
 * Strings are UTF-8: a byte of one that does not begin a well-formed UTF-8
 * sequence is written as U+FFFD, so outside input cannot break the document.
 */
#ifndef CORUN_CLI_JSON_H
#define CORUN_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
    FILE *f;
    int depth;
    int inline_from;            /* depth from which output is on one line; 0 none */
    bool first[JSON_MAX_DEPTH]; /* nothing written yet in this container */
    bool after_key;
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j);
void json_obj_begin_inline(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_begin_inline(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_int(struct json *j, long long v);
void json_uint(struct json *j, unsigned long long v);
void json_double(struct json *j, double v);
/* As json_double, with the 15 significant digits a double keeps: for numbers
 * passed through rather than computed here (a Unix time in seconds needs 13). */
void json_double_full(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* Ends the document with a newline. */
void json_end(struct json *j);

/* key + value shorthands */
void json_kstr(struct json *j, const char *key, const char *s); /* NULL -> null */
void json_kint(struct json *j, const char *key, long long v);
void json_kuint(struct json *j, const char *key, unsigned long long v);
void json_kdouble(struct json *j, const char *key, double v);  /* NaN -> null */
void json_kbool(struct json *j, const char *key, bool v);
void json_knull(struct json *j, const char *key);
/* An integer, or null when @v < 0. */
void json_kint_or_null(struct json *j, const char *key, long long v);

#endif
