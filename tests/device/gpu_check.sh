#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# gpu_check.sh -- Manta on a machine with a real NVIDIA GPU: NVML detection
# against nvidia-smi, per-GPU figures, and CUDA PyTorch tasks with the
# CUDA_VISIBLE_DEVICES the scheduler assigns.
#
#   bash tests/device/gpu_check.sh BUILD LIBROOT
#
# BUILD    a build dir with bin/{manta,manta-head,manta-worker,...} and lib/
# LIBROOT  the runtime libraries carried as .debs (fetch-runtime-debs.sh),
#          unpacked with: for f in .devdeps/*.deb; do dpkg -x $f LIBROOT; done
#
# Results go to $OUT when set, else to a new temp dir: gpu_check.log (all
# output), summary.txt, nvidia-smi.csv, status-*.json/txt, task-*.txt and
# the daemons' logs. Prints PASS/FAIL per check and a summary; exits 0 when
# every check passed, 1 when one failed, 77 when there is no NVIDIA GPU
# (nvidia-smi missing or failing: the GPU checks are skipped). MANTA_NVML_PATH
# set beforehand overrides the search for libnvidia-ml.so.1. Always stops
# the daemons it started. Needs python3; the torch checks need torch with
# CUDA in that python3. Finishes within about 3 minutes.
#
# Libraries: only those the system lacks are taken from LIBROOT (symlinked
# into a private dir put on LD_LIBRARY_PATH), so tasks keep the system's
# own copies of everything else (libssl, libstdc++, ...).
set -u

BUILD=${1:-}
LIBROOT=${2:-}
if [ -z "$BUILD" ] || [ -z "$LIBROOT" ] || [ $# -ne 2 ]; then
    echo "usage: $0 BUILD LIBROOT" >&2
    exit 2
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "no dir $1" >&2; exit 2; }
LIBROOT=$(cd "$LIBROOT" 2>/dev/null && pwd) || {
    echo "no dir $2" >&2; exit 2; }
RES=${OUT:-}
if [ -z "$RES" ]; then
    RES=$(mktemp -d /tmp/manta-gpu-check.XXXXXX)
fi
mkdir -p "$RES"
WORK=$(mktemp -d /tmp/manta-gpu-work.XXXXXX)
exec > >(tee "$RES/gpu_check.log") 2>&1
MANTA=$BUILD/bin/manta
PY=${PYTHON:-python3}
SESSIONS=()
PASSES=0
FAILS=0
SKIPS=0
T_START=$(date +%s)

log() { echo "[$(( $(date +%s) - T_START ))s] $*"; }
# verdict KIND NAME MESSAGE...: one result line, on screen and in summary.
verdict() {
    local line="$1 $2${3:+: ${*:3}}"
    echo "$line"
    echo "$line" >> "$RES/summary.txt"
}
pass() { PASSES=$((PASSES + 1)); verdict PASS "$@"; }
fail() { FAILS=$((FAILS + 1)); verdict FAIL "$@"; }
skip() { SKIPS=$((SKIPS + 1)); verdict SKIP "$@"; }

# ---- cleanup -----------------------------------------------------------------

stop_session() {
    local d=$1 pid
    [ -d "$d" ] || return 0
    timeout 20 "$MANTA" stop --temp-dir "$d" >/dev/null 2>&1
    for n in worker head; do
        pid=$(cat "$d/$n.pid" 2>/dev/null || true)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -9 "$pid" 2>/dev/null
        fi
    done
    mkdir -p "$RES/logs/$(basename "$d")"
    cp -r "$d/logs/." "$RES/logs/$(basename "$d")/" 2>/dev/null || true
}

FINISHED=0
finish() {
    local rc=$1
    [ $FINISHED -eq 0 ] || exit "$rc"
    FINISHED=1
    for d in "${SESSIONS[@]}"; do stop_session "$d"; done
    rm -rf "$WORK"
    echo "SUMMARY: $PASSES passed, $FAILS failed, $SKIPS skipped" \
         "($(( $(date +%s) - T_START ))s); results in $RES"
    echo "SUMMARY: $PASSES passed, $FAILS failed, $SKIPS skipped" \
         >> "$RES/summary.txt"
    exit "$rc"
}
trap 'finish 1' INT TERM
trap 'finish $?' EXIT

