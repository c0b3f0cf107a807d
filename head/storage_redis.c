/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_redis.c -- the Redis storage backend: `--storage
 * redis://[user:pass@]HOST:PORT[/DB]`. Each table is the hash
 * "manta:<table>"; a row is one field of it.
 *
 * Opening checks the server with a blocking connect, AUTH, SELECT and PING
 * (2 s at most), so a head pointed at a Redis it cannot use says why and
 * does not start. From then on every command is asynchronous on the
 * head's loop (redis_uv.h).
 *
 * Batches: writes wait in the buffer until the loop's idle phase (a
 * uv_idle handle armed only while some wait), then leave as one batch,
 * MULTI, the HSETs and HDELs, EXEC: one write(2), one round trip, applied
 * all or nothing. EXEC's answer runs the batch's done()s in order. A scan
 * sends what waits first, so it sees every write made before it.
 *
 * Redis lost while running: the head goes on from memory. Writes made
 * while Redis is away, and the batches it never answered, wait in order in
 * a bounded buffer (MAX_BUFFERED; beyond that the newest are refused and
 * logged) and are sent again, in order, once a reconnect (backoff
 * RETRY_MIN_MS doubling to RETRY_MAX_MS) has re-run AUTH and SELECT. A
 * scan while Redis is away fails at once (-MT_EUNAVAIL); one made while
 * the connection is being made waits for it.
 *
 * THREAD: the head's loop thread only.
 */
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/redis_uv.h"
#include "head/storage.h"

#define OPEN_TIMEOUT_MS 2000
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 2000
#define MAX_BUFFERED 100000
#define MAX_PART 255

enum { OP_PUT, OP_DEL };

/* A write: in a batch in flight, or buffered. */
struct wr {
    struct wr *next;
    struct rds *r;
    int kind;
    char *table, *key;
    void *val;
    size_t len;
    mt_storage_done_fn done;
    void *arg;
};

/* A batch in flight: MULTI, writes, EXEC; EXEC's reply ends it. */
struct batch {
    struct rds *r;
    struct wr *first;           /* in order, linked by next */
    size_t n;
};

/* A scan in flight. */
struct scan {
    struct rds *r;
    mt_storage_row_fn row;
    mt_storage_done_fn done;
    void *arg;
};

struct rds {
    uv_loop_t *loop;
    char host[MAX_PART + 1];
    int port;
    int db;
    char user[MAX_PART + 1], pass[MAX_PART + 1];
    redisAsyncContext *ac;      /* NULL while away */
    bool up;                    /* connected, AUTH and SELECT sent */
    bool closing;
    uv_timer_t retry;
    uv_idle_t idle;             /* armed while writes wait to be sent */
    int handles_open;
    int backoff_ms;
    struct wr *head, *tail;     /* buffered, oldest first */
    size_t n_buffered;
    struct wr *rq_head, *rq_tail; /* batches lost with the connection */
    size_t n_inflight;          /* writes in batches sent, not answered */
    size_t refused;             /* writes refused while the buffer was full */
    uint64_t writes, batches, dropped;
    int64_t last_error_ms, down_since_ms;
    char last_error[128];
};

/* ---- the uri ------------------------------------------------------------ */

/* Copy [p, p+n) into dst (MAX_PART + 1 bytes). RET 0, -1 too long. */
static int part(char *dst, const char *p, size_t n)
{
    if (n > MAX_PART)
        return -1;
    memcpy(dst, p, n);
    dst[n] = '\0';
    return 0;
}

/* "[user:pass@]HOST:PORT[/DB]" into r. RET 0 or -MT_EINVAL. */
static int parse(struct rds *r, const char *uri)
{
    const char *at = strrchr(uri, '@'), *hp = at ? at + 1 : uri;
    const char *colon = strrchr(hp, ':'), *slash = strchr(hp, '/');
    char *end;
    long v;

    if (at) {
        const char *c = memchr(uri, ':', (size_t)(at - uri));

        if (c ? part(r->user, uri, (size_t)(c - uri)) < 0 ||
                    part(r->pass, c + 1, (size_t)(at - c - 1)) < 0
              : part(r->pass, uri, (size_t)(at - uri)) < 0)
            return -MT_EINVAL;
    }
    if (!colon || colon == hp || (slash && slash < colon) ||
        part(r->host, hp, (size_t)(colon - hp)) < 0)
        return -MT_EINVAL;
    v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || v < 1 || v > 65535 || (*end && *end != '/'))
        return -MT_EINVAL;
    r->port = (int)v;
    if (*end == '/') {
        v = strtol(end + 1, &end, 10);
        if (*end || v < 0 || v > 1000000)
            return -MT_EINVAL;
        r->db = (int)v;
    }
    return 0;
}

/* ---- opening: a blocking check ------------------------------------------- */

