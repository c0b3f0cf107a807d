/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_slice.c -- TPU slice reservations over labelled hosts: whole slices
 * only, bundle i on worker i, concurrent reservations on different slices,
 * all-or-nothing when a host is busy or dead, multislice, a lost host
 * re-reserving the gang elsewhere, bad pod types.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "sched/accel_env.h"
#include "sched/sched.h"
#include "tests/unit/unit.h"

struct mt_sched *mt_t_sched(void);
uint32_t mt_t_node(struct mt_sched *s, const char *name, double cpu, int gpu,
                   int tpu, const struct mt_label *labels, size_t nl);
void mt_t_task(struct mt_task_spec *t, uint64_t id, double cpu, double gpu,
               int tpu);
void mt_t_check(struct mt_sched *s);

/* Add the hosts of one slice; returns the handle of worker 0. */
static uint32_t add_slice(struct mt_sched *s, const char *slice,
                          const char *pod, int hosts, int chips)
{
    uint32_t first = MT_NODE_NONE;

    /* Add workers in reverse order: the scheduler must not care. */
    for (int w = hosts - 1; w >= 0; w--) {
        char name[64], wid[16];
        struct mt_label l[3] = {
            {"manta.io/tpu-slice-name", slice},
            {"manta.io/tpu-worker-id", wid},
            {"manta.io/tpu-pod-type", pod},
        };

        snprintf(name, sizeof(name), "%s-w%d", slice, w);
        snprintf(wid, sizeof(wid), "%d", w);
        first = mt_t_node(s, name, 8, 0, chips, l, 3);
    }
    return first;
}

static void slice_spec(struct mt_slice_spec *sp, uint64_t id, const char *pod,
                       uint32_t k)
{
    memset(sp, 0, sizeof(*sp));
    sp->id = id;
    sp->pod_type = pod;
    sp->nslices = k;
    mt_res_set_add(&sp->per_host, MT_RES_CPU, 10000);
}

static void check_bundle_workers(struct mt_sched *s, uint64_t pg, uint32_t nb,
                                 uint32_t hosts)
{
    for (uint32_t i = 0; i < nb; i++) {
        struct mt_bundle_info bi;
        char name[64];
        uint32_t node;

        CU_ASSERT_FATAL(mt_sched_pg_bundle(s, pg, i, &bi) == 0);
        CU_ASSERT_FATAL(bi.node != MT_NODE_NONE);
        CU_ASSERT_EQUAL(bi.tpu_chips, 0xfu);
        /* bundle i sits on worker i % hosts of its slice */
        snprintf(name, sizeof(name), "%s-w%u",
                 mt_sched_pg_slice_name(s, pg, i), i % hosts);
        CU_ASSERT_EQUAL(mt_sched_node_find(s, name, &node), 0);
        CU_ASSERT_EQUAL(node, bi.node);
    }
}

