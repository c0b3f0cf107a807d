/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_head.c -- the SDK's only contact with protobuf: it builds the head's
 * requests from plain C, starts the calls on the client's loop thread and
 * turns replies and task events back into plain C (sdk_int.h).
 *
 * Calls: GetClusterStatus (connect, cluster queries), any other unary call
 * as a copied message (mt__req_unary: placement groups), SubmitTask followed by
 * one WatchTask stream per task (state changes and output until the task
 * ends), CancelTask. At most MT_SDK_MAX_WATCHES streams are open at once;
 * further tasks wait in a FIFO for a slot (the head keeps a finished
 * task's state and output, so nothing is lost by watching late). A watch
 * the connection broke is reopened a few times before the task is given
 * up as lost (retry_watch).
 *
 * THREAD: everything except mt__rpc_submit_build/free runs on the loop
 * thread; task fields are written under the client's mutex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"

/* ---- building a SubmitTaskRequest (caller thread) ------------------------ */

/*
 * The request is built with every pointer malloc'd on its own, so that
 * protobuf_c_message_free_unpacked() frees it whole (strings left at the
 * generated default "" are skipped by it).
 */
static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

static int build_argv(Manta__TaskSpec *s, const char *const *argv)
{
    size_t n = 0;

    while (argv[n])
        n++;
    s->argv = calloc(n, sizeof(*s->argv));
    if (!s->argv)
        return -MT_ENOMEM;
    for (; s->n_argv < n; s->n_argv++)
        if (!(s->argv[s->n_argv] = dup_str(argv[s->n_argv])))
            return -MT_ENOMEM;
    return 0;
}

static int build_res(Manta__TaskSpec *s, const struct mt_task_opts *o)
{
    s->resources = calloc(o->n_res + 1, sizeof(*s->resources));
    if (!s->resources)
        return -MT_ENOMEM;
    for (size_t i = 0; i < o->n_res; i++) {
        /* Zeros are sent: an explicit "CPU": 0 is how a task asks for
         * no CPU (an empty list means the default, 1 CPU). */
        Manta__ResourceEntry *e = malloc(sizeof(*e));

        if (!e)
            return -MT_ENOMEM;
        manta__resource_entry__init(e);
        s->resources[s->n_resources++] = e;
        e->quantity = o->res[i].qty;
        if (!(e->name = dup_str(o->res[i].name)))
            return -MT_ENOMEM;
    }
    return 0;
}

static int build_env(Manta__TaskSpec *s, const struct mt_task_opts *o)
{
    s->env = calloc(o->n_env + 1, sizeof(*s->env));
    if (!s->env)
        return -MT_ENOMEM;
    for (size_t i = 0; i < o->n_env; i++) {
        Manta__Label *l = malloc(sizeof(*l));

        if (!l)
            return -MT_ENOMEM;
        manta__label__init(l);
        s->env[s->n_env++] = l;
        if (!(l->key = dup_str(o->env[i].key)) ||
            !(l->value = dup_str(o->env[i].value)))
            return -MT_ENOMEM;
    }
    s->env_unset = calloc(o->n_env_unset + 1, sizeof(*s->env_unset));
    if (!s->env_unset)
        return -MT_ENOMEM;
    for (size_t i = 0; i < o->n_env_unset; i++)
        if (!(s->env_unset[s->n_env_unset++] = dup_str(o->env_unset[i])))
            return -MT_ENOMEM;
    return 0;
}

static int build_match(Manta__LabelMatch *m, const struct mt__match *x)
{
    m->op = (Manta__LabelMatch__Op)x->op;
    if (!(m->key = dup_str(x->key)))
        return -MT_ENOMEM;
    m->values = calloc(x->n + 1, sizeof(*m->values));
    if (!m->values)
        return -MT_ENOMEM;
    for (; m->n_values < x->n; m->n_values++)
        if (!(m->values[m->n_values] = dup_str(x->values[m->n_values])))
            return -MT_ENOMEM;
    return 0;
}

static int build_selector(Manta__TaskSpec *s, const struct mt_task_opts *o)
{
    s->label_selector = calloc(o->n_match + 1, sizeof(*s->label_selector));
    if (!s->label_selector)
        return -MT_ENOMEM;
    for (size_t i = 0; i < o->n_match; i++) {
        Manta__LabelMatch *m = malloc(sizeof(*m));

        if (!m)
            return -MT_ENOMEM;
        manta__label_match__init(m);
        s->label_selector[s->n_label_selector++] = m;
        if (build_match(m, &o->match[i]) < 0)
            return -MT_ENOMEM;
    }
    return 0;
}

static int build_spec(Manta__TaskSpec *s, const char *const *argv,
                      const struct mt_task_opts *o)
{
    s->kind = MANTA__TASK_KIND__TASK_KIND_COMMAND;
    s->priority = o->priority;
    s->max_retries = o->max_retries;
    s->strategy = o->strategy == MT_STRATEGY_SPREAD
                      ? MANTA__SCHEDULING_STRATEGY__STRATEGY_SPREAD
                      : MANTA__SCHEDULING_STRATEGY__STRATEGY_DEFAULT;
    if (o->pg_id[0]) {
        s->strategy = MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP;
        s->bundle_index = o->bundle;
        if (!(s->placement_group_id = dup_str(o->pg_id)))
            return -MT_ENOMEM;
    }
    if (o->name && !(s->name = dup_str(o->name)))
        return -MT_ENOMEM;
    if (o->cwd && !(s->cwd = dup_str(o->cwd)))
        return -MT_ENOMEM;
    if (build_argv(s, argv) < 0 || build_res(s, o) < 0 ||
        build_env(s, o) < 0 || build_selector(s, o) < 0)
        return -MT_ENOMEM;
    return 0;
}

int mt__rpc_submit_build(const char *const *argv,
                         const struct mt_task_opts *o, void **out)
{
    Manta__SubmitTaskRequest *req = malloc(sizeof(*req));
    Manta__TaskSpec *s = malloc(sizeof(*s));
    int rc;

    *out = NULL;
    if (!req || !s) {
        free(req);
        free(s);
        return -MT_ENOMEM;
    }
    manta__submit_task_request__init(req);
    manta__task_spec__init(s);
    req->spec = s;
    rc = build_spec(s, argv, o);
    if (rc < 0) {
        mt__rpc_submit_free(req);
        return rc;
    }
    *out = req;
    return 0;
}

int mt__rpc_submit_fn_build(const char *function, const void *const *args,
                            const size_t *sizes, size_t nargs,
                            const struct mt_task_opts *o, void **out)
{
    static const char *const no_argv[] = {"", NULL};
    Manta__SubmitTaskRequest *req;
    Manta__TaskSpec *s;
    int rc = mt__rpc_submit_build(no_argv, o, out);

    if (rc < 0)
        return rc;
    req = *out;
    s = req->spec;
    /* A function task has no program: drop the placeholder argv. */
    for (size_t i = 0; i < s->n_argv; i++)
        if (s->argv[i] != protobuf_c_empty_string)
            free(s->argv[i]);
    free(s->argv);
    s->argv = NULL;
    s->n_argv = 0;
    s->kind = MANTA__TASK_KIND__TASK_KIND_FUNCTION;
    s->hold_result = 1; /* released with the task (mt_task_release) */
    s->function = dup_str(function);
    s->args = calloc(nargs + 1, sizeof(*s->args));
    s->code_path = calloc(o->n_code_path + 1, sizeof(*s->code_path));
    if (!s->function || !s->args || !s->code_path)
        goto out_nomem;
    for (; s->n_args < nargs; s->n_args++) {
        size_t n = sizes[s->n_args];
        s->args[s->n_args].data = malloc(n ? n : 1);
        if (!s->args[s->n_args].data)
            goto out_nomem;
        if (n)
            memcpy(s->args[s->n_args].data, args[s->n_args], n);
        s->args[s->n_args].len = n;
    }
    for (; s->n_code_path < o->n_code_path; s->n_code_path++)
        if (!(s->code_path[s->n_code_path] =
                  dup_str(o->code_path[s->n_code_path])))
            goto out_nomem;
    return 0;

out_nomem:
    mt__rpc_submit_free(req);
    *out = NULL;
    return -MT_ENOMEM;
}

void mt__rpc_submit_free(void *msg)
{
    if (msg)
        protobuf_c_message_free_unpacked(msg, NULL);
}

/* ---- small helpers (loop thread) ----------------------------------------- */

void mt__status_text(const struct mt_rpc_status *st, const char *what,
                     char *buf, size_t len)
{
    snprintf(buf, len, "%s: %s%s%s", what, mt_rpc_status_name(st->code),
             *st->message ? ": " : "", st->message);
}

/* The error code of a failed call: an unreachable head reads EUNAVAIL. */
int mt__status_err(const struct mt_rpc_status *st)
{
    return mt_rpc_status_to_err(st->code);
}

static char *set_str(char **dst, const char *s)
{
    char *p = dup_str(s ? s : "");

    if (p) {
        free(*dst);
        *dst = p;
    }
    return p;
}

/* ---- GetClusterStatus ---------------------------------------------------- */

static int copy_res(Manta__ResourceEntry **v, size_t n, struct mt__res **out,
                    size_t *nout)
{
    *out = calloc(n + 1, sizeof(**out));
    if (!*out)
        return -MT_ENOMEM;
    for (*nout = 0; *nout < n; (*nout)++) {
        (*out)[*nout].qty = v[*nout]->quantity;
        if (!((*out)[*nout].name = dup_str(v[*nout]->name)))
            return -MT_ENOMEM;
    }
    return 0;
}

static int copy_status(const Manta__GetClusterStatusReply *m,
                       struct mt__status *s)
{
    s->nodes = calloc(m->n_nodes + 1, sizeof(*s->nodes));
    if (!s->nodes)
        return -MT_ENOMEM;
    for (; s->n_nodes < m->n_nodes; s->n_nodes++) {
        const Manta__NodeInfo *ni = m->nodes[s->n_nodes];
        struct mt__node *n = &s->nodes[s->n_nodes];

        n->alive = ni->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;
        n->temp_dir = dup_str(ni->temp_dir);
        n->hostname = dup_str(ni->hostname);
        n->node_id = dup_str(ni->node_id);
        n->address = dup_str(ni->address);
        if (!n->temp_dir || !n->hostname || !n->node_id || !n->address) {
            s->n_nodes++;
            return -MT_ENOMEM;
        }
    }
    if (copy_res(m->resources_total, m->n_resources_total, &s->total,
                 &s->n_total) < 0 ||
        copy_res(m->resources_available, m->n_resources_available,
                 &s->avail, &s->n_avail) < 0)
        return -MT_ENOMEM;
    return 0;
}

static void on_status_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    struct mt__req *r = arg;
    char msg[256];

    r->client->n_calls--;

    if (st->code) {
        mt__status_text(st, "GetClusterStatus failed", msg, sizeof(msg));
        mt__req_complete(r->client, r, mt__status_err(st), msg);
        return;
    }
    if (copy_status((const Manta__GetClusterStatusReply *)resp,
                    &r->status) < 0) {
        mt__status_release(&r->status);
        mt__req_complete(r->client, r, -MT_ENOMEM, "out of memory");
        return;
    }
    mt__req_complete(r->client, r, 0, NULL);
}

