"""
Train a classifier on HDF5 data larger than the loader's memory, with DASO.

Run as ``python -m heat.examples.train`` (one process) or ``mpiexec -n 4 python -m
heat.examples.train``. With no arguments it writes a synthetic classification dataset to HDF5 in
the run folder ``./heat-train-run`` (``--workdir``; several times larger than the loader's memory
budget, written once and reused while the data options stay the same), streams it with
``heat.utils.data.StreamingDataLoader``, standardizes the features with statistics fitted window
by window, trains an MLP with ``heat.optim.DASO`` on two emulated nodes (or the real node layout
when the processes span several machines), shows progress (a tqdm bar, or plain lines without
tqdm), and prints the test accuracy, samples per second and the cross-node bytes DASO sent next to
those synchronous data parallelism would send.

Checkpoints and ``--resume``
----------------------------
After every epoch every process's DASO state (model, SGD momentum, schedule, loader position) is
gathered into ``<workdir>/checkpoint.pt`` (one state per process), written atomically by rank 0.
A run without ``--resume`` starts at epoch 0 and overwrites it. ``--resume`` continues from it,
at the beginning of the epoch after the last completed one, and starts at epoch 0 when there is
no checkpoint yet, so a requeued job can always pass it:

* on the same number of processes in the same node layout, each process restores its own
  state, and the resumed run repeats the uninterrupted one: it ends with the same parameters
  (bit for bit on CPU with gloo; a GPU's non-deterministic kernels may change the last bits);
* on another number of processes or node layout, every process restores rank 0's state: the
  same parameters, schedule and loader position (every sample still once per epoch), but every
  node continues with node 0's momentum, so the run continues from the same point without
  repeating the uninterrupted one.

``--file F --features x --labels y`` trains on your own file. Its test set is ``x_test`` /
``y_test`` (the features' and labels' names with ``_test``; or ``--test-features`` /
``--test-labels``); a file without them has a fixed, pseudo-random ``--test-fraction`` of its rows
(:func:`held_out`) split off as the test set, held in memory (each process its share) and left out
of training and of the standardization.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

import heat as ht
from heat.core.communication.node_groups import ring_allreduce_bytes
from heat.core.communication.verdicts import root_decides as _root_decides

# the atomic save and the verdicts of process 0 of heat's file I/O: the example writes its files
# (and decides about them) exactly as ht.save does
from heat.core.io._collective import _atomic_save

__all__ = ["main", "write_synthetic_dataset", "held_out"]

#: the run folder when ``--workdir`` is not given (relative to the current directory)
DEFAULT_WORKDIR = "heat-train-run"
#: what a checkpoint of this example holds (see :func:`save_checkpoint`)
CHECKPOINT_FORMAT = "heat.examples.train/2"
#: the HDF5 attribute of the synthetic file that names the options it was written with
SYNTHETIC_ATTRIBUTE = "heat.examples.train"


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults in the help, except the unset ones (None, False): their help says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def parse_arguments(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """
    The command line of the example; an impossible combination ends with argparse's error
    (exit status 2, the same message on every process).
    """
    parser = argparse.ArgumentParser(
        prog="python -m heat.examples.train",
        description="Stream an HDF5 classification dataset and train an MLP with DASO.",
        formatter_class=_HelpFormatter,
    )
    data = parser.add_argument_group("data")
    data.add_argument("--file", help="HDF5 file to train on (default: write a synthetic one)")
    data.add_argument("--features", default="x", help="training features dataset (rows x features)")
    data.add_argument("--labels", default="y", help="training labels dataset (integer classes)")
    data.add_argument(
        "--test-features",
        help="test features dataset (default: FEATURES_test if the file has it, else a split)",
    )
    data.add_argument(
        "--test-labels", help="test labels dataset (default: LABELS_test if the file has it)"
    )
    data.add_argument(
        "--test-fraction",
        type=float,
        default=0.1,
        help="share of the rows of a --file without test datasets split off as the test set",
    )
    data.add_argument("--samples", type=int, default=120_000, help="synthetic training rows")
    data.add_argument("--test-samples", type=int, default=10_000, help="synthetic test rows")
    data.add_argument("--dimensions", type=int, default=32, help="synthetic features per row")
    data.add_argument("--classes", type=int, default=4, help="synthetic classes")
    data.add_argument(
        "--workdir",
        default=DEFAULT_WORKDIR,
        help="run folder, relative to the current one: the synthetic file and the checkpoint "
        "(kept, so that --resume finds them)",
    )
    data.add_argument(
        "--window-mb", type=float, default=2.0, help="memory budget of the loader per process (MiB)"
    )
    training = parser.add_argument_group("training")
    training.add_argument("--epochs", type=int, default=6, help="training epochs")
    training.add_argument("--batch-size", type=int, default=128, help="rows per batch and process")
    training.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers")
    training.add_argument("--lr", type=float, default=0.05, help="learning rate of one process")
    training.add_argument(
        "--warmup-epochs",
        type=int,
        default=None,
        help="DASO blocking epochs at the start (default: 1)",
    )
    training.add_argument(
        "--cooldown-epochs",
        type=int,
        default=None,
        help="DASO blocking epochs at the end (default: 1, or 0 with --epochs 1)",
    )
    training.add_argument(
        "--max-global-skips", type=int, default=4, help="DASO's largest global skip"
    )
    training.add_argument(
        "--ranks-per-node",
        type=int,
        default=None,
        help="processes per emulated node (default: two emulated nodes on one machine, the real "
        "layout across machines; HEAT_RANKS_PER_NODE overrides)",
    )
    training.add_argument("--seed", type=int, default=0, help="seed of data, model and shuffling")
    training.add_argument(
        "--resume",
        action="store_true",
        help="continue from the checkpoint in --workdir (from epoch 0 if there is none yet)",
    )
    training.add_argument("--no-progress", action="store_true", help="no progress display")
    args = parser.parse_args(argv)
    problem = _check_arguments(args)
    if problem:
        parser.error(problem)
    return args


def _check_arguments(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the options (None if nothing); fills in the warm-up and cool-down."""
    at_least = {
        "--samples": (args.samples, 1),
        "--test-samples": (args.test_samples, 1),
        "--dimensions": (args.dimensions, 1),
        "--classes": (args.classes, 2),
        "--epochs": (args.epochs, 1),
        "--batch-size": (args.batch_size, 1),
        "--hidden": (args.hidden, 1),
        "--max-global-skips": (args.max_global_skips, 1),
        "--seed": (args.seed, 0),
    }
    for option, (value, minimum) in at_least.items():
        if value < minimum:
            return f"{option} must be >= {minimum}, got {value}"
    for option, value in (("--lr", args.lr), ("--window-mb", args.window_mb)):
        if not value > 0:
            return f"{option} must be > 0, got {value}"
    if not 0 < args.test_fraction < 1:
        return f"--test-fraction must be between 0 and 1, got {args.test_fraction}"
    if args.warmup_epochs is None:
        args.warmup_epochs = 1
    if args.cooldown_epochs is None:
        args.cooldown_epochs = min(1, args.epochs - min(args.warmup_epochs, args.epochs))
    for option, value in (
        ("--warmup-epochs", args.warmup_epochs),
        ("--cooldown-epochs", args.cooldown_epochs),
    ):
        if value < 0:
            return f"{option} must be >= 0, got {value}"
    if args.warmup_epochs + args.cooldown_epochs > args.epochs:
        return (
            f"--epochs {args.epochs} is shorter than --warmup-epochs {args.warmup_epochs} plus "
            f"--cooldown-epochs {args.cooldown_epochs}: train more epochs or give fewer blocking "
            "ones"
        )
    return None


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------


