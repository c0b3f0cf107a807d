#!/usr/bin/env bash
# run.sh -- `make bench`: run every microbenchmark that was built and print
# the results (bench/RESULTS.md records measured numbers and the machine).
set -uo pipefail
BUILD=${1:-build}
BIN="$(cd "$(dirname "$0")/.." && pwd)/$BUILD/bin"
echo "# machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
for b in bench_rpc bench_sched bench_objstore; do
    if [ -x "$BIN/$b" ]; then
        echo
        echo "== $b"
        "$BIN/$b" || echo "$b failed with status $?"
    fi
done
echo
echo "== bench_transfer.sh (inter-node pull over loopback)"
"$(dirname "$0")/bench_transfer.sh" "$BUILD" 1GiB 3 || echo "bench_transfer failed"
echo
echo "== bench_tasks.py (command tasks end to end)"
/usr/bin/python3 "$(dirname "$0")/bench_tasks.py" "$BUILD" 1000 || echo "bench_tasks failed"
