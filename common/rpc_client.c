/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_client.c -- the client half of the rpc layer: channels, unary calls,
 * server streams and a synchronous helper for command-line tools.
 *
 * A unary call is one batch of six ops (notes/grpc-core.md section 3). A
 * server stream is a send batch, a status batch and a chain of single
 * RECV_MESSAGE batches; it completes once all three have come back. A raw
 * stream hands each message over as the slices gRPC received it in
 * (peeked, not copied), for callers that place bulk bytes themselves.
 * Bulk channels get their own connection and transport settings for
 * large streams (bulk_args).
 *
 * Channels keep a list of their calls so destroying a channel can cancel
 * them; the channel struct itself lives until the last call has delivered
 * its callback.
 */
#include "common/rpc.h"

#include <grpc/grpc_security.h>
#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/log.h"
#include "common/rpc_int.h"

struct registered {
    const struct mt_rpc_method *m;
    void *handle;
};

struct mt_rpc_channel {
    struct mt_rpc_engine *eng;
    grpc_channel *ch;
    char *target;
    struct registered *reg;
    size_t n_reg;
    struct client_call *calls; /* live calls, doubly linked */
    bool closing;
    int refs;                  /* 1 for the owner + 1 per live call */
};

/* One client call, unary or streaming. Guarded by: loop thread. */
struct client_call {
    struct mt_rpc_channel *ch;
    struct client_call *prev, *next;
    const struct mt_rpc_method *m;
    grpc_call *call;
    grpc_byte_buffer *send_bb;
    grpc_byte_buffer *recv_bb;
    grpc_metadata_array init_md;
    grpc_metadata_array trail_md;
    grpc_status_code status;
    grpc_slice details;
    struct mt__rpc_tag main_tag;   /* unary: everything; stream: send side */
    struct mt__rpc_tag status_tag; /* stream only */
    struct mt__rpc_tag recv_tag;   /* stream only */
    int outstanding;               /* batches in flight */
    bool recv_done;
    bool malformed;
    mt_rpc_done_fn done;
    mt_rpc_msg_fn on_msg;
    mt_rpc_raw_fn on_raw;          /* raw stream: messages as segments */
    struct iovec *segs;            /* raw stream: reused per message */
    size_t cap_segs;
    void *arg;
};

static void channel_unref(struct mt_rpc_channel *ch)
{
    if (--ch->refs > 0)
        return;
    if (ch->ch)
        grpc_channel_destroy(ch->ch);
    ch->eng->channels--;
    free(ch->reg);
    free(ch->target);
    free(ch);
}

/* The arguments every channel gets; RET how many were set. */
static size_t common_args(grpc_arg *args, int limit)
{
    memset(args, 0, 5 * sizeof(*args));
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = limit;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = limit;
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = (char *)GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS;
    args[2].value.integer = 100;
    args[3].type = GRPC_ARG_INTEGER;
    args[3].key = (char *)GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
    args[3].value.integer = 1000;
    /* A large receive window lets object pulls stream at memory speed
     * instead of waiting for window updates every 64 KiB. */
    args[4].type = GRPC_ARG_INTEGER;
    args[4].key = (char *)GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES;
    args[4].value.integer = 16 * 1024 * 1024;
    /* Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: gRPC also uses it as the
     * connect timeout, and 100 ms is too short for a loaded machine. */
    return 5;
}

/*
 * What a bulk channel adds: its own connection (a local subchannel pool,
 * so control calls to the same node never queue behind a pull), the
 * largest HTTP/2 frames the peer may send us, a fixed wide window instead
 * of BDP probing, and big socket reads. RET how many were set.
 */
static size_t bulk_args(grpc_arg *args)
{
    static const struct {
        const char *key;
        int value;
    } bulk[] = {
        {GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1},
        {GRPC_ARG_HTTP2_MAX_FRAME_SIZE, 16 * 1024 * 1024 - 1},
        {GRPC_ARG_HTTP2_BDP_PROBE, 0},
        {GRPC_ARG_TCP_READ_CHUNK_SIZE, 1024 * 1024},
        {GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, 256 * 1024},
        {GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, 4 * 1024 * 1024},
    };
    size_t n = sizeof(bulk) / sizeof(bulk[0]);

    memset(args, 0, n * sizeof(*args));
    for (size_t i = 0; i < n; i++) {
        args[i].type = GRPC_ARG_INTEGER;
        args[i].key = (char *)bulk[i].key;
        args[i].value.integer = bulk[i].value;
    }
    return n;
}