static int start_status(struct mt__req *r)
{
    Manta__GetClusterStatusRequest req =
        MANTA__GET_CLUSTER_STATUS_REQUEST__INIT;

    return mt_rpc_unary(r->client->ch, &mt_head_get_cluster_status,
                        &req.base, r->timeout_ms, r->rpc_flags,
                        on_status_done, r);
}

/* ---- SubmitTask ---------------------------------------------------------- */

struct mt_task *mt__task_new(struct mt_client *c, const char *id,
                             size_t output_limit)
{
    struct mt_task *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->magic = MT_SDK_TASK_MAGIC;
    atomic_init(&t->refs, 1);
    t->client = c;
    snprintf(t->id, sizeof(t->id), "%s", id ? id : "");
    atomic_init(&t->settled, id != NULL);
    t->output_limit = output_limit;
    t->exit_code = -1;
    return t;
}

/* The reply for a posted task (the client watch's fallback, rpc_batch.c):
 * its handle exists; give it its id and a watch, or end it. */
static void posted_done(struct mt_client *c, struct mt__req *r,
                        const struct mt_rpc_status *st,
                        const Manta__SubmitTaskReply *m, const char *msg)
{
    struct mt_task *t = r->task;

    if (st->code || !*m->task_id || strlen(m->task_id) >= sizeof(t->id)) {
        mt__task_end(c, t, st->code == GRPC_STATUS_INVALID_ARGUMENT
                               ? 0 : -MT_EUNAVAIL,
                     st->code ? msg : "the head returned no task id");
        mt__req_complete(c, r, -MT_EPROTO, NULL); /* frees r and its ref */
        return;
    }
    pthread_mutex_lock(&c->mu);
    memcpy(t->id, m->task_id, strlen(m->task_id) + 1);
    atomic_store(&t->settled, true);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    r->task = NULL;
    mt__rpc_watch(c, t); /* takes the request's ref */
    mt__req_complete(c, r, 0, NULL);
}

