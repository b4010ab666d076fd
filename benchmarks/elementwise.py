"""
Elementwise throughput on 2e7 float32 values per process: heat against NumPy on the same data.

Usage::

    python benchmarks/elementwise.py                 # one process
    mpiexec -n 2 python benchmarks/elementwise.py    # each process holds 2e7 values

A thin wrapper around the harness's ``elementwise`` cases (benchmarks/harness/cases.py; the
same cases run in ``python benchmarks/run.py --suite core --cases elementwise``): the global
array holds ``--per-process`` values per process, split along axis 0; NumPy runs the same
expression on the whole array in each process (the serial baseline). Median of ``--repeat``
repetitions, heat's time the slowest process's, the two libraries alternating. Rank 0 prints
the table; the target is heat/NumPy <= 1.2 at one process.
"""

from __future__ import annotations

import argparse
import os
import sys
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import cases, libs  # noqa: E402
from harness.worker import World, measure_case  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--per-process", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05, help="least seconds per repetition")
    args = parser.parse_args()
    adapters = [libs.make("heat"), libs.make("numpy")]
    adapters[0].torch.set_num_threads(1)
    world = World(True)
    n = args.per_process * world.size
    data = SimpleNamespace(big=np.random.default_rng(1234).random(n, dtype=np.float32))
    chosen = [case for case in cases.registry() if case.name.startswith("elementwise")]
    rows = []
    for index, case in enumerate(chosen):
        records = {
            r["library"]: r
            for r in measure_case(case, adapters, data, args.repeat, args.min_time, world, index)
        }
        rows.append((case.name[len("elementwise ") :], records["heat"], records["numpy"]))
    if world.rank == 0:
        print(
            f"elementwise throughput, {args.per_process:.0e} float32 per process, {world.size} process(es)"
        )
        print(f"{'expression':16s} {'heat s':>9s} {'numpy s':>9s} {'heat/numpy':>11s}  check")
        for label, heat, numpy in rows:
            if heat["status"] != "ok" or numpy["status"] != "ok":
                print(f"{label:16s} error: {heat.get('error') or numpy.get('error')}")
                continue
            print(
                f"{label:16s} {heat['median']:9.4f} {numpy['median']:9.4f} {heat['median'] / numpy['median']:11.2f}"
                f"  {heat['check']}"
            )


if __name__ == "__main__":
    main()
