/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_int.h -- tasks inside libmanta: options (a struct mt_task_def plus
 * what only the SDK uses), the task a client follows, the client's tasks
 * part, and the calls of rpc_task.c (SubmitTask, WatchTask, CancelTask)
 * and rpc_batch.c (the client watch: SubmitTasks + WatchTasks), the two
 * files that see their protobuf types. Public side: manta/task.h.
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
 * Files, lowest first (each calls only those before it): task_opts.c
 * (options, defs), task_state.c (a handle's state), watch_queue.c (a
 * watch's events), rpc_task.c, rpc_batch.c (the loop thread's calls),
 * task.c and watch.c (the public API).
 */
#ifndef MT_SDK_TASK_INT_H
#define MT_SDK_TASK_INT_H

#include "sdk/client_int.h"
#include "common/defs.h"
#include "sdk/tagmap.h"
#include "manta/admin.h"

#define MT_SDK_TASK_MAGIC 0x6d74746bu /* "mttk" */
#define MT__MAX_WATCHES 512 /* WatchTask streams open at once */
#define MT__REWATCHES 5     /* reopen a broken watch this many times */
#define MT__REWATCH_MS 200  /* after this long */

/* ---- options ------------------------------------------------------------- */

struct mt_task_opts {
    struct mt_task_def def;  /* COMMAND kind, 1 CPU; place DEFAULT or
                                SPREAD (a placement group wins at submit) */
    size_t output_limit;     /* bytes kept per stream; 0: no output */
    bool no_follow;          /* mt_task_opts_set_follow(o, false) */
};

/* mt__opts_init - the defaults of mt_task_opts_create. RET 0, -MT_ENOMEM. */
int mt__opts_init(struct mt_task_opts *o);
void mt__opts_release(struct mt_task_opts *o);

/*
 * mt__res_amount - check a resource name and amount (the rules of
 * mt_task_opts_set_resource) and convert the amount to fixed point.
 * RET 0, -MT_EINVAL (last error set, no client)
 */
int mt__res_amount(const char *name, double amount, int64_t *q);

/* ---- a task (task_state.c; defs in task_opts.c) --------------------------- */

/* Captured output of one stream: the last `limit` bytes. */
struct mt__outbuf {
    uint8_t *data;
    size_t len;
    size_t cap;
    uint64_t dropped;
};

/* mt__outbuf_append - keep the last limit bytes. RET 0, -MT_ENOMEM. */
int mt__outbuf_append(struct mt__outbuf *b, size_t limit, const void *p,
                      size_t n);

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
    bool unfollowed;          /* submitted not to be followed (read-only) */
    int lost;                 /* 0, or why the watch ended early (-MT_E*) */
    /* Loop thread only: */
    struct mt_rpc_stream *stream; /* the open WatchTask */
    struct mt_task *next_wait;    /* queue for a watch slot or a retry */
    uint8_t rewatches;            /* reopened since the last event */
    struct mt_task_def *def;      /* owned spec until sent (batched) */
};

/* mt__task_new - a task handle with one ref (id NULL: not known yet). RET
 * NULL on ENOMEM. */
struct mt_task *mt__task_new(struct mt_client *c, const char *id,
                             size_t output_limit);

/* mt__task_unref - drop one reference; frees at zero. NULL ok. */
void mt__task_unref(struct mt_task *t);

/* mt__task_apply_locked - apply ev to t. c->mu held. */
void mt__task_apply_locked(struct mt_task *t, const struct mt__task_event *ev);

/*
 * mt__task_end - end t without a final event from the head: lost (lost is
 * its -MT_E* code) or, with lost 0, FAILED (refused). why is borrowed.
 * Takes c->mu; a task that has ended already is left alone.
 */
void mt__task_end(struct mt_client *c, struct mt_task *t, int lost,
                  const char *why);

/* mt__task_final - FINISHED, FAILED or CANCELLED. */
bool mt__task_final(int state);

/* How to submit (mt__task_submit_def). */
#define MT__SUBMIT_BATCH 0x1u     /* batched when the client watch is up */
#define MT__SUBMIT_NO_FOLLOW 0x2u /* one by one, and not followed */

/*
 * mt__task_submit_def - submit d (taken, freed on failure) and return the
 * task: batched (MT__SUBMIT_BATCH and the client watch is up), else one
 * by one (waiting for the head's id), followed unless MT__SUBMIT_NO_FOLLOW.
 * OUT out  owned task, free with mt_task_release()
 * RET 0 or -MT_E* (recorded on c)
 */
int mt__task_submit_def(struct mt_client *c, struct mt_task_def *d,
                        size_t output_limit, unsigned how,
                        struct mt_task **out);

/* mt__task_def_new - a copy of o's def (the defaults when o is NULL) for
 * a submit. RET NULL on ENOMEM. */
struct mt_task_def *mt__task_def_new(const struct mt_task_opts *o);

