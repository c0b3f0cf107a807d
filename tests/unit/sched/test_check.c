/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_check.c -- the randomized property test.
 *
 * Thousands of random operations (nodes joining, dying and resized, tasks
 * allocated directly or through submit/decide, grants finished twice,
 * placement groups created, adopted and removed, tasks into bundles, grants
 * given back and adopted again, TPU slices reserved) and, after
 * every one, two checks: the library's own mt_sched_check(), and an
 * independent recount from what the test itself holds: for every live node
 * and for CPU, GPU and TPU, 0 <= available <= total and
 * total - available == live grants outside groups + reserved bundles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "sched/sched.h"
#include "tests/unit/unit.h"

struct mt_sched *mt_t_sched(void);
void mt_t_check(struct mt_sched *s);

#define MAXN 64
#define MAXG 4096
#define MAXPG 128

struct world {
    struct mt_sched *s;
    uint64_t rng;
    uint32_t nnodes;
    struct mt_grant g[MAXG];
    struct mt_res_set gres[MAXG];
    uint32_t ng;
    uint64_t pgs[MAXPG];
    uint32_t npg;
    uint64_t next_id;
    uint64_t now;
    int fails;
    struct mt_label_expr expr;     /* selector of the task being built */
    struct mt_label_selector sel;
};

static uint32_t rnd(struct world *w, uint32_t n)
{
    w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return n ? (uint32_t)((w->rng >> 33) % n) : 0;
}

static const char *const racks[16] = {"r0", "r1", "r2",  "r3",  "r4",  "r5",
                                      "r6", "r7", "r8",  "r9",  "r10", "r11",
                                      "r12", "r13", "r14", "r15"};
static const char *const zone_a[] = {"a"};

static void op_add_node(struct world *w)
{
    static const int gpus[] = {0, 0, 1, 4, 8};
    static const int tpus[] = {0, 0, 0, 4, 8};
    char name[32], wid[8], slice[16];
    struct mt_res_item res[3];
    struct mt_label l[5];
    struct mt_node_spec spec = {name, res, 3, l, 1};
    uint32_t node;
    int tpu = tpus[rnd(w, 5)];

    if (w->nnodes >= MAXN)
        return;
    snprintf(name, sizeof(name), "n%u", w->nnodes);
    res[0] = (struct mt_res_item){MT_RES_CPU,
                                  (int64_t)(1 + rnd(w, 16)) * 10000};
    res[1] = (struct mt_res_item){MT_RES_GPU, (int64_t)gpus[rnd(w, 5)] * 10000};
    res[2] = (struct mt_res_item){MT_RES_TPU, (int64_t)tpu * 10000};
    l[0] = (struct mt_label){"zone", rnd(w, 2) ? "a" : "b"};
    l[1] = (struct mt_label){"rack", racks[w->nnodes % 16]};
    spec.nlabels = 2;
    if (tpu == 4) {
        /* Hosts of v4-16 slices: two hosts per slice name. */
        snprintf(slice, sizeof(slice), "s%u", w->nnodes / 2);
        snprintf(wid, sizeof(wid), "%u", w->nnodes % 2);
        l[2] = (struct mt_label){"manta.io/tpu-slice-name", slice};
        l[3] = (struct mt_label){"manta.io/tpu-worker-id", wid};
        l[4] = (struct mt_label){"manta.io/tpu-pod-type", "v4-16"};
        spec.nlabels = 5;
    }
    CU_ASSERT_EQUAL(mt_sched_on_node_added(w->s, &spec, &node), 0);
    w->nnodes++;
}

static void random_res(struct world *w, struct mt_res_set *r, bool allow_empty)
{
    static const int64_t gpu[] = {0, 0, 0, 2500, 5000, 10000, 20000};
    static const int64_t tpu[] = {0, 0, 0, 0, 10000, 20000, 40000};

    do {
        mt_res_set_init(r);
        mt_res_set_add(r, MT_RES_CPU, (int64_t)rnd(w, 9) * 5000);
        mt_res_set_add(r, MT_RES_GPU, gpu[rnd(w, 7)]);
        mt_res_set_add(r, MT_RES_TPU, tpu[rnd(w, 7)]);
    } while (!allow_empty && r->n == 0);
}

