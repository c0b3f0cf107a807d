/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_batch.h -- the calls of rpc_batch.c, the client watch: submissions
 * batched into SubmitTasks calls and every task followed on one
 * WatchTasks stream. Types in task_int.h; the user-facing side is the
 * submit of manta/task.h (task.c).
 */
#ifndef MT_SDK_RPC_BATCH_H
#define MT_SDK_RPC_BATCH_H

#include "sdk/task_int.h"

/*
 * mt__cw_connect - open the client watch and wait up to timeout_ms for the
 * head to register it (caller thread, at connect). Failing leaves the
 * client on the one-by-one path. RET 0 or the error (not recorded).
 */
int mt__cw_connect(struct mt_client *c, int timeout_ms);

/*
 * mt__cw_post - caller thread: hand d (taken) to the loop for batching and
 * return at once with the task handle.
 * OUT out  owned task, free with mt_task_release()
 * RET 0, -MT_ECLOSED, -MT_ENOMEM (recorded on c)
 */
int mt__cw_post(struct mt_client *c, struct mt_task_def *d,
                size_t output_limit, struct mt_task **out);

/*
 * mt__cw_submit - loop thread: submit t (one ref taken) with d (taken) as
 * a followed task of the client watch (one by one when it is not up),
 * under a new tag. Failing ends t (its listener is told).
 */
void mt__cw_submit(struct mt_client *c, struct mt_task *t,
                   struct mt_task_def *d);

/* mt__cw_usable - submits may be batched: the watch is up, or being
 * reopened after the head went away (they wait for it). Any thread. */
bool mt__cw_usable(struct mt_client *c);

/* Loop thread: send what waits, as far as the calls in flight allow. */
void mt__cw_pump(struct mt_client *c);

/* Loop thread: end the watch and every task it follows (disconnect). */
void mt__cw_stop(struct mt_client *c);

#endif /* MT_SDK_RPC_BATCH_H */