static void on_submit_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__SubmitTaskReply *m = (const Manta__SubmitTaskReply *)resp;
    struct mt__req *r = arg;
    struct mt_client *c = r->client;
    char msg[256] = "";

    r->client->n_calls--;

    if (st->code) {
        mt__status_text(st, "the head refused the task", msg, sizeof(msg));
        if (st->code == GRPC_STATUS_UNAVAILABLE ||
            st->code == GRPC_STATUS_DEADLINE_EXCEEDED)
            mt__status_text(st, "cannot reach the head", msg, sizeof(msg));
    }
    if (r->task) {
        posted_done(c, r, st, m, msg);
        return;
    }
    if (st->code) {
        mt__req_complete(c, r, mt__status_err(st), msg);
        return;
    }
    if (!*m->task_id || strlen(m->task_id) >= sizeof(r->task->id)) {
        mt__req_complete(c, r, -MT_EPROTO, "the head returned no task id");
        return;
    }
    r->task = mt__task_new(c, m->task_id, r->output_limit);
    if (!r->task) {
        mt__req_complete(c, r, -MT_ENOMEM, "out of memory (the task was "
                         "submitted but cannot be followed)");
        return;
    }
    atomic_fetch_add(&r->task->refs, 1); /* the watch's */
    mt__rpc_watch(c, r->task);
    mt__req_complete(c, r, 0, NULL);
}

