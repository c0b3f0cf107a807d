/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker.h -- the manta-worker daemon: its configuration, its state and the
 * life cycle main.c drives.
 *
 * Membership protocol with the head (worker side):
 *   REGISTERING --RegisterNode ok--> REGISTERED --report every period-->
 *   a report answered known=false (the head restarted or declared us dead)
 *   sends the worker back to REGISTERING; unreachable heads are retried every
 *   second without limit, so workers survive head restarts.
 *
 * THREAD: everything runs on the worker's loop thread.
 */
#ifndef MT_WORKER_H
#define MT_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/ids.h"
#include "common/qty.h"
#include "common/rpc.h"
#include "common/sys.h"
#include "worker/objects.h"

struct mt_transfers;
struct mt_transfer_wire;
struct mt_runs;
struct mt_exec_pool;
struct mt_gpu_monitor;
struct mt_hosted_actors;
struct mt_membership;
struct mt_membership_link;
struct mt_direct_call;

#define MT_WORKER_VERSION "0.1.0"

struct mt_worker_config {
    const char *head_addr;     /* host:port */
    const char *node_ip;       /* advertised (and bound) address */
    const char *bind_ip;       /* address to bind; node_ip or 0.0.0.0 */
    int port;                  /* rpc port; 0 picks one */
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
    struct mt_gpu_monitor *gpu_monitor; /* per-GPU figures; NULL: none */
};

/* The daemon. Guarded by: loop thread. */
struct mt_worker {
    uv_loop_t *loop;
    const struct mt_worker_config *cfg;
    struct mt_rpc_engine *eng;
    struct mt_rpc_server *srv;
    struct mt_rpc_channel *head;
    char node_id[65];
    char address[128];
    char hostname[256];
    int port;
    int64_t start_time_ms;
    bool stopping;
    struct mt_membership *membership; /* with the head (membership.h) */
    struct mt_objects objects; /* this node's object store */
    struct mt_transfers *xfers; /* fetches from other nodes (transfer.h) */
    struct mt_runs *runs;      /* task runs and their reporter */
    struct mt_exec_pool *execs; /* executors for function tasks; or NULL */
    struct mt_hosted_actors *actors; /* hosted actors (actors.h) */
    struct mt_direct_call *calls; /* CallActor calls held (rpc_actors.c) */
    void (*stopped)(void *arg);
    void *stopped_arg;
};

/*
 * mt_worker_start - bind the worker's rpc server and start registering.
 * IN  cfg  borrowed; must outlive the worker
 * RET 0 or -MT_E*
 */
int mt_worker_start(uv_loop_t *loop, const struct mt_worker_config *cfg,
                    struct mt_worker **out);

/*
 * mt_worker_stop - SIGKILL every task's process group (nothing more is
 * reported), unregister (best effort, 1 s), stop serving, close every task
 * handle, run done.
 */
void mt_worker_stop(struct mt_worker *w, void (*done)(void *arg), void *arg);

/* mt_worker_destroy - free after stop completed and the loop is idle. */
void mt_worker_destroy(struct mt_worker *w);

/* ---- rpc_transfer.c: object pulls between workers (transfer.h) ---- */

void mt__worker_h_pull(struct mt_rpc_call *call, const ProtobufCMessage *req,
                       void *arg);
void mt__worker_h_fetch(struct mt_rpc_call *call, const ProtobufCMessage *req,
                        void *arg);
/* The PullObject streams of fetches (mt_transfers_set_wire, arg w). */
extern const struct mt_transfer_wire mt__worker_pull_wire;

/* ---- rpc_objects.c: DeleteObjects (the head frees unreferenced ones) ---- */

void mt__worker_h_delete_objects(struct mt_rpc_call *call,
                                 const ProtobufCMessage *req, void *arg);

/* ---- rpc_tasks.c: command tasks (state in tasks.c, see tasks.h) ---- */

struct mt_run_batch;
/* The runs' sender (mt_runs_set_sender, arg w): one ReportTasks call. */
int mt__worker_send_task_report(void *w, const struct mt_run_batch *b);

void mt__worker_h_run_task(struct mt_rpc_call *call,
                           const ProtobufCMessage *req, void *arg);
void mt__worker_h_run_tasks(struct mt_rpc_call *call,
                            const ProtobufCMessage *m, void *arg);
void mt__worker_h_stop_task(struct mt_rpc_call *call,
                            const ProtobufCMessage *req, void *arg);

/* ---- rpc_actors.c: direct actor calls (see actors.h) ---- */

void mt__worker_h_call_actor(struct mt_rpc_call *call,
                             const ProtobufCMessage *req, void *arg);
/* Fail every direct call still held (shutdown: their jobs never end). */
void mt__worker_calls_shutdown(struct mt_worker *w);

/* ---- rpc_membership.c ---- */
extern const struct mt_rpc_handler mt_worker_handlers[];
extern const size_t mt_worker_n_handlers;

/* The calls of the membership (mt_membership_set_link, arg w). */
extern const struct mt_membership_link mt__worker_membership_link;

#endif /* MT_WORKER_H */
