#!/usr/bin/env python3
"""
DASO against the usual ways of data-parallel training, on an emulated cluster (issue 9).

Two "nodes" of two processes each (network namespaces, see ``emulated_cluster.py``), joined by
links shaped to ``--rate`` (1 Gbit/s) in each direction; MPICH talks TCP between them, so
inter-node traffic really crosses the shaper. Every variant trains the same MLP of ~25M parameters
(``--width``, ``--layers``) on random data, with the same emulated accelerator compute per batch:
``--compute-ms`` milliseconds of ``time.sleep`` (a GPU leaves the host CPU idle), one third in the
forward pass and two thirds in the backward pass, spread over the layers, so communication
overlapped with the backward pass (DDP, heat's non-blocking buckets) has compute to hide behind.
The real CPU work (forward/backward of a batch of ``--batch`` samples, the optimizer step) comes on
top and is the same for every variant; the ``compute only`` variant (no communication) measures it.

Variants (all SGD, the same learning rate, the same number of batches):

* ``flat blocking``: ``ht.nn.DataParallel(blocking_parameter_updates=True)`` — fused buckets of
  gradients all-reduced over all 4 processes after the backward pass (Horovod-style);
* ``torch DDP``: ``torch.nn.parallel.DistributedDataParallel`` on gloo, its group from heat
  (``ht.torch_process_group``), buckets overlapped with the backward pass;
* ``hierarchical blocking``: ``ht.nn.DataParallel(hierarchical=True, blocking_...=True)`` — node
  all-reduce, each process its slice across nodes, node all-gather;
* ``torch post-local-SGD``: DDP with ``post_localSGD_hook`` (gradients averaged inside the node
  every batch) and ``PostLocalSGDOptimizer`` + ``PeriodicModelAverager(period=8)`` (parameters
  averaged over all processes every 8 batches, blocking, float32) — what a PyTorch user would
  pick instead of DASO;
* ``heat DASO``: ``ht.optim.DASO`` defaults (global skip 8, 2 batches to wait, bfloat16 on the
  wire) in its cycling phase. Its epoch 0 (warm-up, blocking every batch) is not measured; the
  measured epoch ends with DASO's blocking synchronization of the last batch, which is counted. A
  cool-down epoch is measured and reported separately.

Every variant is built and trains ``--warmup`` batches first (not measured: DDP's bucket rebuild,
first-touch of buffers, post-local-SGD's global-all-reduce warm-up, DASO's blocking epoch 0).
Then the variants take turns, block after block of ``--block`` batches (8: one DASO cycle), the
order rotated from block to block, until each has trained ``--batches`` measured batches: a change
of the machine's load during a run hits every variant alike. Time per batch is the sum over a
variant's blocks of the slowest process's wall time, divided by its batches; exposed
communication is that minus the ``compute only`` time per batch of the same interleaving. The
table gives the median over ``--runs`` runs and their spread, the machine's load average during
the runs, and DASO's exposed time per batch by phase from its own timeline (waiting for the
node-local gradient average, starting a send, receiving and blending, blocking averages).
``--busy N`` runs N busy-looping processes beside the job, to measure under background load. Bytes across nodes
are read inside each node (the node's ``eth0`` counters in sysfs and its ``tbf`` qdisc's byte
counter, i.e. what the shaper passed) just before and after the measured batches, and compared with
what the algorithm should send (``expected``, payload only: TCP/IP headers add a few percent).
The driver also checks the links' counters from outside for the whole job.

Usage (root; about 10 minutes for 3 runs)::

    python benchmarks/daso.py --runs 3 --json daso.json
    python benchmarks/daso.py --runs 3 --busy 2 --json daso-loaded.json   # two busy processes
    python benchmarks/daso.py --runs 1 --batches 8 --width 512   # a quick check of the script
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
from typing import Callable, Dict, List, Optional

import torch

HERE = Path(__file__).resolve().parent
VARIANTS = [
    "compute only",
    "flat blocking",
    "torch DDP",
    "hierarchical blocking",
    "torch post-local-SGD",
    "heat DASO",
]
GLOBAL_PERIOD = 8  # DASO's max_global_skips default; post-local-SGD averages as often


# ------------------------------------------------------------------------------------------------
# worker (one MPI rank inside an emulated node)
# ------------------------------------------------------------------------------------------------


def _node_bytes() -> Dict[str, int]:
    """This node's eth0 bytes sent (sysfs) and the shaper's bytes passed (tc); 0 without eth0."""
    stats = Path("/sys/class/net/eth0/statistics")
    if not stats.exists():
        return {"tx": 0, "rx": 0, "qdisc": 0}
    out = {
        "tx": int((stats / "tx_bytes").read_text()),
        "rx": int((stats / "rx_bytes").read_text()),
    }
    try:
        qdiscs = json.loads(
            subprocess.run(
                ["tc", "-j", "-s", "qdisc", "show", "dev", "eth0"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        out["qdisc"] = sum(int(q.get("bytes", 0)) for q in qdiscs)
    except (OSError, subprocess.CalledProcessError, ValueError):
        out["qdisc"] = 0
    return out


def measure_across_nodes(comm, leader: bool, run: Callable[[], object]):
    """
    Run ``run()`` on every process of ``comm`` between barriers; return the slowest process's
    wall seconds and, per node, the byte counters' deltas (read by its ``leader``) around it.
    """
    comm.Barrier()
    before = _node_bytes() if leader else None
    comm.Barrier()
    began = time.perf_counter()
    run()
    elapsed = time.perf_counter() - began
    comm.Barrier()
    after = _node_bytes() if leader else None
    slowest = max(comm.allgather(elapsed))
    deltas = comm.allgather({k: after[k] - before[k] for k in after} if leader else None)
    return slowest, [d for d in deltas if d is not None]


class EmulatedCompute(torch.autograd.Function):
    """
    Accelerator time that leaves the host CPU idle (a GPU kernel): ``EmulatedCompute.apply(x,
    forward_s, backward_s)`` sleeps ``forward_s`` seconds and returns a copy of ``x``; its
    backward sleeps ``backward_s`` seconds and passes the gradient on.
    """

    @staticmethod
    def forward(ctx, x, forward_s: float, backward_s: float):
        ctx.backward_s = backward_s
        time.sleep(forward_s)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        time.sleep(ctx.backward_s)
        return grad, None, None


class EmulatedKernel(torch.nn.Module):
    """:class:`EmulatedCompute` as a layer, e.g. in an ``nn.Sequential`` cut into stages."""

    def __init__(self, forward_s: float, backward_s: float):
        super().__init__()
        self.forward_s, self.backward_s = forward_s, backward_s

    def forward(self, x):
        return EmulatedCompute.apply(x, self.forward_s, self.backward_s)


def worker(args: argparse.Namespace) -> None:
    import torch.distributed as dist

    import heat as ht
    from heat.core.communication import MPI_WORLD, torch_process_group

    torch.set_num_threads(1)
    comm = MPI_WORLD
    rank, size = comm.rank, comm.size
    topology = comm.node_topology()
    world_group = torch_process_group(comm)  # also the default group (DDP, new_subgroups)
    per_node = topology.local_size
    # per layer: a third of the batch's emulated compute in forward, two thirds in backward
    forward_s = args.compute_ms / 1000 / 3 / args.layers
    backward_s = 2 * args.compute_ms / 1000 / 3 / args.layers

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            widths = [args.width] * (args.layers + 1)
            self.layers = torch.nn.ModuleList(
                torch.nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:])
            )

        def forward(self, x):
            for k, layer in enumerate(self.layers):
                x = EmulatedCompute.apply(layer(x), forward_s, backward_s)
                if k < len(self.layers) - 1:
                    x = torch.relu(x)
            return x

    def make_net():
        torch.manual_seed(0)
        return Net()

    numel = sum(p.numel() for p in make_net().parameters())
    param_bytes = 4 * numel
    generator = torch.Generator().manual_seed(1 + rank)
    data = [
        (torch.randn(args.batch, args.width, generator=generator),
         torch.randn(args.batch, args.width, generator=generator))
        for _ in range(4)
    ]  # fmt: skip
    leader = topology.local_rank == 0
    # ring all-reduce over P processes ordered node by node: one ring edge leaves each node
    ring_node_tx = 2 * (size - 1) * param_bytes // size

    def train(model, optimizer, batches, zero_grad=None, step=None):
        for b in range(batches):
            x, y = data[b % len(data)]
            (zero_grad or optimizer.zero_grad)()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            (step or optimizer.step)()
        return loss

    def measure(run_batches):
        return measure_across_nodes(comm, leader, run_batches)

    def report(variant, seconds, batches, nodes, expected, extra=None):
        if rank == 0:
            line = {
                "variant": variant,
                "run": args.run,
                "batches": batches,
                "batch_s": seconds / batches,
                "node_tx_bytes": [n["tx"] for n in nodes],
                "node_qdisc_bytes": [n["qdisc"] for n in nodes],
                "expected_node_tx_bytes": expected,
                "params": numel,
                "ranks": size,
                "ranks_per_node": per_node,
                "nodes": topology.num_nodes,
                **(extra or {}),
            }
            print("RESULT " + json.dumps(line), flush=True)

    lr = 1e-3

    def build(variant):
        """(model, optimizer, zero_grad, step) of ``variant``, warmed up; DASO's epoch 0 is its
        warm-up (blocking every batch) and its measured batches form the cycling epoch."""
        net = make_net()
        if variant == "compute only":
            opt = torch.optim.SGD(net.parameters(), lr=lr)
            return dict(model=net, opt=opt)
        if variant in ("flat blocking", "hierarchical blocking"):
            opt = ht.optim.DataParallelOptimizer(torch.optim.SGD(net.parameters(), lr=lr))
            model = ht.nn.DataParallel(
                net,
                optimizer=opt,
                blocking_parameter_updates=True,
                hierarchical=variant.startswith("hier"),
            )
            return dict(model=model, opt=opt)
        if variant == "torch DDP":
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(net, process_group=world_group)
            return dict(model=model, opt=torch.optim.SGD(model.parameters(), lr=lr))
        if variant == "torch post-local-SGD":
            from torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook import (
                PostLocalSGDState,
                post_localSGD_hook,
            )
            from torch.distributed.algorithms.model_averaging.averagers import (
                PeriodicModelAverager,
            )
            from torch.distributed.optim import PostLocalSGDOptimizer
            from torch.nn.parallel import DistributedDataParallel

            subgroup = subgroups["node"]
            model = DistributedDataParallel(net, process_group=world_group)
            state = PostLocalSGDState(
                process_group=world_group, subgroup=subgroup, start_localSGD_iter=args.warmup
            )
            model.register_comm_hook(state, post_localSGD_hook)
            averager = PeriodicModelAverager(
                period=GLOBAL_PERIOD, warmup_steps=args.warmup, process_group=world_group
            )
            opt = PostLocalSGDOptimizer(
                optim=torch.optim.SGD(model.parameters(), lr=lr), averager=averager
            )
            return dict(model=model, opt=opt)
        if variant == "heat DASO":
            local = torch.optim.SGD(net.parameters(), lr=lr)
            daso = ht.optim.DASO(
                local_optimizer=local, total_epochs=3, warmup_epochs=1, cooldown_epochs=1
            )
            model = ht.nn.DataParallelMultiGPU(net, daso)
            return dict(model=model, opt=daso, daso=daso)
        raise ValueError(f"unknown variant {variant!r}")

    variants = [v for v in VARIANTS if v in args.variants]
    if "torch post-local-SGD" in variants:
        subgroups = {"node": dist.new_subgroups(group_size=per_node)[0]}  # collective: once
    built = {}
    for variant in variants:  # build and warm up every variant before any measurement
        built[variant] = setup = build(variant)
        if "daso" in setup:
            setup["daso"].last_batch = args.warmup  # epoch 0: warm-up, blocking every batch
        loss = train(setup["model"], setup["opt"], args.warmup)
        if "daso" in setup:
            setup["daso"].epoch_loss_logic(loss)
            blocks = -(-args.batches // args.block)
            setup["daso"].last_batch = blocks * args.block  # epoch 1: cycling, the steady state
            setup["first_record"] = len(setup["daso"].timeline)
        comm.Barrier()

    # interleaved: block after block, every variant in turn (rotated per block), so a change of
    # the machine's load hits every variant alike; the slowest process's time of each block
    seconds = {v: 0.0 for v in variants}
    counted = {v: 0 for v in variants}
    node_bytes = {v: [] for v in variants}
    loads = [os.getloadavg()[0]]
    blocks = -(-args.batches // args.block)
    last_loss = {}
    for block in range(blocks):
        for variant in _rotated(variants, block + args.run):
            setup = built[variant]
            holder = {}
            elapsed, nodes = measure(
                lambda: holder.setdefault("loss", train(setup["model"], setup["opt"], args.block))
            )
            last_loss[variant] = holder["loss"]
            seconds[variant] += elapsed
            counted[variant] += args.block
            node_bytes[variant].append(nodes)
        loads.append(os.getloadavg()[0])
    for variant in variants:
        setup = built[variant]
        nodes = [
            {"tx": sum(block[i]["tx"] for block in node_bytes[variant]),
             "qdisc": sum(block[i]["qdisc"] for block in node_bytes[variant])}
            for i in range(len(node_bytes[variant][0]))
        ]  # fmt: skip
        batches = counted[variant]
        extra = {"load_avg": [round(x, 2) for x in loads], "block": args.block}
        if variant == "compute only":
            expected = 0
        elif variant == "flat blocking" or variant == "torch DDP":
            expected = ring_node_tx * batches
        elif variant == "hierarchical blocking":
            expected = param_bytes * batches  # a node sends the whole vector once per batch
        elif variant == "torch post-local-SGD":
            averages = sum(1 for step in range(batches) if step % GLOBAL_PERIOD == 0)
            expected = ring_node_tx * averages
            extra["global_averages"] = averages
        else:  # heat DASO
            records = list(setup["daso"].timeline)[setup["first_record"] :]
            actions = [r.action for r in records]
            # every send and every blocking average moves this process's slice (1/G of the
            # vector) in bfloat16 once to the other node: a node sends half the float32 vector
            syncs = sum(1 for a in actions if "send" in a or a == "blocking")
            expected = syncs * param_bytes // 2
            phases = {}
            for record in records:
                for phase, value in record.phases.items():
                    phases[phase] = phases.get(phase, 0.0) + value
            # the slowest process's exposed time per batch, by phase
            gathered = comm.allgather(phases)
            extra.update(
                global_syncs=syncs,
                actions=actions,
                daso_timeline_exposed_s=max(comm.allgather(sum(r.exposed_seconds for r in records)))
                / batches,
                daso_phases_s={
                    phase: max(g.get(phase, 0.0) for g in gathered) / batches
                    for phase in sorted({p for g in gathered for p in g})
                },
                daso_timeline_cross_bytes_all_ranks=sum(
                    comm.allgather(sum(r.bytes_cross_node for r in records))
                ),
            )
        report(variant, seconds[variant], batches, nodes, expected, extra)
    if "heat DASO" in built:
        daso = built["heat DASO"]["daso"]
        daso.epoch_loss_logic(last_loss["heat DASO"])
        daso.last_batch = args.cooldown  # epoch 2: cool-down (blocking every batch)
        elapsed, nodes = measure(lambda: train(built["heat DASO"]["model"], daso, args.cooldown))
        report(
            "heat DASO cool-down", elapsed, args.cooldown, nodes, args.cooldown * param_bytes // 2
        )
    comm.Barrier()


def _rotated(items: List[str], shift: int) -> List[str]:
    """Rotate the order of the variants from run to run, so no variant always runs first."""
    shift %= max(len(items), 1)
    return items[shift:] + items[:shift]


# ------------------------------------------------------------------------------------------------
# driver
# ------------------------------------------------------------------------------------------------


def _spread(values: List[float]) -> str:
    return f"{min(values) * 1e3:.0f}-{max(values) * 1e3:.0f}" if len(values) > 1 else "-"


def _table(results: List[dict], args: argparse.Namespace) -> str:
    by_variant: Dict[str, List[dict]] = {}
    for r in results:
        by_variant.setdefault(r["variant"], []).append(r)
    base = (
        statistics.median(r["batch_s"] for r in by_variant.get("compute only", []))
        if ("compute only" in by_variant)
        else None
    )
    lines = [
        "| variant | time/batch (ms), median | spread over runs | exposed comm/batch (ms) | "
        "cross-node bytes/batch/node, measured (eth0) | expected (payload) | measured/expected "
        "| runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    medians = {}
    for variant in VARIANTS + ["heat DASO cool-down"]:
        rows = by_variant.get(variant)
        if not rows:
            continue
        times = [r["batch_s"] for r in rows]
        t = statistics.median(times)
        medians[variant] = t
        tx = statistics.median(
            sum(r["node_tx_bytes"]) / len(r["node_tx_bytes"]) / r["batches"] for r in rows
        )
        expected = rows[0]["expected_node_tx_bytes"] / rows[0]["batches"]
        exposed = f"{(t - base) * 1e3:.0f}" if base is not None else "-"
        ratio = f"{tx / expected:.3f}" if expected else "-"
        lines.append(
            f"| {variant} | {t * 1e3:.0f} | {_spread(times)} | {exposed} | {tx / 1e6:.1f} MB | "
            f"{expected / 1e6:.1f} MB | {ratio} | {len(rows)} |"
        )
    lines.append("")
    daso_rows = by_variant.get("heat DASO", [])
    if daso_rows and daso_rows[0].get("daso_phases_s") is not None:
        phases = sorted({p for r in daso_rows for p in r["daso_phases_s"]})
        parts = [
            f"{p} {statistics.median(r['daso_phases_s'].get(p, 0.0) for r in daso_rows) * 1e3:.1f}"
            for p in phases
        ]
        lines.append(
            "DASO's exposed time per batch by phase (DASO's timeline, slowest process, median "
            "of runs, ms): " + ", ".join(parts)
        )
    loads = [x for r in results if r["variant"] == "compute only" for x in r.get("load_avg", [])]
    if loads:
        lines.append(f"machine load average during the runs: {min(loads):.1f}-{max(loads):.1f}")
    if "heat DASO" in medians:
        if base is not None:
            share = (medians["heat DASO"] - base) / base
            verdict = "met" if share <= 0.25 else "NOT met"
            lines.append(
                f"DASO's exposed communication: {share:.0%} of the compute-only time per batch "
                f"(target <= 25%: {verdict})"
            )
        for other, target in (
            ("flat blocking", 4.0),
            ("torch DDP", 4.0),
            ("torch post-local-SGD", 1.5),
        ):
            if other in medians:
                speedup = medians[other] / medians["heat DASO"]
                verdict = "met" if speedup >= target else "NOT met"
                lines.append(
                    f"DASO vs {other}: {speedup:.2f}x faster per batch (target >= {target}x: "
                    f"{verdict})"
                )
        if "hierarchical blocking" in medians:
            lines.append(
                "DASO vs hierarchical blocking: "
                f"{medians['hierarchical blocking'] / medians['heat DASO']:.2f}x faster per batch"
            )
    return "\n".join(lines)


def driver(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(HERE))
    from emulated_cluster import unsupported_reason

    reason = unsupported_reason()
    if reason is not None:
        print(f"daso.py: cannot emulate the cluster here: {reason}", file=sys.stderr)
        return 2
    results: List[dict] = []
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("HEAT_RANKS_PER_NODE", None)  # the namespaces are the nodes
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(args.busy)
    ]  # background load beside the job (--busy N)
    try:
        return _runs(args, env, results, busy)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def _runs(args: argparse.Namespace, env: Dict[str, str], results: List[dict], busy: list) -> int:
    sys.path.insert(0, str(HERE))
    from emulated_cluster import EmulatedCluster

    print(
        f"load average at start: {os.getloadavg()[0]:.2f}; {len(busy)} busy background process(es)",
        flush=True,
    )
    with EmulatedCluster(nodes=args.nodes, rate=args.rate) as cluster:
        for run in range(args.first_run, args.first_run + args.runs):
            command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--run", str(run)]
            command += _forwarded(args)
            before = cluster.link_counters()
            outcome = cluster.run(
                command, procs_per_node=args.procs_per_node, env=env, timeout=args.timeout
            )
            after = cluster.link_counters()
            if outcome.returncode != 0 or outcome.timed_out:
                print(outcome.stdout[-4000:], outcome.stderr[-4000:], file=sys.stderr)
                print(f"daso.py: run {run} failed (rc {outcome.returncode})", file=sys.stderr)
                return 1
            run_results = [
                json.loads(line[len("RESULT ") :])
                for line in outcome.stdout.splitlines()
                if line.startswith("RESULT ")
            ]
            job_tx = sum(after[n]["tx_bytes"] - before[n]["tx_bytes"] for n in after)
            job_qdisc = sum(
                after[n].get("qdisc_sent_bytes", 0) - before[n].get("qdisc_sent_bytes", 0)
                for n in after
            )
            inside = sum(sum(r["node_tx_bytes"]) for r in run_results)
            print(
                f"run {run}: {outcome.wall_s:.0f} s; whole job across the links {job_tx / 1e6:.0f}"
                f" MB (shaper {job_qdisc / 1e6:.0f} MB), of which measured batches "
                f"{inside / 1e6:.0f} MB",
                flush=True,
            )
            for r in run_results:
                print(
                    f"  {r['variant']:24s} {r['batch_s'] * 1e3:8.0f} ms/batch  node tx "
                    f"{[round(b / 1e6, 1) for b in r['node_tx_bytes']]} MB, expected "
                    f"{r['expected_node_tx_bytes'] / 1e6:.1f} MB/node",
                    flush=True,
                )
            results.extend(run_results)
    table = _table(results, args)
    first = results[0] if results else {}
    print(
        f"\n{time.strftime('%Y-%m-%d')}, {args.nodes} nodes x {args.procs_per_node} processes, "
        f"{args.rate} per link, {first.get('params', 0) / 1e6:.1f}M parameters, "
        f"{args.compute_ms:g} ms emulated compute per batch (sleep), {args.batches} measured "
        f"batches per variant interleaved in blocks of {args.block}, median of {args.runs} runs, "
        f"{args.busy} busy background process(es), load average at the end "
        f"{os.getloadavg()[0]:.2f}\n"
    )
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


def _forwarded(args: argparse.Namespace) -> List[str]:
    out = []
    for name in (
        "width",
        "layers",
        "batch",
        "compute_ms",
        "batches",
        "warmup",
        "cooldown",
        "block",
    ):
        out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    out += ["--variants", ",".join(args.variants)]
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--procs-per-node", type=int, default=2)
    parser.add_argument("--rate", default="1gbit", help="bandwidth of each node's link")
    parser.add_argument("--width", type=int, default=2500, help="MLP width (2500: 25.0M params)")
    parser.add_argument("--layers", type=int, default=4, help="Linear layers of width x width")
    parser.add_argument("--batch", type=int, default=8, help="samples per batch and process")
    parser.add_argument("--compute-ms", type=float, default=150, help="emulated compute/batch")
    parser.add_argument("--batches", type=int, default=24, help="measured batches per variant")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured batches first")
    parser.add_argument("--cooldown", type=int, default=3, help="DASO cool-down batches")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--block", type=int, default=8, help="batches per variant before the next one runs"
    )
    parser.add_argument(
        "--busy", type=int, default=0, help="busy background processes beside the job"
    )
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument(
        "--variants",
        type=lambda s: [v.strip() for v in s.split(",")],
        default=list(VARIANTS),
        help="comma-separated subset of: " + ", ".join(VARIANTS),
    )
    parser.add_argument("--json", help="write every run's results here")
    parser.add_argument(
        "--first-run", type=int, default=0, help="index of the first run (rotates the order)"
    )
    parser.add_argument(
        "--merge", nargs="+", metavar="JSON", help="only print the table of these --json files"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {VARIANTS}")
    if args.worker:
        worker(args)
        return 0
    if args.merge:
        results = [r for name in args.merge for r in json.loads(Path(name).read_text())["results"]]
        print(_table(results, args))
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
