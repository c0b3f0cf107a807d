/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor_call.c -- direct calls to an actor's worker
 * (WorkerService.CallActor), and the repair of a handle's road when the
 * incarnation it leads to goes away.
 *
 * Each call is a request posted to the loop thread, which numbers it on
 * its handle's road and puts it in the batch of the calls queued in the
 * same wake-up for the same worker, caller and incarnation; the batch
 * goes as one CallActor at the end of the wake-up (or when full), on a
 * channel kept per worker address. The reply completes each call's task
 * (actor_handle.c, mt__actor_direct_done). The deadline is far away on
 * purpose: a method may run for as long as it likes, and mt_task_wait()
 * has its own timeout.
 *
 * Repair (struct mt_actor in actor_handle.h): an answer saying the actor
 * died, or that the worker refused the call unrun (not_run: the
 * incarnation it named is gone or not ready there), breaks the road. Calls
 * made from then on wait in the handle, and refused ones join them ahead
 * of the rest, in their old order. Once no call of the old road is
 * unanswered, the actor is looked up (GetActor) until it is ALIVE again:
 * the waiting calls then go first on a new road to that incarnation,
 * numbered from 0 under a new caller id. DEAD (or unknown) fails them
 * with the reason. A call is sent twice only when its worker said it
 * never ran, so no call runs twice; calls that were running or queued on
 * the executor when it died fail, as in Ray. Lookups after the first
 * wait longer each time (RETRY_MIN_MS doubling up to RETRY_MAX_MS), on
 * one timer per client.
 *
 * THREAD: posting on the caller's thread, the rest on the loop thread. A
 * handle's road is guarded by its mutex, which is never held across a
 * call into the batches (a send that fails completes calls, which takes
 * it).
 */
#include "sdk/rpc_actor_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/rpc.h"
#include "common/sys.h"
#include "proto/services.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_actor.h"
#include "sdk/task_state.h"
#include "worker_service.pb-c.h"

#define DIRECT_DEADLINE_MS (1000 * 60 * 60 * 24 * 7)
#define BATCH_MAX_CALLS 1000
#define BATCH_MAX_BYTES (4u << 20)
#define RETRY_MIN_MS 20
#define RETRY_MAX_MS 500

/* A channel to one worker. */
struct mt__wchan {
    char *address;
    struct mt_rpc_channel *ch;
};

/* A call waiting in its handle for the next road, with one ref on its
 * task and one on the handle. A refused call's seq is its old number. */
struct mt__held {
    Manta__ActorCall *call;
    struct mt_task *task;
};

/* A handle whose next lookup is due at `due` (the loop's clock, ms);
 * one ref. */
struct mt__retry {
    struct mt_actor *a;
    uint64_t due;
};

/*
 * Calls queued during one wake-up of the loop to one worker, by one caller
 * of one actor incarnation: sent as one CallActor when the wake-up ends
 * (mt__actor_flush) or when full. Each call keeps one ref on its task
 * and one on its handle until its result is in.
 */
struct mt__abatch {
    struct mt_client *c;
    char *address;
    Manta__CallActorRequest *msg;  /* owned; calls appended */
    struct mt_task **tasks;        /* per call */
    struct mt_actor **handles;     /* per call */
    size_t n, cap;
    size_t bytes;
};

/* One call on its way to the loop thread: the call, and the task and
 * handle it completes (one ref each). */
struct call_req {
    struct mt__req r;
    Manta__ActorCall *call;
    struct mt_task *task;
    struct mt_actor *handle;
};

/* Where a road's calls go, copied out of its handle. */
struct road {
    char *address;
    uint32_t incarnation;
    char caller[17];
};

static void repair(struct mt_client *c, struct mt_actor *a);

static void call_free(Manta__ActorCall *k)
{
    if (k)
        protobuf_c_message_free_unpacked(&k->base, NULL);
}

/* ---- batches ------------------------------------------------------------- */

static struct mt_rpc_channel *wchan(struct mt_client *c, const char *addr)
{
    struct mt__actors *as = c->actors;
    struct mt__wchan *w;

