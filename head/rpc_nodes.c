/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_head.c -- the head's rpc adapter: HeadService handlers, and the
 * conversions between protobuf messages and the node table's plain structs.
 * Generated protobuf types stay in this file (house style H15).
 *
 * Every field of a request is peer input: it is validated here and a bad one
 * ends the call with INVALID_ARGUMENT and a reason, never an assert.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/head.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "proto/status_json.h"

#define MAX_ID_LEN 64
#define MAX_STR_LEN 1024
#define MAX_ENTRIES 4096
#define WATCH_MAX_BACKLOG 1024

struct mt_head_watcher {
    struct mt_head *h;
    struct mt_rpc_call *call;
    struct mt_head_watcher *next;
};

/* ---- protobuf <-> plain structs ------------------------------------------- */

/* A NodeInfo message pointing into an mt_node, plus the arrays it needs. */
struct pb_node {
    Manta__NodeInfo info;
    Manta__HostUsage usage;
    Manta__ResourceEntry *res;
    Manta__ResourceEntry **tot_p, **av_p;
    Manta__Label *lab;
    Manta__Label **lab_p;
    Manta__GpuStats *gpu;
    Manta__GpuStats **gpu_p;
};

/* The node's GPU figures into p->usage.gpus (pointing into n). */
static void pb_node_gpus(struct pb_node *p, const struct mt_node *n)
{
    p->gpu = mt_xcalloc(n->n_gpus + 1, sizeof(*p->gpu));
    p->gpu_p = mt_xcalloc(n->n_gpus + 1, sizeof(*p->gpu_p));
    for (size_t i = 0; i < n->n_gpus; i++) {
        const struct mt_node_gpu *g = &n->gpus[i];

        manta__gpu_stats__init(&p->gpu[i]);
        p->gpu[i].index = g->index;
        p->gpu[i].id = (char *)g->id;
        p->gpu[i].name = (char *)g->name;
        p->gpu[i].uuid = (char *)g->uuid;
        p->gpu[i].memory_total_bytes = g->mem_total;
        p->gpu[i].memory_used_bytes = g->mem_used;
        p->gpu[i].utilization_percent = g->util_percent;
        p->gpu_p[i] = &p->gpu[i];
    }
    p->usage.n_gpus = n->n_gpus;
    p->usage.gpus = p->gpu_p;
}

static void fill_res(const struct mt_qty_list *l, Manta__ResourceEntry *e,
                     Manta__ResourceEntry **p)
{
    for (size_t i = 0; i < l->n; i++) {
        manta__resource_entry__init(&e[i]);
        e[i].name = l->v[i].name;
        e[i].quantity = l->v[i].qty;
        p[i] = &e[i];
    }
}

static void pb_node_fill(struct pb_node *p, const struct mt_node *n)
{
    size_t nt = n->total.n, na = n->avail.n, nl = n->labels.n;

    manta__node_info__init(&p->info);
    manta__host_usage__init(&p->usage);
    p->res = mt_xcalloc(nt + na + 1, sizeof(*p->res));
    p->tot_p = mt_xcalloc(nt + 1, sizeof(*p->tot_p));
    p->av_p = mt_xcalloc(na + 1, sizeof(*p->av_p));
    p->lab = mt_xcalloc(nl + 1, sizeof(*p->lab));
    p->lab_p = mt_xcalloc(nl + 1, sizeof(*p->lab_p));
    fill_res(&n->total, p->res, p->tot_p);
    fill_res(&n->avail, p->res + nt, p->av_p);
    for (size_t i = 0; i < nl; i++) {
        manta__label__init(&p->lab[i]);
        p->lab[i].key = n->labels.v[i].key;
        p->lab[i].value = n->labels.v[i].value;
        p->lab_p[i] = &p->lab[i];
    }
    p->info.node_id = n->id;
    p->info.address = n->address;
    p->info.node_ip = n->node_ip;
    p->info.hostname = n->hostname;
    p->info.temp_dir = n->temp_dir;
    p->info.version = n->version;
    p->info.death_reason = n->death_reason ? n->death_reason : (char *)"";
    p->info.state = n->state == MT_NODE_ALIVE ? MANTA__NODE_STATE__NODE_STATE_ALIVE
                                              : MANTA__NODE_STATE__NODE_STATE_DEAD;
    p->info.n_resources_total = nt;
    p->info.resources_total = p->tot_p;
    p->info.n_resources_available = na;
    p->info.resources_available = p->av_p;
    p->info.n_labels = nl;
    p->info.labels = p->lab_p;
    p->usage.cpu_percent = n->usage.cpu_percent;
    p->usage.mem_used_bytes = n->usage.mem_used_bytes;
    p->usage.mem_total_bytes = n->usage.mem_total_bytes;
    p->usage.num_cpus_online = n->usage.num_cpus_online;
    pb_node_gpus(p, n);
    p->info.usage = &p->usage;
    p->info.start_time_ms = n->start_time_ms;
    p->info.last_report_ms = n->last_report_ms;
    p->info.death_time_ms = n->death_time_ms;
    p->info.pid = n->pid;
}

