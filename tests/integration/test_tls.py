"""test_tls.py -- whole clusters under mutual TLS (docs/security.md): a CA
and node certificate from `manta tls-init`, handed to every daemon, driver
and manta command through MANTA_TLS_CERT/_KEY/_CA, then other suites'
tests run unchanged on top: command and function tasks, actors across
two nodes, a 1 GiB object pulled between nodes, and a gang over two fake
TPU slices. A client without the CA's certificate, or without TLS, gets
nowhere.
"""
import atexit
import os
import shutil
import subprocess
import tempfile
import time

from harness import MANTA, check, main, new_dir, run

import grpc  # noqa: E402  (Debian python3-grpcio)

# Every address a test cluster here uses: 127.0.0.1-3, accel 11-16.
IPS = [2, 3] + list(range(11, 17))


def make_certs():
    """The certificates, in a dir of their own that outlives each test's
    cleanup (removed at exit)."""
    top = tempfile.mkdtemp(prefix="manta-it-tls-")
    atexit.register(shutil.rmtree, top, True)
    d = os.path.join(top, "certs")
    args = ["tls-init", "--dir", d]
    for i in IPS:
        args += ["--ip", "127.0.0.%d" % i]
    run(args)
    return {"MANTA_TLS_CERT": os.path.join(d, "node.pem"),
            "MANTA_TLS_KEY": os.path.join(d, "node.key"),
            "MANTA_TLS_CA": os.path.join(d, "ca.pem")}


os.environ.update(make_certs())

import test_actors  # noqa: E402
import test_functions  # noqa: E402
import test_gangs  # noqa: E402
import test_objects  # noqa: E402
import test_security  # noqa: E402
import test_tasks  # noqa: E402


def test_clients_without_the_ca_get_nowhere():
    addr, d, _ = test_security.start("tlsneg")
    # Plain TCP to a TLS port: refused quickly, not a hang.
    with grpc.insecure_channel(addr) as ch:
        t0 = time.monotonic()
        try:
            ch.unary_unary("/manta.HeadService/GetClusterStatus")(
                b"", timeout=5)
            check(False, "plaintext call answered")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.UNAVAILABLE, str(e.code()))
        check(time.monotonic() - t0 < 5.5, "plaintext call hung")
    # Another CA's certificate: the handshake fails.
    other = os.path.join(new_dir("tls2"), "certs")
    run(["tls-init", "--dir", other])
    env = dict(os.environ,
               MANTA_TLS_CERT=os.path.join(other, "node.pem"),
               MANTA_TLS_KEY=os.path.join(other, "node.key"),
               MANTA_TLS_CA=os.path.join(other, "ca.pem"))
    p = subprocess.run([MANTA, "status", "--address", addr],
                       capture_output=True, text=True, timeout=30, env=env)
    check(p.returncode != 0, "a foreign certificate got in: %s" % p.stdout)
    # With the cluster's CA everything works.
    run(["status", "--address", addr])


if __name__ == "__main__":
    main([test_tasks.test_output_and_exit_code,
          test_functions.test_results_and_output,
          test_actors.test_named_detached_in_order,
          test_objects.test_one_gib_pull_arrives_intact,
          test_gangs.test_sdk_and_slice_groups,
          test_clients_without_the_ca_get_nowhere])
