"""test_pulls.py -- object pulls between workers (issue 14: chunks parsed
where gRPC received them and copied once into the unsealed object; the
holder sends from its store mapping uncopied).

A 1 GiB result made on node 1 (127.0.0.1) and consumed by a task on node 2
(127.0.0.2) arrives intact (checksum) and the driver reads it back. A
holder that dies mid-stream (fake_holder.py, killed with SIGKILL after two
chunks, while the half object is in the puller's store) fails the fetch
with "pull from <holder> failed" and leaves no object behind; the same
object then pulls fine from a real holder. Holders that lie (a stream that
ends early, chunks at misaligned offsets or past the end, a chunk longer
than the chunk size, bytes that are no ObjectChunk, an object larger than
the store) or stall (until the fetch's deadline) each fail the fetch with
a clear reason, leave the puller's store empty and its worker running.
"""
import json
import os
import signal
import subprocess

from harness import (BIN, FAST, check, free_port, main, new_dir, pid_alive,
                     read_pid, run, wait_output, wait_until)

TOOL = os.path.join(BIN, "mt_objtool")
DRIVER = os.path.join(BIN, "refs_driver")
LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "fake_holder.py")


def list_nodes(addr):
    p = run(["list", "nodes", "--address", addr, "--format", "json"])
    return [n for n in json.loads(p.stdout)["nodes"]
            if n["state"] == "ALIVE"]


def two_nodes(store):
    port = free_port()
    a, b = new_dir("pulla"), new_dir("pullb")
    addr = "127.0.0.1:%d" % port
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", a, "--num-cpus", "2", "--labels", "zone=a",
         "--object-store-memory", store] + FAST)
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         b, "--num-cpus", "2", "--labels", "zone=b", "--object-store-memory",
         store, "--report-period-ms", "200"])
    wait_until(lambda: len(list_nodes(addr)) == 2, 10, "two alive nodes")
    return addr, a, b


def worker_addr(d):
    with open(os.path.join(d, "worker.addr")) as f:
        return f.read().strip()


def tool(*args, timeout=60):
    return subprocess.run([TOOL] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def store_objects(d):
    """Objects in d's store, unsealed ones (a pull in progress) included."""
    p = tool("stats", os.path.join(d, "objstore.sock"), timeout=10)
    check(p.returncode == 0, p.stderr)
    return int(p.stdout.split()[0])


def fake_holder(mode):
    p = subprocess.Popen(["/usr/bin/python3", FAKE, "127.0.0.3", mode],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = wait_output(p.stdout, "READY", 20, "fake holder %s" % mode)
    return p, "127.0.0.3:%s" % out.split("READY")[1].split()[0]


def stop(p):
    if p.poll() is None:
        p.kill()
    p.communicate()


def test_1gib_between_nodes():
    addr, a, b = two_nodes("1300MiB")
    p = subprocess.run([DRIVER, addr, LIB_DIR, "big1g"], capture_output=True,
                       text=True, timeout=280)
    print("  " + p.stdout.strip().replace("\n", "\n  "))
    check(p.returncode == 0, "refs_driver big1g: exit %d: %s" %
          (p.returncode, p.stderr))
    check("big ok: 1024 MiB" in p.stdout and "big get ok" in p.stdout,
          p.stdout)
    wait_until(lambda: store_objects(a) == 0 and store_objects(b) == 0, 20,
               "both stores empty once the driver is gone")


def test_holder_dies_mid_stream():
    addr, a, b = two_nodes("256MiB")
    put = tool("put", os.path.join(a, "objstore.sock"), "32MiB", "5")
    check(put.returncode == 0, put.stderr)
    oid, want = put.stdout.split()
    holder, faddr = fake_holder("die")
    try:
        fetch = subprocess.Popen([TOOL, "fetch", worker_addr(b), oid, faddr],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        wait_output(holder.stdout, "SENT", 30, "two chunks sent")
        wait_until(lambda: store_objects(b) == 1, 10,
                   "the half object in the puller's store")
        os.kill(holder.pid, signal.SIGKILL)
        out, err = fetch.communicate(timeout=60)
    finally:
        stop(holder)
    print("  fetch from a dying holder: " + err.strip())
    check(fetch.returncode != 0 and ("pull from %s failed" % faddr) in err,
          "rc %d: %s%s" % (fetch.returncode, out, err))
    wait_until(lambda: store_objects(b) == 0, 10, "no half object left")
    # Another holder has it: the pull goes through, intact.
    p = tool("fetch", worker_addr(b), oid, worker_addr(a))
    check(p.returncode == 0, p.stderr)
    got = tool("get", os.path.join(b, "objstore.sock"), oid)
    check(got.returncode == 0 and got.stdout.split() == ["33554432", want],
          "got %r want %s" % (got.stdout, want))


LIES = [
    ("short", "before the last chunk"),
    ("offset", "bad chunk offset or length"),
    ("beyond", "bad chunk offset or length"),
    ("long", "bad chunk offset or length"),
    ("garbage", "malformed chunk from the holder"),
    ("huge", "larger than the capacity"),
    ("stall", "deadline"),
]


def test_lying_holders():
    addr, a, b = two_nodes("256MiB")
    oid = "00" * 20
    for mode, why in LIES:
        holder, faddr = fake_holder(mode)
        try:
            p = tool("fetch", worker_addr(b), oid, faddr,
                     "3000" if mode == "stall" else "30000")
        finally:
            stop(holder)
        print("  %s: %s" % (mode, p.stderr.strip()))
        check(p.returncode != 0, "%s: the fetch succeeded" % mode)
        check(("pull from %s failed" % faddr) in p.stderr and
              why in p.stderr.lower(), "%s: %s" % (mode, p.stderr))
        wait_until(lambda: store_objects(b) == 0, 10,
                   "%s: the puller's store empty" % mode)
    check(pid_alive(read_pid(b, "worker")), "the puller's worker died")


if __name__ == "__main__":
    main([test_1gib_between_nodes, test_holder_dies_mid_stream,
          test_lying_holders])
