#!/usr/bin/env bash
# demo.sh -- `make demo`: start a small local cluster (a head and a worker on
# 127.0.0.1, a second worker on 127.0.0.2), show its status, run the
# examples that exist, add two fake TPU hosts and run the TorchTPU example
# over their slice as a gang, show it all in `manta top`, and stop
# everything again.
set -euo pipefail
BUILD=${1:-build}
BIN="$(cd "$(dirname "$0")/.." && pwd)/$BUILD/bin"
MANTA="$BIN/manta"
ROOT=$(mktemp -d /tmp/manta-demo.XXXXXX)
HEAD_DIR=$ROOT/head
NODE2_DIR=$ROOT/node2
REPO=$(cd "$(dirname "$0")/.." && pwd)

cleanup() {
    for w in 0 1; do
        "$MANTA" stop --temp-dir "$ROOT/tpu$w" >/dev/null 2>&1 || true
    done
    "$MANTA" stop --temp-dir "$NODE2_DIR" >/dev/null 2>&1 || true
    "$MANTA" stop --temp-dir "$HEAD_DIR" >/dev/null 2>&1 || true
    rm -rf "$ROOT"
}
trap cleanup EXIT

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

echo "== manta start --head (head + worker on 127.0.0.1, port $port)"
"$MANTA" start --head --port "$port" --node-ip 127.0.0.1 --temp-dir "$HEAD_DIR" \
    --num-cpus 2 --labels zone=demo-a
echo
echo "== manta start --address 127.0.0.1:$port --token-file ... (a second worker on 127.0.0.2)"
"$MANTA" start --address "127.0.0.1:$port" --token-file "$HEAD_DIR/token" \
    --node-ip 127.0.0.2 --temp-dir "$NODE2_DIR" --num-cpus 4 --num-gpus 1 \
    --resources '{"accel": 2}' --labels zone=demo-b
echo
echo "== manta status"
"$MANTA" status --temp-dir "$HEAD_DIR"
echo
echo "== manta status --format json (first node)"
"$MANTA" status --temp-dir "$HEAD_DIR" --format json |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d["nodes"][0], indent=2)); print("cluster totals:", d["resources_total"])'

echo
echo "== manta submit: a command task on the node labelled zone=demo-b"
"$MANTA" submit --temp-dir "$HEAD_DIR" --label-selector zone=demo-b -- \
    sh -c 'echo "hello from node $MANTA_NODE_ID (task $MANTA_TASK_ID)"'
echo
echo "== manta submit: four tasks spread over the cluster, then the task list"
for i in 1 2 3 4; do
    "$MANTA" submit --temp-dir "$HEAD_DIR" --spread --name "square-$i" -- \
        sh -c "echo $i squared is \$(( $i * $i ))" &
done
wait
"$MANTA" list tasks --temp-dir "$HEAD_DIR"

# The examples, and the nodes started below, present the cluster token too.
export MANTA_AUTH_TOKEN_FILE="$HEAD_DIR/token"
for ex in "$BIN"/example_*; do
    [ -x "$ex" ] || continue
    echo
    echo "== example $(basename "$ex")"
    "$ex" "127.0.0.1:$port"
done

echo
echo "== manta list actors (example_actor_counter's actor died with its driver)"
"$MANTA" list actors --temp-dir "$HEAD_DIR"

# Two hosts of a v4-16 TPU slice, faked: /dev/accel0..3 as plain files and a
# Google PCI id under a private sysfs root (docs/accelerators.md section 6),
# with the slice identity GKE would set.
fake_tpu_host() {
    local d=$ROOT/tpu$1 pci
    mkdir -p "$d/root/dev"
    for c in 0 1 2 3; do : >"$d/root/dev/accel$c"; done
    pci=$d/root/sys/bus/pci/devices/0000:00:04.0
    mkdir -p "$pci"
    echo 0x1ae0 >"$pci/vendor"
    echo 0x005e >"$pci/device"
    TPU_ACCELERATOR_TYPE=v4-16 TPU_TOPOLOGY=2x2x2 TPU_NAME=demo-slice \
        TPU_WORKER_ID=$1 "$MANTA" start --address "127.0.0.1:$port" \
        --node-ip "127.0.0.$((3 + $1))" --temp-dir "$d" --num-cpus 4 \
        --dev-root "$d/root" --sys-root "$d/root" --tpu-metadata-url "" \
        >/dev/null
}
echo
echo "== two fake TPU hosts (slice demo-slice, v4-16: 2 hosts x 4 chips)"
fake_tpu_host 0
fake_tpu_host 1
"$MANTA" list nodes --temp-dir "$HEAD_DIR"

if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo
    echo "== manta submit --tpu v4-16 --launch device: train.py, 8 ranks"
    echo "   (one per chip; no TorchTPU here, so each rank runs on the CPU"
    echo "   with its slice env, all-reducing gradients over gloo)"
    "$MANTA" submit --temp-dir "$HEAD_DIR" --tpu v4-16 --launch device \
        --env "PYTHONPATH=$REPO/sdk/python" --env "MANTA_LIB=$BIN/../lib" \
        -- /usr/bin/python3 "$REPO/examples/torchtpu/train.py" --steps 10 |
        grep -E "weights|device="
    "$MANTA" list gangs --temp-dir "$HEAD_DIR"
else
    echo "(python3-torch missing: skipping the TorchTPU example)"
fi

echo
echo "== manta top --once: the terminal view (the web dashboard is at"
echo "   $(cat "$HEAD_DIR/dashboard.addr" 2>/dev/null) until the stop below)"
"$MANTA" top --once --temp-dir "$HEAD_DIR"

echo
echo "== manta stop (every node)"
for w in 0 1; do "$MANTA" stop --temp-dir "$ROOT/tpu$w"; done
"$MANTA" stop --temp-dir "$NODE2_DIR"
"$MANTA" stop --temp-dir "$HEAD_DIR"
echo
echo "Demo done. Start your own cluster with: $MANTA start --head"
