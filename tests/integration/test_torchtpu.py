"""test_torchtpu.py -- examples/torchtpu/train.py as a gang over a whole TPU
slice of the fake accelerator cluster (two v4-16 slices of 2 hosts x 4
chips; accel_cluster.py), end to end:

- the test puts the training data (a float32 tensor) into a0's object
  store through the Python bridge;
- `manta submit --tpu v4-16 --launch host -- python3 train.py --input ID`
  runs one rank per host on the two hosts of ONE slice; `--launch device`
  runs 8 ranks, one per chip; each rank reads the input from the store
  (pulled to its node), initialises torch.distributed (gloo) from the env
  the scheduler set, trains with gradient all-reduce and prints the sha256
  of its final weights: every rank must print the same digest;
- each rank's environment (--env-out) matches the contract: the slice's
  hosts, TPU_WORKER_ID, RANK / WORLD_SIZE / LOCAL_RANK, TPU_VISIBLE_CHIPS
  per chip in the device launch, none in the host launch;
- rank 0 reported its weights as its task's result: the bridge reads them
  back from the store, and they hash to the printed digest.

Without TorchTPU here the ranks run on the CPU with the same slice env (they
say so); torch comes from deploy/install-deps.sh (python3-torch).
"""
import glob
import hashlib
import json
import os
import re

from harness import check, main, new_dir
import test_python as tp  # the bridge, set up for plain and ASan builds
from test_gangs import cluster, gang_info

LINE = re.compile(r"^\[rank (\d+)\] rank (\d+)/(\d+) weights sha256=([0-9a-f]+)"
                  r" object=(\S+)", re.M)


def run_train(c, ref, launch, out):
    p = c.cli("submit", "--tpu", "v4-16", "--launch", launch, "--name",
              "train-" + launch, *tp.bridge_env(), "--", tp.PY, tp.TRAIN,
              "--input", ref.id, "--steps", "10", "--env-out", out,
              timeout=170)
    check(p.returncode == 0, "%s gang: rc %d\n%s\n%s" % (
        launch, p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p.stdout


def check_digests(out, world):
    got = {}
    for prefix, rank, w, digest, _ in LINE.findall(out):
        check(prefix == rank and int(w) == world,
              "line of rank %s says %s/%s" % (prefix, rank, w))
        got[int(rank)] = digest
    check(sorted(got) == list(range(world)), "ranks reporting %r of %d:\n%s"
          % (sorted(got), world, out[-2000:]))
    check(len(set(got.values())) == 1, "ranks ended with different "
          "weights: %r" % got)
    return got[0]


def rank_envs(d):
    out = {}
    for f in glob.glob(os.path.join(d, "env-rank*.json")):
        with open(f) as fh:
            e = json.load(fh)
        out[int(e["RANK"])] = e
    return out


def check_result(c, gang_name, digest):
    gangs = json.loads(c.cli("list", "gangs", "--format", "json",
                             check=True).stdout)["gangs"]
    g = [x for x in gangs if x["name"] == gang_name]
    check(len(g) == 1 and g[0]["state"] == "FINISHED", "gang %s: %r" % (
        gang_name, g))
    tid = [m["task_id"] for m in gang_info(c, g[0]["gang_id"])["members"]
           if m["rank"] == 0][0]
    w = tp.manta.task_result(tid, timeout=30).numpy()
    check(str(w.dtype) == "float32" and w.ndim == 1,
          "result %s %r" % (w.dtype, w.shape))
    check(hashlib.sha256(w.tobytes()).hexdigest() == digest,
          "rank 0's result object differs from the weights it printed")
    return w.copy()


def test_train_on_a_slice():
    if tp.torch is None or tp.numpy is None:
        print("SKIP test_train_on_a_slice: torch or numpy not importable "
              "(deploy/install-deps.sh installs python3-torch)")
        return
    with cluster() as c:
        tp.manta.connect(c.address, store_socket=os.path.join(
            c.nodes["a0"].temp_dir, "objstore.sock"))
        try:
            g = tp.torch.Generator().manual_seed(7)
            x = tp.torch.randn(512, 8, generator=g)
            y = x @ tp.torch.arange(1.0, 9.0) - 2.0
            ref = tp.manta.put(tp.torch.cat([x, y[:, None]], 1).contiguous())

            d = new_dir("train-host")
            out = run_train(c, ref, "host", d)
            digest = check_digests(out, 2)
            ev = rank_envs(d)
            sl = ev[0]["TPU_NAME"]
            check(sorted(ev) == [0, 1] and ev[1]["TPU_NAME"] == sl,
                  "host ranks on %r" % {r: e["TPU_NAME"] for r, e in
                                        ev.items()})
            for r, e in ev.items():
                check(e["TPU_WORKER_ID"] == str(r) and
                      e["WORLD_SIZE"] == "2" and
                      "TPU_VISIBLE_CHIPS" not in e and
                      e["MASTER_ADDR"] == e["TPU_WORKER_HOSTNAMES"].split(
                          ",")[0], "host rank %d env %r" % (r, e))
            check("input %s: [512, 9]" % ref.id in out, "input not read "
                  "from the store:\n%s" % out[-2000:])
            w2 = check_result(c, "train-host", digest)

            d = new_dir("train-device")
            out = run_train(c, ref, "device", d)
            digest = check_digests(out, 8)
            ev = rank_envs(d)
            check(sorted(ev) == list(range(8)), "device ranks %r" % sorted(ev))
            for r, e in ev.items():
                check(e["TPU_VISIBLE_CHIPS"] == e["LOCAL_RANK"] == str(r % 4)
                      and e["TPU_WORKER_ID"] == str(r // 4) and
                      e["CLOUD_TPU_TASK_ID"] == str(r) and
                      len(e["TPU_PROCESS_ADDRESSES"].split(",")) == 8,
                      "device rank %d env %r" % (r, e))
            w8 = check_result(c, "train-device", digest)
            # Same data, seed and mean gradient: the same model up to
            # float rounding of the sums.
            check(tp.numpy.allclose(w2, w8, atol=1e-4), "2 ranks %r vs 8 "
                  "ranks %r" % (w2, w8))
        finally:
            tp.manta.disconnect()


if __name__ == "__main__":
    main([test_train_on_a_slice])
