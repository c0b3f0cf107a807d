/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_sched.c -- the event/decision API: decide, priorities (higher first,
 * FIFO within a priority, aging, the starvation barrier), infeasible reported
 * once and placed when a node joins, finishing and cancelling tasks.
 * Time is injected: nothing sleeps.
 */
#include <stdint.h>
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

static void submit(struct mt_sched *s, uint64_t id, double cpu, int prio,
                   uint64_t now)
{
    struct mt_task_spec t;

    mt_t_task(&t, id, cpu, 0, 0);
    t.priority = prio;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, now), 0);
}

static void test_decide_places_and_finish_frees(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_placement out[16];
    int n;

    mt_t_node(s, "n", 4, 0, 0, NULL, 0);
    for (uint64_t i = 0; i < 6; i++)
        submit(s, i, 1, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_pending(s), 6);
    n = mt_sched_decide(s, 0, out, 16);
    CU_ASSERT_EQUAL(n, 4);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(out[i].kind, MT_DECISION_TASK);
        CU_ASSERT_EQUAL(out[i].id, (uint64_t)i);  /* FIFO */
        CU_ASSERT_EQUAL(out[i].status, 0);
    }
    CU_ASSERT_EQUAL(mt_sched_pending(s), 2);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out + 4, 12), 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, out[0].grant.handle), 0);
    n = mt_sched_decide(s, 2, out + 4, 12);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(out[4].id, 4);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 3, out, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 3, NULL, 4), -MT_EINVAL);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* A suspected node gets nothing new; its work waits (never infeasible), soft
 * affinity to it goes elsewhere, and trusting it again places there. */
static void test_suspected_node_gets_nothing_new(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t a = mt_t_node(s, "a", 2, 0, 0, NULL, 0);
    uint32_t b = mt_t_node(s, "b", 1, 0, 0, NULL, 0);
    struct mt_placement out[8];
    struct mt_task_spec t;
    int n;

    CU_ASSERT_EQUAL(mt_sched_node_suspect(s, a, true), 0);
    CU_ASSERT_EQUAL(mt_sched_node_suspect(s, 99, true), -MT_ENOENT);
    mt_t_task(&t, 1, 1, 0, 0);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = a;
    t.affinity_soft = true;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    submit(s, 2, 2, 0, 0);  /* only a can ever hold 2 CPUs */
    n = mt_sched_decide(s, 0, out, 8);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(out[0].id, 1);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(out[0].grant.node, b);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 8), 0);  /* 2 waits */
    CU_ASSERT_EQUAL(mt_sched_node_suspect(s, a, false), 0);
    n = mt_sched_decide(s, 2, out, 8);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(out[0].id, 2);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(out[0].grant.node, a);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, a), 0);
    CU_ASSERT_EQUAL(mt_sched_node_suspect(s, a, false), -MT_ENOENT);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_priority_order(void)
{
    static const struct {
        uint64_t id;
        int prio;
    } subs[] = {{1, 0}, {2, 5}, {3, 0}, {4, 5}, {5, 9}, {6, -1}};
    static const uint64_t want[] = {5, 2, 4, 1, 3, 6};
    struct mt_sched *s = mt_t_sched();
    struct mt_placement out[1];

    mt_t_node(s, "n", 1, 0, 0, NULL, 0);
    for (size_t i = 0; i < 6; i++)
        submit(s, subs[i].id, 1, subs[i].prio, 0);
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL_FATAL(mt_sched_decide(s, 0, out, 1), 1);
        CU_ASSERT_EQUAL(out[0].id, want[i]);
        CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, out[0].grant.handle), 0);
    }
    mt_sched_destroy(s);
}

static void test_aging_lifts_old_low_priority(void)
{
    struct mt_sched_opts o;
    struct mt_sched *s;
    struct mt_placement out[1];

    mt_sched_opts_init(&o);
    o.aging_ms = 1000;
    CU_ASSERT_FATAL(mt_sched_create(&o, &s) == 0);
    mt_t_node(s, "n", 1, 0, 0, NULL, 0);
    submit(s, 1, 1, 0, 0);        /* low, old */
    submit(s, 2, 1, 3, 2500);     /* high, new */
    /* At 2.5 s the old task has effective priority 2 < 3. */
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2500, out, 1), 1);
    CU_ASSERT_EQUAL(out[0].id, 2);
    mt_sched_on_task_finished(s, out[0].grant.handle);
    submit(s, 3, 1, 3, 4000);
    /* At 4.5 s: 0 + 4 = 4 beats 3 + 0. */
    CU_ASSERT_EQUAL(mt_sched_decide(s, 4500, out, 1), 1);
    CU_ASSERT_EQUAL(out[0].id, 1);
    mt_sched_destroy(s);
}

