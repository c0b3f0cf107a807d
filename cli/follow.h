/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow.h -- following one task to its end (follow.c), for `manta
 * submit` and `manta logs`.
 */
#ifndef MT_CLI_FOLLOW_H
#define MT_CLI_FOLLOW_H

#include <stdbool.h>

#include <manta/manta.h>

#include "cli/interrupt.h"

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

#endif /* MT_CLI_FOLLOW_H */
