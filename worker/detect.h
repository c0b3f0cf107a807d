/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect.h -- what this node offers: CPUs and memory read from the system,
 * then the operator's overrides (--num-cpus, --num-gpus, --memory,
 * --resources JSON) applied on top, plus the node's labels.
 *
 * NVIDIA GPUs are found by worker/detect_gpu.h; main passes their count
 * here as num_gpus unless --num-gpus was given. TPU detection is to come.
 */
#ifndef MT_DETECT_H
#define MT_DETECT_H

#include <stdint.h>

#include "common/qty.h"

struct mt_detect_opts {
    int64_t num_cpus;         /* fixed point; -1 = detect */
    int64_t num_gpus;         /* fixed point; -1 = none (0) */
    int64_t memory_bytes;     /* -1 = detect (MemTotal) */
    const struct mt_qty_list *custom; /* --resources; borrowed, may be NULL */
};

/*
 * mt_detect_resources - fill out with CPU, memory, GPU (when > 0) and the
 * custom resources. Custom entries override detected ones of the same name.
 * Memory is in bytes (fixed point like every quantity).
 *
 * RET 0 or -MT_E* when the system cannot be read
 */
int mt_detect_resources(const struct mt_detect_opts *o,
                        struct mt_qty_list *out);

#endif /* MT_DETECT_H */
