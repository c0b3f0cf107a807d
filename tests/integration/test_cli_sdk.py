"""test_cli_sdk.py -- the `manta` command as a client of libmanta: every
command that talks to a cluster exits 1 with one line on an unknown id and
on an unreachable head (within 5 s), ids say their kind (a task id never
equals a placement group's, and the wrong kind of id is named as such),
bad flags exit 2, each `list --format json` has the shape scripts read,
every `list` kind's text has one shape (a table, a blank line, a
summary), the list filters (--state, --node, --name) select and count, and
a one-shot command makes exactly the calls it needs (a fake head sees one
GetClusterStatus for `manta status`, nothing else: no status probe, no
event stream).
"""
import json
import os
import re
import subprocess
import time

from harness import (FAST, check, free_port, main, new_dir, proto_stubs, run,
                     status, wait_until)

NOBODY = "0000000000000000"


def start_cluster():
    """Head+worker on 127.0.0.1 (2 CPUs). RET its address."""
    port = free_port()
    d = new_dir("clisdk")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", "2"] + FAST)
    addr = "127.0.0.1:%d" % port
    wait_until(lambda: status(address=addr)["nodes"], 10, "a node")
    return addr


def one_line(p):
    return len(p.stderr.strip().splitlines()) == 1


def test_unknown_ids_exit_1():
    addr = start_cluster()
    a = ["--address", addr]
    for args, want in ((["cancel", NOBODY], "NOT_FOUND"),
                       (["logs", NOBODY], "lost track of task"),
                       (["actor", "get", "ffffffffffffffff"], "NOT_FOUND"),
                       (["actor", "kill", "--name", "nobody"], "no live"),
                       (["gang", "get", "gffffffffffffff"], "no such gang"),
                       (["gang", "cancel", "gffffffffffffff"], "NOT_FOUND"),
                       (["placement-group", "wait", NOBODY], "NOT_FOUND"),
                       (["placement-group", "remove", NOBODY], "NOT_FOUND")):
        p = run(args + a, check=False)
        check(p.returncode == 1 and want in p.stderr and one_line(p),
              "%s: %d %r" % (args, p.returncode, p.stderr))
        check(p.stdout == "", "%s printed %r" % (args, p.stdout))


def test_ids_say_their_kind():
    """Task and placement group ids come from one counter: each kind of id
    carries its own letter, so a task id never equals a group's, and a
    command given the wrong kind of id says which kind it is (issue 13,
    defect 10; on main `manta cancel PG_ID` cancelled the task with the
    same number)."""
    addr = start_cluster()
    a = ["--address", addr]
    pg = run(["placement-group", "create", "--bundles", '[{"CPU": 0.1}]',
              "--wait", "10"] + a).stdout.strip()
    tasks = [run(["submit", "--no-wait"] + a + ["--", "sleep", "30"]
                 ).stdout.strip() for _ in range(3)]
    check(pg not in tasks, "pg %s among tasks %s" % (pg, tasks))
    check(re.fullmatch(r"p[0-9a-f]{15}", pg) and
          all(re.fullmatch(r"t[0-9a-f]{15}", t) for t in tasks),
          "pg %r tasks %r" % (pg, tasks))
    for args, want in (
            (["cancel", pg], "manta cancel: %s is a placement group id, "
             "not a task id" % pg),
            (["logs", pg], "manta logs: %s is a placement group id, not a "
             "task id" % pg),
            (["gang", "get", pg], "%s is a placement group id, not a gang "
             "id" % pg),
            (["actor", "get", tasks[0]], "%s is a task id, not an actor "
             "id" % tasks[0]),
            (["placement-group", "remove", tasks[0]], "manta "
             "placement-group: %s is a task id, not a placement group id"
             % tasks[0])):
        p = run(args + a, check=False)
        check(p.returncode == 1 and want in p.stderr and one_line(p),
              "%s: %d %r" % (args, p.returncode, p.stderr))
    p = run(["submit", "--placement-group", tasks[0]] + a + ["--", "true"],
            check=False)
    check(p.returncode == 2 and "%s is a task id, not a placement group id"
          % tasks[0] in p.stderr, "submit: %d %r" % (p.returncode, p.stderr))
    # Nothing was cancelled or removed by the wrong kind of id.
    st = {t["task_id"]: t["state"] for t in listing(addr, "tasks")["tasks"]}
    check(all(st[t] in ("PENDING", "SCHEDULED", "RUNNING") for t in tasks),
          "tasks %r" % st)
    g = listing(addr, "placement-groups")["placement_groups"]
    check([x["state"] for x in g if x["pg_id"] == pg] == ["CREATED"], g)
    for t in tasks:
        run(["cancel", t] + a)


