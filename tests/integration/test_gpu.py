#!/usr/bin/env python3
"""test_gpu.py -- NVIDIA GPU detection at worker start (worker/detect_gpu.c)
and per-GPU figures in the node reports (worker/gpu_monitor.c) on fake
hardware: a stub NVML library built by the tests (libmt_nvml_stub.so, fake
GPUs from MT_NVML_STUB_* env or a knob file read at every call), one
lacking symbols (libmt_nvml_partial.so) and a fake /proc/driver/nvidia tree.

Each test starts a real head and worker with `manta start`, passing the
NVML path and proc root through the env the worker inherits
(MANTA_NVML_PATH, MANTA_PROC_ROOT), and reads the offer back from
`manta status --format json`.
"""
import json
import os
import re
import subprocess
import time
import urllib.request

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir,
                     run, status, wait_until)

LIB = os.path.join(BIN, "..", "lib")
STUB = os.path.join(LIB, "libmt_nvml_stub.so")
PARTIAL = os.path.join(LIB, "libmt_nvml_partial.so")
TYPE = "manta.io/accelerator-type"


def start(tag, env, extra=()):
    """manta start --head with env added; RET (temp dir, address, node)."""
    port = free_port()
    d = new_dir(tag)
    e = dict(os.environ)
    for k in ("CUDA_VISIBLE_DEVICES", "MANTA_NVML_PATH", "MANTA_PROC_ROOT"):
        e.pop(k, None)
    e.update(env)
    p = subprocess.run([MANTA, "start", "--head", "--port", str(port),
                        "--node-ip", "127.0.0.1", "--temp-dir", d,
                        "--num-cpus", "4"] + list(extra) + FAST,
                       capture_output=True, text=True, timeout=60, env=e)
    check(p.returncode == 0, "start failed: %s%s" % (p.stdout, p.stderr))
    nodes = status(d)["nodes"]
    check(len(nodes) == 1, "nodes: %r" % nodes)
    return d, "127.0.0.1:%d" % port, nodes[0]


def stop(d):
    run(["stop", "--temp-dir", d], timeout=30)


def gpus(node):
    return node["resources_total"].get("GPU", 0)


def worker_log(d):
    with open(os.path.join(d, "logs", "worker.log")) as f:
        return f.read()


def fake_proc(models):
    """A fake /proc with driver/nvidia/gpus/<bus id>/information files."""
    root = new_dir("proc")
    for i, m in enumerate(models):
        g = os.path.join(root, "driver", "nvidia", "gpus",
                         "0000:%02x:00.0" % (0x10 + i))
        os.makedirs(g)
        with open(os.path.join(g, "information"), "w") as f:
            f.write("Model: \t\t %s\nIRQ:   \t\t 42\n"
                    "Device Minor: \t %d\n" % (m, i))
    return root


STUB8 = {"MANTA_NVML_PATH": STUB, "MT_NVML_STUB_COUNT": "8",
         "MT_NVML_STUB_NAME": "NVIDIA H200",
         "MT_NVML_STUB_MEM": str(141 << 30)}


