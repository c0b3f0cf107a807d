"""test_dashboard.py -- the head's HTTP dashboard (on by default;
`--dashboard-port`, `--no-dashboard`):
the page with its script and style (head/www/, compiled into the head:
what is served is what the files hold, with the right content types, and
the page loads nothing else), /api/cluster_status (the same JSON as
`manta status --format json`) and Prometheus /metrics; 404/405 answers;
garbage, oversize, slow and too many clients get a 4xx or a close while
the head keeps serving rpc; a taken dashboard port given by flag fails the
start with nothing left running; --no-dashboard serves none; the head stops cleanly with dashboard connections
open.
"""
import http.client
import json
import os
import re
import resource
import socket
import ssl
import subprocess
import time

from harness import (BIN, FAST, MANTA, TOKEN, check, free_port, main,
                     new_dir, pid_alive, read_pid, run, status, wait_until)

GIB = 1 << 30
WWW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "head", "www")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


# The cluster token of the head serving each dashboard port, sent by get()
# unless told otherwise (the head keeps a new one in <temp-dir>/token).
TOKENS = {}


def token_of(d):
    with open(os.path.join(d, "token")) as f:
        return f.read().strip()


def start_head(tag, extra=()):
    """Head + worker on 127.0.0.1 with a dashboard; RET (dir, addr, dport)."""
    port, dport = free_port(), free_port()
    d = new_dir(tag)
    out = run(["start", "--head", "--port", str(port), "--dashboard-port",
               str(dport), "--node-ip", "127.0.0.1", "--temp-dir", d,
               "--num-cpus", "3", "--memory", "1GiB", "--resources",
               '{"accel": 2}', "--labels", "role=head"] + FAST +
              list(extra)).stdout
    url = "http://127.0.0.1:%d" % dport
    check("Dashboard: " + url in out, "start summary: %r" % out)
    with open(os.path.join(d, "dashboard.addr")) as f:
        check(f.read().strip() == url, "dashboard.addr")
    TOKENS[dport] = token_of(d)
    return d, "127.0.0.1:%d" % port, dport


def get(dport, path, method="GET", body=None, headers=None, auth=True):
    """One request; with auth, the head's token as a bearer header.
    RET (status, {lowercase header: value}, body)."""
    c = http.client.HTTPConnection("127.0.0.1", dport, timeout=10)
    hdrs = dict(headers or {})
    if auth and dport in TOKENS:
        hdrs.setdefault("Authorization", "Bearer " + TOKENS[dport])
    try:
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        c.close()


def answers(dport, path):
    """True when path answers 200; a connection the server drops (e.g.
    while it is still over its connection cap) counts as not yet."""
    try:
        return get(dport, path)[0] == 200
    except (OSError, http.client.HTTPException):
        return False


def raw(dport, data, shut=False, timeout=10):
    """Send raw bytes; RET what came back before the server closed."""
    s = socket.create_connection(("127.0.0.1", dport), timeout=timeout)
    try:
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except OSError:  # the server may answer and close mid-send
            pass
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        return got
    finally:
        s.close()


def status_code(resp):
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", resp)
    return int(m.group(1)) if m else None


def metrics(dport):
    """Parse /metrics; RET {(name, frozenset(labels)): value}."""
    code, hdr, body = get(dport, "/metrics")
    check(code == 200, "/metrics %d" % code)
    check(hdr["content-type"].startswith("text/plain; version=0.0.4"),
          hdr["content-type"])
    typed, out = set(), {}
    for line in body.decode().splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
            continue
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        check(m, "bad metrics line %r" % line)
        name, labels = m.group(1), m.group(3) or ""
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        check(name in typed or base in typed,
              "%s has no TYPE line before it" % name)
        pairs = LABEL.findall(labels)
        check("".join('%s="%s"%s' % p for p in pairs) == labels,
              "bad labels %r" % labels)
        key = (name, frozenset((k, v) for k, v, _ in pairs))
        check(key not in out, "duplicate sample %r" % line)
        out[key] = float(m.group(4))
    return out


