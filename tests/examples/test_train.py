"""
Tests of heat/examples/train.py, the main job, at CI sizes under 1-4 processes: it trains to a
useful accuracy, DASO sends fewer cross-node bytes than synchronous data parallelism, ``--resume``
continues from the checkpoint (also on a first run, and exactly at the same process count), the
synthetic data is written atomically, a file without a test set gets one split off, the report
says what its figures are, progress works without tqdm, and ``--help`` documents the options.
"""

import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest
import torch

import heat as ht
from heat.examples import train
from tests.helpers import (
    assert_raises_then_collective_works,
    collective_assert,
    fresh_job_environment,
)

WORLD = ht.MPI_WORLD
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
JOB_SECONDS = 100


@pytest.fixture(autouse=True)
def keep_environment(monkeypatch):
    """The example may set HEAT_RANKS_PER_NODE; monkeypatch restores it after the test."""
    monkeypatch.setenv("HEAT_RANKS_PER_NODE", os.environ.get("HEAT_RANKS_PER_NODE", ""))


def shared_folder(tmp_path, name=None):
    """Rank 0's temporary folder (``name`` inside it, not created) on every rank."""
    folder = WORLD.bcast(str(tmp_path) if WORLD.rank == 0 else None)
    return folder if name is None else os.path.join(folder, name)


def tiny(workdir, *more):
    """Options of a run of a few seconds (1,200 rows of 8 features, an MLP of 16 units)."""
    return [
        "--samples",
        "1200",
        "--test-samples",
        "300",
        "--dimensions",
        "8",
        "--hidden",
        "16",
        "--batch-size",
        "16",
        "--window-mb",
        "0.05",
        "--no-progress",
        "--workdir",
        workdir,
    ] + list(more)


def saved_checkpoint(workdir):
    return torch.load(os.path.join(workdir, "checkpoint.pt"), weights_only=False)


def test_train_and_resume(tmp_path, monkeypatch):
    monkeypatch.delenv("HEAT_RANKS_PER_NODE")
    workdir = shared_folder(tmp_path)
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
    saved = torch.load(checkpoint, weights_only=False)
    ok = ok and saved["epoch"] == 4 and len(saved["states"]) == WORLD.size
    ok = ok and all(state["schedule"]["epoch"] == 4 for state in saved["states"])
    ok = ok and resumed["epoch_started"] == 3 and resumed["test_accuracy"] > 0.8
    collective_assert(ok, f"{results} {resumed}")


# ------------------------------------------------------------------------------------------------
# item 1: --resume on a first run; the synthetic data written atomically
# ------------------------------------------------------------------------------------------------


def test_resume_on_a_first_run_starts_at_epoch_0(tmp_path, monkeypatch):
    # a new run folder: no synthetic file and no checkpoint yet (a requeued job's first start).
    # Each rank used to decide for itself whether the file existed: those that looked after
    # rank 0 had written it skipped the barrier rank 0 waited in, and the job hung. Here the
    # other ranks look late (as they often did in a fresh job), so that is what would happen.
    workdir = shared_folder(tmp_path, "new-run")
    exists, delayed = os.path.exists, []

    def late_exists(path):
        if WORLD.rank > 0 and str(path).endswith("synthetic.h5") and not delayed:
            delayed.append(path)
            time.sleep(3)
        return exists(path)

    monkeypatch.setattr(os.path, "exists", late_exists)
    results = train.main(tiny(workdir, "--epochs", "1", "--resume"))
    ok = results["epoch_started"] == 0 and results["test_accuracy"] > 0.5
    ok = ok and saved_checkpoint(workdir)["epoch"] == 1
    collective_assert(ok, str(results))


