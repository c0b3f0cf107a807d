/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_stub.c -- libmt_nvml_stub.so: a fake NVML for the GPU detection
 * tests (worker/detect_gpu.c loads it with --nvml-path). It exports the
 * entry points the worker resolves, with the ABI declared in
 * notes/accelerators.md 4.3, and describes fake GPUs from the environment:
 *   MT_NVML_STUB_COUNT  number of devices (default 0)
 *   MT_NVML_STUB_NAME   model name of every device (default "NVIDIA H200")
 *   MT_NVML_STUB_MEM    total bytes per device (default 141 GiB)
 *   MT_NVML_STUB_INIT   nvmlInit_v2's return code (default 0; 9 = driver
 *                       not loaded)
 *   MT_NVML_STUB_HANG   nvmlInit_v2 sleeps this many seconds first (a hung
 *                       driver)
 * Device handles are 1-based indices cast to pointers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct stub_memory {
    unsigned long long total, free, used;
};
struct stub_util {
    unsigned int gpu, memory;
};

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);

    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static unsigned int count(void)
{
    long n = env_long("MT_NVML_STUB_COUNT", 0);

    return n < 0 ? 0 : (unsigned int)n;
}

/* The index of a handle, or -1 when it is not one of ours. */
static long dev_index(void *dev)
{
    uintptr_t i = (uintptr_t)dev;

    return i >= 1 && i <= count() ? (long)i - 1 : -1;
}

EXPORT int nvmlInit_v2(void)
{
    long hang = env_long("MT_NVML_STUB_HANG", 0);

    if (hang > 0)
        sleep((unsigned int)hang);
    return (int)env_long("MT_NVML_STUB_INIT", 0);
}

EXPORT int nvmlShutdown(void)
{
    return 0;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (!n)
        return 2; /* INVALID_ARGUMENT */
    *n = count();
    return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
    if (!dev || i >= count())
        return 2;
    *dev = (void *)(uintptr_t)(i + 1);
    return 0;
}

EXPORT int nvmlDeviceGetName(void *dev, char *name, unsigned int len)
{
    const char *v = getenv("MT_NVML_STUB_NAME");

    if (dev_index(dev) < 0 || !name || len == 0)
        return 2;
    snprintf(name, len, "%s", v && *v ? v : "NVIDIA H200");
    return 0;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *dev, struct stub_memory *m)
{
    long long total = 141LL << 30;
    const char *v = getenv("MT_NVML_STUB_MEM");

    if (dev_index(dev) < 0 || !m)
        return 2;
    if (v && *v)
        total = strtoll(v, NULL, 10);
    m->total = (unsigned long long)total;
    m->used = 0;
    m->free = m->total;
    return 0;
}

EXPORT int nvmlDeviceGetUtilizationRates(void *dev, struct stub_util *u)
{
    if (dev_index(dev) < 0 || !u)
        return 2;
    u->gpu = 0;
    u->memory = 0;
    return 0;
}
