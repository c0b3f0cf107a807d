#!/usr/bin/python3
"""storage_ab.py -- what durability costs: `manta microbenchmark --json`
on a local cluster whose head keeps its state in memory, in the default
file (`file://`), and in a Redis of our own (AOF on, `appendfsync
everysec`), run in rounds (memory, file, redis, memory, ...) so that
whatever else the machine does hits all three alike; then the median of
each metric per backend and its ratio to memory. Issue 15's target: every
metric within 10 % of memory (ratio >= 0.90).

usage: bench/storage_ab.py [--build DIR] [--runs N] [--only NAME,...]
                           [--seconds S] [--backends memory,file,redis]
"""
import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from ab import run_once  # the suite once, as ab.py runs it


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """A redis-server on a free port, AOF on, in a temp dir."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="manta-ab-redis-")
        self.port = free_port()
        self.p = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "yes", "--appendfsync",
             "everysec", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            r = subprocess.run(["redis-cli", "-p", str(self.port), "PING"],
                               capture_output=True, text=True)
            if r.stdout.strip() == "PONG":
                return
            time.sleep(0.1)
        sys.exit("redis-server did not start")

    def flush(self):
        subprocess.run(["redis-cli", "-p", str(self.port), "FLUSHALL"],
                       capture_output=True)

    def stop(self):
        self.p.kill()
        self.p.wait()
        subprocess.run(["rm", "-rf", self.dir])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--backends", default="memory,file,redis")
    a = ap.parse_args()
    backends = a.backends.split(",")
    redis = Redis() if "redis" in backends else None
    res = {b: {} for b in backends}
    try:
        for r in range(a.runs):
            for b in backends:
                spec = {"memory": "memory", "file": None}.get(b)
                if b == "redis":
                    redis.flush()
                    spec = "redis://127.0.0.1:%d" % redis.port
                out = run_once(a.build, a.only, a.seconds,
                               ["--storage", spec] if spec else [])
                for k, v in out.items():
                    if v:
                        res[b].setdefault(k, []).append(v["value"])
                print("round %d %s done" % (r + 1, b), file=sys.stderr)
    finally:
        if redis:
            redis.stop()
    metrics = sorted(set().union(*[set(res[b]) for b in backends]))
    head = "| metric | " + " | ".join(backends) + " | " + " | ".join(
        "%s/memory" % b for b in backends if b != "memory") + " |"
    print(head)
    print("|" + "---|" * (1 + 2 * len(backends) - 1))
    for m in metrics:
        med = {b: statistics.median(res[b][m]) if res[b].get(m) else None
               for b in backends}
        row = "| %s | " % m + " | ".join(
            "%.1f" % med[b] if med[b] is not None else "-" for b in backends)
        ratios = []
        for b in backends:
            if b == "memory":
                continue
            if med.get("memory") and med[b] is not None:
                ratio = med[b] / med["memory"]
                ratios.append("%.2f%s" % (ratio, " *" if ratio < 0.9 else ""))
            else:
                ratios.append("-")
        print(row + " | " + " | ".join(ratios) + " |")
    print("\n(* below 0.90: more than 10 % slower than memory)")


if __name__ == "__main__":
    main()
