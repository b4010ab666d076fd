"""
benchmarks/streaming.py's heat18 column: HeAT 1.8's PartialH5Dataset run by the release's own
Python (benchmarks/anchor_partial_h5.py) on a tiny file.

The runs start their own processes, so they run only in the 1-process run of the suite, and only
where the anchor environment exists (built by benchmarks/build_anchor_env.py); the budget
arithmetic runs at every process count.
"""

import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import streaming  # noqa: E402

ANCHOR = streaming.DEFAULT_ANCHOR_PYTHON
ROWS = 2000

needs_anchor = pytest.mark.skipif(not os.path.exists(ANCHOR), reason=f"no HeAT 1.8 at {ANCHOR}")
one_process = pytest.mark.skipif(
    streaming.COMM.size != 1, reason="starts its own processes: runs only at MPI size 1"
)


@pytest.fixture
def tiny_file(tmp_path):
    path = str(tmp_path / "tiny.h5")
    if streaming.COMM.size == 1:
        with h5py.File(path, "w") as f:
            f["x"] = np.arange(ROWS * 8, dtype=np.float32).reshape(ROWS, 8)
            f["y"] = np.arange(ROWS, dtype=np.int64)
    return path


def anchor_env():
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(streaming.LAUNCHER_PREFIXES) and k != "PYTHONPATH"
    }


def test_anchor_loads_follow_the_budget_and_the_share():
    size = streaming.COMM.size
    # 8,000 rows of 100 bytes fit in the budget: 7,000 held, 1,000 refilled at a time
    assert streaming.anchor_loads(10**9, 100, 800_000) == (7000, 1000)
    # a share below that is held whole (above it HeAT 1.8 would load the file on every process)
    assert streaming.anchor_loads(3000 * size, 100, 800_000) == (3000, 428)
    # never zero, even for a budget below one row
    assert streaming.anchor_loads(10 * size, 100, 10) == (1, 1)


@pytest.mark.slow
@one_process
@needs_anchor
def test_anchor_script_streams_one_epoch(tiny_file):
    command = [
        ANCHOR,
        streaming.ANCHOR_SCRIPT,
        tiny_file,
        "--batch",
        "64",
        "--initial-load",
        "500",
        "--load-length",
        "100",
        "--repeat",
        "2",
        "--timeout",
        "60",
    ]
    done = subprocess.run(
        command,
        env=anchor_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    record = json.loads(done.stdout.splitlines()[-1])
    assert record["heat_version"].startswith("1.8")
    assert record["procs"] == 1 and record["partial"] is True
    # 4 permutations of the 500 slots, cut into full batches of 64: the remainder dropped
    assert record["samples"] == 2000 // 64 * 64
    assert record["samples_per_s"] > 0 and record["seconds"] > 0
    assert record["rows_read"] >= 500
    assert len(record["peak_rss_mb"]) == 1 and record["peak_rss_mb"][0] > 0
    assert record["peak_extra_mb"][0] <= record["peak_rss_mb"][0]


@pytest.mark.slow
@one_process
def test_anchor_script_refuses_this_repositorys_heat(tiny_file):
    env = dict(anchor_env(), PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, streaming.ANCHOR_SCRIPT, tiny_file],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode != 0
    assert "not HeAT 1.8" in done.stderr


@one_process
@needs_anchor
@pytest.mark.parametrize("warmup", [0, 1])
def test_run_anchor_returns_the_record(tiny_file, warmup):
    args = argparse.Namespace(anchor_python=ANCHOR, anchor_timeout=60.0)
    record = streaming.run_anchor(args, tiny_file, 100, 1000, 200, repeat=1, warmup=warmup)
    assert record is not None
    assert record["samples"] == ROWS // 100 * 100
    assert record["initial_load"] == 1000 and record["load_length"] == 200


@one_process
def test_run_anchor_without_an_anchor_is_skipped_or_none(tiny_file):
    args = argparse.Namespace(anchor_python="", anchor_timeout=60.0)
    assert streaming.run_anchor(args, tiny_file, 100, 1000, 200, repeat=1) is None
    args.anchor_python = os.path.join(os.path.dirname(tiny_file), "no-such-python")
    assert streaming.run_anchor(args, tiny_file, 100, 1000, 200, repeat=1) is None
