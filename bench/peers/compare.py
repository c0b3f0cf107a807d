#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""compare.py -- `make bench-peers`: Manta and dask.distributed side by side.

Runs `manta microbenchmark --json` (which starts and stops its own local
cluster) and bench/peers/dask_microbenchmark.py --json (its own dask
LocalCluster) --runs times each, alternating, with the same --seconds and
--only, then prints one Markdown table: per metric the median over the
runs of each side's value, and manta/dask. A metric that is n/a or failed
on either side shows "n/a" there and no ratio; the reasons are listed
under the table.

Before running it makes sure of its two inputs: python3-distributed (by
deploy/install-deps.sh --bench, which installs only what is missing;
--no-install skips that) and the manta binary (--manta PATH, or
BUILD/bin/manta, configured and built when missing).

usage: compare.py [--manta PATH | --build DIR] [--runs N] [--seconds S]
                  [--only NAME,...] [--save DIR] [--no-install]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DASK_SUITE = os.path.join(ROOT, "bench", "peers", "dask_microbenchmark.py")
PY = "/usr/bin/python3"
sys.path.insert(0, os.path.dirname(DASK_SUITE))
import dask_microbenchmark  # noqa: E402  (the metric names; no dask needed)     # Debian's python, where python3-distributed is

# What a null from manta means (bench/microbenchmark.c gives the reason in
# text mode and on stderr only).
MANTA_NULL = "null from manta: not implemented yet, or failed (see above)"


def log(msg):
    print("compare: " + msg, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="compare.py",
        description="Run `manta microbenchmark` and the dask.distributed "
                    "suite side by side; print medians and manta/dask.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--manta", metavar="PATH",
                   help="the manta binary (default: BUILD/bin/manta)")
    g.add_argument("--build", metavar="DIR", default="build",
                   help="build dir, relative to the repo (default: build); "
                        "configured and built when it has no bin/manta")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="runs of each suite; the table shows medians "
                        "(default 1)")
    p.add_argument("--seconds", type=float, metavar="S",
                   help="trial length passed to both suites (default: "
                        "theirs, 2)")
    p.add_argument("--only", metavar="NAME,...",
                   help="metrics to run, passed to both suites")
    p.add_argument("--save", metavar="DIR",
                   help="keep each run's JSON in DIR")
    p.add_argument("--no-install", action="store_true",
                   help="do not run deploy/install-deps.sh --bench")
    a = p.parse_args(argv)
    if not 1 <= a.runs <= 50:
        p.error("--runs must be 1..50")
    if a.seconds is not None and not 0 < a.seconds <= 600:
        p.error("invalid --seconds %r (0 < S <= 600)" % a.seconds)
    names = [m[0] for m in dask_microbenchmark.METRICS]
    for n in (a.only or "").split(","):
        if n and n not in names:
            p.error("unknown metric '%s' (one of: %s)" % (n, ", ".join(names)))
    return a


def find_manta(a):
    """The manta binary to run, building it when needed; None on failure."""
    if a.manta:
        path = os.path.abspath(a.manta)
        if not os.access(path, os.X_OK):
            log("%s: not an executable" % path)
            return None
        return path
    build = os.path.join(ROOT, a.build)
    path = os.path.join(build, "bin", "manta")
    if not os.access(path, os.X_OK):
        log("building Manta in %s" % build)
        jobs = str(os.cpu_count() or 2)
        if subprocess.call(["cmake", "-S", ROOT, "-B", build],
                           stdout=subprocess.DEVNULL) != 0 or \
           subprocess.call(["cmake", "--build", build, "-j", jobs]) != 0:
            log("the build failed")
            return None
    return path


def suite_args(a):
    args = ["--json"]
    if a.seconds is not None:
        args += ["--seconds", repr(a.seconds)]
    if a.only:
        args += ["--only", a.only]
    return args


def run_suite(name, cmd):
    """Run one suite; RET (dict of metric -> value dict or None, status)."""
    log("running %s: %s" % (name, " ".join(cmd)))
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, cwd=ROOT)
    log("%s took %.0f s, exit status %d" % (name, time.monotonic() - t0,
                                           p.returncode))
    try:
        out = json.loads(p.stdout.decode() or "{}")
    except ValueError as e:
        log("%s printed no JSON (%s)" % (name, e))
        return {}, p.returncode or 1
    return out, p.returncode


