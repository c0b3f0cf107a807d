/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_monitor.h -- per-GPU memory and utilization for the node's periodic
 * reports.
 *
 * A helper thread owns its own NVML handle and polls every offered GPU
 * that NVML knows (nvmlDeviceGetMemoryInfo, nvmlDeviceGetUtilizationRates)
 * once per period; it publishes each sample under a mutex that it holds
 * only to copy. The loop thread reads the latest sample with
 * mt_gpu_monitor_read, which never waits for NVML: a driver that hangs
 * stalls only the helper, and once a sample is older than MT_GPU_STALE_MS
 * plus three periods the used and utilization figures read unknown.
 * A figure NVML does not support (NOT_SUPPORTED, e.g. utilization on MIG)
 * or that failed reads unknown (-1), never 0. MIG instances and GPUs found
 * through procfs are not polled: their figures stay unknown except the
 * total memory detection found.
 *
 * THREAD: start and stop from main (or the loop thread); read from any.
 */
#ifndef MT_GPU_MONITOR_H
#define MT_GPU_MONITOR_H

#include <stdint.h>

#include "worker/detect_gpu.h"

#define MT_GPU_STALE_MS 5000

/* One GPU's latest figures. */
struct mt_gpu_stat {
    int index;                  /* NVML index; -1: a MIG instance */
    char id[MT_GPU_ID_MAX];     /* as in tasks' CUDA_VISIBLE_DEVICES */
    char name[MT_GPU_NAME_MAX];
    char uuid[MT_GPU_UUID_MAX]; /* "" = unknown */
    int64_t mem_total;          /* bytes; -1 = unknown */
    int64_t mem_used;           /* bytes; -1 = unknown */
    int util_percent;           /* 0..100; -1 = unknown */
};

struct mt_gpu_monitor;

/*
 * mt_gpu_monitor_create - begin watching the GPUs of l (borrowed; copied).
 * When l came from NVML and names at least one NVML device, a helper thread
 * opens nvml_path (NULL = the default soname) and polls every period_ms
 * (clamped to 100..60000); otherwise nothing is polled.
 *
 * RET 0 with *out set (free with mt_gpu_monitor_destroy), -MT_ENOMEM
 */
int mt_gpu_monitor_create(const struct mt_gpu_list *l, const char *nvml_path,
                          int period_ms, struct mt_gpu_monitor **out);

/*
 * mt_gpu_monitor_read - copy the latest figures of at most max GPUs into
 * out, in the order of the list given at create. Never calls NVML; the
 * only wait is for the helper to finish copying its last sample.
 *
 * RET the number of entries written
 * THREAD any
 */
int mt_gpu_monitor_read(struct mt_gpu_monitor *m, struct mt_gpu_stat *out,
                        int max);

/*
 * mt_gpu_monitor_destroy - stop polling. Waits up to one second for the
 * helper to leave NVML; a helper stuck in a hung driver is left behind and
 * frees its state if it ever returns. Accepts NULL.
 */
void mt_gpu_monitor_destroy(struct mt_gpu_monitor *m);

#endif /* MT_GPU_MONITOR_H */
