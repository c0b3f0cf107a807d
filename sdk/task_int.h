/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_int.h -- the task types inside libmanta: options (a struct
 * mt_task_def plus what only the SDK uses), the task a client follows,
 * the client's tasks part and a watch of tasks by id. Types only: each
 * call is declared in the header of the file that makes it (below).
 * Public side: manta/task.h (and the watch in manta/admin.h).
 *
 * A task handle is shared by the user and the client's watch of it, so it
 * is reference counted (atomically: mt_task_release() must work after the
 * client is gone). While the client lives, its state is written by the
 * loop thread and read by waiters, both under c->mu; every change
 * broadcasts c->cv.
 *
 * Specs travel as plain C (struct mt_task_def, owned by the request or the
 * task until sent); rpc_task.c and rpc_batch.c turn them into protobuf
 * views (proto/convert.h) only for the call that sends them.
 *
 * Files, lowest first (each calls only those before it), with their
 * headers: task_opts.c (options, defs, output buffers; task_opts.h),
 * task_state.c (a handle's state; task_state.h), watch_queue.c (a watch's
 * events; watch_queue.h), rpc_task.c (SubmitTask, WatchTask, CancelTask;
 * rpc_task.h) and rpc_batch.c (the client watch: SubmitTasks + WatchTasks;
 * rpc_batch.h), the loop thread's calls and the two files that see the
 * task rpcs' protobuf types, then lease.c (lease.h: function tasks pushed
 * straight to leased workers, its decisions in lease_policy.h and its
 * PushTasks in rpc_push.h), then task.c (task.h) and watch.c, the public
 * API. Lower files learn of a lease request's events only through its
 * listener (mt__task_listen_fn).
 */
#ifndef MT_SDK_TASK_INT_H
#define MT_SDK_TASK_INT_H

#include "sdk/client_int.h"
#include "common/defs.h"
#include "sdk/tagmap.h"
#include "manta/admin.h"

#define MT_SDK_TASK_MAGIC 0x6d74746bu /* "mttk" */
#define MT__MAX_WATCHES 512 /* WatchTask streams open at once */
#define MT__REWATCHES 5     /* reopen a watch cut as too slow this many
                               times (a head away: retry.h decides) */
#define MT__REWATCH_MS 200  /* after this long */

/* ---- options ------------------------------------------------------------- */

struct mt_task_opts {
    struct mt_task_def def;  /* COMMAND kind, 1 CPU; place DEFAULT or
                                SPREAD (a placement group wins at submit) */
    size_t output_limit;     /* bytes kept per stream; 0: no output */
    bool no_follow;          /* mt_task_opts_set_follow(o, false) */
};

/* ---- a task (task_state.h; defs and output buffers in task_opts.h) ------- */

/* Captured output of one stream: the last `limit` bytes. */
struct mt__outbuf {
    uint8_t *data;
    size_t len;
    size_t cap;
    uint64_t dropped;
};

/* One TaskEvent as plain C; every pointer borrows from the message. */
struct mt__task_event {
    int state;               /* mt_task_state; 0: output only */
    const uint8_t *output;   /* a piece of output, output_len bytes */
    size_t output_len;
    unsigned fd;             /* 1 stdout, 2 stderr */
    int exit_code;
    const char *error;
    const char *node_id;
    uint32_t attempt;
    const uint8_t *result;   /* FINISHED function task: its value */
    size_t result_len;
    bool actor_died;
    bool result_in_store;    /* the result is an object (result_size) */
    uint64_t result_size;
    const char *task_id;     /* client watch events */
    uint64_t tag;
    const char *worker_address; /* RUNNING of a lease: where to push */
};

struct mt_task;

/*
 * A listener of an internal task (a lease request, lease.c): told on the
 * loop thread, without mu, after each event was applied to t (ev) and
 * when t ended without one (ev NULL: refused, lost, closed).
 */
