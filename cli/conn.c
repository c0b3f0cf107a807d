/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn.c -- what the commands that talk to the head share: finding the
 * head's address (--address, or head.addr in a session dir), a private
 * loop + rpc engine + channel for one command, and one unary call on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/sys.h"

int mt_cli_head_addr(const char *cmd, const char *addr, const char *dir,
                     char **out)
{
    char *path, *file_addr;

    *out = NULL;
    if (addr && dir) {
        fprintf(stderr, "manta %s: give --address or --temp-dir, not both\n",
                cmd);
        return MT_EXIT_USAGE;
    }
    if (addr) {
        if (!mt_parse_host_port(addr)) {
            fprintf(stderr, "manta %s: invalid --address '%s': expected "
                            "HOST:PORT\n", cmd, addr);
            return MT_EXIT_USAGE;
        }
        *out = mt_xstrdup(addr);
        return 0;
    }
    dir = dir ? dir : MT_DEFAULT_TEMP_DIR;
    path = mt_session_path(dir, "head.addr");
    file_addr = mt_sys_read_file(path);
    free(path);
    if (!file_addr || !*file_addr) {
        fprintf(stderr, "manta %s: no head address in %s (is a cluster "
                        "running? pass --address HOST:PORT)\n", cmd, dir);
        free(file_addr);
        return 1;
    }
    file_addr[strcspn(file_addr, "\r\n ")] = '\0';
    *out = file_addr;
    return 0;
}

void mt_cli_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

int mt_cli_conn_open(struct mt_cli_conn *c, const char *addr)
{
    int rc;

    memset(c, 0, sizeof(*c));
    uv_loop_init(&c->loop);
    rc = mt_rpc_engine_create(&c->loop, &c->eng);
    if (rc == 0)
        rc = mt_rpc_channel_create(c->eng, addr, 0, &c->ch);
    if (rc < 0)
        mt_cli_conn_close(c);
    return rc;
}

void mt_cli_conn_close(struct mt_cli_conn *c)
{
    mt_rpc_channel_destroy(c->ch);
    c->ch = NULL;
    mt_rpc_engine_destroy(c->eng);
    c->eng = NULL;
    uv_run(&c->loop, UV_RUN_NOWAIT);
    uv_loop_close(&c->loop);
}

int mt_cli_call(const char *addr, const struct mt_rpc_method *m,
                const ProtobufCMessage *req, int timeout_ms,
                ProtobufCMessage **resp, char *err, size_t errlen)
{
    struct mt_cli_conn c;
    int rc = mt_cli_conn_open(&c, addr);

    *resp = NULL;
    if (rc < 0) {
        snprintf(err, errlen, "%s", mt_strerror(rc));
        return rc;
    }
    rc = mt_rpc_unary_sync(c.ch, m, req, timeout_ms, 0, resp, err, errlen);
    mt_cli_conn_close(&c);
    if (rc == 0 && !*resp) {
        snprintf(err, errlen, "empty reply");
        rc = -MT_EPROTO;
    }
    mt_cli_one_line(err);
    return rc;
}

