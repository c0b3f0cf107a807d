"""test_reconnect.py -- drivers ride out a head restart (issue 15,
"Recovery"): the SDK retries what it sends to a head that went away until
MANTA_HEAD_RECONNECT_TIMEOUT, reopens its watches and session under the
same ids, and names its tasks so that a resubmit is not a second task.

One driver process (build/bin/reconnect_driver, reconnect_driver.c) per
test, told what to do line by line while the test kills the head with
kill -9 and starts it again on the same port:
- submits made while the head is down succeed once it is back, each task
  runs once, and a task submitted before the outage can still be waited
  for when the new head knows nothing of it: it fails clearly;
- with MANTA_HEAD_RECONNECT_TIMEOUT=2 and no head coming back, a task
  submitted meanwhile fails within a few seconds with a message naming
  the head and the variable, and the driver exits cleanly;
- direct actor calls go on while the head is away;
- with a head that keeps its tasks (the lead's storage work; skipped with
  the reason until a restarted head still lists a task), a wait begun
  before the restart returns the task's real end.
"""
import os
import signal
import subprocess
import time

from harness import (BIN, FAST, check, free_port, main, new_dir, read_pid,
                     run, status, wait_until)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
DRIVER = os.path.join(BIN, "reconnect_driver")
PROCS = []


def start_head(d, port, storage=None):
    args = ["start", "--head", "--no-worker", "--port", str(port),
            "--node-ip", "127.0.0.1", "--temp-dir", d] + FAST
    if storage:
        args += ["--storage", storage]
    run(args)


def start_cluster(storage=None):
    """A head without a worker on 127.0.0.1, a 2-CPU worker on 127.0.0.2."""
    port = free_port()
    hd, wd = new_dir("rchead"), new_dir("rcwork")
    start_head(hd, port, storage)
    addr = "127.0.0.1:%d" % port
    run(["start", "--address", addr, "--node-ip", "127.0.0.2", "--temp-dir",
         wd, "--num-cpus", "2", "--memory", "1GiB"] + FAST)
    wait_until(lambda: alive(addr) == 1, 15, "the worker alive")
    return addr, port, hd


def alive(addr):
    try:
        return len([n for n in status(address=addr, timeout=5)["nodes"]
                    if n["state"] == "ALIVE"])
    except Exception:
        return 0


def kill_head(hd):
    os.kill(read_pid(hd, "head"), signal.SIGKILL)


class Driver:
    """reconnect_driver: ask() sends one line and reads its answer."""

    def __init__(self, addr, env=None):
        self.p = subprocess.Popen([DRIVER, addr, LIB_DIR],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, **(env or {})))
        PROCS.append(self.p)
        line = self.p.stdout.readline().strip()
        check(line == "connected", "driver: %r" % line)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline().strip()
        check(out, "driver gave no answer to %r (exit %s)" %
              (line, self.p.poll()))
        return out

    def quit(self):
        check(self.ask("quit") == "bye", "driver did not say bye")
        check(self.p.wait(timeout=20) == 0, "driver exit %s" % self.p.poll())


def tasks_named(addr, word):
    out = run(["list", "tasks", "--address", addr, "--format", "json"]).stdout
    return out.count(word)


def test_submits_during_outage_run_once_the_head_is_back():
    addr, port, hd = start_cluster()
    d = Driver(addr)
    check(d.ask("cmd a true") == "sub a", "submit a")
    check(d.ask("wait a 20000") == "done a FINISHED 0", "a ran")
    check(d.ask("cmd long sleep 5") == "sub long", "submit long")
    time.sleep(0.5)
    kill_head(hd)
    time.sleep(0.5)
    # Submits while the head is down: accepted by the SDK, sent later.
    check(d.ask("cmd b echo once-b") == "sub b", "submit b, head down")
    check(d.ask("cmd c echo once-c") == "sub c", "submit c, head down")
    time.sleep(1.5)
    start_head(hd, port)
    check(d.ask("wait b 30000") == "done b FINISHED 0", "b ran")
    check(d.ask("wait c 30000") == "done c FINISHED 0", "c ran")
    check(d.ask("cmd e true") == "sub e", "submit e, head back")
    check(d.ask("wait e 30000") == "done e FINISHED 0", "e ran")
    check(tasks_named(addr, "once-b") == 1 and tasks_named(addr, "once-c") ==
          1, "each submit made one task")
    # The new head has no state: the task it never saw fails clearly.
    out = d.ask("wait long 30000")
    check(out.startswith("waiterr long MT_ENOENT the head restarted without "
                         "its state") or
          out.startswith("done long"), "long: %s" % out)
    d.quit()


