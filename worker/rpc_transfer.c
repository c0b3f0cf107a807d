/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_transfer.c -- moving objects between nodes' stores over gRPC.
 *
 * PullObject (server stream, on the holder): pin the object with a chunk
 * reader (objstore/transfer.h), send its info, then its bytes in chunks of
 * 4 MiB. Up to PULL_WINDOW chunks are queued in the stream at once; the
 * stream's drain callback asks for more, so a slow receiver never makes the
 * sender buffer the whole object.
 *
 * FetchObject (unary, on the receiver): open a PullObject stream to the
 * holder and write every chunk straight into the local store with a pull
 * writer; seal when all chunks are in. Any failure or cancellation aborts
 * the writer, so no half object is ever visible. mt__worker_fetch is the
 * same without an incoming call (tasks' object arguments). One pull per
 * object at a time: a second fetch of an object being pulled joins the
 * first and ends with it.
 *
 * Every transfer in flight is on the worker's xfers list so shutdown can
 * cancel them before the store goes away.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "objstore/store.h"
#include "objstore/transfer.h"
#include "proto/services.h"
#include "worker/worker.h"
#include "worker_service.pb-c.h"

#define PULL_WINDOW 4
#define MAX_CHUNK (16u * 1024u * 1024u)
#define FETCH_DEFAULT_TIMEOUT_MS 60000

/* Someone else waiting for a fetch already in flight for the same id
 * (a second task needing the object, or a FetchObject call). */
struct fetch_waiter {
    struct fetch_waiter *next;
    mt_worker_fetch_fn done;       /* or, when NULL, reply to call */
    void *arg;
    struct mt_rpc_call *call;
};

enum xfer_kind { XFER_PULL, XFER_FETCH };

/* One transfer in flight. Guarded by: loop thread. */
struct mt_worker_xfer {
    enum xfer_kind kind;
    struct mt_worker *w;
    struct mt_worker_xfer *prev, *next;
    struct mt_rpc_call *call;        /* the incoming call we serve */
    mt_object_id id;
    /* pull (sender) */
    struct mt_xfer_reader *reader;
    struct mt_object_info info;
    uint64_t off, total, chunk;
    bool info_sent;
    /* fetch (receiver) */
    struct mt_rpc_channel *ch;
    struct mt_rpc_stream *stream;
    struct mt_xfer_writer *writer;
    char from[128];                  /* the holder's address */
    mt_worker_fetch_fn done;         /* internal fetch: no call */
    void *done_arg;
    struct fetch_waiter *waiters;    /* joined this fetch */
    int err;                         /* first local failure */
    char errmsg[160];
    int64_t t0_us;
};

static int64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct mt_worker_xfer *xfer_new(struct mt_worker *w, enum xfer_kind k,
                                       struct mt_rpc_call *call)
{
    struct mt_worker_xfer *x = mt_xcalloc(1, sizeof(*x));

    x->kind = k;
    x->w = w;
    x->call = call;
    x->next = w->xfers;
    if (w->xfers)
        w->xfers->prev = x;
    w->xfers = x;
    return x;
}

static void xfer_free(struct mt_worker_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        x->w->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    mt_xfer_reader_close(x->reader);
    mt_xfer_writer_cancel(x->writer);
    while (x->waiters) { /* none in practice: fetch_on_done ends them */
        struct fetch_waiter *fw = x->waiters;
        x->waiters = fw->next;
        free(fw);
    }
    free(x);
}

/* The fetch of id in flight on w, or NULL. */
static struct mt_worker_xfer *fetch_in_flight(struct mt_worker *w,
                                              const mt_object_id *id)
{
    for (struct mt_worker_xfer *x = w->xfers; x; x = x->next)
        if (x->kind == XFER_FETCH && mt_object_id_eq(&x->id, id) &&
            (x->stream || x->ch))
            return x;
    return NULL;
}

static void join_fetch(struct mt_worker_xfer *x, mt_worker_fetch_fn done,
                       void *arg, struct mt_rpc_call *call)
{
    struct fetch_waiter *fw = mt_xcalloc(1, sizeof(*fw));

    fw->done = done;
    fw->arg = arg;
    fw->call = call;
    fw->next = x->waiters;
    x->waiters = fw;
}

/* The fetch x ended (err 0: the object is here): tell who joined it. */
static void end_waiters(struct mt_worker_xfer *x, int err, const char *msg)
{
    Manta__FetchObjectReply reply = MANTA__FETCH_OBJECT_REPLY__INIT;
    struct fetch_waiter *fw;

    while ((fw = x->waiters)) {
        x->waiters = fw->next;
        if (fw->done) {
            fw->done(fw->arg, err, msg);
        } else if (err) {
            mt_rpc_fail(fw->call, err, msg);
        } else {
            reply.data_size = x->total;
            reply.elapsed_us = (uint64_t)(now_us() - x->t0_us);
            mt_rpc_reply(fw->call, &reply.base);
        }
        free(fw);
    }
}

static int take_id(const ProtobufCBinaryData *b, mt_object_id *id)
{
    if (b->len != MT_OBJECT_ID_LEN)
        return -MT_EINVAL;
    memcpy(id->b, b->data, MT_OBJECT_ID_LEN);
    return 0;
}

/* ---- object info <-> protobuf ----------------------------------------------- */

struct pb_info {
    Manta__ObjectInfo info;
    Manta__TensorDesc tensor;
};

static void info_to_pb(const struct mt_object_info *in, struct pb_info *p)
{
    manta__object_info__init(&p->info);
    p->info.data_size = in->data_size;
    p->info.meta_size = in->meta_size;
    p->info.flags = in->flags;
    if (!(in->flags & MT_OBJ_TENSOR))
        return;
    manta__tensor_desc__init(&p->tensor);
    p->tensor.code = in->tensor.code;
    p->tensor.bits = in->tensor.bits;
    p->tensor.lanes = in->tensor.lanes;
    p->tensor.n_shape = in->tensor.ndim;
    p->tensor.shape = (int64_t *)in->tensor.shape;
    p->tensor.n_strides = in->tensor.ndim;
    p->tensor.strides = (int64_t *)in->tensor.strides;
    p->info.tensor = &p->tensor;
}

/* RET 0 or -MT_EPROTO when the peer's description does not make sense. */
static int info_from_pb(const Manta__ObjectInfo *p, struct mt_object_info *out)
{
    const Manta__TensorDesc *t = p->tensor;

    memset(out, 0, sizeof(*out));
    out->data_size = p->data_size;
    out->meta_size = p->meta_size;
    out->flags = p->flags & MT_OBJ_FLAGS_ALL & ~MT_OBJ_TENSOR;
    if (!t)
        return 0;
    if (t->n_shape > MT_TENSOR_MAX_DIMS || t->code > 255 || t->bits > 255 ||
        t->lanes > 65535 || (t->n_strides && t->n_strides != t->n_shape))
        return -MT_EPROTO;
    out->flags |= MT_OBJ_TENSOR;
    out->tensor.code = (uint8_t)t->code;
    out->tensor.bits = (uint8_t)t->bits;
    out->tensor.lanes = (uint16_t)t->lanes;
    out->tensor.ndim = (uint32_t)t->n_shape;
    for (size_t i = 0; i < t->n_shape; i++) {
        out->tensor.shape[i] = t->shape[i];
        out->tensor.strides[i] = t->n_strides ? t->strides[i] : 0;
    }
    return 0;
}

/* ---- PullObject: the sending side ------------------------------------------- */

static void pull_pump(void *arg);

static void pull_end(struct mt_worker_xfer *x, int err, const char *msg)
{
    if (err)
        mt_rpc_fail(x->call, err, msg);
    else
        mt_rpc_stream_finish(x->call);
    xfer_free(x);
}

static void pull_on_cancel(void *arg)
{
    pull_end(arg, -MT_ECANCELED, "puller went away");
}

/* Queue chunks until the window is full or the object is all sent. */
static void pull_pump(void *arg)
{
    struct mt_worker_xfer *x = arg;

    while (mt_rpc_stream_backlog(x->call) < PULL_WINDOW) {
        Manta__ObjectChunk m = MANTA__OBJECT_CHUNK__INIT;
        struct pb_info pi;
        const uint8_t *ptr = NULL;
        uint64_t n = 0;
        int rc;

        if (x->info_sent && x->off >= x->total) {
            pull_end(x, 0, NULL);
            return;
        }
        if (x->off < x->total) {
            rc = mt_xfer_reader_read(x->reader, x->off, x->chunk, &ptr, &n);
            if (rc < 0) {
                pull_end(x, rc, "cannot read the object");
                return;
            }
        }
        if (!x->info_sent) {
            info_to_pb(&x->info, &pi);
            m.info = &pi.info;
            m.chunk_size = (uint32_t)x->chunk;
        }
        m.offset = x->off;
        m.data.data = (uint8_t *)ptr;
        m.data.len = n;
        if (mt_rpc_stream_send(x->call, &m.base) < 0) {
            pull_end(x, -MT_ECANCELED, NULL);
            return;
        }
        x->info_sent = true;
        x->off += n;
    }
}

void mt__worker_h_pull(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__PullObjectRequest *req = (const Manta__PullObjectRequest *)m;
    struct mt_worker *w = arg;
    struct mt_worker_xfer *x;
    mt_object_id id;
    int rc;

    if (take_id(&req->object_id, &id) < 0) {
        mt_rpc_fail(call, -MT_EINVAL, "object_id must be 20 bytes");
        return;
    }
    if (req->chunk_size > MAX_CHUNK) {
        mt_rpc_fail(call, -MT_EINVAL, "chunk_size above 16 MiB");
        return;
    }
    if (!w->objects.store) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "this worker has no object store");
        return;
    }
    x = xfer_new(w, XFER_PULL, call);
    x->id = id;
    rc = mt_xfer_reader_open(w->objects.store, &id, &x->info, &x->reader);
    if (rc < 0) {
        pull_end(x, rc, rc == -MT_ENOENT   ? "no such object here"
                        : rc == -MT_EAGAIN ? "object not sealed yet"
                                           : mt_strerror(rc));
        return;
    }
    x->total = x->info.data_size + x->info.meta_size;
    x->chunk = req->chunk_size ? req->chunk_size : MT_XFER_DEFAULT_CHUNK;
    mt_rpc_call_on_cancel(call, pull_on_cancel, x);
    mt_rpc_call_on_drain(call, pull_pump, x);
    pull_pump(x);
}

