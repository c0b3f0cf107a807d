/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_store_main.c -- manta-store's command line: --help, bad arguments,
 * and a clean exit on SIGTERM (the suites using store_proc.c check that
 * on every stop as well).
 */
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#include "store_proc.h"
#include "tests/unit/unit.h"

struct argv_holder {
    char *const *argv;
};

static int exec_store(void *arg)
{
    struct argv_holder *h = arg;
    int devnull = open("/dev/null", 1);

    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    execv(MT_STORE_BIN, h->argv);
    return 127;
}

static int run_store(char *const *argv)
{
    struct argv_holder h = {argv};

    return child_wait(child_start(exec_store, &h), 10000);
}

static void test_args(void)
{
    char *help[] = {"manta-store", "--help", NULL};
    char *nosock[] = {"manta-store", "--memory", "1M", NULL};
    char *badmem[] = {"manta-store", "--socket", "/tmp/x", "--memory", "lots",
                      NULL};
    char *extra[] = {"manta-store", "--socket", "/tmp/x", "stray", NULL};
    char *tiny[] = {"manta-store", "--socket", "/tmp/mt-tiny.sock",
                    "--memory", "100", NULL};

    CU_ASSERT_EQUAL(run_store(help), 0);
    CU_ASSERT_EQUAL(run_store(nosock), 2);
    CU_ASSERT_EQUAL(run_store(badmem), 2);
    CU_ASSERT_EQUAL(run_store(extra), 2);
    CU_ASSERT_EQUAL(run_store(tiny), 1);
}

static void test_sigterm(void)
{
    struct store_proc p;

    CU_ASSERT_FATAL(store_proc_start(&p, 1u << 20, true) == 0);
    CU_ASSERT_EQUAL(access(p.sock, F_OK), 0);
    CU_ASSERT_EQUAL(store_proc_stop(&p), 0);
    CU_ASSERT_NOT_EQUAL(access(p.sock, F_OK), 0);
}

CU_TestInfo mt_test_store_main[] = {
    {"args", test_args},
    {"sigterm", test_sigterm},
    CU_TEST_INFO_NULL,
};
