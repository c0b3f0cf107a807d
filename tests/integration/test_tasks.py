"""test_tasks.py -- command tasks end to end through `manta submit` and
`manta list` on a head plus two workers (127.0.0.1 labelled zone=a and
127.0.0.2 labelled zone=b, 2 CPUs each): output relayed and exit codes
passed on, an infeasible request reported as such, label selectors obeyed,
20 concurrent tasks leaving no resource behind, --no-wait with listing,
Ctrl-C cancelling a running task, and a worker killed mid-task (retried on
the other node with --max-retries 1, a worker-died failure with 0).
"""
import json
import os
import signal
import subprocess
import threading
import time

from harness import (FAST, MANTA, check, free_port, main, new_dir, read_pid,
                     run, status, wait_until)

ZONES = {"127.0.0.1": "a", "127.0.0.2": "b"}


def start_cluster(cpus=2):
    """Head+worker on .1 (zone=a), worker on .2 (zone=b); both ALIVE.
    RET (address, {ip: temp dir}, {ip: node id})."""
    port = free_port()
    dirs = {"127.0.0.1": new_dir("head")}
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", dirs["127.0.0.1"], "--num-cpus", str(cpus),
         "--memory", "1GiB", "--labels", "zone=a"] + FAST)
    addr = "127.0.0.1:%d" % port
    dirs["127.0.0.2"] = new_dir("w2")
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         dirs["127.0.0.2"], "--num-cpus", str(cpus), "--memory", "1GiB",
         "--labels", "zone=b"] + FAST[:2])

    def both_alive():
        st = status(address=addr)
        alive = [n for n in st["nodes"] if n["state"] == "ALIVE"]
        return st if len(alive) == 2 else None
    st = wait_until(both_alive, 10, "two alive nodes")
    ids = {n["node_ip"]: n["node_id"] for n in st["nodes"]}
    return addr, dirs, ids


def submit(addr, args, timeout=60):
    return run(["submit", "--address", addr] + args, timeout=timeout,
               check=False)


def popen_submit(addr, args):
    return subprocess.Popen([MANTA, "submit", "--address", addr] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def tasks(addr, limit=100):
    p = run(["list", "tasks", "--address", addr, "--format", "json",
             "--limit", str(limit)])
    return json.loads(p.stdout)


def task(addr, task_id):
    for t in tasks(addr, 1000)["tasks"]:
        if t["task_id"] == task_id:
            return t
    return None


def newest(addr):
    ts = tasks(addr, 1)["tasks"]
    return ts[0] if ts else None


def wait_state(addr, task_id, states, timeout=20):
    def ok():
        t = task(addr, task_id)
        return t if t and t["state"] in states else None
    return wait_until(ok, timeout, "task %s in %s" % (task_id, states), 0.2)


def no_leaks(addr, timeout=10):
    """Every alive node's available resources equal its total again."""
    def ok():
        st = status(address=addr)
        for n in st["nodes"]:
            if n["state"] == "ALIVE" and \
                    n["resources_available"] != n["resources_total"]:
                return None
        return st
    wait_until(ok, timeout, "available == total on every node", 0.2)


class StderrReader:
    """Collect a child's stderr lines in a thread, so a test can wait for
    one while the child keeps running."""

    def __init__(self, proc):
        self.lines = []
        self.t = threading.Thread(target=self._run, args=(proc,), daemon=True)
        self.t.start()

    def _run(self, proc):
        for line in proc.stderr:
            self.lines.append(line)

    def wait_for(self, text, timeout):
        return wait_until(lambda: [l for l in self.lines if text in l],
                          timeout, "%r on stderr" % text)


# ---- tests -------------------------------------------------------------------


def test_output_and_exit_code():
    addr, dirs, ids = start_cluster()
    p = submit(addr, ["--", "sh", "-c", "echo out; echo err >&2; exit 3"])
    check(p.returncode == 3, "exit %d: %s" % (p.returncode, p.stderr))
    check(p.stdout == "out\n", "stdout %r" % p.stdout)
    check(p.stderr == "err\n", "stderr %r" % p.stderr)
    # Environment, cwd and a clean success; -v reports the states.
    p = submit(addr, ["-v", "--env", "GREETING=hi there", "--cwd", "/tmp",
                      "--", "sh", "-c", 'echo "$GREETING"; pwd'])
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr))
    check(p.stdout == "hi there\n/tmp\n", "stdout %r" % p.stdout)
    # (running on ..., or ran on ... when it finished before the watch)
    check(" on node " in p.stderr, "verbose: %r" % p.stderr)
    # A program that does not exist fails clearly, not with a hang.
    p = submit(addr, ["--", "/no/such/program"], timeout=20)
    check(p.returncode != 0 and p.stderr.strip(), "missing program: %d %r" %
          (p.returncode, p.stderr))
    no_leaks(addr)


