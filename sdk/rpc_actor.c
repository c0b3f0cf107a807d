/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.c -- the SDK's actor calls in protobuf: GetActor / KillActor
 * on the head (through mt__head_call, replies turned into plain C), the
 * owner lease (LeaseActorOwner) and direct calls to the actor's worker
 * (WorkerService.CallActor).
 *
 * Direct calls: each call is a request posted to the loop thread, which
 * puts it in the batch of the calls queued in the same wake-up for the
 * same worker, caller and actor incarnation; the batch goes as one
 * CallActor at the end of the wake-up (or when full), on a channel kept
 * per worker address. The reply completes each call's task
 * (actor_handle.c, mt__actor_direct_done). The deadline is far away on
 * purpose: a method may run for as long as it likes, and mt_task_wait()
 * has its own timeout.
 *
 * THREAD: lookups, kills and posting run on the caller's thread; the rest
 * on the loop thread.
 */
#include "sdk/rpc_actor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpc.h"
#include "common/strbuf.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "sdk/actor_handle.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_reply.h"
#include "sdk/task_state.h"
#include "worker_service.pb-c.h"

#define DIRECT_DEADLINE_MS (1000 * 60 * 60 * 24 * 7)
#define BATCH_MAX_CALLS 1000
#define BATCH_MAX_BYTES (4u << 20)

/* ---- GetActor / KillActor (caller thread) -------------------------------- */

void mt__actor_desc_release(struct mt__actor_desc *d)
{
    mt_actor_info_release(&d->info);
    free(d->address);
    d->address = NULL;
}

/* ai as a view: the strings point into ai. */
static void fill_actor(const Manta__ActorInfo *ai, mt_actor_info *i)
{
    i->state = (mt_actor_state)ai->state;
    i->name = ai->name;
    i->node_id = ai->node_id;
    i->death_reason = ai->death_reason;
    i->pid = ai->pid;
    i->num_restarts = ai->num_restarts;
    i->max_restarts = ai->max_restarts;
    i->detached = ai->detached;
    i->actor_id = ai->actor_id;
    i->function = ai->function;
    i->owner_id = ai->owner_id;
    i->calls_queued = ai->calls_queued;
    i->calls_dispatched = ai->calls_dispatched;
    i->create_time_ms = ai->create_time_ms;
    i->end_time_ms = ai->end_time_ms;
}

/* Copy an ActorInfo into d, strings owned. RET 0, -MT_EPROTO, -MT_ENOMEM. */
static int copy_desc(const Manta__ActorInfo *ai, struct mt__actor_desc *d)
{
    char **s[] = {&d->info.name,     &d->info.node_id,  &d->info.death_reason,
                  &d->info.actor_id, &d->info.function, &d->info.owner_id,
                  &d->address};
    bool ok = true;

    if (!ai || strlen(ai->actor_id) != 16)
        return -MT_EPROTO;
    fill_actor(ai, &d->info);
    d->address = ai->address;
    d->incarnation = ai->incarnation;
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        ok &= (*s[i] = strdup(*s[i])) != NULL;
    return ok ? 0 : -MT_ENOMEM;
}

/* The actor as JSON (proto/list_json.c). RET 0, -MT_ENOMEM. */
static int actor_json(const Manta__ActorInfo *ai, char **json)
{
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;

    mt_json_actor(&sb, ai);
    mt_strbuf_adds(&sb, "\n");
    return mt__json_take(&sb, json);
}

int mt__actor_lookup(struct mt_client *c, const char *id, const char *name,
                     struct mt__actor_desc *d, char **json)
{
    Manta__GetActorRequest req = MANTA__GET_ACTOR_REQUEST__INIT;
    Manta__GetActorReply *r;
    int rc;

    memset(d, 0, sizeof(*d));
    mt_actor_info_init(&d->info);
    req.actor_id = (char *)(id ? id : "");
    req.name = (char *)(name ? name : "");
    rc = mt__head_call(c, &mt_head_get_actor, &req, c->rpc_timeout_ms,
                       MT__CALL_WAIT, (void **)&r);
    if (rc < 0)
        return rc;
    rc = copy_desc(r->actor, d);
    if (rc == 0 && json)
        rc = actor_json(r->actor, json);
    mt__msg_free(r);
    if (rc < 0) {
        mt__actor_desc_release(d);
        return mt__set_error(c, rc, rc == -MT_EPROTO ? "the head sent no "
                             "actor" : "out of memory");
    }
    return 0;
}

int mt__actor_kill_id(struct mt_client *c, const char *id, bool no_restart,
                      int timeout_ms, mt_actor_state *state)
{
    Manta__KillActorRequest req = MANTA__KILL_ACTOR_REQUEST__INIT;
    Manta__KillActorReply *r;
    int rc;

    req.actor_id = (char *)id;
    req.no_restart = no_restart;
    rc = mt__head_call(c, &mt_head_kill_actor, &req, timeout_ms,
                       MT__CALL_WAIT, (void **)&r);
    if (rc < 0)
        return rc;
    if (state)
        *state = (mt_actor_state)r->state;
    mt__msg_free(r);
    return 0;
}

