/*
 * act-cpuset.c — the cpuset actuator: each placed process gets its own
 * cgroup, CPUSET/corun/PID-START, whose cpuset.cpus is the placement.
 *
 * Works on cgroup v2 when the unified hierarchy has the cpuset controller,
 * and on a v1 cpuset hierarchy otherwise (this project's CI machines mount
 * v1 controllers with an empty v2 hierarchy beside them). Children a process
 * starts afterwards are born in its cgroup and follow every later change,
 * which is why the backend sets CORUN_ACT_CHILDREN_FOLLOW.
 *
 * Trade-offs. The task cgroups live under one "corun" cgroup at the top of
 * the hierarchy, not beside the process's own cgroup: v2 forbids processes in
 * a cgroup whose children enable controllers, and v1 needs cpus and mems set
 * on every level. A process thus leaves its own cpuset while corun places it;
 * the journal records that cgroup and restore moves it (and whatever it
 * started meanwhile) back, then gives every thread its original affinity
 * (v1 resets affinities on every move) and removes corun's cgroup.
 */
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

struct cpuset_state {
    struct corun__act_base base;
    int version;     /* 1 or 2 */
    char mnt[256];   /* mount point, absolute ("/sys/fs/cgroup/cpuset") */
    bool base_ready; /* MNT/corun exists and is configured */
};

/* Whether the comma-separated @list holds @word. */
static bool has_word(const char *list, const char *word, char sep)
{
    size_t n = strlen(word);

    for (const char *p = list; p && *p;) {
        if (!strncmp(p, word, n) && (p[n] == sep || p[n] == '\0' || p[n] == '\n' || p[n] == ' '))
            return true;
        p = strchr(p, sep);
        if (p)
            p++;
    }
    return false;
}

/* Finds the cpuset hierarchy in /proc/self/mountinfo: v2 with cpuset
 * available first, else v1. 0, or -ENOTSUP with the reason in @why. */
static int find_mount(int rootfd, int *version, char *mnt, size_t len, char *why, size_t wlen)
{
    char *text = NULL, *save = NULL, v1[256] = "", v2[256] = "";
    size_t n;
    int err = corun__read_alloc(rootfd, "proc/self/mountinfo", &text, &n);

    if (err) {
        snprintf(why, wlen, "cannot read /proc/self/mountinfo: %s", corun_strerror(err));
        return err;
    }
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char point[256], fstype[32], super[512];
        const char *dash = strstr(line, " - ");

        if (!dash || sscanf(line, "%*s %*s %*s %*s %255s", point) != 1 ||
            sscanf(dash + 3, "%31s %*s %511s", fstype, super) != 2)
            continue;
        if (!strcmp(fstype, "cgroup2") && !v2[0]) {
            char path[300], ctl[512];

            snprintf(path, sizeof(path), "%s/cgroup.controllers", point);
            if (corun__read_text(rootfd, path, ctl, sizeof(ctl)) >= 0 &&
                has_word(ctl, "cpuset", ' '))
                snprintf(v2, sizeof(v2), "%s", point);
        } else if (!strcmp(fstype, "cgroup") && !v1[0] && has_word(super, "cpuset", ',')) {
            snprintf(v1, sizeof(v1), "%s", point);
        }
    }
    free(text);
    if (v2[0] || v1[0]) {
        *version = v2[0] ? 2 : 1;
        snprintf(mnt, len, "%s", v2[0] ? v2 : v1);
        return 0;
    }
    snprintf(why, wlen,
             "no cgroup hierarchy with the cpuset controller is mounted "
             "(neither cgroup2 with cpuset in cgroup.controllers nor a v1 cpuset mount)");
    return -ENOTSUP;
}

static int write_str(int rootfd, const char *path, const char *s)
{
    size_t n = strlen(s);
    int fd = corun__root_openat(rootfd, path, O_WRONLY);
    ssize_t w;

    if (fd < 0)
        return fd;
    w = write(fd, s, n);
    if (w < 0) {
        int err = -errno;

        close(fd);
        return err;
    }
    close(fd);
    return (size_t)w == n ? 0 : -EIO;
}

