"""
Per-call overhead on 10-element arrays, one process: heat against NumPy and torch, side by side.

Usage::

    python benchmarks/overhead.py [--number 20000] [--repeat 7]

Reports the best-of-``repeat`` time per call in microseconds and heat's ratio to torch (heat
calls torch underneath, so that ratio is heat's own overhead). The issue's targets are absolute
(<= 5 us for ``a + b`` and ``ht.exp(a)`` on this machine, where HeAT 1.8 measured 18.7 us and
28.6 us); absolute numbers move with machine load, so the ratio to torch is printed beside them.
"""

from __future__ import annotations

import argparse
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


def best_time_us(statement: str, namespace: dict, number: int, repeat: int) -> float:
    times = timeit.repeat(statement, globals=namespace, number=number, repeat=repeat)
    return min(times) / number * 1e6


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
    for label, heat_stmt, numpy_stmt, torch_stmt in CASES:
        heat_us = best_time_us(heat_stmt, namespace, args.number, args.repeat)
        numpy_us = best_time_us(numpy_stmt, namespace, args.number, args.repeat)
        torch_us = best_time_us(torch_stmt, namespace, args.number, args.repeat)
        print(
            f"{label:12s} {heat_us:8.2f} {numpy_us:8.2f} {torch_us:8.2f} "
            f"{heat_us / torch_us:11.2f} {heat_us / numpy_us:11.2f}"
        )


if __name__ == "__main__":
    main()
