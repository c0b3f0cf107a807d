/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c -- blocking store client: one socket, one mapping, one mutex.
 *
 * Requests are built in one send buffer and written with one send(); the
 * reply is read with as few recv() calls as the kernel allows (usually one)
 * into a receive buffer. Only one request is ever outstanding (the mutex),
 * and the store never speaks first, so the next frame read is always the
 * reply to the request just sent; a reply with another seq or type means the
 * stream is corrupt and the client goes to the broken state (-MT_ECLOSED).
 *
 * The location cache (`cache`, struct centry by id) holds every object this
 * client has pinned in the store: `refs` counts the caller's gets, and an
 * entry with refs == 0 sits on the deferred-release list, still pinned,
 * until a batched one-way RELEASE goes out (see client.h FAST PATHS).
 *
 * A create of a large object (>= POPULATE_MIN) also populates this
 * client's page tables for the object's range with one
 * madvise(MADV_POPULATE_WRITE) before the caller writes, instead of one
 * page fault per 4 KiB page during the copy. `warm` has one bit per
 * POPULATE_CHUNK of the arena: the mapping is never unmapped and the
 * store never punches freed ranges, so a chunk populated once stays so
 * for the life of the client, and recycled ranges cost nothing.
 *
 * THREAD every public function takes c->mu; static helpers expect it held.
 */
#include "client.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "objstore/arena.h"
#include "objstore/idmap.h"
#include "objstore/protocol.h"
#include "objstore/shm_layout.h"

#define SBUF_SIZE                                                              \
    (MT_PROTO_HDR_SIZE + sizeof(struct mt_proto_create) + MT_PROTO_INLINE_MAX)
#define RBUF_SIZE (MT_PROTO_HDR_SIZE + MT_PROTO_MAX_PAYLOAD)
#define POPULATE_MIN (1ULL << 20)   /* smaller creates just fault */
#define POPULATE_CHUNK (2ULL << 20) /* one bit of `warm` */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* A pinned object. Guarded by: c->mu. */
struct centry {
    struct mt_idmap_node node;
    struct mt_object_info info;
    uint32_t refs;              /* caller gets not yet released */
    bool deferred;              /* refs == 0, release not sent yet */
    bool doomed;                /* we deleted it: no cache hits, no deferral */
    int slot;                   /* release board slot while deferred, or -1 */
    uint64_t deferred_ms;       /* when it joined the deferred list */
    struct centry *dprev;       /* deferred list, oldest first */
    struct centry *dnext;
};

struct mt_objc {
    pthread_mutex_t mu;
    int fd;                     /* store socket; -1 when closed */
    bool broken;                /* stream unusable: every call -MT_ECLOSED */
    struct mt_arena arena;      /* our mapping of the store's arena */
    uint64_t client_id;
    uint32_t seq;
    struct mt_idmap cache;      /* struct centry by id */
    struct centry *dhead;       /* oldest deferred release */
    struct centry *dtail;
    uint32_t ndeferred;
    uint64_t deferred_bytes;    /* object bytes kept pinned by deferral */
    bool eager;
    uint32_t defer_max;
    uint32_t defer_ms;
    uint64_t defer_bytes;
    struct mt_shm_board_slot *board; /* our release board, NULL if none */
    uint64_t board_free;        /* bit i: slot i unused */
    uint32_t board_gen[MT_BOARD_SLOTS]; /* generation last written */
    uint8_t *sbuf;              /* request being built */
    uint8_t *rbuf;              /* reply being read */
    size_t rlen;
    uint8_t *mbuf;              /* batch of PUT frames (put_many) */
    size_t mcap;
    uint64_t *warm;             /* bit per POPULATE_CHUNK: populated */
    bool no_populate;           /* madvise refused once: stop trying */
};

/* ---- transport ---- */

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int broken(struct mt_objc *c)
{
    c->broken = true;
    return -MT_ECLOSED;
}

