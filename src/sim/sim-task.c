/*
 * sim-task.c — simulated tasks: the class presets of SIMULATOR.md, the
 * workload file parser (docs/sim-workloads.md) and random workloads.
 *
 * The parser reads outside input: every error names the file, the line and
 * the reason ("FILE:LINE: reason"), and nothing it accepts can make the
 * solver divide by zero (corun_sim_phase_check() guards every phase).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "sim/sim-internal.h"

static const char *const class_names[CORUN_SIM_NCLASSES] = {
    "compute-int", "compute-fp", "sheep", "rabbit", "chasing", "streaming"};

/*
 * Presets and ranges. The midpoints are SIMULATOR.md's; where its range is
 * wide, the preset sits where the calibration targets put it (compute
 * u_disp high enough that two compute threads yield 1.0–1.2 on one core,
 * rabbit ws so that 32 MB of LLC is worth ~2.5x). Order of fields: cpi_core,
 * u_disp, mpki_max, mpki_min, ws_mb, mlp, pf, smt_penalty, duration_s.
 */
static const struct corun_sim_phase preset[CORUN_SIM_NCLASSES] = {
    {0.45, 0.85, 0.5, 0.1, 0.25, 2.0, 1.2, 0.03, 0},    /* compute-int */
    {0.55, 0.85, 0.5, 0.1, 0.5, 2.0, 1.2, 0.03, 0},     /* compute-fp */
    {0.75, 0.50, 5.0, 1.0, 1.0, 2.0, 1.3, 0.05, 0},     /* sheep */
    {0.85, 0.40, 25.0, 2.0, 16.0, 3.0, 1.5, 0.10, 0},   /* rabbit */
    {0.85, 0.30, 80.0, 30.0, 32.0, 1.5, 1.3, 0.10, 0},  /* chasing */
    {0.65, 0.35, 30.0, 25.0, 64.0, 8.0, 1.75, 0.25, 0}, /* streaming */
};
static const struct corun_sim_phase range_lo[CORUN_SIM_NCLASSES] = {
    {0.35, 0.75, 0.4, 0.08, 0.2, 1.8, 1.1, 0.02, 0},
    {0.40, 0.70, 0.4, 0.08, 0.4, 1.8, 1.1, 0.02, 0},
    {0.60, 0.40, 4.0, 0.8, 0.8, 1.8, 1.2, 0.04, 0},
    {0.60, 0.30, 20.0, 1.5, 4.0, 1.5, 1.4, 0.08, 0},
    {0.70, 0.20, 65.0, 25.0, 32.0, 1.0, 1.2, 0.08, 0},
    {0.50, 0.20, 27.0, 22.0, 64.0, 6.0, 1.5, 0.20, 0},
};
static const struct corun_sim_phase range_hi[CORUN_SIM_NCLASSES] = {
    {0.60, 0.90, 0.6, 0.12, 0.3, 2.2, 1.3, 0.04, 0},
    {0.70, 0.85, 0.6, 0.12, 0.6, 2.2, 1.3, 0.04, 0},
    {0.90, 0.60, 6.0, 1.2, 1.2, 2.2, 1.4, 0.06, 0},
    {0.90, 0.50, 30.0, 2.5, 16.0, 3.0, 1.6, 0.12, 0},
    {1.00, 0.40, 95.0, 35.0, 48.0, 2.0, 1.4, 0.12, 0},
    {0.80, 0.50, 33.0, 27.0, 96.0, 10.0, 2.0, 0.30, 0},
};

const char *corun_sim_class_name(int cls)
{
    if (cls == CORUN_SIM_CUSTOM)
        return "custom";
    return cls >= 0 && cls < CORUN_SIM_NCLASSES ? class_names[cls] : NULL;
}

int corun_sim_class_by_name(const char *name)
{
    for (int i = 0; i < CORUN_SIM_NCLASSES; i++)
        if (name && !strcmp(name, class_names[i]))
            return i;
    return -EINVAL;
}

enum corun_class corun_sim_class_hint(int cls)
{
    switch (cls) {
    case CORUN_SIM_COMPUTE_INT:
    case CORUN_SIM_COMPUTE_FP:
        return CORUN_CLASS_COMPUTE;
    case CORUN_SIM_SHEEP:
        return CORUN_CLASS_SHEEP;
    case CORUN_SIM_RABBIT:
        return CORUN_CLASS_RABBIT;
    case CORUN_SIM_CHASING:
        return CORUN_CLASS_CHASING;
    case CORUN_SIM_STREAMING:
        return CORUN_CLASS_STREAMING;
    default:
        return CORUN_CLASS_UNKNOWN;
    }
}

