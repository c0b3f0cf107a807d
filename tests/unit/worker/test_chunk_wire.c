/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_chunk_wire.c -- worker/chunk_wire.h: ObjectChunk messages packed by
 * protobuf-c (what older workers send) and by mt_chunk_encode_head (what
 * this one sends) parse the same however the bytes are cut into segments,
 * the payload lands intact, protobuf-c reads our encoding, and malformed
 * or lying bytes are refused with -MT_EPROTO.
 */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "tests/unit/unit.h"
#include "worker/chunk_wire.h"
#include "worker_service.pb-c.h"

#define PAYLOAD 5000

static uint8_t payload[PAYLOAD];

/* Cut buf into segments of step bytes (the last shorter). RET count. */
static size_t cut(uint8_t *buf, size_t len, size_t step, struct iovec *v)
{
    size_t n = 0;

    for (size_t at = 0; at < len; at += step) {
        v[n].iov_base = buf + at;
        v[n++].iov_len = len - at < step ? len - at : step;
    }
    return n;
}

/* An ObjectChunk with info (data_size 77), offset and chunk_size. */
static size_t pack_pb(uint8_t *out, uint64_t offset, uint32_t chunk)
{
    Manta__ObjectChunk c = MANTA__OBJECT_CHUNK__INIT;
    Manta__ObjectInfo info = MANTA__OBJECT_INFO__INIT;

    info.data_size = 77;
    info.flags = 2;
    c.info = &info;
    c.offset = offset;
    c.chunk_size = chunk;
    c.data.data = payload;
    c.data.len = PAYLOAD;
    return manta__object_chunk__pack(&c, out);
}

static void check_parsed(uint8_t *buf, size_t len, uint64_t off)
{
    static const size_t steps[] = {1, 3, 7, 64, 4096, 1 << 20};
    struct iovec v[PAYLOAD + 64];
    struct mt_chunk_msg m;
    uint8_t got[PAYLOAD];
    Manta__ObjectInfo *info;

    for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        size_t n = cut(buf, len, steps[k], v);

        CU_ASSERT_FATAL(mt_chunk_parse(v, n, &m) == 0);
        CU_ASSERT_EQUAL(m.offset, off);
        CU_ASSERT_EQUAL(m.chunk_size, 1 << 20);
        CU_ASSERT_EQUAL(m.data_len, PAYLOAD);
        CU_ASSERT_FATAL(m.has_info);
        info = manta__object_info__unpack(NULL, m.info_len, m.info);
        CU_ASSERT_FATAL(info != NULL);
        CU_ASSERT_EQUAL(info->data_size, 77);
        CU_ASSERT_EQUAL(info->flags, 2);
        manta__object_info__free_unpacked(info, NULL);
        memset(got, 0, sizeof(got));
        mt_chunk_copy_data(v, n, &m, got);
        CU_ASSERT(memcmp(got, payload, PAYLOAD) == 0);
    }
}

static void test_protobuf_c_packed(void)
{
    uint8_t buf[PAYLOAD + 256];

    for (size_t i = 0; i < PAYLOAD; i++)
        payload[i] = (uint8_t)(i * 7 + 3);
    check_parsed(buf, pack_pb(buf, 3u << 20, 1 << 20), 3u << 20);
}

/* Our head + payload: parsed by us and by protobuf-c alike. */
static void test_own_encoding(void)
{
    Manta__ObjectInfo info = MANTA__OBJECT_INFO__INIT;
    uint8_t ib[64], buf[MT_CHUNK_HEAD_MAX + PAYLOAD];
    Manta__ObjectChunk *c;
    size_t il, hl;

    info.data_size = 77;
    info.flags = 2;
    il = manta__object_info__pack(&info, ib);
    hl = mt_chunk_encode_head(buf, ib, il, 5ull << 30, 1 << 20, PAYLOAD);
    memcpy(buf + hl, payload, PAYLOAD);
    check_parsed(buf, hl + PAYLOAD, 5ull << 30);
    c = manta__object_chunk__unpack(NULL, hl + PAYLOAD, buf);
    CU_ASSERT_FATAL(c != NULL);
    CU_ASSERT_EQUAL(c->offset, 5ull << 30);
    CU_ASSERT_EQUAL(c->chunk_size, 1 << 20);
    CU_ASSERT(c->info && c->info->data_size == 77);
    CU_ASSERT(c->data.len == PAYLOAD &&
              memcmp(c->data.data, payload, PAYLOAD) == 0);
    manta__object_chunk__free_unpacked(c, NULL);
    /* A later chunk: no info, no chunk size, offset 0 omitted. */
    hl = mt_chunk_encode_head(buf, NULL, 0, 0, 0, 10);
    CU_ASSERT_EQUAL(hl, 2);
}