def test_synthetic_data_is_written_atomically(tmp_path, monkeypatch):
    workdir = shared_folder(tmp_path, "run")
    target = os.path.join(workdir, "synthetic.h5")
    written = train.write_synthetic_dataset

    def killed_while_writing(path, *options):
        with h5py.File(path, "w") as f:  # half a file, as a kill during the write leaves it
            f.create_dataset("x", data=np.zeros((5, 8), np.float32))
        raise OSError("killed while writing")

    monkeypatch.setattr(train, "write_synthetic_dataset", killed_while_writing)
    assert_raises_then_collective_works(OSError, train.main, tiny(workdir, "--epochs", "1"))
    left = sorted(os.listdir(workdir)) if WORLD.rank == 0 else []
    collective_assert(left == [], f"the failed write left {left}")  # no target, no temporary

    # a broken file where the data belongs (as an interrupted writer of an older version left
    # it) is written anew, not read
    monkeypatch.setattr(train, "write_synthetic_dataset", written)
    if WORLD.rank == 0:
        with open(target, "wb") as f:
            f.write(b"\x89HDF\r\n\x1a\n" + bytes(100))
    WORLD.Barrier()
    results = train.main(tiny(workdir, "--epochs", "1", "--resume"))
    with h5py.File(target, "r") as f:
        shapes = (f["x"].shape, f["y_test"].shape)
    collective_assert(shapes == ((1200, 8), (300,)) and results["test_accuracy"] > 0.5, str(shapes))


def test_synthetic_dataset_is_reused_only_with_the_same_options(tmp_path):
    path = shared_folder(tmp_path, "data.h5")
    if WORLD.rank == 0:
        train.write_synthetic_dataset(path, 20, 5, 3, 2, seed=1)
    WORLD.Barrier()
    ok = train.synthetic_dataset_matches(path, 20, 5, 3, 2, 1)
    ok = ok and not train.synthetic_dataset_matches(path, 20, 5, 3, 2, 2)
    ok = ok and not train.synthetic_dataset_matches(path, 21, 5, 3, 2, 1)
    ok = ok and not train.synthetic_dataset_matches(path + ".missing", 20, 5, 3, 2, 1)
    collective_assert(ok)


# ------------------------------------------------------------------------------------------------
# item 7: a resumed run repeats the uninterrupted one
# ------------------------------------------------------------------------------------------------


class Interrupted(Exception):
    """Stands for a job killed between two epochs (after the first epoch's checkpoint)."""


def test_interrupted_and_resumed_run_ends_like_the_uninterrupted_one(tmp_path, monkeypatch):
    monkeypatch.delenv("HEAT_RANKS_PER_NODE")  # two emulated nodes: their momenta differ
    # three epochs: warm-up, cycling (non-blocking exchanges), cool-down
    options = ["--epochs", "3", "--max-global-skips", "2"]
    uninterrupted = train.main(tiny(shared_folder(tmp_path, "a"), *options))

    workdir = shared_folder(tmp_path, "b")
    set_epoch = ht.utils.data.StreamingDataLoader.set_epoch
    stop_at = [1]

    def interrupt(loader, epoch):
        if epoch == stop_at[0]:
            raise Interrupted(f"stopped before epoch {epoch}")
        set_epoch(loader, epoch)

    monkeypatch.setattr(ht.utils.data.StreamingDataLoader, "set_epoch", interrupt)
    with pytest.raises(Interrupted):
        train.main(tiny(workdir, *options))
    stop_at[0] = None
    resumed = train.main(tiny(workdir, *options, "--resume"))

    before = dict(uninterrupted["model"].named_parameters())
    after = dict(resumed["model"].named_parameters())
    difference = max(float((before[k] - after[k]).detach().abs().max()) for k in before)
    ok = resumed["epoch_started"] == 1 and difference <= 1e-6
    # and so do the saved optimizer states (each process's momentum)
    saved_a = saved_checkpoint(shared_folder(tmp_path, "a"))["states"][WORLD.rank]["optimizer"]
    saved_b = saved_checkpoint(workdir)["states"][WORLD.rank]["optimizer"]
    momenta = [
        (saved_a["state"][k]["momentum_buffer"], saved_b["state"][k]["momentum_buffer"])
        for k in saved_a["state"]
    ]
    ok = ok and all(torch.allclose(a, b, rtol=0, atol=1e-6) for a, b in momenta)
    collective_assert(ok, f"the parameters differ by up to {difference}")


