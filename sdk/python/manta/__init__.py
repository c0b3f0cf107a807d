"""manta -- a thin ctypes binding to libmanta, the Manta C SDK.

For PyTorch / TorchTPU programs running as Manta tasks (or drivers on a
cluster node): put and get tensors through the node's shared-memory object
store without copies, read the task's accelerator grant, report a result.

    import manta
    ref = manta.put(numpy.arange(6, dtype="float32").reshape(2, 3))
    obj = manta.get(ref)            # pinned mapping of the object
    a = obj.numpy()                 # zero-copy, float32, shape (2, 3)
    t = obj.torch()                 # zero-copy torch tensor (don't write)
    g = manta.grant()               # CUDA_VISIBLE_DEVICES, TPU_*, RANK...
    manta.report_result(t)          # inside a command task

    w = manta.create((1024, 1024), "float32")   # write in place, no copy
    with w as a:                    # a: writable numpy view into the store
        a[...] = 1.0                # sealed at the end of the block
    ref = w.ref

The module-level functions use one default client, connected on first use
by connect() with no arguments: the head from $MANTA_HEAD_ADDRESS (the
worker sets it for every command task, with $MANTA_OBJECT_STORE_SOCKET),
else the session dir ($MANTA_TEMP_DIR, /tmp/manta) as the CLI does. Call
connect() yourself to choose, or make Client objects.

The library: $MANTA_LIB, else the installed one (after `make install` or
the Debian package), else <repo>/build/lib, else the system loader
(see _lib.py). Failures raise MantaError with the C SDK's message.
Docs: docs/sdk.md, "Python".
"""
import threading

from ._client import Client, Task, TaskOutcome, result_ref
from ._grant import Grant, grant
from ._lib import MantaError
from ._objects import Created, Object, ObjectRef

__all__ = ["Client", "Created", "Grant", "MantaError", "Object", "ObjectRef",
           "Task", "TaskOutcome", "connect", "create", "disconnect", "get",
           "grant", "put",
           "release", "report_result", "result_ref", "submit",
           "task_result"]

_default = None
_default_lock = threading.Lock()


def connect(address=None, temp_dir=None, store_socket=None,
            connect_timeout=None):
    """Connect to a cluster and make it the default client. address:
    "host:port" of the head; None: $MANTA_HEAD_ADDRESS, else the session
    dir. store_socket None: $MANTA_OBJECT_STORE_SOCKET, else found by the
    SDK. RET Client."""
    global _default
    c = Client(address, temp_dir, store_socket, connect_timeout)
    with _default_lock:
        old, _default = _default, c
    if old is not None:
        old.close()
    return c


def disconnect():
    """Close the default client (mapped objects stay readable)."""
    global _default
    with _default_lock:
        old, _default = _default, None
    if old is not None:
        old.close()


def _client():
    global _default
    with _default_lock:
        if _default is None:
            _default = Client()
        return _default


def put(x):
    """Store x in this node's store. See Client.put."""
    return _client().put(x)


def create(shape, dtype="float32"):
    """An object to write in place, sealed at the end of a with block.
    See Client.create."""
    return _client().create(shape, dtype)


def get(ref, timeout=None):
    """Map an object zero-copy. See Client.get."""
    return _client().get(ref, timeout)


def release(*refs):
    """Drop one reference on each object. See Client.release."""
    return _client().release(*refs)


def submit(argv, **kw):
    """Run a command task. See Client.submit."""
    return _client().submit(argv, **kw)


def task_result(task_id, timeout=None):
    """A task's result object, mapped. See Client.task_result."""
    return _client().task_result(task_id, timeout)


def report_result(x, timeout=None):
    """Inside a command task: make x its result. See
    Client.report_result."""
    return _client().report_result(x, timeout)