static void pb_node_release(struct pb_node *p)
{
    free(p->res);
    free(p->tot_p);
    free(p->av_p);
    free(p->lab);
    free(p->lab_p);
    free(p->gpu);
    free(p->gpu_p);
}

static bool valid_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > MAX_ID_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
            return false;
    return true;
}

static bool valid_str(const char *s)
{
    return s && strlen(s) <= MAX_STR_LEN;
}

/* Copy resource entries into l; RET NULL or a reason they are invalid. */
static const char *take_res(Manta__ResourceEntry **e, size_t n,
                            struct mt_qty_list *l)
{
    if (n > MAX_ENTRIES)
        return "too many resources";
    for (size_t i = 0; i < n; i++) {
        if (!mt_qty_valid_name(e[i]->name))
            return "bad resource name (1-128 of [A-Za-z0-9._-/:])";
        if (e[i]->quantity < 0)
            return "negative resource quantity";
        mt_qty_list_set(l, e[i]->name, e[i]->quantity);
    }
    return NULL;
}

static void take_usage(const Manta__HostUsage *u, struct mt_node_usage *out)
{
    out->cpu_percent = u->cpu_percent >= 0 && u->cpu_percent <= 100
                           ? u->cpu_percent
                           : 0;
    out->mem_used_bytes = u->mem_used_bytes;
    out->mem_total_bytes = u->mem_total_bytes;
    out->num_cpus_online = u->num_cpus_online;
}

/* Copy s (peer input; may be NULL) into out, cut at len - 1 bytes. */
static void take_str(char *out, size_t len, const char *s)
{
    snprintf(out, len, "%s", s ? s : "");
}

/*
 * A report's GPU figures into node n. Peer input: entries past
 * MT_NODE_MAX_GPUS are dropped, strings cut to fit, and a figure out of
 * range reads unknown.
 */
static void take_gpus(struct mt_node *n, const Manta__HostUsage *u)
{
    struct mt_node_gpu *v;
    size_t k = u->n_gpus < MT_NODE_MAX_GPUS ? u->n_gpus : MT_NODE_MAX_GPUS;

    v = mt_xcalloc(k + 1, sizeof(*v));
    for (size_t i = 0; i < k; i++) {
        const Manta__GpuStats *g = u->gpus[i];

        v[i].index = g->index >= -1 ? g->index : -1;
        take_str(v[i].id, sizeof(v[i].id), g->id);
        take_str(v[i].name, sizeof(v[i].name), g->name);
        take_str(v[i].uuid, sizeof(v[i].uuid), g->uuid);
        v[i].mem_total = g->memory_total_bytes >= 0 ? g->memory_total_bytes
                                                    : -1;
        v[i].mem_used = g->memory_used_bytes >= 0 ? g->memory_used_bytes : -1;
        v[i].util_percent = g->utilization_percent >= 0 &&
                                    g->utilization_percent <= 100
                                ? g->utilization_percent
                                : -1;
    }
    mt_node_table_set_gpus(n, v, k);
    free(v);
}

