/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_watch.c -- following tasks: WatchTask (one stream per task, with
 * its current state and buffered output first) and client watches: one
 * WatchTasks stream per SDK client that carries the events of every task
 * the client submitted with SubmitTasks, instead of one stream per task.
 * Both are fed by a task listener (tasks.h).
 *
 * A client opens WatchTasks with an id of its choosing and waits for the
 * first (empty) message, which says the stream is registered; then it
 * submits tasks in batches with SubmitTasks naming that id and a tag per
 * task. Every state change of those tasks (and their output, when asked)
 * becomes one TaskEvent carrying the task's id and the client's tag.
 *
 * Batching: events are encoded into a pending buffer as repeated TaskEvents
 * entries (field 1, length-delimited). When the stream has nothing on the
 * wire the buffer goes out at once as one TaskEvents message; otherwise it
 * grows until the stream drains. So a quiet stream has the latency of a
 * per-task watch, and a busy one sends few large messages. A client that
 * lets MAX_PENDING bytes pile up is cut off.
 *
 * A watch outlives its stream: when the stream ends (the client went
 * away, was cut off, or the head restarted and restored the watch from
 * storage, mt_head_watch_restore) the watch waits AWAY_KEEP_MS for its
 * client to open WatchTasks with the same id, and then sends every task
 * it follows its current state (ended ones their final event again), so
 * nothing that happened while the client was away is lost. Clients must
 * take a repeated event as a no-op. A task's watch stays its own after
 * the final event (persist.h stores it). Shutdown forgets every watch.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/rpc_checks.h"
#include "head/persist.h"
#include "head/rpc_watch.h"
#include "head/rpc_services.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/services.h"

#define MAX_ID 64
#define MAX_PENDING (64u << 20)   /* encoded events waiting for the wire */
#define PENDING_KEEP (1u << 20)   /* bigger buffers are freed when sent */
#define WATCH_MAX_BACKLOG 4096    /* WatchTask messages queued at most */
#define AWAY_KEEP_MS (10 * 60 * 1000) /* a client watch waits this long for
                                         its client to come back */

/* A WatchTask stream following one task. */
struct mt_task_watcher {
    struct mt_head *h;
    struct mt_rpc_call *call;
    uint64_t num;
    bool output;
    struct mt_task_watcher *next;
};

/* The client watches of a head. */
struct mt_rpc_watch {
    struct mt_client_watch **cws;
    size_t n_cws, cap_cws;
    uint32_t next_cw;
};

struct mt_client_watch {
    uint32_t num;
    char id[MAX_ID + 1];
    struct mt_head *h;
    struct mt_rpc_call *call;     /* NULL while its client is away */
    int64_t away_ms;              /* ... since then (monotonic) */
    uint8_t *buf;                 /* pending encoded entries */
    size_t len, cap;
};

/* ---- registry ---------------------------------------------------------------- */

static struct mt_client_watch *cw_by_num(struct mt_head *h, uint32_t num)
{
    for (size_t i = 0; i < h->watch->n_cws; i++)
        if (h->watch->cws[i]->num == num)
            return h->watch->cws[i];
    return NULL;
}

static struct mt_client_watch *cw_by_id(struct mt_head *h, const char *id)
{
    for (size_t i = 0; i < h->watch->n_cws; i++)
        if (strcmp(h->watch->cws[i]->id, id) == 0)
            return h->watch->cws[i];
    return NULL;
}

/* End cw's call, if it has one, with err; drop what was pending. */
static void cw_end_call(struct mt_client_watch *cw, int err, const char *why)
{
    if (cw->call) {
        mt_rpc_call_on_cancel(cw->call, NULL, NULL);
        mt_rpc_call_on_drain(cw->call, NULL, NULL);
        mt_rpc_fail(cw->call, err, why);
        cw->call = NULL;
    }
    cw->away_ms = mt_now_mono_ms();
    free(cw->buf);
    cw->buf = NULL;
    cw->len = cw->cap = 0;
}

