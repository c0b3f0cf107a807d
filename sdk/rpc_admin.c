/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_admin.c -- GetClusterStatus in protobuf: the cluster's status as a
 * plain C view on the kept reply (manta/admin.h), as the JSON the
 * dashboard serves (proto/status_json.c, the one writer for both), and
 * the node listing (its JSON from proto/list_json.c).
 *
 * THREAD: the caller's.
 */
#include "sdk/rpc_admin.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "proto/status_json.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_reply.h"

void mt__status_free(struct mt__status *s)
{
    if (!s)
        return;
    mt__keep_release(&s->keep);
    free(s);
}

/* ---- nodes --------------------------------------------------------------- */

static void fill_gpu(const Manta__GpuStats *x, mt_gpu_info *g)
{
    g->index = x->index;
    g->id = x->id;
    g->name = x->name;
    g->uuid = x->uuid;
    g->memory_used_bytes = x->memory_used_bytes;
    g->memory_total_bytes = x->memory_total_bytes;
    g->utilization_percent = x->utilization_percent;
}

static int fill_gpus(struct mt__keep *k, const Manta__HostUsage *u,
                     mt_node_info *n)
{
    mt_gpu_info *g = u->n_gpus ? mt__keep_alloc(k, u->n_gpus * sizeof(*g))
                               : NULL;

    if (u->n_gpus && !g)
        return -MT_ENOMEM;
    for (size_t i = 0; i < u->n_gpus; i++)
        fill_gpu(u->gpus[i], &g[i]);
    n->gpus = g;
    n->n_gpus = u->n_gpus;
    n->has_usage = true;
    n->cpu_percent = u->cpu_percent;
    n->mem_used_bytes = u->mem_used_bytes;
    n->mem_total_bytes = u->mem_total_bytes;
    n->store_used_bytes = u->object_store_used_bytes;
    n->store_capacity_bytes = u->object_store_capacity_bytes;
    n->store_objects = u->object_store_objects;
    n->store_spilled_bytes_total = u->object_store_spilled_bytes_total;
    return 0;
}

/* x as a node view in k. RET 0, -MT_ENOMEM. */
static int fill_node(struct mt__keep *k, const Manta__NodeInfo *x,
                     mt_node_info *n)
{
    n->node_id = x->node_id;
    n->alive = x->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;
    n->address = x->address;
    n->node_ip = x->node_ip;
    n->hostname = x->hostname;
    n->temp_dir = x->temp_dir;
    n->pid = x->pid;
    n->start_time_ms = x->start_time_ms;
    n->last_report_ms = x->last_report_ms;
    n->death_time_ms = x->death_time_ms;
    n->death_reason = x->death_reason;
    n->n_total = x->n_resources_total;
    n->n_available = x->n_resources_available;
    n->total = mt__res_view(k, x->resources_total, n->n_total);
    n->available = mt__res_view(k, x->resources_available, n->n_available);
    if ((n->n_total && !n->total) || (n->n_available && !n->available) ||
        mt__labels_view(k, x->labels, x->n_labels, &n->labels,
                        &n->n_labels) < 0 ||
        (x->usage && fill_gpus(k, x->usage, n) < 0))
        return -MT_ENOMEM;
    return 0;
}

static int fill_nodes(struct mt__keep *k, Manta__NodeInfo *const *v,
                      size_t n, const mt_node_info **out)
{
    mt_node_info *nodes = n ? mt__keep_alloc(k, n * sizeof(*nodes)) : NULL;

    if (n && !nodes)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (fill_node(k, v[i], &nodes[i]) < 0)
            return -MT_ENOMEM;
    *out = nodes;
    return 0;
}

/* ---- status -------------------------------------------------------------- */

/* The storage part of r as a view in k (NULL when r has none). */
static int fill_storage(struct mt__keep *k, const Manta__StorageStatus *x,
                        const mt_storage_info **out)
{
    mt_storage_info *p;

    *out = NULL;
    if (!x)
        return 0;
    if (!(p = mt__keep_alloc(k, sizeof(*p))))
        return -MT_ENOMEM;
    p->backend = x->backend;
    p->spec = x->spec;
    p->healthy = x->healthy;
    p->writes = x->writes;
    p->batches = x->batches;
    p->buffered = x->buffered;
    p->dropped = x->dropped;
    p->last_error_ms = x->last_error_ms;
    p->last_error = x->last_error;
    p->down_since_ms = x->down_since_ms;
    *out = p;
    return 0;
}

