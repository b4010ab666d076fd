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
    stage = {"stage_s": 0.100, "run": 0, "latency_s": 0.0}
    results = [
        {"variant": "compute only", "batch_s": 0.100},
        {
            "variant": "heat gpipe",
            "batch_s": 0.130,
            **stage,
            **memory,
            "idle_share": [0.1, 0.3],
        },  # ideal 5 / 4 * 100 ms; idle 20%, ideal bubble 1 / 5
        {"variant": "heat pipedream", "batch_s": 0.105, **stage, **memory},  # ideal 100 ms
        {"variant": "torch GPipe", "batch_s": 0.140, **stage, **memory},
        {"variant": "torch 1F1B", "error": "RuntimeError: no"},
        # a second run on a busier machine: each variant against the stage time next to it
        {
            "variant": "heat gpipe",
            "batch_s": 0.290,
            "stage_s": 0.200,
            "run": 1,
            "latency_s": 0.0,
            **memory,
            "idle_share": [0.2, 0.3],
        },
        {
            "variant": "torch GPipe",
            "batch_s": 0.260,
            "stage_s": 0.200,
            "run": 1,
            "latency_s": 0.0,
            **memory,
        },
    ]
    table = bench._table(results, args)
    # median time 210 ms, median ideal 187.5 ms, median of the ratios 1.04 and 1.16
    # without latency the simulator gives the ideal
    assert (
        "| heat gpipe | 210.0 | 187.5 | 1.100 | 22.5% (20.0%) | 0.00 | 1.000 | 4 | 2.000 | [4, 4] "
        "| 2 |" in table
    )
    assert "| heat pipedream | 105.0 | 100.0 | 1.050 | - | 0.00 | 1.000 |" in table
    assert "| torch 1F1B | error: RuntimeError: no |" in table
    assert "heat gpipe: 1.100 x its ideal ((m + p - 1) / m x T; target within 10%: met)" in table
    # per run 140 / 130 and 260 / 290
    assert (
        "torch takes 0.987 x heat's time (median over runs; target: heat no slower: NOT met)"
        in table
    )


def test_simulated_latency():
    """1F1B's steady state pays 2 (p - 1) L / p per micro-batch, GPipe only fill and drain."""
    m, p, stage = 16, 4, 16 * 0.012
    one_f_one_b = bench._simulated("heat 1f1b", stage, 0.002, m, p) / bench._ideal(
        "heat 1f1b", stage, m, p
    )
    gpipe = bench._simulated("heat gpipe", stage, 0.002, m, p) / bench._ideal(
        "heat gpipe", stage, m, p
    )
    steady = bench._simulated("heat pipedream", stage, 0.002, m, p) / stage
    assert steady == pytest.approx((0.012 + 2 * 3 * 0.002 / 4) / 0.012)
    assert one_f_one_b == pytest.approx(1.246, abs=1e-3) and gpipe == pytest.approx(1.053, abs=1e-3)


@pytest.mark.slow
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
