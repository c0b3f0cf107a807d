/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_membership.c -- the wire of the node's membership (membership.h):
 * the link that sends RegisterNode, ReportNode and UnregisterNode to the
 * head and hands back how they ended, and the GetNodeInfo handler. All
 * three describe the node the same way: its identity, its resources and
 * labels, and its host usage with per-GPU figures.
 *
 * THREAD: the worker's loop thread only.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "worker/gpu_monitor.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

/* Resource and label arrays for a NodeInfo, freed after packing. */
struct pb_arrays {
    Manta__ResourceEntry *res;
    Manta__ResourceEntry **res_p;
    Manta__Label *lab;
    Manta__Label **lab_p;
    Manta__GpuStats *gpu;       /* NULL until fill_gpus */
    Manta__GpuStats **gpu_p;
    struct mt_gpu_stat *stat;
};

static void fill_arrays(struct pb_arrays *a, const struct mt_qty_list *r,
                        const struct mt_kv_list *l)
{
    memset(a, 0, sizeof(*a));
    a->res = mt_xcalloc(r->n + 1, sizeof(*a->res));
    a->res_p = mt_xcalloc(r->n + 1, sizeof(*a->res_p));
    a->lab = mt_xcalloc(l->n + 1, sizeof(*a->lab));
    a->lab_p = mt_xcalloc(l->n + 1, sizeof(*a->lab_p));
    for (size_t i = 0; i < r->n; i++) {
        manta__resource_entry__init(&a->res[i]);
        a->res[i].name = r->v[i].name;
        a->res[i].quantity = r->v[i].qty;
        a->res_p[i] = &a->res[i];
    }
    for (size_t i = 0; i < l->n; i++) {
        manta__label__init(&a->lab[i]);
        a->lab[i].key = l->v[i].key;
        a->lab[i].value = l->v[i].value;
        a->lab_p[i] = &a->lab[i];
    }
}

static void free_arrays(struct pb_arrays *a)
{
    free(a->res);
    free(a->res_p);
    free(a->lab);
    free(a->lab_p);
    free(a->gpu);
    free(a->gpu_p);
    free(a->stat);
}

/* The GPU monitor's latest figures into u->gpus; arrays go into a. */
static void fill_gpus(struct mt_worker *w, Manta__HostUsage *u,
                      struct pb_arrays *a)
{
    int n;

    if (!w->cfg->gpu_monitor)
        return;
    a->stat = mt_xcalloc(MT_GPU_MAX, sizeof(*a->stat));
    n = mt_gpu_monitor_read(w->cfg->gpu_monitor, a->stat, MT_GPU_MAX);
    a->gpu = mt_xcalloc((size_t)n + 1, sizeof(*a->gpu));
    a->gpu_p = mt_xcalloc((size_t)n + 1, sizeof(*a->gpu_p));
    for (int i = 0; i < n; i++) {
        Manta__GpuStats *g = &a->gpu[i];

        manta__gpu_stats__init(g);
        g->index = a->stat[i].index;
        g->id = a->stat[i].id;
        g->name = a->stat[i].name;
        g->uuid = a->stat[i].uuid;
        g->memory_total_bytes = a->stat[i].mem_total;
        g->memory_used_bytes = a->stat[i].mem_used;
        g->utilization_percent = a->stat[i].util_percent;
        a->gpu_p[i] = g;
    }
    u->n_gpus = (size_t)n;
    u->gpus = a->gpu_p;
}

static void fill_usage(struct mt_worker *w, Manta__HostUsage *u,
                       struct pb_arrays *a)
{
    struct mt_host_usage h;

    manta__host_usage__init(u);
    mt_membership_usage(w->membership, &h);
    u->cpu_percent = h.cpu_percent;
    u->mem_total_bytes = h.mem_total_bytes;
    u->mem_used_bytes = h.mem_used_bytes;
    u->num_cpus_online = h.num_cpus_online;
    fill_gpus(w, u, a);
}

