"""test_refs.py -- object references end to end on a head and two workers
(127.0.0.1 labelled zone=a, 127.0.0.2 labelled zone=b), driven by the C
program refs_driver (refs_driver.c) through the public SDK, with the task
functions of libmt_test_refslib.so (refs_fnlib.c).

A chain vec -> add -> add -> total passes its results by reference while
alternating nodes, with the right total; a put passed by reference reads
the same on both nodes; a 256 MiB result made on node 1 and consumed on
node 2 arrives intact (checksum) and the driver reads it back; four
tasks on one node reading the same remote object at once share one pull;
a task
whose argument is a slow task's result stays WAITING_FOR_ARGS until that
result exists; a failed producer fails its dependents (also transitively
and when submitted later) with "dependency failed ... boom"; an unknown
object id is refused with a clear error; `manta list objects` shows the
objects with their reference counts, and after everything is released
the head's directory and both nodes' stores are empty again. A result
whose only copy was on a node that is stopped becomes LOST: a get and a
task needing it fail with "object lost". The
tensor pipeline example (examples/c/tensor_pipeline.c) runs across the
two nodes.
"""
import json
import os
import signal
import subprocess

from harness import (BIN, FAST, check, free_port, main, new_dir, read_pid,
                     run, wait_until)

DRIVER = os.path.join(BIN, "refs_driver")
LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
TOOL = os.path.join(BIN, "mt_objtool")


def cluster():
    port = free_port()
    a, b = new_dir("refa"), new_dir("refb")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", a, "--num-cpus", "2", "--labels", "zone=a",
         "--object-store-memory", "768MiB"] + FAST)
    run(["start", "--address", "127.0.0.1:%d" % port, "--node-ip",
         "127.0.0.2", "--temp-dir", b, "--num-cpus", "2", "--labels",
         "zone=b", "--object-store-memory", "768MiB", "--report-period-ms",
         "200"])
    addr = "127.0.0.1:%d" % port
    wait_until(lambda: len(list_nodes(addr)) == 2, 10, "two alive nodes")
    return addr, a, b


def list_nodes(addr):
    p = run(["list", "nodes", "--address", addr, "--format", "json"])
    return [n for n in json.loads(p.stdout)["nodes"]
            if n["state"] == "ALIVE"]


def drive(addr, cmd, timeout=150):
    p = subprocess.run([DRIVER, addr, LIB_DIR, cmd], capture_output=True,
                       text=True, timeout=timeout)
    print("  " + p.stdout.strip().replace("\n", "\n  "))
    check(p.returncode == 0, "refs_driver %s: exit %d: %s" %
          (cmd, p.returncode, p.stderr))
    return p.stdout


def objects(addr):
    p = run(["list", "objects", "--address", addr, "--format", "json",
             "--limit", "1000"])
    return json.loads(p.stdout)


def store_objects(d):
    p = subprocess.run([TOOL, "stats", os.path.join(d, "objstore.sock")],
                       capture_output=True, text=True, timeout=10)
    check(p.returncode == 0, p.stderr)
    return int(p.stdout.split()[0])


def all_released(addr, a, b):
    """The head forgets every object and both stores empty out."""
    wait_until(lambda: objects(addr)["total"] == 0 and
               store_objects(a) == 0 and store_objects(b) == 0, 10,
               "empty directory and stores")


def test_chain_across_nodes():
    addr, a, b = cluster()
    out = drive(addr, "chain")
    check("chain ok: total 98304" in out and "put by reference ok" in out,
          out)
    all_released(addr, a, b)


def test_256mib_tensor_between_nodes():
    addr, a, b = cluster()
    out = drive(addr, "big")
    check("big ok" in out and "big get ok" in out, out)
    all_released(addr, a, b)


def test_fanout_pulls_once():
    addr, a, b = cluster()
    out = drive(addr, "fanout")
    check("fanout ok" in out, out)
    all_released(addr, a, b)


def test_waiting_for_args():
    addr, a, b = cluster()
    out = drive(addr, "waiting")
    check("waiting ok" in out, out)
    all_released(addr, a, b)