static int start_submit(struct mt__req *r)
{
    return mt_rpc_unary(r->client->ch, &mt_head_submit_task, r->submit_msg,
                        r->timeout_ms, r->rpc_flags, on_submit_done, r);
}

/* ---- CancelTask ---------------------------------------------------------- */

static void on_cancel_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    struct mt__req *r = arg;
    char msg[256];

    r->client->n_calls--;

    if (st->code) {
        mt__status_text(st, "CancelTask failed", msg, sizeof(msg));
        mt__req_complete(r->client, r, mt__status_err(st), msg);
        return;
    }
    mt__req_complete(r->client, r, 0, NULL);
}

static int start_cancel(struct mt__req *r)
{
    Manta__CancelTaskRequest req = MANTA__CANCEL_TASK_REQUEST__INIT;

    req.task_id = r->task_id;
    req.force = r->force;
    return mt_rpc_unary(r->client->ch, &mt_head_cancel_task, &req.base,
                        r->timeout_ms, r->rpc_flags, on_cancel_done, r);
}

/* ---- any other unary call ----------------------------------------------- */

void *mt__msg_copy(const void *msg)
{
    const ProtobufCMessage *m = msg;
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    ProtobufCMessage *copy;

    if (!buf)
        return NULL;
    protobuf_c_message_pack(m, buf);
    copy = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
    free(buf);
    return copy;
}

static void on_unary_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt__req *r = arg;
    char msg[256];

    r->client->n_calls--;
    if (st->code) {
        mt__status_text(st, "the head refused the request", msg, sizeof(msg));
        if (st->code == GRPC_STATUS_UNAVAILABLE ||
            st->code == GRPC_STATUS_DEADLINE_EXCEEDED)
            mt__status_text(st, "cannot reach the head", msg, sizeof(msg));
        mt__req_complete(r->client, r, mt__status_err(st), msg);
        return;
    }
    r->unary_reply = mt__msg_copy(resp);
    mt__req_complete(r->client, r, r->unary_reply ? 0 : -MT_ENOMEM,
                     r->unary_reply ? NULL : "out of memory");
}

static int start_unary(struct mt__req *r)
{
    return mt_rpc_unary(r->client->ch, r->method, r->unary_msg, r->timeout_ms,
                        r->rpc_flags, on_unary_done, r);
}

