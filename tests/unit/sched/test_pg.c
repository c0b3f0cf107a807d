/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_pg.c -- placement groups: every strategy (table-driven), atomicity,
 * bundle label selectors, removal returning every unit, node death
 * rescheduling only the lost bundles, tasks into a bundle by index, GPU
 * devices reserved by a bundle, and malformed groups.
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
void mt_t_check(struct mt_sched *s);

static void cpu_bundles(struct mt_bundle_spec *b, size_t n, double cpu)
{
    memset(b, 0, n * sizeof(*b));
    for (size_t i = 0; i < n; i++)
        mt_res_set_add(&b[i].res, MT_RES_CPU, mt_res_from_double(cpu));
}

static uint32_t distinct_nodes(struct mt_sched *s, uint64_t pg, uint32_t nb)
{
    uint32_t mask = 0;

    for (uint32_t i = 0; i < nb; i++) {
        struct mt_bundle_info bi;

        CU_ASSERT_FATAL(mt_sched_pg_bundle(s, pg, i, &bi) == 0);
        CU_ASSERT_FATAL(bi.node != MT_NODE_NONE);
        mask |= 1u << bi.node;
    }
    return (uint32_t)__builtin_popcount(mask);
}

static void test_strategies_table(void)
{
    static const struct {
        enum mt_sched_pg_strategy st;
        int nb;
        double cpu;
        int rc;
        uint32_t nodes; /* distinct nodes used when created */
    } rows[] = {
        {MT_SCHED_PG_PACK, 4, 1, 0, 1},
        {MT_SCHED_PG_STRICT_PACK, 4, 1, 0, 1},
        {MT_SCHED_PG_SPREAD, 3, 1, 0, 3},
        {MT_SCHED_PG_STRICT_SPREAD, 3, 1, 0, 3},
        {MT_SCHED_PG_SPREAD, 5, 1, 0, 3},             /* soft: reuses nodes */
        {MT_SCHED_PG_STRICT_SPREAD, 4, 1, -MT_EINFEASIBLE, 0},
        {MT_SCHED_PG_STRICT_PACK, 2, 6, -MT_EINFEASIBLE, 0}, /* 12 > 8 per node */
        {MT_SCHED_PG_PACK, 2, 6, 0, 2},               /* soft: splits */
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mt_sched *s = mt_t_sched();
        struct mt_bundle_spec b[8];
        struct mt_pg_spec spec = {42, rows[i].st, b, (size_t)rows[i].nb};
        enum mt_sched_pg_state st;

        mt_t_node(s, "n0", 8, 0, 0, NULL, 0);
        mt_t_node(s, "n1", 8, 0, 0, NULL, 0);
        mt_t_node(s, "n2", 8, 0, 0, NULL, 0);
        cpu_bundles(b, (size_t)rows[i].nb, rows[i].cpu);
        CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), rows[i].rc);
        CU_ASSERT_EQUAL(mt_sched_pg_state(s, 42, &st), 0);
        if (rows[i].rc == 0) {
            CU_ASSERT_EQUAL(st, MT_SCHED_PG_CREATED);
            CU_ASSERT_EQUAL(distinct_nodes(s, 42, (uint32_t)rows[i].nb),
                            rows[i].nodes);
        } else {
            CU_ASSERT_EQUAL(st, MT_SCHED_PG_PENDING);
        }
        mt_t_check(s);
        mt_sched_destroy(s);
    }
}

static void test_atomic_all_or_nothing(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[3];
    struct mt_pg_spec spec = {7, MT_SCHED_PG_STRICT_SPREAD, b, 3};
    struct mt_placement out[4];
    struct mt_task_spec t;
    struct mt_grant g;
    int64_t avail;
    uint32_t n0 = mt_t_node(s, "n0", 4, 0, 0, NULL, 0);

    mt_t_node(s, "n1", 4, 0, 0, NULL, 0);
    mt_t_node(s, "n2", 4, 0, 0, NULL, 0);
    /* Fill n0 so only two nodes have room: nothing may be reserved. */
    mt_t_task(&t, 1, 4, 0, 0);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = n0;
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    cpu_bundles(b, 3, 2);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EAGAIN);
    for (uint32_t n = 1; n < 3; n++) {
        mt_sched_node_res(s, n, MT_RES_CPU, NULL, &avail);
        CU_ASSERT_EQUAL(avail, 40000);
    }
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 0);
    mt_t_check(s);
    /* Room appears: the next decide creates the whole group. */
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g.handle), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].kind, MT_DECISION_PG);
    CU_ASSERT_EQUAL(out[0].id, 7);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(distinct_nodes(s, 7, 3), 3);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static const char *const zone_b[] = {"b"};

