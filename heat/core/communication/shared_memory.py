"""
Sums over the processes of one node through a shared-memory segment, for CPU tensors.

Averaging gradients inside a node every batch is the most frequent communication of
hierarchical data-parallel training (DASO, ``DataParallel(hierarchical=True)``). Through
gloo the node's processes pass the bytes over loopback TCP; here they never leave memory:

1. every process copies its tensor into its own slot of a segment all of them have mapped;
2. after a barrier, process ``r`` sums slice ``r`` (``slice_bounds``) of every slot, in slot
   order, into the segment's result area -- the node's processes sum disjoint slices
   concurrently;
3. after a second barrier every process copies the whole sum out of the result area.

Every element is summed by one process in one fixed order, so the result has the same bits on
every process of the node. The result area is no process's input slot: a process that goes on
to the next round writes only its own slot, which nobody reads after the second barrier, and
the next sum overwrites the result area only after the next round's first barrier, which every
process reaches only after it has taken the previous sum -- so one segment serves every round. The segment is a file in
``/dev/shm`` (or the temporary folder) mapped by each process and unlinked once all have
mapped it, so nothing is left behind even if the job is killed.

Use :func:`node_shared_sum` (collective over the node communicator): it returns None on every
process when the node's processes cannot share memory (an emulated node that spans machines, a
platform without shared files) or ``HEAT_NODE_SHARED_MEMORY=0`` is set, and the caller keeps its
other path (torch.distributed on the node's group).
"""

from __future__ import annotations

import mmap
import os
import queue
import tempfile
import threading
import time
import uuid
import weakref
from typing import Any, List, Optional, Sequence, Tuple

import torch

from .node_groups import slice_bounds
from .verdicts import any_true, root_decides, wait_without_spinning

__all__ = ["BackgroundSums", "NodeSharedSum", "node_shared_sum", "shared_segment"]

_HEADER = 64  # bytes before the slots: a token every process checks after mapping


def _segment_folder() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


class NodeSharedSum:
    """
    Sums of flat CPU tensors of one dtype over the processes of a node, through one segment of
    ``size`` input slots and a result area of ``capacity`` elements each (use
    :func:`node_shared_sum` to make one).

    A round adds up to ``capacity`` elements: :meth:`put` copies pieces in (during a backward
    pass, as gradients become ready), :meth:`reduce` sums the pieces put in this round over the
    node (collective: every process of the node calls it once per round, after putting the same
    pieces), :meth:`take` copies pieces of the sum out.

    Attributes
    ----------
    comm : MPICommunication
        The node's processes.
    capacity : int
        Elements per slot.
    dtype : torch.dtype
    seconds_waiting : float
        Time spent in the two barriers of :meth:`reduce` (accumulates): how long this process
        waited for its node mates.
    """

    def __init__(
        self, comm: Any, capacity: int, dtype: torch.dtype, memory: mmap.mmap, token: bytes
    ):
        self.comm = comm
        self.capacity = capacity
        self.dtype = dtype
        self.seconds_waiting = 0.0
        self._memory = memory  # kept alive: the tensors below are views of it
        self._token = token
        size = comm.size
        itemsize = torch.empty(0, dtype=dtype).element_size()
        count = (size + 1) * capacity * itemsize
        flat = torch.frombuffer(memory, dtype=torch.uint8, offset=_HEADER, count=count)
        areas = list(flat.view(dtype).view(size + 1, capacity))
        self._slots: List[torch.Tensor] = areas[:size]  # one input slot per process
        self._result = areas[size]
        self._mine = self._slots[comm.rank]
        self._used = 0  # elements put in this round (the highest end of any piece)

    def put(self, offset: int, values: torch.Tensor) -> None:
        """Copy the flat ``values`` into this process's slot at ``offset`` (no communication)."""
        stop = self._checked_stop(offset, values.numel())
        target = self._mine[offset:stop]
        if values.data_ptr() != target.data_ptr():  # not already in place (a piece of slot())
            target.copy_(values.reshape(-1))
        self._used = max(self._used, stop)

    def slot(self, offset: int, length: int) -> torch.Tensor:
        """This process's slot's elements ``[offset, offset + length)`` (a view): values written
        there are in place for the round's sum, :meth:`put` of the view copies nothing. Write it
        only between rounds, as :meth:`put`."""
        return self._mine[offset : self._checked_stop(offset, length)]

    def _checked_stop(self, offset: int, length: int) -> int:
        """``offset + length``, or a ValueError when the range does not fit a slot."""
        stop = offset + length
        if offset < 0 or stop > self.capacity:
            raise ValueError(f"elements [{offset}, {stop}) do not fit the capacity {self.capacity}")
        return stop

    def reduce(self, length: Optional[int] = None) -> None:
        """
        Sum elements ``[0, length)`` (default: all put in this round) of the node's slots into
        the result area; collective over the node. Every process must have put the same pieces.
        """
        self.reduce_range(0, self._used if length is None else length)
        self._used = 0

    def reduce_range(self, offset: int, length: int, comm: Any = None) -> None:
        """
        Sum elements ``[offset, offset + length)`` of the node's slots into the result area:
        a barrier (every slot holds the range), each process sums its slice of the range, a
        barrier (the whole range is summed). Collective over ``comm``: the node's processes,
        ``self.comm`` by default, or a duplicate of it for a thread that sums while the main
        thread communicates on the original (:class:`BackgroundSums`).
        """
        comm = self.comm if comm is None else comm
        self.barrier(comm)  # every slot holds the range
        lo, hi = slice_bounds(length, comm.size, comm.rank)
        lo, hi = lo + offset, hi + offset
        if hi > lo:
            total = torch.add(self._slots[0][lo:hi], self._slots[1][lo:hi], out=self._result[lo:hi])
            for other in self._slots[2:]:
                total.add_(other[lo:hi])
        self.barrier(comm)  # every slice of the range is summed

    def share(self, offset: int, values: torch.Tensor) -> None:
        """
        Write ``values`` straight into the result area at ``offset``: for gathers, where each
        process writes a disjoint part, then :meth:`barrier`, then every process takes the whole.
        The result area holds the last sum until then: call :meth:`barrier` first if some process
        may still be taking from it.
        """
        self._result[offset : offset + values.numel()].copy_(values.reshape(-1))

    def view(self, offset: int, length: int) -> torch.Tensor:
        """The result area's elements ``[offset, offset + length)`` (a view: read it before the
        node's next :meth:`reduce` or :meth:`share`)."""
        return self._result[offset : offset + length]

    def barrier(self, comm: Any = None) -> None:
        """Wait until every process of the node (of ``comm``, a duplicate of the node's
        communicator, if given) has arrived, sleeping between polls, so an oversubscribed
        node's waiting processes leave the cores to the others."""
        began = time.perf_counter()
        wait_without_spinning((self.comm if comm is None else comm).Ibarrier())
        self.seconds_waiting += time.perf_counter() - began

    def take(self, offset: int, out: torch.Tensor, scale: Optional[float] = None) -> torch.Tensor:
        """Copy the node's sum of elements ``[offset, offset + out.numel())`` into ``out`` (times
        ``scale`` when given); after :meth:`reduce`, before the next round's :meth:`reduce`."""
        total = self._result[offset : offset + out.numel()].view(out.shape)
        if scale is None:
            return out.copy_(total)
        return torch.mul(total, scale, out=out)

    def allreduce_(self, tensors: Sequence[torch.Tensor], average: bool = False) -> None:
        """The sum (or average) over the node of each of ``tensors``, in place: one round."""
        offsets, offset = [], 0
        for tensor in tensors:
            offsets.append(offset)
            self.put(offset, tensor)
            offset += tensor.numel()
        self.reduce(offset)
        scale = 1.0 / self.comm.size if average else None
        for tensor, start in zip(tensors, offsets):
            self.take(start, tensor, scale)


