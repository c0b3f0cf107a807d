/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h -- the `manta` command's subcommands. Each takes the arguments after
 * its name (argv[0] is the subcommand) and returns the process exit code:
 * 0 success, 1 failure, 2 bad usage (MT_EXIT_USAGE).
 */
#ifndef MT_CLI_H
#define MT_CLI_H

int mt_cmd_start(int argc, char **argv);
int mt_cmd_stop(int argc, char **argv);
int mt_cmd_status(int argc, char **argv);

#endif /* MT_CLI_H */
