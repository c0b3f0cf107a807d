"""test_wire.py -- wire compatibility and hostile input at the head's port.

Python stubs are generated from proto/ with protoc and grpc_python_plugin
(Debian's python3-grpcio, run by /usr/bin/python3) and call the head's
GetClusterStatus and WatchNodes. Then: garbage bytes on the port, a
malformed protobuf, an unknown method and a bad registration must each get
an error (or a dropped connection) while the head keeps serving.
"""
import os
import socket

from harness import (FAST, channel, check, free_port, main, new_dir, pid_alive,
                     proto_stubs, read_pid, run, status, wait_until)

import grpc  # noqa: E402  (Debian python3-grpcio)


def stubs():
    proto_stubs()
    import head_service_pb2
    import head_service_pb2_grpc
    return head_service_pb2, head_service_pb2_grpc


def start():
    port = free_port()
    d = new_dir("wire")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", "3", "--labels", "zone=z1"] + FAST)
    return "127.0.0.1:%d" % port, d


def test_python_client_status_and_watch():
    pb, pbg = stubs()
    addr, d = start()
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        reply = stub.GetClusterStatus(pb.GetClusterStatusRequest(), timeout=5)
        check(len(reply.nodes) == 1, "nodes %d" % len(reply.nodes))
        node = reply.nodes[0]
        check(node.state == 1, "state %d" % node.state)  # NODE_STATE_ALIVE
        cpu = [e.quantity for e in node.resources_total if e.name == "CPU"]
        check(cpu == [30000], "CPU fixed point %r" % cpu)
        labels = {l.key: l.value for l in node.labels}
        check(labels.get("zone") == "z1", "labels %r" % labels)
        check(reply.head_address == addr, reply.head_address)
        # Server streaming from Python: the snapshot arrives.
        stream = stub.WatchNodes(pb.WatchNodesRequest(initial_snapshot=True),
                                 timeout=5)
        first = next(stream)
        check(first.kind == 1 and first.node.node_id == node.node_id,
              "watch event %r" % first)
        stream.cancel()


def raw_call(addr, method, payload):
    with channel(addr) as ch:
        fn = ch.unary_unary(method)  # bytes in, bytes out
        try:
            fn(payload, timeout=5)
            return grpc.StatusCode.OK
        except grpc.RpcError as e:
            return e.code()


def test_hostile_input():
    pb, pbg = stubs()
    addr, d = start()
    head_pid = read_pid(d, "head")
    host, port = addr.split(":")
    # Garbage bytes, an HTTP/1 request and a half HTTP/2 preface.
    for junk in (os.urandom(4096), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                 b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00"):
        s = socket.create_connection((host, int(port)), timeout=5)
        try:
            s.sendall(junk)
            s.settimeout(2)
            try:
                s.recv(1024)
            except (socket.timeout, ConnectionResetError):
                pass
        finally:
            s.close()
    check(pid_alive(head_pid), "head died after garbage bytes")
    # A malformed protobuf: INVALID_ARGUMENT, not a crash.
    code = raw_call(addr, "/manta.HeadService/RegisterNode",
                    b"\xff\xff\xff\xff\x0f\x12")
    check(code == grpc.StatusCode.INVALID_ARGUMENT, "malformed: %s" % code)
    # An unknown method: UNIMPLEMENTED.
    code = raw_call(addr, "/manta.HeadService/NoSuchMethod", b"")
    check(code == grpc.StatusCode.UNIMPLEMENTED, "unknown: %s" % code)
    code = raw_call(addr, "/nope.Nothing/At", b"\x01")
    check(code == grpc.StatusCode.UNIMPLEMENTED, "unknown service: %s" % code)
    # Well-formed but invalid registrations are refused with a reason.
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        for node in (pb.RegisterNodeRequest(),
                     pb.RegisterNodeRequest(node={"node_id": "x/../y",
                                                  "address": "a:1"}),
                     pb.RegisterNodeRequest(node={"node_id": "ok",
                                                  "address": "noport"}),
                     pb.RegisterNodeRequest(node={
                         "node_id": "ok", "address": "a:1",
                         "resources_total": [{"name": "CPU",
                                              "quantity": -5}]})):
            try:
                stub.RegisterNode(node, timeout=5)
                check(False, "bad registration accepted: %r" % node)
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.INVALID_ARGUMENT,
                      "bad registration: %s" % e.code())
        # A report from an unknown node is answered known=false.
        r = stub.ReportNode(pb.ReportNodeRequest(node_id="ghost"), timeout=5)
        check(not r.known, "ghost report known")
    check(pid_alive(head_pid), "head died")
    st = status(d)
    check(len(st["nodes"]) == 1 and st["nodes"][0]["state"] == "ALIVE",
          "status after hostile input %r" % st["nodes"])