def sample(ms, name, **labels):
    return ms.get((name, frozenset(labels.items())))


def www(name):
    """The bytes of head/www/NAME, which the head must serve as they are."""
    with open(os.path.join(WWW, name), "rb") as f:
        return f.read()


def check_page(dport):
    """/ and /index.html serve head/www/index.html; what the page loads is
    the head's own /app.js and /style.css, each served as its file with
    its content type (GET and HEAD)."""
    code, hdr, page = get(dport, "/")
    check(code == 200 and hdr["content-type"] == "text/html; charset=utf-8",
          "/ %d %r" % (code, hdr))
    check(b"<table" in page and page == www("index.html"),
          "/ is not head/www/index.html")
    check(get(dport, "/index.html")[1:] == (hdr, page), "/index.html")
    check(hdr.get("connection") == "close", "Connection: close")
    # Nothing from elsewhere (air-gapped clusters): only the head's assets.
    refs = re.findall(rb'<(?:script|link|img)[^>]+(?:src|href)="([^"]*)"',
                      page)
    check(sorted(refs) == [b"/app.js", b"/style.css"],
          "the page loads %r" % refs)
    for path, ctype in (("/app.js", "text/javascript; charset=utf-8"),
                        ("/style.css", "text/css; charset=utf-8")):
        body = www(path[1:])
        code, hdr, got = get(dport, path)
        check(code == 200 and hdr["content-type"] == ctype,
              "%s %d %r" % (path, code, hdr))
        check(got == body, "%s is not head/www%s" % (path, path))
        code, hdr, got = get(dport, path, method="HEAD")
        check(code == 200 and got == b"" and
              int(hdr["content-length"]) == len(body), "HEAD %s" % path)
        check(get(dport, path + "/x")[0] == 404, "%s/x" % path)
    check(b"'/api/cluster_status'" in www("app.js"),
          "the script does not poll /api/cluster_status")


def head_ok(d, addr):
    check(pid_alive(read_pid(d, "head")), "head died")
    st = status(address=addr)
    check(len(st["nodes"]) >= 1, "status after abuse: %r" % st)


def stop_clean(d):
    run(["stop", "--temp-dir", d])
    with open(os.path.join(d, "logs", "head.log")) as f:
        log = f.read()
    for bad in ("handles still open", "Sanitizer", "runtime error"):
        check(bad not in log, "head log has %r:\n%s" % (bad, log[-3000:]))


