#!/usr/bin/env bash
# bench_transfer.sh -- inter-node object pull over loopback: two workers on
# 127.0.0.1 and 127.0.0.2, a SIZE object put into the first store, pulled
# by the second through the workers' PullObject gRPC stream, RUNS times
# (a new object each run). Prints GB/s per run and the median.
# usage: bench/bench_transfer.sh [BUILD_DIR] [SIZE] [RUNS]
set -euo pipefail
BUILD=${1:-build}
SIZE=${2:-1GiB}
RUNS=${3:-3}
BIN="$(cd "$(dirname "$0")/.." && pwd)/$BUILD/bin"
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
"$BIN/manta" start --head --port 0 --node-ip 127.0.0.1 --temp-dir "$ROOT/a" \
    --object-store-memory "$store" >/dev/null
"$BIN/manta" start --address "$(cat "$ROOT/a/head.addr")" --node-ip 127.0.0.2 \
    --temp-dir "$ROOT/b" --object-store-memory "$store" >/dev/null
A=$(cat "$ROOT/a/worker.addr")
B=$(cat "$ROOT/b/worker.addr")
rates=()
for i in $(seq 1 "$RUNS"); do
    read -r id sum < <("$BIN/mt_objtool" put "$ROOT/a/objstore.sock" "$SIZE" "$i")
    read -r size us gbs < <("$BIN/mt_objtool" fetch "$B" "$id" "$A")
    read -r size2 sum2 < <("$BIN/mt_objtool" get "$ROOT/b/objstore.sock" "$id")
    [ "$sum" = "$sum2" ] || { echo "run $i: checksum mismatch"; exit 1; }
    echo "run $i: $size bytes in ${us}us = $gbs GB/s (checksum ok)"
    rates+=("$gbs")
done
printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print "median pull GB/s:", a[int((NR+1)/2)]}'
