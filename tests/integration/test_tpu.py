"""test_tpu.py -- TPU detection on real worker processes over fake hardware.

Each worker gets its own fake root (dev/accel0..3 plain files and a Google
PCI device 0x1ae0/0x005e = v4 under sys/bus/pci/devices) via --dev-root and
--sys-root. Two workers form one v4-16 slice (2 hosts x 4 chips): worker 0
takes its identity from TPU_* env, worker 1 from a loopback HTTP metadata
server that answers only with the Metadata-Flavor: Google header. Status
must show the chips, the accelerator-type resource, the slice resource, the
head marker on worker 0 only, and the manta.io/tpu-* labels. Two more
workers point their metadata URL at a dead port and at a server that never
answers: they start promptly (the metadata budget is 1 s) with chips and no
identity. A --labels / --resources given by the user wins.
"""
import http.server
import os
import socket
import subprocess
import threading
import time

from harness import FAST, MANTA, check, free_port, main, new_dir, status

TPU_ENV = ("TPU_ACCELERATOR_TYPE", "TPU_NAME", "TPU_WORKER_ID", "TPU_TOPOLOGY",
           "TPU_SKIP_MDS_QUERY")
ATTRS = {
    "accelerator-type": "v4-16",
    "instance-id": "slice-a",
    "agent-worker-number": "1",
    "tpu-env": "ACCELERATOR_TYPE: 'v4-16'\nTOPOLOGY: '2x2x2'\n",
}
PREFIX = "/computeMetadata/v1/instance/attributes/"


def fake_root(tag, pci_device="0x005e", vfio=False):
    """A fake 4-chip TPU host in a new temp dir, for --dev-root and
    --sys-root: dev/accel0..3 (v2-v4), or with vfio dev/vfio/0..3 and
    dev/vfio/vfio with each IOMMU group's device in sysfs (v5e and later),
    and a Google PCI device (vendor 0x1ae0) of id pci_device (0x005e: v4;
    0x0063: v5e)."""
    d = new_dir("tpu-" + tag)
    pcis = [os.path.join(d, "sys", "bus", "pci", "devices", "0000:00:04.0")]
    if vfio:
        os.makedirs(os.path.join(d, "dev", "vfio"))
        names = ["vfio/%d" % i for i in range(4)] + ["vfio/vfio"]
        pcis = [os.path.join(d, "sys", "kernel", "iommu_groups", str(i),
                             "devices", "0000:00:%02x.0" % (4 + i))
                for i in range(4)]
    else:
        os.makedirs(os.path.join(d, "dev"))
        names = ["accel%d" % i for i in range(4)]
    for n in names:
        open(os.path.join(d, "dev", n), "w").close()
    for pci in pcis:
        os.makedirs(pci)
        with open(os.path.join(pci, "vendor"), "w") as f:
            f.write("0x1ae0\n")
        with open(os.path.join(pci, "device"), "w") as f:
            f.write(pci_device + "\n")
    return d


class Metadata(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        key = self.path[len(PREFIX):] if self.path.startswith(PREFIX) else ""
        if self.headers.get("Metadata-Flavor") != "Google":
            self.send_response(403)
            self.end_headers()
            return
        if key not in ATTRS:
            self.send_response(404)
            self.end_headers()
            return
        body = ATTRS[key].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def start_worker(addr, ip, root, env_extra=None, extra=()):
    env = {k: v for k, v in os.environ.items() if k not in TPU_ENV}
    env.update(env_extra or {})
    d = new_dir("w" + ip.split(".")[-1])
    args = [MANTA, "start", "--address", addr, "--node-ip", ip,
            "--temp-dir", d, "--num-cpus", "1", "--memory", "1GiB",
            "--object-store-memory", "64MiB", "--num-executors", "1",
            "--dev-root", root, "--sys-root", root,
            "--report-period-ms", "200"] + list(extra)
    t0 = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, timeout=30,
                       env=env)
    dt = time.monotonic() - t0
    check(p.returncode == 0, "start %s failed:\n%s%s" % (ip, p.stdout,
                                                        p.stderr))
    return d, dt


def start_head():
    port = free_port()
    d = new_dir("head")
    p = subprocess.run([MANTA, "start", "--head", "--no-worker", "--port",
                        str(port), "--node-ip", "127.0.0.1", "--temp-dir", d]
                       + FAST, capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "head: %s%s" % (p.stdout, p.stderr))
    return "127.0.0.1:%d" % port, d


