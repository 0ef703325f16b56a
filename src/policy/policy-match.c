/*
 * policy-match.c — minimum-weight choice of SMT pairs on a cost matrix, for
 * the corun policy's step 3 (policy-corun.c): exact by dynamic programming
 * over subsets for few tasks, greedy with pair exchanges beyond.
 *
 * Pure: it reads the matrix, allocates, and computes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy-internal.h"

/*
 * Exact minimum-weight choice of @npairs pairs among @nt tasks (the rest
 * alone) by dynamic programming over subsets: the lowest task left is either
 * alone or paired with another. @cost is nt*nt. Pairs go to @mate (-1 alone).
 */
int corun__match_exact(const double *cost, unsigned nt, unsigned npairs, int *mate)
{
    unsigned nsingle = nt - 2 * npairs, full = (1u << nt) - 1;
    size_t states = (size_t)(full + 1) * (nsingle + 1);
    double *dp = malloc(states * sizeof(*dp));
    signed char *choice = malloc(states);

    if (!dp || !choice) {
        free(dp);
        free(choice);
        return -ENOMEM;
    }
    /* dp[mask][s]: least cost to finish the tasks in mask with s singles
     * still allowed; iterate masks by increasing size (subsets first). */
    for (unsigned mask = 0; mask <= full; mask++) {
        for (unsigned s = 0; s <= nsingle; s++) {
            size_t at = (size_t)mask * (nsingle + 1) + s;
            unsigned i, rest;
            double best = INFINITY;
            int bc = -2;

            if (!mask) {
                dp[at] = s == 0 ? 0 : INFINITY;
                choice[at] = -2;
                continue;
            }
            i = (unsigned)__builtin_ctz(mask);
            rest = mask & ~(1u << i);
            if (s > 0 && dp[(size_t)rest * (nsingle + 1) + s - 1] < best) {
                best = dp[(size_t)rest * (nsingle + 1) + s - 1];
                bc = -1;
            }
            for (unsigned j = i + 1; j < nt; j++) {
                double v;

                if (!(rest & (1u << j)))
                    continue;
                v = cost[i * nt + j] + dp[(size_t)(rest & ~(1u << j)) * (nsingle + 1) + s];
                if (v < best) {
                    best = v;
                    bc = (int)j;
                }
            }
            dp[at] = best;
            choice[at] = (signed char)bc;
        }
    }
    for (unsigned mask = full, s = nsingle; mask;) {
        unsigned i = (unsigned)__builtin_ctz(mask);
        int c = choice[(size_t)mask * (nsingle + 1) + s];

        mask &= ~(1u << i);
        if (c == -1) {
            mate[i] = -1;
            s--;
        } else {
            mate[i] = c;
            mate[c] = (int)i;
            mask &= ~(1u << (unsigned)c);
        }
    }
    free(dp);
    free(choice);
    return 0;
}

struct pair_c {
    double cost;
    unsigned a, b;
};

static int by_cost(const void *x, const void *y)
{
    const struct pair_c *p = x, *q = y;

    if (p->cost != q->cost)
        return p->cost < q->cost ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* Greedy: cheapest pairs first, then exchanges between two pairs and
 * between a pair and a single until none helps (bounded passes). */
int corun__match_greedy(const double *cost, unsigned nt, unsigned npairs, int *mate)
{
    size_t np = (size_t)nt * (nt - 1) / 2, k = 0;
    struct pair_c *pc = malloc((np ? np : 1) * sizeof(*pc));
    unsigned made = 0;

    if (!pc)
        return -ENOMEM;
    for (unsigned a = 0; a < nt; a++)
        for (unsigned b = a + 1; b < nt; b++)
            pc[k++] = (struct pair_c){cost[a * nt + b], a, b};
    qsort(pc, np, sizeof(*pc), by_cost);
    for (unsigned i = 0; i < nt; i++)
        mate[i] = -1;
    for (size_t i = 0; i < np && made < npairs; i++)
        if (mate[pc[i].a] < 0 && mate[pc[i].b] < 0) {
            mate[pc[i].a] = (int)pc[i].b;
            mate[pc[i].b] = (int)pc[i].a;
            made++;
        }
    free(pc);
    for (unsigned pass = 0; pass < 8; pass++) {
        bool improved = false;

        for (unsigned a = 0; a < nt; a++) {
            int b = mate[a];

            if (b < 0 || (unsigned)b < a)
                continue;
            for (unsigned c = 0; c < nt; c++) {
                int d = mate[c];
                double now, alt1, alt2;

                if (c == a || (int)c == b)
                    continue;
                if (d < 0) { /* c alone: try c in place of a, or of b */
                    now = cost[a * nt + b];
                    alt1 = cost[c * nt + b];
                    alt2 = cost[a * nt + c];
                    if (alt1 < now - 1e-12 && alt1 <= alt2) {
                        mate[c] = b, mate[b] = (int)c, mate[a] = -1;
                        improved = true;
                        break;
                    }
                    if (alt2 < now - 1e-12) {
                        mate[c] = (int)a, mate[a] = (int)c, mate[b] = -1;
                        b = (int)c;
                        improved = true;
                    }
                    continue;
                }
                if ((unsigned)d < c)
                    continue;
                now = cost[a * nt + b] + cost[c * nt + d];
                alt1 = cost[a * nt + c] + cost[b * nt + d];
                alt2 = cost[a * nt + d] + cost[b * nt + c];
                if (alt1 < now - 1e-12 && alt1 <= alt2) {
                    mate[a] = (int)c, mate[c] = (int)a, mate[b] = d, mate[d] = b;
                    b = (int)c;
                    improved = true;
                } else if (alt2 < now - 1e-12) {
                    mate[a] = d, mate[d] = (int)a, mate[b] = (int)c, mate[c] = b;
                    b = d;
                    improved = true;
                }
            }
        }
        if (!improved)
            break;
    }
    return 0;
}
