/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_prom.c -- the per-node and per-GPU metric families shared by the
 * head and the workers (see node_prom.h). Each family is described once,
 * in a table: its name, type, help and where its value sits.
 *
 * THREAD: any.
 */
#include "common/node_prom.h"

#include <stddef.h>
#include <stdio.h>

#include "common/prom.h"
#include "common/strbuf.h"

/* A node family: the value is a field of struct mt_node_prom. */
struct node_family {
    const char *name;
    const char *type;
    const char *help;
    size_t off;                   /* offsetof the uint64_t field */
};

#define F(field) offsetof(struct mt_node_prom, field)

static const struct node_family node_families[] = {
    {"manta_node_memory_used_bytes", "gauge",
     "Host memory in use (total minus available).", F(mem_used)},
    {"manta_node_memory_total_bytes", "gauge", "Host memory.", F(mem_total)},
    {"manta_node_disk_used_bytes", "gauge",
     "Bytes used on the filesystem of the worker's temp dir.", F(disk_used)},
    {"manta_node_disk_total_bytes", "gauge",
     "Size of the filesystem of the worker's temp dir.", F(disk_total)},
    {"manta_node_network_receive_bytes_total", "counter",
     "Bytes received by every interface but lo since boot.", F(net_rx)},
    {"manta_node_network_transmit_bytes_total", "counter",
     "Bytes sent by every interface but lo since boot.", F(net_tx)},
    {"manta_object_store_used_bytes", "gauge",
     "Object store arena bytes allocated.", F(store_used)},
    {"manta_object_store_capacity_bytes", "gauge",
     "Object store arena size.", F(store_capacity)},
    {"manta_object_store_objects", "gauge",
     "Objects in the node's store, spilled ones included.", F(store_objects)},
    {"manta_object_store_spilled_bytes_total", "counter",
     "Object bytes written to disk by spilling.", F(store_spilled)},
    {"manta_object_store_evicted_bytes_total", "counter",
     "Object bytes dropped by eviction.", F(store_evicted)},
    {"manta_object_store_restored_bytes_total", "counter",
     "Spilled object bytes read back from disk.", F(store_restored)},
};

void mt_node_prom_write(struct mt_strbuf *sb, const struct mt_node_prom *v,
                        size_t n)
{
    mt_prom_family(sb, "manta_node_cpu_utilization_ratio", "gauge",
                   "Host CPU utilization over the last report period, 0-1.");
    for (size_t i = 0; i < n; i++)
        mt_prom_sample(sb, "manta_node_cpu_utilization_ratio",
                       (const char *[]){"node_id", v[i].node_id, NULL},
                       v[i].cpu_ratio);
    for (size_t f = 0; f < sizeof(node_families) / sizeof(node_families[0]);
         f++) {
        const struct node_family *nf = &node_families[f];

        mt_prom_family(sb, nf->name, nf->type, nf->help);
        for (size_t i = 0; i < n; i++)
            mt_prom_sample_u64(
                sb, nf->name, (const char *[]){"node_id", v[i].node_id, NULL},
                *(const uint64_t *)((const char *)&v[i] + nf->off));
    }
}

enum gpu_fig { G_UTIL, G_USED, G_TOTAL };

static void gpu_family(struct mt_strbuf *sb, const struct mt_gpu_prom *v,
                       size_t n, const char *name, const char *help,
                       enum gpu_fig g)
{
    mt_prom_family(sb, name, "gauge", help);
    for (size_t i = 0; i < n; i++) {
        const char *kv[] = {"node_id", v[i].node_id, "gpu", v[i].gpu, NULL};
        double x = g == G_UTIL   ? v[i].util_ratio
                   : g == G_USED ? (double)v[i].mem_used
                                 : (double)v[i].mem_total;

        if (x < 0)
            continue;
        if (g == G_UTIL)
            mt_prom_sample(sb, name, kv, x);
        else
            mt_prom_sample_u64(sb, name, kv, (uint64_t)x);
    }
}

void mt_gpu_prom_write(struct mt_strbuf *sb, const struct mt_gpu_prom *v,
                       size_t n)
{
    char idx[16];

    mt_prom_family(sb, "manta_gpu_info", "gauge",
                   "1 for each GPU an alive node offers (gpu: its name in "
                   "tasks' CUDA_VISIBLE_DEVICES).");
    for (size_t i = 0; i < n; i++) {
        snprintf(idx, sizeof(idx), "%d", v[i].index);
        mt_prom_sample(sb, "manta_gpu_info",
                       (const char *[]){"node_id", v[i].node_id, "gpu",
                                        v[i].gpu, "index", idx, "uuid",
                                        v[i].uuid, "model", v[i].model, NULL},
                       1);
    }
    gpu_family(sb, v, n, "manta_gpu_memory_used_bytes",
               "GPU memory in use, as NVML last reported it.", G_USED);
    gpu_family(sb, v, n, "manta_gpu_memory_total_bytes",
               "GPU memory, as NVML reports it.", G_TOTAL);
    gpu_family(sb, v, n, "manta_gpu_utilization_ratio",
               "GPU utilization over NVML's last sample period, 0-1.",
               G_UTIL);
}
