#!/usr/bin/python3
"""chaos.py -- the chaos suite of issue 15 (tests/chaos/README.md).

A head with durable storage (file:// when the build has it, else a
redis-server of our own with AOF on), three workers on 127.0.0.2-4 with
node ids of their own, auth on, and two chaos_driver processes keeping a
steady load of function tasks, command tasks, actor calls and
placement-group churn. Meanwhile the fault loop kill -9s:
  a random worker every WORKER_PERIOD s (restarted after WORKER_DOWN s
    with the same node id, temp dir and flags),
  a random executor or task process every EXEC_PERIOD s,
  the head every HEAD_PERIOD s (restarted at once on the same port, temp
    dir and storage; its recovery time is measured),
  Redis once (redis backend only; restarted on the same AOF).
Then the drivers stop and drain, the cluster idles, and the counts are
taken (see count() and the README). A table goes to stdout and a JSON
object to --out. Exit 0 when every count is 0 and every recovery took at
most 2 s, 1 otherwise, 2 when the run itself could not be set up.

Every process started here carries CHAOS_RUN=<id> in its environment,
and so do their descendants (workers pass their environment on to
executors and tasks): at the end anything still carrying it is counted
and killed, whatever process group it put itself in. A global alarm
bounds the whole run.

Usage: chaos.py [--smoke] [--seconds N] [--storage auto|file|redis]
                [--seed N] [--out FILE] [--keep]
Environment (defaults in brackets; --smoke scales the periods down):
  CHAOS_SECONDS [300]  CHAOS_STORAGE [auto]  CHAOS_SEED [time]
  CHAOS_WORKER_PERIOD [10]  CHAOS_EXEC_PERIOD [3]  CHAOS_HEAD_PERIOD [30]
  CHAOS_WORKER_DOWN [1]  CHAOS_DRAIN [30]  CHAOS_IDLE [20]
  CHAOS_WINDOW [4] (tasks in flight per driver)
"""
import argparse
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402
from harness import (BIN, MANTA, TOKEN, free_port, new_dir, pid_alive,
                     read_pid, wait_until)  # noqa: E402

LIBDIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
DRIVER = os.path.join(BIN, "chaos_driver")
WORKER = os.path.join(BIN, "manta-worker")
RUN_ID = secrets.token_hex(8)
MARK = "CHAOS_RUN=" + RUN_ID
NODE_CPUS = 2
RECOVERY_TARGET_S = 2.0
FAST = ["--report-period-ms", "200", "--node-timeout-ms", "1500"]


def log(msg):
    print("[%7.2f] %s" % (time.monotonic() - T0, msg), flush=True)


T0 = time.monotonic()


def now_ns():
    return time.time_ns()


