/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_proc.c -- common/proc.h: parsing /proc/<pid>/stat (command names
 * with spaces and parentheses), this process as /proc shows it, the
 * record's text format both ways, and the sweep's refusals: a record
 * whose owner still runs, and a group whose leader's pid now names
 * another process, are left alone. Killing real leftovers is covered end
 * to end by tests/integration/test_orphans.py.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/proc.h"
#include "tests/unit/unit.h"

static void test_stat_parse(void)
{
    struct mt_proc_stat st;
    const char *line = "4242 (we (ird) name) S 4000 4100 4100 0 -1 4194560 "
                       "10 0 0 0 1 2 0 0 20 0 1 0 183530 2330624 100 "
                       "18446744073709551615\n";

    CU_ASSERT_EQUAL_FATAL(mt_proc_stat_parse(line, &st), 0);
    CU_ASSERT_EQUAL(st.pid, 4242);
    CU_ASSERT_EQUAL(st.state, 'S');
    CU_ASSERT_EQUAL(st.ppid, 4000);
    CU_ASSERT_EQUAL(st.pgrp, 4100);
    CU_ASSERT_EQUAL(st.start, 183530);
    CU_ASSERT_EQUAL(mt_proc_stat_parse("", &st), -MT_EPROTO);
    CU_ASSERT_EQUAL(mt_proc_stat_parse("12 (x) S 1 2", &st), -MT_EPROTO);
    CU_ASSERT_EQUAL(mt_proc_stat_parse("x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 "
                                       "13 14 15 16 17 18 19 20", &st),
                    -MT_EPROTO);
}

static void test_stat_self(void)
{
    struct mt_proc_stat st;

    CU_ASSERT_EQUAL_FATAL(mt_proc_stat_read(getpid(), &st), 0);
    CU_ASSERT_EQUAL(st.pid, getpid());
    CU_ASSERT_EQUAL(st.ppid, getppid());
    CU_ASSERT_EQUAL(st.pgrp, getpgrp());
    CU_ASSERT(st.start > 0);
    CU_ASSERT(mt_proc_alive(getpid(), st.start));
    CU_ASSERT(!mt_proc_alive(getpid(), st.start + 1));
    CU_ASSERT(!mt_proc_alive(0, st.start));
    CU_ASSERT_EQUAL(mt_proc_stat_read(0x7ffffffe, &st), -ENOENT);
}

static void test_record_round_trip(void)
{
    struct mt_proc_record r = {{0, 0}, NULL, 0, 0}, back;
    char *text;

    r.owner.pid = 4012;
    r.owner.start = 183521;
    mt_proc_record_add(&r, 4077, 183530);
    mt_proc_record_add(&r, 4080, 18446744073709551615ull);
    text = mt_proc_record_format(&r);
    CU_ASSERT_STRING_EQUAL(text,
                           "# manta-worker process groups: pid start-time\n"
                           "owner 4012 183521\n"
                           "group 4077 183530\n"
                           "group 4080 18446744073709551615\n");
    CU_ASSERT_EQUAL_FATAL(mt_proc_record_parse(text, &back), 0);
    CU_ASSERT_EQUAL(back.owner.pid, 4012);
    CU_ASSERT_EQUAL(back.owner.start, 183521);
    CU_ASSERT_EQUAL_FATAL(back.n, 2);
    CU_ASSERT_EQUAL(back.groups[1].pid, 4080);
    CU_ASSERT_EQUAL(back.groups[1].start, 18446744073709551615ull);
    free(text);
    mt_proc_record_release(&back);
    mt_proc_record_release(&r);
    CU_ASSERT_EQUAL(r.n, 0);
    CU_ASSERT_PTR_NULL(r.groups);
}

static void test_record_parse_errors(void)
{
    static const char *bad[] = {
        "group 12\n",           "group x 1\n",
        "group 0 1\n",          "group 12 1 extra\n",
        "leader 12 1\n",        "owner 1 1\nowner 2 2\n",
    };
    struct mt_proc_record r;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT_EQUAL(mt_proc_record_parse(bad[i], &r), -MT_EPROTO);
        mt_proc_record_release(&r);
    }
    CU_ASSERT_EQUAL(mt_proc_record_parse("\n# c\n\ngroup 7 9 \r\n", &r), 0);
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_EQUAL(r.owner.pid, 0);
    mt_proc_record_release(&r);
}

/* The owner runs (our parent, with its real start time): nothing is
 * touched. Once the owner is gone, a group led by our pid but recorded
 * with another start time (a reused pid) is skipped, and the sweeper's
 * own group is never touched: we survive the sweep. */
static void test_sweep_refusals(void)
{
    struct mt_proc_record r = {{0, 0}, NULL, 0, 0};
    struct mt_proc_stat parent, self;
    int killed = -1;

    CU_ASSERT_EQUAL_FATAL(mt_proc_stat_read(getppid(), &parent), 0);
    CU_ASSERT_EQUAL_FATAL(mt_proc_stat_read(getpid(), &self), 0);
    r.owner.pid = getppid();
    r.owner.start = parent.start;
    mt_proc_record_add(&r, getpid(), self.start + 1);
    CU_ASSERT_EQUAL(mt_proc_record_sweep(&r, &killed), -MT_ESTATE);
    CU_ASSERT_EQUAL(killed, 0);
    r.owner.start = parent.start + 1; /* that owner is gone */
    CU_ASSERT_EQUAL(mt_proc_record_sweep(&r, &killed), 0);
    CU_ASSERT_EQUAL(killed, 0);
    mt_proc_record_release(&r);
    CU_ASSERT_EQUAL(mt_proc_record_sweep_file("/nonexistent/worker.procs",
                                              &killed), 0);
    CU_ASSERT_EQUAL(killed, 0);
}

CU_TestInfo mt_test_proc[] = {
    {"stat_parse", test_stat_parse},
    {"stat_self", test_stat_self},
    {"record_round_trip", test_record_round_trip},
    {"record_parse_errors", test_record_parse_errors},
    {"sweep_refusals", test_sweep_refusals},
    CU_TEST_INFO_NULL,
};
