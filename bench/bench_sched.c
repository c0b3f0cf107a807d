/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sched.c -- scheduler library microbenchmarks (one core).
 *
 *   decide/1cpu/N   decisions per second for 1-CPU tasks over N 64-CPU
 *                   nodes: tasks are submitted in batches and decided; in
 *                   the "fill" phase the cluster goes from empty to 90%
 *                   busy, in the "churn" phase every placement is paired
 *                   with finishing the oldest grant at ~75% busy. Both the
 *                   decide-only rate and the full submit+decide+finish loop
 *                   are reported.
 *   decide/1cpu+rack/N  the same, but every task selects one of 100 racks
 *                   by label (rack=r<id % 100>; nodes are spread over the
 *                   racks), which exercises the label posting lists.
 *   pg/4bundle/N    4-bundle {CPU: 1} PACK group creations per second
 *                   (create only, and create+remove).
 *
 * Rates are per second of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
 * so other load on a shared machine does not count against them.
 *
 * Usage: bench_sched [--nodes N[,N...]] [--tasks T] [--pgs P]
 * The simulator run (utilization, fragmentation) is manta-sim; see
 * bench/RESULTS-sched.md for the exact commands.
 */
#include "sched/sched.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 1024
#define RACKS 100

static int use_rack;        /* tasks select rack=r<id % RACKS> */
static char rack_names[RACKS][8];
static const char *rack_vals[RACKS];
static struct mt_label_expr rack_expr[RACKS];
static struct mt_label_selector rack_sel[RACKS];

/*
 * CPU time of this thread: the machine is shared, and the targets are per
 * core, so time stolen by other processes must not count.
 */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct mt_sched *cluster(uint32_t n)
{
    struct mt_sched *s;
    struct mt_res_item res[] = {{MT_RES_CPU, 64 * MT_RES_SCALE},
                                {MT_RES_MEMORY, 256LL * MT_RES_SCALE}};

    if (mt_sched_create(NULL, &s) < 0)
        exit(1);
    for (uint32_t i = 0; i < n; i++) {
        char name[32];
        char rack[16];
        struct mt_label l = {"rack", rack};
        struct mt_node_spec spec = {name, res, 2, &l, 1};
        uint32_t node;

        snprintf(name, sizeof(name), "node-%u", i);
        snprintf(rack, sizeof(rack), "r%u", i % RACKS);
        if (mt_sched_on_node_added(s, &spec, &node) < 0)
            exit(1);
    }
    return s;
}

struct ring {
    uint64_t *h;
    size_t head;
    size_t n;
    size_t cap;
};

static void ring_push(struct ring *r, uint64_t h)
{
    r->h[(r->head + r->n++) % r->cap] = h;
}

static uint64_t ring_pop(struct ring *r)
{
    uint64_t h = r->h[r->head];

    r->head = (r->head + 1) % r->cap;
    r->n--;
    return h;
}

/* Submit and decide `total` tasks; finish the oldest when above `keep`. */
static void run_decide(struct mt_sched *s, struct ring *rp, uint64_t total,
                       size_t keep, double *decide_s, double *loop_s,
                       uint64_t *placed)
{
    static struct mt_placement out[BATCH];
    static uint64_t id, ms;
    struct ring r = *rp;
    struct mt_task_spec t;
    double t0 = now_s(), d = 0;
    uint64_t end = id + total;

    mt_task_spec_init(&t, 0);
    mt_res_set_add(&t.res, MT_RES_CPU, MT_RES_SCALE);
    *placed = 0;
    while (id < end) {
        double a;
        int n;

        for (int i = 0; i < BATCH && id < end; i++) {
            t.id = id++;
            t.selector = use_rack ? &rack_sel[t.id % RACKS] : NULL;
            mt_sched_on_task_submitted(s, &t, ms);
        }
        a = now_s();
        n = mt_sched_decide(s, ms, out, BATCH);
        d += now_s() - a;
        for (int i = 0; i < n; i++)
            if (out[i].status == 0) {
                ring_push(&r, out[i].grant.handle);
                (*placed)++;
            }
        while (r.n > keep)
            mt_sched_on_task_finished(s, ring_pop(&r));
        ms++;
    }
    *decide_s = d;
    *loop_s = now_s() - t0;
    *rp = r;
}

