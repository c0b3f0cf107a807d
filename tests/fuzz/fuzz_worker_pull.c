/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_worker_pull.c -- the two messages of an object pull between
 * workers: the PullObject request a holder reads (worker/rpc_transfer.c
 * h_pull: a 20-byte id; the chunk size is one comparison) and the
 * ObjectChunk stream the puller reads, which it parses by hand where gRPC
 * received it (worker/chunk_wire.c, in segments) before
 * mt_worker_object_info_from_pb checks the first chunk's description.
 *
 * Properties: an accepted description has a tensor shape the store can
 * hold; the hand parser gives the same answer however the bytes are cut
 * into segments; when protobuf-c accepts the bytes too, both agree on the
 * offset, the chunk size and the payload.
 */
#include <sys/uio.h>

#include "common/error.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"
#include "worker/chunk_wire.h"
#include "worker/rpc_checks.h"
#include "worker/transfer.h"

/* Parse data cut every step bytes; copy the payload out. RET parse's rc. */
static int parse_cut(const uint8_t *data, size_t size, size_t step,
                     struct mt_chunk_msg *m, uint8_t **payload)
{
    struct iovec *v = calloc(size / step + 1, sizeof(*v));
    size_t n = 0;
    int rc;

    if (!v)
        abort();
    for (size_t at = 0; at < size; at += step) {
        v[n].iov_base = (void *)(data + at);
        v[n++].iov_len = size - at < step ? size - at : step;
    }
    *payload = NULL;
    rc = mt_chunk_parse(v, n, m);
    if (rc == 0) {
        MT_FUZZ_CHECK(m->data_len <= size && m->info_len <= size);
        *payload = malloc(m->data_len + 1);
        if (!*payload)
            abort();
        mt_chunk_copy_data(v, n, m, *payload);
    }
    free(v);
    return rc;
}

static void check_hand_parser(const uint8_t *data, size_t size,
                              const Manta__ObjectChunk *c)
{
    static struct mt_chunk_msg one, cut;
    uint8_t *p1, *p2;
    int rc1 = parse_cut(data, size, size ? size : 1, &one, &p1);
    int rc2 = parse_cut(data, size, size ? 1 + data[0] % 13 : 1, &cut, &p2);

    MT_FUZZ_CHECK(rc1 == rc2);
    if (rc1 == 0) {
        MT_FUZZ_CHECK(one.offset == cut.offset &&
                      one.chunk_size == cut.chunk_size &&
                      one.data_len == cut.data_len &&
                      one.has_info == cut.has_info &&
                      one.info_len == cut.info_len &&
                      memcmp(one.info, cut.info, one.info_len) == 0 &&
                      memcmp(p1, p2, one.data_len) == 0);
        if (c)
            MT_FUZZ_CHECK(c->offset == one.offset &&
                          c->chunk_size == one.chunk_size &&
                          c->data.len == one.data_len &&
                          (one.data_len == 0 ||
                           memcmp(c->data.data, p1, one.data_len) == 0));
    }
    free(p1);
    free(p2);
}

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
    check_hand_parser(data, size, c);
    if (c) {
        if (c->info && mt_worker_object_info_from_pb(c->info, &info) == 0 &&
            (info.flags & MT_OBJ_TENSOR))
            MT_FUZZ_CHECK(info.tensor.ndim <= MT_TENSOR_MAX_DIMS);
        manta__object_chunk__free_unpacked(c, NULL);
    }
    return 0;
}
