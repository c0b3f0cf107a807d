/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leases.h -- the leases this worker holds and the tasks their drivers
 * push to them (docs/architecture.md, "Leases: the direct task path").
 *
 * A lease is a run of kind LEASE (tasks.h) the head granted to one owner,
 * a driver's session: it holds its resources here until it ends, and
 * meanwhile its owner pushes FUNCTION tasks to it (WorkerService.PushTasks,
 * rpc_leases.c). A lease's tasks run one at a time, in the order they
 * were pushed (across pushes), each as a job on the worker's executor pool
 * with the lease's grant environment. Each one's final state is reported
 * to the head through the runs' reporter (mt_runs_report_pushed), and a
 * push is answered once all its tasks have ended and the head has
 * acknowledged their reports: a driver never holds a result the head does
 * not know. Except while the head is away (mt_leases_head_away: it cannot
 * take reports, or the node is not registered): a push is then answered
 * as soon as its tasks have ended, the runs keep copies of its reports
 * (mt_runs_keep_pushed) and deliver them, in order, once the node is
 * registered again, so a driver's leased tasks go on through a head
 * outage.
 *
 * Life of a lease:
 *   RunTasks [LEASE] --mt_leases_add--> held: pushes queue tasks, which run
 *   in turn; an idle timer runs while nothing is queued, running or held
 *   --returned (a push with return_lease has run its tasks), idle for
 *   idle_ms, or revoked (mt_leases_revoke: a StopTask of the lease run;
 *   with force its running task is killed)--> ended: queued tasks come
 *   back not_run, later pushes are refused (not_run) --its running task,
 *   if any, has ended--> its run ends FINISHED with why (mt_runs_end), so
 *   the head frees its resources --no push holds it--> freed.
 *
 * Life of a pushed task: queued --its turn--> running (a job on the
 * pool) --the job ended, or a StopTask--> ended FINISHED, FAILED or
 * CANCELLED and reported (a number, seq) --the head acknowledged seq, and
 * every other task of its push has ended and is acknowledged--> answered.
 * A task that never ran because its lease is not here, has ended or is
 * someone else's comes back FAILED with not_run and is not reported: it
 * was not an attempt, the driver sends it elsewhere.
 *
 * DESIGN (cost per task): a push is two allocations with a slot per task;
 * a lease's environment is built once and each task only writes its ids
 * into the lease's two spare entries (one job per lease at a time); output
 * is kept only when there is some (the last output_limit bytes per
 * stream); acknowledgements are one number (every report up to seq), so
 * answering pushes is a walk of the few pushes waiting; reports wait for
 * company until a push needs them acknowledged (flush), so a push of many
 * tasks costs the head a call or two. One timer per lease (idle), none
 * per task.
 *
 * THREAD: loop thread only.
 */
#ifndef MT_WORKER_LEASES_H
#define MT_WORKER_LEASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "worker/exec_proto.h"
#include "worker/executors.h"
#include "worker/run_spec.h"
#include "worker/tasks.h"

#define MT_LEASE_IDLE_MS 100          /* a lease with nothing to do ends */
#define MT_LEASE_OUTPUT_MAX (1u << 20) /* output kept per stream per task */

struct mt_leases;

/*
 * What the leases drive, for tests to replace: by default the executor
 * pool (mt_exec_pool_submit, mt_exec_pool_stop) and the runs
 * (mt_runs_report_pushed, mt_runs_flush_pushed, mt_runs_end), with the
 * same contracts.
 */
struct mt_leases_ops {
    void (*submit)(void *arg, struct mt_exec_job *j);
    int (*stop)(void *arg, struct mt_exec_job *j);
    uint64_t (*report)(void *arg, const struct mt_run_report *r);
    void (*flush)(void *arg);
    void (*end)(void *arg, const char *lease_id, uint32_t attempt,
                const char *why);
    void (*keep)(void *arg, uint64_t seq); /* mt_runs_keep_pushed */
};

/* What the leases work with; everything borrowed, and must outlive them. */
struct mt_leases_opts {
    uv_loop_t *loop;
    const char *store_socket;   /* for the executor; NULL: no store */
    uint32_t idle_ms;           /* MT_LEASE_IDLE_MS but in tests */
    struct mt_exec_pool *execs; /* with runs: what ops NULL drives */
    struct mt_runs *runs;       /* and whose lease listener they become */
    const struct mt_leases_ops *ops; /* NULL: execs and runs */
    void *ops_arg;
};

/* One task of a push. Every pointer is borrowed until the push's done
 * callback (the rpc adapter keeps the request until it answers). */
struct mt_push_task {
    const char *task_id;        /* "t" + 15 hex digits */
    uint32_t attempt;
    const char *name;
    const char *function;
    char **code_path;
    uint32_t n_code_path;
    const struct mt_exec_blob *args;
    uint32_t nargs;
    bool hold_result;           /* big results go to the node's store */
    uint32_t max_retries;       /* reported to the head with the final */
    uint32_t output_limit;      /* bytes kept per stream (clamped to
                                   MT_LEASE_OUTPUT_MAX) */
};

