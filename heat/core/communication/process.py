"""
Per-process setup, run once when the package is imported: transparent huge pages for torch's CPU
allocator, a fair share of compute threads per process, and, with more than one process, the
handling of a process that ends while the others may still wait for it:

- an uncaught exception: ``sys.excepthook`` aborts the whole MPI job instead of leaving the other
  processes waiting in their next collective;
- ``sys.exit(n)`` (or the builtin ``exit(n)``) with a non-zero status: ``SystemExit`` never
  reaches ``sys.excepthook``, so heat's ``sys.exit`` notes it, and at exit the process waits up
  to ``_EXIT_GRACE_SECONDS`` (2) for the others to end too (e.g. all failed the same argument
  check); if they do not, it reports its rank and status and aborts the job. ``raise
  SystemExit(n)`` written out is not seen (it counts as the end of the program, below);
- the end of the program, or ``sys.exit(0)``, on some processes only: MPI cannot tell a process
  that still computes from one that waits for this one in a collective (MPICH's ``MPI_Finalize``
  then simply blocks, silently), so nothing is aborted; a process that has waited
  ``HEAT_EXIT_REPORT_SECONDS`` (default 30) at exit for the others says so once on stderr, naming
  the processes that have not ended (rank 0 knows them; the others name rank 0), and keeps
  waiting without spinning.

The processes meet at exit by point-to-point messages with rank 0 (tag ``MPI.TAG_UB``) on
``MPI.COMM_WORLD``, so the code at exit needs no communicator created beforehand and no other
message matches them. ``HEAT_ABORT_ON_EXCEPTION=0`` switches all of this off.
"""

from __future__ import annotations

import atexit
import builtins
import dis
import os
import sys
import time
import traceback
from typing import Callable, Optional

import torch
from mpi4py import MPI

from .buffers import _FALSE_WORDS

_SETUP_DONE = False
_ABORT_HOOK_INSTALLED = False  # whether sys.excepthook aborts the job (set by _setup_process)
#: the SystemExit that heat's ``sys.exit`` raised last (whether it ended the program is decided
#: at exit, from where it stopped)
_LAST_EXIT: Optional[SystemExit] = None
#: seconds a process that exits with a non-zero status waits for the others before aborting
_EXIT_GRACE_SECONDS = 2.0
#: seconds between the message of an aborting process and the abort, for the launcher to forward it
_FORWARD_SECONDS = 0.5
#: default seconds a process waits at exit for the others before it reports that it waits
_EXIT_REPORT_SECONDS = 30.0
_RAISE_OPCODES = frozenset(
    dis.opmap[name] for name in ("RAISE_VARARGS", "RERAISE") if name in dis.opmap
)


#: the launchers' variables for the number of processes on this node (MPICH's Hydra and Intel
#: MPI, Open MPI, MVAPICH2); other launchers (e.g. Slurm's srun): a shared-memory split
_LOCAL_SIZE_VARIABLES = (
    "MPI_LOCALNRANKS",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "MV2_COMM_WORLD_LOCAL_SIZE",
)
#: how heat chose this process's torch thread count at import (``heat info`` shows it)
THREAD_CHOICE: dict[str, object] = {"threads": None, "reason": "not configured by heat"}


def _local_process_count() -> int:
    """Processes on this node: from the launcher's environment, else a shared-memory split."""
    for variable in _LOCAL_SIZE_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    if MPI.COMM_WORLD.Get_size() == 1:
        return 1
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_size()
    finally:
        node.Free()


def _usable_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity mask), else all the machine has."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _physical_cores(cpus: list[int]) -> int:
    """Cores among ``cpus`` (hyper-threads of one core count once); ``len(cpus)`` if unknown."""
    siblings = set()
    for cpu in cpus:
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                siblings.add(f.read().strip())
        except OSError:
            return len(cpus)
    return len(siblings) or len(cpus)


