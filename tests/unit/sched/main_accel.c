/* SPDX-License-Identifier: Apache-2.0 */
/* main_accel.c -- unit tests of sched/tpu.c and sched/accel_env.c. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_tpu[];
extern CU_TestInfo mt_test_accel_env[];

static const struct mt_suite suites[] = {
    {"tpu", mt_test_tpu, NULL, NULL},
    {"accel_env", mt_test_accel_env, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
