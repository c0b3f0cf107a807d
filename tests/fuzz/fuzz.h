/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz.h -- what the libFuzzer harnesses share: the entry point's
 * prototype and a NUL-terminated copy of the input for text parsers.
 *
 * A harness feeds the bytes to the real decoder, frees everything it got
 * back (leak detection is on) and checks only properties that hold for any
 * input (a round trip gives back what was encoded): peer input that breaks
 * one is a bug, reported with __builtin_trap().
 */
#ifndef MT_FUZZ_H
#define MT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* mt_fuzz_str - data as a C string. RET owned, free with free(). */
static inline char *mt_fuzz_str(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* MT_FUZZ_CHECK - a property every input must keep. */
#define MT_FUZZ_CHECK(cond)                                                   \
    do {                                                                      \
        if (!(cond))                                                          \
            __builtin_trap();                                                 \
    } while (0)

#endif /* MT_FUZZ_H */
