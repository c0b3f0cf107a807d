/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_adopt.c -- adoption after a head restart: grants charged on the
 * devices given (whole GPUs, shared fractions, TPU blocks), grants inside
 * bundles, groups of every strategy adopted on the nodes given (with and
 * without device lists), TPU slice groups adopted by slice name, every
 * error leaving nothing charged, and a
 * randomized restart: a second scheduler rebuilt from the first one's
 * grants and groups must account exactly as the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "sched/sched.h"
#include "tests/unit/unit.h"

struct mt_sched *mt_t_sched(void);
uint32_t mt_t_node(struct mt_sched *s, const char *name, double cpu, int gpu,
                   int tpu, const struct mt_label *labels, size_t nl);
void mt_t_task(struct mt_task_spec *t, uint64_t id, double cpu, double gpu,
               int tpu);
void mt_t_check(struct mt_sched *s);

/* A grant as stored by the head: node and devices, no handle. */
static struct mt_grant want(uint32_t node, uint32_t gpus, double each,
                            uint32_t chips)
{
    struct mt_grant g;

    memset(&g, 0, sizeof(g));
    g.node = node;
    g.gpus = gpus;
    g.gpu_each = mt_res_from_double(each);
    g.tpu_chips = chips;
    g.bundle = -1;
    return g;
}

static int64_t avail_of(struct mt_sched *s, uint32_t node, int id)
{
    int64_t total, avail;

    CU_ASSERT_FATAL(mt_sched_node_res(s, node, id, &total, &avail) == 0);
    return avail;
}

/* Every resource of every live node is free again. */
static void assert_whole(struct mt_sched *s)
{
    for (uint32_t n = 0; n < mt_sched_node_count(s); n++)
        for (int id = 0; id < MT_RES_NBUILTIN; id++) {
            int64_t total, avail;

            mt_sched_node_res(s, n, id, &total, &avail);
            if (mt_sched_node_alive(s, n))
                CU_ASSERT_EQUAL(avail, total);
        }
    mt_t_check(s);
}

/* ---- Grants ---- */

static void test_adopt_whole_gpus(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n0 = mt_t_node(s, "n0", 8, 4, 0, NULL, 0);
    struct mt_grant w = want(n0, 0x6, 1, 0), g, g2;
    struct mt_task_spec t;
    struct mt_usage u;

    mt_t_task(&t, 1, 2, 2, 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(g.node, n0);
    CU_ASSERT_EQUAL(g.gpus, 0x6);
    CU_ASSERT_EQUAL(g.gpu_each, MT_RES_SCALE);
    CU_ASSERT_EQUAL(g.pg, 0);
    CU_ASSERT_EQUAL(g.bundle, -1);
    CU_ASSERT_EQUAL(avail_of(s, n0, MT_RES_CPU), 60000);
    CU_ASSERT_EQUAL(mt_sched_node_free_gpus(s, n0), 0x9);
    CU_ASSERT_EQUAL(mt_sched_usage(s, MT_RES_GPU, &u), 0);
    CU_ASSERT_EQUAL(u.used, 20000);
    mt_t_check(s);
    /* A new placement never gets the adopted devices. */
    mt_t_task(&t, 2, 1, 2, 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g2), 0);
    CU_ASSERT_EQUAL(g2.gpus, 0x9);
    mt_t_check(s);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g.handle), 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g.handle), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g2.handle), 0);
    assert_whole(s);
    mt_sched_destroy(s);
}

