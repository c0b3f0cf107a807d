/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c -- unit tests of the scheduler core.
 */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_resources[];
extern CU_TestInfo mt_test_labels[];

static const struct mt_suite suites[] = {
    {"resources", mt_test_resources, NULL, NULL},
    {"labels", mt_test_labels, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