/* ---- FetchObject: the receiving side ------------------------------------------ */

static void fetch_fail_local(struct mt_worker_xfer *x, int err,
                             const char *msg)
{
    if (!x->err) {
        x->err = err;
        snprintf(x->errmsg, sizeof(x->errmsg), "%s", msg);
    }
    if (x->stream)
        mt_rpc_stream_cancel(x->stream);
}

static void fetch_on_chunk(void *arg, const ProtobufCMessage *msg)
{
    const Manta__ObjectChunk *c = (const Manta__ObjectChunk *)msg;
    struct mt_worker_xfer *x = arg;
    struct mt_object_info info;
    int rc;

    if (x->err)
        return;
    if (!x->writer) {
        if (!c->info || c->chunk_size == 0 || c->chunk_size > MAX_CHUNK ||
            info_from_pb(c->info, &info) < 0) {
            fetch_fail_local(x, -MT_EPROTO, "bad first chunk from the holder");
            return;
        }
        rc = mt_xfer_writer_open(x->w->objects.store, &x->id, &info, c->chunk_size,
                                 &x->writer);
        if (rc < 0) {
            fetch_fail_local(x, rc, mt_strerror(rc));
            return;
        }
        x->total = info.data_size;
    }
    if (c->data.len == 0)
        return;
    rc = mt_xfer_writer_write(x->writer, c->offset, c->data.data, c->data.len);
    if (rc < 0)
        fetch_fail_local(x, -MT_EPROTO, "bad chunk offset or length");
}

