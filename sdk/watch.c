/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch.c -- following tasks by id (manta/admin.h): the queue of events
 * between the client's loop thread, which turns each task's WatchTask
 * stream into events (rpc_task.c), and the user's thread, which takes
 * them one at a time.
 *
 * An event owns a copy of its strings and bytes (one block each), so the
 * loop thread never waits for the user. The event last returned is kept
 * until the next call, which is how its pointers stay valid. `open`
 * counts the tasks whose END is not queued yet: it rises before a stream
 * is even asked for, so mt_watch_next never says "all ended" too early.
 *
 * THREAD: the queue is guarded by the watch's own mutex (never taken with
 * the client's).
 */
#include "sdk/task_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A queued event and the bytes its pointers point into. */
struct mt__wev {
    struct mt__wev *next;
    mt_watch_event ev;
    char buf[];
};

/* A cursor over an event's buffer that copies strings and bytes in. */
struct filler {
    char *p;
};

static const char *put_str(struct filler *f, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = f->p;

    memcpy(d, s ? s : "", n);
    f->p += n;
    return d;
}

static const uint8_t *put_bytes(struct filler *f, const uint8_t *p,
                                size_t n)
{
    char *d = f->p;

    if (n)
        memcpy(d, p, n);
    f->p += n;
    return (const uint8_t *)d;
}

/* An event of kind for task_id with room for extra more bytes. */
static struct mt__wev *wev_new(mt_watch_event_kind kind, const char *task_id,
                               size_t extra, struct filler *f)
{
    struct mt__wev *e = calloc(1, sizeof(*e) + strlen(task_id) + 1 + extra);

    if (!e)
        return NULL;
    f->p = e->buf;
    e->ev.kind = kind;
    e->ev.task_id = put_str(f, task_id);
    return e;
}

/* Append e (NULL: out of memory, the event is lost). mu held. */
static void push_locked(struct mt_watch *w, struct mt__wev *e)
{
    if (!e || w->closed) {
        free(e);
        return;
    }
    if (w->tail)
        w->tail->next = e;
    else
        w->head = e;
    w->tail = e;
    pthread_cond_broadcast(&w->cv);
}

static struct mt__wev *output_event(const char *task_id,
                                    const struct mt__task_event *ev)
{
    struct filler f;
    struct mt__wev *e = wev_new(MT_WATCH_EVENT_OUTPUT, task_id,
                                ev->output_len, &f);

    if (e) {
        e->ev.fd = ev->fd == 2 ? 2 : 1;
        e->ev.data = put_bytes(&f, ev->output, ev->output_len);
        e->ev.len = ev->output_len;
    }
    return e;
}

static struct mt__wev *state_event(const char *task_id,
                                   const struct mt__task_event *ev)
{
    size_t extra = strlen(ev->node_id) + strlen(ev->error) + 2 +
                   ev->result_len;
    struct filler f;
    struct mt__wev *e = wev_new(MT_WATCH_EVENT_STATE, task_id, extra, &f);

    if (!e)
        return NULL;
    e->ev.state = (mt_task_state)ev->state;
    e->ev.attempt = ev->attempt;
    e->ev.node_id = put_str(&f, ev->node_id);
    e->ev.error = put_str(&f, ev->error);
    e->ev.exit_code = ev->exit_code;
    e->ev.result = put_bytes(&f, ev->result, ev->result_len);
    e->ev.result_len = ev->result_len;
    e->ev.result_in_store = ev->result_in_store;
    e->ev.result_size = ev->result_size;
    return e;
}

void mt__watch_event(struct mt_watch *w, const char *task_id,
                     const struct mt__task_event *ev)
{
    /* Built outside the lock; an event may carry output and a state. */
    struct mt__wev *out = ev->output_len ? output_event(task_id, ev) : NULL;
    struct mt__wev *st = ev->state ? state_event(task_id, ev) : NULL;

    pthread_mutex_lock(&w->mu);
    if (ev->output_len)
        push_locked(w, out);
    if (ev->state)
        push_locked(w, st);
    pthread_mutex_unlock(&w->mu);
}

void mt__watch_end(struct mt_watch *w, const char *task_id, int lost,
                   const char *why)
{
    struct filler f;
    struct mt__wev *e = wev_new(MT_WATCH_EVENT_END, task_id,
                                strlen(why ? why : "") + 1, &f);

    if (e) {
        e->ev.lost = lost;
        e->ev.error = put_str(&f, why);
        e->ev.node_id = "";
    }
    pthread_mutex_lock(&w->mu);
    push_locked(w, e);
    w->open--;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* ---- the public calls ---------------------------------------------------- */

static bool check_watch(const struct mt_watch *w)
{
    return w && w->magic == MT_WATCH_MAGIC;
}

/* Follow n more tasks. RET 0 or -MT_E* (recorded). */
static int follow(struct mt_watch *w, const char *const *ids, size_t n)
{
    int rc;

    for (size_t i = 0; i < n; i++)
        if (!ids[i] || !*ids[i] || strlen(ids[i]) >= 64)
            return mt__set_error(w->client, -MT_EINVAL, "task id %zu is "
                                 "empty or too long", i);
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

void mt__watch_unref(struct mt_watch *w)
{
    struct mt__wev *e, *next;

    if (atomic_fetch_sub(&w->refs, 1) != 1)
        return;
    for (e = w->head; e; e = next) {
        next = e->next;
        free(e);
    }
    free(w->cur);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    w->magic = 0;
    free(w);
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
