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
 *   MT_NVML_STUB_UUIDS  comma list, UUID of device i (default
 *                       GPU-5eed000<i>-0000-4000-8000-00000000000<i>)
 *   MT_NVML_STUB_USED   comma list, memory used by device i in bytes
 *                       (default 0); "ns": nvmlDeviceGetMemoryInfo returns
 *                       NOT_SUPPORTED
 *   MT_NVML_STUB_UTIL   comma list, utilization of device i in percent
 *                       (default 0); "ns": NOT_SUPPORTED
 *   MT_NVML_STUB_HANG_MEM  nvmlDeviceGetMemoryInfo sleeps this many seconds
 *                       first (a driver that hangs after start-up)
 *   MT_NVML_STUB_FILE   a file of KEY=VALUE lines read at every call; its
 *                       keys win over the environment, so a test can
 *                       change the figures while the worker runs
 * In a comma list, a device past the end takes the last entry.
 * Device handles are 1-based indices cast to pointers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct stub_memory {
    unsigned long long total, free, used;
};
struct stub_util {
    unsigned int gpu, memory;
};

#define NOT_SUPPORTED 3

/* The value of knob name into buf: from MT_NVML_STUB_FILE, else the env.
 * RET buf, or NULL when unset or empty. */
static const char *knob(const char *name, char *buf, size_t len)
{
    const char *path = getenv("MT_NVML_STUB_FILE"), *v;
    size_t k = strlen(name);
    char line[1024];
    FILE *f;

    if (path && *path && (f = fopen(path, "r")) != NULL) {
        while (fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (strncmp(line, name, k) == 0 && line[k] == '=') {
                snprintf(buf, len, "%s", line + k + 1);
                fclose(f);
                return *buf ? buf : NULL;
            }
        }
        fclose(f);
    }
    v = getenv(name);
    if (!v || !*v)
        return NULL;
    snprintf(buf, len, "%s", v);
    return buf;
}

static long env_long(const char *name, long dflt)
{
    char buf[64];
    const char *v = knob(name, buf, sizeof(buf));

    return v ? strtol(v, NULL, 10) : dflt;
}

/* Entry i of comma list knob name into out (the last one past the end).
 * RET out, or NULL when the knob is unset. */
static const char *list_item(const char *name, long i, char *out, size_t len)
{
    char buf[4096], *save = NULL, *tok, *last = NULL;
    const char *v = knob(name, buf, sizeof(buf));

    if (!v)
        return NULL;
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        last = tok;
        if (i-- == 0)
            break;
    }
    if (!last)
        return NULL;
    snprintf(out, len, "%s", last);
    return out;
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
    char buf[128];
    const char *v = knob("MT_NVML_STUB_NAME", buf, sizeof(buf));

    if (dev_index(dev) < 0 || !name || len == 0)
        return 2;
    snprintf(name, len, "%s", v ? v : "NVIDIA H200");
    return 0;
}

EXPORT int nvmlDeviceGetUUID(void *dev, char *uuid, unsigned int len)
{
    long i = dev_index(dev);
    char item[128];

    if (i < 0 || !uuid || len == 0)
        return 2;
    if (list_item("MT_NVML_STUB_UUIDS", i, item, sizeof(item)))
        snprintf(uuid, len, "%s", item);
    else
        snprintf(uuid, len, "GPU-5eed%04ld-0000-4000-8000-%012ld", i, i);
    return 0;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *dev, struct stub_memory *m)
{
    long long total = 141LL << 30, used = 0;
    long i = dev_index(dev);
    char buf[64];

    if (i < 0 || !m)
        return 2;
    if (env_long("MT_NVML_STUB_HANG_MEM", 0) > 0)
        sleep((unsigned int)env_long("MT_NVML_STUB_HANG_MEM", 0));
    if (knob("MT_NVML_STUB_MEM", buf, sizeof(buf)))
        total = strtoll(buf, NULL, 10);
    if (list_item("MT_NVML_STUB_USED", i, buf, sizeof(buf))) {
        if (strcmp(buf, "ns") == 0)
            return NOT_SUPPORTED;
        used = strtoll(buf, NULL, 10);
    }
    m->total = (unsigned long long)total;
    m->used = (unsigned long long)used;
    m->free = m->total - m->used;
    return 0;
}

EXPORT int nvmlDeviceGetUtilizationRates(void *dev, struct stub_util *u)
{
    long i = dev_index(dev);
    char buf[64];

    if (i < 0 || !u)
        return 2;
    u->gpu = 0;
    u->memory = 0;
    if (list_item("MT_NVML_STUB_UTIL", i, buf, sizeof(buf))) {
        if (strcmp(buf, "ns") == 0)
            return NOT_SUPPORTED;
        u->gpu = (unsigned int)strtoul(buf, NULL, 10);
    }
    return 0;
}
