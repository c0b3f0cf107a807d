"""_objects.py -- object ids and zero-copy views of mapped objects.

Keeping the mapping alive: mt_get() pins the object in the node's store
and returns a buffer that points into shared memory. An Object owns that
buffer through a _Pin, whose finalizer calls mt_buffer_release(). Every
view made from an Object (memoryview(), numpy(), torch()) is built on a
ctypes array that also holds the _Pin, and numpy / torch keep a reference
to the buffer they were made from, so the object stays pinned and mapped
as long as the Object or any view of it is referenced -- however long the
client lives. Drop them all and the pin goes (at the next garbage
collection at the latest).

Views are read-only: objects are immutable. torch.frombuffer() has no
read-only tensors, so the tensor from torch() shares the store's memory
and must not be written to (copy it with .clone() first).

Writing in place: Client.create() gives a Created, whose numpy() views
are writable and point straight into the store (no copy) until seal().
The seal makes every view handed out read-only and moves them onto a
get pin of the sealed object (the same _Pin as an Object's), so they stay
valid, and immutable, as long as they are referenced. Until then a _WPin
owns the mt_wbuffer_t; dropping it unsealed aborts the object.
"""
import ctypes
import warnings
import weakref

from . import _dtypes
from ._lib import MT_TENSOR_MAX_NDIM, MantaError, ObjectId, check, error, lib


class ObjectRef:
    """An object's id: 40 hex digits in .id (also str(ref))."""

    __slots__ = ("id",)

    def __init__(self, id):
        if isinstance(id, ObjectRef):
            id = id.id
        if isinstance(id, bytes):
            id = id.decode()
        if not isinstance(id, str):
            raise TypeError("an object id is a string of 40 hex digits, "
                            "not %s" % type(id).__name__)
        self.id = id.lower()

    def c_id(self):
        out = ObjectId()
        check(lib().mt_object_id_parse(self.id.encode(), ctypes.byref(out)))
        return out

    @classmethod
    def from_c(cls, cid):
        return cls(bytes(cid.b).hex())

    def __str__(self):
        return self.id

    def __repr__(self):
        return "ObjectRef(%r)" % self.id

    def __eq__(self, other):
        try:
            return self.id == ObjectRef(other).id
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.id)


