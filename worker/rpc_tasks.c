/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_tasks.c -- the wire of the runs (tasks.h): the RunTask, RunTasks
 * and StopTask handlers (a StopTask naming a task pushed to a lease goes
 * to the leases, leases.h), and the runs' sender, which carries their
 * state and output to the head as HeadService.ReportTasks calls (a pushed
 * task's final update with its lease_id, name, function, hold_result
 * and max_retries). A request is
 * checked and turned into a plain C spec once (rpc_checks.h); tasks.c
 * never sees protobuf.
 *
 * RunTask is answered as soon as the request is validated and admitted; the
 * program (or, for a function task, the executor pool's job) is started
 * right after the reply and how that goes (RUNNING, or
 * FAILED when it cannot start) arrives through ReportTasks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker/detect_gpu.h"
#include "worker/exec_proto.h"
#include "worker/rpc_checks.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

#define REPORT_TIMEOUT_MS 10000

/* ---- RunTask ------------------------------------------------------------- */

/* Check and admit one request into s. RET 0 (start it after answering),
 * or a -MT_E* code with err set. */
static int take_one(struct mt_worker *w, const Manta__RunTaskRequest *req,
                    struct mt_run_spec *s, char *err, size_t errlen)
{
    const char *why;
    int rc;

    if (!req->spec) {
        snprintf(err, errlen, "spec is required");
        return -MT_EINVAL;
    }
    if ((why = mt_worker_run_spec_from_pb(req, s))) {
        snprintf(err, errlen, "%s", why);
        return -MT_EINVAL;
    }
    rc = mt_runs_admit(w->runs, s, err, errlen);
    if (rc < 0) {
        mt_run_spec_release(s);
        return rc == -MT_ECLOSED ? -MT_EUNAVAIL : rc;
    }
    return 0;
}

static void h_run_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    Manta__RunTaskReply reply = MANTA__RUN_TASK_REPLY__INIT;
    struct mt_worker *w = arg;
    struct mt_run_spec s;
    char err[256];
    int rc = take_one(w, (const Manta__RunTaskRequest *)m, &s, err,
                      sizeof(err));

    if (rc < 0) {
        mt_rpc_fail(call, rc, err);
        return;
    }
    mt_rpc_reply(call, &reply.base);
    mt_runs_start(w->runs, &s);
}

#define RUN_TASKS_MAX 4096

static void h_run_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__RunTasksRequest *req = (const Manta__RunTasksRequest *)m;
    Manta__RunTasksReply reply = MANTA__RUN_TASKS_REPLY__INIT;
    struct mt_worker *w = arg;
    char **errors;
    int32_t *codes;
    size_t n = req->n_tasks;

    if (n == 0 || n > RUN_TASKS_MAX) {
        mt_rpc_fail(call, -MT_EINVAL, "tasks: 1 to 4096 per call");
        return;
    }
    errors = mt_xcalloc(n, sizeof(*errors));
    codes = mt_xcalloc(n, sizeof(*codes));
    /* Each task starts as soon as it is admitted, so a repeated id within
     * the call is refused as already known. Its first reports may reach
     * the head before this reply; the head takes either order. */
    for (size_t i = 0; i < n; i++) {
        struct mt_run_spec s;
        char err[256] = "";
        int rc = take_one(w, req->tasks[i], &s, err, sizeof(err));

        codes[i] = rc < 0 ? -rc : 0;
        errors[i] = mt_xstrdup(err);
        if (rc == 0)
            mt_runs_start(w->runs, &s);
    }
    reply.codes = codes;
    reply.n_codes = n;
    reply.errors = errors;
    reply.n_errors = n;
    mt_rpc_reply(call, &reply.base);
    for (size_t i = 0; i < n; i++)
        free(errors[i]);
    free(errors);
    free(codes);
}

/* ---- StopTask ------------------------------------------------------------ */

static void h_stop_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__StopTaskRequest *req = (const Manta__StopTaskRequest *)m;
    Manta__StopTaskReply reply = MANTA__STOP_TASK_REPLY__INIT;
    struct mt_worker *w = arg;

    if (!mt_run_id_valid(req->task_id)) {
        mt_rpc_fail(call, -MT_EINVAL,
                    "task_id must be 1-64 characters of [A-Za-z0-9_-]");
        return;
    }
    /* A task pushed to a lease is not a run: the leases know it. */
    reply.found = mt_runs_stop(w->runs, req->task_id, req->attempt,
                               req->force) == 0 ||
                  mt_leases_stop_task(w->leases, req->task_id,
                                      req->attempt) == 0;
    mt_rpc_reply(call, &reply.base);
}

/* ---- ReportTasks --------------------------------------------------------- */

static void on_report_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    char msg[256];

    snprintf(msg, sizeof(msg), "%s%s%s", mt_rpc_status_name(st->code),
             st->message && *st->message ? ": " : "",
             st->message ? st->message : "");
    mt_runs_report_ended(((struct mt_worker *)arg)->runs,
                         mt_rpc_status_to_err(st->code), msg);
}

