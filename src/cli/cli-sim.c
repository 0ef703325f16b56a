/*
 * cli-sim.c — `corun sim`: run a workload on a simulated machine under the
 * reference placements and the registered policies, and compare them.
 *
 * The machine is a preset (skx28...), an hwloc XML file or synthetic:DESC;
 * the workload a file (docs/sim-workloads.md) or random:N:SEED. Each policy
 * is run on a fresh simulation with the same seed; capture is measured
 * against the baseline and the oracle, which are computed whenever a policy
 * needs them even if not asked for. Output: a table, one row per policy, or
 * JSON (docs/internals/sim.md); with --events, each policy run's engine
 * events as they happen, a line each, before the table.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/topo-load.h"
#include "corun/sim.h"

#define CMD      "sim"
#define MAX_RUNS 64

struct run {
    char name[48];
    int ref; /* enum corun_sim_ref, or -1 for a policy */
    const struct corun_policy *pol;
    bool shown; /* asked for (else computed for capture) */
    struct corun_sim_result res;
    struct corun_sim_search search;
    bool done;
};

struct sim_cli {
    const char *machine_arg, *workload_arg;
    struct corun_topo *topo;
    struct corun_sim_machine m;
    struct corun_sim_workload *w;
    struct corun_sim_run_opts opts;
    struct run runs[MAX_RUNS];
    unsigned nruns;
    bool json;
    bool events;               /* --events: the engine's moves, a line each */
    const struct run *running; /* the policy run the events come from */
};

static int load_machine(struct sim_cli *c)
{
    const char *synthetic = NULL;
    int rc;

    if (!corun_sim_machine_preset(c->machine_arg, &c->m, &synthetic))
        return cli_topo_load(CMD, NULL, synthetic, &c->topo);
    if (!strncmp(c->machine_arg, "synthetic:", 10))
        rc = cli_topo_load(CMD, NULL, c->machine_arg + 10, &c->topo);
    else
        rc = cli_topo_load(CMD, c->machine_arg, NULL, &c->topo);
    if (rc)
        return rc;
    corun_sim_machine_defaults(c->topo, &c->m);
    return 0;
}

static int load_workload(struct sim_cli *c)
{
    char err[512];
    unsigned long n, seed;
    int rc;

    if (!strncmp(c->workload_arg, "random:", 7)) {
        char buf[64], *colon;

        snprintf(buf, sizeof(buf), "%s", c->workload_arg + 7);
        colon = strchr(buf, ':');
        if (colon)
            *colon = '\0';
        if (!colon || !cli_parse_uint(buf, &n) || !cli_parse_uint(colon + 1, &seed) || n == 0 ||
            n > CORUN_SIM_MAX_TASKS)
            return cli_usage_error(CMD, "--workload random:N:SEED needs 1 <= N <= %u and a seed",
                                   CORUN_SIM_MAX_TASKS);
        rc = corun_sim_workload_random((unsigned)n, seed, &c->w);
        if (rc) {
            cli_error(CMD, "random workload: %s", corun_strerror(rc));
            return CLI_EXIT_FAIL;
        }
        return 0;
    }
    rc = corun_sim_workload_load(c->workload_arg, &c->w, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return rc == -ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
    }
    return 0;
}

static struct run *find_run(struct sim_cli *c, const char *name)
{
    for (unsigned i = 0; i < c->nruns; i++)
        if (!strcmp(c->runs[i].name, name))
            return &c->runs[i];
    return NULL;
}

static int add_run(struct sim_cli *c, const char *name, bool shown)
{
    struct run *r = find_run(c, name);
    int ref = corun_sim_ref_by_name(name);
    const struct corun_policy *pol = ref < 0 ? corun_policy_find(name) : NULL;

    if (r) {
        r->shown |= shown;
        return 0;
    }
    if (ref < 0 && !pol)
        return cli_usage_error(CMD,
                               "unknown policy '%s' (baseline, random, worst, oracle, "
                               "fairest, a registered policy, or all)",
                               name);
    if (c->nruns == MAX_RUNS)
        return cli_usage_error(CMD, "too many policies");
    r = &c->runs[c->nruns++];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->ref = ref;
    r->pol = pol;
    r->shown = shown;
    return 0;
}