/* End cw's call with err, forget cw and free it. */
static void cw_fail(struct mt_client_watch *cw, int err, const char *why)
{
    struct mt_rpc_watch *q = cw->h->watch;

    for (size_t i = 0; i < q->n_cws; i++)
        if (q->cws[i] == cw) {
            q->cws[i] = q->cws[--q->n_cws];
            break;
        }
    cw_end_call(cw, err, why);
    free(cw);
}

/* Forget the watches whose clients have been away for long. */
static void cw_prune(struct mt_head *h)
{
    struct mt_rpc_watch *q = h->watch;
    int64_t now = mt_now_mono_ms();

    for (size_t i = q->n_cws; i-- > 0;)
        if (!q->cws[i]->call && now - q->cws[i]->away_ms > AWAY_KEEP_MS)
            cw_fail(q->cws[i], -MT_ECANCELED, "");
}

/* A new client watch named id, with no call yet. */
static struct mt_client_watch *cw_add(struct mt_head *h, const char *id)
{
    struct mt_rpc_watch *q = h->watch;
    struct mt_client_watch *cw;

    cw_prune(h);
    cw = mt_xcalloc(1, sizeof(*cw));
    cw->away_ms = mt_now_mono_ms();

    cw->num = ++q->next_cw ? q->next_cw : ++q->next_cw;
    snprintf(cw->id, sizeof(cw->id), "%s", id);
    cw->h = h;
    mt_xgrow((void **)&q->cws, &q->cap_cws, q->n_cws + 1, sizeof(*q->cws));
    q->cws[q->n_cws++] = cw;
    return cw;
}

/* ---- sending ------------------------------------------------------------------ */

/* Send the pending entries as one TaskEvents, if the wire is free. */
static void cw_flush(struct mt_client_watch *cw)
{
    Manta__TaskEvents *msg;
    int rc;

    if (cw->len == 0 || !cw->call || mt_rpc_stream_backlog(cw->call) > 0)
        return;
    msg = manta__task_events__unpack(NULL, cw->len, cw->buf);
    if (!msg) {
        cw_end_call(cw, -MT_EPROTO, "internal error: bad event batch");
        return;
    }
    rc = mt_rpc_stream_send(cw->call, &msg->base);
    manta__task_events__free_unpacked(msg, NULL);
    cw->len = 0;
    if (cw->cap > PENDING_KEEP) {
        free(cw->buf);
        cw->buf = NULL;
        cw->cap = 0;
    }
    if (rc < 0)
        cw_end_call(cw, -MT_ECANCELED, "watcher went away");
}

static void on_cw_drain(void *arg)
{
    cw_flush(arg);
}

static void on_cw_cancel(void *arg)
{
    cw_end_call(arg, -MT_ECANCELED, "watcher went away");
}

static size_t varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;

    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Append ev as one entry of TaskEvents.events, then try to send. */
static void cw_push(struct mt_client_watch *cw, const Manta__TaskEvent *ev)
{
    size_t n = manta__task_event__get_packed_size(ev);

    if (!cw->call)
        return; /* its client is away: states are sent again on its return */

    if (cw->len + n + 11 > MAX_PENDING) {
        cw_end_call(cw, -MT_ENOSPC, "watcher too slow; open the watch "
                    "again for the current states");
        return;
    }
    mt_xgrow((void **)&cw->buf, &cw->cap, cw->len + n + 11, 1);
    cw->buf[cw->len++] = 0x0a; /* field 1, length-delimited */
    cw->len += varint(cw->buf + cw->len, n);
    cw->len += manta__task_event__pack(ev, cw->buf + cw->len);
    cw_flush(cw);
}

/* Fill ev with t's state; pointers borrowed from t. */
static void fill_event(const struct mt_head_task *t, Manta__TaskEvent *ev)
{
    manta__task_event__init(ev);
    ev->state = (Manta__TaskState)t->state;
    ev->exit_code = t->exit_code;
    ev->error = t->error ? t->error : (char *)"";
    ev->node_id = t->node_id ? t->node_id : (char *)"";
    ev->attempt = t->attempt;
    ev->actor_died = t->actor_died;
    if (t->state == MT_TASK_FINISHED && t->result) {
        ev->result.data = t->result;
        ev->result.len = t->result_len;
    }
    ev->result_in_store = t->result_in_store;
    ev->result_size = t->result_size;
}

