/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c -- the head's metrics in the Prometheus text format 0.0.4
 * (what the dashboard's GET /metrics serves; every family, its labels and
 * meaning in docs/dashboard.md): the cluster's nodes and resources; per
 * node resources, TPU chips, host, disk, network and object store figures
 * (common/node_prom.h, from the nodes' reports) and GPU figures; tasks by
 * state, their transitions and latency histograms; actors, placement
 * groups and gangs by state; how the state storage is doing
 * (head/storage.h); the head's rpc (common/rpc.h) and process
 * (common/procstat.h) figures. Written with common/prom.h.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/node_prom.h"
#include "common/procstat.h"
#include "common/prom.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/head_int.h"
#include "head/metrics.h"
#include "sched/labels.h"

/* ---- nodes --------------------------------------------------------------- */

/* name{[node_id,]resource,kind} for every entry of l. */
static void res_samples(struct mt_strbuf *sb, const char *name,
                        const char *node_id, const struct mt_qty_list *l,
                        const char *kind)
{
    char num[32];

    for (size_t i = 0; i < l->n; i++) {
        const char *kv[] = {"node_id", node_id, "resource", l->v[i].name,
                            "kind", kind, NULL};

        mt_prom_series(sb, name, node_id ? kv : kv + 2);
        mt_strbuf_addf(sb, " %s\n",
                       mt_qty_format(l->v[i].qty, num, sizeof(num)));
    }
}

/* TPU chips of each alive TPU node: total and allocated (held by tasks,
 * actors, gangs or placement groups), with its slice. */
static void tpu_metrics(struct mt_strbuf *sb, const struct mt_node_table *t)
{
    mt_prom_family(sb, "manta_node_tpu_chips", "gauge",
                   "TPU chips of each alive node (kind: total, allocated; "
                   "slice: its manta.io/tpu-slice-name).");
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];
        int64_t total = mt_qty_list_get(&n->total, "TPU");
        int64_t avail = mt_qty_list_get(&n->avail, "TPU");
        const char *slice = mt_kv_list_get(&n->labels, MT_LABEL_TPU_SLICE);
        const char *kv[] = {"node_id", n->id, "slice", slice ? slice : "",
                            "kind", "total", NULL};

        if (n->state != MT_NODE_ALIVE || total <= 0)
            continue;
        avail = avail < 0 ? 0 : avail;
        mt_prom_sample(sb, "manta_node_tpu_chips", kv,
                       (double)total / MT_QTY_SCALE);
        kv[5] = "allocated";
        mt_prom_sample(sb, "manta_node_tpu_chips", kv,
                       (double)(total - avail) / MT_QTY_SCALE);
    }
}

/* Host, disk, network and object store figures of every alive node. */
static void usage_metrics(struct mt_strbuf *sb, const struct mt_node_table *t)
{
    struct mt_node_prom *v = mt_xcalloc(t->n + 1, sizeof(*v));
    size_t k = 0;

    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];
        const struct mt_node_usage *u = &n->usage;

        if (n->state != MT_NODE_ALIVE)
            continue;
        v[k++] = (struct mt_node_prom){
            .node_id = n->id,
            .cpu_ratio = u->cpu_percent / 100.0,
            .mem_used = u->mem_used_bytes,
            .mem_total = u->mem_total_bytes,
            .disk_used = u->disk_used_bytes,
            .disk_total = u->disk_total_bytes,
            .net_rx = u->net_rx_bytes,
            .net_tx = u->net_tx_bytes,
            .store_used = u->store_used_bytes,
            .store_capacity = u->store_capacity_bytes,
            .store_objects = u->store_objects,
            .store_spilled = u->store_spilled_bytes_total,
            .store_evicted = u->store_evicted_bytes_total,
            .store_restored = u->store_restored_bytes_total,
        };
    }
    mt_node_prom_write(sb, v, k);
    free(v);
}

/* Every GPU of every alive node. */
static void gpu_metrics(struct mt_strbuf *sb, const struct mt_node_table *t)
{
    struct mt_gpu_prom *v = NULL;
    size_t k = 0, cap = 0;

    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        for (size_t j = 0; n->state == MT_NODE_ALIVE && j < n->n_gpus; j++) {
            const struct mt_node_gpu *d = &n->gpus[j];

            mt_xgrow((void **)&v, &cap, k + 1, sizeof(*v));
            v[k++] = (struct mt_gpu_prom){
                .node_id = n->id,
                .gpu = d->id,
                .index = d->index,
                .uuid = d->uuid,
                .model = d->name,
                .util_ratio = d->util_percent < 0 ? -1.0
                                                  : d->util_percent / 100.0,
                .mem_used = d->mem_used,
                .mem_total = d->mem_total,
            };
        }
    }
    mt_gpu_prom_write(sb, v, k);
    free(v);
}

