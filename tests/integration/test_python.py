"""test_python.py -- the Python bridge (sdk/python/manta), command-task
results and examples/torchtpu/train.py on a real one-node cluster.

From this process the bridge (PYTHONPATH=sdk/python, MANTA_LIB=<build>/lib)
puts and gets objects: zero-copy numpy and torch views over the store with
the stored dtype and shape (bool, complex64/128, float16, bfloat16; 0-d
arrays stay 0-d), kept mapped while a view lives, clear errors for unknown
and malformed ids and for dtypes that cannot come back; manta.create() writes an object in
place through a writable view, sealed at the end of a with block and read
back by a task on a second node. Command tasks report results through
MANTA_RESULT_PATH (a value, a tensor through the bridge, and garbage, which
fails the task with a clear error); `manta submit` prints the result object
on stderr and leaves stdout alone. train.py runs as one task with --input,
then as two concurrent ranks (WORLD_SIZE=2, hand-set MASTER_ADDR/PORT) that
must end with the same weights, which the bridge then reads back from rank
0's result; each rank's own put of them went with its process (a driver's
objects end with its session, as in Ray).
numpy / torch parts are skipped, saying so, when they are not importable
(deploy/install-deps.sh installs both).
"""
import gc
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import weakref

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir, run,
                     sanitizer_env, wait_until)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYDIR = os.path.join(ROOT, "sdk", "python")
LIBDIR = os.path.abspath(os.path.join(BIN, "..", "lib"))
TRAIN = os.path.join(ROOT, "examples", "torchtpu", "train.py")
PY = "/usr/bin/python3"



SAN_ENV = sanitizer_env(LIBDIR)
if SAN_ENV and os.environ.get("LD_PRELOAD") != SAN_ENV["LD_PRELOAD"]:
    os.environ.update(SAN_ENV)
    os.execv(sys.executable, [sys.executable] + sys.argv)
os.environ["MANTA_LIB"] = LIBDIR
sys.path.insert(0, PYDIR)
import manta  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None
try:
    import torch
except ImportError:
    torch = None

CLUSTER = {}


def cluster():
    """One head+worker with 4 CPUs, started once for every test."""
    if CLUSTER.get("addr"):
        return CLUSTER["addr"]
    port = free_port()
    d = new_dir("py")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", "4", "--memory", "2GiB"] + FAST)
    CLUSTER.update(addr="127.0.0.1:%d" % port, dir=d)
    wait_until(lambda: os.path.exists(os.path.join(d, "objstore.sock")), 10,
               "the object store socket")
    manta.connect(CLUSTER["addr"],
                  store_socket=os.path.join(d, "objstore.sock"))
    return CLUSTER["addr"]


def reset():
    """harness.main cleans up after each test: start afresh next time."""
    manta.disconnect()
    CLUSTER.clear()


def bridge_env():
    """--env flags putting the bridge (and the sanitizer runtime the
    library may need) into a task's environment."""
    e = ["--env", "PYTHONPATH=" + PYDIR, "--env", "MANTA_LIB=" + LIBDIR]
    for k, v in SAN_ENV.items():
        e += ["--env", "%s=%s" % (k, v)]
    return e


def submit(args, env=(), timeout=120):
    """`manta submit` a command with the bridge on its path."""
    e = bridge_env()
    for kv in env:
        e += ["--env", kv]
    return run(["submit", "--address", cluster()] + e + ["--"] + args,
               timeout=timeout, check=False)


