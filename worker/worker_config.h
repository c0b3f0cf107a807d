/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker_config.h -- how main.c configures the worker daemon: flags and
 * detected resources, filled once before mt_worker_start and borrowed by
 * the daemon for its whole life.
 */
#ifndef MT_WORKER_CONFIG_H
#define MT_WORKER_CONFIG_H

#include <stdint.h>

#include "common/qty.h"

struct mt_gpu_monitor;

struct mt_worker_config {
    const char *head_addr;     /* host:port */
    const char *node_ip;       /* advertised (and bound) address */
    const char *bind_ip;       /* address to bind; node_ip or 0.0.0.0 */
    int port;                  /* rpc port; 0 picks one */
    int metrics_port;          /* HTTP /metrics on node_ip; 0 picks one,
                                  -1: off */
    const char *temp_dir;      /* session dir; NULL: write nothing */
    const char *node_id;       /* NULL: random */
    struct mt_qty_list resources; /* owned by main */
    struct mt_kv_list labels;     /* owned by main */
    int report_period_ms;      /* until the head says otherwise */
    uint64_t object_store_memory; /* arena bytes */
    const char *object_store_socket; /* Unix socket path of the store */
    const char *spill_dir;     /* NULL: never spill */
    int num_executors;         /* executor pool size, 1..64; 0: none */
    const char *executor_path; /* the manta-executor binary */
    const char *guard_path;    /* manta-guard (guard.h); NULL: command
                                  tasks run unguarded */
    struct mt_gpu_monitor *gpu_monitor; /* per-GPU figures; NULL: none */
    const struct mt_security *sec; /* token and TLS (common/auth.h) its
                                      rpc demands and presents; NULL: none */
};

#endif /* MT_WORKER_CONFIG_H */
