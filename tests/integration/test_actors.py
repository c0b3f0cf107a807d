"""test_actors.py -- actors end to end on a head+worker node (127.0.0.1)
and a second worker (127.0.0.2), driven by separate SDK driver processes
(build/bin/actor_driver, tests/integration/actor_driver.c), the `manta` CLI
and GetActor over gRPC. The actor is the counter of
examples/c/counter_lib.c (libexample_counter.so).

Checks: 40 calls made without waiting return 1..40 in call order; a named
detached actor created by one driver process is found and called by
another; `manta list actors` shows it; a second live actor with the same
name is refused; killing the actor's executor (its pid from a method)
restarts it with fresh state while max_restarts allows (and a dead node's
actor restarts on the other node), and then it is DEAD
and calls fail with MT_EACTORDIED at once; calls made through a handle
after its actor restarted (killed with SIGKILL or `manta actor kill
--restart`, also while it restarts) run on the new incarnation, in order,
each once, and only the call running at the crash fails; a call in flight
when `manta actor kill` kills the actor fails with MT_EACTORDIED; a missing
factory and a failing factory give DEAD with the reason, not a hang; a
non-detached actor dies when its driver disconnects, and when its driver
dies without disconnecting (the head's owner lease), while a detached one
lives on; after all that every
node has all its resources back. Calls are checked on both roads: straight
to the actor's worker (the default once a handle has seen the actor ALIVE)
and through the head (MANTA_ACTOR_DIRECT=0).
"""
import json
import os
import signal
import subprocess
import time

from harness import (BIN, FAST, channel, check, free_port, main, new_dir,
                     proto_stubs, run, status, wait_output, wait_until)

import grpc  # noqa: E402  (Debian python3-grpcio)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
DRIVER = os.path.join(BIN, "actor_driver")
FACTORY = "libexample_counter.so:counter_new"

proto_stubs()
import common_pb2 as C  # noqa: E402
import head_service_pb2 as PB  # noqa: E402
import head_service_pb2_grpc as PBG  # noqa: E402


def start_cluster():
    """Head+worker on 127.0.0.1 (2 CPUs), a worker on 127.0.0.2 (2 CPUs)."""
    port = free_port()
    d1, d2 = new_dir("act1"), new_dir("act2")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d1, "--num-cpus", "2", "--memory", "1GiB"] + FAST)
    addr = "127.0.0.1:%d" % port
    run(["start", "--address", addr, "--node-ip", "127.0.0.2",
         "--temp-dir", d2, "--num-cpus", "2", "--memory", "1GiB"] + FAST)
    wait_until(lambda: len([n for n in status(address=addr)["nodes"]
                            if n["state"] == "ALIVE"]) == 2, 15,
               "two alive nodes")
    stub = PBG.HeadServiceStub(channel(addr))
    return addr, stub


