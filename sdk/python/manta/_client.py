"""_client.py -- a connection to a cluster: objects, command tasks, results.

A Client wraps one mt_client_t. Every method calls the C SDK (which is
thread-safe) with the GIL released, and turns a negative return into a
MantaError carrying the SDK's message for that call.
"""
import ctypes
import os

from . import _dtypes
from ._lib import (ConnectOpts, MantaError, ObjectId, TaskResult, check,
                   error, lib)
from ._objects import Created, Object, ObjectRef

_P = ctypes.c_void_p


def _ms(timeout):
    """Seconds (None: forever) -> the SDK's milliseconds (-1: forever)."""
    if timeout is None:
        return -1
    return max(0, int(timeout * 1000))


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch" and \
        hasattr(x, "data_ptr")


def _is_numpy(x):
    return type(x).__module__.split(".")[0] == "numpy" and \
        hasattr(x, "__array_interface__")


def _bytes_ptr(x):
    """(pointer, size, keepalive) of a bytes-like object, without a copy
    where the buffer allows."""
    if isinstance(x, bytes):
        return ctypes.cast(ctypes.c_char_p(x), _P), len(x), x
    mv = memoryview(x).cast("B")
    if not mv.readonly:
        arr = (ctypes.c_char * mv.nbytes).from_buffer(mv)
        return ctypes.cast(arr, _P), mv.nbytes, (mv, arr)
    b = mv.tobytes()
    return ctypes.cast(ctypes.c_char_p(b), _P), len(b), b


def _tensor_args(x):
    """(pointer, nbytes, code, bits, shape, keepalive) for a numpy array or
    a CPU torch tensor; None for anything else."""
    if _is_torch(x):
        if x.device.type != "cpu":
            raise ValueError("the tensor is on %s: move it to the CPU first "
                             "(t.cpu())" % x.device)
        if not x.is_contiguous():
            raise ValueError("the tensor is not contiguous: use "
                             "t.contiguous() first")
        cb = _dtypes.from_torch(x.dtype)
        if cb is None:
            raise TypeError("cannot store a %s tensor" % x.dtype)
        if x.is_complex():
            # A lazy x.conj() shares the unconjugated memory: make it real.
            x = x.resolve_conj()
        return (x.data_ptr(), x.numel() * x.element_size(), cb[0], cb[1],
                tuple(x.shape), x)
    if _is_numpy(x):
        a = _compact(x)
        cb = _dtypes.from_numpy(a.dtype)
        if cb is None:
            raise TypeError("cannot store a numpy array of dtype %s" %
                            a.dtype)
        return a.ctypes.data, a.nbytes, cb[0], cb[1], a.shape, a
    return None


def _compact(x):
    """x as a C-contiguous, native-endian array of the same shape. Not
    numpy.ascontiguousarray: that makes a 0-d array 1-d, and a scalar must
    come back with shape ()."""
    import numpy
    a = numpy.asarray(x)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return a


def _shape_arr(shape):
    return (ctypes.c_int64 * max(1, len(shape)))(*shape)


class TaskOutcome:
    """How a task ended: state ("FINISHED", "FAILED", ...), exit_code,
    error, node_id, attempt, stdout and stderr (bytes, the last ones kept)."""

    def __init__(self, r):
        L = lib()
        self.state = (L.mt_task_state_name(r.state) or b"?").decode()
        self.exit_code = r.exit_code
        self.attempt = r.attempt
        self.error = (r.error or b"").decode(errors="replace")
        self.node_id = (r.node_id or b"").decode(errors="replace")
        self.stdout = ctypes.string_at(r.out, r.out_len) if r.out_len else b""
        self.stderr = ctypes.string_at(r.err, r.err_len) if r.err_len else b""

    @property
    def ok(self):
        return self.state == "FINISHED" and self.exit_code == 0

    def __repr__(self):
        return "<TaskOutcome %s exit=%d%s>" % (
            self.state, self.exit_code, " " + self.error if self.error else "")


