"""test_systemd.py -- running Manta under a supervisor (docs/deploy.md).

The systemd units in deploy/systemd/ pass `systemd-analyze verify` (on a
copy whose ExecStart points at this build's daemons: verify wants the
binaries to exist) with no warning at all, and keep the settings the docs
promise. `manta start --head --block` stays in the foreground and answers
`manta status`; SIGTERM stops head and worker as `manta stop` does (no
process of the session left, pid files and head state removed) and exits
0; `manta stop` from elsewhere ends it with 0 too; a head killed under it
stops the worker and exits 1, naming the head, and leaves the head's state
(`manta stop --keep-state`) for a restart to recover; a failed start stops what
did start and exits 1.

Exits 77 (skipped, after the other tests ran) only when systemd-analyze
cannot run on this machine at all (no systemd package: deploy/install-deps.sh
installs it).
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir,
                     pid_alive, read_pid, status, wait_output, wait_until)

UNITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "deploy", "systemd")
SKIPPED = []


def analyze():
    exe = shutil.which("systemd-analyze")
    if not exe:
        return None
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    return exe if p.returncode == 0 else None


def verify(exe, units):
    """systemd-analyze verify on copies of units with ExecStart pointing at
    this build; RET (returncode, stderr)."""
    tmp = tempfile.mkdtemp(prefix="manta-it-units-")
    try:
        paths = []
        for name, text in units.items():
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text.replace("/usr/bin/manta-",
                                     os.path.abspath(BIN) + "/manta-"))
            paths.append(path)
        p = subprocess.run([exe, "verify"] + paths, capture_output=True,
                           text=True, timeout=60)
        return p.returncode, p.stderr
    finally:
        shutil.rmtree(tmp)


def read_units():
    units = {}
    for name in ("manta-head.service", "manta-worker.service"):
        with open(os.path.join(UNITS, name)) as f:
            units[name] = f.read()
    return units


def test_units_verify():
    exe = analyze()
    if not exe:
        print("SKIP test_units_verify: systemd-analyze cannot run here "
              "(no systemd package)")
        SKIPPED.append("verify")
        return
    units = read_units()
    rc, err = verify(exe, units)
    check(rc == 0 and not err.strip(),
          "systemd-analyze verify: rc %d:\n%s" % (rc, err))
    # A bad setting is only a warning to verify: the check above must see
    # it, or it would pass anything.
    bad = dict(units)
    bad["manta-head.service"] = units["manta-head.service"].replace(
        "KillMode=mixed", "KillMode=sometimes")
    rc, err = verify(exe, bad)
    check("kill mode" in err, "a bad KillMode went unnoticed: %r" % err)


def setting(text, key):
    return re.findall(r"^%s=(.*)$" % re.escape(key), text, re.M)


def test_units_settings():
    units = read_units()
    for name, text in units.items():
        daemon = name.split(".")[0]
        check(re.search(r"^ExecStart=/usr/bin/%s " % daemon, text, re.M),
              "%s: ExecStart is not /usr/bin/%s" % (name, daemon))
        for key, want in (("Type", "exec"), ("User", "manta"),
                          ("StateDirectory", "manta"),
                          ("Restart", "on-failure"), ("KillMode", "mixed"),
                          ("NoNewPrivileges", "yes"),
                          ("ProtectHome", "read-only")):
            check(setting(text, key) == [want],
                  "%s: %s=%s wanted, got %s" % (name, key, want,
                                                setting(text, key)))
        check(setting(text, "TimeoutStopSec"), name + ": no TimeoutStopSec")
        env = "/etc/manta/%s.env" % daemon.split("-")[1]
        check(any(e.lstrip("-") == env
                  for e in setting(text, "EnvironmentFile")),
              "%s: no EnvironmentFile %s" % (name, env))
        check(os.path.exists(os.path.join(UNITS, os.path.basename(env))),
              "no example " + os.path.basename(env))
    worker = units["manta-worker.service"]
    # Tasks need /dev/shm, /dev/nvidia*, /dev/accel*, /dev/vfio and /tmp.
    for key in ("PrivateDevices", "DevicePolicy", "PrivateTmp",
                "MemoryDenyWriteExecute", "ProtectSystem=strict"):
        k, _, v = key.partition("=")
        vals = setting(worker, k)
        check(not vals or (v and v not in vals),
              "manta-worker.service sets %s: tasks break" % key)
    check(setting(units["manta-head.service"], "PrivateTmp") == ["yes"],
          "manta-head.service: no PrivateTmp")


def start_block(d):
    port = free_port()
    p = subprocess.Popen(
        [MANTA, "start", "--head", "--block", "--port", str(port),
         "--node-ip", "127.0.0.1", "--temp-dir", d, "--no-dashboard",
         "--num-cpus", "1", "--memory", "1GiB", "--num-executors", "1"] +
        FAST, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_output(p.stdout, "Running in the foreground", 20, "start --block")
    check(p.poll() is None, "manta start --block returned")
    nodes = wait_until(lambda: status(d)["nodes"], 10, "the worker's node")
    check(len(nodes) == 1, "nodes: %r" % nodes)
    return p, read_pid(d, "head"), read_pid(d, "worker")


def session_procs(d):
    """Pids whose command line names the session dir (daemons, executors,
    the object store), other than the test's own."""
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit() or int(e) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % e, "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if d in cmd and pid_alive(int(e)):
            out.append((int(e), cmd.replace("\0", " ")))
    return out