def driver(addr, *args, timeout=60, env=None):
    p = subprocess.run([DRIVER, addr, LIB_DIR] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout.strip().splitlines(), p.stderr


def create(addr, name="-", detached=1, max_restarts=0, cpus=1,
           factory=FACTORY, *arg, env=None):
    rc, out, err = driver(addr, "create", name, detached, max_restarts, cpus,
                          factory, *arg, env=env)
    check(out and out[0].startswith("id "), "create: %d %s %s" %
          (rc, out, err))
    return rc, out[0].split()[1], out


def calls(addr, who, method, n, *arg, env=None):
    rc, out, err = driver(addr, "call", who, method, n, *arg, env=env)
    check(rc == 0 and len(out) == n, "call %s: %d %s %s" %
          (method, rc, out, err))
    return out


def get_actor(stub, actor_id):
    return stub.GetActor(PB.GetActorRequest(actor_id=actor_id),
                         timeout=10).actor


def wait_state(stub, actor_id, state, timeout=20):
    return wait_until(lambda: get_actor(stub, actor_id).state == state and
                      get_actor(stub, actor_id), timeout,
                      "actor %s in state %d" % (actor_id, state))


def resources_back(addr):
    def ok():
        for n in status(address=addr)["nodes"]:
            if n["state"] == "ALIVE" and n["resources_available"].get(
                    "CPU") != n["resources_total"].get("CPU"):
                return False
        return True
    wait_until(ok, 15, "every CPU available again")


def test_named_detached_in_order():
    addr, stub = start_cluster()
    rc, aid, out = create(addr, "counter", 1, 1, 1)
    check(rc == 0 and out[-1] == "ready", "create: %s" % out)
    # A second driver process finds it by name; calls come back in order,
    # sent straight to the actor's worker...
    ntasks = len(stub.ListTasks(PB.ListTasksRequest(limit=1000)).tasks)
    out = calls(addr, "counter", "incr", 40)
    check(out == ["ok %d" % i for i in range(1, 41)], "order: %s" % out)
    check(len(stub.ListTasks(PB.ListTasksRequest(limit=1000)).tasks) ==
          ntasks, "direct calls are not tasks")
    # ... and through the head.
    out = calls(addr, "counter", "incr", 20, env={"MANTA_ACTOR_DIRECT": "0"})
    check(out == ["ok %d" % i for i in range(41, 61)], "head road: %s" % out)
    check(len(stub.ListTasks(PB.ListTasksRequest(limit=1000)).tasks) ==
          ntasks + 20, "head-routed calls are tasks")
    # And a third by id.
    check(calls(addr, "id:" + aid, "get", 1) == ["ok 60"], "get by id")
    lst = json.loads(run(["list", "actors", "--address", addr, "--format",
                          "json"]).stdout)
    mine = [a for a in lst["actors"] if a["actor_id"] == aid]
    check(mine and mine[0]["name"] == "counter" and
          mine[0]["state"] == "ALIVE" and mine[0]["detached"], lst)
    text = run(["list", "actors", "--address", addr]).stdout
    check(aid in text and "counter" in text and "ALIVE" in text, text)
    # The name is taken while it lives.
    rc, out, err = driver(addr, "create", "counter", 1, 0, 0, FACTORY)
    check(rc == 2 and "MT_EEXIST" in out[-1] and "taken" in out[-1],
          "duplicate: %d %s" % (rc, out))
    # A method that fails fails that call only.
    out = calls(addr, "counter", "boom", 1)
    check(out[0].startswith("err MT_ETASKFAILED") and "boom" in out[0], out)
    check(calls(addr, "counter", "incr", 1) == ["ok 61"], "after boom")
    out = calls(addr, "counter", "boom", 1, env={"MANTA_ACTOR_DIRECT": "0"})
    check(out[0].startswith("err MT_ETASKFAILED") and "boom" in out[0], out)
    run(["actor", "kill", "--name", "counter", "--address", addr])
    a = wait_state(stub, aid, C.ACTOR_STATE_DEAD)
    check("killed" in a.death_reason, a.death_reason)
    resources_back(addr)


def executor_pid(addr, who):
    out = calls(addr, who, "pid", 1)
    check(out[0].startswith("ok "), out)
    return int(out[0].split()[1])


def test_restart_then_dead():
    addr, stub = start_cluster()
    rc, aid, out = create(addr, "phoenix", 1, 1, 1, FACTORY, "100")
    check(rc == 0, out)
    check(calls(addr, "phoenix", "incr", 2) == ["ok 101", "ok 102"], "incr")
    pid = executor_pid(addr, "phoenix")
    check(get_actor(stub, aid).pid == pid, "pid in GetActor")
    os.kill(pid, signal.SIGKILL)
    a = wait_until(lambda: (lambda x: x.state == C.ACTOR_STATE_ALIVE and
                            x.num_restarts == 1 and x)(get_actor(stub, aid)),
                   20, "restarted")
    check(a.pid != pid, "a new executor")
    # Fresh state: the factory ran again with its argument.
    check(calls(addr, "phoenix", "get", 1) == ["ok 100"], "fresh state")
    os.kill(executor_pid(addr, "phoenix"), signal.SIGKILL)
    a = wait_state(stub, aid, C.ACTOR_STATE_DEAD)
    check("actor died" in a.death_reason, a.death_reason)
    out = calls(addr, "id:" + aid, "get", 2)
    check(all(l.startswith("err MT_EACTORDIED") and "actor died" in l
              for l in out), "calls to a dead actor: %s" % out)
    out = calls(addr, "id:" + aid, "get", 1, env={"MANTA_ACTOR_DIRECT": "0"})
    check(out[0].startswith("err MT_EACTORDIED") and "actor died" in out[0],
          "head road to a dead actor: %s" % out)
    # The name is free again.
    rc, aid2, out = create(addr, "phoenix", 1, 0, 1)
    check(rc == 0 and aid2 != aid, out)
    run(["actor", "kill", aid2, "--address", addr])
    resources_back(addr)


def hold_handle(addr, who, *sleep_ms):
    """An actor_driver holding one handle on who: it has made one call
    through it (so it calls straight to the worker; with sleep_ms, a
    second one is left running) and waits for "go"."""
    p = subprocess.Popen([DRIVER, addr, LIB_DIR, "hold", who, "incr", "4"] +
                         [str(x) for x in sleep_ms],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    check(line and line[0] == "pid", "hold: %r" % line)
    return p, int(line[1])


def test_calls_after_restart_reach_the_new_incarnation():
    addr, stub = start_cluster()
    rc, aid, out = create(addr, "lazarus", 1, 3, 1)
    check(rc == 0 and out[-1] == "ready", out)
    # A handle that has called the first incarnation directly; the actor
    # is then killed (restart allowed) and is ALIVE again before the
    # handle's next calls: none of them was in flight at the crash, so
    # all four run on the new incarnation, in order, each once.
    p, pid = hold_handle(addr, "lazarus")
    try:
        os.kill(pid, signal.SIGKILL)
        a = wait_until(lambda: (lambda x: x.state == C.ACTOR_STATE_ALIVE and
                                x.num_restarts == 1 and x)(
                                    get_actor(stub, aid)), 20, "restarted")
        check(a.pid != pid, "a new executor")
        out, err = p.communicate("go\n", timeout=60)
        check(out.split("\n")[:4] == ["ok 1", "ok 2", "ok 3", "ok 4"],
              "calls through the old handle: %r %s" % (out, err))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(calls(addr, "lazarus", "get", 1) == ["ok 4"], "each ran once")
    # The same through `manta actor kill --restart`.
    p, pid = hold_handle(addr, "lazarus")
    try:
        run(["actor", "kill", "--name", "lazarus", "--restart", "--address",
             addr])
        wait_until(lambda: (lambda x: x.state == C.ACTOR_STATE_ALIVE and
                            x.num_restarts == 2)(get_actor(stub, aid)), 20,
                   "restarted again")
        out, err = p.communicate("go\n", timeout=60)
        check(out.split("\n")[:4] == ["ok 1", "ok 2", "ok 3", "ok 4"],
              "after kill --restart: %r %s" % (out, err))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # A call running at the crash fails; the handle's next calls wait for
    # the next incarnation (made once the head knows of the crash, while
    # it may still be restarting) and run there.
    p, pid = hold_handle(addr, "lazarus", 20000)
    try:
        wait_until(lambda: "nanosleep" in open("/proc/%d/wchan" % pid).read(),
                   20, "the executor running sleep_ms")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: get_actor(stub, aid).num_restarts == 3, 20,
                   "restarting a third time")
        out, err = p.communicate("go\n", timeout=60)
        out = out.split("\n")
        check(out[0].startswith("err MT_EACTORDIED") and
              out[1:5] == ["ok 1", "ok 2", "ok 3", "ok 4"],
              "running at the crash, then after it: %r %s" % (out, err))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    run(["actor", "kill", aid, "--address", addr])
    resources_back(addr)


def test_kill_in_flight():
    addr, stub = start_cluster()
    rc, aid, out = create(addr, "sleeper", 1, 0, 1)
    check(rc == 0, out)
    used = [n for n in status(address=addr)["nodes"]
            if n["resources_available"].get("CPU") !=
            n["resources_total"].get("CPU")]
    check(len(used) == 1, "one node holds the actor's CPU")
    # One call on each road in flight when the actor is killed: each
    # driver says "sent 1" once its call is made (straight to the worker,
    # it is then on its way; through the head, the head has it, and it is
    # in flight once the head has handed it to the actor's worker). A
    # 20 s call cannot end before the kill.
    ps = [subprocess.Popen([DRIVER, addr, LIB_DIR, "call", "sleeper",
                            "sleep_ms", "1", "20000"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, MANTA_ACTOR_DIRECT=direct))
          for direct in ("1", "0")]
    for p, road in zip(ps, ("direct", "head")):
        wait_output(p.stderr, "sent 1\n", 20, "the call on the %s road "
                    "made" % road)
    wait_until(lambda: [t for t in stub.ListTasks(PB.ListTasksRequest(
        limit=1000)).tasks if t.spec.kind == C.TASK_KIND_ACTOR_METHOD and
        t.spec.actor_id == aid and t.state == C.TASK_STATE_RUNNING], 20,
        "the head road's call RUNNING on the actor's worker")
    run(["actor", "kill", "--name", "sleeper", "--address", addr])
    for p in ps:
        out, _ = p.communicate(timeout=30)
        check(out.startswith("err MT_EACTORDIED") and "actor died" in out,
              "in flight: %s" % out)
    check(get_actor(stub, aid).state == C.ACTOR_STATE_DEAD, "dead")
    resources_back(addr)


def test_bad_factories():
    addr, stub = start_cluster()
    t0 = time.monotonic()
    rc, aid, out = create(addr, "-", 1, 3, 1,
                          "libexample_counter.so:no_such_factory")
    check(rc == 3 and "not found" in out[-1], "missing: %d %s" % (rc, out))
    rc, aid, out = create(addr, "-", 1, 0, 1, "libnothere.so:f")
    check(rc == 3 and "not found" in out[-1], "no lib: %d %s" % (rc, out))
    rc, aid, out = create(addr, "-", 1, 0, 1, FACTORY, "fail")
    check(rc == 3 and "asked to fail" in out[-1], "fails: %s" % out)
    check(time.monotonic() - t0 < 30, "clear errors, not hangs")
    resources_back(addr)


def test_owner_disconnect():
    addr, stub = start_cluster()
    rc, aid, out = create(addr, "owned", 0, 2, 1)
    check(rc == 0, out)
    # The driver has exited (disconnected): its actor is dead for good.
    a = wait_state(stub, aid, C.ACTOR_STATE_DEAD)
    check(a.num_restarts == 0, "not restarted")
    rc, out, err = driver(addr, "call", "owned", "get", 1)
    check(rc == 2 and "MT_ENOENT" in out[-1], "%d %s" % (rc, out))
    lst = json.loads(run(["list", "actors", "--address", addr, "--format",
                          "json"]).stdout)
    check(any(a["actor_id"] == aid and a["state"] == "DEAD"
              for a in lst["actors"]), lst)
    p = run(["actor", "get", aid, "--address", addr], check=False)
    check(p.returncode == 0 and "DEAD" in p.stdout, p.stdout + p.stderr)
    p = run(["actor", "kill", "--name", "nobody", "--address", addr],
            check=False)
    check(p.returncode == 1 and "no live actor" in p.stderr, p.stderr)
    # A driver that dies without disconnecting: the head sees its owner
    # lease break and kills its non-detached actor (not its detached one).
    rc, aid2, out = create(addr, "orphan", 0, 2, 1, FACTORY, env={
        "ACTOR_DRIVER_CRASH": "1"})
    check(rc == 0 and out[-1] == "ready", out)
    rc, aid3, out = create(addr, "keeper", 1, 0, 0, FACTORY, env={
        "ACTOR_DRIVER_CRASH": "1"})
    check(rc == 0, out)
    a = wait_state(stub, aid2, C.ACTOR_STATE_DEAD)
    check("owner went away" in a.death_reason and a.num_restarts == 0,
          a.death_reason)
    check(get_actor(stub, aid3).state == C.ACTOR_STATE_ALIVE,
          "a detached actor outlives its driver")
    run(["actor", "kill", aid3, "--address", addr])
    resources_back(addr)


def test_node_death_restarts_elsewhere():
    addr, stub = start_cluster()
    rc, aid, out = create(addr, "nomad", 1, 1, 1, FACTORY, "7")
    check(rc == 0, out)
    a = get_actor(stub, aid)
    node = [n for n in status(address=addr)["nodes"]
            if n["node_id"] == a.node_id][0]
    os.kill(node["pid"], signal.SIGKILL)
    a2 = wait_until(lambda: (lambda x: x.state == C.ACTOR_STATE_ALIVE and
                             x.num_restarts == 1 and x)(get_actor(stub, aid)),
                    30, "restarted on the other node")
    check(a2.node_id != a.node_id, "moved to the surviving node")
    check(calls(addr, "nomad", "incr", 2) == ["ok 8", "ok 9"], "fresh state")
    run(["actor", "kill", aid, "--address", addr])
    resources_back(addr)


if __name__ == "__main__":
    main([test_named_detached_in_order, test_restart_then_dead,
          test_calls_after_restart_reach_the_new_incarnation,
          test_kill_in_flight, test_bad_factories, test_owner_disconnect,
          test_node_death_restarts_elsewhere])
