"""test_k8s.py -- the Kubernetes manifests in deploy/k8s/ (docs/deploy.md,
"Kubernetes").

Every overlay renders with `kubectl kustomize` into the objects it should
have. The checks on them: images, commands, probes, resources,
terminationGracePeriodSeconds, the token Secret mounted where
MANTA_AUTH_TOKEN_FILE points, Services whose selectors pick the pods they
serve on ports that are the ones the daemons are told to listen on, what
each worker offers against its container's limits, the GPU and TPU
requests and nodeSelectors, and the multi-host slice's StatefulSet,
headless Service and stable host names.

Then the pods of overlay `all` run here, as processes with the command,
args and env Kubernetes would give each pod: env and $(VAR) expanded as
the kubelet does, downward-API fieldRefs resolved per pod (name, pod IP,
the StatefulSet ordinal label), volumes mapped to temp dirs, the
Services' names to the simulated pods' addresses (each pod has its own
127.0.0.x; listening ports are free ones), and the devices a node would
give the container faked: a stub NVML with the pod's nvidia.com/gpu count,
a fake v5e host (test_tpu.fake_root, VFIO) for each TPU pod. The head runs
on a redis-server of its own. Every worker must register with what its pod
is meant to offer: the multi-host pods the same slice name and each its
own worker id. Every readiness and liveness probe passes (and a worker's
readiness fails for a node the head does not have), and SIGTERM stops
every pod with exit 0 within its terminationGracePeriodSeconds.

Exits 77 (skipped) when kubectl is missing.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import yaml

from harness import (BIN, TOKEN, check, free_port, main, new_dir, status,
                     wait_until)
from test_tpu import fake_root

K8S = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "deploy", "k8s")
LIB = os.path.join(BIN, "..", "lib")
SKIPPED = []

BASE = {("Deployment", "manta-head"), ("Service", "manta-head"),
        ("Service", "manta-dashboard"), ("Deployment", "manta-redis"),
        ("Service", "manta-redis"), ("NetworkPolicy", "manta-redis"),
        ("Deployment", "manta-worker-cpu")}
POOLS = {"gpu": {("Deployment", "manta-worker-gpu")},
         "tpu-single-host": {("Deployment", "manta-worker-tpu")},
         "tpu-multi-host": {("StatefulSet", "manta-tpu-slice"),
                            ("Service", "manta-tpu-slice")}}
OVERLAYS = {"cpu": BASE, "all": BASE.union(*POOLS.values())}
OVERLAYS.update({k: BASE | v for k, v in POOLS.items()})
IMAGES = {"manta": "manta:0.1.0", "redis": "redis:7.0"}
# The flag each named container port is given to (manta containers).
PORT_FLAGS = {"rpc": "--port", "dashboard": "--dashboard-port",
              "metrics": "--metrics-port"}
TPU_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPO_LABEL = "cloud.google.com/gke-tpu-topology"
POD_INDEX = "apps.kubernetes.io/pod-index"

_rendered = {}


def kubectl():
    return shutil.which("kubectl")


def render(overlay):
    """The overlay's objects, parsed; {(kind, name): object}."""
    if overlay not in _rendered:
        p = subprocess.run([kubectl(), "kustomize",
                            os.path.join(K8S, "overlays", overlay)],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "kubectl kustomize %s: %s" % (overlay,
                                                               p.stderr))
        objs = [o for o in yaml.safe_load_all(p.stdout) if o]
        _rendered[overlay] = {(o["kind"], o["metadata"]["name"]): o
                              for o in objs}
        check(len(_rendered[overlay]) == len(objs),
              "%s: two objects of one kind and name" % overlay)
    return _rendered[overlay]


# ---- quantities and args ------------------------------------------------

def k8s_qty(q):
    """A Kubernetes quantity ("4", "250m", "16Gi") as a number."""
    m = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?", str(q))
    check(m, "quantity %r" % q)
    mult = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
            "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40}
    return float(m.group(1)) * mult[m.group(2)]


def manta_bytes(s):
    m = re.fullmatch(r"(\d+)(KiB|MiB|GiB|TiB)?", s)
    check(m, "size %r" % s)
    return int(m.group(1)) * {None: 1, "KiB": 2 ** 10, "MiB": 2 ** 20,
                              "GiB": 2 ** 30, "TiB": 2 ** 40}[m.group(2)]


