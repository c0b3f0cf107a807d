"""test_orphans.py -- a task never outlives its worker: a head alone on
127.0.0.1 and a worker on 127.0.0.2 (4 CPUs) running three command tasks
`sh -c 'sleep 31 & sleep 31'` (two sleeps each, one of them in the
background), or a function task whose executor forked a `sleep 31`.

  - the worker killed with SIGKILL: within a few seconds nothing of the
    tasks is left, nor its executors or what a function forked;
  - `manta stop --force`: the same;
  - a task whose main process exits takes what it left running with it
    (after a short grace that lets a background writer finish), and its
    exit status, even death by a signal, is relayed;
  - when the task's guard could not act (it was stopped, then killed
    together with the worker: its death signal never ran), the worker's
    record in the session dir (worker.procs) is what finds the leftovers:
    `manta stop --force` kills them, and so does a worker restarted on the
    same session dir.

A task's processes are found by scanning /proc for a marker carried in
their environment (`--env MANTA_IT_MARKER=...`, which every descendant
inherits) or their argv (the shell's $0). Whatever a failing test leaves
is killed at its end.
"""
import os
import secrets
import signal

from harness import (BIN, FAST, check, free_port, main, new_dir, pid_alive,
                     read_pid, run, status, stays_true, wait_until)

LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
SCRIPT = "sleep 31 & sleep 31"


def marked(marker):
    """Live processes (no zombies) carrying marker in argv or environment:
    {pid: (comm, pgrp)}."""
    env = ("MANTA_IT_MARKER=" + marker).encode()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%d/environ" % pid, "rb") as f:
                envs = f.read().split(b"\0")
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):
            continue
        if marker.encode() in argv or env in envs:
            found[pid] = (comm, int(fields[2]))
    return found


def sleeps(marker):
    return {p: v for p, v in marked(marker).items() if v[0] == "sleep"}


