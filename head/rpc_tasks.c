/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_tasks.c -- the head's task service, rpc side: SubmitTask, WatchTask,
 * CancelTask, ListTasks and ReportTasks handlers; dispatch of placed tasks
 * to their workers (WorkerService.RunTask / StopTask); retries when a
 * worker dies. Generated protobuf types stay in this file (house style H15);
 * the task table (tasks.h) keeps each spec as an opaque serialized blob.
 *
 * Everything a client or worker sends is validated here; a bad field ends
 * the call with INVALID_ARGUMENT and a reason.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sched/accel_env.h"
#include "worker_service.pb-c.h"

#define MAX_ARGS 4096
#define MAX_ARGV_BYTES (1u << 20)
#define MAX_ARG_BYTES (16u << 20)
#define MAX_RESULT_BYTES (8u << 20)
#define MAX_STR 4096
#define WATCH_MAX_BACKLOG 4096
#define RUN_TIMEOUT_MS 10000
#define LIST_DEFAULT 100
#define LIST_MAX 10000

struct mt_task_watcher {
    struct mt_head *h;
    struct mt_rpc_call *call;
    uint64_t num;
    bool output;
    struct mt_task_watcher *next;
};

/* ---- validation and conversion ------------------------------------------- */

/* Function tasks: name, arguments and code path within limits. */
static const char *check_function(const Manta__TaskSpec *s)
{
    size_t bytes = 0;

    if (!s->function[0] || strlen(s->function) > 512)
        return "function must be \"lib.so:name\" or a registered name";
    if (s->n_args > MAX_ARGS || s->n_code_path > 64)
        return "too many arguments or code path entries";
    for (size_t i = 0; i < s->n_args; i++)
        bytes += s->args[i].len;
    for (size_t i = 0; i < s->n_code_path; i++)
        if (strlen(s->code_path[i]) > MAX_STR)
            return "code path entry too long";
    if (bytes > MAX_ARG_BYTES)
        return "arguments larger than 16 MiB: put them in the object store";
    return NULL;
}

/* RET NULL or why the spec cannot run; *err says how to answer. */
static const char *check_spec(const Manta__TaskSpec *s, int *err)
{
    size_t bytes = 0;

    *err = -MT_EINVAL;
    if (s->kind == MANTA__TASK_KIND__TASK_KIND_FUNCTION ||
        s->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE ||
        s->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD) {
        const char *why = check_function(s);
        if (why)
            return why;
        if (s->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD &&
            strlen(s->actor_id) != 16)
            return "actor_id must name an actor (16 hex digits)";
        if (strlen(s->actor_name) > 256 || s->max_restarts < -1 ||
            strlen(s->owner_id) > 128)
            return "actor name over 256 bytes, owner id over 128, or "
                   "max_restarts below -1";
    } else if (s->kind != MANTA__TASK_KIND__TASK_KIND_COMMAND) {
        return "kind must be TASK_KIND_COMMAND, TASK_KIND_FUNCTION or an "
               "actor kind";
    } else if (s->n_argv == 0 || !s->argv[0][0]) {
        return "argv must name a program";
    }
    if (s->n_argv > MAX_ARGS)
        return "too many arguments";
    for (size_t i = 0; i < s->n_argv; i++)
        bytes += strlen(s->argv[i]) + 1;
    for (size_t i = 0; i < s->n_env; i++) {
        if (!s->env[i]->key[0] || strchr(s->env[i]->key, '='))
            return "environment names must be non-empty and without '='";
        bytes += strlen(s->env[i]->key) + strlen(s->env[i]->value) + 2;
    }
    for (size_t i = 0; i < s->n_env_unset; i++) {
        if (!s->env_unset[i][0] || strchr(s->env_unset[i], '='))
            return "environment names must be non-empty and without '='";
        bytes += strlen(s->env_unset[i]) + 1;
    }
    if (bytes > MAX_ARGV_BYTES || strlen(s->cwd) > MAX_STR ||
        strlen(s->name) > 256)
        return "arguments, environment, cwd or name too large";
    if (s->n_resources > MT_RES_SET_MAX)
        return "too many resource kinds in one task (at most 8)";
    for (size_t i = 0; i < s->n_resources; i++) {
        if (!mt_qty_valid_name(s->resources[i]->name))
            return "bad resource name";
        if (s->resources[i]->quantity < 0)
            return "negative resource quantity";
    }
    if (s->n_label_selector > MT_SEL_MAX_EXPRS)
        return "too many label selector expressions (at most 8)";
    for (size_t i = 0; i < s->n_label_selector; i++) {
        const Manta__LabelMatch *m = s->label_selector[i];
        if (!m->key[0] || m->n_values > MT_SEL_MAX_VALUES ||
            (unsigned)m->op > MANTA__LABEL_MATCH__OP__OP_NOT_EXISTS)
            return "bad label selector expression";
    }
    if (s->strategy > MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP)
        return "unknown scheduling strategy";
    return NULL;
}

/* Storage for a scheduler request built from a TaskSpec. */
struct sched_req {
    struct mt_task_spec spec;
    struct mt_label_expr exprs[MT_SEL_MAX_EXPRS];
    struct mt_label_selector sel;
};

