/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_idmap.c -- the intrusive id hash map: insert, find, remove, walk.
 */
#include "objstore/idmap.h"

#include "tests/unit/unit.h"

struct rec {
    struct mt_idmap_node node;
    int value;
};

static void test_basic(void)
{
    enum { N = 1000 };
    static struct rec r[N];
    struct mt_idmap m;
    struct mt_idmap_node *n, *next;
    mt_object_id absent = mt_object_id_from_u64(N + 5, 7);
    int seen = 0;

    mt_idmap_init(&m);
    for (int i = 0; i < N; i++) {
        r[i].node.id = mt_object_id_from_u64((uint64_t)i, 7);
        r[i].value = i;
        mt_idmap_insert(&m, &r[i].node);
    }
    CU_ASSERT_EQUAL(m.count, N);
    for (int i = 0; i < N; i++) {
        n = mt_idmap_find(&m, &r[i].node.id);
        CU_ASSERT_FATAL(n != NULL);
        CU_ASSERT_EQUAL(MT_CONTAINER_OF(n, struct rec, node)->value, i);
    }
    CU_ASSERT_PTR_NULL(mt_idmap_find(&m, &absent));
    for (n = mt_idmap_first(&m); n; n = next) {
        next = mt_idmap_next(&m, n);
        if (MT_CONTAINER_OF(n, struct rec, node)->value % 2)
            mt_idmap_remove(&m, n);
        seen++;
    }
    CU_ASSERT_EQUAL(seen, N);
    CU_ASSERT_EQUAL(m.count, N / 2);
    CU_ASSERT_PTR_NULL(mt_idmap_find(&m, &r[1].node.id));
    CU_ASSERT_PTR_NOT_NULL(mt_idmap_find(&m, &r[2].node.id));
    mt_idmap_release(&m);
}

CU_TestInfo mt_test_idmap[] = {
    {"basic", test_basic},
    CU_TEST_INFO_NULL,
};
