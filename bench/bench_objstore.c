/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_objstore.c -- object store microbenchmarks (bench/RESULTS-objstore.md).
 *
 * Measures first the ceiling of blocking calls (raw socketpair round
 * trips). Then forks a store process (store library + socket server on a
 * libuv loop, as the worker hosts it) and from one client measures:
 *   - small put calls/s     (a) put of a 100-byte object, one round trip
 *                           (b) mt_objc_put_many, 64 objects per batch
 *   - small get calls/s     (a) get+release of one object, the anchor
 *                               system's "single client get calls" shape;
 *                               served from the client's location cache
 *                           (b) get+release of distinct objects, one round
 *                               trip each, releases batched one-way
 *                           (c) as (b) with eager (unbatched) releases
 *                           (d) mt_objc_get_many, 64 distinct ids a batch
 *   - put GB/s of a 1 GiB object (create, memcpy in place, seal) next to
 *     plain memcpy GB/s into a pre-faulted private buffer, same run.
 *
 * --cold runs the store without prefault and the client without populate,
 * so the first put into fresh arena pages pays the page faults (later
 * repetitions reuse the same, now faulted, pages; the memcpy baseline
 * stays pre-faulted).
 *
 * usage: bench_objstore [--small N] [--big-mib M] [--reps R] [--cold]
 */
#include <getopt.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "common/error.h"
#include "common/log.h"
#include "objstore/client.h"
#include "objstore/server.h"
#include "objstore/store.h"

struct cfg {
    uint64_t small;    /* small calls per measurement */
    uint64_t big_mib;  /* big object size */
    int reps;          /* repetitions of the big put / memcpy */
    bool cold;         /* no prefault/populate: first-touch page faults */
    char sock[108];
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the store process ---- */

static void on_term(uv_signal_t *s, int signum)
{
    (void)signum;
    mt_server_stop(s->data);
    uv_close((uv_handle_t *)s, NULL);
}

static int store_main(const struct cfg *c, int ready)
{
    struct mt_store_opts o = {.capacity = (c->big_mib + 256) << 20,
                              .prefault = !c->cold};
    struct mt_store *st;
    struct mt_server *srv;
    uv_signal_t sig;
    uv_loop_t loop;

    if (mt_store_create(&o, &st) < 0)
        return 1;
    uv_loop_init(&loop);
    if (mt_server_start(&loop, st, c->sock, &srv) < 0)
        return 1;
    uv_signal_init(&loop, &sig);
    sig.data = srv;
    uv_signal_start(&sig, on_term, SIGTERM);
    if (write(ready, "r", 1) != 1)
        return 1;
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    mt_store_destroy(st);
    return 0;
}

static pid_t start_store(const struct cfg *c)
{
    int fds[2];
    char ch;
    pid_t pid;

    if (pipe(fds) < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        _exit(store_main(c, fds[1]));
    }
    close(fds[1]);
    if (read(fds[0], &ch, 1) != 1) {
        close(fds[0]);
        return -1;
    }
    close(fds[0]);
    return pid;
}

/* ---- measurements ---- */

static mt_object_id small_id(uint64_t i)
{
    return mt_object_id_from_u64(i, 0xbe4c);
}

static double bench_small_put(struct mt_objc *cl, uint64_t n)
{
    char data[100];
    double t0;

    memset(data, 'x', sizeof(data));
    t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        mt_object_id id = small_id(i);

        if (mt_objc_put(cl, &id, data, sizeof(data), NULL, 0, 0, NULL) < 0) {
            fprintf(stderr, "put %llu failed\n", (unsigned long long)i);
            exit(1);
        }
    }
    return (double)n / (now_s() - t0);
}

