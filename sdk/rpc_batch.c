/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_batch.c -- the client watch: submissions batched into SubmitTasks
 * calls and every task followed on one WatchTasks stream, instead of one
 * SubmitTask call and one WatchTask stream per task.
 *
 * At connect the client opens WatchTasks under a random id and waits for
 * the head's first (empty) message. From then on a submit does not wait
 * for the head: the caller builds the spec, gives the task a tag (a number
 * of this client), posts both to the loop thread and returns the handle.
 * The loop thread keeps the task in a map by tag and the spec in a pending
 * list; whenever fewer than MAX_BATCHES SubmitTasks calls are in flight it
 * sends up to MAX_BATCH pending specs in one call. The reply gives each
 * task its id, or the head's reason for refusing it (the task then ends
 * FAILED). Events come on the stream in batches, each with its task's tag;
 * a task leaves the map with its final event.
 *
 * When the stream ends (head gone, connection cut, cut off as too slow)
 * the client falls back to the one-by-one path for good: tasks that have
 * an id get their own WatchTask (which starts from the head's current
 * state, so nothing is lost); tasks whose SubmitTasks is in flight get one
 * when the reply brings their id; tasks not sent yet are submitted one by
 * one with SubmitTask. A SubmitTasks call that fails leaves its tasks lost
 * (-MT_EUNAVAIL: the head may or may not have them).
 *
 * References: the map holds one reference per task; each batch in flight
 * holds one more per task it carries.
 *
 * THREAD: the loop thread, except mt__cw_connect and mt__cw_post (callers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <grpc/status.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"

#define MAX_BATCH 1024     /* specs per SubmitTasks */
#define MAX_BATCHES 2      /* SubmitTasks calls in flight */

/* ---- ending tasks ------------------------------------------------------------ */

static void free_spec(struct mt_task *t)
{
    if (t->spec)
        manta__task_spec__free_unpacked(t->spec, NULL);
    t->spec = NULL;
}

void mt__task_end(struct mt_client *c, struct mt_task *t, int lost,
                  const char *why)
{
    pthread_mutex_lock(&c->mu);
    if (!t->ended) {
        if (lost) {
            t->lost = lost;
        } else {
            t->state = MT_TASK_STATE_FAILED;
            t->ended = true;
        }
        free(t->error);
        t->error = strdup(why);
    }
    atomic_store(&t->settled, true);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
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
    mt__rpc_watch(c, t);
}

static void hand_over(struct mt_client *c, struct mt_task *t)
{
    if (mt__tagmap_take(&c->cw_tasks, t))
        watch_alone(c, t);
}

static void submit_alone(struct mt_client *c, struct mt_task *t, void *spec);

/* ---- the stream ------------------------------------------------------------ */

static void on_cw_message(void *arg, const ProtobufCMessage *msg)
{
    const Manta__TaskEvents *m = (const Manta__TaskEvents *)msg;
    struct mt_client *c = arg;
    struct mt_task *done[64];
    size_t n_done = 0;

    if (c->cw_open) {
        atomic_store(&c->cw_state, MT__CW_READY);
        mt__req_complete(c, c->cw_open, 0, NULL);
        c->cw_open = NULL;
    }
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < m->n_events; i++) {
        const Manta__TaskEvent *ev = m->events[i];
        size_t j = mt__tagmap_find(&c->cw_tasks, ev->client_tag);
        struct mt_task *t;

        if (j == SIZE_MAX)
            continue;
        t = c->cw_tasks.slots[j];
        if (!t->id[0] && *ev->task_id && strlen(ev->task_id) < sizeof(t->id)) {
            memcpy(t->id, ev->task_id, strlen(ev->task_id) + 1);
            atomic_store(&t->settled, true);
        }
        mt__apply_event_locked(t, ev);
        if (t->ended) {
            mt__tagmap_del(&c->cw_tasks, j);
            if (n_done == sizeof(done) / sizeof(done[0])) {
                pthread_mutex_unlock(&c->mu);
                for (size_t k = 0; k < n_done; k++)
                    mt__task_unref(done[k]);
                n_done = 0;
                pthread_mutex_lock(&c->mu);
            }
            done[n_done++] = t;
        }
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (size_t k = 0; k < n_done; k++)
        mt__task_unref(done[k]);
}

static void on_cw_done(void *arg, const struct mt_rpc_status *st,
                       const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;
    char why[256];

    (void)resp;
    c->n_watches--;
    c->cw_stream = NULL;
    atomic_store(&c->cw_state, MT__CW_BROKEN);
    mt__status_text(st, "the client watch ended", why, sizeof(why));
    if (c->cw_open) {
        mt__req_complete(c, c->cw_open, st->code ? mt__status_err(st)
                                                 : -MT_EPROTO, why);
        c->cw_open = NULL;
    }
    /* Tasks not sent yet go one by one; tasks with an id get their own
     * watch; the others wait in the map for their batch's reply. */
    for (size_t i = 0; i < c->n_pend && !c->closing; i++) {
        struct mt_task *t = c->pend[i];
        void *spec = t->spec;

        t->spec = NULL;
        if (mt__tagmap_take(&c->cw_tasks, t))
            submit_alone(c, t, spec);
    }
    c->n_pend = 0;
    for (size_t j = 0; j < c->cw_tasks.cap;) {
        struct mt_task *t = c->cw_tasks.slots[j];

        if (t && t->id[0] && !c->closing) {
            mt__tagmap_del(&c->cw_tasks, j); /* may shift another into j */
            watch_alone(c, t);
            continue;
        }
        j++;
    }
}

int mt__cw_start_open(struct mt_client *c, struct mt__req *r)
{
    Manta__WatchTasksRequest req = MANTA__WATCH_TASKS_REQUEST__INIT;
    uint64_t rnd[2] = {0, 0};
    int rc;

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        rnd[0] ^= (uint64_t)getpid() << 32 ^ c->serial;
    snprintf(c->cw_id, sizeof(c->cw_id), "%016llx%016llx",
             (unsigned long long)rnd[0], (unsigned long long)rnd[1]);
    req.watcher_id = c->cw_id;
    rc = mt_rpc_stream_open(c->ch, &mt_head_watch_tasks, &req.base, 0,
                            r->rpc_flags, on_cw_message, on_cw_done, c,
                            &c->cw_stream);
    if (rc < 0)
        return rc;
    c->n_watches++;
    c->cw_open = r;
    return 0;
}

int mt__cw_connect(struct mt_client *c, int timeout_ms)
{
    struct mt__req *r = mt__req_new(MT__REQ_CW_OPEN);
    int rc;

    if (!r)
        return -MT_ENOMEM;
    r->rpc_flags = MT_RPC_WAIT_FOR_READY;
    rc = mt__req_run(c, r, timeout_ms);
    if (rc == 0)
        mt__req_free(r);
    return rc;
}

/* ---- submitting ------------------------------------------------------------- */

int mt__cw_post(struct mt_client *c, void *msg, size_t output_limit,
                struct mt_task **out)
{
    struct mt__req *r = mt__req_new(MT__REQ_SUBMIT_ASYNC);
    struct mt_task *t = r ? mt__task_new(c, NULL, output_limit) : NULL;

    *out = NULL;
    if (!t) {
        free(r);
        mt__rpc_submit_free(msg);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    t->tag = atomic_fetch_add(&c->next_tag, 1) + 1;
    atomic_fetch_add(&t->refs, 1); /* the request's, then the map's */
    r->task = t;
    r->submit_msg = msg;
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        mt__req_free(r);
        mt__task_unref(t);
        return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
    }
    mt__queue_push(&c->q, &r->qn);
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    *out = t;
    return 0;
}

/* Submit t on its own (SubmitTask, then its own watch): the fallback once
 * the watch is gone. Takes the caller's ref on t and the spec (owned). */
static void submit_alone(struct mt_client *c, struct mt_task *t, void *spec)
{
    struct mt__req *r = mt__req_new(MT__REQ_SUBMIT);
    Manta__SubmitTaskRequest *m = malloc(sizeof(*m));

    if (!r || !m) {
        free(r);
        free(m);
        manta__task_spec__free_unpacked(spec, NULL);
        mt__task_end(c, t, -MT_ENOMEM, "out of memory");
        mt__task_unref(t);
        return;
    }
    manta__submit_task_request__init(m);
    m->spec = spec;
    r->submit_msg = m;
    r->task = t;           /* on_submit_done fills in its id */
    r->abandoned = true;   /* nobody waits: completing frees it */
    r->timeout_ms = c->rpc_timeout_ms;
    r->rpc_flags = MT_RPC_WAIT_FOR_READY;
    mt__rpc_start(c, r);
}

void mt__cw_take(struct mt_client *c, struct mt__req *r)
{
    Manta__SubmitTaskRequest *m = r->submit_msg;
    struct mt_task *t = r->task;

    if (c->closing) {
        mt__task_end(c, t, -MT_ECLOSED, "the client was disconnected");
        mt__req_free(r); /* drops its ref on t */
        return;
    }
    if (atomic_load(&c->cw_state) != MT__CW_READY) {
        r->kind = MT__REQ_SUBMIT; /* the watch is gone: one by one */
        r->abandoned = true;
        r->timeout_ms = c->rpc_timeout_ms;
        r->rpc_flags = MT_RPC_WAIT_FOR_READY;
        mt__rpc_start(c, r);
        return;
    }
    if (c->n_pend == c->cap_pend) {
        size_t cap = c->cap_pend ? 2 * c->cap_pend : 1024;
        struct mt_task **v = realloc(c->pend, cap * sizeof(*v));

        if (v) {
            c->pend = v;
            c->cap_pend = cap;
        }
    }
    if (c->n_pend == c->cap_pend || mt__tagmap_put(&c->cw_tasks, t) < 0) {
        mt__task_end(c, t, -MT_ENOMEM, "out of memory");
        mt__req_free(r);
        return;
    }
    r->task = NULL; /* its ref is now the map's */
    t->spec = m->spec;
    m->spec = NULL;
    c->pend[c->n_pend++] = t;
    mt__req_free(r);
    if (c->n_batches == 0)
        mt__cw_pump(c); /* an idle client sends at once */
}

struct batch {
    struct mt_client *c;
    size_t n;
    struct mt_task *tasks[];
};

static void batch_reply(struct batch *b, const Manta__SubmitTasksReply *m)
{
    struct mt_client *c = b->c;
    bool fallback = atomic_load(&c->cw_state) != MT__CW_READY;

    for (size_t i = 0; i < b->n; i++) {
        struct mt_task *t = b->tasks[i];
        const char *id = i < m->n_task_ids ? m->task_ids[i] : "";
        const char *err = i < m->n_errors ? m->errors[i] : "no answer";
        char why[512];

        if (*id && strlen(id) < sizeof(t->id)) {
            pthread_mutex_lock(&c->mu);
            if (!t->id[0])
                memcpy(t->id, id, strlen(id) + 1);
            atomic_store(&t->settled, true);
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            if (fallback)
                hand_over(c, t);
            continue;
        }
        snprintf(why, sizeof(why), "the head refused the task: %s", err);
        mt__task_end(c, t, 0, why);
        if (mt__tagmap_take(&c->cw_tasks, t))
            mt__task_unref(t);
    }
}

static void on_batch_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct batch *b = arg;
    struct mt_client *c = b->c;
    char why[256];

    c->n_calls--;
    c->n_batches--;
    if (st->code == 0) {
        batch_reply(b, (const Manta__SubmitTasksReply *)resp);
    } else {
        int err = mt__status_err(st);

        mt__status_text(st, "submitting to the head failed", why,
                        sizeof(why));
        for (size_t i = 0; i < b->n; i++) {
            mt__task_end(c, b->tasks[i], err == -MT_EINVAL ? 0 : -MT_EUNAVAIL,
                     why);
            if (mt__tagmap_take(&c->cw_tasks, b->tasks[i]))
                mt__task_unref(b->tasks[i]);
        }
    }
    for (size_t i = 0; i < b->n; i++)
        mt__task_unref(b->tasks[i]);
    free(b);
    if (!c->closing)
        mt__cw_pump(c);
}

