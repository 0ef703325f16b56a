/*
 * jobfile.c — parsing `corun batch` job files (see jobfile.h and
 * docs/batch.md).
 *
 * Attributes are recognised only when the line starts with a known key
 * (name=, class=, weight=): a command may itself begin with an environment
 * assignment ("FOO=1 ./prog"), which must stay a command. Once the line has
 * started with attributes, every word up to " -- " must be one, so a typo
 * ("clas=streaming") is an error naming its line rather than a command that
 * fails later.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jobfile.h"

static const char *const keys[] = {"name", "class", "weight"};

static bool starts_with_key(const char *s)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        size_t n = strlen(keys[i]);

        if (!strncmp(s, keys[i], n) && s[n] == '=')
            return true;
    }
    return false;
}

static int parse_class(const char *v, enum corun_class *out)
{
    for (int c = CORUN_CLASS_COMPUTE; c < CORUN_NCLASSES; c++)
        if (!strcmp(v, corun_class_name((enum corun_class)c))) {
            *out = (enum corun_class)c;
            return 0;
        }
    if (!strcmp(v, "unknown")) {
        *out = CORUN_CLASS_UNKNOWN;
        return 0;
    }
    return -EINVAL;
}

/* Applies the attribute @word (key=value, NUL-terminated) to @out. */
static int attribute(char *word, struct job_spec *out, char *why, size_t len)
{
    char *eq = strchr(word, '='), *v, *end;

    if (!eq) {
        snprintf(why, len, "'%s' is not an attribute (key=value) and no ' -- ' precedes it", word);
        return -EINVAL;
    }
    *eq = '\0';
    v = eq + 1;
    if (!strcmp(word, "name")) {
        if (!*v) {
            snprintf(why, len, "empty name=");
            return -EINVAL;
        }
        free(out->name);
        if (!(out->name = strdup(v)))
            return -ENOMEM;
    } else if (!strcmp(word, "class")) {
        if (parse_class(v, &out->cls)) {
            snprintf(why, len,
                     "unknown class '%s' (compute, sheep, rabbit, chasing, streaming, unknown)", v);
            return -EINVAL;
        }
    } else if (!strcmp(word, "weight")) {
        errno = 0;
        out->weight = strtod(v, &end);
        if (!*v || *end || errno || !(out->weight > 0) || isinf(out->weight)) {
            snprintf(why, len, "weight '%s' is not a positive number", v);
            return -EINVAL;
        }
    } else {
        snprintf(why, len, "unknown attribute '%s' (name, class, weight)", word);
        return -EINVAL;
    }
    return 0;
}

int jobfile_parse_line(const char *line, struct job_spec *out, char *why, size_t len)
{
    const char *p = line, *cmd, *sep;
    char *attrs, *save = NULL;
    int err = 0;

    memset(out, 0, sizeof(*out));
    out->cls = CORUN_CLASS_UNKNOWN;
    out->weight = 1;
    /* Blank: spaces, tabs and the carriage returns of CRLF files. */
    p += strspn(p, " \t\r");
    if (!*p || *p == '#')
        return 1;
    cmd = p;
    if (starts_with_key(p)) {
        /* " -- " (or a final " --") ends the attributes. */
        for (sep = strstr(p, " --"); sep && sep[3] && sep[3] != ' ' && sep[3] != '\t';
             sep = strstr(sep + 1, " --"))
            ;
        if (!sep) {
            snprintf(why, len, "attributes must be followed by ' -- ' and the command");
            return -EINVAL;
        }
        if (!(attrs = strndup(p, (size_t)(sep - p))))
            return -ENOMEM;
        for (char *w = strtok_r(attrs, " \t", &save); w && !err; w = strtok_r(NULL, " \t", &save))
            err = attribute(w, out, why, len);
        free(attrs);
        if (err)
            goto out_free;
        cmd = sep + 3;
        while (*cmd == ' ' || *cmd == '\t')
            cmd++;
    }
    if (!cmd[strspn(cmd, " \t\r")]) {
        snprintf(why, len, "no command after ' -- '");
        err = -EINVAL;
        goto out_free;
    }
    if (!(out->command = strdup(cmd))) {
        err = -ENOMEM;
        goto out_free;
    }
    /* trailing blanks are not part of the command */
    for (size_t n = strlen(out->command);
         n && (out->command[n - 1] == ' ' || out->command[n - 1] == '\t' ||
               out->command[n - 1] == '\r');)
        out->command[--n] = '\0';
    return 0;

out_free:
    free(out->name);
    out->name = NULL;
    return err;
}

int jobfile_parse(FILE *f, struct job_list *list, unsigned *bad_line, char *why, size_t len)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned lineno = 0;
    int err = 0;

    while ((n = getline(&line, &cap, f)) >= 0) {
        struct job_spec js;

        lineno++;
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        if ((size_t)n != strlen(line)) {
            snprintf(why, len, "a NUL byte in the line");
            err = -EINVAL;
        } else {
            err = jobfile_parse_line(line, &js, why, len);
        }
        if (err == 1) {
            err = 0;
            continue;
        }
        if (err) {
            *bad_line = lineno;
            break;
        }
        js.line = lineno;
        if (!js.name) {
            char buf[32];

            snprintf(buf, sizeof(buf), "job%u", list->n + 1);
            js.name = strdup(buf);
        }
        if (list->n == list->cap) {
            unsigned c = list->cap ? list->cap * 2 : 16;
            struct job_spec *j = realloc(list->jobs, c * sizeof(*j));

            if (!j) {
                free(js.name);
                free(js.command);
                err = -ENOMEM;
                break;
            }
            list->jobs = j;
            list->cap = c;
        }
        list->jobs[list->n++] = js;
        if (!js.name) {
            err = -ENOMEM;
            break;
        }
    }
    /* getline's own errno (EISDIR for a directory), read before free(). */
    if (!err && ferror(f))
        err = errno > 0 ? -errno : -EIO;
    free(line);
    return err;
}

void job_list_release(struct job_list *list)
{
    for (unsigned i = 0; i < list->n; i++) {
        free(list->jobs[i].name);
        free(list->jobs[i].command);
    }
    free(list->jobs);
    memset(list, 0, sizeof(*list));
}
