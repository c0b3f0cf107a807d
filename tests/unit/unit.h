/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unit.h -- the shared CUnit runner used by every module's unit test binary.
 *
 * Each module's tests/unit/<module>/main.c lists its suites in an array of
 * struct mt_suite ending with {NULL} and calls mt_unit_main(). Each suite file
 * (test_<file>.c, mirroring <module>/<file>.c) exports a CU_TestInfo array.
 */
#ifndef MT_UNIT_H
#define MT_UNIT_H

#include <CUnit/CUnit.h>

struct mt_suite {
    const char *name;
    CU_TestInfo *tests;
    CU_InitializeFunc init;   /* may be NULL */
    CU_CleanupFunc cleanup;   /* may be NULL */
};

/*
 * mt_unit_main - run the suites (all, or those named on the command line).
 *
 * RET process exit code: 0 when every test passed, 1 otherwise
 */
int mt_unit_main(int argc, char **argv, const struct mt_suite *suites);

#endif /* MT_UNIT_H */
