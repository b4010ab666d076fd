"""
The scripts of examples/ run as a newcomer runs them, ``mpiexec -n 2 python examples/X.py
--small``, and print what they promise. They start their own MPI jobs, so they run only in the
1-process run of the suite.

The jobs of the selected tests start together when the first of them needs its result (each job
is mostly the import of torch, two processes each; together they take about a third of the wall
time of one after another on two busy cores) and each test then waits for its own. A job has 90 s
from its start, inside pytest-timeout's 120 s, so a hang fails with the job's output instead of
killing the test run; jobs still running at the end are stopped.
"""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

import heat as ht
from tests.helpers import fresh_job_environment

# starts its own jobs or interpreters: pytest -m "not slow" skips the module
pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
JOB_SECONDS = 110  # below the 120 s per-test limit; six jobs share two cores

#: test name -> (script, arguments, extra environment); clustering uses the variable, not --small
JOBS = {
    "test_arrays_and_statistics": ("arrays_and_statistics.py", ["--small"], {}),
    "test_hdf5_streaming": ("hdf5_streaming.py", ["--small"], {}),
    "test_clustering": ("clustering.py", [], {"HEAT_EXAMPLES_SMALL": "1"}),
    "test_daso_training": ("daso_training.py", ["--small"], {}),
    "test_lightning_daso": ("lightning_daso.py", ["--small"], {}),
    "test_model_parallel": ("model_parallel.py", ["--small"], {}),
    "test_model_parallel_zero3": ("model_parallel.py", ["--small", "--mode", "zero3"], {}),
}


def _has_lightning():
    import importlib.util

    return importlib.util.find_spec("lightning") is not None


def clean_environment(extra):
    """A fresh job's environment: one thread per process (two processes share the cores)."""
    env = fresh_job_environment(OMP_NUM_THREADS="1")
    env.pop("HEAT_RANKS_PER_NODE", None)
    env.update(extra)
    return env


class Job:
    """One ``mpiexec -n 2`` run of an example, its output in files (pipes could fill up)."""

    def __init__(self, name, script, arguments, extra, folder):
        self.script = script
        # named after the test: one script may run in several jobs
        self.out_path = os.path.join(folder, name + ".out")
        self.err_path = os.path.join(folder, name + ".err")
        command = [MPIEXEC, "-n", "2", sys.executable, os.path.join(EXAMPLES, script)]
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.process = subprocess.Popen(
                command + arguments,
                env=clean_environment(extra),
                cwd=ROOT,
                stdout=out,
                stderr=err,
                start_new_session=True,  # its own group: stop() ends all
            )
        self.deadline = time.monotonic() + JOB_SECONDS

    def output(self):
        with open(self.out_path) as out, open(self.err_path) as err:
            return out.read(), err.read()

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # mpiexec and the ranks it started
            self.process.wait()

    def result(self):
        """The job's standard output; fails the test if it hung or did not exit with 0."""
        try:
            self.process.wait(timeout=max(self.deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            self.stop()
            out, err = self.output()
            pytest.fail(f"{self.script} ran past {JOB_SECONDS} s: {out[-3000:]!r} {err[-3000:]!r}")
        out, err = self.output()
        assert self.process.returncode == 0, f"{self.script}: {out[-3000:]}{err[-3000:]}"
        return out


@pytest.fixture(scope="module")
def jobs(request, tmp_path_factory):
    """The example jobs of the selected tests, started together on first use."""
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own mpiexec jobs: runs only at MPI size 1")
    if not os.path.exists(MPIEXEC):
        pytest.skip("no mpiexec beside the Python interpreter")
    selected = {item.originalname for item in request.session.items}
    folder = str(tmp_path_factory.mktemp("examples"))
    if not _has_lightning():
        selected.discard("test_lightning_daso")
    started = {
        name: Job(name, script, arguments, extra, folder)
        for name, (script, arguments, extra) in JOBS.items()
        if name in selected
    }
    yield started
    for job in started.values():
        job.stop()


def test_every_example_is_tested_and_listed():
    scripts = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))
    with open(__file__) as f:
        this = f.read()
    with open(os.path.join(EXAMPLES, "README.md")) as f:
        readme = f.read()
    assert scripts, "examples/ has no scripts"
    for script in scripts:
        assert f'("{script}"' in this, f"{script} has no test here"
        assert script in readme, f"{script} is not listed in examples/README.md"