/* Copies the file @name from cgroup @from to cgroup @to (v1's cpus and mems). */
static int copy_file(int rootfd, const char *from, const char *to, const char *name)
{
    char src[600], dst[600], val[4096];
    ssize_t n;

    snprintf(src, sizeof(src), "%s/%s", from, name);
    snprintf(dst, sizeof(dst), "%s/%s", to, name);
    n = corun__read_text(rootfd, src, val, sizeof(val));
    if (n < 0)
        return (int)n;
    corun__rstrip(val);
    return write_str(rootfd, dst, val[0] ? val : "\n");
}

static int cs_probe(const struct corun_act_opts *opts, char *why, size_t len)
{
    char mnt[256];
    int version, err, rootfd = corun__root_open(opts ? opts->root : NULL);

    if (rootfd < 0) {
        snprintf(why, len, "cannot open the root directory: %s", corun_strerror(rootfd));
        return rootfd;
    }
    err = find_mount(rootfd, &version, mnt, sizeof(mnt), why, len);
    if (!err && faccessat(rootfd, mnt[0] == '/' ? mnt + 1 : mnt, W_OK, 0) < 0) {
        err = -errno;
        snprintf(why, len, "%s: not writable: %s", mnt, corun_strerror(err));
    }
    close(rootfd);
    return err;
}

static int cs_open(const struct corun_act_opts *opts, void **state)
{
    struct cpuset_state *s = calloc(1, sizeof(*s));
    char why[256];
    int err;

    if (!s)
        return -ENOMEM;
    if ((err = corun__act_base_init(&s->base, opts)))
        goto out_free;
    err = find_mount(s->base.rootfd, &s->version, s->mnt, sizeof(s->mnt), why, sizeof(why));
    if (err) {
        corun__warn("cpuset: %s", why);
        goto out_release;
    }
    *state = s;
    return 0;

out_release:
    corun__act_base_release(&s->base);
out_free:
    free(s);
    return err;
}

/* Makes MNT/corun, with cpuset enabled below it (v2) or cpus and mems copied
 * from the top (v1). */
static int ensure_base(struct cpuset_state *s)
{
    char dir[300];
    int err;

    if (s->base_ready)
        return 0;
    snprintf(dir, sizeof(dir), "%s/corun", s->mnt);
    if (mkdirat(s->base.rootfd, dir + 1, 0755) < 0 && errno != EEXIST)
        return -errno;
    if (s->version == 2) {
        char ctl[600];

        snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", s->mnt);
        if ((err = write_str(s->base.rootfd, ctl, "+cpuset")))
            return err;
        snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", dir);
        if ((err = write_str(s->base.rootfd, ctl, "+cpuset")))
            return err;
    } else {
        if ((err = copy_file(s->base.rootfd, s->mnt, dir, "cpuset.cpus")) ||
            (err = copy_file(s->base.rootfd, s->mnt, dir, "cpuset.mems")))
            return err;
    }
    s->base_ready = true;
    return 0;
}

/* Journal filler: the cgroup the process is in now and the one we make. */
static int fill_cgroups(void *ctx, struct corun_journal_entry *e)
{
    struct cpuset_state *s = ctx;
    char path[64], *text = NULL, *save = NULL;
    const char *cg = NULL;
    size_t n;
    int err;

    snprintf(path, sizeof(path), "proc/%d/cgroup", (int)e->pid);
    if ((err = corun__read_alloc(s->base.rootfd, path, &text, &n)))
        return err == -ENOENT ? -ESRCH : err;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

        if (!c2)
            continue;
        *c1 = '\0';
        *c2 = '\0';
        if ((s->version == 2 && !strcmp(line, "0") && c2 == c1 + 1) ||
            (s->version == 1 && has_word(c1 + 1, "cpuset", ','))) {
            cg = c2 + 1;
            break;
        }
    }
    if (!cg) {
        free(text);
        return -ENOENT;
    }
    err = 0;
    if ((size_t)snprintf(e->cgroup, sizeof(e->cgroup), "%s%s", s->mnt, strcmp(cg, "/") ? cg : "") >=
            sizeof(e->cgroup) ||
        (size_t)snprintf(e->created, sizeof(e->created), "%s/corun/%d-%llu", s->mnt, (int)e->pid,
                         e->start_time) >= sizeof(e->created))
        err = -ENAMETOOLONG;
    free(text);
    return err;
}

