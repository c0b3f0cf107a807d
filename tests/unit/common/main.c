/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of common/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_error[];

static const struct mt_suite suites[] = {
    {"error", mt_test_error, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
