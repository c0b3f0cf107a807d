/* SPDX-License-Identifier: Apache-2.0 */
/*
 * services.h -- the rpc method table of every Manta service: path, request
 * and response descriptors, unary or server-streaming. protoc-c does not
 * record streaming kinds, so this file does (notes/grpc-core.md). Both sides
 * use these instances: servers pair them with handlers, clients call them.
 */
#ifndef MT_SERVICES_H
#define MT_SERVICES_H

#include "common/rpc.h"

/* HeadService (proto/head_service.proto) */
extern const struct mt_rpc_method mt_head_register_node;
extern const struct mt_rpc_method mt_head_report_node;
extern const struct mt_rpc_method mt_head_unregister_node;
extern const struct mt_rpc_method mt_head_get_cluster_status;
extern const struct mt_rpc_method mt_head_watch_nodes;
extern const struct mt_rpc_method mt_head_submit_task;
extern const struct mt_rpc_method mt_head_watch_task;
extern const struct mt_rpc_method mt_head_submit_tasks;
extern const struct mt_rpc_method mt_head_watch_tasks;
extern const struct mt_rpc_method mt_head_cancel_task;
extern const struct mt_rpc_method mt_head_list_tasks;
extern const struct mt_rpc_method mt_head_report_tasks;
extern const struct mt_rpc_method mt_head_create_pg;
extern const struct mt_rpc_method mt_head_wait_pg;
extern const struct mt_rpc_method mt_head_remove_pg;
extern const struct mt_rpc_method mt_head_list_pgs;
extern const struct mt_rpc_method mt_head_register_objects;
extern const struct mt_rpc_method mt_head_release_objects;
extern const struct mt_rpc_method mt_head_report_orphans;
extern const struct mt_rpc_method mt_head_get_object;
extern const struct mt_rpc_method mt_head_list_objects;
extern const struct mt_rpc_method mt_head_get_actor;
extern const struct mt_rpc_method mt_head_list_actors;
extern const struct mt_rpc_method mt_head_submit_gang;
extern const struct mt_rpc_method mt_head_get_gang;
extern const struct mt_rpc_method mt_head_cancel_gang;
extern const struct mt_rpc_method mt_head_list_gangs;
extern const struct mt_rpc_method mt_head_kill_actor;
extern const struct mt_rpc_method mt_head_lease_actor_owner;

/* WorkerService (proto/worker_service.proto) */
extern const struct mt_rpc_method mt_worker_get_node_info;
extern const struct mt_rpc_method mt_worker_pull_object;
extern const struct mt_rpc_method mt_worker_fetch_object;
extern const struct mt_rpc_method mt_worker_run_task;
extern const struct mt_rpc_method mt_worker_run_tasks;
extern const struct mt_rpc_method mt_worker_stop_task;
extern const struct mt_rpc_method mt_worker_delete_objects;
extern const struct mt_rpc_method mt_worker_call_actor;
extern const struct mt_rpc_method mt_worker_push_tasks;

#endif /* MT_SERVICES_H */