# ---- runtime libraries ----------------------------------------------------------

# Symlink into $WORK/libs each library the binaries need and the system
# lacks, taken from LIBROOT; repeat for their own needs. RET 0 when all
# resolve.
setup_libs() {
    local bins=("$BUILD"/bin/manta "$BUILD"/bin/manta-head \
                "$BUILD"/bin/manta-worker "$BUILD"/bin/manta-executor \
                "$BUILD"/bin/manta-store) missing f src i
    mkdir -p "$WORK/libs"
    for b in "${bins[@]}"; do
        [ -x "$b" ] || { echo "missing $b"; return 1; }
    done
    for i in 1 2 3 4 5 6; do
        missing=$(for b in "${bins[@]}"; do
                      LD_LIBRARY_PATH=$WORK/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
                      ldd "$b"; done |
                  awk '/not found/{print $1}' | sort -u)
        [ -z "$missing" ] && return 0
        for f in $missing; do
            src=$(find "$LIBROOT" -name "$f" \( -type f -o -type l \) \
                  2>/dev/null | head -1)
            if [ -z "$src" ]; then
                echo "library $f: not on this system and not in $LIBROOT"
                return 1
            fi
            ln -sf "$src" "$WORK/libs/$f"
            echo "carried: $f"
        done
    done
    return 1
}

log "manta GPU device check: build $BUILD, libraries $LIBROOT"
uname -a
if setup_libs; then
    export LD_LIBRARY_PATH=$WORK/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    if "$MANTA" --version >/dev/null 2>&1 || "$MANTA" --help >/dev/null 2>&1
    then
        pass libs "every library resolves ($(ls "$WORK/libs" | wc -l)" \
             "carried)"
    else
        fail libs "manta does not run"; finish 1
    fi
else
    fail libs "unresolved libraries (see above)"
    finish 1
fi

# ---- the GPU and NVML ------------------------------------------------------------

SMI_Q=index,name,uuid,memory.total,memory.used,utilization.gpu
if ! command -v nvidia-smi >/dev/null 2>&1; then
    skip gpu "nvidia-smi not found: this machine has no NVIDIA GPU"
    finish 77
fi
if ! timeout 30 nvidia-smi --query-gpu=$SMI_Q --format=csv,noheader,nounits \
        > "$RES/nvidia-smi.csv" 2>&1 || [ ! -s "$RES/nvidia-smi.csv" ]; then
    cat "$RES/nvidia-smi.csv"
    skip gpu "nvidia-smi failed: no usable NVIDIA GPU"
    finish 77
fi
cat "$RES/nvidia-smi.csv"
timeout 30 nvidia-smi -L > "$RES/nvidia-smi-L.txt" 2>&1

find_nvml() {
    local p
    p=$(ldconfig -p 2>/dev/null | awk '/libnvidia-ml\.so\.1 .*x86-64/{print $NF; exit}')
    [ -n "$p" ] && { echo "$p"; return; }
    for p in /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
             /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/lib64 \
             /usr/local/cuda/compat; do
        [ -e "$p/libnvidia-ml.so.1" ] && { echo "$p/libnvidia-ml.so.1"; return; }
    done
    find / -xdev -maxdepth 6 -name 'libnvidia-ml.so.1' 2>/dev/null | head -1
}
NVML=${MANTA_NVML_PATH:-$(find_nvml)}
if [ -z "$NVML" ]; then
    fail nvml "libnvidia-ml.so.1 not found (ldconfig -p, /usr/local/nvidia)"
    finish 1
fi
log "NVML: $NVML"
export MANTA_NVML_PATH=$NVML
unset CUDA_VISIBLE_DEVICES MANTA_PROC_ROOT

# ---- helpers ------------------------------------------------------------------------

