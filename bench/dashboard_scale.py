#!/usr/bin/python3
"""dashboard_scale.py -- the dashboard at scale (issue 16, item 5): a real
manta-head (memory storage, dashboard on an ephemeral port) with
manta-node-sim registering N fake nodes and T tasks in its task table,
then how fast every dashboard route answers and how soon the page is
usable, and what the head's memory is before and after.

No make needed: build, then run it with Debian's python3 (stdlib only,
plus the SDK's own ctypes binding in sdk/python):

    cmake -S . -B build && cmake --build build -j
    /usr/bin/python3 bench/dashboard_scale.py                  # 1000 nodes, 100000 tasks
    /usr/bin/python3 bench/dashboard_scale.py --nodes 200 --tasks 20000 --json

What it does, in order:
  1. manta-head --port 0 --storage memory --dashboard-port 0 and
     --keep-finished-tasks (the head forgets ended tasks beyond 10,000 by
     default, head/task_table.h; the flag raises that so the table really
     holds T tasks); its VmRSS (/proc/PID/status) empty.
  2. manta-node-sim --nodes N (4 CPUs, 8 GiB each); VmRSS with the nodes.
  3. T command tasks submitted through libmanta (the Python binding's
     Client.submit, batched by the SDK): every 1/share-th asks for
     {"CPU": 1000}, which no node has, so it stays PENDING (infeasible);
     the rest (1 CPU) run on the simulated nodes, which finish a task as
     soon as it arrives. Waits until the head counts no running task and
     exactly the infeasible ones pending. VmRSS with the tasks.
  4. Every route of the /api contract (docs/dashboard.md), /metrics, /
     and /app.js: --requests sequential GETs each (a new connection per
     request, the token as a bearer header), p50/p95/max latency. A route
     that does not answer 200 is printed with its status (e.g. 404 on a
     head without that route) and not timed.
  5. "Page usable": headless chromium driven over --remote-debugging-pipe
     (the DevTools protocol, stdlib only), the cache disabled, the token
     as the page's cookie; for each of #/cluster, #/nodes, #/tasks: load
     about:blank, then the view, and time until
     document.documentElement.dataset.ready names the view (the page
     contract). "n/a" when there is no chromium or the head serves a page
     without that contract.
  6. VmRSS after the requests. Everything started is stopped, the temp
     dir removed.

Prints a table, or with --json one JSON object. Results: bench/RESULTS.md,
"Issue 16: the dashboard at scale".
"""
import argparse
import http.client
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from cdp import Browser, find_chromium  # noqa: E402 (the browser test's)
PROCS = []                       # everything started, stopped at the end
VIEWS = ("cluster", "nodes", "tasks")


# ---- processes -------------------------------------------------------------

def stop_all():
    for p in reversed(PROCS):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in reversed(PROCS):
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    PROCS.clear()


def deaths(log):
    """Nodes the head declared DEAD (a stalled head misses reports)."""
    try:
        with open(log, errors="replace") as f:
            return sum(1 for line in f if " node dead " in line)
    except OSError:
        return 0


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def wait_for(pred, timeout, what, interval=0.05):
    t0 = time.monotonic()
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() - t0 > timeout:
            raise RuntimeError("timed out after %ds waiting for %s" %
                               (timeout, what))
        time.sleep(interval)


def start_head(bindir, tmp, keep, head_flags):
    d = os.path.join(tmp, "head")
    os.makedirs(d)
    log = open(os.path.join(tmp, "head.log"), "w")
    p = subprocess.Popen(
        [os.path.join(bindir, "manta-head"), "--port", "0", "--node-ip",
         "127.0.0.1", "--temp-dir", d, "--storage", "memory",
         "--dashboard-port", "0", "--keep-finished-tasks", str(keep),
         "--log-level", "warn"] + head_flags, stdout=log, stderr=log)
    PROCS.append(p)

    def up():
        if p.poll() is not None:
            raise RuntimeError("manta-head exited %d (see %s/head.log)" %
                               (p.returncode, tmp))
        return os.path.exists(os.path.join(d, "head.addr"))
    wait_for(up, 30, "head.addr")
    read = lambda name: open(os.path.join(d, name)).read().strip()
    return p, d, read("head.addr"), read("dashboard.addr"), read("token")


def start_sim(bindir, addr, nodes, token_file):
    p = subprocess.Popen(
        [os.path.join(bindir, "manta-node-sim"), "--address", addr,
         "--nodes", str(nodes), "--token-file", token_file],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    PROCS.append(p)
    got = [b""]

    def registered():
        if p.poll() is not None:
            raise RuntimeError("manta-node-sim exited %d" % p.returncode)
        if select.select([p.stdout], [], [], 0.1)[0]:
            got[0] += os.read(p.stdout.fileno(), 4096)
        return b"nodes registered" in got[0]
    wait_for(registered, 60 + nodes // 50, "the nodes to register")
    return p


# ---- http ------------------------------------------------------------------

class Http:
    """GETs on the dashboard with the token; a new connection each."""

    def __init__(self, url, token):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port
        self.token = token

    def get(self, path):
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            c.request("GET", path, headers={
                "Authorization": "Bearer " + self.token})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def json(self, path):
        status, body = self.get(path)
        return json.loads(body) if status == 200 else None


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))]


