/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_leases.c -- WorkerService.PushTasks: a driver pushes tasks to a
 * lease this worker holds for it (leases.h; docs/architecture.md,
 * "Leases"). The request is checked (rpc_checks.h) and turned into plain
 * C whose pointers borrow from it (the rpc layer keeps a request until its
 * call ends); the call is held until every task has ended and the head has
 * acknowledged their reports (while the head is away: until every task
 * has ended, leases.c), then answered with one result per task.
 *
 * A push the leases hold when the worker stops ends UNAVAILABLE (the
 * leases' shutdown ends every held push with -MT_EUNAVAIL), as held
 * CallActor calls do (rpc_actors.c): it may be sent again elsewhere.
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
#include "worker/leases.h"
#include "worker/rpc_checks.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

/* A held PushTasks call and the plain C tasks that borrow its request. */
struct held_push {
    struct mt_rpc_call *call;    /* ended exactly once, in on_done */
    struct mt_push_task *tasks;  /* n */
    struct mt_exec_blob *blobs;  /* every task's arguments, in order */
};

static Manta__TaskState state_to_pb(enum mt_run_end s)
{
    switch (s) {
    case MT_RUN_END_FINISHED:
        return MANTA__TASK_STATE__TASK_STATE_FINISHED;
    case MT_RUN_END_CANCELLED:
        return MANTA__TASK_STATE__TASK_STATE_CANCELLED;
    default:
        return MANTA__TASK_STATE__TASK_STATE_FAILED;
    }
}

static void result_to_pb(const struct mt_push_result *r,
                         Manta__PushedTaskResult *x)
{
    manta__pushed_task_result__init(x);
    x->state = state_to_pb(r->state);
    x->not_run = r->not_run;
    x->result.data = (uint8_t *)r->result;
    x->result.len = r->result_size;
    x->result_in_store = r->stored > 0;
    x->result_size = r->stored;
    x->error = (char *)r->error;
    x->system_failure = r->system_failure;
    x->out.data = (uint8_t *)r->out;
    x->out.len = r->out_len;
    x->err.data = (uint8_t *)r->err;
    x->err.len = r->err_len;
    x->out_dropped = r->out_dropped;
    x->err_dropped = r->err_dropped;
}

static void on_done(void *arg, int err, const struct mt_push_result *v,
                    size_t n)
{
    struct held_push *h = arg;
    Manta__PushTasksReply reply = MANTA__PUSH_TASKS_REPLY__INIT;
    Manta__PushedTaskResult *res, **up;

    if (err) {
        mt_rpc_fail(h->call, err, "the worker is stopping");
        goto out_free;
    }
    res = mt_xcalloc(n + 1, sizeof(*res));
    up = mt_xcalloc(n + 1, sizeof(*up));
    for (size_t i = 0; i < n; i++) {
        result_to_pb(&v[i], &res[i]);
        up[i] = &res[i];
    }
    reply.n_results = n;
    reply.results = up;
    mt_rpc_reply(h->call, &reply.base);
    free(res);
    free(up);
out_free:
    free(h->tasks);
    free(h->blobs);
    free(h);
}

/* The request's tasks as plain C, borrowing from it. */
static struct held_push *convert(struct mt_rpc_call *call,
                                 const Manta__PushTasksRequest *r)
{
    struct held_push *h = mt_xcalloc(1, sizeof(*h));
    size_t nblobs = 0, b = 0;

    for (size_t i = 0; i < r->n_tasks; i++)
        nblobs += r->tasks[i]->n_args;
    h->call = call;
    h->tasks = mt_xcalloc(r->n_tasks + 1, sizeof(*h->tasks));
    h->blobs = mt_xcalloc(nblobs + 1, sizeof(*h->blobs));
    for (size_t i = 0; i < r->n_tasks; i++) {
        const Manta__PushedTask *k = r->tasks[i];
        struct mt_push_task *t = &h->tasks[i];

        t->task_id = k->task_id;
        t->attempt = k->attempt;
        t->name = k->name;
        t->function = k->function;
        t->code_path = k->code_path;
        t->n_code_path = (uint32_t)k->n_code_path;
        t->args = &h->blobs[b];
        t->nargs = (uint32_t)k->n_args;
        for (size_t a = 0; a < k->n_args; a++, b++) {
            h->blobs[b].data = k->args[a].data;
            h->blobs[b].size = (uint32_t)k->args[a].len;
        }
        t->hold_result = k->hold_result;
        t->max_retries = k->max_retries;
        t->output_limit = k->output_limit;
    }
    return h;
}

static void h_push_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__PushTasksRequest *r = (const Manta__PushTasksRequest *)m;
    struct mt_worker *w = arg;
    const char *why = mt_worker_push_tasks_check(r);
    struct held_push *h;
    struct mt_push_req req;

    if (why) {
        mt_rpc_fail(call, -MT_EINVAL, why);
        return;
    }
    if (w->stopping || !w->leases) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "the worker is stopping");
        return;
    }
    h = convert(call, r);
    req.lease_id = r->lease_id;
    req.owner_id = r->owner_id;
    req.tasks = h->tasks;
    req.n = r->n_tasks;
    req.return_lease = r->return_lease;
    mt_leases_push(w->leases, &req, on_done, h);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_push_tasks, h_push_tasks},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_leases = {handlers, NULL, NULL};
