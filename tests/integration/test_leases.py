"""test_leases.py -- the direct task path (issue 14, docs/architecture.md
"Leases"): function tasks with value arguments go from their driver
straight to a leased worker, and the head files what ran.

A head+worker on 127.0.0.1 and a worker on 127.0.0.2, 2 CPUs each, driven
by lease_driver (lease_driver.c) through the public SDK:
- 100,000 no-op tasks from 4 drivers: every value right, the head's task
  table holds the last ones FINISHED as leased function tasks of the
  drivers, its finished count covers them all, and afterwards no lease is
  left and every node's available resources are back to its total;
- a driver holding leases on a node that dies: its tasks run elsewhere
  (a task that was running there at its next attempt), nothing fails, and
  the dead node's leases end;
- two drivers competing: the higher priority one is served first; the
  lower one is not starved and finishes after it;
- `manta cancel` of a leased task that runs long reaches it through the
  head.
"""
import os
import signal
import subprocess
import time
import urllib.request

from harness import (BIN, TOKEN, check, channel, free_port, main, new_dir,
                     proto_stubs, read_pid, run, status, wait_until)

DRIVER = os.path.join(BIN, "lease_driver")


def sanitized():
    """A build with ASan/UBSan (make test SANITIZE=1) runs every task
    several times slower: the many-task test then runs a fifth of them."""
    try:
        out = subprocess.run(["ldd", os.path.join(BIN, "manta-head")],
                             capture_output=True, text=True).stdout
    except OSError:
        return False
    return "libasan" in out


MANY = 20000 if sanitized() else 100000
LIBDIR = os.path.abspath(os.path.join(BIN, "..", "lib"))
REPORT = ["--report-period-ms", "200"]


DASH = {}


def start_cluster(node_timeout_ms=10000):
    """RET (address, {ip: temp dir}, {ip: node id}); the head's dashboard
    (for /metrics) is on DASH[address]."""
    port, dport = free_port(), free_port()
    dirs = {"127.0.0.1": new_dir("head"), "127.0.0.2": new_dir("w2")}
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", dirs["127.0.0.1"], "--num-cpus", "2",
         "--dashboard-port", str(dport),
         "--node-timeout-ms", str(node_timeout_ms)] + REPORT)
    DASH["127.0.0.1:%d" % port] = dport
    addr = "127.0.0.1:%d" % port
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         dirs["127.0.0.2"], "--num-cpus", "2"] + REPORT)

    def both_alive():
        st = status(address=addr)
        alive = [n for n in st["nodes"] if n["state"] == "ALIVE"]
        return st if len(alive) == 2 else None
    st = wait_until(both_alive, 10, "two alive nodes")
    return addr, dirs, {n["node_ip"]: n["node_id"] for n in st["nodes"]}


