/* SPDX-License-Identifier: Apache-2.0 */
/*
 * membership.h -- this node's membership in the cluster, worker side:
 * registering with the head, reporting every period, unregistering when
 * the worker stops.
 *
 *   REGISTERING --RegisterNode ok--> REGISTERED --ReportNode every
 *   period--> ... a report answered known=false (the head restarted or
 *   declared the node dead), or one that failed (the head may have been
 *   restarted meanwhile, from stored state that still knows the node),
 *   sends the node back to REGISTERING; an unreachable head is retried
 *   every second without limit, so workers survive head restarts. Each
 *   RegisterNode carries what the node holds (rpc_membership.c), so a
 *   restarted head reconciles before it schedules. Leaving stops both
 *   and unregisters (best effort, 1 s) when registered.
 *
 * One timer drives it: while REGISTERING it fires every second, while
 * REGISTERED every report period (the head sets it when it accepts the
 * node); one call is out at a time. The calls go over the link the rpc
 * adapter sets (rpc_membership.c), which hands back how each ended
 * (mt_membership_*_ended). Who must know that the node is registered
 * (the daemon's marker file, the runs' reports) registers a listener, and
 * who must know that it is not any more (the runs) another.
 *
 * THREAD: the worker's loop thread only.
 */
#ifndef MT_WORKER_MEMBERSHIP_H
#define MT_WORKER_MEMBERSHIP_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct mt_membership;

struct mt_membership_opts {
    uv_loop_t *loop;
    const char *node_id;        /* for messages; borrowed */
    const char *head_addr;      /* for messages; borrowed */
    int report_period_ms;       /* until the head sets one */
    const char *disk_path;      /* whose filesystem the usage describes
                                   (the temp dir); NULL: "/"; borrowed */
};

/*
 * The calls to the head. Each RET 0, and the matching
 * mt_membership_*_ended follows once, or -MT_E* (nothing follows).
 */
struct mt_membership_link {
    int (*register_node)(void *arg, int timeout_ms);
    int (*report_node)(void *arg, uint64_t seqno, int timeout_ms);
    int (*unregister_node)(void *arg, const char *reason, int timeout_ms);
};

/* The head accepted the node into cluster cluster_id (borrowed). */
typedef void (*mt_membership_fn)(void *arg, const char *cluster_id);

/* The host's use, as the reports carry it. */
struct mt_host_usage {
    double cpu_percent;         /* since the previous sample */
    uint64_t mem_total_bytes;
    uint64_t mem_used_bytes;
    uint32_t num_cpus_online;
    uint64_t disk_used_bytes;   /* opts.disk_path's filesystem */
    uint64_t disk_total_bytes;
    uint64_t net_rx_bytes;      /* every interface but lo, since boot */
    uint64_t net_tx_bytes;
};

/* mt_membership_create - not registering yet (mt_membership_start). */
struct mt_membership *mt_membership_create(const struct mt_membership_opts *o);

/* mt_membership_set_link - how the calls reach the head (borrowed). */
void mt_membership_set_link(struct mt_membership *m,
                            const struct mt_membership_link *link,
                            void *arg);

/* mt_membership_on_registered - who hears of each registration. */
void mt_membership_on_registered(struct mt_membership *m, mt_membership_fn fn,
                                 void *arg);

/* mt_membership_on_lost - who hears when the node leaves REGISTERED
 * (the head is unreachable or forgot it; a registration follows). */
void mt_membership_on_lost(struct mt_membership *m, void (*fn)(void *arg),
                           void *arg);

/* mt_membership_start - register now, and keep the node registered. */
void mt_membership_start(struct mt_membership *m);

/* mt_membership_registered - the head has the node (and it stays). */
bool mt_membership_registered(const struct mt_membership *m);

/* mt_membership_usage - the host's use now, CPU since the last sample
 * (which it takes: only the reports should call it). */
void mt_membership_usage(struct mt_membership *m, struct mt_host_usage *u);

/* mt_membership_last_usage - what the last mt_membership_usage found
 * (zeros before the first), without sampling: for /metrics. */
void mt_membership_last_usage(const struct mt_membership *m,
                              struct mt_host_usage *u);

/* How the calls ended: err 0 or -MT_E* with msg (borrowed). */
void mt_membership_register_ended(struct mt_membership *m, int err,
                                  const char *msg, const char *cluster_id,
                                  uint32_t period_ms);
void mt_membership_report_ended(struct mt_membership *m, int err,
                                const char *msg, bool known);
void mt_membership_unregister_ended(struct mt_membership *m, int err,
                                    const char *msg);

/*
 * mt_membership_leave - stop registering and reporting (answers still out
 * are ignored); unregister when registered, then done(arg), which runs
 * before this returns when there is no call to make or it cannot start.
 */
void mt_membership_leave(struct mt_membership *m, const char *reason,
                         void (*done)(void *), void *arg);

/* mt_membership_close - after leave: close the timer, then done(arg). */
void mt_membership_close(struct mt_membership *m, void (*done)(void *),
                         void *arg);

/* mt_membership_destroy - free, after close. NULL ok. */
void mt_membership_destroy(struct mt_membership *m);

#endif /* MT_WORKER_MEMBERSHIP_H */
