/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c -- the store's Unix socket server on a libuv loop.
 *
 * Each connection reads frames (protocol.h) into one growing buffer, handles
 * every complete frame in the order received, appends replies to one output
 * buffer and flushes it once per read callback (uv_try_write first, a queued
 * uv_write for any remainder), so a client that pipelines requests costs one
 * write syscall per batch. HELLO is answered with sendmsg() directly because
 * libuv cannot pass an arbitrary fd; nothing else is queued at that point.
 *
 * A GET with a timeout on an object that is absent or unsealed parks a
 * waiter on the object id; the store's seal callback answers every waiter of
 * that id, and the waiter's timer answers -MT_ETIMEDOUT.
 *
 * RELEASE BOARDS: each connection gets a small board in the arena
 * (shm_layout.h) where its client marks pins it keeps only as a cache. When
 * the store runs out of space with no candidate left, on_reclaim() takes
 * those pins back (board_steal) instead of failing with -MT_ENOSPC, so an
 * idle client cannot hold memory hostage. A board is freed when its
 * connection closes; the client library never touches it after disconnect.
 *
 * OWNERSHIP: the server owns its connections and waiters; a connection's
 * memory is freed in its close callback, a waiter's in its timer's.
 * Per connection, `pins` counts the store pins taken through it and
 * `created` lists the unsealed objects it created; conn_close() gives both
 * back to the store before anything is freed. `puts` lists the objects it
 * created with MT_OBJ_DRIVER_PUT (an id leaves it when the object is
 * deleted); conn_close() hands those still in the store to the orphans
 * callback.
 *
 * THREAD loop thread only.
 */
#include "server.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "objstore/idmap.h"
#include "objstore/protocol.h"
#include "objstore/shm_layout.h"

#define READ_CHUNK (64u * 1024u)
/* A peer that lets this much of our output pile up unread is dropped. */
#define MAX_QUEUED_OUTPUT (16u * 1024u * 1024u)

struct conn;

/* A pin count or a created object held by one connection. */
struct hold {
    struct mt_idmap_node node;
    uint32_t count;
};

/* A GET waiting for a seal. Guarded by: loop thread. */
struct waiter {
    struct mt_server *srv;
    struct conn *conn;
    mt_object_id id;
    uint32_t seq;
    bool has_timer;
    uv_timer_t timer;           /* data = this waiter */
    struct waiter *id_prev;     /* on the id's wait list */
    struct waiter *id_next;
    struct waiter *conn_prev;   /* on the connection's list */
    struct waiter *conn_next;
};

/* The waiters of one id. */
struct wait_list {
    struct mt_idmap_node node;
    struct waiter *head;
};

/* One client connection. Guarded by: loop thread. */
struct conn {
    uv_pipe_t pipe;             /* data = this conn */
    struct mt_server *srv;
    struct conn *prev, *next;   /* server's list */
    uint64_t client_id;
    bool hello;                 /* HELLO done */
    bool closing;               /* conn_close() ran */
    uint8_t *rbuf;              /* unparsed input */
    size_t rlen, rcap;
    uint8_t *wbuf;              /* replies not yet written */
    size_t wlen, wcap;
    struct mt_idmap pins;       /* struct hold: pins per id */
    struct mt_idmap created;    /* struct hold: unsealed creations */
    struct mt_idmap puts;       /* struct hold: MT_OBJ_DRIVER_PUT creations */
    struct waiter *waiters;     /* this connection's waiting gets */
    void *board;                /* release board reservation, or NULL */
    uint64_t board_off;         /* its offset in the arena */
};

struct mt_server {
    uv_loop_t *loop;
    struct mt_store *st;
    uv_pipe_t listener;
    char *path;
    struct conn *conns;
    struct mt_idmap waits;      /* struct wait_list by id */
    uint64_t next_client_id;
    struct mt_server_stats stats;
    mt_server_orphans_fn orphans; /* puts of closed connections */
    void *orphans_arg;
    bool stopping;
    int handles;                /* open uv handles; freed at zero */
};

struct wreq {
    uv_write_t req;             /* data = conn */
    uv_buf_t buf;
    uint8_t data[];
};

static void conn_close(struct conn *c);
static void server_unref(struct mt_server *srv);