def test_unreachable_every_command():
    a = ["--address", "127.0.0.1:%d" % free_port()]
    for args in (["status"], ["status", "--format", "json"],
                 ["list", "nodes"], ["list", "tasks"], ["list", "actors"],
                 ["list", "placement-groups"], ["list", "objects"],
                 ["list", "gangs"], ["cancel", NOBODY], ["logs", NOBODY],
                 ["actor", "get", "ffffffffffffffff"],
                 ["gang", "get", "g1"], ["gang", "cancel", "g1"],
                 ["placement-group", "wait", NOBODY],
                 ["placement-group", "remove", NOBODY],
                 ["placement-group", "create", "--bundles", '[{"CPU": 1}]'],
                 ["submit", "--", "true"],
                 ["submit", "--tpu", "v4-16", "--", "true"]):
        i = args.index("--") if "--" in args else len(args)
        t0 = time.monotonic()
        p = run(args[:i] + a + args[i:], check=False)
        took = time.monotonic() - t0
        check(p.returncode == 1 and one_line(p) and took < 5,
              "%s: %d in %.1fs %r" % (args, p.returncode, took, p.stderr))


def test_bad_flags_exit_2():
    for args in (["logs"], ["logs", "xyz"], ["logs", NOBODY, "--force"],
                 ["cancel"], ["cancel", NOBODY, "-v"], ["cancel", "--bogus"],
                 ["actor"], ["actor", "frob"], ["actor", "get"],
                 ["actor", "get", "short"], ["actor", "get", "--format", "x",
                                             "ffffffffffffffff"],
                 ["gang"], ["gang", "frob"], ["gang", "get"],
                 ["gang", "get", "g1", "--format", "yaml"],
                 ["placement-group"], ["placement-group", "wait"],
                 ["list", "tasks", "--state"],
                 ["status", "extra"], ["logs", NOBODY, "--no-such-flag"]):
        p = run(args, check=False)
        check(p.returncode == 2 and p.stderr.strip(),
              "%s: %d %r" % (args, p.returncode, p.stderr))


def listing(addr, kind, *extra):
    p = run(["list", kind, "--address", addr, "--format", "json"] +
            list(extra))
    return json.loads(p.stdout)


def test_json_shapes_and_filters():
    addr = start_cluster()
    a = ["--address", addr]
    run(["submit", "--name", "ok"] + a + ["--", "true"])
    run(["submit", "--name", "bad"] + a + ["--", "false"], check=False)
    pg = run(["placement-group", "create", "--bundles", '[{"CPU": 0.5}]',
              "--wait", "10"] + a).stdout.strip()
    shapes = {
        "nodes": ("nodes", {"node_id", "state", "address", "node_ip",
                            "hostname", "metrics_address",
                            "resources_total", "resources_available",
                            "labels", "usage", "start_time_ms",
                            "death_reason", "gpus"}),
        "tasks": ("tasks", {"task_id", "name", "state", "node_id",
                            "attempt", "exit_code", "error", "argv",
                            "resources", "label_selector", "priority",
                            "max_retries", "strategy", "submit_time_ms",
                            "start_time_ms", "end_time_ms"}),
        "placement-groups": ("placement_groups", {
            "pg_id", "name", "state", "strategy", "bundles",
            "bundle_node_ids", "error", "create_time_ms"}),
        "actors": ("actors", None), "objects": ("objects", None),
        "gangs": ("gangs", None),
    }
    for kind, (key, fields) in shapes.items():
        j = listing(addr, kind)
        check(set(j) == {"total", key} and j["total"] >= len(j[key]),
              "%s: %r" % (kind, j))
        for e in j[key] if fields else ():
            check(set(e) == fields, "%s fields: %r" % (kind, sorted(e)))
    st = json.loads(run(["status", "--format", "json"] + a).stdout)
    check({"cluster_id", "nodes", "resources_total", "demands"} <= set(st),
          "status: %r" % sorted(st))
    # Filters: the head counts what matches.
    ok = listing(addr, "tasks", "--name", "ok")
    check(ok["total"] == 1 and ok["tasks"][0]["name"] == "ok", ok)
    fin = listing(addr, "tasks", "--state", "FINISHED")
    check(fin["total"] == 2 and all(t["state"] == "FINISHED"
                                    for t in fin["tasks"]), fin)
    node = ok["tasks"][0]["node_id"]
    check(listing(addr, "tasks", "--node", node)["total"] == 2, "by node")
    check(listing(addr, "tasks", "--node", "nowhere")["total"] == 0,
          "by an unknown node")
    check(listing(addr, "nodes", "--state", "alive")["total"] == 1, "alive")
    check(listing(addr, "nodes", "--state", "DEAD")["total"] == 0, "dead")
    g = listing(addr, "placement-groups", "--state", "CREATED")
    check([x["pg_id"] for x in g["placement_groups"]] == [pg], g)
    text = run(["list", "tasks", "--state", "FINISHED", "--limit", "1"] +
               a).stdout
    check(text.endswith("\n\n1 of 2 tasks shown; raise --limit to see "
                        "more\n"), text)
    for args in (["--state", "BOGUS"], ["--name", "x", "objects"]):
        kind = "tasks" if len(args) == 2 else args.pop()
        p = run(["list", kind] + args + a, check=False)
        check(p.returncode == 2 and p.stderr.strip(), "%s %s: %d %r" % (
            kind, args, p.returncode, p.stderr))


