"""test_cli.py -- the `manta` command's contract for people and scripts:
--help everywhere, usage errors exit 2 with a message, an unreachable head
fails status within 5 s with one line, a second start over a live session
is refused, a worker that cannot join is not left behind, stop is
idempotent, and the daemons reject bad flags too. `manta submit` and
`manta list` check every value before contacting the head; against a fake
head (Python gRPC) the TaskSpec submit sends and its exit codes are checked.
"""
import os
import subprocess
import threading
import time

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir,
                     pid_alive, read_pid, run, stays_true, wait_output,
                     wait_until)


def sh(args, timeout=30):
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=timeout)


def test_help_everywhere():
    for args in (["--help"], ["start", "--help"], ["stop", "--help"],
                 ["status", "--help"], ["submit", "--help"],
                 ["list", "--help"], ["gang", "get", "--help"],
                 ["gang", "cancel", "--help"], ["actor", "get", "--help"],
                 ["placement-group", "wait", "--help"], ["logs", "--help"],
                 ["cancel", "--help"], ["tls-init", "--help"]):
        p = run(args)
        check("usage:" in p.stdout, "no usage in %s: %r" % (args, p.stdout))
    for prog in ("manta-head", "manta-worker"):
        p = sh([os.path.join(BIN, prog), "--help"])
        check(p.returncode == 0 and "usage:" in p.stdout, prog)


def test_bad_usage_exits_2():
    cases = [
        [],
        ["frobnicate"],
        ["start"],
        ["start", "--head", "--address", "1.2.3.4:5"],
        ["start", "--head", "--port", "70000"],
        ["start", "--head", "--num-cpus", "-1"],
        ["start", "--head", "--num-gpus", "1.5"],
        ["start", "--head", "--resources", "{\"GPU\": -1}"],
        ["start", "--head", "--resources", "not json"],
        ["start", "--head", "--labels", "novalue"],
        ["start", "--head", "--node-ip", "999.1.1.1"],
        ["start", "--address", "nohostport"],
        ["start", "--head", "--bogus"],
        ["stop", "--grace-period", "x"],
        ["stop", "extra"],
        ["status", "--format", "yaml"],
        ["status", "--address", "noport"],
        ["submit"],
        ["submit", "echo", "hi"],
        ["submit", "--"],
        ["submit", "--num-cpus", "1"],
        ["submit", "--bogus", "--", "true"],
        ["submit", "--label-selector", "zone in (a|b", "--", "true"],
        ["submit", "--label-selector", "zone=", "--", "true"],
        ["submit", "--label-selector", "a,,b", "--", "true"],
        ["submit", "--label-selector", "zone ~ a", "--", "true"],
        ["submit", "--label-selector", "!a=b", "--", "true"],
        ["submit", "--label-selector", ",".join("k%d" % i for i in range(9)),
         "--", "true"],
        ["submit", "--resources", "not json", "--", "true"],
        ["submit", "--resources", "{\"GPU\": -1}", "--", "true"],
        ["submit", "--num-cpus", "1", "--resources", "{\"CPU\": 2}", "--",
         "true"],
        ["submit", "--num-cpus", "-1", "--", "true"],
        ["submit", "--num-gpus", "1.5", "--", "true"],
        ["submit", "--memory", "lots", "--", "true"],
        ["submit", "--priority", "x", "--", "true"],
        ["submit", "--max-retries", "-1", "--", "true"],
        ["submit", "--env", "NOEQUALS", "--", "true"],
        ["submit", "--address", "noport", "--", "true"],
        ["list"],
        ["list", "frobs"],
        ["list", "nodes", "tasks"],
        ["list", "tasks", "--format", "yaml"],
        ["list", "tasks", "--limit", "0"],
        ["list", "tasks", "--limit", "x"],
        ["list", "nodes", "--address", "noport"],
        ["list", "nodes", "--bogus"],
    ]
    for args in cases:
        p = run(args, check=False)
        check(p.returncode == 2, "%s exited %d" % (args, p.returncode))
        check(p.stderr.strip(), "%s printed no message" % args)
    for prog, args in (("manta-head", ["--port", "x"]),
                       ("manta-worker", []),
                       ("manta-worker", ["--address", "a:1", "--memory", "lots"]),
                       # A node id never looks like a task's (or a
                       # group's, an object's...): ids say their kind.
                       ("manta-worker", ["--address", "a:1", "--node-id",
                                         "t000000000000001"]),
                       ("manta-worker", ["--address", "a:1", "--node-id",
                                         "ab" * 20])):
        p = sh([os.path.join(BIN, prog)] + args)
        check(p.returncode == 2, "%s %s exited %d" % (prog, args, p.returncode))
        check("--node-id" not in args or "another kind of id" in p.stderr,
              "%s: %r" % (args, p.stderr))