int corun_sim_class_preset(int cls, struct corun_sim_phase *out)
{
    if (cls < 0 || cls >= CORUN_SIM_NCLASSES)
        return -EINVAL;
    *out = preset[cls];
    return 0;
}

void corun__class_range(int cls, struct corun_sim_phase *lo, struct corun_sim_phase *hi)
{
    *lo = range_lo[cls];
    *hi = range_hi[cls];
}

bool corun_sim_phase_check(const struct corun_sim_phase *p, const char **why)
{
    const char *bad = NULL;

    if (!(p->cpi_core > 0 && p->cpi_core <= 100))
        bad = "cpi_core must be in (0, 100]";
    else if (!(p->u_disp > 0 && p->u_disp <= 1))
        bad = "u_disp must be in (0, 1]";
    else if (!(p->mpki_min >= 0 && p->mpki_min <= 1000))
        bad = "mpki_min must be in [0, 1000]";
    else if (!(p->mpki_max >= p->mpki_min && p->mpki_max <= 1000))
        bad = "mpki_max must be in [mpki_min, 1000]";
    else if (!(p->ws_mb > 0 && p->ws_mb <= 1e6))
        bad = "ws_mb must be in (0, 1e6]";
    else if (!(p->mlp >= 1 && p->mlp <= 64))
        bad = "mlp must be in [1, 64]";
    else if (!(p->pf >= 1 && p->pf <= 8))
        bad = "pf must be in [1, 8]";
    else if (!(p->smt_penalty >= 0 && p->smt_penalty <= 4))
        bad = "smt_penalty must be in [0, 4]";
    else if (!(p->duration_s >= 0 && p->duration_s <= 1e9))
        bad = "duration must be in [0, 1e9] seconds";
    if (why)
        *why = bad;
    return !bad;
}

/* ---- the parser ------------------------------------------------------------ */

struct parse {
    const char *file;
    unsigned line;
    char *err;
    size_t errlen;
    struct corun_sim_workload *w;
    unsigned cap;
};

