/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_services.h -- the head's rpc adapters, one file per service:
 *   rpc_nodes.c    RegisterNode, ReportNode, UnregisterNode,
 *                  GetClusterStatus, WatchNodes; nodes in storage
 *   rpc_tasks.c    SubmitTask, CancelTask, ListTasks, ReportTasks
 *   rpc_watch.c    WatchTask, WatchTasks, SubmitTasks (tasks followed)
 *   rpc_pgs.c      Create/Wait/Remove/ListPlacementGroups
 *   rpc_objects.c  Register/Release/Get/ListObjects
 *   rpc_actors.c   GetActor, ListActors, KillActor, LeaseActorOwner
 *   rpc_gangs.c    SubmitGang, GetGang, CancelGang, ListGangs
 * Each decodes and checks a request, calls a plain-C service (head.h),
 * and encodes the answer; generated protobuf types stay in these files
 * and rpc_workers.c. Each exports its handler table (ended by an entry
 * with a NULL method), and those holding streams or parked calls a start
 * and a stop: start wires their listeners once the services exist, stop
 * ends what they hold (shutdown).
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_RPC_SERVICES_H
#define MT_HEAD_RPC_SERVICES_H

#include "common/rpc.h"
#include "common/strbuf.h"
#include "head/head.h"

extern const struct mt_rpc_handler mt_head_rpc_nodes[];
extern const struct mt_rpc_handler mt_head_rpc_tasks[];
extern const struct mt_rpc_handler mt_head_rpc_watch[];
extern const struct mt_rpc_handler mt_head_rpc_pgs[];
extern const struct mt_rpc_handler mt_head_rpc_objects[];
extern const struct mt_rpc_handler mt_head_rpc_actors[];
extern const struct mt_rpc_handler mt_head_rpc_gangs[];

/* rpc_nodes.c: save nodes and feed WatchNodes as they change; load the
 * saved ones (they count as alive until they time out); end the streams. */
void mt_head_rpc_nodes_start(struct mt_head *h);
void mt_head_rpc_nodes_load(struct mt_head *h);
void mt_head_rpc_nodes_stop(struct mt_head *h);

/*
 * mt_head_status_json - append the cluster status as the JSON object that
 * `manta status --format json` prints (proto/status_json.h), built by the
 * same code as the GetClusterStatus reply. Used by the dashboard.
 */
void mt_head_status_json(struct mt_head *h, struct mt_strbuf *out);

/* rpc_watch.c: follow tasks for the watch streams; end them. */
void mt_head_rpc_watch_start(struct mt_head *h);
void mt_head_rpc_watch_stop(struct mt_head *h);

/* rpc_pgs.c: answer WaitPlacementGroup when groups change; end them. */
void mt_head_rpc_pgs_start(struct mt_head *h);
void mt_head_rpc_pgs_stop(struct mt_head *h);

/* rpc_objects.c: answer parked GetObject calls as objects settle; fail
 * the rest. */
void mt_head_rpc_objects_start(struct mt_head *h);
void mt_head_rpc_objects_stop(struct mt_head *h);

/* rpc_actors.c: end every LeaseActorOwner stream without killing
 * anything. */
void mt_head_rpc_actors_stop(struct mt_head *h);

#endif /* MT_HEAD_RPC_SERVICES_H */
