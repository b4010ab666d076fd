"""
Rounds of the streaming loader: the rows of one round this process yields, in yield order, and
the background thread that assembles the next round while the consumer works on the current one.

* :class:`RoundAssembler` turns one task of the plan (:class:`~.plan.RoundTask`) into
  :class:`Piece` s: it takes the window the reader read, exchanges rows with the other processes
  (:mod:`.exchange`) and gathers this process's share in yield order into a buffer of the
  loader's pool (:mod:`.buffers`). Batches are slices of the pieces -- views counted by the pool,
  so no buffer is reused while a batch views it. Without shuffle, where a process's rows are its
  window in file order, the pieces are views of the window itself and nothing is copied.
* :class:`RoundsAhead` runs the assembler on a background thread: round ``k + 1`` is read,
  exchanged and gathered while the consumer works on round ``k``, so the consumer waits only for
  the first round of an epoch (a loader's job is never to stall training). Its communication
  runs over a duplicate of the loader's communicator, never the one the consumer uses.
* :class:`RowQueue` holds the pieces still to be yielded; batches are cut off its front.

When a round may start is the same on every process -- a function of the consumer's step -- so
every process enters every exchange the others enter, also when an epoch is left early (a
``break``): the rounds already started are finished everywhere, no later one begins.

Failures are agreed on like everything else in heat (:mod:`heat.core.communication.verdicts`):
a read that failed on one process raises the same exception on every process, at the step where
that round is due. Rounds that exchange rows carry the flag in the exchange; the others agree
with a non-blocking all-reduce completed one round later (:class:`Agreement`).
"""

from __future__ import annotations

import atexit
import math
import os
import queue
import threading
import time
import weakref
from collections import deque
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from heat.core.communication import verdicts

from .buffers import Buffer, BufferPool
from .exchange import Exchanger, NodeRoute, _row_bytes_view, node_route
from .plan import EpochPlan, RoundTask, Segment
from .reader import DatasetInfo, WindowReader

__all__ = [
    "Agreement",
    "Piece",
    "RoundAssembler",
    "RoundsAhead",
    "RowQueue",
    "spare_rows",
    "start_epoch",
]


def _is_range(index: np.ndarray) -> bool:
    """Whether ``index`` counts up by one (``a, a + 1, ..., b - 1``; empty included)."""
    n = len(index)
    return n == 0 or (
        index[-1] - index[0] == n - 1 and (n == 1 or bool((np.diff(index) == 1).all()))
    )


def _gather_into(
    sources: Sequence[torch.Tensor], index: np.ndarray, targets: Sequence[torch.Tensor]
) -> None:
    """
    The rows ``index`` of every source into the first rows of the matching target. Rows travel
    as bytes: one memcpy per row whatever the row's shape and type (``index_select`` of wide
    float rows is several times slower than of the same rows as bytes).
    """
    order = torch.from_numpy(index)
    n = len(index)
    for source, target in zip(sources, targets):
        items = int(np.prod(source.shape[1:], dtype=np.int64))
        torch.index_select(
            _row_bytes_view(source, source.shape[0], items),
            0,
            order,
            out=_row_bytes_view(target, n, items),
        )


def _raw(buffer: Buffer, rows: Optional[int] = None) -> List[torch.Tensor]:
    """Tensors on a leased buffer's arrays (not counted: only while the lease is held)."""
    return [torch.from_numpy(a if rows is None else a[:rows]) for a in buffer.arrays]


class Piece:
    """
    Rows of a round in yield order: one tensor per dataset (views counted by the pool) and their
    global row numbers; ``at`` rows of them are taken.
    """

    __slots__ = ("tensors", "rows", "at")

    def __init__(self, tensors: List[torch.Tensor], rows: np.ndarray):
        self.tensors, self.rows, self.at = tensors, rows, 0

    @property
    def left(self) -> int:
        return len(self.rows) - self.at


