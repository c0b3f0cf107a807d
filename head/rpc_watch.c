/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_watch.c -- client watches: one WatchTasks stream per SDK client that
 * carries the events of every task the client submitted with SubmitTasks,
 * instead of one WatchTask stream per task.
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
 * lets MAX_PENDING bytes pile up is cut off; it then follows its open tasks
 * one by one with WatchTask, which starts from their current state.
 *
 * A task leaves its watch with its terminal event. A watch that ends
 * (client gone, replaced, shutdown) is forgotten; its tasks notice by the
 * number no longer being registered.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"

#define MAX_ID 64
#define MAX_SPECS 4096
#define MAX_PENDING (64u << 20)   /* encoded events waiting for the wire */
#define PENDING_KEEP (1u << 20)   /* bigger buffers are freed when sent */

struct mt_client_watch {
    uint32_t num;
    char id[MAX_ID + 1];
    struct mt_head *h;
    struct mt_rpc_call *call;
    uint8_t *buf;                 /* pending encoded entries */
    size_t len, cap;
};

/* ---- registry ---------------------------------------------------------------- */

static struct mt_client_watch *cw_by_num(struct mt_head *h, uint32_t num)
{
    for (size_t i = 0; i < h->tq->n_cws; i++)
        if (h->tq->cws[i]->num == num)
            return h->tq->cws[i];
    return NULL;
}

static struct mt_client_watch *cw_by_id(struct mt_head *h, const char *id)
{
    for (size_t i = 0; i < h->tq->n_cws; i++)
        if (strcmp(h->tq->cws[i]->id, id) == 0)
            return h->tq->cws[i];
    return NULL;
}

/* End cw's call with err, forget cw and free it. */
static void cw_fail(struct mt_client_watch *cw, int err, const char *why)
{
    struct mt_head_tasks *q = cw->h->tq;

    for (size_t i = 0; i < q->n_cws; i++)
        if (q->cws[i] == cw) {
            q->cws[i] = q->cws[--q->n_cws];
            break;
        }
    mt_rpc_call_on_cancel(cw->call, NULL, NULL);
    mt_rpc_call_on_drain(cw->call, NULL, NULL);
    mt_rpc_fail(cw->call, err, why);
    free(cw->buf);
    free(cw);
}

/* ---- sending ------------------------------------------------------------------ */

/* Send the pending entries as one TaskEvents, if the wire is free. */
static void cw_flush(struct mt_client_watch *cw)
{
    Manta__TaskEvents *msg;
    int rc;

    if (cw->len == 0 || mt_rpc_stream_backlog(cw->call) > 0)
        return;
    msg = manta__task_events__unpack(NULL, cw->len, cw->buf);
    if (!msg) {
        cw_fail(cw, -MT_EPROTO, "internal error: bad event batch");
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
        cw_fail(cw, -MT_ECANCELED, "watcher went away");
}

static void on_cw_drain(void *arg)
{
    cw_flush(arg);
}

static void on_cw_cancel(void *arg)
{
    cw_fail(arg, -MT_ECANCELED, "watcher went away");
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

    if (cw->len + n + 11 > MAX_PENDING) {
        cw_fail(cw, -MT_ENOSPC, "watcher too slow; follow tasks one by one");
        return;
    }
    mt_xgrow((void **)&cw->buf, &cw->cap, cw->len + n + 11, 1);
    cw->buf[cw->len++] = 0x0a; /* field 1, length-delimited */
    cw->len += varint(cw->buf + cw->len, n);
    cw->len += manta__task_event__pack(ev, cw->buf + cw->len);
    cw_flush(cw);
}

static void push_event(struct mt_head *h, struct mt_task *t,
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

void mt__cw_task_event(struct mt_head *h, struct mt_task *t)
{
    Manta__TaskEvent ev;

    mt__task_fill_event(t, &ev);
    push_event(h, t, &ev);
    if (mt_task_terminal(t))
        t->cw = 0;
}

void mt__cw_task_output(struct mt_head *h, struct mt_task *t, uint32_t fd,
                        const uint8_t *data, size_t len)
{
    Manta__TaskEvent ev;

    mt__task_fill_event(t, &ev);
    ev.result.len = 0;
    ev.output.data = (uint8_t *)data;
    ev.output.len = len;
    ev.fd = fd;
    push_event(h, t, &ev);
}

void mt__cw_close_all(struct mt_head *h)
{
    while (h->tq->n_cws)
        cw_fail(h->tq->cws[0], -MT_EUNAVAIL, "head is shutting down");
}

/* ---- handlers ------------------------------------------------------------------ */

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

void mt__h_watch_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__WatchTasksRequest *req = (const Manta__WatchTasksRequest *)m;
    Manta__TaskEvents hello = MANTA__TASK_EVENTS__INIT;
    struct mt_head *h = arg;
    struct mt_client_watch *cw, *old;

    if (!valid_id(req->watcher_id)) {
        mt_rpc_fail(call, -MT_EINVAL, "watcher_id: 1 to 64 printable "
                    "characters");
        return;
    }
    if ((old = cw_by_id(h, req->watcher_id)))
        cw_fail(old, -MT_EEXIST, "replaced by a newer watch with this id");
    cw = mt_xcalloc(1, sizeof(*cw));
    cw->num = ++h->tq->next_cw ? h->tq->next_cw : ++h->tq->next_cw;
    memcpy(cw->id, req->watcher_id, strlen(req->watcher_id) + 1);
    cw->h = h;
    cw->call = call;
    mt_xgrow((void **)&h->tq->cws, &h->tq->cap_cws, h->tq->n_cws + 1,
             sizeof(*h->tq->cws));
    h->tq->cws[h->tq->n_cws++] = cw;
    mt_rpc_call_on_cancel(call, on_cw_cancel, cw);
    mt_rpc_call_on_drain(call, on_cw_drain, cw);
    if (mt_rpc_stream_send(call, &hello.base) < 0)
        cw_fail(cw, -MT_ECANCELED, "watcher went away");
}

/* Check the request's shape. RET NULL or why not. */
static const char *check_batch(const Manta__SubmitTasksRequest *req)
{
    if (req->n_specs == 0 || req->n_specs > MAX_SPECS)
        return "specs: 1 to 4096 per call";
    if (req->n_tags != req->n_specs || req->n_output != req->n_specs)
        return "tags and output must have one entry per spec";
    return NULL;
}

void mt__h_submit_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__SubmitTasksRequest *req = (const Manta__SubmitTasksRequest *)m;
    Manta__SubmitTasksReply reply = MANTA__SUBMIT_TASKS_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_client_watch *cw = cw_by_id(h, req->watcher_id);
    const char *why = check_batch(req);
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
        int err;
        struct mt_task *t = mt__task_submit(h, req->specs[i], &why, &err);

        ids[i] = mt_xstrdup(t ? t->id : "");
        errors[i] = mt_xstrdup(t ? "" : why);
        if (!t)
            continue;
        t->cw = num;
        t->cw_tag = req->tags[i];
        t->cw_output = req->output[i];
        mt__cw_task_event(h, t);
    }
    reply.task_ids = ids;
    reply.n_task_ids = req->n_specs;
    reply.errors = errors;
    reply.n_errors = req->n_specs;
    mt_rpc_reply(call, &reply.base);
    for (size_t i = 0; i < req->n_specs; i++) {
        free(ids[i]);
        free(errors[i]);
    }
    free(ids);
    free(errors);
}