def driver(addr, *args):
    return subprocess.Popen([DRIVER, addr, LIBDIR] + [str(a) for a in args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(p, what, timeout=300):
    out, err = p.communicate(timeout=timeout)
    check(p.returncode == 0, "%s: exit %d\n%s\n%s" % (what, p.returncode,
                                                     out, err[-3000:]))
    return out


def list_tasks(addr, **kw):
    proto_stubs()
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    with channel(addr) as ch:
        return pbg.HeadServiceStub(ch).ListTasks(
            pb.ListTasksRequest(**kw), timeout=10)


def all_free(addr):
    """Every alive node's available resources equal its total."""
    st = status(address=addr)
    for n in st["nodes"]:
        if n["state"] == "ALIVE" and \
                n["resources_available"] != n["resources_total"]:
            return None
    return st


def finished_total(addr):
    """Tasks the head has seen end since it started (its /metrics)."""
    req = urllib.request.Request(
        "http://127.0.0.1:%d/metrics" % DASH[addr],
        headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("manta_tasks_ended_total "):
                return int(line.split()[1])
    return -1


def live_leases(addr):
    import common_pb2 as c
    r = list_tasks(addr, limit=10000)
    return [t for t in r.tasks if t.spec.kind == c.TASK_KIND_LEASE and
            t.state in (c.TASK_STATE_PENDING, c.TASK_STATE_SCHEDULED,
                        c.TASK_STATE_RUNNING)]


def test_many_tasks_four_drivers():
    """100,000 no-op tasks from 4 drivers (20,000 in a sanitizer build);
    the head's records and the nodes' resources are consistent
    afterwards."""
    proto_stubs()
    import common_pb2 as c
    addr, _, ids = start_cluster()
    before = status(address=addr)
    t0 = time.monotonic()
    ps = [driver(addr, "many", MANY // 4) for _ in range(4)]
    for i, p in enumerate(ps):
        out = finish(p, "driver %d" % i)
        check("DONE n=%d" % (MANY // 4) in out and "bad=0" in out, out)
    took = time.monotonic() - t0
    print("  %d tasks from 4 drivers in %.1f s (%.0f/s)" %
          (MANY, took, MANY / took))
    wait_until(lambda: not live_leases(addr), 15, "every lease ended")
    wait_until(lambda: all_free(addr), 15, "available == total everywhere")
    r = list_tasks(addr, limit=10000, state=c.TASK_STATE_FINISHED)
    fns = [t for t in r.tasks if t.spec.kind == c.TASK_KIND_FUNCTION]
    check(len(fns) >= 9000, "only %d finished function tasks listed of %d"
          % (len(fns), r.total))
    ended = finished_total(addr)
    check(ended >= MANY, "the head counted %d ended tasks" % ended)
    check(all(t.spec.function.endswith(":echo") and t.node_id in
              ids.values() and t.result_size == 8 for t in fns[:100]),
          "a leased task's record: %r" % fns[0])
    failed = list_tasks(addr, limit=100, state=c.TASK_STATE_FAILED)
    check(failed.total == 0, "failed tasks: %r" % list(failed.tasks)[:3])
    check(len(before["nodes"]) == len(status(address=addr)["nodes"]),
          "nodes changed")


def test_node_dies_under_leases():
    """kill -9 a worker while a driver's tasks run on leases there: its
    tasks run elsewhere, none fails, and its leases end with the node."""
    addr, dirs, ids = start_cluster(node_timeout_ms=2000)
    w2 = ids["127.0.0.2"]
    p = driver(addr, "retry", 200, 50)
    check(p.stdout.readline().strip() == "SUBMITTED", "driver did not start")
    wait_until(lambda: any(t.node_id == w2 for t in live_leases(addr)), 20,
               "a lease on node 2")
    time.sleep(0.5)
    os.kill(read_pid(dirs["127.0.0.2"], "worker"), signal.SIGKILL)
    out = finish(p, "retry driver")
    check("ok=200 failed=0" in out, out)
    wait_until(lambda: not live_leases(addr), 20, "every lease ended")
    wait_until(lambda: all_free(addr), 20, "available == total")


def test_priorities_compete():
    """Two drivers, 2 CPUs per node, 40 tasks of 100 ms each: the one at
    priority 10 started second still finishes before the one at 0, which
    finishes too."""
    addr, _, _ = start_cluster()
    low = driver(addr, "sleep", 80, 100, 0)
    check(low.stdout.readline().strip() == "START", "low did not start")
    time.sleep(0.3)
    high = driver(addr, "sleep", 40, 100, 10)
    hout = finish(high, "high priority driver")
    lout = finish(low, "low priority driver")
    hend = int([ln for ln in hout.splitlines() if ln.startswith("END 39")][0]
               .split()[2])
    lend = int([ln for ln in lout.splitlines() if ln.startswith("END 79")][0]
               .split()[2])
    print("  high done after %d ms, low after %d ms" % (hend, lend))
    check(hend + 300 < lend, "high (%d ms) did not end before low (%d ms)"
          % (hend, lend))


def test_cancel_through_the_head():
    """A leased task running long is listed RUNNING (its worker reported
    it after 50 ms); `manta cancel` on it reaches its worker through the
    head, and the driver and the list both see it CANCELLED."""
    proto_stubs()
    import common_pb2 as c
    addr, _, _ = start_cluster()
    p = driver(addr, "sleep", 1, 20000, 0)
    check(p.stdout.readline().strip() == "START", "driver did not start")

    def running_fn():
        r = list_tasks(addr, limit=100, state=c.TASK_STATE_RUNNING)
        fns = [t for t in r.tasks if t.spec.kind == c.TASK_KIND_FUNCTION]
        return fns[0] if fns else None
    t = wait_until(running_fn, 10, "the leased task listed RUNNING")
    check(t.spec.function.endswith(":sleep_ms"), "listed %r" % t)
    run(["cancel", "--address", addr, t.spec.task_id])
    out, err = p.communicate(timeout=30)
    check(p.returncode == 1 and "cancelled" in err and "DONE bad=1" in out,
          "driver: %d %r %r" % (p.returncode, out, err))
    r = list_tasks(addr, limit=100, state=c.TASK_STATE_CANCELLED)
    check(any(x.spec.task_id == t.spec.task_id for x in r.tasks),
          "not listed CANCELLED: %r" % list(r.tasks))
    wait_until(lambda: all_free(addr), 15, "available == total")


if __name__ == "__main__":
    main([test_many_tasks_four_drivers, test_node_dies_under_leases,
          test_priorities_compete, test_cancel_through_the_head])
