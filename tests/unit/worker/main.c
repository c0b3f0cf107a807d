/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of worker/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_detect[];
extern CU_TestInfo mt_test_detect_gpu[];
extern CU_TestInfo mt_test_gpu_monitor[];
extern CU_TestInfo mt_test_tasks[];
extern CU_TestInfo mt_test_exec_proto[];
extern CU_TestInfo mt_test_detect_tpu[];
extern CU_TestInfo mt_test_task_result[];
extern CU_TestInfo mt_test_rpc_checks[];
extern CU_TestInfo mt_test_chunk_wire[];
extern CU_TestInfo mt_test_leases[];
extern CU_TestInfo mt_test_holdings[];

static const struct mt_suite suites[] = {
    {"detect", mt_test_detect, NULL, NULL},
    {"detect_gpu", mt_test_detect_gpu, NULL, NULL},
    {"gpu_monitor", mt_test_gpu_monitor, NULL, NULL},
    {"tasks", mt_test_tasks, NULL, NULL},
    {"exec_proto", mt_test_exec_proto, NULL, NULL},
    {"detect_tpu", mt_test_detect_tpu, NULL, NULL},
    {"task_result", mt_test_task_result, NULL, NULL},
    {"rpc_checks", mt_test_rpc_checks, NULL, NULL},
    {"chunk_wire", mt_test_chunk_wire, NULL, NULL},
    {"leases", mt_test_leases, NULL, NULL},
    {"holdings", mt_test_holdings, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
