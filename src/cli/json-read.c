/*
 * json-read.c — a recursive-descent JSON reader (see json-read.h). Small and
 * strict: it reads what corun's own daemon writes, and refuses the rest with
 * -EINVAL rather than guessing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json-read.h"

#define JV_MAX_DEPTH 64

struct rd {
    const char *p;
    int depth;
};

static void ws(struct rd *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static int put_utf8(char *out, size_t *n, unsigned long cp)
{
    if (cp == 0)
        return -EINVAL;
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xc0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*n)++] = (char)(0xe0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
    return 0;
}

static int parse_str(struct rd *r, char **out)
{
    const char *start = ++r->p;
    size_t cap = 0, n = 0;
    char *s;

    /* The decoded string is never longer than the escaped one. */
    while (*r->p && *r->p != '"') {
        if (*r->p == '\\' && r->p[1])
            r->p++;
        r->p++;
    }
    if (*r->p != '"')
        return -EINVAL;
    cap = (size_t)(r->p - start) + 1;
    s = malloc(cap);
    if (!s)
        return -ENOMEM;
    for (const char *q = start; q < r->p; q++) {
        if (*q != '\\') {
            s[n++] = *q;
            continue;
        }
        q++;
        switch (*q) {
        case 'n':
            s[n++] = '\n';
            break;
        case 't':
            s[n++] = '\t';
            break;
        case 'r':
            s[n++] = '\r';
            break;
        case 'b':
            s[n++] = '\b';
            break;
        case 'f':
            s[n++] = '\f';
            break;
        case 'u': {
            char hex[5] = {0};

            for (int i = 0; i < 4; i++)
                if (!(hex[i] = q[i + 1]))
                    goto out_bad;
            if (put_utf8(s, &n, strtoul(hex, NULL, 16)))
                goto out_bad;
            q += 4;
            break;
        }
        default:
            s[n++] = *q;
            break;
        }
    }
    s[n] = '\0';
    r->p++;
    *out = s;
    return 0;
out_bad:
    free(s);
    return -EINVAL;
}

static int parse_value(struct rd *r, struct jv *v);

/* Parses the items of an array or object into @v. */
static int parse_items(struct rd *r, struct jv *v, bool object)
{
    size_t cap = 0;
    char close = object ? '}' : ']';

    r->p++;
    ws(r);
    if (*r->p == close) {
        r->p++;
        return 0;
    }
    for (;;) {
        int err;

        if (v->n == cap) {
            size_t c = cap ? cap * 2 : 8;
            struct jv *ni = realloc(v->items, c * sizeof(*ni));
            char **nk;

            if (!ni)
                return -ENOMEM;
            v->items = ni;
            if (object) {
                nk = realloc(v->keys, c * sizeof(*nk));
                if (!nk)
                    return -ENOMEM;
                v->keys = nk;
            }
            cap = c;
        }
        memset(&v->items[v->n], 0, sizeof(v->items[0]));
        ws(r);
        if (object) {
            if (*r->p != '"')
                return -EINVAL;
            v->keys[v->n] = NULL;
            err = parse_str(r, &v->keys[v->n]);
            if (err)
                return err;
            ws(r);
            if (*r->p++ != ':') {
                free(v->keys[v->n]);
                return -EINVAL;
            }
        }
        err = parse_value(r, &v->items[v->n]);
        v->n++; /* counted even on failure, so that jv_free releases it */
        if (err)
            return err;
        ws(r);
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        if (*r->p != close)
            return -EINVAL;
        r->p++;
        return 0;
    }
}

static int parse_value(struct rd *r, struct jv *v)
{
    int err;

    ws(r);
    memset(v, 0, sizeof(*v));
    switch (*r->p) {
    case '{':
    case '[':
        if (++r->depth > JV_MAX_DEPTH)
            return -EINVAL;
        v->type = *r->p == '{' ? JV_OBJ : JV_ARR;
        err = parse_items(r, v, v->type == JV_OBJ);
        r->depth--;
        return err;
    case '"':
        v->type = JV_STR;
        return parse_str(r, &v->str);
    case 't':
    case 'f':
        v->type = JV_BOOL;
        v->b = *r->p == 't';
        if (strncmp(r->p, v->b ? "true" : "false", v->b ? 4 : 5))
            return -EINVAL;
        r->p += v->b ? 4 : 5;
        return 0;
    case 'n':
        if (strncmp(r->p, "null", 4))
            return -EINVAL;
        r->p += 4;
        return 0;
    default: {
        char *end;

        v->type = JV_NUM;
        v->num = strtod(r->p, &end);
        if (end == r->p)
            return -EINVAL;
        r->p = end;
        return 0;
    }
    }
}

static void free_inner(struct jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void jv_free(struct jv *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

int jv_parse(const char *text, struct jv **out)
{
    struct rd r = {.p = text};
    struct jv *v = calloc(1, sizeof(*v));
    int err;

    *out = NULL;
    if (!v)
        return -ENOMEM;
    err = parse_value(&r, v);
    ws(&r);
    if (!err && *r.p)
        err = -EINVAL;
    if (err) {
        jv_free(v);
        return err;
    }
    *out = v;
    return 0;
}

const struct jv *jv_get(const struct jv *obj, const char *key)
{
    if (!obj || obj->type != JV_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key))
            return &obj->items[i];
    return NULL;
}

double jv_num(const struct jv *v)
{
    return v && v->type == JV_NUM ? v->num : NAN;
}

const char *jv_str(const struct jv *v)
{
    return v && v->type == JV_STR ? v->str : NULL;
}
