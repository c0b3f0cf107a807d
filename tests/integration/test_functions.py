"""test_functions.py -- function tasks end to end: FUNCTION tasks submitted
over gRPC (SubmitTask, followed with WatchTask) run on a head+worker node
whose worker keeps a pool of 2 prestarted manta-executor processes and
loads libmt_test_fnlib.so (tests/integration/fnlib.c) from the task's
code path.

Results come back correct (add, echo, a bare name); the task's
environment is set for the call only; 200 tasks reuse the
pool (the pids a getpid function returns repeat); what a function prints
is relayed as its output; a function's error is FAILED with its text;
a crash is retried and then FAILED with "executor died"; an executor
killed mid-task is replaced and the task retried to success; a missing
function or library is FAILED with a not-found message; a result over
8 MiB is FAILED with the inline limit; StopTask through CancelTask of a
running function ends it CANCELLED at once and the pool replaces the
executor; a worker without its manta-executor binary fails function
tasks with the reason; stopping the node kills its executors; no
resource is left behind.
"""
import os
import shutil
import struct
import subprocess
import time

from harness import (BIN, FAST, channel, check, free_port, main, new_dir,
                     pid_alive, proto_stubs, read_pid, run, status, wait_until)

import grpc  # noqa: E402  (Debian python3-grpcio)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
LIB = "libmt_test_fnlib.so"
EXECUTORS = 2


def stubs():
    proto_stubs()
    import common_pb2
    import head_service_pb2
    import head_service_pb2_grpc
    return common_pb2, head_service_pb2, head_service_pb2_grpc


C, PB, PBG = stubs()
S = C.TaskState


def start_cluster():
    port = free_port()
    d = new_dir("fn")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", str(EXECUTORS), "--memory", "1GiB"]
        + FAST)
    addr = "127.0.0.1:%d" % port
    wait_until(lambda: [n for n in status(address=addr)["nodes"]
                        if n["state"] == "ALIVE"], 10, "an alive node")
    ch = channel(addr, options=[
        ("grpc.max_receive_message_length", 64 << 20)])
    return addr, d, PBG.HeadServiceStub(ch)


def submit(stub, function, args=(), code_path=(LIB_DIR,), max_retries=-1,
           name="", env=None, cpus=None):
    spec = C.TaskSpec(kind=C.TASK_KIND_FUNCTION, function=function,
                      args=list(args), code_path=list(code_path),
                      max_retries=max_retries, name=name,
                      env=[C.Label(key=k, value=v)
                           for k, v in (env or {}).items()])
    if cpus is not None:
        spec.resources.append(C.ResourceEntry(name="CPU",
                                              quantity=int(cpus * 10000)))
    return stub.SubmitTask(PB.SubmitTaskRequest(spec=spec),
                           timeout=10).task_id


def watch(stub, tid, output=False, timeout=60):
    """Follow a task to its end. RET (last event, [(fd, bytes)], states)."""
    outs, states, last = [], [], None
    for ev in stub.WatchTask(PB.WatchTaskRequest(task_id=tid, output=output),
                             timeout=timeout):
        if ev.output:
            # Replayed output of an ended task carries its final state;
            # the final event itself comes last, without output.
            outs.append((ev.fd, ev.output))
            continue
        if ev.state:
            states.append(ev.state)
        last = ev
        if ev.state in (S.TASK_STATE_FINISHED, S.TASK_STATE_FAILED,
                        S.TASK_STATE_CANCELLED):
            break
    return last, outs, states


def wait_running(stub, tid):
    """Watch tid until it runs. RET the stream, to follow it further."""
    stream = stub.WatchTask(PB.WatchTaskRequest(task_id=tid), timeout=60)
    for ev in stream:
        if ev.state == S.TASK_STATE_RUNNING:
            return stream
        check(ev.state not in (S.TASK_STATE_FINISHED, S.TASK_STATE_FAILED,
                               S.TASK_STATE_CANCELLED), "ended: %r" % ev)
    raise AssertionError("stream ended before %s ran" % tid)


def run_fn(stub, function, args=(), **kw):
    return watch(stub, submit(stub, function, args, **kw))[0]


def i64(v):
    return struct.pack("=q", v)


def worker_log(d):
    with open(os.path.join(d, "logs", "worker.log")) as f:
        return f.read()


def executor_pids(d):
    """Pids of manta-executor processes whose parent is this worker."""
    wpid = read_pid(d, "worker")
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        if comm == "manta-executor" and int(fields[1]) == wpid and \
                fields[0] not in ("Z", "X"):
            pids.append(int(p))
    return sorted(pids)


def no_leaks(addr, timeout=10):
    def ok():
        for n in status(address=addr)["nodes"]:
            if n["state"] == "ALIVE" and \
                    n["resources_available"] != n["resources_total"]:
                return None
        return True
    wait_until(ok, timeout, "available == total on every node", 0.2)


