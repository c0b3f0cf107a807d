/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefault.c -- the helper thread that populates arena pages ahead of
 * allocation (see prefault.h for why and what it costs).
 *
 * The loop thread raises `target`; the helper populates [done, target) in
 * CHUNK steps, dropping its mutex around each madvise so that a note from
 * the loop never waits behind a populate.
 */
#include "prefault.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/error.h"
#include "common/log.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define CHUNK (16ULL << 20)
#define PAGE 4096ULL

struct mt_prefault {
    uint8_t *base;
    uint64_t begin, end;   /* data region, offsets from base */
    uint64_t ahead;
    pthread_t thread;
    pthread_mutex_t mu;    /* leaf lock; guards the fields below */
    pthread_cond_t cv;     /* signalled on target, done, stop changes */
    uint64_t target;       /* populate [begin, target) */
    uint64_t done;         /* [begin, done) is populated */
    bool stop;
    bool failed;           /* madvise refused: stop trying */
};

static uint64_t round_page(uint64_t n)
{
    return (n + PAGE - 1) & ~(PAGE - 1);
}

/* Populate one chunk with the mutex dropped. Called with mu held. */
static void populate_chunk_locked(struct mt_prefault *p)
{
    uint64_t from = p->done;
    uint64_t to = p->target - from > CHUNK ? from + CHUNK : p->target;
    int rc, err = 0;

    pthread_mutex_unlock(&p->mu);
    rc = madvise(p->base + from, to - from, MADV_POPULATE_WRITE);
    if (rc < 0)
        err = errno;
    pthread_mutex_lock(&p->mu);
    if (rc < 0 && err != EINTR) {
        /* EINVAL: a kernel before 5.14; ENOMEM/EFAULT: no memory now. */
        MT_INFO("object store pages are not prefaulted (madvise: %s); "
                "puts take page faults", strerror(err));
        p->failed = true;
    } else if (rc == 0) {
        p->done = to;
    }
    pthread_cond_broadcast(&p->cv);
}

static void *helper(void *arg)
{
    struct mt_prefault *p = arg;

    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        if (p->done < p->target && !p->failed)
            populate_chunk_locked(p);
        else
            pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int mt_prefault_start(uint8_t *base, uint64_t begin, uint64_t end,
                      uint64_t ahead, struct mt_prefault **out)
{
    struct mt_prefault *p = calloc(1, sizeof(*p));
    int rc;

    if (!p)
        return -MT_ENOMEM;
    p->base = base;
    p->begin = begin;
    p->end = end;
    p->ahead = ahead;
    p->done = begin;
    p->target = begin;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    rc = pthread_create(&p->thread, NULL, helper, p);
    if (rc != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return -rc;
    }
    mt_prefault_note(p, begin);
    *out = p;
    return 0;
}

void mt_prefault_note(struct mt_prefault *p, uint64_t high)
{
    uint64_t want;

    if (high < p->begin)
        high = p->begin;
    want = p->end - high > p->ahead ? round_page(high + p->ahead) : p->end;
    if (want > p->end)
        want = p->end;
    pthread_mutex_lock(&p->mu);
    if (want > p->target) {
        p->target = want;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
}

void mt_prefault_sync(struct mt_prefault *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->done < p->target && !p->failed && !p->stop)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

uint64_t mt_prefault_done(struct mt_prefault *p)
{
    uint64_t d;

    pthread_mutex_lock(&p->mu);
    d = p->done - p->begin;
    pthread_mutex_unlock(&p->mu);
    return d;
}

void mt_prefault_stop(struct mt_prefault *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
