/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy.c -- node choice: hybrid pack-then-top-k, SPREAD, node
 * affinity (hard and soft), label selectors, keeping CPU-only work off
 * accelerator nodes, retryable versus infeasible, bad requests.
 */
#include <stdio.h>
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

static int place(struct mt_sched *s, struct mt_task_spec *t, uint32_t *node)
{
    struct mt_grant g;
    int rc = mt_sched_allocate(s, t, &g);

    *node = rc == 0 ? g.node : MT_NODE_NONE;
    return rc;
}

static void test_hybrid_packs_below_threshold(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t n[4], got, per[4] = {0};
    struct mt_task_spec t;

    for (int i = 0; i < 4; i++) {
        char name[8] = {'n', (char)('0' + i), 0};

        n[i] = mt_t_node(s, name, 8, 0, 0, NULL, 0);
    }
    /* Node 0 takes work until half full, then node 1, ... */
    for (int i = 0; i < 16; i++) {
        mt_t_task(&t, (uint64_t)i, 1, 0, 0);
        CU_ASSERT_EQUAL_FATAL(place(s, &t, &got), 0);
        CU_ASSERT_EQUAL(got, n[i / 4]);
    }
    /* Every node is at 0.5: now the least loaded take turns. */
    for (int i = 0; i < 16; i++) {
        mt_t_task(&t, (uint64_t)(100 + i), 1, 0, 0);
        CU_ASSERT_EQUAL_FATAL(place(s, &t, &got), 0);
        per[got]++;
    }
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(per[i], 4);
    mt_t_task(&t, 999, 1, 0, 0);
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EAGAIN);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_spread_round_robin(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t seen = 0, got;
    struct mt_task_spec t;

    for (int i = 0; i < 4; i++) {
        char name[8] = {'n', (char)('0' + i), 0};

        mt_t_node(s, name, 8, 0, 0, NULL, 0);
    }
    for (int i = 0; i < 4; i++) {
        mt_t_task(&t, (uint64_t)i, 1, 0, 0);
        t.strategy = MT_PLACE_SPREAD;
        CU_ASSERT_EQUAL_FATAL(place(s, &t, &got), 0);
        seen |= 1u << got;
    }
    CU_ASSERT_EQUAL(seen, 0xf);
    mt_sched_destroy(s);
}

static void test_node_affinity(void)
{
    static const struct {
        bool soft;
        int target;     /* 0 small node, 1 big node, 2 dead node */
        double cpu;
        int rc;
        int want;       /* expected node index, -1 none */
    } rows[] = {
        {false, 0, 1, 0, 0},
        {false, 0, 2, -MT_EAGAIN, -1},       /* small node is busy */
        {false, 0, 64, -MT_EINFEASIBLE, -1}, /* never fits there */
        {true, 0, 2, 0, 1},                  /* soft: falls back */
        {false, 2, 1, -MT_EINFEASIBLE, -1},  /* hard on a dead node */
        {true, 2, 1, 0, 1},
    };
    struct mt_sched *s = mt_t_sched();
    uint32_t n[3], got;
    struct mt_task_spec t;

    n[0] = mt_t_node(s, "small", 2, 0, 0, NULL, 0);
    n[1] = mt_t_node(s, "big", 16, 0, 0, NULL, 0);
    n[2] = mt_t_node(s, "gone", 16, 0, 0, NULL, 0);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, n[2]), 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        mt_t_task(&t, i, rows[i].cpu, 0, 0);
        t.strategy = MT_PLACE_NODE_AFFINITY;
        t.affinity_node = n[rows[i].target];
        t.affinity_soft = rows[i].soft;
        CU_ASSERT_EQUAL(place(s, &t, &got), rows[i].rc);
        if (rows[i].want >= 0)
            CU_ASSERT_EQUAL(got, n[rows[i].want]);
    }
    mt_t_task(&t, 50, 1, 0, 0);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = 1000;
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EINVAL);
    mt_sched_destroy(s);
}

