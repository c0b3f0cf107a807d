/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_main.c -- manta-sim: drive the scheduler library with a synthetic
 * workload over N simulated nodes and report what it did.
 *
 * The cluster: 70% CPU nodes (64 CPU), 20% GPU nodes (96 CPU, 8 GPU) and
 * 10% TPU hosts grouped into v6e-16 slices (4 hosts x 4 chips, labelled as
 * real hosts are). The workload, arriving as Poisson streams sized so that
 * each resource is offered --load of its capacity:
 *   - CPU tasks:     1, 2, 4 or 8 CPU, ~10 s
 *   - GPU tasks:     0.25, 0.5, 1, 2, 4 or 8 GPU + 4 CPU, ~30 s
 *   - TPU tasks:     1, 2 or 4 chips (partial host) + 1 CPU, ~20 s
 *   - TPU slices:    1 (sometimes 2) whole v6e-16 slices, ~60 s
 *   - groups:        4 bundles {4 CPU, 1 GPU}, random strategy, ~30 s
 * Durations are exponential. Time is simulated in ticks (--tick-ms); each
 * tick finishes what ended, submits what arrived and calls decide until it
 * has nothing more to place. After --warmup, every simulated second a
 * sample records utilization and fragmentation (mt_sched_fragmentation).
 *
 * Reports: decisions/s (placements per CPU second of the scheduling loop:
 * the library calls plus the simulator's own event bookkeeping, so a lower
 * bound for the library), utilization per resource, p50/p99 time pending
 * per kind,
 * fragmentation (free accelerators no pending request can use), and how
 * many requests were still pending at the end.
 */
#include "sched/sched.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum kind { K_CPU, K_GPU, K_TPU, K_SLICE, K_PG, K_COUNT };

static const char *const kind_names[K_COUNT] = {"cpu", "gpu", "tpu", "slice",
                                                "pg"};

struct opts {
    uint32_t nodes;
    double seconds;
    double load;
    uint64_t tick_ms;
    uint64_t seed;
    double warmup;
    int check;
    uint64_t starve_ms;
    uint64_t aging_ms;
    int no_best_fit;
};

/* One request: its kind, when it arrived, how long it runs. */
struct req {
    uint8_t kind;
    uint8_t placed;
    uint32_t dur_ms;
    uint64_t submit_ms;
};

struct event {
    uint64_t at_ms;
    uint64_t handle;    /* grant handle, or group id */
    uint8_t is_pg;
};

struct heap {
    struct event *v;
    size_t n;
    size_t cap;
};

struct sim {
    struct opts o;
    struct mt_sched *s;
    uint64_t rng;
    struct req *reqs;           /* by id - 1 */
    size_t nreqs;
    size_t reqs_cap;
    struct heap h;
    double lib_s;               /* CPU seconds of the scheduling loop */
    uint64_t decisions;
    uint64_t infeasible;
    double *wait[K_COUNT];      /* pending times in ms, per kind */
    size_t nwait[K_COUNT];
    size_t wait_cap[K_COUNT];
    double rate[K_COUNT];       /* arrivals per simulated second */
    double next_arrival[K_COUNT];
    uint32_t cpu_nodes, gpu_nodes, tpu_hosts;
    double util_sum[3];         /* CPU, GPU, TPU */
    double frag_gpu, frag_tpu, free_gpu, free_tpu;
    double idle_gpu, idle_tpu;  /* free whole GPUs / chips, all samples */
    uint32_t frag_samples_gpu, frag_samples_tpu, samples;
};

/* ---- Utilities ---- */

static double clock_s(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: other load on a shared machine does not count. */
static double cpu(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static double urand(struct sim *m)
{
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return (double)((m->rng * 2685821657736338717ULL) >> 11) /
           9007199254740992.0;
}

static double exprand(struct sim *m, double mean)
{
    return -mean * log(1.0 - urand(m));
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);

    if (!q) {
        fprintf(stderr, "manta-sim: out of memory\n");
        exit(1);
    }
    return q;
}

static void heap_push(struct heap *h, struct event e)
{
    size_t i;

    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 1024;
        h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
    }
    for (i = h->n++; i && h->v[(i - 1) / 2].at_ms > e.at_ms; i = (i - 1) / 2)
        h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = e;
}

static struct event heap_pop(struct heap *h)
{
    struct event top = h->v[0], last = h->v[--h->n];
    size_t i = 0, c;

