"""test_api.py -- the dashboard's JSON API (head/api.c, docs/dashboard.md
"API") against a live head + worker with fake GPUs: a running GPU task
that prints, finished tasks, a named detached actor and a placement
group.

Checks: every route answers JSON; listings are `manta list --format json`
with "offset" and "limit" added, and page (limit/offset) and filter
(state, node, name) the same way as the CLI's --limit/--offset; bad
parameters get 400 with an error, unknown ids and routes 404, no token
401; /api/nodes/ID holds the node, its running task and its history;
/api/accelerators names the task holding a GPU; /api/logs follows a
task's output with next_offset until done, invalid UTF-8 replaced; the
history grows second by second. On a fake accelerator cluster
(accel_cluster.py: two v4-16 slices, eight stub-NVML GPUs) /api/accelerators
names a gang holding a slice, a task and a placement group holding GPUs,
and counts the free chips of a partly held slice as stranded. The
dashboard is on by default (a second head on the same host falls back to
a free port) and off with --no-dashboard.
"""
import http.client
import json
import os
import subprocess

from harness import (BIN, FAST, check, free_port, main, new_dir, run,
                     wait_until)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
DRIVER = os.path.join(BIN, "actor_driver")
FACTORY = "libexample_counter.so:counter_new"


def token_of(d):
    with open(os.path.join(d, "token")) as f:
        return f.read().strip()


class Api:
    def __init__(self, dport, token):
        self.dport, self.token = dport, token

    def raw(self, path, auth=True, method="GET"):
        c = http.client.HTTPConnection("127.0.0.1", self.dport, timeout=10)
        hdrs = {"Authorization": "Bearer " + self.token} if auth else {}
        try:
            c.request(method, path, headers=hdrs)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type"), r.read()
        finally:
            c.close()

    def get(self, path, code=200):
        st, ctype, body = self.raw(path)
        check(st == code, "%s: %d (wanted %d) %r" % (path, st, code, body))
        check(ctype == "application/json", "%s: type %s" % (path, ctype))
        return json.loads(body)


def start():
    """Head + worker on 127.0.0.1: 4 CPUs, 2 fake GPUs, a dashboard."""
    port, dport = free_port(), free_port()
    d = new_dir("api")
    run(["start", "--head", "--port", str(port), "--dashboard-port",
         str(dport), "--node-ip", "127.0.0.1", "--temp-dir", d,
         "--num-cpus", "4", "--num-gpus", "2", "--memory", "1GiB"] + FAST)
    return d, "127.0.0.1:%d" % port, Api(dport, token_of(d))


def submit(addr, args):
    p = run(["submit", "--address", addr, "--no-wait"] + args)
    return p.stdout.strip()


def page_of(js, kind):
    """A listing without the page keys: what `manta list` prints."""
    return {"total": js["total"], kind: js[kind]}


def test_api():
    d, addr, api = start()
    # Output over time: 40 lines, one invalid byte, then a pause to end.
    go = os.path.join(d, "api-go")
    run_id = submit(addr, ["--name", "api-run", "--num-gpus", "1", "--",
                           "sh", "-c", "i=0; while [ $i -lt 40 ]; do "
                           "echo line $i; i=$((i+1)); sleep 0.02; done; "
                           "printf 'x\\377y\\n'; while [ ! -e %s ]; do "
                           "sleep 0.05; done; echo bye" % go])
    quick = [submit(addr, ["--name", "api-quick", "--", "true"])
             for _ in range(5)]
    p = subprocess.run([DRIVER, addr, LIB_DIR, "create", "api-actor", "1",
                        "0", "0.5", FACTORY], capture_output=True, text=True,
                       timeout=60)
    check(p.stdout.startswith("id "), "actor: %r %r" % (p.stdout, p.stderr))
    actor_id = p.stdout.split()[1]
    run(["placement-group", "create", "--address", addr, "--bundles",
         '[{"CPU": 0.5}]', "--name", "api-pg", "--wait", "20"])

    wait_until(lambda: api.get("/api/tasks?name=api-quick&state=FINISHED")
               ["total"] == 5, 20, "quick tasks finished")
    check_listings(addr, api, quick)
    check_errors(api)
    node = check_node_and_accel(api, run_id)
    check_actor_pg(api, actor_id)
    check_logs(api, run_id, go)
    check_history(api, node)