static void render(struct mt_strbuf *sb, const void *reply)
{
    mt_list_json_actors(sb, reply);
}

int mt__actor_list(struct mt_client *c, const mt_list_filter *f, int state,
                   mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__ListActorsRequest req = MANTA__LIST_ACTORS_REQUEST__INIT;
    const Manta__ListActorsReply *r;
    mt_actor_info *v = NULL;
    int rc;

    req.limit = f->limit;
    req.state = (Manta__ActorState)state;
    req.name = (char *)(f->name ? f->name : "");
    rc = mt__list_call(c, &mt_head_list_actors, &req, render, json, keep);
    if (rc < 0 || json)
        return rc;
    r = keep->reply;
    l->total = r->total;
    l->n = r->n_actors;
    if (l->n && !(v = mt__keep_alloc(keep, l->n * sizeof(*v))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        mt_actor_info_init(&v[i]);
        fill_actor(r->actors[i], &v[i]);
    }
    l->actors = v;
    return 0;
}

/* ---- LeaseActorOwner (loop thread) --------------------------------------- */

static void on_lease_msg(void *arg, const ProtobufCMessage *msg)
{
}

static void on_lease_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    c->actors->lease = NULL;
    c->n_streams--;
}

/* Hold the owner lease (see head_service.proto), opening it if needed.
 * Nobody waits for the request. */