def popen_submit(args, env=()):
    e = bridge_env()
    for kv in env:
        e += ["--env", kv]
    return subprocess.Popen([MANTA, "submit", "--address", cluster()] + e +
                            ["--"] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result_id(stderr):
    m = re.search(r"task (t[0-9a-f]{15}) result: object ([0-9a-f]{40}) "
                  r"\((\d+) bytes\)", stderr)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def skip(what, mod):
    print("SKIP %s: python3 module %s is not importable (install-deps.sh "
          "installs it)" % (what, mod), flush=True)


# ---- objects through the bridge ------------------------------------------

def test_bytes_and_errors():
    cluster()
    ref = manta.put(b"hello manta")
    check(re.fullmatch(r"[0-9a-f]{40}", ref.id), "id %r" % ref.id)
    o = manta.get(ref, timeout=5)
    check(o.bytes() == b"hello manta" and o.size == 11 and
          o.dtype == "uint8", "got %r %s" % (o.bytes(), o.dtype))
    mv = o.memoryview()
    check(mv.readonly and mv.nbytes == 11, "memoryview %r" % mv)
    try:
        t0 = time.monotonic()
        manta.get("ab" * 20)  # no timeout: still fails at once
        check(False, "get of an unknown id did not fail")
    except manta.MantaError as e:
        check(e.name == "MT_ENOENT" and "unknown to the head" in str(e) and
              time.monotonic() - t0 < 5, "unknown id: %s %s" % (e.name, e))
    for bad in ("xyz", "ab" * 21):
        try:
            manta.get(bad, timeout=0)
            check(False, "get of %r did not fail" % bad)
        except manta.MantaError as e:
            check(e.name == "MT_EINVAL" and "40 hex" in str(e), str(e))
    # Ids say their kind: a task id is not an object id, nor a placement
    # group id a task id (issue 13, defect 10).
    for call, bad, want in (
            (manta.get, "t0000000000000ab",
             "t0000000000000ab is a task id, not an object id"),
            (manta.result_ref, "p0000000000000ab",
             "p0000000000000ab is a placement group id, not a task id"),
            (manta.result_ref, "0000000000000ab",
             "'0000000000000ab' is not a task id (t and 15 hex digits)")):
        try:
            call(bad)
            check(False, "%s(%r) did not fail" % (call.__name__, bad))
        except manta.MantaError as e:
            check(e.name == "MT_EINVAL" and str(e) == want, str(e))
    manta.release(ref)
    try:
        manta.release(ref)
        check(False, "a second release did not fail")
    except manta.MantaError as e:
        check(e.name == "MT_ENOENT", "%s %s" % (e.name, e))


def in_store(ref):
    """Whether the node's store still hands ref out to a new get."""
    sock = os.path.join(CLUSTER["dir"], "objstore.sock")
    p = subprocess.run([os.path.join(BIN, "mt_objtool"), "get", sock,
                        str(ref), "0"], capture_output=True, text=True,
                       timeout=30)
    return p.returncode == 0


def churn(ref, like):
    """Release ref, wait until the head's delete has reached the store
    (which no longer hands it out), and fill the store with same-sized
    objects of other bytes: memory freed too early would be
    overwritten."""
    manta.release(ref)
    wait_until(lambda: not in_store(ref), 10,
               "the store deleting the released object")
    fill = bytes([0xA5]) * like.nbytes
    refs = [manta.put(fill) for _ in range(32)]
    manta.release(*refs)


def test_numpy_views():
    if numpy is None:
        return skip("numpy views", "numpy")
    cluster()
    a = numpy.arange(24, dtype=numpy.float64).reshape(2, 3, 4)
    ref = manta.put(a)
    o = manta.get(ref)
    v = o.numpy()
    check(v.dtype == numpy.float64 and v.shape == (2, 3, 4) and
          (v == a).all(), "view %s %s" % (v.dtype, v.shape))
    check(v.ctypes.data == o.address and not v.flags.writeable,
          "not a read-only view on the mapping")
    check(not numpy.shares_memory(v, a), "the view shares the put's array")
    # Non-contiguous input is stored compactly.
    t = numpy.arange(12, dtype=numpy.int32).reshape(3, 4).T
    w = manta.get(manta.put(t)).numpy()
    check(w.shape == (4, 3) and (w == t).all(), "transposed put %r" % w)
    # The mapping outlives the Object (and the object's deletion) while a
    # view is referenced, and goes with the last view.
    addr, pin = o.address, weakref.ref(o._pin)
    del o
    gc.collect()
    churn(ref, a)
    check(pin() is not None, "the pin went while a view lives")
    check(v.ctypes.data == addr and (v == a).all(),
          "the view changed after its Object went")
    del v
    gc.collect()
    check(pin() is None, "the pin outlived every view")


def test_torch_views():
    if torch is None:
        return skip("torch views", "torch")
    cluster()
    x = torch.arange(10, dtype=torch.float32).reshape(2, 5)
    ref = manta.put(x)
    o = manta.get(ref)
    t = o.torch()
    check(t.dtype == torch.float32 and tuple(t.shape) == (2, 5) and
          torch.equal(t, x), "tensor %s %s" % (t.dtype, t.shape))
    check(t.data_ptr() == o.address, "torch view is a copy")
    n = o.numpy() if numpy is not None else None
    check(n is None or n.ctypes.data == t.data_ptr(), "numpy and torch "
          "differ")
    bf = manta.get(manta.put(torch.ones(3, dtype=torch.bfloat16))).torch()
    check(bf.dtype == torch.bfloat16 and bf.sum().item() == 3.0, str(bf))
    try:
        manta.put(torch.ones(4)[::2])
        check(False, "a non-contiguous tensor was accepted")
    except ValueError as e:
        check("contiguous" in str(e), str(e))
    addr, pin = o.address, weakref.ref(o._pin)
    del o, n
    gc.collect()
    churn(ref, x.numpy())
    check(pin() is not None, "the pin went while a tensor lives")
    check(t.data_ptr() == addr and torch.equal(t, x),
          "the tensor changed after its Object went")
    del t
    gc.collect()
    check(pin() is None, "the pin outlived the tensor")


def roundtrip(x):
    """put then get: the Object and its view (numpy or torch, as x)."""
    o = manta.get(manta.put(x))
    return o, (o.torch() if torch is not None and
               isinstance(x, torch.Tensor) else o.numpy())


def test_numpy_dtypes_and_scalars():
    """bool, complex64/128 and float16 keep dtype, shape and values, 0-d
    arrays and numpy scalars come back 0-d (shape ()), a big-endian array
    is stored as its values, and dtypes get could not give back are
    refused at put."""
    if numpy is None:
        return skip("numpy dtypes", "numpy")
    cluster()
    cases = [numpy.array([[True, False, True], [False, False, True]]),
             numpy.array([1 + 2j, -3.5j], dtype=numpy.complex64),
             numpy.arange(6, dtype=numpy.complex128).reshape(3, 2) * 1j,
             numpy.array([0.5, -1.25, 65504], dtype=numpy.float16)]
    cases += [a.reshape(-1)[0].copy().reshape(()) for a in cases]
    cases += [numpy.array(7.25), numpy.float32(2.5), numpy.bool_(True),
              numpy.complex64(1 - 1j), numpy.int64(-3)]
    for a in cases:
        o, v = roundtrip(a)
        want = numpy.asarray(a)
        check(v.dtype == want.dtype and v.shape == want.shape and
              numpy.array_equal(v, want),
              "%s %r came back as %s %r: %r" % (want.dtype, want.shape,
                                                v.dtype, v.shape, v))
        check(o.dtype == str(want.dtype) and o.shape == want.shape,
              "Object says %s %r" % (o.dtype, o.shape))
    be = numpy.array([1.5, -2.0], dtype=">f8")
    o, v = roundtrip(be)
    check(v.dtype == numpy.float64 and v.tolist() == [1.5, -2.0],
          "big-endian put read %s %r" % (v.dtype, v.tolist()))
    for bad in (numpy.array(["x"]), numpy.array([None], dtype=object)):
        try:
            manta.put(bad)
            check(False, "a %s array was stored" % bad.dtype)
        except TypeError as e:
            check("cannot store" in str(e), str(e))


def test_torch_dtypes_and_scalars():
    """float16, bfloat16, bool, complex64/128 and 0-d tensors round-trip
    through torch views; numpy reads the same objects (bfloat16 as its raw
    uint16 bits); a lazily conjugated tensor is stored conjugated."""
    if torch is None:
        return skip("torch dtypes", "torch")
    cluster()
    cases = [torch.tensor([0.5, -1.25], dtype=torch.float16),
             torch.tensor([[1.5, 3.0]], dtype=torch.bfloat16),
             torch.tensor([True, False, True]),
             torch.tensor([1 + 2j, -3j], dtype=torch.complex64),
             torch.tensor([[2 - 1j]], dtype=torch.complex128),
             torch.tensor(3.5), torch.tensor(True),
             torch.tensor(1 + 1j, dtype=torch.complex64),
             torch.tensor(-2, dtype=torch.int64)]
    for x in cases:
        o, t = roundtrip(x)
        check(t.dtype == x.dtype and tuple(t.shape) == tuple(x.shape) and
              torch.equal(t, x), "%s %r came back as %s %r: %r" % (
                  x.dtype, tuple(x.shape), t.dtype, tuple(t.shape), t))
        if numpy is not None and x.dtype != torch.bfloat16:
            n = o.numpy()
            check(n.shape == tuple(x.shape) and
                  numpy.array_equal(n, x.numpy()),
                  "numpy view of %s: %r" % (x.dtype, n))
    raw = manta.get(manta.put(torch.tensor([1.0], dtype=torch.bfloat16)))
    if numpy is not None:
        check(raw.numpy().dtype == numpy.uint16 and
              raw.numpy().tolist() == [0x3f80], "bfloat16 bits %r" %
              raw.numpy())
    _, t = roundtrip(torch.tensor([1 + 2j]).conj())
    check(t.tolist() == [1 - 2j], "conj() stored as %r" % t.tolist())


def test_scalar_and_complex_results():
    """A command task's 0-d complex result keeps dtype and shape ()."""
    if numpy is None:
        return skip("a 0-d result", "numpy")
    cluster()
    code = ("import manta, numpy; "
            "manta.report_result(numpy.array(1.5 - 2j))")
    t = manta.submit([PY, "-c", code],
                     env=dict(SAN_ENV, PYTHONPATH=PYDIR, MANTA_LIB=LIBDIR))
    out = t.wait(60)
    check(out.ok, "task: %r %r" % (out, out.stderr))
    v = t.result(timeout=10).numpy()
    check(v.dtype == numpy.complex128 and v.shape == () and
          v.item() == 1.5 - 2j, "result %s %r %r" % (v.dtype, v.shape, v))
    manta.release(t.result_ref)


def test_library_not_found():
    """A library that cannot be loaded is named in the error; import and
    grant() work without one."""
    code = ("import manta\n"
            "print(manta.grant({'RANK': '1'}).rank)\n"
            "try:\n"
            "    manta.put(b'x')\n"
            "except manta.MantaError as e:\n"
            "    print(e)\n")
    env = dict(os.environ, MANTA_LIB="/nonexistent/libmanta.so",
               PYTHONPATH=PYDIR)
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True,
                       env=env, timeout=30)
    check(p.returncode == 0 and p.stdout.startswith("1\n") and
          "cannot load libmanta.so" in p.stdout and
          "/nonexistent/libmanta.so ($MANTA_LIB): no such file" in p.stdout,
          "%d %r %r" % (p.returncode, p.stdout, p.stderr))


