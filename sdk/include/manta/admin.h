/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/admin.h -- what a tool needs to see and steer a cluster: its
 * status (nodes, resources, demand), listings of nodes, tasks, actors,
 * placement groups, objects and gangs with filters, and following tasks
 * by id as they run (state changes and output, live). The `manta` command
 * is built on these calls (and on actor.h, gang.h and pg.h for one actor,
 * gang or group by id).
 *
 *     mt_connect_opts o;
 *     mt_cluster_status *st;
 *
 *     mt_connect_opts_init(&o);
 *     o.flags = MT_CONNECT_ONESHOT;      // no store, no event stream
 *     mt_client_connect(NULL, &o, &c);
 *     if (mt_cluster_status_get(c, &st) == 0) {
 *         for (size_t i = 0; i < st->n_nodes; i++)
 *             printf("%s %s\n", st->nodes[i].node_id,
 *                    st->nodes[i].alive ? "ALIVE" : "DEAD");
 *         mt_cluster_status_free(st);
 *     }
 *
 * Results the library allocates (status, listings, JSON text) are
 * documented structs you read and then free with their free function;
 * every string in them is valid until then. New fields are only ever
 * appended, so the structs stay compatible.
 *
 * JSON: mt_cluster_status_json() returns exactly what the head's
 * dashboard serves at /api/cluster_status (one writer for both), and
 * mt_list_json() what `manta list --format json` prints.
 *
 * THREAD: every function is thread-safe; a watch is used by one thread at
 * a time.
 */
#ifndef MANTA_ADMIN_H
#define MANTA_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manta/client.h"
#include "manta/object.h"
#include "manta/task.h"
#include "manta/actor.h"
#include "manta/pg.h"
#include "manta/gang.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- cluster status ------------------------------------------------------ */

/* A resource amount: "CPU" 4, "GPU" 0.5, "memory" in bytes. */
typedef struct mt_resource {
    const char *name;
    double amount;
} mt_resource;

/* A label of a node. */
typedef struct mt_label {
    const char *key;
    const char *value;
} mt_label;

/* One GPU of a node, as its worker's monitor sees it. */
typedef struct mt_gpu_info {
    int index;                  /* NVML index; -1 for a MIG instance */
    const char *id;             /* as tasks name it (CUDA_VISIBLE_DEVICES) */
    const char *name;           /* "NVIDIA H200" */
    const char *uuid;
    int64_t memory_used_bytes;  /* -1: unknown */
    int64_t memory_total_bytes; /* -1: unknown */
    int utilization_percent;    /* -1: unknown */
} mt_gpu_info;

/* One node. Resources: what it offers (total) and what is free now. */
typedef struct mt_node_info {
    const char *node_id;
    bool alive;                 /* false: DEAD (see death_reason) */
    const char *address;        /* its worker, host:port */
    const char *node_ip;
    const char *hostname;
    const char *temp_dir;       /* its session dir on that host */
    const mt_resource *total;
    size_t n_total;
    const mt_resource *available;
    size_t n_available;
    const mt_label *labels;
    size_t n_labels;
    bool has_usage;             /* the host figures below are known */
    double cpu_percent;
    uint64_t mem_used_bytes;
    uint64_t mem_total_bytes;
    const mt_gpu_info *gpus;
    size_t n_gpus;
    uint32_t pid;               /* its worker's */
    int64_t start_time_ms;      /* wall clock */
    int64_t last_report_ms;
    int64_t death_time_ms;      /* DEAD: when */
    const char *death_reason;   /* DEAD: why */
    /* Its object store, as its worker last reported it (with has_usage;
     * all 0 from a worker that does not report them). */
    uint64_t store_used_bytes;  /* allocated in its shared memory */
    uint64_t store_capacity_bytes;
    uint64_t store_objects;     /* objects it holds, spilled included */
    uint64_t store_spilled_bytes_total; /* since the worker started */
} mt_node_info;