typedef void (*mt__task_listen_fn)(struct mt_client *c, struct mt_task *t,
                                   const struct mt__task_event *ev);

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
    char sub_id[MT_NUM_ID_LEN + 1]; /* the id a head-path submit asks for
                                  (mt__task_id_new), so a retried submit is
                                  the same task; "" for actors */
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
    bool unfollowed;          /* submitted not to be followed (read-only) */
    int lost;                 /* 0, or why the watch ended early (-MT_E*) */
    bool leased;              /* pushed to a lease (lease.c): its id is
                                 ours; read-only after submit */
    /* Loop thread only: */
    void *lease_item;         /* leased: its entry in lease.c until it
                                 ends */
    mt__task_listen_fn listen; /* internal tasks: lease.c's listener */
    void *listen_arg;
    struct mt_rpc_stream *stream; /* the open WatchTask */
    struct mt_task *next_wait;    /* queue for a watch slot or a retry */
    unsigned rewatches;           /* reopened since the last event */
    struct mt_task_def *def;      /* owned spec until sent (batched) */
};

/* ---- the tasks part ------------------------------------------------------ */

/* mt__tasks.cw_state */
enum {
    MT__CW_OFF = 0,     /* not open (yet): submits take the one-by-one path */
    MT__CW_READY = 1,   /* open: submits are batched */
    MT__CW_BROKEN = 2,  /* ended: one by one from now on */
    MT__CW_AWAY = 3,    /* the head went away: submits wait while the
                           watch is reopened under the same id */
};

/* The client's tasks part. Loop thread only unless marked. */
struct mt__tasks {
    uv_timer_t retry_timer;   /* reopens broken watches */
    bool timer_ready;
    struct mt_task *retry_head, *retry_tail; /* watches to reopen */
    size_t n_watches;         /* WatchTask streams open */
    struct mt_task *wait_head, *wait_tail;   /* tasks waiting for a slot */
    /* The client watch (rpc_batch.c): */
    atomic_int cw_state;      /* MT__CW_*: read by any thread */
    atomic_uint_fast64_t next_tag; /* any thread */
    char cw_id[48];
    struct mt_rpc_stream *cw_stream;
    struct mt__req *cw_open;  /* the connect waiting for the first message */
    bool cw_reopening;        /* reopened: its first message re-checks */
    unsigned cw_attempts;     /* reopens failed since the head went away */
    struct mt__tagmap cw_tasks; /* followed tasks by tag: one ref each */
    struct mt_task **pend;    /* submitted, not sent yet (in cw_tasks) */
    size_t n_pend, cap_pend;
    unsigned n_batches;       /* SubmitTasks calls in flight */
    struct mt__leases *leases; /* the lease path (lease.c) */
};

/* ---- following tasks by id (watch.c; queue in watch_queue.h; streams in
 * rpc_task.h) ---- */

#define MT_WATCH_MAGIC 0x6d747774u /* "mtwt" */

struct mt__wstream;

/* A queued event and the bytes its pointers point into. */
struct mt__wev {
    struct mt__wev *next;
    mt_watch_event ev;
    char buf[];
};

/*
 * A watch (manta/admin.h): events queued by the loop thread, taken by the
 * user. refs counts the user's handle and each stream open for it; the
 * loop thread may still queue (dropped once closed) until its streams end.
 */
struct mt_watch {
    uint32_t magic;              /* MT_WATCH_MAGIC */
    struct mt_client *client;
    unsigned flags;              /* MT_WATCH_* */
    atomic_int refs;
    pthread_mutex_t mu;          /* guards the fields below; never taken
                                    with the client's mu */
    pthread_cond_t cv;
    struct mt__wev *head, *tail; /* events not taken yet */
    struct mt__wev *cur;         /* the event last returned (owned) */
    size_t open;                 /* tasks whose END is not queued yet */
    bool closed;                 /* the user closed it: drop events */
    /* Loop thread only: */
    struct mt__wstream *streams; /* open streams */
};

#endif /* MT_SDK_TASK_INT_H */
