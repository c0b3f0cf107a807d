/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_engine.c -- the completion queue, its poller thread and the handoff of
 * completions to the libuv loop; protobuf-c <-> byte buffer glue; status
 * code mapping.
 *
 * DESIGN: the poller thread blocks in grpc_completion_queue_next() and does
 * nothing but append (tag, ok) to a mutex-protected FIFO and call
 * uv_async_send(), which coalesces; the async callback therefore drains the
 * whole FIFO. All other work happens on the loop thread (notes/grpc-core.md).
 */
#include "common/rpc.h"

#include <errno.h>
#include <grpc/grpc_security.h>
#include <grpc/status.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/rpc_int.h"
#include "common/strbuf.h"

void mt__rpc_post(struct mt_rpc_engine *eng, struct mt__rpc_tag *tag, bool ok)
{
    pthread_mutex_lock(&eng->mu);
    if (eng->n_events == eng->cap_events) {
        size_t ncap = eng->cap_events ? eng->cap_events * 2 : 64;
        void *p = realloc(eng->events, ncap * sizeof(*eng->events));
        if (!p)
            MT_BUG("out of memory in rpc poller");
        eng->events = p;
        eng->cap_events = ncap;
    }
    eng->events[eng->n_events].tag = tag;
    eng->events[eng->n_events].ok = ok;
    eng->n_events++;
    pthread_mutex_unlock(&eng->mu);
    uv_async_send(&eng->wakeup);
}

static void *poller_main(void *arg)
{
    struct mt_rpc_engine *eng = arg;

    for (;;) {
        grpc_event ev = grpc_completion_queue_next(
            eng->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);

        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        mt__rpc_post(eng, ev.tag, ev.success != 0);
    }
    return NULL;
}

/* Deliver every queued completion; runs on the loop thread. */
static void drain_events(struct mt_rpc_engine *eng)
{
    for (;;) {
        struct mt__rpc_event *batch;
        size_t n;

        pthread_mutex_lock(&eng->mu);
        batch = eng->events;
        n = eng->n_events;
        eng->events = NULL;
        eng->n_events = 0;
        eng->cap_events = 0;
        pthread_mutex_unlock(&eng->mu);
        if (n == 0) {
            free(batch);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            eng->pending--;
            batch[i].tag->fn(batch[i].tag, batch[i].ok);
        }
        free(batch);
    }
}

static void on_wakeup(uv_async_t *h)
{
    drain_events(h->data);
}

int mt_rpc_engine_create(uv_loop_t *loop, struct mt_rpc_engine **out)
{
    struct mt_rpc_engine *eng = calloc(1, sizeof(*eng));
    int rc;

    if (!eng)
        return -MT_ENOMEM;
    grpc_init();
    eng->loop = loop;
    pthread_mutex_init(&eng->mu, NULL);
    eng->cq = grpc_completion_queue_create_for_next(NULL);
    rc = uv_async_init(loop, &eng->wakeup, on_wakeup);
    if (rc < 0)
        goto out_fail;
    eng->wakeup.data = eng;
    rc = pthread_create(&eng->poller, NULL, poller_main, eng);
    if (rc != 0) {
        rc = -rc;
        uv_close((uv_handle_t *)&eng->wakeup, NULL);
        goto out_fail;
    }
    eng->poller_started = true;
    *out = eng;
    return 0;

out_fail:
    grpc_completion_queue_shutdown(eng->cq);
    grpc_completion_queue_destroy(eng->cq);
    pthread_mutex_destroy(&eng->mu);
    free(eng);
    grpc_shutdown();
    return rc;
}

void mt__rpc_run_once(struct mt_rpc_engine *eng)
{
    uv_run(eng->loop, UV_RUN_ONCE);
}

