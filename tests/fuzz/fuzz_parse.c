/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_parse.c -- the flag value parsers of common/parse.h (bounded
 * integers, "host:port", IPv4) on arbitrary text.
 *
 * Property: an accepted integer lies in the bounds asked for.
 */
#include <limits.h>

#include "common/parse.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = mt_fuzz_str(data, size);
    long v;

    if (mt_parse_int(s, 1, 65535, &v))
        MT_FUZZ_CHECK(v >= 1 && v <= 65535);
    if (mt_parse_int(s, LONG_MIN, LONG_MAX, &v))
        MT_FUZZ_CHECK(v >= LONG_MIN);
    mt_parse_host_port(s);
    mt_valid_ipv4(s);
    free(s);
    return 0;
}
