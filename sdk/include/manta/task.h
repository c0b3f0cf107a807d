/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/task.h -- command tasks: run a program somewhere on the cluster.
 *
 * A command task is argv plus options (resources, label selector, priority,
 * retries, name, environment, working directory, strategy). The head picks
 * a node, its worker runs the program, and the client follows the task from
 * submission to its end, keeping the last bytes of its stdout and stderr
 * (1 MiB of each by default). Like Ray, a task takes 1 CPU unless its
 * options say otherwise; a worker that dies mid-task gets it rerun up to
 * max_retries times (default 3).
 *
 *     mt_task_opts_t *o;
 *     mt_task_t *t;
 *     mt_task_result r;
 *     const char *argv[] = {"sh", "-c", "nvidia-smi -L", NULL};
 *
 *     mt_task_opts_create(&o);
 *     mt_task_opts_set_resource(o, "GPU", 1.0);
 *     mt_submit_command(client, argv, o, &t);
 *     mt_task_opts_destroy(o);
 *     mt_task_result_init(&r);
 *     if (mt_task_wait(client, t, 60000, &r) == 0 && r.exit_code == 0)
 *         fwrite(r.out, 1, r.out_len, stdout);
 *     mt_task_result_release(&r);
 *     mt_task_release(t);
 *
 * THREAD: every function is thread-safe, except that one mt_task_opts_t
 * must not be changed by two threads at once.
 */
#ifndef MANTA_TASK_H
#define MANTA_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "manta/client.h"
#include "manta/object.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A submitted task. Opaque; reference counted between you and the client. */
typedef struct mt_task mt_task_t;

/* Options for a task. Opaque: build with the setters below. */
typedef struct mt_task_opts mt_task_opts_t;

/* Where a task is in its life. Values are stable. */
typedef enum mt_task_state {
    MT_TASK_STATE_UNKNOWN = 0,   /* not heard from the head yet */
    MT_TASK_STATE_WAITING_FOR_ARGS = 1, /* its object arguments are not
                                           ready (function tasks, later) */
    MT_TASK_STATE_PENDING = 2,   /* waiting for a node with room */
    MT_TASK_STATE_SCHEDULED = 3, /* placed, being started */
    MT_TASK_STATE_RUNNING = 4,
    MT_TASK_STATE_FINISHED = 5,  /* ran to the end: see exit_code */
    MT_TASK_STATE_FAILED = 6,    /* could not run or finish: see error */
    MT_TASK_STATE_CANCELLED = 7,
} mt_task_state;

/*
 * Label selector operators (Kubernetes style). Inside the Manta tree the
 * SDK's sources include common/selector.h first, which defines the same
 * enum; the SDK's unit tests check that both agree.
 */
#ifndef MT_SELECTOR_H
enum mt_label_op {
    MT_LABEL_EQ = 0,         /* key equals values[0] */
    MT_LABEL_NE = 1,         /* key differs from values[0], or is absent */
    MT_LABEL_IN = 2,         /* key equals one of values */
    MT_LABEL_NOT_IN = 3,     /* key equals none of values */
    MT_LABEL_EXISTS = 4,     /* key is present (no values) */
    MT_LABEL_NOT_EXISTS = 5, /* key is absent (no values) */
};
#endif
typedef enum mt_label_op mt_label_op;

/* Scheduling strategies. */
typedef enum mt_strategy {
    MT_STRATEGY_DEFAULT = 0, /* pack onto busy nodes, then spread */
    MT_STRATEGY_SPREAD = 1,  /* spread over nodes */
} mt_strategy;

/* Limits the head enforces, checked when options are set. */
#define MT_TASK_MAX_RESOURCES 8    /* kinds of resources in one task */
#define MT_TASK_MAX_LABEL_MATCHES 8 /* expressions in one selector */
#define MT_TASK_MAX_LABEL_VALUES 8 /* values in one expression */
#define MT_TASK_OUTPUT_DEFAULT (1u << 20) /* bytes kept per stream */

/* ---- options ------------------------------------------------------------- */

