/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer.c -- fetches of objects from other nodes (see transfer.h).
 *
 * DESIGN: every fetch in flight is on one list, so that a second fetch of
 * the same object joins the first (its waiters) and shutdown can cut them
 * all short. A fetch's first local failure (a bad chunk, no room, a
 * cancellation) is remembered and the stream cancelled; the fetch ends
 * only when the wire reports the stream's end, so the writer is finished
 * or aborted exactly once, after the last chunk.
 *
 * Invariants: a fetch is joinable while its stream is open (stream set);
 * who joined it is told before its starter; the writer exists from the
 * first good chunk until it is sealed or aborted.
 */
#include "worker/transfer.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/alloc.h"
#include "common/error.h"
#include "objstore/store.h"
#include "objstore/transfer.h"

/* Someone else waiting for a fetch already in flight for the same id
 * (a second run needing the object, or a FetchObject call). */
struct waiter {
    struct waiter *next;
    mt_fetch_done_fn done;
    void *arg;
};

/* One object being pulled. Guarded by: loop thread. */
struct mt_fetch {
    struct mt_transfers *tr;
    struct mt_fetch *prev, *next;   /* in tr->fetches */
    mt_object_id id;
    char from[128];                 /* the holder's address */
    void *stream;                   /* the wire's; NULL once it ended */
    struct mt_xfer_writer *writer;
    uint64_t total;                 /* the object's data bytes */
    mt_fetch_done_fn done;          /* the starter */
    void *done_arg;
    struct waiter *waiters;         /* joined this fetch */
    int err;                        /* first local failure */
    char errmsg[160];
    int64_t t0_us;
};

struct mt_transfers {
    struct mt_store *store;
    const struct mt_transfer_wire *wire;
    void *wire_arg;
    struct mt_fetch *fetches;
};

static int64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct mt_transfers *mt_transfers_create(struct mt_store *store)
{
    struct mt_transfers *tr = mt_xcalloc(1, sizeof(*tr));

    tr->store = store;
    return tr;
}

void mt_transfers_destroy(struct mt_transfers *tr)
{
    free(tr);
}

void mt_transfers_set_wire(struct mt_transfers *tr,
                           const struct mt_transfer_wire *wire, void *arg)
{
    tr->wire = wire;
    tr->wire_arg = arg;
}

static void fetch_free(struct mt_fetch *f)
{
    struct mt_transfers *tr = f->tr;

    if (f->prev)
        f->prev->next = f->next;
    else
        tr->fetches = f->next;
    if (f->next)
        f->next->prev = f->prev;
    mt_xfer_writer_cancel(f->writer);
    free(f);
}

/* The fetch of id in flight, or NULL. */
static struct mt_fetch *in_flight(struct mt_transfers *tr,
                                  const mt_object_id *id)
{
    for (struct mt_fetch *f = tr->fetches; f; f = f->next)
        if (f->stream && mt_object_id_eq(&f->id, id))
            return f;
    return NULL;
}

static void join(struct mt_fetch *f, mt_fetch_done_fn done, void *arg)
{
    struct waiter *w = mt_xcalloc(1, sizeof(*w));

    w->done = done;
    w->arg = arg;
    w->next = f->waiters;
    f->waiters = w;
}

int mt_transfers_fetch(struct mt_transfers *tr, const mt_object_id *id,
                       const char *from, int timeout_ms,
                       mt_fetch_done_fn done, void *arg,
                       struct mt_fetch **started)
{
    struct mt_fetch *f = in_flight(tr, id);
    int rc;

    if (started)
        *started = NULL;
    if (f) {
        join(f, done, arg);
        return 0;
    }
    if (!tr->wire)
        return -MT_EUNAVAIL;
    f = mt_xcalloc(1, sizeof(*f));
    f->tr = tr;
    f->id = *id;
    f->t0_us = now_us();
    f->done = done;
    f->done_arg = arg;
    snprintf(f->from, sizeof(f->from), "%s", from);
    rc = tr->wire->open(tr->wire_arg, f, id, from,
                        timeout_ms ? timeout_ms : MT_TRANSFER_TIMEOUT_MS,
                        &f->stream);
    if (rc < 0) {
        free(f);
        return rc;
    }
    f->next = tr->fetches;
    if (tr->fetches)
        tr->fetches->prev = f;
    tr->fetches = f;
    if (started)
        *started = f;
    return 0;
}