/* Run one command on c; RET NULL or why it failed (static or in buf). */
static const char *check_cmd(redisContext *c, char *buf, size_t len,
                             const char *fmt, ...)
{
    redisReply *rep;
    const char *why = NULL;
    va_list ap;

    va_start(ap, fmt);
    rep = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!rep) {
        snprintf(buf, len, "%s", c->errstr);
        return buf;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        snprintf(buf, len, "%s", rep->str);
        why = buf;
    }
    freeReplyObject(rep);
    return why;
}

/* Connect, authenticate, select and ping once. RET 0 or -MT_EUNAVAIL. */
static int probe(const struct rds *r)
{
    struct timeval tv = {OPEN_TIMEOUT_MS / 1000,
                         (OPEN_TIMEOUT_MS % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(r->host, r->port, tv);
    const char *why = NULL;
    char buf[256];

    if (!c || c->err) {
        why = c ? c->errstr : "out of memory";
    } else {
        redisSetTimeout(c, tv);
        if (*r->pass && *r->user)
            why = check_cmd(c, buf, sizeof(buf), "AUTH %s %s", r->user,
                            r->pass);
        else if (*r->pass)
            why = check_cmd(c, buf, sizeof(buf), "AUTH %s", r->pass);
        if (!why && r->db)
            why = check_cmd(c, buf, sizeof(buf), "SELECT %d", r->db);
        if (!why)
            why = check_cmd(c, buf, sizeof(buf), "PING");
    }
    if (why)
        MT_ERROR("storage: cannot use Redis at %s:%d: %s", r->host, r->port,
                 why);
    redisFree(c);
    return why ? -MT_EUNAVAIL : 0;
}

/* ---- the connection ------------------------------------------------------ */

static void connect_async(struct rds *r);

static void wr_free(struct wr *w)
{
    free(w->table);
    free(w->key);
    free(w->val);
    free(w);
}

static void on_retry(uv_timer_t *t)
{
    connect_async(t->data);
}

static void schedule_retry(struct rds *r)
{
    if (r->closing)
        return;
    uv_timer_start(&r->retry, on_retry, (uint64_t)r->backoff_ms, 0);
    r->backoff_ms = r->backoff_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS
                                                     : r->backoff_ms * 2;
}

/* Remember why Redis is not usable now (for status and metrics). */
static void note_down(struct rds *r, const char *why)
{
    r->last_error_ms = mt_now_wall_ms();
    snprintf(r->last_error, sizeof(r->last_error), "%s", why);
    if (!r->down_since_ms)
        r->down_since_ms = r->last_error_ms;
}

/* Append w to the buffer (a write Redis has not taken). */
static void buffer(struct rds *r, struct wr *w)
{
    w->next = NULL;
    if (r->tail)
        r->tail->next = w;
    else
        r->head = w;
    r->tail = w;
    r->n_buffered++;
}

/* The batches lost with the connection go back before the buffer. */
static void requeue_first(struct rds *r)
{
    size_t n = 0;

    if (!r->rq_head)
        return;
    for (struct wr *w = r->rq_head; w; w = w->next)
        n++;
    r->rq_tail->next = r->head;
    if (!r->head)
        r->tail = r->rq_tail;
    r->head = r->rq_head;
    r->n_buffered += n;
    r->rq_head = r->rq_tail = NULL;
}

/* Run and free the done()s of a list of writes, all with err. */
static void finish_all(struct wr *w, int err)
{
    while (w) {
        struct wr *next = w->next;

        w->done(w->arg, err);
        wr_free(w);
        w = next;
    }
}

/* The done()s of an answered batch, in order, each with its own result. */
static void finish_batch(struct batch *b, const redisReply *rep)
{
    struct wr *w = b->first;

    for (size_t i = 0; w; i++) {
        struct wr *next = w->next;
        const redisReply *e =
            rep->type == REDIS_REPLY_ARRAY && i < rep->elements
                ? rep->element[i] : rep;
        int err = e->type == REDIS_REPLY_ERROR || e->type == REDIS_REPLY_NIL
                      ? -MT_EIO : 0;

        if (err)
            MT_WARN("storage: Redis refused a write to %s/%s: %s", w->table,
                    w->key, e->type == REDIS_REPLY_ERROR ? e->str
                                                         : "transaction lost");
        w->done(w->arg, err);
        wr_free(w);
        w = next;
    }
}

static void on_exec_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct batch *b = priv;
    struct rds *r = b->r;
    redisReply *rep = reply;

    (void)ac;
    r->n_inflight -= b->n;
    if (!rep && !r->closing) { /* connection lost: send it again later */
        struct wr *last = b->first;

        while (last->next)
            last = last->next;
        if (r->rq_tail)
            r->rq_tail->next = b->first;
        else
            r->rq_head = b->first;
        r->rq_tail = last;
    } else if (!rep) {
        finish_all(b->first, -MT_ECLOSED);
    } else {
        r->batches++;
        finish_batch(b, rep);
    }
    free(b);
}

static int send_one(struct rds *r, const struct wr *w)
{
    char hash[MAX_PART + 8];

    snprintf(hash, sizeof(hash), "manta:%s", w->table);
    if (w->kind == OP_PUT)
        return redisAsyncCommand(r->ac, NULL, NULL, "HSET %s %s %b", hash,
                                 w->key, w->val, w->len);
    return redisAsyncCommand(r->ac, NULL, NULL, "HDEL %s %s", hash, w->key);
}

/*
 * Send every buffered write as one MULTI/EXEC batch (connected only).
 * hiredis writes the commands queued in this turn with one write(2).
 */
static void send_batch(struct rds *r)
{
    struct batch *b;

    if (!r->up || !r->ac || !r->head ||
        (r->ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING)))
        return;
    if (redisAsyncCommand(r->ac, NULL, NULL, "MULTI") != REDIS_OK)
        return; /* the context is going: the reconnect sends them */
    b = mt_xcalloc(1, sizeof(*b));
    b->r = r;
    b->first = r->head;
    b->n = r->n_buffered;
    r->head = r->tail = NULL;
    r->n_buffered = 0;
    for (struct wr *w = b->first; w; w = w->next)
        send_one(r, w);
    r->n_inflight += b->n;
    redisAsyncCommand(r->ac, on_exec_reply, b, "EXEC");
}

