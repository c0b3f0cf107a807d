"""test_up.py -- `manta up` and `manta down` on a cluster file whose
"hosts" are 127.0.0.1 (head) and 127.0.0.2, 127.0.0.3 (workers), each with
its own temp dir. There is no sshd here: the file's ssh_command is
fake_ssh.py, which logs the argv it gets and runs the remote command
locally with `sh -c`; everything but the SSH login itself is exercised.

Checked: three nodes come up and run a task; the token is 0600 on every
"host" and in local_dir, the same everywhere, and never in an argv (the
fake ssh's log, /proc while the cluster runs) or in manta up's output;
down stops everything and can be run again; a failing worker is reported
(exit 1) while the rest stay up; a failing head starts nothing; bad files
exit 2 with FILE:LINE; --dry-run runs nothing; a host that hangs is
killed at --timeout.
"""
import json
import os
import stat
import sys

from harness import (FAST, MANTA, check, free_port, main, new_dir,
                     pid_alive, read_pid, run, status, wait_until)

# The cluster's token is the one manta up makes: nothing here may fall back
# on the harness's.
os.environ.pop("MANTA_AUTH_TOKEN", None)

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_SSH = os.path.join(HERE, "fake_ssh.py")
WORKERS = ["127.0.0.2", "127.0.0.3"]


def toml_str(s):
    return json.dumps(s)  # a JSON string is a TOML basic string here


def toml_list(xs):
    return "[" + ", ".join(toml_str(x) for x in xs) + "]"


class Cluster:
    """A cluster file in a fresh dir, with a temp dir per node."""

    def __init__(self, worker_args=None, head_args=(), hang=()):
        self.dir = new_dir("up")
        self.file = os.path.join(self.dir, "cluster.toml")
        self.log = os.path.join(self.dir, "ssh.log")
        self.local = os.path.join(self.dir, "local")
        self.port = free_port()
        self.head_dir = new_dir("uphead")
        self.worker_dirs = {ip: new_dir("up" + ip.split(".")[-1])
                            for ip in WORKERS}
        ssh = [sys.executable, FAKE_SSH, "--log", self.log]
        for h in hang:
            ssh += ["--hang", h]
        worker_args = worker_args or {}
        lines = [
            "# test_up.py's cluster",
            "[cluster]",
            "name = \"it-up\"",
            "port = %d" % self.port,
            "local_dir = %s" % toml_str(self.local),
            "manta = %s" % toml_str(MANTA),
            "ssh_command = %s" % toml_list(ssh),
            "ssh_options = [\"-i\", \"/nonexistent/key\"]",
            "",
            "[head]",
            "host = \"127.0.0.1\"",
            "temp_dir = %s" % toml_str(self.head_dir),
            "args = %s" % toml_list(["--dashboard-port", "0", "--num-cpus",
                                     "1"] + FAST + list(head_args)),
        ]
        for ip in WORKERS:
            lines += ["", "[[workers]]", "host = %s" % toml_str(ip),
                      "temp_dir = %s" % toml_str(self.worker_dirs[ip]),
                      "args = %s" % toml_list(
                          worker_args.get(ip, ["--num-cpus", "2"]) +
                          FAST[:2])]
        with open(self.file, "w") as f:
            f.write("\n".join(lines) + "\n")

    def dirs(self):
        return [self.head_dir] + list(self.worker_dirs.values())

    def pids(self):
        return [p for d in self.dirs() for p in
                (read_pid(d, "head"), read_pid(d, "worker")) if p]

    def calls(self):
        """The argv each fake ssh got (its own options left out)."""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]


def alive_nodes(local):
    st = status(local)
    return sorted(n["node_ip"] for n in st["nodes"] if n["state"] == "ALIVE")


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def in_some_cmdline(needle):
    """Any process whose argv holds needle (what ps shows)."""
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if needle.encode() in f.read():
                    return pid
        except OSError:
            pass
    return None