    for (size_t i = 0; i < as->n_wchans; i++)
        if (strcmp(as->wchans[i].address, addr) == 0)
            return as->wchans[i].ch;
    if (as->n_wchans == as->cap_wchans) {
        size_t cap = as->cap_wchans ? as->cap_wchans * 2 : 4;
        void *v = realloc(as->wchans, cap * sizeof(*as->wchans));

        if (!v)
            return NULL;
        as->wchans = v;
        as->cap_wchans = cap;
    }
    w = &as->wchans[as->n_wchans];
    if (!(w->address = strdup(addr)))
        return NULL;
    if (mt_rpc_channel_create(c->eng, addr, 0, &w->ch) < 0) {
        free(w->address);
        return NULL;
    }
    as->n_wchans++;
    return w->ch;
}

/* Free b; calls taken out of its message (held again) are NULL there. */
static void batch_free(struct mt__abatch *b)
{
    size_t n = 0;

    for (size_t i = 0; i < b->msg->n_calls; i++)
        if (b->msg->calls[i])
            b->msg->calls[n++] = b->msg->calls[i];
    b->msg->n_calls = n;
    mt__msg_free(b->msg);
    free(b->address);
    free(b->tasks);
    free(b->handles);
    free(b);
}

/*
 * One answer for a call of a's road (its task t and the handle ref go with
 * it): complete t, or hold the call again when the worker refused it unrun
 * (*k is then taken; k NULL: the call is gone). Then repair the road if
 * this answer broke it and was its last.
 */
static void answered(struct mt_client *c, struct mt_actor *a,
                     struct mt_task *t, Manta__ActorCall **k, bool ok,
                     const uint8_t *data, size_t len, const char *error,
                     bool died, bool not_run)
{
    bool broke = !ok && (died || not_run);
    size_t at;

    atomic_fetch_add(&a->refs, 1); /* for repair() below */
    pthread_mutex_lock(&a->mu);
    if (a->inflight)
        a->inflight--;
    if (!broke)
        a->tries = 0;
    else if (a->road == MT__ROAD_DIRECT)
        a->road = MT__ROAD_REROUTE;
    if (broke && not_run && k && *k && a->road == MT__ROAD_REROUTE &&
        mt_grow((void **)&a->held, &a->cap_held, a->n_held + 1,
                sizeof(*a->held)) == 0) {
        /* Ahead of the calls made since, in the order it was made. */
        at = a->n_bounced;
        while (at > 0 && a->held[at - 1].call->seq > (*k)->seq)
            at--;
        memmove(&a->held[at + 1], &a->held[at],
                (a->n_held - at) * sizeof(*a->held));
        a->held[at].call = *k;
        a->held[at].task = t;
        a->n_held++;
        a->n_bounced++;
        *k = NULL;
        t = NULL;
    }
    pthread_mutex_unlock(&a->mu);
    if (t)
        mt__actor_direct_done(c, a, t, ok, data, len, error,
                              died || not_run);
    repair(c, a);
    mt__actor_unref(a);
}

/* End every call of b the same way (the rpc failed or never started):
 * each may have run, so none is sent again. */
static void batch_fail(struct mt__abatch *b, const char *why)
{
    for (size_t i = 0; i < b->n; i++)
        answered(b->c, b->handles[i], b->tasks[i], NULL, false, NULL, 0, why,
                 true, false);
    batch_free(b);
}

static void on_direct_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__CallActorReply *m = (const Manta__CallActorReply *)resp;
    struct mt__abatch *b = arg;
    char msg[256];

    b->c->n_calls--;
    if (st->code || m->n_results != b->n) {
        snprintf(msg, sizeof(msg), "actor died: cannot reach its worker: "
                 "%s%s%s", st->code ? mt_rpc_status_name(st->code)
                                    : "bad reply",
                 *st->message ? ": " : "", st->message);
        batch_fail(b, msg);
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        const Manta__ActorCallResult *x = m->results[i];

        answered(b->c, b->handles[i], b->tasks[i], &b->msg->calls[i], x->ok,
                 x->result.data, x->result.len, x->error, x->actor_died,
                 x->not_run);
    }
    batch_free(b);
}