static void test_starving_head_blocks_backfill(void)
{
    struct mt_sched_opts o;
    struct mt_sched *s;
    struct mt_placement out[8];
    struct mt_placement big[8];
    int n;

    mt_sched_opts_init(&o);
    o.starve_ms = 1000;
    o.aging_ms = 1000000;
    CU_ASSERT_FATAL(mt_sched_create(&o, &s) == 0);
    mt_t_node(s, "n", 4, 0, 0, NULL, 0);
    for (uint64_t i = 0; i < 4; i++)
        submit(s, i, 1, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 8), 4);
    submit(s, 100, 4, 5, 0);      /* needs the whole node */
    submit(s, 101, 1, 0, 0);      /* small, lower priority */
    /* Before starve_ms the small task may backfill a freed CPU. */
    mt_sched_on_task_finished(s, out[0].grant.handle);
    n = mt_sched_decide(s, 10, big, 8);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(big[0].id, 101);
    submit(s, 102, 1, 0, 10);
    /* After starve_ms the big head blocks smaller CPU work. */
    mt_sched_on_task_finished(s, out[1].grant.handle);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2000, big + 1, 7), 0);
    mt_sched_on_task_finished(s, out[2].grant.handle);
    mt_sched_on_task_finished(s, out[3].grant.handle);
    mt_sched_on_task_finished(s, big[0].grant.handle);
    n = mt_sched_decide(s, 2001, big + 1, 7);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(big[1].id, 100);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/* With several nodes the starving head reserves one node, not the cluster. */
static void test_starving_head_reserves_one_node(void)
{
    struct mt_sched_opts o;
    struct mt_sched *s;
    struct mt_placement out[16], more[16];
    uint32_t n0, n1;
    int n, on_n0 = 0;

    mt_sched_opts_init(&o);
    o.starve_ms = 1000;
    o.aging_ms = 1000000;
    CU_ASSERT_FATAL(mt_sched_create(&o, &s) == 0);
    n0 = mt_t_node(s, "n0", 4, 0, 0, NULL, 0);
    n1 = mt_t_node(s, "n1", 4, 0, 0, NULL, 0);
    for (uint64_t i = 0; i < 8; i++)
        submit(s, i, 1, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 16), 8);
    submit(s, 100, 4, 5, 0);   /* needs a whole node */
    /* One CPU frees on each node; n0 will be the closer one. */
    for (int i = 0; i < 8; i++)
        if (out[i].grant.node == n0 && on_n0++ < 2)
            mt_sched_on_task_finished(s, out[i].grant.handle);
    for (int i = 0; i < 8; i++)
        if (out[i].grant.node == n1) {
            mt_sched_on_task_finished(s, out[i].grant.handle);
            break;
        }
    for (uint64_t i = 0; i < 4; i++)
        submit(s, 200 + i, 1, 0, 2000);
    /* The head starved: n0 is reserved, small work only lands on n1. */
    n = mt_sched_decide(s, 2000, more, 16);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(more[0].grant.node, n1);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_infeasible_reported_once(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_placement out[8];

    mt_t_node(s, "small", 2, 0, 0, NULL, 0);
    submit(s, 1, 8, 0, 0);
    submit(s, 2, 8, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 8), 2);
    CU_ASSERT_EQUAL(out[0].status, -MT_EINFEASIBLE);
    CU_ASSERT_EQUAL(out[1].status, -MT_EINFEASIBLE);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 8), 0);
    submit(s, 3, 8, 0, 2);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 2, out, 8), 1);
    CU_ASSERT_EQUAL(out[0].id, 3);
    CU_ASSERT_EQUAL(mt_sched_pending(s), 3);
    /* A big node joins: the queued tasks are placed after all. */
    mt_t_node(s, "big", 16, 0, 0, NULL, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 3, out, 8), 2);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(out[0].id, 1);
    CU_ASSERT_EQUAL(mt_sched_pending(s), 1);
    mt_sched_destroy(s);
}

static void test_node_death_makes_grants_stale(void)
{
    struct mt_sched *s = mt_t_sched();
    uint32_t a = mt_t_node(s, "a", 4, 0, 0, NULL, 0);
    struct mt_placement out[4];
    struct mt_task_spec t;

    submit(s, 1, 1, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 4), 1);
    mt_t_task(&t, 2, 1, 0, 0);
    t.strategy = MT_PLACE_NODE_AFFINITY;
    t.affinity_node = a;
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_on_node_dead(s, a), 0);
    /* Finishing a grant of a dead node is accepted and returns nothing. */
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, out[0].grant.handle), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 1, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].id, 2);
    CU_ASSERT_EQUAL(out[0].status, -MT_EINFEASIBLE);
    mt_t_check(s);
    mt_sched_destroy(s);
}

