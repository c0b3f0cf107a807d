/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status_json.c -- the JSON form of GetClusterStatusReply (see
 * status_json.h). Field order and spacing are part of the output users
 * script against: change them only on purpose.
 */
#include "proto/status_json.h"

#include "common/qty.h"

void mt_status_json_res(struct mt_strbuf *sb, Manta__ResourceEntry *const *e,
                        size_t n)
{
    char num[32];

    mt_strbuf_adds(sb, "{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            mt_strbuf_adds(sb, ", ");
        mt_strbuf_add_json_str(sb, e[i]->name);
        mt_strbuf_addf(sb, ": %s", mt_qty_format(e[i]->quantity, num,
                                                 sizeof(num)));
    }
    mt_strbuf_adds(sb, "}");
}

static void json_labels(struct mt_strbuf *sb, Manta__Label *const *l,
                        size_t n)
{
    mt_strbuf_adds(sb, "{");
    for (size_t i = 0; i < n; i++) {
        mt_strbuf_adds(sb, i ? ", " : "");
        mt_strbuf_add_json_str(sb, l[i]->key);
        mt_strbuf_adds(sb, ": ");
        mt_strbuf_add_json_str(sb, l[i]->value);
    }
    mt_strbuf_adds(sb, "}");
}

/* n, or null when negative (unknown). */
static void json_known(struct mt_strbuf *sb, const char *key, int64_t n)
{
    if (n < 0)
        mt_strbuf_addf(sb, ", \"%s\": null", key);
    else
        mt_strbuf_addf(sb, ", \"%s\": %lld", key, (long long)n);
}

void mt_status_json_gpus(struct mt_strbuf *sb, const Manta__HostUsage *u)
{
    size_t n = u ? u->n_gpus : 0;

    mt_strbuf_adds(sb, "[");
    for (size_t i = 0; i < n; i++) {
        const Manta__GpuStats *g = u->gpus[i];

        mt_strbuf_addf(sb, "%s{\"index\": %d, \"id\": ", i ? ", " : "",
                       g->index);
        mt_strbuf_add_json_str(sb, g->id);
        mt_strbuf_adds(sb, ", \"name\": ");
        mt_strbuf_add_json_str(sb, g->name);
        mt_strbuf_adds(sb, ", \"uuid\": ");
        mt_strbuf_add_json_str(sb, g->uuid);
        json_known(sb, "memory_used_bytes", g->memory_used_bytes);
        json_known(sb, "memory_total_bytes", g->memory_total_bytes);
        json_known(sb, "utilization_percent", g->utilization_percent);
        mt_strbuf_adds(sb, "}");
    }
    mt_strbuf_adds(sb, "]");
}

void mt_status_json_node_host(struct mt_strbuf *sb, const Manta__NodeInfo *n)
{
    mt_strbuf_adds(sb, ", \"address\": ");
    mt_strbuf_add_json_str(sb, n->address);
    mt_strbuf_adds(sb, ", \"node_ip\": ");
    mt_strbuf_add_json_str(sb, n->node_ip);
    mt_strbuf_adds(sb, ", \"hostname\": ");
    mt_strbuf_add_json_str(sb, n->hostname);
    mt_strbuf_adds(sb, ", \"metrics_address\": ");
    mt_strbuf_add_json_str(sb, n->metrics_address);
}

void mt_status_json_node_res(struct mt_strbuf *sb, const Manta__NodeInfo *n)
{
    mt_strbuf_adds(sb, ", \"resources_total\": ");
    mt_status_json_res(sb, n->resources_total, n->n_resources_total);
    mt_strbuf_adds(sb, ", \"resources_available\": ");
    mt_status_json_res(sb, n->resources_available, n->n_resources_available);
    mt_strbuf_adds(sb, ", \"labels\": ");
    json_labels(sb, n->labels, n->n_labels);
}

/* "usage": host, disk, network and object store figures. */
void mt_status_json_usage(struct mt_strbuf *sb, const Manta__HostUsage *u)
{
    if (!u)
        return;
    mt_strbuf_addf(sb,
                   ", \"usage\": {\"cpu_percent\": %.1f, "
                   "\"mem_used_bytes\": %llu, \"mem_total_bytes\": %llu, "
                   "\"disk_used_bytes\": %llu, \"disk_total_bytes\": %llu, "
                   "\"net_rx_bytes\": %llu, \"net_tx_bytes\": %llu, ",
                   u->cpu_percent, (unsigned long long)u->mem_used_bytes,
                   (unsigned long long)u->mem_total_bytes,
                   (unsigned long long)u->disk_used_bytes,
                   (unsigned long long)u->disk_total_bytes,
                   (unsigned long long)u->net_rx_bytes,
                   (unsigned long long)u->net_tx_bytes);
    mt_strbuf_addf(sb,
                   "\"object_store_used_bytes\": %llu, "
                   "\"object_store_capacity_bytes\": %llu, "
                   "\"object_store_objects\": %llu, "
                   "\"object_store_spilled_bytes_total\": %llu, "
                   "\"object_store_evicted_bytes_total\": %llu, "
                   "\"object_store_restored_bytes_total\": %llu}",
                   (unsigned long long)u->object_store_used_bytes,
                   (unsigned long long)u->object_store_capacity_bytes,
                   (unsigned long long)u->object_store_objects,
                   (unsigned long long)u->object_store_spilled_bytes_total,
                   (unsigned long long)u->object_store_evicted_bytes_total,
                   (unsigned long long)u->object_store_restored_bytes_total);
}

