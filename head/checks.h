/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checks.h -- the head's checks of what clients ask for, on plain C defs
 * (common/defs.h) once a request is converted: pure (no tables, no loop),
 * so the services call them and the fuzz harnesses (tests/fuzz/) run them
 * on arbitrary requests. The checks of a task are mt_task_def_check
 * (common/defs.h); the protobuf-level ones are rpc_checks.h.
 *
 * THREAD: any (no shared state).
 */
#ifndef MT_HEAD_CHECKS_H
#define MT_HEAD_CHECKS_H

#include "common/defs.h"
#include "sched/tpu.h"

#define MT_HEAD_GANG_MAX_SLICES 64

/*
 * mt_head_gang_def_check - may def be a gang? The member is checked as
 * every member will be submitted: a COMMAND task (its kind is set so).
 * OUT shape  the slice shape of def's pod type, on success
 * RET NULL, or the reason it is bad (static)
 */
const char *mt_head_gang_def_check(struct mt_gang_def *def,
                                   struct mt_tpu_slice *shape);

#endif /* MT_HEAD_CHECKS_H */