/* An output event of t: its state without the result, and the bytes. */
static void fill_output(const struct mt_head_task *t, uint32_t fd,
                        const uint8_t *data, size_t len, Manta__TaskEvent *ev)
{
    fill_event(t, ev);
    ev->result.len = 0;
    ev->output.data = (uint8_t *)data;
    ev->output.len = len;
    ev->fd = fd;
}

static void push_event(struct mt_head *h, struct mt_head_task *t,
                       Manta__TaskEvent *ev)
{
    struct mt_client_watch *cw = cw_by_num(h, t->cw);

    if (!cw) {
        t->cw = 0;
        return;
    }
    ev->task_id = t->id;
    ev->client_tag = t->cw_tag;
    cw_push(cw, ev);
}

static void cw_task_event(struct mt_head *h, struct mt_head_task *t)
{
    Manta__TaskEvent ev;
    struct mt_node *n;

    fill_event(t, &ev);
    if (t->def.kind == MT_TASK_KIND_LEASE && t->state == MT_TASK_RUNNING &&
        t->node_id &&
        (n = mt_node_table_find(mt_head_nodes_table(h->nodes), t->node_id)))
        ev.worker_address = n->address; /* where its driver pushes */
    push_event(h, t, &ev);
}

/* ---- WatchTask streams ------------------------------------------------------ */

static void watcher_unlink(struct mt_head_task *t, struct mt_task_watcher *w)
{
    struct mt_task_watcher **pp = &t->watchers;

    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    free(w);
}

static void on_watcher_cancel(void *arg)
{
    struct mt_task_watcher *w = arg;
    struct mt_head_task *t = mt_task_table_find(
        mt_head_tasks_table(w->h->tasks), w->num);

    mt_rpc_fail(w->call, -MT_ECANCELED, "watcher went away");
    if (t)
        watcher_unlink(t, w);
    else
        free(w);
}

/* Send ev; drop a watcher that cannot keep up. RET false if dropped. */
static bool watcher_send(struct mt_head_task *t, struct mt_task_watcher *w,
                         const Manta__TaskEvent *ev)
{
    if (mt_rpc_stream_backlog(w->call) > WATCH_MAX_BACKLOG ||
        mt_rpc_stream_send(w->call, &ev->base) < 0) {
        mt_rpc_fail(w->call, -MT_ENOSPC, "watcher too slow; output lost");
        watcher_unlink(t, w);
        return false;
    }
    return true;
}

/* t changed: tell its watchers (ending their streams when it ended) and
 * its client watch. */
static void task_changed(void *arg, struct mt_head_task *t)
{
    struct mt_head *h = arg;
    struct mt_task_watcher *w, *next;
    Manta__TaskEvent ev;

    fill_event(t, &ev);
    for (w = t->watchers; w; w = next) {
        next = w->next;
        if (!watcher_send(t, w, &ev))
            continue;
        if (mt_head_task_terminal(t)) {
            mt_rpc_stream_finish(w->call);
            watcher_unlink(t, w);
        }
    }
    if (t->cw)
        cw_task_event(h, t);
}

static void task_output(void *arg, struct mt_head_task *t, uint32_t fd,
                        const uint8_t *data, size_t len)
{
    struct mt_head *h = arg;
    struct mt_task_watcher *w, *next;
    Manta__TaskEvent ev;

    fill_output(t, fd, data, len, &ev);
    for (w = t->watchers; w; w = next) {
        next = w->next;
        if (w->output)
            watcher_send(t, w, &ev);
    }
    if (t->cw && t->cw_output) {
        fill_output(t, fd, data, len, &ev);
        push_event(h, t, &ev);
    }
}

