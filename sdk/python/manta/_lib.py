"""_lib.py -- find and load libmanta.so, and declare the C functions used.

Search order (the first that loads wins):
  1. $MANTA_LIB: the library file itself, or a folder holding libmanta.so
     (when set, nothing else is tried);
  2. an installed package: the lib folder `cmake --install` wrote into
     _installed.py (relative to the package, so a moved prefix works);
  3. the build tree this package sits in: <repo>/build/lib/libmanta.so
     (sdk/python/manta -> ../../../build/lib), and a libmanta.so next to
     the package;
  4. the system loader ("libmanta.so.0", then "libmanta.so").
When none loads, MantaError lists every place tried and why it failed.

The library is loaded once, on first use, so `import manta` works on a
machine without it (grant() needs no library at all).
"""
import ctypes
import os
import threading

try:  # only in an installed package (cmake/install_python.cmake)
    from ._installed import LIBDIR as _INSTALLED_LIBDIR
except ImportError:
    _INSTALLED_LIBDIR = None

_lock = threading.Lock()
_lib = None

MT_OBJECT_ID_LEN = 20
MT_TENSOR_MAX_NDIM = 8


class MantaError(Exception):
    """A failed call: code is the SDK's negative error code (0 when the
    failure is the binding's own), name its symbol, e.g. "MT_ENOENT";
    str() is the C SDK's message."""

    def __init__(self, message, code=0, name=""):
        super().__init__(message)
        self.code = code
        self.name = name


class ObjectId(ctypes.Structure):
    _fields_ = [("b", ctypes.c_uint8 * MT_OBJECT_ID_LEN)]


class ConnectOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("flags", ctypes.c_uint32),
                ("temp_dir", ctypes.c_char_p),
                ("store_socket", ctypes.c_char_p),
                ("connect_timeout_ms", ctypes.c_int),
                ("rpc_timeout_ms", ctypes.c_int)]


class TaskResult(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("state", ctypes.c_int),
                ("exit_code", ctypes.c_int),
                ("attempt", ctypes.c_uint32),
                ("error", ctypes.c_char_p),
                ("node_id", ctypes.c_char_p),
                ("out", ctypes.POINTER(ctypes.c_uint8)),
                ("out_len", ctypes.c_size_t),
                ("err", ctypes.POINTER(ctypes.c_uint8)),
                ("err_len", ctypes.c_size_t),
                ("out_dropped", ctypes.c_uint64),
                ("err_dropped", ctypes.c_uint64),
                ("value", ctypes.POINTER(ctypes.c_uint8)),
                ("value_len", ctypes.c_size_t)]


def _candidates():
    env = os.environ.get("MANTA_LIB")
    if env:  # an explicit choice: nothing else is tried
        yield (os.path.join(env, "libmanta.so") if os.path.isdir(env)
               else env), "$MANTA_LIB"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    if _INSTALLED_LIBDIR is not None:
        yield os.path.normpath(os.path.join(here, _INSTALLED_LIBDIR,
                                            "libmanta.so.0")), "install"
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "build",
                                        "lib", "libmanta.so")), "build tree"
    yield os.path.join(here, "libmanta.so"), "next to the package"
    yield "libmanta.so.0", "system loader"
    yield "libmanta.so", "system loader"


_P = ctypes.c_void_p
_ID = ctypes.POINTER(ObjectId)
_I64P = ctypes.POINTER(ctypes.c_int64)

