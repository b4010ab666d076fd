"""
benchmarks/pipeline_cluster.py: its table's arithmetic by hand, its argument checks, and one tiny
run end to end on the emulated 2-node cluster. The run starts its own MPI job in network
namespaces, so it runs only in the 1-process run of the suite and only as root where namespaces
can be created (CI runs as root); elsewhere it skips and says why.
"""

import json
import os
import subprocess
import sys
from argparse import Namespace

import pytest

import heat as ht
from tests.helpers import fresh_job_environment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import pipeline_cluster as bench  # noqa: E402
from emulated_cluster import unsupported_reason  # noqa: E402

RUN_SECONDS = 110  # inside pytest-timeout's 120 s


def _row(variant, run, batch_s, tx=(0, 0), expected=0, batches=2):
    return {"variant": variant, "run": run, "batch_s": batch_s, "node_tx_bytes": list(tx),
            "expected_bytes": expected, "batches": batches, "ranks": 4, "ranks_per_node": 2,
            "nodes": 2, "load_avg": [1.0, 2.5]}  # fmt: skip


def test_table_by_hand():
    args = Namespace(micro_batches=8, rate="1gbit")
    results = [
        _row("compute only, 4 stages", 0, 0.100),
        _row("compute only, 2 stages", 0, 0.120),
        _row("compute only, whole model", 0, 0.090),
        # 2 batches: 2.02 MB over both nodes, 2 MB expected
        _row("pipeline across nodes", 0, 0.150, tx=(1.01e6, 1.01e6), expected=2e6),
        _row("hybrid, blocking", 0, 0.200, tx=(4e6, 4e6), expected=8e6),
        _row("data parallel (reference)", 0, 0.099, tx=(6e6, 6.3e6), expected=12e6),
        # a second, busier run: each variant against the compute-only time of its own run
        _row("compute only, 4 stages", 1, 0.120),
        _row("pipeline across nodes", 1, 0.170, tx=(1.01e6, 1.01e6), expected=2e6),
    ]
    table = bench._table(results, args)
    # ideal (8 + 4 - 1) / 8 x T: 137.5 and 165 ms, ratios 1.091 and 1.030; 1 MB per node at
    # 125 MB/s: 4 ms
    assert (
        "| pipeline across nodes | 160 | 150-170 | 151 | 1.06 | 1.01 MB | 1.00 MB | 1.010 | 4 | 2 |"
        in table
    )
    # (8 + 2 - 1) / 8 x 120 ms = 135 ms
    assert (
        "| hybrid, blocking | 200 | - | 135 | 1.48 | 4.00 MB | 4.00 MB | 1.000 | 16 | 1 |" in table
    )
    assert "| data parallel (reference) | 99 | - | 90 | 1.10 | 6.15 MB | 6.00 MB | 1.025 |" in table
    assert (
        "| compute only, 4 stages | 110 | 100-120 | - | - | 0.00 MB | 0.00 MB | - | 0 | 2 |"
        in table
    )
    assert "load average during the runs: 1.0-2.5" in table


def test_rate_and_arguments():
    assert bench.link_rate_bytes("1gbit") == 1.25e8
    assert bench.link_rate_bytes("100mbit") == 1.25e7
    with pytest.raises(ValueError, match="rate must look like"):
        bench.link_rate_bytes("fast")
    for bad in (["--rate", "1gb"], ["--layers", "6"], ["--micro-batch-size", "3"],
                ["--variants", "pipeline across nodes;nothing"]):  # fmt: skip
        with pytest.raises(SystemExit):
            bench.main(bad)


@pytest.mark.slow
def test_a_tiny_run_end_to_end(tmp_path):
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own MPI job: runs only at MPI size 1")
    reason = unsupported_reason()
    if reason is not None:
        pytest.skip(f"cannot emulate the cluster here: {reason}")
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "pipeline_cluster.py"),
               "--runs", "1", "--batches", "2", "--block", "2", "--warmup", "1", "--width", "16",
               "--micro-batches", "2", "--micro-batch-size", "4", "--layer-ms", "1",
               "--json", str(tmp_path / "out.json")]  # fmt: skip
    done = subprocess.run(
        command, env=fresh_job_environment(), cwd=ROOT, capture_output=True, text=True,
        timeout=RUN_SECONDS, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for variant in bench.VARIANTS:
        assert f"| {variant} |" in done.stdout, done.stdout[-3000:]
    results = {r["variant"]: r for r in json.loads((tmp_path / "out.json").read_text())["results"]}
    batches = 2
    # across nodes: stage 1 -> 2 one activation of 4 x 16 float32 per micro-batch, and back
    assert results["pipeline across nodes"]["expected_bytes"] == 2 * 2 * (4 * 16 * 4) * batches
    # hybrid: every process all-reduces its stage (2 layers of 16 x 16 + 16) with its replica
    layer = 4 * (16 * 16 + 16)
    assert results["hybrid, blocking"]["expected_bytes"] == 4 * 2 * layer * batches
    # data parallel: a ring over 4 processes, 2 (P - 1) / P of the model leaves each node
    assert results["data parallel (reference)"]["expected_bytes"] == 2 * 6 * layer * batches
    for variant, result in results.items():
        measured = sum(result["node_tx_bytes"])
        if variant.startswith("compute only"):  # the barriers around the block, a few packets
            assert measured < 20_000, (variant, result)
        else:  # the payload and the headers of many small messages
            assert result["expected_bytes"] <= measured, (variant, result)
