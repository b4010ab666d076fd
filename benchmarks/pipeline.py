#!/usr/bin/env python3
"""
Pipeline parallelism (issue 19): ``ht.nn.Pipeline`` against the ideal pipeline and against
``torch.distributed.pipelining`` on gloo.

``--procs`` (4) stages, one process each, one compute thread each; ``--micro-batches`` (16)
micro-batches of ``--micro-batch-size`` (8) rows per batch. Every stage is the same: two
``Linear(width, width)`` layers with a ReLU between them (the real CPU work), then an emulated
accelerator kernel of ``--stage-ms`` milliseconds per micro-batch, as in ``benchmarks/daso.py``:
``time.sleep`` (a GPU leaves the host CPU idle), one third in the forward pass, two thirds in the
backward pass. The loss (MSE) is on the last stage; SGD steps once per batch (GPipe, 1F1B) or
after every micro-batch's backward (PipeDream).

Measured, side by side in one job (the variants' order rotates from run to run):

* ``compute only``, measured right before every variant (the load of a shared machine drifts):
  every process runs its own stage on the batch's micro-batches, without any communication; the
  slowest process gives the stage time ``T`` per batch (``m`` micro-batches). The ideal of a
  synchronous schedule is ``(m + p - 1) / m * T`` (fill and drain), of PipeDream's steady state
  ``T`` (no bubble); each variant is compared with the ``T`` measured just before it, and the
  table shows the median over the runs of these ratios;
* ``heat gpipe``, ``heat 1f1b``: ``Pipeline.zero_grad(); train_step(x, y); step()``;
* ``heat pipedream``: consecutive ``train_step`` calls of one stream (the pipeline stays full from
  batch to batch), after ``--warmup`` batches that fill it; each call ends with the loss
  broadcast from the last stage (every stage waits for the last one to finish the batch), or,
  ``loss kept on last stage``, with ``train_step(..., broadcast_loss=False)``: no stage waits;
* ``torch GPipe``, ``torch 1F1B``: ``torch.distributed.pipelining``'s ``PipelineStage`` with
  ``ScheduleGPipe`` / ``Schedule1F1B`` on a gloo group from heat (``ht.torch_process_group``), the
  same stage modules, losses and optimizer. If they fail on this torch, their error is printed.

Time per batch is the slowest process's wall time over ``--batches`` measured batches (after
``--warmup`` unmeasured ones) divided by their number.

The bubble of heat's variants is also measured directly: the share of the measured time each
stage spent waiting for a message (``StageLink.wait_seconds``), against the ideal bubble
``(p - 1) / (m + p - 1)`` of a synchronous schedule and 0 for PipeDream's steady state. Unlike the
stage time, this share hardly depends on how much the machine's load slows the compute.

Next to every variant the one-way latency ``L`` of a hop is measured too: ping-pong of one
micro-batch's activation between stages 0 and 1 through the pipeline's own transport (the sends,
receives and polling waits of ``heat.nn.pipeline_transport.StageLink``), while the other processes
wait. ``simulated`` is what ``ht.nn.simulate_schedule`` predicts for the schedule with the stage
time ``T`` (one third forward, two thirds backward) and a transfer time ``L`` per message, relative
to the same ideal: 1F1B and PipeDream keep only ``p`` micro-batches in flight, so every hop's
latency lies on their critical path (a period of about ``(F + B) + 2 (p - 1) L / p`` per
micro-batch), while GPipe pays it only while filling and draining. Activation memory is measured afterwards in
a separate batch of every variant, by counting what autograd saves (``saved_tensors_hooks``,
weights excepted) per micro-batch on every stage: the peak number of micro-batches alive and the
peak bytes, reported for stage 0 (the stage that keeps the most under 1F1B).

Usage::

    python benchmarks/pipeline.py                       # 4 processes, 3 runs (~3 minutes)
    python benchmarks/pipeline.py --runs 1 --batches 3  # a quick check of the script
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
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
VARIANTS = ["heat gpipe", "heat 1f1b", "heat pipedream", "heat pipedream (loss kept on last stage)",
            "torch GPipe", "torch 1F1B"]  # fmt: skip
IDEAL = {"heat gpipe": "sync", "heat 1f1b": "sync", "heat pipedream": "stream",
         "heat pipedream (loss kept on last stage)": "stream", "torch GPipe": "sync",
         "torch 1F1B": "sync"}  # fmt: skip


# ------------------------------------------------------------------------------------------------
# worker (one MPI rank = one stage)
# ------------------------------------------------------------------------------------------------


def worker(args: argparse.Namespace) -> None:
    import torch

    import heat as ht
    from heat.nn.pipeline import _ActivationCounter
    from heat.nn.pipeline_transport import StageLink, TensorSpec

    torch.set_num_threads(1)
    comm = ht.MPI_WORLD
    rank, stages = comm.rank, comm.size
    m, width, rows = args.micro_batches, args.width, args.micro_batch_size
    forward_s = args.stage_ms / 1000 / 3
    backward_s = 2 * args.stage_ms / 1000 / 3

    sys.path.insert(0, str(HERE))
    from daso import EmulatedKernel

    def make_layers():
        torch.manual_seed(0)
        layers = []
        for _ in range(stages):
            layers += [torch.nn.Linear(width, width), torch.nn.ReLU(),
                       torch.nn.Linear(width, width), EmulatedKernel(forward_s, backward_s)]  # fmt: skip
        return torch.nn.Sequential(*layers)

    per_stage = 4
    split_points = [per_stage * (s + 1) for s in range(stages - 1)]

    def my_stage():
        layers = list(make_layers().children())
        return torch.nn.Sequential(*layers[rank * per_stage : (rank + 1) * per_stage])

    generator = torch.Generator().manual_seed(1)
    x = torch.randn(m * rows, width, generator=generator)
    y = torch.randn(m * rows, width, generator=generator)
    mse = torch.nn.functional.mse_loss
    lr = 1e-4

    def measure(run_batches, batches):
        comm.Barrier()
        began = time.perf_counter()
        run_batches(batches)
        elapsed = time.perf_counter() - began
        return max(comm.allgather(elapsed)) / batches

    def report(variant, **fields):
        if rank == 0:
            print(
                "RESULT " + json.dumps({"variant": variant, "run": args.run, **fields}), flush=True
            )

    def memory(counters):
        """Stage 0's peaks, and the largest peak count over the stages."""
        peaks = comm.allgather(
            (counters.peak_micro_batches, counters.peak_bytes) if counters else (None, None)
        )
        return {
            "live_micro_batches": [p[0] for p in peaks],
            "activation_bytes": [p[1] for p in peaks],
        }

    # -- compute only: the stage time ------------------------------------------------------------
    stage = my_stage()
    optimizer = torch.optim.SGD(stage.parameters(), lr=lr)

    def alone(batches):
        for _ in range(batches):
            optimizer.zero_grad()
            for i in range(m):
                out = stage(x[i * rows : (i + 1) * rows])
                loss = mse(out, y[i * rows : (i + 1) * rows]) if rank == stages - 1 else out.sum()
                (loss / m).backward()
            optimizer.step()

    alone(args.warmup)

    # -- the latency of a hop ------------------------------------------------------------------------
    link = StageLink(comm.Dup(), torch.device("cpu"))
    spec = TensorSpec((rows, width), torch.float32)
    activation = torch.randn(rows, width)

    def hop_latency(rounds=40):
        comm.Barrier()
        began = time.perf_counter()
        for _ in range(rounds if rank < 2 else 0):
            if rank == 0:  # activation to stage 1, its "gradient" back
                link.send("activation", activation)
                link.post("gradient", 0, spec)
                link.release(link.receive("gradient", 0))
            else:
                link.post("activation", 0, spec)
                received = link.receive("activation", 0)
                link.send("gradient", received)
                link.finish_sends()
                link.release(received)
        link.finish_sends()
        return comm.bcast((time.perf_counter() - began) / rounds / 2, root=0)

    # -- the variants ------------------------------------------------------------------------------
    def heat_variant(schedule, broadcast_loss=True):
        def build(measuring):
            return ht.nn.Pipeline(
                make_layers(), mse, torch.optim.SGD, {"lr": lr}, micro_batches=m,
                schedule=schedule, split_points=split_points, measure_activations=measuring,
            )  # fmt: skip

        pipe = build(False)

        def train(batches):
            for _ in range(batches):
                pipe.zero_grad()
                pipe.train_step(x, y, broadcast_loss=broadcast_loss)
                pipe.step()

        train(args.warmup)  # PipeDream: the stream fills and stays full
        waited = pipe.link.wait_seconds
        seconds = measure(train, args.batches)
        idle = (pipe.link.wait_seconds - waited) / (seconds * args.batches)
        pipe.flush()
        measured = build(True)
        measured.train_step(x, y)
        measured.flush()
        return seconds, measured._counter, {"idle_share": comm.allgather(idle)}

    def torch_variant(name):
        import torch.distributed.pipelining as pipelining

        group = ht.torch_process_group(comm)
        schedule_class = {"torch GPipe": pipelining.ScheduleGPipe,
                          "torch 1F1B": pipelining.Schedule1F1B}[name]  # fmt: skip

        class Counted(torch.nn.Module):
            """The stage, counting what autograd saves per forward call (= micro-batch)."""

            def __init__(self, inner, counter):
                super().__init__()
                self.inner, self.counter, self.calls = inner, counter, 0

            def forward(self, inputs):
                if self.counter is None:
                    return self.inner(inputs)
                self.calls += 1
                with self.counter.hooks(self.calls, list(self.inner.parameters())):
                    return self.inner(inputs)

        def build(counter):
            module = Counted(my_stage(), counter)
            pipeline_stage = pipelining.PipelineStage(
                module, rank, stages, torch.device("cpu"), group=group
            )
            schedule = schedule_class(pipeline_stage, m, loss_fn=mse)
            return module, schedule, torch.optim.SGD(module.parameters(), lr=lr)

        module, schedule, optimizer = build(None)

        def train(batches):
            for _ in range(batches):
                optimizer.zero_grad()
                if rank == 0:
                    schedule.step(x)
                elif rank == stages - 1:
                    schedule.step(target=y, losses=[])
                else:
                    schedule.step()
                optimizer.step()

        train(args.warmup)
        seconds = measure(train, args.batches)
        counter = _ActivationCounter()
        module, schedule, optimizer = build(counter)
        train(1)
        return seconds, counter, {}

    order = VARIANTS[args.run % len(VARIANTS) :] + VARIANTS[: args.run % len(VARIANTS)]
    for variant in order:
        if variant not in args.variants:
            continue
        stage_s = measure(alone, args.batches)  # T and L right before the variant
        latency_s = hop_latency() if stages > 1 else 0.0
        report("compute only", batch_s=stage_s, latency_s=latency_s)
        try:
            if variant.startswith("heat"):
                seconds, counter, extra = heat_variant(
                    variant.split()[1].rstrip(","), broadcast_loss="loss kept" not in variant
                )
            else:
                seconds, counter, extra = torch_variant(variant)
        except Exception as error:  # noqa: B902 - a variant that does not run says why
            failed = comm.allgather(f"{type(error).__name__}: {error}")
            report(variant, error=next(f for f in failed if f))
            continue
        report(variant, batch_s=seconds, stage_s=stage_s, latency_s=latency_s,
               **memory(counter), **extra)  # fmt: skip


