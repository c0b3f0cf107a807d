/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_table.h -- the head's table of nodes: identity, address, resources
 * (total and available, fixed point), labels, host usage, the latest
 * per-GPU figures (memory, utilization) and liveness.
 *
 * Liveness: every report refreshes last_seen (monotonic). mt_node_table_expire
 * marks a node DEAD once it has been silent for longer than the timeout. Dead
 * nodes stay listed (for `manta status`) until MT_NODE_TABLE_MAX_DEAD newer
 * deaths push them out. A node that registers again with the same id becomes
 * ALIVE again (a worker that lost the head, e.g. across a head restart).
 *
 * THREAD: the head's loop thread only. Plain C structs: no protobuf here.
 */
#ifndef MT_NODE_TABLE_H
#define MT_NODE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/qty.h"
#include "common/strindex.h"

#define MT_NODE_MAGIC 0x6e6f6465u /* "node" */
#define MT_NODE_TABLE_MAX_DEAD 1000

enum mt_node_state {
    MT_NODE_ALIVE = 1,
    MT_NODE_DEAD = 2,
};

/* A node's host and object store figures, as its last report gave them
 * (proto HostUsage). */
struct mt_node_usage {
    double cpu_percent;
    uint64_t mem_used_bytes;
    uint64_t mem_total_bytes;
    uint32_t num_cpus_online;
    uint64_t disk_used_bytes;     /* the worker's temp dir's filesystem */
    uint64_t disk_total_bytes;
    uint64_t net_rx_bytes;        /* since boot, every interface but lo */
    uint64_t net_tx_bytes;
    uint64_t store_used_bytes;    /* object store arena allocated */
    uint64_t store_capacity_bytes;
    uint64_t store_objects;
    uint64_t store_spilled_bytes_total;
    uint64_t store_evicted_bytes_total;
    uint64_t store_restored_bytes_total;
};

#define MT_NODE_MAX_GPUS 64

/* One GPU of a node as its last report described it. */
struct mt_node_gpu {
    int index;             /* NVML index; -1: a MIG instance */
    char id[128];          /* its name in tasks' CUDA_VISIBLE_DEVICES */
    char name[96];         /* model */
    char uuid[96];         /* "" = unknown */
    int64_t mem_total;     /* bytes; -1 = unknown */
    int64_t mem_used;      /* bytes; -1 = unknown */
    int util_percent;      /* 0..100; -1 = unknown */
};

/* A node as seen by the head. Guarded by: loop thread. */
struct mt_node {
    uint32_t magic;            /* MT_NODE_MAGIC */
    char *id;                  /* hex, chosen by the worker */
    char *address;             /* worker rpc address host:port */
    char *node_ip;
    char *hostname;
    char *temp_dir;
    char *version;
    char *metrics_address;     /* the worker's /metrics host:port; NULL:
                                  none */
    char *secret;              /* SHA-256 (hex) of the node's credential
                                  (RegisterNode), as stored (persist.h);
                                  NULL until one is presented */
    char *death_reason;        /* NULL while alive */
    enum mt_node_state state;
    struct mt_qty_list total;
    struct mt_qty_list avail;
    struct mt_kv_list labels;
    struct mt_node_usage usage;
    struct mt_node_gpu *gpus;  /* n_gpus entries, owned; NULL when none */
    size_t n_gpus;
    uint32_t pid;
    int64_t start_time_ms;     /* wall clock */
    int64_t last_report_ms;    /* wall clock */
    int64_t death_time_ms;     /* wall clock, 0 while alive */
    int64_t last_seen_mono;    /* monotonic ms */
    uint64_t seqno;            /* last report number */
    uint64_t death_order;      /* for trimming old dead nodes */
    uint32_t sched_node;       /* scheduler handle; UINT32_MAX when none */
    bool suspect;              /* a hand-over failed: nothing new goes
                                  there until it reports again */
    uint64_t suspect_seqno;    /* seqno when it became suspect */
    bool restored;             /* loaded from storage, not registered with
                                  this head yet: its reports are answered
                                  "unknown" so that it registers again,
                                  saying what it holds (recover.h) */
};

/* Guarded by: loop thread. */
struct mt_node_table {
    struct mt_node **v;
    size_t n;
    size_t cap;
    uint64_t deaths;
    struct mt_strindex by_id;  /* v's positions by node id */
};

