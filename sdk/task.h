/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task.h -- the calls of task.c for the other modules: a submit of a def
 * (actors create and call through it) and the client's tasks part
 * (connect.c attaches it). Types in task_int.h; the user-facing side is
 * manta/task.h.
 */
#ifndef MT_SDK_TASK_H
#define MT_SDK_TASK_H

#include "sdk/task_int.h"

/* How to submit (mt__task_submit_def). */
#define MT__SUBMIT_BATCH 0x1u     /* batched when the client watch is up */
#define MT__SUBMIT_NO_FOLLOW 0x2u /* one by one, and not followed */

/*
 * mt__task_submit_def - submit d (taken, freed on failure) and return the
 * task: batched (MT__SUBMIT_BATCH and the client watch is up), else one
 * by one (waiting for the head's id), followed unless MT__SUBMIT_NO_FOLLOW.
 * OUT out  owned task, free with mt_task_release()
 * RET 0 or -MT_E* (recorded on c)
 */
int mt__task_submit_def(struct mt_client *c, struct mt_task_def *d,
                        size_t output_limit, unsigned how,
                        struct mt_task **out);

/* mt__tasks_attach - give c its tasks part. RET 0, -MT_ENOMEM. */
int mt__tasks_attach(struct mt_client *c);

#endif /* MT_SDK_TASK_H */