# name: (restype, argtypes)
_PROTOS = {
    "mt_error_name": (ctypes.c_char_p, [ctypes.c_int]),
    "mt_error_string": (ctypes.c_char_p, [ctypes.c_int]),
    "mt_connect_opts_init": (None, [ctypes.POINTER(ConnectOpts)]),
    "mt_client_connect": (ctypes.c_int, [ctypes.c_char_p,
                                         ctypes.POINTER(ConnectOpts),
                                         ctypes.POINTER(_P)]),
    "mt_client_disconnect": (None, [_P]),
    "mt_client_last_error": (ctypes.c_char_p, [_P]),
    "mt_client_address": (ctypes.c_char_p, [_P]),
    "mt_client_has_store": (ctypes.c_int, [_P]),
    "mt_object_id_format": (ctypes.c_char_p, [_ID, ctypes.c_char_p]),
    "mt_object_id_parse": (ctypes.c_int, [ctypes.c_char_p, _ID]),
    "mt_put": (ctypes.c_int, [_P, _P, ctypes.c_size_t, ctypes.c_uint32, _ID]),
    "mt_put_tensor": (ctypes.c_int, [_P, _P, ctypes.c_size_t,
                                     ctypes.c_uint32, ctypes.c_int,
                                     ctypes.c_uint8, ctypes.c_uint32, _I64P,
                                     _ID]),
    "mt_create_tensor": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_int,
                                        ctypes.c_uint8, ctypes.c_uint32,
                                        _I64P, _ID, ctypes.POINTER(_P)]),
    "mt_wbuffer_data": (_P, [_P]),
    "mt_wbuffer_size": (ctypes.c_size_t, [_P]),
    "mt_seal": (ctypes.c_int, [_P, _P]),
    "mt_wbuffer_release": (None, [_P]),
    "mt_get": (ctypes.c_int, [_P, _ID, ctypes.c_int, ctypes.POINTER(_P)]),
    "mt_object_release": (ctypes.c_int, [_P, _ID, ctypes.c_size_t]),
    "mt_buffer_release": (None, [_P]),
    "mt_buffer_data": (_P, [_P]),
    "mt_buffer_size": (ctypes.c_size_t, [_P]),
    "mt_buffer_is_tensor": (ctypes.c_bool, [_P]),
    "mt_buffer_tensor": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int),
                                        ctypes.POINTER(ctypes.c_uint8),
                                        ctypes.POINTER(ctypes.c_uint32),
                                        _I64P]),
    "mt_task_result_id": (ctypes.c_int, [ctypes.c_char_p, _ID]),
    "mt_report_result": (ctypes.c_int, [_P, _P, ctypes.c_size_t]),
    "mt_report_result_tensor": (ctypes.c_int, [_P, _P, ctypes.c_size_t,
                                               ctypes.c_int, ctypes.c_uint8,
                                               ctypes.c_uint32, _I64P]),
    "mt_report_result_object": (ctypes.c_int, [_P, _ID, ctypes.c_int]),
    "mt_task_opts_create": (ctypes.c_int, [ctypes.POINTER(_P)]),
    "mt_task_opts_destroy": (None, [_P]),
    "mt_task_opts_set_env": (ctypes.c_int, [_P, ctypes.c_char_p,
                                            ctypes.c_char_p]),
    "mt_task_opts_set_resource": (ctypes.c_int, [_P, ctypes.c_char_p,
                                                 ctypes.c_double]),
    "mt_task_opts_set_cwd": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "mt_task_opts_set_name": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "mt_task_opts_set_max_retries": (ctypes.c_int, [_P, ctypes.c_int]),
    "mt_submit_command": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_char_p),
                                         _P, ctypes.POINTER(_P)]),
    "mt_task_id": (ctypes.c_char_p, [_P]),
    "mt_task_wait": (ctypes.c_int, [_P, _P, ctypes.c_int,
                                    ctypes.POINTER(TaskResult)]),
    "mt_task_cancel": (ctypes.c_int, [_P, _P, ctypes.c_bool]),
    "mt_task_release": (None, [_P]),
    "mt_task_result_init": (None, [ctypes.POINTER(TaskResult)]),
    "mt_task_result_release": (None, [ctypes.POINTER(TaskResult)]),
    "mt_task_state_name": (ctypes.c_char_p, [ctypes.c_int]),
}


def _declare(lib):
    missing = []
    for name, (res, args) in _PROTOS.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        f.restype = res
        f.argtypes = args
    return missing


def lib():
    """The loaded library (ctypes.CDLL), loading it on first use."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path, where in _candidates():
            if os.path.isabs(path) and not os.path.exists(path):
                tried.append("%s (%s): no such file" % (path, where))
                continue
            try:
                cand = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s): %s" % (path, where, e))
                continue
            missing = _declare(cand)
            if missing:
                tried.append("%s (%s): too old, lacks %s" %
                             (path, where, ", ".join(missing)))
                continue
            _lib = cand
            return _lib
        raise MantaError("cannot load libmanta.so; set MANTA_LIB to the "
                         "library or its folder. Tried:\n  " +
                         "\n  ".join(tried))


def error(rc, client=None):
    """A MantaError for return code rc, with the SDK's message for the
    calling thread's last failure on client (or on no client)."""
    L = lib()
    msg = L.mt_client_last_error(client)
    text = msg.decode(errors="replace") if msg else ""
    if not text:
        text = (L.mt_error_string(rc) or b"error").decode(errors="replace")
    name = (L.mt_error_name(rc) or b"").decode(errors="replace")
    return MantaError(text, rc, name)


def check(rc, client=None):
    if rc < 0:
        raise error(rc, client)
    return rc
