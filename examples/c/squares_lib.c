/* SPDX-License-Identifier: Apache-2.0 */
/*
 * squares_lib.c -- a user library of task functions (libexample_squares.so).
 *
 * MT_FUNCTION(square) exports the symbol a worker's executor looks up for
 * "libexample_squares.so:square": one argument, a decimal integer as text;
 * the result is its square, as text.
 */
#include <manta/function.h>

MT_FUNCTION(square)
{
    char buf[32], out[32];
    long long n;
    int len;

    if (call->nargs != 1 || call->args[0].size == 0 ||
        call->args[0].size >= sizeof(buf))
        return mt_fn_error(call, "square takes one number");
    memcpy(buf, call->args[0].data, call->args[0].size);
    buf[call->args[0].size] = '\0';
    n = strtoll(buf, NULL, 10);
    len = snprintf(out, sizeof(out), "%lld", n * n);
    return mt_fn_result(call, out, (uint64_t)len);
}
