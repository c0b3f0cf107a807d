"""test_node_loss.py -- what happens to work when a node dies (issue 13).

A head+worker on 127.0.0.1 and a worker on 127.0.0.2, 2 CPUs each:
- tasks submitted while a killed worker is not yet declared dead are not
  burned on it: the failed hand-over suspects the node at once, is not an
  attempt of the task, and everything runs on the live node (defect 1);
- soft node affinity prefers its node and falls back when the node is
  gone, before or after the task started; hard affinity to a dead node
  fails with a clear error (defect 3).
"""
import os
import signal
import subprocess
import time

from harness import (MANTA, check, channel, free_port, main, new_dir,
                     proto_stubs, read_pid, run, status, wait_until)

REPORT = ["--report-period-ms", "200"]


def start_cluster(node_timeout_ms):
    """RET (address, {ip: temp dir}, {ip: node id})."""
    port = free_port()
    dirs = {"127.0.0.1": new_dir("head"), "127.0.0.2": new_dir("w2")}
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", dirs["127.0.0.1"], "--num-cpus", "2",
         "--node-timeout-ms", str(node_timeout_ms)] + REPORT)
    addr = "127.0.0.1:%d" % port
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         dirs["127.0.0.2"], "--num-cpus", "2"] + REPORT)

    def both_alive():
        st = status(address=addr)
        alive = [n for n in st["nodes"] if n["state"] == "ALIVE"]
        return st if len(alive) == 2 else None
    st = wait_until(both_alive, 10, "two alive nodes")
    return addr, dirs, {n["node_ip"]: n["node_id"] for n in st["nodes"]}


def kill_worker(dirs, ip):
    pid = read_pid(dirs[ip], "worker")
    check(pid > 0, "no worker pid for %s" % ip)
    os.kill(pid, signal.SIGKILL)


def node_state(addr, node_id):
    for n in status(address=addr)["nodes"]:
        if n["node_id"] == node_id:
            return n["state"]
    return None


def head_log(d):
    logs = os.path.join(d, "logs")
    with open(os.path.join(logs, "head.log"), errors="replace") as f:
        return f.read()


def test_undeclared_dead_node_burns_no_retries():
    """kill -9 one worker, submit 200 tasks at +0.5 s, +1.5 s and +2.5 s,
    before the head declares the node dead (the issue's run had 3 s; 6 s
    here, so a slow sanitizer build still submits every batch first): all
    600 finish, none at a later attempt, and the head tried the dead node
    only briefly."""
    proto_stubs()
    import common_pb2 as c
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    addr, dirs, ids = start_cluster(6000)
    dead = ids["127.0.0.2"]
    t0 = time.monotonic()
    kill_worker(dirs, "127.0.0.2")
    spec = c.TaskSpec(kind=c.TASK_KIND_COMMAND, argv=["true"],
                      resources=[c.ResourceEntry(name="CPU", quantity=2500)])
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        for at in (0.5, 1.5, 2.5):
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            for _ in range(200):
                stub.SubmitTask(pb.SubmitTaskRequest(spec=spec), timeout=5)
        check(node_state(addr, dead) == "ALIVE",
              "the node was declared dead before the last batch")

        def all_done():
            r = stub.ListTasks(pb.ListTasksRequest(limit=1000), timeout=5)
            ends = (c.TASK_STATE_FINISHED, c.TASK_STATE_FAILED,
                    c.TASK_STATE_CANCELLED)
            done = [t for t in r.tasks if t.state in ends]
            return r.tasks if r.total == 600 and len(done) == 600 else None
        got = wait_until(all_done, 120, "600 tasks ended", 0.5)
    failed = [t for t in got if t.state != c.TASK_STATE_FINISHED]
    check(not failed, "%d of 600 did not finish, e.g. %r" % (
        len(failed), failed[0].error if failed else ""))
    retried = [t for t in got if t.attempt != 0]
    check(not retried, "%d tasks used a retry (attempt %d)" % (
        len(retried), retried[0].attempt if retried else 0))
    log = head_log(dirs["127.0.0.1"])
    check("node %s suspected" % dead in log, "no suspicion logged")
    check(log.count("RunTasks on node") == 0,
          "hand-overs counted as worker deaths:\n%s" % log[-2000:])


def submit(addr, args, timeout=60):
    return run(["submit", "--address", addr] + args, timeout=timeout,
               check=False)


def test_soft_affinity_falls_back():
    """Soft affinity runs on its node while it lives, moves to the other
    node when it dies mid-task, and a soft submit naming the dead (or an
    unknown) node runs anyway; hard affinity to the dead node fails."""
    addr, dirs, ids = start_cluster(1500)
    w2 = ids["127.0.0.2"]
    where = ["--", "sh", "-c", "echo $MANTA_NODE_ID"]
    p = submit(addr, ["--node-affinity", w2 + ":soft"] + where)
    check(p.returncode == 0 and p.stdout.strip() == w2,
          "soft affinity to a live node: %d %r %r" % (p.returncode, p.stdout,
                                                      p.stderr))
    p = submit(addr, ["--node-affinity", ids["127.0.0.1"]] + where)
    check(p.returncode == 0 and p.stdout.strip() == ids["127.0.0.1"],
          "hard affinity: %r %r" % (p.stdout, p.stderr))
    # The preferred node dies while the task runs there: a retry elsewhere.
    marks = new_dir("marks")
    args = ["--node-affinity", w2 + ":soft", "--max-retries", "1", "--",
            "sh", "-c", "touch %s/$MANTA_NODE_ID; sleep 2; "
            "echo $MANTA_NODE_ID" % marks]
    proc = subprocess.Popen([MANTA, "submit", "--address", addr] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_until(lambda: os.path.exists(os.path.join(marks, w2)), 15,
               "task started on its preferred node")
    kill_worker(dirs, "127.0.0.2")
    out, err = proc.communicate(timeout=60)
    check(proc.returncode == 0 and out.strip() == ids["127.0.0.1"],
          "soft task after its node died: %d %r %r" % (proc.returncode, out,
                                                       err))
    wait_until(lambda: node_state(addr, w2) == "DEAD", 10, "node 2 dead")
    for node in (w2, "00ff00ff00ff00ff"):
        p = submit(addr, ["--node-affinity", node + ":soft"] + where)
        check(p.returncode == 0 and p.stdout.strip() == ids["127.0.0.1"],
              "soft affinity to %s: %d %r %r" % (node, p.returncode,
                                                 p.stdout, p.stderr))
    p = submit(addr, ["--node-affinity", w2] + where)
    check(p.returncode != 0 and "not a live node" in p.stderr,
          "hard affinity to a dead node: %d %r" % (p.returncode, p.stderr))
    for bad in ("", ":soft", w2 + ":hard"):
        p = submit(addr, ["--node-affinity", bad] + where)
        check(p.returncode == 2 and "--node-affinity" in p.stderr,
              "--node-affinity %r: %d %r" % (bad, p.returncode, p.stderr))


if __name__ == "__main__":
    main([test_undeclared_dead_node_burns_no_retries,
          test_soft_affinity_falls_back])