static const struct mt_task_listener listener = {
    .changed = task_changed,
    .output = task_output,
};

/* The current state, then the buffered output; a finished task's final
 * state comes last so its output always precedes it. */
static void send_backlog(struct mt_rpc_call *call, const struct mt_head_task *t,
                         bool output)
{
    Manta__TaskEvent ev;
    char note[96];

    fill_event(t, &ev);
    if (!mt_head_task_terminal(t))
        mt_rpc_stream_send(call, &ev.base);
    if (!output)
        return;
    if (t->out_dropped) {
        snprintf(note, sizeof(note),
                 "[manta: %llu earlier bytes of output dropped]\n",
                 (unsigned long long)t->out_dropped);
        fill_output(t, 2, (const uint8_t *)note, strlen(note), &ev);
        mt_rpc_stream_send(call, &ev.base);
    }
    for (struct mt_task_output *o = t->out_head; o; o = o->next) {
        fill_output(t, o->fd, o->data, o->len, &ev);
        mt_rpc_stream_send(call, &ev.base);
    }
}

static void h_watch_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__WatchTaskRequest *req = (const Manta__WatchTaskRequest *)m;
    struct mt_head *h = arg;
    struct mt_head_task *t = mt_task_table_find_id(
        mt_head_tasks_table(h->tasks), req->task_id);
    struct mt_task_watcher *w;

    if (!t) {
        mt_rpc_fail(call, -MT_ENOENT, "no such task");
        return;
    }
    w = mt_xcalloc(1, sizeof(*w));
    w->h = h;
    w->call = call;
    w->num = t->num;
    w->output = req->output;
    w->next = t->watchers;
    t->watchers = w;
    send_backlog(call, t, req->output);
    mt_rpc_call_on_cancel(call, on_watcher_cancel, w);
    if (mt_head_task_terminal(t))
        task_changed(h, t); /* sends the final state and ends it */
}

/* ---- start and stop ------------------------------------------------------------ */

static void start(struct mt_head *h)
{
    h->watch = mt_xcalloc(1, sizeof(*h->watch));
    mt_head_tasks_listen(h->tasks, &listener, h);
}

static bool end_watchers(void *arg, struct mt_head_task *t)
{
    while (t->watchers) {
        struct mt_task_watcher *w = t->watchers;
        mt_rpc_fail(w->call, -MT_EUNAVAIL, "head is shutting down");
        watcher_unlink(t, w);
    }
    return true;
}

static void stop(struct mt_head *h)
{
    if (!h->watch)
        return;
    mt_task_table_visit_newest(mt_head_tasks_table(h->tasks), end_watchers,
                               NULL);
    while (h->watch->n_cws)
        cw_fail(h->watch->cws[0], -MT_EUNAVAIL, "head is shutting down");
    free(h->watch->cws);
    free(h->watch);
    h->watch = NULL;
}

/* ---- WatchTasks, SubmitTasks --------------------------------------------------- */

static bool valid_id(const char *id)
{
    size_t n = strlen(id);

    if (n == 0 || n > MAX_ID)
        return false;
    for (size_t i = 0; i < n; i++)
        if (id[i] < 0x21 || id[i] > 0x7e)
            return false;
    return true;
}

/* A task the client watch arg follows: its current state, again. */
static bool resend(void *arg, struct mt_head_task *t)
{
    struct mt_client_watch *cw = arg;

    if (t->cw == cw->num && cw->call)
        cw_task_event(cw->h, t);
    return true;
}

