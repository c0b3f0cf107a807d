/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker_int.h -- the worker daemon's state, shared by worker.c and the
 * rpc adapters. The services, each with its own header and contract,
 * layered so that calls go one way (lowest first):
 *   procs (procs.h)          the record of the process groups we start
 *   objects (objects.h)      the node's object store
 *   transfers (transfer.h)   objects pulled from other nodes
 *   execs (executors.h)      the executor pool for function tasks
 *   actors (actors.h)        actors hosted in executors of their own
 *   runs (tasks.h)           each task's run, and the reports to the head
 *   leases (leases.h)        leases held here and the tasks pushed to them
 *   membership (membership.h) registering and reporting the node
 * A lower service learns about a higher one's business only through the
 * listeners it offers (an actor's death); the calls a service makes to
 * other processes go through a wire, link or sender that its rpc adapter
 * sets. The adapters (rpc_*.c, listed in rpc_services.h) convert protobuf
 * at the edge and call the services. worker.c creates the services, lets
 * the adapters wire themselves and runs the life cycle (worker.h).
 *
 * THREAD: everything runs on the worker's loop thread.
 */
#ifndef MT_WORKER_INT_H
#define MT_WORKER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/auth.h"
#include "common/rpc.h"
#include "worker/actors.h"
#include "worker/leases.h"
#include "worker/membership.h"
#include "worker/objects.h"
#include "worker/procs.h"
#include "worker/tasks.h"
#include "worker/transfer.h"
#include "worker/worker_config.h"

struct mt_direct_call; /* rpc_actors.c */
struct mt_httpd;        /* common/httpd.h */

/* The daemon. Guarded by: loop thread. */
struct mt_worker {
    uv_loop_t *loop;
    const struct mt_worker_config *cfg;
    struct mt_rpc_engine *eng;
    struct mt_rpc_server *srv;
    struct mt_rpc_handler *handlers; /* every adapter's, concatenated */
    struct mt_rpc_channel *head;
    char node_id[65];
    char node_secret[MT_AUTH_TOKEN_HEX + 1]; /* proves to the head that
                                                node_id is this worker */
    char address[128];         /* advertised host:port */
    char hostname[256];
    int port;
    int64_t start_time_ms;
    struct mt_httpd *metrics;  /* /metrics (metrics.h); NULL: off */
    char metrics_address[128]; /* its host:port; "" when off */
    bool stopping;
    /* The services, lowest layer first (see the top of this file). */
    struct mt_procs *procs;    /* record of our process groups; NULL:
                                  no session dir */
    struct mt_objects objects;
    struct mt_transfers *xfers;
    struct mt_exec_pool *execs; /* NULL: no executors */
    struct mt_hosted_actors *actors;
    struct mt_runs *runs;
    struct mt_leases *leases;
    struct mt_membership *membership;
    /* The rpc adapters' own state. */
    struct mt_direct_call *calls; /* CallActor calls held */
    size_t reg_logged[2];      /* held tasks, objects in the last logged
                                  RegisterNode (rpc_membership.c) */
    bool reg_log_next;         /* log the next one whatever it holds */
    void (*stopped)(void *arg);
    void *stopped_arg;
};

/*
 * An rpc adapter (rpc_*.c): its WorkerService handlers (ended by an entry
 * with a NULL method); start sets what it offers the services (a wire, a
 * link, a sender) once they exist; stop ends what it holds beyond single
 * calls (shutdown, after the executors are gone). Either may be NULL.
 */
struct mt_worker_adapter {
    const struct mt_rpc_handler *handlers;
    void (*start)(struct mt_worker *w);
    void (*stop)(struct mt_worker *w);
};

#endif /* MT_WORKER_INT_H */