void mt__rpc_start(struct mt_client *c, struct mt__req *r)
{
    int rc;

    r->client = c;
    if (r->kind == MT__REQ_SUBMIT_ASYNC) { /* no call of its own */
        mt__cw_take(c, r);
        return;
    }
    if (r->kind == MT__REQ_CW_OPEN) { /* a stream, counted as a watch */
        rc = mt__cw_start_open(c, r);
        if (rc < 0)
            mt__req_complete(c, r, rc, "cannot open the client watch");
        return;
    }
    switch (r->kind) {
    case MT__REQ_STATUS:
        rc = start_status(r);
        break;
    case MT__REQ_SUBMIT:
        rc = start_submit(r);
        break;
    case MT__REQ_CANCEL:
        rc = start_cancel(r);
        break;
    case MT__REQ_OBJECT:
        rc = r->obj_start ? r->obj_start(r) : -MT_EINVAL;
        break;
    case MT__REQ_ACTOR_GET:
    case MT__REQ_ACTOR_KILL:
    case MT__REQ_ACTOR_CALL:
    case MT__REQ_ACTOR_LEASE:
        rc = mt__rpc_actor_start(r);
        break;
    case MT__REQ_UNARY:
        rc = start_unary(r);
        break;

    default:
        rc = -MT_EINVAL;
        break;
    }
    if (rc < 0)
        mt__req_complete(c, r, rc, "cannot start the call to the head");
    else
        c->n_calls++;
}

/* ---- WatchTask ----------------------------------------------------------- */

static bool final_state(int st)
{
    return st == MT_TASK_STATE_FINISHED || st == MT_TASK_STATE_FAILED ||
           st == MT_TASK_STATE_CANCELLED;
}

/* Apply one event to t. Called with c->mu held. */
void mt__apply_event_locked(struct mt_task *t, const void *event)
{
    const Manta__TaskEvent *ev = event;
    struct mt__outbuf *b = ev->fd == 2 ? &t->err : &t->out;

    if (ev->output.len && t->output_limit &&
        mt__outbuf_append(b, t->output_limit, ev->output.data,
                          ev->output.len) < 0)
        b->dropped += ev->output.len; /* out of memory: lose this piece */
    if (ev->state == MANTA__TASK_STATE__TASK_STATE_UNSPECIFIED || t->ended)
        return;
    t->state = (int)ev->state;
    t->attempt = ev->attempt;
    if (*ev->node_id)
        set_str(&t->node_id, ev->node_id);
    if (*ev->error || final_state(t->state))
        set_str(&t->error, ev->error);
    if (final_state(t->state)) {
        t->exit_code = t->state == MT_TASK_STATE_FINISHED ? ev->exit_code
                                                          : -1;
        t->ended = true;
        t->actor_died = ev->actor_died;
        atomic_store(&t->settled, true);
        if (ev->result.len && !t->value) {
            t->value = malloc(ev->result.len);
            if (t->value) {
                memcpy(t->value, ev->result.data, ev->result.len);
                t->value_len = ev->result.len;
            }
        }
    }
}

static void on_task_event(void *arg, const ProtobufCMessage *msg)
{
    struct mt_task *t = arg;
    struct mt_client *c = t->client;

    t->rewatches = 0; /* the stream works */
    pthread_mutex_lock(&c->mu);
    mt__apply_event_locked(t, msg);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void watch_next(struct mt_client *c);
static void on_retry(uv_timer_t *h);

/* The watch ended; without a final state the client has lost the task. */
static void end_watch(struct mt_client *c, struct mt_task *t, int err,
                      const char *why)
{
    pthread_mutex_lock(&c->mu);
    if (!t->ended) {
        t->lost = err < 0 ? err : -MT_EPROTO;
        set_str(&t->error, why);
    }
    atomic_store(&t->settled, true);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    mt__task_unref(t);
}

/*
 * A watch broken by the connection (UNAVAILABLE) or dropped by the head
 * as too slow (RESOURCE_EXHAUSTED) is reopened after MT_SDK_REWATCH_MS,
 * up to MT_SDK_REWATCHES times in a row: a blip between us and a live
 * head must not lose the task, and the reopened watch starts with the
 * head's whole output tail. A head that is gone fails the reopens fast,
 * so the task is reported lost about a second later.
 * RET true when t was queued for a retry (the watch ref stays).
 */
static bool retry_watch(struct mt_client *c, struct mt_task *t,
                        const struct mt_rpc_status *st)
{
    if (c->closing || t->ended || t->rewatches >= MT_SDK_REWATCHES ||
        (st->code != GRPC_STATUS_UNAVAILABLE &&
         st->code != GRPC_STATUS_RESOURCE_EXHAUSTED))
        return false;
    t->rewatches++;
    t->next_wait = NULL;
    if (c->retry_tail)
        c->retry_tail->next_wait = t;
    else
        c->retry_head = t;
    c->retry_tail = t;
    if (!uv_is_active((uv_handle_t *)&c->retry_timer))
        uv_timer_start(&c->retry_timer, on_retry, MT_SDK_REWATCH_MS, 0);
    return true;
}

static void on_watch_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt_task *t = arg;
    struct mt_client *c = t->client;
    char why[256];
    int err;

    t->stream = NULL;
    c->n_watches--;
    if (retry_watch(c, t, st)) {
        watch_next(c);
        return;
    }
    if (c->closing) {
        err = -MT_ECLOSED;
        snprintf(why, sizeof(why), "the client was disconnected");
    } else if (st->code) {
        err = mt__status_err(st);
        if (err == -MT_ETIMEDOUT || err == -MT_ECANCELED)
            err = -MT_EUNAVAIL;
        mt__status_text(st, "lost track of the task", why, sizeof(why));
    } else {
        err = -MT_EUNAVAIL;
        snprintf(why, sizeof(why), "lost track of the task: the head "
                 "closed the watch before the task ended");
    }
    end_watch(c, t, err, why);
    watch_next(c);
}

