#!/usr/bin/env bash
# The README's test command, N times in a row (default 5), with a CPU-bound process
# running beside it the whole time (issue 21: the suite must pass every run on 2 cores
# under load). Prints the machine, each run's pytest result line, and a summary; exits 0
# only when every run passed.
#
#   scripts/stress_suite.sh            # 5 runs beside a python busy loop
#   scripts/stress_suite.sh 1          # one run
#   STRESS_HOG=index scripts/stress_suite.sh   # beside a second indexing job, in a loop
#   scripts/stress_suite.sh 2 tests/test_indexer_watch.py   # extra args go to pytest
#
# Each run's full output is kept in $STRESS_LOG_DIR (default: a new temporary folder).
set -uo pipefail
cd "$(dirname "$0")/.."

N="${1:-5}"
shift || true
case "$N" in ''|*[!0-9]*) echo "usage: $0 [RUNS] [PYTEST ARGS...]" >&2; exit 2 ;; esac
HOG="${STRESS_HOG:-busy}"
LOG_DIR="${STRESS_LOG_DIR:-$(mktemp -d -t localrag-stress.XXXXXX)}"
mkdir -p "$LOG_DIR"
HOG_PID=""
HOG_DIR=""

stop_hog() {
    if [ -n "$HOG_PID" ] && kill -0 "$HOG_PID" 2>/dev/null; then
        # the hog runs in its own process group (set -m below): end it and its children
        kill -TERM -- "-$HOG_PID" 2>/dev/null || kill -TERM "$HOG_PID" 2>/dev/null
        wait "$HOG_PID" 2>/dev/null
    fi
    HOG_PID=""
    if [ -n "$HOG_DIR" ]; then rm -rf "$HOG_DIR"; HOG_DIR=""; fi
}
trap 'stop_hog' EXIT
trap 'stop_hog; exit 130' INT TERM

start_hog() {
    set -m     # the hog gets its own process group, so stop_hog ends all of it
    case "$HOG" in
        busy)
            python -c 'while True: pass' &
            ;;
        index)
            # a second indexing job: the git docs indexed from scratch, over and over
            HOG_DIR="$(mktemp -d -t localrag-stress-hog.XXXXXX)"
            (
                export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
                while true; do
                    rm -rf "$HOG_DIR/data"
                    python -m localrag --data-dir "$HOG_DIR/data" index tests/data/gitdocs \
                        >/dev/null 2>&1
                done
            ) &
            ;;
        *) echo "STRESS_HOG must be busy or index, not $HOG" >&2; exit 2 ;;
    esac
    HOG_PID=$!
    set +m
}

echo "machine: $(uname -srm); $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'); $(nproc) CPUs; $(python --version 2>&1)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (+ local changes)')"
echo "load:    $HOG ($([ "$HOG" = busy ] && echo 'python busy loop' || echo 'localrag index in a loop')) beside each run; logs in $LOG_DIR"
start_hog
echo "hog:     pid $HOG_PID"

passed=0
results=()
for i in $(seq 1 "$N"); do
    log="$LOG_DIR/run-$i.log"
    start=$(date +%s)
    HF_HUB_OFFLINE=1 python -m pytest -q "$@" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    line="$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"
    if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); verdict=green; else verdict="RED (exit $rc)"; fi
    results+=("run $i/$N: $verdict, ${took}s: $line")
    echo "run $i/$N: $verdict, ${took}s: $line"
    if [ "$rc" -ne 0 ]; then
        grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
    fi
done

stop_hog
echo "---"
echo "summary: $passed of $N runs green beside the $HOG hog"
printf '  %s\n' "${results[@]}"
[ "$passed" -eq "$N" ]
