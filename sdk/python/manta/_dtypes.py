"""_dtypes.py -- DLPack dtypes (code, bits) <-> numpy / torch dtypes.

Codes follow manta/object.h (DLPack's DLDataTypeCode): 0 int, 1 uint,
2 float, 4 bfloat, 5 complex, 6 bool. One table each way and nothing
else: a dtype stores only if it reads back as the same dtype, so put
refuses what get could not give back (numpy float128, complex256,
datetimes, objects; torch's quantized types).

numpy has no bfloat16, so a bfloat16 object reads as raw uint16 through
numpy (the torch view gives torch.bfloat16). torch before 2.3 has no
uint16/32/64, so those read through numpy only.
"""
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6

_NAMES = {INT: "int", UINT: "uint", FLOAT: "float", BFLOAT: "bfloat",
          COMPLEX: "complex"}

# (code, bits) <-> numpy dtype name.
_NP = {(INT, 8): "int8", (INT, 16): "int16", (INT, 32): "int32",
       (INT, 64): "int64", (UINT, 8): "uint8", (UINT, 16): "uint16",
       (UINT, 32): "uint32", (UINT, 64): "uint64", (FLOAT, 16): "float16",
       (FLOAT, 32): "float32", (FLOAT, 64): "float64",
       (COMPLEX, 64): "complex64", (COMPLEX, 128): "complex128",
       (BOOL, 8): "bool"}
_NP_READ = dict(_NP)
_NP_READ[(BFLOAT, 16)] = "uint16"       # the raw bits of a bfloat16

# (code, bits) <-> torch dtype name (torch.<name>).
_TORCH = {(INT, 8): "int8", (INT, 16): "int16", (INT, 32): "int32",
          (INT, 64): "int64", (UINT, 8): "uint8", (FLOAT, 16): "float16",
          (FLOAT, 32): "float32", (FLOAT, 64): "float64",
          (BFLOAT, 16): "bfloat16", (COMPLEX, 64): "complex64",
          (COMPLEX, 128): "complex128", (BOOL, 8): "bool"}


def name(code, bits):
    """A readable name: "float32", "bfloat16", "complex64", "bool"..."""
    if code == BOOL:
        return "bool" if bits == 8 else "bool%d" % bits
    return _NAMES.get(code, "code%d_" % code) + str(bits)


def from_numpy(dt):
    """numpy dtype -> (code, bits). RET None when not storable."""
    for k, v in _NP.items():
        if v == dt.name:
            return k
    return None


def to_numpy(code, bits):
    import numpy
    n = _NP_READ.get((code, bits))
    if n is None:
        raise TypeError("no numpy dtype for %s" % name(code, bits))
    return numpy.dtype(n)


def from_torch(dt):
    """torch dtype -> (code, bits). RET None when not storable."""
    s = str(dt).replace("torch.", "")
    for k, v in _TORCH.items():
        if v == s:
            return k
    return None


def to_torch(code, bits):
    import torch
    n = _TORCH.get((code, bits))
    if n is None or not hasattr(torch, n):
        raise TypeError("no torch dtype for %s" % name(code, bits))
    return getattr(torch, n)
