/*
 * platform.c — the platform box's entry point and the parsers its topics
 * share: it opens the root, reads /proc/cpuinfo once, runs each topic in the
 * order their answers depend on each other (the command line before the
 * features it can switch off, DMI before the hypervisor it can name, the
 * hypervisor before the PMU whose absence it explains) and frees the report.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "platform/platform-internal.h"

const char *corun_platform_tri_name(enum corun_tri t)
{
    return t == CORUN_TRI_YES ? "yes" : t == CORUN_TRI_NO ? "no" : "unknown";
}

void corun__pf_copy(char *dst, size_t len, const char *src)
{
    if (!len)
        return;
    snprintf(dst, len, "%s", src ? src : "");
}

enum corun_tri corun__pf_cpuid_bit(const struct corun__pf_ctx *c, uint32_t leaf, uint32_t sub,
                                   int reg, unsigned bit)
{
    uint32_t r[4], max[4];
    uint32_t base = leaf & 0xffff0000u;

    if (!c->cpuid)
        return CORUN_TRI_UNKNOWN;
    /* A leaf above the range's maximum returns garbage on real CPUs. */
    if (!c->cpuid(c->cpuid_user, base, 0, max))
        return CORUN_TRI_UNKNOWN;
    if (leaf > max[CORUN__EAX])
        return CORUN_TRI_NO;
    if (!c->cpuid(c->cpuid_user, leaf, sub, r))
        return CORUN_TRI_UNKNOWN;
    return (r[reg] >> bit) & 1 ? CORUN_TRI_YES : CORUN_TRI_NO;
}

enum corun_tri corun__pf_flag(const struct corun__pf_ctx *c, const char *flag)
{
    char word[64];

    if (!c->flags)
        return CORUN_TRI_UNKNOWN;
    snprintf(word, sizeof(word), " %s ", flag);
    return strstr(c->flags, word) ? CORUN_TRI_YES : CORUN_TRI_NO;
}

/* The line after @line, or NULL at the end of the text. */
static const char *next_line(const char *line)
{
    const char *nl = strchr(line, '\n');

    return nl && nl[1] ? nl + 1 : NULL;
}

/* Finds the line of @text whose key (before the tabs and colon) is @key. */
static const char *field_value(const char *text, const char *key)
{
    size_t klen = strlen(key);

    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *p = line;

        if (strncmp(p, key, klen))
            continue;
        p += klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        return p;
    }
    return NULL;
}

bool corun__pf_cpuinfo_field(const char *text, const char *key, char *out, size_t len)
{
    const char *v = text ? field_value(text, key) : NULL;
    size_t n;

    if (!v || !len)
        return false;
    n = strcspn(v, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(out, v, n);
    out[n] = '\0';
    corun__rstrip(out);
    return true;
}

char *corun__pf_cpuinfo_flags(const char *text)
{
    const char *v = text ? field_value(text, "flags") : NULL;
    size_t n;
    char *s;

    if (!v)
        return NULL;
    n = strcspn(v, "\n");
    s = malloc(n + 3);
    if (!s)
        return NULL;
    s[0] = ' ';
    memcpy(s + 1, v, n);
    s[n + 1] = ' ';
    s[n + 2] = '\0';
    for (char *q = s; *q; q++)
        if (*q == '\t')
            *q = ' ';
    return s;
}

unsigned corun__pf_cpuinfo_count(const char *text)
{
    unsigned n = 0;

    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *p = line + 9;

        if (strncmp(line, "processor", 9))
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ':')
            n++;
    }
    return n;
}

bool corun__pf_param(const char *cmdline, const char *name, char *val, size_t len)
{
    size_t nlen = strlen(name);
    bool found = false;
    const char *p = cmdline;

    if (!p)
        return false;
    while (*p) {
        const char *start, *v = NULL, *vend = NULL;
        bool quoted = false;

        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        start = p;
        /* A word runs to unquoted whitespace; quotes may open anywhere. */
        while (*p && (quoted || !isspace((unsigned char)*p))) {
            if (*p == '"')
                quoted = !quoted;
            else if (*p == '=' && !v)
                v = p + 1;
            p++;
        }
        if (p - start == 2 && !strncmp(start, "--", 2))
            break;
        vend = p;
        if ((size_t)((v ? v - 1 : p) - start) != nlen || strncmp(start, name, nlen))
            continue;
        found = true;
        if (!val || !len)
            continue;
        if (!v) {
            val[0] = '\0';
            continue;
        }
        if (*v == '"')
            v++;
        if (vend > v && vend[-1] == '"')
            vend--;
        if (vend < v)
            vend = v;
        snprintf(val, len, "%.*s", (int)(vend - v), v);
    }
    return found;
}