static int send_all(struct mt_objc *c, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return broken(c);
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Build header + p1 + p2 in sbuf and send it. */
static int send_req(struct mt_objc *c, uint16_t type, uint16_t flags,
                    const void *p1, size_t l1, const void *p2, size_t l2)
{
    struct mt_proto_hdr h = {.len = (uint32_t)(l1 + l2),
                             .type = type,
                             .flags = flags,
                             .seq = ++c->seq};

    memcpy(c->sbuf, &h, sizeof(h));
    if (l1)
        memcpy(c->sbuf + sizeof(h), p1, l1);
    if (l2)
        memcpy(c->sbuf + sizeof(h) + l1, p2, l2);
    return send_all(c, c->sbuf, sizeof(h) + l1 + l2);
}

/* Read until rbuf holds one whole frame; RET its header. */
static int recv_frame(struct mt_objc *c, struct mt_proto_hdr *h)
{
    for (;;) {
        ssize_t r;

        if (c->rlen >= MT_PROTO_HDR_SIZE) {
            memcpy(h, c->rbuf, sizeof(*h));
            if (h->len > MT_PROTO_MAX_PAYLOAD)
                return broken(c);
            if (c->rlen >= MT_PROTO_HDR_SIZE + h->len)
                return 0;
        }
        r = recv(c->fd, c->rbuf + c->rlen, RBUF_SIZE - c->rlen, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return broken(c);
        c->rlen += (size_t)r;
    }
}

/* Wait for the reply to request seq; copy a payload of exactly n. */
static int recv_reply_seq(struct mt_objc *c, uint32_t seq, uint16_t type,
                          void *out, size_t n)
{
    struct mt_proto_hdr h;
    size_t flen;
    int rc = recv_frame(c, &h);

    if (rc < 0)
        return rc;
    if (!(h.flags & MT_PROTO_F_REPLY) || h.seq != seq || h.type != type)
        return broken(c);
    if (h.status == 0 && h.len != n)
        return broken(c);
    if (h.status == 0 && n)
        memcpy(out, c->rbuf + MT_PROTO_HDR_SIZE, n);
    flen = MT_PROTO_HDR_SIZE + h.len;
    memmove(c->rbuf, c->rbuf + flen, c->rlen - flen);
    c->rlen -= flen;
    return h.status > 0 ? broken(c) : h.status;
}

/* Wait for the reply to the last request sent. */
static int recv_reply(struct mt_objc *c, uint16_t type, void *out, size_t n)
{
    return recv_reply_seq(c, c->seq, type, out, n);
}

static int call(struct mt_objc *c, uint16_t type, const void *p1, size_t l1,
                const void *p2, size_t l2, void *out, size_t outlen)
{
    int rc;

    if (c->broken)
        return -MT_ECLOSED;
    rc = send_req(c, type, 0, p1, l1, p2, l2);
    return rc < 0 ? rc : recv_reply(c, type, out, outlen);
}

/* ---- location cache and deferred releases ---- */

static struct centry *cache_find(struct mt_objc *c, const mt_object_id *id)
{
    struct mt_idmap_node *n = mt_idmap_find(&c->cache, id);

    return n ? MT_CONTAINER_OF(n, struct centry, node) : NULL;
}

/* Publish e's deferred pin on the board so the store may reclaim it. */
static void board_put(struct mt_objc *c, struct centry *e)
{
    uint32_t i;

    e->slot = -1;
    if (!c->board || !c->board_free)
        return;
    i = (uint32_t)__builtin_ctzll(c->board_free);
    c->board_free &= ~(1ULL << i);
    c->board_gen[i] = (c->board_gen[i] + 1) & 0x3fffffffu;
    memcpy(c->board[i].id, e->node.id.b, MT_OBJECT_ID_LEN);
    __atomic_store_n(&c->board[i].word,
                     MT_BOARD_WORD(c->board_gen[i], MT_BOARD_DEFERRED),
                     __ATOMIC_RELEASE);
    e->slot = (int)i;
}

/* Take e's slot back. RET true if the pin is still ours (not stolen). */
static bool board_take(struct mt_objc *c, struct centry *e)
{
    uint32_t i, want;
    bool held;

    if (e->slot < 0)
        return true;
    i = (uint32_t)e->slot;
    want = MT_BOARD_WORD(c->board_gen[i], MT_BOARD_DEFERRED);
    held = __atomic_compare_exchange_n(
        &c->board[i].word, &want,
        MT_BOARD_WORD(c->board_gen[i], MT_BOARD_FREE), false,
        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (!held)
        __atomic_store_n(&c->board[i].word,
                         MT_BOARD_WORD(c->board_gen[i], MT_BOARD_FREE),
                         __ATOMIC_RELEASE);
    c->board_free |= 1ULL << i;
    e->slot = -1;
    return held;
}

/*
 * Take e off the deferred list. RET true if its store pin is still ours,
 * false if the store reclaimed it meanwhile (then there is nothing to
 * release and the cached location must not be used).
 */
static bool defer_unlink(struct mt_objc *c, struct centry *e)
{
    bool held = board_take(c, e);

    if (e->dprev)
        e->dprev->dnext = e->dnext;
    else
        c->dhead = e->dnext;
    if (e->dnext)
        e->dnext->dprev = e->dprev;
    else
        c->dtail = e->dprev;
    e->dprev = e->dnext = NULL;
    e->deferred = false;
    c->ndeferred--;
    c->deferred_bytes -= e->info.data_size + e->info.meta_size;
    return held;
}

static void defer_push(struct mt_objc *c, struct centry *e)
{
    e->deferred = true;
    e->deferred_ms = now_ms();
    e->dnext = NULL;
    e->dprev = c->dtail;
    if (c->dtail)
        c->dtail->dnext = e;
    else
        c->dhead = e;
    c->dtail = e;
    c->ndeferred++;
    c->deferred_bytes += e->info.data_size + e->info.meta_size;
    board_put(c, e);
}

/*
 * Send one-way releases for deferred entries (all, or those older than
 * c->defer_ms when old_only) and drop them from the cache.
 */
static int flush_deferred(struct mt_objc *c, bool old_only)
{
    uint8_t ids[64 * MT_OBJECT_ID_LEN];
    uint64_t cutoff = now_ms() - c->defer_ms;
    size_t n = 0;
    int rc = 0;

    while (c->dhead && (!old_only || c->dhead->deferred_ms <= cutoff)) {
        struct centry *e = c->dhead;

        memcpy(ids + n * MT_OBJECT_ID_LEN, &e->node.id, MT_OBJECT_ID_LEN);
        if (defer_unlink(c, e))
            n++; /* else the store took the pin back already */
        mt_idmap_remove(&c->cache, &e->node);
        free(e);
        if (n == 64 || (n && !c->dhead)) {
            if (rc == 0 && !c->broken)
                rc = send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, ids,
                              n * MT_OBJECT_ID_LEN, NULL, 0);
            n = 0;
        }
    }
    if (n && rc == 0 && !c->broken)
        rc = send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, ids,
                      n * MT_OBJECT_ID_LEN, NULL, 0);
    return rc;
}

/* Called at the start of every public call: age out deferred releases. */
static void expire(struct mt_objc *c)
{
    if (c->dhead && c->dhead->deferred_ms + c->defer_ms <= now_ms())
        flush_deferred(c, true);
}

static int check_info(const struct mt_objc *c, const struct mt_object_info *i)
{
    uint64_t end;

    if (i->offset < MT_SHM_HEADER_SIZE ||
        __builtin_add_overflow(i->offset, i->data_size, &end) ||
        __builtin_add_overflow(end, i->meta_size, &end) || end > c->arena.size)
        return -MT_EPROTO;
    return 0;
}

static void fill_buf(const struct mt_objc *c, const struct mt_object_info *i,
                     struct mt_objc_buf *out)
{
    out->info = *i;
    out->data = c->arena.base + i->offset;
    out->meta = out->data + i->data_size;
}

/*
 * Mark the chunks of [off, off + len) as warm; RET the first and last
 * chunk that were not (*lo > *hi: nothing to populate). Called with mu.
 */
static void claim_cold_locked(struct mt_objc *c, uint64_t off, uint64_t len,
                              uint64_t *lo, uint64_t *hi)
{
    uint64_t first = off / POPULATE_CHUNK;
    uint64_t last = (off + len - 1) / POPULATE_CHUNK;

    *lo = UINT64_MAX;
    *hi = 0;
    for (uint64_t i = first; i <= last; i++) {
        if (c->warm[i / 64] & (1ULL << (i % 64)))
            continue;
        c->warm[i / 64] |= 1ULL << (i % 64);
        *lo = *lo < i ? *lo : i;
        *hi = i;
    }
}

/*
 * Populate our page tables for a created range, outside the mutex. A
 * failure only means the copy will take page faults, as it always did.
 */
static void populate(struct mt_objc *c, const struct mt_object_info *i)
{
    uint64_t len = i->data_size + i->meta_size, lo, hi, from, to;

    if (len < POPULATE_MIN || !c->warm)
        return;
    pthread_mutex_lock(&c->mu);
    if (c->no_populate) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    claim_cold_locked(c, i->offset, len, &lo, &hi);
    pthread_mutex_unlock(&c->mu);
    if (lo > hi)
        return;
    from = lo * POPULATE_CHUNK;
    to = (hi + 1) * POPULATE_CHUNK;
    if (to > c->arena.size)
        to = c->arena.size;
    if (madvise(c->arena.base + from, to - from, MADV_POPULATE_WRITE) < 0 &&
        errno == EINVAL) {
        pthread_mutex_lock(&c->mu);
        c->no_populate = true;
        pthread_mutex_unlock(&c->mu);
    }
}

/* ---- connection ---- */

static int connect_sock(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, err;

    if (strlen(path) >= sizeof(sa.sun_path))
        return -MT_EINVAL;
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* Read the HELLO reply (40 bytes) and the fd riding on it. */
static int recv_hello(struct mt_objc *c, struct mt_proto_hdr *h,
                      struct mt_proto_hello_rep *r, int *fd)
{
    struct {
        struct mt_proto_hdr h;
        struct mt_proto_hello_rep r;
    } in;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    size_t got = 0;

    *fd = -1;
    while (got < sizeof(in)) {
        struct iovec iov = {(uint8_t *)&in + got, sizeof(in) - got};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                             .msg_control = ctl.buf,
                             .msg_controllen = sizeof(ctl.buf)};
        struct cmsghdr *cm;
        ssize_t n = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -MT_EPROTO;
        for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
                *fd < 0)
                memcpy(fd, CMSG_DATA(cm), sizeof(int));
        got += (size_t)n;
        /* An error reply is a bare header. */
        if (got >= sizeof(in.h) && in.h.status < 0)
            break;
    }
    *h = in.h;
    *r = in.r;
    return 0;
}

