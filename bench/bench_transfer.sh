#!/usr/bin/env bash
# bench_transfer.sh -- inter-node object pull over loopback: two workers on
# 127.0.0.1 and 127.0.0.2, a SIZE object put into the first store, pulled
# by the second through the workers' PullObject gRPC stream, RUNS times.
# Prints GB/s per run (with the CPU seconds each worker spent on the pull,
# which a loaded machine disturbs less than the wall clock) and the median.
#   cold (default): a new object each run, pulled into never-touched pages
#     of the second store (on a VM, first-touch page faults dominate).
#   warm: one object pulled RUNS times, deleted from the second store after
#     each pull, so every pull after the first lands on pages the store has
#     touched before (the steady state of a long-running node); the median
#     is over runs 2..RUNS.
# usage: bench/bench_transfer.sh [BUILD_DIR] [SIZE] [RUNS] [cold|warm]
# MT_OBJDEL overrides the command warm mode deletes with (an older build's
# mt_objtool has no delete): it is run as "$MT_OBJDEL delete SOCKET ID".
set -euo pipefail
BUILD=${1:-build}
SIZE=${2:-1GiB}
RUNS=${3:-3}
MODE=${4:-cold}
case "$BUILD" in /*) BIN="$BUILD/bin" ;;
    *) BIN="$(cd "$(dirname "$0")/.." && pwd)/$BUILD/bin" ;; esac
TOOL=$BIN/mt_objtool
DEL=${MT_OBJDEL:-$TOOL}
ROOT=$(mktemp -d /tmp/manta-bench-xfer.XXXXXX)
cleanup() {
    "$BIN/manta" stop --force --temp-dir "$ROOT/b" >/dev/null 2>&1 || true
    "$BIN/manta" stop --force --temp-dir "$ROOT/a" >/dev/null 2>&1 || true
    rm -rf "$ROOT"
}
trap cleanup EXIT
# One token for the two nodes and mt_objtool (MANTA_TLS_* pass through too).
MANTA_AUTH_TOKEN=${MANTA_AUTH_TOKEN:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
export MANTA_AUTH_TOKEN
store=$(( (RUNS + 1) * 1100 ))MiB
[ "$MODE" = warm ] && store=2300MiB
"$BIN/manta" start --head --port 0 --node-ip 127.0.0.1 --temp-dir "$ROOT/a" \
    --object-store-memory "$store" >/dev/null
"$BIN/manta" start --address "$(cat "$ROOT/a/head.addr")" --node-ip 127.0.0.2 \
    --temp-dir "$ROOT/b" --object-store-memory "$store" >/dev/null
A=$(cat "$ROOT/a/worker.addr")
B=$(cat "$ROOT/b/worker.addr")
PA=$(cat "$ROOT/a/worker.pid")
PB=$(cat "$ROOT/b/worker.pid")
# CPU seconds (user + system) a process has used so far.
cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
rates=()
for i in $(seq 1 "$RUNS"); do
    if [ "$MODE" = cold ] || [ "$i" = 1 ]; then
        read -r id sum < <("$TOOL" put "$ROOT/a/objstore.sock" "$SIZE" "$i")
    fi
    ca=$(cpu "$PA"); cb=$(cpu "$PB")
    read -r size us gbs < <("$TOOL" fetch "$B" "$id" "$A")
    ca=$(awk -v a="$ca" -v b="$(cpu "$PA")" 'BEGIN {printf "%.2f", b - a}')
    cb=$(awk -v a="$cb" -v b="$(cpu "$PB")" 'BEGIN {printf "%.2f", b - a}')
    read -r size2 sum2 < <("$TOOL" get "$ROOT/b/objstore.sock" "$id")
    [ "$sum" = "$sum2" ] || { echo "run $i: checksum mismatch"; exit 1; }
    echo "run $i ($MODE): $size bytes in ${us}us = $gbs GB/s (checksum ok;" \
         "cpu s: holder $ca, puller $cb)"
    if [ "$MODE" = warm ]; then
        "$DEL" delete "$ROOT/b/objstore.sock" "$id" >/dev/null
        [ "$i" = 1 ] || rates+=("$gbs")
    else
        rates+=("$gbs")
    fi
done
printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print "median pull GB/s:", a[int((NR+1)/2)]}'