static void test_bundle_label_selectors(void)
{
    static const struct mt_label la[] = {{"zone", "a"}};
    static const struct mt_label lb[] = {{"zone", "b"}};
    const struct mt_label_expr e = {"zone", MT_LABEL_EQ, zone_b, 1};
    const struct mt_label_selector sel = {&e, 1};
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {9, MT_SCHED_PG_PACK, b, 2};
    struct mt_bundle_info bi;
    uint32_t nb;

    mt_t_node(s, "a", 8, 0, 0, la, 1);
    nb = mt_t_node(s, "b", 8, 0, 0, lb, 1);
    cpu_bundles(b, 2, 1);
    b[1].selector = &sel;
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 9, 1, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, nb);
    /* STRICT_PACK honours every bundle's selector on the one node. */
    spec.id = 10;
    spec.strategy = MT_SCHED_PG_STRICT_PACK;
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 10, 0, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, nb);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_remove_returns_everything(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {5, MT_SCHED_PG_SPREAD, b, 2};
    struct mt_task_spec t;
    struct mt_grant g;
    int64_t avail;

    mt_t_node(s, "n0", 8, 4, 0, NULL, 0);
    mt_t_node(s, "n1", 8, 4, 0, NULL, 0);
    cpu_bundles(b, 2, 2);
    mt_res_set_add(&b[0].res, MT_RES_GPU, 20000);
    mt_res_set_add(&b[1].res, MT_RES_GPU, 5000);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    mt_t_task(&t, 1, 1, 0.5, 0);
    t.strategy = MT_PLACE_PG;
    t.pg = 5;
    t.bundle = 0;
    CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), 0);
    CU_ASSERT_EQUAL(g.pg, 5);
    CU_ASSERT_EQUAL(g.bundle, 0);
    mt_t_check(s);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 5), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 5), -MT_ENOENT);
    for (uint32_t n = 0; n < 2; n++) {
        mt_sched_node_res(s, n, MT_RES_CPU, NULL, &avail);
        CU_ASSERT_EQUAL(avail, 80000);
        mt_sched_node_res(s, n, MT_RES_GPU, NULL, &avail);
        CU_ASSERT_EQUAL(avail, 40000);
        CU_ASSERT_EQUAL(mt_sched_node_free_gpus(s, n), 0xfu);
    }
    /* The task's grant is stale now: finishing it returns nothing. */
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, g.handle), 0);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_tasks_into_bundles(void)
{
    static const struct {
        int32_t bundle;
        double cpu;
        double gpu;
        int rc;
    } rows[] = {
        {0, 1, 0.25, 0},
        {0, 1, 0.25, 0},
        {0, 1, 0.25, -MT_EAGAIN},        /* bundle 0 CPU used up */
        {1, 4, 0, 0},
        {1, 1, 0, -MT_EAGAIN},
        {1, 8, 0, -MT_EINFEASIBLE},      /* bigger than the bundle */
        {0, 0, 1, -MT_EINFEASIBLE},      /* bundle 0 holds 0.5 GPU */
        {-1, 0, 0.5, -MT_EAGAIN},        /* 0.5 of bundle 0 is used */
        {5, 1, 0, -MT_EINVAL},           /* no such bundle index */
    };
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {3, MT_SCHED_PG_PACK, b, 2};
    struct mt_bundle_info bi;

    mt_t_node(s, "n0", 16, 2, 0, NULL, 0);
    cpu_bundles(b, 2, 2);
    mt_res_set_add(&b[0].res, MT_RES_GPU, 5000);
    b[1].res.it[0].qty = 40000;
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 3, 0, &bi), 0);
    CU_ASSERT_EQUAL(__builtin_popcount(bi.gpus), 1);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mt_task_spec t;
        struct mt_grant g;

        mt_t_task(&t, i, rows[i].cpu, rows[i].gpu, 0);
        t.strategy = MT_PLACE_PG;
        t.pg = 3;
        t.bundle = rows[i].bundle;
        CU_ASSERT_EQUAL(mt_sched_allocate(s, &t, &g), rows[i].rc);
        if (rows[i].rc == 0 && rows[i].gpu > 0)
            CU_ASSERT_EQUAL(g.gpus, bi.gpus);
    }
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_node_death_reschedules_lost_bundles(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[3];
    struct mt_pg_spec spec = {11, MT_SCHED_PG_STRICT_SPREAD, b, 3};
    struct mt_bundle_info before[3], after;
    struct mt_placement out[4];
    enum mt_sched_pg_state st;
    uint32_t dead;

    for (int i = 0; i < 3; i++) {
        char name[4] = {'n', (char)('0' + i), 0};

        mt_t_node(s, name, 4, 0, 0, NULL, 0);
    }
    cpu_bundles(b, 3, 1);
    CU_ASSERT_EQUAL_FATAL(mt_sched_pg_create(s, &spec, 0), 0);
    for (uint32_t i = 0; i < 3; i++)
        mt_sched_pg_bundle(s, 11, i, &before[i]);
    dead = before[1].node;
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, dead), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_state(s, 11, &st), 0);
    CU_ASSERT_EQUAL(st, MT_SCHED_PG_RESCHEDULING);
    mt_t_check(s);
    /* Only two nodes left: STRICT_SPREAD cannot place the third. */
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].status, -MT_EINFEASIBLE);
    mt_t_node(s, "n3", 4, 0, 0, NULL, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].kind, MT_DECISION_PG);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(mt_sched_pg_state(s, 11, &st), 0);
    CU_ASSERT_EQUAL(st, MT_SCHED_PG_CREATED);
    for (uint32_t i = 0; i < 3; i++) {
        mt_sched_pg_bundle(s, 11, i, &after);
        if (i != 1) {
            CU_ASSERT_EQUAL(after.node, before[i].node); /* kept */
        } else {
            CU_ASSERT_EQUAL(after.node, 3);
        }
    }
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_pending_task_for_removed_group(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[1];
    struct mt_pg_spec spec = {12, MT_SCHED_PG_PACK, b, 1};
    struct mt_placement out[4];
    struct mt_task_spec t;

    mt_t_node(s, "n0", 4, 0, 0, NULL, 0);
    cpu_bundles(b, 1, 1);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    mt_t_task(&t, 1, 1, 0, 0);
    t.strategy = MT_PLACE_PG;
    t.pg = 12;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    t.id = 2;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 12), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].id, 2);
    CU_ASSERT_EQUAL(out[0].status, -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_pending(s), 0);
    mt_sched_destroy(s);
}

