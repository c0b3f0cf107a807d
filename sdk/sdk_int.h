/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_int.h -- libmanta internals shared by the sdk/ sources.
 *
 * DESIGN: a client owns one background thread that runs a private libuv loop
 * and the rpc engine (common/rpc.h); every gRPC call is started and
 * completed there. Public calls on any thread build a request, append it to
 * the client's queue under c->mu, wake the loop with uv_async_send(), and
 * sleep on c->cv until the loop thread marks the request done or their
 * timeout passes (then the request is abandoned and the loop thread frees
 * it when it completes). Task state is written by the loop thread and read
 * by waiters, both under c->mu; every change broadcasts c->cv.
 *
 * Objects bypass the thread: the object store client (objstore/client.h) is
 * blocking and thread-safe, so puts and gets run on the caller's thread.
 * The store connection is refcounted (struct mt__store) so buffers outlive
 * the client that made them.
 *
 * Locks: c->mu only (no other lock is held with it; the store client's own
 * mutex is never taken under c->mu).
 *
 * Include order: common/ headers first, then the public manta/ headers,
 * which skip the definitions common/ already made (error codes, ids).
 */
#ifndef MT_SDK_INT_H
#define MT_SDK_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/error.h"
#include "common/ids.h"
#include "manta/manta.h"
#include "sdk/queue.h"

#define MT_CLIENT_MAGIC 0x6d74636cu /* "mtcl" */
#define MT_SDK_TASK_MAGIC 0x6d74746bu /* "mttk" */
#define MT_SDK_MAX_WATCHES 512 /* WatchTask streams open at once */
#define MT_SDK_REWATCHES 5     /* reopen a broken watch this many times */
#define MT_SDK_REWATCH_MS 200  /* after this long */

struct mt_rpc_engine;
struct mt_rpc_channel;
struct mt_rpc_stream;
struct mt_rpc_status;
struct mt_objc;
struct mt__abatch;

/* ---- plain-C task spec (what mt_task_opts_t holds) ---------------------- */

struct mt__res {
    char *name;
    int64_t qty; /* fixed point x 10000 */
};

struct mt__kv {
    char *key;
    char *value;
};

struct mt__match {
    char *key;
    int op;         /* mt_label_op */
    char **values;
    size_t n;
};

struct mt_task_opts {
    struct mt__res res[MT_TASK_MAX_RESOURCES];
    size_t n_res;
    struct mt__match match[MT_TASK_MAX_LABEL_MATCHES];
    size_t n_match;
    struct mt__kv *env;
    size_t n_env;
    char **env_unset;    /* names removed after env is applied */
    size_t n_env_unset;
    char *name;
    char *cwd;
    int32_t priority;
    int32_t max_retries; /* -1: the head's default */
    int strategy;        /* mt_strategy */
    size_t output_limit;
    char **code_path;    /* function tasks: folders to find libraries */
    size_t n_code_path;
    char pg_id[64];      /* placement group, "" for none */
    int32_t bundle;      /* its bundle, -1 any */
};

/* ---- tasks -------------------------------------------------------------- */

/* Captured output of one stream: the last `limit` bytes. */
struct mt__outbuf {
    uint8_t *data;
    size_t len;
    size_t cap;
    uint64_t dropped;
};

/*
 * A task as the client follows it. Fields below `refs` are guarded by the
 * client's mu while the client lives; the loop thread writes them, waiters
 * read them. `refs` counts the user's handle and the client's watch.
 */
struct mt_task {
    uint32_t magic;           /* MT_SDK_TASK_MAGIC */
    atomic_int refs;
    struct mt_client *client; /* the loop thread's; checks only after */
    char id[64];              /* the head's task id; read-only once set */
    size_t output_limit;      /* 0: no output wanted */
    int state;                /* mt_task_state */
    int exit_code;
    uint32_t attempt;
    char *error;              /* owned */
    char *node_id;            /* owned */
    struct mt__outbuf out;
    struct mt__outbuf err;
    uint8_t *value;           /* FINISHED function task's result (owned) */
    bool holds_result;        /* we hold a ref on its result object */
    size_t value_len;
    uint64_t tag;             /* the client watch's key for it; 0: none */
    atomic_bool settled;      /* id known, or ended/lost without one:
                                 set under mu, read without it */
    bool ended;               /* final state seen */
    bool actor_died;          /* FAILED actor call: its actor died */
    int lost;                 /* 0, or why the watch ended early (-MT_E*) */
    /* Loop thread only: */
    struct mt_rpc_stream *stream; /* the open WatchTask */
    struct mt_task *next_wait;    /* queue for a watch slot or a retry */
    uint8_t rewatches;            /* reopened since the last event */
    void *spec;                   /* owned Manta__TaskSpec until sent */
};