class Agreement:
    """
    Whether a window read failed anywhere, agreed on without making the processes wait for each
    other in every round: a non-blocking all-reduce of the flag, completed one round later (or at
    the end). A process whose read failed completes its own at once; the others learn it when
    they complete theirs. Rounds that exchange rows carry the flag in the exchange. Once a
    failure is known, one all-gather of the errors (:meth:`fail`) makes every process raise the
    same exception: the lowest failing process's, with its message, as ``ht.load`` does.
    """

    def __init__(self, comm):
        self.comm = comm
        self._pending = None  # (request, flag tensor)

    def start(self, error: Optional[BaseException]) -> None:
        """Start this round's verdict; a process whose read failed waits for it and raises."""
        if self.comm.size == 1:
            self.fail(error)
            return
        flag = torch.tensor([int(error is not None)], dtype=torch.int32)
        self._pending = (self.comm.Iallreduce(flag, torch.empty(1, dtype=torch.int32)), flag)
        if error is not None:
            pending, self._pending = self._pending, None
            verdicts.wait_without_spinning(pending[0])  # the others learn of it from this
            self.fail(error)

    def settle(self, error: Optional[BaseException] = None) -> None:
        """
        Complete the previous round's verdict; if a read failed anywhere, raise (``error``: this
        process's failure of the current round, if any, which then takes part in the verdict).
        """
        pending, self._pending = self._pending, None
        if pending is not None and int(verdicts.wait_without_spinning(pending[0])[0]):
            self.fail(error)

    def fail(self, error: Optional[BaseException]) -> None:
        """
        Called by every process once all know that a read failed (``error``: this process's,
        or None): raise the same exception everywhere (one all-gather of the errors), or return
        if there is none (one process).
        """
        if self.comm.size == 1:
            if error is not None:
                raise error
            return
        verdicts.raise_if_any(self.comm, error)
        raise RuntimeError("reading a window failed on another process")  # pragma: no cover