void mt_rpc_engine_destroy(struct mt_rpc_engine *eng)
{
    if (!eng)
        return;
    if (eng->servers || eng->channels)
        MT_WARN("rpc engine destroyed with %d servers and %d channels alive",
                eng->servers, eng->channels);
    /* Let every outstanding tag come back before the queue goes away. */
    while (eng->pending > 0)
        mt__rpc_run_once(eng);
    grpc_completion_queue_shutdown(eng->cq);
    if (eng->poller_started)
        pthread_join(eng->poller, NULL);
    drain_events(eng);
    grpc_completion_queue_destroy(eng->cq);
    uv_close((uv_handle_t *)&eng->wakeup, NULL);
    /* Let the loop process the close so uv_loop_close() succeeds. */
    uv_run(eng->loop, UV_RUN_NOWAIT);
    pthread_mutex_destroy(&eng->mu);
    free(eng->events);
    mt__rpc_security_free(eng);
    for (size_t i = 0; i < eng->n_stats; i++) {
        free(eng->stats[i]->path);
        free(eng->stats[i]);
    }
    free(eng->stats);
    free(eng);
    grpc_shutdown();
}

grpc_call_error mt__rpc_start_batch(struct mt_rpc_engine *eng, grpc_call *call,
                                    const grpc_op *ops, size_t n,
                                    struct mt__rpc_tag *tag)
{
    grpc_call_error e = grpc_call_start_batch(call, ops, n, tag, NULL);

    if (e == GRPC_CALL_OK)
        mt__rpc_tag_armed(eng);
    else
        MT_ERROR("grpc_call_start_batch failed: error %d", (int)e);
    return e;
}

grpc_byte_buffer *mt__rpc_encode(const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    grpc_slice s = grpc_slice_malloc(n);
    grpc_byte_buffer *bb;

    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(s));
    bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

ProtobufCMessage *mt__rpc_decode(const ProtobufCMessageDescriptor *desc,
                                 grpc_byte_buffer *bb)
{
    grpc_byte_buffer_reader r;
    ProtobufCMessage *msg;
    grpc_slice s;

    if (!bb || !grpc_byte_buffer_reader_init(&r, bb))
        return NULL;
    s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    msg = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(s),
                                    GRPC_SLICE_START_PTR(s));
    grpc_slice_unref(s);
    return msg;
}

gpr_timespec mt__rpc_deadline(int timeout_ms)
{
    if (timeout_ms <= 0)
        return gpr_inf_future(GPR_CLOCK_MONOTONIC);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                        gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
}

/* ---- status mapping ------------------------------------------------------ */

static const struct {
    int code;
    int err;
    const char *name;
} status_map[] = {
    {GRPC_STATUS_OK, 0, "OK"},
    {GRPC_STATUS_CANCELLED, -MT_ECANCELED, "CANCELLED"},
    {GRPC_STATUS_UNKNOWN, -MT_ERPC, "UNKNOWN"},
    {GRPC_STATUS_INVALID_ARGUMENT, -MT_EINVAL, "INVALID_ARGUMENT"},
    {GRPC_STATUS_DEADLINE_EXCEEDED, -MT_ETIMEDOUT, "DEADLINE_EXCEEDED"},
    {GRPC_STATUS_NOT_FOUND, -MT_ENOENT, "NOT_FOUND"},
    {GRPC_STATUS_ALREADY_EXISTS, -MT_EEXIST, "ALREADY_EXISTS"},
    {GRPC_STATUS_PERMISSION_DENIED, -MT_EPERM, "PERMISSION_DENIED"},
    {GRPC_STATUS_RESOURCE_EXHAUSTED, -MT_ENOSPC, "RESOURCE_EXHAUSTED"},
    {GRPC_STATUS_FAILED_PRECONDITION, -MT_ESTATE, "FAILED_PRECONDITION"},
    {GRPC_STATUS_ABORTED, -MT_EAGAIN, "ABORTED"},
    {GRPC_STATUS_OUT_OF_RANGE, -MT_ERANGE, "OUT_OF_RANGE"},
    {GRPC_STATUS_UNIMPLEMENTED, -MT_ENOTSUP, "UNIMPLEMENTED"},
    {GRPC_STATUS_INTERNAL, -MT_ERPC, "INTERNAL"},
    {GRPC_STATUS_UNAVAILABLE, -MT_EUNAVAIL, "UNAVAILABLE"},
    {GRPC_STATUS_DATA_LOSS, -MT_EIO, "DATA_LOSS"},
    {GRPC_STATUS_UNAUTHENTICATED, -MT_EAUTH, "UNAUTHENTICATED"},
};

