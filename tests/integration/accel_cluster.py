"""accel_cluster.py -- a fake accelerator cluster for integration tests.

One head and six workers, real processes on loopback, each worker with its
own 127.0.0.x address, temp dir and fake hardware:

  name  ip          hardware                       identity
  a0    127.0.0.11  fake /dev/accel0..3 (v4 PCI)   slice-a, worker 0, v4-16
  a1    127.0.0.12  fake /dev/accel0..3 (v4 PCI)   slice-a, worker 1, v4-16
  b0    127.0.0.13  fake /dev/accel0..3 (v4 PCI)   slice-b, worker 0, v4-16
  b1    127.0.0.14  fake /dev/accel0..3 (v4 PCI)   slice-b, worker 1, v4-16
  gpu   127.0.0.15  8 x "NVIDIA H200" (stub NVML)  -
  cpu   127.0.0.16  nothing                        -

TPU hosts get their slice identity from env (TPU_ACCELERATOR_TYPE=v4-16,
TPU_TOPOLOGY=2x2x2, TPU_NAME=slice-a|slice-b, TPU_WORKER_ID=0|1) and never
ask a metadata server. The GPU node loads the stub NVML the build makes
(build/lib/libmt_nvml_stub.so, tests/integration/nvml_stub.c). Every node
has an empty fake /dev, /sys and /proc except for its own devices, and no
TPU_* / CUDA_VISIBLE_DEVICES of the caller's environment, so the machine
running the tests never leaks into the cluster.

API
    with AccelCluster() as c:     # starts everything, waits until all six
        c.address                 # head "127.0.0.1:PORT"
        c.head_dir                # head session dir (holds head.addr)
        n = c.nodes["a0"]         # a Node, by its stable name
        n.name, n.ip, n.temp_dir, n.root, n.node_id, n.pid, n.env
        c.pid("a0")               # the worker pid now (re-read from disk)
        c.log("a0")               # its worker.log ("head" for the head's)
        c.status()                # `manta status --format json`, parsed
        c.node_status("gpu")      # that node's entry of status()["nodes"]
        c.cli("submit", "--num-cpus", "0", "--", "env")
                                  # run `manta ...` against the cluster:
                                  # CompletedProcess (returncode, stdout,
                                  # stderr); --address is added after the
                                  # command words; check=True raises on rc
        c.kill("a1")              # SIGKILL that worker (sig= to choose)
        c.wait_dead("a1")         # until the head reports it DEAD
    # on exit: every daemon stopped, every temp dir removed

AccelCluster(num_cpus=8, num_executors=2, env={}, node_env={"a0": {...}},
node_args={"cpu": ["--resources", '{"TPU": 2}']},
head_args=["--gang-ports", "LO-HI"], only=("a0",)) adds env to every
worker, node_env[name] to one (which may replace its slice identity),
node_args[name] to its `manta start`, and head_args to `manta start
--head`; only starts just the workers named (all six by default).
cleanup() may be called directly and is idempotent; harness.cleanup() also
reaches every dir this module made.
"""
import json
import os
import signal
import subprocess
import time

import harness
from harness import BIN, FAST, MANTA, check, free_port, new_dir

STUB_NVML = os.path.join(BIN, "..", "lib", "libmt_nvml_stub.so")

# Variables of the caller's environment no worker may inherit.
SCRUB = ("TPU_ACCELERATOR_TYPE", "TPU_NAME", "TPU_WORKER_ID", "TPU_TOPOLOGY",
         "TPU_SKIP_MDS_QUERY", "TPU_VISIBLE_CHIPS", "TPU_HOST_BOUNDS",
         "TPU_CHIPS_PER_HOST_BOUNDS", "TPU_PROCESS_BOUNDS",
         "TPU_CHIPS_PER_PROCESS_BOUNDS", "TPU_WORKER_HOSTNAMES",
         "CUDA_VISIBLE_DEVICES", "MANTA_NVML_PATH", "MANTA_PROC_ROOT",
         "MT_NVML_STUB_COUNT", "MT_NVML_STUB_NAME", "MT_NVML_STUB_MEM",
         "MT_NVML_STUB_INIT", "MT_NVML_STUB_HANG")