static int lease_start(struct mt_client *c, struct mt__req *r)
{
    Manta__ActorOwnerLeaseRequest req = MANTA__ACTOR_OWNER_LEASE_REQUEST__INIT;
    struct mt__actors *as = c->actors;

    req.owner_id = as->owner_id;
    if (!as->lease &&
        mt_rpc_stream_open(c->ch, &mt_head_lease_actor_owner, &req.base, 0,
                           r->rpc_flags, on_lease_msg, on_lease_done, c,
                           &as->lease) == 0)
        c->n_streams++;
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

static const struct mt__req_ops lease_ops = {
    .start = lease_start,
};

void mt__actor_hold_lease(struct mt_client *c)
{
    struct mt__req *r = mt__req_new(c, &lease_ops, sizeof(*r));

    if (r)
        mt__req_post(c, r);
}

/* ---- direct calls (loop thread) ------------------------------------------ */

/* A channel to one worker (direct actor calls). */
struct mt__wchan {
    char *address;
    struct mt_rpc_channel *ch;
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

/* One call on its way to a batch: its message (one ActorCall), where it
 * goes, and the task and handle it completes (one ref each). */
struct call_req {
    struct mt__req r;
    Manta__CallActorRequest *msg;
    char *address;
    struct mt_task *task;
    struct mt_actor *handle;
};

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

static void batch_free(struct mt__abatch *b)
{
    mt__msg_free(b->msg);
    free(b->address);
    free(b->tasks);
    free(b->handles);
    free(b);
}

/* End every call of b the same way (the rpc failed or never started). */
static void batch_fail(struct mt__abatch *b, const char *why)
{
    for (size_t i = 0; i < b->n; i++)
        mt__actor_direct_done(b->c, b->handles[i], b->tasks[i], false, NULL,
                              0, why, true);
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

        mt__actor_direct_done(b->c, b->handles[i], b->tasks[i], x->ok,
                              x->result.data, x->result.len, x->error,
                              x->actor_died);
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

/* The open batch m's call joins, or a new one. NULL when out of memory. */
static struct mt__abatch *batch_for(struct mt_client *c,
                                    const Manta__CallActorRequest *m,
                                    const char *address)
{
    struct mt__actors *as = c->actors;
    struct mt__abatch *b;

    for (size_t i = 0; i < as->n_abatches; i++) {
        b = as->abatches[i];
        if (b->msg->incarnation == m->incarnation &&
            !strcmp(b->address, address) &&
            !strcmp(b->msg->caller_id, m->caller_id) &&
            !strcmp(b->msg->actor_id, m->actor_id))
            return b;
    }
    if (as->n_abatches == as->cap_abatches) {
        size_t cap = as->cap_abatches ? as->cap_abatches * 2 : 4;
        void *v = realloc(as->abatches, cap * sizeof(*as->abatches));

        if (!v)
            return NULL;
        as->abatches = v;
        as->cap_abatches = cap;
    }
    if (!(b = calloc(1, sizeof(*b))) || !(b->msg = calloc(1, sizeof(*b->msg))))
        goto out_nomem;
    manta__call_actor_request__init(b->msg);
    b->c = c;
    b->msg->incarnation = m->incarnation;
    if (!(b->address = strdup(address)) ||
        !(b->msg->actor_id = strdup(m->actor_id)) ||
        !(b->msg->caller_id = strdup(m->caller_id)))
        goto out_nomem;
    as->abatches[as->n_abatches++] = b;
    return b;

out_nomem:
    if (b)
        batch_free(b);
    return NULL;
}

/* Move q's one call (and its task and handle refs) into b. RET 0/-1. */
static int batch_add(struct mt__abatch *b, struct call_req *q)
{
    Manta__ActorCall *k = q->msg->calls[0];

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
    for (size_t a = 0; a < k->n_args; a++)
        b->bytes += k->args[a].len;
    b->msg->calls[b->n] = k;
    b->msg->n_calls = b->n + 1;
    q->msg->calls[0] = NULL;
    q->msg->n_calls = 0;
    b->tasks[b->n] = q->task;
    b->handles[b->n] = q->handle;
    q->task = NULL;
    q->handle = NULL;
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

/*
 * Queue q's call for the end of this wake-up. Nobody waits for q (the
 * caller has the task already), so this never fails: a call that cannot
 * be queued ends its task at once.
 */
static int call_start(struct mt_client *c, struct mt__req *r)
{
    struct call_req *q = (struct call_req *)r;
    struct mt__abatch *b = batch_for(c, q->msg, q->address);

    if (!b || batch_add(b, q) < 0) {
        mt__actor_direct_done(c, q->handle, q->task, false, NULL, 0,
                              "actor died: out of memory for the call",
                              true);
        q->handle = NULL;
        q->task = NULL;
    } else if (b->n >= BATCH_MAX_CALLS || b->bytes >= BATCH_MAX_BYTES) {
        batch_close(c->actors, b);
        batch_send(b);
    }
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

    mt__msg_free(q->msg);
    free(q->address);
    mt__task_unref(q->task);
    mt__actor_unref(q->handle);
}

static const struct mt__req_ops call_ops = {
    .start = call_start,
    .drop = call_drop,
    .release = call_release,
};

/* A CallActorRequest with one call, every piece malloc'd on its own so
 * mt__msg_free frees it (and batch_add can move the call). */
static Manta__CallActorRequest *call_msg(const char *id, uint32_t incarnation,
                                         const char *caller, uint64_t seq,
                                         const char *method,
                                         const void *const *args,
                                         const size_t *sizes, size_t nargs)
{
    Manta__CallActorRequest *r = calloc(1, sizeof(*r));
    Manta__ActorCall *k = calloc(1, sizeof(*k));
    Manta__ActorCall **calls = calloc(2, sizeof(*calls));

    if (!r || !k || !calls) {
        free(r);
        free(k);
        free(calls);
        return NULL;
    }
    manta__call_actor_request__init(r);
    manta__actor_call__init(k);
    r->calls = calls;
    r->incarnation = incarnation;
    r->calls[0] = k;
    r->n_calls = 1;
    r->actor_id = strdup(id);
    r->caller_id = strdup(caller);
    k->seq = seq;
    k->method = strdup(method);
    k->args = calloc(nargs + 1, sizeof(*k->args));
    if (!r->actor_id || !r->caller_id || !k->method || !k->args)
        goto out_nomem;
    for (; k->n_args < nargs; k->n_args++) {
        size_t n = sizes[k->n_args];

        if (!(k->args[k->n_args].data = malloc(n ? n : 1)))
            goto out_nomem;
        if (n)
            memcpy(k->args[k->n_args].data, args[k->n_args], n);
        k->args[k->n_args].len = n;
    }
    return r;

out_nomem:
    mt__msg_free(r);
    return NULL;
}

int mt__actor_call_post(struct mt_client *c, struct mt_actor *a,
                        char *address, uint32_t incarnation,
                        const char *caller, uint64_t seq, const char *method,
                        const void *const *args, const size_t *sizes,
                        size_t nargs, struct mt_task *t)
{
    struct call_req *q = mt__req_new(c, &call_ops, sizeof(*q));

    if (!q) {
        free(address);
        mt__task_unref(t);
        mt__actor_unref(a);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    q->task = t;
    q->handle = a;
    q->address = address;
    q->msg = call_msg(a->id, incarnation, caller, seq, method, args, sizes,
                      nargs);
    if (!q->msg) {
        mt__req_free(&q->r); /* drops both refs */
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    return mt__req_post(c, &q->r);
}

void mt__actor_stop(struct mt_client *c)
{
    struct mt__actors *as = c->actors;

    if (as->lease)
        mt_rpc_stream_cancel(as->lease);
    mt__actor_flush(c);
    for (size_t i = 0; i < as->n_wchans; i++) {
        mt_rpc_channel_destroy(as->wchans[i].ch);
        free(as->wchans[i].address);
    }
    as->n_wchans = 0;
}
