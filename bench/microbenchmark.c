/* SPDX-License-Identifier: Apache-2.0 */
/*
 * microbenchmark.c -- manta-microbenchmark: the anchor's microbenchmark
 * suite (ray_perf.py, notes/ray-reference.md section 1.2) measured with
 * what Manta has today, under the anchor's metric names.
 *
 * Tasks are C function tasks calling noop() from libbench_noop.so
 * (bench/noop_lib.c) in the workers' prestarted executors, with the
 * default 1 CPU each and no output capture. Objects go to the local store
 * through libmanta, and so do placement groups (manta/pg.h). Actor calls (bench_actors.c) go to
 * actors of "libbench_noop.so:noop_actor" calling noop.
 *
 * Like ray_perf's timeit(), each metric runs a short warm-up, then three
 * trials of --seconds each (at least one op per trial), and reports the
 * mean and the (population) standard deviation of the trials' rates.
 *
 * single_client_put_gigabytes puts an 800 MB buffer and drops the
 * reference at once, as ray_perf's put_large does (its ref goes out of
 * scope), so the store recycles the memory as Ray's plasma does. Its twin
 * single_client_memcpy_gigabytes is a plain single-thread memcpy of the
 * same 800 MB between two warm heap buffers, measured in the same run
 * with the trials alternating (put, memcpy, put, ...), and the line
 * single_client_put_memcpy_ratio is put / memcpy: how close a put comes to
 * memory speed on this machine at this moment.
 *
 * usage: manta-microbenchmark [--address HOST:PORT] [--json]
 *            [--only NAME,...] [--seconds S] [--lib-dir DIR] [--check]
 * `manta microbenchmark` runs it, starting a local cluster when needed.
 */
#include "common/error.h"

#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <manta/manta.h>

#include "bench_actors.h"

#define TRIALS 3
#define BATCH 1000            /* tasks in flight (ray_perf: 1,000) */
#define MULTI_CLIENTS 4       /* threads, each with its own client */
#define PG_BATCH 100          /* groups per create/wait/remove round */
#define PUT_BIG_BYTES 800000000UL
#define WAIT_MS 120000        /* no single op may take longer */
#define EXIT_USAGE 2

/* ---- configuration and shared state -------------------------------------- */

struct bench {
    const char *address;      /* NULL: the local session */
    char lib_dir[PATH_MAX];   /* code path holding libbench_noop.so */
    double seconds;           /* per trial */
    mt_client_t *client;
    mt_task_opts_t *opts;     /* noop task options */
    mt_object_id small_id;    /* for single_client_get_calls */
    bool have_small;
    void *big;                /* PUT_BIG_BYTES for put_gigabytes */
    void *big_dst;            /* memcpy destination of the same size */
};

/* One trial: do ops for about b->seconds; RET ops done (>= 0) or -MT_E*. */
typedef int (*trial_fn)(struct bench *b, double *ops);

struct metric {
    const char *name;
    const char *unit;
    trial_fn fn;
    bool selected;
    const struct metric *twin; /* measured alongside, trials alternating */
};

static const char *noop_fn = "libbench_noop.so:noop";

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(mt_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "manta-microbenchmark: %s: %s (%s)\n", what,
            mt_client_last_error(c), mt_error_name(rc));
    return rc < 0 ? rc : -MT_EINVAL;
}

/* ---- tasks --------------------------------------------------------------- */

static int submit_noop(mt_client_t *c, const mt_task_opts_t *o,
                       mt_task_t **out)
{
    int rc = mt_submit_function(c, noop_fn, NULL, NULL, 0, o, out);

    return rc < 0 ? fail(c, "submit", rc) : 0;
}

/* Wait for one task and check that it finished. RET 0 or -MT_E*. */
static int wait_one(mt_client_t *c, mt_task_t *t, mt_task_result *r)
{
    int rc = mt_task_wait(c, t, WAIT_MS, r);

    if (rc < 0)
        return fail(c, "task", rc);
    return 0;
}

static void release_all(mt_task_t **ts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mt_task_release(ts[i]);
        ts[i] = NULL;
    }
}

/* Submit n noop tasks into ts[] (released on failure). */
static int submit_batch(mt_client_t *c, const mt_task_opts_t *o,
                        mt_task_t **ts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = submit_noop(c, o, &ts[i]);

        if (rc < 0) {
            release_all(ts, i);
            return rc;
        }
    }
    return 0;
}

