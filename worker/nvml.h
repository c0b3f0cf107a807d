/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml.h -- the part of NVML (libnvidia-ml.so.1) the worker uses, loaded
 * with dlopen at run time: nothing of CUDA or NVML is linked at build time.
 *
 * The ABI is declared here from the public facts recorded in
 * notes/accelerators.md 4.3 (return codes are ints, 0 = success; handles
 * are opaque pointers; memory is three unsigned long long byte counts,
 * utilization two unsigned int percentages); no NVIDIA header is used.
 * Detection (detect_gpu.c) and the periodic monitor (gpu_monitor.c) each
 * open their own handle; NVML counts init/shutdown pairs.
 *
 * THREAD: any; a struct mt_nvml belongs to the thread that opened it.
 * NVML calls may block (a hung driver), so callers keep them off the loop.
 */
#ifndef MT_NVML_H
#define MT_NVML_H

#include <stddef.h>

typedef int mt_nvml_ret;                   /* nvmlReturn_t; 0 = success */
typedef struct mt_nvml_device_st *mt_nvml_dev; /* nvmlDevice_t, opaque */

struct mt_nvml_memory {                    /* nvmlMemory_t, bytes */
    unsigned long long total, free, used;
};

struct mt_nvml_util {                      /* nvmlUtilization_t, percent */
    unsigned int gpu, memory;
};

enum {
    MT_NVML_SUCCESS = 0,
    MT_NVML_NOT_SUPPORTED = 3,
    MT_NVML_NO_PERMISSION = 4,
    MT_NVML_DRIVER_NOT_LOADED = 9,
    MT_NVML_LIBRARY_NOT_FOUND = 12,
};

#define MT_NVML_UUID_LEN 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

/* The entry points, resolved with dlsym. uuid may be NULL (old library). */
struct mt_nvml {
    void *lib;
    mt_nvml_ret (*init)(void);
    mt_nvml_ret (*shutdown)(void);
    mt_nvml_ret (*count)(unsigned int *);
    mt_nvml_ret (*handle)(unsigned int, mt_nvml_dev *);
    mt_nvml_ret (*name)(mt_nvml_dev, char *, unsigned int);
    mt_nvml_ret (*memory)(mt_nvml_dev, struct mt_nvml_memory *);
    mt_nvml_ret (*util)(mt_nvml_dev, struct mt_nvml_util *);
    mt_nvml_ret (*uuid)(mt_nvml_dev, char *, unsigned int);
};

/*
 * mt_nvml_open - dlopen path (NULL or "" = "libnvidia-ml.so.1") and
 * resolve the entry points. Does not call nvmlInit_v2.
 *
 * OUT err  why it failed (borrowed, errlen bytes), for a log line
 * RET 0, -MT_ENOENT (no library), -MT_EINVAL (a required symbol missing)
 */
int mt_nvml_open(struct mt_nvml *n, const char *path, char *err,
                 size_t errlen);

/* mt_nvml_close - dlclose; accepts a handle that failed to open. */
void mt_nvml_close(struct mt_nvml *n);

/* mt_nvml_strerror - a short text for an NVML return code; static. */
const char *mt_nvml_strerror(mt_nvml_ret r);

#endif /* MT_NVML_H */
