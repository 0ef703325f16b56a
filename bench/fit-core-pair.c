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
 * the median over the machines; each one's figures follow.
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
 * Usage: fit-core-pair [FILE.xml...]. Each hwloc XML file adds a machine
 * with the parameters the simulator gives it (its defaults unless the CPU
 * model names a preset): most of bench/policies' machines run on the
 * defaults, whose issue width (2.7) is narrower than three of the five
 * presets'. A file without SMT or with under six cores in CPU 0's LLC is
 * left out, with a line on stderr. The last line is JSON: the median
 * tables, row by row.
 *
 * The per-vendor pair tables of profile-prior.c (core_pair_vendor) are the
 * rows this prints for the four machines of bench/fit/: one LLC of 12 or
 * 32 MB over eight SMT2 cores, at the simulator's defaults for Intel and
 * for AMD (bench/fit/README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun/policy.h"
#include "corun/profile.h"
#include "corun/sim.h"
#include "corun/topo.h"
#include "victim-speed.h"
#include "bench-util.h"

#define MAXM 8

/* Median over @nm presets of each entry of @x, printed as a table. */
static void print_median(const char *title, double x[][NCLS][NCLS], unsigned nm,
                         double med[NCLS][NCLS])
{
    printf("%s (victim row, aggressor column; median of %u machines):\n", title, nm);
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

/*
 * Measures the pair and spill tables of machine @m on topology @t into
 * @x and @sp: victim on CPU 0, aggressor on its sibling or on another core
 * of its LLC, and four streamers on more cores of that LLC for the spill.
 * 0, or -1 when @t has no SMT or too few cores in CPU 0's LLC.
 */
static int fit_machine(const struct corun_topo *t, const struct corun_sim_machine *m, double d3,
                       double x[NCLS][NCLS], double sp[NCLS][NCLS])
{
    int sib = -1, other = -1, bg[4];
    unsigned nbg = 0;

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
    if (sib < 0 || other < 0 || nbg < 4)
        return -1;
    for (int v = 0; v < NCLS; v++)
        for (int a = 0; a < NCLS; a++) {
            double s_smt = victim_speed(t, m, v, a, 0, sib);
            double s_two = victim_speed(t, m, v, a, 0, other);
            double b_smt = victim_speed_bg(t, m, v, a, 0, sib, 4, bg, nbg);
            double b_two = victim_speed_bg(t, m, v, a, 0, other, 4, bg, nbg);

            x[v][a] = (s_smt > 0 && s_two > 0) ? s_two / s_smt - 1 : 0;
            sp[v][a] = (s_smt > 0 && s_two > 0 && b_smt > 0 && b_two > 0)
                           ? ((1 / b_smt - 1 / b_two) - (1 / s_smt - 1 / s_two)) / d3
                           : 0;
        }
    return 0;
}

int main(int argc, char **argv)
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

        if (corun_sim_machine_preset(corun_sim_preset_at(i), &m, &syn))
            continue;
        o.input = syn;
        if (corun_topo_load(&o, &t))
            continue;
        if (!fit_machine(t, &m, d3, x[nm], sp[nm]))
            names[nm++] = corun_sim_preset_at(i);
        corun_topo_free(t);
    }
    /* Machines given as hwloc XML, with the parameters the simulator
     * takes for them (its defaults, unless the model names a preset). */
    for (int i = 1; i < argc; i++) {
        struct corun_topo_opts o = {.source = CORUN_TOPO_XML, .input = argv[i]};
        struct corun_sim_machine m;
        struct corun_topo *t;

        if (nm == MAXM) {
            fprintf(stderr, "fit-core-pair: at most %d machines\n", MAXM);
            return 2;
        }
        if (corun_topo_load(&o, &t)) {
            fprintf(stderr, "fit-core-pair: %s: cannot load\n", argv[i]);
            return 2;
        }
        corun_sim_machine_defaults(t, &m);
        if (fit_machine(t, &m, d3, x[nm], sp[nm]))
            fprintf(stderr, "fit-core-pair: %s: no SMT, or under 6 cores in an LLC: left out\n",
                    argv[i]);
        else
            names[nm++] = argv[i];
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
    printf("{\"bench\":\"fit-core-pair\",\"machines\":%u", nm);
    print_json_table("table", med);
    print_json_table("spill", spmed);
    printf("}\n");
    return 0;
}