def value_of(entry):
    """A suite's entry -> (value or None, unit or None, reason or None)."""
    if entry is None:
        return None, None, None
    return entry.get("value"), entry.get("unit"), entry.get("reason")


def fmt(v):
    if v is None:
        return "n/a"
    if v >= 100:
        return "{:,.0f}".format(v)
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def table(order, manta_runs, dask_runs):
    """Print the Markdown table, then the n/a reasons and, with more than one
    run, each side's min-max over the runs; RET the rows."""
    rows, notes, spread = [], [], []
    print("| metric | unit | manta | dask | manta/dask |")
    print("|---|---|---|---|---|")
    for m in order:
        med, unit = {}, None
        for side, runs in (("manta", manta_runs), ("dask", dask_runs)):
            vals, reasons = [], set()
            for r in runs:
                v, u, why = value_of(r.get(m))
                unit = unit or u
                if v is not None:
                    vals.append(v)
                elif m in r:
                    reasons.add(why or (MANTA_NULL if side == "manta"
                                        else "n/a"))
                else:
                    reasons.add("not run")
            med[side] = statistics.median(vals) if vals else None
            if len(vals) > 1:
                spread.append("%s %s" % (side, "-".join(
                    fmt(v) for v in (min(vals), max(vals)))))
            if len(vals) < len(runs):
                notes.append("%s, %s: n/a in %d of %d runs (%s)" % (
                    m, side, len(runs) - len(vals), len(runs),
                    "; ".join(sorted(reasons))))
        ratio = "-"
        if med["manta"] is not None and med["dask"]:
            r = med["manta"] / med["dask"]
            ratio = "{:,.0f}x".format(r) if r >= 100 else "%.2fx" % r
        print("| %s | %s | %s | %s | %s |" % (m, unit or "-", fmt(med["manta"]),
                                             fmt(med["dask"]), ratio))
        rows.append((m, unit, med["manta"], med["dask"]))
        if spread:
            notes.append("%s, range over the runs: %s" % (m, ", ".join(spread)))
            spread = []
    for n in notes:
        print("- " + n)
    return rows


def dask_version():
    """(Python version, distributed version) of PY, the interpreter that
    runs the dask suite (not necessarily the one running this script)."""
    p = subprocess.run([PY, "-c", "import platform, distributed; "
                        "print(platform.python_version(), "
                        "distributed.__version__)"],
                       capture_output=True, text=True)
    parts = p.stdout.split()
    if p.returncode != 0 or len(parts) != 2:
        return platform.python_version(), "(not installed)"
    return parts[0], parts[1]


def metric_order(runs):
    order = []
    for r in runs:
        for m in r:
            if m not in order:
                order.append(m)
    return order


def main(argv):
    a = parse_args(argv)
    if not a.no_install:
        if subprocess.call([os.path.join(ROOT, "deploy", "install-deps.sh"),
                            "--bench"]) != 0:
            log("deploy/install-deps.sh --bench failed")
            return 1
    manta = find_manta(a)
    if manta is None:
        return 1
    if a.save:
        os.makedirs(a.save, exist_ok=True)
    load0 = os.getloadavg()
    manta_runs, dask_runs, status = [], [], 0
    for i in range(a.runs):
        for name, cmd, runs in (
                ("manta", [manta, "microbenchmark"] + suite_args(a),
                 manta_runs),
                ("dask", [PY, DASK_SUITE] + suite_args(a), dask_runs)):
            out, rc = run_suite("%s (run %d of %d)" % (name, i + 1, a.runs),
                                cmd)
            status = status or (1 if rc != 0 else 0)
            runs.append(out)
            if a.save:
                with open(os.path.join(a.save, "%s-%d.json" % (name, i + 1)),
                          "w") as f:
                    json.dump(out, f, indent=1)
    load1 = os.getloadavg()
    print("# manta vs dask.distributed: medians of %d run(s) each, %s"
          % (a.runs, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    print("# machine: %d cores, Linux %s; Python %s, distributed %s; load "
          "average %.1f at the start, %.1f at the end"
          % (os.cpu_count() or 0, platform.release(),
             *dask_version(), load0[0], load1[0]))
    print()
    order = metric_order(manta_runs + dask_runs)
    if a.only:  # manta always lists its unimplemented metrics
        order = [m for m in order if m in a.only.split(",")]
    table(order, manta_runs, dask_runs)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
