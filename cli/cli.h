/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h -- the `manta` command's subcommands and what they share. Each
 * subcommand takes the arguments after its name (argv[0] is the
 * subcommand) and returns the process exit code: 0 success, 1 failure,
 * 2 bad usage (MT_EXIT_USAGE); `manta submit` passes on its task's exit
 * code instead.
 *
 * The commands that talk to a cluster are clients of libmanta like any
 * other program (<manta/manta.h>, one-shot connections): cmd_status.c,
 * cmd_list.c, cmd_submit.c, cmd_logs.c, cmd_cancel.c, cmd_actor.c,
 * cmd_gang.c, cmd_pg.c. `start`, `stop` and `microbenchmark` manage
 * processes (session.h).
 */
#ifndef MT_CLI_H
#define MT_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include <manta/manta.h>

int mt_cmd_start(int argc, char **argv);
int mt_cmd_stop(int argc, char **argv);
int mt_cmd_status(int argc, char **argv);
int mt_cmd_submit(int argc, char **argv);
int mt_cmd_list(int argc, char **argv);
int mt_cmd_pg(int argc, char **argv);
int mt_cmd_logs(int argc, char **argv);
int mt_cmd_cancel(int argc, char **argv);
int mt_cmd_microbenchmark(int argc, char **argv);
int mt_cmd_actor(int argc, char **argv);
int mt_cmd_gang(int argc, char **argv);

/*
 * mt_cli_usage_error - say "manta <cmd>: <fmt ...>" and the command's usage
 * on stderr (main.c). A command defines
 *   #define usage_error(...) mt_cli_usage_error("<cmd>", usage, __VA_ARGS__)
 * RET MT_EXIT_USAGE
 */
int mt_cli_usage_error(const char *cmd, void (*usage)(FILE *f),
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- reaching the head (conn.c) ------------------------------------------ */

/* Each call a command makes waits at most this long (4 s). */
#define MT_CLI_TIMEOUT_MS 4000

/*
 * mt_cli_connect - a one-shot client (MT_CONNECT_ONESHOT) for `manta <cmd>`:
 * the head at addr when given, else the one in <dir>/head.addr (dir
 * defaults to /tmp/manta); each call waits at most timeout_ms. Nothing is
 * sent yet, so a head that is away shows at the command's first call. On
 * failure prints one line "manta <cmd>: ..." to stderr; the caller adds
 * its usage text on 2.
 * OUT out  returns owned client, free with mt_client_disconnect()
 * RET 0, MT_EXIT_USAGE (both given, or a malformed addr), 1 (no address)
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

/* ---- Ctrl-C while following (interrupt.c) -------------------------------- */

/*
 * Ctrl-C while following a task or a gang: the first asks the follower to
 * cancel it (the follower polls mt_cli_interrupt_take between events), a
 * second leaves at once (exit 130) saying what may still run. SIGINT is
 * blocked in every thread and taken by a thread of its own, so start this
 * before connecting (the client's thread inherits the mask).
 */
struct mt_cli_interrupt {
    const char *what;            /* "task" or "gang" */
    pthread_mutex_t mu;
    char id[64];                 /* what to cancel; "" not known yet */
    atomic_int count;            /* Ctrl-Cs so far */
    bool taken;                  /* the first was handed to the follower */
    pthread_t thread;
    bool started;
};

void mt_cli_interrupt_start(struct mt_cli_interrupt *it, const char *what);
void mt_cli_interrupt_set_id(struct mt_cli_interrupt *it, const char *id);
/* mt_cli_interrupt_take - true once, after the first Ctrl-C. NULL ok. */
bool mt_cli_interrupt_take(struct mt_cli_interrupt *it);
/* mt_cli_interrupt_stop - end the thread (SIGINT stays blocked). NULL
 * ok. */
void mt_cli_interrupt_stop(struct mt_cli_interrupt *it);

#define MT_CLI_EXIT_CANCELLED 130

/* ---- following a task (follow.c) ----------------------------------------- */

/*
 * mt_cli_follow - follow task_id to its end (`manta submit`, `manta logs`):
 * its output to our stdout / stderr as it comes, what happens to it on
 * stderr (every state change with verbose; otherwise only why a live task
 * is stuck), a function task's result to stdout after its output.
 * IN  cmd  "submit" or "logs", for messages
 * IN  it   NULL (Ctrl-C is not ours), or the interrupt whose first Ctrl-C
 *          cancels the task
 * RET the exit code: the task's exit code when FINISHED, 1 when it failed
 *     or was lost, 130 when cancelled
 */
int mt_cli_follow(mt_client_t *c, const char *cmd, const char *task_id,
                  bool verbose, struct mt_cli_interrupt *it);

/* ---- gangs (cmd_gang.c) -------------------------------------------------- */

/*
 * mt_cli_gang_run - submit a gang (`manta submit --tpu ...`) and follow it:
 * members' output prefixed "[rank R] ", restarts on stderr. With no_wait
 * print the gang id instead.
 * RET the exit code: 0, the failed member's code (1 without one), 130
 *     cancelled, 1 when refused or lost
 */
int mt_cli_gang_run(mt_client_t *c, const mt_gang_opts_t *go,
                    const char *const *argv, size_t argc, bool no_wait,
                    bool verbose, struct mt_cli_interrupt *it);

#endif /* MT_CLI_H */