static void keep_grant(struct world *w, const struct mt_grant *g,
                       const struct mt_res_set *r)
{
    if (w->ng >= MAXG)
        return;
    w->g[w->ng] = *g;
    w->gres[w->ng] = *r;
    w->ng++;
}

static void random_task(struct world *w, struct mt_task_spec *t)
{
    mt_task_spec_init(t, w->next_id++);
    random_res(w, &t->res, true);
    switch (rnd(w, 5)) {
    case 0:
        t->strategy = MT_PLACE_SPREAD;
        break;
    case 1:
        t->strategy = MT_PLACE_NODE_AFFINITY;
        t->affinity_node = rnd(w, w->nnodes);
        t->affinity_soft = rnd(w, 2);
        break;
    case 2:
        if (w->npg) {
            t->strategy = MT_PLACE_PG;
            t->pg = w->pgs[rnd(w, w->npg)];
            t->bundle = (int32_t)rnd(w, 3) - 1;
        }
        break;
    default:
        break;
    }
    t->priority = (int32_t)rnd(w, 3);
    /* Some tasks select: a common label (pools) or a rare one (postings). */
    switch (rnd(w, 5)) {
    case 0:
        w->expr = (struct mt_label_expr){"zone", MT_LABEL_EQ, zone_a, 1};
        break;
    case 1:
        w->expr = (struct mt_label_expr){"rack", MT_LABEL_EQ,
                                         &racks[rnd(w, 16)], 1};
        break;
    default:
        return;
    }
    w->sel = (struct mt_label_selector){&w->expr, 1};
    t->selector = &w->sel;
}

static void op_allocate(struct world *w)
{
    struct mt_task_spec t;
    struct mt_grant g;
    int rc;

    if (!w->nnodes)
        return;
    random_task(w, &t);
    rc = mt_sched_allocate(w->s, &t, &g);
    CU_ASSERT(rc == 0 || rc == -MT_EAGAIN || rc == -MT_EINFEASIBLE ||
              rc == -MT_EINVAL || rc == -MT_ENOENT);
    if (rc == 0)
        keep_grant(w, &g, &t.res);
}

/* Submitted tasks' shapes, by id, to recount grants placed by decide. */
static struct mt_res_set sub_res[1 << 16];

static void op_submit_decide(struct world *w)
{
    struct mt_placement out[16];
    struct mt_task_spec t;
    int n;

    if (!w->nnodes)
        return;
    random_task(w, &t);
    if (mt_sched_on_task_submitted(w->s, &t, w->now) == 0)
        sub_res[t.id % (1 << 16)] = t.res;
    n = mt_sched_decide(w->s, w->now, out, 16);
    CU_ASSERT(n >= 0);
    for (int i = 0; i < n; i++)
        if (out[i].kind == MT_DECISION_TASK && out[i].status == 0)
            keep_grant(w, &out[i].grant, &sub_res[out[i].id % (1 << 16)]);
}

static void op_finish(struct world *w)
{
    uint32_t i;

    if (!w->ng)
        return;
    i = rnd(w, w->ng);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(w->s, w->g[i].handle), 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(w->s, w->g[i].handle),
                    -MT_ENOENT);
    w->g[i] = w->g[w->ng - 1];
    w->gres[i] = w->gres[w->ng - 1];
    w->ng--;
}

/*
 * A restarted head adopting what runs: give a grant back, then adopt it
 * again on the same node and devices. Its own units were just freed, so
 * this succeeds unless the grant was stale (node dead, bundle lost).
 */
