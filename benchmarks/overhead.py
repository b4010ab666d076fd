"""
Per-call overhead on 10-element arrays, one process: heat against NumPy and torch, side by side.

Usage::

    python benchmarks/overhead.py [--number 20000] [--repeat 7]

A thin wrapper around the harness's ``overhead`` cases (benchmarks/harness/cases.py; the same
cases run in ``python benchmarks/run.py --suite core --cases overhead``). Reports the median of
``repeat`` repetitions of ``number`` calls, per call in microseconds, and heat's ratio to torch
(heat calls torch underneath, so that ratio is heat's own overhead). The libraries alternate
repetition by repetition, so a burst of load from other processes on a shared machine hits all
of them alike. The issue's targets are absolute (<= 5 us for ``a + b`` and ``ht.exp(a)`` on this
machine, where HeAT 1.8 measured 18.7 us and 28.6 us); absolute numbers move with machine load,
so the ratio to torch is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import cases, libs  # noqa: E402
from harness.worker import World, measure_case  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--number", type=int, default=20000, help="calls per repetition")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    adapters = [libs.make(label) for label in ("heat", "numpy", "torch")]
    adapters[0].torch.set_num_threads(1)
    world = World(True)
    chosen = [case for case in cases.registry() if case.name.startswith("overhead")]
    print(
        f"per-call time in microseconds, 10-element float32 arrays, {world.size} process(es) "
        f"(heat {adapters[0].version})"
    )
    print(
        f"{'operation':12s} {'heat':>8s} {'numpy':>8s} {'torch':>8s} {'heat/torch':>11s} {'heat/numpy':>11s}"
    )
    for index, case in enumerate(chosen):
        records = measure_case(
            case, adapters, None, args.repeat, 0.0, world, index, number=args.number
        )
        us = {r["library"]: r["median"] * 1e6 for r in records if r["status"] == "ok"}
        label = case.name[len("overhead ") :].replace(" (10 values)", "")
        if len(us) < 3:
            print(f"{label:12s} error: {[r.get('error') for r in records if r['status'] != 'ok']}")
            continue
        print(
            f"{label:12s} {us['heat']:8.2f} {us['numpy']:8.2f} {us['torch']:8.2f} "
            f"{us['heat'] / us['torch']:11.2f} {us['heat'] / us['numpy']:11.2f}"
        )


if __name__ == "__main__":
    main()
