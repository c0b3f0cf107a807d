/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_server.c -- the server half of the rpc layer.
 *
 * For each registered method the server keeps ARMED requests outstanding
 * (grpc_server_request_registered_call with the payload read up front). When
 * one completes it is re-armed first, then the payload is decoded and the
 * call handed to the handler. A catch-all grpc_server_request_call answers
 * every unregistered method with UNIMPLEMENTED. A call without the engine's
 * cluster token is answered UNAUTHENTICATED before its payload is decoded
 * (rpc_auth.c).
 *
 * Call lifetime: a call context is reference counted. The handler's ownership
 * is one reference, dropped when it ends the call; every batch in flight
 * holds one more (RECV_CLOSE_ON_SERVER, which reports cancellation, and the
 * send batch). The context, the request message and the grpc_call are
 * released when the count drops to zero.
 *
 * Server streams: messages are encoded at send time and queued; one
 * SEND_MESSAGE is in flight at a time; the final status rides with the last
 * message when possible. A raw message (mt_rpc_stream_send_raw) lends its
 * body to gRPC as a slice whose destructor posts a tag to the engine, so
 * the owner gets it back on the loop thread, never earlier than gRPC's
 * last reference (which may outlive the write's completion).
 *
 * Shutdown: shutdown_and_notify, a grace timer that cancels all calls, and
 * the server is destroyed once the shutdown tag and every armed request have
 * come back (notes/grpc-core.md section 5).
 *
 * Handler tables that several adapters bring are joined into the one a
 * server takes before it starts (mt_rpc_handlers_join).
 */
#include "common/rpc.h"

#include <grpc/grpc_security.h>
#include <grpc/status.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/rpc_int.h"

#define ARMED_PER_METHOD 8

struct server_method {
    const struct mt_rpc_handler *h;
    void *registered; /* handle from grpc_server_register_method */
    struct mt__rpc_method_stats *stats; /* the engine's, for this path */
};

struct mt_rpc_server {
    struct mt_rpc_engine *eng;
    grpc_server *server;
    struct server_method *methods;
    size_t n_methods;
    void *arg;
    int64_t armed;           /* requests outstanding at gRPC */
    bool stopping;
    bool shutdown_done;      /* shutdown tag delivered */
    struct mt__rpc_tag shutdown_tag;
    uv_timer_t grace;
    mt_rpc_notify_fn stopped;
    void *stopped_arg;
};

struct queued_msg {
    grpc_byte_buffer *bb;
    struct queued_msg *next;
};

/* A server call. Guarded by: loop thread. */
struct mt_rpc_call {
    struct mt_rpc_server *srv;   /* NULL once the server is gone */
    struct mt_rpc_engine *eng;
    struct server_method *m;     /* NULL for the unimplemented catch-all */
    struct mt__rpc_method_stats *stats; /* counted at the end; NULL: not */
    uint64_t arrived_ns;         /* uv_hrtime() when the request came */
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array req_md;
    grpc_call_details details;   /* catch-all only */
    grpc_byte_buffer *payload;
    ProtobufCMessage *req;
    struct mt__rpc_tag request_tag;
    struct mt__rpc_tag close_tag;
    struct mt__rpc_tag send_tag;
    int refs;
    int cancelled_flag;          /* filled by RECV_CLOSE_ON_SERVER */
    bool cancelled;
    bool ended;                  /* the handler has ended the call */
    bool send_in_flight;
    bool initial_md_sent;
    bool status_queued;          /* finish requested */
    bool status_sent;
    int status_code;
    char *status_msg;
    grpc_byte_buffer *sending;
    struct queued_msg *q_head, *q_tail;
    size_t q_len;
    char *peer;
    mt_rpc_notify_fn on_drain;
    void *drain_arg;
    mt_rpc_notify_fn on_cancel;
    void *cancel_arg;
};

static void arm_one(struct mt_rpc_server *srv, struct server_method *m);
static void arm_catch_all(struct mt_rpc_server *srv);
static void maybe_finish_stop(struct mt_rpc_server *srv);

/* ---- call context -------------------------------------------------------- */

static void call_unref(struct mt_rpc_call *c)
{
    struct queued_msg *q;

    if (--c->refs > 0)
        return;
    while ((q = c->q_head)) {
        c->q_head = q->next;
        grpc_byte_buffer_destroy(q->bb);
        free(q);
    }
    if (c->sending)
        grpc_byte_buffer_destroy(c->sending);
    if (c->payload)
        grpc_byte_buffer_destroy(c->payload);
    if (c->req)
        protobuf_c_message_free_unpacked(c->req, NULL);
    grpc_metadata_array_destroy(&c->req_md);
    if (!c->m)
        grpc_call_details_destroy(&c->details);
    if (c->call)
        grpc_call_unref(c->call);
    if (c->peer)
        gpr_free(c->peer);
    free(c->status_msg);
    free(c);
}

static void on_close(struct mt__rpc_tag *tag, bool ok)
{
    struct mt_rpc_call *c =
        (struct mt_rpc_call *)((char *)tag - offsetof(struct mt_rpc_call,
                                                      close_tag));

    if (!ok || c->cancelled_flag) {
        c->cancelled = true;
        if (!c->ended && c->on_cancel) {
            mt_rpc_notify_fn fn = c->on_cancel;
            c->on_cancel = NULL;
            fn(c->cancel_arg);
        }
    }
    call_unref(c);
}

static int start_close_watch(struct mt_rpc_call *c)
{
    grpc_op op;

    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->cancelled_flag;
    c->close_tag.fn = on_close;
    c->refs++;
    if (mt__rpc_start_batch(c->eng, c->call, &op, 1, &c->close_tag) !=
        GRPC_CALL_OK) {
        c->refs--;
        return -MT_ERPC;
    }
    return 0;
}

/* ---- sending ----------------------------------------------------------- */

static void pump(struct mt_rpc_call *c);

static void on_sent(struct mt__rpc_tag *tag, bool ok)
{
    struct mt_rpc_call *c =
        (struct mt_rpc_call *)((char *)tag - offsetof(struct mt_rpc_call,
                                                      send_tag));

    c->send_in_flight = false;
    if (c->sending) {
        grpc_byte_buffer_destroy(c->sending);
        c->sending = NULL;
    }
    if (!ok)
        c->cancelled = true;
    if (!c->cancelled && !c->status_sent) {
        pump(c);
        if (c->q_len == 0 && !c->send_in_flight && !c->ended && c->on_drain)
            c->on_drain(c->drain_arg);
    }
    call_unref(c);
}

/* Start the next send batch if nothing is in flight. */
static void pump(struct mt_rpc_call *c)
{
    grpc_op ops[3];
    grpc_slice details = grpc_empty_slice();
    size_t n = 0;
    struct queued_msg *q = c->q_head;

    if (c->send_in_flight || c->status_sent || c->cancelled)
        return;
    if (!q && !c->status_queued)
        return;
    memset(ops, 0, sizeof(ops));
    if (!c->initial_md_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->initial_md_sent = true;
    }
    if (q) {
        c->q_head = q->next;
        if (!c->q_head)
            c->q_tail = NULL;
        c->q_len--;
        c->sending = q->bb;
        free(q);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->sending;
    }
    if (c->status_queued && !c->q_head) {
        details = grpc_slice_from_copied_string(c->status_msg ? c->status_msg
                                                              : "");
        ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        ops[n].data.send_status_from_server.status =
            (grpc_status_code)c->status_code;
        ops[n++].data.send_status_from_server.status_details = &details;
        c->status_sent = true;
    }
    c->send_tag.fn = on_sent;
    c->refs++;
    c->send_in_flight = true;
    if (mt__rpc_start_batch(c->eng, c->call, ops, n, &c->send_tag) !=
        GRPC_CALL_OK) {
        c->send_in_flight = false;
        c->cancelled = true;
        c->refs--;
    }
    grpc_slice_unref(details);
}

/* Append q carrying an encoded message. */
static void append(struct mt_rpc_call *c, struct queued_msg *q,
                   grpc_byte_buffer *bb)
{
    q->bb = bb;
    q->next = NULL;
    if (c->q_tail)
        c->q_tail->next = q;
    else
        c->q_head = q;
    c->q_tail = q;
    c->q_len++;
}

static int queue_msg(struct mt_rpc_call *c, const ProtobufCMessage *msg)
{
    struct queued_msg *q = malloc(sizeof(*q));

    if (!q)
        return -MT_ENOMEM;
    append(c, q, mt__rpc_encode(msg));
    return 0;
}

/* A body lent to gRPC: released on the loop thread once gRPC drops it. */
struct lent {
    struct mt__rpc_tag tag;
    struct mt_rpc_engine *eng;
    mt_rpc_notify_fn release;
    void *arg;
};

static void on_lent_back(struct mt__rpc_tag *tag, bool ok)
{
    struct lent *l = (struct lent *)tag;

    (void)ok;
    l->release(l->arg);
    free(l);
}

/* The slice's destructor: any thread, even inside gRPC; post only. */
static void lent_unref(void *p)
{
    struct lent *l = p;

    mt__rpc_post(l->eng, &l->tag, true);
}

/* A byte buffer of head (copied) then body (lent until release runs). */
static grpc_byte_buffer *lend(struct mt_rpc_call *c, const uint8_t *head,
                              size_t head_len, const uint8_t *body,
                              size_t body_len, mt_rpc_notify_fn release,
                              void *arg)
{
    struct lent *l = malloc(sizeof(*l));
    grpc_slice s[2];
    grpc_byte_buffer *bb;

    if (!l)
        return NULL;
    l->tag.fn = on_lent_back;
    l->eng = c->eng;
    l->release = release;
    l->arg = arg;
    mt__rpc_tag_armed(c->eng); /* the engine waits for every body back */
    s[0] = grpc_slice_from_copied_buffer((const char *)head, head_len);
    s[1] = grpc_slice_new_with_user_data((void *)body, body_len, lent_unref,
                                         l);
    bb = grpc_raw_byte_buffer_create(s, 2);
    grpc_slice_unref(s[0]);
    grpc_slice_unref(s[1]);
    return bb;
}

/* Count a call that ends with code (engine stats, no allocation). */
static void count_end(struct mt_rpc_call *c, int code)
{
    struct mt__rpc_method_stats *st = c->stats;

    if (!st)
        return;
    st->ended[code >= 0 && code < MT__RPC_N_CODES ? code : 2]++;
    mt_prom_hist_observe(&st->latency,
                         (double)(uv_hrtime() - c->arrived_ns) / 1e9);
}

/* End the handler's ownership with a final status. */
static int end_call(struct mt_rpc_call *c, int code, const char *msg)
{
    if (c->ended)
        return -MT_ESTATE;
    c->ended = true;
    count_end(c, code);
    c->status_queued = true;
    c->status_code = code;
    c->status_msg = msg ? strdup(msg) : NULL;
    pump(c);
    call_unref(c);
    return 0;
}

int mt_rpc_reply(struct mt_rpc_call *c, const ProtobufCMessage *resp)
{
    bool cancelled;

    if (c->ended || !c->m || c->m->h->method->kind != MT_RPC_UNARY)
        return -MT_ESTATE;
    cancelled = c->cancelled;
    if (!cancelled && queue_msg(c, resp) < 0) {
        end_call(c, GRPC_STATUS_INTERNAL, "out of memory");
        return -MT_ENOMEM;
    }
    end_call(c, GRPC_STATUS_OK, NULL);
    return cancelled ? -MT_ECANCELED : 0;
}

int mt_rpc_fail(struct mt_rpc_call *c, int err, const char *msg)
{
    if (err == 0)
        err = -MT_ERPC;
    return end_call(c, mt_rpc_err_to_status(err), msg ? msg : mt_strerror(err));
}

int mt_rpc_stream_send(struct mt_rpc_call *c, const ProtobufCMessage *msg)
{
    int rc;

    if (c->ended || !c->m || c->m->h->method->kind != MT_RPC_SERVER_STREAM)
        return -MT_ESTATE;
    if (c->cancelled)
        return -MT_ECANCELED;
    rc = queue_msg(c, msg);
    if (rc < 0)
        return rc;
    pump(c);
    return 0;
}

int mt_rpc_stream_send_raw(struct mt_rpc_call *c, const uint8_t *head,
                           size_t head_len, const uint8_t *body,
                           size_t body_len, mt_rpc_notify_fn release,
                           void *arg)
{
    struct queued_msg *q;
    grpc_byte_buffer *bb = NULL;

    if (c->ended || !c->m || c->m->h->method->kind != MT_RPC_SERVER_STREAM)
        return -MT_ESTATE;
    if (c->cancelled)
        return -MT_ECANCELED;
    q = malloc(sizeof(*q));
    if (q)
        bb = lend(c, head, head_len, body, body_len, release, arg);
    if (!bb) {
        free(q);
        return -MT_ENOMEM;
    }
    append(c, q, bb);
    pump(c);
    return 0;
}

int mt_rpc_stream_finish(struct mt_rpc_call *c)
{
    if (c->m && c->m->h->method->kind != MT_RPC_SERVER_STREAM)
        return -MT_ESTATE;
    return end_call(c, GRPC_STATUS_OK, NULL);
}

size_t mt_rpc_stream_backlog(const struct mt_rpc_call *c)
{
    return c->q_len + (c->send_in_flight ? 1 : 0);
}

void mt_rpc_call_on_drain(struct mt_rpc_call *c, mt_rpc_notify_fn fn,
                          void *arg)
{
    c->on_drain = fn;
    c->drain_arg = arg;
}

void mt_rpc_call_on_cancel(struct mt_rpc_call *c, mt_rpc_notify_fn fn,
                           void *arg)
{
    c->on_cancel = fn;
    c->cancel_arg = arg;
}

bool mt_rpc_call_cancelled(const struct mt_rpc_call *c)
{
    return c->cancelled;
}

const char *mt_rpc_call_peer(struct mt_rpc_call *c)
{
    if (!c->peer)
        c->peer = grpc_call_get_peer(c->call);
    return c->peer ? c->peer : "unknown";
}

int64_t mt_rpc_call_deadline_ms(const struct mt_rpc_call *c)
{
    gpr_timespec now, d;

    if (gpr_time_cmp(c->deadline, gpr_inf_future(c->deadline.clock_type)) == 0)
        return -1;
    now = gpr_now(GPR_CLOCK_MONOTONIC);
    d = gpr_convert_clock_type(c->deadline, GPR_CLOCK_MONOTONIC);
    if (gpr_time_cmp(d, now) <= 0)
        return 0;
    return gpr_time_to_millis(gpr_time_sub(d, now));
}

/* ---- incoming calls ------------------------------------------------------- */

static struct mt_rpc_call *call_new(struct mt_rpc_server *srv,
                                    struct server_method *m)
{
    struct mt_rpc_call *c = calloc(1, sizeof(*c));

    if (!c)
        MT_BUG("out of memory arming an rpc request");
    c->srv = srv;
    c->eng = srv->eng;
    c->m = m;
    c->refs = 1;
    grpc_metadata_array_init(&c->req_md);
    if (!m)
        grpc_call_details_init(&c->details);
    return c;
}

/* A request slot came back unused (shutdown) or unusable. */
static void drop_slot(struct mt_rpc_server *srv, struct mt_rpc_call *c)
{
    c->ended = true;
    call_unref(c);
    srv->armed--;
    maybe_finish_stop(srv);
}

static void on_request(struct mt__rpc_tag *tag, bool ok)
{
    struct mt_rpc_call *c =
        (struct mt_rpc_call *)((char *)tag - offsetof(struct mt_rpc_call,
                                                      request_tag));
    struct mt_rpc_server *srv = c->srv;
    const struct mt_rpc_handler *h = c->m->h;
    const char *why;

    if (!ok || srv->stopping) {
        drop_slot(srv, c);
        return;
    }
    srv->armed--;
    arm_one(srv, c->m);
    c->srv = NULL; /* the call may outlive the server */
    c->stats = c->m->stats;
    c->arrived_ns = uv_hrtime();
    if (start_close_watch(c) < 0) {
        c->ended = true;
        call_unref(c);
        return;
    }
    if (mt__rpc_check_auth(c->eng, &c->req_md, &why) < 0) {
        end_call(c, GRPC_STATUS_UNAUTHENTICATED, why);
        return;
    }
    c->req = mt__rpc_decode(h->method->req, c->payload);
    if (!c->req) {
        end_call(c, GRPC_STATUS_INVALID_ARGUMENT,
                 c->payload ? "malformed request message"
                            : "missing request message");
        return;
    }
    h->fn(c, c->req, srv->arg);
}

static void on_unknown(struct mt__rpc_tag *tag, bool ok)
{
    struct mt_rpc_call *c =
        (struct mt_rpc_call *)((char *)tag - offsetof(struct mt_rpc_call,
                                                      request_tag));
    struct mt_rpc_server *srv = c->srv;
    char *method, msg[256];
    const char *why;

    if (!ok || srv->stopping) {
        drop_slot(srv, c);
        return;
    }
    srv->armed--;
    arm_catch_all(srv);
    c->srv = NULL;
    method = grpc_slice_to_c_string(c->details.method);
    snprintf(msg, sizeof(msg), "method %s not implemented", method);
    gpr_free(method);
    if (start_close_watch(c) < 0) {
        c->ended = true;
        call_unref(c);
        return;
    }
    if (mt__rpc_check_auth(c->eng, &c->req_md, &why) < 0)
        end_call(c, GRPC_STATUS_UNAUTHENTICATED, why);
    else
        end_call(c, GRPC_STATUS_UNIMPLEMENTED, msg);
}

static void arm_one(struct mt_rpc_server *srv, struct server_method *m)
{
    struct mt_rpc_call *c;
    grpc_call_error e;

    if (srv->stopping)
        return;
    c = call_new(srv, m);
    c->request_tag.fn = on_request;
    e = grpc_server_request_registered_call(
        srv->server, m->registered, &c->call, &c->deadline, &c->req_md,
        &c->payload, srv->eng->cq, srv->eng->cq, &c->request_tag);
    if (e != GRPC_CALL_OK) {
        MT_ERROR("request_registered_call failed: error %d", (int)e);
        c->ended = true;
        call_unref(c);
        return;
    }
    mt__rpc_tag_armed(srv->eng);
    srv->armed++;
}

static void arm_catch_all(struct mt_rpc_server *srv)
{
    struct mt_rpc_call *c;
    grpc_call_error e;

    if (srv->stopping)
        return;
    c = call_new(srv, NULL);
    c->request_tag.fn = on_unknown;
    e = grpc_server_request_call(srv->server, &c->call, &c->details,
                                 &c->req_md, srv->eng->cq, srv->eng->cq,
                                 &c->request_tag);
    if (e != GRPC_CALL_OK) {
        MT_ERROR("request_call failed: error %d", (int)e);
        c->ended = true;
        call_unref(c);
        return;
    }
    mt__rpc_tag_armed(srv->eng);
    srv->armed++;
}

/* ---- start and stop ------------------------------------------------------- */

static int check_table(const struct mt_rpc_server_opts *o)
{
    if (!o->addr || (!o->handlers && o->n_handlers))
        return -MT_EINVAL;
    for (size_t i = 0; i < o->n_handlers; i++) {
        const struct mt_rpc_method *m = o->handlers[i].method;
        if (!m || !m->path || m->path[0] != '/' || !m->req || !m->resp ||
            !o->handlers[i].fn)
            return -MT_EINVAL;
    }
    return 0;
}

struct mt_rpc_handler *
mt_rpc_handlers_join(const struct mt_rpc_handler *const *tables, size_t n,
                     size_t *count)
{
    const struct mt_rpc_handler *e;
    struct mt_rpc_handler *v;
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        for (e = tables[i]; e->method; e++)
            k++;
    if (!(v = calloc(k + 1, sizeof(*v))))
        return NULL;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        for (e = tables[i]; e->method; e++)
            v[(*count)++] = *e;
    return v;
}

int mt_rpc_server_start(struct mt_rpc_engine *eng,
                        const struct mt_rpc_server_opts *o,
                        struct mt_rpc_server **out, int *port)
{
    struct mt_rpc_server *srv;
    grpc_server_credentials *creds;
    grpc_arg args[3];
    grpc_channel_args cargs = {3, args};
    int bound, rc = check_table(o);

    if (rc < 0)
        return rc;
    srv = calloc(1, sizeof(*srv));
    if (!srv)
        return -MT_ENOMEM;
    srv->eng = eng;
    srv->arg = o->arg;
    srv->n_methods = o->n_handlers;
    srv->methods = calloc(o->n_handlers ? o->n_handlers : 1,
                          sizeof(*srv->methods));
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = o->max_msg_bytes ? o->max_msg_bytes
                                             : MT_RPC_DEFAULT_MAX_MSG;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = args[0].value.integer;
    /* gRPC sets SO_REUSEPORT by default, which would let a second daemon
     * bind a port that is in use: refuse instead. */
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
    args[2].value.integer = 0;
    srv->server = grpc_server_create(&cargs, NULL);
    grpc_server_register_completion_queue(srv->server, eng->cq, NULL);
    for (size_t i = 0; i < o->n_handlers; i++) {
        srv->methods[i].h = &o->handlers[i];
        srv->methods[i].stats = mt__rpc_stats_for(eng,
                                                  o->handlers[i].method->path);
        srv->methods[i].registered = grpc_server_register_method(
            srv->server, o->handlers[i].method->path, NULL,
            GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        if (!srv->methods[i].registered) {
            rc = -MT_EINVAL;
            goto out_destroy;
        }
    }
    creds = mt__rpc_server_creds(eng);
    bound = grpc_server_add_http2_port(srv->server, o->addr, creds);
    grpc_server_credentials_release(creds);
    if (bound == 0) {
        rc = -MT_EIO;
        goto out_destroy;
    }
    grpc_server_start(srv->server);
    for (size_t i = 0; i < srv->n_methods; i++)
        for (int k = 0; k < ARMED_PER_METHOD; k++)
            arm_one(srv, &srv->methods[i]);
    arm_catch_all(srv);
    eng->servers++;
    if (port)
        *port = bound;
    *out = srv;
    return 0;

out_destroy:
    /* Never started and no listener bound: destroying directly is allowed. */
    grpc_server_destroy(srv->server);
    free(srv->methods);
    free(srv);
    return rc;
}

static void free_server(uv_handle_t *h)
{
    struct mt_rpc_server *srv = h->data;
    mt_rpc_notify_fn done = srv->stopped;
    void *arg = srv->stopped_arg;

    srv->eng->servers--;
    free(srv->methods);
    free(srv);
    if (done)
        done(arg);
}

static void maybe_finish_stop(struct mt_rpc_server *srv)
{
    if (!srv->stopping || !srv->shutdown_done || srv->armed > 0)
        return;
    if (srv->server) {
        grpc_server_destroy(srv->server);
        srv->server = NULL;
        uv_timer_stop(&srv->grace);
        uv_close((uv_handle_t *)&srv->grace, free_server);
    }
}

static void on_shutdown(struct mt__rpc_tag *tag, bool ok)
{
    struct mt_rpc_server *srv =
        (struct mt_rpc_server *)((char *)tag -
                                 offsetof(struct mt_rpc_server, shutdown_tag));

    srv->shutdown_done = true;
    maybe_finish_stop(srv);
}

static void on_grace(uv_timer_t *t)
{
    struct mt_rpc_server *srv = t->data;

    if (srv->server)
        grpc_server_cancel_all_calls(srv->server);
}

void mt_rpc_server_stop(struct mt_rpc_server *srv, uint32_t grace_ms,
                        mt_rpc_notify_fn done, void *arg)
{
    if (srv->stopping)
        return;
    srv->stopping = true;
    srv->stopped = done;
    srv->stopped_arg = arg;
    uv_timer_init(srv->eng->loop, &srv->grace);
    srv->grace.data = srv;
    srv->shutdown_tag.fn = on_shutdown;
    mt__rpc_tag_armed(srv->eng);
    grpc_server_shutdown_and_notify(srv->server, srv->eng->cq,
                                    &srv->shutdown_tag);
    if (grace_ms == 0)
        grpc_server_cancel_all_calls(srv->server);
    else
        uv_timer_start(&srv->grace, on_grace, grace_ms, 0);
}
