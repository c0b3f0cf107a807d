/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch.c -- following tasks by id (manta/admin.h), the public calls:
 * open a watch on task ids (one WatchTask stream each, rpc_task.c), add
 * ids, take the events the loop thread queued (watch_queue.c) one at a
 * time, close.
 *
 * The event last returned is kept until the next call, which is how its
 * pointers stay valid. `open` counts the tasks whose END is not queued
 * yet: it rises before a stream is even asked for, so mt_watch_next never
 * says "all ended" too early.
 *
 * THREAD: the queue is guarded by the watch's own mutex (never taken with
 * the client's).
 */
#include "sdk/watch_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_task.h"

static bool check_watch(const struct mt_watch *w)
{
    return w && w->magic == MT_WATCH_MAGIC;
}

/* Follow n more tasks. RET 0 or -MT_E* (recorded). */
static int follow(struct mt_watch *w, const char *const *ids, size_t n)
{
    int rc;

    for (size_t i = 0; i < n; i++) {
        if (!ids[i] || !*ids[i] || strlen(ids[i]) >= 64)
            return mt__set_error(w->client, -MT_EINVAL, "task id %zu is "
                                 "empty or too long", i);
        if (mt__check_id(w->client, ids[i], MT_ID_TASK) < 0)
            return -MT_EINVAL;
    }
    pthread_mutex_lock(&w->mu);
    w->open += n;
    pthread_mutex_unlock(&w->mu);
    rc = n ? mt__watch_follow(w, ids, n) : 0;
    if (rc < 0) {
        pthread_mutex_lock(&w->mu);
        w->open -= n;
        pthread_mutex_unlock(&w->mu);
    }
    return rc;
}

int mt_watch_open(mt_client_t *c, const char *const *task_ids, size_t n,
                  unsigned flags, mt_watch_t **out)
{
    struct mt_watch *w;
    pthread_condattr_t ca;
    int rc;

    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out || (n && !task_ids) ||
        (flags & ~MT_WATCH_OUTPUT))
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, task ids, flags or out");
    if (!(w = calloc(1, sizeof(*w))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    w->magic = MT_WATCH_MAGIC;
    w->client = c;
    w->flags = flags;
    atomic_init(&w->refs, 1);
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    if ((rc = follow(w, task_ids, n)) < 0) {
        mt__watch_unref(w);
        return rc;
    }
    *out = w;
    return 0;
}

int mt_watch_add(mt_watch_t *w, const char *task_id)
{
    if (!check_watch(w) || !task_id)
        return mt__set_error(check_watch(w) ? w->client : NULL, -MT_EINVAL,
                             "invalid watch or task id");
    return follow(w, &task_id, 1);
}

int mt_watch_next(mt_watch_t *w, int timeout_ms, const mt_watch_event **ev)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    int rc = 0;

    if (!check_watch(w) || !ev)
        return -MT_EINVAL;
    *ev = NULL;
    pthread_mutex_lock(&w->mu);
    free(w->cur);
    w->cur = NULL;
    while (!w->head && w->open && rc == 0 && timeout_ms != 0)
        rc = timeout_ms < 0 ? pthread_cond_wait(&w->cv, &w->mu)
                            : pthread_cond_timedwait(&w->cv, &w->mu, &dl);
    if (w->head) {
        w->cur = w->head;
        w->head = w->head->next;
        if (!w->head)
            w->tail = NULL;
        *ev = &w->cur->ev;
    }
    rc = *ev ? 0 : w->open ? -MT_ETIMEDOUT : -MT_ENOENT;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void mt_watch_close(mt_watch_t *w)
{
    if (!check_watch(w))
        return;
    pthread_mutex_lock(&w->mu);
    w->closed = true;
    pthread_mutex_unlock(&w->mu);
    mt__watch_stop(w); /* the streams end; each drops its reference */
    mt__watch_unref(w);
}