def test_grant():
    g = manta.grant({"CUDA_VISIBLE_DEVICES": "0,2", "RANK": "3",
                     "WORLD_SIZE": "8", "TPU_WORKER_ID": "1",
                     "TPU_VISIBLE_CHIPS": "2", "MANTA_TASK_ID": "00ab",
                     "MASTER_PORT": "1234", "HOME": "/x"})
    check(g.gpus == ["0", "2"] and g.rank == 3 and g.world_size == 8 and
          g.tpu_worker_id == 1 and g.tpu_chips == ["2"] and
          g.master_port == 1234 and g.distributed and
          g.task_id == "00ab" and "HOME" not in g.env, repr(g))
    check(manta.grant({"CUDA_VISIBLE_DEVICES": ""}).gpus == [],
          "empty CUDA_VISIBLE_DEVICES is no GPU")
    # Inside a task: the worker's env.
    p = submit([PY, "-c", "import manta, json; g = manta.grant(); "
                "print(json.dumps([g.task_id, g.node_id, g.head_address]))"])
    check(p.returncode == 0, p.stderr)
    tid, node, head = json.loads(p.stdout)
    check(re.fullmatch(r"t[0-9a-f]{15}", tid) and node and
          head == cluster(), p.stdout)


# ---- command-task results ------------------------------------------------

