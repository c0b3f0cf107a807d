/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c -- the head's metrics in the Prometheus text format 0.0.4
 * (what the dashboard's GET /metrics serves; names and families in
 * docs/dashboard.md): per node resources, host usage and GPU figures from
 * the node table, task counts from the task service, and how the state
 * storage is doing (head/storage.h).
 *
 * THREAD: the head's loop thread only.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/qty.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/head_int.h"
#include "head/metrics.h"

/* A label value: backslash, double quote and newline escaped. */
static void add_label(struct mt_strbuf *sb, const char *name, const char *v,
                      bool first)
{
    mt_strbuf_addf(sb, "%s%s=\"", first ? "" : ",", name);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '\\')
            mt_strbuf_adds(sb, "\\\\");
        else if (*p == '"')
            mt_strbuf_adds(sb, "\\\"");
        else if (*p == '\n')
            mt_strbuf_adds(sb, "\\n");
        else
            mt_strbuf_add(sb, p, 1);
    }
    mt_strbuf_adds(sb, "\"");
}

static void typed(struct mt_strbuf *sb, const char *name, const char *help,
                  const char *type)
{
    mt_strbuf_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void family(struct mt_strbuf *sb, const char *name, const char *help)
{
    typed(sb, name, help, "gauge");
}

/* name{[node_id,]resource,kind} for every entry of l. */
static void res_samples(struct mt_strbuf *sb, const char *name,
                        const char *node_id, const struct mt_qty_list *l,
                        const char *kind)
{
    char num[32];

    for (size_t i = 0; i < l->n; i++) {
        mt_strbuf_addf(sb, "%s{", name);
        if (node_id)
            add_label(sb, "node_id", node_id, true);
        add_label(sb, "resource", l->v[i].name, !node_id);
        add_label(sb, "kind", kind, false);
        mt_strbuf_addf(sb, "} %s\n", mt_qty_format(l->v[i].qty, num,
                                                   sizeof(num)));
    }
}

enum host_gauge { G_CPU_PERCENT, G_MEM_USED, G_MEM_TOTAL };

/* One host-usage gauge for every alive node. */
static void node_gauge(struct mt_strbuf *sb, const struct mt_node_table *t,
                       const char *name, const char *help, enum host_gauge g)
{
    family(sb, name, help);
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node_usage *u = &t->v[i]->usage;

        if (t->v[i]->state != MT_NODE_ALIVE)
            continue;
        mt_strbuf_addf(sb, "%s{", name);
        add_label(sb, "node_id", t->v[i]->id, true);
        if (g == G_CPU_PERCENT)
            mt_strbuf_addf(sb, "} %.1f\n", u->cpu_percent);
        else
            mt_strbuf_addf(sb, "} %llu\n",
                           (unsigned long long)(g == G_MEM_USED
                                                    ? u->mem_used_bytes
                                                    : u->mem_total_bytes));
    }
}

enum gpu_gauge { G_GPU_USED, G_GPU_TOTAL, G_GPU_UTIL };

/* One per-GPU gauge for every GPU of every alive node; a figure the worker
 * does not know (NOT_SUPPORTED, procfs, MIG) has no sample. */
static void gpu_gauge(struct mt_strbuf *sb, const struct mt_node_table *t,
                      const char *name, const char *help, enum gpu_gauge g)
{
    family(sb, name, help);
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        for (size_t j = 0; n->state == MT_NODE_ALIVE && j < n->n_gpus; j++) {
            const struct mt_node_gpu *d = &n->gpus[j];
            int64_t v = g == G_GPU_USED    ? d->mem_used
                        : g == G_GPU_TOTAL ? d->mem_total
                                           : d->util_percent;

            if (v < 0)
                continue;
            mt_strbuf_addf(sb, "%s{", name);
            add_label(sb, "node_id", n->id, true);
            add_label(sb, "gpu", d->id, false);
            if (g == G_GPU_UTIL)
                mt_strbuf_addf(sb, "} %.2f\n", (double)v / 100.0);
            else
                mt_strbuf_addf(sb, "} %lld\n", (long long)v);
        }
    }
}

