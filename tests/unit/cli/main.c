/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of cli/ (the pure parts of the `manta` command). */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_top_render[];
extern CU_TestInfo mt_test_cluster_file[];

static const struct mt_suite suites[] = {
    {"top_render", mt_test_top_render, NULL, NULL},
    {"cluster_file", mt_test_cluster_file, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