/* Use the release board the store gave us, if it lies inside the arena. */
static void board_attach(struct mt_objc *c, const struct mt_proto_hello_rep *r)
{
    uint64_t len = (uint64_t)MT_BOARD_SLOTS * sizeof(struct mt_shm_board_slot);

    if (r->board_slots != MT_BOARD_SLOTS || r->board_offset % 64 ||
        r->board_offset < MT_SHM_HEADER_SIZE ||
        r->board_offset > c->arena.size - len)
        return;
    c->board = (struct mt_shm_board_slot *)(c->arena.base + r->board_offset);
    c->board_free = ~0ULL;
    if (c->defer_max > MT_BOARD_SLOTS)
        c->defer_max = MT_BOARD_SLOTS;
}

static int hello(struct mt_objc *c, bool populate)
{
    struct mt_proto_hello_req q = {MT_PROTO_VERSION, (uint32_t)getpid()};
    struct mt_proto_hello_rep r = {0};
    struct mt_proto_hdr h = {0};
    int fd, rc;

    rc = send_req(c, MT_MSG_HELLO, 0, &q, sizeof(q), NULL, 0);
    if (rc < 0)
        return rc;
    rc = recv_hello(c, &h, &r, &fd);
    if (rc == 0 && h.status < 0)
        rc = h.status;
    else if (rc == 0 && (h.type != MT_MSG_HELLO || h.len != sizeof(r) ||
                         fd < 0))
        rc = -MT_EPROTO;
    else if (rc == 0 && r.version != MT_PROTO_VERSION)
        rc = -MT_EVERSION;
    if (rc == 0)
        rc = mt_arena_map(&c->arena, fd, populate);
    if (rc == 0 && c->arena.size != r.arena_size) {
        mt_arena_release(&c->arena);
        rc = -MT_EVERSION;
    }
    if (rc == 0)
        board_attach(c, &r);
    if (fd >= 0)
        close(fd);
    c->client_id = r.client_id;
    return rc;
}