static const char *const zone_a[] = {"a"};
static const char *const zone_bc[] = {"b", "c"};

static void test_label_selectors(void)
{
    static const struct mt_label la[] = {{"zone", "a"}};
    static const struct mt_label lb[] = {{"zone", "b"}, {"ssd", "yes"}};
    static const struct mt_label lc[] = {{"zone", "c"}};
    static const struct {
        struct mt_label_expr e;
        int rc;
        uint32_t allowed; /* bit mask of nodes that may be chosen */
    } rows[] = {
        {{"zone", MT_LABEL_EQ, zone_a, 1}, 0, 1},
        {{"zone", MT_LABEL_NE, zone_a, 1}, 0, 6},
        {{"zone", MT_LABEL_IN, zone_bc, 2}, 0, 6},
        {{"zone", MT_LABEL_NOT_IN, zone_bc, 2}, 0, 1},
        {{"ssd", MT_LABEL_EXISTS, NULL, 0}, 0, 2},
        {{"ssd", MT_LABEL_NOT_EXISTS, NULL, 0}, 0, 5},
        {{"gpu", MT_LABEL_EXISTS, NULL, 0}, -MT_EINFEASIBLE, 0},
    };
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    uint32_t got;

    mt_t_node(s, "a", 8, 0, 0, la, 1);
    mt_t_node(s, "b", 8, 0, 0, lb, 2);
    mt_t_node(s, "c", 8, 0, 0, lc, 1);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mt_label_selector sel = {&rows[i].e, 1};

        mt_t_task(&t, i, 1, 0, 0);
        t.selector = &sel;
        CU_ASSERT_EQUAL(place(s, &t, &got), rows[i].rc);
        if (rows[i].rc == 0)
            CU_ASSERT(rows[i].allowed >> got & 1);
    }
    mt_sched_destroy(s);
}

static void test_cpu_work_avoids_accelerators(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t gpu = mt_t_node(s, "gpu", 8, 4, 0, NULL, 0);
    uint32_t tpu = mt_t_node(s, "tpu", 8, 0, 4, NULL, 0);
    uint32_t cpu = mt_t_node(s, "cpu", 4, 0, 0, NULL, 0);
    struct mt_task_spec t;
    uint32_t got;

    for (int i = 0; i < 4; i++) {
        mt_t_task(&t, (uint64_t)i, 1, 0, 0);
        CU_ASSERT_EQUAL(place(s, &t, &got), 0);
        CU_ASSERT_EQUAL(got, cpu);
    }
    /* The CPU node is full: now accelerator nodes are used. */
    mt_t_task(&t, 10, 1, 0, 0);
    CU_ASSERT_EQUAL(place(s, &t, &got), 0);
    CU_ASSERT(got == gpu || got == tpu);
    mt_t_task(&t, 11, 1, 1, 0);
    CU_ASSERT_EQUAL(place(s, &t, &got), 0);
    CU_ASSERT_EQUAL(got, gpu);
    mt_t_task(&t, 12, 1, 0, 2);
    CU_ASSERT_EQUAL(place(s, &t, &got), 0);
    CU_ASSERT_EQUAL(got, tpu);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_bad_requests(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    uint32_t got;

    mt_t_node(s, "n", 8, 8, 8, NULL, 0);
    mt_t_task(&t, 1, 1, 0, 0);
    t.strategy = (enum mt_task_place)17;
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), -MT_EINVAL);
    mt_t_task(&t, 2, 0, 1.5, 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), -MT_EINVAL);
    mt_task_spec_init(&t, 3);
    t.res.n = 1;
    t.res.it[0].id = MT_RES_TPU;
    t.res.it[0].qty = 30000;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), -MT_EINVAL);
    t.res.it[0].id = MT_RES_CPU;
    t.res.it[0].qty = -10000;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), -MT_EINVAL);
    t.res.it[0].id = 40; /* never interned */
    t.res.it[0].qty = 10000;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), -MT_EINVAL);
    mt_t_task(&t, 4, 1, 0, 0);
    t.strategy = MT_PLACE_PG;
    t.pg = 999;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, NULL, 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_pending(s), 0);
    mt_sched_destroy(s);
}

