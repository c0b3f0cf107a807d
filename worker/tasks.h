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
 * What a run is asked to do is in run_spec.h, its output buffer in
 * outbuf.h (pure helpers); this header is the worker glue.
 *
 * THREAD: everything runs on the worker's loop thread.
 */
#ifndef MT_WORKER_TASKS_H
#define MT_WORKER_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/outbuf.h"
#include "worker/run_spec.h"

struct mt_worker;

#define MT_OUTPUT_LIMIT (8u << 20)   /* output buffered per task */

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