static void gpu_metrics(struct mt_strbuf *sb, const struct mt_node_table *t)
{
    char idx[16];

    family(sb, "manta_gpu_info",
           "1 for each GPU an alive node offers (gpu: its name in tasks' "
           "CUDA_VISIBLE_DEVICES).");
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        for (size_t j = 0; n->state == MT_NODE_ALIVE && j < n->n_gpus; j++) {
            snprintf(idx, sizeof(idx), "%d", n->gpus[j].index);
            mt_strbuf_adds(sb, "manta_gpu_info{");
            add_label(sb, "node_id", n->id, true);
            add_label(sb, "gpu", n->gpus[j].id, false);
            add_label(sb, "index", idx, false);
            add_label(sb, "uuid", n->gpus[j].uuid, false);
            add_label(sb, "model", n->gpus[j].name, false);
            mt_strbuf_adds(sb, "} 1\n");
        }
    }
    gpu_gauge(sb, t, "manta_gpu_memory_used_bytes",
              "GPU memory in use, as NVML last reported it.", G_GPU_USED);
    gpu_gauge(sb, t, "manta_gpu_memory_total_bytes",
              "GPU memory, as NVML reports it.", G_GPU_TOTAL);
    gpu_gauge(sb, t, "manta_gpu_utilization_ratio",
              "GPU utilization over NVML's last sample period, 0-1.",
              G_GPU_UTIL);
}

static void node_metrics(struct mt_strbuf *sb, const struct mt_node_table *t)
{
    family(sb, "manta_node_up", "1 while the node is ALIVE, 0 once DEAD.");
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        mt_strbuf_adds(sb, "manta_node_up{");
        add_label(sb, "node_id", n->id, true);
        add_label(sb, "address", n->address, false);
        add_label(sb, "hostname", n->hostname, false);
        mt_strbuf_addf(sb, "} %d\n", n->state == MT_NODE_ALIVE);
    }
    family(sb, "manta_node_resources",
           "Logical resources of each alive node (kind: total, available).");
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        if (n->state != MT_NODE_ALIVE)
            continue;
        res_samples(sb, "manta_node_resources", n->id, &n->total, "total");
        res_samples(sb, "manta_node_resources", n->id, &n->avail,
                    "available");
    }
    node_gauge(sb, t, "manta_node_cpu_percent",
               "Host CPU utilisation of each alive node, 0-100.",
               G_CPU_PERCENT);
    node_gauge(sb, t, "manta_node_mem_used_bytes",
               "Host memory in use on each alive node.", G_MEM_USED);
    node_gauge(sb, t, "manta_node_mem_total_bytes",
               "Host memory of each alive node.", G_MEM_TOTAL);
    gpu_metrics(sb, t);
}

/* Task counters since the head started, and tasks by live state. */
static void task_metrics(struct mt_strbuf *sb, struct mt_head *h)
{
    struct mt_head_task_counts q;
    struct mt_task_table *tt;

    if (!h->tasks)
        return;
    q = mt_head_tasks_counts(h->tasks);
    tt = mt_head_tasks_table(h->tasks);
    typed(sb, "manta_tasks_dispatched_total",
          "Task attempts handed to workers.", "counter");
    mt_strbuf_addf(sb, "manta_tasks_dispatched_total %llu\n",
                   (unsigned long long)q.dispatched);
    typed(sb, "manta_tasks_ended_total",
          "Tasks that reached FINISHED, FAILED or CANCELLED.", "counter");
    mt_strbuf_addf(sb, "manta_tasks_ended_total %llu\n",
                   (unsigned long long)q.finished);
    typed(sb, "manta_tasks_retried_total",
          "Task attempts run again after a worker or executor died.",
          "counter");
    mt_strbuf_addf(sb, "manta_tasks_retried_total %llu\n",
                   (unsigned long long)q.retried);
    family(sb, "manta_tasks", "Tasks the head holds, by live state.");
    mt_strbuf_addf(sb, "manta_tasks{state=\"PENDING\"} %zu\n",
                   mt_task_table_count(tt, MT_TASK_PENDING));
    mt_strbuf_addf(sb, "manta_tasks{state=\"SCHEDULED\"} %zu\n",
                   mt_task_table_count(tt, MT_TASK_SCHEDULED));
    mt_strbuf_addf(sb, "manta_tasks{state=\"RUNNING\"} %zu\n",
                   mt_task_table_count(tt, MT_TASK_RUNNING));
}