def test_routes():
    d, addr, dport = start_head("dash")
    st = status(address=addr)

    check_page(dport)

    code, hdr, body = get(dport, "/api/cluster_status")
    check(code == 200 and hdr["content-type"] == "application/json",
          "/api %d %r" % (code, hdr))
    js = json.loads(body)
    for k in ("cluster_id", "head_address", "head_version",
              "resources_total"):
        check(js[k] == st[k], "%s: %r vs %r" % (k, js[k], st[k]))
    check(sorted(n["node_id"] for n in js["nodes"]) ==
          sorted(n["node_id"] for n in st["nodes"]), "node ids")
    tot = js["resources_total"]
    check(tot["CPU"] == 3 and tot["memory"] == GIB and tot["accel"] == 2,
          "totals %r" % tot)
    n = js["nodes"][0]
    check(n["state"] == "ALIVE" and n["labels"]["role"] == "head", n)
    check(set(n) == set(st["nodes"][0]), "node keys differ from the CLI's")

    ms = metrics(dport)
    nid = n["node_id"]
    check(sample(ms, "manta_cluster_nodes", state="ALIVE") == 1, "ALIVE")
    check(sample(ms, "manta_cluster_nodes", state="DEAD") == 0, "DEAD")
    check(sample(ms, "manta_cluster_resources", resource="CPU",
                 kind="total") == 3, "cluster CPU total")
    check(sample(ms, "manta_cluster_resources", resource="accel",
                 kind="available") == 2, "cluster accel available")
    check(sample(ms, "manta_cluster_resources", resource="memory",
                 kind="total") == GIB, "cluster memory")
    check(sample(ms, "manta_node_resources", node_id=nid, resource="CPU",
                 kind="total") == 3, "node CPU")
    check(sample(ms, "manta_node_memory_total_bytes", node_id=nid) > 0, "mem")
    cpu = sample(ms, "manta_node_cpu_utilization_ratio", node_id=nid)
    check(cpu is not None and 0 <= cpu <= 1, "cpu %r" % cpu)
    check(sample(ms, "manta_head_uptime_seconds") > 0, "uptime")

    # Task counters move with a task.
    ended = sample(ms, "manta_tasks_ended_total")
    check(ended is not None and sample(ms, "manta_tasks", state="RUNNING")
          == 0, "task metrics %r" % ended)
    run(["submit", "--address", addr, "--", "true"])
    ms = metrics(dport)
    check(sample(ms, "manta_tasks_ended_total") == ended + 1, "ended + 1")
    check(sample(ms, "manta_tasks_dispatched_total") >= 1, "dispatched")

    # HEAD, a query string, unknown paths and other methods.
    code, hdr, body = get(dport, "/metrics", method="HEAD")
    check(code == 200 and body == b"" and int(hdr["content-length"]) > 0,
          "HEAD /metrics")
    check(get(dport, "/metrics?x=1")[0] == 200, "query string")
    check(get(dport, "/nope")[0] == 404, "unknown path")
    check(get(dport, "/api/cluster_status/x")[0] == 404, "sub path")
    code, hdr, _ = get(dport, "/metrics", method="POST", body=b"x" * 5000)
    check(code == 405 and "GET" in hdr.get("allow", ""), "POST %d" % code)
    check(get(dport, "/", method="DELETE")[0] == 405, "DELETE")
    head_ok(d, addr)
    stop_clean(d)


