/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.h -- command and function tasks on a worker: validating what the
 * head asks to run, starting the program in its own process group (or
 * handing the function to an executor), capturing its output and reporting
 * state, output and results back to the head.
 *
 * Life of a task (tasks.c):
 *   RunTask accepted --uv_spawn--> running: RUNNING queued for the head,
 *   stdout/stderr read into a bounded output buffer (and the per-task log)
 *   --process exited, both pipes at EOF, every handle closed--> done: the
 *   final update (FINISHED with the exit status, 128+N for signal N, or
 *   FAILED when the program could not start) is queued behind the output
 *   --head acknowledged the final update--> freed.
 *
 * Function tasks (kind FUNCTION) take the same path with the executor pool
 * (executors.h) in place of uv_spawn: RUNNING once an executor has the
 * task, the function's output relayed like a program's, then FINISHED with
 * the result bytes, or FAILED with the function's error (system_failure
 * set when the executor died, so the head may retry).
 *
 * Reports (see "reporting" in tasks.c): one ReportTasks call in flight per
 * worker; output is batched for up to 50 ms or until 256 KiB are buffered,
 * state changes go at once; a failed call puts its updates back in front
 * and is retried with backoff, so nothing but excess output is ever lost.
 *
 * The first half of this header is pure helpers (no loop, no I/O) tested
 * by tests/unit/worker/test_tasks.c; the second half is the worker glue.
 *
 * THREAD: everything runs on the worker's loop thread.
 */
#ifndef MT_WORKER_TASKS_H
#define MT_WORKER_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "common/qty.h"

struct mt_worker;

#define MT_RUN_ID_MAX 64             /* task ids: 1-64 of [A-Za-z0-9_-] */
#define MT_RUN_MAX_ARGS 4096
#define MT_RUN_MAX_ENV 4096          /* spec and request env together */
#define MT_RUN_MAX_BYTES (1u << 20)  /* argv bytes; env bytes (each) */
#define MT_RUN_MAX_CWD 4096
#define MT_OUTPUT_LIMIT (8u << 20)   /* output buffered per task */

/* ---- what to run --------------------------------------------------------- */

enum mt_run_kind {
    MT_RUN_KIND_UNSPECIFIED = 0,
    MT_RUN_KIND_COMMAND = 1,
    MT_RUN_KIND_FUNCTION = 2,
    MT_RUN_KIND_ACTOR_CREATE = 3, /* a factory, in an executor of its own */
    MT_RUN_KIND_ACTOR_METHOD = 4, /* a call on a hosted actor (actors.h) */
};

/* An argument of a function task. */
struct mt_run_arg {
    uint8_t *data;
    size_t size;
};

/* A function argument passed by reference (RunTaskRequest.object_args). */
#define MT_RUN_MAX_HOLDERS 8
struct mt_run_ref {
    uint32_t index;              /* which argument */
    mt_object_id id;
    uint64_t size;
    bool is_inline;              /* small: the value came with the request */
    uint8_t *data;               /* is_inline: size bytes (owned) */
    char *holders[MT_RUN_MAX_HOLDERS]; /* worker addresses (owned) */
    size_t n_holders;
};

/* A RunTask request as plain C. Every pointer is owned by the spec. */
struct mt_run_spec {
    char *task_id;
    uint32_t attempt;
    enum mt_run_kind kind;
    char **argv;                 /* argc entries plus a NULL */
    size_t argc;
    struct mt_kv_list env;       /* the spec's environment */
    struct mt_kv_list env_unset; /* the spec's unsets: values all NULL */
    struct mt_kv_list accel_env; /* the request's (accelerator) environment */
    struct mt_kv_list accel_unset; /* the request's unsets: values NULL */
    char *cwd;                   /* NULL or "": the worker's */
    char *function;              /* FUNCTION: "lib.so:fn" or "fn" */
    char **code_path;            /* FUNCTION: n_code_path folders */
    size_t n_code_path;
    struct mt_run_arg *args;     /* FUNCTION: nargs arguments */
    size_t nargs;
    struct mt_run_ref *refs;     /* FUNCTION: arguments by reference */
    size_t nrefs;
    bool hold_result;            /* FUNCTION: big results to the store */
    char *actor_id;              /* ACTOR_METHOD: the actor called */
    uint64_t actor_seq;          /* ACTOR_METHOD: its place in the order */
    uint32_t actor_attempt;      /* ACTOR_METHOD: the actor's incarnation */
};

