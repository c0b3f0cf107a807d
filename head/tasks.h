/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.h -- the head's task service: each task's life from submission to
 * its end (the states are in task_table.h), its placement by the
 * scheduler, its hand-over to a worker, the worker's reports, retries
 * when a worker dies, cancels.
 *
 * Who calls whom: the rpc adapters and the services above (actors, gangs)
 * call this service; it calls the services below it (scheduling, workers,
 * placement groups, the object directory) and tells whoever follows tasks
 * (objects, watches, gangs, actors) through struct mt_task_listener, in
 * registration order. Listeners may call back into this service.
 *
 * Retries: a system failure (the node died, the executor died) runs the
 * task again while max_retries allows, else ends it FAILED with the
 * reason. An actor's creation task retries as the actor's restarts; an
 * actor's method call is never retried: it fails with actor_died set.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_TASKS_H
#define MT_HEAD_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/prom.h"
#include "head/node_table.h"
#include "head/objects.h"
#include "head/pgs.h"
#include "head/scheduling.h"
#include "head/task_table.h"
#include "head/workers.h"

struct mt_head_tasks;

/* What a worker reported about one task (ReportTasks, as plain C). */
struct mt_task_update {
    const char *task_id;
    uint32_t attempt;
    enum mt_head_task_state state;  /* RUNNING, FINISHED, FAILED; 0 none */
    int exit_code;
    const char *error;              /* "" none */
    bool system_failure;            /* FAILED: the executor or node died */
    uint32_t fd;                    /* output: 1 or 2 */
    const uint8_t *output;
    size_t output_len;
    const uint8_t *result;          /* FINISHED: inline result, or NULL */
    size_t result_len;
    bool result_in_store;           /* FINISHED: the result is an object */
    uint64_t result_size;
};

/* Counters since the head started (metrics). */
struct mt_head_task_counts {
    uint64_t dispatched, finished, retried;
    uint64_t ended[MT_TASK_CANCELLED + 1]; /* finished, by end state */
    struct mt_prom_hist sched_latency;    /* submit to an attempt's
                                             start, seconds */
    struct mt_prom_hist run_time;         /* start to end, seconds */
};

/*
 * mt_head_tasks_create - the task service over table (initialized; the
 * caller releases it after mt_head_tasks_destroy). It registers with hs
 * for task decisions and with pgs to
 * stop tasks of removed groups, with workers for RunTasks answers and with
 * objs for argument readiness. Every argument is borrowed and must
 * outlive it.
 */
struct mt_head_tasks *mt_head_tasks_create(struct mt_task_table *table,
                                           struct mt_node_table *nodes,
                                           struct mt_head_sched *hs,
                                           struct mt_head_workers *workers,
                                           struct mt_head_pgs *pgs,
                                           struct mt_head_objects *objs);

/* mt_head_tasks_close - no more dispatches (shutdown). */
void mt_head_tasks_close(struct mt_head_tasks *ts);

/* mt_head_tasks_destroy - free the service (not the table). NULL ok. */
void mt_head_tasks_destroy(struct mt_head_tasks *ts);

/* mt_head_tasks_listen - one more follower of every task (l borrowed). */
void mt_head_tasks_listen(struct mt_head_tasks *ts,
                          const struct mt_task_listener *l, void *arg);

/* mt_head_tasks_table - the table (borrowed; read-only outside tasks.c). */
struct mt_task_table *mt_head_tasks_table(struct mt_head_tasks *ts);

/* mt_head_tasks_counts - counters since start. */
struct mt_head_task_counts mt_head_tasks_counts(const struct mt_head_tasks *ts);

/* ---- submission ------------------------------------------------------------ */

/*
 * mt_head_tasks_submit - check def (mt_task_def_check), add the task and
 * queue it, or leave it WAITING_FOR_ARGS until its object arguments exist.
 * A task whose argument already failed is returned FAILED. Actor kinds
 * are refused (actors.h creates and calls actors).
 *
 * IN  def       taken (moved into the task or released)
 * OUT why, err  when refused: the reason (static, or borrowed until the
 *               next submit) and the -MT_E* code
 * RET the task (owned by the table), or NULL when refused
 */
struct mt_head_task *mt_head_tasks_submit(struct mt_head_tasks *ts,
                                          struct mt_task_def *def,
                                          const char **why, int *err);

/*
 * mt_head_tasks_submit_as - as mt_head_tasks_submit, under the id its
 * driver chose (task_id: 't' + 15 hex digits, MT_NUM_ID_DRIVER_BIT set),
 * so that a driver that lost the answer can submit again: a task already
 * known under that id, of the same kind and owner (def->owner_id), is
 * returned as it is (def released) instead of a second one.
 * RET the task, or NULL when refused (why, err: a malformed id, the id
 * taken by another task (-MT_EEXIST), or as mt_head_tasks_submit)
 */
