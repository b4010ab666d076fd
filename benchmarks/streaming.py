"""
Throughput and memory of heat.utils.data.StreamingDataLoader against what a script would do by hand.

Usage::

    python benchmarks/streaming.py                   # one process
    mpiexec -n 2 python benchmarks/streaming.py      # two processes, each its share of the file
    python benchmarks/streaming.py --file-mb 32 --repeat 2 --no-memory   # a quick check

For small rows (64 float32) and large rows (3 x 64 x 64 float32), uncompressed and gzip-compressed
(chunks of about 1 MiB), a file of ``--file-mb`` MB of features ``x`` plus int64 labels ``y`` is
streamed once per repetition by every method below, interleaved, best repetition kept; the time
of a pass is the slowest process's:

* ``plain``: a sequential ``read_direct`` of consecutive windows (the loader's window size; window
  k on process k mod p) into reused buffers -- the cost of reading alone;
* ``perm``: the same reads, then each window permuted in memory (``torch.randperm`` and a gather
  of x and y) -- a hand-written shuffle within windows;
* ``off`` / ``on``: the loader with ``shuffle=False`` / ``shuffle=True`` (batches of
  ``--batch`` rows; the consumer does nothing with them);
* ``torch``: a torch ``DataLoader`` over an h5py-backed map-style Dataset with torch's
  ``DistributedSampler`` (one h5py read per sample), timed for ``--torch-seconds``;
* ``heat18``: HeAT 1.8's ``PartialH5Dataset`` (benchmarks/anchor_partial_h5.py, run by the Python
  of an environment holding the release, ``--anchor-python``; skipped without one) at the same
  number of processes, best of ``--repeat`` epochs, each from a fresh dataset (its constructor's
  first read included). It holds ``initial_load`` rows and refills ``load_length`` at a time:
  7/8 and 1/8 of the rows that fit in ``window_bytes``, at most the process's share. Its epoch is
  not the loader's: contiguous shares (the ``n % p`` last rows never read), no shuffling across
  processes, the remainder batch dropped; samples/s counts the rows it yields.

Targets (issue 7): off/plain >= 0.8, on/perm >= 0.8, on/torch >= 10 (samples/s); on/heat18 is
reported beside them.

A consumer that works (``--consumer-ms MS``, issue 17): the loader with shuffle on streams the same
files to a consumer that spends ``MS`` ms of busy compute (torch matmuls, which release the GIL as
a training step's kernels do) per 64 KiB of features -- a batch of 256 small rows; a batch of 32
large rows (1.5 MiB) gets 24x that, work in proportion to the data. Reported per file: the loader
wait share (``loader.stats()["wait_fraction"]``: of the epoch, the time the consumer spent inside
the loader, the largest over the processes; target <= 5%), its mean over the processes, the epoch
time and the loader's own times (reading, waiting for windows, exchanging, gathering, the
consumer's wait for rounds -- where the loader has them). Median and best of ``--repeat`` epochs.

Memory: the peak resident memory of one process over an epoch (VmHWM after resetting it, minus
the resident memory before), streaming files 5x and 20x the window with shuffle on: flat; and
HeAT 1.8's over its second epoch, with ``initial_load`` and ``load_length`` from the same budget.

Files go to a temporary folder (``--folder``, default the system's) and are deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import h5py
import numpy as np
import torch

import heat as ht
from heat.utils.data import StreamingDataLoader
from heat.utils.data.reader import DatasetInfo, window_rows_for
from heat.utils.data.streaming import WINDOW_BUFFERS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from algorithms import _proc_status_kb, _reset_peak, _trim_heap  # noqa: E402

COMM = ht.MPI_WORLD
ROWS = {"small": (64,), "large": (3, 64, 64)}
ANCHOR_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "anchor_partial_h5.py")
DEFAULT_ANCHOR_PYTHON = "/tmp/heat-anchor/bin/python"
#: the process manager's variables of this job, which a job started from it must not inherit
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "HYDRA_", "HYDI_", "MPI_LOCAL", "OMPI_", "MPIR_")


def log(message: str) -> None:
    if COMM.rank == 0:
        print(message, flush=True)


def write_file(path: str, rows: int, row_shape, compression) -> None:
    """Image-like features (8-bit values scaled to [0, 1] as float32) and int64 labels."""
    row_items = int(np.prod(row_shape))
    chunk_rows = max(1, min(rows, (1 << 20) // (4 * row_items)))
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        x = f.create_dataset(
            "x",
            (rows,) + row_shape,
            np.float32,
            chunks=(chunk_rows,) + row_shape,
            compression=compression,
        )
        y = f.create_dataset(
            "y", (rows,), np.int64, chunks=(min(rows, chunk_rows * 16),), compression=compression
        )
        step = chunk_rows * 16
        for start in range(0, rows, step):
            count = min(step, rows - start)
            values = rng.integers(0, 256, (count,) + row_shape, dtype=np.uint8)
            x[start : start + count] = values.astype(np.float32) / 255
            y[start : start + count] = rng.integers(0, 1000, count)


def windows_of(rows: int, window: int) -> List[range]:
    """The windows process ``COMM.rank`` reads: window k on process k mod p."""
    starts = list(range(0, rows, window))[COMM.rank :: COMM.size]
    return [range(s, min(s + window, rows)) for s in starts]


def plain_pass(path: str, window: int, permute: bool) -> Callable[[], int]:
    def run() -> int:
        count = 0
        with h5py.File(path, "r") as f:
            x, y = f["x"], f["y"]
            bx = np.empty((window,) + x.shape[1:], np.float32)
            by = np.empty(window, np.int64)
            if permute:
                ox, oy = torch.empty(bx.shape), torch.empty(window, dtype=torch.int64)
            for rows in windows_of(x.shape[0], window):
                n = len(rows)
                x.read_direct(bx, np.s_[rows.start : rows.stop], np.s_[0:n])
                y.read_direct(by, np.s_[rows.start : rows.stop], np.s_[0:n])
                if permute:
                    perm = torch.randperm(n)
                    torch.index_select(torch.from_numpy(bx[:n]), 0, perm, out=ox[:n])
                    torch.index_select(torch.from_numpy(by[:n]), 0, perm, out=oy[:n])
                count += n
        return count

    return run


def loader_pass(loader: StreamingDataLoader) -> Callable[[], int]:
    def run() -> int:
        count = 0
        for x, _ in loader:
            count += len(x)
        return count

    return run


class _H5Rows(torch.utils.data.Dataset):
    """What users write today: a map-style Dataset reading one row per ``__getitem__``."""

    def __init__(self, path: str):
        self.path, self.file = path, None
        with h5py.File(path, "r") as f:
            self.length = f["x"].shape[0]

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int):
        if self.file is None:  # opened in the process that reads (a worker, after the fork)
            self.file = h5py.File(self.path, "r")
        return torch.from_numpy(self.file["x"][index]), int(self.file["y"][index])


def torch_pass(path: str, batch: int, seconds: float) -> Callable[[], int]:
    dataset = _H5Rows(path)
    sampler = torch.utils.data.distributed.DistributedSampler(
        dataset, num_replicas=COMM.size, rank=COMM.rank, shuffle=True, seed=0
    )
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, sampler=sampler)

    def run() -> int:
        count, began = 0, time.perf_counter()
        for x, _ in loader:
            count += len(x)
            if time.perf_counter() - began > seconds:
                break
        return count

    return run


def anchor_loads(rows: int, row_bytes: int, window_bytes: int):
    """
    HeAT 1.8's ``(initial_load, load_length)`` for a budget of ``window_bytes``: the rows it holds
    (``initial_load``) and refills at a time (``load_length``, which it may briefly hold twice)
    are 7/8 and 1/8 of the rows that fit in the budget (its defaults' ratio, 7000:1000).
    ``initial_load`` is at most the process's share: above it HeAT 1.8 loads the whole file
    on every process and yields all of it on each.
    """
    initial = min(window_bytes // row_bytes * 7 // 8, rows // COMM.size)
    return max(1, initial), max(1, initial // 7)


def run_anchor(
    args, path: str, batch: int, initial_load: int, load_length: int, repeat: int, warmup: int = 0
) -> Optional[Dict]:
    """
    The JSON record of benchmarks/anchor_partial_h5.py at this job's number of processes, the
    same on every process; None without an anchor Python or if the run fails (logged).

    Rank 0 starts it (under that environment's ``mpiexec`` beside its Python at several
    processes) in an environment without this job's launcher variables and ``PYTHONPATH``;
    the other processes wait without spinning in MPI, which would take the cores it runs on.
    """
    if not args.anchor_python:
        return None
    COMM.handle.Barrier()
    record = None
    if COMM.rank == 0:
        command = [
            args.anchor_python,
            ANCHOR_SCRIPT,
            path,
            "--datasets",
            "x",
            "y",
            "--batch",
            str(batch),
            "--initial-load",
            str(initial_load),
            "--load-length",
            str(load_length),
            "--repeat",
            str(repeat),
            "--warmup",
            str(warmup),
            "--timeout",
            str(args.anchor_timeout),
        ]
        if COMM.size > 1:
            mpiexec = os.path.join(os.path.dirname(args.anchor_python), "mpiexec")
            if not os.path.exists(mpiexec):
                mpiexec = shutil.which("mpiexec") or "mpiexec"
            command = [mpiexec, "-n", str(COMM.size)] + command
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(LAUNCHER_PREFIXES) and k != "PYTHONPATH"
        }
        try:
            done = subprocess.run(
                command,
                env=env,
                cwd=os.path.dirname(path),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=args.anchor_timeout + 60,
            )
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            if done.returncode == 0 and lines:
                record = json.loads(lines[-1])
            else:
                tail = done.stdout[-2000:] + done.stderr[-2000:]
                log(f"# heat18 failed (exit {done.returncode}):\n{tail}")
        except (OSError, subprocess.TimeoutExpired) as error:
            log(f"# heat18 failed: {error}")
    finished = COMM.handle.Ibarrier()
    while not finished.Test():
        time.sleep(0.01)
    return COMM.bcast(record)


#: features per ``--consumer-ms`` of work: a batch of 256 rows of 64 float32
CONSUMER_UNIT_BYTES = 256 * 64 * 4


def working_pass(loader: StreamingDataLoader, ms: float, spent: List[float]) -> Callable[[], int]:
    """
    An epoch to a consumer that computes ``ms`` ms per 64 KiB of features of every batch (small
    single-threaded matmuls until the time is up); the time it computed is added to ``spent``.
    """
    work = torch.randn(64, 64)

    def run() -> int:
        count, computing = 0, 0.0
        for x, _ in loader:
            began = time.perf_counter()
            end = began + ms / 1e3 * x.numel() * x.element_size() / CONSUMER_UNIT_BYTES
            while time.perf_counter() < end:
                torch.mm(work, work)
            computing += time.perf_counter() - began
            count += len(x)
        spent.append(computing)
        return count

    return run


def consumer(args, folder: str) -> List[Dict]:
    """The loader's wait share with a working consumer (shuffle on), per file."""
    results = []
    threads = torch.get_num_threads()
    # the consumer's matmuls on one thread: on a loaded machine a second OpenMP thread that is
    # not scheduled holds up every matmul for milliseconds, and the consumer's 2 ms would be 10
    torch.set_num_threads(1)
    try:
        for kind, row_shape, compression, path, rows in files(args, folder):
            batch = args.batch if kind == "small" else max(1, args.batch // 8)
            loader = StreamingDataLoader(
                path,
                ["x", "y"],
                shuffle=True,
                batch_size=batch,
                window_bytes=int(args.window_mb * 2**20),
            )
            loader_pass(loader)()  # warm: the page cache, the loader's buffers
            runs = []
            for _ in range(args.repeat):
                COMM.handle.Barrier()
                began, spent = time.perf_counter(), []
                working_pass(loader, args.consumer_ms, spent)()
                seconds = COMM.allreduce(time.perf_counter() - began, op=ht.MPI.MAX)
                stats = loader.stats()
                runs.append(
                    dict(stats, epoch_s=seconds, compute_s=COMM.allreduce(spent[0], op=ht.MPI.MAX))
                )
            runs.sort(key=lambda r: r["wait_fraction"])
            median = runs[len(runs) // 2]
            loader_times = {
                k: round(median[k], 3)
                for k in median
                if k in ("read_s", "read_wait_s", "exchange_s", "gather_s", "round_wait_s")
            }
            record = dict(
                consumer=True,
                rows=kind,
                compression=compression or "none",
                procs=COMM.size,
                batch=batch,
                consumer_ms=args.consumer_ms,
                window_rows=loader.window_rows,
                epoch_s=round(median["epoch_s"], 3),
                compute_s=round(median["compute_s"], 3),
                wait_share=round(median["wait_fraction"], 4),
                wait_share_mean=round(median["wait_fraction_mean"], 4),
                wait_share_best=round(runs[0]["wait_fraction"], 4),
                wait_shares=[round(r["wait_fraction"], 4) for r in runs],
                **loader_times,
            )
            results.append(record)
            log(json.dumps(record))
            if COMM.rank == 0:
                os.remove(path)
    finally:
        torch.set_num_threads(threads)
    return results


def timed(function: Callable[[], int]) -> float:
    """Samples per second of one pass, all processes together (the slowest process's time)."""
    COMM.handle.Barrier()
    began = time.perf_counter()
    count = function()
    seconds = COMM.allreduce(time.perf_counter() - began, op=ht.MPI.MAX)
    return COMM.allreduce(count) / seconds


def files(args, folder: str):
    """``(kind, row shape, compression, path, rows)`` of each file, written by rank 0 in turn."""
    for kind in args.kinds.split(","):
        row_shape = ROWS[kind]
        rows = int(args.file_mb * 1e6) // (4 * int(np.prod(row_shape)))
        for compression in (None, "gzip"):
            path = os.path.join(folder, f"{kind}-{compression}.h5")
            if COMM.rank == 0:
                write_file(path, rows, row_shape, compression)
            COMM.handle.Barrier()
            yield kind, row_shape, compression, path, rows


def throughput(args, folder: str) -> List[Dict]:
    results = []
    for kind, row_shape, compression, path, rows in files(args, folder):
        row_bytes = 4 * int(np.prod(row_shape))
        batch = args.batch if kind == "small" else max(1, args.batch // 8)
        common = dict(batch_size=batch, window_bytes=int(args.window_mb * 2**20))
        off = StreamingDataLoader(path, ["x", "y"], shuffle=False, **common)
        on = StreamingDataLoader(path, ["x", "y"], shuffle=True, **common)
        window = off.window_rows
        methods = {
            "plain": plain_pass(path, window, permute=False),
            "perm": plain_pass(path, window, permute=True),
            "off": loader_pass(off),
            "on": loader_pass(on),
        }
        best = {name: 0.0 for name in methods}
        for _ in range(args.repeat):
            for name, function in methods.items():
                best[name] = max(best[name], timed(function))
        best["torch"] = timed(torch_pass(path, batch, args.torch_seconds))
        initial_load, load_length = anchor_loads(rows, row_bytes + 8, common["window_bytes"])
        anchor = run_anchor(args, path, batch, initial_load, load_length, args.repeat)
        heat18 = anchor["samples_per_s"] if anchor else None
        record = dict(
            rows=kind,
            compression=compression or "none",
            procs=COMM.size,
            file_mb=round(rows * (row_bytes + 8) / 1e6, 1),
            window_rows=window,
            batch=batch,
            **{k: round(v) for k, v in best.items()},
            off_plain=round(best["off"] / best["plain"], 2),
            on_perm=round(best["on"] / best["perm"], 2),
            on_torch=round(best["on"] / best["torch"], 1),
            heat18=round(heat18) if heat18 else None,
            on_heat18=round(best["on"] / heat18, 2) if heat18 else None,
            heat18_run=anchor
            and {
                k: anchor[k]
                for k in (
                    "samples",
                    "rows_read",
                    "initial_load",
                    "load_length",
                    "partial",
                    "peak_rss_mb",
                )
            },
        )
        results.append(record)
        log(json.dumps(record))
        if COMM.rank == 0:
            os.remove(path)
    return results


def memory(args, folder: str) -> List[Dict]:
    """Peak resident memory of an epoch, files 5x and 20x the window (shuffle on)."""
    results = []
    window_bytes = int(args.memory_window_mb * 2**20)
    row_shape = ROWS["small"]
    row_bytes = 4 * int(np.prod(row_shape))
    # the window in rows for the layout write_file makes (x in chunks of 1 MiB, y of 16 of them)
    chunk_rows = (1 << 20) // row_bytes
    infos = [
        DatasetInfo("", "x", (1 << 40,) + row_shape, np.dtype("f4"), chunk_rows, 1 << 20, 0),
        DatasetInfo("", "y", (1 << 40,), np.dtype("i8"), 16 * chunk_rows, 128 * chunk_rows, 0),
    ]
    window = window_rows_for(infos, window_bytes, WINDOW_BUFFERS)
    for factor in (5, 20):
        rows = factor * window * COMM.size  # every process streams ``factor`` windows
        path = os.path.join(folder, f"memory-{factor}.h5")
        if COMM.rank == 0:
            write_file(path, rows, row_shape, None)
        COMM.handle.Barrier()
        loader = StreamingDataLoader(
            path, ["x", "y"], batch_size=args.batch, window_bytes=window_bytes
        )
        assert loader.window_rows == window
        for _ in loader:  # a first epoch: pools, libraries and the page cache warmed up
            pass
        _trim_heap()
        before = _proc_status_kb("VmRSS")
        exact = _reset_peak()
        for _ in loader:
            pass
        peak = COMM.allreduce((_proc_status_kb("VmHWM") - before) / 1024, op=ht.MPI.MAX)
        initial_load, load_length = anchor_loads(rows, row_bytes + 8, window_bytes)
        anchor = run_anchor(args, path, args.batch, initial_load, load_length, 1, warmup=1)
        window_mb = window * (row_bytes + 8) / 2**20
        record = dict(
            procs=COMM.size,
            factor=factor,
            window_rows=window,
            window_mb=round(window_mb, 1),
            budget_mb=round(window_bytes / 2**20, 1),
            file_mb=round(rows * (row_bytes + 8) / 2**20, 1),
            peak_extra_mb=round(peak, 1),
            exact=exact,
            heat18_peak_extra_mb=anchor and max(anchor["peak_extra_mb"]),
            heat18_initial_load=initial_load,
            heat18_load_length=load_length,
        )
        results.append(record)
        log(json.dumps(record))
        if COMM.rank == 0:
            os.remove(path)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--file-mb", type=float, default=128.0, help="features per file, MB")
    parser.add_argument(
        "--window-mb", type=float, default=128.0, help="the loader's window_bytes, MiB"
    )
    parser.add_argument(
        "--batch", type=int, default=256, help="rows per batch (small rows; /8 large)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--torch-seconds", type=float, default=3.0)
    parser.add_argument("--folder", default=None)
    parser.add_argument(
        "--memory-window-mb",
        type=float,
        default=16.0,
        help="the loader's window_bytes in the memory test, MiB",
    )
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument(
        "--kinds", default="small,large", help="rows of the files: small, large or both"
    )
    parser.add_argument(
        "--consumer-ms",
        type=float,
        default=0.0,
        help="busy compute per 64 KiB of features (a batch of 256 small rows); "
        "0 skips the working-consumer measurement",
    )
    parser.add_argument(
        "--anchor-python",
        default=DEFAULT_ANCHOR_PYTHON if os.path.exists(DEFAULT_ANCHOR_PYTHON) else "",
        help="Python of an environment with HeAT 1.8 for the heat18 column ('' skips it; "
        f"default {DEFAULT_ANCHOR_PYTHON} where it exists)",
    )
    parser.add_argument(
        "--anchor-timeout",
        type=float,
        default=1200.0,
        help="seconds before a HeAT 1.8 run counts as hung",
    )
    parser.add_argument("--out", default=None, help="write the records as JSON")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="heat-streaming-", dir=args.folder) if COMM.rank == 0 else None
    folder = COMM.bcast(folder)
    try:
        log(
            f"# {COMM.size} process(es), torch threads {torch.get_num_threads()}, load {os.getloadavg()}"
        )
        log(f"# heat from {os.path.dirname(ht.__file__)}")
        log(f"# heat18: {args.anchor_python or 'skipped (no --anchor-python)'}")
        records = [] if args.no_throughput else throughput(args, folder)
        if args.consumer_ms > 0:
            records += consumer(args, folder)
        if not args.no_memory:
            records += memory(args, folder)
        log(f"# load at end {os.getloadavg()}")
        if args.out and COMM.rank == 0:
            with open(args.out, "w") as f:
                json.dump(records, f, indent=1)
    finally:
        COMM.handle.Barrier()
        if COMM.rank == 0:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