def test_bad_clients():
    d, addr, dport = start_head("dashbad")
    cases = [
        ("binary garbage", b"\x00\x01\x02\xff garbage\r\n\r\n", (400,)),
        ("garbage without line end", b"\x16\x03\x01\x02\x00", (400,)),
        ("not http", b"GET / FOO/9\r\n\r\n", (400,)),
        ("relative target", b"GET metrics HTTP/1.1\r\n\r\n", (400,)),
        ("bad header", b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", (400,)),
        ("oversize header", b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 20000 +
         b"\r\n\r\n", (413,)),
        ("long method", b"A" * 100 + b" / HTTP/1.1\r\n\r\n", (400,)),
    ]
    for what, data, want in cases:
        resp = raw(dport, data)
        code = status_code(resp)
        check(code in want or resp == b"", "%s: got %r" % (what, resp[:80]))
        print("  %s -> %s" % (what, code or "closed"))
    # A request cut short by the client's EOF.
    check(status_code(raw(dport, b"GET / HT", shut=True)) == 400,
          "truncated request")
    # A whole request followed by EOF still gets its answer.
    check(status_code(raw(dport, b"GET /metrics HTTP/1.0\r\n"
                          b"Authorization: Bearer " +
                          TOKENS[dport].encode() + b"\r\n\r\n",
                          shut=True)) == 200, "request then EOF")
    head_ok(d, addr)

    # A slow client is answered 408 after about 3 s.
    t0 = time.monotonic()
    resp = raw(dport, b"GET / HTTP/1.1\r\nHost: x\r\n", timeout=15)
    took = time.monotonic() - t0
    check(status_code(resp) == 408 and 2 < took < 8,
          "slow client: %r after %.1fs" % (resp[:40], took))

    # Stop while a client is half-way through a request.
    s = socket.create_connection(("127.0.0.1", dport))
    s.sendall(b"GET / HTTP/1.1\r\n")
    try:
        stop_clean(d)
    finally:
        s.close()


def unauthorized(dport, path, method="GET", accept=None, **kw):
    """What path answers without (or with a wrong) credential."""
    hdrs = dict(kw.pop("headers", {}))
    if accept:
        hdrs["Accept"] = accept
    return get(dport, path, method=method, headers=hdrs, auth=False, **kw)


def check_denied(dport, tok):
    """Every route (404 paths too) wants the token; a wrong token, a wrong
    cookie and no credential get the same answer."""
    html = "text/html,application/xhtml+xml,*/*;q=0.8"
    for path in ("/", "/index.html", "/app.js", "/style.css",
                 "/api/cluster_status", "/metrics", "/nope", "/metrics?x=1"):
        for accept in (None, html):
            none = unauthorized(dport, path, accept=accept)
            code, hdr, body = none
            check(code == 401 and hdr.get("www-authenticate") ==
                  'Bearer realm="manta"', "%s: %d %r" % (path, code, hdr))
            if accept:
                check(hdr["content-type"].startswith("text/html") and
                      body == www("login.html"), "%s: login page" % path)
            elif path.startswith("/api/"):
                check(json.loads(body)["error"] == "unauthorized", body)
            else:
                check(hdr["content-type"].startswith("text/plain"), hdr)
            for wrong in ({"Authorization": "Bearer " + tok[:-1] + "x"},
                          {"Authorization": "Bearer " + tok + "0"},
                          {"Authorization": "Basic " + tok},
                          {"Cookie": "manta_token=" + tok[::-1]},
                          {"Cookie": "other=" + tok}):
                got = unauthorized(dport, path, accept=accept, headers=wrong)
                check(got[0] == none[0] and got[2] == none[2],
                      "%s with %r: %r" % (path, wrong, got[:1]))
    check(unauthorized(dport, "/", method="HEAD")[0] == 401, "HEAD /")
    check(unauthorized(dport, "/metrics", method="POST",
                       body=b"x" * 100)[0] == 401, "POST without token")
    check(get(dport, "/metrics", method="POST", body=b"x")[0] == 405,
          "POST with token")


def cookie_of(hdr, secure=False):
    """The token cookie a 303 sets, checked for its attributes."""
    c = hdr.get("set-cookie", "")
    attrs = [a.strip() for a in c.split(";")]
    want = {"Path=/", "HttpOnly", "SameSite=Strict"} | (
        {"Secure"} if secure else set())
    check(set(attrs[1:]) == want, "cookie attributes %r" % c)
    check(attrs[0].startswith("manta_token="), c)
    return attrs[0]


def check_links_and_login(dport, tok):
    """?token= links and the login page set the cookie, which then works."""
    for path, loc in (("/?token=" + tok, "/"),
                      ("/metrics?x=1&token=%s&y=2" % tok, "/metrics?x=1&y=2"),
                      ("//evil.example/?token=" + tok, "/"),
                      ("/login?token=" + tok, "/")):
        code, hdr, _ = unauthorized(dport, path)
        check(code == 303 and hdr.get("location") == loc,
              "%s: %d %r" % (path.replace(tok, "T"), code, hdr))
        cookie = cookie_of(hdr)
    check(unauthorized(dport, "/?token=wrong" + tok)[0] == 401, "bad link")
    for path in ("/", "/metrics", "/api/cluster_status"):
        check(unauthorized(dport, path, headers={"Cookie": "a=b; " + cookie})
              [0] == 200, "cookie on " + path)
    code, hdr, page = unauthorized(dport, "/login")
    check(code == 200 and page == www("login.html") and
          b'action="/login"' in page and b"<script" not in page and
          b"http" not in page.split(b"-->", 1)[1], "login page")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    code, hdr, _ = unauthorized(dport, "/login", method="POST",
                                body="token=" + tok, headers=form)
    check(code == 303 and hdr.get("location") == "/", "login %d" % code)
    cookie_of(hdr)
    for body in ("token=nope", "", "x=" + tok):
        check(unauthorized(dport, "/login", method="POST", body=body,
                           headers=form)[0] == 401, "login with %r" % body)
    check(unauthorized(dport, "/login", method="POST", body="x" * 5000,
                       headers=form)[0] == 413, "oversize login form")


def test_auth():
    d, addr, dport = start_head("dashauth")
    tok = TOKENS[dport]
    check_denied(dport, tok)
    check_links_and_login(dport, tok)
    with open(os.path.join(d, "logs", "head.log")) as f:
        check(tok not in f.read(), "the token is in the head's log")
    stop_clean(d)


def test_bind_host():
    """The dashboard binds 127.0.0.1, not the rpc's --node-ip, unless
    --dashboard-host says otherwise."""
    port, dport = free_port(), free_port()
    d = new_dir("dashhost")
    run(["start", "--head", "--no-worker", "--port", str(port),
         "--dashboard-port", str(dport), "--node-ip", "127.0.0.3",
         "--temp-dir", d])
    with open(os.path.join(d, "dashboard.addr")) as f:
        check(f.read().strip() == "http://127.0.0.1:%d" % dport,
              "dashboard.addr")
    TOKENS[dport] = token_of(d)
    check(get(dport, "/metrics")[0] == 200, "on 127.0.0.1")
    try:
        socket.create_connection(("127.0.0.3", dport), timeout=5).close()
        check(False, "the dashboard answers on the rpc's address")
    except ConnectionRefusedError:
        pass
    stop_clean(d)


class Slow:
    """A slowloris client: a request sent one byte a second from src (a
    loopback address), reconnecting whenever the head drops it."""
    REQ = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200

    def __init__(self, src, dport):
        self.src, self.dport, self.s, self.pos = src, dport, None, 0
        self.reconnects = 0

    def tick(self):
        try:
            if self.s is None:
                self.s = socket.socket()
                self.s.bind((self.src, 0))
                self.s.settimeout(2)
                self.s.connect(("127.0.0.1", self.dport))
                self.s.setblocking(False)
                self.pos = 0
            self.s.send(self.REQ[self.pos:self.pos + 1])
            self.pos = (self.pos + 1) % len(self.REQ)
        except OSError:
            self.close()
            self.reconnects += 1

    def close(self):
        if self.s is not None:
            self.s.close()
            self.s = None


def caps(d):
    """The caps the head logged: (connections, per address)."""
    with open(os.path.join(d, "logs", "head.log")) as f:
        m = re.search(r"at most (\d+) connections, (\d+) per client",
                      f.read())
    check(m, "no caps in the head's log")
    return int(m.group(1)), int(m.group(2))


SLOW_SECONDS = 8


def test_slow_clients():
    """150 slowloris clients on 127.0.0.1 (the address the normal requests
    come from) and more than the per-address cap on 127.0.0.2, each
    sending a byte a second for 8 s (past the 3 s header deadline twice):
    all 16 normal requests meanwhile succeed. The head runs with 4096 descriptors (caps 1024 / 256)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lim = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (lim, hard))

    port, dport = free_port(), free_port()
    d = new_dir("dashslow")
    p = subprocess.run([MANTA, "start", "--head", "--no-worker", "--port",
                        str(port), "--dashboard-port", str(dport),
                        "--node-ip", "127.0.0.1", "--temp-dir", d],
                       capture_output=True, text=True, timeout=30,
                       preexec_fn=limit)
    check(p.returncode == 0, "start: %s%s" % (p.stdout, p.stderr))
    TOKENS[dport] = token_of(d)
    total, per_addr = caps(d)
    check(150 < per_addr and per_addr + 200 < total,
          "caps %d/%d" % (total, per_addr))
    slow = [Slow("127.0.0.1", dport) for _ in range(150)]
    slow += [Slow("127.0.0.2", dport) for _ in range(per_addr + 50)]
    failed, done = [], 0
    try:
        t0 = time.monotonic()
        for second in range(SLOW_SECONDS):
            for c in slow:
                c.tick()
            for _ in range(2):
                try:
                    code = get(dport, "/metrics")[0]
                except (OSError, http.client.HTTPException) as e:
                    code = repr(e)
                done += 1
                if code != 200:
                    failed.append((second, code))
            # the next second (the only pacing: one byte a second)
            time.sleep(max(0.0, t0 + second + 1 - time.monotonic()))
    finally:
        for c in slow:
            c.close()
    print("  %d normal requests, %d failed; slow clients reconnected %d "
          "times" % (done, len(failed), sum(c.reconnects for c in slow)))
    check(done == 2 * SLOW_SECONDS and not failed, "normal requests failed: %r" % failed)
    with open(os.path.join(d, "logs", "head.log")) as f:
        check("closing the oldest unanswered" in f.read(),
              "the per-address cap was not hit")
    check(pid_alive(read_pid(d, "head")), "head died")
    stop_clean(d)


def make_certs(d):
    """A throwaway CA and a server certificate for IP 127.0.0.1 signed by
    it, made with the openssl command. RET (ca, cert, key) paths."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), check=True, cwd=d,
                       capture_output=True, timeout=30)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    ossl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem",
         "-days", "1", "-subj", "/CN=manta test CA")
    ossl("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj",
         "/CN=127.0.0.1")
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    ossl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey",
         "ca.key", "-CAcreateserial", "-out", "srv.pem", "-days", "1",
         "-extfile", "ext")
    return [os.path.join(d, n) for n in ("ca.pem", "srv.pem", "srv.key")]


