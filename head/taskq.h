/* SPDX-License-Identifier: Apache-2.0 */
/*
 * taskq.h -- internals of the head's task service, shared by scheduling.c
 * (the scheduler glue: nodes in, placements out; plain C) and rpc_tasks.c
 * (the rpc adapter: submissions, watchers, dispatch to workers, reports).
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_TASKQ_H
#define MT_HEAD_TASKQ_H

#include <uv.h>

#include "common/rpc.h"
#include "head/actor_table.h"
#include "head/gangs.h"
#include "head/head.h"
#include "head/obj_table.h"
#include "head/task_table.h"
#include "sched/sched.h"

/* A channel to one worker, opened on first dispatch. */
struct mt_worker_link {
    char *node_id;
    char *address;
    struct mt_rpc_channel *ch;
};

struct pg_waiter;
struct Manta__TaskSpec;
struct Manta__RunTaskRequest;
struct mt_actor_lease;
struct mt_client_watch;
struct run_batch;

/* A placement group as users see it. Guarded by: loop thread. */
struct mt_pg {
    uint64_t num;                /* the scheduler's group id */
    char id[17];                 /* num as 16 hex digits */
    char *name;
    uint8_t *spec;               /* the CreatePlacementGroupRequest as sent */
    size_t spec_len;
    uint32_t nbundles;
    int state;                   /* proto PlacementGroupState */
    char *error;                 /* why it waits; NULL when none */
    int64_t create_ms;
    struct pg_waiter *waiters;   /* WaitPlacementGroup calls */
};

/* The task service of a head. Guarded by: loop thread. */
struct mt_head_tasks {
    struct mt_sched *sched;
    struct mt_task_table table;
    uv_timer_t kick;             /* runs decide soon after a change */
    bool kick_armed;
    bool closing;
    struct mt_worker_link *links;
    size_t n_links, cap_links;
    uint64_t dispatched, finished, retried;
    struct run_batch *runs;      /* dispatches of this decide pass, by node */
    size_t n_runs, cap_runs;
    struct mt_client_watch **cws; /* WatchTasks streams (rpc_watch.c) */
    size_t n_cws, cap_cws;
    uint32_t next_cw;
    struct mt_pg **pgs;          /* placement groups, oldest first */
    size_t n_pgs, cap_pgs;
    uint64_t next_pg;
    struct mt_obj_table objs;    /* the object directory (objects.h) */
    struct mt_actor_table actors; /* rpc_actors.c */
    struct mt_actor_lease *leases; /* LeaseActorOwner streams held */
    struct mt_gang_table gangs;  /* gangs.c */
};

/* ---- scheduling.c ---- */

/* Create the scheduler and the task table. RET 0 or -MT_E*. */
int mt__tasks_start(struct mt_head *h);
/* Close the kick timer; done() runs after it is closed. */
void mt__tasks_stop(struct mt_head *h, void (*done)(struct mt_head *h));
/* Free the scheduler and the table (after stop). */
void mt__tasks_release(struct mt_head *h);
/* A node registered (again): add it to the scheduler if needed. */
void mt__sched_node_up(struct mt_head *h, struct mt_node *n);
/* A node died or left: tell the scheduler, fail or retry its tasks. */
void mt__sched_node_down(struct mt_head *h, struct mt_node *n);
/* Run decide soon (coalesced). */
void mt__sched_kick(struct mt_head *h);
/* Copy the scheduler's view of what is free on n into n->avail. */
void mt__sched_sync_avail(struct mt_head *h, struct mt_node *n);
/* The Demands block of `manta status`; RET owned string. */
char *mt__sched_demands(struct mt_head *h);

/* ---- rpc_tasks.c ---- */

/*
 * mt__task_submit - take one submitted spec (a Manta__TaskSpec, borrowed):
 * check it, add the task and queue it (or leave it WAITING_FOR_ARGS until
 * its object arguments exist). A task whose argument already failed is
 * returned FAILED (with why set).
 * OUT why, err  when refused: the reason (static or borrowed until the next
 *               call) and the -MT_E* code
 * RET the task (owned by the table), or NULL when refused
 */
struct mt_task *mt__task_submit(struct mt_head *h, const void *spec,
                                const char **why, int *err);

/* Why spec (a Manta__TaskSpec) is refused, or NULL (err set when not). */
const char *mt__task_spec_check(const void *spec, int *err);