def test_failed_producer_fails_dependents():
    addr, a, b = cluster()
    out = drive(addr, "failed")
    check(out.count("dependency failed") >= 1 and "boom" in out, out)
    all_released(addr, a, b)


def test_unknown_object():
    addr, a, b = cluster()
    out = drive(addr, "unknown")
    check(out.count("unknown to the head") == 2, out)
    # The same through the CLI's view: nothing was created.
    check(objects(addr)["total"] == 0, "objects after refused submits")


def test_tensor_pipeline_example():
    """examples/c/tensor_pipeline.c, as `make demo` runs it."""
    addr, a, b = cluster()
    p = subprocess.run([os.path.join(BIN, "example_tensor_pipeline"), addr,
                        "zone", "a", "b"], capture_output=True, text=True,
                       timeout=120)
    print("  " + p.stdout.strip().replace("\n", "\n  "))
    check(p.returncode == 0 and "(crossed nodes)" in p.stdout,
          "example: exit %d: %s" % (p.returncode, p.stderr))
    all_released(addr, a, b)


def test_lost_when_its_node_dies():
    addr, a, b = cluster()
    p = subprocess.Popen([DRIVER, addr, LIB_DIR, "lost"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().split()
        check(line and line[0] == "LOST1", "driver said %r" % line)
        run(["stop", "--temp-dir", b])
        wait_until(lambda: len(list_nodes(addr)) == 1, 10, "node b gone")
        objs = {o["object_id"]: o for o in objects(addr)["objects"]}
        check(objs[line[1]]["state"] == "LOST", "%r" % objs.get(line[1]))
        p.stdin.write("go\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=60)
        print("  " + out.strip().replace("\n", "\n  "))
        check(p.returncode == 0 and "lost task ok" in out, err)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    wait_until(lambda: objects(addr)["total"] == 0 and store_objects(a) == 0,
               10, "empty directory and store")


def test_lost_result_rebuilt_by_lineage():
    """Issue 13: a function result whose only copy died with its node is
    made again by re-running its task, and so is the lost argument it needs
    (whose handle the driver released); gets and tasks then see the right
    bytes, and the tasks show their next attempt."""
    addr, a, b = cluster()
    node_b = [n for n in list_nodes(addr) if n["node_ip"] == "127.0.0.2"]
    env = dict(os.environ, REFS_NODE_B=node_b[0]["node_id"])
    p = subprocess.Popen([DRIVER, addr, LIB_DIR, "rebuild"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stdout.readline().split()
        check(line and line[0] == "REBUILD", "driver said %r %r" % (
            line, p.stderr.read() if p.poll() is not None else ""))
        objs = {o["object_id"]: o for o in objects(addr)["objects"]}
        check(all(objs[i]["state"] == "READY" for i in line[1:]), "%r" % objs)
        os.kill(read_pid(b, "worker"), signal.SIGKILL)
        wait_until(lambda: len(list_nodes(addr)) == 1, 10, "node b gone")
        p.stdin.write("go\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=90)
        print("  " + out.strip().replace("\n", "\n  "))
        check(p.returncode == 0 and "rebuild task ok" in out, err)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ts = json.loads(run(["list", "tasks", "--address", addr, "--format",
                         "json"]).stdout)["tasks"]
    rebuilt = [(t["state"], t["attempt"], t["strategy"], t["affinity_soft"])
               for t in ts if t["max_retries"] == 2]  # vec and add
    check(rebuilt == [("FINISHED", 1, "NODE_AFFINITY", True)] * 2,
          "vec and add: %r" % ts)
    wait_until(lambda: objects(addr)["total"] == 0 and store_objects(a) == 0,
               10, "empty directory and store")


def test_list_objects_and_refcounts():
    addr, a, b = cluster()
    p = subprocess.Popen([DRIVER, addr, LIB_DIR, "hold"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().split()
        check(line and line[0] == "STEP1", "driver said %r" % line)
        put_id, slow_id = line[1], line[2]

        def slow_known():
            """The slow task runs on a lease: the head learns it runs (and
            who holds its result) from its worker's next report."""
            objs = listed(addr)
            o = objs.get(slow_id)
            return objs if o and o["ref_count"] == 2 else None
        objs = wait_until(slow_known, 2, "the slow task's result held")
        put, slow = objs.get(put_id), objs.get(slow_id)
        check(put and put["ref_count"] == 2 and put["state"] == "READY" and
              put["size"] == 200 << 10 and not put["inline"] and
              put["owner"].startswith("put "), "put: %r" % put)
        check(slow and slow["state"] == "PENDING" and
              slow["ref_count"] == 2 and slow["owner"].startswith("task "),
              "slow result: %r" % slow)
        text = run(["list", "objects", "--address", addr]).stdout
        check(put_id in text and "READY" in text and "PENDING" in text,
              text)
        p.stdin.write("go\n")
        p.stdin.flush()
        check(p.stdout.readline().strip() == "STEP2", "no STEP2")
        objs = {o["object_id"]: o for o in objects(addr)["objects"]}
        check(objs[put_id]["ref_count"] == 1,
              "put after release: %r" % objs[put_id])
        p.stdin.write("go\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=60)
        check(p.returncode == 0 and "hold ok" in out, err)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    all_released(addr, a, b)


def listed(addr):
    return {o["object_id"]: o for o in objects(addr)["objects"]}


def test_a_leaving_driver_drops_its_references():
    addr, a, b = cluster()
    # Another driver holds its own put meanwhile (refs_driver hold).
    keeper = subprocess.Popen([DRIVER, addr, LIB_DIR, "hold"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    drivers = [keeper]
    try:
        line = keeper.stdout.readline().split()
        check(line and line[0] == "STEP1", "keeper said %r" % line)
        kept = line[1]
        # The three leave at once (4 CPUs: their tasks run side by side).
        left = []
        for how in ("leave-exit", "leave-crash", "leave-quick"):
            p = subprocess.Popen([DRIVER, addr, LIB_DIR, how],
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            drivers.append(p)
            ids = p.stdout.readline().split()
            check(ids and ids[0] == "LEAVE", "%s said %r" % (how, ids))
            if how == "leave-crash":
                check(p.stdout.readline().strip() == "CRASH", how)
                os.kill(p.pid, signal.SIGKILL)
            elif how == "leave-quick":
                check(p.stdout.readline().startswith("QUICK "), how)
            left.append((how, p, ids[1:4]))
        for how, p, (put, arg, res) in left:
            p.wait(timeout=30)
            # The driver is gone without releasing: its own put goes at
            # once; what its running task holds stays until the task ends,
            # and so does another driver's put.
            wait_until(lambda: put not in listed(addr), 5,
                       "%s: the driver's put freed" % how)
            objs = listed(addr)
            check(arg in objs and objs[arg]["ref_count"] == 1,
                  "%s: the running task's argument: %r" % (how, objs.get(arg)))
            check(kept in objs and objs[kept]["ref_count"] >= 1,
                  "%s: a live driver's put: %r" % (how, objs.get(kept)))
        for how, p, (put, arg, res) in left:
            wait_until(lambda: arg not in listed(addr) and
                       res not in listed(addr), 20,
                       "%s: the task's argument and result freed once it "
                       "ended" % how)
        for step in ("go\n", "go\n"):
            keeper.stdin.write(step)
            keeper.stdin.flush()
        out, err = keeper.communicate(timeout=60)
        check(keeper.returncode == 0 and "hold ok" in out, err)
    finally:
        for p in drivers:
            if p.poll() is None:
                p.kill()
                p.wait()
    # Nothing is left: no object the head lists, none it never heard of
    # in a store (the quick driver's last put).
    all_released(addr, a, b)


if __name__ == "__main__":
    main([test_chain_across_nodes, test_256mib_tensor_between_nodes,
          test_fanout_pulls_once,
          test_waiting_for_args, test_failed_producer_fails_dependents,
          test_unknown_object, test_tensor_pipeline_example,
          test_lost_when_its_node_dies, test_lost_result_rebuilt_by_lineage,
          test_list_objects_and_refcounts,
          test_a_leaving_driver_drops_its_references])
