/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_tasks.c -- the task service's rpc adapter: SubmitTask (tasks, and
 * actors created or called), CancelTask, ListTasks and ReportTasks over
 * tasks.h and actors.h. Following tasks (WatchTask, WatchTasks) is
 * rpc_watch.c.
 *
 * Everything a client or worker sends is checked here or by the service;
 * a bad field ends the call with INVALID_ARGUMENT and a reason.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head/persist.h"
#include "head/rpc_services.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define LIST_DEFAULT 100
#define LIST_MAX 10000

/* ---- SubmitTask ---------------------------------------------------------- */

/* A TaskSpec into a checked def (why set when refused). RET 0 or -MT_E*. */
static int take_def(const Manta__TaskSpec *s, struct mt_task_def *d,
                    const char **why)
{
    int rc;

    mt_task_def_init(d);
    if (!s) {
        *why = "missing spec";
        return -MT_EINVAL;
    }
    if ((rc = mt_task_def_from_pb(s, d, why)) < 0) {
        if (rc == -MT_ENOMEM)
            *why = "out of memory";
        return rc;
    }
    if ((*why = mt_task_def_check(d))) {
        mt_task_def_release(d);
        return -MT_EINVAL;
    }
    return 0;
}

/* Create or call an actor. RET the task, or NULL with why and err set. */
static struct mt_head_task *submit_actor(struct mt_head *h,
                                         struct mt_task_def *d,
                                         const char **why, int *err)
{
    struct mt_head_task *t;

    if (d->kind == MT_TASK_KIND_ACTOR_CREATE)
        return mt_head_actor_create(h->actors, d, why, err);
    t = mt_head_actor_call(h->actors, d, err);
    if (!t)
        *why = "no such actor";
    return t;
}

static void h_submit_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                          void *arg)
{
    const Manta__SubmitTaskRequest *req = (const Manta__SubmitTaskRequest *)m;
    Manta__SubmitTaskReply reply = MANTA__SUBMIT_TASK_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_head_task *t;
    struct mt_task_def d;
    const char *why = NULL;
    int err = take_def(req->spec, &d, &why);

    if (err < 0) {
        mt_rpc_fail(call, err, why);
        return;
    }
    if (d.kind == MT_TASK_KIND_ACTOR_CREATE ||
        d.kind == MT_TASK_KIND_ACTOR_METHOD)
        t = submit_actor(h, &d, &why, &err);
    else if (*req->spec->task_id) /* named by its driver: may be a retry */
        t = mt_head_tasks_submit_as(h->tasks, req->spec->task_id, &d, &why,
                                    &err);
    else
        t = mt_head_tasks_submit(h->tasks, &d, &why, &err);
    if (!t) {
        mt_rpc_fail(call, err, why);
        return;
    }
    reply.task_id = t->id;
    mt_head_persist_reply(h->persist, call, &reply.base);
}

/* ---- CancelTask ------------------------------------------------------------- */

static void h_cancel_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                          void *arg)
{
    const Manta__CancelTaskRequest *req = (const Manta__CancelTaskRequest *)m;
    Manta__CancelTaskReply reply = MANTA__CANCEL_TASK_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_head_task *t = mt_task_table_find_id(
        mt_head_tasks_table(h->tasks), req->task_id);

    if (!t) {
        mt_rpc_fail(call, -MT_ENOENT, "no such task");
        return;
    }
    mt_head_tasks_cancel(h->tasks, t, req->force);
    reply.state = (Manta__TaskState)t->state;
    mt_head_persist_reply(h->persist, call, &reply.base);
}

/* ---- ListTasks ------------------------------------------------------------- */

/*
 * One listing's reply, built once for the rpc (h_list_tasks) and for the
 * dashboard's /api/tasks (list_json). The reply points into
 * the context and the tasks: use it, then list_release.
 */
struct list_ctx {
    const Manta__ListTasksRequest *req;
    struct mt_pb_arena arena;
    Manta__TaskInfo *infos;
    Manta__TaskInfo **ptrs;
    char (*gangs)[17];           /* gang ids of the members listed */
    size_t n, max;
    uint64_t matched;
};

