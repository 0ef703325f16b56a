/*
 * corun/ctl.h — the daemon's status and control protocol over a Unix socket.
 *
 * One request per connection: the client writes one line holding a JSON
 * object and reads one line holding a JSON object back, then the server
 * closes. Requests (flat objects: string, number, boolean and null values):
 *
 *   {"cmd": "status"}                          what the daemon manages and why
 *   {"cmd": "set", "key": K, "value": V}       change a setting (admin)
 *   {"cmd": "pause"} / {"cmd": "resume"}       stop or restart placing (admin)
 *   {"cmd": "release", "pid": N}               give one process back (admin)
 *
 * Responses carry "ok": true, or "ok": false with "error": "words".
 *
 * Who may do what is decided by the peer's credentials from the kernel
 * (SO_PEERCRED, SO_PEERGROUPS), never by anything the client writes: root,
 * or a member of the configured admin group, may change settings and sees
 * every process; any other user changes nothing and sees only the processes
 * it owns. The socket file itself is world-connectable (mode 0666) for that
 * reason: the decision is made per request.
 */
#ifndef CORUN_CTL_H
#define CORUN_CTL_H

#include <sys/types.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum corun_ctl_verb {
    CORUN_CTL_STATUS = 0,
    CORUN_CTL_SET,
    CORUN_CTL_PAUSE,
    CORUN_CTL_RESUME,
    CORUN_CTL_RELEASE,
};

#define CORUN_CTL_KEY_LEN   32
#define CORUN_CTL_VALUE_LEN 256
#define CORUN_CTL_MAX_LINE  4096 /* longest request accepted */

struct corun_ctl_request {
    enum corun_ctl_verb verb;
    char key[CORUN_CTL_KEY_LEN];     /* "set": the setting */
    char value[CORUN_CTL_VALUE_LEN]; /* "set": its new value, as text */
    long long pid;                   /* "release": the process; -1 if absent */
};

/* Who is asking, as the kernel says. */
struct corun_ctl_peer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    bool admin; /* root or in the admin group: may change, sees everything */
};

/* Who counts as an administrator besides root. */
struct corun_ctl_access {
    bool has_admin_gid;
    gid_t admin_gid;
};

/*
 * corun_ctl_parse() - parses one request line @line (a JSON object; the
 * trailing newline optional) into @req. Returns 0, or -EINVAL with the reason
 * in @why (@len bytes) for malformed JSON, an unknown "cmd", a missing or
 * over-long field. Thread-safe.
 */
CORUN_API int corun_ctl_parse(const char *line, struct corun_ctl_request *req, char *why,
                              size_t len);

/* True when @verb changes something (set, pause, resume, release). */
CORUN_API bool corun_ctl_verb_changes(enum corun_ctl_verb verb);

/*
 * corun_ctl_is_admin() - whether a peer with real @uid, primary @gid and the
 * @ngroups supplementary @groups is an administrator under @acc: uid 0, or the
 * admin group among its groups. Pure; thread-safe.
 */
CORUN_API bool corun_ctl_is_admin(const struct corun_ctl_access *acc, uid_t uid, gid_t gid,
                                  const gid_t *groups, size_t ngroups);

/* Whether @peer may perform @verb. Only administrators change anything. */
CORUN_API bool corun_ctl_may(const struct corun_ctl_peer *peer, enum corun_ctl_verb verb);

/* Whether @peer may see a process owned by @owner: administrators see all,
 * others their own processes only. */
CORUN_API bool corun_ctl_may_see(const struct corun_ctl_peer *peer, uid_t owner);

/* ---- responses ------------------------------------------------------------ */

/* A growing text buffer the handler writes its JSON response into. After an
 * allocation failure further writes are dropped and @failed is set. */
struct corun_ctl_buf {
    char *data;
    size_t len, cap;
    bool failed;
};

CORUN_API void corun_ctl_buf_printf(struct corun_ctl_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends @s as a JSON string literal, quoted and escaped; NULL gives null. */
CORUN_API void corun_ctl_buf_jstr(struct corun_ctl_buf *b, const char *s);
/* Appends a JSON number; NaN and infinities give null. */
CORUN_API void corun_ctl_buf_jnum(struct corun_ctl_buf *b, double v);
CORUN_API void corun_ctl_buf_release(struct corun_ctl_buf *b);

/* ---- the server ----------------------------------------------------------- */

/* Answers one request into @resp (one JSON object, no newline needed). */
typedef void (*corun_ctl_handler)(void *user, const struct corun_ctl_peer *peer,
                                  const struct corun_ctl_request *req, struct corun_ctl_buf *resp);

struct corun_ctl_server;

/*
 * corun_ctl_listen() - binds a listening, non-blocking Unix stream socket at
 * @path (mode 0666) with the access rules @acc. A stale socket file left by a
 * dead daemon is replaced; a live one is not. Returns 0 and *@out,
 * -EADDRINUSE when another daemon answers there, -ENAMETOOLONG, or the
 * -errno of socket/bind/listen.
 */
CORUN_API int corun_ctl_listen(const char *path, const struct corun_ctl_access *acc,
                               struct corun_ctl_server **out);

/* The listening descriptor, for poll(): readable when a client waits. */
CORUN_API int corun_ctl_fd(const struct corun_ctl_server *srv);

/* Changes the access rules (a reloaded configuration). */
CORUN_API void corun_ctl_set_access(struct corun_ctl_server *srv,
                                    const struct corun_ctl_access *acc);

/*
 * corun_ctl_serve() - accepts the clients waiting now (at most 16) and answers
 * each: reads its line (a client has 200 ms to send it), parses it, denies it
 * if the peer may not, else calls @handler, writes the response line and
 * closes. A slow or malformed client costs at most its time-out and never
 * stops the server. Returns the number of clients answered or -errno of
 * accept() for an unexpected failure.
 */
CORUN_API int corun_ctl_serve(struct corun_ctl_server *srv, corun_ctl_handler handler, void *user);

/* Closes the socket and removes its file; accepts NULL. */
CORUN_API void corun_ctl_close(struct corun_ctl_server *srv);

/* ---- the client ----------------------------------------------------------- */

/*
 * corun_ctl_call() - connects to @path, sends @request (one line; the newline
 * is added), and reads the response line into a malloc'd string *@response
 * (free() it), waiting at most @timeout_ms for each step. Returns 0,
 * -ENOENT/-ECONNREFUSED when no daemon listens there, -ETIMEDOUT, -EPROTO for
 * a response without its newline, or another -errno.
 */
CORUN_API int corun_ctl_call(const char *path, const char *request, int timeout_ms,
                             char **response);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_CTL_H */
