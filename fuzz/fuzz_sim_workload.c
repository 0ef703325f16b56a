/*
 * fuzz_sim_workload.c — the workload-file parser of `corun sim`
 * (docs/sim-workloads.md), fed any text. It parses or fails cleanly; what
 * parses holds 1..CORUN_SIM_MAX_TASKS tasks whose every parameter is finite
 * and within its documented domain, whose names are documented names (and
 * NAME.1 ... NAME.N for count=N), and parsing the file equals parsing each of
 * its lines alone (lines are independent). A failure leaves no workload and
 * one "FILE:LINE: reason" message naming a line of the input, cut to the
 * caller's buffer.
 *
 * The parser takes a NUL-terminated string: the input is copied into a buffer
 * of exactly size + 1 bytes so that ASan sees any read past the end. Input
 * with a NUL byte is cut there, as corun_sim_workload_load() refuses it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun/sim.h"

#define FILE_NAME "w.txt"

static bool name_ok(const char *s)
{
    size_t n = strnlen(s, CORUN_SIM_NAME_MAX);

    if (!n || n >= CORUN_SIM_NAME_MAX)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("_-.:+@", *s)))
            return false;
    return true;
}

static void check_task(const struct corun_sim_task *t)
{
    const char *why;

    if (!name_ok(t->name) || t->cls < CORUN_SIM_CUSTOM || t->cls >= CORUN_SIM_NCLASSES)
        abort();
    if (!isfinite(t->instructions) || t->instructions < 0 || t->instructions > 1e18)
        abort();
    if (t->nphases < 1 || t->nphases > CORUN_SIM_MAX_PHASES)
        abort();
    for (unsigned i = 0; i < t->nphases; i++) {
        const struct corun_sim_phase *p = &t->phase[i];
        const double v[] = {p->cpi_core, p->u_disp, p->mpki_max,    p->mpki_min,  p->ws_mb,
                            p->mlp,      p->pf,     p->smt_penalty, p->duration_s};

        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
            if (!isfinite(v[k]))
                abort();
        if (!corun_sim_phase_check(p, &why))
            abort();
        /* The documented domains, restated rather than trusted to phase_check. */
        if (!(p->cpi_core > 0 && p->cpi_core <= 100) || !(p->u_disp > 0 && p->u_disp <= 1) ||
            !(p->mpki_min >= 0 && p->mpki_min <= p->mpki_max && p->mpki_max <= 1000) ||
            !(p->ws_mb > 0 && p->ws_mb <= 1e6) || !(p->mlp >= 1 && p->mlp <= 64) ||
            !(p->pf >= 1 && p->pf <= 8) || !(p->smt_penalty >= 0 && p->smt_penalty <= 4))
            abort();
        /* One phase: no duration; several: each lasts a positive time. */
        if (t->nphases == 1 ? p->duration_s != 0 : !(p->duration_s > 0))
            abort();
    }
}

/* The error message: "w.txt:LINE: reason" with 1 <= LINE <= @nlines + 1. */
static void check_error(const char *err, unsigned nlines)
{
    const size_t pre = strlen(FILE_NAME ":");
    char *end;
    unsigned long line;

    if (strncmp(err, FILE_NAME ":", pre))
        abort();
    line = strtoul(err + pre, &end, 10);
    if (end == err + pre || strncmp(end, ": ", 2) || !end[2] || line < 1 || line > nlines + 1)
        abort();
}

static bool same_task(const struct corun_sim_task *a, const struct corun_sim_task *b)
{
    if (strcmp(a->name, b->name) || a->cls != b->cls || a->instructions != b->instructions ||
        a->nphases != b->nphases)
        return false;
    return !memcmp(a->phase, b->phase, a->nphases * sizeof(a->phase[0]));
}

/*
 * Lines are independent: each line of @text parsed alone gives the tasks the
 * whole file gave at that place, and count=N names them NAME.1 ... NAME.N
 * where NAME is the line's first word.
 */
static void check_lines(char *text, const struct corun_sim_workload *w)
{
    unsigned at = 0;
    char err[256];

    for (char *line = text, *next; line; line = next) {
        struct corun_sim_workload *one;
        char name[64];
        size_t nlen;
        int rc;

        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        rc = corun_sim_workload_parse(line, FILE_NAME, &one, err, sizeof(err));
        if (rc == -EINVAL && strstr(err, "no task in the workload"))
            continue; /* a blank or comment line */
        if (rc || at + one->ntasks > w->ntasks)
            abort();
        line += strspn(line, " \t\r");
        nlen = strcspn(line, " \t\r|#");
        snprintf(name, sizeof(name), "%.*s", (int)nlen, line);
        for (unsigned i = 0; i < one->ntasks; i++) {
            char want[80];

            if (one->ntasks > 1)
                snprintf(want, sizeof(want), "%s.%u", name, i + 1);
            else
                snprintf(want, sizeof(want), "%s", name);
            if (!same_task(&one->tasks[i], &w->tasks[at + i]) || strcmp(one->tasks[i].name, want))
                abort();
        }
        at += one->ntasks;
        corun_sim_workload_free(one);
    }
    if (at != w->ntasks)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun_sim_workload *w = (struct corun_sim_workload *)1;
    char *s = malloc(size + 1), *copy, err[256], small[12];
    unsigned nlines = 0;
    size_t len;
    int rc;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    len = strlen(s);
    for (size_t i = 0; i < len; i++)
        nlines += s[i] == '\n';
    memset(err, 'x', sizeof(err));
    rc = corun_sim_workload_parse(s, FILE_NAME, &w, err, sizeof(err));
    if (rc) {
        if (w || (rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM))
            abort();
        if (rc != -ENOMEM)
            check_error(err, nlines);
    } else {
        if (!w || w->ntasks < 1 || w->ntasks > CORUN_SIM_MAX_TASKS)
            abort();
        for (unsigned i = 0; i < w->ntasks; i++)
            check_task(&w->tasks[i]);
        copy = strdup(s);
        if (copy)
            check_lines(copy, w);
        free(copy);
    }
    corun_sim_workload_free(w);

    /* A small error buffer: the message is cut, NUL-terminated, never overrun. */
    memset(small, 'x', sizeof(small));
    rc = corun_sim_workload_parse(s, FILE_NAME, &w, small, 1 + size % (sizeof(small) - 1));
    if (rc && rc != -ENOMEM && strnlen(small, sizeof(small)) >= 1 + size % (sizeof(small) - 1))
        abort();
    corun_sim_workload_free(w);
    free(s);
    return 0;
}
