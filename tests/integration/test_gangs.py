"""test_gangs.py -- gangs over whole TPU slices on the fake accelerator
cluster (accel_cluster.py: slices slice-a = a0,a1 and slice-b = b0,b1, each
a v4-16 of 2 hosts x 4 chips, plus a GPU and a CPU node).

Each member runs gang_member.py, which writes its environment to a file;
the test compares every member's env with the contract of
docs/accelerators.md, as the rows of the one golden table say
(tests/golden/tpu_env.txt through tpu_goldens.py: gang_v4-16_*, gang_v4-8_*):

- `manta submit --tpu v4-16 --launch host`: 2 members on the two hosts of
  ONE slice, host-centric env, output prefixed by rank, exit status 0.
- `--launch device`: 8 ranks, one per chip, device-centric env with the
  scheduler's ports.
- a member exiting 3: the gang fails with 3 and the other member, which
  sleeps, is stopped at once.
- one host of slice-a busy: the gang lands on slice-b; one host of each
  busy: the gang stays PENDING holding nothing, and runs once a host frees.
- two gangs at once get different slices.
- a member killed mid-run: the whole gang restarts (new tasks, attempt 1)
  and finishes; the old members are gone. A host killed mid-run: the gang
  restarts on the other, intact slice.
- --slices 2: multislice env (MEGASCALE_*), one slice each.
- a one-host slice (v4-8 on a worker alone): its members get "localhost"
  for TPU_WORKER_HOSTNAMES, every process address and MASTER_ADDR, in both
  launch models, and those addresses work: every member binds its own and
  reaches all the others (gang_member.py mesh).
- bad requests get clear errors.
- the C SDK (sdk_gang.c): slice groups (manta/pg.h) and gangs
  (manta/gang.h): finish, fail with the member's code after a restart,
  cancel; and `manta placement-group create --tpu`.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

from accel_cluster import AccelCluster, IPS
from harness import (BIN, check, free_port_block, main, new_dir, pid_alive,
                     stays_true, wait_until)
from tpu_goldens import check_env

HERE = os.path.dirname(os.path.abspath(__file__))
MEMBER = [sys.executable, os.path.join(HERE, "gang_member.py")]
SLICES = {"slice-a": (IPS["a0"], IPS["a1"]), "slice-b": (IPS["b0"], IPS["b1"])}
# What every member of one slice gets alike.
SLICE_WIDE = ("TPU_CHIPS_PER_HOST_BOUNDS", "TPU_HOST_BOUNDS",
              "TPU_CHIPS_PER_PROCESS_BOUNDS", "TPU_PROCESS_BOUNDS",
              "TORCH_TPU_TOPOLOGY", "TPU_WORKER_HOSTNAMES", "WORLD_SIZE")


def cluster(**kw):
    lo, hi = free_port_block(64)
    # Workers whose own env names chips: host-centric members must not
    # inherit it (the gang unsets it), device-centric ones get their own.
    c = AccelCluster(head_args=["--gang-ports", "%d-%d" % (lo, hi)],
                     env={"TPU_VISIBLE_CHIPS": "0,1,2,3"}, **kw)
    c.ports = (lo, hi)
    return c


def envs(d, attempt=0):
    out = {}
    for f in glob.glob(os.path.join(d, "env-a%d-r*.json" % attempt)):
        r = int(f.rsplit("-r", 1)[1].split(".")[0])
        with open(f) as fh:
            out[r] = json.load(fh)
    return out


def submit(c, d, *flags, mode=("exit0",), timeout=90, tpu="v4-16"):
    return c.cli("submit", "--tpu", tpu, *flags, "--",
                 *MEMBER, d, *mode, timeout=timeout)


def gang_info(c, gid):
    p = c.cli("gang", "get", gid, "--format", "json", check=True)
    return json.loads(p.stdout)


def check_common(e, r, sl, host, world):
    hosts = SLICES[sl]
    want = {"TPU_ACCELERATOR_TYPE": "v4-16", "TPU_TOPOLOGY": "2x2x2",
            "TPU_WORKER_HOSTNAMES": ",".join(hosts),
            "TPU_WORKER_ID": str(host), "TPU_NAME": sl,
            "TPU_SKIP_MDS_QUERY": "true", "RANK": str(r),
            "WORLD_SIZE": str(world), "MASTER_ADDR": hosts[0],
            "MANTA_GANG_RANK": str(r), "MANTA_GANG_SIZE": str(world)}
    for k, v in want.items():
        check(e.get(k) == v, "rank %d %s=%r, want %r" % (r, k, e.get(k), v))
    check(e.get("MANTA_NODE_ID") is not None, "rank %d: no MANTA_NODE_ID" % r)


def test_launch_models():
    with cluster() as c:
        lo, hi = c.ports
        # host-centric: one process per host of one slice
        d = new_dir("gang-host")
        p = submit(c, d, "--launch", "host")
        check(p.returncode == 0, "host gang: %d %s%s" % (p.returncode,
                                                       p.stdout, p.stderr))
        ev = envs(d)
        check(sorted(ev) == [0, 1], "host members %r" % sorted(ev))
        sl = ev[0]["TPU_NAME"]
        check(sl in SLICES and ev[1]["TPU_NAME"] == sl,
              "one slice: %r %r" % (sl, ev[1].get("TPU_NAME")))
        for r, e in ev.items():
            check_common(e, r, sl, r, 2)
            check_env(e, "gang_v4-16_host_w%d" % r, "host rank %d" % r,
                      hosts={"h0": SLICES[sl][0], "h1": SLICES[sl][1]})
            check(e.get("LOCAL_RANK") == "0", "host rank %d LOCAL_RANK=%r" %
                  (r, e.get("LOCAL_RANK")))
            check(lo <= int(e["MASTER_PORT"]) <= hi, "MASTER_PORT %r" %
                  e["MASTER_PORT"])
        for r in (0, 1):
            check("[rank %d] hello from rank %d of 2" % (r, r) in p.stdout,
                  "rank %d output not prefixed: %r" % (r, p.stdout))

        # device-centric: one process per chip, 8 ranks
        d = new_dir("gang-device")
        p = submit(c, d, "--launch", "device")
        check(p.returncode == 0, "device gang: %d %s%s" % (
            p.returncode, p.stdout, p.stderr))
        ev = envs(d)
        check(sorted(ev) == list(range(8)), "device ranks %r" % sorted(ev))
        sl = ev[0]["TPU_NAME"]
        hosts = SLICES[sl]
        addrs = ev[0]["TPU_PROCESS_ADDRESSES"].split(",")
        check(len(addrs) == 8, "addresses %r" % addrs)
        ports = [int(a.rsplit(":", 1)[1]) for a in addrs]
        check(len(set(ports)) == 8 and all(lo <= x <= hi for x in ports),
              "ports %r not unique / in %d-%d" % (ports, lo, hi))
        for r, e in ev.items():
            host, local = divmod(r, 4)
            check_common(e, r, sl, host, 8)
            if r in (0, 5, 7):
                check_env(e, "gang_v4-16_device_r%d" % r, "device rank %d" % r,
                          hosts={"h0": hosts[0], "h1": hosts[1]})
            # The rest: the slice-wide values as rank 0's, its own by rank.
            want = {k: ev[0].get(k) for k in SLICE_WIDE}
            want.update({"TPU_VISIBLE_CHIPS": str(local),
                         "LOCAL_RANK": str(local),
                         "CLOUD_TPU_TASK_ID": str(r),
                         "TPU_PROCESS_PORT": str(ports[r]),
                         "TPU_PROCESS_ADDRESSES": ",".join(addrs),
                         "TORCH_TPU_SLICEBUILDER_ADDRESSES": ",".join(addrs),
                         "MASTER_PORT": ev[0]["MASTER_PORT"]})
            for k, v in want.items():
                check(e.get(k) == v, "device rank %d %s=%r, want %r" % (
                    r, k, e.get(k), v))
            check(addrs[r].rsplit(":", 1)[0] == hosts[host],
                  "rank %d address %r on host %r" % (r, addrs[r], hosts[host]))

        # a member failing fails the gang with its code; the rest stop
        d = new_dir("gang-fail")
        t0 = time.monotonic()
        p = submit(c, d, mode=("fail", "1", "3"))
        check(p.returncode == 3, "failing gang rc %d: %s" % (p.returncode,
                                                             p.stderr))
        check("rank 1" in p.stderr and "exited with code 3" in p.stderr,
              "failure not explained: %r" % p.stderr)
        check(time.monotonic() - t0 < 30, "the sleeping member was not "
              "stopped (%.0fs)" % (time.monotonic() - t0))
        pidf = os.path.join(d, "pid-a0-r0")
        if os.path.exists(pidf):  # rank 0 may be stopped before it starts
            with open(pidf) as f:
                pid0 = int(f.read())
            wait_until(lambda: not pid_alive(pid0), 10, "rank 0 stopped")


def occupy(c, name):
    """A task holding all 4 chips of host name; returns its task id."""
    sl = "slice-a" if name.startswith("a") else "slice-b"
    wid = name[1]
    p = c.cli("submit", "--no-wait", "--num-cpus", "0", "--resources",
              '{"TPU": 4}', "--label-selector",
              "manta.io/tpu-slice-name=%s,manta.io/tpu-worker-id=%s" %
              (sl, wid), "--", "sleep", "120", check=True)
    tid = p.stdout.strip()

    def running():
        out = c.cli("list", "tasks", "--format", "json", check=True).stdout
        return any(t["task_id"] == tid and t["state"] == "RUNNING"
                   for t in json.loads(out)["tasks"])
    wait_until(running, 20, "occupier on %s running" % name, 0.2)
    return tid


def tpu_avail(c, name):
    return c.node_status(name)["resources_available"].get("TPU", 0)


def test_slice_placement():
    with cluster() as c:
        busy_a = occupy(c, "a1")
        d = new_dir("gang-b")
        p = submit(c, d)
        check(p.returncode == 0, "gang with a1 busy: %s" % p.stderr)
        ev = envs(d)
        check(ev and all(e["TPU_NAME"] == "slice-b" for e in ev.values()),
              "landed on %r, want slice-b" % [e["TPU_NAME"] for e in
                                              ev.values()])

        busy_b = occupy(c, "b0")
        d = new_dir("gang-wait")
        p = c.cli("submit", "--no-wait", "--tpu", "v4-16", "--", *MEMBER, d,
                  "exit0", check=True)
        gid = p.stdout.strip()
        # An absence (the gang does not start): a bounded window, polled
        # throughout, failing as soon as the gang leaves PENDING.
        stays_true(lambda: gang_info(c, gid)["state"] == "PENDING", 1.5,
                   "the gang PENDING with no free slice", 0.2)
        g = gang_info(c, gid)
        check(g["state"] == "PENDING", "gang %s with no free slice" %
              g["state"])
        check(tpu_avail(c, "a0") == 4 and tpu_avail(c, "b1") == 4,
              "a pending gang holds chips: a0 %r b1 %r" % (
                  tpu_avail(c, "a0"), tpu_avail(c, "b1")))
        c.cli("cancel", busy_a, check=True)
        wait_until(lambda: gang_info(c, gid)["state"] == "FINISHED", 30,
                   "pending gang runs once slice-a frees", 0.3)
        ev = envs(d)
        check(sorted(ev) == [0, 1] and ev[0]["TPU_NAME"] == "slice-a",
              "freed gang on %r" % ev)
        c.cli("cancel", busy_b, check=True)

        # two at once: different slices
        ds = [new_dir("gang-c%d" % i) for i in range(2)]
        gids = [c.cli("submit", "--no-wait", "--tpu", "v4-16", "--",
                      *MEMBER, x, "sleep", "2", check=True).stdout.strip()
                for x in ds]
        for gid in gids:
            wait_until(lambda: gang_info(c, gid)["state"] == "FINISHED", 40,
                       "concurrent gang %s" % gid, 0.3)
        names = [envs(x)[0]["TPU_NAME"] for x in ds]
        check(sorted(names) == ["slice-a", "slice-b"],
              "concurrent gangs on %r" % names)
        p = c.cli("list", "gangs", "--format", "json", check=True)
        check(json.loads(p.stdout)["total"] == 4, "list gangs %s" % p.stdout)
        tasks = json.loads(c.cli("list", "tasks", "--format", "json",
                                 check=True).stdout)["tasks"]
        mine = sorted(t["gang_rank"] for t in tasks
                      if t.get("gang_id") == gids[0])
        check(mine == [0, 1], "members of %s in list tasks: %r" % (gids[0],
                                                                 mine))


def test_restart_multislice_and_errors():
    with cluster() as c:
        d = new_dir("gang-restart")
        p = c.cli("submit", "--no-wait", "--tpu", "v4-16", "--max-restarts",
                  "2", "--", *MEMBER, d, "hang-first", check=True)
        gid = p.stdout.strip()
        pidf = os.path.join(d, "pid-a0-r1")
        wait_until(lambda: os.path.exists(pidf) and
                   os.path.exists(os.path.join(d, "pid-a0-r0")), 30,
                   "first attempt running", 0.2)
        first = gang_info(c, gid)
        with open(pidf) as f:
            os.kill(int(f.read()), signal.SIGKILL)
        wait_until(lambda: gang_info(c, gid)["state"] == "FINISHED", 40,
                   "gang restarted and finished", 0.3)
        g = gang_info(c, gid)
        check(g["attempt"] == 1, "attempt %r" % g["attempt"])
        old = {m["task_id"] for m in first["members"]}
        new = {m["task_id"] for m in g["members"]}
        check(not old & new, "restart reused tasks %r" % (old & new))
        check(sorted(envs(d, 1)) == [0, 1], "second attempt %r" % envs(d, 1))
        with open(os.path.join(d, "pid-a0-r0")) as f:
            pid0 = int(f.read())
        check(not pid_alive(pid0), "rank 0 of attempt 0 still alive")

        # multislice: one gang over both slices
        d = new_dir("gang-multi")
        p = submit(c, d, "--slices", "2")
        check(p.returncode == 0, "multislice: %s" % p.stderr)
        ev = envs(d)
        check(sorted(ev) == [0, 1, 2, 3], "multislice ranks %r" % sorted(ev))
        coord = ev[0]["TPU_WORKER_HOSTNAMES"].split(",")[0]
        sl0 = ev[0]["TPU_NAME"]
        for r, e in ev.items():
            s, host = divmod(r, 2)
            want = {"MEGASCALE_NUM_SLICES": "2", "MEGASCALE_SLICE_ID": str(s),
                    "MEGASCALE_COORDINATOR_ADDRESS": coord,
                    "TPU_WORKER_ID": str(host), "RANK": str(r),
                    "WORLD_SIZE": "4", "MASTER_ADDR": coord}
            for k, v in want.items():
                check(e.get(k) == v, "multislice rank %d %s=%r, want %r" % (
                    r, k, e.get(k), v))
            check((e["TPU_NAME"] == sl0) == (s == 0),
                  "rank %d on %s" % (r, e["TPU_NAME"]))

        for flags, what in ((("--tpu", "v9-99"), "unknown TPU pod type"),
                            (("--tpu", "v4-16", "--resources", '{"TPU": 4}'),
                             "chips")):
            p = c.cli("submit", *flags, "--", "true")
            check(p.returncode != 0 and what in p.stderr,
                  "%r: rc %d %r" % (flags, p.returncode, p.stderr))
        p = c.cli("gang", "get", "gffffffffffffff")
        check(p.returncode == 1 and "no such gang" in p.stderr,
              "unknown gang: %r" % p.stderr)

        # a host dies under a running gang: it restarts on the other slice
        d = new_dir("gang-node")
        gid = c.cli("submit", "--no-wait", "--tpu", "v4-16", "--max-restarts",
                    "1", "--", *MEMBER, d, "hang-first",
                    check=True).stdout.strip()
        wait_until(lambda: len(envs(d)) == 2, 30, "first attempt", 0.2)
        sl = envs(d)[0]["TPU_NAME"]
        c.kill("a1" if sl == "slice-a" else "b1")
        wait_until(lambda: gang_info(c, gid)["state"] == "FINISHED", 40,
                   "gang restarted after its host died", 0.3)
        ev = envs(d, 1)
        check(sorted(ev) == [0, 1] and all(e["TPU_NAME"] != sl
                                           for e in ev.values()),
              "after losing a host of %s the gang ran on %r" % (
                  sl, [e["TPU_NAME"] for e in ev.values()]))


def mesh_of(d, r):
    with open(os.path.join(d, "mesh-a0-r%d.json" % r)) as f:
        return json.load(f)


def test_one_host_slice():
    """A v4-8 slice is one host: its members see "localhost" for the
    slice's hosts, process addresses and MASTER_ADDR (as GKE and
    PyTorch/XLA name a one-host slice), never the node's address, and the
    addresses work: the members bind and reach each other on them."""
    solo = {"TPU_ACCELERATOR_TYPE": "v4-8", "TPU_TOPOLOGY": "2x2x1",
            "TPU_NAME": "solo", "TPU_WORKER_ID": "0"}
    with cluster(only=("a0",), node_env={"a0": solo}) as c:
        ip = c.nodes["a0"].ip
        d = new_dir("gang-solo-host")
        p = submit(c, d, "--launch", "host", mode=("mesh",), tpu="v4-8")
        check(p.returncode == 0, "one-host gang, host launch: %d %s%s" % (
            p.returncode, p.stdout, p.stderr))
        ev = envs(d)
        check(sorted(ev) == [0], "host members %r" % sorted(ev))
        check_env(ev[0], "gang_v4-8_host", "one-host, host launch")
        check(ev[0].get("MASTER_ADDR") == "localhost" and
              ev[0].get("WORLD_SIZE") == "1" and ev[0].get("RANK") == "0",
              "host-centric rendezvous %r" % {
                  k: ev[0].get(k) for k in ("MASTER_ADDR", "WORLD_SIZE",
                                            "RANK")})
        check(mesh_of(d, 0)["served"] == ["localhost:%s" %
                                          ev[0]["MASTER_PORT"]],
              "rank 0 served %r" % mesh_of(d, 0))

        d = new_dir("gang-solo-device")
        p = submit(c, d, "--launch", "device", mode=("mesh",), tpu="v4-8")
        check(p.returncode == 0, "one-host gang, device launch: %d %s%s" % (
            p.returncode, p.stdout, p.stderr))
        ev = envs(d)
        check(sorted(ev) == [0, 1, 2, 3], "device ranks %r" % sorted(ev))
        for r, e in ev.items():
            check_env(e, "gang_v4-8_device_r%d" % r, "one-host rank %d" % r)
            named = sorted(k for k, v in e.items() if ip in v and
                           k.startswith(("TPU_", "TORCH_TPU_", "MASTER_")))
            check(not named, "rank %d names the node's address %s in %r" % (
                r, ip, named))
            m = mesh_of(d, r)
            check(len(m["reached"]) == len(m["peers"]) == 3 + (r != 0),
                  "rank %d reached %r of %r" % (r, m["reached"], m["peers"]))


def test_sdk_and_slice_groups():
    with cluster() as c:
        p = subprocess.run([os.path.join(BIN, "sdk_gang"), c.address],
                           capture_output=True, text=True, timeout=150)
        check(p.returncode == 0, "sdk_gang: %s%s" % (p.stdout, p.stderr))
        p = c.cli("placement-group", "create", "--tpu", "v4-16", "--slices",
                  "2", "--wait", "10", check=True)
        pg = p.stdout.split()[0]
        g = json.loads(c.cli("list", "placement-groups", "--format", "json",
                             check=True).stdout)
        mine = [x for x in g["placement_groups"] if x["pg_id"] == pg]
        check(mine and mine[0]["state"] == "CREATED" and
              len(set(mine[0]["bundle_node_ids"])) == 4,
              "2-slice group: %r" % mine)
        # every chip is held: a slice gang now waits
        d = new_dir("gang-held")
        gid = c.cli("submit", "--no-wait", "--tpu", "v4-16", "--", *MEMBER,
                    d, "exit0", check=True).stdout.strip()
        # An absence again: a bounded window, polled throughout.
        stays_true(lambda: gang_info(c, gid)["state"] == "PENDING", 1,
                   "the gang PENDING while the group holds every slice",
                   0.2)
        check(gang_info(c, gid)["state"] == "PENDING", "gang ran on held "
              "slices")
        c.cli("placement-group", "remove", pg, check=True)
        wait_until(lambda: gang_info(c, gid)["state"] == "FINISHED", 30,
                   "gang runs once the group is removed", 0.3)
        p = c.cli("placement-group", "create", "--tpu", "v4-16",
                  "--bundles", '[{"CPU": 1}]')
        check(p.returncode == 2, "--tpu with --bundles: %r" % p.stderr)


if __name__ == "__main__":
    main([test_launch_models, test_slice_placement,
          test_restart_multislice_and_errors, test_one_host_slice,
          test_sdk_and_slice_groups])