def test_status_unreachable():
    port = free_port()
    t0 = time.monotonic()
    p = run(["status", "--address", "127.0.0.1:%d" % port], check=False)
    took = time.monotonic() - t0
    check(p.returncode == 1, "exit %d" % p.returncode)
    check(took < 5, "took %.1fs" % took)
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and "cannot reach" in lines[0], p.stderr)
    d = new_dir("empty")
    p = run(["status", "--temp-dir", d], check=False)
    check(p.returncode == 1 and "no head address" in p.stderr, p.stderr)
    # A port that accepts TCP but never speaks HTTP/2 also fails in time.
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    t0 = time.monotonic()
    p = run(["status", "--address", "127.0.0.1:%d" % s.getsockname()[1]],
            check=False)
    s.close()
    check(p.returncode == 1 and time.monotonic() - t0 < 5.5,
          "silent peer: rc %d after %.1fs" % (p.returncode,
                                               time.monotonic() - t0))


def test_submit_list_unreachable_and_not_yet():
    port = free_port()
    for args in (["submit", "--address", "127.0.0.1:%d" % port, "--", "true"],
                 ["list", "tasks", "--address", "127.0.0.1:%d" % port]):
        t0 = time.monotonic()
        p = run(args, check=False)
        took = time.monotonic() - t0
        check(p.returncode == 1, "%s: exit %d" % (args, p.returncode))
        check(took < 5, "%s took %.1fs" % (args, took))
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and "cannot" in lines[0], p.stderr)
    d = new_dir("empty")
    p = run(["submit", "--temp-dir", d, "--", "true"], check=False)
    check(p.returncode == 1 and "no head address" in p.stderr, p.stderr)
    p = run(["list", "frogs"], check=False)
    check(p.returncode == 2 and "cannot list 'frogs'" in p.stderr,
          "list frogs: %d %s" % (p.returncode, p.stderr))


