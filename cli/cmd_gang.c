/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_gang.c -- gangs from the command line.
 *
 * `manta submit --tpu TYPE ... -- PROG` (cmd_submit.c builds the member's
 * spec, then calls mt_cli_gang_run): SubmitGang, then follow the gang to
 * its end. A timer polls GetGang; every member task of the current attempt
 * gets its own WatchTask(output) stream, and its output is written line by
 * line with a "[rank R] " prefix (stdout to stdout, stderr to stderr). A
 * restart is said on stderr and the new attempt's members are followed the
 * same way. The exit code is the gang's: 0 when every member exited 0, the
 * failed member's exit code (1 when it has none) when the gang failed,
 * 130 when cancelled. Ctrl-C sends CancelGang; a second Ctrl-C leaves.
 *
 * `manta gang get|cancel ID` and `manta list gangs` (mt_cli_list_gangs)
 * show and stop gangs.
 *
 * DESIGN: one private loop (the connection's) runs every callback, so the
 * follow state needs no locks.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/strbuf.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define GANG_TIMEOUT_MS 4000
#define POLL_MS 200
#define EXIT_CANCELLED 130
#define LINE_MAX_BYTES 65536

/* One member task being followed. */
struct member_watch {
    struct follow *f;
    char task_id[17];
    uint32_t rank;
    bool done;
    struct mt_strbuf part[2];    /* unterminated stdout / stderr line */
};

struct follow {
    struct mt_cli_conn *c;
    const char *gang_id;
    bool verbose;
    bool poll_busy;
    bool ended;                  /* the gang reached a final state */
    int state, exit_code;
    uint32_t attempt;
    char *error;                 /* owned: last error shown */
    struct member_watch **w;     /* every member followed, all attempts */
    size_t nw, capw;
    uv_timer_t timer;
    uv_signal_t sigint;
    int sigints;
    bool cancel_sent;
    char poll_err[256];
    int poll_fails;
};

static bool gang_final(int s)
{
    return s == MANTA__GANG_STATE__GANG_STATE_FINISHED ||
           s == MANTA__GANG_STATE__GANG_STATE_FAILED ||
           s == MANTA__GANG_STATE__GANG_STATE_CANCELLED;
}

const char *mt_cli_gang_state_name(int s)
{
    switch (s) {
    case MANTA__GANG_STATE__GANG_STATE_PENDING: return "PENDING";
    case MANTA__GANG_STATE__GANG_STATE_RUNNING: return "RUNNING";
    case MANTA__GANG_STATE__GANG_STATE_STOPPING: return "STOPPING";
    case MANTA__GANG_STATE__GANG_STATE_FINISHED: return "FINISHED";
    case MANTA__GANG_STATE__GANG_STATE_FAILED: return "FAILED";
    case MANTA__GANG_STATE__GANG_STATE_CANCELLED: return "CANCELLED";
    default: return "UNKNOWN";
    }
}

/* ---- member output ------------------------------------------------------ */

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* a closed pipe: drop it */
        p += k;
        n -= (size_t)k;
    }
}

static void emit_line(struct member_watch *mw, int fd, const char *p,
                      size_t n)
{
    char pre[32];
    int k = snprintf(pre, sizeof(pre), "[rank %u] ", mw->rank);

    write_all(fd, pre, (size_t)k);
    write_all(fd, p, n);
    if (!n || p[n - 1] != '\n')
        write_all(fd, "\n", 1);
}

/* Output chunk of fd (1 or 2): whole lines go out prefixed, the rest waits
 * (a line longer than LINE_MAX_BYTES is cut). */
static void member_output(struct member_watch *mw, int fd, const uint8_t *p,
                          size_t n)
{
    struct mt_strbuf *sb = &mw->part[fd - 1];
    const char *s, *nl;
    size_t used = 0;

    mt_strbuf_add(sb, (const char *)p, n);
    s = mt_strbuf_str(sb);
    while ((nl = memchr(s + used, '\n', sb->len - used))) {
        emit_line(mw, fd, s + used, (size_t)(nl - (s + used)) + 1);
        used = (size_t)(nl - s) + 1;
    }
    if (sb->len - used > LINE_MAX_BYTES) {
        emit_line(mw, fd, s + used, sb->len - used);
        used = sb->len;
    }
    if (used) {
        memmove(sb->buf, sb->buf + used, sb->len - used);
        sb->len -= used;
        sb->buf[sb->len] = '\0';
    }
}