def test_resume_on_another_layout_takes_rank_0s_state(tmp_path, monkeypatch):
    # a checkpoint saved by other processes (here: fewer places than there are now, or another
    # node layout): every process restores rank 0's state, and the run continues
    workdir = shared_folder(tmp_path)
    train.main(tiny(workdir, "--epochs", "1"))
    if WORLD.rank == 0:
        saved = saved_checkpoint(workdir)
        saved["places"] = [[0, 0]] * (WORLD.size + 1)
        torch.save(saved, os.path.join(workdir, "checkpoint.pt"))
    WORLD.Barrier()
    monkeypatch.setattr(train, "save_checkpoint", lambda *args: None)
    daso_states = []
    load = ht.optim.DASO.load_state_dict

    def record(daso, state, loader=None):
        daso_states.append(state)
        load(daso, state, loader)

    monkeypatch.setattr(ht.optim.DASO, "load_state_dict", record)
    results = train.main(tiny(workdir, "--epochs", "2", "--resume"))
    rank0_reference = WORLD.bcast(daso_states[0]["reference"] if WORLD.rank == 0 else None)
    ok = results["epoch_started"] == 1 and len(daso_states) == 1
    ok = ok and torch.equal(daso_states[0]["reference"], rank0_reference)
    collective_assert(ok, str(results))


# ------------------------------------------------------------------------------------------------
# item 22: as a new user meets it
# ------------------------------------------------------------------------------------------------


def test_one_epoch_plain_progress_and_report(tmp_path, monkeypatch, capsys):
    # --epochs 1 (was: a traceback about warm-up and cool-down epochs); without tqdm (plain
    # `pip install -e .`) the progress is printed as text; the report says what its figures are
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `import tqdm` raises ImportError
    options = [o for o in tiny(shared_folder(tmp_path), "--epochs", "1") if o != "--no-progress"]
    results = train.main(options)
    out = capsys.readouterr().out
    ok = results["epoch_started"] == 0 and results["test_accuracy"] > 0.5
    if WORLD.rank == 0:
        ok = ok and "epoch 0:" in out and " batches, " in out  # the plain progress lines
        ok = ok and "samples trained by all processes in" in out and "s of training loops" in out
        ok = ok and "0.00 MB vs 0.00 MB" not in out
        if WORLD.size == 1:
            ok = ok and "one node: no cross-node traffic" in out
        else:
            ok = ok and "synchronous data parallelism would send (computed" in out
    collective_assert(ok, out)


@pytest.mark.parametrize(
    "options, named",
    [
        (["--epochs", "1", "--cooldown-epochs", "1"], "--epochs 1"),
        (["--epochs", "0"], "--epochs"),
        (["--test-fraction", "1.5"], "--test-fraction"),
        (["--warmup-epochs", "-1"], "--warmup-epochs"),
        (["--batch-size", "0"], "--batch-size"),
    ],
)
def test_impossible_options_end_with_a_message(options, named, capsys):
    with pytest.raises(SystemExit) as stop:
        train.parse_arguments(options)
    err = capsys.readouterr().err
    collective_assert(stop.value.code == 2 and named in err and "Traceback" not in err, err)


def test_file_without_a_test_set_splits_one_off(tmp_path):
    folder = shared_folder(tmp_path)
    full = os.path.join(folder, "full.h5")
    path = os.path.join(folder, "train-only.h5")
    if WORLD.rank == 0:
        train.write_synthetic_dataset(full, 1500, 10, 8, 3, seed=2)
        with h5py.File(full, "r") as source, h5py.File(path, "w") as f:
            f["features"], f["labels"] = source["x"][...], source["y"][...]
    WORLD.Barrier()
    options = tiny(
        os.path.join(folder, "run"),
        "--file",
        path,
        "--features",
        "features",
        "--labels",
        "labels",
        "--epochs",
        "2",
        "--test-fraction",
        "0.2",
    )
    results = train.main(options)
    collective_assert(results["test_accuracy"] > 0.7, str(results))
    # a test dataset named but missing is an error naming the option, on every process
    assert_raises_then_collective_works(
        ValueError, train.main, options + ["--test-features", "nothing"]
    )


