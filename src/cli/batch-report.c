/*
 * batch-report.c — what `corun batch` prints: a table of jobs with their
 * status, times and placement, a summary line, and the JSON document
 * (docs/batch.md describes its members).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/batch.h"

int batch_job_code(const struct job_run *r)
{
    if (r->not_started)
        return 127;
    if (WIFEXITED(r->status))
        return WEXITSTATUS(r->status);
    if (WIFSIGNALED(r->status))
        return 128 + WTERMSIG(r->status);
    return 127;
}

static double cpu_total(const struct batch *b)
{
    double s = 0;

    for (unsigned i = 0; i < b->njobs; i++)
        s += b->runs[i].m.cpu_s;
    return s;
}

void batch_print(FILE *f, const struct batch *b)
{
    unsigned done = 0;

    fprintf(f, "\n corun batch: %u jobs, -j %u, policy %s, actuator %s, counters %s\n\n", b->njobs,
            b->jmax, b->policy_name, b->ops ? b->ops->name : "none",
            run_measure_backend(NULL, 0) ? run_measure_backend(NULL, 0) : "none");
    fprintf(f, "  %-16s %6s %9s %9s  %-9s %-6s %s\n", "job", "status", "wall_s", "cpu_s", "class",
            "cpus", "command");
    for (unsigned i = 0; i < b->njobs; i++) {
        const struct job_run *r = &b->runs[i];

        if (r->state != JOB_DONE) {
            fprintf(f, "  %-16.16s %6s %9s %9s  %-9s %-6s %.40s\n", r->spec->name, "-", "-", "-",
                    corun_class_name(r->cls), "-", r->spec->command);
            continue;
        }
        done++;
        fprintf(f, "  %-16.16s %6d %9.3f %9.3f  %-9s %-6s %.40s\n", r->spec->name,
                batch_job_code(r), r->m.wall_s, r->m.cpu_s, corun_class_name(r->cls), r->cpus,
                r->spec->command);
    }
    fprintf(f, "\n  makespan %.3f s, %u of %u jobs run, %u failed, CPU time %.3f s", b->makespan_s,
            done, b->njobs, b->failed, cpu_total(b));
    if (b->replacements)
        fprintf(f, ", %u re-placements", b->replacements);
    if (b->mem_moves)
        fprintf(f, ", %u memory move%s", b->mem_moves, b->mem_moves == 1 ? "" : "s");
    if (b->unpinned)
        fprintf(f, ", %u unpinned (their CPU was contended)", b->unpinned);
    if (b->placement_errors)
        fprintf(f, ", %u placement errors (jobs ran unplaced)", b->placement_errors);
    fprintf(f, "\n");
}

void batch_json(struct json *j, const struct batch *b)
{
    unsigned done = 0;

    json_key(j, "jobs");
    json_arr_begin(j);
    for (unsigned i = 0; i < b->njobs; i++) {
        const struct job_run *r = &b->runs[i];

        json_obj_begin_inline(j);
        json_kstr(j, "name", r->spec->name);
        json_kstr(j, "command", r->spec->command);
        json_kuint(j, "line", r->spec->line);
        json_kstr(j, "class", corun_class_name(r->cls));
        if (r->state == JOB_DONE) {
            done++;
            json_kint(j, "exit_status", batch_job_code(r));
            json_kint_or_null(j, "signal", WIFSIGNALED(r->status) ? WTERMSIG(r->status) : -1);
            json_kstr(j, "cpus", r->cpus);
            json_kdouble(j, "start_s", r->start_s - b->t0);
            json_kdouble(j, "wall_s", r->m.wall_s);
            json_kdouble(j, "cpu_s", r->m.cpu_s);
            json_kuint(j, "moves", r->moves);
            json_kbool(j, "unpinned", r->unpinned);
            json_key(j, "metrics");
            json_obj_begin_inline(j);
            for (unsigned k = 0; k < r->m.nmetrics; k++)
                json_kdouble(j, r->m.metrics[k].name, r->m.metrics[k].value);
            json_obj_end(j);
        } else {
            json_knull(j, "exit_status");
            json_kstr(j, "state", r->state == JOB_QUEUED ? "not run" : "running");
        }
        json_obj_end(j);
    }
    json_arr_end(j);
    json_key(j, "summary");
    json_obj_begin(j);
    json_kstr(j, "policy", b->policy_name);
    json_kstr(j, "actuator", b->ops ? b->ops->name : NULL);
    json_kstr(j, "sense", run_measure_backend(NULL, 0));
    json_kuint(j, "parallel", b->jmax);
    json_kuint(j, "jobs", b->njobs);
    json_kuint(j, "run", done);
    json_kuint(j, "failed", b->failed);
    json_kdouble(j, "makespan_s", b->makespan_s);
    json_kdouble(j, "cpu_s", cpu_total(b));
    json_kuint(j, "replacements", b->replacements);
    json_kuint(j, "mem_moves", b->mem_moves);
    json_kuint(j, "unpinned", b->unpinned);
    json_kuint(j, "placement_errors", b->placement_errors);
    json_kint_or_null(j, "interrupted_by", b->stop_sig ? b->stop_sig : -1);
    json_obj_end(j);
}