static int fill_status(struct mt__status *s)
{
    const Manta__GetClusterStatusReply *r = s->keep.reply;
    mt_cluster_status *p = &s->pub;

    p->cluster_id = r->cluster_id;
    p->head_address = r->head_address;
    p->head_version = r->head_version;
    p->head_start_time_ms = r->head_start_time_ms;
    p->n_nodes = r->n_nodes;
    p->n_total = r->n_resources_total;
    p->n_available = r->n_resources_available;
    p->total = mt__res_view(&s->keep, r->resources_total, p->n_total);
    p->available = mt__res_view(&s->keep, r->resources_available,
                                p->n_available);
    p->demands = (const char *const *)r->demands;
    p->n_demands = r->n_demands;
    p->pending_tasks = r->pending_tasks;
    p->running_tasks = r->running_tasks;
    if ((p->n_total && !p->total) || (p->n_available && !p->available) ||
        fill_storage(&s->keep, r->storage, &p->storage) < 0)
        return -MT_ENOMEM;
    return fill_nodes(&s->keep, r->nodes, r->n_nodes, &p->nodes);
}

int mt__status_get(struct mt_client *c, int timeout_ms, unsigned flags,
                   struct mt__status **out, char **json)
{
    Manta__GetClusterStatusRequest req =
        MANTA__GET_CLUSTER_STATUS_REQUEST__INIT;
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;
    struct mt__status *s;
    void *reply;
    int rc;

    rc = mt__head_call(c, &mt_head_get_cluster_status, &req, timeout_ms,
                       flags, &reply);
    if (rc < 0)
        return rc;
    if (json) { /* one or the other */
        mt_status_json(&sb, reply);
        mt__msg_free(reply);
        rc = mt__json_take(&sb, json);
    } else if ((s = calloc(1, sizeof(*s)))) {
        s->keep.reply = reply;
        if ((rc = fill_status(s)) < 0)
            mt__status_free(s);
        else
            *out = s;
    } else {
        mt__msg_free(reply);
        rc = -MT_ENOMEM;
    }
    return rc < 0 ? mt__set_error(c, rc, "out of memory") : 0;
}

/* ---- the node listing ---------------------------------------------------- */

static bool node_matches(const Manta__NodeInfo *n, const mt_list_filter *f,
                         int state)
{
    bool alive = n->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;

    return (!state || (state == 1) == alive) &&
           (!f->node_id || strcmp(f->node_id, n->node_id) == 0);
}

int mt__node_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__GetClusterStatusRequest req =
        MANTA__GET_CLUSTER_STATUS_REQUEST__INIT;
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;
    size_t limit = f->limit ? f->limit : MT__LIST_DEFAULT_LIMIT, n = 0;
    const Manta__GetClusterStatusReply *r;
    Manta__NodeInfo **sel;
    int rc;

    rc = mt__head_call(c, &mt_head_get_cluster_status, &req,
                       c->rpc_timeout_ms, 0, &keep->reply);
    if (rc < 0)
        return rc;
    r = keep->reply;
    if (!(sel = mt__keep_alloc(keep, (r->n_nodes + 1) * sizeof(*sel))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n_nodes; i++)
        if (node_matches(r->nodes[i], f, state))
            sel[n++] = r->nodes[i];
    l->total = n;
    if (f->offset < n) { /* the head sends every node: page here */
        sel += f->offset;
        n -= f->offset;
    } else {
        n = 0;
    }
    l->n = n < limit ? n : limit;
    if (json) {
        mt_list_json_nodes(&sb, sel, l->n, l->total);
        rc = mt__json_take(&sb, json);
    } else {
        rc = fill_nodes(keep, sel, l->n, &l->nodes);
    }
    return rc < 0 ? mt__set_error(c, rc, "out of memory") : 0;
}
