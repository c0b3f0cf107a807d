/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_history.c -- the dashboard's time series (head/history.h): rings
 * that wrap, seconds without samples read as null (skipped ones, stale
 * ones, ones past a long pause), the bound on what is kept, samples out
 * of order, bfloat16 node rows, nodes dropped when the table forgets them
 * or they stay DEAD, a node's figures from the node table, and the JSON.
 *
 * Time is passed in: every test picks its own clock values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "head/history.h"
#include "head/node_table.h"
#include "tests/unit/unit.h"

#define T0 1700000000000LL /* a second boundary, in wall ms */

static void cluster_row(double v[MT_HC_N], double x)
{
    for (int k = 0; k < MT_HC_N; k++)
        v[k] = x + k;
}

static double at(const struct mt_history *hs, const char *id, unsigned k,
                 int64_t ms)
{
    double v;

    CU_ASSERT_FATAL(mt_history_read(hs, id, k, ms, 1, &v) == 0);
    return v;
}

static void test_ring_wraps(void)
{
    struct mt_history *hs;
    double row[MT_HC_N], v[4];

    CU_ASSERT_FATAL(mt_history_create(4, &hs) == 0);
    for (int s = 0; s < 10; s++) {
        cluster_row(row, s);
        mt_history_put_cluster(hs, T0 + s * 1000 + 250, row);
    }
    CU_ASSERT(mt_history_last_ms(hs) == T0 + 9000);
    /* The last 4 seconds, oldest first; older ones are gone. */
    CU_ASSERT_FATAL(mt_history_read(hs, NULL, MT_HC_CPU_USED, T0 + 9999, 4,
                                    v) == 0);
    CU_ASSERT(v[0] == 6 && v[1] == 7 && v[2] == 8 && v[3] == 9);
    CU_ASSERT(isnan(at(hs, NULL, MT_HC_CPU_USED, T0 + 5000)));
    CU_ASSERT(at(hs, NULL, MT_HC_FAILED, T0 + 9000) == 9 + MT_HC_FAILED);
    /* The future reads as null too. */
    CU_ASSERT(isnan(at(hs, NULL, MT_HC_CPU_USED, T0 + 10000)));
    CU_ASSERT(mt_history_read(hs, NULL, MT_HC_N, T0, 1, v) == -MT_EINVAL);
    mt_history_destroy(hs);
}

static void test_gaps_are_null(void)
{
    struct mt_history *hs;
    double row[MT_HC_N];

    CU_ASSERT_FATAL(mt_history_create(10, &hs) == 0);
    cluster_row(row, 1);
    mt_history_put_cluster(hs, T0, row);
    cluster_row(row, 4);
    mt_history_put_cluster(hs, T0 + 3000, row); /* 2 seconds skipped */
    CU_ASSERT(at(hs, NULL, 0, T0) == 1);
    CU_ASSERT(isnan(at(hs, NULL, 0, T0 + 1000)));
    CU_ASSERT(isnan(at(hs, NULL, 0, T0 + 2000)));
    CU_ASSERT(at(hs, NULL, 0, T0 + 3000) == 4);
    /* A pause longer than the ring: everything before reads null, even
     * the rows whose slots were not rewritten. */
    cluster_row(row, 50);
    mt_history_put_cluster(hs, T0 + 25000, row);
    for (int s = 0; s < 25; s++)
        CU_ASSERT(isnan(at(hs, NULL, 0, T0 + s * 1000)));
    CU_ASSERT(at(hs, NULL, 0, T0 + 25000) == 50);
    /* A second sample in the same second replaces the first; a late one
     * within the ring fills its slot; one older than the ring is ignored. */
    cluster_row(row, 51);
    mt_history_put_cluster(hs, T0 + 25900, row);
    CU_ASSERT(at(hs, NULL, 0, T0 + 25000) == 51);
    cluster_row(row, 49);
    mt_history_put_cluster(hs, T0 + 24000, row);
    CU_ASSERT(at(hs, NULL, 0, T0 + 24000) == 49);
    cluster_row(row, 7);
    mt_history_put_cluster(hs, T0 + 5000, row);
    CU_ASSERT(isnan(at(hs, NULL, 0, T0 + 5000)));
    CU_ASSERT(mt_history_last_ms(hs) == T0 + 25000);
    /* NaN values are nulls. */
    row[0] = NAN;
    mt_history_put_cluster(hs, T0 + 26000, row);
    CU_ASSERT(isnan(at(hs, NULL, 0, T0 + 26000)));
    mt_history_destroy(hs);
}