/* Fill ev (a Manta__TaskEvent) with t's state; pointers borrowed from t. */
void mt__task_fill_event(const struct mt_task *t, void *ev);

/* Stop a scheduled or running task for reason (it ends CANCELLED). */
void mt__task_stop(struct mt_head *h, struct mt_task *t, const char *reason);

/* A task was placed: queue it for its worker (sent by the flush). */
void mt__task_dispatch(struct mt_head *h, struct mt_task *t,
                       const struct mt_grant *g);
/* Send the queued tasks: one RunTasks call per node. */
void mt__task_dispatch_flush(struct mt_head *h);
/* The scheduler says no node can ever run it (reported once). */
void mt__task_infeasible(struct mt_head *h, struct mt_task *t);
/* The task can never be placed (its group went away): fail it. */
void mt__task_unplaceable(struct mt_head *h, struct mt_task *t, int err);
/* The node running t died: retry it or fail it. */
void mt__task_node_lost(struct mt_head *h, struct mt_task *t);
/* Tell watchers about t's current state; end their streams if terminal. */
void mt__task_notify(struct mt_head *h, struct mt_task *t);
/* Drop the link (channel) to a node. */
void mt__link_drop(struct mt_head *h, const char *node_id);
/* End every watcher and close every link (shutdown). */
void mt__tasks_close_rpc(struct mt_head *h);

/* Channel to a node's worker (opened on first use; NULL if it fails). */
struct mt_rpc_channel *mt__link_get(struct mt_head *h, const struct mt_node *n);
/* Fail a task that has not ended (e.g. a dependency failed). */
void mt__task_fail(struct mt_head *h, struct mt_task *t, const char *why);
/* Every object argument of a WAITING_FOR_ARGS task is READY: queue it. */
void mt__task_args_ready(struct mt_head *h, struct mt_task *t);

/* Add a PENDING task for spec (a Manta__TaskSpec, checked); not queued. */
struct mt_task *mt__task_add(struct mt_head *h, const void *spec,
                             int max_retries);
/* Queue t in the scheduler. RET 0 or -MT_E* with why set. */
int mt__task_enqueue(struct mt_head *h, struct mt_task *t, const char **why);
/* End t in state with error (borrowed; NULL none): free its grant, tell
 * its watchers and the actor table. */
void mt__task_end(struct mt_head *h, struct mt_task *t,
                  enum mt_task_state state, int exit_code, const char *error);
/* SIGKILL t's process (or actor) on its worker; t is not marked cancelled. */
void mt__task_kill_on_worker(struct mt_head *h, struct mt_task *t);

/* ---- rpc_objects.c (object directory rules, objects.h) ---- */

/*
 * mt__objects_on_submit - a task was added: create its result object
 * (function tasks; held by the submitter when spec->hold_result), take a
 * reference on each object argument and count those not READY.
 * OUT why  the reason when the return is not 0 or 1
 * RET 0 (run it), 1 (WAITING_FOR_ARGS), 2 (fail the task: an argument
 *     failed or was lost), -MT_ENOENT (unknown object: refuse the call),
 *     -MT_EINVAL (malformed arg_refs: refuse the call)
 */
int mt__objects_on_submit(struct mt_head *h, struct mt_task *t,
                          const struct Manta__TaskSpec *s, char *why,
                          size_t len);
/* t ended: drop its argument references; a result never produced fails
 * (and with it every task waiting for it). */
void mt__objects_on_task_end(struct mt_head *h, struct mt_task *t);
/* t finished on node_id: its result is inline (data, len) or in that
 * node's store (in_store, size). Wakes tasks waiting for it. */
void mt__objects_on_result(struct mt_head *h, struct mt_task *t,
                           const char *node_id, const void *data, size_t len,
                           bool in_store, uint64_t size);
/* node_id died: forget its copies; objects left without one are LOST. */
void mt__objects_node_down(struct mt_head *h, const char *node_id);
/* Fill req->object_args for a task placed on dest. RET owned storage,
 * free with mt__objects_free_run() after the request is sent. */
void *mt__objects_fill_run(struct mt_head *h, const struct mt_node *dest,
                           struct Manta__RunTaskRequest *req);
