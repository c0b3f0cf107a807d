/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tagmap.h -- a map from a 64-bit tag to an item (the client watch finds
 * the task an event names by its tag): open addressing with linear
 * probing, grown at half full, deletion by backward shift.
 *
 * Pure: no locks, no I/O; plain malloc, -MT_ENOMEM on failure.
 * THREAD: not thread safe (the client's loop thread owns its map).
 */
#ifndef MT_SDK_TAGMAP_H
#define MT_SDK_TAGMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt__tag_slot {
    uint64_t tag;
    void *item;                /* NULL: empty */
};

/* Zeroed = empty. */
struct mt__tagmap {
    struct mt__tag_slot *slots;
    size_t cap;                /* a power of two, or 0 */
    size_t n;
};

/* mt__tagmap_put - add item (not NULL) under tag, which must not be in
 * the map. RET 0, -MT_ENOMEM. */
int mt__tagmap_put(struct mt__tagmap *m, uint64_t tag, void *item);

/* mt__tagmap_find - the slot holding tag, or SIZE_MAX. */
size_t mt__tagmap_find(const struct mt__tagmap *m, uint64_t tag);

/* mt__tagmap_del - empty slot j (from _find); later slots may move into
 * it. */
void mt__tagmap_del(struct mt__tagmap *m, size_t j);

/* mt__tagmap_take - remove tag if it maps to item. RET true when it did. */
bool mt__tagmap_take(struct mt__tagmap *m, uint64_t tag, const void *item);

/* mt__tagmap_release - free the slots (not the items); m is empty after. */
void mt__tagmap_release(struct mt__tagmap *m);

#endif /* MT_SDK_TAGMAP_H */