/* ---- holds (pins and creations per connection) ---- */

static void hold_add(struct mt_idmap *m, const mt_object_id *id)
{
    struct mt_idmap_node *n = mt_idmap_find(m, id);
    struct hold *h;

    if (n) {
        MT_CONTAINER_OF(n, struct hold, node)->count++;
        return;
    }
    h = mt_xcalloc(1, sizeof(*h));
    h->node.id = *id;
    h->count = 1;
    mt_idmap_insert(m, &h->node);
}

/* Drop one count; RET false when id was not held. */
static bool hold_drop(struct mt_idmap *m, const mt_object_id *id)
{
    struct mt_idmap_node *n = mt_idmap_find(m, id);
    struct hold *h;

    if (!n)
        return false;
    h = MT_CONTAINER_OF(n, struct hold, node);
    if (--h->count == 0) {
        mt_idmap_remove(m, n);
        free(h);
    }
    return true;
}

/* ---- output ---- */

static void on_write(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct conn *c = req->data;

    free(w);
    if (status < 0 && !c->closing)
        conn_close(c);
}

static void reply(struct conn *c, uint16_t type, uint32_t seq, int status,
                  const void *payload, uint32_t len)
{
    struct mt_proto_hdr h = {.len = status < 0 ? 0 : len,
                             .type = type,
                             .flags = MT_PROTO_F_REPLY,
                             .seq = seq,
                             .status = status};

    if (c->closing)
        return;
    mt_xgrow((void **)&c->wbuf, &c->wcap, c->wlen + sizeof(h) + h.len, 1);
    memcpy(c->wbuf + c->wlen, &h, sizeof(h));
    if (h.len)
        memcpy(c->wbuf + c->wlen + sizeof(h), payload, h.len);
    c->wlen += sizeof(h) + h.len;
}

static void flush(struct conn *c)
{
    uv_buf_t b = uv_buf_init((char *)c->wbuf, (unsigned)c->wlen);
    struct wreq *w;
    int n;

    if (c->closing || c->wlen == 0)
        return;
    n = uv_try_write((uv_stream_t *)&c->pipe, &b, 1);
    if (n == (int)c->wlen) {
        c->wlen = 0;
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    if (n < 0)
        n = 0;
    w = mt_xmalloc(sizeof(*w) + c->wlen - (size_t)n);
    memcpy(w->data, c->wbuf + n, c->wlen - (size_t)n);
    w->buf = uv_buf_init((char *)w->data, (unsigned)(c->wlen - (size_t)n));
    w->req.data = c;
    c->wlen = 0;
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &w->buf, 1, on_write) < 0) {
        free(w);
        conn_close(c);
        return;
    }
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) >
        MAX_QUEUED_OUTPUT) {
        MT_WARN("objstore client=%llu does not read its replies, dropped",
                (unsigned long long)c->client_id);
        conn_close(c);
    }
}

/* ---- waiters ---- */

static void on_timer_closed(uv_handle_t *h)
{
    struct mt_server *srv = ((struct waiter *)h->data)->srv;

    free(h->data);
    server_unref(srv);
}

static void waiter_unlink_id(struct mt_server *srv, struct waiter *w)
{
    struct mt_idmap_node *n = mt_idmap_find(&srv->waits, &w->id);
    struct wait_list *wl;

    if (!n)
        return;
    wl = MT_CONTAINER_OF(n, struct wait_list, node);
    if (w->id_prev)
        w->id_prev->id_next = w->id_next;
    else
        wl->head = w->id_next;
    if (w->id_next)
        w->id_next->id_prev = w->id_prev;
    if (!wl->head) {
        mt_idmap_remove(&srv->waits, n);
        free(wl);
    }
}

/* Unlink from the connection and free (after the timer closes). */
static void waiter_free(struct waiter *w)
{
    struct conn *c = w->conn;

    if (w->conn_prev)
        w->conn_prev->conn_next = w->conn_next;
    else
        c->waiters = w->conn_next;
    if (w->conn_next)
        w->conn_next->conn_prev = w->conn_prev;
    c->srv->stats.waiting--;
    if (!w->has_timer) {
        free(w);
        return;
    }
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, on_timer_closed);
}

