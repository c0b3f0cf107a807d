"""test_accel.py -- the fake accelerator cluster (accel_cluster.py): two v4-16
slices of 2 hosts x 4 chips, an 8-GPU node on the stub NVML and a CPU node,
all real processes.

- status: `manta status` (text and JSON) and `manta list nodes` show the
  chips, GPUs, labels and slice membership of every node, the
  TPU-v4-16-head marker on worker 0 of each slice only, and nothing
  accelerator-shaped on the CPU node.
- a killed node is reported DEAD and its slice loses the host.
- binding: a task granted 1, 2 or 4 TPU chips of a v4 host gets exactly
  the env of docs/accelerators.md section 4.2, as the golden table
  (tests/golden/tpu_env.txt) rows say: bounds under both spellings, each
  replacing a stale value from the worker's own env, and TPU_VISIBLE_CHIPS
  unset for the whole host, even when the worker's own env had it; a task
  without GPUs sees CUDA_VISIBLE_DEVICES="", and one without chips on a
  TPU host TPU_VISIBLE_CHIPS="" (none elsewhere); two concurrent TPU:2
  tasks on one host get disjoint chips; --unset-env
  removes variables from command and function tasks, and the grant's
  variables still apply after it; the same through the SDK
  (accel_driver.c) for a function task and an actor's methods.
"""
import os
import subprocess
import tempfile

from accel_cluster import MANTA, AccelCluster
from harness import BIN, check, main
import tpu_goldens

FNLIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))
FNLIB = "libmt_test_fnlib.so"
ON_A0 = "manta.io/tpu-slice-name=slice-a,manta.io/tpu-worker-id=0"
ON_A1 = "manta.io/tpu-slice-name=slice-a,manta.io/tpu-worker-id=1"
# Print the accelerator env as "K=V" lines ("K=" when set and empty).
DUMP = "env | grep -E '^(TPU_|CUDA_VISIBLE_DEVICES=)' | sort"

TPU_LABELS = ("manta.io/accelerator-type", "manta.io/tpu-slice-name",
              "manta.io/tpu-worker-id", "manta.io/tpu-pod-type",
              "manta.io/tpu-topology")
SLICE_OF = {"a0": ("slice-a", "0"), "a1": ("slice-a", "1"),
            "b0": ("slice-b", "0"), "b1": ("slice-b", "1")}


def check_tpu_host(name, n):
    sl, wid = SLICE_OF[name]
    r, lab = n["resources_total"], n["labels"]
    check(r.get("TPU") == 4, "%s TPU %r" % (name, r))
    check("GPU" not in r, "%s GPU %r" % (name, r))
    check(r.get("accelerator_type:TPU-V4") == 1, "%s type %r" % (name, r))
    check(r.get(sl) == 1, "%s slice resource %r" % (name, r))
    other = "slice-b" if sl == "slice-a" else "slice-a"
    check(other not in r, "%s in both slices %r" % (name, r))
    want = {"manta.io/accelerator-type": "TPU-V4",
            "manta.io/tpu-slice-name": sl, "manta.io/tpu-worker-id": wid,
            "manta.io/tpu-pod-type": "v4-16",
            "manta.io/tpu-topology": "2x2x2"}
    for k, v in want.items():
        check(lab.get(k) == v, "%s label %s=%r, want %r" % (
            name, k, lab.get(k), v))
    head = r.get("TPU-v4-16-head")
    check(head == (1 if wid == "0" else None),
          "%s head marker %r (worker %s)" % (name, head, wid))


def check_plain(name, n, gpus):
    r, lab = n["resources_total"], n["labels"]
    check(r.get("GPU", 0) == gpus, "%s GPU %r" % (name, r))
    check("TPU" not in r and not any(k.startswith("TPU-") or
                                     k.startswith("accelerator_type:") or
                                     k.startswith("slice-") for k in r),
          "%s has TPU resources %r" % (name, r))
    check(not any(k.startswith("manta.io/tpu-") for k in lab),
          "%s has TPU labels %r" % (name, lab))
    want = "H200" if gpus else None
    check(lab.get("manta.io/accelerator-type") == want,
          "%s accelerator type %r" % (name, lab))