# ------------------------------------------------------------------------------------------------
# driver
# ------------------------------------------------------------------------------------------------


def _ideal(variant: str, stage_s: float, m: int, p: int) -> float:
    """A synchronous schedule's (m + p - 1) / m * T, or PipeDream's steady state T."""
    return (m + p - 1) / m * stage_s if IDEAL[variant] == "sync" else stage_s


def _simulated(variant: str, stage_s: float, latency_s: float, m: int, p: int) -> float:
    """The simulator's time per batch with hops of ``latency_s`` (PipeDream: a batch of a stream)."""
    import heat as ht

    forward, backward = stage_s / m / 3, 2 * stage_s / m / 3
    if IDEAL[variant] == "sync":
        name = "gpipe" if "gpipe" in variant.lower() else "1f1b"
        schedule = ht.nn.pipeline_schedule(name, p, m)
        return ht.nn.simulate_schedule(schedule, forward, backward, latency_s).makespan

    def stream(batches):
        segments = [ht.nn.pipeline_schedule("pipedream", p, m, start=k * m, drain=k == batches - 1)
                    for k in range(batches)]  # fmt: skip
        return [sum((segment[s] for segment in segments), []) for s in range(p)]

    spans = [
        ht.nn.simulate_schedule(stream(n), forward, backward, latency_s).makespan for n in (4, 5)
    ]
    return spans[1] - spans[0]


