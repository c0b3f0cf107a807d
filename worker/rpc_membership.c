/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_membership.c -- the wire of the node's membership (membership.h):
 * the link that sends RegisterNode, ReportNode and UnregisterNode to the
 * head and hands back how they ended, and the GetNodeInfo handler. All
 * three describe the node the same way: its identity, its resources and
 * labels, and its host usage with per-GPU figures. Every RegisterNode
 * also lists what the node holds (holdings_view): the runs' tasks and the
 * tasks pushed to its leases (tasks.h, leases.h: mt_*_visit_held) and the
 * objects in its store (mt_store_visit), for a restarted head to
 * reconcile against.
 *
 * THREAD: the worker's loop thread only.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "objstore/store.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker/gpu_monitor.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

/* The GPU monitor's latest figures into u->gpus. RET 0 or -MT_ENOMEM. */
static int gpus_view(struct mt_worker *w, struct mt_pb_arena *a,
                     Manta__HostUsage *u)
{
    struct mt_gpu_stat *st;
    Manta__GpuStats *g;
    int n;

    if (!w->cfg->gpu_monitor)
        return 0;
    if (!(st = mt_pb_alloc(a, MT_GPU_MAX * sizeof(*st))))
        return -MT_ENOMEM;
    n = mt_gpu_monitor_read(w->cfg->gpu_monitor, st, MT_GPU_MAX);
    g = mt_pb_alloc(a, ((size_t)n + 1) * sizeof(*g));
    u->gpus = mt_pb_alloc(a, ((size_t)n + 1) * sizeof(*u->gpus));
    if (!g || !u->gpus)
        return -MT_ENOMEM;
    for (int i = 0; i < n; i++) {
        manta__gpu_stats__init(&g[i]);
        g[i].index = st[i].index;
        g[i].id = st[i].id;
        g[i].name = st[i].name;
        g[i].uuid = st[i].uuid;
        g[i].memory_total_bytes = st[i].mem_total;
        g[i].memory_used_bytes = st[i].mem_used;
        g[i].utilization_percent = st[i].util_percent;
        u->gpus[i] = &g[i];
    }
    u->n_gpus = (size_t)n;
    return 0;
}

/* The object store's figures into u. */
static void store_view(struct mt_worker *w, Manta__HostUsage *u)
{
    struct mt_store_stats st;

    if (!w->objects.store)
        return;
    mt_store_stats(w->objects.store, &st);
    u->object_store_used_bytes = st.used;
    u->object_store_capacity_bytes = st.capacity;
    u->object_store_objects = st.num_objects;
    u->object_store_spilled_bytes_total = st.spilled_total;
    u->object_store_evicted_bytes_total = st.evicted_bytes;
    u->object_store_restored_bytes_total = st.restored_total;
}

/* The host's use now into u, its resources (all available: the head
 * counts what runs) into res; arrays from a. Aborts when memory runs out. */
static void usage_view(struct mt_worker *w, struct mt_pb_arena *a,
                       Manta__HostUsage *u, Manta__ResourceEntry ***res,
                       size_t *n_res)
{
    struct mt_host_usage h;

    manta__host_usage__init(u);
    mt_membership_usage(w->membership, &h);
    u->cpu_percent = h.cpu_percent;
    u->mem_total_bytes = h.mem_total_bytes;
    u->mem_used_bytes = h.mem_used_bytes;
    u->num_cpus_online = h.num_cpus_online;
    u->disk_used_bytes = h.disk_used_bytes;
    u->disk_total_bytes = h.disk_total_bytes;
    u->net_rx_bytes = h.net_rx_bytes;
    u->net_tx_bytes = h.net_tx_bytes;
    store_view(w, u);
    if (gpus_view(w, a, u) < 0 ||
        mt_pb_res_view(a, &w->cfg->resources, res, n_res) < 0)
        mt_xoom(sizeof(*u));
}