static void test_adopt_gpu_fractions(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n0 = mt_t_node(s, "n0", 8, 2, 0, NULL, 0);
    struct mt_grant w = want(n0, 0x2, 0.5, 0), g[3], g3;
    struct mt_task_spec t;

    mt_t_task(&t, 1, 0.5, 0.5, 0);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g[0]), 0);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g[1]), 0);
    CU_ASSERT_EQUAL(g[1].gpus, 0x2);
    CU_ASSERT_EQUAL(g[1].gpu_each, 5000);
    mt_t_check(s);
    /* Device 1 is full now; device 0 still takes a share. */
    mt_t_task(&t, 2, 0.5, 0.25, 0);
    w = want(n0, 0x2, 0.25, 0);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g[2]), -MT_EAGAIN);
    w.gpus = 0x1;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g[2]), 0);
    CU_ASSERT_EQUAL(mt_sched_node_free_gpus(s, n0), 0);
    mt_t_check(s);
    /* Placement packs the next fraction beside the adopted one. */
    mt_t_task(&t, 3, 0.5, 0.75, 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g3), 0);
    CU_ASSERT_EQUAL(g3.gpus, 0x1);
    mt_t_task(&t, 4, 0.5, 0.1, 0);
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g[0]), -MT_EAGAIN);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_adopt_tpu_blocks(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n0 = mt_t_node(s, "n0", 8, 0, 8, NULL, 0);
    struct mt_grant w = want(n0, 0, 0, 0xf0), g;
    struct mt_task_spec t;

    mt_t_task(&t, 1, 1, 0, 4);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(g.tpu_chips, 0xf0);
    mt_t_task(&t, 2, 1, 0, 2);
    w.tpu_chips = 0x06; /* chips 1-2: not an aligned pair */
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), -MT_EINVAL);
    w.tpu_chips = 0x30; /* aligned, but held by the first grant */
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), -MT_EAGAIN);
    w.tpu_chips = 0x0c;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_node_free_tpu_chips(s, n0), 0x03);
    CU_ASSERT_EQUAL(avail_of(s, n0, MT_RES_TPU), 20000);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_adopt_errors_charge_nothing(void)
{
    static const struct {
        double cpu, gpu;
        int tpu;
        uint32_t node, gpus, chips;
        double each;
        int rc;
    } rows[] = {
        {1, 1, 0, 9, 0x1, 0, 1, -MT_ENOENT},      /* unknown node */
        {1, 1, 0, 1, 0x1, 0, 1, -MT_ENOENT},      /* dead node */
        {1, 1, 0, 0, 0x10, 0, 1, -MT_EINVAL},     /* beyond 4 devices */
        {1, 2, 0, 0, 0x1, 0, 1, -MT_EINVAL},      /* 2 GPUs, 1 device */
        {1, 0.5, 0, 0, 0x3, 0, 0.5, -MT_EINVAL},  /* a fraction, 2 devices */
        {1, 0.5, 0, 0, 0x1, 0, 1, -MT_EINVAL},    /* wrong share */
        {1, 0, 0, 0, 0x1, 0, 1, -MT_EINVAL},      /* devices, no GPU asked */
        {1, 1, 0, 0, 0x0, 0, 0, -MT_EINVAL},      /* GPU asked, no device */
        {1, 0, 2, 0, 0, 0x3, 0, -MT_EINVAL},      /* no TPU on n0 */
        {9, 0, 0, 0, 0, 0, 0, -MT_EAGAIN},        /* 9 CPU > 8 */
        {1, 1, 0, 0, 0x8, 0, 1, -MT_EAGAIN},      /* device 3 is taken */
        {1, 0.5, 0, 0, 0x8, 0, 0.5, -MT_EAGAIN},  /* ... even a share */
    };
    struct mt_sched *s = mt_t_sched();
    uint32_t n0 = mt_t_node(s, "n0", 8, 4, 0, NULL, 0);
    uint32_t n1 = mt_t_node(s, "n1", 8, 4, 0, NULL, 0);
    struct mt_grant w = want(n0, 0x8, 1, 0), held, g;
    struct mt_task_spec t;

    mt_t_task(&t, 1, 0, 1, 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_adopt(s, &t, &w, &held), 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_on_node_dead(s, n1), 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        mt_t_task(&t, 10 + i, rows[i].cpu, rows[i].gpu, rows[i].tpu);
        w = want(rows[i].node, rows[i].gpus, rows[i].each, rows[i].chips);
        if (mt_sched_adopt(s, &t, &w, &g) != rows[i].rc)
            fprintf(stderr, "adopt row %zu\n", i);
        CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), rows[i].rc);
    }
    t.res.it[0].qty = -1; /* malformed request */
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, NULL, &w, &g), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, NULL, &g), -MT_EINVAL);
    /* Nothing charged: only the first grant holds anything. */
    CU_ASSERT_EQUAL(avail_of(s, n0, MT_RES_CPU), 80000);
    CU_ASSERT_EQUAL(avail_of(s, n0, MT_RES_GPU), 30000);
    CU_ASSERT_EQUAL(mt_sched_node_free_gpus(s, n0), 0x7);
    mt_t_check(s);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, held.handle), 0);
    assert_whole(s);
    mt_sched_destroy(s);
}