/* Submit n, wait for all of them, release. RET 0 or -MT_E*. */
static int batch_round(mt_client_t *c, const mt_task_opts_t *o,
                       mt_task_t **ts, size_t n)
{
    int rc = submit_batch(c, o, ts, n);

    if (rc < 0)
        return rc;
    rc = mt_wait_tasks(c, ts, n, n, WAIT_MS, NULL);
    if (rc >= 0 && (size_t)rc < n)
        rc = -MT_ETIMEDOUT;
    if (rc < 0)
        fail(c, "wait for the batch", rc);
    release_all(ts, n);
    return rc < 0 ? rc : 0;
}

static int tasks_sync(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;
    mt_task_result r;
    int rc = 0;

    mt_task_result_init(&r);
    do {
        mt_task_t *t;

        if ((rc = submit_noop(b->client, b->opts, &t)) < 0)
            break;
        rc = wait_one(b->client, t, &r);
        mt_task_release(t);
        if (rc < 0)
            break;
        *ops += 1;
    } while (now_s() < end);
    mt_task_result_release(&r);
    return rc;
}

static int tasks_async(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;
    mt_task_t *ts[BATCH];
    int rc;

    do {
        if ((rc = batch_round(b->client, b->opts, ts, BATCH)) < 0)
            return rc;
        *ops += BATCH;
    } while (now_s() < end);
    return 0;
}

/* Submit a batch, then get every result: ops are batches. */
static int tasks_and_get_batch(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;
    mt_task_t *ts[BATCH];
    mt_task_result r;
    int rc = 0;

    mt_task_result_init(&r);
    do {
        if ((rc = submit_batch(b->client, b->opts, ts, BATCH)) < 0)
            break;
        for (size_t i = 0; i < BATCH && rc == 0; i++)
            rc = wait_one(b->client, ts[i], &r);
        release_all(ts, BATCH);
        if (rc < 0)
            break;
        *ops += 1;
    } while (now_s() < end);
    mt_task_result_release(&r);
    return rc;
}

/*
 * ray.wait(not_ready) 1,000 times over 1,000 refs, taking one ready ref
 * out each time: ops are rounds of 1,000.
 */
static int wait_1k_refs(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;
    mt_task_t *ts[BATCH], *left[BATCH];
    bool ready[BATCH];
    int rc = 0;

    do {
        size_t n = BATCH;

        if ((rc = submit_batch(b->client, b->opts, ts, BATCH)) < 0)
            return rc;
        memcpy(left, ts, sizeof(ts));
        while (n > 0 && rc >= 0) {
            size_t i = 0;

            rc = mt_wait_tasks(b->client, left, n, 1, WAIT_MS, ready);
            if (rc == 0)
                rc = -MT_ETIMEDOUT;
            if (rc < 0)
                break;
            while (!ready[i])
                i++;
            left[i] = left[--n];
        }
        if (rc < 0)
            fail(b->client, "wait", rc);
        release_all(ts, BATCH);
        if (rc < 0)
            return rc;
        *ops += 1;
    } while (now_s() < end);
    return 0;
}

/* ---- multi_client_tasks_async: threads with their own clients ------------ */

struct worker_arg {
    struct bench *b;
    double end;
    double ops;
    int rc;
};

static void *multi_worker(void *p)
{
    struct worker_arg *w = p;
    mt_task_t **ts = calloc(BATCH, sizeof(*ts));
    mt_client_t *c = NULL;

    w->rc = ts ? mt_client_connect(w->b->address, NULL, &c) : -MT_ENOMEM;
    if (w->rc < 0) {
        fail(NULL, "connect", w->rc);
        goto out;
    }
    do {
        if ((w->rc = batch_round(c, w->b->opts, ts, BATCH)) < 0)
            break;
        w->ops += BATCH;
    } while (now_s() < w->end);
out:
    mt_client_disconnect(c);
    free(ts);
    return NULL;
}

