/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.h -- parsing the values people and files give the programs:
 * bounded integers, "host:port" and IPv4 addresses (flags, head.addr),
 * and the exit code every program uses for bad usage. Used by the
 * daemons, the CLI and the SDK alike.
 */
#ifndef MT_PARSE_H
#define MT_PARSE_H

#include <stdbool.h>

/* Exit code for bad usage (flags, arguments), as in BSD sysexits' spirit. */
#define MT_EXIT_USAGE 2

/*
 * mt_parse_int - parse a decimal integer in [min, max].
 * RET true on success
 */
bool mt_parse_int(const char *s, long min, long max, long *out);

/*
 * mt_parse_host_port - check "host:port" (port 1-65535).
 * RET true when well formed
 */
bool mt_parse_host_port(const char *s);

/* mt_valid_ipv4 - true for a dotted-quad IPv4 address. */
bool mt_valid_ipv4(const char *s);

#endif /* MT_PARSE_H */
