/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.h -- the `manta` command's subcommands, dispatched by main.c,
 * one per cmd_<name>.c. Each returns the process exit code: 0 success, 1
 * failure, 2 bad usage (MT_EXIT_USAGE, common/parse.h); `manta submit`
 * passes on its task's exit code instead.
 *
 * The commands that talk to a cluster are clients of libmanta like any
 * other program (<manta/manta.h>, one-shot connections through conn.h):
 * status, top, list, submit, logs, cancel, actor, gang, pg. `start`,
 * `stop` and `microbenchmark` manage processes (session.h); `up` and
 * `down` run `manta start`/`manta stop` on the hosts of a cluster file
 * over ssh (cluster_file.h, remote.h); `tls-init` runs openssl.
 * No command calls another: what two share is in conn.c, interrupt.c,
 * follow.c, follow_gang.c, session.c or remote.c; top's drawing is
 * top_render.c.
 */
#ifndef MT_CLI_COMMANDS_H
#define MT_CLI_COMMANDS_H

/* A subcommand: its name, what `manta --help` says of it, and its entry,
 * which takes the arguments after the name (argv[0] is the name). */
struct mt_cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
};

/* One per cmd_<name>.c, in the order `manta --help` lists them. */
extern const struct mt_cli_command mt_cli_cmd_start;
extern const struct mt_cli_command mt_cli_cmd_stop;
extern const struct mt_cli_command mt_cli_cmd_up;
extern const struct mt_cli_command mt_cli_cmd_down;
extern const struct mt_cli_command mt_cli_cmd_status;
extern const struct mt_cli_command mt_cli_cmd_top;
extern const struct mt_cli_command mt_cli_cmd_submit;
extern const struct mt_cli_command mt_cli_cmd_logs;
extern const struct mt_cli_command mt_cli_cmd_cancel;
extern const struct mt_cli_command mt_cli_cmd_list;
extern const struct mt_cli_command mt_cli_cmd_actor;
extern const struct mt_cli_command mt_cli_cmd_gang;
extern const struct mt_cli_command mt_cli_cmd_pg;
extern const struct mt_cli_command mt_cli_cmd_microbenchmark;
extern const struct mt_cli_command mt_cli_cmd_tls_init;

#endif /* MT_CLI_COMMANDS_H */