TPU_HOSTS = (("a0", "slice-a", 0), ("a1", "slice-a", 1),
             ("b0", "slice-b", 0), ("b1", "slice-b", 1))
TPU_NAMES = tuple(h for h, _, _ in TPU_HOSTS)
NAMES = ("a0", "a1", "b0", "b1", "gpu", "cpu")
IPS = {n: "127.0.0.%d" % (11 + i) for i, n in enumerate(NAMES)}
GPU_ENV = {"MT_NVML_STUB_COUNT": "8", "MT_NVML_STUB_NAME": "NVIDIA H200",
           "MT_NVML_STUB_MEM": str(141 << 30)}


class Node:
    """One worker of the fake cluster. node_id is filled once registered."""

    def __init__(self, name, ip, temp_dir, root, env):
        self.name = name
        self.ip = ip
        self.temp_dir = temp_dir
        self.root = root
        self.env = env
        self.node_id = None
        self.pid = 0


def _touch(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def _fake_root(d, tpu):
    """dev/, sys/ and proc/ under d; with tpu, accel0..3 and a v4 PCI id."""
    root = os.path.join(d, "hw")
    for sub in ("dev", "sys", "proc"):
        os.makedirs(os.path.join(root, sub))
    if tpu:
        for i in range(4):
            _touch(os.path.join(root, "dev", "accel%d" % i))
        pci = os.path.join(root, "sys", "bus", "pci", "devices",
                           "0000:00:04.0")
        _touch(os.path.join(pci, "vendor"), "0x1ae0\n")
        _touch(os.path.join(pci, "device"), "0x005e\n")
    return root


class AccelCluster:
    def __init__(self, num_cpus=8, num_executors=2, env=None, node_env=None,
                 node_args=None, start_timeout=60, head_args=(), only=None):
        self.num_cpus = num_cpus
        self.num_executors = num_executors
        self.extra_env = dict(env or {})
        self.node_env = dict(node_env or {})
        self.node_args = dict(node_args or {})
        self.start_timeout = start_timeout
        self.head_args = list(head_args)
        self.only = tuple(only or NAMES)
        self.address = None
        self.head_dir = None
        self.nodes = {}
        self._dirs = []

    # ---- start ----

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.cleanup()
            raise
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    def _dir(self, tag):
        d = new_dir(tag)
        self._dirs.append(d)
        return d

    def _node_env(self, name, root):
        env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        env["MANTA_PROC_ROOT"] = os.path.join(root, "proc")
        env["MANTA_NVML_PATH"] = os.path.join(root, "no-libnvidia-ml.so.1")
        for host, sl, wid in TPU_HOSTS:
            if host == name:
                env.update({"TPU_ACCELERATOR_TYPE": "v4-16",
                            "TPU_TOPOLOGY": "2x2x2", "TPU_NAME": sl,
                            "TPU_WORKER_ID": str(wid)})
        if name == "gpu":
            env["MANTA_NVML_PATH"] = os.path.abspath(STUB_NVML)
            env.update(GPU_ENV)
        env.update(self.extra_env)
        env.update(self.node_env.get(name, {}))
        return env

    def _start_head(self):
        port = free_port()
        self.head_dir = self._dir("accel-head")
        p = subprocess.run([MANTA, "start", "--head", "--no-worker",
                            "--port", str(port), "--node-ip", "127.0.0.1",
                            "--temp-dir", self.head_dir] + FAST +
                           self.head_args,
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 0, "head: %s%s" % (p.stdout, p.stderr))
        self.address = "127.0.0.1:%d" % port

    def _spawn(self, n):
        args = [MANTA, "start", "--address", self.address,
                "--node-ip", n.ip, "--temp-dir", n.temp_dir,
                "--num-cpus", str(self.num_cpus), "--memory", "2GiB",
                "--object-store-memory", "64MiB",
                "--num-executors", str(self.num_executors),
                "--dev-root", n.root,
                "--sys-root", n.root, "--tpu-metadata-url", "",
                "--report-period-ms", "200",
                "--start-timeout", str(self.start_timeout)]
        args += list(self.node_args.get(n.name, ()))
        return subprocess.Popen(args, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                env=n.env)

    def start(self):
        """Head, then the workers in parallel; wait until all are ALIVE."""
        self._start_head()
        for name in (n for n in NAMES if n in self.only):
            d = self._dir("accel-" + name)
            root = _fake_root(d, name in TPU_NAMES)
            self.nodes[name] = Node(name, IPS[name], d, root,
                                    self._node_env(name, root))
        procs = {name: self._spawn(n) for name, n in self.nodes.items()}
        fails = []
        for name, p in procs.items():
            out, _ = p.communicate(timeout=self.start_timeout + 30)
            if p.returncode != 0:
                fails.append("%s: %s" % (name, out))
        check(not fails, "worker start failed:\n" + "\n".join(fails))
        harness.wait_until(self._all_alive, 30, "%d ALIVE nodes" %
                           len(self.nodes))
        for n in self.nodes.values():
            n.pid = harness.read_pid(n.temp_dir, "worker")
        return self

    def _all_alive(self):
        st = self.status()
        by_ip = {x["node_ip"]: x for x in st["nodes"]
                 if x["state"] == "ALIVE"}
        if not all(n.ip in by_ip for n in self.nodes.values()):
            return False
        for n in self.nodes.values():
            n.node_id = by_ip[n.ip]["node_id"]
        return True

    # ---- use ----

    def cli(self, *args, timeout=60, check=False, env=None):
        """`manta ARGS` against this cluster; --address goes after the
        command words (those before the first option)."""
        args = list(args)
        i = 0
        while i < len(args) and not args[i].startswith("-"):
            i += 1
        args[i:i] = ["--address", self.address]
        p = subprocess.run([MANTA] + args, capture_output=True, text=True,
                           timeout=timeout, env=env)
        if check and p.returncode != 0:
            raise AssertionError("manta %s failed (%d):\n%s%s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def status(self):
        return json.loads(self.cli("status", "--format", "json",
                                   check=True).stdout)

    def node_status(self, name):
        ip = self.nodes[name].ip
        for x in self.status()["nodes"]:
            if x["node_ip"] == ip and x["state"] == "ALIVE":
                return x
        return None

    def pid(self, name):
        return harness.read_pid(self.nodes[name].temp_dir, "worker")

    def log(self, name):
        """The text of a worker's log, or the head's for "head"."""
        d = self.head_dir if name == "head" else self.nodes[name].temp_dir
        path = os.path.join(d, "logs", "%s.log" % (
            "head" if name == "head" else "worker"))
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except OSError as e:
            return "(no log: %s)" % e

    def kill(self, name, sig=signal.SIGKILL):
        """Send sig to the worker of name (its executors lose their
        parent and exit on their own)."""
        pid = self.pid(name) or self.nodes[name].pid
        check(pid > 0, "no pid for %s" % name)
        os.kill(pid, sig)
        return pid

    def wait_dead(self, name, timeout=15):
        nid = self.nodes[name].node_id

        def dead():
            return any(x["node_id"] == nid and x["state"] == "DEAD"
                       for x in self.status()["nodes"])
        harness.wait_until(dead, timeout, "%s DEAD" % name, 0.2)

    # ---- stop ----

    def cleanup(self):
        """Stop every daemon (workers in parallel, then the head), kill
        what is left and remove the temp dirs. Idempotent."""
        dirs = [d for d in self._dirs if d != self.head_dir]
        if self.head_dir in self._dirs:
            dirs.append(self.head_dir)
        pids = [harness.read_pid(d, n) for d in dirs
                for n in ("worker", "head")]
        stops = [subprocess.Popen([MANTA, "stop", "--force", "--temp-dir", d],
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for d in dirs]
        end = time.monotonic() + 20
        for p in stops:
            try:
                p.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for pid in pids:
            if harness.pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        for d in dirs:
            subprocess.run(["rm", "-rf", d])
            if d in harness._dirs:
                harness._dirs.remove(d)
        self._dirs = []
