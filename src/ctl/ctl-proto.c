/*
 * ctl-proto.c — the control protocol's words: parsing a request line, the
 * permission decisions, and the buffer responses are written into. Nothing
 * here touches a socket, so the decisions are tested on their own.
 *
 * The request parser accepts exactly what the protocol needs — one flat JSON
 * object whose values are strings, numbers, booleans or null — and rejects
 * anything else with a reason, since the input comes from any local user.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "corun/ctl.h"

struct cursor {
    const char *p;
    char *why;
    size_t len;
};

static int bad(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct cursor *c, const char *fmt, ...)
{
    va_list ap;

    if (c->why && c->len) {
        va_start(ap, fmt);
        vsnprintf(c->why, c->len, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static void skip_ws(struct cursor *c)
{
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
        c->p++;
}

/* Parses a JSON string at the cursor into @out (@len bytes). Escapes other
 * than \uXXXX for ASCII are accepted; non-ASCII \u escapes are refused, since
 * no key or value of the protocol needs them. */
static int parse_string(struct cursor *c, char *out, size_t len)
{
    size_t n = 0;

    if (*c->p != '"')
        return bad(c, "expected a string at '%.10s'", c->p);
    c->p++;
    while (*c->p != '"') {
        char ch = *c->p++;

        if (!ch || ch == '\n')
            return bad(c, "unterminated string");
        if ((unsigned char)ch < 0x20)
            return bad(c, "control character in a string");
        if (ch == '\\') {
            char e = *c->p++;

            switch (e) {
            case '"':
            case '\\':
            case '/':
                ch = e;
                break;
            case 'n':
                ch = '\n';
                break;
            case 't':
                ch = '\t';
                break;
            case 'r':
                ch = '\r';
                break;
            case 'b':
                ch = '\b';
                break;
            case 'f':
                ch = '\f';
                break;
            case 'u': {
                char hex[5] = {0};
                unsigned long v;

                for (int i = 0; i < 4; i++) {
                    if (!c->p[i])
                        return bad(c, "truncated \\u escape");
                    hex[i] = c->p[i];
                }
                v = strtoul(hex, NULL, 16);
                if (v == 0 || v > 0x7f)
                    return bad(c, "\\u escape outside ASCII");
                ch = (char)v;
                c->p += 4;
                break;
            }
            default:
                return bad(c, "bad escape '\\%c'", e ? e : '0');
            }
        }
        if (n + 1 >= len)
            return bad(c, "string too long (at most %zu bytes)", len - 1);
        out[n++] = ch;
    }
    c->p++;
    out[n] = '\0';
    return 0;
}

/* Parses a scalar value into its text form in @out: strings unquoted,
 * numbers, true/false and null as written. */
static int parse_value(struct cursor *c, char *out, size_t len, bool *is_string)
{
    const char *start = c->p;
    size_t n;

    *is_string = *c->p == '"';
    if (*is_string)
        return parse_string(c, out, len);
    if (!strncmp(c->p, "true", 4) || !strncmp(c->p, "null", 4))
        c->p += 4;
    else if (!strncmp(c->p, "false", 5))
        c->p += 5;
    else if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9')) {
        char *end;

        strtod(c->p, &end);
        c->p = end;
    } else if (*c->p == '{' || *c->p == '[') {
        return bad(c, "nested objects and arrays are not part of the protocol");
    } else {
        return bad(c, "expected a value at '%.10s'", c->p);
    }
    n = (size_t)(c->p - start);
    if (n >= len)
        return bad(c, "value too long");
    memcpy(out, start, n);
    out[n] = '\0';
    return 0;
}

static const struct {
    const char *name;
    enum corun_ctl_verb verb;
} verbs[] = {
    {"status", CORUN_CTL_STATUS}, {"set", CORUN_CTL_SET},         {"pause", CORUN_CTL_PAUSE},
    {"resume", CORUN_CTL_RESUME}, {"release", CORUN_CTL_RELEASE},
};

