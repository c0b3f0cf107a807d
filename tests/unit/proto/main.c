/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of proto/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_convert[];
extern CU_TestInfo mt_test_list_json[];

static const struct mt_suite suites[] = {
    {"convert", mt_test_convert, NULL, NULL},
    {"list_json", mt_test_list_json, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