/* Send up to MAX_BATCH pending specs in one call. RET 0 or -MT_E*. */
static int send_batch(struct mt_client *c)
{
    Manta__SubmitTasksRequest req = MANTA__SUBMIT_TASKS_REQUEST__INIT;
    size_t n = c->n_pend < MAX_BATCH ? c->n_pend : MAX_BATCH;
    struct batch *b = malloc(sizeof(*b) + n * sizeof(b->tasks[0]));
    Manta__TaskSpec **specs = calloc(n, sizeof(*specs));
    uint64_t *tags = calloc(n, sizeof(*tags));
    protobuf_c_boolean *output = calloc(n, sizeof(*output));
    int rc = -MT_ENOMEM;

    if (b && specs && tags && output) {
        b->c = c;
        b->n = n;
        for (size_t i = 0; i < n; i++) {
            struct mt_task *t = c->pend[i];

            b->tasks[i] = t;
            atomic_fetch_add(&t->refs, 1);
            specs[i] = t->spec;
            tags[i] = t->tag;
            output[i] = t->output_limit > 0;
        }
        req.watcher_id = c->cw_id;
        req.specs = specs;
        req.n_specs = req.n_tags = req.n_output = n;
        req.tags = tags;
        req.output = output;
        rc = mt_rpc_unary(c->ch, &mt_head_submit_tasks, &req.base,
                          c->rpc_timeout_ms, 0, on_batch_done, b);
        if (rc < 0) {
            for (size_t i = 0; i < n; i++)
                atomic_fetch_sub(&b->tasks[i]->refs, 1); /* map keeps one */
        }
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            free_spec(c->pend[i]);
        memmove(c->pend, c->pend + n, (c->n_pend - n) * sizeof(*c->pend));
        c->n_pend -= n;
        c->n_calls++;
        c->n_batches++;
    } else {
        free(b);
    }
    free(specs);
    free(tags);
    free(output);
    return rc;
}

