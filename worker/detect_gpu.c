/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect_gpu.c -- NVIDIA GPUs at worker start (see detect_gpu.h).
 *
 * The story: open NVML with dlopen and resolve the seven entry points we
 * use into function pointers; if any step fails, say why and read the
 * driver's procfs files instead; then keep only what CUDA_VISIBLE_DEVICES
 * lists. NVML is initialised and shut down within one call.
 *
 * The NVML ABI below is declared here from the public facts recorded in
 * notes/accelerators.md 4.3 (return codes are ints, 0 = success; handles
 * are opaque pointers; memory is three unsigned long long byte counts);
 * no NVIDIA header is used.
 */
#include "worker/detect_gpu.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/log.h"

/* ---- the NVML ABI we use ------------------------------------------------ */

typedef int nvml_ret;                     /* nvmlReturn_t; 0 = NVML_SUCCESS */
typedef struct nvml_device_st *nvml_dev;  /* nvmlDevice_t, opaque */
struct nvml_memory {                      /* nvmlMemory_t, bytes */
    unsigned long long total, free, used;
};

enum { NVML_OK = 0, NVML_NO_PERMISSION = 4, NVML_DRIVER_NOT_LOADED = 9,
       NVML_LIBRARY_NOT_FOUND = 12 };

struct nvml {
    void *lib;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*count)(unsigned int *);
    nvml_ret (*handle)(unsigned int, nvml_dev *);
    nvml_ret (*name)(nvml_dev, char *, unsigned int);
    nvml_ret (*memory)(nvml_dev, struct nvml_memory *);
    nvml_ret (*util)(nvml_dev, void *); /* resolved, used for reports later */
};

static const char *nvml_ret_text(nvml_ret r)
{
    switch (r) {
    case NVML_NO_PERMISSION: return "no permission";
    case NVML_DRIVER_NOT_LOADED: return "driver not loaded";
    case NVML_LIBRARY_NOT_FOUND: return "library not found";
    default: return "error";
    }
}

/* Resolve one symbol; RET 0 or -MT_EINVAL with err naming it. */
static int nvml_sym(struct nvml *n, const char *sym, void **fn, char *err,
                    size_t errlen)
{
    *fn = dlsym(n->lib, sym);
    if (*fn)
        return 0;
    snprintf(err, errlen, "NVML library lacks %s", sym);
    return -MT_EINVAL;
}

static int nvml_open(struct nvml *n, const char *path, char *err,
                     size_t errlen)
{
    const char *dlerr;

    memset(n, 0, sizeof(*n));
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        dlerr = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", path,
                 dlerr ? dlerr : "unknown error");
        return -MT_ENOENT;
    }
    /* Function pointers through void ** (POSIX guarantees the cast). */
    if (nvml_sym(n, "nvmlInit_v2", (void **)&n->init, err, errlen) < 0 ||
        nvml_sym(n, "nvmlShutdown", (void **)&n->shutdown, err, errlen) < 0 ||
        nvml_sym(n, "nvmlDeviceGetCount_v2", (void **)&n->count, err,
                 errlen) < 0 ||
        nvml_sym(n, "nvmlDeviceGetHandleByIndex_v2", (void **)&n->handle,
                 err, errlen) < 0 ||
        nvml_sym(n, "nvmlDeviceGetName", (void **)&n->name, err, errlen) < 0 ||
        nvml_sym(n, "nvmlDeviceGetMemoryInfo", (void **)&n->memory, err,
                 errlen) < 0 ||
        nvml_sym(n, "nvmlDeviceGetUtilizationRates", (void **)&n->util, err,
                 errlen) < 0) {
        dlclose(n->lib);
        n->lib = NULL;
        return -MT_EINVAL;
    }
    return 0;
}

