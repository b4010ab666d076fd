"""
Tests of heat/cli.py: ``python -m heat info`` in a fresh interpreter (at one process: it starts its
own), ``heat -i`` / ``heat info`` / ``--json`` through ``main(argv)``, and the answers of the
CUDA-awareness query and the GPU lines under a patched MPI and torch.
"""

import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys

import h5py
import mpi4py
import numpy as np
import pytest
import torch
from mpi4py import MPI

import heat as ht
from heat import cli
from heat.core.communication import buffers
from tests.helpers import fresh_job_environment

WORLD = ht.MPI_WORLD
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LABELS = [
    "heat",
    "Python",
    "platform",
    "torch",
    "compute threads",
    "NumPy",
    "mpi4py",
    "MPI library",
    "MPI processes",
    "h5py",
    "netCDF4",
    "zarr",
    "scikit-learn",
    "tqdm",
    "torch build",
    "GPUs",
]


def parse_report(text):
    """``label: value`` lines -> list of (label, value); every line must have that form."""
    pairs = []
    for line in text.strip().splitlines():
        label, separator, value = line.partition(":")
        assert separator and value.startswith(" "), f"not a 'label: value' line: {line!r}"
        pairs.append((label, value.strip()))
    return pairs


def optional_version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_report(pairs, processes):
    """Every line's content against what this interpreter sees."""
    labels = [label for label, _ in pairs]
    gpu_labels = [label for label in labels if re.fullmatch(r"GPU \d+", label)]
    expected = LABELS + gpu_labels + ["CUDA-aware MPI", "heat GPU buffers"]
    assert labels == expected, labels
    info = dict(pairs)
    heat_dir = os.path.dirname(os.path.abspath(ht.__file__))
    assert info["heat"] == f"{ht.__version__} ({heat_dir})"
    assert info["Python"].startswith(platform.python_version() + " (")
    assert platform.python_implementation() in info["Python"]
    assert info["platform"] == platform.platform()
    assert info["torch"].startswith(torch.__version__ + " (") and "threads" in info["torch"]
    choice = ht.core.communication.process.THREAD_CHOICE
    assert info["compute threads"].startswith(f"{torch.get_num_threads()} per process (")
    assert str(choice["reason"]).split(":")[0] in info["compute threads"]
    assert info["NumPy"] == np.__version__
    assert info["mpi4py"] == mpi4py.__version__
    first_line = " ".join(MPI.Get_library_version().strip().splitlines()[0].split())
    standard = ".".join(map(str, MPI.Get_version()))
    assert info["MPI library"] == f"{first_line} (MPI {standard})"
    assert info["MPI processes"] == str(processes)
    parallel = "yes" if h5py.get_config().mpi else "no"
    assert info["h5py"] == (
        f"{h5py.version.version} (HDF5 {h5py.version.hdf5_version}, built with MPI: {parallel})"
    )
    for distribution in ("netCDF4", "zarr", "scikit-learn", "tqdm"):
        version = optional_version(distribution)
        if version is None:
            assert info[distribution] == "not installed"
        else:
            assert info[distribution].startswith(version + " (")
    if torch.version.cuda:
        assert info["torch build"] == f"CUDA {torch.version.cuda}"
    elif not getattr(torch.version, "hip", None):
        assert info["torch build"] == "CPU only"
    if torch.cuda.is_available():
        assert info["GPUs"].startswith(f"{torch.cuda.device_count()} seen by torch")
        assert len(gpu_labels) == torch.cuda.device_count()
        for index, label in enumerate(gpu_labels):
            assert label == f"GPU {index}"
            assert info[label].startswith(torch.cuda.get_device_name(index) + " (")
    else:
        assert info["GPUs"].startswith("none seen by torch") and not gpu_labels
    supported, how = cli.mpi_cuda_support()
    answer = {True: "yes", False: "no", None: "unknown"}[supported]
    assert info["CUDA-aware MPI"] == f"{answer} ({how})"
    route = "directly" if ht.communication.CUDA_AWARE_MPI else "staged through host memory"
    assert route in info["heat GPU buffers"] and "HEAT_CUDA_AWARE_MPI" in info["heat GPU buffers"]