class BackgroundSums:
    """
    Node sums of pieces of tensors in a background thread, in the order they are submitted, so
    that they overlap with what the calling thread does meanwhile (the rest of a backward
    pass). For each piece: copy it into this process's slot, sum its range over the node (each
    process its slice, :meth:`NodeSharedSum.reduce_range`), copy the sum (optionally scaled)
    back into the piece. The thread synchronizes on its own duplicate of the node communicator,
    so the calling thread may go on communicating on the original.

    Every process of the node must submit the same pieces (offsets and lengths) in the same
    order; every element is summed in slot order by one process, so the results have the same
    bits as :meth:`NodeSharedSum.allreduce_` on every process.

    The thread starts with the first :meth:`submit` and ends with :meth:`close`, or when the
    object is garbage-collected (the thread holds only the queue and the shared state, not
    the object).

    Parameters
    ----------
    comm : MPICommunication
        The node's processes (collective: the constructor duplicates it).

    Examples
    --------
    >>> sums = BackgroundSums(node)
    >>> sums.submit(summer, 0, bucket, scale=1 / node.size)   # returns at once
    >>> sums.wait()                                           # bucket holds the node average
    >>> sums.close()                                          # the thread ends
    """

    def __init__(self, comm: Any):
        self._state = _BackgroundState(comm.Dup())
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        # ends the thread when the object goes away without close(): the sentinel only
        weakref.finalize(self, self._state.tasks.put, None)

    @property
    def comm(self) -> Any:
        """The duplicate of the node communicator the thread synchronizes on."""
        return self._state.comm

    @property
    def running(self) -> bool:
        """Whether the background thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def submit(
        self, summer: NodeSharedSum, offset: int, values: torch.Tensor, scale: Optional[float]
    ) -> None:
        """Sum the flat ``values`` over the node at ``offset`` of ``summer``'s slots, in the
        background; ``values`` must not be touched until :meth:`wait` returns."""
        if self._closed:
            raise RuntimeError("BackgroundSums is closed: make a new one to sum in the background")
        state = self._state
        if self._thread is None:
            self._thread = threading.Thread(
                target=_run_background_sums, args=(state,), name="heat-node-sums", daemon=True
            )
            self._thread.start()
        with state.done:
            state.pending += 1
        state.tasks.put((summer, offset, values, scale))

    def wait(self) -> None:
        """Block until every submitted piece holds its node sum; raise the thread's error."""
        state = self._state
        with state.done:
            state.done.wait_for(lambda: state.pending == 0)
            error, state.error = state.error, None
        if error is not None:
            raise error

    def close(self) -> None:
        """Finish the submitted pieces (raising the thread's error, like :meth:`wait`) and end
        the thread. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self.wait()
        finally:
            if self._thread is not None:
                self._state.tasks.put(None)
                self._thread.join()


class _BackgroundState:
    """What the thread of a :class:`BackgroundSums` shares with it: the queue of pieces, the
    count of unfinished ones and the first error."""

    def __init__(self, comm: Any):
        self.comm = comm
        self.tasks: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self.done = threading.Condition()
        self.pending = 0
        self.error: Optional[BaseException] = None


def _run_background_sums(state: _BackgroundState) -> None:
    while True:
        task = state.tasks.get()
        if task is None:  # close() or the object's finalizer
            return
        summer, offset, values, scale = task
        try:
            if state.error is None:  # after a failure the node's sums cannot match: skip
                summer.put(offset, values)
                summer.reduce_range(offset, values.numel(), state.comm)
                summer.take(offset, values, scale)
        except BaseException as caught:  # noqa: B036 - handed to the waiting thread
            state.error = caught
        del task, summer, values  # hold no piece while waiting for the next
        with state.done:
            state.pending -= 1
            state.done.notify_all()


def _map_segment(path: str, nbytes: int, create: bool) -> mmap.mmap:
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    descriptor = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(descriptor, nbytes)
        return mmap.mmap(descriptor, nbytes)
    finally:
        os.close(descriptor)


def node_shared_sum(comm: Any, capacity: int, dtype: torch.dtype) -> Optional[NodeSharedSum]:
    """
    A :class:`NodeSharedSum` over ``comm`` (the processes of one node, e.g. ``node_comm`` of a
    node topology), or None on every process when they cannot share memory. Collective over
    ``comm``.

    Parameters
    ----------
    comm : MPICommunication
        The node's processes.
    capacity : int
        Largest number of elements summed in one round.
    dtype : torch.dtype
        A floating-point type.

    Examples
    --------
    >>> node = MPI_WORLD.node_topology().node_comm
    >>> summer = node_shared_sum(node, capacity=1000, dtype=torch.float32)
    >>> x = torch.ones(1000)
    >>> summer.allreduce_([x])   # x == node size everywhere on the node
    """
    if not isinstance(capacity, int) or capacity < 1:
        raise ValueError(f"capacity must be a positive int, got {capacity!r}")
    if not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point type, got {dtype}")
    if comm.size == 1:
        return None
    itemsize = torch.empty(0, dtype=dtype).element_size()
    segment = shared_segment(comm, _HEADER + (comm.size + 1) * capacity * itemsize, "sum")
    if segment is None:
        return None
    return NodeSharedSum(comm, capacity, dtype, *segment)


def shared_segment(comm: Any, nbytes: int, purpose: str) -> Optional[Tuple[mmap.mmap, bytes]]:
    """
    ``(memory, token)``: a segment of ``nbytes`` mapped by every process of ``comm`` (the
    processes of one node), whose first bytes hold ``token``; None on every process when they
    cannot share memory or ``HEAT_NODE_SHARED_MEMORY=0`` is set (on any of them). Collective.
    The file is unlinked once every process has mapped it. ``purpose`` names the file.
    """
    # HEAT_NODE_SHARED_MEMORY=0 keeps the callers on their other path (agreed below: one
    # process that turned it off turns it off for its node)
    disabled = os.environ.get("HEAT_NODE_SHARED_MEMORY", "1").strip() == "0"
    if any_true(comm, disabled):
        return None
    token = uuid.uuid4().bytes
    path = os.path.join(_segment_folder(), f"heat-node-{purpose}-{uuid.uuid4().hex}")

    def create() -> Tuple[str, bytes]:
        memory = _map_segment(path, nbytes, create=True)
        memory[: len(token)] = token
        memory.close()
        return path, token

    try:
        where, expected = root_decides(comm, create)
    except OSError:
        return None  # the same on every process: rank 0 could not make a segment
    memory, failed = None, False
    try:
        memory = _map_segment(where, nbytes, create=False)
        failed = bytes(memory[: len(expected)]) != expected  # another machine's file of that name?
    except OSError:
        failed = True
    comm.Barrier()  # every process has mapped it (or failed to): the name can go
    if comm.rank == 0:
        try:
            os.unlink(where)
        except OSError:
            pass
    if any_true(comm, failed):
        if memory is not None:
            memory.close()
        return None
    return memory, expected