static int multi_client_async(struct bench *b, double *ops)
{
    struct worker_arg w[MULTI_CLIENTS];
    pthread_t th[MULTI_CLIENTS];
    double end = now_s() + b->seconds;
    int rc = 0, started = 0;

    for (int i = 0; i < MULTI_CLIENTS; i++) {
        w[i] = (struct worker_arg){b, end, 0, 0};
        if (pthread_create(&th[i], NULL, multi_worker, &w[i]) != 0) {
            rc = -MT_ENOMEM;
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        *ops += w[i].ops;
        if (w[i].rc < 0)
            rc = w[i].rc;
    }
    return rc;
}

/* ---- actors (bench_actors.c) --------------------------------------------- */

static struct bench_actors_env actor_env(const struct bench *b)
{
    struct bench_actors_env e = {b->client, b->address, b->lib_dir,
                                 b->seconds, BATCH};

    return e;
}

static int actor_sync(struct bench *b, double *ops)
{
    struct bench_actors_env e = actor_env(b);

    return bench_actor_calls_sync(&e, ops);
}

static int actor_async(struct bench *b, double *ops)
{
    struct bench_actors_env e = actor_env(b);

    return bench_actor_calls_async(&e, ops);
}

static int actor_nn_async(struct bench *b, double *ops)
{
    struct bench_actors_env e = actor_env(b);

    return bench_nn_actor_calls_async(&e, ops);
}

/* ---- objects ------------------------------------------------------------- */

static int put_calls(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;
    int64_t zero = 0;

    do {
        mt_object_id id;
        int rc = mt_put(b->client, &zero, sizeof(zero), MT_PUT_EVICTABLE,
                        &id);

        if (rc < 0)
            return fail(b->client, "put", rc);
        *ops += 1;
    } while (now_s() < end);
    return 0;
}

static int get_calls(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;
    int64_t zero = 0;
    int rc;

    if (!b->have_small) {
        rc = mt_put(b->client, &zero, sizeof(zero), 0, &b->small_id);
        if (rc < 0)
            return fail(b->client, "put", rc);
        b->have_small = true;
    }
    do {
        mt_buffer_t *buf;

        rc = mt_get(b->client, &b->small_id, 0, &buf);
        if (rc < 0)
            return fail(b->client, "get", rc);
        mt_buffer_release(buf);
        *ops += 1;
    } while (now_s() < end);
    return 0;
}

/* A warm (written) heap buffer of PUT_BIG_BYTES. RET 0, -MT_ENOMEM. */
static int big_buffer(void **p, int fill)
{
    if (*p)
        return 0;
    if (!(*p = malloc(PUT_BIG_BYTES)))
        return -MT_ENOMEM;
    memset(*p, fill, PUT_BIG_BYTES);
    return 0;
}

/* ops are gigabytes (1e9 bytes) put; each put's reference is dropped at
 * once, as in ray_perf (see the file comment). */
static int put_gigabytes(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;

    if (big_buffer(&b->big, 1) < 0)
        return -MT_ENOMEM;
    do {
        mt_object_id id;
        int rc = mt_put(b->client, b->big, PUT_BIG_BYTES, 0, &id);

        if (rc < 0)
            return fail(b->client, "put of 800 MB", rc);
        rc = mt_object_release(b->client, &id, 1);
        if (rc < 0)
            return fail(b->client, "release of the 800 MB put", rc);
        *ops += PUT_BIG_BYTES / 1e9;
    } while (now_s() < end);
    return 0;
}

/* The reference for put_gigabytes: memcpy of the same size, warm buffers. */
static int memcpy_gigabytes(struct bench *b, double *ops)
{
    double end = now_s() + b->seconds;

    if (big_buffer(&b->big, 1) < 0 || big_buffer(&b->big_dst, 2) < 0)
        return -MT_ENOMEM;
    do {
        memcpy(b->big_dst, b->big, PUT_BIG_BYTES);
        /* Keep the copy from being optimized away. */
        __asm__ __volatile__("" : : "r"(b->big_dst) : "memory");
        *ops += PUT_BIG_BYTES / 1e9;
    } while (now_s() < end);
    return 0;
}

/* ---- placement groups (manta/pg.h) ------------------------------------- */

/*
 * As ray_perf: create PG_BATCH one-bundle groups of {CPU: 0.01}, wait for
 * each, remove each; ops are groups created and removed.
 */
static int pg_create_removal(struct bench *b, double *ops)
{
    static const char *const cpu[] = {"CPU"};
    static const double hundredth[] = {0.01};
    double end = now_s() + b->seconds;
    mt_pg_t *pgs[PG_BATCH] = {0};
    mt_pg_opts_t *po = NULL;
    int rc;

    if ((rc = mt_pg_opts_create(&po)) < 0 ||
        (rc = mt_pg_opts_add_bundle(po, cpu, hundredth, 1)) < 0) {
        mt_pg_opts_destroy(po);
        return fail(b->client, "placement group options", rc);
    }
    do {
        size_t n = 0;

        while (n < PG_BATCH && (rc = mt_pg_create(b->client, po,
                                                  &pgs[n])) == 0)
            n++;
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = mt_pg_wait(b->client, pgs[i], 30000, NULL);
        if (rc < 0)
            fail(b->client, "placement group", rc);
        for (size_t i = 0; i < n; i++) {
            int r2 = mt_pg_remove(b->client, pgs[i]);

            rc = rc < 0 ? rc : r2;
            mt_pg_release(pgs[i]);
        }
        if (rc < 0)
            break;
        *ops += PG_BATCH;
    } while (now_s() < end);
    mt_pg_opts_destroy(po);
    return rc < 0 ? rc : 0;
}

/* ---- the suite ----------------------------------------------------------- */

static const struct metric memcpy_metric = {
    "single_client_memcpy_gigabytes", "GB/s", memcpy_gigabytes, true, NULL};

static struct metric metrics[] = {
    {"single_client_get_calls", "calls/s", get_calls, true, NULL},
    {"single_client_put_calls", "calls/s", put_calls, true, NULL},
    {"single_client_put_gigabytes", "GB/s", put_gigabytes, true,
     &memcpy_metric},
    {"single_client_tasks_and_get_batch", "batches/s", tasks_and_get_batch,
     true, NULL},
    {"single_client_wait_1k_refs", "rounds/s", wait_1k_refs, true, NULL},
    {"single_client_tasks_sync", "tasks/s", tasks_sync, true, NULL},
    {"single_client_tasks_async", "tasks/s", tasks_async, true, NULL},
    {"multi_client_tasks_async", "tasks/s", multi_client_async, true, NULL},
    {"1_1_actor_calls_sync", "calls/s", actor_sync, true, NULL},
    {"1_1_actor_calls_async", "calls/s", actor_async, true, NULL},
    {"n_n_actor_calls_async", "calls/s", actor_nn_async, true, NULL},
    {"placement_group_create/removal", "groups/s", pg_create_removal, true,
     NULL},
};

#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))

/* One trial of fn: its rate in ops per second. RET 0 or -MT_E*. */
static int trial(struct bench *b, trial_fn fn, double *rate)
{
    double ops = 0, t0 = now_s();
    int rc = fn(b, &ops);

    *rate = ops / (now_s() - t0);
    return rc;
}

static void mean_stdev(const double *rate, double *mean, double *stdev)
{
    double sum = 0, var = 0;

    for (int i = 0; i < TRIALS; i++)
        sum += rate[i];
    *mean = sum / TRIALS;
    for (int i = 0; i < TRIALS; i++)
        var += (rate[i] - *mean) * (rate[i] - *mean);
    *stdev = sqrt(var / TRIALS);
}

/*
 * Run a warm-up and TRIALS trials of m, and of its twin (if any) with the
 * trials alternating, so both see the machine alike. out[0..1]: m's mean
 * and stdev, out[2..3]: the twin's. RET 0 or -MT_E*.
 */
static int measure(struct bench *b, const struct metric *m, double out[4])
{
    double rate[TRIALS], trate[TRIALS], warm = 0, seconds = b->seconds;
    int rc;

    b->seconds = seconds / 4;
    rc = m->fn(b, &warm);
    if (rc == 0 && m->twin)
        rc = m->twin->fn(b, &warm);
    b->seconds = seconds;
    for (int i = 0; i < TRIALS && rc == 0; i++) {
        rc = trial(b, m->fn, &rate[i]);
        if (rc == 0 && m->twin)
            rc = trial(b, m->twin->fn, &trate[i]);
    }
    if (rc < 0)
        return rc;
    mean_stdev(rate, &out[0], &out[1]);
    if (m->twin)
        mean_stdev(trate, &out[2], &out[3]);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta-microbenchmark [--address HOST:PORT] [--json]\n"
            "           [--only NAME,...] [--seconds S] [--lib-dir DIR]\n"
            "\n"
            "Run the microbenchmark suite against a running cluster (the\n"
            "local session's head without --address). Each metric: a\n"
            "warm-up, then %d trials of S seconds (default 2); mean +- stdev.\n"
            "--lib-dir: where libbench_noop.so is (default: ../lib/manta\n"
            "from this program where it is installed, else ../lib, as in\n"
            "a build tree). --check only checks the arguments.\n"
            "\nmetrics:\n", TRIALS);
    for (size_t i = 0; i < N_METRICS; i++)
        fprintf(f, "  %s\n", metrics[i].name);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "manta-microbenchmark: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return EXIT_USAGE;
}

