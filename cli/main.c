/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c -- the `manta` command: dispatch to a subcommand.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/parse.h"
#include "common/log.h"

static const struct mt_cli_command *const commands[] = {
    &mt_cli_cmd_start,
    &mt_cli_cmd_stop,
    &mt_cli_cmd_up,
    &mt_cli_cmd_down,
    &mt_cli_cmd_status,
    &mt_cli_cmd_top,
    &mt_cli_cmd_submit,
    &mt_cli_cmd_logs,
    &mt_cli_cmd_cancel,
    &mt_cli_cmd_list,
    &mt_cli_cmd_actor,
    &mt_cli_cmd_gang,
    &mt_cli_cmd_pg,
    &mt_cli_cmd_microbenchmark,
    &mt_cli_cmd_tls_init,
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: manta <command> [options]\n\n"
               "The command line of Manta, a scheduler of tasks and actors "
               "on a cluster\nof CPU, GPU and TPU machines: start and stop "
               "its nodes, look at it, and\nrun programs on it.\n\n"
               "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-16s %s\n", commands[i]->name, commands[i]->help);
    fprintf(f, "\nRun `manta <command> --help` for a command's options, "
               "`man manta-<command>`\nwhere the man pages are installed.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("manta %s\n", MT_VERSION);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    /* Library warnings from the rpc layer would clutter command output. */
    mt_log_init("manta", MT_LOG_ERROR, NULL);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i]->name) == 0)
            return commands[i]->run(argc - 1, argv + 1);
    fprintf(stderr, "manta: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return MT_EXIT_USAGE;
}