/* A NodeInfo describing this worker, pointing into w, u and a. */
static void node_view(struct mt_worker *w, struct mt_pb_arena *a,
                      Manta__HostUsage *u, Manta__NodeInfo *ni)
{
    manta__node_info__init(ni);
    usage_view(w, a, u, &ni->resources_total, &ni->n_resources_total);
    if (mt_pb_labels_view(a, &w->cfg->labels, &ni->labels,
                          &ni->n_labels) < 0)
        mt_xoom(sizeof(*ni));
    ni->node_id = w->node_id;
    ni->address = w->address;
    ni->node_ip = (char *)w->cfg->node_ip;
    ni->hostname = w->hostname;
    ni->state = mt_membership_registered(w->membership)
                    ? MANTA__NODE_STATE__NODE_STATE_ALIVE
                    : MANTA__NODE_STATE__NODE_STATE_UNSPECIFIED;
    ni->n_resources_available = ni->n_resources_total;
    ni->resources_available = ni->resources_total;
    ni->usage = u;
    ni->start_time_ms = w->start_time_ms;
    ni->pid = (uint32_t)getpid();
    ni->temp_dir = (char *)(w->cfg->temp_dir ? w->cfg->temp_dir : "");
    ni->version = (char *)MT_VERSION;
    ni->metrics_address = w->metrics_address;
}

/* ---- holdings: what the node holds --------------------------------------- */

/* The lists being built; arrays from a (grown by hand, then kept). */
struct holdings {
    struct mt_pb_arena *a;
    Manta__HeldTask **tasks;
    size_t n_tasks, cap_tasks;
    ProtobufCBinaryData *objects;
    size_t n_objects, cap_objects;
};

static void add_held_task(void *arg, const struct mt_held_task *h)
{
    struct holdings *hd = arg;
    Manta__HeldTask *t = mt_pb_alloc(hd->a, sizeof(*t));

    if (!t)
        mt_xoom(sizeof(*t));
    manta__held_task__init(t);
    t->task_id = (char *)h->task_id;
    t->attempt = h->attempt;
    t->lease_id = (char *)(h->lease_id ? h->lease_id : "");
    mt_xgrow((void **)&hd->tasks, &hd->cap_tasks, hd->n_tasks + 1,
             sizeof(*hd->tasks));
    hd->tasks[hd->n_tasks++] = t;
}

static void add_held_object(void *arg, const mt_object_id *id)
{
    struct holdings *hd = arg;

    mt_xgrow((void **)&hd->objects, &hd->cap_objects, hd->n_objects + 1,
             sizeof(*hd->objects));
    hd->objects[hd->n_objects].data = (uint8_t *)id->b;
    hd->objects[hd->n_objects++].len = MT_OBJECT_ID_LEN;
}

/* Fill req's holdings (pointing into w's tables and hd; free hd's arrays
 * after the call is encoded). */
static void holdings_view(struct mt_worker *w, struct holdings *hd,
                          Manta__RegisterNodeRequest *req)
{
    mt_runs_visit_held(w->runs, add_held_task, hd);
    mt_leases_visit_held(w->leases, add_held_task, hd);
    if (w->objects.store)
        mt_store_visit(w->objects.store, add_held_object, hd);
    req->held_tasks = hd->tasks;
    req->n_held_tasks = hd->n_tasks;
    req->held_objects = hd->objects;
    req->n_held_objects = hd->n_objects;
    req->holdings = true;
    /* Once per registration, and again when the holdings change while
     * an unreachable head is retried every second. */
    if (w->reg_log_next || w->reg_logged[0] != hd->n_tasks ||
        w->reg_logged[1] != hd->n_objects)
        MT_INFO("registering with %zu held tasks, %zu objects", hd->n_tasks,
                hd->n_objects);
    w->reg_log_next = false;
    w->reg_logged[0] = hd->n_tasks;
    w->reg_logged[1] = hd->n_objects;
}

/* ---- the link: calls to the head ----------------------------------------- */