static bool list_match(const Manta__ListTasksRequest *req,
                       const struct mt_head_task *t)
{
    return (!req->state || (int)req->state == (int)t->state) &&
           (!*req->node_id ||
            (t->node_id && strcmp(t->node_id, req->node_id) == 0)) &&
           (!*req->name ||
            (t->def.name && strcmp(t->def.name, req->name) == 0)) &&
           (!*req->owner_id ||
            (t->def.owner_id && strcmp(t->def.owner_id, req->owner_id) == 0));
}

static void fill_info(struct list_ctx *c, const struct mt_head_task *t,
                      Manta__TaskInfo *ti)
{
    manta__task_info__init(ti);
    ti->spec = mt_pb_alloc(&c->arena, sizeof(*ti->spec));
    if (!ti->spec || mt_pb_task_spec_view(&c->arena, &t->def, ti->spec) < 0)
        mt_xoom(sizeof(*ti->spec));
    ti->spec->task_id = (char *)t->id;
    ti->spec->retries_case = MANTA__TASK_SPEC__RETRIES_MAX_RETRIES;
    ti->spec->max_retries = t->max_retries; /* in force: -1 resolved */
    if (!c->req->show_env) { /* often secrets: only when asked for */
        ti->spec->env = NULL;
        ti->spec->n_env = 0;
    }
    ti->state = (Manta__TaskState)t->state;
    ti->node_id = t->node_id ? t->node_id : (char *)"";
    ti->attempt = t->attempt;
    ti->exit_code = t->exit_code;
    ti->error = t->error ? t->error : (char *)"";
    ti->submit_time_ms = t->submit_ms;
    ti->start_time_ms = t->start_ms;
    ti->end_time_ms = t->end_ms;
    ti->result_in_store = t->result_in_store;
    ti->result_size = t->result_size;
    ti->actor_died = t->actor_died;
    if (t->gang) {
        mt_head_gang_id_of(t->gang, c->gangs[c->n]);
        ti->gang_id = c->gangs[c->n];
        ti->gang_rank = t->gang_rank;
    }
}

static bool list_match_fn(void *arg, const struct mt_head_task *t)
{
    return list_match(arg, t);
}

/* One walk of the table and a heap of offset + max: no sort of it all. */
static void list_build(struct mt_head *h, const Manta__ListTasksRequest *req,
                       struct list_ctx *c, Manta__ListTasksReply *reply)
{
    struct mt_task_table *tt = mt_head_tasks_table(h->tasks);
    struct mt_head_task **page;
    size_t n;

    memset(c, 0, sizeof(*c));
    c->req = req;
    c->max = req->limit ? (req->limit > LIST_MAX ? LIST_MAX : req->limit)
                        : LIST_DEFAULT;
    if (c->max > tt->n)
        c->max = tt->n;
    c->infos = mt_xcalloc(c->max + 1, sizeof(*c->infos));
    c->ptrs = mt_xcalloc(c->max + 1, sizeof(*c->ptrs));
    c->gangs = mt_xcalloc(c->max + 1, sizeof(*c->gangs));
    page = mt_xcalloc(c->max + 1, sizeof(*page));
    c->matched = mt_task_table_newest(tt, list_match_fn, (void *)req,
                                      req->offset, c->max, page, &n);
    for (c->n = 0; c->n < n; c->n++) {
        fill_info(c, page[c->n], &c->infos[c->n]);
        c->ptrs[c->n] = &c->infos[c->n];
    }
    free(page);
    manta__list_tasks_reply__init(reply);
    reply->n_tasks = c->n;
    reply->tasks = c->ptrs;
    reply->total = c->matched;
}

static void list_release(struct list_ctx *c)
{
    mt_pb_arena_release(&c->arena);
    free(c->infos);
    free(c->ptrs);
    free(c->gangs);
}

static void h_list_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    Manta__ListTasksReply reply;
    struct list_ctx c;

    list_build(arg, (const Manta__ListTasksRequest *)m, &c, &reply);
    mt_rpc_reply(call, &reply.base);
    list_release(&c);
}