/* Where the head keeps its state, and how that is going. */
typedef struct mt_storage_info {
    const char *backend;        /* "memory", "file", "redis" */
    const char *spec;           /* as given, any password shown as *** */
    bool healthy;               /* writes reach the store */
    uint64_t writes;            /* puts and deletes since the head started */
    uint64_t batches;           /* batches made durable */
    uint64_t buffered;          /* writes not durable yet */
    uint64_t dropped;           /* writes refused: the buffer was full */
    int64_t last_error_ms;      /* wall clock of the last error; 0: none */
    const char *last_error;     /* "" when none */
    int64_t down_since_ms;      /* wall clock since unhealthy; 0: healthy */
} mt_storage_info;

/* The cluster as the head sees it. */
typedef struct mt_cluster_status {
    const char *cluster_id;
    const char *head_address;
    const char *head_version;
    int64_t head_start_time_ms;
    const mt_node_info *nodes;  /* alive and dead */
    size_t n_nodes;
    const mt_resource *total;   /* over live nodes */
    size_t n_total;
    const mt_resource *available;
    size_t n_available;
    const char *const *demands; /* pending demand, one line per shape, e.g.
                                   "{CPU: 1}: 385+ pending tasks/actors";
                                   infeasible shapes say so */
    size_t n_demands;
    uint64_t pending_tasks;
    uint64_t running_tasks;
    const mt_storage_info *storage; /* NULL from a head that does not say */
} mt_cluster_status;

/*
 * mt_cluster_status_get - ask the head for the cluster's status.
 * OUT out  returns owned status, free with mt_cluster_status_free()
 * RET 0, -MT_EUNAVAIL / -MT_ETIMEDOUT (head not answering), -MT_ECLOSED,
 *     -MT_ENOMEM
 */
MT_EXTERN int mt_cluster_status_get(mt_client_t *c, mt_cluster_status **out);

/* mt_cluster_status_free - free a status. NULL ok. */
MT_EXTERN void mt_cluster_status_free(mt_cluster_status *st);

/*
 * mt_cluster_status_json - the status as one JSON object and a newline,
 * exactly as the dashboard serves /api/cluster_status.
 * OUT json  returns owned text, free with mt_free()
 * RET as mt_cluster_status_get
 */
MT_EXTERN int mt_cluster_status_json(mt_client_t *c, char **json);

/* ---- listings ------------------------------------------------------------ */

/* What to list. Values are stable. */
typedef enum mt_list_kind {
    MT_LIST_NODES = 1,
    MT_LIST_TASKS = 2,
    MT_LIST_ACTORS = 3,
    MT_LIST_PLACEMENT_GROUPS = 4,
    MT_LIST_OBJECTS = 5,
    MT_LIST_GANGS = 6,
} mt_list_kind;

/*
 * Which entries to list; initialize with mt_list_filter_init(). The
 * library reads only the first `size` bytes. A filter a kind does not
 * have fails with -MT_EINVAL.
 */
typedef struct mt_list_filter {
    uint32_t size;              /* sizeof(mt_list_filter); set by _init */
    uint32_t limit;             /* at most this many, newest first; 0: 100 */
    const char *state;          /* by state name, as the *_state_name()
                                   functions spell it ("RUNNING", "ALIVE",
                                   "CREATED", "READY", ...; any case);
                                   NULL: any. Every kind */
    const char *node_id;        /* nodes: that one; tasks: runs or ran
                                   there; objects: holds a copy; NULL: any */
    const char *name;           /* tasks, actors: exactly this name */
    int show_env;               /* tasks: list command tasks' env too
                                   (often secrets; left out otherwise) */
    uint32_t offset;            /* skip this many matches first (paging;
                                   total still counts every match) */
    const char *owner_id;       /* tasks: submitted by this driver session
                                   (where the head knows it); NULL: any */
} mt_list_filter;

/* mt_list_filter_init - no filter, the default limit. */
MT_EXTERN void mt_list_filter_init(mt_list_filter *f);