static int set_cpus(struct cpuset_state *s, const char *cg, const struct corun_cpuset *cpus)
{
    char path[320], list[4096];

    snprintf(path, sizeof(path), "%s/cpuset.cpus", cg);
    corun_cpuset_format(cpus, list, sizeof(list));
    return write_str(s->base.rootfd, path, list);
}

static int move_pid(int rootfd, const char *cg, pid_t pid)
{
    char path[320], num[32];

    snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
    snprintf(num, sizeof(num), "%d", (int)pid);
    return write_str(rootfd, path, num);
}

/* 1 when cgroup @cg (a path from the root) lists process @pid, 0 when it
 * does not or is gone, else -errno. */
static int in_cgroup(int rootfd, const char *cg, pid_t pid)
{
    char path[320], *procs = NULL, *save = NULL;
    size_t n;
    int err, found = 0;

    snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
    if ((err = corun__read_alloc(rootfd, path, &procs, &n)))
        return err == -ENOENT ? 0 : err;
    for (char *l = strtok_r(procs, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save))
        found = atoi(l) == (int)pid;
    free(procs);
    return found;
}

/* The first placement of @p: make its cgroup and move it there. */
static int first_move(struct cpuset_state *s, struct corun__act_proc *p,
                      const struct corun_cpuset *cpus)
{
    const char *cg = p->orig.created;
    int err;

    if ((err = ensure_base(s)))
        return err;
    if (mkdirat(s->base.rootfd, cg + 1, 0755) < 0 && errno != EEXIST)
        return -errno;
    if (s->version == 1) {
        char base[300];

        snprintf(base, sizeof(base), "%s/corun", s->mnt);
        if ((err = copy_file(s->base.rootfd, base, cg, "cpuset.mems")))
            return err;
    }
    if ((err = set_cpus(s, cg, cpus)))
        return err;
    if (!corun__pidfd_alive(p->pidfd))
        return -ESRCH;
    return move_pid(s->base.rootfd, cg, p->pid);
}

static int cs_apply(void *state, pid_t target, const struct corun_cpuset *cpus)
{
    struct cpuset_state *s = state;
    struct corun__act_proc *p = corun__act_find(&s->base, target);
    int err;

    if (!cpus || corun_cpuset_count(cpus) == 0)
        return -EINVAL;
    if (p) {
        if (!corun__pidfd_alive(p->pidfd))
            return -ESRCH;
        /* Its owner moved it out of our cgroup: their choice stands. */
        if (!in_cgroup(s->base.rootfd, p->orig.created, target))
            return corun__pidfd_alive(p->pidfd) ? -EBUSY : -ESRCH;
        if ((err = corun__act_note_applied(&s->base, p, cpus)))
            return err;
        err = set_cpus(s, p->orig.created, cpus);
        return err ? err : corun_cpuset_copy(&p->cur, cpus);
    }
    if ((err = corun__act_track(&s->base, target, "cpuset", cpus, fill_cgroups, s, &p)))
        return err;
    err = first_move(s, p, cpus);
    if (err) {
        /* Undo what was done; the process is where it was. */
        struct corun__restore_count n = {0};

        corun__cpuset_restore_entry(s->base.rootfd, &p->orig, corun__pidfd_alive(p->pidfd), &n);
        if (s->base.journal_dir)
            corun_journal_remove(s->base.journal_dir, p->pid, p->orig.start_time);
        corun__act_forget(&s->base, p);
        return err;
    }
    return corun_cpuset_copy(&p->cur, cpus);
}

int corun__cpuset_restore_entry(int rootfd, const struct corun_journal_entry *e, bool alive,
                                struct corun__restore_count *cnt)
{
    char path[320], *procs = NULL, *save = NULL;
    size_t n;
    int err = 0;

