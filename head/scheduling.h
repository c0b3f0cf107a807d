/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scheduling.h -- the head's glue to the scheduler library (sched/): nodes
 * go in as they come and go, plain C requests are turned into the
 * scheduler's, and decisions come out to whoever registered for them
 * (tasks.c for tasks, pgs.c for placement groups).
 *
 * Decisions are batched: every change that may free or add room (a
 * submit, a task ending, a node joining) calls mt_head_sched_kick, which
 * arms a zero-delay timer; one decide pass then places everything that
 * fits. The scheduler is the head's source of truth for what is free on
 * each node; worker reports only refresh host usage.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_SCHEDULING_H
#define MT_HEAD_SCHEDULING_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/selector.h"
#include "head/node_table.h"
#include "sched/sched.h"

struct mt_head_sched;

/* Where the decisions of a pass go. Any member may be NULL. */
struct mt_head_sched_sink {
    /* Task num was placed (status 0, grant g) or not: -MT_EINFEASIBLE
     * (no node can ever run it; it stays queued) or another -MT_E* (it
     * can never be placed). */
    void (*task)(void *arg, uint64_t num, int status,
                 const struct mt_grant *g);
    /* Group num was created (0) or is infeasible (-MT_EINFEASIBLE). */
    void (*pg)(void *arg, uint64_t num, int status);
    /* The pass is over (dispatches can be sent). */
    void (*pass_done)(void *arg);
};

/* A plain C selector as the scheduler's (strings borrowed). */
struct mt_head_sel {
    struct mt_label_expr e[MT_SEL_MAX_EXPRS];
    struct mt_label_selector sel;
};

/*
 * mt_head_sched_create - a scheduler over the nodes of nodes (borrowed;
 * must outlive it).
 * RET 0 or -MT_E*
 */
int mt_head_sched_create(uv_loop_t *loop, struct mt_node_table *nodes,
                         struct mt_head_sched **out);

/* mt_head_sched_stop - no more passes; done(arg) once the timer closed. */
void mt_head_sched_stop(struct mt_head_sched *hs, void (*done)(void *arg),
                        void *arg);

/* mt_head_sched_destroy - free after stop. NULL ok. */
void mt_head_sched_destroy(struct mt_head_sched *hs);

/* mt_head_sched_add_sink - one more consumer of decisions (borrowed). */
void mt_head_sched_add_sink(struct mt_head_sched *hs,
                            const struct mt_head_sched_sink *sink, void *arg);

/* mt_head_sched_lib - the scheduler itself (borrowed). */
struct mt_sched *mt_head_sched_lib(struct mt_head_sched *hs);

/* mt_head_sched_kick - run a decide pass soon (coalesced). */
void mt_head_sched_kick(struct mt_head_sched *hs);

/*
 * mt_head_sched_hold - hold (on) or resume decisions: while held, nothing
 * is placed (kicks wait), so that a restarted head offers no resources
 * before it knows what its workers still run (recover.h).
 */
void mt_head_sched_hold(struct mt_head_sched *hs, bool on);
bool mt_head_sched_held(const struct mt_head_sched *hs);

/* ---- nodes --------------------------------------------------------------- */

/* A node registered (again): add it to the scheduler if needed. */
void mt_head_sched_node_up(struct mt_head_sched *hs, struct mt_node *n);

/*
 * mt_head_sched_suspect - n could not be reached (why, borrowed): nothing
 * new is placed there until it reports again (mt_head_nodes_report() then
 * clears n->suspect and mt_head_sched_node_up() trusts it again).
 */
void mt_head_sched_suspect(struct mt_head_sched *hs, struct mt_node *n,
                           const char *why);

/* A node died or left: its grants are gone (the owners are told apart). */
void mt_head_sched_node_down(struct mt_head_sched *hs, struct mt_node *n);

/*
 * Copy the scheduler's view of what is free on n into n->avail. The copy
 * is made when it is read, not after each decide pass (a walk over every
 * node): whoever reads a node's avail syncs it first.
 */
void mt_head_sched_sync_avail(struct mt_head_sched *hs, struct mt_node *n);

/* mt_head_sched_sync_all - mt_head_sched_sync_avail on every node. */
void mt_head_sched_sync_all(struct mt_head_sched *hs);

/* The live node behind a scheduler handle, or NULL. */
struct mt_node *mt_head_sched_node(struct mt_head_sched *hs, uint32_t handle);

/* The Demands block of `manta status`. RET owned string (free()). */
char *mt_head_sched_demands(struct mt_head_sched *hs);

/* ---- plain C to the scheduler's requests ------------------------------------ */

/*
 * mt_head_sched_res - resource names to the scheduler's ids. With none and
 * default_cpu, one CPU (as Ray does for tasks).
 * OUT why  when refused (static)
 * RET 0 or -MT_EINVAL (too many distinct names in the cluster)
 */
int mt_head_sched_res(struct mt_head_sched *hs, const struct mt_qty_list *l,
                      bool default_cpu, struct mt_res_set *out,
                      const char **why);

/* mt_head_sched_selector - s as the scheduler's selector in out; RET
 * &out->sel, or NULL when s is empty. Valid while s and out live. */
const struct mt_label_selector *
mt_head_sched_selector(const struct mt_selector *s, struct mt_head_sel *out);

#endif /* MT_HEAD_SCHEDULING_H */