int mt_objc_connect(const char *path, const struct mt_objc_opts *o,
                    struct mt_objc **out)
{
    struct mt_objc_opts d = {0};
    struct mt_objc *c = calloc(1, sizeof(*c));
    int rc = -MT_ENOMEM;

    if (!o)
        o = &d;
    if (!c)
        return -MT_ENOMEM;
    c->arena.fd = -1;
    c->sbuf = malloc(SBUF_SIZE);
    c->rbuf = malloc(RBUF_SIZE);
    if (!c->sbuf || !c->rbuf)
        goto out_free;
    pthread_mutex_init(&c->mu, NULL);
    mt_idmap_init(&c->cache);
    c->eager = o->eager_release;
    c->defer_max = o->defer_max ? o->defer_max : 64;
    c->defer_ms = o->defer_ms ? o->defer_ms : 100;
    c->defer_bytes = o->defer_bytes ? o->defer_bytes : 16u << 20;
    c->fd = connect_sock(path);
    if (c->fd < 0) {
        rc = c->fd;
        goto out_destroy;
    }
    rc = hello(c, o->populate);
    if (rc < 0)
        goto out_close;
    if (!o->populate)
        c->warm = calloc((c->arena.size / POPULATE_CHUNK + 64) / 64,
                         sizeof(*c->warm));
    *out = c;
    return 0;

out_close:
    close(c->fd);
out_destroy:
    mt_idmap_release(&c->cache);
    pthread_mutex_destroy(&c->mu);
out_free:
    free(c->sbuf);
    free(c->rbuf);
    free(c);
    return rc;
}

