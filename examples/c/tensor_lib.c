/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tensor_lib.c -- libexample_tensors.so: the task functions of
 * example_tensor_pipeline (tensor_pipeline.c). Tensors travel as their
 * bytes: compact row-major float32, shape passed alongside.
 *
 *   make_ramp(rows u32, cols u32)       -> float32[rows][cols], v = r*cols+c
 *   scale_add(t float32[], a f32, b f32) -> a*t + b, same shape
 *
 * A result over 100 KiB is put in the store of the node that ran the
 * task; the next task gets it by reference, mapped from its own node's
 * store (pulled there first when it ran elsewhere).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <manta/function.h>

MT_FUNCTION(make_ramp)
{
    uint32_t rows, cols;
    float *t;

    if (call->nargs != 2 || call->args[0].size != 4 ||
        call->args[1].size != 4)
        return mt_fn_error(call, "make_ramp takes rows and cols (u32)");
    memcpy(&rows, call->args[0].data, 4);
    memcpy(&cols, call->args[1].data, 4);
    if (!rows || !cols || (uint64_t)rows * cols > (1u << 28))
        return mt_fn_error(call, "bad shape %ux%u", rows, cols);
    t = malloc((size_t)rows * cols * sizeof(*t));
    if (!t)
        return mt_fn_error(call, "out of memory");
    for (size_t i = 0; i < (size_t)rows * cols; i++)
        t[i] = (float)i;
    call->result = t;
    call->result_size = (uint64_t)rows * cols * sizeof(*t);
    return 0;
}

MT_FUNCTION(scale_add)
{
    const float *in;
    float a, b, *out;
    size_t n;

    if (call->nargs != 3 || call->args[0].size % sizeof(float) ||
        call->args[1].size != 4 || call->args[2].size != 4)
        return mt_fn_error(call, "scale_add takes a float32 tensor, a, b");
    in = call->args[0].data;
    n = call->args[0].size / sizeof(float);
    memcpy(&a, call->args[1].data, 4);
    memcpy(&b, call->args[2].data, 4);
    out = malloc(n ? n * sizeof(*out) : 1);
    if (!out)
        return mt_fn_error(call, "out of memory");
    for (size_t i = 0; i < n; i++)
        out[i] = a * in[i] + b;
    call->result = out;
    call->result_size = n * sizeof(*out);
    return 0;
}
