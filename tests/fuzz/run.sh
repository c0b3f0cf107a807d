#!/bin/sh
# run.sh -- run every libFuzzer harness of a MANTA_FUZZ build for a while,
# each on a scratch copy of its committed seed corpus (tests/fuzz/corpus/
# <name>/ is never written), and fail if any finds a crash, leak, UB or hang.
#   run.sh BUILD_DIR SECONDS [NAME...]    NAMEs: qty, exec_proto, ... (all)
# Findings are kept in BUILD_DIR/fuzz-findings/<name>/ with the log; the
# corpus a run grew is in BUILD_DIR/fuzz-work/<name>/ until the next run.
set -u

build=$1
secs=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin"
names="$*"
if [ -z "$names" ]; then
    names=$(cd "$bin" && ls fuzz_* 2>/dev/null | sed 's/^fuzz_//')
fi
if [ -z "$names" ]; then
    echo "fuzz: no harnesses in $bin (make fuzz-build)" >&2
    exit 2
fi

failed=""
for n in $names; do
    work="$build/fuzz-work/$n"
    found="$build/fuzz-findings/$n"
    rm -rf "$work" "$found"
    mkdir -p "$work" "$found"
    if [ -d "$src/corpus/$n" ]; then
        cp "$src/corpus/$n"/* "$work"/ 2>/dev/null
    fi
    # One process; -timeout: one input taking 10 s is a hang.
    "$bin/fuzz_$n" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$found/" "$work" \
        >"$found/log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$found/log")
    files=$(ls "$work" | wc -l)
    if [ "$rc" -ne 0 ]; then
        echo "fuzz_$n: FAILED (exit $rc) after ${execs:-?} runs:"
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' \
            "$found/log" | head -20
        echo "  log and input: $found/"
        failed="$failed $n"
    else
        echo "fuzz_$n: ok, ${secs}s, ${execs:-?} runs, corpus $files inputs"
        rm -f "$found/log"
        rmdir "$found" 2>/dev/null
    fi
done

if [ -n "$failed" ]; then
    echo "fuzz: findings in:$failed" >&2
    exit 1
fi
exit 0