/* ---- Grants inside bundles ---- */

static void gpu_bundles(struct mt_bundle_spec *b, size_t n, double cpu,
                        double gpu)
{
    memset(b, 0, n * sizeof(*b));
    for (size_t i = 0; i < n; i++) {
        mt_res_set_add(&b[i].res, MT_RES_CPU, mt_res_from_double(cpu));
        mt_res_set_add(&b[i].res, MT_RES_GPU, mt_res_from_double(gpu));
    }
}

static void test_adopt_into_bundle(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n0 = mt_t_node(s, "n0", 8, 4, 0, NULL, 0);
    uint32_t n1 = mt_t_node(s, "n1", 8, 4, 0, NULL, 0);
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {5, MT_SCHED_PG_STRICT_SPREAD, b, 2};
    struct mt_bundle_info bi;
    struct mt_grant w, g, g2;
    struct mt_task_spec t;
    struct mt_usage u;
    uint32_t dev, other;

    gpu_bundles(b, 2, 4, 2);
    CU_ASSERT_EQUAL_FATAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_pg_bundle(s, 5, 1, &bi), 0);
    dev = bi.gpus & -bi.gpus;               /* one device of the bundle */
    other = ~bi.gpus & 0xf & -(~bi.gpus & 0xf); /* one outside it */
    mt_t_task(&t, 1, 3, 1, 0);
    w = want(bi.node, other, 1, 0);
    w.pg = 5;
    w.bundle = 1;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), -MT_EAGAIN);
    w.gpus = dev;
    CU_ASSERT_EQUAL_FATAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(g.pg, 5);
    CU_ASSERT_EQUAL(g.bundle, 1);
    CU_ASSERT_EQUAL(mt_sched_usage(s, MT_RES_CPU, &u), 0);
    CU_ASSERT_EQUAL(u.pg_reserved, 80000);
    CU_ASSERT_EQUAL(u.pg_used, 30000);
    mt_t_check(s);
    /* The bundle has 1 CPU left; device dev is taken inside it. */
    mt_t_task(&t, 2, 2, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), -MT_EINVAL);
    w.gpus = 0;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), -MT_EAGAIN);
    mt_t_task(&t, 3, 1, 1, 0);
    w.gpus = dev;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), -MT_EAGAIN);
    w.gpus = bi.gpus & ~dev;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), 0);
    mt_t_check(s);
    /* Wrong node, group or index. */
    w.node = bi.node == n0 ? n1 : n0;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), -MT_ENOENT);
    w.node = bi.node;
    w.pg = 6;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), -MT_ENOENT);
    w.pg = 5;
    w.bundle = 2;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g2), -MT_EINVAL);
    /* Finishing gives back to the bundle, then removal to the node. */
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g.handle), 0);
    mt_t_check(s);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 5), 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g2.handle), 0); /* stale */
    assert_whole(s);
    mt_sched_destroy(s);
}

/* ---- Groups ---- */

static void cpu_bundles(struct mt_bundle_spec *b, size_t n, double cpu)
{
    memset(b, 0, n * sizeof(*b));
    for (size_t i = 0; i < n; i++)
        mt_res_set_add(&b[i].res, MT_RES_CPU, mt_res_from_double(cpu));
}