static void test_reserve_whole_slice(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;
    enum mt_sched_pg_state st;

    add_slice(s, "A", "v4-16", 2, 4);
    slice_spec(&sp, 1, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_state(s, 1, &st), 0);
    CU_ASSERT_EQUAL(st, MT_SCHED_PG_CREATED);
    check_bundle_workers(s, 1, 2, 2);
    CU_ASSERT_STRING_EQUAL(mt_sched_pg_slice_name(s, 1, 0), "A");
    CU_ASSERT_PTR_NULL(mt_sched_pg_slice_name(s, 1, 2));
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_concurrent_get_different_slices(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;
    struct mt_placement out[4];

    add_slice(s, "A", "v4-16", 2, 4);
    add_slice(s, "B", "v4-16", 2, 4);
    add_slice(s, "C", "v6e-16", 4, 4); /* other pod type: never used */
    slice_spec(&sp, 1, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    slice_spec(&sp, 2, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    CU_ASSERT_STRING_NOT_EQUAL(mt_sched_pg_slice_name(s, 1, 0),
                               mt_sched_pg_slice_name(s, 2, 0));
    slice_spec(&sp, 3, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EAGAIN);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(s, 1), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].id, 3);
    CU_ASSERT_EQUAL(out[0].status, 0);
    check_bundle_workers(s, 3, 2, 2);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_busy_host_blocks_whole_slice(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t a0 = add_slice(s, "A", "v4-16", 2, 4);
    struct mt_slice_spec sp;
    struct mt_task_spec t;
    struct mt_grant g;
    int64_t avail;

    add_slice(s, "B", "v4-16", 2, 4);
    /* One chip busy on A's worker 0: the reservation must use B. */
    mt_t_task(&t, 1, 0, 0, 1);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = a0;
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    slice_spec(&sp, 1, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    CU_ASSERT_STRING_EQUAL(mt_sched_pg_slice_name(s, 1, 0), "B");
    /* Now nothing is free: a second one holds no partial resources. */
    slice_spec(&sp, 2, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EAGAIN);
    mt_sched_node_res(s, a0 - 1, MT_RES_TPU, NULL, &avail); /* A-w1 */
    CU_ASSERT_EQUAL(avail, 40000);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_multislice(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;

    add_slice(s, "A", "v4-16", 2, 4);
    add_slice(s, "B", "v4-16", 2, 4);
    add_slice(s, "C", "v4-16", 2, 4);
    slice_spec(&sp, 1, "v4-16", 2);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    check_bundle_workers(s, 1, 4, 2);
    CU_ASSERT_STRING_NOT_EQUAL(mt_sched_pg_slice_name(s, 1, 0),
                               mt_sched_pg_slice_name(s, 1, 2));
    CU_ASSERT_STRING_EQUAL(mt_sched_pg_slice_name(s, 1, 0),
                           mt_sched_pg_slice_name(s, 1, 1));
    slice_spec(&sp, 2, "v4-16", 2);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EAGAIN);
    slice_spec(&sp, 3, "v4-16", 4);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EINFEASIBLE);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_lost_host_rereserves_gang(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;
    struct mt_placement out[4];
    struct mt_bundle_info bi;
    enum mt_sched_pg_state st;
    int64_t avail;

    add_slice(s, "A", "v4-16", 2, 4);
    slice_spec(&sp, 1, "v4-16", 1);
    CU_ASSERT_EQUAL_FATAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    mt_sched_pg_bundle(s, 1, 1, &bi);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, bi.node), 0);
    CU_ASSERT_EQUAL(mt_sched_pg_state(s, 1, &st), 0);
    CU_ASSERT_EQUAL(st, MT_SCHED_PG_RESCHEDULING);
    /* The surviving host was released with the gang. */
    mt_sched_pg_bundle(s, 1, 0, &bi);
    CU_ASSERT_EQUAL(bi.node, MT_NODE_NONE);
    mt_sched_node_res(s, 1, MT_RES_TPU, NULL, &avail);
    CU_ASSERT_EQUAL(avail, 40000);
    mt_t_check(s);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].status, -MT_EINFEASIBLE);
    add_slice(s, "B", "v4-16", 2, 4);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_STRING_EQUAL(mt_sched_pg_slice_name(s, 1, 0), "B");
    check_bundle_workers(s, 1, 2, 2);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_incomplete_slice_not_used(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;

    add_slice(s, "A", "v6e-16", 3, 4); /* 3 of 4 hosts */
    slice_spec(&sp, 1, "v6e-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EINFEASIBLE);
    mt_sched_destroy(s);
}

static void test_bad_slice_requests(void)
{
    static const char *const bad[] = {"v4", "foo-8", "v4-3", "", "v9-16"};
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        slice_spec(&sp, 1, bad[i], 1);
        CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EINVAL);
    }
    slice_spec(&sp, 1, "v4-16", 0);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EINVAL);
    slice_spec(&sp, 1, "v4-16", 1);
    mt_res_set_add(&sp.per_host, MT_RES_TPU, 10000);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, NULL, 0), -MT_EINVAL);
    mt_sched_destroy(s);
}

