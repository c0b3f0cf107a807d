/* SPDX-License-Identifier: Apache-2.0 */
/*
 * counter_lib.c -- libexample_counter.so: a counter actor for the actor
 * examples and tests (manta/actor.h).
 *
 *   counter_new [start]  factory: the counter starts at start (decimal
 *                        text, default 0); fails on "fail"
 *   incr [by]            adds by (default 1); returns the new value
 *   get                  returns the value
 *   pid                  returns the executor's process id
 *   sleep_ms ms          sleeps, then returns the value (for kill tests)
 *   boom                 fails the call (the actor lives on)
 *
 * Values travel as int64 in host byte order (8 bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <manta/function.h>

struct counter {
    int64_t n;
};

/* The first argument as a number, or dflt. */
static int64_t arg_num(struct mt_fn_call *call, int64_t dflt)
{
    char buf[32];
    size_t n;

    if (call->nargs < 1 || call->args[0].size == 0)
        return dflt;
    n = call->args[0].size < sizeof(buf) - 1 ? (size_t)call->args[0].size
                                             : sizeof(buf) - 1;
    memcpy(buf, call->args[0].data, n);
    buf[n] = '\0';
    return strtoll(buf, NULL, 10);
}

MT_FUNCTION(counter_new)
{
    struct counter *c;

    if (call->nargs >= 1 && call->args[0].size == 4 &&
        memcmp(call->args[0].data, "fail", 4) == 0)
        return mt_fn_error(call, "counter_new: asked to fail");
    c = calloc(1, sizeof(*c));
    if (!c)
        return mt_fn_error(call, "counter_new: out of memory");
    c->n = arg_num(call, 0);
    call->actor = c;
    return 0;
}

MT_FUNCTION(incr)
{
    struct counter *c = MT_ACTOR_STATE(call, struct counter);

    if (!c)
        return mt_fn_error(call, "incr: not called on a counter actor");
    c->n += arg_num(call, 1);
    return mt_fn_result(call, &c->n, sizeof(c->n));
}

MT_FUNCTION(get)
{
    struct counter *c = MT_ACTOR_STATE(call, struct counter);

    if (!c)
        return mt_fn_error(call, "get: not called on a counter actor");
    return mt_fn_result(call, &c->n, sizeof(c->n));
}

MT_FUNCTION(pid)
{
    int64_t p = (int64_t)getpid();

    return mt_fn_result(call, &p, sizeof(p));
}

MT_FUNCTION(sleep_ms)
{
    struct counter *c = MT_ACTOR_STATE(call, struct counter);
    int64_t ms = arg_num(call, 100);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
    return mt_fn_result(call, c ? &c->n : &ms, sizeof(int64_t));
}

MT_FUNCTION(boom)
{
    return mt_fn_error(call, "boom: this method always fails");
}