static void json_node(struct mt_strbuf *sb, const Manta__NodeInfo *n)
{
    mt_strbuf_adds(sb, "{\"node_id\": ");
    mt_strbuf_add_json_str(sb, n->node_id);
    mt_status_json_node_host(sb, n);
    mt_strbuf_addf(sb, ", \"state\": \"%s\"",
                   n->state == MANTA__NODE_STATE__NODE_STATE_ALIVE ? "ALIVE"
                                                                   : "DEAD");
    mt_status_json_node_res(sb, n);
    mt_status_json_usage(sb, n->usage);
    mt_strbuf_adds(sb, ", \"gpus\": ");
    mt_status_json_gpus(sb, n->usage);
    mt_strbuf_addf(sb, ", \"pid\": %u, \"start_time_ms\": %lld, "
                       "\"last_report_ms\": %lld, \"death_time_ms\": %lld",
                   n->pid, (long long)n->start_time_ms,
                   (long long)n->last_report_ms, (long long)n->death_time_ms);
    mt_strbuf_adds(sb, ", \"death_reason\": ");
    mt_strbuf_add_json_str(sb, n->death_reason);
    mt_strbuf_adds(sb, "}");
}

/* The head's storage: {"backend", "spec", "healthy", counters, errors}. */
static void json_storage(struct mt_strbuf *sb, const Manta__StorageStatus *s)
{
    if (!s) {
        mt_strbuf_adds(sb, ", \"storage\": null");
        return;
    }
    mt_strbuf_adds(sb, ", \"storage\": {\"backend\": ");
    mt_strbuf_add_json_str(sb, s->backend);
    mt_strbuf_adds(sb, ", \"spec\": ");
    mt_strbuf_add_json_str(sb, s->spec);
    mt_strbuf_addf(sb, ", \"healthy\": %s, \"writes\": %llu, "
                       "\"batches\": %llu, \"buffered\": %llu, "
                       "\"dropped\": %llu, \"last_error_ms\": %lld, "
                       "\"down_since_ms\": %lld, \"last_error\": ",
                   s->healthy ? "true" : "false",
                   (unsigned long long)s->writes,
                   (unsigned long long)s->batches,
                   (unsigned long long)s->buffered,
                   (unsigned long long)s->dropped,
                   (long long)s->last_error_ms, (long long)s->down_since_ms);
    mt_strbuf_add_json_str(sb, s->last_error);
    mt_strbuf_adds(sb, "}");
}

void mt_status_json(struct mt_strbuf *sb,
                    const Manta__GetClusterStatusReply *r)
{
    mt_strbuf_adds(sb, "{\"cluster_id\": ");
    mt_strbuf_add_json_str(sb, r->cluster_id);
    mt_strbuf_adds(sb, ", \"head_address\": ");
    mt_strbuf_add_json_str(sb, r->head_address);
    mt_strbuf_adds(sb, ", \"head_version\": ");
    mt_strbuf_add_json_str(sb, r->head_version);
    mt_strbuf_addf(sb, ", \"head_start_time_ms\": %lld",
                   (long long)r->head_start_time_ms);
    mt_strbuf_adds(sb, ", \"resources_total\": ");
    mt_status_json_res(sb, r->resources_total, r->n_resources_total);
    mt_strbuf_adds(sb, ", \"resources_available\": ");
    mt_status_json_res(sb, r->resources_available, r->n_resources_available);
    mt_strbuf_addf(sb, ", \"pending_tasks\": %llu, \"running_tasks\": %llu",
                   (unsigned long long)r->pending_tasks,
                   (unsigned long long)r->running_tasks);
    mt_strbuf_adds(sb, ", \"demands\": [");
    for (size_t i = 0; i < r->n_demands; i++) {
        if (i)
            mt_strbuf_adds(sb, ", ");
        mt_strbuf_add_json_str(sb, r->demands[i]);
    }
    mt_strbuf_adds(sb, "]");
    json_storage(sb, r->storage);
    mt_strbuf_adds(sb, ", \"nodes\": [");
    for (size_t i = 0; i < r->n_nodes; i++) {
        mt_strbuf_adds(sb, i ? ",\n  " : "\n  ");
        json_node(sb, r->nodes[i]);
    }
    mt_strbuf_adds(sb, r->n_nodes ? "\n]}\n" : "]}\n");
}
