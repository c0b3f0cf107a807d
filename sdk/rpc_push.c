/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_push.c -- WorkerService.PushTasks and StopTask in protobuf, for the
 * lease path (lease.c): a push is a view on the tasks' plain C defs
 * (proto/convert.h arena: no copy of names or arguments), its reply is
 * turned into struct mt__push_result views before lease.c sees it.
 *
 * A push's deadline is far away on purpose: its tasks run for as long as
 * they like; a lease lost under a push is noticed by lease.c, which
 * cancels the call by destroying its channel.
 *
 * THREAD: the client's loop thread.
 */
#include "sdk/rpc_push.h"

#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/rpc.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker_service.pb-c.h"

/* A push in flight: whom to tell, and how many answers to expect. */
struct push_call {
    mt__push_done_fn done;
    void *arg;
    size_t n;
};

/* One PushedTask view on p (borrowed) in a. RET 0, -MT_ENOMEM. */
static int task_view(struct mt_pb_arena *a, const struct mt__push_task *p,
                     Manta__PushedTask *x)
{
    const struct mt_task_def *d = p->def;

    manta__pushed_task__init(x);
    x->task_id = (char *)p->task_id;
    x->attempt = p->attempt;
    x->name = d->name ? d->name : (char *)protobuf_c_empty_string;
    x->function = d->function ? d->function
                              : (char *)protobuf_c_empty_string;
    x->hold_result = d->hold_result;
    x->output_limit = p->output_limit;
    x->max_retries = p->max_retries;
    x->code_path = d->code_path;
    x->n_code_path = d->n_code_path;
    if (d->nargs && mt_pb_values_view(a, d->args, d->nargs, &x->args) < 0)
        return -MT_ENOMEM;
    x->n_args = d->nargs;
    return 0;
}

static void result_of(const Manta__PushedTaskResult *m,
                      struct mt__push_result *r)
{
    r->state = (int)m->state;
    r->not_run = m->not_run;
    r->system_failure = m->system_failure;
    r->result = m->result.data;
    r->result_len = m->result.len;
    r->result_in_store = m->result_in_store;
    r->result_size = m->result_size;
    r->error = m->error ? m->error : "";
    r->out = m->out.data;
    r->out_len = m->out.len;
    r->err = m->err.data;
    r->err_len = m->err.len;
    r->out_dropped = m->out_dropped;
    r->err_dropped = m->err_dropped;
}

static void on_push_done(void *arg, const struct mt_rpc_status *st,
                         const ProtobufCMessage *resp)
{
    const Manta__PushTasksReply *m = (const Manta__PushTasksReply *)resp;
    struct push_call *pc = arg;
    struct mt__push_result *res = NULL;
    char why[256];

    if (st->code == 0 && m->n_results == pc->n && pc->n &&
        !(res = calloc(pc->n, sizeof(*res)))) {
        pc->done(pc->arg, GRPC_STATUS_RESOURCE_EXHAUSTED,
                 "out of memory for the push's reply", NULL, 0);
        free(pc);
        return;
    }
    if (st->code == 0 && m->n_results != pc->n) {
        snprintf(why, sizeof(why), "INTERNAL: the worker answered %zu of "
                 "%zu pushed tasks", m->n_results, pc->n);
        pc->done(pc->arg, GRPC_STATUS_INTERNAL, why, NULL, 0);
        free(pc);
        return;
    }
    if (st->code) {
        snprintf(why, sizeof(why), "%s: %s", mt_rpc_status_name(st->code),
                 *st->message ? st->message : "no details");
        pc->done(pc->arg, st->code, why, NULL, 0);
        free(pc);
        return;
    }
    for (size_t i = 0; i < pc->n; i++)
        result_of(m->results[i], &res[i]);
    pc->done(pc->arg, 0, "", res, pc->n);
    free(res);
    free(pc);
}

int mt__push_send(struct mt_rpc_channel *ch, const char *lease_id,
                  const char *owner_id, const struct mt__push_task *tasks,
                  size_t n, bool return_lease, int timeout_ms,
                  mt__push_done_fn done, void *arg)
{
    Manta__PushTasksRequest req = MANTA__PUSH_TASKS_REQUEST__INIT;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct push_call *pc = malloc(sizeof(*pc));
    Manta__PushedTask *v = n ? mt_pb_alloc(&a, n * sizeof(*v)) : NULL;
    Manta__PushedTask **pv = n ? mt_pb_alloc(&a, n * sizeof(*pv)) : NULL;
    int rc = pc && (!n || (v && pv)) ? 0 : -MT_ENOMEM;

    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = task_view(&a, &tasks[i], &v[i]);
        pv[i] = &v[i];
    }
    if (rc == 0) {
        req.lease_id = (char *)lease_id;
        req.owner_id = (char *)owner_id;
        req.tasks = pv;
        req.n_tasks = n;
        req.return_lease = return_lease;
        pc->done = done;
        pc->arg = arg;
        pc->n = n;
        rc = mt_rpc_unary(ch, &mt_worker_push_tasks, &req.base, timeout_ms,
                          0, on_push_done, pc);
    }
    mt_pb_arena_release(&a);
    if (rc < 0)
        free(pc);
    return rc;
}

/* ---- StopTask ------------------------------------------------------------ */

struct stop_call {
    mt__stop_done_fn done;
    void *arg;
};

static void on_stop_done(void *arg, const struct mt_rpc_status *st,
                         const ProtobufCMessage *resp)
{
    struct stop_call *sc = arg;

    (void)resp;
    sc->done(sc->arg, st->code);
    free(sc);
}

int mt__push_stop(struct mt_rpc_channel *ch, const char *task_id,
                  uint32_t attempt, bool force, int timeout_ms,
                  mt__stop_done_fn done, void *arg)
{
    Manta__StopTaskRequest req = MANTA__STOP_TASK_REQUEST__INIT;
    struct stop_call *sc = malloc(sizeof(*sc));
    int rc;

    if (!sc)
        return -MT_ENOMEM;
    sc->done = done;
    sc->arg = arg;
    req.task_id = (char *)task_id;
    req.attempt = attempt;
    req.force = force;
    rc = mt_rpc_unary(ch, &mt_worker_stop_task, &req.base, timeout_ms, 0,
                      on_stop_done, sc);
    if (rc < 0)
        free(sc);
    return rc;
}