struct mt_head_task *mt_head_tasks_submit_as(struct mt_head_tasks *ts,
                                             const char *task_id,
                                             struct mt_task_def *def,
                                             const char **why, int *err);

/* mt_head_tasks_add - add a PENDING task for a checked def (taken) with
 * max_retries (< 0: the default); it is not queued. */
struct mt_head_task *mt_head_tasks_add(struct mt_head_tasks *ts,
                                       struct mt_task_def *def,
                                       int max_retries);

/* mt_head_tasks_enqueue - queue t in the scheduler. RET 0 or -MT_E* with
 * why set (the task is left as it was). */
int mt_head_tasks_enqueue(struct mt_head_tasks *ts, struct mt_head_task *t,
                          const char **why);

/* ---- life -------------------------------------------------------------------- */

/* mt_head_tasks_end - end t (not yet terminal) in state with error
 * (borrowed; NULL none): its grant is freed and its followers told. */
void mt_head_tasks_end(struct mt_head_tasks *ts, struct mt_head_task *t,
                       enum mt_head_task_state state, int exit_code,
                       const char *error);

/* mt_head_tasks_fail - end a task that has not run FAILED (e.g. a
 * dependency failed), taking it out of the scheduler's queue. */
void mt_head_tasks_fail(struct mt_head_tasks *ts, struct mt_head_task *t,
                        const char *why);

/* mt_head_tasks_actor_died - end actor call t FAILED because its actor
 * died (why, prefixed "actor died: " when it is not already). */
void mt_head_tasks_actor_died(struct mt_head_tasks *ts,
                              struct mt_head_task *t, const char *why);

/* mt_head_tasks_set_state - move t (not terminal) to SCHEDULED on node_id
 * (borrowed) or RUNNING, and tell its followers (actor calls). */
void mt_head_tasks_set_state(struct mt_head_tasks *ts, struct mt_head_task *t,
                             enum mt_head_task_state state,
                             const char *node_id);

/* mt_head_tasks_cancel - a user's cancel: a pending or waiting task ends
 * CANCELLED at once; a placed one is stopped on its worker (SIGTERM,
 * SIGKILL with force) and ends CANCELLED when the worker reports.
 * Terminal tasks are left alone. */
void mt_head_tasks_cancel(struct mt_head_tasks *ts, struct mt_head_task *t,
                          bool force);

/* mt_head_tasks_stop - the same for reason (borrowed), e.g. its group was
 * removed: the reason becomes its error and its process is killed. */
void mt_head_tasks_stop(struct mt_head_tasks *ts, struct mt_head_task *t,
                        const char *reason);

/* mt_head_tasks_kill - SIGKILL t's process on its worker; t is not marked
 * cancelled (its end is a system failure: an actor restarts). */
void mt_head_tasks_kill(struct mt_head_tasks *ts, struct mt_head_task *t);

/* mt_head_tasks_node_lost - node_id died: retry or fail each task placed
 * or running there. */
void mt_head_tasks_node_lost(struct mt_head_tasks *ts, const char *node_id);

/* mt_head_tasks_node_back - node_id registered or reported again after it
 * was suspected: hand it again the tasks whose hand-over never arrived. */
void mt_head_tasks_node_back(struct mt_head_tasks *ts, const char *node_id);

/*
 * mt_head_tasks_resume - carry on with task t restored from storage
 * (persist.h), while the scheduler is held (recover.h): a task waiting
 * for arguments or pending is queued again; a placed one (SCHEDULED,
 * RUNNING) charges its stored grant on its node again (mt_sched_adopt)
 * and stays placed until its node says what it holds; one that cannot
 * (its node or room is gone) is lost (mt_head_tasks_lost). A call to an
 * actor through the head is not resumed: it fails as its actor died
 * (calls are never retried). A task pushed to a lease is left as it is:
 * its worker's report or its driver settles it.
 */
void mt_head_tasks_resume(struct mt_head_tasks *ts, struct mt_head_task *t);

/*
 * mt_head_tasks_lost - placed task t is not where the head placed it
 * (its node does not hold it after a head restart): queued again at the
 * same attempt when it never_ran (its hand-over never arrived), else
 * retried as after a node loss, with what as the reason.
 */
void mt_head_tasks_lost(struct mt_head_tasks *ts, struct mt_head_task *t,
                        bool never_ran, const char *what);

/*
 * mt_head_tasks_apply - apply a worker's report about one of its tasks.
 * Reports of another attempt or node, or about ended tasks, are ignored.
 * RET the task when the report was applied, else NULL
 */
struct mt_head_task *mt_head_tasks_apply(struct mt_head_tasks *ts,
                                         const char *node_id,
                                         const struct mt_task_update *u);

#endif /* MT_HEAD_TASKS_H */
