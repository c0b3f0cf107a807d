"""test_dashboard_browser.py -- the dashboard (head/www/, the single-page
app) in a real headless browser against a live cluster.

The cluster is accel_cluster.py's head (with a dashboard port) and three of
its workers: the two hosts of fake TPU slice-a (a0, a1) and the node with
eight stub-NVML GPUs. On it run: a task holding one GPU that prints a line
and sleeps, a detached actor (actor_driver, the counter of
examples/c/counter_lib.c), a placement group with a GPU bundle, and a
host-launched gang over slice-a (gang_member.py sleep).

One Debian /usr/bin/chromium (headless, its own profile in a temp dir) is
driven over the DevTools protocol on --remote-debugging-pipe (fd 3: our
commands, fd 4: its answers, NUL-delimited JSON; stdlib only, class
Browser). Without the token, / shows the login form. With it, the test
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
import base64
import fcntl
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

from accel_cluster import AccelCluster
from harness import (BIN, TOKEN, check, free_port, main, new_dir,
                     wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = os.environ.get("MANTA_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = os.path.normpath(os.path.join(BIN, "..", "artifacts",
                                          "dashboard"))
LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
MEMBER = [sys.executable, os.path.join(HERE, "gang_member.py")]
W, H = 1400, 900


# ---- the browser --------------------------------------------------------

def _high_fd(fd):
    """A copy of fd numbered 10 or more, so dup2 onto 3/4 cannot clash."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


class Browser:
    """Headless chromium on --remote-debugging-pipe, attached to its one
    page. call() sends a command and returns its result; events are
    dropped. Everything it starts ends in close()."""

    def __init__(self, profile):
        cmd_r, self.cmd_w = os.pipe()     # we write, chromium reads fd 3
        self.res_r, res_w = os.pipe()     # chromium writes fd 4, we read

        def child_fds():
            a, b = _high_fd(cmd_r), _high_fd(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--disable-sync", "--disable-component-update",
             "--disable-dev-shm-usage", "--mute-audio",
             "--window-size=%d,%d" % (W, H), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(profile, "chromium.log"), "w"),
            preexec_fn=child_fds, pass_fds=(3, 4), start_new_session=True)
        os.close(cmd_r)
        os.close(res_w)
        self.buf = b""
        self.next_id = 0
        self.session = None
        self.errors = []  # uncaught exceptions of the page's script
        try:
            self._attach()
        except BaseException:
            self.close()
            raise

    def _attach(self):
        targets = self.call("Target.getTargets", timeout=30)["targetInfos"]
        pages = [t for t in targets if t["type"] == "page"]
        tid = pages[0]["targetId"] if pages else self.call(
            "Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=tid,
                                 flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=W, height=H,
                  deviceScaleFactor=1, mobile=False)

    def _read_msg(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("chromium: no answer in time")
            r, _, _ = select.select([self.res_r], [], [], left)
            if r:
                chunk = os.read(self.res_r, 1 << 20)
                if not chunk:
                    raise AssertionError("chromium closed its pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, timeout=20, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.cmd_w, data):]
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_msg(deadline)
            if m.get("method") == "Runtime.exceptionThrown":
                d = m["params"]["exceptionDetails"]
                self.errors.append((d.get("exception") or {}).get(
                    "description") or d.get("text"))
            if m.get("id") != self.next_id:
                continue  # an event, or a late answer
            if "error" in m:
                raise AssertionError("%s: %s" % (method, m["error"]))
            return m.get("result", {})

    def eval(self, expr):
        """The value of a JS expression (promises awaited)."""
        r = self.call("Runtime.evaluate", expression=expr,
                      returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise AssertionError("js %r: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def goto(self, url):
        """Navigate (a new document, or a new hash of this one) with the
        ready flag cleared first, so a wait never sees the last view's."""
        try:
            self.eval("delete document.documentElement.dataset.ready")
        except AssertionError:
            pass
        self.call("Page.navigate", url=url)

    def wait_ready(self, view, timeout=15):
        expr = "document.documentElement.dataset.ready || ''"
        wait_until(lambda: self.eval(expr) == view, timeout,
                   "view %s ready (err: %s)" % (view, self._err()), 0.1)

    def _err(self):
        try:
            return self.eval("(document.getElementById('err')||{})"
                             ".textContent")
        except AssertionError as e:
            return str(e)

    def text(self, sel="main"):
        return self.eval("(document.querySelector(%s)||{}).textContent||''"
                         % json.dumps(sel))

    def ids(self):
        """Every data-id on the page."""
        return set(self.eval("[...document.querySelectorAll('[data-id]')]"
                             ".map(e => e.dataset.id)"))

    def screenshot(self, name):
        os.makedirs(ARTIFACTS, exist_ok=True)
        png = self.call("Page.captureScreenshot", format="png")["data"]
        path = os.path.join(ARTIFACTS, name + ".png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))
        return path

    def close(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for fd in (self.cmd_w, self.res_r):
            try:
                os.close(fd)
            except OSError:
                pass


# ---- the cluster and what runs on it ------------------------------------

def port_block(n=32):
    """n consecutive ports free on 127.0.0.1 now, for --gang-ports."""
    for base in range(24000, 40000, 613):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return base, base + n - 1
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free port block")


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
                self.shots.append(self.b.screenshot(name))
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
    lo, hi = port_block()
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
            b = Browser(profile)
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
    if not os.access(CHROMIUM, os.X_OK):
        print("SKIP: %s is not installed (deploy/install-deps.sh installs "
              "chromium)" % CHROMIUM)
        sys.exit(77)
    main([test_dashboard_in_browser])
