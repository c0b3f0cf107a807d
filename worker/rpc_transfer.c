/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_transfer.c -- the wire of object transfers between nodes (see
 * transfer.h): the PullObject and FetchObject handlers, and the PullObject
 * streams this worker opens for its fetches.
 *
 * PullObject (server stream, on the holder): pin the object with a chunk
 * reader (objstore/transfer.h), send its info, then its bytes in chunks
 * of the size the puller asks for (4 MiB when it names none). Each chunk
 * goes out as a small hand-encoded head (chunk_wire.h) and the payload
 * lent to gRPC straight from the pinned store mapping, with no copy; the
 * pin is dropped only once gRPC has given every payload back. Up to
 * PULL_WINDOW chunks are queued in the stream at once; the stream's drain
 * callback asks for more, so a slow receiver never makes the sender hold
 * the whole object.
 *
 * FetchObject (unary, on the receiver): answered at once when the object
 * is here, else when the fetch (transfer.c) it starts or joins ends. A
 * client that goes away cancels the fetch it started.
 *
 * The wire: a fetch gets its own bulk channel (its own connection, wide
 * windows) to the holder and a raw PullObject stream: each ObjectChunk is
 * parsed where gRPC received it (chunk_wire.h) and its payload copied once,
 * from gRPC's buffers into the unsealed object (mt_fetch_chunk_fill). A
 * message that does not parse, or a chunk that does not fit, fails the
 * fetch and the object is aborted. The channel goes when the stream ends.
 * The bytes on the wire are plain ObjectChunk messages, so older workers
 * pull from and serve to this one unchanged.
 *
 * THREAD: the worker's loop thread.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "objstore/store.h"
#include "objstore/transfer.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker/chunk_wire.h"
#include "worker/rpc_checks.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

#define PULL_WINDOW 4                   /* chunks queued per stream */
#define PULL_CHUNK (8u * 1024u * 1024u) /* the chunk size we ask for */
#define PULL_MAX_MSG (MT_TRANSFER_MAX_CHUNK + 64 * 1024) /* chunk + head */

/* One PullObject stream we serve. Guarded by: loop thread. */
struct pull_out {
    struct mt_rpc_call *call;
    struct mt_xfer_reader *reader;  /* the pin: closed when over, none lent */
    struct mt_object_info info;
    uint64_t off, total, chunk;
    bool info_sent;
    bool over;                      /* the call is ended */
    int lent;                       /* payloads gRPC still holds */
};

/* One PullObject stream we read for a fetch. */
struct pull_in {
    struct mt_fetch *f;
    struct mt_rpc_channel *ch;
    struct mt_rpc_stream *stream;
};

/* A parsed chunk and the receive buffers its payload is in. */
struct in_msg {
    const struct iovec *segs;
    size_t n;
    const struct mt_chunk_msg *m;
};

/* ---- object info <-> protobuf -------------------------------------------- */

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

/* ---- PullObject: the sending side ---------------------------------------- */

/* Free x once the call is ended and gRPC has given back every body. */
static void pull_put(struct pull_out *x)
{
    if (!x->over || x->lent > 0)
        return;
    mt_xfer_reader_close(x->reader);
    free(x);
}

static void pull_end(struct pull_out *x, int err, const char *msg)
{
    if (err)
        mt_rpc_fail(x->call, err, msg);
    else
        mt_rpc_stream_finish(x->call);
    x->over = true;
    pull_put(x);
}

static void pull_on_cancel(void *arg)
{
    pull_end(arg, -MT_ECANCELED, "puller went away");
}

static void pull_lent_back(void *arg)
{
    struct pull_out *x = arg;

    x->lent--;
    pull_put(x);
}

/*
 * Send n bytes at x->off: a small head (the info on the first message,
 * offset, chunk size, the payload's tag) then the payload lent straight
 * from the pinned object. An empty object's one message goes encoded.
 */
