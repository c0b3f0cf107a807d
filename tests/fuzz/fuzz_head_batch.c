/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_head_batch.c -- a SubmitTasks request (a batch of specs) as the
 * head reads it (head/rpc_watch.c h_submit_tasks): protobuf-c unpacks the
 * bytes, mt_head_batch_check checks the batch's shape, then each spec is
 * converted (mt_task_def_from_pb) and checked (mt_task_def_check; actors
 * are refused in batches) as mt_head_tasks_submit does before queueing.
 */
#include "head/rpc_checks.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"

static void spec_once(const Manta__TaskSpec *s)
{
    struct mt_task_def d;
    const char *why = NULL;

    mt_task_def_init(&d);
    if (!s || mt_task_def_from_pb(s, &d, &why) < 0)
        return;
    if (!(why = mt_task_def_check(&d)))
        MT_FUZZ_CHECK(d.kind >= MT_TASK_KIND_COMMAND &&
                      d.kind <= MT_TASK_KIND_ACTOR_METHOD);
    mt_task_def_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__SubmitTasksRequest *req =
        manta__submit_tasks_request__unpack(NULL, size, data);

    if (!req)
        return 0;
    if (!mt_head_batch_check(req)) {
        MT_FUZZ_CHECK(req->n_tags == req->n_specs);
        for (size_t i = 0; i < req->n_specs; i++)
            spec_once(req->specs[i]);
    }
    manta__submit_tasks_request__free_unpacked(req, NULL);
    return 0;
}