def flags(args):
    """--flag=value args as {flag: value}; every arg must be one."""
    out = {}
    for a in args:
        check(isinstance(a, str) and re.fullmatch(r"--[a-z-]+=.*", a),
              "arg %r is not --flag=value" % (a,))
        k, v = a.split("=", 1)
        out[k] = v
    return out


def env_of(c):
    return {e["name"]: e for e in c.get("env", [])}


# ---- the rendered objects -----------------------------------------------

def workloads(objs):
    return {k: o for k, o in objs.items()
            if k[0] in ("Deployment", "StatefulSet")}


def check_container(name, spec, c):
    what = "%s/%s" % (name, c["name"])
    image = c["image"].split(":")[0]
    check(c["image"] == IMAGES.get(image), "%s: image %s" % (what,
                                                              c["image"]))
    check(c.get("readinessProbe") and c.get("livenessProbe"),
          "%s: probes" % what)
    req, lim = c["resources"]["requests"], c["resources"]["limits"]
    check("cpu" in req and "memory" in req and "memory" in lim,
          "%s: resources %r" % (what, c["resources"]))
    for e in c.get("env", []):
        check(isinstance(e.get("value", ""), str),
              "%s: env %s is not a string" % (what, e["name"]))
    if image != "manta":
        return
    check(c["command"][0] in ("/usr/bin/manta-head", "/usr/bin/manta-worker"),
          "%s: command %r" % (what, c["command"]))
    f = flags(c["args"])
    env = env_of(c)
    # The token: a Secret volume mounted where MANTA_AUTH_TOKEN_FILE is.
    path = env["MANTA_AUTH_TOKEN_FILE"]["value"]
    check(f["--token-file"] == "$(MANTA_AUTH_TOKEN_FILE)",
          "%s: --token-file %s" % (what, f["--token-file"]))
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = [m for m in c["volumeMounts"]
              if vols[m["name"]].get("secret", {}).get("secretName") ==
              "manta-token"]
    check(len(mounts) == 1 and path == mounts[0]["mountPath"] + "/token",
          "%s: token at %s, mounted %r" % (what, path, mounts))
    for p in c["ports"]:
        check(f[PORT_FLAGS[p["name"]]] == str(p["containerPort"]),
              "%s: port %s is not %s" % (what, p, PORT_FLAGS[p["name"]]))


def check_workload(key, o, objs):
    what = "%s/%s" % key
    spec = o["spec"]["template"]["spec"]
    labels = o["spec"]["template"]["metadata"]["labels"]
    sel = o["spec"]["selector"]["matchLabels"]
    check(sel.items() <= labels.items(), "%s: selector %r" % (what, sel))
    check(labels.get("app.kubernetes.io/name") == "manta" and
          labels.get("app.kubernetes.io/component") in
          ("head", "redis", "worker"), "%s: labels %r" % (what, labels))
    check(spec.get("terminationGracePeriodSeconds", 0) >= 30,
          "%s: terminationGracePeriodSeconds" % what)
    check(spec.get("enableServiceLinks") is False,
          "%s: service links would add MANTA_* env" % what)
    for c in spec["containers"]:
        check_container(key[1], spec, c)
    if labels["app.kubernetes.io/component"] == "worker":
        check_worker(what, o, spec, objs)


