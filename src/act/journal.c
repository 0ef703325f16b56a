/*
 * journal.c — the durable record of every process's placement before corun
 * changed it, so that a crash loses nothing: `corun restore` (or the next
 * daemon start) replays it.
 *
 * One small text file per process, DIR/PID-START.journal, keyed by PID and
 * start time so that a process that only inherited a recycled PID is never
 * touched. A file is written whole to a temporary name, fsync'ed, renamed
 * over its final name and the directory fsync'ed: a reader sees the old
 * file or the new one, never half of one, even after a power cut.
 *
 *   corun-journal 2
 *   pid 1234
 *   start 5678
 *   backend affinity
 *   comm stress
 *   cpus 0-1
 *   thread 1234 0-1
 *   thread 1240 1
 *   cgroup /sys/fs/cgroup/cpuset          (cpuset backend only)
 *   created /sys/fs/cgroup/cpuset/corun/1234-5678
 *   applied 1                             (format 2: the mask corun applied last)
 *   owner 999 4321                        (format 2: the corun that wrote it, its start)
 *   end
 *
 * Format 2 adds the last two lines; a format-1 file (without them) is still
 * read, and then every thread is restored whatever its mask (format 1 could
 * not tell an owner's later pinning from corun's placement) and the entry is
 * nobody's, so any `corun restore` or daemon start replays it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "act/act-internal.h"
#include "common/internal.h"
#include "common/sys.h"

#define JOURNAL_MAGIC    "corun-journal 2"
#define JOURNAL_MAGIC_V1 "corun-journal 1"

void corun_journal_entry_release(struct corun_journal_entry *e)
{
    if (!e)
        return;
    for (unsigned i = 0; i < e->nthreads; i++)
        corun_cpuset_release(&e->threads[i].cpus);
    free(e->threads);
    corun_cpuset_release(&e->cpus);
    corun_cpuset_release(&e->applied);
    e->threads = NULL;
    e->nthreads = 0;
}

/* mkdir -p with mode 0700 for the parts we create. */
static int make_dirs(const char *dir)
{
    char buf[4096];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(buf))
        return -ENAMETOOLONG;
    memcpy(buf, dir, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0700) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static void entry_name(char *buf, size_t len, const char *dir, pid_t pid, unsigned long long start,
                       const char *suffix)
{
    snprintf(buf, len, "%s/%d-%llu.journal%s", dir, (int)pid, start, suffix);
}

/* Writes the text of @e to @f. Returns false when a CPU list did not fit. */
static bool write_entry(FILE *f, const struct corun_journal_entry *e)
{
    size_t need = corun_cpuset_format(&e->cpus, NULL, 0) + 1;
    char *list = malloc(need < 64 ? 64 : need);
    bool ok = list != NULL;

    if (!ok)
        return false;
    corun_cpuset_format(&e->cpus, list, need);
    fprintf(f, "%s\npid %d\nstart %llu\nbackend %s\ncomm %s\ncpus %s\n", JOURNAL_MAGIC, (int)e->pid,
            e->start_time, e->backend, e->comm[0] ? e->comm : "?", list);
    for (unsigned i = 0; i < e->nthreads && ok; i++) {
        size_t n = corun_cpuset_format(&e->threads[i].cpus, NULL, 0) + 1;

        if (n > need) {
            char *l = realloc(list, n);

            if (!l) {
                ok = false;
                break;
            }
            list = l;
            need = n;
        }
        corun_cpuset_format(&e->threads[i].cpus, list, need);
        fprintf(f, "thread %d %s\n", (int)e->threads[i].tid, list);
    }
    if (e->cgroup[0])
        fprintf(f, "cgroup %s\n", e->cgroup);
    if (e->created[0])
        fprintf(f, "created %s\n", e->created);
    if (ok && e->applied.words && corun_cpuset_count(&e->applied)) {
        size_t n = corun_cpuset_format(&e->applied, NULL, 0) + 1;

        if (n > need) {
            char *l = realloc(list, n);

            if (!l) {
                free(list);
                return false;
            }
            list = l;
            need = n;
        }
        corun_cpuset_format(&e->applied, list, need);
        fprintf(f, "applied %s\n", list);
    }
    if (e->owner > 0)
        fprintf(f, "owner %d %llu\n", (int)e->owner, e->owner_start);
    fprintf(f, "end\n");
    free(list);
    return ok;
}