    /* Its owner moved it out of corun's cgroup since (or it never got
     * there, corun having stopped between the journal and the move): it
     * stays where it is; what it started in corun's cgroup goes back. */
    if (alive && e->cgroup[0] && e->created[0] && !in_cgroup(rootfd, e->created, e->pid)) {
        cnt->moved_away = true;
        cnt->kept++;
    } else if (alive && e->cgroup[0]) {
        struct corun_journal_entry now = {0};

        /* The move resets every thread's affinity (v1): first note which
         * masks an owner set inside corun's cgroup, to set them again. */
        if (e->applied.words && corun__capture_threads(rootfd, e->pid, &now))
            corun_journal_entry_release(&now);
        err = move_pid(rootfd, e->cgroup, e->pid);
        if (!err)
            err = corun__restore_threads(rootfd, e, e->applied.words ? &now : NULL, cnt);
        corun_journal_entry_release(&now);
        if (err == -ESRCH)
            err = 0;
    }
    if (!e->created[0])
        return err;
    /* Whatever the process started meanwhile is in its cgroup too: back to
     * where the process came from, or the cgroup could not be removed. */
    snprintf(path, sizeof(path), "%s/cgroup.procs", e->created);
    if (e->cgroup[0] && !corun__read_alloc(rootfd, path, &procs, &n)) {
        for (char *l = strtok_r(procs, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            move_pid(rootfd, e->cgroup, (pid_t)atoi(l));
        free(procs);
    }
    if (unlinkat(rootfd, e->created + 1, AT_REMOVEDIR) < 0 && errno != ENOENT && !err)
        err = -errno;
    return err;
}

static int restore_proc(struct cpuset_state *s, struct corun__act_proc *p)
{
    struct corun__restore_count n = {0};
    int err =
        corun__cpuset_restore_entry(s->base.rootfd, &p->orig, corun__pidfd_alive(p->pidfd), &n);

    if (!err && n.kept) {
        char what[160];

        corun__restore_words(&n, "cgroup and affinity", what, sizeof(what));
        corun__info("cpuset: pid %d (%s): %s", (int)p->pid, p->orig.comm, what);
    }
    if (err) {
        corun__warn("cpuset: restoring pid %d (%s): %s", (int)p->pid, p->orig.comm,
                    corun_strerror(err));
        return err;
    }
    if (s->base.journal_dir)
        corun_journal_remove(s->base.journal_dir, p->pid, p->orig.start_time);
    corun__act_forget(&s->base, p);
    return 0;
}

static int cs_restore(void *state, pid_t target)
{
    struct cpuset_state *s = state;
    struct corun__act_proc *p = corun__act_find(&s->base, target);

    return p ? restore_proc(s, p) : 0;
}

static int cs_restore_all(void *state)
{
    struct cpuset_state *s = state;
    int first = 0;

    for (unsigned i = s->base.nprocs; i-- > 0;) {
        int err = restore_proc(s, &s->base.procs[i]);

        if (err && !first)
            first = err;
    }
    return first;
}

static void cs_close(void *state)
{
    struct cpuset_state *s = state;

    if (!s)
        return;
    corun__act_base_release(&s->base);
    free(s);
}

/* The process and everything in its task cgroup: what it started since it
 * was placed follows it for memory as for CPUs. */
static int cs_move_memory(void *state, pid_t target, int node)
{
    struct cpuset_state *s = state;
    struct corun__act_proc *p = corun__act_find(&s->base, target);

    return corun__act_move_memory(&s->base, target, node, p ? p->orig.created : NULL);
}

const struct corun_act_ops corun_act_cpuset = {
    .name = "cpuset",
    .probe = cs_probe,
    .open = cs_open,
    .apply = cs_apply,
    .restore = cs_restore,
    .restore_all = cs_restore_all,
    .close = cs_close,
    .flags = CORUN_ACT_CHILDREN_FOLLOW,
    .move_memory = cs_move_memory,
};