/* --only a,b,c: select those. RET 0 or EXIT_USAGE. */
static int select_only(char *list)
{
    char *save = NULL, *name;

    for (size_t i = 0; i < N_METRICS; i++)
        metrics[i].selected = false;
    for (name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        size_t i = 0;

        while (i < N_METRICS && strcmp(metrics[i].name, name) != 0)
            i++;
        if (i == N_METRICS)
            return usage_error("unknown metric '%s' (see --help)", name);
        metrics[i].selected = true;
    }
    return 0;
}

/* Where libbench_noop.so is: PREFIX/lib/manta when installed
 * (cmake/install.cmake), else the build tree's lib/, both from this
 * program's own folder. */
static void default_lib_dir(char *out, size_t len)
{
    char self[PATH_MAX], lib[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0) {
        snprintf(out, len, "build/lib");
        return;
    }
    self[n] = '\0';
    const char *dir = dirname(self);
    snprintf(lib, sizeof(lib), "%s/../lib/manta/libbench_noop.so", dir);
    snprintf(out, len, access(lib, R_OK) == 0 ? "%s/../lib/manta"
                                              : "%s/../lib", dir);
}

static int parse_args(struct bench *b, int argc, char **argv, bool *json,
                      bool *check)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},
        {"only", required_argument, NULL, 'o'},
        {"seconds", required_argument, NULL, 's'},
        {"lib-dir", required_argument, NULL, 'l'},
        {"check", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char *endp;
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': b->address = optarg; break;
        case 'j': *json = true; break;
        case 'c': *check = true; break;
        case 'l': snprintf(b->lib_dir, sizeof(b->lib_dir), "%s", optarg);
            break;
        case 'o':
            if ((rc = select_only(optarg)) != 0)
                return rc;
            break;
        case 's':
            b->seconds = strtod(optarg, &endp);
            if (endp == optarg || *endp || !(b->seconds > 0) ||
                b->seconds > 600)
                return usage_error("invalid --seconds '%s' (0 < S <= 600)",
                                   optarg);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return usage_error("unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return 0;
}

/* Connect and build the task options. */
static int setup(struct bench *b)
{
    int rc = mt_client_connect(b->address, NULL, &b->client);

    if (rc < 0)
        return fail(NULL, "connect", rc);
    if ((rc = mt_task_opts_create(&b->opts)) < 0 ||
        (rc = mt_task_opts_add_code_path(b->opts, b->lib_dir)) < 0 ||
        (rc = mt_task_opts_set_output_limit(b->opts, 0)) < 0)
        return fail(NULL, "task options", rc);
    return 0;
}

static void teardown(struct bench *b)
{
    mt_task_opts_destroy(b->opts);
    bench_actors_release(b->client);
    mt_client_disconnect(b->client);
    free(b->big);
    free(b->big_dst);
}

static void report(const struct metric *m, bool json, bool *first, int rc,
                   double mean, double stdev);

/* The twin's figures and the ratio of m to it. */
static void report_twin(const struct metric *m, bool json, bool *first,
                        int rc, const double out[4])
{
    static const struct metric ratio = {"single_client_put_memcpy_ratio",
                                        "ratio", NULL, true, NULL};

    report(m->twin, json, first, rc, out[2], out[3]);
    if (rc == 0 && !json) {
        printf("%s %.2f\n", ratio.name, out[2] > 0 ? out[0] / out[2] : 0);
        fflush(stdout);
        return;
    }
    report(&ratio, json, first, rc, out[2] > 0 ? out[0] / out[2] : 0, 0);
}

static void report(const struct metric *m, bool json, bool *first, int rc,
                   double mean, double stdev)
{
    if (json) {
        printf("%s\n  \"%s\": ", *first ? "{" : ",", m->name);
        if (rc < 0)
            printf("null");
        else
            printf("{\"value\": %.4f, \"stdev\": %.4f, \"unit\": \"%s\"}",
                   mean, stdev, m->unit);
        *first = false;
        return;
    }
    if (rc < 0)
        printf("%s failed (%s)\n", m->name, mt_error_name(rc));
    else
        printf("%s per second %.2f +- %.2f\n", m->name, mean, stdev);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench b = {.seconds = 2.0};
    bool json = false, check = false, first = true;
    int rc, status = 0;

    default_lib_dir(b.lib_dir, sizeof(b.lib_dir));
    if ((rc = parse_args(&b, argc, argv, &json, &check)) != 0)
        return rc;
    if (check)
        return 0;
    if (setup(&b) < 0) {
        teardown(&b);
        return 1;
    }
    for (size_t i = 0; i < N_METRICS; i++) {
        const struct metric *m = &metrics[i];
        double out[4] = {0};

        if (!m->selected)
            continue;
        rc = measure(&b, m, out);
        if (rc < 0)
            status = 1;
        report(m, json, &first, rc, out[0], out[1]);
        if (m->twin)
            report_twin(m, json, &first, rc, out);
    }
    if (json)
        printf("\n}\n");
    teardown(&b);
    return status;
}