static void fetch_on_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt_worker_xfer *x = arg;
    Manta__FetchObjectReply reply = MANTA__FETCH_OBJECT_REPLY__INIT;
    int err = x->err ? x->err : mt_rpc_status_to_err(st->code);
    char msg[512];

    x->stream = NULL;
    if (!err && !x->writer)
        err = -MT_EPROTO; /* the stream ended without the object's info */
    if (!err) {
        reply.data_size = 0;
        err = mt_xfer_writer_finish(x->writer);
        if (err == 0) {
            x->writer = NULL;
            reply.data_size = x->total;
        } else if (err != -MT_ESTATE) {
            x->writer = NULL; /* finish aborted and freed it */
        }
    }
    mt_rpc_channel_destroy(x->ch);
    x->ch = NULL;
    if (err)
        snprintf(msg, sizeof(msg), "pull from %s failed: %s",
                 x->from, x->err ? x->errmsg
                 : st->message && *st->message ? st->message
                                               : mt_strerror(err));
    end_waiters(x, err == -MT_ESTATE ? -MT_EPROTO : err, err ? msg : "");
    if (x->done) {
        x->done(x->done_arg, err == -MT_ESTATE ? -MT_EPROTO : err,
                err ? msg : "");
    } else if (err) {
        mt_rpc_fail(x->call, err == -MT_ESTATE ? -MT_EPROTO : err, msg);
    } else {
        reply.elapsed_us = (uint64_t)(now_us() - x->t0_us);
        mt_rpc_reply(x->call, &reply.base);
    }
    xfer_free(x);
}

