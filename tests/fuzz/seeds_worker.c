/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seeds_worker.c -- seeds of the worker's harnesses (fuzz_worker_*.c):
 * requests as the head and other workers send them.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/convert.h"
#include "tests/fuzz/seeds.h"
#include "worker_service.pb-c.h"

static uint8_t oid[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                          11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

static void run_seeds(void)
{
    char *argv[] = {"/bin/echo", "hi"};
    char *unset[] = {"TPU_VISIBLE_CHIPS"};
    char *holders[] = {"10.0.0.3:7000"};
    ProtobufCBinaryData args[2] = {{2, (uint8_t *)"xy"}, {0, NULL}};
    ProtobufCBinaryData refs[2] = {{0, NULL}, {20, oid}};
    Manta__Label cuda = MANTA__LABEL__INIT;
    Manta__Label *env[] = {&cuda};
    Manta__ObjectArg oa = MANTA__OBJECT_ARG__INIT;
    Manta__ObjectArg *oas[] = {&oa};
    Manta__TaskSpec spec = MANTA__TASK_SPEC__INIT;
    Manta__RunTaskRequest r = MANTA__RUN_TASK_REQUEST__INIT;
    Manta__RunTaskRequest *rs[] = {&r, &r};
    Manta__RunTasksRequest many = MANTA__RUN_TASKS_REQUEST__INIT;

    cuda.key = "CUDA_VISIBLE_DEVICES";
    cuda.value = "0,1";
    spec.task_id = "t000000000000001";
    spec.kind = MANTA__TASK_KIND__TASK_KIND_COMMAND;
    spec.n_argv = 2;
    spec.argv = argv;
    r.spec = &spec;
    r.attempt = 1;
    r.n_env = 1;
    r.env = env;
    r.n_env_unset = 1;
    r.env_unset = unset;
    MT_SEED_PACK("worker_run", "command", manta__run_task_request, &r);
    many.n_tasks = 2;
    many.tasks = rs;
    MT_SEED_PACK("worker_run", "batch", manta__run_tasks_request, &many);
    spec.kind = MANTA__TASK_KIND__TASK_KIND_FUNCTION;
    spec.n_argv = 0;
    spec.function = "libfn.so:add";
    spec.n_args = 2;
    spec.args = args;
    spec.n_arg_refs = 2;
    spec.arg_refs = refs;
    oa.index = 1;
    oa.object_id.len = 20;
    oa.object_id.data = oid;
    oa.size = 3;
    oa.is_inline = 1;
    oa.inline_data.len = 3;
    oa.inline_data.data = (uint8_t *)"abc";
    oa.n_holder_addresses = 1;
    oa.holder_addresses = holders;
    r.n_object_args = 1;
    r.object_args = oas;
    MT_SEED_PACK("worker_run", "function-ref", manta__run_task_request, &r);
    oa.index = 0; /* does not match arg_refs: refused after copying */
    MT_SEED_PACK("worker_run", "function-bad-ref", manta__run_task_request, &r);
}

static void actor_seeds(void)
{
    ProtobufCBinaryData args[2] = {{2, (uint8_t *)"xy"}, {1, (uint8_t *)"z"}};
    Manta__ActorCall c0 = MANTA__ACTOR_CALL__INIT;
    Manta__ActorCall c1 = MANTA__ACTOR_CALL__INIT;
    Manta__ActorCall *calls[] = {&c0, &c1};
    Manta__CallActorRequest r = MANTA__CALL_ACTOR_REQUEST__INIT;

    c0.seq = 0;
    c0.method = "libactor.so:incr";
    c0.n_args = 2;
    c0.args = args;
    c1.seq = 1;
    c1.method = "libactor.so:get";
    r.actor_id = "a000000000000001";
    r.incarnation = 1;
    r.caller_id = "driver-1";
    r.n_calls = 2;
    r.calls = calls;
    MT_SEED_PACK("worker_actor", "two-calls", manta__call_actor_request, &r);
    c1.method = "";
    MT_SEED_PACK("worker_actor", "no-method", manta__call_actor_request, &r);
}

static void push_seeds(void)
{
    ProtobufCBinaryData args[2] = {{8, (uint8_t *)"\x28\0\0\0\0\0\0\0"},
                                   {8, (uint8_t *)"\x02\0\0\0\0\0\0\0"}};
    char *code_path[] = {"/opt/fn/lib"};
    Manta__PushedTask t0 = MANTA__PUSHED_TASK__INIT;
    Manta__PushedTask t1 = MANTA__PUSHED_TASK__INIT;
    Manta__PushedTask *tasks[] = {&t0, &t1};
    Manta__PushTasksRequest r = MANTA__PUSH_TASKS_REQUEST__INIT;

    t0.task_id = "t800000000000001";
    t0.name = "add";
    t0.function = "libfn.so:add";
    t0.n_args = 2;
    t0.args = args;
    t0.n_code_path = 1;
    t0.code_path = code_path;
    t0.hold_result = 1;
    t0.output_limit = 4096;
    t0.max_retries = 3;
    t1.task_id = "t800000000000002";
    t1.attempt = 1;
    t1.function = "echo";
    r.lease_id = "t000000000000007";
    r.owner_id = "session-1";
    r.n_tasks = 2;
    r.tasks = tasks;
    MT_SEED_PACK("worker_push", "two-tasks", manta__push_tasks_request, &r);
    r.n_tasks = 0;
    r.return_lease = 1;
    MT_SEED_PACK("worker_push", "return", manta__push_tasks_request, &r);
    r.n_tasks = 2;
    t1.task_id = "t12";
    MT_SEED_PACK("worker_push", "bad-id", manta__push_tasks_request, &r);
}

static void pull_seeds(void)
{
    Manta__PullObjectRequest req = MANTA__PULL_OBJECT_REQUEST__INIT;
    int64_t shape[2] = {4, 8}, strides[2] = {32, 4};
    Manta__TensorDesc t = MANTA__TENSOR_DESC__INIT;
    Manta__ObjectInfo info = MANTA__OBJECT_INFO__INIT;
    Manta__ObjectChunk c = MANTA__OBJECT_CHUNK__INIT;

    req.object_id.len = 20;
    req.object_id.data = oid;
    req.chunk_size = 1 << 20;
    MT_SEED_PACK("worker_pull", "request", manta__pull_object_request, &req);
    t.code = 2;
    t.bits = 32;
    t.lanes = 1;
    t.n_shape = 2;
    t.shape = shape;
    t.n_strides = 2;
    t.strides = strides;
    info.data_size = 128;
    info.meta_size = 0;
    info.flags = 1;
    info.tensor = &t;
    c.info = &info;
    c.offset = 0;
    c.data.len = 3;
    c.data.data = (uint8_t *)"abc";
    c.chunk_size = 1 << 20;
    MT_SEED_PACK("worker_pull", "first-chunk", manta__object_chunk, &c);
}

void mt_seeds_worker(void)
{
    run_seeds();
    actor_seeds();
    push_seeds();
    pull_seeds();
}
