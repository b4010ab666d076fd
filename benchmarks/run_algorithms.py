"""
Issue-3 benchmark driver: runs ``algorithms.py`` under this repository's heat and under the HeAT
1.8 release, at 1 and 2 processes, plus NumPy once, and prints one side-by-side table.

Usage::

    python benchmarks/run_algorithms.py                        # full size (4e6 float32)
    python benchmarks/run_algorithms.py --scale 0.05 --repeat 2 --min-time 0.01   # quick check
    python benchmarks/run_algorithms.py --ops sort --procs 2   # a subset

HeAT 1.8 is expected in a virtual environment built by ``benchmarks/build_anchor_env.py``
(default ``/tmp/heat-anchor/bin/python``; ``--anchor-python`` to change it, ``--no-anchor`` to
leave it out). Our heat is imported from this checkout (``PYTHONPATH`` is set to the repository
root), HeAT 1.8 from its venv (``PYTHONPATH`` is cleared for it).

Both heats get the same environment: ``THP_MEM_ALLOC_ENABLE=1`` (ours sets it itself at
import), the same torch threads per process (cores // processes), and a fixed glibc mmap
threshold (``MALLOC_MMAP_THRESHOLD_``) so that freed large blocks go back to the kernel and the
per-operation peak memory is not hidden by reused pages.

Each run writes JSON lines; an operation that raises is reported as ``error: <message>``. If a
run dies or stops making progress (``--idle-timeout``), the operation it was in is recorded as
an error and the run is restarted after it. Columns of the table:

- ``ours``, ``HeAT 1.8``, ``NumPy``: seconds per call, best repetition (max over processes);
  NumPy runs the same operation on the whole data in one process, the serial baseline
- ``1.8/ours``: speed-up over HeAT 1.8 (> 1: ours is faster); ``ours/NumPy``: cost over NumPy
- ``mem ours``/``mem 1.8``: peak extra memory during one call, MB, max over processes;
  ``in+out``: our input plus output bytes on a process, MB (the 2x rule compares them)
- ``target``/``result``: the issue's targets for ours: not slower than HeAT 1.8 (sort 5x
  faster, boolean and fancy getitem 2x faster), peak extra memory <= 2 x (input + output), and
  the same result as NumPy

Operations that count their floating point work (``Op.flops``: the matrix products of issue 8)
get a second table: GFLOP/s of every library and process count, the speed-up of ours from 1 to
2 processes (target >= 1.7x, meaningful with one thread per process: ``--threads 1``), and the
share of this machine's matmul peak: threads x the single-thread peak the driver measures before
and after the runs (torch's float32 matrix product of the same size, best of 7; the product with
several threads is measured and printed too, but other jobs' load depresses it).

``--rounds N`` runs every library N times, one after the other in turn, and keeps each
operation's best repetition over the rounds: on a shared machine load comes and goes, and
alternating the libraries spreads it over all of them.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ALGORITHMS = os.path.join(HERE, "algorithms.py")
DEFAULT_ANCHOR = os.path.join(os.environ.get("TMPDIR", "/tmp"), "heat-anchor", "bin", "python")

# required speed-up over HeAT 1.8 per operation group (see Op.group in algorithms.py)
SPEEDUP_TARGET = {"time": 1.0, "sort": 5.0, "indexing": 2.0, "kmeans": 5.0}
# issue 8: groups whose time at one process must also beat the serial baseline (for k-means,
# scikit-learn's KMeans): ours <= factor x baseline
BASELINE_TARGET = {"kmeans": 1.0}
MEMORY_TARGET = 2.0  # peak extra memory <= MEMORY_TARGET x (input + output bytes) per process
SCALING_TARGET = 1.7  # speed-up from 1 to 2 processes of operations that count their flops
CELL_ERROR_CHARS = 48


def log(message: str) -> None:
    print(message, flush=True)


def read_records(path: str) -> List[dict]:
    records = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass  # a line cut by a killed run
    return records


def stop_group(proc: subprocess.Popen) -> None:
    """Ends the process group of a run this script started (SIGTERM, then SIGKILL)."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_library(
    label: str, command: List[str], env: Dict[str, str], args, work: str, extra=()
) -> dict:
    """Runs one library at one process count until every operation has a record."""
    results: Dict[int, dict] = {}
    meta: Optional[dict] = None
    failures = 0  # runs that ended outside an operation
    for attempt in range(args.max_restarts + 1):
        out = os.path.join(work, f"{label}.try{attempt}.jsonl")
        logfile = os.path.join(work, f"{label}.try{attempt}.log")
        cmd = (
            command
            + [ALGORITHMS]
            + list(extra)
            + [
                "--scale",
                str(args.scale),
                "--repeat",
                str(args.repeat),
                "--min-time",
                str(args.min_time),
                "--agree-timeout",
                str(args.agree_timeout),
                "--slow",
                str(args.slow),
                "--out",
                out,
            ]
        )
        if args.ops:
            cmd += ["--ops", args.ops]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.inject_failure and label.startswith("ours"):
            cmd += ["--inject-failure", args.inject_failure]
        if results:
            cmd += ["--skip", ",".join(str(i) for i in sorted(results))]
        with open(logfile, "w") as logf:
            proc = subprocess.Popen(
                cmd,
                env=env,
                cwd=work,
                stdout=logf,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            seen, last_change, hung = 0, time.monotonic(), False
            while True:
                code = proc.poll()
                records = read_records(out)
                if len(records) != seen:
                    for record in records[seen:]:
                        if record.get("event") == "result":
                            log(f"  {label:10s} {short_line(record)}")
                    seen, last_change = len(records), time.monotonic()
                if code is not None:
                    break
                if time.monotonic() - last_change > args.idle_timeout:
                    hung = True
                    stop_group(proc)
                    break
                time.sleep(0.5)
        records = read_records(out)
        started = None
        finished = False
        for record in records:
            event = record.get("event")
            if event == "meta":
                meta = meta or record
            elif event == "start":
                started = record
            elif event == "result":
                results[record["index"]] = record
                started = None
            elif event == "done":
                finished = True
        if finished:
            break
        if started is None:
            # died outside an operation (e.g. at import, while heat is being edited): try again
            tail = _tail(logfile)
            log(
                f"  {label}: run ended outside an operation (exit {proc.returncode}); log {logfile}:\n{tail}"
            )
            failures += 1
            if failures > 2:
                return dict(
                    meta=meta,
                    results=results,
                    failed=f"run failed (exit {proc.returncode}): {tail[-200:]}",
                )
            time.sleep(30)
            continue
        reason = _abort_reason(out)
        record = dict(
            event="result", index=started["index"], op=started["op"], status="error", error=reason
        )
        if not reason and hung:
            # too slow or hung: the time limit is a lower bound on one call
            record.update(
                status="timeout",
                best=args.idle_timeout,
                error=f"no result within {args.idle_timeout:.0f} s (too slow or hung); killed",
            )
        elif not reason:
            record["error"] = f"job died (exit {proc.returncode})"
        results[started["index"]] = record
        log(f"  {label:10s} {short_line(record)}  (restarting after it)")
    return dict(meta=meta, results=results, failed=None)


def _abort_reason(out: str) -> str:
    reasons = []
    for path in sorted(glob.glob(out + ".abort.*")):
        try:
            with open(path) as f:
                note = json.load(f)
            reasons.append(f"rank {note.get('rank')}: {note.get('error')}")
        except (OSError, json.JSONDecodeError):
            pass
    return "; ".join(reasons)


def _tail(path: str, lines: int = 15) -> str:
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def short_line(record: dict) -> str:
    if record.get("status") != "ok":
        return f"{record['index']:3d} {record['op']:36s} error: {record.get('error')}"
    return (
        f"{record['index']:3d} {record['op']:36s} {record['best']:.5f} s"
        f"  mem +{_mb(record.get('mem_delta'))} MB  check {record.get('check')}"
    )


def _mb(value) -> str:
    return "?" if value is None or value < 0 else f"{value / 2**20:.1f}"


def _seconds(record: Optional[dict]) -> str:
    if record is None:
        return "-"
    if record.get("status") == "timeout":
        return f"> {record['best']:.0f} (killed)"
    if record.get("status") != "ok":
        text = str(record.get("error", "error"))
        if len(text) > CELL_ERROR_CHARS:
            text = text[: CELL_ERROR_CHARS - 3] + "..."
        return "error: " + text.replace("|", "/")
    mark = "" if record.get("check") == "ok" else " (wrong)"
    once = " (1 call)" if record.get("repeat") == 1 and record.get("number") == 1 else ""
    return f"{record['best']:.4g}{once}{mark}"


def _ok(record: Optional[dict]) -> bool:
    return record is not None and record.get("status") == "ok"


def _timed_out(record: Optional[dict]) -> bool:
    return record is not None and record.get("status") == "timeout"


def speedup(ours: Optional[dict], anchor: Optional[dict]) -> str:
    """HeAT 1.8's time over ours; a lower bound ('>') where HeAT 1.8 was killed."""
    if _ok(ours) and _ok(anchor):
        return f"{anchor['best'] / ours['best']:.2f}"
    if _ok(ours) and _timed_out(anchor):
        return f"> {anchor['best'] / ours['best']:.0f}"
    return "-"


def verdict(ours: Optional[dict], anchor: Optional[dict], group: str) -> str:
    if ours is None:
        return "-"
    if _timed_out(ours):
        return "FAIL (too slow or hung)"
    if not _ok(ours):
        return "FAIL (error)"
    problems = []
    if ours.get("check") != "ok":
        problems.append("wrong result")
    need = SPEEDUP_TARGET.get(group, 1.0)
    # a HeAT 1.8 run that raised or returned a wrong result sets no time to beat
    anchor_wrong = _ok(anchor) and anchor.get("check") != "ok"
    if (_ok(anchor) or _timed_out(anchor)) and not anchor_wrong:
        if anchor["best"] / ours["best"] < need:
            problems.append(f"time {anchor['best'] / ours['best']:.2f}x < {need:g}x")
    ratio = ours.get("mem_ratio")
    if ratio is not None and ratio > MEMORY_TARGET:
        problems.append(f"mem {ratio:.1f}x > {MEMORY_TARGET:g}x")
    if problems:
        return "FAIL (" + "; ".join(problems) + ")"
    return "PASS (1.8 wrong: no time target)" if anchor_wrong else "PASS"


def table(runs: Dict[str, dict], procs: List[int]) -> List[str]:
    numpy = runs.get("numpy", {}).get("results", {})
    indices = sorted({i for run in runs.values() for i in run["results"]})
    header = [
        "operation",
        "p",
        "ours (s)",
        "HeAT 1.8 (s)",
        "NumPy (s)",
        "1.8/ours",
        "ours/NumPy",
        "mem ours (MB)",
        "mem 1.8 (MB)",
        "in+out ours (MB)",
        "target",
        "result",
    ]
    rows = []
    notes = []
    for index in indices:
        for p in procs:
            ours = runs.get(f"ours-p{p}", {}).get("results", {}).get(index)
            anchor = runs.get(f"heat18-p{p}", {}).get("results", {}).get(index)
            base = numpy.get(index)
            any_record = ours or anchor or base
            if any_record is None:
                continue
            group = (
                (ours or {}).get("group")
                or (anchor or {}).get("group")
                or (base or {}).get("group")
                or "time"
            )
            cost = f"{ours['best'] / base['best']:.2f}" if _ok(ours) and _ok(base) else "-"
            in_out = ours["in_bytes"] + ours["out_bytes"] if _ok(ours) else None
            rows.append(
                [
                    any_record["op"],
                    str(p),
                    _seconds(ours),
                    _seconds(anchor),
                    _seconds(base),
                    speedup(ours, anchor),
                    cost,
                    _mb(ours.get("mem_delta")) if _ok(ours) else "-",
                    _mb(anchor.get("mem_delta")) if _ok(anchor) else "-",
                    _mb(in_out) if in_out is not None else "-",
                    f">= {SPEEDUP_TARGET.get(group, 1.0):g}x",
                    verdict(ours, anchor, group),
                ]
            )
            if group in BASELINE_TARGET and p == 1:
                rows[-1][-2] += f", <= {BASELINE_TARGET[group]:g}x NumPy"
                if _ok(ours) and _ok(base) and ours["best"] > BASELINE_TARGET[group] * base["best"]:
                    slower = f"{ours['best'] / base['best']:.2f}x the serial baseline"
                    rows[-1][-1] = (
                        "FAIL (" + slower + ")"
                        if rows[-1][-1].startswith("PASS")
                        else rows[-1][-1][:-1] + "; " + slower + ")"
                    )
            for who, record in (("ours", ours), ("HeAT 1.8", anchor), ("NumPy", base)):
                if record is None:
                    continue
                if record.get("status") != "ok":
                    notes.append(f"- {record['op']}, p={p}, {who}: error: {record.get('error')}")
                elif record.get("check") != "ok":
                    notes.append(
                        f"- {record['op']}, p={p}, {who}: wrong result: {record.get('check')}"
                    )
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    passed = sum(1 for row in rows if row[-1].startswith("PASS"))
    lines.append("")
    lines.append(f"{passed} of {len(rows)} rows pass the targets.")
    if notes:
        lines.append("")
        lines.append("Errors and wrong results:")
        lines += notes
    return lines


def _better(old: Optional[dict], new: dict) -> dict:
    """The record with the faster best repetition (a successful one over a failed one)."""
    if old is None or (_ok(new) and (not _ok(old) or new["best"] < old["best"])):
        chosen = dict(new)
    else:
        chosen = dict(old)
    bests = list((old or {}).get("round_bests", [old["best"]] if _ok(old) else []))
    if _ok(new):
        bests.append(new["best"])
    chosen["round_bests"] = bests
    return chosen


_PEAK_SNIPPET = """
import sys, time, torch
n, threads = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
a, b = torch.rand(n, n), torch.rand(n, n)
c = torch.empty(n, n)
best = 1e9
for _ in range(7):
    start = time.perf_counter()
    torch.mm(a, b, out=c)
    best = min(best, time.perf_counter() - start)
print(2.0 * n ** 3 / best / 1e9)
"""


def matmul_peak(python: str, env: Dict[str, str], n: int, threads: int) -> float:
    """GFLOP/s of torch's float32 n x n matrix product with ``threads`` threads (best of 7)."""
    try:
        out = subprocess.run(
            [python, "-c", _PEAK_SNIPPET, str(n), str(threads)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return float(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return float("nan")


def flops_table(
    runs: Dict[str, dict], procs: List[int], peaks: Dict[int, float], threads: int
) -> List[str]:
    """GFLOP/s, speed-up from 1 to 2 processes and share of the peak, for ops that count flops."""
    numpy = runs.get("numpy", {}).get("results", {})
    indices = sorted(
        {i for run in runs.values() for i, r in run["results"].items() if r.get("flops")}
    )
    if not indices:
        return []

    def rate(record: Optional[dict]) -> Optional[float]:
        return (
            record["flops"] / record["best"] / 1e9 if _ok(record) and record.get("flops") else None
        )

    def cell(value: Optional[float]) -> str:
        return f"{value:.1f}" if value is not None else "-"

    cores = os.cpu_count() or 1
    header = ["operation"]
    for p in procs:
        header += [f"ours p={p}", f"HeAT 1.8 p={p}"]
    header += ["NumPy p=1"]
    if 1 in procs and 2 in procs:
        header += ["ours 2/1 procs", "HeAT 2/1 procs"]
    header += [f"ours p={p} % peak" for p in procs] + ["result"]
    lines = [
        "",
        "Compute-bound operations, GFLOP/s (best repetition; % peak: of the machine's peak for as "
        "many threads as the run uses in all, taken as threads x torch's single-thread matrix "
        "product; measured products: "
        + ", ".join(f"{t} thread(s) {v:.1f} GFLOP/s" for t, v in sorted(peaks.items()))
        + ")",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for index in indices:
        row, name, problems = [], None, []
        ours_rates, anchor_rates = {}, {}
        for p in procs:
            ours = runs.get(f"ours-p{p}", {}).get("results", {}).get(index)
            anchor = runs.get(f"heat18-p{p}", {}).get("results", {}).get(index)
            name = name or (ours or anchor or {}).get("op")
            ours_rates[p], anchor_rates[p] = rate(ours), rate(anchor)
            row += [cell(ours_rates[p]), cell(anchor_rates[p])]
            if (
                ours_rates[p] is not None
                and anchor_rates[p] is not None
                and ours_rates[p] < anchor_rates[p]
            ):
                problems.append(f"slower than 1.8 at p={p}")
        base = numpy.get(index)
        name = name or (base or {}).get("op")
        row.append(cell(rate(base)))
        if 1 in procs and 2 in procs:
            for rates in (ours_rates, anchor_rates):
                ratio = rates[2] / rates[1] if rates[1] and rates[2] else None
                row.append(f"{ratio:.2f}" if ratio is not None else "-")
            ratio = ours_rates[2] / ours_rates[1] if ours_rates[1] and ours_rates[2] else None
            if ratio is not None and ratio < SCALING_TARGET:
                problems.append(f"2/1 procs {ratio:.2f} < {SCALING_TARGET:g}")
        for p in procs:
            # the machine's peak for t threads: t x the single-thread peak (a measured t-thread
            # product is depressed by other jobs' load, and can be no higher anyway)
            used = min(cores, p * (threads or max(1, cores // p)))
            single = peaks.get(1)
            peak = max(peaks.get(used, 0.0), used * single) if single else peaks.get(used)
            share = (
                100.0 * ours_rates[p] / peak if ours_rates[p] and peak and peak == peak else None
            )
            row.append(f"{share:.0f}%" if share is not None else "-")
        row.append("FAIL (" + "; ".join(problems) + ")" if problems else "PASS")
        lines.append("| " + " | ".join([name or str(index)] + row) + " |")
    return lines


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 4e6-element data")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--procs", default="1,2", help="process counts, comma-separated")
    parser.add_argument("--ops", default="", help="only operations whose name contains this text")
    parser.add_argument("--ours-python", default=sys.executable)
    parser.add_argument(
        "--ours-path", default=REPO, help="directory holding our heat package (PYTHONPATH)"
    )
    parser.add_argument("--anchor-python", default=DEFAULT_ANCHOR)
    parser.add_argument("--no-anchor", action="store_true", help="leave HeAT 1.8 out")
    parser.add_argument("--no-numpy", action="store_true", help="leave NumPy out")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument(
        "--work-dir", default="", help="where the runs write (default: a new temp dir)"
    )
    parser.add_argument("--json", default="", help="also write all records to this JSON file")
    parser.add_argument(
        "--idle-timeout", type=float, default=600.0, help="seconds without progress"
    )
    parser.add_argument("--slow", type=float, default=5.0, help="see algorithms.py --slow")
    parser.add_argument("--agree-timeout", type=float, default=120.0)
    parser.add_argument("--max-restarts", type=int, default=10)
    parser.add_argument(
        "--inject-failure", default="", help="testing the harness: see algorithms.py"
    )
    parser.add_argument(
        "--mmap-threshold", default="1048576", help="MALLOC_MMAP_THRESHOLD_ ('' keeps glibc's)"
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="torch threads per process (0: cores // processes)"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="run every library this often, in turn; keep the best"
    )
    args = parser.parse_args(argv)
    try:  # before anything runs: a name that matches nothing would run nothing
        sys.path.insert(0, HERE)
        from algorithms import selected_ops

        selected_ops(args.ops)
    except ValueError as error:
        parser.error(str(error))
    finally:
        sys.path.remove(HERE)

    procs = [int(p) for p in args.procs.split(",") if p]
    work = args.work_dir or tempfile.mkdtemp(prefix="heat-algorithms-")
    os.makedirs(work, exist_ok=True)
    base_env = dict(os.environ)
    base_env["THP_MEM_ALLOC_ENABLE"] = "1"
    if args.mmap_threshold:
        base_env["MALLOC_MMAP_THRESHOLD_"] = args.mmap_threshold
    else:
        base_env.pop("MALLOC_MMAP_THRESHOLD_", None)
    ours_env = dict(base_env)
    ours_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (args.ours_path, os.environ.get("PYTHONPATH", "")) if p
    )
    anchor_env = dict(base_env)
    anchor_env.pop("PYTHONPATH", None)

    use_anchor = not args.no_anchor
    if use_anchor and not os.path.exists(args.anchor_python):
        log(
            f"HeAT 1.8 not found at {args.anchor_python}: build it with python benchmarks/build_anchor_env.py "
            "(or pass --anchor-python / --no-anchor); its columns stay empty"
        )
        use_anchor = False

    load_start = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    log(
        f"work dir {work}; load average at start {load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f}"
    )
    cores = os.cpu_count() or 1
    peak_threads = sorted(
        {1} | {min(cores, p * (args.threads or max(1, cores // p))) for p in procs}
    )
    peaks: Dict[int, float] = {}

    def measure() -> None:
        for t in peak_threads:
            value = matmul_peak(args.ours_python, ours_env, int(2000 * args.scale**0.5), t)
            if value == value:
                peaks[t] = max(peaks.get(t, 0.0), value)

    measure()
    runs: Dict[str, dict] = {}

    def run_round(
        label: str, command: List[str], env: Dict[str, str], round_index: int, extra=()
    ) -> None:
        name = label if args.rounds == 1 else f"{label}.round{round_index}"
        result = run_library(name, command, env, args, work, extra)
        if label not in runs:
            runs[label] = result
            runs[label]["results"] = {i: _better(None, r) for i, r in result["results"].items()}
            return
        merged = runs[label]["results"]
        for i, record in result["results"].items():
            merged[i] = _better(merged.get(i), record)
        if result.get("failed"):
            runs[label]["failed"] = result["failed"]

    for round_index in range(args.rounds):
        if args.rounds > 1:
            log(f"round {round_index + 1} of {args.rounds}")
        if not args.no_numpy:
            log("NumPy, 1 process")
            run_round("numpy", [args.ours_python], ours_env, round_index, ["--library", "numpy"])
        for p in procs:
            launcher = [args.mpiexec, "-n", str(p)]
            log(f"ours, {p} process(es)")
            run_round(f"ours-p{p}", launcher + [args.ours_python], ours_env, round_index)
            if use_anchor:
                log(f"HeAT 1.8, {p} process(es)")
                run_round(f"heat18-p{p}", launcher + [args.anchor_python], anchor_env, round_index)
    measure()
    load_end = os.getloadavg()

    lines = [
        "",
        f"issue-3 algorithms benchmark, {started} to {time.strftime('%H:%M:%S')}, "
        f"{os.cpu_count()} cores, load average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end",
    ]
    for name, run in runs.items():
        meta = run.get("meta") or {}
        if meta:
            lines.append(
                f"- {name}: {meta.get('library')} {meta.get('version')} ({meta.get('location')}), "
                f"{meta.get('processes')} process(es) x {meta.get('threads')} thread(s), data {meta.get('shape')} "
                f"{meta.get('dtype')}, best of {meta.get('repeat')} repetitions of >= {meta.get('min_time')} s"
            )
        if run.get("failed"):
            lines.append(f"- {name}: {run['failed']}")
    if args.rounds > 1:
        lines.append(f"- best of {args.rounds} rounds, the libraries run in turn in each round")
    lines.append("")
    lines += table(runs, procs)
    lines += flops_table(runs, procs, peaks, args.threads)
    print("\n".join(lines), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    name: dict(meta=run.get("meta"), results=list(run["results"].values()))
                    for name, run in runs.items()
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
