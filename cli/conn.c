/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn.c -- how a command reaches the head: a one-shot libmanta client
 * (MT_CONNECT_ONESHOT: no object store, no event stream, calls that fail
 * at once when the head is away) for the head given by --address, or
 * named in a session dir's head.addr; the arguments of the commands
 * that act on one task by id; and the one way every command reports bad
 * usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/conn.h"
#include "cli/session.h"
#include "common/parse.h"

int mt_cli_connect(const char *cmd, const char *addr, const char *dir,
                   int timeout_ms, mt_client_t **out)
{
    mt_connect_opts o;
    int rc;

    *out = NULL;
    mt_connect_opts_init(&o);
    o.flags = MT_CONNECT_ONESHOT;
    o.temp_dir = dir ? dir : MT_DEFAULT_TEMP_DIR;
    o.rpc_timeout_ms = timeout_ms;
    rc = mt_client_connect(addr, &o, out);
    if (rc == -MT_EINVAL) {
        fprintf(stderr, "manta %s: invalid --address '%s': expected "
                        "HOST:PORT\n", cmd, addr ? addr : "");
        return MT_EXIT_USAGE;
    }
    if (rc == -MT_ENOENT) {
        fprintf(stderr, "manta %s: no head address in %s (is a cluster "
                        "running? pass --address HOST:PORT)\n", cmd,
                o.temp_dir);
        return 1;
    }
    if (rc < 0) {
        fprintf(stderr, "manta %s: %s\n", cmd, mt_client_last_error(NULL));
        return 1;
    }
    return 0;
}

bool mt_cli_unreachable(int rc)
{
    return rc == -MT_EUNAVAIL || rc == -MT_ETIMEDOUT;
}

bool mt_cli_id_shaped(const char *id)
{
    return strlen(id) == 16 &&
           strspn(id, "0123456789abcdefghijklmnopqrstuvwxyz") == 16;
}

int mt_cli_task_args(int argc, char **argv, const char *cmd,
                     const char *usage, const char **id, bool *flag,
                     mt_client_t **c)
{
    static const struct option opts[] = {
        MT_CLI_HEAD_OPTIONS,
        {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *addr = NULL, *dir = NULL;
    bool logs = strcmp(cmd, "logs") == 0;
    int ch, rc;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
        if (ch == 'a') {
            addr = optarg;
        } else if (ch == 't') {
            dir = optarg;
        } else if ((ch == 'f' && !logs) || (ch == 'v' && logs)) {
            *flag = true;
        } else if (ch == 'h') {
            fputs(usage, stdout);
            return -1;
        } else {
            fprintf(stderr, "manta %s: unknown or incomplete option '%s'\n",
                    cmd, argv[optind - 1]);
            fputs(usage, stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || !mt_cli_id_shaped(argv[optind])) {
        fprintf(stderr, "manta %s: expected one task id (t and 15 hex "
                "digits)\n", cmd);
        fputs(usage, stderr);
        return MT_EXIT_USAGE;
    }
    *id = argv[optind];
    rc = mt_cli_connect(cmd, addr, dir, MT_CLI_TIMEOUT_MS, c);
    if (rc == MT_EXIT_USAGE)
        fputs(usage, stderr);
    return rc;
}

int mt_cli_usage_error(const char *cmd, void (*cmd_usage)(FILE *f),
                       const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "manta %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cmd_usage(stderr);
    return MT_EXIT_USAGE;
}