def time_route(h, path, n):
    status, body = h.get(path)
    if status != 200:
        return {"route": path, "status": status}
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        status, body = h.get(path)
        ms.append((time.perf_counter() - t0) * 1000)
        if status != 200:
            return {"route": path, "status": status}
    return {"route": path, "status": 200, "n": n, "bytes": len(body),
            "p50_ms": round(pct(ms, 50), 2), "p95_ms": round(pct(ms, 95), 2),
            "max_ms": round(max(ms), 2)}


def routes(node, task, pending):
    """Every route of the contract (docs/dashboard.md), filled in."""
    return [
        "/api/cluster_status",
        "/api/history",
        "/api/history?node=%s" % node,
        "/api/nodes",
        "/api/nodes?state=ALIVE&limit=1000",
        "/api/nodes/%s" % node,
        "/api/accelerators",
        "/api/tasks",
        "/api/tasks?state=PENDING",
        "/api/tasks?state=FINISHED&offset=1000",
        "/api/tasks?node=%s" % node,
        "/api/tasks?name=scale-1",
        "/api/actors",
        "/api/placement_groups",
        "/api/gangs",
        "/api/objects",
        "/api/logs?task=%s" % task,
        "/api/logs?task=%s" % pending,
        "/metrics",
        "/",
        "/app.js",
    ]


# ---- filling the task table ------------------------------------------------