/* Unknown fields of every wire type are skipped. */
static void test_unknown_fields(void)
{
    uint8_t buf[] = {
        0x10, 0x05,                   /* offset 5 */
        0x48, 0x96, 0x01,             /* field 9 varint */
        0x51, 1, 2, 3, 4, 5, 6, 7, 8, /* field 10 fixed64 */
        0x5d, 1, 2, 3, 4,             /* field 11 fixed32 */
        0x62, 0x02, 0xaa, 0xbb,       /* field 12 bytes */
        0x1a, 0x03, 'a', 'b', 'c',    /* data "abc" */
    };
    struct iovec v = {buf, sizeof(buf)};
    struct mt_chunk_msg m;
    uint8_t got[3];

    CU_ASSERT_FATAL(mt_chunk_parse(&v, 1, &m) == 0);
    CU_ASSERT_EQUAL(m.offset, 5);
    CU_ASSERT_FALSE(m.has_info);
    CU_ASSERT_EQUAL(m.data_len, 3);
    mt_chunk_copy_data(&v, 1, &m, got);
    CU_ASSERT(memcmp(got, "abc", 3) == 0);
    CU_ASSERT_EQUAL(mt_chunk_parse(&v, 0, &m), 0); /* empty message */
    CU_ASSERT_EQUAL(m.data_len, 0);
}

static int parse1(const uint8_t *b, size_t n)
{
    struct iovec v = {(void *)b, n};
    struct mt_chunk_msg m;

    return mt_chunk_parse(&v, 1, &m);
}

static void test_malformed(void)
{
    static const uint8_t trunc_len[] = {0x1a, 0x10, 'a'};
    static const uint8_t trunc_varint[] = {0x10, 0x80};
    static const uint8_t long_varint[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t over_64[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0x02};
    static const uint8_t big_chunk[] = {0x20, 0x80, 0x80, 0x80, 0x80, 0x10};
    static const uint8_t offset_as_len[] = {0x12, 0x01, 0x00};
    static const uint8_t data_as_varint[] = {0x18, 0x01};
    static const uint8_t info_as_i32[] = {0x0d, 1, 2, 3, 4};
    static const uint8_t group[] = {0x4b, 0x4c};
    static const uint8_t field0[] = {0x00, 0x01};
    static const uint8_t wt7[] = {0x0f};
    static const uint8_t huge_len[] = {0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f};
    static const uint8_t trunc_i64[] = {0x51, 1, 2, 3};
    uint8_t big_info[MT_CHUNK_INFO_MAX + 8];

    CU_ASSERT_EQUAL(parse1(trunc_len, sizeof(trunc_len)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(trunc_varint, sizeof(trunc_varint)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(long_varint, sizeof(long_varint)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(over_64, sizeof(over_64)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(big_chunk, sizeof(big_chunk)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(offset_as_len, sizeof(offset_as_len)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(data_as_varint, sizeof(data_as_varint)),
                    -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(info_as_i32, sizeof(info_as_i32)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(group, sizeof(group)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(field0, sizeof(field0)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(wt7, sizeof(wt7)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(huge_len, sizeof(huge_len)), -MT_EPROTO);
    CU_ASSERT_EQUAL(parse1(trunc_i64, sizeof(trunc_i64)), -MT_EPROTO);
    /* An info larger than any real ObjectInfo, all of it there. */
    memset(big_info, 0, sizeof(big_info));
    big_info[0] = 0x0a;
    big_info[1] = (uint8_t)(((MT_CHUNK_INFO_MAX + 1) & 0x7f) | 0x80);
    big_info[2] = (uint8_t)((MT_CHUNK_INFO_MAX + 1) >> 7);
    CU_ASSERT_EQUAL(parse1(big_info, 3 + MT_CHUNK_INFO_MAX + 1), -MT_EPROTO);
}

CU_TestInfo mt_test_chunk_wire[] = {
    {"protobuf_c_packed", test_protobuf_c_packed},
    {"own_encoding", test_own_encoding},
    {"unknown_fields", test_unknown_fields},
    {"malformed", test_malformed},
    CU_TEST_INFO_NULL,
};