def check_listings(addr, api, quick):
    for kind, path in (("nodes", "nodes"), ("tasks", "tasks"),
                       ("actors", "actors"),
                       ("placement_groups", "placement-groups"),
                       ("objects", "objects"), ("gangs", "gangs")):
        js = api.get("/api/%s" % path.replace("-", "_"))
        check(js["offset"] == 0 and js["limit"] == 100, "%s page" % kind)
        cli = json.loads(run(["list", path, "--address", addr, "--format",
                              "json"]).stdout)
        if kind == "tasks":  # the finished ones: nothing moves
            js = api.get("/api/tasks?name=api-quick")
            cli = json.loads(run(["list", path, "--address", addr, "--name",
                                  "api-quick", "--format", "json"]).stdout)
        if kind not in ("nodes", "actors"):  # times and counters move
            check(page_of(js, kind) == cli, "%s: api %r cli %r" %
                  (kind, js, cli))
        check(js["total"] == cli["total"], kind)
    # Paging: newest first, pages tile the whole list, as the CLI's.
    whole = api.get("/api/tasks?name=api-quick")
    ids = [t["task_id"] for t in whole["tasks"]]
    check(ids == list(reversed(quick)), "newest first %r %r" % (ids, quick))
    got = []
    for off in (0, 2, 4):
        js = api.get("/api/tasks?name=api-quick&limit=2&offset=%d" % off)
        check(js["total"] == 5 and js["offset"] == off and
              js["limit"] == 2, "page %r" % js)
        got += [t["task_id"] for t in js["tasks"]]
    check(got == ids, "pages %r" % got)
    cli = json.loads(run(["list", "tasks", "--address", addr, "--name",
                          "api-quick", "--limit", "2", "--offset", "2",
                          "--format", "json"]).stdout)
    check([t["task_id"] for t in cli["tasks"]] == ids[2:4], "cli --offset")
    text = run(["list", "tasks", "--address", addr, "--name", "api-quick",
                "--limit", "2", "--offset", "2"]).stdout
    check("tasks 3-4 of 5 shown" in text, text)
    check(api.get("/api/tasks?name=api-quick&offset=9")["tasks"] == [],
          "offset past the end")
    check(api.get("/api/tasks?limit=5000")["limit"] == 1000, "limit cap")
    # Filters: state (any case), node, name; unknown params ignored.
    js = api.get("/api/tasks?state=running&name=api-run&whatever=1")
    check(js["total"] == 1 and js["tasks"][0]["name"] == "api-run", "%r" % js)
    node = js["tasks"][0]["node_id"]
    check(api.get("/api/tasks?node=%s&name=api-run" % node)["total"] == 1,
          "node filter")
    check(api.get("/api/tasks?node=nope")["total"] == 0, "other node")
    check(api.get("/api/nodes?state=DEAD")["total"] == 0, "no dead nodes")
    check(api.get("/api/nodes?state=ALIVE")["total"] == 1, "alive node")
    p = run(["list", "actors", "--address", addr, "--driver", "x"],
            check=False)
    check(p.returncode == 2, "--driver on actors: %d" % p.returncode)


def check_errors(api):
    for q in ("tasks?limit=abc", "tasks?limit=0", "tasks?offset=-1",
              "tasks?state=NOPE", "nodes?state=RUNNING", "history?seconds=x",
              "logs", "logs?task=a&actor=b", "tasks?name=" + "n" * 300):
        js = api.get("/api/" + q, 400)
        check(isinstance(js.get("error"), str) and js["error"], q)
    for q in ("nodes/0123456789abcdef", "nope", "logs?task=ffffffffffffffff",
              "logs?actor=ffffffffffffffff", "history?node=zz"):
        check(api.get("/api/" + q, 404)["error"], q)
    st, ctype, body = api.raw("/api/tasks", auth=False)
    check(st == 401 and ctype == "application/json", "no token: %d" % st)
    st, _, body = api.raw("/api/tasks", method="HEAD")
    check(st == 200 and body == b"", "HEAD")