def test_stub_nvml_eight_gpus():
    """8 fake H200s through NVML: GPU 8, type and memory labels; 4 tasks of
    0.25 GPU running at once share device 0; a 2-GPU task sees two
    distinct devices."""
    d, addr, n = start("gpu8", STUB8)
    check(gpus(n) == 8, "GPU offered: %r" % n["resources_total"])
    check(n["labels"].get(TYPE) == "H200", "labels: %r" % n["labels"])
    check(n["labels"].get("manta.io/gpu-memory-mib") == str(141 << 10),
          "labels: %r" % n["labels"])
    # Each quarter task holds its share until all four have started, so
    # they provably ran at the same time.
    gate = new_dir("gate")
    show = ("echo \"[$CUDA_VISIBLE_DEVICES]\"; touch %s/$$; "
            "while [ $(ls %s | wc -l) -lt 4 ]; do sleep 0.05; done" %
            (gate, gate))
    procs = [subprocess.Popen([MANTA, "submit", "--address", addr,
                               "--num-gpus", "0.25", "--", "sh", "-c",
                               show], stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    check(all(p.returncode == 0 for p in procs) and
          outs == ["[0]"] * 4, "4 x 0.25 GPU saw %r" % outs)
    p = run(["submit", "--address", addr, "--num-gpus", "2", "--", "sh",
             "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""], timeout=60)
    ids = p.stdout.strip()[1:-1].split(",")
    check(len(ids) == 2 and ids[0] != ids[1] and
          all(i in [str(k) for k in range(8)] for i in ids),
          "2-GPU task saw %r" % p.stdout)
    stop(d)


def test_cuda_visible_devices_limits_offer():
    """CUDA_VISIBLE_DEVICES=1,3 at worker start offers exactly 2; junk
    entries are warned about and ignored; "" and NoDevFiles offer none;
    tasks see the device indices behind their grant;
    --num-gpus still overrides."""
    d, addr, n = start("gpuvis", dict(STUB8, CUDA_VISIBLE_DEVICES="1,3"))
    check(gpus(n) == 2, "CUDA_VISIBLE_DEVICES=1,3 offers %r" % gpus(n))
    check(n["labels"].get(TYPE) == "H200", "labels: %r" % n["labels"])
    # Tasks get the devices behind the grant: 1 and 3, never 0 or 2.
    p = run(["submit", "--address", addr, "--num-gpus", "2", "--", "sh",
             "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""], timeout=60)
    check(p.stdout.strip() == "[1,3]", "2-GPU task saw %r" % p.stdout)
    p = run(["submit", "--address", addr, "--num-gpus", "0", "--", "sh",
             "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""], timeout=60)
    check(p.stdout.strip() == "[]", "0-GPU task saw %r" % p.stdout)
    stop(d)
    d, _, n = start("gpubad", dict(STUB8, CUDA_VISIBLE_DEVICES="2,GPU-x,9,2"))
    check(gpus(n) == 1, "2,GPU-x,9,2 offers %r" % gpus(n))
    log = worker_log(d)
    check("'GPU-x' is not a device index" in log and "repeated" in log and
          "lists 9" in log, "no warnings in the worker log:\n" + log)
    stop(d)
    for v in ("", "NoDevFiles", "-1"):
        d, _, n = start("gpunone", dict(STUB8, CUDA_VISIBLE_DEVICES=v))
        check(gpus(n) == 0 and TYPE not in n["labels"],
              "CUDA_VISIBLE_DEVICES=%r: %r" % (v, n))
        stop(d)
    d, _, n = start("gpuover", STUB8, ["--num-gpus", "3"])
    check(gpus(n) == 3, "--num-gpus 3 gave %r" % gpus(n))
    stop(d)


def test_missing_nvml_falls_back_to_procfs():
    """No NVML at the path: the fake procfs tree gives the GPUs (no memory
    label); with neither there are 0 GPUs and the worker starts fine."""
    root = fake_proc(["NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"])
    d, _, n = start("gpuproc", {"MANTA_NVML_PATH": "/nonexistent/libnvml.so",
                                "MANTA_PROC_ROOT": root})
    check(gpus(n) == 2, "procfs fallback offers %r" % n["resources_total"])
    check(n["labels"].get(TYPE) == "A100", "labels: %r" % n["labels"])
    check("NVML not available" in worker_log(d), "no fallback log line")
    stop(d)
    d, _, n = start("gpuzero", {"MANTA_NVML_PATH": "/nonexistent/libnvml.so",
                                "MANTA_PROC_ROOT": new_dir("emptyproc")})
    check(gpus(n) == 0 and TYPE not in n["labels"], "no GPUs: %r" % n)
    stop(d)


def test_broken_nvml_falls_back():
    """nvmlInit_v2 failing (9, driver not loaded) or a library without the
    symbols: a clear log line, then procfs."""
    root = fake_proc(["Tesla V100-SXM2-16GB"])
    d, _, n = start("gpuinit", dict(STUB8, MT_NVML_STUB_INIT="9",
                                    MANTA_PROC_ROOT=root))
    check(gpus(n) == 1 and n["labels"].get(TYPE) == "V100", "%r" % n)
    check("nvmlInit_v2 returned 9 (driver not loaded)" in worker_log(d),
          "no init failure line")
    stop(d)
    d, _, n = start("gpupart", {"MANTA_NVML_PATH": PARTIAL,
                                "MANTA_PROC_ROOT": new_dir("emptyproc")})
    check(gpus(n) == 0, "%r" % n)
    check("NVML library lacks nvmlShutdown" in worker_log(d),
          "no missing-symbol line")
    stop(d)


def test_hung_nvml_is_bounded():
    """An nvmlInit_v2 that never returns delays start-up by the NVML
    deadline (10 s) at most; then the worker uses procfs."""
    root = fake_proc(["NVIDIA L4"])
    t0 = time.monotonic()
    d, _, n = start("gpuhang", dict(STUB8, MT_NVML_STUB_HANG="600",
                                    MANTA_PROC_ROOT=root),
                    ["--start-timeout", "60"])
    took = time.monotonic() - t0
    check(took < 30, "start took %.1fs" % took)
    check(gpus(n) == 1 and n["labels"].get(TYPE) == "L4", "%r" % n)
    check("NVML did not answer within 10000 ms" in worker_log(d),
          "no time-out line")
    stop(d)


GIB = 1 << 30
UUIDS = ["GPU-aaaa1111-0000-4000-8000-000000000000",
         "GPU-bbbb2222-0000-4000-8000-000000000001",
         "GPU-bbbb3333-0000-4000-8000-000000000002",
         "GPU-cccc4444-0000-4000-8000-000000000003"]


def write_knobs(path, **kv):
    """The stub's knob file: KEY=VALUE lines, read at every NVML call."""
    with open(path + ".tmp", "w") as f:
        for k, v in kv.items():
            f.write("MT_NVML_STUB_%s=%s\n" % (k.upper(), v))
    os.replace(path + ".tmp", path)


def node_gpus(d):
    return status(d)["nodes"][0].get("gpus", [])


def wait_gpus(d, pred, what):
    """Poll status until pred(gpus) holds; RET those gpus."""
    got = []

    def ok():
        got[:] = node_gpus(d)
        return pred(got)
    wait_until(ok, 15, what)
    return got


# The cluster token of the head behind each dashboard port.
DASH_TOKENS = {}


def dash_open(dport, path):
    """GET path from the dashboard on dport, with the head's token."""
    req = urllib.request.Request(
        "http://127.0.0.1:%d%s" % (dport, path),
        headers={"Authorization": "Bearer " + DASH_TOKENS[dport]})
    return urllib.request.urlopen(req, timeout=10)


def metrics(dport, worker_dir=None):
    """/metrics as {(name, frozenset(labels)): value}: the head's, or with
    worker_dir the worker's own (its address in worker.metrics)."""
    if worker_dir:
        with open(os.path.join(worker_dir, "worker.metrics")) as f:
            url = "http://%s/metrics" % f.read().strip()
        with open(os.path.join(worker_dir, "token")) as f:
            req = urllib.request.Request(url, headers={
                "Authorization": "Bearer " + f.read().strip()})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read().decode()
    else:
        with dash_open(dport, "/metrics") as r:
            body = r.read().decode()
    out = {}
    for line in body.splitlines():
        m = re.match(r'^(\w+)\{(.*)\} (\S+)$', line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def test_gpu_figures_in_reports():
    """Memory used/total and utilization flow from NVML through the reports
    to status (JSON and text), the dashboard API, the head's and the
    worker's /metrics and list nodes;
    NOT_SUPPORTED reads unknown, never 0; a change shows up in a later
    report."""
    knobs = os.path.join(new_dir("knobs"), "nvml")
    write_knobs(knobs, used="%d,%d" % (GIB, 2 * GIB), util="37,ns")
    dport = free_port()
    d, addr, n = start("gpufig", dict(STUB8, MT_NVML_STUB_COUNT="2",
                                      MT_NVML_STUB_FILE=knobs),
                       ["--dashboard-port", str(dport)])
    with open(os.path.join(d, "token")) as f:
        DASH_TOKENS[dport] = f.read().strip()
    check(gpus(n) == 2, "GPU offered: %r" % n["resources_total"])
    g = wait_gpus(d, lambda g: len(g) == 2 and
                  g[0]["memory_used_bytes"] == GIB, "first GPU figures")
    check(g[0] == {"index": 0, "id": "0", "name": "NVIDIA H200",
                   "uuid": "GPU-5eed0000-0000-4000-8000-000000000000",
                   "memory_used_bytes": GIB,
                   "memory_total_bytes": 141 * GIB,
                   "utilization_percent": 37}, "gpu 0: %r" % g[0])
    check(g[1]["index"] == 1 and g[1]["memory_used_bytes"] == 2 * GIB and
          g[1]["memory_total_bytes"] == 141 * GIB and
          g[1]["utilization_percent"] is None, "gpu 1: %r" % g[1])
    text = run(["status", "--address", addr]).stdout
    check("gpu 0: NVIDIA H200, memory 1.0GiB/141.0GiB, utilization 37%"
          in text and
          "gpu 1: NVIDIA H200, memory 2.0GiB/141.0GiB, utilization ?" in text,
          "status text:\n" + text)
    with dash_open(dport, "/api/cluster_status") as r:
        api = json.loads(r.read().decode())
    check(api["nodes"][0]["gpus"][0]["utilization_percent"] == 37,
          "dashboard api: %r" % api["nodes"][0].get("gpus"))
    lst = json.loads(run(["list", "nodes", "--address", addr, "--format",
                          "json"]).stdout)
    check(lst["nodes"][0]["gpus"][1]["memory_used_bytes"] == 2 * GIB,
          "list nodes: %r" % lst["nodes"][0].get("gpus"))
    nid = n["node_id"]
    ms = metrics(dport)

    def metric(name, gpu):
        return ms.get((name, frozenset({("node_id", nid), ("gpu", gpu)})))
    check(metric("manta_gpu_memory_used_bytes", "0") == GIB and
          metric("manta_gpu_memory_total_bytes", "1") == 141 * GIB and
          metric("manta_gpu_utilization_ratio", "0") == 0.37 and
          metric("manta_gpu_utilization_ratio", "1") is None,
          "metrics: %r" % {k: v for k, v in ms.items() if "gpu" in k[0]})
    ms = metrics(None, worker_dir=d)  # the worker's own, from its monitor
    check(metric("manta_gpu_memory_used_bytes", "0") == GIB and
          metric("manta_gpu_memory_total_bytes", "1") == 141 * GIB and
          metric("manta_gpu_utilization_ratio", "0") == 0.37 and
          metric("manta_gpu_utilization_ratio", "1") is None,
          "worker metrics: %r" % {k: v for k, v in ms.items()
                                  if "gpu" in k[0]})
    # The stub's figures change while the worker runs.
    write_knobs(knobs, used="%d,ns" % (3 * GIB), util="80,5")
    g = wait_gpus(d, lambda g: g[0]["memory_used_bytes"] == 3 * GIB and
                  g[1]["utilization_percent"] == 5, "changed GPU figures")
    check(g[0]["utilization_percent"] == 80, "gpu 0: %r" % g[0])
    check(g[1]["memory_used_bytes"] is None and
          g[1]["memory_total_bytes"] == 141 * GIB, "gpu 1: %r" % g[1])
    ms = metrics(dport)
    check(metric("manta_gpu_memory_used_bytes", "1") is None and
          metric("manta_gpu_utilization_ratio", "1") == 0.05,
          "metrics after the change")
    stop(d)


def test_hung_nvml_poll_never_blocks():
    """NVML hanging after start-up stalls only the monitor thread: the
    worker keeps reporting (status answers, the node stays alive), the
    figures turn unknown once stale, and the worker still stops promptly."""
    knobs = os.path.join(new_dir("knobs"), "nvml")
    write_knobs(knobs, used=str(GIB))
    d, addr, n = start("gpupollhang", dict(STUB8, MT_NVML_STUB_COUNT="1",
                                           MT_NVML_STUB_FILE=knobs))
    wait_gpus(d, lambda g: g and g[0]["memory_used_bytes"] == GIB,
              "first figures")
    write_knobs(knobs, used=str(GIB), hang_mem="600")
    t0 = time.monotonic()
    g = wait_gpus(d, lambda g: g[0]["memory_used_bytes"] is None,
                  "stale figures to read unknown")
    check(g[0]["memory_total_bytes"] == 141 * GIB, "%r" % g)
    check(time.monotonic() - t0 < 12, "took %.1fs" % (time.monotonic() - t0))
    node = status(d)["nodes"][0]
    check(node["state"] == "ALIVE", "node %r" % node["state"])
    check(task_cvd(addr, 1) == "0", "a task still runs")
    check("NVML has not answered" in worker_log(d), "no stale warning")
    t0 = time.monotonic()
    stop(d)
    check(time.monotonic() - t0 < 10, "stop took %.1fs" %
          (time.monotonic() - t0))


def test_procfs_gpus_have_unknown_figures():
    """GPUs found through procfs are listed with unknown figures."""
    root = fake_proc(["NVIDIA L4"])
    d, _, n = start("gpuprocfig", {"MANTA_NVML_PATH": "/nonexistent/x.so",
                                   "MANTA_PROC_ROOT": root})
    g = wait_gpus(d, lambda g: len(g) == 1, "procfs GPU listed")
    check(g[0]["name"] == "NVIDIA L4" and g[0]["id"] == "0" and
          g[0]["memory_used_bytes"] is None and
          g[0]["memory_total_bytes"] is None and
          g[0]["utilization_percent"] is None, "%r" % g)
    stop(d)


def task_cvd(addr, n):
    """CUDA_VISIBLE_DEVICES an n-GPU task sees."""
    p = run(["submit", "--address", addr, "--num-gpus", str(n), "--", "sh",
             "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""], timeout=60)
    return p.stdout.strip()[1:-1]


def test_cuda_visible_devices_uuids():
    """CUDA_VISIBLE_DEVICES as UUIDs or unique prefixes maps to the NVML
    devices behind them; tasks get the identifiers the worker was started
    with; ambiguous and unknown prefixes are warned about and ignored."""
    env = dict(STUB8, MT_NVML_STUB_COUNT="4",
               MT_NVML_STUB_UUIDS=",".join(UUIDS))
    d, addr, n = start("gpuuuid", dict(
        env, CUDA_VISIBLE_DEVICES="GPU-bbbb3," + UUIDS[0]))
    check(gpus(n) == 2, "offered %r" % gpus(n))
    g = wait_gpus(d, lambda g: len(g) == 2, "uuid GPUs listed")
    check([(x["index"], x["id"], x["uuid"]) for x in g] ==
          [(2, "GPU-bbbb3", UUIDS[2]), (0, UUIDS[0], UUIDS[0])], "%r" % g)
    one = task_cvd(addr, 1)
    check(one in ("GPU-bbbb3", UUIDS[0]), "1-GPU task saw %r" % one)
    two = task_cvd(addr, 2).split(",")
    check(sorted(two) == sorted(["GPU-bbbb3", UUIDS[0]]),
          "2-GPU task saw %r" % two)
    check(task_cvd(addr, 0) == "", "0-GPU task")
    text = run(["status", "--address", addr]).stdout
    check("gpu GPU-bbbb3 (index 2): NVIDIA H200" in text, "text:\n" + text)
    stop(d)
    d, addr, n = start("gpuuuidbad", dict(
        env, CUDA_VISIBLE_DEVICES="GPU-bbbb,GPU-dddd,GPU-cccc,3"))
    check(gpus(n) == 1, "offered %r" % gpus(n))
    log = worker_log(d)
    check("GPU-bbbb matches more than one GPU" in log and
          "GPU-dddd, which matches no GPU UUID" in log and
          "names GPU 3 twice" in log, "warnings:\n" + log)
    check(task_cvd(addr, 1) == "GPU-cccc", "task of the cccc GPU")
    stop(d)


def test_cuda_visible_devices_mig():
    """MIG identifiers are offered one GPU each and reach tasks verbatim;
    their figures are unknown."""
    mig = ["MIG-GPU-%s/1/0" % UUIDS[1][4:],
           "MIG-5eedf00d-1111-5222-8333-444455556666"]
    d, addr, n = start("gpumig", dict(
        STUB8, MT_NVML_STUB_COUNT="2", MT_NVML_STUB_UUIDS=",".join(UUIDS),
        CUDA_VISIBLE_DEVICES=",".join(mig)))
    check(gpus(n) == 2 and n["labels"].get(TYPE) == "H200", "%r" % n)
    g = wait_gpus(d, lambda g: len(g) == 2, "MIG GPUs listed")
    check([(x["index"], x["id"], x["memory_used_bytes"],
            x["utilization_percent"]) for x in g] ==
          [(-1, mig[0], None, None), (-1, mig[1], None, None)], "%r" % g)
    check(task_cvd(addr, 1) in mig, "1-GPU task")
    stop(d)
    # No GPU on the node: MIG entries are not offered.
    d, _, n = start("gpumignone", {"MANTA_NVML_PATH": "/nonexistent/x.so",
                                   "MANTA_PROC_ROOT": new_dir("emptyproc"),
                                   "CUDA_VISIBLE_DEVICES": mig[1]})
    check(gpus(n) == 0 and "has no GPU" in worker_log(d), "%r" % n)
    stop(d)


if __name__ == "__main__":
    main([test_stub_nvml_eight_gpus, test_cuda_visible_devices_limits_offer,
          test_missing_nvml_falls_back_to_procfs, test_broken_nvml_falls_back,
          test_hung_nvml_is_bounded, test_gpu_figures_in_reports,
          test_hung_nvml_poll_never_blocks,
          test_procfs_gpus_have_unknown_figures,
          test_cuda_visible_devices_uuids, test_cuda_visible_devices_mig])
