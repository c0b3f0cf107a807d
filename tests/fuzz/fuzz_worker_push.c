/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_worker_push.c -- a PushTasks request (a driver pushing tasks to a
 * lease held on this worker) as the worker reads it (worker/rpc_leases.c
 * h_push_tasks): protobuf-c unpacks the bytes and
 * mt_worker_push_tasks_check checks the ids, tasks, functions, code paths
 * and arguments. Each task of an accepted push is then encoded as the
 * executor request worker/leases.c (job_fill) makes of it, with a grant
 * environment and the task's two id entries: a checked task always fits
 * a frame (worker/exec_proto.h).
 */
#include <stdio.h>

#include "tests/fuzz/fuzz.h"
#include "worker/exec_proto.h"
#include "worker/rpc_checks.h"

static void push_once(const Manta__PushedTask *k)
{
    struct mt_exec_blob *args = calloc(k->n_args + 1, sizeof(*args));
    char id[96], attempt[32];
    char *env[] = {"CUDA_VISIBLE_DEVICES=0", "HIP_VISIBLE_DEVICES", id,
                   attempt, NULL};
    struct mt_exec_request req;
    uint8_t *f;
    size_t n;

    for (size_t a = 0; a < k->n_args; a++) {
        args[a].data = k->args[a].data;
        args[a].size = (uint32_t)k->args[a].len;
    }
    snprintf(id, sizeof(id), "MANTA_TASK_ID=%s", k->task_id);
    snprintf(attempt, sizeof(attempt), "MANTA_TASK_ATTEMPT=%u", k->attempt);
    memset(&req, 0, sizeof(req));
    req.attempt = k->attempt;
    req.task_id = k->task_id;
    req.function = k->function;
    req.n_code_path = (uint32_t)k->n_code_path;
    req.code_path = k->code_path;
    req.n_env = 4;
    req.env = env;
    req.nargs = (uint32_t)k->n_args;
    req.args = args;
    req.store_socket = "/tmp/manta/objstore.sock";
    req.store_results = k->hold_result;
    MT_FUZZ_CHECK(mt_exec_request_encode(&req, &f, &n) == 0);
    free(f);
    free(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__PushTasksRequest *r =
        manta__push_tasks_request__unpack(NULL, size, data);

    if (!r)
        return 0;
    if (!mt_worker_push_tasks_check(r))
        for (size_t i = 0; i < r->n_tasks; i++)
            push_once(r->tasks[i]);
    manta__push_tasks_request__free_unpacked(r, NULL);
    return 0;
}
