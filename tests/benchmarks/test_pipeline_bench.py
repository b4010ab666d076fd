"""
benchmarks/pipeline.py: its table's arithmetic by hand, and one tiny run end to end (2 processes,
every variant). The run starts its own ``mpiexec`` job, so it runs only in the 1-process run of
the suite.
"""

import os
import subprocess
import sys
from argparse import Namespace

import pytest

import heat as ht
from tests.helpers import fresh_job_environment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import pipeline as bench  # noqa: E402

RUN_SECONDS = 110  # inside pytest-timeout's 120 s


def test_table_against_the_ideal_by_hand():
    args = Namespace(micro_batches=4, procs=2)
    memory = {"live_micro_batches": [4, 4], "activation_bytes": [2e6, 2e6]}
    results = [
        {"variant": "compute only", "batch_s": 0.100},
        {"variant": "heat gpipe", "batch_s": 0.130, **memory},  # ideal (4 + 1) / 4 * 100 ms
        {"variant": "heat pipedream", "batch_s": 0.105, **memory},  # ideal 100 ms
        {"variant": "torch GPipe", "batch_s": 0.140, **memory},
        {"variant": "torch 1F1B", "error": "RuntimeError: no"},
    ]
    table = bench._table(results, args)
    assert "| heat gpipe | 130.0 | 125.0 | 1.040 | 4 | 2.000 | [4, 4] | 1 |" in table
    assert "| heat pipedream | 105.0 | 100.0 | 1.050 |" in table
    assert "| torch 1F1B | error: RuntimeError: no |" in table
    assert "heat gpipe: 1.040 x its ideal ((m + p - 1) / m x T; target within 10%: met)" in table
    assert "torch takes 1.077 x heat's time (target: heat no slower: met)" in table


def test_a_tiny_run_end_to_end():
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own mpiexec job: runs only at MPI size 1")
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "pipeline.py"), "--procs", "2",
               "--runs", "1", "--batches", "1", "--warmup", "1", "--micro-batches", "4",
               "--width", "16", "--stage-ms", "1"]  # fmt: skip
    done = subprocess.run(
        command, env=fresh_job_environment(), cwd=ROOT, capture_output=True, text=True,
        timeout=RUN_SECONDS, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for variant in bench.VARIANTS:
        assert f"| {variant} |" in done.stdout, done.stdout[-3000:]
    assert "| heat 1f1b |" in done.stdout and "[2, 1]" in done.stdout