/* ---- requests from public calls to the loop thread ---------------------- */

enum mt__req_kind {
    MT__REQ_STATUS = 1, /* GetClusterStatus */
    MT__REQ_SUBMIT,     /* SubmitTask, then watch */
    MT__REQ_CANCEL,     /* CancelTask */
    MT__REQ_OBJECT,     /* an object call (rpc_objects.c): r->obj_start */
    MT__REQ_ACTOR_GET,  /* GetActor (rpc_actor.c) */
    MT__REQ_ACTOR_KILL, /* KillActor (rpc_actor.c) */
    MT__REQ_ACTOR_CALL, /* WorkerService.CallActor, direct (rpc_actor.c) */
    MT__REQ_ACTOR_LEASE, /* open LeaseActorOwner if not open (rpc_actor.c) */
    MT__REQ_UNARY,      /* any other unary head call (see mt__req_unary) */
    MT__REQ_CW_OPEN,    /* open the client watch (rpc_batch.c) */
    MT__REQ_SUBMIT_ASYNC, /* posted, not waited for: a task to batch */
};

/* mt_client.cw_state */
enum {
    MT__CW_OFF = 0,     /* not open (yet): submits take the one-by-one path */
    MT__CW_READY = 1,   /* open: submits are batched */
    MT__CW_BROKEN = 2,  /* ended: one by one from now on */
};

/* Tasks followed by the client watch, by tag (open addressing). */
struct mt__tagmap {
    struct mt_task **slots;
    size_t cap;                /* a power of two, or 0 */
    size_t n;
};

/* An actor as GetActor describes it (plain C; strings owned). */
struct mt__actor_info {
    char id[17];
    int state;                 /* mt_actor_state */
    char *name;
    char *node_id;
    char *death_reason;
    uint32_t pid;
    uint32_t restarts;
    int max_restarts;
    bool detached;
    char *address;             /* ALIVE: its worker; "" otherwise */
    uint32_t incarnation;
};

/* One node as GetClusterStatus describes it (only what the SDK uses). */
struct mt__node {
    char *temp_dir;
    char *hostname;
    char *node_id;
    char *address;             /* the worker's host:port */
    bool alive;
};

/* Cluster status reduced to plain C. */
struct mt__status {
    struct mt__node *nodes;
    size_t n_nodes;
    struct mt__res *total;     /* over live nodes */
    size_t n_total;
    struct mt__res *avail;
    size_t n_avail;
};

struct mt__req {
    struct mt__qnode qn;       /* in c->q */
    enum mt__req_kind kind;
    struct mt_client *client;  /* set by the loop thread */
    int timeout_ms;            /* rpc deadline */
    unsigned rpc_flags;        /* MT_RPC_WAIT_FOR_READY or 0 */
    bool done;                 /* guarded by mu */
    bool abandoned;            /* guarded by mu: the caller left */
    int rc;
    char msg[256];             /* why, when rc < 0 */
    /* SUBMIT in: */
    void *submit_msg;          /* owned Manta__SubmitTaskRequest */
    size_t output_limit;
    struct mt_task *task;      /* new task, one ref for the caller */
    /* CANCEL in: */
    char task_id[64];
    bool force;
    /* STATUS out: */
    struct mt__status status;
    /* OBJECT: started by obj_start on the loop thread; obj owned by the
     * request, freed with obj_free */
    int (*obj_start)(struct mt__req *r);
    void *obj;
    void (*obj_free)(void *obj);
    /* ACTOR_GET in: actor_id or actor_name; ACTOR_KILL in: actor_id: */
    char actor_id[17];
    char *actor_name;          /* owned */
    bool no_restart;
    /* ACTOR_GET out: */
    struct mt__actor_info actor;
    /* ACTOR_CALL in: the call (owned CallActorRequest), where it goes,
     * the task it completes and the handle (one ref each): */
    void *call_msg;
    char *actor_address;       /* owned */
    struct mt_actor *handle;
    /* UNARY in: the method and an owned request; out: an owned reply */
    const struct mt_rpc_method *method;
    void *unary_msg;           /* ProtobufCMessage, from mt__msg_copy */
    void *unary_reply;         /* ProtobufCMessage, from mt__msg_copy */
};

