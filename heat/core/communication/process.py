"""
Per-process setup, run once when the package is imported: transparent huge pages for torch's CPU
allocator, a fair share of compute threads per process, and (with more than one process) an
``sys.excepthook`` that aborts the whole MPI job on an uncaught exception instead of leaving the
other processes waiting in their next collective.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable

import torch
from mpi4py import MPI

from .buffers import _FALSE_WORDS

_SETUP_DONE = False
_ABORT_HOOK_INSTALLED = False  # whether sys.excepthook aborts the job (set by _setup_process)


def _local_process_count() -> int:
    """Processes on this node: from the launcher's environment, else a shared-memory split."""
    for variable in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE"):
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


def _configure_threads() -> None:
    """
    Give each process a fair share of the node's cores.

    Skipped when OMP_NUM_THREADS or MKL_NUM_THREADS is set, or when torch's thread count was
    changed to something other than one of its own defaults (1 under an MPI launcher, where MKL
    picks 1 itself; the CPU count otherwise).
    """
    if os.environ.get("OMP_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
        return
    cpus = os.cpu_count() or 1
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = cpus
    target = max(1, min(available, cpus // _local_process_count()))
    current = torch.get_num_threads()
    if current in (1, cpus, available) and current != target:
        torch.set_num_threads(target)


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
            report = "".join(lines)
            streams = [sys.stderr]
            # someone (torch.distributed wraps the hook) may capture sys.stderr in a buffer that
            # is never printed once we abort: then also write to the process's real stderr
            if sys.__stderr__ is not None and sys.stderr is not sys.__stderr__:
                streams.append(sys.__stderr__)
            for stream in streams:
                try:
                    stream.write(report)
                    stream.flush()
                except Exception:
                    pass
            if previous is not None and previous is not sys.__excepthook__:
                previous(exc_type, exc_value, exc_traceback)
        finally:
            if MPI.Is_initialized() and not MPI.Is_finalized():
                MPI.COMM_WORLD.Abort(1)

    heat_abort_excepthook._heat_abort_hook = True
    return heat_abort_excepthook


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
        _ABORT_HOOK_INSTALLED = True
