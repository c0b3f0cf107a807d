"""test_accel.py -- the fake accelerator cluster (accel_cluster.py): two v4-16
slices of 2 hosts x 4 chips, an 8-GPU node on the stub NVML and a CPU node,
all real processes.

- status: `manta status` (text and JSON) and `manta list nodes` show the
  chips, GPUs, labels and slice membership of every node, the
  TPU-v4-16-head marker on worker 0 of each slice only, and nothing
  accelerator-shaped on the CPU node.
- a killed node is reported DEAD and its slice loses the host.
"""
from accel_cluster import AccelCluster
from harness import check, main

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
        check(len(row) == 1 and row[0].rstrip().endswith("-"),
              "list nodes cpu %r" % row)


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


if __name__ == "__main__":
    main([test_status_shows_accelerators, test_killed_host_leaves_its_slice])