/* Updates in a batch: RUNNING, each output chunk or marker, the final one. */
static size_t count_updates(const struct mt_run_batch *b, size_t *markers)
{
    size_t n = 0;

    *markers = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct mt_run_report *r = &b->v[i];

        n += (size_t)r->running + (size_t)r->final + (size_t)r->actor_ready;
        for (const struct mt_outchunk *c = r->out.head; c; c = c->next) {
            n++;
            *markers += c->dropped ? 1 : 0;
        }
    }
    return n;
}

static Manta__TaskUpdate *next_update(Manta__TaskUpdate *u, size_t *n,
                                      const struct mt_run_report *r)
{
    Manta__TaskUpdate *x = &u[(*n)++];

    manta__task_update__init(x);
    x->task_id = (char *)r->task_id;
    x->attempt = r->attempt;
    return x;
}

static Manta__TaskState state_to_pb(enum mt_run_end end)
{
    switch (end) {
    case MT_RUN_END_FAILED:
        return MANTA__TASK_STATE__TASK_STATE_FAILED;
    case MT_RUN_END_CANCELLED:
        return MANTA__TASK_STATE__TASK_STATE_CANCELLED;
    default:
        return MANTA__TASK_STATE__TASK_STATE_FINISHED;
    }
}

/* A pushed task's update says which lease runs it. */
static void fill_leased(Manta__TaskUpdate *x, const struct mt_run_report *r)
{
    if (!r->lease_id)
        return;
    x->lease_id = (char *)r->lease_id;
    x->name = (char *)(r->name ? r->name : "");
    x->function = (char *)(r->function ? r->function : "");
    x->hold_result = r->hold_result;
    x->max_retries = r->max_retries;
}

/* A final update. */
static void fill_final(Manta__TaskUpdate *x, const struct mt_run_report *r)
{
    x->state = state_to_pb(r->end);
    x->exit_code = r->exit_code;
    x->error = (char *)r->error;
    x->result.data = (uint8_t *)r->result;
    x->result.len = r->result_size;
    x->system_failure = r->system_failure;
    x->result_in_store = r->result_stored > 0;
    x->result_size = r->result_stored;
    fill_leased(x, r);
    if (!r->lease_id || !r->replayable)
        return;
    x->args = mt_xcalloc(r->nargs + 1, sizeof(*x->args));
    for (uint32_t i = 0; i < r->nargs; i++) {
        x->args[i].data = (uint8_t *)r->args[i].data;
        x->args[i].len = r->args[i].size;
    }
    x->n_args = r->nargs;
    x->code_path = r->code_path;
    x->n_code_path = r->n_code_path;
}

/* Fill u[] from b; marker texts go into marks (64 bytes each). */
static size_t fill_updates(const struct mt_run_batch *b, Manta__TaskUpdate *u,
                           char *marks)
{
    size_t n = 0;
    Manta__TaskUpdate *x;

    for (size_t i = 0; i < b->n; i++) {
        const struct mt_run_report *r = &b->v[i];

        if (r->running) {
            x = next_update(u, &n, r);
            x->state = MANTA__TASK_STATE__TASK_STATE_RUNNING;
            fill_leased(x, r);
        }
        if (r->actor_ready) {
            x = next_update(u, &n, r);
            x->state = MANTA__TASK_STATE__TASK_STATE_RUNNING;
            x->actor_ready = true;
            x->actor_pid = r->actor_pid;
        }
        for (const struct mt_outchunk *c = r->out.head; c; c = c->next) {
            x = next_update(u, &n, r);
            x->fd = c->fd;
            if (c->dropped) {
                x->output.len = mt_outbuf_marker(c->dropped, marks, 64);
                x->output.data = (uint8_t *)marks;
                marks += 64;
            } else {
                x->output.len = c->len - c->off;
                x->output.data = (uint8_t *)c->data + c->off;
            }
        }
        if (r->final)
            fill_final(next_update(u, &n, r), r);
    }
    return n;
}

/* The runs' sender: b as one ReportTasks call. */
static int send_reports(void *arg, const struct mt_run_batch *b)
{
    struct mt_worker *w = arg;
    Manta__ReportTasksRequest req = MANTA__REPORT_TASKS_REQUEST__INIT;
    Manta__TaskUpdate *u, **up;
    size_t n, markers;
    char *marks;
    int rc;

    if (!w->head)
        return -MT_ECLOSED;
    n = count_updates(b, &markers);
    u = mt_xcalloc(n + 1, sizeof(*u));
    up = mt_xcalloc(n + 1, sizeof(*up));
    marks = mt_xcalloc(markers + 1, 64);
    n = fill_updates(b, u, marks);
    for (size_t i = 0; i < n; i++)
        up[i] = &u[i];
    req.node_id = w->node_id;
    req.node_secret = w->node_secret;
    req.n_updates = n;
    req.updates = up;
    rc = mt_rpc_unary(w->head, &mt_head_report_tasks, &req.base,
                      REPORT_TIMEOUT_MS, 0, on_report_done, w);
    for (size_t i = 0; i < n; i++)
        free(u[i].args); /* fill_final's */
    free(u);
    free(up);
    free(marks);
    return rc;
}

static void start(struct mt_worker *w)
{
    mt_runs_set_sender(w->runs, send_reports, w);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_run_task, h_run_task},
    {&mt_worker_run_tasks, h_run_tasks},
    {&mt_worker_stop_task, h_stop_task},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_tasks = {handlers, start, NULL};