static void test_bounds(void)
{
    struct mt_history *hs;
    double row[MT_HN_N] = {0};
    char id[32];
    size_t one, two;

    CU_ASSERT(mt_history_create(0, &hs) == -MT_EINVAL && !hs);
    CU_ASSERT(mt_history_create(MT_HISTORY_MAX_SECONDS + 1, &hs) ==
              -MT_EINVAL);
    CU_ASSERT_FATAL(mt_history_create(3600, &hs) == 0);
    CU_ASSERT(mt_history_seconds(hs) == 3600);
    mt_history_put_node(hs, "n0", T0, row);
    one = mt_history_bytes(hs);
    mt_history_put_node(hs, "n1", T0, row);
    two = mt_history_bytes(hs);
    /* A node costs 3600 s x 9 series x 2 bytes (and its id). */
    CU_ASSERT(two - one >= 3600 * MT_HN_N * 2 &&
              two - one < 3600 * MT_HN_N * 2 + 64);
    /* Samples over hours keep the memory where it is. */
    for (int s = 1; s < 3 * 3600; s += 7)
        mt_history_put_node(hs, "n1", T0 + s * 1000LL, row);
    CU_ASSERT(mt_history_bytes(hs) == two);
    for (int i = 2; i < 100; i++) {
        snprintf(id, sizeof(id), "n%d", i);
        mt_history_put_node(hs, id, T0, row);
    }
    CU_ASSERT(mt_history_n_nodes(hs) == 100);
    for (int i = 0; i < 100; i += 2) {
        snprintf(id, sizeof(id), "n%d", i);
        mt_history_drop_node(hs, id);
    }
    mt_history_drop_node(hs, "unknown");
    CU_ASSERT(mt_history_n_nodes(hs) == 50);
    CU_ASSERT(!mt_history_has_node(hs, "n0") &&
              mt_history_has_node(hs, "n99"));
    mt_history_destroy(hs);
    mt_history_destroy(NULL);
}

static void test_bf16_rows(void)
{
    struct mt_history *hs;
    double row[MT_HN_N], v;

    CU_ASSERT_FATAL(mt_history_create(60, &hs) == 0);
    for (int k = 0; k < MT_HN_N; k++)
        row[k] = NAN;
    row[MT_HN_CPU_RATIO] = 0.3;
    row[MT_HN_MEM_TOTAL] = 25275953152.0;
    row[MT_HN_CPU_USED] = 3;
    row[MT_HN_GPU_USED] = 0.5;
    mt_history_put_node(hs, "n", T0, row);
    v = at(hs, "n", MT_HN_CPU_RATIO, T0);
    CU_ASSERT(fabs(v - 0.3) < 0.3 / 128);
    v = at(hs, "n", MT_HN_MEM_TOTAL, T0);
    CU_ASSERT(fabs(v - 25275953152.0) < 25275953152.0 / 128);
    CU_ASSERT(at(hs, "n", MT_HN_CPU_USED, T0) == 3); /* small ints exact */
    CU_ASSERT(at(hs, "n", MT_HN_GPU_USED, T0) == 0.5);
    CU_ASSERT(isnan(at(hs, "n", MT_HN_GPU_UTIL, T0)));
    CU_ASSERT(mt_history_read(hs, "m", 0, T0, 1, &v) == -MT_ENOENT);
    mt_history_destroy(hs);
}

static void test_json(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_history *hs;
    double row[MT_HC_N];

    CU_ASSERT_FATAL(mt_history_create(5, &hs) == 0);
    cluster_row(row, 0);
    row[MT_HC_MEM_TOTAL] = 17179869184.0;
    mt_history_put_cluster(hs, T0 + 1000, row);
    CU_ASSERT(mt_history_json(hs, NULL, 3, T0 + 2500, &sb) == 0);
    CU_ASSERT(strstr(sb.buf, "\"interval_ms\": 1000, \"end_ms\": "
                             "1700000002000, \"node_id\": null") != NULL);
    CU_ASSERT(strstr(sb.buf, "\"CPU_used\": [null, 0, null]") != NULL);
    CU_ASSERT(strstr(sb.buf, "\"memory_total_bytes\": [null, 17179869184, "
                             "null]") != NULL);
    CU_ASSERT(strstr(sb.buf, "\"tasks_failed_total\": [null, 14, null]") !=
              NULL);
    sb.len = 0;
    /* seconds 0 or past the ring: the whole ring. */
    CU_ASSERT(mt_history_json(hs, NULL, 0, T0 + 1000, &sb) == 0);
    CU_ASSERT(strstr(sb.buf, "\"CPU_total\": [null, null, null, null, 1]") !=
              NULL);
    sb.len = 0;
    CU_ASSERT(mt_history_json(hs, "nope", 3, T0, &sb) == -MT_ENOENT);
    CU_ASSERT(sb.len == 0);
    mt_strbuf_release(&sb);
    mt_history_destroy(hs);
}

/* A node registered in t with CPU 4, GPU 2, TPU 0, a store of 1000 B. */
static struct mt_node *node(struct mt_node_table *t, const char *id)
{
    struct mt_qty_list total = {0};
    struct mt_kv_list labels = {0};
    struct mt_node_reg r;
    struct mt_node *n;
    int err = 0;