def write_synthetic_dataset(
    path: str, samples: int, test_samples: int, dimensions: int, classes: int, seed: int
) -> None:
    """
    Write ``x``/``y`` and ``x_test``/``y_test``: Gaussian features of very different scales and
    offsets (standardization matters), labels from a random linear teacher with noise.

    Parameters
    ----------
    path : str
        The HDF5 file, written in place (:func:`main` writes it to a temporary name in the same
        folder and renames it once complete).
    samples, test_samples : int
        Rows of ``x``/``y`` and of ``x_test``/``y_test``.
    dimensions, classes : int
        Features per row; classes of the labels (0 .. classes - 1).
    seed : int
        Seed of NumPy's generator: the same options write the same data.

    Notes
    -----
    The options are stored last, as the file's attribute ``SYNTHETIC_ATTRIBUTE``: a file cut
    short lacks it, and :func:`synthetic_dataset_matches` does not take it for the data.
    """
    import h5py

    rng = np.random.default_rng(seed)
    scales = np.exp(rng.uniform(-2, 4, dimensions)).astype(np.float32)
    offsets = rng.uniform(-20, 20, dimensions).astype(np.float32)
    teacher = rng.standard_normal((dimensions, classes)).astype(np.float32)
    chunk = 4096
    with h5py.File(path, "w") as f:
        for name, rows in (("", samples), ("_test", test_samples)):
            x = f.create_dataset(
                "x" + name, (rows, dimensions), np.float32, chunks=(min(chunk, rows), dimensions)
            )
            y = f.create_dataset("y" + name, (rows,), np.int64, chunks=(min(chunk, rows),))
            for start in range(0, rows, chunk):
                count = min(chunk, rows - start)
                z = rng.standard_normal((count, dimensions)).astype(np.float32)
                logits = z @ teacher + 0.3 * rng.standard_normal((count, classes))
                x[start : start + count] = z * scales + offsets
                y[start : start + count] = logits.argmax(axis=1)
        f.attrs[SYNTHETIC_ATTRIBUTE] = _synthetic_options(
            samples, test_samples, dimensions, classes, seed
        )


