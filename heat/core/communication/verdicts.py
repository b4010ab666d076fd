"""
Verdicts: after a step that may fail on some processes only, one small collective makes every
process raise the same exception -- never a process that raises while the others wait in the next
collective, never a different exception type per process.

- :func:`portable` turns an exception into a (builtin class, message) pair that travels in a
  pickle and can be rebuilt on any process; :func:`raise_first` raises the lowest failing
  process's error everywhere, tagged with the processes it came from.
- :func:`raise_if_any` -- every process did its part and knows its own error (or None): one
  all-gather, then the same exception everywhere. :class:`PendingVerdict` is its non-blocking
  form, for code that overlaps the verdict with other work (the streaming loader).
- :func:`agree` -- every process runs a function; one small all-gather of (failed, digest) in
  the common case; with a ``fingerprint`` the processes also check that they saw the same thing
  (a file's shape, a model's parameters, an optimizer's settings), and a dict fingerprint makes
  the message name the first entry that differs and the processes holding each value.
- :func:`root_decides` -- process 0 runs a function, one broadcast of its result or its error.
- :func:`any_true` -- agree on a flag (e.g. "singular on some process").

Everything here is collective over the communicator given: every process calls it, in the same
order. Waits sleep between polls (:func:`wait_without_spinning`), so that a waiting process does
not take the core of the process it waits for (MPICH busy-polls in blocking calls).
"""

from __future__ import annotations

import time
import zlib
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from mpi4py import MPI

__all__ = [
    "PendingVerdict",
    "agree",
    "any_true",
    "first_difference",
    "portable",
    "raise_first",
    "raise_if_any",
    "ranks_text",
    "root_decides",
    "wait_without_spinning",
]

Outcome = Optional[Tuple[type, str]]


def portable(error: BaseException) -> Tuple[type, str]:
    """
    The builtin exception class behind ``error`` and its message (both picklable): the first
    class of its MRO that is builtin and can be rebuilt from the message alone; RuntimeError
    if none can.

    Examples
    --------
    >>> portable(FileNotFoundError("no such file: x.h5"))
    (<class 'FileNotFoundError'>, 'no such file: x.h5')
    """
    if isinstance(error, KeyError) and error.args:
        message = str(error.args[0])  # str(KeyError) would add quotes
    else:
        message = str(error)
    for cls in type(error).__mro__:
        if cls in (BaseException, Exception):
            break
        if cls.__module__ != "builtins":
            continue
        try:  # a class that can be rebuilt from the message alone (not e.g. UnicodeDecodeError)
            cls(message)
        except Exception:  # noqa: B902
            continue
        return cls, message
    return RuntimeError, message


def ranks_text(ranks: Sequence[int]) -> str:
    """
    ``"process 3"`` or ``"processes 0, 2-5"`` (runs of consecutive ranks shortened).

    Examples
    --------
    >>> ranks_text([0, 2, 3, 4, 5])
    'processes 0, 2-5'
    """
    runs: List[List[int]] = []
    for rank in ranks:
        if runs and rank == runs[-1][1] + 1:
            runs[-1][1] = rank
        else:
            runs.append([rank, rank])
    parts = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}-{b}" for a, b in runs]
    return ("processes " if len(ranks) > 1 else "process ") + ", ".join(parts)


def raise_first(outcomes: Sequence[Outcome], local_error: Optional[BaseException]) -> None:
    """
    Raise the error of the lowest failing process, the same text on every process; nothing if
    every entry of ``outcomes`` (one per process, from :func:`portable`) is None. When not every
    process failed the message ends with ``[on process N]``; on a failing process the exception
    is chained to its own ``local_error``.

    Examples
    --------
    >>> raise_first([None, (ValueError, "bad shape")], None)
    Traceback (most recent call last):
    ValueError: bad shape [on process 1]
    """
    failed = [rank for rank, outcome in enumerate(outcomes) if outcome is not None]
    if not failed:
        return
    cls, message = outcomes[failed[0]]
    if len(failed) < len(outcomes):
        where = ", ".join(str(r) for r in failed)
        message = f"{message} [on process{'es' if len(failed) > 1 else ''} {where}]"
    raise cls(message) from local_error


