#!/usr/bin/env python3
"""Run heat's pytest suite under ``mpiexec -n P`` for several process counts.

Usage (from the repository root)::

    python scripts/run_tests.py                          # tests/ under 1, 2, 3 and 4 processes
    python scripts/run_tests.py --procs 3 tests/core/test_arithmetics.py -- -k add -x
    python scripts/run_tests.py --procs 1,2 --timeout-per-test 60 -- -v

Everything after ``--`` goes to pytest unchanged. Each process count is one ``mpiexec`` run:

- every test gets ``--timeout=N --timeout-method=thread`` (pytest-timeout's ``signal`` method
  cannot interrupt a blocked MPI call; the ``thread`` method ends the stuck process and mpiexec
  then tears down the job), and the whole run is killed after ``--overall-timeout`` seconds as a
  last resort, after every rank has dumped its stacks;
- only rank 0 prints pytest's output; ranks 1.. write to log files in a temporary folder, whose
  tails are printed when a rank crashed or ended differently from rank 0 (tests/conftest.py
  already makes outcomes collective and shows other ranks' failures on rank 0);
- a run fails if mpiexec exits non-zero (any rank did), timed out, or collected no tests (exit 5).

At the end a table lists each run, followed by one line ``N passed, M failed, K skipped`` summed
over all runs (a run that failed without a failed test, e.g. a crash or a timeout, adds one
failure). The exit status is 0 only if every run succeeded.

Internally, mpiexec starts this same script with ``--worker``, which redirects ranks > 0 to their
log file at the file-descriptor level (so C-level output and pytest-timeout's stack dumps land
there too) and then runs pytest in-process.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LOG_TAIL_LINES = 80
_TIMEOUT_BANNER = "+ Timeout +"  # pytest-timeout's banner when it ends a process
_FAULTHANDLER_HEADER = "(most recent call first)"  # faulthandler's line above each stack
KILL_GRACE_S = 10.0


# --------------------------------------------------------------------------------------------------
# worker: one MPI rank
# --------------------------------------------------------------------------------------------------
def _rank_from_environment() -> int | None:
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        value = os.environ.get(name)
        if value is not None and value.isdigit():
            return int(value)
    return None


_stack_dump_file = None


def worker_main(pytest_args: list[str]) -> int:
    """Run pytest as one rank of the job; ranks > 0 write their output to a log file."""
    rank = _rank_from_environment()
    if rank is None:
        from mpi4py import MPI

        rank = MPI.COMM_WORLD.Get_rank()
    log_dir = os.environ.get("HEAT_TEST_LOGDIR")
    if log_dir and rank > 0:
        log_fd = os.open(
            os.path.join(log_dir, f"rank{rank}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
    # The driver sends SIGUSR1 before killing a run that exceeded its time: dump every stack, to a
    # duplicate of stderr (pytest's output capturing redirects fd 2 itself while a test runs).
    global _stack_dump_file
    _stack_dump_file = os.fdopen(os.dup(2), "w")
    faulthandler.register(signal.SIGUSR1, file=_stack_dump_file, all_threads=True)
    # Behave like `python -m pytest` run from the current folder: it comes first on sys.path.
    sys.path[0] = os.getcwd()

    import pytest

    status = int(pytest.main(pytest_args))
    if log_dir:
        with open(os.path.join(log_dir, f"rank{rank}.status"), "w") as status_file:
            status_file.write(f"{status}\n")
    sys.stdout.flush()
    sys.stderr.flush()
    return status


# --------------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------------
@dataclass
class RunResult:
    procs: int
    part: str = "all"
    returncode: int | None = None
    timed_out: bool = False
    wall_s: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    summary_found: bool = False
    test_timed_out: bool = False  # pytest-timeout ended a rank (a test exceeded its limit)
    #: after a test timeout, one line per rank: the innermost heat or test frame of the thread
    #: that ran the test (repeated under the summary table, which is what a log's tail shows)
    hang_sites: list[str] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return self.counts.get("passed", 0) + self.counts.get("xpassed", 0)

    @property
    def failed(self) -> int:
        return self.counts.get("failed", 0) + self.counts.get("errors", 0)

    @property
    def skipped(self) -> int:
        return self.counts.get("skipped", 0) + self.counts.get("xfailed", 0)

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0

    @property
    def status(self) -> str:
        if self.timed_out:
            return "TIMEOUT"
        if self.returncode == 0:
            return "ok"
        if self.returncode == 5:
            return "NO TESTS"
        if not self.summary_found:
            # rank 0's pytest never printed its summary line
            return "HUNG" if self.test_timed_out else "CRASHED"
        if self.failed:
            return "FAILED"
        return "ERROR"  # e.g. interrupted, internal error, or a rank aborted after its tests

    @property
    def failures_for_total(self) -> int:
        """Failed tests, or 1 for a run that failed without a failed test (crash, timeout)."""
        return self.failed if (self.ok or self.failed) else 1


_SUMMARY_LINE = re.compile(r"^=*\s*(?P<body>.*?)\s+in\s+[\d.]+s(?:\s+\([^)]*\))?\s*=*\s*$")
_SUMMARY_COUNT = re.compile(
    r"(\d+) (passed|failed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun)\b"
)


def parse_pytest_summary(lines: list[str]) -> dict[str, int] | None:
    """Counts from the last pytest summary line ("== 3 passed, 1 failed in 0.12s ==")."""
    for line in reversed(lines):
        match = _SUMMARY_LINE.match(line.strip())
        if not match:
            continue
        body = match.group("body")
        if body.startswith("no tests ran"):
            return {}
        counts = {}
        for number, word in _SUMMARY_COUNT.findall(body):
            word = {"error": "errors", "warning": "warnings"}.get(word, word)
            counts[word] = counts.get(word, 0) + int(number)
        if counts:
            return counts
    return None


def _process_tree(root_pid: int) -> list[int]:
    """PIDs of root_pid and all its descendants (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def _signal_pids(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _is_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"--worker" in cmdline.read().split(b"\0")
    except OSError:
        return False


def dump_stacks_on_first_timeout(
    process: subprocess.Popen, log_dir: Path, rank0_lines: list[str], finished: threading.Event
) -> None:
    """
    When one rank reports a test timeout (pytest-timeout's banner, on rank 0's output or in a
    rank's log), make every other rank dump its stacks at once (SIGUSR1, faulthandler): the
    timed-out rank leaves the job, and mpiexec ends the rest without a word about where they were.
    """
    offsets: dict[Path, int] = {}

    def banner_seen() -> bool:
        if any(_TIMEOUT_BANNER in line for line in rank0_lines[-50:]):
            return True
        for log in log_dir.glob("rank*.log"):
            try:
                with open(log, "rb") as handle:
                    handle.seek(max(0, offsets.get(log, 0) - len(_TIMEOUT_BANNER)))
                    chunk = handle.read()
                    offsets[log] = handle.tell()
            except OSError:
                continue
            if _TIMEOUT_BANNER.encode() in chunk:
                return True
        return False

    while not finished.wait(0.5):
        if banner_seen():
            tree = _process_tree(process.pid) if sys.platform.startswith("linux") else []
            _signal_pids([pid for pid in tree if _is_worker(pid)], signal.SIGUSR1)
            return


def kill_job(process: subprocess.Popen, dump_stacks: bool = False) -> None:
    """End mpiexec and every process it started (hydra puts ranks in their own sessions)."""
    tree = _process_tree(process.pid) if sys.platform.startswith("linux") else [process.pid]
    if dump_stacks:
        print("run_tests.py: stacks of the ranks (rank 0 here, other ranks in their logs):")
        _signal_pids(
            [pid for pid in tree if pid != process.pid and _is_worker(pid)], signal.SIGUSR1
        )
        time.sleep(3)
    _signal_pids([process.pid], signal.SIGTERM)  # mpiexec forwards this and cleans up
    try:
        process.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    survivors = [pid for pid in tree if os.path.exists(f"/proc/{pid}")]
    _signal_pids(survivors, signal.SIGKILL)
    try:
        process.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass


def find_mpiexec(requested: str | None) -> str:
    if requested:
        return requested
    beside_python = Path(sys.executable).parent / "mpiexec"
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if not found:
        sys.exit("run_tests.py: no mpiexec found (pip install mpich, or pass --mpiexec)")
    return found


#: MPICH's setting that makes a process busy-waiting in MPI sleep (nanosleep) where it would
#: call sched_yield: see :func:`child_environment`
HEAVY_YIELD = "MPIR_CVAR_ENABLE_HEAVY_YIELD"


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask), else all the machine has. (heat's own
    ``_usable_cpus`` in heat/core/communication/process.py is not imported: importing heat
    would start MPI in this launcher process.)"""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def child_environment(procs: int, log_dir: Path, part: str = "all") -> dict[str, str]:
    """
    The environment of one mpiexec run. With more processes than CPUs, the ``distributed``
    part runs with MPICH's heavy yield (unless the caller's environment sets it): there MPICH's
    waiting processes called sched_yield in a storm that took the cores from the working ones
    (measured 2026-11-28, 4 processes on 2 cores, tests/nn + tests/optim +
    tests/core/communication: 75-165 s wall with 40-222 s of system time in three runs; with heavy
    yield 65-72 s with 11-13 s). The ``main`` part keeps the default: its many small balanced
    collectives were slower with it (whole part 387 s against 326 s), as is every tight loop of
    collectives (an object all-gather 58 -> 614 us at 4 processes, 7 -> 289 us at 2).
    """
    env = dict(os.environ)
    env["HEAT_TEST"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env["HEAT_TEST_LOGDIR"] = str(log_dir)
    env["HEAT_TEST_NPROCS"] = str(procs)
    cpus = usable_cpus()
    if procs > 1:
        # With k processes on c cores each process gets about c/k compute threads.
        threads = str(max(1, cpus // procs))
        env["OMP_NUM_THREADS"] = threads
        env["MKL_NUM_THREADS"] = threads
    if part == "distributed" and procs > cpus:
        env.setdefault(HEAVY_YIELD, "1")
    return env


def run_once(
    procs: int,
    mpiexec: str,
    mpiexec_args: list[str],
    pytest_args: list[str],
    overall_timeout: float,
    log_root: Path,
    part: str = "all",
) -> RunResult:
    log_dir = log_root / (f"np{procs}" if part == "all" else f"np{procs}-{part}")
    log_dir.mkdir(parents=True, exist_ok=True)
    command = [
        mpiexec,
        *mpiexec_args,
        "-n",
        str(procs),
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--",
        *pytest_args,
    ]
    title = f"mpiexec -n {procs}" + ("" if part == "all" else f" ({part})")
    print(f"\n{'=' * 30} {title} {'=' * 30}", flush=True)
    print("$ " + shlex.join(command), flush=True)

    result = RunResult(procs, part)
    output_lines: list[str] = []
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=child_environment(procs, log_dir, part),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    def pump() -> None:
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace")
            sys.stdout.write(line)
            sys.stdout.flush()
            output_lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    finished = threading.Event()
    watcher = threading.Thread(
        target=dump_stacks_on_first_timeout,
        args=(process, log_dir, output_lines, finished),
        daemon=True,
    )
    watcher.start()
    try:
        process.wait(timeout=overall_timeout)
    except subprocess.TimeoutExpired:
        result.timed_out = True
        print(
            f"\nrun_tests.py: mpiexec -n {procs} exceeded {overall_timeout:g} s; killing it",
            flush=True,
        )
        kill_job(process, dump_stacks=True)
    except BaseException:
        kill_job(process)
        raise
    finished.set()
    reader.join(timeout=KILL_GRACE_S)
    result.wall_s = time.monotonic() - start
    result.returncode = process.returncode

    counts = parse_pytest_summary(output_lines)
    result.summary_found = counts is not None
    result.counts = counts or {}
    if not result.ok:
        result.test_timed_out = any(_TIMEOUT_BANNER in line for line in output_lines) or any(
            _TIMEOUT_BANNER in log.read_text(errors="replace") for log in log_dir.glob("rank*.log")
        )
        show_rank_logs(log_dir, procs)
        if result.test_timed_out or result.timed_out:
            result.hang_sites = show_timeout_stacks(log_dir, procs, output_lines)
    return result


def own_frames(lines: list[str]) -> list[str]:
    """The frames of a stack dump in heat's and the tests' files, each with its source line."""
    kept = []
    for i, line in enumerate(lines):
        if "Stack of" in line or _FAULTHANDLER_HEADER in line:
            kept.append(line.strip("~ "))
        elif line.lstrip().startswith("File ") and ("/heat/" in line or "/tests/" in line):
            kept.append(line)
            if i + 1 < len(lines) and not lines[i + 1].lstrip().startswith("File "):
                kept.append(lines[i + 1])
    return kept


def _short_frame(call: str) -> str:
    """``File "/x/heat/a.py", line 3, in f`` as ``heat/a.py:3 in f``."""
    match = re.match(r'File "(?P<path>[^"]+)", line (?P<line>\d+),? in (?P<name>\S+)', call)
    if match is None:
        return call
    path = match["path"]
    for marker in ("/heat/", "/tests/"):
        if marker in path:
            path = marker[1:] + path.split(marker, 1)[1]
            break
    return f"{path}:{match['line']} in {match['name']}"


def innermost_test_frame(frames: list[str]) -> str:
    """
    Where the thread that ran the test stood in one rank's dump (:func:`own_frames`' lines):
    in the first thread with a frame in the tests (or else the first with any heat frame), the
    innermost test frame with its source line, then the innermost frame of all, as
    ``tests/a.py:9 in test_x (source) -> heat/b.py:3 in f`` (pytest-timeout lists a thread's
    calls oldest first, faulthandler most recent first).
    """
    threads: list[tuple[bool, list[tuple[str, str]]]] = []
    for i, line in enumerate(frames):
        if "Stack of" in line or _FAULTHANDLER_HEADER in line:
            threads.append((_FAULTHANDLER_HEADER in line, []))
        elif line.lstrip().startswith("File ") and threads:
            following = frames[i + 1] if i + 1 < len(frames) else ""
            source = "" if following.lstrip().startswith(("File ", "Stack of")) else following
            threads[-1][1].append((line.strip(), source.strip()))
    in_tests = [thread for thread in threads if any("/tests/" in c for c, _ in thread[1])]
    for most_recent_first, calls in in_tests or [thread for thread in threads if thread[1]]:
        innermost_first = calls if most_recent_first else calls[::-1]
        in_test = [(c, source) for c, source in innermost_first if "/tests/" in c]
        shown = [in_test[0]] if in_test else []
        if innermost_first[0] not in shown:
            shown.append(innermost_first[0])
        return " -> ".join(
            _short_frame(call) + (f" ({source})" if source and i == 0 else "")
            for i, (call, source) in enumerate(shown)
        )
    return "no heat or test frame"


def show_timeout_stacks(log_dir: Path, procs: int, rank0_lines: list[str]) -> list[str]:
    """
    Where every rank was when a test timed out: the heat and test frames of each rank's last
    stack dump (ranks that ended alike are not shown by :func:`show_rank_logs`, but a hang is
    only understood from all of them: which rank skipped which collective). Returns one line
    per rank (:func:`innermost_test_frame`).
    """
    sites = []
    print(f"\n{'-' * 20} where each rank was at the timeout {'-' * 20}")
    for rank in range(procs):
        try:
            text = (
                "\n".join(rank0_lines)
                if rank == 0
                else (log_dir / f"rank{rank}.log").read_text(errors="replace")
            )
        except OSError:
            text = ""
        # pytest-timeout's dump (between two banners, oldest call first) or faulthandler's
        # (after SIGUSR1, most recent call first)
        starts = [
            i for i in (text.find(_TIMEOUT_BANNER), text.find(_FAULTHANDLER_HEADER)) if i >= 0
        ]
        if not starts:
            print(f"rank {rank}: no stack dump")
            sites.append(f"rank {rank}: no stack dump")
            continue
        frames = own_frames(text[min(starts) :].splitlines())
        print(f"rank {rank}:")
        print("\n".join(frames[-LOG_TAIL_LINES // 2 :]) or "  (no heat or test frames)")
        sites.append(f"rank {rank}: {innermost_test_frame(frames)}")
    print("-" * 78, flush=True)
    return sites


def show_rank_logs(log_dir: Path, procs: int) -> None:
    """Print the tail of the log of each rank > 0 that crashed or ended unlike rank 0."""

    def status_of(rank: int) -> int | None:
        try:
            return int((log_dir / f"rank{rank}.status").read_text().strip())
        except (OSError, ValueError):
            return None

    reference = status_of(0)
    for rank in range(1, procs):
        status = status_of(rank)
        if status is not None and status == reference:
            continue
        log = log_dir / f"rank{rank}.log"
        ending = "no exit status (killed or crashed)" if status is None else f"exit status {status}"
        print(f"\n{'-' * 20} rank {rank}: {ending}; last lines of {log} {'-' * 20}")
        try:
            lines = log.read_text(errors="replace").splitlines()
        except OSError:
            lines = ["(no log)"]
        print("\n".join(lines[-LOG_TAIL_LINES:]))
        print("-" * 78, flush=True)


def print_summary(results: list[RunResult]) -> None:
    header = (
        f"{'procs':>5}  {'part':<14} {'status':<8} {'exit':>5} {'passed':>7} {'failed':>7} {'skipped':>8} "
        f"{'wall[s]':>8}"
    )
    print(f"\n{'=' * 30} summary {'=' * 30}")
    print(header)
    for r in results:
        exit_code = "-" if r.returncode is None else str(r.returncode)
        if r.summary_found:
            numbers = f"{r.passed:>7} {r.failed:>7} {r.skipped:>8}"
        else:
            numbers = f"{'?':>7} {'?':>7} {'?':>8}"
        print(f"{r.procs:>5}  {r.part:<14} {r.status:<8} {exit_code:>5} {numbers} {r.wall_s:>8.1f}")
    passed = sum(r.passed for r in results)
    failed = sum(r.failures_for_total for r in results)
    skipped = sum(r.skipped for r in results)
    for r in results:
        if r.hang_sites:
            print(f"where each rank was when mpiexec -n {r.procs} ({r.part}) was stopped:")
            print("\n".join(f"  {site}" for site in r.hang_sites))
    print(f"total wall time: {sum(r.wall_s for r in results):.1f} s")
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)


def parse_arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" in argv:
        split = argv.index("--")
        own, extra = argv[:split], argv[split + 1 :]
    else:
        own, extra = argv, []
    parser = argparse.ArgumentParser(
        description="Run the pytest suite under mpiexec for several process counts.",
        epilog="Arguments after -- are passed to pytest.",
    )
    parser.add_argument("paths", nargs="*", help="test files or folders (default: --tests-dir)")
    parser.add_argument("--tests-dir", default="tests", help="folder to test (default: tests)")
    parser.add_argument(
        "--procs", default="1,2,3,4", help="comma-separated process counts (default: 1,2,3,4)"
    )
    parser.add_argument(
        "--timeout-per-test",
        type=float,
        default=300,
        # 4 processes on 2 cores sometimes run a whole job several times slower (measured on
        # 2026-11-28: the distributed part 228-283 s in four runs, 504 s in a fifth, where a
        # 0.7 s pipeline test took 40 s; in CI the same test passed 120 s once): the limit
        # is there to end hangs, not to fail slow runs
        help="seconds per test (default: 300)",
    )
    parser.add_argument(
        "--overall-timeout",
        type=float,
        default=1800,
        help="seconds per mpiexec run before it is killed (default: 1800)",
    )
    parser.add_argument("--mpiexec", help="mpiexec to use (default: beside python, then PATH)")
    parser.add_argument(
        "--mpiexec-args", default="", help="extra mpiexec arguments, as one shell-quoted string"
    )
    parser.add_argument(
        "--fail-fast", action="store_true", help="stop after the first failed process count"
    )
    parser.add_argument("--log-dir", help="folder for the per-rank logs (default: a temp folder)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(own), extra


#: test folders run in a job of their own at every process count: they start torch.distributed
#: (gloo) groups and asynchronous collectives on them (DASO's cross-node sums, DataParallel), and a
#: job that has run them gets several times slower in the MPI-heavy tests after them at 4
#: processes on 2 cores (measured: tests/core/linalg/test_products.py 29 s alone, 112-490 s after
#: tests/core/communication/test_node_groups.py in the same job). In these folders the cause is
#: MPICH's waiting processes calling sched_yield (system time up to 222 s of a 165 s run), which
#: the heavy yield of :func:`child_environment` removes; not measured for the other folders.
ISOLATED = ("core/communication", "nn", "optim")


def split_suite(tests_dir: str) -> list[tuple[str, list[str]]]:
    """The whole suite as two jobs: everything but :data:`ISOLATED`, then those folders."""
    isolated = [os.path.join(tests_dir, folder) for folder in ISOLATED]
    present = [folder for folder in isolated if os.path.isdir(folder)]
    if not present:
        return [("all", [tests_dir])]
    ignores = [f"--ignore={folder}" for folder in present]
    return [("main", [tests_dir, *ignores]), ("distributed", present)]


def _absolute_test_path(path: str) -> str:
    """Resolve a path (or node id "path::name") given relative to the caller's folder."""
    file_part, sep, rest = path.partition("::")
    return str(Path(file_part).resolve()) + sep + rest


