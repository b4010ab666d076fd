"""Test-suite wide pytest hooks that make a run under ``mpiexec -n P`` behave as one test run.

Every rank runs the same pytest session on the same collected tests. These hooks keep the ranks
in step (shared/notes/testing-under-mpi.md has the measured pitfalls they guard against):

- **Collective outcomes.** After each phase (setup, call, teardown) of every test the ranks agree
  on one outcome: failed if any rank failed, else skipped if any rank skipped, else passed. A rank
  that passed while another failed reports "failed on rank(s) [...]", and rank 0 shows the
  failures of the other ranks as extra sections, so rank 0's output alone tells the whole story.
  Because a failed setup stops the test on *every* rank, no rank runs into a collective that the
  others skipped.
- **Identical collection.** The ranks check that they collected the same tests; if not, or if any
  rank had a collection error, every rank stops instead of running different tests.
- **No silent hang at the end.** A rank that finishes its session waits a bounded time for the
  others and aborts ``MPI_COMM_WORLD`` if they do not arrive (one rank left the session early, so
  the others are stuck in a collective). An uncaught exception aborts the world communicator too.

The hooks talk over duplicates of ``MPI.COMM_WORLD``, so their messages never match a message of
the code under test, and wait with non-blocking calls that sleep between polls, so that a waiting
rank does not spin on a core that an oversubscribed run (4 processes on 2 cores) needs. mpi4py is
imported directly (not heat), so this file works even while heat itself does not import. Without
mpi4py, or with one process, the hooks do nothing.

A hang *inside* a test (a receive that is never matched) is ended by pytest-timeout's ``thread``
method (configured in pytest.ini and by scripts/run_tests.py), which dumps the stacks and ends the
process; mpiexec then tears down the other ranks.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

import pytest

os.environ.setdefault("HEAT_TEST", "1")

try:
    from mpi4py import MPI
except ImportError:  # pragma: no cover - single-process use without MPI installed
    MPI = None


def _wait(request) -> None:
    """Complete a non-blocking MPI request, sleeping between polls once it is not done at once.

    MPICH busy-polls inside blocking calls. With more processes than cores (4 on 2 here) a rank
    spinning in a blocking collective takes the core from the rank it is waiting for; sleeping
    between polls gives it back.
    """
    for _ in range(50):
        if request.Test():
            return
    pause = 1e-4
    while not request.Test():
        time.sleep(pause)
        pause = min(pause * 1.5, 1e-3)


if MPI is not None and MPI.COMM_WORLD.Get_size() > 1:
    _RANK = MPI.COMM_WORLD.Get_rank()
    _SIZE = MPI.COMM_WORLD.Get_size()
    _wait(MPI.COMM_WORLD.Ibarrier())  # ranks import at different speeds; wait without spinning
    # Separate contexts: outcome agreement per test, and the end-of-session rendezvous, which a rank
    # may reach while another is still inside a test (that must never match an outcome exchange).
    _OUTCOME_COMM = MPI.COMM_WORLD.Dup()
    _FINISH_COMM = MPI.COMM_WORLD.Dup()
else:
    _OUTCOME_COMM = _FINISH_COMM = None
    _RANK, _SIZE = 0, 1

# Seconds a rank that has finished its session waits for the others before aborting the job.
_FINISH_TIMEOUT = float(os.environ.get("HEAT_TEST_FINISH_TIMEOUT", "30"))
# Longest failure report of another rank that rank 0 shows (characters).
_MAX_REMOTE_REPORT = 20_000

_PASSED, _SKIPPED, _FAILED = 0, 1, 2


def _abort_world(message: str, errorcode: int = 1) -> None:
    """Print ``message`` and abort every process of the job (this never returns)."""
    sys.stderr.write(f"\n[rank {_RANK}] {message}; aborting MPI_COMM_WORLD\n")
    sys.stderr.flush()
    sys.stdout.flush()
    MPI.COMM_WORLD.Abort(errorcode)


if _SIZE > 1:
    _previous_excepthook = sys.excepthook

    def _abort_on_uncaught_exception(exc_type, exc_value, exc_traceback):
        # Without this, the other ranks wait forever in their next collective (busy-polling).
        _previous_excepthook(exc_type, exc_value, exc_traceback)
        _abort_world(f"uncaught {exc_type.__name__}")

    sys.excepthook = _abort_on_uncaught_exception


def _ranks_string(ranks: list[int]) -> str:
    return "[" + ", ".join(str(r) for r in ranks) + "]"


def _outcome_code(report: pytest.TestReport) -> int:
    if report.failed:
        return _FAILED
    if report.skipped:  # includes xfailed
        return _SKIPPED
    return _PASSED  # includes xpassed


def _skip_reason(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}"
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _allgather_codes(local: int) -> list[int]:
    """Every rank's outcome code (one byte each), waited for without busy-polling."""
    send, recv = bytearray([local]), bytearray(_SIZE)
    _wait(_OUTCOME_COMM.Iallgather([send, MPI.BYTE], [recv, MPI.BYTE]))
    return list(recv)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Make the outcome of every test phase the same on all ranks."""
    report = yield
    if _SIZE == 1:
        return report

    local = _outcome_code(report)
    codes = _allgather_codes(local)
    worst = max(codes)
    if worst == _PASSED:
        return report

    if worst == _FAILED:
        failed_ranks = [r for r, code in enumerate(codes) if code == _FAILED]
        text = report.longreprtext if local == _FAILED else None
        if text is not None and len(text) > _MAX_REMOTE_REPORT:
            text = text[:_MAX_REMOTE_REPORT] + "\n... (truncated)"
        texts = _OUTCOME_COMM.gather(text, root=0)
        if local != _FAILED:
            report.outcome = "failed"
            report.longrepr = f"{report.when} failed on rank(s) {_ranks_string(failed_ranks)}"
            if hasattr(report, "wasxfail"):
                del report.wasxfail
        if _RANK == 0:
            for rank in failed_ranks:
                if rank != 0:
                    report.sections.append((f"{report.when} failure on rank {rank}", texts[rank]))
        return report

    # worst == _SKIPPED: a test skipped anywhere is skipped everywhere (skips are not failures).
    skip_reasons = _OUTCOME_COMM.allgather(_skip_reason(report) if local == _SKIPPED else None)
    if local == _PASSED:
        skipped_ranks = [r for r, code in enumerate(codes) if code == _SKIPPED]
        reason = skip_reasons[skipped_ranks[0]]
        report.outcome = "skipped"
        if not hasattr(report, "wasxfail"):
            path, lineno, _ = item.location
            report.longrepr = (
                str(path),
                (lineno or 0) + 1,
                f"Skipped on rank(s) {_ranks_string(skipped_ranks)}: {reason}",
            )
    return report


_collection_errors: list[str] = []


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed and _SIZE > 1:
        _collection_errors.append(f"{report.nodeid}\n{report.longreprtext}"[:_MAX_REMOTE_REPORT])


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Stop every rank unless all ranks collected the same tests without errors."""
    if _SIZE == 1:
        return
    nodeids = "\n".join(item.nodeid for item in session.items)
    digest = hashlib.sha1(nodeids.encode()).hexdigest()
    _wait(_OUTCOME_COMM.Ibarrier())
    states = _OUTCOME_COMM.allgather((session.testsfailed, len(session.items), digest))
    error_ranks = [r for r, (errors, _, _) in enumerate(states) if errors]
    stop_on_errors = bool(error_ranks) and not session.config.option.continue_on_collection_errors
    if stop_on_errors:
        # Rank 0 shows what went wrong elsewhere; its own errors pytest shows itself.
        error_texts = _OUTCOME_COMM.gather(_collection_errors, root=0)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if _RANK == 0 and reporter is not None:
            for rank in error_ranks:
                for text in error_texts[rank] if rank != 0 else []:
                    reporter.write_sep("_", f"collection error on rank {rank}")
                    reporter.write_line(text)
        if session.testsfailed:
            return  # pytest stops this rank itself ("N errors during collection")
        pytest.exit(f"collection errors on rank(s) {_ranks_string(error_ranks)}", returncode=2)
    if len({(count, dig) for _, count, dig in states}) > 1:
        counts = ", ".join(f"rank {r}: {count}" for r, (_, count, _) in enumerate(states))
        pytest.exit(f"ranks collected different tests ({counts} tests)", returncode=2)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Wait (bounded) for all ranks to finish; abort the job if some never arrive."""
    if _SIZE == 1:
        return
    request = _FINISH_COMM.Ibarrier()
    deadline = time.monotonic() + _FINISH_TIMEOUT
    pause = 1e-4
    while not request.Test():
        if time.monotonic() > deadline:
            _abort_world(
                f"other ranks did not finish the test session within {_FINISH_TIMEOUT:g} s "
                f"(exit status here: {int(exitstatus)})",
                errorcode=int(exitstatus) or 1,
            )
        time.sleep(pause)
        pause = min(pause * 1.5, 0.01)


# --------------------------------------------------------------------------------------------------
# the suite on a GPU (scripts/gpu_check.py's second half; never in CI, which has no GPU)
# --------------------------------------------------------------------------------------------------
#: ``HEAT_TEST_DEVICE=gpu`` makes every array a test creates without ``device=`` live on the GPU
#: (``ht.use_device``), so the whole suite checks the CUDA paths against NumPy.
_TEST_DEVICE = os.environ.get("HEAT_TEST_DEVICE", "").strip()
#: ``HEAT_TEST_OUTCOMES=path``: rank 0 appends one line per test (outcome, node id, first line of
#: the failure) as soon as it is known, so a run cut short by a time limit still leaves its record.
_OUTCOMES_PATH = os.environ.get("HEAT_TEST_OUTCOMES", "").strip()


def pytest_configure(config: pytest.Config) -> None:
    if _TEST_DEVICE:
        import heat

        heat.use_device(_TEST_DEVICE)
        _check_block_devices(heat.DNDarray)


def _check_block_devices(dndarray_class) -> None:
    """
    Make every DNDarray check, as it is made, that its torch block lives on its device: a block
    left on the CPU by a GPU computation (a ``torch.tensor`` without ``device=``) then fails the
    test at the line that made it, instead of somewhere later.
    """
    import torch

    make = dndarray_class.__init__

    def checked(self, array, gshape, dtype, split, device, comm, balanced=None):
        make(self, array, gshape, dtype, split, device, comm, balanced)
        if isinstance(array, torch.Tensor) and device is not None:
            wanted = "cuda" if device.device_type == "gpu" else "cpu"
            if array.device.type != wanted:
                raise AssertionError(
                    f"DNDarray on {device} made with a block on {array.device} (shape {gshape})"
                )

    dndarray_class.__init__ = checked


@pytest.fixture(autouse=True)
def _default_device():
    """Restore ``HEAT_TEST_DEVICE`` as the default device after a test that changed it."""
    yield
    if _TEST_DEVICE:
        import heat

        heat.use_device(_TEST_DEVICE)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _OUTCOMES_PATH or _RANK != 0:
        return
    if report.when != "call" and not (report.failed or report.skipped):
        return
    first_line = ""
    if report.failed:
        lines = [line for line in report.longreprtext.splitlines() if line.startswith("E ")]
        first_line = lines[0] if lines else report.longreprtext.strip().splitlines()[-1:] or [""]
        first_line = (first_line if isinstance(first_line, str) else first_line[0])[:300]
    with open(_OUTCOMES_PATH, "a") as stream:
        stream.write(f"{report.outcome}\t{report.when}\t{report.nodeid}\t{first_line}\n")


@pytest.fixture
def emulate_nodes(monkeypatch):
    """``emulate_nodes(k)``: nodes of ``k`` consecutive ranks for this test (None: real nodes);
    used by the tests of node groups, DASO and the data-parallel modules."""

    def use(ranks_per_node):
        if ranks_per_node is None:
            monkeypatch.delenv("HEAT_RANKS_PER_NODE", raising=False)
        else:
            monkeypatch.setenv("HEAT_RANKS_PER_NODE", str(ranks_per_node))

    return use
