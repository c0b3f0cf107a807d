/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_worker_run.c -- RunTask and RunTasks requests as a worker reads
 * them (worker/rpc_tasks.c take_one, up to admission): protobuf-c unpacks
 * the bytes, mt_worker_run_spec_from_pb copies each request into a plain
 * C run spec (counts, environments with the grant's GPU ids mapped to
 * device ids, object arguments against the spec's arg_refs) and
 * mt_run_spec_check checks it as mt_runs_admit does. Two GPUs are
 * offered, so CUDA_VISIBLE_DEVICES is rewritten as on a GPU node.
 *
 * Property: a spec the worker accepts stays within the limits of a run.
 */
#include <stdio.h>

#include "tests/fuzz/fuzz.h"
#include "worker/detect_gpu.h"
#include "worker/rpc_checks.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static struct mt_gpu_list l;

    l.n = 2;
    snprintf(l.v[0].id, sizeof(l.v[0].id), "0");
    snprintf(l.v[1].id, sizeof(l.v[1].id), "GPU-1234-abcd");
    mt_gpu_set_device_map(&l);
    return 0;
}

static void run_once(const Manta__RunTaskRequest *req)
{
    struct mt_run_spec s;
    char err[256];

    if (!req->spec)
        return;
    if (mt_worker_run_spec_from_pb(req, &s))
        return; /* nothing left to free */
    if (mt_run_spec_check(&s, err, sizeof(err)) == 0)
        MT_FUZZ_CHECK(s.argc <= MT_RUN_MAX_ARGS);
    mt_run_spec_release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__RunTaskRequest *one =
        manta__run_task_request__unpack(NULL, size, data);
    Manta__RunTasksRequest *many =
        manta__run_tasks_request__unpack(NULL, size, data);

    if (one) {
        run_once(one);
        manta__run_task_request__free_unpacked(one, NULL);
    }
    if (many) {
        for (size_t i = 0; i < many->n_tasks && i < 4096; i++)
            run_once(many->tasks[i]);
        manta__run_tasks_request__free_unpacked(many, NULL);
    }
    return 0;
}