static const enum mt_label_op label_ops[] = {
    MT_LABEL_EQ, MT_LABEL_NE, MT_LABEL_IN,
    MT_LABEL_NOT_IN, MT_LABEL_EXISTS, MT_LABEL_NOT_EXISTS,
};

/* Fill r from s (s must outlive r). RET 0 or -MT_E* with why set. */
static int build_sched_req(struct mt_head *h, struct mt_task *t,
                           const Manta__TaskSpec *s, struct sched_req *r,
                           const char **why)
{
    struct mt_sched *sc = h->tq->sched;
    bool any = false;

    mt_task_spec_init(&r->spec, t->num);
    for (size_t i = 0; i < s->n_resources; i++) {
        int id = mt_sched_resource_id(sc, s->resources[i]->name);
        if (id < 0 || mt_res_set_add(&r->spec.res, id,
                                     s->resources[i]->quantity) < 0) {
            *why = "too many distinct resource names in the cluster";
            return -MT_EINVAL;
        }
        any = true;
    }
    if (!any) /* default: one CPU, as Ray does for tasks */
        mt_res_set_add(&r->spec.res, mt_sched_resource_id(sc, "CPU"),
                       MT_QTY_SCALE);
    r->spec.priority = s->priority;
    for (size_t i = 0; i < s->n_label_selector; i++) {
        r->exprs[i].key = s->label_selector[i]->key;
        r->exprs[i].op = label_ops[s->label_selector[i]->op];
        r->exprs[i].values = (const char *const *)s->label_selector[i]->values;
        r->exprs[i].nvalues = s->label_selector[i]->n_values;
    }
    r->sel.exprs = r->exprs;
    r->sel.n = s->n_label_selector;
    if (r->sel.n)
        r->spec.selector = &r->sel;
    if (s->strategy == MANTA__SCHEDULING_STRATEGY__STRATEGY_DEFAULT &&
        s->n_arg_refs && !r->sel.n &&
        mt__objects_affinity(h, s, &r->spec.affinity_node)) {
        /* Prefer the node holding the biggest object argument. */
        r->spec.strategy = MT_STRATEGY_NODE_AFFINITY;
        r->spec.affinity_soft = true;
    } else if (s->strategy == MANTA__SCHEDULING_STRATEGY__STRATEGY_SPREAD) {
        r->spec.strategy = MT_STRATEGY_SPREAD;
    } else if (s->strategy ==
               MANTA__SCHEDULING_STRATEGY__STRATEGY_NODE_AFFINITY) {
        struct mt_node *n = mt_node_table_find(&h->nodes, s->affinity_node_id);
        if (!n || n->sched_node == UINT32_MAX) {
            *why = "affinity node is not a live node of this cluster";
            return -MT_EINVAL;
        }
        r->spec.strategy = MT_STRATEGY_NODE_AFFINITY;
        r->spec.affinity_node = n->sched_node;
        r->spec.affinity_soft = s->affinity_soft;
    } else if (s->strategy ==
               MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP) {
        struct mt_pg *pg = mt__head_pg_find(h, s->placement_group_id);
        if (!pg || pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED) {
            *why = "no such placement group (or it was removed)";
            return -MT_ENOENT;
        }
        if (s->bundle_index < -1 || s->bundle_index >= (int32_t)pg->nbundles) {
            *why = "bundle index out of range (-1 means any bundle)";
            return -MT_EINVAL;
        }
        r->spec.strategy = MT_STRATEGY_PG;
        r->spec.pg = pg->num;
        r->spec.bundle = s->bundle_index;
        t->pg = pg->num;
    }
    return 0;
}

static Manta__TaskSpec *spec_of(const struct mt_task *t)
{
    return manta__task_spec__unpack(NULL, t->spec_len, t->spec);
}

/* Queue t in the scheduler. RET 0 or -MT_E* with why set. */
static int enqueue(struct mt_head *h, struct mt_task *t, const char **why)
{
    Manta__TaskSpec *s = spec_of(t);
    struct sched_req r;
    int rc;

    if (!s) {
        *why = "corrupt task spec";
        return -MT_EPROTO;
    }
    rc = build_sched_req(h, t, s, &r, why);
    if (rc == 0) {
        rc = mt_sched_on_task_submitted(h->tq->sched, &r.spec,
                                        (uint64_t)mt_now_mono_ms());
        if (rc < 0)
            *why = rc == -MT_EINVAL ? "the scheduler rejected the request "
                                      "(bad resources, GPU not whole above 1, "
                                      "or bad selector)"
                                    : mt_strerror(rc);
    }
    manta__task_spec__free_unpacked(s, NULL);
    if (rc == 0)
        mt__sched_kick(h);
    return rc;
}

/* ---- watchers ------------------------------------------------------------- */

void mt__task_fill_event(const struct mt_task *t, void *event)
{
    Manta__TaskEvent *ev = event;

    manta__task_event__init(ev);
    ev->state = (Manta__TaskState)t->state;
    ev->exit_code = t->exit_code;
    ev->error = t->error ? t->error : (char *)"";
    ev->node_id = t->node_id ? t->node_id : (char *)"";
    ev->attempt = t->attempt;
    ev->actor_died = t->actor_died;
    if (t->state == MT_TASK_FINISHED && t->result) {
        ev->result.data = t->result;
        ev->result.len = t->result_len;
    }
    ev->result_in_store = t->result_in_store;
    ev->result_size = t->result_size;
}