/* Validate a NodeInfo from a worker; RET NULL or the reason it is bad. */
static const char *check_node_info(const Manta__NodeInfo *ni)
{
    if (!valid_id(ni->node_id))
        return "node_id must be 1-64 characters of [A-Za-z0-9_-]";
    if (!ni->address || !strchr(ni->address, ':') || !valid_str(ni->address))
        return "address must be host:port";
    if (!valid_str(ni->node_ip) || !valid_str(ni->hostname) ||
        !valid_str(ni->temp_dir) || !valid_str(ni->version))
        return "overlong string field";
    if (ni->n_labels > MAX_ENTRIES)
        return "too many labels";
    for (size_t i = 0; i < ni->n_labels; i++)
        if (!ni->labels[i]->key || !*ni->labels[i]->key ||
            !valid_str(ni->labels[i]->key) || !valid_str(ni->labels[i]->value))
            return "label with an empty or overlong key";
    return NULL;
}

/* ---- storage of nodes ------------------------------------------------------- */

void mt_head_save_node(struct mt_head *h, const struct mt_node *n)
{
    struct pb_node p;
    size_t len;
    uint8_t *buf;

    pb_node_fill(&p, n);
    len = manta__node_info__get_packed_size(&p.info);
    buf = mt_xmalloc(len ? len : 1);
    manta__node_info__pack(&p.info, buf);
    mt_storage_put(h->store, "nodes", n->id, buf, len, NULL, NULL);
    free(buf);
    pb_node_release(&p);
}

static void register_info(struct mt_head *h, const Manta__NodeInfo *ni,
                          int64_t now_mono, bool *was_new, int *err);

static void on_saved_row(void *arg, const char *key, const void *val,
                         size_t len)
{
    struct mt_head *h = arg;
    Manta__NodeInfo *ni = manta__node_info__unpack(NULL, len, val);
    bool was_new;
    int err = 0;

    if (!ni || check_node_info(ni)) {
        MT_WARN("skipping unreadable saved node %s", key);
    } else if (ni->state == MANTA__NODE_STATE__NODE_STATE_ALIVE) {
        /* It gets one timeout to report before it is declared dead. */
        register_info(h, ni, mt_now_mono_ms(), &was_new, &err);
        if (!err && mt_node_table_find(&h->nodes, ni->node_id))
            mt__sched_node_up(h, mt_node_table_find(&h->nodes, ni->node_id));
    }
    if (ni)
        manta__node_info__free_unpacked(ni, NULL);
}

void mt_head_load_nodes(struct mt_head *h)
{
    mt_storage_scan(h->store, "nodes", on_saved_row, NULL, h);
    if (h->nodes.n)
        MT_INFO("loaded %zu nodes from storage", h->nodes.n);
}

/* ---- watchers ------------------------------------------------------------------ */

static void watcher_remove(struct mt_head_watcher *w)
{
    struct mt_head_watcher **pp = &w->h->watchers;

    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    free(w);
}

static void on_watcher_cancel(void *arg)
{
    struct mt_head_watcher *w = arg;

    mt_rpc_fail(w->call, -MT_ECANCELED, "watcher went away");
    watcher_remove(w);
}

static void send_event(struct mt_head_watcher *w, const struct mt_node *n,
                       int kind)
{
    Manta__NodeEvent ev = MANTA__NODE_EVENT__INIT;
    struct pb_node p;

    if (mt_rpc_stream_backlog(w->call) > WATCH_MAX_BACKLOG) {
        mt_rpc_fail(w->call, -MT_ENOSPC, "watcher too slow");
        watcher_remove(w);
        return;
    }
    pb_node_fill(&p, n);
    ev.kind = (Manta__NodeEvent__Kind)kind;
    ev.node = &p.info;
    mt_rpc_stream_send(w->call, &ev.base);
    pb_node_release(&p);
}