def test_status_shows_accelerators():
    with AccelCluster() as c:
        st = c.status()
        alive = [n for n in st["nodes"] if n["state"] == "ALIVE"]
        check(len(alive) == 6, "nodes %r" % alive)
        by_ip = {n["node_ip"]: n for n in alive}
        for name, node in c.nodes.items():
            n = by_ip[node.ip]
            check(n["node_id"] == node.node_id, "%s id" % name)
            if name in SLICE_OF:
                check_tpu_host(name, n)
            else:
                check_plain(name, n, 8 if name == "gpu" else 0)
        tot = st["resources_total"]
        check(tot.get("TPU") == 16 and tot.get("GPU") == 8 and
              tot.get("TPU-v4-16-head") == 2 and tot.get("slice-a") == 2 and
              tot.get("slice-b") == 2, "cluster totals %r" % tot)
        # Slice membership: exactly two hosts per slice, worker ids 0 and 1.
        for sl in ("slice-a", "slice-b"):
            ids = sorted(n["labels"]["manta.io/tpu-worker-id"] for n in alive
                         if n["labels"].get("manta.io/tpu-slice-name") == sl)
            check(ids == ["0", "1"], "%s members %r" % (sl, ids))
        # The text forms say the same.
        txt = c.cli("status", check=True).stdout
        for name, node in c.nodes.items():
            block = txt.split(node.node_id, 1)[1].split("\n", 1)[0]
            check(node.ip in block, "%s not in status text" % name)
        check("0.0/16.0 TPU" in txt and "0.0/8.0 GPU" in txt and
              "0.0/2.0 TPU-v4-16-head" in txt, "status text:\n" + txt)
        for name, (sl, wid) in SLICE_OF.items():
            tail = txt.split(c.nodes[name].node_id, 1)[1]
            labels = tail.split("labels:", 1)[1].split("\n", 1)[0]
            check("manta.io/tpu-slice-name=%s" % sl in labels and
                  "manta.io/tpu-worker-id=%s" % wid in labels,
                  "%s labels in text: %r" % (name, labels))
        lst = c.cli("list", "nodes", check=True).stdout
        row = [ln for ln in lst.splitlines() if c.nodes["gpu"].node_id in ln]
        check(len(row) == 1 and "0/8  0/8" in row[0], "list nodes gpu %r" %
              row)
        row = [ln for ln in lst.splitlines() if c.nodes["cpu"].node_id in ln]
        check(len(row) == 1 and row[0].split()[-2:] == ["-", "-"],
              "list nodes cpu %r" % row)
        # Other resources have a column too (issue 13: TPU chips and
        # custom resources were missing).
        row = [ln for ln in lst.splitlines() if c.nodes["a0"].node_id in ln]
        check(len(row) == 1 and "TPU 0/4" in row[0] and
              "TPU-v4-16-head 0/1" in row[0], "list nodes a0 %r" % row)


def test_killed_host_leaves_its_slice():
    with AccelCluster() as c:
        c.kill("a1")
        c.wait_dead("a1")
        st = c.status()
        alive = [n for n in st["nodes"] if n["state"] == "ALIVE"]
        check(len(alive) == 5, "alive %d" % len(alive))
        tot = st["resources_total"]
        check(tot.get("TPU") == 12 and tot.get("slice-a") == 1 and
              tot.get("slice-b") == 2, "totals after kill %r" % tot)
        p = c.cli("submit", "--num-cpus", "0", "--resources",
                  '{"TPU": 4, "slice-a": 1}', "--", "sh", "-c",
                  "echo $TPU_WORKER_ID", timeout=60)
        check(p.returncode == 0, "task on the live slice-a host: %s%s" %
              (p.stdout, p.stderr))


# ---- binding ----------------------------------------------------------------

# docs/accelerators.md 4.2 for chips of a v4-16 host (a 3D generation),
# granted on an idle host (the lowest aligned block): the rows of the one
# golden table (tests/golden/tpu_env.txt, tpu_goldens.py), plus what the
# task keeps of the worker's own env.
EXTRA = {"TPU_NAME": "slice-a",         # the worker's slice identity
         "CUDA_VISIBLE_DEVICES": ""}     # no GPUs granted
GOLDEN = {1: "grant_v4-16_1chip", 2: "grant_v4-16_2chips",
          4: "grant_v4-16_4chips"}


def golden_want(name):
    """The exact TPU_* / CUDA_VISIBLE_DEVICES lines a task must print."""
    g = tpu_goldens.case(name)
    return dict(g.env, **EXTRA)


def env_of(out):
    return dict(ln.split("=", 1) for ln in out.splitlines() if "=" in ln)


def submit_sh(c, script, *opts, timeout=60):
    p = c.cli("submit", *opts, "--", "sh", "-c", script, timeout=timeout)
    check(p.returncode == 0, "submit %r: rc %d\n%s%s" % (
        opts, p.returncode, p.stdout, p.stderr))
    return p.stdout


