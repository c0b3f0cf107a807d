"""test_metrics.py -- Prometheus metrics of a live cluster: the head's
/metrics (its dashboard) and each worker's own /metrics
(--metrics-port) pass `promtool check metrics` and carry the families
docs/dashboard.md lists, with task, rpc and process figures that move;
both ask for the cluster token (401 without it); <temp-dir>/prom_sd.json
lists the head and every alive worker (as `manta status` reports its
metrics_address) and is rewritten when a node joins or dies; with TLS
the worker's /metrics is HTTPS and the SD file says so; the Grafana
dashboard in deploy/observability/ parses and every panel's
query names only families the head or a worker exports, and every
family is on some panel; deploy/observability/prometheus.yml passes
`promtool check config`, and a real Prometheus run with it (pointed at
this cluster's temp dir) scrapes the head and the worker with the token
file.

Needs promtool and prometheus (Debian's prometheus package,
deploy/install-deps.sh).
"""
import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import tempfile

from harness import (FAST, MANTA, TOKEN, check, free_port, main, new_dir,
                     run, status, wait_until)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OBS = os.path.join(ROOT, "deploy", "observability")
GRAFANA = os.path.join(OBS, "grafana", "dashboards", "manta.json")

# Families every head must export (docs/dashboard.md), whatever runs.
HEAD_FAMILIES = {
    "manta_head_info", "manta_head_uptime_seconds", "manta_cluster_nodes",
    "manta_cluster_resources", "manta_node_up", "manta_node_resources",
    "manta_node_tpu_chips", "manta_node_cpu_utilization_ratio",
    "manta_node_memory_used_bytes", "manta_node_memory_total_bytes",
    "manta_node_disk_used_bytes", "manta_node_disk_total_bytes",
    "manta_node_network_receive_bytes_total",
    "manta_node_network_transmit_bytes_total",
    "manta_object_store_used_bytes", "manta_object_store_capacity_bytes",
    "manta_object_store_objects", "manta_object_store_spilled_bytes_total",
    "manta_object_store_evicted_bytes_total",
    "manta_object_store_restored_bytes_total", "manta_gpu_info",
    "manta_gpu_utilization_ratio", "manta_gpu_memory_used_bytes",
    "manta_gpu_memory_total_bytes", "manta_tasks",
    "manta_tasks_dispatched_total", "manta_tasks_ended_total",
    "manta_tasks_finished_total", "manta_tasks_failed_total",
    "manta_tasks_cancelled_total", "manta_tasks_retried_total",
    "manta_task_scheduling_latency_seconds", "manta_task_run_seconds",
    "manta_actors", "manta_placement_groups", "manta_gangs",
    "manta_gang_restarts_total", "manta_rpc_requests_total",
    "manta_rpc_latency_seconds", "manta_storage_healthy",
    "process_cpu_seconds_total", "process_resident_memory_bytes",
    "process_open_fds", "process_start_time_seconds",
}
WORKER_FAMILIES = {
    "manta_worker_info", "manta_node_cpu_utilization_ratio",
    "manta_node_memory_used_bytes", "manta_node_disk_used_bytes",
    "manta_node_network_receive_bytes_total", "manta_node_resources",
    "manta_object_store_used_bytes", "manta_object_store_capacity_bytes",
    "manta_object_store_objects", "manta_rpc_requests_total",
    "manta_rpc_latency_seconds", "process_cpu_seconds_total",
    "process_resident_memory_bytes", "process_open_fds",
    "process_start_time_seconds",
}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def start_cluster(tag, extra=()):
    """Head (with a dashboard) + worker on 127.0.0.1.
    RET (temp dir, rpc address, dashboard port)."""
    port, dport = free_port(), free_port()
    d = new_dir(tag)
    run(["start", "--head", "--port", str(port), "--dashboard-port",
         str(dport), "--node-ip", "127.0.0.1", "--temp-dir", d,
         "--num-cpus", "2", "--memory", "1GiB"] + FAST + list(extra))
    addr = "127.0.0.1:%d" % port
    wait_until(lambda: workers_in_sd(d), 10, "the worker in prom_sd.json")
    return d, addr, dport