/* One device; RET 1 stored, 0 skipped (no permission), -MT_EIO. */
static int nvml_one(struct nvml *n, unsigned int i, struct mt_gpu *g,
                    char *err, size_t errlen)
{
    struct nvml_memory mem = {0, 0, 0};
    nvml_dev dev = NULL;
    nvml_ret r;

    r = n->handle(i, &dev);
    if (r == NVML_NO_PERMISSION) {
        MT_WARN("gpu: NVML denies access to device %u; skipped", i);
        return 0;
    }
    if (r != NVML_OK) {
        snprintf(err, errlen, "nvmlDeviceGetHandleByIndex_v2(%u) returned "
                 "%d (%s)", i, r, nvml_ret_text(r));
        return -MT_EIO;
    }
    memset(g, 0, sizeof(*g));
    g->index = (int)i;
    r = n->name(dev, g->name, sizeof(g->name));
    g->name[sizeof(g->name) - 1] = '\0';
    if (r != NVML_OK)
        snprintf(g->name, sizeof(g->name), "unknown");
    if (n->memory(dev, &mem) == NVML_OK)
        g->mem_total = mem.total;
    return 1;
}

int mt_gpu_detect_nvml(const char *path, struct mt_gpu_list *out, char *err,
                       size_t errlen)
{
    struct nvml n;
    unsigned int count = 0;
    nvml_ret r;
    int rc = 0;

    out->n = 0;
    out->source = "none";
    rc = nvml_open(&n, path && *path ? path : "libnvidia-ml.so.1", err,
                   errlen);
    if (rc < 0)
        return rc;
    r = n.init();
    if (r != NVML_OK) {
        snprintf(err, errlen, "nvmlInit_v2 returned %d (%s)", r,
                 nvml_ret_text(r));
        dlclose(n.lib);
        return -MT_EIO;
    }
    r = n.count(&count);
    if (r != NVML_OK) {
        snprintf(err, errlen, "nvmlDeviceGetCount_v2 returned %d (%s)", r,
                 nvml_ret_text(r));
        rc = -MT_EIO;
    }
    if (count > MT_GPU_MAX) {
        MT_WARN("gpu: NVML reports %u devices; using the first %d", count,
                MT_GPU_MAX);
        count = MT_GPU_MAX;
    }
    for (unsigned int i = 0; rc == 0 && i < count; i++) {
        int got = nvml_one(&n, i, &out->v[out->n], err, errlen);

        if (got < 0)
            rc = got;
        else
            out->n += got;
    }
    n.shutdown();
    dlclose(n.lib);
    if (rc < 0) {
        out->n = 0;
        return rc;
    }
    out->source = "nvml";
    return 0;
}

/* ---- procfs fallback ----------------------------------------------------- */

/* The value of the "Model:" line of one information file; RET 0 or <0. */
static int read_model(const char *file, char *name, size_t len)
{
    char line[256], *v, *end;
    FILE *f = fopen(file, "r");
    int rc = -MT_ENOENT;

    if (!f)
        return -MT_ENOENT;
    while (rc < 0 && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "Model:", 6) != 0)
            continue;
        v = line + 6;
        while (*v == ' ' || *v == '\t')
            v++;
        end = v + strlen(v);
        while (end > v && isspace((unsigned char)end[-1]))
            *--end = '\0';
        snprintf(name, len, "%s", *v ? v : "unknown");
        rc = 0;
    }
    fclose(f);
    return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dot(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int mt_gpu_detect_procfs(const char *root, struct mt_gpu_list *out)
{
    struct dirent **ents = NULL;
    char dir[1024], file[1400];
    int n;

    out->n = 0;
    out->source = "none";
    snprintf(dir, sizeof(dir), "%s/driver/nvidia/gpus",
             root && *root ? root : "/proc");
    n = scandir(dir, &ents, not_dot, by_name);
    if (n < 0)
        return -MT_ENOENT;
    for (int i = 0; i < n; i++) {
        struct mt_gpu *g = &out->v[out->n];

        snprintf(file, sizeof(file), "%s/%s/information", dir,
                 ents[i]->d_name);
        if (out->n < MT_GPU_MAX &&
            read_model(file, g->name, sizeof(g->name)) == 0) {
            g->index = out->n;
            g->mem_total = 0;
            out->n++;
        }
        free(ents[i]);
    }
    free(ents);
    out->source = "procfs";
    return 0;
}

/* ---- CUDA_VISIBLE_DEVICES and names ------------------------------------- */

static void add_warn(char *warn, size_t wlen, const char *entry,
                     const char *why)
{
    size_t used;

    if (!warn || !wlen)
        return;
    used = strlen(warn);
    if (used + 1 < wlen)
        snprintf(warn + used, wlen - used, "%sentry '%s' %s",
                 used ? "; " : "", entry, why);
}

int mt_gpu_parse_visible(const char *s, int *idx, int max, char *warn,
                         size_t wlen)
{
    char buf[512], *save = NULL, *tok, *end;
    int n = 0;
    long v;

    if (warn && wlen)
        warn[0] = '\0';
    if (!s || !*s || strcmp(s, "NoDevFiles") == 0)
        return 0;
    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        v = strtol(tok, &end, 10);
        while (*end == ' ')
            end++;
        if (end == tok || *end || v > 100000) {
            add_warn(warn, wlen, tok, "is not a device index; ignored");
            continue;
        }
        if (v < 0)
            break; /* CUDA stops at the first negative entry */
        bool dup = false;
        for (int i = 0; i < n; i++)
            dup = dup || idx[i] == (int)v;
        if (dup) {
            add_warn(warn, wlen, tok, "is repeated; ignored");
            continue;
        }
        if (n >= max) {
            add_warn(warn, wlen, tok, "is past the device limit; ignored");
            continue;
        }
        idx[n++] = (int)v;
    }
    return n;
}

