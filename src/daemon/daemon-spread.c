/*
 * daemon-spread.c — a process whose threads want more than one CPU is not
 * squeezed onto one.
 *
 * The engine, like every policy, gives a process one CPU. For a
 * single-threaded process that is all it can use; a process whose threads
 * keep more than one CPU busy would be slowed down by as many times as it
 * has busy threads — the opposite of what the daemon is for (numad and
 * irqbalance would not do it either). So before the engine may place a
 * busy process, and every tick while it is placed, the daemon reads how
 * many CPUs' worth the process asked for over the last interval
 * (corun_procsel_cpus_wanted(): its threads' time on a CPU plus their time
 * waiting for one, per second, from schedstat):
 *
 *   - above SPREAD_CPUS (1.5) it is *spread*: left to the kernel, out of the
 *     engine's plans. A placed one is given back its own mask through the
 *     engine's remove (the actuator restores it and drops its journal
 *     entry), so that threads it started since get every CPU back too.
 *   - it is placed again only after SPREAD_CALM (5) busy ticks in a row at
 *     or under ONE_CPU (1.1).
 *
 * Why these numbers. A single thread can ask for one CPU at most, running or
 * waiting, so 1.5 is out of its reach (corun_procsel_cpus_wanted() counts
 * no more than one CPU a thread: the scheduler counts a wait when it ends,
 * and a long one landed whole in one interval, 1.8 CPUs for a spinner
 * sharing its CPU under a sanitizer's load); it is a
 * second thread busy at least half the time, corun run's "busy thread".
 * While the process is pinned to one CPU it runs at most the interval, so
 * asking for more than 1.5 means its threads waited for that CPU more than
 * half the interval: more than half the CPU time it got — the share of
 * corun batch's rule for a pinned job (docs/batch.md, step 5). Batch's rule
 * also unpins a single-threaded job that waits because the CPU is shared
 * with work corun does not control; the daemon does not, as on a crowded
 * host every process waits and moving them is the policy's business: it
 * sees who shares what. The lower bar for coming back (1.1) and the calm
 * ticks keep a process that asks for 1.2 CPUs unpinned, but 2 pinned (its
 * threads waiting for each other), from going back and forth.
 */
#include <math.h>
#include <stdio.h>

#include "common/internal.h"
#include "daemon/daemon-internal.h"

#define SPREAD_CPUS 1.5 /* CPUs asked for above which a process is not pinned to one */
#define ONE_CPU     1.1 /* about one CPU, with the accounting's error */
#define SPREAD_CALM 5   /* busy ticks in a row at ONE_CPU or under before it is placed again */

bool corun__daemon_spread_judge(bool spread, unsigned *calm, double wanted)
{
    if (isnan(wanted))
        return spread;
    if (wanted > SPREAD_CPUS || (spread && wanted > ONE_CPU)) {
        *calm = 0;
        return true;
    }
    if (spread && ++*calm < SPREAD_CALM)
        return true;
    *calm = 0;
    return false;
}

/* Reads @m's scheduler figures now into m->sched: its CPU use over the
 * interval since the last reading, when that was the last tick. */
static void read_sched(struct corun_daemon *d, struct managed *m)
{
    struct corun_proc_sched now;
    bool fresh = m->sched_tick && m->sched_tick + 1 == d->ticks;
    uint64_t t;

    m->cpus_wanted = NAN;
    if (corun_procsel_sched(d->sel, m->pid, m->start_ticks, &now) != 0) {
        m->sched_tick = 0;
        return;
    }
    /* The time of this reading, not of the tick: on a crowded host the
     * daemon itself waits for a CPU between ticks' reads of a process, and
     * the tick's time would count that wait as the process's demand. */
    t = corun__now_ns();
    m->last_cpu = now.last_cpu;
    m->nthreads = now.nthreads;
    if (fresh && t > m->sched_ns)
        m->cpus_wanted = corun_procsel_cpus_wanted(&m->sched, &now, t - m->sched_ns);
    m->sched = now;
    m->sched_ns = t;
    m->sched_tick = d->ticks;
}

/* Gives placed process @m back to the kernel: the engine's remove restores
 * its own mask through the actuator (and its journal entry goes). */
static void give_back(struct corun_daemon *d, struct managed *m)
{
    int from = corun__daemon_os_cpu(d, m->placed);
    int err = corun__daemon_release(d, m, !m->owner_took_over);
    char why[160];

    corun_cpuset_release(&m->mask);
    snprintf(why, sizeof(why),
             "given back: its %u threads want %.1f CPUs, more than the one it was placed on",
             m->nthreads, m->cpus_wanted);
    corun__daemon_record(d, m, from, -1, err, why);
}

bool corun__daemon_spread_check(struct corun_daemon *d, struct managed *m)
{
    bool was = m->spread;

    read_sched(d, m);
    m->spread = corun__daemon_spread_judge(was, &m->spread_calm, m->cpus_wanted);
    if (!m->spread)
        return false;
    if (m->placed >= 0)
        give_back(d, m);
    else if (!was)
        corun__info("daemon: %d (%s) wants %.1f CPUs: left to the kernel", (int)m->pid, m->comm,
                    m->cpus_wanted);
    if (isnan(m->cpus_wanted))
        return true; /* the last reason stands */
    if (m->spread_calm)
        snprintf(m->why, sizeof(m->why),
                 "left to the kernel: its threads wanted more than %.1f CPUs; now %.1f, placed "
                 "again after %u more ticks at about one",
                 SPREAD_CPUS, m->cpus_wanted, SPREAD_CALM - m->spread_calm);
    else
        snprintf(m->why, sizeof(m->why),
                 "left to the kernel: its %u threads want %.1f CPUs, more than the one a "
                 "placement gives",
                 m->nthreads, m->cpus_wanted);
    return true;
}