def spawn(args, logpath, env=None):
    """Start args in a session of its own, output to logpath."""
    out = open(logpath, "ab")
    try:
        return subprocess.Popen(args, stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    finally:
        out.close()


def manta(args, timeout=30):
    return subprocess.run([MANTA] + args, capture_output=True, text=True,
                          timeout=timeout)


def proc_start_time(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def marked_pids():
    """Every live process (not us) whose environment carries MARK."""
    found, me = [], os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if MARK.encode() in env and pid_alive(int(name)):
            found.append(int(name))
    return found


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


# ---- the cluster --------------------------------------------------------

class Redis:
    """A redis-server of our own: AOF on, in its own dir, on a free port."""

    def __init__(self, root):
        self.dir = os.path.join(root, "redis")
        os.makedirs(self.dir)
        self.port = free_port()
        self.proc = None

    def start(self):
        args = ["redis-server", "--port", str(self.port), "--bind",
                "127.0.0.1", "--appendonly", "yes", "--save", "",
                "--dir", self.dir]
        self.proc = spawn(args, os.path.join(self.dir, "redis.log"))
        wait_until(self.ping, 10, "redis-server up")

    def ping(self):
        r = subprocess.run(["redis-cli", "-p", str(self.port), "PING"],
                           capture_output=True, text=True, timeout=5)
        return r.stdout.strip() == "PONG"

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    @property
    def spec(self):
        return "redis://127.0.0.1:%d" % self.port


class Cluster:
    def __init__(self, root, storage):
        self.root = root
        self.storage = storage
        self.port = free_port()
        self.addr = "127.0.0.1:%d" % self.port
        self.head_dir = os.path.join(root, "head")
        self.token = os.path.join(root, "token")
        fd = os.open(self.token, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, TOKEN.encode())
        os.close(fd)
        self.workers = [Worker(self, i) for i in range(3)]

    def start_head(self):
        """`manta start --head --no-worker` on our port, dir and storage.
        RET (ok, seconds it took)."""
        t = time.monotonic()
        p = manta(["start", "--head", "--no-worker", "--port",
                   str(self.port), "--node-ip", "127.0.0.1", "--temp-dir",
                   self.head_dir, "--storage", self.storage,
                   "--token-file", self.token] + FAST, timeout=60)
        if p.returncode != 0:
            log("head start failed: %s%s" % (p.stdout, p.stderr))
        return p.returncode == 0, time.monotonic() - t

    def head_pid(self):
        return read_pid(self.head_dir, "head")

    def status(self, timeout=5):
        p = manta(["status", "--format", "json", "--address", self.addr],
                  timeout=timeout + 5)
        if p.returncode != 0:
            return None
        return json.loads(p.stdout)


class Worker:
    """One manta-worker started directly, so a restart can give it the
    same --node-id (the way `manta start` restarts a worker otherwise
    picks a new random one)."""

    def __init__(self, cluster, i):
        self.c = cluster
        self.node_id = "chaos-w%d" % (i + 1)
        self.ip = "127.0.0.%d" % (i + 2)
        self.dir = os.path.join(cluster.root, "w%d" % (i + 1))
        os.makedirs(os.path.join(self.dir, "logs"))
        self.proc = None
        self.restart_at = None

    def start(self):
        for stale in ("worker.addr", "worker.registered"):
            try:
                os.unlink(os.path.join(self.dir, stale))
            except FileNotFoundError:
                pass
        args = [WORKER, "--address", self.c.addr, "--node-ip", self.ip,
                "--token-file", self.c.token, "--temp-dir", self.dir,
                "--num-cpus", str(NODE_CPUS), "--num-executors",
                str(NODE_CPUS), "--object-store-memory", "64MiB",
                "--node-id", self.node_id, "--report-period-ms", "200"]
        self.proc = spawn(args, os.path.join(self.dir, "logs", "worker.log"))
        self.restart_at = None

    def registered(self):
        return os.path.exists(os.path.join(self.dir, "worker.registered"))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


# ---- what the task bodies recorded --------------------------------------

class Records:
    """Follows the records file (chaos_fnlib.c) while the run goes on and
    notes when each execution without an E line was seen dead: the end
    of an execution killed with -9."""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.lock = threading.Lock()
        self.execs = []          # dicts: key pid node cpu start end how
        self.open = {}           # pid -> exec still running (no E yet)
        self.calls = []          # (actor, seq, pid, node, t)
        self.kills = {}          # pid -> [t_ns the harness killed it]
        self.bad_lines = 0
        self.stop = threading.Event()

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            data = b""
        cut = data.rfind(b"\n") + 1
        self.pos += cut
        with self.lock:
            for line in data[:cut].decode(errors="replace").splitlines():
                self.take(line.split())
            self.check_open()

    def take(self, w):
        try:
            if w[0] == "S" and len(w) == 7:
                e = {"key": w[1], "attempt": w[2], "pid": int(w[3]),
                     "node": w[4], "cpu": float(w[5]), "start": int(w[6]),
                     "end": None, "how": None,
                     "st": proc_start_time(int(w[3]))}
                self.execs.append(e)
                old = self.open.pop(e["pid"], None)
                if old:  # the same process started again: the old ended
                    self.close(old, e["start"], "superseded")
                self.open[e["pid"]] = e
            elif w[0] == "E" and len(w) == 4:
                e = self.open.pop(int(w[2]), None)
                if e and e["key"] == w[1]:
                    self.close(e, int(w[3]), "E")
                elif e:
                    self.open[e["pid"]] = e
                    self.bad_lines += 1
                else:
                    self.bad_lines += 1
            elif w[0] == "A" and len(w) == 6:
                self.calls.append((w[1], int(w[2]), int(w[3]), w[4],
                                   int(w[5])))
            else:
                self.bad_lines += 1
        except (ValueError, IndexError):
            self.bad_lines += 1

    def close(self, e, t, how):
        e["end"], e["how"] = t, how

    def check_open(self):
        """Close the executions whose process is gone. The end taken is
        the earliest it can have been: when we sent the kill, else the
        last time we saw the process alive (at most 50 ms before it died;
        its start when never seen alive). So a measured interval never
        outlasts the real one, and an overlap found is a real one."""
        for pid, e in list(self.open.items()):
            t = now_ns()
            st = proc_start_time(pid)
            if pid_alive(pid) and (e["st"] is None or st == e["st"]):
                e["alive_at"] = t
                continue
            kills = [k for k in self.kills.get(pid, []) if k >= e["start"]]
            if kills:
                self.close(e, min(kills), "killed")
            else:
                self.close(e, max(e["start"], e.get("alive_at") or 0),
                           "seen-dead")
            del self.open[pid]

    def note_kill(self, pid):
        with self.lock:
            self.kills.setdefault(pid, []).append(now_ns())

    def running_pids(self):
        with self.lock:
            return [p for p in self.open if pid_alive(p)]

    def follow(self):
        while not self.stop.is_set():
            self.poll()
            time.sleep(0.05)


# ---- the run ------------------------------------------------------------

class Run:
    def __init__(self, opts):
        self.o = opts
        self.rng = random.Random(opts.seed)
        self.root = new_dir("chaos")
        self.procs = []          # every Popen we made (drivers, workers...)
        self.redis = None
        self.recoveries = []
        self.faults = {"worker": 0, "executor": 0, "head": 0, "redis": 0,
                       "executor_none_running": 0}
        self.notes = []
        self.crashes = []        # daemons that died without our kill
        self.rec = Records(os.path.join(self.root, "records"))
        self.head_busy = threading.Lock()

    # -- setup --
    def storage_spec(self):
        want = self.o.storage
        helptext = manta(["start", "--help"]).stdout
        has_file = "file://" in helptext
        if want == "auto":
            want = "file" if has_file else "redis"
        if want == "file":
            if not has_file:
                raise SetupError("--storage file:// is not in this build "
                                 "(manta start --help); use redis")
            return "file", "file://%s" % os.path.join(self.root, "head",
                                                      "head.state")
        self.redis = Redis(self.root)
        self.redis.start()
        self.procs.append(self.redis.proc)
        return "redis", self.redis.spec

    def setup(self):
        os.environ["CHAOS_RUN"] = RUN_ID
        self.backend, spec = self.storage_spec()
        self.c = Cluster(self.root, spec)
        ok, took = self.c.start_head()
        if not ok:
            raise SetupError("the head did not start on %s" % spec)
        for w in self.c.workers:
            w.start()
            self.procs.append(w.proc)
        wait_until(lambda: all(w.registered() for w in self.c.workers), 30,
                   "three workers registered")
        log("cluster up: head %s storage %s (%s), workers %s" % (
            self.c.addr, self.backend, spec,
            " ".join(w.node_id for w in self.c.workers)))

    def start_drivers(self):
        self.stopfile = os.path.join(self.root, "stop")
        self.drivers = []
        env = dict(os.environ, CHAOS_WINDOW=str(self.o.window))
        for name in ("d1", "d2"):
            out = os.path.join(self.root, "%s.jsonl" % name)
            p = spawn([DRIVER, self.c.addr, LIBDIR, self.rec.path, out, name,
                       self.stopfile, str(self.o.drain)],
                      os.path.join(self.root, "%s.log" % name), env=env)
            self.procs.append(p)
            self.drivers.append((name, p, out))

    # -- faults --
    def kill_worker(self):
        up = [w for w in self.c.workers if w.alive() and w.restart_at is None]
        if not up:
            return
        w = self.rng.choice(up)
        log("kill -9 worker %s (pid %d)" % (w.node_id, w.proc.pid))
        w.proc.kill()
        w.proc.wait()
        w.restart_at = time.monotonic() + self.o.worker_down
        self.faults["worker"] += 1

    def restart_workers(self):
        for w in self.c.workers:
            if w.restart_at is not None and time.monotonic() >= w.restart_at:
                log("restart worker %s" % w.node_id)
                w.start()
                self.procs.append(w.proc)

    def kill_executor(self):
        """A process running a task body now (an executor or a command
        task's process), else any idle executor of ours."""
        pids = self.rec.running_pids()
        if not pids:
            self.faults["executor_none_running"] += 1
            pids = [p for p in marked_pids() if comm(p) == "manta-executor"]
        if not pids:
            return
        pid = self.rng.choice(pids)
        name = comm(pid)
        self.rec.note_kill(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        log("kill -9 %s pid %d" % (name, pid))
        self.faults["executor"] += 1

    def kill_head(self, count=True):
        if not self.head_busy.acquire(blocking=False):
            return
        pid = self.c.head_pid()
        if pid_alive(pid):
            log("kill -9 head (pid %d)" % pid)
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: not pid_alive(pid), 10, "the head gone")
        self.faults["head"] += count
        threading.Thread(target=self.restart_head, daemon=True).start()

    def restart_head(self):
        """Start the head again at once and time how long until it is
        usable: `manta status` answers, then a new task (0 CPU, so a
        full cluster does not hide the head behind queued work) is
        submitted and finishes."""
        try:
            r = {"t": round(time.monotonic() - T0, 2)}
            t0 = time.monotonic()
            ok, r["start_s"] = self.c.start_head()
            if not ok:
                r["error"] = "head did not start"
                self.recoveries.append(r)
                return
            while self.c.status(timeout=2) is None:
                if time.monotonic() - t0 > 60:
                    r["error"] = "status never answered"
                    self.recoveries.append(r)
                    return
                time.sleep(0.02)
            r["status_s"] = round(time.monotonic() - t0, 3)
            r["task_s"], r["probe"] = self.probe(t0)
            r["recovery_s"] = r["task_s"]
            self.recoveries.append(r)
            log("head back: status %.2fs, a task done %s" % (
                r["status_s"], r["task_s"]))
        finally:
            self.head_busy.release()

    def probe(self, t0):
        key = "probe-%d" % len(self.recoveries)
        script = ("echo \"S %s ${MANTA_TASK_ATTEMPT:--} $$ "
                  "${MANTA_NODE_ID:-?} 0 $(date +%%s%%N)\" >> %s; "
                  "echo \"E %s $$ $(date +%%s%%N)\" >> %s; echo ok" % (
                      key, self.rec.path, key, self.rec.path))
        while time.monotonic() - t0 < 60:
            p = manta(["submit", "--address", self.c.addr, "--num-cpus",
                       "0", "--priority", "100", "--max-retries", "0",
                       "--", "sh", "-c", script], timeout=70)
            if p.returncode == 0 and p.stdout.strip() == "ok":
                return round(time.monotonic() - t0, 3), "ok"
            last = (p.stdout + p.stderr).strip()[-200:]
            time.sleep(0.05)
        return None, "never ran: %s" % last

    def check_daemons(self):
        """A daemon that died without being killed crashed: count it, and
        bring it back as a kill would."""
        for w in self.c.workers:
            if w.restart_at is None and not w.alive():
                self.crashes.append("worker %s exited %s" % (
                    w.node_id, w.proc.returncode))
                log("worker %s died on its own" % w.node_id)
                w.restart_at = time.monotonic()
        if self.head_busy.acquire(blocking=False):
            try:
                crashed = not pid_alive(self.c.head_pid())
            finally:
                self.head_busy.release()
            if crashed:
                self.crashes.append("head died on its own")
                log("the head died on its own")
                self.kill_head(count=False)

    def kill_redis(self):
        log("kill -9 redis-server (pid %d)" % self.redis.proc.pid)
        self.redis.kill()
        self.faults["redis"] += 1
        time.sleep(self.o.redis_down)
        self.redis.start()
        self.procs.append(self.redis.proc)
        log("redis-server back on the same AOF")

    def chaos(self):
        t_end = time.monotonic() + self.o.seconds
        nxt = {"worker": self.o.worker_period, "executor":
               self.o.exec_period, "head": self.o.head_period}
        t_start = time.monotonic()
        redis_at = (t_start + self.o.seconds * 0.4
                    if self.backend == "redis" else None)
        due = {k: t_start + v for k, v in nxt.items()}
        acts = {"worker": self.kill_worker, "executor": self.kill_executor,
                "head": self.kill_head}
        while time.monotonic() < t_end:
            now = time.monotonic()
            for k in due:
                if now >= due[k]:
                    acts[k]()
                    due[k] = now + nxt[k]
            if redis_at and now >= redis_at:
                redis_at = None
                self.kill_redis()
            self.restart_workers()
            self.check_daemons()
            for name, p, _ in self.drivers:
                if p.poll() is not None:
                    self.notes.append("driver %s exited early (%d)" % (
                        name, p.returncode))
                    raise SetupError("driver %s exited early" % name)
            time.sleep(0.05)

    # -- the end --
    def drain(self):
        open(self.stopfile, "w").close()
        log("load stopped; drivers drain (at most %ds)" % self.o.drain)
        deadline = time.monotonic() + self.o.drain + 60
        for name, p, _ in self.drivers:
            try:
                p.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.notes.append("driver %s hung; killed" % name)
                p.kill()
                p.wait()
        for w in self.c.workers:  # a worker due back comes back now
            if w.restart_at is not None:
                w.restart_at = 0
        self.restart_workers()
        with self.head_busy:
            pass
        log("drivers done")

    def idle(self):
        """Wait (at most CHAOS_IDLE s) for an idle cluster: every node
        ALIVE with all it has available. RET the last status."""
        last = [None]

        def settled():
            st = self.c.status()
            last[0] = st
            if not st:
                return False
            alive = [n for n in st["nodes"] if n["state"] == "ALIVE"]
            return len(alive) >= 3 and all(
                n["resources_available"] == n["resources_total"]
                for n in alive)
        t = time.monotonic()
        while time.monotonic() - t < self.o.idle and not settled():
            time.sleep(0.2)
        return last[0]

    def listing(self, what, *extra):
        """`manta list WHAT` as JSON (None when the head did not answer)."""
        p = manta(["list", what, "--address", self.c.addr, "--format",
                   "json", "--limit", "100000"] + list(extra))
        if p.returncode != 0:
            return None
        return json.loads(p.stdout)

    def objects(self):
        return self.listing("objects")

    def stop_cluster(self):
        for w in self.c.workers:
            if w.alive():
                w.proc.terminate()
        for w in self.c.workers:
            try:
                w.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                w.proc.kill()
        manta(["stop", "--temp-dir", self.c.head_dir])
        if self.redis:
            self.redis.proc.terminate()
            self.redis.proc.wait(timeout=10)
        t = time.monotonic()
        while marked_pids() and time.monotonic() - t < 10:
            time.sleep(0.1)
        return [(p, comm(p)) for p in marked_pids()]

    def teardown(self):
        """Kill everything we started, by process group and by mark."""
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if p.poll() is None:
                p.kill()
            p.wait()
        for pid in marked_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.o.keep:
            harness._dirs.remove(self.root)
        harness.cleanup()


class SetupError(Exception):
    pass


# ---- counting -----------------------------------------------------------

def read_jsonl(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return out


def count_tasks(events, execs, calls):
    subs = {e["key"]: e for e in events if e["ev"] == "sub"}
    ends = {e["key"]: e for e in events if e["ev"] == "end"}
    states = {}
    for k in subs:
        s = ends[k]["state"] if k in ends else "NO_END"
        states[s] = states.get(s, 0) + 1
    lost = [k for k in subs if k not in ends or
            ends[k]["state"] in ("LOST", "TIMEOUT", "ERROR")]
    wrong = []
    for k, e in ends.items():
        if e["state"] != "FINISHED" or e["ok"]:
            continue
        if subs.get(k, {}).get("kind") == "cmd" and e["exit"] != 0:
            continue  # killed with -9 (exit 137): chaos, not a wrong value
        wrong.append(k)
    runs = {}
    for x in execs:
        runs[x["key"]] = runs.get(x["key"], 0) + 1
    over = []
    for k, n in runs.items():
        if "-life-" in k:
            continue  # actor lives: restarts are unlimited
        allowed = 1 + subs.get(k, {}).get(
            "retries", 0 if k.startswith("probe-") else 3)
        if n > allowed:
            over.append((k, n, allowed))
    seen = {}
    for actor, seq, _, _, _ in calls:
        seen[(actor, seq)] = seen.get((actor, seq), 0) + 1
    over += [("%s-call-%d" % a, n, 1) for a, n in seen.items() if n > 1]
    return {"submitted": len(subs),
            "submit_refused": sum(1 for e in events if e["ev"] ==
                                  "subfail"),
            "states": states, "lost": lost, "wrong": wrong, "over": over}


def double_booked(execs, end_ns, cpus):
    """Per node, sweep the executions' [start, end) intervals (their CPU
    each) and find every stretch where more is held than the node has.
    An execution with no end yet (still running at end_ns: an orphan)
    counts up to end_ns. RET (episodes, seconds over, examples)."""
    by_node = {}
    for x in execs:
        if x["cpu"] <= 0:
            continue
        end = x["end"] if x["end"] is not None else end_ns
        by_node.setdefault(x["node"], []).append((x["start"], 1, x))
        by_node[x["node"]].append((end, 0, x))
    episodes, over_ns, examples = 0, 0, []
    for node, evs in by_node.items():
        evs.sort(key=lambda e: (e[0], e[1]))  # ends before starts at ties
        held, live, since = 0.0, {}, None
        for t, is_start, x in evs:
            if is_start:
                held += x["cpu"]
                live[id(x)] = x
                if held > cpus + 1e-9 and since is None:
                    since = t
                    episodes += 1
                    if len(examples) < 5:
                        examples.append({"node": node, "t_ns": t,
                                         "held": held, "cpus": cpus,
                                         "running": [
                                             (y["key"], y["pid"], y["start"],
                                              y["end"], y["how"])
                                             for y in live.values()]})
            else:
                held -= x["cpu"]
                live.pop(id(x), None)
                if since is not None and held <= cpus + 1e-9:
                    over_ns += t - since
                    since = None
    return episodes, over_ns / 1e9, examples


def actor_overlaps(execs, end_ns):
    """Lives of one actor key alive at once (a restart beside the old)."""
    lives, n = {}, 0
    for x in execs:
        if "-life-" in x["key"]:
            lives.setdefault(x["key"], []).append(x)
    for key, ls in lives.items():
        ls.sort(key=lambda x: x["start"])
        for a, b in zip(ls, ls[1:]):
            if (a["end"] if a["end"] is not None else end_ns) > b["start"]:
                n += 1
    return n


def count(run, status, objs, orphans_idle, left_after_stop):
    events = []
    for _, _, out in run.drivers:
        events += read_jsonl(out)
    rec = run.rec
    end_ns = now_ns()
    with rec.lock:
        execs = list(rec.execs)
        calls = list(rec.calls)
    t = count_tasks(events, execs, calls)
    db, db_s, db_ex = double_booked(execs, end_ns, NODE_CPUS)
    leaked_res = {}
    nodes_not_alive = 0
    for n in (status or {}).get("nodes", []):
        if n["state"] != "ALIVE":
            nodes_not_alive += 1
            continue
        for r, tot in n["resources_total"].items():
            d = tot - n["resources_available"].get(r, 0)
            if abs(d) > 1e-9:
                leaked_res["%s:%s" % (n.get("node_id", "?"), r)] = d
    pgs = [e for e in events if e["ev"] == "pg"]
    rec_s = [r.get("recovery_s") for r in run.recoveries]
    counts = {
        "tasks_lost": len(t["lost"]),
        "tasks_over_retries": len(t["over"]),
        "wrong_results": len(t["wrong"]),
        "leaked_resources": len(leaked_res) + (0 if status else 1),
        "leaked_objects": (len(objs.get("objects", [])) if objs is not None
                           else -1),
        "orphans_idle": len(orphans_idle),
        "orphans_after_stop": len(left_after_stop),
        "double_booked_cpus": db,
        "actor_lives_overlapping": actor_overlaps(execs, end_ns),
        "daemon_crashes": len(run.crashes),
        "head_recoveries_over_2s": sum(1 for s in rec_s if s is None or
                                       s > RECOVERY_TARGET_S),
    }
    return {
        "counts": counts,
        "recoveries": run.recoveries,
        "detail": {
            "storage": run.backend,
            "seconds": run.o.seconds, "seed": run.o.seed,
            "faults": run.faults,
            "submitted": t["submitted"], "submit_refused":
                t["submit_refused"],
            "end_states": t["states"],
            "executions": len(execs), "actor_calls_run": len(calls),
            "pg_rounds": len(pgs),
            "pg_created": sum(1 for e in pgs if e["created"]),
            "lost_examples": t["lost"][:10],
            "over_examples": t["over"][:10],
            "wrong_examples": t["wrong"][:10],
            "leaked_resources": leaked_res,
            "nodes_not_alive_at_end": nodes_not_alive,
            "double_booked_seconds": round(db_s, 3),
            "double_booked_examples": db_ex,
            "exec_end_from": {h: sum(1 for x in execs if x["how"] == h)
                              for h in ("E", "killed", "seen-dead",
                                        "superseded")},
            "exec_never_ended": sum(1 for x in execs if x["end"] is None),
            "orphans_idle": orphans_idle[:10],
            "left_after_stop": left_after_stop[:10],
            "record_lines_unparsed": rec.bad_lines,
            "crashes": run.crashes,
            "notes": run.notes,
        },
    }


def table(res):
    c = res["counts"]
    print("\n== chaos: %s storage, %ds, seed %s ==" % (
        res["detail"]["storage"], res["detail"]["seconds"],
        res["detail"]["seed"]))
    print("faults: %s" % json.dumps(res["detail"]["faults"]))
    print("submitted %d tasks/calls (%d submits refused), ended: %s" % (
        res["detail"]["submitted"], res["detail"]["submit_refused"],
        json.dumps(res["detail"]["end_states"], sort_keys=True)))
    print("%-28s %8s  %s" % ("count", "value", "target"))
    for k, v in c.items():
        print("%-28s %8s  %s" % (k, v, "0" + ("" if v == 0 else "   <--")))
    for r in res["recoveries"]:
        print("head restart at %6.1fs: start %.2fs, status %ss, task %ss %s"
              % (r["t"], r.get("start_s", -1), r.get("status_s"),
                 r.get("task_s"), r.get("error", r.get("probe", ""))))
    for n in res["detail"]["notes"]:
        print("note: %s" % n)


# ---- main ---------------------------------------------------------------

def options():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--storage", default=os.environ.get("CHAOS_STORAGE",
                                                         "auto"),
                    choices=("auto", "file", "redis"))
    ap.add_argument("--seed", type=int, default=int(os.environ.get(
        "CHAOS_SEED", time.time_ns() % 1000000)))
    ap.add_argument("--out")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temp dir (logs, records)")
    o = ap.parse_args()
    env = os.environ.get
    smoke = o.smoke
    o.seconds = o.seconds or float(env("CHAOS_SECONDS", 25 if smoke
                                       else 300))
    o.worker_period = float(env("CHAOS_WORKER_PERIOD", 10))
    o.exec_period = float(env("CHAOS_EXEC_PERIOD", 3))
    o.head_period = float(env("CHAOS_HEAD_PERIOD", 15 if smoke else 30))
    o.worker_down = float(env("CHAOS_WORKER_DOWN", 1))
    o.redis_down = float(env("CHAOS_REDIS_DOWN", 2))
    o.drain = int(env("CHAOS_DRAIN", 10 if smoke else 30))
    o.idle = float(env("CHAOS_IDLE", 10 if smoke else 20))
    o.window = int(env("CHAOS_WINDOW", 3 if smoke else 4))
    return o


def on_alarm(*_):
    raise SetupError("global timeout")


def main():
    o = options()
    run = Run(o)
    res, rc = None, 2
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(o.seconds + o.drain + o.idle + 180))
    follower = threading.Thread(target=run.rec.follow, daemon=True)
    try:
        for exe in (DRIVER, WORKER, MANTA):
            if not os.access(exe, os.X_OK):
                raise SetupError("%s is not built" % exe)
        run.setup()
        follower.start()
        run.start_drivers()
        log("load and faults for %ds (seed %d)" % (o.seconds, o.seed))
        run.chaos()
        run.drain()
        st = run.idle()
        objs = run.objects()
        running = run.listing("tasks", "--state", "RUNNING")
        run.notes += ["RUNNING at idle: %s %s on %s" % (
            t.get("task_id"), t.get("name") or t.get("function") or "",
            t.get("node_id")) for t in (running or {}).get("tasks", [])[:10]]
        run.notes += ["object at idle: %s" % json.dumps(x, sort_keys=True)
                      for x in (objs or {}).get("objects", [])[:5]]
        run.rec.poll()
        orphans = [{"pid": p, "comm": comm(p), "key": run.rec.open[p]["key"]}
                   for p in run.rec.running_pids()]
        left = [{"pid": p, "comm": c} for p, c in run.stop_cluster()]
        run.rec.stop.set()
        res = count(run, st, objs, orphans, left)
        if o.keep:
            with open(os.path.join(run.root, "execs.json"), "w") as f:
                json.dump(run.rec.execs, f)
        table(res)
        bad = any(v != 0 for v in res["counts"].values())
        rc = 1 if bad else 0
    except SetupError as e:
        print("chaos: cannot run: %s" % e, flush=True)
        run.notes.append(str(e))
    finally:
        signal.alarm(0)
        run.rec.stop.set()
        if o.keep:
            print("kept %s" % run.root)
        run.teardown()
        if o.out:
            with open(o.out, "w") as f:
                json.dump(res or {"error": run.notes}, f, indent=1,
                          sort_keys=True)
    print("chaos: %s" % ("PASS" if rc == 0 else "FAIL" if rc == 1 else
                         "ERROR"))
    sys.exit(rc)


if __name__ == "__main__":
    main()
