/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_detect.c -- the node's resources (worker/detect.h): operator
 * overrides, custom resources overriding detected names, and detection from
 * a fake /proc/meminfo (mt_sys_set_proc_root) so the memory figure is
 * exact. Tests that re-root /proc restore "" and remove their directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/qty.h"
#include "common/sys.h"
#include "tests/unit/unit.h"
#include "worker/detect.h"

#define GIB (1024LL * 1024 * 1024)

/* ---- a fake /proc -------------------------------------------------------- */

struct fake_proc {
    char root[512];
    char dir[600];
    char meminfo[640];
};

/* Make root/proc; with text, also root/proc/meminfo. Re-roots /proc. */
static void fake_proc_init(struct fake_proc *fp, const char *meminfo)
{
    const char *base = getenv("TMPDIR");
    FILE *f;

    snprintf(fp->root, sizeof(fp->root), "%s/mt_ut_detect_XXXXXX",
             base && *base ? base : "/tmp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(fp->root));
    snprintf(fp->dir, sizeof(fp->dir), "%s/proc", fp->root);
    CU_ASSERT_EQUAL_FATAL(mkdir(fp->dir, 0755), 0);
    snprintf(fp->meminfo, sizeof(fp->meminfo), "%s/meminfo", fp->dir);
    if (meminfo) {
        f = fopen(fp->meminfo, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(meminfo, f);
        fclose(f);
    }
    mt_sys_set_proc_root(fp->root);
}

static void fake_proc_release(struct fake_proc *fp)
{
    mt_sys_set_proc_root("");
    unlink(fp->meminfo);
    CU_ASSERT_EQUAL(rmdir(fp->dir), 0);
    CU_ASSERT_EQUAL(rmdir(fp->root), 0);
}

static const char meminfo_16g[] = "MemTotal:       16777216 kB\n"
                                  "MemFree:         1048576 kB\n"
                                  "MemAvailable:    8388608 kB\n";

/* ---- overrides ----------------------------------------------------------- */

static void test_overrides(void)
{
    struct mt_qty_list custom = {NULL, 0, 0}, out = {NULL, 0, 0};
    struct mt_detect_opts o = {4 * MT_QTY_SCALE, 2 * MT_QTY_SCALE, GIB,
                               &custom};
    struct fake_proc fp;

    /* with every figure given, /proc is not needed at all */
    fake_proc_init(&fp, NULL);
    mt_qty_list_set(&custom, "accel", 5000);
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_EQUAL(out.n, 4);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU"), 40000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "GPU"), 20000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "memory"), GIB * MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "accel"), 5000);
    fake_proc_release(&fp);

    mt_qty_list_release(&custom);
    mt_qty_list_release(&out);
}

static void test_fractional_and_zero(void)
{
    struct mt_qty_list out = {NULL, 0, 0};
    struct mt_detect_opts o = {2500, 5000, 0, NULL};

    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU"), 2500);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "GPU"), 5000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "memory"), 0);
    mt_qty_list_release(&out);

    /* zero CPUs is a valid choice (a node for custom resources only) */
    o.num_cpus = 0;
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU"), 0);
    mt_qty_list_release(&out);
}

/* No GPUs (-1 or 0) means no GPU entry at all. */
static void test_no_gpus(void)
{
    static const int64_t gpus[] = {-1, 0};

    for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
        struct mt_qty_list out = {NULL, 0, 0};
        struct mt_detect_opts o = {MT_QTY_SCALE, gpus[i], GIB, NULL};

        CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
        CU_ASSERT_EQUAL(mt_qty_list_get(&out, "GPU"), -1);
        CU_ASSERT_EQUAL(out.n, 2);
        mt_qty_list_release(&out);
    }
}

static void test_custom_overrides_detected(void)
{
    struct mt_qty_list custom = {NULL, 0, 0}, out = {NULL, 0, 0};
    struct mt_detect_opts o = {-1, 2 * MT_QTY_SCALE, -1, &custom};
    struct fake_proc fp;

    fake_proc_init(&fp, meminfo_16g);
    mt_qty_list_set(&custom, "CPU", 10000);
    mt_qty_list_set(&custom, "memory", 7);
    mt_qty_list_set(&custom, "GPU", 30000);
    mt_qty_list_set(&custom, "TPU", 80000);
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_EQUAL(out.n, 4);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU"), 10000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "memory"), 7);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "GPU"), 30000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "TPU"), 80000);
    fake_proc_release(&fp);
    mt_qty_list_release(&custom);
    mt_qty_list_release(&out);
}

/* Entries already in out are replaced, others kept. */
static void test_fills_existing_list(void)
{
    struct mt_qty_list out = {NULL, 0, 0};
    struct mt_detect_opts o = {3 * MT_QTY_SCALE, -1, 100, NULL};

    mt_qty_list_set(&out, "CPU", 1);
    mt_qty_list_set(&out, "keep", 9);
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU"), 30000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "memory"), 100 * MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "keep"), 9);
    CU_ASSERT_EQUAL(out.n, 3);
    mt_qty_list_release(&out);
}

/* ---- detection ----------------------------------------------------------- */

static void test_detect_fake_proc(void)
{
    struct mt_qty_list out = {NULL, 0, 0};
    struct mt_detect_opts o = {-1, -1, -1, NULL};
    struct fake_proc fp;

    fake_proc_init(&fp, meminfo_16g);
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    /* MemTotal, not MemAvailable */
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "memory"),
                    16 * GIB * MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU"),
                    (int64_t)mt_sys_num_cpus() * MT_QTY_SCALE);
    CU_ASSERT_TRUE(mt_qty_list_get(&out, "CPU") >= MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "GPU"), -1);
    CU_ASSERT_EQUAL(out.n, 2);
    fake_proc_release(&fp);
    mt_qty_list_release(&out);
}