def test_value_result():
    p = submit(["sh", "-c", "printf 'value\\n42 apples' > "
                "\"$MANTA_RESULT_PATH\"; echo out"])
    check(p.returncode == 0 and p.stdout == "out\n",
          "stdout changed: %d %r %r" % (p.returncode, p.stdout, p.stderr))
    r = result_id(p.stderr)
    check(r and r[2] == 9, "no result line: %r" % p.stderr)
    check(manta.result_ref(r[0]).id == r[1], "result id differs")
    o = manta.task_result(r[0], timeout=5)
    check(o.bytes() == b"42 apples", o.bytes())
    manta.release(r[1])
    # No file: no result, nothing printed.
    p = submit(["true"])
    check(p.returncode == 0 and "result" not in p.stderr, p.stderr)


def test_bad_result_files():
    cases = [("printf 'garbage' > \"$MANTA_RESULT_PATH\"",
              "must start with"),
             ("printf 'object %s' > \"$MANTA_RESULT_PATH\"" % ("12" * 20),
              "must be stored under the task's result id"),
             ("printf 'object nothex' > \"$MANTA_RESULT_PATH\"",
              "40 hex digits"),
             ("head -c 200000 /dev/zero > \"$MANTA_RESULT_PATH\"",
              "put bigger results in the object store"),
             ("printf 'object %s' \"$(/usr/bin/python3 -c 'import manta; "
              "print(manta.result_ref(__import__(\"os\").environ"
              "[\"MANTA_TASK_ID\"]))')\" > \"$MANTA_RESULT_PATH\"",
              "is not in this node's store")]
    for sh, want in cases:
        p = submit(["sh", "-c", sh])
        check(p.returncode == 1 and "task failed: bad result file" in
              p.stderr and want in p.stderr,
              "%s: %d %r" % (sh, p.returncode, p.stderr))
    # A task that exits non-zero has no result, whatever it wrote.
    p = submit(["sh", "-c", "printf 'value\\nx' > \"$MANTA_RESULT_PATH\"; "
                "exit 3"])
    check(p.returncode == 3 and "result" not in p.stderr, p.stderr)
    # The worker is fine afterwards.
    p = submit(["echo", "still here"])
    check(p.returncode == 0 and p.stdout == "still here\n", p.stderr)


