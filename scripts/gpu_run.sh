#!/usr/bin/env bash
# Everything heat checks on a GPU machine, in one run (issue 21):
#   scripts/gpu_check.py at 1 process and at 2 processes sharing the GPU(s), then the test suite
#   with every array on the GPU (HEAT_TEST_DEVICE=gpu), at 1 process and at 2 processes.
# Usage:  bash scripts/gpu_run.sh OUT_DIR
# Settings (environment): CHECK_PROCS="1 2" (process counts of gpu_check.py), SUITE_SECONDS=200
# (the 1-process suite's time limit; 0 skips it), SUITE2_SECONDS=0 (the same for 2 processes).
# Writes into OUT_DIR: checkN.json/.log, suite.tsv/.log, suite2.tsv/.log (one line per test).
# Needs python3 with torch (CUDA), h5py, numpy, mpi4py and an mpiexec on PATH; pytest and
# pytest-timeout for the suite.
set -uo pipefail
OUT_DIR="${1:?usage: gpu_run.sh OUT_DIR}"
CHECK_PROCS="${CHECK_PROCS:-1 2}"
SUITE_SECONDS="${SUITE_SECONDS:-200}"
SUITE2_SECONDS="${SUITE2_SECONDS:-0}"
mkdir -p "$OUT_DIR"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
status=0
# the suite's own jobs (examples, notebooks, docs, the emulated cluster) test no CUDA path
IGNORED=(--ignore=tests/examples --ignore=tests/test_docs.py --ignore=tests/benchmarks
         --ignore=tests/core/communication/test_emulated_cluster.py)

echo "== $(date -u +%H:%M:%S) nvidia-smi"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv || true

for procs in $CHECK_PROCS; do
    echo "== $(date -u +%H:%M:%S) gpu_check, $procs process(es)"
    timeout 200 mpiexec -n "$procs" python3 scripts/gpu_check.py --json "$OUT_DIR/check$procs.json" \
        </dev/null 2>&1 | tee "$OUT_DIR/check$procs.log" || status=1
done

if [ "$SUITE_SECONDS" -gt 0 ]; then
    echo "== $(date -u +%H:%M:%S) test suite with HEAT_TEST_DEVICE=gpu, at most ${SUITE_SECONDS} s"
    rm -f "$OUT_DIR/suite.tsv"
    HEAT_TEST_DEVICE=gpu HEAT_TEST_OUTCOMES="$OUT_DIR/suite.tsv" \
        timeout -s INT "$SUITE_SECONDS" python3 -m pytest tests -q -p no:cacheprovider \
        --timeout=60 --timeout-method=thread --tb=short -rf "${IGNORED[@]}" \
        </dev/null >"$OUT_DIR/suite.log" 2>&1 || status=1
    tail -n 40 "$OUT_DIR/suite.log"
    echo "suite outcomes: $(cut -f1 "$OUT_DIR/suite.tsv" | sort | uniq -c | tr '\n' ' ')"
fi

if [ "$SUITE2_SECONDS" -gt 0 ]; then
    echo "== $(date -u +%H:%M:%S) test suite at 2 processes with HEAT_TEST_DEVICE=gpu, at most ${SUITE2_SECONDS} s"
    rm -f "$OUT_DIR/suite2.tsv"
    HEAT_TEST_DEVICE=gpu HEAT_TEST_OUTCOMES="$OUT_DIR/suite2.tsv" \
        timeout "$((SUITE2_SECONDS + 15))" python3 scripts/run_tests.py --procs 2 \
        --timeout-per-test 60 --overall-timeout "$SUITE2_SECONDS" tests -- --tb=short -rf \
        "${IGNORED[@]}" </dev/null >"$OUT_DIR/suite2.log" 2>&1 || status=1
    grep -E "^(FAILED|ERROR)" "$OUT_DIR/suite2.log" | head -n 60
    tail -n 8 "$OUT_DIR/suite2.log"
    echo "suite2 outcomes: $(cut -f1 "$OUT_DIR/suite2.tsv" | sort | uniq -c | tr '\n' ' ')"
fi
echo "== $(date -u +%H:%M:%S) done, status $status"
exit "$status"
