"""
Train a classifier on HDF5 data larger than the loader's memory, with DASO.

Run as ``python -m heat.examples.train`` (one process) or ``mpiexec -n 4 python -m
heat.examples.train``. With no arguments it writes a synthetic classification dataset to HDF5 in a
temporary folder (several times larger than the loader's memory budget), streams it with
``heat.utils.data.StreamingDataLoader``, standardizes the features with statistics fitted window
by window, trains an MLP with ``heat.optim.DASO`` on two emulated nodes (or the real node layout
when the processes span several machines), shows a progress bar, and prints the test accuracy,
samples per second and the cross-node bytes DASO saved compared with synchronous data
parallelism. ``--resume`` continues from the last checkpoint (saved after every epoch).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from typing import List, Optional, Tuple

import numpy as np
import torch

import heat as ht

__all__ = ["main", "write_synthetic_dataset"]


def parse_arguments(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m heat.examples.train",
        description="Stream an HDF5 classification dataset and train an MLP with DASO.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    data = parser.add_argument_group("data")
    data.add_argument("--file", help="HDF5 file to train on (default: write a synthetic one)")
    data.add_argument("--features", default="x", help="training features dataset (rows x features)")
    data.add_argument("--labels", default="y", help="training labels dataset (integer classes)")
    data.add_argument("--test-features", default="x_test", help="test features dataset")
    data.add_argument("--test-labels", default="y_test", help="test labels dataset")
    data.add_argument("--samples", type=int, default=120_000, help="synthetic training rows")
    data.add_argument("--test-samples", type=int, default=10_000, help="synthetic test rows")
    data.add_argument("--dimensions", type=int, default=32, help="synthetic features per row")
    data.add_argument("--classes", type=int, default=4, help="synthetic classes")
    data.add_argument(
        "--workdir", help="folder for the synthetic file and checkpoints (default: a temporary one)"
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
        "--warmup-epochs", type=int, default=1, help="DASO blocking epochs at the start"
    )
    training.add_argument(
        "--cooldown-epochs", type=int, default=1, help="DASO blocking epochs at the end"
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
    training.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    training.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------


def write_synthetic_dataset(
    path: str, samples: int, test_samples: int, dimensions: int, classes: int, seed: int
) -> None:
    """
    Write ``x``/``y`` and ``x_test``/``y_test``: Gaussian features of very different scales and
    offsets (standardization matters), labels from a random linear teacher with noise.
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


