/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_task.c -- tasks one by one, in protobuf: SubmitTask followed by one
 * WatchTask stream per task (state changes and output until it ends), and
 * CancelTask. With rpc_batch.c, the only files that see the task rpcs'
 * types: a spec is a view (proto/convert.h) on the task's plain C def for
 * the call that sends it, and events become struct mt__task_event before
 * task.c applies them.
 *
 * At most MT__MAX_WATCHES streams are open at once; further tasks wait in
 * a FIFO for a slot (the head keeps a finished task's state and output, so
 * nothing is lost by watching late). A watch broken because the head went
 * away is reopened until the reconnect deadline (retry.h); a head that
 * answers NOT_FOUND then has restarted without its state, and the task
 * fails with that (retry_watch, watch_lost). Watches of tasks by id
 * (mt_watch_*) are reopened the same way.
 *
 * A SubmitTask names its task with an id of ours (mt__task_id_new), so
 * one whose answer was lost is sent again safely (submit_retry).
 *
 * THREAD: mt__task_submit_one and mt__task_cancel_id run on the caller's
 * thread, the rest on the loop thread; task fields are written under the
 * client's mutex.
 */
#include "sdk/rpc_task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grpc/status.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/retry.h"
#include "sdk/rpc_reply.h"
#include "sdk/task_opts.h"
#include "sdk/task_state.h"
#include "sdk/watch_queue.h"

/* ---- events -------------------------------------------------------------- */

void mt__task_event_decode(const void *pb, struct mt__task_event *ev)
{
    const Manta__TaskEvent *m = pb;

    memset(ev, 0, sizeof(*ev));
    ev->state = (int)m->state;
    ev->output = m->output.data;
    ev->output_len = m->output.len;
    ev->fd = m->fd;
    ev->exit_code = m->exit_code;
    ev->error = m->error;
    ev->node_id = m->node_id;
    ev->attempt = m->attempt;
    ev->result = m->result.data;
    ev->result_len = m->result.len;
    ev->actor_died = m->actor_died;
    ev->result_in_store = m->result_in_store;
    ev->result_size = m->result_size;
    ev->task_id = m->task_id;
    ev->tag = m->client_tag;
    ev->worker_address = m->worker_address ? m->worker_address : "";
}

/* ---- SubmitTask ---------------------------------------------------------- */

struct submit_req {
    struct mt__req r;
    struct mt_task_def *def;   /* owned */
    size_t output_limit;
    bool follow;               /* waited: follow the new task */
    struct mt_task *task;      /* posted: the handle (one ref); waited: the
                                  new task, one ref for the caller */
    char sub_id[MT_NUM_ID_LEN + 1]; /* the id asked for; "" for actors */
    unsigned attempts;         /* failed so far (retry.h) */
    bool started_away;         /* this attempt began with the head away */
};

bool mt__task_names_itself(const struct mt_task_def *d)
{
    return d->kind != MT_TASK_KIND_ACTOR_CREATE &&
           d->kind != MT_TASK_KIND_ACTOR_METHOD;
}

static void submit_release(struct mt__req *r)
{
    struct submit_req *s = (struct submit_req *)r;

    mt__task_def_free(s->def);
    mt__task_unref(s->task);
}

/* The reply for a posted task: give it its id and a watch, or end it. */
static void posted_done(struct mt_client *c, struct submit_req *s,
                        const struct mt_rpc_status *st,
                        const Manta__SubmitTaskReply *m, const char *msg)
{
    struct mt_task *t = s->task;

    if (st->code || !*m->task_id || strlen(m->task_id) >= sizeof(t->id)) {
        mt__task_end(c, t, st->code == GRPC_STATUS_INVALID_ARGUMENT
                               ? 0 : -MT_EUNAVAIL,
                     st->code ? msg : "the head returned no task id");
        mt__req_complete(c, &s->r, -MT_EPROTO, NULL); /* frees s, its ref */
        return;
    }
    pthread_mutex_lock(&c->mu);
    memcpy(t->id, m->task_id, strlen(m->task_id) + 1);
    atomic_store(&t->settled, true);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    s->task = NULL;
    mt__task_watch(c, t); /* takes the request's ref */
    mt__req_complete(c, &s->r, 0, NULL);
}

