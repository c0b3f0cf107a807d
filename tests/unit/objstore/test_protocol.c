/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_protocol.c -- request size checks done before any field is read.
 */
#include "objstore/protocol.h"

#include <string.h>

#include "common/error.h"
#include "tests/unit/unit.h"

static int chk(uint16_t type, uint16_t flags, uint32_t len, const void *p)
{
    struct mt_proto_hdr h = {len, type, flags, 1, 0};

    return mt_proto_check_request(&h, p);
}

static void test_fixed_sizes(void)
{
    static uint8_t buf[MT_PROTO_MAX_PAYLOAD + 1];

    CU_ASSERT_EQUAL(chk(MT_MSG_HELLO, 0, 8, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_HELLO, 0, 7, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_CREATE, 0, 176, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_CREATE, 0, 175, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_GET, 0, 32, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_SEAL, 0, 20, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_SEAL, 0, 0, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_STATS, 0, 0, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_STATS, 0, 1, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(0, 0, 0, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_SERVER_STATS, 0, 0, buf), 0);
    CU_ASSERT_EQUAL(chk(12, 0, 0, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_SEAL, MT_PROTO_F_REPLY, 20, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_SEAL, MT_PROTO_F_ONEWAY, 20, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, 40, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_RELEASE, 0, 0, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_RELEASE, 0, 30, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_RELEASE, 0, MT_PROTO_MAX_PAYLOAD + 1, buf),
                    -MT_EPROTO);
}

static void test_put(void)
{
    static uint8_t buf[sizeof(struct mt_proto_create) + MT_PROTO_INLINE_MAX];
    struct mt_proto_create q = {.data_size = 100, .meta_size = 5};

    memcpy(buf, &q, sizeof(q));
    CU_ASSERT_EQUAL(chk(MT_MSG_PUT, 0, sizeof(q) + 105, buf), 0);
    CU_ASSERT_EQUAL(chk(MT_MSG_PUT, 0, sizeof(q) + 104, buf), -MT_EPROTO);
    CU_ASSERT_EQUAL(chk(MT_MSG_PUT, 0, 10, buf), -MT_EPROTO);
    q.data_size = UINT64_MAX;
    memcpy(buf, &q, sizeof(q));
    CU_ASSERT_EQUAL(chk(MT_MSG_PUT, 0, sizeof(q) + 4, buf), -MT_EPROTO);
    q.data_size = MT_PROTO_INLINE_MAX;
    q.meta_size = 1;
    memcpy(buf, &q, sizeof(q));
    CU_ASSERT_EQUAL(chk(MT_MSG_PUT, 0, sizeof(buf), buf), -MT_EPROTO);
}

CU_TestInfo mt_test_protocol[] = {
    {"fixed_sizes", test_fixed_sizes},
    {"put", test_put},
    CU_TEST_INFO_NULL,
};
