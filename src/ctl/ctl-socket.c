/*
 * ctl-socket.c — the control protocol's transport: a Unix stream socket, one
 * request line and one response line per connection.
 *
 * The server lives inside the daemon's single-threaded loop, so it must never
 * block it for long: the listening socket is non-blocking, at most 16 clients
 * are answered per wake-up, and each accepted connection gets 200 ms receive
 * and send time-outs. A client that connects and says nothing costs the loop
 * those 200 ms and gets no answer. Credentials come from the kernel
 * (SO_PEERCRED and SO_PEERGROUPS), never from the request.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/internal.h"
#include "corun/ctl.h"

#define CTL_IO_TIMEOUT_MS 200
#define CTL_MAX_PER_WAKE  16

struct corun_ctl_server {
    int fd;
    char *path;
    struct corun_ctl_access acc;
};

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (!path || !*path)
        return -EINVAL;
    if (strlen(path) >= sizeof(sa->sun_path))
        return -ENAMETOOLONG;
    strcpy(sa->sun_path, path);
    return 0;
}

/* True when a live server answers a connection at @sa. */
static bool someone_listens(const struct sockaddr_un *sa)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live;

    if (fd < 0)
        return false;
    live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
    close(fd);
    return live;
}

int corun_ctl_listen(const char *path, const struct corun_ctl_access *acc,
                     struct corun_ctl_server **out)
{
    struct corun_ctl_server *s;
    struct sockaddr_un sa;
    struct stat st;
    int err;

    if (!out)
        return -EINVAL;
    *out = NULL;
    err = fill_addr(&sa, path);
    if (err)
        return err;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return -EEXIST;
        if (someone_listens(&sa))
            return -EADDRINUSE;
        /* A socket file nobody answers: left by a daemon that died. */
        unlink(path);
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->path = strdup(path);
    if (!s->path) {
        free(s);
        return -ENOMEM;
    }
    if (acc)
        s->acc = *acc;
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        err = -errno;
        goto out_free;
    }
    if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        err = -errno;
        goto out_close;
    }
    /* Everyone may connect; what each may see and do is decided per request
     * from its credentials. */
    if (chmod(path, 0666) < 0 || listen(s->fd, 64) < 0) {
        err = -errno;
        unlink(path);
        goto out_close;
    }
    *out = s;
    return 0;

out_close:
    close(s->fd);
out_free:
    free(s->path);
    free(s);
    return err;
}

int corun_ctl_fd(const struct corun_ctl_server *srv)
{
    return srv ? srv->fd : -1;
}

void corun_ctl_set_access(struct corun_ctl_server *srv, const struct corun_ctl_access *acc)
{
    if (srv && acc)
        srv->acc = *acc;
}

void corun_ctl_close(struct corun_ctl_server *srv)
{
    if (!srv)
        return;
    close(srv->fd);
    unlink(srv->path);
    free(srv->path);
    free(srv);
}

static void set_timeouts(int fd, int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Reads one line (without its newline) into @buf of @len bytes. 0, -EMSGSIZE
 * for a line too long, -EPROTO when the peer closed first, -errno. */
static int read_line(int fd, char *buf, size_t len)
{
    size_t got = 0;

    for (;;) {
        ssize_t n = recv(fd, buf + got, len - 1 - got, 0);
        char *nl;

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
        }
        if (n == 0)
            return -EPROTO;
        buf[got + (size_t)n] = '\0';
        nl = memchr(buf + got, '\n', (size_t)n);
        got += (size_t)n;
        if (nl) {
            *nl = '\0';
            return 0;
        }
        if (got == len - 1)
            return -EMSGSIZE;
    }
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Fills @peer from the kernel's view of the connection on @fd. */
static int peer_of(const struct corun_ctl_server *srv, int fd, struct corun_ctl_peer *peer)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    gid_t groups[256];
    socklen_t glen = sizeof(groups);
    size_t ngroups = 0;

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return -errno;
        /* SO_PEERGROUPS (Linux 4.13) gives the supplementary groups; without it
         * only the primary group can make an administrator. */
#ifdef SO_PEERGROUPS
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
        ngroups = glen / sizeof(gid_t);
#endif
    peer->pid = cred.pid;
    peer->uid = cred.uid;
    peer->gid = cred.gid;
    peer->admin = corun_ctl_is_admin(&srv->acc, cred.uid, cred.gid, groups, ngroups);
    return 0;
}

