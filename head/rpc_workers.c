/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_workers.c -- the head's client of WorkerService (see workers.h): the
 * channels to the nodes and the requests built from plain C at the edge.
 *
 * Dispatch batches: the tasks queued for one node during a decide pass go
 * in one RunTasks call at the flush. Each queued item is a RunTaskRequest
 * view (proto/convert.h) whose arrays live in the batch's arena until the
 * call is sent; answers are routed back by task number and attempt.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/workers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker_service.pb-c.h"

#define RUN_TIMEOUT_MS 10000
#define DELETE_TIMEOUT_MS 10000

/* A channel to one worker, opened on first use. */
struct link {
    char *node_id;
    char *address;
    struct mt_rpc_channel *ch;
};

/* One task of a batch. */
struct run_item {
    Manta__RunTaskRequest req;
    uint64_t num;
    uint32_t attempt;
};

/* The tasks of one node in this pass. */
struct run_batch {
    char *node_id;
    struct run_item *items;
    size_t n, cap;
    struct mt_pb_arena arena;    /* every view of the items */
};

struct mt_head_workers {
    struct mt_rpc_engine *eng;
    struct mt_node_table *nodes;
    mt_head_run_fn run_done;
    void *run_arg;
    bool closing;
    struct link *links;
    size_t n_links, cap_links;
    struct run_batch *runs;
    size_t n_runs, cap_runs;
};

/* What a sent batch needs to route the answers. */
struct run_sent {
    struct mt_head_workers *w;
    size_t n;
    struct {
        uint64_t num;
        uint32_t attempt;
    } v[];
};

struct mt_head_workers *mt_head_workers_create(struct mt_rpc_engine *eng,
                                               struct mt_node_table *nodes)
{
    struct mt_head_workers *w = mt_xcalloc(1, sizeof(*w));

    w->eng = eng;
    w->nodes = nodes;
    return w;
}

void mt_head_workers_on_run(struct mt_head_workers *w, mt_head_run_fn done,
                            void *arg)
{
    w->run_done = done;
    w->run_arg = arg;
}

/* ---- links --------------------------------------------------------------- */

void mt_head_workers_drop(struct mt_head_workers *w, const char *node_id)
{
    for (size_t i = 0; i < w->n_links; i++) {
        if (strcmp(w->links[i].node_id, node_id) != 0)
            continue;
        mt_rpc_channel_destroy(w->links[i].ch);
        free(w->links[i].node_id);
        free(w->links[i].address);
        w->links[i] = w->links[--w->n_links];
        return;
    }
}

/* The channel to live node node_id (opened on first use), or NULL. */
static struct mt_rpc_channel *link_get(struct mt_head_workers *w,
                                       const char *node_id)
{
    struct mt_node *n = node_id ? mt_node_table_find(w->nodes, node_id)
                                : NULL;
    struct link *l;

    if (!n || n->state != MT_NODE_ALIVE || w->closing)
        return NULL;
    for (size_t i = 0; i < w->n_links; i++) {
        l = &w->links[i];
        if (strcmp(l->node_id, n->id) != 0)
            continue;
        if (strcmp(l->address, n->address) == 0)
            return l->ch;
        mt_head_workers_drop(w, n->id); /* the worker moved */
        break;
    }
    mt_xgrow((void **)&w->links, &w->cap_links, w->n_links + 1,
             sizeof(*w->links));
    l = &w->links[w->n_links];
    if (mt_rpc_channel_create(w->eng, n->address, 0, &l->ch) < 0)
        return NULL;
    l->node_id = mt_xstrdup(n->id);
    l->address = mt_xstrdup(n->address);
    w->n_links++;
    return l->ch;
}

static void batch_release(struct run_batch *b)
{
    free(b->items);
    free(b->node_id);
    mt_pb_arena_release(&b->arena);
}

void mt_head_workers_close(struct mt_head_workers *w)
{
    w->closing = true;
    for (size_t i = 0; i < w->n_runs; i++)
        batch_release(&w->runs[i]);
    w->n_runs = 0;
    while (w->n_links)
        mt_head_workers_drop(w, w->links[0].node_id);
}

void mt_head_workers_destroy(struct mt_head_workers *w)
{
    if (!w)
        return;
    mt_head_workers_close(w);
    free(w->links);
    free(w->runs);
    free(w);
}

/* ---- RunTasks ------------------------------------------------------------ */

/* The open batch for node n (made on first use). */
static struct run_batch *batch_for(struct mt_head_workers *w,
                                   const struct mt_node *n)
{
    for (size_t i = 0; i < w->n_runs; i++)
        if (strcmp(w->runs[i].node_id, n->id) == 0)
            return &w->runs[i];
    mt_xgrow((void **)&w->runs, &w->cap_runs, w->n_runs + 1,
             sizeof(*w->runs));
    memset(&w->runs[w->n_runs], 0, sizeof(w->runs[0]));
    w->runs[w->n_runs].node_id = mt_xstrdup(n->id);
    return &w->runs[w->n_runs++];
}