static void h_watch_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                          void *arg)
{
    const Manta__WatchTasksRequest *req = (const Manta__WatchTasksRequest *)m;
    Manta__TaskEvents hello = MANTA__TASK_EVENTS__INIT;
    struct mt_head *h = arg;
    struct mt_rpc_watch *q = h->watch;
    struct mt_client_watch *cw, *old;

    if (!q) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "head is shutting down");
        return;
    }
    if (!valid_id(req->watcher_id)) {
        mt_rpc_fail(call, -MT_EINVAL, "watcher_id: 1 to 64 printable "
                    "characters");
        return;
    }
    /* The same id again (its stream broke, or the head restarted): the
     * new stream takes over the tasks the old one followed, each of which
     * is sent its current state (a final event again for ended ones). */
    if ((old = cw_by_id(h, req->watcher_id)))
        cw_end_call(old, -MT_EEXIST, "replaced by a newer watch with this id");
    cw = old ? old : cw_add(h, req->watcher_id);
    cw->call = call;
    mt_rpc_call_on_cancel(call, on_cw_cancel, cw);
    mt_rpc_call_on_drain(call, on_cw_drain, cw);
    if (mt_rpc_stream_send(call, &hello.base) < 0) {
        cw_end_call(cw, -MT_ECANCELED, "watcher went away");
        return;
    }
    if (old)
        mt_task_table_visit(mt_head_tasks_table(h->tasks), resend, cw);
}

const char *mt_head_watch_name(struct mt_head *h, uint32_t num)
{
    struct mt_client_watch *cw = h->watch && num ? cw_by_num(h, num) : NULL;

    return cw ? cw->id : NULL;
}

uint32_t mt_head_watch_restore(struct mt_head *h, const char *id)
{
    struct mt_client_watch *cw;

    if (!h->watch || !valid_id(id))
        return 0;
    cw = cw_by_id(h, id);
    return (cw ? cw : cw_add(h, id))->num;
}

/* Submit one spec of a batch. RET the task, or NULL with why set. */
static struct mt_head_task *submit_one(struct mt_head *h,
                                       const Manta__TaskSpec *s,
                                       const char **why)
{
    struct mt_task_def d;
    int err;

    mt_task_def_init(&d);
    if (!s) {
        *why = "missing spec";
        return NULL;
    }
    if (mt_task_def_from_pb(s, &d, why) < 0)
        return NULL;
    if (*s->task_id) /* named by its driver: may be a retry */
        return mt_head_tasks_submit_as(h->tasks, s->task_id, &d, why, &err);
    return mt_head_tasks_submit(h->tasks, &d, why, &err);
}

static void h_submit_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                           void *arg)
{
    const Manta__SubmitTasksRequest *req = (const Manta__SubmitTasksRequest *)m;
    Manta__SubmitTasksReply reply = MANTA__SUBMIT_TASKS_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_client_watch *cw = h->watch ? cw_by_id(h, req->watcher_id)
                                          : NULL;
    const char *why = mt_head_batch_check(req);
    char **ids, **errors;
    uint32_t num;

    if (why || !cw) {
        mt_rpc_fail(call, why ? -MT_EINVAL : -MT_ESTATE,
                    why ? why : "no such watcher: open WatchTasks first");
        return;
    }
    num = cw->num; /* cw may go away below (a slow client is cut off) */
    ids = mt_xcalloc(req->n_specs, sizeof(*ids));
    errors = mt_xcalloc(req->n_specs, sizeof(*errors));
    for (size_t i = 0; i < req->n_specs; i++) {
        struct mt_head_task *t = submit_one(h, req->specs[i], &why);

        ids[i] = mt_xstrdup(t ? t->id : "");
        errors[i] = mt_xstrdup(t ? "" : why ? why : "out of memory");
        if (!t)
            continue;
        t->cw = num;
        t->cw_tag = req->tags[i];
        t->cw_output = req->output[i];
        cw_task_event(h, t);
    }
    reply.task_ids = ids;
    reply.n_task_ids = req->n_specs;
    reply.errors = errors;
    reply.n_errors = req->n_specs;
    mt_head_persist_reply(h->persist, call, &reply.base);
    for (size_t i = 0; i < req->n_specs; i++) {
        free(ids[i]);
        free(errors[i]);
    }
    free(ids);
    free(errors);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_watch_task, h_watch_task},
    {&mt_head_watch_tasks, h_watch_tasks},
    {&mt_head_submit_tasks, h_submit_tasks},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_watch = {
    .handlers = handlers,
    .start = start,
    .stop = stop,
};
