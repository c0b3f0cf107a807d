/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_worker_actor.c -- a CallActor request (a driver calling an actor
 * hosted on this worker) as the worker reads it (worker/rpc_actors.c
 * h_call_actor): protobuf-c unpacks the bytes and
 * mt_worker_call_actor_check checks ids, calls, methods and arguments.
 * The executor request each accepted call becomes is then encoded as
 * submit_one and the executor pool do (worker/exec_proto.h).
 */
#include "tests/fuzz/fuzz.h"
#include "worker/exec_proto.h"
#include "worker/rpc_checks.h"

static void call_once(const Manta__CallActorRequest *r,
                      const Manta__ActorCall *k)
{
    struct mt_exec_blob *args = calloc(k->n_args + 1, sizeof(*args));
    struct mt_exec_request req;
    uint8_t *f;
    size_t n;

    for (size_t a = 0; a < k->n_args; a++) {
        args[a].data = k->args[a].data;
        args[a].size = (uint32_t)k->args[a].len;
    }
    memset(&req, 0, sizeof(req));
    req.task_id = r->actor_id;
    req.function = k->method;
    req.nargs = (uint32_t)k->n_args;
    req.args = args;
    req.actor_op = MT_EXEC_ACTOR_METHOD;
    /* A checked call always fits a frame. */
    MT_FUZZ_CHECK(mt_exec_request_encode(&req, &f, &n) == 0);
    free(f);
    free(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__CallActorRequest *r =
        manta__call_actor_request__unpack(NULL, size, data);

    if (!r)
        return 0;
    if (!mt_worker_call_actor_check(r))
        for (size_t i = 0; i < r->n_calls; i++)
            call_once(r, r->calls[i]);
    manta__call_actor_request__free_unpacked(r, NULL);
    return 0;
}
