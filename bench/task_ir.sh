#!/usr/bin/env bash
# task_ir.sh -- instructions per task, counted by callgrind: a daemon's
# (the head's, or with TARGET=manta-worker the worker's; counted from just
# before the run to its end) and the driver's (the microbenchmark process,
# its connect and warm-up included). Unlike
# tasks/s or CPU time, instruction counts hardly move with what else the
# machine does, so two builds can be compared on a busy 2-core VM.
#
# usage: bench/task_ir.sh BUILD [METRIC] [SECONDS]
#   e.g. bench/task_ir.sh build multi_client_tasks_async 3
# prints: METRIC tasks=N <daemon>_Ir_per_task=H driver_Ir_per_task=D
# Needs valgrind (callgrind). Under callgrind the head runs ~50x slower, so
# tasks/s here mean nothing; compare the per-task counts only.
set -euo pipefail
BUILD=$(cd "${1:?usage: task_ir.sh BUILD [METRIC] [SECONDS]}" && pwd)
METRIC=${2:-single_client_tasks_async}
SECONDS_PER_TRIAL=${3:-1}
TARGET=${TARGET:-manta-head}
case $TARGET in manta-head|manta-worker) ;; *) echo "task_ir.sh: TARGET is manta-head or manta-worker" >&2; exit 2;; esac
command -v valgrind >/dev/null || { echo "task_ir.sh: needs valgrind" >&2; exit 2; }

W=$(mktemp -d /tmp/manta-taskir-XXXXXX)
# The private cluster's token, for the daemons, the driver and /metrics.
MANTA_AUTH_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
export MANTA_AUTH_TOKEN
D=$W/session
DAEMON_PID=
cleanup() {
    "$W/bin/manta" stop --temp-dir "$D" >/dev/null 2>&1 || true
    # a daemon under valgrind can outlive `manta stop`: its counts are dumped
    [ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

# A bin dir whose $TARGET runs under callgrind; `manta` is a copy so
# that it finds its siblings here (it looks next to /proc/self/exe).
mkdir -p "$W/bin" "$D"
for f in "$BUILD"/bin/*; do ln -s "$f" "$W/bin/"; done
rm "$W/bin/manta" "$W/bin/$TARGET"
cp "$BUILD/bin/manta" "$W/bin/manta"
ln -s "$BUILD/lib" "$W/lib"
cat > "$W/bin/$TARGET" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$W/daemon.out \
    "$BUILD/bin/$TARGET" "\$@"
EOF
chmod +x "$W/bin/$TARGET"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
DPORT=$(free_port)
"$W/bin/manta" start --head --port "$PORT" --dashboard-port "$DPORT" \
    --node-ip 127.0.0.1 --temp-dir "$D" --num-cpus 4 >"$W/start.log" 2>&1 ||
    { cat "$W/start.log" >&2; exit 1; }
DAEMON_PID=$(pgrep -f "callgrind-out-file=$W/daemon.out" | head -1)
ended() {
    python3 - "$DPORT" <<'EOF'
import os, sys, urllib.request
req = urllib.request.Request(
    "http://127.0.0.1:%s/metrics" % sys.argv[1],
    headers={"Authorization": "Bearer " + os.environ["MANTA_AUTH_TOKEN"]})
with urllib.request.urlopen(req) as r:
    for line in r.read().decode().splitlines():
        if line.startswith("manta_tasks_ended_total "):
            print(int(float(line.split()[1])))
EOF
}
total_ir() {
    callgrind_annotate "$1" 2>/dev/null |
        awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}

N0=$(ended)
callgrind_control -z "$DAEMON_PID" >/dev/null 2>&1
valgrind --tool=callgrind --callgrind-out-file="$W/driver.out" \
    "$BUILD/bin/manta-microbenchmark" --address "127.0.0.1:$PORT" \
    --only "$METRIC" --seconds "$SECONDS_PER_TRIAL" --json \
    >"$W/mb.json" 2>"$W/mb.err" || { tail -5 "$W/mb.err" >&2; exit 1; }
N=$(( $(ended) - N0 ))
callgrind_control -d "$DAEMON_PID" >/dev/null 2>&1
sleep 1
DAEMON_IR=$(total_ir "$(ls "$W"/daemon.out.* | tail -1)")
DRIVER_IR=$(total_ir "$W/driver.out")
[ "$N" -gt 0 ] || { echo "task_ir.sh: no task ended" >&2; exit 1; }
echo "$METRIC tasks=$N ${TARGET#manta-}_Ir_per_task=$((DAEMON_IR / N))" \
     "driver_Ir_per_task=$((DRIVER_IR / N))"
