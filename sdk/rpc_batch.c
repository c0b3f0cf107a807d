/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_batch.c -- the client watch: submissions batched into SubmitTasks
 * calls and every task followed on one WatchTasks stream, instead of one
 * SubmitTask call and one WatchTask stream per task.
 *
 * At connect the client opens WatchTasks under a random id and waits for
 * the head's first (empty) message. From then on a submit does not wait
 * for the head: the caller builds the def, gives the task a tag (a number
 * of this client), posts both to the loop thread and returns the handle.
 * The loop thread keeps the task in a map by tag and the def in a pending
 * list; whenever fewer than MAX_BATCHES SubmitTasks calls are in flight it
 * sends up to MAX_BATCH pending defs in one call, as views on them
 * (proto/convert.h). The reply gives each task its id, or the head's
 * reason for refusing it (the task then ends FAILED). Events come on the
 * stream in batches, each with its task's tag; a task leaves the map with
 * its final event.
 *
 * Every task carries an id of ours (mt__task_id_new) in its spec, so a
 * SubmitTasks sent again is answered with the same tasks. When the head
 * goes away (the stream breaks with UNAVAILABLE) the client keeps the
 * stream's tasks and submits (state MT__CW_AWAY) and reopens the stream
 * under the same watcher id as retry.h says; a batch cut off goes back to
 * the front of the pending list. Once reopened, each task that had its id
 * is asked for by its own WatchTask (its current state, or "unknown" from
 * a head that lost it) and the pending ones are sent (reopened).
 *
 * When the stream ends otherwise (cut off as too slow, or the head away
 * past the reconnect deadline) the client falls back to the one-by-one
 * path for good: tasks that have an id get their own WatchTask (which
 * starts from the head's current state, so nothing is lost); tasks whose
 * SubmitTasks is in flight get one when the reply brings their id; tasks
 * not sent yet are submitted one by one with SubmitTask. A SubmitTasks
 * call refused by a live head ends its tasks.
 *
 * References: the map holds one reference per task; each batch in flight
 * holds one more per task it carries.
 *
 * Internal tasks (lease requests, lease.c) go the same way
 * (mt__cw_submit); their listener hears each of their events.
 *
 * THREAD: the loop thread, except mt__cw_connect and mt__cw_post (callers).
 */
#include "sdk/rpc_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <grpc/status.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/object.h"
#include "sdk/rpc_object.h"
#include "sdk/retry.h"
#include "sdk/rpc_task.h"
#include "sdk/tagmap.h"
#include "sdk/task_opts.h"
#include "sdk/task_state.h"

#define MAX_BATCH 1024     /* specs per SubmitTasks */
#define MAX_BATCHES 2      /* SubmitTasks calls in flight */

static void set_state(struct mt_client *c, int state)
{
    atomic_store(&c->tasks->cw_state, state);
    mt__objects_set_batching(c, state == MT__CW_READY);
}

/* Take t out of the map; drop the map's reference when it was there. */
static void forget(struct mt_client *c, struct mt_task *t)
{
    if (mt__tagmap_take(&c->tasks->cw_tasks, t->tag, t))
        mt__task_unref(t);
}

/*
 * Follow t (taken out of the map, with the map's ref) one by one from now
 * on. Its watch starts with the head's whole output tail, so the output
 * seen so far is dropped first.
 */
static void watch_alone(struct mt_client *c, struct mt_task *t)
{
    pthread_mutex_lock(&c->mu);
    t->out.len = t->err.len = 0;
    t->out.dropped = t->err.dropped = 0;
    pthread_mutex_unlock(&c->mu);
    mt__task_watch(c, t);
}

/* ---- the stream ---------------------------------------------------------- */

/* Apply one event to the task it names. RET the task when it ended (taken
 * out of the map, with the map's ref), else NULL; *listened the task when
 * it has a listener to tell. mu held. */
static struct mt_task *apply_locked(struct mt_client *c,
                                    const struct mt__task_event *ev,
                                    struct mt_task **listened)
{
    struct mt__tagmap *m = &c->tasks->cw_tasks;
    size_t j = mt__tagmap_find(m, ev->tag);
    struct mt_task *t;

    *listened = NULL;
    if (j == SIZE_MAX)
        return NULL;
    t = m->slots[j].item;
    if (t->listen)
        *listened = t;
    if (!t->id[0] && *ev->task_id && strlen(ev->task_id) < sizeof(t->id)) {
        memcpy(t->id, ev->task_id, strlen(ev->task_id) + 1);
        atomic_store(&t->settled, true);
    }
    mt__task_apply_locked(t, ev);
    if (!t->ended)
        return NULL;
    mt__tagmap_del(m, j);
    return t;
}

static void reopened(struct mt_client *c);
static void on_cw_done(void *arg, const struct mt_rpc_status *st,
                       const ProtobufCMessage *resp);

static void on_cw_message(void *arg, const ProtobufCMessage *msg)
{
    const Manta__TaskEvents *m = (const Manta__TaskEvents *)msg;
    struct mt_client *c = arg;
    struct mt_task *done[64], *t, *l;
    struct mt__task_event ev;
    size_t n_done = 0;

    mt__head_back(c);
    if (c->tasks->cw_open) {
        set_state(c, MT__CW_READY);
        mt__req_complete(c, c->tasks->cw_open, 0, NULL);
        c->tasks->cw_open = NULL;
    }
    if (c->tasks->cw_reopening)
        reopened(c);
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < m->n_events; i++) {
        mt__task_event_decode(m->events[i], &ev);
        t = apply_locked(c, &ev, &l);
        if (l) { /* an internal task's listener: told without mu */
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            l->listen(c, l, &ev);
            pthread_mutex_lock(&c->mu);
        }
        if (!t)
            continue;
        if (n_done == sizeof(done) / sizeof(done[0])) {
            pthread_mutex_unlock(&c->mu);
            for (size_t k = 0; k < n_done; k++)
                mt__task_unref(done[k]);
            n_done = 0;
            pthread_mutex_lock(&c->mu);
        }
        done[n_done++] = t;
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (size_t k = 0; k < n_done; k++)
        mt__task_unref(done[k]);
}

/* The watch is gone for good: tasks not sent yet go one by one; tasks
 * with an id get their own watch; the others wait in the map for their
 * batch's reply. */
static void fall_back(struct mt_client *c)
{
    struct mt__tasks *ts = c->tasks;

    for (size_t i = 0; i < ts->n_pend && !c->closing; i++) {
        struct mt_task *t = ts->pend[i];
        struct mt_task_def *d = t->def;

        t->def = NULL;
        if (mt__tagmap_take(&ts->cw_tasks, t->tag, t))
            mt__task_submit_posted(c, t, d);
        else
            mt__task_def_free(d);
    }
    ts->n_pend = 0;
    for (size_t j = 0; j < ts->cw_tasks.cap && !c->closing;) {
        struct mt_task *t = ts->cw_tasks.slots[j].item;

        if (t && t->id[0]) {
            mt__tagmap_del(&ts->cw_tasks, j); /* may shift another into j */
            watch_alone(c, t);
            continue;
        }
        j++;
    }
}

/*
 * The watch is open again under its id after the head went away. The
 * head we find may be the same, or a new one that restored the tasks, or
 * one that knows nothing: each task the old watch followed is asked for
 * by its own WatchTask, which brings its current state (a final one for a
 * task that ended meanwhile) or says it is unknown (rpc_task.c). Tasks
 * not sent yet go in the next batches, under the ids they had.
 */
static void reopened(struct mt_client *c)
{
    struct mt__tasks *ts = c->tasks;

    ts->cw_reopening = false;
    ts->cw_attempts = 0;
    set_state(c, MT__CW_READY);
    for (size_t j = 0; j < ts->cw_tasks.cap && !c->closing;) {
        struct mt_task *t = ts->cw_tasks.slots[j].item;

        if (t && t->id[0] && !t->def) {
            mt__tagmap_del(&ts->cw_tasks, j); /* may shift another into j */
            t->rewatches = 1; /* "unknown" means the head lost it */
            watch_alone(c, t);
            continue;
        }
        j++;
    }
    mt__cw_pump(c);
}

static int cw_stream_open(struct mt_client *c, unsigned flags);

/* The reopen timer: open the watch again under the same id. */
static void cw_again(struct mt_client *c, void *arg, bool closing)
{
    const struct mt_rpc_status refused = {GRPC_STATUS_UNAVAILABLE, ""};

    (void)arg;
    if (closing)
        return; /* mt__cw_stop ends what the map holds */
    c->tasks->cw_reopening = true;
    if (cw_stream_open(c, 0) < 0)
        on_cw_done(c, &refused, NULL);
}

/* The head went away: reopen the watch later (RET true), as retry.c
 * says; tasks stay in the map and submits wait meanwhile. */
static bool cw_retry(struct mt_client *c, const struct mt_rpc_status *st,
                     char *why, size_t len)
{
    struct mt__tasks *ts = c->tasks;
    int delay = mt__retry_after(c, st, MT__REPEAT_SAFE, ++ts->cw_attempts,
                                false, why, len);

    if (delay < 0 || mt__retry_later(c, delay, cw_again, NULL) < 0)
        return false;
    set_state(c, MT__CW_AWAY);
    return true;
}

static void on_cw_done(void *arg, const struct mt_rpc_status *st,
                       const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;
    char why[256], text[200];

    (void)resp;
    if (c->tasks->cw_stream) {
        c->n_streams--;
        c->tasks->cw_stream = NULL;
    }
    mt__rpc_text(st, text, sizeof(text));
    snprintf(why, sizeof(why), "the client watch ended: %s", text);
    if (c->tasks->cw_open) {
        set_state(c, MT__CW_BROKEN);
        mt__req_complete(c, c->tasks->cw_open,
                         st->code ? mt__rpc_err(st) : -MT_EPROTO, why);
        c->tasks->cw_open = NULL;
        fall_back(c);
        return;
    }
    c->tasks->cw_reopening = false;
    if (!c->closing && cw_retry(c, st, why, sizeof(why)))
        return;
    set_state(c, MT__CW_BROKEN);
    fall_back(c);
}

static int cw_stream_open(struct mt_client *c, unsigned flags)
{
    Manta__WatchTasksRequest req = MANTA__WATCH_TASKS_REQUEST__INIT;
    struct mt__tasks *ts = c->tasks;
    int rc;

    req.watcher_id = ts->cw_id;
    rc = mt_rpc_stream_open(c->ch, &mt_head_watch_tasks, &req.base, 0,
                            flags, on_cw_message, on_cw_done, c,
                            &ts->cw_stream);
    if (rc == 0)
        c->n_streams++;
    return rc;
}

static int cw_open_start(struct mt_client *c, struct mt__req *r)
{
    struct mt__tasks *ts = c->tasks;
    uint64_t rnd[2] = {0, 0};
    int rc;

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        rnd[0] ^= (uint64_t)getpid() << 32 ^ c->serial;
    snprintf(ts->cw_id, sizeof(ts->cw_id), "%016llx%016llx",
             (unsigned long long)rnd[0], (unsigned long long)rnd[1]);
    if ((rc = cw_stream_open(c, r->rpc_flags)) < 0)
        return rc;
    ts->cw_open = r;
    return 0;
}

static const struct mt__req_ops cw_open_ops = {
    .start = cw_open_start,
};

int mt__cw_connect(struct mt_client *c, int timeout_ms)
{
    struct mt__req *r = mt__req_new(c, &cw_open_ops, sizeof(*r));
    int rc;

    if (!r)
        return -MT_ENOMEM;
    rc = mt__req_run(c, r, timeout_ms);
    if (rc == 0)
        mt__req_free(r);
    return rc;
}

/* ---- submitting ---------------------------------------------------------- */

/* A submit handed to the loop: the task (one ref, then the map's) and its
 * def (owned until it joins the pending list). */
struct post_req {
    struct mt__req r;
    struct mt_task *task;
    struct mt_task_def *def;
};

static void post_release(struct mt__req *r)
{
    struct post_req *p = (struct post_req *)r;

    mt__task_unref(p->task);
    mt__task_def_free(p->def);
}

/* Make room for n pending tasks in all. RET false on ENOMEM. */
static bool pend_room_for(struct mt__tasks *ts, size_t n)
{
    size_t cap = ts->cap_pend ? ts->cap_pend : 1024;
    struct mt_task **v;

    while (cap < n)
        cap *= 2;
    if (cap <= ts->cap_pend)
        return true;
    if (!(v = realloc(ts->pend, cap * sizeof(*v))))
        return false;
    ts->pend = v;
    ts->cap_pend = cap;
    return true;
}

/* Make room for one more pending task. RET false on ENOMEM. */
static bool pend_room(struct mt__tasks *ts)
{
    return pend_room_for(ts, ts->n_pend + 1);
}

/* Queue t (its ref) with d for the next batch, or submit it one by one
 * when the watch is not up. RET 0, or -MT_ENOMEM with both left to the
 * caller. */
static int submit(struct mt_client *c, struct mt_task *t,
                  struct mt_task_def *d)
{
    struct mt__tasks *ts = c->tasks;

    if (!t->sub_id[0] && mt__task_names_itself(d))
        mt__task_id_new(t->sub_id);
    if (!mt__cw_usable(c)) { /* one by one now */
        mt__task_submit_posted(c, t, d);
        return 0;
    }
    if (!pend_room(ts) || mt__tagmap_put(&ts->cw_tasks, t->tag, t) < 0)
        return -MT_ENOMEM;
    t->def = d; /* t's ref is now the map's */
    ts->pend[ts->n_pend++] = t;
    if (ts->n_batches == 0)
        mt__cw_pump(c); /* an idle client sends at once */
    return 0;
}

static int post_start(struct mt_client *c, struct mt__req *r)
{
    struct post_req *p = (struct post_req *)r;

    if (submit(c, p->task, p->def) < 0) {
        mt__task_end(c, p->task, -MT_ENOMEM, "out of memory");
    } else {
        p->task = NULL;
        p->def = NULL;
    }
    mt__req_complete(c, r, 0, NULL); /* abandoned: frees p */
    return 0;
}

void mt__cw_submit(struct mt_client *c, struct mt_task *t,
                   struct mt_task_def *d)
{
    t->tag = atomic_fetch_add(&c->tasks->next_tag, 1) + 1;
    if (submit(c, t, d) == 0)
        return;
    mt__task_def_free(d);
    mt__task_end(c, t, -MT_ENOMEM, "out of memory");
    mt__task_unref(t);
}

static void post_drop(struct mt_client *c, struct mt__req *r)
{
    mt__task_end(c, ((struct post_req *)r)->task, -MT_ECLOSED,
                 "the client was disconnected");
    mt__req_complete(c, r, -MT_ECLOSED, NULL);
}

static const struct mt__req_ops post_ops = {
    .start = post_start,
    .drop = post_drop,
    .release = post_release,
};

int mt__cw_post(struct mt_client *c, struct mt_task_def *d,
                size_t output_limit, struct mt_task **out)
{
    struct post_req *p = mt__req_new(c, &post_ops, sizeof(*p));
    struct mt_task *t = p ? mt__task_new(c, NULL, output_limit) : NULL;

    *out = NULL;
    if (!t) {
        free(p);
        mt__task_def_free(d);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    t->tag = atomic_fetch_add(&c->tasks->next_tag, 1) + 1;
    atomic_fetch_add(&t->refs, 1); /* the request's, then the map's */
    p->task = t;
    p->def = d;
    if (mt__req_post(c, &p->r) < 0) { /* frees p and its ref */
        mt__task_unref(t);
        return -MT_ECLOSED;
    }
    *out = t;
    return 0;
}

/* ---- batches ------------------------------------------------------------- */

struct batch {
    struct mt_client *c;
    size_t n;
    struct mt_task *tasks[];
};

static void batch_reply(struct batch *b, const Manta__SubmitTasksReply *m)
{
    struct mt_client *c = b->c;
    bool fallback = atomic_load(&c->tasks->cw_state) == MT__CW_BROKEN;

    for (size_t i = 0; i < b->n; i++) {
        struct mt_task *t = b->tasks[i];
        const char *id = i < m->n_task_ids ? m->task_ids[i] : "";
        const char *err = i < m->n_errors ? m->errors[i] : "no answer";
        char why[512];

        mt__task_def_free(t->def); /* arrived: no retry needs it */
        t->def = NULL;
        if (*id && strlen(id) < sizeof(t->id)) {
            pthread_mutex_lock(&c->mu);
            if (!t->id[0])
                memcpy(t->id, id, strlen(id) + 1);
            atomic_store(&t->settled, true);
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            if (fallback && mt__tagmap_take(&c->tasks->cw_tasks, t->tag, t))
                watch_alone(c, t);
            continue;
        }
        snprintf(why, sizeof(why), "the head refused the task: %s", err);
        mt__task_end(c, t, 0, why);
        forget(c, t);
    }
}

/* Put the tasks of a batch back in front of the pending list. RET false
 * on ENOMEM (nothing moved). */
static bool requeue(struct mt_client *c, struct batch *b)
{
    struct mt__tasks *ts = c->tasks;

    if (!pend_room_for(ts, ts->n_pend + b->n))
        return false;
    memmove(ts->pend + b->n, ts->pend, ts->n_pend * sizeof(*ts->pend));
    memcpy(ts->pend, b->tasks, b->n * sizeof(*ts->pend));
    ts->n_pend += b->n;
    return true;
}

/* The pump after a retry's wait. */
static void pump_again(struct mt_client *c, void *arg, bool closing)
{
    (void)arg;
    if (!closing)
        mt__cw_pump(c);
}

/*
 * A batch failed because the head is away: its tasks, which name
 * themselves (the head answers a known id with that task), go back to
 * the front of the pending list until the watch is up again and the pump
 * sends them. RET false when retry.c says no (why then may hold the
 * clear message) or the tasks cannot be queued.
 */
static bool batch_retry(struct batch *b, const struct mt_rpc_status *st,
                        char *why, size_t len)
{
    struct mt_client *c = b->c;
    int delay = mt__retry_after(c, st, MT__REPEAT_SAFE, 1, false, why, len);

    for (size_t i = 0; i < b->n; i++)
        if (!b->tasks[i]->def || !b->tasks[i]->sub_id[0])
            return false;
    if (delay < 0 || !requeue(c, b)) /* the list's refs: the map's */
        return false;
    if (atomic_load(&c->tasks->cw_state) == MT__CW_READY)
        mt__retry_later(c, delay, pump_again, NULL); /* else the reopen */
    return true;
}

static void on_batch_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct batch *b = arg;
    struct mt_client *c = b->c;
    char why[256], text[200];

    c->n_calls--;
    c->tasks->n_batches--;
    mt__rpc_text(st, text, sizeof(text));
    snprintf(why, sizeof(why), "submitting to the head failed: %s", text);
    if (st->code == 0) {
        mt__head_back(c);
        batch_reply(b, (const Manta__SubmitTasksReply *)resp);
    } else if (!batch_retry(b, st, why, sizeof(why))) {
        int err = mt__rpc_err(st);

        for (size_t i = 0; i < b->n; i++) {
            mt__task_end(c, b->tasks[i],
                         err == -MT_EINVAL ? 0 : -MT_EUNAVAIL, why);
            forget(c, b->tasks[i]);
        }
    }
    for (size_t i = 0; i < b->n; i++)
        mt__task_unref(b->tasks[i]);
    free(b);
    if (!c->closing)
        mt__cw_pump(c);
}

/* Views on the first n pending defs, in the arena. RET 0, -MT_ENOMEM. */
static int batch_view(struct mt_client *c, struct mt_pb_arena *a, size_t n,
                      Manta__SubmitTasksRequest *req)
{
    Manta__TaskSpec **specs = mt_pb_alloc(a, n * sizeof(*specs));
    uint64_t *tags = mt_pb_alloc(a, n * sizeof(*tags));
    protobuf_c_boolean *output = mt_pb_alloc(a, n * sizeof(*output));

    if (!specs || !tags || !output)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct mt_task *t = c->tasks->pend[i];

        if (!(specs[i] = mt_pb_alloc(a, sizeof(*specs[i]))) ||
            mt_pb_task_spec_view(a, t->def, specs[i]) < 0)
            return -MT_ENOMEM;
        if (t->sub_id[0])
            specs[i]->task_id = t->sub_id;
        tags[i] = t->tag;
        output[i] = t->output_limit > 0;
    }
    req->watcher_id = c->tasks->cw_id;
    req->specs = specs;
    req->n_specs = req->n_tags = req->n_output = n;
    req->tags = tags;
    req->output = output;
    return 0;
}