static void on_idle(uv_idle_t *h)
{
    uv_idle_stop(h);
    send_batch(h->data);
}

/* Connected (AUTH and SELECT went first): send what waited, in order. */
static void came_up(struct rds *r)
{
    size_t n = r->n_buffered;

    r->up = true;
    r->backoff_ms = RETRY_MIN_MS;
    r->down_since_ms = 0;
    send_batch(r);
    if (n || r->refused)
        MT_WARN("storage: Redis at %s:%d is back: %zu buffered writes sent, "
                "%zu refused while it was away", r->host, r->port, n,
                r->refused);
    r->refused = 0;
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    struct rds *r = ac->data;

    if (status == REDIS_OK) {
        came_up(r);
        return;
    }
    MT_WARN("storage: cannot reach Redis at %s:%d: %s; retrying", r->host,
            r->port, ac->errstr);
    note_down(r, ac->errstr);
    r->ac = NULL; /* hiredis frees it */
    r->up = false;
    requeue_first(r);
    schedule_retry(r);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    struct rds *r = ac->data;

    r->ac = NULL;
    if (r->closing)
        return;
    if (r->up)
        MT_WARN("storage: lost Redis at %s:%d (%s); serving from memory, "
                "buffering writes", r->host, r->port,
                status == REDIS_OK ? "closed" : ac->errstr);
    note_down(r, status == REDIS_OK ? "connection closed" : ac->errstr);
    r->up = false;
    requeue_first(r); /* the lost batches, then what waited behind them */
    schedule_retry(r);
}

static void connect_async(struct rds *r)
{
    redisAsyncContext *ac;

    if (r->closing || r->ac)
        return;
    ac = redisAsyncConnect(r->host, r->port);
    if (!ac || ac->err || mt_redis_uv_attach(ac, r->loop) < 0) {
        if (ac)
            redisAsyncFree(ac);
        schedule_retry(r);
        return;
    }
    ac->data = r;
    r->ac = ac;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    /* Queued now, they go first once connected, before any write or scan
     * made meanwhile. */
    if (*r->pass && *r->user)
        redisAsyncCommand(ac, NULL, NULL, "AUTH %s %s", r->user, r->pass);
    else if (*r->pass)
        redisAsyncCommand(ac, NULL, NULL, "AUTH %s", r->pass);
    if (r->db)
        redisAsyncCommand(ac, NULL, NULL, "SELECT %d", r->db);
}

/* ---- the ops ------------------------------------------------------------- */

static int rds_open(uv_loop_t *loop, const char *uri, void **st)
{
    struct rds *r = mt_xcalloc(1, sizeof(*r));
    int rc = parse(r, uri);

    if (rc < 0) {
        MT_ERROR("storage: bad Redis address \"%s\": want "
                 "redis://[user:pass@]HOST:PORT[/DB]", uri);
        free(r);
        return rc;
    }
    if ((rc = probe(r)) < 0) {
        free(r);
        return rc;
    }
    r->loop = loop;
    r->backoff_ms = RETRY_MIN_MS;
    uv_timer_init(loop, &r->retry);
    uv_idle_init(loop, &r->idle);
    r->retry.data = r->idle.data = r;
    r->handles_open = 2;
    connect_async(r);
    MT_INFO("storage: Redis at %s:%d db %d", r->host, r->port, r->db);
    *st = r;
    return 0;
}

