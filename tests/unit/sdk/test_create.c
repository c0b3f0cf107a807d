/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_create.c -- sdk/object.c, zero-copy create and seal: the argument
 * checks that need no cluster (a missing client, bad dtype or shape, size
 * 0 tensors) and the buffer accessors on NULL. Create, write, seal, abort,
 * double seal and reads on another node run against a real cluster in
 * tests/integration (sdk_smoke create, test_python.py).
 */
#include <stddef.h>
#include <stdint.h>

#include <manta/manta.h>

#include "tests/unit/unit.h"

static void test_create_needs_a_client(void)
{
    mt_wbuffer_t *w = (mt_wbuffer_t *)1;
    mt_object_id id;
    int64_t shape[2] = {2, 3};

    CU_ASSERT_EQUAL(mt_create(NULL, 64, 0, &id, &w), -MT_EINVAL);
    CU_ASSERT_PTR_NULL(w);
    w = (mt_wbuffer_t *)1;
    CU_ASSERT_EQUAL(mt_create_tensor(NULL, 0, MT_DTYPE_FLOAT, 32, 2, shape,
                                     &id, &w), -MT_EINVAL);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_EQUAL(mt_seal(NULL, NULL), -MT_EINVAL);
}

static void test_create_tensor_checks(void)
{
    mt_wbuffer_t *w = NULL;
    mt_object_id id;
    int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, neg[1] = {-1};

    /* Too many dimensions, no shape, a dtype that is not a value type, a
     * negative extent: refused before any client is looked at. */
    CU_ASSERT_EQUAL(mt_create_tensor(NULL, 0, MT_DTYPE_FLOAT, 32, 9, shape,
                                     &id, &w), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_create_tensor(NULL, 0, MT_DTYPE_FLOAT, 32, 1, NULL,
                                     &id, &w), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_create_tensor(NULL, 0, (mt_dtype_code)3, 8, 1, shape,
                                     &id, &w), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_create_tensor(NULL, 0, MT_DTYPE_FLOAT, 32, 1, neg,
                                     &id, &w), -MT_EINVAL);
    CU_ASSERT_PTR_NULL(w);
}

static void test_wbuffer_null(void)
{
    CU_ASSERT_PTR_NULL(mt_wbuffer_data(NULL));
    CU_ASSERT_EQUAL(mt_wbuffer_size(NULL), 0);
    CU_ASSERT_PTR_NULL(mt_wbuffer_id(NULL));
    mt_wbuffer_release(NULL);
}

CU_TestInfo mt_test_sdk_create[] = {
    {"create_needs_a_client", test_create_needs_a_client},
    {"create_tensor_checks", test_create_tensor_checks},
    {"wbuffer_null", test_wbuffer_null},
    CU_TEST_INFO_NULL,
};