/* A task as listed. */
typedef struct mt_task_info {
    const char *task_id;
    const char *name;           /* "" when none */
    mt_task_state state;
    const char *node_id;        /* where it runs or ran; "" */
    uint32_t attempt;           /* 0 for the first run */
    int exit_code;              /* FINISHED: the program's */
    const char *error;          /* FAILED / CANCELLED: why; or a note */
    const char *function;       /* a function task's "lib.so:fn"; "" */
    const char *const *argv;    /* a command task's program and args */
    size_t argc;
    const mt_resource *resources;
    size_t n_resources;
    int32_t priority;
    int32_t max_retries;
    const char *gang_id;        /* a gang member: its gang; "" */
    uint32_t gang_rank;
    int64_t submit_time_ms;     /* wall clock; 0 when not yet */
    int64_t start_time_ms;
    int64_t end_time_ms;
    const mt_label *env;        /* a command task's extra env: only with
                                   mt_list_filter.show_env */
    size_t n_env;
} mt_task_info;

/* A placement group as listed. */
typedef struct mt_pg_info {
    const char *pg_id;
    const char *name;
    mt_pg_state state;
    mt_pg_strategy strategy;
    size_t n_bundles;
    const mt_resource *const *bundles; /* bundle i: bundle_sizes[i] */
    const size_t *bundle_sizes;
    const char *const *bundle_nodes;   /* per bundle once placed; "" */
    size_t n_bundle_nodes;
    const char *error;          /* why it waits, e.g. "infeasible: ..." */
    int64_t create_time_ms;
} mt_pg_info;

/* An entry of the head's object directory. */
typedef struct mt_object_entry {
    mt_object_id id;
    mt_object_state state;
    uint64_t size;              /* bytes */
    bool is_inline;             /* the head keeps the value itself */
    uint32_t ref_count;
    const char *const *node_ids; /* nodes whose store holds a copy */
    size_t n_node_ids;
    const char *owner;          /* "task ID" or "put NODE" */
    const char *error;          /* LOST / FAILED: why */
} mt_object_entry;

/*
 * A listing: total matches at the head, and the first n of them, newest
 * first (nodes: in the head's order), in the array of its kind (the
 * others are NULL).
 */
typedef struct mt_listing {
    mt_list_kind kind;
    uint64_t total;             /* entries that match (may exceed n) */
    size_t n;
    const mt_node_info *nodes;
    const mt_task_info *tasks;
    const mt_actor_info *actors;
    const mt_pg_info *pgs;
    const mt_object_entry *objects;
    const mt_gang_detail *gangs;
} mt_listing;

/*
 * mt_list - list what the head knows of one kind.
 * IN  f    NULL for no filter
 * OUT out  returns owned listing, free with mt_listing_free()
 * RET 0, -MT_EINVAL (bad kind, filter or state name: the last error says
 *     which), -MT_EUNAVAIL / -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_list(mt_client_t *c, mt_list_kind kind,
                      const mt_list_filter *f, mt_listing **out);

/* mt_listing_free - free a listing. NULL ok. */
MT_EXTERN void mt_listing_free(mt_listing *l);

/*
 * mt_list_json - the same listing as one JSON object
 * {"total": N, "<kind>": [...]} and a newline, as `manta list --format
 * json` prints it.
 * OUT json  returns owned text, free with mt_free()
 * RET as mt_list
 */
MT_EXTERN int mt_list_json(mt_client_t *c, mt_list_kind kind,
                           const mt_list_filter *f, char **json);

/* ---- tasks by id --------------------------------------------------------- */

/*
 * Ids say what they name: the head writes a task id as 't' and 15 hex
 * digits, an actor id 'a...', a placement group id 'p...', a gang id
 * 'g...'; object ids are 40 hex digits. Every call that takes an id
 * refuses one of another kind with -MT_EINVAL and the last error "ID is a
 * placement group id, not a task id"; an id of no kind goes to the head,
 * which says it does not know it (-MT_ENOENT).
 */

