/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_int.h -- internals shared by rpc_engine.c, rpc_server.c, rpc_client.c.
 *
 * A tag is the address handed to gRPC with each batch; its callback runs on
 * the loop thread once the poller has passed the completion over. The engine
 * counts tags that gRPC still holds (pending) so shutdown can wait for them.
 */
#ifndef MT_RPC_INT_H
#define MT_RPC_INT_H

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <pthread.h>

#include "common/auth.h"
#include "common/prom.h"
#include "common/rpc.h"

#define MT__RPC_N_CODES 17 /* gRPC status codes 0..16 */

/*
 * What one method's server calls came to (rpc_server.c counts, and
 * mt_rpc_engine_metrics writes them). One per method path per engine,
 * made when a server registers the method; never freed before the
 * engine, so calls that outlive their server may still count. Guarded
 * by: loop thread.
 */
struct mt__rpc_method_stats {
    char *path;                           /* "/pkg.Service/Method" */
    uint64_t ended[MT__RPC_N_CODES];      /* calls ended, by status code */
    struct mt_prom_hist latency;          /* request to end, seconds */
};

struct mt__rpc_tag;
typedef void (*mt__rpc_tag_fn)(struct mt__rpc_tag *tag, bool ok);

struct mt__rpc_tag {
    mt__rpc_tag_fn fn;
};

struct mt__rpc_event {
    struct mt__rpc_tag *tag;
    bool ok;
};

/* Guarded by: mu for the event FIFO; everything else loop thread. */
struct mt_rpc_engine {
    uv_loop_t *loop;
    grpc_completion_queue *cq;
    pthread_t poller;
    bool poller_started;
    uv_async_t wakeup;
    pthread_mutex_t mu;
    struct mt__rpc_event *events; /* FIFO filled by the poller, under mu */
    size_t n_events;
    size_t cap_events;
    int64_t pending;              /* tags handed to gRPC, not yet delivered */
    int channels;                 /* live channels */
    int servers;                  /* live servers */
    struct mt_security sec;       /* what servers demand, channels present */
    char *bearer;                 /* "Bearer <token>"; NULL: auth none */
    grpc_metadata auth_md;        /* authorization: bearer, for channels */
    size_t n_auth_md;             /* 0 or 1 */
    struct mt__rpc_method_stats **stats; /* per served method, owned */
    size_t n_stats;
    size_t cap_stats;
};

/* The stats of path, made on first use. Loop thread; at server start. */
struct mt__rpc_method_stats *mt__rpc_stats_for(struct mt_rpc_engine *eng,
                                               const char *path);

/* Hand a tag to gRPC: count it. Call right before start_batch/request. */
static inline void mt__rpc_tag_armed(struct mt_rpc_engine *eng)
{
    eng->pending++;
}

/* Queue (tag, ok) for the loop thread and wake it: what the poller does
 * with each completion, and what a borrowed slice's release does. Any
 * thread; the tag must have been armed (mt__rpc_tag_armed). */
void mt__rpc_post(struct mt_rpc_engine *eng, struct mt__rpc_tag *tag, bool ok);

/* Start a batch of n ops; on failure the tag is not armed. */
grpc_call_error mt__rpc_start_batch(struct mt_rpc_engine *eng, grpc_call *call,
                                    const grpc_op *ops, size_t n,
                                    struct mt__rpc_tag *tag);

/* Encode a message into a new byte buffer (owned; destroy after sending). */
grpc_byte_buffer *mt__rpc_encode(const ProtobufCMessage *msg);

/* Decode a byte buffer; RET owned message or NULL on garbage. */
ProtobufCMessage *mt__rpc_decode(const ProtobufCMessageDescriptor *desc,
                                 grpc_byte_buffer *bb);

/* A deadline timeout_ms from now (infinite when timeout_ms <= 0). */
gpr_timespec mt__rpc_deadline(int timeout_ms);

/* ---- credentials (rpc_auth.c) ---- */

/* Free what mt_rpc_engine_set_security stored. */
void mt__rpc_security_free(struct mt_rpc_engine *eng);

/* Check a call's metadata for the cluster token before anything is decoded.
 * RET 0, or -MT_EAUTH with *why set to a static reason for the caller. */
int mt__rpc_check_auth(const struct mt_rpc_engine *eng,
                       const grpc_metadata_array *md, const char **why);

/* Credentials for a listener / a channel; release after use. */
grpc_server_credentials *mt__rpc_server_creds(const struct mt_rpc_engine *eng);
grpc_channel_credentials *mt__rpc_channel_creds(const struct mt_rpc_engine *eng);

/* Run the loop once, for the synchronous helpers. */
void mt__rpc_run_once(struct mt_rpc_engine *eng);

#endif /* MT_RPC_INT_H */