static int channel_create(struct mt_rpc_engine *eng, const char *target,
                          int max_msg_bytes, bool bulk,
                          struct mt_rpc_channel **out)
{
    struct mt_rpc_channel *ch;
    grpc_channel_credentials *creds;
    grpc_arg args[16];
    grpc_channel_args cargs = {0, args};

    if (!target || !*target)
        return -MT_EINVAL;
    ch = calloc(1, sizeof(*ch));
    if (!ch)
        return -MT_ENOMEM;
    cargs.num_args = common_args(
        args, max_msg_bytes ? max_msg_bytes : MT_RPC_DEFAULT_MAX_MSG);
    if (bulk) {
        args[4].value.integer = MT_RPC_BULK_WINDOW;
        cargs.num_args += bulk_args(args + cargs.num_args);
    }
    creds = mt__rpc_channel_creds(eng);
    ch->ch = grpc_channel_create(target, creds, &cargs);
    grpc_channel_credentials_release(creds);
    if (!ch->ch) {
        free(ch);
        return -MT_EINVAL;
    }
    ch->eng = eng;
    ch->target = strdup(target);
    ch->refs = 1;
    eng->channels++;
    *out = ch;
    return 0;
}

int mt_rpc_channel_create(struct mt_rpc_engine *eng, const char *target,
                          int max_msg_bytes, struct mt_rpc_channel **out)
{
    return channel_create(eng, target, max_msg_bytes, false, out);
}

int mt_rpc_channel_create_bulk(struct mt_rpc_engine *eng, const char *target,
                               int max_msg_bytes, struct mt_rpc_channel **out)
{
    return channel_create(eng, target, max_msg_bytes, true, out);
}

void mt_rpc_channel_destroy(struct mt_rpc_channel *ch)
{
    if (!ch)
        return;
    ch->closing = true;
    for (struct client_call *c = ch->calls; c; c = c->next)
        grpc_call_cancel(c->call, NULL);
    channel_unref(ch);
}

const char *mt_rpc_channel_target(const struct mt_rpc_channel *ch)
{
    return ch->target;
}

static void *method_handle(struct mt_rpc_channel *ch,
                           const struct mt_rpc_method *m)
{
    struct registered *r;

    for (size_t i = 0; i < ch->n_reg; i++)
        if (ch->reg[i].m == m)
            return ch->reg[i].handle;
    r = realloc(ch->reg, (ch->n_reg + 1) * sizeof(*r));
    if (!r)
        return NULL;
    ch->reg = r;
    r[ch->n_reg].m = m;
    r[ch->n_reg].handle = grpc_channel_register_call(ch->ch, m->path, NULL,
                                                     NULL);
    return r[ch->n_reg++].handle;
}

/* ---- call bookkeeping ------------------------------------------------------ */

static struct client_call *call_new(struct mt_rpc_channel *ch,
                                    const struct mt_rpc_method *m,
                                    const ProtobufCMessage *req, int timeout_ms)
{
    struct client_call *c;
    void *handle;

    if (ch->closing)
        return NULL;
    handle = method_handle(ch, m);
    c = calloc(1, sizeof(*c));
    if (!c || !handle) {
        free(c);
        return NULL;
    }
    c->ch = ch;
    c->m = m;
    c->call = grpc_channel_create_registered_call(
        ch->ch, NULL, GRPC_PROPAGATE_DEFAULTS, ch->eng->cq, handle,
        mt__rpc_deadline(timeout_ms), NULL);
    c->send_bb = mt__rpc_encode(req);
    grpc_metadata_array_init(&c->init_md);
    grpc_metadata_array_init(&c->trail_md);
    c->details = grpc_empty_slice();
    ch->refs++;
    c->next = ch->calls;
    if (ch->calls)
        ch->calls->prev = c;
    ch->calls = c;
    return c;
}

