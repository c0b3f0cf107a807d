"""test_lease_worker.py -- the worker's side of leases with real processes
(docs/architecture.md, "Leases"): a head and a worker with 2 executors;
the test plays the driver over gRPC. It submits a TASK_KIND_LEASE for an
owner, waits until the head has granted it (RUNNING), then calls the
worker's PushTasks directly with functions of libmt_test_fnlib.so.

Checked: results and errors come back in order, with the task's ids in
its environment and its output's last output_limit bytes; the head has
filed every pushed task (FINISHED/FAILED with its result) by the time the
push is answered; a push for another owner or an unknown lease comes
back not_run; StopTask of a running pushed task ends it CANCELLED; an
executor that dies under a task fails it as a system failure; a push with
return_lease ends the lease FINISHED ("returned") and later pushes are
not_run; an unused lease ends idle after 100 ms; a revoked lease (the
head cancels it) lets the running task finish and hands back the rest;
resources are free at the end. Last, it times 4000 no-op tasks in pushes
of 500 (printed, not checked).
"""
import os
import struct
import threading
import time

from harness import (BIN, FAST, channel, check, free_port, main, new_dir,
                     proto_stubs, read_pid, run, status, wait_until)

import grpc  # noqa: E402  (Debian python3-grpcio)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
LIB = "libmt_test_fnlib.so"
OWNER = "driver-session-1"


def stubs():
    proto_stubs()
    import common_pb2
    import head_service_pb2
    import head_service_pb2_grpc
    import worker_service_pb2
    import worker_service_pb2_grpc
    return (common_pb2, head_service_pb2, head_service_pb2_grpc,
            worker_service_pb2, worker_service_pb2_grpc)


C, PB, PBG, W, WG = stubs()
S = C.TaskState
ENDED = (S.TASK_STATE_FINISHED, S.TASK_STATE_FAILED, S.TASK_STATE_CANCELLED)

_next = [0]


def tid():
    """A driver's task id: "t", the driver bit (1 << 59), a counter."""
    _next[0] += 1
    return "t%015x" % ((1 << 59) | (os.getpid() << 20) | _next[0])


def start_cluster():
    port = free_port()
    d = new_dir("lease")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", "2", "--memory", "1GiB"] + FAST)
    addr = "127.0.0.1:%d" % port
    nodes = wait_until(lambda: [n for n in status(address=addr)["nodes"]
                                if n["state"] == "ALIVE"], 10, "a node")
    head = PBG.HeadServiceStub(channel(addr))
    worker = WG.WorkerServiceStub(channel(nodes[0]["address"]))
    return addr, d, head, worker


def task_state(head, t):
    """The head's record of task t (a TaskInfo), or None."""
    reply = head.ListTasks(PB.ListTasksRequest(limit=100000), timeout=5)
    for info in reply.tasks:
        if info.spec.task_id == t:
            return info
    return None


def lease(head, owner=OWNER):
    spec = C.TaskSpec(kind=C.TASK_KIND_LEASE, owner_id=owner,
                      name="lease-test")
    spec.resources.append(C.ResourceEntry(name="CPU", quantity=10000))
    lid = head.SubmitTask(PB.SubmitTaskRequest(spec=spec),
                          timeout=10).task_id
    # Watched, not polled: an unused lease ends after 100 ms.
    for ev in head.WatchTask(PB.WatchTaskRequest(task_id=lid), timeout=10):
        if ev.state == S.TASK_STATE_RUNNING:
            return lid
        check(ev.state not in ENDED, "lease ended: %r" % ev)
    raise AssertionError("lease %s never ran" % lid)


def task(function, args=(), output_limit=64, **kw):
    return W.PushedTask(task_id=tid(), function=LIB + ":" + function,
                        args=list(args), code_path=[LIB_DIR],
                        output_limit=output_limit, **kw)


def push(worker, lid, tasks, owner=OWNER, ret=False, timeout=30):
    return worker.PushTasks(W.PushTasksRequest(
        lease_id=lid, owner_id=owner, tasks=tasks, return_lease=ret),
        timeout=timeout).results


def i64(v):
    return struct.pack("=q", v)


def no_leaks(addr, timeout=10):
    def ok():
        for n in status(address=addr)["nodes"]:
            if n["state"] == "ALIVE" and \
                    n["resources_available"] != n["resources_total"]:
                return None
        return True
    wait_until(ok, timeout, "available == total on every node", 0.2)


def wait_lease_end(d, head, lid, why):
    """The lease ends FINISHED; the worker's log says why (the head keeps
    no error text for FINISHED)."""
    t = wait_until(lambda: (lambda x: x if x and x.state in ENDED else None)(
        task_state(head, lid)), 10, "lease %s ended" % lid)
    check(t.state == S.TASK_STATE_FINISHED, "lease ended %r" % t)
    with open(os.path.join(d, "logs", "worker.log")) as f:
        log = f.read()
    check("lease=%s attempt=0 ends: %s" % (lid, why) in log,
          "worker log: lease %s ended %s" % (lid, why))


# ---- tests -------------------------------------------------------------------