def sd(d):
    """prom_sd.json as a list of target groups ([] while absent)."""
    try:
        with open(os.path.join(d, "prom_sd.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def workers_in_sd(d):
    return {g["labels"]["node_id"]: g["targets"][0] for g in sd(d)
            if g["labels"]["role"] == "worker"}


def get(hostport, path="/metrics", token=TOKEN, ca=None):
    """GET over HTTP (HTTPS verified against ca, when given); RET (status,
    content type, body text)."""
    host, port = hostport.rsplit(":", 1)
    if ca:
        c = http.client.HTTPSConnection(
            host, int(port), timeout=10,
            context=ssl.create_default_context(cafile=ca))
    else:
        c = http.client.HTTPConnection(host, int(port), timeout=10)
    hdrs = {"Authorization": "Bearer " + token} if token else {}
    try:
        c.request("GET", path, headers=hdrs)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read().decode()
    finally:
        c.close()


def scrape(hostport):
    """/metrics, checked by promtool. RET (text, {family: type},
    {(name, frozenset(labels)): value})."""
    code, ctype, text = get(hostport)
    check(code == 200, "%s/metrics: %d" % (hostport, code))
    check(ctype.startswith("text/plain; version=0.0.4"), ctype)
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "promtool check metrics on %s: %s%s" %
          (hostport, p.stdout, p.stderr))
    types, samples = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
        elif line and not line.startswith("#"):
            m = SAMPLE.match(line)
            check(m, "bad line %r" % line)
            labels = frozenset((k, v) for k, v, _ in
                               LABEL.findall(m.group(3) or ""))
            samples[(m.group(1), labels)] = float(m.group(4))
    return text, types, samples


def value(samples, name, **labels):
    """The sample of name whose labels include labels (None: none)."""
    want = set(labels.items())
    for (n, ls), v in samples.items():
        if n == name and want <= ls:
            return v
    return None


def test_head_and_worker_metrics():
    d, addr, dport = start_cluster("metrics")
    head = "127.0.0.1:%d" % dport
    (nid, waddr), = workers_in_sd(d).items()
    run(["submit", "--address", addr, "--", "true"])
    _, htypes, hs = scrape(head)
    missing = HEAD_FAMILIES - set(htypes)
    check(not missing, "head lacks %s" % sorted(missing))
    check(htypes["manta_task_run_seconds"] == "histogram" and
          htypes["manta_rpc_requests_total"] == "counter", "types")
    check(value(hs, "manta_tasks_finished_total") >= 1, "finished")
    check(value(hs, "manta_task_run_seconds_count") >= 1, "run time count")
    check(value(hs, "manta_task_scheduling_latency_seconds_bucket",
                le="+Inf") >= 1, "scheduling latency")
    check(value(hs, "manta_rpc_requests_total", method="RegisterNode",
                code="OK") >= 1, "head rpc counted")
    check(value(hs, "manta_node_memory_total_bytes", node_id=nid) > 0,
          "node memory")
    check(value(hs, "manta_node_disk_total_bytes", node_id=nid) > 0, "disk")
    check(value(hs, "manta_object_store_capacity_bytes", node_id=nid) > 0,
          "store capacity in the head's view")
    check(value(hs, "process_resident_memory_bytes") > 0, "head RSS")
    check(value(hs, "process_open_fds") > 0, "head fds")

    _, wtypes, ws = scrape(waddr)
    missing = WORKER_FAMILIES - set(wtypes)
    check(not missing, "worker lacks %s" % sorted(missing))
    check(value(ws, "manta_worker_info", node_id=nid) == 1, "worker info")
    check(value(ws, "manta_node_resources", node_id=nid, resource="CPU",
                kind="total") == 2, "worker CPU")
    check(value(ws, "manta_rpc_requests_total", method="RunTasks",
                code="OK") >= 1, "worker rpc counted")
    check(value(ws, "manta_object_store_capacity_bytes", node_id=nid) > 0,
          "worker store capacity")
    check(value(ws, "process_start_time_seconds") > 1e9, "start time")

    # The token is required on both; HEAD and unknown paths as usual.
    for hp in (head, waddr):
        check(get(hp, token=None)[0] == 401, "%s without token" % hp)
        check(get(hp, token="0" * 64)[0] == 401, "%s wrong token" % hp)
    check(get(waddr, "/nope")[0] == 404, "worker 404")


def test_tpu_chips():
    """A node's TPU chips, total and held, with its slice."""
    d, addr, dport = start_cluster(
        "metricstpu", ["--resources", '{"TPU": 4}', "--labels",
                       "manta.io/tpu-slice-name=s1"])
    (nid, _), = workers_in_sd(d).items()
    head = "127.0.0.1:%d" % dport

    def chips(kind):
        return value(scrape(head)[2], "manta_node_tpu_chips", node_id=nid,
                     slice="s1", kind=kind)
    check(chips("total") == 4 and chips("allocated") == 0, "idle chips")
    task = subprocess.Popen([MANTA, "submit", "--address", addr,
                             "--resources", '{"TPU": 2}', "--", "sleep",
                             "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: chips("allocated") == 2, 10, "2 chips held")
        check(chips("total") == 4, "total while held")
    finally:
        task.kill()
        task.wait()


def test_file_sd():
    d, addr, dport = start_cluster("promsd")
    groups = sd(d)
    heads = [g for g in groups if g["labels"]["role"] == "head"]
    check(len(heads) == 1 and heads[0]["targets"] ==
          ["127.0.0.1:%d" % dport], "head target %r" % groups)
    st = status(address=addr)
    cid = st["cluster_id"]
    check(all(g["labels"]["cluster_id"] == cid for g in groups), "cluster id")
    byid = {n["node_id"]: n["metrics_address"] for n in st["nodes"]}
    check(workers_in_sd(d) == byid, "sd %r vs status %r" % (groups, byid))

    # A node joins: listed; it dies: dropped.
    d2 = new_dir("promsd2")
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         d2, "--num-cpus", "1"] + FAST[:2])
    ws = wait_until(lambda: len(workers_in_sd(d)) == 2 and workers_in_sd(d),
                    10, "two workers listed")
    new = [a for n, a in ws.items() if n not in byid][0]
    check(new.startswith("127.0.0.2:"), "joined worker's address %r" % new)
    check(get(new)[0] == 200, "joined worker scrapes")
    with open(os.path.join(d2, "worker.metrics")) as f:
        check(f.read().strip() == new, "worker.metrics marker")
    run(["stop", "--temp-dir", d2])
    wait_until(lambda: len(workers_in_sd(d)) == 1, 10, "dead worker dropped")


def test_tls():
    """With the cluster's certificate the worker's /metrics is HTTPS too,
    and the SD file says so."""
    d = new_dir("promtls")
    certs = os.path.join(d, "certs")
    run(["tls-init", "--dir", certs, "--ip", "127.0.0.1"])
    ca = os.path.join(certs, "ca.pem")
    d, addr, dport = start_cluster(
        "metricstls", ["--tls-cert", os.path.join(certs, "node.pem"),
                       "--tls-key", os.path.join(certs, "node.key"),
                       "--tls-ca", ca])
    groups = sd(d)
    check(len(groups) == 2 and
          all(g["labels"].get("__scheme__") == "https" for g in groups),
          "https in the SD file: %r" % groups)
    (_, waddr), = workers_in_sd(d).items()
    code, _, text = get(waddr, ca=ca)
    check(code == 200 and "manta_worker_info" in text, "https /metrics")
    check(get(waddr, token=None, ca=ca)[0] == 401, "https without token")
    check(get("127.0.0.1:%d" % dport, ca=ca)[0] == 200, "head over https")
    try:
        get(waddr)
        check(False, "plain HTTP answered")
    except (OSError, http.client.HTTPException):
        pass


def names_in(expr):
    """The metric names a PromQL expression uses: identifiers left once
    label matchers, ranges, grouping clauses, strings and function names
    are taken out."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*"
               r"\([^)]*\)", " ", e)
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e))
    funcs = set(re.findall(r"([a-zA-Z_]+)\s*\(", e))
    keywords = {"by", "without", "on", "ignoring", "and", "or", "unless",
                "bool", "offset", "le"}
    return {w for w in words - funcs - keywords}


def family_of(name, types):
    """The family a series name belongs to (histograms: _bucket etc.)."""
    if name in types:
        return name
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return base if types.get(base) == "histogram" else None


def test_grafana_dashboard():
    d, addr, dport = start_cluster("grafana")
    (_, waddr), = workers_in_sd(d).items()
    types = dict(scrape("127.0.0.1:%d" % dport)[1])
    types.update(scrape(waddr)[1])
    with open(GRAFANA) as f:
        dash = json.load(f)
    used, n_exprs = set(), 0
    for p in dash["panels"]:
        if p["type"] == "row":
            continue
        check(p.get("targets"), "panel %r has no query" % p["title"])
        for t in p["targets"]:
            n_exprs += 1
            names = names_in(t["expr"])
            check(names, "no metric in %r" % t["expr"])
            for n in names:
                fam = family_of(n, types)
                check(fam, "panel %r: %s is not exported (%s)" %
                      (p["title"], n, t["expr"]))
                used.add(fam)
    unused = {f for f in types if f.startswith(("manta_", "process_"))} - used
    check(not unused, "families on no panel: %s" % sorted(unused))
    check(n_exprs >= 40, "only %d queries" % n_exprs)
    for v in dash["templating"]["list"]:
        m = re.match(r"label_values\(([^,)]+)", v.get("definition", ""))
        for n in names_in(m.group(1)) if m else ():
            check(family_of(n, types), "variable %r: %s" % (v["name"], n))
    for name in ("datasources/manta.yaml", "dashboards/manta.yaml"):
        with open(os.path.join(OBS, "grafana", "provisioning", name)) as f:
            text = f.read()
        check("apiVersion: 1" in text, name)


def prometheus_config(d, port):
    """deploy/observability/prometheus.yml pointed at temp dir d, scraping
    every second. RET its path."""
    with open(os.path.join(OBS, "prometheus.yml")) as f:
        text = f.read()
    check(text.count("/tmp/manta/") == 2, "the config names /tmp/manta/ twice")
    text = text.replace("/tmp/manta/", d.rstrip("/") + "/")
    text = text.replace("scrape_interval: 15s", "scrape_interval: 1s")
    path = os.path.join(d, "prometheus.yml")
    with open(path, "w") as f:
        f.write(text)
    return path


def targets_up(port):
    try:
        code, _, body = get("127.0.0.1:%d" % port, "/api/v1/targets",
                            token=None)
    except (OSError, http.client.HTTPException):
        return None  # not listening yet
    if code != 200:
        return None
    act = json.loads(body)["data"]["activeTargets"]
    roles = sorted(t["labels"].get("role", "") for t in act
                   if t["health"] == "up")
    return roles if roles == ["head", "worker"] else None


def test_prometheus_scrapes():
    p = subprocess.run(["promtool", "check", "config", "--syntax-only",
                        os.path.join(OBS, "prometheus.yml")],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "shipped config: %s%s" % (p.stdout, p.stderr))
    d, addr, dport = start_cluster("prom")
    check(os.path.exists(os.path.join(d, "token")), "token file")
    cfg = prometheus_config(d, dport)
    p = subprocess.run(["promtool", "check", "config", cfg],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "config: %s%s" % (p.stdout, p.stderr))
    if not shutil.which("prometheus"):
        raise AssertionError("prometheus is not installed "
                             "(deploy/install-deps.sh)")
    port = free_port()
    data = tempfile.mkdtemp(prefix="manta-prom-")
    log = open(os.path.join(d, "prometheus.log"), "w")
    prom = subprocess.Popen(
        ["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + data,
         "--web.listen-address=127.0.0.1:%d" % port],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(lambda: targets_up(port), 60,
                   "Prometheus scraping the head and the worker")
    finally:
        os.killpg(prom.pid, signal.SIGTERM)
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(prom.pid, signal.SIGKILL)
            prom.wait()
        log.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main([test_head_and_worker_metrics, test_tpu_chips, test_file_sd, test_tls,
          test_grafana_dashboard, test_prometheus_scrapes])
