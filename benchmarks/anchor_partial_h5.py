"""
One epoch of HeAT 1.8's ``heat.utils.data.partial.PartialH5Dataset``, for benchmarks/streaming.py.

Run by the Python of a virtual environment holding the released HeAT 1.8 (built by
``benchmarks/build_anchor_env.py``), never by this repository's: it imports whatever ``heat``
that interpreter finds and refuses to run if that is this repository's. Usage::

    mpiexec -n 2 /tmp/heat-anchor/bin/python benchmarks/anchor_partial_h5.py FILE \\
        --datasets x y --batch 256 --initial-load 57344 --load-length 8192 --repeat 3

Every repetition builds a fresh ``PartialH5Dataset`` (its constructor reads the first
``initial_load`` rows of the process's share) and iterates it once with
``heat.utils.data.DataLoader``; the time of a repetition is the slowest process's, from the
constructor to the end of the epoch, and the best repetition is kept. Rank 0 prints one JSON
object: samples/s of all processes together, samples yielded, rows read from the file, and the
peak resident memory of each process (``VmHWM``, and its growth over the resident memory before
the dataset was built, after resetting the high-water mark where the kernel allows).

What HeAT 1.8 yields differs from ``StreamingDataLoader``'s epoch: process k holds the rows
``[k * (n // p), (k + 1) * (n // p))`` of the file (the ``n % p`` last rows are never read), rows
are shuffled only among the rows a process holds (never across processes), an epoch is
``ceil(local / initial_load)`` permutations of the ``initial_load`` slots, cut into full batches
(the remainder is dropped), and the slots are refilled from the file in the background, by
``load_length`` rows past the first ``initial_load`` (into the next process's share and around
the file's end), as far as its loading thread keeps up -- so ``rows_read`` differs from the share
and a yielded row may be one yielded before in the same epoch.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import gc
import json
import os
import sys
import threading
import time

import torch

import heat as ht  # HeAT 1.8, from the interpreter's site-packages

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def memory_kb() -> dict:
    """VmRSS and VmHWM of this process in KiB (empty off Linux)."""
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith("Vm"))
    except OSError:
        return {}
    return {name: int(fields[name].split()[0]) for name in ("VmRSS", "VmHWM") if name in fields}


def reset_high_water_mark() -> bool:
    """Hand unused heap pages back, then set VmHWM to VmRSS; False where Linux refuses."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            return f.write("5") > 0
    except OSError:
        return False


class Rows(ht.utils.data.partial_dataset.PartialH5Dataset):
    """``PartialH5Dataset`` leaves ``__getitem__`` to the user: one row of every dataset."""

    def __getitem__(self, index):
        return tuple(torch.as_tensor(getattr(self, name)[index]) for name in self.dataset_names)


def epoch(args, comm):
    """(seconds, samples yielded, rows read) of one fresh dataset's epoch on this process."""
    began = time.perf_counter()
    dataset = Rows(
        args.file,
        comm=comm,
        dataset_names=args.datasets,
        transforms=[None] * len(args.datasets),
        use_gpu=False,
        initial_load=args.initial_load,
        load_length=args.load_length,
    )
    loader = ht.utils.data.DataLoader(dataset=dataset, batch_size=args.batch)
    samples = 0
    for batch in loader:
        samples += len(batch[0])
    seconds = time.perf_counter() - began
    if dataset.partial_dataset:
        loads = dataset.loads_needed - dataset.loads_left
        rows_read = dataset.load_initial + loads * dataset.load_len
    else:  # initial_load above the process's share: HeAT 1.8 loads the whole file instead
        rows_read = dataset.total_size
    return seconds, samples, rows_read, dataset.partial_dataset


def end_job_on_thread_error(info) -> None:
    """HeAT 1.8's consumer waits forever for batches a failed background thread never makes."""
    threading.__excepthook__(info)
    sys.stderr.flush()
    os._exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("file")
    parser.add_argument("--datasets", nargs="+", default=["x", "y"])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--initial-load", type=int, default=7000)
    parser.add_argument("--load-length", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0, help="untimed epochs first")
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds before a hung job prints its stacks and ends",
    )
    args = parser.parse_args()
    if os.path.abspath(ht.__file__).startswith(REPO + os.sep):
        sys.exit(
            f"this imports the repository's heat ({ht.__file__}), not HeAT 1.8: "
            "run it with the anchor environment's python, without PYTHONPATH"
        )
    threading.excepthook = end_job_on_thread_error
    faulthandler.dump_traceback_later(args.timeout, exit=True)
    comm = ht.MPI_WORLD
    for _ in range(args.warmup):
        epoch(args, comm)
    best, samples, rows_read, partial, peaks, extras, exact = None, 0, 0, True, [], [], True
    for _ in range(args.repeat):
        exact = reset_high_water_mark() and exact
        before = memory_kb().get("VmRSS", -1)
        comm.handle.Barrier()
        seconds, count, read, partial = epoch(args, comm)
        seconds = comm.allreduce(seconds, op=ht.MPI.MAX)
        peak = memory_kb().get("VmHWM", -1)
        peaks.append(peak / 1024)
        extras.append((peak - before) / 1024)
        if best is None or seconds < best:
            best, samples, rows_read = seconds, comm.allreduce(count), comm.allreduce(read)
    faulthandler.cancel_dump_traceback_later()
    peak_rss = comm.gather(round(max(peaks), 1))
    peak_extra = comm.gather(round(max(extras), 1))
    if comm.rank == 0:
        record = dict(
            heat_version=ht.__version__,
            procs=comm.size,
            batch=args.batch,
            initial_load=args.initial_load,
            load_length=args.load_length,
            partial=partial,
            samples=samples,
            samples_per_s=samples / best,
            seconds=best,
            rows_read=rows_read,
            peak_rss_mb=peak_rss,
            peak_extra_mb=peak_extra,
            exact_peak=exact,
            note="HeAT 1.8: contiguous share per process, the n % p last rows never read, "
            "shuffled only within a process, remainder batch dropped; refills read past the "
            "share and wrap, so rows_read differs from it and samples may repeat rows",
        )
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
