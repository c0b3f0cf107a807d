/* SPDX-License-Identifier: Apache-2.0 */
/*
 * head.h -- the manta-head daemon: its configuration, its state, and the
 * entry points main.c drives. The rpc handlers (rpc_head.c) translate
 * between protobuf and the plain tables kept here; the dashboard
 * (dashboard.c) serves the same status over HTTP.
 *
 * THREAD: everything runs on the head's loop thread.
 */
#ifndef MT_HEAD_H
#define MT_HEAD_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/rpc.h"
#include "head/node_table.h"
#include "head/storage.h"

#define MT_VERSION "0.1.0"
#define MT_HEAD_DEFAULT_PORT 6380

struct mt_head_config {
    const char *bind_addr;      /* "0.0.0.0:6380" */
    const char *node_ip;        /* advertised address host */
    const char *temp_dir;       /* session dir; NULL: write nothing */
    const char *storage;        /* "memory" */
    int report_period_ms;       /* what workers are told; default 1000 */
    int node_timeout_ms;        /* silence before DEAD; default 3000 */
    int grace_ms;               /* graceful shutdown budget; default 2000 */
    int dashboard_port;         /* HTTP dashboard; 0 picks one, -1 = off */
    int gang_port_lo;           /* ports gangs hand their members */
    int gang_port_hi;           /* (inclusive; 0, 0: 8470-8999) */
};

struct mt_head_watcher;
struct mt_head_tasks;
struct mt_dashboard;
struct mt_strbuf;

/* The daemon. Guarded by: loop thread. */
struct mt_head {
    uv_loop_t *loop;
    struct mt_head_config cfg;
    struct mt_rpc_engine *eng;
    struct mt_rpc_server *srv;
    struct mt_storage *store;
    struct mt_node_table nodes;
    char cluster_id[33];
    char address[128];          /* advertised host:port */
    int port;
    int64_t start_time_ms;
    uv_timer_t check_timer;
    struct mt_head_watcher *watchers;
    struct mt_dashboard *dash;  /* NULL when cfg.dashboard_port < 0 */
    char dashboard_url[160];    /* "http://ip:port", "" when off */
    struct mt_head_tasks *tq;   /* the task service (taskq.h) */
    void (*tq_stopped)(struct mt_head *h);
    bool stopping;
    void (*stopped)(void *arg);
    void *stopped_arg;
};

/*
 * mt_head_start - open storage, load saved state, bind and start serving.
 *
 * IN  cfg  borrowed; its strings must outlive the head
 * OUT out  the head; free it with mt_head_stop()
 * RET 0 or -MT_E* (e.g. -MT_EIO when the port cannot be bound)
 */
int mt_head_start(uv_loop_t *loop, const struct mt_head_config *cfg,
                  struct mt_head **out);

/*
 * mt_head_stop - graceful stop: refuse new calls, give calls in flight
 * cfg.grace_ms, then free everything and run done(arg).
 */
void mt_head_stop(struct mt_head *h, void (*done)(void *arg), void *arg);

/* Destroy the rpc engine after the head has stopped and the loop is idle. */
void mt_head_destroy(struct mt_head *h);

/* ---- implemented in rpc_head.c ---- */

/* The handler table served by the head. */
extern const struct mt_rpc_handler mt_head_handlers[];
extern const size_t mt_head_n_handlers;

/* Persist / forget a node in storage (serialized as NodeInfo). */
void mt_head_save_node(struct mt_head *h, const struct mt_node *n);

/* Load saved nodes from storage; they count as alive until they time out. */
void mt_head_load_nodes(struct mt_head *h);

/* Tell WatchNodes streams about a change (kind: proto NodeEvent.Kind). */
void mt_head_notify(struct mt_head *h, const struct mt_node *n, int kind);

/* End every WatchNodes stream (shutdown). */
void mt_head_close_watchers(struct mt_head *h);

/*
 * mt_head_status_json - append the cluster status as the JSON object that
 * `manta status --format json` prints (proto/status_json.h), built by the
 * same code as the GetClusterStatus reply. Used by the dashboard.
 */
void mt_head_status_json(struct mt_head *h, struct mt_strbuf *out);

#endif /* MT_HEAD_H */