static void node_metrics(struct mt_strbuf *sb, const struct mt_node_table *t)
{
    mt_prom_family(sb, "manta_node_up", "gauge",
                   "1 while the node is ALIVE, 0 once DEAD.");
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        mt_prom_sample(sb, "manta_node_up",
                       (const char *[]){"node_id", n->id, "address",
                                        n->address, "hostname", n->hostname,
                                        NULL},
                       n->state == MT_NODE_ALIVE);
    }
    mt_prom_family(sb, "manta_node_resources", "gauge",
                   "Logical resources of each alive node (kind: total, "
                   "available).");
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        if (n->state != MT_NODE_ALIVE)
            continue;
        res_samples(sb, "manta_node_resources", n->id, &n->total, "total");
        res_samples(sb, "manta_node_resources", n->id, &n->avail,
                    "available");
    }
    tpu_metrics(sb, t);
    usage_metrics(sb, t);
    gpu_metrics(sb, t);
}

/* ---- tasks --------------------------------------------------------------- */

static void counter(struct mt_strbuf *sb, const char *name, const char *help,
                    uint64_t v)
{
    mt_prom_family(sb, name, "counter", help);
    mt_prom_sample_u64(sb, name, NULL, v);
}

/* Task counters since the head started, tasks by live state, histograms. */
static void task_metrics(struct mt_strbuf *sb, struct mt_head *h)
{
    static const enum mt_head_task_state live[] = {
        MT_TASK_WAITING_FOR_ARGS, MT_TASK_PENDING, MT_TASK_SCHEDULED,
        MT_TASK_RUNNING};
    struct mt_head_task_counts q;
    struct mt_task_table *tt;

    if (!h->tasks)
        return;
    q = mt_head_tasks_counts(h->tasks);
    tt = mt_head_tasks_table(h->tasks);
    counter(sb, "manta_tasks_dispatched_total",
            "Task attempts handed to workers.", q.dispatched);
    counter(sb, "manta_tasks_ended_total",
            "Tasks that reached FINISHED, FAILED or CANCELLED.", q.finished);
    counter(sb, "manta_tasks_finished_total", "Tasks that reached FINISHED.",
            q.ended[MT_TASK_FINISHED]);
    counter(sb, "manta_tasks_failed_total", "Tasks that reached FAILED.",
            q.ended[MT_TASK_FAILED]);
    counter(sb, "manta_tasks_cancelled_total",
            "Tasks that reached CANCELLED.", q.ended[MT_TASK_CANCELLED]);
    counter(sb, "manta_tasks_retried_total",
            "Task attempts run again after a worker or executor died.",
            q.retried);
    mt_prom_family(sb, "manta_tasks", "gauge",
                   "Tasks the head holds, by live state.");
    for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
        mt_prom_sample_u64(sb, "manta_tasks",
                           (const char *[]){"state",
                                            mt_head_task_state_name(live[i]),
                                            NULL},
                           mt_task_table_count(tt, live[i]));
    mt_prom_family(sb, "manta_task_scheduling_latency_seconds", "histogram",
                   "Seconds from a task's submission to the start of each "
                   "of its attempts (tasks placed by the head).");
    mt_prom_hist_write(sb, "manta_task_scheduling_latency_seconds", NULL,
                       &q.sched_latency);
    mt_prom_family(sb, "manta_task_run_seconds", "histogram",
                   "Seconds from a task's start to its end.");
    mt_prom_hist_write(sb, "manta_task_run_seconds", NULL, &q.run_time);
}

/* ---- actors, placement groups, gangs ------------------------------------- */

/* family{state=names[i]} counts[i] for every state. */
static void by_state(struct mt_strbuf *sb, const char *name, const char *help,
                     const char *const *names, const uint64_t *counts,
                     size_t n)
{
    mt_prom_family(sb, name, "gauge", help);
    for (size_t i = 0; i < n; i++)
        if (names[i])
            mt_prom_sample_u64(sb, name,
                               (const char *[]){"state", names[i], NULL},
                               counts[i]);
}

static void actor_metrics(struct mt_strbuf *sb, struct mt_head *h)
{
    static const char *const names[] = {NULL, "PENDING_CREATION", "ALIVE",
                                        "RESTARTING", "DEAD"};
    uint64_t c[5] = {0};
    struct mt_actor_table *t;

    if (!h->actors)
        return;
    t = mt_head_actors_table(h->actors);
    for (size_t i = 0; i < t->n; i++)
        if ((unsigned)t->v[i]->state < 5)
            c[t->v[i]->state]++;
    by_state(sb, "manta_actors", "Actors the head holds, by state.", names, c,
             5);
}

