#!/usr/bin/env python3
"""test_gpu.py -- NVIDIA GPU detection at worker start (worker/detect_gpu.c)
on fake hardware: a stub NVML library built by the tests
(libmt_nvml_stub.so, fake GPUs from MT_NVML_STUB_* env), one lacking
symbols (libmt_nvml_partial.so) and a fake /proc/driver/nvidia tree.

Each test starts a real head and worker with `manta start`, passing the
NVML path and proc root through the env the worker inherits
(MANTA_NVML_PATH, MANTA_PROC_ROOT), and reads the offer back from
`manta status --format json`.
"""
import os
import subprocess
import time

from harness import (BIN, FAST, MANTA, check, free_port, main, new_dir,
                     run, status)

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
                        "--num-cpus", "2"] + list(extra) + FAST,
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
    """8 fake H200s through NVML: GPU 8, type and memory labels."""
    d, addr, n = start("gpu8", STUB8)
    check(gpus(n) == 8, "GPU offered: %r" % n["resources_total"])
    check(n["labels"].get(TYPE) == "H200", "labels: %r" % n["labels"])
    check(n["labels"].get("manta.io/gpu-memory-mib") == str(141 << 10),
          "labels: %r" % n["labels"])
    p = run(["submit", "--address", addr, "--num-gpus", "2", "--", "sh",
             "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""], timeout=60)
    check(p.stdout.strip().count(",") == 1, "2-GPU task saw %r" % p.stdout)
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


if __name__ == "__main__":
    main([test_stub_nvml_eight_gpus, test_cuda_visible_devices_limits_offer,
          test_missing_nvml_falls_back_to_procfs, test_broken_nvml_falls_back,
          test_hung_nvml_is_bounded])