def wait_without_spinning(
    request: Any, longest_pause: float = 1e-3, first_pause: float = 2e-5
) -> Any:
    """
    Complete ``request`` (an mpi4py or heat request with ``Test``), sleeping between tests once it
    is not done at once (pauses doubling from ``first_pause`` up to ``longest_pause`` seconds);
    returns what ``request.Wait()`` would. MPICH busy-polls in blocking calls: with more processes
    than cores (a loaded node, or 4 processes on 2 cores) a waiting process takes the core from
    the process it waits for. A poll every few microseconds to a millisecond costs nothing
    measurable for the verdicts and small agreements this serves; latency-bound callers (a
    pipeline's hops) cap the pause lower.
    """
    for _ in range(64):
        if request.Test():
            return request.Wait()
    pause = first_pause
    while not request.Test():
        time.sleep(pause)
        pause = min(2 * pause, longest_pause)
    return request.Wait()


def raise_if_any(comm: Any, error: Optional[BaseException]) -> None:
    """
    Every process raises the lowest failing process's error if any process passes one (one
    all-gather of the outcomes); returns on every process otherwise. ``error`` is this
    process's exception or None.

    Examples
    --------
    >>> try:
    ...     block = read_my_block()
    ...     error = None
    ... except OSError as caught:
    ...     error = caught
    >>> raise_if_any(ht.MPI_WORLD, error)  # the same OSError on every process, or nothing
    """
    outcome = None if error is None else portable(error)
    if comm.size == 1:
        raise_first([outcome], error)
        return
    raise_first(comm.allgather(outcome), error)


class PendingVerdict:
    """
    :func:`raise_if_any` in two halves, so that the verdict overlaps with other work: the
    constructor starts a non-blocking all-gather of one failure flag per process, :meth:`settle`
    completes it and -- only if some process failed -- gathers the messages and raises.

    Parameters
    ----------
    comm : MPICommunication
    error : BaseException or None
        This process's error.

    Examples
    --------
    >>> verdict = PendingVerdict(comm, error)   # every process
    >>> ...                                     # other work, no collective on comm
    >>> verdict.settle()                        # raises everywhere if any process failed
    """

    def __init__(self, comm: Any, error: Optional[BaseException]):
        self.comm = comm
        self.error = error
        self._flags = torch.empty(comm.size, dtype=torch.uint8)
        local = torch.tensor([int(error is not None)], dtype=torch.uint8)
        self._request = comm.Iallgather(local, self._flags) if comm.size > 1 else None

    def done(self) -> bool:
        """Whether the flags have arrived (never blocks)."""
        return self._request is None or bool(self._request.Test())

    def settle(self) -> None:
        """Wait for the flags; raise everywhere what the lowest failing process raised."""
        if self._request is None:
            raise_first([None if self.error is None else portable(self.error)], self.error)
            return
        wait_without_spinning(self._request)
        if bool(self._flags.any()):
            raise_if_any(self.comm, self.error)


def any_true(comm: Any, flag: bool) -> bool:
    """
    Whether ``flag`` is True on any process (one small all-reduce), the same answer everywhere.

    Examples
    --------
    >>> if any_true(comm, singular_here):
    ...     raise LinAlgError("Singular matrix")   # on every process
    """
    if comm.size == 1:
        return bool(flag)
    return bool(comm.allreduce(bool(flag), op=MPI.LOR))