/* ---- the store connection, shared by a client and its buffers ------- */

struct mt__store {
    atomic_int refs;
    struct mt_objc *objc;
};

struct mt_buffer {
    struct mt__store *store;  /* one ref; NULL for an inline value */
    uint8_t *owned;           /* an inline value's heap copy, or NULL */
    mt_object_id id;
    const uint8_t *data;
    size_t size;
    bool is_tensor;
    uint8_t code, bits;
    uint32_t ndim;
    int64_t shape[MT_TENSOR_MAX_NDIM];
};

/* ---- the client --------------------------------------------------------- */

struct mt_client {
    uint32_t magic;           /* MT_CLIENT_MAGIC */
    uint64_t serial;          /* keys the per-thread last error */
    char *address;            /* head host:port */
    char *temp_dir;
    int rpc_timeout_ms;
    /* The store (read-only after connect): */
    struct mt__store *store;  /* NULL when none */
    char *store_path;
    char store_why[256];      /* why there is none */
    char *node_id;            /* the node whose store that is; NULL: none */
    char *worker_address;     /* its worker (FetchObject); NULL: none */
    /* Cross-thread state, guarded by mu: */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct mt__queue q;       /* struct mt__req waiting for the loop */
    bool stopping;            /* stop queued: refuse new requests */
    struct mt__qnode stop_node; /* queued by disconnect */
    mt_object_id *rel_ids;    /* task results to release (batched) */
    size_t n_rel, cap_rel;
    int rel_calls;            /* ReleaseObjects calls running */
    mt_object_id *reg_ids;    /* puts to register with the head (batched) */
    uint64_t *reg_sizes;
    size_t n_reg, cap_reg;
    int reg_calls;            /* RegisterObjects calls running */
    bool reg_urgent;          /* send them at the next wake-up */
    /* Loop thread only: */
    pthread_t thread;
    bool thread_started;
    bool loop_ready;          /* loop initialized */
    bool wake_ready;          /* wake initialized */
    bool timer_ready;         /* retry_timer initialized */
    uv_loop_t loop;
    uv_async_t wake;
    uv_timer_t retry_timer;   /* reopens broken watches */
    uv_timer_t rel_timer;     /* sends batched releases */
    bool rel_timer_ready;
    bool rel_armed;
    struct mt_task *retry_head, *retry_tail; /* watches to reopen */
    struct mt_rpc_engine *eng;
    struct mt_rpc_channel *ch;
    struct mt_rpc_channel *worker_ch; /* to worker_address, on first use */
    bool closing;             /* STOP handled */
    size_t n_watches;         /* streams open */
    size_t n_calls;           /* unary calls in flight */
    struct mt_task *wait_head, *wait_tail; /* tasks waiting for a slot */
    /* The client watch (rpc_batch.c): */
    atomic_int cw_state;      /* MT__CW_*: read by any thread */
    atomic_uint_fast64_t next_tag;
    char cw_id[48];           /* loop thread from here on */
    struct mt_rpc_stream *cw_stream;
    struct mt__req *cw_open;  /* the connect waiting for the first message */
    struct mt__tagmap cw_tasks; /* followed tasks: one ref each */
    struct mt_task **pend;    /* submitted, not sent yet (in cw_tasks) */
    size_t n_pend, cap_pend;
    unsigned n_batches;       /* SubmitTasks calls in flight */
    /* Actors (actor.c); read-only after connect: */
    char owner_id[33];        /* this client, as actors' owner */
    /* Guarded by mu: non-detached actors created here, killed at
     * disconnect. */
    char (*owned)[17];
    size_t n_owned, cap_owned;
    /* Loop thread only: channels to workers for direct actor calls. */
    struct mt__wchan *wchans;
    size_t n_wchans, cap_wchans;
    struct mt__abatch **abatches; /* direct calls of this wake-up */
    size_t n_abatches, cap_abatches;
    struct mt_rpc_stream *lease; /* LeaseActorOwner while open */
};

/* A channel to one worker (direct actor calls). */
struct mt__wchan {
    char *address;
    struct mt_rpc_channel *ch;
};