/* mt__task_def_free - release and free a def. NULL ok. */
void mt__task_def_free(struct mt_task_def *d);

/* ---- the tasks part ------------------------------------------------------ */

/* mt__tasks.cw_state */
enum {
    MT__CW_OFF = 0,     /* not open (yet): submits take the one-by-one path */
    MT__CW_READY = 1,   /* open: submits are batched */
    MT__CW_BROKEN = 2,  /* ended: one by one from now on */
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
    struct mt__tagmap cw_tasks; /* followed tasks by tag: one ref each */
    struct mt_task **pend;    /* submitted, not sent yet (in cw_tasks) */
    size_t n_pend, cap_pend;
    unsigned n_batches;       /* SubmitTasks calls in flight */
};

/* mt__tasks_attach - give c its tasks part. RET 0, -MT_ENOMEM. */
int mt__tasks_attach(struct mt_client *c);

/* ---- rpc_task.c ---------------------------------------------------------- */

/* mt__task_event_decode - a Manta__TaskEvent (borrowed) as plain C; ev
 * borrows from it. */
void mt__task_event_decode(const void *pb, struct mt__task_event *ev);

/*
 * mt__task_submit_one - SubmitTask d (taken) and, when follow, follow the
 * task on its own WatchTask; waits for the head's answer (caller thread).
 * OUT out  owned task, free with mt_task_release()
 * RET 0 or -MT_E* (recorded on c: the call's status, "INVALID_ARGUMENT:
 *     ...")
 */
int mt__task_submit_one(struct mt_client *c, struct mt_task_def *d,
                        size_t output_limit, bool follow,
                        struct mt_task **out);

/* Loop thread: SubmitTask d (taken) for t, whose handle exists (one ref
 * taken): nobody waits; the reply gives t its id and a watch, or ends it.
 */
void mt__task_submit_posted(struct mt_client *c, struct mt_task *t,
                            struct mt_task_def *d);

/* mt__task_cancel_id - CancelTask. OUT state: the state after the request
 * (may be NULL). RET 0 or -MT_E* (recorded on c: "NOT_FOUND: ..."). */
int mt__task_cancel_id(struct mt_client *c, const char *id, bool force,
                       int *state);

/* mt__task_list - ListTasks (f checked, state its value): the entries
 * into l (their memory in keep) or, with json, the JSON text (owned).
 * RET 0 or -MT_E* (recorded on c) */
int mt__task_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json);

/* Loop thread: follow t on a WatchTask of its own (or queue it for a
 * slot). Takes one ref. */
void mt__task_watch(struct mt_client *c, struct mt_task *t);

/* Loop thread: end every task waiting for a watch or a retry (stop). */
void mt__tasks_stop_watches(struct mt_client *c);

/* ---- following tasks by id (watch.c; queue in watch_queue.c; streams in
 * rpc_task.c) ---- */

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

/* mt__watch_event - queue ev (borrowed) of task_id as OUTPUT and STATE
 * events. THREAD any (the loop's). */
void mt__watch_event(struct mt_watch *w, const char *task_id,
                     const struct mt__task_event *ev);

/* mt__watch_end - queue task_id's END: lost 0 (it ended) or why the watch
 * lost it (why borrowed). */
void mt__watch_end(struct mt_watch *w, const char *task_id, int lost,
                   const char *why);

/* mt__watch_unref - drop one reference; frees at zero. */
void mt__watch_unref(struct mt_watch *w);

/* mt__watch_follow - post the opening of one stream per id (copied) for w.
 * RET 0, -MT_ENOMEM, -MT_ECLOSED (recorded on w's client). */
int mt__watch_follow(struct mt_watch *w, const char *const *ids, size_t n);

/* mt__watch_stop - post the cancel of w's streams. RET 0, -MT_ECLOSED. */
int mt__watch_stop(struct mt_watch *w);

/* ---- rpc_batch.c (the client watch) -------------------------------------- */

/*
 * mt__cw_connect - open the client watch and wait up to timeout_ms for the
 * head to register it (caller thread, at connect). Failing leaves the
 * client on the one-by-one path. RET 0 or the error (not recorded).
 */
int mt__cw_connect(struct mt_client *c, int timeout_ms);

/*
 * mt__cw_post - caller thread: hand d (taken) to the loop for batching and
 * return at once with the task handle.
 * OUT out  owned task, free with mt_task_release()
 * RET 0, -MT_ECLOSED, -MT_ENOMEM (recorded on c)
 */
int mt__cw_post(struct mt_client *c, struct mt_task_def *d,
                size_t output_limit, struct mt_task **out);

/* Loop thread: send what waits, as far as the calls in flight allow. */
void mt__cw_pump(struct mt_client *c);

/* Loop thread: end the watch and every task it follows (disconnect). */
void mt__cw_stop(struct mt_client *c);

#endif /* MT_SDK_TASK_INT_H */