/*
 * mt_task_opts_create - options with every default: 1 CPU, no selector,
 * priority 0, max_retries 3, no name, the worker's environment and working
 * directory, the default strategy, 1 MiB of output kept per stream.
 *
 * OUT out   returns owned options, free with mt_task_opts_destroy()
 * RET 0, -MT_ENOMEM
 */
MT_EXTERN int mt_task_opts_create(mt_task_opts_t **out);

/* mt_task_opts_destroy - free options. OWNERSHIP invalidates o; NULL ok. */
MT_EXTERN void mt_task_opts_destroy(mt_task_opts_t *o);

/*
 * mt_task_opts_set_resource - require amount of a resource.
 *
 * Amounts have a precision of 0.0001. GPU and TPU above 1 must be whole
 * numbers; TPU must be 1, 2, 4 or 8. An amount of 0 removes a default
 * (e.g. "CPU", 0 for a task that needs no CPU). Setting a name again
 * replaces its amount.
 *
 * IN  name    up to 128 of A-Z a-z 0-9 . _ - / : (borrowed)
 * RET 0, -MT_EINVAL (bad name or amount), -MT_ERANGE (more than
 *     MT_TASK_MAX_RESOURCES kinds), -MT_ENOMEM
 */
MT_EXTERN int mt_task_opts_set_resource(mt_task_opts_t *o, const char *name,
                                        double amount);

/*
 * mt_task_opts_add_label_match - run only on nodes whose labels match; all
 * expressions added must hold.
 *
 * IN  key       label key (borrowed)
 * IN  values    n values (borrowed; copied): 1 for EQ/NE, 1..8 for
 *               IN/NOT_IN, none (n 0) for EXISTS/NOT_EXISTS
 * RET 0, -MT_EINVAL, -MT_ERANGE (too many expressions), -MT_ENOMEM
 */
MT_EXTERN int mt_task_opts_add_label_match(mt_task_opts_t *o, const char *key,
                                           mt_label_op op,
                                           const char *const *values,
                                           size_t n);

/*
 * mt_task_opts_set_label_selector - replace the selector with the one in
 * text, the form `manta submit --label-selector` takes: comma-separated
 * expressions that must all hold,
 *   key=v  key!=v  key in (a|b)  key notin (a|b)  key  !key
 * (`key=a|b` and `key!=a|b` are short for in / notin). NULL clears it.
 * The rules of mt_task_opts_add_label_match() apply to each expression.
 * RET 0, -MT_EINVAL (the last error says what is wrong with the text),
 *     -MT_ENOMEM; o is unchanged on failure
 */
MT_EXTERN int mt_task_opts_set_label_selector(mt_task_opts_t *o,
                                              const char *text);

/* mt_task_opts_set_priority - higher runs first (default 0). RET 0. */
MT_EXTERN int mt_task_opts_set_priority(mt_task_opts_t *o, int32_t priority);

/*
 * mt_task_opts_set_max_retries - reruns when the worker running the task
 * dies: 0 for none, -1 for the head's default (3). RET 0, -MT_EINVAL.
 */
MT_EXTERN int mt_task_opts_set_max_retries(mt_task_opts_t *o, int retries);

/* mt_task_opts_set_name - a name shown by `manta list tasks` (copied; NULL
 * clears). RET 0, -MT_EINVAL (over 4096 bytes), -MT_ENOMEM. */
MT_EXTERN int mt_task_opts_set_name(mt_task_opts_t *o, const char *name);

/*
 * mt_task_opts_set_env - add or replace an environment variable of the
 * program (copied). RET 0, -MT_EINVAL (empty key or '=' in it), -MT_ENOMEM.
 */
MT_EXTERN int mt_task_opts_set_env(mt_task_opts_t *o, const char *key,
                                   const char *value);

/*
 * mt_task_opts_unset_env - remove an environment variable from the
 * program's environment (the name is copied; a repeat is a no-op). The
 * worker applies, in order: its own environment, the env set with
 * mt_task_opts_set_env, these unsets, the accelerator env of the grant,
 * then MANTA_* -- so an unset wins over a set of the same name, and the
 * grant's CUDA_VISIBLE_DEVICES / TPU_* win over both.
 * RET 0, -MT_EINVAL (empty name, '=' in it, over 4096 bytes), -MT_ENOMEM.
 */