static void op_readopt(struct world *w)
{
    struct mt_task_spec t;
    struct mt_grant g;
    uint32_t i;
    int rc;

    if (!w->ng)
        return;
    i = rnd(w, w->ng);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(w->s, w->g[i].handle), 0);
    mt_task_spec_init(&t, w->next_id++);
    t.res = w->gres[i];
    rc = mt_sched_adopt(w->s, &t, &w->g[i], &g);
    CU_ASSERT(rc == 0 || rc == -MT_ENOENT || rc == -MT_EAGAIN);
    if (w->g[i].pg == 0 && mt_sched_node_alive(w->s, w->g[i].node))
        CU_ASSERT_EQUAL(rc, 0); /* not stale: its own units are free */
    if (rc == 0) {
        w->g[i] = g;
        return;
    }
    w->g[i] = w->g[w->ng - 1];
    w->gres[i] = w->gres[w->ng - 1];
    w->ng--;
}

/* A group adopted on random nodes, as a restarted head would. */
static void op_pg_adopt(struct world *w)
{
    struct mt_bundle_spec b[3];
    struct mt_pg_spec spec;
    uint32_t nodes[3];
    int rc;

    if (w->npg >= MAXPG || !w->nnodes)
        return;
    memset(b, 0, sizeof(b));
    spec.id = w->next_id++;
    spec.strategy =
        (enum mt_sched_pg_strategy)rnd(w, MT_SCHED_PG_STRATEGY_COUNT);
    spec.bundles = b;
    spec.nbundles = 1 + rnd(w, 3);
    for (size_t i = 0; i < spec.nbundles; i++) {
        random_res(w, &b[i].res, false);
        nodes[i] = rnd(w, w->nnodes);
    }
    rc = mt_sched_pg_adopt(w->s, &spec, nodes, w->now);
    CU_ASSERT(rc == 0 || rc == -MT_EAGAIN || rc == -MT_ENOENT ||
              rc == -MT_EINVAL);
    if (rc == 0)
        w->pgs[w->npg++] = spec.id;
}

static void op_pg_create(struct world *w)
{
    struct mt_bundle_spec b[4];
    struct mt_pg_spec spec;
    int rc;

    if (w->npg >= MAXPG)
        return;
    memset(b, 0, sizeof(b));
    spec.id = w->next_id++;
    spec.strategy = (enum mt_sched_pg_strategy)rnd(w, MT_SCHED_PG_STRATEGY_COUNT);
    spec.bundles = b;
    spec.nbundles = 1 + rnd(w, 4);
    for (size_t i = 0; i < spec.nbundles; i++)
        random_res(w, &b[i].res, false);
    rc = mt_sched_pg_create(w->s, &spec, w->now);
    CU_ASSERT(rc == 0 || rc == -MT_EAGAIN || rc == -MT_EINFEASIBLE);
    w->pgs[w->npg++] = spec.id;
}

static void op_slice(struct world *w)
{
    struct mt_slice_spec sp;
    int rc;

    if (w->npg >= MAXPG)
        return;
    memset(&sp, 0, sizeof(sp));
    sp.id = w->next_id++;
    sp.pod_type = "v4-16";
    sp.nslices = 1 + rnd(w, 2);
    rc = mt_sched_slice_reserve(w->s, &sp, w->now);
    CU_ASSERT(rc == 0 || rc == -MT_EAGAIN || rc == -MT_EINFEASIBLE);
    w->pgs[w->npg++] = sp.id;
}

static void op_pg_remove(struct world *w)
{
    uint32_t i;

    if (!w->npg)
        return;
    i = rnd(w, w->npg);
    CU_ASSERT_EQUAL(mt_sched_pg_remove(w->s, w->pgs[i]), 0);
    w->pgs[i] = w->pgs[--w->npg];
}

static void op_node_dead(struct world *w)
{
    uint32_t n;

    if (!w->nnodes)
        return;
    n = rnd(w, w->nnodes);
    if (mt_sched_node_alive(w->s, n))
        CU_ASSERT_EQUAL(mt_sched_on_node_dead(w->s, n), 0);
}

