/* SPDX-License-Identifier: Apache-2.0 */
/*
 * obj_table.h -- the head's object directory as a table: for every object
 * the cluster
 * knows, its size, the nodes whose stores hold a copy, a small value kept
 * inline, its owner, its reference count and the tasks waiting for it.
 * The rules below are applied by objects.c; this file is the table.
 *
 *   put (RegisterObjects) ---------------------------> READY (refs 1)
 *   function task submitted --> PENDING --result--> READY (inline or copies)
 *                                  |  \--task FAILED/CANCELLED--> FAILED
 *   READY --every node holding it died (not inline)--> LOST
 *     \--... and its task can run again (lineage)--> PENDING (rebuilt)
 *
 * References: one per driver handle (a put, a task's result while the
 * submitter holds it), one per argument of a task that has not ended, and
 * one per argument of a finished task kept to rebuild its result (lineage:
 * counted in lineage_refs too).
 * An object whose count is 0 is freed as soon as it is not PENDING (a
 * PENDING one waits for its task to end); objects.c then asks every
 * holder to delete its copy.
 *
 * Plain C: no protobuf here (rpc_objects.c adapts).
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_OBJ_TABLE_H
#define MT_HEAD_OBJ_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "objstore/idmap.h"

/* Values match proto ObjectState. */
enum mt_obj_state {
    MT_OBJ_PENDING = 1,
    MT_OBJ_READY = 2,
    MT_OBJ_LOST = 3,
    MT_OBJ_FAILED = 4,
};

#define MT_OBJ_INLINE_MAX (100u << 10) /* results up to this travel inline */

struct mt_obj_get;             /* a parked GetObject call (rpc_objects.c) */

/* One object. Guarded by: loop thread. */
struct mt_obj {
    struct mt_idmap_node node; /* keyed by the object id */
    enum mt_obj_state state;
    uint64_t size;
    char **nodes;              /* node ids holding a copy, oldest first */
    size_t n_nodes, cap_nodes;
    bool is_inline;
    uint8_t *data;             /* is_inline: the value (owned) */
    char *owner;               /* "task <id>" / "put <node id>" */
    char *error;               /* LOST / FAILED: why */
    uint32_t refs;
    uint32_t lineage_refs;     /* of refs: held only to rebuild others */
    uint64_t task_num;         /* the task that can rebuild it, 0: none */
    uint64_t *waiters;         /* tasks (numbers) waiting for it */
    size_t n_waiters, cap_waiters;
    struct mt_obj_get *gets;   /* GetObject calls waiting while PENDING */
    uint64_t seq;              /* creation order, for listings */
    bool dirty;                /* queued for the next storage write
                                  (persist.h) */
    bool awaited;              /* PENDING before its producer was known:
                                  the result of a task pushed to a lease,
                                  named before its worker reported it; freed
                                  when nobody waits for it any more */
};

struct mt_obj_table {
    struct mt_idmap map;
    uint64_t next_seq;
    /* Told of each object added or changed (gone false) and freed (gone
     * true), for persist.h; may be NULL. */
    void (*touched)(void *arg, struct mt_obj *o, bool gone);
    void *touched_arg;
};

/* mt_obj_touch - o changed (objects.c calls it after each change). */
static inline void mt_obj_touch(struct mt_obj_table *ot, struct mt_obj *o)
{
    if (ot->touched)
        ot->touched(ot->touched_arg, o, false);
}

void mt_obj_table_init(struct mt_obj_table *ot);
/* Free every object (their gets must have been answered). */
void mt_obj_table_release(struct mt_obj_table *ot);

/* mt_obj_find - the object with id, or NULL. */
struct mt_obj *mt_obj_find(const struct mt_obj_table *ot,
                           const mt_object_id *id);

/*
 * mt_obj_new - add an object (id must be absent).
 * IN  owner  borrowed, copied
 * RET the object, owned by the table
 */
struct mt_obj *mt_obj_new(struct mt_obj_table *ot, const mt_object_id *id,
                          enum mt_obj_state state, const char *owner,
                          uint32_t refs);

/* mt_obj_free - unlink and free o (its gets must be answered first). */
void mt_obj_free(struct mt_obj_table *ot, struct mt_obj *o);

/* mt_obj_add_node - record a copy on node_id (no duplicates). */
void mt_obj_add_node(struct mt_obj *o, const char *node_id);

/* mt_obj_has_node - o has a copy on node_id. */
bool mt_obj_has_node(const struct mt_obj *o, const char *node_id);

/* mt_obj_drop_node - forget the copy on node_id. RET true if it was there. */
bool mt_obj_drop_node(struct mt_obj *o, const char *node_id);

/* mt_obj_set_inline - keep a copy of the value; size becomes len. */
void mt_obj_set_inline(struct mt_obj *o, const void *data, size_t len);

/* mt_obj_set_error - state and why (borrowed, copied). */
void mt_obj_set_error(struct mt_obj *o, enum mt_obj_state state,
                      const char *why);

/* mt_obj_add_waiter - task num waits for o to become READY. */
void mt_obj_add_waiter(struct mt_obj *o, uint64_t num);

/* mt_obj_freeable - no reference left and not waiting for its task. */
bool mt_obj_freeable(const struct mt_obj *o);

/* mt_obj_state_name - "PENDING", "READY", ... */
const char *mt_obj_state_name(enum mt_obj_state s);

#endif /* MT_HEAD_OBJ_TABLE_H */
