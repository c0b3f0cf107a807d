/* SPDX-License-Identifier: Apache-2.0 */
/* test_gang_ports.c -- the gang port range: round-robin, all-or-nothing. */
#include "common/error.h"
#include "head/gang_ports.h"
#include "tests/unit/unit.h"

static void test_take_in_order(void)
{
    struct mt_port_range r;
    uint16_t p[4];

    mt_port_range_init(&r, 8470, 8479);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 3, p), 0);
    CU_ASSERT(p[0] == 8470 && p[1] == 8471 && p[2] == 8472);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 2, p), 0);
    CU_ASSERT(p[0] == 8473 && p[1] == 8474);
    mt_port_range_release(&r);
}

static void test_all_or_nothing(void)
{
    struct mt_port_range r;
    uint16_t p[20], q[20];

    mt_port_range_init(&r, 100, 109);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 8, p), 0);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 3, q), -MT_ENOSPC);
    /* nothing was taken: the last two are still there */
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 2, q), 0);
    CU_ASSERT(q[0] == 108 && q[1] == 109);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, q), -MT_ENOSPC);
    mt_port_range_release(&r);
}

static void test_give_back_and_wrap(void)
{
    struct mt_port_range r;
    uint16_t p[10], q[3], junk[2] = {99, 200};

    mt_port_range_init(&r, 100, 104);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 4, p), 0); /* 100..103 */
    mt_port_range_give(&r, p + 1, 2);                 /* 101, 102 free */
    mt_port_range_give(&r, junk, 2);                  /* ignored */
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 3, q), 0);
    /* from the cursor on: 104, then wrapping to the ones given back */
    CU_ASSERT(q[0] == 104 && q[1] == 101 && q[2] == 102);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, q), -MT_ENOSPC);
    mt_port_range_give(&r, p, 1);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, q), 0);
    CU_ASSERT_EQUAL(q[0], 100);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 0, q), 0);
    mt_port_range_release(&r);
}

static void test_edges(void)
{
    struct mt_port_range r;
    uint16_t p[2];

    mt_port_range_init(&r, 65535, 65535);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, p), 0);
    CU_ASSERT_EQUAL(p[0], 65535);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, p), -MT_ENOSPC);
    mt_port_range_release(&r);
    mt_port_range_init(&r, 10, 5); /* hi below lo: one port */
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 2, p), -MT_ENOSPC);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, p), 0);
    CU_ASSERT_EQUAL(p[0], 10);
    mt_port_range_release(&r);
}

static void test_mark(void)
{
    struct mt_port_range r;
    uint16_t marked[4] = {101, 103, 99, 300}, p[3];

    mt_port_range_init(&r, 100, 104);
    mt_port_range_mark(&r, marked, 4); /* 99 and 300 ignored */
    mt_port_range_mark(&r, marked, 1); /* twice: still taken */
    /* after the highest marked, then wrapping; never 101 or 103 */
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 3, p), 0);
    CU_ASSERT(p[0] == 104 && p[1] == 100 && p[2] == 102);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, p), -MT_ENOSPC);
    mt_port_range_give(&r, marked, 1);
    CU_ASSERT_EQUAL(mt_port_range_take(&r, 1, p), 0);
    CU_ASSERT_EQUAL(p[0], 101);
    mt_port_range_release(&r);
}

CU_TestInfo mt_test_gang_ports[] = {
    {"mark restored ports taken", test_mark},
    {"take in order", test_take_in_order},
    {"all or nothing", test_all_or_nothing},
    {"give back and wrap", test_give_back_and_wrap},
    {"edges", test_edges},
    CU_TEST_INFO_NULL,
};