static int pull_send(struct pull_out *x, const uint8_t *ptr, uint64_t n)
{
    uint8_t head[MT_CHUNK_HEAD_MAX], info[MT_CHUNK_INFO_MAX];
    size_t info_len = 0, head_len;
    struct pb_info pi;
    int rc;

    if (!x->info_sent) {
        info_to_pb(&x->info, &pi);
        info_len = protobuf_c_message_get_packed_size(&pi.info.base);
        if (info_len > sizeof(info))
            return -MT_EINVAL; /* not with MT_TENSOR_MAX_DIMS dims */
        protobuf_c_message_pack(&pi.info.base, info);
    }
    head_len = mt_chunk_encode_head(head, info, info_len, x->off,
                                    x->info_sent ? 0 : (uint32_t)x->chunk, n);
    if (n == 0) {
        Manta__ObjectChunk m = MANTA__OBJECT_CHUNK__INIT;

        m.info = x->info_sent ? NULL : &pi.info;
        m.chunk_size = x->info_sent ? 0 : (uint32_t)x->chunk;
        m.offset = x->off;
        return mt_rpc_stream_send(x->call, &m.base);
    }
    rc = mt_rpc_stream_send_raw(x->call, head, head_len, ptr, n,
                                pull_lent_back, x);
    if (rc == 0)
        x->lent++;
    return rc;
}

/* Queue chunks until the window is full or the object is all sent. */
static void pull_pump(void *arg)
{
    struct pull_out *x = arg;

    while (mt_rpc_stream_backlog(x->call) < PULL_WINDOW) {
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
        rc = pull_send(x, ptr, n);
        if (rc < 0) {
            pull_end(x, rc == -MT_ECANCELED ? rc : -MT_ERPC,
                     rc == -MT_ECANCELED ? NULL : "cannot queue a chunk");
            return;
        }
        x->info_sent = true;
        x->off += n;
    }
}

static void h_pull(struct mt_rpc_call *call, const ProtobufCMessage *m,
                   void *arg)
{
    const Manta__PullObjectRequest *req = (const Manta__PullObjectRequest *)m;
    struct mt_worker *w = arg;
    struct pull_out *x;
    mt_object_id id;
    int rc;

    if (mt_pb_object_id(&req->object_id, &id) < 0) {
        mt_rpc_fail(call, -MT_EINVAL, "object_id must be 20 bytes");
        return;
    }
    if (req->chunk_size > MT_TRANSFER_MAX_CHUNK) {
        mt_rpc_fail(call, -MT_EINVAL, "chunk_size above 16 MiB");
        return;
    }
    if (!w->objects.store) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "this worker has no object store");
        return;
    }
    x = mt_xcalloc(1, sizeof(*x));
    x->call = call;
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

/* ---- the wire of fetches: reading a holder's PullObject stream ----------- */

static void in_fill(void *arg, uint8_t *dst, size_t len)
{
    const struct in_msg *im = arg;

    (void)len; /* == im->m->data_len: mt_fetch_chunk_fill passes it on */
    mt_chunk_copy_data(im->segs, im->n, im->m, dst);
}

/* The first chunk's ObjectInfo bytes, checked. RET 0 or -MT_EPROTO. */
static int in_info(const struct mt_chunk_msg *m, struct mt_object_info *info)
{
    Manta__ObjectInfo *pb;
    int rc;

    pb = manta__object_info__unpack(NULL, m->info_len, m->info);
    if (!pb)
        return -MT_EPROTO;
    rc = mt_worker_object_info_from_pb(pb, info);
    manta__object_info__free_unpacked(pb, NULL);
    return rc;
}

/* One ObjectChunk, parsed where it lies; its payload is copied once,
 * from gRPC's buffers into the unsealed object. */
