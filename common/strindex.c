/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strindex.c -- an index by string key over a caller's array (see
 * strindex.h): open addressing, linear probing, backward-shift removal.
 */
#include "common/strindex.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/hash.h"

void mt_strindex_init(struct mt_strindex *ix, mt_strindex_key_fn key_of)
{
    memset(ix, 0, sizeof(*ix));
    ix->key_of = key_of;
}

void mt_strindex_release(struct mt_strindex *ix)
{
    free(ix->slots);
    mt_strindex_init(ix, ix->key_of);
}

static size_t home_of(const struct mt_strindex *ix, const char *key)
{
    return mt_hash_str(key) & (ix->cap - 1);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot_of(const struct mt_strindex *ix, const void *arr,
                      const char *key)
{
    size_t i = home_of(ix, key);

    while (ix->slots[i] &&
           strcmp(ix->key_of(arr, ix->slots[i] - 1), key) != 0)
        i = (i + 1) & (ix->cap - 1);
    return i;
}

size_t mt_strindex_find(const struct mt_strindex *ix, const void *arr,
                        const char *key)
{
    size_t i;

    if (!ix->n)
        return MT_STRINDEX_NONE;
    i = slot_of(ix, arr, key);
    return ix->slots[i] ? ix->slots[i] - 1 : MT_STRINDEX_NONE;
}

/* Twice the slots, every position indexed again. */
static void grow(struct mt_strindex *ix, const void *arr)
{
    free(ix->slots);
    ix->cap = ix->cap ? 2 * ix->cap : 64;
    ix->slots = mt_xcalloc(ix->cap, sizeof(*ix->slots));
    for (size_t p = 0; p < ix->n; p++)
        ix->slots[slot_of(ix, arr, ix->key_of(arr, p))] = (uint32_t)p + 1;
}

void mt_strindex_add(struct mt_strindex *ix, const void *arr)
{
    if (2 * (ix->n + 1) > ix->cap)
        grow(ix, arr);
    ix->slots[slot_of(ix, arr, ix->key_of(arr, ix->n))] =
        (uint32_t)ix->n + 1;
    ix->n++;
}

/* Empty slot hole, then move back each following entry that the hole
 * would cut off from its home slot. */
static void unslot(struct mt_strindex *ix, const void *arr, size_t hole)
{
    size_t mask = ix->cap - 1, j = hole;

    ix->slots[hole] = 0;
    for (;;) {
        size_t home;

        j = (j + 1) & mask;
        if (!ix->slots[j])
            return;
        home = home_of(ix, ix->key_of(arr, ix->slots[j] - 1));
        /* It stays when its home lies cyclically in (hole, j]. */
        if (hole <= j ? (hole < home && home <= j)
                      : (hole < home || home <= j))
            continue;
        ix->slots[hole] = ix->slots[j];
        ix->slots[j] = 0;
        hole = j;
    }
}

void mt_strindex_remove(struct mt_strindex *ix, const void *arr, size_t pos)
{
    size_t last = ix->n - 1;

    unslot(ix, arr, slot_of(ix, arr, ix->key_of(arr, pos)));
    if (pos != last)
        ix->slots[slot_of(ix, arr, ix->key_of(arr, last))] = (uint32_t)pos + 1;
    ix->n--;
}
