#!/usr/bin/env python3
"""
Lightning + ``DASOStrategy`` against Lightning + ``DDPStrategy`` (gloo): time per batch (issue 20).

The question is whether Lightning adds overhead to DASO: the ratio DDP / DASO under Lightning
should be the one ``benchmarks/daso.py`` measures for the plain loops (``torch DDP`` against
``heat DASO``). The same set-up: two emulated nodes of two processes (network namespaces joined by
links shaped to ``--rate``, see ``emulated_cluster.py``), an MLP of ~25M parameters (``--width``,
``--layers``) on random data, ``--compute-ms`` of emulated accelerator time per batch
(``time.sleep``, a third in forward, two thirds in backward, spread over the layers).

Each variant is one ``Trainer.fit`` of ``--epochs`` epochs of ``--batches`` batches; DASO runs
with one warm-up and one cool-down epoch, so the epochs in between are its cycling phase, and
those epochs are measured for both variants (the first batch of each is left out). Time per
batch is the slowest process's wall time from the start of the first measured batch to the end of
the last, divided by the batches.

Usage::

    python benchmarks/lightning_daso.py --runs 3                 # root: the emulated cluster
    python benchmarks/lightning_daso.py --local 4 --width 256    # no root: one machine,
                                                                 # HEAT_RANKS_PER_NODE=2, no shaping
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
VARIANTS = ("lightning DDP", "lightning DASO")


def worker(args: argparse.Namespace) -> None:
    import warnings

    import lightning.pytorch as pl
    import torch

    import heat as ht
    from heat.nn.lightning import DASOStrategy, HeatEnvironment

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    comm = ht.MPI_WORLD
    sys.path.insert(0, str(HERE))
    from daso import EmulatedCompute

    # per layer: a third of the batch's emulated compute in forward, two thirds in backward
    forward_s = args.compute_ms / 1000 / 3 / args.layers
    backward_s = 2 * args.compute_ms / 1000 / 3 / args.layers

    class Net(pl.LightningModule):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.layers = torch.nn.ModuleList(
                torch.nn.Linear(args.width, args.width) for _ in range(args.layers)
            )

        def forward(self, x):
            for k, layer in enumerate(self.layers):
                x = EmulatedCompute.apply(layer(x), forward_s, backward_s)
                if k < len(self.layers) - 1:
                    x = torch.relu(x)
            return x

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=1e-3)

    class Batches:
        def __init__(self):
            generator = torch.Generator().manual_seed(1 + comm.rank)
            self.data = [
                (torch.randn(args.batch, args.width, generator=generator),
                 torch.randn(args.batch, args.width, generator=generator))
                for _ in range(4)
            ]  # fmt: skip

        def __len__(self):
            return args.batches

        def __iter__(self):
            return (self.data[b % 4] for b in range(args.batches))

    class Clock(pl.Callback):
        """Wall time of the measured batches: epochs 1 .. epochs-2, without their first batch."""

        def __init__(self):
            self.seconds, self.batches, self.began = 0.0, 0, None

        def _measured(self, trainer, batch_idx):
            return 0 < trainer.current_epoch < args.epochs - 1 and batch_idx > 0

        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            if self._measured(trainer, batch_idx) and self.began is None:
                self.began = time.perf_counter()

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if self._measured(trainer, batch_idx):
                self.batches += 1
            if self.began is not None and batch_idx == args.batches - 1:
                self.seconds += time.perf_counter() - self.began
                self.began = None

    params = sum(p.numel() for p in Net().parameters())
    for variant in args.variants:
        if variant == "lightning DDP":
            strategy = pl.strategies.DDPStrategy(
                cluster_environment=HeatEnvironment(),
                parallel_devices=[torch.device("cpu")] * comm.size,
                process_group_backend="gloo",
            )
        else:
            strategy = DASOStrategy(warmup_epochs=1, cooldown_epochs=1)
        clock = Clock()
        trainer = pl.Trainer(
            strategy=strategy,
            accelerator="cpu",
            max_epochs=args.epochs,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            logger=False,
            callbacks=[clock],
        )
        trainer.fit(Net(), train_dataloaders=Batches())
        slowest = max(comm.allgather(clock.seconds))
        if comm.rank == 0:
            result = {
                "variant": variant,
                "run": args.run,
                "batch_s": slowest / max(clock.batches, 1),
                "batches": clock.batches,
                "params": params,
                "processes": comm.size,
            }
            print("RESULT " + json.dumps(result), flush=True)


def _forwarded(args: argparse.Namespace) -> List[str]:
    out = []
    for name in ("width", "layers", "batch", "compute_ms", "batches", "epochs"):
        out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return out + ["--variants", ",".join(args.variants)]


def _table(results: List[dict]) -> str:
    by_variant = {v: [r["batch_s"] for r in results if r["variant"] == v] for v in VARIANTS}
    lines = ["| variant | ms per batch (median) | runs |", "|---|---:|---:|"]
    for variant, values in by_variant.items():
        if values:
            lines.append(f"| {variant} | {statistics.median(values) * 1e3:.1f} | {len(values)} |")
    if all(by_variant.values()):
        ratio = statistics.median(by_variant["lightning DDP"]) / statistics.median(
            by_variant["lightning DASO"]
        )
        lines.append(f"\nDDP / DASO under Lightning: {ratio:.2f}x")
    return "\n".join(lines)


def driver(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env["OMP_NUM_THREADS"] = "1"
    results: List[dict] = []
    for run in range(args.runs):
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--run", str(run)]
        command += _forwarded(args)
        if args.local:
            sys.path.insert(0, str(HERE))
            from emulated_cluster import find_mpiexec

            env["HEAT_RANKS_PER_NODE"] = str(args.procs_per_node)
            mpiexec = find_mpiexec() or "mpiexec"
            done = subprocess.run(
                [mpiexec, "-n", str(args.local)] + command,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
            returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
        else:
            sys.path.insert(0, str(HERE))
            from emulated_cluster import EmulatedCluster, unsupported_reason

            reason = unsupported_reason()
            if reason is not None:
                print(f"lightning_daso.py: cannot emulate the cluster: {reason}", file=sys.stderr)
                return 2
            env.pop("HEAT_RANKS_PER_NODE", None)  # the namespaces are the nodes
            with EmulatedCluster(nodes=args.nodes, rate=args.rate) as cluster:
                outcome = cluster.run(
                    command, procs_per_node=args.procs_per_node, env=env, timeout=args.timeout
                )
            returncode, stdout, stderr = outcome.returncode, outcome.stdout, outcome.stderr
        if returncode != 0:
            print(stdout[-4000:], stderr[-4000:], file=sys.stderr)
            print(f"lightning_daso.py: run {run} failed (rc {returncode})", file=sys.stderr)
            return 1
        for line in stdout.splitlines():
            if line.startswith("RESULT "):
                result = json.loads(line[len("RESULT ") :])
                print(f"run {run}: {result['variant']:16s} {result['batch_s'] * 1e3:8.1f} ms/batch")
                results.append(result)
    where = (
        f"one machine, {args.local} processes, HEAT_RANKS_PER_NODE={args.procs_per_node}, no shaping"
        if args.local
        else f"{args.nodes} emulated nodes x {args.procs_per_node} processes, {args.rate} per link"
    )
    params = results[0]["params"] if results else 0
    print(
        f"\n{time.strftime('%Y-%m-%d')}, {where}, {params / 1e6:.1f}M parameters, "
        f"{args.compute_ms:g} ms emulated compute per batch, {args.batches} batches per epoch, "
        f"{args.epochs} epochs, median of {args.runs} runs\n"
    )
    print(_table(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--procs-per-node", type=int, default=2)
    parser.add_argument("--rate", default="1gbit", help="bandwidth of each node's link")
    parser.add_argument("--local", type=int, default=0, help="N processes on this machine")
    parser.add_argument("--width", type=int, default=2500, help="MLP width (2500: 25.0M params)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--compute-ms", type=float, default=100.0)
    parser.add_argument("--batches", type=int, default=17, help="batches per epoch")
    parser.add_argument("--epochs", type=int, default=3, help="the middle ones are measured")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--json", default=None)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    if args.epochs < 3:
        parser.error("--epochs must be >= 3 (warm-up, measured, cool-down)")
    if args.worker:
        worker(args)
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