static void bench_decide(uint32_t nodes, uint64_t tasks)
{
    struct mt_sched *s = cluster(nodes);
    size_t cap = (size_t)nodes * 64;
    struct ring r = {malloc((cap + 2 * BATCH) * sizeof(uint64_t)), 0, 0,
                     cap + 2 * BATCH};
    double d, l;
    uint64_t placed;

    /* fill: empty -> 90% busy, nothing finishes */
    run_decide(s, &r, cap * 9 / 10, cap, &d, &l, &placed);
    printf("decide/1cpu%s/%u/fill    placed=%llu decide=%.0f/s loop=%.0f/s\n",
           use_rack ? "+rack" : "", nodes, (unsigned long long)placed,
           placed / d, placed / l);
    mt_sched_destroy(s);
    s = cluster(nodes);
    r.head = r.n = 0;
    /* churn at ~75%: warm up to the level, then measure */
    run_decide(s, &r, cap * 3 / 4, cap * 3 / 4, &d, &l, &placed);
    run_decide(s, &r, tasks, cap * 3 / 4, &d, &l, &placed);
    printf("decide/1cpu%s/%u/churn   placed=%llu decide=%.0f/s loop=%.0f/s\n",
           use_rack ? "+rack" : "", nodes, (unsigned long long)placed,
           placed / d, placed / l);
    mt_sched_destroy(s);
    free(r.h);
}

static void bench_pg(uint32_t nodes, uint32_t pgs)
{
    struct mt_sched *s = cluster(nodes);
    struct mt_bundle_spec b[4];
    struct mt_pg_spec spec = {0, MT_SCHED_PG_PACK, b, 4};
    uint32_t keep = nodes * 8, ok = 0, batch = 1000; /* half the CPUs */
    uint64_t next = 1, oldest = 1;
    double t0, tc = 0, tr = 0;

    memset(b, 0, sizeof(b));
    for (int i = 0; i < 4; i++)
        mt_res_set_add(&b[i].res, MT_RES_CPU, MT_RES_SCALE);
    for (; next <= keep; next++) {     /* warm up to steady state */
        spec.id = next;
        mt_sched_pg_create(s, &spec, 0);
    }
    /* Steady state: create a batch, then remove as many of the oldest. */
    for (uint32_t done = 0; done < pgs; done += batch) {
        t0 = now_s();
        for (uint32_t i = 0; i < batch; i++) {
            spec.id = next++;
            ok += mt_sched_pg_create(s, &spec, 0) == 0;
        }
        tc += now_s() - t0;
        t0 = now_s();
        for (uint32_t i = 0; i < batch; i++)
            mt_sched_pg_remove(s, oldest++);
        tr += now_s() - t0;
    }
    printf("pg/4bundle/%u          created=%u/%u create=%.0f/s "
           "create+remove=%.0f/s\n",
           nodes, ok, pgs, pgs / tc, pgs / (tc + tr));
    mt_sched_destroy(s);
}

static void racks_init(void)
{
    for (int i = 0; i < RACKS; i++) {
        snprintf(rack_names[i], sizeof(rack_names[i]), "r%d", i);
        rack_vals[i] = rack_names[i];
        rack_expr[i] = (struct mt_label_expr){"rack", MT_LABEL_EQ,
                                              &rack_vals[i], 1};
        rack_sel[i] = (struct mt_label_selector){&rack_expr[i], 1};
    }
}

int main(int argc, char **argv)
{
    uint32_t nodes[8] = {1000, 10000};
    int nn = 2;
    uint64_t tasks = 2000000;
    uint32_t pgs = 100000;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            char *p = argv[++i];

            for (nn = 0; nn < 8 && *p; nn++) {
                nodes[nn] = (uint32_t)strtoul(p, &p, 10);
                if (*p == ',')
                    p++;
            }
        } else if (!strcmp(argv[i], "--tasks") && i + 1 < argc) {
            tasks = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--pgs") && i + 1 < argc) {
            pgs = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr,
                    "usage: %s [--nodes N[,N...]] [--tasks T] [--pgs P]\n",
                    argv[0]);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    racks_init();
    for (int i = 0; i < nn; i++) {
        bench_decide(nodes[i], tasks);
        use_rack = 1;
        bench_decide(nodes[i], tasks);
        use_rack = 0;
        bench_pg(nodes[i], pgs);
    }
    return 0;
}
