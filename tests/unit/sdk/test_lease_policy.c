/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lease_policy.c -- sdk/lease_policy.c: the class key (equal for
 * equal scheduling fields, different for any scheduling difference, blind
 * to what runs), lease growth, batch sizing and the fate of a task whose
 * push brought no result.
 */
#include <string.h>

#include "common/error.h"
#include "sdk/lease_policy.h"
#include "tests/unit/unit.h"

/* A FUNCTION def with 1 CPU, as the SDK's defaults make it. */
static void def_init(struct mt_task_def *d)
{
    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_FUNCTION;
    CU_ASSERT_EQUAL_FATAL(mt_qty_list_put(&d->res, "CPU", MT_QTY_SCALE), 0);
}

static int key_of(const struct mt_task_def *d, char *buf)
{
    int n = mt__lease_class_key(d, buf, MT__LEASE_KEY_MAX);

    CU_ASSERT_TRUE_FATAL(n > 0);
    CU_ASSERT_EQUAL(strlen(buf), (size_t)n);
    return n;
}

static void test_key_ignores_what_runs(void)
{
    struct mt_task_def a, b;
    char ka[MT__LEASE_KEY_MAX], kb[MT__LEASE_KEY_MAX];

    def_init(&a);
    def_init(&b);
    CU_ASSERT_EQUAL(mt_def_set_str(&b.function, "lib.so:f"), 0);
    CU_ASSERT_EQUAL(mt_def_set_str(&b.name, "other"), 0);
    b.max_retries = 7;
    key_of(&a, ka);
    key_of(&b, kb);
    CU_ASSERT_STRING_EQUAL(ka, kb);
    CU_ASSERT_EQUAL(mt__lease_key_hash(ka, strlen(ka)),
                    mt__lease_key_hash(kb, strlen(kb)));
    mt_task_def_release(&a);
    mt_task_def_release(&b);
}

/* Each scheduling change gives another key. */
static void test_key_sees_scheduling(void)
{
    struct mt_task_def base, d;
    char k0[MT__LEASE_KEY_MAX], k[MT__LEASE_KEY_MAX];

    def_init(&base);
    key_of(&base, k0);
    for (int change = 0; change < 7; change++) {
        def_init(&d);
        switch (change) {
        case 0:
            mt_qty_list_set(&d.res, "CPU", 2 * MT_QTY_SCALE);
            break;
        case 1:
            CU_ASSERT_EQUAL(mt_qty_list_put(&d.res, "GPU", 5000), 0);
            break;
        case 2:
            CU_ASSERT_EQUAL(mt_selector_add(&d.sel, "zone", MT_LABEL_EQ,
                                            (const char *[]){"a"}, 1, NULL,
                                            0),
                            0);
            break;
        case 3:
            d.priority = 5;
            break;
        case 4:
            d.place = MT_PLACE_SPREAD;
            break;
        case 5:
            d.place = MT_PLACE_NODE_AFFINITY;
            CU_ASSERT_EQUAL(mt_def_set_str(&d.affinity_node, "n1"), 0);
            break;
        case 6:
            d.place = MT_PLACE_PG;
            d.bundle = 1;
            CU_ASSERT_EQUAL(mt_def_set_str(&d.pg_id, "p000000000000001"),
                            0);
            break;
        }
        key_of(&d, k);
        CU_ASSERT_STRING_NOT_EQUAL(k0, k);
        mt_task_def_release(&d);
    }
    mt_task_def_release(&base);
}

/* Soft and hard affinity, and two bundles of a group, are apart; texts
 * carry their length so "a"+"bc" is not "ab"+"c". */
static void test_key_fields_apart(void)
{
    struct mt_task_def a, b;
    char ka[MT__LEASE_KEY_MAX], kb[MT__LEASE_KEY_MAX];

    def_init(&a);
    def_init(&b);
    a.place = b.place = MT_PLACE_NODE_AFFINITY;
    CU_ASSERT_EQUAL(mt_def_set_str(&a.affinity_node, "n1"), 0);
    CU_ASSERT_EQUAL(mt_def_set_str(&b.affinity_node, "n1"), 0);
    b.affinity_soft = true;
    key_of(&a, ka);
    key_of(&b, kb);
    CU_ASSERT_STRING_NOT_EQUAL(ka, kb);
    mt_task_def_release(&a);
    mt_task_def_release(&b);

    def_init(&a);
    def_init(&b);
    CU_ASSERT_EQUAL(mt_selector_add(&a.sel, "a", MT_LABEL_IN,
                                    (const char *[]){"bc"}, 1, NULL, 0),
                    0);
    CU_ASSERT_EQUAL(mt_selector_add(&b.sel, "ab", MT_LABEL_IN,
                                    (const char *[]){"c"}, 1, NULL, 0),
                    0);
    key_of(&a, ka);
    key_of(&b, kb);
    CU_ASSERT_STRING_NOT_EQUAL(ka, kb);
    mt_task_def_release(&a);
    mt_task_def_release(&b);
}