def main(argv: list[str]) -> int:
    args, extra = parse_arguments(argv)
    if args.worker:
        return worker_main(extra)

    try:
        proc_counts = [int(p) for p in args.procs.split(",") if p.strip()]
    except ValueError:
        sys.exit(f"run_tests.py: --procs must be comma-separated integers, got {args.procs!r}")
    if not proc_counts or min(proc_counts) < 1:
        sys.exit("run_tests.py: --procs needs at least one positive process count")
    timeout = f"{args.timeout_per_test:g}"
    common = ["-p", "no:cacheprovider", f"--timeout={timeout}", "--timeout-method=thread", *extra]
    if args.paths:
        parts = [("all", [_absolute_test_path(p) for p in args.paths])]
    else:
        parts = split_suite(_absolute_test_path(args.tests_dir))
    mpiexec = find_mpiexec(args.mpiexec)

    log_root = Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="heat-tests-"))
    log_root.mkdir(parents=True, exist_ok=True)
    print(f"run_tests.py: python {sys.executable}; mpiexec {mpiexec}; rank logs in {log_root}")

    results: list[RunResult] = []
    try:
        for procs in proc_counts:
            for part, part_args in parts:
                result = run_once(
                    procs,
                    mpiexec,
                    shlex.split(args.mpiexec_args),
                    [*part_args, *common],
                    args.overall_timeout,
                    log_root,
                    part,
                )
                results.append(result)
                if args.fail_fast and not result.ok:
                    break
            if args.fail_fast and results and not results[-1].ok:
                break
    except KeyboardInterrupt:
        print("\nrun_tests.py: interrupted", flush=True)
        print_summary(results)
        return 130

    print_summary(results)
    all_ok = len(results) == len(proc_counts) * len(parts) and all(r.ok for r in results)
    if all_ok and not args.log_dir:
        shutil.rmtree(log_root, ignore_errors=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