void mt_head_notify(struct mt_head *h, const struct mt_node *n, int kind)
{
    struct mt_head_watcher *w = h->watchers, *next;

    for (; w; w = next) {
        next = w->next;
        send_event(w, n, kind);
    }
}

void mt_head_close_watchers(struct mt_head *h)
{
    while (h->watchers) {
        struct mt_head_watcher *w = h->watchers;
        mt_rpc_stream_finish(w->call);
        watcher_remove(w);
    }
}

/* ---- handlers --------------------------------------------------------------- */

static void register_info(struct mt_head *h, const Manta__NodeInfo *ni,
                          int64_t now_mono, bool *was_new, int *err)
{
    struct mt_qty_list total = {0};
    struct mt_kv_list labels = {0};
    struct mt_node_reg r;
    struct mt_node *n;

    take_res(ni->resources_total, ni->n_resources_total, &total);
    for (size_t i = 0; i < ni->n_labels; i++)
        mt_kv_list_set(&labels, ni->labels[i]->key, ni->labels[i]->value);
    memset(&r, 0, sizeof(r));
    r.id = ni->node_id;
    r.address = ni->address;
    r.node_ip = ni->node_ip;
    r.hostname = ni->hostname;
    r.temp_dir = ni->temp_dir;
    r.version = ni->version;
    r.total = &total;
    r.labels = &labels;
    r.pid = ni->pid;
    r.start_time_ms = ni->start_time_ms;
    n = mt_node_table_register(&h->nodes, &r, now_mono, mt_now_wall_ms(),
                               was_new, err);
    if (n && ni->usage) {
        take_usage(ni->usage, &n->usage);
        take_gpus(n, ni->usage);
    }
    mt_qty_list_release(&total);
    mt_kv_list_release(&labels);
}

static void h_register(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__RegisterNodeRequest *req =
        (const Manta__RegisterNodeRequest *)m;
    Manta__RegisterNodeReply reply = MANTA__REGISTER_NODE_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_qty_list probe = {0};
    const char *bad;
    struct mt_node *n;
    bool was_new = false;
    int err = 0;

    bad = req->node ? check_node_info(req->node) : "missing node";
    if (!bad)
        bad = take_res(req->node->resources_total,
                       req->node->n_resources_total, &probe);
    mt_qty_list_release(&probe);
    if (bad) {
        MT_WARN("rejected registration from %s: %s", mt_rpc_call_peer(call),
                bad);
        mt_rpc_fail(call, -MT_EINVAL, bad);
        return;
    }
    register_info(h, req->node, mt_now_mono_ms(), &was_new, &err);
    n = mt_node_table_find(&h->nodes, req->node->node_id);
    if (err || !n) {
        mt_rpc_fail(call, err ? err : -MT_EINVAL, NULL);
        return;
    }
    MT_INFO("node %s node=%s addr=%s", was_new ? "registered" : "re-registered",
            n->id, n->address);
    mt_head_save_node(h, n);
    mt__sched_node_up(h, n);
    mt_head_notify(h, n,
                   was_new ? MANTA__NODE_EVENT__KIND__KIND_ADDED
                           : MANTA__NODE_EVENT__KIND__KIND_UPDATED);
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
    struct mt_node *n;
    const char *bad;
    int rc;

    if (!valid_id(req->node_id)) {
        mt_rpc_fail(call, -MT_EINVAL, "bad node_id");
        return;
    }
    bad = take_res(req->resources_available, req->n_resources_available,
                   &avail);
    if (bad) {
        mt_qty_list_release(&avail);
        mt_rpc_fail(call, -MT_EINVAL, bad);
        return;
    }
    memset(&usage, 0, sizeof(usage));
    if (req->usage)
        take_usage(req->usage, &usage);
    n = mt_node_table_find(&h->nodes, req->node_id);
    /* Once the scheduler knows the node, it is the truth about what is
     * free there; the report only refreshes host usage. */
    rc = mt_node_table_report(&h->nodes, req->node_id, req->seqno,
                              n && n->sched_node != UINT32_MAX ? NULL : &avail,
                              req->usage ? &usage : NULL, mt_now_mono_ms(),
                              mt_now_wall_ms());
    mt_qty_list_release(&avail);
    if (rc == 0 && n && req->usage)
        take_gpus(n, req->usage);
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
    struct mt_node *n = valid_id(req->node_id)
                            ? mt_node_table_find(&h->nodes, req->node_id)
                            : NULL;

    if (!n) {
        mt_rpc_fail(call, -MT_ENOENT, "unknown node");
        return;
    }
    if (n->state == MT_NODE_ALIVE) {
        char *reason = mt_xasprintf(
            "stopped: %s", req->reason && *req->reason ? req->reason : "unregistered");
        MT_INFO("node unregistered node=%s reason=\"%s\"", n->id, reason);
        mt_node_table_mark_dead(&h->nodes, n, reason, mt_now_wall_ms());
        free(reason);
        mt_head_save_node(h, n);
        mt_head_notify(h, n, MANTA__NODE_EVENT__KIND__KIND_DEAD);
        mt__sched_node_down(h, n);
        mt_node_table_trim(&h->nodes);
    }
    mt_rpc_reply(call, &reply.base);
}