/*
 * mt_task_cancel_id - mt_task_cancel() for any task, by id.
 * OUT state  NULL, or the task's state right after the request
 * RET 0, -MT_ENOENT (the head does not know it; the last error is the
 *     head's "NOT_FOUND: ..."), -MT_EINVAL (also: another kind's id),
 *     -MT_EUNAVAIL, -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_task_cancel_id(mt_client_t *c, const char *task_id,
                                bool force, mt_task_state *state);

/*
 * Following tasks by id: a watch gets each task's state changes and, when
 * asked, its output, live. A task followed late starts from the head's
 * current state and the output the head kept (its last 1 MiB). Each task
 * costs one stream to the head while followed.
 *
 *     mt_watch_t *w;
 *     const mt_watch_event *ev;
 *
 *     mt_watch_open(c, &id, 1, MT_WATCH_OUTPUT, &w);
 *     while (mt_watch_next(w, -1, &ev) == 0) {
 *         if (ev->kind == MT_WATCH_EVENT_OUTPUT)
 *             write(ev->fd, ev->data, ev->len);
 *     }                                // -MT_ENOENT: every task ended
 *     mt_watch_close(w);
 */
typedef struct mt_watch mt_watch_t;

#define MT_WATCH_OUTPUT 0x1u  /* also the tasks' stdout and stderr */

typedef enum mt_watch_event_kind {
    MT_WATCH_EVENT_STATE = 1,   /* the task's state or attempt changed,
                                   or the head has a note on it */
    MT_WATCH_EVENT_OUTPUT = 2,  /* a piece of its output */
    MT_WATCH_EVENT_END = 3,     /* the last event of a task */
} mt_watch_event_kind;

/* One event. Every pointer is valid until the next mt_watch_next() or
 * mt_watch_close() on the watch. */
typedef struct mt_watch_event {
    mt_watch_event_kind kind;
    const char *task_id;
    /* STATE: */
    mt_task_state state;
    uint32_t attempt;
    const char *node_id;        /* "" when not placed */
    const char *error;          /* final: why it failed; else a note
                                   ("infeasible: ...") or "" */
    int exit_code;              /* FINISHED: the program's */
    const uint8_t *result;      /* FINISHED function task: its value */
    size_t result_len;
    bool result_in_store;       /* FINISHED: its result is the object
                                   mt_task_result_id() names */
    uint64_t result_size;
    /* OUTPUT: */
    int fd;                     /* 1 stdout, 2 stderr */
    const uint8_t *data;
    size_t len;
    /* END: */
    int lost;                   /* 0: it ended (its final STATE came
                                   first); else why the watch lost it
                                   (-MT_EUNAVAIL, ...), said by error */
} mt_watch_event;

/*
 * mt_watch_open - follow n tasks by id (n may be 0: add them later).
 * IN  flags  0 or MT_WATCH_OUTPUT
 * OUT out    returns owned watch, free with mt_watch_close()
 * RET 0, -MT_EINVAL (also: an id of another kind than a task's),
 *     -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_watch_open(mt_client_t *c, const char *const *task_ids,
                            size_t n, unsigned flags, mt_watch_t **out);

/* mt_watch_add - follow one more task. RET 0, -MT_EINVAL, -MT_ECLOSED,
 * -MT_ENOMEM. */
MT_EXTERN int mt_watch_add(mt_watch_t *w, const char *task_id);

/*
 * mt_watch_next - the next event, waiting up to timeout_ms (< 0: forever;
 * 0: just look). A task's events come in order, ending with one END; an
 * unknown task ends at once (lost, "NOT_FOUND: ...").
 * OUT ev  the event, valid until the next call on w
 * RET 0, -MT_ETIMEDOUT (none yet), -MT_ENOENT (every task followed has
 *     ended and its events were taken)
 */
MT_EXTERN int mt_watch_next(mt_watch_t *w, int timeout_ms,
                            const mt_watch_event **ev);

/* mt_watch_close - stop following and free the watch. Close it before
 * disconnecting its client. OWNERSHIP invalidates w; NULL ok. */
MT_EXTERN void mt_watch_close(mt_watch_t *w);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_ADMIN_H */
