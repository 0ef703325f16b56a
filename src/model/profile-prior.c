/*
 * profile-prior.c — what corun assumes about a task before it has watched
 * it share anything: a class from its counters and the typical pressure and
 * sensitivity of that class at each sharing level.
 *
 * The figures are starting points, set so that the products of the model of
 * struct corun_task_profile land inside the published bands the simulator
 * is calibrated on (../shared/SIMULATOR.md): two compute-bound threads on one
 * SMT core yield about 1.0-1.1 together, compute with memory-bound about
 * 1.4-1.5, two streamers about 1.1 on the core alone; a pointer chaser beside
 * a streamer in one LLC loses well over half its speed; rabbits lose most
 * when a cache is shared with streamers. The learner corrects them per task.
 */
#include <math.h>

#include "corun/profile.h"

/* Rows: classes; columns: core, L2, L3, NUMA. */
static const double prior_press[CORUN_NCLASSES][4] = {
    [CORUN_CLASS_COMPUTE] = {1.00, 0.01, 0.02, 0.00},
    [CORUN_CLASS_SHEEP] = {0.70, 0.10, 0.20, 0.03},
    [CORUN_CLASS_RABBIT] = {0.50, 0.40, 0.80, 0.10},
    [CORUN_CLASS_CHASING] = {0.15, 1.00, 2.00, 0.15},
    [CORUN_CLASS_STREAMING] = {0.25, 1.50, 3.00, 0.30},
};
static const double prior_sens[CORUN_NCLASSES][4] = {
    [CORUN_CLASS_COMPUTE] = {1.00, 0.02, 0.05, 0.02},
    [CORUN_CLASS_SHEEP] = {0.70, 0.15, 0.30, 0.15},
    [CORUN_CLASS_RABBIT] = {0.50, 0.50, 1.50, 0.50},
    [CORUN_CLASS_CHASING] = {0.30, 0.40, 1.00, 0.90},
    [CORUN_CLASS_STREAMING] = {0.40, 0.05, 0.10, 0.70},
};

static int level_col(enum corun_level level)
{
    switch (level) {
    case CORUN_LEVEL_CORE:
        return 0;
    case CORUN_LEVEL_L2:
        return 1;
    case CORUN_LEVEL_L3:
        return 2;
    case CORUN_LEVEL_NUMA:
        return 3;
    default:
        return -1;
    }
}

void corun_profile_prior(enum corun_class cls, enum corun_level level, double *pressure,
                         double *sensitivity)
{
    int col = level_col(level);
    double p = 0, s = 0;

    if (col >= 0) {
        if ((unsigned)cls < CORUN_NCLASSES) {
            p = prior_press[cls][col];
            s = prior_sens[cls][col];
        } else {
            /* Unknown: the mean of the classes, so that an unknown task
             * is neither hidden away nor treated as a devil. */
            for (int c = 0; c < CORUN_NCLASSES; c++) {
                p += prior_press[c][col] / CORUN_NCLASSES;
                s += prior_sens[c][col] / CORUN_NCLASSES;
            }
        }
    }
    if (pressure)
        *pressure = p;
    if (sensitivity)
        *sensitivity = s;
}

/*
 * The rules follow the animal classes: devils miss a lot and mostly miss
 * (the cache does not hold their data); streamers keep many misses in flight
 * so their IPC stays well above a pointer chaser's; rabbits reference the
 * LLC often but hit when they have it; sheep miss a little; turtles hardly
 * reach the LLC.
 */
enum corun_class corun_profile_classify(double ipc, double mpki, double miss_ratio)
{
    double refs_pki;

    if (isnan(mpki))
        return CORUN_CLASS_UNKNOWN;
    refs_pki = (!isnan(miss_ratio) && miss_ratio > 0) ? mpki / miss_ratio : NAN;
    if (mpki >= 10 && (isnan(miss_ratio) || miss_ratio >= 0.6))
        return (!isnan(ipc) && ipc < 0.3) ? CORUN_CLASS_CHASING : CORUN_CLASS_STREAMING;
    if (!isnan(refs_pki) && refs_pki >= 8 && miss_ratio < 0.6)
        return CORUN_CLASS_RABBIT;
    if (mpki >= 10)
        return CORUN_CLASS_RABBIT;
    if (mpki >= 1)
        return CORUN_CLASS_SHEEP;
    return CORUN_CLASS_COMPUTE;
}

/*
 * A core needs about 0.6 cycles per instruction when nothing stalls (the
 * middle of the cpi_core range of common codes), so the share of cycles an
 * IPC leaves unexplained is memory stall; tasks that hardly miss get none of
 * it whatever their IPC says (branchy code is not memory-bound).
 */
double corun_profile_mem_share(double ipc, double mpki)
{
    double mf;

    if (isnan(ipc) && isnan(mpki))
        return 0.5;
    if (isnan(ipc))
        return mpki >= 10 ? 0.7 : mpki >= 1 ? 0.3 : 0.05;
    mf = 1.0 - 0.6 * ipc;
    if (!isnan(mpki) && mpki < 2)
        mf *= mpki / 2;
    if (mf < 0)
        mf = 0;
    if (mf > 0.98)
        mf = 0.98;
    return mf;
}
