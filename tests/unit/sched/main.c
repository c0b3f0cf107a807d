/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c -- unit tests of the scheduler core: resources, labels, policies,
 * decide and priorities, placement groups, TPU slices, demand summary, the
 * randomized accounting property test and adoption after a head restart.
 */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_resources[];
extern CU_TestInfo mt_test_labels[];
extern CU_TestInfo mt_test_node[];
extern CU_TestInfo mt_test_policy[];
extern CU_TestInfo mt_test_sched[];
extern CU_TestInfo mt_test_pg[];
extern CU_TestInfo mt_test_slice[];
extern CU_TestInfo mt_test_demand[];
extern CU_TestInfo mt_test_check[];
extern CU_TestInfo mt_test_adopt[];

static const struct mt_suite suites[] = {
    {"resources", mt_test_resources, NULL, NULL},
    {"labels", mt_test_labels, NULL, NULL},
    {"node", mt_test_node, NULL, NULL},
    {"policy", mt_test_policy, NULL, NULL},
    {"sched", mt_test_sched, NULL, NULL},
    {"pg", mt_test_pg, NULL, NULL},
    {"slice", mt_test_slice, NULL, NULL},
    {"demand", mt_test_demand, NULL, NULL},
    {"check", mt_test_check, NULL, NULL},
    {"adopt", mt_test_adopt, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
