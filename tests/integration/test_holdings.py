"""test_holdings.py -- the worker's side of a head restart (issue 15): what
a worker holds goes with every RegisterNode, what it could not report
while the head was away goes after the next registration, and leased
tasks go on meanwhile.

A head (no worker) on 127.0.0.1 and one worker on 127.0.0.2 (4 CPUs)
holding a finished command task's result object, 2 long command tasks, a detached actor and a driver's leased
function tasks (lease_driver, 4 tasks of 1.5 s on 2 leases). The head is
killed with SIGKILL:
- the driver's leased tasks all complete while no head runs: the worker
  answers their pushes without the head's acknowledgement (each lease
  then ends idle on the worker);
- a stand-in head (a grpcio server on the same port, decoding what it
  receives) gets a RegisterNode whose held tasks are the 2 command tasks
  and the actor's creation task at their attempts, the pushed tasks with
  their lease, the lease grants, and the result object; the worker logs "registering with N
  held tasks, M objects";
- the reports kept meanwhile reach it only after that registration, each
  pushed task's final state exactly once;
- a StopTask of a task the worker does not know is harmless; one of a
  command task (as a restarted head sends for tasks it does not
  recognise) kills it and reports it ended, and the next registration
  (the stand-in answers a ReportNode known=false) no longer lists it.
"""
import os
import signal
import subprocess
import threading
import time
from concurrent import futures

import grpc

from harness import (BIN, FAST, check, channel, free_port, main, new_dir,
                     proto_stubs, read_pid, run, status, wait_until)

proto_stubs()
import common_pb2 as C  # noqa: E402
import head_service_pb2 as PB  # noqa: E402
import head_service_pb2_grpc as PBG  # noqa: E402
import worker_service_pb2 as WPB  # noqa: E402
import worker_service_pb2_grpc as WPBG  # noqa: E402

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
LEASE_DRIVER = os.path.join(BIN, "lease_driver")
ACTOR_DRIVER = os.path.join(BIN, "actor_driver")
FACTORY = "libexample_counter.so:counter_new"
PUSHED, PUSHED_MS = 4, 1500


class FakeHead:
    """HeadService's membership and reports, recorded in arrival order."""

    def __init__(self, port):
        self.lock = threading.Lock()
        self.calls = []          # ("register", req) / ("tasks", req)
        self.forget = False      # answer the next ReportNode known=false
        h = {
            "RegisterNode": self._unary(self.register, PB.RegisterNodeRequest,
                                        PB.RegisterNodeReply),
            "ReportNode": self._unary(self.report, PB.ReportNodeRequest,
                                      PB.ReportNodeReply),
            "ReportTasks": self._unary(self.tasks, PB.ReportTasksRequest,
                                       PB.ReportTasksReply),
        }
        self.server = grpc.server(futures.ThreadPoolExecutor(4))
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("manta.HeadService", h),))
        check(self.server.add_insecure_port("127.0.0.1:%d" % port) == port,
              "the stand-in head cannot bind port %d" % port)
        self.server.start()

    @staticmethod
    def _unary(fn, req, reply):
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=req.FromString,
            response_serializer=reply.SerializeToString)

    def register(self, req, ctx):
        with self.lock:
            self.calls.append(("register", req))
        return PB.RegisterNodeReply(cluster_id="stand-in",
                                    report_period_ms=200)

    def report(self, req, ctx):
        with self.lock:
            known, self.forget = not self.forget, False
        return PB.ReportNodeReply(known=known)

    def tasks(self, req, ctx):
        with self.lock:
            self.calls.append(("tasks", req))
        return PB.ReportTasksReply()

    def registrations(self):
        with self.lock:
            return [r for k, r in self.calls if k == "register"]

    def updates(self):
        """(index of the call, update) of every ReportTasks update."""
        with self.lock:
            return [(i, u) for i, (k, r) in enumerate(self.calls)
                    if k == "tasks" for u in r.updates]


def start_cluster():
    port = free_port()
    hd, wd = new_dir("hold-head"), new_dir("hold-w")
    run(["start", "--head", "--no-worker", "--port", str(port), "--node-ip",
         "127.0.0.1", "--temp-dir", hd] + FAST)
    addr = "127.0.0.1:%d" % port
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         wd, "--num-cpus", "4", "--memory", "1GiB"] + FAST)
    st = wait_until(lambda: (lambda s: s if [n for n in s["nodes"]
                                             if n["state"] == "ALIVE"]
                             else None)(status(address=addr)), 15,
                    "the worker alive")
    return port, addr, hd, wd, st["nodes"][0]["address"]


def running(stub):
    """{task_id: TaskInfo} of every RUNNING task."""
    r = stub.ListTasks(PB.ListTasksRequest(
        limit=1000, state=C.TASK_STATE_RUNNING))
    return {t.spec.task_id: t for t in r.tasks}


def worker_log(wd):
    with open(os.path.join(wd, "logs", "worker.log"), errors="replace") as f:
        return f.read()