static void watcher_unlink(struct mt_task *t, struct mt_task_watcher *w)
{
    struct mt_task_watcher **pp = &t->watchers;

    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    free(w);
}

static void on_watcher_cancel(void *arg)
{
    struct mt_task_watcher *w = arg;
    struct mt_task *t = mt_task_find(&w->h->tq->table, w->num);

    mt_rpc_fail(w->call, -MT_ECANCELED, "watcher went away");
    if (t)
        watcher_unlink(t, w);
    else
        free(w);
}

/* Send ev; drop a watcher that cannot keep up. RET false if dropped. */
static bool watcher_send(struct mt_task *t, struct mt_task_watcher *w,
                         const Manta__TaskEvent *ev)
{
    if (mt_rpc_stream_backlog(w->call) > WATCH_MAX_BACKLOG ||
        mt_rpc_stream_send(w->call, &ev->base) < 0) {
        mt_rpc_fail(w->call, -MT_ENOSPC, "watcher too slow; output lost");
        watcher_unlink(t, w);
        return false;
    }
    return true;
}

void mt__task_notify(struct mt_head *h, struct mt_task *t)
{
    struct mt_task_watcher *w, *next;
    Manta__TaskEvent ev;

    mt__task_fill_event(t, &ev);
    for (w = t->watchers; w; w = next) {
        next = w->next;
        if (!watcher_send(t, w, &ev))
            continue;
        if (mt_task_terminal(t)) {
            mt_rpc_stream_finish(w->call);
            watcher_unlink(t, w);
        }
    }
    if (t->cw)
        mt__cw_task_event(h, t);
    if (t->gang)
        mt__gang_task_changed(h, t);
}

static void notify_output(struct mt_head *h, struct mt_task *t, uint32_t fd,
                          const uint8_t *data, size_t len)
{
    struct mt_task_watcher *w, *next;
    Manta__TaskEvent ev;

    mt__task_fill_event(t, &ev);
    ev.result.len = 0;
    ev.output.data = (uint8_t *)data;
    ev.output.len = len;
    ev.fd = fd;
    for (w = t->watchers; w; w = next) {
        next = w->next;
        if (w->output)
            watcher_send(t, w, &ev);
    }
    if (t->cw && t->cw_output)
        mt__cw_task_output(h, t, fd, data, len);
}

/* ---- links to workers ------------------------------------------------------ */

struct mt_rpc_channel *mt__link_get(struct mt_head *h, const struct mt_node *n)
{
    struct mt_head_tasks *q = h->tq;
    struct mt_worker_link *l;

    for (size_t i = 0; i < q->n_links; i++) {
        l = &q->links[i];
        if (strcmp(l->node_id, n->id) != 0)
            continue;
        if (strcmp(l->address, n->address) == 0)
            return l->ch;
        mt__link_drop(h, n->id); /* the worker moved */
        break;
    }
    mt_xgrow((void **)&q->links, &q->cap_links, q->n_links + 1,
             sizeof(*q->links));
    l = &q->links[q->n_links];
    if (mt_rpc_channel_create(h->eng, n->address, 0, &l->ch) < 0)
        return NULL;
    l->node_id = mt_xstrdup(n->id);
    l->address = mt_xstrdup(n->address);
    q->n_links++;
    return l->ch;
}

void mt__link_drop(struct mt_head *h, const char *node_id)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; i < q->n_links; i++) {
        if (strcmp(q->links[i].node_id, node_id) != 0)
            continue;
        mt_rpc_channel_destroy(q->links[i].ch);
        free(q->links[i].node_id);
        free(q->links[i].address);
        q->links[i] = q->links[--q->n_links];
        return;
    }
}

/* ---- dispatch ------------------------------------------------------------------ */

static void stop_on_worker(struct mt_head *h, struct mt_task *t, bool force);

static void release_grant(struct mt_head *h, struct mt_task *t)
{
    if (t->has_grant)
        mt_sched_on_task_finished(h->tq->sched, t->grant);
    t->has_grant = false;
}

static void end_task(struct mt_head *h, struct mt_task *t,
                     enum mt_task_state state, int exit_code,
                     const char *error)
{
    if (mt_task_terminal(t))
        return;
    release_grant(h, t);
    mt_task_finish(&h->tq->table, t, state, exit_code, error,
                   mt_now_wall_ms());
    h->tq->finished++;
    mt__objects_on_task_end(h, t);
    MT_DEBUG("task %s %s exit=%d %s", t->id, mt_task_state_name(t->state),
             t->exit_code, t->error ? t->error : "");
    mt__task_notify(h, t);
    mt__actor_task_ended(h, t);
    mt__sched_kick(h);
}

void mt__task_end(struct mt_head *h, struct mt_task *t,
                  enum mt_task_state state, int exit_code, const char *error)
{
    end_task(h, t, state, exit_code, error);
}