def test_infeasible_is_reported():
    addr, dirs, ids = start_cluster()
    proc = popen_submit(addr, ["--num-cpus", "64", "--", "true"])
    err = StderrReader(proc)
    try:
        line = err.wait_for("infeasible", 10)[0]
        check("CPU" in line, "infeasible line %r" % line)
        t = newest(addr)
        check(t["state"] in ("PENDING", "FAILED"), "state %s" % t["state"])
        check("infeasible" in t["error"], "error %r" % t["error"])
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    check(proc.returncode in (1, 130), "exit %d" % proc.returncode)
    # A label nobody has is infeasible as well.
    proc = popen_submit(addr, ["--label-selector", "zone=c", "--", "true"])
    err = StderrReader(proc)
    try:
        err.wait_for("infeasible", 10)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    no_leaks(addr)


def test_label_selector_places_task():
    addr, dirs, ids = start_cluster()
    for sel, ip in (("zone=b", "127.0.0.2"), ("zone in (a|x)", "127.0.0.1"),
                    ("zone,zone!=a", "127.0.0.2"),
                    ("zone notin (b)", "127.0.0.1")):
        p = submit(addr, ["--no-wait", "--label-selector", sel, "--",
                          "true"])
        check(p.returncode == 0, "%s: %s" % (sel, p.stderr))
        tid = p.stdout.strip()
        t = wait_state(addr, tid, ("FINISHED", "FAILED"))
        check(t["state"] == "FINISHED", "%s: %r" % (sel, t))
        check(t["node_id"] == ids[ip], "%s ran on %s, not %s" % (
            sel, t["node_id"], ids[ip]))
    # The blocking form lands there too.
    p = submit(addr, ["--label-selector", "zone=b", "--", "true"])
    check(p.returncode == 0, p.stderr)
    check(newest(addr)["node_id"] == ids["127.0.0.2"], "blocking zone=b")


def test_twenty_concurrent_tasks_free_everything():
    addr, dirs, ids = start_cluster()
    procs = [popen_submit(addr, ["--name", "c%d" % i, "--", "sh", "-c",
                                 "sleep 0.2; echo $0", "t%d" % i])
             for i in range(20)]
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=90)
        check(p.returncode == 0, "task %d exit %d: %s" % (i, p.returncode,
                                                          err))
        check(out == "t%d\n" % i, "task %d stdout %r" % (i, out))
    listed = tasks(addr)
    check(listed["total"] == 20, "total %d" % listed["total"])
    check(all(t["state"] == "FINISHED" for t in listed["tasks"]),
          "states %s" % [t["state"] for t in listed["tasks"]])
    check({t["node_id"] for t in listed["tasks"]} <= set(ids.values()),
          "unknown nodes")
    no_leaks(addr)


