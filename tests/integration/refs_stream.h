/* SPDX-License-Identifier: Apache-2.0 */
/*
 * refs_stream.h -- the byte stream and checksum shared by refs_fnlib.c
 * (inside tasks) and refs_driver.c (the expected values), so a 256 MiB
 * object can be checked end to end without shipping it twice.
 */
#ifndef MT_TEST_REFS_STREAM_H
#define MT_TEST_REFS_STREAM_H

#include <stdint.h>
#include <string.h>

/* n bytes of a xorshift64 stream seeded with seed. */
static inline void mt_refs_stream(uint8_t *p, uint64_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, i = 0;

    for (; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    for (; i < n; i++)
        p[i] = (uint8_t)(x >> (8 * (i % 8)));
}

/* A 64-bit checksum over 8-byte words, then the tail bytes and n. */
static inline uint64_t mt_refs_checksum(const void *data, uint64_t n)
{
    const uint8_t *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ull, w, i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ n;
}

#endif /* MT_TEST_REFS_STREAM_H */