def test_report_result_through_bridge():
    if numpy is None:
        return skip("report_result of an array", "numpy")
    cluster()
    code = ("import manta, numpy; "
            "manta.report_result(numpy.arange(6, dtype='int16')"
            ".reshape(3, 2))")
    t = manta.submit([PY, "-c", code],
                     env=dict(SAN_ENV, PYTHONPATH=PYDIR, MANTA_LIB=LIBDIR))
    out = t.wait(60)
    check(out.ok, "task: %r %r" % (out, out.stderr))
    o = t.result(timeout=10)
    v = o.numpy()
    check(v.dtype == numpy.int16 and v.shape == (3, 2) and
          v.tolist() == [[0, 1], [2, 3], [4, 5]], "result %r" % v)
    manta.release(t.result_ref)
    # Outside a task, report_result says why it cannot work.
    try:
        manta.report_result(b"x")
        check(False, "report_result outside a task did not fail")
    except manta.MantaError as e:
        check(e.name == "MT_ESTATE" and "MANTA_RESULT_PATH" in str(e), str(e))


def test_result_on_another_node():
    """A result reported on node 2 (a copy of an object the task put) is
    pulled to this driver's node, tensor description and all."""
    if numpy is None:
        return skip("a result on another node", "numpy")
    addr = cluster()
    d2 = new_dir("py2")
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         d2, "--num-cpus", "1", "--memory", "1GiB", "--labels",
         "where=far"] + FAST[:2])
    code = ("import manta, numpy; "
            "r = manta.put(numpy.full((4, 5), 2.5, dtype='float32')); "
            "manta.report_result(r); manta.release(r); "
            "print(manta.grant().node_id)")
    p = run(["submit", "--address", addr, "--label-selector", "where=far"] +
            bridge_env() + ["--", PY, "-c", code], timeout=60, check=False)
    check(p.returncode == 0, "task: %d %s" % (p.returncode, p.stderr))
    r = result_id(p.stderr)
    check(r and r[2] == 80, "result line: %r" % p.stderr)
    o = manta.task_result(r[0], timeout=10)
    v = o.numpy()
    check(v.dtype == numpy.float32 and v.shape == (4, 5) and
          (v == 2.5).all(), "pulled %s %s" % (v.dtype, v.shape))
    node2 = p.stdout.strip()
    objs = json.loads(run(["list", "objects", "--address", addr, "--format",
                           "json"]).stdout)["objects"]
    rec = [x for x in objs if x.get("object_id") == r[1]]
    check(rec and node2 in json.dumps(rec[0]), "directory: %r" % rec)
    manta.release(r[1])