static void on_wait_timeout(uv_timer_t *t)
{
    struct waiter *w = t->data;
    struct conn *c = w->conn;

    waiter_unlink_id(w->srv, w);
    reply(c, MT_MSG_GET, w->seq, -MT_ETIMEDOUT, NULL, 0);
    waiter_free(w);
    flush(c);
}

static void waiter_add(struct conn *c, const mt_object_id *id, uint32_t seq,
                       int64_t timeout_ms)
{
    struct mt_server *srv = c->srv;
    struct waiter *w = mt_xcalloc(1, sizeof(*w));
    struct mt_idmap_node *n = mt_idmap_find(&srv->waits, id);
    struct wait_list *wl;

    if (!n) {
        wl = mt_xcalloc(1, sizeof(*wl));
        wl->node.id = *id;
        mt_idmap_insert(&srv->waits, &wl->node);
    } else {
        wl = MT_CONTAINER_OF(n, struct wait_list, node);
    }
    w->srv = srv;
    w->conn = c;
    w->id = *id;
    w->seq = seq;
    w->id_next = wl->head;
    if (wl->head)
        wl->head->id_prev = w;
    wl->head = w;
    w->conn_next = c->waiters;
    if (c->waiters)
        c->waiters->conn_prev = w;
    c->waiters = w;
    srv->stats.waiting++;
    if (timeout_ms > 0) {
        w->has_timer = true;
        uv_timer_init(srv->loop, &w->timer);
        w->timer.data = w;
        srv->handles++;
        uv_timer_start(&w->timer, on_wait_timeout, (uint64_t)timeout_ms, 0);
    }
}

/* Answer a GET: pin through c, or say why not. */
static void answer_get(struct conn *c, const mt_object_id *id, uint32_t seq,
                       int rc, const struct mt_object_info *info)
{
    if (rc == 0) {
        hold_add(&c->pins, id);
        reply(c, MT_MSG_GET, seq, 0, info, sizeof(*info));
    } else {
        reply(c, MT_MSG_GET, seq, rc, NULL, 0);
    }
}

/* id is gone from the store: no connection's put any more. */
static void forget_put(struct mt_server *srv, const mt_object_id *id)
{
    for (struct conn *c = srv->conns; c; c = c->next)
        hold_drop(&c->puts, id);
}

/*
 * Store listener: on a seal, answer every waiter of id; on a deletion,
 * forget it as a put. Replies are only queued
 * in the first pass; flushing (which may close a connection and free its
 * other waiters) waits until no waiter pointer is held.
 */
static void on_event(void *arg, enum mt_store_event ev,
                     const mt_object_id *id)
{
    struct mt_server *srv = arg;
    struct mt_idmap_node *n;
    struct conn **todo = NULL;
    size_t ntodo = 0, cap = 0;
    struct waiter *w, *next;
    struct wait_list *wl;

    if (ev == MT_STORE_DELETED || ev == MT_STORE_EVICTED) {
        forget_put(srv, id);
        return;
    }
    if (ev != MT_STORE_SEALED)
        return;
    n = mt_idmap_find(&srv->waits, id);
    if (!n)
        return;
    wl = MT_CONTAINER_OF(n, struct wait_list, node);
    mt_idmap_remove(&srv->waits, n);
    for (w = wl->head; w; w = next) {
        struct mt_object_info info;
        int rc = mt_store_get(srv->st, id, &info);

        next = w->id_next;
        answer_get(w->conn, id, w->seq, rc, &info);
        mt_xgrow((void **)&todo, &cap, ntodo + 1, sizeof(*todo));
        todo[ntodo++] = w->conn;
        waiter_free(w);
    }
    free(wl);
    for (size_t i = 0; i < ntodo; i++)
        flush(todo[i]);
    free(todo);
}

/* ---- request handlers ---- */

/* Create q's object for c; a driver's put is remembered in c->puts. */
static int create(struct conn *c, const struct mt_proto_create *q,
                  struct mt_object_info *info)
{
    int rc = mt_store_create_object(
        c->srv->st, &q->id, q->data_size, q->meta_size,
        q->flags & ~(MT_OBJ_TENSOR | MT_OBJ_DRIVER_PUT),
        (q->flags & MT_OBJ_TENSOR) ? &q->tensor : NULL, info);

