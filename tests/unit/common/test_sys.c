/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_sys.c -- host facts and file helpers of common/sys.h.
 *
 * Memory and CPU load are read from a fake /proc tree written into a fresh
 * temporary directory (mt_sys_set_proc_root), so the expected numbers are
 * exact; every test that re-roots /proc puts it back to "" and removes its
 * directory before returning.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/sys.h"
#include "tests/unit/unit.h"

/* ---- helpers ------------------------------------------------------------- */

/* Make a fresh directory; returns an owned path (free with rm_tree). */
static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(512);

    CU_ASSERT_FATAL(path != NULL);
    snprintf(path, 512, "%s/mt_ut_sys_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path)) {
        free(path);
        CU_FAIL_FATAL("mkdtemp failed");
    }
    return path;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    return remove(path);
}

/* Remove the tree at path and free the path. */
static void rm_tree(char *path)
{
    CU_ASSERT_EQUAL(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
    free(path);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);

    CU_ASSERT_FATAL(p != NULL);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Write root/proc/<name> with contents (plain write, not the helper). */
static void write_proc(const char *root, const char *name, const char *text)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc", root);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/proc/%s", root, name);
    f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* Entries in dir, not counting "." and "..". */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    CU_ASSERT_FATAL(d != NULL);
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static bool is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- ids and plain facts ------------------------------------------------- */

static void test_random_hex(void)
{
    char a[40], b[40];

    memset(a, '#', sizeof(a));
    mt_random_hex(a, 16);
    CU_ASSERT_EQUAL(strlen(a), 32);
    CU_ASSERT_EQUAL(strspn(a, "0123456789abcdef"), 32);
    CU_ASSERT_EQUAL(a[33], '#'); /* nothing written past the NUL */

    mt_random_hex(b, 16);
    CU_ASSERT_EQUAL(strlen(b), 32);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);

    mt_random_hex(a, 1);
    CU_ASSERT_EQUAL(strlen(a), 2);
    CU_ASSERT_EQUAL(strspn(a, "0123456789abcdef"), 2);
    mt_random_hex(a, 0);
    CU_ASSERT_STRING_EQUAL(a, "");
}

/* Over many ids every hex digit shows up: the charset is all of [0-9a-f]. */
static void test_random_hex_charset(void)
{
    char seen[16] = {0}, buf[129];
    int kinds = 0;

    for (int round = 0; round < 8; round++) {
        mt_random_hex(buf, 64);
        CU_ASSERT_EQUAL(strlen(buf), 128);
        for (const char *p = buf; *p; p++) {
            const char *at = strchr("0123456789abcdef", *p);

            CU_ASSERT_FATAL(at != NULL);
            seen[at - "0123456789abcdef"] = 1;
        }
    }
    for (int i = 0; i < 16; i++)
        kinds += seen[i];
    CU_ASSERT_EQUAL(kinds, 16);
}

static void test_facts(void)
{
    char buf[64];
    int64_t m1 = mt_now_mono_ms(), m2 = mt_now_mono_ms();

    CU_ASSERT_TRUE(mt_sys_num_cpus() >= 1);
    CU_ASSERT_TRUE(m1 > 0);
    CU_ASSERT_TRUE(m2 >= m1);
    CU_ASSERT_TRUE(mt_now_wall_ms() > 1600000000000LL); /* after 2020 */

    mt_sys_hostname(buf, sizeof(buf));
    CU_ASSERT_TRUE(buf[0] != '\0');
    CU_ASSERT_TRUE(strlen(buf) < sizeof(buf));

    mt_sys_primary_ip(buf, sizeof(buf));
    CU_ASSERT_TRUE(mt_valid_ipv4(buf));
}

/* ---- /proc/meminfo ------------------------------------------------------- */

static void test_meminfo(void)
{
    char *root = make_tmpdir();
    uint64_t total = 1, avail = 1;

    write_proc(root, "meminfo",
               "MemTotal:       16384000 kB\n"
               "MemFree:         1000000 kB\n"
               "MemAvailable:    8192000 kB\n"
               "Buffers:          123456 kB\n");
    mt_sys_set_proc_root(root);
    CU_ASSERT_EQUAL(mt_sys_meminfo(&total, &avail), 0);
    CU_ASSERT_EQUAL(total, 16384000ULL * 1024);
    CU_ASSERT_EQUAL(avail, 8192000ULL * 1024);

    /* order does not matter */
    write_proc(root, "meminfo",
               "MemAvailable: 1 kB\nSwapTotal: 0 kB\nMemTotal: 2 kB\n");
    CU_ASSERT_EQUAL(mt_sys_meminfo(&total, &avail), 0);
    CU_ASSERT_EQUAL(total, 2048);
    CU_ASSERT_EQUAL(avail, 1024);

    /* an old kernel without MemAvailable, or garbage: -EINVAL */
    write_proc(root, "meminfo", "MemTotal: 2 kB\nMemFree: 1 kB\n");
    CU_ASSERT_EQUAL(mt_sys_meminfo(&total, &avail), -EINVAL);
    write_proc(root, "meminfo", "");
    CU_ASSERT_EQUAL(mt_sys_meminfo(&total, &avail), -EINVAL);

    mt_sys_set_proc_root("");
    rm_tree(root);
}

