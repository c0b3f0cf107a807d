/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_actors.h -- the actor metrics of manta-microbenchmark, as in the
 * anchor's ray_perf.py: 1_1_actor_calls_sync (one caller, one actor, one
 * call at a time), 1_1_actor_calls_async (one caller, one actor, batches of
 * calls in flight) and n_n_actor_calls_async (n callers, each with its own
 * client, calling n actors round robin in batches).
 *
 * The actors ("libbench_noop.so:noop_actor", 0 CPU, method noop) are
 * created on first use and kept until bench_actors_release(), so a trial
 * measures calls only.
 *
 * THREAD: the trial functions run on the benchmark's main thread (n_n
 * starts its own caller threads).
 */
#ifndef MT_BENCH_ACTORS_H
#define MT_BENCH_ACTORS_H

#include <manta/manta.h>

#define BENCH_ACTORS_N 4         /* n of n_n */

/* What a trial needs from the benchmark. */
struct bench_actors_env {
    mt_client_t *client;         /* the benchmark's client */
    const char *address;         /* for the n_n callers' clients; NULL:
                                    the local session */
    const char *lib_dir;         /* holds libbench_noop.so */
    double seconds;              /* per trial */
    int batch;                   /* calls in flight per caller (async) */
};

/* One trial each: add the calls done to *ops. RET 0 or -MT_E*. */
int bench_actor_calls_sync(const struct bench_actors_env *e, double *ops);
int bench_actor_calls_async(const struct bench_actors_env *e, double *ops);
int bench_nn_actor_calls_async(const struct bench_actors_env *e,
                               double *ops);

/* Kill and forget the actors made so far. */
void bench_actors_release(mt_client_t *c);

#endif /* MT_BENCH_ACTORS_H */