def _synthetic_options(*options: int) -> str:
    samples, test_samples, dimensions, classes, seed = options
    return json.dumps(
        dict(
            samples=samples,
            test_samples=test_samples,
            dimensions=dimensions,
            classes=classes,
            seed=seed,
        )
    )


def synthetic_dataset_matches(path: str, *options: int) -> bool:
    """
    Whether ``path`` is a complete synthetic file written with these options (samples,
    test_samples, dimensions, classes, seed): the attribute written last says so.
    """
    import h5py

    if not os.path.exists(path):
        return False
    try:
        with h5py.File(path, "r") as f:
            return f.attrs.get(SYNTHETIC_ATTRIBUTE) == _synthetic_options(*options)
    except OSError:  # not an HDF5 file (e.g. cut short by an old, non-atomic writer)
        return False


def prepare_synthetic_dataset(path: str, args: argparse.Namespace, comm) -> bool:
    """
    Make sure ``path`` holds the synthetic data of ``args``: rank 0 looks, and writes it (to a
    temporary name in the same folder, renamed over ``path`` once complete) when it is missing
    or was written with other options. Every process learns the outcome, or raises the same
    error. Returns whether it was written.
    """
    options = (args.samples, args.test_samples, args.dimensions, args.classes, args.seed)
    if _root_decides(comm, synthetic_dataset_matches, path, *options):
        return False

    def write(temporary: str, _existed: bool) -> None:
        _root_decides(comm, write_synthetic_dataset, temporary, *options)

    _atomic_save(path, comm, write)
    return True


def _test_datasets(path: str, names: Tuple[str, str], explicit: Tuple[bool, bool]):
    """On rank 0: the test datasets of ``path``, or None (split one off); errors for bad names."""
    import h5py

    if not os.path.isfile(path):
        raise FileNotFoundError(f"--file: no such file: '{path}'")
    with h5py.File(path, "r") as f:
        present = [name in f for name in names]
    for option, name, given, found in zip(
        ("--test-features", "--test-labels"), names, explicit, present
    ):
        if given and not found:
            raise ValueError(f"{option}: '{path}' has no dataset '{name}'")
    if all(present):
        return list(names)
    if any(explicit):
        missing = [name for name, found in zip(names, present) if not found]
        raise ValueError(
            f"--test-features/--test-labels: '{path}' has no dataset {missing[0]!r}; give both "
            "test datasets, or neither to split a test set off"
        )
    return None


