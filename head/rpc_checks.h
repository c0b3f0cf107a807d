/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_checks.h -- the head's checks of what peers send, on the decoded
 * protobuf messages, and the conversions of node reports into the node
 * table's plain structs. Pure: no tables, no loop, no I/O; the rpc
 * adapters (rpc_nodes.c, rpc_watch.c) call them, and so do the fuzz
 * harnesses (tests/fuzz/fuzz_head_*.c), which run them on arbitrary bytes.
 *
 * Every message is peer input: a bad field is a reason string for
 * INVALID_ARGUMENT, never an assert.
 *
 * THREAD: any (no shared state).
 */
#ifndef MT_HEAD_RPC_CHECKS_H
#define MT_HEAD_RPC_CHECKS_H

#include <stdbool.h>
#include <stddef.h>

#include "head/node_table.h"
#include "head_service.pb-c.h"

#define MT_HEAD_NODE_MAX_ENTRIES 4096 /* resources or labels of a node */
#define MT_HEAD_BATCH_MAX 4096        /* specs in one SubmitTasks */

/* ---- nodes ----------------------------------------------------------------- */

/* mt_head_node_id_valid - 1-64 characters of [A-Za-z0-9_-]. */
bool mt_head_node_id_valid(const char *s);

/*
 * mt_head_node_info_check - may a worker register as ni? (Resources and
 * labels are checked again as they are converted: mt_qty_from_pb,
 * mt_kv_from_pb with MT_HEAD_NODE_MAX_ENTRIES.)
 * RET NULL, or the reason it is bad (static)
 */
const char *mt_head_node_info_check(const Manta__NodeInfo *ni);

/* mt_head_usage_from_pb - a report's host figures (a CPU percent out of
 * range reads 0). */
void mt_head_usage_from_pb(const Manta__HostUsage *u,
                           struct mt_node_usage *out);

/* mt_head_usage_to_pb - the disk, network and object store figures of u
 * into out (the caller sets the CPU, memory and GPU ones). */
void mt_head_usage_to_pb(const struct mt_node_usage *u, Manta__HostUsage *out);

/*
 * mt_head_gpus_from_pb - a report's GPU figures: entries past
 * MT_NODE_MAX_GPUS dropped, strings cut to fit, a figure out of range
 * reads unknown (-1).
 * OUT n    entries
 * RET owned array (free()), never NULL
 */
struct mt_node_gpu *mt_head_gpus_from_pb(const Manta__HostUsage *u,
                                         size_t *n);

/* ---- tasks ------------------------------------------------------------------ */

/*
 * mt_head_batch_check - the shape of a SubmitTasks request: 1 to
 * MT_HEAD_BATCH_MAX specs, one tag and one output flag per spec. Each
 * spec is then checked as SubmitTask's (mt_task_def_from_pb,
 * mt_task_def_check).
 * RET NULL, or the reason it is bad (static)
 */
const char *mt_head_batch_check(const Manta__SubmitTasksRequest *req);

#endif /* MT_HEAD_RPC_CHECKS_H */
