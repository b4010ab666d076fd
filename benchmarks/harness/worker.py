"""
The measuring process of the harness: ``mpiexec -n P python benchmarks/harness/worker.py ...``.

It runs the selected cases for its libraries and writes one JSON object per line to ``--out``
(rank 0): ``"event": "meta"`` first, then one ``"result"`` per case and library, then
``"done"``. The method, per case:

- every library builds its inputs, then makes one warm-up call whose peak resident memory is
  read (``ru_maxrss`` after resetting the kernel's high-water mark; the maximum over the
  processes) and whose result is checked against NumPy's (the case's expected value);
- the number of calls per repetition is chosen so that a repetition lasts ``--min-time``
  seconds (the same on every process);
- ``--repeats`` repetitions, the libraries of this process alternating repetition by
  repetition (their order rotates case by case), each repetition between barriers and timed as
  the slowest process's time; the median is reported.

Several workers (this repository's heat, HeAT 1.8 in its own interpreter, Dask) run at the same
time and take turns case by case: ``--plan`` lists (worker, case) in the order the runner chose,
and ``--token`` holds the position reached. Waiting workers poll the file (no MPI call, so they
use no CPU while another library measures).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import resource
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import algorithms  # noqa: E402

from harness import cases as registry  # noqa: E402
from harness import libs, stats  # noqa: E402

ERROR_CHARS = 200


class Turns:
    """Case-by-case turns between concurrently running workers, through a token file."""

    def __init__(self, me: str, plan_path: Optional[str], token_path: Optional[str]) -> None:
        self.me = me
        self.token_path = token_path
        self.plan: List[List[Any]] = []
        if plan_path:
            with open(plan_path) as f:
                self.plan = json.load(f)

    def _position(self, case_index: int) -> Optional[int]:
        try:
            return self.plan.index([self.me, case_index])
        except ValueError:
            return None

    def token(self) -> int:
        try:
            with open(self.token_path) as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0

    def wait(self, case_index: int) -> None:
        position = self._position(case_index)
        if position is None or not self.token_path:
            return
        while self.token() < position:
            time.sleep(0.01)

    def done(self, case_index: int, rank: int) -> None:
        position = self._position(case_index)
        if position is None or not self.token_path or rank != 0:
            return
        if self.token() == position:
            temporary = f"{self.token_path}.{os.getpid()}"
            with open(temporary, "w") as f:
                f.write(str(position + 1))
            os.replace(temporary, self.token_path)


def measure_limits(size: str) -> dict:
    """This machine's limits for one single-threaded process: a copy's GB/s (read + write) and a
    torch matmul's GFLOP/s, best of several tries (measured once per run)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    mb, n = (64, 512) if size == "small" else (512, 2048)
    source = torch.rand(int(mb * 2**20 / 4))
    target = torch.empty_like(source)
    best_copy = best_mm = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        target.copy_(source)
        best_copy = min(best_copy, time.perf_counter() - start)
    del source, target
    a, b = torch.rand(n, n), torch.rand(n, n)
    c = torch.empty(n, n)
    for _ in range(5):
        start = time.perf_counter()
        torch.mm(a, b, out=c)
        best_mm = min(best_mm, time.perf_counter() - start)
    torch.set_num_threads(threads)
    return dict(
        copy_gbs=2 * mb * 2**20 / best_copy / 1e9,
        matmul_gflops=2.0 * n**3 / best_mm / 1e9,
        copy_mb=mb,
        matmul_n=n,
    )