class RoundAssembler:
    """
    The rows of the rounds of one segment that this process yields, round by round.

    Parameters
    ----------
    segment : Segment
        The plan of the epoch (for this process count).
    comm : MPICommunication
        The communicator of the rounds (the loader gives a duplicate of its own).
    reader : WindowReader or None
        Reads the windows this process reads, in the order of the tasks (None: it reads none).
    pool : BufferPool
    output_rows : int
        The capacity of new buffers for a round's rows (a process's share of a round is at most
        a window plus a batch of wrap padding).
    node : NodeRoute, optional
        The exchange's way to the processes of this node through shared memory
        (:func:`~.exchange.node_route`); without, every row goes through MPI.

    Attributes
    ----------
    exchange_seconds, gather_seconds : float
        Time spent in the exchanges and in gathering rows into yield order.

    Examples
    --------
    >>> assembler = RoundAssembler(plan.segment, comm, reader, pool, output_rows)  # doctest: +SKIP
    >>> for task in plan.tasks(comm.rank):  # doctest: +SKIP
    ...     pieces = assembler.assemble(task)  # rows in yield order: pieces[i].tensors, .rows
    >>> assembler.finish()  # doctest: +SKIP
    """

    def __init__(
        self, segment: Segment, comm, reader, pool: BufferPool, output_rows: int, node=None
    ):
        self.segment, self.comm, self.reader, self.pool = segment, comm, reader, pool
        self.output_rows = int(output_rows)
        self.exchanger = Exchanger(comm, pool, poll=True, node=node)
        self.agreement = Agreement(comm)
        self.exchange_seconds = 0.0
        self.gather_seconds = 0.0

    def assemble(self, task: RoundTask) -> List[Piece]:
        """
        Read (and exchange) one round; this process's rows of it in yield order, as pieces (none
        if it yields no row of the round). Collective over the communicator: every process
        assembles the same rounds in the same order.
        """
        window, error = None, None
        if task.window is not None:
            try:
                window = self.reader.get()
            except Exception as caught:  # noqa: BLE001 - every failure must reach all processes
                error = caught
        try:
            self.agreement.settle(error)  # the previous round's verdict, before anything new
            start = int(self.segment.starts[task.window]) if task.window is not None else 0
            order = self.segment.yield_order(task.round, self.comm.rank)
            order = order[task.skip : task.skip + task.take]
            if self.segment.is_local(task.round):
                return self._local(task, window, error, start, order)
            return self._exchanged(task, window, error, start, order)
        finally:
            if self.reader is not None:
                self.reader.release(window)  # views of it (batches without shuffle) keep it

    def finish(self) -> None:
        """After the last round: complete the last verdict (raise if a read failed anywhere)."""
        self.agreement.settle()

    def _gather(self, sources: Sequence[torch.Tensor], index: np.ndarray) -> List[torch.Tensor]:
        """The rows ``index`` of the sources, as counted views of a pooled buffer."""
        began = time.perf_counter()
        buffer = self.pool.take(len(index), capacity=self.output_rows)
        try:
            _gather_into(sources, index, _raw(buffer))
            return buffer.view(len(index))
        finally:
            self.pool.release(buffer)
            self.gather_seconds += time.perf_counter() - began

    def _local(self, task, window, error, start, order) -> List[Piece]:
        """A round whose rows stay where they were read (no shuffle): no exchange."""
        # the processes agree on failures one round later (no waiting here)
        self.agreement.start(error)
        offsets, _ = self.segment.send_plan(task.round, self.comm.rank)
        index = offsets[order]
        if not len(index):
            return []
        if _is_range(index):  # the rows in file order: batches are views of the window
            first = int(index[0])
            tensors = [t[first : first + len(index)] for t in window.view()]
            return [Piece(tensors, start + index)]
        return [Piece(self._gather(_raw(window, window.filled), index), start + index)]

    def _exchanged(self, task, window, error, start, order) -> List[Piece]:
        """A round whose rows move between processes: one exchange, one gather."""
        segment, rank = self.segment, self.comm.rank
        if task.window is not None:
            offsets, send_counts = segment.send_plan(task.round, rank)
        else:
            offsets, send_counts = np.zeros(0, np.int64), np.zeros(self.comm.size, np.int64)
        begin = int(send_counts[:rank].sum())
        kept = offsets[begin : begin + int(send_counts[rank])]  # the rows this process keeps
        # without shuffle the rows arrive in file order, which is the yield order: the rows this
        # process keeps stay in its window (its batches view them), nothing is gathered
        in_file_order = not segment.shuffle and _is_range(kept) and _is_range(order)
        arrays = [a[: window.filled] for a in window.arrays] if window is not None else None
        land = None
        if window is not None and not in_file_order:
            # received rows land behind the window: the round is then one array per dataset
            land = [torch.from_numpy(a[window.filled :]) for a in window.arrays]
        began = time.perf_counter()
        received = self.exchanger.exchange(
            arrays,
            start,
            offsets,
            send_counts,
            failed=error is not None,
            land=land,
            reserve=0 if in_file_order else len(kept),
        )
        self.exchange_seconds += time.perf_counter() - began
        try:
            if received.failed:
                self.agreement.fail(error)
            lower = int(received.counts[:rank].sum())  # rows from lower ranks arrive first
            if in_file_order:
                return self._file_order_pieces(received, window, start, kept, lower, order)
            if received.buffer is None:  # landed behind the window
                sources = _raw(window)
                own_at, foreign_at = kept, window.filled
            else:  # in a pooled buffer: the kept rows go in front of the received ones
                sources = _raw(received.buffer)
                own_at, foreign_at = np.arange(len(kept), dtype=np.int64), len(kept)
                if len(kept):
                    _gather_into(_raw(window, window.filled), kept, sources)
            total = len(received.numbers)
            # where each row of the round's arrival order (by source rank) lies in ``sources``
            where = np.concatenate(
                [
                    foreign_at + np.arange(lower, dtype=np.int64),
                    own_at,
                    foreign_at + np.arange(lower, total, dtype=np.int64),
                ]
            )
            numbers = np.concatenate(
                [received.numbers[:lower], start + kept, received.numbers[lower:]]
            )
            if not len(order):
                return []
            return [Piece(self._gather(sources, where[order]), numbers[order])]
        finally:
            self.pool.release(received.buffer)

    def _file_order_pieces(self, received, window, start, kept, lower, order) -> List[Piece]:
        """
        A round in file order as pieces: the rows received from lower ranks, this process's own
        rows as a view of its window (the window's first row is global row ``start``), the rows
        received from higher ranks; ``order`` selects a contiguous range of them all.
        """
        a, b = (int(order[0]), int(order[-1]) + 1) if len(order) else (0, 0)
        own = int(kept[0]) if len(kept) else 0
        own_count = int(received.counts[self.comm.rank])
        own_begin, own_end = lower, lower + own_count
        total = len(received.numbers)

        def received_piece(low: int, high: int, shift: int) -> List[Piece]:
            # arrival positions low:high, which lie at low - shift:high - shift of the received rows
            if high <= low:
                return []
            tensors = [t[low - shift : high - shift] for t in received.buffer.view(total)]
            return [Piece(tensors, received.numbers[low - shift : high - shift])]

        pieces = received_piece(a, min(b, own_begin), 0)
        low, high = max(a, own_begin), min(b, own_end)
        if high > low:
            first = own + (low - own_begin)
            tensors = [t[first : first + high - low] for t in window.view()]
            pieces.append(
                Piece(tensors, start + np.arange(first, first + high - low, dtype=np.int64))
            )
        return pieces + received_piece(max(a, own_end), min(b, total + own_count), own_count)