static void test_pg_adopt_every_strategy(void)
{
    static const struct {
        enum mt_sched_pg_strategy st;
        uint32_t nodes[3];
        int rc;
    } rows[] = {
        {MT_SCHED_PG_PACK, {0, 0, 1}, 0},
        {MT_SCHED_PG_SPREAD, {0, 1, 1}, 0},
        {MT_SCHED_PG_STRICT_PACK, {2, 2, 2}, 0},
        {MT_SCHED_PG_STRICT_SPREAD, {2, 0, 1}, 0},
        {MT_SCHED_PG_STRICT_PACK, {0, 0, 1}, -MT_EINVAL},
        {MT_SCHED_PG_STRICT_SPREAD, {0, 1, 0}, -MT_EINVAL},
        {MT_SCHED_PG_PACK, {0, 0, 0}, -MT_EAGAIN},   /* 3 x 3 CPU > 8 */
        {MT_SCHED_PG_PACK, {0, 0, 2}, 0},            /* n2 has 12 */
        {MT_SCHED_PG_SPREAD, {0, 1, 3}, -MT_ENOENT}, /* node 3 is dead */
        {MT_SCHED_PG_SPREAD, {0, 1, 7}, -MT_ENOENT}, /* never existed */
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mt_sched *s = mt_t_sched();
        struct mt_bundle_spec b[3];
        struct mt_pg_spec spec = {9, rows[i].st, b, 3};
        enum mt_sched_pg_state st;
        struct mt_task_spec t;
        struct mt_grant g;

        for (int n = 0; n < 4; n++) {
            char name[4] = {'n', (char)('0' + n), 0};

            mt_t_node(s, name, n == 2 ? 12 : 8, 0, 0, NULL, 0);
        }
        mt_sched_on_node_dead(s, 3);
        cpu_bundles(b, 3, 3);
        CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, rows[i].nodes, 5),
                        rows[i].rc);
        mt_t_check(s);
        if (rows[i].rc < 0) {
            CU_ASSERT_EQUAL(mt_sched_pg_state(s, 9, &st), -MT_ENOENT);
            assert_whole(s);
            mt_sched_destroy(s);
            continue;
        }
        CU_ASSERT_EQUAL(mt_sched_pg_state(s, 9, &st), 0);
        CU_ASSERT_EQUAL(st, MT_SCHED_PG_CREATED);
        for (uint32_t j = 0; j < 3; j++) {
            struct mt_bundle_info bi;

            CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 9, j, &bi), 0);
            CU_ASSERT_EQUAL(bi.node, rows[i].nodes[j]);
        }
        /* Placed and adopted tasks both land inside the bundles. */
        mt_t_task(&t, 1, 2, 0, 0);
        t.strategy = MT_PLACE_PG;
        t.pg = 9;
        t.bundle = 2;
        CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
        CU_ASSERT_EQUAL(g.node, rows[i].nodes[2]);
        g = want(rows[i].nodes[0], 0, 0, 0);
        g.pg = 9;
        g.bundle = 0;
        CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &g, &g), 0);
        mt_t_check(s);
        CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 9), 0);
        assert_whole(s);
        mt_sched_destroy(s);
    }
}

