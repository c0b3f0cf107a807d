"""_dtypes.py -- DLPack dtypes (code, bits) <-> numpy / torch dtypes.

Codes follow manta/object.h: 0 int, 1 uint, 2 float, 4 bfloat. numpy has
no bfloat16, so a bfloat16 object reads as raw uint16 through numpy (the
torch view gives torch.bfloat16). bool and complex tensors are refused at
put: the store's tensor check knows only these codes.
"""
INT, UINT, FLOAT, BFLOAT = 0, 1, 2, 4

_NP = {(INT, 8): "int8", (INT, 16): "int16", (INT, 32): "int32",
       (INT, 64): "int64", (UINT, 8): "uint8", (UINT, 16): "uint16",
       (UINT, 32): "uint32", (UINT, 64): "uint64", (FLOAT, 16): "float16",
       (FLOAT, 32): "float32", (FLOAT, 64): "float64",
       (BFLOAT, 16): "uint16"}

_TORCH = {(INT, 8): "int8", (INT, 16): "int16", (INT, 32): "int32",
          (INT, 64): "int64", (UINT, 8): "uint8", (FLOAT, 16): "float16",
          (FLOAT, 32): "float32", (FLOAT, 64): "float64",
          (BFLOAT, 16): "bfloat16"}


def name(code, bits):
    """A readable name: "float32", "bfloat16", "int8"..."""
    if code == BFLOAT:
        return "bfloat%d" % bits
    return {INT: "int", UINT: "uint", FLOAT: "float"}.get(
        code, "code%d_" % code) + str(bits)


def from_numpy(dt):
    """numpy dtype -> (code, bits). RET None when not storable."""
    kind = {"i": INT, "u": UINT, "f": FLOAT}.get(dt.kind)
    if kind is None:
        return None
    return kind, dt.itemsize * 8


def to_numpy(code, bits):
    import numpy
    n = _NP.get((code, bits))
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
    if n is None:
        raise TypeError("no torch dtype for %s" % name(code, bits))
    return getattr(torch, n)
