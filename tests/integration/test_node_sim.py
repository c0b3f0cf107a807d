"""test_node_sim.py -- the node simulator (bench/node_sim.c) against a real
head: 50 fake nodes register with their own secrets under the cluster
token and stay ALIVE on their periodic reports, tasks placed on them
finish (each on the node the head named), leases granted on them take
pushes, and they leave: DEAD at once when the simulator is stopped, DEAD
after the node timeout when it is killed.
"""
import os
import signal
import subprocess

from harness import (BIN, FAST, channel, check, free_port, main, new_dir,
                     proto_stubs, run, status, stays_true, wait_output,
                     wait_until)

SIM = os.path.join(BIN, "manta-node-sim")
N = 50


def start_head():
    port = free_port()
    addr = "127.0.0.1:%d" % port
    run(["start", "--head", "--no-worker", "--port", str(port),
         "--node-ip", "127.0.0.1", "--temp-dir", new_dir("sim-head")] + FAST)
    return addr


def start_sim(addr, prefix, n=N):
    p = subprocess.Popen([SIM, "--address", addr, "--nodes", str(n),
                          "--id-prefix", prefix, "--node-ip", "127.0.0.5"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_output(p.stdout, "%d nodes registered" % n, 30,
                "the simulator's registrations")
    return p


def nodes(addr, prefix, state):
    return [n for n in status(address=addr)["nodes"]
            if n["node_id"].startswith(prefix + "-") and n["state"] == state]


def test_nodes_alive_tasks_finish_and_stop_makes_dead():
    proto_stubs()
    import common_pb2 as c
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    addr = start_head()
    sim = start_sim(addr, "simt")
    try:
        alive = nodes(addr, "simt", "ALIVE")
        check(len(alive) == N, "%d of %d nodes ALIVE" % (len(alive), N))
        check(all(n["address"] == alive[0]["address"] and
                  n["address"].startswith("127.0.0.5:") for n in alive),
              "nodes do not share the simulator's address: %r" %
              sorted({n["address"] for n in alive}))
        # Reports keep them alive past the node timeout (1.5 s).
        stays_true(lambda: len(nodes(addr, "simt", "ALIVE")) == N, 3.0,
                   "all simulated nodes ALIVE", interval=0.5)
        for node in ("simt-00007", "simt-00042"):
            p = run(["submit", "--address", addr, "--node-affinity", node,
                     "--", "true"])
            check(p.returncode == 0, "task on %s: %r" % (node, p))
        stub = pbg.HeadServiceStub(channel(addr))
        spec = c.TaskSpec(kind=c.TASK_KIND_COMMAND, argv=["true"],
                          resources=[c.ResourceEntry(name="CPU",
                                                     quantity=10000)])
        ids = [stub.SubmitTask(pb.SubmitTaskRequest(spec=spec),
                               timeout=10).task_id for _ in range(300)]

        def finished():
            r = stub.ListTasks(pb.ListTasksRequest(limit=1000), timeout=10)
            mine = [t for t in r.tasks if t.spec.task_id in ids]
            bad = [t for t in mine if t.state in (c.TASK_STATE_FAILED,
                                                   c.TASK_STATE_CANCELLED)]
            check(not bad, "a task failed: %r" % bad[:1])
            done = [t for t in mine if t.state == c.TASK_STATE_FINISHED]
            return done if len(done) == len(ids) else None
        done = wait_until(finished, 60, "300 tasks FINISHED", 0.2)
        used = {t.node_id for t in done}
        # 300 one-CPU tasks on 4-CPU nodes cannot all have fit on few.
        check(len(used) > 1 and all(u.startswith("simt-") for u in used),
              "tasks ran on %r" % sorted(used))
        for node in ("simt-00007", "simt-00042"):
            r = stub.ListTasks(pb.ListTasksRequest(node_id=node), timeout=10)
            check(r.total >= 1 and all(t.state == c.TASK_STATE_FINISHED
                                       for t in r.tasks),
                  "node %s: %r" % (node, r))
        st = status(address=addr)
        check(st["pending_tasks"] == 0 and st["running_tasks"] == 0,
              "tasks left: %d pending, %d running" %
              (st["pending_tasks"], st["running_tasks"]))
    finally:
        sim.send_signal(signal.SIGTERM)
        rc = sim.wait(timeout=20)
    check(rc == 0, "the simulator exited %d: %s" % (rc, sim.stderr.read()))
    # Unregistered on the way out: DEAD well before the node timeout.
    wait_until(lambda: len(nodes(addr, "simt", "DEAD")) == N, 1.0,
               "%d nodes DEAD after SIGTERM" % N)


def test_leases_on_simulated_nodes():
    """A lease granted on a fake node takes pushes: every task FINISHED,
    filed by the head before the answer; returned, it ends FINISHED; an
    unused one ends idle."""
    proto_stubs()
    import common_pb2 as c
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    import worker_service_pb2 as w
    import worker_service_pb2_grpc as wg
    addr = start_head()
    sim = start_sim(addr, "siml", 4)
    try:
        stub = pbg.HeadServiceStub(channel(addr))
        ended = (c.TASK_STATE_FINISHED, c.TASK_STATE_FAILED,
                 c.TASK_STATE_CANCELLED)

        def lease():
            spec = c.TaskSpec(kind=c.TASK_KIND_LEASE, owner_id="drv",
                              resources=[c.ResourceEntry(name="CPU",
                                                         quantity=10000)])
            lid = stub.SubmitTask(pb.SubmitTaskRequest(spec=spec),
                                  timeout=10).task_id
            for ev in stub.WatchTask(pb.WatchTaskRequest(task_id=lid),
                                     timeout=10):
                if ev.state == c.TASK_STATE_RUNNING:
                    return lid
            raise AssertionError("lease %s never ran" % lid)

        def record(tid):
            r = stub.ListTasks(pb.ListTasksRequest(limit=1000), timeout=10)
            return ([t for t in r.tasks if t.spec.task_id == tid] or
                    [None])[0]

        sim_addr = nodes(addr, "siml", "ALIVE")[0]["address"]
        worker = wg.WorkerServiceStub(channel(sim_addr))
        lid = lease()
        ids = ["t%015x" % ((1 << 59) | (os.getpid() << 16) | i)
               for i in range(100)]
        res = worker.PushTasks(w.PushTasksRequest(
            lease_id=lid, owner_id="drv",
            tasks=[w.PushedTask(task_id=t, function="noop") for t in ids]),
            timeout=10).results
        check(len(res) == 100 and
              all(r.state == c.TASK_STATE_FINISHED for r in res),
              "push results %r" % res[:1])
        check(record(ids[42]).state == c.TASK_STATE_FINISHED,
              "record %r" % record(ids[42]))
        res = worker.PushTasks(w.PushTasksRequest(
            lease_id=lid, owner_id="other",
            tasks=[w.PushedTask(task_id=ids[0], function="noop")]),
            timeout=10).results
        check(res[0].not_run, "another owner %r" % res[0])
        worker.PushTasks(w.PushTasksRequest(lease_id=lid, owner_id="drv",
                                            return_lease=True), timeout=10)
        wait_until(lambda: record(lid).state == c.TASK_STATE_FINISHED, 10,
                   "returned lease FINISHED")
        lid = lease()
        wait_until(lambda: record(lid).state in ended, 10, "idle lease ends")
        check(record(lid).state == c.TASK_STATE_FINISHED,
              "idle %r" % record(lid))
        st = status(address=addr)
        check(st["running_tasks"] == 0, "running %d" % st["running_tasks"])
    finally:
        sim.send_signal(signal.SIGTERM)
        rc = sim.wait(timeout=20)
    check(rc == 0, "the simulator exited %d: %s" % (rc, sim.stderr.read()))


def test_killed_simulator_nodes_time_out():
    addr = start_head()
    sim = start_sim(addr, "simk", 20)
    sim.kill()
    sim.wait(timeout=10)
    wait_until(lambda: len(nodes(addr, "simk", "DEAD")) == 20, 10,
               "20 nodes DEAD after the node timeout")


if __name__ == "__main__":
    main([test_nodes_alive_tasks_finish_and_stop_makes_dead,
          test_leases_on_simulated_nodes,
          test_killed_simulator_nodes_time_out])
