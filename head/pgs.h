/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pgs.h -- placement groups on the head: what users asked for (a plain C
 * struct mt_pg_def), what they see (id, name, state, why it waits) and the
 * scheduler's reservations behind it.
 *
 *   create --all bundles fit--> CREATED --a holder died--> RESCHEDULING
 *      \--no room--> PENDING (error says "infeasible" when no set of
 *                    live nodes could ever hold it) --room--> CREATED
 *   any --remove--> REMOVED (its running tasks are stopped by tasks.c)
 *
 * The scheduler library reserves bundles atomically (all or none) and
 * reschedules the bundles of a dead node; a TPU slice group (pod type
 * instead of bundles) reserves every host of whole slices. Services that
 * care when a group is created or removed (gangs, tasks, the rpc adapter's
 * waiters) register a struct mt_head_pg_listener.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_PGS_H
#define MT_HEAD_PGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "head/scheduling.h"

/* Values match proto PlacementGroupState. */
enum mt_head_pg_state {
    MT_HEAD_PG_PENDING = 1,
    MT_HEAD_PG_CREATED = 2,
    MT_HEAD_PG_RESCHEDULING = 3,
    MT_HEAD_PG_REMOVED = 4,
};

struct mt_pg_waiter; /* a WaitPlacementGroup call (rpc_pgs.c) */

/* A placement group as users see it. Guarded by: loop thread. */
struct mt_head_pg {
    uint64_t num;                /* the scheduler's group id */
    char id[17];                 /* num as an id (common/ids.h) */
    struct mt_pg_def def;        /* as requested (owned) */
    uint32_t nbundles;           /* bundles, or hosts of a slice group */
    enum mt_head_pg_state state;
    char *error;                 /* why it waits; NULL when none */
    int64_t create_ms;
    struct mt_pg_waiter *waiters; /* rpc_pgs.c */
};

/* A group was placed or removed (changed: pg->state says which), or
 * added (added: may be NULL; pg may be PENDING or already CREATED). */
struct mt_head_pg_listener {
    void (*changed)(void *arg, struct mt_head_pg *pg);
    void (*added)(void *arg, struct mt_head_pg *pg);
};

struct mt_head_pgs;

/*
 * mt_head_pgs_create - the group table over hs (borrowed; must outlive
 * it), which it registers with for decisions. first_num: the first id.
 */
struct mt_head_pgs *mt_head_pgs_create(struct mt_head_sched *hs,
                                       uint64_t first_num);

/* mt_head_pgs_destroy - free every group (their waiters answered). */
void mt_head_pgs_destroy(struct mt_head_pgs *pgs);

/* mt_head_pgs_listen - one more follower (l borrowed; static). */
void mt_head_pgs_listen(struct mt_head_pgs *pgs,
                        const struct mt_head_pg_listener *l, void *arg);

/* Lookups: by hex id, by number; NULL when unknown. */
struct mt_head_pg *mt_head_pg_find(struct mt_head_pgs *pgs, const char *id);
struct mt_head_pg *mt_head_pg_find_num(struct mt_head_pgs *pgs, uint64_t num);

/* mt_head_pgs_count / mt_head_pgs_at - every group, oldest first. */
size_t mt_head_pgs_count(const struct mt_head_pgs *pgs);
struct mt_head_pg *mt_head_pgs_at(const struct mt_head_pgs *pgs, size_t i);

/*
 * mt_head_pg_create - create a group from def: bundles, or a TPU slice
 * group when def->tpu_pod_type is set (per_host, may be NULL, is added to
 * each slice host's bundle). It may be PENDING.
 *
 * IN  def   taken (moved into the group; *def is zeroed), also on failure
 * OUT why, err  when refused: the reason (static) and -MT_E*
 * RET the group, or NULL
 */
struct mt_head_pg *mt_head_pg_create(struct mt_head_pgs *pgs,
                                     struct mt_pg_def *def,
                                     const struct mt_res_set *per_host,
                                     const char **why, int *err);

/* Where a placed bundle is (persist.h): its node and reserved devices. */
struct mt_head_pg_bundle {
    const char *node_id;
    uint32_t gpus;               /* device index bits */
    uint32_t tpu_chips;          /* chip index bits */
};

/*
 * mt_head_pg_restore - a group a head before this one had (persist.h),
 * under its number: its bundles reserved again where they were (b[i] for
 * bundle i, n of them; mt_sched_pg_adopt_at) when those nodes are here
 * and can hold them, else placed anew (it may be PENDING). A TPU slice
 * group goes back onto the slices named (slice_names, one per slice;
 * mt_sched_slice_adopt) when given and free, else is placed anew.
 * IN  def          taken, as for mt_head_pg_create
 * IN  per_host     slice groups: as for mt_head_pg_create (may be NULL)
 * IN  slice_names  borrowed; NULL: not known
 * RET the group, or NULL with why
 */
struct mt_head_pg *mt_head_pg_restore(struct mt_head_pgs *pgs, uint64_t num,
                                      struct mt_pg_def *def, int64_t create_ms,
                                      const struct mt_head_pg_bundle *b,
                                      size_t n,
                                      const struct mt_res_set *per_host,
                                      const char *const *slice_names,
                                      const char **why);

/*
 * mt_head_pg_bundles - where each bundle of a placed group is.
 * OUT out  owned array (free it; node ids are borrowed from the node
 *          table), filled when the return is nonzero
 * RET pg->nbundles, or 0 when a bundle is not placed
 */
size_t mt_head_pg_bundles(struct mt_head_pgs *pgs, const struct mt_head_pg *pg,
                          struct mt_head_pg_bundle **out);

/* mt_head_pgs_next / _set_next - the next group number (it only grows). */
uint64_t mt_head_pgs_next(const struct mt_head_pgs *pgs);
void mt_head_pgs_set_next(struct mt_head_pgs *pgs, uint64_t next);

/* mt_head_pg_remove - free its reservations; REMOVED; listeners told. */
void mt_head_pg_remove(struct mt_head_pgs *pgs, struct mt_head_pg *pg);

/* mt_head_pg_refresh - update pg->state from the scheduler (node deaths
 * move groups). */
void mt_head_pg_refresh(struct mt_head_pgs *pgs, struct mt_head_pg *pg);

#endif /* MT_HEAD_PGS_H */
