"""
The driver behind ``benchmarks/run.py``: workers at every process count, the external scripts,
the machine's limits, and the JSON, Markdown and PNG outputs.

At each process count P the workers run at the same time and take turns case by case (see
:mod:`harness.worker`): this repository's heat under ``mpiexec -n P`` (at P = 1 together with
NumPy / scikit-learn and torch, which run in one process only), HeAT 1.8 under its own
interpreter and ``mpiexec`` (``--anchor-python``), and Dask on a ``LocalCluster`` of P
single-threaded workers (``--dask``). The order of the workers rotates case by case, so a
burst of load from elsewhere on the machine does not always hit the same library.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = os.path.dirname(HERE)
REPO = os.path.dirname(BENCHMARKS)
sys.path.insert(0, BENCHMARKS)

from harness import cases as registry  # noqa: E402
from harness import report, stats  # noqa: E402

WORKER = os.path.join(HERE, "worker.py")


def log(message: str) -> None:
    print(message, flush=True)


def clean_environment(python_path: Optional[str], threads: int) -> Dict[str, str]:
    """The environment of a fresh MPI job: no process manager variables, one thread per process."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PMI_", "PMIX_", "HYDRA_", "HYDI_", "MPI_LOCAL", "OMPI_"))
    }
    env.pop("PYTHONPATH", None)
    if python_path:
        env["PYTHONPATH"] = python_path
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = str(threads)
    env.pop("HEAT_RANKS_PER_NODE", None)
    return env


def mpiexec_for(python: str) -> str:
    beside = os.path.join(os.path.dirname(python), "mpiexec")
    return beside if os.path.exists(beside) else "mpiexec"


def machine_info(argv: List[str]) -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), ""
            )
    except OSError:
        pass
    versions = {"python": platform.python_version()}
    for name in ("numpy", "torch", "mpi4py", "dask", "distributed", "sklearn", "scipy", "h5py"):
        try:
            module = __import__(name)
            versions[name] = getattr(module, "__version__", "?")
        except ImportError:
            pass
    return dict(
        cpu_model=model or platform.processor(),
        cores=os.cpu_count(),
        hostname=platform.node(),
        platform=platform.platform(),
        date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        versions=versions,
        command="python " + " ".join(shlex.quote(a) for a in argv),
        load_average=list(os.getloadavg()),
    )


