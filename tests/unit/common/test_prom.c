/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_prom.c -- the Prometheus text writer (common/prom.h): HELP/TYPE
 * lines, label escaping, value spelling, and histograms (cumulative
 * buckets, +Inf, _sum and _count, the bucket an edge value falls in).
 */
#include <math.h>
#include <string.h>

#include "common/prom.h"
#include "common/strbuf.h"
#include "tests/unit/unit.h"

static void test_family(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_prom_family(&sb, "manta_x_total", "counter", "Things, a\\b\nc.");
    CU_ASSERT_STRING_EQUAL(sb.buf, "# HELP manta_x_total Things, a\\\\b\\nc.\n"
                                   "# TYPE manta_x_total counter\n");
    mt_strbuf_release(&sb);
}

static void test_labels(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    const char *kv[] = {"node_id", "n\"1\\\n", "gpu", NULL, NULL};

    mt_prom_sample_u64(&sb, "m", kv, 18446744073709551615ull);
    CU_ASSERT_STRING_EQUAL(sb.buf,
                           "m{node_id=\"n\\\"1\\\\\\n\",gpu=\"\"} "
                           "18446744073709551615\n");
    mt_strbuf_release(&sb);
    mt_prom_sample(&sb, "m", NULL, 3);
    CU_ASSERT_STRING_EQUAL(sb.buf, "m 3\n");
    mt_strbuf_release(&sb);
}

static void test_values(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_prom_value(&sb, 0.25);
    mt_prom_value(&sb, INFINITY);
    mt_prom_value(&sb, -INFINITY);
    mt_prom_value(&sb, NAN);
    mt_prom_value(&sb, 1e15);
    mt_prom_value(&sb, 12345.678912);
    mt_prom_value(&sb, 1796199060.25);
    CU_ASSERT_STRING_EQUAL(sb.buf, " 0.25\n +Inf\n -Inf\n NaN\n"
                                   " 1000000000000000\n 12345.6789\n"
                                   " 1796199060.250\n");
    mt_strbuf_release(&sb);
}

static void test_hist(void)
{
    static const double b[] = {0.1, 1};
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_prom_hist h;
    const char *kv[] = {"method", "Ping", NULL};

    mt_prom_hist_init(&h, b, 2);
    mt_prom_hist_observe(&h, 0.05);
    mt_prom_hist_observe(&h, 0.1); /* le is inclusive */
    mt_prom_hist_observe(&h, 0.5);
    mt_prom_hist_observe(&h, 7);
    mt_prom_hist_observe(&h, NAN); /* ignored */
    CU_ASSERT_EQUAL(h.count, 4);
    mt_prom_hist_write(&sb, "lat_seconds", kv, &h);
    CU_ASSERT_STRING_EQUAL(sb.buf,
        "lat_seconds_bucket{method=\"Ping\",le=\"0.1\"} 2\n"
        "lat_seconds_bucket{method=\"Ping\",le=\"1\"} 3\n"
        "lat_seconds_bucket{method=\"Ping\",le=\"+Inf\"} 4\n"
        "lat_seconds_sum{method=\"Ping\"} 7.65\n"
        "lat_seconds_count{method=\"Ping\"} 4\n");
    mt_strbuf_release(&sb);
    mt_prom_hist_write(&sb, "x", NULL, &h);
    CU_ASSERT_PTR_NOT_NULL(strstr(sb.buf, "x_bucket{le=\"+Inf\"} 4\n"));
    mt_strbuf_release(&sb);
}

static void test_bucket_tables(void)
{
    CU_ASSERT(mt_prom_seconds_buckets_n <= MT_PROM_MAX_BUCKETS);
    CU_ASSERT(mt_prom_rpc_buckets_n <= MT_PROM_MAX_BUCKETS);
    for (size_t i = 1; i < mt_prom_seconds_buckets_n; i++)
        CU_ASSERT(mt_prom_seconds_buckets[i] > mt_prom_seconds_buckets[i - 1]);
    for (size_t i = 1; i < mt_prom_rpc_buckets_n; i++)
        CU_ASSERT(mt_prom_rpc_buckets[i] > mt_prom_rpc_buckets[i - 1]);
}

CU_TestInfo mt_test_prom[] = {
    {"family", test_family},
    {"labels", test_labels},
    {"values", test_values},
    {"hist", test_hist},
    {"bucket_tables", test_bucket_tables},
    CU_TEST_INFO_NULL,
};
