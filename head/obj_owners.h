/* SPDX-License-Identifier: Apache-2.0 */
/*
 * obj_owners.h -- the driver sessions that hold object references, as a
 * table: for each open session (a client's LeaseActorOwner owner_id), how
 * many references it holds on each object. The rules are objects.c's: a
 * session's references count in the objects' totals too, and when the
 * session ends (its client went away, releasing or not) they are dropped.
 *
 * Plain C: no protobuf, no rules here.
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_OBJ_OWNERS_H
#define MT_HEAD_OBJ_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "objstore/idmap.h"

/* References one session holds on one object. */
struct mt_obj_held {
    struct mt_idmap_node node;  /* keyed by the object id */
    uint32_t count;             /* > 0 */
};

/* One open session. Guarded by: loop thread. */
struct mt_obj_owner {
    char *id;                   /* its owner_id (owned) */
    struct mt_idmap refs;       /* struct mt_obj_held */
    struct mt_obj_owner *next;
};

/* The open sessions (few: one per connected driver). */
struct mt_obj_owners {
    struct mt_obj_owner *list;
    size_t n;
};

void mt_obj_owners_init(struct mt_obj_owners *t);
/* Free every session and what it holds (the objects are not touched). */
void mt_obj_owners_release(struct mt_obj_owners *t);

/* mt_obj_owners_find - the open session id, or NULL. */
struct mt_obj_owner *mt_obj_owners_find(const struct mt_obj_owners *t,
                                        const char *id);

/* mt_obj_owners_open - the open session id, added (holding nothing) when
 * absent. IN id borrowed, copied. */
struct mt_obj_owner *mt_obj_owners_open(struct mt_obj_owners *t,
                                        const char *id);

/* mt_obj_owners_take - unlink session id. RET it (free it with
 * mt_obj_owner_free) or NULL when it is not open. */
struct mt_obj_owner *mt_obj_owners_take(struct mt_obj_owners *t,
                                        const char *id);

/* mt_obj_owner_free - free a taken session; NULL is fine. */
void mt_obj_owner_free(struct mt_obj_owner *o);

/* mt_obj_owner_ref - o holds one more reference on id. */
void mt_obj_owner_ref(struct mt_obj_owner *o, const mt_object_id *id);

/* mt_obj_owner_unref - drop one of o's references on id. RET false when
 * o holds none. */
bool mt_obj_owner_unref(struct mt_obj_owner *o, const mt_object_id *id);

/* mt_obj_owner_count - o's references on id (0: none). */
uint32_t mt_obj_owner_count(const struct mt_obj_owner *o,
                            const mt_object_id *id);

#endif /* MT_HEAD_OBJ_OWNERS_H */