static void test_pg_adopt_errors(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {4, MT_SCHED_PG_PACK, b, 2};
    uint32_t nodes[2] = {0, 0};

    mt_t_node(s, "n0", 8, 0, 0, NULL, 0);
    cpu_bundles(b, 2, 1);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, nodes, 0), -MT_EEXIST);
    spec.id = 5;
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, NULL, 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_pg_adopt_at(s, &spec, NULL, 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, NULL, nodes, 0), -MT_EINVAL);
    spec.id = 0;
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, nodes, 0), -MT_EINVAL);
    spec.id = 5;
    spec.strategy = (enum mt_sched_pg_strategy)9;
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, nodes, 0), -MT_EINVAL);
    spec.strategy = MT_SCHED_PG_PACK;
    memset(&b[1].res, 0, sizeof(b[1].res)); /* empty bundle */
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, nodes, 0), -MT_EINVAL);
    /* The failures left no group 5 behind: it can be adopted now. */
    cpu_bundles(b, 2, 1);
    CU_ASSERT_EQUAL(mt_sched_pg_adopt(s, &spec, nodes, 0), 0);
    CU_ASSERT_EQUAL(avail_of(s, 0, MT_RES_CPU), 40000);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_pg_adopt_at_devices(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n0 = mt_t_node(s, "n0", 16, 4, 8, NULL, 0);
    struct mt_bundle_spec b[3];
    struct mt_pg_spec spec = {8, MT_SCHED_PG_STRICT_PACK, b, 3};
    struct mt_bundle_info at[3], bi;
    struct mt_task_spec t;
    struct mt_grant w, g;

    memset(b, 0, sizeof(b));
    memset(at, 0, sizeof(at));
    mt_res_set_add(&b[0].res, MT_RES_GPU, 20000);
    mt_res_set_add(&b[1].res, MT_RES_GPU, 5000);
    mt_res_set_add(&b[2].res, MT_RES_TPU, 40000);
    at[0] = (struct mt_bundle_info){n0, 0x9, 0, {0}};
    at[1] = (struct mt_bundle_info){n0, 0x9, 0, {0}}; /* 2 for a share */
    at[2] = (struct mt_bundle_info){n0, 0, 0xf0, {0}};
    CU_ASSERT_EQUAL(mt_sched_pg_adopt_at(s, &spec, at, 0), -MT_EINVAL);
    at[1].gpus = 0x8;
    CU_ASSERT_EQUAL(mt_sched_pg_adopt_at(s, &spec, at, 0), -MT_EAGAIN);
    at[1].gpus = 0x20;
    CU_ASSERT_EQUAL(mt_sched_pg_adopt_at(s, &spec, at, 0), -MT_EINVAL);
    at[1].gpus = 0x2;
    at[2].tpu_chips = 0x3c; /* not aligned */
    CU_ASSERT_EQUAL(mt_sched_pg_adopt_at(s, &spec, at, 0), -MT_EINVAL);
    assert_whole(s);
    at[2].tpu_chips = 0xf0;
    CU_ASSERT_EQUAL_FATAL(mt_sched_pg_adopt_at(s, &spec, at, 0), 0);
    for (uint32_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 8, i, &bi), 0);
        CU_ASSERT_EQUAL(bi.gpus, at[i].gpus);
        CU_ASSERT_EQUAL(bi.tpu_chips, at[i].tpu_chips);
    }
    CU_ASSERT_EQUAL(mt_sched_node_free_gpus(s, n0), 0x4);
    CU_ASSERT_EQUAL(mt_sched_node_free_tpu_chips(s, n0), 0x0f);
    mt_t_check(s);
    /* Tasks adopted into the bundles on the bundles' own devices. */
    mt_t_task(&t, 1, 0, 0.25, 0);
    w = want(n0, 0x2, 0.25, 0);
    w.pg = 8;
    w.bundle = 1;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), -MT_EAGAIN);
    mt_t_task(&t, 2, 0, 0, 2);
    w = want(n0, 0, 0, 0x30);
    w.pg = 8;
    w.bundle = 2;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    w.tpu_chips = 0x03; /* the node's chips, not the bundle's */
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), -MT_EAGAIN);
    mt_t_check(s);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 8), 0);
    assert_whole(s);
    mt_sched_destroy(s);
}

static void test_pg_adopt_node_death(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {3, MT_SCHED_PG_STRICT_SPREAD, b, 2};
    uint32_t nodes[2] = {0, 1};
    struct mt_placement out[4];
    enum mt_sched_pg_state st;
    struct mt_bundle_info bi;

    mt_t_node(s, "n0", 4, 0, 0, NULL, 0);
    mt_t_node(s, "n1", 4, 0, 0, NULL, 0);
    mt_t_node(s, "n2", 4, 0, 0, NULL, 0);
    cpu_bundles(b, 2, 2);
    CU_ASSERT_EQUAL_FATAL(mt_sched_pg_adopt(s, &spec, nodes, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 0); /* nothing queued */
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, 1), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_state(s, 3, &st), 0);
    CU_ASSERT_EQUAL(st, MT_SCHED_PG_RESCHEDULING);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].kind, MT_DECISION_PG);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 3, 1, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, 2);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 3, 0, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, 0);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* ---- TPU slice groups ---- */

/* The hosts of one slice, workers 0..hosts-1, 4 chips each. */
static void add_slice(struct mt_sched *s, const char *slice, const char *pod,
                      int hosts)
{
    for (int w = 0; w < hosts; w++) {
        char name[32], wid[8];
        struct mt_label l[3] = {
            {"manta.io/tpu-slice-name", slice},
            {"manta.io/tpu-worker-id", wid},
            {"manta.io/tpu-pod-type", pod},
        };

        snprintf(name, sizeof(name), "%s-w%d", slice, w);
        snprintf(wid, sizeof(wid), "%d", w);
        mt_t_node(s, name, 8, 0, 4, l, 3);
    }
}

