/*
 * cli-events.c — `corun events`: every preset with the native event and the
 * perf encoding it resolves to, on this machine or on a named libpfm4 PMU,
 * or "unavailable" with the reason.
 *
 * On this machine a preset is available only when the kernel accepts its
 * encoding (each is opened once on corun itself); for a named PMU it is
 * available when libpfm4 encodes it for that model.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "common/internal.h"
#include "corun/sense.h"
#include "sense/sense-internal.h"

struct row {
    const struct corun_event_encoding *e;
    bool available;
    char reason[768];
};

/* On this machine: does the kernel count what libpfm4 encoded? */
static void check_live(struct corun_pmu_encoding *enc, struct row *rows)
{
    struct corun__perf_env env;
    char hwwhy[256] = "";
    int rootfd = corun__root_open(NULL);
    int hw;

    corun__perf_env_read(rootfd, &env);
    if (rootfd >= 0)
        close(rootfd);
    hw = corun__perf_diagnose(&env, hwwhy, sizeof(hwwhy));
    if (corun__perf_hybrid(&env)) {
        /* What the perf backend does on hybrids: generic events per core type. */
        for (int ev = 0; ev <= CORUN_EV_STALL_CYCLES_BACKEND; ev++) {
            struct corun_event_encoding *e = &enc->ev[ev];
            const char *name;

            corun__generic_event(ev, &e->type, &e->config, &name);
            e->source = CORUN_SRC_GENERIC;
            e->config1 = e->config2 = 0;
            e->note = "hybrid CPU: opened once per core-type PMU (type in config bits 32-63), "
                      "counts summed";
            snprintf(e->native, sizeof(e->native), "%s on each of %s", name, env.core_pmus);
            rows[ev].available = true;
            rows[ev].reason[0] = '\0';
        }
    }
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        struct row *r = &rows[ev];
        struct perf_event_attr attr;
        int err;

        if (!r->available || r->e->source == CORUN_SRC_PROC)
            continue;
        if (corun_event_is_hardware(ev) && hw) {
            r->available = false;
            snprintf(r->reason, sizeof(r->reason),
                     "%s; libpfm4 encodes it as %s (type %u, "
                     "config %#llx)",
                     hwwhy, r->e->native, r->e->type, (unsigned long long)r->e->config);
            continue;
        }
        corun__perf_attr(r->e, &env, &attr);
        if (corun_event_is_hardware(ev) && corun__perf_hybrid(&env))
            attr.config |= (uint64_t)env.core_pmu_type[0] << 32;
        err = corun__perf_try(&attr);
        if (err) {
            r->available = false;
            corun__perf_event_reason(err, ev, r->e, &env, r->reason, sizeof(r->reason));
        }
    }
}

static void print_json(const struct corun_pmu_encoding *enc, const struct row *rows, bool live)
{
    struct json j;

    json_init(&j, stdout);
    json_obj_begin(&j);
    json_kstr(&j, "pmu", enc->pmu);
    json_kstr(&j, "table", enc->table);
    json_kstr(&j, "vendor", enc->vendor[0] ? enc->vendor : NULL);
    json_kbool(&j, "this_machine", live);
    json_key(&j, "presets");
    json_arr_begin(&j);
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        const struct row *r = &rows[ev];
        bool perf_ev = r->available && r->e->source != CORUN_SRC_PROC;

        json_obj_begin_inline(&j);
        json_kstr(&j, "name", corun_event_name(ev));
        json_kstr(&j, "source", r->available ? corun_event_source_name(r->e->source) : "none");
        json_kstr(&j, "native", r->available ? r->e->native : NULL);
        if (perf_ev) {
            json_kuint(&j, "type", r->e->type);
            json_kuint(&j, "config", r->e->config);
        } else {
            json_knull(&j, "type");
            json_knull(&j, "config");
        }
        json_kstr(&j, "reason", r->available ? NULL : r->reason);
        json_kstr(&j, "note", r->e->note);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_end(&j);
}

static void print_human(const struct corun_pmu_encoding *enc, const struct row *rows, bool live,
                        bool notes)
{
    printf("PMU %s (corun table %s%s)\n\n", enc->pmu, enc->table,
           live ? ", this machine" : ", encoded by libpfm4");
    printf("%-21s %-8s %-5s %-12s %s\n", "preset", "source", "type", "config",
           "native event / why unavailable");
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        const struct row *r = &rows[ev];

        if (!r->available)
            printf("%-21s %-8s %-5s %-12s unavailable: %s\n", corun_event_name(ev), "none", "-",
                   "-", r->reason);
        else if (r->e->source == CORUN_SRC_PROC)
            printf("%-21s %-8s %-5s %-12s %s\n", corun_event_name(ev), "proc", "-", "-",
                   r->e->native);
        else
            printf("%-21s %-8s %-5u %#-12llx %s\n", corun_event_name(ev),
                   corun_event_source_name(r->e->source), r->e->type,
                   (unsigned long long)r->e->config, r->e->native);
        if (notes && r->e->note)
            printf("%-21s   counts: %s\n", "", r->e->note);
    }
}

static int cmd_events(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pmu", required_argument, NULL, 'P'},
        {"json", no_argument, NULL, 'j'},
        {"notes", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    struct corun_pmu_encoding *enc;
    struct row rows[CORUN_NEVENTS];
    const char *pmu = NULL;
    bool as_json = false, notes = false;
    int opt, err;

    while ((opt = getopt_long(argc, argv, "P:jnh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'P':
            pmu = optarg;
            break;
        case 'j':
            as_json = true;
            break;
        case 'n':
            notes = true;
            break;
        case 'h':
            cli_usage(stdout, "events");
            return CLI_EXIT_OK;
        default:
            cli_usage(stderr, "events");
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage_error("events", "unexpected argument '%s'", argv[optind]);
    /* libpfm4 encodes a PMU other than this CPU's only when told so through
     * its environment, read once when it initialises (the library never
     * touches the environment; the command does, before the first call). */
    if (pmu)
        setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    enc = malloc(sizeof(*enc));
    if (!enc) {
        cli_error("events", "%s", corun_strerror(-ENOMEM));
        return CLI_EXIT_FAIL;
    }
    err = corun_sense_encode(pmu, enc);
    if (err == -ENOENT) {
        const char *const *names = corun_sense_pmu_names();
        char list[512] = "";

        for (size_t i = 0; names[i]; i++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                     names[i]);
        free(enc);
        return cli_usage_error("events",
                               "unknown PMU '%s': not a libpfm4 core PMU (corun has tables "
                               "for %s; other libpfm4 core PMUs get generic events)",
                               pmu, list);
    }
    if (err) {
        cli_error("events", "cannot encode events: %s", corun_strerror(err));
        free(enc);
        return CLI_EXIT_FAIL;
    }
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        rows[ev].e = &enc->ev[ev];
        rows[ev].available = enc->ev[ev].source != CORUN_SRC_NONE;
        snprintf(rows[ev].reason, sizeof(rows[ev].reason), "%s", enc->ev[ev].reason);
    }
    if (!pmu)
        check_live(enc, rows);
    if (as_json)
        print_json(enc, rows, !pmu);
    else
        print_human(enc, rows, !pmu, notes);
    free(enc);
    return CLI_EXIT_OK;
}

CLI_COMMAND(events, cmd_events, "list the portable presets and the native events they map to",
            "corun events [--pmu NAME] [--notes] [--json]")