/* One sample of a storage family, labelled with the backend. */
static void storage_sample(struct mt_strbuf *sb, const char *name,
                           const char *help, const char *type,
                           const char *backend, unsigned long long v)
{
    typed(sb, name, help, type);
    mt_strbuf_addf(sb, "%s{", name);
    add_label(sb, "backend", backend, true);
    mt_strbuf_addf(sb, "} %llu\n", v);
}

/* The state storage: healthy, writes, batches, buffered and dropped. */
static void storage_metrics(struct mt_strbuf *sb, struct mt_head *h)
{
    struct mt_storage_stats st;

    if (!h->store)
        return;
    mt_storage_stats(h->store, &st);
    storage_sample(sb, "manta_storage_healthy",
                   "1 while the head's writes reach its state storage.",
                   "gauge", st.backend, st.healthy);
    storage_sample(sb, "manta_storage_writes_total",
                   "State writes (puts and deletes) accepted.", "counter",
                   st.backend, st.writes);
    storage_sample(sb, "manta_storage_batches_total",
                   "Batches of state writes made durable.", "counter",
                   st.backend, st.batches);
    storage_sample(sb, "manta_storage_buffered_writes",
                   "State writes accepted but not durable yet.", "gauge",
                   st.backend, st.buffered);
    storage_sample(sb, "manta_storage_dropped_writes_total",
                   "State writes refused because the buffer was full.",
                   "counter", st.backend, st.dropped);
}

void mt_head_metrics(struct mt_head *h, struct mt_strbuf *sb)
{
    struct mt_node_table *nodes = mt_head_nodes_table(h->nodes);
    struct mt_qty_list total = {0}, avail = {0};
    double up = (double)(mt_now_wall_ms() - h->start_time_ms) / 1000.0;

    mt_head_sched_sync_all(h->sched);
    family(sb, "manta_head_info", "The head's version and cluster id (1).");
    mt_strbuf_adds(sb, "manta_head_info{");
    add_label(sb, "version", MT_VERSION, true);
    add_label(sb, "cluster_id", h->cluster_id, false);
    mt_strbuf_adds(sb, "} 1\n");
    family(sb, "manta_head_uptime_seconds", "Seconds since the head started.");
    mt_strbuf_addf(sb, "manta_head_uptime_seconds %.3f\n", up < 0 ? 0.0 : up);
    family(sb, "manta_cluster_nodes", "Nodes known to the head, by state.");
    mt_strbuf_addf(sb, "manta_cluster_nodes{state=\"ALIVE\"} %zu\n",
                   mt_node_table_count(nodes, MT_NODE_ALIVE));
    mt_strbuf_addf(sb, "manta_cluster_nodes{state=\"DEAD\"} %zu\n",
                   mt_node_table_count(nodes, MT_NODE_DEAD));
    mt_node_table_totals(nodes, &total, &avail);
    family(sb, "manta_cluster_resources",
           "Logical resources summed over alive nodes (kind: total, "
           "available).");
    res_samples(sb, "manta_cluster_resources", NULL, &total, "total");
    res_samples(sb, "manta_cluster_resources", NULL, &avail, "available");
    mt_qty_list_release(&total);
    mt_qty_list_release(&avail);
    task_metrics(sb, h);
    storage_metrics(sb, h);
    node_metrics(sb, nodes);
}
