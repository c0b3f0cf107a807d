"""test_dashboard_browser.py -- the dashboard (head/www/, the single-page
app) in a real headless browser against a live cluster.

The cluster is accel_cluster.py's head (with a dashboard port) and three of
its workers: the two hosts of fake TPU slice-a (a0, a1) and the node with
eight stub-NVML GPUs. On it run: a task holding one GPU that prints a line
and sleeps, a detached actor (actor_driver, the counter of
examples/c/counter_lib.c), a placement group with a GPU bundle, and a
host-launched gang over slice-a (gang_member.py sleep).

One Debian /usr/bin/chromium (headless, its own profile in a temp dir) is
driven over the DevTools protocol on --remote-debugging-pipe (cdp.py,
stdlib only, shared with bench/dashboard_scale.py). Without the token, / shows the login form. With it, the test
opens each view (#/cluster, #/nodes, #/nodes/ID, #/accelerators, #/tasks,
#/actors, #/placement_groups, #/gangs, #/objects, #/logs/TASK_ID), waits
for document.documentElement.dataset.ready to name the view (the page's
contract: app.js sets it once the view has drawn its first data), checks
through the DOM (Runtime.evaluate) that what runs is shown (rows carry
data-id), and saves a 1400x900 PNG of each view under
<build>/artifacts/dashboard/ (printed at the end).

The views other than the cluster and nodes ones read /api routes added by
the dashboard issue (head/api.c); on a head without them a view shows the
error instead of data, and the test reports that view as failing.

Exits 77 (skipped, SKIP_RETURN_CODE) when chromium is not installed.
"""
import json
import os
import subprocess
import sys

