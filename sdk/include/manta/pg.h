/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/pg.h -- placement groups: reserve bundles of resources on the
 * cluster atomically (all bundles or none), then run tasks inside them.
 *
 * A group is a list of bundles (each a set of resource amounts) and a
 * strategy saying how bundles may share nodes. The head reserves every
 * bundle or none; a group that cannot fit yet stays PENDING (and one that
 * can never fit says "infeasible"), and a group whose node dies is placed
 * again (RESCHEDULING). Tasks opt in with mt_task_opts_set_placement_group()
 * and then draw on the bundle's reservation instead of the node's free
 * resources. Removing a group stops the tasks running in it and frees
 * everything.
 *
 *     mt_pg_opts_t *po;
 *     mt_pg_t *pg;
 *     const char *cpu[] = {"CPU"};
 *     const double one[] = {1.0};
 *
 *     mt_pg_opts_create(&po);
 *     mt_pg_opts_set_strategy(po, MT_PG_STRICT_SPREAD);
 *     for (int i = 0; i < 3; i++)
 *         mt_pg_opts_add_bundle(po, cpu, one, 1);
 *     mt_pg_create(client, po, &pg);
 *     mt_pg_opts_destroy(po);
 *     if (mt_pg_wait(client, pg, 10000, NULL) == 0) {
 *         mt_task_opts_set_placement_group(task_opts, pg, 2);
 *         ... submit tasks, they run on bundle 2's node ...
 *     }
 *     mt_pg_remove(client, pg);
 *     mt_pg_release(pg);
 *
 * THREAD: every function is thread-safe, except that one mt_pg_opts_t
 * must not be changed by two threads at once.
 */
#ifndef MANTA_PG_H
#define MANTA_PG_H

#include <stddef.h>
#include <stdint.h>

#include "manta/client.h"
#include "manta/task.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A placement group this client created or looked up. Opaque. */
typedef struct mt_pg mt_pg_t;

/* Options for a new group. Opaque: build with the setters below. */
typedef struct mt_pg_opts mt_pg_opts_t;

/* How bundles may share nodes. Values are stable. */
typedef enum mt_pg_strategy {
    MT_PG_PACK = 0,          /* as few nodes as possible (soft) */
    MT_PG_SPREAD = 1,        /* as many nodes as possible (soft) */
    MT_PG_STRICT_PACK = 2,   /* every bundle on one node */
    MT_PG_STRICT_SPREAD = 3, /* each bundle on its own node */
} mt_pg_strategy;

/* Where a group is in its life. Values are stable. */
typedef enum mt_pg_state {
    MT_PG_STATE_UNKNOWN = 0,
    MT_PG_STATE_PENDING = 1,      /* waiting for room (or infeasible) */
    MT_PG_STATE_CREATED = 2,      /* every bundle reserved */
    MT_PG_STATE_RESCHEDULING = 3, /* a node holding bundles died */
    MT_PG_STATE_REMOVED = 4,
} mt_pg_state;

#define MT_PG_MAX_BUNDLES 1024  /* bundles in one group */
#define MT_PG_MAX_RESOURCES 8   /* kinds of resources in one bundle */

/*
 * mt_pg_opts_create - options for a group: no bundles yet, strategy
 * MT_PG_PACK, no name.
 * OUT out  returns owned options, free with mt_pg_opts_destroy()
 * RET 0, -MT_ENOMEM
 */
MT_EXTERN int mt_pg_opts_create(mt_pg_opts_t **out);

/* mt_pg_opts_destroy - free options. OWNERSHIP invalidates o; NULL ok. */
MT_EXTERN void mt_pg_opts_destroy(mt_pg_opts_t *o);

/* mt_pg_opts_set_strategy - MT_PG_*. RET 0, -MT_EINVAL. */
MT_EXTERN int mt_pg_opts_set_strategy(mt_pg_opts_t *o, mt_pg_strategy s);

/* mt_pg_opts_set_name - a name shown by `manta list placement-groups`
 * (copied; NULL clears). RET 0, -MT_EINVAL (over 4096 bytes), -MT_ENOMEM. */
MT_EXTERN int mt_pg_opts_set_name(mt_pg_opts_t *o, const char *name);

/*
 * mt_pg_opts_add_bundle - append a bundle of n resource amounts, e.g.
 * {"CPU", "GPU"} and {4, 1}. Names and amounts follow the rules of
 * mt_task_opts_set_resource(); amounts must be above 0.
 * IN  names, amounts  n entries (borrowed; copied), 1..MT_PG_MAX_RESOURCES
 * RET the new bundle's index (0, 1, ...), -MT_EINVAL, -MT_ERANGE (more
 *     than MT_PG_MAX_BUNDLES bundles), -MT_ENOMEM
 */
MT_EXTERN int mt_pg_opts_add_bundle(mt_pg_opts_t *o, const char *const *names,
                                    const double *amounts, size_t n);