def test_push_results_and_records():
    addr, d, head, worker = start_cluster()
    lid = lease(head)
    ts = [task("add", [i64(40), i64(2)]), task("env", [b"MANTA_TASK_ID"]),
          task("hello", output_limit=6), task("fail"), task("echo", [b"x"])]
    res = push(worker, lid, ts)
    check(len(res) == 5, "%d results" % len(res))
    check(res[0].state == S.TASK_STATE_FINISHED and
          res[0].result == i64(42), "add %r" % res[0])
    check(res[1].result == ts[1].task_id.encode(), "env %r" % res[1])
    check(res[2].out == b"thing\n" and res[2].out_dropped == 13 and
          res[2].err == b"tderr\n", "hello output %r" % res[2])
    check(res[3].state == S.TASK_STATE_FAILED and res[3].error == "boom" and
          not res[3].not_run and not res[3].system_failure, "%r" % res[3])
    check(res[4].result == b"x", "echo %r" % res[4])
    # The head knew every one of them before the answer.
    for t, r in zip(ts, res):
        rec = task_state(head, t.task_id)
        check(rec and rec.state == r.state,
              "record of %s: %r" % (t.task_id, rec))
    rec = task_state(head, ts[0].task_id)
    check(rec.result == i64(42) or rec.result_size == 8, "record %r" % rec)
    # Refusals: another owner, a lease that is not there.
    res = push(worker, lid, [task("echo")], owner="someone-else")
    check(res[0].not_run and "another owner" in res[0].error, "%r" % res[0])
    res = push(worker, "t0000000000dead1", [task("echo")])
    check(res[0].not_run and "not held" in res[0].error, "%r" % res[0])
    # Returned: the lease ends FINISHED, later pushes are not run.
    res = push(worker, lid, [task("echo", [b"last"])], ret=True)
    check(res[0].result == b"last", "%r" % res[0])
    wait_lease_end(d, head, lid, "lease returned by its owner")
    res = push(worker, lid, [task("echo")])
    check(res[0].not_run, "after return %r" % res[0])
    no_leaks(addr)


def test_cancel_crash_idle_revoke():
    addr, d, head, worker = start_cluster()
    lid = lease(head)
    # StopTask of the running task: CANCELLED; the next one runs.
    ts = [task("sleep_ms", [b"20000"]), task("echo", [b"after"])]
    out = {}
    th = threading.Thread(target=lambda: out.setdefault(
        "r", push(worker, lid, ts)))
    th.start()
    time.sleep(0.5)
    stop = worker.StopTask(W.StopTaskRequest(task_id=ts[0].task_id,
                                             attempt=0), timeout=5)
    check(stop.found, "StopTask found")
    th.join(30)
    res = out["r"]
    check(res[0].state == S.TASK_STATE_CANCELLED, "cancel %r" % res[0])
    check(res[1].result == b"after", "next %r" % res[1])
    # An executor that dies fails its task as a system failure.
    res = push(worker, lid, [task("crash", max_retries=2)])
    check(res[0].state == S.TASK_STATE_FAILED and res[0].system_failure,
          "crash %r" % res[0])
    # Idle: nothing pushed for 100 ms ends the lease.
    wait_lease_end(d, head, lid, "lease idle")
    # Revoked: the head cancels the lease; the running task finishes and
    # the queued one comes back not_run.
    lid = lease(head)
    ts = [task("sleep_ms", [b"1500"]), task("echo")]
    th = threading.Thread(target=lambda: out.__setitem__(
        "r", push(worker, lid, ts)))
    th.start()
    time.sleep(0.5)
    head.CancelTask(PB.CancelTaskRequest(task_id=lid), timeout=5)
    th.join(30)
    res = out["r"]
    check(res[0].state == S.TASK_STATE_FINISHED, "running %r" % res[0])
    check(res[1].not_run and "revoked" in res[1].error, "queued %r" % res[1])
    no_leaks(addr)


def cpu_s(pid):
    """User + system CPU seconds of pid."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid):
    out = []
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        if int(st[st.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(p))
    return out


def test_rate():
    addr, d, head, worker = start_cluster()
    wpid = read_pid(d, "worker")
    hpid = read_pid(d, "head")
    procs = [wpid, hpid] + children(wpid)
    lid = lease(head)
    n, batch = 4000, 500
    ts = [[task("echo") for _ in range(batch)] for _ in range(n // batch)]
    before = [cpu_s(p) for p in procs]
    t0 = time.monotonic()
    for b in ts:
        res = push(worker, lid, b)
        check(all(r.state == S.TASK_STATE_FINISHED for r in res), "noop")
    dt = time.monotonic() - t0
    used = [cpu_s(p) - b for p, b in zip(procs, before)]
    print("  %d pushed no-op tasks on one lease in %.2fs: %.0f tasks/s; CPU "
          "per task: worker %.0f us, head %.0f us, executors %.0f us" %
          (n, dt, n / dt, used[0] * 1e6 / n, used[1] * 1e6 / n,
           sum(used[2:]) * 1e6 / n), flush=True)
    push(worker, lid, [], ret=True)
    wait_lease_end(d, head, lid, "lease returned by its owner")
    no_leaks(addr)


if __name__ == "__main__":
    import sys
    only = sys.argv[1:]
    main([t for t in (test_push_results_and_records,
                      test_cancel_crash_idle_revoke, test_rate)
          if not only or t.__name__ in only])