void mt_objc_disconnect(struct mt_objc *c)
{
    struct mt_idmap_node *n, *next;

    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    flush_deferred(c, false);
    for (n = mt_idmap_first(&c->cache); n; n = next) {
        next = mt_idmap_next(&c->cache, n);
        mt_idmap_remove(&c->cache, n);
        free(MT_CONTAINER_OF(n, struct centry, node));
    }
    pthread_mutex_unlock(&c->mu);
    close(c->fd);
    mt_arena_release(&c->arena);
    mt_idmap_release(&c->cache);
    pthread_mutex_destroy(&c->mu);
    free(c->sbuf);
    free(c->rbuf);
    free(c->mbuf);
    free(c->warm);
    free(c);
}

uint64_t mt_objc_client_id(const struct mt_objc *c)
{
    return c->client_id;
}

/* ---- writing ---- */

static void fill_create(struct mt_proto_create *q, const mt_object_id *id,
                        uint64_t data_size, uint64_t meta_size, uint32_t flags,
                        const struct mt_tensor_desc *tensor)
{
    memset(q, 0, sizeof(*q));
    q->id = *id;
    q->flags = flags | (tensor ? MT_OBJ_TENSOR : 0);
    q->data_size = data_size;
    q->meta_size = meta_size;
    if (tensor)
        q->tensor = *tensor;
}

/* A call that may fail for want of space our own deferred pins hold. */
static int call_space(struct mt_objc *c, uint16_t type, const void *p1,
                      size_t l1, const void *p2, size_t l2, void *out,
                      size_t outlen)
{
    int rc = call(c, type, p1, l1, p2, l2, out, outlen);

    if (rc == -MT_ENOSPC && c->ndeferred > 0) {
        flush_deferred(c, false);
        rc = call(c, type, p1, l1, p2, l2, out, outlen);
    }
    return rc;
}

int mt_objc_create(struct mt_objc *c, const mt_object_id *id,
                   uint64_t data_size, uint64_t meta_size, uint32_t flags,
                   const struct mt_tensor_desc *tensor,
                   struct mt_objc_buf *out)
{
    struct mt_proto_create q;
    struct mt_object_info info;
    int rc;

    fill_create(&q, id, data_size, meta_size, flags, tensor);
    pthread_mutex_lock(&c->mu);
    expire(c);
    rc = call_space(c, MT_MSG_CREATE, &q, sizeof(q), NULL, 0, &info,
                    sizeof(info));
    if (rc == 0)
        rc = check_info(c, &info);
    if (rc == 0)
        fill_buf(c, &info, out);
    pthread_mutex_unlock(&c->mu);
    if (rc == 0)
        populate(c, &info);
    return rc;
}

static int finish(struct mt_objc *c, uint16_t type, const mt_object_id *id)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    expire(c);
    rc = call(c, type, id, sizeof(*id), NULL, 0, NULL, 0);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int mt_objc_seal(struct mt_objc *c, const mt_object_id *id)
{
    return finish(c, MT_MSG_SEAL, id);
}

int mt_objc_abort(struct mt_objc *c, const mt_object_id *id)
{
    return finish(c, MT_MSG_ABORT, id);
}

/* Build and send a PUT frame straight in sbuf (no staging copy). */
static int send_put(struct mt_objc *c, const struct mt_proto_create *q,
                    const void *data, const void *meta)
{
    uint64_t n = q->data_size + q->meta_size;
    struct mt_proto_hdr h = {.len = (uint32_t)(sizeof(*q) + n),
                             .type = MT_MSG_PUT,
                             .seq = ++c->seq};
    uint8_t *p = c->sbuf;

    memcpy(p, &h, sizeof(h));
    memcpy(p + sizeof(h), q, sizeof(*q));
    p += sizeof(h) + sizeof(*q);
    if (q->data_size)
        memcpy(p, data, q->data_size);
    if (q->meta_size)
        memcpy(p + q->data_size, meta, q->meta_size);
    return send_all(c, c->sbuf, sizeof(h) + sizeof(*q) + n);
}