def test_up_status_task_down():
    c = Cluster()
    r = run(["up", c.file], timeout=120)
    check("Manta cluster 'it-up' is up: head at 127.0.0.1:%d" % c.port
          in r.stdout, r.stdout)
    for ip in ["127.0.0.1"] + WORKERS:
        check(any(line.split()[:3] == [ip, "worker" if ip in WORKERS
                                       else "head", "up"]
                  for line in r.stdout.splitlines()), "%s up:\n%s" %
              (ip, r.stdout))
    check("manta status --temp-dir %s" % c.local in r.stdout, r.stdout)

    # One token, 0600 everywhere, never on a command line or in output.
    with open(os.path.join(c.local, "token")) as f:
        token = f.read().strip()
    check(len(token) == 64, "token %r" % token)
    check(mode(c.local) == 0o700, "local_dir mode %o" % mode(c.local))
    for d in [c.local] + c.dirs():
        p = os.path.join(d, "token")
        check(mode(p) == 0o600, "%s mode %o" % (p, mode(p)))
        with open(p) as f:
            check(f.read().strip() == token, "%s holds another token" % p)
    calls = c.calls()
    check(len(calls) == 3, "3 ssh calls: %r" % calls)
    for argv in calls:
        check(token not in json.dumps(argv), "token in argv %r" % argv)
        check(argv[:5] == ["-i", "/nonexistent/key", "-o", "BatchMode=yes",
                           "--"], "ssh argv shape %r" % argv)
    check(token not in r.stdout + r.stderr, "token in manta up's output")
    pid = in_some_cmdline(token)
    check(pid is None, "token in the argv of pid %s" % pid)

    # The cluster, as the manta command on this machine sees it.
    wait_until(lambda: alive_nodes(c.local) ==
               ["127.0.0.1"] + WORKERS, 15, "3 nodes alive")
    r = run(["list", "nodes", "--temp-dir", c.local])
    check("3 nodes" in r.stdout, r.stdout)
    r = run(["submit", "--temp-dir", c.local, "--num-cpus", "2", "--",
             "sh", "-c", "echo hello from $(hostname)"], timeout=60)
    check("hello from" in r.stdout, r.stdout + r.stderr)

    pids = c.pids()
    check(len(pids) == 4, "head + 3 workers: %r" % pids)
    r = run(["down", c.file], timeout=120)
    check("The cluster is stopped." in r.stdout, r.stdout)
    check(r.stdout.count(" ok ") == 3, r.stdout)
    for p in pids:
        check(not pid_alive(p), "pid %d still runs after down" % p)
    check(not os.path.exists(c.local), "local_dir left after down")
    r = run(["down", c.file], timeout=120)
    check(r.stdout.count("No Manta processes running") == 3, r.stdout)


def test_worker_fails_rest_stay_up():
    c = Cluster(worker_args={"127.0.0.3": ["--num-cpus", "lots"]})
    r = run(["up", c.file], timeout=120, check=False)
    check(r.returncode == 1, "exit %d:\n%s%s" % (r.returncode, r.stdout,
                                                  r.stderr))
    check("the worker on 127.0.0.3 (line 20) did not start: exit 2"
          in r.stderr, r.stderr)
    check("invalid value for --num-cpus: 'lots'" in r.stderr, r.stderr)
    check("(usage text left out)" in r.stderr, r.stderr)
    check("1 of 2 workers FAILED" in r.stdout, r.stdout)
    wait_until(lambda: alive_nodes(c.local) == ["127.0.0.1", "127.0.0.2"],
               15, "head and 127.0.0.2 alive")
    pids = c.pids()
    run(["down", c.file], timeout=120)
    for p in pids:
        check(not pid_alive(p), "pid %d still runs after down" % p)


