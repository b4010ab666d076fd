#!/usr/bin/env python3
"""
Tensor parallelism (issue 19): a ``ht.nn.ParallelMLP`` (``--width`` 4096 -> ``--ffn`` 4 x width
-> width, GELU, float32) trained on ``--tokens`` (512) tokens per step, at 1 process and at
``--procs`` (2) processes, side by side in one run (the jobs alternate ``--runs`` times, so that a
drift of the machine's load hits both alike).

A step is ``zero_grad``, forward, an MSE loss, backward and an SGD step; at ``p`` processes each
process holds ``1/p`` of both weights and does ``1/p`` of the multiply-adds, plus one all-reduce of
the ``tokens x width`` activations in forward and one of the input gradient in backward. Each
process runs heat's default number of compute threads (cores / processes on the node), or
``--threads`` (on a loaded machine a second thread mostly waits for a time slice, which makes the
1-process job look slower than it is: ``--threads 1`` compares the split of the work alone). The time
per step is the slowest process's median over ``--steps`` steps (after ``--warmup``); the
speed-up is the 1-process time over the ``p``-process time, per run, and its median over the runs.

Usage::

    python benchmarks/tensor_parallel.py                        # width 4096, 3 runs
    python benchmarks/tensor_parallel.py --width 512 --runs 1   # a quick check of the script
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def worker(args: argparse.Namespace) -> None:
    """One MPI job: time the steps of the parallel MLP; rank 0 prints one JSON line."""
    sys.path.insert(0, str(ROOT))
    import torch

    import heat as ht

    comm = ht.MPI_WORLD
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    mlp = ht.nn.ParallelMLP(args.width, args.ffn or 4 * args.width)
    optimizer = torch.optim.SGD(mlp.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(args.tokens, args.width, generator=generator)
    target = torch.randn(args.tokens, args.width, generator=generator)
    times = []
    for step in range(args.warmup + args.steps):
        comm.Barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(mlp(x), target)
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - start
        if step >= args.warmup:
            times.append(elapsed)
    # the slowest process's median
    median = comm.allreduce(statistics.median(times), op=ht.MPI.MAX)
    if comm.rank == 0:
        print(json.dumps({"procs": comm.size, "threads": torch.get_num_threads(),
                          "step_s": median}), flush=True)  # fmt: skip


def driver(args: argparse.Namespace) -> int:
    results = {1: [], args.procs: []}
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    for run in range(args.runs):
        order = [1, args.procs] if run % 2 == 0 else [args.procs, 1]
        for procs in order:
            command = ["mpiexec", "-n", str(procs), sys.executable, str(Path(__file__).resolve()),
                       "--worker", *_forwarded(args)]  # fmt: skip
            outcome = subprocess.run(
                command, capture_output=True, text=True, timeout=args.timeout,
                stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
            if outcome.returncode != 0:
                print(outcome.stdout, outcome.stderr[-4000:], file=sys.stderr)
                return 1
            line = [ln for ln in outcome.stdout.splitlines() if ln.startswith("{")][-1]
            record = json.loads(line)
            results[procs].append(record)
            print(f"run {run}: {procs} process(es), {record['threads']} thread(s) each: "
                  f"{record['step_s'] * 1e3:.1f} ms per step", flush=True)  # fmt: skip
    ratios = [one["step_s"] / many["step_s"] for one, many in zip(results[1], results[args.procs])]
    one = statistics.median(r["step_s"] for r in results[1])
    many = statistics.median(r["step_s"] for r in results[args.procs])
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    print()
    print(f"ParallelMLP width {args.width}, ffn {args.ffn or 4 * args.width}, "
          f"{args.tokens} tokens, float32")  # fmt: skip
    print("| processes | ms per step (median) | speed-up (median of runs) |")
    print("| --- | --- | --- |")
    print(f"| 1 | {one * 1e3:.1f} | 1.00 |")
    print(f"| {args.procs} | {many * 1e3:.1f} | {statistics.median(ratios):.2f} |")
    return 0


def _forwarded(args: argparse.Namespace) -> List[str]:
    return ["--width", str(args.width), "--ffn", str(args.ffn), "--tokens", str(args.tokens),
            "--steps", str(args.steps), "--warmup", str(args.warmup),
            "--threads", str(args.threads)]  # fmt: skip


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--ffn", type=int, default=0, help="default 4 x width")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="compute threads per process (default: heat's, cores / processes)",
    )
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
