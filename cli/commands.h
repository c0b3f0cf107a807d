/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.h -- the `manta` command's subcommands, dispatched by main.c,
 * one per cmd_<name>.c. Each takes the arguments after its name (argv[0]
 * is the subcommand) and returns the process exit code: 0 success, 1
 * failure, 2 bad usage (MT_EXIT_USAGE, common/parse.h); `manta submit`
 * passes on its task's exit code instead.
 *
 * The commands that talk to a cluster are clients of libmanta like any
 * other program (<manta/manta.h>, one-shot connections through conn.h):
 * status, list, submit, logs, cancel, actor, gang, pg. `start`, `stop` and
 * `microbenchmark` manage processes (session.h). No command calls
 * another: what two share is in conn.c, interrupt.c, follow.c,
 * follow_gang.c or session.c.
 */
#ifndef MT_CLI_COMMANDS_H
#define MT_CLI_COMMANDS_H

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

#endif /* MT_CLI_COMMANDS_H */