def test_batched_submit_from_python():
    """SubmitTasks + WatchTasks from a foreign client: events carry the
    tags; bad batches are refused; a watcher that goes away costs nothing."""
    pb, pbg = stubs()
    import common_pb2 as c
    addr, d = start()
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        spec = c.TaskSpec(kind=c.TASK_KIND_COMMAND, argv=["true"])
        bad = c.TaskSpec(kind=c.TASK_KIND_COMMAND)  # no program
        # Without a watch stream: refused.
        try:
            stub.SubmitTasks(pb.SubmitTasksRequest(
                watcher_id="nobody", specs=[spec], tags=[1], output=[False]),
                timeout=5)
            check(False, "SubmitTasks without a watcher accepted")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.FAILED_PRECONDITION,
                  "no watcher: %s" % e.code())
        for wid in ("", "x" * 65, "has space"):
            try:
                next(stub.WatchTasks(pb.WatchTasksRequest(watcher_id=wid),
                                     timeout=5))
                check(False, "watcher id %r accepted" % wid)
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.INVALID_ARGUMENT,
                      "watcher id %r: %s" % (wid, e.code()))
        stream = stub.WatchTasks(pb.WatchTasksRequest(watcher_id="py-1"),
                                 timeout=30)
        hello = next(stream)
        check(len(hello.events) == 0, "first message is empty")
        try:  # tags must match specs
            stub.SubmitTasks(pb.SubmitTasksRequest(
                watcher_id="py-1", specs=[spec, spec], tags=[1],
                output=[False, False]), timeout=5)
            check(False, "mismatched tags accepted")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT,
                  "mismatched tags: %s" % e.code())
        r = stub.SubmitTasks(pb.SubmitTasksRequest(
            watcher_id="py-1", specs=[spec, bad, spec], tags=[7, 8, 9],
            output=[False, False, True]), timeout=5)
        check(r.task_ids[0] and not r.task_ids[1] and r.task_ids[2],
              "ids %r" % list(r.task_ids))
        check("program" in r.errors[1] and not r.errors[0], "errors %r" %
              list(r.errors))
        final = {}
        for msg in stream:
            for ev in msg.events:
                check(ev.client_tag in (7, 9), "tag %d" % ev.client_tag)
                check(ev.task_id == r.task_ids[0 if ev.client_tag == 7
                                                else 2], "id of the tag")
                if ev.state == c.TASK_STATE_FINISHED:
                    final[ev.client_tag] = ev.exit_code
            if len(final) == 2:
                break
        check(final == {7: 0, 9: 0}, "final events %r" % final)
        stream.cancel()
    check(pid_alive(read_pid(d, "head")), "head died")


def test_gangs_from_python():
    """SubmitGang / GetGang / CancelGang / ListGangs with bad and good
    requests from grpcio: clear codes, never a dead head."""
    pb, pbg = stubs()
    import common_pb2 as c
    addr, d = start()
    bad = [pb.SubmitGangRequest(tpu_pod_type="v4-16"),            # no program
           pb.SubmitGangRequest(tpu_pod_type="v9-99",
                                member=c.TaskSpec(argv=["true"])),
           pb.SubmitGangRequest(tpu_pod_type="v4-16", launch=9,
                                member=c.TaskSpec(argv=["true"])),
           pb.SubmitGangRequest(tpu_pod_type="v4-16", max_restarts=-7,
                                member=c.TaskSpec(argv=["true"])),
           pb.SubmitGangRequest(tpu_pod_type="v4-16", member=c.TaskSpec(
               argv=["true"], resources=[c.ResourceEntry(name="TPU",
                                                         quantity=40000)])),
           pb.SubmitGangRequest(tpu_pod_type="v4-16", tpu_slices=65,
                                member=c.TaskSpec(argv=["true"])),
           pb.SubmitGangRequest(tpu_pod_type="v4-16", member=c.TaskSpec(
               argv=["true"], env=[c.Label(key="A=B", value="x")]))]
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        for req in bad:
            try:
                stub.SubmitGang(req, timeout=5)
                check(False, "accepted %r" % req)
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and
                      e.details(), "%r: %s %s" % (req, e.code(), e.details()))
        for call, req in ((stub.GetGang, pb.GetGangRequest(gang_id="nope")),
                          (stub.CancelGang,
                           pb.CancelGangRequest(gang_id="nope"))):
            try:
                call(req, timeout=5)
                check(False, "unknown gang accepted")
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.NOT_FOUND, "%s" % e.code())
        # No TPU host here: a valid gang waits, then is cancelled.
        gid = stub.SubmitGang(pb.SubmitGangRequest(
            tpu_pod_type="v4-16", member=c.TaskSpec(argv=["true"])),
            timeout=5).gang_id
        g = stub.GetGang(pb.GetGangRequest(gang_id=gid), timeout=5).gang
        check(g.state == pb.GANG_STATE_PENDING and len(g.members) == 2,
              "pending gang %r" % g)
        stub.CancelGang(pb.CancelGangRequest(gang_id=gid), timeout=5)
        lst = stub.ListGangs(pb.ListGangsRequest(), timeout=5)
        check(lst.total == 1 and lst.gangs[0].state ==
              pb.GANG_STATE_CANCELLED, "list %r" % lst)
        check(raw_call(addr, "/manta.HeadService/SubmitGang",
                       b"\xff\xff\xff") == grpc.StatusCode.INVALID_ARGUMENT,
              "garbage SubmitGang")
    check(pid_alive(read_pid(d, "head")), "head died")


