/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tensor.c -- tensor descriptor validation (DLPack codes, bit widths
 * per code, 0-d scalars, bounds).
 */
#include "objstore/tensor.h"

#include "common/error.h"
#include "tests/unit/unit.h"

static struct mt_tensor_desc f32(int64_t r, int64_t c)
{
    struct mt_tensor_desc t = {.code = MT_DL_FLOAT, .bits = 32, .lanes = 1,
                               .ndim = 2};

    t.shape[0] = r;
    t.shape[1] = c;
    return t;
}

static void test_compact(void)
{
    struct mt_tensor_desc t = f32(3, 4);

    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 48);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 48), 0);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 47), -MT_EINVAL);
    t.code = MT_DL_BFLOAT;
    t.bits = 16;
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 24);
    t.ndim = 0; /* a scalar */
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 2);
}

/* complex64/128 and bool (DLPack codes 5 and 6), and 0-d scalars. */
static void test_complex_bool_scalar(void)
{
    struct mt_tensor_desc t = f32(3, 4);

    t.code = MT_DL_COMPLEX;
    t.bits = 64;
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 96);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 96), 0);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 95), -MT_EINVAL);
    t.bits = 128;
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 192);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 192), 0);
    t.bits = 8; /* no complex of one byte */
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t.code = MT_DL_BOOL;
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 12);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 12), 0);
    t.bits = 16; /* a bool is one byte */
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t.bits = 1;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    /* ndim 0: one element, whatever the type. */
    t = f32(3, 4);
    t.ndim = 0;
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 4);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 4), 0);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 3), -MT_EINVAL);
    t.code = MT_DL_COMPLEX;
    t.bits = 128;
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), 16);
    t.code = MT_DL_BOOL;
    t.bits = 8;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1), 0);
}

static void test_strided(void)
{
    struct mt_tensor_desc t = f32(3, 4);

    /* Transposed view of a 4x3 buffer: strides (1, 3) in elements. */
    t.strides[0] = 1;
    t.strides[1] = 3;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 48), 0);
    t.strides[1] = 4; /* furthest element 2 + 3 * 4 = 14 -> 60 bytes */
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 59), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 60), 0);
    t.strides[0] = -1;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
}

static void test_invalid(void)
{
    struct mt_tensor_desc t = f32(3, 4);

    t.code = 3; /* kDLOpaqueHandle: not a value type */
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t.code = 7; /* beyond DLPack's codes the store knows */
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t = f32(3, 4);
    t.lanes = 0;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t = f32(3, 4);
    t.bits = 12;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t = f32(3, 4);
    t.ndim = 9;
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t = f32(-1, 4);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, 1000), -MT_EINVAL);
    t = f32(INT64_MAX, INT64_MAX);
    CU_ASSERT_EQUAL(mt_tensor_nbytes(&t), UINT64_MAX);
    CU_ASSERT_EQUAL(mt_tensor_check(&t, UINT64_MAX - 1), -MT_EINVAL);
}

CU_TestInfo mt_test_tensor[] = {
    {"compact", test_compact},
    {"complex_bool_scalar", test_complex_bool_scalar},
    {"strided", test_strided},
    {"invalid", test_invalid},
    CU_TEST_INFO_NULL,
};