def kill_marked(marker):
    for pid in marked(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def children(pid, comm):
    """Live children of pid named comm."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if (int(fields[1]) == pid and fields[0] not in ("Z", "X") and
                stat[stat.index("(") + 1:stat.rindex(")")] == comm):
            out.append(int(name))
    return out


def start_cluster():
    """A head alone on .1, a worker on .2. RET (address, worker dir,
    worker start args)."""
    port = free_port()
    hd = new_dir("orph-head")
    run(["start", "--head", "--no-worker", "--port", str(port), "--node-ip",
         "127.0.0.1", "--temp-dir", hd] + FAST)
    addr = "127.0.0.1:%d" % port
    wd = new_dir("orph-w")
    wargs = ["start", "--address", addr, "--node-ip", "127.0.0.2",
             "--temp-dir", wd, "--num-cpus", "4", "--memory", "1GiB"] + \
        FAST[:2]
    run(wargs)
    wait_alive(addr)
    return addr, wd, wargs


def wait_alive(addr):
    wait_until(lambda: [n for n in status(address=addr)["nodes"]
                        if n["state"] == "ALIVE"], 10, "an alive worker")


def start_tasks(addr, marker, n=3):
    """n command tasks, each two sleeps; RET once all 2n sleeps run."""
    for _ in range(n):
        p = run(["submit", "--address", addr, "--no-wait", "--max-retries",
                 "0", "--env", "MANTA_IT_MARKER=" + marker, "--", "sh", "-c",
                 SCRIPT, marker])
        check(p.stdout.strip(), "no task id: %r" % p.stdout)
    wait_until(lambda: len(sleeps(marker)) == 2 * n, 15,
               "%d marked sleeps" % (2 * n))


def test_worker_sigkill_kills_its_tasks():
    addr, wd, _ = start_cluster()
    marker = "orphan-" + secrets.token_hex(6)
    try:
        start_tasks(addr, marker)
        pid = read_pid(wd, "worker")
        execs = children(pid, "manta-executor")
        check(execs, "the worker has no executors")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not marked(marker), 5,
                   "no process of the tasks left after kill -9 of the "
                   "worker")
        wait_until(lambda: not [e for e in execs if pid_alive(e)], 5,
                   "no executor left")
    finally:
        kill_marked(marker)


def test_function_task_children_die_with_worker():
    """What a function forked dies with its executor when the worker is
    killed with SIGKILL."""
    addr, wd, _ = start_cluster()
    marker = "orphan-" + secrets.token_hex(6)
    try:
        p = run(["submit", "--address", addr, "--no-wait", "--max-retries",
                 "0", "--env", "MANTA_IT_MARKER=" + marker, "--function",
                 "libmt_test_fnlib.so:spawn_sleep", "--arg", "sleep 31",
                 "--arg", "60000", "--code-path", LIB_DIR])
        check(p.stdout.strip(), "no task id: %r" % p.stdout)
        wait_until(lambda: len(sleeps(marker)) == 1, 15,
                   "the function's sleep")
        os.kill(read_pid(wd, "worker"), signal.SIGKILL)
        wait_until(lambda: not marked(marker), 5,
                   "no process of the function task left after kill -9 of "
                   "the worker")
    finally:
        kill_marked(marker)


def test_stop_force_kills_tasks():
    addr, wd, _ = start_cluster()
    marker = "orphan-" + secrets.token_hex(6)
    try:
        start_tasks(addr, marker)
        run(["stop", "--force", "--temp-dir", wd])
        wait_until(lambda: not marked(marker), 5,
                   "no process of the tasks left after manta stop --force")
    finally:
        kill_marked(marker)


def test_task_end_ends_what_it_started():
    """When a task's main process exits, what it left running gets a short
    grace (a background writer still gets its line out), then is killed;
    the task's exit status is relayed through its guard, death by a signal
    included."""
    addr, wd, _ = start_cluster()
    marker = "orphan-" + secrets.token_hex(6)
    sub = ["submit", "--address", addr, "--max-retries", "0", "--env",
           "MANTA_IT_MARKER=" + marker, "--", "sh", "-c"]
    try:
        p = run(sub + ["sleep 31 >/dev/null 2>&1 & echo started", marker],
                check=False)
        check(p.returncode == 0 and p.stdout == "started\n",
              "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout,
                                                 p.stderr))
        wait_until(lambda: not marked(marker), 5,
                   "the detached sleep killed once its task ended")
        p = run(sub + ["(sleep 0.3; echo late) & echo early", marker],
                check=False)
        check(p.returncode == 0 and p.stdout == "early\nlate\n",
              "exit %d, stdout %r" % (p.returncode, p.stdout))
        p = run(sub + ["echo bye; kill -9 $$", marker], check=False)
        check(p.returncode == 137 and p.stdout == "bye\n",
              "exit %d, stdout %r" % (p.returncode, p.stdout))
    finally:
        kill_marked(marker)


def orphan_groups(wd, marker):
    """Make the tasks' groups outlive their guards and the worker: stop
    each group's leader (so its death signal waits), kill -9 the worker,
    then kill the leaders. The sleeps must survive that (nothing watches
    them any more): RET their pids."""
    leaders = sorted({pg for _, pg in sleeps(marker).values()})
    check(len(leaders) == 3, "groups %r" % leaders)
    for pg in leaders:
        os.kill(pg, signal.SIGSTOP)
    os.kill(read_pid(wd, "worker"), signal.SIGKILL)
    for pg in leaders:
        os.kill(pg, signal.SIGKILL)
    left = sleeps(marker)
    stays_true(lambda: len(sleeps(marker)) == 6, 0.5,
               "the sleeps outliving their guards and worker")
    return left


def test_stop_force_sweeps_the_record():
    addr, wd, _ = start_cluster()
    marker = "orphan-" + secrets.token_hex(6)
    try:
        start_tasks(addr, marker)
        check(os.path.exists(os.path.join(wd, "worker.procs")),
              "no worker.procs in the session dir")
        orphan_groups(wd, marker)
        p = run(["stop", "--force", "--temp-dir", wd])
        wait_until(lambda: not marked(marker), 5,
                   "manta stop --force killing the recorded leftovers")
        check("Killed 6 processes left running by manta-worker" in p.stdout,
              "stop said %r" % p.stdout)
    finally:
        kill_marked(marker)


def test_restarted_worker_sweeps_the_record():
    addr, wd, wargs = start_cluster()
    marker = "orphan-" + secrets.token_hex(6)
    try:
        start_tasks(addr, marker)
        orphan_groups(wd, marker)
        run(wargs)
        wait_until(lambda: not marked(marker), 5,
                   "the restarted worker killing its predecessor's "
                   "leftovers")
        with open(os.path.join(wd, "logs", "worker.log")) as f:
            log = f.read()
        check("killed 6 processes left running by the previous worker" in
              log, "worker log:\n%s" % log[-2000:])
        wait_alive(addr)
    finally:
        kill_marked(marker)


if __name__ == "__main__":
    main([test_worker_sigkill_kills_its_tasks,
          test_function_task_children_die_with_worker,
          test_stop_force_kills_tasks, test_task_end_ends_what_it_started,
          test_stop_force_sweeps_the_record,
          test_restarted_worker_sweeps_the_record])
