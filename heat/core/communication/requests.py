"""
Requests: pending non-blocking operations.

A :class:`Request` holds the MPI requests of one operation together with everything MPI reads or
writes until it completes (send copies, receive stages, the user's tensors), so dropping the
caller's references before ``Wait()`` is safe; on completion it copies staged data into the
receive tensor.

Every collective is written once for both forms: it prepares its buffers, issues MPI's call with
:func:`_start` (the blocking call, or its ``I...`` form) and ends with :func:`_finish_or_request`
(complete now, or hand back a :class:`Request` that completes later).
"""

from __future__ import annotations

import time
from typing import Any, Callable, List, Optional, Sequence, Tuple

from mpi4py import MPI


class Request:
    """
    A pending non-blocking operation.

    ``Wait()`` completes it, copies staged data into the user's receive tensor and returns that
    tensor (``None`` for sends); ``Test()`` completes it if possible and says whether it is done.
    MPI makes progress on a pending operation mostly while one of its calls runs: code that
    overlaps a long computation with communication should call ``Test()`` now and then.

    Examples
    --------
    >>> req = MPI_WORLD.Iallreduce(torch.ones(3), torch.empty(3))
    >>> req.Wait()  # with 2 processes
    tensor([2., 2., 2.])
    """

    def __init__(
        self,
        requests: Sequence[MPI.Request],
        result: Any = None,
        finish: Optional[Callable[[], None]] = None,
        keepalive: Tuple[Any, ...] = (),
    ):
        self._requests = list(requests)
        self._result = result
        self._finish = finish
        self._keepalive = keepalive  # tensors MPI reads or writes until completion
        self._done = False

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()
        self._finish = None
        self._keepalive = ()

    @property
    def done(self) -> bool:
        """Whether the operation has completed (after a successful ``Test()`` or ``Wait()``)."""
        return self._done

    def Wait(self, status: Optional[MPI.Status] = None) -> Any:
        """
        Block until the operation completes; return the received tensor (None for sends).

        Parameters
        ----------
        status : MPI.Status, optional
            Filled in for a single point-to-point receive.
        """
        if not self._done:
            if len(self._requests) == 1:
                self._requests[0].Wait(status)
            else:
                MPI.Request.Waitall(self._requests)
            self._complete()
        return self._result

    def Test(self) -> bool:
        """Complete the operation if it can be completed now; return whether it is complete."""
        if not self._done and MPI.Request.Testall(self._requests):
            self._complete()
        return self._done

    def wait_reporting(self, report_after: float, report: Callable[[float], None]) -> Any:
        """
        ``Wait()``, but if the operation has not completed after ``report_after`` seconds, call
        ``report(seconds)`` once (e.g. to say on stderr what the other processes must do for
        it to complete) and go on waiting. Polls ``Test()`` with pauses growing from 10 us to
        10 ms, so a process that waits long does not keep a core busy.

        Parameters
        ----------
        report_after : float
            Seconds.
        report : callable
            Called with the seconds waited so far.

        Returns
        -------
        The result of ``Wait()``.

        Examples
        --------
        >>> req = MPI_WORLD.Iallreduce(torch.ones(1), torch.empty(1))
        >>> req.wait_reporting(10.0, lambda s: print(f"waited {s:.0f} s"))  # with 2 processes
        tensor([2.])
        """
        began, pause, reported = time.monotonic(), 1e-5, False
        while not self.Test():
            waited = time.monotonic() - began
            if not reported and waited >= report_after:
                reported = True
                report(waited)
            time.sleep(pause)
            pause = min(2 * pause, 0.01)
        return self._result

    @staticmethod
    def Waitall(requests: Sequence["Request"]) -> List[Any]:
        """Wait for every request; return their results in order."""
        return [request.Wait() for request in requests]

    def __repr__(self) -> str:
        return f"<heat Request {'done' if self._done else 'pending'}>"


def _start(handle: MPI.Intracomm, name: str, blocking: bool, *args: Any) -> List[MPI.Request]:
    """
    Call MPI's ``name`` (e.g. ``"Allgather"``) on ``handle``, or with ``blocking=False`` its
    non-blocking form (``Iallgather``); return the requests still to complete (none if blocking).
    """
    if blocking:
        getattr(handle, name)(*args)
        return []
    return [getattr(handle, "I" + name[0].lower() + name[1:])(*args)]


def _finish_or_request(
    blocking: bool,
    requests: Sequence[MPI.Request],
    result: Any,
    finish: Optional[Callable[[], None]] = None,
    keepalive: Tuple[Any, ...] = (),
) -> Any:
    """
    The end of a call issued with :func:`_start`. Blocking: wait for ``requests``, run ``finish``
    (copy stages back) and return ``result``. Otherwise a :class:`Request` that does so on
    completion and keeps ``keepalive`` (the memory MPI uses) alive until then.
    """
    if not blocking:
        return Request(requests, result, finish, keepalive)
    if requests:
        MPI.Request.Waitall(requests)
    if finish is not None:
        finish()
    return result