def test_no_wait_and_list():
    addr, dirs, ids = start_cluster()
    p = submit(addr, ["--no-wait", "--name", "later", "--", "sleep", "0.5"])
    check(p.returncode == 0, p.stderr)
    tid = p.stdout.strip()
    check(tid and len(tid.split()) == 1, "task id %r" % p.stdout)
    text = run(["list", "tasks", "--address", addr]).stdout
    check(tid in text and "later" in text and text.endswith("\n\n1 task\n"),
          text)
    check("sleep 0.5" in text, text)
    t = wait_state(addr, tid, ("FINISHED",))
    check(t["name"] == "later" and t["exit_code"] == 0, "%r" % t)
    check(t["argv"] == ["sleep", "0.5"], "%r" % t)
    check(t["resources"] == {"CPU": 1}, "%r" % t["resources"])
    nodes = run(["list", "nodes", "--address", addr]).stdout
    check(all(i in nodes for i in ids.values()) and "zone=b" in nodes, nodes)
    js = json.loads(run(["list", "nodes", "--address", addr, "--format",
                         "json"]).stdout)
    check(js["total"] == 2 and len(js["nodes"]) == 2, "%r" % js)


def test_ctrl_c_cancels_running_task():
    addr, dirs, ids = start_cluster()
    t0 = time.monotonic()
    proc = popen_submit(addr, ["--", "sleep", "30"])
    t = wait_until(lambda: (newest(addr) or {}).get("state") == "RUNNING" and
                   newest(addr), 15, "sleep 30 running")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    check(proc.returncode == 130, "exit %d: %s" % (proc.returncode, err))
    check(time.monotonic() - t0 < 20, "cancel took too long")
    t = wait_state(addr, t["task_id"], ("CANCELLED",), 10)
    no_leaks(addr)
    # Cancelling a task still pending (needs more CPU than is free).
    hog = popen_submit(addr, ["--num-cpus", "2", "--label-selector",
                              "zone=a", "--", "sleep", "30"])
    wait_until(lambda: (newest(addr) or {}).get("state") == "RUNNING",
               15, "hog running")
    proc = popen_submit(addr, ["--num-cpus", "2", "--label-selector",
                               "zone=a", "--", "true"])
    wait_until(lambda: (newest(addr) or {}).get("state") == "PENDING" and
               len(tasks(addr)["tasks"]) == 3, 15, "second task pending")
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=15)
    check(proc.returncode == 130, "pending cancel exit %d" % proc.returncode)
    hog.send_signal(signal.SIGINT)
    hog.communicate(timeout=15)
    check(hog.returncode == 130, "hog exit %d" % hog.returncode)
    no_leaks(addr)
    # A supervisor's SIGTERM and a closed terminal's SIGHUP cancel the same
    # way (issue 13: they used to leave the task running).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        proc = popen_submit(addr, ["--", "sleep", "30"])
        t = wait_until(lambda: (newest(addr) or {}).get("state") ==
                       "RUNNING" and newest(addr), 15, "sleep running")
        proc.send_signal(sig)
        proc.communicate(timeout=15)
        check(proc.returncode == 130, "%s: exit %d" % (sig, proc.returncode))
        wait_state(addr, t["task_id"], ("CANCELLED",), 10)
    no_leaks(addr)


def kill_worker_under(addr, dirs, ids, args):
    """Submit a task, kill -9 the worker of the node it runs on, return
    (submit's CompletedProcess-like (rc, out, err), first node id)."""
    proc = popen_submit(addr, args)
    t = wait_until(lambda: (newest(addr) or {}).get("state") == "RUNNING" and
                   newest(addr), 15, "task running")
    ip = [i for i, nid in ids.items() if nid == t["node_id"]]
    check(ip, "task on unknown node %s" % t["node_id"])
    pid = read_pid(dirs[ip[0]], "worker")
    check(pid > 0, "no worker pid for %s" % ip[0])
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err, t


def test_worker_death_retried_elsewhere():
    addr, dirs, ids = start_cluster()
    rc, out, err, first = kill_worker_under(
        addr, dirs, ids, ["--max-retries", "1", "--", "sh", "-c",
                          "sleep 2; echo done"])
    check(rc == 0, "exit %d: %s" % (rc, err))
    check(out.endswith("done\n"), "stdout %r" % out)
    t = task(addr, first["task_id"])
    check(t["state"] == "FINISHED" and t["attempt"] == 1, "%r" % t)
    check(t["node_id"] != first["node_id"], "retried on the same node")