static void test_meminfo_missing(void)
{
    char *root = make_tmpdir();
    uint64_t total, avail;

    mt_sys_set_proc_root(root);
    CU_ASSERT_EQUAL(mt_sys_meminfo(&total, &avail), -ENOENT);
    mt_sys_set_proc_root("");
    rm_tree(root);

    /* back on the real /proc */
    CU_ASSERT_EQUAL(mt_sys_meminfo(&total, &avail), 0);
    CU_ASSERT_TRUE(total > 0);
    CU_ASSERT_TRUE(avail <= total);
}

/* ---- /proc/stat ---------------------------------------------------------- */

static void test_cpu_sample(void)
{
    char *root = make_tmpdir();
    struct mt_cpu_sample a = {0, 0}, b = {0, 0};

    /* user nice system idle iowait irq softirq steal guest guest_nice */
    write_proc(root, "stat",
               "cpu  100 20 30 800 50 0 0 0 40 0\n"
               "cpu0 100 20 30 800 50 0 0 0 40 0\n"
               "intr 12345\n");
    mt_sys_set_proc_root(root);
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&a), 0);
    CU_ASSERT_EQUAL(a.total, 1000); /* guest is already in user */
    CU_ASSERT_EQUAL(a.busy, 150);

    /* 100 more ticks: 25 busy, 75 idle or iowait */
    write_proc(root, "stat", "cpu  110 20 45 860 65 0 0 0 40 0\n");
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&b), 0);
    CU_ASSERT_EQUAL(b.total, 1100);
    CU_ASSERT_EQUAL(b.busy, 175);
    CU_ASSERT_DOUBLE_EQUAL(mt_sys_cpu_percent(&a, &b), 25.0, 1e-9);

    /* old kernels print only four fields */
    write_proc(root, "stat", "cpu 1 2 3 4\n");
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&a), 0);
    CU_ASSERT_EQUAL(a.total, 10);
    CU_ASSERT_EQUAL(a.busy, 6);

    /* no cpu line, too few fields, missing file */
    write_proc(root, "stat", "intr 1 2 3\n");
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&a), -EINVAL);
    write_proc(root, "stat", "cpu 1 2 3\n");
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&a), -EINVAL);
    {
        char *stat_path = join(root, "proc/stat");

        CU_ASSERT_EQUAL(unlink(stat_path), 0);
        free(stat_path);
    }
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&a), -ENOENT);

    mt_sys_set_proc_root("");
    rm_tree(root);

    /* the real /proc/stat reads */
    CU_ASSERT_EQUAL(mt_sys_cpu_sample(&a), 0);
    CU_ASSERT_TRUE(a.total > 0);
    CU_ASSERT_TRUE(a.busy <= a.total);
}

static void test_cpu_percent(void)
{
    static const struct {
        struct mt_cpu_sample a, b;
        double want;
    } cases[] = {
        {{0, 0}, {50, 100}, 50.0},
        {{10, 100}, {10, 200}, 0.0},     /* idle */
        {{10, 100}, {110, 200}, 100.0},  /* fully busy */
        {{10, 100}, {10, 100}, 0.0},     /* no time passed */
        {{10, 100}, {5, 50}, 0.0},       /* counters went back */
        {{50, 100}, {40, 200}, 0.0},     /* busy went back */
        {{0, 100}, {300, 200}, 0.0},     /* busy grew more than total */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CU_ASSERT_DOUBLE_EQUAL(mt_sys_cpu_percent(&cases[i].a, &cases[i].b),
                               cases[i].want, 1e-9);
}

/* ---- files --------------------------------------------------------------- */

static void test_mkdir_p(void)
{
    char *root = make_tmpdir();
    char *deep = join(root, "a/b/c"), *slash = join(root, "x/y/");
    char *file = join(root, "f"), *under = join(root, "f/sub/dir");

    CU_ASSERT_EQUAL(mt_sys_mkdir_p(deep), 0);
    CU_ASSERT_TRUE(is_dir(deep));
    CU_ASSERT_EQUAL(mt_sys_mkdir_p(deep), 0); /* already there */
    CU_ASSERT_EQUAL(mt_sys_mkdir_p(root), 0);
    CU_ASSERT_EQUAL(mt_sys_mkdir_p(slash), 0);
    CU_ASSERT_TRUE(is_dir(slash));

    /* a regular file in the way */
    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(file, "x"), 0);
    CU_ASSERT_EQUAL(mt_sys_mkdir_p(under), -ENOTDIR);

    free(deep);
    free(slash);
    free(file);
    free(under);
    rm_tree(root);
}