def raises(fn, code_name):
    """fn() raises MantaError named code_name. RET its message."""
    try:
        fn()
    except manta.MantaError as e:
        check(e.name == code_name, "%s, not %s: %s" % (e.name, code_name, e))
        return str(e)
    raise AssertionError("no %s raised" % code_name)


def test_create_and_seal():
    """manta.create(): a writable numpy view into the store until sealed
    (at the end of a with block); unreadable before, read-only after, and
    read back on another node by a task there; an exception in the block
    aborts; bad shapes, sizes and a second seal fail clearly."""
    if numpy is None:
        return skip("create and seal", "numpy")
    addr = cluster()
    d2 = new_dir("py2")
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         d2, "--num-cpus", "1", "--memory", "1GiB", "--labels",
         "where=far"] + FAST[:2])
    want = numpy.arange(256 * 1024, dtype=numpy.float32).reshape(256, 1024)
    w = manta.create((256, 1024), "float32")
    a = w.numpy()
    check(a.flags.writeable and a.shape == (256, 1024) and
          a.dtype == numpy.float32, "view %s %s" % (a.dtype, a.shape))
    a[:128] = want[:128]
    raises(lambda: manta.get(w.ref, timeout=0), "MT_EAGAIN")
    check(not in_store(w.ref), "an unsealed object was handed out")
    with w as b:
        check(b.ctypes.data == a.ctypes.data, "two views, two buffers")
        b[128:] = want[128:]
    check(w.sealed and not a.flags.writeable and not b.flags.writeable,
          "views still writable after the seal")
    try:
        a[0, 0] = 7
        raise AssertionError("wrote to a sealed object")
    except ValueError:
        pass
    raises(w.seal, "MT_ESTATE")
    try:
        w.numpy()
        raise AssertionError("a view of a sealed object")
    except ValueError as e:
        check("sealed" in str(e), str(e))
    o = manta.get(w.ref)
    check((o.numpy() == want).all() and o.numpy().shape == (256, 1024),
          "read back here")
    code = ("import manta, numpy; o = manta.get(%r); v = o.numpy(); "
            "print(v.dtype, v.shape, float(v.sum()))" % w.ref.id)
    p = run(["submit", "--address", addr, "--label-selector", "where=far"] +
            bridge_env() + ["--", PY, "-c", code], timeout=60, check=False)
    check(p.returncode == 0, "task: %d %s" % (p.returncode, p.stderr))
    check(p.stdout.strip() == "float32 (256, 1024) %s" % float(want.sum()),
          "read on node 2: %r" % p.stdout)
    # The views stay valid (and unchanged) after the object is released.
    ref = w.ref
    del w, b, o
    gc.collect()
    churn(ref, want)
    check((a == want).all(), "a sealed view changed after its release")
    # An exception in the block aborts: the id never becomes readable.
    w2 = manta.create(4096, "uint8")
    try:
        with w2 as c:
            c[:] = 1
            raise KeyError("stop")
    except KeyError:
        pass
    check(not w2.sealed, "sealed despite the exception")
    raises(lambda: manta.get(w2.ref, timeout=0), "MT_ENOENT")
    # Bad use.
    check("0 bytes" in raises(lambda: manta.create((0, 4), "float32"),
                              "MT_EINVAL"), "size 0 message")
    msg = raises(lambda: manta.create(1 << 40, "uint8"), "MT_ETOOBIG")
    check("larger than" in msg, msg)
    try:
        manta.create(8, object)
        raise AssertionError("an object dtype was accepted")
    except TypeError:
        pass


# ---- train.py ------------------------------------------------------------

LINE = re.compile(r"rank (\d+)/(\d+) weights sha256=([0-9a-f]{64}) "
                  r"object=([0-9a-f]{40})")


def gone_with_its_process(oid):
    """A rank's put: its process has exited, so its session ended and the
    head freed what it held."""
    def gone():
        try:
            manta.get(oid, timeout=0)
        except manta.MantaError as e:
            return e.name == "MT_ENOENT"
        return False
    wait_until(gone, 10, "object %s freed with the process that put it" %
               oid)


def put_input():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(96, 6, generator=g)
    y = x @ torch.linspace(-1, 1, 6) + 0.25
    return manta.put(torch.cat([x, y[:, None]], dim=1).contiguous())