/* Answers the client on @fd; false when there was nothing to answer. */
static bool answer(struct corun_ctl_server *srv, int fd, corun_ctl_handler handler, void *user)
{
    struct corun_ctl_buf resp = {0};
    struct corun_ctl_request req;
    struct corun_ctl_peer peer;
    char line[CORUN_CTL_MAX_LINE], why[160];
    int err;

    set_timeouts(fd, CTL_IO_TIMEOUT_MS);
    if (peer_of(srv, fd, &peer))
        return false;
    err = read_line(fd, line, sizeof(line));
    if (err == -EMSGSIZE) {
        corun_ctl_buf_printf(&resp, "{\"ok\": false, \"error\": \"request longer than %d bytes\"}",
                             CORUN_CTL_MAX_LINE - 1);
    } else if (err) {
        return false; /* nothing to answer: the client went away or said nothing */
    } else if (corun_ctl_parse(line, &req, why, sizeof(why))) {
        corun_ctl_buf_printf(&resp, "{\"ok\": false, \"error\": ");
        corun_ctl_buf_jstr(&resp, why);
        corun_ctl_buf_printf(&resp, "}");
    } else if (!corun_ctl_may(&peer, req.verb)) {
        corun_ctl_buf_printf(&resp, "{\"ok\": false, \"error\": \"permission denied: only root "
                                    "or the admin group may change settings\"}");
        corun__info("ctl: denied a change to uid %u (pid %d)", (unsigned)peer.uid, (int)peer.pid);
    } else {
        handler(user, &peer, &req, &resp);
    }
    if (resp.failed) {
        corun_ctl_buf_release(&resp);
        corun_ctl_buf_printf(&resp, "{\"ok\": false, \"error\": \"out of memory\"}");
    }
    corun_ctl_buf_printf(&resp, "\n");
    if (!resp.failed)
        write_all(fd, resp.data, resp.len);
    corun_ctl_buf_release(&resp);
    return true;
}

int corun_ctl_serve(struct corun_ctl_server *srv, corun_ctl_handler handler, void *user)
{
    int served = 0;

    if (!srv || !handler)
        return -EINVAL;
    for (int accepted = 0; accepted < CTL_MAX_PER_WAKE; accepted++) {
        int fd = accept4(srv->fd, NULL, NULL, SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            /* The client gave up between poll and accept: not an error. */
            if (errno == ECONNABORTED || errno == EPROTO)
                continue;
            return served ? served : -errno;
        }
        served += answer(srv, fd, handler, user);
        close(fd);
    }
    return served;
}

int corun_ctl_call(const char *path, const char *request, int timeout_ms, char **response)
{
    struct corun_ctl_buf in = {0};
    struct sockaddr_un sa;
    int fd, err;

    if (!request || !response)
        return -EINVAL;
    *response = NULL;
    err = fill_addr(&sa, path);
    if (err)
        return err;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    set_timeouts(fd, timeout_ms);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        err = -errno;
        goto out_close;
    }
    err = write_all(fd, request, strlen(request));
    if (!err)
        err = write_all(fd, "\n", 1);
    if (err)
        goto out_close;
    /* The response can be long (thousands of processes): read to EOF. */
    for (;;) {
        char chunk[8192];
        ssize_t n = recv(fd, chunk, sizeof(chunk), 0);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
            goto out_release;
        }
        if (n == 0)
            break;
        corun_ctl_buf_printf(&in, "%.*s", (int)n, chunk);
        if (in.failed) {
            err = -ENOMEM;
            goto out_release;
        }
    }
    if (!in.len || in.data[in.len - 1] != '\n') {
        err = -EPROTO;
        goto out_release;
    }
    in.data[in.len - 1] = '\0';
    *response = in.data;
    close(fd);
    return 0;

out_release:
    corun_ctl_buf_release(&in);
out_close:
    close(fd);
    return err;
}
