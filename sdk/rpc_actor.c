/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.c -- the SDK's actor calls in protobuf: building the
 * SubmitTaskRequests that create and call actors (on the caller's thread,
 * on top of rpc_head.c's function-task builder), and GetActor / KillActor
 * on the client's loop thread, turned back into plain C (sdk_int.h).
 *
 * Direct calls (MT__REQ_ACTOR_CALL): WorkerService.CallActor to the
 * actor's worker over a channel kept per worker address (c->wchans). The
 * request completes at once; its call joins a batch of the calls queued in
 * the same wake-up of the loop for the same worker, caller and actor
 * incarnation, sent as one CallActor at the end of the wake-up (or when
 * full); the reply completes each call's task (actor.c,
 * mt__actor_direct_done). The deadline is far away on purpose: a method
 * may run for as long as it likes, and mt_task_wait() has its own timeout.
 *
 * THREAD: the builders run on any thread; the rest on the loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "worker_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"

/* ---- building requests (caller thread) ----------------------------------- */

static char *dup_or_null(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

int mt__rpc_actor_create_build(const char *factory, const void *const *args,
                               const size_t *sizes, size_t nargs,
                               const struct mt_task_opts *o, const char *name,
                               bool detached, int max_restarts,
                               const char *owner, void **out)
{
    Manta__SubmitTaskRequest *req;
    Manta__TaskSpec *s;
    int rc = mt__rpc_submit_fn_build(factory, args, sizes, nargs, o, out);

    if (rc < 0)
        return rc;
    req = *out;
    s = req->spec;
    s->kind = MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE;
    s->actor_detached = detached;
    s->max_restarts = max_restarts;
    s->max_retries = 0;
    if ((name && !(s->actor_name = dup_or_null(name))) ||
        !(s->owner_id = dup_or_null(owner))) {
        mt__rpc_submit_free(req);
        *out = NULL;
        return -MT_ENOMEM;
    }
    return 0;
}

int mt__rpc_actor_call_build(const char *id, const char *method,
                             const void *const *args, const size_t *sizes,
                             size_t nargs, void **out)
{
    struct mt_task_opts o;
    Manta__SubmitTaskRequest *req;
    int rc;

    if (mt__opts_init(&o) < 0)
        return -MT_ENOMEM;
    rc = mt__rpc_submit_fn_build(method, args, sizes, nargs, &o, out);
    mt__opts_release(&o);
    if (rc < 0)
        return rc;
    req = *out;
    req->spec->kind = MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD;
    req->spec->max_retries = 0;
    if (!(req->spec->actor_id = dup_or_null(id))) {
        mt__rpc_submit_free(req);
        *out = NULL;
        return -MT_ENOMEM;
    }
    return 0;
}

int mt__rpc_actor_direct_build(const char *id, uint32_t incarnation,
                               const char *caller, uint64_t seq,
                               const char *method, const void *const *args,
                               const size_t *sizes, size_t nargs, void **out)
{
    Manta__CallActorRequest *r = calloc(1, sizeof(*r));
    Manta__ActorCall *k = calloc(1, sizeof(*k));

    *out = NULL;
    if (!r || !k) {
        free(r);
        free(k);
        return -MT_ENOMEM;
    }
    manta__call_actor_request__init(r);
    manta__actor_call__init(k);
    r->incarnation = incarnation;
    r->actor_id = dup_or_null(id);
    r->caller_id = dup_or_null(caller);
    r->calls = calloc(2, sizeof(*r->calls));
    if (r->calls) {
        r->calls[0] = k;
        r->n_calls = 1;
    }
    k->seq = seq;
    k->method = dup_or_null(method);
    k->args = calloc(nargs + 1, sizeof(*k->args));
    if (!r->actor_id || !r->caller_id || !r->calls || !k->method || !k->args)
        goto out_nomem;
    for (; k->n_args < nargs; k->n_args++) {
        size_t n = sizes[k->n_args];

        k->args[k->n_args].data = malloc(n ? n : 1);
        if (!k->args[k->n_args].data)
            goto out_nomem;
        if (n)
            memcpy(k->args[k->n_args].data, args[k->n_args], n);
        k->args[k->n_args].len = n;
    }
    *out = r;
    return 0;

out_nomem:
    if (!r->calls)
        protobuf_c_message_free_unpacked(&k->base, NULL);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return -MT_ENOMEM;
}

/* ---- direct calls (loop thread) ------------------------------------------ */

#define DIRECT_DEADLINE_MS (1000 * 60 * 60 * 24 * 7)
#define BATCH_MAX_CALLS 1000
#define BATCH_MAX_BYTES (4u << 20)

/*
 * Calls queued during one wake-up of the loop to one worker, by one caller
 * of one actor incarnation: sent as one CallActor when the wake-up ends
 * (mt__rpc_actor_flush) or when full. Each call keeps one ref on its task
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

static struct mt_rpc_channel *wchan(struct mt_client *c, const char *addr)
{
    struct mt__wchan *w;

    for (size_t i = 0; i < c->n_wchans; i++)
        if (strcmp(c->wchans[i].address, addr) == 0)
            return c->wchans[i].ch;
    if (c->n_wchans == c->cap_wchans) {
        size_t cap = c->cap_wchans ? c->cap_wchans * 2 : 4;
        void *v = realloc(c->wchans, cap * sizeof(*c->wchans));

        if (!v)
            return NULL;
        c->wchans = v;
        c->cap_wchans = cap;
    }
    w = &c->wchans[c->n_wchans];
    if (!(w->address = dup_or_null(addr)))
        return NULL;
    if (mt_rpc_channel_create(c->eng, addr, 0, &w->ch) < 0) {
        free(w->address);
        return NULL;
    }
    c->n_wchans++;
    return w->ch;
}

static void batch_free(struct mt__abatch *b)
{
    mt__rpc_submit_free(b->msg);
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

void mt__rpc_actor_flush(struct mt_client *c)
{
    size_t n = c->n_abatches;

    c->n_abatches = 0;
    for (size_t i = 0; i < n; i++)
        batch_send(c->abatches[i]);
}

/* The open batch r's call joins, or a new one. NULL when out of memory. */
static struct mt__abatch *batch_for(struct mt_client *c,
                                    const Manta__CallActorRequest *m,
                                    const char *address)
{
    struct mt__abatch *b;

    for (size_t i = 0; i < c->n_abatches; i++) {
        b = c->abatches[i];
        if (b->msg->incarnation == m->incarnation &&
            !strcmp(b->address, address) &&
            !strcmp(b->msg->caller_id, m->caller_id) &&
            !strcmp(b->msg->actor_id, m->actor_id))
            return b;
    }
    if (c->n_abatches == c->cap_abatches) {
        size_t cap = c->cap_abatches ? c->cap_abatches * 2 : 4;
        void *v = realloc(c->abatches, cap * sizeof(*c->abatches));

        if (!v)
            return NULL;
        c->abatches = v;
        c->cap_abatches = cap;
    }
    if (!(b = calloc(1, sizeof(*b))) || !(b->msg = calloc(1, sizeof(*b->msg))))
        goto out_nomem;
    manta__call_actor_request__init(b->msg);
    b->c = c;
    b->msg->incarnation = m->incarnation;
    if (!(b->address = dup_or_null(address)) ||
        !(b->msg->actor_id = dup_or_null(m->actor_id)) ||
        !(b->msg->caller_id = dup_or_null(m->caller_id)))
        goto out_nomem;
    c->abatches[c->n_abatches++] = b;
    return b;

out_nomem:
    if (b)
        batch_free(b);
    return NULL;
}

/* Move r's one call (and its task and handle refs) into b. RET 0/-1. */
static int batch_add(struct mt__abatch *b, struct mt__req *r)
{
    Manta__CallActorRequest *m = r->call_msg;
    Manta__ActorCall *k = m->calls[0];

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
    m->calls[0] = NULL;
    m->n_calls = 0;
    b->tasks[b->n] = r->task;
    b->handles[b->n] = r->handle;
    r->task = NULL;
    r->handle = NULL;
    b->n++;
    return 0;
}

/* ---- LeaseActorOwner (loop thread) --------------------------------------- */

static void on_lease_msg(void *arg, const ProtobufCMessage *msg)
{
    (void)arg;
    (void)msg;
}

static void on_lease_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    (void)st;
    (void)resp;
    c->lease = NULL;
    c->n_calls--;
}

