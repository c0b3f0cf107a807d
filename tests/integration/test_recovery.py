"""test_recovery.py -- a head that dies and comes back (issue 15): kill -9
the head while it holds 2 running and 4 pending command tasks, a detached
actor and a placement group, start it again on the same port and storage,
and check that it knows every one of them (and the nodes' credentials),
adopts the two task processes (they are not started again), runs the
pending ones without ever running more tasks at once than the node has
CPUs, and that the actor answers and every resource is back once the work
is done.

Runs once per durable backend: redis:// (a redis-server of our own with
AOF) and the default file backend of `manta start --head`.
"""
import json
import os
import signal
import subprocess
import time

from harness import (BIN, channel, check, free_port, main, new_dir,
                     proto_stubs, read_pid, run, status, wait_until)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
ACTOR_DRIVER = os.path.join(BIN, "actor_driver")
FACTORY = "libexample_counter.so:counter_new"
FAST = ["--report-period-ms", "200"]
REDIS_PROCS = []


def start_redis(d):
    port = free_port()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind",
                          "127.0.0.1", "--save", "", "--appendonly", "yes",
                          "--appendfsync", "always", "--dir", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    REDIS_PROCS.append(p)

    def up():
        r = subprocess.run(["redis-cli", "-p", str(port), "PING"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip() == "PONG"
    wait_until(up, 10, "redis-server up")
    return "redis://127.0.0.1:%d" % port


def head_log(d):
    with open(os.path.join(d, "logs", "head.log"), errors="replace") as f:
        return f.read()


def start_head(d, port, storage):
    args = ["start", "--head", "--no-worker", "--port", str(port),
            "--node-ip", "127.0.0.1", "--temp-dir", d,
            "--node-timeout-ms", "3000"] + FAST
    if storage:
        args += ["--storage", storage]
    p = run(args, check=False)
    check(p.returncode == 0, "head start: %s %s" % (p.stderr,
                                                     head_log(d)[-2000:]))


def list_json(addr, what):
    return json.loads(run(["list", what, "--address", addr, "--format",
                           "json"]).stdout)


def actor_driver(addr, *args):
    p = subprocess.run([ACTOR_DRIVER, addr, LIB_DIR] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.strip().splitlines()


def task_lines(log):
    try:
        with open(log) as f:
            return [ln.split() for ln in f if ln.strip()]
    except FileNotFoundError:
        return []


def max_concurrent(lines):
    """Most tasks running at once, from their own start/end records."""
    ev = sorted((int(t), 1 if kind == "start" else -1)
                for _, kind, t in lines)
    cur = best = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best


def no_take_over(addr, node):
    """The node's credential survived the restart: before it registers
    again, nobody else can register under its id."""
    proto_stubs()
    import common_pb2 as C
    import grpc
    import head_service_pb2 as PB
    import head_service_pb2_grpc as PBG
    try:
        PBG.HeadServiceStub(channel(addr)).RegisterNode(
            PB.RegisterNodeRequest(node=C.NodeInfo(
                node_id=node, address="127.0.0.9:1"),
                node_secret="x" * 64), timeout=5)
        check(False, "node %s taken over after the restart" % node)
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.PERMISSION_DENIED, str(e.code()))


def scenario(storage_of):
    hd, wa, wb, work = (new_dir("rhead"), new_dir("rwa"), new_dir("rwb"),
                        new_dir("rwork"))
    storage = storage_of(hd)
    port = free_port()
    addr = "127.0.0.1:%d" % port
    log = os.path.join(work, "tasks.log")
    start_head(hd, port, storage)
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         wa, "--num-cpus", "2", "--resources", '{"slotA": 2}'] + FAST)
    run(["start", "--address", addr, "--node-ip", "127.0.0.3", "--temp-dir",
         wb, "--num-cpus", "2"] + FAST)
    wait_until(lambda: len([n for n in status(address=addr)["nodes"]
                            if n["state"] == "ALIVE"]) == 2, 15,
               "two alive workers")
    # 6 command tasks for node A's 2 CPUs: 2 run, 4 wait.
    body = ('echo "$TAG start $(date +%%s%%N)" >> %s; sleep 4; '
            'echo "$TAG end $(date +%%s%%N)" >> %s' % (log, log))
    ids = []
    for i in range(6):
        out = run(["submit", "--address", addr, "--no-wait", "--name",
                   "r%d" % i, "--resources", '{"slotA": 1}', "--env",
                   "TAG=r%d" % i, "--", "sh", "-c", body]).stdout
        ids.append(out.strip().split()[-1])
    # A detached actor and a placement group on node B.
    rc, out = actor_driver(addr, "create", "keeper", 1, 0, 1, FACTORY, "10")
    check(rc == 0 and out[-1] == "ready", "actor: %d %s" % (rc, out))
    pg = run(["placement-group", "create", "--address", addr, "--bundles",
              '[{"CPU": 1}]', "--wait", "10"]).stdout.strip().split()[-1]
    wait_until(lambda: len(task_lines(log)) == 2, 15, "two tasks started")
    running = {t["task_id"]: t for t in list_json(addr, "tasks")["tasks"]
               if t["state"] == "RUNNING" and t["task_id"] in ids}
    check(len(running) == 2, "running: %s" % running)

    # kill -9 the head; start it again on the same port and storage.
    node_a = [n["node_id"] for n in status(address=addr)["nodes"]
              if n["node_ip"] == "127.0.0.2"][0]
    os.kill(read_pid(hd, "head"), signal.SIGKILL)
    time.sleep(0.5)
    t0 = time.time()
    os.kill(read_pid(wa, "worker"), signal.SIGSTOP)
    try:
        start_head(hd, port, storage)
        no_take_over(addr, node_a)
    finally:
        os.kill(read_pid(wa, "worker"), signal.SIGCONT)
    tasks = {t["task_id"]: t for t in list_json(addr, "tasks")["tasks"]}
    check(all(i in tasks for i in ids), "tasks known after the restart: "
          "%s" % sorted(tasks))
    wait_until(lambda: "recovery complete" in head_log(hd) or
               "recovery had nothing" in head_log(hd), 10,
               "recovery done")
    took = time.time() - t0
    st = run(["submit", "--address", addr, "--num-cpus", "0", "--", "true"],
             check=False)
    check(st.returncode == 0, "a task after the restart: %s" % st.stderr)
    print("  usable %.2f s after the restart" % (time.time() - t0))
    check(took < 10, "recovery took %.1f s" % took)
    a = json.loads(run(["actor", "get", "--name", "keeper", "--address",
                        addr, "--format", "json"]).stdout)
    check(a["state"] == "ALIVE", "actor after the restart: %s" % a)
    rc, out = actor_driver(addr, "call", "keeper", "incr", 1)
    check(rc == 0 and out == ["ok 11"], "actor call: %d %s" % (rc, out))
    pgs = [g for g in list_json(addr, "placement-groups")["placement_groups"]
           if g["pg_id"] == pg]
    check(pgs and pgs[0]["state"] == "CREATED", "pg: %s" % pgs)

    # Everything runs once; never more than 2 at a time on node A.
    def all_done():
        ts = {t["task_id"]: t for t in list_json(addr, "tasks")["tasks"]}
        return all(ts[i]["state"] in ("FINISHED", "FAILED") for i in ids) \
            and ts
    ts = wait_until(all_done, 60, "all six tasks ended")
    check(all(ts[i]["state"] == "FINISHED" and ts[i]["exit_code"] == 0
              for i in ids), "ended: %s" % [ts[i] for i in ids])
    lines = task_lines(log)
    starts = sorted(tag for tag, kind, _ in lines if kind == "start")
    check(starts == ["r%d" % i for i in range(6)],
          "each task started once: %s" % starts)
    check(max_concurrent(lines) <= 2, "node A ran %d tasks at once" %
          max_concurrent(lines))
    for i in running:
        check(ts[i]["attempt"] == 0, "adopted task retried: %s" % ts[i])
    # Once idle, node A has all its slots back.
    run(["placement-group", "remove", pg, "--address", addr])
    run(["actor", "kill", "--name", "keeper", "--address", addr])

    def idle():
        for n in status(address=addr)["nodes"]:
            if n["resources_total"] != n["resources_available"]:
                return False
        return True
    wait_until(idle, 15, "every resource back")
    for d in (wa, wb, hd):
        run(["stop", "--temp-dir", d], check=False)


def test_recovery_on_redis():
    scenario(lambda hd: start_redis(new_dir("redis")))


def test_recovery_on_the_default_storage():
    scenario(lambda hd: None)


if __name__ == "__main__":
    try:
        main([test_recovery_on_redis, test_recovery_on_the_default_storage])
    finally:
        for proc in REDIS_PROCS:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