/* Fill a NodeInfo describing this worker; arrays go into a. */
static void fill_node(struct mt_worker *w, Manta__NodeInfo *ni,
                      Manta__HostUsage *u, struct pb_arrays *a)
{
    manta__node_info__init(ni);
    fill_arrays(a, &w->cfg->resources, &w->cfg->labels);
    fill_usage(w, u, a);
    ni->node_id = w->node_id;
    ni->address = w->address;
    ni->node_ip = (char *)w->cfg->node_ip;
    ni->hostname = w->hostname;
    ni->state = mt_membership_registered(w->membership)
                    ? MANTA__NODE_STATE__NODE_STATE_ALIVE
                    : MANTA__NODE_STATE__NODE_STATE_UNSPECIFIED;
    ni->n_resources_total = w->cfg->resources.n;
    ni->resources_total = a->res_p;
    /* Nothing runs tasks yet: everything is available. */
    ni->n_resources_available = w->cfg->resources.n;
    ni->resources_available = a->res_p;
    ni->n_labels = w->cfg->labels.n;
    ni->labels = a->lab_p;
    ni->usage = u;
    ni->start_time_ms = w->start_time_ms;
    ni->pid = (uint32_t)getpid();
    ni->temp_dir = (char *)(w->cfg->temp_dir ? w->cfg->temp_dir : "");
    ni->version = (char *)MT_WORKER_VERSION;
}

/* ---- the link: calls to the head ------------------------------------------- */

static void on_register_done(void *arg, const struct mt_rpc_status *st,
                             const ProtobufCMessage *resp)
{
    const Manta__RegisterNodeReply *r = (const Manta__RegisterNodeReply *)resp;
    struct mt_worker *w = arg;

    mt_membership_register_ended(w->membership,
                                 mt_rpc_status_to_err(st->code), st->message,
                                 r ? r->cluster_id : "",
                                 r ? r->report_period_ms : 0);
}

static int register_node(void *arg, int timeout_ms)
{
    Manta__RegisterNodeRequest req = MANTA__REGISTER_NODE_REQUEST__INIT;
    struct mt_worker *w = arg;
    Manta__NodeInfo ni;
    Manta__HostUsage u;
    struct pb_arrays a;
    int rc;

    fill_node(w, &ni, &u, &a);
    req.node = &ni;
    rc = mt_rpc_unary(w->head, &mt_head_register_node, &req.base, timeout_ms,
                      MT_RPC_WAIT_FOR_READY, on_register_done, w);
    free_arrays(&a);
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
    Manta__HostUsage u;
    struct pb_arrays a;
    int rc;

    fill_arrays(&a, &w->cfg->resources, &w->cfg->labels);
    fill_usage(w, &u, &a);
    req.node_id = w->node_id;
    req.seqno = seqno;
    req.n_resources_available = w->cfg->resources.n;
    req.resources_available = a.res_p;
    req.usage = &u;
    rc = mt_rpc_unary(w->head, &mt_head_report_node, &req.base, timeout_ms, 0,
                      on_report_done, w);
    free_arrays(&a);
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
    req.reason = (char *)reason;
    return mt_rpc_unary(w->head, &mt_head_unregister_node, &req.base,
                        timeout_ms, 0, on_unregister_done, w);
}

static const struct mt_membership_link head_link = {
    register_node, report_node, unregister_node};

/* ---- WorkerService ------------------------------------------------------------ */

static void h_node_info(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    struct mt_worker *w = arg;
    Manta__GetNodeInfoReply reply = MANTA__GET_NODE_INFO_REPLY__INIT;
    Manta__NodeInfo ni;
    Manta__HostUsage u;
    struct pb_arrays a;

    fill_node(w, &ni, &u, &a);
    reply.node = &ni;
    reply.head_address = (char *)w->cfg->head_addr;
    reply.registered = mt_membership_registered(w->membership);
    mt_rpc_reply(call, &reply.base);
    free_arrays(&a);
}

static void start(struct mt_worker *w)
{
    mt_membership_set_link(w->membership, &head_link, w);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_get_node_info, h_node_info},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_membership = {handlers, start,
                                                           NULL};
