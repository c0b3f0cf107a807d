/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml.c -- open NVML with dlopen and resolve its entry points (see
 * nvml.h). RTLD_LOCAL keeps its symbols out of the global namespace.
 */
#include "worker/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

const char *mt_nvml_strerror(mt_nvml_ret r)
{
    switch (r) {
    case MT_NVML_SUCCESS: return "success";
    case MT_NVML_NOT_SUPPORTED: return "not supported";
    case MT_NVML_NO_PERMISSION: return "no permission";
    case MT_NVML_DRIVER_NOT_LOADED: return "driver not loaded";
    case MT_NVML_LIBRARY_NOT_FOUND: return "library not found";
    default: return "error";
    }
}

/* Resolve one symbol; RET 0 or -MT_EINVAL with err naming it. */
static int sym(struct mt_nvml *n, const char *name, void **fn, char *err,
               size_t errlen)
{
    *fn = dlsym(n->lib, name);
    if (*fn)
        return 0;
    snprintf(err, errlen, "NVML library lacks %s", name);
    return -MT_EINVAL;
}

int mt_nvml_open(struct mt_nvml *n, const char *path, char *err,
                 size_t errlen)
{
    const char *dlerr;
    void *p;

    memset(n, 0, sizeof(*n));
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        dlerr = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", path,
                 dlerr ? dlerr : "unknown error");
        return -MT_ENOENT;
    }
    /* Function pointers through void ** (POSIX guarantees the cast). */
    if (sym(n, "nvmlInit_v2", (void **)&n->init, err, errlen) < 0 ||
        sym(n, "nvmlShutdown", (void **)&n->shutdown, err, errlen) < 0 ||
        sym(n, "nvmlDeviceGetCount_v2", (void **)&n->count, err, errlen) < 0 ||
        sym(n, "nvmlDeviceGetHandleByIndex_v2", (void **)&n->handle, err,
            errlen) < 0 ||
        sym(n, "nvmlDeviceGetName", (void **)&n->name, err, errlen) < 0 ||
        sym(n, "nvmlDeviceGetMemoryInfo", (void **)&n->memory, err,
            errlen) < 0 ||
        sym(n, "nvmlDeviceGetUtilizationRates", (void **)&n->util, err,
            errlen) < 0) {
        mt_nvml_close(n);
        return -MT_EINVAL;
    }
    /* Optional: without it, CUDA_VISIBLE_DEVICES UUIDs cannot match. */
    p = dlsym(n->lib, "nvmlDeviceGetUUID");
    memcpy(&n->uuid, &p, sizeof(p));
    return 0;
}

void mt_nvml_close(struct mt_nvml *n)
{
    if (n->lib)
        dlclose(n->lib);
    memset(n, 0, sizeof(*n));
}