static void *arena_alloc(struct mt_pb_arena *a, size_t n)
{
    void *p = mt_pb_alloc(a, n);

    if (!p)
        mt_xoom(n);
    return p;
}

/* The grant's environment: variables set, and explicit unsets. */
static void env_view(struct mt_pb_arena *a, const struct mt_env *env,
                     Manta__RunTaskRequest *req)
{
    Manta__Label *labs = arena_alloc(a, (env->n + 1) * sizeof(*labs));

    req->env = arena_alloc(a, (env->n + 1) * sizeof(*req->env));
    req->env_unset = arena_alloc(a, (env->n + 1) * sizeof(*req->env_unset));
    for (size_t i = 0; i < env->n; i++) {
        const struct mt_env_var *v = &env->vars[i];
        char *name = arena_alloc(a, strlen(v->name) + 1);

        strcpy(name, v->name);
        if (!v->value) { /* an explicit unset (accel_env.h) */
            req->env_unset[req->n_env_unset++] = name;
            continue;
        }
        manta__label__init(&labs[req->n_env]);
        labs[req->n_env].key = name;
        labs[req->n_env].value = arena_alloc(a, strlen(v->value) + 1);
        strcpy(labs[req->n_env].value, v->value);
        req->env[req->n_env] = &labs[req->n_env];
        req->n_env++;
    }
}

/* Where the reference arguments are: inline values or holders (their
 * bytes and addresses borrowed from the directory and the node table,
 * which do not change before the flush of this pass). */
static void locs_view(struct mt_pb_arena *a, const struct mt_obj_loc *locs,
                      size_t n, Manta__RunTaskRequest *req)
{
    Manta__ObjectArg *v = arena_alloc(a, (n + 1) * sizeof(*v));

    req->object_args = arena_alloc(a, (n + 1) * sizeof(*req->object_args));
    for (size_t i = 0; i < n; i++) {
        const struct mt_obj_loc *l = &locs[i];
        uint8_t *id = arena_alloc(a, MT_OBJECT_ID_LEN);

        manta__object_arg__init(&v[i]);
        memcpy(id, l->id.b, MT_OBJECT_ID_LEN);
        v[i].index = l->index;
        v[i].object_id.data = id;
        v[i].object_id.len = MT_OBJECT_ID_LEN;
        v[i].size = l->size;
        v[i].is_inline = l->is_inline;
        if (l->is_inline) {
            v[i].inline_data.data = (uint8_t *)l->data;
            v[i].inline_data.len = l->size;
        }
        v[i].holder_addresses = arena_alloc(a, (l->n_holders + 1) *
                                                   sizeof(char *));
        for (size_t j = 0; j < l->n_holders; j++)
            v[i].holder_addresses[v[i].n_holder_addresses++] =
                (char *)l->holders[j];
        req->object_args[req->n_object_args++] = &v[i];
    }
}

void mt_head_workers_queue(struct mt_head_workers *w, const struct mt_node *n,
                           const struct mt_head_task *t, struct mt_env *env,
                           struct mt_obj_loc *locs, size_t n_locs)
{
    struct run_batch *b = batch_for(w, n);
    struct run_item *it;
    char *id;

    mt_xgrow((void **)&b->items, &b->cap, b->n + 1, sizeof(*b->items));
    it = &b->items[b->n++];
    manta__run_task_request__init(&it->req);
    it->num = t->num;
    it->attempt = t->attempt;
    it->req.attempt = t->attempt;
    it->req.spec = arena_alloc(&b->arena, sizeof(*it->req.spec));
    if (mt_pb_task_spec_view(&b->arena, &t->def, it->req.spec) < 0)
        mt_xoom(sizeof(*it->req.spec));
    id = arena_alloc(&b->arena, sizeof(t->id));
    memcpy(id, t->id, sizeof(t->id));
    it->req.spec->task_id = id;
    env_view(&b->arena, env, &it->req);
    locs_view(&b->arena, locs, n_locs, &it->req);
    mt_env_release(env);
    free(locs);
}

static void on_run_done(void *arg, const struct mt_rpc_status *st,
                        const ProtobufCMessage *resp)
{
    const Manta__RunTasksReply *r = (const Manta__RunTasksReply *)resp;
    struct run_sent *sent = arg;

    for (size_t i = 0; i < sent->n; i++) {
        int err = mt_rpc_status_to_err(st->code);
        const char *why = st->message;

        if (!st->code && (i >= r->n_codes || i >= r->n_errors)) {
            err = -MT_EPROTO;
            why = "the worker's answer is missing tasks";
        } else if (!st->code) {
            err = r->codes[i] > 0 ? -r->codes[i] : r->codes[i];
            why = r->errors[i];
        }
        if (!sent->w->closing && sent->w->run_done)
            sent->w->run_done(sent->w->run_arg, sent->v[i].num,
                              sent->v[i].attempt, err, why);
    }
    free(sent);
}