static void list_json(struct mt_head *h,
                      const struct mt_head_list_query *q,
                      struct mt_strbuf *out)
{
    Manta__ListTasksRequest req = MANTA__LIST_TASKS_REQUEST__INIT;
    Manta__ListTasksReply reply;
    struct list_ctx c;

    req.limit = q->limit;
    req.offset = q->offset;
    req.state = (Manta__TaskState)q->state;
    req.node_id = (char *)(q->node_id ? q->node_id : "");
    req.name = (char *)(q->name ? q->name : "");
    req.owner_id = (char *)(q->owner_id ? q->owner_id : "");
    list_build(h, &req, &c, &reply);
    mt_list_json_tasks(out, &reply);
    list_release(&c);
}

/* ---- ReportTasks ------------------------------------------------------------ */

static void take_update(const Manta__TaskUpdate *p, struct mt_task_update *u)
{
    memset(u, 0, sizeof(*u));
    u->task_id = p->task_id;
    u->attempt = p->attempt;
    u->state = (enum mt_head_task_state)p->state;
    u->exit_code = p->exit_code;
    u->error = p->error;
    u->system_failure = p->system_failure;
    u->fd = p->fd;
    u->output = p->output.data;
    u->output_len = p->output.len;
    u->result = p->result.data;
    u->result_len = p->result.len;
    u->result_in_store = p->result_in_store;
    u->result_size = p->result_size;
}

/* A pushed task's report (leases.h): its arguments are views on p's. */
static void file_leased(struct mt_head *h, const char *node_id,
                        const Manta__TaskUpdate *p)
{
    struct mt_leased_update lu;
    struct mt_task_arg *args = NULL;
    size_t n = p->n_args;

    if (n > MT_TASK_MAX_ARGS) { /* no task has that many: not filed */
        MT_WARN("node %s reported task %s with %zu arguments: ignored",
                node_id, p->task_id, n);
        return;
    }
    memset(&lu, 0, sizeof(lu));
    take_update(p, &lu.u);
    if (n)
        args = mt_xcalloc(n, sizeof(*args));
    for (size_t k = 0; k < n; k++) {
        args[k].data = p->args[k].data;
        args[k].len = p->args[k].len;
    }
    lu.args = args;
    lu.nargs = n;
    lu.code_path = (const char *const *)p->code_path;
    lu.n_code_path = p->n_code_path;
    lu.lease_id = p->lease_id;
    lu.name = p->name;
    lu.function = p->function;
    lu.hold_result = p->hold_result;
    lu.max_retries = p->max_retries;
    mt_head_leases_file(h->task_leases, node_id, &lu);
    free(args);
}

static void h_report_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                           void *arg)
{
    const Manta__ReportTasksRequest *req = (const Manta__ReportTasksRequest *)m;
    Manta__ReportTasksReply reply = MANTA__REPORT_TASKS_REPLY__INIT;
    struct mt_head *h = arg;

    if (!mt_node_table_speaks_for(mt_head_nodes_table(h->nodes), req->node_id,
                                  req->node_secret)) {
        mt_rpc_fail(call, -MT_EPERM, MT_NODE_WRONG_SECRET);
        return;
    }
    for (size_t i = 0; i < req->n_updates; i++) {
        const Manta__TaskUpdate *p = req->updates[i];
        struct mt_task_update u;
        struct mt_head_task *t;

        if (*p->lease_id) {
            file_leased(h, req->node_id, p);
            continue;
        }
        take_update(p, &u);
        t = mt_head_tasks_apply(h->tasks, req->node_id, &u);
        if (t && p->actor_ready &&
            p->state == MANTA__TASK_STATE__TASK_STATE_RUNNING)
            mt_head_actor_ready(h->actors, t, p->actor_pid);
    }
    mt_head_persist_reply(h->persist, call, &reply.base);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_submit_task, h_submit_task},
    {&mt_head_cancel_task, h_cancel_task},
    {&mt_head_list_tasks, h_list_tasks},
    {&mt_head_report_tasks, h_report_tasks},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_tasks = {
    .handlers = handlers,
    .list_json = list_json,
};