def held_out(rows: torch.Tensor, fraction: float, seed: int) -> torch.Tensor:
    """
    Which of the global row numbers ``rows`` belong to a test set split off the training file.

    A row is held out when a 64-bit mix of its number and ``seed`` (the finalizer of SplitMix64)
    falls in the lowest ``fraction`` of the range: a fixed, pseudo-random choice of about
    ``fraction`` of the rows, independent of the process count, the epoch and the order in which
    rows arrive, so training and evaluation agree on it in every run.

    Parameters
    ----------
    rows : torch.Tensor
        Global row numbers (integers, any shape).
    fraction : float
        Share of the rows to hold out, in (0, 1).
    seed : int
        Non-negative.

    Returns
    -------
    torch.Tensor
        A boolean mask of the shape of ``rows``.

    Examples
    --------
    >>> float(held_out(torch.arange(100_000), 0.1, seed=0).float().mean())  # doctest: +SKIP
    0.0998
    """
    offset = np.uint64((seed * 0x9E3779B97F4A7C15) % 2**64)
    mixed = rows.cpu().numpy().astype(np.uint64) + offset
    mixed ^= mixed >> np.uint64(30)
    mixed *= np.uint64(0xBF58476D1CE4E5B9)
    mixed ^= mixed >> np.uint64(27)
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(31)
    uniform = (mixed >> np.uint64(11)).astype(np.float64) / float(2**53)
    return torch.from_numpy(uniform < fraction).to(rows.device)