/* The worker's answer for one dispatched task: err 0 (taken) or why not. */
static void run_result(struct mt_head *h, uint64_t num, uint32_t attempt,
                       int err, const char *why)
{
    struct mt_task *t = h->tq ? mt_task_find(&h->tq->table, num) : NULL;

    if (!t || t->attempt != attempt || t->state != MT_TASK_SCHEDULED ||
        h->tq->closing)
        return;
    if (err == 0 || err == -MT_EEXIST) {
        t->state = MT_TASK_RUNNING;
        if (!t->start_ms)
            t->start_ms = mt_now_wall_ms();
        mt__task_notify(h, t);
        if (t->cancel_requested)
            stop_on_worker(h, t, false);
    } else if (err == -MT_EINVAL || err == -MT_ENOTSUP) {
        char *msg = mt_xasprintf("worker refused the task: %s", why);
        end_task(h, t, MT_TASK_FAILED, -1, msg);
        free(msg);
    } else {
        MT_WARN("task %s: RunTasks on node %s failed: %s", t->id, t->node_id,
                why);
        mt__task_node_lost(h, t);
    }
}

/*
 * Dispatch batches: the tasks placed on one node by one decide pass go to
 * its worker in one RunTasks call (mt__task_dispatch_flush). Each item owns
 * its request's spec and environment until the call is sent.
 */
struct run_item {
    Manta__RunTaskRequest req;
    Manta__Label *labs, **labp;
    char **unset;                /* req.env_unset: names borrowed from env */
    struct mt_env env;
    void *objs;                  /* req.object_args (rpc_objects.c) */
    uint64_t num;
    uint32_t attempt;
};

struct run_batch {
    char *node_id;
    struct run_item *items;
    size_t n, cap;
};

/* What a sent batch needs to route the answers. */
struct run_sent {
    struct mt_head *h;
    size_t n;
    struct {
        uint64_t num;
        uint32_t attempt;
    } v[];
};

static void item_release(struct run_item *it)
{
    mt__objects_free_run(it->objs);
    if (it->req.spec)
        manta__task_spec__free_unpacked(it->req.spec, NULL);
    free(it->labs);
    free(it->labp);
    free(it->unset);
    mt_env_release(&it->env);
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
        run_result(sent->h, sent->v[i].num, sent->v[i].attempt, err, why);
    }
    free(sent);
}

/* The open batch for node n (made on first use). */
static struct run_batch *batch_for(struct mt_head *h, struct mt_node *n)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; i < q->n_runs; i++)
        if (strcmp(q->runs[i].node_id, n->id) == 0)
            return &q->runs[i];
    mt_xgrow((void **)&q->runs, &q->cap_runs, q->n_runs + 1,
             sizeof(*q->runs));
    memset(&q->runs[q->n_runs], 0, sizeof(q->runs[0]));
    q->runs[q->n_runs].node_id = mt_xstrdup(n->id);
    return &q->runs[q->n_runs++];
}

static void batch_send(struct mt_head *h, struct run_batch *b)
{
    Manta__RunTasksRequest req = MANTA__RUN_TASKS_REQUEST__INIT;
    Manta__RunTaskRequest **v = mt_xcalloc(b->n, sizeof(*v));
    struct run_sent *sent = mt_xmalloc(sizeof(*sent) +
                                       b->n * sizeof(sent->v[0]));
    struct mt_node *n = mt_node_table_find(&h->nodes, b->node_id);
    struct mt_rpc_channel *ch = n && n->state == MT_NODE_ALIVE
                                    ? mt__link_get(h, n) : NULL;
    int rc = -MT_EUNAVAIL;

    sent->h = h;
    sent->n = b->n;
    for (size_t i = 0; i < b->n; i++) {
        v[i] = &b->items[i].req;
        sent->v[i].num = b->items[i].num;
        sent->v[i].attempt = b->items[i].attempt;
    }
    req.tasks = v;
    req.n_tasks = b->n;
    if (ch) /* the node may have died since the task was placed */
        rc = mt_rpc_unary(ch, &mt_worker_run_tasks, &req.base,
                          RUN_TIMEOUT_MS, 0, on_run_done, sent);
    free(v);
    if (rc < 0) {
        for (size_t i = 0; i < sent->n; i++)
            run_result(h, sent->v[i].num, sent->v[i].attempt, rc,
                       "cannot start the call");
        free(sent);
    }
}

void mt__task_dispatch_flush(struct mt_head *h)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; i < q->n_runs; i++) {
        struct run_batch *b = &q->runs[i];

        if (b->n && !q->closing)
            batch_send(h, b);
        for (size_t k = 0; k < b->n; k++)
            item_release(&b->items[k]);
        free(b->items);
        free(b->node_id);
    }
    q->n_runs = 0;
}

/* The accelerator env of a grant, computed by sched (accel_env.h): GPUs
 * and TPU chips. A TPU grant on a host without a slice identity (chips
 * offered by --resources) still names its chips. */
static void grant_env(struct mt_head *h, const struct mt_task *t,
                      const struct mt_node *n, const struct mt_grant *g,
                      struct mt_env *env)
{
    char chips[16 * MT_MAX_TPU_CHIPS] = "";
    size_t len = 0;
    int rc = mt_sched_grant_env(h->tq->sched, g, env);