static uint32_t host(struct mt_sched *s, const char *name)
{
    uint32_t node = MT_NODE_NONE;

    CU_ASSERT(mt_sched_node_find(s, name, &node) == 0);
    return node;
}

static void test_slice_adopt(void)
{
    static const char *const ba[] = {"B", "A"};
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;
    struct mt_slice_info si;
    struct mt_bundle_info bi;
    struct mt_task_spec t;
    struct mt_grant w, g;
    const char *names[2];

    add_slice(s, "A", "v4-16", 2);
    add_slice(s, "B", "v4-16", 2);
    add_slice(s, "C", "v4-32", 4);
    add_slice(s, "D", "v4-16", 2);
    add_slice(s, "E", "v4-16", 2);
    add_slice(s, "F", "v4-16", 2);
    memset(&sp, 0, sizeof(sp));
    sp.id = 1;
    sp.pod_type = "v4-16";
    sp.nslices = 2;
    mt_res_set_add(&sp.per_host, MT_RES_CPU, 10000);
    CU_ASSERT_EQUAL_FATAL(mt_sched_slice_adopt(s, &sp, ba, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_slice(s, 1, 0, &si), 0);
    CU_ASSERT_STRING_EQUAL(si.name, "B");
    CU_ASSERT_EQUAL(mt_sched_pg_slice(s, 1, 1, &si), 0);
    CU_ASSERT_STRING_EQUAL(si.name, "A");
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 1, 1, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, host(s, "B-w1"));
    CU_ASSERT_EQUAL(bi.tpu_chips, 0xf);
    CU_ASSERT_EQUAL(mt_sched_node_free_tpu_chips(s, host(s, "A-w0")), 0);
    mt_t_check(s);
    /* A task of the gang, adopted into its bundle on B's worker 0. */
    mt_t_task(&t, 1, 1, 0, 2);
    w = want(host(s, "B-w0"), 0, 0, 0xc);
    w.pg = 1;
    w.bundle = 0;
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    /* A plain task holds chips on E-w1; F loses a host. */
    w = want(host(s, "E-w1"), 0, 0, 0x3);
    CU_ASSERT_EQUAL(mt_sched_adopt(s, &t, &w, &g), 0);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, host(s, "F-w1")), 0);
    mt_t_check(s);
    sp.nslices = 1;
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, ba, 0), -MT_EEXIST);
    sp.id = 2;
    names[0] = "A"; /* held by group 1 */
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, names, 0), -MT_EAGAIN);
    names[0] = "E"; /* a chip busy */
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, names, 0), -MT_EAGAIN);
    names[0] = "F"; /* a host dead */
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, names, 0), -MT_ENOENT);
    names[0] = "Z";
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, names, 0), -MT_ENOENT);
    names[0] = "C"; /* another pod type */
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, names, 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, NULL, 0), -MT_EINVAL);
    sp.nslices = 2;
    names[0] = names[1] = "D";
    CU_ASSERT_EQUAL(mt_sched_slice_adopt(s, &sp, names, 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_node_free_tpu_chips(s, host(s, "D-w0")), 0xf);
    mt_t_check(s);
    /* Removal frees A and B for a reservation as usual. */
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 1), 0);
    sp.id = 3;
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* ---- Randomized restart ---- */

#define RNODES 10
#define RG 512
#define RPG 32

struct rpg {
    uint64_t id;
    struct mt_bundle_spec b[3];
    struct mt_pg_spec spec;
};

struct rworld {
    struct mt_sched *a;
    uint64_t rng;
    uint64_t next_id;
    struct mt_grant g[RG];
    struct mt_res_set res[RG];
    uint32_t ng;
    struct rpg pg[RPG];
    uint32_t npg;
};

static uint32_t rrnd(struct rworld *w, uint32_t n)
{
    w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((w->rng >> 33) % n);
}