/* Why a posted task failed, as its error says. */
static void submit_failure(const struct mt_rpc_status *st, char *msg,
                           size_t len)
{
    char why[200];

    mt__rpc_text(st, why, sizeof(why));
    snprintf(msg, len, "%s: %s", st->code == GRPC_STATUS_UNAVAILABLE ||
                                         st->code ==
                                             GRPC_STATUS_DEADLINE_EXCEEDED
                                     ? "cannot reach the head"
                                     : "the head refused the task",
             why);
}

static int submit_start(struct mt_client *c, struct mt__req *r);

/* The retry timer of a submit: its next attempt, or its end. */
static void submit_again(struct mt_client *c, void *arg, bool closing)
{
    struct submit_req *s = arg;
    int rc = closing ? -MT_ECLOSED : submit_start(c, &s->r);
    const char *why = closing ? "the client was disconnected"
                              : "cannot send the task to the head";

    if (rc == 0)
        return;
    if (s->task)
        mt__task_end(c, s->task, rc, why);
    mt__req_complete(c, &s->r, rc, why);
}

/*
 * A failed attempt: try again later (RET true) when retry.c says so. A
 * task that names itself is safe to send again (the head answers a known
 * id with that task); an actor's only when it cannot have arrived. On
 * giving up at the deadline, msg holds the clear message.
 */
static bool submit_retry(struct mt_client *c, struct submit_req *s,
                         const struct mt_rpc_status *st, char *msg,
                         size_t len)
{
    int delay = mt__retry_after(c, st, s->sub_id[0] ? MT__REPEAT_SAFE
                                                    : MT__REPEAT_UNSENT,
                                ++s->attempts, s->started_away, msg, len);

    return delay >= 0 && mt__retry_later(c, delay, submit_again, s) == 0;
}

static void on_submit_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__SubmitTaskReply *m = (const Manta__SubmitTaskReply *)resp;
    struct submit_req *s = arg;
    struct mt_client *c = s->r.client;
    char msg[256] = "";

    c->n_calls--;
    if (st->code) {
        if (s->task)
            submit_failure(st, msg, sizeof(msg));
        else /* the caller says what failed; this says why */
            mt__rpc_text(st, msg, sizeof(msg));
        if (submit_retry(c, s, st, msg, sizeof(msg)))
            return;
    } else {
        mt__head_back(c);
    }
    if (s->task) {
        posted_done(c, s, st, m, msg);
        return;
    }
    if (st->code) {
        mt__req_complete(c, &s->r, mt__head_away(c) ? -MT_EUNAVAIL
                                                    : mt__rpc_err(st),
                         msg);
        return;
    }
    if (!*m->task_id || strlen(m->task_id) >= sizeof(s->task->id)) {
        mt__req_complete(c, &s->r, -MT_EPROTO, "the head returned no task "
                         "id");
        return;
    }
    s->task = mt__task_new(c, m->task_id, s->output_limit);
    if (!s->task) {
        mt__req_complete(c, &s->r, -MT_ENOMEM, "out of memory (the task "
                         "was submitted but cannot be followed)");
        return;
    }
    if (s->follow) {
        atomic_fetch_add(&s->task->refs, 1); /* the watch's */
        mt__task_watch(c, s->task);
    } else {
        s->task->unfollowed = true;
    }
    mt__req_complete(c, &s->r, 0, NULL);
}

static int submit_start(struct mt_client *c, struct mt__req *r)
{
    struct submit_req *s = (struct submit_req *)r;
    Manta__SubmitTaskRequest req = MANTA__SUBMIT_TASK_REQUEST__INIT;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__TaskSpec spec;
    int rc;

    req.spec = &spec;
    rc = mt_pb_task_spec_view(&a, s->def, &spec);
    if (s->sub_id[0])
        spec.task_id = s->sub_id;
    s->started_away = mt__head_away(c);
    if (rc == 0)
        rc = mt_rpc_unary(c->ch, &mt_head_submit_task, &req.base,
                          r->timeout_ms, mt__attempt_flags(c, r->rpc_flags),
                          on_submit_done, s);
    mt_pb_arena_release(&a);
    if (rc == 0)
        c->n_calls++;
    return rc;
}