/* mt_run_spec_release - free what the spec owns and zero it. */
void mt_run_spec_release(struct mt_run_spec *s);

/* mt_run_id_valid - 1-64 characters of [A-Za-z0-9_-] (safe in paths). */
bool mt_run_id_valid(const char *id);

/*
 * mt_run_spec_check - may this spec run here?
 *
 * OUT err  on failure, the reason for the caller (lowercase, one line)
 * RET 0 or -MT_EINVAL
 */
int mt_run_spec_check(const struct mt_run_spec *s, char *err, size_t len);

/*
 * mt_run_env_build - an environment for execve: base (e.g. environ), then
 * each list in order; a later value for a key replaces an earlier one in
 * place, and a NULL value removes the key (an explicit unset: a later
 * list may set it again). Entries of base without '=' are skipped.
 *
 * A task's lists, in order: the spec's env, the spec's unsets, the grant's
 * env, the grant's unsets, the MANTA_* variables.
 *
 * IN  base   NULL-terminated "K=V" strings, borrowed; may be NULL
 * IN  lists  n lists of key/value pairs, borrowed
 * RET returns owned NULL-terminated "K=V" array, free with mt_run_env_free()
 */
char **mt_run_env_build(char *const *base,
                        const struct mt_kv_list *const *lists, size_t n);

/*
 * mt_run_env_overlay - the same merge without a base, for an environment
 * applied on top of another (an executor's): an unset is kept as a bare
 * "K" entry, which the executor removes (exec_proto.h).
 *
 * RET returns owned NULL-terminated array of "K=V" and "K" entries, free
 *     with mt_run_env_free()
 */
char **mt_run_env_overlay(const struct mt_kv_list *const *lists, size_t n);
void mt_run_env_free(char **env);

/* ---- bounded output buffer ----------------------------------------------- */

/*
 * Output of one task in arrival order: data chunks tagged with their fd, and
 * markers standing for bytes dropped at that point. When more than limit
 * data bytes are buffered, the oldest are dropped and a single marker
 * ("[manta: N bytes of output dropped]\n", sent on fd 2) takes their place
 * at the front. Markers do not count towards the limit.
 */
struct mt_outchunk {
    struct mt_outchunk *next;
    uint32_t fd;                /* 1 or 2; 2 for markers */
    uint64_t dropped;           /* > 0: a marker, no data */
    size_t off;                 /* data[off..len) is buffered */
    size_t len;
    size_t cap;
    uint8_t data[];
};

struct mt_outbuf {
    struct mt_outchunk *head;
    struct mt_outchunk *tail;
    size_t bytes;               /* data bytes buffered (markers excluded) */
    size_t limit;               /* 0: no limit */
};

void mt_outbuf_init(struct mt_outbuf *ob, size_t limit);
/* mt_outbuf_release - free every chunk; the buffer is empty after. */
void mt_outbuf_release(struct mt_outbuf *ob);
/* mt_outbuf_empty - nothing buffered, not even a marker. */
bool mt_outbuf_empty(const struct mt_outbuf *ob);

/* mt_outbuf_append - copy n bytes of fd's output in, then enforce the limit. */
void mt_outbuf_append(struct mt_outbuf *ob, uint32_t fd, const void *data,
                      size_t n);

/*
 * mt_outbuf_take - move up to max data bytes (and the markers among them)
 * from the front of ob to the back of into, splitting a chunk if needed.
 * RET data bytes moved
 */
size_t mt_outbuf_take(struct mt_outbuf *ob, size_t max, struct mt_outbuf *into);

/*
 * mt_outbuf_unshift - put everything in front back before ob's contents
 * (a failed send), then enforce ob's limit. front is left empty.
 */
void mt_outbuf_unshift(struct mt_outbuf *ob, struct mt_outbuf *front);

/*
 * mt_outbuf_marker - the text that stands for n dropped bytes.
 * OUT buf  at least 64 bytes
 * RET its length
 */
size_t mt_outbuf_marker(uint64_t n, char *buf, size_t len);