def test_worker_holdings_across_a_head_restart():
    port, addr, hd, wd, waddr = start_cluster()
    stub = PBG.HeadServiceStub(channel(addr))
    # A finished command task's result: an object in the worker's store.
    run(["submit", "--address", addr, "--num-cpus", "0", "--", "sh", "-c",
         'printf "value\\nforty-two" > "$MANTA_RESULT_PATH"'])
    cmds = [run(["submit", "--address", addr, "--no-wait", "--num-cpus",
                 "1", "--", "sleep", "60"]).stdout.strip() for _ in range(2)]
    actor = subprocess.run([ACTOR_DRIVER, addr, LIB_DIR, "create", "-", "1",
                            "0", "0", FACTORY],
                           capture_output=True, text=True, timeout=60)
    out = actor.stdout.split()
    check(actor.returncode == 0 and out[:1] == ["id"],
          "actor create: %s %s" % (actor.stdout, actor.stderr))
    creations = [t for t in stub.ListTasks(PB.ListTasksRequest(
        limit=1000)).tasks if t.spec.kind == C.TASK_KIND_ACTOR_CREATE]
    check(len(creations) == 1, "actor %s: creation tasks %s" %
          (out[1], creations))
    actor_id = creations[0].spec.task_id
    wait_until(lambda: set(cmds) <= set(running(stub)), 15,
               "the command tasks running")
    drv = subprocess.Popen([LEASE_DRIVER, addr, LIB_DIR, "sleep",
                            str(PUSHED), str(PUSHED_MS), "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        before = wait_until(
            lambda: (lambda r: r if len([t for t in r.values()
                                         if t.spec.kind ==
                                         C.TASK_KIND_FUNCTION]) >= 2
                     else None)(running(stub)), 15,
            "two leased tasks running")
        os.kill(read_pid(hd, "head"), signal.SIGKILL)
        # Leased tasks go on: the worker answers their pushes as they end,
        # and the driver, which keeps its granted leases while the head is
        # away, gets every result and returns its leases (or they idle out).
        wait_until(lambda: worker_log(wd).count("ends: lease idle") +
                   worker_log(wd).count("ends: lease returned") >= 2,
                   15, "the leases' tasks answered while the head is down")
        out, err = drv.communicate(timeout=30)
        check(drv.returncode == 0, "the driver's leased tasks with the head "
              "away: %d %s %s" % (drv.returncode, out, err))
    finally:
        if drv.poll() is None:
            drv.kill()
            drv.communicate()

    fake = FakeHead(port)
    try:
        regs = wait_until(fake.registrations, 30, "a RegisterNode")
        req = regs[0]
        check(req.holdings, "holdings not set")
        held = {(h.task_id, h.attempt): h.lease_id for h in req.held_tasks}
        for tid in cmds + [actor_id]:
            att = before[tid].attempt
            check(held.get((tid, att)) == "",
                  "%s attempt %d not held: %s" % (tid, att, held))
        pushed = [k for k, lease in held.items() if lease]
        check(len(pushed) == PUSHED, "pushed tasks held: %s" % held)
        leases = {lease for lease in held.values() if lease}
        check(all((lid, 0) in held or any(k[0] == lid for k in held)
                  for lid in leases), "lease grants held: %s" % held)
        check(len(held) == len(req.held_tasks), "a task held twice")
        check(len(req.held_objects) == 1 and
              len(req.held_objects[0]) == 20,
              "held objects: %s" % list(req.held_objects))
        log = worker_log(wd)
        check("registering with %d held tasks, 1 objects" %
              len(req.held_tasks) in log,
              "the worker's registration line:\n" + log[-2000:])

        # The kept reports, after the registration, each final once.
        first_reg = [i for i, (k, _) in enumerate(fake.calls)
                     if k == "register"][0]

        def finals():
            return [(i, u) for i, u in fake.updates()
                    if u.lease_id and u.state in (C.TASK_STATE_FINISHED,
                                                  C.TASK_STATE_FAILED)]
        wait_until(lambda: len(finals()) >= PUSHED, 15,
                   "the pushed tasks' final reports")
        ids = [u.task_id for _, u in finals()]
        check(sorted(ids) == sorted(k[0] for k in pushed),
              "pushed finals: %s held %s" % (ids, pushed))
        check(all(i > first_reg for i, _ in fake.updates()),
              "a report reached the head before the registration")
        check(all(u.state == C.TASK_STATE_FINISHED for _, u in finals()),
              "a pushed task did not finish")

        # StopTask: unknown is harmless; a command task is killed, reported
        # ended, and not held at the next registration.
        w = WPBG.WorkerServiceStub(channel(waddr))
        r = w.StopTask(WPB.StopTaskRequest(task_id="tnosuchtask", attempt=0,
                                           force=True))
        check(not r.found, "an unknown task found")
        victim = cmds[0]
        r = w.StopTask(WPB.StopTaskRequest(
            task_id=victim, attempt=before[victim].attempt, force=True))
        w.StopTask(WPB.StopTaskRequest(  # again: harmless
            task_id=victim, attempt=before[victim].attempt, force=True))
        check(r.found, "the command task not found")
        wait_until(lambda: [u for _, u in fake.updates()
                            if u.task_id == victim and
                            u.state == C.TASK_STATE_FINISHED], 10,
                   "the stopped task reported ended")
        n = len(fake.registrations())
        fake.forget = True
        regs = wait_until(lambda: (lambda r: r if len(r) > n else None)(
            fake.registrations()), 15, "a second RegisterNode")
        again = {h.task_id for h in regs[-1].held_tasks}
        check(victim not in again and cmds[1] in again and actor_id in again,
              "second registration: %s" % again)
        check(not [h for h in regs[-1].held_tasks if h.lease_id],
              "acknowledged pushed tasks still held")
    finally:
        fake.server.stop(0)


if __name__ == "__main__":
    main([test_worker_holdings_across_a_head_restart])