def fit_standardization(
    path: str, features: str, window_bytes: int, comm: ht.MPICommunication
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Mean and standard deviation of every feature: ``ht.preprocessing.StandardScaler`` fitted
    window by window (``partial_fit`` on each streamed window of every process, in float64),
    one pass over the file and never more than a window in memory.
    """
    loader = ht.utils.data.StreamingDataLoader(
        path, [features], batch_size=4096, shuffle=False, window_bytes=window_bytes, comm=comm
    )
    scaler = ht.preprocessing.StandardScaler()
    for (x,) in loader:  # every process takes as many windows (empty ones at the end)
        scaler.partial_fit(ht.array(x, is_split=0, comm=comm))
    # replicated (split=None) results: every process holds them whole
    mean = scaler.mean_.larray.to(torch.float32)
    std = scaler.scale_.larray.to(torch.float32)
    return mean, std


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
# training
# ------------------------------------------------------------------------------------------------


def evaluate(model: torch.nn.Module, loader, mean, std, comm) -> float:
    """Accuracy over the whole test set (each process its share, one reduction)."""
    correct = seen = 0
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            correct += int((model((x - mean) / std).argmax(1) == y).sum())
            seen += y.numel()
    model.train()
    correct, seen = comm.allreduce(np.array([correct, seen]))
    return correct / max(seen, 1)


def synchronous_cross_node_bytes(daso: ht.optim.DASO, batches: int) -> int:
    """
    Bytes all processes would send across nodes in ``batches`` steps of synchronous data
    parallelism with the same hierarchy (float32 gradients, each process its slice, ring
    all-reduce across the nodes).
    """
    groups = daso.groups
    if groups.num_nodes == 1:
        return 0
    numel = sum(p.numel() for p in daso.module.parameters() if p.requires_grad)
    per_batch = 0
    for size in groups.node_sizes:
        for j in range(size):
            start, stop = ht.optim.averaging.slice_bounds(numel, size, j)
            per_batch += ht.optim.transport.ring_allreduce_bytes(
                (stop - start) * 4, groups.num_nodes
            )
    return per_batch * batches


def main(argv: Optional[List[str]] = None) -> dict:
    """Run the example; returns its results (rank 0 also prints them)."""
    args = parse_arguments(argv)
    comm = ht.MPI_WORLD
    rank0 = comm.rank == 0
    say = print if rank0 else (lambda *a, **k: None)
    began = time.perf_counter()

    workdir = args.workdir
    if workdir is None:
        workdir = comm.bcast(tempfile.mkdtemp(prefix="heat-train-") if rank0 else None)
    elif rank0:
        os.makedirs(workdir, exist_ok=True)
    path = args.file or os.path.join(workdir, "synthetic.h5")
    if args.file is None and (not args.resume or not os.path.exists(path)):
        if rank0:
            write_synthetic_dataset(
                path, args.samples, args.test_samples, args.dimensions, args.classes, args.seed
            )
            say(f"wrote {args.samples:,} x {args.dimensions} training rows to {path}")
        comm.Barrier()
    window_bytes = int(args.window_mb * 2**20)
    mean, std = fit_standardization(path, args.features, window_bytes, comm)

    emulate_nodes(args.ranks_per_node, comm)
    loader = ht.utils.data.StreamingDataLoader(
        path,
        [args.features, args.labels],
        batch_size=args.batch_size,
        seed=args.seed,
        window_bytes=window_bytes,
        comm=comm,
        progress=rank0 and not args.no_progress,
    )
    test_loader = ht.utils.data.StreamingDataLoader(
        path,
        [args.test_features, args.test_labels],
        batch_size=1024,
        shuffle=False,
        window_bytes=window_bytes,
        comm=comm,
    )
    dimensions = int(mean.numel())
    classes = (
        int(comm.allreduce(max((int(y.max()) for _, y in test_loader), default=0), op=ht.MPI.MAX))
        + 1
    )
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
    if args.resume and os.path.exists(checkpoint):
        daso.load_state_dict(torch.load(checkpoint, weights_only=False))
        say(f"resumed from {checkpoint} at epoch {daso.epoch}")

    trained = 0
    train_began = time.perf_counter()
    first_batch = len(daso.timeline)
    while daso.epoch < args.epochs:
        loader.set_epoch(daso.epoch)
        total_loss, batches = 0.0, 0
        for x, y in loader:
            daso.zero_grad()
            loss = torch.nn.functional.cross_entropy(model((x - mean) / std), y)
            loss.backward()
            daso.step()
            total_loss += float(loss.detach())
            batches += 1
            trained += y.numel()
        daso.epoch_loss_logic(total_loss / max(batches, 1))
        accuracy = evaluate(net, test_loader, mean, std, comm)
        say(
            f"epoch {daso.epoch - 1}: loss {total_loss / max(batches, 1):.4f}, test accuracy "
            f"{accuracy:.4f}; next: {daso.schedule.phase}, global skip {daso.global_skip}"
        )
        state = daso.state_dict()  # between epochs every process holds the same model
        if rank0:
            torch.save(state, checkpoint + ".tmp")
            os.replace(checkpoint + ".tmp", checkpoint)
    seconds = time.perf_counter() - train_began
    accuracy = evaluate(net, test_loader, mean, std, comm)
    records = list(daso.timeline)[first_batch:]
    daso_bytes = comm.allreduce(sum(r.bytes_cross_node for r in records))
    exposed = comm.allreduce(sum(r.exposed_seconds for r in records), op=ht.MPI.MAX)
    sync_bytes = synchronous_cross_node_bytes(daso, len(records))
    samples_per_s = comm.allreduce(trained) / seconds if seconds > 0 else 0.0
    results = {
        "test_accuracy": accuracy,
        "samples_per_s": samples_per_s,
        "cross_node_bytes": daso_bytes,
        "synchronous_cross_node_bytes": sync_bytes,
        "exposed_communication_s": exposed,
        "seconds": time.perf_counter() - began,
    }
    saved = 1 - daso_bytes / sync_bytes if sync_bytes else 0.0
    say(
        f"test accuracy {accuracy:.4f}; {samples_per_s:,.0f} samples/s; cross-node bytes "
        f"{daso_bytes / 1e6:.2f} MB vs {sync_bytes / 1e6:.2f} MB synchronous ({saved:.0%} saved); "
        f"total {results['seconds']:.1f} s"
    )
    return results


if __name__ == "__main__":
    main()