/* A posted submit the client will not start: end its task as closed. */
static void submit_drop(struct mt_client *c, struct mt__req *r)
{
    struct submit_req *s = (struct submit_req *)r;

    if (s->task)
        mt__task_end(c, s->task, -MT_ECLOSED, "the client was disconnected");
    mt__req_complete(c, r, -MT_ECLOSED, "the client is disconnecting");
}

static const struct mt__req_ops submit_ops = {
    .start = submit_start,
    .drop = submit_drop,
    .release = submit_release,
};

int mt__task_submit_one(struct mt_client *c, struct mt_task_def *d,
                        size_t output_limit, bool follow,
                        struct mt_task **out)
{
    struct submit_req *s = mt__req_new(c, &submit_ops, sizeof(*s));
    int rc;

    *out = NULL;
    if (!s) {
        mt__task_def_free(d);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    s->def = d;
    s->output_limit = output_limit;
    s->follow = follow;
    if (mt__task_names_itself(d))
        mt__task_id_new(s->sub_id);
    rc = mt__req_run(c, &s->r, mt__head_wait_ms(c, c->rpc_timeout_ms));
    if (rc < 0)
        return rc;
    *out = s->task;
    s->task = NULL;
    mt__req_free(&s->r);
    return 0;
}

void mt__task_submit_posted(struct mt_client *c, struct mt_task *t,
                            struct mt_task_def *d)
{
    struct submit_req *s = mt__req_new(c, &submit_ops, sizeof(*s));

