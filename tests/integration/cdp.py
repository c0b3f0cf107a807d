"""cdp.py -- headless chromium driven over the DevTools protocol on
--remote-debugging-pipe, with the Python standard library only: chromium
reads our commands on its fd 3 and writes answers and events on its fd 4,
each a JSON text ending in a NUL byte. Shared by the dashboard's browser
test (test_dashboard_browser.py) and its scale bench
(bench/dashboard_scale.py); it imports nothing of the test harness.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import time


def find_chromium():
    """Debian's chromium (or another Chromium-based browser), or None."""
    exe = os.environ.get("MANTA_CHROMIUM")
    if exe:
        return exe if os.access(exe, os.X_OK) else None
    for name in ("chromium", "chromium-headless-shell",
                 "chrome-headless-shell", "google-chrome", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _high_fd(fd):
    """A copy of fd numbered 10 or more, so dup2 onto 3/4 cannot clash."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


class Browser:
    """Headless chromium on --remote-debugging-pipe, attached to its one
    page. call() sends a command and returns its result; events are
    dropped, but the page's uncaught exceptions are kept in errors.
    Everything it starts ends in close(). Failures raise AssertionError."""

    def __init__(self, exe, profile, width=1400, height=900):
        cmd_r, self.cmd_w = os.pipe()     # we write, chromium reads fd 3
        self.res_r, res_w = os.pipe()     # chromium writes fd 4, we read

        def child_fds():
            a, b = _high_fd(cmd_r), _high_fd(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
        os.makedirs(profile, exist_ok=True)
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--disable-sync", "--disable-component-update",
             "--disable-dev-shm-usage", "--mute-audio",
             "--window-size=%d,%d" % (width, height), "about:blank"],
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
            self._attach(width, height)
        except BaseException:
            self.close()
            raise

    def _attach(self, width, height):
        targets = self.call("Target.getTargets", timeout=30)["targetInfos"]
        pages = [t for t in targets if t["type"] == "page"]
        tid = pages[0]["targetId"] if pages else self.call(
            "Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=tid,
                                 flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

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

    def ready(self):
        """The view the page says it has drawn (the page contract,
        docs/dashboard.md), or ''."""
        return self.eval("(document.documentElement || {dataset: {}})"
                         ".dataset.ready || ''")  # null while navigating

    def wait_ready(self, view, timeout=15, interval=0.1):
        deadline = time.monotonic() + timeout
        while self.ready() != view:
            if time.monotonic() > deadline:
                raise AssertionError("view %s not ready in %ds (err: %s)" %
                                     (view, timeout, self._err()))
            time.sleep(interval)

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

    def screenshot(self, path):
        """Save the page as a PNG at path; RET path."""
        png = self.call("Page.captureScreenshot", format="png")["data"]
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