static void test_custom_resources_and_infeasible(void)
{
    struct mt_sched *s = mt_t_sched();
    int accel = mt_sched_resource_id(s, "accel");
    struct mt_res_item res[] = {{MT_RES_CPU, 40000}, {(uint16_t)accel, 5000}};
    struct mt_node_spec spec = {"x", res, 2, NULL, 0};
    struct mt_task_spec t;
    uint32_t node, got;

    CU_ASSERT_FATAL(accel >= MT_RES_NBUILTIN);
    mt_t_node(s, "plain", 4, 0, 0, NULL, 0);
    CU_ASSERT_EQUAL(mt_sched_on_node_added(s, &spec, &node), 0);
    mt_t_task(&t, 1, 1, 0, 0);
    mt_res_set_add(&t.res, accel, 2500);
    CU_ASSERT_EQUAL(place(s, &t, &got), 0);
    CU_ASSERT_EQUAL(got, node);
    CU_ASSERT_EQUAL(place(s, &t, &got), 0);
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EAGAIN);
    mt_t_task(&t, 2, 1, 0, 0);
    mt_res_set_add(&t.res, accel, 6000);
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EINFEASIBLE);
    mt_sched_destroy(s);
}

static void test_accel_best_fit_keeps_whole_nodes(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t a = mt_t_node(s, "a", 16, 8, 0, NULL, 0);
    uint32_t b = mt_t_node(s, "b", 16, 8, 0, NULL, 0);
    struct mt_task_spec t;
    uint32_t got, first;

    mt_t_task(&t, 1, 1, 1, 0);
    CU_ASSERT_EQUAL(place(s, &t, &first), 0);
    /* More 1-GPU work piles onto the same node, past half full. */
    for (int i = 0; i < 6; i++) {
        mt_t_task(&t, (uint64_t)(2 + i), 1, 1, 0);
        CU_ASSERT_EQUAL(place(s, &t, &got), 0);
        CU_ASSERT_EQUAL(got, first);
    }
    /* So an 8-GPU task still finds a whole node. */
    mt_t_task(&t, 10, 1, 8, 0);
    CU_ASSERT_EQUAL(place(s, &t, &got), 0);
    CU_ASSERT_EQUAL(got, first == a ? b : a);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_accel_spread_when_best_fit_off(void)
{
    struct mt_sched_opts o;
    struct mt_sched *s;
    struct mt_task_spec t;
    uint32_t got, seen = 0;

    mt_sched_opts_init(&o);
    o.accel_best_fit = false;
    CU_ASSERT_FATAL(mt_sched_create(&o, &s) == 0);
    mt_t_node(s, "a", 16, 8, 0, NULL, 0);
    mt_t_node(s, "b", 16, 8, 0, NULL, 0);
    for (int i = 0; i < 8; i++) {
        mt_t_task(&t, (uint64_t)i, 1, 1, 0);
        CU_ASSERT_EQUAL(place(s, &t, &got), 0);
        seen |= 1u << got;
    }
    CU_ASSERT_EQUAL(seen, 3u); /* hybrid: half of each node */
    mt_sched_destroy(s);
}

static const char *const rack_r1[] = {"r1"};
static const char *const rack_none[] = {"r9"};

/* Few nodes carry the label: placement walks the label's posting list. */
static void test_selective_label_posting(void)
{
    struct mt_sched *s = mt_t_sched();
    const struct mt_label_expr e = {"rack", MT_LABEL_EQ, rack_r1, 1};
    const struct mt_label_expr none = {"rack", MT_LABEL_EQ, rack_none, 1};
    struct mt_label_selector sel = {&e, 1};
    uint32_t r1[2] = {MT_NODE_NONE, MT_NODE_NONE}, got;
    struct mt_task_spec t;

    for (int i = 0; i < 40; i++) {
        char name[8];
        struct mt_label l = {"rack", i == 7 || i == 30 ? "r1" : "r0"};

        snprintf(name, sizeof(name), "n%d", i);
        got = mt_t_node(s, name, 4, 0, 0, &l, 1);
        if (i == 7)
            r1[0] = got;
        if (i == 30)
            r1[1] = got;
    }
    for (int i = 0; i < 8; i++) {
        mt_t_task(&t, (uint64_t)i, 1, 0, 0);
        t.selector = &sel;
        CU_ASSERT_EQUAL(place(s, &t, &got), 0);
        /* pack: the first r1 node until half full, then least loaded */
        if (i < 2)
            CU_ASSERT_EQUAL(got, r1[0]);
        CU_ASSERT(got == r1[0] || got == r1[1]);
    }
    mt_t_task(&t, 9, 1, 0, 0);
    t.selector = &sel;
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EAGAIN);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, r1[0]), 0);
    sel.exprs = &none;
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EINFEASIBLE);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* Same seed, same events: the same placements (top-k is seeded). */
static void test_seeded_runs_repeat(void)
{
    uint32_t first[64];

    for (int run = 0; run < 2; run++) {
        struct mt_sched *s = mt_t_sched();
        struct mt_task_spec t;
        uint32_t got;

        for (int i = 0; i < 20; i++) {
            char name[8];

            snprintf(name, sizeof(name), "n%d", i);
            mt_t_node(s, name, 4, 0, 0, NULL, 0);
        }
        for (int i = 0; i < 64; i++) {
            mt_t_task(&t, (uint64_t)i, 1, 0, 0);
            CU_ASSERT_EQUAL_FATAL(place(s, &t, &got), 0);
            if (run == 0)
                first[i] = got;
            else
                CU_ASSERT_EQUAL(got, first[i]);
        }
        mt_sched_destroy(s);
    }
}