static void test_cancel(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_placement out[4];

    mt_t_node(s, "n", 1, 0, 0, NULL, 0);
    submit(s, 1, 1, 0, 0);
    submit(s, 2, 1, 0, 0);
    submit(s, 3, 1, 0, 0);
    CU_ASSERT_EQUAL(mt_sched_task_cancel(s, 2), 0);
    CU_ASSERT_EQUAL(mt_sched_task_cancel(s, 2), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_sched_pending(s), 2);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 4), 1);
    mt_sched_on_task_finished(s, out[0].grant.handle);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].id, 3);
    mt_sched_destroy(s);
}

static void test_zero_resource_task(void)
{
    struct mt_sched *s = mt_t_sched();
    struct mt_placement out[4];
    struct mt_task_spec t;

    mt_task_spec_init(&t, 7);
    CU_ASSERT_EQUAL(mt_sched_on_task_submitted(s, &t, 0), 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].status, -MT_EINFEASIBLE);
    mt_t_node(s, "n", 1, 0, 0, NULL, 0);
    CU_ASSERT_EQUAL(mt_sched_decide(s, 0, out, 4), 1);
    CU_ASSERT_EQUAL(out[0].status, 0);
    CU_ASSERT_EQUAL(mt_sched_on_task_finished(s, out[0].grant.handle), 0);
    mt_t_check(s);
    mt_sched_destroy(s);
}

/*
 * A stream of high-priority 1-CPU tasks keeps every CPU busy forever; a
 * low-priority task needing a whole node must still run: aging lifts it,
 * then its reservation keeps the small tasks off one node until it fits.
 */
static void test_no_starvation_under_backfill(void)
{
    struct mt_sched_opts o;
    struct mt_sched *s;
    struct mt_placement out[64];
    uint64_t running[256], ends[256], next = 1000, big_at = UINT64_MAX;
    size_t nrun = 0;

    mt_sched_opts_init(&o);
    o.aging_ms = 5000;
    o.starve_ms = 20000;
    CU_ASSERT_FATAL(mt_sched_create(&o, &s) == 0);
    for (int i = 0; i < 4; i++) {
        char name[4] = {'n', (char)('0' + i), 0};

        mt_t_node(s, name, 8, 0, 0, NULL, 0);
    }
    for (uint64_t now = 0; now < 300000 && big_at == UINT64_MAX;
         now += 100) {
        int n;

        if (now == 5000)  /* every CPU is busy by now */
            submit(s, 1, 8, -5, now);
        for (size_t i = 0; i < nrun;)
            if (ends[i] <= now) {
                mt_sched_on_task_finished(s, running[i]);
                running[i] = running[--nrun];
                ends[i] = ends[nrun];
            } else {
                i++;
            }
        for (int k = 0; k < 4; k++)   /* 40 tasks/s of 1 s: > 32 CPUs */
            submit(s, next++, 1, 5, now);
        n = mt_sched_decide(s, now, out, 64);
        for (int i = 0; i < n; i++) {
            if (out[i].status != 0)
                continue;
            if (out[i].id == 1) {
                big_at = now;
                continue;
            }
            CU_ASSERT_FATAL(nrun < 256);
            running[nrun] = out[i].grant.handle;
            ends[nrun++] = now + 1000;
        }
    }
    /*
     * The small queue grows 8/s, so its head ages too (+0.04/s); the big
     * one (+0.2/s) passes it after ~60 s, then a node drains within ~1 s.
     */
    CU_ASSERT(big_at > 5000);
    CU_ASSERT(big_at <= 90000);
    mt_sched_destroy(s);
}

CU_TestInfo mt_test_sched[] = {
    {"no_starvation_under_backfill", test_no_starvation_under_backfill},
    {"decide_places_and_finish_frees", test_decide_places_and_finish_frees},
    {"priority_order", test_priority_order},
    {"aging_lifts_old_low_priority", test_aging_lifts_old_low_priority},
    {"starving_head_blocks_backfill", test_starving_head_blocks_backfill},
    {"starving_head_reserves_one_node", test_starving_head_reserves_one_node},
    {"infeasible_reported_once", test_infeasible_reported_once},
    {"node_death_makes_grants_stale", test_node_death_makes_grants_stale},
    {"cancel", test_cancel},
    {"suspected_node_gets_nothing_new", test_suspected_node_gets_nothing_new},
    {"zero_resource_task", test_zero_resource_task},
    CU_TEST_INFO_NULL,
};