    while ((c = 2 * i + 1) < h->n) {
        if (c + 1 < h->n && h->v[c + 1].at_ms < h->v[c].at_ms)
            c++;
        if (h->v[c].at_ms >= last.at_ms)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

static void record_wait(struct sim *m, int kind, double ms)
{
    if (m->nwait[kind] == m->wait_cap[kind]) {
        m->wait_cap[kind] = m->wait_cap[kind] ? m->wait_cap[kind] * 2 : 1024;
        m->wait[kind] = xrealloc(m->wait[kind],
                                 m->wait_cap[kind] * sizeof(double));
    }
    m->wait[kind][m->nwait[kind]++] = ms;
}

/* ---- Cluster ---- */

static void add_node(struct sim *m, const char *name, int cpu, int gpu,
                     int tpu, const struct mt_label *l, size_t nl)
{
    struct mt_res_item res[3] = {{MT_RES_CPU, (int64_t)cpu * MT_RES_SCALE},
                                 {MT_RES_GPU, (int64_t)gpu * MT_RES_SCALE},
                                 {MT_RES_TPU, (int64_t)tpu * MT_RES_SCALE}};
    struct mt_node_spec spec = {name, res, 3, l, nl};
    uint32_t node;

    if (mt_sched_on_node_added(m->s, &spec, &node) < 0) {
        fprintf(stderr, "manta-sim: cannot add node %s\n", name);
        exit(1);
    }
}

static void build_cluster(struct sim *m)
{
    uint32_t n = m->o.nodes;
    char name[64], slice[32], wid[8];

    m->tpu_hosts = n / 10 / 4 * 4;
    m->gpu_nodes = n / 5;
    m->cpu_nodes = n - m->tpu_hosts - m->gpu_nodes;
    for (uint32_t i = 0; i < m->cpu_nodes; i++) {
        snprintf(name, sizeof(name), "cpu-%u", i);
        add_node(m, name, 64, 0, 0, NULL, 0);
    }
    for (uint32_t i = 0; i < m->gpu_nodes; i++) {
        const struct mt_label l[] = {{MT_LABEL_ACCEL_TYPE, "H100"}};

        snprintf(name, sizeof(name), "gpu-%u", i);
        add_node(m, name, 96, 8, 0, l, 1);
    }
    for (uint32_t i = 0; i < m->tpu_hosts; i++) {
        const struct mt_label l[] = {
            {MT_LABEL_TPU_SLICE, slice},   {MT_LABEL_TPU_WORKER, wid},
            {MT_LABEL_TPU_POD_TYPE, "v6e-16"}, {MT_LABEL_TPU_TOPOLOGY, "4x4"},
            {MT_LABEL_ACCEL_TYPE, "TPU-V6E"},
        };

        snprintf(name, sizeof(name), "tpu-%u", i);
        snprintf(slice, sizeof(slice), "slice-%u", i / 4);
        snprintf(wid, sizeof(wid), "%u", i % 4);
        add_node(m, name, 32, 0, 4, l, 5);
    }
}

/*
 * Arrival rates so each stream offers --load of what it can use: CPU tasks
 * of CPU-node CPUs, GPU tasks and groups of GPUs (70% / 30%), TPU tasks
 * and slices of TPU chips (30% / 70%).
 */
static void set_rates(struct sim *m)
{
    double L = m->o.load;
    double gpus = m->gpu_nodes * 8.0, chips = m->tpu_hosts * 4.0;

    m->rate[K_CPU] = L * m->cpu_nodes * 64.0 / (3.75 * 10.0);
    m->rate[K_GPU] = L * 0.7 * gpus / (2.625 * 30.0);
    m->rate[K_PG] = L * 0.3 * gpus / (4.0 * 30.0);
    m->rate[K_TPU] = L * 0.3 * chips / (2.333 * 20.0);
    m->rate[K_SLICE] = L * 0.7 * chips / (16.0 * 1.2 * 60.0);
    for (int k = 0; k < K_COUNT; k++)
        m->next_arrival[k] =
            m->rate[k] > 0 ? exprand(m, 1000.0 / m->rate[k]) : INFINITY;
}

/* ---- Requests ---- */

static uint64_t new_req(struct sim *m, int kind, double mean_s, uint64_t now)
{
    struct req *r;

    if (m->nreqs == m->reqs_cap) {
        m->reqs_cap = m->reqs_cap ? m->reqs_cap * 2 : 4096;
        m->reqs = xrealloc(m->reqs, m->reqs_cap * sizeof(*m->reqs));
    }
    r = &m->reqs[m->nreqs++];
    r->kind = (uint8_t)kind;
    r->placed = 0;
    r->dur_ms = (uint32_t)(1 + exprand(m, mean_s * 1000.0));
    r->submit_ms = now;
    return m->nreqs; /* ids start at 1 */
}

static void on_placed(struct sim *m, uint64_t id, uint64_t handle, int is_pg,
                      uint64_t now)
{
    struct req *r = &m->reqs[id - 1];
    struct event e = {now + r->dur_ms, is_pg ? id : handle, (uint8_t)is_pg};

    r->placed = 1;
    record_wait(m, r->kind, (double)(now - r->submit_ms));
    heap_push(&m->h, e);
}

static void submit_task(struct sim *m, int kind, uint64_t now)
{
    static const double cpus[] = {1, 2, 4, 8};
    static const double gpus[] = {0.25, 0.5, 1, 2, 4, 8};
    static const int chips[] = {1, 2, 4};
    struct mt_task_spec t;
    uint64_t id;

    id = new_req(m, kind, kind == K_CPU ? 10 : kind == K_GPU ? 30 : 20, now);
    mt_task_spec_init(&t, id);
    if (kind == K_CPU) {
        mt_res_set_add(&t.res, MT_RES_CPU,
                       mt_res_from_double(cpus[(int)(urand(m) * 4)]));
    } else if (kind == K_GPU) {
        mt_res_set_add(&t.res, MT_RES_CPU, 4 * MT_RES_SCALE);
        mt_res_set_add(&t.res, MT_RES_GPU,
                       mt_res_from_double(gpus[(int)(urand(m) * 6)]));
    } else {
        mt_res_set_add(&t.res, MT_RES_CPU, MT_RES_SCALE);
        mt_res_set_add(&t.res, MT_RES_TPU,
                       (int64_t)chips[(int)(urand(m) * 3)] * MT_RES_SCALE);
    }
    t.priority = urand(m) < 0.1 ? 1 : 0;
    if (mt_sched_on_task_submitted(m->s, &t, now) < 0)
        fprintf(stderr, "manta-sim: submit failed\n");
}

static void submit_group(struct sim *m, int kind, uint64_t now)
{
    uint64_t id = new_req(m, kind, kind == K_SLICE ? 60 : 30, now);
    struct mt_bundle_spec b[4];
    int rc;

    if (kind == K_SLICE) {
        struct mt_slice_spec sp;

        memset(&sp, 0, sizeof(sp));
        sp.id = id;
        sp.pod_type = "v6e-16";
        sp.nslices = urand(m) < 0.2 ? 2 : 1;
        mt_res_set_add(&sp.per_host, MT_RES_CPU, MT_RES_SCALE);
        rc = mt_sched_slice_reserve(m->s, &sp, now);
    } else {
        struct mt_pg_spec spec = {id, (enum mt_sched_pg_strategy)(urand(m) * 4), b,
                                  4};

        memset(b, 0, sizeof(b));
        for (int i = 0; i < 4; i++) {
            mt_res_set_add(&b[i].res, MT_RES_CPU, 4 * MT_RES_SCALE);
            mt_res_set_add(&b[i].res, MT_RES_GPU, MT_RES_SCALE);
        }
        rc = mt_sched_pg_create(m->s, &spec, now);
    }
    if (rc == 0) {
        m->decisions++;
        on_placed(m, id, 0, 1, now);
    } else if (rc == -MT_EINFEASIBLE) {
        m->infeasible++;
    }
}

/* ---- The loop ---- */

static void finish_due(struct sim *m, uint64_t now)
{
    while (m->h.n && m->h.v[0].at_ms <= now) {
        struct event e = heap_pop(&m->h);

        if (e.is_pg)
            mt_sched_pg_remove(m->s, e.handle);
        else
            mt_sched_on_task_finished(m->s, e.handle);
    }
}

static void arrivals(struct sim *m, uint64_t now)
{
    for (int k = 0; k < K_COUNT; k++) {
        while (m->next_arrival[k] <= (double)now) {
            if (k == K_SLICE || k == K_PG)
                submit_group(m, k, now);
            else
                submit_task(m, k, now);
            m->next_arrival[k] += exprand(m, 1000.0 / m->rate[k]);
        }
    }
}

static void decide_all(struct sim *m, uint64_t now)
{
    static struct mt_placement out[4096];
    int n;

    do {
        n = mt_sched_decide(m->s, now, out, 4096);
        for (int i = 0; i < n; i++) {
            if (out[i].status == -MT_EINFEASIBLE) {
                m->infeasible++;
                continue;
            }
            if (out[i].status != 0)
                continue;
            m->decisions++;
            on_placed(m, out[i].id, out[i].grant.handle,
                      out[i].kind == MT_DECISION_PG, now);
        }
    } while (n == 4096);
}

static void sample(struct sim *m)
{
    static const int ids[3] = {MT_RES_CPU, MT_RES_GPU, MT_RES_TPU};
    double tot[3] = {0}, av[3] = {0};
    struct mt_frag f;

    for (uint32_t n = 0; n < mt_sched_node_count(m->s); n++) {
        if (!mt_sched_node_alive(m->s, n))
            continue;
        for (int k = 0; k < 3; k++) {
            int64_t t, a;

            mt_sched_node_res(m->s, n, ids[k], &t, &a);
            tot[k] += (double)t;
            av[k] += (double)a;
        }
    }
    for (int k = 0; k < 3; k++)
        m->util_sum[k] += tot[k] > 0 ? 1.0 - av[k] / tot[k] : 0;
    m->samples++;
    if (mt_sched_fragmentation(m->s, &f) < 0)
        return;
    m->idle_gpu += f.free_gpus;
    m->idle_tpu += f.free_tpu_chips;
    if (f.pending_gpu && f.free_gpus) {
        m->frag_gpu += (double)f.stranded_gpus / f.free_gpus;
        m->free_gpu += f.free_gpus;
        m->frag_samples_gpu++;
    }
    if (f.pending_tpu && f.free_tpu_chips) {
        m->frag_tpu += (double)f.stranded_tpu_chips / f.free_tpu_chips;
        m->free_tpu += f.free_tpu_chips;
        m->frag_samples_tpu++;
    }
    if (m->o.check) {
        char why[128];

        if (mt_sched_check(m->s, why, sizeof(why)) < 0) {
            fprintf(stderr, "manta-sim: invariant broken: %s\n", why);
            exit(1);
        }
    }
}

/* ---- Report ---- */

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    size_t i;

    if (!n)
        return 0;
    i = (size_t)(p * (double)(n - 1));
    return v[i];
}

static void report(struct sim *m, double wall_s)
{
    size_t unplaced[K_COUNT] = {0};

    for (size_t i = 0; i < m->nreqs; i++)
        unplaced[m->reqs[i].kind] += !m->reqs[i].placed;
    printf("manta-sim nodes=%u (cpu %u, gpu %u x8, tpu %u hosts = %u "
           "v6e-16 slices) seconds=%.0f load=%.2f seed=%llu\n",
           m->o.nodes, m->cpu_nodes, m->gpu_nodes, m->tpu_hosts,
           m->tpu_hosts / 4, m->o.seconds, m->o.load,
           (unsigned long long)m->o.seed);
    printf("requests %zu, placements %llu, infeasible %llu\n", m->nreqs,
           (unsigned long long)m->decisions,
           (unsigned long long)m->infeasible);
    printf("decisions/s %.0f (scheduling loop CPU time %.3f s, wall %.3f s)\n",
           m->lib_s > 0 ? m->decisions / m->lib_s : 0, m->lib_s, wall_s);
    printf("utilization (after warm-up) CPU %.1f%%  GPU %.1f%%  TPU %.1f%%\n",
           100 * m->util_sum[0] / m->samples, 100 * m->util_sum[1] / m->samples,
           100 * m->util_sum[2] / m->samples);
    for (int k = 0; k < K_COUNT; k++) {
        qsort(m->wait[k], m->nwait[k], sizeof(double), dcmp);
        printf("pending %-5s placed %8zu  p50 %8.0f ms  p99 %8.0f ms  "
               "still pending %zu\n",
               kind_names[k], m->nwait[k], pct(m->wait[k], m->nwait[k], 0.5),
               pct(m->wait[k], m->nwait[k], 0.99), unplaced[k]);
    }
    printf("fragmentation GPU: %.0f free GPUs on average (%.1f%% of %u); "
           "in the %u samples with GPU work pending, %.1f%% of %.0f free "
           "GPUs could serve none of it\n",
           m->idle_gpu / m->samples,
           100 * m->idle_gpu / m->samples / (m->gpu_nodes * 8.0 + 1e-9),
           m->gpu_nodes * 8, m->frag_samples_gpu,
           m->frag_samples_gpu ? 100 * m->frag_gpu / m->frag_samples_gpu : 0,
           m->frag_samples_gpu ? m->free_gpu / m->frag_samples_gpu : 0);
    printf("fragmentation TPU: %.0f free chips on average (%.1f%% of %u); "
           "in the %u samples with TPU work pending, %.1f%% of %.0f free "
           "chips could serve none of it\n",
           m->idle_tpu / m->samples,
           100 * m->idle_tpu / m->samples / (m->tpu_hosts * 4.0 + 1e-9),
           m->tpu_hosts * 4, m->frag_samples_tpu,
           m->frag_samples_tpu ? 100 * m->frag_tpu / m->frag_samples_tpu : 0,
           m->frag_samples_tpu ? m->free_tpu / m->frag_samples_tpu : 0);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta-sim [--nodes N] [--seconds S] [--load L] "
            "[--tick-ms T] [--seed X] [--check]\n"
            "  --nodes N     simulated nodes (default 1000): 70%% CPU, 20%% "
            "GPU, 10%% TPU hosts\n"
            "  --seconds S   simulated time (default 120)\n"
            "  --load L      offered load per resource, 0..2 (default 0.9)\n"
            "  --tick-ms T   scheduling tick (default 100)\n"
            "  --seed X      workload seed (default 1)\n"
            "  --warmup W    simulated seconds before sampling starts "
            "(default 60)\n"
            "  --starve-ms M scheduler starvation barrier (default 60000)\n"
            "  --aging-ms M  scheduler priority aging step (default 10000)\n"
            "  --no-accel-best-fit  spread GPU/TPU work like CPU work\n"
            "  --check       verify the accounting invariant every second\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){1000, 120, 0.9, 100, 1, 60, 0, 60000, 10000, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--no-accel-best-fit")) {
            o->no_best_fit = 1;
        } else if (v && !strcmp(a, "--nodes")) {
            o->nodes = (uint32_t)strtoul(v, NULL, 10), i++;
        } else if (v && !strcmp(a, "--seconds")) {
            o->seconds = strtod(v, NULL), i++;
        } else if (v && !strcmp(a, "--load")) {
            o->load = strtod(v, NULL), i++;
        } else if (v && !strcmp(a, "--tick-ms")) {
            o->tick_ms = strtoull(v, NULL, 10), i++;
        } else if (v && !strcmp(a, "--starve-ms")) {
            o->starve_ms = strtoull(v, NULL, 10), i++;
        } else if (v && !strcmp(a, "--aging-ms")) {
            o->aging_ms = strtoull(v, NULL, 10), i++;
        } else if (v && !strcmp(a, "--warmup")) {
            o->warmup = strtod(v, NULL), i++;
        } else if (v && !strcmp(a, "--seed")) {
            o->seed = strtoull(v, NULL, 10), i++;
        } else {
            usage(stderr);
            return -1;
        }
    }
    if (o->nodes < 10 || o->seconds <= 0 || o->load <= 0 || o->load > 2 ||
        o->tick_ms == 0 || o->warmup < 0 || o->warmup >= o->seconds) {
        usage(stderr);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct sim m;
    struct mt_sched_opts so;
    double w0;
    uint64_t end_ms, next_sample;

    memset(&m, 0, sizeof(m));
    if (parse(argc, argv, &m.o) < 0)
        return 2;
    m.rng = m.o.seed * 0x9e3779b97f4a7c15ULL + 1;
    mt_sched_opts_init(&so);
    so.seed = m.o.seed;
    so.starve_ms = m.o.starve_ms;
    so.aging_ms = m.o.aging_ms;
    so.accel_best_fit = !m.o.no_best_fit;
    if (mt_sched_create(&so, &m.s) < 0)
        return 1;
    build_cluster(&m);
    set_rates(&m);
    end_ms = (uint64_t)(m.o.seconds * 1000);
    next_sample = (uint64_t)(m.o.warmup * 1000) + 1000;
    w0 = wall();
    for (uint64_t now = 0; now <= end_ms; now += m.o.tick_ms) {
        double c0 = cpu();

        finish_due(&m, now);
        arrivals(&m, now);
        decide_all(&m, now);
        m.lib_s += cpu() - c0;
        if (now >= next_sample) {
            sample(&m);
            next_sample += 1000;
        }
    }
    report(&m, wall() - w0);
    mt_sched_destroy(m.s);
    for (int k = 0; k < K_COUNT; k++)
        free(m.wait[k]);
    free(m.reqs);
    free(m.h.v);
    return 0;
}