/* Send b as one CallActor (or fail its calls). */
static void batch_send(struct mt__abatch *b)
{
    struct mt_client *c = b->c;
    struct mt_rpc_channel *ch = wchan(c, b->address);
    int rc = ch ? mt_rpc_unary(ch, &mt_worker_call_actor, &b->msg->base,
                               DIRECT_DEADLINE_MS, 0, on_direct_done, b)
                : -MT_ENOMEM;

    if (rc < 0) {
        batch_fail(b, "actor died: cannot start the call to its worker");
        return;
    }
    c->n_calls++;
}

void mt__actor_flush(struct mt_client *c)
{
    struct mt__actors *as = c->actors;
    size_t n = as->n_abatches;

    as->n_abatches = 0;
    for (size_t i = 0; i < n; i++)
        batch_send(as->abatches[i]);
}

/* The open batch of actor id's road r, or a new one. NULL when out of
 * memory. */
static struct mt__abatch *batch_for(struct mt_client *c, const char *id,
                                    const struct road *r)
{
    struct mt__actors *as = c->actors;
    struct mt__abatch *b;

    for (size_t i = 0; i < as->n_abatches; i++) {
        b = as->abatches[i];
        if (b->msg->incarnation == r->incarnation &&
            !strcmp(b->address, r->address) &&
            !strcmp(b->msg->caller_id, r->caller) &&
            !strcmp(b->msg->actor_id, id))
            return b;
    }
    if (mt_grow((void **)&as->abatches, &as->cap_abatches, as->n_abatches + 1,
                sizeof(*as->abatches)) < 0)
        return NULL;
    if (!(b = calloc(1, sizeof(*b))) || !(b->msg = calloc(1, sizeof(*b->msg))))
        goto out_nomem;
    manta__call_actor_request__init(b->msg);
    b->c = c;
    b->msg->incarnation = r->incarnation;
    if (!(b->address = strdup(r->address)) ||
        !(b->msg->actor_id = strdup(id)) ||
        !(b->msg->caller_id = strdup(r->caller)))
        goto out_nomem;
    as->abatches[as->n_abatches++] = b;
    return b;

out_nomem:
    if (b && b->msg)
        batch_free(b);
    else
        free(b);
    return NULL;
}

/* Append call k (its task t and handle a: one ref each) to b. RET 0/-1. */
static int batch_add(struct mt__abatch *b, Manta__ActorCall *k,
                     struct mt_task *t, struct mt_actor *a)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        void *v1 = realloc(b->msg->calls, (cap + 1) * sizeof(*b->msg->calls));
        void *v2, *v3;

        if (v1)
            b->msg->calls = v1;
        v2 = v1 ? realloc(b->tasks, cap * sizeof(*b->tasks)) : NULL;
        if (v2)
            b->tasks = v2;
        v3 = v2 ? realloc(b->handles, cap * sizeof(*b->handles)) : NULL;
        if (!v3)
            return -1;
        b->handles = v3;
        b->cap = cap;
    }
    for (size_t i = 0; i < k->n_args; i++)
        b->bytes += k->args[i].len;
    b->msg->calls[b->n] = k;
    b->msg->n_calls = b->n + 1;
    b->tasks[b->n] = t;
    b->handles[b->n] = a;
    b->n++;
    return 0;
}

/* Forget b as an open batch (it is full and goes now). */
static void batch_close(struct mt__actors *as, struct mt__abatch *b)
{
    for (size_t i = 0; i < as->n_abatches; i++)
        if (as->abatches[i] == b)
            as->abatches[i] = as->abatches[--as->n_abatches];
}

/* Queue call k of a (numbered on road r) for the end of this wake-up;
 * t's and a's refs go with it. */
static void enqueue(struct mt_client *c, const struct road *r,
                    struct mt_actor *a, Manta__ActorCall *k,
                    struct mt_task *t)
{
    struct mt__abatch *b = r->address ? batch_for(c, a->id, r) : NULL;