# ---- tests -------------------------------------------------------------------


def test_results_and_output():
    addr, d, stub = start_cluster()
    wait_until(lambda: len(executor_pids(d)) == EXECUTORS, 10,
               "%d executors" % EXECUTORS)
    ev = run_fn(stub, LIB + ":add", [i64(40), i64(2)])
    check(ev.state == S.TASK_STATE_FINISHED, "add: %r" % ev)
    check(struct.unpack("=q", ev.result)[0] == 42, "add: %r" % ev.result)
    ev = run_fn(stub, LIB + ":add", [i64(-7), i64(2 ** 40)])
    check(struct.unpack("=q", ev.result)[0] == 2 ** 40 - 7, "add big")
    blob = bytes(range(256)) * 1000
    ev = run_fn(stub, LIB + ":echo", [blob])
    check(ev.state == S.TASK_STATE_FINISHED and ev.result == blob,
          "echo: %d bytes back" % len(ev.result))
    # A bare name is found among the code path's libraries.
    ev = run_fn(stub, "echo", [b"bare"])
    check(ev.state == S.TASK_STATE_FINISHED and ev.result == b"bare",
          "bare echo: %r" % ev)
    # An empty result is fine.
    ev = run_fn(stub, LIB + ":sleep_ms", [b"1"])
    check(ev.state == S.TASK_STATE_FINISHED and ev.result == b"",
          "sleep_ms: %r" % ev)
    # What the function prints is the task's output.
    tid = submit(stub, LIB + ":hello")
    ev, outs, _ = watch(stub, tid, output=True)
    check(ev.state == S.TASK_STATE_FINISHED and ev.result == b"done",
          "hello: %r" % ev)
    out = b"".join(o for fd, o in outs if fd == 1)
    err = b"".join(o for fd, o in outs if fd == 2)
    check(out == b"hello from nothing\n", "stdout %r" % out)
    check(err == b"to stderr\n", "stderr %r" % err)
    # The task's environment is set for the call, and only for it.
    tid = submit(stub, LIB + ":env", [b"MANTA_TASK_ID"])
    ev = watch(stub, tid)[0]
    check(ev.result == tid.encode(), "MANTA_TASK_ID %r" % ev)
    for _ in range(EXECUTORS):
        ev = run_fn(stub, LIB + ":env", [b"GREETING"],
                    env={"GREETING": "hi there"})
        check(ev.result == b"hi there", "GREETING %r" % ev)
    for _ in range(EXECUTORS):
        ev = run_fn(stub, LIB + ":env", [b"GREETING"])
        check(ev.state == S.TASK_STATE_FAILED and
              ev.error == "GREETING is not set", "GREETING left: %r" % ev)
    no_leaks(addr)


def test_pool_is_reused():
    addr, d, stub = start_cluster()
    before = wait_until(lambda: executor_pids(d)
                        if len(executor_pids(d)) == EXECUTORS else None,
                        10, "%d executors" % EXECUTORS)
    t0 = time.monotonic()
    tids = [submit(stub, LIB + ":getpid") for _ in range(200)]
    pids = []
    for tid in tids:
        ev = watch(stub, tid)[0]
        check(ev.state == S.TASK_STATE_FINISHED, "getpid: %r" % ev)
        pids.append(int(ev.result))
    took = time.monotonic() - t0
    check(set(pids) <= set(before), "pids %s not among the executors %s" %
          (sorted(set(pids)), before))
    check(len(set(pids)) <= EXECUTORS, "pids %s" % sorted(set(pids)))
    check(executor_pids(d) == before, "executors changed: %s -> %s" %
          (before, executor_pids(d)))
    print("  200 getpid tasks in %.2fs on pids %s" % (took, sorted(set(pids))))
    no_leaks(addr)


def test_failures():
    addr, d, stub = start_cluster()
    ev = run_fn(stub, LIB + ":fail")
    check(ev.state == S.TASK_STATE_FAILED and ev.error == "boom",
          "fail: %r" % ev)
    ev = run_fn(stub, LIB + ":add", [i64(1)])
    check(ev.state == S.TASK_STATE_FAILED and "two 8-byte" in ev.error,
          "add with one arg: %r" % ev)
    ev = run_fn(stub, LIB + ":no_such_fn")
    check(ev.state == S.TASK_STATE_FAILED and
          "function 'no_such_fn' not found in " + LIB in ev.error,
          "missing function: %r" % ev)
    ev = run_fn(stub, "libno_such_lib.so:f")
    check(ev.state == S.TASK_STATE_FAILED and "not found" in ev.error and
          "libno_such_lib.so" in ev.error, "missing library: %r" % ev)
    ev = run_fn(stub, "no_such_bare_fn")
    check(ev.state == S.TASK_STATE_FAILED and "not found" in ev.error,
          "missing bare function: %r" % ev)
    ev = run_fn(stub, LIB + ":big", [b"9000000"])
    check(ev.state == S.TASK_STATE_FAILED and
          "result of 9000000 bytes exceeds the 8 MiB inline limit" in
          ev.error, "big result: %r" % ev)
    ev = run_fn(stub, LIB + ":big", [b"8000000"])
    check(ev.state == S.TASK_STATE_FINISHED and len(ev.result) == 8000000,
          "8 MB result: %r" % ev.state)
    no_leaks(addr)


