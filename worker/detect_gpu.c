/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect_gpu.c -- NVIDIA GPUs at worker start (see detect_gpu.h).
 *
 * The story: open NVML (nvml.h) and read each device's name, UUID and
 * total memory; if any step fails, say why and read the driver's procfs
 * files instead; then keep only what CUDA_VISIBLE_DEVICES lists, by index,
 * UUID (prefix) or MIG id. NVML is initialised and shut down within one
 * call; the periodic figures come from gpu_monitor.c.
 */
#include "worker/detect_gpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/error.h"
#include "common/log.h"
#include "worker/nvml.h"

/* ---- NVML ---------------------------------------------------------------- */

/* One device; RET 1 stored, 0 skipped (no permission), -MT_EIO. */
static int nvml_one(struct mt_nvml *n, unsigned int i, struct mt_gpu *g,
                    char *err, size_t errlen)
{
    struct mt_nvml_memory mem = {0, 0, 0};
    mt_nvml_dev dev = NULL;
    mt_nvml_ret r;

    r = n->handle(i, &dev);
    if (r == MT_NVML_NO_PERMISSION) {
        MT_WARN("gpu: NVML denies access to device %u; skipped", i);
        return 0;
    }
    if (r != MT_NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlDeviceGetHandleByIndex_v2(%u) returned "
                 "%d (%s)", i, r, mt_nvml_strerror(r));
        return -MT_EIO;
    }
    memset(g, 0, sizeof(*g));
    g->index = (int)i;
    snprintf(g->id, sizeof(g->id), "%u", i);
    r = n->name(dev, g->name, sizeof(g->name));
    g->name[sizeof(g->name) - 1] = '\0';
    if (r != MT_NVML_SUCCESS)
        snprintf(g->name, sizeof(g->name), "unknown");
    if (n->uuid && n->uuid(dev, g->uuid, sizeof(g->uuid)) != MT_NVML_SUCCESS)
        g->uuid[0] = '\0';
    g->uuid[sizeof(g->uuid) - 1] = '\0';
    if (n->memory(dev, &mem) == MT_NVML_SUCCESS)
        g->mem_total = mem.total;
    return 1;
}

int mt_gpu_detect_nvml(const char *path, struct mt_gpu_list *out, char *err,
                       size_t errlen)
{
    struct mt_nvml n;
    unsigned int count = 0;
    mt_nvml_ret r;
    int rc = 0;

    out->n = 0;
    out->source = "none";
    rc = mt_nvml_open(&n, path, err, errlen);
    if (rc < 0)
        return rc;
    r = n.init();
    if (r != MT_NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlInit_v2 returned %d (%s)", r,
                 mt_nvml_strerror(r));
        mt_nvml_close(&n);
        return -MT_EIO;
    }
    r = n.count(&count);
    if (r != MT_NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlDeviceGetCount_v2 returned %d (%s)", r,
                 mt_nvml_strerror(r));
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
    mt_nvml_close(&n);
    if (rc < 0) {
        out->n = 0;
        return rc;
    }
    out->source = "nvml";
    return 0;
}

/* ---- procfs fallback ----------------------------------------------------- */

/* The value after "key" on a line, blanks trimmed, into out; RET bool. */
static bool line_value(char *line, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);
    char *v, *end;

    if (strncmp(line, key, k) != 0)
        return false;
    v = line + k;
    while (*v == ' ' || *v == '\t')
        v++;
    end = v + strlen(v);
    while (end > v && isspace((unsigned char)end[-1]))
        *--end = '\0';
    snprintf(out, len, "%s", v);
    return true;
}

/* The "Model:" and "GPU UUID:" lines of one information file into g;
 * RET 0, or -MT_ENOENT without a Model line. */
