/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_services.h -- the worker's rpc adapters, one file per service:
 *   rpc_membership.c  GetNodeInfo; RegisterNode, ReportNode and
 *                     UnregisterNode to the head (membership.h)
 *   rpc_transfer.c    PullObject, FetchObject; PullObject streams to
 *                     other workers (transfer.h)
 *   rpc_tasks.c       RunTask, RunTasks, StopTask; ReportTasks to the
 *                     head (tasks.h)
 *   rpc_objects.c     DeleteObjects; ReportOrphans to the head
 *                     (objects.h)
 *   rpc_actors.c      CallActor (actors.h)
 *   rpc_leases.c      PushTasks (leases.h)
 * Each decodes and checks a request, calls a plain-C service
 * (worker_int.h), and encodes the answer; generated protobuf types stay in
 * these files. Each exports one struct mt_worker_adapter. Adapters never
 * call each other.
 *
 * THREAD: the worker's loop thread only.
 */
#ifndef MT_WORKER_RPC_SERVICES_H
#define MT_WORKER_RPC_SERVICES_H

#include "worker/worker_int.h"

/* The adapters, in the order worker.c starts them. */
extern const struct mt_worker_adapter mt_worker_rpc_membership;
extern const struct mt_worker_adapter mt_worker_rpc_transfer;
extern const struct mt_worker_adapter mt_worker_rpc_tasks;
extern const struct mt_worker_adapter mt_worker_rpc_objects;
extern const struct mt_worker_adapter mt_worker_rpc_actors;
extern const struct mt_worker_adapter mt_worker_rpc_leases;

#endif /* MT_WORKER_RPC_SERVICES_H */
