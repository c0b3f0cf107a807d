/* SPDX-License-Identifier: Apache-2.0 */
/*
 * refs_fnlib.c -- libmt_test_refslib.so: task functions for test_refs.py
 * (driven by refs_driver.c). Values are little-endian host integers and
 * doubles; vectors are arrays of doubles.
 *
 *   fill(n u64, seed u64)  -> n pseudo-random bytes (mt_refs_stream)
 *   checksum(x)            -> u64 checksum of x, u64 size of x
 *   vec(n u32, v f64)      -> n doubles equal to v
 *   add(vec, k f64)        -> vec + k
 *   total(vec)             -> f64 sum
 *   slow(ms u32, x)        -> x, after sleeping ms
 *   pair(a, b)             -> checksum(a)
 *   boom()                 -> fails with "boom"
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <manta/function.h>

#include "refs_stream.h"

static int u64_arg(struct mt_fn_call *call, uint32_t i, uint64_t *v)
{
    if (i >= call->nargs || call->args[i].size != 8)
        return -1;
    memcpy(v, call->args[i].data, 8);
    return 0;
}

MT_FUNCTION(fill)
{
    uint64_t n, seed;
    uint8_t *p;

    if (u64_arg(call, 0, &n) || u64_arg(call, 1, &seed) || n > (1ull << 31))
        return mt_fn_error(call, "fill takes n and seed (u64)");
    p = malloc(n ? n : 1);
    if (!p)
        return mt_fn_error(call, "out of memory for %llu bytes",
                           (unsigned long long)n);
    mt_refs_stream(p, n, seed);
    call->result = p;
    call->result_size = n;
    return 0;
}

static int sum_of(struct mt_fn_call *call, const struct mt_fn_arg *a)
{
    uint64_t out[2];

    out[0] = mt_refs_checksum(a->data, a->size);
    out[1] = a->size;
    return mt_fn_result(call, out, sizeof(out));
}

MT_FUNCTION(checksum)
{
    if (call->nargs != 1)
        return mt_fn_error(call, "checksum takes one argument");
    return sum_of(call, &call->args[0]);
}

MT_FUNCTION(pair)
{
    if (call->nargs != 2)
        return mt_fn_error(call, "pair takes two arguments");
    return sum_of(call, &call->args[0]);
}

MT_FUNCTION(vec)
{
    uint32_t n;
    double v, *p;

    if (call->nargs != 2 || call->args[0].size != 4 ||
        call->args[1].size != 8)
        return mt_fn_error(call, "vec takes n (u32) and v (f64)");
    memcpy(&n, call->args[0].data, 4);
    memcpy(&v, call->args[1].data, 8);
    p = malloc(n ? n * sizeof(*p) : 1);
    if (!p)
        return mt_fn_error(call, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        p[i] = v;
    call->result = p;
    call->result_size = (uint64_t)n * sizeof(*p);
    return 0;
}

MT_FUNCTION(add)
{
    const double *in;
    double k, *out;
    size_t n;

    if (call->nargs != 2 || call->args[0].size % 8 ||
        call->args[1].size != 8)
        return mt_fn_error(call, "add takes a vector and k (f64)");
    in = call->args[0].data;
    n = call->args[0].size / 8;
    memcpy(&k, call->args[1].data, 8);
    out = malloc(n ? n * sizeof(*out) : 1);
    if (!out)
        return mt_fn_error(call, "out of memory");
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] + k;
    call->result = out;
    call->result_size = n * sizeof(*out);
    return 0;
}

MT_FUNCTION(total)
{
    const double *in;
    double s = 0;

    if (call->nargs != 1 || call->args[0].size % 8)
        return mt_fn_error(call, "total takes a vector");
    in = call->args[0].data;
    for (size_t i = 0; i < call->args[0].size / 8; i++)
        s += in[i];
    return mt_fn_result(call, &s, sizeof(s));
}

MT_FUNCTION(slow)
{
    struct timespec ts;
    uint32_t ms;

    if (call->nargs != 2 || call->args[0].size != 4)
        return mt_fn_error(call, "slow takes ms (u32) and a value");
    memcpy(&ms, call->args[0].data, 4);
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
    return mt_fn_result(call, call->args[1].data, call->args[1].size);
}

MT_FUNCTION(boom)
{
    return mt_fn_error(call, "boom");
}
