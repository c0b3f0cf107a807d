/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc.c -- processes through /proc, and the worker's record of the process
 * groups it started (see proc.h for the format and the sweep's rules).
 *
 * A sweep goes in rounds: each round reads every /proc/<pid>/stat once and
 * SIGKILLs each live process of a recorded group; it ends when a round
 * finds none (a killed process cannot fork any more, so this converges)
 * or after SWEEP_MS. The sweeping process never kills itself or its own
 * group, whatever the record says.
 */
#include "common/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/strbuf.h"
#include "common/sys.h"

#define SWEEP_MS 2000
#define SWEEP_PAUSE_MS 10

/* ==== /proc =============================================================== */

int mt_proc_stat_parse(const char *text, struct mt_proc_stat *out)
{
    const char *p = strrchr(text, ')');
    unsigned long long start;
    char *end;
    long pid;
    int n;

    memset(out, 0, sizeof(*out));
    pid = strtol(text, &end, 10);
    if (!p || end == text || pid <= 0 || pid > 0x7fffffff || *end != ' ')
        return -MT_EPROTO;
    /* Fields 3 (state), 4 (ppid), 5 (pgrp), then 16 we skip, then 22. */
    n = sscanf(p + 1, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                      "%*d %*d %*d %*d %*d %*d %llu",
               &out->state, &out->ppid, &out->pgrp, &start);
    if (n != 4)
        return -MT_EPROTO;
    out->pid = (int)pid;
    out->start = start;
    return 0;
}

int mt_proc_stat_read(int pid, struct mt_proc_stat *out)
{
    char path[64], buf[1024];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    do
        n = read(fd, buf, sizeof(buf) - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return n < 0 ? -errno : -ENOENT;
    buf[n] = '\0';
    return mt_proc_stat_parse(buf, out);
}

bool mt_proc_alive(int pid, uint64_t start)
{
    struct mt_proc_stat st;

    return pid > 0 && mt_proc_stat_read(pid, &st) == 0 &&
           st.start == start && st.state != 'Z' && st.state != 'X';
}

int mt_proc_scan(void (*fn)(const struct mt_proc_stat *st, void *arg),
                 void *arg)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    struct mt_proc_stat st;
    char *end;
    long pid;

    if (!d)
        return -errno;
    while ((e = readdir(d))) {
        pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid > 0x7fffffff)
            continue;
        if (mt_proc_stat_read((int)pid, &st) == 0)
            fn(&st, arg);
    }
    closedir(d);
    return 0;
}

/* ==== the record ========================================================== */

void mt_proc_record_release(struct mt_proc_record *r)
{
    MT_FREE(r->groups);
    r->n = r->cap = 0;
    r->owner.pid = 0;
    r->owner.start = 0;
}

void mt_proc_record_add(struct mt_proc_record *r, int pid, uint64_t start)
{
    mt_xgrow((void **)&r->groups, &r->cap, r->n + 1, sizeof(*r->groups));
    r->groups[r->n].pid = pid;
    r->groups[r->n].start = start;
    r->n++;
}

char *mt_proc_record_format(const struct mt_proc_record *r)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_strbuf_adds(&sb, "# manta-worker process groups: pid start-time\n");
    if (r->owner.pid > 0)
        mt_strbuf_addf(&sb, "owner %d %llu\n", r->owner.pid,
                       (unsigned long long)r->owner.start);
    for (size_t i = 0; i < r->n; i++)
        mt_strbuf_addf(&sb, "group %d %llu\n", r->groups[i].pid,
                       (unsigned long long)r->groups[i].start);
    return sb.buf; /* never NULL: a line was added */
}

/* One "owner|group PID START" line. RET 0 or -MT_EPROTO. */
static int parse_line(const char *line, size_t len, struct mt_proc_record *r)
{
    char kind[8], tail;
    unsigned long long start;
    int pid;
    char buf[128];

    if (len >= sizeof(buf))
        return -MT_EPROTO;
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (sscanf(buf, "%7s %d %llu %c", kind, &pid, &start, &tail) != 3 ||
        pid <= 0)
        return -MT_EPROTO;
    if (strcmp(kind, "group") == 0)
        mt_proc_record_add(r, pid, start);
    else if (strcmp(kind, "owner") == 0 && r->owner.pid == 0) {
        r->owner.pid = pid;
        r->owner.start = start;
    } else
        return -MT_EPROTO;
    return 0;
}