static void test_partial_tpu_work_spares_idle_slices(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;
    struct mt_task_spec t;
    struct mt_grant g;
    uint32_t a0, a1, b1;

    add_slice(s, "A", "v4-16", 2, 4);
    add_slice(s, "B", "v4-16", 2, 4);
    mt_sched_node_find(s, "A-w0", &a0);
    mt_sched_node_find(s, "A-w1", &a1);
    mt_sched_node_find(s, "B-w1", &b1);
    /* Slice B is in use; more partial work must not break slice A. */
    mt_t_task(&t, 1, 0, 0, 1);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = b1;
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    for (int i = 0; i < 7; i++) {
        mt_t_task(&t, (uint64_t)(10 + i), 0, 0, 1);
        CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
        CU_ASSERT(g.node != a0 && g.node != a1);
    }
    slice_spec(&sp, 1, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    CU_ASSERT_STRING_EQUAL(mt_sched_pg_slice_name(s, 1, 0), "A");
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_starving_slice_reserves_hosts(void)
{
    struct mt_sched_opts o;
    struct mt_sched *s;
    struct mt_slice_spec sp;
    struct mt_task_spec t;
    struct mt_placement out[8];
    struct mt_grant g;
    uint32_t a0;

    mt_sched_opts_init(&o);
    o.starve_ms = 1000;
    CU_ASSERT_FATAL(mt_sched_create(&o, &s) == 0);
    a0 = add_slice(s, "A", "v4-16", 2, 4);
    mt_t_task(&t, 1, 0, 0, 1);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = a0;
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    slice_spec(&sp, 7, "v4-16", 1);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), -MT_EAGAIN);
    /* Pending TPU work may use slice A before the group starves ... */
    mt_t_task(&t, 2, 0, 0, 1);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 10), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 10, out, 8), 1);
    CU_ASSERT_EQUAL(out[0].id, 2);
    /* ... but not once it has: the hosts are held for the slice. */
    mt_t_task(&t, 3, 0, 0, 1);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 2000), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2000, out, 8), 0);
    mt_sched_on_task_finished(s, g.handle);
    mt_sched_on_task_finished(s, out[0].grant.handle);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2001, out, 8), 1);
    CU_ASSERT_EQUAL(out[0].kind, MT_DECISION_PG);
    CU_ASSERT_EQUAL(out[0].id, 7);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_slice_info_for_gang_env(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_slice_spec sp;
    struct mt_slice_info si;
    struct mt_tpu_slice shape;
    uint32_t w0;

    add_slice(s, "A", "v6e-16", 4, 4);
    slice_spec(&sp, 1, "v6e-16", 1);
    CU_ASSERT_EQUAL(mt_sched_pg_slice(s, 1, 0, &si), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_slice_reserve(s, &sp, 0), 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_pg_slice(s, 1, 0, &si), 0);
    CU_ASSERT_STRING_EQUAL(si.name, "A");
    CU_ASSERT_EQUAL(si.nhosts, 4);
    CU_ASSERT_EQUAL(si.shape.hosts, 4);
    CU_ASSERT_EQUAL(si.shape.chips_per_host, 4);
    CU_ASSERT_EQUAL(mt_sched_node_find(s, "A-w0", &w0), 0);
    CU_ASSERT_EQUAL(si.nodes[0], w0);
    CU_ASSERT_EQUAL(mt_sched_pg_slice(s, 1, 1, &si), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_node_tpu_slice(s, w0, &shape), 0);
    CU_ASSERT_EQUAL(shape.chips, 16);
    mt_sched_destroy(s);
}

static void test_grant_env(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_task_spec t;
    struct mt_grant g;
    struct mt_env env;
    uint32_t plain;

    add_slice(s, "A", "v6e-16", 4, 4);
    mt_t_node(s, "g", 8, 4, 0, NULL, 0);
    plain = mt_t_node(s, "t", 8, 0, 4, NULL, 0); /* TPU, no slice labels */
    mt_t_task(&t, 1, 0, 2, 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    mt_env_init(&env);
    CU_ASSERT_EQUAL(mt_sched_grant_env(s, &g, &env), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&env, "CUDA_VISIBLE_DEVICES"), "0,1");
    mt_env_release(&env);
    mt_t_task(&t, 2, 0, 0, 2);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    CU_ASSERT_EQUAL(mt_sched_node_find(s, "A-w2", &t.affinity_node), 0);
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    mt_env_init(&env);
    CU_ASSERT_EQUAL(mt_sched_grant_env(s, &g, &env), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&env, "CUDA_VISIBLE_DEVICES"), "");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&env, "TPU_VISIBLE_CHIPS"), "0,1");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&env, "TPU_CHIPS_PER_HOST_BOUNDS"),
                           "1,2,1");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&env, "TPU_HOST_BOUNDS"), "1,1,1");
    mt_env_release(&env);
    t.affinity_node = plain;
    CU_ASSERT_EQUAL_FATAL(mt_sched_allocate(s, &t, &g), 0);
    mt_env_init(&env);
    CU_ASSERT_EQUAL(mt_sched_grant_env(s, &g, &env), -MT_ENOENT);
    mt_env_release(&env);
    mt_sched_destroy(s);
}

CU_TestInfo mt_test_slice[] = {
    {"slice_info_for_gang_env", test_slice_info_for_gang_env},
    {"grant_env", test_grant_env},
    {"partial_tpu_work_spares_idle_slices",
     test_partial_tpu_work_spares_idle_slices},
    {"starving_slice_reserves_hosts", test_starving_slice_reserves_hosts},
    {"reserve_whole_slice", test_reserve_whole_slice},
    {"concurrent_get_different_slices", test_concurrent_get_different_slices},
    {"busy_host_blocks_whole_slice", test_busy_host_blocks_whole_slice},
    {"multislice", test_multislice},
    {"lost_host_rereserves_gang", test_lost_host_rereserves_gang},
    {"incomplete_slice_not_used", test_incomplete_slice_not_used},
    {"bad_slice_requests", test_bad_slice_requests},
    CU_TEST_INFO_NULL,
};