MT_EXTERN int mt_task_opts_unset_env(mt_task_opts_t *o, const char *key);

/* mt_task_opts_set_cwd - working directory on the node (copied; NULL: the
 * worker's; a relative dir is taken from the caller's working directory,
 * as `manta submit --cwd` does). RET 0, -MT_EINVAL, -MT_ENOMEM, -errno. */
MT_EXTERN int mt_task_opts_set_cwd(mt_task_opts_t *o, const char *dir);

/* mt_task_opts_set_strategy - MT_STRATEGY_*. RET 0, -MT_EINVAL. */
MT_EXTERN int mt_task_opts_set_strategy(mt_task_opts_t *o,
                                        mt_strategy strategy);

/*
 * mt_task_opts_set_node_affinity - run on the node node_id (copied; the id
 * `manta list nodes` shows). Hard (soft false): only there; a task whose
 * node is not alive when it is queued (or re-queued by a retry) fails.
 * Soft: prefer that node, and run elsewhere when it cannot take the task
 * now or is gone. It replaces a strategy set before (and is replaced by a
 * later one); a placement group wins over both. NULL: the default strategy.
 * RET 0, -MT_EINVAL (longer than 4096 bytes), -MT_ENOMEM.
 */
MT_EXTERN int mt_task_opts_set_node_affinity(mt_task_opts_t *o,
                                             const char *node_id, bool soft);

/*
 * mt_task_opts_set_output_limit - bytes of stdout and of stderr to keep
 * (the last ones); 0 keeps none and does not fetch output at all.
 * RET 0, -MT_EINVAL (over 64 MiB).
 */
MT_EXTERN int mt_task_opts_set_output_limit(mt_task_opts_t *o, size_t bytes);

/*
 * mt_task_opts_set_follow - with false, the client does not follow the
 * task: the submit waits for the head's id (it is never batched), the
 * handle gives mt_task_id() and mt_task_cancel(), and mt_task_wait() /
 * mt_wait_tasks() fail with -MT_ESTATE; a function task's result is not
 * held for you. For tools that print the id, or follow the task's events
 * themselves (mt_watch_open(), manta/admin.h). Default true. RET 0.
 */
MT_EXTERN int mt_task_opts_set_follow(mt_task_opts_t *o, bool follow);

/*
 * mt_task_opts_add_code_path - a folder where the workers look for a
 * function task's library (absolute paths; the folder must exist on the
 * worker's node). Up to 64.
 * RET 0, -MT_EINVAL, -MT_ENOMEM
 */
MT_EXTERN int mt_task_opts_add_code_path(mt_task_opts_t *o, const char *dir);

/* ---- submitting and following -------------------------------------------- */

/*
 * mt_submit_command - run argv[0] with its arguments as a task.
 *
 * Submits are batched: while the client's event stream to the head is up
 * (the normal case), this returns as soon as the task is queued, without
 * waiting for the head; tasks queued meanwhile go to the head together.
 * A spec the head refuses then ends the task FAILED with the head's
 * reason, and a head that cannot be reached ends it lost (-MT_EUNAVAIL
 * from mt_task_wait). Without the stream (MT_CONNECT_NO_BATCH, or after
 * it broke) each submit waits for the head and its errors come back here.
 *
 * IN  argv   program and arguments, NULL-terminated (borrowed; copied)
 * IN  opts   NULL for defaults (borrowed; may be reused or destroyed at
 *            once)
 * OUT out    returns owned task, free with mt_task_release()
 * RET 0, -MT_EINVAL (empty argv, or the head refused the spec),
 *     -MT_EUNAVAIL / -MT_ETIMEDOUT (head not answering), -MT_ECLOSED,
 *     -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_submit_command(mt_client_t *c, const char *const *argv,
                                const mt_task_opts_t *opts, mt_task_t **out);

/*
 * mt_submit_function - run a C function task: function "libfoo.so:fn" (or
 * a bare registered name) defined with MT_FUNCTION (manta/function.h),
 * found in the library as given or in the opts' code path folders, called
 * by an executor with the arguments. Its result comes back in
 * mt_task_result.value.
 *
 * IN  args, sizes  nargs byte strings (borrowed; copied); 16 MiB in all
 * IN  opts         NULL for defaults; see mt_task_opts_add_code_path()
 * OUT out          returns owned task, free with mt_task_release()
 * RET as mt_submit_command
 * THREAD any
 */