int corun_journal_prepare(const char *dir)
{
    struct stat st;
    int err;

    if (!dir)
        return -EINVAL;
    if ((err = make_dirs(dir)))
        return err;
    if (stat(dir, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (access(dir, W_OK | X_OK) < 0)
        return -errno;
    return 0;
}

int corun_journal_write(const char *dir, const struct corun_journal_entry *e)
{
    char tmp[4200], final[4200];
    int fd, dfd, err;
    FILE *f;

    if ((err = make_dirs(dir)))
        return err;
    /* Our own temporary name: two instances may journal the same process. */
    snprintf(tmp, sizeof(tmp), "%s/%d-%llu.journal.tmp%d", dir, (int)e->pid, e->start_time,
             (int)getpid());
    entry_name(final, sizeof(final), dir, e->pid, e->start_time, "");
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    f = fdopen(fd, "w");
    if (!f) {
        err = -errno;
        close(fd);
        goto out_unlink;
    }
    if (!write_entry(f, e)) {
        fclose(f);
        err = -ENOMEM;
        goto out_unlink;
    }
    if (fflush(f) != 0 || fsync(fd) != 0) {
        err = -errno;
        fclose(f);
        goto out_unlink;
    }
    if (fclose(f) != 0) {
        err = -errno;
        goto out_unlink;
    }
    if (rename(tmp, final) < 0) {
        err = -errno;
        goto out_unlink;
    }
    /* The rename is durable only once the directory is. */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;

out_unlink:
    unlink(tmp);
    return err;
}

int corun_journal_remove(const char *dir, pid_t pid, unsigned long long start_time)
{
    char path[4200];

    entry_name(path, sizeof(path), dir, pid, start_time, "");
    if (unlink(path) < 0 && errno != ENOENT)
        return -errno;
    return 0;
}

static int parse_line(struct corun_journal_entry *e, char *line, int version, bool *ended)
{
    char *val = strchr(line, ' ');
    char *end;

    if (!strcmp(line, "end")) {
        *ended = true;
        return 0;
    }
    if (!val)
        return -EINVAL;
    *val++ = '\0';
    if (!strcmp(line, "pid")) {
        long v = strtol(val, &end, 10);

        if (*end || v <= 0)
            return -EINVAL;
        e->pid = (pid_t)v;
    } else if (!strcmp(line, "start")) {
        errno = 0;
        e->start_time = strtoull(val, &end, 10);
        if (*end || errno)
            return -EINVAL;
    } else if (!strcmp(line, "backend")) {
        snprintf(e->backend, sizeof(e->backend), "%s", val);
    } else if (!strcmp(line, "comm")) {
        snprintf(e->comm, sizeof(e->comm), "%s", val);
    } else if (!strcmp(line, "cpus")) {
        return corun_cpuset_parse(&e->cpus, val, NULL);
    } else if (!strcmp(line, "thread")) {
        struct corun_journal_thread *t;
        long tid = strtol(val, &end, 10);
        int err;

        if (*end != ' ' || tid <= 0)
            return -EINVAL;
        t = realloc(e->threads, (e->nthreads + 1) * sizeof(*t));
        if (!t)
            return -ENOMEM;
        e->threads = t;
        t = &e->threads[e->nthreads];
        memset(t, 0, sizeof(*t));
        t->tid = (pid_t)tid;
        if ((err = corun_cpuset_parse(&t->cpus, end + 1, NULL))) {
            corun_cpuset_release(&t->cpus);
            return err;
        }
        e->nthreads++;
    } else if (!strcmp(line, "cgroup")) {
        if (strlen(val) >= sizeof(e->cgroup))
            return -EINVAL;
        snprintf(e->cgroup, sizeof(e->cgroup), "%s", val);
    } else if (!strcmp(line, "created")) {
        if (strlen(val) >= sizeof(e->created))
            return -EINVAL;
        snprintf(e->created, sizeof(e->created), "%s", val);
    } else if (!strcmp(line, "applied") && version >= 2) {
        return corun_cpuset_parse(&e->applied, val, NULL);
    } else if (!strcmp(line, "owner") && version >= 2) {
        long v = strtol(val, &end, 10);

        if (*end != ' ' || v <= 0)
            return -EINVAL;
        e->owner = (pid_t)v;
        errno = 0;
        e->owner_start = strtoull(end + 1, &end, 10);
        if (*end || errno)
            return -EINVAL;
    } else {
        return -EINVAL;
    }
    return 0;
}

int corun_journal_read(const char *path, struct corun_journal_entry *e, unsigned *bad_line)
{
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    bool ended = false;
    int err = 0, version = 0;
    FILE *f;

    memset(e, 0, sizeof(*e));
    f = fopen(path, "re");
    if (!f)
        return -errno;
    while (!err && getline(&line, &cap, f) > 0) {
        lineno++;
        corun__rstrip(line);
        if (ended)
            err = -EINVAL;
        else if (lineno == 1)
            err = (version = !strcmp(line, JOURNAL_MAGIC)      ? 2
                             : !strcmp(line, JOURNAL_MAGIC_V1) ? 1
                                                               : 0)
                      ? 0
                      : -EINVAL;
        else
            err = parse_line(e, line, version, &ended);
    }
    free(line);
    fclose(f);
    if (!err && (!ended || e->pid <= 0 || !e->backend[0] || !e->cpus.words)) {
        err = -EINVAL;
        lineno++;
    }
    if (err) {
        if (bad_line)
            *bad_line = lineno ? lineno : 1;
        corun_journal_entry_release(e);
    }
    return err == -ERANGE ? -EINVAL : err;
}

/* Fields 3 (state) and 22 (start time) of /proc/PID/stat below @root. */
static int read_stat(const char *root, pid_t pid, char *state, unsigned long long *start)
{
    char path[64], buf[1024], *p;
    int rootfd = corun__root_open(root);
    ssize_t n;

    if (rootfd < 0)
        return rootfd;
    snprintf(path, sizeof(path), "proc/%d/stat", (int)pid);
    n = corun__read_text(rootfd, path, buf, sizeof(buf));
    close(rootfd);
    if (n < 0)
        return n == -ENOENT ? -ESRCH : (int)n;
    /* The command name may hold spaces and parentheses: fields restart after
     * the last ')'. That is field 2; field 22 is the 20th after it. */
    p = strrchr(buf, ')');
    if (!p)
        return -EINVAL;
    p++;
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return -EINVAL;
        if (field == 3 && state)
            *state = *p;
        if (field == 22) {
            char *end;

            errno = 0;
            *start = strtoull(p, &end, 10);
            return (errno || end == p) ? -EINVAL : 0;
        }
        while (*p && *p != ' ')
            p++;
    }
    return -EINVAL;
}

int corun_proc_start_time(const char *root, pid_t pid, unsigned long long *out)
{
    return read_stat(root, pid, NULL, out);
}

/* ---- replay ---------------------------------------------------------------- */

/* Whether the corun that wrote @e still runs (and is not us): then the entry
 * is its own to restore. A zombie has exited: it restores nothing. Owners are
 * real processes, so the live /proc is read whatever root the caller gave. */
static bool owner_running(const struct corun_journal_entry *e)
{
    unsigned long long start;
    char state = '?';

    if (e->owner <= 0 || e->owner == getpid())
        return false;
    return !read_stat(NULL, e->owner, &state, &start) && start == e->owner_start && state != 'Z' &&
           state != 'X';
}

/* Restores one journaled process; says what it did in @what. 0, -ESRCH gone,
 * or -errno. */
static int restore_entry(int rootfd, const char *root, const struct corun_journal_entry *e,
                         char *what, size_t len)
{
    struct corun__restore_count n = {0};
    unsigned long long start;
    int pidfd, err;
    bool alive;

    pidfd = corun__sys.pidfd_open(e->pid, 0);
    alive = pidfd >= 0 && !corun_proc_start_time(root, e->pid, &start) && start == e->start_time &&
            corun__pidfd_alive(pidfd);
    if (!strcmp(e->backend, "cpuset")) {
        err = corun__cpuset_restore_entry(rootfd, e, alive, &n);
        if (err)
            snprintf(what, len, "cpuset restore failed");
        else if (!alive)
            snprintf(what, len, "process gone; its cgroup removed");
        else
            corun__restore_words(&n, "cgroup and affinity", what, len);
        if (!err && !alive)
            err = -ESRCH;
    } else if (!alive) {
        err = -ESRCH;
        snprintf(what, len, "process gone (or its PID reused): nothing to restore");
    } else {
        err = corun__restore_threads(rootfd, e, NULL, &n);
        if (err)
            snprintf(what, len, "restoring affinity failed");
        else
            corun__restore_words(&n, "affinity", what, len);
    }
    if (!err && n.kept)
        corun__info("restore: pid %d (%s): %s", (int)e->pid, e->comm, what);
    if (pidfd >= 0)
        close(pidfd);
    return err;
}

int corun_act_restore_journal(const struct corun_act_opts *opts,
                              void (*cb)(void *user, const struct corun_restore_result *r),
                              void *user)
{
    const char *dir = opts ? opts->journal_dir : NULL;
    int rootfd, first = 0;
    struct dirent *d;
    DIR *dp;

    if (!dir)
        return -EINVAL;
    dp = opendir(dir);
    if (!dp)
        return errno == ENOENT ? 0 : -errno;
    rootfd = corun__root_open(opts->root);
    if (rootfd < 0) {
        closedir(dp);
        return rootfd;
    }
    while ((d = readdir(dp))) {
        struct corun_restore_result r = {0};
        struct corun_journal_entry e;
        size_t n = strlen(d->d_name);
        char path[4200], what[160];
        unsigned bad = 0;
        int err;

        if (n < 9 || strcmp(d->d_name + n - 8, ".journal")) {
            /* A temporary left by a crash mid-write: the entry it was to
             * replace (if any) is still whole; the fragment means nothing. */
            if (strstr(d->d_name, ".journal.tmp"))
                unlinkat(dirfd(dp), d->d_name, 0);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
        r.file = path;
        err = corun_journal_read(path, &e, &bad);
        if (err) {
            r.err = err;
            r.what = "unreadable journal entry, kept";
            if (cb)
                cb(user, &r);
            if (!first)
                first = err;
            continue;
        }
        r.entry = &e;
        r.what = what;
        if (owner_running(&e)) {
            snprintf(what, sizeof(what), "kept: corun pid %d that placed it still runs",
                     (int)e.owner);
            r.err = -EBUSY;
        } else {
            r.err = restore_entry(rootfd, opts->root, &e, what, sizeof(what));
            if (r.err == 0 || r.err == -ESRCH)
                unlink(path);
            else if (!first)
                first = r.err;
        }
        if (cb)
            cb(user, &r);
        corun_journal_entry_release(&e);
    }
    closedir(dp);
    close(rootfd);
    return first;
}