@pytest.mark.slow
def test_python_m_heat_info_in_a_fresh_interpreter():
    if WORLD.size != 1:
        pytest.skip("starts its own interpreter: runs only at MPI size 1")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "heat", "info"],
            env=fresh_job_environment(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=90,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"python -m heat info hung: {expired.stdout!r} {expired.stderr!r}")
    assert done.returncode == 0, done.stdout + done.stderr
    check_report(parse_report(done.stdout), processes=1)


@pytest.mark.slow
def test_installed_heat_console_script():
    if WORLD.size != 1:
        pytest.skip("starts its own interpreter: runs only at MPI size 1")
    script = os.path.join(os.path.dirname(sys.executable), "heat")
    if not os.path.exists(script):
        pytest.skip("no `heat` console script beside the interpreter (pip install -e . makes it)")
    try:
        done = subprocess.run(
            [script, "-i"],
            env=fresh_job_environment(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=90,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"heat -i hung: {expired.stdout!r} {expired.stderr!r}")
    assert done.returncode == 0, done.stdout + done.stderr
    check_report(parse_report(done.stdout), processes=1)


def test_i_flag_and_info_command_print_the_same_report(capsys):
    assert cli.main(["-i"]) == 0
    short = capsys.readouterr().out
    assert cli.main(["info"]) == 0
    long = capsys.readouterr().out
    if WORLD.rank == 0:
        assert short == long
        check_report(parse_report(short), processes=WORLD.size)
    else:  # one report per job: only rank 0 prints
        assert short == long == ""


def test_json_report(capsys):
    assert cli.main(["info", "--json"]) == 0
    from_command = capsys.readouterr().out
    assert cli.main(["--json", "-i"]) == 0
    from_flag = capsys.readouterr().out
    if WORLD.rank == 0:
        report = json.loads(from_command)
        assert report == json.loads(from_flag) == dict(cli.collect_info())
        assert list(report) == [label for label, _ in cli.collect_info()]


def test_help_version_and_bad_arguments(capsys):
    assert cli.main([]) == 0
    text = capsys.readouterr().out
    assert cli.main(["--version"]) == 0
    version = capsys.readouterr().out
    if WORLD.rank == 0:
        assert "usage: heat" in text and "info" in text and "-i, --info" in text
        assert version.strip() == ht.__version__
    with pytest.raises(SystemExit) as stop:
        cli.main(["bogus"])
    assert stop.value.code == 2
    with pytest.raises(SystemExit) as stop:
        cli.main(["info", "--bogus"])
    assert stop.value.code == 2
    capsys.readouterr()


def test_threads_line_says_how_they_were_chosen(monkeypatch):
    # issue 18, item 24: heat info shows the thread count heat chose at import, and why
    choice = ht.core.communication.process.THREAD_CHOICE
    monkeypatch.setitem(choice, "threads", 3)
    monkeypatch.setitem(choice, "reason", "heat: 12 CPUs / 4 processes on this node")
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        line = dict(cli.collect_info())["compute threads"]
        assert line == (
            "3 per process (heat: 12 CPUs / 4 processes on this node; "
            "OMP_NUM_THREADS chooses another count)"
        ), line
        torch.set_num_threads(2)  # changed by the user after import
        line = dict(cli.collect_info())["compute threads"]
        assert line.startswith("2 per process (changed after import; heat chose 3: heat: 12 CPUs")
        monkeypatch.setitem(choice, "reason", "OMP_NUM_THREADS=2 is set: left to it")
        monkeypatch.setitem(choice, "threads", 2)
        assert dict(cli.collect_info())["compute threads"] == (
            "2 per process (OMP_NUM_THREADS=2 is set: left to it)"
        )
    finally:
        torch.set_num_threads(previous)


class ClosedPipe:
    """A stdout whose reader has gone away (``heat -i | head -1``)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self):
        raise OSError("no file descriptor")


def test_closed_pipe_ends_quietly(monkeypatch):
    # issue 18, item 27: no BrokenPipeError traceback; the exit status of a SIGPIPE
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    statuses = [cli.main(argv) for argv in (["-i"], ["--json", "info"], ["--version"], [])]
    monkeypatch.undo()
    expected = 141 if WORLD.rank == 0 else 0  # only rank 0 writes
    assert statuses == [expected] * 4, statuses


@pytest.mark.slow
def test_closed_pipe_in_a_fresh_interpreter():
    if WORLD.size != 1:
        pytest.skip("starts its own interpreter: runs only at MPI size 1")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before heat writes anything
    try:
        done = subprocess.run(
            [sys.executable, "-m", "heat", "-i"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=fresh_job_environment(),
            cwd=ROOT,
            text=True,
            timeout=90,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 141, (done.returncode, done.stderr)


def test_format_info_aligns_values():
    text = cli.format_info([("a", "1"), ("longer", "two words")])
    assert text == "a:      1\nlonger: two words"
    assert cli.format_info([]) == ""


@pytest.fixture
def no_cuda_hints(monkeypatch):
    for name, _ in cli._CUDA_HINTS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delattr(MPI, "Query_cuda_support", raising=False)


def test_cuda_support_from_mpi4py_query(monkeypatch, no_cuda_hints):
    monkeypatch.setattr(MPI, "Query_cuda_support", lambda: 1, raising=False)
    assert cli.mpi_cuda_support() == (True, "MPI.Query_cuda_support()")
    monkeypatch.setattr(MPI, "Query_cuda_support", lambda: 0, raising=False)
    assert cli.mpi_cuda_support() == (False, "MPI.Query_cuda_support()")


def test_cuda_support_from_the_loaded_library(no_cuda_hints):
    libraries = buffers._loaded_mpi_libraries()
    if not libraries:
        pytest.skip("no libmpi mapped into this process (not Linux, or a static MPI)")
    supported, how = cli.mpi_cuda_support()
    if "MPIX_Query_cuda_support" in how:  # MPICH >= 4 and Open MPI have it
        assert supported in (True, False)
        assert how.endswith(tuple(os.path.basename(path) for path in libraries))
    else:
        assert supported is None


def test_cuda_support_hints_and_unknown(monkeypatch, no_cuda_hints):
    monkeypatch.setattr(buffers, "_loaded_mpi_libraries", lambda: [])
    supported, how = cli.mpi_cuda_support()
    assert supported is None and "cannot be asked" in how
    monkeypatch.setattr(cli, "mpi_cuda_support", lambda: (None, "nothing to ask"))
    assert dict(cli.collect_info())["CUDA-aware MPI"] == "unknown (nothing to ask)"
    monkeypatch.undo()
    monkeypatch.setattr(buffers, "_loaded_mpi_libraries", lambda: [])
    monkeypatch.delattr(MPI, "Query_cuda_support", raising=False)
    monkeypatch.setenv("OMPI_MCA_opal_cuda_support", "true")
    assert cli.mpi_cuda_support() == (True, "hint only: OMPI_MCA_opal_cuda_support=true")
    monkeypatch.setenv("OMPI_MCA_opal_cuda_support", "false")
    assert cli.mpi_cuda_support()[0] is None


def test_gpu_lines_with_two_gpus(monkeypatch):
    class Properties:
        def __init__(self, name):
            self.name, self.total_memory = name, 80 * 2**30

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: Properties(f"Fake {i}"))
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert cli._gpu_lines() == [
        ("torch build", "CUDA 12.8"),
        ("GPUs", "2 seen by torch; CUDA_VISIBLE_DEVICES=2,3"),
        ("GPU 0", "Fake 0 (80.0 GiB)"),
        ("GPU 1", "Fake 1 (80.0 GiB)"),
    ]


def test_missing_optional_package_is_reported(monkeypatch):
    absent = ("heat-no-such-package", "heat_no_such_module", "nothing")
    monkeypatch.setattr(cli, "OPTIONAL_PACKAGES", cli.OPTIONAL_PACKAGES + (absent,))
    info = dict(cli.collect_info())
    assert info["heat-no-such-package"] == "not installed"


def test_communication_layer_uses_the_library_answer(monkeypatch, no_cuda_hints):
    monkeypatch.delenv("HEAT_CUDA_AWARE_MPI", raising=False)
    monkeypatch.setattr(MPI, "Query_cuda_support", lambda: 1, raising=False)
    assert buffers._detect_cuda_aware() is True
    monkeypatch.setenv("HEAT_CUDA_AWARE_MPI", "0")  # the user's setting wins
    assert buffers._detect_cuda_aware() is False
    monkeypatch.delenv("HEAT_CUDA_AWARE_MPI")
    monkeypatch.setattr(MPI, "Query_cuda_support", lambda: 0, raising=False)
    assert buffers._detect_cuda_aware() is False
    assert cli.mpi_cuda_support() == buffers.query_cuda_support()
