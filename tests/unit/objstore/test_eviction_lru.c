/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_eviction_lru.c -- the LRU policy on its own: order, sizes, removal.
 */
#include "objstore/eviction.h"

#include <stdlib.h>

#include "tests/unit/unit.h"

static void test_order(void)
{
    const struct mt_evict_ops *ops = &mt_evict_lru;
    void *st, *slot[4];
    mt_object_id id[4], *v;
    size_t n;

    CU_ASSERT_FATAL(ops->init(&st) == 0);
    for (int i = 0; i < 4; i++) {
        id[i] = mt_object_id_from_u64((uint64_t)i, 0);
        ops->add(st, &id[i], 100, MT_EVICT_DROP, &slot[i]);
    }
    /* Touch 0: remove and re-add makes it most recent. */
    ops->remove(st, &slot[0]);
    CU_ASSERT_PTR_NULL(slot[0]);
    ops->add(st, &id[0], 100, MT_EVICT_DROP, &slot[0]);

    CU_ASSERT_EQUAL(ops->require_space(st, 150, &v, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(mt_object_id_eq(&v[0], &id[1]));
    CU_ASSERT(mt_object_id_eq(&v[1], &id[2]));
    free(v);
    CU_ASSERT_EQUAL(ops->require_space(st, 10000, &v, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT(mt_object_id_eq(&v[3], &id[0]));
    free(v);
    ops->remove(st, &slot[1]);
    ops->remove(st, &slot[2]);
    ops->remove(st, &slot[3]);
    ops->remove(st, &slot[0]);
    CU_ASSERT_EQUAL(ops->require_space(st, 1, &v, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(v);
    ops->add(st, &id[0], 1, MT_EVICT_SPILL, &slot[0]);
    ops->destroy(st); /* frees what is left */
    ops->destroy(NULL);
}

/* Evictable copies go before any primary is spilled, even newer ones. */
static void test_drop_before_spill(void)
{
    const struct mt_evict_ops *ops = &mt_evict_lru;
    void *st, *slot[4];
    mt_object_id id[4], *v;
    size_t n;

    CU_ASSERT_FATAL(ops->init(&st) == 0);
    for (int i = 0; i < 4; i++) {
        id[i] = mt_object_id_from_u64((uint64_t)i, 1);
        ops->add(st, &id[i], 100, i < 2 ? MT_EVICT_SPILL : MT_EVICT_DROP,
                 &slot[i]);
    }
    CU_ASSERT_EQUAL(ops->require_space(st, 150, &v, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(mt_object_id_eq(&v[0], &id[2]));
    CU_ASSERT(mt_object_id_eq(&v[1], &id[3]));
    free(v);
    CU_ASSERT_EQUAL(ops->require_space(st, 350, &v, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT(mt_object_id_eq(&v[2], &id[0]));
    CU_ASSERT(mt_object_id_eq(&v[3], &id[1]));
    free(v);
    ops->remove(st, &slot[3]);
    ops->remove(st, &slot[0]);
    CU_ASSERT_EQUAL(ops->require_space(st, 1000, &v, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(mt_object_id_eq(&v[0], &id[2]));
    CU_ASSERT(mt_object_id_eq(&v[1], &id[1]));
    free(v);
    ops->destroy(st);
}

CU_TestInfo mt_test_eviction_lru[] = {
    {"order", test_order},
    {"drop_before_spill", test_drop_before_spill},
    CU_TEST_INFO_NULL,
};
