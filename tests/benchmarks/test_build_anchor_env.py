"""
benchmarks/build_anchor_env.py, the builder of the HeAT 1.8 environment (issue 18, item 27): its
plan, its torchvision stand-in and its guard against running in CI -- never the download itself.
The checks that start an interpreter run in the 1-process run of the suite; the rest at every
process count.
"""

import os
import subprocess
import sys

import pytest

import heat as ht
from tests.helpers import fresh_job_environment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
SCRIPT = os.path.join(BENCHMARKS, "build_anchor_env.py")
sys.path.insert(0, BENCHMARKS)

import build_anchor_env  # noqa: E402


def test_install_commands_pin_heat_and_torch():
    first, second = build_anchor_env.install_commands("/x/env", "2.13.0", "")
    assert first[:4] == ["/x/env/bin/python", "-m", "pip", "install"]
    assert "torch==2.13.0" in first and {"numpy", "h5py", "mpi4py", "mpich"} <= set(first)
    assert second[-2:] == ["--no-deps", "heat==1.8.0"]  # its own pins would replace that torch
    with_index = build_anchor_env.install_commands("/x/env", None, "https://example.org/simple")
    assert "torch" in with_index[0] and "--index-url" in with_index[1]
    # the default torch is this interpreter's, without a local tag such as +cpu
    import torch

    assert build_anchor_env.default_torch_version() == torch.__version__.split("+")[0]


@pytest.mark.slow
def test_torchvision_stand_in_has_the_names_heat_18_imports(tmp_path):
    site = tmp_path / f"site-{ht.MPI_WORLD.rank}"
    written = build_anchor_env.write_torchvision_stand_in(str(site))
    assert all(os.path.isfile(path) for path in written)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import torchvision, torchvision.transforms\n"
        "from torchvision import datasets, transforms\n"
        "assert torchvision.transforms.transforms.__all__ == []\n"  # heat.utils.vision_transforms
        "assert issubclass(datasets.MNIST, object)\n"  # heat.utils.data.mnist subclasses it
        "transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])\n"
        "print('ok')\n"
    )
    if ht.MPI_WORLD.size != 1:
        pytest.skip("the import check starts an interpreter: runs only at MPI size 1")
    done = subprocess.run(
        [sys.executable, "-c", code, str(site)],
        capture_output=True,
        text=True,
        env=fresh_job_environment(),
        timeout=60,
    )
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.slow
def test_dry_run_changes_nothing_and_ci_is_refused(tmp_path):
    if ht.MPI_WORLD.size != 1:
        pytest.skip("starts its own interpreter: runs only at MPI size 1")
    target = tmp_path / "anchor"
    done = subprocess.run(
        [sys.executable, SCRIPT, str(target), "--dry-run"],
        capture_output=True,
        text=True,
        env=fresh_job_environment(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "-m venv" in done.stdout and "heat==1.8.0" in done.stdout
    assert not target.exists()
    refused = subprocess.run(
        [sys.executable, SCRIPT, str(target)],
        capture_output=True,
        text=True,
        env=fresh_job_environment(CI="true"),
        timeout=60,
    )
    assert refused.returncode == 2 and "--allow-ci" in refused.stderr
    assert not target.exists()
