/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_monitor.c -- poll NVML for per-GPU memory and utilization on a
 * helper thread (see gpu_monitor.h).
 *
 * The story: create copies the offered GPUs into a shared state whose
 * figures start unknown (total memory as detected). The helper opens and
 * initialises NVML once, then per period: for each NVML device, fetch a
 * handle, memory and utilization into a local sample with no lock held;
 * publish the sample and its time under the mutex; wait on the condition
 * variable until the next period or stop. read copies under the same
 * mutex and blanks figures that have gone stale.
 *
 * Lifetime: the state is reference counted (creator and helper). destroy
 * sets stop, wakes the helper, waits at most one second for it to leave
 * and drops its reference; the last one frees.
 */
#include "worker/gpu_monitor.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "worker/nvml.h"

#define STOP_WAIT_MS 1000

struct mt_gpu_monitor {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* stop requested / helper exited */
    int refs;                   /* guarded by mu */
    bool stop;                  /* guarded by mu */
    bool exited;                /* guarded by mu */
    int period_ms;              /* constant */
    char path[1024];            /* constant; "" = default soname */
    int n;                      /* constant */
    struct mt_gpu_stat v[MT_GPU_MAX]; /* guarded by mu */
    int64_t sampled_mono;       /* guarded by mu; 0 = never */
    bool warned_stale;          /* guarded by mu */
};

static void unref(struct mt_gpu_monitor *m)
{
    int left;

    pthread_mutex_lock(&m->mu);
    left = --m->refs;
    pthread_mutex_unlock(&m->mu);
    if (left == 0) {
        pthread_mutex_destroy(&m->mu);
        pthread_cond_destroy(&m->cv);
        free(m);
    }
}

/* Absolute CLOCK_REALTIME deadline ms from now, for timedwait. */
static struct timespec deadline(int ms)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* One device's figures into s; failures and NOT_SUPPORTED stay -1. */
static void poll_one(struct mt_nvml *nv, struct mt_gpu_stat *s)
{
    struct mt_nvml_memory mem = {0, 0, 0};
    struct mt_nvml_util u = {0, 0};
    mt_nvml_dev dev = NULL;

    s->mem_used = -1;
    s->util_percent = -1;
    if (nv->handle((unsigned int)s->index, &dev) != MT_NVML_SUCCESS)
        return;
    if (nv->memory(dev, &mem) == MT_NVML_SUCCESS) {
        s->mem_total = (int64_t)mem.total;
        s->mem_used = (int64_t)mem.used;
    }
    if (nv->util(dev, &u) == MT_NVML_SUCCESS && u.gpu <= 100)
        s->util_percent = (int)u.gpu;
}

static void poll_all(struct mt_gpu_monitor *m, struct mt_nvml *nv)
{
    struct mt_gpu_stat sample[MT_GPU_MAX];

    pthread_mutex_lock(&m->mu);
    memcpy(sample, m->v, sizeof(sample[0]) * (size_t)m->n);
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < m->n; i++)
        if (sample[i].index >= 0)
            poll_one(nv, &sample[i]);
    pthread_mutex_lock(&m->mu);
    memcpy(m->v, sample, sizeof(sample[0]) * (size_t)m->n);
    m->sampled_mono = mt_now_mono_ms();
    pthread_mutex_unlock(&m->mu);
}

/* Wait one period or until stop; RET true when stopping. */
static bool wait_period(struct mt_gpu_monitor *m)
{
    struct timespec dl = deadline(m->period_ms);
    bool stop;

    pthread_mutex_lock(&m->mu);
    while (!m->stop &&
           pthread_cond_timedwait(&m->cv, &m->mu, &dl) != ETIMEDOUT)
        ;
    stop = m->stop;
    pthread_mutex_unlock(&m->mu);
    return stop;
}

