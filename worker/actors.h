/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actors.h -- the actors a worker hosts: one dedicated executor each
 * (executors.h, mt_exec_pool_create_dedicated), created by the actor's
 * creation task and then running its method calls one at a time, strictly
 * in the order the head numbered them.
 *
 * Life of a hosted actor (actors.c):
 *   creation task started --> STARTING: its executor is spawned and runs
 *   the factory --factory returned 0--> READY: calls run in sequence order
 *   (0, 1, 2, ... per incarnation; a call that arrives early waits for the
 *   ones before it) --executor gone (crash, kill, StopTask)--> DEAD: the
 *   call running and the calls waiting end FAILED (system_failure, "the
 *   actor's executor ..."), the creation task ends FAILED with
 *   system_failure so the head restarts the actor or declares it dead.
 *   A factory that fails makes the actor DEAD at once (its creation task
 *   fails with the factory's error, as a plain function task would).
 *
 * An actor is keyed by (id, attempt): the id is its creation task's id,
 * the attempt is the incarnation, so a restart on the same node never
 * meets the remains of the one before. Calls name the actor by its own
 * id, which has the same number as its creation task's and the actor
 * letter (common/ids.h: "a0f1..." for "t0f1..."): _call, _direct and
 * _stop_call take that id; _add, _created, _kill and the died listener
 * the creation task's.
 *
 * The runs (tasks.h) drive actors through this header and hear of a
 * READY actor's death through the listener they register
 * (mt_hosted_actors_on_died); direct calls come from rpc_actors.c.
 *
 * THREAD: the worker's loop thread only.
 */
#ifndef MT_WORKER_ACTORS_H
#define MT_WORKER_ACTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_exec_pool;
struct mt_exec_job;
struct mt_hosted_actors;

/* A READY actor died: why says how ("actor died: its executor ..."). */
typedef void (*mt_actor_died_fn)(void *arg, const char *id, uint32_t attempt,
                                 const char *why);

/*
 * mt_hosted_actors_create - no actor hosted yet.
 * IN  like  the executor pool whose binary and environment each actor's
 *           executor copies (borrowed; must outlive the actors); NULL when
 *           this worker runs no executors (then no actor can be added)
 */
struct mt_hosted_actors *mt_hosted_actors_create(struct mt_exec_pool *like);

/* mt_hosted_actors_on_died - who hears of READY actors' deaths. */
void mt_hosted_actors_on_died(struct mt_hosted_actors *ha,
                              mt_actor_died_fn fn, void *arg);

/*
 * mt_hosted_actors_add - host a new incarnation of actor id and run
 * factory (a job whose request has actor_op MT_EXEC_ACTOR_CREATE) on its
 * own executor.
 * OWNERSHIP borrows factory until its on_end
 * RET 0, -MT_EINVAL (this worker runs no executors), -MT_EEXIST (this
 *     incarnation is already here)
 */
int mt_hosted_actors_add(struct mt_hosted_actors *ha, const char *id,
                         uint32_t attempt, struct mt_exec_job *factory);

/*
 * mt_hosted_actors_created - the factory job ended: ok makes the actor
 * READY; otherwise the actor is dropped (its executor killed).
 */
void mt_hosted_actors_created(struct mt_hosted_actors *ha, const char *id,
                              uint32_t attempt, bool ok);

/*
 * mt_hosted_actors_call - run job (actor_op MT_EXEC_ACTOR_METHOD) as call
 * seq of incarnation attempt of actor id, after every call numbered
 * before it.
 * OWNERSHIP borrows job until its on_end
 * OUT why   on failure, why the call cannot run (static text)
 * RET 0, -MT_ENOENT (that incarnation is not alive here), -MT_EEXIST (seq
 *     already used)
 */
int mt_hosted_actors_call(struct mt_hosted_actors *ha, const char *id,
                          uint32_t attempt, uint64_t seq,
                          struct mt_exec_job *job, const char **why);

/*
 * mt_hosted_actors_direct - run job (actor_op MT_EXEC_ACTOR_METHOD) as
 * direct call seq of caller (CallActor: 0, 1, 2, ... per caller and
 * incarnation) after that caller's earlier calls. Only a READY actor
 * takes them.
 * OWNERSHIP borrows caller (copied) and job until its on_end
 * RET as mt_hosted_actors_call
 */
int mt_hosted_actors_direct(struct mt_hosted_actors *ha, const char *id,
                            uint32_t attempt, const char *caller,
                            uint64_t seq, struct mt_exec_job *job,
                            const char **why);

/*
 * mt_hosted_actors_stop_call - stop one call: one still waiting for its
 * turn ends STOPPED at once; a queued or running one is stopped by the
 * pool (a running one kills the actor's executor: the actor dies).
 * RET 0, -MT_ENOENT
 */
int mt_hosted_actors_stop_call(struct mt_hosted_actors *ha, const char *id,
                               uint32_t attempt, struct mt_exec_job *job);

/* mt_hosted_actors_kill - SIGKILL the actor's executor (it then dies as if
 * it crashed). RET 0, -MT_ENOENT. */
int mt_hosted_actors_kill(struct mt_hosted_actors *ha, const char *id,
                          uint32_t attempt);

/* Shutdown, step 1: SIGKILL every actor's executor; no callback after. */
void mt_hosted_actors_shutdown(struct mt_hosted_actors *ha);
/* Shutdown, step 2: close every actor's pool; done(arg) when all are. */
void mt_hosted_actors_close(struct mt_hosted_actors *ha, void (*done)(void *),
                            void *arg);
/* Free what is left (after close). NULL ok. */
void mt_hosted_actors_destroy(struct mt_hosted_actors *ha);

#endif /* MT_WORKER_ACTORS_H */