/* Node i is the same in both schedulers: same name, shape and handle. */
static void add_nodes(struct mt_sched *s)
{
    static const int gpus[] = {0, 2, 4, 8, 0};
    static const int tpus[] = {0, 0, 4, 0, 8};

    for (int i = 0; i < RNODES; i++) {
        char name[8];

        snprintf(name, sizeof(name), "n%d", i);
        mt_t_node(s, name, 8 + i % 3 * 4, gpus[i % 5], tpus[i % 5], NULL, 0);
    }
}

static void rand_res(struct rworld *w, struct mt_res_set *r, bool bundle)
{
    static const double gpu[] = {0, 0, 0.25, 0.5, 1, 2};
    static const int tpu[] = {0, 0, 0, 1, 2, 4};

    do {
        mt_res_set_init(r);
        mt_res_set_add(r, MT_RES_CPU, (int64_t)rrnd(w, 5) * 5000);
        mt_res_set_add(r, MT_RES_GPU, mt_res_from_double(gpu[rrnd(w, 6)]));
        mt_res_set_add(r, MT_RES_TPU, (int64_t)tpu[rrnd(w, 6)] * MT_RES_SCALE);
    } while (bundle && r->n == 0);
}

/* A request that fits inside bundle shape b: each item kept or not, at
 * most half of it (a whole GPU or chip at least when b has whole ones). */
static void part_of(struct rworld *w, const struct mt_res_set *b,
                    struct mt_res_set *r)
{
    mt_res_set_init(r);
    for (int i = 0; i < b->n; i++) {
        int64_t q = b->it[i].qty;

        if (rrnd(w, 3) == 0)
            continue;
        if (b->it[i].id == MT_RES_GPU && q >= MT_RES_SCALE)
            q = MT_RES_SCALE;
        else if (b->it[i].id == MT_RES_TPU)
            q = q > MT_RES_SCALE ? q / 2 : q;
        else if (rrnd(w, 2))
            q /= 2;
        mt_res_set_add(r, b->it[i].id, q);
    }
}

static void r_allocate(struct rworld *w)
{
    struct mt_task_spec t;

    if (w->ng == RG)
        return;
    mt_task_spec_init(&t, w->next_id++);
    rand_res(w, &t.res, false);
    if (w->npg && rrnd(w, 2)) {
        const struct rpg *p = &w->pg[rrnd(w, w->npg)];

        t.strategy = MT_PLACE_PG;
        t.pg = p->id;
        t.bundle = (int32_t)rrnd(w, (uint32_t)p->spec.nbundles + 1) - 1;
        part_of(w, &p->b[t.bundle < 0 ? 0 : t.bundle].res, &t.res);
    } else if (rrnd(w, 2)) {
        t.strategy = MT_PLACE_SPREAD;
    }
    if (mt_sched_allocate(w->a, &t, &w->g[w->ng]) == 0)
        w->res[w->ng++] = t.res;
}

static void r_finish(struct rworld *w, uint32_t i)
{
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(w->a, w->g[i].handle), 0);
    w->g[i] = w->g[--w->ng];
    w->res[i] = w->res[w->ng];
}

static void r_pg_create(struct rworld *w)
{
    struct rpg *p = &w->pg[w->npg];

    if (w->npg == RPG)
        return;
    memset(p, 0, sizeof(*p));
    p->id = w->next_id++;
    p->spec = (struct mt_pg_spec){
        p->id, (enum mt_sched_pg_strategy)rrnd(w, MT_SCHED_PG_STRATEGY_COUNT),
        p->b, 1 + rrnd(w, 3)};
    for (size_t i = 0; i < p->spec.nbundles; i++)
        rand_res(w, &p->b[i].res, true);
    /* Only created groups are adopted; pending ones are created anew. */
    if (mt_sched_pg_create(w->a, &p->spec, 0) == 0)
        w->npg++;
    else
        mt_sched_pg_remove(w->a, p->id);
}

static void r_pg_remove(struct rworld *w)
{
    uint32_t i = rrnd(w, w->npg);

    for (uint32_t j = w->ng; j-- > 0;)
        if (w->g[j].pg == w->pg[i].id)
            r_finish(w, j);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(w->a, w->pg[i].id), 0);
    w->pg[i] = w->pg[--w->npg];
    w->pg[i].spec.bundles = w->pg[i].b;
}

