/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of head/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_node_table[];
extern CU_TestInfo mt_test_storage[];
extern CU_TestInfo mt_test_tasks[];
extern CU_TestInfo mt_test_objects[];
extern CU_TestInfo mt_test_actors[];
extern CU_TestInfo mt_test_gang_ports[];

static const struct mt_suite suites[] = {
    {"node_table", mt_test_node_table, NULL, NULL},
    {"storage", mt_test_storage, NULL, NULL},
    {"tasks", mt_test_tasks, NULL, NULL},
    {"objects", mt_test_objects, NULL, NULL},
    {"actors", mt_test_actors, NULL, NULL},
    {"gang_ports", mt_test_gang_ports, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
