/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actors.c -- WorkerService.CallActor: a driver calls a method of an
 * actor hosted here directly, without the head. The call is held open
 * while its job waits for its turn (actors.c orders each caller's calls by
 * seq) and runs in the actor's executor; the reply carries the result.
 * Nothing is reported to the head: a direct call is not a task.
 *
 * A call whose incarnation is not alive (or not ready) here is refused
 * at once with not_run set: it never reached the executor, so the caller
 * may send it again, to the actor's next incarnation.
 *
 * Held calls are listed in w->calls, so a worker that stops ends them
 * (UNAVAILABLE: the adapter's stop) even though their jobs will never
 * end. What a method prints during a direct call goes to the worker's log.
 *
 * THREAD: the worker's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "proto/services.h"
#include "worker/executors.h"
#include "worker/rpc_checks.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

#define CALL_MAGIC 0x63616c6cu /* "call" */
#define OUTPUT_LOG_MAX 512

struct mt_direct_call;

/* One call of a CallActor request: its job and its outcome. */
struct direct_job {
    struct mt_exec_job job;      /* in the actor's pool */
    struct mt_direct_call *parent;
    struct mt_exec_blob *args;   /* point into the request */
    Manta__ActorCallResult res;  /* filled when the job ends */
};

/* One held CallActor. Guarded by: loop thread. */
struct mt_direct_call {
    uint32_t magic;              /* CALL_MAGIC */
    struct mt_direct_call *prev, *next; /* in w->calls */
    struct mt_worker *w;
    struct mt_rpc_call *call;    /* ended exactly once */
    char actor_id[MT_RUN_ID_MAX + 1];
    size_t n;                    /* calls */
    size_t left;                 /* not ended yet (+1 while submitting) */
    struct direct_job *jobs;
};

static struct direct_job *of_job(struct mt_exec_job *j)
{
    struct direct_job *x =
        (struct direct_job *)((char *)j - offsetof(struct direct_job, job));

    MT_ASSERT(x->parent->magic == CALL_MAGIC);
    return x;
}

static void unlink_free(struct mt_direct_call *c)
{
    struct mt_worker *w = c->w;

    if (c->prev)
        c->prev->next = c->next;
    else
        w->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    for (size_t i = 0; i < c->n; i++) {
        free(c->jobs[i].args);
        free(c->jobs[i].res.result.data);
        if (c->jobs[i].res.error != protobuf_c_empty_string)
            free(c->jobs[i].res.error);
    }
    free(c->jobs);
    c->magic = 0;
    free(c);
}

/* Every call has ended: answer with their outcomes. */
static void reply_all(struct mt_direct_call *c)
{
    Manta__CallActorReply reply = MANTA__CALL_ACTOR_REPLY__INIT;
    Manta__ActorCallResult **v = mt_xcalloc(c->n + 1, sizeof(*v));

    for (size_t i = 0; i < c->n; i++)
        v[i] = &c->jobs[i].res;
    reply.n_results = c->n;
    reply.results = v;
    mt_rpc_reply(c->call, &reply.base);
    free(v);
    unlink_free(c);
}

static void one_done(struct mt_direct_call *c)
{
    if (--c->left == 0)
        reply_all(c);
}

static void on_start(struct mt_exec_job *j, int pid)
{
    (void)j;
    (void)pid;
}

static void on_output(struct mt_exec_job *j, uint32_t fd, const void *p,
                      size_t n)
{
    size_t k = n > OUTPUT_LOG_MAX ? OUTPUT_LOG_MAX : n;

    while (k > 0 && ((const char *)p)[k - 1] == '\n')
        k--;
    MT_INFO("actor=%s (direct call) fd=%u: %.*s", of_job(j)->parent->actor_id,
            fd, (int)k, (const char *)p);
}

/* Record how one call ended (copies what o points to). */
static void set_result(struct direct_job *x, bool ok, const uint8_t *data,
                       size_t len, const char *error, bool died,
                       bool not_run)
{
    x->res.ok = ok;
    x->res.not_run = !ok && not_run;
    if (ok && len) {
        x->res.result.data = mt_xmalloc(len);
        memcpy(x->res.result.data, data, len);
        x->res.result.len = len;
    }
    if (!ok) {
        error = error && *error ? error : "the call failed";
        x->res.actor_died = died;
        x->res.error = died && strncmp(error, "actor died", 10) != 0
                           ? mt_xasprintf("actor died: %s", error)
                           : mt_xstrdup(error);
    }
}

static void on_end(struct mt_exec_job *j, const struct mt_exec_outcome *o)
{
    struct direct_job *x = of_job(j);

    set_result(x, o->end == MT_EXEC_END_OK, o->result, o->result_size,
               o->error, o->end == MT_EXEC_END_DIED ||
                             o->end == MT_EXEC_END_STOPPED, false);
    one_done(x->parent);
}

/* Queue call i of r on the actor, or end it at once. */
static void submit_one(struct mt_direct_call *c,
                       const Manta__CallActorRequest *r, size_t i)
{
    const Manta__ActorCall *k = r->calls[i];
    struct direct_job *x = &c->jobs[i];
    const char *why = NULL;
    int rc;

    x->parent = c;
    manta__actor_call_result__init(&x->res);
    x->args = mt_xcalloc(k->n_args + 1, sizeof(*x->args));
    for (size_t a = 0; a < k->n_args; a++) {
        x->args[a].data = k->args[a].data;
        x->args[a].size = (uint32_t)k->args[a].len;
    }
    x->job.req.task_id = c->actor_id;
    x->job.req.function = k->method;
    x->job.req.nargs = (uint32_t)k->n_args;
    x->job.req.args = x->args;
    x->job.req.actor_op = MT_EXEC_ACTOR_METHOD;
    x->job.on_start = on_start;
    x->job.on_output = on_output;
    x->job.on_end = on_end;
    rc = mt_hosted_actors_direct(c->w->actors, r->actor_id, r->incarnation,
                                 r->caller_id, k->seq, &x->job, &why);
    if (rc < 0) { /* refused: it never reached the executor */
        set_result(x, false, NULL, 0, why, rc != -MT_EEXIST,
                   rc == -MT_ENOENT);
        one_done(c);
    }
}

static void h_call_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__CallActorRequest *r = (const Manta__CallActorRequest *)m;
    struct mt_worker *w = arg;
    const char *why = mt_worker_call_actor_check(r);
    struct mt_direct_call *c;

    if (why) {
        mt_rpc_fail(call, -MT_EINVAL, why);
        return;
    }
    if (w->stopping || !w->execs) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "the worker is stopping");
        return;
    }
    c = mt_xcalloc(1, sizeof(*c));
    c->magic = CALL_MAGIC;
    c->w = w;
    c->call = call;
    snprintf(c->actor_id, sizeof(c->actor_id), "%s", r->actor_id);
    c->n = r->n_calls;
    c->left = c->n + 1; /* ours while submitting: no reply before the end */
    c->jobs = mt_xcalloc(c->n, sizeof(*c->jobs));
    c->next = w->calls;
    if (w->calls)
        w->calls->prev = c;
    w->calls = c;
    for (size_t i = 0; i < c->n; i++)
        submit_one(c, r, i);
    one_done(c);
}

/* Fail every direct call still held (shutdown: their jobs never end). */
static void stop(struct mt_worker *w)
{
    while (w->calls) {
        mt_rpc_fail(w->calls->call, -MT_EUNAVAIL, "the worker is stopping");
        unlink_free(w->calls);
    }
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_call_actor, h_call_actor},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_actors = {handlers, NULL, stop};
