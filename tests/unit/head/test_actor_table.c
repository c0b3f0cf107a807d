/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_actor_table.c -- the head's actor table: ids, lookups by number, id and
 * name (names belong to actors that are not DEAD), the call queue as a
 * FIFO ring through growth and wrap-around, death with a reason, and
 * forgetting the oldest dead actors beyond MT_ACTOR_KEEP_DEAD.
 */
#include <stdio.h>
#include <string.h>

#include "head/actor_table.h"
#include "tests/unit/unit.h"

static void test_new_and_find(void)
{
    struct mt_actor_table t = {0};
    struct mt_head_actor *a, *b;

    a = mt_actor_table_add(&t, 0x10, "counter", "lib.so:new", "owner1", true, 2,
                     100);
    b = mt_actor_table_add(&t, 0x11, "", "lib.so:new", NULL, false, -1, 101);
    CU_ASSERT_STRING_EQUAL(a->id, "a000000000000010");
    CU_ASSERT_EQUAL(a->state, MT_ACTOR_PENDING_CREATION);
    CU_ASSERT_TRUE(a->detached);
    CU_ASSERT_EQUAL(a->max_restarts, 2);
    CU_ASSERT_PTR_NULL(b->name);
    CU_ASSERT_STRING_EQUAL(b->owner, "");
    CU_ASSERT_PTR_EQUAL(mt_actor_table_find(&t, 0x11), b);
    CU_ASSERT_PTR_EQUAL(mt_actor_table_find_id(&t, "a000000000000010"), a);
    /* Its creation task has the same number, not the same id. */
    CU_ASSERT_PTR_NULL(mt_actor_table_find_id(&t, "t000000000000010"));
    CU_ASSERT_PTR_NULL(mt_actor_table_find_id(&t, "10"));
    CU_ASSERT_PTR_NULL(mt_actor_table_find_id(&t, "a00000000000001x"));
    CU_ASSERT_PTR_NULL(mt_actor_table_find_id(&t, NULL));
    CU_ASSERT_PTR_EQUAL(mt_actor_table_find_name(&t, "counter"), a);
    CU_ASSERT_PTR_NULL(mt_actor_table_find_name(&t, ""));
    CU_ASSERT_PTR_NULL(mt_actor_table_find_name(&t, "other"));
    CU_ASSERT_STRING_EQUAL(mt_head_actor_state_name(MT_ACTOR_RESTARTING),
                           "RESTARTING");
    CU_ASSERT_STRING_EQUAL(mt_head_actor_state_name(99), "UNKNOWN");
    mt_actor_table_release(&t);
    CU_ASSERT_EQUAL(t.n, 0);
}

static void test_name_freed_by_death(void)
{
    struct mt_actor_table t = {0};
    struct mt_head_actor *a, *b;

    a = mt_actor_table_add(&t, 1, "svc", "f", "o", true, 0, 1);
    mt_actor_table_set_dead(&t, a, "killed", 50);
    CU_ASSERT_EQUAL(a->state, MT_ACTOR_DEAD);
    CU_ASSERT_STRING_EQUAL(a->death_reason, "killed");
    CU_ASSERT_EQUAL(a->end_ms, 50);
    CU_ASSERT_PTR_NULL(mt_actor_table_find_name(&t, "svc"));
    /* Dying twice keeps the first reason. */
    mt_actor_table_set_dead(&t, a, "again", 60);
    CU_ASSERT_STRING_EQUAL(a->death_reason, "killed");
    CU_ASSERT_EQUAL(t.n_dead, 1);
    b = mt_actor_table_add(&t, 2, "svc", "f", "o", true, 0, 2);
    CU_ASSERT_PTR_EQUAL(mt_actor_table_find_name(&t, "svc"), b);
    mt_actor_table_release(&t);
}

static void test_queue_ring(void)
{
    struct mt_actor_table t = {0};
    struct mt_head_actor *a = mt_actor_table_add(&t, 1, NULL, "f", "o", false, 0, 1);
    uint64_t v, next = 0, pushed = 0;

    CU_ASSERT_FALSE(mt_head_actor_queue_pop(a, &v));
    /* Interleave pushes and pops so the ring wraps while it grows. */
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 7; i++)
            mt_head_actor_queue_push(a, pushed++);
        for (int i = 0; i < 5; i++) {
            CU_ASSERT_TRUE_FATAL(mt_head_actor_queue_pop(a, &v));
            CU_ASSERT_EQUAL(v, next);
            next++;
        }
    }
    while (mt_head_actor_queue_pop(a, &v))
        CU_ASSERT_EQUAL(v, next++);
    CU_ASSERT_EQUAL(next, pushed);
    CU_ASSERT_EQUAL(a->q_len, 0);
    mt_actor_table_release(&t);
}

static void test_forget_old_dead(void)
{
    struct mt_actor_table t = {0};
    struct mt_head_actor *live = mt_actor_table_add(&t, 1, "live", "f", "o", true, 0, 0);

    for (uint64_t i = 0; i < MT_ACTOR_KEEP_DEAD + 5; i++) {
        struct mt_head_actor *d = mt_actor_table_add(&t, 100 + i, NULL, "f", "o", false,
                                          0, 0);
        mt_actor_table_set_dead(&t, d, "done", (int64_t)i);
    }
    CU_ASSERT_EQUAL(t.n_dead, MT_ACTOR_KEEP_DEAD);
    CU_ASSERT_EQUAL(t.n, MT_ACTOR_KEEP_DEAD + 1);
    CU_ASSERT_PTR_EQUAL(mt_actor_table_find(&t, 1), live);
    CU_ASSERT_PTR_NULL(mt_actor_table_find(&t, 100));     /* the oldest dead */
    CU_ASSERT_PTR_NULL(mt_actor_table_find(&t, 104));
    CU_ASSERT_PTR_NOT_NULL(mt_actor_table_find(&t, 105));
    CU_ASSERT_PTR_NOT_NULL(mt_actor_table_find(&t, 100 + MT_ACTOR_KEEP_DEAD + 4));
    mt_actor_table_release(&t);
}

CU_TestInfo mt_test_actor_table[] = {
    {"new_and_find", test_new_and_find},
    {"name_freed_by_death", test_name_freed_by_death},
    {"queue_ring", test_queue_ring},
    {"forget_old_dead", test_forget_old_dead},
    CU_TEST_INFO_NULL,
};
