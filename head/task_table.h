/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.h -- the head's task table and each task's life cycle.
 *
 *   submit -> PENDING --placed--> SCHEDULED --worker acks--> RUNNING
 *        RUNNING --exit--> FINISHED (exit_code) | FAILED (could not run)
 *        PENDING/SCHEDULED/RUNNING --cancel--> CANCELLED
 *        SCHEDULED/RUNNING --node died--> PENDING (attempt+1, while retries
 *                                         remain) | FAILED (worker died)
 *
 * A task keeps its spec as an opaque serialized blob (the rpc adapter owns
 * the format), the fields the head decides on, the tail of its output (at
 * most MT_TASK_OUTPUT_MAX bytes; older output is dropped with a marker) and
 * the list of watchers following it. Finished tasks stay listed until
 * MT_TASK_KEEP_DONE newer ones have finished.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_TASKS_H
#define MT_HEAD_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"

#define MT_TASK_MAGIC 0x7461736bu /* "task" */
#define MT_TASK_OUTPUT_MAX (1u << 20)
#define MT_TASK_KEEP_DONE 10000
#define MT_TASK_DEFAULT_RETRIES 3

/* Values match proto TaskState. */
enum mt_task_state {
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

struct mt_task_watcher;

/* A task's object arguments (rpc_objects.c): refs held until it ends. */
struct mt_task_deps {
    uint32_t n;                  /* ids below; one ref each */
    uint32_t missing;            /* not READY yet (WAITING_FOR_ARGS) */
    mt_object_id ids[];
};

/* A task. Guarded by: loop thread. */
struct mt_task {
    uint32_t magic;              /* MT_TASK_MAGIC */
    uint64_t num;                /* numeric id: the scheduler's task id */
    char id[17];                 /* num as 16 hex digits */
    char *name;
    char *summary;               /* the command line, for listings */
    uint8_t *spec;               /* serialized spec (opaque here) */
    size_t spec_len;
    enum mt_task_state state;
    int max_retries;
    uint32_t attempt;
    char *node_id;               /* where it runs or ran; NULL if never */
    uint32_t node_handle;        /* scheduler node handle while placed */
    uint64_t grant;              /* scheduler grant while placed */
    bool has_grant;
    uint64_t pg;                 /* placement group number, 0 when none */
    bool cancel_requested;
    bool infeasible;             /* reported infeasible while pending */
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
    struct mt_task_watcher *watchers;
    uint32_t cw;                 /* client watch following it, 0 = none */
    bool cw_output;              /* ... with its output */
    uint64_t cw_tag;             /* the client's tag for it */
    uint64_t done_order;         /* for forgetting old finished tasks */
    int kind;                    /* proto TaskKind; 0 = not recorded */
    bool actor_died;             /* FAILED actor method: its actor died */
    uint64_t gang;               /* gang number (gangs.h), 0 when none */
    uint32_t gang_rank;          /* ... and its rank in the gang */
};

struct mt_task_table {
    struct mt_task **slots;      /* open addressing by num */
    size_t cap;
    size_t n;
    uint64_t next_num;
    uint64_t done;               /* finished tasks so far */
    size_t n_done_kept;
};

/* mt_task_table_init - empty table; ids start at a random base. */
void mt_task_table_init(struct mt_task_table *t, uint64_t first_num);
void mt_task_table_release(struct mt_task_table *t);

/*
 * mt_task_new - add a PENDING task.
 *
 * IN  name, summary   borrowed, copied (may be NULL)
 * IN  max_retries     < 0 for MT_TASK_DEFAULT_RETRIES
 * RET the task (borrowed; owned by the table)
 */
struct mt_task *mt_task_new(struct mt_task_table *t, const char *name,
                            const char *summary, int max_retries,
                            int64_t now_wall);

/* mt_task_set_spec - keep a copy of the serialized spec. */
void mt_task_set_spec(struct mt_task *task, const void *spec, size_t len);

/* mt_task_find / mt_task_find_id - by number or by its hex id. */
struct mt_task *mt_task_find(const struct mt_task_table *t, uint64_t num);
struct mt_task *mt_task_find_id(const struct mt_task_table *t, const char *id);

/* mt_task_terminal - FINISHED, FAILED or CANCELLED. */
bool mt_task_terminal(const struct mt_task *task);

/*
 * mt_task_finish - move to a terminal state, record why, and count it
 * towards forgetting; may drop the oldest finished tasks (never this one).
 *
 * IN  error  borrowed (NULL for none)
 */
void mt_task_finish(struct mt_task_table *t, struct mt_task *task,
                    enum mt_task_state state, int exit_code, const char *error,
                    int64_t now_wall);

/* mt_task_set_error - replace the error text (borrowed, copied; NULL ok). */
void mt_task_set_error(struct mt_task *task, const char *error);

/* mt_task_set_result - keep a copy of a function task's result. */
void mt_task_set_result(struct mt_task *task, const void *data, size_t len);

/*
 * mt_task_add_output - append output, dropping the oldest beyond
 * MT_TASK_OUTPUT_MAX.
 */
void mt_task_add_output(struct mt_task *task, uint32_t fd, const void *data,
                        size_t len);

/* Visit tasks newest first (by number); stop when fn returns false. */
typedef bool (*mt_task_visit_fn)(void *arg, struct mt_task *task);
void mt_task_table_visit_newest(const struct mt_task_table *t,
                                mt_task_visit_fn fn, void *arg);

/* mt_task_table_count - tasks in state s (O(table size)). */
size_t mt_task_table_count(const struct mt_task_table *t,
                           enum mt_task_state s);

/* mt_task_state_name - "PENDING", "RUNNING", ... */
const char *mt_task_state_name(enum mt_task_state s);

#endif /* MT_HEAD_TASKS_H */