_END = object()
#: assembly threads that may still run (the exit hook finishes them before MPI is finalised)
_RUNNING: "weakref.WeakSet[RoundsAhead]" = weakref.WeakSet()
#: how long the exit hook waits for one thread (it finishes the rounds already started)
EXIT_JOIN_TIMEOUT_S = 60.0


@atexit.register
def _finish_at_exit() -> None:
    """Let every assembly thread finish the rounds it started, before the interpreter ends."""
    for ahead in list(_RUNNING):
        ahead.stop()
        ahead.join(EXIT_JOIN_TIMEOUT_S)


def start_steps(due: Sequence[int], first_step: int) -> List[int]:
    """
    The step at which each round may start: the first at once, round ``k + 1`` at the step
    after round ``k`` became due (the consumer then holds a batch of round ``k``, so the buffer
    of round ``k - 1`` is free again), but never later than it is due itself.

    Examples
    --------
    >>> start_steps([0, 40, 41, 41, 90], 0)
    [0, 1, 41, 41, 42]
    """
    starts = [first_step] if due else []
    for k in range(1, len(due)):
        starts.append(min(due[k], due[k - 1] + 1))
    return starts


class RoundsAhead:
    """
    Assemble the rounds of an epoch on a background thread, each as soon as the consumer's step
    allows it (:func:`start_steps`): the exchange and gather of round ``k + 1`` overlap the
    consumer's work on round ``k``.

    The thread owns the reader from then on and closes it when it ends. A round that started is
    always finished (the other processes take part in its exchange); :meth:`stop` only keeps
    later rounds from starting.

    Where rows go through MPI on a node with fewer cores than the consumers and these threads
    need (``hold``), the consumer steps aside while they move: MPI moves large messages between
    the processes of a node through shared memory in a pipeline that needs both threads running
    at once, and beside busy consumers it crawled (0.5-1.5 s for a round of 9 MB between two
    processes on 2 cores, instead of 25 ms). The node's own processes exchange through its
    shared-memory slots instead (:class:`~.exchange.NodeRoute`), which need no hold. Everything
    else -- waiting for the other processes, the plan, the gathers -- overlaps the consumer's
    work.

    Parameters
    ----------
    assembler : RoundAssembler
    tasks : sequence of RoundTask
    first_step : int
        The step the epoch starts at.
    hold : bool
        Make the consumer wait while rows move (see above).

    Attributes
    ----------
    wait_seconds : float
        Time the consumer waited for rounds (:meth:`due`) or for rows to move (:meth:`step`).

    Examples
    --------
    >>> ahead = RoundsAhead(assembler, tasks, first_step=0)  # doctest: +SKIP
    >>> for step in range(steps):  # doctest: +SKIP
    ...     queue.extend(ahead.due(step))  # the pieces of the rounds due at this step
    ...     yield batch  # then ahead.step(step + 1) wherever batches are yielded without due()
    >>> ahead.finish()  # doctest: +SKIP
    """

    def __init__(
        self,
        assembler: RoundAssembler,
        tasks: Sequence[RoundTask],
        first_step: int,
        hold: bool = False,
    ):
        self.assembler = assembler
        self._gate = threading.Lock() if hold else None
        assembler.exchanger.gate = self._gate
        self.tasks = list(tasks)
        self._due = [t.due_step for t in self.tasks]
        self._starts = start_steps(self._due, first_step)
        self._allowed = 0  # rounds the thread may assemble
        self._taken = 0  # rounds the consumer took
        self._stopping = False
        self._condition = threading.Condition()
        self._results: "queue.Queue" = queue.Queue()
        self.wait_seconds = 0.0
        self._allow(first_step)  # the first round starts at once
        self._thread = threading.Thread(target=self._run, name="heat-round-assembler", daemon=True)
        _RUNNING.add(self)
        self._thread.start()

    def next_due(self) -> Optional[int]:
        """The step the next round not yet taken is due (None: every round taken)."""
        return self._due[self._taken] if self._taken < len(self._due) else None

    def step(self, step: int) -> None:
        """
        The consumer is at ``step``: let the rounds that may start now start, and wait while
        rows move if this consumer makes room for them (``hold``).
        """
        self._allow(step)
        if self._gate is not None and self._gate.locked():
            began = time.perf_counter()
            with self._gate:
                pass
            self.wait_seconds += time.perf_counter() - began

    def _allow(self, step: int) -> None:
        allowed = self._allowed
        while allowed < len(self._starts) and self._starts[allowed] <= step:
            allowed += 1
        if allowed != self._allowed:
            with self._condition:
                self._allowed = allowed
                self._condition.notify()

    def due(self, step: int) -> List[Piece]:
        """The pieces of the rounds due at ``step`` (waits for them); raises the agreed error."""
        self.step(step)
        pieces: List[Piece] = []
        while self._taken < len(self._due) and self._due[self._taken] <= step:
            pieces.extend(self._next())
            self._taken += 1
        return pieces

    def finish(self) -> None:
        """At the end of the epoch: wait for the thread's last verdict; raise a failure."""
        self._next(final=True)
        self._thread.join()

    def stop(self) -> None:
        """Start no more rounds (those started are finished: the other processes are in them)."""
        with self._condition:
            self._stopping = True
            self._condition.notify()

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for the thread to end; whether it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def end(self) -> None:
        """
        :meth:`stop`, wait for the rounds started (the other processes finish them too), and
        free the assembler's communicator (the duplicate :func:`start_epoch` made).
        """
        self.stop()
        self.join()
        self.assembler.comm.Free()

    def _next(self, final: bool = False):
        began = time.perf_counter()
        item = self._results.get()
        self.wait_seconds += time.perf_counter() - began
        if isinstance(item, BaseException):
            self._results.put(item)  # every later call raises it too
            raise item
        if (item is _END) != final:  # pragma: no cover - the consumer's schedule is the thread's
            raise RuntimeError("the loader's rounds are out of step with its batches")
        return item

    def _run(self) -> None:
        reader = self.assembler.reader
        try:
            for index, task in enumerate(self.tasks):
                with self._condition:
                    while self._allowed <= index and not self._stopping:
                        self._condition.wait()
                    if self._allowed <= index:
                        break  # stopped: the other processes start no more rounds either
                self._results.put(self.assembler.assemble(task))
            self.assembler.finish()
            self._results.put(_END)
        except BaseException as error:  # raised by the consumer at the round's step
            self._results.put(error)
        finally:
            if reader is not None:
                reader.close(wait=True)  # a normal thread: it may wait for h5py's lock
            _RUNNING.discard(self)