/* Hold the owner lease (see head_service.proto), opening it if needed.
 * r completes at once; nobody waits for it. mt__rpc_start() counts the
 * stream as a call in flight when this returns 0; on_lease_done counts
 * it down (or, when it is already open or cannot open, it is taken back
 * here). */
static int start_lease(struct mt__req *r)
{
    Manta__ActorOwnerLeaseRequest req = MANTA__ACTOR_OWNER_LEASE_REQUEST__INIT;
    struct mt_client *c = r->client;

    req.owner_id = c->owner_id;
    if (c->lease ||
        mt_rpc_stream_open(c->ch, &mt_head_lease_actor_owner, &req.base, 0,
                           MT_RPC_WAIT_FOR_READY, on_lease_msg, on_lease_done,
                           c, &c->lease) < 0)
        c->n_calls--; /* unsigned: mt__rpc_start() adds it back */
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

void mt__rpc_actor_stop(struct mt_client *c)
{
    if (c->lease)
        mt_rpc_stream_cancel(c->lease);
    mt__rpc_actor_flush(c);
    for (size_t i = 0; i < c->n_wchans; i++) {
        mt_rpc_channel_destroy(c->wchans[i].ch);
        free(c->wchans[i].address);
    }
    c->n_wchans = 0;
    free(c->abatches);
    c->abatches = NULL;
    c->cap_abatches = 0;
}

/*
 * Queue r's call for the end of this wake-up. Nobody waits for r (the
 * caller already has the task), so this never fails: a call that cannot
 * be queued ends its task at once. mt__rpc_start() counts a call in
 * flight when this returns 0; batches count their own (batch_send), so
 * that count is taken back here.
 */
static int start_direct(struct mt__req *r)
{
    struct mt_client *c = r->client;
    struct mt__abatch *b = batch_for(c, r->call_msg, r->actor_address);

    c->n_calls--; /* unsigned: mt__rpc_start() adds it back */
    if (!b || batch_add(b, r) < 0) {
        mt__actor_direct_done(c, r->handle, r->task, false, NULL, 0,
                              "actor died: out of memory for the call",
                              true);
        r->handle = NULL;
        r->task = NULL;
    } else if (b->n >= BATCH_MAX_CALLS || b->bytes >= BATCH_MAX_BYTES) {
        /* Full: send it now, and forget it as an open batch. */
        for (size_t i = 0; i < c->n_abatches; i++)
            if (c->abatches[i] == b)
                c->abatches[i] = c->abatches[--c->n_abatches];
        batch_send(b);
    }
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

/* ---- GetActor / KillActor (loop thread) ---------------------------------- */

void mt__actor_info_release(struct mt__actor_info *i)
{
    free(i->address);
    free(i->name);
    free(i->node_id);
    free(i->death_reason);
    memset(i, 0, sizeof(*i));
}

/* Copy the reply's info into r. RET 0, -MT_EPROTO, -MT_ENOMEM. */
static int copy_info(struct mt__req *r, const Manta__ActorInfo *ai)
{
    struct mt__actor_info *i = &r->actor;

    if (!ai || strlen(ai->actor_id) != 16)
        return -MT_EPROTO;
    mt__actor_info_release(i);
    memcpy(i->id, ai->actor_id, 17);
    i->state = (int)ai->state;
    i->pid = ai->pid;
    i->restarts = ai->num_restarts;
    i->max_restarts = ai->max_restarts;
    i->detached = ai->detached;
    i->name = dup_or_null(ai->name);
    i->node_id = dup_or_null(ai->node_id);
    i->death_reason = dup_or_null(ai->death_reason);
    i->address = dup_or_null(ai->address);
    i->incarnation = ai->incarnation;
    if (!i->name || !i->node_id || !i->death_reason || !i->address)
        return -MT_ENOMEM;
    return 0;
}

static void on_actor_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt__req *r = arg;
    char msg[256];
    int rc = 0;

    r->client->n_calls--;
    if (st->code) {
        snprintf(msg, sizeof(msg), "%s: %s",
                 r->kind == MT__REQ_ACTOR_GET ? "GetActor" : "KillActor",
                 *st->message ? st->message : mt_rpc_status_name(st->code));
        mt__req_complete(r->client, r, mt_rpc_status_to_err(st->code), msg);
        return;
    }
    if (r->kind == MT__REQ_ACTOR_GET)
        rc = copy_info(r, ((const Manta__GetActorReply *)resp)->actor);
    else
        r->actor.state = (int)((const Manta__KillActorReply *)resp)->state;
    mt__req_complete(r->client, r, rc,
                     rc ? "bad GetActor reply from the head" : NULL);
}

int mt__rpc_actor_start(struct mt__req *r)
{
    Manta__GetActorRequest get = MANTA__GET_ACTOR_REQUEST__INIT;
    Manta__KillActorRequest kill = MANTA__KILL_ACTOR_REQUEST__INIT;

    if (r->kind == MT__REQ_ACTOR_CALL)
        return start_direct(r);
    if (r->kind == MT__REQ_ACTOR_LEASE)
        return start_lease(r);
    if (r->kind == MT__REQ_ACTOR_GET) {
        get.actor_id = r->actor_id;
        get.name = r->actor_name ? r->actor_name : (char *)"";
        return mt_rpc_unary(r->client->ch, &mt_head_get_actor, &get.base,
                            r->timeout_ms, r->rpc_flags, on_actor_done, r);
    }
    kill.actor_id = r->actor_id;
    kill.no_restart = r->no_restart;
    return mt_rpc_unary(r->client->ch, &mt_head_kill_actor, &kill.base,
                        r->timeout_ms, r->rpc_flags, on_actor_done, r);
}
