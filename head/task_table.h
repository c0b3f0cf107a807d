/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_table.h -- the head's task table: every task the head owns, found by
 * number or id, with what was submitted (a plain C struct mt_task_def),
 * where it is in its life, the tail of its output and who follows it.
 *
 *   submit -> PENDING --placed--> SCHEDULED --worker acks--> RUNNING
 *        RUNNING --exit--> FINISHED (exit_code) | FAILED (could not run)
 *        PENDING/SCHEDULED/RUNNING --cancel--> CANCELLED
 *        SCHEDULED/RUNNING --node died--> PENDING (attempt+1, while retries
 *                                         remain) | FAILED (worker died)
 *        SCHEDULED --hand-over never arrived, node dead--> PENDING (same
 *                                         attempt)
 *        FINISHED --its stored result lost (lineage)--> PENDING (attempt+1)
 *
 * The life cycle itself is driven by tasks.c; this file is the table:
 * storage, lookups, output kept (at most MT_TASK_OUTPUT_MAX bytes; older
 * output is dropped with a count) and forgetting old finished tasks (once
 * keep_done newer ones have finished: MT_TASK_KEEP_DONE unless the head
 * is told otherwise, `manta-head --keep-finished-tasks N`). Services that follow tasks
 * (objects, watches, gangs, actors) implement struct mt_task_listener.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_TASK_TABLE_H
#define MT_HEAD_TASK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/ids.h"
#include "sched/sched.h"

#define MT_HEAD_TASK_MAGIC 0x7461736bu /* "task" */
#define MT_TASK_OUTPUT_MAX (1u << 20)
#define MT_TASK_KEEP_DONE 10000

/* Values match proto TaskState. */
enum mt_head_task_state {
    MT_TASK_WAITING_FOR_ARGS = 1,
    MT_TASK_PENDING = 2,
    MT_TASK_SCHEDULED = 3,
    MT_TASK_RUNNING = 4,
    MT_TASK_FINISHED = 5,
    MT_TASK_FAILED = 6,
    MT_TASK_CANCELLED = 7,
};

/* One piece of output, in arrival order. */
struct mt_task_output {
    struct mt_task_output *next;
    uint32_t fd;       /* 1 stdout, 2 stderr */
    uint32_t len;
    uint8_t data[];
};

struct mt_task_watcher; /* a WatchTask stream (rpc_watch.c) */

/* A task's object arguments (objects.c): refs held until it ends. */
struct mt_task_deps {
    uint32_t n;                  /* ids below; one ref each */
    uint32_t missing;            /* not READY yet (WAITING_FOR_ARGS) */
    mt_object_id ids[];
};

/* A task. Guarded by: loop thread. */
struct mt_head_task {
    uint32_t magic;              /* MT_HEAD_TASK_MAGIC */
    uint64_t num;                /* numeric id: the scheduler's task id */
    uint64_t seq;                /* order added (listings: newest first) */
    char id[17];                 /* num as an id (common/ids.h) */
    struct mt_task_def def;      /* as submitted (owned) */
    enum mt_head_task_state state;
    int max_retries;             /* retries allowed (default applied) */
    uint32_t attempt;
    char *node_id;               /* where it runs or ran; NULL if never */
    struct mt_grant grant;       /* the scheduler's grant while placed */
    bool has_grant;
    bool held;                   /* SCHEDULED, its hand-over undelivered:
                                    waits for its suspected node */
    uint8_t undelivered;         /* hand-overs that never reached a node */
    uint64_t pg;                 /* placement group number, 0 when none */
    bool cancel_requested;
    bool infeasible;             /* reported infeasible while pending */
    bool actor_died;             /* FAILED actor method: its actor died */
    bool leased;                 /* pushed to a lease by its driver: filed
                                    from its worker's report (leases.h) */
    int exit_code;
    char *error;
    uint8_t *result;             /* FINISHED function task's result */
    size_t result_len;
    bool result_in_store;        /* the result is an object in a store */
    uint64_t result_size;
    struct mt_task_deps *deps;   /* NULL: no object arguments (owned) */
    int64_t submit_ms, start_ms, end_ms;   /* wall clock */
    struct mt_task_output *out_head, *out_tail;
    size_t out_bytes;
    uint64_t out_dropped;
    uint64_t done_order;         /* for forgetting old finished tasks */
    bool lineage;                /* FINISHED, its result may be rebuilt:
                                    never forgotten, keeps deps (objects.c) */
    uint64_t gang;               /* gang number (gangs.h), 0 when none */
    uint32_t gang_rank;          /* ... and its rank in the gang */
    /* Followers (rpc_watch.c); a task with watchers is never forgotten. */
    struct mt_task_watcher *watchers;
    uint32_t cw;                 /* client watch following it, 0 = none;
                                    kept once it ended (its final event
                                    is sent again after a head restart) */
    bool cw_output;              /* ... with its output */
    uint64_t cw_tag;             /* the client's tag for it */
    bool dirty;                  /* queued for the next storage write
                                    (persist.h) */
};

/*
 * What a service that follows tasks implements (tasks.h registers them).
 * changed: t moved (state, attempt, node, error); a terminal state is the
 * last call for t. output: t printed len bytes on fd (1 or 2). Either may
 * be NULL. Both run on the loop thread, in registration order.
 */
struct mt_task_listener {
    void (*changed)(void *arg, struct mt_head_task *t);
    void (*output)(void *arg, struct mt_head_task *t, uint32_t fd,
                   const uint8_t *data, size_t len);
};

