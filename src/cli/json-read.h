/*
 * json-read.h — a small JSON reader for what the command receives (the
 * daemon's status over its socket): the whole text becomes a tree of values.
 * Numbers are doubles; strings are NUL-terminated (a \u0000 escape is refused).
 */
#ifndef CORUN_CLI_JSON_READ_H
#define CORUN_CLI_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
    enum jv_type type;
    bool b;
    double num;
    char *str;        /* JV_STR */
    size_t n;         /* JV_ARR, JV_OBJ: number of items */
    struct jv *items; /* JV_ARR, JV_OBJ */
    char **keys;      /* JV_OBJ: the key of each item */
};

/* Parses @text into *@out. 0, or -EINVAL (malformed, or nested deeper than
 * 64), -ENOMEM. */
int jv_parse(const char *text, struct jv **out);
void jv_free(struct jv *v);
/* The member @key of object @obj, or NULL (also when @obj is not an object). */
const struct jv *jv_get(const struct jv *obj, const char *key);
/* The number at @v, or NaN when it is absent, null or not a number. */
double jv_num(const struct jv *v);
/* The string at @v, or NULL. */
const char *jv_str(const struct jv *v);

#endif
