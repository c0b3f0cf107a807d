/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of common/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_error[];
extern CU_TestInfo mt_test_rpc[];
extern CU_TestInfo mt_test_qty[];
extern CU_TestInfo mt_test_strbuf[];
extern CU_TestInfo mt_test_sys[];
extern CU_TestInfo mt_test_parse[];
extern CU_TestInfo mt_test_selector[];
extern CU_TestInfo mt_test_defs[];
extern CU_TestInfo mt_test_ids[];
extern CU_TestInfo mt_test_auth[];
extern CU_TestInfo mt_test_proc[];
extern CU_TestInfo mt_test_strindex[];
extern CU_TestInfo mt_test_http[];
extern CU_TestInfo mt_test_prom[];
extern CU_TestInfo mt_test_procstat[];
extern CU_TestInfo mt_test_toml[];
extern CU_TestInfo mt_test_qty_regressions[];
extern CU_TestInfo mt_test_sys_regressions[];
int mt_test_rpc_setup(void);
int mt_test_rpc_teardown(void);

static const struct mt_suite suites[] = {
    {"error", mt_test_error, NULL, NULL},
    {"rpc", mt_test_rpc, mt_test_rpc_setup, mt_test_rpc_teardown},
    {"qty", mt_test_qty, NULL, NULL},
    {"strbuf", mt_test_strbuf, NULL, NULL},
    {"sys", mt_test_sys, NULL, NULL},
    {"parse", mt_test_parse, NULL, NULL},
    {"auth", mt_test_auth, NULL, NULL},
    {"selector", mt_test_selector, NULL, NULL},
    {"defs", mt_test_defs, NULL, NULL},
    {"ids", mt_test_ids, NULL, NULL},
    {"proc", mt_test_proc, NULL, NULL},
    {"strindex", mt_test_strindex, NULL, NULL},
    {"http", mt_test_http, NULL, NULL},
    {"prom", mt_test_prom, NULL, NULL},
    {"procstat", mt_test_procstat, NULL, NULL},
    {"toml", mt_test_toml, NULL, NULL},
    /* Known bugs, reported and awaiting fixes: these fail until then. They
     * run last because the sys one aborts the run under ASan. */
    {"qty_regressions", mt_test_qty_regressions, NULL, NULL},
    {"sys_regressions", mt_test_sys_regressions, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