static void batch_send(struct mt_head_workers *w, struct run_batch *b)
{
    Manta__RunTasksRequest req = MANTA__RUN_TASKS_REQUEST__INIT;
    Manta__RunTaskRequest **v = mt_xcalloc(b->n, sizeof(*v));
    struct run_sent *sent = mt_xmalloc(sizeof(*sent) +
                                       b->n * sizeof(sent->v[0]));
    struct mt_rpc_channel *ch = link_get(w, b->node_id);
    int rc = -MT_EUNAVAIL;

    sent->w = w;
    sent->n = b->n;
    for (size_t i = 0; i < b->n; i++) {
        v[i] = &b->items[i].req;
        sent->v[i].num = b->items[i].num;
        sent->v[i].attempt = b->items[i].attempt;
    }
    req.tasks = v;
    req.n_tasks = b->n;
    req.node_id = b->node_id;
    if (ch) /* the node may have died since the task was placed */
        rc = mt_rpc_unary(ch, &mt_worker_run_tasks, &req.base,
                          RUN_TIMEOUT_MS, 0, on_run_done, sent);
    free(v);
    if (rc < 0) {
        for (size_t i = 0; i < sent->n && w->run_done; i++)
            w->run_done(w->run_arg, sent->v[i].num, sent->v[i].attempt, rc,
                        "cannot start the call");
        free(sent);
    }
}

void mt_head_workers_flush(struct mt_head_workers *w)
{
    struct run_batch *runs = w->runs;
    size_t n = w->n_runs;

    /* Detached first: answers of batches that cannot be sent may queue
     * tasks again (a retry elsewhere), which go in the next pass. */
    w->runs = NULL;
    w->n_runs = w->cap_runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].n && !w->closing)
            batch_send(w, &runs[i]);
        batch_release(&runs[i]);
    }
    free(runs);
}

/* ---- StopTask, DeleteObjects ---------------------------------------------- */

static void on_best_effort_done(void *arg, const struct mt_rpc_status *st,
                                const ProtobufCMessage *resp)
{
    if (st->code)
        MT_DEBUG("%s failed: %s", (const char *)arg, st->message);
}

void mt_head_workers_stop_task(struct mt_head_workers *w, const char *node_id,
                               const char *task_id, uint32_t attempt,
                               bool force)
{
    Manta__StopTaskRequest req = MANTA__STOP_TASK_REQUEST__INIT;
    struct mt_rpc_channel *ch = link_get(w, node_id);

    if (!ch)
        return;
    req.task_id = (char *)task_id;
    req.attempt = attempt;
    req.force = force;
    mt_rpc_unary(ch, &mt_worker_stop_task, &req.base, RUN_TIMEOUT_MS, 0,
                 on_best_effort_done, (void *)"StopTask");
}

void mt_head_workers_delete_object(struct mt_head_workers *w,
                                   const char *node_id,
                                   const mt_object_id *id)
{
    Manta__DeleteObjectsRequest req = MANTA__DELETE_OBJECTS_REQUEST__INIT;
    struct mt_rpc_channel *ch = link_get(w, node_id);
    ProtobufCBinaryData b;

    if (!ch)
        return;
    b.data = (uint8_t *)id->b;
    b.len = MT_OBJECT_ID_LEN;
    req.n_object_ids = 1;
    req.object_ids = &b;
    mt_rpc_unary(ch, &mt_worker_delete_objects, &req.base, DELETE_TIMEOUT_MS,
                 0, on_best_effort_done, (void *)"DeleteObjects");
}

/* ---- actor calls ------------------------------------------------------------ */

struct call_ctx {
    struct mt_head_workers *w;
    mt_head_call_fn done;
    void *arg;
};

static void on_call_done(void *arg, const struct mt_rpc_status *st,
                         const ProtobufCMessage *resp)
{
    struct call_ctx c = *(struct call_ctx *)arg;

    free(arg);
    if (!c.w->closing)
        c.done(c.arg, st->code ? mt_rpc_status_to_err(st->code) : 0,
               st->message);
}

int mt_head_workers_call(struct mt_head_workers *w, const char *node_id,
                         const struct mt_head_task *t, uint64_t seq,
                         uint32_t incarnation, mt_head_call_fn done,
                         void *arg)
{
    Manta__RunTaskRequest req = MANTA__RUN_TASK_REQUEST__INIT;
    struct mt_rpc_channel *ch = link_get(w, node_id);
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__TaskSpec spec;
    struct call_ctx *c;
    int rc;

    if (!ch)
        return -MT_EUNAVAIL;
    if (mt_pb_task_spec_view(&a, &t->def, &spec) < 0)
        mt_xoom(sizeof(spec));
    spec.task_id = (char *)t->id;
    req.spec = &spec;
    req.attempt = t->attempt;
    req.actor_seq = seq;
    req.actor_attempt = incarnation;
    c = mt_xmalloc(sizeof(*c));
    c->w = w;
    c->done = done;
    c->arg = arg;
    rc = mt_rpc_unary(ch, &mt_worker_run_task, &req.base, RUN_TIMEOUT_MS, 0,
                      on_call_done, c);
    mt_pb_arena_release(&a);
    if (rc < 0)
        free(c);
    return rc;
}