int mt_proc_record_parse(const char *text, struct mt_proc_record *r)
{
    const char *p = text, *nl;
    size_t len;

    memset(r, 0, sizeof(*r));
    for (; *p; p = *nl ? nl + 1 : nl) {
        nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p);
        len = (size_t)(nl - p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\r'))
            len--;
        if (len == 0 || p[0] == '#')
            continue;
        if (parse_line(p, len, r) < 0)
            return -MT_EPROTO;
    }
    return 0;
}

/* ==== the sweep =========================================================== */

struct sweep {
    const struct mt_proc_record *r;
    bool *gone;                 /* per group: its leader's pid was reused */
    struct mt_proc_ent *hit;    /* processes signalled so far */
    size_t n_hit, cap_hit;
    int round;                  /* signalled in this round */
};

static void note_hit(struct sweep *s, const struct mt_proc_stat *st)
{
    for (size_t i = 0; i < s->n_hit; i++)
        if (s->hit[i].pid == st->pid && s->hit[i].start == st->start)
            return;
    mt_xgrow((void **)&s->hit, &s->cap_hit, s->n_hit + 1, sizeof(*s->hit));
    s->hit[s->n_hit].pid = st->pid;
    s->hit[s->n_hit++].start = st->start;
}

static void sweep_one(const struct mt_proc_stat *st, void *arg)
{
    struct sweep *s = arg;
    const struct mt_proc_record *r = s->r;

    if (st->state == 'Z' || st->state == 'X' || st->pid == getpid() ||
        st->pgrp == getpgrp())
        return;
    for (size_t i = 0; i < r->n; i++) {
        if (s->gone[i] || st->pgrp != r->groups[i].pid ||
            st->start < r->groups[i].start)
            continue;
        if (kill(st->pid, SIGKILL) == 0) {
            s->round++;
            note_hit(s, st);
        }
        return;
    }
}

/* Which groups are gone: their leader's pid names a younger process. */
static void mark_gone(struct sweep *s)
{
    struct mt_proc_stat st;

    for (size_t i = 0; i < s->r->n; i++) {
        const struct mt_proc_ent *g = &s->r->groups[i];

        if (!s->gone[i] && mt_proc_stat_read(g->pid, &st) == 0 &&
            st.start != g->start)
            s->gone[i] = true;
    }
}

static void pause_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};

    nanosleep(&ts, NULL);
}

int mt_proc_record_sweep(const struct mt_proc_record *r, int *killed)
{
    struct sweep s;
    int64_t end = mt_now_mono_ms() + SWEEP_MS;

    if (killed)
        *killed = 0;
    if (r->owner.pid > 0 && r->owner.pid != getpid() &&
        mt_proc_alive(r->owner.pid, r->owner.start))
        return -MT_ESTATE;
    if (r->n == 0)
        return 0;
    memset(&s, 0, sizeof(s));
    s.r = r;
    s.gone = mt_xcalloc(r->n, sizeof(*s.gone));
    do {
        s.round = 0;
        mark_gone(&s);
        if (mt_proc_scan(sweep_one, &s) < 0 || s.round == 0)
            break;
        pause_ms(SWEEP_PAUSE_MS);
    } while (mt_now_mono_ms() < end);
    if (killed)
        *killed = (int)s.n_hit;
    free(s.hit);
    free(s.gone);
    return 0;
}

int mt_proc_record_sweep_file(const char *path, int *killed)
{
    struct mt_proc_record r;
    char *text = mt_sys_read_file(path);
    int rc;

    if (killed)
        *killed = 0;
    if (!text)
        return errno == ENOENT ? 0 : -errno;
    rc = mt_proc_record_parse(text, &r);
    free(text);
    if (rc == 0)
        rc = mt_proc_record_sweep(&r, killed);
    mt_proc_record_release(&r);
    if (rc != -MT_ESTATE)
        unlink(path);
    return rc;
}