static void call_free(struct client_call *c)
{
    struct mt_rpc_channel *ch = c->ch;

    if (c->prev)
        c->prev->next = c->next;
    else
        ch->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->send_bb)
        grpc_byte_buffer_destroy(c->send_bb);
    if (c->recv_bb)
        grpc_byte_buffer_destroy(c->recv_bb);
    grpc_metadata_array_destroy(&c->init_md);
    grpc_metadata_array_destroy(&c->trail_md);
    grpc_slice_unref(c->details);
    grpc_call_unref(c->call);
    free(c->segs);
    free(c);
    channel_unref(ch);
}

/* Deliver the final status (and, for unary, the reply) and free the call. */
static void call_complete(struct client_call *c)
{
    struct mt_rpc_status st;
    ProtobufCMessage *resp = NULL;
    char *details = grpc_slice_to_c_string(c->details);

    st.code = c->status;
    st.message = details;
    if (c->malformed) {
        st.code = GRPC_STATUS_INTERNAL;
        st.message = "malformed response message";
    } else if (st.code == GRPC_STATUS_OK && c->m->kind == MT_RPC_UNARY) {
        resp = mt__rpc_decode(c->m->resp, c->recv_bb);
        if (!resp) {
            st.code = GRPC_STATUS_INTERNAL;
            st.message = "malformed or missing response message";
        }
    }
    c->done(c->arg, &st, resp);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    gpr_free(details);
    call_free(c);
}

/* ---- unary -------------------------------------------------------------- */

static void on_unary(struct mt__rpc_tag *tag, bool ok)
{
    struct client_call *c =
        (struct client_call *)((char *)tag -
                               offsetof(struct client_call, main_tag));

    if (!ok && c->status == GRPC_STATUS_OK)
        c->status = GRPC_STATUS_UNKNOWN;
    call_complete(c);
}

/*
 * Create a call for m and fill the four ops every call starts with: send
 * metadata, the request and close; receive the initial metadata.
 * RET the call, or NULL with *err set.
 */
