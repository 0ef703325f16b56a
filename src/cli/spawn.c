/*
 * spawn.c — fork, hold, place, exec (see spawn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/spawn.h"
#include "cli/thp-launch.h"

/* What a command may inherit ignored: SIGHUP (nohup) and SIGPIPE. SIGINT,
 * SIGQUIT and SIGTERM are corun's to pass on (run and batch forward them to
 * what they started), so a command gets them with the default action even
 * from a shell's background job, which ignores SIGINT and SIGQUIT. */
static const int inherited[] = {SIGHUP, SIGPIPE};
static bool ignored_at_start[sizeof(inherited) / sizeof(inherited[0])];

void spawn_note_signals(void)
{
    for (size_t i = 0; i < sizeof(inherited) / sizeof(inherited[0]); i++) {
        struct sigaction sa;

        ignored_at_start[i] = !sigaction(inherited[i], NULL, &sa) && sa.sa_handler == SIG_IGN;
    }
}

void spawn_child_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    for (size_t i = 0; i < sizeof(inherited) / sizeof(inherited[0]); i++)
        signal(inherited[i], ignored_at_start[i] ? SIG_IGN : SIG_DFL);
}

/* In the child: report @msg to the parent and exit as a shell would. */
static void child_fail(int fd, const char *msg)
{
    ssize_t w = write(fd, msg, strlen(msg));

    (void)w;
    _exit(127);
}

static void child(const struct spawn_opts *o, int go, int status)
{
    char buf[256], c;
    sigset_t none;

    if (o->new_pgroup)
        setpgid(0, 0);
    /* Wait for the parent to place us; EOF without a byte: it gave up. */
    if (read(go, &c, 1) != 1)
        _exit(127);
    close(go);
    if (o->null_stdin) {
        int fd = open("/dev/null", O_RDONLY);

        if (fd > 0) {
            dup2(fd, 0);
            close(fd);
        }
    }
    spawn_child_signals();
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (o->thp) {
        char why[200] = "";

        if (cli_thp_child_setup(why, sizeof(why)) < 0) {
            snprintf(buf, sizeof(buf), "--thp: %s", why[0] ? why : "failed");
            child_fail(status, buf);
        }
    }
    if (o->shell_cmd)
        execl("/bin/sh", "sh", "-c", o->shell_cmd, (char *)NULL);
    else
        execvp(o->argv[0], o->argv);
    snprintf(buf, sizeof(buf), "%s: %s", o->shell_cmd ? "/bin/sh" : o->argv[0], strerror(errno));
    child_fail(status, buf);
}

int spawn_start(const struct spawn_opts *o, struct spawn *s)
{
    int go[2], st[2];
    pid_t pid;

    if (pipe2(go, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(st, O_CLOEXEC) < 0) {
        int err = -errno;

        close(go[0]);
        close(go[1]);
        return err;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        int err = -errno;

        close(go[0]);
        close(go[1]);
        close(st[0]);
        close(st[1]);
        return err;
    }
    if (pid == 0) {
        close(go[1]);
        close(st[0]);
        child(o, go[0], st[1]);
    }
    /* Both sides set the group, so it exists whichever runs first. */
    if (o->new_pgroup)
        setpgid(pid, pid);
    close(go[0]);
    close(st[1]);
    s->pid = pid;
    s->go_fd = go[1];
    s->status_fd = st[0];
    return 0;
}

int spawn_release(struct spawn *s, char *why, size_t len)
{
    size_t got = 0;
    ssize_t n;

    if (write(s->go_fd, "g", 1) != 1)
        snprintf(why, len, "cannot release the child: %s", strerror(errno));
    close(s->go_fd);
    s->go_fd = -1;
    while (got + 1 < len && (n = read(s->status_fd, why + got, len - 1 - got)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        got += (size_t)n;
    }
    close(s->status_fd);
    s->status_fd = -1;
    if (len)
        why[got] = '\0';
    return got ? -ENOEXEC : 0;
}
