/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_push.h -- the calls of rpc_push.c, the one file that sees
 * WorkerService.PushTasks and StopTask in protobuf: a batch of tasks
 * pushed to a lease (or the lease returned), and a pushed task stopped.
 * Plain C in, plain C out; lease.c decides what to push and what the
 * answers mean.
 *
 * THREAD: the client's loop thread (the rpc layer's rule).
 */
#ifndef MT_SDK_RPC_PUSH_H
#define MT_SDK_RPC_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"

struct mt_rpc_channel;

/* One task of a push. Every pointer is borrowed for mt__push_send. */
struct mt__push_task {
    const char *task_id;
    uint32_t attempt;
    const struct mt_task_def *def; /* name, function, args, code path,
                                      hold_result */
    uint32_t output_limit;
    uint32_t max_retries;          /* resolved */
};

/* One task's answer; every pointer borrows from the reply. */
struct mt__push_result {
    int state;                     /* mt_task_state: FINISHED, FAILED,
                                      CANCELLED */
    bool not_run;
    bool system_failure;
    const uint8_t *result;
    size_t result_len;
    bool result_in_store;
    uint64_t result_size;
    const char *error;
    const uint8_t *out, *err;
    size_t out_len, err_len;
    uint64_t out_dropped, err_dropped;
};

/*
 * A push's end: code is the call's grpc status (0 OK), why its text
 * ("UNAVAILABLE: ..."); on OK res holds n answers, one per task pushed,
 * in order (a reply with another count is reported as INTERNAL).
 * Borrowed for the callback only.
 */
typedef void (*mt__push_done_fn)(void *arg, int code, const char *why,
                                 const struct mt__push_result *res, size_t n);

/*
 * mt__push_send - PushTasks {lease_id, owner_id, tasks, return_lease} on
 * ch, deadline timeout_ms from now.
 * RET 0: done runs once, later; -MT_ENOMEM, -MT_ECLOSED: it never runs
 */
int mt__push_send(struct mt_rpc_channel *ch, const char *lease_id,
                  const char *owner_id, const struct mt__push_task *tasks,
                  size_t n, bool return_lease, int timeout_ms,
                  mt__push_done_fn done, void *arg);

/* A StopTask's end: code as mt__push_done_fn. */
typedef void (*mt__stop_done_fn)(void *arg, int code);

/*
 * mt__push_stop - StopTask {task_id, attempt, force} on ch.
 * RET 0: done runs once, later; or -MT_E*: it never runs
 */
int mt__push_stop(struct mt_rpc_channel *ch, const char *task_id,
                  uint32_t attempt, bool force, int timeout_ms,
                  mt__stop_done_fn done, void *arg);

#endif /* MT_SDK_RPC_PUSH_H */