int corun_ctl_parse(const char *line, struct corun_ctl_request *req, char *why, size_t len)
{
    struct cursor c = {.p = line, .why = why, .len = len};
    char key[64], val[CORUN_CTL_VALUE_LEN], cmd[32] = "";
    bool have_key = false, have_value = false, is_str;
    int err;

    if (!line || !req)
        return bad(&c, "no request");
    memset(req, 0, sizeof(*req));
    req->pid = -1;
    skip_ws(&c);
    if (*c.p != '{')
        return bad(&c, "a request is one JSON object");
    c.p++;
    skip_ws(&c);
    while (*c.p != '}') {
        err = parse_string(&c, key, sizeof(key));
        if (err)
            return err;
        skip_ws(&c);
        if (*c.p != ':')
            return bad(&c, "expected ':' after \"%s\"", key);
        c.p++;
        skip_ws(&c);
        err = parse_value(&c, val, sizeof(val), &is_str);
        if (err)
            return err;
        if (!strcmp(key, "cmd")) {
            if (!is_str || strlen(val) >= sizeof(cmd))
                return bad(&c, "\"cmd\" must be a command name");
            strcpy(cmd, val);
        } else if (!strcmp(key, "key")) {
            if (!is_str || strlen(val) >= sizeof(req->key))
                return bad(&c, "\"key\" must be a setting's name");
            strcpy(req->key, val);
            have_key = true;
        } else if (!strcmp(key, "value")) {
            strcpy(req->value, val);
            have_value = true;
        } else if (!strcmp(key, "pid")) {
            char *end;
            long long v = strtoll(val, &end, 10);

            if (is_str || *end || v <= 0)
                return bad(&c, "\"pid\" must be a positive integer");
            req->pid = v;
        } else {
            return bad(&c, "unknown field \"%s\"", key);
        }
        skip_ws(&c);
        if (*c.p == ',') {
            c.p++;
            skip_ws(&c);
            if (*c.p == '}')
                return bad(&c, "trailing comma");
        } else if (*c.p != '}') {
            return bad(&c, "expected ',' or '}' at '%.10s'", c.p);
        }
    }
    c.p++;
    skip_ws(&c);
    if (*c.p)
        return bad(&c, "text after the request object");
    if (!cmd[0])
        return bad(&c, "no \"cmd\"");
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(verbs); i++) {
        if (!strcmp(cmd, verbs[i].name)) {
            req->verb = verbs[i].verb;
            if (req->verb == CORUN_CTL_SET && (!have_key || !have_value))
                return bad(&c, "\"set\" needs \"key\" and \"value\"");
            if (req->verb == CORUN_CTL_RELEASE && req->pid < 0)
                return bad(&c, "\"release\" needs \"pid\"");
            return 0;
        }
    }
    return bad(&c, "unknown command \"%s\"", cmd);
}

bool corun_ctl_verb_changes(enum corun_ctl_verb verb)
{
    return verb != CORUN_CTL_STATUS;
}

bool corun_ctl_is_admin(const struct corun_ctl_access *acc, uid_t uid, gid_t gid,
                        const gid_t *groups, size_t ngroups)
{
    if (uid == 0)
        return true;
    if (!acc || !acc->has_admin_gid)
        return false;
    /* gid 0 as an admin group would make every member of group root an
     * administrator; that is what the configuration says, so honour it. */
    if (gid == acc->admin_gid)
        return true;
    for (size_t i = 0; i < ngroups; i++)
        if (groups && groups[i] == acc->admin_gid)
            return true;
    return false;
}

bool corun_ctl_may(const struct corun_ctl_peer *peer, enum corun_ctl_verb verb)
{
    if (!peer)
        return false;
    return !corun_ctl_verb_changes(verb) || peer->admin;
}

bool corun_ctl_may_see(const struct corun_ctl_peer *peer, uid_t owner)
{
    if (!peer)
        return false;
    return peer->admin || (owner != (uid_t)-1 && peer->uid == owner);
}

/* ---- response buffer ------------------------------------------------------ */

static bool buf_reserve(struct corun_ctl_buf *b, size_t more)
{
    size_t cap;
    char *n;

    if (b->failed)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    cap = b->cap ? b->cap : 1024;
    while (cap < b->len + more + 1)
        cap *= 2;
    n = realloc(b->data, cap);
    if (!n) {
        b->failed = true;
        return false;
    }
    b->data = n;
    b->cap = cap;
    return true;
}

void corun_ctl_buf_printf(struct corun_ctl_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void corun_ctl_buf_jstr(struct corun_ctl_buf *b, const char *s)
{
    if (!s) {
        corun_ctl_buf_printf(b, "null");
        return;
    }
    corun_ctl_buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\')
            corun_ctl_buf_printf(b, "\\%c", ch);
        else if (ch == '\n')
            corun_ctl_buf_printf(b, "\\n");
        else if (ch < 0x20 || ch >= 0x7f) /* bytes of other encodings: keep the JSON valid */
            corun_ctl_buf_printf(b, "\\u%04x", ch);
        else if (buf_reserve(b, 1)) {
            b->data[b->len++] = (char)ch;
            b->data[b->len] = '\0';
        }
    }
    corun_ctl_buf_printf(b, "\"");
}

void corun_ctl_buf_jnum(struct corun_ctl_buf *b, double v)
{
    if (!isfinite(v))
        corun_ctl_buf_printf(b, "null");
    else if (v == (double)(long long)v && fabs(v) < 1e15)
        corun_ctl_buf_printf(b, "%lld", (long long)v);
    else
        corun_ctl_buf_printf(b, "%.15g", v); /* timestamps need the digits */
}

void corun_ctl_buf_release(struct corun_ctl_buf *b)
{
    if (!b)
        return;
    free(b->data);
    memset(b, 0, sizeof(*b));
}