def check_worker(what, o, spec, objs):
    c = spec["containers"][0]
    f, env = flags(c["args"]), env_of(c)
    lim, req = c["resources"]["limits"], c["resources"]["requests"]
    check(lim == req, "%s: requests %r != limits %r" % (what, req, lim))
    head = objs[("Service", "manta-head")]["spec"]["ports"][0]["port"]
    check(env["MANTA_HEAD_ADDRESS"]["value"] == "manta-head:%d" % head and
          f["--address"] == "$(MANTA_HEAD_ADDRESS)",
          "%s: head address %r" % (what, env["MANTA_HEAD_ADDRESS"]))
    check(f["--node-ip"] == "$(POD_IP)" and env["POD_IP"]["valueFrom"]
          ["fieldRef"]["fieldPath"] == "status.podIP", "%s: node ip" % what)
    check(f["--node-id"] == "$(POD_NAME)", "%s: node id" % what)
    check(float(f["--num-cpus"]) == k8s_qty(lim["cpu"]),
          "%s: --num-cpus %s, limit %s" % (what, f["--num-cpus"], lim["cpu"]))
    osm = manta_bytes(f["--object-store-memory"])
    check(manta_bytes(f["--memory"]) + osm + 2 ** 30 <=
          k8s_qty(lim["memory"]), "%s: memory over the limit" % what)
    shm = [m for m in c["volumeMounts"] if m["mountPath"] == "/dev/shm"]
    vol = {v["name"]: v for v in spec["volumes"]}[shm[0]["name"]]
    check(vol["emptyDir"]["medium"] == "Memory" and
          k8s_qty(vol["emptyDir"]["sizeLimit"]) == osm,
          "%s: /dev/shm %r" % (what, vol))
    live = c["livenessProbe"]["tcpSocket"]["port"]
    check(live == "rpc", "%s: liveness port %r" % (what, live))
    check("CUDA_VISIBLE_DEVICES" not in env,
          "%s: CUDA_VISIBLE_DEVICES would limit the GPUs offered" % what)
    if "nvidia.com/gpu" in lim:
        check("--num-gpus" not in f, "%s: --num-gpus" % what)
        check("utility" in env["NVIDIA_DRIVER_CAPABILITIES"]["value"],
              "%s: no NVML without the utility capability" % what)
    if "google.com/tpu" in lim:
        check_tpu(what, o, spec, env, objs)


def check_tpu(what, o, spec, env, objs):
    """The slice identity agrees with the node pool the pod lands on."""
    sel = spec["nodeSelector"]
    chips = int(spec["containers"][0]["resources"]["limits"]["google.com/tpu"])
    topo = sel[TOPO_LABEL]
    total = 1
    for d in topo.split("x"):
        total *= int(d)
    hosts = total // chips
    check(sel[TPU_LABEL] == "tpu-v5-lite-podslice" and
          env["TPU_ACCELERATOR_TYPE"]["value"] == "v5litepod-%d" % total,
          "%s: accelerator %r vs %r" % (what, sel, env))
    check(env["TPU_TOPOLOGY"]["value"] == topo, "%s: topology" % what)
    check(env["TPU_SKIP_MDS_QUERY"]["value"] == "true", "%s: mds" % what)
    if o["kind"] == "Deployment":
        check(hosts == 1 and env["TPU_WORKER_ID"]["value"] == "0" and
              env["TPU_WORKER_HOSTNAMES"]["value"] == "localhost" and
              env["TPU_NAME"]["value"] == "$(POD_NAME)",
              "%s: single-host identity" % what)
        return
    check(o["spec"]["replicas"] == hosts, "%s: %d hosts, %d replicas" % (
        what, hosts, o["spec"]["replicas"]))
    name, svc_name = o["metadata"]["name"], o["spec"]["serviceName"]
    svc = objs[("Service", svc_name)]["spec"]
    check(svc["clusterIP"] == "None" and svc["publishNotReadyAddresses"],
          "%s: headless Service %r" % (what, svc))
    check(o["spec"]["podManagementPolicy"] == "Parallel", "%s: Parallel" %
          what)
    check("$(" not in env["TPU_NAME"]["value"],
          "%s: one slice name for every host" % what)
    check(env["TPU_WORKER_HOSTNAMES"]["value"] == ",".join(
        "%s-%d.%s" % (name, i, svc_name) for i in range(hosts)),
        "%s: hostnames %r" % (what, env["TPU_WORKER_HOSTNAMES"]))
    check(env["TPU_WORKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"] ==
          "metadata.labels['%s']" % POD_INDEX, "%s: worker id" % what)
    aff = spec["affinity"]["podAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"][0]
    check(aff["topologyKey"] == "cloud.google.com/gke-nodepool" and
          aff["labelSelector"]["matchLabels"].items() <=
          spec_labels(o).items(), "%s: one node pool %r" % (what, aff))


def spec_labels(o):
    return o["spec"]["template"]["metadata"]["labels"]


