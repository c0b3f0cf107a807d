/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc.h -- a small rpc layer over the gRPC C core API with protobuf-c messages.
 *
 * One engine per process owns a completion queue, one poller thread and the
 * handoff to the daemon's libuv loop (notes/grpc-core.md section 4): the
 * poller only queues (tag, ok) pairs and wakes the loop; every handler, every
 * client callback and every grpc_call_start_batch runs on the loop thread.
 *
 * Servers take a table of handlers, each naming a method (path, request and
 * response descriptors, unary or server-streaming); a daemon whose
 * adapters bring a table each joins them (mt_rpc_handlers_join). A handler
 * receives a call and must end it exactly once with mt_rpc_reply(),
 * mt_rpc_fail() or mt_rpc_stream_finish(), either before returning or
 * later on the loop thread.
 * Methods nobody registered get UNIMPLEMENTED; payloads that do not decode get
 * INVALID_ARGUMENT; neither reaches a handler.
 *
 * Clients open a channel to "host:port" and start unary calls or server
 * streams with a deadline; completion callbacks run on the loop thread.
 *
 * Security: an engine given credentials (mt_rpc_engine_set_security) makes
 * every server it starts demand the cluster token on each call, as
 * "authorization: Bearer <token>" metadata, before the request is decoded
 * (UNAUTHENTICATED otherwise: "missing cluster token" / "wrong cluster
 * token"), and every channel it opens present it; with TLS material both
 * sides speak TLS, mutual when a CA is given.
 *
 * Error mapping: gRPC status codes become -MT_E* codes with
 * mt_rpc_status_to_err() (UNAVAILABLE -> -MT_EUNAVAIL, DEADLINE_EXCEEDED ->
 * -MT_ETIMEDOUT, ...), and mt_rpc_fail() maps back.
 *
 * THREAD: every function here is loop-thread only, except where noted.
 */
#ifndef MT_RPC_H
#define MT_RPC_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <uv.h>

struct mt_rpc_engine;
struct mt_rpc_server;
struct mt_rpc_call;
struct mt_rpc_channel;
struct mt_rpc_stream;

enum mt_rpc_kind {
    MT_RPC_UNARY = 0,
    MT_RPC_SERVER_STREAM = 1,
};

/* A method of a service. Instances are static and shared by both sides. */
struct mt_rpc_method {
    const char *path; /* "/<package>.<Service>/<Method>" */
    const ProtobufCMessageDescriptor *req;
    const ProtobufCMessageDescriptor *resp;
    enum mt_rpc_kind kind;
};

/*
 * Server handler. req is borrowed and stays valid until the call is ended;
 * arg is the server's user pointer.
 */
typedef void (*mt_rpc_handler_fn)(struct mt_rpc_call *call,
                                  const ProtobufCMessage *req, void *arg);

struct mt_rpc_handler {
    const struct mt_rpc_method *method;
    mt_rpc_handler_fn fn;
};

/* Outcome of a client call. message is borrowed for the callback only. */
struct mt_rpc_status {
    int code;            /* grpc_status_code; 0 = OK */
    const char *message; /* status details, "" when none */
};

/* Client callbacks. resp is borrowed: valid during the callback only. */
typedef void (*mt_rpc_done_fn)(void *arg, const struct mt_rpc_status *st,
                               const ProtobufCMessage *resp);
typedef void (*mt_rpc_msg_fn)(void *arg, const ProtobufCMessage *msg);
typedef void (*mt_rpc_notify_fn)(void *arg);
/* A raw stream's message: its wire bytes, in n segments borrowed for the
 * callback only (gRPC's receive buffers, not copied or decoded). */
typedef void (*mt_rpc_raw_fn)(void *arg, const struct iovec *segs, size_t n);

/* Default limit on a received message, both sides (gRPC's own is 4 MiB). */
#define MT_RPC_DEFAULT_MAX_MSG (64 * 1024 * 1024)

/* A bulk channel's HTTP/2 receive window (mt_rpc_channel_create_bulk). */
#define MT_RPC_BULK_WINDOW (64 * 1024 * 1024)

/* Flag for mt_rpc_unary()/mt_rpc_stream_open(): wait for the channel to be
 * ready (until the deadline) instead of failing fast with UNAVAILABLE. */
#define MT_RPC_WAIT_FOR_READY 1u

/* ---- engine ------------------------------------------------------------ */

/*
 * mt_rpc_engine_create - start gRPC, a completion queue and its poller thread.
 *
 * IN  loop  the libuv loop that will run every callback (borrowed; must
 *           outlive the engine)
 * OUT out   the engine
 * RET 0 or -MT_ENOMEM / -errno
 */
int mt_rpc_engine_create(uv_loop_t *loop, struct mt_rpc_engine **out);

/*
 * mt_rpc_engine_destroy - stop the poller and free the engine.
 *
 * Every server must be stopped (its callback run) and every channel destroyed
 * first. Outstanding client calls are cancelled; the loop is run until each
 * of them has delivered its callback. Call it from outside any callback.
 * Accepts NULL.
 */
void mt_rpc_engine_destroy(struct mt_rpc_engine *eng);

struct mt_security;

/*
 * mt_rpc_engine_set_security - the credentials of this engine's servers
 * and channels (common/auth.h): copied; used by servers started and
 * channels created after this call. Without a call: no token, no TLS.
 *
 * RET 0 or -MT_ENOMEM
 */
int mt_rpc_engine_set_security(struct mt_rpc_engine *eng,
                               const struct mt_security *sec);

struct mt_security_src;

/*
 * mt_rpc_engine_load_security - mt_security_load(src) (common/auth.h:
 * flags, environment, session dir), then mt_rpc_engine_set_security: what
 * a client that has no flags of its own does.
 * OUT err  on failure, a one-line reason
 * RET 0, or the -MT_E* / -errno of the load
 */
int mt_rpc_engine_load_security(struct mt_rpc_engine *eng,
                                const struct mt_security_src *src, char *err,
                                size_t errlen);

/* ---- server ------------------------------------------------------------- */

struct mt_rpc_server_opts {
    const char *addr;                     /* "127.0.0.1:0", "0.0.0.0:6380" */
    const struct mt_rpc_handler *handlers; /* borrowed; must outlive server */
    size_t n_handlers;
    void *arg;                            /* passed to every handler */
    int max_msg_bytes;                    /* 0 = MT_RPC_DEFAULT_MAX_MSG */
};

/*
 * mt_rpc_handlers_join - the entries of n handler tables, each ended by an
 * entry with a NULL method, as one table for mt_rpc_server_opts (a daemon
 * whose rpc adapters each bring their own).
 * OUT count  the entries joined
 * RET returns owned table ended by a NULL entry, free with free(); NULL
 *     when memory runs out
 */
struct mt_rpc_handler *
mt_rpc_handlers_join(const struct mt_rpc_handler *const *tables, size_t n,
                     size_t *count);

/*
 * mt_rpc_server_start - bind, register the handlers and start serving.
 *
 * OUT out    the server
 * OUT port   the bound port (useful with port 0); may be NULL
 * RET 0, -MT_EINVAL (bad table), -MT_EIO (could not bind addr)
 */
int mt_rpc_server_start(struct mt_rpc_engine *eng,
                        const struct mt_rpc_server_opts *opts,
                        struct mt_rpc_server **out, int *port);

/*
 * mt_rpc_server_stop - graceful shutdown: stop accepting, let calls in flight
 * finish for up to grace_ms, then cancel what remains. When everything is
 * released the server is freed and done(arg) runs on the loop thread.
 * Handlers may still end calls they hold after this; they fail quietly.
 */
void mt_rpc_server_stop(struct mt_rpc_server *srv, uint32_t grace_ms,
                        mt_rpc_notify_fn done, void *arg);

/* ---- server calls ------------------------------------------------------- */

/*
 * mt_rpc_reply - answer a unary call with resp and status OK; ends the call.
 *
 * IN  resp  borrowed (encoded before return)
 * RET 0, -MT_ESTATE (already ended or not unary), -MT_ECANCELED (peer gone:
 *     the call is ended anyway)
 */
int mt_rpc_reply(struct mt_rpc_call *call, const ProtobufCMessage *resp);

/*
 * mt_rpc_fail - end a call (unary or stream) with a non-OK status. err is a
 * -MT_E* code mapped to a gRPC status (-MT_ENOENT -> NOT_FOUND, ...); msg is
 * the status details (borrowed; NULL for mt_strerror(err)).
 *
 * RET 0 or -MT_ESTATE when already ended
 */
int mt_rpc_fail(struct mt_rpc_call *call, int err, const char *msg);

/*
 * mt_rpc_stream_send - queue one message on a server stream. Messages go out
 * in order, one write at a time.
 *
 * RET 0, -MT_ECANCELED (the client went away: stop producing and end the
 *     call), -MT_ESTATE (ended, or not a stream)
 */
int mt_rpc_stream_send(struct mt_rpc_call *call, const ProtobufCMessage *msg);

/*
 * mt_rpc_stream_send_raw - queue one message given as wire bytes, head
 * then body, without encoding: for bulk payloads sent with no copy (object
 * pulls). head is copied; body is lent to gRPC, and release(arg) runs on
 * the loop thread once gRPC holds it no more (after the write, a cancel
 * or the call's end; before mt_rpc_engine_destroy returns).
 *
 * RET 0: release will run; or -MT_ECANCELED / -MT_ESTATE (as
 *     mt_rpc_stream_send) / -MT_ENOMEM: it never runs
 * OWNERSHIP borrows head; body must stay valid and unchanged until release
 */
int mt_rpc_stream_send_raw(struct mt_rpc_call *call, const uint8_t *head,
                           size_t head_len, const uint8_t *body,
                           size_t body_len, mt_rpc_notify_fn release,
                           void *arg);

/* mt_rpc_stream_finish - end a stream with OK after the queued messages. */
int mt_rpc_stream_finish(struct mt_rpc_call *call);

/* mt_rpc_stream_backlog - messages queued and not yet written. */
size_t mt_rpc_stream_backlog(const struct mt_rpc_call *call);

/*
 * mt_rpc_call_on_drain - run fn(arg) each time a stream's queue becomes empty,
 * so a producer can pace itself. Pass fn NULL to clear.
 */
void mt_rpc_call_on_drain(struct mt_rpc_call *call, mt_rpc_notify_fn fn,
                          void *arg);

/*
 * mt_rpc_call_on_cancel - run fn(arg) once if the client cancels, its deadline
 * passes or the connection drops before the call is ended. The handler must
 * still end the call (mt_rpc_fail is fine). Pass fn NULL to clear.
 */
void mt_rpc_call_on_cancel(struct mt_rpc_call *call, mt_rpc_notify_fn fn,
                           void *arg);

/* mt_rpc_call_cancelled - true once the client is known to be gone. */
bool mt_rpc_call_cancelled(const struct mt_rpc_call *call);

/*
 * mt_rpc_call_peer - the client's address, e.g. "ipv4:127.0.0.1:53422".
 * RET borrowed, valid until the call is ended
 */
const char *mt_rpc_call_peer(struct mt_rpc_call *call);

/* mt_rpc_call_deadline_ms - milliseconds left before the client's deadline,
 * or -1 when it has none. */
int64_t mt_rpc_call_deadline_ms(const struct mt_rpc_call *call);

/* ---- client ------------------------------------------------------------- */

/*
 * mt_rpc_channel_create - a channel to target ("host:port", "unix:/path").
 * Connection happens lazily on the first call; reconnects back off quickly
 * (at most 1 s) so a restarted peer is found again soon.
 *
 * IN  max_msg_bytes  receive limit; 0 = MT_RPC_DEFAULT_MAX_MSG
 * RET 0 or -MT_EINVAL
 */
int mt_rpc_channel_create(struct mt_rpc_engine *eng, const char *target,
                          int max_msg_bytes, struct mt_rpc_channel **out);

/*
 * mt_rpc_channel_create_bulk - as mt_rpc_channel_create, for large server
 * streams (object pulls): a connection of its own, not shared with other
 * channels to target, with a fixed MT_RPC_BULK_WINDOW receive window (no
 * BDP probing), the largest HTTP/2 frames and big socket reads.
 */
int mt_rpc_channel_create_bulk(struct mt_rpc_engine *eng, const char *target,
                               int max_msg_bytes, struct mt_rpc_channel **out);

/*
 * mt_rpc_channel_destroy - cancel the channel's calls in flight (their
 * callbacks still run, with CANCELLED) and release it. Accepts NULL.
 */
void mt_rpc_channel_destroy(struct mt_rpc_channel *ch);

/* mt_rpc_channel_target - the target string given at creation (borrowed). */
const char *mt_rpc_channel_target(const struct mt_rpc_channel *ch);

/*
 * mt_rpc_unary - start a unary call.
 *
 * IN  req         borrowed (encoded before return)
 * IN  timeout_ms  deadline from now; must be > 0
 * IN  flags       0 or MT_RPC_WAIT_FOR_READY
 * IN  done        runs exactly once on the loop thread, unless this returns
 *                 an error, in which case it never runs
 * RET 0, -MT_EINVAL, -MT_ECLOSED (channel being destroyed)
 */
int mt_rpc_unary(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                 const ProtobufCMessage *req, int timeout_ms, unsigned flags,
                 mt_rpc_done_fn done, void *arg);

/*
 * mt_rpc_stream_open - start a server-streaming call. on_msg runs per message,
 * then on_done exactly once (resp NULL). timeout_ms <= 0 means no deadline
 * (for long-lived watch streams; cancel them with mt_rpc_stream_cancel).
 *
 * OUT out  handle, valid until on_done has run; may be NULL
 * RET as mt_rpc_unary
 */
int mt_rpc_stream_open(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                       const ProtobufCMessage *req, int timeout_ms,
                       unsigned flags, mt_rpc_msg_fn on_msg,
                       mt_rpc_done_fn on_done, void *arg,
                       struct mt_rpc_stream **out);

/*
 * mt_rpc_stream_open_raw - as mt_rpc_stream_open, but each message is
 * handed to on_raw as its undecoded wire bytes (m->resp is not used to
 * decode): the caller parses them and copies what it keeps. A message
 * gRPC cannot read (a bad compression) ends the stream with INTERNAL.
 * RET as mt_rpc_stream_open; -MT_EINVAL without on_raw
 */
int mt_rpc_stream_open_raw(struct mt_rpc_channel *ch,
                           const struct mt_rpc_method *m,
                           const ProtobufCMessage *req, int timeout_ms,
                           unsigned flags, mt_rpc_raw_fn on_raw,
                           mt_rpc_done_fn on_done, void *arg,
                           struct mt_rpc_stream **out);

/* mt_rpc_stream_cancel - cancel a client stream; on_done still runs. */
void mt_rpc_stream_cancel(struct mt_rpc_stream *s);

/*
 * mt_rpc_unary_sync - run a unary call to completion by running the loop.
 * For command-line tools: call it only when the loop is not already running.
 *
 * OUT resp    on success, the decoded reply: returns owned, free with
 *             protobuf_c_message_free_unpacked(resp, NULL)
 * OUT errbuf  on failure, a one-line reason (may be NULL)
 * RET 0 or the -MT_E* code of the failure
 */
int mt_rpc_unary_sync(struct mt_rpc_channel *ch, const struct mt_rpc_method *m,
                      const ProtobufCMessage *req, int timeout_ms,
                      unsigned flags, ProtobufCMessage **resp, char *errbuf,
                      size_t errlen);

/* ---- status mapping (any thread) ------------------------------------------ */

/* mt_rpc_status_to_err - grpc status code -> 0 or -MT_E*. */
int mt_rpc_status_to_err(int grpc_code);

/* mt_rpc_err_to_status - -MT_E* -> grpc status code. */
int mt_rpc_err_to_status(int err);

/* mt_rpc_status_name - "OK", "UNAVAILABLE", ... for a grpc status code. */
const char *mt_rpc_status_name(int grpc_code);

struct mt_strbuf;

/*
 * mt_rpc_engine_metrics - what eng's servers have answered, in the
 * Prometheus text format (common/prom.h): manta_rpc_requests_total
 * {service,method,code} (calls ended, by gRPC status name) and the
 * histogram manta_rpc_latency_seconds{service,method} (from the request's
 * arrival to the handler's final status, streams included). Methods
 * without calls have no samples. Counting costs no allocation and no
 * lock: one clock read when a call arrives and one when it ends.
 *
 * THREAD: eng's loop thread.
 */
void mt_rpc_engine_metrics(struct mt_rpc_engine *eng, struct mt_strbuf *sb);

#endif /* MT_RPC_H */
