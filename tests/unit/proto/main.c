/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of proto/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_convert[];

static const struct mt_suite suites[] = {
    {"convert", mt_test_convert, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
