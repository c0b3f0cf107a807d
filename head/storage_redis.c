/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_redis.c -- the Redis storage backend: `--storage
 * redis://[user:pass@]HOST:PORT[/DB]`. Each table is the hash
 * "manta:<table>"; a row is one field of it.
 *
 * Opening checks the server with a blocking connect, AUTH, SELECT and PING
 * (2 s at most), so a head pointed at a Redis it cannot use says why and
 * does not start. From then on every command is asynchronous on the
 * head's loop (redis_uv.h), pipelined by hiredis: writes made in one loop
 * turn leave in one write(2).
 *
 * Redis lost while running: the head goes on from memory. Writes made
 * while Redis is away, and those it never answered, wait in order in a
 * bounded buffer (MAX_BUFFERED; beyond that the newest are refused and
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
#include "head/redis_uv.h"
#include "head/storage.h"

#define OPEN_TIMEOUT_MS 2000
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 2000
#define MAX_BUFFERED 100000
#define MAX_PART 255

enum { OP_PUT, OP_DEL };

/* A write: in flight (its reply pending) or buffered. */
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
    int backoff_ms;
    struct wr *head, *tail;     /* buffered, oldest first */
    size_t n_buffered;
    size_t refused;             /* writes refused while the buffer was full */
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
static void send_wr(struct rds *r, struct wr *w);

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

static void on_write_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct wr *w = priv;
    struct rds *r = w->r;
    redisReply *rep = reply;

    (void)ac;
    if (!rep && !r->closing) { /* connection lost: send it again later */
        buffer(r, w);
        return;
    }
    if (rep && rep->type == REDIS_REPLY_ERROR)
        MT_WARN("storage: Redis refused a write to %s/%s: %s", w->table,
                w->key, rep->str);
    w->done(w->arg, !rep ? -MT_ECLOSED
                    : rep->type == REDIS_REPLY_ERROR ? -MT_EIO : 0);
    wr_free(w);
}

static void send_wr(struct rds *r, struct wr *w)
{
    char hash[MAX_PART + 8];
    int rc;

    snprintf(hash, sizeof(hash), "manta:%s", w->table);
    if (w->kind == OP_PUT)
        rc = redisAsyncCommand(r->ac, on_write_reply, w, "HSET %s %s %b",
                               hash, w->key, w->val, w->len);
    else
        rc = redisAsyncCommand(r->ac, on_write_reply, w, "HDEL %s %s", hash,
                               w->key);
    if (rc != REDIS_OK)
        buffer(r, w); /* the context is going: the reconnect sends it */
}

/* Connected (AUTH and SELECT went first): send what waited, in order. */
static void came_up(struct rds *r)
{
    struct wr *w = r->head;
    size_t n = r->n_buffered;

    r->up = true;
    r->backoff_ms = RETRY_MIN_MS;
    r->head = r->tail = NULL;
    r->n_buffered = 0;
    while (w) {
        struct wr *next = w->next;

        send_wr(r, w);
        w = next;
    }
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
    r->ac = NULL; /* hiredis frees it */
    r->up = false;
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
    r->up = false;
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
    r->retry.data = r;
    connect_async(r);
    MT_INFO("storage: Redis at %s:%d db %d", r->host, r->port, r->db);
    *st = r;
    return 0;
}

static void on_retry_closed(uv_handle_t *h)
{
    free(h->data);
}

static void rds_close(void *st)
{
    struct rds *r = st;
    struct wr *w;

    r->closing = true;
    if (r->ac) /* pending callbacks run now, with NULL replies */
        redisAsyncFree(r->ac);
    r->ac = NULL;
    while ((w = r->head)) {
        r->head = w->next;
        w->done(w->arg, -MT_ECLOSED);
        wr_free(w);
    }
    if (r->n_buffered)
        MT_WARN("storage: %zu writes never reached Redis", r->n_buffered);
    uv_close((uv_handle_t *)&r->retry, on_retry_closed);
}

static int queue_write(struct rds *r, int kind, const char *table,
                       const char *key, const void *val, size_t len,
                       mt_storage_done_fn done, void *arg)
{
    struct wr *w;

    if (strlen(table) > MAX_PART)
        return -MT_EINVAL;
    if (r->n_buffered >= MAX_BUFFERED) {
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
    if (r->ac && r->n_buffered == 0) /* connected or connecting */
        send_wr(r, w);
    else /* behind older writes that wait for the connection */
        buffer(r, w);
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
    if (!r->ac) { /* away: the head goes on with what it has */
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

const struct mt_storage_ops mt_storage_redis = {
    .name = "redis",
    .open = rds_open,
    .close = rds_close,
    .put = rds_put,
    .del = rds_del,
    .scan = rds_scan,
};