/* ---- cluster status ------------------------------------------------------ */

/* The storage behind a built GetClusterStatusReply (all borrowed from h). */
struct status_scratch {
    char *demand_text;          /* owned; demands[] point into it */
    char **demands;
    struct pb_node *pn;
    Manta__NodeInfo **nodes;
    size_t n;
    struct mt_qty_list total, avail;
    Manta__ResourceEntry *res, **tot_p, **av_p;
};

/* Demand lines from the scheduler, and task counts. */
static void status_add_demands(struct mt_head *h,
                               Manta__GetClusterStatusReply *reply,
                               struct status_scratch *sc)
{
    size_t n = 0;
    char *line, *save = NULL;

    sc->demand_text = mt__sched_demands(h);
    for (const char *p = sc->demand_text; *p; p++)
        n += *p == '\n';
    sc->demands = mt_xcalloc(n + 1, sizeof(*sc->demands));
    n = 0;
    for (line = strtok_r(sc->demand_text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        sc->demands[n++] = line + strspn(line, " ");
    reply->n_demands = n;
    reply->demands = sc->demands;
    reply->pending_tasks =
        mt_task_table_count(&h->tq->table, MT_TASK_PENDING);
    reply->running_tasks =
        mt_task_table_count(&h->tq->table, MT_TASK_RUNNING) +
        mt_task_table_count(&h->tq->table, MT_TASK_SCHEDULED);
}

/*
 * Build the cluster status from the node table. The reply points into h and
 * into sc: use it before the loop runs again, then status_release(sc).
 * Shared by GetClusterStatus and the dashboard (mt_head_status_json).
 */
static void status_build(struct mt_head *h, Manta__GetClusterStatusReply *reply,
                         struct status_scratch *sc)
{
    size_t n = h->nodes.n;

    memset(sc, 0, sizeof(*sc));
    for (size_t i = 0; i < n; i++)
        mt__sched_sync_avail(h, h->nodes.v[i]);
    sc->n = n;
    sc->pn = mt_xcalloc(n + 1, sizeof(*sc->pn));
    sc->nodes = mt_xcalloc(n + 1, sizeof(*sc->nodes));
    for (size_t i = 0; i < n; i++) {
        pb_node_fill(&sc->pn[i], h->nodes.v[i]);
        sc->nodes[i] = &sc->pn[i].info;
    }
    mt_node_table_totals(&h->nodes, &sc->total, &sc->avail);
    sc->res = mt_xcalloc(sc->total.n + sc->avail.n + 1, sizeof(*sc->res));
    sc->tot_p = mt_xcalloc(sc->total.n + 1, sizeof(*sc->tot_p));
    sc->av_p = mt_xcalloc(sc->avail.n + 1, sizeof(*sc->av_p));
    fill_res(&sc->total, sc->res, sc->tot_p);
    fill_res(&sc->avail, sc->res + sc->total.n, sc->av_p);
    manta__get_cluster_status_reply__init(reply);
    reply->cluster_id = h->cluster_id;
    reply->head_address = h->address;
    reply->head_start_time_ms = h->start_time_ms;
    reply->head_version = (char *)MT_VERSION;
    reply->n_nodes = n;
    reply->nodes = sc->nodes;
    reply->n_resources_total = sc->total.n;
    reply->resources_total = sc->tot_p;
    reply->n_resources_available = sc->avail.n;
    reply->resources_available = sc->av_p;
    status_add_demands(h, reply, sc);
}

static void status_release(struct status_scratch *sc)
{
    free(sc->demand_text);
    free(sc->demands);
    for (size_t i = 0; i < sc->n; i++)
        pb_node_release(&sc->pn[i]);
    free(sc->pn);
    free(sc->nodes);
    free(sc->res);
    free(sc->tot_p);
    free(sc->av_p);
    mt_qty_list_release(&sc->total);
    mt_qty_list_release(&sc->avail);
}

void mt_head_status_json(struct mt_head *h, struct mt_strbuf *out)
{
    Manta__GetClusterStatusReply reply;
    struct status_scratch sc;

    status_build(h, &reply, &sc);
    mt_status_json(out, &reply);
    status_release(&sc);
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
    struct mt_head_watcher *w;

    if (h->stopping) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "head is shutting down");
        return;
    }
    w = mt_xcalloc(1, sizeof(*w));
    w->h = h;
    w->call = call;
    w->next = h->watchers;
    h->watchers = w;
    mt_rpc_call_on_cancel(call, on_watcher_cancel, w);
    if (req->initial_snapshot)
        for (size_t i = 0; i < h->nodes.n; i++)
            send_event(w, h->nodes.v[i], MANTA__NODE_EVENT__KIND__KIND_ADDED);
}