static struct client_call *call_begin(struct mt_rpc_channel *ch,
                                      const struct mt_rpc_method *m,
                                      const ProtobufCMessage *req,
                                      int timeout_ms, unsigned flags,
                                      grpc_op *ops, int *err)
{
    struct client_call *c = call_new(ch, m, req, timeout_ms);

    if (!c) {
        *err = ch->closing ? -MT_ECLOSED : -MT_ENOMEM;
        return NULL;
    }
    memset(ops, 0, 4 * sizeof(*ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = ch->eng->n_auth_md;
    ops[0].data.send_initial_metadata.metadata = &ch->eng->auth_md;
    if (flags & MT_RPC_WAIT_FOR_READY)
        ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = c->send_bb;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->init_md;
    return c;
}

int mt_rpc_unary(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                 const ProtobufCMessage *req, int timeout_ms, unsigned flags,
                 mt_rpc_done_fn done, void *arg)
{
    struct client_call *c;
    grpc_op ops[6];
    int err = 0;

    if (!m || m->kind != MT_RPC_UNARY || !req || !done || timeout_ms <= 0 ||
        req->descriptor != m->req)
        return -MT_EINVAL;
    c = call_begin(ch, m, req, timeout_ms, flags, ops, &err);
    if (!c)
        return err;
    c->done = done;
    c->arg = arg;
    memset(&ops[4], 0, 2 * sizeof(ops[0]));
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &c->recv_bb;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &c->trail_md;
    ops[5].data.recv_status_on_client.status = &c->status;
    ops[5].data.recv_status_on_client.status_details = &c->details;
    c->main_tag.fn = on_unary;
    if (mt__rpc_start_batch(ch->eng, c->call, ops, 6, &c->main_tag) !=
        GRPC_CALL_OK) {
        call_free(c);
        return -MT_ERPC;
    }
    return 0;
}

/* ---- server streams ------------------------------------------------------- */

static void stream_step(struct client_call *c)
{
    if (c->outstanding == 0)
        call_complete(c);
}

static int start_recv(struct client_call *c);

/* Point segs at each slice of bb (decompressed by the reader if need be).
 * RET the count, or -1 when bb cannot be read or memory runs out. */
static ssize_t gather(struct client_call *c, grpc_byte_buffer_reader *r)
{
    grpc_slice *sp;
    size_t n = 0;

    while (grpc_byte_buffer_reader_peek(r, &sp)) {
        if (n == c->cap_segs) {
            size_t ncap = c->cap_segs ? c->cap_segs * 2 : 256;
            struct iovec *v = realloc(c->segs, ncap * sizeof(*v));

            if (!v)
                return -1;
            c->segs = v;
            c->cap_segs = ncap;
        }
        c->segs[n].iov_base = GRPC_SLICE_START_PTR(*sp);
        c->segs[n++].iov_len = GRPC_SLICE_LENGTH(*sp);
    }
    return (ssize_t)n;
}

/* A raw stream's message: hand its segments over, then read the next. */
static void deliver_raw(struct client_call *c)
{
    grpc_byte_buffer_reader r;
    ssize_t n = -1;

    if (grpc_byte_buffer_reader_init(&r, c->recv_bb)) {
        n = gather(c, &r);
        if (n >= 0)
            c->on_raw(c->arg, c->segs, (size_t)n);
        grpc_byte_buffer_reader_destroy(&r);
    }
    grpc_byte_buffer_destroy(c->recv_bb);
    c->recv_bb = NULL;
    if (n < 0) {
        c->malformed = true;
        grpc_call_cancel(c->call, NULL);
    } else if (start_recv(c) < 0) {
        grpc_call_cancel(c->call, NULL);
    }
    stream_step(c);
}

static void on_stream_recv(struct mt__rpc_tag *tag, bool ok)
{
    struct client_call *c =
        (struct client_call *)((char *)tag -
                               offsetof(struct client_call, recv_tag));
    ProtobufCMessage *msg;

    c->outstanding--;
    if (!ok || !c->recv_bb) {
        stream_step(c);
        return;
    }
    if (c->on_raw) {
        deliver_raw(c);
        return;
    }
    msg = mt__rpc_decode(c->m->resp, c->recv_bb);
    grpc_byte_buffer_destroy(c->recv_bb);
    c->recv_bb = NULL;
    if (!msg) {
        c->malformed = true;
        grpc_call_cancel(c->call, NULL);
        stream_step(c);
        return;
    }
    if (c->on_msg)
        c->on_msg(c->arg, msg);
    protobuf_c_message_free_unpacked(msg, NULL);
    if (start_recv(c) < 0)
        grpc_call_cancel(c->call, NULL);
    stream_step(c);
}

static int start_recv(struct client_call *c)
{
    grpc_op op;

    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv_bb;
    c->recv_tag.fn = on_stream_recv;
    if (mt__rpc_start_batch(c->ch->eng, c->call, &op, 1, &c->recv_tag) !=
        GRPC_CALL_OK)
        return -MT_ERPC;
    c->outstanding++;
    return 0;
}

static void on_stream_send(struct mt__rpc_tag *tag, bool ok)
{
    struct client_call *c =
        (struct client_call *)((char *)tag -
                               offsetof(struct client_call, main_tag));

    c->outstanding--;
    stream_step(c);
}

static void on_stream_status(struct mt__rpc_tag *tag, bool ok)
{
    struct client_call *c =
        (struct client_call *)((char *)tag -
                               offsetof(struct client_call, status_tag));

    c->outstanding--;
    stream_step(c);
}

static int stream_open(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                       const ProtobufCMessage *req, int timeout_ms,
                       unsigned flags, mt_rpc_msg_fn on_msg,
                       mt_rpc_raw_fn on_raw, mt_rpc_done_fn on_done,
                       void *arg, struct mt_rpc_stream **out)
{
    struct client_call *c;
    grpc_op ops[4];
    int err = 0;

    if (!m || m->kind != MT_RPC_SERVER_STREAM || !req || !on_done ||
        req->descriptor != m->req)
        return -MT_EINVAL;
    c = call_begin(ch, m, req, timeout_ms, flags, ops, &err);
    if (!c)
        return err;
    c->done = on_done;
    c->on_msg = on_msg;
    c->on_raw = on_raw;
    c->arg = arg;
    c->main_tag.fn = on_stream_send;
    if (mt__rpc_start_batch(ch->eng, c->call, ops, 4, &c->main_tag) !=
        GRPC_CALL_OK) {
        call_free(c);
        return -MT_ERPC;
    }
    c->outstanding++;
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[0].data.recv_status_on_client.trailing_metadata = &c->trail_md;
    ops[0].data.recv_status_on_client.status = &c->status;
    ops[0].data.recv_status_on_client.status_details = &c->details;
    c->status_tag.fn = on_stream_status;
    if (mt__rpc_start_batch(ch->eng, c->call, ops, 1, &c->status_tag) ==
        GRPC_CALL_OK)
        c->outstanding++;
    else
        grpc_call_cancel(c->call, NULL);
    if (start_recv(c) < 0)
        grpc_call_cancel(c->call, NULL);
    if (out)
        *out = (struct mt_rpc_stream *)c;
    return 0;
}

int mt_rpc_stream_open(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                       const ProtobufCMessage *req, int timeout_ms,
                       unsigned flags, mt_rpc_msg_fn on_msg,
                       mt_rpc_done_fn on_done, void *arg,
                       struct mt_rpc_stream **out)
{
    return stream_open(ch, m, req, timeout_ms, flags, on_msg, NULL, on_done,
                       arg, out);
}

int mt_rpc_stream_open_raw(struct mt_rpc_channel *ch,
                           const struct mt_rpc_method *m,
                           const ProtobufCMessage *req, int timeout_ms,
                           unsigned flags, mt_rpc_raw_fn on_raw,
                           mt_rpc_done_fn on_done, void *arg,
                           struct mt_rpc_stream **out)
{
    if (!on_raw)
        return -MT_EINVAL;
    return stream_open(ch, m, req, timeout_ms, flags, NULL, on_raw, on_done,
                       arg, out);
}

void mt_rpc_stream_cancel(struct mt_rpc_stream *s)
{
    struct client_call *c = (struct client_call *)s;

    grpc_call_cancel(c->call, NULL);
}

/* ---- synchronous helper ---------------------------------------------------- */

struct sync_state {
    bool done;
    int err;
    ProtobufCMessage *resp;
    char *errbuf;
    size_t errlen;
};

static void on_sync_done(void *arg, const struct mt_rpc_status *st,
                         const ProtobufCMessage *resp)
{
    struct sync_state *s = arg;

    s->done = true;
    s->err = mt_rpc_status_to_err(st->code);
    if (s->err == 0 && resp) {
        /* Re-decode into a message the caller owns. */
        size_t n = protobuf_c_message_get_packed_size(resp);
        uint8_t *buf = malloc(n ? n : 1);

        if (buf) {
            protobuf_c_message_pack(resp, buf);
            s->resp = protobuf_c_message_unpack(resp->descriptor, NULL, n, buf);
            free(buf);
        }
        if (!s->resp)
            s->err = -MT_ENOMEM;
    }
    if (s->err && s->errbuf && s->errlen)
        snprintf(s->errbuf, s->errlen, "%s: %s",
                 mt_rpc_status_name(st->code),
                 st->message && *st->message ? st->message
                                             : mt_strerror(s->err));
}

int mt_rpc_unary_sync(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                      const ProtobufCMessage *req, int timeout_ms,
                      unsigned flags, ProtobufCMessage **resp, char *errbuf,
                      size_t errlen)
{
    struct sync_state s = {false, 0, NULL, errbuf, errlen};
    int rc = mt_rpc_unary(ch, m, req, timeout_ms, flags, on_sync_done, &s);

    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "%s", mt_strerror(rc));
        return rc;
    }
    while (!s.done)
        mt__rpc_run_once(ch->eng);
    if (resp)
        *resp = s.resp;
    else if (s.resp)
        protobuf_c_message_free_unpacked(s.resp, NULL);
    return s.err;
}
