/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eviction.h -- eviction policies behind a const ops table (house style H13).
 *
 * The store tells the policy which objects are candidates (sealed, unpinned,
 * resident, and either evictable or spillable) and asks it for victims when
 * it needs space. The policy only CHOOSES; the store deletes or spills the
 * victims and then calls remove() for each (house style H12).
 *
 * Candidates come in two classes: MT_EVICT_DROP (evictable copies: freeing
 * costs nothing) and MT_EVICT_SPILL (primary copies: freeing means writing
 * them to disk). A policy should offer DROP candidates before SPILL ones.
 *
 * Each candidate has a `slot`, a pointer-sized cell owned by the store entry
 * in which the policy keeps its per-object handle, so neither side needs a
 * second hash table.
 *
 * THREAD every callback runs on the store's loop thread.
 */
#ifndef MT_EVICTION_H
#define MT_EVICTION_H

#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"

/* Candidate classes (add's cls). */
enum mt_evict_class {
    MT_EVICT_DROP = 0,  /* evictable copy: delete it */
    MT_EVICT_SPILL = 1, /* primary copy: spill it to disk */
};

struct mt_evict_ops {
    /* short name for logs and --help, e.g. "lru" */
    const char *name;

    /*
     * init - create the policy state.
     * OUT st    returns owned state, free with destroy()
     * RET 0 or a negative code
     */
    int (*init)(void **st);

    /* destroy - free the state and every handle still in it (NULL ok). */
    void (*destroy)(void *st);

    /*
     * add - id (of size bytes, class cls) became a candidate; it counts as
     * just used.
     * OUT slot  the policy stores its handle here
     * OWNERSHIP borrows id (the policy copies it)
     */
    void (*add)(void *st, const mt_object_id *id, uint64_t size,
                enum mt_evict_class cls, void **slot);

    /* remove - the candidate in *slot is no longer one; clears *slot. */
    void (*remove)(void *st, void **slot);

    /*
     * require_space - choose victims whose sizes add up to at least bytes,
     * or every candidate if they add up to less.
     *
     * OUT victims  returns owned array, free with free(); NULL when n is 0
     * OUT n        number of victims (0 when there is no candidate)
     * RET 0 or a negative code
     * NOTE victims stay candidates until the store calls remove()
     */
    int (*require_space)(void *st, uint64_t bytes, mt_object_id **victims,
                         size_t *n);
};

/*
 * Least recently used first, DROP candidates before SPILL ones: a
 * candidate's clock starts when it is added.
 */
extern const struct mt_evict_ops mt_evict_lru;

#endif /* MT_EVICTION_H */