free_port() {
    $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start TAG [extra manta start args]: head + worker on 127.0.0.1; sets ADDR
# and SESS.
start() {
    local tag=$1 port
    shift
    port=$(free_port)
    SESS=$WORK/s-$tag
    mkdir -p "$SESS"
    SESSIONS+=("$SESS")
    ADDR=127.0.0.1:$port
    timeout 90 "$MANTA" start --head --port "$port" --node-ip 127.0.0.1 \
        --temp-dir "$SESS" --num-cpus 4 --report-period-ms 500 \
        --object-store-memory 256MiB "$@" \
        > "$RES/start-$tag.txt" 2>&1
}

# submit NAME ARGS...: run a task; its stdout into $RES/task-NAME.txt.
submit() {
    local name=$1
    shift
    timeout 150 "$MANTA" submit --address "$ADDR" "$@" \
        > "$RES/task-$name.txt" 2> "$RES/task-$name.err"
}

# field FILE KEY: the value of a KEY=value line a probe printed.
field() { sed -n "s/^$2=//p" "$1" | head -1; }

cat > "$WORK/probe.py" <<'PYEOF'
import os, sys, time
print("CVD=%s" % os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"))
sys.stdout.flush()
import torch
print("T0=%.3f" % time.time())
print("AVAILABLE=%d" % int(torch.cuda.is_available()))
n = torch.cuda.device_count() if torch.cuda.is_available() else 0
print("COUNT=%d" % n)
if n:
    p = torch.cuda.get_device_properties(0)
    print("NAME=%s" % p.name)
    print("TUUID=%s" % getattr(p, "uuid", ""))
    a = torch.randn(1024, 1024, device="cuda")
    b = torch.randn(1024, 1024, device="cuda")
    c = (a @ b).cpu()
    ref = a.cpu() @ b.cpu()
    ok = torch.allclose(c, ref, rtol=1e-2, atol=1e-1)
    print("MATMUL_OK=%d" % int(ok))
hold = float(sys.argv[1]) if len(sys.argv) > 1 else 0
time.sleep(hold)
print("T1=%.3f" % time.time())
PYEOF

# ---- 1. detection against nvidia-smi ---------------------------------------------

DPORT=$(free_port)
if ! start det --dashboard-port "$DPORT"; then
    fail start "manta start failed: $(tail -5 "$RES/start-det.txt")"
    finish 1
fi
sleep 2 # a report or two with figures
timeout 20 "$MANTA" status --address "$ADDR" --format json \
    > "$RES/status-det.json" 2>&1
timeout 20 "$MANTA" status --address "$ADDR" > "$RES/status-det.txt" 2>&1
cat "$RES/status-det.txt"
grep "gpu:" "$SESS/logs/worker.log" 2>/dev/null

$PY - "$RES/status-det.json" "$RES/nvidia-smi.csv" > "$WORK/det.out" \
    2>&1 <<'PYEOF'
import json, re, sys
st = json.load(open(sys.argv[1]))
rows = [[c.strip() for c in l.split(",")] for l in open(sys.argv[2])
        if l.strip()]
node = st["nodes"][0]
gpus = node.get("gpus", [])
res = node["resources_total"]
def out(ok, name, msg):
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, msg))
def num(v):
    # nvidia-smi prints "[N/A]" or "[Not Supported]" for what it lacks.
    try:
        return float(v)
    except ValueError:
        return None
out(res.get("GPU", 0) == len(rows), "detect-count",
    "manta GPU=%s, nvidia-smi %d" % (res.get("GPU"), len(rows)))
m = re.search(r"\w+\s+([A-Z0-9]+)", rows[0][1])
want = m.group(1) if m else None
got = node["labels"].get("manta.io/accelerator-type")
out(got == want, "detect-type", "label %r, from nvidia-smi name %r -> %r"
    % (got, rows[0][1], want))
out(len(gpus) == len(rows), "report-gpus",
    "%d GPU entries in the report" % len(gpus))