static void test_bad_groups(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {1, (enum mt_sched_pg_strategy)9, b, 2};

    mt_t_node(s, "n0", 4, 0, 0, NULL, 0);
    cpu_bundles(b, 2, 1);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EINVAL);
    spec.strategy = MT_SCHED_PG_PACK;
    spec.nbundles = 0;
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EINVAL);
    spec.nbundles = 2;
    memset(&b[1].res, 0, sizeof(b[1].res)); /* empty bundle */
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EINVAL);
    mt_res_set_add(&b[1].res, MT_RES_GPU, 15000); /* GPU 1.5 */
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EINVAL);
    cpu_bundles(b, 2, 1);
    spec.id = 0;
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EINVAL);
    spec.id = 1;
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), -MT_EEXIST);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, NULL, 0), -MT_EINVAL);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* Index order would put the small bundle on the only big node. */
static void test_biggest_bundle_first(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {21, MT_SCHED_PG_STRICT_SPREAD, b, 2};
    struct mt_bundle_info bi;
    uint32_t big = mt_t_node(s, "big", 8, 0, 0, NULL, 0);

    mt_t_node(s, "small", 2, 0, 0, NULL, 0);
    memset(b, 0, sizeof(b));
    mt_res_set_add(&b[0].res, MT_RES_CPU, 10000);
    mt_res_set_add(&b[1].res, MT_RES_CPU, 60000);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 21, 1, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, big);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* Summed quantities fit the fullest GPU node, its devices do not. */
static void test_strict_pack_tries_another_node(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t x = mt_t_node(s, "x", 8, 2, 0, NULL, 0);
    uint32_t y = mt_t_node(s, "y", 8, 2, 0, NULL, 0);
    struct mt_bundle_spec b[2];
    struct mt_pg_spec spec = {22, MT_SCHED_PG_STRICT_PACK, b, 2};
    struct mt_bundle_info bi;
    struct mt_task_spec t;
    struct mt_grant g;

    mt_t_task(&t, 1, 0, 0.5, 0);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = x;
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    memset(b, 0, sizeof(b));
    mt_res_set_add(&b[0].res, MT_RES_GPU, 6000);
    mt_res_set_add(&b[1].res, MT_RES_GPU, 6000);
    CU_ASSERT_EQUAL(mt_sched_pg_create(s, &spec, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 22, 0, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, y);
    CU_ASSERT_EQUAL(mt_sched_pg_bundle(s, 22, 1, &bi), 0);
    CU_ASSERT_EQUAL(bi.node, y);
    mt_t_check(s);
    mt_sched_destroy(s);
}

CU_TestInfo mt_test_pg[] = {
    {"biggest_bundle_first", test_biggest_bundle_first},
    {"strict_pack_tries_another_node", test_strict_pack_tries_another_node},
    {"strategies_table", test_strategies_table},
    {"atomic_all_or_nothing", test_atomic_all_or_nothing},
    {"bundle_label_selectors", test_bundle_label_selectors},
    {"remove_returns_everything", test_remove_returns_everything},
    {"tasks_into_bundles", test_tasks_into_bundles},
    {"node_death_reschedules_lost_bundles",
     test_node_death_reschedules_lost_bundles},
    {"pending_task_for_removed_group", test_pending_task_for_removed_group},
    {"bad_groups", test_bad_groups},
    CU_TEST_INFO_NULL,
};
