/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_logs.c -- `manta logs TASK_ID`: print a task's output (what the head
 * kept) and follow it to the end, exiting with the task's exit code as
 * `manta submit` does (follow.c). Ctrl-C ends the command, not the task.
 */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/follow.h"

static const char usage[] =
    "usage: manta logs TASK_ID [--address HOST:PORT] [--temp-dir DIR] [-v]\n"
    "\n"
    "Print a task's output (the head keeps its last 1 MiB) and, while it\n"
    "runs, follow it to the end; exit with the task's exit code, as\n"
    "`manta submit` does. Ctrl-C stops following; the task goes on.\n";

static int cmd_logs(int argc, char **argv)
{
    const char *id = NULL;
    bool verbose = false;
    mt_client_t *c = NULL;
    int rc = mt_cli_task_args(argc, argv, "logs", usage, &id, &verbose, &c);

    if (rc)
        return rc < 0 ? 0 : rc;
    rc = mt_cli_follow(c, "logs", id, verbose, NULL);
    mt_client_disconnect(c);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_logs = {
    "logs", cmd_logs,
    "print and follow a task's output"};
