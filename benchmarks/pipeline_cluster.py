#!/usr/bin/env python3
"""
Pipelines across the nodes of an emulated cluster, and hybrid pipelines (stages inside a node,
replicas across nodes), with the links' byte counters (issue 19).

Two "nodes" of two processes each (network namespaces joined by links shaped to ``--rate``,
1 Gbit/s, see ``emulated_cluster.py``; MPICH talks TCP between them, so what crosses nodes passes
the shaper). Every variant trains the same model on the same global batch: ``--layers`` (4)
``Linear(width, width)`` layers (``--width`` 1024: 4.2 MB of float32 parameters each), each
followed by an emulated accelerator kernel and a ReLU (none after the last), MSE loss, SGD. The
global batch is ``--micro-batches`` (8) x ``--micro-batch-size`` (32) rows: between two stages of
the pipeline across nodes one micro-batch's activation (or its gradient) is 32 x 1024 x 4 bytes =
131 kB. The emulated compute (``time.sleep``: a GPU leaves the host CPU idle, as in
``benchmarks/daso.py``, a third in forward and two thirds in backward) is ``--layer-ms`` (40) per
layer and micro-batch of the pipeline across nodes, proportional to the rows a call sees, so every
variant sleeps the same per layer and sample; the real CPU work (the matrix products) comes on top.

Variants (the first three without any communication):

* ``compute only, 4 stages`` / ``compute only, 2 stages``: every process runs the stage it has in
  the pipeline across nodes / in the hybrid pipeline alone, on the micro-batches of a batch; the
  slowest process gives the stage time ``T`` of that cut, and ``(m + p - 1) / m x T`` is the ideal
  time per batch of a synchronous pipeline of ``p`` stages and ``m`` micro-batches;
* ``compute only, whole model``: every process runs the whole model on its quarter of the batch
  (the data-parallel reference's compute, its ideal);
* ``pipeline across nodes``: ``ht.nn.Pipeline`` over the 4 processes, one layer per stage,
  ``"1f1b"``: stages 0, 1 on node 0 and 2, 3 on node 1, so only what passes between stage 1 and
  stage 2 crosses the link: expected ``2 x activation bytes x micro-batches`` per batch (forward
  and backward);
* ``hybrid, blocking``: ``ht.nn.Pipeline(replicas=2)``: 2 stages (2 layers each) inside a node,
  one replica (pipeline) per node, each on half of the batch (micro-batches of half the rows);
  at the end of every batch each stage's gradients are averaged with its replica on the other
  node (``Pipeline.replica_average``, one all-reduce per stage): expected each stage's gradient
  bytes per process and batch (``2 (R - 1) / R`` of them for ``R`` replicas);
* ``hybrid, DASO across nodes``: the same pipelines with ``average_replicas=False`` and
  ``ht.optim.DASO`` over ``pipe.replica_comm`` (a stage's processes on every node; defaults:
  global skip 8, bfloat16 on the wire) in its cycling phase; its warm-up epoch (blocking every
  batch) is the unmeasured warm-up, and the measured epoch ends with DASO's blocking average of its
  last batch, which is counted. Expected: each stage's parameters in bfloat16 (half their float32
  bytes) per process and DASO synchronization (a send or a blocking average, counted from DASO's
  timeline; 2 nodes);
* ``data parallel (reference)``: ``ht.nn.DataParallel`` over all 4 processes on the whole model
  (defaults: non-blocking buckets overlapped with the backward pass), each process a quarter of
  the batch: expected a ring all-reduce over 4 processes ordered node by node, ``2 (P - 1) / P``
  of the model's bytes leaving each node per batch.

Every variant is built and trains ``--warmup`` batches first (not measured). Then the variants take
turns block after block of ``--block`` batches (8: one DASO cycle), the order rotated from block
to block and run to run, until each has trained ``--batches`` measured batches, so a change of the
machine's load hits every variant alike. Time per batch is the sum over a variant's blocks of the
slowest process's wall time, divided by its batches; the table gives the median over ``--runs``
runs and their spread, next to the ideal from the compute-only times of the same run. Bytes are
each node's ``eth0`` transmit counter (read inside the node just before and after each block),
summed over both nodes, against the payload the algorithm should send (TCP/IP headers add a few
percent); ``link time`` is that payload per node at ``--rate``: what an exchange that overlaps
nothing adds to a batch.

Usage (root; about 2.5 minutes per run on 2 heavily loaded cores)::

    python benchmarks/pipeline_cluster.py --runs 3 --json pipeline_cluster.json
    python benchmarks/pipeline_cluster.py --runs 1 --batches 8 --warmup 1 --width 256  # quick check
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from daso import EmulatedKernel, _rotated, _spread, measure_across_nodes  # noqa: E402

VARIANTS = [
    "compute only, 4 stages",
    "compute only, 2 stages",
    "compute only, whole model",
    "pipeline across nodes",
    "hybrid, blocking",
    "hybrid, DASO across nodes",
    "data parallel (reference)",
]
# the variant whose compute-only time is the ideal's T, and the number of stages p of its cut
IDEAL = {
    "pipeline across nodes": ("compute only, 4 stages", "all"),
    "hybrid, blocking": ("compute only, 2 stages", "node"),
    "hybrid, DASO across nodes": ("compute only, 2 stages", "node"),
    "data parallel (reference)": ("compute only, whole model", None),
}


# ------------------------------------------------------------------------------------------------
# worker (one MPI rank inside an emulated node)
# ------------------------------------------------------------------------------------------------


def worker(args: argparse.Namespace) -> None:
    import torch

    import heat as ht

    torch.set_num_threads(1)
    comm = ht.MPI_WORLD
    rank, size = comm.rank, comm.size
    topology = comm.node_topology()
    per_node, nodes = topology.local_size, topology.num_nodes
    leader = topology.local_rank == 0
    node_of = comm.allgather(topology.node_index)
    if any(node_of[r] != r // per_node for r in range(size)):  # the same on every process
        raise RuntimeError(f"ranks are not placed node by node: nodes of ranks 0..: {node_of}")
    m, rows, width, layers = args.micro_batches, args.micro_batch_size, args.width, args.layers
    batch = m * rows
    mse = torch.nn.functional.mse_loss
    lr = 1e-4
    layer_bytes = 4 * (width * width + width)
    model_bytes = layers * layer_bytes

    def make_layers(call_rows: int) -> torch.nn.Sequential:
        """The model; its emulated kernels sleep as long as a call of ``call_rows`` rows takes."""
        torch.manual_seed(0)
        scale = args.layer_ms / 1000 * call_rows / rows
        modules = []
        for k in range(layers):
            modules += [torch.nn.Linear(width, width), EmulatedKernel(scale / 3, 2 * scale / 3)]
            if k < layers - 1:
                modules.append(torch.nn.ReLU())
        return torch.nn.Sequential(*modules)

    def split_points(stages: int) -> List[int]:
        """The first module of every stage but the first: ``layers / stages`` layers each."""
        return [3 * layers // stages * s for s in range(1, stages)]

    generator = torch.Generator().manual_seed(1)
    x = torch.randn(batch, width, generator=generator)
    y = torch.randn(batch, width, generator=generator)

    def stage_alone(stages: int):
        """Stage ``rank % stages`` of a cut into ``stages`` alone on a batch: no communication."""
        replicas = size // stages
        stage = rank % stages
        call_rows = rows // replicas
        model = list(make_layers(call_rows).children())
        bounds = [0] + split_points(stages) + [len(model)]
        module = torch.nn.Sequential(*model[bounds[stage] : bounds[stage + 1]])
        optimizer = torch.optim.SGD(module.parameters(), lr=lr)
        part = (rank // stages) * (batch // replicas)

        def train(batches):
            for _ in range(batches):
                optimizer.zero_grad()
                for i in range(m):
                    rows_i = slice(part + i * call_rows, part + (i + 1) * call_rows)
                    out = module(x[rows_i])
                    loss = mse(out, y[rows_i]) if stage == stages - 1 else out.sum()
                    (loss / m).backward()
                optimizer.step()

        return dict(train=train, expected=lambda batches: 0)

    def whole_model(data_parallel: bool):
        """Every process the whole model on its ``1 / size`` of the batch; DataParallel or not."""
        share = batch // size
        net = make_layers(share)
        optimizer = torch.optim.SGD(net.parameters(), lr=lr)
        model = net
        if data_parallel:
            optimizer = ht.optim.DataParallelOptimizer(optimizer)
            model = ht.nn.DataParallel(net, optimizer=optimizer)
        mine = slice(rank * share, (rank + 1) * share)

        def train(batches):
            for _ in range(batches):
                optimizer.zero_grad()
                mse(model(x[mine]), y[mine]).backward()
                optimizer.step()

        # a ring over the processes ordered node by node: one ring edge leaves every node
        ring = 2 * (size - 1) * model_bytes // size * nodes if data_parallel else 0
        return dict(train=train, expected=lambda batches: ring * batches)

    def pipeline_across_nodes():
        pipe = ht.nn.Pipeline(
            make_layers(rows), mse, torch.optim.SGD, {"lr": lr}, micro_batches=m,
            schedule="1f1b", split_points=split_points(size),
        )  # fmt: skip

        def train(batches):
            for _ in range(batches):
                pipe.zero_grad()
                pipe.train_step(x, y)
                pipe.step()

        activation_bytes = rows * width * 4
        crossings = sum(1 for s in range(size - 1) if node_of[s] != node_of[s + 1])
        per_batch = 2 * activation_bytes * m * crossings
        return dict(train=train, expected=lambda batches: per_batch * batches)

    def hybrid(daso: bool):
        pipe = ht.nn.Pipeline(
            make_layers(rows // nodes), mse, torch.optim.SGD, {"lr": lr}, micro_batches=m,
            split_points=split_points(per_node), replicas=nodes, average_replicas=not daso,
        )  # fmt: skip
        if pipe.replica != topology.node_index:
            raise RuntimeError(f"replica {pipe.replica} is not node {topology.node_index}")
        part = slice(pipe.replica * batch // nodes, (pipe.replica + 1) * batch // nodes)
        stage_bytes = [layer_bytes * layers // per_node] * per_node
        setup = {}
        if daso:
            optimizer = ht.optim.DASO(
                pipe.optimizer, total_epochs=3, comm=pipe.replica_comm, warmup_epochs=1,
                cooldown_epochs=1,
            )  # fmt: skip
            ht.nn.DataParallelMultiGPU(pipe.stage_module, optimizer, comm=pipe.replica_comm)
            setup["daso"] = optimizer
            zero_grad, step = optimizer.zero_grad, optimizer.step
        else:
            zero_grad, step = pipe.zero_grad, pipe.step

        def train(batches):
            for _ in range(batches):
                zero_grad()
                setup["loss"] = pipe.train_step(x[part], y[part])
                step()

        def expected(batches):
            if not daso:  # each stage's all-reduce among its replicas, on every process
                return sum(stage_bytes) * size // per_node * 2 * (nodes - 1) // nodes * batches
            # each DASO synchronization: every process sends its stage in bfloat16 (2 nodes)
            return setup["syncs"] * sum(stage_bytes) // 2 * nodes

        setup.update(train=train, expected=expected)
        return setup

    builders = {
        "compute only, 4 stages": lambda: stage_alone(size),
        "compute only, 2 stages": lambda: stage_alone(per_node),
        "compute only, whole model": lambda: whole_model(False),
        "pipeline across nodes": pipeline_across_nodes,
        "hybrid, blocking": lambda: hybrid(False),
        "hybrid, DASO across nodes": lambda: hybrid(True),
        "data parallel (reference)": lambda: whole_model(True),
    }
    variants = [v for v in VARIANTS if v in args.variants]
    blocks = -(-args.batches // args.block)
    built = {}
    for variant in variants:  # build and warm up every variant before any measurement
        built[variant] = setup = builders[variant]()
        daso = setup.get("daso")
        if daso is not None:
            daso.last_batch = args.warmup  # epoch 0: warm-up, blocking every batch
        setup["train"](args.warmup)
        if daso is not None:
            daso.epoch_loss_logic(setup["loss"])
            daso.last_batch = blocks * args.block  # epoch 1: cycling, the steady state
            setup["first_record"] = len(daso.timeline)
        comm.Barrier()

    seconds = {v: 0.0 for v in variants}
    node_tx = {v: [0] * nodes for v in variants}
    loads = [os.getloadavg()[0]]
    for block in range(blocks):
        for variant in _rotated(variants, block + args.run):
            train = built[variant]["train"]
            elapsed, deltas = measure_across_nodes(comm, leader, lambda: train(args.block))
            seconds[variant] += elapsed
            node_tx[variant] = [a + d["tx"] for a, d in zip(node_tx[variant], deltas)]
        loads.append(os.getloadavg()[0])
    batches = blocks * args.block
    for variant in variants:
        setup = built[variant]
        extra = {}
        if "daso" in setup:
            actions = [r.action for r in list(setup["daso"].timeline)[setup["first_record"] :]]
            setup["syncs"] = sum(1 for a in actions if "send" in a or a == "blocking")
            extra["daso_syncs"] = setup["syncs"]
        if rank == 0:
            line = {
                "variant": variant, "run": args.run, "batches": batches,
                "batch_s": seconds[variant] / batches, "node_tx_bytes": node_tx[variant],
                "expected_bytes": setup["expected"](batches), "model_bytes": model_bytes,
                "activation_bytes": rows * width * 4, "ranks": size, "ranks_per_node": per_node,
                "nodes": nodes, "load_avg": [round(v, 2) for v in loads], **extra,
            }  # fmt: skip
            print("RESULT " + json.dumps(line), flush=True)
    comm.Barrier()


# ------------------------------------------------------------------------------------------------
# driver
# ------------------------------------------------------------------------------------------------


def link_rate_bytes(rate: str) -> float:
    """Bytes per second of a ``tc`` rate such as ``1gbit`` or ``100mbit``."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", rate.strip().lower())
    if match is None:
        raise ValueError(f"rate must look like 1gbit, 100mbit or 500kbit, got {rate!r}")
    return float(match.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[match.group(2)] / 8


def _ideal_s(variant: str, run_rows: List[dict], args: argparse.Namespace) -> Optional[float]:
    """A variant's ideal time per batch from the compute-only time of the same run."""
    if variant not in IDEAL:
        return None
    base, cut = IDEAL[variant]
    found = [r["batch_s"] for r in run_rows if r["variant"] == base]
    if not found:
        return None
    first = run_rows[0]
    p = {"all": first["ranks"], "node": first["ranks_per_node"], None: 1}[cut]
    m = args.micro_batches
    return (m + p - 1) / m * found[0] if cut else found[0]


def _table(results: List[dict], args: argparse.Namespace) -> str:
    runs: Dict[int, List[dict]] = {}
    for r in results:
        runs.setdefault(r["run"], []).append(r)
    rate = link_rate_bytes(args.rate)
    lines = [
        "| variant | time/batch (ms), median | spread over runs | ideal (ms) | time / ideal | "
        "link bytes/batch, both nodes, measured (eth0) | expected (payload) | measured/expected "
        "| link time at the rate (ms) | runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for variant in VARIANTS:
        rows = [r for r in results if r["variant"] == variant]
        if not rows:
            continue
        times = [r["batch_s"] for r in rows]
        ideals = [(r, _ideal_s(variant, runs[r["run"]], args)) for r in rows]
        ideal, ratio = "-", "-"
        if all(i is not None for _, i in ideals):
            ideal = f"{statistics.median(i for _, i in ideals) * 1e3:.0f}"
            ratio = f"{statistics.median(r['batch_s'] / i for r, i in ideals):.2f}"
        measured = statistics.median(sum(r["node_tx_bytes"]) / r["batches"] for r in rows)
        expected = statistics.median(r["expected_bytes"] / r["batches"] for r in rows)
        versus = f"{measured / expected:.3f}" if expected else "-"
        link_ms = expected / rows[0]["nodes"] / rate * 1e3
        lines.append(
            f"| {variant} | {statistics.median(times) * 1e3:.0f} | {_spread(times)} | {ideal} | "
            f"{ratio} | {measured / 1e6:.2f} MB | {expected / 1e6:.2f} MB | {versus} | "
            f"{link_ms:.0f} | {len(rows)} |"
        )
    loads = [x for r in results if r["variant"] == results[0]["variant"] for x in r["load_avg"]]
    lines += ["", f"machine load average during the runs: {min(loads):.1f}-{max(loads):.1f}"]
    return "\n".join(lines)


def driver(args: argparse.Namespace) -> int:
    from emulated_cluster import EmulatedCluster, unsupported_reason

    reason = unsupported_reason()
    if reason is not None:
        print(f"pipeline_cluster.py: cannot emulate the cluster here: {reason}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("HEAT_RANKS_PER_NODE", None)  # the namespaces are the nodes
    began = time.strftime("%Y-%m-%d %H:%M")
    load_before = os.getloadavg()[0]
    print(f"load average at start: {load_before:.2f}", flush=True)
    results: List[dict] = []
    with EmulatedCluster(nodes=args.nodes, rate=args.rate) as cluster:
        for run in range(args.runs):
            command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--run", str(run)]
            before = cluster.link_counters()
            outcome = cluster.run(
                command + _forwarded(args), procs_per_node=args.procs_per_node, env=env,
                timeout=args.timeout,
            )  # fmt: skip
            after = cluster.link_counters()
            if outcome.returncode != 0 or outcome.timed_out:
                print(outcome.stdout[-4000:], outcome.stderr[-4000:], file=sys.stderr)
                print(f"pipeline_cluster.py: run {run} failed (rc {outcome.returncode})",
                      file=sys.stderr)  # fmt: skip
                return 1
            run_results = [json.loads(line[len("RESULT ") :])
                           for line in outcome.stdout.splitlines() if line.startswith("RESULT ")]  # fmt: skip
            job = sum(after[n]["tx_bytes"] - before[n]["tx_bytes"] for n in after)
            inside = sum(sum(r["node_tx_bytes"]) for r in run_results)
            print(f"run {run}: {outcome.wall_s:.0f} s; whole job across the links {job / 1e6:.0f} "
                  f"MB, of which measured batches {inside / 1e6:.0f} MB", flush=True)  # fmt: skip
            for r in run_results:
                print(f"  {r['variant']:28s} {r['batch_s'] * 1e3:8.0f} ms/batch, link "
                      f"{sum(r['node_tx_bytes']) / r['batches'] / 1e6:6.2f} MB/batch (expected "
                      f"{r['expected_bytes'] / r['batches'] / 1e6:.2f})", flush=True)  # fmt: skip
            results.extend(run_results)
    first = results[0]
    print(
        f"\n{began}, {args.nodes} nodes x {args.procs_per_node} processes, {args.rate} per link, "
        f"{args.layers} x Linear({args.width}, {args.width}) ({first['model_bytes'] / 1e6:.1f} MB "
        f"float32), batch {args.micro_batches} x {args.micro_batch_size} rows (activation "
        f"{first['activation_bytes'] / 1e6:.3f} MB per micro-batch), {args.layer_ms:g} ms emulated "
        f"compute per layer and micro-batch (sleep), {args.batches} measured batches per variant "
        f"interleaved in blocks of {args.block}, median of {args.runs} runs; load average "
        f"{load_before:.1f} at start, {os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} "
        "cores)\n"
    )
    print(_table(results, args))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


def _forwarded(args: argparse.Namespace) -> List[str]:
    out = []
    for name in ("micro_batches", "micro_batch_size", "width", "layers", "layer_ms", "batches",
                 "warmup", "block"):  # fmt: skip
        out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return out + ["--variants", ";".join(args.variants)]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--procs-per-node", type=int, default=2)
    parser.add_argument("--rate", default="1gbit", help="bandwidth of each node's link")
    parser.add_argument("--width", type=int, default=1024, help="features of every layer")
    parser.add_argument("--layers", type=int, default=4, help="Linear layers (one per process)")
    parser.add_argument("--micro-batches", type=int, default=8)
    parser.add_argument("--micro-batch-size", type=int, default=32, help="rows per micro-batch")
    parser.add_argument("--layer-ms", type=float, default=40.0,
                        help="emulated compute per layer and micro-batch (forward + backward)")  # fmt: skip
    parser.add_argument("--batches", type=int, default=16, help="measured batches per variant")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured batches first")
    parser.add_argument("--block", type=int, default=8,
                        help="batches per variant before the next one runs")  # fmt: skip
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument(
        "--variants",
        type=lambda s: [v.strip() for v in s.split(";")],
        default=list(VARIANTS),
        help="a subset, separated by semicolons, of: " + "; ".join(VARIANTS),
    )
    parser.add_argument("--json", help="write every run's results here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {VARIANTS}")
    try:
        link_rate_bytes(args.rate)
    except ValueError as error:
        parser.error(str(error))
    processes = args.nodes * args.procs_per_node
    if args.layers % processes or args.micro_batch_size % args.nodes:
        parser.error(
            f"--layers ({args.layers}) must be a multiple of the processes ({processes}) and "
            f"--micro-batch-size ({args.micro_batch_size}) of the nodes ({args.nodes})"
        )
    if args.worker:
        worker(args)
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
