/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_actors.c -- the actor metrics of manta-microbenchmark (see
 * bench_actors.h). Calls carry no arguments and return nothing, so what is
 * measured is the framework: submit to the head, ordered dispatch to the
 * actor's worker, the call in the actor's executor, the report back and
 * the caller's watch.
 */
#include "bench_actors.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WAIT_MS 120000

static mt_actor_t *actors[BENCH_ACTORS_N];

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

/* The first n actors, created (and waited for) on first use. */
static int get_actors(const struct bench_actors_env *e, int n)
{
    mt_task_opts_t *o = NULL;
    int rc = 0;

    for (int i = 0; i < n && rc == 0; i++) {
        if (actors[i])
            continue;
        if (!o && ((rc = mt_task_opts_create(&o)) < 0 ||
                   (rc = mt_task_opts_add_code_path(o, e->lib_dir)) < 0 ||
                   (rc = mt_task_opts_set_resource(o, "CPU", 0)) < 0))
            break;
        rc = mt_actor_create(e->client, "libbench_noop.so:noop_actor", NULL,
                             NULL, 0, o, NULL, &actors[i]);
        if (rc == 0)
            rc = mt_actor_wait_ready(e->client, actors[i], WAIT_MS);
        if (rc < 0)
            fail(e->client, "create an actor", rc);
    }
    mt_task_opts_destroy(o);
    return rc;
}

/* n calls round robin over actors[0..na), all waited for. RET 0/-MT_E*. */
static int call_batch(mt_client_t *c, int na, mt_task_t **ts, int n)
{
    int rc = 0, made = 0;

    for (; made < n; made++) {
        rc = mt_actor_call(c, actors[made % na], "noop", NULL, NULL, 0,
                           &ts[made]);
        if (rc < 0) {
            fail(c, "call", rc);
            break;
        }
    }
    if (rc == 0) {
        rc = mt_wait_tasks(c, ts, (size_t)n, (size_t)n, WAIT_MS, NULL);
        rc = rc == n ? 0 : rc < 0 ? fail(c, "wait", rc) : -MT_ETIMEDOUT;
    }
    for (int i = 0; i < made; i++)
        mt_task_release(ts[i]);
    return rc;
}

int bench_actor_calls_sync(const struct bench_actors_env *e, double *ops)
{
    double end = now_s() + e->seconds;
    int rc = get_actors(e, 1);

    while (rc == 0) {
        mt_task_t *t;

        if ((rc = mt_actor_call(e->client, actors[0], "noop", NULL, NULL, 0,
                                &t)) < 0)
            return fail(e->client, "call", rc);
        rc = mt_task_wait(e->client, t, WAIT_MS, NULL);
        mt_task_release(t);
        if (rc < 0)
            return fail(e->client, "call", rc);
        *ops += 1;
        if (now_s() >= end)
            break;
    }
    return rc;
}

int bench_actor_calls_async(const struct bench_actors_env *e, double *ops)
{
    double end = now_s() + e->seconds;
    mt_task_t **ts = calloc((size_t)e->batch, sizeof(*ts));
    int rc = ts ? get_actors(e, 1) : -MT_ENOMEM;

    while (rc == 0) {
        if ((rc = call_batch(e->client, 1, ts, e->batch)) < 0)
            break;
        *ops += e->batch;
        if (now_s() >= end)
            break;
    }
    free(ts);
    return rc;
}

struct caller {
    const struct bench_actors_env *e;
    double end;
    double ops;
    int rc;
};

static void *caller_main(void *p)
{
    struct caller *k = p;
    mt_task_t **ts = calloc((size_t)k->e->batch, sizeof(*ts));
    mt_client_t *c = NULL;

    k->rc = ts ? mt_client_connect(k->e->address, NULL, &c) : -MT_ENOMEM;
    while (k->rc == 0) {
        if ((k->rc = call_batch(c, BENCH_ACTORS_N, ts, k->e->batch)) < 0)
            break;
        k->ops += k->e->batch;
        if (now_s() >= k->end)
            break;
    }
    mt_client_disconnect(c);
    free(ts);
    return NULL;
}

int bench_nn_actor_calls_async(const struct bench_actors_env *e, double *ops)
{
    struct caller k[BENCH_ACTORS_N];
    pthread_t th[BENCH_ACTORS_N];
    int rc = get_actors(e, BENCH_ACTORS_N), started = 0;

    for (int i = 0; i < BENCH_ACTORS_N && rc == 0; i++) {
        k[i] = (struct caller){e, now_s() + e->seconds, 0, 0};
        if (pthread_create(&th[i], NULL, caller_main, &k[i]) != 0) {
            rc = -MT_ENOMEM;
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        *ops += k[i].ops;
        if (k[i].rc < 0)
            rc = k[i].rc;
    }
    return rc;
}

void bench_actors_release(mt_client_t *c)
{
    for (int i = 0; i < BENCH_ACTORS_N; i++) {
        if (actors[i] && c)
            mt_actor_kill(c, actors[i], true);
        mt_actor_release(actors[i]);
        actors[i] = NULL;
    }
}
