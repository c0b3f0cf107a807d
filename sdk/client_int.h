/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_int.h -- the client's types, shared by every sdk/ file: the
 * client struct, the requests public calls hand to its loop thread, the
 * parts' hooks, the store connection shared with buffers and what frees a
 * result handed out. Types only: the calls on them are client.c's
 * (sdk/client.h), the last error is error.c's (sdk/error.h).
 *
 * DESIGN: a client owns one background thread that runs a private libuv
 * loop and the rpc engine (common/rpc.h); every gRPC call is started and
 * completed there. A public call on any thread builds a request (struct
 * mt__req, embedded first in each kind's own struct, with a const ops
 * table), appends it to the client's queue under c->mu, wakes the loop
 * with uv_async_send() and sleeps on c->cv until the loop thread marks it
 * done or its timeout passes (then the request is abandoned and the loop
 * thread frees it when it completes).
 *
 * The client knows no module: tasks, objects and actors are parts (struct
 * mt__part_ops) that connect.c attaches before the loop starts. The client
 * calls each part's hooks in order at the end of every wake-up of the loop,
 * when it stops, and when the caller disconnects; a part keeps its state
 * behind its own pointer (c->tasks, c->objects, c->actors).
 *
 * Locks: c->mu only (no other lock is held with it; the store client's
 * own mutex and a watch's are never taken under c->mu).
 *
 * Include order (sdk/): internal headers first, which include the common/
 * headers before the public manta/ ones, which then skip the definitions
 * common/ already made (error codes, ids, label operators).
 */
#ifndef MT_SDK_CLIENT_INT_H
#define MT_SDK_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/error.h"
#include "common/ids.h"
#include "common/selector.h"
#include "manta/client.h"
#include "sdk/queue.h"

#define MT_CLIENT_MAGIC 0x6d74636cu /* "mtcl" */
#define MT__WAIT_GRACE_MS 2000      /* a caller waits this beyond a call's
                                       own deadline for the loop thread */
#define MT__MAX_PARTS 4

struct mt_rpc_engine;
struct mt_rpc_channel;
struct mt_objc;
struct mt__tasks;
struct mt__objects;
struct mt__actors;
struct mt__later;

/* ---- the store connection, shared by a client and its buffers ------------ */

struct mt__store {
    atomic_int refs;
    struct mt_objc *objc;
};

/* ---- parts --------------------------------------------------------------- */

/* What the client calls on a module's part; any hook may be NULL. */
struct mt__part_ops {
    /* Caller thread, first in mt_client_disconnect (may run requests). */
    void (*leave)(struct mt_client *c, void *st);
    /* Loop thread, after the requests of each wake-up were started. */
    void (*wake)(struct mt_client *c, void *st);
    /* Loop thread, disconnecting: end its calls, close its handles. */
    void (*stop)(struct mt_client *c, void *st);
    /* After the loop thread ended (or never started): free st. */
    void (*destroy)(void *st);
};

/* ---- the client ---------------------------------------------------------- */

struct mt_client {
    uint32_t magic;            /* MT_CLIENT_MAGIC */
    uint64_t serial;           /* keys the per-thread last error */
    char *address;             /* head host:port */
    char *temp_dir;
    int rpc_timeout_ms;
    unsigned ready_flags;      /* MT_RPC_WAIT_FOR_READY, or 0 (one-shot) */
    int reconnect_ms;          /* retry head calls this long after the
                                  head went away; 0: never (retry.h) */
    /* The session (read-only after create): this client at the head, as
     * owner of its actors and of the object references it takes. */
    char session_id[33];
    atomic_bool session_open;  /* the head said so; false once it broke */
    /* The store (read-only after connect): */
    struct mt__store *store;   /* NULL when none */
    char *store_path;
    char store_why[256];       /* why there is none */
    char *node_id;             /* the node whose store that is; NULL: none */
    char *worker_address;      /* its worker (FetchObject); NULL: none */
    /* Parts (read-only after connect): */
    struct mt__tasks *tasks;
    struct mt__objects *objects;
    struct mt__actors *actors;
    struct {
        const struct mt__part_ops *ops;
        void *st;
    } parts[MT__MAX_PARTS];
    size_t n_parts;
    /* Cross-thread state, guarded by mu: */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct mt__queue q;        /* struct mt__req waiting for the loop */
    bool stopping;             /* stop queued: refuse new requests */
    struct mt__qnode stop_node; /* queued by disconnect */
    /* Loop thread only: */
    pthread_t thread;
    bool thread_started;
    bool loop_ready;           /* loop initialized */
    bool wake_ready;           /* wake initialized */
    uv_loop_t loop;
    uv_async_t wake;
    struct mt_rpc_engine *eng;
    struct mt_rpc_channel *ch; /* to the head */
    bool closing;              /* stop handled */
    size_t n_streams;          /* server streams open */
    size_t n_calls;            /* unary calls in flight */
    uint64_t away_since_ms;    /* the head is away since (mt__now_ms);
                                  0: it answers (retry.c) */
    struct mt__later *retries; /* attempts waiting for their timer */
};

/* mt__client_check - c is a client (not NULL, right magic); on every
 * public call, so inline. */
static inline bool mt__client_check(const struct mt_client *c)
{
    return c && c->magic == MT_CLIENT_MAGIC;
}

/* ---- requests ------------------------------------------------------------ */

struct mt__req;

/* What a kind of request does on the loop thread. One const per kind. */
struct mt__req_ops {
    /* Start r. RET 0 (r completes later, or did already) or -MT_E* (the
     * client completes r with it). */
    int (*start)(struct mt_client *c, struct mt__req *r);
    /* The client is closing and r will not start: end it. NULL: r is
     * completed with -MT_ECLOSED. */
    void (*drop)(struct mt_client *c, struct mt__req *r);
    /* Free what r owns (not r). NULL: nothing. Any thread. */
    void (*release)(struct mt__req *r);
};

/* The head of every request; a kind embeds it first in its own struct. */
struct mt__req {
    struct mt__qnode qn;       /* in c->q */
    const struct mt__req_ops *ops;
    struct mt_client *client;  /* set when queued */
    int timeout_ms;            /* the rpc's deadline */
    unsigned rpc_flags;        /* MT_RPC_WAIT_FOR_READY or 0 */
    bool done;                 /* guarded by mu */
    bool abandoned;            /* guarded by mu: nobody waits for it */
    int rc;
    char msg[256];             /* why, when rc < 0 */
};

/* ---- results handed out -------------------------------------------------- */

/*
 * What frees a result the library hands out (a status, a listing, a
 * gang's detail): the head's reply its strings point into, and the blocks
 * of its arrays. Zeroed = empty.
 */
struct mt__keep {
    void *reply;               /* a ProtobufCMessage (mt__msg_free) */
    void **blocks;
    size_t n, cap;
};

#endif /* MT_SDK_CLIENT_INT_H */
