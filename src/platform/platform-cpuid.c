/*
 * platform-cpuid.c — the CPUID source of the platform report: the
 * instruction (through corun__sys.cpuid, the one seam every box shares), the
 * list of leaves the platform box asks for, and recorded dumps that answer in
 * its place, so tests (and bug reports) replay a processor we do not have.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "platform/platform-internal.h"

#define LEAF(l, s) (((uint64_t)(l) << 32) | (uint32_t)(s))

static const uint64_t leaves[] = {
    LEAF(0, 0),          LEAF(1, 0),          LEAF(6, 0),          LEAF(7, 0),
    LEAF(0xa, 0),        LEAF(0xf, 0),        LEAF(0xf, 1),        LEAF(0x10, 0),
    LEAF(0x1a, 0),       LEAF(0x40000000, 0), LEAF(0x80000000, 0), LEAF(0x80000001, 0),
    LEAF(0x80000002, 0), LEAF(0x80000003, 0), LEAF(0x80000004, 0), LEAF(0x80000007, 0),
    LEAF(0x80000008, 0), ~(uint64_t)0,
};

const uint64_t *corun_platform_cpuid_leaves(void)
{
    return leaves;
}

bool corun_platform_cpuid_native(void *user, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t max[4];

    (void)user;
    /* Through the syscall seam, the one place the instruction runs; it
     * zeroes a leaf above the maximum, which this interface reports as
     * false (a zero answer can be a real one). */
    if ((leaf & 0xf0000000u) != 0x40000000u) {
        corun__sys.cpuid(leaf & 0x80000000u, 0, max);
        if (leaf > max[0])
            return false;
    }
    corun__sys.cpuid(leaf, subleaf, regs);
    return true;
#else
    (void)user;
    (void)leaf;
    (void)subleaf;
    (void)regs;
    return false;
#endif
}

struct cpuid_entry {
    uint64_t key;
    uint32_t regs[4];
};

struct corun_platform_cpuid_dump {
    size_t n;
    struct cpuid_entry *e;
};

/* Parses one hex number at *@p, advancing it. */
static bool hex(const char **p, uint32_t *out)
{
    const char *s = *p;
    unsigned long long v = 0;
    int digits = 0;

    while (*s == ' ' || *s == '\t')
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    for (;; s++, digits++) {
        int d = *s >= '0' && *s <= '9'   ? *s - '0'
                : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                         : -1;
        if (d < 0)
            break;
        v = v * 16 + (unsigned)d;
        if (v > 0xffffffffull)
            return false;
    }
    if (!digits)
        return false;
    *out = (uint32_t)v;
    *p = s;
    return true;
}

static bool parse_line(const char *s, struct cpuid_entry *e)
{
    uint32_t leaf, sub;

    if (!hex(&s, &leaf) || !hex(&s, &sub))
        return false;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s++ != ':')
        return false;
    for (int i = 0; i < 4; i++)
        if (!hex(&s, &e->regs[i]))
            return false;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    if (*s && *s != '\n' && *s != '#')
        return false;
    e->key = LEAF(leaf, sub);
    return true;
}

int corun_platform_cpuid_parse(const char *text, struct corun_platform_cpuid_dump **out,
                               unsigned *bad_line)
{
    struct corun_platform_cpuid_dump *d = calloc(1, sizeof(*d));
    size_t cap = 0;
    unsigned lineno = 0;

    *out = NULL;
    if (!d)
        return -ENOMEM;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n'), *p = line;
        struct cpuid_entry e;

        lineno++;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p && *p != '\n' && *p != '#') {
            if (!parse_line(p, &e)) {
                if (bad_line)
                    *bad_line = lineno;
                corun_platform_cpuid_free(d);
                return -EINVAL;
            }
            if (d->n == cap) {
                struct cpuid_entry *ne = realloc(d->e, (cap ? cap * 2 : 32) * sizeof(*ne));

                if (!ne) {
                    corun_platform_cpuid_free(d);
                    return -ENOMEM;
                }
                d->e = ne;
                cap = cap ? cap * 2 : 32;
            }
            d->e[d->n++] = e;
        }
        if (!end)
            break;
        line = end + 1;
    }
    *out = d;
    return 0;
}

void corun_platform_cpuid_free(struct corun_platform_cpuid_dump *d)
{
    if (!d)
        return;
    free(d->e);
    free(d);
}

bool corun_platform_cpuid_lookup(void *user, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
    const struct corun_platform_cpuid_dump *d = user;

    /* The last line for a leaf wins, so a dump can be patched by appending. */
    for (size_t i = d ? d->n : 0; i-- > 0;) {
        if (d->e[i].key == LEAF(leaf, subleaf)) {
            memcpy(regs, d->e[i].regs, sizeof(d->e[i].regs));
            return true;
        }
    }
    return false;
}