MT_EXTERN int mt_submit_function(mt_client_t *c, const char *function,
                                 const void *const *args, const size_t *sizes,
                                 size_t nargs, const mt_task_opts_t *opts,
                                 mt_task_t **out);

/* One argument of a function task: bytes by value, or an object by
 * reference. Build with mt_arg_value() / mt_arg_ref(). */
typedef enum mt_arg_kind {
    MT_ARG_VALUE = 0,          /* data, size: copied into the request */
    MT_ARG_REF = 1,            /* ref: an object id (a put or a task result) */
} mt_arg_kind;

typedef struct mt_arg {
    mt_arg_kind kind;
    const void *data;          /* VALUE: borrowed; NULL when size is 0 */
    size_t size;
    mt_object_id ref;          /* REF */
} mt_arg;

/* mt_arg_value - an argument of size bytes at data (borrowed). */
static inline mt_arg mt_arg_value(const void *data, size_t size)
{
    mt_arg a;

    memset(&a, 0, sizeof(a));
    a.kind = MT_ARG_VALUE;
    a.data = data;
    a.size = size;
    return a;
}

/* mt_arg_ref - an argument that is the object id (copied). */
static inline mt_arg mt_arg_ref(const mt_object_id *id)
{
    mt_arg a;

    memset(&a, 0, sizeof(a));
    a.kind = MT_ARG_REF;
    a.ref = *id;
    return a;
}

/*
 * mt_submit_function_args - mt_submit_function with arguments by value or
 * by reference. The head keeps the task WAITING_FOR_ARGS until every
 * referenced object exists (a task result waits for its task); it fails
 * with "dependency failed: ..." when a producing task failed. The worker
 * gets each referenced object onto its node (pulling it from another node
 * if needed) and the function sees it as an ordinary argument mapped
 * zero-copy from the store. The task holds a reference on each object
 * until it ends, so you may release yours right after submitting.
 *
 * IN  args    nargs arguments (borrowed; values copied); values 16 MiB in
 *             all, objects any size
 * OUT out     returns owned task, free with mt_task_release()
 * RET as mt_submit_command. A referenced object unknown to the head (never
 *     put, or already released) refuses the task: -MT_ENOENT here on the
 *     one-by-one path, or, when submits are batched, the task ends FAILED
 *     with "the head refused the task: ... unknown to the head ..."
 * THREAD any
 */
MT_EXTERN int mt_submit_function_args(mt_client_t *c, const char *function,
                                      const mt_arg *args, size_t nargs,
                                      const mt_task_opts_t *opts,
                                      mt_task_t **out);

/*
 * mt_task_result_ref - the id of a function task's result object: pass it
 * to later tasks (mt_arg_ref) or read it with mt_get() (results over
 * 100 KiB are only there: mt_task_result.value stays empty for them).
 * The reference is yours while you hold t: release t only after
 * submitting the tasks that use it (they hold their own).
 *
 * RET 0, -MT_EINVAL (not a function task of this SDK)
 * THREAD any
 */
MT_EXTERN int mt_task_result_ref(const mt_task_t *t, mt_object_id *out);

/*
 * mt_task_id - the head's id of the task ('t' and 15 hex digits; a direct
 * actor call (manta/actor.h) has the local id "ACTOR.CALLER.SEQ"). A
 * batched task learns it from the head's answer, so this may wait for it
 * (at most the client's rpc timeout).
 *
 * RET borrowed, valid until mt_task_release(t); "" when the task never
 *     reached the head
 * THREAD any
 */
MT_EXTERN const char *mt_task_id(const mt_task_t *t);

/*
 * mt_task_state_name - "PENDING", "RUNNING", ... for a state.
 *
 * RET a static string
 */
MT_EXTERN const char *mt_task_state_name(mt_task_state s);

/*
 * The outcome of a task, filled by mt_task_wait(). Initialize with
 * mt_task_result_init(); the library writes only the first `size` bytes.
 * The byte buffers are NUL-terminated for convenience (not counted in the
 * lengths).
 */