def peak_rss_mb() -> float:
    """Peak resident memory of this process since the last reset, MB (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 3] + "..."


class World:
    """The MPI world of this worker (or a stand-in for one process without MPI)."""

    def __init__(self, use_mpi: bool) -> None:
        self.comm = None
        if use_mpi:
            from mpi4py import MPI

            self.MPI = MPI
            self.comm = MPI.COMM_WORLD
            self.agree_comm = self.comm.Dup()  # outcomes never match the libraries' messages
        self.rank = self.comm.Get_rank() if self.comm is not None else 0
        self.size = self.comm.Get_size() if self.comm is not None else 1

    def maximum(self, value: float) -> float:
        return self.agree_comm.allreduce(value, op=self.MPI.MAX) if self.comm is not None else value

    def gather(self, value) -> list:
        return self.agree_comm.allgather(value) if self.comm is not None else [value]

    def barrier(self) -> None:
        if self.comm is not None:
            self.comm.Barrier()

    def quiet_barrier(self) -> None:
        """A barrier whose waiting processes sleep (MPICH's blocking calls spin on a core)."""
        if self.comm is not None:
            request = self.agree_comm.Ibarrier()
            while not request.Test():
                time.sleep(0.01)


def measure_case(
    case: registry.Case,
    adapters: list,
    D,
    repeats: int,
    min_time: float,
    world: World,
    shift: int,
    number: Optional[int] = None,
    processes: Optional[int] = None,
) -> List[Dict[str, Any]]:
    """
    Measures one case in every library of this process; one record per library.

    ``number`` fixes the calls per repetition (default: calibrated to ``min_time``);
    ``processes`` is the process count recorded (default: the MPI world's, Dask: its workers).
    """
    op = case.op
    want = None
    if case.threads:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(case.threads)
        try:
            return measure_case(
                dataclasses.replace(case, threads=None),
                adapters,
                D,
                repeats,
                min_time,
                world,
                shift,
                number,
                processes,
            )
        finally:
            torch.set_num_threads(threads)
    states: Dict[str, Dict[str, Any]] = {}
    order = stats.rotated(adapters, shift)
    for L in order:
        state: Dict[str, Any] = dict(status="ok", check="ok", times=[], number=0)
        states[L.label] = state
        error = ""
        try:
            inputs, fn = op.build(L, D)
            algorithms._trim_heap()
            before = algorithms._proc_status_kb("VmRSS") / 1024.0
            algorithms._reset_peak()
            L.barrier()
            start = time.perf_counter()
            result = fn()
            first = algorithms._slowest(L, time.perf_counter() - start)
            state["peak_rss_mb"] = peak_rss_mb()
            state["rss_before_mb"] = before
            if want is None:
                want = op.expect(D)
            if op.convert is not None:
                got = op.convert(L, result)
            else:
                got = L.to_numpy(op.checked(inputs) if op.checked is not None else result)
            mismatch = algorithms.compare(got, want, op)
            del result, got
            state["number"] = number or algorithms.calibrate(L, fn, first, min_time)
            state.update(inputs=inputs, fn=fn, mismatch=mismatch)
        except NotImplementedError as exc:
            state.update(status="n/a", error=str(exc))
        except Exception as exc:  # reported per case and library; the run goes on
            error = short_error(exc)
            if os.environ.get("HARNESS_TRACEBACK"):
                traceback.print_exc()
            state.update(status="error", error=error)
        # every process agrees on the outcome (an error or a differing result on any of them)
        if state["status"] != "n/a":
            failed = world.maximum(1.0 if error else 0.0)
            if failed and not error:
                errors = [e for e in world.gather(error) if e]
                state.update(
                    status="error", error=errors[0] if errors else "error on another process"
                )
            elif failed:
                world.gather(error)
            if state["status"] == "ok":
                messages = world.gather(state.pop("mismatch"))
                state["check"] = next((m for m in messages if m), "") or "ok"
                state["peak_rss_mb_per_process"] = [
                    round(v, 1) for v in world.gather(state["peak_rss_mb"])
                ]
                state["peak_rss_mb"] = max(state["peak_rss_mb_per_process"])
    for repetition in range(repeats):
        for L in stats.rotated(order, repetition):
            state = states[L.label]
            if state["status"] != "ok":
                continue
            fn, number = state["fn"], state["number"]
            L.barrier()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            state["times"].append(algorithms._slowest(L, (time.perf_counter() - start) / number))
    records = []
    flops = case.flops(D)
    traffic = case.traffic(D) if case.traffic is not None else None
    for L in adapters:
        state = states[L.label]
        state.pop("inputs", None)
        state.pop("fn", None)
        record = dict(
            event="result",
            case=case.name,
            suite=case.suite,
            library=L.label,
            processes=processes or world.size,
            **state,
        )
        if state["status"] == "ok":
            record.update(median=stats.median(state["times"]), best=min(state["times"]))
            if flops:
                record["flops"] = flops
            if traffic:
                record["bytes"] = traffic
        records.append(record)
    gc.collect()
    return records


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--label", default="heat", help="this worker's name in the plan")
    parser.add_argument(
        "--libraries", default="heat", help="comma-separated: heat, anchor, numpy, torch, dask"
    )
    parser.add_argument("--suite", default="core")
    parser.add_argument("--cases", default="", help="comma-separated parts of case names")
    parser.add_argument("--size", choices=tuple(registry.SCALES), default="default")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--procs", type=int, default=1, help="Dask: workers of the LocalCluster")
    parser.add_argument("--out", default="", help="JSON-lines file written by rank 0")
    parser.add_argument("--plan", default="")
    parser.add_argument("--token", default="")
    parser.add_argument(
        "--limits",
        default="",
        help="rank 0 measures the machine's limits first, into this JSON file",
    )
    args = parser.parse_args(argv)

    labels = [label for label in args.libraries.split(",") if label]
    import torch

    torch.set_num_threads(args.threads)
    uses_mpi = any(label in ("heat", "anchor") for label in labels)
    adapters = [libs.make(label, args.procs) for label in labels]
    for label in ("heat", "anchor"):  # our heat sets its own thread count at import
        if label in labels:
            torch.set_num_threads(args.threads)
    world = World(uses_mpi)

    def limits() -> None:
        """Measured in this worker's first turn, while the other workers wait (idle)."""
        if world.rank == 0:
            with open(args.limits, "w") as f:
                json.dump(measure_limits(args.size), f)
        world.quiet_barrier()

    chosen = registry.select(args.suite, [n for n in args.cases.split(",") if n])
    D = algorithms.make_data(registry.SCALES[args.size])
    turns = Turns(args.label, args.plan or None, args.token or None)
    sink = open(args.out, "a") if (args.out and world.rank == 0) else None

    def emit(record: dict) -> None:
        if sink is not None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()

    emit(
        dict(
            event="meta",
            label=args.label,
            processes=args.procs if not uses_mpi else world.size,
            threads=torch.get_num_threads(),
            libraries={L.label: dict(version=L.version, location=L.location) for L in adapters},
            python=sys.version.split()[0],
            executable=sys.executable,
        )
    )
    try:
        if args.limits and not chosen:
            limits()
        for index, case in enumerate(chosen):
            turns.wait(index)
            if args.limits and index == 0:
                limits()
            processes = args.procs if not uses_mpi else world.size
            for record in measure_case(
                case, adapters, D, args.repeats, args.min_time, world, index, processes=processes
            ):
                emit(record)
            turns.done(index, world.rank)
        emit(dict(event="done"))
    finally:
        for L in adapters:
            if hasattr(L, "close"):
                L.close()
        if sink is not None:
            sink.close()


if __name__ == "__main__":
    main()