static void member_flush(struct member_watch *mw)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct mt_strbuf *sb = &mw->part[fd - 1];
        if (sb->len)
            emit_line(mw, fd, mt_strbuf_str(sb), sb->len);
        mt_strbuf_release(sb);
    }
}

static void on_member_event(void *arg, const ProtobufCMessage *msg)
{
    struct member_watch *mw = arg;
    const Manta__TaskEvent *ev = (const Manta__TaskEvent *)msg;

    if (ev->output.len)
        member_output(mw, ev->fd == 2 ? 2 : 1, ev->output.data,
                      ev->output.len);
}

static void on_member_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    struct member_watch *mw = arg;

    (void)st;
    (void)resp;
    mw->done = true;
    member_flush(mw);
}

static bool watching(const struct follow *f, const char *task_id)
{
    for (size_t i = 0; i < f->nw; i++)
        if (strcmp(f->w[i]->task_id, task_id) == 0)
            return true;
    return false;
}

static void watch_member(struct follow *f, const Manta__GangMember *m)
{
    Manta__WatchTaskRequest req = MANTA__WATCH_TASK_REQUEST__INIT;
    struct member_watch *mw;

    if (!*m->task_id || strlen(m->task_id) > 16 || watching(f, m->task_id))
        return;
    mw = mt_xcalloc(1, sizeof(*mw));
    mw->f = f;
    mw->rank = m->rank;
    snprintf(mw->task_id, sizeof(mw->task_id), "%s", m->task_id);
    mt_xgrow((void **)&f->w, &f->capw, f->nw + 1, sizeof(*f->w));
    f->w[f->nw++] = mw;
    req.task_id = mw->task_id;
    req.output = true;
    if (mt_rpc_stream_open(f->c->ch, &mt_head_watch_task, &req.base, 0, 0,
                           on_member_event, on_member_done, mw, NULL) < 0)
        mw->done = true;
}

/* ---- the gang ---------------------------------------------------------- */

static void say_change(struct follow *f, const Manta__GangInfo *g)
{
    bool note = *g->error && (!f->error || strcmp(f->error, g->error));

    if (g->attempt > f->attempt)
        fprintf(stderr, "manta: gang %s restarting (attempt %u%s%d): %s\n",
                f->gang_id, g->attempt + 1,
                g->max_restarts >= 0 ? " of " : "",
                g->max_restarts >= 0 ? g->max_restarts + 1 : 0, g->error);
    else if (note && g->state == MANTA__GANG_STATE__GANG_STATE_PENDING)
        fprintf(stderr, "manta: gang %s is waiting for %u whole %s "
                "slice(s): %s\n", f->gang_id, g->tpu_slices, g->tpu_pod_type,
                g->error);
    if (f->verbose && (int)g->state != f->state)
        fprintf(stderr, "manta: gang %s %s%s%s\n", f->gang_id,
                mt_cli_gang_state_name(g->state),
                g->n_slice_names ? " on " : "",
                g->n_slice_names ? g->slice_names[0] : "");
    free(f->error);
    f->error = *g->error ? mt_xstrdup(g->error) : NULL;
}

static void on_gang(void *arg, const struct mt_rpc_status *st,
                    const ProtobufCMessage *resp)
{
    struct follow *f = arg;
    const Manta__GetGangReply *r = (const Manta__GetGangReply *)resp;
    const Manta__GangInfo *g = r ? r->gang : NULL;

    f->poll_busy = false;
    if (st->code || !g) {
        snprintf(f->poll_err, sizeof(f->poll_err), "%s%s%s",
                 mt_rpc_status_name(st->code), *st->message ? ": " : "",
                 st->message);
        if (++f->poll_fails >= 25)
            f->ended = true; /* 5 s without an answer: give up */
        return;
    }
    f->poll_fails = 0;
    say_change(f, g);
    for (size_t i = 0; i < g->n_members; i++)
        watch_member(f, g->members[i]);
    f->state = g->state;
    f->attempt = g->attempt;
    f->exit_code = g->exit_code;
    if (gang_final(g->state))
        f->ended = true;
}

