"""
benchmarks/run_algorithms.py (and the --ops selection of benchmarks/algorithms.py): an --ops text
that is part of no operation's name stops the driver before anything runs (issue 18, item 27),
instead of running nothing and printing an empty table. The check of the driver itself starts a
fresh interpreter, so it runs in the 1-process run of the suite; the rest runs at every count.
"""

import os
import subprocess
import sys
import time

import pytest

import heat as ht
from tests.helpers import fresh_job_environment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
sys.path.insert(0, BENCHMARKS)

import algorithms  # noqa: E402


def test_selected_ops():
    assert algorithms.selected_ops("") == list(range(len(algorithms.OPS)))
    sorts = algorithms.selected_ops("sort")
    assert sorts and all("sort" in algorithms.OPS[i].name for i in sorts)
    with pytest.raises(ValueError, match="'no such op' is part of no operation's name") as error:
        algorithms.selected_ops("no such op")
    assert algorithms.OPS[0].name in str(error.value)  # the names to choose from


def test_algorithms_rejects_an_unknown_op(capsys):
    with pytest.raises(SystemExit) as stop:
        algorithms.main(["--ops", "no such op", "--library", "numpy"])
    assert stop.value.code == 2
    assert "is part of no operation's name" in capsys.readouterr().err


@pytest.mark.slow
def test_driver_stops_before_running_anything():
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own interpreter: runs only at MPI size 1")
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            os.path.join(BENCHMARKS, "run_algorithms.py"),
            "--ops",
            "no such op",
            "--no-anchor",
            "--scale",
            "0.001",
            "--work-dir",
            os.path.join(ROOT, "no-such-dir"),
        ],
        env=fresh_job_environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "'no such op' is part of no operation's name" in done.stderr
    assert "sort" in done.stderr  # the names to choose from
    assert "work dir" not in done.stdout  # nothing was started
    assert not os.path.exists(os.path.join(ROOT, "no-such-dir"))
    assert time.monotonic() - started < 60
