/* SPDX-License-Identifier: Apache-2.0 */
/* test_obj_table.c -- the head's object directory table (head/obj_table.h)
 * and the task result id (common/ids.h). */
#include <string.h>

#include "common/error.h"
#include "head/obj_table.h"
#include "tests/unit/unit.h"

static void test_new_find_free(void)
{
    struct mt_obj_table ot;
    mt_object_id a = mt_object_id_from_u64(1, 2), b = mt_object_id_from_u64(3, 4);
    struct mt_obj *oa, *ob;

    mt_obj_table_init(&ot);
    oa = mt_obj_new(&ot, &a, MT_OBJ_READY, "put n1", 1);
    ob = mt_obj_new(&ot, &b, MT_OBJ_PENDING, "task 00", 0);
    CU_ASSERT_PTR_EQUAL(mt_obj_find(&ot, &a), oa);
    CU_ASSERT_PTR_EQUAL(mt_obj_find(&ot, &b), ob);
    CU_ASSERT(oa->seq < ob->seq);
    CU_ASSERT_STRING_EQUAL(oa->owner, "put n1");
    CU_ASSERT_FALSE(mt_obj_freeable(oa));    /* one ref */
    CU_ASSERT_FALSE(mt_obj_freeable(ob));    /* pending */
    ob->state = MT_OBJ_READY;
    CU_ASSERT_TRUE(mt_obj_freeable(ob));
    mt_obj_free(&ot, ob);
    CU_ASSERT_PTR_NULL(mt_obj_find(&ot, &b));
    CU_ASSERT_EQUAL(ot.map.count, 1);
    mt_obj_table_release(&ot); /* frees oa */
}

static void test_nodes_inline_error(void)
{
    struct mt_obj_table ot;
    mt_object_id a = mt_object_id_from_u64(9, 9);
    struct mt_obj *o;

    mt_obj_table_init(&ot);
    o = mt_obj_new(&ot, &a, MT_OBJ_PENDING, NULL, 2);
    mt_obj_add_node(o, "n1");
    mt_obj_add_node(o, "n2");
    mt_obj_add_node(o, "n1");                /* no duplicates */
    mt_obj_add_node(o, "");                  /* ignored */
    CU_ASSERT_EQUAL(o->n_nodes, 2);
    CU_ASSERT_TRUE(mt_obj_has_node(o, "n2"));
    CU_ASSERT_TRUE(mt_obj_drop_node(o, "n1"));
    CU_ASSERT_FALSE(mt_obj_drop_node(o, "n1"));
    CU_ASSERT_STRING_EQUAL(o->nodes[0], "n2");
    mt_obj_set_inline(o, "abc", 3);
    CU_ASSERT_TRUE(o->is_inline);
    CU_ASSERT_EQUAL(o->size, 3);
    CU_ASSERT_EQUAL(memcmp(o->data, "abc", 3), 0);
    mt_obj_set_inline(o, NULL, 0);
    CU_ASSERT_EQUAL(o->size, 0);
    mt_obj_set_error(o, MT_OBJ_FAILED, "boom");
    CU_ASSERT_EQUAL(o->state, MT_OBJ_FAILED);
    CU_ASSERT_STRING_EQUAL(o->error, "boom");
    CU_ASSERT_STRING_EQUAL(mt_obj_state_name(o->state), "FAILED");
    mt_obj_add_waiter(o, 7);
    mt_obj_add_waiter(o, 8);
    CU_ASSERT_EQUAL(o->n_waiters, 2);
    CU_ASSERT_EQUAL(o->waiters[1], 8);
    mt_obj_table_release(&ot);
}

static void test_many(void)
{
    struct mt_obj_table ot;

    mt_obj_table_init(&ot);
    for (uint64_t i = 0; i < 5000; i++) {
        mt_object_id id = mt_object_id_from_u64(i, ~i);
        mt_obj_new(&ot, &id, MT_OBJ_READY, "x", 1);
    }
    for (uint64_t i = 0; i < 5000; i += 2) {
        mt_object_id id = mt_object_id_from_u64(i, ~i);
        mt_obj_free(&ot, mt_obj_find(&ot, &id));
    }
    CU_ASSERT_EQUAL(ot.map.count, 2500);
    for (uint64_t i = 1; i < 5000; i += 2) {
        mt_object_id id = mt_object_id_from_u64(i, ~i);
        CU_ASSERT_PTR_NOT_NULL(mt_obj_find(&ot, &id));
    }
    mt_obj_table_release(&ot);
}

static void test_result_id(void)
{
    mt_object_id a, b;

    CU_ASSERT_EQUAL(mt_object_id_for_task("t0f17c5850000001", &a), 0);
    CU_ASSERT_EQUAL(memcmp(a.b, "manta-result", 12), 0);
    CU_ASSERT_EQUAL(a.b[19], 0x01);
    CU_ASSERT_EQUAL(a.b[12], 0x00);
    CU_ASSERT_EQUAL(a.b[13], 0xf1);
    CU_ASSERT_EQUAL(mt_object_id_for_task("t0F17C5850000001", &b), 0);
    CU_ASSERT_TRUE(mt_object_id_eq(&a, &b));
    CU_ASSERT_EQUAL(mt_object_id_for_task("t0f17c585000001", &b),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_object_id_for_task("00f17c585000000g", &b),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_object_id_for_task(NULL, &b), -MT_EINVAL);
}

CU_TestInfo mt_test_obj_table[] = {
    {"new_find_free", test_new_find_free},
    {"nodes_inline_error", test_nodes_inline_error},
    {"many", test_many},
    {"result_id", test_result_id},
    CU_TEST_INFO_NULL,
};
