/*
 * cli-status.c — `corun status`: asks the running daemon, over its control
 * socket, what it manages, where each process is and why, and its recent
 * migrations; or, for an administrator, changes a setting (--set, --pause,
 * --resume, --release). The daemon decides what the caller may see and do
 * from the socket's peer credentials; this command only asks and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/json-read.h"
#include "cli/json.h"
#include "corun/ctl.h"
#include "corun/daemon.h"

#define STATUS_TIMEOUT_MS 5000

/* Re-emits @v with the command's JSON writer: objects inside arrays on one
 * line each, so that a process or a migration is one greppable line. */
static void emit(struct json *j, const struct jv *v, bool in_array)
{
    switch (v->type) {
    case JV_NULL:
        json_null(j);
        break;
    case JV_BOOL:
        json_bool(j, v->b);
        break;
    case JV_NUM:
        if (v->num == (double)(long long)v->num && fabs(v->num) < 1e15)
            json_int(j, (long long)v->num);
        else /* every digit the daemon sent: a migration's time needs them */
            json_double_full(j, v->num);
        break;
    case JV_STR:
        json_str(j, v->str);
        break;
    case JV_ARR:
        json_arr_begin(j);
        for (size_t i = 0; i < v->n; i++)
            emit(j, &v->items[i], true);
        json_arr_end(j);
        break;
    case JV_OBJ:
        if (in_array)
            json_obj_begin_inline(j);
        else
            json_obj_begin(j);
        for (size_t i = 0; i < v->n; i++) {
            json_key(j, v->keys[i]);
            emit(j, &v->items[i], in_array);
        }
        json_obj_end(j);
        break;
    }
}

static void fmt_num(char *buf, size_t len, double v, const char *fmt)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
}

static void print_human(const struct jv *root)
{
    const struct jv *dm = jv_get(root, "daemon"), *procs = jv_get(root, "processes");
    const struct jv *migs = jv_get(root, "migrations");
    const char *mode = jv_str(jv_get(dm, "mode")), *why = jv_str(jv_get(dm, "observe_only_why"));
    double hidden = jv_num(jv_get(root, "hidden"));
    const struct jv *miss;

    printf("corun daemon %s (pid %.0f): %s", jv_str(jv_get(dm, "version")) ?: "?",
           jv_num(jv_get(dm, "pid")), mode ? mode : "?");
    if (why)
        printf(" — %s", why);
    printf("\n  policy %s, actuator %s, sensor %s, every %g s, %.0f ticks, %.0f migrations",
           jv_str(jv_get(dm, "policy")) ?: "-", jv_str(jv_get(dm, "actuator")) ?: "none",
           jv_str(jv_get(dm, "sensor")) ?: "none (CPU use from /proc)",
           jv_num(jv_get(dm, "interval_s")), jv_num(jv_get(dm, "ticks")),
           jv_num(jv_get(dm, "migrations_total")));
    /* Only where the counters could judge a change (instructions counted). */
    if (jv_num(jv_get(dm, "changes_judged_total")) > 0)
        printf(", %.0f of %.0f changes taken back on the counters",
               jv_num(jv_get(dm, "changes_taken_back_total")),
               jv_num(jv_get(dm, "changes_judged_total")));
    printf("\n");
    miss = jv_get(dm, "counters_missing");
    /* Consecutive counters missing for the same reason share one line. */
    for (size_t i = 0; miss && miss->type == JV_OBJ && i < miss->n;) {
        const char *r = jv_str(&miss->items[i]) ?: "?";
        size_t j = i;

        printf("  missing: ");
        for (; j < miss->n && !strcmp(jv_str(&miss->items[j]) ?: "?", r); j++)
            printf("%s%s", j > i ? ", " : "", miss->keys[j]);
        printf(": %s\n", r);
        i = j;
    }
    printf("\nmanaged processes: %zu", procs ? procs->n : 0);
    if (hidden > 0)
        printf(" (and %.0f of other users, not shown)", hidden);
    printf("\n%8s %-16s %-9s %6s %5s %8s %6s  %s\n", "PID", "COMMAND", "CLASS", "CPU%", "IPC",
           "LLC-MPKI", "PLACED", "WHY");
    for (size_t i = 0; procs && i < procs->n; i++) {
        const struct jv *p = &procs->items[i];
        char cpu[16], ipc[16], mpki[16], placed[16];

        fmt_num(cpu, sizeof(cpu), jv_num(jv_get(p, "cpu_percent")), "%.1f");
        fmt_num(ipc, sizeof(ipc), jv_num(jv_get(p, "ipc")), "%.2f");
        fmt_num(mpki, sizeof(mpki), jv_num(jv_get(p, "llc_mpki")), "%.2f");
        fmt_num(placed, sizeof(placed), jv_num(jv_get(p, "placed_cpu")), "%.0f");
        printf("%8.0f %-16s %-9s %6s %5s %8s %6s  %s\n", jv_num(jv_get(p, "pid")),
               jv_str(jv_get(p, "comm")) ?: "?", jv_str(jv_get(p, "class")) ?: "?", cpu, ipc, mpki,
               placed[0] == '-' ? "kernel" : placed, jv_str(jv_get(p, "why")) ?: "");
    }
    if (migs && migs->n) {
        printf("\nrecent migrations (oldest first):\n");
        for (size_t i = 0; i < migs->n; i++) {
            const struct jv *m = &migs->items[i];
            time_t t = (time_t)jv_num(jv_get(m, "t"));
            char when[16] = "?", from[16], to[16];
            struct tm tm;

            if (localtime_r(&t, &tm))
                strftime(when, sizeof(when), "%H:%M:%S", &tm);
            fmt_num(from, sizeof(from), jv_num(jv_get(m, "from")), "%.0f");
            fmt_num(to, sizeof(to), jv_num(jv_get(m, "to")), "%.0f");
            printf("  %s %8.0f %-16s cpu %s -> %s  %s%s%s\n", when, jv_num(jv_get(m, "pid")),
                   jv_str(jv_get(m, "comm")) ?: "?", from, to, jv_str(jv_get(m, "why")) ?: "",
                   jv_str(jv_get(m, "error")) ? ": " : "", jv_str(jv_get(m, "error")) ?: "");
        }
    }
}

