/*
 * cli-daemon.c — `corun daemon`: looks after processes that are already
 * running, in the manner of the sched_ext user-space programs: getopt →
 * signals routed to a descriptor (signalfd) → a periodic loop that also
 * answers the control socket → teardown in reverse order. SIGTERM and SIGINT
 * give every managed process back its original affinity before exiting.
 *
 * The loop itself (select, sample, profile, place, apply) is the library's
 * corun_daemon_tick(); this file parses arguments, reads the configuration
 * file, waits, and prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "corun/ctl.h"
#include "corun/daemon.h"
#include "corun/topo.h"
#include "daemon/daemon-internal.h"

#define MAX_OVERRIDES 128

struct override {
    const char *opt, *section, *key, *value;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Loads @path into @cfg; prints "FILE:LINE: reason" and returns 2 on error. */
static int load_config(struct corun_daemon_config *cfg, const char *path)
{
    struct corun_config_error e;
    int err = corun_daemon_config_load(cfg, path, &e);

    if (!err)
        return CLI_EXIT_OK;
    if (e.line)
        fprintf(stderr, "%s:%u: %s\n", path, e.line, e.reason);
    else
        fprintf(stderr, "%s: %s\n", path, e.reason[0] ? e.reason : corun_strerror(err));
    return err == -ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
}

/* How the configuration is built: defaults, the file, the command line. Kept
 * so that SIGHUP builds it again the same way. */
struct config_src {
    const char *path; /* the file; NULL: none */
    const struct override *ov;
    unsigned nov;
    bool selectors; /* the command line's selectors replace the file's */
    const char *root;
};

