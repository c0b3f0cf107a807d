/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_checks.c -- the head's checks of decoded requests (see
 * rpc_checks.h). Moved out of rpc_nodes.c and rpc_watch.c unchanged, so
 * the fuzz harnesses can run them without the daemon.
 */
#include "head/rpc_checks.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/parse.h"

#define MAX_ID_LEN 64
#define MAX_STR_LEN 1024

/* ---- nodes ----------------------------------------------------------------- */

bool mt_head_node_id_valid(const char *s)
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

void mt_head_usage_from_pb(const Manta__HostUsage *u,
                           struct mt_node_usage *out)
{
    out->cpu_percent = u->cpu_percent >= 0 && u->cpu_percent <= 100
                           ? u->cpu_percent
                           : 0;
    out->mem_used_bytes = u->mem_used_bytes;
    out->mem_total_bytes = u->mem_total_bytes;
    out->num_cpus_online = u->num_cpus_online;
    out->disk_used_bytes = u->disk_used_bytes;
    out->disk_total_bytes = u->disk_total_bytes;
    out->net_rx_bytes = u->net_rx_bytes;
    out->net_tx_bytes = u->net_tx_bytes;
    out->store_used_bytes = u->object_store_used_bytes;
    out->store_capacity_bytes = u->object_store_capacity_bytes;
    out->store_objects = u->object_store_objects;
    out->store_spilled_bytes_total = u->object_store_spilled_bytes_total;
    out->store_evicted_bytes_total = u->object_store_evicted_bytes_total;
    out->store_restored_bytes_total = u->object_store_restored_bytes_total;
}

void mt_head_usage_to_pb(const struct mt_node_usage *u, Manta__HostUsage *out)
{
    out->disk_used_bytes = u->disk_used_bytes;
    out->disk_total_bytes = u->disk_total_bytes;
    out->net_rx_bytes = u->net_rx_bytes;
    out->net_tx_bytes = u->net_tx_bytes;
    out->object_store_used_bytes = u->store_used_bytes;
    out->object_store_capacity_bytes = u->store_capacity_bytes;
    out->object_store_objects = u->store_objects;
    out->object_store_spilled_bytes_total = u->store_spilled_bytes_total;
    out->object_store_evicted_bytes_total = u->store_evicted_bytes_total;
    out->object_store_restored_bytes_total = u->store_restored_bytes_total;
}

/* Copy s (peer input; may be NULL) into out, cut at len - 1 bytes. */
static void take_str(char *out, size_t len, const char *s)
{
    snprintf(out, len, "%s", s ? s : "");
}

struct mt_node_gpu *mt_head_gpus_from_pb(const Manta__HostUsage *u,
                                         size_t *n)
{
    size_t k = u->n_gpus < MT_NODE_MAX_GPUS ? u->n_gpus : MT_NODE_MAX_GPUS;
    struct mt_node_gpu *v = mt_xcalloc(k + 1, sizeof(*v));

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
    *n = k;
    return v;
}

const char *mt_head_node_info_check(const Manta__NodeInfo *ni)
{
    if (!mt_head_node_id_valid(ni->node_id))
        return "node_id must be 1-64 characters of [A-Za-z0-9_-]";
    if (!ni->address || !strchr(ni->address, ':') || !valid_str(ni->address))
        return "address must be host:port";
    if (!valid_str(ni->node_ip) || !valid_str(ni->hostname) ||
        !valid_str(ni->temp_dir) || !valid_str(ni->version))
        return "overlong string field";
    if (ni->metrics_address && *ni->metrics_address &&
        (!valid_str(ni->metrics_address) ||
         !mt_parse_host_port(ni->metrics_address)))
        return "metrics_address must be host:port";
    if (ni->n_labels > MT_HEAD_NODE_MAX_ENTRIES)
        return "too many labels";
    for (size_t i = 0; i < ni->n_labels; i++)
        if (!ni->labels[i]->key || !*ni->labels[i]->key ||
            !valid_str(ni->labels[i]->key) || !valid_str(ni->labels[i]->value))
            return "label with an empty or overlong key";
    return NULL;
}

/* ---- tasks ------------------------------------------------------------------ */

const char *mt_head_batch_check(const Manta__SubmitTasksRequest *req)
{
    if (req->n_specs == 0 || req->n_specs > MT_HEAD_BATCH_MAX)
        return "specs: 1 to 4096 per call";
    if (req->n_tags != req->n_specs || req->n_output != req->n_specs)
        return "tags and output must have one entry per spec";
    return NULL;
}
