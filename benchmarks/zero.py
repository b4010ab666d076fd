#!/usr/bin/env python3
"""
Sharded data parallelism (issue 19): ``ht.optim.ZeroRedundancyOptimizer`` stages 1, 2 and 3
against torch's ``torch.distributed.optim.ZeroRedundancyOptimizer`` (with DistributedDataParallel)
and FSDP2 (``torch.distributed.fsdp.fully_shard``) on gloo, and unsharded DDP + Adam as the
reference, side by side in one run: the same MLP (``--layers`` Linear(width, width) layers with
ReLU, float32), the same batch per process, Adam, ``--procs`` (2) processes, one compute thread
each.

Every variant runs in its own ``mpiexec`` job (the variants alternate over ``--runs``), so that
each process's peak resident memory belongs to one variant. Reported per variant: the time per
step (``zero_grad``, forward, MSE, backward, step; the slowest process's median over ``--steps``
after ``--warmup``) and the peak memory per process: the peak resident set size (``ru_maxrss``)
minus the resident size just before the model was built, the largest over the processes. Every
process builds the whole model first (heat's stage 3 and FSDP2 free the rest afterwards), so the
model's size is a floor for every variant. A variant that fails (e.g. a collective gloo lacks on
CPU) prints its error instead of figures.

Usage::

    nice -n 10 python benchmarks/zero.py                          # width 1024, 6 layers, 1 run
    python benchmarks/zero.py --width 256 --layers 3 --steps 3    # a quick check of the script
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

VARIANTS = ["ddp-adam", "heat-zero1", "heat-zero2", "heat-zero3", "torch-zero", "torch-fsdp2"]
DESCRIPTIONS = {
    "ddp-adam": "torch DDP + Adam (unsharded)",
    "heat-zero1": "heat ZeroRedundancyOptimizer stage 1",
    "heat-zero2": "heat ZeroRedundancyOptimizer stage 2",
    "heat-zero3": "heat ZeroRedundancyOptimizer stage 3",
    "torch-zero": "torch ZeroRedundancyOptimizer + DDP",
    "torch-fsdp2": "torch FSDP2 fully_shard",
}


def _resident_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _load_lazy_modules() -> None:
    """
    Import what the variants load on first use (the first optimizer step imports
    ``torch._dynamo``, some 80 MiB), so that the baseline holds it for every variant alike.
    """
    import torch
    import torch.distributed.fsdp  # noqa: F401
    import torch.distributed.optim  # noqa: F401
    from torch.distributed.device_mesh import init_device_mesh  # noqa: F401

    probe = torch.zeros(2, requires_grad=True)
    probe.grad = torch.zeros(2)
    torch.optim.Adam([probe]).step()


def _build(variant: str, model, comm, bucket_mb: float):
    """(module to call, optimizer) of ``variant``."""
    import torch

    import heat as ht

    lr = 1e-4
    if variant.startswith("heat-zero"):
        stage = int(variant[-1])
        params = model if stage == 3 else model.parameters()
        return model, ht.optim.ZeroRedundancyOptimizer(
            params, torch.optim.Adam, stage=stage, lr=lr, bucket_size_mb=bucket_mb
        )
    group = ht.torch_process_group(comm)
    if variant == "ddp-adam":
        ddp = torch.nn.parallel.DistributedDataParallel(
            model, process_group=group, bucket_cap_mb=bucket_mb
        )
        return ddp, torch.optim.Adam(ddp.parameters(), lr=lr)
    if variant == "torch-zero":
        from torch.distributed.optim import ZeroRedundancyOptimizer

        ddp = torch.nn.parallel.DistributedDataParallel(
            model, process_group=group, bucket_cap_mb=bucket_mb
        )
        optimizer = ZeroRedundancyOptimizer(
            ddp.parameters(), optimizer_class=torch.optim.Adam, process_group=group, lr=lr
        )
        return ddp, optimizer
    if variant == "torch-fsdp2":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("cpu", (comm.size,))
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        return model, torch.optim.Adam(model.parameters(), lr=lr)
    raise ValueError(f"unknown variant {variant}")


def worker(args: argparse.Namespace) -> None:
    """One MPI job, one variant; rank 0 prints one JSON line."""
    sys.path.insert(0, str(ROOT))
    import torch

    import heat as ht

    comm = ht.MPI_WORLD
    torch.set_num_threads(1)
    record: Dict[str, object] = {"variant": args.variant, "procs": comm.size}
    error = None
    try:
        ht.torch_process_group(comm)  # every variant pays the same process-group set-up
        _load_lazy_modules()
        baseline = _resident_bytes()
        torch.manual_seed(0)
        layers: List[torch.nn.Module] = []
        for _ in range(args.layers):
            layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        module, optimizer = _build(args.variant, model, comm, args.bucket_mb)
        generator = torch.Generator().manual_seed(1 + comm.rank)
        x = torch.randn(args.batch, args.width, generator=generator)
        target = torch.randn(args.batch, args.width, generator=generator)
        times = []
        for step in range(args.warmup + args.steps):
            comm.Barrier()
            start = time.perf_counter()
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(module(x), target).backward()
            optimizer.step()
            elapsed = time.perf_counter() - start
            if step >= args.warmup:
                times.append(elapsed)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - baseline
        record["step_s"] = comm.allreduce(statistics.median(times), op=ht.MPI.MAX)
        record["peak_mb"] = comm.allreduce(peak, op=ht.MPI.MAX) / 2**20
        if args.variant.startswith("heat-zero"):
            record["state_mb"] = (
                comm.allreduce(optimizer.optimizer_state_bytes(), ht.MPI.MAX) / 2**20
            )
    except Exception as caught:  # noqa: B902 - a variant that does not run shows its error
        error = f"{type(caught).__name__}: {caught}".splitlines()[0][:300]
        traceback.print_exc(file=sys.stderr)
    errors = comm.allgather(error)
    if comm.rank == 0:
        failed = [e for e in errors if e]
        if failed:
            record = {"variant": args.variant, "procs": comm.size, "error": failed[0]}
        print(json.dumps(record), flush=True)
    sys.stdout.flush()
    if any(errors):  # a failed torch collective can leave gloo threads behind: do not wait
        os._exit(0)


def driver(args: argparse.Namespace) -> int:
    variants = args.variants.split(",") if args.variants else VARIANTS
    results: Dict[str, List[dict]] = {v: [] for v in variants}
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    params = args.layers * (args.width * args.width + args.width)
    print(f"model: {args.layers} x Linear({args.width}, {args.width}), {params / 1e6:.2f} M "
          f"parameters ({params * 4 / 2**20:.1f} MiB float32); batch {args.batch} per process; "
          f"{args.procs} processes", flush=True)  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    if args.mmap_threshold:
        # a fixed threshold: large tensors are mapped and unmapped, so the peak resident size
        # is what the variant holds, not how fragmented glibc's heap became (glibc's own,
        # growing threshold made the same job's peak vary by 40 MiB from run to run)
        environment["MALLOC_MMAP_THRESHOLD_"] = str(args.mmap_threshold)
    for run in range(args.runs):
        order = variants if run % 2 == 0 else variants[::-1]
        for variant in order:
            command = ["mpiexec", "-n", str(args.procs), sys.executable,
                       str(Path(__file__).resolve()), "--worker", "--variant", variant,
                       *_forwarded(args)]  # fmt: skip
            try:
                outcome = subprocess.run(
                    command, capture_output=True, text=True, timeout=args.timeout,
                    stdin=subprocess.DEVNULL, env=environment,
                )  # fmt: skip
                lines = [ln for ln in outcome.stdout.splitlines() if ln.startswith("{")]
                record = (
                    json.loads(lines[-1])
                    if lines
                    else {"error": f"exit {outcome.returncode}: {outcome.stderr[-300:]}"}
                )
            except subprocess.TimeoutExpired:
                record = {"error": f"timed out after {args.timeout} s"}
            results[variant].append(record)
            shown = record.get("error") or (
                f"{record['step_s'] * 1e3:.1f} ms per step, peak {record['peak_mb']:.1f} MiB"
            )
            print(f"run {run}: {variant}: {shown}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    print()
    print("| variant | ms per step (median) | peak MiB per process | optimizer state MiB |")
    print("| --- | --- | --- | --- |")
    for variant in variants:
        good = [r for r in results[variant] if "error" not in r]
        if not good:
            print(f"| {DESCRIPTIONS[variant]} | failed: {results[variant][0]['error']} | | |")
            continue
        step = statistics.median(r["step_s"] for r in good) * 1e3
        peak = statistics.median(r["peak_mb"] for r in good)
        state = statistics.median(r["state_mb"] for r in good) if "state_mb" in good[0] else None
        shown = f"{state:.1f}" if state is not None else ""
        print(f"| {DESCRIPTIONS[variant]} | {step:.1f} | {peak:.1f} | {shown} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


def _forwarded(args: argparse.Namespace) -> List[str]:
    return ["--width", str(args.width), "--layers", str(args.layers), "--batch", str(args.batch),
            "--bucket-mb", str(args.bucket_mb),
            "--steps", str(args.steps), "--warmup", str(args.warmup)]  # fmt: skip


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--batch", type=int, default=32, help="rows per process")
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument(
        "--bucket-mb", type=float, default=4, help="DDP's and heat's stage 1/2 bucket size"
    )
    parser.add_argument(
        "--mmap-threshold", type=int, default=2**20,
        help="MALLOC_MMAP_THRESHOLD_ of every job in bytes (0: glibc's dynamic default)",
    )  # fmt: skip
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--variants", default="", help="comma-separated subset of " + ",".join(VARIANTS)
    )
    parser.add_argument("--json", default="", help="write every record to this file")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
