/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodes.h -- the head's node service: membership (register, report,
 * unregister) over the node table, and liveness.
 *
 * Liveness: workers report every report period; a timer running four
 * times per timeout marks nodes silent for longer than the timeout DEAD,
 * so detection takes at most timeout * 1.25 (3.75 s by default).
 *
 * Services that care when nodes come and go (the scheduler glue, tasks,
 * objects, the rpc adapter's watchers and storage) register a struct
 * mt_node_listener; events arrive in registration order.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_NODES_H
#define MT_HEAD_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "head/node_table.h"

/* Values match proto NodeEvent.Kind. */
enum mt_node_event {
    MT_NODE_EV_ADDED = 1,        /* a new node registered */
    MT_NODE_EV_UPDATED = 2,      /* a known node registered again */
    MT_NODE_EV_DEAD = 3,         /* it stopped or went silent */
};

struct mt_node_listener {
    void (*event)(void *arg, struct mt_node *n, enum mt_node_event ev);
};

struct mt_head_nodes;

/* mt_head_nodes_create - an empty table; DEAD after timeout_ms silent. */
struct mt_head_nodes *mt_head_nodes_create(uv_loop_t *loop, int timeout_ms);

/* mt_head_nodes_stop - stop the liveness timer; done(arg) once closed. */
void mt_head_nodes_stop(struct mt_head_nodes *ns, void (*done)(void *arg),
                        void *arg);

/* mt_head_nodes_destroy - free (after stop). NULL ok. */
void mt_head_nodes_destroy(struct mt_head_nodes *ns);

/* mt_head_nodes_table - the table (borrowed; read-only outside). */
struct mt_node_table *mt_head_nodes_table(struct mt_head_nodes *ns);

/* mt_head_nodes_listen - one more follower (l borrowed; static). */
void mt_head_nodes_listen(struct mt_head_nodes *ns,
                          const struct mt_node_listener *l, void *arg);

/*
 * mt_head_nodes_register - add a node or revive a known one, with its
 * host usage and GPU figures (borrowed; may be NULL / 0).
 * RET the node, or NULL with *err set (-MT_EINVAL)
 */
struct mt_node *mt_head_nodes_register(struct mt_head_nodes *ns,
                                       const struct mt_node_reg *r,
                                       const struct mt_node_usage *usage,
                                       const struct mt_node_gpu *gpus,
                                       size_t n_gpus, int *err);

/*
 * mt_head_nodes_report - a periodic report (see mt_node_table_report);
 * gpus NULL keeps the node's GPU figures.
 * RET 0, -MT_ENOENT (unknown or DEAD: it must register again)
 */
int mt_head_nodes_report(struct mt_head_nodes *ns, const char *id,
                         uint64_t seqno, const struct mt_qty_list *avail,
                         const struct mt_node_usage *usage,
                         const struct mt_node_gpu *gpus, size_t n_gpus);

/* mt_head_nodes_unregister - a live node leaves (reason borrowed). */
void mt_head_nodes_unregister(struct mt_head_nodes *ns, struct mt_node *n,
                              const char *reason);

#endif /* MT_HEAD_NODES_H */