def test_held_out_rows_are_a_fixed_pseudo_random_share():
    rows = torch.arange(50_000)
    mask = train.held_out(rows, 0.1, seed=3)
    share = float(mask.double().mean())
    # the same rows whatever the order or grouping they arrive in, another set for another seed
    shuffled = torch.randperm(50_000, generator=torch.Generator().manual_seed(0))
    ok = abs(share - 0.1) < 0.01 and torch.equal(train.held_out(shuffled, 0.1, 3), mask[shuffled])
    ok = ok and not torch.equal(train.held_out(rows, 0.1, seed=4), mask)
    ok = ok and torch.equal(train.held_out(rows[:7].reshape(7, 1), 0.1, 3), mask[:7].reshape(7, 1))
    collective_assert(ok, f"share {share}")


def test_plain_progress_prints_every_tenth(capsys):
    progress = train.PlainProgress(25, "epoch 3")
    for _ in range(25):
        progress.update()
    lines = capsys.readouterr().out.splitlines()
    done = [int(line.split(": ")[1].split("/")[0]) for line in lines]
    collective_assert(done == [3, 5, 8, 10, 13, 15, 18, 20, 23, 25], "\n".join(lines))


@pytest.mark.slow
def test_readme_command_resumes_in_the_default_run_folder(tmp_path):
    # `mpiexec -n 2 python -m heat.examples.train --resume`, twice, in a fresh folder, as the
    # README says: the first run starts at epoch 0 (it hung), the second resumes from the
    # first's checkpoint in ./heat-train-run, and no temporary folder is left behind
    if WORLD.size != 1:
        pytest.skip("starts its own mpiexec job: runs only at MPI size 1")
    if not os.path.exists(MPIEXEC):
        pytest.skip("no mpiexec beside the Python interpreter")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = fresh_job_environment(OMP_NUM_THREADS="1", TMPDIR=str(temporary))
    env.pop("HEAT_RANKS_PER_NODE", None)
    outputs = []
    for epochs in ("1", "2"):
        options = [o for o in tiny("heat-train-run", "--epochs", epochs, "--resume")]
        options = options[: options.index("--workdir")] + options[options.index("--workdir") + 2 :]
        command = [MPIEXEC, "-n", "2", sys.executable, "-m", "heat.examples.train"] + options
        job = subprocess.Popen(
            command,
            cwd=str(tmp_path),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = job.communicate(timeout=JOB_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)  # mpiexec and its processes
            out, _ = job.communicate()
            pytest.fail(f"the job with --epochs {epochs} hung: {out[-3000:]}")
        assert job.returncode == 0, out[-3000:]
        outputs.append(out)
    run = tmp_path / "heat-train-run"
    assert "no checkpoint in" in outputs[0] and "training from epoch 0" in outputs[0], outputs[0]
    assert f"resumed from {run / 'checkpoint.pt'} at epoch 1" in outputs[1], outputs[1]
    assert sorted(os.listdir(run)) == ["checkpoint.pt", "synthetic.h5"]
    assert [p for p in os.listdir(temporary) if p.startswith("heat-train")] == []


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        train.parse_arguments(["--help"])
    text = capsys.readouterr().out.replace("-\n", "-")
    text = " ".join(text.split()).replace("- ", "-")  # lines wrapped, also at hyphens
    options = [
        "--file",
        "--features",
        "--labels",
        "--test-fraction",
        "--epochs",
        "--resume",
        "--ranks-per-node",
        "--window-mb",
        "--workdir",
        train.DEFAULT_WORKDIR,
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
    with h5py.File(path, "r") as f:
        x = np.asarray(f["x"], dtype=np.float64)
    ok = np.allclose(mean.numpy(), x.mean(0), rtol=1e-5) and np.allclose(
        std.numpy(), x.std(0), rtol=1e-5
    )
    collective_assert(ok and mean.dtype == torch.float32, f"{mean} {std}")
    # leaving the held-out rows out
    exclude = lambda rows: train.held_out(rows, 0.3, seed=0)  # noqa: E731
    mean, std = train.fit_standardization(path, "x", window_bytes=200, comm=WORLD, exclude=exclude)
    kept = x[~exclude(torch.arange(203)).numpy()]
    ok = np.allclose(mean.numpy(), kept.mean(0), rtol=1e-5)
    collective_assert(ok and np.allclose(std.numpy(), kept.std(0), rtol=1e-5), f"{mean} {std}")
