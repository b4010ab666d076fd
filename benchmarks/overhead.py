"""
Per-call overhead on 10-element arrays, one process: heat against NumPy and torch, side by side.

Usage::

    python benchmarks/overhead.py [--number 20000] [--repeat 7]

Reports the best-of-``repeat`` time per call in microseconds and heat's ratio to torch (heat
calls torch underneath, so that ratio is heat's own overhead). The repetitions of all statements
are interleaved (round 1 of every statement, then round 2, ...) and timed in process CPU time,
so a burst of load from other processes on a shared machine hits every statement alike instead
of inflating one of them. The issue's targets are absolute
(<= 5 us for ``a + b`` and ``ht.exp(a)`` on this machine, where HeAT 1.8 measured 18.7 us and
28.6 us); absolute numbers move with machine load, so the ratio to torch is printed beside them.
"""

from __future__ import annotations

import argparse
import time
import timeit

import numpy as np
import torch

import heat as ht

CASES = [
    # label, heat statement, numpy statement, torch statement
    ("a + b", "a + b", "na + nb", "ta + tb"),
    ("ht.exp(a)", "ht.exp(a)", "np.exp(na)", "torch.exp(ta)"),
    ("a.sum()", "a.sum()", "na.sum()", "ta.sum()"),
    ("a[3]", "a[3]", "na[3]", "ta[3]"),
]


def best_times_us(statements, namespace: dict, number: int, repeat: int) -> dict:
    """Best time per call (us) of each statement, repetitions interleaved, in CPU time."""
    best = {statement: float("inf") for statement in statements}
    for _ in range(repeat):
        for statement in statements:
            seconds = timeit.timeit(
                statement, globals=namespace, number=number, timer=time.process_time
            )
            best[statement] = min(best[statement], seconds / number * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    namespace = dict(
        ht=ht,
        np=np,
        torch=torch,
        a=ht.arange(10, dtype=ht.float32),
        b=ht.arange(10, dtype=ht.float32),
        na=np.arange(10, dtype=np.float32),
        nb=np.arange(10, dtype=np.float32),
        ta=torch.arange(10, dtype=torch.float32),
        tb=torch.arange(10, dtype=torch.float32),
    )
    print(f"per-call time in microseconds, 10-element float32 arrays, 1 process (heat {ht.__version__})")
    print(f"{'operation':12s} {'heat':>8s} {'numpy':>8s} {'torch':>8s} {'heat/torch':>11s} {'heat/numpy':>11s}")
    statements = [statement for case in CASES for statement in case[1:]]
    best = best_times_us(statements, namespace, args.number, args.repeat)
    for label, heat_stmt, numpy_stmt, torch_stmt in CASES:
        heat_us, numpy_us, torch_us = best[heat_stmt], best[numpy_stmt], best[torch_stmt]
        print(
            f"{label:12s} {heat_us:8.2f} {numpy_us:8.2f} {torch_us:8.2f} "
            f"{heat_us / torch_us:11.2f} {heat_us / numpy_us:11.2f}"
        )


if __name__ == "__main__":
    main()
