"""
Slots of a node's shared-memory segment: each process of the node writes its own slot, and after
a barrier every process of the node reads any slot -- an all-to-all inside a node in which MPI
moves no bytes.

MPI moves a large message between two processes of a node through shared-memory cells that the
sender fills while the receiver drains them: both must be running at once. Threads that move
data beside busy consumers on a node with few cores rarely are -- a 9 MB exchange of the
streaming loader took 0.5-1.5 s there instead of 25 ms. Through slots each process copies at
its own pace: the writer copies its parts in, each reader copies its part out; only the barrier
between them needs everyone, and it sleeps between polls. It also copies the bytes once less
than MPI's cells (in, out) after the writer's gather.

A slot is a header of ``size`` int64 entries (the writer's own use, e.g. where the part for each
reader begins) and ``capacity`` bytes of data. Rounds reuse the slots: the caller orders a
writer's next write after every reader's read of the round before (the streaming loader does,
by an all-to-all of counts that every process enters only after it finished the round before).

The segment comes from :func:`.shared_memory.shared_segment`: None on every process of the node
where its processes cannot share memory or ``HEAT_NODE_SHARED_MEMORY=0`` is set.
"""

from __future__ import annotations

import mmap
import time
from typing import Any, Optional

import torch

from .shared_memory import shared_segment
from .verdicts import wait_without_spinning

__all__ = ["NodeSlots", "node_slots"]

_TOKEN_BYTES = 64  # the segment's first bytes: the token every process checked after mapping
_ALIGN = 64


def _aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


class NodeSlots:
    """
    One slot per process of a node (use :func:`node_slots` to make them).

    Attributes
    ----------
    comm : MPICommunication
        The node's processes; slot ``r`` is written by its rank ``r``.
    capacity : int
        Data bytes per slot.
    seconds_waiting : float
        Time spent in :meth:`barrier` (accumulates).
    """

    def __init__(self, comm: Any, capacity: int, memory: mmap.mmap, token: bytes):
        self.comm, self.capacity = comm, int(capacity)
        self.seconds_waiting = 0.0
        self._memory, self._token = memory, token  # kept alive: the views below are of it
        header = _aligned(8 * comm.size)
        stride = header + _aligned(self.capacity)
        flat = torch.frombuffer(
            memory, dtype=torch.uint8, offset=_TOKEN_BYTES, count=comm.size * stride
        )
        slots = flat.view(comm.size, stride)
        self._headers = [slot[: 8 * comm.size].view(torch.int64) for slot in slots]
        self._data = [slot[header : header + self.capacity] for slot in slots]

    def header(self, rank: int) -> torch.Tensor:
        """The ``size`` int64 header entries of ``rank``'s slot (a view)."""
        return self._headers[rank]

    def data(self, rank: int) -> torch.Tensor:
        """The ``capacity`` data bytes of ``rank``'s slot (a uint8 view)."""
        return self._data[rank]

    def barrier(self) -> None:
        """Every process of the node has written its slot (sleeping between polls)."""
        began = time.perf_counter()
        wait_without_spinning(self.comm.Ibarrier())
        self.seconds_waiting += time.perf_counter() - began


def node_slots(comm: Any, capacity: int) -> Optional[NodeSlots]:
    """
    A :class:`NodeSlots` over ``comm`` (the processes of one node, e.g. ``node_comm`` of a node
    topology) of ``capacity`` data bytes per slot, or None on every process where they cannot
    share memory (and for one process). Collective over ``comm``.

    Examples
    --------
    >>> node = MPI_WORLD.node_topology().node_comm
    >>> slots = node_slots(node, 1 << 20)
    >>> slots.data(node.rank)[:5] = 7       # write my slot
    >>> slots.barrier()
    >>> slots.data((node.rank + 1) % node.size)[:5]   # read another's
    tensor([7, 7, 7, 7, 7], dtype=torch.uint8)
    """
    if not isinstance(capacity, int) or capacity < 1:
        raise ValueError(f"capacity must be a positive int, got {capacity!r}")
    if comm.size == 1:
        return None
    nbytes = _TOKEN_BYTES + comm.size * (_aligned(8 * comm.size) + _aligned(capacity))
    segment = shared_segment(comm, nbytes, "slots")
    return None if segment is None else NodeSlots(comm, capacity, *segment)