struct mt_task_table {
    struct mt_head_task **slots; /* open addressing by num */
    size_t cap;
    size_t n;
    uint64_t next_num;
    uint64_t next_seq;
    uint64_t done;               /* finished tasks so far */
    size_t n_done_kept;
    size_t keep_done;            /* finished tasks kept (_init:
                                    MT_TASK_KEEP_DONE; set before use) */
    /* Told of each task added (gone false) and forgotten (gone true), for
     * persist.h; may be NULL. */
    void (*touched)(void *arg, struct mt_head_task *task, bool gone);
    void *touched_arg;
};

/* mt_task_table_init - empty table; numbers start at first_num. */
void mt_task_table_init(struct mt_task_table *t, uint64_t first_num);
void mt_task_table_release(struct mt_task_table *t);

/*
 * mt_task_table_add - add a PENDING task.
 *
 * IN  def          taken: its contents move into the task, *def is left
 *                  initialized and empty
 * IN  max_retries  < 0 for MT_TASK_DEFAULT_RETRIES
 * RET the task (borrowed; owned by the table)
 */
struct mt_head_task *mt_task_table_add(struct mt_task_table *t,
                                       struct mt_task_def *def,
                                       int max_retries, int64_t now_wall);

/*
 * mt_task_table_add_num - as mt_task_table_add, under a number chosen
 * elsewhere (a task its driver named and pushed to a lease, leases.h).
 * RET the task, or NULL when num is taken (def then left as it was)
 */
struct mt_head_task *mt_task_table_add_num(struct mt_task_table *t,
                                           uint64_t num,
                                           struct mt_task_def *def,
                                           int max_retries, int64_t now_wall);

/* mt_task_table_find / _find_id - by number or by its hex id. */
struct mt_head_task *mt_task_table_find(const struct mt_task_table *t,
                                        uint64_t num);
struct mt_head_task *mt_task_table_find_id(const struct mt_task_table *t,
                                           const char *id);

/*
 * mt_task_table_finish - move task to a terminal state, record why, and
 * count it towards forgetting; may drop the oldest finished tasks without
 * watchers (never this one).
 *
 * IN  error  borrowed (NULL for none)
 */
void mt_task_table_finish(struct mt_task_table *t, struct mt_head_task *task,
                          enum mt_head_task_state state, int exit_code,
                          const char *error, int64_t now_wall);

/*
 * mt_task_table_pin - keep (on) or stop keeping a finished task whose
 * result object may have to be rebuilt by running it again (lineage):
 * pinned tasks are never forgotten and do not count towards forgetting.
 */
void mt_task_table_pin(struct mt_task_table *t, struct mt_head_task *task,
                       bool on);

/*
 * mt_task_table_revive - a terminal task runs again as its next attempt:
 * PENDING, attempt + 1, its end, exit code, error and result cleared, and
 * no longer pinned or counted as done, no longer followed by its client
 * watch (which had the final event). Its output so far is kept.
 */
void mt_task_table_revive(struct mt_task_table *t, struct mt_head_task *task);

/* Visit tasks newest first (by number); stop when fn returns false. */
typedef bool (*mt_task_visit_fn)(void *arg, struct mt_head_task *task);
/* mt_task_table_visit - every task, in no order, while fn returns true;
 * fn must not add or remove tasks. */
void mt_task_table_visit(const struct mt_task_table *t, mt_task_visit_fn fn,
                         void *arg);
void mt_task_table_visit_newest(const struct mt_task_table *t,
                                mt_task_visit_fn fn, void *arg);

/*
 * mt_task_table_newest - one page of the tasks match accepts, newest
 * first: the first skip of them are passed over and the next max (at
 * most) go into out. One walk and a heap of skip + max entries, so a
 * page costs O(n log(skip + max)), not a sort of the table.
 *
 * IN  match  called once per task (must not add or remove tasks)
 * OUT out    max entries room; *n_out filled
 * RET how many tasks match accepted (the total, paged or not)
 */
typedef bool (*mt_task_match_fn)(void *arg, const struct mt_head_task *task);
size_t mt_task_table_newest(const struct mt_task_table *t,
                            mt_task_match_fn match, void *arg, size_t skip,
                            size_t max, struct mt_head_task **out,
                            size_t *n_out);

/* mt_task_table_count - tasks in state s (O(table size)). */
size_t mt_task_table_count(const struct mt_task_table *t,
                           enum mt_head_task_state s);

/* ---- one task ------------------------------------------------------------ */

/* mt_head_task_terminal - FINISHED, FAILED or CANCELLED. */
bool mt_head_task_terminal(const struct mt_head_task *task);

/* mt_head_task_set_error - replace the error text (copied; NULL ok). */
void mt_head_task_set_error(struct mt_head_task *task, const char *error);

/* mt_head_task_set_node - replace the node id (copied; NULL ok). */
void mt_head_task_set_node(struct mt_head_task *task, const char *node_id);

/* mt_head_task_set_result - keep a copy of a function task's result. */
void mt_head_task_set_result(struct mt_head_task *task, const void *data,
                             size_t len);

/*
 * mt_head_task_add_output - append output, dropping the oldest beyond
 * MT_TASK_OUTPUT_MAX.
 */
void mt_head_task_add_output(struct mt_head_task *task, uint32_t fd,
                             const void *data, size_t len);

/* mt_head_task_state_name - "PENDING", "RUNNING", ... */
const char *mt_head_task_state_name(enum mt_head_task_state s);

#endif /* MT_HEAD_TASK_TABLE_H */