    if (!s) {
        mt__task_def_free(d);
        mt__task_end(c, t, -MT_ENOMEM, "out of memory");
        mt__task_unref(t);
        return;
    }
    if (!t->sub_id[0] && mt__task_names_itself(d))
        mt__task_id_new(t->sub_id);
    memcpy(s->sub_id, t->sub_id, sizeof(s->sub_id)); /* the batch's, if any */
    s->def = d;
    s->task = t;            /* posted_done fills in its id */
    s->r.abandoned = true;  /* nobody waits: completing frees it */
    if (submit_start(c, &s->r) < 0) {
        mt__task_end(c, t, -MT_EUNAVAIL, "cannot send the task to the head");
        mt__req_complete(c, &s->r, -MT_EUNAVAIL, NULL); /* frees s, its ref */
    }
}

/* ---- CancelTask ---------------------------------------------------------- */

int mt__task_cancel_id(struct mt_client *c, const char *id, bool force,
                       int *state)
{
    Manta__CancelTaskRequest req = MANTA__CANCEL_TASK_REQUEST__INIT;
    Manta__CancelTaskReply *r;
    int rc;

    req.task_id = (char *)id;
    req.force = force;
    rc = mt__head_call(c, &mt_head_cancel_task, &req, c->rpc_timeout_ms, 0,
                       (void **)&r);
    if (rc < 0)
        return rc;
    if (state)
        *state = (int)r->state;
    mt__msg_free(r);
    return 0;
}

/* A CancelTask nobody waits for. */
static void on_cancel_posted(void *arg, const struct mt_rpc_status *st,
                             const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    (void)st;
    (void)resp;
    c->n_calls--;
}

void mt__task_cancel_post(struct mt_client *c, const char *id)
{
    Manta__CancelTaskRequest req = MANTA__CANCEL_TASK_REQUEST__INIT;

    req.task_id = (char *)id;
    if (!c->closing && mt_rpc_unary(c->ch, &mt_head_cancel_task, &req.base,
                                    c->rpc_timeout_ms, 0, on_cancel_posted,
                                    c) == 0)
        c->n_calls++;
}

/* ---- WatchTask ----------------------------------------------------------- */

static void on_task_event(void *arg, const ProtobufCMessage *msg)
{
    struct mt_task *t = arg;
    struct mt_client *c = t->client;
    struct mt__task_event ev;

    t->rewatches = 0; /* the stream works */
    mt__head_back(c);
    mt__task_event_decode(msg, &ev);
    pthread_mutex_lock(&c->mu);
    mt__task_apply_locked(t, &ev);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (t->listen)
        t->listen(c, t, &ev);
}

static void watch_next(struct mt_client *c);
static void on_retry(uv_timer_t *h);

/* The watch ended; without a final state the client has lost the task. */
static void end_watch(struct mt_client *c, struct mt_task *t, int err,
                      const char *why)
{
    mt__task_end(c, t, err < 0 ? err : -MT_EPROTO, why);
    mt__task_unref(t);
}

/* Append t to a FIFO of tasks linked by next_wait. */
static void fifo_push(struct mt_task **head, struct mt_task **tail,
                      struct mt_task *t)
{
    t->next_wait = NULL;
    if (*tail)
        (*tail)->next_wait = t;
    else
        *head = t;
    *tail = t;
}

/*
 * A watch broken because the head went away (UNAVAILABLE) is reopened as
 * retry.c says (backing off, until the reconnect deadline: *why then says
 * so); one dropped by a live head as too slow (RESOURCE_EXHAUSTED), or
 * broken in a client that does not wait for its head (one-shot), after
 * MT__REWATCH_MS, up to MT__REWATCHES times in a row: a blip. The
 * reopened watch starts with the head's current state and its whole
 * output tail.
 * RET true when t was queued for a retry (the watch ref stays).
 */
static bool retry_watch(struct mt_client *c, struct mt_task *t,
                        const struct mt_rpc_status *st, char *why,
                        size_t len)
{
    struct mt__tasks *ts = c->tasks;
    int delay = -1;

    if (c->closing || t->ended)
        return false;
    if (st->code == GRPC_STATUS_RESOURCE_EXHAUSTED ||
        (st->code == GRPC_STATUS_UNAVAILABLE && c->reconnect_ms <= 0))
        delay = t->rewatches < MT__REWATCHES ? MT__REWATCH_MS : -1;
    else
        delay = mt__retry_after(c, st, MT__REPEAT_SAFE, t->rewatches + 1,
                                false, why, len);
    if (delay < 0)
        return false;
    t->rewatches++;
    fifo_push(&ts->retry_head, &ts->retry_tail, t);
    if (!ts->timer_ready) {
        uv_timer_init(&c->loop, &ts->retry_timer);
        ts->retry_timer.data = c;
        ts->timer_ready = true;
    }
    if (!uv_is_active((uv_handle_t *)&ts->retry_timer))
        uv_timer_start(&ts->retry_timer, on_retry, (uint64_t)delay, 0);
    return true;
}

/* Why a watch ended without the task's final state: *err and why. */
static void watch_lost(struct mt_client *c, struct mt_task *t,
                       const struct mt_rpc_status *st, int *err, char *why,
                       size_t len)
{
    char text[200];

    if (c->closing) {
        *err = -MT_ECLOSED;
        snprintf(why, len, "the client was disconnected");
    } else if (st->code == GRPC_STATUS_NOT_FOUND && t->rewatches) {
        *err = -MT_ENOENT; /* asked again after the head came back */
        snprintf(why, len, "the head restarted without its state: task %s "
                 "is unknown", t->id);
    } else if (why[0]) {
        *err = -MT_EUNAVAIL; /* the reconnect deadline passed */
    } else if (st->code) {
        *err = mt__rpc_err(st);
        if (*err == -MT_ETIMEDOUT || *err == -MT_ECANCELED)
            *err = -MT_EUNAVAIL;
        mt__rpc_text(st, text, sizeof(text));
        snprintf(why, len, "lost track of the task: %s", text);
    } else {
        *err = -MT_EUNAVAIL;
        snprintf(why, len, "lost track of the task: the head closed the "
                 "watch before the task ended");
    }
}

static void on_watch_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt_task *t = arg;
    struct mt_client *c = t->client;
    char why[256] = "";
    int err;

    t->stream = NULL;
    c->n_streams--;
    c->tasks->n_watches--;
    if (retry_watch(c, t, st, why, sizeof(why))) {
        watch_next(c);
        return;
    }
    watch_lost(c, t, st, &err, why, sizeof(why));
    end_watch(c, t, err, why);
    watch_next(c);
}

static void open_watch(struct mt_client *c, struct mt_task *t)
{
    Manta__WatchTaskRequest req = MANTA__WATCH_TASK_REQUEST__INIT;
    int rc;

    if (t->rewatches) { /* the head sends its whole output tail again */
        pthread_mutex_lock(&c->mu);
        t->out.len = t->err.len = 0;
        t->out.dropped = t->err.dropped = 0;
        pthread_mutex_unlock(&c->mu);
    }
    req.task_id = t->id;
    req.output = t->output_limit > 0;
    rc = mt_rpc_stream_open(c->ch, &mt_head_watch_task, &req.base, 0, 0,
                            on_task_event, on_watch_done, t, &t->stream);
    if (rc < 0) {
        end_watch(c, t, rc, "cannot watch the task");
        return;
    }
    c->n_streams++;
    c->tasks->n_watches++;
}