def test_tpu_grant_env_goldens():
    # The worker of a0 runs with TPU_VISIBLE_CHIPS and stale bounds set,
    # under both spellings: grants replace them all (PyTorch/XLA reads the
    # _PROCESS_ ones first), and a whole-host grant removes
    # TPU_VISIBLE_CHIPS.
    stale = {"TPU_VISIBLE_CHIPS": "3", "TPU_CHIPS_PER_HOST_BOUNDS": "9,9,9",
             "TPU_PROCESS_BOUNDS": "9,9,9",
             "TPU_CHIPS_PER_PROCESS_BOUNDS": "9,9,9"}
    with AccelCluster(node_env={"a0": stale}) as c:
        for k, name in sorted(GOLDEN.items()):
            want = golden_want(name)
            got = env_of(submit_sh(c, DUMP, "--num-cpus", "0", "--resources",
                                   '{"TPU": %d}' % k, "--label-selector",
                                   ON_A0))
            check(got == want, "TPU:%d env (golden %s)\n got  %r\n want %r"
                  % (k, name, sorted(got.items()), sorted(want.items())))
        # The same through a function task in an executor: the grant's
        # unset reaches the executor, and is undone after the call.
        fn = ["--num-cpus", "0", "--label-selector", ON_A0, "--function",
              FNLIB + ":env", "--code-path", FNLIB_DIR,
              "--arg", "TPU_VISIBLE_CHIPS"]
        for _ in range(2):      # both executors of a0
            p = c.cli("submit", "--resources", '{"TPU": 4}', *fn)
            check(p.returncode == 1 and
                  "TPU_VISIBLE_CHIPS is not set" in p.stderr,
                  "whole-host function task: %d %r %r" % (
                      p.returncode, p.stdout, p.stderr))
        p = c.cli("submit", "--resources", '{"TPU": 2}', *fn)
        check(p.returncode == 0 and p.stdout == "0,1\n",
              "TPU:2 function task: %d %r %r" % (p.returncode, p.stdout,
                                                  p.stderr))
        for _ in range(2):
            p = c.cli("submit", *fn)
            check(p.returncode == 0 and p.stdout == "",
                  "no-TPU function task after them sees chips: %d %r %r" % (
                      p.returncode, p.stdout, p.stderr))


def test_no_accelerators_no_devices():
    with AccelCluster() as c:
        for name in ("cpu", "gpu", "a1"):
            got = env_of(submit_sh(c, DUMP, "--num-cpus", "1",
                                   "--label-selector", "manta.io/node-id=" +
                                   c.nodes[name].node_id))
            # Like CUDA: no chips granted on a TPU host -> "" (Ray's
            # override on zero); nothing on hosts without TPUs.
            check(got.get("CUDA_VISIBLE_DEVICES") == "" and
                  got.get("TPU_VISIBLE_CHIPS") == ("" if name == "a1"
                                                   else None),
                  "task without accelerators on %s saw %r" % (name, got))
            # Off the TPU hosts nothing TPU at all (a1's worker has its
            # slice identity in its own env, which tasks inherit).
            check(name == "a1" or got == {"CUDA_VISIBLE_DEVICES": ""},
                  "task on %s saw %r" % (name, got))
        got = env_of(submit_sh(c, DUMP, "--num-gpus", "2"))
        ids = got.get("CUDA_VISIBLE_DEVICES", "").split(",")
        check(len(ids) == 2 and len(set(ids)) == 2 and
              "TPU_VISIBLE_CHIPS" not in got, "2-GPU task saw %r" % got)


def test_tpu_without_slice_identity():
    """Chips offered with --resources on a host without a slice identity:
    no shape to compute bounds from, so tasks get only their chips."""
    with AccelCluster(node_args={"cpu": ["--resources", '{"TPU": 2}']}) as c:
        sel = "manta.io/node-id=" + c.nodes["cpu"].node_id
        for k, chips in ((1, "0"), (2, "0,1")):
            got = env_of(submit_sh(c, DUMP, "--num-cpus", "0", "--resources",
                                   '{"TPU": %d}' % k, "--label-selector",
                                   sel))
            check(got == {"CUDA_VISIBLE_DEVICES": "",
                          "TPU_VISIBLE_CHIPS": chips},
                  "TPU:%d without identity: %r" % (k, got))