def check_stopped(d, p, pids):
    for pid in pids:
        check(pid > 0 and not pid_alive(pid), "pid %d still runs" % pid)
    left = [n for n in ("head.pid", "worker.pid", "head.addr", "worker.addr",
                        "worker.registered", "head.state")
            if os.path.exists(os.path.join(d, n))]
    check(not left, "left in the session dir: %r" % left)
    check(not session_procs(d), "stray: %r" % session_procs(d))


def test_block_sigterm_stops_all():
    d = new_dir("block")
    p, head, worker = start_block(d)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=25)
    check(p.returncode == 0, "exit %d: %s %s" % (p.returncode, out, err))
    check(b"Stopped manta-worker" in out and b"Stopped manta-head" in out,
          "stop output: %r" % out)
    check_stopped(d, p, (head, worker))


def test_block_ends_on_manta_stop():
    d = new_dir("block-stop")
    p, head, worker = start_block(d)
    subprocess.run([MANTA, "stop", "--temp-dir", d], check=True,
                   capture_output=True, timeout=25)
    out, err = p.communicate(timeout=10)
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, err))
    check_stopped(d, p, (head, worker))


def test_block_head_killed_exits_1():
    d = new_dir("block-kill")
    p, head, worker = start_block(d)
    os.kill(head, signal.SIGKILL)
    out, err = p.communicate(timeout=25)
    check(p.returncode == 1, "exit %d after the head died" % p.returncode)
    check(b"manta-head (pid %d) exited unexpectedly" % head in err,
          "no clear message: %r" % err)
    check(not pid_alive(worker), "the worker still runs")
    check(not session_procs(d), "stray: %r" % session_procs(d))
    # A crash is not a stop: the head's state stays, so a head started
    # again on the dir recovers what it knew.
    check(glob.glob(os.path.join(d, "head.state*")),
          "the dead head's state (head.state*) was removed")


def test_block_failed_start_leaves_nothing():
    """The head starts, the worker refuses its flags: --block stops the
    head and exits 1 instead of blocking over half a node."""
    d = new_dir("block-fail")
    p = subprocess.run(
        [MANTA, "start", "--head", "--block", "--port", str(free_port()),
         "--node-ip", "127.0.0.1", "--temp-dir", d, "--no-dashboard",
         "--num-cpus", "1", "--memory", "1GiB",
         "--object-store-memory", "100TiB", "--start-timeout", "10"],
        capture_output=True, text=True, timeout=25)
    check(p.returncode == 1, "exit %d: %s" % (p.returncode, p.stderr))
    check("Stopped manta-head" in p.stdout, "head not stopped: %r" % p.stdout)
    check(not session_procs(d), "stray: %r" % session_procs(d))


if __name__ == "__main__":
    try:
        main([test_units_verify, test_units_settings,
              test_block_sigterm_stops_all, test_block_ends_on_manta_stop,
              test_block_head_killed_exits_1,
              test_block_failed_start_leaves_nothing])
    except SystemExit as e:
        if e.code == 0 and SKIPPED:
            sys.exit(77)
        raise