    if (!b || batch_add(b, k, t, a) < 0) {
        call_free(k);
        answered(c, a, t, NULL, false, NULL, 0,
                 "actor died: out of memory for the call", true, false);
        return;
    }
    if (b->n >= BATCH_MAX_CALLS || b->bytes >= BATCH_MAX_BYTES) {
        batch_close(c->actors, b);
        batch_send(b);
    }
}

/* ---- the road ------------------------------------------------------------ */

/* Copy a's road (mu held). r->address is NULL when out of memory. */
static void road_copy_locked(const struct mt_actor *a, struct road *r)
{
    r->address = strdup(a->address);
    r->incarnation = a->incarnation;
    memcpy(r->caller, a->caller, sizeof(r->caller));
}

/* Take a's held calls (mu held). */
static struct mt__held *take_held_locked(struct mt_actor *a, size_t *n)
{
    struct mt__held *v = a->held;

    *n = a->n_held;
    a->held = NULL;
    a->n_held = a->cap_held = a->n_bounced = 0;
    return v;
}

/* Give up on a's road: fail its held calls with why and send later calls
 * through the head (which answers for a dead actor at once). */
static void give_up(struct mt_client *c, struct mt_actor *a, const char *why,
                    bool died)
{
    struct mt__held *v;
    char *w = strdup(why);
    size_t n;

    pthread_mutex_lock(&a->mu);
    v = take_held_locked(a, &n);
    a->road = MT__ROAD_HEAD;
    a->resolving = false;
    if (w) {
        free(a->why);
        a->why = w;
    }
    pthread_mutex_unlock(&a->mu);
    for (size_t i = 0; i < n; i++) {
        call_free(v[i].call);
        mt__actor_direct_done(c, a, v[i].task, false, NULL, 0, why, died);
    }
    free(v);
}

/* The actor is ALIVE at d: a new road, and the held calls go first. */
static void reopen(struct mt_client *c, struct mt_actor *a,
                   const struct mt__actor_desc *d)
{
    char *addr = strdup(d->address);
    struct mt__held *v;
    struct road r;
    size_t n;

    pthread_mutex_lock(&a->mu);
    a->resolving = false;
    if (!addr) { /* try again later */
        pthread_mutex_unlock(&a->mu);
        repair(c, a);
        return;
    }
    free(a->address);
    a->address = addr;
    a->incarnation = d->incarnation;
    mt_random_hex(a->caller, 8);
    a->next_seq = 0;
    a->road = MT__ROAD_DIRECT;
    v = take_held_locked(a, &n);
    for (size_t i = 0; i < n; i++)
        v[i].call->seq = a->next_seq++;
    a->inflight += n;
    road_copy_locked(a, &r);
    pthread_mutex_unlock(&a->mu);
    for (size_t i = 0; i < n; i++)
        enqueue(c, &r, a, v[i].call, v[i].task);
    free(v);
    free(r.address);
    mt__actor_flush(c); /* no wake-up end is coming to send them */
}

static void look_up(struct mt_client *c, struct mt_actor *a, uint64_t delay);

static void on_looked_up(struct mt_client *c, void *arg, int rc,
                         const struct mt__actor_desc *d)
{
    struct mt_actor *a = arg;
    char why[512];

    if (c->closing) {
        give_up(c, a, "the client was disconnected", false);
    } else if (rc == 0 && d->info.state == MT_ACTOR_STATE_ALIVE &&
               d->address && *d->address) {
        reopen(c, a, d);
    } else if (rc == -MT_ENOENT ||
               (rc == 0 && d->info.state == MT_ACTOR_STATE_DEAD)) {
        snprintf(why, sizeof(why), "actor died: %s", rc < 0
                 ? "the head does not know it any more"
                 : *d->info.death_reason ? d->info.death_reason : "DEAD");
        give_up(c, a, why, true);
    } else { /* being created or restarted, or the head is out of reach */
        pthread_mutex_lock(&a->mu);
        a->resolving = false;
        pthread_mutex_unlock(&a->mu);
        repair(c, a);
    }
    mt__actor_unref(a); /* the lookup's */
}

