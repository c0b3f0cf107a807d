/* SPDX-License-Identifier: Apache-2.0 */
/*
 * services.c -- method table instances (see services.h).
 */
#include "proto/services.h"

#include "head_service.pb-c.h"
#include "worker_service.pb-c.h"

#define UNARY(svc, name, req, resp)                                            \
    {"/manta." svc "/" name, &req##__descriptor, &resp##__descriptor,         \
     MT_RPC_UNARY}
#define STREAM(svc, name, req, resp)                                           \
    {"/manta." svc "/" name, &req##__descriptor, &resp##__descriptor,         \
     MT_RPC_SERVER_STREAM}

const struct mt_rpc_method mt_head_register_node =
    UNARY("HeadService", "RegisterNode", manta__register_node_request,
          manta__register_node_reply);
const struct mt_rpc_method mt_head_report_node =
    UNARY("HeadService", "ReportNode", manta__report_node_request,
          manta__report_node_reply);
const struct mt_rpc_method mt_head_unregister_node =
    UNARY("HeadService", "UnregisterNode", manta__unregister_node_request,
          manta__unregister_node_reply);
const struct mt_rpc_method mt_head_get_cluster_status =
    UNARY("HeadService", "GetClusterStatus", manta__get_cluster_status_request,
          manta__get_cluster_status_reply);
const struct mt_rpc_method mt_head_watch_nodes =
    STREAM("HeadService", "WatchNodes", manta__watch_nodes_request,
           manta__node_event);

const struct mt_rpc_method mt_head_submit_task =
    UNARY("HeadService", "SubmitTask", manta__submit_task_request,
          manta__submit_task_reply);
const struct mt_rpc_method mt_head_watch_task =
    STREAM("HeadService", "WatchTask", manta__watch_task_request,
           manta__task_event);
const struct mt_rpc_method mt_head_submit_tasks =
    UNARY("HeadService", "SubmitTasks", manta__submit_tasks_request,
          manta__submit_tasks_reply);
const struct mt_rpc_method mt_head_watch_tasks =
    STREAM("HeadService", "WatchTasks", manta__watch_tasks_request,
           manta__task_events);
const struct mt_rpc_method mt_head_cancel_task =
    UNARY("HeadService", "CancelTask", manta__cancel_task_request,
          manta__cancel_task_reply);
const struct mt_rpc_method mt_head_list_tasks =
    UNARY("HeadService", "ListTasks", manta__list_tasks_request,
          manta__list_tasks_reply);
const struct mt_rpc_method mt_head_report_tasks =
    UNARY("HeadService", "ReportTasks", manta__report_tasks_request,
          manta__report_tasks_reply);

const struct mt_rpc_method mt_head_create_pg =
    UNARY("HeadService", "CreatePlacementGroup",
          manta__create_placement_group_request,
          manta__create_placement_group_reply);
const struct mt_rpc_method mt_head_wait_pg =
    UNARY("HeadService", "WaitPlacementGroup",
          manta__wait_placement_group_request,
          manta__wait_placement_group_reply);
const struct mt_rpc_method mt_head_remove_pg =
    UNARY("HeadService", "RemovePlacementGroup",
          manta__remove_placement_group_request,
          manta__remove_placement_group_reply);
const struct mt_rpc_method mt_head_list_pgs =
    UNARY("HeadService", "ListPlacementGroups",
          manta__list_placement_groups_request,
          manta__list_placement_groups_reply);
const struct mt_rpc_method mt_head_register_objects =
    UNARY("HeadService", "RegisterObjects", manta__register_objects_request,
          manta__register_objects_reply);
const struct mt_rpc_method mt_head_release_objects =
    UNARY("HeadService", "ReleaseObjects", manta__release_objects_request,
          manta__release_objects_reply);
const struct mt_rpc_method mt_head_report_orphans =
    UNARY("HeadService", "ReportOrphans", manta__report_orphans_request,
          manta__report_orphans_reply);
const struct mt_rpc_method mt_head_get_object =
    UNARY("HeadService", "GetObject", manta__get_object_request,
          manta__get_object_reply);
const struct mt_rpc_method mt_head_list_objects =
    UNARY("HeadService", "ListObjects", manta__list_objects_request,
          manta__list_objects_reply);

const struct mt_rpc_method mt_head_get_actor =
    UNARY("HeadService", "GetActor", manta__get_actor_request,
          manta__get_actor_reply);
const struct mt_rpc_method mt_head_list_actors =
    UNARY("HeadService", "ListActors", manta__list_actors_request,
          manta__list_actors_reply);
const struct mt_rpc_method mt_head_kill_actor =
    UNARY("HeadService", "KillActor", manta__kill_actor_request,
          manta__kill_actor_reply);

const struct mt_rpc_method mt_head_lease_actor_owner =
    STREAM("HeadService", "LeaseActorOwner",
           manta__actor_owner_lease_request, manta__actor_owner_lease_event);

const struct mt_rpc_method mt_worker_get_node_info =
    UNARY("WorkerService", "GetNodeInfo", manta__get_node_info_request,
          manta__get_node_info_reply);
const struct mt_rpc_method mt_worker_pull_object =
    STREAM("WorkerService", "PullObject", manta__pull_object_request,
           manta__object_chunk);
const struct mt_rpc_method mt_worker_fetch_object =
    UNARY("WorkerService", "FetchObject", manta__fetch_object_request,
          manta__fetch_object_reply);
const struct mt_rpc_method mt_worker_run_task =
    UNARY("WorkerService", "RunTask", manta__run_task_request,
          manta__run_task_reply);
const struct mt_rpc_method mt_worker_run_tasks =
    UNARY("WorkerService", "RunTasks", manta__run_tasks_request,
          manta__run_tasks_reply);
const struct mt_rpc_method mt_worker_call_actor =
    UNARY("WorkerService", "CallActor", manta__call_actor_request,
          manta__call_actor_reply);
const struct mt_rpc_method mt_worker_push_tasks =
    UNARY("WorkerService", "PushTasks", manta__push_tasks_request,
          manta__push_tasks_reply);
const struct mt_rpc_method mt_worker_stop_task =
    UNARY("WorkerService", "StopTask", manta__stop_task_request,
          manta__stop_task_reply);
const struct mt_rpc_method mt_worker_delete_objects =
    UNARY("WorkerService", "DeleteObjects", manta__delete_objects_request,
          manta__delete_objects_reply);

const struct mt_rpc_method mt_head_submit_gang =
    UNARY("HeadService", "SubmitGang", manta__submit_gang_request,
          manta__submit_gang_reply);
const struct mt_rpc_method mt_head_get_gang =
    UNARY("HeadService", "GetGang", manta__get_gang_request,
          manta__get_gang_reply);
const struct mt_rpc_method mt_head_cancel_gang =
    UNARY("HeadService", "CancelGang", manta__cancel_gang_request,
          manta__cancel_gang_reply);
const struct mt_rpc_method mt_head_list_gangs =
    UNARY("HeadService", "ListGangs", manta__list_gangs_request,
          manta__list_gangs_reply);
