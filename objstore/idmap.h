/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmap.h -- intrusive hash map keyed by mt_object_id.
 *
 * Callers embed a struct mt_idmap_node in their own records (the store's
 * object table, a connection's pin counts, the client's location cache) and
 * recover the record with MT_CONTAINER_OF. The map never allocates records,
 * only its bucket array, which doubles when the load passes 1.
 *
 * THREAD not thread safe; the owner serializes access.
 */
#ifndef MT_IDMAP_H
#define MT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"

#define MT_CONTAINER_OF(ptr, type, field)                                      \
    ((type *)(void *)((char *)(ptr)-offsetof(type, field)))

/* One entry; embed it in the record. Fields are private to idmap.c. */
struct mt_idmap_node {
    mt_object_id id;            /* key; set before insert, never changed */
    uint64_t hash;              /* cached mt_object_id_hash(&id) */
    struct mt_idmap_node *next; /* bucket chain */
};

/* The map. Guarded by: its owner. */
struct mt_idmap {
    struct mt_idmap_node **buckets; /* nbuckets chains */
    size_t nbuckets;                /* power of two */
    size_t count;                   /* nodes linked */
};

/* ---- lifecycle ---- */

/* mt_idmap_init - empty map. RET 0 (aborts on OOM, H7). */
int mt_idmap_init(struct mt_idmap *m);

/* mt_idmap_release - free the buckets; the nodes are the caller's. */
void mt_idmap_release(struct mt_idmap *m);

/* ---- access ---- */

/*
 * mt_idmap_find - the node with this id, or NULL.
 *
 * OWNERSHIP borrows id
 */
struct mt_idmap_node *mt_idmap_find(const struct mt_idmap *m,
                                    const mt_object_id *id);

/*
 * mt_idmap_insert - link n, whose id is set and not present yet.
 *
 * OWNERSHIP the map borrows n until mt_idmap_remove()
 */
void mt_idmap_insert(struct mt_idmap *m, struct mt_idmap_node *n);

/* mt_idmap_remove - unlink n (which must be linked). */
void mt_idmap_remove(struct mt_idmap *m, struct mt_idmap_node *n);

/*
 * mt_idmap_first / mt_idmap_next - visit every node once.
 *
 * NOTE the visited node may be removed during the walk if next is fetched
 *      first: for (n = first; n; n = nx) { nx = next(m, n); ... }
 */
struct mt_idmap_node *mt_idmap_first(const struct mt_idmap *m);
struct mt_idmap_node *mt_idmap_next(const struct mt_idmap *m,
                                    const struct mt_idmap_node *n);

#endif /* MT_IDMAP_H */