def test_crash_is_retried_then_fails():
    addr, d, stub = start_cluster()
    before = wait_until(lambda: executor_pids(d)
                        if len(executor_pids(d)) == EXECUTORS else None,
                        10, "%d executors" % EXECUTORS)
    tid = submit(stub, LIB + ":crash", max_retries=1)
    ev, _, states = watch(stub, tid)
    check(ev.state == S.TASK_STATE_FAILED, "crash: %r" % ev)
    check("executor died" in ev.error, "crash error %r" % ev.error)
    check(ev.attempt == 1, "crash: attempt %d, not retried once" %
          ev.attempt)
    # The pool replaced the dead executors and still works.
    wait_until(lambda: len(executor_pids(d)) == EXECUTORS, 10,
               "executors replaced")
    check(executor_pids(d) != before, "no executor was replaced")
    ev = run_fn(stub, LIB + ":add", [i64(1), i64(2)])
    check(ev.state == S.TASK_STATE_FINISHED, "add after crash: %r" % ev)
    # Without retries it fails on the first death.
    ev = run_fn(stub, LIB + ":crash", max_retries=0)
    check(ev.state == S.TASK_STATE_FAILED and "executor died" in ev.error and
          ev.attempt == 0, "crash without retries: %r" % ev)
    no_leaks(addr)


def test_executor_killed_mid_task_is_retried():
    addr, d, stub = start_cluster()
    pids = wait_until(lambda: executor_pids(d)
                      if len(executor_pids(d)) == EXECUTORS else None,
                      10, "%d executors" % EXECUTORS)
    tid = submit(stub, LIB + ":sleep_ms", [b"1500"], max_retries=1)
    stream = wait_running(stub, tid)
    for p in pids:
        os.kill(p, 9)
    last = None
    for ev in stream:
        last = ev
        if ev.state in (S.TASK_STATE_FINISHED, S.TASK_STATE_FAILED,
                        S.TASK_STATE_CANCELLED):
            break
    check(last.state == S.TASK_STATE_FINISHED and last.attempt == 1,
          "killed executor: %r" % last)
    wait_until(lambda: len(executor_pids(d)) == EXECUTORS, 10,
               "executors replaced")
    check(not set(executor_pids(d)) & set(pids), "old executors remain")
    no_leaks(addr)


def test_cancel_running_function():
    addr, d, stub = start_cluster()
    wait_until(lambda: len(executor_pids(d)) == EXECUTORS, 10,
               "%d executors" % EXECUTORS)
    for force in (False, True):
        tid = submit(stub, LIB + ":sleep_ms", [b"60000"])
        stream = wait_running(stub, tid)
        t0 = time.monotonic()
        stub.CancelTask(PB.CancelTaskRequest(task_id=tid, force=force),
                        timeout=10)
        last = None
        for ev in stream:
            last = ev
            if ev.state in (S.TASK_STATE_FINISHED, S.TASK_STATE_FAILED,
                            S.TASK_STATE_CANCELLED):
                break
        check(last.state == S.TASK_STATE_CANCELLED, "cancel: %r" % last)
        # The executor was killed, so the slot frees up at once.
        no_leaks(addr)
        check(time.monotonic() - t0 < 4, "cancel took %.1fs" %
              (time.monotonic() - t0))
    wait_until(lambda: len(executor_pids(d)) == EXECUTORS, 10,
               "executors replaced")
    ev = run_fn(stub, LIB + ":echo", [b"after"])
    check(ev.state == S.TASK_STATE_FINISHED and ev.result == b"after",
          "echo after cancel: %r" % ev)