#define N_STATUS (sizeof(status_map) / sizeof(status_map[0]))

int mt_rpc_status_to_err(int grpc_code)
{
    for (size_t i = 0; i < N_STATUS; i++)
        if (status_map[i].code == grpc_code)
            return status_map[i].err;
    return -MT_ERPC;
}

int mt_rpc_err_to_status(int err)
{
    if (err == 0)
        return GRPC_STATUS_OK;
    if (err == -MT_EINFEASIBLE)
        return GRPC_STATUS_FAILED_PRECONDITION;
    if (err == -MT_EPROTO)
        return GRPC_STATUS_INVALID_ARGUMENT;
    if (err == -MT_ETOOBIG)
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    for (size_t i = 1; i < N_STATUS; i++)
        if (status_map[i].err == err)
            return status_map[i].code;
    return GRPC_STATUS_INTERNAL;
}

const char *mt_rpc_status_name(int grpc_code)
{
    for (size_t i = 0; i < N_STATUS; i++)
        if (status_map[i].code == grpc_code)
            return status_map[i].name;
    return "UNKNOWN";
}

/* ---- metrics ------------------------------------------------------------- */

struct mt__rpc_method_stats *mt__rpc_stats_for(struct mt_rpc_engine *eng,
                                               const char *path)
{
    struct mt__rpc_method_stats *st;

    for (size_t i = 0; i < eng->n_stats; i++)
        if (strcmp(eng->stats[i]->path, path) == 0)
            return eng->stats[i];
    mt_xgrow((void **)&eng->stats, &eng->cap_stats, eng->n_stats + 1,
             sizeof(*eng->stats));
    st = mt_xcalloc(1, sizeof(*st));
    st->path = mt_xstrdup(path);
    mt_prom_hist_init(&st->latency, mt_prom_rpc_buckets,
                      mt_prom_rpc_buckets_n);
    eng->stats[eng->n_stats++] = st;
    return st;
}

/* "/pkg.Service/Method" into service and method (cut at the last '/'). */
static void split_path(const char *path, char *svc, size_t n, const char **m)
{
    const char *slash = strrchr(path, '/');
    size_t k = slash && slash > path ? (size_t)(slash - path - 1) : 0;

    if (k >= n)
        k = n - 1;
    memcpy(svc, path + 1, k);
    svc[k] = '\0';
    *m = slash ? slash + 1 : path;
}

void mt_rpc_engine_metrics(struct mt_rpc_engine *eng, struct mt_strbuf *sb)
{
    char svc[128];
    const char *method;

    mt_prom_family(sb, "manta_rpc_requests_total", "counter",
                   "rpc calls this process served, by method and the gRPC "
                   "status they ended with.");
    for (size_t i = 0; i < eng->n_stats; i++) {
        const struct mt__rpc_method_stats *st = eng->stats[i];

        split_path(st->path, svc, sizeof(svc), &method);
        for (int c = 0; c < MT__RPC_N_CODES; c++) {
            const char *kv[] = {"service", svc, "method", method, "code",
                                mt_rpc_status_name(c), NULL};

            if (st->ended[c])
                mt_prom_sample_u64(sb, "manta_rpc_requests_total", kv,
                                   st->ended[c]);
        }
    }
    mt_prom_family(sb, "manta_rpc_latency_seconds", "histogram",
                   "Seconds from an rpc call's arrival to its final status.");
    for (size_t i = 0; i < eng->n_stats; i++) {
        const struct mt__rpc_method_stats *st = eng->stats[i];

        if (!st->latency.count)
            continue;
        split_path(st->path, svc, sizeof(svc), &method);
        mt_prom_hist_write(sb, "manta_rpc_latency_seconds",
                           (const char *[]){"service", svc, "method", method,
                                            NULL},
                           &st->latency);
    }
}