    /* Like CUDA_VISIBLE_DEVICES="": a task granted no chips on a TPU host
     * must not open the chips of the tasks that were. A gang member's chips
     * are its gang's (TPU_VISIBLE_CHIPS comes with the gang's env). */
    if (!g->tpu_chips && !t->gang && n &&
        mt_qty_list_get(&n->total, "TPU") > 0)
        mt_env_set(env, "TPU_VISIBLE_CHIPS", "");
    if (rc == 0 || !g->tpu_chips)
        return;
    MT_DEBUG("grant %llu: TPU env without a slice shape: %s",
             (unsigned long long)g->handle, mt_strerror(rc));
    for (uint32_t m = g->tpu_chips; m && len < sizeof(chips) - 16;
         m &= m - 1)
        len += (size_t)snprintf(chips + len, sizeof(chips) - len, "%s%d",
                                len ? "," : "", __builtin_ctz(m));
    mt_env_set(env, "TPU_VISIBLE_CHIPS", chips);
}

const char *mt__task_spec_check(const void *spec, int *err)
{
    return check_spec(spec, err);
}

static struct mt_node *node_by_handle(struct mt_head *h, uint32_t handle)
{
    for (size_t i = 0; i < h->nodes.n; i++)
        if (h->nodes.v[i]->sched_node == handle &&
            h->nodes.v[i]->state == MT_NODE_ALIVE)
            return h->nodes.v[i];
    return NULL;
}

void mt__task_dispatch(struct mt_head *h, struct mt_task *t,
                       const struct mt_grant *g)
{
    struct mt_node *n = node_by_handle(h, g->node);
    Manta__TaskSpec *spec;
    struct run_batch *b;
    struct run_item *it;

    t->state = MT_TASK_SCHEDULED;
    t->grant = g->handle;
    t->has_grant = true;
    t->node_handle = g->node;
    t->infeasible = false;
    mt_task_set_error(t, NULL);
    free(t->node_id);
    t->node_id = mt_xstrdup(n ? n->id : "");
    h->tq->dispatched++;
    spec = n ? spec_of(t) : NULL;
    mt__task_notify(h, t);
    if (!spec) {
        mt__task_node_lost(h, t);
        return;
    }
    b = batch_for(h, n);
    mt_xgrow((void **)&b->items, &b->cap, b->n + 1, sizeof(*b->items));
    it = &b->items[b->n++];
    memset(it, 0, sizeof(*it));
    manta__run_task_request__init(&it->req);
    it->req.spec = spec;
    it->req.attempt = t->attempt;
    it->num = t->num;
    it->attempt = t->attempt;
    mt_env_init(&it->env);
    grant_env(h, t, n, g, &it->env);
    it->labs = mt_xcalloc(it->env.n + 1, sizeof(*it->labs));
    it->labp = mt_xcalloc(it->env.n + 1, sizeof(*it->labp));
    it->unset = mt_xcalloc(it->env.n + 1, sizeof(*it->unset));
    for (size_t i = 0; i < it->env.n; i++) {
        const struct mt_env_var *v = &it->env.vars[i];

        if (!v->value) { /* an explicit unset (accel_env.h) */
            it->unset[it->req.n_env_unset++] = v->name;
            continue;
        }
        manta__label__init(&it->labs[it->req.n_env]);
        it->labs[it->req.n_env].key = v->name;
        it->labs[it->req.n_env].value = v->value;
        it->labp[it->req.n_env] = &it->labs[it->req.n_env];
        it->req.n_env++;
    }
    it->req.env = it->labp;
    it->req.env_unset = it->unset;
    it->objs = mt__objects_fill_run(h, n, &it->req);
}