static void on_handle_closed(uv_handle_t *h)
{
    struct rds *r = h->data;

    if (--r->handles_open == 0)
        free(r);
}

/* Send what waits; what Redis has not answered fails with -MT_ECLOSED. */
static void rds_close(void *st)
{
    struct rds *r = st;
    size_t lost;

    send_batch(r);
    r->closing = true;
    if (r->ac) /* pending callbacks run now, with NULL replies */
        redisAsyncFree(r->ac);
    r->ac = NULL;
    requeue_first(r);
    lost = r->n_buffered;
    finish_all(r->head, -MT_ECLOSED);
    r->head = r->tail = NULL;
    r->n_buffered = 0;
    if (lost)
        MT_WARN("storage: %zu writes never reached Redis", lost);
    uv_close((uv_handle_t *)&r->retry, on_handle_closed);
    uv_close((uv_handle_t *)&r->idle, on_handle_closed);
}

static int queue_write(struct rds *r, int kind, const char *table,
                       const char *key, const void *val, size_t len,
                       mt_storage_done_fn done, void *arg)
{
    struct wr *w;

    if (!table || !key || strlen(table) > MAX_PART)
        return -MT_EINVAL;
    if (r->closing)
        return -MT_ECLOSED;
    if (!r->up && r->n_buffered >= MAX_BUFFERED) {
        r->dropped++;
        if (r->refused++ == 0)
            MT_WARN("storage: Redis away and %d writes buffered: refusing "
                    "more", MAX_BUFFERED);
        return -MT_EUNAVAIL;
    }
    w = mt_xcalloc(1, sizeof(*w));
    w->r = r;
    w->kind = kind;
    w->table = mt_xstrdup(table);
    w->key = mt_xstrdup(key);
    if (kind == OP_PUT) {
        w->val = mt_xmalloc(len ? len : 1);
        memcpy(w->val, val, len);
        w->len = len;
    }
    w->done = done;
    w->arg = arg;
    r->writes++;
    buffer(r, w); /* sent at the idle phase, or once Redis is back */
    if (r->up)
        uv_idle_start(&r->idle, on_idle);
    return 0;
}

static int rds_put(void *st, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg)
{
    return queue_write(st, OP_PUT, table, key, val, len, done, arg);
}

static int rds_del(void *st, const char *table, const char *key,
                   mt_storage_done_fn done, void *arg)
{
    return queue_write(st, OP_DEL, table, key, NULL, 0, done, arg);
}

static void on_scan_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct scan *s = priv;
    redisReply *rep = reply;

    (void)ac;
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        s->done(s->arg, rep ? -MT_EIO : -MT_EUNAVAIL);
        free(s);
        return;
    }
    for (size_t i = 0; i + 1 < rep->elements; i += 2) {
        const redisReply *k = rep->element[i], *v = rep->element[i + 1];

        if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING)
            s->row(s->arg, k->str, v->str, v->len);
    }
    s->done(s->arg, 0);
    free(s);
}

static int rds_scan(void *st, const char *table, mt_storage_row_fn row,
                    mt_storage_done_fn done, void *arg)
{
    struct rds *r = st;
    struct scan *s;
    char hash[MAX_PART + 8];

    if (strlen(table) > MAX_PART)
        return -MT_EINVAL;
    send_batch(r); /* the writes made before it go first */
    if (!r->ac || (!r->up && r->n_buffered)) {
        /* away, or writes would wait behind it: the head goes on with
         * what it has */
        done(arg, -MT_EUNAVAIL);
        return 0;
    }
    s = mt_xcalloc(1, sizeof(*s));
    s->r = r;
    s->row = row;
    s->done = done;
    s->arg = arg;
    snprintf(hash, sizeof(hash), "manta:%s", table);
    if (redisAsyncCommand(r->ac, on_scan_reply, s, "HGETALL %s", hash) !=
        REDIS_OK) {
        free(s);
        done(arg, -MT_EUNAVAIL);
    }
    return 0;
}

static void rds_stats(const void *st, struct mt_storage_stats *out)
{
    const struct rds *r = st;
    size_t rq = 0;

    for (const struct wr *w = r->rq_head; w; w = w->next)
        rq++;
    out->healthy = r->up;
    out->writes = r->writes;
    out->batches = r->batches;
    out->buffered = r->n_buffered + r->n_inflight + rq;
    out->dropped = r->dropped;
    out->last_error_ms = r->last_error_ms;
    out->down_since_ms = r->up ? 0 : r->down_since_ms;
    snprintf(out->last_error, sizeof(out->last_error), "%s", r->last_error);
}

const struct mt_storage_ops mt_storage_redis = {
    .name = "redis",
    .open = rds_open,
    .close = rds_close,
    .put = rds_put,
    .del = rds_del,
    .scan = rds_scan,
    .stats = rds_stats,
};
