/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_prom.h -- the per-node metric families that both the head (for
 * every alive node, from their reports) and each worker (for itself, at
 * first hand) export, written by one function each so the names, labels
 * and help are the same on both (docs/dashboard.md lists them):
 *
 *   manta_node_cpu_utilization_ratio, manta_node_memory_{used,total}_bytes,
 *   manta_node_disk_{used,total}_bytes,
 *   manta_node_network_{receive,transmit}_bytes_total,
 *   manta_object_store_{used,capacity}_bytes, manta_object_store_objects,
 *   manta_object_store_{spilled,evicted,restored}_bytes_total
 *     -- labelled node_id;
 *   manta_gpu_info, manta_gpu_utilization_ratio,
 *   manta_gpu_memory_{used,total}_bytes -- labelled node_id, gpu.
 *
 * THREAD: any; nothing here keeps state.
 */
#ifndef MT_NODE_PROM_H
#define MT_NODE_PROM_H

#include <stddef.h>
#include <stdint.h>

struct mt_strbuf;

/* One node's host and object store figures. */
struct mt_node_prom {
    const char *node_id;
    double cpu_ratio;             /* 0-1 */
    uint64_t mem_used, mem_total;
    uint64_t disk_used, disk_total;
    uint64_t net_rx, net_tx;      /* bytes since boot */
    uint64_t store_used, store_capacity, store_objects;
    uint64_t store_spilled, store_evicted, store_restored; /* totals */
};

/* One GPU of a node; a figure below 0 is unknown (no sample). */
struct mt_gpu_prom {
    const char *node_id;
    const char *gpu;              /* its name in CUDA_VISIBLE_DEVICES */
    int index;                    /* NVML index; -1: a MIG instance */
    const char *uuid;
    const char *model;
    double util_ratio;            /* 0-1 */
    int64_t mem_used, mem_total;  /* bytes */
};

/* mt_node_prom_write - every node family, with a sample per v[i]. */
void mt_node_prom_write(struct mt_strbuf *sb, const struct mt_node_prom *v,
                        size_t n);

/* mt_gpu_prom_write - every GPU family, with samples per v[i]. */
void mt_gpu_prom_write(struct mt_strbuf *sb, const struct mt_gpu_prom *v,
                       size_t n);

#endif /* MT_NODE_PROM_H */
