/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actors.h -- the head's actors: creating and calling them, their state
 * machine (states in actor_table.h), kills and owners going away.
 *
 * An actor rides on its creation task: the scheduler places it like any
 * task and its grant holds the actor's resources for the actor's whole
 * life; the worker reports "actor ready" once the factory returned (the
 * task stays RUNNING); when the actor's executor or node dies the task
 * fails with a system failure and the task service retries it: that is a
 * restart, bounded by max_restarts, which is the creation task's retry
 * budget. This service follows the creation tasks as a task listener.
 *
 * Method calls are tasks too (kind ACTOR_METHOD) but never see the
 * scheduler: they queue on their actor in arrival order and, while it is
 * ALIVE, go straight to its worker numbered 0, 1, 2, ... per incarnation.
 * A call in flight when the actor dies fails ("actor died: ..."); calls
 * still queued wait for the restart; calls to a DEAD actor fail at once
 * with its death reason.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_ACTORS_H
#define MT_HEAD_ACTORS_H

#include <stdbool.h>
#include <stdint.h>

#include "head/actor_table.h"
#include "head/node_table.h"
#include "head/tasks.h"
#include "head/workers.h"

struct mt_head_actors;

/* mt_head_actors_create - actors over tasks (a listener is registered);
 * every argument borrowed, must outlive it. */
struct mt_head_actors *mt_head_actors_create(struct mt_head_tasks *tasks,
                                             struct mt_head_workers *workers);
void mt_head_actors_destroy(struct mt_head_actors *as);

/* mt_head_actors_table - the table (borrowed; read-only outside, except
 * for persist.c restoring actors before anything runs). */
struct mt_actor_table *mt_head_actors_table(struct mt_head_actors *as);

/* mt_head_actors_on_changed - who hears of actor num's record changing
 * where its creation task does not (READY, a call sent, a kill); one
 * follower (persist.h). */
void mt_head_actors_on_changed(struct mt_head_actors *as,
                               void (*fn)(void *arg, uint64_t num), void *arg);

/*
 * mt_head_actor_create - create an actor from an ACTOR_CREATE def (taken,
 * checked by mt_task_def_check): its creation task is queued.
 * OUT why, err  when refused (why borrowed until the next call)
 * RET the creation task, or NULL
 */
struct mt_head_task *mt_head_actor_create(struct mt_head_actors *as,
                                          struct mt_task_def *def,
                                          const char **why, int *err);

/*
 * mt_head_actor_call - queue an ACTOR_METHOD def (taken, checked) on its
 * actor; it is sent at once while the actor is ALIVE.
 * RET the call's task, or NULL with *err = -MT_ENOENT (no such actor)
 */
struct mt_head_task *mt_head_actor_call(struct mt_head_actors *as,
                                        struct mt_task_def *def, int *err);

/* mt_head_actor_ready - a worker says creation task t's factory returned:
 * ALIVE in executor pid; queued calls go out. */
void mt_head_actor_ready(struct mt_head_actors *as, struct mt_head_task *t,
                         uint32_t pid);

/* mt_head_actor_kill - kill a's executor: for good with no_restart, else
 * as a crash (it restarts while max_restarts allows). */
void mt_head_actor_kill(struct mt_head_actors *as, struct mt_head_actor *a,
                        bool no_restart);

/* mt_head_actors_owner_gone - the client owner went away: kill its live
 * actors that are not detached. */
void mt_head_actors_owner_gone(struct mt_head_actors *as, const char *owner);

#endif /* MT_HEAD_ACTORS_H */
