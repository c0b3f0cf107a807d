/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of common/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_error[];
extern CU_TestInfo mt_test_rpc[];
int mt_test_rpc_setup(void);
int mt_test_rpc_teardown(void);

static const struct mt_suite suites[] = {
    {"error", mt_test_error, NULL, NULL},
    {"rpc", mt_test_rpc, mt_test_rpc_setup, mt_test_rpc_teardown},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