def check_service(key, svc, objs):
    """The Service selects exactly one workload's pods, on ports that
    workload's containers declare."""
    sel = svc["spec"]["selector"]
    hits = [o for o in workloads(objs).values()
            if sel.items() <= spec_labels(o).items()]
    check(len(hits) == 1, "Service %s selects %d workloads" % (key[1],
                                                                len(hits)))
    ports = {p["name"]: p["containerPort"] for c in
             hits[0]["spec"]["template"]["spec"]["containers"]
             for p in c["ports"]}
    for p in svc["spec"]["ports"]:
        check(p["targetPort"] in ports and
              (p["port"] == ports[p["targetPort"]]),
              "Service %s port %r, pods have %r" % (key[1], p, ports))


def test_overlays_render():
    if not kubectl():
        SKIPPED.append("kubectl")
        print("SKIP: no kubectl (deploy/install-deps.sh installs "
              "kubernetes-client)")
        return
    for overlay, want in sorted(OVERLAYS.items()):
        objs = render(overlay)
        check(set(objs) == want, "%s: objects %s, want %s" % (
            overlay, sorted(set(objs) ^ want), sorted(want)))
        for key, o in workloads(objs).items():
            check_workload(key, o, objs)
        for key, o in objs.items():
            if key[0] == "Service":
                check_service(key, o, objs)
    objs = render("all")
    head = objs[("Deployment", "manta-head")]
    f = flags(head["spec"]["template"]["spec"]["containers"][0]["args"])
    check(head["spec"]["replicas"] == 1 and
          head["spec"]["strategy"]["type"] == "Recreate",
          "one head at a time on one Redis")
    check(f["--node-ip"] == "0.0.0.0" and f["--dashboard-host"] == "0.0.0.0",
          "head binds all (Services, port-forward): %r" % f)
    redis = objs[("Service", "manta-redis")]["spec"]["ports"][0]["port"]
    check(f["--storage"] == "redis://manta-redis:%d" % redis,
          "--storage %s" % f["--storage"])
    np = objs[("NetworkPolicy", "manta-redis")]["spec"]
    check(np["podSelector"]["matchLabels"].items() <=
          spec_labels(objs[("Deployment", "manta-redis")]).items() and
          np["ingress"][0]["from"][0]["podSelector"]["matchLabels"].items()
          <= spec_labels(head).items(), "only the head reaches Redis")


# ---- the pods, run here -------------------------------------------------

class Pod:
    """One simulated pod of a workload: its IP, name, labels, the free
    ports standing in for its container ports, its volumes' dirs."""

    def __init__(self, o, index, ip):
        self.o = o
        self.kind = o["kind"]
        base = o["metadata"]["name"]
        self.name = ("%s-%d" % (base, index) if self.kind == "StatefulSet"
                     else "%s-5c9f8d7b6-sim%d" % (base, index))
        self.labels = dict(spec_labels(o))
        if self.kind == "StatefulSet":
            self.labels[POD_INDEX] = str(index)
        self.ip = ip
        self.spec = o["spec"]["template"]["spec"]
        self.c = self.spec["containers"][0]
        self.ports = {p["containerPort"]: free_port(ip)
                      for p in self.c["ports"]}
        self.dirs = {}
        for m in self.c["volumeMounts"]:
            if m["mountPath"] == "/dev/shm":
                continue
            d = self.dirs[m["mountPath"]] = new_dir("pod-" + m["name"])
            vol = {v["name"]: v for v in self.spec["volumes"]}[m["name"]]
            if "secret" in vol:
                with open(os.path.join(d, "token"), "w") as fh:
                    fh.write(TOKEN + "\n")
        self.proc = None

    def field(self, path):
        if path == "metadata.name":
            return self.name
        if path == "status.podIP":
            return self.ip
        m = re.fullmatch(r"metadata\.labels\['(.+)'\]", path)
        check(m, "fieldRef %s" % path)
        return self.labels.get(m.group(1), "")

    def map(self, v, services):
        """What a value in the pod means here: Service addresses and the
        pod's own 127.0.0.1:PORT to the simulated ones, 0.0.0.0 to the
        pod's IP, a mounted path to its dir."""
        for addr, real in services.items():
            v = v.replace(addr, real)
        for port, real in self.ports.items():
            v = v.replace("127.0.0.1:%d" % port, "%s:%d" % (self.ip, real))
        if v == "0.0.0.0":
            return self.ip
        for path, d in self.dirs.items():
            if v.startswith(path):
                return d + v[len(path):]
        return v

    def env(self, services):
        """The container's env as the kubelet makes it: in order, each
        value's $(VAR) expanded from the entries before it."""
        env = {}
        for e in self.c.get("env", []):
            if "valueFrom" in e:
                v = self.field(e["valueFrom"]["fieldRef"]["fieldPath"])
            else:
                v = expand(e["value"], env)
            env[e["name"]] = self.map(v, services)
        return env

    def argv(self, env, services):
        out = [os.path.join(BIN, os.path.basename(self.c["command"][0]))]
        for a in self.c["args"]:
            k, v = expand(a, env).split("=", 1)
            v = self.map(v, services)
            if k in PORT_FLAGS.values():
                v = str(self.ports[int(v)])
            out.append("%s=%s" % (k, v))
        return out


