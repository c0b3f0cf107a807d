/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_nodes.c -- the node service's rpc adapter: RegisterNode, ReportNode,
 * UnregisterNode, GetClusterStatus and WatchNodes over nodes.h, the
 * conversions between NodeInfo and the node table's plain structs, and
 * nodes kept in storage (serialized NodeInfo rows).
 *
 * Every field of a request is peer input: it is validated here and a bad
 * one ends the call with INVALID_ARGUMENT and a reason, never an assert.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/rpc_checks.h"
#include "head/digest.h"
#include "head/recover.h"
#include "head/rpc_services.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "proto/list_json.h"
#include "proto/status_json.h"

#define MAX_ENTRIES MT_HEAD_NODE_MAX_ENTRIES
#define WATCH_MAX_BACKLOG 1024

/* A WatchNodes stream. */
struct mt_node_watcher {
    struct mt_head *h;
    struct mt_rpc_call *call;
    struct mt_node_watcher *next;
};

/* ---- protobuf <-> plain structs ------------------------------------------- */

/* A NodeInfo message pointing into an mt_node. */
struct pb_node {
    Manta__NodeInfo info;
    Manta__HostUsage usage;
};

static void *arena_alloc(struct mt_pb_arena *a, size_t n)
{
    void *p = mt_pb_alloc(a, n);

    if (!p)
        mt_xoom(n);
    return p;
}

/* The node's GPU figures into p->usage.gpus (pointing into n). */
static void pb_node_gpus(struct mt_pb_arena *a, struct pb_node *p,
                         const struct mt_node *n)
{
    Manta__GpuStats *v = arena_alloc(a, (n->n_gpus + 1) * sizeof(*v));

    p->usage.gpus = arena_alloc(a, (n->n_gpus + 1) * sizeof(*p->usage.gpus));
    for (size_t i = 0; i < n->n_gpus; i++) {
        const struct mt_node_gpu *g = &n->gpus[i];

        manta__gpu_stats__init(&v[i]);
        v[i].index = g->index;
        v[i].id = (char *)g->id;
        v[i].name = (char *)g->name;
        v[i].uuid = (char *)g->uuid;
        v[i].memory_total_bytes = g->mem_total;
        v[i].memory_used_bytes = g->mem_used;
        v[i].utilization_percent = g->util_percent;
        p->usage.gpus[i] = &v[i];
    }
    p->usage.n_gpus = n->n_gpus;
}

/* n as a NodeInfo view: strings borrowed from n, arrays from a. */
static void pb_node_fill(struct mt_pb_arena *a, struct pb_node *p,
                         const struct mt_node *n)
{
    Manta__NodeInfo *i = &p->info;

    manta__node_info__init(i);
    manta__host_usage__init(&p->usage);
    if (mt_pb_res_view(a, &n->total, &i->resources_total,
                       &i->n_resources_total) < 0 ||
        mt_pb_res_view(a, &n->avail, &i->resources_available,
                       &i->n_resources_available) < 0 ||
        mt_pb_labels_view(a, &n->labels, &i->labels, &i->n_labels) < 0)
        mt_xoom(sizeof(*i));
    i->node_id = n->id;
    i->address = n->address;
    i->node_ip = n->node_ip;
    i->hostname = n->hostname;
    i->temp_dir = n->temp_dir;
    i->version = n->version;
    i->death_reason = n->death_reason ? n->death_reason : (char *)"";
    i->state = n->state == MT_NODE_ALIVE ? MANTA__NODE_STATE__NODE_STATE_ALIVE
                                         : MANTA__NODE_STATE__NODE_STATE_DEAD;
    p->usage.cpu_percent = n->usage.cpu_percent;
    p->usage.mem_used_bytes = n->usage.mem_used_bytes;
    p->usage.mem_total_bytes = n->usage.mem_total_bytes;
    p->usage.num_cpus_online = n->usage.num_cpus_online;
    mt_head_usage_to_pb(&n->usage, &p->usage);
    pb_node_gpus(a, p, n);
    i->metrics_address = n->metrics_address ? n->metrics_address
                                            : (char *)"";
    i->usage = &p->usage;
    i->start_time_ms = n->start_time_ms;
    i->last_report_ms = n->last_report_ms;
    i->death_time_ms = n->death_time_ms;
    i->pid = n->pid;
}