static int parse_policies(struct sim_cli *c, const char *list)
{
    char *dup = strdup(list), *save = NULL, *tok;
    int rc = 0;

    if (!dup)
        return CLI_EXIT_FAIL;
    for (tok = strtok_r(dup, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "all")) {
            for (int r = 0; r < CORUN_SIM_NREFS && !rc; r++)
                rc = add_run(c, corun_sim_ref_name((enum corun_sim_ref)r), true);
            for (unsigned i = 0; corun_policy_at(i) && !rc; i++)
                rc = add_run(c, corun_policy_at(i)->name, true);
        } else {
            rc = add_run(c, tok, true);
        }
    }
    free(dup);
    if (!rc && c->nruns == 0)
        rc = cli_usage_error(CMD, "--policy needs at least one name");
    /* Capture needs both ends of the scale. */
    if (!rc)
        rc = add_run(c, "baseline", false);
    if (!rc)
        rc = add_run(c, "oracle", false);
    return rc;
}

/*
 * run_registered_policy() - a registered policy on the simulator, driven by
 * the engine (corun_sim_run_policy(): warm-up under the baseline, then
 * sample, learn, place and apply every interval).
 */
static int run_registered_policy(struct sim_cli *c, struct run *r)
{
    int err;

    c->running = r;
    err =
        corun_sim_run_policy(c->topo, &c->m, c->w->tasks, c->w->ntasks, r->pol, &c->opts, &r->res);
    c->running = NULL;
    return err;
}

static int run_all(struct sim_cli *c)
{
    for (unsigned i = 0; i < c->nruns; i++) {
        struct run *r = &c->runs[i];
        int err;

        r->search.method = "-";
        if (r->ref >= 0)
            err = corun_sim_run_ref(c->topo, &c->m, c->w->tasks, c->w->ntasks,
                                    (enum corun_sim_ref)r->ref, &c->opts, &r->res, &r->search);
        else
            err = run_registered_policy(c, r);
        if (err) {
            cli_error(CMD, "policy %s: %s", r->name, corun_strerror(err));
            return CLI_EXIT_FAIL;
        }
        r->done = true;
    }
    return 0;
}

static double capture(struct sim_cli *c, const struct run *r)
{
    const struct run *b = find_run(c, "baseline"), *o = find_run(c, "oracle");
    double span;

    if (!b || !o || !b->done || !o->done)
        return NAN;
    span = o->res.stp - b->res.stp;
    /* Below a 1% gap, capture is a ratio of noise: report it missing. */
    if (!(span > 0.01 * fabs(b->res.stp)))
        return NAN;
    return (r->res.stp - b->res.stp) / span;
}

