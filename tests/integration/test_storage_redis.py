"""test_storage_redis.py -- the head's Redis storage backend (issue 15, first
part: `manta start --head --storage redis://HOST:PORT[/DB]`).

A redis-server of its own on a free port (no persistence), then:
- a Redis that cannot be reached or refuses the password: the head does
  not start and says why;
- the head saves its nodes in the hash manta:nodes; a head killed and
  started again on the same storage loads them before any worker
  re-registers;
- Redis lost while the head runs: the head goes on (a worker that stops
  is still marked DEAD), says so in its log, buffers the write, and sends
  it when Redis is back.
"""
import os
import signal
import subprocess

from harness import (check, free_port, main, new_dir, read_pid, run,
                     status, wait_until)

REDIS_PROCS = []


def start_redis(port, d, password=None):
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", d]
    if password:
        args += ["--requirepass", password]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    REDIS_PROCS.append(p)
    wait_until(lambda: redis(port, "PING", password=password) == "PONG", 10,
               "redis-server up")
    return p


def stop_redis(p):
    if p.poll() is None:
        p.kill()
        p.wait()


def redis(port, *cmd, password=None):
    args = ["redis-cli", "-p", str(port)]
    if password:
        args += ["--no-auth-warning", "-a", password]
    r = subprocess.run(args + list(cmd), capture_output=True, text=True,
                       timeout=10)
    return r.stdout.strip()


def head_log(d):
    with open(os.path.join(d, "logs", "head.log"), errors="replace") as f:
        return f.read()


def start_head(d, port, storage):
    return run(["start", "--head", "--no-worker", "--port", str(port),
                "--node-ip", "127.0.0.1", "--temp-dir", d, "--storage",
                storage, "--report-period-ms", "200", "--node-timeout-ms",
                "1500"], check=False)


def test_unusable_redis_is_a_clear_error():
    d = new_dir("rhead")
    p = start_head(d, free_port(), "redis://127.0.0.1:%d" % free_port())
    check(p.returncode != 0, "a head started without its Redis")
    check("cannot use Redis" in head_log(d), head_log(d)[-2000:])
    rport = free_port()
    rp = start_redis(rport, new_dir("redis"), password="s3cret")
    try:
        d = new_dir("rhead")
        p = start_head(d, free_port(),
                       "redis://wrong@127.0.0.1:%d" % rport)
        check(p.returncode != 0 and "cannot use Redis" in head_log(d),
              "wrong password: %d %s" % (p.returncode, head_log(d)[-1000:]))
        d = new_dir("rhead")
        p = start_head(d, free_port(), "redis://s3cret@127.0.0.1:%d/2" % rport)
        check(p.returncode == 0, "right password: %s" % p.stderr)
        st = status(d)["storage"]
        text = run(["status", "--temp-dir", d]).stdout
        check(st["spec"] == "redis://***@127.0.0.1:%d/2" % rport and
              st["backend"] == "redis" and "s3cret" not in text and
              "s3cret" not in head_log(d), "password shown: %r" % st)
        run(["stop", "--temp-dir", d])
    finally:
        stop_redis(rp)
    for bad in ("redis://127.0.0.1", "redis://:1", "redis://h:1/x"):
        d = new_dir("rhead")
        p = start_head(d, free_port(), bad)
        check(p.returncode != 0 and "bad Redis address" in head_log(d),
              "%s: %d" % (bad, p.returncode))


def test_nodes_survive_a_head_restart_and_redis_loss():
    rport, hport = free_port(), free_port()
    rdir = new_dir("redis")
    rp = start_redis(rport, rdir)
    storage = "redis://127.0.0.1:%d/1" % rport
    hd, wd = new_dir("rhead"), new_dir("rworker")
    try:
        p = start_head(hd, hport, storage)
        check(p.returncode == 0, p.stderr)
        addr = "127.0.0.1:%d" % hport
        run(["start", "--address", addr, "--node-ip", "127.0.0.2",
             "--temp-dir", wd, "--num-cpus", "1"])
        wait_until(lambda: redis(rport, "-n", "1", "HLEN", "manta:nodes") ==
                   "1", 10, "the node saved in Redis db 1")
        # kill -9 the head; a new one on the same storage loads the node.
        os.kill(read_pid(hd, "head"), signal.SIGKILL)
        os.kill(read_pid(wd, "worker"), signal.SIGSTOP)
        try:
            p = start_head(hd, hport, storage)
            check(p.returncode == 0, p.stderr)
            wait_until(lambda: "loaded 1 nodes from storage" in head_log(hd),
                       10, "the saved node loaded")
        finally:
            os.kill(read_pid(wd, "worker"), signal.SIGCONT)
        wait_until(lambda: any(n["state"] == "ALIVE" for n in
                               status(address=addr)["nodes"]), 10,
                   "the worker back")
        # Redis goes away: the head goes on and buffers what it writes.
        stop_redis(rp)
        wait_until(lambda: "lost Redis" in head_log(hd), 10,
                   "the head saw Redis go")
        run(["stop", "--temp-dir", wd])
        wait_until(lambda: all(n["state"] == "DEAD" for n in
                               status(address=addr)["nodes"]), 10,
                   "the stopped worker DEAD while Redis is away")
        st = status(address=addr)["storage"]
        check(not st["healthy"] and st["buffered"] >= 1 and
              st["down_since_ms"] > 0, "storage while away %r" % st)
        text = run(["status", "--address", addr]).stdout
        check("UNREACHABLE since" in text and "writes buffered" in text,
              text)
        rp = start_redis(rport, rdir)
        wait_until(lambda: "buffered writes sent" in head_log(hd), 15,
                   "the buffered writes sent when Redis came back")
        wait_until(lambda: redis(rport, "-n", "1", "HLEN", "manta:nodes") ==
                   "1", 10, "the node's last state in Redis again")
        run(["stop", "--temp-dir", hd])
    finally:
        stop_redis(rp)


if __name__ == "__main__":
    try:
        main([test_unusable_redis_is_a_clear_error,
              test_nodes_survive_a_head_restart_and_redis_loss])
    finally:
        for proc in REDIS_PROCS:
            stop_redis(proc)