/* Pipelined: mt_objc_put_many in batches of `batch`. */
static double bench_small_put_many(struct mt_objc *cl, uint64_t n,
                                   size_t batch)
{
    struct mt_objc_put_req *reqs = calloc(batch, sizeof(*reqs));
    int *rcs = calloc(batch, sizeof(*rcs));
    char data[100];
    double t0;

    memset(data, 'y', sizeof(data));
    t0 = now_s();
    for (uint64_t i = 0; i < n; i += batch) {
        size_t k = n - i < batch ? (size_t)(n - i) : batch;

        for (size_t j = 0; j < k; j++) {
            reqs[j].id = mt_object_id_from_u64(i + j, 0xba7c);
            reqs[j].data = data;
            reqs[j].size = sizeof(data);
        }
        if (mt_objc_put_many(cl, reqs, k, rcs) < 0 || rcs[0] < 0) {
            fprintf(stderr, "put_many failed\n");
            exit(1);
        }
    }
    t0 = now_s() - t0;
    free(reqs);
    free(rcs);
    return (double)n / t0;
}

/* distinct: ids 0..n-1, else id 0 each time */
static double bench_small_get(struct mt_objc *cl, uint64_t n, bool distinct)
{
    struct mt_objc_buf b;
    uint64_t sum = 0;
    double t0 = now_s(), dt;

    for (uint64_t i = 0; i < n; i++) {
        mt_object_id id = small_id(distinct ? i : 0);

        if (mt_objc_get(cl, &id, 0, &b) < 0) {
            fprintf(stderr, "get %llu failed\n", (unsigned long long)i);
            exit(1);
        }
        sum += b.data[0];
        mt_objc_release(cl, &id);
    }
    dt = now_s() - t0;
    if (sum != n * 'x')
        fprintf(stderr, "bad content\n");
    mt_objc_flush(cl);
    return (double)n / dt;
}

/* Pipelined distinct gets: mt_objc_get_many in batches of `batch`. */
static double bench_small_get_many(struct mt_objc *cl, uint64_t n,
                                   size_t batch)
{
    mt_object_id *ids = calloc(batch, sizeof(*ids));
    struct mt_objc_buf *outs = calloc(batch, sizeof(*outs));
    int *rcs = calloc(batch, sizeof(*rcs));
    uint64_t sum = 0;
    double t0 = now_s();

    for (uint64_t i = 0; i < n; i += batch) {
        size_t k = n - i < batch ? (size_t)(n - i) : batch;

        for (size_t j = 0; j < k; j++)
            ids[j] = small_id(i + j);
        if (mt_objc_get_many(cl, ids, k, 0, outs, rcs) < 0)
            exit(1);
        for (size_t j = 0; j < k; j++) {
            if (rcs[j] < 0)
                exit(1);
            sum += outs[j].data[0];
            mt_objc_release(cl, &ids[j]);
        }
    }
    t0 = now_s() - t0;
    if (sum != n * 'x')
        fprintf(stderr, "bad content\n");
    mt_objc_flush(cl);
    free(ids);
    free(outs);
    free(rcs);
    return (double)n / t0;
}

/*
 * The ceiling for one-at-a-time calls: blocking round trips of a 132-byte
 * request and a 32-byte reply over a socketpair to a child process.
 */
static double bench_pingpong(uint64_t n)
{
    char b[256] = {0};
    int sv[2];
    double t0;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        exit(1);
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        while (recv(sv[1], b, sizeof(b), 0) > 0)
            if (send(sv[1], b, 32, 0) != 32)
                break;
        _exit(0);
    }
    close(sv[1]);
    t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        if (send(sv[0], b, 132, 0) != 132 || recv(sv[0], b, sizeof(b), 0) <= 0)
            exit(1);
    t0 = now_s() - t0;
    close(sv[0]);
    waitpid(pid, NULL, 0);
    return (double)n / t0;
}

static double gbps(uint64_t bytes, double s)
{
    return (double)bytes / s / 1e9;
}

