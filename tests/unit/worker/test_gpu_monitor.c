/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_monitor.c -- the per-GPU figures monitor (worker/gpu_monitor.h)
 * without a driver: what read returns before any sample (unknown, with
 * the detected total), GPUs that are never polled (procfs, MIG), a broken
 * NVML path, and destroy returning. The polled figures themselves are
 * checked end to end with the stub NVML by tests/integration/test_gpu.py.
 */
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "worker/gpu_monitor.h"

/* Two GPUs: NVML device 1 (141 GiB) and a MIG instance. */
static void two_gpus(struct mt_gpu_list *l, const char *source)
{
    memset(l, 0, sizeof(*l));
    l->n = 2;
    l->source = source;
    l->v[0].index = 1;
    l->v[0].mem_total = 141ull << 30;
    snprintf(l->v[0].id, sizeof(l->v[0].id), "GPU-ab");
    snprintf(l->v[0].name, sizeof(l->v[0].name), "NVIDIA H200");
    snprintf(l->v[0].uuid, sizeof(l->v[0].uuid), "GPU-ab12");
    l->v[1].index = -1;
    snprintf(l->v[1].id, sizeof(l->v[1].id), "MIG-1234");
    snprintf(l->v[1].name, sizeof(l->v[1].name), "NVIDIA H200");
    snprintf(l->v[1].uuid, sizeof(l->v[1].uuid), "MIG-1234");
}

static void check_unknown(const struct mt_gpu_stat *s, int n)
{
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(s[0].index, 1);
    CU_ASSERT_STRING_EQUAL(s[0].id, "GPU-ab");
    CU_ASSERT_STRING_EQUAL(s[0].uuid, "GPU-ab12");
    CU_ASSERT_STRING_EQUAL(s[0].name, "NVIDIA H200");
    CU_ASSERT_EQUAL(s[0].mem_total, (int64_t)(141ull << 30));
    CU_ASSERT_EQUAL(s[0].mem_used, -1);
    CU_ASSERT_EQUAL(s[0].util_percent, -1);
    CU_ASSERT_EQUAL(s[1].index, -1);
    CU_ASSERT_STRING_EQUAL(s[1].id, "MIG-1234");
    CU_ASSERT_EQUAL(s[1].mem_total, -1);
    CU_ASSERT_EQUAL(s[1].mem_used, -1);
    CU_ASSERT_EQUAL(s[1].util_percent, -1);
}

static void test_not_polled(void)
{
    struct mt_gpu_list l;
    struct mt_gpu_stat s[4];
    struct mt_gpu_monitor *m = NULL;

    two_gpus(&l, "procfs");
    CU_ASSERT_EQUAL_FATAL(mt_gpu_monitor_create(&l, NULL, 1000, &m), 0);
    check_unknown(s, mt_gpu_monitor_read(m, s, 4));
    CU_ASSERT_EQUAL(mt_gpu_monitor_read(m, s, 1), 1); /* max holds */
    mt_gpu_monitor_destroy(m);
    mt_gpu_monitor_destroy(NULL);
}

static void test_no_gpus(void)
{
    struct mt_gpu_list l = {0};
    struct mt_gpu_stat s[1];
    struct mt_gpu_monitor *m = NULL;

    l.source = "none";
    CU_ASSERT_EQUAL_FATAL(mt_gpu_monitor_create(&l, NULL, 50, &m), 0);
    CU_ASSERT_EQUAL(mt_gpu_monitor_read(m, s, 1), 0);
    mt_gpu_monitor_destroy(m);
}

static void test_nvml_missing(void)
{
    struct mt_gpu_list l;
    struct mt_gpu_stat s[4];
    struct mt_gpu_monitor *m = NULL;

    /* The helper cannot open NVML: figures stay unknown; destroy waits
     * for it to give up. */
    two_gpus(&l, "nvml");
    CU_ASSERT_EQUAL_FATAL(mt_gpu_monitor_create(&l, "/nonexistent/nvml.so",
                                                100, &m), 0);
    check_unknown(s, mt_gpu_monitor_read(m, s, 4));
    mt_gpu_monitor_destroy(m);
}

CU_TestInfo mt_test_gpu_monitor[] = {
    {"not_polled", test_not_polled},
    {"no_gpus", test_no_gpus},
    {"nvml_missing", test_nvml_missing},
    CU_TEST_INFO_NULL,
};