def fill(h, addr, head_dir, bindir, tasks, share):
    """Submit tasks through libmanta; RET (ids, seconds to submit, seconds
    until settled, pending count)."""
    sys.path.insert(0, os.path.join(ROOT, "sdk", "python"))
    os.environ.setdefault("MANTA_LIB", os.path.join(os.path.dirname(bindir),
                                                    "lib"))
    import manta  # the SDK's ctypes binding
    every = max(1, int(round(1 / share))) if share > 0 else 0
    pending = sum(1 for i in range(tasks) if every and i % every == 0)
    ids = {}
    c = manta.Client(addr, temp_dir=head_dir)
    t0 = time.monotonic()
    try:
        for i in range(tasks):
            stuck = every and i % every == 0
            t = c.submit(["true"], name="scale-%d" % i,
                         resources={"CPU": 1000 if stuck else 1})
            if i < 2 or (stuck and "pending" not in ids):
                ids["pending" if stuck else "finished"] = t.id
            t.release()
        t_sub = time.monotonic() - t0

        def settled():
            try:
                st = h.json("/api/cluster_status")
            except (OSError, http.client.HTTPException):
                return False  # a busy head: ask again
            return (st and st["running_tasks"] == 0 and
                    st["pending_tasks"] == pending)
        wait_for(settled, 120 + tasks // 200, "the tasks to settle")
    finally:
        c.close()
    return ids, t_sub, time.monotonic() - t0, pending


def count_tasks(bindir, addr, head_dir, state):
    """How many tasks in state the head's table holds (`manta list`)."""
    p = subprocess.run(
        [os.path.join(bindir, "manta"), "list", "tasks", "--address", addr,
         "--temp-dir", head_dir, "--state", state, "--limit", "1",
         "--format", "json"], capture_output=True, text=True, timeout=60,
        check=True)
    return json.loads(p.stdout)["total"]


# ---- the page, in headless chromium ---------------------------------------

def page_times(url, token, tmp, runs):
    """RET {view: {"median_ms", "max_ms", "rows"}} or a string saying why
    not measured."""
    exe = find_chromium()
    if not exe:
        return "n/a (no chromium)"
    b = Browser(exe, os.path.join(tmp, "chrome"))
    out = {}
    try:
        b.call("Network.enable")
        b.call("Network.setCacheDisabled", cacheDisabled=True)
        b.call("Network.setCookie", name="manta_token", value=token,
               url=url + "/", httpOnly=True)
        for view in VIEWS:
            ms = []
            for _ in range(runs):
                b.call("Page.navigate", url="about:blank")
                wait_for(lambda: b.eval("location.href") == "about:blank",
                         30, "about:blank")
                t0 = time.perf_counter()
                b.call("Page.navigate", url=url + "/#/" + view)
                wait_for(lambda: b.ready() == view, 30,
                         "#/%s to be ready" % view, interval=0.005)
                ms.append((time.perf_counter() - t0) * 1000)
            rows = b.eval("document.querySelectorAll('[data-id]').length")
            out[view] = {"median_ms": round(statistics.median(ms), 1),
                         "max_ms": round(max(ms), 1), "rows": rows,
                         "runs": runs}
    finally:
        b.close()
    return out


def page_contract(h):
    """The page sets dataset.ready (helper C's single-page app)."""
    status, body = h.get("/app.js")
    return status == 200 and b"dataset.ready" in body


# ---- report ----------------------------------------------------------------

def print_table(r):
    print("dashboard_scale: %d nodes, %d tasks (%d finished, %d pending "
          "infeasible), %d requests per route; machine: %d cores, load %s" %
          (r["nodes"], r["tasks"], r["tasks"] - r["pending"], r["pending"],
           r["requests"], os.cpu_count(), r["load"]))
    print("fill: libmanta took the submits in %.1f s and the head had "
          "settled them after %.1f s (%.0f tasks/s end to end); the head's "
          "table: %d finished, %d pending, %d failed" %
          (r["submit_s"], r["settle_s"], r["tasks"] / max(r["settle_s"],
                                                          1e-9),
           r["table"]["finished"], r["table"]["pending"],
           r["table"]["failed"]))
    rss = r["rss_mib"]
    print("head VmRSS: empty %.1f MiB, %d nodes %.1f MiB, + %d tasks "
          "%.1f MiB, after the requests %.1f MiB" %
          (rss["empty"], r["nodes"], rss["nodes"], r["tasks"], rss["tasks"],
           rss["after"]))
    print("nodes declared DEAD during the run (reports missed while the "
          "head was busy; each re-registers): %d" % r["nodes_declared_dead"])
    print()
    w = max(len(x["route"]) for x in r["routes"])
    print("%-*s  %6s  %8s  %8s  %8s  %9s" % (w, "route", "status", "p50 ms",
                                             "p95 ms", "max ms", "bytes"))
    for x in r["routes"]:
        if x["status"] != 200:
            print("%-*s  %6s" % (w, x["route"], x["status"]))
            continue
        print("%-*s  %6d  %8.2f  %8.2f  %8.2f  %9d" %
              (w, x["route"], 200, x["p50_ms"], x["p95_ms"], x["max_ms"],
               x["bytes"]))
    print()
    if isinstance(r["page"], str):
        print("page usable: %s" % r["page"])
        return
    for view in VIEWS:
        p = r["page"][view]
        print("page usable #/%-8s median %7.1f ms  max %7.1f ms  (%d loads, "
              "%s rows)" % (view, p["median_ms"], p["max_ms"], p["runs"],
                            p["rows"]))


def run(a):
    bindir = os.path.abspath(os.path.join(a.build, "bin"))
    tmp = tempfile.mkdtemp(prefix="manta-dash-scale-")
    r = {"nodes": a.nodes, "tasks": a.tasks, "requests": a.requests,
         "rss_mib": {}}
    try:
        head, head_dir, addr, url, token = start_head(
            bindir, tmp, max(10000, a.tasks + a.tasks // 5),
            a.head_flags.split())
        h = Http(url, token)
        r["rss_mib"]["empty"] = rss_mib(head.pid)
        start_sim(bindir, addr, a.nodes, os.path.join(head_dir, "token"))
        wait_for(lambda: len((h.json("/api/cluster_status") or {})
                             .get("nodes", [])) == a.nodes, 60,
                 "the head to list every node")
        r["rss_mib"]["nodes"] = rss_mib(head.pid)
        ids, r["submit_s"], r["settle_s"], r["pending"] = fill(
            h, addr, head_dir, bindir, a.tasks, a.pending_share)
        r["rss_mib"]["tasks"] = rss_mib(head.pid)
        r["table"] = {st.lower(): count_tasks(bindir, addr, head_dir, st)
                      for st in ("FINISHED", "PENDING", "FAILED")}
        r["load"] = open("/proc/loadavg").read().split()[0]
        r["routes"] = [time_route(h, p, a.requests) for p in
                       routes("sim-00000", ids.get("finished", ""),
                              ids.get("pending", ""))]
        if a.no_browser:
            r["page"] = "n/a (--no-browser)"
        elif not page_contract(h):
            r["page"] = "n/a (the head's page does not set dataset.ready)"
        else:
            r["page"] = page_times(url, token, tmp, a.page_runs)
        r["rss_mib"]["after"] = rss_mib(head.pid)
        r["rss_mib"] = {k: round(v, 1) for k, v in r["rss_mib"].items()}
    finally:
        stop_all()
        r["nodes_declared_dead"] = deaths(os.path.join(tmp, "head.log"))
        if a.keep:
            print("kept %s (head.log)" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build dir holding bin/ and lib/ (default: build)")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--tasks", type=int, default=100000)
    ap.add_argument("--pending-share", type=float, default=0.1,
                    help="share of the tasks left pending (infeasible)")
    ap.add_argument("--requests", type=int, default=200,
                    help="timed GETs per route")
    ap.add_argument("--page-runs", type=int, default=5,
                    help="page loads per view")
    ap.add_argument("--head-flags", default="",
                    help='more manta-head flags, e.g. "--report-period-ms '
                    '5000 --node-timeout-ms 15000"')
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temp dir (head.log) for a look")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if (a.nodes < 1 or a.tasks < 0 or a.requests < 1 or a.page_runs < 1
            or not 0 <= a.pending_share <= 1):
        ap.error("--nodes, --requests and --page-runs must be positive, "
                 "--pending-share between 0 and 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    r = run(a)
    if a.json:
        print(json.dumps(r, indent=1))
    else:
        print_table(r)


if __name__ == "__main__":
    main()