    if (rc == 0 && (q->flags & MT_OBJ_DRIVER_PUT) &&
        !mt_idmap_find(&c->puts, &q->id))
        hold_add(&c->puts, &q->id);
    return rc;
}

static void do_create(struct conn *c, const struct mt_proto_hdr *h,
                      const void *p)
{
    struct mt_proto_create q;
    struct mt_object_info info;
    int rc;

    memcpy(&q, p, sizeof(q));
    rc = create(c, &q, &info);
    if (rc == 0)
        hold_add(&c->created, &q.id);
    reply(c, h->type, h->seq, rc, &info, sizeof(info));
}

static void do_put(struct conn *c, const struct mt_proto_hdr *h, const void *p)
{
    struct mt_store *st = c->srv->st;
    struct mt_proto_create q;
    struct mt_object_info info;
    int rc;

    memcpy(&q, p, sizeof(q));
    rc = create(c, &q, &info);
    if (rc == 0) {
        memcpy(mt_store_base(st) + info.offset, (const uint8_t *)p + sizeof(q),
               q.data_size + q.meta_size);
        rc = mt_store_seal(st, &q.id);
    }
    reply(c, h->type, h->seq, rc, NULL, 0);
}

/* SEAL and ABORT: only on objects this connection created. */
static void do_finish(struct conn *c, const struct mt_proto_hdr *h,
                      const void *p)
{
    struct mt_store *st = c->srv->st;
    mt_object_id id;
    int rc;

    memcpy(&id, p, sizeof(id));
    if (!mt_idmap_find(&c->created, &id)) {
        rc = mt_store_contains(st, &id);
        rc = rc == 0 ? -MT_ESTATE : rc == -MT_EAGAIN ? -MT_EPERM : rc;
    } else {
        hold_drop(&c->created, &id);
        if (h->type == MT_MSG_ABORT)
            hold_drop(&c->puts, &id);
        rc = h->type == MT_MSG_SEAL ? mt_store_seal(st, &id)
                                    : mt_store_abort(st, &id);
    }
    reply(c, h->type, h->seq, rc, NULL, 0);
}

static void do_get(struct conn *c, const struct mt_proto_hdr *h, const void *p)
{
    struct mt_proto_get q;
    struct mt_object_info info;
    int rc;

    memcpy(&q, p, sizeof(q));
    rc = mt_store_get(c->srv->st, &q.id, &info);
    if ((rc == -MT_ENOENT || rc == -MT_EAGAIN) && q.timeout_ms != 0) {
        waiter_add(c, &q.id, h->seq, q.timeout_ms);
        return;
    }
    answer_get(c, &q.id, h->seq, rc, &info);
}

static void do_release(struct conn *c, const struct mt_proto_hdr *h,
                       const uint8_t *p)
{
    struct mt_store *st = c->srv->st;
    int first = 0;

    for (uint32_t off = 0; off < h->len; off += MT_OBJECT_ID_LEN) {
        mt_object_id id;
        int rc;

        memcpy(&id, p + off, sizeof(id));
        if (hold_drop(&c->pins, &id))
            rc = mt_store_release(st, &id);
        else
            rc = mt_store_contains(st, &id) == -MT_ENOENT ? -MT_ENOENT
                                                          : -MT_ESTATE;
        if (rc < 0 && first == 0)
            first = rc;
    }
    if (!(h->flags & MT_PROTO_F_ONEWAY))
        reply(c, h->type, h->seq, first, NULL, 0);
}

static void do_simple(struct conn *c, const struct mt_proto_hdr *h,
                      const void *p)
{
    struct mt_store *st = c->srv->st;
    struct mt_store_stats s;
    mt_object_id id;
    int rc;

    if (h->type == MT_MSG_STATS) {
        mt_store_stats(st, &s);
        reply(c, h->type, h->seq, 0, &s, sizeof(s));
        return;
    }
    if (h->type == MT_MSG_SERVER_STATS) {
        reply(c, h->type, h->seq, 0, &c->srv->stats, sizeof(c->srv->stats));
        return;
    }
    memcpy(&id, p, sizeof(id));
    rc = h->type == MT_MSG_DELETE ? mt_store_delete(st, &id)
                                  : mt_store_contains(st, &id);
    reply(c, h->type, h->seq, rc, NULL, 0);
}