/* Send up to MAX_BATCH pending defs in one call. RET 0 or -MT_E*. */
static int send_batch(struct mt_client *c)
{
    Manta__SubmitTasksRequest req = MANTA__SUBMIT_TASKS_REQUEST__INIT;
    struct mt__tasks *ts = c->tasks;
    size_t n = ts->n_pend < MAX_BATCH ? ts->n_pend : MAX_BATCH;
    struct batch *b = malloc(sizeof(*b) + n * sizeof(b->tasks[0]));
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    int rc = b ? batch_view(c, &a, n, &req) : -MT_ENOMEM;

    if (rc == 0)
        rc = mt_rpc_unary(c->ch, &mt_head_submit_tasks, &req.base,
                          c->rpc_timeout_ms, 0, on_batch_done, b);
    mt_pb_arena_release(&a);
    if (rc < 0) {
        free(b);
        return rc;
    }
    b->c = c;
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        struct mt_task *t = ts->pend[i];

        b->tasks[i] = t; /* its def stays until the reply: a retry */
        atomic_fetch_add(&t->refs, 1);
    }
    memmove(ts->pend, ts->pend + n, (ts->n_pend - n) * sizeof(*ts->pend));
    ts->n_pend -= n;
    c->n_calls++;
    ts->n_batches++;
    return 0;
}

