/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash.h -- the one non-cryptographic hash of the project: 64-bit FNV-1a,
 * for hash tables (object ids, interned strings). Not for anything a peer
 * could aim collisions at where that matters; tables that key on peer
 * input bound their probe lengths instead.
 */
#ifndef MT_HASH_H
#define MT_HASH_H

#include <stddef.h>
#include <stdint.h>

/* mt_hash_bytes - FNV-1a of n bytes at p. THREAD any. */
static inline uint64_t mt_hash_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ULL;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* mt_hash_str - FNV-1a of a NUL-terminated string. THREAD any. */
static inline uint64_t mt_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

#endif /* MT_HASH_H */