const struct mt_rpc_handler mt_head_handlers[] = {
    {&mt_head_register_node, h_register},
    {&mt_head_report_node, h_report},
    {&mt_head_unregister_node, h_unregister},
    {&mt_head_get_cluster_status, h_status},
    {&mt_head_watch_nodes, h_watch},
    {&mt_head_submit_task, mt__h_submit_task},
    {&mt_head_watch_task, mt__h_watch_task},
    {&mt_head_submit_tasks, mt__h_submit_tasks},
    {&mt_head_watch_tasks, mt__h_watch_tasks},
    {&mt_head_cancel_task, mt__h_cancel_task},
    {&mt_head_list_tasks, mt__h_list_tasks},
    {&mt_head_report_tasks, mt__h_report_tasks},
    {&mt_head_create_pg, mt__h_create_pg},
    {&mt_head_wait_pg, mt__h_wait_pg},
    {&mt_head_remove_pg, mt__h_remove_pg},
    {&mt_head_list_pgs, mt__h_list_pgs},
    {&mt_head_register_objects, mt__h_register_objects},
    {&mt_head_release_objects, mt__h_release_objects},
    {&mt_head_get_object, mt__h_get_object},
    {&mt_head_list_objects, mt__h_list_objects},
    {&mt_head_get_actor, mt__h_get_actor},
    {&mt_head_list_actors, mt__h_list_actors},
    {&mt_head_kill_actor, mt__h_kill_actor},
    {&mt_head_lease_actor_owner, mt__h_lease_actor_owner},
    {&mt_head_submit_gang, mt__h_submit_gang},
    {&mt_head_get_gang, mt__h_get_gang},
    {&mt_head_cancel_gang, mt__h_cancel_gang},
    {&mt_head_list_gangs, mt__h_list_gangs},
};

const size_t mt_head_n_handlers =
    sizeof(mt_head_handlers) / sizeof(mt_head_handlers[0]);
