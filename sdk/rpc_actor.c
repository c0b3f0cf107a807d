/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.c -- the SDK's actor calls in protobuf: building the
 * SubmitTaskRequests that create and call actors (on the caller's thread,
 * on top of rpc_head.c's function-task builder), and GetActor / KillActor
 * on the client's loop thread, turned back into plain C (sdk_int.h).
 *
 * Direct calls (MT__REQ_ACTOR_CALL): WorkerService.CallActor to the
 * actor's worker over a channel kept per worker address (c->wchans). The
 * request completes as soon as the call is started; the call's reply
 * completes its task later (actor.c, mt__actor_direct_done). The deadline
 * is far away on purpose: a method may run for as long as it likes, and
 * mt_task_wait() has its own timeout.
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

    *out = NULL;
    if (!r)
        return -MT_ENOMEM;
    manta__call_actor_request__init(r);
    r->incarnation = incarnation;
    r->seq = seq;
    r->actor_id = dup_or_null(id);
    r->caller_id = dup_or_null(caller);
    r->method = dup_or_null(method);
    r->args = calloc(nargs + 1, sizeof(*r->args));
    if (!r->actor_id || !r->caller_id || !r->method || !r->args)
        goto out_nomem;
    for (; r->n_args < nargs; r->n_args++) {
        size_t n = sizes[r->n_args];

        r->args[r->n_args].data = malloc(n ? n : 1);
        if (!r->args[r->n_args].data)
            goto out_nomem;
        if (n)
            memcpy(r->args[r->n_args].data, args[r->n_args], n);
        r->args[r->n_args].len = n;
    }
    *out = r;
    return 0;

out_nomem:
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return -MT_ENOMEM;
}

/* ---- direct calls (loop thread) ------------------------------------------ */

#define DIRECT_DEADLINE_MS (1000 * 60 * 60 * 24 * 7)

struct direct_ctx {
    struct mt_client *c;
    struct mt_actor *handle;  /* one ref */
    struct mt_task *task;     /* one ref */
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

void mt__rpc_actor_stop(struct mt_client *c)
{
    for (size_t i = 0; i < c->n_wchans; i++) {
        mt_rpc_channel_destroy(c->wchans[i].ch);
        free(c->wchans[i].address);
    }
    c->n_wchans = 0;
}

static void on_direct_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__CallActorReply *m = (const Manta__CallActorReply *)resp;
    struct direct_ctx *x = arg;
    char msg[256];

    x->c->n_calls--;
    if (st->code) {
        snprintf(msg, sizeof(msg), "actor died: cannot reach its worker: "
                 "%s%s%s", mt_rpc_status_name(st->code),
                 *st->message ? ": " : "", st->message);
        mt__actor_direct_done(x->c, x->handle, x->task, false, NULL, 0, msg,
                              true);
    } else {
        mt__actor_direct_done(x->c, x->handle, x->task, m->ok,
                              m->result.data, m->result.len, m->error,
                              m->actor_died);
    }
    free(x);
}

/*
 * Start r's call. Nobody waits for r (the caller already has the task), so
 * this never fails: a call that cannot start ends its task at once. The
 * call counts in c->n_calls while in flight.
 */
static int start_direct(struct mt__req *r)
{
    struct mt_client *c = r->client;
    struct mt_rpc_channel *ch = wchan(c, r->actor_address);
    struct direct_ctx *x = calloc(1, sizeof(*x));
    int rc = -MT_ENOMEM;

    /* The call (or its failure) takes r's refs on the task and handle. */
    if (ch && x) {
        x->c = c;
        x->handle = r->handle;
        x->task = r->task;
        rc = mt_rpc_unary(ch, &mt_worker_call_actor, r->call_msg,
                          DIRECT_DEADLINE_MS, 0, on_direct_done, x);
    }
    if (rc < 0) {
        free(x);
        /* No call is in flight, but mt__rpc_start() counts one when we
         * return 0: take it back now (unsigned, wraps back to even). */
        c->n_calls--;
        mt__actor_direct_done(c, r->handle, r->task, false, NULL, 0,
                              "actor died: cannot start the call to its "
                              "worker", true);
    }
    r->handle = NULL;
    r->task = NULL;
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
