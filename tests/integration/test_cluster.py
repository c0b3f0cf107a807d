"""test_cluster.py -- a head and three workers on 127.0.0.1..4, each with its
own temp dir: status lists four nodes with the right resources; a worker
killed with SIGKILL is DEAD within 5 s and the totals drop; a restarted head
gets every worker back; `manta stop` leaves no process behind.
"""
import os
import signal
import time

from harness import (FAST, check, free_port, main, new_dir, pid_alive,
                     read_pid, run, status, wait_until)

CPUS = {"127.0.0.1": 1, "127.0.0.2": 2, "127.0.0.3": 3, "127.0.0.4": 4}
GIB = 1 << 30


def start_cluster(tuning=()):
    """Head+worker on .1 and workers on .2-.4; default liveness settings
    unless tuning flags are given."""
    tuning = list(tuning)
    port = free_port()
    dirs = {}
    head_dir = new_dir("head")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", head_dir, "--num-cpus", "1", "--memory", "1GiB",
         "--labels", "role=head"] + tuning)
    dirs["127.0.0.1"] = head_dir
    addr = "127.0.0.1:%d" % port
    for ip, cpus in CPUS.items():
        if ip == "127.0.0.1":
            continue
        d = new_dir(ip.split(".")[-1])
        run(["start", "--address", addr, "--node-ip", ip, "--temp-dir", d,
             "--num-cpus", str(cpus), "--memory", "%dGiB" % cpus,
             "--resources", '{"disk": %d}' % cpus] + tuning[:2])
        dirs[ip] = d
    return addr, port, dirs


def alive(st):
    return [n for n in st["nodes"] if n["state"] == "ALIVE"]


def check_four(st):
    check(len(st["nodes"]) == 4, "expected 4 nodes, got %d" % len(st["nodes"]))
    by_ip = {n["node_ip"]: n for n in st["nodes"]}
    check(set(by_ip) == set(CPUS), "node ips %s" % sorted(by_ip))
    for ip, cpus in CPUS.items():
        n = by_ip[ip]
        check(n["state"] == "ALIVE", "%s is %s" % (ip, n["state"]))
        check(n["address"].startswith(ip + ":"), "address %s" % n["address"])
        check(n["resources_total"]["CPU"] == cpus, "%s CPU %r" % (
            ip, n["resources_total"]))
        check(n["resources_total"]["memory"] == cpus * GIB,
              "%s memory %r" % (ip, n["resources_total"]))
        check(n["resources_available"]["CPU"] == cpus, "available CPU")
        check(n["labels"].get("manta.io/node-id") == n["node_id"],
              "node-id label")
    check(by_ip["127.0.0.1"]["labels"].get("role") == "head", "user label")
    check(st["resources_total"]["CPU"] == 10, "total CPU %r" %
          st["resources_total"])
    check(st["resources_total"]["memory"] == 10 * GIB, "total memory")
    check(st["resources_total"]["disk"] == 9, "total disk")
    check(st["resources_available"]["CPU"] == 10, "available CPU")


def test_four_nodes_kill_restart_stop():
    addr, port, dirs = start_cluster()
    st = status(dirs["127.0.0.1"])
    check_four(st)
    # The text form shows the same cluster.
    text = run(["status", "--address", addr]).stdout
    check("4 nodes" in text and "10.0 CPU" in text, text)

    # kill -9 the worker on 127.0.0.3: DEAD within 5 s, totals drop by 3 CPU.
    victim = read_pid(dirs["127.0.0.3"], "worker")
    os.kill(victim, signal.SIGKILL)
    t0 = time.monotonic()

    def dead():
        st = status(address=addr)
        n = [x for x in st["nodes"] if x["node_ip"] == "127.0.0.3"][0]
        return st if n["state"] == "DEAD" else None
    st = wait_until(dead, 5.0, "127.0.0.3 DEAD")
    took = time.monotonic() - t0
    print("  dead detected after %.2fs" % took)
    check(len(alive(st)) == 3, "3 alive")
    check(st["resources_total"]["CPU"] == 7, "CPU total after death %r" %
          st["resources_total"])
    check(st["resources_total"]["disk"] == 6, "disk total after death")

    # Restart the head: kill it, start a new one on the same port.
    head_pid = read_pid(dirs["127.0.0.1"], "head")
    os.kill(head_pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(head_pid), 5, "old head gone")
    run(["start", "--head", "--no-worker", "--port", str(port), "--node-ip",
         "127.0.0.1", "--temp-dir", dirs["127.0.0.1"]])

    def whole():
        st = status(address=addr)
        return st if len(alive(st)) == 3 else None
    st = wait_until(whole, 10.0, "three live workers back after restart")
    check(st["resources_total"]["CPU"] == 7, "CPU after restart %r" %
          st["resources_total"])
    ips = sorted(n["node_ip"] for n in alive(st))
    check(ips == ["127.0.0.1", "127.0.0.2", "127.0.0.4"], "ips %s" % ips)

    # manta stop on every temp dir leaves no manta process.
    pids = [read_pid(d, n) for d in dirs.values() for n in ("worker", "head")]
    pids = [p for p in pids if p]
    for d in dirs.values():
        run(["stop", "--temp-dir", d])
    for p in pids:
        check(not pid_alive(p), "pid %d still running after stop" % p)
    r = run(["status", "--address", addr], check=False)
    check(r.returncode != 0, "status after stop should fail")


def test_graceful_stop_marks_node_dead_at_once():
    addr, port, dirs = start_cluster(FAST)
    run(["stop", "--temp-dir", dirs["127.0.0.2"]])
    st = status(address=addr)
    n = [x for x in st["nodes"] if x["node_ip"] == "127.0.0.2"][0]
    check(n["state"] == "DEAD", "stopped worker state %s" % n["state"])
    check("stopped" in n["death_reason"], n["death_reason"])


if __name__ == "__main__":
    main([test_four_nodes_kill_restart_stop,
          test_graceful_stop_marks_node_dead_at_once])