static void test_key_too_long(void)
{
    struct mt_task_def d;
    char small[8];

    def_init(&d);
    CU_ASSERT_EQUAL(mt__lease_class_key(&d, small, sizeof(small)),
                    -MT_EINVAL);
    mt_task_def_release(&d);
}

static void test_more_leases(void)
{
    /* Nothing queued: nothing asked. */
    CU_ASSERT_EQUAL(mt__lease_more(0, 0, 0, 16), 0);
    /* A first task, no lease: one request, not two. */
    CU_ASSERT_EQUAL(mt__lease_more(1, 0, 0, 16), 1);
    CU_ASSERT_EQUAL(mt__lease_more(1, 0, 1, 16), 0);
    /* What a held lease absorbs (2 pushes of 16) asks for nothing. */
    CU_ASSERT_EQUAL(mt__lease_more(32, 1, 0, 16), 0);
    /* One more per 64 beyond it. */
    CU_ASSERT_EQUAL(mt__lease_more(33, 1, 0, 16), 1);
    CU_ASSERT_EQUAL(mt__lease_more(32 + 64, 1, 0, 16), 1);
    CU_ASSERT_EQUAL(mt__lease_more(32 + 65, 1, 0, 16), 2);
    CU_ASSERT_EQUAL(mt__lease_more(32 + 65, 1, 1, 16), 1);
    /* Never more than MT__LEASE_REQUESTS outstanding. */
    CU_ASSERT_EQUAL(mt__lease_more(100000, 0, 0, 16), MT__LEASE_REQUESTS);
    /* Pushes of one (slow or not measured yet): a lease per task waiting. */
    CU_ASSERT_EQUAL(mt__lease_more(6, 2, 0, 1), 2);
    CU_ASSERT_EQUAL(mt__lease_more(80, 2, 3, 1), MT__LEASE_REQUESTS - 3);
    CU_ASSERT_EQUAL(mt__lease_more(100000, 3, 5, 16),
                    MT__LEASE_REQUESTS - 5);
    CU_ASSERT_EQUAL(mt__lease_more(100000, 3, MT__LEASE_REQUESTS, 16), 0);
}

static void test_batch(void)
{
    unsigned b = MT__LEASE_BATCH_START;

    /* Short tasks: doubles up to the cap. */
    for (int i = 0; i < 20; i++)
        b = mt__lease_batch_next(b, b, 100000); /* 0.1 ms a push */
    CU_ASSERT_EQUAL(b, MT__LEASE_BATCH_MAX);
    /* A long push halves it. */
    CU_ASSERT_EQUAL(mt__lease_batch_next(1024, 1024, 80000000ull), 512);
    /* A task over 1 ms: one at a time. */
    CU_ASSERT_EQUAL(mt__lease_batch_next(512, 4, 4 * 2000000ull), 1);
    /* A small quick push (the queue ran dry) keeps it. */
    CU_ASSERT_EQUAL(mt__lease_batch_next(64, 3, 10000), 64);
    /* In between: kept. */
    CU_ASSERT_EQUAL(mt__lease_batch_next(64, 64, 20000000ull), 64);
    /* Nothing pushed, or a zero size: sane. */
    CU_ASSERT_EQUAL(mt__lease_batch_next(0, 0, 0), MT__LEASE_BATCH_MIN);
    CU_ASSERT_EQUAL(mt__lease_batch_next(1, 1, 10), 2);
}

static void test_fate(void)
{
    CU_ASSERT_EQUAL(mt__lease_retries(-1), MT_TASK_DEFAULT_RETRIES);
    CU_ASSERT_EQUAL(mt__lease_retries(0), 0);
    /* Never ran: always back in the queue, whatever the attempt. */
    CU_ASSERT_EQUAL(mt__lease_fate(true, 9, 0), MT__LEASE_REQUEUE);
    /* The default 3 retries: attempts 0, 1, 2 retry; 3 is the last. */
    CU_ASSERT_EQUAL(mt__lease_fate(false, 0, -1), MT__LEASE_RETRY);
    CU_ASSERT_EQUAL(mt__lease_fate(false, 2, -1), MT__LEASE_RETRY);
    CU_ASSERT_EQUAL(mt__lease_fate(false, 3, -1), MT__LEASE_FAIL);
    CU_ASSERT_EQUAL(mt__lease_fate(false, 0, 0), MT__LEASE_FAIL);
    CU_ASSERT_EQUAL(mt__lease_fate(false, 0, 1), MT__LEASE_RETRY);
    CU_ASSERT_EQUAL(mt__lease_fate(false, 1, 1), MT__LEASE_FAIL);
}

CU_TestInfo mt_test_sdk_lease_policy[] = {
    {"key_ignores_what_runs", test_key_ignores_what_runs},
    {"key_sees_scheduling", test_key_sees_scheduling},
    {"key_fields_apart", test_key_fields_apart},
    {"key_too_long", test_key_too_long},
    {"more_leases", test_more_leases},
    {"batch", test_batch},
    {"fate", test_fate},
    CU_TEST_INFO_NULL,
};