def choose_threads(
    environ: dict[str, str], current: int, torch_defaults: set[int], cpus: int, local: int
) -> tuple[int | None, str]:
    """
    The torch thread count heat gives a process at import, and why (no side effects).

    With ``local`` processes on a node whose processes may use ``cpus`` CPUs, each gets
    ``max(1, cpus // local)`` threads, so that processes and threads do not oversubscribe the
    cores, unless the user chose: ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` is set, or torch's
    thread count is none of its own defaults (``torch.set_num_threads`` before heat was
    imported). A call of ``torch.set_num_threads`` after ``import heat`` wins anyway.

    Parameters
    ----------
    environ : mapping
        The environment variables.
    current : int
        torch's thread count now.
    torch_defaults : set of int
        The counts torch picks itself (1 under an MPI launcher, the CPU or core count).
    cpus : int
        The CPUs this process may use (its affinity mask).
    local : int
        The processes on this node.

    Returns
    -------
    threads : int or None
        The count to set, None to leave torch's as it is.
    reason : str
        Why, for ``heat info``.

    Examples
    --------
    >>> from heat.core.communication.process import choose_threads
    >>> choose_threads({}, current=16, torch_defaults={1, 16}, cpus=16, local=4)
    (4, 'heat: 16 CPUs / 4 processes on this node')
    >>> choose_threads({"OMP_NUM_THREADS": "2"}, 2, {1, 16}, 16, 4)
    (None, 'OMP_NUM_THREADS=2 is set: left to it')
    """
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if environ.get(variable, "").strip():
            return None, f"{variable}={environ[variable].strip()} is set: left to it"
    if current not in torch_defaults:
        return None, f"torch.set_num_threads({current}) before heat was imported: left as set"
    target = max(1, cpus // max(1, local))
    processes = "process" if local == 1 else "processes"
    return target, f"heat: {cpus} CPUs / {local} {processes} on this node"


def _configure_threads() -> None:
    """
    Give each process a fair share of the node's cores (see :func:`choose_threads`); the choice
    and its reason are kept in ``THREAD_CHOICE``.
    """
    current = torch.get_num_threads()
    cpus = _usable_cpus()
    defaults = {1, os.cpu_count() or 1, len(cpus), _physical_cores(cpus)}
    # the user's choice is decided first: then no process count is needed (and no split)
    threads, reason = choose_threads(os.environ, current, defaults, len(cpus), 1)
    if threads is not None:
        threads, reason = choose_threads(
            os.environ, current, defaults, len(cpus), _local_process_count()
        )
        if threads != current:
            torch.set_num_threads(threads)
    THREAD_CHOICE.update(threads=torch.get_num_threads(), reason=reason)


def _abort_on_exception_hook(previous: Callable) -> Callable:
    def heat_abort_excepthook(exc_type, exc_value, exc_traceback):
        try:
            world = MPI.COMM_WORLD
            prefix = f"[rank {world.Get_rank()}/{world.Get_size()}] "
            text = "".join(traceback.format_exception(exc_type, exc_value, exc_traceback))
            lines = [prefix + line for line in text.splitlines(True)]
            lines.append(
                prefix
                + "uncaught exception: aborting the MPI job (HEAT_ABORT_ON_EXCEPTION=0 disables)\n"
            )
            _write_to_stderr("".join(lines))
            if previous is not None and previous is not sys.__excepthook__:
                previous(exc_type, exc_value, exc_traceback)
        finally:
            if MPI.Is_initialized() and not MPI.Is_finalized():
                time.sleep(_FORWARD_SECONDS)  # for the launcher to forward the traceback
                MPI.COMM_WORLD.Abort(1)

    heat_abort_excepthook._heat_abort_hook = True
    return heat_abort_excepthook


def _write_to_stderr(report: str) -> None:
    """
    Write to stderr, and to the process's real stderr too if someone (torch.distributed wraps
    the excepthook) captures sys.stderr in a buffer that is never printed once the job aborts.
    """
    streams = [sys.stderr]
    if sys.__stderr__ is not None and sys.stderr is not sys.__stderr__:
        streams.append(sys.__stderr__)
    for stream in streams:
        try:
            stream.write(report)
            stream.flush()
        except Exception:  # noqa: B902 - a closed stream must not stop the exit
            pass


def _note_exit(raised: SystemExit) -> None:
    global _LAST_EXIT
    _LAST_EXIT = raised
    # run first at exit, before other exit hooks that may wait for the other processes
    atexit.unregister(_finish_with_the_others)
    atexit.register(_finish_with_the_others)


def _recording_exit(previous: Callable) -> Callable:
    """``sys.exit`` that notes the ``SystemExit`` it raises, for :func:`_finish_with_the_others`."""

    def exit(status: object = None) -> None:
        """
        Exit the interpreter by raising ``SystemExit(status)`` (Python's ``sys.exit``).

        heat notes the exception: if it ends the program with a non-zero status while other
        processes of the MPI job have not ended, the job is aborted at exit rather than left
        waiting for this process (see :mod:`heat.core.communication.process`).

        Parameters
        ----------
        status : int, str or None
            The exit status (None: 0; another object is printed to stderr, status 1).

        Raises
        ------
        SystemExit
            Always.
        """
        try:
            previous(status)
        except SystemExit as raised:
            _note_exit(raised)
            raise

    exit._heat_exit = True
    return exit


class _RecordingQuitter:
    """The builtins ``exit`` and ``quit`` (site's Quitter objects), noting their SystemExit."""

    _heat_exit = True

    def __init__(self, quitter: Callable):
        self._quitter = quitter

    def __repr__(self) -> str:
        return repr(self._quitter)

    def __call__(self, code: object = None) -> None:
        try:
            self._quitter(code)
        except SystemExit as raised:
            _note_exit(raised)
            raise


def _ended_the_program(raised: SystemExit) -> bool:
    """
    Whether ``raised`` ended the program rather than being caught and handled.

    Its traceback starts at the last frame that caught it (Python 3.11 records the traceback in
    the exception only where a handler catches it, 3.12 as it leaves each frame: then up to the
    main module). That frame either let it go on -- it stopped at the instruction the exception
    passed (``f_lasti == tb_lasti``: a ``with`` or ``finally`` that re-raised, or no handler at
    all) or at a ``raise`` -- and nobody caught it after that, or it handled it and went on to
    other instructions (e.g. ``pytest.raises(SystemExit)``, or ``except SystemExit: pass``).
    Measured with Python 3.10 to 3.13 on scripts, ``python -m`` and ``python -c``.
    """
    tb = raised.__traceback__
    if tb is None:
        return False
    frame = tb.tb_frame
    if frame.f_lasti == tb.tb_lasti:
        return True
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in _RAISE_OPCODES


def _exit_status() -> int:
    """The status the interpreter exits with: that of a noted SystemExit that ended it, else 0."""
    raised = _LAST_EXIT
    if raised is None or not _ended_the_program(raised):
        return 0
    code = raised.code
    if code is None:
        return 0
    return code if isinstance(code, int) else 1  # Python prints other codes and exits with 1


def _wait_for_the_others(world, grace: Optional[float], report_after: float, status: int) -> bool:
    """
    Meet the other processes at exit: each tells rank 0 that it ended, rank 0 answers once all
    have. True when all have ended; False after ``grace`` seconds (None: wait as long as it
    takes, saying once after ``report_after`` seconds that this process waits, and for whom).
    """
    import numpy as np

    rank, size = world.Get_rank(), world.Get_size()
    tag = world.Get_attr(MPI.TAG_UB)
    mine = np.array([status], dtype=np.int64)
    if rank == 0:
        arrivals = [np.zeros(1, dtype=np.int64) for _ in range(size)]
        requests = [world.Irecv(arrivals[r], source=r, tag=tag) for r in range(1, size)]
    else:
        answer = np.zeros(1, dtype=np.int64)
        requests = [world.Isend(mine, dest=0, tag=tag), world.Irecv(answer, source=0, tag=tag)]
    began, pause, reported = time.monotonic(), 1e-4, False
    while not all(request.Test() for request in requests):
        waited = time.monotonic() - began
        if grace is not None and waited > grace:
            return False
        if grace is None and not reported and waited > report_after:
            reported = True
            if rank == 0:
                missing = [str(r) for r, request in enumerate(requests, 1) if not request.Test()]
                many = len(missing) > 1
                whom = f"process{'es' if many else ''} {', '.join(missing)} {'have' if many else 'has'}"
            else:
                whom = "process 0 has"
            _write_to_stderr(
                f"[rank {rank}/{size}] this process reached its end {waited:.0f} s ago and "
                f"waits for the others, but {whom} not ended yet. If they wait for this "
                "process in a communication, the job hangs: end every process the same way, or "
                "exit with a non-zero status (sys.exit(1)) to end the whole job.\n"
            )
        time.sleep(pause)
        pause = min(2 * pause, 0.01)
    if rank == 0:
        acks = [world.Isend(mine, dest=r, tag=tag) for r in range(1, size)]
        MPI.Request.Waitall(acks)
    return True


def _finish_with_the_others() -> None:
    """
    At exit, with more than one process: wait for the others (see the module's docstring), and
    abort the job if this process exits with a non-zero status and they do not end with it.
    """
    atexit.unregister(_finish_with_the_others)  # once, however often it was registered
    if not MPI.Is_initialized() or MPI.Is_finalized():
        return
    world = MPI.COMM_WORLD
    if world.Get_size() == 1:
        return
    status = _exit_status()
    try:
        report_after = float(os.environ.get("HEAT_EXIT_REPORT_SECONDS", _EXIT_REPORT_SECONDS))
    except ValueError:
        report_after = _EXIT_REPORT_SECONDS
    grace = _EXIT_GRACE_SECONDS if status else None
    if _wait_for_the_others(world, grace, report_after, status):
        return
    rank, size = world.Get_rank(), world.Get_size()
    _write_to_stderr(
        f"[rank {rank}/{size}] exited with status {status} (SystemExit) while other processes "
        "had not ended: aborting the MPI job, so that they do not wait for this process forever "
        "(HEAT_ABORT_ON_EXCEPTION=0 disables)\n"
    )
    # the launcher forwards this process's output through a pipe; an abort at once can end the
    # job before the line above is forwarded (seen in CI under load, MPICH's Hydra)
    time.sleep(_FORWARD_SECONDS)
    world.Abort(status if 0 < status < 256 else 1)


def _wants_abort_hook(world_size: int) -> bool:
    """Abort on uncaught exceptions with more than one process, unless HEAT_ABORT_ON_EXCEPTION=0."""
    setting = os.environ.get("HEAT_ABORT_ON_EXCEPTION", "1").strip().lower()
    return world_size > 1 and setting not in _FALSE_WORDS


def _setup_process() -> None:
    """
    Once per process, at import: huge pages for torch's allocator, threads per process, and (with
    more than one process) abort the whole job on an uncaught exception.
    """
    global _SETUP_DONE, _ABORT_HOOK_INSTALLED
    if _SETUP_DONE:
        return
    _SETUP_DONE = True
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    _configure_threads()
    if _wants_abort_hook(MPI.COMM_WORLD.Get_size()):
        if not getattr(sys.excepthook, "_heat_abort_hook", False):  # not by an earlier copy
            sys.excepthook = _abort_on_exception_hook(sys.excepthook)
        if not getattr(sys.exit, "_heat_exit", False):
            sys.exit = _recording_exit(sys.exit)
        for name in ("exit", "quit"):  # the builtins site adds (absent under python -S)
            quitter = getattr(builtins, name, None)
            if quitter is not None and not getattr(quitter, "_heat_exit", False):
                setattr(builtins, name, _RecordingQuitter(quitter))
        atexit.register(_finish_with_the_others)
        _ABORT_HOOK_INSTALLED = True
