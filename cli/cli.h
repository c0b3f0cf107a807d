/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h -- the `manta` command's subcommands. Each takes the arguments after
 * its name (argv[0] is the subcommand) and returns the process exit code:
 * 0 success, 1 failure, 2 bad usage (MT_EXIT_USAGE); `manta submit` passes
 * on its task's exit code instead.
 */
#ifndef MT_CLI_H
#define MT_CLI_H

#include <stdbool.h>
#include <uv.h>

#include "common/rpc.h"

int mt_cmd_start(int argc, char **argv);
int mt_cmd_stop(int argc, char **argv);
int mt_cmd_status(int argc, char **argv);
int mt_cmd_submit(int argc, char **argv);
int mt_cmd_list(int argc, char **argv);

/* `manta list objects` (rpc_list_objects.c). RET the exit code. */
int mt_cli_list_objects(const char *addr, long limit, bool json);
int mt_cmd_pg(int argc, char **argv);
int mt_cmd_logs(int argc, char **argv);
int mt_cmd_cancel(int argc, char **argv);
int mt_cmd_microbenchmark(int argc, char **argv);
int mt_cmd_actor(int argc, char **argv);

/* `manta list actors` (rpc_actor.c). RET the exit code. */
int mt_cli_list_actors(const char *addr, long limit, bool json);

/* ---- helpers shared by the commands that talk to the head (conn.c) ------- */

/* A private loop, rpc engine and channel to the head, for one command. */
struct mt_cli_conn {
    uv_loop_t loop;
    struct mt_rpc_engine *eng;
    struct mt_rpc_channel *ch;
};

/*
 * mt_cli_head_addr - the head address for `manta <cmd>`: addr when given
 * (checked to be HOST:PORT), else the contents of <dir>/head.addr (dir
 * defaults to MT_DEFAULT_TEMP_DIR). On failure prints one line
 * "manta <cmd>: ..." to stderr; the caller adds its usage text on 2.
 *
 * OUT out  returns owned, free with free(); NULL on failure
 * RET 0, MT_EXIT_USAGE (both given, or a malformed addr), 1 (no address)
 */
int mt_cli_head_addr(const char *cmd, const char *addr, const char *dir,
                     char **out);

/*
 * mt_cli_conn_open - init c's loop, start an engine and open a channel to
 * addr (connects lazily). On failure everything is released.
 * RET 0 or -MT_E*
 */
int mt_cli_conn_open(struct mt_cli_conn *c, const char *addr);

/*
 * mt_cli_conn_close - destroy the channel (calls in flight get their
 * callbacks with CANCELLED), the engine and the loop. Every other handle on
 * the loop must have been closed.
 */
void mt_cli_conn_close(struct mt_cli_conn *c);

/*
 * mt_cli_call - one unary call to addr on a fresh private connection.
 *
 * OUT resp  on success, returns owned reply (protobuf_c_message_free_unpacked)
 * OUT err   on failure, a one-line reason
 * RET 0 or -MT_E*
 */
int mt_cli_call(const char *addr, const struct mt_rpc_method *m,
                const ProtobufCMessage *req, int timeout_ms,
                ProtobufCMessage **resp, char *err, size_t errlen);

/* mt_cli_one_line - turn newlines in s into spaces, in place. */
void mt_cli_one_line(char *s);

/* mt_cli_task_state_name - "PENDING", "RUNNING", ... for a TaskState. */
const char *mt_cli_task_state_name(int state);

/* A gang submit (`manta submit --tpu ...`), see cmd_gang.c. */
struct mt_cli_gang_opts {
    const char *pod_type;        /* "v4-16" */
    const char *topology;        /* NULL: the pod type's default */
    const char *name;            /* NULL: none */
    uint32_t slices;             /* 1 or more */
    bool device;                 /* one process per chip (else per host) */
    int32_t max_restarts;        /* whole-gang restarts; -1 no limit */
    bool no_wait, verbose;
};

/*
 * mt_cli_gang_run - SubmitGang with member (a Manta__TaskSpec, borrowed) and
 * follow the gang: members' output prefixed "[rank R] ", restarts on
 * stderr. With no_wait print the gang id instead.
 * RET the exit code: 0, the failed member's code (1 without one), 130
 *     cancelled, 1 when refused or lost
 */
int mt_cli_gang_run(struct mt_cli_conn *c, const char *addr,
                    const void *member, const struct mt_cli_gang_opts *o);

/* `manta gang get|cancel ID`. RET the exit code. */
int mt_cmd_gang(int argc, char **argv);
/* `manta list gangs`: newest first, a table or JSON. RET the exit code. */
int mt_cli_list_gangs(const char *addr, long limit, bool json);

/* The name of a proto GangState, e.g. "RUNNING". */
const char *mt_cli_gang_state_name(int state);

#endif /* MT_CLI_H */
