/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_worker_pull.c -- the two messages of an object pull between
 * workers: the PullObject request a holder reads (worker/rpc_transfer.c
 * h_pull: a 20-byte id; the chunk size is one comparison) and
 * the ObjectChunk stream the puller reads (in_on_chunk:
 * mt_worker_object_info_from_pb on the first chunk's description).
 *
 * Property: an accepted description has a tensor shape the store can
 * hold.
 */
#include "common/error.h"
#include "worker/transfer.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"
#include "worker/rpc_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__PullObjectRequest *req =
        manta__pull_object_request__unpack(NULL, size, data);
    Manta__ObjectChunk *c = manta__object_chunk__unpack(NULL, size, data);
    struct mt_object_info info;
    mt_object_id id;

    if (req) {
        if (mt_pb_object_id(&req->object_id, &id) == 0)
            MT_FUZZ_CHECK(req->object_id.len == MT_OBJECT_ID_LEN);
        manta__pull_object_request__free_unpacked(req, NULL);
    }
    if (c) {
        if (c->info && mt_worker_object_info_from_pb(c->info, &info) == 0 &&
            (info.flags & MT_OBJ_TENSOR))
            MT_FUZZ_CHECK(info.tensor.ndim <= MT_TENSOR_MAX_DIMS);
        manta__object_chunk__free_unpacked(c, NULL);
    }
    return 0;
}