static void watch_next(struct mt_client *c)
{
    struct mt__tasks *ts = c->tasks;

    while (!c->closing && ts->wait_head && ts->n_watches < MT__MAX_WATCHES) {
        struct mt_task *t = ts->wait_head;

        ts->wait_head = t->next_wait;
        if (!ts->wait_head)
            ts->wait_tail = NULL;
        t->next_wait = NULL;
        open_watch(c, t);
    }
}

void mt__task_watch(struct mt_client *c, struct mt_task *t)
{
    struct mt__tasks *ts = c->tasks;

    if (c->closing) { /* a submit answered while shutting down */
        end_watch(c, t, -MT_ECLOSED, "the client was disconnected");
        return;
    }
    if (ts->n_watches < MT__MAX_WATCHES && !ts->wait_head) {
        open_watch(c, t);
        return;
    }
    fifo_push(&ts->wait_head, &ts->wait_tail, t);
}

/* The retry timer: reopen every watch waiting for it. */
static void on_retry(uv_timer_t *h)
{
    struct mt_client *c = h->data;
    struct mt_task *t = c->tasks->retry_head, *next;

    c->tasks->retry_head = c->tasks->retry_tail = NULL;
    for (; t; t = next) {
        next = t->next_wait;
        t->next_wait = NULL;
        mt__task_watch(c, t);
    }
}

/* End every task of a FIFO as closed. */
static void end_fifo(struct mt_client *c, struct mt_task **head,
                     struct mt_task **tail)
{
    struct mt_task *t, *next;

    for (t = *head; t; t = next) {
        next = t->next_wait;
        t->next_wait = NULL;
        end_watch(c, t, -MT_ECLOSED, "the client was disconnected");
    }
    *head = *tail = NULL;
}

void mt__tasks_stop_watches(struct mt_client *c)
{
    end_fifo(c, &c->tasks->retry_head, &c->tasks->retry_tail);
    end_fifo(c, &c->tasks->wait_head, &c->tasks->wait_tail);
    /* Open streams are cancelled by mt_rpc_channel_destroy(); each still
     * runs on_watch_done, which drops its task reference. */
}

/* ---- watches: one WatchTask per task followed by id ---------------------- */

/* One task followed for a watch. Loop thread only. */
struct mt__wstream {
    struct mt__wstream *next, *prev;
    struct mt_watch *w;          /* one ref */
    struct mt_rpc_stream *stream;
    bool ended;                  /* its final state came */
    unsigned attempts;           /* reopens since the head went away */
    int rc;                      /* < 0: a reopen could not start */
    bool stopped;                /* the user stopped the watch */
    char id[64];
};

static void on_wstream_event(void *arg, const ProtobufCMessage *msg)
{
    struct mt__wstream *s = arg;
    struct mt__task_event ev;

    mt__head_back(s->w->client);
    s->attempts = 0;
    mt__task_event_decode(msg, &ev);
    if (s->ended && ev.state && !ev.output_len)
        return; /* the end again (after a reopen): told once */
    s->ended |= mt__task_final(ev.state);
    mt__watch_event(s->w, s->id, &ev);
}

static void wstream_unlink(struct mt__wstream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        s->w->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
}

static int wstream_start(struct mt_client *c, struct mt__wstream *s);
static void on_wstream_done(void *arg, const struct mt_rpc_status *st,
                            const ProtobufCMessage *resp);

/* The reopen timer of a task's stream. */
static void wstream_again(struct mt_client *c, void *arg, bool closing)
{
    struct mt__wstream *s = arg;
    const struct mt_rpc_status st = {GRPC_STATUS_CANCELLED, ""};
    int rc = closing     ? -MT_ECLOSED
             : s->stopped ? -MT_ECANCELED
                          : wstream_start(c, s);

    if (rc < 0) {
        c->n_streams++; /* on_wstream_done counts it out again */
        s->rc = rc;
        on_wstream_done(s, &st, NULL);
    }
}

/* The stream broke because the head went away: reopen it later (RET
 * true) as retry.c says; the head sends the task's state again. */