static void on_poll(uv_timer_t *t)
{
    struct follow *f = t->data;
    Manta__GetGangRequest req = MANTA__GET_GANG_REQUEST__INIT;

    if (f->poll_busy || f->ended)
        return;
    req.gang_id = (char *)f->gang_id;
    if (mt_rpc_unary(f->c->ch, &mt_head_get_gang, &req.base, GANG_TIMEOUT_MS,
                     0, on_gang, f) == 0)
        f->poll_busy = true;
}

static void on_cancel_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    struct follow *f = arg;

    (void)resp;
    if (st->code)
        fprintf(stderr, "manta: could not cancel gang %s: %s %s\n",
                f->gang_id, mt_rpc_status_name(st->code), st->message);
}

static void on_sigint(uv_signal_t *h, int signum)
{
    struct follow *f = h->data;
    Manta__CancelGangRequest req = MANTA__CANCEL_GANG_REQUEST__INIT;

    (void)signum;
    if (++f->sigints > 1) {
        fprintf(stderr, "manta: leaving; gang %s may still be running\n",
                f->gang_id);
        _exit(EXIT_CANCELLED);
    }
    if (f->cancel_sent)
        return;
    f->cancel_sent = true;
    fprintf(stderr, "manta: cancelling gang %s (Ctrl-C again to leave now)\n",
            f->gang_id);
    req.gang_id = (char *)f->gang_id;
    mt_rpc_unary(f->c->ch, &mt_head_cancel_gang, &req.base, GANG_TIMEOUT_MS,
                 0, on_cancel_done, f);
}

static bool members_done(const struct follow *f)
{
    for (size_t i = 0; i < f->nw; i++)
        if (!f->w[i]->done)
            return false;
    return true;
}

static int final_exit(const struct follow *f)
{
    switch (f->state) {
    case MANTA__GANG_STATE__GANG_STATE_FINISHED:
        if (f->verbose)
            fprintf(stderr, "manta: gang %s finished\n", f->gang_id);
        return 0;
    case MANTA__GANG_STATE__GANG_STATE_FAILED:
        fprintf(stderr, "manta submit: gang %s failed: %s\n", f->gang_id,
                f->error ? f->error : "no reason given");
        return f->exit_code > 0 && f->exit_code < 256 ? f->exit_code : 1;
    case MANTA__GANG_STATE__GANG_STATE_CANCELLED:
        fprintf(stderr, "manta submit: gang %s cancelled\n", f->gang_id);
        return EXIT_CANCELLED;
    default:
        fprintf(stderr, "manta submit: lost track of gang %s: %s\n",
                f->gang_id, f->poll_err);
        return 1;
    }
}

static int follow_gang(struct mt_cli_conn *c, const char *id, bool verbose)
{
    struct follow f;
    int rc;

    memset(&f, 0, sizeof(f));
    f.c = c;
    f.gang_id = id;
    f.verbose = verbose;
    f.state = -1;
    uv_timer_init(&c->loop, &f.timer);
    f.timer.data = &f;
    uv_signal_init(&c->loop, &f.sigint);
    f.sigint.data = &f;
    uv_signal_start(&f.sigint, on_sigint, SIGINT);
    uv_timer_start(&f.timer, on_poll, 0, POLL_MS);
    /* The gang's end first, then the last output of its members. */
    while (!f.ended || !members_done(&f))
        uv_run(&c->loop, UV_RUN_ONCE);
    rc = final_exit(&f);
    uv_close((uv_handle_t *)&f.timer, NULL);
    uv_close((uv_handle_t *)&f.sigint, NULL);
    uv_run(&c->loop, UV_RUN_NOWAIT);
    for (size_t i = 0; i < f.nw; i++)
        free(f.w[i]);
    free(f.w);
    free(f.error);
    return rc;
}