def by_ip(st):
    return {n["node_ip"]: n for n in st["nodes"] if n["state"] == "ALIVE"}


def test_slice_from_env_and_metadata():
    addr, hd = start_head()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Metadata)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        start_worker(addr, "127.0.0.2", fake_root("a0"), {
            "TPU_ACCELERATOR_TYPE": "v4-16", "TPU_NAME": "slice-a",
            "TPU_WORKER_ID": "0", "TPU_TOPOLOGY": "2x2x2"},
            ["--tpu-metadata-url", ""])
        start_worker(addr, "127.0.0.3", fake_root("a1"), None, [
            "--tpu-metadata-url",
            "http://127.0.0.1:%d%s" % (srv.server_address[1], PREFIX)])
    finally:
        srv.shutdown()
    nodes = by_ip(status(hd))
    check(set(nodes) == {"127.0.0.2", "127.0.0.3"}, "nodes %s" % nodes)
    for ip, wid in (("127.0.0.2", "0"), ("127.0.0.3", "1")):
        n = nodes[ip]
        r, lab = n["resources_total"], n["labels"]
        check(r.get("TPU") == 4, "%s TPU %r" % (ip, r))
        check(r.get("accelerator_type:TPU-V4") == 1, "%s type %r" % (ip, r))
        check(r.get("slice-a") == 1, "%s slice resource %r" % (ip, r))
        want = {"manta.io/accelerator-type": "TPU-V4",
                "manta.io/tpu-slice-name": "slice-a",
                "manta.io/tpu-worker-id": wid,
                "manta.io/tpu-pod-type": "v4-16",
                "manta.io/tpu-topology": "2x2x2"}
        for k, v in want.items():
            check(lab.get(k) == v, "%s label %s=%r, want %r" % (
                ip, k, lab.get(k), v))
    check(nodes["127.0.0.2"]["resources_total"].get("TPU-v4-16-head") == 1,
          "head marker on worker 0")
    check("TPU-v4-16-head" not in nodes["127.0.0.3"]["resources_total"],
          "no head marker on worker 1")
    tot = status(hd)["resources_total"]
    check(tot.get("TPU") == 8, "cluster TPU %r" % tot)


def test_metadata_down_or_slow_starts_promptly():
    addr, hd = start_head()
    dead = free_port()
    slow = socket.socket()
    slow.bind(("127.0.0.1", 0))
    slow.listen(8)                      # accepts in the kernel, never answers
    try:
        _, dt_dead = start_worker(addr, "127.0.0.4", fake_root("dead"), None, [
            "--tpu-metadata-url", "http://127.0.0.1:%d/" % dead,
            "--labels", "manta.io/tpu-slice-name=mine",
            "--resources", '{"TPU": 2}'])
        _, dt_slow = start_worker(addr, "127.0.0.5", fake_root("slow"), None, [
            "--tpu-metadata-url",
            "http://127.0.0.1:%d/" % slow.getsockname()[1]])
    finally:
        slow.close()
    print("start with metadata down %.2fs, slow %.2fs" % (dt_dead, dt_slow))
    check(dt_dead < 2, "dead metadata: start took %.1fs" % dt_dead)
    check(dt_slow < 3, "slow metadata: start took %.1fs" % dt_slow)
    nodes = by_ip(status(hd))
    d, s = nodes["127.0.0.4"], nodes["127.0.0.5"]
    check(d["resources_total"].get("TPU") == 2, "--resources wins %r" %
          d["resources_total"])
    check(d["labels"].get("manta.io/tpu-slice-name") == "mine",
          "--labels wins %r" % d["labels"])
    check(s["resources_total"].get("TPU") == 4, "slow: chips %r" %
          s["resources_total"])
    check(s["resources_total"].get("accelerator_type:TPU-V4") == 1,
          "generation from the PCI id %r" % s["resources_total"])
    check("manta.io/tpu-worker-id" not in s["labels"] and
          "manta.io/tpu-pod-type" not in s["labels"],
          "no identity without metadata %r" % s["labels"])
    check(not any(k.endswith("-head") for k in s["resources_total"]),
          "no head marker without identity")


if __name__ == "__main__":
    main([test_slice_from_env_and_metadata,
          test_metadata_down_or_slow_starts_promptly])
