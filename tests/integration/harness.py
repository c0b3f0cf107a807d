"""harness.py -- helpers for Manta integration tests: real manta-head and
manta-worker processes started through the `manta` CLI on 127.0.0.x with
ephemeral ports and their own temp dirs.

Every Cluster registers its temp dirs; cleanup() (also run at exit and on
SIGTERM) stops them with `manta stop --force` and then kills any pid still
recorded, so a failing test never leaves processes behind.

Auth is on, as by default: the harness makes one cluster token per test
process and exports it as MANTA_AUTH_TOKEN, so `manta start --head` uses
it, joining workers, the manta command and drivers present it, and
channel() gives raw grpcio stubs a channel that sends it. Only
test_security.py looks at what happens without it.

Tests never sleep for a fixed time: they wait for what they need with
wait_until (or wait_output, for a child's output), and show that
something does NOT happen with stays_true, a bounded observation window
polled throughout.
"""
import atexit
import json
import collections
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

BIN = os.environ.get("MANTA_BIN_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin")
MANTA = os.path.join(BIN, "manta")

_dirs = []

TOKEN = secrets.token_hex(32)
os.environ["MANTA_AUTH_TOKEN"] = TOKEN


def channel(addr, options=None, token=None):
    """A grpcio channel to addr whose calls carry the cluster token
    (token, default the harness's) as "authorization: Bearer" metadata;
    over TLS when MANTA_TLS_CA is set (with MANTA_TLS_CERT/_KEY as the
    client certificate), as libmanta does."""
    import grpc

    md = ("authorization", "Bearer " + (token or TOKEN))

    class Details(collections.namedtuple(
            "Details", ("method", "timeout", "metadata", "credentials",
                        "wait_for_ready", "compression")),
            grpc.ClientCallDetails):
        pass

    class Auth(grpc.UnaryUnaryClientInterceptor,
               grpc.UnaryStreamClientInterceptor):
        def _details(self, d):
            return Details(d.method, d.timeout, list(d.metadata or []) + [md],
                           d.credentials, d.wait_for_ready, d.compression)

        def intercept_unary_unary(self, cont, d, req):
            return cont(self._details(d), req)

        def intercept_unary_stream(self, cont, d, req):
            return cont(self._details(d), req)

    ca = os.environ.get("MANTA_TLS_CA")
    if ca:
        def pem(var):
            with open(os.environ[var], "rb") as f:
                return f.read()
        creds = grpc.ssl_channel_credentials(
            pem("MANTA_TLS_CA"), pem("MANTA_TLS_KEY"), pem("MANTA_TLS_CERT"))
        ch = grpc.secure_channel(addr, creds, options=options)
    else:
        ch = grpc.insecure_channel(addr, options=options)
    return grpc.intercept_channel(ch, Auth())


def free_port(host="127.0.0.1"):
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def free_port_block(n):
    """n consecutive ports free on 127.0.0.1 now (for --gang-ports);
    RET (first, last)."""
    for base in range(21000, 40000, 997):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return base, base + n - 1
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free block of %d ports" % n)