int mt_gpu_accel_type(const char *name, char *out, size_t len)
{
    /* First match of \w+\s+([A-Z0-9]+), scanning start positions. */
    for (const char *p = name; *p; p++) {
        const char *q = p, *c;
        size_t n = 0;

        while (isalnum((unsigned char)*q) || *q == '_')
            q++;
        if (q == p || !isspace((unsigned char)*q))
            continue;
        while (isspace((unsigned char)*q))
            q++;
        for (c = q; (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'); c++)
            n++;
        if (n == 0)
            continue;
        if (n >= len)
            return -MT_EINVAL;
        memcpy(out, q, n);
        out[n] = '\0';
        return 0;
    }
    return -MT_EINVAL;
}

void mt_gpu_filter_visible(struct mt_gpu_list *l, const int *vis, int n)
{
    struct mt_gpu kept[MT_GPU_MAX];
    int k = 0;

    for (int i = 0; i < n; i++) {
        int found = -1;

        for (int j = 0; j < l->n && found < 0; j++)
            if (l->v[j].index == vis[i])
                found = j;
        if (found < 0) {
            MT_WARN("gpu: CUDA_VISIBLE_DEVICES lists %d, which this node "
                    "does not have; ignored", vis[i]);
            continue;
        }
        kept[k++] = l->v[found];
    }
    memcpy(l->v, kept, sizeof(kept[0]) * (size_t)k);
    l->n = k;
}

/* ---- NVML with a deadline ---------------------------------------------- */

/* A hung driver must not stall start-up: NVML runs on a helper thread and
 * main waits at most nvml_timeout_ms. On time-out the thread is abandoned
 * (it owns a reference to job and frees it if it ever returns). */
struct nvml_job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs, done, rc;
    char path[1024];
    char err[512];
    struct mt_gpu_list list;
};

static void job_unref(struct nvml_job *j)
{
    int left;

    pthread_mutex_lock(&j->mu);
    left = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (left == 0) {
        pthread_mutex_destroy(&j->mu);
        pthread_cond_destroy(&j->cv);
        free(j);
    }
}

static void *nvml_thread(void *arg)
{
    struct nvml_job *j = arg;
    int rc = mt_gpu_detect_nvml(j->path[0] ? j->path : NULL, &j->list,
                                j->err, sizeof(j->err));

    pthread_mutex_lock(&j->mu);
    j->rc = rc;
    j->done = 1;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    job_unref(j);
    return NULL;
}

static int nvml_bounded(const char *path, int timeout_ms,
                        struct mt_gpu_list *out, char *err, size_t errlen)
{
    struct nvml_job *j = calloc(1, sizeof(*j));
    struct timespec dl;
    pthread_t t;
    int rc = 0;

    if (!j)
        return -MT_ENOMEM;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 2;
    snprintf(j->path, sizeof(j->path), "%s", path ? path : "");
    if (pthread_create(&t, NULL, nvml_thread, j) != 0) {
        j->refs = 1;
        job_unref(j);
        return mt_gpu_detect_nvml(path, out, err, errlen);
    }
    pthread_detach(t);
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&j->mu);
    while (!j->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&j->cv, &j->mu, &dl);
    if (j->done) {
        *out = j->list;
        snprintf(err, errlen, "%s", j->err);
        rc = j->rc;
    } else {
        out->n = 0;
        out->source = "none";
        snprintf(err, errlen, "NVML did not answer within %d ms",
                 timeout_ms);
        rc = -MT_ETIMEDOUT;
    }
    pthread_mutex_unlock(&j->mu);
    job_unref(j);
    return rc;
}