def check_node_and_accel(api, run_id):
    node = api.get("/api/nodes")["nodes"][0]["node_id"]

    def sampled():  # history is null until a sample has the node
        js = api.get("/api/nodes/%s?seconds=5" % node)
        return js if js["history"] else None
    js = wait_until(sampled, 5, "the node's first history sample")
    check(js["node"]["node_id"] == node and js["node"]["state"] == "ALIVE",
          "node %r" % js["node"])
    running = [t["task_id"] for t in js["tasks"]["tasks"]]
    check(run_id in running and  # and the actor's creation task
          all(t["state"] == "RUNNING" for t in js["tasks"]["tasks"]),
          "running tasks %r" % js["tasks"])
    check(js["history"]["node_id"] == node and
          len(js["history"]["series"]["cpu_ratio"]) == 5, "node history")
    acc = api.get("/api/accelerators")
    s = acc["summary"]
    check(s["gpus_total"] == 2 and s["gpus_used"] == 1 and
          s["gpus_free"] == 1, "summary %r" % s)
    held = [g for g in acc["gpus"] if g["holders"]]
    check(len(acc["gpus"]) == 2 and len(held) == 1, "gpus %r" % acc["gpus"])
    check(held[0]["holders"] == [{"kind": "task", "id": run_id,
                                  "name": "api-run"}] and
          held[0]["allocated"] == 1 and held[0]["node_id"] == node,
          "holder %r" % held[0])
    check(acc["tpu_slices"] == [], "no slices")
    return node


def check_actor_pg(api, actor_id):
    js = api.get("/api/actors?name=api-actor")
    check(js["total"] == 1 and js["actors"][0]["actor_id"] == actor_id,
          "actor %r" % js)
    wait_until(lambda: api.get("/api/actors?state=ALIVE&name=api-actor")
               ["total"] == 1, 20, "actor alive")
    js = api.get("/api/logs?actor=%s" % actor_id)
    check(js["task_id"] == "t" + actor_id[1:] and js["offset"] == 0,
          "actor logs %r" % js)
    js = api.get("/api/placement_groups?state=CREATED")
    check(js["total"] == 1 and
          js["placement_groups"][0]["name"] == "api-pg", "pg %r" % js)
    check(api.get("/api/gangs")["total"] == 0, "no gangs")
    check(api.get("/api/objects?state=READY")["offset"] == 0, "objects")


def check_logs(api, run_id, go):
    """Follow with next_offset until done: the whole output, once. The
    task ends (go is made) once the first lines have been read."""
    text, off, polls = "", 0, 0

    def more():
        nonlocal text, off, polls
        if polls == 3:
            open(go, "w").close()
        js = api.get("/api/logs?task=%s&offset=%d" % (run_id, off))
        check(js["offset"] == off and not js["truncated"], "%r" % js)
        check(js["next_offset"] == off + len(js["data"].encode()) or
              "\ufffd" in js["data"], "next_offset %r" % js)
        text += js["data"]
        off = js["next_offset"]
        polls += 1
        return js["done"]

    wait_until(more, 30, "output done")
    want = ("".join("line %d\n" % i for i in range(40)) + "x\ufffdy\n" +
            "bye\n")
    check(text == want, "output %r" % text[-80:])
    check(polls > 1, "followed in %d polls" % polls)
    js = api.get("/api/logs?task=%s&offset=%d" % (run_id, off))
    check(js["data"] == "" and js["done"] and js["state"] == "FINISHED",
          "after the end %r" % js)


def check_history(api, node):
    first = api.get("/api/history?seconds=10")
    series = first["series"]
    check(first["interval_ms"] == 1000 and first["node_id"] is None,
          "history %r" % first)
    check(all(len(v) == 10 for v in series.values()) and
          len(series) == 15, "series %r" % list(series))
    check(series["CPU_total"][-1] == 4 and series["GPU_total"][-1] == 2,
          "totals %r" % series["CPU_total"])
    check(max(v for v in series["tasks_finished_total"] if v is not None)
          >= 5, "finished %r" % series["tasks_finished_total"])
    wait_until(lambda: api.get("/api/history?seconds=10")["end_ms"] >=
               first["end_ms"] + 2000, 10, "history grows")
    js = api.get("/api/history?node=%s&seconds=3" % node)
    check(js["node_id"] == node and len(js["series"]) == 9 and
          js["series"]["memory_total_bytes"][-1] > 0, "node %r" % js)