/* Arm the retry timer for the earliest lookup due. */
static void arm(struct mt_client *c);

static void on_retry(uv_timer_t *tm)
{
    struct mt_client *c = tm->data;
    struct mt__actors *as = c->actors;
    uint64_t now = uv_now(&c->loop);

    for (size_t i = 0; i < as->n_retries;) {
        struct mt__retry x = as->retries[i];

        if (x.due > now) {
            i++;
            continue;
        }
        as->retries[i] = as->retries[--as->n_retries];
        look_up(c, x.a, 0);
        mt__actor_unref(x.a); /* the retry's; look_up took its own */
    }
    arm(c);
}

static void arm(struct mt_client *c)
{
    struct mt__actors *as = c->actors;
    uint64_t now = uv_now(&c->loop), due = UINT64_MAX;

    for (size_t i = 0; i < as->n_retries; i++)
        if (as->retries[i].due < due)
            due = as->retries[i].due;
    if (!as->timer_ready) {
        if (due == UINT64_MAX)
            return;
        uv_timer_init(&c->loop, &as->retry_timer);
        as->retry_timer.data = c;
        as->timer_ready = true;
    }
    if (due == UINT64_MAX)
        uv_timer_stop(&as->retry_timer);
    else
        uv_timer_start(&as->retry_timer, on_retry,
                       due > now ? due - now : 0, 0);
}

/* Look a's actor up now, or after delay ms (a lookup ref is taken). */
static void look_up(struct mt_client *c, struct mt_actor *a, uint64_t delay)
{
    struct mt__actors *as = c->actors;

    if (c->closing) {
        give_up(c, a, "the client was disconnected", false);
        return;
    }
    atomic_fetch_add(&a->refs, 1);
    if (!delay && mt__actor_lookup_start(c, a->id, on_looked_up, a) == 0)
        return;
    if (mt_grow((void **)&as->retries, &as->cap_retries, as->n_retries + 1,
                sizeof(*as->retries)) < 0) {
        give_up(c, a, "actor died: out of memory to look it up again", true);
        mt__actor_unref(a);
        return;
    }
    as->retries[as->n_retries].a = a;
    as->retries[as->n_retries++].due =
        uv_now(&c->loop) + (delay ? delay : RETRY_MAX_MS);
    arm(c);
}

/* Look the actor up if a's road is broken and none of its calls is
 * unanswered any more. */
static void repair(struct mt_client *c, struct mt_actor *a)
{
    uint64_t delay = 0;
    bool go;

    pthread_mutex_lock(&a->mu);
    go = a->road == MT__ROAD_REROUTE && a->inflight == 0 && !a->resolving;
    if (go) {
        a->resolving = true;
        if (a->tries)
            delay = a->tries > 5 ? RETRY_MAX_MS
                                 : (uint64_t)RETRY_MIN_MS << (a->tries - 1);
        if (delay > RETRY_MAX_MS)
            delay = RETRY_MAX_MS;
        a->tries++;
    }
    pthread_mutex_unlock(&a->mu);
    if (go)
        look_up(c, a, delay);
}

/* Number call k on a's road and queue it, or hold it while the road is
 * repaired, or fail it when the actor turned out DEAD. */
static void route(struct mt_client *c, struct mt_actor *a,
                  Manta__ActorCall *k, struct mt_task *t)
{
    struct road r = {NULL, 0, ""};
    enum mt__road road;
    char why[256];

    pthread_mutex_lock(&a->mu);
    road = a->road;
    if (road == MT__ROAD_DIRECT) {
        k->seq = a->next_seq++;
        a->inflight++;
        road_copy_locked(a, &r);
    } else if (road == MT__ROAD_REROUTE &&
               mt_grow((void **)&a->held, &a->cap_held, a->n_held + 1,
                       sizeof(*a->held)) == 0) {
        a->held[a->n_held].call = k;
        a->held[a->n_held++].task = t;
        k = NULL;
    } else {
        snprintf(why, sizeof(why), "%s", road == MT__ROAD_REROUTE
                 ? "actor died: out of memory for the call"
                 : a->why ? a->why : "actor died");
    }
    pthread_mutex_unlock(&a->mu);
    if (road == MT__ROAD_DIRECT) {
        enqueue(c, &r, a, k, t);
        free(r.address);
    } else if (k) {
        call_free(k);
        mt__actor_direct_done(c, a, t, false, NULL, 0, why, true);
    }
}

