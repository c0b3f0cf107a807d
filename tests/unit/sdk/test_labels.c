/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_labels.c -- the public mt_label_op (manta/task.h) mirrors
 * common/selector.h's enum, as the public error codes mirror
 * common/error.h's. This file includes common/selector.h first, so
 * manta/task.h skips its own definition (the SDK's include-order rule);
 * test_error.c, which sees only the public header, hands over its values.
 */
#include <stddef.h>

#include "common/selector.h"
#include "manta/task.h"
#include "tests/unit/unit.h"

extern const int mt_test_public_label_ops[];
extern const size_t mt_test_n_public_label_ops;

static void test_ops_mirror_common(void)
{
    static const enum mt_label_op common[] = {
        MT_LABEL_EQ,     MT_LABEL_NE,     MT_LABEL_IN,
        MT_LABEL_NOT_IN, MT_LABEL_EXISTS, MT_LABEL_NOT_EXISTS,
    };
    mt_label_op op = MT_LABEL_IN; /* the public typedef still works */

    CU_ASSERT_EQUAL(mt_test_n_public_label_ops, MT_LABEL_OP_COUNT);
    for (size_t i = 0; i < MT_LABEL_OP_COUNT; i++)
        CU_ASSERT_EQUAL(mt_test_public_label_ops[i], (int)common[i]);
    CU_ASSERT_EQUAL(op, 2);
}

CU_TestInfo mt_test_sdk_labels[] = {
    {"ops_mirror_common", test_ops_mirror_common},
    CU_TEST_INFO_NULL,
};