static int read_information(const char *file, struct mt_gpu *g)
{
    char line[256];
    FILE *f = fopen(file, "r");
    bool model = false;

    if (!f)
        return -MT_ENOENT;
    memset(g, 0, sizeof(*g));
    while (fgets(line, sizeof(line), f)) {
        if (line_value(line, "Model:", g->name, sizeof(g->name)))
            model = true;
        else
            line_value(line, "GPU UUID:", g->uuid, sizeof(g->uuid));
    }
    fclose(f);
    if (model && !g->name[0])
        snprintf(g->name, sizeof(g->name), "unknown");
    if (strncmp(g->uuid, "GPU-", 4) != 0)
        g->uuid[0] = '\0'; /* "??" when the driver hides it */
    return model ? 0 : -MT_ENOENT;
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
        if (out->n < MT_GPU_MAX && read_information(file, g) == 0) {
            g->index = out->n;
            snprintf(g->id, sizeof(g->id), "%d", g->index);
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

/* "GPU-" then hex digits and dashes (at least one digit). */
static bool is_gpu_uuid(const char *t)
{
    bool digit = false;

    if (strncmp(t, "GPU-", 4) != 0)
        return false;
    for (t += 4; *t; t++) {
        if (!isxdigit((unsigned char)*t) && *t != '-')
            return false;
        digit = digit || *t != '-';
    }
    return digit;
}

/* One entry into r; RET 1 parsed, 0 junk, -1 a negative index (the end). */
static int parse_ref(const char *tok, struct mt_gpu_ref *r)
{
    char *end;
    long v;

    memset(r, 0, sizeof(*r));
    if (strlen(tok) >= sizeof(r->text))
        return 0;
    snprintf(r->text, sizeof(r->text), "%s", tok);
    if (is_gpu_uuid(tok)) {
        r->kind = MT_GPU_REF_UUID;
        return 1;
    }
    if (strncmp(tok, "MIG-", 4) == 0 && tok[4]) {
        r->kind = MT_GPU_REF_MIG;
        return 1;
    }
    errno = 0;
    v = strtol(tok, &end, 10);
    if (end == tok || *end || errno || v > 100000)
        return 0;
    if (v < 0)
        return -1;
    r->kind = MT_GPU_REF_INDEX;
    r->index = (int)v;
    snprintf(r->text, sizeof(r->text), "%ld", v);
    return 1;
}

static bool same_ref(const struct mt_gpu_ref *a, const struct mt_gpu_ref *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == MT_GPU_REF_INDEX)
        return a->index == b->index;
    return strcasecmp(a->text, b->text) == 0;
}

int mt_gpu_parse_visible(const char *s, struct mt_gpu_ref *refs, int max,
                         char *warn, size_t wlen)
{
    char buf[4096], *save = NULL, *tok, *end;
    struct mt_gpu_ref r;
    bool dup;
    int n = 0, got;

    if (warn && wlen)
        warn[0] = '\0';
    if (!s || !*s || strcmp(s, "NoDevFiles") == 0)
        return 0;
    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        end = tok + strlen(tok);
        while (end > tok && isspace((unsigned char)end[-1]))
            *--end = '\0';
        got = parse_ref(tok, &r);
        if (got < 0)
            break; /* CUDA stops at the first negative entry */
        if (got == 0) {
            add_warn(warn, wlen, tok, "is not a device index, GPU UUID or "
                     "MIG id; ignored");
            continue;
        }
        dup = false;
        for (int i = 0; i < n; i++)
            dup = dup || same_ref(&refs[i], &r);
        if (dup) {
            add_warn(warn, wlen, tok, "is repeated; ignored");
            continue;
        }
        if (n >= max) {
            add_warn(warn, wlen, tok, "is past the device limit; ignored");
            continue;
        }
        refs[n++] = r;
    }
    return n;
}