def fake_head():
    """A HeadService in this process that records submitted specs and
    plays a script per program name. RET (address, specs, cancels, stop)."""
    import sys
    import tempfile
    from concurrent import futures
    import grpc
    proto = os.environ.get("MANTA_PROTO_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "proto")
    out = tempfile.mkdtemp(prefix="manta-pystubs-")
    sh(["protoc", "-I", proto, "--python_out=" + out, "--grpc_out=" + out,
        "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin",
        "common.proto", "head_service.proto"])
    sys.path.insert(0, out)
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    specs, cancels = [], []
    changed = threading.Condition()  # a cancel came, or a watch ended

    class Head(pbg.HeadServiceServicer):
        def SubmitTask(self, req, ctx):
            specs.append(req.spec)
            return pb.SubmitTaskReply(task_id="t%d" % len(specs))

        def WatchTask(self, req, ctx):
            spec = specs[int(req.task_id[1:]) - 1]
            prog = spec.argv[0]
            yield pb.TaskEvent(state=2)                        # PENDING
            if prog == "infeasible":
                yield pb.TaskEvent(state=6, error="infeasible: 64 CPU")
                return
            yield pb.TaskEvent(state=4, node_id="n1")          # RUNNING
            yield pb.TaskEvent(output=b"out\n", fd=1)
            yield pb.TaskEvent(output=b"err\n", fd=2)
            if prog in ("sleep", "stubborn"):
                # Runs for up to 10 s: until cancelled ("stubborn" ignores
                # cancels) or until the client goes away.
                def over():
                    return not ctx.is_active() or (
                        prog == "sleep" and req.task_id in cancels)

                def wake():
                    with changed:
                        changed.notify_all()
                ctx.add_callback(wake)
                with changed:
                    changed.wait_for(over, 10)
                if not ctx.is_active():
                    return
                if req.task_id in cancels and prog == "sleep":
                    yield pb.TaskEvent(state=7, error="cancelled")
                    return
            yield pb.TaskEvent(state=5, exit_code=int(spec.argv[1]))

        def CancelTask(self, req, ctx):
            with changed:
                cancels.append(req.task_id)
                changed.notify_all()
            return pb.CancelTaskReply(state=7)

    srv = grpc.server(futures.ThreadPoolExecutor(8))
    pbg.add_HeadServiceServicer_to_server(Head(), srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    return "127.0.0.1:%d" % port, specs, cancels, srv


def test_submit_against_fake_head():
    import signal
    addr, specs, cancels, srv = fake_head()
    try:
        p = run(["submit", "--address", addr, "--", "prog", "3"], check=False)
        check(p.returncode == 3, "exit %d: %s" % (p.returncode, p.stderr))
        check(p.stdout == "out\n" and p.stderr == "err\n",
              "relayed %r %r" % (p.stdout, p.stderr))
        s = specs[-1]
        check(s.kind == 1 and list(s.argv) == ["prog", "3"], str(s))
        check([(r.name, r.quantity) for r in s.resources] == [("CPU", 10000)],
              "default resources %s" % s.resources)
        check(s.max_retries == -1, "default max_retries %d" % s.max_retries)

        run(["submit", "--address", addr, "--num-cpus", "0", "--num-gpus",
             "0.5", "--memory", "1GiB", "--resources", '{"accel": 2}',
             "--label-selector", "zone in (a|b),!spot,gpu,x!=y,w notin (c,d)",
             "--priority", "-5", "--max-retries", "0", "--name", "nm",
             "--env", "A=1", "--env", "B=x=y", "--cwd", "/srv", "--spread",
             "--no-wait", "--", "prog", "0"])
        s = specs[-1]
        res = {r.name: r.quantity for r in s.resources}
        check(res == {"CPU": 0, "GPU": 5000, "memory": (1 << 30) * 10000,
                      "accel": 20000}, "resources %r" % res)
        sel = [(m.key, m.op, list(m.values)) for m in s.label_selector]
        check(sel == [("zone", 2, ["a", "b"]), ("spot", 5, []),
                      ("gpu", 4, []), ("x", 1, ["y"]),
                      ("w", 3, ["c", "d"])], "selector %r" % sel)
        check((s.priority, s.max_retries, s.name, s.cwd, s.strategy) ==
              (-5, 0, "nm", "/srv", 1), str(s))
        check({e.key: e.value for e in s.env} == {"A": "1", "B": "x=y"},
              "env %s" % s.env)

        p = run(["submit", "--address", addr, "--", "infeasible"], check=False)
        check(p.returncode == 1 and
              "task failed: infeasible: 64 CPU" in p.stderr, p.stderr)

        # Ctrl-C once the task's output is relayed: submit is watching it
        # (its SIGINT handler is in place before it submits).
        proc = subprocess.Popen([MANTA, "submit", "--address", addr, "--",
                                 "sleep", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wait_output(proc.stdout, "out\n", 10, "the sleep task's output")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        check(proc.returncode == 130, "ctrl-c exit %d: %s" % (
            proc.returncode, err))
        check(cancels == ["t%d" % len(specs)], "cancels %r" % cancels)

        # A task that ignores the cancel: the second Ctrl-C leaves at once.
        proc = subprocess.Popen([MANTA, "submit", "--address", addr, "--",
                                 "stubborn", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wait_output(proc.stdout, "out\n", 10, "the stubborn task's output")
        proc.send_signal(signal.SIGINT)
        wait_until(lambda: len(cancels) == 2, 10, "the cancel of the "
                   "stubborn task")
        # An absence: submit must not leave, which only a bounded window
        # can show (polled throughout, failing as soon as it exits).
        stays_true(lambda: proc.poll() is None, 0.5,
                   "manta submit still running after one Ctrl-C")
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        check(proc.returncode == 130 and time.monotonic() - t0 < 2,
              "second ctrl-c: exit %d: %s" % (proc.returncode, err))
        check(len(cancels) == 2, "cancels %r" % cancels)
    finally:
        srv.stop(0)


def test_second_start_refused_and_stop_idempotent():
    d = new_dir("twice")
    port = free_port()
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d] + FAST)
    head = read_pid(d, "head")
    p = run(["start", "--head", "--port", str(free_port()), "--node-ip",
             "127.0.0.1", "--temp-dir", d], check=False)
    check(p.returncode == 1 and "already running" in p.stderr, p.stderr)
    check(pid_alive(head), "first head disturbed")
    # A second head on the same port in another dir fails cleanly too.
    d2 = new_dir("sameport")
    p = run(["start", "--head", "--no-worker", "--port", str(port),
             "--node-ip", "127.0.0.1", "--temp-dir", d2], check=False)
    check(p.returncode == 1, "second head on a used port: %d" % p.returncode)
    # ... saying so in one line, not with gRPC's log (issue 13).
    check("port is in use" in p.stderr and "did not come up" not in p.stderr
          and "chttp2" not in p.stderr, p.stderr)
    run(["stop", "--temp-dir", d])
    p = run(["stop", "--temp-dir", d])
    check("No Manta processes" in p.stdout, p.stdout)


def test_worker_that_cannot_join_is_not_left_behind():
    d = new_dir("nojoin")
    port = free_port()
    p = run(["start", "--address", "127.0.0.1:%d" % port, "--node-ip",
             "127.0.0.1", "--temp-dir", d, "--start-timeout", "2"],
            check=False, timeout=20)
    check(p.returncode == 1 and "did not come up" in p.stderr, p.stderr)
    out = sh(["pgrep", "-f", "manta-worker.*%s" % d]).stdout.split()
    live = [int(x) for x in out if pid_alive(int(x))]
    check(not live, "worker left running: %s" % live)


if __name__ == "__main__":
    main([test_help_everywhere, test_bad_usage_exits_2, test_status_unreachable,
          test_submit_list_unreachable_and_not_yet,
          test_submit_against_fake_head,
          test_second_start_refused_and_stop_idempotent,
          test_worker_that_cannot_join_is_not_left_behind])