static int perr(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parse *p, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(p->err, p->errlen, "%s:%u: ", p->file, p->line);

    if (n >= 0 && (size_t)n < p->errlen) {
        va_start(ap, fmt);
        vsnprintf(p->err + n, p->errlen - n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static bool parse_num(const char *s, double *out)
{
    char *end;
    double v;

    if (!*s)
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static double *phase_field(struct corun_sim_phase *ph, const char *key)
{
    static const struct {
        const char *name;
        size_t off;
    } fields[] = {
        {"cpi_core", offsetof(struct corun_sim_phase, cpi_core)},
        {"u_disp", offsetof(struct corun_sim_phase, u_disp)},
        {"mpki_max", offsetof(struct corun_sim_phase, mpki_max)},
        {"mpki_min", offsetof(struct corun_sim_phase, mpki_min)},
        {"ws_mb", offsetof(struct corun_sim_phase, ws_mb)},
        {"mlp", offsetof(struct corun_sim_phase, mlp)},
        {"pf", offsetof(struct corun_sim_phase, pf)},
        {"smt_penalty", offsetof(struct corun_sim_phase, smt_penalty)},
        {"duration", offsetof(struct corun_sim_phase, duration_s)},
    };

    for (size_t i = 0; i < CORUN_ARRAY_SIZE(fields); i++)
        if (!strcmp(key, fields[i].name))
            return (double *)((char *)ph + fields[i].off);
    return NULL;
}

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) >= CORUN_SIM_NAME_MAX - 6)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-.:+@", *s))
            return false;
    return true;
}

/* Parses one phase's tokens (after the name for the first one) into @ph. */
static int parse_phase(struct parse *p, char *seg, bool first, struct corun_sim_task *t,
                       unsigned long *count, struct corun_sim_phase *ph)
{
    char *save = NULL, *tok;
    bool any = false;

    for (tok = strtok_r(seg, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        double v, *field;

        any = true;
        if (!eq || eq == tok)
            return perr(p, "expected param=value, got '%s'", tok);
        *eq = '\0';
        if (!strcmp(tok, "class")) {
            int c = corun_sim_class_by_name(eq + 1);
            double dur = ph->duration_s;

            if (c < 0)
                return perr(p,
                            "unknown class '%s' (compute-int, compute-fp, sheep, rabbit, "
                            "chasing, streaming)",
                            eq + 1);
            /* A class resets the phase to its preset; explicit values follow. */
            *ph = preset[c];
            ph->duration_s = dur;
            if (first)
                t->cls = c;
            continue;
        }
        if (!parse_num(eq + 1, &v))
            return perr(p, "bad number '%s' for %s", eq + 1, tok);
        if (!strcmp(tok, "count") || !strcmp(tok, "instructions") || !strcmp(tok, "rss_mb")) {
            if (!first)
                return perr(p, "%s belongs before the first '|'", tok);
            if (!strcmp(tok, "count")) {
                if (v < 1 || v > CORUN_SIM_MAX_TASKS || v != floor(v))
                    return perr(p, "count must be an integer in 1..%u", CORUN_SIM_MAX_TASKS);
                *count = (unsigned long)v;
            } else if (!strcmp(tok, "rss_mb")) {
                if (v < 0 || v > 1e9)
                    return perr(p, "rss_mb must be in [0, 1e9]");
                t->rss_mb = v;
            } else {
                if (v < 0 || v > 1e18)
                    return perr(p, "instructions must be in [0, 1e18]");
                t->instructions = v;
            }
            continue;
        }
        field = phase_field(ph, tok);
        if (!field)
            return perr(p, "unknown parameter '%s'", tok);
        *field = v;
    }
    if (!first && !any)
        return perr(p, "empty phase after '|'");
    return 0;
}

static int add_tasks(struct parse *p, const struct corun_sim_task *t, unsigned long count)
{
    if (p->w->ntasks + count > CORUN_SIM_MAX_TASKS) {
        perr(p, "more than %u tasks", CORUN_SIM_MAX_TASKS);
        return -E2BIG;
    }
    if (p->w->ntasks + count > p->cap) {
        unsigned ncap = p->cap ? p->cap : 16;
        struct corun_sim_task *nt;

        while (ncap < p->w->ntasks + count)
            ncap *= 2;
        nt = realloc(p->w->tasks, ncap * sizeof(*nt));
        if (!nt)
            return -ENOMEM;
        p->w->tasks = nt;
        p->cap = ncap;
    }
    for (unsigned long i = 0; i < count; i++) {
        struct corun_sim_task *d = &p->w->tasks[p->w->ntasks++];

        *d = *t;
        /* valid_name() allows CORUN_SIM_NAME_MAX - 7 characters, which leaves
         * room for ".4096": the name is never cut. */
        if (count > 1)
            snprintf(d->name, sizeof(d->name), "%.*s.%u", CORUN_SIM_NAME_MAX - 7, t->name,
                     (unsigned)(i + 1));
    }
    return 0;
}

static int parse_line(struct parse *p, char *line)
{
    struct corun_sim_task t;
    unsigned long count = 1;
    char *seg, *name, *rest, *bar;
    const char *why;
    bool lead_bar;
    int err;

    memset(&t, 0, sizeof(t));
    t.cls = CORUN_SIM_CUSTOM;
    /* A line without a class starts from sheep: a middling task. */
    t.phase[0] = preset[CORUN_SIM_SHEEP];
    name = line + strspn(line, " \t\r");
    rest = name + strcspn(name, " \t\r|");
    /* "NAME|..." reads as "NAME |...": an empty first segment. The bar is
     * overwritten by the name's end, so remember it was there. */
    lead_bar = *rest == '|';
    if (*rest)
        *rest++ = '\0';
    if (strchr(name, '='))
        return perr(p, "task name missing before '%s'", name);
    if (!valid_name(name))
        return perr(p, "bad task name '%s' (letters, digits, _-.:+@; at most %d characters)", name,
                    CORUN_SIM_NAME_MAX - 7);
    snprintf(t.name, sizeof(t.name), "%s", name);
    seg = rest;
    for (unsigned ph = 0;; ph++) {
        char none[1] = "";

        if (ph == 0 && lead_bar) {
            bar = rest - 1;
            seg = none;
        } else {
            bar = strchr(seg, '|');
            if (bar)
                *bar = '\0';
        }
        if (ph >= CORUN_SIM_MAX_PHASES)
            return perr(p, "more than %d phases", CORUN_SIM_MAX_PHASES);
        if (ph > 0)
            t.phase[ph] = t.phase[ph - 1];
        err = parse_phase(p, seg, ph == 0, &t, &count, &t.phase[ph]);
        if (err)
            return err;
        t.nphases = ph + 1;
        if (!bar)
            break;
        seg = bar + 1;
    }
    for (unsigned ph = 0; ph < t.nphases; ph++) {
        if (!corun_sim_phase_check(&t.phase[ph], &why))
            return t.nphases > 1 ? perr(p, "phase %u: %s", ph + 1, why) : perr(p, "%s", why);
        if (t.nphases > 1 && !(t.phase[ph].duration_s > 0))
            return perr(p, "phase %u needs duration=SECONDS > 0", ph + 1);
    }
    if (t.nphases == 1)
        t.phase[0].duration_s = 0;
    return add_tasks(p, &t, count);
}

int corun_sim_workload_parse(const char *text, const char *file, struct corun_sim_workload **out,
                             char *err, size_t errlen)
{
    struct parse p = {.file = file ? file : "workload", .err = err, .errlen = errlen};
    const char *s = text;
    char *line = NULL;
    int rc = 0;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    p.w = calloc(1, sizeof(*p.w));
    if (!p.w)
        return -ENOMEM;
    while (*s) {
        size_t len = strcspn(s, "\n");
        char *hash, *q;

        p.line++;
        free(line);
        line = strndup(s, len);
        if (!line) {
            rc = -ENOMEM;
            goto out_free;
        }
        s += len + (s[len] == '\n');
        if ((hash = strchr(line, '#')))
            *hash = '\0';
        for (q = line; *q == ' ' || *q == '\t' || *q == '\r'; q++)
            ;
        if (!*q)
            continue;
        rc = parse_line(&p, line);
        if (rc)
            goto out_free;
    }
    if (!p.w->ntasks) {
        p.line = p.line ? p.line : 1;
        rc = perr(&p, "no task in the workload");
        goto out_free;
    }
    free(line);
    *out = p.w;
    return 0;
out_free:
    free(line);
    corun_sim_workload_free(p.w);
    return rc;
}

int corun_sim_workload_load(const char *path, struct corun_sim_workload **out, char *err,
                            size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    /* A user's file, not /proc or /sys: relative paths are the caller's. */
    int dirfd = path[0] == '/' ? corun__root_open("/") : AT_FDCWD;
    int rc = dirfd < 0 && dirfd != AT_FDCWD ? dirfd : corun__read_alloc(dirfd, path, &text, &len);

    *out = NULL;
    if (dirfd >= 0)
        close(dirfd);
    if (rc) {
        snprintf(err, errlen, "%s:0: cannot read: %s", path, corun_strerror(rc));
        return rc;
    }
    if (strlen(text) != len) {
        free(text);
        snprintf(err, errlen, "%s:0: not a text file (NUL byte)", path);
        return -EINVAL;
    }
    rc = corun_sim_workload_parse(text, path, out, err, errlen);
    free(text);
    return rc;
}

void corun_sim_workload_free(struct corun_sim_workload *w)
{
    if (!w)
        return;
    free(w->tasks);
    free(w);
}

static double jitter(struct corun__rng *r, double lo, double hi)
{
    return lo + (hi - lo) * corun__rng_unit(r);
}

int corun_sim_workload_random(unsigned n, uint64_t seed, struct corun_sim_workload **out)
{
    struct corun_sim_workload *w;
    struct corun__rng r;

    *out = NULL;
    if (n == 0 || n > CORUN_SIM_MAX_TASKS)
        return -EINVAL;
    w = calloc(1, sizeof(*w));
    if (!w || !(w->tasks = calloc(n, sizeof(*w->tasks)))) {
        free(w);
        return -ENOMEM;
    }
    w->ntasks = n;
    corun__rng_seed(&r, corun__seed_mix(seed, 0x5157u));
    for (unsigned i = 0; i < n; i++) {
        struct corun_sim_task *t = &w->tasks[i];
        int c = (int)corun__rng_below(&r, CORUN_SIM_NCLASSES);
        const struct corun_sim_phase *lo = &range_lo[c], *hi = &range_hi[c];
        struct corun_sim_phase *p = &t->phase[0];

        t->cls = c;
        t->nphases = 1;
        snprintf(t->name, sizeof(t->name), "%s-%u", class_names[c], i);
        p->cpi_core = jitter(&r, lo->cpi_core, hi->cpi_core);
        p->u_disp = jitter(&r, lo->u_disp, hi->u_disp);
        p->mpki_max = jitter(&r, lo->mpki_max, hi->mpki_max);
        p->mpki_min = jitter(&r, lo->mpki_min, hi->mpki_min);
        if (p->mpki_min > p->mpki_max)
            p->mpki_min = p->mpki_max;
        p->ws_mb = jitter(&r, lo->ws_mb, hi->ws_mb);
        p->mlp = jitter(&r, lo->mlp, hi->mlp);
        p->pf = jitter(&r, lo->pf, hi->pf);
        p->smt_penalty = jitter(&r, lo->smt_penalty, hi->smt_penalty);
    }
    *out = w;
    return 0;
}