def https_get(dport, ca, path, headers=None):
    ctx = ssl.create_default_context(cafile=ca)
    c = http.client.HTTPSConnection("127.0.0.1", dport, timeout=10,
                                    context=ctx)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def test_tls():
    """With --tls-cert/--tls-key the dashboard serves HTTPS (verified
    against the CA), still wants the token, sets a Secure cookie, and
    closes connections that do not speak TLS."""
    d = new_dir("dashtls")
    ca, cert, key = make_certs(d)
    port, dport = free_port(), free_port()
    log = open(os.path.join(d, "head.out"), "w")
    p = subprocess.Popen([os.path.join(BIN, "manta-head"), "--temp-dir", d,
                          "--port", str(port), "--node-ip", "127.0.0.1",
                          "--dashboard-port", str(dport), "--tls-cert", cert,
                          "--tls-key", key, "--tls-ca", ca],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: os.path.exists(os.path.join(d, "head.addr")) or
                   p.poll() is not None, 20, "head.addr")
        with open(os.path.join(d, "dashboard.addr")) as f:
            check(f.read().strip() == "https://127.0.0.1:%d" % dport,
                  "dashboard.addr")
        tok = TOKEN  # manta-head takes the harness's MANTA_AUTH_TOKEN
        bearer = {"Authorization": "Bearer " + tok}
        code, hdr, body = https_get(dport, ca, "/metrics", bearer)
        check(code == 200 and b"manta_head_info" in body, "https /metrics")
        check(https_get(dport, ca, "/")[0] == 401, "https without token")
        code, hdr, _ = https_get(dport, ca, "/api/cluster_status?token=" + tok)
        check(code == 303 and hdr["location"] == "/api/cluster_status",
              "https link %d" % code)
        cookie = cookie_of(hdr, secure=True)
        check(https_get(dport, ca, "/api/cluster_status",
                        {"Cookie": cookie})[0] == 200, "https cookie")
        for junk in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                     b"\x16\x03\x01\x00\x05hello" + b"\xff" * 300):
            check(raw(dport, junk) == b"", "not TLS: %r" % junk[:12])
        # A client that does not trust the certificate fails, the head
        # does not mind.
        try:
            https_get(dport, None, "/metrics", bearer)
            check(False, "unverified certificate accepted")
        except ssl.SSLError:
            pass
        check(https_get(dport, ca, "/metrics", bearer)[0] == 200, "after")
    finally:
        p.terminate()
        p.wait(timeout=20)
        log.close()
    with open(os.path.join(d, "head.out")) as f:
        out = f.read()
    for bad in ("handles still open", "Sanitizer", "runtime error"):
        check(bad not in out, "head output has %r:\n%s" % (bad, out[-3000:]))


