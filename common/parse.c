/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c -- option value parsers (see parse.h).
 */
#include "common/parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool mt_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    if (!s || !*s)
        return false;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool mt_parse_host_port(const char *s)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    long port;

    if (!colon || colon == s)
        return false;
    return mt_parse_int(colon + 1, 1, 65535, &port);
}

bool mt_valid_ipv4(const char *s)
{
    struct in_addr a;

    return s && inet_pton(AF_INET, s, &a) == 1;
}
