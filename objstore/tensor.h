/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tensor.h -- optional tensor descriptor attached to an object.
 *
 * Mirrors DLPack's DLDataType/DLTensor fields so numpy (via
 * __array_interface__) and PyTorch (torch.from_dlpack / frombuffer) can view
 * the object bytes in place: dtype as (code, bits, lanes) with DLPack's type
 * codes, ndim, shape and strides counted in ELEMENTS as in DLPack. All-zero
 * strides mean compact row-major (DLPack's strides == NULL). The data starts
 * at the object's first byte (64-byte aligned, which satisfies DLPack's
 * 256-byte recommendation only for offsets that happen to be; see
 * docs/objstore.md).
 */
#ifndef MT_TENSOR_H
#define MT_TENSOR_H

#include <stdint.h>

#define MT_TENSOR_MAX_DIMS 8

/*
 * DLPack type codes (DLDataTypeCode), the same numbers as mt_dtype_code in
 * the SDK's manta/object.h (sdk/object.c asserts it). 3 (kDLOpaqueHandle)
 * is not a value type and is refused.
 */
enum mt_dl_code {
    MT_DL_INT = 0,
    MT_DL_UINT = 1,
    MT_DL_FLOAT = 2,
    MT_DL_BFLOAT = 4,
    MT_DL_COMPLEX = 5, /* real and imaginary halves: bits 32, 64 or 128 */
    MT_DL_BOOL = 6,    /* one byte per element, 0 or 1: bits 8 */
};

/* A tensor view of an object's data bytes. Plain value, fixed size. */
struct mt_tensor_desc {
    uint8_t code;                           /* enum mt_dl_code */
    uint8_t bits;                           /* bits per lane: 8 .. 128 */
    uint16_t lanes;                         /* 1 for scalars per element */
    uint32_t ndim;                          /* 0..MT_TENSOR_MAX_DIMS */
    int64_t shape[MT_TENSOR_MAX_DIMS];      /* elements per dimension */
    int64_t strides[MT_TENSOR_MAX_DIMS];    /* in elements; all 0: compact */
};

/*
 * mt_tensor_check - is t a valid view of data_size bytes?
 *
 * Checks the code, bits (multiple of 8 or 1 for bool-as-uint1; 8 for
 * MT_DL_BOOL; an even number of bytes for MT_DL_COMPLEX), lanes >= 1,
 * ndim <= 8 (0 is a scalar: one element), shapes >= 0, strides >= 0, and
 * that the furthest element lies within data_size. Overflow-safe.
 *
 * RET 0, -MT_EINVAL
 * THREAD any
 */
int mt_tensor_check(const struct mt_tensor_desc *t, uint64_t data_size);

/*
 * mt_tensor_nbytes - bytes a compact tensor with this dtype and shape spans.
 *
 * RET bytes, or UINT64_MAX on overflow
 */
uint64_t mt_tensor_nbytes(const struct mt_tensor_desc *t);

#endif /* MT_TENSOR_H */
