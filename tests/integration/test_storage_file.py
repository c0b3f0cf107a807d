"""test_storage_file.py -- the head's default storage (issue 15): `manta
start --head` keeps its state in <temp-dir>/head.state (file://, a log and
snapshots) unless told otherwise.

- the head saves its node there; killed with -9 and started again on the
  same temp dir, it loads the node before the worker re-registers;
- `manta status` (text and JSON) and /metrics say where the state goes and
  how that is going;
- `manta stop` removes the state, so the next start is a fresh cluster;
- `--storage memory` opts out: no state file.
"""
import http.client
import os
import re
import signal

from harness import (check, free_port, main, new_dir, read_pid, run,
                     status, wait_until)

FAST = ["--report-period-ms", "200", "--node-timeout-ms", "1500"]


def head_log(d):
    with open(os.path.join(d, "logs", "head.log"), errors="replace") as f:
        return f.read()


def start_head(d, port, dport, extra=()):
    return run(["start", "--head", "--no-worker", "--port", str(port),
                "--dashboard-port", str(dport), "--node-ip", "127.0.0.1",
                "--temp-dir", d] + FAST + list(extra))


def metrics(d, dport):
    """The storage samples of /metrics: {name: (labels, value)}."""
    with open(os.path.join(d, "token")) as f:
        token = f.read().strip()
    c = http.client.HTTPConnection("127.0.0.1", dport, timeout=10)
    try:
        c.request("GET", "/metrics",
                  headers={"Authorization": "Bearer " + token})
        r = c.getresponse()
        body = r.read().decode()
    finally:
        c.close()
    check(r.status == 200, "/metrics %d" % r.status)
    out = {}
    for m in re.finditer(r"^(manta_storage_\w+)\{([^}]*)\} (\S+)$", body,
                         re.M):
        out[m.group(1)] = (m.group(2), float(m.group(3)))
    return out


def state_files(d):
    return sorted(f for f in os.listdir(d) if f.startswith("head.state"))


def test_default_file_storage_survives_kill_9():
    hd, wd = new_dir("fhead"), new_dir("fworker")
    hport, dport = free_port(), free_port()
    addr = "127.0.0.1:%d" % hport
    spec = "file://%s/head.state" % os.path.realpath(hd)
    start_head(hd, hport, dport)
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         wd, "--num-cpus", "1"] + FAST)
    wait_until(lambda: status(address=addr)["storage"]["writes"] >= 1, 10,
               "the node saved")
    st = status(address=addr)["storage"]
    check(st["backend"] == "file" and st["spec"] == spec and st["healthy"]
          and st["batches"] >= 1 and st["dropped"] == 0, "storage %r" % st)
    check(state_files(hd) == ["head.state.log"], state_files(hd))
    text = run(["status", "--address", addr]).stdout
    check(re.search(r"^Storage: %s ok, \d+ writes$" % re.escape(spec), text,
                    re.M), text)
    ms = metrics(hd, dport)
    check(ms["manta_storage_healthy"] == ('backend="file"', 1.0) and
          ms["manta_storage_writes_total"][1] >= 1 and
          ms["manta_storage_batches_total"][1] >= 1 and
          ms["manta_storage_buffered_writes"][1] == 0 and
          ms["manta_storage_dropped_writes_total"][1] == 0, "metrics %r" % ms)

    # kill -9 the head; started again on the dir, it loads the node.
    os.kill(read_pid(hd, "head"), signal.SIGKILL)
    os.kill(read_pid(wd, "worker"), signal.SIGSTOP)
    try:
        start_head(hd, hport, free_port())
        wait_until(lambda: "loaded 1 nodes from storage" in head_log(hd), 10,
                   "the saved node loaded")
    finally:
        os.kill(read_pid(wd, "worker"), signal.SIGCONT)
    wait_until(lambda: [n["state"] for n in status(address=addr)["nodes"]]
               == ["ALIVE"], 10, "the worker back, once")

    # stop ends the session: the state goes, the next head starts empty.
    run(["stop", "--temp-dir", wd])
    out = run(["stop", "--temp-dir", hd]).stdout
    check("Removed the head's state" in out and state_files(hd) == [],
          "%r %r" % (out, state_files(hd)))
    start_head(hd, hport, free_port())
    check(status(address=addr)["nodes"] == [], "a fresh cluster")
    run(["stop", "--temp-dir", hd])


def test_memory_opt_out():
    hd = new_dir("mhead")
    hport = free_port()
    start_head(hd, hport, free_port(), ["--storage", "memory"])
    st = status(address="127.0.0.1:%d" % hport)["storage"]
    check(st["backend"] == "memory" and st["spec"] == "memory" and
          st["healthy"], "storage %r" % st)
    text = run(["status", "--temp-dir", hd]).stdout
    check("Storage: memory (not durable" in text, text)
    check(state_files(hd) == [], state_files(hd))
    run(["stop", "--temp-dir", hd])


if __name__ == "__main__":
    main([test_default_file_storage_survives_kill_9,
          test_memory_opt_out])
