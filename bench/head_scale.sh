#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# head_scale.sh -- the head at scale, through the node simulator
# (bench/node_sim.c): a real manta-head with a temp dir, manta-node-sim
# registering N fake nodes with it, and what the head costs and answers:
#
#   idle_cpu      head CPU (utime+stime from /proc/PID/stat) over IDLE_S s
#                 with IDLE_NODES nodes reporting, % of one core
#   status_ms     `manta status` wall time with STATUS_NODES nodes, median
#                 of RUNS
#   pg / tasks    placement_group_create/removal and tasks/s through the
#                 simulated nodes (manta-microbenchmark --address)
#
# usage: bench/head_scale.sh [BUILD_DIR]     (default: build)
# env:   IDLE_NODES=1000 STATUS_NODES=10000 IDLE_S=30 RUNS=5 SECONDS_PER=2
#        HEAD_BUILD=DIR: the head and `manta` from another build (a
#        "before"); the simulator still comes from BUILD_DIR
#        HEAD_FLAGS="--report-period-ms 5000 --node-timeout-ms 15000":
#        flags for `manta start --head` (default: none, a 1 s period)
#        TASKS=0: skip the placement group and task phase (a head older
#        than RunTasksRequest.node_id cannot run tasks on the simulator)
#        PERF=1: perf record -g the head during each phase and print the
#        top functions (needs /usr/bin/perf and perf_event_paranoid <= 1)
# Results: bench/RESULTS.md, "Issue 14: the head at scale".
set -eu

BUILD=${1:-build}
BIN=$(cd "$BUILD/bin" && pwd)
HEAD_BIN=$(cd "${HEAD_BUILD:-$BUILD}/bin" && pwd)
TASKS=${TASKS:-1}
IDLE_NODES=${IDLE_NODES:-1000}
STATUS_NODES=${STATUS_NODES:-10000}
IDLE_S=${IDLE_S:-30}
RUNS=${RUNS:-5}
SECONDS_PER=${SECONDS_PER:-2}
PERF=${PERF:-0}

TMP=$(mktemp -d /tmp/manta-head-scale.XXXXXX)
HEAD_DIR=$TMP/head
SIM_PID=

cleanup() {
    [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
    "$HEAD_BIN/manta" stop --force --temp-dir "$HEAD_DIR" >/dev/null 2>&1 || true
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADDR=127.0.0.1:$port
"$HEAD_BIN/manta" start --head --no-worker --port "$port" --node-ip 127.0.0.1 \
    --temp-dir "$HEAD_DIR" ${HEAD_FLAGS:-} >/dev/null
HEAD_PID=$(cat "$HEAD_DIR/head.pid")
export MANTA_AUTH_TOKEN_FILE="$HEAD_DIR/token"

ticks() { # utime + stime of pid $1, in clock ticks
    awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# start_sim N PREFIX: a simulator with N nodes, back once all registered.
start_sim() {
    "$BIN/manta-node-sim" --address "$ADDR" --nodes "$1" --id-prefix "$2" \
        --token-file "$HEAD_DIR/token" >"$TMP/sim.out" 2>"$TMP/sim.err" &
    SIM_PID=$!
    i=0
    until grep -q "nodes registered" "$TMP/sim.out"; do
        i=$((i + 1))
        [ $i -lt 1200 ] || { echo "simulator did not register" >&2; exit 1; }
        sleep 0.1
    done
}

stop_sim() {
    kill -TERM "$SIM_PID"
    wait "$SIM_PID" || true
    SIM_PID=
}

profile() { # profile NAME SECONDS: perf the head while the phase runs
    [ "$PERF" = 1 ] || return 0
    perf record -q -g -p "$HEAD_PID" -o "$TMP/$1.perf" -- sleep "$2" \
        >/dev/null 2>&1 || return 0
    echo "--- perf: head, $1 (top 15, self)"
    perf report -q --stdio --no-children -i "$TMP/$1.perf" 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -15
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- idle CPU with IDLE_NODES nodes --------------------------------------
start_sim "$IDLE_NODES" idle
sleep 3 # a full round of reports after the last registration
hz=$(getconf CLK_TCK)
t0=$(ticks "$HEAD_PID")
s0=$(ticks "$SIM_PID")
sleep "$IDLE_S"
t1=$(ticks "$HEAD_PID")
s1=$(ticks "$SIM_PID")
echo "idle_cpu nodes=$IDLE_NODES head=$(echo "$t0 $t1 $hz $IDLE_S" |
    awk '{ printf "%.1f", ($2 - $1) * 100 / $3 / $4 }')% sim=$(echo \
    "$s0 $s1 $hz $IDLE_S" | awk '{ printf "%.1f", ($2 - $1) * 100 / $3 / $4 }')%"
profile idle 10
stop_sim
[ "$STATUS_NODES" -gt 0 ] || exit 0 # STATUS_NODES=0: the idle phase only

# ---- manta status, PGs and tasks with STATUS_NODES nodes -----------------
deaths() { grep -c "no report for" "$HEAD_DIR/logs/head.log" || true; }
alive() {
    "$HEAD_BIN/manta" status --address "$ADDR" --format json |
        /usr/bin/python3 -c 'import json,sys; print(sum(n["state"] == "ALIVE" for n in json.load(sys.stdin)["nodes"]))'
}
start_sim "$STATUS_NODES" big
sleep 3
d0=$(deaths)
t0=$(ticks "$HEAD_PID")
sleep 10
t1=$(ticks "$HEAD_PID")
echo "idle_cpu nodes=$STATUS_NODES head=$(echo "$t0 $t1 $hz" |
    awk '{ printf "%.1f", ($2 - $1) * 100 / $3 / 10 }')% timed_out_in_10s=$(($(deaths) - d0)) alive=$(alive)"
a0=$(date +%s%N)
c0=$(ticks "$HEAD_PID")
for i in $(seq "$RUNS"); do
    a=$(date +%s%N)
    "$HEAD_BIN/manta" status --address "$ADDR" >/dev/null
    b=$(date +%s%N)
    echo $(((b - a) / 1000000))
done >"$TMP/status.ms"
c1=$(ticks "$HEAD_PID")
a1=$(date +%s%N)
echo "status_ms runs: $(tr '\n' ' ' <"$TMP/status.ms")"
# Head CPU per call: what it used during the calls, less its idle rate.
echo "status nodes=$STATUS_NODES median_ms=$(median <"$TMP/status.ms") head_cpu_ms_per_call=$(echo \
    "$c0 $c1 $hz $t0 $t1 $a0 $a1 $RUNS" | awk '{ idle = ($5 - $4) / 10 * ($7 - $6) / 1e9;
    printf "%.0f", (($2 - $1) - idle) * 1000 / $3 / $8 }') alive=$(alive)"
profile status 10 &
perf_job=$!
for i in $(seq 10); do "$HEAD_BIN/manta" status --address "$ADDR" >/dev/null; done
wait "$perf_job" || true

[ "$TASKS" = 1 ] &&
    "$BIN/manta-microbenchmark" --address "$ADDR" --seconds "$SECONDS_PER" \
    --only placement_group_create/removal,single_client_tasks_async,multi_client_tasks_async,single_client_tasks_sync
if [ "$PERF" = 1 ] && [ "$TASKS" = 1 ]; then
    "$BIN/manta-microbenchmark" --address "$ADDR" --seconds 6 \
        --only single_client_tasks_async >/dev/null &
    mb_job=$!
    sleep 2
    profile tasks 5
    wait "$mb_job" || true
fi
stop_sim
echo "lease_grants_per_s: not measured (no driver that only asks for leases yet)"