def test_accelerators():
    from accel_cluster import AccelCluster

    with AccelCluster() as c:
        with open(os.path.join(c.head_dir, "dashboard.addr")) as f:
            api = Api(int(f.read().strip().rsplit(":", 1)[1]),
                      os.environ["MANTA_AUTH_TOKEN"])
        gang = c.cli("submit", "--tpu", "v4-16", "--name", "api-gang",
                     "--no-wait", "--", "sleep", "60").stdout.strip()
        task = c.cli("submit", "--num-gpus", "3", "--name", "api-gpu3",
                     "--no-wait", "--", "sleep", "60").stdout.strip()
        pg = c.cli("placement-group", "create", "--bundles",
                   '[{"GPU": 2}]', "--name", "api-pg2", "--wait",
                   "20").stdout.split()[0]
        wait_until(lambda: api.get("/api/gangs?state=RUNNING")["total"] == 1,
                   20, "gang running")
        # One host of the free slice: its other host's chips are stranded.
        c.cli("placement-group", "create", "--bundles", '[{"TPU": 4}]',
              "--name", "api-half", "--wait", "20")
        wait_until(lambda: api.get("/api/tasks?name=api-gpu3&state=RUNNING")
                   ["total"] == 1, 20, "gpu task running")
        acc = api.get("/api/accelerators")
        s = acc["summary"]
        check(s["gpus_total"] == 8 and s["gpus_used"] == 5 and
              s["gpus_free"] == 3 and s["tpu_chips_total"] == 16 and
              s["tpu_chips_used"] == 12 and s["tpu_chips_stranded"] == 4,
              "summary %r" % s)
        holders = {}
        for gpu in acc["gpus"]:
            for h in gpu["holders"]:
                holders.setdefault((h["kind"], h["id"]), []).append(gpu)
        check(len(holders[("task", task)]) == 3 and
              len(holders[("placement_group", pg)]) == 2 and
              all(g["model"] == "NVIDIA H200" and g["allocated"] == 1 and
                  isinstance(g["memory_total_bytes"], int)
                  for v in holders.values() for g in v),
              "gpu holders %r" % holders)
        slices = {x["slice"]: x for x in acc["tpu_slices"]}
        check(sorted(slices) == ["slice-a", "slice-b"], "slices %r" % slices)
        held = [x for x in slices.values() if any(
            {"kind": "gang", "id": gang, "name": "api-gang"} in h["holders"]
            for h in x["hosts"])]
        check(len(held) == 1 and held[0]["accelerator_type"] == "v4-16" and
              [h["worker_id"] for h in held[0]["hosts"]] == [0, 1] and
              all(h["chips_used"] == 4 for h in held[0]["hosts"]),
              "gang's slice %r" % held)


def test_on_by_default():
    """No dashboard flag: on, at 8265 or (taken) a free port; two heads on
    one host both serve; --no-dashboard serves none."""
    urls = []
    for tag in ("def1", "def2"):
        d = new_dir(tag)
        out = run(["start", "--head", "--no-worker", "--port",
                   str(free_port()), "--node-ip", "127.0.0.1",
                   "--temp-dir", d]).stdout
        with open(os.path.join(d, "dashboard.addr")) as f:
            url = f.read().strip()
        check(("Dashboard: %s " % url) in out, out)
        dport = int(url.rsplit(":", 1)[1])
        check(Api(dport, token_of(d)).get("/api/cluster_status")["nodes"]
              == [], "serves")
        urls.append(url)
    check(urls[0] != urls[1], "two dashboards %r" % urls)
    p = subprocess.run([os.path.join(BIN, "manta-head"), "--no-dashboard",
                        "--dashboard-port", "0"], capture_output=True,
                       timeout=10)
    check(p.returncode == 2, "--no-dashboard with --dashboard-port")


if __name__ == "__main__":
    main([test_api, test_accelerators, test_on_by_default])
