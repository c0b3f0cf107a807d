/* SPDX-License-Identifier: Apache-2.0 */
/*
 * noop_lib.c -- libbench_noop.so: the no-op task function the
 * microbenchmark (bench/microbenchmark.c) submits as "libbench_noop.so:noop",
 * the counterpart of ray_perf.py's `small_value` / `do_nothing` tasks.
 *
 * It ignores its arguments and returns an empty result, so a measured task
 * is all framework: submit, schedule, dispatch to a prestarted executor,
 * call, report back.
 */
#include <manta/function.h>

MT_FUNCTION(noop)
{
    (void)call;
    return 0;
}

/* The actor of the 1_1 / n_n actor metrics: no state worth the name (a
 * counter of calls), whose method is noop above, called on the actor. */
MT_FUNCTION(noop_actor)
{
    static long calls;

    call->actor = &calls;
    return 0;
}