/* Only a node itself may speak for its id (see RegisterNodeRequest). */
static const char WRONG_SECRET[] = MT_NODE_WRONG_SECRET;

/* Register (or revive) the node ni describes. RET the node, or NULL with
 * why set. */
static struct mt_node *register_info(struct mt_head *h,
                                     const Manta__NodeInfo *ni,
                                     const char *secret, const char **why)
{
    struct mt_qty_list total = {0};
    struct mt_kv_list labels = {0};
    struct mt_node_gpu *gpus = NULL;
    struct mt_node_usage usage;
    struct mt_node_reg r;
    struct mt_node *n = NULL;
    size_t n_gpus = 0;
    int err = 0;

    if ((*why = mt_head_node_info_check(ni)) ||
        mt_qty_from_pb(ni->resources_total, ni->n_resources_total,
                       MAX_ENTRIES, &total, why) < 0 ||
        mt_kv_from_pb(ni->labels, ni->n_labels, MAX_ENTRIES, &labels,
                      why) < 0)
        goto out;
    memset(&r, 0, sizeof(r));
    r.id = ni->node_id;
    r.address = ni->address;
    r.node_ip = ni->node_ip;
    r.hostname = ni->hostname;
    r.temp_dir = ni->temp_dir;
    r.version = ni->version;
    r.metrics_address = ni->metrics_address;
    r.secret = secret;
    r.total = &total;
    r.labels = &labels;
    r.pid = ni->pid;
    r.start_time_ms = ni->start_time_ms;
    if (ni->usage) {
        mt_head_usage_from_pb(ni->usage, &usage);
        gpus = mt_head_gpus_from_pb(ni->usage, &n_gpus);
    }
    n = mt_head_nodes_register(h->nodes, &r, ni->usage ? &usage : NULL,
                               gpus, n_gpus, &err);
    if (!n)
        *why = err == -MT_EPERM ? WRONG_SECRET
                                : "node_id and address are required";
out:
    free(gpus);
    mt_qty_list_release(&total);
    mt_kv_list_release(&labels);
    return n;
}

/* ---- storage of nodes ------------------------------------------------------- */

static void save_node(struct mt_head *h, const struct mt_node *n)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct pb_node p;
    size_t len;
    uint8_t *buf;

    pb_node_fill(&a, &p, n);
    len = manta__node_info__get_packed_size(&p.info);
    buf = mt_xmalloc(len ? len : 1);
    manta__node_info__pack(&p.info, buf);
    mt_storage_put(h->store, "nodes", n->id, buf, len, NULL, NULL);
    if (n->secret) /* its credential's digest, so that a restarted head
                      still knows the node from an impostor */
        mt_storage_put(h->store, "node_secrets", n->id, n->secret,
                       strlen(n->secret), NULL, NULL);
    free(buf);
    mt_pb_arena_release(&a);
}

/* Loading: the credential digests are read first, then the nodes. */
struct node_load {
    struct mt_head *h;
    char **ids, **digests;
    size_t n, cap, cap2;
    void (*done)(void *arg, int err);
    void *done_arg;
};

static void on_secret_row(void *arg, const char *key, const void *val,
                          size_t len)
{
    struct node_load *l = arg;

    if (len != MT_SHA256_HEX_LEN)
        return;
    mt_xgrow((void **)&l->ids, &l->cap, l->n + 1, sizeof(*l->ids));
    mt_xgrow((void **)&l->digests, &l->cap2, l->n + 1, sizeof(*l->digests));
    l->ids[l->n] = mt_xstrdup(key);
    l->digests[l->n] = mt_xstrndup(val, len);
    l->n++;
}

static const char *stored_digest(const struct node_load *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->ids[i], id) == 0)
            return l->digests[i];
    return NULL;
}

