"""
Tests of heat/examples/train.py, the main job, at CI sizes under 1-4 processes: it trains to a
useful accuracy, DASO sends fewer cross-node bytes than synchronous data parallelism, ``--resume``
continues from the checkpoint, and ``--help`` documents the options.
"""

import os

import pytest
import torch

import heat as ht
from heat.examples import train
from tests.helpers import collective_assert

WORLD = ht.MPI_WORLD


@pytest.fixture(autouse=True)
def keep_environment(monkeypatch):
    """The example may set HEAT_RANKS_PER_NODE; monkeypatch restores it after the test."""
    monkeypatch.setenv("HEAT_RANKS_PER_NODE", os.environ.get("HEAT_RANKS_PER_NODE", ""))


def test_train_and_resume(tmp_path, monkeypatch):
    monkeypatch.delenv("HEAT_RANKS_PER_NODE")
    workdir = WORLD.bcast(str(tmp_path) if WORLD.rank == 0 else None)
    small = [
        "--samples",
        "3000",
        "--test-samples",
        "600",
        "--dimensions",
        "8",
        "--hidden",
        "16",
        "--batch-size",
        "32",
        "--window-mb",
        "0.05",
        "--no-progress",
        "--workdir",
        workdir,
    ]
    results = train.main(small + ["--epochs", "3"])
    ok = results["test_accuracy"] > 0.8
    ok = ok and results["cross_node_bytes"] <= results["synchronous_cross_node_bytes"]
    if WORLD.size > 1:  # two emulated nodes: there is cross-node traffic, and less than synchronous
        ok = ok and 0 < results["cross_node_bytes"] < results["synchronous_cross_node_bytes"]
    checkpoint = os.path.join(workdir, "checkpoint.pt")
    ok = ok and os.path.exists(checkpoint)
    resumed = train.main(small + ["--epochs", "4", "--resume"])
    state = torch.load(checkpoint, weights_only=False)
    ok = ok and state["schedule"]["epoch"] == 4 and resumed["test_accuracy"] > 0.8
    collective_assert(ok, f"{results} {resumed}")


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        train.parse_arguments(["--help"])
    text = capsys.readouterr().out
    options = [
        "--file",
        "--features",
        "--labels",
        "--epochs",
        "--resume",
        "--ranks-per-node",
        "--window-mb",
    ]
    collective_assert(stop.value.code == 0 and all(o in text for o in options), text)


def test_standardization_fitted_window_by_window_matches_numpy(tmp_path):
    folder = WORLD.bcast(str(tmp_path) if WORLD.rank == 0 else None)
    path = os.path.join(folder, "standardize.h5")
    if WORLD.rank == 0:
        train.write_synthetic_dataset(path, 203, 10, 5, 3, seed=4)
    WORLD.Barrier()
    # a window of a few rows: many partial_fit calls, the last ones empty on some processes
    mean, std = train.fit_standardization(path, "x", window_bytes=200, comm=WORLD)
    import h5py
    import numpy as np

    with h5py.File(path, "r") as f:
        x = np.asarray(f["x"], dtype=np.float64)
    ok = np.allclose(mean.numpy(), x.mean(0), rtol=1e-5) and np.allclose(
        std.numpy(), x.std(0), rtol=1e-5
    )
    collective_assert(ok and mean.dtype == torch.float32, f"{mean} {std}")
