/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redis_uv.c -- hiredis's event hooks on a uv_poll_t (see redis_uv.h for
 * why the library's own adapter is not used).
 *
 * hiredis asks for read and write interest through addRead/delRead/
 * addWrite/delWrite and tells the adapter it is done with cleanup, after
 * which the context is gone: the poll callback checks for that after each
 * event it hands over, since handling one may free the context.
 *
 * THREAD: the loop's thread only.
 */
#include "head/redis_uv.h"

#include <stdlib.h>

#include "common/error.h"

struct watch {
    redisAsyncContext *ac;      /* NULL once hiredis cleaned up */
    uv_poll_t poll;
    int events;                 /* UV_READABLE | UV_WRITABLE wanted */
};

static void on_poll(uv_poll_t *h, int status, int events)
{
    struct watch *w = h->data;

    if (status < 0) { /* POLLERR: let hiredis read the socket's error */
        if (w->ac)
            redisAsyncHandleWrite(w->ac);
        return;
    }
    if (w->ac && (events & UV_WRITABLE))
        redisAsyncHandleWrite(w->ac);
    if (w->ac && (events & UV_READABLE))
        redisAsyncHandleRead(w->ac);
}

static void set_events(struct watch *w, int events)
{
    w->events = events;
    if (events)
        uv_poll_start(&w->poll, events, on_poll);
    else
        uv_poll_stop(&w->poll);
}

static void add_read(void *p)
{
    struct watch *w = p;

    set_events(w, w->events | UV_READABLE);
}

static void del_read(void *p)
{
    struct watch *w = p;

    set_events(w, w->events & ~UV_READABLE);
}

static void add_write(void *p)
{
    struct watch *w = p;

    set_events(w, w->events | UV_WRITABLE);
}

static void del_write(void *p)
{
    struct watch *w = p;

    set_events(w, w->events & ~UV_WRITABLE);
}

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void cleanup(void *p)
{
    struct watch *w = p;

    w->ac = NULL;
    uv_close((uv_handle_t *)&w->poll, on_closed);
}

int mt_redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    struct watch *w;

    if (ac->ev.data)
        return -MT_EINVAL;
    if (!(w = calloc(1, sizeof(*w))))
        return -MT_ENOMEM;
    if (uv_poll_init(loop, &w->poll, ac->c.fd) != 0) {
        free(w);
        return -MT_EINVAL;
    }
    w->ac = ac;
    w->poll.data = w;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    ac->ev.data = w;
    return 0;
}
