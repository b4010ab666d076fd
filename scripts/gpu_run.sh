#!/usr/bin/env bash
# Everything heat checks on a GPU machine, in one run (issue 21):
#   scripts/gpu_check.py at 1 process and at 2 processes sharing the GPU(s), then the test suite
#   with every array on the GPU (HEAT_TEST_DEVICE=gpu) for at most SUITE_SECONDS.
# Usage:  bash scripts/gpu_run.sh OUT_DIR [SUITE_SECONDS]
# Writes into OUT_DIR: check1.json/.log, check2.json/.log, suite.tsv (one line per test), suite.log.
# Needs python3 with torch (CUDA), h5py, numpy, mpi4py and an mpiexec on PATH; pytest and
# pytest-timeout for the suite part.
set -uo pipefail
OUT_DIR="${1:?usage: gpu_run.sh OUT_DIR [SUITE_SECONDS]}"
SUITE_SECONDS="${2:-240}"
mkdir -p "$OUT_DIR"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
status=0

echo "== $(date -u +%H:%M:%S) nvidia-smi"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv || true

echo "== $(date -u +%H:%M:%S) gpu_check, 1 process"
timeout 200 python3 scripts/gpu_check.py --json "$OUT_DIR/check1.json" 2>&1 \
    | tee "$OUT_DIR/check1.log" || status=1

echo "== $(date -u +%H:%M:%S) gpu_check, 2 processes sharing the GPU(s)"
timeout 200 mpiexec -n 2 python3 scripts/gpu_check.py --json "$OUT_DIR/check2.json" \
    </dev/null 2>&1 | tee "$OUT_DIR/check2.log" || status=1

if [ "$SUITE_SECONDS" -gt 0 ]; then
    echo "== $(date -u +%H:%M:%S) test suite with HEAT_TEST_DEVICE=gpu, at most ${SUITE_SECONDS} s"
    rm -f "$OUT_DIR/suite.tsv"
    # the suite's own jobs (examples, notebooks, docs, the emulated cluster) test no CUDA path
    HEAT_TEST_DEVICE=gpu HEAT_TEST_OUTCOMES="$OUT_DIR/suite.tsv" \
        timeout -s INT "$SUITE_SECONDS" python3 -m pytest tests -q -p no:cacheprovider \
        --timeout=60 --timeout-method=thread --tb=short -rf \
        --ignore=tests/examples --ignore=tests/test_docs.py --ignore=tests/benchmarks \
        --ignore=tests/core/communication/test_emulated_cluster.py \
        </dev/null >"$OUT_DIR/suite.log" 2>&1 || status=1
    tail -n 60 "$OUT_DIR/suite.log"
    echo "suite outcomes: $(cut -f1 "$OUT_DIR/suite.tsv" | sort | uniq -c | tr '\n' ' ')"
fi
echo "== $(date -u +%H:%M:%S) done, status $status"
exit "$status"
