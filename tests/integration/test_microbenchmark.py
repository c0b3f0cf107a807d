"""test_microbenchmark.py -- `manta microbenchmark`: bad flags exit 2
before any cluster starts; a short run of four metrics (sync function
tasks, sync actor calls, small puts, placement-group create/removal) on
the command's own local cluster gives positive numbers in --json, and
leaves no daemon or session dir behind; single_client_put_gigabytes
comes with a memcpy of the same size and the ratio; Ctrl-C mid-run exits
130 and still stops the local cluster; --address runs the suite against
a cluster the test started and leaves it running.
"""
import glob
import json
import os
import re
import signal
import subprocess

import harness
from harness import (MANTA, check, free_port, main, new_dir, pid_alive,
                     read_pid, run, status, wait_until)

ONLY = ("single_client_tasks_sync,1_1_actor_calls_sync,"
        "single_client_put_calls,placement_group_create/removal")


def check_json(text):
    res = json.loads(text)
    for name in ONLY.split(","):
        m = res.get(name)
        check(m and m["value"] > 0 and m["stdev"] >= 0 and m["unit"],
              "%s: %r" % (name, m))
    check(set(res) == set(ONLY.split(",")),
          "unexpected metrics: %r" % sorted(res))
    return res


def bench_running(parent):
    """A manta-microbenchmark child of parent measuring (not --check)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid) as f:
                argv = f.read().split("\0")
            with open("/proc/%s/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and argv[0].endswith("manta-microbenchmark") \
                and "--address" in argv:
            return True
    return False


def session_dirs():
    return set(glob.glob("/tmp/manta-mb-*"))


def test_bad_flags():
    for args in (["--bogus"], ["--only", "no_such_metric"],
                 ["--seconds", "0"], ["--seconds", "x"],
                 ["--address", "nohostport"], ["extra"]):
        before = session_dirs()
        p = run(["microbenchmark"] + args, check=False)
        check(p.returncode == 2, "%r: exit %d\n%s" % (args, p.returncode,
                                                     p.stderr))
        check("usage" in p.stderr, "%r: no usage text: %s" % (args, p.stderr))
        check(session_dirs() == before, "%r started a cluster" % (args,))


def test_local_cluster_json():
    before = session_dirs()
    p = run(["microbenchmark", "--seconds", "0.3", "--only", ONLY, "--json"],
            timeout=90)
    check_json(p.stdout)
    new = session_dirs() - before
    check(not new, "session dir left behind: %r" % new)


def test_put_gigabytes_with_memcpy():
    """single_client_put_gigabytes comes with the memcpy of the same size
    measured in the same run, and their ratio, in text and in --json."""
    only = "single_client_put_gigabytes"
    p = run(["microbenchmark", "--seconds", "0.2", "--only", only,
             "--json"], timeout=240)
    res = json.loads(p.stdout)
    check(set(res) == {only, "single_client_memcpy_gigabytes",
                       "single_client_put_memcpy_ratio"},
          "metrics: %r" % sorted(res))
    put, mc = res[only], res["single_client_memcpy_gigabytes"]
    ratio = res["single_client_put_memcpy_ratio"]
    check(put["value"] > 0 and put["unit"] == "GB/s", "put: %r" % put)
    check(mc["value"] > 0 and mc["unit"] == "GB/s", "memcpy: %r" % mc)
    check(abs(ratio["value"] - put["value"] / mc["value"]) < 1e-3 and
          ratio["unit"] == "ratio", "ratio: %r" % ratio)
    print("  put %.2f GB/s, memcpy %.2f GB/s, ratio %.2f" % (
        put["value"], mc["value"], ratio["value"]))
    p = run(["microbenchmark", "--seconds", "0.2", "--only", only],
            timeout=240)
    lines = p.stdout.splitlines()
    for name in (only, "single_client_memcpy_gigabytes"):
        check(any(l.startswith(name + " per second ") for l in lines),
              "no line for %s:\n%s" % (name, p.stdout))
    check(any(re.match(r"single_client_put_memcpy_ratio \d+\.\d\d$", l)
              for l in lines), "no ratio line:\n%s" % p.stdout)


def test_ctrl_c_stops_cluster():
    stopped_by(signal.SIGINT, 130, True)  # what Ctrl-C in a terminal does


def test_sigterm_stops_cluster_and_cleans_up():
    # A supervisor's SIGTERM to the command alone (issue 13: the private
    # cluster's temp dir used to be left behind).
    stopped_by(signal.SIGTERM, 128 + signal.SIGTERM, False)


def stopped_by(sig, code, group):
    """Start the suite on a private cluster, send sig (to the process
    group when group), and see it exit with code, its cluster stopped and
    its temp dir gone."""
    before = session_dirs()
    p = subprocess.Popen([MANTA, "microbenchmark", "--seconds", "5"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        d = wait_until(lambda: list(session_dirs() - before), 20,
                       "a session dir")[0]
        harness._dirs.append(d)  # cleanup() stops and removes it if need be
        wait_until(lambda: bench_running(p.pid), 20, "the suite running")
        pids = [read_pid(d, "head"), read_pid(d, "worker")]
        check(all(pid_alive(x) for x in pids), "no cluster: %r" % pids)
        if group:
            os.killpg(p.pid, sig)
        else:
            p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    check(p.returncode == code, "exit %d, not %d:\n%s" %
          (p.returncode, code, err))
    wait_until(lambda: not any(pid_alive(x) for x in pids), 15,
               "head and worker gone")
    check(not os.path.exists(d), "%s left behind" % d)


def test_address():
    port = free_port()
    d = new_dir("mb")
    run(["start", "--head", "--port", str(port), "--node-ip", "127.0.0.1",
         "--temp-dir", d, "--num-cpus", "2", "--memory", "1GiB"])
    addr = "127.0.0.1:%d" % port
    wait_until(lambda: [n for n in status(address=addr)["nodes"]
                        if n["state"] == "ALIVE"], 10, "an alive node")
    p = run(["microbenchmark", "--address", addr, "--seconds", "0.2",
             "--only", ONLY], timeout=90)
    lines = p.stdout.splitlines()
    for name in ONLY.split(","):
        check(any(l.startswith(name + " per second ") for l in lines),
              "no line for %s:\n%s" % (name, p.stdout))
    check(pid_alive(read_pid(d, "head")), "the given cluster was stopped")


if __name__ == "__main__":
    main([test_bad_flags, test_local_cluster_json,
          test_put_gigabytes_with_memcpy, test_ctrl_c_stops_cluster,
          test_sigterm_stops_cluster_and_cleans_up,
          test_address])
