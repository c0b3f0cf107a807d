"""test_objects.py -- each worker hosts an object store; objects move between
nodes over the workers' PullObject gRPC stream.

A 1 GiB object put on the worker at 127.0.0.1 is fetched by the worker at
127.0.0.2 and arrives intact (same checksum). Fetching an unknown object,
or from a holder that dies mid-pull, fails cleanly and leaves no half
object behind; the store keeps serving.
"""
import os
import signal
import subprocess
import threading

from harness import (BIN, FAST, check, free_port, main, new_dir, read_pid,
                     run, status, wait_until)

TOOL = os.path.join(BIN, "mt_objtool")


def tool(*args, check_rc=True, timeout=180):
    p = subprocess.run([TOOL] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    if check_rc and p.returncode != 0:
        raise AssertionError("mt_objtool %s: %s" % (" ".join(args), p.stderr))
    return p


def store_used(sock):
    """Bytes in use in the store at sock (objects being written count)."""
    return int(tool("stats", sock).stdout.split()[1])


def addr_of(d):
    with open(os.path.join(d, "worker.addr")) as f:
        return f.read().strip()


def two_nodes(store="1200MiB"):
    port = free_port()
    a, b = new_dir("obja"), new_dir("objb")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", a, "--object-store-memory", store] + FAST)
    run(["start", "--address", "127.0.0.1:%d" % port, "--node-ip",
         "127.0.0.2", "--temp-dir", b, "--object-store-memory", store,
         "--report-period-ms", "200"])
    return a, b


def test_store_resource_in_status():
    a, b = two_nodes("64MiB")
    st = status(a)
    for n in st["nodes"]:
        check(n["resources_total"].get("object_store_memory") == 64 << 20,
              "object_store_memory %r" % n["resources_total"])


def test_one_gib_pull_arrives_intact():
    a, b = two_nodes()
    sock_a = os.path.join(a, "objstore.sock")
    sock_b = os.path.join(b, "objstore.sock")
    oid, csum = tool("put", sock_a, "1GiB", "42").stdout.split()
    out = tool("fetch", addr_of(b), oid, addr_of(a)).stdout.split()
    check(out[0] == str(1 << 30), "fetched size %s" % out[0])
    print("  1 GiB pulled in %.2fs (%s GB/s)" % (int(out[1]) / 1e6, out[2]))
    size, csum_b = tool("get", sock_b, oid).stdout.split()
    check(size == str(1 << 30) and csum_b == csum,
          "content differs: %s %s vs %s" % (size, csum_b, csum))
    # A second fetch finds it local.
    out = tool("fetch", addr_of(b), oid, addr_of(a)).stdout
    check("already-local" in out, out)


def test_failed_pulls_leave_nothing():
    a, b = two_nodes("512MiB")
    sock_a = os.path.join(a, "objstore.sock")
    sock_b = os.path.join(b, "objstore.sock")
    missing = "ab" * 20
    p = tool("fetch", addr_of(b), missing, addr_of(a), check_rc=False)
    check(p.returncode == 1 and "no such object" in p.stderr, p.stderr)
    p = tool("get", sock_b, missing, check_rc=False)
    check(p.returncode == 1, "missing object present on b")
    # A holder that is not there.
    p = tool("fetch", addr_of(b), missing, "127.0.0.1:%d" % free_port(),
             check_rc=False)
    check(p.returncode == 1, "fetch from nowhere succeeded")
    # Bad requests.
    p = tool("fetch", addr_of(b), "zz", addr_of(a), check_rc=False)
    check(p.returncode == 2, "bad id accepted")
    # The holder dies in the middle of a pull: no half object on b.
    oid, csum = tool("put", sock_a, "400MiB", "9").stdout.split()
    holder = read_pid(a, "worker")
    result = {}

    def fetch():
        result["p"] = tool("fetch", addr_of(b), oid, addr_of(a),
                           check_rc=False)
    t = threading.Thread(target=fetch)
    t.start()
    # Kill the holder once the pull is under way: b's store holds the
    # object it is writing into (empty before). A pull that already ended
    # is still accepted below.
    wait_until(lambda: store_used(sock_b) > 0 or not t.is_alive(), 30,
               "the pull under way (its object created on b)", 0.01)
    os.kill(holder, signal.SIGKILL)
    t.join(60)
    p = result["p"]
    if p.returncode == 0:
        print("  (the pull finished before the holder died)")
        size, c2 = tool("get", sock_b, oid).stdout.split()
        check(c2 == csum, "completed pull has wrong content")
    else:
        p2 = tool("get", sock_b, oid, check_rc=False)
        check(p2.returncode == 1, "half object visible on b after a failed pull")
    # b's store still serves.
    oid2, csum2 = tool("put", sock_b, "1MiB", "3").stdout.split()
    check(tool("get", sock_b, oid2).stdout.split()[1] == csum2, "b store broken")


if __name__ == "__main__":
    main([test_store_resource_in_status, test_one_gib_pull_arrives_intact,
          test_failed_pulls_leave_nothing])