/* ---- release boards ---- */

/*
 * Reserve c's release board (shm_layout.h). Without one (store full) the
 * client still works; only its deferred pins cannot be reclaimed.
 */
static int board_open(struct conn *c)
{
    int rc = mt_store_reserve(c->srv->st,
                              MT_BOARD_SLOTS *
                                  sizeof(struct mt_shm_board_slot),
                              &c->board_off, &c->board);

    if (rc < 0)
        MT_DEBUG("objstore client=%llu gets no release board: %s",
                 (unsigned long long)c->client_id, mt_strerror(rc));
    return rc;
}

/*
 * Take every DEFERRED slot of c's board and drop the pin it names. The id
 * is read before the CAS and trusted only if the CAS succeeds (the word,
 * generation included, did not change meanwhile); an id c holds no pin on
 * is ignored, so a scribbled board cannot release anybody else's pins.
 */
static uint64_t board_steal(struct conn *c)
{
    struct mt_shm_board_slot *slot =
        (void *)(mt_store_base(c->srv->st) + c->board_off);
    uint64_t n = 0;

    for (uint32_t i = 0; c->board && i < MT_BOARD_SLOTS; i++) {
        uint32_t w = __atomic_load_n(&slot[i].word, __ATOMIC_ACQUIRE);
        mt_object_id id;

        if (MT_BOARD_STATE(w) != MT_BOARD_DEFERRED)
            continue;
        memcpy(id.b, slot[i].id, sizeof(id.b));
        if (!__atomic_compare_exchange_n(&slot[i].word, &w,
                                         (w & ~3u) | MT_BOARD_STOLEN, false,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        if (hold_drop(&c->pins, &id) && mt_store_release(c->srv->st, &id) == 0)
            n++;
    }
    return n;
}

/* Store reclaim callback: the store is full; take back cached pins. */
static uint64_t on_reclaim(void *arg)
{
    struct mt_server *srv = arg;
    uint64_t n = 0;

    for (struct conn *c = srv->conns; c; c = c->next)
        n += board_steal(c);
    if (n)
        MT_DEBUG("objstore reclaimed %llu cached pins", (unsigned long long)n);
    return n;
}

/* HELLO: answer with the arena fd attached (SCM_RIGHTS). */
static int do_hello(struct conn *c, const struct mt_proto_hdr *h,
                    const void *p)
{
    struct mt_proto_hello_req q;
    struct {
        struct mt_proto_hdr h;
        struct mt_proto_hello_rep r;
    } out = {{sizeof(out.r), MT_MSG_HELLO, MT_PROTO_F_REPLY, h->seq, 0},
             {MT_PROTO_VERSION, 0, c->client_id,
              mt_store_arena_size(c->srv->st), 0}};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {&out, sizeof(out)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct cmsghdr *cm;
    int fd = mt_store_fd(c->srv->st), sock;

    memcpy(&q, p, sizeof(q));
    if (q.version != MT_PROTO_VERSION) {
        reply(c, h->type, h->seq, -MT_EVERSION, NULL, 0);
        return 0;
    }
    if (board_open(c) == 0) {
        out.r.board_offset = c->board_off;
        out.r.board_slots = MT_BOARD_SLOTS;
    }
    memset(&ctl, 0, sizeof(ctl));
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    if (uv_fileno((uv_handle_t *)&c->pipe, &sock) < 0 ||
        sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(out))
        return -MT_EIO;
    c->hello = true;
    MT_DEBUG("objstore client connected client=%llu pid=%u",
             (unsigned long long)c->client_id, q.pid);
    return 0;
}

/* Handle one complete frame. RET < 0: drop the connection. */
static int dispatch(struct conn *c, const struct mt_proto_hdr *h,
                    const uint8_t *p)
{
    c->srv->stats.requests++;
    if (mt_proto_check_request(h, p) < 0) {
        c->srv->stats.proto_errors++;
        if (!c->hello)
            return -MT_EPROTO;
        if (!(h->type == MT_MSG_RELEASE && (h->flags & MT_PROTO_F_ONEWAY)))
            reply(c, h->type, h->seq, -MT_EPROTO, NULL, 0);
        return 0;
    }
    if (!c->hello && h->type != MT_MSG_HELLO)
        return -MT_EPROTO;
    switch (h->type) {
    case MT_MSG_HELLO:
        if (!c->hello)
            return do_hello(c, h, p);
        reply(c, h->type, h->seq, -MT_EPROTO, NULL, 0);
        break;
    case MT_MSG_CREATE:
        do_create(c, h, p);
        break;
    case MT_MSG_PUT:
        do_put(c, h, p);
        break;
    case MT_MSG_SEAL:
    case MT_MSG_ABORT:
        do_finish(c, h, p);
        break;
    case MT_MSG_GET:
        do_get(c, h, p);
        break;
    case MT_MSG_RELEASE:
        do_release(c, h, p);
        break;
    default:
        do_simple(c, h, p);
        break;
    }
    return 0;
}

/* ---- input ---- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct conn *c = h->data;

    (void)hint;
    mt_xgrow((void **)&c->rbuf, &c->rcap, c->rlen + READ_CHUNK, 1);
    *buf = uv_buf_init((char *)c->rbuf + c->rlen,
                       (unsigned)(c->rcap - c->rlen));
}

/* Handle every complete frame in rbuf; keep the partial tail. */
static void parse(struct conn *c)
{
    size_t pos = 0;

    while (!c->closing && c->rlen - pos >= MT_PROTO_HDR_SIZE) {
        struct mt_proto_hdr h;

        memcpy(&h, c->rbuf + pos, sizeof(h));
        if (h.len > MT_PROTO_MAX_PAYLOAD) {
            c->srv->stats.proto_errors++;
            MT_WARN("objstore client=%llu sent a %u-byte frame, dropped",
                    (unsigned long long)c->client_id, h.len);
            conn_close(c);
            return;
        }
        if (c->rlen - pos < MT_PROTO_HDR_SIZE + h.len)
            break;
        if (dispatch(c, &h, c->rbuf + pos + MT_PROTO_HDR_SIZE) < 0) {
            conn_close(c);
            return;
        }
        pos += MT_PROTO_HDR_SIZE + h.len;
    }
    memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
    c->rlen -= pos;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;

    (void)buf;
    if (nread < 0) {
        conn_close(c);
        return;
    }
    c->rlen += (size_t)nread;
    parse(c);
    flush(c);
}

/* ---- connections ---- */

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct mt_server *srv = c->srv;

    mt_idmap_release(&c->pins);
    mt_idmap_release(&c->created);
    mt_idmap_release(&c->puts);
    free(c->rbuf);
    free(c->wbuf);
    free(c);
    server_unref(srv);
}

/* Give the store back everything c holds, freeing each hold record. */
static void give_back(struct mt_store *st, struct mt_idmap *m, bool pins)
{
    struct mt_idmap_node *n, *next;

    for (n = mt_idmap_first(m); n; n = next) {
        struct hold *h = MT_CONTAINER_OF(n, struct hold, node);

        next = mt_idmap_next(m, n);
        for (uint32_t i = 0; i < h->count; i++)
            if (pins)
                mt_store_release(st, &n->id);
            else
                mt_store_abort(st, &n->id);
        mt_idmap_remove(m, n);
        free(h);
    }
}

/* Hand c's puts still in the store to the orphans callback; forget all. */
static void report_puts(struct conn *c)
{
    struct mt_server *srv = c->srv;
    struct mt_idmap_node *n, *next;
    mt_object_id *ids = NULL;
    size_t k = 0, cap = 0;

    for (n = mt_idmap_first(&c->puts); n; n = next) {
        next = mt_idmap_next(&c->puts, n);
        if (srv->orphans && !srv->stopping &&
            mt_store_contains(srv->st, &n->id) == 0) {
            mt_xgrow((void **)&ids, &cap, k + 1, sizeof(*ids));
            ids[k++] = n->id;
        }
        mt_idmap_remove(&c->puts, n);
        free(MT_CONTAINER_OF(n, struct hold, node));
    }
    if (k)
        srv->orphans(srv->orphans_arg, ids, k);
    free(ids);
}

static void conn_close(struct conn *c)
{
    struct mt_server *srv = c->srv;

    if (c->closing)
        return;
    c->closing = true;
    while (c->waiters) {
        waiter_unlink_id(srv, c->waiters);
        waiter_free(c->waiters);
    }
    give_back(srv->st, &c->created, false);
    report_puts(c);
    give_back(srv->st, &c->pins, true);
    mt_store_unreserve(srv->st, c->board);
    c->board = NULL;
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->stats.clients--;
    MT_DEBUG("objstore client gone client=%llu",
             (unsigned long long)c->client_id);
    uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
}

/* Only processes of the store's own user may use it: the socket is 0600
 * in a 0700 dir, and the peer's credentials are checked on top. */
static bool same_user(struct conn *c)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    uv_os_fd_t fd;

    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return false;
    if (cred.uid == geteuid())
        return true;
    MT_WARN("objstore: refused a connection from uid %u (pid %d): only uid "
            "%u may use this store", (unsigned)cred.uid, (int)cred.pid,
            (unsigned)geteuid());
    return false;
}

static void on_connection(uv_stream_t *l, int status)
{
    struct mt_server *srv = l->data;
    struct conn *c;

    if (status < 0 || srv->stopping)
        return;
    c = mt_xcalloc(1, sizeof(*c));
    c->srv = srv;
    uv_pipe_init(srv->loop, &c->pipe, 0);
    c->pipe.data = c;
    srv->handles++;
    mt_idmap_init(&c->pins);
    mt_idmap_init(&c->created);
    mt_idmap_init(&c->puts);
    c->client_id = ++srv->next_client_id;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->stats.clients++;
    srv->stats.accepted++;
    if (uv_accept(l, (uv_stream_t *)&c->pipe) < 0 || !same_user(c) ||
        uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) < 0)
        conn_close(c);
}

