/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executors.h -- the worker's pool of prestarted executor processes
 * (manta-executor) that run function tasks, one task per executor at a
 * time, reused across tasks.
 *
 * Life of an executor (executors.c):
 *   spawned (socket pair as fd 3, stdout/stderr pipes, its own process
 *   group) --> idle --job handed over: REQUEST written--> busy --REPLY-->
 *   idle ... --process exited (crash, SIGKILL from a stop, bad frame)-->
 *   every handle closed --> a fresh executor takes its slot (after 1 s when
 *   it could not start, or died within 1 s without running a task, so a
 *   broken binary cannot spin the loop).
 *
 * Jobs wait in FIFO order while every executor is busy. A job's output
 * (what the function printed) is handed to on_output; when the REPLY
 * arrives the pipes are drained first, so everything the function printed
 * before returning belongs to its job. Exactly one on_end per submitted
 * job, except after mt_exec_pool_shutdown(), which silences every
 * callback.
 *
 * THREAD: loop thread only.
 */
#ifndef MT_WORKER_EXECUTORS_H
#define MT_WORKER_EXECUTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "worker/exec_proto.h"

#define MT_EXEC_POOL_MAX 64

struct mt_exec_pool;
struct mt_procs;
struct mt_executor;

enum mt_exec_end {
    MT_EXEC_END_OK = 0,        /* the function returned 0 */
    MT_EXEC_END_FAILED = 1,    /* it returned non-zero, or was not found */
    MT_EXEC_END_DIED = 2,      /* the executor died while running it */
    MT_EXEC_END_STOPPED = 3,   /* mt_exec_pool_stop() */
};

/* How a job ended; every pointer is borrowed for the on_end call. */
struct mt_exec_outcome {
    enum mt_exec_end end;
    const uint8_t *result;     /* END_OK */
    size_t result_size;
    const char *error;         /* "" for END_OK */
    bool system_failure;       /* END_DIED: the head may retry it */
    uint64_t stored;           /* END_OK: a result of this many bytes was
                                  put in the store (result then empty) */
};

/* A function task to run. Owned by the caller, which keeps it (and what
 * req points to) alive until on_end or mt_exec_pool_shutdown(). */
struct mt_exec_job {
    struct mt_exec_request req; /* borrowed pointers; filled by the caller */
    void (*on_start)(struct mt_exec_job *j, int pid);
    void (*on_output)(struct mt_exec_job *j, uint32_t fd, const void *p,
                      size_t n);
    void (*on_end)(struct mt_exec_job *j, const struct mt_exec_outcome *o);
    /* private to executors.c */
    struct mt_exec_job *next;  /* in the queue */
    struct mt_executor *ex;    /* running on it */
    bool queued;
    bool stopping;
};

struct mt_exec_pool_opts {
    const char *path;          /* the manta-executor binary; borrowed */
    int n;                     /* executors: 1..MT_EXEC_POOL_MAX */
    char **env;                /* NULL-terminated "K=V"; taken */
    struct mt_procs *procs;    /* records each executor (procs.h); NULL:
                                  none; borrowed, outlives the pool */
};

/*
 * mt_exec_pool_create - start n executors on loop. A failed spawn is logged
 * and retried every second; jobs submitted while no executor can start
 * fail with the spawn error.
 * OUT out  free with mt_exec_pool_destroy() after mt_exec_pool_close()
 * OWNERSHIP takes o->env (even on error)
 * RET 0 or -MT_EINVAL (bad n or path)
 */
int mt_exec_pool_create(uv_loop_t *loop, const struct mt_exec_pool_opts *o,
                        struct mt_exec_pool **out);

/*
 * mt_exec_pool_create_dedicated - a pool of one executor for one actor,
 * with like's binary and environment. It is never respawned: when it is
 * gone (it exited or was killed, every handle closed), jobs still queued
 * end DIED (system_failure) and then on_gone(arg, why) runs once, why
 * saying how it ended ("was killed by signal 9"). Close and destroy it as
 * any pool (on_gone does not run after mt_exec_pool_shutdown()).
 * OUT out  free with mt_exec_pool_destroy() after mt_exec_pool_close()
 * RET 0 or -MT_EINVAL
 */
int mt_exec_pool_create_dedicated(const struct mt_exec_pool *like,
                                  void (*on_gone)(void *arg, const char *why),
                                  void *arg, struct mt_exec_pool **out);

/* mt_exec_pool_kill - SIGKILL every executor of p; callbacks still run (a
 * running job ends DIED). NULL ok. */
void mt_exec_pool_kill(struct mt_exec_pool *p);

/* mt_exec_pool_submit - run j on an idle executor now, or queue it. */
void mt_exec_pool_submit(struct mt_exec_pool *p, struct mt_exec_job *j);

/*
 * mt_exec_pool_stop - a queued job ends (STOPPED) at once; a running one's
 * executor is SIGKILLed and the job ends (STOPPED) when it is gone.
 * RET 0, or -MT_ENOENT when j is neither queued nor running
 */
int mt_exec_pool_stop(struct mt_exec_pool *p, struct mt_exec_job *j);

/* Executors alive (spawned and not exited). */
size_t mt_exec_pool_alive(const struct mt_exec_pool *p);

/* Shutdown, step 1: SIGKILL every executor, forget every job; no callback
 * runs after this. */
void mt_exec_pool_shutdown(struct mt_exec_pool *p);
/* Shutdown, step 2: close every handle; done(arg) runs when all are. */
void mt_exec_pool_close(struct mt_exec_pool *p, void (*done)(void *),
                        void *arg);
/* Free the pool; after close completed. Accepts NULL. */
void mt_exec_pool_destroy(struct mt_exec_pool *p);

#endif /* MT_WORKER_EXECUTORS_H */