def test_dead_node_in_metrics():
    d, addr, dport = start_head("dashdead")
    w = new_dir("dashw")
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         w, "--num-cpus", "2"] + FAST[:2])
    ms = metrics(dport)
    check(sample(ms, "manta_cluster_nodes", state="ALIVE") == 2, "2 alive")
    check(sample(ms, "manta_cluster_resources", resource="CPU",
                 kind="total") == 5, "CPU 5")
    run(["stop", "--temp-dir", w])
    ms = metrics(dport)
    check(sample(ms, "manta_cluster_nodes", state="DEAD") == 1, "1 dead")
    check(sample(ms, "manta_cluster_resources", resource="CPU",
                 kind="total") == 3, "CPU back to 3")
    ups = {dict(k[1])["node_id"]: v for k, v in ms.items()
           if k[0] == "manta_node_up"}
    check(sorted(ups.values()) == [0, 1], "node_up %r" % ups)
    js = json.loads(get(dport, "/api/cluster_status")[2])
    check(sorted(n["state"] for n in js["nodes"]) == ["ALIVE", "DEAD"],
          "states in JSON")
    stop_clean(d)


def test_bad_port_and_taken_port():
    for args in (["--dashboard-port", "70000"], ["--dashboard-port", "x"]):
        p = run(["start", "--head"] + args, check=False)
        check(p.returncode == 2, "%s exited %d" % (args, p.returncode))
    p = run(["start", "--address", "127.0.0.1:1", "--dashboard-port", "0"],
            check=False)
    check(p.returncode == 2, "--dashboard-port without --head")
    p = subprocess.run([os.path.join(BIN, "manta-head"), "--dashboard-port",
                        "-1"], capture_output=True, text=True, timeout=10)
    check(p.returncode == 2, "manta-head --dashboard-port -1")
    p = subprocess.run([os.path.join(BIN, "manta-head"), "--help"],
                       capture_output=True, text=True, timeout=10)
    check("--dashboard-port" in p.stdout, "manta-head --help")

    # The dashboard port is taken: the start fails, nothing stays up.
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    try:
        d = new_dir("dashtaken")
        p = run(["start", "--head", "--port", str(free_port()),
                 "--dashboard-port", str(blocker.getsockname()[1]),
                 "--node-ip", "127.0.0.1", "--temp-dir", d,
                 "--start-timeout", "10"], check=False)
        check(p.returncode != 0, "start over a taken dashboard port")
        check(not pid_alive(read_pid(d, "head")), "head left running")
        check(not os.path.exists(os.path.join(d, "head.addr")), "head.addr")
    finally:
        blocker.close()

    # With --no-dashboard nothing is served and no file is written.
    d = new_dir("nodash")
    out = run(["start", "--head", "--no-worker", "--port", str(free_port()),
               "--node-ip", "127.0.0.1", "--temp-dir", d,
               "--no-dashboard"]).stdout
    check("Dashboard" not in out, out)
    check(not os.path.exists(os.path.join(d, "dashboard.addr")),
          "dashboard.addr without a dashboard")
    stop_clean(d)


if __name__ == "__main__":
    main([test_routes, test_auth, test_bind_host, test_bad_clients,
          test_slow_clients, test_tls, test_dead_node_in_metrics,
          test_bad_port_and_taken_port])
