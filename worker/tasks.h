/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.h -- the runs of a worker: each is one attempt of a task the head
 * handed over (struct mt_run_spec, run_spec.h): a program started in its
 * own process group, a function handed to an executor, or an actor's
 * creation or method call (actors.h); its output is captured and its
 * state, output and result reported back to the head.
 *
 * Life of a run (tasks.c):
 *   RunTask accepted --uv_spawn (under manta-guard, guard.h)--> running:
 *   RUNNING queued for the head, stdout/stderr read into a bounded output
 *   buffer (outbuf.h, and the per-task log) --process exited, both pipes
 *   at EOF, every handle closed--> done: the final update (FINISHED with
 *   the exit status, 128+N for signal N, or FAILED when the program could
 *   not start) is queued behind the output --head acknowledged the final
 *   update--> freed.
 *
 * Function tasks (kind FUNCTION) take the same path with the executor pool
 * (executors.h) in place of uv_spawn, after their object arguments are
 * here (task_args.h): RUNNING once an executor has the task, the
 * function's output relayed like a program's, then FINISHED with the
 * result bytes, or FAILED with the function's error (system_failure set
 * when the executor died, so the head may retry).
 *
 * A LEASE run (leases.h) runs nothing itself: it is RUNNING while the
 * lease is held and ends FINISHED, with why as its error text, when the
 * leases say so (mt_runs_end); a stop of it goes to the leases.
 *
 * Reports (see "reporting" in tasks.c): one batch in flight per worker,
 * handed to the sender the rpc adapter sets (rpc_tasks.c sends it as one
 * ReportTasks call and says how it ended); output is batched for up to
 * 50 ms or until 256 KiB are buffered, state changes go at once; a failed
 * call puts its updates back in front and is retried with backoff, so
 * nothing but excess output is ever lost.
 *
 * While the head is away (mt_runs_set_head_up false: the node is not
 * registered) reports wait, in order, and go once it is registered again,
 * so a restarted head hears what the node holds (RegisterNode) before
 * how any of it ended. The leases hear when the head becomes unreachable
 * or reachable again (lease listener's away), and may then ask that the
 * pushed reports queued so far be copied (mt_runs_keep_pushed), so that
 * they can answer their drivers without waiting for the head.
 *
 * THREAD: everything runs on the worker's loop thread.
 */
#ifndef MT_WORKER_TASKS_H
#define MT_WORKER_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "worker/outbuf.h"
#include "worker/run_spec.h"

#define MT_OUTPUT_LIMIT (8u << 20)   /* output buffered per task */

struct mt_store;
struct mt_transfers;
struct mt_exec_pool;
struct mt_hosted_actors;
struct mt_procs;
struct mt_runs;

/* ---- reports: what goes to the head in one call -------------------------- */

enum mt_run_end {
    MT_RUN_END_FINISHED = 1,    /* ran; exit_code is its status */
    MT_RUN_END_FAILED = 2,      /* could not run; error says why */
    MT_RUN_END_CANCELLED = 3,   /* a pushed task its driver stopped */
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
    /* A task pushed to a lease (leases.h): only its final update, for the
     * head's records (t is NULL). */
    const char *lease_id;       /* borrowed; NULL for a run's report */
    const char *name;           /* borrowed */
    const char *function;       /* borrowed */
    bool hold_result;
    uint32_t max_retries;       /* the driver's: a system failure below it
                                   is not final */
    bool replayable;            /* final, stored, retries: args and code
                                   path go too (the head may run it again) */
    const struct mt_exec_blob *args; /* borrowed */
    uint32_t nargs;
    char **code_path;           /* borrowed */
    uint32_t n_code_path;
    uint64_t seq;               /* its number (mt_runs_report_pushed) */
    bool owned;                 /* the strings, result, args and code path
                                   are copies the runs free (keep_pushed) */
    struct mt_run *t;           /* private to tasks.c */
};

struct mt_run_batch {
    struct mt_run_report *v;
    size_t n;
    size_t cap;
};

/* ---- the runs ------------------------------------------------------------ */

/* What the runs work with; everything borrowed, and must outlive them. */
struct mt_runs_opts {
    uv_loop_t *loop;
    const char *node_id;        /* MANTA_NODE_ID of every run */
    const char *head_addr;      /* MANTA_HEAD_ADDRESS, and for messages */
    const char *temp_dir;       /* per-task logs and result files; NULL:
                                   none */
    const char *store_socket;   /* MANTA_OBJECT_STORE_SOCKET; NULL: none */
    const struct mt_security *sec; /* MANTA_AUTH_TOKEN, MANTA_TLS_*; NULL:
                                      none */
    struct mt_store *store;     /* results and object arguments */
    struct mt_transfers *xfers; /* pulls of object arguments */
    struct mt_exec_pool *execs; /* function tasks; NULL: refused */
    struct mt_hosted_actors *actors; /* actor tasks */
    const char *guard_path;     /* manta-guard (guard.h); NULL: programs
                                   run unguarded */
    struct mt_procs *procs;     /* records each run's group; NULL: none */
};

/*
 * Where reports go: send b as one call and, when it returns 0, call
 * mt_runs_report_ended() once when the call has ended.
 * OWNERSHIP borrows b (encoded before return)
 * RET 0 or -MT_E* (then nothing follows; the batch is retried later)
 */
typedef int (*mt_runs_send_fn)(void *arg, const struct mt_run_batch *b);

/* mt_runs_create - no run yet; listens to o->actors' deaths. */
struct mt_runs *mt_runs_create(const struct mt_runs_opts *o);

/*
 * What the leases (leases.h) hear from the runs: a LEASE run begins
 * (started: 0, or -MT_E* with err set and the run ends FAILED with it), a
 * stop is asked of one (stop: RET as mt_runs_stop), and the head has
 * acknowledged every pushed task's report numbered up to seq (acked).
 */
struct mt_runs_lease_listener {
    int (*started)(void *arg, const struct mt_run_spec *s, char *err,
                   size_t len);
    int (*stop)(void *arg, const char *lease_id, uint32_t attempt,
                bool force);
    void (*acked)(void *arg, uint64_t seq);
    /* The head became unreachable (away true: a report call failed, or
     * the node is not registered) or takes reports again (false). */
    void (*away)(void *arg, bool away);
};

/* mt_runs_on_leases - who holds the leases (none: a LEASE run fails).
 * OWNERSHIP borrows l and arg; both outlive rs */
void mt_runs_on_leases(struct mt_runs *rs,
                       const struct mt_runs_lease_listener *l, void *arg);

/* mt_runs_set_sender - where reports go (none yet: they wait). */
void mt_runs_set_sender(struct mt_runs *rs, mt_runs_send_fn send, void *arg);

/* mt_runs_report_ended - the call of the last batch sent ended: err 0 (the
 * head has it) or why not (its updates go again). */
void mt_runs_report_ended(struct mt_runs *rs, int err, const char *msg);

/*
 * mt_runs_admit - may s start now? Validates (mt_run_spec_check) and
 * checks that (task_id, attempt) is not already known here.
 * OUT err  the reason on failure
 * RET 0, -MT_EINVAL, -MT_EEXIST, -MT_ECLOSED (worker stopping)
 */
int mt_runs_admit(struct mt_runs *rs, const struct mt_run_spec *s, char *err,
                  size_t len);

/*
 * mt_runs_start - start an admitted run. Spawn failures are not returned:
 * they are reported to the head as FAILED.
 * OWNERSHIP takes s's contents (s is zeroed)
 */
void mt_runs_start(struct mt_runs *rs, struct mt_run_spec *s);

/*
 * mt_runs_stop - SIGTERM the run's process group and kill it 5 s later
 * if it still runs; with force, kill it at once. Killing asks the run's
 * guard to kill every process the run started (a group SIGKILL follows
 * 2 s later if the guard has not ended). A function task's
 * executor is SIGKILLed at once (the pool replaces it); a function task
 * still waiting for an executor or its arguments ends at once; an actor's
 * creation task kills the actor.
 * A run asked to stop is no longer listed as held (mt_runs_visit_held).
 * RET 0 (signalled) or -MT_ENOENT (unknown here, or already exited;
 *     nothing happens)
 */
int mt_runs_stop(struct mt_runs *rs, const char *task_id, uint32_t attempt,
                 bool force);

/*
 * mt_runs_end - end a LEASE run: it reports FINISHED with why as its
 * error text, so the head frees its resources.
 * RET 0 or -MT_ENOENT (no such open lease run)
 * OWNERSHIP borrows why (copied)
 */
int mt_runs_end(struct mt_runs *rs, const char *task_id, uint32_t attempt,
                const char *why);

/*
 * mt_runs_report_pushed - queue a report of a task pushed to a lease:
 * RUNNING (r->running; a task that runs long) or its final state (end,
 * error, result or result_stored, system_failure), with lease_id, name,
 * function, hold_result, max_retries; r->t and r->out are ignored.
 * Pushed reports go in the order queued, ahead of the runs' updates, many
 * to a call, and are put back and retried as the runs' are. They wait for
 * company (up to 50 ms, as output does) unless mt_runs_flush_pushed asks
 * for them.
 * RET r's number, counted from 1; the lease listener's acked(seq) says
 *     when the head has it and every one before it
 * OWNERSHIP borrows r's strings and result until acked covers its number
 *     (or the runs shut down)
 */
uint64_t mt_runs_report_pushed(struct mt_runs *rs,
                               const struct mt_run_report *r);

/*
 * mt_runs_keep_pushed - the pushed reports numbered up to seq not
 * acknowledged yet stop borrowing: the runs copy what they point to, so
 * the leases may answer (and free) their pushes before the head has the
 * reports. Reports already copied are left alone.
 */
void mt_runs_keep_pushed(struct mt_runs *rs, uint64_t seq);

/*
 * mt_runs_set_head_up - the node is registered with the head (up), or
 * lost it (reports wait until it is up again; the leases hear away).
 * Up at creation.
 */
void mt_runs_set_head_up(struct mt_runs *rs, bool up);

/* ---- what the node holds (RegisterNode) ---------------------------------- */

/* A task held here: running, queued, or ended with its final report not
 * acknowledged by the head yet. Borrowed for the visit. */
struct mt_held_task {
    const char *task_id;
    uint32_t attempt;
    const char *lease_id;       /* pushed to a lease: its id; else NULL */
};

typedef void (*mt_held_fn)(void *arg, const struct mt_held_task *h);

/*
 * mt_runs_visit_held - call fn once for every run (command, function,
 * actor creation or method call, lease grant) and every pushed task whose
 * final report waits for the head's acknowledgement. Runs a StopTask
 * asked to stop are left out: the head that asked no longer counts them.
 * RET the number visited
 */
size_t mt_runs_visit_held(const struct mt_runs *rs, mt_held_fn fn, void *arg);

/* mt_runs_flush_pushed - send the pushed reports queued so far as soon as
 * a call can go (someone waits for their acknowledgement). */
void mt_runs_flush_pushed(struct mt_runs *rs);

/* Shutdown, step 1: kill every run (as a forced stop does), stop fetching
 * arguments; report nothing more. The executors and actors are shut down
 * by their owner (worker.c). */
void mt_runs_shutdown(struct mt_runs *rs);
/* Shutdown, step 2: close every handle; done(arg) runs when all are closed. */
void mt_runs_close(struct mt_runs *rs, void (*done)(void *), void *arg);
/* Free everything, once no report call can end any more. NULL ok. */
void mt_runs_destroy(struct mt_runs *rs);

#endif /* MT_WORKER_TASKS_H */