def expand(s, env):
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: env.get(m.group(1), m.group(0)), s)


def hardware(pod):
    """The env and args a node's devices would give this pod: its GPUs as
    a stub NVML shows them, its TPU host as a fake VFIO tree; nothing of
    this machine's own."""
    lim = pod.c["resources"]["limits"]
    env = {"MANTA_NVML_PATH": "/nonexistent/libnvidia-ml.so.1"}
    root = empty = new_dir("nohw")
    if "nvidia.com/gpu" in lim:
        env = {"MANTA_NVML_PATH": os.path.join(LIB, "libmt_nvml_stub.so"),
               "MT_NVML_STUB_COUNT": str(lim["nvidia.com/gpu"]),
               "MT_NVML_STUB_NAME": "NVIDIA H200"}
    if "google.com/tpu" in lim:
        check(lim["google.com/tpu"] == "4", "fake hosts have 4 chips")
        root = fake_root(pod.name, pci_device="0x0063", vfio=True)
    return env, ["--dev-root=" + root, "--sys-root=" + root,
                 "--proc-root=" + empty]


def start(pod, services, extra_env, extra_args):
    env = pod.env(services)
    argv = pod.argv(env, services) + extra_args
    env.update(extra_env)
    env["PATH"] = BIN + ":/usr/bin:/bin"
    pod.run_env = env
    pod.log = os.path.join(new_dir("log"), "stderr")
    with open(pod.log, "w") as log:
        pod.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=log)


def log_tail(pod):
    with open(pod.log) as f:
        return f.read()[-2000:]


def probe(pod, which, env_extra=None):
    """Run the container's probe as the kubelet would; RET True if it
    passed."""
    p = pod.c[which]
    if "tcpSocket" in p:
        port = {q["name"]: q["containerPort"] for q in pod.c["ports"]}[
            p["tcpSocket"]["port"]]
        try:
            socket.create_connection((pod.ip, pod.ports[port]), 2).close()
            return True
        except OSError:
            return False
    env = dict(pod.run_env, **(env_extra or {}))
    cmd = [pod.map(a, {}) for a in p["exec"]["command"]]
    r = subprocess.run(cmd, env=env, capture_output=True, timeout=30)
    return r.returncode == 0


def start_redis():
    port, d = free_port(), new_dir("redis")
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind",
                          "127.0.0.1", "--save", "", "--appendonly", "no",
                          "--dir", d], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)

    def up():
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return True
        except OSError:
            return False
    wait_until(up, 10, "redis-server up")
    return p, port