void mt__task_infeasible(struct mt_head *h, struct mt_task *t)
{
    Manta__TaskSpec *s = spec_of(t);
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char q[32];

    mt_strbuf_adds(&sb, "infeasible: no node in the cluster can ever satisfy {");
    for (size_t i = 0; s && i < s->n_resources; i++)
        mt_strbuf_addf(&sb, "%s%s: %s", i ? ", " : "", s->resources[i]->name,
                       mt_qty_format(s->resources[i]->quantity, q, sizeof(q)));
    if (s && s->n_resources == 0)
        mt_strbuf_adds(&sb, "CPU: 1");
    mt_strbuf_addf(&sb, "}%s; it stays pending until such a node joins",
                   s && s->n_label_selector ? " with its label selector" : "");
    t->infeasible = true;
    mt_task_set_error(t, mt_strbuf_str(&sb));
    MT_WARN("task %s %s", t->id, mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    if (s)
        manta__task_spec__free_unpacked(s, NULL);
    mt__task_notify(h, t);
}

void mt__task_unplaceable(struct mt_head *h, struct mt_task *t, int err)
{
    end_task(h, t, MT_TASK_FAILED, -1, mt_strerror(err));
}

void mt__task_fail(struct mt_head *h, struct mt_task *t, const char *why)
{
    if (t->state == MT_TASK_PENDING)
        mt_sched_task_cancel(h->tq->sched, t->num);
    end_task(h, t, MT_TASK_FAILED, -1, why);
}

void mt__task_args_ready(struct mt_head *h, struct mt_task *t)
{
    const char *why = NULL;

    t->state = MT_TASK_PENDING;
    if (enqueue(h, t, &why) < 0) {
        end_task(h, t, MT_TASK_FAILED, -1, why);
        return;
    }
    mt__task_notify(h, t);
}

/*
 * A system failure (lost node, dead executor): run the task again while
 * max_retries allows, else fail it with what (e.g. "worker died: ...").
 */
static void retry_or_fail(struct mt_head *h, struct mt_task *t,
                          const char *what)
{
    char *msg;
    const char *why = NULL;

    if (t->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD) {
        mt__actor_call_lost(h, t, what);
        return;
    }
    release_grant(h, t);
    if (t->cancel_requested) {
        end_task(h, t, MT_TASK_CANCELLED, -1, "cancelled (its worker died)");
        return;
    }
    if (t->attempt >= (uint32_t)t->max_retries) {
        msg = mt_xasprintf("%s (attempt %u of %d)", what, t->attempt + 1,
                           t->max_retries + 1);
        end_task(h, t, MT_TASK_FAILED, -1, msg);
        free(msg);
        return;
    }
    t->attempt++;
    h->tq->retried++;
    t->state = MT_TASK_PENDING;
    msg = mt_xasprintf("%s; retrying (attempt %u of %d)", what,
                       t->attempt + 1, t->max_retries + 1);
    MT_WARN("task %s: %s", t->id, msg);
    mt_task_set_error(t, msg);
    free(msg);
    if (t->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE)
        mt__actor_restarting(h, t);
    if (enqueue(h, t, &why) < 0) {
        end_task(h, t, MT_TASK_FAILED, -1, why);
        return;
    }
    mt__task_notify(h, t);
}

void mt__task_node_lost(struct mt_head *h, struct mt_task *t)
{
    char *what = mt_xasprintf("worker died: node %s was lost while running "
                              "the task",
                              t->node_id && *t->node_id ? t->node_id : "?");

    retry_or_fail(h, t, what);
    free(what);
}

/* ---- stop ------------------------------------------------------------------- */

static void on_stop_done(void *arg, const struct mt_rpc_status *st,
                         const ProtobufCMessage *resp)
{
    if (st->code != 0)
        MT_WARN("StopTask failed: %s", st->message);
}

static void stop_on_worker(struct mt_head *h, struct mt_task *t, bool force)
{
    Manta__StopTaskRequest req = MANTA__STOP_TASK_REQUEST__INIT;
    struct mt_node *n = mt_node_table_find(&h->nodes, t->node_id);
    struct mt_rpc_channel *ch = n ? mt__link_get(h, n) : NULL;

    if (!ch)
        return;
    req.task_id = t->id;
    req.attempt = t->attempt;
    req.force = force;
    mt_rpc_unary(ch, &mt_worker_stop_task, &req.base, RUN_TIMEOUT_MS, 0,
                 on_stop_done, NULL);
}

void mt__task_kill_on_worker(struct mt_head *h, struct mt_task *t)
{
    if (t->state == MT_TASK_RUNNING)
        stop_on_worker(h, t, true);
}

void mt__task_stop(struct mt_head *h, struct mt_task *t, const char *reason)
{
    if (mt_task_terminal(t))
        return;
    mt_task_set_error(t, reason);
    if (t->state == MT_TASK_PENDING ||
        t->state == MT_TASK_WAITING_FOR_ARGS) {
        if (t->state == MT_TASK_PENDING)
            mt_sched_task_cancel(h->tq->sched, t->num);
        end_task(h, t, MT_TASK_CANCELLED, -1, reason);
        return;
    }
    t->cancel_requested = true;
    if (t->state == MT_TASK_RUNNING)
        stop_on_worker(h, t, true);
}

/* ---- handlers ---------------------------------------------------------------- */

static char *summary_of(const Manta__TaskSpec *s)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *out;

    if (s->kind == MANTA__TASK_KIND__TASK_KIND_FUNCTION)
        mt_strbuf_addf(&sb, "%s(%zu args)", s->function, s->n_args);
    for (size_t i = 0; i < s->n_argv && sb.len < 200; i++)
        mt_strbuf_addf(&sb, "%s%s", i ? " " : "", s->argv[i]);
    if (sb.len > 200)
        sb.buf[200] = '\0';
    out = mt_xstrdup(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return out;
}

struct mt_task *mt__task_add(struct mt_head *h, const void *spec,
                             int max_retries)
{
    const Manta__TaskSpec *s = spec;
    char *summary = summary_of(s);
    struct mt_task *t = mt_task_new(&h->tq->table, s->name, summary,
                                    max_retries, mt_now_wall_ms());
    Manta__TaskSpec copy = *s;
    uint8_t *blob;
    size_t len;

    free(summary);
    t->kind = (int)s->kind;
    copy.task_id = t->id;
    len = manta__task_spec__get_packed_size(&copy);
    blob = mt_xmalloc(len ? len : 1);
    manta__task_spec__pack(&copy, blob);
    mt_task_set_spec(t, blob, len);
    free(blob);
    return t;
}

int mt__task_enqueue(struct mt_head *h, struct mt_task *t, const char **why)
{
    return enqueue(h, t, why);
}

static bool actor_kind(const Manta__TaskSpec *s)
{
    return s->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE ||
           s->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD;
}

struct mt_task *mt__task_submit(struct mt_head *h, const void *spec,
                                const char **why, int *err)
{
    const Manta__TaskSpec *s = spec;
    static char msg[512];
    struct mt_task *t;
    int rc;

    *err = -MT_EINVAL;
    if ((*why = s ? check_spec(s, err) : "missing spec"))
        return NULL;
    if (actor_kind(s)) {
        *why = "actors are created and called with SubmitTask, one at a time";
        return NULL;
    }
    t = mt__task_add(h, s, s->max_retries);
    /* Object arguments (rpc_objects.c). msg is read by the caller before
     * the next submit (loop thread only). */
    rc = mt__objects_on_submit(h, t, s, msg, sizeof(msg));
    if (rc < 0 || rc == 2) {
        end_task(h, t, MT_TASK_FAILED, -1, msg);
        *why = msg;
        *err = rc;
        return rc < 0 ? NULL : t;
    }
    if (rc == 1) {
        t->state = MT_TASK_WAITING_FOR_ARGS;
        return t;
    }
    if (enqueue(h, t, why) < 0) {
        *err = -MT_EINVAL;
        end_task(h, t, MT_TASK_FAILED, -1, *why);
        return NULL;
    }
    return t;
}

void mt__h_submit_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__SubmitTaskRequest *req = (const Manta__SubmitTaskRequest *)m;
    Manta__SubmitTaskReply reply = MANTA__SUBMIT_TASK_REPLY__INIT;
    struct mt_head *h = arg;
    int err = -MT_EINVAL;
    const char *why = req->spec ? check_spec(req->spec, &err) : "missing spec";
    struct mt_task *t;

    if (!why && actor_kind(req->spec)) {
        mt__actor_submit(h, call, req->spec);
        return;
    }
    t = mt__task_submit(h, req->spec, &why, &err);
    if (!t) {
        mt_rpc_fail(call, err, why);
        return;
    }
    reply.task_id = t->id;
    mt_rpc_reply(call, &reply.base);
}