static void on_saved_row(void *arg, const char *key, const void *val,
                         size_t len)
{
    struct node_load *l = arg;
    struct mt_head *h = l->h;
    Manta__NodeInfo *ni = manta__node_info__unpack(NULL, len, val);
    const char *why = NULL, *digest;
    struct mt_node *n = NULL;

    /* An ALIVE one gets one timeout to register again (its reports are
     * answered "unknown" until it does, so that it says what it holds:
     * recover.h) before it is declared dead. */
    if (!ni || (ni->state == MANTA__NODE_STATE__NODE_STATE_ALIVE &&
                !(n = register_info(h, ni, NULL, &why))))
        MT_WARN("skipping unreadable saved node %s%s%s", key,
                why ? ": " : "", why ? why : "");
    if (n) {
        n->restored = true;
        if ((digest = stored_digest(l, n->id)))
            n->secret = mt_xstrdup(digest);
    }
    if (ni)
        manta__node_info__free_unpacked(ni, NULL);
}


/* ---- watchers ------------------------------------------------------------------ */

static void watcher_remove(struct mt_node_watcher *w)
{
    struct mt_node_watcher **pp = &w->h->node_watchers;

    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    free(w);
}

static void on_watcher_cancel(void *arg)
{
    struct mt_node_watcher *w = arg;

    mt_rpc_fail(w->call, -MT_ECANCELED, "watcher went away");
    watcher_remove(w);
}

static void send_event(struct mt_node_watcher *w, const struct mt_node *n,
                       int kind)
{
    Manta__NodeEvent ev = MANTA__NODE_EVENT__INIT;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct pb_node p;

    if (mt_rpc_stream_backlog(w->call) > WATCH_MAX_BACKLOG) {
        mt_rpc_fail(w->call, -MT_ENOSPC, "watcher too slow");
        watcher_remove(w);
        return;
    }
    pb_node_fill(&a, &p, n);
    ev.kind = (Manta__NodeEvent__Kind)kind;
    ev.node = &p.info;
    mt_rpc_stream_send(w->call, &ev.base);
    mt_pb_arena_release(&a);
}

/* A node came, came back or went: save it and tell the watchers. */
static void on_node_event(void *arg, struct mt_node *n,
                          enum mt_node_event ev)
{
    struct mt_head *h = arg;
    struct mt_node_watcher *w, *next;

    mt_head_sched_sync_avail(h->sched, n);
    save_node(h, n);
    for (w = h->node_watchers; w; w = next) {
        next = w->next;
        send_event(w, n, (int)ev);
    }
}

static const struct mt_node_listener node_listener = {
    .event = on_node_event,
};

/* The saved nodes are loaded (a network backend answers later). */
static void on_nodes_loaded(void *arg, int err)
{
    struct node_load *l = arg;
    size_t n = mt_head_nodes_table(l->h->nodes)->n;

    if (err)
        MT_WARN("cannot load the saved nodes: %s", mt_strerror(err));
    else if (n)
        MT_INFO("loaded %zu nodes from storage", n);
    for (size_t i = 0; i < l->n; i++) {
        free(l->ids[i]);
        free(l->digests[i]);
    }
    free(l->ids);
    free(l->digests);
    l->done(l->done_arg, err);
    free(l);
}

static void on_secrets_loaded(void *arg, int err)
{
    struct node_load *l = arg;

    if (err)
        MT_WARN("cannot load the nodes' credential digests: %s",
                mt_strerror(err));
    mt_storage_scan(l->h->store, "nodes", on_saved_row, on_nodes_loaded, l);
}

void mt_head_load_nodes(struct mt_head *h, void (*done)(void *arg, int err),
                        void *arg)
{
    struct node_load *l = mt_xcalloc(1, sizeof(*l));

    l->h = h;
    l->done = done;
    l->done_arg = arg;
    mt_storage_scan(h->store, "node_secrets", on_secret_row,
                    on_secrets_loaded, l);
}

/* Save nodes and feed WatchNodes as they change. */
static void start(struct mt_head *h)
{
    mt_head_nodes_listen(h->nodes, &node_listener, h);
}

static void stop(struct mt_head *h)
{
    while (h->node_watchers) {
        struct mt_node_watcher *w = h->node_watchers;
        mt_rpc_stream_finish(w->call);
        watcher_remove(w);
    }
}

