/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_cancel.c -- `manta cancel TASK_ID [--force]`: cancel a pending task,
 * or stop a running one, and say the state it is in after the request.
 */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/conn.h"

static const char usage[] =
    "usage: manta cancel TASK_ID [--force] [--address HOST:PORT] [--temp-dir DIR]\n"
    "\n"
    "Cancel a task: a pending one at once, a running one with SIGTERM to\n"
    "its process group (SIGKILL with --force, or after 5 s).\n";

static int cmd_cancel(int argc, char **argv)
{
    const char *id = NULL;
    bool force = false;
    mt_task_state state;
    mt_client_t *c = NULL;
    int rc = mt_cli_task_args(argc, argv, "cancel", usage, &id, &force, &c);

    if (rc)
        return rc < 0 ? 0 : rc;
    rc = mt_task_cancel_id(c, id, force, &state);
    if (rc < 0)
        fprintf(stderr, "manta cancel: %s\n", mt_client_last_error(c));
    else
        printf("Task %s: %s\n", id, mt_task_state_name(state));
    mt_client_disconnect(c);
    return rc < 0 ? 1 : 0;
}

const struct mt_cli_command mt_cli_cmd_cancel = {
    "cancel", cmd_cancel,
    "cancel a pending or running task"};