static void on_register_done(void *arg, const struct mt_rpc_status *st,
                             const ProtobufCMessage *resp)
{
    const Manta__RegisterNodeReply *r = (const Manta__RegisterNodeReply *)resp;
    struct mt_worker *w = arg;

    if (st->code == 0)
        w->reg_log_next = true;
    mt_membership_register_ended(w->membership,
                                 mt_rpc_status_to_err(st->code), st->message,
                                 r ? r->cluster_id : "",
                                 r ? r->report_period_ms : 0);
}

static int register_node(void *arg, int timeout_ms)
{
    Manta__RegisterNodeRequest req = MANTA__REGISTER_NODE_REQUEST__INIT;
    struct mt_worker *w = arg;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct holdings hd = {&a, NULL, 0, 0, NULL, 0, 0};
    Manta__HostUsage u;
    Manta__NodeInfo ni;
    int rc;

    node_view(w, &a, &u, &ni);
    req.node = &ni;
    req.node_secret = w->node_secret;
    holdings_view(w, &hd, &req);
    rc = mt_rpc_unary(w->head, &mt_head_register_node, &req.base, timeout_ms,
                      MT_RPC_WAIT_FOR_READY, on_register_done, w);
    mt_pb_arena_release(&a);
    free(hd.tasks);
    free(hd.objects);
    return rc;
}

static void on_report_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__ReportNodeReply *r = (const Manta__ReportNodeReply *)resp;
    struct mt_worker *w = arg;

    mt_membership_report_ended(w->membership, mt_rpc_status_to_err(st->code),
                               st->message, r ? r->known : false);
}

static int report_node(void *arg, uint64_t seqno, int timeout_ms)
{
    Manta__ReportNodeRequest req = MANTA__REPORT_NODE_REQUEST__INIT;
    struct mt_worker *w = arg;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__HostUsage u;
    int rc;

    usage_view(w, &a, &u, &req.resources_available,
               &req.n_resources_available);
    req.node_id = w->node_id;
    req.node_secret = w->node_secret;
    req.seqno = seqno;
    req.usage = &u;
    rc = mt_rpc_unary(w->head, &mt_head_report_node, &req.base, timeout_ms, 0,
                      on_report_done, w);
    mt_pb_arena_release(&a);
    return rc;
}

static void on_unregister_done(void *arg, const struct mt_rpc_status *st,
                               const ProtobufCMessage *resp)
{
    struct mt_worker *w = arg;

    (void)resp;
    mt_membership_unregister_ended(w->membership,
                                   mt_rpc_status_to_err(st->code),
                                   st->message);
}

static int unregister_node(void *arg, const char *reason, int timeout_ms)
{
    Manta__UnregisterNodeRequest req = MANTA__UNREGISTER_NODE_REQUEST__INIT;
    struct mt_worker *w = arg;

    req.node_id = w->node_id;
    req.node_secret = w->node_secret;
    req.reason = (char *)reason;
    return mt_rpc_unary(w->head, &mt_head_unregister_node, &req.base,
                        timeout_ms, 0, on_unregister_done, w);
}

static const struct mt_membership_link head_link = {
    register_node, report_node, unregister_node};

/* ---- WorkerService ------------------------------------------------------- */

static void h_node_info(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    struct mt_worker *w = arg;
    Manta__GetNodeInfoReply reply = MANTA__GET_NODE_INFO_REPLY__INIT;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__HostUsage u;
    Manta__NodeInfo ni;

    node_view(w, &a, &u, &ni);
    reply.node = &ni;
    reply.head_address = (char *)w->cfg->head_addr;
    reply.registered = mt_membership_registered(w->membership);
    mt_rpc_reply(call, &reply.base);
    mt_pb_arena_release(&a);
}

static void start(struct mt_worker *w)
{
    w->reg_log_next = true;
    mt_membership_set_link(w->membership, &head_link, w);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_get_node_info, h_node_info},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_membership = {handlers, start,
                                                           NULL};