void mt__cw_pump(struct mt_client *c)
{
    /* Puts first: the head must know every object a task names. */
    if (c->n_pend && mt__reg_busy(c)) {
        mt__reg_send(c);
        if (mt__reg_busy(c))
            return; /* on_reg_done pumps again */
    }
    while (c->n_pend && c->n_batches < MAX_BATCHES &&
           atomic_load(&c->cw_state) == MT__CW_READY) {
        int rc = send_batch(c);

        if (rc < 0) { /* cannot send: end what waits */
            while (c->n_pend) {
                struct mt_task *t = c->pend[--c->n_pend];

                free_spec(t);
                mt__task_end(c, t, rc, "cannot send the task to the head");
                if (mt__tagmap_take(&c->cw_tasks, t))
                    mt__task_unref(t);
            }
            return;
        }
    }
}

void mt__cw_stop(struct mt_client *c)
{
    for (size_t i = 0; i < c->n_pend; i++)
        free_spec(c->pend[i]);
    c->n_pend = 0;
    for (size_t j = 0; j < c->cw_tasks.cap; j++) {
        struct mt_task *t = c->cw_tasks.slots[j];

        if (!t)
            continue;
        c->cw_tasks.slots[j] = NULL;
        mt__task_end(c, t, -MT_ECLOSED, "the client was disconnected");
        mt__task_unref(t);
    }
    mt__tagmap_release(&c->cw_tasks);
    free(c->pend);
    c->pend = NULL;
    c->cap_pend = 0;
    atomic_store(&c->cw_state, MT__CW_BROKEN);
    /* The stream itself is cancelled by mt_rpc_channel_destroy(); its
     * on_cw_done still runs and finds nothing left to do. */
}