class Task:
    """A submitted command task. Its result (if it reported one) is the
    object result_ref, read with result()."""

    def __init__(self, client, handle):
        self._client = client
        self._h = handle

    @property
    def id(self):
        return (lib().mt_task_id(self._h) or b"").decode()

    @property
    def result_ref(self):
        return result_ref(self.id)

    def wait(self, timeout=None):
        """Wait for the end. RET TaskOutcome (FINISHED, FAILED or
        CANCELLED); raises MantaError on a timeout or a lost task."""
        L = lib()
        r = TaskResult()
        L.mt_task_result_init(ctypes.byref(r))
        try:
            rc = L.mt_task_wait(self._client._c, self._h, _ms(timeout),
                                ctypes.byref(r))
            if rc < 0 and rc not in (-1021, -1010, -1020):
                raise error(rc, self._client._c)  # not FAILED/CANCELLED
            return TaskOutcome(r)
        finally:
            L.mt_task_result_release(ctypes.byref(r))

    def result(self, timeout=None):
        """The task's result object, mapped (waits for the task first)."""
        out = self.wait(timeout)
        if not out.ok:
            raise MantaError("task %s has no result: it ended %s%s" % (
                self.id, out.state, " (" + out.error + ")" if out.error
                else " with exit code %d" % out.exit_code))
        return self._client.task_result(self.id, timeout=0)

    def cancel(self, force=False):
        check(lib().mt_task_cancel(self._client._c, self._h, force),
              self._client._c)

    def release(self):
        h, self._h = self._h, None
        if h:
            lib().mt_task_release(h)

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


def result_ref(task_id):
    """The ObjectRef of task task_id's result (t and 15 hex digits).
    Another kind of id (a placement group's...) raises MantaError saying
    which kind it is."""
    cid = ObjectId()
    check(lib().mt_task_result_id(str(task_id).encode(), ctypes.byref(cid)))
    return ObjectRef.from_c(cid)