/* ---- error.c -- */

/* mt__set_error - record fmt as this thread's last error on c (or NULL) and
 * return err. */
int mt__set_error(const struct mt_client *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* mt__clear_error - forget this thread's last error on c. */
void mt__clear_error(const struct mt_client *c);

/* ---- client.c -- */

/* mt__req_new - a zeroed request. RET NULL on ENOMEM. */
struct mt__req *mt__req_new(enum mt__req_kind kind);

/* mt__req_free - free a request and whatever it owns. NULL ok. */
void mt__req_free(struct mt__req *r);

/*
 * mt__req_run - queue r, wake the loop, wait until done or timeout_ms
 * (< 0: forever). On success the caller owns r again (free it); on a
 * timeout r is abandoned and freed by the loop thread.
 * RET r->rc, -MT_ETIMEDOUT, -MT_ECLOSED
 */
int mt__req_run(struct mt_client *c, struct mt__req *r, int timeout_ms);

/* mt__req_complete - loop thread: end r with rc (and msg). Frees an
 * abandoned r. */
void mt__req_complete(struct mt_client *c, struct mt__req *r, int rc,
                      const char *msg);

/* mt__status_release - free a plain status. */
void mt__status_release(struct mt__status *s);

/* mt__deadline - absolute CLOCK_MONOTONIC time timeout_ms from now. */
struct timespec mt__deadline(int timeout_ms);

/* mt__task_unref - drop one reference; frees at zero. NULL ok. */
void mt__task_unref(struct mt_task *t);

/* ---- task_opts.c (pure) -- */

int mt__opts_init(struct mt_task_opts *o);
void mt__opts_release(struct mt_task_opts *o);

/*
 * mt__res_amount - check a resource name and amount (the rules of
 * mt_task_opts_set_resource) and convert the amount to fixed point.
 * RET 0, -MT_EINVAL (last error set, no client)
 */
int mt__res_amount(const char *name, double amount, int64_t *q);

/* mt__outbuf_append - keep the last limit bytes. RET 0, -MT_ENOMEM. */
int mt__outbuf_append(struct mt__outbuf *b, size_t limit, const void *p,
                      size_t n);

/* ---- rpc_head.c (the only file with protobuf types) -- */

/*
 * mt__rpc_submit_build - build an owned SubmitTaskRequest from argv and
 * opts (caller thread). RET 0, -MT_EINVAL, -MT_ENOMEM.
 */
int mt__rpc_submit_build(const char *const *argv,
                         const struct mt_task_opts *o, void **out);

/*
 * mt__rpc_submit_fn_build - the same for a function task: function name,
 * arguments (copied) and o's code path.
 */
int mt__rpc_submit_fn_build(const char *function, const void *const *args,
                            const size_t *sizes, size_t nargs,
                            const struct mt_task_opts *o, void **out);

/* mt__rpc_submit_free - free what mt__rpc_submit_build made. NULL ok. */
void mt__rpc_submit_free(void *msg);

/*
 * mt__msg_copy - an owned deep copy of a protobuf message (packed, then
 * unpacked), free with mt__rpc_submit_free(). Any thread.
 * IN  msg  a ProtobufCMessage (borrowed)
 * RET the copy, or NULL when out of memory
 */
void *mt__msg_copy(const void *msg);

/*
 * mt__req_unary - call method with req on the head and wait for the reply
 * (caller thread). The request is copied; timeout_ms is the deadline of
 * the call.
 * OUT reply  returns an owned ProtobufCMessage of the method's reply type,
 *            free with mt__rpc_submit_free()
 * RET 0, or the call's error (last error set on c)
 */
int mt__req_unary(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req, int timeout_ms, void **reply);

/* Loop thread: start the rpc behind r; completes r (now or later). */
void mt__rpc_start(struct mt_client *c, struct mt__req *r);

/*
 * mt__apply_event_locked - apply a TaskEvent (borrowed) to t. c->mu held.
 */
void mt__apply_event_locked(struct mt_task *t, const void *ev);

/* mt__task_new - a task handle with one ref (id may be NULL: not known). */
struct mt_task *mt__task_new(struct mt_client *c, const char *id,
                             size_t output_limit);

/* Loop thread: the error code and text of a failed call. */
int mt__status_err(const struct mt_rpc_status *st);
void mt__status_text(const struct mt_rpc_status *st, const char *what,
                     char *buf, size_t len);

/* ---- tagmap.c (pure) -- */

/* mt__tagmap_put - add t under t->tag (unique). RET 0, -MT_ENOMEM. */
int mt__tagmap_put(struct mt__tagmap *m, struct mt_task *t);
/* mt__tagmap_find - the slot holding tag, or SIZE_MAX. */
size_t mt__tagmap_find(const struct mt__tagmap *m, uint64_t tag);
/* mt__tagmap_del - empty slot j (from _find); later slots may move. */
void mt__tagmap_del(struct mt__tagmap *m, size_t j);
/* mt__tagmap_take - remove t; RET true if it was in the map. */
bool mt__tagmap_take(struct mt__tagmap *m, struct mt_task *t);
/* mt__tagmap_release - free the slots (not the tasks); m is empty after. */
void mt__tagmap_release(struct mt__tagmap *m);

/* ---- rpc_batch.c (the client watch) -- */

/*
 * mt__cw_connect - open the client watch and wait up to timeout_ms for the
 * head to register it (caller thread, at connect). Failing leaves the
 * client on the one-by-one path. RET 0 or the error (not recorded).
 */
int mt__cw_connect(struct mt_client *c, int timeout_ms);

/*
 * mt__cw_post - caller thread: hand a built SubmitTaskRequest (msg, taken)
 * to the loop for batching and return at once with the task handle.
 * OUT out  owned task, free with mt_task_release()
 * RET 0, -MT_ECLOSED, -MT_ENOMEM (recorded on c)
 */
int mt__cw_post(struct mt_client *c, void *msg, size_t output_limit,
                struct mt_task **out);

/*
 * mt__task_end - end t without a final event from the head: lost (lost is
 * its -MT_E* code) or, with lost 0, FAILED (refused). why is borrowed.
 * Takes c->mu; a task that has ended already is left alone.
 */
void mt__task_end(struct mt_client *c, struct mt_task *t, int lost,
                  const char *why);

/* Loop thread: start an MT__REQ_CW_OPEN / take an MT__REQ_SUBMIT_ASYNC. */
int mt__cw_start_open(struct mt_client *c, struct mt__req *r);
void mt__cw_take(struct mt_client *c, struct mt__req *r);
/* Loop thread: send what waits, as far as the calls in flight allow. */
void mt__cw_pump(struct mt_client *c);
/* Loop thread: end the watch and every task it follows (disconnect). */
void mt__cw_stop(struct mt_client *c);

/* Loop thread: open a watch for t (or queue it for a slot). Takes one ref. */
void mt__rpc_watch(struct mt_client *c, struct mt_task *t);

/* Loop thread: cancel every watch, drop queued ones (shutdown). */
void mt__rpc_stop_watches(struct mt_client *c);

/* mt__client_post_release - queue ReleaseObjects for id on c without
 * waiting, if c is still connected (c may be a dangling pointer: it is
 * only used when found among the live clients). THREAD any. */
void mt__client_post_release(struct mt_client *c, const mt_object_id *id);
/* ---- rpc_actor.c (protobuf) / actor.c -- */

/*
 * mt__rpc_actor_create_build - a SubmitTaskRequest creating an actor:
 * factory and arguments as a function task, o's placement options, and the
 * actor's name (NULL: none), detached flag, max_restarts and owner.
 * RET 0, -MT_ENOMEM
 */
int mt__rpc_actor_create_build(const char *factory, const void *const *args,
                               const size_t *sizes, size_t nargs,
                               const struct mt_task_opts *o, const char *name,
                               bool detached, int max_restarts,
                               const char *owner, void **out);

/* mt__rpc_actor_call_build - a SubmitTaskRequest calling method on actor
 * id with the arguments (copied). RET 0, -MT_ENOMEM. */
int mt__rpc_actor_call_build(const char *id, const char *method,
                             const void *const *args, const size_t *sizes,
                             size_t nargs, void **out);

/* Loop thread: start GetActor / KillActor for r. RET 0 or -MT_E* (then r
 * is not completed). */
int mt__rpc_actor_start(struct mt__req *r);

/* mt__rpc_actor_direct_build - a CallActorRequest (owned; free with
 * mt__rpc_submit_free). RET 0, -MT_ENOMEM. */
int mt__rpc_actor_direct_build(const char *id, uint32_t incarnation,
                               const char *caller, uint64_t seq,
                               const char *method, const void *const *args,
                               const size_t *sizes, size_t nargs, void **out);

/* Loop thread: a direct call ended: complete t (one ref taken) and tell
 * the handle (one ref taken). ok/actor_died as CallActorReply. */
void mt__actor_direct_done(struct mt_client *c, struct mt_actor *a,
                           struct mt_task *t, bool ok, const uint8_t *result,
                           size_t len, const char *error, bool actor_died);

/* Loop thread: send the direct calls gathered in this wake-up. */
void mt__rpc_actor_flush(struct mt_client *c);

/* Loop thread: close the channels to workers (stop). */
void mt__rpc_actor_stop(struct mt_client *c);

/* mt__actor_unref - drop a handle reference. */
void mt__actor_unref(struct mt_actor *a);

/* mt__actor_info_release - free what an info owns. */
void mt__actor_info_release(struct mt__actor_info *i);

/* mt__actors_disconnect - kill the client's non-detached actors (caller
 * thread, before the loop stops). */
void mt__actors_disconnect(struct mt_client *c);

/* ---- object.c -- */

void mt__store_unref(struct mt__store *s);

/* ---- rpc_objects.c (object calls; protobuf stays there) -- */

/* Where an object is, as the head's GetObject says. Owned strings. */
struct mt__located {
    int state;                 /* proto ObjectState */
    uint64_t size;
    bool is_inline;
    uint8_t *data;             /* is_inline (owned) */
    char **holders;            /* worker addresses (owned) */
    size_t n_holders;
    char error[256];
};

void mt__located_release(struct mt__located *l);

/* RegisterObjects of one put on c's node. RET 0 or -MT_E* (recorded). */
int mt__obj_register(struct mt_client *c, const mt_object_id *id,
                     uint64_t size);

/* ReleaseObjects. RET 0, -MT_ENOENT (some unknown), or -MT_E* (recorded). */
int mt__obj_release(struct mt_client *c, const mt_object_id *ids, size_t n);

#define MT__REL_BATCH 256     /* releases sent at once when this many */
#define MT__REL_DELAY_MS 20   /* else this long after the first */

/* Loop thread: send the batched releases now (MT__REL_BATCH queued, or
 * the client is stopping) or arm rel_timer for them. */
void mt__rel_kick(struct mt_client *c);

/* Loop thread: rel_timer fired: send what is queued. */
void mt__rel_timer_cb(uv_timer_t *t);

/*
 * Put registration, batched like releases: with the client watch up, a
 * put queues its RegisterObjects entry (mt__reg_post) and returns; the
 * loop sends the queue after MT__REL_DELAY_MS, at MT__REL_BATCH entries,
 * before any SubmitTasks (which waits for the answer, so the head knows
 * every object a task names), or at once for mt__reg_flush.
 */
/* mt__reg_post - queue id (size bytes) for registration. RET 0,
 * -MT_ENOMEM, -MT_ECLOSED (recorded). THREAD any. */
int mt__reg_post(struct mt_client *c, const mt_object_id *id, uint64_t size);
/* mt__reg_flush - send what is queued and wait for the head's answer (at
 * most the rpc timeout). THREAD any but the loop's. */
void mt__reg_flush(struct mt_client *c);
/* Loop thread: send every queued registration in one call. */
void mt__reg_send(struct mt_client *c);
/* Loop thread (mu not held): registrations queued or on the wire? */
bool mt__reg_busy(struct mt_client *c);

/* GetObject: wait up to timeout_ms (>= 0) while PENDING; ask to record a
 * copy at c's worker. RET 0, -MT_ENOENT (unknown), -MT_E* (recorded). */
int mt__obj_locate(struct mt_client *c, const mt_object_id *id,
                   int timeout_ms, struct mt__located *out);

/* FetchObject on c's worker from holder. RET 0 or -MT_E* (recorded). */
int mt__obj_fetch(struct mt_client *c, const mt_object_id *id,
                  const char *holder, int timeout_ms);

/* A SubmitTaskRequest for a function task with mt_arg arguments. */
int mt__rpc_submit_args_build(const char *function, const mt_arg *args,
                              size_t nargs, const struct mt_task_opts *o,
                              void **out);

#endif /* MT_SDK_INT_H */