static void open_watch(struct mt_client *c, struct mt_task *t)
{
    Manta__WatchTaskRequest req = MANTA__WATCH_TASK_REQUEST__INIT;
    int rc;

    if (t->rewatches) { /* the head sends its whole output tail again */
        pthread_mutex_lock(&c->mu);
        t->out.len = t->err.len = 0;
        t->out.dropped = t->err.dropped = 0;
        pthread_mutex_unlock(&c->mu);
    }
    req.task_id = t->id;
    req.output = t->output_limit > 0;
    rc = mt_rpc_stream_open(c->ch, &mt_head_watch_task, &req.base, 0, 0,
                            on_task_event, on_watch_done, t, &t->stream);
    if (rc < 0) {
        end_watch(c, t, rc, "cannot watch the task");
        return;
    }
    c->n_watches++;
}

static void watch_next(struct mt_client *c)
{
    while (!c->closing && c->wait_head && c->n_watches < MT_SDK_MAX_WATCHES) {
        struct mt_task *t = c->wait_head;

        c->wait_head = t->next_wait;
        if (!c->wait_head)
            c->wait_tail = NULL;
        t->next_wait = NULL;
        open_watch(c, t);
    }
}

void mt__rpc_watch(struct mt_client *c, struct mt_task *t)
{
    if (c->closing) { /* a submit answered while shutting down */
        end_watch(c, t, -MT_ECLOSED, "the client was disconnected");
        return;
    }
    if (c->n_watches < MT_SDK_MAX_WATCHES && !c->wait_head) {
        open_watch(c, t);
        return;
    }
    if (c->wait_tail)
        c->wait_tail->next_wait = t;
    else
        c->wait_head = t;
    c->wait_tail = t;
}

/* The retry timer: reopen every watch waiting for it. */
static void on_retry(uv_timer_t *h)
{
    struct mt_client *c = h->data;
    struct mt_task *t = c->retry_head, *next;

    c->retry_head = c->retry_tail = NULL;
    for (; t; t = next) {
        next = t->next_wait;
        t->next_wait = NULL;
        mt__rpc_watch(c, t);
    }
}

void mt__rpc_stop_watches(struct mt_client *c)
{
    struct mt_task *t, *next;

    for (t = c->retry_head; t; t = next) {
        next = t->next_wait;
        t->next_wait = NULL;
        end_watch(c, t, -MT_ECLOSED, "the client was disconnected");
    }
    c->retry_head = c->retry_tail = NULL;
    for (t = c->wait_head; t; t = next) {
        next = t->next_wait;
        t->next_wait = NULL;
        end_watch(c, t, -MT_ECLOSED, "the client was disconnected");
    }
    c->wait_head = c->wait_tail = NULL;
    mt__cw_stop(c);
    /* Open streams are cancelled by mt_rpc_channel_destroy(); each still
     * runs on_watch_done, which drops its task reference. */
}