/* A push: tasks for lease_id held for owner_id. Borrowed as its tasks. */
struct mt_push_req {
    const char *lease_id;
    const char *owner_id;
    const struct mt_push_task *tasks;
    size_t n;
    bool return_lease;          /* end the lease after these */
};

/* How one pushed task ended. Every pointer is borrowed for the done
 * callback. */
struct mt_push_result {
    enum mt_run_end state;      /* FINISHED, FAILED or CANCELLED */
    bool not_run;               /* FAILED without running: not an attempt */
    const uint8_t *result;      /* FINISHED, inline */
    size_t result_size;
    uint64_t stored;            /* FINISHED: a result of this many bytes
                                   is in the node's store instead */
    const char *error;          /* "" when none */
    bool system_failure;        /* FAILED: its executor died (retryable) */
    const uint8_t *out;         /* the last bytes of stdout ... */
    size_t out_len;
    uint64_t out_dropped;       /* ... after this many left out */
    const uint8_t *err;         /* and of stderr */
    size_t err_len;
    uint64_t err_dropped;
};

/*
 * A push has ended: err 0 and n results parallel to its tasks, or
 * -MT_EUNAVAIL (the worker is stopping; v is NULL).
 * OWNERSHIP v borrowed for the call
 */
typedef void (*mt_push_done_fn)(void *arg, int err,
                                const struct mt_push_result *v, size_t n);

/* ---- life ---------------------------------------------------------------- */

/* mt_leases_create - no lease yet; with o->runs, their lease listener. */
struct mt_leases *mt_leases_create(const struct mt_leases_opts *o);

/* Shutdown, step 1 (after the executor pool's, which forgets our jobs):
 * every held push ends with -MT_EUNAVAIL; nothing runs or is reported
 * any more. */
void mt_leases_shutdown(struct mt_leases *ls);
/* Shutdown, step 2: close every timer; done(arg) runs when all are
 * closed (maybe at once). */
void mt_leases_close(struct mt_leases *ls, void (*done)(void *), void *arg);
/* Free the table, after close completed. NULL ok. */
void mt_leases_destroy(struct mt_leases *ls);

/* ---- leases -------------------------------------------------------------- */

/*
 * mt_leases_add - hold the lease of a LEASE run: s->task_id is its id,
 * s->owner_id its owner, s's environments (env, env_unset, accel_env,
 * accel_unset) its tasks' environment.
 * OUT err  the reason on failure
 * RET 0, -MT_EEXIST (that lease is here), -MT_ECLOSED (stopping)
 * OWNERSHIP borrows s (copies what it keeps)
 */
int mt_leases_add(struct mt_leases *ls, const struct mt_run_spec *s,
                  char *err, size_t len);

/*
 * mt_leases_revoke - end a lease: queued tasks come back not_run; the
 * running one finishes, or with force its executor is killed and it ends
 * FAILED (system_failure, "its lease was revoked"); then the lease's run
 * ends FINISHED ("lease revoked").
 * RET 0 or -MT_ENOENT (not held here, or its run has ended)
 */
int mt_leases_revoke(struct mt_leases *ls, const char *lease_id,
                     uint32_t attempt, bool force);

/* mt_leases_acked - the head has every pushed report numbered up to seq:
 * pushes waiting only for that are answered. */
void mt_leases_acked(struct mt_leases *ls, uint64_t seq);

/*
 * mt_leases_head_away - the head cannot take reports (away) or can again.
 * While away, pushes are answered once their tasks have ended (their
 * reports copied, ops->keep), the pushes waiting only for the head's
 * acknowledgement at once.
 */
void mt_leases_head_away(struct mt_leases *ls, bool away);

/*
 * mt_leases_visit_held - call fn once for every pushed task queued or
 * running here (lease_id set), a task a StopTask cancelled excepted.
 * RET the number visited
 */
size_t mt_leases_visit_held(const struct mt_leases *ls, mt_held_fn fn,
                            void *arg);

/* mt_leases_held - is lease_id held here and not ended? */
bool mt_leases_held(const struct mt_leases *ls, const char *lease_id);

/* ---- pushed tasks -------------------------------------------------------- */

/*
 * mt_leases_push - queue r's tasks on their lease, or refuse them all
 * (not_run) when the lease is not here, has ended or is another owner's.
 * done(arg, ...) runs exactly once, maybe before this returns.
 * OWNERSHIP borrows r and what it points to until done
 */
void mt_leases_push(struct mt_leases *ls, const struct mt_push_req *r,
                    mt_push_done_fn done, void *arg);

/*
 * mt_leases_stop_task - cancel a pushed task: queued, it ends CANCELLED at
 * once; running, its executor is killed and it ends CANCELLED.
 * RET 0, or -MT_ENOENT (no such task queued or running)
 */
int mt_leases_stop_task(struct mt_leases *ls, const char *task_id,
                        uint32_t attempt);

#endif /* MT_WORKER_LEASES_H */