class RowQueue:
    """
    The rows this process yields next: pieces of rounds in yield order; batches are cut off the
    front, as views, or -- a batch across pieces -- copied into a pooled buffer.

    Parameters
    ----------
    pool : BufferPool
    """

    def __init__(self, pool: BufferPool):
        self.pool = pool
        self._pieces: "deque[Piece]" = deque()

    def extend(self, pieces: Sequence[Piece]) -> None:
        self._pieces.extend(p for p in pieces if p.left)

    def clear(self) -> None:
        self._pieces.clear()

    @property
    def front(self) -> int:
        """Rows left in the front piece (0: empty)."""
        return self._pieces[0].left if self._pieces else 0

    def cut(self, run: int, batch_size: int, with_rows: bool) -> List[tuple]:
        """``run`` batches of ``batch_size`` rows off the front piece, as views."""
        first = self._pieces[0]
        a, b = first.at, first.at + run * batch_size
        first.at = b
        parts = [t[a:b].split(batch_size) for t in first.tensors]
        if with_rows:
            parts.append(torch.from_numpy(first.rows[a:b]).split(batch_size))
        if first.left == 0:
            self._pieces.popleft()
        return list(zip(*parts))

    def take(self, count: int) -> Tuple[List[torch.Tensor], np.ndarray]:
        """The next ``count`` rows: one tensor per dataset, and their global numbers."""
        first = self._pieces[0] if self._pieces else None
        if first is not None and first.left >= count:  # the common case: a slice, no copy
            a = first.at
            first.at += count
            if first.left == 0:
                self._pieces.popleft()
            return [t[a : a + count] for t in first.tensors], first.rows[a : a + count]
        parts, need = [], count
        while need:
            current = self._pieces[0]
            n = min(need, current.left)
            parts.append(
                (
                    [t[current.at : current.at + n] for t in current.tensors],
                    current.rows[current.at : current.at + n],
                )
            )
            current.at += n
            need -= n
            if current.left == 0:
                self._pieces.popleft()
        buffer = self.pool.take(count)
        try:
            for d, array in enumerate(buffer.arrays):
                at = 0
                for tensors, _ in parts:
                    # a plain memcpy: torch's copies run in its thread pool, whose threads wait
                    # for each other (and the reader thread) on a busy machine
                    n = len(tensors[d])
                    np.copyto(array[at : at + n], tensors[d].numpy())
                    at += n
            tensors = buffer.view(count)
        finally:
            self.pool.release(buffer)
        rows = np.concatenate([r for _, r in parts]) if parts else np.zeros(0, np.int64)
        return tensors, rows