def check_weights(task_id, digest):
    """The task's result: a float32 vector (6 weights + bias), finite, with
    the sha256 its rank printed; read zero-copy."""
    o = manta.task_result(task_id, timeout=10)
    t = o.torch()
    check(t.dtype == torch.float32 and tuple(t.shape) == (7,),
          "weights %s %s" % (t.dtype, tuple(t.shape)))
    check(t.data_ptr() == o.address, "not a view")
    check(bool(torch.isfinite(t).all()), "weights not finite: %s" % t)
    got = hashlib.sha256(o.bytes()).hexdigest()
    check(got == digest, "result sha256 %s, rank printed %s" % (got, digest))
    manta.release(manta.result_ref(task_id))


def test_train_one_rank():
    if torch is None:
        return skip("train.py", "torch")
    cluster()
    ref = put_input()
    p = submit([PY, TRAIN, "--input", ref.id])
    check(p.returncode == 0, "train.py: %d\n%s%s" % (p.returncode, p.stdout,
                                                     p.stderr))
    m = LINE.search(p.stdout)
    check(m and m.group(1) == "0" and m.group(2) == "1", p.stdout)
    check("torch_tpu is not importable" in p.stdout and
          "input %s: [96, 7]" % ref.id in p.stdout, p.stdout)
    r = result_id(p.stderr)
    check(r, "no result line: %r" % p.stderr)
    check_weights(r[0], m.group(3))
    gone_with_its_process(m.group(4))
    manta.release(ref)


def test_train_two_ranks():
    if torch is None:
        return skip("train.py with two ranks", "torch")
    cluster()
    ref = put_input()
    port = free_port()
    envdir = new_dir("pyenv")
    procs = [popen_submit([PY, TRAIN, "--input", ref.id, "--env-out",
                           envdir],
                          env=["MASTER_ADDR=127.0.0.1",
                               "MASTER_PORT=%d" % port, "RANK=%d" % r,
                               "WORLD_SIZE=2"]) for r in range(2)]
    outs = []
    for p in procs:
        try:
            so, se = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("train.py ranks did not finish")
        outs.append((p.returncode, so, se))
    lines = []
    for rc, so, se in outs:
        check(rc == 0, "rank failed: %d\n%s%s" % (rc, so, se))
        m = LINE.search(so)
        check(m and m.group(2) == "2", so)
        lines.append(m)
    check(sorted(m.group(1) for m in lines) == ["0", "1"], "ranks %r" %
          [m.group(0) for m in lines])
    check(lines[0].group(3) == lines[1].group(3),
          "ranks ended with different weights:\n%s\n%s" %
          (lines[0].group(0), lines[1].group(0)))
    r0 = [i for i, m in enumerate(lines) if m.group(1) == "0"][0]
    r = result_id(outs[r0][2])
    check(r, "rank 0 reported no result: %r" % outs[r0][2])
    check(result_id(outs[1 - r0][2]) is None, "rank 1 reported a result")
    check_weights(r[0], lines[r0].group(3))
    for m in lines:
        gone_with_its_process(m.group(4))
    for rank in (0, 1):
        with open(os.path.join(envdir, "env-rank%d.json" % rank)) as f:
            env = json.load(f)
        check(env.get("RANK") == str(rank) and env.get("WORLD_SIZE") == "2"
              and env.get("MASTER_PORT") == str(port) and
              re.fullmatch(r"t[0-9a-f]{15}", env.get("MANTA_TASK_ID", "")) and
              env.get("MANTA_RESULT_PATH"), "env-rank%d: %r" % (rank, env))
    manta.release(ref)


def wrap(t):
    def f():
        try:
            t()
        finally:
            reset()
    f.__name__ = t.__name__
    return f


if __name__ == "__main__":
    main([wrap(t) for t in (test_bytes_and_errors, test_numpy_views,
                            test_torch_views, test_numpy_dtypes_and_scalars,
                            test_torch_dtypes_and_scalars,
                            test_scalar_and_complex_results,
                            test_library_not_found,
                            test_grant, test_value_result,
                            test_bad_result_files,
                            test_report_result_through_bridge,
                            test_result_on_another_node,
                            test_create_and_seal,
                            test_train_one_rank, test_train_two_ranks)])
