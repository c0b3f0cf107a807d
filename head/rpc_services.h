/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_services.h -- the head's rpc adapters, one file per service:
 *   rpc_nodes.c    RegisterNode, ReportNode, UnregisterNode,
 *                  GetClusterStatus, WatchNodes; nodes in storage
 *   rpc_tasks.c    SubmitTask, CancelTask, ListTasks, ReportTasks
 *   rpc_watch.c    WatchTask, WatchTasks, SubmitTasks (tasks followed)
 *   rpc_pgs.c      Create/Wait/Remove/ListPlacementGroups
 *   rpc_objects.c  Register/Release/Get/ListObjects, ReportOrphans
 *   rpc_actors.c   GetActor, ListActors, KillActor, LeaseActorOwner
 *   rpc_gangs.c    SubmitGang, GetGang, CancelGang, ListGangs
 * Each decodes and checks a request, calls a plain-C service
 * (head_int.h), and encodes the answer; generated protobuf types stay in
 * these files and rpc_workers.c. Each exports one struct mt_head_adapter:
 * its handlers, and a start and a stop for what it holds beyond single
 * calls. Adapters never call each other; persist.c and recover.c reach
 * rpc_watch.c (client watches, rpc_watch.h) and rpc_actors.c (driver
 * sessions, rpc_actors.h) only through the hooks head.c wires
 * (head_int.h, struct mt_head_hooks).
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_RPC_SERVICES_H
#define MT_HEAD_RPC_SERVICES_H

#include <stdint.h>

#include "common/strbuf.h"
#include "head/head_int.h"

/* The adapters, in the order head.c starts them. */
extern const struct mt_head_adapter mt_head_rpc_nodes;
extern const struct mt_head_adapter mt_head_rpc_tasks;
extern const struct mt_head_adapter mt_head_rpc_watch;
extern const struct mt_head_adapter mt_head_rpc_pgs;
extern const struct mt_head_adapter mt_head_rpc_objects;
extern const struct mt_head_adapter mt_head_rpc_actors;
extern const struct mt_head_adapter mt_head_rpc_gangs;

/*
 * mt_head_status_json - append the cluster status as the JSON object that
 * `manta status --format json` prints (proto/status_json.h), built by the
 * same code as the GetClusterStatus reply (rpc_nodes.c). The dashboard
 * serves it.
 */
void mt_head_status_json(struct mt_head *h, struct mt_strbuf *out);

/* ---- the dashboard's /api (head/api.c) ----------------------------------- */

/*
 * mt_head_node_json - append node id's listing entry (as in the nodes
 * listing, mt_head_rpc_nodes.list_json, without the list around it).
 * RET 0, or -MT_ENOENT when the head does not know the node
 */
int mt_head_node_json(struct mt_head *h, const char *id,
                      struct mt_strbuf *out);

/*
 * mt_head_load_nodes - load the stored nodes (rpc_nodes.c): each one alive
 * then counts as alive and "restored" until it registers again or times
 * out (recover.h), with the digest of its credential. done(arg, err) once
 * they are in (a network backend answers on the loop).
 */
void mt_head_load_nodes(struct mt_head *h, void (*done)(void *arg, int err),
                        void *arg);

#endif /* MT_HEAD_RPC_SERVICES_H */