/* Remember the first local failure and stop the stream. */
static void fail_local(struct mt_fetch *f, int err, const char *msg)
{
    if (!f->err) {
        f->err = err;
        snprintf(f->errmsg, sizeof(f->errmsg), "%s", msg);
    }
    if (f->stream)
        f->tr->wire->cancel(f->tr->wire_arg, f->stream);
}

void mt_fetch_cancel(struct mt_fetch *f)
{
    fail_local(f, -MT_ECANCELED, "fetch cancelled");
}

void mt_transfers_cancel(struct mt_transfers *tr)
{
    for (struct mt_fetch *f = tr->fetches; f; f = f->next)
        fail_local(f, -MT_ECANCELED, "worker stopping");
}

void mt_fetch_fail(struct mt_fetch *f, int err, const char *msg)
{
    fail_local(f, err, msg);
}

/* The writer for f, opened from the first chunk's description. */
static int open_writer(struct mt_fetch *f, const struct mt_object_info *info,
                       uint32_t chunk_size)
{
    int rc;

    if (!info || chunk_size == 0 || chunk_size > MT_TRANSFER_MAX_CHUNK) {
        fail_local(f, -MT_EPROTO, "bad first chunk from the holder");
        return -MT_EPROTO;
    }
    rc = mt_xfer_writer_open(f->tr->store, &f->id, info, chunk_size,
                             &f->writer);
    if (rc < 0) {
        fail_local(f, rc, mt_strerror(rc));
        return rc;
    }
    f->total = info->data_size;
    return 0;
}

void mt_fetch_chunk_fill(struct mt_fetch *f, const struct mt_object_info *info,
                         uint32_t chunk_size, uint64_t off, size_t len,
                         mt_fetch_fill_fn fill, void *arg)
{
    uint8_t *dst;

    if (f->err)
        return;
    if (!f->writer && open_writer(f, info, chunk_size) < 0)
        return;
    if (len == 0)
        return;
    if (mt_xfer_writer_place(f->writer, off, len, &dst) < 0) {
        fail_local(f, -MT_EPROTO, "bad chunk offset or length");
        return;
    }
    fill(arg, dst, len);
    mt_xfer_writer_placed(f->writer, off);
}

struct flat {
    const uint8_t *data;
};

static void fill_flat(void *arg, uint8_t *dst, size_t len)
{
    memcpy(dst, ((struct flat *)arg)->data, len);
}

void mt_fetch_chunk(struct mt_fetch *f, const struct mt_object_info *info,
                    uint32_t chunk_size, uint64_t off, const uint8_t *data,
                    size_t len)
{
    struct flat src = {data};

    mt_fetch_chunk_fill(f, info, chunk_size, off, len, fill_flat, &src);
}

/* Seal the object. RET 0 or why not (-MT_ESTATE: chunks missing). */
static int finish(struct mt_fetch *f)
{
    int err;

    if (!f->writer)
        return -MT_EPROTO; /* the stream ended without the object's info */
    err = mt_xfer_writer_finish(f->writer);
    if (err != -MT_ESTATE)
        f->writer = NULL; /* sealed, or aborted and freed by finish */
    return err;
}

void mt_fetch_stream_ended(struct mt_fetch *f, int err, const char *msg)
{
    struct mt_fetch_result r = {0};
    char why[512];
    struct waiter *w;

    f->stream = NULL;
    if (f->err)
        err = f->err;
    if (!err && (err = finish(f)) == -MT_ESTATE)
        fail_local(f, err, "the holder ended the stream before the last "
                           "chunk");
    if (err)
        snprintf(why, sizeof(why), "pull from %s failed: %s", f->from,
                 f->err ? f->errmsg
                 : msg && *msg ? msg
                               : mt_strerror(err));
    r.err = err == -MT_ESTATE ? -MT_EPROTO : err;
    r.msg = err ? why : "";
    r.size = err ? 0 : f->total;
    r.elapsed_us = (uint64_t)(now_us() - f->t0_us);
    while ((w = f->waiters)) {
        f->waiters = w->next;
        w->done(w->arg, &r);
        free(w);
    }
    f->done(f->done_arg, &r);
    fetch_free(f);
}
