"""test_security.py -- secure by default (docs/security.md): every rpc of
the head and of a worker, enumerated from the service descriptors, answers
UNAUTHENTICATED without the cluster token or with a wrong one, and no
command runs; a node cannot register over, report for or unregister
another; the session dir, token and logs are private and the object store
refuses another uid; a driver with an old token after a restart with a new
one fails at once with "wrong cluster token"; task env is listed only with
--show-env and never logged; `manta start --head` makes a token when none
is given; `--auth none` is the one way to turn it off.

Auth is on in every other test too: the harness passes its token.
"""
import os
import socket
import stat
import subprocess
import time

from harness import (BIN, FAST, MANTA, TOKEN, channel, check, free_port,
                     main, new_dir, proto_stubs, run, status, stays_true,
                     wait_until)

import grpc  # noqa: E402  (Debian python3-grpcio)

WRONG = "f" * 64


def start(tag, extra=(), env=None):
    port = free_port()
    d = new_dir(tag)
    p = subprocess.run([MANTA, "start", "--head", "--port", str(port),
                        "--node-ip", "127.0.0.1", "--temp-dir", d,
                        "--num-cpus", "2", "--memory", "1GiB"] + FAST +
                       list(extra), capture_output=True, text=True,
                       timeout=60, env=env)
    check(p.returncode == 0, "start: %s%s" % (p.stdout, p.stderr))
    return "127.0.0.1:%d" % port, d, p.stdout


def methods():
    """(address key, "/pkg.Service/Method", server streaming) of every
    method of HeadService and WorkerService."""
    proto_stubs()
    import head_service_pb2
    import worker_service_pb2
    out = []
    for key, mod in (("head", head_service_pb2),
                     ("worker", worker_service_pb2)):
        for svc in mod.DESCRIPTOR.services_by_name.values():
            for m in svc.methods:
                out.append((key, "/%s/%s" % (svc.full_name, m.name),
                            m.server_streaming))
    return out


def call_code(ch, path, streaming, payload=b""):
    try:
        if streaming:
            for _ in ch.unary_stream(path)(payload, timeout=5):
                pass
        else:
            ch.unary_unary(path)(payload, timeout=5)
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()


def read(d, name):
    with open(os.path.join(d, name)) as f:
        return f.read().strip()


def test_every_method_needs_the_token():
    addr, d, _ = start("auth")
    addrs = {"head": addr, "worker": read(d, "worker.addr")}
    ms = methods()
    check(len(ms) > 30, "only %d methods found" % len(ms))
    proto_stubs()
    import common_pb2
    import head_service_pb2
    mark = os.path.join(d, "pwned")
    submit = head_service_pb2.SubmitTaskRequest(spec=common_pb2.TaskSpec(
        kind=common_pb2.TASK_KIND_COMMAND,
        argv=["sh", "-c", "touch " + mark])).SerializeToString()
    for label, mk in (("no token", grpc.insecure_channel),
                      ("wrong token", lambda a: channel(a, token=WRONG))):
        chans = {k: mk(a) for k, a in addrs.items()}
        for key, path, streaming in ms:
            payload = submit if path.endswith("/SubmitTask") else b""
            code = call_code(chans[key], path, streaming, payload)
            check(code == grpc.StatusCode.UNAUTHENTICATED,
                  "%s: %s on the %s answered %s" % (label, path, key, code))
        # An unknown method is refused the same way, not UNIMPLEMENTED.
        code = call_code(chans["head"], "/manta.HeadService/Nope", False)
        check(code == grpc.StatusCode.UNAUTHENTICATED, "unknown: %s" % code)
        for ch in chans.values():
            ch.close()
    check(stays_true(lambda: not os.path.exists(mark), 1.0, "no command"),
          "a command ran")
    # With the token the same channel kind works.
    with channel(addr) as ch:
        code = call_code(ch, "/manta.HeadService/GetClusterStatus", False)
        check(code == grpc.StatusCode.OK, "with the token: %s" % code)
    # The manta command says why it cannot get in.
    env = dict(os.environ, MANTA_AUTH_TOKEN=WRONG)
    p = subprocess.run([MANTA, "status", "--address", addr],
                       capture_output=True, text=True, timeout=30, env=env)
    check(p.returncode != 0 and "wrong cluster token" in p.stderr,
          "status with a wrong token: %r" % p.stderr)