static void adopt_groups(struct rworld *w, struct mt_sched *b)
{
    for (uint32_t i = 0; i < w->npg; i++) {
        struct mt_bundle_info at[3];

        for (uint32_t j = 0; j < w->pg[i].spec.nbundles; j++)
            CU_ASSERT_FATAL(mt_sched_pg_bundle(w->a, w->pg[i].id, j,
                                               &at[j]) == 0);
        CU_ASSERT_EQUAL(mt_sched_pg_adopt_at(b, &w->pg[i].spec, at, 0), 0);
    }
}

/* Adopt w's grants outside groups (in_pg false) or inside them into b. */
static void adopt_grants(struct rworld *w, struct mt_sched *b, bool in_pg,
                         struct mt_grant *nw)
{
    for (uint32_t i = 0; i < w->ng; i++) {
        struct mt_task_spec t;

        if ((w->g[i].pg != 0) != in_pg)
            continue;
        mt_task_spec_init(&t, i);
        t.res = w->res[i];
        CU_ASSERT_EQUAL(mt_sched_adopt(b, &t, &w->g[i], &nw[i]), 0);
        mt_t_check(b);
    }
}

static void assert_same(struct mt_sched *a, struct mt_sched *b)
{
    for (uint32_t n = 0; n < RNODES; n++) {
        for (int id = 0; id < MT_RES_NBUILTIN; id++)
            CU_ASSERT_EQUAL(avail_of(a, n, id), avail_of(b, n, id));
        CU_ASSERT_EQUAL(mt_sched_node_free_gpus(a, n),
                        mt_sched_node_free_gpus(b, n));
        CU_ASSERT_EQUAL(mt_sched_node_free_tpu_chips(a, n),
                        mt_sched_node_free_tpu_chips(b, n));
    }
}

static void restart_run(uint64_t seed)
{
    struct rworld *w = calloc(1, sizeof(*w));
    struct mt_grant *nw = calloc(RG, sizeof(*nw));
    struct mt_sched *b = mt_t_sched();

    CU_ASSERT_FATAL(w && nw);
    w->a = mt_t_sched();
    w->rng = seed;
    w->next_id = 1;
    add_nodes(w->a);
    add_nodes(b);
    for (int i = 0; i < 400; i++) {
        uint32_t op = rrnd(w, 10);

        if (op < 5)
            r_allocate(w);
        else if (op < 7 && w->ng)
            r_finish(w, rrnd(w, w->ng));
        else if (op < 9)
            r_pg_create(w);
        else if (w->npg)
            r_pg_remove(w);
    }
    /* Plain grants before the groups: that order must not matter. */
    adopt_grants(w, b, false, nw);
    adopt_groups(w, b);
    adopt_grants(w, b, true, nw);
    mt_t_check(b);
    assert_same(w->a, b);
    for (uint32_t i = 0; i < w->ng; i++)
        CU_ASSERT_EQUAL(mt_sched_on_task_finished(b, nw[i].handle), 0);
    for (uint32_t i = 0; i < w->npg; i++)
        CU_ASSERT_EQUAL(mt_sched_pg_remove(b, w->pg[i].id), 0);
    assert_whole(b);
    mt_sched_destroy(b);
    mt_sched_destroy(w->a);
    free(nw);
    free(w);
}

static void test_restart_random(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++)
        restart_run(seed * 104729);
}

CU_TestInfo mt_test_adopt[] = {
    {"adopt_whole_gpus", test_adopt_whole_gpus},
    {"adopt_gpu_fractions", test_adopt_gpu_fractions},
    {"adopt_tpu_blocks", test_adopt_tpu_blocks},
    {"adopt_errors_charge_nothing", test_adopt_errors_charge_nothing},
    {"adopt_into_bundle", test_adopt_into_bundle},
    {"pg_adopt_every_strategy", test_pg_adopt_every_strategy},
    {"pg_adopt_errors", test_pg_adopt_errors},
    {"pg_adopt_at_devices", test_pg_adopt_at_devices},
    {"pg_adopt_node_death", test_pg_adopt_node_death},
    {"slice_adopt", test_slice_adopt},
    {"restart_random", test_restart_random},
    CU_TEST_INFO_NULL,
};