def test_gives_up_after_the_reconnect_timeout():
    addr, port, hd = start_cluster()
    d = Driver(addr, env={"MANTA_HEAD_RECONNECT_TIMEOUT": "2"})
    check(d.ask("cmd a true") == "sub a", "submit a")
    check(d.ask("wait a 20000") == "done a FINISHED 0", "a ran")
    kill_head(hd)
    t0 = time.monotonic()
    check(d.ask("cmd x true") == "sub x", "submit x, head down")
    out = d.ask("wait x 30000")
    took = time.monotonic() - t0
    want = ("waiterr x MT_EUNAVAIL head %s unreachable for 2 s "
            "(MANTA_HEAD_RECONNECT_TIMEOUT)" % addr)
    check(out == want, "got %r, want %r" % (out, want))
    check(1.5 <= took <= 5, "gave up after %.1f s" % took)
    d.quit()


def test_actor_calls_go_on_while_the_head_is_away():
    addr, port, hd = start_cluster()
    d = Driver(addr)
    check(d.ask("actor") == "actor ready", "actor created")
    check(d.ask("incr") == "incr 1", "first call")
    kill_head(hd)
    time.sleep(0.5)
    for want in (2, 3, 4):
        out = d.ask("incr")
        check(out == "incr %d" % want, "call with the head away: %s" % out)
    start_head(hd, port)
    check(d.ask("incr") == "incr 5", "call with the head back")
    d.quit()


def head_keeps_tasks():
    """Whether a restarted head still knows a task it held (the lead's
    persistence); redis-server is needed for the probe."""
    try:
        subprocess.run(["redis-server", "--version"], capture_output=True,
                       check=True)
    except (OSError, subprocess.CalledProcessError):
        return False, "no redis-server"
    rport = free_port()
    rp = start_redis(rport)
    try:
        addr, port, hd = start_cluster("redis://127.0.0.1:%d" % rport)
        run(["submit", "--address", addr, "--no-wait", "--name", "probe-task", "--",
             "sleep", "20"])
        kill_head(hd)
        start_head(hd, port, "redis://127.0.0.1:%d" % rport)
        if tasks_named(addr, "probe-task") == 0:
            return False, "a restarted head does not restore its tasks yet"
        return True, ""
    finally:
        rp.kill()
        rp.wait()


def start_redis(port):
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind",
                          "127.0.0.1", "--save", "", "--appendonly", "no",
                          "--dir", new_dir("rcredis")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    PROCS.append(p)
    wait_until(lambda: subprocess.run(
        ["redis-cli", "-p", str(port), "PING"], capture_output=True,
        text=True).stdout.strip() == "PONG", 10, "redis-server up")
    return p


def test_wait_survives_a_head_restart_with_state():
    ok, why = head_keeps_tasks()
    if not ok:
        print("SKIP test_wait_survives_a_head_restart_with_state: %s" % why)
        return
    rport = free_port()
    rp = start_redis(rport)
    storage = "redis://127.0.0.1:%d" % rport
    try:
        addr, port, hd = start_cluster(storage)
        d = Driver(addr)
        check(d.ask("cmd s sleep 2") == "sub s", "submit s")
        check(d.ask("cmd f false") == "sub f", "submit f")
        time.sleep(0.5)
        kill_head(hd)
        time.sleep(1)
        start_head(hd, port, storage)
        check(d.ask("wait s 30000") == "done s FINISHED 0", "s waited")
        check(d.ask("wait f 30000") == "done f FINISHED 1", "f waited")
        d.quit()
    finally:
        rp.kill()
        rp.wait()


if __name__ == "__main__":
    try:
        main([test_submits_during_outage_run_once_the_head_is_back,
              test_gives_up_after_the_reconnect_timeout,
              test_actor_calls_go_on_while_the_head_is_away,
              test_wait_survives_a_head_restart_with_state])
    finally:
        for proc in PROCS:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