def test_arrays_and_statistics(jobs):
    out = jobs["test_arrays_and_statistics"].result()
    assert "x: global shape (1001, 7), split along axis 0, 2 process(es)" in out, out
    assert re.search(r"rank 0 holds rows of shape \(501, 7\)", out), out
    assert re.search(r"rank 1 holds rows of shape \(500, 7\)", out), out
    assert "DIFFERS" not in out and "all 9 results match NumPy" in out, out


def test_hdf5_streaming(jobs):
    out = jobs["test_hdf5_streaming"].result()
    window = re.search(r"windows of (\d+) rows", out)
    assert window and int(window.group(1)) < 2000 // 4, out  # the file is larger than a window
    losses = [float(v) for v in re.findall(r"epoch \d: loss ([\d.]+)", out)]
    assert len(losses) == 2 and losses[1] < losses[0], out
    assert re.search(r"resumed after batch (\d+) of (\d+); the new loader yielded the other", out)
    assert "epoch 2 saw every one of the 2,000 rows exactly once across the resume" in out, out


def test_clustering(jobs):
    out = jobs["test_clustering"].result()
    assert "450 samples x 4 features in 3 blobs, split over 2 process(es)" in out, out
    assert "cluster sizes: [150, 150, 150]" in out, out
    heat_inertia = re.search(r"k-means: \d+ iterations, inertia ([\d.]+)", out)
    assert heat_inertia, out
    reference = re.search(r"scikit-learn inertia ([\d.]+)", out)
    if reference:  # scikit-learn installed: the same clustering of well-separated blobs
        assert float(heat_inertia.group(1)) == pytest.approx(float(reference.group(1)), rel=1e-6)


def test_daso_training(jobs):
    out = jobs["test_daso_training"].result()
    assert "2 process(es) on 2 (emulated) node(s) of [1, 1]" in out, out
    sends = [int(v) for v in re.findall(r"(\d+) non-blocking sends", out)]
    assert len(sends) == 5 and sends[0] == sends[-1] == 0 and max(sends) > 0, out
    saved = re.search(r"cross-node bytes: ([\d.]+) MB sent; .* would have sent ([\d.]+) MB", out)
    assert saved and 0 < float(saved.group(1)) < float(saved.group(2)), out
    accuracy = re.search(r"final test accuracy ([\d.]+)", out)
    assert accuracy and float(accuracy.group(1)) > 0.9, out


def test_lightning_daso(jobs):
    if "test_lightning_daso" not in jobs:
        pytest.skip("PyTorch Lightning is not installed (pip install 'heat-mpi[lightning]')")
    out = jobs["test_lightning_daso"].result()
    assert "2 process(es) on 2 (emulated) node(s) of [1, 1]" in out, out
    window = re.search(r"(\d+) batches per epoch and process; windows of (\d+) rows", out)
    assert window and int(window.group(2)) < 1200 // 4, out  # the file is larger than a window
    sends = [int(v) for v in re.findall(r"(\d+) non-blocking sends", out)]
    assert len(sends) == 4 and sends[0] == sends[-1] == 0 and max(sends) > 0, out
    accuracy = re.search(r"final validation accuracy ([\d.]+)", out)
    assert accuracy and float(accuracy.group(1)) > 0.9, out


def test_model_parallel(jobs):
    out = jobs["test_model_parallel"].result()
    assert "a pipeline of 2 stage(s) x 1 replica(s)" in out, out
    rows = re.findall(r"process \d \(stage (\d)\)((?:\s+[\d.]+){6})\s+(fits|EXCEEDS)", out)
    assert [stage for stage, _, _ in rows] == ["0", "1"] and all(f == "fits" for *_, f in rows), out
    single = re.search(r"one process((?:\s+[\d.]+){6})\s+EXCEEDS", out)
    assert single, out
    largest = max(float(figures.split()[4]) for _, figures, _ in rows)  # counted MB
    assert largest < 0.6 * float(single.group(1).split()[4]), out
    assert re.search(r"parameters after 4 steps match the one-process run's", out), out


def test_model_parallel_zero3(jobs):
    out = jobs["test_model_parallel_zero3"].result()
    assert "2 process(es): ZeRO stage 3" in out, out
    rows = re.findall(r"process \d \(shard (\d)\).*?(fits|EXCEEDS)", out)
    assert rows == [("0", "fits"), ("1", "fits")], out
    assert re.search(r"one process.*EXCEEDS", out), out
    assert re.search(r"parameters after 4 steps match the one-process run's", out), out