/* Builds @cfg from @src: 0, or the exit status of what is wrong (printed). */
static int build_config(struct corun_daemon_config *cfg, const struct config_src *src)
{
    int rc;

    memset(cfg, 0, sizeof(*cfg)); /* releasable whatever fails */
    if (corun_daemon_config_init(cfg))
        return CLI_EXIT_FAIL;
    rc = src->path ? load_config(cfg, src->path) : CLI_EXIT_OK;
    if (rc)
        return rc;
    /* Selectors on the command line replace the file's rather than adding
     * to them: "--comm x" means "manage x", whatever the file selects. */
    if (src->selectors)
        corun_daemon_config_clear_selectors(cfg);
    for (unsigned i = 0; i < src->nov; i++) {
        char why[200];

        if (corun_daemon_config_set(cfg, src->ov[i].section, src->ov[i].key, src->ov[i].value,
                                    why, sizeof(why)))
            return cli_usage_error("daemon", "%s: %s", src->ov[i].opt, why);
    }
    if (src->root) {
        free(cfg->root);
        cfg->root = strdup(src->root);
        if (!cfg->root)
            return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/*
 * SIGHUP: the configuration is built again from the same file and command
 * line and applied to the running daemon (corun_daemon_reload()); a file
 * with a mistake leaves the running configuration as it was.
 */
static void reload(struct corun_daemon *d, const struct config_src *src)
{
    struct corun_daemon_config cfg;
    char why[256];
    int err;

    if (build_config(&cfg, src)) {
        cli_error("daemon", "SIGHUP: keeping the running configuration");
        corun_daemon_config_release(&cfg);
        return;
    }
    err = corun_daemon_reload(d, &cfg, why, sizeof(why));
    if (err)
        cli_error("daemon", "SIGHUP: %s; keeping the running configuration",
                  why[0] ? why : corun_strerror(err));
    else
        fprintf(stderr,
                "corun daemon: SIGHUP: configuration %s%s reloaded: policy %s, interval %g s%s%s\n",
                src->path ? "from " : "(no file)", src->path ? src->path : "", cfg.policy,
                cfg.interval_s, why[0] ? "; needs a restart to change: " : "", why);
    corun_daemon_config_release(&cfg);
}

static int check_config(const char *path)
{
    struct corun_daemon_config cfg;
    int rc;

    if (corun_daemon_config_init(&cfg))
        return CLI_EXIT_FAIL;
    rc = load_config(&cfg, path);
    if (rc == CLI_EXIT_OK)
        printf("%s: ok\n", path);
    corun_daemon_config_release(&cfg);
    return rc;
}

/* Makes the folder that will hold the socket, if missing (one level). */
static void make_parent(const char *path)
{
    char dir[4096];
    char *slash;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        cli_error("daemon", "cannot create %s: %s", dir, strerror(errno));
}

/*
 * Leaves the terminal: forks, and the parent waits until the child says it is
 * ready (a byte on @ready) or dies (its exit status is returned). Returns -1
 * in the child, which must write to *@ready_fd once set up.
 */
static int background(int *ready_fd)
{
    int p[2], status;
    pid_t pid;
    char c;

    if (pipe2(p, O_CLOEXEC) < 0)
        return CLI_EXIT_FAIL;
    pid = fork();
    if (pid < 0) {
        cli_error("daemon", "fork: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (pid == 0) {
        close(p[0]);
        setsid();
        *ready_fd = p[1];
        return -1;
    }
    close(p[1]);
    if (read(p[0], &c, 1) == 1) {
        printf("%d\n", (int)pid);
        return CLI_EXIT_OK;
    }
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
        return WEXITSTATUS(status);
    return CLI_EXIT_FAIL;
}

/* The loop: ticks every interval, answers the socket in between, until
 * SIGTERM or SIGINT. */
static void run_loop(struct corun_daemon *d, struct corun_ctl_server *srv, int sigfd,
                     const char *metrics, const struct config_src *src)
{
    uint64_t next = mono_ns();
    bool metrics_warned = false;

    for (;;) {
        struct pollfd fds[2] = {{.fd = sigfd, .events = POLLIN},
                                {.fd = corun_ctl_fd(srv), .events = POLLIN}};
        uint64_t now = mono_ns();
        int timeout_ms, err;

        if (now >= next) {
            err = corun_daemon_tick(d, now);
            if (err)
                cli_error("daemon", "tick: %s", corun_strerror(err));
            if (metrics) {
                err = corun_daemon_write_metrics(d, metrics);
                if (err && !metrics_warned)
                    cli_error("daemon", "metrics %s: %s", metrics, corun_strerror(err));
                metrics_warned = err != 0;
            }
            next += corun_daemon_interval_ns(d);
            now = mono_ns();
            if (next <= now) /* a tick longer than the interval: skip, don't pile up */
                next = now + corun_daemon_interval_ns(d);
        }
        timeout_ms = (int)((next - now + 999999) / 1000000);
        if (poll(fds, 2, timeout_ms) < 0) {
            if (errno == EINTR)
                continue;
            cli_error("daemon", "poll: %s", strerror(errno));
            return;
        }
        if (fds[0].revents & POLLIN) {
            struct signalfd_siginfo si;

            if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGHUP) {
                    reload(d, src);
                    /* A shorter interval takes effect now. */
                    if (next > mono_ns() + corun_daemon_interval_ns(d))
                        next = mono_ns() + corun_daemon_interval_ns(d);
                } else {
                    cli_error("daemon", "%s: restoring and exiting", strsignal((int)si.ssi_signo));
                    return;
                }
            }
        }
        if (fds[1].revents & POLLIN) {
            corun_ctl_serve(srv, corun_daemon_ctl, d);
            /* A "set interval" takes effect from the last tick. */
            if (next > mono_ns() + corun_daemon_interval_ns(d))
                next = mono_ns() + corun_daemon_interval_ns(d);
        }
    }
}

/* The selector keeps one descriptor per managed process: allow as many as
 * the hard limit does (the systemd unit raises that). */
static void raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Sets everything up, runs, and tears down in reverse order. */
static int serve(struct corun_daemon_config *cfg, const struct config_src *src, bool foreground)
{
    struct corun_daemon_parts parts;
    struct corun_topo *topo = NULL;
    struct corun_ctl_server *srv = NULL;
    struct corun_ctl_access acc;
    struct corun_daemon *d = NULL;
    char why[256];
    const char *mode;
    int ready = -1, sigfd, err, rc = CLI_EXIT_FAIL;
    sigset_t mask;

    err = corun__daemon_wire(cfg, &parts, &topo, why, sizeof(why));
    if (err)
        return cli_usage_error("daemon", "%s", why);
    if (!foreground) {
        rc = background(&ready);
        if (rc >= 0) {
            corun_topo_free(topo);
            return rc;
        }
        rc = CLI_EXIT_FAIL;
    }
    raise_nofile();
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (sigfd < 0) {
        cli_error("daemon", "signalfd: %s", strerror(errno));
        goto out_topo;
    }
    err = corun_daemon_open(cfg, &parts, &d);
    if (err) {
        cli_error("daemon", "%s", corun_strerror(err));
        goto out_sigfd;
    }
    make_parent(cfg->socket_path);
    corun_daemon_ctl_access(d, &acc);
    err = corun_ctl_listen(cfg->socket_path, &acc, &srv);
    if (err) {
        cli_error("daemon", "%s: %s", cfg->socket_path,
                  err == -EADDRINUSE ? "another corun daemon answers there" : corun_strerror(err));
        goto out_daemon;
    }
    if (corun_daemon_observe_only(d, &mode))
        fprintf(stderr, "corun daemon: pid %d, socket %s: observe-only: %s\n", (int)getpid(),
                cfg->socket_path, mode);
    else
        fprintf(stderr, "corun daemon: pid %d, socket %s: placing with policy %s\n", (int)getpid(),
                cfg->socket_path, parts.policy ? parts.policy->name : cfg->policy);
    if (ready >= 0) {
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            dup2(devnull, STDOUT_FILENO);
            close(devnull);
        }
        if (write(ready, "r", 1) != 1)
            goto out_ctl;
        close(ready);
        ready = -1;
    }

    run_loop(d, srv, sigfd, cfg->metrics_path, src);

    err = corun_daemon_restore_all(d);
    if (err)
        cli_error("daemon", "restoring: %s", corun_strerror(err));
    /* What the file says is over (managed processes, placed CPUs): a
     * textfile collector would go on exporting it as current. Gone, its
     * series go stale, as a stopped exporter's do. */
    if (cfg->metrics_path && unlink(cfg->metrics_path) < 0 && errno != ENOENT)
        cli_error("daemon", "metrics %s: %s", cfg->metrics_path, strerror(errno));
    rc = err ? CLI_EXIT_FAIL : CLI_EXIT_OK;
out_ctl:
    corun_ctl_close(srv);
out_daemon:
    corun_daemon_close(d);
out_sigfd:
    close(sigfd);
out_topo:
    corun_topo_free(topo);
    return rc;
}

