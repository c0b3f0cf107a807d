/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ids.c -- common/ids.h numbered ids: 16 hex digits both ways, and
 * what a parser must refuse.
 */
#include <string.h>

#include "common/error.h"
#include "common/ids.h"
#include "tests/unit/unit.h"

static void test_num_id(void)
{
    static const char *bad[] = {
        "", "123", "00000000000000001", "000000000000000g",
        " 00000000000001", "+000000000000001", "0x00000000000001",
    };
    char buf[MT_NUM_ID_LEN + 1];
    uint64_t n = 7;

    CU_ASSERT_STRING_EQUAL(mt_num_id(0xab, buf), "00000000000000ab");
    CU_ASSERT_STRING_EQUAL(mt_num_id(UINT64_MAX, buf), "ffffffffffffffff");
    CU_ASSERT_EQUAL(mt_num_id_parse("00000000000000ab", &n), 0);
    CU_ASSERT_EQUAL(n, 0xab);
    CU_ASSERT_EQUAL(mt_num_id_parse("FFFFFFFFFFFFFFFF", &n), 0);
    CU_ASSERT_EQUAL(n, UINT64_MAX);
    n = 7;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CU_ASSERT_EQUAL(mt_num_id_parse(bad[i], &n), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_num_id_parse(NULL, &n), -MT_EINVAL);
    CU_ASSERT_EQUAL(n, 7); /* untouched on failure */
}

CU_TestInfo mt_test_ids[] = {
    {"num_id", test_num_id},
    CU_TEST_INFO_NULL,
};