void mt__h_watch_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg)
{
    const Manta__WatchTaskRequest *req = (const Manta__WatchTaskRequest *)m;
    struct mt_head *h = arg;
    struct mt_task *t = mt_task_find_id(&h->tq->table, req->task_id);
    struct mt_task_watcher *w;
    Manta__TaskEvent ev;

    if (!t) {
        mt_rpc_fail(call, -MT_ENOENT, "no such task");
        return;
    }
    w = mt_xcalloc(1, sizeof(*w));
    w->h = h;
    w->call = call;
    w->num = t->num;
    w->output = req->output;
    w->next = t->watchers;
    t->watchers = w;
    /* Current state, then buffered output; a finished task's final state
     * comes last so its output always precedes it. */
    mt__task_fill_event(t, &ev);
    if (!mt_task_terminal(t))
        mt_rpc_stream_send(call, &ev.base);
    if (req->output) {
        if (t->out_dropped) {
            char note[96];
            snprintf(note, sizeof(note),
                     "[manta: %llu earlier bytes of output dropped]\n",
                     (unsigned long long)t->out_dropped);
            mt__task_fill_event(t, &ev);
            ev.output.data = (uint8_t *)note;
            ev.output.len = strlen(note);
            ev.fd = 2;
            mt_rpc_stream_send(call, &ev.base);
        }
        for (struct mt_task_output *o = t->out_head; o; o = o->next) {
            mt__task_fill_event(t, &ev);
            ev.output.data = o->data;
            ev.output.len = o->len;
            ev.fd = o->fd;
            mt_rpc_stream_send(call, &ev.base);
        }
    }
    mt_rpc_call_on_cancel(call, on_watcher_cancel, w);
    if (mt_task_terminal(t))
        mt__task_notify(h, t); /* sends the final state and ends it */
}

void mt__h_cancel_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__CancelTaskRequest *req = (const Manta__CancelTaskRequest *)m;
    Manta__CancelTaskReply reply = MANTA__CANCEL_TASK_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_task *t = mt_task_find_id(&h->tq->table, req->task_id);

    if (!t) {
        mt_rpc_fail(call, -MT_ENOENT, "no such task");
        return;
    }
    if (t->state == MT_TASK_PENDING ||
        t->state == MT_TASK_WAITING_FOR_ARGS) {
        if (t->state == MT_TASK_PENDING)
            mt_sched_task_cancel(h->tq->sched, t->num);
        end_task(h, t, MT_TASK_CANCELLED, -1, "cancelled before it ran");
    } else if (!mt_task_terminal(t)) {
        t->cancel_requested = true;
        if (t->state == MT_TASK_RUNNING)
            stop_on_worker(h, t, req->force);
    }
    reply.state = (Manta__TaskState)t->state;
    mt_rpc_reply(call, &reply.base);
}

struct list_ctx {
    const Manta__ListTasksRequest *req;
    Manta__TaskInfo *infos;
    Manta__TaskInfo **ptrs;
    Manta__TaskSpec **specs;
    char (*gangs)[17];           /* gang ids of the members listed */
    size_t n, max;
    uint64_t matched;
};

static bool list_match(const Manta__ListTasksRequest *req,
                       const struct mt_task *t)
{
    return (!req->state || (int)req->state == (int)t->state) &&
           (!*req->node_id ||
            (t->node_id && strcmp(t->node_id, req->node_id) == 0)) &&
           (!*req->name || strcmp(t->name, req->name) == 0);
}