def spare_rows(window_rows: int, batch_size: int, processes: int, shuffle: bool) -> int:
    """
    Rows behind each window in the reader's buffers for the rows received in a shuffled round:
    about ``(p - 1) / p`` of a window arrive (the share of a round is about a window, of which
    ``1 / p`` comes from the own window), plus 8 standard deviations of that count and a batch
    of wrap padding. A round that needs more lands its rows in a buffer of their own.

    Examples
    --------
    >>> spare_rows(10000, 32, processes=2, shuffle=True)
    5840
    """
    p = processes
    if not shuffle or p == 1:
        return 0
    return -(-window_rows * (p - 1) // p) + 8 * math.isqrt(window_rows) + 8 + batch_size


def holds_consumer(comm) -> bool:
    """
    Whether the consumer steps aside while MPI moves rows (:class:`RoundsAhead`): where this node
    has fewer cores than two per process of ``comm`` (the consumer's thread and the rounds'), so
    the threads that move rows would not run beside the consumers. Collective on the first call
    (the node topology).
    """
    if comm.size == 1:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * comm.node_topology().local_size > (cores or 1)


def start_epoch(
    plan: EpochPlan,
    comm,
    infos: Sequence[DatasetInfo],
    window_rows: int,
    pool: BufferPool,
    layouts: dict,
    node: Optional[NodeRoute] = None,
) -> RoundsAhead:
    """
    The reader, the assembler and its thread of the epoch of ``plan``, from the plan's position;
    the rounds' messages go over a duplicate of ``comm`` (collective), apart from the
    consumer's. :meth:`RoundsAhead.end` frees it.

    The processes of a node exchange rows through shared memory (:func:`~.exchange.node_route`,
    slots for the most rows a process sends in a round: its window plus wrap padding); ``node``,
    the route of an earlier epoch of the same loader, is reused where its slots are large
    enough (its memory is already mapped and touched). The route is ``assembler.exchanger.node``.
    """
    segment = plan.segment
    tasks = plan.tasks(comm.rank)
    windows = [
        (int(segment.starts[t.window]), int(segment.stops[t.window]))
        for t in tasks
        if t.window is not None
    ]
    reader = None
    if windows:
        spare = spare_rows(window_rows, plan.batch_size, comm.size, plan.shuffle)
        reader = WindowReader(infos, windows, window_rows, pool, layouts=layouts, spare_rows=spare)
    rounds_comm = comm.Dup()
    # the same on every process: the tasks list the rounds some process needs
    if comm.size > 1 and any(not segment.is_local(t.round) for t in tasks):
        row_bytes = sum(info.row_bytes for info in infos) + 8
        capacity = (window_rows + comm.size * plan.batch_size) * row_bytes
        capacity += 8 * (len(infos) + 2) * comm.size  # room to align every part
        node = node_route(rounds_comm, capacity, node)
    # the consumer makes room while MPI moves rows where no core is free for it
    hold = holds_consumer(comm) and (node is None or not node.holds_everyone)
    assembler = RoundAssembler(
        segment, rounds_comm, reader, pool, window_rows + plan.batch_size + 1, node=node
    )
    return RoundsAhead(assembler, tasks, plan.start_step, hold=hold)