/* Registration input: every field borrowed and copied by the table. */
struct mt_node_reg {
    const char *id;
    const char *address;
    const char *node_ip;
    const char *hostname;
    const char *temp_dir;
    const char *version;
    const char *metrics_address; /* NULL/"": none */
    const char *secret;        /* the node's credential; NULL/"": none */
    const struct mt_qty_list *total;
    const struct mt_kv_list *labels;
    uint32_t pid;
    int64_t start_time_ms;
};

/* Callback for nodes changing state; node is borrowed. */
typedef void (*mt_node_fn)(void *arg, struct mt_node *node);

void mt_node_table_init(struct mt_node_table *t);
void mt_node_table_release(struct mt_node_table *t);

/*
 * mt_node_secret_ok - whether secret is the node's credential (constant
 * time); a node that never presented one accepts the first it is given.
 */
bool mt_node_secret_ok(const struct mt_node *n, const char *secret);

/* What a call in another node's name is refused with (PERMISSION_DENIED). */
#define MT_NODE_WRONG_SECRET "this node id belongs to another node: its " \
                             "node credential does not match"

/*
 * mt_node_table_speaks_for - only a node itself may speak for its id: true
 * unless id is an alive node whose credential secret (borrowed, NULL ok)
 * is not. Reports for unknown or dead ids pass (they are answered so the
 * node registers again).
 */
bool mt_node_table_speaks_for(const struct mt_node_table *t, const char *id,
                              const char *secret);

/*
 * mt_node_table_register - add a node, or refresh and revive a known one.
 * A live node is only taken with its own credential (r->secret); a dead
 * one's id may be registered with a new one (a restarted worker).
 *
 * OUT was_new  true when the id was not in the table (may be NULL)
 * RET the node (borrowed; valid until the table drops it), or NULL with
 *     *err = -MT_EINVAL for an empty id/address, -MT_EPERM for a live
 *     node and another credential
 */
struct mt_node *mt_node_table_register(struct mt_node_table *t,
                                       const struct mt_node_reg *r,
                                       int64_t now_mono, int64_t now_wall,
                                       bool *was_new, int *err);

/* mt_node_table_find - RET the node with this id, or NULL. */
struct mt_node *mt_node_table_find(const struct mt_node_table *t,
                                   const char *id);

/*
 * mt_node_table_report - record a periodic report from an ALIVE node.
 *
 * IN  avail  new available resources (borrowed; NULL keeps the old ones)
 * IN  usage  host usage (borrowed; NULL keeps the old one)
 * RET 0, -MT_ENOENT (unknown or DEAD: the worker must register again)
 */
int mt_node_table_report(struct mt_node_table *t, const char *id,
                         uint64_t seqno, const struct mt_qty_list *avail,
                         const struct mt_node_usage *usage, int64_t now_mono,
                         int64_t now_wall);

/*
 * mt_node_table_set_gpus - replace a node's GPU figures with v (n entries,
 * borrowed and copied; at most MT_NODE_MAX_GPUS are kept).
 */
void mt_node_table_set_gpus(struct mt_node *node, const struct mt_node_gpu *v,
                            size_t n);

/* mt_node_table_mark_dead - mark an ALIVE node DEAD with a reason. */
void mt_node_table_mark_dead(struct mt_node_table *t, struct mt_node *node,
                             const char *reason, int64_t now_wall);

/* mt_node_table_trim - forget the oldest DEAD nodes beyond
 * MT_NODE_TABLE_MAX_DEAD. Invalidates pointers to the nodes dropped. */
void mt_node_table_trim(struct mt_node_table *t);

/*
 * mt_node_table_expire - mark DEAD every ALIVE node silent for longer than
 * timeout_ms, calling fn for each. RET how many died.
 */
int mt_node_table_expire(struct mt_node_table *t, int64_t now_mono,
                         int64_t now_wall, int64_t timeout_ms, mt_node_fn fn,
                         void *arg);

/* mt_node_table_totals - sum total and available over ALIVE nodes (the
 * lists are filled; release them with mt_qty_list_release). */
void mt_node_table_totals(const struct mt_node_table *t,
                          struct mt_qty_list *total, struct mt_qty_list *avail);

/* mt_node_table_count - nodes in the given state. */
size_t mt_node_table_count(const struct mt_node_table *t,
                           enum mt_node_state state);

/* mt_node_state_name - "ALIVE" / "DEAD". */
const char *mt_node_state_name(enum mt_node_state s);

#endif /* MT_NODE_TABLE_H */