int mt_gpu_match_uuid(const struct mt_gpu_list *l, const char *prefix)
{
    size_t k = strlen(prefix);
    int found = -MT_ENOENT;

    if (k == 0)
        return -MT_ENOENT;
    for (int i = 0; i < l->n; i++) {
        if (!l->v[i].uuid[0] || strncasecmp(l->v[i].uuid, prefix, k) != 0)
            continue;
        if (found >= 0)
            return -MT_EEXIST;
        found = i;
    }
    return found;
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

/* Position in l of the device an INDEX or UUID entry names, or -1 (with
 * a warning). */
static int find_ref(const struct mt_gpu_list *l, const struct mt_gpu_ref *r)
{
    int pos;

    if (r->kind == MT_GPU_REF_INDEX) {
        for (int j = 0; j < l->n; j++)
            if (l->v[j].index == r->index)
                return j;
        MT_WARN("gpu: CUDA_VISIBLE_DEVICES lists %d, which this node "
                "does not have; ignored", r->index);
        return -1;
    }
    pos = mt_gpu_match_uuid(l, r->text);
    if (pos == -MT_EEXIST)
        MT_WARN("gpu: CUDA_VISIBLE_DEVICES entry %s matches more than one "
                "GPU; ignored", r->text);
    else if (pos < 0)
        MT_WARN("gpu: CUDA_VISIBLE_DEVICES lists %s, which matches no GPU "
                "UUID of this node; ignored", r->text);
    return pos < 0 ? -1 : pos;
}

/* A MIG entry as a GPU of its own: the model of the parent GPU when the
 * entry names it (MIG-GPU-<uuid>/gi/ci), else of the node's first GPU. */
static void mig_gpu(const struct mt_gpu_list *l, const struct mt_gpu_ref *r,
                    struct mt_gpu *g)
{
    char parent[MT_GPU_ID_MAX], *slash;
    int pos = -1;

    memset(g, 0, sizeof(*g));
    g->index = -1;
    snprintf(g->uuid, sizeof(g->uuid), "%s", r->text);
    snprintf(g->id, sizeof(g->id), "%s", r->text);
    snprintf(parent, sizeof(parent), "%s", r->text + 4);
    slash = strchr(parent, '/');
    if (slash) {
        *slash = '\0'; /* "GPU-<uuid>" of MIG-GPU-<uuid>/<gi>/<ci> */
        if (is_gpu_uuid(parent))
            pos = mt_gpu_match_uuid(l, parent);
    }
    snprintf(g->name, sizeof(g->name), "%s",
             l->v[pos >= 0 ? pos : 0].name);
}

void mt_gpu_filter_visible(struct mt_gpu_list *l, const struct mt_gpu_ref *refs,
                           int n)
{
    static struct mt_gpu kept[MT_GPU_MAX]; /* THREAD main only */
    bool used[MT_GPU_MAX] = {false};
    int k = 0, pos;

    for (int i = 0; i < n && k < MT_GPU_MAX; i++) {
        if (refs[i].kind == MT_GPU_REF_MIG) {
            if (l->n == 0) {
                MT_WARN("gpu: CUDA_VISIBLE_DEVICES lists %s, but this node "
                        "has no GPU; ignored", refs[i].text);
                continue;
            }
            mig_gpu(l, &refs[i], &kept[k++]);
            continue;
        }
        pos = find_ref(l, &refs[i]);
        if (pos < 0)
            continue;
        if (used[pos]) {
            MT_WARN("gpu: CUDA_VISIBLE_DEVICES names GPU %d twice (%s); "
                    "ignored", l->v[pos].index, refs[i].text);
            continue;
        }
        used[pos] = true;
        kept[k] = l->v[pos];
        snprintf(kept[k].id, sizeof(kept[k].id), "%s", refs[i].text);
        k++;
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
    static struct mt_gpu_ref vis[MT_GPU_MAX]; /* THREAD main only */
    char err[512] = "", warn[1024] = "";
    int nvis, rc;

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
        MT_INFO("gpu: device %s: %s, %llu MiB, uuid %s (%s)", out->v[i].id,
                out->v[i].name,
                (unsigned long long)(out->v[i].mem_total >> 20),
                out->v[i].uuid[0] ? out->v[i].uuid : "unknown", out->source);
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

/* The identifier behind each GPU instance the node offers; written once
 * by mt_gpu_set_device_map before the loop starts, read-only after. */
static char device_id[MT_GPU_MAX][MT_GPU_ID_MAX];
static int n_device_id;

void mt_gpu_set_device_map(const struct mt_gpu_list *l)
{
    n_device_id = l->n;
    for (int i = 0; i < l->n; i++)
        snprintf(device_id[i], sizeof(device_id[i]), "%s", l->v[i].id);
}

void mt_gpu_map_env(struct mt_kv_list *env)
{
    const char *v = mt_kv_list_get(env, "CUDA_VISIBLE_DEVICES");
    char out[MT_GPU_MAX * MT_GPU_ID_MAX], *end;
    size_t used = 0;
    long id;
    int w;

    if (!v || !*v || n_device_id == 0)
        return;
    for (const char *p = v; *p; p = *end ? end + 1 : end) {
        id = strtol(p, &end, 10);
        if (end == p || (*end && *end != ','))
            return; /* not a plain list of ids: leave it alone */
        if (id >= 0 && id < n_device_id)
            w = snprintf(out + used, sizeof(out) - used, "%s%s",
                         used ? "," : "", device_id[id]);
        else
            w = snprintf(out + used, sizeof(out) - used, "%s%ld",
                         used ? "," : "", id);
        if (w < 0 || (size_t)w >= sizeof(out) - used)
            return;
        used += (size_t)w;
    }
    mt_kv_list_set(env, "CUDA_VISIBLE_DEVICES", out);
}
