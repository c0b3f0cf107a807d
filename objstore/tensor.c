/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tensor.c -- validation of tensor descriptors against an object's size.
 *
 * The store checks descriptors at create time so every reader can trust
 * them: a client can never be handed a shape that reaches past the object.
 */
#include "tensor.h"

#include <stdbool.h>

#include "common/error.h"

/* Is bits a width the type code can have? */
static bool bits_ok(uint8_t code, uint8_t bits)
{
    switch (code) {
    case MT_DL_INT:
    case MT_DL_UINT:
    case MT_DL_FLOAT:
    case MT_DL_BFLOAT:
        return bits != 0 && (bits % 8 == 0 || bits == 1);
    case MT_DL_COMPLEX:
        return bits != 0 && bits % 16 == 0;
    case MT_DL_BOOL:
        return bits == 8;
    default:
        return false;
    }
}

static int elem_bytes(const struct mt_tensor_desc *t, uint64_t *out)
{
    uint64_t bits;

    if (t->lanes == 0 || !bits_ok(t->code, t->bits))
        return -MT_EINVAL;
    bits = (uint64_t)t->bits * t->lanes;
    *out = (bits + 7) / 8;
    return 0;
}

static int mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

uint64_t mt_tensor_nbytes(const struct mt_tensor_desc *t)
{
    uint64_t n, eb;

    if (elem_bytes(t, &eb) < 0 || t->ndim > MT_TENSOR_MAX_DIMS)
        return UINT64_MAX;
    n = eb;
    for (uint32_t i = 0; i < t->ndim; i++)
        if (t->shape[i] < 0 || !mul_ok(n, (uint64_t)t->shape[i], &n))
            return UINT64_MAX;
    return n;
}

static bool compact(const struct mt_tensor_desc *t)
{
    for (uint32_t i = 0; i < t->ndim; i++)
        if (t->strides[i] != 0)
            return false;
    return true;
}

/* Index of the furthest element + 1, with explicit strides. */
static int strided_extent(const struct mt_tensor_desc *t, uint64_t *out)
{
    uint64_t last = 0, term;

    for (uint32_t i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || t->strides[i] < 0)
            return -MT_EINVAL;
        if (t->shape[i] == 0) {
            *out = 0;
            return 0;
        }
        if (!mul_ok((uint64_t)(t->shape[i] - 1), (uint64_t)t->strides[i],
                    &term) ||
            __builtin_add_overflow(last, term, &last))
            return -MT_EINVAL;
    }
    *out = last + 1;
    return 0;
}

int mt_tensor_check(const struct mt_tensor_desc *t, uint64_t data_size)
{
    uint64_t eb, n;

    if (elem_bytes(t, &eb) < 0 || t->ndim > MT_TENSOR_MAX_DIMS)
        return -MT_EINVAL;
    if (compact(t)) {
        n = mt_tensor_nbytes(t);
        return n <= data_size ? 0 : -MT_EINVAL;
    }
    if (strided_extent(t, &n) < 0 || !mul_ok(n, eb, &n))
        return -MT_EINVAL;
    return n <= data_size ? 0 : -MT_EINVAL;
}
