"""
Elementwise throughput on 2e7 float32 values per process: heat against NumPy on the same data.

Usage::

    python benchmarks/elementwise.py                 # one process
    mpiexec -n 2 python benchmarks/elementwise.py    # each process holds 2e7 values

Each process holds ``--per-process`` values of a split array; NumPy runs the same expression on
an array of the same local size in the same process, measured side by side (interleaved
repetitions, best time kept). Rank 0 prints the table; the target is heat/NumPy <= 1.2.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import heat as ht

# each expression takes the module (heat or numpy) and the two operands
EXPRESSIONS = [
    ("x * 2.0 + 1.0", lambda m, x, y: x * 2.0 + 1.0),
    ("x + y", lambda m, x, y: x + y),
    ("exp(x)", lambda m, x, y: m.exp(x)),
    ("sqrt(abs(x))", lambda m, x, y: m.sqrt(m.abs(x))),
    ("x > y", lambda m, x, y: x > y),
    ("sum(x)", lambda m, x, y: m.sum(x)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--per-process", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    comm = ht.MPI_WORLD
    n = args.per_process * comm.size
    x = ht.random.rand(n, split=0) if hasattr(ht.random, "rand") else ht.linspace(0, 1, n, split=0)
    y = ht.linspace(1, 2, n, split=0)
    nx = x.larray.numpy().copy()
    ny = y.larray.numpy().copy()
    rows = []
    for label, expression in EXPRESSIONS:
        heat_best = numpy_best = float("inf")
        for _ in range(args.repeat):
            comm.Barrier()
            start = time.perf_counter()
            expression(ht, x, y)
            heat_best = min(heat_best, time.perf_counter() - start)
            start = time.perf_counter()
            expression(np, nx, ny)
            numpy_best = min(numpy_best, time.perf_counter() - start)
        heat_worst = comm.allreduce(heat_best, op=ht.MPI.MAX)
        numpy_worst = comm.allreduce(numpy_best, op=ht.MPI.MAX)
        rows.append((label, heat_worst, numpy_worst))
    if comm.rank == 0:
        print(f"elementwise throughput, {args.per_process:.0e} float32 per process, {comm.size} process(es)")
        print(f"{'expression':16s} {'heat s':>9s} {'numpy s':>9s} {'heat/numpy':>11s}")
        for label, heat_s, numpy_s in rows:
            print(f"{label:16s} {heat_s:9.4f} {numpy_s:9.4f} {heat_s / numpy_s:11.2f}")


if __name__ == "__main__":
    main()