def test_worker_death_without_retries_fails():
    addr, dirs, ids = start_cluster()
    rc, out, err, first = kill_worker_under(
        addr, dirs, ids, ["--max-retries", "0", "--", "sleep", "30"])
    check(rc == 1, "exit %d: %s" % (rc, err))
    lines = err.strip().splitlines()
    check(lines and lines[-1].startswith("manta submit: task failed:") and
          "died" in lines[-1], "stderr %r" % err)
    t = task(addr, first["task_id"])
    check(t["state"] == "FAILED" and "died" in t["error"], "%r" % t)


def test_gpu_binding():
    """GPUs are bound through CUDA_VISIBLE_DEVICES: fractional requests
    share one device, a 2-GPU task sees two distinct devices, and a task
    without GPUs sees none."""
    port = free_port()
    d = new_dir("gpu")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", "8", "--num-gpus", "4"] + FAST)
    addr = "127.0.0.1:%d" % port
    show = ["--", "sh", "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\"; sleep 1"]
    procs = [popen_submit(addr, ["--num-gpus", "0.25"] + show)
             for _ in range(4)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    check(all(p.returncode == 0 for p in procs), "quarter-GPU tasks failed")
    check(len(set(outs)) == 1 and outs[0] not in ("[]", ""),
          "4 x 0.25 GPU should share one device: %r" % outs)
    p = submit(addr, ["--num-gpus", "2"] + show)
    ids = p.stdout.strip().strip("[]").split(",")
    check(p.returncode == 0 and len(ids) == 2 and ids[0] != ids[1],
          "2-GPU task sees %r" % p.stdout)
    p = submit(addr, ["--num-gpus", "0"] + show)
    check(p.stdout.strip() == "[]", "no-GPU task sees %r" % p.stdout)
    p = submit(addr, ["--num-gpus", "1.5", "--", "true"])
    check(p.returncode == 2, "1.5 GPUs accepted: %d %s" % (p.returncode,
                                                           p.stderr))


def test_logs_and_cancel_commands():
    """`manta logs` replays and follows a task submitted with --no-wait and
    exits with its code; `manta cancel` stops one; bad ids are usage
    errors; unknown ids fail."""
    addr, dirs, ids = start_cluster()
    tid = submit(addr, ["--no-wait", "--", "sh", "-c",
                        "echo one; sleep 0.5; echo two; exit 5"]).stdout.strip()
    p = run(["logs", tid, "--address", addr], check=False, timeout=30)
    check(p.returncode == 5 and p.stdout == "one\ntwo\n",
          "logs: %d %r" % (p.returncode, p.stdout))
    p = run(["logs", tid, "--address", addr], check=False)  # after the end
    check(p.returncode == 5 and p.stdout == "one\ntwo\n", "logs again")
    tid = submit(addr, ["--no-wait", "--", "sleep", "30"]).stdout.strip()
    wait_state(addr, tid, ("RUNNING",))
    p = run(["cancel", tid, "--address", addr])
    check(tid in p.stdout, p.stdout)
    wait_state(addr, tid, ("CANCELLED",))
    p = run(["logs", tid, "--address", addr], check=False)
    check(p.returncode == 130, "logs of a cancelled task: %d" % p.returncode)
    for args in (["logs"], ["logs", "xyz"], ["cancel", "1234"],
                 ["cancel", tid, "--bogus"]):
        p = run(args + ["--address", addr], check=False)
        check(p.returncode == 2, "%s exited %d" % (args, p.returncode))
    p = run(["cancel", "0000000000000000", "--address", addr], check=False)
    check(p.returncode == 1 and "no such task" in p.stderr, p.stderr)


if __name__ == "__main__":
    main([test_output_and_exit_code, test_infeasible_is_reported,
          test_label_selector_places_task,
          test_twenty_concurrent_tasks_free_everything,
          test_no_wait_and_list, test_ctrl_c_cancels_running_task,
          test_worker_death_retried_elsewhere,
          test_worker_death_without_retries_fails, test_gpu_binding,
          test_logs_and_cancel_commands])