def first_difference(what: str, summaries: Sequence[Dict[str, str]]) -> str:
    """
    The message for named settings that differ between processes: the first name (in the order
    of the lowest process that has it) whose description is not the same everywhere, and which
    processes have which description (``missing`` where a process lacks the name).

    Examples
    --------
    >>> first_difference("DASO settings", [{"total_epochs": "10"}, {"total_epochs": "11"}])
    'DASO settings differ between processes: total_epochs is 10 on process 0 but 11 on process 1'
    """
    names: Dict[str, None] = {}
    for summary in summaries:
        names.update(dict.fromkeys(summary))
    for name in names:
        values = [summary.get(name, "missing") for summary in summaries]
        if len(set(values)) > 1:
            break
    else:  # the same entries in another order
        orders = {tuple(summary) for summary in summaries}
        name, values = "the order", [", ".join(summary) for summary in summaries]
        if len(orders) == 1:  # pragma: no cover - digests differ only when the summaries do
            return f"{what} differ between processes"
    groups: Dict[str, List[int]] = {}
    for rank, value in enumerate(values):
        groups.setdefault(value, []).append(rank)
    seen = (" but " if len(groups) == 2 else ", ").join(
        f"{value} on {ranks_text(ranks)}" for value, ranks in groups.items()
    )
    return f"{what} differ between processes: {name} is {seen}"


def agree(
    comm: Any,
    function: Callable[..., Any],
    *args: Any,
    fingerprint: Optional[Callable[[Any], Tuple[str, Any]]] = None,
    **kwargs: Any,
) -> Any:
    """
    Run ``function(*args, **kwargs)`` on every process, then combine the outcomes with one
    all-gather: if any process failed, every process raises that error. With ``fingerprint``
    (result -> (what, summary)) the processes also check that they saw the same thing, e.g. the
    same shape of the same file: a ValueError on every process if not. A summary that is a dict
    (name -> description, e.g. the arguments of a constructor or the parameters of a model)
    makes the message name the first entry that differs and the processes holding each value.

    In the common case (no failure, equal summaries) only one all-gather of two int64 per
    process travels; the messages and summaries travel only when something is wrong.

    Returns
    -------
    The result of ``function`` on this process.

    Examples
    --------
    >>> shape = agree(comm, read_shape, path, fingerprint=lambda s: ("shape of x", s))
    """
    error = None
    try:
        result = function(*args, **kwargs)
    except Exception as caught:  # noqa: B902 - every failure must become collective
        result, error = None, caught
    outcome = None if error is None else portable(error)
    summary = None if (error is not None or fingerprint is None) else fingerprint(result)
    if comm.size == 1:
        raise_first([outcome], error)
        return result
    digest = zlib.crc32(repr(summary).encode())
    flags = torch.tensor([int(error is not None), digest], dtype=torch.int64)
    everyone = torch.empty((comm.size, 2), dtype=torch.int64)
    wait_without_spinning(comm.Iallgather(flags, everyone))
    if not everyone[:, 0].any() and bool((everyone[:, 1] == digest).all()):
        return result
    gathered = comm.allgather((outcome, summary))
    raise_first([g[0] for g in gathered], error)
    what = gathered[0][1][0]
    if all(isinstance(g[1][1], dict) for g in gathered):
        raise ValueError(first_difference(what, [g[1][1] for g in gathered]))
    seen = ", ".join(f"process {rank}: {g[1][1]}" for rank, g in enumerate(gathered))
    raise ValueError(f"the processes do not see the same {what} ({seen})")


def root_decides(comm: Any, function: Callable[..., Any], *args: Any, root: int = 0) -> Any:
    """
    Run ``function(*args)`` on process ``root`` (keyword only, default 0) only and broadcast its
    result, or its error, which every process then raises (one broadcast). For decisions one
    process makes for all: whether a file exists, what a header says.

    Examples
    --------
    >>> exists = root_decides(comm, os.path.exists, "data.h5")   # the same answer everywhere
    """
    error, outcome = None, None
    if comm.rank == root:
        try:
            outcome = (True, function(*args))
        except Exception as caught:  # noqa: B902
            error = caught
            outcome = (False, portable(caught))
    if comm.size > 1:
        outcome = comm.bcast(outcome, root=root)
    if not outcome[0]:
        raise_first([outcome[1]], error)
    return outcome[1]
