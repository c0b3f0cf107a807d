#!/usr/bin/python3
"""bench_tasks.py -- end-to-end command-task throughput: a head and two
workers on 127.0.0.1/.2 (4 CPUs each), N tasks of `true` at 0.25 CPU each
(32 may run at once) submitted over gRPC as fast as the head takes them,
then waited for through ListTasks. Prints submits/s and completed tasks/s.

usage: bench/bench_tasks.py [BUILD_DIR] [N]
"""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "..", "tests", "integration"))
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
os.environ["MANTA_BIN_DIR"] = os.path.join(ROOT, "..", BUILD, "bin")

import harness  # noqa: E402
from harness import channel, free_port, new_dir, proto_stubs, run  # noqa: E402

proto_stubs()
import common_pb2 as c  # noqa: E402
import head_service_pb2 as pb  # noqa: E402
import head_service_pb2_grpc as pbg  # noqa: E402


def main():
    port = free_port()
    addr = "127.0.0.1:%d" % port
    a, b = new_dir("bta"), new_dir("btb")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", a, "--num-cpus", "4"])
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         b, "--num-cpus", "4"])
    stub = pbg.HeadServiceStub(channel(addr))  # with the cluster token
    spec = c.TaskSpec(kind=c.TASK_KIND_COMMAND, argv=["true"],
                      resources=[c.ResourceEntry(name="CPU", quantity=2500)])
    t0 = time.monotonic()
    futures = [stub.SubmitTask.future(pb.SubmitTaskRequest(spec=spec),
                                      timeout=60) for _ in range(N)]
    ids = [f.result().task_id for f in futures]
    t_sub = time.monotonic() - t0
    while True:
        r = stub.ListTasks(pb.ListTasksRequest(limit=N), timeout=10)
        done = sum(1 for t in r.tasks if t.state == c.TASK_STATE_FINISHED)
        bad = [t for t in r.tasks if t.state in (c.TASK_STATE_FAILED,
                                                 c.TASK_STATE_CANCELLED)]
        if bad:
            print("failed:", bad[0].error)
            return 1
        if done == N:
            break
        time.sleep(0.05)
    t_all = time.monotonic() - t0
    print("tasks=%d submit=%.0f/s completed=%.0f tasks/s (%.2fs total)" %
          (len(ids), N / t_sub, N / t_all, t_all))
    return 0


try:
    rc = main()
finally:
    harness.cleanup()
sys.exit(rc)