def test_list_text_one_shape():
    """Every `manta list` kind prints the same shape, empty or not: a
    header row whose first column is the kind's id, one row per entry
    aligned under it, a blank line and one summary line (issue 13, defect
    10: main printed "======== List" for some kinds, "Total: N" or
    "Objects: N" for others)."""
    addr = start_cluster()
    a = ["--address", addr]
    run(["placement-group", "create", "--bundles", '[{"CPU": 0.1}]',
         "--wait", "10"] + a)
    for name in ("one", "two"):
        run(["submit", "--name", name] + a + ["--", "true"])
    want = {"nodes": ("NODE_ID", "1 node"),
            "tasks": ("TASK_ID", "2 tasks"),
            "actors": ("ACTOR_ID", "0 actors"),
            "placement-groups": ("PG_ID", "1 placement group"),
            "objects": ("OBJECT_ID", "0 objects"),
            "gangs": ("GANG_ID", "0 gangs")}
    for kind, (first, summary) in want.items():
        text = run(["list", kind] + a).stdout
        lines = text.split("\n")
        head = lines[0].split()
        check(head[0] == first and all(h == h.upper() for h in head) and
              "STATE" in head, "%s header: %r" % (kind, text))
        check(text.endswith("\n\n%s\n" % summary), "%s: %r" % (kind, text))
        rows = lines[1:-3]
        check(len(rows) == int(summary.split()[0]) and all(rows),
              "%s rows: %r" % (kind, text))
        col = lines[0].index("STATE")
        for r in rows:  # cells sit under their header
            check(r[col:].split()[0] in ("ALIVE", "FINISHED", "CREATED") and
                  r[col - 2:col] == "  ", "%s row %r" % (kind, r))
        for old in ("======== List", "Total:", "Objects:", "Stats:"):
            check(old not in text, "%s still prints %r" % (kind, old))
    text = run(["list", "tasks", "--limit", "1"] + a).stdout
    check(text.endswith("\n\n1 of 2 tasks shown; raise --limit to see "
                        "more\n") and len(text.split("\n")) == 5, text)
    # --format json is unchanged.
    j = json.loads(run(["list", "tasks", "--format", "json"] + a).stdout)
    check(set(j) == {"total", "tasks"} and j["total"] == 2, j)


def test_status_makes_one_call():
    """A fake head with GetClusterStatus alone: `manta status` works, and it
    is the only call the command makes."""
    from concurrent import futures
    import grpc
    proto_stubs()
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    calls = []

    class Head(pbg.HeadServiceServicer):
        def GetClusterStatus(self, req, ctx):
            calls.append("GetClusterStatus")
            return pb.GetClusterStatusReply(cluster_id="c1",
                                            head_address="h:1")

    srv = grpc.server(futures.ThreadPoolExecutor(4))
    pbg.add_HeadServiceServicer_to_server(Head(), srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        p = run(["status", "--address", "127.0.0.1:%d" % port, "--format",
                 "json"])
        check(json.loads(p.stdout)["cluster_id"] == "c1", p.stdout)
        p = run(["status", "--address", "127.0.0.1:%d" % port])
        check("(no nodes)" in p.stdout, p.stdout)
        check(calls == ["GetClusterStatus"] * 2, "calls %r" % calls)
    finally:
        srv.stop(0)


if __name__ == "__main__":
    main([test_unknown_ids_exit_1, test_ids_say_their_kind,
          test_unreachable_every_command,
          test_bad_flags_exit_2, test_json_shapes_and_filters,
          test_list_text_one_shape, test_status_makes_one_call])
