/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of sdk/ (libmanta's pure parts). */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_sdk_error[];
extern CU_TestInfo mt_test_sdk_queue[];
extern CU_TestInfo mt_test_sdk_task_opts[];
extern CU_TestInfo mt_test_sdk_tagmap[];
extern CU_TestInfo mt_test_sdk_result[];
extern CU_TestInfo mt_test_sdk_watch[];
extern CU_TestInfo mt_test_sdk_labels[];
extern CU_TestInfo mt_test_sdk_create[];
extern CU_TestInfo mt_test_sdk_lease_policy[];
extern CU_TestInfo mt_test_sdk_retry[];

static const struct mt_suite suites[] = {
    {"error", mt_test_sdk_error, NULL, NULL},
    {"queue", mt_test_sdk_queue, NULL, NULL},
    {"task_opts", mt_test_sdk_task_opts, NULL, NULL},
    {"tagmap", mt_test_sdk_tagmap, NULL, NULL},
    {"result", mt_test_sdk_result, NULL, NULL},
    {"watch", mt_test_sdk_watch, NULL, NULL},
    {"labels", mt_test_sdk_labels, NULL, NULL},
    {"create", mt_test_sdk_create, NULL, NULL},
    {"lease_policy", mt_test_sdk_lease_policy, NULL, NULL},
    {"retry", mt_test_sdk_retry, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
