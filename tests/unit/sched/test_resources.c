/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_resources.c -- fixed-point parsing and printing, resource sets,
 * request validation rules (GPU 1.5, TPU 3, negatives) and name interning.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "sched/resources.h"
#include "tests/unit/unit.h"

static void test_parse_table(void)
{
    static const struct {
        const char *in;
        int rc;
        int64_t want;
    } rows[] = {
        {"2", 0, 20000},         {"0.18", 0, 1800},
        {"1.5", 0, 15000},       {"0.0001", 0, 1},
        {".5", 0, 5000},         {"-1", 0, -10000},
        {"0.00001", -MT_EINVAL, 0}, {"abc", -MT_EINVAL, 0},
        {"", -MT_EINVAL, 0},     {"1.2.3", -MT_EINVAL, 0},
        {"99999999999999999999", -MT_ERANGE, 0},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int64_t v = 0;
        int rc = mt_res_parse(rows[i].in, &v);

        CU_ASSERT_EQUAL(rc, rows[i].rc);
        if (rc == 0)
            CU_ASSERT_EQUAL(v, rows[i].want);
    }
}

static void test_format_table(void)
{
    static const struct {
        int64_t q;
        const char *want;
    } rows[] = {
        {20000, "2"}, {1800, "0.18"}, {15000, "1.5"}, {1, "0.0001"},
        {-5000, "-0.5"}, {0, "0"},
    };
    char buf[32];

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        mt_res_format(rows[i].q, buf, sizeof(buf));
        CU_ASSERT_STRING_EQUAL(buf, rows[i].want);
    }
    CU_ASSERT_EQUAL(mt_res_from_double(0.18), 1800);
    CU_ASSERT_DOUBLE_EQUAL(mt_res_to_double(1800), 0.18, 1e-9);
}

static void test_set_add_sorted_merged(void)
{
    struct mt_res_set s;

    mt_res_set_init(&s);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, MT_RES_GPU, 5000), 0);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, MT_RES_CPU, 10000), 0);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, MT_RES_GPU, 5000), 0);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, MT_RES_TPU, 0), 0);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_EQUAL(s.it[0].id, MT_RES_CPU);
    CU_ASSERT_EQUAL(s.it[1].id, MT_RES_GPU);
    CU_ASSERT_EQUAL(mt_res_set_get(&s, MT_RES_GPU), 10000);
    CU_ASSERT_EQUAL(mt_res_set_get(&s, MT_RES_TPU), 0);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, MT_RES_CPU, -1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, MT_RES_MAX, 1), -MT_EINVAL);
    for (int id = 5; id < 11; id++)
        CU_ASSERT_EQUAL(mt_res_set_add(&s, id, 1), 0);
    CU_ASSERT_EQUAL(mt_res_set_add(&s, 20, 1), -MT_ENOSPC);
    CU_ASSERT_EQUAL(mt_res_set_mask(&s) & 3, 3);
}

static void test_validate_table(void)
{
    static const struct {
        int id;
        int64_t qty;
        int rc;
    } rows[] = {
        {MT_RES_GPU, 15000, -MT_EINVAL},  /* GPU 1.5 */
        {MT_RES_GPU, 1800, 0},            /* GPU 0.18 */
        {MT_RES_GPU, 20000, 0},           /* GPU 2 */
        {MT_RES_GPU, 170000, -MT_EINVAL}, /* more GPUs than a node has */
        {MT_RES_TPU, 30000, -MT_EINVAL},  /* TPU 3 */
        {MT_RES_TPU, 5000, -MT_EINVAL},   /* TPU 0.5 */
        {MT_RES_TPU, 10000, 0},           {MT_RES_TPU, 20000, 0},
        {MT_RES_TPU, 40000, 0},           {MT_RES_TPU, 80000, 0},
        {MT_RES_TPU, 160000, -MT_EINVAL}, /* TPU 16 */
        {MT_RES_CPU, -10000, -MT_EINVAL}, /* negative */
        {MT_RES_CPU, 0, -MT_EINVAL},      /* zero stored by hand */
        {7, 10000, -MT_EINVAL},           /* unknown id */
        {MT_RES_CPU, 2500, 0},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mt_res_set s;

        mt_res_set_init(&s);
        s.n = 1;
        s.it[0].id = (uint16_t)rows[i].id;
        s.it[0].qty = rows[i].qty;
        CU_ASSERT_EQUAL(mt_res_set_validate(&s, MT_RES_NBUILTIN), rows[i].rc);
    }
}

static void test_validate_order(void)
{
    struct mt_res_set s;

    mt_res_set_init(&s);
    s.n = 2;
    s.it[0].id = MT_RES_GPU;
    s.it[0].qty = 1;
    s.it[1].id = MT_RES_CPU;
    s.it[1].qty = 1;
    CU_ASSERT_EQUAL(mt_res_set_validate(&s, MT_RES_NBUILTIN), -MT_EINVAL);
    s.it[1].id = MT_RES_GPU;
    CU_ASSERT_EQUAL(mt_res_set_validate(&s, MT_RES_NBUILTIN), -MT_EINVAL);
    s.n = 9;
    CU_ASSERT_EQUAL(mt_res_set_validate(&s, MT_RES_NBUILTIN), -MT_EINVAL);
}

static void test_names(void)
{
    struct mt_res_names *t;
    char name[16], buf[128];
    struct mt_res_set s;

    CU_ASSERT_FATAL(mt_res_names_create(&t) == 0);
    CU_ASSERT_EQUAL(mt_res_names_lookup(t, "CPU"), MT_RES_CPU);
    CU_ASSERT_EQUAL(mt_res_names_lookup(t, "object_store_memory"),
                    MT_RES_OBJSTORE);
    CU_ASSERT_EQUAL(mt_res_names_lookup(t, "accel"), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_res_names_intern(t, "accel"), MT_RES_NBUILTIN);
    CU_ASSERT_EQUAL(mt_res_names_intern(t, "accel"), MT_RES_NBUILTIN);
    CU_ASSERT_STRING_EQUAL(mt_res_names_name(t, MT_RES_NBUILTIN), "accel");
    CU_ASSERT_PTR_NULL(mt_res_names_name(t, 63));
    CU_ASSERT_EQUAL(mt_res_names_intern(t, ""), -MT_EINVAL);
    for (int i = mt_res_names_count(t); i < MT_RES_MAX; i++) {
        snprintf(name, sizeof(name), "r%d", i);
        CU_ASSERT(mt_res_names_intern(t, name) == i);
    }
    CU_ASSERT_EQUAL(mt_res_names_intern(t, "one-too-many"), -MT_ENOSPC);
    mt_res_set_init(&s);
    mt_res_set_add(&s, MT_RES_CPU, 10000);
    mt_res_set_add(&s, MT_RES_GPU, 1800);
    mt_res_set_format(t, &s, buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "{CPU: 1, GPU: 0.18}");
    mt_res_names_destroy(t);
}

CU_TestInfo mt_test_resources[] = {
    {"parse_table", test_parse_table},
    {"format_table", test_format_table},
    {"set_add_sorted_merged", test_set_add_sorted_merged},
    {"validate_table", test_validate_table},
    {"validate_order", test_validate_order},
    {"names", test_names},
    CU_TEST_INFO_NULL,
};
