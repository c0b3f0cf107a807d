#!/usr/bin/python3
"""task_cpu.py -- what one task costs in CPU time, process by process: the
head, the worker, its executors and the driver. CPU time per task hardly
depends on what else the machine runs, so it compares builds on a busy
machine where tasks/s cannot.

Starts a head+worker on 127.0.0.1 (--num-cpus CPUS, a dashboard for the
task counter), runs `manta-microbenchmark --address ... --only METRIC`,
and divides each process's user+system CPU time over the run by the tasks
that ended (manta_tasks_ended_total on /metrics). Prints one line per
process group (the driver's includes its connect and warm-up) and the
tasks/s the run measured.

usage: bench/task_cpu.py [--build DIR] [--cpus N] [--seconds S]
                         [--metric NAME]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "..", "tests", "integration"))


def cpu_ticks(pid):
    """utime+stime of pid in clock ticks; 0 when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def children(pid):
    """Pids whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return out


def ended(dport, token):
    """manta_tasks_ended_total from /metrics (the dashboard wants the
    cluster token)."""
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % dport,
                                 headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("manta_tasks_ended_total "):
                return int(line.split()[1])
    raise RuntimeError("no manta_tasks_ended_total on /metrics")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--metric", default="single_client_tasks_async")
    a = ap.parse_args()
    bindir = os.path.abspath(os.path.join(ROOT, "..", a.build, "bin"))
    os.environ["MANTA_BIN_DIR"] = bindir
    import harness
    from harness import free_port, new_dir, read_pid, run

    port, dport = free_port(), free_port()
    d = new_dir("taskcpu")
    try:
        run(["start", "--head", "--port", str(port), "--dashboard-port",
             str(dport), "--node-ip", "127.0.0.1", "--temp-dir", d,
             "--num-cpus", str(a.cpus)])
        head = read_pid(d, "head")
        worker = read_pid(d, "worker")
        time.sleep(1)  # executors started
        groups = {"head": [head], "worker": [worker],
                  "executors": children(worker)}
        before = {g: sum(cpu_ticks(p) for p in ps) for g, ps in groups.items()}
        with open(os.path.join(d, "token")) as f:
            token = f.read().strip()
        n0 = ended(dport, token)
        t0 = time.monotonic()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(
            [os.path.join(bindir, "manta-microbenchmark"), "--address", "127.0.0.1:%d" % port, "--only", a.metric,
             "--seconds", str(a.seconds), "--json"],
            capture_output=True, text=True, timeout=300)
        wall = time.monotonic() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        n = ended(dport, token) - n0
        after = {g: sum(cpu_ticks(p) for p in ps) for g, ps in groups.items()}
        if p.returncode != 0 or n <= 0:
            sys.exit("microbenchmark failed (%d tasks): %s" % (n, p.stderr))
        rate = json.loads(p.stdout)[a.metric]["value"]
        hz = os.sysconf("SC_CLK_TCK")
        print("%s: %d tasks in %.1f s, %.0f tasks/s (median of the "
              "microbenchmark's trials)" % (a.metric, n, wall, rate))
        total = 0.0
        for g in groups:
            us = (after[g] - before[g]) * 1e6 / hz / n
            total += us
            print("  %-10s %7.1f us CPU per task" % (g, us))
        drv = ((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime))
        print("  %-10s %7.1f us CPU per task" % ("driver", drv * 1e6 / n))
        print("  %-10s %7.1f us CPU per task" % ("all", total + drv * 1e6 / n))
    finally:
        harness.cleanup()


if __name__ == "__main__":
    main()