class _Pin:
    """Owns one mt_buffer_t: releases it when the last holder goes."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        h, self.handle = self.handle, None
        if h:
            try:
                lib().mt_buffer_release(h)
            except Exception:  # interpreter shutdown: the OS unmaps it
                pass


class Object:
    """One object mapped from the store (pinned): read it with
    memoryview(), numpy() or torch(), all zero-copy."""

    def __init__(self, handle, ref):
        L = lib()
        self._pin = _Pin(handle)
        self.ref = ref
        self.size = L.mt_buffer_size(handle)
        self.address = L.mt_buffer_data(handle) or 0
        self.is_tensor = bool(L.mt_buffer_is_tensor(handle))
        self.code, self.bits, self.shape = _dtypes.UINT, 8, (self.size,)
        if self.is_tensor:
            code, bits = ctypes.c_int(), ctypes.c_uint8()
            ndim = ctypes.c_uint32()
            shape = (ctypes.c_int64 * MT_TENSOR_MAX_NDIM)()
            check(L.mt_buffer_tensor(handle, ctypes.byref(code),
                                     ctypes.byref(bits), ctypes.byref(ndim),
                                     shape))
            self.code, self.bits = code.value, bits.value
            self.shape = tuple(shape[i] for i in range(ndim.value))
        # The ctypes array the views are made from: it holds the pin.
        arr_t = type("_Mapped", (ctypes.c_uint8 * self.size,), {})
        self._arr = arr_t.from_address(self.address) if self.size else arr_t()
        self._arr._manta_pin = self._pin

    @property
    def id(self):
        return self.ref.id

    @property
    def dtype(self):
        """"float32", "int64", ... ("uint8" for plain bytes)."""
        return _dtypes.name(self.code, self.bits)

    def memoryview(self):
        """A read-only memoryview of the bytes (format "B")."""
        return memoryview(self._arr).cast("B").toreadonly()

    def bytes(self):
        """A copy of the bytes."""
        return bytes(self.memoryview())

    def numpy(self):
        """A read-only numpy array over the store's memory, with the stored
        dtype and shape (plain bytes: uint8, 1-D)."""
        import numpy
        a = numpy.frombuffer(self.memoryview(),
                             dtype=_dtypes.to_numpy(self.code, self.bits))
        return a.reshape(self.shape)

    def torch(self):
        """A torch tensor over the store's memory (torch.frombuffer), with
        the stored dtype and shape. Do not write to it."""
        import torch
        dt = _dtypes.to_torch(self.code, self.bits)
        if self.size == 0:
            return torch.empty(self.shape, dtype=dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # not writable
            t = torch.frombuffer(self.memoryview(), dtype=dt)
        return t.reshape(self.shape)

    def __len__(self):
        return self.size

    def __repr__(self):
        return "<manta.Object %s %s %s>" % (self.id, self.dtype,
                                             list(self.shape))


_MT_ESTATE = -1012  # as the C SDK answers a second mt_seal


class _WPin:
    """Owns one mt_wbuffer_t: releasing it unsealed aborts the object."""

    def __init__(self, handle):
        self.handle = handle

    def release(self):
        h, self.handle = self.handle, None
        if h:
            try:
                lib().mt_wbuffer_release(h)
            except Exception:  # interpreter shutdown: the store aborts it
                pass

    def __del__(self):
        self.release()


class Created:
    """An object being written in place (Client.create / manta.create).

    numpy() is a writable numpy view of the object's memory in the store
    (zero-copy) until seal() publishes the object (then every view handed
    out is read-only, and valid as long as it is referenced) and returns
    its ObjectRef; abort() drops it. Until sealed the object is unreadable
    (gets fail; the head does not know it). As a context manager, entering
    gives the writable array, a normal exit seals and an exception aborts:

        w = manta.create((1024, 1024), "float32")
        with w as a:
            a[...] = 1.0
        ref = w.ref
    """

    def __init__(self, client, handle, ref, shape, dtype):
        import numpy
        L = lib()
        self._client = client        # sealing registers through it
        self._wpin = _WPin(handle)
        self.ref = ref
        self.shape = tuple(shape)
        self.dtype = numpy.dtype(dtype)
        self.size = L.mt_wbuffer_size(handle)
        self.sealed = False
        self._done = False
        self._views = []
        arr_t = type("_Created", (ctypes.c_uint8 * self.size,), {})
        self._arr = arr_t.from_address(L.mt_wbuffer_data(handle))
        self._arr._manta_wpin = self._wpin  # views keep the object alive

    @property
    def id(self):
        return self.ref.id

    def numpy(self):
        """A writable numpy array over the object (dtype and shape as
        created). Raises ValueError once sealed or aborted."""
        import numpy
        if self._done:
            raise ValueError("object %s is %s: it is no longer writable%s" % (
                self.id, "sealed" if self.sealed else "aborted",
                " (read it with manta.get())" if self.sealed else ""))
        a = numpy.frombuffer(self._arr, dtype=self.dtype).reshape(self.shape)
        self._views.append(weakref.ref(a))
        return a

    def _freeze_views(self):
        for v in self._views:
            a = v()
            if a is not None:
                a.flags.writeable = False
        self._views = []

    def seal(self):
        """Publish the object: immutable, readable anywhere, registered
        with the head (you hold one reference, as for a put). RET the
        ObjectRef. Raises MantaError (MT_ESTATE when sealed already)."""
        L, c = lib(), self._client._live()
        if self._done:
            raise MantaError("object %s is %s already" % (
                self.id, "sealed" if self.sealed else "aborted"),
                _MT_ESTATE, "MT_ESTATE")
        self._done = True
        self._freeze_views()
        rc = L.mt_seal(c, self._wpin.handle)
        if rc < 0:
            err = error(rc, c)
            self._wpin.release()
            raise err
        self.sealed = True
        # Views now read a sealed object: hold a get pin for them.
        obj = self._client.get(self.ref, timeout=0)
        self._arr._manta_pin = obj._pin
        self._wpin.release()
        return self.ref

    def abort(self):
        """Drop the object unsealed (its space is freed). Views made
        before must not be used afterwards."""
        if self._done:
            return
        self._done = True
        self._freeze_views()
        self._wpin.release()

    def __enter__(self):
        return self.numpy()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.seal()
        else:
            self.abort()
        return False

    def __repr__(self):
        return "<manta.Created %s %s %s%s>" % (
            self.id, self.dtype, list(self.shape),
            " sealed" if self.sealed else "")