int mt_cli_gang_run(struct mt_cli_conn *c, const char *addr,
                    const void *member, const struct mt_cli_gang_opts *o)
{
    Manta__SubmitGangRequest req = MANTA__SUBMIT_GANG_REQUEST__INIT;
    Manta__SubmitGangReply *r;
    ProtobufCMessage *resp = NULL;
    char err[512] = "", *id;
    int rc;

    req.name = (char *)(o->name ? o->name : "");
    req.tpu_pod_type = (char *)o->pod_type;
    req.tpu_topology = (char *)(o->topology ? o->topology : "");
    req.tpu_slices = o->slices;
    req.launch = o->device ? MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                           : MANTA__GANG_LAUNCH__GANG_LAUNCH_HOST;
    req.member = (Manta__TaskSpec *)member;
    req.max_restarts = o->max_restarts;
    rc = mt_rpc_unary_sync(c->ch, &mt_head_submit_gang, &req.base,
                           GANG_TIMEOUT_MS, 0, &resp, err, sizeof(err));
    r = (Manta__SubmitGangReply *)resp;
    if (rc == 0 && (!r || !*r->gang_id)) {
        rc = -MT_EPROTO;
        snprintf(err, sizeof(err), "the head returned no gang id");
    }
    if (rc < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta submit: %s %s: %s\n",
                rc == -MT_EUNAVAIL || rc == -MT_ETIMEDOUT
                    ? "cannot reach the head at" : "gang refused by",
                addr, err);
        if (r)
            manta__submit_gang_reply__free_unpacked(r, NULL);
        return 1;
    }
    id = mt_xstrdup(r->gang_id);
    manta__submit_gang_reply__free_unpacked(r, NULL);
    if (o->no_wait) {
        printf("%s\n", id);
        rc = 0;
    } else {
        if (o->verbose)
            fprintf(stderr, "manta: submitted gang %s\n", id);
        rc = follow_gang(c, id, o->verbose);
    }
    free(id);
    return rc;
}

/* ---- manta list gangs / manta gang get|cancel ---------------------------- */

static void text_gang_row(struct mt_strbuf *sb, const Manta__GangInfo *g)
{
    mt_strbuf_addf(sb, "%-16s  %-16s  %-9s  %-10s  %-6s  %-7u  %-8u  %s\n",
                   g->gang_id, *g->name ? g->name : "-",
                   mt_cli_gang_state_name(g->state), g->tpu_pod_type,
                   g->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                       ? "device" : "host",
                   (unsigned)g->n_members, g->attempt,
                   g->n_slice_names ? g->slice_names[0] : "-");
}

int mt_cli_list_gangs(const char *addr, long limit, bool json)
{
    Manta__ListGangsRequest req = MANTA__LIST_GANGS_REQUEST__INIT;
    Manta__ListGangsReply *r;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char err[512];

    req.limit = (uint32_t)limit;
    if (mt_cli_call(addr, &mt_head_list_gangs, &req.base, GANG_TIMEOUT_MS,
                    (ProtobufCMessage **)&r, err, sizeof(err)) < 0) {
        fprintf(stderr, "manta list: %s\n", err);
        return 1;
    }
    if (json) {
        mt_list_json_gangs(&sb, r);
    } else {
        mt_strbuf_addf(&sb, "Total: %llu\n\n%-16s  %-16s  %-9s  %-10s  %-6s  "
                       "%-7s  %-8s  %s\n", (unsigned long long)r->total,
                       "GANG_ID", "NAME", "STATE", "TPU", "LAUNCH",
                       "MEMBERS", "RESTARTS", "SLICE");
        for (size_t i = 0; i < r->n_gangs; i++)
            text_gang_row(&sb, r->gangs[i]);
    }
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    manta__list_gangs_reply__free_unpacked(r, NULL);
    return 0;
}