static bool list_one(void *arg, struct mt_task *t)
{
    struct list_ctx *c = arg;
    Manta__TaskInfo *ti = &c->infos[c->n];

    if (!list_match(c->req, t))
        return true;
    if (c->matched++ >= c->max)
        return true; /* counted, not listed */
    manta__task_info__init(ti);
    c->specs[c->n] = spec_of(t);
    ti->spec = c->specs[c->n];
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
        mt__gang_id_of(t->gang, c->gangs[c->n]);
        ti->gang_id = c->gangs[c->n];
        ti->gang_rank = t->gang_rank;
    }
    c->ptrs[c->n++] = ti;
    return true;
}

void mt__h_list_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg)
{
    const Manta__ListTasksRequest *req = (const Manta__ListTasksRequest *)m;
    Manta__ListTasksReply reply = MANTA__LIST_TASKS_REPLY__INIT;
    struct mt_head *h = arg;
    struct list_ctx c;

    c.max = req->limit ? (req->limit > LIST_MAX ? LIST_MAX : req->limit)
                       : LIST_DEFAULT;
    if (c.max > h->tq->table.n)
        c.max = h->tq->table.n;
    c.n = 0;
    c.matched = 0;
    c.req = req;
    c.infos = mt_xcalloc(c.max + 1, sizeof(*c.infos));
    c.ptrs = mt_xcalloc(c.max + 1, sizeof(*c.ptrs));
    c.specs = mt_xcalloc(c.max + 1, sizeof(*c.specs));
    c.gangs = mt_xcalloc(c.max + 1, sizeof(*c.gangs));
    mt_task_table_visit_newest(&h->tq->table, list_one, &c);
    reply.n_tasks = c.n;
    reply.tasks = c.ptrs;
    reply.total = c.matched;
    mt_rpc_reply(call, &reply.base);
    for (size_t i = 0; i < c.n; i++)
        if (c.specs[i])
            manta__task_spec__free_unpacked(c.specs[i], NULL);
    free(c.infos);
    free(c.ptrs);
    free(c.specs);
    free(c.gangs);
}

static void apply_update(struct mt_head *h, const char *node_id,
                         const Manta__TaskUpdate *u)
{
    struct mt_task *t = mt_task_find_id(&h->tq->table, u->task_id);

    if (!t || t->attempt != u->attempt || mt_task_terminal(t) ||
        !t->node_id || strcmp(t->node_id, node_id) != 0)
        return; /* stale: an older attempt or another node */
    if (u->output.len && (u->fd == 1 || u->fd == 2)) {
        mt_task_add_output(t, u->fd, u->output.data, u->output.len);
        notify_output(h, t, u->fd, u->output.data, u->output.len);
    }
    switch (u->state) {
    case MANTA__TASK_STATE__TASK_STATE_RUNNING:
        if (t->state == MT_TASK_SCHEDULED) {
            t->state = MT_TASK_RUNNING;
            t->start_ms = mt_now_wall_ms();
            mt__task_notify(h, t);
        }
        if (u->actor_ready)
            mt__actor_ready(h, t, u->actor_pid);
        break;
    case MANTA__TASK_STATE__TASK_STATE_FINISHED:
        if (u->result.len > MAX_RESULT_BYTES) {
            end_task(h, t, MT_TASK_FAILED, -1, "result larger than 8 MiB");
            break;
        }
        if (u->result.len || u->result.data)
            mt_task_set_result(t, u->result.data, u->result.len);
        if (!t->cancel_requested)
            mt__objects_on_result(h, t, node_id, u->result.data,
                                  u->result.len, u->result_in_store,
                                  u->result_size);
        end_task(h, t, t->cancel_requested ? MT_TASK_CANCELLED
                                           : MT_TASK_FINISHED,
                 u->exit_code,
                 t->cancel_requested && !t->error ? "cancelled by request"
                                                  : NULL);
        break;
    case MANTA__TASK_STATE__TASK_STATE_FAILED:
        if (u->system_failure && !t->cancel_requested) {
            retry_or_fail(h, t, u->error[0] ? u->error
                                            : "the task's executor died");
            break;
        }
        end_task(h, t, t->cancel_requested ? MT_TASK_CANCELLED
                                           : MT_TASK_FAILED,
                 u->exit_code, u->error[0] ? u->error : "failed on the worker");
        break;
    default:
        break;
    }
}

void mt__h_report_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__ReportTasksRequest *req = (const Manta__ReportTasksRequest *)m;
    Manta__ReportTasksReply reply = MANTA__REPORT_TASKS_REPLY__INIT;
    struct mt_head *h = arg;

    for (size_t i = 0; i < req->n_updates; i++)
        apply_update(h, req->node_id, req->updates[i]);
    mt_rpc_reply(call, &reply.base);
}

void mt__tasks_close_rpc(struct mt_head *h)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; i < q->table.cap; i++) {
        struct mt_task *t = q->table.slots[i];
        while (t && t->watchers) {
            struct mt_task_watcher *w = t->watchers;
            mt_rpc_fail(w->call, -MT_EUNAVAIL, "head is shutting down");
            watcher_unlink(t, w);
        }
    }
    mt__cw_close_all(h);
    while (q->n_links)
        mt__link_drop(h, q->links[0].node_id);
}
