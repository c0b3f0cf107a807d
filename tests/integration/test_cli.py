"""test_cli.py -- the `manta` command's contract for people and scripts:
--help everywhere, usage errors exit 2 with a message, an unreachable head
fails status within 5 s with one line, a second start over a live session
is refused, a worker that cannot join is not left behind, stop is
idempotent, and the daemons reject bad flags too.
"""
import os
import subprocess
import time

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir,
                     pid_alive, read_pid, run)


def sh(args, timeout=30):
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=timeout)


def test_help_everywhere():
    for args in (["--help"], ["start", "--help"], ["stop", "--help"],
                 ["status", "--help"]):
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
        ["status", "--address", "a:1", "--temp-dir", "/tmp"],
        ["status", "--address", "noport"],
    ]
    for args in cases:
        p = run(args, check=False)
        check(p.returncode == 2, "%s exited %d" % (args, p.returncode))
        check(p.stderr.strip(), "%s printed no message" % args)
    for prog, args in (("manta-head", ["--port", "x"]),
                       ("manta-worker", []),
                       ("manta-worker", ["--address", "a:1", "--memory", "lots"])):
        p = sh([os.path.join(BIN, prog)] + args)
        check(p.returncode == 2, "%s %s exited %d" % (prog, args, p.returncode))


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
          test_second_start_refused_and_stop_idempotent,
          test_worker_that_cannot_join_is_not_left_behind])
