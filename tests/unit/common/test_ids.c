/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ids.c -- common/ids.h ids with a kind: a kind letter and 15 hex
 * digits both ways, what a parser must refuse (another kind's letter
 * among it), the kind read back from an id's shape, and the message for
 * an id of the wrong kind.
 */
#include <string.h>

#include "common/error.h"
#include "common/ids.h"
#include "tests/unit/unit.h"

static void test_num_id(void)
{
    static const char *bad[] = {
        "", "t23", "t0000000000000001", "t00000000000000g",
        "t 0000000000001", "t+00000000000001", "t0x000000000001",
        "00000000000000ab", /* the bare number of older releases */
        "T0000000000000ab", "p0000000000000ab", "a0000000000000ab",
    };
    char buf[MT_NUM_ID_LEN + 1];
    uint64_t n = 7;

    CU_ASSERT_STRING_EQUAL(mt_num_id(MT_ID_TASK, 0xab, buf),
                           "t0000000000000ab");
    CU_ASSERT_STRING_EQUAL(mt_num_id(MT_ID_TASK, MT_NUM_ID_MAX, buf),
                           "tfffffffffffffff");
    /* Above 60 bits the top is cut, never the letter. */
    CU_ASSERT_STRING_EQUAL(mt_num_id(MT_ID_TASK, UINT64_MAX, buf),
                           "tfffffffffffffff");
    CU_ASSERT_EQUAL(mt_num_id_parse(MT_ID_TASK, "t0000000000000ab", &n), 0);
    CU_ASSERT_EQUAL(n, 0xab);
    CU_ASSERT_EQUAL(mt_num_id_parse(MT_ID_TASK, "tFFFFFFFFFFFFFFF", &n), 0);
    CU_ASSERT_EQUAL(n, MT_NUM_ID_MAX);
    n = 7;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CU_ASSERT_EQUAL(mt_num_id_parse(MT_ID_TASK, bad[i], &n), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_num_id_parse(MT_ID_TASK, NULL, &n), -MT_EINVAL);
    CU_ASSERT_EQUAL(n, 7); /* untouched on failure */
    /* Kinds without a letter write one no parser takes. */
    CU_ASSERT_STRING_EQUAL(mt_num_id(MT_ID_OBJECT, 1, buf),
                           "?000000000000001");
    CU_ASSERT_EQUAL(mt_id_kind_of(buf), MT_ID_NONE);
}

/* The same number is a different string for every kind, and each parses
 * back only as its own kind. */
static void test_kinds_differ(void)
{
    static const enum mt_id_kind k[] = {MT_ID_TASK, MT_ID_ACTOR, MT_ID_PG,
                                        MT_ID_GANG};
    char ids[4][MT_NUM_ID_LEN + 1];
    uint64_t n;

    for (size_t i = 0; i < 4; i++) {
        mt_num_id(k[i], 0x0f17c5850000002, ids[i]);
        CU_ASSERT_EQUAL(mt_id_kind_of(ids[i]), k[i]);
        for (size_t j = 0; j < 4; j++) {
            CU_ASSERT_EQUAL(mt_num_id_parse(k[j], ids[i], &n),
                            i == j ? 0 : -MT_EINVAL);
            if (j < i)
                CU_ASSERT_STRING_NOT_EQUAL(ids[i], ids[j]);
        }
        CU_ASSERT_EQUAL(n, 0x0f17c5850000002);
    }
    CU_ASSERT_STRING_EQUAL(ids[2], "p0f17c5850000002");
    CU_ASSERT_STRING_EQUAL(ids[3], "g0f17c5850000002"); /* as gangs were */
}

static void test_kind_of(void)
{
    static const struct {
        const char *id;
        enum mt_id_kind kind;
    } cases[] = {
        {"t0000000000000001", MT_ID_NONE}, /* 17 characters */
        {"t000000000000001", MT_ID_TASK},
        {"a00000000000000F", MT_ID_ACTOR},
        {"p000000000000001", MT_ID_PG},
        {"g000000000000001", MT_ID_GANG},
        {"x000000000000001", MT_ID_NONE},
        {"0000000000000000", MT_ID_NONE},
        {"ffffffffffffffff", MT_ID_NONE},
        {"t00000000000000z", MT_ID_NONE},
        {"6d616e74612d726573756c740000000000000102", MT_ID_OBJECT},
        {"6d616e74612d726573756c74000000000000010z", MT_ID_NONE},
        {"659e5017cabaf80412c8568ec927a03a", MT_ID_NONE}, /* a node */
        {"", MT_ID_NONE},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CU_ASSERT_EQUAL(mt_id_kind_of(cases[i].id), cases[i].kind);
    CU_ASSERT_EQUAL(mt_id_kind_of(NULL), MT_ID_NONE);
    CU_ASSERT_STRING_EQUAL(mt_id_kind_name(MT_ID_PG), "placement group");
    CU_ASSERT_STRING_EQUAL(mt_id_kind_name(MT_ID_NONE), "unknown");
    CU_ASSERT_STRING_EQUAL(mt_id_kind_name((enum mt_id_kind)99), "unknown");
}

static void test_check_kind(void)
{
    char why[128] = "";

    CU_ASSERT_EQUAL(mt_id_check_kind("p000000000000001", MT_ID_TASK, why,
                                     sizeof(why)), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(why, "p000000000000001 is a placement group id, "
                                "not a task id");
    CU_ASSERT_EQUAL(mt_id_check_kind("t000000000000001", MT_ID_ACTOR, why,
                                     sizeof(why)), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(why, "t000000000000001 is a task id, not an "
                                "actor id");
    CU_ASSERT_EQUAL(mt_id_check_kind("6d616e74612d726573756c74000000000000"
                                     "0102", MT_ID_GANG, why, sizeof(why)),
                    -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "is an object id, not a gang id"));
    /* Its own kind, and ids of no kind (the table owner says "no such"). */
    why[0] = '\0';
    CU_ASSERT_EQUAL(mt_id_check_kind("t000000000000001", MT_ID_TASK, why,
                                     sizeof(why)), 0);
    CU_ASSERT_EQUAL(mt_id_check_kind("0000000000000000", MT_ID_TASK, why,
                                     sizeof(why)), 0);
    CU_ASSERT_EQUAL(mt_id_check_kind(NULL, MT_ID_PG, why, sizeof(why)), 0);
    CU_ASSERT_STRING_EQUAL(why, "");
}

/* A task's result object id is derived from the task id alone. */
static void test_result_of_task(void)
{
    mt_object_id id;
    char hex[MT_OBJECT_ID_HEX_LEN + 1];

    CU_ASSERT_EQUAL(mt_object_id_for_task("t000000000000102", &id), 0);
    CU_ASSERT_STRING_EQUAL(mt_object_id_hex(&id, hex),
                           "6d616e74612d726573756c740000000000000102");
    CU_ASSERT_EQUAL(mt_object_id_for_task("p000000000000102", &id),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_object_id_for_task("0000000000000102", &id),
                    -MT_EINVAL);
}

CU_TestInfo mt_test_ids[] = {
    {"num_id", test_num_id},
    {"kinds_differ", test_kinds_differ},
    {"kind_of", test_kind_of},
    {"check_kind", test_check_kind},
    {"result_of_task", test_result_of_task},
    CU_TEST_INFO_NULL,
};