def test_nodes_cannot_speak_for_each_other():
    addr, d, _ = start("nodes")
    proto_stubs()
    import common_pb2
    import head_service_pb2 as pb
    import head_service_pb2_grpc as pbg
    node = status(address=addr)["nodes"][0]["node_id"]
    # Without the token: refused before anything is read.
    stub = pbg.HeadServiceStub(grpc.insecure_channel(addr))
    fake = common_pb2.NodeInfo(node_id="fake0", address="127.0.0.9:1",
                               resources_total=[common_pb2.ResourceEntry(
                                   name="CPU", quantity=10 ** 10)])
    try:
        stub.RegisterNode(pb.RegisterNodeRequest(node=fake), timeout=5)
        check(False, "fake registration accepted without the token")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNAUTHENTICATED, str(e.code()))
    # With the token but not the node's credential: no take-over, no
    # reports in its name, no unregistering it.
    stub = pbg.HeadServiceStub(channel(addr))
    taken = common_pb2.NodeInfo(node_id=node, address="127.0.0.9:1")
    for name, call in (
            ("register", lambda: stub.RegisterNode(pb.RegisterNodeRequest(
                node=taken, node_secret="x" * 64), timeout=5)),
            ("report", lambda: stub.ReportNode(pb.ReportNodeRequest(
                node_id=node, seqno=999), timeout=5)),
            ("report tasks", lambda: stub.ReportTasks(pb.ReportTasksRequest(
                node_id=node, node_secret="x" * 64), timeout=5)),
            ("unregister", lambda: stub.UnregisterNode(
                pb.UnregisterNodeRequest(node_id=node), timeout=5))):
        try:
            call()
            check(False, "%s of another node accepted" % name)
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.PERMISSION_DENIED,
                  "%s: %s" % (name, e.code()))
    check(stays_true(lambda: [n["state"] for n in
                              status(address=addr)["nodes"]] == ["ALIVE"],
                     1.0, "node still alive"), "the node was disturbed")
    n = status(address=addr)["nodes"][0]
    check(n["address"] != "127.0.0.9:1", "address taken over: %r" % n)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_private_files_and_store():
    addr, d, _ = start("files")
    secret = "s3cr3t-%d" % os.getpid()
    run(["submit", "--temp-dir", d, "--env", "API_KEY=" + secret, "--",
         "sh", "-c", "echo hi"])
    # The env is listed only when asked for, and never logged.
    hidden = run(["list", "tasks", "--temp-dir", d, "--format", "json"]).stdout
    check(secret not in hidden and "API_KEY" not in hidden, hidden)
    shown = run(["list", "tasks", "--temp-dir", d, "--format", "json",
                 "--show-env"]).stdout
    check('"API_KEY": "%s"' % secret in shown, shown)
    for name in ("head.log", "worker.log"):
        check(secret not in read(os.path.join(d, "logs"), name),
              "the secret is in " + name)
    check(mode(d) == 0o700, "session dir %o" % mode(d))
    check(mode(os.path.join(d, "token")) == 0o600, "token")
    check(read(d, "token") == TOKEN, "the token given is the one kept")
    for root, dirs, files in os.walk(os.path.join(d, "logs")):
        for x in dirs:
            check(mode(os.path.join(root, x)) == 0o700, "dir %s" % x)
        for x in files:
            check(mode(os.path.join(root, x)) == 0o600, "log %s %o" %
                  (x, mode(os.path.join(root, x))))
    sock = os.path.join(d, "objstore.sock")
    check(mode(sock) == 0o600, "store socket %o" % mode(sock))
    if os.geteuid() != 0:
        print("not root: the other-uid store check is skipped")
        return
    # Open the way for uid 65534 and show the store itself refuses it.
    os.chmod(d, 0o711)
    os.chmod(sock, 0o666)
    probe = ("import socket,sys\n"
             "s=socket.socket(socket.AF_UNIX)\n"
             "s.connect(sys.argv[1])\n"
             "s.settimeout(5)\n"
             "s.sendall(b'\\0'*64)\n"
             "print('got', len(s.recv(4096)))\n")
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", "/usr/bin/python3", "-c", probe,
                        sock],
                       capture_output=True, text=True, timeout=30)
    print("other uid:", p.stdout.strip(), p.stderr.strip()[-200:])
    check("got 0" in p.stdout or p.returncode != 0,
          "another uid used the store: %r %r" % (p.stdout, p.stderr))
    log = read(os.path.join(d, "logs"), "worker.log")
    check("refused a connection from uid 65534" in log, "no refusal logged")
    os.chmod(d, 0o700)