def test_concurrent_tpu_tasks_disjoint():
    """Two TPU:2 tasks on a1 at once: each waits (20 s at most) for the
    other to have started, so they truly overlap."""
    with AccelCluster() as c, tempfile.TemporaryDirectory() as d:
        script = ('touch %s/$1; i=0; while [ ! -e %s/$2 ] && [ $i -lt 200 ]; '
                  'do sleep 0.1; i=$((i+1)); done; [ -e %s/$2 ] || exit 9; '
                  'echo "$TPU_VISIBLE_CHIPS"' % (d, d, d))
        procs = [subprocess.Popen(
            [MANTA, "submit", "--address", c.address, "--num-cpus", "1",
             "--resources", '{"TPU": 2}', "--label-selector", ON_A1, "--",
             "sh", "-c", script, "sh", me, other],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for me, other in (("x", "y"), ("y", "x"))]
        outs = [p.communicate(timeout=60) for p in procs]
        for p, (out, err) in zip(procs, outs):
            check(p.returncode == 0, "rc %d: %s%s" % (p.returncode, out, err))
        chips = [set(o.strip().split(",")) for o, _ in outs]
        check(len(chips[0]) == 2 and len(chips[1]) == 2 and
              not chips[0] & chips[1] and
              chips[0] | chips[1] == {"0", "1", "2", "3"},
              "chips %r" % chips)
        check(sorted(sorted(x) for x in chips) == [["0", "1"], ["2", "3"]],
              "aligned pairs %r" % chips)


def test_unset_env():
    worker_env = {"MT_TEST_FOO": "worker", "MT_TEST_KEEP": "k"}
    with AccelCluster(node_env={"cpu": worker_env}) as c:
        on_cpu = ["--label-selector",
                  "manta.io/node-id=" + c.nodes["cpu"].node_id]
        got = env_of(submit_sh(
            c, "env | grep -E '^(MT_TEST_|CUDA_VISIBLE_DEVICES=)'", *on_cpu,
            "--env", "MT_TEST_BAR=1", "--env", "MT_TEST_GONE=1",
            "--unset-env", "MT_TEST_FOO", "--unset-env", "MT_TEST_GONE",
            "--unset-env", "MT_TEST_NEVER_SET",
            "--unset-env", "CUDA_VISIBLE_DEVICES"))
        check(got == {"MT_TEST_BAR": "1", "MT_TEST_KEEP": "k",
                      "CUDA_VISIBLE_DEVICES": ""},
              "command task env %r" % got)
        fn = on_cpu + ["--function", FNLIB + ":env", "--code-path",
                       FNLIB_DIR, "--arg", "MT_TEST_FOO"]
        p = c.cli("submit", "--unset-env", "MT_TEST_FOO", *fn)
        check(p.returncode == 1 and "MT_TEST_FOO is not set" in p.stderr,
              "function task: %d %r %r" % (p.returncode, p.stdout, p.stderr))
        for _ in range(2):
            p = c.cli("submit", *fn)
            check(p.returncode == 0 and p.stdout == "worker\n",
                  "after the unset call: %d %r %r" % (p.returncode, p.stdout,
                                                      p.stderr))
        for bad in ("A=B", ""):
            p = c.cli("submit", "--unset-env", bad, "--", "true")
            check(p.returncode == 2 and "--unset-env" in p.stderr,
                  "--unset-env %r: %d %r" % (bad, p.returncode, p.stderr))


def test_sdk_function_task_and_actor_env():
    """Through the SDK (accel_driver.c): mt_task_opts_set_env /
    mt_task_opts_unset_env and the grant's env reach a function task and
    an actor, whose methods keep its creation's environment."""
    drv = os.path.join(BIN, "accel_driver")
    worker_env = {"TPU_VISIBLE_CHIPS": "3", "MT_TEST_FOO": "worker"}
    names = ["TPU_VISIBLE_CHIPS", "TPU_CHIPS_PER_HOST_BOUNDS", "MT_TEST_FOO",
             "MT_TEST_SET", "CUDA_VISIBLE_DEVICES"]
    with AccelCluster(node_env={"a0": worker_env}) as c:
        for k, chips, bounds in ((2, "TPU_VISIBLE_CHIPS=0,1", "1,2,1"),
                                 (4, "TPU_VISIBLE_CHIPS unset", "2,2,1"),
                                 (0, "TPU_VISIBLE_CHIPS=", None)):
            p = subprocess.run([drv, c.address, FNLIB_DIR,
                                c.nodes["a0"].node_id, str(k),
                                "MT_TEST_SET=1", "-MT_TEST_FOO", "--"] +
                               names, capture_output=True, text=True,
                               timeout=90)
            check(p.returncode == 0, "driver TPU:%d: %s%s" % (k, p.stdout,
                                                                p.stderr))
            for who in ("fn", "actor"):
                want = ["%s %s" % (who, chips),
                        "%s TPU_CHIPS_PER_HOST_BOUNDS%s" % (
                            who, "=" + bounds if bounds else " unset"),
                        "%s MT_TEST_FOO unset" % who,
                        "%s MT_TEST_SET=1" % who,
                        "%s CUDA_VISIBLE_DEVICES=" % who]
                got = [ln for ln in p.stdout.splitlines()
                       if ln.startswith(who + " ")]
                check(got == want, "TPU:%d %s\n got  %r\n want %r" % (
                    k, who, got, want))


if __name__ == "__main__":
    main([test_status_shows_accelerators, test_killed_host_leaves_its_slice,
          test_tpu_grant_env_goldens, test_no_accelerators_no_devices,
          test_tpu_without_slice_identity,
          test_concurrent_tpu_tasks_disjoint, test_unset_env,
          test_sdk_function_task_and_actor_env])