void mt__objects_free_run(void *run);
/* The scheduler node holding s's biggest argument. RET false if none. */
bool mt__objects_affinity(struct mt_head *h, const struct Manta__TaskSpec *s,
                          uint32_t *handle);
/* Fail every parked GetObject (shutdown). */
void mt__objects_close(struct mt_head *h);
void mt__h_register_objects(struct mt_rpc_call *call,
                            const ProtobufCMessage *m, void *arg);
void mt__h_release_objects(struct mt_rpc_call *call,
                           const ProtobufCMessage *m, void *arg);
void mt__h_get_object(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg);
void mt__h_list_objects(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg);

/* ---- rpc_actors.c ---- */

/* SubmitTask of an ACTOR_CREATE or ACTOR_METHOD spec (already checked). */
void mt__actor_submit(struct mt_head *h, struct mt_rpc_call *call,
                      const void *spec);
/* A worker says the factory of creation task t returned: ALIVE. */
void mt__actor_ready(struct mt_head *h, struct mt_task *t, uint32_t pid);
/* Creation task t is going back to PENDING (attempt+1): RESTARTING. */
void mt__actor_restarting(struct mt_head *h, struct mt_task *t);
/* t ended (any kind); a creation task's end makes its actor DEAD. */
void mt__actor_task_ended(struct mt_head *h, struct mt_task *t);
/* Method call t was lost with its actor (what: why): fail it. */
void mt__actor_call_lost(struct mt_head *h, struct mt_task *t,
                         const char *what);
/* Free the actor table (shutdown). */
void mt__actors_release(struct mt_head *h);
/* End every LeaseActorOwner stream without killing anything (shutdown). */
void mt__actors_close_rpc(struct mt_head *h);
void mt__h_lease_actor_owner(struct mt_rpc_call *call,
                             const ProtobufCMessage *m, void *arg);
void mt__h_get_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg);
void mt__h_list_actors(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg);
void mt__h_kill_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg);
/* ---- rpc_watch.c ---- */

/* t changed state (or has output: fd, data, len): tell its client watch.
 * A terminal state is the last event; t then leaves the watch. */
void mt__cw_task_event(struct mt_head *h, struct mt_task *t);
void mt__cw_task_output(struct mt_head *h, struct mt_task *t, uint32_t fd,
                        const uint8_t *data, size_t len);
/* End every client watch (shutdown). */
void mt__cw_close_all(struct mt_head *h);
void mt__h_submit_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg);
void mt__h_watch_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg);

/* ---- rpc_pgs.c ---- */

/* The group with this hex id, or NULL. */
struct mt_pg *mt__head_pg_find(struct mt_head *h, const char *id);
/* The scheduler placed (status 0) or gave up on (-MT_EINFEASIBLE) a group. */
void mt__head_pg_decided(struct mt_head *h, uint64_t num, int status);
/*
 * mt__head_pg_create - create a group from req (bundles, or a TPU slice
 * group when req->tpu_pod_type is set; per_host, may be NULL, is added to
 * each slice host's bundle). It may be PENDING.
 * OUT why, err  when refused (why static)
 * RET the group, or NULL
 */
struct Manta__CreatePlacementGroupRequest;
struct mt_pg *mt__head_pg_create(struct mt_head *h,
                        const struct Manta__CreatePlacementGroupRequest *req,
                        const struct mt_res_set *per_host, const char **why,
                        int *err);
/* Remove pg: free its reservations, stop the tasks running in it. */
void mt__head_pg_remove(struct mt_head *h, struct mt_pg *pg);
/* Answer waiters and free every group (shutdown). */
void mt__head_pgs_release(struct mt_head *h);
void mt__h_create_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg);
void mt__h_wait_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                   void *arg);
void mt__h_remove_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg);
void mt__h_list_pgs(struct mt_rpc_call *call, const ProtobufCMessage *m,
                    void *arg);

/* ---- rpc_gangs.c ---- */

void mt__h_submit_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg);
void mt__h_get_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                    void *arg);
void mt__h_cancel_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg);
void mt__h_list_gangs(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg);

/* HeadService task handlers (listed in rpc_head.c's table). */
void mt__h_submit_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg);
void mt__h_watch_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg);
void mt__h_cancel_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg);
void mt__h_list_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg);
void mt__h_report_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg);

#endif /* MT_HEAD_TASKQ_H */
