/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers.h -- the head as a client of its workers (WorkerService): one
 * channel per node, opened on first use and dropped when the node dies or
 * moves; tasks handed over in batches (one RunTasks call per node per
 * decide pass), stopped (StopTask), actor calls (RunTask with their order
 * number) and copies of objects deleted (DeleteObjects).
 *
 * Everything here is plain C; rpc_workers.c converts to protobuf at the
 * edge. Answers come back through the callbacks given, on the loop thread.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_WORKERS_H
#define MT_HEAD_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "common/rpc.h"
#include "head/node_table.h"
#include "head/task_table.h"
#include "sched/accel_env.h"

#define MT_OBJ_LOC_HOLDERS 8 /* holder addresses sent per argument */

struct mt_head_workers;

/* Where one reference argument of a task is (objects.c fills these). */
struct mt_obj_loc {
    uint32_t index;              /* which argument */
    mt_object_id id;
    uint64_t size;
    bool is_inline;
    const uint8_t *data;         /* is_inline: size bytes (borrowed) */
    const char *holders[MT_OBJ_LOC_HOLDERS]; /* worker addresses (borrowed) */
    size_t n_holders;
};

/*
 * The worker's answer for one task handed over: err 0 (taken),
 * -MT_EEXIST (it had it already), or why not. why is borrowed.
 */
typedef void (*mt_head_run_fn)(void *arg, uint64_t num, uint32_t attempt,
                               int err, const char *why);

/* The answer to one actor call: err 0 (taken) or why not. */
typedef void (*mt_head_call_fn)(void *arg, int err, const char *why);

/*
 * mt_head_workers_create - the client side to every node of nodes (both
 * borrowed; must outlive it).
 */
struct mt_head_workers *mt_head_workers_create(struct mt_rpc_engine *eng,
                                               struct mt_node_table *nodes);

/* mt_head_workers_on_run - who gets every batched task's answer. */
void mt_head_workers_on_run(struct mt_head_workers *w, mt_head_run_fn done,
                            void *arg);

/* mt_head_workers_close - send nothing more and call back no one; drop
 * every channel (calls in flight end CANCELLED, quietly). */
void mt_head_workers_close(struct mt_head_workers *w);

/* mt_head_workers_destroy - free, once the rpc engine is gone (no call
 * can complete any more). NULL ok. */
void mt_head_workers_destroy(struct mt_head_workers *w);

/* mt_head_workers_drop - forget the channel to node_id (it died). */
void mt_head_workers_drop(struct mt_head_workers *w, const char *node_id);

/*
 * mt_head_workers_queue - hand t (its current attempt) to node n with the
 * grant's environment at the next mt_head_workers_flush.
 *
 * IN  t     borrowed: its def must stay valid until the flush
 * IN  env   taken (released here)
 * IN  locs  taken (free()d here); n_locs entries, NULL when none; the
 *           bytes and addresses they point to must stay valid until the
 *           flush (the same decide pass)
 */
void mt_head_workers_queue(struct mt_head_workers *w, const struct mt_node *n,
                           const struct mt_head_task *t, struct mt_env *env,
                           struct mt_obj_loc *locs, size_t n_locs);

/* mt_head_workers_flush - send what was queued: one RunTasks per node.
 * A node that is gone answers its tasks -MT_EUNAVAIL at once. */
void mt_head_workers_flush(struct mt_head_workers *w);

/* mt_head_workers_stop_task - SIGTERM (SIGKILL with force) a task's
 * process on node_id. Best effort: failures are logged. */
void mt_head_workers_stop_task(struct mt_head_workers *w, const char *node_id,
                               const char *task_id, uint32_t attempt,
                               bool force);

/*
 * mt_head_workers_call - send actor call t to the actor's node as call seq
 * of its incarnation. RET 0 (done runs once later) or -MT_E* (it never
 * runs: the node is gone or the call could not start).
 */
int mt_head_workers_call(struct mt_head_workers *w, const char *node_id,
                         const struct mt_head_task *t, uint64_t seq,
                         uint32_t incarnation, mt_head_call_fn done,
                         void *arg);

/* mt_head_workers_delete_object - tell node_id to drop its copy of id.
 * Best effort. */
void mt_head_workers_delete_object(struct mt_head_workers *w,
                                   const char *node_id,
                                   const mt_object_id *id);

#endif /* MT_HEAD_WORKERS_H */
