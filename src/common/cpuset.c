/*
 * cpuset.c — CPU sets of any size, and the Linux CPU-list syntax
 * ("0-3,8,10-15:2") that users type and /sys writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"

#define CPUSET_MAX_CPU (1u << 20)

static unsigned words_for(unsigned nbits)
{
    return (nbits + 63) / 64;
}

int corun_cpuset_init(struct corun_cpuset *set, unsigned nbits)
{
    unsigned nw = words_for(nbits ? nbits : 64);

    set->words = calloc(nw, sizeof(uint64_t));
    if (!set->words) {
        set->nbits = 0;
        return -ENOMEM;
    }
    set->nbits = nw * 64;
    return 0;
}

void corun_cpuset_release(struct corun_cpuset *set)
{
    if (!set)
        return;
    free(set->words);
    set->words = NULL;
    set->nbits = 0;
}

int corun_cpuset_reserve(struct corun_cpuset *set, unsigned nbits)
{
    unsigned old = set->nbits / 64, nw = words_for(nbits);
    uint64_t *w;

    if (nw <= old && set->words)
        return 0;
    if (nw < 1)
        nw = 1;
    w = realloc(set->words, nw * sizeof(uint64_t));
    if (!w)
        return -ENOMEM;
    memset(w + old, 0, (nw - old) * sizeof(uint64_t));
    set->words = w;
    set->nbits = nw * 64;
    return 0;
}

int corun_cpuset_set(struct corun_cpuset *set, unsigned cpu)
{
    if (cpu >= set->nbits) {
        int err = corun_cpuset_reserve(set, cpu + 1);

        if (err)
            return err;
    }
    set->words[cpu / 64] |= 1ull << (cpu % 64);
    return 0;
}

void corun_cpuset_clear(struct corun_cpuset *set, unsigned cpu)
{
    if (cpu < set->nbits)
        set->words[cpu / 64] &= ~(1ull << (cpu % 64));
}

void corun_cpuset_zero(struct corun_cpuset *set)
{
    if (set->words)
        memset(set->words, 0, set->nbits / 8);
}

bool corun_cpuset_isset(const struct corun_cpuset *set, unsigned cpu)
{
    return cpu < set->nbits && (set->words[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned corun_cpuset_count(const struct corun_cpuset *set)
{
    unsigned n = 0;

    for (unsigned i = 0; i < set->nbits / 64; i++)
        n += (unsigned)__builtin_popcountll(set->words[i]);
    return n;
}

int corun_cpuset_next(const struct corun_cpuset *set, unsigned from)
{
    for (unsigned w = from / 64; w < set->nbits / 64; w++) {
        uint64_t bits = set->words[w];

        if (w == from / 64)
            bits &= ~0ull << (from % 64);
        if (bits)
            return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
    }
    return -1;
}

int corun_cpuset_copy(struct corun_cpuset *dst, const struct corun_cpuset *src)
{
    int err = corun_cpuset_reserve(dst, src->nbits);

    if (err)
        return err;
    corun_cpuset_zero(dst);
    if (src->nbits)
        memcpy(dst->words, src->words, src->nbits / 8);
    return 0;
}

void corun_cpuset_and(struct corun_cpuset *dst, const struct corun_cpuset *src)
{
    for (unsigned i = 0; i < dst->nbits / 64; i++)
        dst->words[i] &= i < src->nbits / 64 ? src->words[i] : 0;
}

bool corun_cpuset_equal(const struct corun_cpuset *a, const struct corun_cpuset *b)
{
    unsigned na = a->nbits / 64, nb = b->nbits / 64, n = na > nb ? na : nb;

    for (unsigned i = 0; i < n; i++) {
        uint64_t wa = i < na ? a->words[i] : 0, wb = i < nb ? b->words[i] : 0;

        if (wa != wb)
            return false;
    }
    return true;
}

/* Parses a decimal CPU number at *p; 0, -EINVAL or -ERANGE. */
static int parse_num(const char **p, unsigned *out)
{
    unsigned long v = 0;
    const char *s = *p;

    if (*s < '0' || *s > '9')
        return -EINVAL;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > CPUSET_MAX_CPU)
            return -ERANGE;
        s++;
    }
    *p = s;
    *out = (unsigned)v;
    return 0;
}

int corun_cpuset_parse(struct corun_cpuset *set, const char *list, size_t *bad_at)
{
    const char *p = list;
    int err;

    if (!set->words && (err = corun_cpuset_init(set, 64)))
        return err;
    corun_cpuset_zero(set);
    while (*p == ' ' || *p == '\t')
        p++;
    while (*p && *p != '\n') {
        unsigned lo, hi, stride = 1;

        if ((err = parse_num(&p, &lo)))
            goto out_bad;
        hi = lo;
        if (*p == '-') {
            p++;
            if ((err = parse_num(&p, &hi)))
                goto out_bad;
            if (hi < lo) {
                err = -EINVAL;
                goto out_bad;
            }
            if (*p == ':') {
                p++;
                if ((err = parse_num(&p, &stride)))
                    goto out_bad;
                if (stride == 0) {
                    err = -EINVAL;
                    goto out_bad;
                }
            }
        }
        for (unsigned c = lo; c <= hi; c += stride)
            if ((err = corun_cpuset_set(set, c)))
                return err;
        if (*p == ',') {
            p++;
            if (!*p || *p == '\n' || *p == ' ') {
                err = -EINVAL;
                goto out_bad;
            }
        } else if (*p && *p != '\n' && *p != ' ' && *p != '\t') {
            err = -EINVAL;
            goto out_bad;
        } else {
            break;
        }
    }
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p) {
        err = -EINVAL;
        goto out_bad;
    }
    return 0;

out_bad:
    if (bad_at)
        *bad_at = (size_t)(p - list);
    return err;
}

size_t corun_cpuset_format(const struct corun_cpuset *set, char *buf, size_t len)
{
    size_t need = 0;
    int c = corun_cpuset_next(set, 0);

    if (len)
        buf[0] = '\0';
    while (c >= 0) {
        int end = c;
        char item[32];
        int n;

        while (corun_cpuset_isset(set, (unsigned)end + 1))
            end++;
        if (end == c)
            n = snprintf(item, sizeof(item), "%s%d", need ? "," : "", c);
        else
            n = snprintf(item, sizeof(item), "%s%d-%d", need ? "," : "", c, end);
        if (need + (size_t)n < len)
            memcpy(buf + need, item, (size_t)n + 1);
        need += (size_t)n;
        c = corun_cpuset_next(set, (unsigned)end + 1);
    }
    return need;
}
