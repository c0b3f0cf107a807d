/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow_gang.c -- `manta submit --tpu TYPE ... -- PROG` after cmd_submit.c
 * built the options: submit the gang through libmanta (manta/gang.h) and
 * follow it to its end with a watch (manta/admin.h).
 *
 * Every POLL_MS the gang is asked for (mt_gang_get); each member task of
 * the current attempt joins one watch with its output, written line by
 * line with a "[rank R] " prefix (stdout to stdout, stderr to stderr). A
 * restart is said on stderr and the new attempt's members are followed
 * the same way. The exit code is the gang's: 0 when every member exited 0,
 * the failed member's exit code (1 when it has none) when the gang failed,
 * 130 when cancelled. Ctrl-C cancels the gang; a second Ctrl-C leaves.
 *
 * `manta gang get|cancel ID` is cmd_gang.c; `manta list gangs` is in
 * cmd_list.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/follow_gang.h"
#include "cli/conn.h"
#include "cli/interrupt.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "common/sys.h"

#define POLL_MS 200
#define POLL_FAILS_MAX 25        /* 5 s without an answer: give up */
#define LINE_MAX_BYTES 65536

/* One member task being followed. */
struct member {
    char task_id[17];
    uint32_t rank;
    bool done;
    struct mt_strbuf part[2];    /* unterminated stdout / stderr line */
};

struct follow {
    mt_client_t *c;
    const char *gang_id;
    bool verbose;
    bool ended;                  /* the gang reached a final state */
    int state, exit_code;
    uint32_t attempt;
    char *error;                 /* owned: last error shown */
    mt_watch_t *w;               /* every member's task */
    struct member **m;           /* every member followed, all attempts */
    size_t nm, capm;
    char poll_err[256];
    int poll_fails;
};

static bool gang_final(int s)
{
    return s == MT_GANG_FINISHED || s == MT_GANG_FAILED ||
           s == MT_GANG_CANCELLED;
}

/* ---- member output ------------------------------------------------------- */

static void emit_line(const struct member *m, int fd, const char *p,
                      size_t n)
{
    char pre[32];
    int k = snprintf(pre, sizeof(pre), "[rank %u] ", m->rank);

    /* a closed pipe: the rest is dropped */
    (void)mt_sys_write_all(fd, pre, (size_t)k);
    (void)mt_sys_write_all(fd, p, n);
    if (!n || p[n - 1] != '\n')
        (void)mt_sys_write_all(fd, "\n", 1);
}

/* Output chunk of fd (1 or 2): whole lines go out prefixed, the rest waits
 * (a line longer than LINE_MAX_BYTES is cut). */
static void member_output(struct member *m, int fd, const uint8_t *p,
                          size_t n)
{
    struct mt_strbuf *sb = &m->part[fd - 1];
    const char *s, *nl;
    size_t used = 0;

    mt_strbuf_add(sb, (const char *)p, n);
    s = mt_strbuf_str(sb);
    while ((nl = memchr(s + used, '\n', sb->len - used))) {
        emit_line(m, fd, s + used, (size_t)(nl - (s + used)) + 1);
        used = (size_t)(nl - s) + 1;
    }
    if (sb->len - used > LINE_MAX_BYTES) {
        emit_line(m, fd, s + used, sb->len - used);
        used = sb->len;
    }
    if (used) {
        memmove(sb->buf, sb->buf + used, sb->len - used);
        sb->len -= used;
        sb->buf[sb->len] = '\0';
    }
}

static void member_flush(struct member *m)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct mt_strbuf *sb = &m->part[fd - 1];
        if (sb->len)
            emit_line(m, fd, mt_strbuf_str(sb), sb->len);
        mt_strbuf_release(sb);
    }
    m->done = true;
}

static struct member *find_member(const struct follow *f, const char *id)
{
    for (size_t i = 0; i < f->nm; i++)
        if (strcmp(f->m[i]->task_id, id) == 0)
            return f->m[i];
    return NULL;
}

/* Follow a member task we do not follow yet. */
static void add_member(struct follow *f, const mt_gang_member_info *x)
{
    struct member *m;

    if (!*x->task_id || strlen(x->task_id) > 16 ||
        find_member(f, x->task_id))
        return;
    m = mt_xcalloc(1, sizeof(*m));
    m->rank = x->rank;
    snprintf(m->task_id, sizeof(m->task_id), "%s", x->task_id);
    mt_xgrow((void **)&f->m, &f->capm, f->nm + 1, sizeof(*f->m));
    f->m[f->nm++] = m;
    if (mt_watch_add(f->w, m->task_id) < 0)
        m->done = true;
}

static void on_event(struct follow *f, const mt_watch_event *ev)
{
    struct member *m = find_member(f, ev->task_id);

    if (!m)
        return;
    if (ev->kind == MT_WATCH_EVENT_OUTPUT)
        member_output(m, ev->fd == 2 ? 2 : 1, ev->data, ev->len);
    else if (ev->kind == MT_WATCH_EVENT_END)
        member_flush(m);
}

/* ---- the gang ------------------------------------------------------------ */