static void op_update(struct world *w)
{
    struct mt_res_item r = {MT_RES_CPU, (int64_t)(1 + rnd(w, 16)) * 10000};
    uint32_t n;
    int rc;

    if (!w->nnodes)
        return;
    n = rnd(w, w->nnodes);
    rc = mt_sched_on_node_update(w->s, n, &r, 1);
    CU_ASSERT(rc == 0 || rc == -MT_ESTATE || rc == -MT_ENOENT);
}

/* Independent recount of CPU, GPU and TPU per live node. */
static void recount(struct world *w)
{
    static const int ids[] = {MT_RES_CPU, MT_RES_GPU, MT_RES_TPU};
    int64_t used[MAXN][3];

    memset(used, 0, sizeof(used));
    for (uint32_t i = 0; i < w->ng; i++)
        if (w->g[i].pg == 0)
            for (int k = 0; k < 3; k++)
                used[w->g[i].node][k] += mt_res_set_get(&w->gres[i], ids[k]);
    for (uint32_t p = 0; p < w->npg; p++) {
        struct mt_bundle_info bi;

        for (uint32_t b = 0; mt_sched_pg_bundle(w->s, w->pgs[p], b, &bi) == 0;
             b++)
            if (bi.node != MT_NODE_NONE)
                for (int k = 0; k < 3; k++)
                    used[bi.node][k] += mt_res_set_get(&bi.res, ids[k]);
    }
    for (uint32_t n = 0; n < w->nnodes; n++) {
        if (!mt_sched_node_alive(w->s, n))
            continue;
        for (int k = 0; k < 3; k++) {
            int64_t total, avail;

            mt_sched_node_res(w->s, n, ids[k], &total, &avail);
            if (avail < 0 || avail > total || total - avail != used[n][k])
                w->fails++;
        }
    }
}

static void run_ops(uint64_t seed, int nops)
{
    struct world *w = calloc(1, sizeof(*w));
    char why[128];

    CU_ASSERT_FATAL(w != NULL);
    w->s = mt_t_sched();
    w->rng = seed;
    w->next_id = 1;
    for (int i = 0; i < 8; i++)
        op_add_node(w);
    for (int i = 0; i < nops; i++) {
        uint32_t op = rnd(w, 100);

        w->now += rnd(w, 50);
        if (op < 5)
            op_add_node(w);
        else if (op < 8)
            op_node_dead(w);
        else if (op < 35)
            op_allocate(w);
        else if (op < 55)
            op_submit_decide(w);
        else if (op < 76)
            op_finish(w);
        else if (op < 78)
            op_readopt(w);
        else if (op < 80)
            op_pg_adopt(w);
        else if (op < 86)
            op_pg_create(w);
        else if (op < 88)
            op_update(w);
        else if (op < 91)
            op_slice(w);
        else
            op_pg_remove(w);
        recount(w);
        if (mt_sched_check(w->s, why, sizeof(why)) != 0) {
            fprintf(stderr, "seed %llu op %d: %s\n", (unsigned long long)seed,
                    i, why);
            w->fails++;
            break;
        }
    }
    CU_ASSERT_EQUAL(w->fails, 0);
    /* Give everything back: the cluster must be whole again. */
    while (w->ng)
        op_finish(w);
    while (w->npg)
        op_pg_remove(w);
    mt_t_check(w->s);
    for (uint32_t n = 0; n < w->nnodes; n++) {
        int64_t total, avail;

        for (int id = 0; id < 3; id++) {
            mt_sched_node_res(w->s, n, id, &total, &avail);
            if (mt_sched_node_alive(w->s, n))
                CU_ASSERT_EQUAL(avail, total);
        }
    }
    mt_sched_destroy(w->s);
    free(w);
}

static void test_random_ops(void)
{
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_ops(seed * 7919, 3000);
}

CU_TestInfo mt_test_check[] = {
    {"random_ops", test_random_ops},
    CU_TEST_INFO_NULL,
};
