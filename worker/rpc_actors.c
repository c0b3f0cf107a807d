/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actors.c -- WorkerService.CallActor: a driver calls a method of an
 * actor hosted here directly, without the head. The call is held open
 * while its job waits for its turn (actors.c orders each caller's calls by
 * seq) and runs in the actor's executor; the reply carries the result.
 * Nothing is reported to the head: a direct call is not a task.
 *
 * Held calls are listed in w->calls, so a worker that stops ends them
 * (UNAVAILABLE) even though their jobs will never end. What a method
 * prints during a direct call goes to the worker's log.
 *
 * THREAD: the worker's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "worker/actors.h"
#include "worker/executors.h"
#include "worker/tasks.h"
#include "worker/worker.h"
#include "worker_service.pb-c.h"

#define CALL_MAGIC 0x63616c6cu /* "call" */
#define OUTPUT_LOG_MAX 512

/* One held CallActor. Guarded by: loop thread. */
struct mt_wcall {
    uint32_t magic;              /* CALL_MAGIC */
    struct mt_exec_job job;      /* its job in the actor's pool */
    struct mt_wcall *prev, *next; /* in w->calls */
    struct mt_worker *w;
    struct mt_rpc_call *call;    /* ended exactly once */
    char actor_id[MT_RUN_ID_MAX + 1];
    struct mt_exec_blob *args;   /* point into the request (valid while
                                    the call is held) */
};

static struct mt_wcall *of_job(struct mt_exec_job *j)
{
    struct mt_wcall *c = (struct mt_wcall *)((char *)j -
                                             offsetof(struct mt_wcall, job));

    MT_ASSERT(c->magic == CALL_MAGIC);
    return c;
}

static void unlink_free(struct mt_wcall *c)
{
    struct mt_worker *w = c->w;

    if (c->prev)
        c->prev->next = c->next;
    else
        w->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c->args);
    c->magic = 0;
    free(c);
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
    MT_INFO("actor=%s (direct call) fd=%u: %.*s", of_job(j)->actor_id, fd,
            (int)k, (const char *)p);
}

static void on_end(struct mt_exec_job *j, const struct mt_exec_outcome *o)
{
    struct mt_wcall *c = of_job(j);
    Manta__CallActorReply reply = MANTA__CALL_ACTOR_REPLY__INIT;
    const char *err = o->error[0] ? o->error : "the call failed";
    char *msg = NULL;

    reply.ok = o->end == MT_EXEC_END_OK;
    if (reply.ok) {
        reply.result.data = (uint8_t *)o->result;
        reply.result.len = o->result_size;
    } else {
        reply.actor_died = o->end == MT_EXEC_END_DIED ||
                           o->end == MT_EXEC_END_STOPPED;
        if (reply.actor_died && strncmp(err, "actor died", 10) != 0)
            err = msg = mt_xasprintf("actor died: %s", err);
        reply.error = (char *)err;
    }
    mt_rpc_reply(c->call, &reply.base);
    free(msg);
    unlink_free(c);
}

/* RET NULL or why the request cannot be a call. */
static const char *check(const Manta__CallActorRequest *r)
{
    size_t bytes = 0;

    if (!mt_run_id_valid(r->actor_id) || !mt_run_id_valid(r->caller_id))
        return "actor_id and caller_id must be 1-64 of [A-Za-z0-9_-]";
    if (!r->method[0] || strlen(r->method) > MT_EXEC_MAX_FUNCTION)
        return "method must be a function name";
    if (r->n_args > MT_EXEC_MAX_ARGS)
        return "too many arguments (at most 4096)";
    for (size_t i = 0; i < r->n_args; i++)
        bytes += r->args[i].len;
    if (bytes > MT_EXEC_MAX_ARG_BYTES)
        return "arguments too large (at most 16 MiB)";
    return NULL;
}

/* A call that cannot run: answer it as the actor's death. */
static void reply_dead(struct mt_rpc_call *call, const char *why)
{
    Manta__CallActorReply reply = MANTA__CALL_ACTOR_REPLY__INIT;

    reply.error = (char *)why;
    reply.actor_died = true;
    mt_rpc_reply(call, &reply.base);
}

void mt__worker_h_call_actor(struct mt_rpc_call *call,
                             const ProtobufCMessage *m, void *arg)
{
    const Manta__CallActorRequest *r = (const Manta__CallActorRequest *)m;
    struct mt_worker *w = arg;
    const char *why = check(r);
    struct mt_wcall *c;
    int rc;

    if (why) {
        mt_rpc_fail(call, -MT_EINVAL, why);
        return;
    }
    if (w->state == MT_WORKER_STOPPING || !w->execs) {
        reply_dead(call, "actor died: its worker is stopping");
        return;
    }
    c = mt_xcalloc(1, sizeof(*c));
    c->magic = CALL_MAGIC;
    c->w = w;
    c->call = call;
    snprintf(c->actor_id, sizeof(c->actor_id), "%s", r->actor_id);
    c->args = mt_xcalloc(r->n_args + 1, sizeof(*c->args));
    for (size_t i = 0; i < r->n_args; i++) {
        c->args[i].data = r->args[i].data;
        c->args[i].size = (uint32_t)r->args[i].len;
    }
    c->job.req.task_id = c->actor_id;
    c->job.req.function = r->method;
    c->job.req.nargs = (uint32_t)r->n_args;
    c->job.req.args = c->args;
    c->job.req.actor_op = MT_EXEC_ACTOR_METHOD;
    c->job.on_start = on_start;
    c->job.on_output = on_output;
    c->job.on_end = on_end;
    c->next = w->calls;
    if (w->calls)
        w->calls->prev = c;
    w->calls = c;
    rc = mt__wactor_direct(w, r->actor_id, r->incarnation, r->caller_id,
                           r->seq, &c->job, &why);
    if (rc < 0) {
        if (rc == -MT_EEXIST)
            mt_rpc_fail(call, -MT_EINVAL, why);
        else
            reply_dead(call, why);
        unlink_free(c);
    }
}

void mt__worker_calls_shutdown(struct mt_worker *w)
{
    while (w->calls) {
        mt_rpc_fail(w->calls->call, -MT_EUNAVAIL, "the worker is stopping");
        unlink_free(w->calls);
    }
}
