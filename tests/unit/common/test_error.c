/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_error.c -- error table: names, messages, retryable classes.
 */
#include <errno.h>
#include <string.h>

#include "common/error.h"
#include "tests/unit/unit.h"

static void test_names_and_messages(void)
{
    CU_ASSERT_STRING_EQUAL(mt_err_name(-MT_ENOENT), "MT_ENOENT");
    CU_ASSERT_STRING_EQUAL(mt_err_name(-MT_EVERSION), "MT_EVERSION");
    CU_ASSERT_STRING_EQUAL(mt_strerror(-MT_EINFEASIBLE),
                           "no node can ever satisfy the request");
    CU_ASSERT_STRING_EQUAL(mt_strerror(0), "success");
    CU_ASSERT_STRING_EQUAL(mt_err_name(-ENOENT), "ENOENT");
    CU_ASSERT_STRING_EQUAL(mt_strerror(-EPIPE), strerror(EPIPE));
    CU_ASSERT_STRING_EQUAL(mt_err_name(-99999), "UNKNOWN");
}

static void test_retryable(void)
{
    CU_ASSERT_TRUE(mt_err_retryable(-MT_EAGAIN));
    CU_ASSERT_TRUE(mt_err_retryable(-MT_EUNAVAIL));
    CU_ASSERT_FALSE(mt_err_retryable(-MT_EINFEASIBLE));
    CU_ASSERT_FALSE(mt_err_retryable(-MT_EPROTO));
    CU_ASSERT_TRUE(mt_err_retryable(-ECONNREFUSED));
    CU_ASSERT_FALSE(mt_err_retryable(-EINVAL));
}

CU_TestInfo mt_test_error[] = {
    {"names_and_messages", test_names_and_messages},
    {"retryable", test_retryable},
    CU_TEST_INFO_NULL,
};