def test_head_fails_nothing_else_starts():
    c = Cluster(head_args=["--storage", "nonsense://x"])
    r = run(["up", c.file], timeout=120, check=False)
    check(r.returncode == 1, "exit %d: %s" % (r.returncode, r.stderr))
    check("the head on 127.0.0.1 did not start" in r.stderr, r.stderr)
    check("nothing else was started" in r.stderr, r.stderr)
    check(len(c.calls()) == 1, "only the head was tried: %r" % c.calls())
    check(not os.path.exists(c.local),
          "local_dir kept for a cluster that is not up")
    check(c.pids() == [], "processes %r" % c.pids())


def test_bad_files_exit_2():
    d = new_dir("upbad")
    cases = {
        "syntax": ("[head]\nhost = \"127.0.0.1\n", ":2: the string is "
                   "not closed"),
        "unknown": ("[cluster]\nprot = 1\n[head]\nhost = \"h\"\n",
                    ":2: unknown key 'prot' in [cluster]"),
        "nohead": ("[[workers]]\nhost = \"h\"\n", ": no [head] table"),
        "hostopt": ("[head]\nhost = \"-oProxyCommand=touch /tmp/x\"\n",
                    ":2: 'host': may not start with '-'"),
        "typo_table": ("[head]\nhost = \"h\"\n[worker]\n",
                       ":3: unknown table [worker]"),
    }
    for name, (text, want) in cases.items():
        path = os.path.join(d, name + ".toml")
        with open(path, "w") as f:
            f.write(text)
        for cmd in ("up", "down"):
            r = run([cmd, path], check=False)
            check(r.returncode == 2, "%s %s: exit %d" % (cmd, name,
                                                         r.returncode))
            check(("manta %s: %s%s" % (cmd, path, want)) in r.stderr,
                  "%s %s: %r" % (cmd, name, r.stderr))
    r = run(["up", os.path.join(d, "missing.toml")], check=False)
    check(r.returncode == 2 and "cannot read it" in r.stderr, r.stderr)
    r = run(["up"], check=False)
    check(r.returncode == 2 and "expected the cluster file" in r.stderr,
          r.stderr)
    r = run(["up", "a.toml", "--timeout", "0"], check=False)
    check(r.returncode == 2 and "--timeout" in r.stderr, r.stderr)


def test_dry_run_runs_nothing():
    c = Cluster()
    r = run(["up", c.file, "--dry-run"])
    lines = [l for l in r.stdout.splitlines() if not l.startswith("#")]
    check(len(lines) == 3, r.stdout)
    check("--head --port %d" % c.port in lines[0], lines[0])
    check("--address 127.0.0.1:%d" % c.port in lines[1], lines[1])
    check("--token-file /dev/stdin" in lines[2], lines[2])
    r = run(["down", c.file, "--dry-run"])
    check(r.stdout.count("manta stop --temp-dir") == 3, r.stdout)
    check(c.calls() == [] and not os.path.exists(c.local),
          "dry runs ran something")


def test_hanging_host_times_out():
    c = Cluster(hang=["127.0.0.3"])
    r = run(["up", c.file, "--timeout", "3"], timeout=120, check=False)
    check(r.returncode == 1, "exit %d" % r.returncode)
    check("the worker on 127.0.0.3 (line 20) did not start: timed out "
          "after 3s" in r.stderr, r.stderr)
    wait_until(lambda: alive_nodes(c.local) == ["127.0.0.1", "127.0.0.2"],
               15, "head and 127.0.0.2 alive")
    pids = c.pids()
    r = run(["down", c.file, "--timeout", "3"], timeout=120, check=False)
    check(r.returncode == 1 and "stopping worker on 127.0.0.3 failed: "
          "timed out" in r.stderr, r.stderr)
    for p in pids:
        check(not pid_alive(p), "pid %d still runs after down" % p)
    check(in_some_cmdline("--hang") is None, "a fake ssh left running")


if __name__ == "__main__":
    main([test_up_status_task_down, test_worker_fails_rest_stay_up,
          test_head_fails_nothing_else_starts, test_bad_files_exit_2,
          test_dry_run_runs_nothing, test_hanging_host_times_out])