static bool wstream_retry(struct mt_client *c, struct mt__wstream *s,
                          const struct mt_rpc_status *st, char *why,
                          size_t len)
{
    int delay;

    if (s->ended || c->closing || s->rc < 0)
        return false;
    delay = mt__retry_after(c, st, MT__REPEAT_SAFE, ++s->attempts, false,
                            why, len);
    return delay >= 0 && mt__retry_later(c, delay, wstream_again, s) == 0;
}

static void on_wstream_done(void *arg, const struct mt_rpc_status *st,
                            const ProtobufCMessage *resp)
{
    struct mt__wstream *s = arg;
    struct mt_client *c = s->w->client;
    char why[256] = "";
    int err;

    (void)resp;
    c->n_streams--;
    s->stream = NULL;
    if (wstream_retry(c, s, st, why, sizeof(why)))
        return;
    err = s->ended ? 0 : c->closing ? -MT_ECLOSED : s->rc < 0 ? s->rc
          : why[0] ? -MT_EUNAVAIL : st->code ? mt__rpc_err(st) : -MT_EUNAVAIL;
    if (s->ended)
        why[0] = '\0';
    else if (c->closing || s->rc == -MT_ECLOSED)
        snprintf(why, sizeof(why), "the client was disconnected");
    else if (st->code == GRPC_STATUS_NOT_FOUND && s->attempts)
        snprintf(why, sizeof(why), "the head restarted without its state: "
                 "task %s is unknown", s->id);
    else if (!why[0] && st->code)
        mt__rpc_text(st, why, sizeof(why));
    else if (!why[0])
        snprintf(why, sizeof(why), "the head closed the watch before the "
                 "task ended");
    mt__watch_end(s->w, s->id, err, why);
    wstream_unlink(s);
    mt__watch_unref(s->w);
    free(s);
}

/* Open (or reopen) s's stream. RET 0 or -MT_E*. */
static int wstream_start(struct mt_client *c, struct mt__wstream *s)
{
    Manta__WatchTaskRequest req = MANTA__WATCH_TASK_REQUEST__INIT;
    int rc;

    req.task_id = s->id;
    req.output = (s->w->flags & MT_WATCH_OUTPUT) != 0;
    rc = mt_rpc_stream_open(c->ch, &mt_head_watch_task, &req.base, 0,
                            mt__attempt_flags(c, c->ready_flags),
                            on_wstream_event, on_wstream_done, s, &s->stream);
    if (rc == 0)
        c->n_streams++;
    return rc;
}

/* Open the stream of one task id (copied) for w; a failure ends it. */
static void wstream_open(struct mt_client *c, struct mt_watch *w,
                         const char *id)
{
    struct mt__wstream *s = calloc(1, sizeof(*s));
    int rc = s ? 0 : -MT_ENOMEM;

    if (s) {
        snprintf(s->id, sizeof(s->id), "%s", id);
        s->w = w;
        rc = wstream_start(c, s);
    }
    if (rc < 0) {
        free(s);
        mt__watch_end(w, id, rc, "cannot watch the task");
        return;
    }
    atomic_fetch_add(&w->refs, 1);
    s->next = w->streams;
    if (w->streams)
        w->streams->prev = s;
    w->streams = s;
}

/* A request about a watch: follow ids, or (n 0) stop its streams. */
struct watch_req {
    struct mt__req r;
    struct mt_watch *w;          /* one ref */
    size_t n;
    char ids[][64];
};

