/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checks.c -- the head's checks of plain C requests (see checks.h), moved
 * out of the services unchanged.
 */
#include "head/checks.h"

#include <string.h>

const char *mt_head_gang_def_check(struct mt_gang_def *def,
                                   struct mt_tpu_slice *shape)
{
    struct mt_task_def *m = &def->member;
    uint32_t k = def->slices ? def->slices : 1;
    const char *why;

    if (m->argc == 0 || !*m->argv[0])
        return "a gang needs a program to run";
    if (m->kind != MT_TASK_KIND_COMMAND && m->kind != MT_TASK_KIND_NONE)
        return "gang members run programs (COMMAND tasks)";
    for (size_t i = 0; i < m->nargs; i++)
        if (m->args[i].is_ref)
            return "gang members are placed by the gang";
    if (m->pg_id)
        return "gang members are placed by the gang";
    if (def->name && strlen(def->name) > MT_TASK_MAX_NAME)
        return "name too long";
    if (k > MT_HEAD_GANG_MAX_SLICES)
        return "at most 64 slices";
    if (def->max_restarts < -1)
        return "max_restarts must be -1 (no limit) or more";
    if (mt_qty_list_get(&m->res, "TPU") >= 0)
        return "gang members get their slice's chips: do not ask for TPU";
    m->kind = MT_TASK_KIND_COMMAND;
    if ((why = mt_task_def_check(m)))
        return why;
    if (!def->pod_type ||
        mt_tpu_slice_parse(def->pod_type, def->topology, 0, shape) < 0)
        return "unknown TPU pod type or topology (e.g. v4-16, v6e-16, "
               "v5p-8; topology 2x2x2)";
    return NULL;
}