def run(args, timeout=30, check=True):
    """Run `manta ARGS`; return CompletedProcess with text output."""
    p = subprocess.run([MANTA] + args, capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("manta %s failed (%d):\n%s%s" % (
            " ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def new_dir(tag):
    d = tempfile.mkdtemp(prefix="manta-it-%s-" % tag)
    _dirs.append(d)
    return d


def read_pid(d, name):
    try:
        with open(os.path.join(d, name + ".pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 0


def pid_alive(pid):
    """Running and not a zombie."""
    if pid <= 0:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


def status(d=None, address=None, timeout=10):
    args = ["status", "--format", "json"]
    args += ["--address", address] if address else ["--temp-dir", d]
    return json.loads(run(args, timeout=timeout).stdout)


def _poll(pred, seconds, done, interval):
    """Call pred every interval s until done(its value) or seconds have
    passed (pred is called at least once, and once more at the end).
    RET (last value, seconds taken). The only sleep the tests wait with."""
    t0 = time.monotonic()
    while True:
        last = pred()
        took = time.monotonic() - t0
        if done(last) or took >= seconds:
            return last, took
        time.sleep(min(interval, max(0.0, seconds - took)))


def wait_until(pred, timeout, what, interval=0.1):
    """Wait for something to happen: poll pred until it returns a true
    value, and RET that value. Fails after timeout s naming what it waited
    for. Tests wait with this (or wait_output), never with a fixed sleep."""
    last, _ = _poll(pred, timeout, bool, interval)
    if not last:
        raise AssertionError("timed out after %.1fs waiting for %s "
                             "(last: %r)" % (timeout, what, last))
    return last


def stays_true(pred, seconds, what, interval=0.1):
    """Show that something does NOT happen: pred must hold for the whole
    observation window of seconds s, polled every interval s; fails at the
    first false value, naming what stopped holding. A bounded window is
    the only way to see an absence (a task that stays PENDING), so its
    length is the test's stated assumption. RET pred's last value."""
    last, took = _poll(pred, seconds, lambda v: not v, interval)
    if not last:
        raise AssertionError("%s stopped holding after %.1fs of %.1fs "
                             "(last: %r)" % (what, took, seconds, last))
    return last


def wait_output(pipe, text, timeout, what):
    """Wait until a child's pipe (a Popen stdout or stderr, not read
    through its file object before) has carried text. Reads the pipe's fd
    directly, so what is read here is not returned by communicate()
    later. RET everything read, decoded."""
    fd, got = pipe.fileno(), [b""]

    def seen():
        if select.select([fd], [], [], 0.1)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError("%s: the pipe closed after %r" %
                                     (what, got[0]))
            got[0] += chunk
        return text.encode() in got[0]
    wait_until(seen, timeout, what, interval=0)
    return got[0].decode(errors="replace")


def cleanup():
    for d in list(_dirs):
        pids = [read_pid(d, n) for n in ("worker", "head")]
        try:
            subprocess.run([MANTA, "stop", "--force", "--temp-dir", d],
                           capture_output=True, timeout=20)
        except Exception:
            pass
        for pid in pids:
            if pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        subprocess.run(["rm", "-rf", d])
        _dirs.remove(d)


atexit.register(cleanup)
signal.signal(signal.SIGTERM, lambda *a: (cleanup(), sys.exit(1)))

FAST = ["--report-period-ms", "200", "--node-timeout-ms", "1500"]

PROTO = os.environ.get("MANTA_PROTO_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "proto")


def proto_stubs():
    """Generate Python gRPC stubs from proto/ (protoc + Debian's
    grpc_python_plugin) into a temp dir and put it on sys.path."""
    out = tempfile.mkdtemp(prefix="manta-pystubs-")
    protos = [p for p in os.listdir(PROTO) if p.endswith(".proto")]
    subprocess.run(["protoc", "-I", PROTO, "--python_out=" + out,
                    "--grpc_out=" + out,
                    "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin"] +
                   protos, check=True)
    sys.path.insert(0, out)


def sanitizer_env(libdir):
    """A libmanta built with ASan (make test SANITIZE=1) loads into python
    only after the ASan runtime: the env that preloads it (python's own
    allocations are not ours to leak-check) for libdir's libmanta.so, or
    {} for a plain build."""
    try:
        ldd = subprocess.run(["ldd", os.path.join(libdir, "libmanta.so")],
                             capture_output=True, text=True).stdout
    except OSError:
        return {}
    libs = [ln.split("=>")[1].split()[0] for ln in ldd.splitlines()
            if "=>" in ln and ("libasan" in ln or "libubsan" in ln)]
    if not libs:
        return {}
    return {"LD_PRELOAD": " ".join(libs),
            "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0"}


def sh(args, env=None, cwd=None, timeout=60):
    """Run a program that must succeed (its output is in the failure).
    RET its stdout."""
    p = subprocess.run(args, capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=timeout)
    check(p.returncode == 0, "%s failed (%d):\n%s%s" % (
        " ".join(args), p.returncode, p.stdout, p.stderr))
    return p.stdout


def cmake_cache(name):
    """The value of variable name in the CMakeCache.txt of BIN's build
    dir, or None."""
    with open(os.path.join(BIN, "..", "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split("=", 1)[1].strip()
    return None


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def main(tests):
    """Run test functions in order; print a closing line CI understands."""
    passed = failed = 0
    for t in tests:
        t0 = time.monotonic()
        try:
            t()
            passed += 1
            print("PASS %s (%.1fs)" % (t.__name__, time.monotonic() - t0),
                  flush=True)
        except Exception as e:  # report and go on with the next test
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e), flush=True)
            if not isinstance(e, AssertionError):  # a bug in the test, or
                traceback.print_exc(file=sys.stdout)  # an unexpected shape
        finally:
            cleanup()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
