/* SPDX-License-Identifier: Apache-2.0 */
/*
 * head_int.h -- the head's state, shared by its files: the services, each
 * with its own header and contract, layered so that calls go one way
 * (lowest first):
 *   nodes (nodes.h)        membership and liveness over the node table
 *   sched (scheduling.h)   the scheduler library: nodes in, decisions out
 *   workers (workers.h)    the head as a client of its workers
 *   pgs (pgs.h)            placement groups
 *   objects (objects.h)    the object directory's rules
 *   tasks (tasks.h)        each task's life
 *   actors, gangs, leases  built on tasks (actors.h, gangs.h, leases.h)
 * A lower service learns about a higher one's business only through the
 * listeners and callbacks it offers. Above the services and below the
 * adapters: persist (persist.h: the state in storage) and recover
 * (recover.h: a restart squared with the workers), which reach the
 * adapters only through struct mt_head_hooks. The rpc adapters (rpc_*.c, listed in
 * rpc_services.h) convert protobuf at the edge and call the services;
 * the dashboard (dashboard.c) reads them. head.c creates the services,
 * wires the listeners and runs the life cycle (head.h).
 *
 * THREAD: everything runs on the head's loop thread.
 */
#ifndef MT_HEAD_INT_H
#define MT_HEAD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/rpc.h"
#include "head/actors.h"
#include "head/gangs.h"
#include "head/head_config.h"
#include "head/leases.h"
#include "head/nodes.h"
#include "head/objects.h"
#include "head/pgs.h"
#include "head/scheduling.h"
#include "head/storage.h"
#include "head/tasks.h"
#include "head/workers.h"

struct mt_dashboard;
struct mt_strbuf;
struct mt_head;
struct mt_head_history;   /* history.h (history_sampler.c) */
struct mt_head_prom_sd;   /* prom_sd.h */
struct mt_head_persist;   /* persist.h */
struct mt_head_recover;   /* recover.h */
struct mt_node_watcher;   /* rpc_nodes.c */
struct mt_rpc_watch;      /* rpc_watch.c */
struct mt_actor_lease;    /* rpc_actors.c */

/*
 * What persist.c and recover.c (below the rpc adapters) need from the
 * adapters, wired by head.c: the names of client watches (rpc_watch.c)
 * and whether a driver session is connected (rpc_actors.c).
 */
struct mt_head_hooks {
    const char *(*watch_name)(struct mt_head *h, uint32_t num);
    uint32_t (*watch_restore)(struct mt_head *h, const char *id);
    bool (*owner_connected)(struct mt_head *h, const char *owner);
    void (*owner_gone)(struct mt_head *h, const char *owner);
};

/* The daemon. Guarded by: loop thread. */
struct mt_head {
    uv_loop_t *loop;
    struct mt_head_config cfg;
    struct mt_rpc_engine *eng;
    struct mt_rpc_server *srv;
    struct mt_rpc_handler *handlers; /* every adapter's, concatenated */
    struct mt_storage *store;
    char cluster_id[33];
    char address[128];          /* advertised host:port */
    int port;
    int64_t start_time_ms;
    struct mt_dashboard *dash;  /* NULL when cfg.dashboard_port < 0 */
    struct mt_head_prom_sd *prom_sd; /* prom_sd.h; NULL: no temp dir */
    char dashboard_url[160];    /* "http://ip:port", "" when off */
    struct mt_head_history *history; /* the dashboard's time series;
                                        NULL when off (history.h) */
    /* The services, lowest layer first (see the top of this file). */
    struct mt_head_nodes *nodes;
    struct mt_head_sched *sched;
    struct mt_head_workers *workers;
    struct mt_head_pgs *pgs;
    struct mt_head_objects *objects;
    struct mt_task_table task_table; /* the tasks' (tasks.h) */
    struct mt_head_tasks *tasks;
    struct mt_head_actors *actors;
    struct mt_head_gangs *gangs;
    struct mt_head_leases *task_leases;
    struct mt_head_persist *persist;  /* writes the services' changes */
    struct mt_head_recover *recover;  /* squares a restart with workers */
    struct mt_head_hooks hooks;
    /* The rpc adapters' own state: streams and parked calls. */
    struct mt_node_watcher *node_watchers;
    struct mt_rpc_watch *watch;
    struct mt_actor_lease *leases;
    bool stopping;
    int stop_pending;           /* closes still to come before freeing */
    void (*stopped)(void *arg);
    void *stopped_arg;
};

/*
 * What a listing selects, in plain C: the fields of the kind's List*Request
 * that the dashboard's /api routes set. Unset (0, NULL) matches everything.
 */
struct mt_head_list_query {
    uint32_t limit;              /* 0: 100 */
    uint32_t offset;             /* matches skipped before the first listed */
    int state;                   /* the kind's state value (proto enum); 0 any;
                                    nodes: 1 ALIVE, 2 DEAD */
    const char *node_id;         /* tasks, objects: that node */
    const char *name;            /* tasks, actors: exactly this name */
    const char *owner_id;        /* tasks: submitted by this driver session */
};

/*
 * An rpc adapter (rpc_*.c): its HeadService handlers (ended by an entry
 * with a NULL method), and what it holds beyond single calls (streams,
 * parked calls): start wires its listeners once the services below the
 * actors exist, stop ends what it holds (shutdown). Either may be NULL.
 */
struct mt_head_adapter {
    const struct mt_rpc_handler *handlers;
    void (*start)(struct mt_head *h);
    void (*stop)(struct mt_head *h);
    /* The dashboard's /api listing of the adapter's kind (api.c), or NULL:
     * append what q selects exactly as `manta list <kind> --format json`
     * prints it (proto/list_json.h), built by the same code as the List*
     * rpc's reply. Borrows q. */
    void (*list_json)(struct mt_head *h, const struct mt_head_list_query *q,
                      struct mt_strbuf *out);
};

#endif /* MT_HEAD_INT_H */