class Client:
    """A connection to a Manta cluster (see manta.connect)."""

    def __init__(self, address=None, temp_dir=None, store_socket=None,
                 connect_timeout=None):
        L = lib()
        address = address or os.environ.get("MANTA_HEAD_ADDRESS") or None
        if store_socket is None:
            store_socket = os.environ.get("MANTA_OBJECT_STORE_SOCKET") or None
        opts = ConnectOpts()
        L.mt_connect_opts_init(ctypes.byref(opts))
        self._keep = [s.encode() if s else None for s in (temp_dir,
                                                          store_socket)]
        opts.temp_dir, opts.store_socket = self._keep
        if connect_timeout:
            opts.connect_timeout_ms = _ms(connect_timeout)
        c = _P()
        rc = L.mt_client_connect(address.encode() if address else None,
                                 ctypes.byref(opts), ctypes.byref(c))
        if rc < 0:
            raise error(rc, None)
        self._c = c

    # -- life ---------------------------------------------------------------
    def close(self):
        """Disconnect. Objects already mapped stay readable."""
        c, self._c = getattr(self, "_c", None), None
        if c:
            lib().mt_client_disconnect(c)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _live(self):
        if not self._c:
            raise MantaError("the client is closed", -1014, "MT_ECLOSED")
        return self._c

    @property
    def address(self):
        return lib().mt_client_address(self._live()).decode()

    @property
    def has_store(self):
        return bool(lib().mt_client_has_store(self._live()))

    # -- objects ------------------------------------------------------------
    def put(self, x):
        """Store x (numpy array, CPU torch tensor, or bytes-like) in this
        node's store; arrays keep dtype and shape (0-d ones too): ints,
        uints, float16/32/64, bfloat16 (torch), complex64/128 and bool.
        RET ObjectRef (you hold one reference: release() it when done)."""
        L, c, cid = lib(), self._live(), ObjectId()
        t = _tensor_args(x)
        if t is not None:
            ptr, n, code, bits, shape, keep = t
            rc = L.mt_put_tensor(c, ptr, n, 0, code, bits, len(shape),
                                 _shape_arr(shape), ctypes.byref(cid))
        else:
            ptr, n, keep = _bytes_ptr(x)
            rc = L.mt_put(c, ptr, n, 0, ctypes.byref(cid))
        del keep
        check(rc, c)
        return ObjectRef.from_c(cid)

    def create(self, shape, dtype="float32"):
        """Create an object of this shape and numpy dtype to write in
        place (zero-copy): RET a Created whose numpy() is a writable view
        into the store until seal() (or the end of a with block) publishes
        it. An int shape is 1-D. Raises MantaError: MT_EINVAL for a shape
        with no element, MT_ETOOBIG when larger than this node's store;
        TypeError for a dtype the store cannot keep."""
        import numpy
        L, c = lib(), self._live()
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dt = numpy.dtype(dtype)
        cb = _dtypes.from_numpy(dt)
        if cb is None:
            raise TypeError("cannot store a numpy array of dtype %s" % dt)
        cid, h = ObjectId(), _P()
        check(L.mt_create_tensor(c, 0, cb[0], cb[1], len(shape),
                                 _shape_arr(shape), ctypes.byref(cid),
                                 ctypes.byref(h)), c)
        return Created(self, h.value, ObjectRef.from_c(cid), shape, dt)

    def get(self, ref, timeout=None):
        """Map object ref (ObjectRef or hex id) zero-copy, pulling it to
        this node if needed; waits up to timeout seconds (None: forever)
        for a function-task result not produced yet. An id that neither
        the head nor this node's store knows fails at once (MT_ENOENT),
        where mt_get() would wait for a local put. RET Object."""
        L, c = lib(), self._live()
        ref = ObjectRef(ref)
        cid = ref.c_id()
        h = _P()
        rc = L.mt_get(c, ctypes.byref(cid), 0, ctypes.byref(h))
        if rc == -1009 and timeout != 0:  # MT_ETIMEDOUT: pending, wait
            rc = L.mt_get(c, ctypes.byref(cid), _ms(timeout),
                          ctypes.byref(h))
        check(rc, c)
        return Object(h.value, ref)

    def release(self, *refs):
        """Drop one reference on each object (puts, command results)."""
        if not refs:
            return
        c = self._live()
        ids = (ObjectId * len(refs))(*[ObjectRef(r).c_id() for r in refs])
        check(lib().mt_object_release(c, ids, len(refs)), c)

    # -- command tasks and their results ------------------------------------
    def submit(self, argv, env=None, resources=None, cwd=None, name=None,
               max_retries=None):
        """Run argv (a list of strings) as a command task. RET Task."""
        L, c = lib(), self._live()
        if isinstance(argv, str) or not argv:
            raise ValueError("argv is a non-empty list of strings")
        o = _P()
        check(L.mt_task_opts_create(ctypes.byref(o)))
        try:
            for k, v in (env or {}).items():
                check(L.mt_task_opts_set_env(o, str(k).encode(),
                                             str(v).encode()))
            for k, v in (resources or {}).items():
                check(L.mt_task_opts_set_resource(o, str(k).encode(),
                                                  float(v)))
            if cwd is not None:
                check(L.mt_task_opts_set_cwd(o, str(cwd).encode()))
            if name is not None:
                check(L.mt_task_opts_set_name(o, str(name).encode()))
            if max_retries is not None:
                check(L.mt_task_opts_set_max_retries(o, int(max_retries)))
            args = (ctypes.c_char_p * (len(argv) + 1))(
                *[str(a).encode() for a in argv], None)
            t = _P()
            check(L.mt_submit_command(c, args, o, ctypes.byref(t)), c)
        finally:
            L.mt_task_opts_destroy(o)
        return Task(self, t.value)

    def task_result(self, task_id, timeout=None):
        """The result object of task task_id (a command task that reported
        one, or a function task), mapped. The object keeps one reference
        for its reader: release(result_ref(task_id)) when done with it."""
        return self.get(result_ref(task_id), timeout=timeout)

    def report_result(self, x, timeout=None):
        """Inside a command task: make x the task's result. x is an
        ObjectRef (a copy of that object is made), a numpy array, a CPU
        torch tensor or bytes-like. The worker reports it when the program
        exits with status 0. RET the ObjectRef the result will have."""
        L, c = lib(), self._live()
        if isinstance(x, ObjectRef):
            cid = x.c_id()
            check(L.mt_report_result_object(c, ctypes.byref(cid),
                                            _ms(timeout)), c)
        else:
            t = _tensor_args(x)
            if t is not None:
                ptr, n, code, bits, shape, keep = t
                rc = L.mt_report_result_tensor(c, ptr, n, code, bits,
                                               len(shape), _shape_arr(shape))
            else:
                ptr, n, keep = _bytes_ptr(x)
                rc = L.mt_report_result(c, ptr, n)
            del keep
            check(rc, c)
        return result_ref(os.environ["MANTA_TASK_ID"])