def test_new_token_after_restart():
    env = dict(os.environ, MANTA_AUTH_TOKEN="a" * 40)
    addr, d, _ = start("rotate", env=env)
    run(["stop", "--temp-dir", d])
    port = addr.split(":")[1]
    env_b = dict(os.environ, MANTA_AUTH_TOKEN="b" * 40)
    p = subprocess.run([MANTA, "start", "--head", "--port", port, "--node-ip",
                        "127.0.0.1", "--temp-dir", d, "--num-cpus", "1"] +
                       FAST, capture_output=True, text=True, timeout=60,
                       env=env_b)
    check(p.returncode == 0, p.stderr)
    t0 = time.monotonic()
    p = subprocess.run([MANTA, "status", "--address", addr],
                       capture_output=True, text=True, timeout=30, env=env)
    dt = time.monotonic() - t0
    check(p.returncode != 0 and "wrong cluster token" in p.stderr,
          "old token: %r" % p.stderr)
    check(dt < 3, "old token took %.1fs to fail" % dt)
    # A C driver with the old token fails its connect the same way.
    p = subprocess.run([os.path.join(BIN, "sdk_smoke"), "resources", addr,
                        "1"], capture_output=True, text=True, timeout=30,
                       env=env)
    check(p.returncode != 0 and "wrong cluster token" in p.stderr,
          "driver with the old token: %r" % p.stderr)
    p = subprocess.run([os.path.join(BIN, "sdk_smoke"), "resources", addr,
                        "1"], capture_output=True, text=True, timeout=30,
                       env=env_b)
    check(p.returncode == 0, "driver with the new token: %r" % p.stderr)


def test_generated_token_and_auth_none():
    # No token anywhere: `manta start --head` makes one, prints how to
    # join and a logged-in dashboard link, and local commands find it.
    env = {k: v for k, v in os.environ.items() if k != "MANTA_AUTH_TOKEN"}
    addr, d, out = start("gen", ["--dashboard-port", "0"], env=env)
    tok = read(d, "token")
    check(len(tok) == 64 and tok != TOKEN, "generated token %r" % tok)
    check("--token-file" in out and "?token=" + tok in out, out)
    p = subprocess.run([MANTA, "status", "--temp-dir", d], env=env,
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "status with the session token: %s" % p.stderr)
    # A second node joins with a copy of the token file.
    copy = os.path.join(new_dir("tok"), "token")
    with open(copy, "w") as f:
        f.write(tok + "\n")
    d2 = new_dir("gen2")
    p = subprocess.run([MANTA, "start", "--address", addr, "--node-ip",
                        "127.0.0.2", "--temp-dir", d2, "--num-cpus", "1",
                        "--token-file", copy] + FAST, env=env,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "join: %s" % p.stderr)
    # Joining without a token is refused up front.
    p = subprocess.run([MANTA, "start", "--address", addr, "--node-ip",
                        "127.0.0.3", "--temp-dir", new_dir("gen3")],
                       env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "cluster token" in p.stderr, p.stderr)
    # --auth none: the old behaviour, said loudly.
    addr, d, out = start("none", ["--auth", "none"], env=env)
    check("WARNING: auth is off" in out, out)
    check(not os.path.exists(os.path.join(d, "token")), "token kept")
    with grpc.insecure_channel(addr) as ch:
        code = call_code(ch, "/manta.HeadService/GetClusterStatus", False)
        check(code == grpc.StatusCode.OK, "auth none: %s" % code)
    with open(os.path.join(d, "logs", "head.log")) as f:
        check("AUTH IS OFF" in f.read(), "no warning in the head log")


if __name__ == "__main__":
    main([test_every_method_needs_the_token,
          test_nodes_cannot_speak_for_each_other,
          test_private_files_and_store,
          test_new_token_after_restart,
          test_generated_token_and_auth_none])