def fit_standardization(
    path: str,
    features: str,
    window_bytes: int,
    comm: ht.MPICommunication,
    exclude: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Mean and standard deviation of every feature: ``ht.preprocessing.StandardScaler`` fitted
    window by window (``partial_fit`` on each streamed window of every process, in float64),
    one pass over the file and never more than a window in memory. ``exclude`` (global row
    numbers -> boolean mask) leaves rows out, e.g. the test rows of :func:`held_out`.
    """
    loader = ht.utils.data.StreamingDataLoader(
        path,
        [features],
        batch_size=4096,
        shuffle=False,
        window_bytes=window_bytes,
        comm=comm,
        return_indices=exclude is not None,
    )
    scaler = ht.preprocessing.StandardScaler()
    for batch in loader:  # every process takes as many windows (empty ones at the end)
        x = batch[0] if exclude is None else batch[0][~exclude(batch[1])]
        scaler.partial_fit(ht.array(x, is_split=0, comm=comm))
    # replicated (split=None) results: every process holds them whole
    mean = scaler.mean_.larray.to(torch.float32)
    std = scaler.scale_.larray.to(torch.float32)
    return mean, std


def split_off_test_set(
    path: str,
    datasets: Sequence[str],
    select: Callable[[torch.Tensor], torch.Tensor],
    window_bytes: int,
    comm: ht.MPICommunication,
) -> Tuple[torch.Tensor, torch.Tensor, int]:
    """
    The rows ``select`` picks (by global row number) from the features and labels datasets,
    this process's share of them, in one streamed pass; and the largest label of all rows.
    """
    loader = ht.utils.data.StreamingDataLoader(
        path,
        list(datasets),
        batch_size=4096,
        shuffle=False,
        window_bytes=window_bytes,
        comm=comm,
        return_indices=True,
    )
    features, labels, largest = [], [], -1
    for x, y, rows in loader:
        keep = select(rows)
        features.append(x[keep].clone())
        labels.append(y[keep].clone())
        if y.numel():
            largest = max(largest, int(y.max()))
    largest = int(comm.allreduce(largest, op=ht.MPI.MAX))
    if not features:
        return torch.empty(0), torch.empty(0, dtype=torch.int64), largest
    return torch.cat(features), torch.cat(labels), largest


def emulate_nodes(ranks_per_node: Optional[int], comm: ht.MPICommunication) -> None:
    """Two emulated nodes on one machine unless told otherwise (HEAT_RANKS_PER_NODE wins)."""
    if os.environ.get("HEAT_RANKS_PER_NODE"):
        return
    if ranks_per_node is None:
        one_machine = len(set(comm.allgather(ht.MPI.Get_processor_name()))) == 1
        if not one_machine or comm.size == 1:
            return
        ranks_per_node = math.ceil(comm.size / 2)
    if ranks_per_node > 0:
        os.environ["HEAT_RANKS_PER_NODE"] = str(ranks_per_node)


# ------------------------------------------------------------------------------------------------
# checkpoints
# ------------------------------------------------------------------------------------------------


def _node_places(daso: ht.optim.DASO) -> List[List[int]]:
    """(node, rank on the node) of every process: a checkpoint restores per process only here."""
    groups = daso.groups
    return daso.comm.allgather([groups.node_index, groups.local_rank])


def save_checkpoint(path: str, daso: ht.optim.DASO) -> None:
    """
    Gather every process's :meth:`DASO.state_dict` (between epochs: the same model everywhere,
    each node's own optimizer momentum) on rank 0, which writes them atomically to ``path``
    (a temporary file in the same folder, renamed over ``path``). Collective.
    """
    comm = daso.comm
    places = _node_places(daso)
    states = comm.gather(daso.state_dict(), root=0)
    checkpoint = None
    if comm.rank == 0:
        checkpoint = {
            "format": CHECKPOINT_FORMAT,
            "epoch": daso.epoch,
            "places": places,
            "states": states,
        }

    def write(temporary: str, _existed: bool) -> None:
        _root_decides(comm, torch.save, checkpoint, temporary)

    _atomic_save(path, comm, write)


def _open_checkpoint(path: str, opened: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """On rank 0: read the checkpoint into ``opened``; what every process needs to know of it."""
    if not os.path.exists(path):
        return None
    checkpoint = torch.load(path, weights_only=False)
    if isinstance(checkpoint, dict) and "schedule" in checkpoint and "format" not in checkpoint:
        # written by an earlier version of this example: rank 0's DASO state alone
        checkpoint = {
            "format": CHECKPOINT_FORMAT,
            "epoch": checkpoint["schedule"]["epoch"],
            "places": None,
            "states": [checkpoint],
        }
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"'{path}' is not a checkpoint of heat.examples.train")
    opened["states"] = checkpoint["states"]
    return {"epoch": checkpoint["epoch"], "places": checkpoint["places"]}


def load_checkpoint(path: str, daso: ht.optim.DASO) -> Optional[Tuple[int, bool]]:
    """
    Restore the checkpoint at ``path`` (rank 0 reads it): each process its own state when the
    processes sit as they did when it was saved, else rank 0's state on every process.
    Collective; the same error on every process if the file cannot be used.

    Returns
    -------
    (epoch, exact) or None
        The epoch it continues with and whether each process got its own state; None when
        there is no checkpoint.
    """
    comm = daso.comm
    opened: Dict[str, Any] = {}
    summary = _root_decides(comm, _open_checkpoint, path, opened)
    if summary is None:
        return None
    exact = summary["places"] == _node_places(daso)
    states = opened.get("states")
    if exact:
        state = comm.scatter(states, root=0) if comm.size > 1 else states[0]
    else:
        state = comm.bcast(states[0] if comm.rank == 0 else None, root=0)
    daso.load_state_dict(state)
    return summary["epoch"], exact


# ------------------------------------------------------------------------------------------------
# training
# ------------------------------------------------------------------------------------------------


def evaluate(model: torch.nn.Module, batches, mean, std, comm) -> float:
    """Accuracy over the whole test set (each process its share of ``(x, y)`` batches)."""
    correct = seen = 0
    model.eval()
    with torch.no_grad():
        for x, y in batches:
            correct += int((model((x - mean) / std).argmax(1) == y).sum())
            seen += y.numel()
    model.train()
    correct, seen = comm.allreduce(np.array([correct, seen]))
    return correct / max(seen, 1)


def synchronous_cross_node_bytes(daso: ht.optim.DASO, batches: int) -> int:
    """
    Bytes all processes would send across nodes in ``batches`` steps of synchronous data
    parallelism with the same hierarchy (float32 gradients, each process its slice, ring
    all-reduce across the nodes). Computed from the model's size, not measured.
    """
    groups = daso.groups
    if groups.num_nodes == 1:
        return 0
    numel = sum(p.numel() for p in daso.module.parameters() if p.requires_grad)
    per_batch = 0
    for size in groups.node_sizes:
        for j in range(size):
            start, stop = ht.optim.averaging.slice_bounds(numel, size, j)
            per_batch += ring_allreduce_bytes((stop - start) * 4, groups.num_nodes)
    return per_batch * batches


def _have_tqdm() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


class PlainProgress:
    """
    Progress of an epoch in plain text, for when tqdm is not installed: a line at every tenth
    of the batches (and at the last one).

    Parameters
    ----------
    total : int
        Batches of the epoch.
    label : str
        Starts every line.
    """

    def __init__(self, total: int, label: str):
        self.total, self.label, self.done = total, label, 0
        self.marks = {math.ceil(total * tenth / 10) for tenth in range(1, 11)}
        self.began = time.perf_counter()

    def update(self) -> None:
        """Count one batch; print when a tenth of the epoch is complete."""
        self.done += 1
        if self.done in self.marks:
            seconds = time.perf_counter() - self.began
            print(f"{self.label}: {self.done}/{self.total} batches, {seconds:.1f} s", flush=True)


def _make_folder(folder: str) -> str:
    folder = os.path.abspath(folder)
    os.makedirs(folder, exist_ok=True)
    return folder


def prepare_data(args: argparse.Namespace, comm) -> Tuple[str, str, Optional[List[str]]]:
    """
    The run folder, the training file, and its test datasets (None: split a test set off).
    Every decision about files is taken once, on rank 0, and broadcast, or its error raised on
    every process: processes that looked for themselves could see a file appear in between.
    """
    workdir = _root_decides(comm, _make_folder, args.workdir)
    say = print if comm.rank == 0 else (lambda *a, **k: None)
    if args.file is None:
        path = os.path.join(workdir, "synthetic.h5")
        if prepare_synthetic_dataset(path, args, comm):
            say(f"wrote {args.samples:,} x {args.dimensions} training rows to {path}")
        else:
            say(f"using the synthetic data in {path} (written earlier with the same options)")
        return workdir, path, ["x_test", "y_test"]
    names = (
        args.test_features or args.features + "_test",
        args.test_labels or args.labels + "_test",
    )
    explicit = (args.test_features is not None, args.test_labels is not None)
    return workdir, args.file, _root_decides(comm, _test_datasets, args.file, names, explicit)


def load_test_set(args, path, test_datasets, exclude, window_bytes, comm) -> Tuple[Any, int]:
    """
    This process's share of the test set as ``(x, y)`` batches (streamed from the test
    datasets, or split off in memory), and the number of classes (the largest label + 1).
    """
    if exclude is None:
        loader = ht.utils.data.StreamingDataLoader(
            path,
            test_datasets,
            batch_size=1024,
            shuffle=False,
            window_bytes=window_bytes,
            comm=comm,
        )
        largest = max((int(y.max()) for _, y in loader), default=0)
        return loader, int(comm.allreduce(largest, op=ht.MPI.MAX)) + 1
    x_test, y_test, largest = split_off_test_set(
        path, [args.features, args.labels], exclude, window_bytes, comm
    )
    held = comm.allreduce(len(y_test))
    if comm.rank == 0:
        print(
            f"{path} has no test datasets: {held:,} of its rows (--test-fraction "
            f"{args.test_fraction}) are the test set"
        )
    batches = [(x_test[i : i + 1024], y_test[i : i + 1024]) for i in range(0, len(y_test), 1024)]
    return batches, largest + 1


def report(results: Dict[str, Any], args, records: int, num_nodes: int) -> None:
    """Rank 0 prints what the run measured, each figure saying what it is."""
    accuracy, samples, seconds = (
        results["test_accuracy"],
        results["samples"],
        results["training_seconds"],
    )
    print(f"test accuracy {accuracy:.4f}")
    if results["epoch_started"] >= args.epochs:
        print(
            f"nothing to train: the checkpoint is at epoch {results['epoch_started']} of "
            f"--epochs {args.epochs}"
        )
    else:
        print(
            f"{results['samples_per_s']:,.0f} samples/s ({samples:,} samples trained by all "
            f"processes in {seconds:.1f} s of training loops; data preparation, evaluation and "
            "checkpoints not counted)"
        )
    daso_bytes, sync_bytes = results["cross_node_bytes"], results["synchronous_cross_node_bytes"]
    if num_nodes == 1:
        print("one node: no cross-node traffic, DASO and synchronous data parallelism alike")
    elif records:
        saved = 1 - daso_bytes / sync_bytes if sync_bytes else 0.0
        print(
            f"cross-node bytes: {daso_bytes / 1e6:.2f} MB sent by DASO (measured) vs "
            f"{sync_bytes / 1e6:.2f} MB synchronous data parallelism would send (computed for "
            f"the same {records} batches): {saved:.0%} saved"
        )
    print(
        f"total {results['seconds']:.1f} s; run folder {results['workdir']} (--resume "
        "continues from it)"
    )


def main(argv: Optional[List[str]] = None) -> dict:
    """
    Run the example; returns its results (rank 0 also prints them). Collective.

    Parameters
    ----------
    argv : list of str, optional
        The command line without the program name (default: ``sys.argv[1:]``); see
        ``python -m heat.examples.train --help``.

    Returns
    -------
    dict
        ``test_accuracy``; ``samples_per_s`` (``samples``, trained by all processes, divided by
        ``training_seconds``, the longest time a process spent in the training loops: data
        preparation, evaluation and checkpoints not counted); ``cross_node_bytes`` (sent by
        DASO, measured) and ``synchronous_cross_node_bytes`` (computed for the same batches);
        ``exposed_communication_s``; ``seconds`` (the whole run); ``epoch_started`` (0, or the
        epoch a resumed run continued with); ``workdir``; ``model`` (the trained module).
    """
    args = parse_arguments(argv)
    comm = ht.MPI_WORLD
    rank0 = comm.rank == 0
    say = print if rank0 else (lambda *a, **k: None)
    began = time.perf_counter()

    workdir, path, test_datasets = prepare_data(args, comm)
    exclude = None
    if test_datasets is None:

        def exclude(rows: torch.Tensor) -> torch.Tensor:
            return held_out(rows, args.test_fraction, args.seed)

    window_bytes = int(args.window_mb * 2**20)
    mean, std = fit_standardization(path, args.features, window_bytes, comm, exclude=exclude)
    test_batches, classes = load_test_set(args, path, test_datasets, exclude, window_bytes, comm)

    emulate_nodes(args.ranks_per_node, comm)
    tqdm_bar = rank0 and not args.no_progress and _have_tqdm()
    plain_progress = rank0 and not args.no_progress and not tqdm_bar
    loader = ht.utils.data.StreamingDataLoader(
        path,
        [args.features, args.labels],
        batch_size=args.batch_size,
        seed=args.seed,
        window_bytes=window_bytes,
        comm=comm,
        progress=tqdm_bar,
        return_indices=exclude is not None,
    )
    dimensions = int(mean.numel())
    with torch.random.fork_rng():
        torch.manual_seed(args.seed)
        net = torch.nn.Sequential(
            torch.nn.Linear(dimensions, args.hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(args.hidden, args.hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(args.hidden, classes),
        )
    lr = ht.optim.scaled_learning_rate(args.lr, comm.size, rule="sqrt")
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    daso = ht.optim.DASO(
        local_optimizer=optimizer,
        total_epochs=args.epochs,
        warmup_epochs=args.warmup_epochs,
        cooldown_epochs=args.cooldown_epochs,
        max_global_skips=args.max_global_skips,
    )
    model = ht.nn.DataParallelMultiGPU(net, daso)
    daso.attach_loader(loader)
    topology = daso.groups
    say(
        f"{comm.size} processes on {topology.num_nodes} node(s) of {topology.node_sizes} "
        f"processes; {sum(p.numel() for p in net.parameters()):,} parameters"
    )

    checkpoint = os.path.join(workdir, "checkpoint.pt")
    if args.resume:
        resumed = load_checkpoint(checkpoint, daso)
        if resumed is None:
            say(f"no checkpoint in {workdir} yet: training from epoch 0")
        else:
            how = (
                "each process its own state: the run continues exactly"
                if resumed[1]
                else "rank 0's state on every process (saved on another process layout)"
            )
            say(f"resumed from {checkpoint} at epoch {daso.epoch}, {how}")
    epoch_started = daso.epoch

    trained = 0
    training_seconds = 0.0
    first_batch = len(daso.timeline)
    while daso.epoch < args.epochs:
        loader.set_epoch(daso.epoch)
        progress = PlainProgress(len(loader), f"epoch {daso.epoch}") if plain_progress else None
        epoch_began = time.perf_counter()
        total_loss, batches = 0.0, 0
        for batch in loader:
            x, y = batch[0], batch[1]
            if exclude is not None:  # the split-off test rows are not trained on
                keep = ~exclude(batch[2])
                x, y = x[keep], y[keep]
            daso.zero_grad()
            # the mean over the batch; a batch left empty by the split still steps (every
            # process takes every step) with a zero loss
            loss = torch.nn.functional.cross_entropy(
                model((x - mean) / std), y, reduction="sum"
            ) / max(y.numel(), 1)
            loss.backward()
            daso.step()
            total_loss += float(loss.detach())
            batches += 1
            trained += y.numel()
            if progress is not None:
                progress.update()
        daso.epoch_loss_logic(total_loss / max(batches, 1))
        training_seconds += time.perf_counter() - epoch_began
        accuracy = evaluate(net, test_batches, mean, std, comm)
        say(
            f"epoch {daso.epoch - 1}: loss {total_loss / max(batches, 1):.4f}, test accuracy "
            f"{accuracy:.4f}; next: {daso.schedule.phase}, global skip {daso.global_skip}"
        )
        save_checkpoint(checkpoint, daso)
    training_seconds = comm.allreduce(training_seconds, op=ht.MPI.MAX)
    records = list(daso.timeline)[first_batch:]
    samples = comm.allreduce(trained)
    results = {
        "test_accuracy": evaluate(net, test_batches, mean, std, comm),
        "samples": samples,
        "samples_per_s": samples / training_seconds if training_seconds > 0 else 0.0,
        "training_seconds": training_seconds,
        "cross_node_bytes": comm.allreduce(sum(r.bytes_cross_node for r in records)),
        "synchronous_cross_node_bytes": synchronous_cross_node_bytes(daso, len(records)),
        "exposed_communication_s": comm.allreduce(
            sum(r.exposed_seconds for r in records), op=ht.MPI.MAX
        ),
        "seconds": time.perf_counter() - began,
        "epoch_started": epoch_started,
        "workdir": workdir,
        "model": net,
    }
    if rank0:
        report(results, args, len(records), topology.num_nodes)
    return results


if __name__ == "__main__":
    main()