static void in_on_raw(void *arg, const struct iovec *segs, size_t n)
{
    struct pull_in *p = arg;
    struct mt_chunk_msg m;
    struct mt_object_info info;
    struct in_msg im = {segs, n, &m};
    bool described;

    if (mt_chunk_parse(segs, n, &m) < 0) {
        mt_fetch_fail(p->f, -MT_EPROTO, "malformed chunk from the holder");
        return;
    }
    described = m.has_info && in_info(&m, &info) == 0;
    mt_fetch_chunk_fill(p->f, described ? &info : NULL, m.chunk_size,
                        m.offset, (size_t)m.data_len, in_fill, &im);
}

static void in_on_done(void *arg, const struct mt_rpc_status *st,
                       const ProtobufCMessage *resp)
{
    struct pull_in *p = arg;

    (void)resp;
    mt_rpc_channel_destroy(p->ch);
    mt_fetch_stream_ended(p->f, mt_rpc_status_to_err(st->code), st->message);
    free(p);
}

static int wire_open(void *arg, struct mt_fetch *f, const mt_object_id *id,
                     const char *from, int timeout_ms, void **stream)
{
    Manta__PullObjectRequest req = MANTA__PULL_OBJECT_REQUEST__INIT;
    struct mt_worker *w = arg;
    struct pull_in *p = mt_xcalloc(1, sizeof(*p));
    int rc;

    p->f = f;
    rc = mt_rpc_channel_create_bulk(w->eng, from, PULL_MAX_MSG, &p->ch);
    if (rc == 0) {
        req.object_id.data = (uint8_t *)id->b;
        req.object_id.len = MT_OBJECT_ID_LEN;
        req.chunk_size = PULL_CHUNK;
        rc = mt_rpc_stream_open_raw(p->ch, &mt_worker_pull_object, &req.base,
                                    timeout_ms, 0, in_on_raw, in_on_done, p,
                                    &p->stream);
    }
    if (rc < 0) {
        mt_rpc_channel_destroy(p->ch);
        free(p);
        return rc;
    }
    *stream = p;
    return 0;
}

static void wire_cancel(void *arg, void *stream)
{
    struct pull_in *p = stream;

    (void)arg;
    mt_rpc_stream_cancel(p->stream);
}

static const struct mt_transfer_wire wire = {wire_open, wire_cancel};

/* ---- FetchObject: the receiving side ------------------------------------- */

static void fetch_replied(void *arg, const struct mt_fetch_result *r)
{
    Manta__FetchObjectReply reply = MANTA__FETCH_OBJECT_REPLY__INIT;
    struct mt_rpc_call *call = arg;

    if (r->err) {
        mt_rpc_fail(call, r->err, r->msg);
        return;
    }
    reply.data_size = r->size;
    reply.elapsed_us = r->elapsed_us;
    mt_rpc_reply(call, &reply.base);
}

static void fetch_on_cancel(void *arg)
{
    mt_fetch_cancel(arg);
}

static void h_fetch(struct mt_rpc_call *call, const ProtobufCMessage *m,
                    void *arg)
{
    const Manta__FetchObjectRequest *req = (const Manta__FetchObjectRequest *)m;
    Manta__FetchObjectReply reply = MANTA__FETCH_OBJECT_REPLY__INIT;
    struct mt_worker *w = arg;
    struct mt_object_info info;
    struct mt_fetch *f;
    mt_object_id id;
    int rc;

    if (mt_pb_object_id(&req->object_id, &id) < 0 || !req->from_address ||
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
    rc = mt_transfers_fetch(w->xfers, &id, req->from_address,
                            (int)req->timeout_ms, fetch_replied, call, &f);
    if (rc < 0) {
        mt_rpc_fail(call, rc, "cannot reach the holder");
        return;
    }
    if (f) /* started here, not joined: a client gone cancels it */
        mt_rpc_call_on_cancel(call, fetch_on_cancel, f);
}

static void start(struct mt_worker *w)
{
    mt_transfers_set_wire(w->xfers, &wire, w);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_pull_object, h_pull},
    {&mt_worker_fetch_object, h_fetch},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_transfer = {handlers, start,
                                                         NULL};