static void gang_usage(FILE *f)
{
    fprintf(f,
            "usage: manta gang get|cancel GANG_ID\n"
            "                  [--address HOST:PORT | --temp-dir DIR]\n"
            "                  [--format text|json]\n"
            "\n"
            "Show a gang (state, slices, members of the current attempt) or\n"
            "cancel it: every member is stopped and its slices freed. Gangs\n"
            "are started by `manta submit --tpu TYPE -- PROGRAM`; list them\n"
            "with `manta list gangs`.\n");
}

static int gang_usage_error(const char *what)
{
    fprintf(stderr, "manta gang: %s\n", what);
    gang_usage(stderr);
    return MT_EXIT_USAGE;
}

static void text_gang(struct mt_strbuf *sb, const Manta__GangInfo *g)
{
    mt_strbuf_addf(sb, "gang %s  state %s  %u x %s  launch %s  attempt %u\n",
                   g->gang_id, mt_cli_gang_state_name(g->state),
                   g->tpu_slices, g->tpu_pod_type,
                   g->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                       ? "device" : "host", g->attempt + 1);
    for (size_t i = 0; i < g->n_slice_names; i++)
        mt_strbuf_addf(sb, "slice %zu: %s\n", i, g->slice_names[i]);
    if (*g->error)
        mt_strbuf_addf(sb, "error: %s\n", g->error);
    for (size_t i = 0; i < g->n_members; i++) {
        const Manta__GangMember *m = g->members[i];
        mt_strbuf_addf(sb, "  rank %-3u host %-3u local %-3u task %-16s  "
                       "%-9s  node %s\n", m->rank, m->host, m->local,
                       *m->task_id ? m->task_id : "-",
                       mt_cli_task_state_name(m->state),
                       *m->node_id ? m->node_id : "-");
    }
}

int mt_cmd_gang(int argc, char **argv)
{
    const char *addr = NULL, *dir = NULL, *format = "text", *id = NULL;
    Manta__GetGangRequest get = MANTA__GET_GANG_REQUEST__INIT;
    Manta__CancelGangRequest cancel = MANTA__CANCEL_GANG_REQUEST__INIT;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    ProtobufCMessage *r = NULL;
    char err[512], *head = NULL;
    bool is_get;
    int rc;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        gang_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? MT_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "get") && strcmp(argv[1], "cancel"))
        return gang_usage_error("expected get or cancel");
    is_get = !strcmp(argv[1], "get");
    for (int i = 2; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--address") && v)
            addr = argv[++i];
        else if (!strcmp(argv[i], "--temp-dir") && v)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--format") && v &&
                 (!strcmp(v, "text") || !strcmp(v, "json")))
            format = argv[++i];
        else if (argv[i][0] != '-' && !id)
            id = argv[i];
        else
            return gang_usage_error("bad or incomplete argument");
    }
    if (!id)
        return gang_usage_error("which gang? give its id");
    if ((rc = mt_cli_head_addr("gang", addr, dir, &head)))
        return rc;
    get.gang_id = cancel.gang_id = (char *)id;
    rc = is_get ? mt_cli_call(head, &mt_head_get_gang, &get.base,
                              GANG_TIMEOUT_MS, &r, err, sizeof(err))
                : mt_cli_call(head, &mt_head_cancel_gang, &cancel.base,
                              GANG_TIMEOUT_MS, &r, err, sizeof(err));
    free(head);
    if (rc < 0) {
        fprintf(stderr, "manta gang %s: %s\n", argv[1], err);
        return 1;
    }
    if (is_get) {
        const Manta__GangInfo *g = ((Manta__GetGangReply *)r)->gang;
        if (g && !strcmp(format, "json")) {
            mt_json_gang(&sb, g);
            mt_strbuf_adds(&sb, "\n");
        } else if (g) {
            text_gang(&sb, g);
        }
        fputs(mt_strbuf_str(&sb), stdout);
        mt_strbuf_release(&sb);
    }
    protobuf_c_message_free_unpacked(r, NULL);
    return 0;
}