def test_cancel_queued_function():
    """CPU-free tasks can outnumber the executors: the extra ones wait on
    the worker, and cancelling one there ends it without touching the
    running ones."""
    addr, d, stub = start_cluster()
    pids = wait_until(lambda: executor_pids(d)
                      if len(executor_pids(d)) == EXECUTORS else None,
                      10, "%d executors" % EXECUTORS)
    running = [submit(stub, LIB + ":sleep_ms", [b"60000"], cpus=0.01)
               for _ in range(EXECUTORS)]
    for tid in running:
        wait_running(stub, tid)
    queued = submit(stub, LIB + ":sleep_ms", [b"1"], cpus=0.01)

    # The head counts it RUNNING once the worker accepted it, and the
    # worker queues it for an executor before it answers (and before it
    # can handle a StopTask), so RUNNING is the condition to wait for: the
    # worker holds it until an executor is free. Its log then says the
    # cancel took it out of that queue.
    wait_running(stub, queued)
    stub.CancelTask(PB.CancelTaskRequest(task_id=queued), timeout=10)
    ev = watch(stub, queued, timeout=10)[0]
    check(ev.state == S.TASK_STATE_CANCELLED, "queued cancel: %r" % ev)
    wait_until(lambda: "task=%s attempt=0 stop requested: it leaves the "
               "executor queue" % queued in worker_log(d), 10,
               "the worker log saying the task left the executor queue")
    check(executor_pids(d) == pids, "an executor was killed for it")
    for tid in running:
        stub.CancelTask(PB.CancelTaskRequest(task_id=tid), timeout=10)
        ev = watch(stub, tid, timeout=10)[0]
        check(ev.state == S.TASK_STATE_CANCELLED, "cancel: %r" % ev)
    ev = run_fn(stub, LIB + ":echo", [b"again"])
    check(ev.result == b"again", "echo after cancels: %r" % ev)
    no_leaks(addr)


def test_no_executor_binary_fails_tasks():
    """A worker whose manta-executor is missing fails function tasks with
    the reason instead of hanging them, and still runs command tasks."""
    bindir = new_dir("bin")
    for prog in ("manta", "manta-head", "manta-worker"):
        shutil.copy2(os.path.join(BIN, prog), bindir)
    port = free_port()
    d = new_dir("fnx")
    p = subprocess.run([os.path.join(bindir, "manta"), "start", "--head",
                        "--port", str(port), "--node-ip", "127.0.0.1",
                        "--temp-dir", d, "--num-cpus", "1", "--memory",
                        "1GiB"] + FAST, capture_output=True, text=True,
                       timeout=30)
    check(p.returncode == 0, "start: %s" % p.stderr)
    addr = "127.0.0.1:%d" % port
    stub = PBG.HeadServiceStub(channel(addr))
    wait_until(lambda: [n for n in status(address=addr)["nodes"]
                        if n["state"] == "ALIVE"], 10, "an alive node")
    ev = run_fn(stub, LIB + ":echo", [b"x"])
    check(ev.state == S.TASK_STATE_FAILED and
          "cannot start an executor" in ev.error, "no executor: %r" % ev)
    p = run(["submit", "--address", addr, "--", "echo", "ok"])
    check(p.stdout == "ok\n", "command task: %r" % p.stdout)
    no_leaks(addr)


def test_stop_kills_executors():
    addr, d, stub = start_cluster()
    pids = wait_until(lambda: executor_pids(d)
                      if len(executor_pids(d)) == EXECUTORS else None,
                      10, "%d executors" % EXECUTORS)
    tid = submit(stub, LIB + ":sleep_ms", [b"60000"])
    wait_running(stub, tid)
    run(["stop", "--temp-dir", d], timeout=30)
    wait_until(lambda: not any(pid_alive(p) for p in pids), 10,
               "executors gone after stop")


def test_cli_function_tasks():
    """`manta submit --function` runs a function task from the command
    line: the result goes to stdout, failures exit 1, bad usage exits 2."""
    addr, d, stub = start_cluster()
    p = run(["submit", "--address", addr, "--function", LIB + ":echo",
             "--code-path", LIB_DIR, "--arg", "hello"], check=False)
    check(p.returncode == 0 and p.stdout == "hello\n",
          "echo: %d %r %s" % (p.returncode, p.stdout, p.stderr))
    p = run(["submit", "--address", addr, "--function", LIB + ":fail",
             "--code-path", LIB_DIR], check=False)
    check(p.returncode == 1 and "boom" in p.stderr, p.stderr)
    for args in (["--function", "x", "--", "true"], ["--arg", "1", "--",
                                                    "true"],
                 ["--function", "x", "--code-path", "/no/such/dir"]):
        p = run(["submit", "--address", addr] + args, check=False)
        check(p.returncode == 2, "%s exited %d" % (args, p.returncode))


if __name__ == "__main__":
    main([test_results_and_output, test_pool_is_reused, test_failures,
          test_crash_is_retried_then_fails,
          test_executor_killed_mid_task_is_retried,
          test_cancel_running_function, test_cancel_queued_function,
          test_no_executor_binary_fails_tasks,
          test_stop_kills_executors, test_cli_function_tasks])
