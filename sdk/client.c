/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c -- the core of a client (client.h; its types in client_int.h):
 * its loop thread, the request handoff, the parts' hooks, the live-client
 * registry and the generic call to the head.
 *
 * DESIGN: mt__client_new creates the loop, the rpc engine and the channel
 * on the caller's thread, then mt__client_start hands them to a new thread
 * that runs the loop until disconnect. Public calls talk to that thread
 * only through requests: queue under c->mu, uv_async_send(), wait on c->cv.
 *
 * Shutdown: mt__client_stop runs the parts' leave hooks, queues the stop
 * node and joins the thread. The loop thread runs the parts' stop hooks,
 * destroys the channel and stops the loop; then, still on that thread,
 * mt_rpc_engine_destroy() runs the loop until every cancelled call has
 * delivered its callback, so no callback can run after the thread is gone.
 */
#include "sdk/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/rpc.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "objstore/client.h"
#include "sdk/error.h"
#include "sdk/queue.h"
#include "sdk/retry.h"

static atomic_uint_fast64_t next_serial;

/* ---- time and the store -------------------------------------------------- */

struct timespec mt__deadline(int timeout_ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int mt__ms_left(const struct timespec *dl)
{
    struct timespec now;
    int64_t left;

    clock_gettime(CLOCK_MONOTONIC, &now);
    left = (int64_t)(dl->tv_sec - now.tv_sec) * 1000 +
           (dl->tv_nsec - now.tv_nsec) / 1000000;
    return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

void mt__store_unref(struct mt__store *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    mt_objc_disconnect(s->objc);
    free(s);
}

/* ---- requests ------------------------------------------------------------ */

void *mt__req_new(struct mt_client *c, const struct mt__req_ops *ops,
                  size_t size)
{
    struct mt__req *r = calloc(1, size);

    if (!r)
        return NULL;
    r->ops = ops;
    r->client = c;
    r->timeout_ms = c->rpc_timeout_ms;
    r->rpc_flags = c->ready_flags;
    return r;
}

void mt__req_free(struct mt__req *r)
{
    if (!r)
        return;
    if (r->ops->release)
        r->ops->release(r);
    free(r);
}

/* Queue r under mu. RET 0, or -MT_ECLOSED when stopping (r untouched). */
static int enqueue(struct mt_client *c, struct mt__req *r, bool abandoned)
{
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        return -MT_ECLOSED;
    }
    r->client = c;
    r->abandoned = abandoned;
    mt__queue_push(&c->q, &r->qn);
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    return 0;
}

int mt__req_post(struct mt_client *c, struct mt__req *r)
{
    if (enqueue(c, r, true) == 0)
        return 0;
    mt__req_free(r);
    return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
}

int mt__req_run(struct mt_client *c, struct mt__req *r, int wait_ms)
{
    struct timespec dl = mt__deadline(wait_ms < 0 ? 0 : wait_ms);
    int rc = 0;

    if (enqueue(c, r, false) < 0) {
        mt__req_free(r);
        return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
    }
    pthread_mutex_lock(&c->mu);
    while (!r->done && rc == 0)
        rc = wait_ms < 0 ? pthread_cond_wait(&c->cv, &c->mu)
                         : pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    if (!r->done) {
        r->abandoned = true; /* the loop thread frees it */
        pthread_mutex_unlock(&c->mu);
        return mt__set_error(c, -MT_ETIMEDOUT, "no answer from the client "
                             "thread within %d ms", wait_ms);
    }
    pthread_mutex_unlock(&c->mu);
    if (r->rc < 0) {
        rc = mt__set_error(c, r->rc, "%s", r->msg[0] ? r->msg
                                                     : mt_strerror(r->rc));
        mt__req_free(r);
        return rc;
    }
    return 0;
}

void mt__req_complete(struct mt_client *c, struct mt__req *r, int rc,
                      const char *msg)
{
    bool abandoned;

    pthread_mutex_lock(&c->mu);
    r->rc = rc;
    if (msg)
        snprintf(r->msg, sizeof(r->msg), "%s", msg);
    r->done = true;
    abandoned = r->abandoned;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (abandoned)
        mt__req_free(r);
}

/* ---- the loop thread ----------------------------------------------------- */

#define REQ_OF(n) ((struct mt__req *)((char *)(n)-offsetof(struct mt__req, qn)))

static void handle_stop(struct mt_client *c)
{
    c->closing = true;
    mt__retry_stop(c); /* attempts waiting end now, as closed */
    for (size_t i = 0; i < c->n_parts; i++)
        if (c->parts[i].ops->stop)
            c->parts[i].ops->stop(c, c->parts[i].st);
    mt_rpc_channel_destroy(c->ch);
    c->ch = NULL;
    uv_stop(&c->loop);
}

static void start_req(struct mt_client *c, struct mt__req *r)
{
    int rc;

    if (c->closing) {
        if (r->ops->drop)
            r->ops->drop(c, r);
        else
            mt__req_complete(c, r, -MT_ECLOSED, "the client is "
                             "disconnecting");
        return;
    }
    rc = r->ops->start(c, r);
    if (rc < 0)
        mt__req_complete(c, r, rc, "cannot start the call to the head");
}

static void on_wake(uv_async_t *h)
{
    struct mt_client *c = h->data;
    struct mt__queue batch;
    struct mt__qnode *n;

    pthread_mutex_lock(&c->mu);
    mt__queue_take_all(&c->q, &batch);
    pthread_mutex_unlock(&c->mu);
    while ((n = mt__queue_pop(&batch))) {
        if (n == &c->stop_node)
            handle_stop(c);
        else
            start_req(c, REQ_OF(n));
    }
    for (size_t i = 0; i < c->n_parts && !c->closing; i++)
        if (c->parts[i].ops->wake)
            c->parts[i].ops->wake(c, c->parts[i].st);
}

static void *thread_main(void *arg)
{
    struct mt_client *c = arg;

    uv_run(&c->loop, UV_RUN_DEFAULT); /* until handle_stop */
    while (c->n_calls || c->n_streams) /* let cancelled calls finish */
        uv_run(&c->loop, UV_RUN_ONCE);
    mt_rpc_engine_destroy(c->eng);    /* delivers the cancelled calls */
    c->eng = NULL;
    uv_close((uv_handle_t *)&c->wake, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    return NULL;
}

void mt__client_wake(struct mt_client *c)
{
    uv_async_send(&c->wake);
}

const char *mt__session(struct mt_client *c)
{
    return atomic_load(&c->session_open) ? c->session_id : "";
}

/* ---- life ---------------------------------------------------------------- */

/* The cluster token and TLS material this client presents (auth.h says
 * where they are found; the session dir is the client's temp dir). */
static int set_credentials(struct mt_client *c)
{
    struct mt_security_src src = {.session_dir = c->temp_dir};
    char err[512];
    int rc = mt_rpc_engine_load_security(c->eng, &src, err, sizeof(err));

    return rc < 0 ? mt__set_error(NULL, rc, "%s", err) : 0;
}

/* Loop, engine, channel, wakeup: everything the thread will own. */
static int setup_loop(struct mt_client *c)
{
    int rc = uv_loop_init(&c->loop);

    if (rc < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "uv_loop_init: %s",
                             uv_strerror(rc));
    c->loop.data = c; /* retry.c's timers find their client */
    c->loop_ready = true;
    rc = uv_async_init(&c->loop, &c->wake, on_wake);
    if (rc < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "uv_async_init: %s",
                             uv_strerror(rc));
    c->wake.data = c;
    c->wake_ready = true;
    rc = mt_rpc_engine_create(&c->loop, &c->eng);
    if (rc < 0)
        return mt__set_error(NULL, rc, "cannot start gRPC: %s",
                             mt_strerror(rc));
    if ((rc = set_credentials(c)) < 0)
        return rc;
    rc = mt_rpc_channel_create(c->eng, c->address, 0, &c->ch);
    if (rc < 0)
        return mt__set_error(NULL, rc, "cannot open a channel to %s: %s",
                             c->address, mt_strerror(rc));
    return 0;
}

/* Free what setup_loop made when the thread never started. */
static void teardown_loop(struct mt_client *c)
{
    mt_rpc_channel_destroy(c->ch);
    c->ch = NULL;
    mt_rpc_engine_destroy(c->eng);
    c->eng = NULL;
    if (c->wake_ready)
        uv_close((uv_handle_t *)&c->wake, NULL);
    if (c->loop_ready) {
        uv_run(&c->loop, UV_RUN_DEFAULT);
        uv_loop_close(&c->loop);
    }
    c->loop_ready = c->wake_ready = false;
}

int mt__client_new(const char *address, const char *temp_dir,
                   int rpc_timeout_ms, unsigned ready_flags,
                   struct mt_client **out)
{
    struct mt_client *c = calloc(1, sizeof(*c));
    pthread_condattr_t ca;
    int rc;

    *out = NULL;
    if (!c)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    c->magic = MT_CLIENT_MAGIC;
    c->serial = atomic_fetch_add(&next_serial, 1) + 1;
    mt_random_hex(c->session_id, 16);
    atomic_init(&c->session_open, false);
    c->rpc_timeout_ms = rpc_timeout_ms;
    c->ready_flags = ready_flags;
    c->reconnect_ms = ready_flags ? mt__retry_limit_ms(getenv(
                                        MT__RECONNECT_ENV))
                                  : 0; /* one-shot: fail fast */
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    mt__queue_init(&c->q);
    c->address = strdup(address);
    c->temp_dir = strdup(temp_dir);
    rc = c->address && c->temp_dir
             ? setup_loop(c)
             : mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    if (rc < 0) {
        mt__client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void mt__client_add_part(struct mt_client *c, const struct mt__part_ops *ops,
                         void *st)
{
    if (c->n_parts == MT__MAX_PARTS) /* a programmer's error */
        abort();
    c->parts[c->n_parts].ops = ops;
    c->parts[c->n_parts++].st = st;
}

int mt__client_start(struct mt_client *c)
{
    int rc = pthread_create(&c->thread, NULL, thread_main, c);

    if (rc != 0)
        return mt__set_error(NULL, -rc, "cannot start the client thread: %s",
                             strerror(rc));
    c->thread_started = true;
    return 0;
}

void mt__client_stop(struct mt_client *c)
{
    struct mt__qnode *n;

    mt__client_set_live(c, false);
    if (!c->thread_started)
        return;
    for (size_t i = 0; i < c->n_parts; i++)
        if (c->parts[i].ops->leave)
            c->parts[i].ops->leave(c, c->parts[i].st);
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    mt__queue_push(&c->q, &c->stop_node);
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    pthread_join(c->thread, NULL);
    /* Requests nobody took (none when callers respect the contract). */
    while ((n = mt__queue_pop(&c->q)))
        if (n != &c->stop_node)
            mt__req_free(REQ_OF(n));
}

void mt__client_free(struct mt_client *c)
{
    if (!c)
        return;
    if (c->thread_started)
        uv_loop_close(&c->loop);
    else
        teardown_loop(c);
    for (size_t i = 0; i < c->n_parts; i++)
        if (c->parts[i].ops->destroy)
            c->parts[i].ops->destroy(c->parts[i].st);
    mt__store_unref(c->store);
    free(c->node_id);
    free(c->worker_address);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->address);
    free(c->temp_dir);
    free(c->store_path);
    c->magic = 0;
    free(c);
}

const char *mt_client_address(const mt_client_t *c)
{
    return c ? c->address : "";
}

int mt_client_has_store(const mt_client_t *c)
{
    return c && c->store ? 1 : 0;
}

/* ---- live clients -------------------------------------------------------- */

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mt_client **live;
static size_t n_live, cap_live;

/* Out of memory: the client is not registered; what needs it (releases
 * from tasks after their last call) is skipped. */
void mt__client_set_live(struct mt_client *c, bool on)
{
    pthread_mutex_lock(&live_mu);
    for (size_t i = 0; !on && i < n_live; i++)
        if (live[i] == c)
            live[i] = live[--n_live];
    if (on && n_live == cap_live) {
        size_t cap = cap_live ? 2 * cap_live : 8;
        struct mt_client **v = realloc(live, cap * sizeof(*v));

        if (v) {
            live = v;
            cap_live = cap;
        }
    }
    if (on && n_live < cap_live)
        live[n_live++] = c;
    if (n_live == 0) {
        free(live);
        live = NULL;
        cap_live = 0;
    }
    pthread_mutex_unlock(&live_mu);
}

bool mt__client_lock_live(const struct mt_client *c)
{
    pthread_mutex_lock(&live_mu);
    for (size_t i = 0; i < n_live; i++)
        if (live[i] == c)
            return true;
    pthread_mutex_unlock(&live_mu);
    return false;
}

void mt__client_unlock_live(void)
{
    pthread_mutex_unlock(&live_mu);
}

/* ---- calls to the head --------------------------------------------------- */

struct head_call {
    struct mt__req r;
    const struct mt_rpc_method *method;
    ProtobufCMessage *msg;       /* owned copy of the request */
    ProtobufCMessage *reply;     /* owned copy of the reply */
    unsigned flags;              /* MT__CALL_* */
    unsigned attempts;           /* failed so far */
    bool started_away;           /* this attempt began with the head away */
};

/* msg_copy - an owned deep copy of a ProtobufCMessage (packed, then
 * unpacked). RET NULL on ENOMEM. THREAD any. */
static void *msg_copy(const void *msg)
{
    const ProtobufCMessage *m = msg;
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    ProtobufCMessage *copy;

    if (!buf)
        return NULL;
    protobuf_c_message_pack(m, buf);
    copy = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
    free(buf);
    return copy;
}

void mt__msg_free(void *msg)
{
    if (msg)
        protobuf_c_message_free_unpacked(msg, NULL);
}

void mt__rpc_text(const struct mt_rpc_status *st, char *buf, size_t len)
{
    snprintf(buf, len, "%s: %s", mt_rpc_status_name(st->code),
             *st->message ? st->message
                          : mt_strerror(mt_rpc_status_to_err(st->code)));
}

int mt__rpc_err(const struct mt_rpc_status *st)
{
    return mt_rpc_status_to_err(st->code);
}

static void head_call_release(struct mt__req *r)
{
    struct head_call *h = (struct head_call *)r;

    mt__msg_free(h->msg);
    mt__msg_free(h->reply);
}

static int head_call_start(struct mt_client *c, struct mt__req *r);

/* The retry timer of a head call: its next attempt. */
static void head_call_again(struct mt_client *c, void *arg, bool closing)
{
    struct head_call *h = arg;
    int rc = closing ? -MT_ECLOSED : head_call_start(c, &h->r);

    if (rc < 0)
        mt__req_complete(c, &h->r, rc, closing ? "the client is "
                         "disconnecting" : "cannot start the call to the "
                         "head");
}

/* A failed attempt: try again later (RET true) when retry.c says so. */
static bool head_call_retry(struct mt_client *c, struct head_call *h,
                            const struct mt_rpc_status *st, char *msg,
                            size_t len)
{
    enum mt__repeat how = h->flags & MT__CALL_ONCE ? MT__REPEAT_UNSENT
                                                   : MT__REPEAT_SAFE;
    int delay = mt__retry_after(c, st, how, ++h->attempts, h->started_away,
                                msg, len);

    return delay >= 0 && mt__retry_later(c, delay, head_call_again, h) == 0;
}

static void on_head_call_done(void *arg, const struct mt_rpc_status *st,
                              const ProtobufCMessage *resp)
{
    struct head_call *h = arg;
    struct mt_client *c = h->r.client;
    char msg[256];

    c->n_calls--;
    if (st->code) {
        mt__rpc_text(st, msg, sizeof(msg));
        if (!head_call_retry(c, h, st, msg, sizeof(msg)))
            mt__req_complete(c, &h->r, mt__rpc_err(st), msg);
        return;
    }
    mt__head_back(c);
    h->reply = msg_copy(resp);
    mt__req_complete(c, &h->r, h->reply ? 0 : -MT_ENOMEM,
                     h->reply ? NULL : "out of memory");
}

static int head_call_start(struct mt_client *c, struct mt__req *r)
{
    struct head_call *h = (struct head_call *)r;
    int rc;

    h->started_away = mt__head_away(c);
    rc = mt_rpc_unary(c->ch, h->method, h->msg, r->timeout_ms,
                      mt__attempt_flags(c, r->rpc_flags), on_head_call_done,
                      h);
    if (rc == 0)
        c->n_calls++;
    return rc;
}

static const struct mt__req_ops head_call_ops = {
    .start = head_call_start,
    .release = head_call_release,
};

int mt__head_wait_ms(const struct mt_client *c, int timeout_ms)
{
    int64_t ms = (int64_t)timeout_ms + MT__WAIT_GRACE_MS;

    if (c->reconnect_ms > 0) /* a first attempt, the outage, a last one */
        ms += (int64_t)c->reconnect_ms + timeout_ms + MT__RETRY_MAX_MS;
    return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

int mt__head_call(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req, int timeout_ms, unsigned flags,
                  void **reply)
{
    struct head_call *h = mt__req_new(c, &head_call_ops, sizeof(*h));
    int rc;

    *reply = NULL;
    if (!h || !(h->msg = msg_copy(req))) {
        mt__req_free(h ? &h->r : NULL);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    h->method = method;
    h->flags = flags;
    h->r.timeout_ms = timeout_ms;
    h->r.rpc_flags = flags & MT__CALL_WAIT ? c->ready_flags : 0;
    rc = mt__req_run(c, &h->r, mt__head_wait_ms(c, timeout_ms));
    if (rc < 0)
        return rc;
    *reply = h->reply;
    h->reply = NULL;
    mt__req_free(&h->r);
    mt__clear_error(c);
    return 0;
}

/* ---- results handed out -------------------------------------------------- */

void *mt__keep_alloc(struct mt__keep *k, size_t n)
{
    void *p;

    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 8;
        void **v = realloc(k->blocks, cap * sizeof(*v));

        if (!v)
            return NULL;
        k->blocks = v;
        k->cap = cap;
    }
    if (!(p = calloc(1, n ? n : 1)))
        return NULL;
    k->blocks[k->n++] = p;
    return p;
}

void mt__keep_release(struct mt__keep *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->blocks[i]);
    free(k->blocks);
    mt__msg_free(k->reply);
    memset(k, 0, sizeof(*k));
}

int mt__json_take(struct mt_strbuf *sb, char **out)
{
    if (sb->failed || !sb->buf) {
        mt_strbuf_release(sb);
        return -MT_ENOMEM;
    }
    *out = sb->buf;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return 0;
}

void mt_free(void *p)
{
    free(p);
}
