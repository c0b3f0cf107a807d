/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of head/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_node_table[];
extern CU_TestInfo mt_test_storage[];
extern CU_TestInfo mt_test_storage_file[];
extern CU_TestInfo mt_test_task_table[];
extern CU_TestInfo mt_test_obj_table[];
extern CU_TestInfo mt_test_obj_owners[];
extern CU_TestInfo mt_test_actor_table[];
extern CU_TestInfo mt_test_gang_ports[];
extern CU_TestInfo mt_test_tasks[];
extern CU_TestInfo mt_test_persist[];
extern CU_TestInfo mt_test_history[];
extern CU_TestInfo mt_test_api[];

static const struct mt_suite suites[] = {
    {"node_table", mt_test_node_table, NULL, NULL},
    {"storage", mt_test_storage, NULL, NULL},
    {"storage_file", mt_test_storage_file, NULL, NULL},
    {"task_table", mt_test_task_table, NULL, NULL},
    {"obj_table", mt_test_obj_table, NULL, NULL},
    {"obj_owners", mt_test_obj_owners, NULL, NULL},
    {"actor_table", mt_test_actor_table, NULL, NULL},
    {"gang_ports", mt_test_gang_ports, NULL, NULL},
    {"tasks", mt_test_tasks, NULL, NULL},
    {"persist", mt_test_persist, NULL, NULL},
    {"history", mt_test_history, NULL, NULL},
    {"api", mt_test_api, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
