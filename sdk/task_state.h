/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_state.h -- the calls of task_state.c: a task handle's life
 * (created, events applied, ended without a final event, freed with its
 * last reference). Types in task_int.h; the user-facing side is
 * mt_task_t in manta/task.h.
 */
#ifndef MT_SDK_TASK_STATE_H
#define MT_SDK_TASK_STATE_H

#include "sdk/task_int.h"

/* mt__task_new - a task handle with one ref (id NULL: not known yet). RET
 * NULL on ENOMEM. */
struct mt_task *mt__task_new(struct mt_client *c, const char *id,
                             size_t output_limit);

/*
 * mt__task_id_new - a task id this driver chooses: "t" + 15 hex digits,
 * random, with MT_NUM_ID_DRIVER_BIT set (apart from the numbers the head
 * counts). Leased tasks are pushed under one; tasks submitted through the
 * head carry one so that a submit tried again is not a second task.
 * THREAD any.
 */
void mt__task_id_new(char out[MT_NUM_ID_LEN + 1]);

/* mt__task_unref - drop one reference; frees at zero. NULL ok. */
void mt__task_unref(struct mt_task *t);

/* mt__task_apply_locked - apply ev to t. c->mu held. */
void mt__task_apply_locked(struct mt_task *t, const struct mt__task_event *ev);

/*
 * mt__task_end - end t without a final event from the head: lost (lost is
 * its -MT_E* code) or, with lost 0, FAILED (refused). why is borrowed.
 * Takes c->mu; a task that has ended already is left alone. Then tells
 * t's listener, if any (loop thread).
 */
void mt__task_end(struct mt_client *c, struct mt_task *t, int lost,
                  const char *why);

/* mt__task_final - FINISHED, FAILED or CANCELLED. */
bool mt__task_final(int state);

#endif /* MT_SDK_TASK_STATE_H */
