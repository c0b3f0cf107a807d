/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.h -- the rules of the head's object directory (the table is
 * obj_table.h): a function task's result object, arguments passed by
 * reference (a task waits in WAITING_FOR_ARGS until each is READY),
 * references held by tasks until they end, holders told to delete their
 * copies when the last reference goes, copies dropped when a node dies.
 *
 * DESIGN: the head never moves object bytes except small inline values
 * (<= MT_OBJ_INLINE_MAX). A task handed to a worker carries, per reference
 * argument, the inline value or the addresses of the workers holding it
 * (mt_head_objects_locate); the worker pulls what it lacks. The head
 * records the destination of such a pull (and of a GetObject with
 * fetch_to) as a copy at once, so that the copy is deleted with the
 * others; a pull that failed leaves a stale entry that fetchers skip.
 *
 * Driver references belong to the driver's session (obj_owners.h) when
 * it names one: a put registered with an owner_id, a held task result
 * whose task carries one. When the session ends (the client's last
 * LeaseActorOwner stream broke or closed) its references are dropped, so
 * a driver that exits or dies without releasing leaks nothing; objects
 * still referenced by tasks or other sessions stay.
 *
 * Objects follows tasks (mt_head_objects_task_listener: a task's end
 * settles its result and drops its references) and tells tasks when their
 * arguments are ready or failed through the callbacks of
 * mt_head_objects_on_args; it never calls the task service itself.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_OBJECTS_H
#define MT_HEAD_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "head/node_table.h"
#include "head/obj_owners.h"
#include "head/obj_table.h"
#include "head/task_table.h"
#include "head/workers.h"

#define MT_OBJ_DEP_FAILED "dependency failed: " /* errors of dependents */

struct mt_head_objects;

/* Tasks waiting for arguments: all READY (ready) or one failed (why). */
typedef void (*mt_head_args_fn)(void *arg, struct mt_head_task *t,
                                const char *why);

/* An object left PENDING (READY or FAILED): answer who waits for it. */
typedef void (*mt_head_settled_fn)(void *arg, struct mt_obj *o);

/*
 * Run finished task t again (its next attempt) to rebuild its lost result.
 * t->deps is NULL on entry; the callee admits t's arguments again. RET 0
 * (t is queued, waiting or already ended), -1 with why filled (t cannot
 * run again; nothing changed).
 */
typedef int (*mt_head_rerun_fn)(void *arg, struct mt_head_task *t, char *why,
                                size_t len);

/*
 * mt_head_objects_create - the directory rules over an empty table.
 * IN  nodes, workers, tasks  borrowed; must outlive it
 */
struct mt_head_objects *mt_head_objects_create(struct mt_node_table *nodes,
                                               struct mt_head_workers *workers,
                                               struct mt_task_table *tasks);
void mt_head_objects_destroy(struct mt_head_objects *objs);

/* mt_head_objects_table - the table itself (borrowed). */
struct mt_obj_table *mt_head_objects_table(struct mt_head_objects *objs);

/* mt_head_objects_owners - the open driver sessions (borrowed; persist.c
 * restores them). */
struct mt_obj_owners *mt_head_objects_owners(struct mt_head_objects *objs);

/*
 * mt_head_objects_resume - restored task t (persist.h) holds references on
 * t->deps already (they were stored with the objects): count the ones not
 * READY yet and wait for them, as admission would.
 * RET 0 (all READY), 1 (waiting: args_fn says when), 2 (one failed or is
 * gone: why filled)
 */
int mt_head_objects_resume(struct mt_head_objects *objs,
                           struct mt_head_task *t, char *why, size_t len);

/* Who hears about argument readiness (ready: why NULL) and settling. */
void mt_head_objects_on_args(struct mt_head_objects *objs,
                             mt_head_args_fn fn, void *arg);
void mt_head_objects_on_settled(struct mt_head_objects *objs,
                                mt_head_settled_fn fn, void *arg);