def test_pods_run_here():
    if not kubectl():
        return
    objs = render("all")
    redis, rport = start_redis()
    pods = []
    try:
        head = Pod(objs[("Deployment", "manta-head")], 0, "127.0.0.1")
        hsvc = objs[("Service", "manta-head")]["spec"]["ports"][0]["port"]
        services = {
            "manta-redis:%d" % objs[("Service", "manta-redis")]["spec"]
            ["ports"][0]["port"]: "127.0.0.1:%d" % rport,
            "manta-head:%d" % hsvc: "127.0.0.1:%d" % head.ports[hsvc]}
        start(head, services, {}, [])
        pods.append(head)
        ip = 60
        for key, o in sorted(workloads(objs).items()):
            if spec_labels(o)["app.kubernetes.io/component"] != "worker":
                continue
            for i in range(o["spec"]["replicas"]):
                ip += 1
                pod = Pod(o, i, "127.0.0.%d" % ip)
                env, args = hardware(pod)
                # One executor: the pods' CPU counts are not this machine's.
                start(pod, services, env, args + ["--num-executors=1"])
                pods.append(pod)
        for pod in pods:
            wait_until(lambda: probe(pod, "readinessProbe") or
                       pod.proc.poll() is not None, 30,
                       "%s ready" % pod.name)
            check(pod.proc.poll() is None, "%s exited: %s" % (pod.name,
                                                               log_tail(pod)))
            check(probe(pod, "livenessProbe"), "%s live" % pod.name)
        for pod in pods[1:]:
            check(not probe(pod, "readinessProbe", {"POD_NAME": "nope"}),
                  "%s: ready as a node the head does not list" % pod.name)
        check_offers(pods, status(address=services["manta-head:%d" % hsvc]))
        for pod in reversed(pods):
            t0 = time.monotonic()
            pod.proc.send_signal(signal.SIGTERM)
            rc = pod.proc.wait(pod.spec["terminationGracePeriodSeconds"])
            check(rc == 0, "%s: SIGTERM exit %d: %s" % (pod.name, rc,
                                                         log_tail(pod)))
            print("%s stopped in %.1fs" % (pod.name, time.monotonic() - t0))
    finally:
        for pod in pods:
            if pod.proc.poll() is None:
                pod.proc.kill()
            pod.proc.wait()
        redis.kill()
        redis.wait()


def check_offers(pods, st):
    """Each worker offers what its pod is meant to: its container's CPUs,
    GPUs and TPU chips, and on TPU hosts the slice identity."""
    nodes = {n["node_id"]: n for n in st["nodes"] if n["state"] == "ALIVE"}
    workers = [p for p in pods
               if p.labels["app.kubernetes.io/component"] == "worker"]
    check(set(nodes) == {p.name for p in workers}, "nodes %s" % sorted(nodes))
    for pod in workers:
        n, lim = nodes[pod.name], pod.c["resources"]["limits"]
        r, lab = n["resources_total"], n["labels"]
        check(n["node_ip"] == pod.ip, "%s: ip %s" % (pod.name, n["node_ip"]))
        check(r["CPU"] == k8s_qty(lim["cpu"]), "%s: CPU %r" % (pod.name, r))
        check(r.get("GPU", 0) == int(lim.get("nvidia.com/gpu", 0)),
              "%s: GPU %r" % (pod.name, r))
        check(r.get("TPU", 0) == int(lim.get("google.com/tpu", 0)),
              "%s: TPU %r" % (pod.name, r))
        if "google.com/tpu" not in lim:
            continue
        env = pod.run_env
        want = {"manta.io/accelerator-type": "TPU-V5LITEPOD",
                "manta.io/tpu-slice-name": env["TPU_NAME"],
                "manta.io/tpu-worker-id": pod.labels.get(POD_INDEX, "0"),
                "manta.io/tpu-pod-type": env["TPU_ACCELERATOR_TYPE"],
                "manta.io/tpu-topology": env["TPU_TOPOLOGY"]}
        for k, v in want.items():
            check(lab.get(k) == v, "%s: label %s=%r, want %r" % (
                pod.name, k, lab.get(k), v))
        marker = "TPU-%s-head" % env["TPU_ACCELERATOR_TYPE"]
        check((marker in r) == (want["manta.io/tpu-worker-id"] == "0"),
              "%s: %s only on worker 0" % (pod.name, marker))
    slice_hosts = sorted(n["labels"]["manta.io/tpu-worker-id"]
                         for n in nodes.values()
                         if n["labels"].get("manta.io/tpu-slice-name") ==
                         "manta-tpu-slice")
    check(slice_hosts == ["0", "1", "2", "3"],
          "one slice, worker ids %r" % slice_hosts)


if __name__ == "__main__":
    try:
        main([test_overlays_render, test_pods_run_here])
    except SystemExit as e:
        if e.code == 0 and SKIPPED:
            sys.exit(77)
        raise