static void test_detect_unreadable(void)
{
    struct mt_qty_list out = {NULL, 0, 0};
    struct mt_detect_opts o = {-1, -1, -1, NULL};
    struct fake_proc fp;

    /* no meminfo at all */
    fake_proc_init(&fp, NULL);
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), -ENOENT);
    fake_proc_release(&fp);
    mt_qty_list_release(&out);

    /* a meminfo without MemTotal */
    fake_proc_init(&fp, "MemFree: 1 kB\nMemAvailable: 1 kB\n");
    CU_ASSERT_TRUE(mt_detect_resources(&o, &out) < 0);
    fake_proc_release(&fp);
    mt_qty_list_release(&out);

    /* with the memory given, the same broken /proc is fine */
    fake_proc_init(&fp, NULL);
    o.memory_bytes = 4096;
    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "memory"), 4096LL * MT_QTY_SCALE);
    fake_proc_release(&fp);
    mt_qty_list_release(&out);
}

/* The real machine: at least one CPU and some memory. */
static void test_detect_real(void)
{
    struct mt_qty_list out = {NULL, 0, 0};
    struct mt_detect_opts o = {-1, -1, -1, NULL};

    CU_ASSERT_EQUAL(mt_detect_resources(&o, &out), 0);
    CU_ASSERT_TRUE(mt_qty_list_get(&out, "CPU") >= MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&out, "CPU") % MT_QTY_SCALE, 0);
    CU_ASSERT_TRUE(mt_qty_list_get(&out, "memory") > 0);
    mt_qty_list_release(&out);
}

CU_TestInfo mt_test_detect[] = {
    {"overrides", test_overrides},
    {"fractional_and_zero", test_fractional_and_zero},
    {"no_gpus", test_no_gpus},
    {"custom_overrides_detected", test_custom_overrides_detected},
    {"fills_existing_list", test_fills_existing_list},
    {"detect_fake_proc", test_detect_fake_proc},
    {"detect_unreadable", test_detect_unreadable},
    {"detect_real", test_detect_real},
    CU_TEST_INFO_NULL,
};