/* Builds the request line for the options given; static storage. */
static const char *build_request(const char *set, bool pause, bool resume, long release, char *buf,
                                 size_t len, int *usage)
{
    struct corun_ctl_buf b = {0};

    *usage = 0;
    if ((set != NULL) + pause + resume + (release > 0) > 1) {
        *usage = 1;
        return NULL;
    }
    if (set) {
        const char *eq = strchr(set, '=');
        char key[CORUN_CTL_KEY_LEN];

        if (!eq || eq == set || (size_t)(eq - set) >= sizeof(key)) {
            *usage = 2;
            return NULL;
        }
        memcpy(key, set, (size_t)(eq - set));
        key[eq - set] = '\0';
        corun_ctl_buf_printf(&b, "{\"cmd\": \"set\", \"key\": ");
        corun_ctl_buf_jstr(&b, key);
        corun_ctl_buf_printf(&b, ", \"value\": ");
        corun_ctl_buf_jstr(&b, eq + 1);
        corun_ctl_buf_printf(&b, "}");
    } else if (pause || resume) {
        corun_ctl_buf_printf(&b, "{\"cmd\": \"%s\"}", pause ? "pause" : "resume");
    } else if (release > 0) {
        corun_ctl_buf_printf(&b, "{\"cmd\": \"release\", \"pid\": %ld}", release);
    } else {
        corun_ctl_buf_printf(&b, "{\"cmd\": \"status\"}");
    }
    if (b.failed || b.len >= len) {
        corun_ctl_buf_release(&b);
        return NULL;
    }
    memcpy(buf, b.data, b.len + 1);
    corun_ctl_buf_release(&b);
    return buf;
}

static int cmd_status(int argc, char **argv)
{
    enum { OPT_JSON = 1000, OPT_SOCKET, OPT_SET, OPT_PAUSE, OPT_RESUME, OPT_RELEASE };
    static const struct option opts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"socket", required_argument, NULL, OPT_SOCKET},
        {"set", required_argument, NULL, OPT_SET},
        {"pause", no_argument, NULL, OPT_PAUSE},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"release", required_argument, NULL, OPT_RELEASE},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *sock = CORUN_DAEMON_SOCKET_PATH, *set = NULL, *req;
    bool as_json = false, pause = false, resume = false;
    unsigned long release = 0;
    char *resp = NULL, reqbuf[1024];
    struct jv *root = NULL;
    int c, err, usage, rc = CLI_EXIT_FAIL;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            cli_usage(stdout, "status");
            return CLI_EXIT_OK;
        case OPT_JSON:
            as_json = true;
            break;
        case OPT_SOCKET:
            sock = optarg;
            break;
        case OPT_SET:
            set = optarg;
            break;
        case OPT_PAUSE:
            pause = true;
            break;
        case OPT_RESUME:
            resume = true;
            break;
        case OPT_RELEASE:
            if (!cli_parse_uint(optarg, &release) || !release || release > 0x7fffffff)
                return cli_usage_error("status", "--release: '%s' is not a pid", optarg);
            break;
        default:
            cli_usage(stderr, "status");
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage_error("status", "unexpected argument '%s'", argv[optind]);
    req = build_request(set, pause, resume, (long)release, reqbuf, sizeof(reqbuf), &usage);
    if (usage == 1)
        return cli_usage_error("status", "--set, --pause, --resume and --release exclude "
                                         "each other");
    if (usage == 2)
        return cli_usage_error("status", "--set wants KEY=VALUE");
    if (!req)
        return cli_usage_error("status", "request too long");
    err = corun_ctl_call(sock, req, STATUS_TIMEOUT_MS, &resp);
    if (err) {
        cli_error("status", "no corun daemon answers on %s: %s", sock, corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    if (jv_parse(resp, &root)) {
        cli_error("status", "the daemon's answer is not JSON: %.80s", resp);
        goto out_free;
    }
    if (!jv_get(root, "ok") || !jv_get(root, "ok")->b) {
        const struct jv *input = jv_get(root, "input");

        cli_error("status", "%s", jv_str(jv_get(root, "error")) ?: "the daemon refused");
        /* What the request asked for is wrong, not the daemon. */
        if (input && input->b)
            rc = CLI_EXIT_USAGE;
        goto out_free;
    }
    if (as_json) {
        struct json j;

        json_init(&j, stdout);
        emit(&j, root, false);
        json_end(&j);
    } else if (jv_get(root, "daemon")) {
        print_human(root);
    } else {
        printf("ok\n");
    }
    rc = CLI_EXIT_OK;
out_free:
    jv_free(root);
    free(resp);
    return rc;
}

CLI_COMMAND(status, cmd_status, "what the running daemon manages, where and why",
            "corun status [--json] [--socket PATH]\n"
            "corun status [--socket PATH] --set KEY=VALUE | --pause | --resume | --release PID\n")