typedef struct mt_task_result {
    uint32_t size;         /* sizeof(mt_task_result); set by _init */
    mt_task_state state;   /* the last state seen */
    int exit_code;         /* FINISHED: the program's status; 128+N for
                              signal N; -1 otherwise */
    uint32_t attempt;      /* 0 for the first run */
    char *error;           /* FAILED / CANCELLED: why; "" otherwise */
    char *node_id;         /* where it ran; "" if it never did */
    uint8_t *out;          /* last bytes of stdout */
    size_t out_len;
    uint8_t *err;          /* last bytes of stderr */
    size_t err_len;
    uint64_t out_dropped;  /* earlier stdout bytes not kept */
    uint64_t err_dropped;  /* earlier stderr bytes not kept */
    uint8_t *value;        /* FINISHED function task: its result when at
                              most 100 KiB (bigger ones are objects: see
                              mt_task_result_ref()); empty for commands */
    size_t value_len;
} mt_task_result;

/* mt_task_result_init - zero r and set r->size. THREAD any. */
MT_EXTERN void mt_task_result_init(mt_task_result *r);

/*
 * mt_task_result_release - free what mt_task_wait() put in r and zero it
 * again (r->size is kept), so r can be reused.
 */
MT_EXTERN void mt_task_result_release(mt_task_result *r);

/*
 * mt_task_wait - wait until a task ends, then describe how.
 *
 * IN  timeout_ms  0: do not wait; < 0: wait forever
 * OUT res         NULL, or a result set up with mt_task_result_init()
 *                 (whatever it still holds is released first). Filled
 *                 whenever the call returns 0, -MT_ETASKFAILED,
 *                 -MT_EACTORDIED,
 *                 -MT_ECANCELED or -MT_EUNAVAIL; on a timeout only
 *                 res->state is set. Free with mt_task_result_release()
 * RET 0 (FINISHED: check res->exit_code), -MT_EACTORDIED (FAILED actor
 *     call whose actor died: see res->error), -MT_ETASKFAILED (FAILED: see
 *     res->error), -MT_ECANCELED (CANCELLED), -MT_ETIMEDOUT (still
 *     running), -MT_EUNAVAIL (lost track of it: the head went away),
 *     -MT_ECLOSED (the client was disconnected), -MT_ENOMEM
 * THREAD any; several threads may wait for one task
 */
MT_EXTERN int mt_task_wait(mt_client_t *c, mt_task_t *t, int timeout_ms,
                           mt_task_result *res);

/*
 * mt_wait_tasks - wait until num_ready of n tasks have ended (1 for "any",
 * n for "all"), or the timeout passes.
 *
 * IN  tasks       n tasks of this client (borrowed)
 * IN  timeout_ms  0: just look; < 0: wait forever
 * OUT ready       NULL, or n flags: ready[i] set when tasks[i] has ended
 *                 (or its client lost track of it)
 * RET the number of ended tasks (may be below num_ready after a timeout),
 *     -MT_EINVAL (num_ready > n, NULL task, a task of another client)
 * THREAD any
 */
MT_EXTERN int mt_wait_tasks(mt_client_t *c, mt_task_t *const *tasks, size_t n,
                            size_t num_ready, int timeout_ms, bool *ready);

/*
 * mt_task_cancel - ask the head to cancel a task. A pending task ends at
 * once; a running one gets SIGTERM (SIGKILL with force). Wait for the task
 * to see it end as CANCELLED (or FINISHED/FAILED if it won the race).
 *
 * RET 0, -MT_ENOENT (the head does not know it), -MT_EUNAVAIL,
 *     -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_task_cancel(mt_client_t *c, mt_task_t *t, bool force);

/*
 * mt_task_release - drop your reference. The task itself goes on running.
 * A function task's result object loses your reference too (it is freed
 * once no later task uses it); after mt_client_disconnect() the head
 * keeps it.
 * OWNERSHIP invalidates t; NULL ok. Works after mt_client_disconnect().
 */
MT_EXTERN void mt_task_release(mt_task_t *t);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_TASK_H */