/* ---- server ---- */

static void server_unref(struct mt_server *srv)
{
    if (--srv->handles > 0)
        return;
    mt_idmap_release(&srv->waits);
    free(srv->path);
    free(srv);
}

/* socket + bind + listen by hand, so a failure leaves no uv handle behind. */
static int listen_fd(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, err;

    if (strlen(path) >= sizeof(sa.sun_path))
        return -MT_EINVAL;
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
        err = -errno;
        MT_ERROR("objstore listen on \"%s\" failed: %s", path, strerror(errno));
        close(fd);
        return err;
    }
    return fd;
}

int mt_server_start(uv_loop_t *loop, struct mt_store *st, const char *path,
                    struct mt_server **out)
{
    struct mt_server *srv = mt_xcalloc(1, sizeof(*srv));
    int fd, rc;

    rc = mt_store_listen(st, on_event, srv);
    if (rc < 0) {
        free(srv);
        return rc;
    }
    fd = listen_fd(path);
    if (fd < 0) {
        mt_store_unlisten(st, on_event, srv);
        free(srv);
        return fd;
    }
    srv->loop = loop;
    srv->st = st;
    srv->path = mt_xstrdup(path);
    mt_idmap_init(&srv->waits);
    uv_pipe_init(loop, &srv->listener, 0);
    srv->listener.data = srv;
    srv->handles = 1;
    /* Neither can fail for a fresh handle and a listening fd (libuv 1.44). */
    rc = uv_pipe_open(&srv->listener, fd);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection);
    MT_ASSERT(rc == 0);
    mt_store_set_reclaim_cb(st, on_reclaim, srv);
    *out = srv;
    return 0;
}

static void on_listener_closed(uv_handle_t *h)
{
    server_unref(h->data);
}

void mt_server_stop(struct mt_server *srv)
{
    if (!srv || srv->stopping)
        return;
    srv->stopping = true;
    mt_store_unlisten(srv->st, on_event, srv);
    mt_store_set_reclaim_cb(srv->st, NULL, NULL);
    while (srv->conns)
        conn_close(srv->conns);
    unlink(srv->path);
    uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
}

void mt_server_on_orphans(struct mt_server *srv, mt_server_orphans_fn fn,
                          void *arg)
{
    srv->orphans = fn;
    srv->orphans_arg = arg;
}

void mt_server_stats(const struct mt_server *srv, struct mt_server_stats *out)
{
    *out = srv->stats;
}
