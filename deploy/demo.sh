#!/usr/bin/env bash
# demo.sh -- `make demo`: start a small local cluster (a head and a worker on
# 127.0.0.1, a second worker on 127.0.0.2), show its status, run the
# examples that exist, and stop everything again.
set -euo pipefail
BUILD=${1:-build}
BIN="$(cd "$(dirname "$0")/.." && pwd)/$BUILD/bin"
MANTA="$BIN/manta"
ROOT=$(mktemp -d /tmp/manta-demo.XXXXXX)
HEAD_DIR=$ROOT/head
NODE2_DIR=$ROOT/node2

cleanup() {
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
echo "== manta start --address 127.0.0.1:$port (a second worker on 127.0.0.2)"
"$MANTA" start --address "127.0.0.1:$port" --node-ip 127.0.0.2 \
    --temp-dir "$NODE2_DIR" --num-cpus 4 --num-gpus 1 \
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

for ex in "$BIN"/example_*; do
    [ -x "$ex" ] || continue
    echo
    echo "== example $(basename "$ex")"
    "$ex" "127.0.0.1:$port"
done

echo
echo "== manta list actors (example_actor_counter's actor died with its driver)"
"$MANTA" list actors --temp-dir "$HEAD_DIR"

echo
echo "== manta stop (both nodes)"
"$MANTA" stop --temp-dir "$NODE2_DIR"
"$MANTA" stop --temp-dir "$HEAD_DIR"
echo
echo "Demo done. Start your own cluster with: $MANTA start --head"