/* Small object: the bytes travel in the PUT message (one round trip). */
static int put_inline(struct mt_objc *c, const struct mt_proto_create *q,
                      const void *data, const void *meta)
{
    int rc = -MT_ECLOSED;

    pthread_mutex_lock(&c->mu);
    expire(c);
    for (int attempt = 0; attempt < 2 && !c->broken; attempt++) {
        rc = send_put(c, q, data, meta);
        if (rc == 0)
            rc = recv_reply(c, MT_MSG_PUT, NULL, 0);
        if (rc != -MT_ENOSPC || c->ndeferred == 0)
            break;
        flush_deferred(c, false);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int mt_objc_put(struct mt_objc *c, const mt_object_id *id, const void *data,
                uint64_t size, const void *meta, uint64_t meta_size,
                uint32_t flags, const struct mt_tensor_desc *tensor)
{
    struct mt_proto_create q;
    struct mt_objc_buf b;
    int rc;

    fill_create(&q, id, size, meta_size, flags, tensor);
    if (size <= MT_PROTO_INLINE_MAX && meta_size <= MT_PROTO_INLINE_MAX &&
        size + meta_size <= MT_PROTO_INLINE_MAX)
        return put_inline(c, &q, data, meta);
    rc = mt_objc_create(c, id, size, meta_size, flags, tensor, &b);
    if (rc < 0)
        return rc;
    memcpy(b.data, data, size);
    if (meta_size)
        memcpy(b.meta, meta, meta_size);
    return mt_objc_seal(c, id);
}

/* ---- reading ---- */

/*
 * Record a pin the store just granted. A second pin on an id already cached
 * (two GETs of one id in flight) is handed straight back to the store.
 */
static int cache_pinned(struct mt_objc *c, const mt_object_id *id,
                        const struct mt_object_info *info,
                        struct mt_objc_buf *out)
{
    struct centry *e = cache_find(c, id);

    if (check_info(c, info) < 0)
        return broken(c);
    if (e && e->doomed) {
        /* Cannot happen while our pin blocks re-creation; stay safe. */
        send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, id, sizeof(*id), NULL,
                 0);
        return -MT_ENOENT;
    }
    if (e && e->deferred && !defer_unlink(c, e)) {
        /* Our cached pin was reclaimed: the new one takes its place. */
        e->info = *info;
        e->refs = 1;
        fill_buf(c, info, out);
        return 0;
    }
    if (e) {
        e->refs++;
        fill_buf(c, &e->info, out);
        return send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, id, sizeof(*id),
                        NULL, 0);
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, id, sizeof(*id), NULL,
                 0);
        return -MT_ENOMEM;
    }
    e->node.id = *id;
    e->info = *info;
    e->refs = 1;
    e->slot = -1;
    mt_idmap_insert(&c->cache, &e->node);
    fill_buf(c, info, out);
    return 0;
}

static int get_remote(struct mt_objc *c, const mt_object_id *id,
                      int64_t timeout_ms, struct mt_objc_buf *out)
{
    struct mt_proto_get q = {.id = *id, .timeout_ms = timeout_ms};
    struct mt_object_info info;
    int rc;

    rc = call(c, MT_MSG_GET, &q, sizeof(q), NULL, 0, &info, sizeof(info));
    if (rc < 0)
        return rc;
    return cache_pinned(c, id, &info, out);
}

/* A cache hit: one more local reference, no round trip. */
static bool get_cached(struct mt_objc *c, const mt_object_id *id,
                       struct mt_objc_buf *out)
{
    struct centry *e = cache_find(c, id);

    if (!e || e->doomed)
        return false;
    if (e->deferred && !defer_unlink(c, e)) {
        /* Reclaimed by the store: forget the location, ask again. */
        mt_idmap_remove(&c->cache, &e->node);
        free(e);
        return false;
    }
    e->refs++;
    fill_buf(c, &e->info, out);
    return true;
}

int mt_objc_get(struct mt_objc *c, const mt_object_id *id, int64_t timeout_ms,
                struct mt_objc_buf *out)
{
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    expire(c);
    if (!get_cached(c, id, out))
        rc = c->broken ? -MT_ECLOSED : get_remote(c, id, timeout_ms, out);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/*
 * The caller's last reference to e went. Large, deleted or (eager mode) any
 * objects are released now, alone; the rest join the deferred list, which
 * is flushed whole when it holds too many objects or bytes.
 */
static int release_last(struct mt_objc *c, struct centry *e)
{
    uint64_t bytes = e->info.data_size + e->info.meta_size;
    mt_object_id id = e->node.id;

    if (c->eager || e->doomed || bytes > c->defer_bytes) {
        mt_idmap_remove(&c->cache, &e->node);
        free(e);
        if (c->broken)
            return -MT_ECLOSED;
        return send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, &id, sizeof(id),
                        NULL, 0);
    }
    defer_push(c, e);
    if (c->ndeferred > c->defer_max || c->deferred_bytes > c->defer_bytes)
        return flush_deferred(c, false);
    return 0;
}

