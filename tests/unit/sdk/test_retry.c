/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_retry.c -- sdk/retry.c's policy: the reconnect deadline read from
 * MANTA_HEAD_RECONNECT_TIMEOUT, the backoff, which failures are worth
 * another attempt, when the deadline has passed and the message then.
 */
#include <string.h>
#include <grpc/status.h>

#include "sdk/retry.h"
#include "tests/unit/unit.h"

static void test_limit(void)
{
    CU_ASSERT_EQUAL(mt__retry_limit_ms(NULL), 60000);
    CU_ASSERT_EQUAL(mt__retry_limit_ms(""), 60000);
    CU_ASSERT_EQUAL(mt__retry_limit_ms("2"), 2000);
    CU_ASSERT_EQUAL(mt__retry_limit_ms("0"), 0);
    CU_ASSERT_EQUAL(mt__retry_limit_ms("-1"), 60000);
    CU_ASSERT_EQUAL(mt__retry_limit_ms("2s"), 60000);
    CU_ASSERT_EQUAL(mt__retry_limit_ms("99999999"), 60000);
}

static void test_backoff(void)
{
    CU_ASSERT_EQUAL(mt__retry_backoff_ms(1), 50);
    CU_ASSERT_EQUAL(mt__retry_backoff_ms(2), 100);
    CU_ASSERT_EQUAL(mt__retry_backoff_ms(5), 800);
    CU_ASSERT_EQUAL(mt__retry_backoff_ms(6), 1000);
    CU_ASSERT_EQUAL(mt__retry_backoff_ms(1000), 1000);
}

static void test_wanted(void)
{
    /* A refused or reset connection is; a live head's answer is not. */
    CU_ASSERT_TRUE(mt__retry_wanted(GRPC_STATUS_UNAVAILABLE,
                                    MT__REPEAT_SAFE, true, false));
    CU_ASSERT_FALSE(mt__retry_wanted(GRPC_STATUS_NOT_FOUND,
                                     MT__REPEAT_SAFE, true, true));
    CU_ASSERT_FALSE(mt__retry_wanted(GRPC_STATUS_INVALID_ARGUMENT,
                                     MT__REPEAT_SAFE, false, false));
    /* A deadline only while the head is known away. */
    CU_ASSERT_TRUE(mt__retry_wanted(GRPC_STATUS_DEADLINE_EXCEEDED,
                                    MT__REPEAT_SAFE, true, false));
    CU_ASSERT_FALSE(mt__retry_wanted(GRPC_STATUS_DEADLINE_EXCEEDED,
                                     MT__REPEAT_SAFE, false, false));
    /* A counting call only when it began with the head away. */
    CU_ASSERT_FALSE(mt__retry_wanted(GRPC_STATUS_UNAVAILABLE,
                                     MT__REPEAT_UNSENT, true, false));
    CU_ASSERT_TRUE(mt__retry_wanted(GRPC_STATUS_UNAVAILABLE,
                                    MT__REPEAT_UNSENT, true, true));
}

static void test_due(void)
{
    CU_ASSERT_TRUE(mt__retry_due(1000, 1000, 0)); /* retries off */
    CU_ASSERT_FALSE(mt__retry_due(0, 99999, 2000)); /* not away */
    CU_ASSERT_FALSE(mt__retry_due(1000, 2999, 2000));
    CU_ASSERT_TRUE(mt__retry_due(1000, 3000, 2000));
}

static void test_give_up_text(void)
{
    char buf[128];

    mt__retry_give_up_text("127.0.0.1:6380", 60000, buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "head 127.0.0.1:6380 unreachable for 60 s "
                                "(MANTA_HEAD_RECONNECT_TIMEOUT)");
}

CU_TestInfo mt_test_sdk_retry[] = {
    {"limit", test_limit},
    {"backoff", test_backoff},
    {"wanted", test_wanted},
    {"due", test_due},
    {"give_up_text", test_give_up_text},
    CU_TEST_INFO_NULL,
};