/* ---- membership ------------------------------------------------------------- */

static void h_register(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__RegisterNodeRequest *req =
        (const Manta__RegisterNodeRequest *)m;
    Manta__RegisterNodeReply reply = MANTA__REGISTER_NODE_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_node *n;
    const char *bad = "missing node";
    struct mt_held_task *held;

    if (!req->node || strlen(req->node_secret) > MT_AUTH_TOKEN_MAX ||
        !(n = register_info(h, req->node, req->node_secret, &bad))) {
        MT_WARN("rejected registration from %s: %s", mt_rpc_call_peer(call),
                bad);
        mt_rpc_fail(call, bad == WRONG_SECRET ? -MT_EPERM : -MT_EINVAL, bad);
        return;
    }
    n->restored = false;
    if (req->holdings) {
        held = mt_xcalloc(req->n_held_tasks + 1, sizeof(*held));
        for (size_t i = 0; i < req->n_held_tasks; i++) {
            held[i].task_id = req->held_tasks[i]->task_id;
            held[i].attempt = req->held_tasks[i]->attempt;
            held[i].lease_id = req->held_tasks[i]->lease_id;
        }
        mt_head_recover_node(h->recover, n,
                             &(struct mt_node_holdings){held,
                                                        req->n_held_tasks});
        free(held);
    }
    reply.cluster_id = h->cluster_id;
    reply.report_period_ms = (uint32_t)h->cfg.report_period_ms;
    reply.head_version = (char *)MT_VERSION;
    mt_rpc_reply(call, &reply.base);
}

static void h_report(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg)
{
    const Manta__ReportNodeRequest *req = (const Manta__ReportNodeRequest *)m;
    Manta__ReportNodeReply reply = MANTA__REPORT_NODE_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_qty_list avail = {0};
    struct mt_node_usage usage;
    struct mt_node_gpu *gpus = NULL;
    const char *bad = NULL;
    struct mt_node *n;
    size_t n_gpus = 0;
    int rc;

    if (!mt_head_node_id_valid(req->node_id)) {
        mt_rpc_fail(call, -MT_EINVAL, "bad node_id");
        return;
    }
    if (!mt_node_table_speaks_for(mt_head_nodes_table(h->nodes), req->node_id,
                                  req->node_secret)) {
        mt_rpc_fail(call, -MT_EPERM, WRONG_SECRET);
        return;
    }
    n = mt_node_table_find(mt_head_nodes_table(h->nodes), req->node_id);
    if (n && n->restored) { /* register again first (recover.h) */
        mt_rpc_reply(call, &reply.base);
        return;
    }
    if (mt_qty_from_pb(req->resources_available, req->n_resources_available,
                       MAX_ENTRIES, &avail, &bad) < 0) {
        mt_rpc_fail(call, -MT_EINVAL, bad ? bad : "out of memory");
        return;
    }
    memset(&usage, 0, sizeof(usage));
    if (req->usage) {
        mt_head_usage_from_pb(req->usage, &usage);
        gpus = mt_head_gpus_from_pb(req->usage, &n_gpus);
    }
    rc = mt_head_nodes_report(h->nodes, req->node_id, req->seqno, &avail,
                              req->usage ? &usage : NULL, gpus, n_gpus);
    mt_qty_list_release(&avail);
    free(gpus);
    reply.known = rc == 0;
    mt_rpc_reply(call, &reply.base);
}

static void h_unregister(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__UnregisterNodeRequest *req =
        (const Manta__UnregisterNodeRequest *)m;
    Manta__UnregisterNodeReply reply = MANTA__UNREGISTER_NODE_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_node *n = mt_head_node_id_valid(req->node_id)
                            ? mt_node_table_find(mt_head_nodes_table(h->nodes),
                                                 req->node_id)
                            : NULL;
    char *reason;

    if (!n) {
        mt_rpc_fail(call, -MT_ENOENT, "unknown node");
        return;
    }
    if (!mt_node_secret_ok(n, req->node_secret)) {
        MT_WARN("refused to unregister node %s for %s: %s", n->id,
                mt_rpc_call_peer(call), WRONG_SECRET);
        mt_rpc_fail(call, -MT_EPERM, WRONG_SECRET);
        return;
    }
    reason = mt_xasprintf("stopped: %s", req->reason && *req->reason
                                             ? req->reason : "unregistered");
    mt_head_nodes_unregister(h->nodes, n, reason);
    free(reason);
    mt_rpc_reply(call, &reply.base);
}

