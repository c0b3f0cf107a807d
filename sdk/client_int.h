/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_int.h -- the core of a libmanta client, shared by every sdk/ file:
 * the client struct, its loop thread and the requests public calls hand to
 * it, the per-thread last error, and the store connection shared with
 * buffers.
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
#include <time.h>
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
struct mt_rpc_method;
struct mt_rpc_status;
struct mt_objc;
struct mt__tasks;
struct mt__objects;
struct mt__actors;

/* ---- the store connection, shared by a client and its buffers ------------ */

struct mt__store {
    atomic_int refs;
    struct mt_objc *objc;
};

/* mt__store_unref - drop one reference; the last disconnects. NULL ok. */
void mt__store_unref(struct mt__store *s);

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
};

/*
 * mt__client_new - a client for the head at address (owned copy) with its
 * loop, engine and channel set up but no thread yet.
 * RET 0 with *out, or -MT_E* (last error set, no client)
 */
int mt__client_new(const char *address, const char *temp_dir,
                   int rpc_timeout_ms, unsigned ready_flags,
                   struct mt_client **out);

/* mt__client_add_part - attach a part (before mt__client_start). */
void mt__client_add_part(struct mt_client *c, const struct mt__part_ops *ops,
                         void *st);

/* mt__client_start - start the loop thread. RET 0 or -errno (recorded). */
int mt__client_start(struct mt_client *c);

/* mt__client_free - after mt__client_leave/stop (or without a thread):
 * destroy the parts and free c. */
void mt__client_free(struct mt_client *c);

/*
 * mt__client_stop - disconnect: the parts' leave hooks, then the loop
 * thread stops (the parts' stop hooks run there) and is joined; requests
 * nobody took are freed. c is freed by mt__client_free afterwards.
 */
void mt__client_stop(struct mt_client *c);

/* mt__client_check - c is a client (not NULL, right magic); on every
 * public call, so inline. */
static inline bool mt__client_check(const struct mt_client *c)
{
    return c && c->magic == MT_CLIENT_MAGIC;
}

/* mt__client_wake - any thread: run the loop's wake-up (and the parts'
 * wake hooks) soon. */
void mt__client_wake(struct mt_client *c);

/*
 * Live clients: mt_task_release() may run after its client was
 * disconnected, so a module that touches a client from a handle first
 * checks it is alive. mt__client_lock_live returns true with the live
 * lock held when c is a connected client (unlock with
 * mt__client_unlock_live), false (nothing held) otherwise.
 */
void mt__client_set_live(struct mt_client *c, bool live);
bool mt__client_lock_live(const struct mt_client *c);
void mt__client_unlock_live(void);

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

/* mt__req_new - a zeroed request of size bytes (its kind's struct), with
 * the client's rpc timeout and ready flags. RET NULL on ENOMEM. */
void *mt__req_new(struct mt_client *c, const struct mt__req_ops *ops,
                  size_t size);

/* mt__req_free - free what r owns and r. NULL ok. */
void mt__req_free(struct mt__req *r);

/*
 * mt__req_run - queue r, wake the loop, wait until done or wait_ms (< 0:
 * forever). On success the caller owns r again (free it); on failure r
 * is freed, or abandoned to the loop thread on a timeout.
 * RET r->rc (recorded as c's last error with r->msg), -MT_ETIMEDOUT,
 *     -MT_ECLOSED
 */
int mt__req_run(struct mt_client *c, struct mt__req *r, int wait_ms);

/* mt__req_post - queue r without waiting; the loop thread frees it when
 * it completes. RET 0, -MT_ECLOSED (r freed, recorded). */
int mt__req_post(struct mt_client *c, struct mt__req *r);

/* mt__req_complete - loop thread: end r with rc (and msg, may be NULL).
 * Frees an abandoned r. */
void mt__req_complete(struct mt_client *c, struct mt__req *r, int rc,
                      const char *msg);

/* ---- calls to the head --------------------------------------------------- */

/* mt__head_call flags: wait up to the deadline for an unreachable head to
 * come back (not for one-shot clients, whose calls fail at once). */
#define MT__CALL_WAIT 0x1u

/*
 * mt__head_call - call method on the head with req and wait for the reply
 * (caller thread). req (a ProtobufCMessage, borrowed) is copied, so it may
 * be a view on the caller's stack.
 * IN  flags  0 or MT__CALL_WAIT
 * OUT reply  returns an owned ProtobufCMessage of the method's reply type,
 *            free with mt__msg_free()
 * RET 0, or the call's error; the last error on c is the call's status
 *     ("NOT_FOUND: no such gang")
 */
int mt__head_call(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req, int timeout_ms, unsigned flags,
                  void **reply);

/* mt__msg_copy - an owned deep copy of a ProtobufCMessage (packed, then
 * unpacked). RET NULL on ENOMEM. THREAD any. */
void *mt__msg_copy(const void *msg);

/* mt__msg_free - free a message from mt__msg_copy / mt__head_call. NULL
 * ok. */
void mt__msg_free(void *msg);

/* mt__rpc_text - "STATUS: message" for a failed call (the status's
 * message, or the error's text when it has none). */
void mt__rpc_text(const struct mt_rpc_status *st, char *buf, size_t len);

/* mt__rpc_err - the -MT_E* code of a failed call's status. */
int mt__rpc_err(const struct mt_rpc_status *st);

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

/* mt__keep_alloc - n zeroed bytes freed with k. RET NULL on ENOMEM. */
void *mt__keep_alloc(struct mt__keep *k, size_t n);

/* mt__keep_release - free the reply and the blocks; k is empty after. */
void mt__keep_release(struct mt__keep *k);

/* mt__json_take - the text of a soft strbuf (common/strbuf.h), moved to
 * *out. RET 0, -MT_ENOMEM (the buffer failed; released). */
struct mt_strbuf;
int mt__json_take(struct mt_strbuf *sb, char **out);

/* ---- errors and time ----------------------------------------------------- */

/* mt__set_error - record fmt as this thread's last error on c (or NULL)
 * and return err. */
int mt__set_error(const struct mt_client *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* mt__clear_error - forget this thread's last error on c. */
void mt__clear_error(const struct mt_client *c);

/* mt__deadline - absolute CLOCK_MONOTONIC time timeout_ms from now. */
struct timespec mt__deadline(int timeout_ms);

/* mt__ms_left - milliseconds from now to dl (0 when passed). */
int mt__ms_left(const struct timespec *dl);

#endif /* MT_SDK_CLIENT_INT_H */
