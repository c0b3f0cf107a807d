/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_demand.c -- the pending demand summary grouped by resource shape, as
 * manta status prints it.
 */
#include <string.h>

#include "common/error.h"
#include "sched/sched.h"
#include "tests/unit/unit.h"

struct mt_sched *mt_t_sched(void);
uint32_t mt_t_node(struct mt_sched *s, const char *name, double cpu, int gpu,
                   int tpu, const struct mt_label *labels, size_t nl);
void mt_t_task(struct mt_task_spec *t, uint64_t id, double cpu, double gpu,
               int tpu);

static void test_demand_by_shape(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {1, MT_SCHED_PG_STRICT_PACK, b, 2};
    struct mt_demand rows[8];
    struct mt_placement out[8];
    struct mt_task_spec t;
    char buf[512];
    int n;

    mt_t_node(s, "n", 1, 0, 0, NULL, 0);
    for (uint64_t i = 0; i < 5; i++) {
        mt_t_task(&t, i, 1, 0, 0);
        t.priority = (int32_t)(i % 2); /* two classes, one shape */
        CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    }
    mt_t_task(&t, 10, 0, 8, 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    memset(b, 0, sizeof(b));
    mt_res_set_add(&b[0].res, MT_RES_CPU, 10000);
    mt_res_set_add(&b[1].res, MT_RES_CPU, 10000);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EINFEASIBLE);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 8), 2); /* 1 placed, GPU 8 */
    n = mt_sched_demand(s, rows, 8);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(rows[0].kind, MT_DECISION_TASK);
    CU_ASSERT_EQUAL(rows[0].count, 4);
    CU_ASSERT_EQUAL(mt_res_set_get(&rows[0].shape, MT_RES_CPU), 10000);
    CU_ASSERT_FALSE(rows[0].infeasible);
    mt_sched_demand_format(s, buf, sizeof(buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " {CPU: 1}: 4+ pending tasks/actors\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(buf, " {GPU: 8}: 1+ infeasible tasks/actors\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(buf, " {CPU: 1} * 2 (STRICT_PACK): 1+ infeasible "
                    "placement groups\n"));
    CU_ASSERT_EQUAL(mt_sched_demand(s, rows, 1), 1);
    mt_sched_destroy(s);
}

static void test_fragmentation(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    struct mt_grant g;
    struct mt_frag f;

    mt_t_node(s, "g0", 16, 8, 0, NULL, 0);
    mt_t_node(s, "g1", 16, 8, 0, NULL, 0);
    mt_t_node(s, "t0", 16, 0, 4, NULL, 0);
    /* 1 GPU busy on each node: 7 + 7 free, an 8-GPU task cannot run. */
    for (uint32_t n = 0; n < 2; n++) {
        mt_t_task(&t, n, 0, 1, 0);
        t.strategy = MT_PLACE_NODE_AFFINITY;
        t.affinity_node = n;
        CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    }
    CU_ASSERT_EQUAL(mt_sched_fragmentation(s, &f), 0);
    CU_ASSERT_EQUAL(f.free_gpus, 14);
    CU_ASSERT_EQUAL(f.stranded_gpus, 14);  /* no pending work at all */
    CU_ASSERT_EQUAL(f.free_tpu_chips, 4);
    mt_t_task(&t, 10, 0, 8, 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    mt_t_task(&t, 11, 0, 0, 2);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_fragmentation(s, &f), 0);
    CU_ASSERT_EQUAL(f.pending_gpu, 1);
    CU_ASSERT_EQUAL(f.pending_tpu, 1);
    CU_ASSERT_EQUAL(f.stranded_gpus, 14);  /* the 8-GPU task fits nowhere */
    CU_ASSERT_EQUAL(f.stranded_tpu_chips, 0);
    mt_t_task(&t, 12, 0, 2, 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_fragmentation(s, &f), 0);
    CU_ASSERT_EQUAL(f.stranded_gpus, 0);
    mt_sched_destroy(s);
}

static void test_usage(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[1];
    struct mt_pg_spec spec = {4, MT_SCHED_PG_PACK, b, 1};
    struct mt_task_spec t;
    struct mt_grant g;
    struct mt_usage u;

    mt_t_node(s, "a", 2, 0, 0, NULL, 0);
    mt_t_node(s, "b", 2, 0, 0, NULL, 0);
    memset(b, 0, sizeof(b));
    mt_res_set_add(&b[0].res, MT_RES_CPU, 10000);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    mt_t_task(&t, 1, 1, 0, 0);
    t.strategy = MT_PLACE_PG;
    t.pg = 4;
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
    mt_t_task(&t, 2, 1, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_usage(s, MT_RES_CPU, &u), 0);
    CU_ASSERT_EQUAL(u.total, 40000);
    CU_ASSERT_EQUAL(u.used, 20000);       /* the bundle + the plain task */
    CU_ASSERT_EQUAL(u.pg_reserved, 10000);
    CU_ASSERT_EQUAL(u.pg_used, 10000);
    CU_ASSERT_EQUAL(mt_sched_usage(s, MT_RES_MAX, &u), -MT_EINVAL);
    mt_sched_destroy(s);
}

CU_TestInfo mt_test_demand[] = {
    {"usage", test_usage},
    {"fragmentation", test_fragmentation},
    {"demand_by_shape", test_demand_by_shape},
    CU_TEST_INFO_NULL,
};