static void task_cpus(const struct sim_cli *c, int cpu, char *buf, size_t len)
{
    if (cpu < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%u", corun_topo_cpu(c->topo, (unsigned)cpu)->os_index);
}

/*
 * --events: one line per event of the engine, as it happens, in
 * key=value fields:
 *   event POLICY t=SECONDS move|pin|undo task=I name=NAME cpu=FROM->TO [predicted=A->B] [error=...]
 *   event POLICY t=SECONDS memory task=I name=NAME node=FROM->TO [error=...]
 * CPUs and nodes by the kernel's numbers ("unpinned": the task runs where
 * the kernel puts it; "unknown": a node not known); pin is a move that
 * pinned a task where it already ran;
 * predicted, the speeds the engine's prediction gave the task where it ran
 * and where the plan put it.
 */
static void print_event(void *ctx, double t_s, const struct corun_engine_event *ev)
{
    const struct sim_cli *c = ctx;
    const char *kind = ev->kind == CORUN_ENGINE_EV_UNDO     ? "undo"
                       : ev->kind == CORUN_ENGINE_EV_MEMORY ? "memory"
                       : ev->in_place                       ? "pin"
                                                            : "move";
    const char *name = ev->idx < c->w->ntasks ? c->w->tasks[ev->idx].name : "?";
    char from[16], to[16];

    printf("event %s t=%.3f %s task=%u name=%s", c->running ? c->running->name : "?", t_s, kind,
           ev->idx, name);
    if (ev->kind == CORUN_ENGINE_EV_MEMORY) {
        const struct corun_topo_domain *a =
            ev->from >= 0 ? corun_topo_domain(c->topo, CORUN_LEVEL_NUMA, (unsigned)ev->from) : NULL;
        const struct corun_topo_domain *b =
            ev->to >= 0 ? corun_topo_domain(c->topo, CORUN_LEVEL_NUMA, (unsigned)ev->to) : NULL;

        snprintf(from, sizeof(from), a ? "%u" : "unknown", a ? a->os_index : 0);
        snprintf(to, sizeof(to), b ? "%u" : "unknown", b ? b->os_index : 0);
        printf(" node=%s->%s", from, to);
    } else {
        if (ev->from < 0)
            snprintf(from, sizeof(from), "unpinned");
        else
            task_cpus(c, ev->from, from, sizeof(from));
        if (ev->to < 0)
            snprintf(to, sizeof(to), "unpinned");
        else
            task_cpus(c, ev->to, to, sizeof(to));
        printf(" cpu=%s->%s", from, to);
        if (isfinite(ev->speed_now) && isfinite(ev->speed_planned))
            printf(" predicted=%.3f->%.3f", ev->speed_now, ev->speed_planned);
    }
    if (ev->err)
        printf(" error=%s", corun_strerror(ev->err));
    putchar('\n');
}

static void print_json(struct sim_cli *c)
{
    const struct corun_topo_info *in = corun_topo_info(c->topo);
    struct json j;
    char buf[32];

    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "machine");
    json_obj_begin(&j);
    json_kstr(&j, "source", in->source_name);
    json_kstr(&j, "params", c->m.name);
    json_kstr(&j, "origin", c->m.origin);
    json_kuint(&j, "cpus", in->usable_pus);
    json_kuint(&j, "cores", in->ndomains[CORUN_LEVEL_CORE]);
    json_kuint(&j, "smt_width", in->smt_width);
    json_kuint(&j, "l3_domains", in->ndomains[CORUN_LEVEL_L3]);
    json_kuint(&j, "numa_nodes", in->ndomains[CORUN_LEVEL_NUMA]);
    json_kdouble(&j, "base_ghz", c->m.base_ghz);
    json_kdouble(&j, "turbo_1core_ghz", c->m.turbo1_ghz);
    json_kdouble(&j, "turbo_allcore_ghz", c->m.turbo_all_ghz);
    json_kdouble(&j, "bmax_gbps", c->m.bmax_gbps);
    json_kdouble(&j, "l0_ns", c->m.l0_ns);
    json_obj_end(&j);
    json_kuint(&j, "seed", c->opts.seed);
    json_kstr(&j, "workload", c->workload_arg);
    json_kuint(&j, "tasks", c->w->ntasks);
    json_kdouble(&j, "duration_s", c->opts.duration_s);
    json_key(&j, "policies");
    json_arr_begin(&j);
    for (unsigned i = 0; i < c->nruns; i++) {
        const struct run *r = &c->runs[i];

        if (!r->shown)
            continue;
        json_obj_begin(&j);
        json_kstr(&j, "name", r->name);
        json_kdouble(&j, "stp", r->res.stp);
        json_kdouble(&j, "antt", r->res.antt);
        json_kdouble(&j, "max_slowdown", r->res.max_slowdown);
        json_kdouble(&j, "makespan_s", r->res.makespan_s);
        json_kuint(&j, "migrations", r->res.migrations);
        json_kuint(&j, "mem_moves", r->res.mem_moves);
        json_kdouble(&j, "mem_stall_s", r->res.mem_stall_s);
        json_kdouble(&j, "capture", capture(c, r));
        if (r->ref == CORUN_SIM_REF_WORST || r->ref == CORUN_SIM_REF_ORACLE ||
            r->ref == CORUN_SIM_REF_FAIREST) {
            json_key(&j, "search");
            json_obj_begin_inline(&j);
            json_kstr(&j, "method", r->search.method);
            json_kbool(&j, "bound", r->search.bound);
            json_kuint(&j, "evaluations", r->search.evaluations);
            json_obj_end(&j);
        } else {
            json_knull(&j, "search");
        }
        if (r->ref < 0) {
            /* A policy run through the engine: its outcome check. */
            json_key(&j, "outcome_check");
            json_obj_begin_inline(&j);
            json_kuint(&j, "judged", r->res.trials);
            json_kuint(&j, "reverted", r->res.reverted);
            json_kuint(&j, "doubted", r->res.doubted);
            json_kuint(&j, "second_tried", r->res.second_tried);
            json_kuint(&j, "second_kept", r->res.second_kept);
            json_obj_end(&j);
        } else {
            json_knull(&j, "outcome_check");
        }
        json_key(&j, "tasks");
        json_arr_begin(&j);
        for (unsigned t = 0; t < r->res.ntasks; t++) {
            const struct corun_sim_task *task = &c->w->tasks[t];

            json_obj_begin_inline(&j);
            json_kstr(&j, "name", task->name);
            json_kstr(&j, "class", corun_sim_class_name(task->cls));
            json_kdouble(&j, "speedup", r->res.tasks[t].speedup);
            task_cpus(c, r->res.tasks[t].cpu, buf, sizeof(buf));
            json_kstr(&j, "cpus", buf);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_end(&j);
}

static void fmt(char *buf, size_t len, double v, const char *f)
{
    if (isfinite(v))
        snprintf(buf, len, f, v);
    else
        snprintf(buf, len, "-");
}

static void print_table(struct sim_cli *c)
{
    const struct corun_topo_info *in = corun_topo_info(c->topo);

    printf("machine: %s, %u CPUs, %u cores, SMT width %u, %u L3, %u NUMA\n", in->source_name,
           in->usable_pus, in->ndomains[CORUN_LEVEL_CORE], in->smt_width,
           in->ndomains[CORUN_LEVEL_L3], in->ndomains[CORUN_LEVEL_NUMA]);
    printf("resources: %s\n", c->m.origin);
    printf("workload: %s, %u tasks; seed %llu; %.4g s simulated\n\n", c->workload_arg, c->w->ntasks,
           (unsigned long long)c->opts.seed, c->opts.duration_s);
    printf("%-12s %8s %7s %9s %10s %6s %8s  %s\n", "policy", "STP", "ANTT", "max-slow",
           "makespan-s", "migr", "capture", "search");
    for (unsigned i = 0; i < c->nruns; i++) {
        const struct run *r = &c->runs[i];
        char stp[16], antt[16], ms[16], mk[16], cap[16], search[160] = "";

        if (!r->shown)
            continue;
        fmt(stp, sizeof(stp), r->res.stp, "%.3f");
        fmt(antt, sizeof(antt), r->res.antt, "%.3f");
        fmt(ms, sizeof(ms), r->res.max_slowdown, "%.3f");
        fmt(mk, sizeof(mk), r->res.makespan_s, "%.3f");
        fmt(cap, sizeof(cap), capture(c, r) * 100, "%.0f%%");
        if (r->ref == CORUN_SIM_REF_WORST || r->ref == CORUN_SIM_REF_ORACLE ||
            r->ref == CORUN_SIM_REF_FAIREST)
            snprintf(search, sizeof(search), "%s%s, %u evaluations", r->search.method,
                     r->search.bound ? " (bound)" : "", r->search.evaluations);
        else if (r->ref == CORUN_SIM_REF_BASELINE || r->ref == CORUN_SIM_REF_RANDOM)
            snprintf(search, sizeof(search), "mean of %u seeds", c->opts.seeds);
        else if (r->ref < 0 && r->res.trials)
            snprintf(search, sizeof(search),
                     "checked %u changes, took back %u, doubted %u plans, kept %u of %u second "
                     "opinions",
                     r->res.trials, r->res.reverted, r->res.doubted, r->res.second_kept,
                     r->res.second_tried);
        if (r->res.mem_moves) {
            size_t l = strlen(search);

            snprintf(search + l, sizeof(search) - l, "%s%u memory move%s", l ? "; " : "",
                     r->res.mem_moves, r->res.mem_moves == 1 ? "" : "s");
        }
        printf("%-12s %8s %7s %9s %10s %6u %8s  %s\n", r->name, stp, antt, ms, mk,
               r->res.migrations, cap, search);
    }
}

static int cmd_sim(int argc, char **argv)
{
    static const struct option longopts[] = {{"machine", required_argument, NULL, 'm'},
                                             {"workload", required_argument, NULL, 'w'},
                                             {"policy", required_argument, NULL, 'p'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"duration-s", required_argument, NULL, 'd'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"events", no_argument, NULL, 'e'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct sim_cli c = {.opts = {.duration_s = 10.0, .seeds = 5, .seed = 1}};
    const char *policies = "all";
    unsigned long ul;
    int opt, rc;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "m:w:p:s:d:jeh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'm':
            c.machine_arg = optarg;
            break;
        case 'w':
            c.workload_arg = optarg;
            break;
        case 'p':
            policies = optarg;
            break;
        case 's':
            if (!cli_parse_uint(optarg, &ul))
                return cli_usage_error(CMD, "--seed needs a non-negative integer");
            c.opts.seed = ul;
            break;
        case 'd':
            if (!cli_parse_double(optarg, &c.opts.duration_s) || !(c.opts.duration_s > 0) ||
                c.opts.duration_s > 1e6)
                return cli_usage_error(CMD, "--duration-s needs seconds in (0, 1e6]");
            break;
        case 'j':
            c.json = true;
            break;
        case 'e':
            c.events = true;
            break;
        case 'h':
            cli_usage(stdout, CMD);
            return CLI_EXIT_OK;
        default:
            return cli_usage_error(CMD, "bad option");
        }
    }
    if (optind < argc)
        return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (!c.machine_arg || !c.workload_arg)
        return cli_usage_error(CMD, "--machine and --workload are required");
    if (c.events && c.json)
        return cli_usage_error(CMD, "--events prints lines of text; not with --json");
    if (c.events) {
        c.opts.on_event = print_event;
        c.opts.event_ctx = &c;
    }
    rc = parse_policies(&c, policies);
    if (rc)
        return rc;
    rc = load_machine(&c);
    if (rc)
        goto out_free;
    rc = load_workload(&c);
    if (rc)
        goto out_free;
    rc = run_all(&c);
    if (rc)
        goto out_free;
    if (c.json)
        print_json(&c);
    else
        print_table(&c);
out_free:
    for (unsigned i = 0; i < c.nruns; i++)
        corun_sim_result_release(&c.runs[i].res);
    corun_sim_workload_free(c.w);
    corun_topo_free(c.topo);
    return rc;
}

CLI_COMMAND(sim, cmd_sim, "simulate a workload on a machine under each policy",
            "corun sim --machine FILE.xml|PRESET|synthetic:DESC --workload FILE|random:N:SEED\n"
            "[--policy NAME[,NAME...]|all] [--seed S] [--duration-s T] [--json | --events]\n"
            "presets: skx28 icx40 spr56 milan64 genoa96; references: baseline random worst "
            "oracle fairest")