int corun__pf_read_str(const struct corun__pf_ctx *c, const char *path, char *buf, size_t len)
{
    ssize_t n = corun__read_text(c->root, path, buf, len);

    if (n < 0) {
        if (len)
            buf[0] = '\0';
        return (int)n;
    }
    corun__rstrip(buf);
    return (int)strlen(buf);
}

int corun__pf_read_i64(const struct corun__pf_ctx *c, const char *path, int64_t *out)
{
    char buf[64], *end;
    long long v;
    int n = corun__pf_read_str(c, path, buf, sizeof(buf));

    if (n < 0)
        return n;
    errno = 0;
    v = strtoll(buf, &end, 10);
    if (end == buf || *end || errno)
        return -EINVAL;
    *out = v;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void corun__pf_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int corun__pf_list_dir(const struct corun__pf_ctx *c, const char *path, char ***names)
{
    int fd = corun__root_openat(c->root, path, O_RDONLY | O_DIRECTORY);
    char **v = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    DIR *d;

    *names = NULL;
    if (fd < 0)
        return fd;
    d = fdopendir(fd);
    if (!d) {
        int err = -errno;

        close(fd);
        return err;
    }
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (n == cap) {
            char **nv = realloc(v, (size_t)(cap ? cap * 2 : 16) * sizeof(*v));

            if (!nv)
                goto out_nomem;
            v = nv;
            cap = cap ? cap * 2 : 16;
        }
        if (!(v[n] = strdup(e->d_name)))
            goto out_nomem;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, (size_t)n, sizeof(*v), cmp_names);
    *names = v;
    return n;

out_nomem:
    closedir(d);
    corun__pf_free_names(v, n);
    return -ENOMEM;
}

static void read_cpuinfo(struct corun__pf_ctx *c)
{
    int err = corun__read_alloc(c->root, "proc/cpuinfo", &c->cpuinfo, NULL);

    if (err) {
        snprintf(c->cpuinfo_why, sizeof(c->cpuinfo_why), "cannot read /proc/cpuinfo: %s",
                 corun_strerror(err));
        return;
    }
    c->flags = corun__pf_cpuinfo_flags(c->cpuinfo);
    if (!c->flags)
        snprintf(c->cpuinfo_why, sizeof(c->cpuinfo_why),
                 "/proc/cpuinfo has no flags line (not an x86 processor?)");
}

int corun_platform_probe(const struct corun_platform_opts *opts, struct corun_platform **out)
{
    static const struct corun_platform_opts defaults;
    int (*const topics[])(struct corun__pf_ctx *, struct corun_platform *) = {
        corun__pf_kernel, corun__pf_firmware, corun__pf_cpu, corun__pf_mem,     corun__pf_pmu,
        corun__pf_rdt,    corun__pf_freq,     corun__pf_msr, corun__pf_modules,
    };
    struct corun__pf_ctx c = {.opts = opts ? opts : &defaults};
    struct corun_platform *p;
    int err = 0;

    *out = NULL;
    c.root = corun__root_open(c.opts->root);
    if (c.root < 0)
        return c.root;
    c.cpuid = c.opts->cpuid;
    c.cpuid_user = c.opts->cpuid_user;
    if (!c.cpuid && !c.opts->root)
        c.cpuid = corun_platform_cpuid_native;
    p = calloc(1, sizeof(*p));
    if (!p) {
        err = -ENOMEM;
        goto out_close_root;
    }
    read_cpuinfo(&c);
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(topics) && !err; i++) {
        err = topics[i](&c, p);
        if (i == 0)
            c.cmdline = p->kernel.cmdline;
    }
    if (err) {
        corun_platform_free(p);
        p = NULL;
    }
    *out = p;
    free(c.flags);
    free(c.cpuinfo);
out_close_root:
    close(c.root);
    return err;
}

void corun_platform_free(struct corun_platform *p)
{
    if (!p)
        return;
    free(p->freq.cpus);
    free(p->freq.rapl);
    free(p->modules);
    free(p->kernel.cmdline);
    free(p->kernel.vulns);
    free(p);
}
