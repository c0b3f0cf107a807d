/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow_gang.h -- submitting a gang and following it to its end
 * (follow_gang.c), for `manta submit --tpu`.
 */
#ifndef MT_CLI_FOLLOW_GANG_H
#define MT_CLI_FOLLOW_GANG_H

#include <stdbool.h>
#include <stddef.h>

#include <manta/manta.h>

#include "cli/interrupt.h"

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

#endif /* MT_CLI_FOLLOW_GANG_H */