static const char *const n13[] = {"n13"};

/* Every node carries manta.io/node-id=<name>: select one node by label. */
static void test_node_id_label(void)
{
    struct mt_sched *s = mt_t_sched();
    const struct mt_label_expr e = {MT_LABEL_NODE_ID, MT_LABEL_EQ, n13, 1};
    struct mt_label_selector sel = {&e, 1};
    struct mt_task_spec t;
    uint32_t want = 0, got;

    for (int i = 0; i < 20; i++) {
        char name[8];
        uint32_t h;

        snprintf(name, sizeof(name), "n%d", i);
        h = mt_t_node(s, name, 4, 0, 0, NULL, 0);
        if (i == 13)
            want = h;
    }
    for (int i = 0; i < 4; i++) {
        mt_t_task(&t, (uint64_t)i, 1, 0, 0);
        t.selector = &sel;
        CU_ASSERT_EQUAL(place(s, &t, &got), 0);
        CU_ASSERT_EQUAL(got, want);
    }
    CU_ASSERT_EQUAL(place(s, &t, &got), -MT_EAGAIN);
    mt_sched_destroy(s);
}

CU_TestInfo mt_test_policy[] = {
    {"node_id_label", test_node_id_label},
    {"seeded_runs_repeat", test_seeded_runs_repeat},
    {"selective_label_posting", test_selective_label_posting},
    {"accel_best_fit_keeps_whole_nodes", test_accel_best_fit_keeps_whole_nodes},
    {"accel_spread_when_best_fit_off", test_accel_spread_when_best_fit_off},
    {"hybrid_packs_below_threshold", test_hybrid_packs_below_threshold},
    {"spread_round_robin", test_spread_round_robin},
    {"node_affinity", test_node_affinity},
    {"label_selectors", test_label_selectors},
    {"cpu_work_avoids_accelerators", test_cpu_work_avoids_accelerators},
    {"bad_requests", test_bad_requests},
    {"custom_resources_and_infeasible", test_custom_resources_and_infeasible},
    CU_TEST_INFO_NULL,
};
