/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queue.c -- sdk/queue.c: FIFO order, removal, take-all.
 */
#include "sdk/queue.h"
#include "tests/unit/unit.h"

struct item {
    int v;
    struct mt__qnode qn;
};

#define ITEM(n) ((struct item *)((char *)(n)-offsetof(struct item, qn)))

static void test_fifo(void)
{
    struct item it[5];
    struct mt__queue q;

    mt__queue_init(&q);
    CU_ASSERT_PTR_NULL(mt__queue_pop(&q));
    for (int i = 0; i < 5; i++) {
        it[i].v = i;
        mt__queue_push(&q, &it[i].qn);
    }
    CU_ASSERT_EQUAL(q.n, 5);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(ITEM(mt__queue_pop(&q))->v, i);
    CU_ASSERT_PTR_NULL(mt__queue_pop(&q));
    CU_ASSERT_EQUAL(q.n, 0);
    /* Reusable after draining. */
    mt__queue_push(&q, &it[3].qn);
    CU_ASSERT_EQUAL(ITEM(mt__queue_pop(&q))->v, 3);
    CU_ASSERT_PTR_NULL(q.tail);
}

static void test_remove(void)
{
    struct item it[4];
    struct mt__queue q;

    mt__queue_init(&q);
    for (int i = 0; i < 4; i++) {
        it[i].v = i;
        mt__queue_push(&q, &it[i].qn);
    }
    CU_ASSERT_TRUE(mt__queue_remove(&q, &it[1].qn));  /* middle */
    CU_ASSERT_TRUE(mt__queue_remove(&q, &it[3].qn));  /* tail */
    CU_ASSERT_FALSE(mt__queue_remove(&q, &it[3].qn)); /* not queued */
    CU_ASSERT_EQUAL(q.n, 2);
    mt__queue_push(&q, &it[3].qn); /* the tail was fixed up */
    CU_ASSERT_EQUAL(ITEM(mt__queue_pop(&q))->v, 0);
    CU_ASSERT_EQUAL(ITEM(mt__queue_pop(&q))->v, 2);
    CU_ASSERT_EQUAL(ITEM(mt__queue_pop(&q))->v, 3);
    CU_ASSERT_TRUE(mt__queue_remove(&q, NULL) == false);
}

static void test_take_all(void)
{
    struct item it[3];
    struct mt__queue q, out;

    mt__queue_init(&q);
    for (int i = 0; i < 3; i++)
        mt__queue_push(&q, &it[i].qn);
    mt__queue_take_all(&q, &out);
    CU_ASSERT_EQUAL(q.n, 0);
    CU_ASSERT_PTR_NULL(q.head);
    CU_ASSERT_EQUAL(out.n, 3);
    CU_ASSERT_PTR_EQUAL(mt__queue_pop(&out), &it[0].qn);
}

CU_TestInfo mt_test_sdk_queue[] = {
    {"fifo", test_fifo},
    {"remove", test_remove},
    {"take_all", test_take_all},
    CU_TEST_INFO_NULL,
};
