/*
 * json.c — the streaming JSON writer (see json.h).
 */
#include <math.h>
#include <string.h>

#include "cli/json.h"

void json_init(struct json *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    j->first[0] = true;
}

static bool is_inline(const struct json *j)
{
    return j->inline_from && j->depth >= j->inline_from;
}

/* Writes what goes before a value: a comma and a new line as needed. */
static void before_value(struct json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0)
        return;
    if (!j->first[j->depth])
        fputc(',', j->f);
    if (is_inline(j)) {
        if (!j->first[j->depth])
            fputc(' ', j->f);
    } else {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    j->first[j->depth] = false;
}

static void open_container(struct json *j, char c, bool inl)
{
    before_value(j);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = true;
    if (inl && !j->inline_from)
        j->inline_from = j->depth;
}

static void close_container(struct json *j, char c)
{
    bool was_inline = is_inline(j), empty = j->first[j->depth];

    if (j->inline_from == j->depth)
        j->inline_from = 0;
    j->depth--;
    if (!was_inline && !empty) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void json_obj_begin(struct json *j)
{
    open_container(j, '{', false);
}

void json_obj_begin_inline(struct json *j)
{
    open_container(j, '{', true);
}

void json_obj_end(struct json *j)
{
    close_container(j, '}');
}

void json_arr_begin(struct json *j)
{
    open_container(j, '[', false);
}

void json_arr_begin_inline(struct json *j)
{
    open_container(j, '[', true);
}

void json_arr_end(struct json *j)
{
    close_container(j, ']');
}

/*
 * The length of the well-formed UTF-8 sequence at @p (1 to 4), or 0 where
 * the bytes there are not one: a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate or a code point past U+10FFFF
 * (RFC 3629).
 */
static unsigned utf8_len(const unsigned char *p)
{
    unsigned n, cp;

    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2, cp = p[0] & 0x1f;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3, cp = p[0] & 0x0f;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4, cp = p[0] & 0x07;
    else
        return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/*
 * Writes @s as a JSON string. JSON text is UTF-8 (RFC 8259), but what we
 * quote comes from outside — a job file, a command line, a process name —
 * and may hold any bytes: each byte that does not begin a well-formed
 * sequence is written as U+FFFD, so the document always parses.
 */
static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned n = utf8_len(p);

        if (n == 0) {
            fputs("\\ufffd", f);
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, n, f);
            p += n - 1;
            continue;
        }
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
    before_value(j);
    write_string(j->f, key);
    fputs(": ", j->f);
    j->after_key = true;
}

void json_str(struct json *j, const char *s)
{
    before_value(j);
    if (s)
        write_string(j->f, s);
    else
        fputs("null", j->f);
}

void json_int(struct json *j, long long v)
{
    before_value(j);
    fprintf(j->f, "%lld", v);
}

void json_uint(struct json *j, unsigned long long v)
{
    before_value(j);
    fprintf(j->f, "%llu", v);
}

void json_double(struct json *j, double v)
{
    before_value(j);
    if (!isfinite(v))
        fputs("null", j->f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(j->f, "%.1f", v);
    else
        fprintf(j->f, "%.6g", v);
}

void json_double_full(struct json *j, double v)
{
    before_value(j);
    if (!isfinite(v))
        fputs("null", j->f);
    else
        fprintf(j->f, "%.15g", v);
}

void json_bool(struct json *j, bool v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
    before_value(j);
    fputs("null", j->f);
}

void json_end(struct json *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}

void json_kstr(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    json_str(j, s);
}

void json_kint(struct json *j, const char *key, long long v)
{
    json_key(j, key);
    json_int(j, v);
}

void json_kuint(struct json *j, const char *key, unsigned long long v)
{
    json_key(j, key);
    json_uint(j, v);
}

void json_kdouble(struct json *j, const char *key, double v)
{
    json_key(j, key);
    json_double(j, v);
}

void json_kbool(struct json *j, const char *key, bool v)
{
    json_key(j, key);
    json_bool(j, v);
}

void json_knull(struct json *j, const char *key)
{
    json_key(j, key);
    json_null(j);
}

void json_kint_or_null(struct json *j, const char *key, long long v)
{
    json_key(j, key);
    if (v < 0)
        json_null(j);
    else
        json_int(j, v);
}