    memset(&r, 0, sizeof(r));
    mt_qty_list_set(&total, "CPU", 4 * MT_QTY_SCALE);
    mt_qty_list_set(&total, "GPU", 2 * MT_QTY_SCALE);
    mt_qty_list_set(&total, "object_store_memory", 1000LL * MT_QTY_SCALE);
    r.id = id;
    r.address = "10.0.0.1:7000";
    r.node_ip = r.hostname = r.temp_dir = r.version = "x";
    r.total = &total;
    r.labels = &labels;
    n = mt_node_table_register(t, &r, 0, T0, NULL, &err);
    CU_ASSERT_FATAL(n != NULL);
    mt_qty_list_release(&total);
    mt_kv_list_release(&labels);
    return n;
}

static void test_figures_and_sample(void)
{
    struct mt_history_tasks tc = {3, 2, 1, 10, 4};
    struct mt_node_gpu g[2];
    struct mt_node_table t;
    struct mt_history *hs;
    struct mt_node *a, *b;
    double v[MT_HN_N];

    mt_node_table_init(&t);
    a = node(&t, "a");
    b = node(&t, "b");
    mt_qty_list_set(&a->avail, "CPU", 1 * MT_QTY_SCALE);
    mt_qty_list_set(&a->avail, "GPU", 1 * MT_QTY_SCALE);
    mt_qty_list_set(&a->avail, "object_store_memory", 400LL * MT_QTY_SCALE);
    a->usage.cpu_percent = 50;
    a->usage.mem_used_bytes = 100;
    a->usage.mem_total_bytes = 400;
    memset(g, 0, sizeof(g));
    g[0].util_percent = 40;
    g[0].mem_used = 10;
    g[1].util_percent = -1; /* unknown: left out of the mean */
    g[1].mem_used = -1;
    mt_node_table_set_gpus(a, g, 2);
    mt_history_node_figures(a, v);
    CU_ASSERT(v[MT_HN_CPU_RATIO] == 0.5 && v[MT_HN_MEM_USED] == 100 &&
              v[MT_HN_MEM_TOTAL] == 400);
    CU_ASSERT(v[MT_HN_GPU_UTIL] == 0.4 && v[MT_HN_GPU_MEM_USED] == 10);
    CU_ASSERT(v[MT_HN_CPU_USED] == 3 && v[MT_HN_GPU_USED] == 1 &&
              v[MT_HN_TPU_USED] == 0 && v[MT_HN_OS_USED] == 600);
    mt_history_node_figures(b, v); /* no report yet: host figures null */
    CU_ASSERT(isnan(v[MT_HN_CPU_RATIO]) && isnan(v[MT_HN_GPU_UTIL]));

    CU_ASSERT_FATAL(mt_history_create(60, &hs) == 0);
    mt_history_sample(hs, &t, &tc, T0);
    CU_ASSERT(mt_history_n_nodes(hs) == 2);
    CU_ASSERT(at(hs, NULL, MT_HC_CPU_USED, T0) == 3);
    CU_ASSERT(at(hs, NULL, MT_HC_CPU_TOTAL, T0) == 8);
    CU_ASSERT(at(hs, NULL, MT_HC_GPU_TOTAL, T0) == 4);
    CU_ASSERT(at(hs, NULL, MT_HC_MEM_TOTAL, T0) == 400);
    CU_ASSERT(at(hs, NULL, MT_HC_OS_USED, T0) == 600);
    CU_ASSERT(at(hs, NULL, MT_HC_OS_TOTAL, T0) == 2000);
    CU_ASSERT(at(hs, NULL, MT_HC_PENDING, T0) == 3 &&
              at(hs, NULL, MT_HC_INFEASIBLE, T0) == 1 &&
              at(hs, NULL, MT_HC_FAILED, T0) == 4);
    CU_ASSERT(at(hs, "a", MT_HN_CPU_USED, T0) == 3);
    /* b dies: no more samples (nulls), kept a while, then dropped. */
    mt_node_table_mark_dead(&t, b, "test", T0 + 1000);
    mt_history_sample(hs, &t, &tc, T0 + 1000);
    CU_ASSERT(mt_history_has_node(hs, "b"));
    CU_ASSERT(isnan(at(hs, "b", MT_HN_CPU_USED, T0 + 1000)));
    mt_history_sample(hs, &t, &tc, T0 + 2000 + MT_HISTORY_KEEP_DEAD_MS);
    CU_ASSERT(!mt_history_has_node(hs, "b") && mt_history_has_node(hs, "a"));
    mt_history_destroy(hs);
    mt_node_table_release(&t);
}

CU_TestInfo mt_test_history[] = {
    {"ring wraps", test_ring_wraps},
    {"gaps are null", test_gaps_are_null},
    {"bounds", test_bounds},
    {"bfloat16 rows", test_bf16_rows},
    {"json", test_json},
    {"figures and sample", test_figures_and_sample},
    CU_TEST_INFO_NULL,
};