static void bench_big(struct mt_objc *cl, const struct cfg *c, double *put,
                      double *cpy, double *first)
{
    uint64_t n = c->big_mib << 20;
    uint8_t *src = malloc(n), *dst = malloc(n);
    mt_object_id id = mt_object_id_from_u64(1, 0xb16);
    struct mt_objc_buf b;

    if (!src || !dst)
        exit(1);
    memset(src, 0x5a, n);
    memset(dst, 0, n); /* pre-fault, as the store arena is */
    *put = *cpy = *first = 0;
    for (int r = 0; r < c->reps; r++) {
        double t0 = now_s(), v;

        memcpy(dst, src, n);
        v = gbps(n, now_s() - t0);
        *cpy = v > *cpy ? v : *cpy;
        t0 = now_s();
        if (mt_objc_create(cl, &id, n, 0, 0, NULL, &b) < 0)
            exit(1);
        memcpy(b.data, src, n);
        if (mt_objc_seal(cl, &id) < 0)
            exit(1);
        v = gbps(n, now_s() - t0);
        *put = v > *put ? v : *put;
        if (r == 0)
            *first = v;
        if (mt_objc_delete(cl, &id) < 0)
            exit(1);
    }
    if (dst[n - 1] != 0x5a)
        exit(1);
    free(src);
    free(dst);
}

static void parse(int argc, char **argv, struct cfg *c)
{
    static const struct option lo[] = {
        {"small", required_argument, NULL, 's'},
        {"big-mib", required_argument, NULL, 'b'},
        {"reps", required_argument, NULL, 'r'},
        {"cold", no_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    c->small = 200000;
    c->big_mib = 1024;
    c->reps = 5;
    c->cold = false;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (ch == 's')
            c->small = strtoull(optarg, NULL, 10);
        else if (ch == 'b')
            c->big_mib = strtoull(optarg, NULL, 10);
        else if (ch == 'r')
            c->reps = atoi(optarg);
        else if (ch == 'c')
            c->cold = true;
        else
            exit(2);
    }
    snprintf(c->sock, sizeof(c->sock), "/tmp/mt-bench-objstore-%d.sock",
             (int)getpid());
}

static int run(const struct cfg *c)
{
    struct mt_objc_opts po = {.populate = !c->cold};
    struct mt_objc_opts eo = {.populate = !c->cold, .eager_release = true};
    struct mt_objc *cl, *ce;
    double put = 0, cpy = 0, first = 0;

    if (mt_objc_connect(c->sock, &po, &cl) < 0 ||
        mt_objc_connect(c->sock, &eo, &ce) < 0)
        return 1;
    printf("raw socket round trips/s (ceiling)          %12.0f\n",
           bench_pingpong(c->small));
    printf("small put calls/s (100 B, one round trip)   %12.0f\n",
           bench_small_put(cl, c->small));
    printf("small put calls/s (put_many, batches of 64) %12.0f\n",
           bench_small_put_many(cl, c->small, 64));
    printf("small get calls/s (same object, cached)     %12.0f\n",
           bench_small_get(cl, c->small, false));
    printf("small get calls/s (distinct, batched rel.)  %12.0f\n",
           bench_small_get(cl, c->small, true));
    printf("small get calls/s (distinct, eager rel.)    %12.0f\n",
           bench_small_get(ce, c->small, true));
    printf("small get calls/s (get_many, batches of 64) %12.0f\n",
           bench_small_get_many(cl, c->small, 64));
    bench_big(cl, c, &put, &cpy, &first);
    printf("put GB/s (%llu MiB object, first put)       %12.2f\n",
           (unsigned long long)c->big_mib, first);
    printf("put GB/s (%llu MiB object, best of %d)      %12.2f\n",
           (unsigned long long)c->big_mib, c->reps, put);
    printf("memcpy GB/s (same size, same run)           %12.2f\n", cpy);
    printf("put / memcpy                                %11.0f%%\n",
           100.0 * put / cpy);
    mt_objc_disconnect(ce);
    mt_objc_disconnect(cl);
    return 0;
}

int main(int argc, char **argv)
{
    struct cfg c;
    pid_t pid;
    int rc, st;

    mt_log_init("bench", MT_LOG_WARN, NULL);
    signal(SIGPIPE, SIG_IGN);
    parse(argc, argv, &c);
    pid = start_store(&c);
    if (pid < 0)
        return 1;
    rc = run(&c);
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
    return rc;
}
