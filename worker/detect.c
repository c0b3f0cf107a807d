/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect.c -- the node's resources (see detect.h).
 */
#include "worker/detect.h"

#include "common/error.h"
#include "common/sys.h"

int mt_detect_resources(const struct mt_detect_opts *o,
                        struct mt_qty_list *out)
{
    uint64_t total = 0, avail = 0;
    int rc;

    mt_qty_list_set(out, "CPU",
                    o->num_cpus >= 0 ? o->num_cpus
                                     : (int64_t)mt_sys_num_cpus() * MT_QTY_SCALE);
    if (o->memory_bytes >= 0) {
        total = (uint64_t)o->memory_bytes;
    } else {
        rc = mt_sys_meminfo(&total, &avail);
        if (rc < 0)
            return rc;
    }
    /* Bytes as a whole-unit quantity: 24 GiB is about 2.6e14, far from
     * overflowing int64; cap absurd values (above 512 TiB) instead. */
    if (total > (1ull << 49))
        total = 1ull << 49;
    mt_qty_list_set(out, "memory", (int64_t)total * MT_QTY_SCALE);
    if (o->num_gpus > 0)
        mt_qty_list_set(out, "GPU", o->num_gpus);
    for (size_t i = 0; o->custom && i < o->custom->n; i++)
        mt_qty_list_set(out, o->custom->v[i].name, o->custom->v[i].qty);
    return 0;
}