static void *helper(void *arg)
{
    struct mt_gpu_monitor *m = arg;
    struct mt_nvml nv;
    char err[512] = "";
    mt_nvml_ret r;

    if (mt_nvml_open(&nv, m->path, err, sizeof(err)) < 0) {
        MT_WARN("gpu: monitor cannot use NVML (%s); no GPU figures", err);
        goto out;
    }
    r = nv.init();
    if (r != MT_NVML_SUCCESS) {
        MT_WARN("gpu: monitor: nvmlInit_v2 returned %d (%s); no GPU "
                "figures", r, mt_nvml_strerror(r));
        mt_nvml_close(&nv);
        goto out;
    }
    do
        poll_all(m, &nv);
    while (!wait_period(m));
    nv.shutdown();
    mt_nvml_close(&nv);
out:
    pthread_mutex_lock(&m->mu);
    m->exited = true;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    unref(m);
    return NULL;
}

static void init_stats(struct mt_gpu_monitor *m, const struct mt_gpu_list *l)
{
    m->n = l->n < MT_GPU_MAX ? l->n : MT_GPU_MAX;
    for (int i = 0; i < m->n; i++) {
        struct mt_gpu_stat *s = &m->v[i];

        s->index = l->v[i].index;
        snprintf(s->id, sizeof(s->id), "%s", l->v[i].id);
        snprintf(s->name, sizeof(s->name), "%s", l->v[i].name);
        snprintf(s->uuid, sizeof(s->uuid), "%s", l->v[i].uuid);
        s->mem_total = l->v[i].mem_total && s->index >= 0
                           ? (int64_t)l->v[i].mem_total
                           : -1;
        s->mem_used = -1;
        s->util_percent = -1;
    }
}

int mt_gpu_monitor_create(const struct mt_gpu_list *l, const char *nvml_path,
                          int period_ms, struct mt_gpu_monitor **out)
{
    struct mt_gpu_monitor *m = calloc(1, sizeof(*m));
    bool poll = false;
    pthread_t t;

    if (!m)
        return -MT_ENOMEM;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    m->refs = 1;
    m->exited = true;
    m->period_ms = period_ms < 100 ? 100 : period_ms > 60000 ? 60000
                                                             : period_ms;
    snprintf(m->path, sizeof(m->path), "%s", nvml_path ? nvml_path : "");
    init_stats(m, l);
    for (int i = 0; i < m->n; i++)
        poll = poll || m->v[i].index >= 0;
    poll = poll && l->source && strcmp(l->source, "nvml") == 0;
    if (poll) {
        m->refs = 2;
        m->exited = false;
        if (pthread_create(&t, NULL, helper, m) != 0) {
            MT_WARN("gpu: cannot start the monitor thread; no GPU figures");
            m->refs = 1;
            m->exited = true;
        } else {
            pthread_detach(t);
        }
    }
    *out = m;
    return 0;
}

int mt_gpu_monitor_read(struct mt_gpu_monitor *m, struct mt_gpu_stat *out,
                        int max)
{
    int n, stale_ms;
    bool stale, warn;

    pthread_mutex_lock(&m->mu);
    n = m->n < max ? m->n : max;
    memcpy(out, m->v, sizeof(out[0]) * (size_t)n);
    stale_ms = MT_GPU_STALE_MS + 3 * m->period_ms;
    stale = m->sampled_mono &&
            mt_now_mono_ms() - m->sampled_mono > stale_ms;
    warn = stale && !m->warned_stale;
    m->warned_stale = stale;
    pthread_mutex_unlock(&m->mu);
    if (warn)
        MT_WARN("gpu: NVML has not answered for over %d ms; GPU figures "
                "read unknown", stale_ms);
    if (stale) {
        for (int i = 0; i < n; i++) {
            out[i].mem_used = -1;
            out[i].util_percent = -1;
        }
    }
    return n;
}

void mt_gpu_monitor_destroy(struct mt_gpu_monitor *m)
{
    struct timespec dl = deadline(STOP_WAIT_MS);

    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_broadcast(&m->cv);
    while (!m->exited &&
           pthread_cond_timedwait(&m->cv, &m->mu, &dl) != ETIMEDOUT)
        ;
    if (!m->exited)
        MT_WARN("gpu: the NVML monitor did not stop within %d ms; left "
                "behind", STOP_WAIT_MS);
    pthread_mutex_unlock(&m->mu);
    unref(m);
}