void mt_gpu_detect(const struct mt_gpu_opts *o, struct mt_gpu_list *out)
{
    char err[512] = "", warn[512] = "";
    int vis[MT_GPU_MAX], nvis, rc;

    rc = nvml_bounded(o->nvml_path,
                      o->nvml_timeout_ms > 0 ? o->nvml_timeout_ms
                                             : MT_GPU_NVML_TIMEOUT_MS,
                      out, err, sizeof(err));
    if (rc < 0) {
        if (rc == -MT_ENOENT)
            MT_INFO("gpu: NVML not available (%s); trying procfs", err);
        else
            MT_WARN("gpu: NVML unusable (%s); trying procfs", err);
        if (mt_gpu_detect_procfs(o->proc_root, out) < 0)
            MT_INFO("gpu: no NVIDIA driver under %s/driver/nvidia; no GPUs",
                    o->proc_root ? o->proc_root : "/proc");
    }
    if (o->visible) {
        nvis = mt_gpu_parse_visible(o->visible, vis, MT_GPU_MAX, warn,
                                    sizeof(warn));
        if (warn[0])
            MT_WARN("gpu: CUDA_VISIBLE_DEVICES='%s': %s", o->visible, warn);
        mt_gpu_filter_visible(out, vis, nvis);
    }
    for (int i = 0; i < out->n; i++)
        MT_INFO("gpu: device %d: %s, %llu MiB (%s)", out->v[i].index,
                out->v[i].name,
                (unsigned long long)(out->v[i].mem_total >> 20), out->source);
}

void mt_gpu_apply(const struct mt_gpu_list *l, int64_t *num_gpus,
                  struct mt_kv_list *labels)
{
    char type[MT_GPU_NAME_MAX], mib[32];
    uint64_t least = 0;

    if (*num_gpus < 0)
        *num_gpus = (int64_t)l->n * MT_QTY_SCALE;
    if (l->n == 0)
        return;
    if (!mt_kv_list_get(labels, MT_GPU_TYPE_LABEL) &&
        mt_gpu_accel_type(l->v[0].name, type, sizeof(type)) == 0)
        mt_kv_list_set(labels, MT_GPU_TYPE_LABEL, type);
    for (int i = 0; i < l->n; i++)
        if (l->v[i].mem_total && (!least || l->v[i].mem_total < least))
            least = l->v[i].mem_total;
    if (least && !mt_kv_list_get(labels, MT_GPU_MEMORY_LABEL)) {
        snprintf(mib, sizeof(mib), "%llu", (unsigned long long)(least >> 20));
        mt_kv_list_set(labels, MT_GPU_MEMORY_LABEL, mib);
    }
}

/* ---- grant ids -> device ids ------------------------------------------- */

/* The device index behind each GPU instance the node offers; written once
 * by mt_gpu_set_device_map before the loop starts, read-only after. */
static int device_of[MT_GPU_MAX];
static int n_device_of;

void mt_gpu_set_device_map(const struct mt_gpu_list *l)
{
    n_device_of = l->n;
    for (int i = 0; i < l->n; i++)
        device_of[i] = l->v[i].index;
}

void mt_gpu_map_env(struct mt_kv_list *env)
{
    const char *v = mt_kv_list_get(env, "CUDA_VISIBLE_DEVICES");
    char out[512] = "", *end;
    size_t used = 0;
    long id;

    if (!v || !*v || n_device_of == 0)
        return;
    for (const char *p = v; *p; p = *end ? end + 1 : end) {
        id = strtol(p, &end, 10);
        if (end == p || (*end && *end != ','))
            return; /* not a plain list of ids: leave it alone */
        if (id >= 0 && id < n_device_of)
            id = device_of[id];
        used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%ld",
                                 used ? "," : "", id);
        if (used >= sizeof(out))
            return;
    }
    mt_kv_list_set(env, "CUDA_VISIBLE_DEVICES", out);
}
