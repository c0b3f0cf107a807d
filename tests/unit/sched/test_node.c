/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_node.c -- nodes and unit instances: node validation, GPU fractions
 * packing onto one device (80 x 0.18 GPU on 2 x 8 GPUs), whole GPUs,
 * aligned TPU chip blocks, node death. Also hosts the small helpers the other
 * suites of this binary share (mt_t_*).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "sched/sched.h"
#include "tests/unit/unit.h"

/* ---- Shared helpers (declared again in the suites that use them) ---- */

struct mt_sched *mt_t_sched(void);
uint32_t mt_t_node(struct mt_sched *s, const char *name, double cpu, int gpu,
                   int tpu, const struct mt_label *labels, size_t nl);
void mt_t_task(struct mt_task_spec *t, uint64_t id, double cpu, double gpu,
               int tpu);
void mt_t_check(struct mt_sched *s);

struct mt_sched *mt_t_sched(void)
{
    struct mt_sched *s = NULL;

    CU_ASSERT_FATAL(mt_sched_create(NULL, &s) == 0);
    return s;
}

uint32_t mt_t_node(struct mt_sched *s, const char *name, double cpu, int gpu,
                   int tpu, const struct mt_label *labels, size_t nl)
{
    struct mt_res_item res[3] = {
        {MT_RES_CPU, mt_res_from_double(cpu)},
        {MT_RES_GPU, (int64_t)gpu * MT_RES_SCALE},
        {MT_RES_TPU, (int64_t)tpu * MT_RES_SCALE},
    };
    struct mt_node_spec spec = {name, res, 3, labels, nl};
    uint32_t node = MT_NODE_NONE;

    CU_ASSERT_FATAL(mt_sched_on_node_added(s, &spec, &node) == 0);
    return node;
}

void mt_t_task(struct mt_task_spec *t, uint64_t id, double cpu, double gpu,
               int tpu)
{
    mt_task_spec_init(t, id);
    mt_res_set_add(&t->res, MT_RES_CPU, mt_res_from_double(cpu));
    mt_res_set_add(&t->res, MT_RES_GPU, mt_res_from_double(gpu));
    mt_res_set_add(&t->res, MT_RES_TPU, (int64_t)tpu * MT_RES_SCALE);
}

void mt_t_check(struct mt_sched *s)
{
    char why[128] = "";
    int rc = mt_sched_check(s, why, sizeof(why));

    if (rc != 0)
        fprintf(stderr, "check failed: %s\n", why);
    CU_ASSERT_EQUAL(rc, 0);
}

/* ---- Tests ---- */

static void test_node_validation(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_res_item gpu15[] = {{MT_RES_GPU, 15000}};
    struct mt_res_item neg[] = {{MT_RES_CPU, -1}};
    struct mt_res_item dup[] = {{MT_RES_CPU, 1}, {MT_RES_CPU, 1}};
    struct mt_res_item tpu16[] = {{MT_RES_TPU, 160000}};
    struct mt_label dupl[] = {{"k", "a"}, {"k", "b"}};
    struct mt_node_spec spec = {"n", gpu15, 1, NULL, 0};
    uint32_t node;

    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EINVAL);
    spec.res = neg;
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EINVAL);
    spec.res = dup;
    spec.nres = 2;
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EINVAL);
    spec.res = tpu16;
    spec.nres = 1;
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EINVAL);
    spec.res = neg;
    spec.nres = 0;
    spec.labels = dupl;
    spec.nlabels = 2;
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EINVAL);
    spec.name = NULL;
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EINVAL);
    node = mt_t_node(s, "a", 4, 0, 0, NULL, 0);
    spec.name = "a";
    spec.nlabels = 0;
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), -MT_EEXIST);
    mt_sched_destroy(s);
}