from accel_cluster import AccelCluster
from cdp import Browser, find_chromium
from harness import (BIN, TOKEN, check, free_port, free_port_block, main,
                     new_dir, wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = find_chromium()
ARTIFACTS = os.path.normpath(os.path.join(BIN, "..", "artifacts",
                                          "dashboard"))
LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
MEMBER = [sys.executable, os.path.join(HERE, "gang_member.py")]
W, H = 1400, 900


# ---- the cluster and what runs on it ------------------------------------

def start_work(c, d):
    """The task, actor, placement group and gang; RET their ids."""
    got = {}
    got["task"] = c.cli(
        "submit", "--no-wait", "--num-cpus", "1", "--num-gpus", "1",
        "--name", "dash-task", "--", "sh", "-c",
        "echo hello-from-the-dashboard-test; exec sleep 120",
        check=True).stdout.strip()
    p = subprocess.run(
        [os.path.join(BIN, "actor_driver"), c.address, LIB_DIR, "create",
         "dash-actor", "1", "0", "1", "libexample_counter.so:counter_new"],
        capture_output=True, text=True, timeout=60)
    lines = dict(l.split(" ", 1) for l in p.stdout.splitlines() if " " in l)
    check(p.returncode == 0 and "id" in lines, "actor: %s%s" % (p.stdout,
                                                               p.stderr))
    got["actor"] = lines["id"].strip()
    got["pg"] = c.cli("placement-group", "create", "--name", "dash-pg",
                      "--bundles", '[{"CPU": 1, "GPU": 1}]', "--wait", "30",
                      check=True).stdout.strip().split()[-1]
    got["gang"] = c.cli("submit", "--no-wait", "--tpu", "v4-16", "--launch",
                        "host", "--name", "dash-gang", "--", *MEMBER, d,
                        "sleep", "120", check=True).stdout.strip()

    def running():
        st = c.status()
        return st.get("running_tasks", 0) >= 3  # the task + 2 members
    wait_until(running, 30, "task and gang members running")
    return got


def gang_tasks(c, gid):
    p = c.cli("gang", "get", gid, "--format", "json", check=True)
    return [m["task_id"] for m in json.loads(p.stdout).get("members", [])]


# ---- the views ----------------------------------------------------------

class Views:
    """One browser on one dashboard; each check opens a view, waits until
    it is ready, checks the DOM and takes its screenshot. A failing view
    is recorded and the others still run."""

    def __init__(self, b, url):
        self.b = b
        self.url = url
        self.failed = []
        self.shots = []

    def open(self, route, view):
        self.b.goto(self.url + "/#/" + route)
        self.b.wait_ready(view)

    def check(self, name, route, view, fn):
        try:
            self.open(route, view)
            fn()
        except AssertionError as e:
            self.failed.append("%s: %s" % (name, e))
            print("  view %s: FAIL %s" % (name, e), flush=True)
        else:
            print("  view %s: ok" % name, flush=True)
        finally:
            try:
                os.makedirs(ARTIFACTS, exist_ok=True)
                self.shots.append(self.b.screenshot(
                    os.path.join(ARTIFACTS, name + ".png")))
            except AssertionError:
                pass


def check_login(b, url):
    """Without the token, / is the login page: its form posts the token."""
    b.goto(url + "/")
    wait_until(lambda: b.eval("!!document.querySelector("
                              "'form[action=\"/login\"] "
                              "input[name=token]')"), 15, "the login form")
    check("token" in b.text("body"), "login page text")
    check(b.eval("document.documentElement.dataset.ready") is None,
          "the app must not run without the token")


def run_views(b, url, c, ids):
    v = Views(b, url)
    gpu_node = c.nodes["gpu"].node_id
    members = gang_tasks(c, ids["gang"])

    def has(*want):
        def fn():
            wait_until(lambda: all(x in b.ids() for x in want), 10,
                       "rows %r in %r" % (want, b.ids()))
        return fn

    def cluster():
        t = b.text()
        for word in ("CPU", "GPU", "TPU chips", "Object store"):
            check(word in t, "cluster view lacks %s" % word)
        check(b.eval("document.querySelectorAll('#totals tr').length") >= 5,
              "totals table")

    def nodes():
        has(*[n.node_id for n in c.nodes.values()])()
        check("slice-a" in b.text(), "TPU slice membership")

    def node():
        has(ids["task"])()  # its running task, listed on its page
        check("NVIDIA H200" in b.text(), "per-GPU table")

    def accel():
        has(ids["task"], ids["pg"])()  # the holders' table
        t = b.text()
        check("dash-task" in t and "dash-pg" in t, "GPU holders: %r" % t)
        hosts = b.eval("[...document.querySelectorAll('[data-holders]')]"
                       ".filter(e => !e.dataset.id.includes('/'))"
                       ".map(e => e.dataset.holders)")
        check("slice-a" in t and len(hosts) == 2 and
              all(ids["gang"] in h for h in hosts),
              "the gang is not the holder of slice-a's hosts: %r" % hosts)

    def listed():
        check(b.eval("!!document.querySelector('table.list')") and
              not b._err(), "no listing: %s" % b._err())

    def logs():
        wait_until(lambda: "hello-from-the-dashboard-test" in b.text("#log"),
                   10, "the task's output")

    v.check("cluster", "cluster", "cluster", cluster)
    v.check("nodes", "nodes", "nodes", nodes)
    v.check("node", "nodes/" + gpu_node, "node", node)
    v.check("accelerators", "accelerators", "accelerators", accel)
    v.check("tasks", "tasks", "tasks", has(ids["task"], *members))
    v.check("tasks_running", "tasks?state=RUNNING", "tasks",
            has(ids["task"]))
    v.check("actors", "actors", "actors", has(ids["actor"]))
    v.check("placement_groups", "placement_groups", "placement_groups",
            has(ids["pg"]))
    v.check("gangs", "gangs", "gangs", has(ids["gang"], *members))
    v.check("objects", "objects", "objects", listed)
    v.check("logs", "logs/" + ids["task"], "logs", logs)
    print("screenshots: %s" % ARTIFACTS, flush=True)
    check(not b.errors, "the page threw: %r" % b.errors)
    check(not v.failed, "views failed:\n  " + "\n  ".join(v.failed))


def test_dashboard_in_browser():
    lo, hi = free_port_block(32)
    dport = free_port()
    d = new_dir("dash-browser")
    profile = os.path.join(d, "chromium")
    os.makedirs(profile)
    b = None
    with AccelCluster(only=("a0", "a1", "gpu"), num_cpus=4,
                      head_args=["--dashboard-port", str(dport),
                                 "--gang-ports", "%d-%d" % (lo, hi)]) as c:
        try:
            ids = start_work(c, d)
            b = Browser(CHROMIUM, profile, W, H)
            url = "http://127.0.0.1:%d" % dport
            check_login(b, url)
            # ?token= is swapped for the cookie by a 303 to /.
            b.goto(url + "/?token=" + TOKEN)
            b.wait_ready("cluster")
            run_views(b, url, c, ids)
        finally:
            if b:
                b.close()


if __name__ == "__main__":
    if not CHROMIUM:
        print("SKIP: no chromium (deploy/install-deps.sh installs Debian's; "
              "MANTA_CHROMIUM names another)")
        sys.exit(77)
    main([test_dashboard_in_browser])