def _table(results: List[dict], args: argparse.Namespace) -> str:
    by_variant: Dict[str, List[dict]] = {}
    for r in results:
        by_variant.setdefault(r["variant"], []).append(r)
    m, p = args.micro_batches, args.procs
    stage = statistics.median(r["batch_s"] for r in by_variant["compute only"])
    lines = [
        f"stage time T (compute only, slowest process; median of the measurements before each "
        f"variant): {stage * 1e3:.1f} ms per batch of {m} micro-batches; ideal: synchronous "
        f"(m + p - 1) / m * T, PipeDream's steady state T",
        "",
        "| variant | time/batch (ms) | ideal (ms) | time / ideal | idle share (mean of stages; "
        "ideal bubble) | hop latency L (ms) | simulated with L / ideal | stage 0: micro-batches of "
        "activations alive (peak) | stage 0: activation MB (peak) | live micro-batches, stages "
        "0..p-1 | runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    ratios: Dict[str, float] = {}
    per_run: Dict[str, Dict[int, float]] = {}
    for variant in VARIANTS:
        rows = by_variant.get(variant, [])
        errors = [r["error"] for r in rows if "error" in r]
        if errors:
            lines.append(f"| {variant} | error: {errors[0][:300]} | | | | | | | | | {len(rows)} |")
            continue
        if not rows:
            continue
        t = statistics.median(r["batch_s"] for r in rows)
        target = statistics.median(_ideal(variant, r["stage_s"], m, p) for r in rows)
        ratios[variant] = statistics.median(
            r["batch_s"] / _ideal(variant, r["stage_s"], m, p) for r in rows
        )
        per_run[variant] = {r["run"]: r["batch_s"] for r in rows}
        latency = statistics.median(r["latency_s"] for r in rows)
        simulated = statistics.median(
            _simulated(variant, r["stage_s"], r["latency_s"], m, p)
            / _ideal(variant, r["stage_s"], m, p)
            for r in rows
        )
        live = rows[-1]["live_micro_batches"]
        megabytes = rows[-1]["activation_bytes"][0] / 1e6
        bubble = (p - 1) / (m + p - 1) if IDEAL[variant] == "sync" else 0.0
        idle = "-"
        if "idle_share" in rows[0]:
            share = statistics.median(statistics.mean(r["idle_share"]) for r in rows)
            idle = f"{share:.1%} ({bubble:.1%})"
        lines.append(
            f"| {variant} | {t * 1e3:.1f} | {target * 1e3:.1f} | {ratios[variant]:.3f} | {idle} | "
            f"{latency * 1e3:.2f} | {simulated:.3f} | {live[0]} | {megabytes:.3f} | {live} | "
            f"{len(rows)} |"
        )
    lines.append("")
    for variant in VARIANTS:
        if variant.startswith("heat") and variant in ratios:
            verdict = "met" if ratios[variant] <= 1.10 else "NOT met"
            what = "no bubble" if "pipedream" in variant else "(m + p - 1) / m x T"
            lines.append(
                f"{variant}: {ratios[variant]:.3f} x its ideal ({what}; target within 10%: "
                f"{verdict})"
            )
    for heat_name, torch_name in (("heat gpipe", "torch GPipe"), ("heat 1f1b", "torch 1F1B")):
        if heat_name in per_run and torch_name in per_run:
            runs = sorted(set(per_run[heat_name]) & set(per_run[torch_name]))
            ratio = statistics.median(per_run[torch_name][k] / per_run[heat_name][k] for k in runs)
            verdict = "met" if ratio >= 1.0 else "NOT met"
            lines.append(
                f"{heat_name} vs {torch_name}: torch takes {ratio:.3f} x heat's time (median over "
                f"runs; target: heat no slower: {verdict})"
            )
    return "\n".join(lines)


def driver(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    results: List[dict] = []
    began = time.strftime("%Y-%m-%d %H:%M")
    load_before = os.getloadavg()
    for run in range(args.runs):
        command = ["mpiexec", "-n", str(args.procs), sys.executable, str(Path(__file__).resolve()),
                   "--worker", "--run", str(run)] + _forwarded(args)  # fmt: skip
        started = time.perf_counter()
        try:
            outcome = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=args.timeout,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            print(f"pipeline.py: run {run} timed out after {args.timeout} s", file=sys.stderr)
            return 1
        if outcome.returncode != 0:
            print(outcome.stdout[-4000:], outcome.stderr[-4000:], file=sys.stderr)
            print(f"pipeline.py: run {run} failed (rc {outcome.returncode})", file=sys.stderr)
            return 1
        run_results = [
            json.loads(line[len("RESULT ") :])
            for line in outcome.stdout.splitlines()
            if line.startswith("RESULT ")
        ]
        print(f"run {run}: {time.perf_counter() - started:.0f} s", flush=True)
        for r in run_results:
            shown = f"{r['batch_s'] * 1e3:8.1f} ms/batch" if "batch_s" in r else r["error"][:200]
            print(f"  {r['variant']:36s} {shown}", flush=True)
        results.extend(run_results)
    load_after = os.getloadavg()
    print(
        f"\n{began}, {args.procs} processes (stages) x 1 thread, {args.micro_batches} "
        f"micro-batches of {args.micro_batch_size} rows, width {args.width}, {args.stage_ms:g} ms "
        f"emulated compute per stage and micro-batch (sleep), {args.batches} measured batches per "
        f"variant, median of {args.runs} runs; load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after ({os.cpu_count()} cores)\n"
    )
    print(_table(results, args))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


def _forwarded(args: argparse.Namespace) -> List[str]:
    out = []
    for name in ("micro_batches", "micro_batch_size", "width", "stage_ms", "batches", "warmup"):
        out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return out + ["--variants", ",".join(args.variants)]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=4, help="processes = stages")
    parser.add_argument("--micro-batches", type=int, default=16)
    parser.add_argument("--micro-batch-size", type=int, default=8, help="rows per micro-batch")
    parser.add_argument("--width", type=int, default=256, help="features of every layer")
    parser.add_argument("--stage-ms", type=float, default=20.0,
                        help="emulated compute per stage and micro-batch (forward + backward)")  # fmt: skip
    parser.add_argument("--batches", type=int, default=8, help="measured batches per variant")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured batches first")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument(
        "--variants",
        type=lambda s: [v.strip() for v in s.split(",")],
        default=list(VARIANTS),
        help="comma-separated subset of: " + ", ".join(VARIANTS),
    )
    parser.add_argument("--json", help="write every run's results here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