static int cmd_daemon(int argc, char **argv)
{
    enum {
        OPT_CONFIG = 1000,
        OPT_CHECK,
        OPT_COMM,
        OPT_USER,
        OPT_CGROUP,
        OPT_MINCPU,
        OPT_INTERVAL,
        OPT_POLICY,
        OPT_ACTUATOR,
        OPT_SENSOR,
        OPT_SOCKET,
        OPT_METRICS,
        OPT_JOURNAL,
        OPT_FG,
        OPT_PINNED,
        OPT_ADMIN,
        OPT_MAXMIG,
        OPT_NOMEM,
        OPT_ROOT,
    };
    static const struct option opts[] = {
        {"config", required_argument, NULL, OPT_CONFIG},
        {"check-config", required_argument, NULL, OPT_CHECK},
        {"comm", required_argument, NULL, OPT_COMM},
        {"user", required_argument, NULL, OPT_USER},
        {"cgroup", required_argument, NULL, OPT_CGROUP},
        {"min-cpu", required_argument, NULL, OPT_MINCPU},
        {"include-pinned", no_argument, NULL, OPT_PINNED},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"policy", required_argument, NULL, OPT_POLICY},
        {"actuator", required_argument, NULL, OPT_ACTUATOR},
        {"sensor", required_argument, NULL, OPT_SENSOR},
        {"socket", required_argument, NULL, OPT_SOCKET},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"journal-dir", required_argument, NULL, OPT_JOURNAL},
        {"admin-group", required_argument, NULL, OPT_ADMIN},
        {"max-migrations", required_argument, NULL, OPT_MAXMIG},
        {"no-mem-follow", no_argument, NULL, OPT_NOMEM},
        {"root", required_argument, NULL, OPT_ROOT},
        {"foreground", no_argument, NULL, OPT_FG},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    struct override ov[MAX_OVERRIDES];
    struct corun_daemon_config cfg;
    struct config_src src;
    const char *config = NULL, *root = NULL;
    bool foreground = false, selectors = false;
    unsigned nov = 0;
    int c, rc;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        struct override o = {.value = optarg, .section = "daemon"};

        switch (c) {
        case 'h':
            cli_usage(stdout, "daemon");
            return CLI_EXIT_OK;
        case OPT_CONFIG:
            config = optarg;
            continue;
        case OPT_CHECK:
            return check_config(optarg);
        case OPT_FG:
            foreground = true;
            continue;
        case OPT_ROOT:
            root = optarg;
            continue;
        case OPT_COMM:
            o = (struct override){"--comm", "select", "comm", optarg};
            break;
        case OPT_USER:
            o = (struct override){"--user", "select", "user", optarg};
            break;
        case OPT_CGROUP:
            o = (struct override){"--cgroup", "select", "cgroup", optarg};
            break;
        case OPT_MINCPU:
            o = (struct override){"--min-cpu", "select", "min_cpu", optarg};
            break;
        case OPT_PINNED:
            o = (struct override){"--include-pinned", "select", "include_pinned", "yes"};
            break;
        case OPT_INTERVAL:
            o.opt = "--interval";
            o.key = "interval";
            break;
        case OPT_POLICY:
            o.opt = "--policy";
            o.key = "policy";
            break;
        case OPT_ACTUATOR:
            o.opt = "--actuator";
            o.key = "actuator";
            break;
        case OPT_SENSOR:
            o.opt = "--sensor";
            o.key = "sensor";
            break;
        case OPT_SOCKET:
            o.opt = "--socket";
            o.key = "socket";
            break;
        case OPT_METRICS:
            o.opt = "--metrics";
            o.key = "metrics";
            break;
        case OPT_JOURNAL:
            o.opt = "--journal-dir";
            o.key = "journal_dir";
            break;
        case OPT_ADMIN:
            o.opt = "--admin-group";
            o.key = "admin_group";
            break;
        case OPT_MAXMIG:
            o.opt = "--max-migrations";
            o.key = "max_migrations";
            break;
        case OPT_NOMEM:
            o = (struct override){"--no-mem-follow", "daemon", "mem_follow", "no"};
            break;
        default:
            cli_usage(stderr, "daemon");
            return CLI_EXIT_USAGE;
        }
        if (nov == MAX_OVERRIDES)
            return cli_usage_error("daemon", "too many options");
        if (!strcmp(o.section, "select") && strcmp(o.key, "include_pinned"))
            selectors = true;
        ov[nov++] = o;
    }
    if (optind < argc)
        return cli_usage_error("daemon", "unexpected argument '%s'", argv[optind]);
    if (!config && access(CORUN_DAEMON_CONFIG_PATH, F_OK) == 0)
        config = CORUN_DAEMON_CONFIG_PATH;
    src = (struct config_src){
        .path = config, .ov = ov, .nov = nov, .selectors = selectors, .root = root};
    rc = build_config(&cfg, &src);
    if (!rc)
        rc = serve(&cfg, &src, foreground);
    corun_daemon_config_release(&cfg);
    return rc;
}

CLI_COMMAND(daemon, cmd_daemon, "place running processes continuously; restore them on exit",
            "corun daemon [--config FILE] [--comm PATTERN] [--user NAME] [--cgroup PATH]\n"
            "[--min-cpu PERCENT] [--include-pinned] [--interval SECONDS] [--policy P]\n"
            "[--actuator affinity|cpuset] [--sensor auto|perf|proc] [--socket PATH]\n"
            "[--journal-dir DIR] [--metrics FILE] [--admin-group GROUP] [--max-migrations N]\n"
            "[--no-mem-follow] [--foreground]\n"
            "corun daemon --check-config FILE\n")
