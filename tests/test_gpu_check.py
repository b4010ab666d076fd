"""
scripts/gpu_check.py, the prepared run of every CUDA path (issue 21), on the CPU: CI has no GPU, so
its CPU half runs here -- every conformance, training and performance check on ``cpu`` -- and the
CUDA half must be reported as skipped with the reason. Run as its own job (a fresh interpreter at
one process, a nested ``mpiexec -n 2`` job), so that its setting of emulated nodes stays out of the
suite's processes.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

import heat as ht
from tests.helpers import fresh_job_environment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "gpu_check.py")
FAMILIES = {
    "elementwise",
    "reductions",
    "sort and unique",
    "indexing",
    "resplit and manipulations",
    "linalg.matmul",
    "linalg.qr and svd",
    "linalg.eigh, solve, norm",
    "fft",
    "statistics and random",
    "io.hdf5 save/load",
    "cluster.KMeans",
    "PCA and cdist",
    "StreamingDataLoader on the device",
    "nn.DataParallel on the device",
    "DASO on the device",
    "operands on two devices",
    "heat info",
}


def run_check(command, timeout):
    try:
        done = subprocess.run(
            command,
            env=fresh_job_environment(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"gpu_check hung: {expired.stdout!r} {expired.stderr!r}")
    return done


def read_report(path, done):
    assert os.path.exists(path), done.stdout + done.stderr
    with open(path) as stream:
        return json.load(stream)


@pytest.fixture
def only_at_one_process():
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own jobs: runs only at MPI size 1")


@pytest.mark.slow
def test_cpu_half_with_performance(only_at_one_process, tmp_path):
    report_path = str(tmp_path / "report.json")
    done = run_check([sys.executable, SCRIPT, "--device", "cpu", "--json", report_path], 400)
    report = read_report(report_path, done)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert FAMILIES <= set(statuses), sorted(FAMILIES - set(statuses))
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert not failed, failed
    cuda_half = [c for c in report["checks"] if c["part"] == "cuda"]
    assert len(cuda_half) == 1 and cuda_half[0]["status"] == "skip"
    assert cuda_half[0]["detail"] in ("torch sees no GPU on this machine", "--device cpu chosen")
    # the performance part ran and wrote its side-by-side figures
    elementwise = report["metrics"]["elementwise per process"]
    assert elementwise["heat_add_GBps"] > 0 and elementwise["torch_add_GBps"] > 0
    assert any(name.startswith("matmul") for name in report["metrics"])
    loader = [v for k, v in report["metrics"].items() if k.startswith("loader")]
    assert loader and loader[0]["loader_on_vs_h5py"] > 0
    assert report["environment"]["device"] == "cpu:0" and report["summary"]["fail"] == 0


@pytest.mark.slow
def test_two_processes_agree_on_every_check(only_at_one_process, tmp_path):
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec on PATH")
    report_path = str(tmp_path / "report2.json")
    done = run_check(
        [
            mpiexec,
            "-n",
            "2",
            sys.executable,
            SCRIPT,
            "--device",
            "cpu",
            "--quick",
            "--json",
            report_path,
            "--check-timeout",
            "120",
        ],
        400,
    )
    report = read_report(report_path, done)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert report["environment"]["processes"] == 2
    assert not [c for c in report["checks"] if c["status"] == "fail"]
    daso = next(c for c in report["checks"] if c["name"] == "DASO on the device")
    assert "2 emulated node(s)" in daso["detail"]
    assert not report["metrics"]  # --quick: no performance part


@pytest.mark.slow
def test_asking_for_a_gpu_without_one_fails_clearly(only_at_one_process, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    done = run_check([sys.executable, SCRIPT, "--device", "gpu", "--json", ""], 120)
    assert done.returncode != 0 and "torch sees no GPU" in done.stderr