def measure_limits(python: str, env: Dict[str, str], size: str, work: str) -> dict:
    """The machine's limits measured by a worker that runs no case (when the run has none)."""
    path = os.path.join(work, "limits.json")
    try:
        subprocess.run(
            [
                python,
                WORKER,
                "--libraries",
                "numpy",
                "--cases=-none-",
                "--size",
                size,
                "--limits",
                path,
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return read_limits(path)
    except subprocess.SubprocessError as exc:
        log(f"machine limits not measured: {exc}")
        return {}


def read_limits(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def stop_group(proc: subprocess.Popen) -> None:
    """Ends the process group of a job this runner started (SIGTERM, then SIGKILL)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(10)
            return
        except subprocess.TimeoutExpired:
            continue


def read_jsonl(path: str) -> List[dict]:
    records = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    pass  # a line cut by a killed job
    return records


def make_plan(labels: List[str], case_count: int, shift: int) -> List[List]:
    """(worker, case) in turn order: every case in every worker, the order rotating case by case."""
    return [
        [label, index]
        for index in range(case_count)
        for label in stats.rotated(labels, index + shift)
    ]


def run_workers(
    workers: Dict[str, dict], case_count: int, work: str, procs: int, idle_timeout: float
) -> List[dict]:
    """Starts the workers of one process count, passes the turns on past dead ones, returns the records."""
    labels = list(workers)
    plan = make_plan(labels, case_count, procs)
    plan_path = os.path.join(work, f"plan-p{procs}.json")
    token_path = os.path.join(work, f"token-p{procs}")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    with open(token_path, "w") as f:
        f.write("0")
    running = {}
    for label, spec in workers.items():
        out = os.path.join(work, f"{label}-p{procs}.jsonl")
        logfile = open(os.path.join(work, f"{label}-p{procs}.log"), "w")
        command = spec["command"] + [
            "--label",
            label,
            "--out",
            out,
            "--plan",
            plan_path,
            "--token",
            token_path,
        ]
        proc = subprocess.Popen(
            command,
            env=spec["env"],
            cwd=work,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        running[label] = dict(proc=proc, out=out, log=logfile)
    last_token, last_change = -1, time.monotonic()
    killed: Dict[str, str] = {}
    while True:
        try:
            with open(token_path) as f:
                token = int(f.read().strip() or 0)
        except (OSError, ValueError):
            token = last_token
        if token != last_token:
            last_token, last_change = token, time.monotonic()
            if token < len(plan):
                log(f"  p={procs}: {plan[token][0]} case {plan[token][1] + 1}/{case_count}")
        if token >= len(plan) and all(r["proc"].poll() is not None for r in running.values()):
            break
        if token < len(plan):
            owner = plan[token][0]
            if running[owner]["proc"].poll() is not None:  # it died: its turns pass on
                with open(token_path, "w") as f:
                    f.write(str(token + 1))
                killed.setdefault(owner, f"job ended (exit {running[owner]['proc'].returncode})")
                continue
            if time.monotonic() - last_change > idle_timeout:
                killed[owner] = f"no progress within {idle_timeout:.0f} s; killed"
                stop_group(running[owner]["proc"])
                continue
        elif time.monotonic() - last_change > idle_timeout:
            for label, r in running.items():
                if r["proc"].poll() is None:
                    stop_group(r["proc"])
            break
        time.sleep(0.2)
    records = []
    for label, r in running.items():
        r["log"].close()
        got = read_jsonl(r["out"])
        if label in killed or r["proc"].returncode:
            reason = killed.get(label, f"job ended (exit {r['proc'].returncode})")
            tail = _tail(r["log"].name)
            log(f"  p={procs}: {label}: {reason}\n{tail}")
            got.append(
                dict(
                    event="failure",
                    label=label,
                    processes=procs,
                    error=reason,
                    log_tail=tail[-2000:],
                )
            )
        records += got
    return records


def _tail(path: str, lines: int = 20) -> str:
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def run_external(
    external: registry.External,
    command: List[str],
    env: Dict[str, str],
    size: str,
    work: str,
    procs: Optional[int],
    timeout: float,
) -> dict:
    """Runs one external script with its own CLI and reads the JSON it writes."""
    tag = (
        f"{external.name.replace(' ', '-')}-p{procs}" if procs else external.name.replace(" ", "-")
    )
    out = os.path.join(work, tag + ".json")
    full = command + [external.script] + external.command(size, out)
    record = dict(
        event="external",
        case=external.name,
        suite=external.suite,
        processes=procs,
        command=" ".join(shlex.quote(c) for c in full),
    )
    started = time.perf_counter()
    with open(os.path.join(work, tag + ".log"), "w") as logfile:
        proc = subprocess.Popen(
            full,
            env=dict(env, **external.env),
            cwd=REPO,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            record.update(status="error", error=f"ran past {timeout:.0f} s; killed")
    record["wall_s"] = round(time.perf_counter() - started, 1)
    if "status" not in record:
        if proc.returncode == 0 and os.path.exists(out):
            with open(out) as f:
                record.update(status="ok", output=json.load(f))
        else:
            record.update(
                status="error", error=f"exit {proc.returncode}: {_tail(logfile.name, 8)[-600:]}"
            )
    return record


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description="heat's benchmarks against NumPy / scikit-learn, torch, HeAT 1.8 and Dask, "
        "at several process counts: JSON, a Markdown report and PNG scaling plots.",
    )
    parser.add_argument(
        "--procs", default="1,2", help="process counts, comma-separated (default 1,2)"
    )
    parser.add_argument(
        "--suite", default="core", help="core, algorithms, io, linalg, training or all"
    )
    parser.add_argument(
        "--anchor-python", default="", help="interpreter of the HeAT 1.8 environment"
    )
    parser.add_argument(
        "--dask", action="store_true", help="also Dask array on a LocalCluster of P workers"
    )
    parser.add_argument(
        "--cases", default="", help="only cases whose name contains one of these (comma-separated)"
    )
    parser.add_argument("--size", choices=tuple(registry.SCALES), default="default")
    parser.add_argument("--out", default="", help="output folder (default benchmarks/results/)")
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed repetitions per case (the method wants >= 5)"
    )
    parser.add_argument(
        "--min-time",
        type=float,
        default=None,
        help="least seconds per repetition (default 0.05; 0.005 with --size small)",
    )
    parser.add_argument("--threads", type=int, default=1, help="threads per process (default 1)")
    parser.add_argument("--idle-timeout", type=float, default=600.0, help="seconds a case may take")
    parser.add_argument(
        "--external-timeout", type=float, default=900.0, help="seconds an external script may take"
    )
    parser.add_argument(
        "--no-externals", action="store_true", help="leave the external scripts out"
    )
    parser.add_argument("--list", action="store_true", help="print the cases of the suite and exit")
    parser.add_argument(
        "--report",
        default="",
        metavar="JSON",
        help="only write the Markdown report and plots of an earlier run's JSON (beside it)",
    )
    args = parser.parse_args(argv)
    try:
        args.procs = stats.parse_procs(args.procs)
    except ValueError as exc:
        parser.error(str(exc))
    if args.suite != "all" and args.suite not in registry.SUITES:
        parser.error(
            f"--suite: expected one of {', '.join(registry.SUITES)} or all, got {args.suite!r}"
        )
    if args.repeats < 1:
        parser.error(f"--repeats: expected >= 1, got {args.repeats}")
    if args.anchor_python and not os.path.exists(args.anchor_python):
        parser.error(
            f"--anchor-python: {args.anchor_python} does not exist "
            "(build it with python benchmarks/build_anchor_env.py)"
        )
    if args.min_time is None:
        args.min_time = 0.005 if args.size == "small" else 0.05
    return args


def main(argv: Optional[List[str]] = None) -> int:
    argv_list = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv_list)
    if args.report:
        with open(args.report) as f:
            earlier = json.load(f)
        markdown, plots = report.write(earlier, os.path.splitext(args.report)[0])
        log(f"wrote {markdown}" + "".join(f", {p}" for p in plots))
        return 0
    names = [n for n in args.cases.split(",") if n]
    chosen = registry.select(args.suite, names)
    externals = [] if args.no_externals else registry.select_externals(args.suite, names)
    if args.list:
        for case in chosen:
            log(f"{case.suite:11s} {case.name}")
        for external in externals:
            log(
                f"{external.suite:11s} {external.name} (external: {os.path.basename(external.script)})"
            )
        return 0
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = args.out or os.path.join(BENCHMARKS, "results")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="heat-bench-")
    ours_env = clean_environment(REPO, args.threads)
    anchor_env = clean_environment(None, args.threads)
    info = machine_info(["benchmarks/run.py"] + argv_list)
    log(f"{len(chosen)} case(s), {len(externals)} external script(s); work folder {work}")
    limits_path = os.path.join(work, "limits.json")
    common = [
        "--suite",
        args.suite,
        "--size",
        args.size,
        "--repeats",
        str(args.repeats),
        "--min-time",
        str(args.min_time),
        "--threads",
        str(args.threads),
    ] + (["--cases", args.cases] if args.cases else [])
    records: List[dict] = []
    for procs in args.procs:
        workers = {}
        libraries = "heat,numpy,torch" if procs == 1 else "heat"
        workers["heat"] = dict(
            command=[
                mpiexec_for(sys.executable),
                "-n",
                str(procs),
                sys.executable,
                WORKER,
                "--libraries",
                libraries,
            ]
            + common
            + (["--limits", limits_path] if procs == args.procs[0] else []),
            env=ours_env,
        )
        if args.anchor_python:
            workers["anchor"] = dict(
                command=[
                    mpiexec_for(args.anchor_python),
                    "-n",
                    str(procs),
                    args.anchor_python,
                    WORKER,
                    "--libraries",
                    "anchor",
                ]
                + common,
                env=anchor_env,
            )
        if args.dask:
            workers["dask"] = dict(
                command=[sys.executable, WORKER, "--libraries", "dask", "--procs", str(procs)]
                + common,
                env=ours_env,
            )
        if chosen:
            log(f"{procs} process(es): {', '.join(workers)}")
            records += run_workers(workers, len(chosen), work, procs, args.idle_timeout)
        for external in externals:
            if not external.mpi:
                continue
            log(f"{procs} process(es): external {external.name}")
            command = [mpiexec_for(sys.executable), "-n", str(procs), sys.executable]
            records.append(
                run_external(
                    external, command, ours_env, args.size, work, procs, args.external_timeout
                )
            )
    for external in externals:
        if external.mpi:
            continue
        if external.needs_root and os.geteuid() != 0:
            records.append(
                dict(
                    event="external",
                    case=external.name,
                    suite=external.suite,
                    processes=None,
                    status="skipped",
                    error="needs root (network namespaces)",
                )
            )
            continue
        log(f"external {external.name}")
        records.append(
            run_external(
                external, [sys.executable], ours_env, args.size, work, None, args.external_timeout
            )
        )
    limits = (
        read_limits(limits_path)
        if chosen
        else measure_limits(sys.executable, ours_env, args.size, work)
    )
    log(f"machine limits (1 process, 1 thread): {limits}")
    info["load_average_end"] = list(os.getloadavg())
    result = dict(
        machine=info,
        limits=limits,
        procs=args.procs,
        suite=args.suite,
        size=args.size,
        repeats=args.repeats,
        min_time=args.min_time,
        threads=args.threads,
        anchor_python=args.anchor_python or None,
        dask=args.dask,
        cases=[c.name for c in chosen] + [e.name for e in externals],
        records=records,
    )
    base = os.path.join(out_dir, f"{stamp}-{args.suite}-{args.size}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1)
    markdown, plots = report.write(result, base)
    log(f"wrote {base}.json, {markdown}" + "".join(f", {p}" for p in plots))
    return 0
