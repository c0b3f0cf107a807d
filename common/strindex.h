/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strindex.h -- an index by string key over a caller's array: lookups in
 * O(1) where a linear scan would compare every element. The array keeps
 * the elements (and every walk over them); the index keeps only
 * positions, and asks the caller for the key at a position.
 *
 * Open addressing with linear probing, at most half full; removal shifts
 * the following entries back, so there are no tombstones. It follows
 * swap-removal: removing position p moves the array's last element to p.
 * Keys are hashed with mt_hash_str (common/hash.h): index keys that a
 * peer chooses freely only behind authentication (node ids need the
 * cluster token).
 *
 * THREAD: not thread safe; the owner of the array guards it.
 */
#ifndef MT_STRINDEX_H
#define MT_STRINDEX_H

#include <stddef.h>
#include <stdint.h>

#define MT_STRINDEX_NONE ((size_t)-1)

/* The key of the element at pos of arr (borrowed from the array). */
typedef const char *(*mt_strindex_key_fn)(const void *arr, size_t pos);

/* An index of positions 0 .. n-1. Zeroed is empty. */
struct mt_strindex {
    uint32_t *slots;   /* position + 1; 0 = empty */
    size_t cap;        /* slots: a power of two, or 0 */
    size_t n;          /* positions indexed */
    mt_strindex_key_fn key_of;
};

/* mt_strindex_init - an empty index whose keys key_of gives. */
void mt_strindex_init(struct mt_strindex *ix, mt_strindex_key_fn key_of);

/* mt_strindex_release - free the slots; the index is empty again. */
void mt_strindex_release(struct mt_strindex *ix);

/*
 * mt_strindex_find - where key is in arr.
 * RET its position, or MT_STRINDEX_NONE
 */
size_t mt_strindex_find(const struct mt_strindex *ix, const void *arr,
                        const char *key);

/*
 * mt_strindex_add - index the element just appended to arr, at position
 * ix->n (its key must not be indexed already). Aborts when memory runs
 * out (mt_xcalloc).
 */
void mt_strindex_add(struct mt_strindex *ix, const void *arr);

/*
 * mt_strindex_remove - unindex the element at pos, before the caller
 * swap-removes it: the element at ix->n - 1 is then indexed at pos, so
 * the caller must move it there.
 */
void mt_strindex_remove(struct mt_strindex *ix, const void *arr, size_t pos);

#endif /* MT_STRINDEX_H */