static void test_write_read_file(void)
{
    char *root = make_tmpdir();
    char *path = join(root, "state.json");
    char *nodir = join(root, "missing/state.json");
    char *got, *big;

    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(path, "{\"a\": 1}\n"), 0);
    got = mt_sys_read_file(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, "{\"a\": 1}\n");
    free(got);

    /* overwrite with something shorter, then with nothing */
    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(path, "b"), 0);
    got = mt_sys_read_file(path);
    CU_ASSERT_STRING_EQUAL(got, "b");
    free(got);
    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(path, ""), 0);
    got = mt_sys_read_file(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, "");
    free(got);

    /* larger than one read chunk */
    big = malloc(20001);
    CU_ASSERT_FATAL(big != NULL);
    for (int i = 0; i < 20000; i++)
        big[i] = (char)('A' + i % 23);
    big[20000] = '\0';
    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(path, big), 0);
    got = mt_sys_read_file(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(strlen(got), 20000);
    CU_ASSERT_STRING_EQUAL(got, big);
    free(got);
    free(big);

    /* no temporary file is left behind next to the target */
    CU_ASSERT_EQUAL(count_entries(root), 1);

    /* errors */
    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(nodir, "x"), -ENOENT);
    errno = 0;
    CU_ASSERT_PTR_NULL(mt_sys_read_file(nodir));
    CU_ASSERT_EQUAL(errno, ENOENT);

    free(path);
    free(nodir);
    rm_tree(root);
}

/* mt_sys_write_all: everything through a pipe (more than its buffer, read
 * by a child), and -EPIPE, not a signal, once the reader is gone. */
static void test_write_all(void)
{
    static char big[256 * 1024];
    int fds[2];
    pid_t pid;
    int status;

    memset(big, 'x', sizeof(big));
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        char buf[4096];
        size_t got = 0;
        ssize_t k;

        close(fds[1]);
        while ((k = read(fds[0], buf, sizeof(buf))) > 0)
            got += (size_t)k;
        _exit(got == sizeof(big) ? 0 : 1);
    }
    close(fds[0]);
    CU_ASSERT_EQUAL(mt_sys_write_all(fds[1], big, sizeof(big)), 0);
    close(fds[1]);
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    CU_ASSERT_EQUAL(mt_sys_write_all(fds[1], "x", 1), -EPIPE);
    signal(SIGPIPE, SIG_DFL);
    close(fds[1]);
    CU_ASSERT_EQUAL(mt_sys_write_all(-1, "x", 1), -EBADF);
    CU_ASSERT_EQUAL(mt_sys_write_all(-1, "x", 0), 0);
}

CU_TestInfo mt_test_sys[] = {
    {"random_hex", test_random_hex},
    {"random_hex_charset", test_random_hex_charset},
    {"facts", test_facts},
    {"meminfo", test_meminfo},
    {"meminfo_missing", test_meminfo_missing},
    {"cpu_sample", test_cpu_sample},
    {"cpu_percent", test_cpu_percent},
    {"mkdir_p", test_mkdir_p},
    {"write_read_file", test_write_read_file},
    {"write_all", test_write_all},
    CU_TEST_INFO_NULL,
};

/* ---- KNOWN BUGS: these fail until the code is fixed ---------------------- */

/*
 * KNOWN BUG (common/sys.c mt_sys_mkdir_p): for the empty path the loop starts
 * at p + 1, one past the NUL of the 1-byte copy, and reads the heap beyond
 * it (ASan: heap-buffer-overflow, aborting the run). Expected: -ENOENT, as
 * mkdir("") gives, with no out-of-bounds read. worker/main.c and head/main.c
 * pass the --temp-dir value straight in, so `--temp-dir ''` reaches it.
 */
static void test_bug_mkdir_p_empty(void)
{
    CU_ASSERT_EQUAL(mt_sys_mkdir_p(""), -ENOENT);
}

CU_TestInfo mt_test_sys_regressions[] = {
    {"mkdir_p_empty", test_bug_mkdir_p_empty},
    CU_TEST_INFO_NULL,
};