static int follow_start(struct mt_client *c, struct mt__req *r)
{
    struct watch_req *q = (struct watch_req *)r;

    for (size_t i = 0; i < q->n; i++)
        wstream_open(c, q->w, q->ids[i]);
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

static int stop_start(struct mt_client *c, struct mt__req *r)
{
    struct watch_req *q = (struct watch_req *)r;

    for (struct mt__wstream *s = q->w->streams; s; s = s->next) {
        s->stopped = true; /* one waiting to reopen ends instead */
        if (s->stream)
            mt_rpc_stream_cancel(s->stream);
    }
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

/* Closing: the streams not opened end as closed. */
static void follow_drop(struct mt_client *c, struct mt__req *r)
{
    struct watch_req *q = (struct watch_req *)r;

    for (size_t i = 0; i < q->n; i++)
        mt__watch_end(q->w, q->ids[i], -MT_ECLOSED, "the client was "
                      "disconnected");
    mt__req_complete(c, r, -MT_ECLOSED, NULL);
}

static void watch_req_release(struct mt__req *r)
{
    mt__watch_unref(((struct watch_req *)r)->w);
}

static const struct mt__req_ops follow_ops = {
    .start = follow_start,
    .drop = follow_drop,
    .release = watch_req_release,
};

static const struct mt__req_ops stop_ops = {
    .start = stop_start,
    .release = watch_req_release,
};

static int post_watch_req(struct mt_watch *w, const struct mt__req_ops *ops,
                          const char *const *ids, size_t n)
{
    struct watch_req *q = mt__req_new(w->client, ops,
                                      sizeof(*q) + n * sizeof(q->ids[0]));

    if (!q)
        return mt__set_error(w->client, -MT_ENOMEM, "out of memory");
    atomic_fetch_add(&w->refs, 1);
    q->w = w;
    q->n = n;
    for (size_t i = 0; i < n; i++)
        snprintf(q->ids[i], sizeof(q->ids[i]), "%s", ids[i]);
    return mt__req_post(w->client, &q->r);
}

int mt__watch_follow(struct mt_watch *w, const char *const *ids, size_t n)
{
    return post_watch_req(w, &follow_ops, ids, n);
}

int mt__watch_stop(struct mt_watch *w)
{
    int rc = 0;

    /* After mt_client_disconnect the streams are gone already. */
    if (mt__client_lock_live(w->client)) {
        rc = post_watch_req(w, &stop_ops, NULL, 0);
        mt__client_unlock_live();
    }
    return rc;
}

/* ---- ListTasks ----------------------------------------------------------- */

/* x as a task view in k. RET 0, -MT_ENOMEM. */
static int fill_task(struct mt__keep *k, const Manta__TaskInfo *x,
                     mt_task_info *t)
{
    static const Manta__TaskSpec empty = MANTA__TASK_SPEC__INIT;
    const Manta__TaskSpec *s = x->spec ? x->spec : &empty;

    t->task_id = s->task_id;
    t->name = s->name;
    t->state = (mt_task_state)x->state;
    t->node_id = x->node_id;
    t->attempt = x->attempt;
    t->exit_code = x->exit_code;
    t->error = x->error;
    t->function = s->function;
    t->argv = (const char *const *)s->argv;
    t->argc = s->n_argv;
    t->priority = s->priority;
    t->max_retries = s->max_retries;
    t->gang_id = x->gang_id;
    t->gang_rank = x->gang_rank;
    t->submit_time_ms = x->submit_time_ms;
    t->start_time_ms = x->start_time_ms;
    t->end_time_ms = x->end_time_ms;
    t->n_resources = s->n_resources;
    t->resources = mt__res_view(k, s->resources, s->n_resources);
    if (t->n_resources && !t->resources)
        return -MT_ENOMEM;
    return mt__labels_view(k, s->env, s->n_env, &t->env, &t->n_env);
}

static void render(struct mt_strbuf *sb, const void *reply)
{
    mt_list_json_tasks(sb, reply);
}

int mt__task_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__ListTasksRequest req = MANTA__LIST_TASKS_REQUEST__INIT;
    const Manta__ListTasksReply *r;
    mt_task_info *v;
    int rc;

    req.limit = f->limit;
    req.state = (Manta__TaskState)state;
    req.node_id = (char *)(f->node_id ? f->node_id : "");
    req.name = (char *)(f->name ? f->name : "");
    req.show_env = f->show_env != 0;
    req.offset = f->offset;
    req.owner_id = (char *)(f->owner_id ? f->owner_id : "");
    rc = mt__list_call(c, &mt_head_list_tasks, &req, render, json, keep);
    if (rc < 0 || json)
        return rc;
    r = keep->reply;
    /* An older head's total may lag the page: never below what is shown. */
    l->total = r->total > r->n_tasks ? r->total : r->n_tasks;
    l->n = r->n_tasks;
    v = l->n ? mt__keep_alloc(keep, l->n * sizeof(*v)) : NULL;
    rc = l->n && !v ? -MT_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        rc = fill_task(keep, r->tasks[i], &v[i]);
    l->tasks = v;
    return rc < 0 ? mt__set_error(c, rc, "out of memory") : 0;
}
