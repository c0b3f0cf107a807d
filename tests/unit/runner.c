/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runner.c -- CUnit main shared by the unit test binaries.
 *
 * CU_basic_run_tests() returns success even when tests fail, so the exit code
 * comes from CU_get_number_of_failures() (notes/grpc-core.md section 1).
 */
#include "unit.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

static int wanted(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int mt_unit_main(int argc, char **argv, const struct mt_suite *suites)
{
    unsigned failures;

    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "cunit: %s\n", CU_get_error_msg());
        return 1;
    }
    for (const struct mt_suite *s = suites; s->name; s++) {
        CU_pSuite suite;

        if (!wanted(argc, argv, s->name))
            continue;
        suite = CU_add_suite(s->name, s->init, s->cleanup);
        if (!suite) {
            fprintf(stderr, "cunit: %s\n", CU_get_error_msg());
            CU_cleanup_registry();
            return 1;
        }
        for (CU_TestInfo *t = s->tests; t->pName; t++)
            CU_add_test(suite, t->pName, t->pTestFunc);
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
