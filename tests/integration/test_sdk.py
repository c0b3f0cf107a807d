"""test_sdk.py -- libmanta, the C SDK, against real clusters: the example
programs (examples/c) and the C driver sdk_smoke (tests/integration/
sdk_smoke.c), one subcommand per behaviour.

Covered: the library exports only the public API; fan-out/fan-in and
tensor examples (by address and from the session dir); concurrent submits
from 4 threads on one client; 530 tasks at once (more than the watch
slots); wait any / all with timeouts; cancelling a
running and a pending task; exit codes and captured output (with the
output limit); a missing program ending FAILED with a message;
disconnecting with tasks in flight; an unreachable head at connect and a
head that dies under a followed task and before a submit (errors within
the timeouts); a followed task survives a broken connection to the head
(its watch is reopened); object put/get round trips and a client without a store;
no leaks under valgrind (when installed and not an ASan build). Resources
are all free again afterwards.
"""
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir,
                     read_pid, run, status, wait_until)

SMOKE = os.path.join(BIN, "sdk_smoke")


NODE2 = {}  # the second node of the last start_cluster(): {"dir": ...}


def start_cluster():
    """Head+worker on 127.0.0.1 and a worker on 127.0.0.2, 2 CPUs each.
    RET (address, head temp dir); the second node's dir is NODE2["dir"]."""
    port = free_port()
    d1, d2 = new_dir("sdk1"), new_dir("sdk2")
    NODE2["dir"] = d2
    # A node timeout longer than FAST's: hundreds of task starts on a
    # sanitized worker can delay its reports past 1.5 s.
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d1, "--num-cpus", "2", "--object-store-memory",
         "128MiB", "--report-period-ms", "200", "--node-timeout-ms",
         "5000"])
    addr = "127.0.0.1:%d" % port
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         d2, "--num-cpus", "2", "--object-store-memory", "64MiB"] + FAST[:2])

    def both_alive():
        st = status(address=addr)
        return len([n for n in st["nodes"] if n["state"] == "ALIVE"]) == 2
    wait_until(both_alive, 10, "two alive nodes")
    return addr, d1