bool mt__cw_usable(struct mt_client *c)
{
    int st = atomic_load(&c->tasks->cw_state);

    return st == MT__CW_READY || st == MT__CW_AWAY;
}

void mt__cw_pump(struct mt_client *c)
{
    struct mt__tasks *ts = c->tasks;

    if (atomic_load(&ts->cw_state) != MT__CW_READY)
        return; /* the head is away: the watch's reopen pumps */
    /* Puts first: the head must know every object a task names. */
    if (ts->n_pend && mt__reg_busy(c)) {
        mt__reg_send(c);
        if (mt__reg_busy(c))
            return; /* their reply wakes the loop, which pumps again */
    }
    while (ts->n_pend && ts->n_batches < MAX_BATCHES &&
           atomic_load(&ts->cw_state) == MT__CW_READY) {
        int rc = send_batch(c);

        if (rc < 0) { /* cannot send: end what waits */
            while (ts->n_pend) {
                struct mt_task *t = ts->pend[--ts->n_pend];

                mt__task_def_free(t->def);
                t->def = NULL;
                mt__task_end(c, t, rc, "cannot send the task to the head");
                forget(c, t);
            }
            return;
        }
    }
}

void mt__cw_stop(struct mt_client *c)
{
    struct mt__tasks *ts = c->tasks;

    for (size_t i = 0; i < ts->n_pend; i++) {
        mt__task_def_free(ts->pend[i]->def);
        ts->pend[i]->def = NULL;
    }
    ts->n_pend = 0;
    for (size_t j = 0; j < ts->cw_tasks.cap; j++) {
        struct mt_task *t = ts->cw_tasks.slots[j].item;

        if (!t)
            continue;
        ts->cw_tasks.slots[j].item = NULL;
        mt__task_end(c, t, -MT_ECLOSED, "the client was disconnected");
        mt__task_unref(t);
    }
    mt__tagmap_release(&ts->cw_tasks);
    set_state(c, MT__CW_BROKEN);
    /* The stream itself is cancelled by mt_rpc_channel_destroy(); its
     * on_cw_done still runs and finds nothing left to do. */
}