static void say_change(struct follow *f, const mt_gang_detail *g)
{
    bool note = *g->error && (!f->error || strcmp(f->error, g->error));

    if (g->attempt > f->attempt)
        fprintf(stderr, "manta: gang %s restarting (attempt %u%s%d): %s\n",
                f->gang_id, g->attempt + 1,
                g->max_restarts >= 0 ? " of " : "",
                g->max_restarts >= 0 ? g->max_restarts + 1 : 0, g->error);
    else if (note && g->state == MT_GANG_PENDING)
        fprintf(stderr, "manta: gang %s is waiting for %u whole %s "
                "slice(s): %s\n", f->gang_id, g->slices, g->pod_type,
                g->error);
    if (f->verbose && (int)g->state != f->state)
        fprintf(stderr, "manta: gang %s %s%s%s\n", f->gang_id,
                mt_gang_state_name(g->state),
                g->n_slice_names ? " on " : "",
                g->n_slice_names ? g->slice_names[0] : "");
    free(f->error);
    f->error = *g->error ? mt_xstrdup(g->error) : NULL;
}

/* Ask for the gang; follow its new members. */
static void poll_gang(struct follow *f)
{
    mt_gang_detail *g;

    if (mt_gang_get(f->c, f->gang_id, &g) < 0) {
        snprintf(f->poll_err, sizeof(f->poll_err), "%s",
                 mt_client_last_error(f->c));
        if (++f->poll_fails >= POLL_FAILS_MAX)
            f->ended = true;
        return;
    }
    f->poll_fails = 0;
    say_change(f, g);
    for (size_t i = 0; i < g->n_members; i++)
        add_member(f, &g->members[i]);
    f->state = g->state;
    f->attempt = g->attempt;
    f->exit_code = g->exit_code;
    f->ended = gang_final(g->state);
    mt_gang_detail_free(g);
}

static void cancel(struct follow *f)
{
    fprintf(stderr, "manta: cancelling gang %s (Ctrl-C again to leave now)\n",
            f->gang_id);
    if (mt_gang_cancel(f->c, f->gang_id) < 0)
        fprintf(stderr, "manta: could not cancel gang %s: %s\n", f->gang_id,
                mt_client_last_error(f->c));
}

static int final_exit(const struct follow *f)
{
    switch (f->state) {
    case MT_GANG_FINISHED:
        if (f->verbose)
            fprintf(stderr, "manta: gang %s finished\n", f->gang_id);
        return 0;
    case MT_GANG_FAILED:
        fprintf(stderr, "manta submit: gang %s failed: %s\n", f->gang_id,
                f->error ? f->error : "no reason given");
        return f->exit_code > 0 && f->exit_code < 256 ? f->exit_code : 1;
    case MT_GANG_CANCELLED:
        fprintf(stderr, "manta submit: gang %s cancelled\n", f->gang_id);
        return MT_CLI_EXIT_CANCELLED;
    default:
        fprintf(stderr, "manta submit: lost track of gang %s: %s\n",
                f->gang_id, f->poll_err);
        return 1;
    }
}

/* Milliseconds on a monotonic clock. */
static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Take events until `until` (monotonic ms). RET false when no member is
 * left to watch (then, while the gang goes on, it sleeps until `until`). */
static bool drain(struct follow *f, int64_t until,
                  struct mt_cli_interrupt *it)
{
    const mt_watch_event *ev;
    int64_t left;
    int rc;

    while ((left = until - now_ms()) >= 0) {
        if (mt_cli_interrupt_take(it))
            cancel(f);
        rc = mt_watch_next(f->w, (int)left, &ev);
        if (rc == -MT_ENOENT) {
            if (!f->ended) /* members to come: wait for the next poll */
                nanosleep(&(struct timespec){left / 1000,
                                             left % 1000 * 1000000L},
                          NULL);
            return false;
        }
        if (rc < 0)
            return true;
        on_event(f, ev);
    }
    return true;
}

static int follow_gang(mt_client_t *c, const char *id, bool verbose,
                       struct mt_cli_interrupt *it)
{
    struct follow f;
    int64_t next = now_ms();
    int rc;

    memset(&f, 0, sizeof(f));
    f.c = c;
    f.gang_id = id;
    f.verbose = verbose;
    f.state = -1;
    if (mt_watch_open(c, NULL, 0, MT_WATCH_OUTPUT, &f.w) < 0) {
        fprintf(stderr, "manta submit: %s\n", mt_client_last_error(c));
        return 1;
    }
    /* The gang's end first, then the last output of its members. */
    for (;;) {
        if (!f.ended && now_ms() >= next) {
            poll_gang(&f);
            next = now_ms() + POLL_MS;
        }
        if (!drain(&f, f.ended ? now_ms() + POLL_MS : next, it) && f.ended)
            break;
    }
    rc = final_exit(&f);
    mt_watch_close(f.w);
    for (size_t i = 0; i < f.nm; i++) {
        if (!f.m[i]->done)
            member_flush(f.m[i]);
        free(f.m[i]);
    }
    free(f.m);
    free(f.error);
    return rc;
}

int mt_cli_gang_run(mt_client_t *c, const mt_gang_opts_t *go,
                    const char *const *argv, size_t argc, bool no_wait,
                    bool verbose, struct mt_cli_interrupt *it)
{
    char id[64];
    int rc = mt_gang_submit(c, go, argv, argc, id, sizeof(id));

    if (rc < 0) {
        fprintf(stderr, "manta submit: %s %s: %s\n",
                mt_cli_unreachable(rc) ? "cannot reach the head at"
                                       : "gang refused by",
                mt_client_address(c), mt_client_last_error(c));
        return 1;
    }
    if (no_wait) {
        printf("%s\n", id);
        return 0;
    }
    if (verbose)
        fprintf(stderr, "manta: submitted gang %s\n", id);
    mt_cli_interrupt_set_id(it, id);
    return follow_gang(c, id, verbose, it);
}