static void test_node_lookup_and_death(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t a = mt_t_node(s, "a", 4, 2, 0, NULL, 0), found = 99;
    int64_t total, avail;

    CU_ASSERT_EQUAL(mt_sched_node_find(s, "a", &found), 0);
    CU_ASSERT_EQUAL(found, a);
    CU_ASSERT_EQUAL(mt_sched_node_find(s, "b", &found), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_node_res(s, a, MT_RES_CPU, &total, &avail), 0);
    CU_ASSERT_EQUAL(total, 40000);
    CU_ASSERT_EQUAL(avail, 40000);
    CU_ASSERT_EQUAL(mt_sched_node_free_gpus(s, a), 3u);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, a), 0);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, a), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, 77), -MT_ENOENT);
    CU_ASSERT_FALSE(mt_sched_node_alive(s, a));
    CU_ASSERT_EQUAL(mt_sched_node_find(s, "a", &found), -MT_ENOENT);
    /* The name is free again; the new node gets a new handle. */
    CU_ASSERT_NOT_EQUAL(mt_t_node(s, "a", 4, 0, 0, NULL, 0), a);
    CU_ASSERT_EQUAL(mt_sched_node_count(s), 2);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* The anchor system's bug #52133: 80 x 0.18 GPU on 2 x 8 GPUs must fit. */
static void test_gpu_fractions_pack(void)
{
    struct mt_sched *s = mt_t_sched();
    int64_t share[2][16] = {{0}};
    struct mt_task_spec t;
    struct mt_grant g;

    mt_t_node(s, "g0", 64, 8, 0, NULL, 0);
    mt_t_node(s, "g1", 64, 8, 0, NULL, 0);
    for (int i = 0; i < 80; i++) {
        mt_task_spec_init(&t, (uint64_t)i);
        mt_res_set_add(&t.res, MT_RES_GPU, 1800);
        CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
        CU_ASSERT_EQUAL(__builtin_popcount(g.gpus), 1);
        CU_ASSERT_EQUAL(g.gpu_each, 1800);
        share[g.node][__builtin_ctz(g.gpus)] += g.gpu_each;
    }
    for (int n = 0; n < 2; n++)
        for (int d = 0; d < 8; d++)
            CU_ASSERT(share[n][d] <= MT_RES_SCALE);
    /* Every device holds 5 shares: 0.9 used, 0.1 left, none fits 0.18. */
    mt_task_spec_init(&t, 81);
    mt_res_set_add(&t.res, MT_RES_GPU, 1800);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), -MT_EAGAIN);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_gpu_whole_and_best_fit(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    struct mt_grant half, two, quarter, three;

    mt_t_node(s, "g", 8, 4, 0, NULL, 0);
    mt_t_task(&t, 1, 0, 0.5, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &half), 0);
    mt_t_task(&t, 2, 0, 2, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &two), 0);
    CU_ASSERT_EQUAL(__builtin_popcount(two.gpus), 2);
    CU_ASSERT_EQUAL(two.gpus & half.gpus, 0);
    CU_ASSERT_EQUAL(two.gpu_each, MT_RES_SCALE);
    /* A quarter goes onto the half-used device (best fit). */
    mt_t_task(&t, 3, 0, 0.25, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &quarter), 0);
    CU_ASSERT_EQUAL(quarter.gpus, half.gpus);
    /* One whole device is left: 2 whole GPUs do not fit now. */
    mt_t_task(&t, 4, 0, 2, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &three), -MT_EAGAIN);
    mt_t_task(&t, 5, 0, 8, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &three), -MT_EINFEASIBLE);
    mt_t_task(&t, 6, 0, 1.5, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &three), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, two.handle), 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, two.handle), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, 12345), -MT_ENOENT);
    mt_t_task(&t, 7, 0, 3, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &three), 0);
    CU_ASSERT_EQUAL(__builtin_popcount(three.gpus), 3);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_tpu_aligned_blocks(void)
{
    static const struct {
        int chips;
        int rc;
        uint32_t mask;  /* expected block, 0 = do not check */
    } rows[] = {
        {1, 0, 0x01},            /* chip 0 */
        {2, 0, 0x0c},            /* aligned pair 2,3 (0,1 is split) */
        {4, 0, 0xf0},            /* the other half of 8 */
        {3, -MT_EINVAL, 0},      /* never 3 chips */
        {2, -MT_EAGAIN, 0},      /* chip 1 alone is left */
        {1, 0, 0x02},
        {8, -MT_EAGAIN, 0},      /* host full now, fits an empty host */
        {16, -MT_EINVAL, 0},
    };
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    struct mt_grant g;

    mt_t_node(s, "t", 8, 0, 8, NULL, 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        mt_task_spec_init(&t, i);
        t.res.n = 1;
        t.res.it[0].id = MT_RES_TPU;
        t.res.it[0].qty = (int64_t)rows[i].chips * MT_RES_SCALE;
        CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), rows[i].rc);
        if (rows[i].rc == 0 && rows[i].mask)
            CU_ASSERT_EQUAL(g.tpu_chips, rows[i].mask);
    }
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_tpu_bigger_than_host(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    struct mt_grant g;

    mt_t_node(s, "t", 8, 0, 4, NULL, 0);
    mt_t_task(&t, 1, 0, 0, 8);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), -MT_EINFEASIBLE);
    mt_t_task(&t, 2, 0, 0, 4);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
    CU_ASSERT_EQUAL(g.tpu_chips, 0xf);
    mt_sched_destroy(s);
}

