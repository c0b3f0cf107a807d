#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""smoke_test.py -- ctest `bench_peers_smoke`: the peer suite still works.

1. compare.py's table, fed runs with n/a on either side, prints medians,
   ratios only where both sides have a number, and the reasons (no dask
   needed).
2. dask_microbenchmark.py rejects bad arguments with status 2.
3. A --quick run of a few metrics on a real dask LocalCluster gives a
   positive rate in Manta's unit for each, and n/a with a reason for
   placement groups (2 workers; 5 s on a quiet machine).

Steps 2-3 need python3-distributed, which only deploy/install-deps.sh
--bench installs; without it the test exits 77, which ctest reports as
skipped. It never installs anything.
"""
import contextlib
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import dask_microbenchmark  # noqa: E402

SUITE = os.path.join(HERE, "dask_microbenchmark.py")
QUICK = ["single_client_tasks_sync", "single_client_tasks_async",
         "1_1_actor_calls_sync", "placement_group_create/removal"]
UNITS = {"single_client_tasks_sync": "tasks/s",
         "single_client_tasks_async": "tasks/s",
         "1_1_actor_calls_sync": "calls/s",
         "placement_group_create/removal": "groups/s"}


def check(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)
    print("ok: " + what)


def test_table():
    t = {"value": 100.0, "stdev": 1.0, "unit": "tasks/s"}
    manta = [{"a": dict(t, value=300.0), "b": None, "c": t},
             {"a": dict(t, value=100.0), "b": None, "c": t},
             {"a": dict(t, value=200.0), "b": None, "c": None}]
    dask = [{"a": dict(t, value=50.0), "b": t,
             "c": {"value": None, "unit": "x/s", "reason": "no such thing"}}] * 3
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rows = compare.table(["a", "b", "c"], manta, dask)
    text = out.getvalue()
    check(rows[0] == ("a", "tasks/s", 200.0, 50.0), "median of 3 runs")
    check("| a | tasks/s | 200 | 50.0 | 4.00x |" in text, "ratio printed")
    check("| b | tasks/s | n/a | 100 | - |" in text, "n/a on the manta side")
    check("| c | tasks/s | 100 | n/a | - |" in text, "n/a on the dask side")
    check("no such thing" in text and compare.MANTA_NULL in text,
          "reasons listed")
    check("a, range over the runs: manta 100-300, dask 50.0-50.0" in text,
          "ranges over the runs")


def run(args):
    return subprocess.run([sys.executable, SUITE] + args, timeout=120,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def main():
    test_table()
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("skipped: python3-distributed is not installed "
              "(deploy/install-deps.sh --bench)")
        return 77
    for bad in (["--only", "no_such_metric"], ["--seconds", "0"],
                ["--workers", "0"], ["--bogus"]):
        p = run(bad + ["--check"])
        check(p.returncode == 2 and p.stderr, "rejects %s" % " ".join(bad))
    p = run(["--quick", "--workers", "2", "--json", "--only", ",".join(QUICK)])
    check(p.returncode == 0, "quick run exits 0 (%s)" % p.stderr[-500:])
    out = json.loads(p.stdout)
    order = [m[0] for m in dask_microbenchmark.METRICS if m[0] in QUICK]
    check(list(out) == order, "every selected metric reported, in order")
    for name in QUICK[:-1]:
        e = out[name]
        check(e["value"] > 0 and e["stdev"] >= 0 and e["unit"] == UNITS[name],
              "%s = %.1f %s" % (name, e["value"], e["unit"]))
    pg = out["placement_group_create/removal"]
    check(pg["value"] is None and "placement groups" in pg["reason"],
          "placement groups n/a with a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
