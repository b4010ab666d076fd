"""
``ht.resplit`` of large arrays in both directions, side by side (issue 18, item 8).

Usage::

    mpiexec -n 3 python benchmarks/resplit.py                    # 1 GiB per process
    mpiexec -n 3 python benchmarks/resplit.py --gib 0.25 --repeat 3

A float32 matrix of ``--gib`` GiB per process (square, or ``--shape tall`` with 8 times more rows
than columns, ``--shape wide`` the other way) is resplit 0 -> 1 and 1 -> 0, alternating, each
``--repeat`` times; the time of a resplit is the slowest process's (a barrier before, the maximum
of the processes' times after). ``0->1 dtypes`` is 0 -> 1 as heat did it before (one all-to-all
of strided column blocks described to MPI as derived datatypes), timed alongside. Reported:
median and best per direction and the ratios 0->1 / 1->0 and 0->1 dtypes / 0->1 (the issue measured 29-32 s against 0.7-2.7 s at 3 processes for 1-2 GiB per process). The result
of each direction is checked against the input's numbers once (a checksum per column block).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch

import heat as ht
from heat.core._redistribution import balanced_counts, displacements


def timed(function, comm) -> float:
    comm.Barrier()
    start = time.perf_counter()
    result = function()
    elapsed = time.perf_counter() - start
    del result
    return comm.allreduce(elapsed, op=ht.MPI.MAX)


def direct_datatypes(x0: ht.DNDarray) -> torch.Tensor:
    """
    0 -> 1 as heat did it before the packed slabs: one all-to-all whose strided column blocks
    travel as MPI derived datatypes, straight from the local tensor into the result.
    """
    comm, local = x0.comm, x0.larray
    source_counts = x0.counts_displs()[0]
    source_displs = displacements(source_counts)
    target_counts = balanced_counts(comm, x0.gshape[1])
    target_displs = displacements(target_counts)
    result = torch.empty((x0.gshape[0], target_counts[comm.rank]), dtype=local.dtype)
    comm.Alltoallw(
        [local.narrow(1, target_displs[r], target_counts[r]) for r in range(comm.size)],
        [result.narrow(0, source_displs[r], source_counts[r]) for r in range(comm.size)],
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="GiB of float32 per process")
    parser.add_argument("--shape", choices=("square", "tall", "wide"), default="square")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    comm = ht.MPI_WORLD
    elements = int(args.gib * 2**30 / 4) * comm.size
    aspect = {"square": 1, "tall": 8, "wide": 1 / 8}[args.shape]
    cols = max(comm.size, int(math.sqrt(elements / aspect)))
    rows = max(comm.size, elements // cols)
    x0 = ht.random.rand(rows, cols, split=0)
    x1 = ht.resplit(x0, 1)
    # the same numbers after each direction (sums per row, compared globally)
    check0 = ht.sum(ht.resplit(x1, 0), axis=1)
    check1 = ht.sum(x1, axis=1)
    assert bool(ht.allclose(check0, ht.sum(x0, axis=1))) and bool(ht.allclose(check1, check0))
    assert torch.equal(direct_datatypes(x0), x1.larray)
    times = {"0->1": [], "0->1 dtypes": [], "1->0": []}
    for _ in range(args.repeat):
        times["0->1"].append(timed(lambda: ht.resplit(x0, 1), comm))
        times["0->1 dtypes"].append(timed(lambda: direct_datatypes(x0), comm))
        times["1->0"].append(timed(lambda: ht.resplit(x1, 0), comm))
    if comm.rank == 0:
        gib = rows * cols * 4 / 2**30
        print(
            f"resplit of a {rows} x {cols} float32 matrix ({gib:.2f} GiB, "
            f"{gib / comm.size:.2f} GiB per process), {comm.size} processes, "
            f"{torch.get_num_threads()} thread(s) each, {args.repeat} repetitions"
        )
        print(f"{'direction':12s} {'median s':>9s} {'best s':>8s} {'GB/s':>6s}")
        for direction, values in times.items():
            median = statistics.median(values)
            print(
                f"{direction:12s} {median:9.3f} {min(values):8.3f} "
                f"{rows * cols * 4 / 1e9 / median:6.2f}"
            )
        medians = {direction: statistics.median(values) for direction, values in times.items()}
        print(f"0->1 / 1->0 (medians): {medians['0->1'] / medians['1->0']:.2f}")
        print(f"0->1 dtypes / 0->1 (medians): {medians['0->1 dtypes'] / medians['0->1']:.2f}")


if __name__ == "__main__":
    main()
