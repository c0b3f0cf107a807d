/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn.h -- what the commands that talk to a cluster share (conn.c): how
 * they reach the head (a one-shot libmanta client), the options naming
 * it, and how they report bad usage.
 */
#ifndef MT_CLI_CONN_H
#define MT_CLI_CONN_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include <manta/manta.h>

/*
 * mt_cli_usage_error - say "manta <cmd>: <fmt ...>" and the command's usage
 * on stderr. A command defines
 *   #define usage_error(...) mt_cli_usage_error("<cmd>", usage, __VA_ARGS__)
 * RET MT_EXIT_USAGE
 */
int mt_cli_usage_error(const char *cmd, void (*usage)(FILE *f),
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Each call a command makes waits at most this long (4 s). */
#define MT_CLI_TIMEOUT_MS 4000

/*
 * mt_cli_connect - a one-shot client (MT_CONNECT_ONESHOT) for `manta <cmd>`:
 * the head at addr when given, else the one in <dir>/head.addr (dir
 * defaults to /tmp/manta; its token and tls files are used either way, so
 * a joined node's session dir serves with --address); each call waits at
 * most timeout_ms. Nothing is
 * sent yet, so a head that is away shows at the command's first call. On
 * failure prints one line "manta <cmd>: ..." to stderr; the caller adds
 * its usage text on 2.
 * OUT out  returns owned client, free with mt_client_disconnect()
 * RET 0, MT_EXIT_USAGE (a malformed addr), 1 (no address)
 */
int mt_cli_connect(const char *cmd, const char *addr, const char *dir,
                   int timeout_ms, mt_client_t **out);

/* The getopt_long entries of every command that talks to a cluster:
 * --address HOST:PORT ('a') and --temp-dir DIR ('t'). */
#define MT_CLI_HEAD_OPTIONS                      \
    {"address", required_argument, NULL, 'a'},   \
    {"temp-dir", required_argument, NULL, 't'}

/* mt_cli_unreachable - the call failed because the head is away. */
bool mt_cli_unreachable(int rc);

/*
 * mt_cli_id_shaped - id has the shape of a numbered id (16 characters of
 * [0-9a-z]), whatever its kind: libmanta then says when it is the wrong
 * kind, and the head when it names nothing.
 */
bool mt_cli_id_shaped(const char *id);

/*
 * mt_cli_task_args - parse `manta <cmd> TASK_ID [flag] [--address HOST:PORT
 * | --temp-dir DIR]` (logs: -v, cancel: --force) and connect.
 * IN  usage  the command's usage text (stdout on --help, else stderr)
 * OUT id     the task id (borrowed from argv); flag: the flag was given
 * OUT c      the client (free with mt_client_disconnect)
 * RET 0, -1 (help printed: exit 0), or the exit code (message printed)
 */
int mt_cli_task_args(int argc, char **argv, const char *cmd,
                     const char *usage, const char **id, bool *flag,
                     mt_client_t **c);

#endif /* MT_CLI_CONN_H */
