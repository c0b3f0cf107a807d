/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leases.h -- the head's side of leases (docs/architecture.md, "Leases:
 * the direct task path"). A lease is a task of kind LEASE that tasks.c
 * schedules and hands over like any other; this service does the rest:
 *
 *   - files the tasks drivers pushed to leases, from their workers'
 *     reports (RUNNING for a task that runs long, then its final state):
 *     each becomes a function task of the lease's owner in the task
 *     table, ended as reported, so its result is in the object
 *     directory and `manta list tasks` and the counts show it. Nothing is
 *     scheduled or dispatched for it. A retryable failure (its executor
 *     died below max_retries) is not final: the record waits, PENDING, for
 *     the attempt its driver sends next;
 *   - revokes leases held longer than MT_LEASE_HOLD_MS while other work
 *     of at least their priority waits (not the holder's own requests for
 *     more leases), so priorities and fairness hold: the worker lets the
 *     running task finish and hands back the rest;
 *   - ends the leases of a session that has gone.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_LEASES_H
#define MT_HEAD_LEASES_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "head/tasks.h"

#define MT_LEASE_HOLD_MS 1000   /* held this long, a lease may be revoked */
#define MT_LEASE_CHECK_MS 250   /* how often waiting demand is looked at */

struct mt_head_leases;
struct mt_head_objects;

/* One pushed task's report (pointers borrowed for the call). */
struct mt_leased_update {
    struct mt_task_update u;    /* task_id, attempt, state, result, error */
    const char *lease_id;
    const char *name;
    const char *function;
    bool hold_result;
    uint32_t max_retries;
    /* FINISHED, stored, retries: its arguments (values) and code path, so
     * the head can run it again when its result is lost; else none. */
    const struct mt_task_arg *args;
    size_t nargs;
    const char *const *code_path;
    size_t n_code_path;
};

/*
 * mt_head_leases_create - the lease service over ts and objs (borrowed;
 * they outlive it), checking for revocations on loop.
 */
struct mt_head_leases *mt_head_leases_create(uv_loop_t *loop,
                                             struct mt_head_tasks *ts,
                                             struct mt_head_objects *objs);

/* Shutdown: stop the timer; free after done(arg) ran. */
void mt_head_leases_close(struct mt_head_leases *ls, void (*done)(void *),
                          void *arg);
void mt_head_leases_destroy(struct mt_head_leases *ls);

/*
 * mt_head_leases_file - file a pushed task's RUNNING or final state reported by
 * node_id (its credential checked by the caller). Reports naming a lease
 * that is not a LEASE held on node_id, ids the head counts itself, tasks
 * already ended, or an older attempt are ignored.
 * RET the task when filed, else NULL
 */
struct mt_head_task *mt_head_leases_file(struct mt_head_leases *ls,
                                         const char *node_id,
                                         const struct mt_leased_update *lu);

/* mt_head_leases_owner_gone - session owner (borrowed) ended: its leases
 * and lease requests are cancelled. */
void mt_head_leases_owner_gone(struct mt_head_leases *ls, const char *owner);

#endif /* MT_HEAD_LEASES_H */
