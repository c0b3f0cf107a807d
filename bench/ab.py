#!/usr/bin/python3
"""ab.py -- is a change slower? `manta microbenchmark --json` of two builds,
run alternately (A B A B ...) so that whatever else the machine does hits
both alike, then the median of each metric per build and their ratio.

Two ratios per metric: of the medians, and the median of each round's
B/A (paired: a machine whose speed drifts during the sitting moves both
runs of a round alike). A metric whose paired ratio is under 0.95 is
marked; with N=3 on a 2-core VM the run-to-run spread is often 10-20 %, so
re-run the marked metrics alone (--only) with a larger N before believing
them.

usage: bench/ab.py BUILD_A BUILD_B [--runs N] [--only NAME,...]
                   [--seconds S] [--keep DIR]
e.g.   git worktree add /tmp/base main~5 && (cd /tmp/base && make build)
       bench/ab.py /tmp/base/build build --runs 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_once(build, only, seconds, extra=()):
    """One `manta microbenchmark --json` of build (extra: more flags)."""
    cmd = [os.path.join(build, "bin", "manta"), "microbenchmark", "--json"]
    cmd += list(extra)
    if only:
        cmd += ["--only", only]
    if seconds:
        cmd += ["--seconds", str(seconds)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=1800)
    if p.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(cmd), p.returncode,
                                          p.stderr[-2000:]))
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--keep", default="", help="write each run's JSON here")
    args = ap.parse_args()
    results = {"a": [], "b": []}
    for i in range(args.runs):
        for side in ("a", "b"):
            r = run_once(getattr(args, side), args.only, args.seconds)
            results[side].append(r)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                with open(os.path.join(args.keep, "%s.%d.json" % (side, i + 1)),
                          "w") as f:
                    json.dump(r, f)
            print("run %d %s done" % (i + 1, side), file=sys.stderr)
    print("%-36s %14s %14s %7s %7s" % ("metric (median of %d)" % args.runs,
                                       "A", "B", "B/A", "paired"))
    for name, first in results["a"][0].items():
        if not first:
            continue
        va = statistics.median(r[name]["value"] for r in results["a"])
        vb = statistics.median(r[name]["value"] for r in results["b"])
        ratio = vb / va if va else float("nan")
        paired = statistics.median(
            b[name]["value"] / a[name]["value"] if a[name]["value"] else
            float("nan") for a, b in zip(results["a"], results["b"]))
        print("%-36s %14.4g %14.4g %7.2f %7.2f%s" % (
            name, va, vb, ratio, paired, "  <" if paired < 0.95 else ""))


if __name__ == "__main__":
    main()
