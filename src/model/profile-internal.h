/*
 * profile-internal.h — what the learner (src/model/profile.c) and the
 * policies' predictor (src/policy/policy-model.c) must agree on: which
 * domain of a CPU counts as shared at a level, and how strongly.
 */
#ifndef CORUN_PROFILE_INTERNAL_H
#define CORUN_PROFILE_INTERNAL_H

#include "corun/topo.h"

/*
 * corun__share_dom() - the domain of CPU @cpu at @level that the interference
 * model counts, or -1: none, or an L2 private to one core (what SMT siblings
 * share is counted once, at the core level). *@scale weighs the damage
 * there: for a memory domain it multiplies neighbour pressure (bandwidth
 * grows with the cores a domain holds, so pressure counts per six cores,
 * within 0.1..2); for a cache it multiplies the damage itself (what a
 * sensitive task can lose grows with the cache it could hold: per 16 MB,
 * within 0.25..2); 1 elsewhere or when the size is unknown.
 */
int corun__share_dom(const struct corun_topo *topo, unsigned cpu, enum corun_level level,
                     double *scale);

#endif
