/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_procstat.c -- process and host figures (common/procstat.h) from a
 * fake /proc: a comm with spaces and parentheses, btime, the fd count,
 * /proc/net/dev without lo, malformed files; and the live process, whose
 * families must all be there.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/procstat.h"
#include "common/strbuf.h"
#include "tests/unit/unit.h"

static char *make_root(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(512);

    CU_ASSERT_FATAL(path != NULL);
    snprintf(path, 512, "%s/mt_ut_procstat_XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(path)) {
        free(path);
        CU_FAIL_FATAL("mkdtemp failed");
    }
    return path;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(char *path)
{
    CU_ASSERT_EQUAL(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
    free(path);
}

static void put(const char *root, const char *name, const char *text)
{
    char path[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, name);
    f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void fake_proc(const char *root)
{
    char path[600];

    snprintf(path, sizeof(path), "%s/self", root);
    CU_ASSERT_FATAL(mkdir(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/self/fd", root);
    CU_ASSERT_FATAL(mkdir(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/net", root);
    CU_ASSERT_FATAL(mkdir(path, 0700) == 0);
    put(root, "self/fd/0", "");
    put(root, "self/fd/1", "");
    put(root, "self/fd/7", "");
    put(root, "stat", "cpu  1 2 3 4\nintr 5\nbtime 1700000000\n");
}

static void test_self(void)
{
    char *root = make_root();
    struct mt_procstat ps;
    long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    char line[512];

    fake_proc(root);
    /* utime 14 = 3*tck, stime 15 = tck, starttime 22 = 10*tck. */
    snprintf(line, sizeof(line),
             "42 (a b) c)) S 1 42 42 0 -1 4194560 100 0 0 0 %ld %ld 0 0 20 "
             "0 1 0 %ld 123456789 25 18446744073709551615\n",
             3 * tck, tck, 10 * tck);
    put(root, "self/stat", line);
    CU_ASSERT_EQUAL_FATAL(mt_procstat_read(root, &ps), 0);
    CU_ASSERT_DOUBLE_EQUAL(ps.cpu_seconds, 4.0, 1e-9);
    CU_ASSERT_EQUAL(ps.resident_bytes, 25 * (uint64_t)page);
    CU_ASSERT_EQUAL(ps.virtual_bytes, 123456789);
    CU_ASSERT_EQUAL(ps.open_fds, 3);
    CU_ASSERT_DOUBLE_EQUAL(ps.start_time_seconds, 1700000010.0, 1e-6);
    put(root, "self/stat", "42 (x) S 1 2\n");
    CU_ASSERT_EQUAL(mt_procstat_read(root, &ps), -MT_EPROTO);
    CU_ASSERT_EQUAL(ps.open_fds, 0);
    rm_tree(root);
}

static void test_missing(void)
{
    struct mt_procstat ps;
    uint64_t rx, tx, used, total;

    CU_ASSERT(mt_procstat_read("/nonexistent-proc", &ps) < 0);
    CU_ASSERT(mt_procstat_net("/nonexistent-proc", &rx, &tx) < 0);
    CU_ASSERT_EQUAL(rx + tx, 0);
    CU_ASSERT(mt_procstat_disk("/nonexistent-dir/x", &used, &total) < 0);
    CU_ASSERT_EQUAL(used + total, 0);
}

static void test_net(void)
{
    char *root = make_root();
    uint64_t rx, tx;

    fake_proc(root);
    put(root, "net/dev",
        "Inter-|   Receive                            |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast"
        "|bytes    packets errs drop fifo colls carrier compressed\n"
        "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
        "  eth0: 200 2 0 0 0 0 0 0 300 3 0 0 0 0 0 0\n"
        "wlan0:5 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n");
    CU_ASSERT_EQUAL(mt_procstat_net(root, &rx, &tx), 0);
    CU_ASSERT_EQUAL(rx, 205);
    CU_ASSERT_EQUAL(tx, 307);
    put(root, "net/dev", "h\nh\n eth0: 1 2\n");
    CU_ASSERT_EQUAL(mt_procstat_net(root, &rx, &tx), -MT_EPROTO);
    rm_tree(root);
}

static void test_live(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_procstat ps;
    uint64_t used, total;
    static const char *const fams[] = {
        "process_cpu_seconds_total ", "process_resident_memory_bytes ",
        "process_open_fds ", "process_start_time_seconds ",
    };

    CU_ASSERT_EQUAL_FATAL(mt_procstat_read(NULL, &ps), 0);
    CU_ASSERT(ps.resident_bytes > 0);
    CU_ASSERT(ps.open_fds >= 1);
    CU_ASSERT(ps.start_time_seconds > 1e9);
    CU_ASSERT_EQUAL(mt_procstat_disk("/", &used, &total), 0);
    CU_ASSERT(total > 0 && used <= total);
    mt_procstat_metrics(&sb);
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        char want[128];

        snprintf(want, sizeof(want), "# TYPE %s", fams[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(sb.buf, want));
    }
    mt_strbuf_release(&sb);
}

CU_TestInfo mt_test_procstat[] = {
    {"self", test_self},
    {"missing", test_missing},
    {"net", test_net},
    {"live", test_live},
    CU_TEST_INFO_NULL,
};