static void pg_metrics(struct mt_strbuf *sb, struct mt_head *h)
{
    static const char *const names[] = {NULL, "PENDING", "CREATED",
                                        "RESCHEDULING", "REMOVED"};
    uint64_t c[5] = {0};
    size_t n;

    if (!h->pgs)
        return;
    n = mt_head_pgs_count(h->pgs);
    for (size_t i = 0; i < n; i++) {
        unsigned s = (unsigned)mt_head_pgs_at(h->pgs, i)->state;

        if (s < 5)
            c[s]++;
    }
    by_state(sb, "manta_placement_groups",
             "Placement groups the head holds, by state.", names, c, 5);
}

static void gang_metrics(struct mt_strbuf *sb, struct mt_head *h)
{
    static const char *const names[] = {NULL,       "PENDING",  "RUNNING",
                                        "STOPPING", "FINISHED", "FAILED",
                                        "CANCELLED"};
    uint64_t c[7] = {0};
    size_t n;

    if (!h->gangs)
        return;
    n = mt_head_gangs_count(h->gangs);
    for (size_t i = 0; i < n; i++) {
        unsigned s = (unsigned)mt_head_gangs_at(h->gangs, i)->state;

        if (s < 7)
            c[s]++;
    }
    by_state(sb, "manta_gangs", "Gangs the head holds, by state.", names, c,
             7);
    counter(sb, "manta_gang_restarts_total",
            "Gang attempts started again after a member failed.",
            mt_head_gangs_restarts(h->gangs));
}

/* ---- storage ------------------------------------------------------------- */

/* One sample of a storage family, labelled with the backend. */
static void storage_sample(struct mt_strbuf *sb, const char *name,
                           const char *help, const char *type,
                           const char *backend, unsigned long long v)
{
    mt_prom_family(sb, name, type, help);
    mt_prom_sample_u64(sb, name, (const char *[]){"backend", backend, NULL},
                       v);
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

/* ---- the cluster --------------------------------------------------------- */

static void cluster_metrics(struct mt_strbuf *sb, struct mt_head *h,
                            struct mt_node_table *nodes)
{
    struct mt_qty_list total = {0}, avail = {0};
    double up = (double)(mt_now_wall_ms() - h->start_time_ms) / 1000.0;

    mt_prom_family(sb, "manta_head_info", "gauge",
                   "The head's version and cluster id (1).");
    mt_prom_sample(sb, "manta_head_info",
                   (const char *[]){"version", MT_VERSION, "cluster_id",
                                    h->cluster_id, NULL},
                   1);
    mt_prom_family(sb, "manta_head_uptime_seconds", "gauge",
                   "Seconds since the head started.");
    mt_prom_sample(sb, "manta_head_uptime_seconds", NULL, up < 0 ? 0.0 : up);
    mt_prom_family(sb, "manta_cluster_nodes", "gauge",
                   "Nodes known to the head, by state.");
    mt_prom_sample_u64(sb, "manta_cluster_nodes",
                       (const char *[]){"state", "ALIVE", NULL},
                       mt_node_table_count(nodes, MT_NODE_ALIVE));
    mt_prom_sample_u64(sb, "manta_cluster_nodes",
                       (const char *[]){"state", "DEAD", NULL},
                       mt_node_table_count(nodes, MT_NODE_DEAD));
    mt_node_table_totals(nodes, &total, &avail);
    mt_prom_family(sb, "manta_cluster_resources", "gauge",
                   "Logical resources summed over alive nodes (kind: total, "
                   "available).");
    res_samples(sb, "manta_cluster_resources", NULL, &total, "total");
    res_samples(sb, "manta_cluster_resources", NULL, &avail, "available");
    mt_qty_list_release(&total);
    mt_qty_list_release(&avail);
}

void mt_head_metrics(struct mt_head *h, struct mt_strbuf *sb)
{
    struct mt_node_table *nodes = mt_head_nodes_table(h->nodes);

    mt_head_sched_sync_all(h->sched);
    cluster_metrics(sb, h, nodes);
    task_metrics(sb, h);
    actor_metrics(sb, h);
    pg_metrics(sb, h);
    gang_metrics(sb, h);
    storage_metrics(sb, h);
    node_metrics(sb, nodes);
    if (h->eng)
        mt_rpc_engine_metrics(h->eng, sb);
    mt_procstat_metrics(sb);
}