/* ---- posting ------------------------------------------------------------- */

/* Route q's call. Nobody waits for q (the caller has the task already),
 * so this never fails: a call that cannot go ends its task at once. */
static int call_start(struct mt_client *c, struct mt__req *r)
{
    struct call_req *q = (struct call_req *)r;

    route(c, q->handle, q->call, q->task);
    q->call = NULL;
    q->task = NULL;
    q->handle = NULL;
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

static void call_drop(struct mt_client *c, struct mt__req *r)
{
    struct call_req *q = (struct call_req *)r;

    mt__actor_direct_done(c, q->handle, q->task, false, NULL, 0,
                          "the client was disconnected", false);
    q->handle = NULL;
    q->task = NULL;
    mt__req_complete(c, r, -MT_ECLOSED, NULL);
}

static void call_release(struct mt__req *r)
{
    struct call_req *q = (struct call_req *)r;

    call_free(q->call);
    mt__task_unref(q->task);
    mt__actor_unref(q->handle);
}

static const struct mt__req_ops call_ops = {
    .start = call_start,
    .drop = call_drop,
    .release = call_release,
};

/* An ActorCall (seq set later), every piece malloc'd on its own so
 * protobuf frees it. */
static Manta__ActorCall *call_new(const char *method, const void *const *args,
                                  const size_t *sizes, size_t nargs)
{
    Manta__ActorCall *k = calloc(1, sizeof(*k));

    if (!k)
        return NULL;
    manta__actor_call__init(k);
    k->method = strdup(method);
    k->args = calloc(nargs + 1, sizeof(*k->args));
    if (!k->method || !k->args)
        goto out_nomem;
    for (; k->n_args < nargs; k->n_args++) {
        size_t n = sizes[k->n_args];

        if (!(k->args[k->n_args].data = malloc(n ? n : 1)))
            goto out_nomem;
        if (n)
            memcpy(k->args[k->n_args].data, args[k->n_args], n);
        k->args[k->n_args].len = n;
    }
    return k;

out_nomem:
    if (!k->method)
        k->method = (char *)protobuf_c_empty_string;
    call_free(k);
    return NULL;
}

int mt__actor_call_post(struct mt_client *c, struct mt_actor *a,
                        const char *method, const void *const *args,
                        const size_t *sizes, size_t nargs, struct mt_task *t)
{
    struct call_req *q = mt__req_new(c, &call_ops, sizeof(*q));

    if (!q) {
        mt__task_unref(t);
        mt__actor_unref(a);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    q->task = t;
    q->handle = a;
    q->call = call_new(method, args, sizes, nargs);
    if (!q->call) {
        mt__req_free(&q->r); /* drops both refs */
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    return mt__req_post(c, &q->r);
}

void mt__actor_calls_stop(struct mt_client *c)
{
    struct mt__actors *as = c->actors;

    mt__actor_flush(c);
    while (as->n_retries) {
        struct mt_actor *a = as->retries[--as->n_retries].a;

        give_up(c, a, "the client was disconnected", false);
        mt__actor_unref(a);
    }
    if (as->timer_ready)
        uv_close((uv_handle_t *)&as->retry_timer, NULL);
    as->timer_ready = false;
    for (size_t i = 0; i < as->n_wchans; i++) {
        mt_rpc_channel_destroy(as->wchans[i].ch);
        free(as->wchans[i].address);
    }
    as->n_wchans = 0;
}
