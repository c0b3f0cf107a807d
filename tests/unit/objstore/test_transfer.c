/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_transfer.c -- chunk reader and pull writer between two stores in one
 * process: out-of-order chunks, checksums, pins, cancel, bad chunks.
 */
#include "objstore/transfer.h"

#include <string.h>

#include "common/error.h"
#include "tests/unit/unit.h"

#define KIB 1024u

static struct mt_store *mk(uint64_t cap)
{
    struct mt_store_opts o = {.capacity = cap};
    struct mt_store *st = NULL;

    CU_ASSERT_FATAL(mt_store_create(&o, &st) == 0);
    return st;
}

static uint64_t fnv(const uint8_t *p, uint64_t n)
{
    uint64_t h = 1469598103934665603ULL;

    for (uint64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Put size bytes + 3 meta bytes with a tensor descriptor into st. */
static uint64_t put_src(struct mt_store *st, const mt_object_id *id,
                        uint64_t size)
{
    struct mt_tensor_desc t = {.code = MT_DL_UINT, .bits = 8, .lanes = 1,
                               .ndim = 1, .shape = {(int64_t)size}};
    struct mt_object_info info;
    uint8_t *p;

    CU_ASSERT_FATAL(mt_store_create_object(st, id, size, 3, 0, &t, &info) ==
                    0);
    p = mt_store_base(st) + info.offset;
    for (uint64_t i = 0; i < size + 3; i++)
        p[i] = (uint8_t)(i * 131 + (i >> 8));
    CU_ASSERT_FATAL(mt_store_seal(st, id) == 0);
    return fnv(p, size + 3);
}

static void test_pull(void)
{
    struct mt_store *a = mk(256 * KIB), *b = mk(256 * KIB);
    mt_object_id id = mt_object_id_from_u64(1, 2);
    uint64_t sum = put_src(a, &id, 100 * KIB), chunk = 16 * KIB;
    struct mt_object_info info, got;
    struct mt_xfer_reader *r;
    struct mt_xfer_writer *w;
    struct mt_store_stats s;
    uint64_t nchunks;

    CU_ASSERT_FATAL(mt_xfer_reader_open(a, &id, &info, &r) == 0);
    mt_store_stats(a, &s);
    CU_ASSERT_EQUAL(s.num_pinned, 1);
    CU_ASSERT_FATAL(mt_xfer_writer_open(b, &id, &info, chunk, &w) == 0);
    nchunks = mt_xfer_writer_missing(w);
    CU_ASSERT_EQUAL(nchunks, 7);
    /* Last chunk first, then the rest backwards, one twice. */
    for (uint64_t k = nchunks; k-- > 0;) {
        const uint8_t *p;
        uint64_t n;

        CU_ASSERT_FATAL(mt_xfer_reader_read(r, k * chunk, chunk, &p, &n) == 0);
        CU_ASSERT_EQUAL(mt_xfer_writer_write(w, k * chunk, p, n), 0);
        if (k == 3)
            CU_ASSERT_EQUAL(mt_xfer_writer_write(w, k * chunk, p, n), 0);
        if (k == 1)
            CU_ASSERT_EQUAL(mt_xfer_writer_finish(w), -MT_ESTATE);
    }
    CU_ASSERT_EQUAL(mt_xfer_writer_missing(w), 0);
    CU_ASSERT_EQUAL(mt_store_get(b, &id, &got), -MT_EAGAIN);
    CU_ASSERT_EQUAL(mt_xfer_writer_finish(w), 0);
    mt_xfer_reader_close(r);
    mt_store_stats(a, &s);
    CU_ASSERT_EQUAL(s.num_pinned, 0);
    CU_ASSERT_FATAL(mt_store_get(b, &id, &got) == 0);
    CU_ASSERT_EQUAL(got.data_size, 100 * KIB);
    CU_ASSERT_EQUAL(got.meta_size, 3);
    CU_ASSERT(got.flags & MT_OBJ_TENSOR);
    CU_ASSERT_EQUAL(got.tensor.shape[0], 100 * KIB);
    CU_ASSERT_EQUAL(fnv(mt_store_base(b) + got.offset, 100 * KIB + 3), sum);
    CU_ASSERT_EQUAL(mt_store_release(b, &id), 0);
    mt_store_destroy(a);
    mt_store_destroy(b);
}

static void test_cancel_leaves_nothing(void)
{
    struct mt_store *b = mk(256 * KIB);
    mt_object_id id = mt_object_id_from_u64(2, 2);
    struct mt_object_info info = {.data_size = 64 * KIB};
    struct mt_xfer_writer *w;
    struct mt_store_stats s;
    uint8_t chunk[16 * KIB] = {0};

    CU_ASSERT_FATAL(mt_xfer_writer_open(b, &id, &info, sizeof(chunk), &w) ==
                    0);
    CU_ASSERT_EQUAL(mt_xfer_writer_write(w, 0, chunk, sizeof(chunk)), 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_write(w, 1, chunk, 10), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_xfer_writer_write(w, 16 * KIB, chunk, 10), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_xfer_writer_write(w, 64 * KIB, chunk, 1), -MT_ERANGE);
    CU_ASSERT_EQUAL(mt_xfer_writer_finish(w), -MT_ESTATE);
    mt_xfer_writer_cancel(w);
    mt_xfer_writer_cancel(NULL);
    CU_ASSERT_EQUAL(mt_store_contains(b, &id), -MT_ENOENT);
    mt_store_stats(b, &s);
    CU_ASSERT_EQUAL(s.used, 0);
    CU_ASSERT_EQUAL(s.num_objects, 0);
    mt_store_destroy(b);
}

/* A transport fills chunks in place: a chunk counts only once placed, so
 * a half-filled one keeps the object unsealable; bad places are refused. */
static void test_place_in_pieces(void)
{
    struct mt_store *b = mk(256 * KIB);
    mt_object_id id = mt_object_id_from_u64(4, 4);
    struct mt_object_info info = {.data_size = 40 * KIB}, got;
    struct mt_xfer_writer *w;
    uint8_t *dst, *dst2;

    CU_ASSERT_FATAL(mt_xfer_writer_open(b, &id, &info, 16 * KIB, &w) == 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_place(w, 1, 16 * KIB, &dst), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_xfer_writer_place(w, 0, 8 * KIB, &dst), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_xfer_writer_place(w, 48 * KIB, 1, &dst), -MT_ERANGE);
    CU_ASSERT_EQUAL(mt_xfer_writer_placed(w, 48 * KIB), -MT_ERANGE);
    CU_ASSERT_EQUAL(mt_xfer_writer_placed(w, 3), -MT_EINVAL);
    CU_ASSERT_FATAL(mt_xfer_writer_place(w, 0, 16 * KIB, &dst) == 0);
    CU_ASSERT_FATAL(mt_xfer_writer_place(w, 32 * KIB, 8 * KIB, &dst2) == 0);
    CU_ASSERT_EQUAL(dst2 - dst, 32 * KIB);
    memset(dst, 'a', 16 * KIB);
    memset(dst2, 'c', 8 * KIB);
    CU_ASSERT_EQUAL(mt_xfer_writer_placed(w, 0), 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_placed(w, 32 * KIB), 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_placed(w, 32 * KIB), 0); /* twice: once */
    CU_ASSERT_EQUAL(mt_xfer_writer_missing(w), 1);
    CU_ASSERT_EQUAL(mt_xfer_writer_finish(w), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_xfer_writer_write(w, 16 * KIB, dst, 16 * KIB), 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_finish(w), 0);
    CU_ASSERT_FATAL(mt_store_get(b, &id, &got) == 0);
    dst = mt_store_base(b) + got.offset;
    CU_ASSERT(dst[0] == 'a' && dst[16 * KIB] == 'a' &&
              dst[40 * KIB - 1] == 'c');
    mt_store_release(b, &id);
    mt_store_destroy(b);
}

static void test_errors(void)
{
    struct mt_store *a = mk(64 * KIB);
    mt_object_id id = mt_object_id_from_u64(3, 3);
    struct mt_object_info info = {.data_size = 0};
    struct mt_xfer_reader *r;
    struct mt_xfer_writer *w;
    const uint8_t *p;
    uint64_t n;

    CU_ASSERT_EQUAL(mt_xfer_reader_open(a, &id, &info, &r), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_xfer_writer_open(a, &id, &info, 0, &w), -MT_EINVAL);
    info.data_size = 1 << 20;
    CU_ASSERT_EQUAL(mt_xfer_writer_open(a, &id, &info, 4096, &w),
                    -MT_ETOOBIG);
    /* An empty object: no chunks, finish seals at once. */
    info.data_size = 0;
    CU_ASSERT_FATAL(mt_xfer_writer_open(a, &id, &info, 4096, &w) == 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_missing(w), 0);
    CU_ASSERT_EQUAL(mt_xfer_writer_open(a, &id, &info, 4096, &w), -MT_EEXIST);
    CU_ASSERT_EQUAL(mt_xfer_writer_finish(w), 0);
    CU_ASSERT_FATAL(mt_xfer_reader_open(a, &id, &info, &r) == 0);
    CU_ASSERT_EQUAL(mt_xfer_reader_read(r, 0, 10, &p, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(mt_xfer_reader_read(r, 1, 10, &p, &n), -MT_ERANGE);
    mt_xfer_reader_close(r);
    mt_xfer_reader_close(NULL);
    mt_store_destroy(a);
}

CU_TestInfo mt_test_transfer[] = {
    {"pull", test_pull},
    {"cancel_leaves_nothing", test_cancel_leaves_nothing},
    {"place_in_pieces", test_place_in_pieces},
    {"errors", test_errors},
    CU_TEST_INFO_NULL,
};