static void fetch_on_cancel(void *arg)
{
    struct mt_worker_xfer *x = arg;

    fetch_fail_local(x, -MT_ECANCELED, "fetch cancelled");
}

void mt__worker_h_fetch(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__FetchObjectRequest *req = (const Manta__FetchObjectRequest *)m;
    Manta__PullObjectRequest preq = MANTA__PULL_OBJECT_REQUEST__INIT;
    Manta__FetchObjectReply reply = MANTA__FETCH_OBJECT_REPLY__INIT;
    struct mt_worker *w = arg;
    struct mt_worker_xfer *x;
    struct mt_object_info info;
    mt_object_id id;
    int rc;

    if (take_id(&req->object_id, &id) < 0 || !req->from_address ||
        !strchr(req->from_address, ':')) {
        mt_rpc_fail(call, -MT_EINVAL, "need a 20-byte object_id and "
                                      "from_address host:port");
        return;
    }
    if (!w->objects.store) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "this worker has no object store");
        return;
    }
    if (mt_store_get(w->objects.store, &id, &info) == 0) {
        mt_store_release(w->objects.store, &id);
        reply.already_local = true;
        reply.data_size = info.data_size;
        mt_rpc_reply(call, &reply.base);
        return;
    }
    if ((x = fetch_in_flight(w, &id))) { /* a task's pull: wait for it */
        join_fetch(x, NULL, NULL, call);
        return;
    }
    x = xfer_new(w, XFER_FETCH, call);
    x->id = id;
    x->t0_us = now_us();
    snprintf(x->from, sizeof(x->from), "%s", req->from_address);
    rc = mt_rpc_channel_create(w->eng, req->from_address, 0, &x->ch);
    if (rc == 0) {
        preq.object_id = req->object_id;
        rc = mt_rpc_stream_open(x->ch, &mt_worker_pull_object, &preq.base,
                                req->timeout_ms ? (int)req->timeout_ms
                                                : FETCH_DEFAULT_TIMEOUT_MS,
                                0, fetch_on_chunk, fetch_on_done, x,
                                &x->stream);
    }
    if (rc < 0) {
        mt_rpc_channel_destroy(x->ch);
        mt_rpc_fail(call, rc, "cannot reach the holder");
        xfer_free(x);
        return;
    }
    mt_rpc_call_on_cancel(call, fetch_on_cancel, x);
}

int mt__worker_fetch(struct mt_worker *w, const mt_object_id *id,
                     const char *from, int timeout_ms, mt_worker_fetch_fn done,
                     void *arg)
{
    Manta__PullObjectRequest preq = MANTA__PULL_OBJECT_REQUEST__INIT;
    struct mt_worker_xfer *x;
    int rc;

    if (!w->objects.store)
        return -MT_EUNAVAIL;
    if (mt_store_contains(w->objects.store, id) == 0)
        return 1;
    if ((x = fetch_in_flight(w, id))) { /* one pull per object at a time */
        join_fetch(x, done, arg, NULL);
        return 0;
    }
    x = xfer_new(w, XFER_FETCH, NULL);
    x->id = *id;
    x->t0_us = now_us();
    x->done = done;
    x->done_arg = arg;
    snprintf(x->from, sizeof(x->from), "%s", from);
    rc = mt_rpc_channel_create(w->eng, from, 0, &x->ch);
    if (rc == 0) {
        preq.object_id.data = x->id.b;
        preq.object_id.len = MT_OBJECT_ID_LEN;
        rc = mt_rpc_stream_open(x->ch, &mt_worker_pull_object, &preq.base,
                                timeout_ms > 0 ? timeout_ms
                                               : FETCH_DEFAULT_TIMEOUT_MS,
                                0, fetch_on_chunk, fetch_on_done, x,
                                &x->stream);
    }
    if (rc < 0) {
        mt_rpc_channel_destroy(x->ch);
        xfer_free(x);
    }
    return rc;
}

void mt__worker_xfers_cancel(struct mt_worker *w)
{
    for (struct mt_worker_xfer *x = w->xfers; x; x = x->next)
        if (x->kind == XFER_FETCH)
            fetch_fail_local(x, -MT_ECANCELED, "worker stopping");
}
