"""test_pgs.py -- placement groups end to end on a head and two more
workers (127.0.0.1..3, 2 CPUs each).

STRICT_SPREAD over 3 nodes puts one bundle on each node; a task submitted
into bundle i runs on that bundle's node; the reservation shows in
`manta status`; removing the group gives everything back and stops the
tasks running in it; a group that cannot fit stays PENDING with an
infeasible reason; bad requests get INVALID_ARGUMENT.
"""
import json
import subprocess
import time

from harness import (FAST, MANTA, channel, check, free_port, main, new_dir,
                     proto_stubs, run, status, wait_until)

import grpc  # noqa: E402  (Debian python3-grpcio)


def stubs():
    proto_stubs()
    import common_pb2
    import head_service_pb2
    import head_service_pb2_grpc
    return common_pb2, head_service_pb2, head_service_pb2_grpc


def cluster():
    port = free_port()
    addr = "127.0.0.1:%d" % port
    dirs = []
    for i in (1, 2, 3):
        d = new_dir("pg%d" % i)
        dirs.append(d)
        if i == 1:
            run(["start", "--head", "--port", str(port), "--node-ip",
                 "127.0.0.1", "--temp-dir", d, "--num-cpus", "2"] + FAST)
        else:
            run(["start", "--address", addr, "--node-ip", "127.0.0.%d" % i,
                 "--temp-dir", d, "--num-cpus", "2", "--report-period-ms",
                 "200"])
    return addr, dirs


def bundles(c, n, cpu=1):
    return [c.BundleSpec(resources=[c.ResourceEntry(name="CPU",
                                                    quantity=cpu * 10000)])
            for _ in range(n)]


def cpu_available(addr):
    return status(address=addr)["resources_available"]["CPU"]