/* ---- reports: what goes to the head in one ReportTasks call -------------- */

enum mt_run_end {
    MT_RUN_END_FINISHED = 1,    /* ran; exit_code is its status */
    MT_RUN_END_FAILED = 2,      /* could not run; error says why */
};

/* What one call carries for one task, in this order: RUNNING if running,
 * then the output in out, then the final update if final. */
struct mt_run_report {
    const char *task_id;        /* borrowed from the task */
    uint32_t attempt;
    bool running;
    struct mt_outbuf out;       /* owned by the batch */
    bool final;
    enum mt_run_end end;
    int32_t exit_code;
    const char *error;          /* borrowed; "" when none */
    const uint8_t *result;      /* FINISHED function task; borrowed */
    size_t result_size;
    bool system_failure;        /* FAILED: the executor died (retryable) */
    uint64_t result_stored;     /* FINISHED: result of this many bytes put
                                   in the store (result empty) */
    bool actor_ready;           /* RUNNING actor creation: factory done */
    uint32_t actor_pid;         /* with actor_ready: the actor's executor */
    struct mt_run *t;           /* private to tasks.c */
};

struct mt_run_batch {
    struct mt_run_report *v;
    size_t n;
    size_t cap;
};

/* ---- worker glue (tasks.c) ----------------------------------------------- */

/* Set up task state for w (w->tasks). */
void mt__worker_tasks_create(struct mt_worker *w);

/*
 * mt__worker_task_admit - may s start now? Validates (mt_run_spec_check)
 * and checks that (task_id, attempt) is not already known here.
 * OUT err  the reason on failure
 * RET 0, -MT_EINVAL, -MT_EEXIST, -MT_ECLOSED (worker stopping)
 */
int mt__worker_task_admit(struct mt_worker *w, const struct mt_run_spec *s,
                          char *err, size_t len);

/*
 * mt__worker_task_start - start an admitted task. Spawn failures are not
 * returned: they are reported to the head as FAILED.
 * OWNERSHIP takes s's contents (s is zeroed)
 */
void mt__worker_task_start(struct mt_worker *w, struct mt_run_spec *s);

/*
 * mt__worker_task_stop - SIGTERM the task's process group and SIGKILL it
 * 5 s later if it still runs; with force, SIGKILL at once. A function
 * task's executor is SIGKILLed at once (the pool replaces it); a function
 * task still waiting for an executor ends at once.
 * RET 0 (signalled) or -MT_ENOENT (unknown here, or already exited)
 */
int mt__worker_task_stop(struct mt_worker *w, const char *task_id,
                         uint32_t attempt, bool force);

/*
 * mt__worker_task_actor_died - the actor that creation task (task_id,
 * attempt) made has died after it was ready: the task ends FAILED with
 * why and system_failure set (the head restarts the actor or buries it).
 * Nothing happens when the task has already ended.
 */
void mt__worker_task_actor_died(struct mt_worker *w, const char *task_id,
                                uint32_t attempt, const char *why);

/* Number of tasks known here (running, or ended and not yet reported). */
size_t mt__worker_tasks_count(const struct mt_worker *w);

/* Shutdown, step 1: SIGKILL every task's process group; report nothing
 * more. */
void mt__worker_tasks_shutdown(struct mt_worker *w);
/* Shutdown, step 2: close every handle; done(arg) runs when all are closed. */
void mt__worker_tasks_close(struct mt_worker *w, void (*done)(void *),
                            void *arg);
/* Free everything; after the rpc engine is gone (no report in flight). */
void mt__worker_tasks_destroy(struct mt_worker *w);

/* Called by rpc_tasks.c when the ReportTasks call for b has ended. */
void mt__worker_tasks_on_reported(struct mt_worker *w, int err,
                                  const char *msg);

/* ---- rpc_tasks.c --------------------------------------------------------- */

/*
 * mt__worker_send_task_report - send b as one ReportTasks call to the head;
 * mt__worker_tasks_on_reported() runs when it ends.
 * OWNERSHIP borrows b (encoded before return)
 * RET 0 or the mt_rpc_unary error (then no callback)
 */
int mt__worker_send_task_report(struct mt_worker *w,
                                const struct mt_run_batch *b);

#endif /* MT_WORKER_TASKS_H */