/* Follows tasks: register on the task service (tasks.h) with objs. */
extern const struct mt_task_listener mt_head_objects_task_listener;

/*
 * mt_head_objects_awaited - the object with id; when unknown and id is the
 * result of a task pushed to a lease (its driver named it: the task may
 * not be reported yet), a PENDING placeholder that its report settles
 * (docs/architecture.md, "Leases"). RET NULL for other unknown ids.
 */
struct mt_obj *mt_head_objects_awaited(struct mt_head_objects *objs,
                                       const mt_object_id *id);

/* ---- tasks --------------------------------------------------------------- */

/*
 * mt_head_objects_admit - t was added: create its result object (function
 * tasks; held by the submitter when def.hold_result: by its session when
 * def.owner_id names an open one, by nobody when it names one no longer
 * open, else until released), take a reference on
 * each object argument and count those not READY.
 * OUT why  the reason when the return is not 0 or 1
 * RET 0 (run it), 1 (WAITING_FOR_ARGS), 2 (fail the task: an argument
 *     failed or was lost), -MT_ENOENT (unknown object: refuse the call),
 *     -MT_EINVAL (refs on a task that takes none: refuse the call)
 */
int mt_head_objects_admit(struct mt_head_objects *objs,
                          struct mt_head_task *t, char *why, size_t len);

/*
 * mt_head_objects_locate - where each reference argument of t is, for a
 * run on dest (which is recorded as a holder of what it will pull).
 * OUT n  entries
 * RET owned array (free()), NULL when t takes no references
 */
struct mt_obj_loc *mt_head_objects_locate(struct mt_head_objects *objs,
                                          const struct mt_head_task *t,
                                          const struct mt_node *dest,
                                          size_t *n);

/* The live node holding t's biggest argument (by value), or NULL. */
const struct mt_node *mt_head_objects_biggest_holder(
    struct mt_head_objects *objs, const struct mt_head_task *t);

/* mt_head_objects_on_rerun - who runs a task again to rebuild a result. */
void mt_head_objects_on_rerun(struct mt_head_objects *objs,
                              mt_head_rerun_fn fn, void *arg);

/* node_id died: forget its copies; objects left without one are rebuilt
 * by running their task again while its retries allow (lineage, now if
 * something but lineage refers to them, else when a task needs them), or
 * else LOST with why. */
void mt_head_objects_node_down(struct mt_head_objects *objs,
                               const char *node_id);

/* ---- drivers ------------------------------------------------------------- */

/*
 * mt_head_objects_put - node_id holds a put of id (size bytes): a new READY
 * object with one reference, or one more reference on a known one. The
 * reference is session owner's (NULL or "": held until released).
 * RET 0, -MT_ECLOSED (owner is not an open session: its client is gone;
 *     nothing recorded)
 */
int mt_head_objects_put(struct mt_head_objects *objs, const char *node_id,
                        const mt_object_id *id, uint64_t size,
                        const char *owner);

/* mt_head_objects_release - drop one reference: session owner's own when
 * it holds one (owner NULL or "": none), else any. RET false if unknown
 * or unreferenced. */
bool mt_head_objects_release(struct mt_head_objects *objs,
                             const mt_object_id *id, const char *owner);

/* mt_head_objects_owner_open - session owner is open (idempotent). */
void mt_head_objects_owner_open(struct mt_head_objects *objs,
                                const char *owner);

/* mt_head_objects_owner_gone - session owner ended: drop every reference
 * it holds (freeing what nothing else holds) and forget it. Unknown is
 * fine. */
void mt_head_objects_owner_gone(struct mt_head_objects *objs,
                                const char *owner);

/* mt_head_objects_known - the directory has id. */
bool mt_head_objects_known(struct mt_head_objects *objs,
                           const mt_object_id *id);

/* mt_head_objects_maybe_free - free o if nothing refers to it or waits
 * for it (after a parked get went away). */
void mt_head_objects_maybe_free(struct mt_head_objects *objs,
                                struct mt_obj *o);

#endif /* MT_HEAD_OBJECTS_H */