/* ---- cluster status ------------------------------------------------------ */

/* The storage behind a built GetClusterStatusReply (all borrowed from h). */
struct status_scratch {
    struct mt_pb_arena arena;
    char *demand_text;          /* owned; demands[] point into it */
    char **demands;
    struct mt_storage_stats store;
    Manta__StorageStatus storage;
    struct pb_node *pn;
    Manta__NodeInfo **nodes;
    struct mt_qty_list total, avail;
};

/* Demand lines from the scheduler, and task counts. */
static void status_add_demands(struct mt_head *h,
                               Manta__GetClusterStatusReply *reply,
                               struct status_scratch *sc)
{
    struct mt_task_table *tt = mt_head_tasks_table(h->tasks);
    size_t n = 0;
    char *line, *save = NULL;

    sc->demand_text = mt_head_sched_demands(h->sched);
    for (const char *p = sc->demand_text; *p; p++)
        n += *p == '\n';
    sc->demands = mt_xcalloc(n + 1, sizeof(*sc->demands));
    n = 0;
    for (line = strtok_r(sc->demand_text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        sc->demands[n++] = line + strspn(line, " ");
    reply->n_demands = n;
    reply->demands = sc->demands;
    reply->pending_tasks = mt_task_table_count(tt, MT_TASK_PENDING);
    reply->running_tasks = mt_task_table_count(tt, MT_TASK_RUNNING) +
                           mt_task_table_count(tt, MT_TASK_SCHEDULED);
}

/* How the storage is doing; strings borrowed from sc and h. */
static void status_add_storage(struct mt_head *h,
                               Manta__GetClusterStatusReply *reply,
                               struct status_scratch *sc)
{
    Manta__StorageStatus *p = &sc->storage;

    if (!h->store)
        return;
    mt_storage_stats(h->store, &sc->store);
    manta__storage_status__init(p);
    p->backend = (char *)sc->store.backend;
    p->spec = (char *)sc->store.spec;
    p->healthy = sc->store.healthy;
    p->writes = sc->store.writes;
    p->batches = sc->store.batches;
    p->buffered = sc->store.buffered;
    p->dropped = sc->store.dropped;
    p->last_error_ms = sc->store.last_error_ms;
    p->last_error = sc->store.last_error;
    p->down_since_ms = sc->store.down_since_ms;
    reply->storage = p;
}

/*
 * Build the cluster status from the node table. The reply points into h and
 * into sc: use it before the loop runs again, then status_release(sc).
 * Shared by GetClusterStatus and the dashboard (mt_head_status_json).
 */
static void status_build(struct mt_head *h, Manta__GetClusterStatusReply *reply,
                         struct status_scratch *sc)
{
    struct mt_node_table *t = mt_head_nodes_table(h->nodes);
    size_t n = t->n;

    memset(sc, 0, sizeof(*sc));
    for (size_t i = 0; i < n; i++)
        mt_head_sched_sync_avail(h->sched, t->v[i]);
    sc->pn = mt_xcalloc(n + 1, sizeof(*sc->pn));
    sc->nodes = mt_xcalloc(n + 1, sizeof(*sc->nodes));
    for (size_t i = 0; i < n; i++) {
        pb_node_fill(&sc->arena, &sc->pn[i], t->v[i]);
        sc->nodes[i] = &sc->pn[i].info;
    }
    mt_node_table_totals(t, &sc->total, &sc->avail);
    manta__get_cluster_status_reply__init(reply);
    if (mt_pb_res_view(&sc->arena, &sc->total, &reply->resources_total,
                       &reply->n_resources_total) < 0 ||
        mt_pb_res_view(&sc->arena, &sc->avail, &reply->resources_available,
                       &reply->n_resources_available) < 0)
        mt_xoom(sizeof(*reply));
    reply->cluster_id = h->cluster_id;
    reply->head_address = h->address;
    reply->head_start_time_ms = h->start_time_ms;
    reply->head_version = (char *)MT_VERSION;
    reply->n_nodes = n;
    reply->nodes = sc->nodes;
    status_add_demands(h, reply, sc);
    status_add_storage(h, reply, sc);
}

static void status_release(struct status_scratch *sc)
{
    free(sc->demand_text);
    free(sc->demands);
    free(sc->pn);
    free(sc->nodes);
    mt_qty_list_release(&sc->total);
    mt_qty_list_release(&sc->avail);
    mt_pb_arena_release(&sc->arena);
}

void mt_head_status_json(struct mt_head *h, struct mt_strbuf *out)
{
    Manta__GetClusterStatusReply reply;
    struct status_scratch sc;

    status_build(h, &reply, &sc);
    mt_status_json(out, &reply);
    status_release(&sc);
}

/* ---- nodes as JSON (/api/nodes) ---------------------------------------- */

static bool node_match(const struct mt_node *n, int state)
{
    return !state || (int)n->state == state;
}

static void list_json(struct mt_head *h,
                      const struct mt_head_list_query *q,
                      struct mt_strbuf *out)
{
    struct mt_node_table *t = mt_head_nodes_table(h->nodes);
    size_t max = q->limit ? q->limit : 100, n = 0;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct pb_node *pn;
    Manta__NodeInfo **sel;
    uint64_t total = 0;

    if (max > t->n)
        max = t->n;
    pn = mt_xcalloc(max + 1, sizeof(*pn));
    sel = mt_xcalloc(max + 1, sizeof(*sel));
    for (size_t i = 0; i < t->n; i++) {
        if (!node_match(t->v[i], q->state) || total++ < q->offset ||
            n >= max)
            continue;
        mt_head_sched_sync_avail(h->sched, t->v[i]);
        pb_node_fill(&a, &pn[n], t->v[i]);
        sel[n] = &pn[n].info;
        n++;
    }
    mt_list_json_nodes(out, sel, n, total);
    mt_pb_arena_release(&a);
    free(pn);
    free(sel);
}

int mt_head_node_json(struct mt_head *h, const char *id,
                      struct mt_strbuf *out)
{
    struct mt_node *n = mt_node_table_find(mt_head_nodes_table(h->nodes), id);
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct pb_node pn;

    if (!n)
        return -MT_ENOENT;
    mt_head_sched_sync_avail(h->sched, n);
    pb_node_fill(&a, &pn, n);
    mt_json_node(out, &pn.info);
    mt_pb_arena_release(&a);
    return 0;
}

static void h_status(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg)
{
    Manta__GetClusterStatusReply reply;
    struct status_scratch sc;

    status_build(arg, &reply, &sc);
    mt_rpc_reply(call, &reply.base);
    status_release(&sc);
}

static void h_watch(struct mt_rpc_call *call, const ProtobufCMessage *m,
                    void *arg)
{
    const Manta__WatchNodesRequest *req = (const Manta__WatchNodesRequest *)m;
    struct mt_head *h = arg;
    struct mt_node_table *t = mt_head_nodes_table(h->nodes);
    struct mt_node_watcher *w;

    if (h->stopping) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "head is shutting down");
        return;
    }
    w = mt_xcalloc(1, sizeof(*w));
    w->h = h;
    w->call = call;
    w->next = h->node_watchers;
    h->node_watchers = w;
    mt_rpc_call_on_cancel(call, on_watcher_cancel, w);
    if (req->initial_snapshot)
        for (size_t i = 0; i < t->n; i++)
            send_event(w, t->v[i], MANTA__NODE_EVENT__KIND__KIND_ADDED);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_register_node, h_register},
    {&mt_head_report_node, h_report},
    {&mt_head_unregister_node, h_unregister},
    {&mt_head_get_cluster_status, h_status},
    {&mt_head_watch_nodes, h_watch},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_nodes = {
    .handlers = handlers,
    .list_json = list_json,
    .start = start,
    .stop = stop,
};