int mt_objc_release(struct mt_objc *c, const mt_object_id *id)
{
    struct centry *e;
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    e = cache_find(c, id);
    if (!e || e->refs == 0) {
        rc = -MT_ENOENT;
    } else if (--e->refs == 0) {
        rc = release_last(c, e);
    }
    if (rc == 0)
        expire(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ---- other ---- */

int mt_objc_delete(struct mt_objc *c, const mt_object_id *id)
{
    struct centry *e;
    int rc;

    pthread_mutex_lock(&c->mu);
    e = cache_find(c, id);
    if (e && e->deferred) {
        /* Our lingering pin would keep the object alive: drop it first. */
        bool held = defer_unlink(c, e);

        mt_idmap_remove(&c->cache, &e->node);
        free(e);
        rc = c->broken ? -MT_ECLOSED
             : held    ? send_req(c, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, id,
                                  sizeof(*id), NULL, 0)
                       : 0;
        if (rc < 0)
            goto out;
    }
    rc = call(c, MT_MSG_DELETE, id, sizeof(*id), NULL, 0, NULL, 0);
    e = rc == 0 ? cache_find(c, id) : NULL;
    if (e)
        e->doomed = true; /* still held by the caller: see release */
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int mt_objc_contains(struct mt_objc *c, const mt_object_id *id)
{
    return finish(c, MT_MSG_CONTAINS, id);
}

int mt_objc_stats(struct mt_objc *c, struct mt_store_stats *out)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    expire(c);
    rc = call(c, MT_MSG_STATS, NULL, 0, NULL, 0, out, sizeof(*out));
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int mt_objc_server_stats(struct mt_objc *c, struct mt_server_stats *out)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    expire(c);
    rc = call(c, MT_MSG_SERVER_STATS, NULL, 0, NULL, 0, out, sizeof(*out));
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int mt_objc_flush(struct mt_objc *c)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    rc = c->broken ? -MT_ECLOSED : flush_deferred(c, false);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ---- batched puts ---- */

#define BATCH_BYTES (1u << 20)

static bool inline_ok(const struct mt_objc_put_req *r)
{
    return r->size <= MT_PROTO_INLINE_MAX &&
           r->meta_size <= MT_PROTO_INLINE_MAX - r->size;
}

/* Append one PUT frame to mbuf at *len. RET 0, -MT_ENOMEM. */
static int append_put(struct mt_objc *c, const struct mt_objc_put_req *r,
                      size_t *len)
{
    struct mt_proto_create q;
    size_t need = MT_PROTO_HDR_SIZE + sizeof(q) + r->size + r->meta_size;
    struct mt_proto_hdr h = {.len = (uint32_t)(sizeof(q) + r->size +
                                               r->meta_size),
                             .type = MT_MSG_PUT,
                             .seq = ++c->seq};
    uint8_t *p;

    if (*len + need > c->mcap) {
        size_t cap = c->mcap ? c->mcap : 64 * 1024;

        while (cap < *len + need)
            cap *= 2;
        p = realloc(c->mbuf, cap);
        if (!p)
            return -MT_ENOMEM;
        c->mbuf = p;
        c->mcap = cap;
    }
    fill_create(&q, &r->id, r->size, r->meta_size, r->flags, r->tensor);
    p = c->mbuf + *len;
    memcpy(p, &h, sizeof(h));
    memcpy(p + sizeof(h), &q, sizeof(q));
    if (r->size)
        memcpy(p + sizeof(h) + sizeof(q), r->data, r->size);
    if (r->meta_size)
        memcpy(p + sizeof(h) + sizeof(q) + r->size, r->meta, r->meta_size);
    *len += need;
    return 0;
}

/* Send reqs[0..n) (all small) as one write, then read the n replies. */
static int put_batch(struct mt_objc *c, const struct mt_objc_put_req *reqs,
                     size_t n, int *rcs)
{
    uint32_t first = c->seq + 1;
    size_t len = 0;
    int rc;

    for (size_t i = 0; i < n; i++) {
        rc = append_put(c, &reqs[i], &len);
        if (rc < 0) {
            c->seq = first - 1;
            return rc;
        }
    }
    rc = send_all(c, c->mbuf, len);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rcs[i] = recv_reply_seq(c, first + (uint32_t)i, MT_MSG_PUT, NULL, 0);
        if (rcs[i] == -MT_ECLOSED)
            rc = -MT_ECLOSED;
    }
    return rc;
}

int mt_objc_put_many(struct mt_objc *c, const struct mt_objc_put_req *reqs,
                     size_t n, int *rcs)
{
    size_t i = 0;
    int rc = 0;

    while (i < n && rc == 0) {
        size_t j = i, bytes = 0;

        if (!inline_ok(&reqs[i])) {
            rcs[i] = mt_objc_put(c, &reqs[i].id, reqs[i].data, reqs[i].size,
                                 reqs[i].meta, reqs[i].meta_size,
                                 reqs[i].flags, reqs[i].tensor);
            rc = rcs[i] == -MT_ECLOSED ? rcs[i] : 0;
            i++;
            continue;
        }
        while (j < n && inline_ok(&reqs[j]) && bytes < BATCH_BYTES)
            bytes += reqs[j++].size + sizeof(struct mt_proto_create);
        pthread_mutex_lock(&c->mu);
        expire(c);
        rc = c->broken ? -MT_ECLOSED : put_batch(c, reqs + i, j - i, rcs + i);
        pthread_mutex_unlock(&c->mu);
        i = j;
    }
    return rc;
}

/* ---- batched gets ---- */

/* Append a GET frame for ids[i] to mbuf at *len. RET 0, -MT_ENOMEM. */
static int append_get(struct mt_objc *c, const mt_object_id *id,
                      int64_t timeout_ms, size_t *len)
{
    struct mt_proto_get q = {.id = *id, .timeout_ms = timeout_ms};
    struct mt_proto_hdr h = {.len = sizeof(q), .type = MT_MSG_GET,
                             .seq = ++c->seq};
    size_t need = sizeof(h) + sizeof(q);

    if (*len + need > c->mcap) {
        size_t cap = c->mcap ? c->mcap * 2 : 64 * 1024;
        uint8_t *p = realloc(c->mbuf, cap);

        if (!p)
            return -MT_ENOMEM;
        c->mbuf = p;
        c->mcap = cap;
    }
    memcpy(c->mbuf + *len, &h, sizeof(h));
    memcpy(c->mbuf + *len + sizeof(h), &q, sizeof(q));
    *len += need;
    return 0;
}

/*
 * Read the replies to GETs seq first .. first + n - 1 (slot k answers
 * index idx[k]); waiting GETs may be answered in any order.
 */
static int read_gets(struct mt_objc *c, const mt_object_id *ids,
                     const size_t *idx, size_t n, uint32_t first,
                     struct mt_objc_buf *outs, int *rcs)
{
    for (size_t got = 0; got < n; got++) {
        struct mt_proto_hdr h;
        struct mt_object_info info;
        size_t k;
        int rc = recv_frame(c, &h);

        if (rc < 0)
            return rc;
        k = h.seq - first;
        if (k >= n || h.type != MT_MSG_GET || rcs[idx[k]] != 1)
            return broken(c);
        rc = recv_reply_seq(c, h.seq, MT_MSG_GET, &info, sizeof(info));
        if (rc == 0)
            rc = cache_pinned(c, &ids[idx[k]], &info, &outs[idx[k]]);
        rcs[idx[k]] = rc;
        if (rc == -MT_ECLOSED)
            return rc;
    }
    return 0;
}

static int get_batch(struct mt_objc *c, const mt_object_id *ids, size_t n,
                     int64_t timeout_ms, struct mt_objc_buf *outs, int *rcs)
{
    size_t *idx = malloc(n * sizeof(*idx));
    uint32_t first = c->seq + 1;
    size_t len = 0, m = 0;
    int rc = 0;

    if (!idx)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rcs[i] = 0;
        if (get_cached(c, &ids[i], &outs[i]))
            continue;
        rcs[i] = 1; /* pending */
        idx[m++] = i;
        rc = append_get(c, &ids[i], timeout_ms, &len);
    }
    if (rc == 0 && m)
        rc = send_all(c, c->mbuf, len);
    if (rc == 0 && m)
        rc = read_gets(c, ids, idx, m, first, outs, rcs);
    free(idx);
    return rc;
}

int mt_objc_get_many(struct mt_objc *c, const mt_object_id *ids, size_t n,
                     int64_t timeout_ms, struct mt_objc_buf *outs, int *rcs)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    expire(c);
    rc = c->broken ? -MT_ECLOSED
                   : get_batch(c, ids, n, timeout_ms, outs, rcs);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