for r, g in zip(rows, gpus):
    idx, name, uuid, tot, used, util = r
    i = "gpu%s" % idx
    out(str(g["index"]) == idx and g["id"] == idx, i + "-index",
        "manta index %s id %s, nvidia-smi %s" % (g["index"], g["id"], idx))
    out(g["name"] == name, i + "-name", "%r vs %r" % (g["name"], name))
    out(g["uuid"] == uuid, i + "-uuid", "%r vs %r" % (g["uuid"], uuid))
    t = g["memory_total_bytes"]
    ok = t is not None and abs(t / 2**20 - float(tot)) <= 1
    out(ok, i + "-mem-total", "manta %s MiB, nvidia-smi %s MiB"
        % (None if t is None else t // 2**20, tot))
    u = g["memory_used_bytes"]
    # nvidia-smi's "used" leaves out memory the driver reserves; NVML's v1
    # figure includes it, so allow 2 GiB.
    if num(used) is None:
        ok = u is None
    else:
        ok = u is not None and abs(u / 2**20 - num(used)) <= 2048
    out(ok, i + "-mem-used", "manta %s MiB, nvidia-smi %s MiB"
        % (None if u is None else u // 2**20, used))
    p = g["utilization_percent"]
    # Unknown in both when the GPU does not support it (MIG mode).
    ok = p is None if num(util) is None else p is not None and 0 <= p <= 100
    out(ok, i + "-util", "manta %s%%, nvidia-smi %s%%" % (p, util))
PYEOF
while read -r verdict name rest; do
    case "$verdict" in
    PASS) pass "${name%:}" "$rest" ;;
    FAIL) fail "${name%:}" "$rest" ;;
    *) echo "$verdict $name $rest"; fail detect "comparison script failed" ;;
    esac
done < "$WORK/det.out"
if grep -q "manta_gpu_memory_total_bytes" \
        <(timeout 10 $PY -c 'import sys,urllib.request
print(urllib.request.urlopen("http://"+sys.argv[1]+"/metrics",timeout=5).read().decode())' \
          "127.0.0.1:$DPORT" 2>/dev/null); then
    pass metrics "manta_gpu_memory_total_bytes on /metrics"
else
    skip metrics "no dashboard /metrics reachable"
fi

FIRST_UUID=$(awk -F', *' 'NR==1{print $3}' "$RES/nvidia-smi.csv")
FIRST_NAME=$(awk -F', *' 'NR==1{print $2}' "$RES/nvidia-smi.csv")
SMI_IDX=$(awk -F', *' '{print $1}' "$RES/nvidia-smi.csv" | tr '\n' ' ')

# ---- 2. CUDA PyTorch tasks ---------------------------------------------------------

if ! $PY -c 'import torch; assert torch.cuda.is_available()' \
        > "$RES/torch-here.txt" 2>&1; then
    skip torch "python3 here has no torch with CUDA: $(tail -1 "$RES/torch-here.txt")"
else
    log "1-GPU task"
    submit gpu1 --num-gpus 1 -- $PY "$WORK/probe.py"
    rc=$?
    f=$RES/task-gpu1.txt
    cat "$f"
    cvd=$(field "$f" CVD)
    if [ $rc -eq 0 ] && [[ " $SMI_IDX " == *" $cvd "* ]] &&
       [ "$(field "$f" COUNT)" = 1 ] && [ "$(field "$f" MATMUL_OK)" = 1 ]; then
        pass task-1gpu "CUDA_VISIBLE_DEVICES=$cvd, 1 device" \
             "'$(field "$f" NAME)', matmul ok"
    else
        fail task-1gpu "rc=$rc CVD=$cvd COUNT=$(field "$f" COUNT)" \
             "MATMUL_OK=$(field "$f" MATMUL_OK); $(tail -3 "$RES/task-gpu1.err")"
    fi

    log "two 0.5-GPU tasks at once"
    submit half1 --num-gpus 0.5 -- $PY "$WORK/probe.py" 4 &
    p1=$!
    submit half2 --num-gpus 0.5 -- $PY "$WORK/probe.py" 4 &
    p2=$!
    wait $p1; r1=$?
    wait $p2; r2=$?
    a=$RES/task-half1.txt b=$RES/task-half2.txt
    cat "$a" "$b"
    overlap=$($PY -c 'import sys; a0,a1,b0,b1=map(float,sys.argv[1:]); print(int(a0<b1 and b0<a1))' \
              "$(field "$a" T0)" "$(field "$a" T1)" "$(field "$b" T0)" \
              "$(field "$b" T1)" 2>/dev/null)
    if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] &&
       [ "$(field "$a" CVD)" = "$(field "$b" CVD)" ] &&
       [[ " $SMI_IDX " == *" $(field "$a" CVD) "* ]] &&
       [ "$(field "$a" MATMUL_OK)" = 1 ] && [ "$(field "$b" MATMUL_OK)" = 1 ]
    then
        pass task-half "both saw CUDA_VISIBLE_DEVICES=$(field "$a" CVD)," \
             "ran at the same time: $overlap"
    else
        fail task-half "rc=$r1/$r2 CVD=$(field "$a" CVD)/$(field "$b" CVD)" \
             "MATMUL_OK=$(field "$a" MATMUL_OK)/$(field "$b" MATMUL_OK)"
    fi

    log "0-GPU task"
    submit gpu0 --num-gpus 0 -- $PY "$WORK/probe.py"
    rc=$?
    f=$RES/task-gpu0.txt
    cat "$f"
    if [ $rc -eq 0 ] && grep -qx "CVD=" "$f" &&
       [ "$(field "$f" AVAILABLE)" = 0 ]; then
        pass task-0gpu "CUDA_VISIBLE_DEVICES='', torch.cuda.is_available()" \
             "False"
    else
        fail task-0gpu "rc=$rc $(grep -E '^(CVD|AVAILABLE)=' "$f" | tr '\n' ' ')"
    fi
fi
stop_session "$SESS"

# ---- 3. CUDA_VISIBLE_DEVICES as a UUID prefix at worker start -------------------------

PREFIX=${FIRST_UUID:0:12}   # "GPU-" and 8 hex digits
n_match=$(grep -c ", $PREFIX" "$RES/nvidia-smi.csv")
if [ "$n_match" != 1 ]; then
    PREFIX=$FIRST_UUID
fi
log "worker started with CUDA_VISIBLE_DEVICES=$PREFIX"
if CUDA_VISIBLE_DEVICES=$PREFIX start uuid; then
    sleep 1.5
    timeout 20 "$MANTA" status --address "$ADDR" --format json \
        > "$RES/status-uuid.json" 2>&1
    got=$($PY -c 'import json,sys; n=json.load(open(sys.argv[1]))["nodes"][0]
g=n.get("gpus",[]); print(n["resources_total"].get("GPU",0), len(g), g[0]["id"] if g else "-", g[0]["uuid"] if g else "-")' \
          "$RES/status-uuid.json" 2>&1)
    if [ "$got" = "1 1 $PREFIX $FIRST_UUID" ]; then
        pass uuid-detect "offers 1 GPU named $PREFIX ($FIRST_UUID)"
    else
        fail uuid-detect "GPU count, entries, id, uuid: $got"
    fi
    if $PY -c 'import torch' >/dev/null 2>&1; then
        submit uuid --num-gpus 1 -- $PY "$WORK/probe.py"
        rc=$?
        f=$RES/task-uuid.txt
        cat "$f"
        tuuid=$(field "$f" TUUID)
        if [ $rc -eq 0 ] && [ "$(field "$f" CVD)" = "$PREFIX" ] &&
           [ "$(field "$f" COUNT)" = 1 ] &&
           [ "$(field "$f" MATMUL_OK)" = 1 ] &&
           [ "$(field "$f" NAME)" = "$FIRST_NAME" ]; then
            pass uuid-task "CUDA_VISIBLE_DEVICES=$PREFIX, torch uuid" \
                 "'$tuuid', matmul ok"
        else
            fail uuid-task "rc=$rc CVD=$(field "$f" CVD)" \
                 "COUNT=$(field "$f" COUNT) NAME=$(field "$f" NAME)" \
                 "MATMUL_OK=$(field "$f" MATMUL_OK)"
        fi
    fi
    stop_session "$SESS"
else
    fail uuid-detect "manta start failed: $(tail -5 "$RES/start-uuid.txt")"
fi

if [ $FAILS -eq 0 ]; then finish 0; else finish 1; fi