def exe(args, timeout=90, env=None, check_rc=True):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                       env=env)
    if check_rc and p.returncode != 0:
        raise AssertionError("%s exited %d:\n%s%s" % (
            " ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def smoke(case, addr, *extra, timeout=90):
    t0 = time.monotonic()
    p = exe([SMOKE, case, addr] + list(extra), timeout=timeout)
    print("  sdk_smoke %s: %.2fs %s" % (case, time.monotonic() - t0,
                                        p.stdout.strip()[:200]))
    return p


def no_leaks(addr, timeout=15):
    def ok():
        st = status(address=addr)
        return all(n["resources_available"] == n["resources_total"]
                   for n in st["nodes"] if n["state"] == "ALIVE")
    wait_until(ok, timeout, "available == total on every node", 0.2)


# ---- tests -------------------------------------------------------------------


def test_exports_only_the_api():
    """libmanta.so exports the MT_EXTERN functions and nothing else."""
    lib = os.path.join(BIN, "..", "lib", "libmanta.so")
    p = exe(["nm", "-D", "--defined-only", lib])
    syms = [l.split()[-1] for l in p.stdout.splitlines() if l.strip()]
    check("mt_client_connect" in syms and "mt_submit_command" in syms and
          "mt_get" in syms, "public functions missing: %r" % syms)
    bad = [s for s in syms if not s.startswith("mt_") or
           s.startswith("mt__") or s.startswith(("mt_objc_", "mt_rpc_",
                                                  "mt_store_", "mt_x"))]
    check(not bad, "internal symbols exported: %r" % bad[:20])
    print("  %d symbols exported" % len(syms))


def test_examples():
    addr, d1 = start_cluster()
    p = exe([os.path.join(BIN, "example_tasks"), addr])
    check("sum of squares 1..8 = 204" in p.stdout, p.stdout)
    p = exe([os.path.join(BIN, "example_objects"), addr])
    check("values match" in p.stdout, p.stdout)
    p = exe([os.path.join(BIN, "example_functions"), addr])
    check("sum of squares 1..8 = 204 (function tasks)" in p.stdout, p.stdout)
    p = exe([os.path.join(BIN, "example_actor_counter"), addr])
    check("counted 1..10 in call order" in p.stdout, p.stdout)
    # From the session dir: head.addr and objstore.sock found there.
    env = dict(os.environ, MANTA_TEMP_DIR=d1)
    p = exe([os.path.join(BIN, "example_objects")], env=env)
    check("values match" in p.stdout, p.stdout)
    no_leaks(addr)


def test_tasks_api():
    addr, _ = start_cluster()
    smoke("resources", addr, "4")
    smoke("concurrent", addr)
    smoke("many", addr, timeout=150)
    smoke("wait", addr)
    smoke("output", addr)
    p = smoke("missing", addr)
    check("/no/such/program" in p.stdout, p.stdout)
    no_leaks(addr)


def test_objects_api():
    addr, _ = start_cluster()
    smoke("objects", addr)
    smoke("nostore", addr)


def test_create_seal_zero_copy():
    """mt_create/mt_seal from C: bad use fails clearly, an unsealed object
    is unreadable, an aborted one vanishes; the sealed object is read back
    on the other node while its creator's session holds it."""
    addr, _ = start_cluster()
    p = subprocess.Popen([SMOKE, "create", addr], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        out = []
        while True:
            line = p.stdout.readline()
            if not line:
                raise AssertionError("sdk_smoke create ended early: %s" %
                                     p.stderr.read())
            out.append(line)
            if line.startswith("sealed "):
                break
        hexid = line.split()[1]
        print("  " + "".join(out).strip().replace("\n", "\n  "))
        # The seal's registration reaches the head within MT__REL_DELAY_MS
        # (20 ms, batched: sdk/object.c); a reader on another node that
        # asks before then is told the object is unknown.
        wait_until(lambda: hexid in subprocess.run(
            [MANTA, "list", "objects", "--address", addr],
            capture_output=True, text=True, timeout=10).stdout, 10,
            "the head to know the sealed object")
        r = smoke("readback", addr, hexid, os.path.join(NODE2["dir"],
                                                     "objstore.sock"))
        check("read back 4194304 bytes" in r.stdout, r.stdout)
        rest, err = p.communicate("go\n", timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == 0, "create exited %d:\n%s" % (p.returncode, err))


def test_placement_groups():
    addr, _ = start_cluster()
    p = exe([os.path.join(BIN, "sdk_pg"), addr, "2"])
    print("  " + p.stdout.strip().replace("\n", "\n  "))
    no_leaks(addr)


def test_disconnect_with_tasks_in_flight():
    addr, _ = start_cluster()
    smoke("inflight", addr)


class Proxy:
    """A TCP proxy to the head whose connections the test can cut, and
    which keeps what the head sent, for seen()."""

    def __init__(self, target_port):
        self.target = target_port
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        self.conns = []
        self.from_head = b""
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def seen(self, data):
        """Whether the head has sent data (as raw bytes) to the client."""
        with self.lock:
            return data in self.from_head

    def _keep(self, data):
        with self.lock:
            self.from_head += data

    def _accept(self):
        while True:
            try:
                a, _ = self.lsock.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.conns += [a, b]
            for x, y, keep in ((a, b, None), (b, a, self._keep)):
                threading.Thread(target=self._pipe, args=(x, y, keep),
                                 daemon=True).start()

    @staticmethod
    def _pipe(src, dst, keep):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if keep:
                    keep(data)
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        """Reset every connection made so far; new ones still work."""
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes the pipe threads
                s.close()
            except OSError:
                pass

    def close(self):
        self.lsock.close()
        self.cut()


def test_watch_survives_a_broken_connection():
    addr, _ = start_cluster()
    proxy = Proxy(int(addr.rsplit(":", 1)[1]))
    p = subprocess.Popen([SMOKE, "rewatch", "127.0.0.1:%d" % proxy.port],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        check(line.strip() == "submitted", "sdk_smoke said %r" % line)
        # Cut once the task runs and is watched: its first output line
        # has come down the watch stream (gRPC does not compress it).
        wait_until(lambda: proxy.seen(b"start\n"), 20,
                   "the task's output on the watch stream")
        proxy.cut()
        out, err = p.communicate("go\n", timeout=40)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        proxy.close()
    check(p.returncode == 0, "rewatch exited %d:\n%s%s" % (
        p.returncode, out, err))
    print("  " + out.strip().splitlines()[-1])


def asan_build():
    p = subprocess.run(["nm", SMOKE], capture_output=True, text=True)
    return "__asan_init" in p.stdout


def test_valgrind_clean():
    """Without ASan: no leaks or errors under valgrind after disconnect."""
    vg = shutil.which("valgrind")
    if not vg or asan_build():
        print("  skipped (%s)" % ("ASan build" if vg else "no valgrind"))
        return
    addr, _ = start_cluster()
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "valgrind.supp")
    # Definite leaks only: gRPC finishes tearing down a cancelled
    # connection on its own threads after grpc_shutdown() returns, so a
    # driver that exits right after disconnecting can leave "possibly
    # lost" blocks (event engine threads, transport buffers) that belong
    # to gRPC, not to libmanta.
    base = [vg, "-q", "--leak-check=full", "--error-exitcode=9",
            "--errors-for-leak-kinds=definite",
            "--suppressions=" + supp]
    exe(base + [SMOKE, "inflight", addr], timeout=120)
    exe(base + [SMOKE, "objects", addr], timeout=120)
    exe(base + [os.path.join(BIN, "example_tasks"), addr], timeout=120)
    exe(base + [os.path.join(BIN, "example_actor_counter"), addr],
        timeout=120)


def test_head_unreachable():
    smoke("unreachable", "127.0.0.1:%d" % free_port())


def test_head_dies_before_submit():
    addr, d1 = start_cluster()
    # The SDK waits MANTA_HEAD_RECONNECT_TIMEOUT for a head that went away
    # (test_reconnect.py); 1 s here, so the waits fail within the test's.
    p = subprocess.Popen([SMOKE, "headdies", addr], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ,
                                             MANTA_HEAD_RECONNECT_TIMEOUT="1"))
    try:
        line = p.stdout.readline()
        check(line.strip() == "connected", "sdk_smoke said %r" % line)
        pid = read_pid(d1, "head")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not os.path.exists("/proc/%d/status" % pid) or
                   "zombie" in open("/proc/%d/status" % pid).read(), 5,
                   "head gone")
        out, err = p.communicate("go\n", timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == 0, "headdies exited %d:\n%s%s" % (
        p.returncode, out, err))
    for line in out.strip().splitlines()[-2:]:
        print("  " + line)


if __name__ == "__main__":
    main([test_exports_only_the_api, test_examples, test_tasks_api,
          test_placement_groups,
          test_objects_api, test_create_seal_zero_copy,
          test_disconnect_with_tasks_in_flight,
          test_watch_survives_a_broken_connection, test_valgrind_clean,
          test_head_unreachable,
          test_head_dies_before_submit])