def test_list_filters():
    """List* filters: state, node, name; total counts the matches."""
    pb, pbg = stubs()
    import common_pb2 as c
    addr, d = start()
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        node = stub.GetClusterStatus(pb.GetClusterStatusRequest(),
                                     timeout=5).nodes[0].node_id
        ids = []
        for name in ("a", "b", "a"):
            ids.append(stub.SubmitTask(pb.SubmitTaskRequest(spec=c.TaskSpec(
                kind=c.TASK_KIND_COMMAND, argv=["true"], name=name)),
                timeout=5).task_id)
        # A task no node can run stays PENDING.
        stuck = stub.SubmitTask(pb.SubmitTaskRequest(spec=c.TaskSpec(
            kind=c.TASK_KIND_COMMAND, argv=["true"], name="stuck",
            resources=[c.ResourceEntry(name="CPU", quantity=990000)])),
            timeout=5).task_id

        def finished():
            r = stub.ListTasks(pb.ListTasksRequest(
                state=c.TASK_STATE_FINISHED), timeout=5)
            return r.total == 3
        wait_until(finished, 20, "three tasks finished")
        r = stub.ListTasks(pb.ListTasksRequest(name="a"), timeout=5)
        check(r.total == 2 and sorted(t.spec.task_id for t in r.tasks) ==
              sorted([ids[0], ids[2]]), "by name %r" % r)
        r = stub.ListTasks(pb.ListTasksRequest(name="a", limit=1), timeout=5)
        check(r.total == 2 and len(r.tasks) == 1 and
              r.tasks[0].spec.task_id == ids[2], "newest first, limited")
        r = stub.ListTasks(pb.ListTasksRequest(state=c.TASK_STATE_PENDING),
                           timeout=5)
        check(r.total == 1 and r.tasks[0].spec.task_id == stuck,
              "pending %r" % r)
        r = stub.ListTasks(pb.ListTasksRequest(node_id=node), timeout=5)
        check(r.total == 3, "on the node: %d" % r.total)
        r = stub.ListTasks(pb.ListTasksRequest(node_id="nowhere"), timeout=5)
        check(r.total == 0 and not r.tasks, "unknown node")
        r = stub.ListTasks(pb.ListTasksRequest(), timeout=5)
        check(r.total == 4, "unfiltered %d" % r.total)
        r = stub.ListGangs(pb.ListGangsRequest(
            state=pb.GANG_STATE_RUNNING), timeout=5)
        check(r.total == 0, "no gangs")
        r = stub.ListActors(pb.ListActorsRequest(name="nobody"), timeout=5)
        check(r.total == 0, "no actors")
        r = stub.ListPlacementGroups(pb.ListPlacementGroupsRequest(
            state=c.PG_STATE_CREATED), timeout=5)
        check(r.total == 0, "no groups")
        r = stub.ListObjects(pb.ListObjectsRequest(
            state=pb.OBJECT_STATE_READY, node_id=node), timeout=5)
        check(r.total == 0, "no objects")
    check(pid_alive(read_pid(d, "head")), "head died")


def test_unset_max_retries_is_the_default():
    """A raw client that leaves max_retries unset gets the documented
    default (3), as the SDK does; 0 and other values are taken as given
    (issue 13: unset used to mean no retries)."""
    pb, pbg = stubs()
    import common_pb2 as c
    addr, d = start()
    with channel(addr) as ch:
        stub = pbg.HeadServiceStub(ch)
        want = {}
        for name, extra in (("unset", {}), ("zero", {"max_retries": 0}),
                            ("five", {"max_retries": 5}),
                            ("minus", {"max_retries": -1})):
            spec = c.TaskSpec(kind=c.TASK_KIND_COMMAND, argv=["true"],
                              name=name, **extra)
            stub.SubmitTask(pb.SubmitTaskRequest(spec=spec), timeout=5)
            want[name] = {"unset": 3, "zero": 0, "five": 5, "minus": 3}[name]
        got = {t.spec.name: t.spec.max_retries for t in stub.ListTasks(
            pb.ListTasksRequest(limit=10), timeout=5).tasks}
        check(got == want, "max_retries listed %r, want %r" % (got, want))


if __name__ == "__main__":
    main([test_python_client_status_and_watch, test_hostile_input,
          test_batched_submit_from_python, test_gangs_from_python,
          test_list_filters, test_unset_max_retries_is_the_default])
