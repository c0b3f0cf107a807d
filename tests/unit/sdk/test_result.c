/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_result.c -- sdk/result.c: the result id of a task (the derivation
 * the head, worker and executor share), argument checks of the report
 * calls, and the result file written whole through a rename. Reports
 * inside real tasks run in tests/integration/test_python.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit.h"

#include "sdk/result.c" /* write_file() is static */

static void test_result_id(void)
{
    mt_object_id id, want;

    CU_ASSERT_EQUAL(mt_task_result_id("t0000000000000a1", &id), 0);
    CU_ASSERT_EQUAL(mt_object_id_for_task("t0000000000000a1", &want), 0);
    CU_ASSERT_TRUE(mt_object_id_eq(&id, &want));
    CU_ASSERT_EQUAL(memcmp(id.b, "manta-result", 12), 0);
    CU_ASSERT_EQUAL(id.b[19], 0xa1);
    CU_ASSERT_EQUAL(mt_task_result_id("xyz", &id), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_result_id("t0000000000000a1ff", &id),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_result_id(NULL, &id), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_result_id("t0000000000000a1", NULL), -MT_EINVAL);
}

static void test_report_needs_a_client(void)
{
    mt_object_id id;

    memset(&id, 0, sizeof(id));
    CU_ASSERT_EQUAL(mt_report_result(NULL, "x", 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_report_result_tensor(NULL, "x", 1, MT_DTYPE_UINT, 8,
                                            0, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_report_result_object(NULL, &id, 0), -MT_EINVAL);
    CU_ASSERT_TRUE(strlen(mt_client_last_error(NULL)) > 0);
}

static void test_write_file(void)
{
    char dir[] = "/tmp/mt-test-sdkres-XXXXXX", path[64], tmp[80], buf[80];
    mt_object_id id;
    FILE *f;
    size_t n;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/r", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    CU_ASSERT_EQUAL_FATAL(mt_object_id_for_task("t000000000000102", &id), 0);
    CU_ASSERT_EQUAL(write_file(path, &id), 0);
    CU_ASSERT_EQUAL(access(tmp, F_OK), -1);
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    CU_ASSERT_STRING_EQUAL(buf, "object 6d616e74612d726573756c740000000000"
                                "000102\n");
    unlink(path);
    rmdir(dir);
    /* A folder that is gone: an error, no file. */
    CU_ASSERT_TRUE(write_file(path, &id) < 0);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
}

CU_TestInfo mt_test_sdk_result[] = {
    {"result_id", test_result_id},
    {"report_needs_a_client", test_report_needs_a_client},
    {"write_file", test_write_file},
    CU_TEST_INFO_NULL,
};
