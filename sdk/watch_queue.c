/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch_queue.c -- the queue of a watch (manta/admin.h): the loop thread
 * turns each task's WatchTask stream into events (rpc_task.c) and queues
 * them here; watch.c hands them to the user one at a time.
 *
 * An event owns a copy of its strings and bytes (one block each), so the
 * loop thread never waits for the user. `open` counts the tasks whose END
 * is not queued yet.
 *
 * THREAD: the queue is guarded by the watch's own mutex (never taken with
 * the client's).
 */
#include "sdk/watch_queue.h"

#include <stdlib.h>
#include <string.h>

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