/*
 * mt_pg_opts_set_tpu_slice - make the group a TPU slice group instead of a
 * list of bundles: every host of `slices` whole, intact slices of this pod
 * type ("v4-16": 2 hosts x 4 chips), one bundle per host holding all its
 * chips, bundle s * hosts + w on worker w of slice s. Two groups never share
 * a slice; a group waits PENDING, holding nothing, until whole slices are
 * free. Add no bundles to such options. Its bundle count is known after
 * the first successful mt_pg_wait(). To run one program over the slice
 * with the TPU environment set for each process, see manta/gang.h.
 * IN  pod_type  e.g. "v4-16", "v6e-16", "tpu7x-8" (copied)
 * IN  topology  NULL or "": the pod type's default, else e.g. "2x2x2"
 * IN  slices    1..64
 * RET 0, -MT_EINVAL
 */
MT_EXTERN int mt_pg_opts_set_tpu_slice(mt_pg_opts_t *o, const char *pod_type,
                                       const char *topology, unsigned slices);

/*
 * mt_pg_create - ask the head to reserve the group. Returns as soon as the
 * head has recorded it; use mt_pg_wait() to know when it is reserved.
 * IN  opts  at least one bundle (borrowed)
 * OUT out   returns owned handle, free with mt_pg_release()
 * RET 0, -MT_EINVAL (no bundles, or the head refused the spec),
 *     -MT_EUNAVAIL / -MT_ETIMEDOUT (head not answering), -MT_ECLOSED,
 *     -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_pg_create(mt_client_t *c, const mt_pg_opts_t *opts,
                           mt_pg_t **out);

/*
 * mt_pg_wait - wait until every bundle of the group is reserved. The first
 * wait on a group that mt_pg_create() saw reserved at once answers from
 * that reply, without a call to the head.
 * IN  timeout_ms  0: just look; < 0: wait forever
 * OUT state       NULL, or the group's state when the call returned
 * RET 0 (CREATED), -MT_ETIMEDOUT (still pending: mt_client_last_error()
 *     says why, e.g. "infeasible: ..."), -MT_ESTATE (removed), -MT_ENOENT
 *     (the head does not know it), -MT_EUNAVAIL, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_pg_wait(mt_client_t *c, mt_pg_t *pg, int timeout_ms,
                         mt_pg_state *state);

/*
 * mt_pg_bundle_node - the node id holding bundle i, as of the last
 * successful mt_pg_wait() on this handle.
 * RET borrowed, valid until the next mt_pg_wait() or mt_pg_release() on pg;
 *     "" when unknown (not waited for, or the bundle is not placed); NULL
 *     when i is out of range
 * THREAD not concurrently with mt_pg_wait() on the same handle
 */
MT_EXTERN const char *mt_pg_bundle_node(const mt_pg_t *pg, size_t i);

/* mt_pg_num_bundles - the group's bundle count; 0 until known (a slice
 * group, or one named by mt_pg_from_id, learns it at its first wait). */
MT_EXTERN size_t mt_pg_num_bundles(const mt_pg_t *pg);

/*
 * mt_pg_note - the head's note on the group at the last mt_pg_wait(): why
 * it is not created yet (e.g. "infeasible: ..."), "" when none.
 * RET borrowed, valid until the next mt_pg_wait() or mt_pg_release() on pg
 * THREAD not concurrently with mt_pg_wait() on the same handle
 */
MT_EXTERN const char *mt_pg_note(const mt_pg_t *pg);

/*
 * mt_pg_from_id - a handle on an existing group, by the id the head gave
 * it (`manta placement-group create` prints it), for mt_pg_wait(),
 * mt_pg_remove() and mt_task_opts_set_placement_group(). Nothing is asked
 * of the head: an unknown id fails at the first call (-MT_ENOENT).
 * OUT out  returns owned handle, free with mt_pg_release()
 * RET 0, -MT_EINVAL (also: another kind's id, e.g. a task's; the reason
 *     is under mt_client_last_error(NULL)), -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_pg_from_id(const char *id, mt_pg_t **out);

/* mt_pg_state_name - "PENDING", "CREATED", ... RET a static string. */
MT_EXTERN const char *mt_pg_state_name(mt_pg_state s);

/*
 * mt_pg_remove - give the group back: its tasks are stopped and its
 * reservations freed. Removing a removed group is not an error.
 * RET 0, -MT_ENOENT (unknown to the head), -MT_EUNAVAIL, -MT_ETIMEDOUT,
 *     -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_pg_remove(mt_client_t *c, mt_pg_t *pg);

/* mt_pg_id - the head's id of the group. RET borrowed, valid until
 * mt_pg_release(pg). */
MT_EXTERN const char *mt_pg_id(const mt_pg_t *pg);

/*
 * mt_pg_release - free the handle. The group itself stays until
 * mt_pg_remove() (it outlives the client).
 * OWNERSHIP invalidates pg; NULL ok.
 */
MT_EXTERN void mt_pg_release(mt_pg_t *pg);

/*
 * mt_task_opts_set_placement_group - run the task inside group pg, in
 * bundle `bundle` (-1: any bundle with room). NULL pg clears it. The task's
 * resources come out of the bundle's reservation; a task asking for more
 * than its bundle holds stays pending.
 * IN  pg  borrowed; its id is copied
 * RET 0, -MT_EINVAL (bundle below -1, or past the group's bundles when
 *     their count is known)
 */
MT_EXTERN int mt_task_opts_set_placement_group(mt_task_opts_t *o,
                                               const mt_pg_t *pg, int bundle);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_PG_H */
