/*
 * fit-core-pair.c — derives the class-pair table of SMT interference that
 * the corun policy starts from (core_pair[][] in src/model/profile-prior.c)
 * from the simulator, so that the prior can be re-fitted whenever the model
 * changes instead of being tuned by hand.
 *
 * For each preset with SMT and each (victim, aggressor) class pair, two
 * tasks run on an otherwise idle machine: once as the two threads of one
 * core, once on two cores of the same LLC. The table entry is the victim's
 * extra run time from sharing the core alone: speed on two cores / speed as
 * siblings - 1 (what sharing the LLC and memory costs is counted at those
 * levels by the predictor, so it is taken out here). The printed table is
 * the median over the presets; each preset's figures follow.
 *
 * Then the spill table (core_spill[][]): the same two configurations with
 * four streamers on other cores of the LLC. What sharing the core costs
 * then, less what it costs in the idle LLC, per unit of the L3 share the
 * predictor says the victim loses to the streamers (d3 = P/(1+P), P their
 * summed class-prior L3 pressure): the victim's misses that its sibling
 * pushes out of their shared L2 hit an idle LLC but go to memory from a
 * full one. Extra times are differences of 1/speed, as the predictor adds
 * the levels' extra times.
 *
 * Usage: fit-core-pair. The last line is JSON: the median tables, row by
 * row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun/policy.h"
#include "corun/profile.h"
#include "corun/sim.h"
#include "corun/topo.h"
#include "victim-speed.h"

#define MAXM 8

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Median over @nm presets of each entry of @x, printed as a table. */
static void print_median(const char *title, double x[][NCLS][NCLS], unsigned nm,
                         double med[NCLS][NCLS])
{
    printf("%s (victim row, aggressor column; median of %u presets):\n", title, nm);
    printf("%-10s", "");
    for (int a = 0; a < NCLS; a++)
        printf(" %9s", corun_class_name((enum corun_class)a));
    printf("\n");
    for (int v = 0; v < NCLS; v++) {
        printf("%-10s", corun_class_name((enum corun_class)v));
        for (int a = 0; a < NCLS; a++) {
            double col[MAXM];

            for (unsigned k = 0; k < nm; k++)
                col[k] = x[k][v][a];
            qsort(col, nm, sizeof(double), cmp_d);
            med[v][a] = nm % 2 ? col[nm / 2] : (col[nm / 2 - 1] + col[nm / 2]) / 2;
            printf(" %9.2f", med[v][a]);
        }
        printf("\n");
    }
}

static void print_json_table(const char *key, double med[NCLS][NCLS])
{
    printf(",\"%s\":[", key);
    for (int v = 0; v < NCLS; v++)
        for (int a = 0; a < NCLS; a++)
            printf("%s%.3f", v || a ? "," : "", med[v][a]);
    printf("]");
}

int main(void)
{
    double x[MAXM][NCLS][NCLS], med[NCLS][NCLS], sp[MAXM][NCLS][NCLS], spmed[NCLS][NCLS];
    double pstream, d3;
    const char *names[MAXM];
    unsigned nm = 0;

    corun_profile_prior(CORUN_CLASS_STREAMING, CORUN_LEVEL_L3, &pstream, NULL);
    d3 = 4 * pstream / (1 + 4 * pstream);
    for (unsigned i = 0; corun_sim_preset_at(i) && nm < MAXM; i++) {
        struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC};
        struct corun_sim_machine m;
        struct corun_topo *t;
        const char *syn;
        int sib = -1, other = -1, bg[4];
        unsigned nbg = 0;

        if (corun_sim_machine_preset(corun_sim_preset_at(i), &m, &syn))
            continue;
        o.input = syn;
        if (corun_topo_load(&o, &t))
            continue;
        /* CPU 0's sibling, and the first thread of another core in its LLC. */
        for (unsigned c = 1; c < corun_topo_ncpus(t); c++) {
            enum corun_level l = corun_topo_shared_level(t, 0, c);

            if (l == CORUN_LEVEL_CORE && sib < 0)
                sib = (int)c;
            else if (l == CORUN_LEVEL_L3 && corun_topo_cpu(t, c)->smt_rank == 0) {
                if (other < 0)
                    other = (int)c;
                else if (nbg < 4)
                    bg[nbg++] = (int)c;
            }
        }
        if (sib < 0 || other < 0 || nbg < 4) {
            corun_topo_free(t);
            continue;
        }
        names[nm] = corun_sim_preset_at(i);
        for (int v = 0; v < NCLS; v++)
            for (int a = 0; a < NCLS; a++) {
                double s_smt = victim_speed(t, &m, v, a, 0, sib);
                double s_two = victim_speed(t, &m, v, a, 0, other);

                double b_smt = victim_speed_bg(t, &m, v, a, 0, sib, 4, bg, nbg);
                double b_two = victim_speed_bg(t, &m, v, a, 0, other, 4, bg, nbg);

                x[nm][v][a] = (s_smt > 0 && s_two > 0) ? s_two / s_smt - 1 : 0;
                sp[nm][v][a] = (s_smt > 0 && s_two > 0 && b_smt > 0 && b_two > 0)
                                   ? ((1 / b_smt - 1 / b_two) - (1 / s_smt - 1 / s_two)) / d3
                                   : 0;
            }
        nm++;
        corun_topo_free(t);
    }
    if (!nm) {
        fprintf(stderr, "fit-core-pair: no preset with SMT\n");
        return 1;
    }
    print_median("core_pair", x, nm, med);
    print_median("core_spill, per unit of L3 share lost", sp, nm, spmed);
    for (unsigned k = 0; k < nm; k++) {
        printf("\n%s:\n", names[k]);
        for (int v = 0; v < NCLS; v++) {
            printf("%-10s", corun_class_name((enum corun_class)v));
            for (int a = 0; a < NCLS; a++)
                printf(" %9.2f", x[k][v][a]);
            printf("   spill");
            for (int a = 0; a < NCLS; a++)
                printf(" %6.2f", sp[k][v][a]);
            printf("\n");
        }
    }
    printf("{\"bench\":\"fit-core-pair\",\"presets\":%u", nm);
    print_json_table("table", med);
    print_json_table("spill", spmed);
    printf("}\n");
    return 0;
}