static void test_node_update(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n = mt_t_node(s, "n", 4, 2, 0, NULL, 0);
    int acc = mt_sched_resource_id(s, "accel");
    struct mt_res_item grow[] = {{MT_RES_CPU, 80000}, {(uint16_t)acc, 10000}};
    struct mt_res_item shrink[] = {{MT_RES_CPU, 10000}};
    struct mt_res_item gpu[] = {{MT_RES_GPU, 40000}};
    struct mt_res_item bad[] = {{MT_RES_CPU, -1}};
    struct mt_task_spec t;
    struct mt_grant g;
    int64_t total, avail;

    mt_t_task(&t, 1, 2, 0, 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    mt_t_task(&t, 2, 1, 0, 0);
    mt_res_set_add(&t.res, acc, 5000);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), -MT_EINFEASIBLE);
    CU_ASSERT_EQUAL(mt_sched_on_node_update(s, n, grow, 2), 0);
    mt_sched_node_res(s, n, MT_RES_CPU, &total, &avail);
    CU_ASSERT_EQUAL(total, 80000);
    CU_ASSERT_EQUAL(avail, 60000);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_on_node_update(s, n, shrink, 1), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_sched_on_node_update(s, n, gpu, 1), -MT_ENOTSUP);
    CU_ASSERT_EQUAL(mt_sched_on_node_update(s, n, bad, 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_on_node_update(s, 99, grow, 1), -MT_ENOENT);
    mt_sched_node_res(s, n, MT_RES_CPU, &total, &avail);
    CU_ASSERT_EQUAL(total, 80000);
    shrink[0].qty = 30000;
    CU_ASSERT_EQUAL(mt_sched_on_node_update(s, n, shrink, 1), 0);
    mt_sched_node_res(s, n, MT_RES_CPU, &total, &avail);
    CU_ASSERT_EQUAL(avail, 0);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* 1 TiB in bytes x 10000 on 2,000 nodes: sums beyond 64 bits. */
static void test_memory_in_bytes_at_scale(void)
{
    struct mt_sched *s = mt_t_sched();
    int64_t tib = (int64_t)1 << 40;
    struct mt_res_item res[] = {{MT_RES_CPU, 640000},
                                {MT_RES_MEMORY, tib * MT_RES_SCALE}};
    struct mt_task_spec t;
    struct mt_grant g;
    struct mt_usage u;

    for (int i = 0; i < 2000; i++) {
        char name[16];
        struct mt_node_spec spec = {name, res, 2, NULL, 0};
        uint32_t node;

        snprintf(name, sizeof(name), "m%d", i);
        CU_ASSERT_EQUAL_FATAL(mt_sched_on_node_added(s, &spec, &node), 0);
    }
    mt_task_spec_init(&t, 1);
    mt_res_set_add(&t.res, MT_RES_CPU, 10000);
    mt_res_set_add(&t.res, MT_RES_MEMORY, (tib / 2) * MT_RES_SCALE);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_usage(s, MT_RES_MEMORY, &u), 0);
    CU_ASSERT_EQUAL(u.total, INT64_MAX);   /* saturated */
    CU_ASSERT_EQUAL(u.used, (tib / 2) * MT_RES_SCALE);
    mt_t_check(s);
    mt_sched_destroy(s);
}

CU_TestInfo mt_test_node[] = {
    {"memory_in_bytes_at_scale", test_memory_in_bytes_at_scale},
    {"node_update", test_node_update},
    {"node_validation", test_node_validation},
    {"node_lookup_and_death", test_node_lookup_and_death},
    {"gpu_fractions_pack", test_gpu_fractions_pack},
    {"gpu_whole_and_best_fit", test_gpu_whole_and_best_fit},
    {"tpu_aligned_blocks", test_tpu_aligned_blocks},
    {"tpu_bigger_than_host", test_tpu_bigger_than_host},
    CU_TEST_INFO_NULL,
};