def test_strict_spread_bundles_and_removal():
    c, pb, pbg = stubs()
    addr, dirs = cluster()
    stub = pbg.HeadServiceStub(channel(addr))
    # Created through the CLI, which waits for the reservation.
    pg_id = run(["placement-group", "create", "--address", addr,
                 "--strategy", "strict_spread", "--name", "trio",
                 "--bundles", '[{"CPU": 1}, {"CPU": 1}, {"CPU": 1}]',
                 "--wait", "10"]).stdout.strip()

    g = stub.WaitPlacementGroup(pb.WaitPlacementGroupRequest(
        pg_id=pg_id, timeout_ms=5000), timeout=10).group
    check(g.state == c.PG_STATE_CREATED, "state %d %s" % (g.state, g.error))
    nodes = list(g.bundle_node_ids)
    check(len(set(nodes)) == 3 and all(nodes), "bundle nodes %r" % nodes)
    check(cpu_available(addr) == 3, "reserved CPUs not taken from status")
    # A task in bundle i runs on bundle i's node.
    for i in range(3):
        p = run(["submit", "--address", addr, "--placement-group", pg_id,
                 "--bundle", str(i), "--", "sh", "-c",
                 "echo $MANTA_NODE_ID"])
        check(p.stdout.strip() == nodes[i], "bundle %d ran on %s, not %s" % (
            i, p.stdout.strip(), nodes[i]))
    listing = run(["list", "placement-groups", "--address", addr,
                   "--format", "json"]).stdout
    check('"STRICT_SPREAD"' in listing and pg_id in listing, listing)
    # A task still running when the group goes away is stopped.
    p = subprocess.Popen([MANTA, "submit", "--address", addr,
                          "--placement-group", pg_id, "--", "sleep", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    wait_until(lambda: status(address=addr)["running_tasks"] == 1, 10,
               "task running in the group")
    run(["placement-group", "remove", pg_id, "--address", addr])
    out, err = p.communicate(timeout=20)
    check(p.returncode == 130, "task in removed group: exit %d %s" % (
        p.returncode, err))
    wait_until(lambda: cpu_available(addr) == 6, 5, "all CPUs back")
    g = stub.WaitPlacementGroup(pb.WaitPlacementGroupRequest(
        pg_id=pg_id), timeout=5).group
    check(g.state == c.PG_STATE_REMOVED, "state after removal %d" % g.state)
    # Tasks aimed at a removed group are refused.
    p = run(["submit", "--address", addr, "--placement-group", pg_id, "--",
             "true"], check=False)
    check(p.returncode != 0, "submit into a removed group succeeded")


def test_infeasible_and_bad_requests():
    c, pb, pbg = stubs()
    addr, dirs = cluster()
    stub = pbg.HeadServiceStub(channel(addr))
    r = stub.CreatePlacementGroup(pb.CreatePlacementGroupRequest(
        strategy=c.PLACEMENT_STRICT_SPREAD, bundles=bundles(c, 4)), timeout=5)
    t0 = time.monotonic()
    g = stub.WaitPlacementGroup(pb.WaitPlacementGroupRequest(
        pg_id=r.pg_id, timeout_ms=300), timeout=5).group
    check(time.monotonic() - t0 >= 0.25, "wait did not wait")
    check(g.state == c.PG_STATE_PENDING and "infeasible" in g.error,
          "4 bundles on 3 nodes: %d %r" % (g.state, g.error))
    check(cpu_available(addr) == 6, "a pending group must hold nothing")
    st = status(address=addr)
    check(any("placement groups" in d for d in st["demands"]),
          "demands %r" % st["demands"])
    for req in (pb.CreatePlacementGroupRequest(),
                pb.CreatePlacementGroupRequest(
                    strategy=9, bundles=bundles(c, 1)),
                pb.CreatePlacementGroupRequest(bundles=[c.BundleSpec()])):
        try:
            stub.CreatePlacementGroup(req, timeout=5)
            check(False, "bad group accepted: %r" % req)
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT,
                  "bad group: %s" % e.code())
    for call in (lambda: stub.WaitPlacementGroup(
            pb.WaitPlacementGroupRequest(pg_id="nope"), timeout=5),
                 lambda: stub.RemovePlacementGroup(
            pb.RemovePlacementGroupRequest(pg_id="nope"), timeout=5)):
        try:
            call()
            check(False, "unknown group accepted")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.NOT_FOUND, str(e.code()))
    p = run(["submit", "--address", addr, "--placement-group", r.pg_id,
             "--bundle", "7", "--", "true"], check=False)
    check(p.returncode != 0 and "bundle" in p.stderr, p.stderr)
    # A task bigger than its bundle is refused as such, naming the bundle
    # (issue 13: it said no node in the cluster could ever run it).
    small = run(["placement-group", "create", "--address", addr, "--bundles",
                 '[{"CPU": 1}]', "--wait", "10"]).stdout.strip()
    for bundle, want in (("0", "bundle 0 of placement group " + small),
                         (None, "no bundle of placement group " + small)):
        args = ["--bundle", bundle] if bundle else []
        tid = run(["submit", "--address", addr, "--placement-group", small,
                   "--num-cpus", "2", "--no-wait"] + args +
                  ["--", "true"]).stdout.strip()
        err = wait_until(lambda: [t["error"] for t in json.loads(run(
            ["list", "tasks", "--address", addr, "--format", "json"]).stdout
        )["tasks"] if t["task_id"] == tid and t["error"]], 10,
            "the task's reason")[0]
        check(want in err and "no node in the cluster" not in err, err)
        run(["cancel", tid, "--address", addr])
    run(["placement-group", "remove", small, "--address", addr])
    stub.RemovePlacementGroup(pb.RemovePlacementGroupRequest(pg_id=r.pg_id),
                              timeout=5)
    check(not any("placement groups" in d
                  for d in status(address=addr)["demands"]),
          "removed group still in demand")
    # The CLI: an infeasible group does not get created in time; bad input.
    p = run(["placement-group", "create", "--address", addr, "--strategy",
             "STRICT_PACK", "--bundles", '[{"CPU": 2}, {"CPU": 2}]',
             "--wait", "1"], check=False)
    check(p.returncode == 1 and "infeasible" in p.stderr, p.stderr)
    for args in (["create"], ["create", "--bundles", "[]"],
                 ["create", "--bundles", '[{"CPU": 1}'],
                 ["create", "--bundles", '[{}]'],
                 ["create", "--bundles", '[{"CPU": 1}]', "--strategy", "X"],
                 ["wait"], ["remove", "a", "b"], ["frob"]):
        p = run(["placement-group"] + args + ["--address", addr], check=False)
        check(p.returncode == 2, "%s exited %d" % (args, p.returncode))
    p = run(["placement-group", "remove", "0000000000000000", "--address",
             addr], check=False)
    check(p.returncode == 1 and "NOT_FOUND" in p.stderr, p.stderr)


if __name__ == "__main__":
    main([test_strict_spread_bundles_and_removal,
          test_infeasible_and_bad_requests])
