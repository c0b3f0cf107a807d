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

#define MT_CLI_VERSION "0.1.0"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"start", mt_cmd_start, "start a head and/or a worker on this machine"},
    {"stop", mt_cmd_stop, "stop what this machine started"},
    {"status", mt_cmd_status, "show nodes and resources of a cluster"},
    {"submit", mt_cmd_submit, "run a command as a task and relay its output"},
    {"logs", mt_cmd_logs, "print and follow a task's output"},
    {"cancel", mt_cmd_cancel, "cancel a pending or running task"},
    {"list", mt_cmd_list,
     "list nodes, tasks, actors, placement groups or objects"},
    {"actor", mt_cmd_actor, "show or kill an actor"},
    {"gang", mt_cmd_gang, "show or cancel a gang (TPU slice program)"},
    {"placement-group", mt_cmd_pg,
     "create, wait for or remove a placement group"},
    {"microbenchmark", mt_cmd_microbenchmark,
     "measure tasks, actors, objects and placement groups (Ray's suite)"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: manta <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nRun `manta <command> --help` for a command's options.\n");
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
        printf("manta %s\n", MT_CLI_VERSION);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    /* Library warnings from the rpc layer would clutter command output. */
    mt_log_init("manta", MT_LOG_ERROR, NULL);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "manta: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return MT_EXIT_USAGE;
}
